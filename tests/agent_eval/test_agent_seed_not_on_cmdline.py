"""The case seed is never on a command line (issue 30, item 2).

Any local process reads another's command line (``ps``, ``/proc/PID/cmdline``): an HTTP agent on
the same host that reads ``--seed N`` from the evaluator's rebuilds the cases and their expected
answers with the generator shipped in evalcore. So ``--seed N`` is refused with a message that
says how to pass a seed (a seed file or ``EVALCORE_AGENT_SEED``); the seed is recorded in the
results after the run, and the variable is taken out of the evaluator's environment as it is
read, so a hosted agent (which inherits that environment) never sees it.
"""

from __future__ import annotations

import json
import os

import pytest

from evalcore.agent_eval._config import SEED_ENV, seed_from_sources
from evalcore.cli import main
from evalcore.errors import EvalcoreError

SMALL = ["--counts", "simple=2,medium=0,complex=0,edge=0", "--categories", "functional"]


@pytest.mark.parametrize(
    "command", [["agent-eval", "--agent", "oracle", *SMALL], ["sweep", "--thresholds", "0.5", "--model", "none"]]
)
def test_seed_on_the_command_line_is_refused_with_how_to_pass_it(tmp_path, capsys, command) -> None:
    out = tmp_path / "o"
    flag = "--output-dir" if command[0] == "agent-eval" else "--output"
    assert main([*command, "--seed", "7", flag, str(out)]) == 2
    err = capsys.readouterr().err
    assert "field '--seed'" in err and "--seed-file" in err and SEED_ENV in err and "command line" in err
    assert not out.exists() or not any(out.iterdir())


def test_seed_file_is_used_and_recorded_after_the_run(tmp_path, capsys) -> None:
    seed_file = tmp_path / "seed"
    seed_file.write_text("123456789\n")
    out = tmp_path / "o"
    assert (
        main(["agent-eval", "--agent", "oracle", *SMALL, "--seed-file", str(seed_file), "--output-dir", str(out)]) == 0
    )
    cfg = json.loads(next(out.glob("evaluation_*.json")).read_text())["config"]
    assert cfg["suite"]["seed"] == 123456789 and cfg["suite"]["seed_source"] == "file"
    assert "cases from seed 123456789 (from the file)" in capsys.readouterr().out


def test_seed_from_the_environment_is_used_recorded_and_removed(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setenv(SEED_ENV, "4242")
    out = tmp_path / "o"
    assert main(["agent-eval", "--agent", "oracle", *SMALL, "--output-dir", str(out)]) == 0
    cfg = json.loads(next(out.glob("evaluation_*.json")).read_text())["config"]
    assert cfg["suite"]["seed"] == 4242 and cfg["suite"]["seed_source"] == "environment"
    assert SEED_ENV not in os.environ  # a hosted agent started after this inherits no seed


def test_hosted_agent_never_sees_the_seed(tmp_path, monkeypatch) -> None:
    """An agent hosted by a run whose seed came from the environment finds no seed in its own."""
    mod = tmp_path / "envspy.py"
    mod.write_text(
        "import os\n"
        "from evalcore.agents import AgentResponse\n"
        "class Spy:\n"
        "    registry = None\n"
        "    def reset(self):\n"
        "        pass\n"
        "    def process_request(self, query):\n"
        f"        return AgentResponse(success=True, result=os.environ.get({SEED_ENV!r}, 'absent'))\n"
        "def make():\n"
        "    return Spy()\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv(SEED_ENV, "99")
    out = tmp_path / "o"
    assert (
        main(
            [
                "agent-eval",
                "--agent",
                f"{tmp_path / 'envspy.py'}:make",
                *SMALL,
                "--output-dir",
                str(out),
                "--request-timeout",
                "60",
            ]
        )
        == 0
    )
    d = json.loads(next(out.glob("evaluation_*.json")).read_text())
    results = [t["details"].get("result") for t in d["detailed_results"]["functional"]["tests"]]
    assert results and all(r == "absent" for r in results), results
    assert d["config"]["suite"]["seed"] == 99


@pytest.mark.parametrize("text, why", [("x12", "one integer"), ("-3", "[0, 2**63)"), (str(2**64), "[0, 2**63)")])
def test_bad_seed_file_is_refused(tmp_path, text, why) -> None:
    path = tmp_path / "s"
    path.write_text(text)
    with pytest.raises(EvalcoreError, match="seed file") as err:
        seed_from_sources(path, environ={})
    assert why in str(err.value)


def test_seed_given_twice_or_missing_file_is_refused(tmp_path) -> None:
    path = tmp_path / "s"
    path.write_text("5")
    with pytest.raises(EvalcoreError, match="given twice"):
        seed_from_sources(path, environ={SEED_ENV: "5"})
    with pytest.raises(EvalcoreError, match="cannot read the seed file"):
        seed_from_sources(tmp_path / "missing", environ={})
    assert seed_from_sources(None, environ={}) == (None, "drawn")
