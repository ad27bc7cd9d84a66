"""`evalcore --help` and the light commands import no heavy library; public names stay importable.

Behaviour, not timing: each command runs in a fresh interpreter that reports which top-level
modules it imported. Heavy libraries are imported only where a command uses them (lazy package
``__init__`` re-exports, see :mod:`evalcore._lazy`).
"""

from __future__ import annotations

import gzip
import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

# Never imported by --help, --version or scoring an answers / samples file.
HEAVY = (
    "scipy",
    "pandas",
    "numpy",
    "matplotlib",
    "sklearn",
    "statsmodels",
    "seaborn",
    "papermill",
    "nbconvert",
    "nbformat",
    "openai",
    "httpx",
    "torch",
    "llama_cpp",
    "sentence_transformers",
    "rapidfuzz",
    "tqdm",
    "yaml",
)
PACKAGES = (
    "agents",
    "datasets",
    "evaluators",
    "imports",
    "metrics",
    "models",
    "reporting",
    "routing",
    "runs",
    "stats",
    "agent_eval",
)

_PROBE = r"""
import json, sys
from evalcore.cli import main
try:
    status = main(sys.argv[1:])
except SystemExit as exc:
    status = exc.code
print("\nPROBE " + json.dumps({"status": status, "modules": sorted({m.split(".")[0] for m in sys.modules})}))
"""


def _probe(*argv: str) -> tuple[int, set[str], str, str]:
    """Run ``evalcore ARGV`` in a fresh interpreter: exit status, top-level modules, stdout, stderr."""
    out = subprocess.run([sys.executable, "-c", _PROBE, *argv], capture_output=True, text=True, check=True, timeout=300)
    head, _, tail = out.stdout.rpartition("\nPROBE ")
    report = json.loads(tail)
    return report["status"], set(report["modules"]), head, out.stderr


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["--version"],
        ["score", "--help"],
        ["score", "humaneval", "--help"],
        ["run", "--help"],
        ["rescore", "--help"],
        ["browse", "--help"],
        ["route", "--help"],
        ["agent-eval", "--help"],
        ["sweep", "--help"],
        ["compare", "--help"],
        ["import", "--help"],
        ["notebooks", "run", "--help"],
        ["report", "--help"],
        ["serve-local", "--help"],
        ["no-such-command"],
    ],
    ids=" ".join,
)
def test_help_and_usage_import_nothing_heavy(argv: list[str]) -> None:
    status, modules, out, err = _probe(*argv)
    assert status == (2 if argv == ["no-such-command"] else 0), err
    assert sorted(modules & set(HEAVY)) == []
    if argv == ["--help"]:
        for command in ("score", "run", "rescore", "browse", "route", "agent-eval", "report", "compare", "import"):
            assert command in out
    if argv == ["no-such-command"]:
        assert "invalid choice: 'no-such-command'" in err


def test_scoring_files_imports_nothing_heavy(tmp_path: Path) -> None:
    problems = tmp_path / "problems.jsonl.gz"
    with gzip.open(problems, "wt") as fh:
        fh.write(
            json.dumps(
                {
                    "task_id": "T/0",
                    "prompt": 'def add(a, b):\n    """Add."""\n',
                    "test": ("def check(candidate):\n    assert candidate(2, 3) == 5\n"),
                    "entry_point": "add",
                }
            )
            + "\n"
        )
    samples = tmp_path / "s.jsonl"
    samples.write_text(json.dumps({"task_id": "T/0", "completion": "    return a + b\n"}) + "\n")
    status, modules, out, err = _probe("score", "humaneval", str(samples), "--k", "1", "--problems", str(problems))
    assert status == 0, err
    assert json.loads(out) == {"pass@1": 1.0}
    assert sorted(modules & set(HEAVY)) == []

    answers = tmp_path / "a.jsonl"
    answers.write_text(json.dumps({"response": "6 * 7 = 42\n#### 42", "answer": "#### 42"}) + "\n")
    status, modules, out, err = _probe("score", "gsm8k", str(answers))
    assert status == 0, err
    assert json.loads(out)["accuracy_strict"] == 1.0
    assert sorted(modules & set(HEAVY)) == []


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_importing_a_package_imports_nothing_heavy(package: str) -> None:
    """Each package re-exports its names lazily."""
    code = f"import json, sys, evalcore.{package}\nprint(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}})))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300)
    assert sorted(set(json.loads(out.stdout)) & set(HEAVY)) == []


@pytest.mark.parametrize("package", PACKAGES)
def test_every_public_name_is_importable(package: str) -> None:
    module = importlib.import_module(f"evalcore.{package}")
    names = list(module.__all__)
    assert names and len(names) == len(set(names))
    for name in names:
        value = getattr(module, name)
        assert value is not None, name
        assert name in dir(module), name
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        _ = module.no_such_name
    namespace: dict = {}
    exec(f"from evalcore.{package} import *", namespace)
    assert set(names) <= set(namespace)


def test_lazy_names_are_the_defining_objects() -> None:
    import evalcore.evaluators as evaluators
    import evalcore.stats as stats
    from evalcore.evaluators._pass_at_k import pass_at_k
    from evalcore.stats import compare
    from evalcore.stats._compare import compare as defined

    assert compare is defined and stats.compare is defined
    assert evaluators.pass_at_k is pass_at_k
    assert "compare" in vars(stats)  # cached on the package after the first read
    assert evalcore_record_is_reporting_record()


def evalcore_record_is_reporting_record() -> bool:
    import evalcore
    from evalcore.reporting._record import record

    return evalcore.record is record


def test_the_wilson_interval_light_commands_print_needs_no_scipy() -> None:
    code = (
        "import json, sys\nfrom evalcore.stats import wilson_interval\n"
        "print(json.dumps([list(wilson_interval(6, 8)), sorted({m.split('.')[0] for m in sys.modules})]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300)
    interval, modules = json.loads(out.stdout)
    assert sorted(set(modules) & set(HEAVY)) == []
    from statsmodels.stats.proportion import proportion_confint

    assert interval == pytest.approx(list(proportion_confint(6, 8, alpha=0.05, method="wilson")), abs=1e-12)
