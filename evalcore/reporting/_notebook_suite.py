"""Reading and checking a notebook-suite file (``params/suite.yaml``) before anything runs.

A *notebook suite* is the batch of parameterized notebooks that papermill executes
(``evalcore notebooks run``); it is not the agent evaluation (:mod:`evalcore.agent_eval`).

Shape::

    runs:
      - name: benchmark_gsm8k              # unique: output folder, --only, smoke.yaml key
        notebook: notebooks/benchmark.ipynb  # relative to the repository root
        params: params/gsm8k.yaml           # optional YAML mapping of notebook parameters
        overrides: {seed: 1}                # optional mapping merged over the params file

``runs`` is the only top-level key: another one (a typo such as ``rnus:``) is refused with its
line. In string parameter values ``{suite_dir}`` becomes the suite run's report folder and
``{root}`` the repository root. Every parameter must exist in the notebook's ``parameters``
cell (checked with ``papermill.inspect_notebook``; papermill itself only warns).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalcore._io import not_a_file_reason
from evalcore._yaml import read_yaml
from evalcore.errors import EvalcoreError

__all__ = [
    "NotebookEntry",
    "check_parameters",
    "find_root",
    "load_params_file",
    "load_smoke",
    "load_notebook_suite",
    "project_path",
    "smoke_overrides",
    "substitute",
    "with_dependencies",
]

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_ENTRY_KEYS = {"name", "notebook", "params", "overrides"}
_SUITE_KEYS = {"runs"}


@dataclass
class NotebookEntry:
    """One notebook run of a suite.

    Attributes:
        name: Unique name; the run's output folder is ``<suite dir>/<name>/``.
        notebook: Absolute path of the notebook to execute.
        params_file: The parameter file, if any.
        params: Parameters after merging the file, the overrides and smoke values
            (``{suite_dir}``/``{root}`` markers not yet substituted).
        line: Line of the entry in the suite file.
        sources: For each parameter, the ``(file, line)`` it came from, for error messages.
    """

    name: str
    notebook: Path
    params_file: Path | None
    params: dict[str, Any]
    line: int | None = None
    sources: dict[str, tuple[str, int | None]] = field(default_factory=dict)


def find_root(start: str | os.PathLike[str]) -> Path:
    """Return the repository root above ``start``: the nearest folder with ``pyproject.toml``
    or ``.git``; ``start``'s own folder when there is none.

    Args:
        start: A file or folder inside the repository.

    Returns:
        The root folder (absolute).
    """
    here = Path(start).resolve()
    folder = here if here.is_dir() else here.parent
    for candidate in (folder, *folder.parents):
        if (candidate / "pyproject.toml").exists() or (candidate / ".git").exists():
            return candidate
    return folder


def project_path(path: str | os.PathLike[str]) -> Path:
    """Resolve a notebook parameter path against the repository root.

    A notebook runs with the repository root as working directory under the suite runner but
    with its own folder (``notebooks/``) in JupyterLab; resolving relative paths against the
    root (:func:`find_root` of the working directory) makes both read and write the same
    place. Absolute paths are returned unchanged.

    Args:
        path: A path from a notebook parameter.

    Returns:
        The absolute path.
    """
    candidate = Path(path).expanduser()
    if candidate.is_absolute():
        return candidate
    return find_root(Path.cwd()) / candidate


def load_params_file(path: str | os.PathLike[str]) -> tuple[dict[str, Any], dict[str, int]]:
    """Read a parameter file: a YAML mapping of parameter name to value.

    Args:
        path: The YAML file.

    Returns:
        The parameters and the line of each key.

    Raises:
        EvalcoreError: The file is missing, malformed, or not a mapping with string keys.
    """
    path = Path(path)
    doc = read_yaml(path)
    data = doc.data
    if data is None:
        return {}, {}
    if not isinstance(data, dict):
        raise EvalcoreError("a parameter file must be a mapping of name: value", path=path, line=1)
    lines = doc.key_lines()
    for key in data:
        if not isinstance(key, str) or not key.isidentifier():
            raise EvalcoreError(
                "parameter names must be Python identifiers", path=path, line=lines.get(str(key)), field=str(key)
            )
    return dict(data), lines


def load_smoke(path: str | os.PathLike[str]) -> dict[str, dict[str, Any]]:
    """Read ``params/smoke.yaml``: run name or notebook file name -> parameter overrides.

    Args:
        path: The smoke file.

    Returns:
        The mapping (empty for an empty file).

    Raises:
        EvalcoreError: The file is malformed or a value is not a mapping.
    """
    path = Path(path)
    doc = read_yaml(path)
    data = doc.data
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise EvalcoreError("smoke file must map run or notebook names to parameters", path=path, line=1)
    lines = doc.key_lines()
    for key, value in data.items():
        if not isinstance(value, dict):
            raise EvalcoreError(
                "value must be a mapping of parameter: value", path=path, line=lines.get(str(key)), field=str(key)
            )
    return {str(k): dict(v) for k, v in data.items()}


def smoke_overrides(smoke: Mapping[str, Mapping[str, Any]], name: str, notebook: Path) -> dict[str, Any]:
    """Return the smoke values for one run: notebook-name values, then run-name values on top.

    Args:
        smoke: The smoke mapping (see :func:`load_smoke`).
        name: The suite run's name.
        notebook: The run's notebook path.

    Returns:
        The merged overrides.
    """
    merged: dict[str, Any] = {}
    merged.update(smoke.get(notebook.name, {}))
    merged.update(smoke.get(notebook.stem, {}))
    merged.update(smoke.get(name, {}))
    return merged


def substitute(value: Any, mapping: Mapping[str, str]) -> Any:
    """Replace ``{key}`` markers in every string inside ``value``.

    Only the given keys are replaced (plain text replacement, so other braces, e.g. a prompt
    template's ``{question}``, are left alone).

    Args:
        value: A parameter value (nested lists and dicts are walked).
        mapping: Marker name -> replacement.

    Returns:
        The value with the markers replaced.
    """
    if isinstance(value, str):
        for key, replacement in mapping.items():
            value = value.replace("{" + key + "}", replacement)
        return value
    if isinstance(value, list):
        return [substitute(v, mapping) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, mapping) for k, v in value.items()}
    return value


def load_notebook_suite(
    path: str | os.PathLike[str],
    *,
    root: str | os.PathLike[str] | None = None,
    smoke: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[NotebookEntry]:
    """Read a suite file and check every entry (notebook exists, parameter file parses).

    Args:
        path: The suite YAML.
        root: Folder relative paths are resolved from; :func:`find_root` of the suite file
            when ``None``.
        smoke: Optional smoke overrides (see :func:`load_smoke`) merged over each entry.

    Returns:
        The entries in order.

    Raises:
        EvalcoreError: The file is malformed or has a top-level key other than ``runs``, an
            entry lacks a field or names a missing file (or a folder), or two entries share a
            name.
    """
    path = Path(path)
    doc = read_yaml(path, what="suite file")
    data = doc.data
    base = Path(root).resolve() if root is not None else find_root(path)
    if not isinstance(data, dict) or "runs" not in data:
        raise EvalcoreError("a suite file must be a mapping with a 'runs' list", path=path, line=1, field="runs")
    unknown_top = sorted(set(map(str, data)) - _SUITE_KEYS)
    if unknown_top:  # a typo next to 'runs:' would otherwise be ignored without a word
        raise EvalcoreError(
            f"unknown top-level key (allowed: {', '.join(sorted(_SUITE_KEYS))})",
            path=path,
            line=doc.key_lines().get(unknown_top[0], 1),
            field=unknown_top[0],
        )
    runs = data["runs"]
    if not isinstance(runs, list) or not runs:
        raise EvalcoreError("'runs' must be a non-empty list", path=path, line=doc.line("runs"), field="runs")
    entries: list[NotebookEntry] = []
    seen: dict[str, int | None] = {}
    for index, raw in enumerate(runs):
        entries.append(_read_entry(doc, path, base, index, raw, seen, smoke))
    return entries


def _read_entry(
    doc: Any,
    path: Path,
    base: Path,
    index: int,
    raw: Any,
    seen: dict[str, int | None],
    smoke: Mapping[str, Mapping[str, Any]] | None,
) -> NotebookEntry:
    """Check and read entry ``index`` of a suite file (``seen``: names so far -> their line)."""
    line = doc.line("runs", index)
    keys = doc.key_lines("runs", index)
    if not isinstance(raw, dict):
        raise EvalcoreError("each run must be a mapping with name, notebook, params", path=path, line=line)
    unknown = sorted(set(map(str, raw)) - _ENTRY_KEYS)
    if unknown:
        raise EvalcoreError(
            f"unknown key (allowed: {', '.join(sorted(_ENTRY_KEYS))})",
            path=path,
            line=keys.get(unknown[0], line),
            field=unknown[0],
        )
    for required in ("name", "notebook"):
        if not isinstance(raw.get(required), str) or not raw[required].strip():
            raise EvalcoreError(
                f"missing or empty '{required}'", path=path, line=keys.get(required, line), field=required
            )
    name = raw["name"].strip()
    if not _NAME.match(name):
        raise EvalcoreError(
            "name may hold only letters, digits, '.', '_' and '-'", path=path, line=keys.get("name", line), field="name"
        )
    if name in seen:
        raise EvalcoreError(
            f"duplicate run name (first at line {seen[name]})", path=path, line=keys.get("name", line), field="name"
        )
    seen[name] = keys.get("name", line)
    notebook = (base / raw["notebook"]).resolve()
    if not notebook.is_file():
        raise EvalcoreError(
            f"{not_a_file_reason(notebook, 'notebook')}: {notebook}",
            path=path,
            line=keys.get("notebook", line),
            field="notebook",
        )
    if notebook.suffix != ".ipynb":
        raise EvalcoreError(
            "notebook must be an .ipynb file", path=path, line=keys.get("notebook", line), field="notebook"
        )
    params, sources, params_file = _entry_params(doc, path, base, index, raw)
    if smoke:
        extra = smoke_overrides(smoke, name, notebook)
        params.update(extra)
        sources.update({k: ("smoke values", None) for k in extra})
    return NotebookEntry(name, notebook, params_file, params, line, sources)


def _entry_params(
    doc: Any, path: Path, base: Path, index: int, raw: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, tuple[str, int | None]], Path | None]:
    """An entry's parameters (its params file, then its overrides), where each came from (file,
    line) and the params file."""
    line = doc.line("runs", index)
    keys = doc.key_lines("runs", index)
    params: dict[str, Any] = {}
    sources: dict[str, tuple[str, int | None]] = {}
    params_file: Path | None = None
    if raw.get("params") is not None:
        if not isinstance(raw["params"], str):
            raise EvalcoreError(
                "params must be a path to a YAML file", path=path, line=keys.get("params", line), field="params"
            )
        params_file = (base / raw["params"]).resolve()
        if not params_file.is_file():
            raise EvalcoreError(
                f"{not_a_file_reason(params_file, 'parameter file')}: {params_file}",
                path=path,
                line=keys.get("params", line),
                field="params",
            )
        values, value_lines = load_params_file(params_file)
        params.update(values)
        sources.update({k: (str(params_file), value_lines.get(k)) for k in values})
    overrides = raw.get("overrides")
    if overrides is not None:
        if not isinstance(overrides, dict):
            raise EvalcoreError(
                "overrides must be a mapping", path=path, line=keys.get("overrides", line), field="overrides"
            )
        over_lines = doc.key_lines("runs", index, "overrides")
        params.update({str(k): v for k, v in overrides.items()})
        sources.update({str(k): (str(path), over_lines.get(str(k), line)) for k in overrides})
    return params, sources, params_file


def check_parameters(entry: NotebookEntry) -> dict[str, Any]:
    """Check that every parameter of ``entry`` exists in its notebook's ``parameters`` cell.

    Args:
        entry: A suite entry.

    Returns:
        ``papermill.inspect_notebook``'s description of the notebook's parameters.

    Raises:
        EvalcoreError: A parameter is unknown (naming the file and line it came from), or the
            notebook has no cell tagged ``parameters`` while parameters are given.
    """
    import papermill as pm

    try:
        declared = pm.inspect_notebook(str(entry.notebook))
    except Exception as exc:  # papermill/nbformat raise several types for unreadable notebooks
        raise EvalcoreError(f"cannot inspect notebook: {exc}", path=entry.notebook) from exc
    unknown = [k for k in entry.params if k not in declared]
    if unknown:
        first = unknown[0]
        where, line = entry.sources.get(first, (None, None))
        known = ", ".join(sorted(declared)) or "none: the notebook has no cell tagged 'parameters'"
        raise EvalcoreError(
            f"unknown parameter for {entry.notebook.name} (run '{entry.name}'); known parameters: {known}",
            path=where if where != "smoke values" else None,
            line=line,
            field=first,
        )
    return declared


# Parameters that name what an entry itself writes, not what it reads.
_OWN_OUTPUT_KEYS = ("run_dir", "run_id", "output_dir")


def _suite_strings(value: Any) -> list[str]:
    """Every string inside ``value`` that names a place in the suite folder (``{suite_dir}``)."""
    if isinstance(value, str):
        return [value.rstrip("/")] if "{suite_dir}" in value else []
    if isinstance(value, list):
        return [s for v in value for s in _suite_strings(v)]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _suite_strings(v)]
    return []


def _writes(entry: NotebookEntry) -> list[str]:
    """The suite-folder paths an entry writes: ``run_dir/run_id`` (a benchmark run), else
    ``run_dir``, then ``output_dir`` and the entry's own folder ``{suite_dir}/<name>``."""
    params = entry.params
    run_dir, run_id = params.get("run_dir"), params.get("run_id")
    paths: list[str] = [f"{{suite_dir}}/{entry.name}"]
    if isinstance(run_dir, str) and "{suite_dir}" in run_dir:
        paths.append(f"{run_dir.rstrip('/')}/{run_id}" if isinstance(run_id, str) and run_id else run_dir.rstrip("/"))
    paths.extend(_suite_strings(params.get("output_dir")))
    return paths


def _reads(entry: NotebookEntry) -> list[str]:
    """The suite-folder paths an entry's other parameters name (e.g. the runs a comparison reads)."""
    return [s for key, value in entry.params.items() if key not in _OWN_OUTPUT_KEYS for s in _suite_strings(value)]


def with_dependencies(
    entries: list[NotebookEntry], only: list[str] | tuple[str, ...]
) -> tuple[list[NotebookEntry], dict[str, list[str]]]:
    """Select the entries named in ``only`` and every entry they read from (``--only``).

    An entry depends on another when one of its parameters names a path in the suite folder
    (``{suite_dir}/...``) that the other writes: its benchmark run ``run_dir/run_id`` (e.g.
    ``compare_mmlu_modes`` reads ``{suite_dir}/runs/mmlu``, which ``benchmark_mmlu`` writes),
    its ``run_dir`` when it has no ``run_id``, its ``output_dir`` or its own folder
    ``{suite_dir}/<name>``, or a path below one of those. Dependencies of dependencies are
    followed. The suite folder itself (e.g. ``reuse_dir: "{suite_dir}"``) is no dependency.

    Args:
        entries: The suite's entries in file order (names already checked to exist).
        only: The names asked for.

    Returns:
        The selected entries in suite-file order, and for each entry added as a dependency the
        names of the selected entries that read from it.
    """
    writes = {e.name: _writes(e) for e in entries}
    by_name = {e.name: e for e in entries}
    selected: list[str] = list(dict.fromkeys(only))
    added: dict[str, list[str]] = {}
    queue = list(selected)
    while queue:
        reader = by_name[queue.pop(0)]
        for path in _reads(reader):
            for writer, places in writes.items():
                if writer == reader.name or not any(path == p or path.startswith(p + "/") for p in places):
                    continue
                if writer not in selected:
                    selected.append(writer)
                    queue.append(writer)
                if writer in added and reader.name not in added[writer]:
                    added[writer].append(reader.name)
                elif writer not in only and writer not in added:
                    added[writer] = [reader.name]
    chosen = set(selected)
    return [e for e in entries if e.name in chosen], added
