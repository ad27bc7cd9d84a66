"""`--only` pulls in the entries a selected entry reads from (issue 39: the documented
`evalcore notebooks run --only benchmark_mmlu,compare_mmlu_modes` needs benchmark_mmlu_likelihood)."""

from __future__ import annotations

from pathlib import Path

from evalcore.reporting._notebook_suite import NotebookEntry, load_notebook_suite, with_dependencies

ROOT = Path(__file__).resolve().parents[2]


def _entry(name: str, **params: object) -> NotebookEntry:
    return NotebookEntry(name, Path(f"/nb/{name}.ipynb"), None, dict(params))


def test_the_documented_selection_adds_the_likelihood_run() -> None:
    entries = load_notebook_suite(ROOT / "params" / "suite.yaml")
    chosen, added = with_dependencies(entries, ["benchmark_mmlu", "compare_mmlu_modes"])
    assert [e.name for e in chosen] == ["benchmark_mmlu", "benchmark_mmlu_likelihood", "compare_mmlu_modes"]
    assert added == {"benchmark_mmlu_likelihood": ["compare_mmlu_modes"]}


def test_a_comparison_alone_brings_both_runs_in_suite_order() -> None:
    entries = load_notebook_suite(ROOT / "params" / "suite.yaml")
    chosen, added = with_dependencies(entries, ["compare_gsm8k_prompts"])
    assert [e.name for e in chosen] == ["benchmark_gsm8k", "benchmark_gsm8k_fewshot", "compare_gsm8k_prompts"]
    assert set(added) == {"benchmark_gsm8k", "benchmark_gsm8k_fewshot"}


def test_entries_without_suite_paths_stay_alone() -> None:
    entries = load_notebook_suite(ROOT / "params" / "suite.yaml")
    for name in ("benchmark_gsm8k", "routing", "threshold_sweep", "agent_overview"):
        chosen, added = with_dependencies(entries, [name])
        assert [e.name for e in chosen] == [name], name  # reuse_dir "{suite_dir}" is the folder, no dependency
        assert added == {}


def test_dependencies_are_followed_through_a_chain_and_own_output_is_no_dependency() -> None:
    entries = [
        _entry("a", run_dir="{suite_dir}/runs", run_id="a"),
        _entry("b", runs=["{suite_dir}/runs/a/"], output_dir="{suite_dir}/b-out"),
        _entry("c", source="{suite_dir}/b-out/table.csv", run_dir="{suite_dir}/runs", run_id="c"),
        _entry("d", run_dir="{suite_dir}/runs", run_id="d"),
    ]
    chosen, added = with_dependencies(entries, ["c"])
    assert [e.name for e in chosen] == ["a", "b", "c"]
    assert added == {"b": ["c"], "a": ["b"]}
    chosen, added = with_dependencies(entries, ["d"])
    assert [e.name for e in chosen] == ["d"] and added == {}
