"""A user's own benchmark in one YAML file: a JSONL or CSV of items, a scorer, a prompt.

The schema (docs/benchmarks.md shows a worked example)::

    name: unit_conversion         # optional (default: the file's stem); letters, digits, . _ -
    description: ...              # optional, free text
    data: unit_conversion.jsonl   # required: .jsonl or .csv, relative to this file
    id_field: id                  # optional: a column of unique ids (default: a hash of the row)
    answer_field: answer          # the reference column (required unless scorer is code)
    subject_field: category       # optional: the summary adds accuracy per value of this column
    scorer: number                # number | letter | exact | code, or a mapping {type: ..., options}
    prompt:
      system: ...                 # optional
      user: "Question: {question}"   # required; {column} markers are filled from the row
      answer: "{reference}"       # optional: the assistant turn of a few-shot example
    generation:                   # optional generation settings (max_tokens default 256)
      max_tokens: 32
      temperature: 0
    few_shot: examples.jsonl      # optional: worked examples, same columns
    prepare: my_rows:prepare      # optional: a Python function each row goes through first

Scorer options: ``letter`` takes ``choices_field`` (a JSONL column holding the option list, or a
list of CSV columns, one per option: 2 to 10 options, letters A-J), ``labels`` (``letters``, the
default: references are letters; or ``numbers``: option numbers, with ``base`` 0 or 1 stated,
never guessed) and ``options`` (2 to 10: how many options a question has when the rows list
none; default 4); ``exact`` takes ``ignore_case`` (default true),
``ignore_punctuation`` (false), ``ignore_whitespace`` (true: blanks collapsed, ends stripped) and
``pattern`` (a regex: its last match's first group, or the whole match, is the answer);
``code`` takes ``prompt_field``, ``test_field``, ``entry_point_field`` and ``timeout_s``.
``prepare`` names ``module:function`` (``my_rows.py`` beside the file, else an importable
module), called with each data row (a dict) and returning the row to use, as lm-evaluation-
harness's ``!function``; a run records its name and the module's SHA-256.

Every mistake (a missing key or column, an unknown scorer, a template naming a field the rows
lack, an empty data file, a malformed row) raises one :class:`~evalcore.errors.EvalcoreError`
naming the file, the line and the field.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import re
import string
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from string import Formatter
from typing import TYPE_CHECKING, Any

from evalcore.benchmarks._scoring import (
    CodeExecutionScoring,
    ExactMatchScoring,
    by_subject,
    parse_failure_extras,
)
from evalcore.errors import EvalcoreError

if TYPE_CHECKING:
    from evalcore._yaml import YamlDoc
    from evalcore.datasets import Item

_TOP_KEYS = (
    "name",
    "description",
    "data",
    "id_field",
    "answer_field",
    "subject_field",
    "scorer",
    "prompt",
    "generation",
    "few_shot",
    "prepare",
)
_PROMPT_KEYS = ("system", "user", "answer")
DEFAULT_MAX_TOKENS = 256
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


class FileBenchmark:
    """A benchmark read from one YAML file (see the module docstring for the schema).

    Build it with :func:`load_benchmark_file` (checks the file and its data) or, for a recorded
    run, :meth:`from_config` (from what ``config.json`` kept: no file needed to rescore).
    """

    supports_likelihood = False

    def __init__(self, spec: Mapping[str, Any]) -> None:
        self.spec = dict(spec)
        self.name: str = spec["name"]
        self.kind: str = spec["scorer"]["type"]
        self.options: dict[str, Any] = dict(spec["scorer"])
        self.scorer = "code_execution" if self.kind == "code" else "exact_match"
        self.default_max_tokens = int(spec.get("generation", {}).get("max_tokens", DEFAULT_MAX_TOKENS))
        self._scoring: Any = (
            _Code(self.options)
            if self.kind == "code"
            else _Exact(self.options)
            if self.kind == "exact"
            else _Extracted(self.kind, int(self.options.get("options") or 4))
        )
        self._doc: YamlDoc | None = None
        self._prepare: Any = None  # the ``prepare`` hook (set by load_benchmark_file)

    def __repr__(self) -> str:
        return f"<benchmark {self.name} from {self.spec.get('path')}>"

    # --- what a run records -----------------------------------------------------------------

    def to_config(self) -> dict[str, Any]:
        """The spec recorded in ``config.json`` as ``benchmark`` (files by path and SHA-256)."""
        return dict(self.spec)

    @classmethod
    def from_config(cls, spec: Mapping[str, Any]) -> FileBenchmark:
        """The benchmark of a recorded run (``config["benchmark"]``)."""
        try:
            return cls(spec)
        except (KeyError, TypeError) as exc:
            raise EvalcoreError(f"the run's recorded benchmark is incomplete ({exc})", field="benchmark") from None

    # --- the Benchmark protocol ---------------------------------------------------------------

    def default_params(self) -> dict[str, Any]:
        """The file's ``generation`` settings (``max_tokens`` default 256)."""
        return {"max_tokens": DEFAULT_MAX_TOKENS, **self.spec.get("generation", {})}

    def load(
        self,
        split: str = "test",
        limit: int | None = None,
        seed: int = 0,
        source: str = "auto",
        path: str | Path | None = None,
    ) -> list[Item]:
        """The items of the data file (a seeded subset of ``limit``)."""
        from evalcore.datasets import check_limit, seeded_subset

        if split != "test":
            raise EvalcoreError(f"a benchmark file has one split, 'test' (its data file), not {split!r}", field="split")
        if source not in ("auto", "local") or path is not None:
            raise EvalcoreError(
                "a benchmark file names its own data file; source and path do not apply", field="source"
            )
        check_limit(limit)
        items = self._read_items(Path(self.spec["data"]), "test")
        return seeded_subset(items, limit, seed, key=lambda it: it.id)

    def few_shot_pool(self) -> list[Item]:
        """The ``few_shot`` file's items ([] when the file names none)."""
        few = self.spec.get("few_shot")
        return self._read_items(Path(few), "few_shot") if few else []

    def template_doc(self) -> YamlDoc:
        """The file's ``prompt`` as a template document."""
        from evalcore._yaml import parse_yaml

        prompt = dict(self.spec["prompt"])
        data = {"name": self.name, "dataset": self.name, **prompt}
        return parse_yaml(json.dumps(data), self.spec.get("path") or self.name)

    def prompt_fields(self, item: Item) -> dict[str, Any]:
        """``choices_text`` for a letter-choice item (the ``(A) ...`` lines)."""
        from evalcore.datasets import choices_text

        choices = item.fields.get("choices")
        return {"choices_text": choices_text(list(choices))} if isinstance(choices, list) else {}

    def score(self, text: str, reference: Any, fields: Mapping[str, Any]) -> dict[str, Any]:
        """Scores of one reply by the file's scorer."""
        return self._scoring.score(text, reference, fields)

    def score_records(
        self, records: Sequence[dict[str, Any]], *, timeout_s: float = 10.0, workers: int | None = None
    ) -> list[dict[str, Any]]:
        """Scores of recorded samples."""
        timeout = float(self.options.get("timeout_s") or timeout_s)
        return self._scoring.score_records(records, timeout_s=timeout, workers=workers)

    def answers_equal(self, answer: Any, reference: Any) -> bool:
        """Equality by the scorer's rule (numbers numerically, letters ignoring case, strings
        after the file's normalization)."""
        return bool(self._scoring.answers_equal(answer, reference))

    def summary_extras(self, records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """Parse-failure rates (pass@k for code) and, with ``subject_field``, ``by_subject``."""
        out = dict(self._scoring.summary_extras(records))
        if self.spec.get("subject_field"):
            out.update(by_subject(records))
        return out

    # --- reading the data file ------------------------------------------------------------------

    def _rows(self, file: Path) -> list[tuple[int, dict[str, Any]]]:
        from evalcore._io import not_a_file_reason, read_jsonl

        if not file.is_file():
            raise EvalcoreError(not_a_file_reason(file, "data file"), path=file, field="data")
        if file.suffix.lower() == ".csv":
            try:
                with open(file, encoding="utf-8-sig", newline="") as fh:
                    # csv.reader, not DictReader: a row's line is the physical line it starts on
                    # (after a multi-line quoted field or blank lines, line_num is past it)
                    reader = csv.reader(fh)
                    header: list[str] | None = None
                    rows = []
                    end = 0
                    for values in reader:
                        start, end = end + 1, reader.line_num
                        if not values:
                            continue  # a blank line
                        if header is None:
                            header = values
                            continue
                        if len(values) > len(header):
                            raise EvalcoreError("more values than header columns", path=file, line=start)
                        # DictReader's meaning: a missing trailing value is None
                        row = {h: values[i] if i < len(values) else None for i, h in enumerate(header)}
                        rows.append((start, row))
            except UnicodeDecodeError as exc:
                from evalcore._io import first_undecodable_line

                raise EvalcoreError(
                    f"not UTF-8 text: {exc.reason}", path=file, line=first_undecodable_line(file)
                ) from None
            except csv.Error as exc:
                raise EvalcoreError(f"malformed CSV: {exc}", path=file, line=reader.line_num or None) from None
        else:
            rows = list(read_jsonl(file))
        if not rows:
            raise EvalcoreError("the data file holds no items", path=file, field="data")
        if self._prepare is not None:
            return _prepared(self._prepare, str(self.spec.get("prepare", {}).get("ref")), rows, file)
        return rows

    def _read_items(self, file: Path, split: str) -> list[Item]:
        from evalcore.datasets import Item, unique_ids

        spec = self.spec
        required = sorted(set(spec.get("required_fields") or ()))
        id_field, answer_field = spec.get("id_field"), spec.get("answer_field")
        subject_field = spec.get("subject_field")
        items, base_ids = [], []
        for line, row in self._rows(file):
            for name in required:
                value = row.get(name)
                if value is None or (isinstance(value, str) and not value.strip()):
                    raise EvalcoreError(
                        "missing or empty (the benchmark file needs it)", path=file, line=line, field=name
                    )
            fields = {k: v for k, v in row.items() if k != answer_field}
            choices = self.options.get("choices_field")
            if self.kind == "letter" and choices is not None:
                fields["choices"] = self._choices(row, choices, file, line)
            options = fields.get("choices")
            n_options = len(options) if isinstance(options, list) else int(self.options.get("options") or 4)
            value = row.get(answer_field) if answer_field else None
            reference = self._reference(value, file, line, answer_field, n_options)
            metadata: dict[str, Any] = {"source": "file", "split": split}
            if subject_field:
                metadata["subject"] = str(row.get(subject_field))
            if id_field:
                base_ids.append(f"{self.name}/{row[id_field]}")
            else:
                digest = hashlib.sha256(
                    json.dumps(row, sort_keys=True, ensure_ascii=False, default=str).encode("utf-8")
                ).hexdigest()[:10]
                base_ids.append(f"{self.name}/{digest}")
            items.append((line, fields, reference, metadata))
        if id_field:
            seen: dict[str, int] = {}
            for (line, *_), i in zip(items, base_ids):
                if i in seen:
                    raise EvalcoreError(
                        f"repeated id {i!r} (first on line {seen[i]})", path=file, line=line, field=id_field
                    )
                seen[i] = line
            ids = base_ids
        else:
            ids = unique_ids(base_ids)
        return [Item(id=i, dataset=self.name, fields=f, reference=r, metadata=m) for i, (_, f, r, m) in zip(ids, items)]

    def _choices(self, row: Mapping[str, Any], choices: Any, file: Path, line: int) -> list[str]:
        values = row.get(choices) if isinstance(choices, str) else [row.get(c) for c in choices]
        if isinstance(values, str):
            try:
                values = json.loads(values)
            except json.JSONDecodeError:
                values = None
        if (
            not isinstance(values, list)
            or not 2 <= len(values) <= 10
            or not all(isinstance(v, (str, int, float)) and str(v).strip() for v in values)
        ):
            raise EvalcoreError(
                "the options must be a list of 2 to 10 non-empty texts (letters A-J)",
                path=file,
                line=line,
                field=choices if isinstance(choices, str) else ",".join(choices),
            )
        return [str(v) for v in values]

    def _reference(self, value: Any, file: Path, line: int, field: str | None, n_options: int = 4) -> Any:
        if self.kind == "code":
            return "" if value is None else str(value)
        from evalcore.datasets import choice_reference, number_reference

        try:
            if self.kind == "number":
                return number_reference(value)
            if self.kind == "letter":  # by the labels the scorer states: nothing shifted unasked
                labels = str(self.options.get("labels") or "letters")
                return choice_reference(value, n_options, labels=labels, base=self.options.get("base"))
        except EvalcoreError as exc:
            raise EvalcoreError(exc.reason, path=file, line=line, field=field) from None
        if isinstance(value, list):
            if not value or not all(isinstance(v, str) for v in value):
                raise EvalcoreError(
                    "accepted answers must be a non-empty list of texts", path=file, line=line, field=field
                )
            return value
        return str(value)


# --- the four scorers -------------------------------------------------------------------------


class _Extracted(ExactMatchScoring):
    """``number`` and ``letter``: the extractors of GSM8K and MMLU (letters A to the last option:
    the row's options, or the scorer's ``options`` count when the rows list none)."""

    def __init__(self, kind: str, n_options: int = 4) -> None:
        self.answer_kind = kind
        self.n_options = n_options

    def score(self, text: str, reference: Any, fields: Mapping[str, Any]) -> dict[str, Any]:
        """Scores of one reply; without option texts the letters run to the stated count."""
        from evalcore.benchmarks._scoring import exact_scores

        choices = fields.get("choices")
        if self.answer_kind == "letter" and not choices and self.n_options > 4:
            choices = [""] * self.n_options  # no texts to match, only how many letters there are
        return exact_scores(self.answer_kind, text, reference, choices)


class _Code(CodeExecutionScoring):
    """``code``: the reply completes the row's prompt; the row's test checks its entry point."""

    def __init__(self, options: Mapping[str, Any]) -> None:
        self.code_fields = (
            options.get("prompt_field", "prompt"),
            options.get("test_field", "test"),
            options.get("entry_point_field", "entry_point"),
        )


class _Exact:
    """``exact``: the reply (or a pattern's match in it) equals the reference after the file's
    normalization; a reference list accepts any of its answers."""

    def __init__(self, options: Mapping[str, Any]) -> None:
        self.ignore_case = bool(options.get("ignore_case", True))
        self.ignore_punctuation = bool(options.get("ignore_punctuation", False))
        self.ignore_whitespace = bool(options.get("ignore_whitespace", True))
        pattern = options.get("pattern")
        self.pattern = re.compile(pattern, re.IGNORECASE | re.MULTILINE) if pattern else None

    def normalize(self, text: Any) -> str:
        out = str(text)
        if self.ignore_case:
            out = out.casefold()
        if self.ignore_punctuation:
            out = out.translate(str.maketrans("", "", string.punctuation))
        if self.ignore_whitespace:
            out = " ".join(out.split())
        return out

    def extract(self, text: str) -> tuple[str | None, str]:
        from evalcore.evaluators import after_reasoning

        reply = after_reasoning(text or "")
        if self.pattern is not None:
            matches = list(self.pattern.finditer(reply))
            last = matches[-1] if matches else None
            if last is None:
                return None, "none"
            value = last.group(1) if self.pattern.groups else last.group(0)
            return (value.strip(), "pattern") if value and value.strip() else (None, "none")
        return (reply.strip(), "full_reply") if reply.strip() else (None, "none")

    def answers_equal(self, answer: Any, reference: Any) -> bool:
        if answer is None:
            return False
        refs = reference if isinstance(reference, list) else [reference]
        return any(self.normalize(answer) == self.normalize(r) for r in refs)

    def score(self, text: str, reference: Any, fields: Mapping[str, Any]) -> dict[str, Any]:
        value, method = self.extract(text)
        v = 1.0 if self.answers_equal(value, reference) else 0.0
        out: dict[str, Any] = {}
        for mode in ("strict", "flexible"):
            out.update(
                {mode: v, f"extracted_{mode}": value, f"method_{mode}": method, f"parse_failure_{mode}": value is None}
            )
        out["reference"] = reference
        out["score"] = v
        return out

    def score_records(
        self, records: Sequence[dict[str, Any]], *, timeout_s: float = 10.0, workers: int | None = None
    ) -> list[dict[str, Any]]:
        return [
            self.score((r.get("completion") or {}).get("text", ""), r.get("reference"), r.get("item") or {})
            for r in records
        ]

    def summary_extras(self, records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        return parse_failure_extras(records)


# --- reading and checking the YAML file ---------------------------------------------------------


def load_benchmark_file(path: str | os.PathLike[str]) -> FileBenchmark:
    """Read and check a benchmark YAML file and its data file(s).

    Args:
        path: The YAML file.

    Returns:
        The benchmark (its items read once to check every row and the template's fields).

    Raises:
        EvalcoreError: A malformed file, naming the file, line and field.
    """
    from evalcore._yaml import read_yaml

    yaml_path = Path(path).expanduser()
    doc = read_yaml(yaml_path, what="benchmark file", field="dataset")
    name = _check_top(doc, yaml_path, _TOP_KEYS)
    data = doc.data
    scorer = _check_scorer(doc, data["scorer"])
    kind = scorer["type"]
    if kind != "code" and "answer_field" not in data:
        raise _err("required: the column holding each item's answer", doc, field="answer_field")
    prompt = _check_prompt(doc, _PROMPT_KEYS)
    base = yaml_path.resolve().parent
    data_path = _resolve(doc, "data", base, (".jsonl", ".csv"))
    few_path = _resolve(doc, "few_shot", base, (".jsonl", ".csv")) if data.get("few_shot") else None
    generation = _check_generation(doc, data.get("generation"))
    hook = _check_prepare(doc, data.get("prepare"), base)

    # the columns: what the rows have (once prepared), what the scorer and the template need
    probe = FileBenchmark({"name": name, "scorer": scorer, "data": str(data_path), "prepare": hook and hook[0]})
    probe._prepare = hook and hook[1]
    rows = probe._rows(data_path)
    columns = set().union(*(row for _, row in rows))  # a row lacking one is refused by its line
    needed = _check_columns(doc, scorer, columns, data_path)
    letter_choices = kind == "letter" and scorer.get("choices_field") is not None
    derived = {"id", "reference"} | ({"choices_text"} if letter_choices else set())
    _check_markers(doc, prompt, columns, derived, data_path)
    required = sorted((set(needed) | set().union(*(_markers(t) for t in prompt.values()))) - derived)
    spec = {
        "kind": "file",
        "name": name,
        "path": str(yaml_path.resolve()),
        "sha256": _sha256(yaml_path),
        "description": str(data.get("description") or ""),
        "data": str(data_path),
        "data_sha256": _sha256(data_path),
        "few_shot": str(few_path) if few_path else None,
        "id_field": data.get("id_field"),
        "answer_field": data.get("answer_field"),
        "subject_field": data.get("subject_field"),
        "scorer": scorer,
        "prompt": prompt,
        "generation": generation,
        "required_fields": required,
    }
    if hook is not None:  # recorded only when used: a file without a hook records what it always did
        spec["prepare"] = hook[0]
    bench = FileBenchmark(spec)
    bench._doc = doc
    bench._prepare = hook and hook[1]
    bench._read_items(data_path, "test")  # every row checked now, before a run starts
    if few_path is not None:
        bench._read_items(few_path, "few_shot")
    return bench


# --- the checks of the fields (scorer, generation, data paths, prepare hook, prompt, columns) ---


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
