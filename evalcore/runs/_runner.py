"""``run_benchmark``: ask a model every item × epoch, record each sample as it completes.

The steps live beside it: checking the arguments (:mod:`._params`), the run configuration and
resuming (:mod:`._config`), and executing the calls (:mod:`._execute`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evalcore._executor import Executor, as_executor
from evalcore._io import check_output_dir, check_output_file
from evalcore._runstore import (
    CONFIG_FILE,
    IN_BENCHMARK,
    LOCK_FILE,
    RESULTS_FILE,
    SAMPLES_FILE,
    lock_run,
    write_run_json,
)
from evalcore.errors import EvalcoreError
from evalcore.models import ChatModel, GenerationParams, ResponseCache, check_reachable
from evalcore.runs._config import cache_path, check_resume, new_run_id, run_config
from evalcore.runs._execute import Invocation
from evalcore.runs._params import check_arguments, refuse_judge, resolve_model, resolve_params
from evalcore.runs._prompts import check_template, load_template


def run_benchmark(
    dataset: Any,
    model: str | ChatModel,
    *,
    limit: int | None = None,
    seed: int = 0,
    epochs: int = 1,
    concurrency: int = 4,
    run_dir: str | os.PathLike[str] = "runs",
    run_id: str | None = None,
    prompt: str | os.PathLike[str] | None = None,
    params: GenerationParams | Mapping[str, Any] | None = None,
    progress: bool = True,
    few_shot: int = 0,
    mmlu_mode: str = "generate",
    split: str = "test",
    source: str = "auto",
    cache: bool | str | os.PathLike[str] = True,
    scorer: Any = "exact",
    code_timeout_s: float = 10.0,
    check_endpoint: bool = True,
    model_options: Mapping[str, Any] | None = None,
    cluster: Any = None,
    cluster_wait_s: float = 60.0,
    executor: Executor | None = None,
) -> Path:
    """Run a benchmark: ask ``model`` every item × epoch, score objectively, record everything.

    Every sample is appended to ``samples.jsonl`` (and fsynced) as soon as it is scored; running
    again with the same ``run_id`` skips recorded samples (failed calls are retried; at the end
    the file is compacted to the latest line per item × epoch), so a
    killed run loses at most the calls in flight. Identical requests are answered from a SQLite
    response cache (``<run_dir>/.cache/responses.sqlite``, or ``$EVALCORE_CACHE``).

    Args:
        dataset: A benchmark: ``gsm8k``, ``mmlu``, ``humaneval`` (or another registered
            name), the path of a benchmark YAML file (a user's own benchmark, docs/benchmarks.md),
            or a :class:`~evalcore.benchmarks.Benchmark`.
        model: A model spec (``local:smollm2`` ...) or a ChatModel.
        limit: Number of items (None: all).
        seed: Seed of item sampling, few-shot choice and generation (epoch e uses seed + e).
        epochs: Repetitions of every item.
        concurrency: Calls in flight at once.
        run_dir: Parent folder of run directories.
        run_id: Run id (default: a new ``<dataset>-<UTC timestamp>[-N]``); an existing one is
            resumed.
        prompt: A prompt template YAML file (default: the packaged one).
        params: Generation parameters (GenerationParams or mapping of its fields).
        progress: Show a tqdm progress bar with running accuracy and cost.
        few_shot: Worked examples per prompt, from the shipped samples, never the item itself.
        mmlu_mode: ``generate`` (extract the letter from the answer) or ``likelihood`` (the most
            probable letter; needs a model with ``letter_logprobs``, like ``local:smollm2``).
        split: Dataset split.
        source: Dataset source (see :func:`evalcore.datasets.load`).
        cache: True (default location), False, or a SQLite file path.
        scorer: ``"exact"``; an LLM judge is refused (benchmarks are scored objectively).
        code_timeout_s: Seconds per HumanEval sample.
        check_endpoint: Check that a remote endpoint answers before creating the run.
        model_options: Options for :func:`~evalcore.models.from_spec` when ``model`` is a spec
            (``timeout``, ``pricing``, ``retry``, ``api_key`` ...).
        cluster: A convenience for ``executor``: a scheduler address, a scheduler file,
            ``local:N`` or a ``distributed.Client`` (docs/cluster.md).
        cluster_wait_s: Seconds to wait for the cluster's first worker.
        executor: Where the model calls run (:meth:`Executor.model`): on a Dask executor each
            worker builds the model once and this process alone records the samples;
            ``concurrency`` is then per worker thread. None: this machine only (nothing of
            Dask is imported).

    Returns:
        The run directory.

    Raises:
        EvalcoreError: Unknown dataset, model spec or parameter, unreachable endpoint, or a
            ``run_id`` that exists with a different configuration. Nothing is created then.
        RunInterrupted: Ctrl-C (SIGINT, or a Jupyter interrupt) stopped the run: the calls in
            flight were dropped (not waited for), the finished samples and ``results.json``
            (``complete: false``) are saved; the same ``run_id`` resumes it.
    """
    # --- validate everything before anything is written ---------------------------------
    from evalcore.benchmarks import get_benchmark

    refuse_judge(scorer)
    executor = as_executor(executor, cluster, wait_s=cluster_wait_s)  # local:0 and the like: now
    benchmark = get_benchmark(dataset)  # a name, or a benchmark YAML file (checked now)
    dataset = benchmark.name
    check_arguments(
        benchmark,
        epochs=epochs,
        concurrency=concurrency,
        few_shot=few_shot,
        limit=limit,
        mmlu_mode=mmlu_mode,
        run_id=run_id,
    )
    gp = resolve_params(params, benchmark, seed)
    template = load_template(benchmark, prompt)
    chat_model, model_spec = resolve_model(model, model_options, mmlu_mode)
    if check_endpoint:
        check_reachable(chat_model)

    items = benchmark.load(split=split, limit=limit, seed=seed, source=source)
    if not items:
        raise EvalcoreError(f"{dataset} split {split!r} has no items", field="dataset")
    # worked examples from the split kept for them (GSM8K train, MMLU dev), never a test split
    pool = benchmark.few_shot_pool() if few_shot else []
    check_template(template, items, pool, few_shot, seed)

    base = Path(run_dir)
    check_output_dir(base, field="run_dir")  # a file in the way fails now, not after the calls
    if run_id is None:
        run_id = new_run_id(base, dataset)
    path = base / run_id
    check_output_dir(path, field="run_id")
    for name in (CONFIG_FILE, SAMPLES_FILE, RESULTS_FILE, LOCK_FILE):
        if (path / name).is_dir():
            raise EvalcoreError(
                "is a folder, not a file: this is no usable run directory", path=path / name, field="run_id"
            )
    config = run_config(
        run_id,
        dataset=dataset,
        split=split,
        source=source,
        items=items,
        model=chat_model,
        model_spec=model_spec,
        model_options=model_options,
        limit=limit,
        seed=seed,
        epochs=epochs,
        concurrency=concurrency,
        params=gp,
        template=template,
        few_shot=few_shot,
        mmlu_mode=mmlu_mode,
        code_timeout_s=code_timeout_s,
        few_shot_pool=pool,
        benchmark=benchmark,
    )
    check_resume(path, config)
    db_path = cache_path(cache, base, chat_model, model_spec)
    if db_path is not None:
        check_output_file(db_path, field="cache")
    cache_db = ResponseCache(db_path) if db_path is not None else None
    config["cache"] = str(db_path) if db_path is not None else None

    import contextlib

    remote = contextlib.ExitStack()  # a cluster: connected and checked before anything is written
    run_model, run_concurrency = chat_model, concurrency
    if executor is not None:
        try:
            run_model, threads = remote.enter_context(
                executor.model(
                    chat_model,
                    spec=model if isinstance(model, str) else None,
                    options=model_options,
                    likelihood=benchmark.supports_likelihood and mmlu_mode == "likelihood",
                )
            )
        except BaseException:
            if cache_db is not None:
                cache_db.close()
            raise
        run_concurrency = concurrency * threads
    # --- from here on the run directory exists -------------------------------------------
    path.mkdir(parents=True, exist_ok=True)
    try:
        lock = lock_run(path)
    except EvalcoreError:
        if cache_db is not None:
            cache_db.close()
        remote.close()
        raise
    write_run_json(path / CONFIG_FILE, config)
    token = IN_BENCHMARK.set(True)
    try:
        Invocation(
            path=path,
            config=config,
            items=items,
            pool=pool,
            template=template,
            model=run_model,
            params=gp,
            epochs=epochs,
            concurrency=run_concurrency,
            cache=cache_db,
            progress=progress,
            mmlu_mode=mmlu_mode,
            few_shot=few_shot,
            seed=seed,
            code_timeout_s=code_timeout_s,
            benchmark=benchmark,
        ).execute()
    finally:
        IN_BENCHMARK.reset(token)
        if cache_db is not None:
            cache_db.close()
        lock.close()
        import sys

        remote.__exit__(*sys.exc_info())  # Ctrl-C: a local cluster's processes are killed at once
    return path
