"""Notebook records: publish key numbers once, read them back from many executed notebooks.

``record(name, value)`` displays the value under the custom mimetype
``application/vnd.evalcore.record+json`` (with a ``text/plain`` fallback, so the number is
visible in JupyterLab and in the HTML export) and merges it into a sidecar JSON file.
``collect(paths)`` reads the records back (from the notebook outputs, falling back to the
sidecar) and joins them with the notebook's papermill parameters.
"""

from __future__ import annotations

import fcntl
import functools
import json
import os
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from evalcore._io import read_json, to_json_native, write_json_atomic
from evalcore.errors import EvalcoreError

RECORD_MIMETYPE = "application/vnd.evalcore.record+json"
RECORD_DIR_ENV = "EVALCORE_RECORD_DIR"
RECORDS_FILENAME = "records.json"

__all__ = [
    "RECORDS_FILENAME",
    "RECORD_DIR_ENV",
    "RECORD_MIMETYPE",
    "collect",
    "notebook_outputs",
    "notebook_parameters",
    "read_records",
    "read_sidecar",
    "record",
    "record_dir",
]


INTERACTIVE_DIR = Path("reports") / "interactive"
"""Where a notebook run in place in a repository (no suite) writes: ``<root>/reports/interactive/<stem>/``."""
MANUAL_RECORD_DIR = INTERACTIVE_DIR  # the old name (it was reports/notebooks/, shared by every notebook)
# Set by the suite runner for each notebook run: the folder of this suite run (reports/<id>).
SUITE_DIR_ENV = "EVALCORE_SUITE_DIR"
_NOTEBOOK: dict[str, str] = {}  # "name": the stem given to notebook_outputs()


def _repository_of(folder: Path) -> Path | None:
    """The repository root when ``folder`` is one or is its ``notebooks/`` folder, else None."""

    def is_root(p: Path) -> bool:
        return (p / "pyproject.toml").exists() or (p / ".git").exists()

    if is_root(folder):
        return folder
    if folder.name == "notebooks" and is_root(folder.parent):
        return folder.parent
    return None


def _notebook_stem() -> str:
    """This notebook's name: given to :func:`notebook_outputs`, else JupyterLab's session
    (``JPY_SESSION_NAME``, the notebook's path), else the papermill command line's input."""
    import re

    name = _NOTEBOOK.get("name") or Path(os.environ.get("JPY_SESSION_NAME", "")).stem
    if not name:
        paths = _papermill_paths()
        name = Path(paths[0]).stem if paths is not None and paths[0] else "notebook"
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "notebook"


def record_dir() -> Path:
    """Return the directory records and figures are written to.

    In order: ``$EVALCORE_RECORD_DIR`` (set by the suite runner for each notebook run); the
    folder of the output notebook when the kernel was started by the ``papermill`` command
    line (a notebook run by hand) unless that is a repository root or its ``notebooks/``; a
    notebook run in place in a repository (its working directory the root or ``notebooks/``:
    JupyterLab, papermill with ``cwd=notebooks/``) writes to its own folder
    ``reports/interactive/<notebook-stem>/`` under the root (:func:`notebook_outputs` names it
    and says where), so nothing is written into ``notebooks/`` or the root, and two notebooks
    never overwrite each other's records; elsewhere the working directory (JupyterLab: the
    notebook's folder).

    Returns:
        The folder (not created here).
    """
    env = os.environ.get(RECORD_DIR_ENV)
    if env:
        return Path(env)
    beside = _papermill_output_dir()
    if beside is not None and _repository_of(beside) is None:
        return beside
    cwd = Path.cwd()
    root = (_repository_of(beside) if beside is not None else None) or _repository_of(cwd)
    if root is not None:
        return root / INTERACTIVE_DIR / _notebook_stem()
    return cwd


def notebook_outputs(name: str) -> Path:
    """Name this notebook for its records and figures and say where they go.

    Each notebook calls it first. Under the notebook suite (``$EVALCORE_RECORD_DIR``) it only
    returns the suite's folder; run in place (JupyterLab, papermill from ``notebooks/``) it
    prints the folder, ``reports/interactive/<name>/``.

    Args:
        name: The notebook's stem, e.g. ``"benchmark"``.

    Returns:
        :func:`record_dir`.
    """
    _NOTEBOOK["name"] = str(name)
    folder = record_dir()
    if not os.environ.get(RECORD_DIR_ENV):
        interactive = folder.parent.name == INTERACTIVE_DIR.name and folder.parent.parent.name == "reports"
        shown = folder.relative_to(folder.parents[2]) if interactive else folder
        print(f"Records and figures of this notebook go to {shown.as_posix()}/")
    return folder


def reports_root() -> Path:
    """Return the folder that holds this run's reports and the earlier ones.

    What an evaluated agent must not read: earlier results record the seeds of their cases,
    their inputs and the expected answers. Under the suite runner it is the runner's output
    folder (``reports/``, the parent of ``$EVALCORE_SUITE_DIR``); a notebook run by hand at a
    repository root writes to ``reports/notebooks/`` and this is ``reports/``; otherwise it is
    :func:`record_dir` itself.

    Returns:
        The folder (not created here).
    """
    suite = os.environ.get(SUITE_DIR_ENV)
    if suite:
        return Path(suite).parent
    here = record_dir()
    if here.parent.name == INTERACTIVE_DIR.name and here.parent.parent.name == INTERACTIVE_DIR.parent.name:
        return here.parent.parent
    return here


def shared_agent_seed() -> int | None:
    """The case seed every agent notebook of this notebook-suite run shares (so the category
    pages and the overview run the same generated cases), or ``None`` outside a suite run.

    The suite runner passes it in ``EVALCORE_AGENT_SEED`` (never on a command line); it is
    removed from this process's environment as it is read, so an agent started afterwards does
    not inherit it. A second call returns ``None``.

    Returns:
        The seed, or ``None``.

    Raises:
        EvalcoreError: The variable holds no integer seed.
    """
    from evalcore.agent_eval import seed_from_sources

    seed, _source = seed_from_sources()
    return seed


def agent_seed_note(
    seed: int, source: str, shared: int | None, limit: int | None = None, combined: bool = False
) -> str:
    """The sentence an agent notebook shows about its case seed.

    Args:
        seed: The seed the cases were generated from.
        source: ``"drawn"`` (a fresh secret one for this run) or ``"given"``.
        shared: The notebook-suite run's shared seed (:func:`shared_agent_seed`), if any.
        limit: The notebook's cases per category, named when the seed is shared.
        combined: The overview combined the category notebooks' results (their cases, their counts).

    Returns:
        Markdown text.
    """
    if shared is not None and seed == shared and combined:
        return (
            f"Cases from seed {seed}: this notebook-suite run's seed, shared by every agent notebook; the "
            "results below are the category notebooks' own, so their tests and counts agree."
        )
    if shared is not None and seed == shared:
        per = f" (here at most {limit} per category" if limit else " (each at most its own `limit` per category"
        return (
            f"Cases from seed {seed}: this notebook-suite run's seed, shared by every agent notebook, so the "
            f"category pages and the overview evaluate the same generated cases{per}; a page with a smaller "
            "`limit` runs the first of the same cases, which is why its test counts can be lower)."
        )
    if source == "drawn":
        return f"Cases from seed {seed} (drawn for this run)."
    return f"Cases from seed {seed}."


def _papermill_output_dir() -> Path | None:
    """The output notebook's folder when this process is a kernel started by the papermill
    command line."""
    paths = _papermill_paths()
    return None if paths is None else paths[1].parent


@functools.lru_cache(maxsize=1)
def _papermill_paths() -> tuple[str, Path] | None:
    """The input notebook and the output notebook when this process is a kernel started by the
    papermill command line (read from the parent's command line, parsed by papermill's own
    parser)."""
    if "ipykernel" not in sys.modules or not os.path.isdir("/proc"):
        return None
    parent = os.getppid()
    try:
        argv = [a.decode("utf-8", "replace") for a in Path(f"/proc/{parent}/cmdline").read_bytes().split(b"\0") if a]
        parent_cwd = Path(os.readlink(f"/proc/{parent}/cwd"))
    except OSError:
        return None
    for position, arg in enumerate(argv[:3]):
        if Path(arg).name == "papermill":
            args = argv[position + 1 :]
            break
    else:
        return None
    try:
        from papermill.cli import papermill as command

        context = command.make_context("papermill", list(args), resilient_parsing=True)
    except Exception:  # noqa: BLE001 - an unexpected command line: fall back to the default
        return None
    output = context.params.get("output_path")
    if not output or output == "-" or "://" in str(output):
        return None
    path = Path(output).expanduser()
    return str(context.params.get("notebook_path") or ""), (path if path.is_absolute() else parent_cwd / path)


def _write_sidecar_json(path: Path, data: Any) -> None:
    """A sidecar file: the one atomic JSON writer (``_io.write_json_atomic``), strict JSON."""
    write_json_atomic(path, data, indent=2, sort_keys=False, allow_nan=False)


def _merge_sidecar(path: Path, updates: Mapping[str, Any]) -> dict[str, Any]:
    """Merge ``updates`` into the JSON object at ``path`` under an exclusive lock.

    The lock is taken on the sidecar's directory itself: nothing is left behind, and unlike a
    lock file removed after use, two writers can never hold locks on different files.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        current = read_sidecar(path) if path.exists() else {}
        current.update(updates)
        _write_sidecar_json(path, current)
    finally:
        os.close(fd)  # releases the lock
    return current


def _plain_text(name: str, value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    if len(text) > 400:
        text = text[:400] + " …"
    return f"{name} = {text}"


def record(name: str, value: Any) -> None:
    """Publish one named value of a notebook (a key number, a small table).

    In a notebook kernel the value is displayed under the mimetype
    ``application/vnd.evalcore.record+json`` (payload ``{"name": ..., "value": ...}``) with a
    ``text/plain`` fallback; in every case it is merged into ``records.json`` in
    :func:`record_dir` (atomically: a reader never sees a half-written file).

    Args:
        name: The record's name (a column of :func:`collect`'s DataFrame).
        value: A JSON-representable value; numpy and pandas values are converted.

    Raises:
        EvalcoreError: ``name`` is empty or the value cannot be represented in JSON.
    """
    if not isinstance(name, str) or not name.strip():
        raise EvalcoreError("record name must be a non-empty string", field="name")
    native = to_json_native(value, strict=True, path=name)
    _merge_sidecar(record_dir() / RECORDS_FILENAME, {name: native})
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:  # pragma: no cover - IPython comes with ipykernel
        return
    if get_ipython() is None:
        return
    display(
        {RECORD_MIMETYPE: {"name": name, "value": native}, "text/plain": _plain_text(name, native)},
        raw=True,
    )


def read_sidecar(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a sidecar ``records.json``.

    Args:
        path: The sidecar file.

    Returns:
        The mapping of record name to value.

    Raises:
        EvalcoreError: The file is missing or not a JSON object.
    """
    path = Path(path)
    try:
        data = read_json(path)
    except FileNotFoundError as exc:
        raise EvalcoreError("records file not found", path=path) from exc
    if not isinstance(data, dict):
        raise EvalcoreError("records file must hold a JSON object", path=path)
    return data


def _read_notebook(path: Path) -> Any:
    import nbformat

    try:
        return nbformat.read(path, as_version=4)
    except FileNotFoundError as exc:
        raise EvalcoreError("notebook not found", path=path) from exc
    except Exception as exc:  # nbformat raises several types for unreadable files
        raise EvalcoreError(f"not a readable notebook: {exc}", path=path) from exc


def read_records(notebook: str | os.PathLike[str]) -> dict[str, Any]:
    """Read the records of one executed notebook.

    Records are read from the outputs carrying the record mimetype (later outputs win); when
    a notebook has none, the sidecar ``records.json`` next to it (or ``<stem>.records.json``)
    is used.

    Args:
        notebook: Path of an executed ``.ipynb``.

    Returns:
        The mapping of record name to value (empty if the notebook recorded nothing).
    """
    path = Path(notebook)
    nb = _read_notebook(path)
    records: dict[str, Any] = {}
    for cell in nb.cells:
        if cell.get("cell_type") != "code":
            continue
        for output in cell.get("outputs", []):
            payload = output.get("data", {}).get(RECORD_MIMETYPE)
            if isinstance(payload, dict) and "name" in payload:
                records[str(payload["name"])] = payload.get("value")
    if records:
        return records
    for candidate in (path.with_name(f"{path.stem}.{RECORDS_FILENAME}"), path.with_name(RECORDS_FILENAME)):
        if candidate.exists():
            return read_sidecar(candidate)
    return {}


def notebook_parameters(notebook: str | os.PathLike[str]) -> dict[str, Any]:
    """Return the papermill parameters an executed notebook ran with.

    Args:
        notebook: Path of a notebook executed by papermill.

    Returns:
        ``metadata.papermill.parameters`` (empty if the notebook was not run by papermill).
    """
    nb = _read_notebook(Path(notebook))
    return dict(nb.metadata.get("papermill", {}).get("parameters", {}) or {})


def _expand(paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]]) -> list[Path]:
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    found: list[Path] = []
    for entry in paths:
        path = Path(entry)
        if path.is_dir():
            found.extend(p for p in sorted(path.rglob("*.ipynb")) if ".ipynb_checkpoints" not in p.parts)
        elif path.exists():
            found.append(path)
        else:
            raise EvalcoreError("no such notebook or directory", path=path)
    return found


def collect(paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]]) -> Any:
    """Turn many executed notebooks into one DataFrame of their records and parameters.

    One row per notebook: ``notebook`` (its path), ``status`` (``"ok"``, or ``"failed"`` when
    papermill marked an exception), ``params.<name>`` for each papermill parameter, and one
    column per record; dict-valued records are flattened to ``<record>.<key>`` columns.

    Args:
        paths: A notebook, a directory (searched recursively for ``*.ipynb``) or several.

    Returns:
        A ``pandas.DataFrame`` with one row per notebook.

    Raises:
        EvalcoreError: A path does not exist or is not a readable notebook.
    """
    import pandas as pd

    rows: list[dict[str, Any]] = []
    for path in _expand(paths):
        nb = _read_notebook(path)
        meta = nb.metadata.get("papermill", {}) or {}
        row: dict[str, Any] = {
            "notebook": str(path),
            "status": "failed" if meta.get("exception") else "ok",
        }
        for key, value in (meta.get("parameters") or {}).items():
            row[f"params.{key}"] = value if not isinstance(value, (list, dict)) else json.dumps(value)
        row.update(_flatten(read_records(path)))
        rows.append(row)
    return pd.DataFrame(rows)


def _flatten(records: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in records.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            flat.update(_flatten(value, prefix=f"{name}."))
        else:
            flat[name] = value
    return flat
