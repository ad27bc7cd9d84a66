"""The one registry of benchmarks: every other package asks it, none compares names.

The built-in benchmarks are registered by their folder's module path and imported on first use
(so the CLI can list them without importing anything heavy); :func:`register` adds another one
(a fourth benchmark is one folder plus one line: here for a built-in, an entry point of the
``evalcore.benchmarks`` group for an installed package, or a ``register`` call), and a user's
own benchmark is one YAML file, loaded by :func:`get_benchmark` when given its path.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalcore.errors import EvalcoreError

if TYPE_CHECKING:
    from evalcore.benchmarks._protocol import Benchmark

_BUILTIN: dict[str, str] = {
    "gsm8k": "evalcore.benchmarks.gsm8k",
    "mmlu": "evalcore.benchmarks.mmlu",
    "humaneval": "evalcore.benchmarks.humaneval",
}
"""Built-in name -> the folder (package) whose ``BENCHMARK`` it is (imported on first use): one
line a benchmark."""
ENTRY_POINT_GROUP = "evalcore.benchmarks"
"""An installed package adds benchmarks as entry points of this group: ``name = "pkg.folder"`` (the
folder's ``BENCHMARK``) or ``name = "pkg.module:OBJECT"``; imported on first use, like a built-in."""
_PLUGINS: dict[str, str] | None = None
"""Entry-point name -> its value, read once per process (:func:`refresh_plugins` reads again)."""
_REGISTERED: dict[str, Any] = {}
"""Benchmarks registered at run time (:func:`register`), and user YAML benchmarks once loaded."""
YAML_SUFFIXES = (".yaml", ".yml")


def register(benchmark: Benchmark, *, replace: bool = False) -> Benchmark:
    """Make ``benchmark`` known by its name to runs, rescoring, routing and reporting.

    Args:
        benchmark: An object implementing :class:`~evalcore.benchmarks.Benchmark`.
        replace: Replace a registered benchmark of the same name (a built-in never is).

    Returns:
        ``benchmark``.

    Raises:
        EvalcoreError: Not a benchmark, or its name is taken.
    """
    from evalcore.benchmarks._protocol import SCORERS, Benchmark

    name = getattr(benchmark, "name", None)
    if not isinstance(benchmark, Benchmark) or not isinstance(name, str) or not name:
        raise EvalcoreError(f"not a Benchmark (name, scorer, load, score ...): {benchmark!r}", field="benchmark")
    if benchmark.scorer not in SCORERS:
        raise EvalcoreError(f"scorer must be one of {list(SCORERS)}, got {benchmark.scorer!r}", field="scorer")
    if name in _BUILTIN:
        raise EvalcoreError(f"{name!r} is a built-in benchmark; choose another name", field="name")
    if name in _REGISTERED and not replace and _REGISTERED[name] is not benchmark:
        raise EvalcoreError(f"a benchmark named {name!r} is registered already", field="name")
    _REGISTERED[name] = benchmark
    return benchmark


def unregister(name: str) -> None:
    """Forget a benchmark added by :func:`register` (built-ins stay)."""
    _REGISTERED.pop(name, None)


def _plugins() -> dict[str, str]:
    """The benchmarks installed packages declare (entry points of :data:`ENTRY_POINT_GROUP`)."""
    global _PLUGINS
    if _PLUGINS is None:
        from importlib.metadata import entry_points

        _PLUGINS = {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name not in _BUILTIN}
    return _PLUGINS


def refresh_plugins() -> tuple[str, ...]:
    """Read the installed entry points again (a package installed since); their names."""
    global _PLUGINS
    _PLUGINS = None
    return tuple(_plugins())


def _load_plugin(name: str) -> Benchmark:
    """Import an entry point's benchmark and register it under its name."""
    from importlib.metadata import EntryPoint

    value = _plugins()[name]
    try:
        found = EntryPoint(name=name, value=value, group=ENTRY_POINT_GROUP).load()
    except (ImportError, AttributeError) as exc:
        raise EvalcoreError(
            f"the benchmark {name!r} of entry point {value!r} cannot be imported: {exc}", field="benchmark"
        ) from None
    bench = getattr(found, "BENCHMARK", found)
    if getattr(bench, "name", None) != name:
        raise EvalcoreError(
            f"entry point {name!r} ({value}) names a benchmark called {getattr(bench, 'name', None)!r}",
            field="benchmark",
        )
    return register(bench)


def benchmark_names() -> tuple[str, ...]:
    """The built-in benchmarks' names, then those of installed packages, then the registered ones."""
    names = list(_BUILTIN) + [n for n in _plugins() if n not in _BUILTIN]
    return tuple(names) + tuple(n for n in _REGISTERED if n not in names)


def builtin_names() -> tuple[str, ...]:
    """The built-in benchmarks' names."""
    return tuple(_BUILTIN)


def default_max_tokens() -> dict[str, int]:
    """Name -> default completion token limit of each built-in (``--max-tokens`` help)."""
    return {name: find_benchmark(name).default_max_tokens for name in _BUILTIN}  # type: ignore[union-attr]


def is_benchmark_file(name: str | os.PathLike[str]) -> bool:
    """Whether ``name`` names a YAML file (a user's own benchmark) rather than a benchmark."""
    return isinstance(name, os.PathLike) or str(name).lower().endswith(YAML_SUFFIXES)


def find_benchmark(name: Any) -> Benchmark | None:
    """The benchmark registered as ``name``, or None (an imported harness task, say)."""
    if not isinstance(name, str):
        return None
    if name in _BUILTIN:
        return importlib.import_module(_BUILTIN[name]).BENCHMARK
    if name not in _REGISTERED and name in _plugins():
        return _load_plugin(name)
    return _REGISTERED.get(name)


def get_benchmark(name: str | os.PathLike[str] | Benchmark) -> Benchmark:
    """The benchmark ``name`` names: a registered name, or a YAML file of a user's own benchmark.

    Args:
        name: A benchmark name (``gsm8k``), a path ending ``.yaml``/``.yml``, or a benchmark.

    Returns:
        The benchmark (a YAML file's is registered under its name for this process).

    Raises:
        EvalcoreError: An unknown name, or a YAML file that is not a valid benchmark (naming
            the file, line and field).
    """
    from evalcore.benchmarks._protocol import Benchmark

    if not isinstance(name, (str, os.PathLike)) and isinstance(name, Benchmark):
        return name
    if is_benchmark_file(name):
        from evalcore.benchmarks._file import load_benchmark_file

        bench = load_benchmark_file(Path(name))
        register(bench, replace=True)
        return bench
    found = find_benchmark(name)
    if found is None:
        raise EvalcoreError(
            f"unknown dataset {name!r}; choose one of {list(benchmark_names())} or give a benchmark YAML file",
            field="dataset",
        )
    return found


def benchmark_of_run(config: Mapping[str, Any]) -> Benchmark | None:
    """The benchmark a recorded run was scored with (from its ``config.json``).

    A user benchmark is rebuilt from what the run recorded (``config["benchmark"]``: its
    scorer and settings), so a run rescored or compared elsewhere needs no YAML or data file;
    a built-in (also a run imported from a harness task of that name) is found by
    ``config["dataset"]``.

    Returns:
        The benchmark, or None (a dataset no benchmark is registered for).
    """
    spec = config.get("benchmark")
    if isinstance(spec, Mapping) and spec.get("kind") == "file":
        from evalcore.benchmarks._file import FileBenchmark

        bench = FileBenchmark.from_config(spec)
        current = _REGISTERED.get(bench.name)
        if current is None or getattr(current, "to_config", lambda: None)() != bench.to_config():
            register(bench, replace=True)
        return bench
    return find_benchmark(config.get("dataset"))
