"""The /etc entries of the check candidates' tmpfs copy have one source: the worker's view
(``fsview._ETC_CHECK``, a part of ``fsview._ETC``); ``view.py`` reads it, keeping no copy."""

from __future__ import annotations

from evalcore.sandbox import fsview, view


def test_the_copy_takes_its_etc_entries_from_the_workers_view() -> None:
    assert view._ETC is fsview._ETC_CHECK
    assert set(fsview._ETC_CHECK) <= fsview._ETC
    assert len(set(fsview._ETC_CHECK)) == len(fsview._ETC_CHECK) == 18


def test_the_copy_leaves_out_what_only_the_samples_programs_read() -> None:
    left_out = fsview._ETC - set(view._ETC)
    assert len(left_out) == 10 and {"ssl", "fonts", "alternatives", "matplotlibrc"} <= left_out
