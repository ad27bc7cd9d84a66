"""lm-evaluation-harness ``--log_samples`` output → evalcore runs (one per model × task).

lm-eval writes, under ``--output_path``, a ``results_<time>.json`` (aggregate metrics, task
configs, model arguments) and beside it one ``samples_<task>_<time>.jsonl`` per task: one line
per document and filter with ``doc_id``, ``doc``, ``arguments``, ``resps``, ``filtered_resps``,
``filter``, ``metrics`` (the names of the metrics logged on that line) and each metric's value.
This module reads those files as plain JSON (lm-eval itself is not needed).
"""

from __future__ import annotations

import json
import os
import re
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evalcore._runstore import RunConfig, SampleRecord
from evalcore.errors import EvalcoreError
from evalcore.imports._common import (
    ImportedRun,
    content_key,
    doc_hash,
    provenance,
    question_of,
    request_hash,
    score_value,
    slug,
)

HARNESS = "lm-evaluation-harness"
#: lm-eval releases whose log layout this importer knows.
KNOWN_VERSIONS = re.compile(r"^0\.4(\.|$)")
_RESULTS_RE = re.compile(r"^results_(?P<stamp>.+)\.json$")
_SAMPLES_RE = re.compile(r"^samples_(?P<task>.+)_(?P<stamp>\d{4}-\d{2}-\d{2}T[^_]+)\.jsonl$")
# Sample keys that are never metrics.
_REQUIRED = ("doc_id", "doc", "filtered_resps", "metrics")


def is_lm_eval_results(path: Path) -> bool:
    """Whether ``path`` looks like an lm-eval ``results_<time>.json`` or ``samples_*.jsonl``."""
    return bool(_RESULTS_RE.match(path.name) or _SAMPLES_RE.match(path.name))


def _read_results(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise EvalcoreError(
            f"not valid JSON ({exc.msg}); is the lm-eval results file complete?", path=path, line=exc.lineno
        ) from None
    except UnicodeDecodeError:
        raise EvalcoreError("not a UTF-8 text file", path=path) from None
    if not isinstance(data, dict):
        raise EvalcoreError("expected a JSON object (an lm-eval results file)", path=path)
    for key in ("results", "configs"):
        if not isinstance(data.get(key), dict):
            raise EvalcoreError(
                "missing or not an object: this lm-eval results file lacks a field the importer relies on",
                path=path,
                field=key,
            )
    version = data.get("lm_eval_version")
    if version is not None and not KNOWN_VERSIONS.match(str(version)):
        raise EvalcoreError(
            f"unknown lm-eval version {version!r}: this importer reads logs of lm-eval 0.4.x",
            path=path,
            field="lm_eval_version",
        )
    return data


def _results_for_samples(samples: Path) -> Path:
    m = _SAMPLES_RE.match(samples.name)
    if not m:
        raise EvalcoreError("not an lm-eval samples file name (samples_<task>_<time>.jsonl)", path=samples)
    results = samples.parent / f"results_{m['stamp']}.json"
    if not results.is_file():
        raise EvalcoreError(
            f"no {results.name} beside this lm-eval samples file (the results "
            "file carries the model and task configuration)",
            path=samples,
        )
    return results


def samples_files(results: Path) -> dict[str, Path]:
    """Task → samples file written with a results file (same timestamp, same folder)."""
    m = _RESULTS_RE.match(results.name)
    if not m:
        raise EvalcoreError("not an lm-eval results file name (results_<time>.json)", path=results)
    out: dict[str, Path] = {}
    for p in sorted(results.parent.glob(f"samples_*_{m['stamp']}.jsonl")):
        sm = _SAMPLES_RE.match(p.name)
        if sm and sm["stamp"] == m["stamp"]:
            out[sm["task"]] = p
    return out


def _read_lines(path: Path) -> list[tuple[int, dict[str, Any]]]:
    rows = []
    with open(path, "rb") as f:
        for lineno, raw in enumerate(f, start=1):
            if not raw.strip():
                continue
            try:
                row = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError):
                what = "truncated (no newline at the end)" if not raw.endswith(b"\n") else "not valid JSON"
                raise EvalcoreError(
                    f"sample line is {what}; is the lm-eval log complete?", path=path, line=lineno
                ) from None
            if not isinstance(row, dict):
                raise EvalcoreError("sample line is not a JSON object", path=path, line=lineno)
            missing = [k for k in _REQUIRED if k not in row]
            if missing:
                raise EvalcoreError(
                    "sample line lacks a field the importer relies on (format drift in lm-eval's "
                    "--log_samples output?)",
                    path=path,
                    line=lineno,
                    field=",".join(missing),
                )
            if not isinstance(row["metrics"], list) or not row["metrics"]:
                raise EvalcoreError(
                    "expected a non-empty list of metric names", path=path, line=lineno, field="metrics"
                )
            rows.append((lineno, row))
    if not rows:
        raise EvalcoreError("the lm-eval samples file has no sample lines", path=path)
    return rows


def match_metric(
    available: Sequence[str], wanted: Sequence[str], *, where: str | os.PathLike[str], sep: str = ","
) -> str | None:
    """The first ``wanted`` name that names one of ``available``, or None.

    Each name is tried in order: an exact name (``exact_match,strict-match``), or a name
    without its filter/key part (``acc``) when exactly one available name starts with it.

    Args:
        available: Metric names the log or run holds.
        wanted: The user's ``--metric`` values, in order.
        where: The log or run (for the message).
        sep: What separates a metric from its filter (``,`` for lm-eval, ``/`` for inspect).

    Returns:
        The available name matched, or None when no name matches.

    Raises:
        EvalcoreError: A name that is the prefix of several available names (ambiguous).
    """
    for name in wanted:
        if name in available:
            return name
        prefixed = [a for a in available if a.split(sep, 1)[0] == name]
        if len(prefixed) == 1:
            return prefixed[0]
        if len(prefixed) > 1:
            raise EvalcoreError(
                f"metric {name!r} is ambiguous here: {', '.join(prefixed)}; pass one of them with --metric",
                path=where,
                field="metric",
            )
    return None


def no_metric_matches(
    available: Sequence[str], wanted: Sequence[str], *, where: str | os.PathLike[str], what: str = "log"
) -> EvalcoreError:
    """The error for ``--metric`` names of which none is in a log or run.

    Args:
        available: Metric names the log or run holds.
        wanted: The user's ``--metric`` values.
        where: The log or run.
        what: ``log`` or ``run`` (for the message).

    Returns:
        The error to raise (naming the log, the names given and the metrics it has).
    """
    given = ", ".join(repr(w) for w in wanted)
    return EvalcoreError(
        f"none of the --metric names given ({given}) is a metric of this {what}; it has "
        f"{', '.join(available) or 'none'}. --metric is tried in order for each source: add "
        "one of these (a metric asked for is never replaced by another)",
        path=where,
        field="metric",
    )


def choose_metric(available: Sequence[str], wanted: Sequence[str], *, where: str | Path, sep: str = ",") -> str:
    """Pick the metric to import.

    Each ``wanted`` name is tried in order (see :func:`match_metric`). When ``--metric`` was
    given and none of its names is in this log, the log is refused: a name the user chose is
    never replaced by another metric, not even by the log's only one. With no ``--metric``,
    the only available metric is taken; several are refused.

    Args:
        available: Metric names the log holds.
        wanted: The user's ``--metric`` values, in order.
        where: The log (for the message).
        sep: What separates a metric from its filter (``,`` for lm-eval).

    Returns:
        The chosen name.

    Raises:
        EvalcoreError: An ambiguous name, names of which none is in the log, or several
            metrics and none chosen.
    """
    chosen = match_metric(available, wanted, where=where, sep=sep)
    if chosen is not None:
        return chosen
    if wanted:
        raise no_metric_matches(available, wanted, where=where)
    if len(available) == 1:
        return available[0]
    raise EvalcoreError(
        f"the log has several metrics ({', '.join(available)}); pick one with --metric", path=where, field="metric"
    )


def lm_eval_reply_text(resp: Any) -> str:
    """A reply as lm-eval logged it (``resps``/``filtered_resps``: nested one-item lists) as text.

    Args:
        resp: The logged value; a string inside one-item lists is unwrapped, anything else is
            written as JSON.

    Returns:
        The text.
    """
    while isinstance(resp, list) and len(resp) == 1:
        resp = resp[0]
    return resp if isinstance(resp, str) else json.dumps(resp, ensure_ascii=False)


def _model_name(results: dict[str, Any]) -> str:
    cfg = results.get("config") or {}
    name = results.get("model_name")
    if not name:
        args = cfg.get("model_args")
        if isinstance(args, str):
            pairs = dict(p.split("=", 1) for p in args.split(",") if "=" in p)
            name = pairs.get("model") or pairs.get("pretrained")
        elif isinstance(args, dict):
            name = args.get("model") or args.get("pretrained")
    return str(name or cfg.get("model") or "unknown")


def import_lm_eval(path: str | Path, *, metric: Sequence[str] = (), task: str | None = None) -> list[ImportedRun]:
    """Read lm-eval ``--log_samples`` output into runs, one per task.

    Item ids are ``doc:<sha256 of the document's canonical JSON>[:16]`` (the same document gets
    the same id whatever its ``doc_id`` or position, so runs with different orders align);
    ``doc_id`` is kept in the metadata. The chosen metric's value (for the chosen filter)
    becomes ``scores.score``; every metric and filter logged is kept in ``scores`` under
    lm-eval's own ``metric,filter`` names, the filtered response is the completion text.

    Args:
        path: A ``results_<time>.json``, a ``samples_<task>_<time>.jsonl``, or a folder with
            one results file.
        metric: Metric names to try in order (``exact_match,strict-match`` or ``acc``); when
            given, one of them must be in the log (the log's only metric does not replace them).
        task: Import only this task (or group); without it, every task of the results file.

    Returns:
        The runs (not written yet).

    Raises:
        EvalcoreError: A missing, truncated or malformed file (naming file, line and field), an
            unknown lm-eval version, a missing or ambiguous metric, ``metric`` names of which
            none is in the log, a task (or a subtask of the group asked for) whose samples file
            is missing: every task the results file lists is imported, or none.
    """
    path = Path(path)
    if path.is_dir():
        found = sorted(path.rglob("results_*.json"))
        if len(found) != 1:
            raise EvalcoreError(
                f"expected one lm-eval results_<time>.json in this folder, found "
                f"{len(found)}" + (f": {', '.join(str(p) for p in found[:5])}" if found else ""),
                path=path,
            )
        path = found[0]
    if not path.is_file():
        raise EvalcoreError("file not found", path=path)
    only_task = None
    if _SAMPLES_RE.match(path.name):
        only_task = _SAMPLES_RE.match(path.name)["task"]  # type: ignore[index]
        results_path = _results_for_samples(path)
    else:
        results_path = path
    results = _read_results(results_path)
    on_disk = samples_files(results_path)
    files = on_disk if only_task is None else {only_task: path}
    groups = _groups(results, files)
    if task is not None:
        if task in files:
            return [_import_task(results_path, results, task, [(task, files[task])], metric)]
        if task in groups:
            leaves = groups[task]
            _check_samples(results_path, leaves, on_disk, what=f"group {task!r} has the subtask")
            elsewhere = [t for t in leaves if t not in files]
            if elsewhere:
                raise EvalcoreError(
                    f"group {task!r} has the subtasks {', '.join(elsewhere)}, "
                    "whose samples are not in this file: give the results file "
                    "or its folder to import the whole group",
                    path=path,
                    field="task",
                )
            return [_import_task(results_path, results, task, [(t, files[t]) for t in leaves], metric)]
        if only_task is None and task in results["configs"]:
            _check_samples(results_path, [task], on_disk, what="the results file lists the task")
        raise EvalcoreError(
            f"no samples for task {task!r}; the log has {', '.join(list(groups) + list(files)) or 'none'}",
            path=path if only_task is not None else results_path,
            field="task",
        )
    if not files:
        raise EvalcoreError(
            "no samples_<task>_<time>.jsonl beside this results file: run lm_eval with --log_samples", path=results_path
        )
    if only_task is None:  # every task: each one lm-eval evaluated must have its samples
        _check_samples(results_path, list(results["configs"]), on_disk, what="the results file lists the task")
    return [_import_task(results_path, results, name, [(name, sp)], metric) for name, sp in files.items()]


def _check_samples(results_path: Path, tasks: Sequence[str], on_disk: dict[str, Path], *, what: str) -> None:
    """Refuse tasks whose ``samples_<task>_<time>.jsonl`` is not beside the results file.

    lm-eval ``--log_samples`` writes one samples file per task it evaluated (each task of the
    results' ``configs``); one that is missing means a log copied or written in part. Its task
    is never skipped: importing the others as if they were all would compare less than the
    user thinks.

    Args:
        results_path: The results file.
        tasks: The tasks that must have their samples.
        on_disk: Task → samples file found beside the results file.
        what: How the message introduces the tasks (``the results file lists the task``).

    Raises:
        EvalcoreError: Naming the results file, the tasks and the files that are missing.
    """
    lacking = [t for t in dict.fromkeys(tasks) if t not in on_disk]
    if not lacking:
        return
    stamp = _RESULTS_RE.match(results_path.name)["stamp"]  # type: ignore[index]
    shown = lacking[:5]
    expected = ", ".join(f"samples_{t}_{stamp}.jsonl" for t in shown)
    more = f" and {len(lacking) - len(shown)} more" if len(lacking) > len(shown) else ""
    present = [t for t in on_disk if t not in lacking]
    one = len(lacking) == 1
    raise EvalcoreError(
        f"{what}{'' if one else 's'} {', '.join(repr(t) for t in shown)}{more} but "
        f"{'its per-sample file' if one else 'their per-sample files'} {expected}{more} "
        f"{'is' if one else 'are'} not beside the results file (lm-eval --log_samples writes "
        "one per task; a task is never skipped): copy the whole output folder"
        + (
            ""
            if not present
            else ", or import only a task whose samples are there (--task "
            + (present[0] if len(present) == 1 else f"one of {', '.join(present)}")
            + ")"
        ),
        path=results_path,
        field="task",
    )


def _groups(results: dict[str, Any], files: dict[str, Path]) -> dict[str, list[str]]:
    """Group → all of its leaf tasks (lm-eval's ``group_subtasks``, recursively).

    Every leaf is listed, whether or not its samples file is there: a group whose subtask
    lacks its samples is refused, never imported without it.
    """
    tree = results.get("group_subtasks") or {}
    if not isinstance(tree, dict):
        return {}

    def leaves(name: str, seen: frozenset[str]) -> list[str]:
        if name in seen:  # a cycle: not lm-eval's, nothing more below it
            return []
        subs = tree.get(name) or []
        if not subs:
            return [name]
        return [leaf for sub in subs for leaf in leaves(sub, seen | {name})]

    out = {}
    for name, subs in tree.items():
        if subs and name not in files:
            found = list(dict.fromkeys(leaves(name, frozenset())))
            if found:
                out[name] = found
    return out


def _number_text(text: str) -> float | None:
    """A metric value lm-eval wrote as text: a number, or ``True``/``False`` (a numpy bool)."""
    stripped = text.strip()
    if stripped in ("True", "False"):
        return 1.0 if stripped == "True" else 0.0
    try:
        return float(stripped)
    except ValueError:
        return None


_Rows = list[tuple[str, Path, list[tuple[int, dict[str, Any]]]]]
_Picked = tuple[str, Path, int, dict[str, Any], dict[str, float]]


def _import_task(
    results_path: Path, results: dict[str, Any], task: str, parts: list[tuple[str, Path]], wanted: Sequence[str]
) -> ImportedRun:
    """One run from one task's samples, or from a group's subtasks (``parts``) together."""
    read = [(sub, sp, _read_lines(sp)) for sub, sp in parts]
    available = _shared_metric_names(read)
    group = len(parts) > 1 or parts[0][0] != task
    chosen = choose_metric(available, wanted, where=parts[0][1] if not group else results_path)
    m_name, _, m_filter = chosen.partition(",")
    task_results = _task_results(results, results_path, task, chosen, group)
    configs = results.get("configs") or {}
    task_config = (configs.get(task) or {}) if not group else {sub: configs.get(sub) or {} for sub, _ in parts}
    first_config = configs.get(parts[0][0]) or {}
    model_name = _model_name(results)
    cfg = results.get("config") or {}
    gen_kwargs = first_config.get("generation_kwargs") or {}
    picked = [p for sub, sp, rows in read for p in _picked_rows(sub, sp, rows, chosen)]
    samples = _sample_records(picked, task, group, chosen, m_filter, gen_kwargs, model_name)
    reported = {
        chosen: task_results.get(chosen),
        f"{m_name}_stderr,{m_filter}": task_results.get(f"{m_name}_stderr,{m_filter}"),
    }
    version = results.get("lm_eval_version")
    prov = provenance(
        HARNESS,
        None if version is None else str(version),
        [results_path] + [sp for _, sp in parts],
        metric=chosen,
        extra={
            "task": task,
            "id_scheme": "lm-eval:doc-sha256",
            "metrics_available": available,
            "results_file": str(results_path),
            "samples_file": str(parts[0][1]) if not group else None,
            "subtasks": [sub for sub, _ in parts] if group else None,
        },
    )
    run_id = f"lmeval-{slug(task)}-{slug(model_name.rsplit('/', 1)[-1], 24)}-{prov['fingerprint'][:8]}"
    config: RunConfig = {
        "dataset": task,
        "task": task,
        "split": first_config.get("test_split"),
        "source": [HARNESS],
        "model": f"{cfg.get('model', '?')}:{model_name}",
        "model_name": model_name,
        "model_args": cfg.get("model_args"),
        "harness_config": {k: v for k, v in cfg.items() if k != "model_args"},
        "task_config": task_config,
        "task_version": (results.get("versions") or {}).get(task),
        "n_shot": (results.get("n-shot") or {}).get(task),
        "params": gen_kwargs,
        "scorer": chosen,
        "epochs": 1,
        "n_items": len(samples),
        "item_ids": [s["item_id"] for s in samples],
        "imported": prov,
    }
    return ImportedRun(run_id=run_id, config=config, samples=samples, reported=reported)


def _shared_metric_names(read: _Rows) -> list[str]:
    """``metric,filter`` names logged in every part, in the first part's order."""
    per_part: list[list[str]] = []
    for _, _, rows in read:
        names: list[str] = []
        for _, row in rows:
            for m in row["metrics"]:
                name = f"{m},{row.get('filter', 'none')}"
                if name not in names:
                    names.append(name)
        per_part.append(names)
    return [n for n in per_part[0] if all(n in other for other in per_part[1:])]


def _task_results(results: dict[str, Any], results_path: Path, task: str, chosen: str, group: bool) -> dict[str, Any]:
    """The task's entry of the results file (a single task's must exist and report ``chosen``)."""
    task_results = (results.get("results") or {}).get(task)
    if not group:
        if not isinstance(task_results, dict):
            raise EvalcoreError(
                f"no entry for task {task!r} in the results", path=results_path, field=f"results.{task}"
            )
        if chosen not in task_results:
            raise EvalcoreError(
                f"the results file reports no {chosen!r} for task {task!r} (it "
                f"has {', '.join(k for k in task_results if k != 'alias')})",
                path=results_path,
                field=f"results.{task}.{chosen}",
            )
    return task_results if isinstance(task_results, dict) else {}


def _row_scores(row: dict[str, Any], samples_path: Path, lineno: int, chosen: str) -> dict[str, float]:
    """A sample line's numeric metric values by ``metric,filter`` (text that is no number refused for ``chosen``)."""
    scores: dict[str, float] = {}
    flt = row.get("filter", "none")
    for m in row["metrics"]:
        if m not in row:
            raise EvalcoreError(
                f"metric {m!r} is listed in 'metrics' but has no value", path=samples_path, line=lineno, field=m
            )
        value = row[m]
        if isinstance(value, str):
            # lm-eval logs numbers; a numpy bool comes out as "True"/"False". Any other
            # text ("yes", "C") is not lm-eval's and used to count as a wrong score.
            number = _number_text(value)
            if number is None:
                if f"{m},{flt}" == chosen:
                    raise EvalcoreError(
                        f"metric value {value!r} (doc_id {row['doc_id']!r}) is not a number; "
                        "lm-eval logs per-sample metric values as numbers",
                        path=samples_path,
                        line=lineno,
                        field=m,
                    )
                continue  # another metric, not imported as a score
            value = number
        if isinstance(value, (int, float, bool)):
            scores[f"{m},{flt}"] = score_value(value, path=samples_path, line=lineno, name=m)
    return scores


def _picked_rows(sub: str, samples_path: Path, rows: list[tuple[int, dict[str, Any]]], chosen: str) -> list[_Picked]:
    """One part's lines that log ``chosen`` (one a doc_id), each with every score of its document."""
    m_name, _, m_filter = chosen.partition(",")
    by_doc: dict[Any, tuple[int, dict[str, Any]]] = {}
    all_scores: dict[Any, dict[str, float]] = defaultdict(dict)
    for lineno, row in rows:
        doc_id = row["doc_id"]
        flt = row.get("filter", "none")
        all_scores[doc_id].update(_row_scores(row, samples_path, lineno, chosen))
        if flt == m_filter and m_name in row["metrics"]:
            if doc_id in by_doc:
                raise EvalcoreError(
                    f"doc_id {doc_id!r} appears twice for filter {flt!r} (first on line {by_doc[doc_id][0]})",
                    path=samples_path,
                    line=lineno,
                    field="doc_id",
                )
            by_doc[doc_id] = (lineno, row)
    if not by_doc:
        raise EvalcoreError(f"no sample line logs {chosen!r}", path=samples_path, field="metrics")
    return [(sub, samples_path, lineno, row, all_scores[doc_id]) for doc_id, (lineno, row) in by_doc.items()]


def _sample_records(
    picked: list[_Picked],
    task: str,
    group: bool,
    chosen: str,
    m_filter: str,
    gen_kwargs: dict[str, Any],
    model_name: str,
) -> list[SampleRecord]:
    """The run's sample records; an item id from the document's hash (made unique where documents repeat)."""
    hashes = [doc_hash(row["doc"]) for _, _, _, row, _ in picked]
    counts: dict[str, int] = defaultdict(int)
    for h in hashes:
        counts[h] += 1
    samples: list[SampleRecord] = []
    for (sub, samples_path, line, row, scores_of_doc), h in zip(picked, hashes):
        d = row["doc_id"]
        item_id = f"doc:{h[:16]}"
        if counts[h] > 1:  # identical documents: subtask and doc_id tell them apart
            item_id += f"#{sub}:{d}" if group else f"#{d}"
        question, q_field = question_of(row["doc"])
        request = {"arguments": row.get("arguments"), "params": gen_kwargs}
        scores = dict(scores_of_doc)
        scores["score"] = scores_of_doc[chosen]
        meta = {
            "doc_id": d,
            "doc_hash": h,
            "content_key": content_key(question),
            "query": question,
            "question_field": q_field,
            "filter": m_filter,
            "source_line": line,
        }
        if group:
            meta.update(subtask=sub, subject=sub, source_file=samples_path.name)
        samples.append(
            {
                "item_id": item_id,
                "epoch": 0,
                "dataset": task,
                "request": request,
                "request_hash": row.get("prompt_hash") or request_hash(request),
                "completion": {
                    "text": lm_eval_reply_text(row["filtered_resps"]),
                    "raw": row.get("resps"),
                    "usage": {},
                    "cost_usd": 0.0,
                    "latency_s": 0.0,
                    "model": model_name,
                    "error": None,
                },
                "scores": scores,
                "reference": row.get("target"),
                "metadata": meta,
                "item": row["doc"],
                "error": False,
            }
        )
    return samples
