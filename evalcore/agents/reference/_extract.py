"""Argument extraction: dedicated parsers for the starter tools, the model, and a regex fallback."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

_NUMBER = re.compile(r"(?<![\w.])[-+−]?\d+(?:,\d{3})*(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w])|(?<![\w.])[-+]?\.\d+")
_QUOTED = re.compile(r"\"([^\"]*)\"|\u201c([^\u201d]*)\u201d|(?<![A-Za-z])'([^']*)'|\u2018([^\u2019]*)\u2019")


@dataclass(frozen=True)
class Param:
    """One parameter of a tool's function: its name, annotation text and whether it has a default."""

    name: str
    annotation: str
    required: bool


@dataclass
class Extraction:
    """The outcome of argument extraction.

    Attributes:
        args: The arguments found.
        missing: Required parameters no value was found for (→ ask for clarification).
        method: "parser", "model" or "regex".
    """

    args: dict[str, Any] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    method: str = ""


def parse_number(text: str) -> int | float:
    """Parse a number literal ("1,000" → 1000, "2.5" → 2.5, "−3" → -3)."""
    t = text.replace(",", "").replace("−", "-")
    if re.fullmatch(r"[-+]?\d+", t):
        return int(t)
    return float(t)


def find_numbers(text: str) -> list[tuple[int, int, int | float]]:
    """Every number literal in ``text`` as ``(start, end, value)``, in order."""
    return [(m.start(), m.end(), parse_number(m.group(0))) for m in _NUMBER.finditer(text)]


def find_quoted(text: str) -> list[str]:
    """Every quoted string in ``text`` (straight or curly, single or double quotes), in order."""
    return [next(g for g in m.groups() if g is not None) for m in _QUOTED.finditer(text)]


def function_params(code: str, name: str) -> list[Param] | None:
    """The parameters of function ``name`` in ``code`` (None when not found or unparsable)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            args = node.args.posonlyargs + node.args.args
            n_defaults = len(node.args.defaults)
            out = []
            for i, a in enumerate(args):
                ann = ast.unparse(a.annotation) if a.annotation is not None else ""
                out.append(Param(a.arg, ann, i < len(args) - n_defaults))
            for a, d in zip(node.args.kwonlyargs, node.args.kw_defaults):
                ann = ast.unparse(a.annotation) if a.annotation is not None else ""
                out.append(Param(a.arg, ann, d is None))
            return out
    return None


def _kind(annotation: str) -> str:
    a = annotation.replace(" ", "").lower()
    if a.startswith(("list", "tuple", "sequence", "typing.list")):
        return "list"
    if a in ("int", "float", "int|float", "float|int", "complex", "number"):
        return "number"
    if a == "bool":
        return "bool"
    if a == "str":
        return "str"
    return "any"


def coerce(value: Any, annotation: str) -> Any:
    """Coerce a JSON value to a parameter's annotation where that is lossless; else return it as is."""
    kind = _kind(annotation)
    if kind == "number" and isinstance(value, str):
        try:
            return parse_number(value.strip())
        except ValueError:
            return value
    if kind == "str" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    if kind == "list" and isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            return value
        return parsed if isinstance(parsed, list) else value
    return value


# --------------------------------------------------------------------------- starter parsers
def _parse_percentage(text: str) -> Extraction:
    nums = find_numbers(text)
    percent_at = [
        i for i, (_, end, _) in enumerate(nums) if re.match(r"\s*(%|percent\b|per\s*cent\b|pct\b)", text[end:], re.I)
    ]
    args: dict[str, Any] = {}
    if percent_at:
        args["percent"] = nums[percent_at[0]][2]
        rest = [n for i, n in enumerate(nums) if i != percent_at[0]]
        if rest:
            args["value"] = rest[0][2]
    return Extraction(args, [p for p in ("percent", "value") if p not in args], "parser")


def _parse_factorial(text: str) -> Extraction:
    nums = find_numbers(text)
    if nums:
        return Extraction({"n": nums[0][2]}, [], "parser")
    return Extraction({}, ["n"], "parser")


_REVERSE_TAIL = re.compile(
    r"\breverse[sd]?\b(?:\s+(?:the|this|a))?(?:\s+(?:string|word|text|phrase|letters|characters|"
    r"sentence|order of))?(?:\s+(?:of|in))?(?:\s+the)?(?:\s+(?:string|word|text|phrase))?[\s:]+(.+)$",
    re.I,
)


def _parse_reverse(text: str) -> Extraction:
    quoted = find_quoted(text)
    if quoted:
        return Extraction({"text": quoted[0]}, [], "parser")
    m = _REVERSE_TAIL.search(text.strip())
    if m:
        tail = m.group(1).strip().rstrip("?.!").strip()
        if tail and tail.lower() not in {"it", "that", "this", "the string", "a string", "string"}:
            return Extraction({"text": tail}, [], "parser")
    return Extraction({}, ["text"], "parser")


_UNIT = re.compile(r"(?<![a-z])°?\s*(celsius|centigrade|fahrenheit|kelvin|c|f|k)(?![a-z])", re.I)
_UNIT_CODE = {"celsius": "C", "centigrade": "C", "c": "C", "fahrenheit": "F", "f": "F", "kelvin": "K", "k": "K"}


def _parse_temperature(text: str) -> Extraction:
    nums = find_numbers(text)
    units = [(m.start(), m.end(), _UNIT_CODE[m.group(1).lower()]) for m in _UNIT.finditer(text)]
    args: dict[str, Any] = {}
    if nums:
        start, end, value = nums[0]
        args["value"] = value
        after = [
            u
            for u in units
            if u[0] >= end and u[0] - end <= 12 and re.fullmatch(r"[\s°]*(degrees?\s*)?", text[end : u[0]], re.I)
        ]
        if after:
            src = after[0]
            args["from_unit"] = src[2]
            others = [u for u in units if u is not src]
            if others:
                args["to_unit"] = others[0][2]
    missing = [p for p in ("value", "from_unit", "to_unit") if p not in args]
    return Extraction(args, missing, "parser")


STARTER_PARSERS: dict[str, Callable[[str], Extraction]] = {
    "percentage": _parse_percentage,
    "factorial": _parse_factorial,
    "reverse_string": _parse_reverse,
    "convert_temperature": _parse_temperature,
}
"""Deterministic argument parsers for the starter tools."""


# --------------------------------------------------------------------------- generic fallback
def regex_extract(text: str, params: list[Param]) -> Extraction:
    """Fill parameters from literals in ``text``: numbers for numeric, quoted strings for str.

    A list parameter takes a bracketed literal (``[3, 1, 2]``) or, when it is the only
    parameter, every number in the text. Parameters without a usable annotation take numbers
    first, then quoted strings.
    """
    quoted = find_quoted(text)
    lists: list[list[Any]] = []
    for m in re.finditer(r"\[[^\[\]]*\]", text):
        try:
            val = ast.literal_eval(m.group(0))
        except (ValueError, SyntaxError):
            continue
        if isinstance(val, list):
            lists.append(val)
    # Numbers inside quoted strings or list literals are not separate operands.
    bare = re.sub(r"\[[^\[\]]*\]", " ", _QUOTED.sub(" ", text))
    nums = [n[2] for n in find_numbers(bare)]
    args: dict[str, Any] = {}
    for p in params:
        kind = _kind(p.annotation)
        if kind == "list":
            if lists:
                args[p.name] = lists.pop(0)
            elif len(params) == 1 and nums:
                args[p.name] = list(nums)
                nums = []
        elif kind == "number" and nums:
            args[p.name] = nums.pop(0)
        elif kind == "str" and quoted:
            args[p.name] = quoted.pop(0)
        elif kind == "bool":
            said = re.search(r"\b(true|false)\b", text, re.I)
            if said:
                args[p.name] = said.group(1).lower() == "true"
        elif kind == "any":
            if nums:
                args[p.name] = nums.pop(0)
            elif quoted:
                args[p.name] = quoted.pop(0)
    missing = [p.name for p in params if p.required and p.name not in args]
    return Extraction(args, missing, "regex")


def parse_json_object(text: str) -> dict[str, Any] | None:
    """The first JSON object in a model's reply (fenced or bare), or None."""
    text = re.sub(r"```(?:json)?", "", text)
    start = text.find("{")
    while start != -1:
        depth = 0
        for i in range(start, len(text)):
            if text[i] == "{":
                depth += 1
            elif text[i] == "}":
                depth -= 1
                if depth == 0:
                    try:
                        obj = json.loads(text[start : i + 1])
                    except ValueError:
                        break
                    return obj if isinstance(obj, dict) else None
        start = text.find("{", start + 1)
    return None


def grounded(value: Any, text: str) -> bool:
    """Whether a model-extracted value appears in the request (guards against invented values).

    Numbers must equal a number literal of ``text``; strings must occur in it (case-insensitive);
    lists must have every element grounded; booleans are always accepted.
    """
    if isinstance(value, bool):
        return True
    if isinstance(value, (int, float)):
        return any(abs(n - value) <= 1e-9 * max(1.0, abs(value)) for _, _, n in find_numbers(text))
    if isinstance(value, str):
        return bool(value.strip()) and value.strip().lower() in text.lower()
    if isinstance(value, list):
        return all(grounded(v, text) for v in value)
    return False


def validate_model_args(raw: dict[str, Any] | None, params: list[Param], text: str) -> Extraction | None:
    """Accept a model's argument object only when every value is known, typed and grounded."""
    if raw is None:
        return None
    names = {p.name for p in params}
    if any(k not in names for k in raw):
        return None
    args = {}
    for p in params:
        if p.name in raw:
            value = coerce(raw[p.name], p.annotation)
            if not grounded(value, text):
                return None
            args[p.name] = value
    missing = [p.name for p in params if p.required and p.name not in args]
    return Extraction(args, missing, "model")
