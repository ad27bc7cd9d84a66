"""Helpers of tests/cluster/: sample files, free ports, processes left behind."""

from __future__ import annotations

import json
import os
import signal
import socket
import time
from pathlib import Path

CORPUS = Path(__file__).resolve().parent / "evaluators" / "data" / "humaneval_corpus.jsonl"
TIMEOUT_S = 2.0

# Wrong and hostile completions of HumanEval/0 (has_close_elements): a timeout, a crash, an
# output flood, an exit that pretends success, a wrong answer.
HOSTILE = [
    "    while True:\n        pass\n",
    "    import os\n    os.kill(os.getpid(), 9)\n",
    "    import sys\n    sys.stdout.write('x' * 20_000_000)\n    sys.stderr.write('y' * 5_000_000)\n    return True\n",
    "    raise SystemExit(0)\n",
    "    return False\n",
    "    import os\n    os._exit(0)\n",
    "    def f(n):\n        return f(n + 1)\n    return f(0)\n",
]


def corpus_rows(n: int) -> list[dict]:
    rows = []
    with open(CORPUS, encoding="utf-8") as fh:
        for line in fh:
            obj = json.loads(line)
            rows.append({"task_id": obj["task_id"], "completion": obj["completion"]})
            if len(rows) >= n:
                break
    return rows


def write_samples(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def slow_rows(n: int, seconds: float = 0.4) -> list[dict]:
    """Samples of HumanEval/0 that each take ``seconds`` (the canonical answer after a sleep)."""
    body = (
        f"    import time\n    time.sleep({seconds})\n"
        "    return any(abs(a - b) < threshold for i, a in enumerate(numbers) for b in numbers[i + 1:])\n"
    )
    return [{"task_id": "HumanEval/0", "completion": body + f"    # {i}\n"} for i in range(n)]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def descendants() -> set[int]:
    import psutil

    out = set()
    for proc in psutil.Process().children(recursive=True):
        try:
            if "multiprocessing.resource_tracker" in " ".join(proc.cmdline()):
                continue  # multiprocessing's helper: it lives as long as this process, by design
        except psutil.Error:
            continue
        out.add(proc.pid)
    return out


def wait_gone(pids: set[int], within: float = 15.0) -> set[int]:
    """The pids still alive (not zombies) after ``within`` seconds."""
    import psutil

    deadline = time.monotonic() + within
    alive = set(pids)
    while alive and time.monotonic() < deadline:
        alive = {p for p in alive if psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE}
        time.sleep(0.1)
    return alive


def kill_all(pids: set[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def describe(pids: set[int]) -> dict[int, str]:
    """Each pid's command line (for a failure message)."""
    import psutil

    out = {}
    for pid in pids:
        try:
            out[pid] = " ".join(psutil.Process(pid).cmdline())[:200]
        except psutil.Error:
            out[pid] = "?"
    return out


MARK_ENV = "EVALCORE_TEST_PROCESS_MARK"


def marked(mark: str) -> set[int]:
    """Live processes (not zombies) whose environment holds ``MARK_ENV=mark`` (a /proc scan:
    finds a process started by the marked one even when it was re-parented), this one excepted."""
    needle = f"{MARK_ENV}={mark}".encode()
    out = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as fh:
                env = fh.read().split(b"\0")
            with open(f"/proc/{entry}/stat", "rb") as fh:
                state = fh.read().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if needle in env and state not in (b"Z", b"X"):
            out.add(int(entry))
    return out


def atexit_probe(folder: Path) -> dict[str, str]:
    """Environment for a child Python whose interpreter shutdown leaves a trace: a
    ``sitecustomize`` registers an exit handler that writes ``folder/<pid>``; a process that ends
    with ``os._exit`` (or a signal) writes nothing (see :func:`shut_down_normally`)."""
    site = folder / "atexit-site"
    site.mkdir(parents=True, exist_ok=True)
    (site / "sitecustomize.py").write_text(
        "import atexit, os\n"
        f"atexit.register(lambda: open(os.path.join({str(folder)!r}, str(os.getpid())), 'w').close())\n"
    )
    path = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH", "")) if p)
    return {"PYTHONPATH": path}


def shut_down_normally(folder: Path, pid: int) -> bool:
    """Whether process ``pid`` (started with :func:`atexit_probe`'s environment) ran its exit handlers."""
    return (folder / str(pid)).exists()
