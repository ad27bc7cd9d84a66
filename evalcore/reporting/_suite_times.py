"""How long each notebook of a suite is expected to take, the basis of the suite's estimate of the
time left (:mod:`evalcore.reporting._notebook_progress`).

Two parts per notebook: its *execution* (kernel start to the last cell, ``duration_s`` in
``suite.json``) and its *finishing* (stderr moved out of the notebook, HTML and PDF export,
records: ``finish_s``, recorded since issue 39). Where they come from, first found:

1. **This machine's history**: every earlier suite run in the report folder made from the same
   suite file with the same smoke values (up to :data:`HISTORY_RUNS`, newest first; partial and
   interrupted runs count too), each notebook's median of its newest :data:`MEASUREMENTS`
   measured times (ok or failed).
2. **Times stored in the repository** per parameter set, beside the suite file
   (``params/suite.times.yaml``): a ``full`` section for the suite as it is and a ``smoke``
   section for the smoke values whose SHA-256 it names (other smoke values: none).

A notebook found in neither has no expected time (the suite's estimate is then unknown).
"""

from __future__ import annotations

import hashlib
import json
import statistics
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalcore._io import to_json_native
from evalcore.errors import EvalcoreError

TIMES_SUFFIX = ".times.yaml"
"""Beside a suite file, its notebooks' measured durations per parameter set
(``params/suite.times.yaml``)."""

HISTORY_RUNS = 20
"""Earlier suite runs read for their measured durations (the newest)."""

MEASUREMENTS = 3
"""A notebook's expected time is the median of its newest this many measurements: one run on a
busy machine can be 30% off the next (the routing notebook: 536 s and 414 s in two runs made at
the same time, tests/reporting/data/)."""

DEFAULT_FINISH_S = 2.0
"""A notebook's finishing (HTML, PDF) where nothing was measured: about 1-2 s on a quiet 2-core
machine (docs/notebooks.md)."""


@dataclass
class Expected:
    """Expected seconds per notebook name.

    Attributes:
        run: Execution (kernel start to the last cell).
        finish: Finishing after it (stderr moved out, HTML, PDF, records).
        source: Where they come from, as a progress line names it ("" when nothing is known).
    """

    run: dict[str, float] = field(default_factory=dict)
    finish: dict[str, float] = field(default_factory=dict)
    source: str = ""

    def finish_of(self, name: str) -> float | None:
        """The finishing of ``name`` (:data:`DEFAULT_FINISH_S` when only its execution is
        known; None when nothing is)."""
        if name not in self.run:
            return None
        return self.finish.get(name, DEFAULT_FINISH_S)


def smoke_fingerprint(smoke: Mapping[str, Any] | None) -> str | None:
    """SHA-256 of smoke values (their JSON, keys sorted); None without smoke values."""
    if not smoke:
        return None
    native = to_json_native({str(k): dict(v) for k, v in smoke.items()}, strict=True)
    return hashlib.sha256(json.dumps(native, sort_keys=True).encode("utf-8")).hexdigest()


def _number(value: Any) -> float | None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0
    return float(value) if ok else None


def measured_history(output: Path, suite_path: Path, smoke: Mapping[str, Any] | None) -> Expected:
    """Each notebook's newest measured times in the earlier suite runs under ``output`` made from
    ``suite_path`` with the same smoke values (see the module docstring).

    Args:
        output: The report folder (``reports``).
        suite_path: The suite file.
        smoke: The smoke values of this run.

    Returns:
        The times found (empty when none).
    """
    want_smoke = to_json_native({str(k): dict(v) for k, v in smoke.items()}, strict=True) if smoke else None
    want_suite = str(Path(suite_path).resolve())
    try:
        folders = sorted(
            (p for p in Path(output).iterdir() if p.is_dir() and not p.is_symlink() and (p / "suite.json").is_file()),
            key=lambda p: p.name,
            reverse=True,
        )[:HISTORY_RUNS]
    except OSError:
        return Expected()
    runs_of: dict[str, list[float]] = {}
    finishes_of: dict[str, list[float]] = {}
    used: list[str] = []
    for folder in folders:
        try:
            manifest = json.loads((folder / "suite.json").read_text(encoding="utf-8"))
            meta, runs = manifest.get("meta") or {}, list(manifest.get("runs") or [])
        except (OSError, ValueError, AttributeError, TypeError):
            continue
        if (meta.get("smoke") or None) != want_smoke or meta.get("suite", want_suite) != want_suite:
            continue
        took = False
        for r in runs:
            name, run_s = (r.get("name"), _number(r.get("duration_s"))) if isinstance(r, dict) else (None, None)
            if not isinstance(name, str) or r.get("status") not in ("ok", "failed") or run_s is None:
                continue
            if len(runs_of.setdefault(name, [])) < MEASUREMENTS:
                runs_of[name].append(run_s)
                took = True
                finish_s = _number(r.get("finish_s"))
                if finish_s is not None:
                    finishes_of.setdefault(name, []).append(finish_s)
        if took:
            used.append(str(meta.get("id") or folder.name))
    found = Expected(
        {name: statistics.median(values) for name, values in runs_of.items()},
        {name: statistics.median(values) for name, values in finishes_of.items()},
    )
    if used:
        found.source = f"the run of {used[0]}" if len(used) == 1 else f"{len(used)} earlier runs here"
    return found


def stored_times(suite_path: Path, smoke: Mapping[str, Any] | None) -> Expected:
    """The times stored beside the suite file for this parameter set (see the module docstring).

    Args:
        suite_path: The suite file.
        smoke: The smoke values of this run.

    Returns:
        The times (empty when there is no file, no section for these values, or it is malformed).
    """
    path = Path(suite_path).with_name(Path(suite_path).stem + TIMES_SUFFIX)
    if not path.is_file():
        return Expected()
    try:
        from evalcore._yaml import read_yaml

        data = read_yaml(path).data or {}
        section = data.get("smoke" if smoke else "full")
        if not isinstance(section, dict) or (smoke and section.get("smoke_sha256") != smoke_fingerprint(smoke)):
            return Expected()
        run = {str(k): v for k, v in (section.get("run_s") or {}).items() if _number(v) is not None}
        finish_raw = section.get("finish_s")
        if isinstance(finish_raw, dict):
            finish = {str(k): v for k, v in finish_raw.items() if _number(v) is not None}
        else:
            finish = {name: finish_raw for name in run} if _number(finish_raw) is not None else {}
    except (EvalcoreError, AttributeError, TypeError, ValueError):
        return Expected()
    measured = str(section.get("measured") or "here")
    return Expected(
        {k: float(v) for k, v in run.items()},
        {k: float(v) for k, v in finish.items()},
        f"times measured {measured} ({path.name})" if run else "",
    )


def expected_durations(output: Path, suite_path: Path, smoke: Mapping[str, Any] | None) -> Expected:
    """How long each notebook is expected to take, for the estimate of the time left: this
    machine's history first, the stored times for the notebooks it has not measured.

    Args:
        output: The report folder.
        suite_path: The suite file.
        smoke: The smoke values of this run.

    Returns:
        The :class:`Expected` times and where they come from.
    """
    history = measured_history(output, suite_path, smoke)
    stored = stored_times(suite_path, smoke)
    if not history.run:
        return stored
    missing = [name for name in stored.run if name not in history.run]
    source = history.source
    if missing:
        source += f" and {Path(suite_path).stem + TIMES_SUFFIX}"
    # a run recorded before finish_s was: its finishing from the stored times
    return Expected({**stored.run, **history.run}, {**stored.finish, **history.finish}, source)
