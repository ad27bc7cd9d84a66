"""The sandbox as an unprivileged user: a few boundary tests rerun as ``nobody`` (issue 12).

Run as root (``pytest -m integration``), this reruns a subset of ``test_sandbox_boundary.py``
under ``runuser -u nobody``: the user-namespace isolation, and the weak fallback's seccomp
filters where the sample runs as the same user as evalcore. Where the interpreter lies under a
directory ``nobody`` cannot enter (pyenv in ``/root``, mode 700), the rerun gets a private
mount namespace (``unshare -m``) in which that directory is an empty tmpfs with only the
interpreter's directory bound back: nothing on the host changes. Skipped (with the reason)
when not root, without ``runuser``/``unshare``, or without a ``nobody`` user.
"""

from __future__ import annotations

import pytest

from _as_nobody import rerun_as_nobody

pytestmark = pytest.mark.integration

# A few boundary tests: a forged-pass route, hiding the project, correct code (numpy,
# dataclasses), capabilities and filters, and the fallback's signal and exec confinement.
SUBSET = (
    "rebinding_the_harness_globals or project_and_working_directory_are_hidden"
    " or (correct_code_passes and (numpy or dataclass))"
    " or samples_hold_no_capabilities or signals_nothing_but_itself"
    " or script_samples_without_namespaces"
)


def test_boundary_subset_passes_as_nobody() -> None:
    rerun_as_nobody(["tests/sandbox/test_sandbox_boundary.py", "-k", SUBSET], timeout=150)
