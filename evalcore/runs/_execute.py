"""Executing a run: ask the model every item × epoch not yet recorded, score and record each.

One :class:`Invocation` is one call of :func:`~evalcore.runs.run_benchmark` on a run
directory: it reads what is recorded (a resumed run asks only the rest), runs the calls on an
event loop with at most ``concurrency`` in flight, appends every scored sample to
``samples.jsonl`` as it completes and writes ``results.json`` at the end, also when Ctrl-C
stopped it (:class:`RunInterrupted`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import json
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, cast

from evalcore._runstore import (
    RESULTS_FILE,
    SAMPLES_FILE,
    RunConfig,
    SampleRecord,
    SampleWriter,
    latest_records,
    read_samples,
    write_run_json,
)
from evalcore.benchmarks import Benchmark, error_scores
from evalcore.errors import EvalcoreError
from evalcore.models import (
    ChatModel,
    Completion,
    GenerationParams,
    Message,
    ResponseCache,
    Usage,
    cache_key,
    cacheable,
    request_hash,
)
from evalcore.runs._prompts import PromptTemplate, render, select_few_shot
from evalcore.runs._results import summarize


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


def _epoch_params(gp: GenerationParams, epoch: int) -> GenerationParams:
    """Each epoch samples with its own seed (``seed + epoch``) so epochs are independent draws."""
    if gp.seed is None:
        return gp
    return dataclasses.replace(gp, seed=int(gp.seed) + epoch)


class LetterScorer(Protocol):
    """What a likelihood-mode call asks of the model (the embedded model is one): its name and
    the log-probability of each answer letter. Used when the model has them: ``call_lock``
    (held for the whole call) and ``count_tokens`` with ``chat_prompt`` (the prompt's tokens)."""

    @property
    def name(self) -> str:
        """The model's name (recorded in the completion)."""
        ...

    def letter_logprobs(self, messages: Sequence[Message], letters: Sequence[str]) -> Mapping[str, float]:
        """Letter -> log-probability of that letter as the answer to ``messages``."""
        ...


class _PromptTokens(Protocol):
    """A :class:`LetterScorer` that has ``count_tokens`` has ``chat_prompt`` too (the embedded model)."""

    def chat_prompt(self, messages: Sequence[Message]) -> str: ...

    def count_tokens(self, text: str) -> int: ...


def _likelihood(model: LetterScorer, messages: list[Message], choices: Sequence[str]) -> Completion:
    import contextlib

    # the embedded model serves one call at a time: hold its lock for the whole call, so the
    # latency measured is this call's, not the wait for the calls ahead of it
    with getattr(model, "call_lock", None) or contextlib.nullcontext():
        return _likelihood_call(model, messages, choices)


def _likelihood_call(model: LetterScorer, messages: list[Message], choices: Sequence[str]) -> Completion:
    start = time.perf_counter()
    letters = "ABCD"[: max(len(choices), 1)]
    try:
        lps = model.letter_logprobs(messages, tuple(letters))
        counter = cast("_PromptTokens", model) if hasattr(model, "count_tokens") else None
        prompt_tokens = counter.count_tokens(counter.chat_prompt(messages)) if counter is not None else 0
    except EvalcoreError:
        raise
    except Exception as exc:  # recorded as an error sample
        from evalcore.models import CompletionError

        return Completion(
            text="",
            latency_s=time.perf_counter() - start,
            model=model.name,
            error=CompletionError(type=exc.__class__.__name__, message=str(exc)[:500]),
        )
    best = max(lps, key=lambda k: lps[k])
    return Completion(
        text=best,
        usage=Usage(prompt_tokens=prompt_tokens, completion_tokens=0),
        latency_s=time.perf_counter() - start,
        model=model.name,
        logprobs=[{"token": best, "logprob": lps[best], "top": lps}],
    )


class Invocation:
    """One invocation of a run: the to-do list, the async workers, the writer."""

    def __init__(
        self,
        *,
        path: Path,
        config: RunConfig,
        items: list[Any],
        pool: list[Any],
        template: PromptTemplate,
        model: ChatModel,
        params: GenerationParams,
        epochs: int,
        concurrency: int,
        cache: ResponseCache | None,
        progress: bool,
        choice_mode: str,
        few_shot: int,
        seed: int,
        code_timeout_s: float,
        benchmark: Benchmark,
    ) -> None:
        self.path = path
        self.benchmark = benchmark
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
        self.choice_mode = choice_mode
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
        # the cache failed (locked, full, damaged): no new call is made, the answers in hand are
        # still recorded, then the run stops with this error (an answer paid for is never lost)
        self.cache_failure: EvalcoreError | None = None

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
            from evalcore.models import run_sync

            run_sync(coro)

    def execute(self) -> None:
        """Ask what is not recorded, then write ``results.json``.

        Raises:
            RunInterrupted: Ctrl-C stopped it (after the results were written).
        """
        found = read_samples(self.path / SAMPLES_FILE)
        wanted = {(it.id, e) for it in self.items for e in range(self.epochs)}
        done = {(r["item_id"], int(r["epoch"])) for r in latest_records(found.records) if not r.get("error")}
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

            write_jsonl_atomic(self.path / SAMPLES_FILE, records, fsync=True, mkdir=False, allow_nan=False)
        records = [r for r in records if (r["item_id"], int(r["epoch"])) in wanted]
        # qps counts the model calls of this invocation; cache hits are not queries
        results = summarize(
            records, self.dataset, epochs=self.epochs, wall_s=wall, calls=self.fresh, benchmark=self.benchmark
        )
        previous = self.path / RESULTS_FILE
        if not todo and previous.is_file():  # nothing asked now: keep the last timing figures
            # results.json is derived and rewritten below: a damaged one (not UTF-8, not JSON,
            # not an object) only loses its old timing figures
            try:
                old = json.loads(previous.read_text("utf-8"))
            except (ValueError, OSError):  # JSONDecodeError and UnicodeDecodeError are ValueErrors
                old = {}
            if not isinstance(old, dict):
                old = {}
            for key in ("wall_s", "qps"):
                if key in old:
                    results[key] = old[key]
        results["run_id"] = self.config["run_id"]
        results["complete"] = len(records) == len(wanted)
        # what this invocation did: samples found recorded (not asked again), model calls
        # made, answers taken from the response cache, and whether Ctrl-C stopped it
        results["invocation"] = {
            "resumed": resumed,
            "asked": self.fresh,
            "from_cache": self.cache_hits,
            "interrupted": interrupted,
        }
        rate = getattr(self.model, "rate_stats", None)
        if callable(rate) and todo:
            # pacing to the endpoint's limits: calls in flight at the end and at the lowest,
            # seconds waited for the budget (summed over requests), 429s seen (docs/models.md)
            results["rate"] = rate()
        write_run_json(self.path / RESULTS_FILE, results)
        if interrupted:
            raise RunInterrupted(
                self.path,
                str(self.config["run_id"]),
                sum(1 for r in records if not r.get("error")),
                len(wanted),
                self.executor.busy if self.executor is not None else 0,
            )

    async def _run_all(self, todo: list[tuple[Any, int]], writer: SampleWriter) -> None:
        from tqdm.auto import tqdm

        from evalcore._progress import progress_enabled

        sem = asyncio.Semaphore(self.concurrency)
        source = ",".join(self.config.get("source") or [])
        bar = tqdm(
            total=len(todo),
            desc=f"{self.dataset} ({source}) {self.model.name}",
            # a terminal or JupyterLab (a widget); never a papermill run or a log
            disable=not (self.progress and progress_enabled(None)),
            unit="sample",
        )

        rate = getattr(self.model, "rate_stats", None)
        rate = rate if callable(rate) and bar.disable is False else None

        async def one(item: Any, epoch: int) -> None:
            async with sem:
                if self.cache_failure is not None:
                    return  # the run stops: ask nothing more
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
            if rate is None:
                bar.set_postfix(acc=f"{acc:.3f}", cost=f"${self.cost:.4f}", errors=self.errors)
            else:  # an endpoint model: the calls in flight it chose, its waits and 429s
                r = rate()
                bar.set_postfix(
                    acc=f"{acc:.3f}",
                    cost=f"${self.cost:.4f}",
                    errors=self.errors,
                    conc=r["concurrency_final"],
                    wait=f"{r['waits_s']:.0f}s",
                    n429=r["n_429"],
                )

        try:
            await asyncio.gather(*(one(it, e) for it, e in todo))
        finally:
            bar.close()
        if self.cache_failure is not None:
            raise self.cache_failure

    async def _sample(self, item: Any, epoch: int) -> SampleRecord:
        shots = select_few_shot(self.pool, item, self.few_shot, self.seed)
        messages = render(self.template, item, shots)
        params = _epoch_params(self.params, epoch)
        likelihood = self.benchmark.supports_likelihood and self.choice_mode == "likelihood"
        model_key = self.model.name + ("#letter_logprobs" if likelihood else "")
        key = cache_key(model_key, str(getattr(self.model, "endpoint", "")), messages, params, epoch)
        # a sampled request without a seed is a new draw every time: never served from the cache
        cache = self.cache if (likelihood or cacheable(params)) else None
        hit = cache.get(key) if cache is not None else None
        cached = hit is not None
        comp: Completion
        if hit is not None:
            comp = hit
        else:
            if hasattr(self.model, "acomplete_item"):  # a replayed recording
                comp = await self.model.acomplete_item(item.id, epoch, messages, params)
            elif likelihood:
                # likelihood mode needs a model with letter_logprobs (checked by resolve_params)
                scorer = cast(LetterScorer, self.model)
                comp = await asyncio.to_thread(_likelihood, scorer, messages, item.fields.get("choices") or [])
            else:
                comp = await self.model.acomplete(messages, params)
            if cache is not None and comp.ok and self.cache_failure is None:
                try:
                    cache.put(key, self.model.name, comp)
                except EvalcoreError as exc:  # the answer is still recorded below
                    self.cache_failure = exc
        record: SampleRecord = {
            "run_id": self.config["run_id"],
            "item_id": item.id,
            "epoch": epoch,
            "dataset": self.dataset,
            "request": {
                "messages": messages,
                "params": params.to_dict(),
                **({"mode": "likelihood"} if likelihood else {}),
            },
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
        elif self.benchmark.scorer == "code_execution":  # runs code: off the event loop
            record["scores"] = (
                await asyncio.to_thread(
                    self.benchmark.score_records,
                    [cast("dict[str, Any]", record)],
                    timeout_s=self.code_timeout_s,
                    workers=1,
                )
            )[0]
        else:
            record["scores"] = self.benchmark.score(comp.text, item.reference, item.fields)
        return record
