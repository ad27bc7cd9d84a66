"""What every importer shares: content keys, the imported run record, the atomic run writer."""

from __future__ import annotations

import contextlib
import contextvars
import datetime as _dt
import hashlib
import json
import os
import re
import shutil
import tempfile
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalcore._io import to_json_native
from evalcore._runstore import RunConfig, SampleRecord
from evalcore.errors import EvalcoreError

#: Bumped when the layout of an imported run changes (part of the import fingerprint).
IMPORT_FORMAT = 1

# Fields that hold the question of a document, tried in this order (lm-eval docs, inspect
# metadata, evalcore items).
QUESTION_FIELDS = ("question", "problem", "query", "prompt", "input", "text")

_WS = re.compile(r"\s+")
_SLUG = re.compile(r"[^A-Za-z0-9._-]+")


def normalise_question(text: str) -> str:
    """The form of a question that content alignment hashes.

    Unicode NFKC, case-folded, every run of whitespace made one space, stripped. Two harnesses
    that show a model the same question with different line wrapping or capitalisation get the
    same key; anything else (another number, another word) gives another key.

    Args:
        text: The question as a harness recorded it.

    Returns:
        The normalised text.
    """
    return _WS.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def content_key(text: str | None) -> str | None:
    """``q:<sha256(normalise_question(text))[:16]>``, or None for a missing or empty question."""
    if not isinstance(text, str) or not text.strip():
        return None
    digest = hashlib.sha256(normalise_question(text).encode("utf-8")).hexdigest()[:16]
    return f"q:{digest}"


def question_of(doc: Any) -> tuple[str | None, str | None]:
    """The question text of a document and the field it came from.

    Args:
        doc: A mapping (lm-eval ``doc``, inspect metadata, evalcore ``item``) or a string.

    Returns:
        ``(text, field)``; ``(None, None)`` when no question field is found.
    """
    if isinstance(doc, str):
        return doc, "input"
    if isinstance(doc, dict):
        for name in QUESTION_FIELDS:
            value = doc.get(name)
            if isinstance(value, str) and value.strip():
                return value, name
    return None, None


def doc_hash(doc: Any) -> str:
    """sha256 of a document's canonical JSON (sorted keys): the same doc, the same hash.

    Computed by evalcore rather than taken from the log, so logs of different lm-eval versions
    (which hash with different JSON settings, or not at all) align.
    """
    text = json.dumps(doc, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def file_sha256(path: Path) -> str:
    """sha256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def slug(text: str, length: int = 40) -> str:
    """A run-id-safe fragment of ``text``."""
    out = _SLUG.sub("-", text).strip("-.") or "x"
    return out[:length].rstrip("-.")


def request_hash(request: Any) -> str:
    """sha256 of a request's canonical JSON."""
    text = json.dumps(request, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def score_value(value: Any, *, path: Path | str, line: int | None, name: str) -> float:
    """A per-item score as a float: numbers kept, booleans 0/1, inspect's C/I/P/N mapped.

    Inspect's letter values map as its own ``value_to_float`` does: C (correct) → 1, I
    (incorrect) → 0, P (partial) → 0.5, N (no answer) → 0. ``"yes"``/``"true"`` → 1 and
    ``"no"``/``"false"`` → 0, as there too.

    Args:
        value: The recorded value.
        path: Log file (for the error message).
        line: Line or sample number (for the error message).
        name: The metric or scorer name.

    Returns:
        The score.

    Raises:
        EvalcoreError: A value that is not a number or a known letter.
    """
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        v = float(value)
        if v != v or v in (float("inf"), float("-inf")):
            raise EvalcoreError(f"score {value!r} is not finite", path=path, line=line, field=name)
        return v
    if isinstance(value, str):
        letters = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}
        text = value.strip()
        if text in letters:
            return letters[text]
        lowered = text.lower()
        if lowered in ("yes", "true"):
            return 1.0
        if lowered in ("no", "false"):
            return 0.0
        try:
            return score_value(float(text), path=path, line=line, name=name)
        except ValueError:
            pass
    raise EvalcoreError(f"score {value!r} is neither a number nor one of C, I, P, N", path=path, line=line, field=name)


@dataclass
class ImportedRun:
    """An imported log, ready to be written as a run directory.

    Attributes:
        run_id: The run id.
        config: ``config.json`` (without ``run_id``, which the writer sets).
        samples: One sample record per (item, epoch), without ``run_id``.
        reported: What the harness itself reported for the chosen metric (its own summary).
    """

    run_id: str
    config: RunConfig
    samples: list[SampleRecord]
    reported: dict[str, Any] = field(default_factory=dict)


def provenance(
    harness: str, version: str | None, files: Iterable[Path], *, metric: str, extra: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The read-only ``imported`` section of an imported run's config.

    Args:
        harness: ``lm-evaluation-harness`` or ``inspect_ai``.
        version: The harness version that wrote the log.
        files: The log files read.
        metric: The metric whose values became ``scores.score``.
        extra: More fields.

    Returns:
        A JSON-native dict with a ``fingerprint`` over the files' contents and the metric.
    """
    listed = [{"path": str(Path(p).resolve()), "sha256": file_sha256(Path(p))} for p in files]
    basis = json.dumps(
        {"files": sorted(f["sha256"] for f in listed), "metric": metric, "format": IMPORT_FORMAT}, sort_keys=True
    )
    out: dict[str, Any] = {
        "harness": harness,
        "harness_version": version,
        "files": listed,
        "metric": metric,
        "fingerprint": hashlib.sha256(basis.encode()).hexdigest(),
        "import_format": IMPORT_FORMAT,
        "read_only": True,
        "note": "imported from another harness's log: provenance only, not resumable; re-import the log to change it",
    }
    out.update(extra or {})
    return out


class ImportBatch:
    """The run directories one command imports, put in place all together or not at all.

    While a batch is open (:func:`import_batch`), :func:`write_run` writes each new run into a
    hidden staging folder beside its target (``<run_dir>/.evalcore-import-*``) instead of the
    target itself. When the whole batch succeeds, the staged runs are renamed into place; when
    anything fails (a malformed later log, ``compare`` refusing runs that share no items) the
    staging folders are removed, and the import folder itself when the batch made it, so the
    import folder holds nothing new; an older import that a staged run would replace stays as
    it was.
    """

    def __init__(self) -> None:
        self.staging: dict[Path, Path] = {}  # run_dir (resolved) → its staging folder
        self.staged: dict[Path, Path] = {}  # staged run directory → final run directory
        self.created: list[Path] = []  # folders made for run_dir that did not exist
        self.committed = False

    def stage_dir(self, parent: Path) -> Path:
        """The staging folder of ``parent`` (made, with ``parent``, on first use)."""
        missing = []
        p = parent.absolute()
        while not p.exists():
            missing.append(p)
            p = p.parent
        parent.mkdir(parents=True, exist_ok=True)
        self.created.extend(missing)  # deepest first
        key = parent.resolve()
        if key not in self.staging:
            self.staging[key] = Path(tempfile.mkdtemp(dir=parent, prefix=".evalcore-import-"))
        return self.staging[key]

    def final_path(self, path: str | os.PathLike[str]) -> Path:
        """Where a run directory ends up once the batch is in place (itself when not staged)."""
        p = Path(path)
        return self.staged.get(p, p)

    def commit(self) -> None:
        """Rename every staged run into place (replacing an older import of the same id)."""
        placed: list[Path] = []
        replaced: list[tuple[Path, Path]] = []  # (target, its old copy)
        try:
            for staged, target in self.staged.items():
                if target.exists():
                    old = target.parent / f".{target.name}.{os.getpid()}.replaced"
                    os.replace(target, old)
                    replaced.append((target, old))
                os.replace(staged, target)
                placed.append(target)
        except BaseException:
            for target in placed:
                shutil.rmtree(target, ignore_errors=True)
            for target, old in replaced:
                with contextlib.suppress(OSError):
                    os.replace(old, target)
            self.rollback()
            raise
        for _, old in replaced:
            shutil.rmtree(old, ignore_errors=True)
        for folder in self.staging.values():
            shutil.rmtree(folder, ignore_errors=True)
        self.committed = True

    def rollback(self) -> None:
        """Remove the staging folders and the folders the batch created (when left empty)."""
        for folder in self.staging.values():
            shutil.rmtree(folder, ignore_errors=True)
        for folder in self.created:
            with contextlib.suppress(OSError):
                folder.rmdir()  # only when empty: never what someone else wrote there


_BATCH: contextvars.ContextVar[ImportBatch | None] = contextvars.ContextVar("evalcore_import_batch", default=None)


@contextlib.contextmanager
def import_batch() -> Iterator[ImportBatch]:
    """Make every :func:`write_run` inside the block one all-or-nothing batch.

    The runs written in the block live in staging folders until the block ends; they are
    renamed into place when it ends normally and removed when it raises. A block inside another
    joins the outer batch (the outer one decides). Paths returned inside the block are the
    staged ones; map them with :meth:`ImportBatch.final_path` after the block.

    Yields:
        The batch.
    """
    outer = _BATCH.get()
    if outer is not None:
        yield outer
        return
    batch = ImportBatch()
    token = _BATCH.set(batch)
    try:
        yield batch
    except BaseException:
        batch.rollback()
        raise
    finally:
        _BATCH.reset(token)
    batch.commit()


def write_run(imported: ImportedRun, run_dir: str | os.PathLike[str], *, reuse: bool = True) -> Path:
    """Write an imported run as ``run_dir/<run_id>`` (config, samples, results), all or nothing.

    Everything is written into a temporary folder beside the target and renamed into place
    when complete, so a failure leaves no run directory behind. An existing run directory with
    the same import fingerprint is reused as it is; one with another fingerprint is replaced.
    Inside :func:`import_batch` the run goes to the batch's staging folder instead, and the
    staged path is returned (renamed into place when the batch succeeds).

    Args:
        imported: The run.
        run_dir: Parent folder.
        reuse: Keep an existing directory with the same fingerprint.

    Returns:
        The run directory.
    """
    from evalcore import __version__
    from evalcore._runstore import CONFIG_FILE, RESULTS_FILE, SAMPLES_FILE
    from evalcore.runs import summarize

    parent = Path(run_dir)
    target = parent / imported.run_id
    fingerprint = imported.config["imported"]["fingerprint"]
    if reuse and (target / CONFIG_FILE).is_file() and (target / RESULTS_FILE).is_file():
        try:
            old = json.loads((target / CONFIG_FILE).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            old = {}
        if (old.get("imported") or {}).get("fingerprint") == fingerprint:
            return target
    if target.exists() and not (target / CONFIG_FILE).is_file():
        raise EvalcoreError("exists but is not a run directory (no config.json); choose another --run-dir", path=target)
    batch = _BATCH.get()
    final = target
    if batch is not None:
        stage = batch.stage_dir(parent)
        staged = stage / imported.run_id
        if reuse and staged in batch.staged and fingerprint == _fingerprint_of(staged):
            return staged  # the same log twice in one command
        parent, target = stage, staged
    else:
        parent.mkdir(parents=True, exist_ok=True)
    records: list[SampleRecord] = [{"run_id": imported.run_id, **s} for s in imported.samples]
    config: RunConfig = {"run_id": imported.run_id, **imported.config}
    config.setdefault("versions", {})["evalcore"] = __version__
    config["created_utc"] = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    from evalcore.benchmarks import benchmark_names

    dataset = str(config.get("dataset"))
    # an lm-eval task named gsm8k is not scored by evalcore's gsm8k rules: no parse-failure
    # rate or pass@k computed from fields the harness never wrote
    results = summarize(
        records, "imported" if dataset in benchmark_names() else dataset, epochs=int(config.get("epochs", 1))
    )
    results["dataset"] = dataset
    results["run_id"] = imported.run_id
    results["metric"] = config["imported"]["metric"]
    results["reported_by_harness"] = imported.reported
    tmp = Path(tempfile.mkdtemp(dir=parent, prefix=f".{imported.run_id}.", suffix=".importing"))
    try:
        (tmp / CONFIG_FILE).write_text(
            json.dumps(to_json_native(config), indent=2, ensure_ascii=False, allow_nan=False) + "\n", encoding="utf-8"
        )
        with open(tmp / SAMPLES_FILE, "w", encoding="utf-8") as f:
            for rec in records:
                try:  # records read from JSON are native already; convert only what is not
                    line = json.dumps(rec, ensure_ascii=False, allow_nan=False)
                except (TypeError, ValueError):
                    line = json.dumps(to_json_native(rec), ensure_ascii=False, allow_nan=False)
                f.write(line + "\n")
        (tmp / RESULTS_FILE).write_text(
            json.dumps(to_json_native(results), indent=2, ensure_ascii=False, allow_nan=False) + "\n", encoding="utf-8"
        )
        os.chmod(tmp, 0o755)
        if target.exists():  # an older import of the same id (never in a staging folder)
            old = parent / f".{imported.run_id}.{os.getpid()}.replaced"
            os.replace(target, old)
            os.replace(tmp, target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if batch is not None:
        batch.staged[target] = final
    return target


def _fingerprint_of(run: Path) -> str | None:
    try:
        config = json.loads((run / "config.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    return (config.get("imported") or {}).get("fingerprint")
