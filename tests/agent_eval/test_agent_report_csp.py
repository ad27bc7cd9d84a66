"""The agent evaluation's report.html carries the Content-Security-Policy the notebook pages do.

The page shows what the agent wrote (test names, errors, notes), escaped; the policy is the
defence in depth behind the escaping: even a payload that became markup runs no script. The
page has no script of its own (``script-src 'none'``) and still shows its tables and figures.
"""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from evalcore.agent_eval import (
    AgentCaseGenerator,
    AgentEvalConfig,
    AgentEvaluator,
    OracleAgent,
    write_outputs,
)
from evalcore.reporting._export import content_security_policy

SMALL = {"simple": 4, "medium": 2, "complex": 2, "edge": 3}
IMG = "<img src=x onerror=\"document.title='PWNED'\">"
CHROMIUM = os.environ.get("EVALCORE_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    gen = AgentCaseGenerator(seed=0, counts=SMALL)
    cases = gen.generate()
    result = AgentEvaluator(
        OracleAgent(cases, gen.paraphrase_groups()), cases, config=AgentEvalConfig(seed=0, counts=SMALL)
    ).run(["functional", "workflow"], progress=False)
    return write_outputs(result, tmp_path_factory.mktemp("agent"), visualize=True)["html"]


def test_report_has_the_csp_and_still_renders(report: Path) -> None:
    page = report.read_text("utf-8")
    soup = BeautifulSoup(page, "html.parser")
    meta = soup.find("meta", attrs={"http-equiv": "Content-Security-Policy"})
    assert meta is not None and str(meta) == str(BeautifulSoup(content_security_policy(), "html.parser").meta)
    assert "script-src 'none'" in meta["content"] and "object-src 'none'" in meta["content"]
    assert soup.head.find("meta", attrs={"http-equiv": "Content-Security-Policy"}) is meta  # in <head>
    assert not soup.find_all("script")  # nothing the policy would block
    # the content is all there: verdict, one row per category, the three figures, failed tests, config
    assert soup.h1.get_text().startswith("Agent evaluation")
    assert "Overall score" in soup.p.get_text()
    rows = [tr.find_all("td")[0].get_text() for tr in soup.table.find_all("tr")[1:]]
    assert rows == ["functional", "workflow"]
    images = soup.find_all("img")
    assert len(images) == 3 and all(base64.b64decode(i["src"].split(",", 1)[1])[:4] == b"\x89PNG" for i in images)
    assert [h.get_text() for h in soup.find_all("h2")] == ["Failed tests", "Metrics", "Configuration"]


def _dump_dom(path: Path, profile: Path) -> str:
    return subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-extensions",
            f"--user-data-dir={profile}",
            "--virtual-time-budget=2000",
            "--dump-dom",
            path.resolve().as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout


def test_report_csp_stops_a_payload_that_became_markup(report: Path, tmp_path: Path) -> None:
    if not Path(CHROMIUM).exists():
        pytest.skip("chromium is not installed (apt-get install -y chromium; make test installs it)")
    # as if an escaping bug let an agent's note through as markup
    page = report.read_text("utf-8").replace("<h2>Failed tests</h2>", f"<h2>Failed tests</h2>{IMG}", 1)
    hostile = tmp_path / "report.html"
    hostile.write_text(page, "utf-8")
    dom = _dump_dom(hostile, tmp_path / "profile")
    title = BeautifulSoup(dom, "html.parser").title.get_text()
    assert title.startswith("Agent evaluation") and "PWNED" not in title
    # the control: the same page without the policy runs the handler (so the check can see it)
    bare = tmp_path / "bare.html"
    bare.write_text(page.replace(content_security_policy(), ""), "utf-8")
    assert "PWNED" in BeautifulSoup(_dump_dom(bare, tmp_path / "profile2"), "html.parser").title.get_text()
