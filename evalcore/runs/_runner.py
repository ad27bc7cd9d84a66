"""``run_benchmark``: ask a model every item × epoch, record each sample as it completes.

The steps live beside it: checking the arguments (:mod:`._params`), the run configuration and
resuming (:mod:`._config`), and executing the calls (:mod:`._execute`).
"""

from __future__ import annotations

import contextlib
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
from evalcore.runs._params import check_arguments, refuse_judge, resolve_choice_mode, resolve_model, resolve_params
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
    choice_mode: str | None = None,
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
    mmlu_mode: str | None = None,
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
        choice_mode: How a letter-choice benchmark (``supports_likelihood``: MMLU) is answered:
            ``generate`` (extract the letter from the answer; None, the default, is this) or
            ``likelihood`` (the most probable option letter; needs a model with
            ``letter_logprobs``, like ``local:smollm2``).
        split: Dataset split.
        source: Dataset source (see :func:`evalcore.benchmarks.load`).
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
        mmlu_mode: Deprecated alias of ``choice_mode`` (its name before issue 40): it warns
            (``DeprecationWarning``), and differing from ``choice_mode`` is an error.

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

    choice_mode = resolve_choice_mode(choice_mode, mmlu_mode)
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
        choice_mode=choice_mode,
        run_id=run_id,
    )
    gp = resolve_params(params, benchmark, seed)
    template = load_template(benchmark, prompt)
    chat_model, model_spec = resolve_model(model, model_options, choice_mode)
    if check_endpoint:
        check_reachable(chat_model)

    items, pool = _items_and_pool(
        benchmark, template, split=split, limit=limit, seed=seed, source=source, few_shot=few_shot
    )

    base = Path(run_dir)
    run_id, path = _run_path(base, run_id, dataset)
    # the settings config.json records and the invocation uses, the same values for both
    shared: dict[str, Any] = dict(
        epochs=epochs, seed=seed, few_shot=few_shot, choice_mode=choice_mode, code_timeout_s=code_timeout_s
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
        concurrency=concurrency,
        params=gp,
        template=template,
        few_shot_pool=pool,
        benchmark=benchmark,
        **shared,
    )
    check_resume(path, config)
    cache_db = _open_cache(cache, base, chat_model, model_spec, config)

    remote = contextlib.ExitStack()  # a cluster: connected and checked before anything is written
    try:
        likelihood = benchmark.supports_likelihood and choice_mode == "likelihood"
        spec = model if isinstance(model, str) else None
        run_model, run_concurrency = _executor_model(executor, remote, chat_model, spec, model_options, likelihood)
    except BaseException:
        if cache_db is not None:
            cache_db.close()
        raise
    run_concurrency *= concurrency
    # --- from here on the run directory exists -------------------------------------------
    invocation = Invocation(
        path=path,
        config=config,
        items=items,
        pool=pool,
        template=template,
        model=run_model,
        params=gp,
        concurrency=run_concurrency,
        cache=cache_db,
        progress=progress,
        benchmark=benchmark,
        **shared,
    )
    _execute_locked(invocation, cache_db, remote)
    return path


def _executor_model(
    executor: Executor | None,
    remote: Any,
    chat_model: ChatModel,
    spec: str | None,
    options: Mapping[str, Any] | None,
    likelihood: bool,
) -> tuple[ChatModel, int]:
    """The model the run calls and its worker threads: on an executor's workers (entered on
    ``remote``; the run's concurrency is per thread), else ``chat_model`` here (1)."""
    if executor is None:
        return chat_model, 1
    run_model, threads = remote.enter_context(
        executor.model(chat_model, spec=spec, options=options, likelihood=likelihood)
    )
    return run_model, threads


def _items_and_pool(
    benchmark: Any, template: Any, *, split: str, limit: int | None, seed: int, source: str, few_shot: int
) -> tuple[list[Any], list[Any]]:
    """The run's items and its few-shot pool; the template checked against both."""
    items = benchmark.load(split=split, limit=limit, seed=seed, source=source)
    if not items:
        raise EvalcoreError(f"{benchmark.name} split {split!r} has no items", field="dataset")
    # worked examples from the split kept for them (GSM8K train, MMLU dev), never a test split
    pool = benchmark.few_shot_pool() if few_shot else []
    check_template(template, items, pool, few_shot, seed)
    return items, pool


def _run_path(base: Path, run_id: str | None, dataset: str) -> tuple[str, Path]:
    """The run's id and folder, checked usable before any call (a file in the way fails now)."""
    check_output_dir(base, field="run_dir")
    if run_id is None:
        run_id = new_run_id(base, dataset)
    path = base / run_id
    check_output_dir(path, field="run_id")
    for name in (CONFIG_FILE, SAMPLES_FILE, RESULTS_FILE, LOCK_FILE):
        if (path / name).is_dir():
            raise EvalcoreError(
                "is a folder, not a file: this is no usable run directory", path=path / name, field="run_id"
            )
    return run_id, path


def _open_cache(
    cache: bool | str | os.PathLike[str], base: Path, chat_model: ChatModel, model_spec: Any, config: Any
) -> ResponseCache | None:
    """The response cache the run uses (None: none), its path recorded in ``config``."""
    db_path = cache_path(cache, base, chat_model, model_spec)
    if db_path is not None:
        check_output_file(db_path, field="cache")
    cache_db = ResponseCache(db_path) if db_path is not None else None
    config["cache"] = str(db_path) if db_path is not None else None
    return cache_db


def _execute_locked(invocation: Invocation, cache_db: ResponseCache | None, remote: Any) -> None:
    """Create and lock the run folder, write its config, run the invocation; release everything after."""
    path = invocation.path
    path.mkdir(parents=True, exist_ok=True)
    try:
        lock = lock_run(path)
    except EvalcoreError:
        if cache_db is not None:
            cache_db.close()
        remote.close()
        raise
    write_run_json(path / CONFIG_FILE, invocation.config)
    token = IN_BENCHMARK.set(True)
    try:
        invocation.execute()
    finally:
        IN_BENCHMARK.reset(token)
        if cache_db is not None:
            cache_db.close()
        lock.close()
        import sys

        remote.__exit__(*sys.exc_info())  # Ctrl-C: a local cluster's processes are killed at once
