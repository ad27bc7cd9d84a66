"""The append-only run store: ``config.json``, ``samples.jsonl``, ``results.json``.

The one place that knows the run-directory format (file names, the sample record's required
keys), reads and writes it (atomic JSON, the samples writer, the reader that tolerates a torn
last line), locks a run against a second writer, and holds the run-wide context flag. It sits
at the bottom of the package, beside ``_io``: ``runs`` writes through it, and ``models``
(replay), ``routing`` (outcome matrices from runs), ``imports``, ``reporting`` and the judge
read through it, so none of them imports ``runs``.
"""

from __future__ import annotations

import contextvars
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Required, TypedDict, cast

from evalcore import _io
from evalcore.errors import EvalcoreError

CONFIG_FILE = "config.json"
SAMPLES_FILE = "samples.jsonl"
RESULTS_FILE = "results.json"
LOCK_FILE = ".lock"


class SampleRecord(TypedDict, total=False):
    """One line of ``samples.jsonl`` (docs/runs.md; the reader checks :data:`REQUIRED_KEYS`).

    ``request`` is what was asked (evalcore's own runs: ``messages``, ``params`` and, for
    the likelihood ``choice_mode``, ``mode``; an imported log keeps its harness's request), ``completion``
    a :class:`~evalcore.models.Completion` as a dict (``text``, ``usage``, ``cost_usd``,
    ``latency_s``, ``model``, ``error``, ``retries``), ``scores`` the verdict with the extracted
    answer and how it was extracted (the writers always write a dict; the reader also accepts
    ``null``, which no evalcore since the run store began writes). ``run_id`` is set on every
    record written (an import adds it when it writes the run).
    """

    run_id: str
    item_id: Required[str | int]
    epoch: Required[int]
    dataset: Required[str]
    request: Required[dict[str, Any]]
    request_hash: Required[str]
    completion: Required[dict[str, Any]]
    scores: Required[dict[str, Any]]
    error: Required[bool]
    reference: Any
    metadata: dict[str, Any]
    item: dict[str, Any]
    few_shot_ids: list[str]
    cached: bool


class RunConfig(TypedDict, total=False):
    """``config.json`` of a run (docs/runs.md). Every key is optional to the readers: a run of
    evalcore writes all of the first group (:func:`evalcore.runs._config.run_config`), an
    imported log the ones its harness knows plus ``imported`` and its own (``task``, ...), and
    runs written by older versions lack the newer keys (``price``, ``code_timeout_s``,
    ``benchmark``, ``few_shot_pool``) and hold ``mmlu_mode`` for ``choice_mode``
    (:func:`upgrade_config` renames it when a run is read)."""

    run_id: str
    dataset: str
    split: str | None
    source: list[str]
    model: str
    model_name: str
    model_options: dict[str, Any]
    endpoint: str
    priced: bool | None
    price: Any
    limit: int | None
    seed: int
    epochs: int
    epoch_seed_rule: str
    concurrency: int
    params: dict[str, Any]
    prompt: dict[str, Any]
    few_shot: int
    few_shot_pool: dict[str, Any] | None
    choice_mode: str | None
    scorer: str
    code_timeout_s: float | None
    item_ids: list[str | int]
    n_items: int
    dataset_fingerprint: str
    versions: dict[str, str | None]
    git_revision: str | None
    created_utc: str
    resumed_utc: str
    command: list[str] | None
    benchmark: dict[str, Any]
    cache: str | None
    # imported runs (evalcore import): provenance and the harness's own settings
    imported: dict[str, Any]
    task: str
    model_base_url: str | None
    model_args: Any
    task_args: Any
    task_dataset: dict[str, Any]
    task_config: Any
    task_version: Any
    harness_config: dict[str, Any]
    eval_config: Any
    model_usage: Any
    n_shot: Any


RENAMED_CONFIG_KEYS = {"mmlu_mode": "choice_mode"}
"""Keys of ``config.json`` that older versions wrote under another name: old name -> new name."""


def upgrade_config(config: dict[str, Any]) -> dict[str, Any]:
    """``config`` with the keys older versions wrote renamed (:data:`RENAMED_CONFIG_KEYS`).

    A run written before issue 40 records ``mmlu_mode``; read, it has ``choice_mode`` with the
    same value in the same place, so it resumes, compares and prints like a new run.
    A config that holds both names keeps the new one and drops the old.

    Args:
        config: A ``config.json`` as read.

    Returns:
        A new mapping, keys in their recorded order.
    """
    return {
        RENAMED_CONFIG_KEYS.get(key, key): value
        for key, value in config.items()
        if not (key in RENAMED_CONFIG_KEYS and RENAMED_CONFIG_KEYS[key] in config)
    }


IN_BENCHMARK: contextvars.ContextVar[bool] = contextvars.ContextVar("evalcore_in_benchmark", default=False)
"""True while a benchmark run executes (an LLM judge refuses to work inside one)."""


def is_run_dir(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a run directory (it holds a ``samples.jsonl``)."""
    return (Path(path) / SAMPLES_FILE).is_file()


def lock_run(path: Path) -> Any:
    """Hold an exclusive lock on the run directory while this process writes it.

    Two processes appending to one ``samples.jsonl`` would ask the same items twice; the lock
    (``flock`` on ``.lock``, released by the kernel even after ``kill -9``) refuses the second.

    Returns:
        The open lock file; closing it releases the lock.

    Raises:
        EvalcoreError: Another process holds the lock.
    """
    import fcntl

    f = open(path / LOCK_FILE, "a+")
    try:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        f.close()
        raise EvalcoreError(
            "another process is writing this run; wait for it or use another --run-id", path=path, field="run_id"
        ) from exc
    return f


REQUIRED_KEYS = ("run_id", "item_id", "epoch", "dataset", "request", "request_hash", "completion", "scores", "error")


def write_run_json(path: str | os.PathLike[str], obj: Any) -> None:
    """Write a run file (``config.json``, ``results.json``): the run store's settings for the
    one atomic JSON writer, :func:`evalcore._io.write_json_atomic`.

    Non-finite floats become ``null`` so the file stays strict JSON; the file is fsynced
    before the rename (a temporary file and ``os.replace``: never half-written).

    Args:
        path: Destination.
        obj: JSON-serializable data.
    """
    _io.write_json_atomic(
        path, _io.to_json_native(obj), fsync=True, mkdir=False, indent=2, ensure_ascii=False, allow_nan=False
    )


@dataclass
class SamplesFile:
    """What :func:`read_samples` found.

    Attributes:
        records: Valid records in file order (duplicates of ``(item_id, epoch)`` included).
        good_bytes: Length of the valid prefix of the file.
        torn: Whether a torn last line was found (and is not in ``records``).
        lines: The 1-based line of each record in ``records`` (for messages about a record).
    """

    records: list[SampleRecord]
    good_bytes: int
    torn: bool
    lines: list[int] = field(default_factory=list)


def _bad_field(rec: dict[str, Any]) -> str | None:
    """The first required key whose value has a type no writer gives it, or None."""
    epoch = rec["epoch"]
    if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 0:
        return "epoch"
    if isinstance(rec["item_id"], bool) or not isinstance(rec["item_id"], (str, int)):
        return "item_id"
    if not isinstance(rec["completion"], dict):
        return "completion"
    if rec["scores"] is not None and not isinstance(rec["scores"], dict):
        return "scores"
    return None


def read_samples(path: str | os.PathLike[str]) -> SamplesFile:
    """Read ``samples.jsonl``, detecting a torn last line.

    A last line that is unterminated or not valid JSON is what an interrupted append leaves;
    it is reported as torn and left out. An invalid line anywhere else is corruption.

    Args:
        path: The samples file.

    Returns:
        The records, their line numbers and the length of the valid prefix.

    Raises:
        EvalcoreError: A line other than the last is not a valid sample record.
    """
    path = Path(path)
    if not path.exists():
        return SamplesFile([], 0, False)
    data = path.read_bytes()
    records: list[SampleRecord] = []
    record_lines: list[int] = []
    offset = 0
    lines = data.split(b"\n")
    # After the final "\n" split() yields b"" — a complete file; anything else is unterminated.
    for i, raw in enumerate(lines):
        is_last = i == len(lines) - 1
        if is_last and raw == b"":
            break
        terminated = not is_last
        try:
            rec = json.loads(raw.decode("utf-8")) if raw.strip() else None
        except (UnicodeDecodeError, json.JSONDecodeError):
            rec = None
        tail = is_last or (i == len(lines) - 2 and lines[-1] == b"")
        if rec is None or not terminated:
            if tail:
                return SamplesFile(records, offset, True, record_lines)
            if not raw.strip():
                offset += len(raw) + 1
                continue
            raise EvalcoreError("not a valid JSON sample record (corrupted run store)", path=path, line=i + 1)
        if not isinstance(rec, dict) or any(k not in rec for k in REQUIRED_KEYS):
            missing = [k for k in REQUIRED_KEYS if not isinstance(rec, dict) or k not in rec]
            raise EvalcoreError("sample record lacks required keys", path=path, line=i + 1, field=",".join(missing))
        bad = _bad_field(rec)
        if bad is not None:
            raise EvalcoreError(f"wrong type: {rec[bad]!r} (corrupted run store)", path=path, line=i + 1, field=bad)
        records.append(cast(SampleRecord, rec))  # its required keys and their types checked above
        record_lines.append(i + 1)
        offset += len(raw) + 1
    return SamplesFile(records, offset, False, record_lines)


def latest_records(records: Iterable[SampleRecord]) -> list[SampleRecord]:
    """One record per ``(item_id, epoch)``: the last one written (a retried error supersedes).

    Args:
        records: Records in file order.

    Returns:
        Records in order of first appearance of their key.
    """
    out: dict[tuple[str, int], SampleRecord] = {}
    for rec in records:
        out[(str(rec["item_id"]), int(rec["epoch"]))] = rec
    return list(out.values())


class SampleWriter:
    """Appends sample records to ``samples.jsonl``: one ``write`` + ``fsync`` per line.

    On open, a torn last line (left by a killed process) is cut off first, so an appended
    record never joins a fragment.

    Args:
        path: The samples file (created if missing).
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        found = read_samples(self.path)
        self.repaired = found.torn
        if found.torn:
            with open(self.path, "r+b") as f:
                f.truncate(found.good_bytes)
                f.flush()
                os.fsync(f.fileno())
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)  # less the umask

    def write(self, record: SampleRecord) -> None:
        """Append one record durably."""
        text = _io.json_text(_io.to_json_native(record), ensure_ascii=False, allow_nan=False)
        line = (text + "\n").encode()
        view = memoryview(line)
        start = os.lseek(self._fd, 0, os.SEEK_END)
        try:
            while view:
                n = os.write(self._fd, view)
                view = view[n:]
            os.fsync(self._fd)
        except OSError as exc:
            # a full disk mid-line: cut the fragment off (the file keeps whole records only) and
            # name the file in the error
            try:
                os.ftruncate(self._fd, start)
            except OSError:
                pass  # the next open cuts a torn last line off anyway
            if exc.filename is None:
                exc.filename = str(self.path)
            raise

    def close(self) -> None:
        """Close the file."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> SampleWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class Run:
    """A recorded run.

    Attributes:
        path: The run directory.
        config: ``config.json``.
        results: ``results.json`` ({} when the run never finished).
        samples: One record per ``(item_id, epoch)``.
        torn: Whether a torn last line was dropped on load.
    """

    path: Path
    config: RunConfig
    results: dict[str, Any]
    samples: list[SampleRecord] = field(default_factory=list)
    torn: bool = False

    @property
    def run_id(self) -> str:
        """The run id."""
        return str(self.config.get("run_id", self.path.name))

    def frame(self) -> Any:
        """One row per sample as a pandas DataFrame.

        Columns: ``item_id, epoch, score, strict, flexible, error, error_type, latency_s,
        cost_usd, prompt_tokens, completion_tokens, retries, cached, request_hash``, the other
        scores (``extracted_flexible``, ``passed``, ...), ``reference`` and metadata fields
        (``subject`` for MMLU).
        """
        import pandas as pd

        rows = []
        for s in self.samples:
            comp = s.get("completion") or {}
            usage = comp.get("usage") or {}
            err = comp.get("error") or {}
            row: dict[str, Any] = {
                "item_id": s["item_id"],
                "epoch": int(s["epoch"]),
                "dataset": s.get("dataset"),
                "error": bool(s.get("error")),
                "error_type": err.get("type") if err else None,
                "latency_s": float(comp.get("latency_s", 0.0)),
                "cost_usd": float(comp.get("cost_usd", 0.0)),
                "prompt_tokens": int(usage.get("prompt_tokens", 0)),
                "completion_tokens": int(usage.get("completion_tokens", 0)),
                "retries": int(comp.get("retries", 0)),
                "cached": bool(s.get("cached", False)),
                "request_hash": s.get("request_hash"),
                "response": comp.get("text", ""),
                "reference": s.get("reference"),
            }
            for k, v in (s.get("scores") or {}).items():
                if not isinstance(v, (dict, list)):
                    row.setdefault(k, v)
            for k, v in (s.get("metadata") or {}).items():
                if isinstance(v, (str, int, float, bool)) or v is None:
                    row.setdefault(k, v)
            rows.append(row)
        cols = ["item_id", "epoch", "score", "strict", "flexible", "error"]
        df = pd.DataFrame(rows)
        for c in cols:
            if c not in df.columns:
                df[c] = pd.Series(dtype=float)
        return df[cols + [c for c in df.columns if c not in cols]]


def load_run(path: str | os.PathLike[str]) -> Run:
    """Load a run directory.

    Args:
        path: ``DIR/<run_id>``.

    Returns:
        The :class:`Run` (a torn last line is dropped, duplicates resolved to the latest).

    Raises:
        EvalcoreError: Not a run directory, or a corrupted file.
    """
    path = Path(path)
    cfg_path = path / CONFIG_FILE
    if not cfg_path.is_file():
        raise EvalcoreError("not a run directory (no config.json)", path=path)

    def _load(p: Path) -> dict[str, Any]:
        data = _io.read_json(p)
        if not isinstance(data, dict):
            raise EvalcoreError("expected a JSON object", path=p)
        return data

    config = upgrade_config(_load(cfg_path))
    results = _load(path / RESULTS_FILE) if (path / RESULTS_FILE).is_file() else {}
    found = read_samples(path / SAMPLES_FILE)
    return Run(
        path=path,
        config=cast(RunConfig, config),
        results=results,
        samples=latest_records(found.records),
        torn=found.torn,
    )
