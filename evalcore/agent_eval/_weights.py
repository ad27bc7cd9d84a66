"""The seven agent-evaluation categories, their default weights and the pass threshold.

A module of its own, importing nothing: the command line's parser names the categories in its
help, and building it must not import the suite machinery (``evalcore --help`` and every
``evalcore score …`` build the whole parser).
"""

from __future__ import annotations

CATEGORY_WEIGHTS: dict[str, float] = {
    "functional": 0.25,
    "synthesis": 0.20,
    "retrieval": 0.15,
    "workflow": 0.15,
    "learning": 0.10,
    "robustness": 0.10,
    "performance": 0.05,
}
"""Default category weights (sum to 1)."""

CATEGORIES: tuple[str, ...] = tuple(CATEGORY_WEIGHTS)
"""The seven categories, in run order (the keys of :data:`CATEGORY_WEIGHTS`)."""
PASS_THRESHOLD: float = 0.7
"""Score at which a test, a category and the system pass."""
