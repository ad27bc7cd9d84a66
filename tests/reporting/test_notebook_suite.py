"""Suite file parsing and parameter checks (no kernel needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalcore.errors import EvalcoreError
from evalcore.reporting._notebook_suite import (
    check_parameters,
    load_notebook_suite,
    load_smoke,
    smoke_overrides,
    substitute,
)


@pytest.fixture
def repo(tmp_path, nb_factory):
    (tmp_path / "pyproject.toml").write_text("")
    nb_factory(tmp_path / "nbs" / "a.ipynb", "limit: int = 3  # items\nname: str = 'x'  # label", "print(limit)")
    (tmp_path / "params").mkdir()
    (tmp_path / "params" / "a.yaml").write_text("limit: 5\nname: y\n")
    return tmp_path


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_load_suite_merges_params_overrides_and_smoke(repo):
    suite = write(
        repo / "params" / "suite.yaml",
        """runs:
  - name: first
    notebook: nbs/a.ipynb
    params: params/a.yaml
    overrides: {name: z}
  - {name: second, notebook: nbs/a.ipynb}
""",
    )
    entries = load_notebook_suite(suite, smoke={"a.ipynb": {"limit": 1}, "second": {"limit": 2}})
    assert [e.name for e in entries] == ["first", "second"]
    assert entries[0].notebook == repo / "nbs" / "a.ipynb"  # resolved from the repo root
    assert entries[0].params == {"limit": 1, "name": "z"}
    assert entries[1].params == {"limit": 2}  # run-name smoke values win over notebook-name ones
    assert entries[0].line == 2 and entries[1].line == 6
    assert check_parameters(entries[0])["limit"]["help"] == "items"


@pytest.mark.parametrize(
    ("text", "line", "field", "message"),
    [
        ("runs: [\n  {name: a\n", 3, None, "malformed YAML"),
        ("other: 1\n", 1, "runs", "must be a mapping with a 'runs' list"),
        ("runs: []\n", 1, "runs", "non-empty"),
        ("runs:\n  - {name: a, notebook: nbs/missing.ipynb}\n", 2, "notebook", "notebook not found"),
        ("runs:\n  - {name: a}\n", 2, "notebook", "missing or empty 'notebook'"),
        (
            "runs:\n  - {name: a, notebook: nbs/a.ipynb}\n  - name: a\n    notebook: nbs/a.ipynb\n",
            3,
            "name",
            "duplicate",
        ),
        ("runs:\n  - {name: a, notebook: nbs/a.ipynb, parms: x}\n", 2, "parms", "unknown key"),
        ("runs:\n  - {name: 'a b', notebook: nbs/a.ipynb}\n", 2, "name", "letters"),
        ("runs:\n  - {name: a, notebook: nbs/a.ipynb, params: params/none.yaml}\n", 2, "params", "not found"),
        ("runs:\n  - just-a-string\n", 2, None, "must be a mapping"),
        # a top-level key beside 'runs:' (a typo of it, a misplaced entry key) is refused
        (
            "runs:\n  - {name: a, notebook: nbs/a.ipynb}\nrnus:\n  - {name: b, notebook: nbs/a.ipynb}\n",
            3,
            "rnus",
            "unknown top-level key",
        ),
        (
            "# suite\noverrides: {seed: 1}\nruns:\n  - {name: a, notebook: nbs/a.ipynb}\n",
            2,
            "overrides",
            r"unknown top-level key \(allowed: runs\)",
        ),
        ("runs:\n  - {name: a, notebook: nbs}\n", 2, "notebook", "is a folder, not a file"),
        ("runs:\n  - {name: a, notebook: nbs/a.ipynb, params: params}\n", 2, "params", "is a folder, not a file"),
    ],
)
def test_malformed_suites_raise_with_file_line_field(repo, text, line, field, message):
    suite = write(repo / "params" / "bad.yaml", text)
    with pytest.raises(EvalcoreError, match=message) as info:
        load_notebook_suite(suite)
    assert info.value.path == str(suite)
    assert info.value.line == line
    assert info.value.field == field


def test_params_file_must_be_a_mapping(repo):
    write(repo / "params" / "list.yaml", "- 1\n- 2\n")
    suite = write(repo / "params" / "s.yaml", "runs:\n  - {name: a, notebook: nbs/a.ipynb, params: params/list.yaml}\n")
    with pytest.raises(EvalcoreError, match="mapping") as info:
        load_notebook_suite(suite)
    assert info.value.path == str(repo / "params" / "list.yaml")


def test_unknown_parameter_names_its_file_and_line(repo):
    write(repo / "params" / "a.yaml", "limit: 5\nlimt: 4\n")
    suite = write(repo / "params" / "s.yaml", "runs:\n  - {name: a, notebook: nbs/a.ipynb, params: params/a.yaml}\n")
    (entry,) = load_notebook_suite(suite)
    with pytest.raises(EvalcoreError, match="unknown parameter") as info:
        check_parameters(entry)
    assert (info.value.path, info.value.line, info.value.field) == (str(repo / "params" / "a.yaml"), 2, "limt")


def test_unknown_override_points_at_suite_line(repo):
    suite = write(
        repo / "params" / "s.yaml", "runs:\n  - name: a\n    notebook: nbs/a.ipynb\n    overrides:\n      seed: 1\n"
    )
    (entry,) = load_notebook_suite(suite)
    with pytest.raises(EvalcoreError) as info:
        check_parameters(entry)
    assert (info.value.path, info.value.line, info.value.field) == (str(suite), 5, "seed")


def test_smoke_file_shape(repo):
    smoke = write(repo / "smoke.yaml", "a.ipynb: {limit: 1}\nrun_x: {limit: 2}\n")
    values = load_smoke(smoke)
    assert smoke_overrides(values, "run_x", Path("nbs/a.ipynb")) == {"limit": 2}
    assert smoke_overrides(values, "other", Path("nbs/a.ipynb")) == {"limit": 1}
    write(smoke, "a.ipynb: 3\n")
    with pytest.raises(EvalcoreError, match="mapping") as info:
        load_smoke(smoke)
    assert info.value.line == 1 and info.value.field == "a.ipynb"


def test_substitute_only_replaces_known_markers():
    value = {"run_dir": "{suite_dir}/runs", "prompt": "Q: {question}", "runs": ["{root}/a", 3]}
    out = substitute(value, {"suite_dir": "/r/1", "root": "/repo"})
    assert out == {"run_dir": "/r/1/runs", "prompt": "Q: {question}", "runs": ["/repo/a", 3]}


def test_project_path_resolves_from_the_repository_root(repo, monkeypatch):
    from evalcore.reporting import project_path

    monkeypatch.chdir(repo / "nbs")  # JupyterLab runs a kernel in the notebook's folder
    assert project_path("runs/x") == repo / "runs" / "x"
    monkeypatch.chdir(repo)  # the suite runner uses the root
    assert project_path("runs/x") == repo / "runs" / "x"
    assert project_path("/abs/p") == Path("/abs/p")


def test_unknown_top_level_key_stops_the_cli_before_anything_runs(repo, capsys):
    from evalcore.cli import main

    suite = write(repo / "params" / "s.yaml", "runs:\n  - {name: a, notebook: nbs/a.ipynb}\nextra: 1\n")
    out = repo / "out"
    assert main(["notebooks", "run", "--suite", str(suite), "--output", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{suite}, line 3, field 'extra': unknown top-level key" in err and "Traceback" not in err
    assert not out.exists()


def test_folder_for_suite_file_says_folder(repo, capsys):
    from evalcore.cli import main

    with pytest.raises(EvalcoreError, match="is a folder, not a file") as info:
        load_notebook_suite(repo / "params")
    assert "not found" not in str(info.value)
    out = repo / "out"
    assert main(["notebooks", "run", "--suite", str(repo / "params"), "--output", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{repo / 'params'}: is a folder, not a file" in err and not out.exists()


def test_the_repository_suite_files_still_load():
    # params/suite.yaml is the one notebook-suite file in the repository (the other YAML files
    # with a 'runs:' key, params/compare*.yaml, are parameter files of the compare notebook)
    root = Path(__file__).resolve().parents[2]
    entries = load_notebook_suite(root / "params" / "suite.yaml")
    assert entries and all(e.notebook.is_file() for e in entries)
