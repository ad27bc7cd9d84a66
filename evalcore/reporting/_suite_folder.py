"""A notebook-suite run's folder (``reports/<suite-run-id>/``): what each notebook's run gave
(:class:`EntryResult`, the rows of ``suite.json``), the run's id, the ``latest`` and
``latest-partial`` links, and the run to resume and its manifest.

:mod:`evalcore.reporting._notebooks` (the runner) re-exports these names.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalcore.errors import EvalcoreError

__all__ = ["EntryResult", "NotebookSuiteResult", "find_suite_dir", "is_full_and_complete", "new_suite_id"]


@dataclass
class EntryResult:
    """The outcome of one notebook run.

    Attributes:
        name: The suite entry's name.
        notebook: The source notebook (relative to the root where possible).
        status: ``"ok"``, ``"failed"``, ``"pending"``, ``"running"`` or ``"interrupted"``.
        duration_s: Wall time of the execution.
        finish_s: Wall time of what followed it (stderr moved out, HTML, PDF, records).
        params: The parameters it ran with.
        executed: The executed notebook (relative to the suite folder), if written.
        html: The HTML export, if made.
        pdf: The PDF, if made.
        figures: The PNG files.
        records: The recorded numbers.
        error: For a failed run, the exception (type: message).
        messages: Notes, e.g. why no PDF was made.
    """

    name: str
    notebook: str
    status: str = "pending"
    duration_s: float | None = None
    finish_s: float | None = None
    params: dict[str, Any] = field(default_factory=dict)
    executed: str | None = None
    html: str | None = None
    pdf: str | None = None
    figures: list[str] = field(default_factory=list)
    records: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    messages: list[str] = field(default_factory=list)


@dataclass
class NotebookSuiteResult:
    """The outcome of a suite run.

    Attributes:
        suite_dir: ``<output>/<suite-run-id>``.
        results: One :class:`EntryResult` per executed entry, in order.
        index: The ``index.html`` path.
    """

    suite_dir: Path
    results: list[EntryResult]
    index: Path

    @property
    def ok(self) -> bool:
        """True when every notebook ran to its end."""
        return all(r.status == "ok" for r in self.results)

    @property
    def failed(self) -> list[str]:
        """Names of the runs that failed."""
        return [r.name for r in self.results if r.status != "ok"]


def new_suite_id(output: Path) -> str:
    """Return a fresh suite-run id: the UTC time ``YYYYmmddTHHMMSSZ`` (``-2``… if taken)."""
    stamp = _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    candidate, n = stamp, 1
    while (output / candidate).exists():
        n += 1
        candidate = f"{stamp}-{n}"
    return candidate


LATEST = "latest"
LATEST_PARTIAL = "latest-partial"


def _update_latest(output: Path, suite_id: str | None, name: str = LATEST) -> bool:
    """Point ``output/<name>`` at ``suite_id`` (atomically; ``None`` removes the link); False
    when ``<name>`` is a real file or folder, which is left alone."""
    link = output / name
    if link.exists() and not link.is_symlink():
        return False
    if suite_id is None:
        link.unlink(missing_ok=True)
        return True
    tmp = output / f".{name}.{os.getpid()}"
    tmp.unlink(missing_ok=True)
    os.symlink(suite_id, tmp)
    os.replace(tmp, link)
    return True


def _link_target(output: Path, name: str) -> str | None:
    """The suite id ``output/<name>`` points at (``None``: no link, or not a link)."""
    link = output / name
    return os.readlink(link) if link.is_symlink() else None


def is_full_and_complete(results: Sequence[EntryResult], n_entries: int) -> bool:
    """True when a suite run is a complete run of the whole suite file: every entry of the file
    was run (``--only`` naming fewer makes it partial) and every notebook finished (``ok`` or ``failed``; none pending,
    running or interrupted). Only such a run becomes ``reports/latest``; others are partial
    (``reports/latest-partial``)."""
    return len(results) == n_entries and all(r.status in {"ok", "failed"} for r in results)


def find_suite_dir(output: str | os.PathLike[str], suite_id: str | None = None) -> Path:
    """The suite run folder to resume.

    Args:
        output: The report folder (``reports``).
        suite_id: A suite-run id (``reports/<id>``), a path to a suite run folder, or
            ``None``/``"latest"`` for the newest suite run folder (by id) in ``output``.

    Returns:
        The folder (it holds a ``suite.json``).

    Raises:
        EvalcoreError: No such suite run, or none to resume.
    """
    out = Path(output)
    if suite_id and suite_id != "latest":
        for candidate in (out / suite_id, Path(suite_id)):
            if (candidate / "suite.json").is_file():
                return candidate.resolve()
        raise EvalcoreError(
            f"no suite run {suite_id!r} to resume (no suite.json there)", path=out / suite_id, field="resume"
        )
    found = sorted(
        (p for p in out.glob("*") if not p.is_symlink() and (p / "suite.json").is_file()), key=lambda p: p.name
    )
    if not found:
        raise EvalcoreError("no suite run to resume in this folder", path=out, field="resume")
    return found[-1].resolve()


def _load_manifest(suite_dir: Path) -> tuple[dict[str, Any], dict[str, EntryResult]]:
    path = suite_dir / "suite.json"
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
        meta = dict(manifest.get("meta", {}))
        runs = {run["name"]: EntryResult(**run) for run in manifest["runs"]}
    except (OSError, json.JSONDecodeError, KeyError, TypeError) as exc:
        raise EvalcoreError(f"not a suite manifest: {exc}", path=path) from exc
    return meta, runs
