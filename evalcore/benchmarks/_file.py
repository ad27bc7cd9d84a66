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
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalcore.benchmarks._file_checks import (
    SCORER_TYPES,  # noqa: F401 - re-exported (its old home)
    _check_columns,
    _check_generation,
    _check_markers,
    _check_prepare,
    _check_prompt,
    _check_scorer,
    _check_top,
    _err,
    _markers,
    _prepared,
    _resolve,
    _sha256,
)
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
