"""The checks of a benchmark file's fields (scorer, generation, data paths, the ``prepare`` hook)
and the error that
names the YAML file, line and field: used by :mod:`evalcore.benchmarks._file`, which re-exports
``SCORER_TYPES``."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from string import Formatter
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


_HOOK_RE = re.compile(r"^(?P<module>[A-Za-z_][\w.]*):(?P<function>[A-Za-z_]\w*)$")


def _check_prepare(doc: YamlDoc, raw: Any, base: Path) -> tuple[dict[str, Any], Callable[..., Any]] | None:
    """The ``prepare: module:function`` hook: what a run records of it, and the function.

    The module is ``<module>.py`` beside the benchmark file (as lm-evaluation-harness's
    ``!function utils.process_docs`` finds ``utils.py``), else an importable module.

    Returns:
        ``({"ref", "file", "sha256"}, function)``, or None when the file names no hook.

    Raises:
        EvalcoreError: Not ``module:function``, a module that cannot be imported or a missing
            function, naming the benchmark file, the line of ``prepare`` and the field.
    """
    if raw is None:
        return None
    match = _HOOK_RE.match(raw.strip()) if isinstance(raw, str) else None
    if match is None:
        raise _err(f"must be 'module:function' (a Python function preparing each row), got {raw!r}", doc, "prepare")
    module_name, function = match["module"], match["function"]
    local = base.joinpath(*module_name.split(".")).with_suffix(".py")
    try:
        if local.is_file():
            import importlib.util

            spec = importlib.util.spec_from_file_location(f"evalcore_prepare_{module_name}", local)
            if spec is None or spec.loader is None:
                raise ImportError(f"cannot load {local}")
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        else:
            import importlib

            module = importlib.import_module(module_name)
    except Exception as exc:  # noqa: BLE001 - any failure to import is the user's module
        raise _err(
            f"cannot import module {module_name!r} ({type(exc).__name__}: {exc}); looked for {local.name} beside "
            "the benchmark file and on the Python path",
            doc,
            "prepare",
        ) from None
    hook = getattr(module, function, None)
    if not callable(hook):
        raise _err(f"module {module_name!r} has no function {function!r}", doc, "prepare")
    origin = local if local.is_file() else Path(str(getattr(module, "__file__", "") or module_name))
    record = {
        "ref": f"{module_name}:{function}",
        "file": str(origin),
        "sha256": _sha256(origin) if origin.is_file() else None,
    }
    return record, hook


def _prepared(
    hook: Callable[..., Any], ref: str, rows: list[tuple[int, dict[str, Any]]], file: Path
) -> list[tuple[int, dict[str, Any]]]:
    """Each row through the ``prepare`` hook; a failure names the data file, the row's line and
    the field ``prepare``."""
    out = []
    for line, row in rows:
        try:
            new = hook(dict(row))
        except Exception as exc:  # noqa: BLE001 - the user's function failed on this row
            raise EvalcoreError(
                f"the prepare hook {ref} failed on this row: {type(exc).__name__}: {exc}",
                path=file,
                line=line,
                field="prepare",
            ) from None
        if not isinstance(new, Mapping):
            raise EvalcoreError(
                f"the prepare hook {ref} must return the row as a mapping, got {type(new).__name__}",
                path=file,
                line=line,
                field="prepare",
            )
        out.append((line, {str(k): v for k, v in new.items()}))
    return out


_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def _markers(text: str) -> set[str]:
    """The ``{field}`` markers of a template text."""
    return {name for _, name, _, _ in Formatter().parse(text) if name}


def _check_top(doc: YamlDoc, yaml_path: Path, keys: Sequence[str]) -> str:
    """The file's top level: a mapping of known keys, a name that is not a built-in's, column
    names, a scorer; returns the benchmark's name."""
    if not isinstance(doc.data, dict):
        raise EvalcoreError(
            "a benchmark file is a YAML mapping (data, scorer, prompt ...)", path=yaml_path, line=doc.line()
        )
    data = doc.data
    for key in data:
        if key not in keys:
            raise _err(f"unknown key; allowed: {', '.join(keys)}", doc, str(key))
    name = data.get("name", yaml_path.stem)
    if not isinstance(name, str) or not _NAME_RE.match(name):
        raise _err("letters, digits, '.', '_' and '-' only (at most 64)", doc, "name")
    from evalcore.benchmarks._registry import builtin_names

    if name in builtin_names():
        raise _err(f"{name!r} is a built-in benchmark; choose another name", doc, "name")
    for key in ("id_field", "answer_field", "subject_field"):
        if key in data and (not isinstance(data[key], str) or not data[key]):
            raise _err("must be a column name", doc, key)
    if "scorer" not in data:
        raise _err(f"required: one of {', '.join(SCORER_TYPES)}", doc, field="scorer")
    return name


def _check_prompt(doc: YamlDoc, keys: Sequence[str]) -> dict[str, str]:
    """The ``prompt`` mapping: ``user`` text required, ``system``/``answer`` text if given
    (``answer`` defaults to ``{reference}``)."""
    data = doc.data
    prompt = data.get("prompt")
    if not isinstance(prompt, dict):
        raise _err(
            "required: a mapping with 'user' (and optionally 'system', 'answer')",
            doc,
            *(("prompt",) if "prompt" in data else ()),
            field="prompt",
        )
    for key in prompt:
        if key not in keys:
            raise _err(f"unknown key; allowed: {', '.join(keys)}", doc, "prompt", str(key))
    if not isinstance(prompt.get("user"), str) or not prompt["user"].strip():
        raise _err(
            "required text", doc, *(("prompt", "user") if "user" in prompt else ("prompt",)), field="prompt.user"
        )
    for key in ("system", "answer"):
        if key in prompt and not isinstance(prompt[key], str):
            raise _err("must be text", doc, "prompt", key)
    out = {k: prompt[k] for k in keys if k in prompt}
    out.setdefault("answer", "{reference}")
    return out


def _check_columns(doc: YamlDoc, scorer: Mapping[str, Any], columns: set[str], data_path: Path) -> dict[str, str]:
    """Every column the file names (id, answer, subject, the scorer's) is in the rows; returns
    column -> the key naming it."""
    data = doc.data
    needed: dict[str, str] = {}
    for key in ("id_field", "answer_field", "subject_field"):
        if data.get(key):
            needed[data[key]] = key
    if scorer["type"] == "code":
        for key, default in (("prompt_field", "prompt"), ("test_field", "test"), ("entry_point_field", "entry_point")):
            needed[scorer.get(key, default)] = f"scorer.{key}"
    choices = scorer.get("choices_field")
    if scorer["type"] == "letter" and choices is not None:
        for c in [choices] if isinstance(choices, str) else choices:
            needed[c] = "scorer.choices_field"
    for column, key in needed.items():
        if column not in columns:
            where = tuple(key.split("."))
            raise _err(
                f"names column {column!r}, which the data file {data_path.name} does not have "
                f"(its columns: {', '.join(sorted(columns))})",
                doc,
                *where,
            )
    return needed


def _check_markers(
    doc: YamlDoc, prompt: Mapping[str, str], columns: set[str], derived: set[str], data_path: Path
) -> None:
    """Every ``{field}`` of the template is a plain name the rows (or evalcore) provide."""
    for part, text in prompt.items():
        try:
            markers = _markers(text)
        except ValueError as exc:
            raise _err(
                f"malformed {{field}} marker: {exc} (write literal braces as {{{{ }}}})", doc, "prompt", part
            ) from None
        for marker in sorted(markers):
            if not marker.isidentifier():
                raise _err(f"{{{marker}}} is not a plain field name", doc, "prompt", part)
            if marker not in columns and marker not in derived:
                raise _err(
                    f"the template uses {{{marker}}}, which the rows of {data_path.name} do not "
                    f"have; available: {', '.join(sorted(columns | derived))}",
                    doc,
                    "prompt",
                    part,
                    field=f"prompt.{part}",
                )
