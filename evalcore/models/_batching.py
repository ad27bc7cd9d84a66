"""The embedded model's batch engine: chat completions asked at once, decoded together.

A benchmark run keeps several calls in flight (its ``concurrency``); the embedded model used to
answer them one after another (a call with no other in flight still runs alone in the model's
own context, ``evalcore.models._local._lone_chat_completion``, with the prefix rule below).
On a CPU one decoding step of SmolLM2-135M for four sequences costs less than four steps of one
(the weights are read once per step for all of them: about 1.3-1.6 times faster on the
project's 2-core VM), so :class:`BatchEngine` decodes every waiting completion in one ``llama_decode`` per step: a
llama.cpp context with one KV-cache stream per sequence (``kv_unified=False``: each sequence's
keys and values lie in cells of its own stream, as they would alone), each prompt evaluated in
its own decode (in ``n_batch`` chunks, as llama-cpp-python evaluates one), then one token per
sequence per step, each sampled by its own llama.cpp sampler chain (the one llama-cpp-python
builds for the call, with the call's seed). Every llama.cpp computation runs on the compute
thread (:mod:`._compute_thread`); the callers' threads format the chat, detokenize and look for
stop strings, as llama-cpp-python's own ``create_chat_completion`` does (it runs unchanged, on a
view of the model whose ``generate`` yields the engine's tokens).

An answer must be a function of the model, the prompt, the parameters and the seed, never of
what else was asked before or at the same time:

- **Together.** The engine has one stream until two completions are asked at once; before it
  decodes two sequences in one step it checks once that this changes no bit of the logits on
  this machine (:meth:`BatchEngine.check_exact`: two prompts, each alone in the model's own
  context, against both in the engine's streams, prompt and four decoding steps); where a bit
  differs it runs one sequence at a time.
- **A reused prefix.** A stream keeps what it holds after its completion, and the next prompt
  there skips the longest prefix it shares with it, only where reusing a prefix was found exact
  (``reuse_exact``) and only as far as the kernels give the same bits: llama.cpp computes a
  token evaluated alone (a decoding step, or a prompt chunk of one token) with other kernels than
  a token in a chunk of several, and the logits then differ (by up to 0.7 on the project's VM).
  So the prefix reused is at most the part of the stream evaluated in chunks of several tokens,
  at least two tokens are evaluated, and no chunk of one token is made that a whole evaluation
  would not make.

``EVALCORE_LLAMA_BATCH=N`` sets the most sequences decoded together (default 4; 1 turns
batching off).
"""

from __future__ import annotations

import collections
import os
import queue
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from evalcore.errors import EvalcoreError
from evalcore.models._compute_thread import start_on_compute_thread

BATCH_ENV = "EVALCORE_LLAMA_BATCH"
DEFAULT_STREAMS = 4
PROBE_STEPS = 4
"""Decoding steps :meth:`BatchEngine.check_exact` compares after the two prompts."""

PROBE_TEXTS = (
    " ".join(f"Row {i}: {i * 7 % 13} red, {i * 5 % 11} blue." for i in range(6)),
    "Question: a train leaves at 9:40 and arrives at 13:05. How long is the trip? Answer step by step.",
)
"""The two prompts of :meth:`BatchEngine.check_exact` (about 70 and 30 tokens)."""

THREADS_EVERY_S = 0.25
"""How often the thread count is chosen again from the idle CPUs (:mod:`._threads`)."""

LOCKSTEP_WAIT_S = 1.0
"""The longest the engine waits for its callers before a step (a caller that neither asks for
its next token nor stops within it is decoded for anyway, to its token limit)."""

_END = object()
"""What a request's queue receives when the engine ended its sequence before the caller stopped."""


def batch_streams() -> int:
    """The most sequences decoded together: ``EVALCORE_LLAMA_BATCH``, else 4 (1: no batching)."""
    raw = os.environ.get(BATCH_ENV, "").strip()
    if not raw:
        return DEFAULT_STREAMS
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise EvalcoreError(f"must be an integer >= 1 (1: no batching), got {raw!r}", field=BATCH_ENV)
    return value


@dataclass(eq=False)
class _Request:
    prompt: list[int]
    sampler: Any  # llama_cpp._internals.LlamaSampler (kept alive while the engine samples with it)
    max_tokens: int
    out: queue.SimpleQueue[Any] = field(default_factory=queue.SimpleQueue)
    cancelled: bool = False
    ready: bool = True
    """The caller is done with its last token (it waits for the next, or stopped)."""


@dataclass(eq=False)
class _Stream:
    seq: int
    tokens: list[int] = field(default_factory=list)
    """The tokens its KV cache holds, by position."""
    reusable: int = 0
    """How many of the first ``tokens`` were evaluated in prompt chunks of several tokens."""
    req: _Request | None = None
    last: int = -1
    """The sampled token not yet decoded."""
    produced: int = 0


class BatchEngine:
    """Decodes the completions asked at once together, one token per sequence per step.

    Args:
        llm: The loaded ``llama_cpp.Llama`` (its model, context parameters, tokenizer).
        streams: The most sequences decoded together (one until :meth:`widen`).
        threads: The thread count for the next step (the model's thread chooser).
        reuse_exact: Whether reusing a cached prompt prefix changes no bit of the logits.
        reference_rows: ``(tokens, steps)`` -> the logits rows of the prompt's last token and of
            ``steps`` greedy steps after it, computed alone in the model's own context.
    """

    def __init__(
        self,
        llm: Any,
        streams: int,
        *,
        threads: Callable[[], int],
        reuse_exact: Callable[[], bool],
        reference_rows: Callable[[list[int], int], list[bytes]],
    ) -> None:
        self.llm = llm
        self.most_streams = streams
        self.streams = [_Stream(0)]
        self._want = 1
        self._threads = threads
        self._reuse_exact = reuse_exact
        self._reference_rows = reference_rows
        self._lock = threading.Lock()
        self._turn = threading.Condition()
        """Signals that a caller is done with its token (see :meth:`tokens`)."""
        self._pending: collections.deque[_Request] = collections.deque()
        self._running = False
        self._ctx: Any = None
        self._batch: Any = None
        self._threads_at = -THREADS_EVERY_S
        self.exact: bool | None = None
        """Whether decoding sequences together was found to change no bit (None: not checked yet)."""
        self.most_together = 0
        """The most sequences one step has decoded (what the tests check)."""

    # --- the callers' side ---------------------------------------------------------------
    def widen(self) -> None:
        """Decode up to ``streams`` sequences together from the next step with none active on."""
        self._want = self.most_streams

    def tokens(self, prompt: list[int], sampler: Any, max_tokens: int) -> Iterator[int]:
        """The sampled tokens of one completion, as the engine decodes them (on the caller's thread).

        Closing the iterator (the caller found EOS, a stop string or its token limit) frees the
        sequence's stream before the engine's next step. The engine decodes a step once every
        caller of the step is done with its last token (:data:`LOCKSTEP_WAIT_S` at most): a
        caller's own work (detokenizing, looking for stop strings) then never competes for the
        CPUs with llama.cpp's threads, whose barriers stall when one of them loses its core.
        """
        req = _Request(prompt, sampler, max_tokens)
        with self._lock:
            self._pending.append(req)
            start = not self._running
            self._running = True
        if start:
            start_on_compute_thread(self._drive)
        try:
            while True:
                item = req.out.get()
                if item is _END:
                    raise RuntimeError("the embedded model's batch ended a sequence before its caller stopped")
                if isinstance(item, BaseException):
                    raise item
                yield int(item)
                self._done_with_token(req)
        finally:
            req.cancelled = True
            self._done_with_token(req)

    def _done_with_token(self, req: _Request) -> None:
        with self._turn:
            req.ready = True
            self._turn.notify_all()

    # --- the compute thread's side -------------------------------------------------------
    def _drive(self) -> None:
        """Step until no sequence is active and none waits (on the compute thread)."""
        while True:
            with self._lock:
                if not self._pending and not any(s.req is not None for s in self.streams):
                    self._running = False
                    return
            try:
                self._step()
            except BaseException as exc:  # every waiting caller gets it; the streams start afresh
                try:
                    self._fail_all(exc)
                finally:
                    with self._lock:
                        self._running = bool(self._pending)
                    if self._running:  # asked meanwhile: a fresh drive serves them
                        start_on_compute_thread(self._drive)
                return

    def _fail_all(self, exc: BaseException) -> None:
        with self._lock:
            waiting = list(self._pending)
            self._pending.clear()
        for s in self.streams:
            if s.req is not None:
                waiting.append(s.req)
            s.req, s.tokens, s.reusable = None, [], 0
        for req in waiting:
            req.out.put(exc)
        if self._ctx is not None:
            import llama_cpp

            llama_cpp.llama_memory_clear(llama_cpp.llama_get_memory(self._ctx), True)

    def _step(self) -> None:

        for s in self.streams:
            if s.req is not None and s.req.cancelled:
                s.req = None
        self._open()
        self._admit()
        with self._turn:  # every caller done with its last token, or stopped
            self._turn.wait_for(lambda: all(s.req is None or s.req.ready for s in self.streams), LOCKSTEP_WAIT_S)
        for s in self.streams:
            if s.req is not None and s.req.cancelled:
                s.req = None
        active = [s for s in self.streams if s.req is not None]
        if not active:
            return
        batch = self._batch
        batch.n_tokens = len(active)
        for j, s in enumerate(active):
            batch.token[j], batch.pos[j], batch.n_seq_id[j] = s.last, len(s.tokens), 1
            batch.seq_id[j][0], batch.logits[j] = s.seq, True
        self._decode()
        self.most_together = max(self.most_together, len(active))
        for j, s in enumerate(active):
            s.tokens.append(s.last)
            self._sample(s, j)

    def _open(self) -> None:
        """The engine's context: made at the first step, widened at a step with no sequence active.

        A widened context is checked for exactness before two sequences share a step.
        """
        import llama_cpp

        if self._ctx is None or (self._want > len(self.streams) and self._n_active() == 0):
            self.close()
            n = self._want
            params = type(self.llm.context_params).from_buffer_copy(self.llm.context_params)
            params.n_ctx = self.llm.n_ctx() * n
            params.n_seq_max = n
            params.kv_unified = False
            ctx = llama_cpp.llama_init_from_model(self.llm.model, params)
            if not ctx:
                raise RuntimeError(f"llama.cpp could not create the embedded model's context for {n} sequences")
            self._ctx = ctx
            self._batch = llama_cpp.llama_batch_init(max(self.llm.n_batch, n), 0, 1)
            self.streams = [_Stream(seq) for seq in range(n)]
            self._threads_at = -THREADS_EVERY_S
            if n > 1 and self.exact is None:
                self.exact = self.check_exact()
        now = time.monotonic()
        if now - self._threads_at >= THREADS_EVERY_S:  # reading /proc/stat costs ~0.4 ms: not every step
            self._threads_at = now
            threads = self._threads()
            llama_cpp.llama_set_n_threads(self._ctx, threads, threads)

    def _n_active(self) -> int:
        return sum(s.req is not None for s in self.streams)

    def _admit(self) -> None:
        """Waiting requests into free streams: each prompt evaluated, its first token sampled."""
        limit = len(self.streams) if self.exact else 1
        while self._n_active() < limit:
            with self._lock:
                if not self._pending:
                    return
                req = self._pending.popleft()
            if req.cancelled:
                continue
            stream = self._free_stream(req.prompt)
            stream.req, stream.produced = req, 0
            self._prefill(stream, req.prompt)
            self._sample(stream, -1)

    def _free_stream(self, prompt: list[int]) -> _Stream:
        free = [s for s in self.streams if s.req is None]
        return max(free, key=lambda s: self._reusable(s, prompt))

    def _reusable(self, stream: _Stream, prompt: list[int]) -> int:
        """How much of ``stream`` the evaluation of ``prompt`` may keep (see the module's docstring)."""
        keep = reusable_prefix(stream.tokens, stream.reusable, prompt, self.llm.n_batch)
        return keep if keep > 0 and self._reuse_exact() else 0

    def _prefill(self, stream: _Stream, prompt: list[int]) -> None:
        """Evaluate ``prompt`` in ``stream`` after the prefix it may keep."""
        if len(prompt) >= self.llm.n_ctx():
            raise RuntimeError(f"Requested tokens ({len(prompt)}) exceed context window of {self.llm.n_ctx()}")
        self._evaluate(stream, prompt, self._reusable(stream, prompt))

    def _evaluate(self, stream: _Stream, prompt: list[int], keep: int) -> None:
        """Drop what ``stream`` holds from position ``keep`` on, then evaluate the rest of ``prompt``.

        In ``n_batch`` chunks with the last token's logits of each, as llama-cpp-python's
        ``Llama.eval`` does.
        """
        import llama_cpp

        llama_cpp.llama_memory_seq_rm(llama_cpp.llama_get_memory(self._ctx), stream.seq, keep, -1)
        stream.tokens = prompt[:keep]
        stream.reusable = keep
        n_batch = self.llm.n_batch
        batch = self._batch
        for start in range(keep, len(prompt), n_batch):
            chunk = prompt[start : start + n_batch]
            batch.n_tokens = len(chunk)
            for i, tok in enumerate(chunk):
                batch.token[i], batch.pos[i], batch.n_seq_id[i] = tok, start + i, 1
                batch.seq_id[i][0], batch.logits[i] = stream.seq, i == len(chunk) - 1
            self._decode()
            stream.tokens.extend(chunk)
            if len(chunk) > 1:
                stream.reusable = len(stream.tokens)

    def _decode(self) -> None:
        import llama_cpp

        rc = llama_cpp.llama_decode(self._ctx, self._batch)
        if rc != 0:
            raise RuntimeError(f"llama_decode returned {rc}")

    def _sample(self, stream: _Stream, idx: int) -> None:
        """Sample ``stream``'s next token from output row ``idx`` and hand it to its caller."""
        import llama_cpp

        req = stream.req
        assert req is not None
        token = int(llama_cpp.llama_sampler_sample(req.sampler.sampler, self._ctx, idx))
        req.ready = False
        req.out.put(token)
        stream.last = token
        stream.produced += 1
        vocab = self.llm._model.vocab
        if (
            llama_cpp.llama_vocab_is_eog(vocab, token)
            or stream.produced >= req.max_tokens
            or len(stream.tokens) + 1 >= self.llm.n_ctx()
        ):
            req.out.put(_END)
            stream.req = None

    def check_exact(self) -> bool:
        """Whether two sequences decoded together give each one's logits alone, bit for bit.

        Two prompts, each evaluated alone in the model's own context and then decoded
        :data:`PROBE_STEPS` greedy steps, against both in the engine's first two streams
        (prompts evaluated one after the other, then the steps decoded together). About 0.5 s,
        once per loaded model, and only in a process that asks for two completions at once.
        """
        import llama_cpp
        import numpy as np

        llm = self.llm
        prompts = [llm.tokenize(t.encode("utf-8"), add_bos=True, special=False) for t in PROBE_TEXTS]
        expected = [self._reference_rows(p, PROBE_STEPS) for p in prompts]
        n_vocab = llm.n_vocab()

        def row(idx: int) -> bytes:
            return bytes(np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(self._ctx, idx), shape=(n_vocab,)))

        pair = self.streams[:2]
        got: list[list[bytes]] = [[], []]
        try:
            for s, prompt in zip(pair, prompts, strict=True):
                self._evaluate(s, prompt, 0)
                got[s.seq].append(row(-1))
            for _ in range(PROBE_STEPS):
                batch = self._batch
                batch.n_tokens = 2
                for j, s in enumerate(pair):
                    nxt = int(np.frombuffer(got[j][-1], dtype=np.float32).argmax())
                    batch.token[j], batch.pos[j], batch.n_seq_id[j] = nxt, len(s.tokens), 1
                    batch.seq_id[j][0], batch.logits[j] = s.seq, True
                    s.tokens.append(nxt)
                self._decode()
                for j in range(2):
                    got[j].append(row(j))
        finally:
            for s in pair:
                s.tokens, s.reusable = [], 0
                llama_cpp.llama_memory_seq_rm(llama_cpp.llama_get_memory(self._ctx), s.seq, 0, -1)
        return got == expected

    def close(self) -> None:
        """Free the engine's llama.cpp context (on the compute thread, when nothing is active)."""
        import llama_cpp

        if self._batch is not None:
            llama_cpp.llama_batch_free(self._batch)
            self._batch = None
        if self._ctx is not None:
            llama_cpp.llama_free(self._ctx)
            self._ctx = None


def reusable_prefix(held: list[int], reusable: int, prompt: list[int], n_batch: int) -> int:
    """How many of the tokens a context holds the evaluation of ``prompt`` may keep, bit for bit.

    At most the prefix shared with ``held`` (the tokens the context holds) and the first
    ``reusable`` of them (evaluated in prompt chunks of several tokens), at least two tokens
    evaluated, and the rest, in ``n_batch`` chunks, never ending in a chunk of one token; none
    where a whole evaluation of ``prompt`` ends in a chunk of one token (the module's docstring).
    Whether reuse is exact at all on the machine is the caller's check.
    """
    keep = min(_shared(held, prompt), reusable, len(prompt) - 2)
    if keep <= 0 or len(prompt) % n_batch == 1:
        return 0
    if (len(prompt) - keep) % n_batch == 1:
        keep -= 1
    return max(keep, 0)


def evaluated_whole(prompt_len: int, keep: int, n_batch: int) -> int:
    """How many of a prompt's first tokens were evaluated in chunks of several tokens after keeping ``keep``."""
    return prompt_len - 1 if (prompt_len - keep) % n_batch == 1 else prompt_len


def _shared(a: list[int], b: list[int]) -> int:
    """The length of the longest common prefix of ``a`` and ``b``."""
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n
