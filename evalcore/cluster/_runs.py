"""Benchmark runs on a Dask cluster: the model calls run on the workers, the run stays the client's.

:func:`~evalcore.runs.run_benchmark` with ``cluster=`` wraps its model in a :class:`ClusterModel`:
each call is one Dask task that a worker answers with its own copy of the model backend, built
once per worker (the embedded model is loaded once per worker process; an API client keeps its
connections there). Everything else is the one-machine run, unchanged, on the client: prompts, the
response cache (looked up before a call is sent, filled when it returns), scoring, and the
append-only ``samples.jsonl`` that only the client writes, so resume and rescore are as before. A
worker killed mid-call: Dask runs the call again on another worker, and the sample is recorded
once (by the client, when the answer comes back).
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from evalcore.errors import EvalcoreError

__all__ = ["ClusterModel", "cluster_model", "call_model"]

_MODELS: dict[str, Any] = {}  # on a worker: the backends built so far, by the run's model key


def _backend(key: str, ref: tuple[Any, ...]) -> Any:
    model = _MODELS.get(key)
    if model is None:
        kind = ref[0]
        if kind == "spec":
            from evalcore.models import from_spec

            model = from_spec(ref[1], **dict(ref[2]))
        else:
            model = ref[1]
        _MODELS[key] = model
    return model


def call_model(
    key: str, ref: tuple[Any, ...], messages: list[dict[str, str]], params: dict[str, Any], version: str
) -> dict[str, Any]:
    """On a worker: answer one request with this worker's backend (built on first use).

    Args:
        key: The run's model key (one backend per key per worker).
        ref: ``("spec", spec, options)`` (built with ``from_spec`` on the worker) or
            ``("object", model)`` (the client's model object, sent once to each worker).
        messages: The chat messages.
        params: :class:`~evalcore.models.GenerationParams` as a dict.
        version: The client's evalcore version (another one is refused).

    Returns:
        The :class:`~evalcore.models.Completion` as a dict.
    """
    from evalcore.cluster._worker import _check_version
    from evalcore.models import GenerationParams

    _check_version(version)
    model = _backend(key, ref)
    return model.complete(messages, GenerationParams.from_dict(params)).to_dict()


def built_backends() -> list[str]:
    """On a worker: the model keys whose backend this worker built (for tests and diagnostics)."""
    return sorted(_MODELS)


class ClusterModel:
    """A :class:`~evalcore.models.ChatModel` whose calls are answered by the cluster's workers.

    Its name, endpoint and other attributes are the wrapped model's, so the cache keys, the run
    configuration and a resume are the same as on one machine.
    """

    def __init__(self, session: Any, model: Any, spec: str | None, options: Mapping[str, Any] | None) -> None:
        from evalcore import __version__

        self._session = session
        self._inner = model
        self._version = __version__
        self._key = f"evalcore-model-{uuid.uuid4().hex[:12]}"
        if spec is not None:
            # a rate budget is the endpoint's, not each worker's: every worker builds its model
            # with its share (the workers present when the run starts)
            opts = dict(options or {})
            workers = max(1, int(session.worker_count()))
            for attr in ("requests_per_minute", "tokens_per_minute"):
                total = getattr(model, attr, None)
                if isinstance(total, (int, float)) and total > 0:
                    opts[attr] = float(total) / workers
            self._ref: tuple[Any, ...] = ("spec", spec, tuple(sorted(opts.items())))
        else:  # the user's own model object: sent to every worker once, not with each call
            self._ref = ("object", session.client.scatter(model, broadcast=True, hash=False))

    @property
    def name(self) -> str:
        return self._inner.name

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__") or attr in ("acomplete_item", "letter_logprobs", "call_lock"):
            raise AttributeError(attr)  # replays and likelihood runs stay on the client
        return getattr(self._inner, attr)

    def _submit(self, messages: Sequence[Any], params: Any) -> Any:
        return self._session.client.submit(
            call_model,
            self._key,
            self._ref,
            [dict(m) for m in messages],
            params.to_dict(),
            self._version,
            pure=False,
            key=f"{self._key}-call-{uuid.uuid4().hex[:16]}",
        )

    def _completion(self, future: Any) -> Any:
        from evalcore.models import Completion

        try:
            return Completion.from_dict(future.result())
        except EvalcoreError:
            raise
        except Exception as exc:  # noqa: BLE001 - the worker could not answer at all
            name = type(exc).__name__
            if name == "KilledWorker":
                raise EvalcoreError(
                    f"a model call killed every worker that ran it ({exc}); the samples "
                    "recorded so far are kept: resume the run",
                    field="cluster",
                ) from None
            from evalcore.cluster._errors import describe_exception

            raise EvalcoreError(
                f"a model call failed on the cluster {self._session.label}: {describe_exception(exc)}",
                field="cluster",
            ) from None

    async def acomplete(self, messages: Sequence[Any], params: Any) -> Any:
        future = self._submit(messages, params)
        try:
            return await asyncio.to_thread(self._completion, future)
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                future.cancel()
            raise

    def complete(self, messages: Sequence[Any], params: Any) -> Any:
        return self._completion(self._submit(messages, params))


@contextlib.contextmanager
def cluster_model(
    cluster: Any,
    model: Any,
    spec: str | None,
    options: Mapping[str, Any] | None,
    *,
    wait_s: float,
    likelihood: bool = False,
) -> Iterator[tuple[ClusterModel, int]]:
    """Open the cluster and wrap ``model``; yields it and the number of worker threads.

    Raises:
        EvalcoreError: A replayed recording or a likelihood run (they stay on one machine), or
            any fault of :func:`~evalcore.cluster.open_cluster`.
    """
    if hasattr(model, "acomplete_item"):
        raise EvalcoreError(
            "a replayed recording (replay:RUN_DIR) calls no model: run it without --cluster", field="cluster"
        )
    if likelihood:
        raise EvalcoreError(
            "choice_mode='likelihood' runs on this machine only: run it without --cluster", field="cluster"
        )
    from evalcore.cluster._connect import open_cluster

    with open_cluster(cluster, wait_s=wait_s) as session:
        yield ClusterModel(session, model, spec, options), session.total_threads()
