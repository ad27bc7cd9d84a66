"""The ``Examples`` of evalcore.metrics and evalcore.stats run as doctests.

Every public function of the two packages shows a call and its printed result in an
``Examples:`` section (as scikit-learn's docstrings do); this runs them with :mod:`doctest`
(so pytest's configuration need not change) and checks that none is missing.
"""

from __future__ import annotations

import doctest
import importlib
import inspect
import pkgutil

import pytest

PACKAGES = ("evalcore.metrics", "evalcore.stats")


def _modules() -> list[str]:
    names = []
    for package in PACKAGES:
        path = importlib.import_module(package).__path__
        names.extend(f"{package}.{info.name}" for info in pkgutil.iter_modules(path))
    return sorted(names)


def _public_functions() -> list[tuple[str, str]]:
    found = []
    for package in PACKAGES:
        module = importlib.import_module(package)
        for name in module.__all__:
            if inspect.isfunction(getattr(module, name)):
                found.append((package, name))
    return found


@pytest.mark.parametrize("module_name", _modules())
def test_doctests_pass(module_name):
    module = importlib.import_module(module_name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE, verbose=False, report=True)
    assert result.failed == 0, f"{module_name}: {result.failed} of {result.attempted} examples failed (see stdout)"


@pytest.mark.parametrize(("package", "name"), _public_functions())
def test_every_public_function_has_an_example(package, name):
    function = getattr(importlib.import_module(package), name)
    doc = inspect.getdoc(function) or ""
    assert "Examples:" in doc, f"{package}.{name}: no Examples section"
    examples = doctest.DocTestParser().get_examples(doc)
    assert examples, f"{package}.{name}: no >>> example"
    assert any(example.want.strip() for example in examples), f"{package}.{name}: no example shows a result"


def test_the_doctests_can_fail():
    # the runner itself: a wrong printed result is counted as a failure
    def wrong() -> None:
        """>>> 1 + 1
        3
        """

    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(verbose=False)
    for test in finder.find(wrong, "wrong", globs={}):
        runner.run(test, out=lambda _text: None)
    assert runner.summarize(verbose=False).failed == 1


def test_the_packages_have_examples():
    assert len(_public_functions()) >= 45
    attempted = sum(doctest.testmod(importlib.import_module(m), report=False).attempted for m in _modules())
    assert attempted >= 100
