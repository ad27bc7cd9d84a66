"""Memory is counted wherever it lives, and limits never fail correct code (issue 29, item 5).

Before: memory files written with ``write()`` were not counted by the address-space limit (a
sample held 1 GiB against 512 MB), nor were tmpfs and shared memory; every thread reserved an
8 MiB stack and a 64 MiB malloc arena (and the process limit was 64), so a correct solution
with 64 threads failed; output past 16 MiB raised ``OSError`` in the candidate.
"""

from __future__ import annotations

import os
import textwrap

import pytest

from _sandbox_target import SandboxPool
from evalcore.sandbox.pool import _to_result


def _job(source: str, test: str, **extra) -> dict:
    job = {"mode": "check", "source": source, "prompt": "", "test": test, "entry_point": "f", "timeout_s": 20.0}
    job.update(extra)
    return job


@pytest.fixture(scope="module")
def pool():
    p = SandboxPool(1)
    yield p
    p.close()


def _skip_unreadable(pool: SandboxPool, result: object) -> None:
    """As root in the weak fallback the sample's private uid cannot read an interpreter kept
    under /root (docs/sandbox.md): modules the zygote did not preload are missing there."""
    reason = getattr(result, "reason", None) or ""
    if "ModuleNotFoundError" in reason and not pool.isolation.get("namespaces") and os.geteuid() == 0:
        pytest.skip("the weak fallback's private uid cannot read this interpreter's modules")


def _uncounted(pool: SandboxPool) -> bool:
    """The host gave no memory cgroup (the report says what holds instead)."""
    return "address-space limit only" in pool.isolation.get("memory", "")


def test_a_correct_solution_with_64_threads_passes(pool: SandboxPool) -> None:
    program = textwrap.dedent(
        """
        import threading
        from concurrent.futures import ThreadPoolExecutor
        def f(xs):
            barrier = threading.Barrier(64)  # all 64 threads alive at once
            def square(x):
                barrier.wait(timeout=10)
                return [x * x] * 1000  # each allocates from malloc in its own thread
            with ThreadPoolExecutor(max_workers=64) as ex:
                return [r[0] for r in ex.map(square, xs)]
        """
    )
    test = "def check(candidate):\n    assert candidate(list(range(64))) == [x * x for x in range(64)]\n"
    (reply,) = pool.map([_job(program, test)])
    result = _to_result(reply)
    _skip_unreadable(pool, result)
    assert result.completed, result


def test_output_past_the_cap_is_truncated_and_marked_never_an_error(pool: SandboxPool) -> None:
    program = textwrap.dedent(
        """
        import sys
        def f():
            line = "y" * 1023 + "\\n"
            for _ in range(20 * 1024):  # 20 MiB, past the 16 MiB cap
                print(line, end="")
            sys.stderr.write("e" * (17 << 20))
            return 42
        """
    )
    (reply,) = pool.map([_job(program, "def check(candidate):\n    assert candidate() == 42\n")])
    result = _to_result(reply)
    _skip_unreadable(pool, result)
    assert result.completed, result
    assert result.stdout.startswith("y" * 1023 + "\n")
    assert "[... output truncated: at least" in result.stdout
    assert "[... output truncated: at least" in result.stderr


def test_memory_files_are_refused_to_check_candidates(pool: SandboxPool) -> None:
    program = textwrap.dedent(
        """
        import os
        def f():
            held = []
            for _ in range(64):  # 16 MiB each (the file-size limit), 1 GiB in all
                fd = os.memfd_create("hold")
                os.write(fd, b"x" * (16 << 20))
                held.append(fd)
            return len(held) * 16
        """
    )
    (reply,) = pool.map([_job(program, "def check(candidate):\n    assert candidate() >= 1024\n")])
    result = _to_result(reply)
    assert not result.completed, "a check candidate held 1 GiB in memory files"


SCRIPT_MEMFD = textwrap.dedent(
    """
    import os
    held = []
    for _ in range(64):  # 16 MiB each (the file-size limit), 1 GiB in all
        fd = os.memfd_create("hold")
        os.write(fd, b"x" * (16 << 20))
        held.append(fd)
    print("held", len(held) * 16, "MiB")
    """
)

TMPFS = textwrap.dedent(
    """
    def f():
        block = b"x" * (1 << 20)
        for d in ("/tmp", "/var/tmp", "/dev/shm"):
            for n in range(4):  # 4 files of 15 MiB (the file-size limit is 16 MiB)
                with open(f"{d}/hold{n}", "wb") as fh:
                    for _ in range(15):
                        fh.write(block)
        held = bytearray(180 << 20)  # within the 256 MB address-space limit on its own
        for i in range(0, len(held), 4096):
            held[i] = 1
        return 180 + 180
    """
)


def test_memory_files_of_a_script_are_counted(pool: SandboxPool) -> None:
    (reply,) = pool.map([{"mode": "script", "source": SCRIPT_MEMFD, "timeout_s": 20.0, "memory_mb": 256}])
    result = _to_result(reply)
    assert not result.completed and "held" not in result.stdout, result


def test_tmpfs_and_shared_memory_are_counted(pool: SandboxPool) -> None:
    if _uncounted(pool):
        pytest.skip("no memory cgroup here: scratch tmpfs is bounded by its size only (docs/sandbox.md)")
    (reply,) = pool.map([_job(TMPFS, "def check(candidate):\n    assert candidate() == 360\n", memory_mb=256)])
    result = _to_result(reply)
    assert not result.completed, "a sample held 360 MiB against a 256 MB limit"


def test_a_sample_within_its_memory_passes(pool: SandboxPool) -> None:
    program = "block = bytearray(300 << 20)\nfor i in range(0, len(block), 4096):\n    block[i] = 1\nprint('ok')\n"
    (reply,) = pool.map([{"mode": "script", "source": program, "timeout_s": 20.0, "memory_mb": 512}])
    result = _to_result(reply)
    _skip_unreadable(pool, result)
    assert result.completed and result.stdout.strip() == "ok", result
