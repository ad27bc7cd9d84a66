"""Figure captions name the colours the figures draw (issue 31 item 10: "green" for teal dots)."""

from __future__ import annotations

import pytest
from matplotlib.colors import to_rgb

from evalcore.agent_eval import figure_category_tests
from evalcore.agent_eval._output import figure_test_distribution

NAMES = {"teal": "#008080", "green": "#008000", "orange": "#ffa500", "red": "#ff0000"}


def _nearest(color) -> str:
    r, g, b = to_rgb(color)
    return min(NAMES, key=lambda n: sum((x - y) ** 2 for x, y in zip((r, g, b), to_rgb(NAMES[n]))))


RESULT = {
    "summary": {"pass_threshold": 0.7},
    "detailed_results": {
        "functional": {
            "score": 0.5,
            "tests": [
                {"name": "ok", "score": 1.0, "passed": True, "critical": False},
                {"name": "low", "score": 0.4, "passed": False, "critical": False},
                {"name": "boom", "score": 0.0, "passed": False, "critical": True},
            ],
        }
    },
}


@pytest.mark.parametrize(
    "draw",
    [lambda: figure_category_tests(RESULT, "functional"), lambda: figure_test_distribution(RESULT)],
    ids=["category", "distribution"],
)
def test_caption_names_every_colour_drawn(draw) -> None:
    fig = draw()
    ax = fig.axes[0]
    title = ax.get_title()
    drawn = [p.get_facecolor() for p in ax.patches]
    for coll in ax.collections:
        drawn.extend(coll.get_facecolors())
    names = {_nearest(c) for c in drawn}
    assert names == {"teal", "orange", "red"}, names
    for name in names:
        assert f"{name} " in title, (name, title)
    assert "green" not in title
