"""inspect_ai logs (``.eval`` and ``.json``) → evalcore runs, read with inspect's own reader.

``inspect_ai`` is an optional dependency (``pip install 'evalcore[inspect]'``); it is imported
only when a log is read.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evalcore._runstore import RunConfig, SampleRecord
from evalcore.errors import EvalcoreError
from evalcore.imports._common import (
    ImportedRun,
    content_key,
    provenance,
    question_of,
    request_hash,
    score_value,
    slug,
)
from evalcore.imports._lm_eval import choose_metric

HARNESS = "inspect_ai"
#: Log format versions of inspect_ai this importer knows.
KNOWN_VERSIONS = (1, 2)


def is_inspect_log(path: Path) -> bool:
    """Whether ``path`` looks like an inspect log: a ``.eval`` file, or a ``.json`` whose start
    names an ``eval`` spec and a ``version``."""
    if path.suffix == ".eval":
        return True
    if path.suffix != ".json" or path.name == "logs.json":  # logs.json: inspect's log listing
        return False
    try:
        with open(path, "rb") as f:
            head = f.read(4096).decode("utf-8", "replace")
    except OSError:
        return False
    return '"version"' in head and ('"eval"' in head or '"status"' in head)


def _read(path: Path) -> Any:
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise EvalcoreError(
            "reading inspect_ai logs needs the inspect-ai package: pip install 'evalcore[inspect]'", path=path
        ) from None
    if path.suffix == ".json":
        _check_json_version(path)
    try:
        return read_eval_log(str(path))
    except FileNotFoundError:
        raise EvalcoreError("file not found", path=path) from None
    except Exception as exc:  # inspect raises pydantic, zip and JSON errors of many types
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise EvalcoreError(f"inspect_ai could not read this log ({type(exc).__name__}: {first})", path=path) from None


def _check_json_version(path: Path) -> None:
    """A ``.json`` log's ``version`` is checked before inspect parses it (a clear message)."""
    import json

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise EvalcoreError(
            f"not valid JSON ({exc.msg}); is the inspect log complete?", path=path, line=exc.lineno
        ) from None
    except UnicodeDecodeError:
        raise EvalcoreError("not a UTF-8 text file", path=path) from None
    if not isinstance(data, dict):
        raise EvalcoreError("expected a JSON object (an inspect_ai log)", path=path)
    if data.get("version") not in KNOWN_VERSIONS:
        raise EvalcoreError(
            f"unknown inspect_ai log version {data.get('version')!r}: this "
            f"importer reads versions {', '.join(map(str, KNOWN_VERSIONS))}",
            path=path,
            field="version",
        )


def _input_text(sample: Any) -> str | None:
    value = sample.input
    if isinstance(value, str):
        return value
    texts = [getattr(m, "text", None) for m in value or [] if getattr(m, "role", None) == "user"]
    texts = [t for t in texts if t]
    return texts[-1] if texts else None


def _score_names(scores: dict[str, Any]) -> list[str]:
    names: list[str] = []
    for name, score in scores.items():
        value = getattr(score, "value", score)
        if isinstance(value, dict):
            names.extend(f"{name}/{k}" for k in value)
        else:
            names.append(name)
    return names


def _score_of(scores: dict[str, Any], name: str, *, path: Path, where: str) -> float:
    scorer, _, key = name.partition("/")
    if scorer not in scores:
        raise EvalcoreError(
            f"{where} has no score {scorer!r} (it has {', '.join(scores) or 'none'})",
            path=path,
            field=f"scores.{scorer}",
        )
    value = getattr(scores[scorer], "value", scores[scorer])
    if key:
        if not isinstance(value, dict) or key not in value:
            raise EvalcoreError(f"{where} has no value {key!r} in score {scorer!r}", path=path, field=f"scores.{name}")
        value = value[key]
    return score_value(value, path=path, line=None, name=f"{where}: {name}")


def import_inspect(path: str | Path, *, metric: Sequence[str] = ()) -> ImportedRun:
    """Read an inspect_ai log (``.eval`` or ``.json``) into one run.

    Sample ids become item ids, inspect's epochs (1-based) become epochs 0, 1, …; the chosen
    scorer's value becomes ``scores.score`` (C/I/P/N → 1/0/0.5/0, numbers kept; a dict-valued
    score is named ``scorer/key``); every scorer is kept in ``scores``. A sample that failed
    (``error``) is recorded as an error, not as a wrong answer.

    Args:
        path: The log file.
        metric: Scorer names to try in order.

    Returns:
        The run (not written yet).

    Raises:
        EvalcoreError: An unreadable log, an unknown log version, a log without samples, a
            sample without the chosen score.
    """
    path = Path(path)
    if not path.is_file():
        raise EvalcoreError("file not found", path=path)
    log = _read(path)
    if getattr(log, "version", None) not in KNOWN_VERSIONS:
        raise EvalcoreError(
            f"unknown inspect_ai log version {getattr(log, 'version', None)!r}", path=path, field="version"
        )
    samples_in = list(log.samples or [])
    if not samples_in:
        raise EvalcoreError(
            f"the log has no samples (status {log.status!r}); was it written with samples?", path=path, field="samples"
        )
    spec = log.eval
    available: list[str] = []
    for s in samples_in:
        for name in _score_names(s.scores or {}):
            if name not in available:
                available.append(name)
    if not available:
        raise EvalcoreError("no sample has a score (was the task scored?)", path=path, field="scores")
    chosen = choose_metric(available, metric, where=path, sep="/")
    reported = _reported(log, chosen)
    model = str(spec.model)
    gen_config = _dump(spec.model_generate_config) or {}
    records = [
        _sample_record(s, index, path, available, chosen, spec.task, model, gen_config)
        for index, s in enumerate(samples_in)
    ]
    epochs = {int(s.epoch) for s in samples_in}
    dataset = spec.dataset
    prov = provenance(
        HARNESS,
        str(getattr(spec, "packages", {}).get("inspect_ai", "")) or None,
        [path],
        metric=chosen,
        extra={
            "task": spec.task,
            "id_scheme": f"inspect:{dataset.name or spec.task}",
            "metrics_available": available,
            "log_version": log.version,
            "status": log.status,
            "eval_id": getattr(spec, "eval_id", None),
            "run_id": getattr(spec, "run_id", None),
        },
    )
    stats = _dump(log.stats) or {}
    run_id = f"inspect-{slug(spec.task)}-{slug(model.rsplit('/', 1)[-1], 24)}-{prov['fingerprint'][:8]}"
    config: RunConfig = {
        "dataset": spec.task,
        "task": spec.task,
        "split": None,
        "source": [HARNESS],
        "model": model,
        "model_name": model.rsplit("/", 1)[-1],
        "model_base_url": getattr(spec, "model_base_url", None),
        "task_args": _dump(getattr(spec, "task_args", None)),
        "task_dataset": {"name": dataset.name, "location": dataset.location, "samples": dataset.samples},
        "params": gen_config,
        "eval_config": _dump(spec.config),
        "model_usage": stats.get("model_usage"),
        "scorer": chosen,
        "epochs": max(epochs) if epochs else 1,
        "n_items": len({r["item_id"] for r in records}),
        "item_ids": list(dict.fromkeys(r["item_id"] for r in records)),
        "imported": prov,
    }
    return ImportedRun(run_id=run_id, config=config, samples=records, reported=reported)


def _reported(log: Any, chosen: str) -> dict[str, Any]:
    """The log's own aggregate values of the chosen scorer (its metrics, and the headline under ``chosen``)."""
    reported: dict[str, Any] = {}
    for ev in (log.results.scores if log.results else []) or []:
        if ev.name == chosen.split("/", 1)[0] or ev.name == chosen:
            reported = {f"{ev.name}/{k}": m.value for k, m in (ev.metrics or {}).items()}
            headline = next((k for k in ("accuracy", "mean") if k in (ev.metrics or {})), None)
            if headline is not None and "/" not in chosen:  # the mean of the per-item scores
                reported[chosen] = ev.metrics[headline].value
            break
    return reported


def _sample_record(
    s: Any,
    index: int,
    path: Path,
    available: list[str],
    chosen: str,
    task: str,
    model: str,
    gen_config: dict[str, Any],
) -> SampleRecord:
    """One inspect sample as a sample record (a failed sample an error, not a wrong answer)."""
    where = f"sample {s.id!r} epoch {s.epoch}"
    error = getattr(s, "error", None)
    scores: dict[str, float] = {}
    if error is None:
        for name in available:
            try:
                scores[name] = _score_of(s.scores or {}, name, path=path, where=where)
            except EvalcoreError:
                if name == chosen:
                    raise
        scores["score"] = scores[chosen]
    question, q_field = question_of(s.metadata or {})
    if question is None:
        question, q_field = _input_text(s), "input"
    usage: dict[str, int] = {}
    for mu in (getattr(s, "model_usage", None) or {}).values():
        usage["prompt_tokens"] = usage.get("prompt_tokens", 0) + int(mu.input_tokens or 0)
        usage["completion_tokens"] = usage.get("completion_tokens", 0) + int(mu.output_tokens or 0)
    request = {"input": _dump(s.input), "choices": s.choices, "params": gen_config}
    return {
        "item_id": str(s.id),
        "epoch": int(s.epoch) - 1,
        "dataset": task,
        "request": request,
        "request_hash": request_hash(request),
        "completion": {
            "text": s.output.completion if s.output else "",
            "usage": usage,
            "cost_usd": 0.0,
            "latency_s": float(getattr(s, "total_time", None) or 0.0),
            "model": model,
            "error": None if error is None else {"type": "inspect_sample_error", "message": str(error.message)},
        },
        "scores": scores,
        "reference": s.target,
        "metadata": {
            "content_key": content_key(question),
            "query": question,
            "question_field": q_field,
            "inspect_epoch": int(s.epoch),
            "sample_index": index,
            "answer": _answer(s.scores or {}, chosen),
            **{k: v for k, v in (s.metadata or {}).items() if isinstance(v, (str, int, float, bool)) or v is None},
        },
        "item": {
            "input": _dump(s.input),
            "choices": s.choices,
            "target": s.target,
            "metadata": _dump(s.metadata),
        },
        "error": error is not None,
    }


def _answer(scores: dict[str, Any], chosen: str) -> Any:
    score = scores.get(chosen.split("/", 1)[0])
    answer = getattr(score, "answer", None)
    return answer if isinstance(answer, (str, int, float)) else None


def _dump(obj: Any) -> Any:
    """A pydantic model (or a list of them) as plain JSON data."""
    if obj is None:
        return None
    if hasattr(obj, "model_dump"):
        return obj.model_dump(mode="json", exclude_none=True)
    if isinstance(obj, list):
        return [_dump(x) for x in obj]
    if isinstance(obj, dict):
        return {str(k): _dump(v) for k, v in obj.items()}
    return obj
