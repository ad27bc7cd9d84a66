"""One entry point for every kind of result: an evalcore run, an lm-eval log, an inspect log."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalcore.errors import EvalcoreError
from evalcore.imports._common import content_key, import_batch, question_of, write_run
from evalcore.imports._inspect import HARNESS as INSPECT_HARNESS
from evalcore.imports._inspect import import_inspect, is_inspect_log
from evalcore.imports._lm_eval import (
    import_lm_eval,
    is_lm_eval_results,
    match_metric,
    no_metric_matches,
)

#: Where ``evalcore compare`` writes the runs it imports, unless told otherwise.
DEFAULT_IMPORT_DIR = "runs/imported"


def detect(path: str | os.PathLike[str]) -> str:
    """What a path holds: ``"run"``, ``"lm-eval"`` or ``"inspect"``.

    A folder with ``config.json`` is an evalcore run; ``results_<time>.json`` or
    ``samples_<task>_<time>.jsonl`` (or a folder holding exactly one results file and no
    inspect log) is lm-eval output; a ``.eval`` file, an inspect ``.json`` log, or a folder
    holding exactly one of them is an inspect log.

    Args:
        path: The path given by the user.

    Returns:
        The kind.

    Raises:
        EvalcoreError: A missing path, or one that is none of these.
    """
    p = Path(path)
    if p.is_dir():
        from evalcore._runstore import CONFIG_FILE

        if (p / CONFIG_FILE).is_file():
            return "run"
        lm = list(p.rglob("results_*.json"))
        ins = [q for q in p.rglob("*.eval")] + [
            q for q in p.rglob("*.json") if not is_lm_eval_results(q) and is_inspect_log(q)
        ]
        if lm and not ins:
            return "lm-eval"
        if ins and not lm:
            if len(ins) > 1:
                raise EvalcoreError(
                    f"holds {len(ins)} inspect logs; name one of them: " + ", ".join(str(q) for q in sorted(ins)[:5]),
                    path=p,
                )
            return "inspect"
        if lm and ins:
            raise EvalcoreError("holds both lm-eval and inspect logs; name one log file", path=p)
        raise EvalcoreError(
            "neither an evalcore run directory (no config.json) nor a folder with "
            "an lm-eval results_<time>.json or an inspect log",
            path=p,
        )
    if not p.exists():
        raise EvalcoreError(
            "not found (expected a run directory, an lm-eval results or samples file, or an inspect .eval/.json log)",
            path=p,
        )
    if is_lm_eval_results(p):
        return "lm-eval"
    if is_inspect_log(p):
        return "inspect"
    raise EvalcoreError(
        "not a known log: expected an lm-eval results_<time>.json or "
        "samples_<task>_<time>.jsonl, an inspect .eval or .json log, or a run "
        "directory",
        path=p,
    )


def import_log(
    path: str | os.PathLike[str],
    run_dir: str | os.PathLike[str] = DEFAULT_IMPORT_DIR,
    *,
    metric: Sequence[str] = (),
    task: str | None = None,
) -> list[Path]:
    """Import an lm-eval or inspect log as evalcore run directories.

    Every run is written completely or not at all (a malformed log leaves nothing behind); a
    log already imported with the same metric is not written again. Inside
    :func:`~evalcore.imports.import_batch` (``evalcore compare`` and ``evalcore import``
    with several logs) the runs stay staged until the whole command has succeeded, and the
    staged paths are returned.

    Args:
        path: The log (see :func:`detect`).
        run_dir: Parent folder of the run directories.
        metric: Metric / scorer names to try in order (``exact_match,strict-match``, ``acc``,
            ``match``); needed when the log holds several. When given, one of them must be in
            the log: it is refused otherwise, even when it holds a single metric.
        task: For lm-eval output with several tasks, the one to import.

    Returns:
        The run directories (one per task for lm-eval, one for an inspect log).

    Raises:
        EvalcoreError: See :func:`detect`, :func:`~evalcore.imports.import_lm_eval`,
            :func:`~evalcore.imports.import_inspect`.
    """
    kind = detect(path)
    p = Path(path)
    if kind == "run":
        raise EvalcoreError("already an evalcore run directory; nothing to import", path=p)
    if kind == "lm-eval":
        runs = import_lm_eval(p, metric=metric, task=task)
    else:
        if p.is_dir():
            p = next(q for q in sorted(p.rglob("*")) if q.is_file() and is_inspect_log(q) and not is_lm_eval_results(q))
        runs = [import_inspect(p, metric=metric)]
    with import_batch() as batch:
        written = [write_run(r, run_dir) for r in runs]
    # in a batch of its own, the runs are in place now; inside a caller's batch, still staged
    return [batch.final_path(w) for w in written] if batch.committed else written


def resolve(
    path: str | os.PathLike[str],
    *,
    import_dir: str | os.PathLike[str] = DEFAULT_IMPORT_DIR,
    metric: Sequence[str] = (),
    task: str | None = None,
) -> Path:
    """The run directory for one ``compare`` argument (importing a log first when needed).

    Args:
        path: A run directory or a log.
        import_dir: Where imported runs go.
        metric: Metric names to try (used by the import).
        task: The task to take from lm-eval output holding several.

    Returns:
        One run directory.

    Raises:
        EvalcoreError: The log holds several tasks and ``task`` does not choose one.
    """
    if detect(path) == "run":
        return Path(path)
    runs = import_log(path, import_dir, metric=metric, task=task)
    if len(runs) != 1:
        raise EvalcoreError(
            f"holds {len(runs)} tasks ({', '.join(r.name for r in runs)}); "
            "pick one with --task (a task, or a group such as mmlu for all of "
            "its subtasks in one run)",
            path=path,
            field="task",
        )
    return runs[0]


@dataclass
class RunScores:
    """One run's per-item scores, ready for alignment.

    Attributes:
        label: Display name (unique among the compared runs).
        path: Run directory.
        harness: ``evalcore``, ``lm-evaluation-harness`` or ``inspect_ai``.
        task: What the run scores (an evalcore dataset, an lm-eval or inspect task).
        metric: The score used.
        id_scheme: How the run's item ids are made (runs with the same scheme align by id).
        by_id: Item id → score (mean over epochs, failed calls left out).
        content: Item id → content key (normalised question hash), None when unknown.
        questions: Item id → question text (for reporting unmatched items).
        reported: What the harness reported for the metric (imported runs).
        clusters: Item id → cluster label (the metadata field asked for), when asked.
    """

    label: str
    path: Path
    harness: str
    task: str
    metric: str
    id_scheme: str
    by_id: dict[str, float]
    content: dict[str, str | None]
    questions: dict[str, str]
    reported: dict[str, Any]
    clusters: dict[str, Any] = field(default_factory=dict)


_HARNESS_SHORT = {"lm-evaluation-harness": "lm-eval", "inspect_ai": "inspect"}


def default_label(run_id: str, config: Mapping[str, Any]) -> str:
    """A run's display name when none is given: its run id, except for an imported run, whose
    id ends in the import's fingerprint (``lmeval-ec_gsm8k-smollm2-1f0c9a2e``): there the
    harness, the model and the task (``lm-eval smollm2 · ec_gsm8k``).

    Args:
        run_id: The run's id.
        config: Its ``config.json``.

    Returns:
        The label.
    """
    imported = config.get("imported") or {}
    if not imported.get("harness"):
        return run_id
    harness = str(imported["harness"])
    model = str(config.get("model_name") or config.get("model") or "?").rsplit("/", 1)[-1]
    task = str(config.get("task") or config.get("dataset") or "")
    return f"{_HARNESS_SHORT.get(harness, harness)} {model}" + (f" · {task}" if task else "")


def run_scores(
    path: str | os.PathLike[str], *, metric: Sequence[str] = (), label: str | None = None, cluster: str | None = None
) -> RunScores:
    """Per-item scores of a run directory (own or imported).

    The score is ``scores.score`` (an imported run's metric chosen at import) when ``metric``
    is empty; else the first of ``metric`` that names a numeric score the run recorded
    (``strict``, ``flexible``, an lm-eval ``metric,filter`` or just ``metric`` when one filter
    has it, an inspect scorer). Names of which none is in the run are refused, never replaced
    by ``scores.score``.

    Args:
        path: Run directory.
        metric: Names to try in order.
        label: Display name (default: :func:`default_label`: the run id, or harness, model and
            task for an imported run).
        cluster: A metadata field whose value clusters items (``subject`` for MMLU).

    Returns:
        The run's scores.

    Raises:
        EvalcoreError: A run without scored samples; ``metric`` names of which none is a score
            of this run, or one that is ambiguous.
    """
    from evalcore._runstore import load_run

    run = load_run(Path(path))
    imported = run.config.get("imported") or {}
    harness = str(imported.get("harness") or "evalcore")
    task = str(run.config.get("task") or run.config.get("dataset") or "?")
    names: dict[str, None] = {}  # in the order first recorded
    for s in run.samples:
        names.update((k, None) for k, v in (s.get("scores") or {}).items() if isinstance(v, (int, float)))
    chosen = "score"
    if metric:  # the same rule as at import: a metric asked for is never replaced by another
        found = match_metric(list(names), metric, where=path, sep="/" if harness == INSPECT_HARNESS else ",")
        if found is None:
            raise no_metric_matches(list(names), metric, where=path, what="run")
        chosen = found
    per_item: dict[str, list[float]] = {}
    content: dict[str, str | None] = {}
    questions: dict[str, str] = {}
    clusters: dict[str, Any] = {}
    for s in run.samples:
        item_id = str(s["item_id"])
        meta = s.get("metadata") or {}
        if cluster is not None:
            raw_item: Any = s.get("item")  # an imported document may be any JSON value
            item = raw_item if isinstance(raw_item, dict) else {}
            value = meta.get(cluster, item.get(cluster))  # metadata, else the document's field
            if isinstance(value, (str, int, float, bool)):
                clusters.setdefault(item_id, value)
        if item_id not in content:
            text = meta.get("query") if isinstance(meta.get("query"), str) else None
            if text is None:
                text, _ = question_of(s.get("item") or {})
            # imported runs carry the key computed at import; evalcore runs hash their question
            content[item_id] = meta["content_key"] if "content_key" in meta else content_key(text)
            questions[item_id] = (text or "")[:80]
        value = (s.get("scores") or {}).get(chosen)
        if s.get("error") or value is None:
            continue
        per_item.setdefault(item_id, []).append(float(value))
    if not per_item:
        raise EvalcoreError(f"the run has no scored samples for {chosen!r}", path=path, field="samples")
    by_id = {k: sum(v) / len(v) for k, v in per_item.items()}
    # an imported run's "score" is the metric chosen at import: show its own name
    display = str(imported["metric"]) if chosen == "score" and imported.get("metric") else chosen
    return RunScores(
        label=label or default_label(run.run_id, run.config),
        path=Path(path),
        harness=harness,
        task=task,
        metric=display,
        id_scheme=str(imported.get("id_scheme") or "evalcore"),
        by_id=by_id,
        content=content,
        questions=questions,
        reported=dict(run.results.get("reported_by_harness") or {}),
        clusters=clusters,
    )
