"""Names and leftovers (issue 32, item 5): one meaning of "suite", one definition of each shared
helper, no dead helpers or duplicate prompt templates, no oversized module, test files named for
what they test."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

import evalcore

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = Path(evalcore.__file__).resolve().parent


def _definitions(name: str) -> list[str]:
    """Modules of evalcore defining a function or class called ``name`` at module level."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
                found.append(str(path.relative_to(PACKAGE)))
    return found


def test_the_agent_evaluation_is_agent_eval_and_no_suites_package_is_left() -> None:
    assert (PACKAGE / "agent_eval" / "__init__.py").is_file()
    assert not (PACKAGE / "suites").exists()
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("evalcore.suites")
    from evalcore.agent_eval import AgentEvalConfig, agent_eval_records

    assert AgentEvalConfig(seed=7).seed == 7
    assert agent_eval_records.__module__ == "evalcore.agent_eval._entry"


def test_no_code_or_doc_imports_the_old_suites_package() -> None:
    hits = []
    for folder in ("evalcore", "tests", "notebooks", "docs"):
        for path in (ROOT / folder).rglob("*"):
            if path.suffix in {".py", ".ipynb", ".md"} and "__pycache__" not in path.parts and path != Path(__file__):
                text = path.read_text(encoding="utf-8")
                if re.search(r"evalcore\.suites\b|from evalcore import suites", text):
                    hits.append(str(path.relative_to(ROOT)))
    assert hits == []


def test_params_holds_no_copy_of_the_packaged_prompt_templates() -> None:
    packaged = {f"{p.parent.name}.yaml": p.read_bytes() for p in (PACKAGE / "benchmarks").glob("*/template.yaml")}
    assert set(packaged) >= {"gsm8k.yaml", "mmlu.yaml", "humaneval.yaml"}
    copies = [
        str(p.relative_to(ROOT)) for p in (ROOT / "params").rglob("*.yaml") if packaged.get(p.name) == p.read_bytes()
    ]
    assert copies == []


@pytest.mark.parametrize(
    "module, name",
    [
        ("evalcore.imports._common", "package_version"),
        ("evalcore.reporting._compare_views", "load_item_scores"),
        ("evalcore.reporting._compare_views", "run_label"),
    ],
)
def test_dead_helpers_are_gone(module: str, name: str) -> None:
    assert not hasattr(importlib.import_module(module), name)


def test_test_files_say_what_they_test_not_when_they_were_written() -> None:
    dated = [
        str(p.relative_to(ROOT))
        for p in (ROOT / "tests").rglob("test_*.py")
        if re.search(r"audit\d*\.py$|audit\d|round_two|_v\d+\.py$", p.name)
    ]
    assert dated == []


@pytest.mark.parametrize("name", ["pass_at_k_table", "write_json_atomic", "format_comparison"])
def test_one_definition_of_each_shared_helper(name: str) -> None:
    assert len(_definitions(name)) == 1, _definitions(name)


def test_the_one_definitions_are_where_callers_import_them_from() -> None:
    import evalcore.benchmarks
    import evalcore.imports
    import evalcore.runs

    assert evalcore.runs.pass_at_k_table is evalcore.benchmarks.pass_at_k_table
    assert evalcore.imports.format_comparison.__module__ == "evalcore.imports._compare"
    from evalcore import _io, _runstore, runs

    assert not hasattr(_runstore, "write_json_atomic") and not hasattr(runs, "write_json_atomic")
    assert runs.write_run_json is _runstore.write_run_json
    assert _io.write_json_atomic.__module__ == "evalcore._io"


def test_no_evalcore_module_is_over_600_lines() -> None:
    sizes = {
        p.relative_to(PACKAGE).as_posix(): len(p.read_text(encoding="utf-8").splitlines())
        for p in PACKAGE.rglob("*.py")
    }
    assert "sandbox/worker.py" in sizes and "routing/_algorithms.py" in sizes
    assert {name: n for name, n in sizes.items() if n > 600} == {}


def test_the_last_splits_keep_the_names_others_import() -> None:
    from evalcore.benchmarks import _file, _file_checks
    from evalcore.reporting import _export, _pdf_layout
    from evalcore.routing import _algorithms, _env
    from evalcore.sandbox import pool, rehearsal, report

    assert _algorithms.ReplayEnv is _env.ReplayEnv
    assert _export.pdf_layout_problems is _pdf_layout.pdf_layout_problems
    assert _file.SCORER_TYPES is _file_checks.SCORER_TYPES == ("number", "letter", "exact", "code")
    assert pool._to_result is report._to_result
    assert callable(rehearsal.rehearse)


def test_the_split_notebook_runner_keeps_its_names() -> None:
    from evalcore import reporting
    from evalcore.reporting import _notebook_index, _notebook_kernel, _notebook_progress, _notebooks

    for name in ("display_summary", "summary_frame", "write_index", "_rel"):
        assert getattr(_notebooks, name) is getattr(_notebook_index, name)
    for name in ("AGENT_SEED_FILE", "KERNEL_NAME", "_execute", "_kernel_env", "suite_agent_seed"):
        assert getattr(_notebooks, name) is getattr(_notebook_kernel, name)
    for name in ("_Progress", "_step", "_duration", "_Heartbeat", "progress_line", "time_left", "expected_durations"):
        assert getattr(_notebooks, name) is getattr(_notebook_progress, name)
    assert reporting.summary_frame is _notebook_index.summary_frame
    assert reporting.run_notebooks is _notebooks.run_notebooks
    for name in _notebooks.__all__:
        assert hasattr(_notebooks, name)


def test_the_split_sample_browser_keeps_its_page() -> None:
    from evalcore.reporting import _browser, _browser_page

    assert _browser._PAGE is _browser_page._PAGE
    assert _browser._BROWSER_CSP is _browser_page._BROWSER_CSP
    assert "script-src 'sha256-" in _browser_page._BROWSER_CSP


def test_the_split_sandbox_worker_keeps_its_methods() -> None:
    from evalcore.sandbox import cgroup, fsview, worker

    for name in ("_build_view", "_hideable", "_hide_all"):
        assert getattr(worker._Worker, name) is getattr(fsview.FileSystemView, name)
    for name in ("_setup_memory_cgroup", "_join_memory_cgroup", "_set_memory_limit"):
        assert getattr(worker._Worker, name) is getattr(cgroup.MemoryCgroup, name)
    assert "ld.so.cache" in fsview._ETC


def test_the_split_framing_keeps_decode() -> None:
    from evalcore.sandbox import decoding, framing

    assert framing.decode is decoding.decode
    assert framing.decode(framing.encode({"a": (1, 2.5)})) == {"a": (1, 2.5)}


def test_the_split_pool_keeps_its_names() -> None:
    from evalcore import sandbox
    from evalcore.sandbox import answer_keys, cgroup, durations, pool

    for name in ("answer_key_paths", "data_file_paths"):
        assert getattr(pool, name) is getattr(answer_keys, name) is getattr(sandbox, name)
    for name in ("DURATIONS_ENV", "durations_file", "_cost_key", "_load_durations", "_save_durations"):
        assert getattr(pool, name) is getattr(durations, name)
    assert sandbox.durations_file is durations.durations_file
    assert pool._remove_cgroup is cgroup._remove_cgroup


def test_the_split_benchmark_views_keep_their_names() -> None:
    from evalcore import reporting
    from evalcore.reporting import _benchmark_views as bv

    for name in ("usage_summary", "latency_cost_figure", "latency_cost_notes", "pass_fail_grid", "pass_fail_table"):
        assert getattr(bv, name) is getattr(reporting, name)
        assert name in bv.__all__


def test_the_split_replay_keeps_its_public_names() -> None:
    from evalcore import routing
    from evalcore.routing import _replay, _studies

    for name in ("ItemBootstrap", "item_bootstrap", "lambda_sweep"):
        assert getattr(routing, name) is getattr(_studies, name)
    for name in ("AlgorithmTrace", "ReplayResult", "make_orderings", "parse_algorithms", "replay"):
        assert getattr(routing, name) is getattr(_replay, name)


def test_the_split_agent_eval_modules_keep_their_names() -> None:
    from evalcore.agent_eval import _gaming, _gaming_answers, _measure, _observed

    for name in ("FrameReader", "BuiltinTools", "FirstSightSleeper", "DuplicateSearch", "RUN_STEPS"):
        assert getattr(_gaming, name) is getattr(_gaming_answers, name)
    assert {cls for cls, _ in _gaming.GAMING_AGENTS.values()} >= {_gaming.FrameReader, _gaming.TableTools}
    assert _measure.ToolRecord is _observed.ToolRecord


def test_the_split_agent_modules_keep_their_names() -> None:
    from evalcore import agents
    from evalcore.agents import _host_isolation, _http, _http_server

    assert agents.serve_agent is _http_server.serve_agent and agents.AgentServer is _http_server.AgentServer
    assert agents.HttpAgent is _http.HttpAgent
    assert _host_isolation._namespaced is False  # set only inside the hosted process
