"""The libraries pyproject declares for evalcore are the ones evalcore uses (issue 32 item 6):
seaborn draws the figures; statsmodels, which computes nothing evalcore reports, is a test
dependency (the reference the statistics are checked against)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import evalcore

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = Path(evalcore.__file__).resolve().parent


def _names(requirements):
    return {re.split(r"[<>=!~\[; ]", r, maxsplit=1)[0].lower() for r in requirements}


def _imports(module: str) -> list[str]:
    pattern = re.compile(rf"^\s*(import|from)\s+{module}\b", re.M)
    return sorted(str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py") if pattern.search(p.read_text("utf-8")))


def test_statsmodels_is_a_test_dependency_and_evalcore_never_imports_it():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    assert "statsmodels" not in _names(project["dependencies"])
    assert "statsmodels" in _names(project["optional-dependencies"]["test"])
    assert _imports("statsmodels") == []


def test_seaborn_is_declared_and_draws_the_figures():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    assert "seaborn" in _names(project["dependencies"])
    assert {
        "reporting/_benchmark_views.py",
        "routing/_plots.py",
        "agent_eval/_output.py",
        "agent_eval/_sweep.py",
    } <= set(_imports("seaborn"))
