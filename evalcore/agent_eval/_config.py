"""Configuration of an agent evaluation: the seven categories and their weights, the pass
threshold, the knobs of a run (:class:`AgentEvalConfig`) and the cases it runs on (:class:`AgentEvalData`)."""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from evalcore._io import to_json_native
from evalcore.agent_eval._cases.generator import AgentCaseGenerator
from evalcore.agent_eval._cases.records import AgentCase
from evalcore.agent_eval._weights import CATEGORIES as CATEGORIES  # re-exported
from evalcore.agent_eval._weights import CATEGORY_WEIGHTS as CATEGORY_WEIGHTS  # re-exported
from evalcore.agent_eval._weights import PASS_THRESHOLD as PASS_THRESHOLD  # re-exported
from evalcore.errors import EvalcoreError

DEFAULT_TOOL_ALIASES: dict[str, tuple[str, ...]] = {
    "percentage": ("percent", "calculate_percentage", "percentage_calculator"),
    "reverse_string": ("string_reversal", "reverse_text", "reverse"),
    "factorial": ("compute_factorial", "calculate_factorial"),
    "temperature_conversion": ("convert_temperature", "temperature_converter", "temperature"),
}
"""Other names an agent may give the starter tools (``AgentEvalConfig.tool_aliases`` overrides)."""


@dataclass
class AgentEvalConfig:
    """Knobs of an evaluation (all recorded in the results' ``config``).

    Attributes:
        seed: Seed of the case generator. None (the default) draws a fresh secret one for this
            configuration (:func:`draw_seed`), recorded in the results with ``seed_source:
            "drawn"``: an agent cannot rebuild the cases, and so their expected answers, from a
            seed it could know (the generator ships with evalcore). Give the recorded seed to
            run the same cases again (e.g. to compare two agents); a seed anyone can guess
            (0, 1, 42 …) makes the answer key public.
        counts: Cases per complexity for the generator (None = 20/15/10/11).
        limit: At most this many cases per category (None = all that fit the category).
        k: Depth of the ranked search results for retrieval metrics.
        retrieval_threshold: Similarity threshold for the thresholded retrieval set and the
            false-positive rate; None = the agent's own ``threshold`` attribute, else 0.5.
        n_paraphrase_groups: Paraphrase groups for learning and retrieval.
        paraphrase_size: Members per paraphrase group (2 or 3).
        n_unrelated: Unrelated queries for the false-positive rate (retrieval scores one test
            per query; 16 weigh about as much as the related queries of the default cases).
        timing_repetitions: Repetitions of each timed query (median latency).
        learning_repeats: Repetitions of the learning-curve query.
        pattern_repeats: Repetitions of the multi-step query for the workflow-pattern test.
        memory_requests: Requests between the two RSS readings of the memory test.
        load_requests: Requests of the concurrent load test.
        workers: Worker threads of the load test.
        pass_threshold: Score at which a test and a category pass.
        learning_target: Relative speed-up of repeated queries that earns full learning-curve
            credit (0.5 = repeats take half the time of the first encounter).
        tool_aliases: Tool kind → other names the agent may use for it (None =
            :data:`DEFAULT_TOOL_ALIASES`); used for planning accuracy and retrieval labels.
        request_timeout_s: A request without a response after this many seconds scores 0 and is
            a critical failure (None = no limit; default 30 s).
        category_floor: Every category must score at least this for the system to pass.
        throughput_target: Correct answers per second under load that earn full throughput credit.
        n_held_out: Held-out inputs on which the evaluator runs a registered tool (synthesis,
            reuse, learning) before it counts.
        learning_kinds: Kinds of tool the learning curve meets for the first time (at least 5
            give an interval per point).
        sandbox_timeout_s: Limit of each sandboxed run of an agent's registered code.
        tool_budget_s: Total sandbox time the agent's registered code may take in one category
            (None = no limit; default 40 s, so that seven categories of tools that never return
            end within five minutes); a check that finds the budget spent fails and says so.
        n_synthesis_specs: Synthesis requests drawn per run from the seed (a tool to write from a
            spec: a drawn name, composition of operations and constants; see
            :meth:`AgentCaseGenerator.synthesis_specs`).
    """

    seed: int | None = None
    counts: dict[str, int] | None = None
    limit: int | None = None
    k: int = 5
    retrieval_threshold: float | None = None
    n_paraphrase_groups: int = 3
    paraphrase_size: int = 3
    n_unrelated: int = 16
    timing_repetitions: int = 3
    learning_repeats: int = 4
    pattern_repeats: int = 2
    memory_requests: int = 10
    load_requests: int = 20
    workers: int = 4
    pass_threshold: float = PASS_THRESHOLD
    learning_target: float = 0.5
    tool_aliases: dict[str, list[str]] | None = None
    request_timeout_s: float | None = 30.0
    category_floor: float = 0.5
    throughput_target: float = 10.0
    n_held_out: int = 3
    learning_kinds: int = 5
    sandbox_timeout_s: float = 20.0
    tool_budget_s: float | None = 40.0
    n_synthesis_specs: int = 8
    seed_source: str = field(default="given", init=False)

    def __post_init__(self) -> None:
        from evalcore._checks import check_timeout

        self.seed, self.seed_source = resolve_seed(self.seed)
        check_timeout(self.request_timeout_s, "request_timeout_s", allow_none=True)
        check_timeout(self.sandbox_timeout_s, "sandbox_timeout_s")
        check_timeout(self.tool_budget_s, "tool_budget_s", allow_none=True)

    def aliases(self, kind: str) -> tuple[str, ...]:
        """The kind's own name followed by its aliases."""
        table = DEFAULT_TOOL_ALIASES if self.tool_aliases is None else self.tool_aliases
        return (kind, *[a for a in table.get(kind, ()) if a != kind])

    def to_dict(self) -> dict[str, Any]:
        return {k: to_json_native(v) for k, v in self.__dict__.items()}


def draw_seed() -> int:
    """A fresh secret seed for the case generator (63 bits from the operating system's CSPRNG)."""
    return secrets.randbits(63)


def resolve_seed(seed: int | None) -> tuple[int, str]:
    """``(seed, "given")`` for a given seed, ``(a fresh secret one, "drawn")`` for None.

    Raises:
        EvalcoreError: A seed that is no integer.
    """
    if seed is None:
        return draw_seed(), "drawn"
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise EvalcoreError(f"seed must be an integer or None, got {seed!r}", field="seed")
    return seed, "given"


SEED_ENV = "EVALCORE_AGENT_SEED"
"""Environment variable that may carry the case seed of an agent evaluation (read once, then
removed from the evaluator's environment so that no process it starts inherits it)."""

SEED_ON_COMMAND_LINE = (
    "a seed on the command line can be read by every process on this host (ps, /proc/PID/cmdline), an "
    "agent under evaluation included, which rebuilds the cases and their expected answers from it; put "
    f"the seed in a file readable only by you and pass --seed-file PATH, or set the environment variable "
    f"{SEED_ENV}"
)
"""Why ``--seed N`` is refused (the message of the error)."""


def _parse_seed(text: str, where: str, field_name: str) -> int:
    raw = text.strip()
    try:
        value = int(raw, 10)
    except ValueError:
        raise EvalcoreError(f"{where} must hold one integer seed, found {raw[:40]!r}", field=field_name) from None
    if value < 0 or value.bit_length() > 63:
        raise EvalcoreError(f"{where} must hold a seed in [0, 2**63), found {value}", field=field_name)
    return value


def seed_from_sources(seed_file: str | os.PathLike[str] | None = None, environ: Any = None) -> tuple[int | None, str]:
    """The case seed from a seed file or :data:`SEED_ENV`, never from a command line.

    The variable is removed from ``environ`` (default :data:`os.environ`) as it is read, so a
    hosted agent, which inherits the evaluator's environment, never sees it.

    Returns:
        ``(seed, source)``: source ``"file"`` or ``"environment"``; ``(None, "drawn")`` when
        neither is given (the caller draws a fresh secret seed).

    Raises:
        EvalcoreError: Both given, an unreadable file, or a value that is not one integer in
            ``[0, 2**63)``.
    """
    env = os.environ if environ is None else environ
    raw_env = env.pop(SEED_ENV, None)
    if raw_env is not None and seed_file is not None:
        raise EvalcoreError(f"the seed is given twice (--seed-file and {SEED_ENV}); give one", field="--seed-file")
    if seed_file is not None:
        try:
            text = open(seed_file, encoding="utf-8").read(200)  # noqa: SIM115 - a short read
        except OSError as exc:
            raise EvalcoreError(
                f"cannot read the seed file {os.fspath(seed_file)!r}: {exc.strerror or exc}", field="--seed-file"
            ) from None
        return _parse_seed(text, f"the seed file {os.fspath(seed_file)!r}", "--seed-file"), "file"
    if raw_env is not None:
        return _parse_seed(raw_env, f"the environment variable {SEED_ENV}", SEED_ENV), "environment"
    return None, "drawn"


@dataclass
class AgentEvalData:
    """The cases an evaluation runs on."""

    cases: list[AgentCase]
    paraphrase_groups: list[list[AgentCase]] = field(default_factory=list)
    unrelated: list[str] = field(default_factory=list)
    specs: list[AgentCase] = field(default_factory=list)

    def for_category(self, category: str, limit: int | None = None) -> list[AgentCase]:
        """Cases whose ``categories`` hint names ``category`` (first ``limit``)."""
        out = [c for c in self.cases if category in c.categories]
        return out[:limit] if limit is not None else out

    @classmethod
    def build(cls, config: AgentEvalConfig, cases: Sequence[AgentCase] | None = None) -> AgentEvalData:
        """The cases of an evaluation with ``config``: ``cases`` (default: generated from
        ``config.seed`` and ``config.counts``), the paraphrase groups and the unrelated queries."""
        assert config.seed is not None  # resolved in AgentEvalConfig.__post_init__
        gen = AgentCaseGenerator(config.seed, config.counts)
        return cls(
            cases=list(cases) if cases is not None else gen.generate(),
            paraphrase_groups=gen.paraphrase_groups(config.n_paraphrase_groups, config.paraphrase_size)
            if config.n_paraphrase_groups
            else [],
            unrelated=gen.unrelated_queries(config.n_unrelated),
            specs=gen.synthesis_specs(config.n_synthesis_specs),
        )

    def digest(self) -> str:
        """SHA-256 of everything the tests are built from (cases, paraphrase groups, unrelated
        queries, synthesis specs): two evaluations ran on the same cases exactly when their
        digests are equal."""
        content = {
            "cases": [c.to_dict() for c in self.cases],
            "paraphrase_groups": [[c.to_dict() for c in g] for g in self.paraphrase_groups],
            "unrelated": list(self.unrelated),
            "specs": [c.to_dict() for c in self.specs],
        }
        text = json.dumps(to_json_native(content), sort_keys=True, separators=(",", ":"), ensure_ascii=True)
        return hashlib.sha256(text.encode()).hexdigest()
