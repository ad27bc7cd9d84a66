"""The name-based loaders left ``evalcore.datasets`` for ``evalcore.benchmarks`` (issue 40).

Reading an old name fails with one line that says where it went, and ``evalcore.datasets``
never imports ``evalcore.benchmarks`` to say so (datasets sits below benchmarks).
"""

from __future__ import annotations

import subprocess
import sys

import pytest

import evalcore.benchmarks
import evalcore.datasets

MOVED = {
    "load": "a benchmark's items by its name",
    "sample_path": "where a benchmark's shipped sample lies",
    "few_shot_pool": "a benchmark's few-shot examples",
    "resolve_source": "which source loading a benchmark would use",
}


@pytest.mark.parametrize("name", sorted(MOVED))
def test_old_name_says_where_it_went(name):
    line = f"evalcore.datasets.{name} moved to evalcore.benchmarks.{name} ({MOVED[name]})"
    with pytest.raises(ImportError) as info:
        getattr(evalcore.datasets, name)
    assert str(info.value) == line
    with pytest.raises(ImportError) as info:  # the form old code uses: the same line, not "cannot import name"
        exec(f"from evalcore.datasets import {name}", {})
    assert str(info.value) == line
    assert name not in evalcore.datasets.__all__
    assert name not in dir(evalcore.datasets)
    assert callable(getattr(evalcore.benchmarks, name))  # the message names a real function


def test_other_names_unchanged():
    from evalcore.datasets._common import read_jsonl

    assert evalcore.datasets.read_jsonl is read_jsonl
    with pytest.raises(AttributeError, match="^module 'evalcore.datasets' has no attribute 'no_such_name'$"):
        evalcore.datasets.no_such_name  # noqa: B018


def test_the_message_needs_no_upward_import():
    # a fresh interpreter: reading every old name leaves evalcore.benchmarks unimported
    code = (
        "import sys, evalcore.datasets as d\n"
        f"for n in {sorted(MOVED)!r}:\n"
        "    try:\n"
        "        getattr(d, n)\n"
        "    except ImportError as e:\n"
        "        print(e)\n"
        "print('evalcore.benchmarks' in sys.modules)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    lines = proc.stdout.splitlines()
    assert lines[-1] == "False"
    assert lines[:-1] == [f"evalcore.datasets.{n} moved to evalcore.benchmarks.{n} ({MOVED[n]})" for n in sorted(MOVED)]
