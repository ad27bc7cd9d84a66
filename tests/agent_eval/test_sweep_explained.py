"""A threshold sweep's numbers explain themselves (issue 39): the grid's edge, the split, the caption."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from evalcore import cli
from evalcore.agent_eval import SweepResult
from evalcore.agent_eval._sweep_notes import edge_note, empty_searches, figure_caption, grid_edge, held_out_table
from evalcore.metrics import precision_recall_f1

AGENT = (
    "from evalcore.agents import AgentResponse, ToolMatch\n"
    "from evalcore.agent_eval import AgentCaseGenerator\n\n"
    "COUNTS = {'simple': 8, 'medium': 0, 'complex': 0, 'edge': 0}\n"
    "CASES = {c.query: c for c in AgentCaseGenerator(0, COUNTS).generate()}\n\n"
    "class Reg:\n"
    "    def search(self, query, k=5, threshold=0.0):\n"
    "        c = CASES.get(query)\n"
    "        hits = [ToolMatch(c.kind, 0.62), ToolMatch('decoy', 0.45)] if c else [ToolMatch('decoy', 0.40)]\n"
    "        return [h for h in hits if h.score >= threshold][:k]\n"
    "    def list_tools(self):\n"
    "        return ['percentage', 'reverse_string', 'factorial', 'temperature_conversion', 'decoy']\n"
    "    def describe(self, name):\n"
    "        from evalcore.agent_eval._oracle import tool_source\n"
    "        return {'code': 'def decoy(**kw):\\n    return 0\\n' if name == 'decoy' else tool_source(name)[0]}\n\n"
    "class Agent:\n"
    "    def __init__(self, threshold):\n"
    "        self.threshold = threshold\n"
    "        self.registry = Reg()\n"
    "    def reset(self):\n"
    "        pass\n"
    "    def process_request(self, query):\n"
    "        c = CASES.get(query)\n"
    "        if c is None or self.threshold > 0.62:\n"
    "            return AgentResponse(success=False, error='no tool above the threshold')\n"
    "        return AgentResponse(success=True, result=c.expected, tool_used=c.kind, reused=True)\n\n"
    "def make(threshold=0.5):\n"
    "    return Agent(threshold)\n"
)


def test_edge_flag_only_for_a_best_at_the_edge() -> None:
    grid = [0.3, 0.45, 0.6, 0.75]
    assert grid_edge(grid, 0.75) == "upper" and grid_edge(grid, 0.3) == "lower"
    assert grid_edge(grid, 0.45) is None and grid_edge(grid, 0.6) is None
    assert edge_note(grid, 0.45) is None and edge_note(grid, 0.6) is None
    upper = edge_note(grid, 0.75)
    assert upper is not None and "highest of the grid (0.3 to 0.75)" in upper
    assert "widen the grid" in upper and "0.3:1:0.15" in upper  # two steps up, capped at 1
    lower = edge_note(grid, 0.3)
    assert lower is not None and "lowest of the grid" in lower and "0:0.75:0.15" in lower
    assert "widen" not in (edge_note([-1.0, 0.0], -1.0) or "")  # nothing below -1 to try
    assert edge_note([0.5], 0.5) is None  # one threshold: no grid edge


def _hand_result() -> SweepResult:
    """Two labelled held-out cases at thresholds 0.3 and 0.6, precision computed by hand.

    At 0.3: case a's search returns [sum, decoy] (precision 1/2), case b's [sum] (1): mean 0.75.
    At 0.6: case a's returns [sum] (1), case b's nothing (0, not 1): mean 0.5 - precision falls.
    """
    hits = {(0.3, "a"): ["sum", "decoy"], (0.3, "b"): ["sum"], (0.6, "a"): ["sum"], (0.6, "b"): []}
    rows = []
    for (t, item), h in hits.items():
        p, r, f = precision_recall_f1(h, {"sum"})
        rows.append(
            {"threshold": t, "item": item, "split": "test", "type": "case", "precision": p, "recall": r, "f1": f}
            | {"n_matches": len(h)}
        )
    items = pd.DataFrame(rows)
    metrics = items.groupby("threshold")[["precision", "recall", "f1"]].mean().reset_index().assign(split="test")
    metrics = metrics.assign(n_items=2, n_cases=2, n_labelled=2, n_unrelated=0, utility=[0.9, 0.8])
    return SweepResult(metrics=metrics, items=items, best_threshold=0.3, tests=pd.DataFrame(), config={})


def test_caption_explains_falling_precision_on_a_hand_computed_case() -> None:
    res = _hand_result()
    m = res.metrics.set_index("threshold")
    assert m.loc[0.3, "precision"] == pytest.approx(0.75) and m.loc[0.6, "precision"] == pytest.approx(0.5)
    assert m.loc[0.3, "recall"] == pytest.approx(1.0) and m.loc[0.6, "recall"] == pytest.approx(0.5)
    assert list(empty_searches(res.items)) == [0, 1]
    caption = figure_caption(res)
    assert "precision 0" in caption and "(not 1)" in caption
    assert "over the held-out cases with a relevant tool (2)" in caption
    assert "from 0.3 to 0.6 precision falls 0.75 → 0.50 (searches with no match: 0 → 1 of 2 cases)" in caption
    assert res.figure_caption() == caption
    # rising precision gets no "falls" sentence
    rising = res.metrics.assign(precision=[0.5, 0.75])
    assert "falls 0" not in figure_caption(SweepResult(rising, res.items, 0.3, pd.DataFrame(), {}))


def test_held_out_result_is_a_table_naming_its_split() -> None:
    res = _hand_result()
    tab = held_out_table(res, ["threshold", "precision", "recall"])
    assert list(tab.columns) == ["split", "threshold", "precision", "recall"]
    assert tab.iloc[0].to_dict() == {"split": "held-out", "threshold": 0.3, "precision": 0.75, "recall": 1.0}


@pytest.fixture()
def main(monkeypatch):
    monkeypatch.setattr(cli, "_COMMAND_MODULES", ("evalcore.agent_eval._cli",))
    return cli.main


@pytest.mark.parametrize(
    "grid, best, edge",
    [("0.3,0.5,0.7", 0.5, None), ("0.3,0.5", 0.5, "highest")],
)
def test_cli_sweep_names_split_edge_and_caption(grid, best, edge, main, tmp_path, capsys) -> None:
    mod = tmp_path / "sweep_agent_factory.py"
    mod.write_text(AGENT)
    seed0 = tmp_path / "seed0"
    seed0.write_text("0")
    out = tmp_path / "sweep"
    args = ["sweep", "--agent", f"{mod}:make", "--thresholds", grid, "--counts", "simple=8,medium=0,complex=0,edge=0"]
    assert main([*args, "--unrelated", "4", "--output", str(out), "--seed-file", str(seed0)]) == 0
    text = capsys.readouterr().out
    d = json.loads((out / "sweep.json").read_text())
    assert d["best_threshold"] == best
    assert "held-out split (" in text and "), every threshold:" in text
    assert "held-out split (" in text and f"the best threshold {best:g}:" in text
    assert (
        "held-out: {" not in text and "NaN" not in text and "None" not in text
    )  # a table, not raw JSON; blanks not NaN
    lines = text.splitlines()
    header = lines.index(next(line for line in lines if line.endswith(f"the best threshold {best:g}:")))
    assert lines[header + 1].split()[:3] == ["split", "threshold", "n_labelled"]
    assert lines[header + 2].split()[:2] == ["held-out", f"{best:.3f}"]
    if edge is None:
        assert "note:" not in text and d["best_threshold_note"] is None
    else:
        assert f"is the {edge} of the grid" in text and "widen the grid" in d["best_threshold_note"]
    if grid == "0.3,0.5,0.7":  # at 0.7 every search is empty: precision falls 1 → 0, and the caption says why
        assert "from 0.5 to 0.7 precision falls 1.00 → 0.00" in text and "precision 0" in text
    held = {k: np.float64(v) for k, v in d["held_out"].items() if isinstance(v, float)}
    assert held["precision"] == 1.0
