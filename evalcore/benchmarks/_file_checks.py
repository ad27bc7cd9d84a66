"""The checks of a benchmark file's fields (scorer, generation, data paths) and the error that
names the YAML file, line and field: used by :mod:`evalcore.benchmarks._file`, which re-exports
``SCORER_TYPES``."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalcore.errors import EvalcoreError

if TYPE_CHECKING:
    from evalcore._yaml import YamlDoc

SCORER_TYPES = ("number", "letter", "exact", "code")
_SCORER_OPTIONS = {
    "number": (),
    "letter": ("choices_field", "labels", "base", "options"),
    "exact": ("ignore_case", "ignore_punctuation", "ignore_whitespace", "pattern"),
    "code": ("prompt_field", "test_field", "entry_point_field", "timeout_s"),
}
_GENERATION = {
    "max_tokens": int,
    "temperature": float,
    "top_p": float,
    "seed": int,
    "stop": list,
    "logprobs": bool,
    "top_logprobs": int,
}


def _err(message: str, doc: YamlDoc, *path: str | int, field: str | None = None) -> EvalcoreError:
    """An error naming the YAML file, the line of ``path`` (its key's line) and the field."""
    line = None
    if path:
        parent, key = path[:-1], path[-1]
        line = doc.key_lines(*parent).get(str(key)) if isinstance(key, str) else None
        line = line or doc.line(*path)
    return EvalcoreError(message, path=doc.source, line=line, field=field or ".".join(str(p) for p in path) or None)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _check_scorer(doc: YamlDoc, raw: Any) -> dict[str, Any]:
    scorer = {"type": raw} if isinstance(raw, str) else raw
    if not isinstance(scorer, dict) or not isinstance(scorer.get("type"), str):
        raise _err(f"a scorer name ({', '.join(SCORER_TYPES)}) or a mapping with 'type'", doc, "scorer")
    kind = scorer["type"]
    where = ("scorer",) if isinstance(raw, str) else ("scorer", "type")
    if kind not in SCORER_TYPES:
        raise _err(f"unknown scorer {kind!r}; choose one of {', '.join(SCORER_TYPES)}", doc, *where, field="scorer")
    for key in scorer:
        if key != "type" and key not in _SCORER_OPTIONS[kind]:
            allowed = ", ".join(_SCORER_OPTIONS[kind]) or "none"
            raise _err(f"unknown option of the {kind} scorer; options: {allowed}", doc, "scorer", key)
    for key in ("ignore_case", "ignore_punctuation", "ignore_whitespace"):
        if key in scorer and not isinstance(scorer[key], bool):
            raise _err("must be true or false", doc, "scorer", key)
    if scorer.get("pattern") is not None:
        try:
            re.compile(str(scorer["pattern"]))
        except re.error as exc:
            raise _err(f"not a valid regular expression: {exc}", doc, "scorer", "pattern") from None
    for key in ("prompt_field", "test_field", "entry_point_field"):
        if key in scorer and (not isinstance(scorer[key], str) or not scorer[key]):
            raise _err("must be a column name", doc, "scorer", key)
    if "timeout_s" in scorer:
        t = scorer["timeout_s"]
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not 0 < t <= 600:
            raise _err("must be a number of seconds in (0, 600]", doc, "scorer", "timeout_s")
    choices = scorer.get("choices_field")
    if choices is not None and not (
        isinstance(choices, str)
        or (isinstance(choices, list) and len(choices) >= 2 and all(isinstance(c, str) for c in choices))
    ):
        raise _err(
            "a column holding the option list, or a list of columns (one per option)", doc, "scorer", "choices_field"
        )
    if kind == "letter":
        _check_labels(doc, scorer)
    return dict(scorer)


def _check_labels(doc: YamlDoc, scorer: Mapping[str, Any]) -> None:
    """A letter scorer's labels: ``letters`` (the default: references A-J) or ``numbers`` with
    the ``base`` stated (0 or 1: the number of the first option); ``options`` (2 to 10) is how
    many options each question has when the rows do not list them (default 4)."""
    labels = scorer.get("labels", "letters")
    if labels not in ("letters", "numbers"):
        raise _err(f"unknown labels {labels!r}; use letters or numbers", doc, "scorer", "labels")
    base = scorer.get("base")
    if labels == "numbers":
        if "base" not in scorer:
            raise _err("numeric labels need the base stated: base: 0 or base: 1", doc, "scorer", "labels")
        if isinstance(base, bool) or base not in (0, 1):
            raise _err(f"unknown label base {base!r}; use 0 or 1 (the first option's number)", doc, "scorer", "base")
    elif "base" in scorer:
        raise _err("a base applies to numeric labels only (labels: numbers)", doc, "scorer", "base")
    n = scorer.get("options")
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or not 2 <= n <= 10):
        raise _err(f"the number of options must be 2 to 10 (letters A-J), got {n!r}", doc, "scorer", "options")


def _check_generation(doc: YamlDoc, raw: Any) -> dict[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise _err("a mapping of generation settings", doc, "generation")
    out = {}
    for key, value in raw.items():
        want = _GENERATION.get(key)
        if want is None:
            raise _err(f"unknown generation setting; known: {', '.join(_GENERATION)}", doc, "generation", key)
        if want is list and isinstance(value, str):
            value = [value]
        ok = (
            isinstance(value, bool)
            if want is bool
            else isinstance(value, list) and all(isinstance(v, str) for v in value)
            if want is list
            else (value is None or (isinstance(value, int) and not isinstance(value, bool)))
            if key == "seed"
            else isinstance(value, int) and not isinstance(value, bool)
            if want is int
            else isinstance(value, (int, float)) and not isinstance(value, bool)
        )
        if not ok:
            raise _err(
                f"must be {want.__name__ if want is not list else 'a string or a list of strings'}",
                doc,
                "generation",
                key,
            )
        if key == "max_tokens" and value < 1:
            raise _err("must be >= 1", doc, "generation", key)
        out[key] = value
    return out


def _resolve(doc: YamlDoc, key: str, base: Path, suffixes: Sequence[str]) -> Path:
    value = doc.data.get(key)
    if not isinstance(value, str) or not value.strip():
        raise _err("a path to the data file (.jsonl or .csv) is required", doc, key)
    path = Path(value).expanduser()
    path = path if path.is_absolute() else base / path
    if path.suffix.lower() not in suffixes:
        raise _err(f"the data file must end {' or '.join(suffixes)}, got {path.name!r}", doc, key)
    if not path.is_file():
        raise _err(f"no such file: {path}", doc, key)
    return path.resolve()
