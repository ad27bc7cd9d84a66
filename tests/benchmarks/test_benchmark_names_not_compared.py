"""No package outside ``evalcore/benchmarks`` and ``evalcore/datasets`` decides by a benchmark's
name: runs, rescoring, routing, reporting and imports ask the registry (issue 32).

The check reads every module's syntax tree and flags a built-in benchmark name used as a
string literal in a comparison (``dataset == "mmlu"``, ``name in ("gsm8k", "mmlu")``), as a
dict key (``{"gsm8k": 512}``, ``{("gsm8k", "cot"): ...}``) or as a subscript
(``TABLE["humaneval"]``). Docstrings, messages, help texts and default arguments are not
decisions and are not flagged.
"""

from __future__ import annotations

import ast
from pathlib import Path

import evalcore

NAMES = {"gsm8k", "mmlu", "humaneval"}
ROOT = Path(evalcore.__file__).resolve().parent
EXEMPT_DIRS = ("benchmarks", "datasets")
ALLOWED = {
    # ExactMatchEvaluator("gsm8k"/"mmlu") has named its two answer kinds since the first
    # release; the names stay accepted as aliases of "number"/"letter" (public API): the alias
    # table's two keys and the two names in its Literal type.
    "evaluators/_exact_match.py": 4,
    # routing's default study: its direct and chain-of-thought prompt per benchmark, keyed
    # (benchmark, strategy): a study's configuration, owned by routing (not a scoring rule).
    "routing/_default.py": 4,
}
"""Module -> how many flagged literals it may hold, each with its reason above."""


def _literals(node: ast.AST) -> list[ast.Constant]:
    if isinstance(node, ast.Constant) and node.value in NAMES:
        return [node]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [c for e in node.elts for c in _literals(e)]
    return []


def flagged(source: str) -> list[int]:
    """Lines where a benchmark name decides (comparison, dict key, subscript)."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        found: list[ast.Constant] = []
        if isinstance(node, ast.Compare):
            for part in [node.left, *node.comparators]:
                found += _literals(part)
        elif isinstance(node, ast.Dict):
            for key in node.keys:
                if key is not None:
                    found += _literals(key)
        elif isinstance(node, ast.Subscript):
            found += _literals(node.slice)
        elif isinstance(node, ast.MatchValue):
            found += _literals(node.value)
        lines += [c.lineno for c in found]
    return sorted(lines)


def test_the_check_finds_each_kind_of_decision():
    code = (
        'a = d == "gsm8k"\nb = d in ("mmlu", "x")\nc = {"humaneval": 1}\n'
        'e = T["mmlu"]\nf = {("gsm8k", "cot"): 1}\n"""gsm8k in a docstring"""\n'
        'g = f"{d} is not mmlu"\ndef h(x=("gsm8k",)): pass\n'
    )
    assert flagged(code) == [1, 2, 3, 4, 5]


def test_no_module_outside_benchmarks_and_datasets_compares_benchmark_names():
    found: dict[str, list[int]] = {}
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith(tuple(d + "/" for d in EXEMPT_DIRS)):
            continue
        lines = flagged(path.read_text("utf-8"))
        if lines and len(lines) != ALLOWED.get(rel):
            found[rel] = lines
    assert not found, f"benchmark names compared outside evalcore/benchmarks: {found}"
    for rel, count in ALLOWED.items():  # an allowance that is no longer needed goes
        assert len(flagged((ROOT / rel).read_text("utf-8"))) == count, rel


def test_no_notebook_compares_benchmark_names():
    """The notebooks ask the run's benchmark too (``benchmark_of_run``), e.g. whether it runs
    code, instead of testing ``dataset == "humaneval"``."""
    import json

    found = {}
    for nb_path in sorted((ROOT.parent / "notebooks").glob("*.ipynb")):
        cells = json.loads(nb_path.read_text("utf-8"))["cells"]
        code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        code = "\n".join(line for line in code.splitlines() if not line.lstrip().startswith(("%", "!")))
        if flagged(code):
            found[nb_path.name] = flagged(code)
    assert not found
