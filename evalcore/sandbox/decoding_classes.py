"""The classes the decoder hands the test for a candidate's named tuples, dataclass instances
and defaultdict factories: the test's own class where it defines one, else one made here, from a
bounded cache.

Split from :mod:`.decoding` (which re-exports these names); imported on both sides of the
boundary, so it imports only the standard library's always-loaded modules and :mod:`.framing`.
"""

from __future__ import annotations

import importlib
import sys

from .framing import MAX_CLASS_FIELDS, MAX_NAME_CHARS, DataError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _import(name: str) -> Any:
    module = sys.modules.get(name)
    return module if module is not None else importlib.import_module(name)


# Classes made here for named tuples and dataclasses the test does not define, by (kind, name,
# fields): a small LRU, bounded in classes and in fields all together (a class costs ~0.25 KiB
# a field for a named tuple, ~0.5 KiB for a dataclass: at most ~2 MiB held), never a cache
# that a candidate fills with its own large classes (issue 42: 256 named tuples of 200,000
# fields grew a worker from 12 MiB to 1.2 GiB).
_MADE: dict[Any, Any] = {}
_MADE_MAX_CLASSES = 64
_MADE_MAX_FIELDS = 4096


def _made_class(kind: str, name: str, fields: tuple[Any, ...]) -> type:
    key = (kind, name, fields)
    cls = _MADE.pop(key, None)  # re-inserted below: the newest last
    if cls is None:
        if kind == "namedtuple":
            cls = _import("collections").namedtuple(name, fields)
        else:
            dataclasses = _import("dataclasses")
            cls = dataclasses.make_dataclass(name, fields)
        cls.__module__ = "__candidate__"
    _MADE[key] = cls
    held = sum(len(k[2]) for k in _MADE)
    while len(_MADE) > _MADE_MAX_CLASSES or held > _MADE_MAX_FIELDS:
        oldest = next(iter(_MADE))
        held -= len(oldest[2])
        del _MADE[oldest]
    return cls


def _class_bounds(what: str, name: str, fields: tuple[Any, ...]) -> None:
    """Refuse a class the candidate describes that would cost the worker more than a bounded
    amount to build (checked before any C call on the fields: ``make_dataclass`` compiles
    functions quadratic in their number, 60,000 fields took 20 s that no alarm interrupts)."""
    if len(fields) > MAX_CLASS_FIELDS:
        raise DataError(
            f"the candidate returned a {what} {name[:MAX_NAME_CHARS]} of {len(fields)} fields; a {what} crosses"
            f" with at most {MAX_CLASS_FIELDS} fields unless the prompt defines that class"
        )
    if len(name) > MAX_NAME_CHARS or any(len(f) > MAX_NAME_CHARS for f in fields if type(f) is str):
        raise DataError(f"the candidate returned a {what} with a name longer than {MAX_NAME_CHARS} characters")


def _own_class(named_tuple: bool, name: str, fields: tuple[Any, ...], namespace: dict[Any, Any] | None) -> type | None:
    """The test's own class of that name when it has one with these fields (the prompt's
    ``Point``: the test compares with its instances); None when a class must be made here."""
    cls = namespace.get(name) if type(namespace) is dict else None
    if not isinstance(cls, type):
        return None
    if named_tuple:
        return cls if issubclass(cls, tuple) and getattr(cls, "_fields", None) == fields else None
    dataclasses = _import("dataclasses")
    if dataclasses.is_dataclass(cls) and tuple(f.name for f in dataclasses.fields(cls)) == fields:
        return cls
    return None


def _instance(named_tuple: bool, name: str, fields: tuple[Any, ...], values: tuple[Any, ...], cls: type | None) -> Any:
    """An instance of ``cls`` (the test's own class), else of a class made here."""
    if named_tuple:
        return tuple.__new__(cls or _made_class("namedtuple", name, fields), values)
    obj: Any = object.__new__(cls or _made_class("dataclass", name, fields))
    for field, value in zip(fields, values):
        object.__setattr__(obj, field, value)  # frozen ones too; no __init__ or __post_init__ runs
    return obj


class _Uncrossed:
    """The ``default_factory`` of a candidate's defaultdict whose factory is its own function:
    equality and lookups of present keys work; a missing key fails with this reason."""

    __slots__ = ("what",)

    def __init__(self, what: str) -> None:
        self.what = what

    def __call__(self) -> Any:
        raise TypeError(
            f"the candidate's defaultdict has a default_factory ({self.what}) that cannot cross the process"
            " boundary (a builtin type crosses, and a function that returns the same plain data every time)"
        )

    def __repr__(self) -> str:
        return f"<the candidate's {self.what}>"
