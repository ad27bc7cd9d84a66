"""`evalcore agent-eval` / `sweep`: bad input is refused up front with one message and exit 2."""

from __future__ import annotations

import json

import pytest

from evalcore.cli import main
from evalcore.suites import SuiteConfig, save_cases
from evalcore.suites._cases.generator import AgentCaseGenerator
from evalcore.errors import EvalcoreError

BASE = ["agent-eval", "--agent", "oracle", "--categories", "functional", "--model", "none",
        "--limit", "1", "--seed", "0"]


@pytest.mark.parametrize("value", ["inf", "nan", "0", "1e9"])
def test_request_timeout_must_be_finite(tmp_path, capsys, value) -> None:
    with pytest.raises(SystemExit) as stop:
        main([*BASE, "--request-timeout", value, "--output-dir", str(tmp_path / "ae")])
    assert stop.value.code == 2 and "argument --request-timeout" in capsys.readouterr().err
    assert not (tmp_path / "ae").exists()


def test_suite_config_refuses_infinite_timeout() -> None:
    with pytest.raises(EvalcoreError, match="request_timeout_s"):
        SuiteConfig(seed=0, request_timeout_s=float("inf"))


def test_output_dir_is_a_file(tmp_path, capsys) -> None:
    (tmp_path / "ae").write_text("")
    assert main([*BASE, "--output-dir", str(tmp_path / "ae")]) == 2
    err = capsys.readouterr().err
    assert "field '--output-dir'" in err and "is a file" in err and "Traceback" not in err


def test_sweep_output_is_a_file(tmp_path, capsys) -> None:
    (tmp_path / "sw").write_text("")
    assert main(["sweep", "--thresholds", "0.5", "--model", "none", "--seed", "0",
                 "--output", str(tmp_path / "sw")]) == 2
    assert "field '--output'" in capsys.readouterr().err


def test_cases_file_not_utf8(tmp_path, capsys) -> None:
    path = tmp_path / "c.json"
    save_cases(AgentCaseGenerator(0).generate()[:3], path)
    lines = path.read_bytes().split(b"\n")
    lines[7] += b"\xff"
    path.write_bytes(b"\n".join(lines))
    assert main([*BASE, "--no-save", "--cases", str(path)]) == 2
    err = capsys.readouterr().err
    assert "c.json, line 8" in err and "not UTF-8" in err and "Traceback" not in err


def test_dead_model_endpoint_is_refused(capsys) -> None:
    from evalcore.models._server import free_port

    dead = f"openai-compatible:x@http://127.0.0.1:{free_port()}/v1"
    assert main(["agent-eval", "--categories", "functional", "--model", dead, "--limit", "1",
                 "--seed", "0", "--no-save"]) == 2
    err = capsys.readouterr().err
    assert "cannot reach endpoint" in err and "reference agent's model" in err


@pytest.mark.parametrize("change, where", [
    (lambda d: d["cases"][0].update(tolerance=0.5), "cases[0].tolerance"),  # a misspelt field was ignored
    (lambda d: d.update(extra=1), "extra"),
    (lambda d: d.update(format="nope"), "format"),
    (lambda d: d.update(version=99), "version"),
    (lambda d: d["cases"][1].update(categories=["nonsense"]), "cases[1].categories"),  # dropped the case
    (lambda d: d["cases"][0].update(rel_tol=float("nan")), "cases[0].rel_tol"),
])
def test_cases_file_with_unknown_keys_or_values_is_refused(tmp_path, capsys, change, where) -> None:
    path = tmp_path / "c.json"
    save_cases(AgentCaseGenerator(0, {"simple": 2, "medium": 0, "complex": 0, "edge": 0}).generate(), path)
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))
    out = tmp_path / "out"
    assert main(["agent-eval", "--agent", "oracle", "--model", "none", "--categories", "functional",
                 "--cases", str(path), "--output-dir", str(out)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and where in err and "Traceback" not in err, err
    assert not out.exists() or not any(out.iterdir())  # nothing written
