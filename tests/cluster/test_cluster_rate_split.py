"""On a cluster a provider's rate budget is split across the workers: each worker builds its
model with its share (issue 41), so the workers together keep the endpoint's limit."""

from __future__ import annotations

from evalcore.cluster._runs import ClusterModel, call_model
from evalcore.models import from_spec


class _Session:
    def __init__(self, workers: int) -> None:
        self._workers = workers

    def worker_count(self) -> int:
        return self._workers


def test_each_worker_builds_its_model_with_its_share_of_the_budget() -> None:
    spec = "openai-compatible:fake@http://127.0.0.1:9/v1?rpm=600&tpm=90000"
    model = from_spec(spec)
    assert (model.requests_per_minute, model.tokens_per_minute) == (600, 90000)
    wrapped = ClusterModel(_Session(4), model, spec, {"timeout": 5.0})
    kind, sent_spec, options = wrapped._ref
    assert kind == "spec" and sent_spec == spec
    assert dict(options) == {"timeout": 5.0, "requests_per_minute": 150.0, "tokens_per_minute": 22500.0}
    worker_model = from_spec(sent_spec, **dict(options))  # as call_model builds it on a worker
    assert (worker_model.requests_per_minute, worker_model.tokens_per_minute) == (150.0, 22500.0)
    assert call_model is not None


def test_an_unpaced_model_stays_unpaced() -> None:
    spec = "openai-compatible:fake@http://127.0.0.1:9/v1"
    wrapped = ClusterModel(_Session(3), from_spec(spec), spec, None)
    assert dict(wrapped._ref[2]) == {}
