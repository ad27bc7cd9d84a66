"""Docs as tests (issue 39): every command in a ```bash/```sh/```console/```shell fence of README.md
and docs/*.md runs, in a fresh working folder (a copy of params/, notebooks/ and pyproject.toml)
with the virtual environment first on PATH, and must exit 0.

A fence may be preceded by HTML comments (invisible on the rendered page) that say how to test it:

* ``<!-- docs-test: skip (REASON) -->``: the whole fence is left out (it needs the network, a GPU,
  another machine, a server in another terminal, the user's own files, or a long time);
* ``<!-- docs-test: skip 2,4-5 (REASON) -->``: those commands of the fence (1-based) are left out;
* ``<!-- docs-test: setup: COMMAND -->``: a shell command run first (e.g. writes the file the
  documented command reads);
* ``<!-- docs-test: before 3: COMMAND -->``: a shell command run just before command 3;
* ``<!-- docs-test: timeout SECONDS -->``: the limit per command (default 900 s).

The fast test below parses every page (it runs in ``make unit``) and lists what is skipped and why;
the fences themselves run as slow tests (``make test``), one test per fence: the model commands use
the embedded ``local:smollm2`` with the limits the page shows.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELL_LANGS = {"bash", "sh", "console", "shell"}
DEFAULT_TIMEOUT_S = 900
_FENCE = re.compile(r"^\s*```(?P<lang>[A-Za-z0-9_+-]*)\s*$")
_DIRECTIVE = re.compile(r"^\s*<!--\s*docs-test:\s*(?P<body>.*?)\s*-->\s*$")
_SKIP = re.compile(r"^skip(?:\s+(?P<which>[0-9][0-9,\s-]*?))?\s*\((?P<reason>.+)\)$")
_BEFORE = re.compile(r"^(?:setup|before\s+(?P<n>[0-9]+)):\s*(?P<command>.+)$")
_TIMEOUT = re.compile(r"^timeout\s+(?P<s>[0-9]+)$")


@dataclass
class Command:
    """One command of a fence: its text (continuation lines joined) and its line in the page."""

    text: str
    line: int


@dataclass
class Fence:
    """A shell fence of a page with its docs-test directives."""

    page: str
    line: int
    commands: list[Command]
    skip_all: str | None = None
    skipped: dict[int, str] = field(default_factory=dict)  # command number (1-based) -> reason
    before: dict[int, list[str]] = field(default_factory=dict)  # command number -> shell commands
    timeout_s: int = DEFAULT_TIMEOUT_S

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def _numbers(spec: str, where: str) -> list[int]:
    out: list[int] = []
    for part in spec.replace(" ", "").split(","):
        low, _, high = part.partition("-")
        if not low.isdigit() or (high and not high.isdigit()):
            raise ValueError(f"{where}: bad command numbers {spec!r} in a docs-test skip")
        out.extend(range(int(low), int(high or low) + 1))
    return out


def _commands(body: list[str], first_line: int, lang: str) -> list[Command]:
    commands: list[Command] = []
    pending: list[str] = []
    start = first_line
    for offset, raw in enumerate(body):
        text = raw[2:] if lang == "console" and raw.startswith("$ ") else raw
        if not pending:
            start = first_line + offset
            if not text.strip() or text.strip().startswith("#"):
                continue
        if text.rstrip().endswith("\\"):
            pending.append(text.rstrip()[:-1])
            continue
        pending.append(text)
        commands.append(Command(" ".join(p.strip() for p in pending), start))
        pending = []
    if pending:
        commands.append(Command(" ".join(p.strip() for p in pending), start))
    return commands


def parse_page(path: Path) -> list[Fence]:
    """The shell fences of one page, with their directives.

    Raises:
        ValueError: A malformed docs-test directive (naming the page and line).
    """
    page = str(path.relative_to(ROOT))
    lines = path.read_text(encoding="utf-8").split("\n")
    fences: list[Fence] = []
    i = 0
    while i < len(lines):
        match = _FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        end = i + 1
        while end < len(lines) and lines[end].strip() != "```":
            end += 1
        lang = match.group("lang").lower()
        if lang in SHELL_LANGS:
            fence = Fence(page, i + 1, _commands(lines[i + 1 : end], i + 2, lang))
            directives: list[tuple[int, str]] = []
            k = i - 1
            while k >= 0 and (not lines[k].strip() or _DIRECTIVE.match(lines[k])):
                found = _DIRECTIVE.match(lines[k])
                if found:
                    directives.insert(0, (k + 1, found.group("body")))
                k -= 1
            for line, body in directives:
                _apply(fence, body, f"{page}:{line}")
            fences.append(fence)
        i = end + 1
    return fences


def _apply(fence: Fence, body: str, where: str) -> None:
    if skip := _SKIP.match(body):
        if skip.group("which"):
            for n in _numbers(skip.group("which"), where):
                if not 1 <= n <= len(fence.commands):
                    raise ValueError(f"{where}: the fence has {len(fence.commands)} commands, not {n}")
                fence.skipped[n] = skip.group("reason").strip()
        else:
            fence.skip_all = skip.group("reason").strip()
    elif before := _BEFORE.match(body):
        n = int(before.group("n") or 1)
        if not 1 <= n <= len(fence.commands):
            raise ValueError(f"{where}: the fence has {len(fence.commands)} commands, not {n}")
        fence.before.setdefault(n, []).append(before.group("command"))
    elif timeout := _TIMEOUT.match(body):
        fence.timeout_s = int(timeout.group("s"))
    else:
        raise ValueError(
            f"{where}: unknown docs-test directive {body!r} "
            "(skip (REASON), skip N,M-K (REASON), setup: CMD, before N: CMD, timeout S)"
        )


def all_fences() -> list[Fence]:
    """Every shell fence of README.md and docs/*.md."""
    return [fence for page in PAGES for fence in parse_page(page)]


def test_every_shell_fence_is_run_or_says_why_not(capsys) -> None:
    """The pages parse, every fence has commands, every skip gives its reason: listed here."""
    fences = all_fences()
    assert len(fences) >= 20, [f.where for f in fences]  # the pages' fences were found
    listed = []
    for fence in fences:
        assert fence.commands, f"{fence.where}: a shell fence without a command"
        if fence.skip_all:
            count = f"{len(fence.commands)} command{'s' if len(fence.commands) != 1 else ''}"
            listed.append(f"{fence.where}: whole fence ({count}): {fence.skip_all}")
        for n, reason in sorted(fence.skipped.items()):
            listed.append(f"{fence.where} command {n} ({fence.commands[n - 1].text[:60]}): {reason}")
        assert fence.skip_all or len(fence.skipped) < len(fence.commands), (
            f"{fence.where}: every command is skipped one by one: skip the fence with one reason"
        )
    run = sum(len(f.commands) - len(f.skipped) for f in fences if not f.skip_all)
    assert run >= 15, f"only {run} documented commands are run"
    with capsys.disabled():
        print(f"\ndocs commands run: {run}; left out, with the reason:\n  " + "\n  ".join(listed))


def test_directives_are_checked() -> None:
    fence = Fence("p.md", 1, [Command("evalcore a", 2), Command("evalcore b", 3)])
    _apply(fence, "skip 2 (needs the network)", "p.md:0")
    _apply(fence, "before 2: touch x", "p.md:0")
    _apply(fence, "timeout 30", "p.md:0")
    assert (fence.skipped, fence.before, fence.timeout_s) == ({2: "needs the network"}, {2: ["touch x"]}, 30)
    for bad in ("skip", "skip 3 (no such command)", "before 0: x", "run it twice"):
        with pytest.raises(ValueError, match="p.md:0"):
            _apply(fence, bad, "p.md:0")
    assert [c.text for c in _commands(["a \\", "  --b 1", "", "# note", "c  # x"], 10, "bash")] == [
        "a --b 1",
        "c  # x",
    ]
    assert [c.line for c in _commands(["a \\", "  --b 1", "", "# note", "c  # x"], 10, "bash")] == [10, 14]


def _marks(fence: Fence) -> list[pytest.MarkDecorator]:
    if fence.skip_all:
        return [pytest.mark.skip(reason=f"{fence.where}: {fence.skip_all}")]
    text = " ".join(c.text for c in fence.commands)
    marks = [pytest.mark.slow]
    if "notebooks run" in text or "evalcore report" in text:
        marks.append(pytest.mark.notebooks)
    if "local:" in text or "notebooks run" in text:
        marks.append(pytest.mark.integration)
    return marks


def _workspace(tmp_path: Path) -> Path:
    """A working folder like a checkout: the parameter files, notebooks and pyproject.toml."""
    work = tmp_path / "work"
    work.mkdir()
    shutil.copy2(ROOT / "pyproject.toml", work / "pyproject.toml")
    for folder in ("params", "notebooks"):
        shutil.copytree(ROOT / folder, work / folder, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    return work


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    # the pages' commands need no network: the shipped samples stand in for the HF datasets
    env.update({"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "MPLBACKEND": "Agg"})
    env.pop("EVALCORE_CACHE", None)  # each working folder keeps its own response cache
    return env


def _run(command: str, work: Path, fence: Fence, what: str) -> None:
    try:
        done = subprocess.run(
            ["bash", "-c", command],
            cwd=work,
            env=_env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=fence.timeout_s,
        )
    except subprocess.TimeoutExpired as exc:
        out = (exc.stdout or b"")[-3000:] if isinstance(exc.stdout, bytes) else (exc.stdout or "")[-3000:]
        pytest.fail(f"{what}: `{command}` did not finish in {fence.timeout_s} s (in {work})\n{out}")
    if done.returncode != 0:
        output = (done.stdout + done.stderr)[-4000:]
        pytest.fail(f"{what}: `{command}` exited {done.returncode} (in {work})\n{output}")


@pytest.mark.parametrize("fence", [pytest.param(f, marks=_marks(f), id=f.where) for f in all_fences()])
def test_documented_commands_run(fence: Fence, tmp_path: Path) -> None:
    """Each command of the fence, in order, in one working folder: exit status 0."""
    work = _workspace(tmp_path)
    for n, command in enumerate(fence.commands, start=1):
        where = f"{fence.page}:{command.line}"
        for setup in fence.before.get(n, []):
            _run(setup, work, fence, f"{where} (docs-test set-up before command {n})")
        if n in fence.skipped:
            continue
        _run(command.text, work, fence, where)
