"""The embedded default outcome matrix: the local model × four inference strategies.

Strategies trade cost for quality: a direct answer (few tokens), chain of thought,
few-shot chain of thought (longer prompts), and self-consistency (3 sampled chains of thought
at temperature > 0 with different seeds, majority vote over the extracted answers; three times
the tokens). Each strategy × dataset is a real recorded run (``evalcore.runs.run_benchmark``),
so building the matrix again only re-reads the runs, and the matrix itself is cached on the
runs' fingerprints.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from evalcore._io import write_text_atomic
from evalcore.errors import EvalcoreError
from evalcore.routing._matrix import OutcomeMatrix
from evalcore.routing._outcomes import outcomes_from_runs

if TYPE_CHECKING:
    from evalcore.models import ChatModel

_GSM8K_DIRECT = (
    "Solve the following math problem. Reply with the final answer only, on one "
    "line: four hash marks, a space, and the number alone (no working).\n\n"
    "Problem: {question}"
)
_GSM8K_COT = (
    "Solve the following math problem. Work through it step by step. Then write the "
    "final answer on its own last line: four hash marks, a space, and the number "
    "alone (no units, no words).\n\nProblem: {question}"
)
_MMLU_DIRECT = (
    "The following is a multiple choice question about {subject}.\n\n{question}\n"
    "{choices_text}\n\nReply with the letter of the correct option (A, B, C or D) "
    "and nothing else."
)
_MMLU_COT = (
    "The following is a multiple choice question about {subject}.\n\n{question}\n"
    "{choices_text}\n\nThink it through step by step in a few sentences, then finish "
    "with 'The answer is (X)' where X is the letter of the correct option."
)

_TEMPLATES: dict[tuple[str, str], dict[str, str]] = {
    ("gsm8k", "direct"): {
        "system": "You are a careful math tutor.",
        "user": _GSM8K_DIRECT,
        "answer": "#### {reference}",
    },
    ("gsm8k", "cot"): {
        "system": "You are a careful math tutor. You solve problems step by step.",
        "user": _GSM8K_COT,
        "answer": "{solution}",
    },
    ("mmlu", "direct"): {
        "system": "You answer multiple choice questions with the letter of the correct option.",
        "user": _MMLU_DIRECT,
        "answer": "({reference})",
    },
    ("mmlu", "cot"): {
        "system": "You answer multiple choice questions after brief, careful reasoning.",
        "user": _MMLU_COT,
        "answer": "The answer is ({reference}).",
    },
}


@dataclass(frozen=True)
class Strategy:
    """An inference strategy: prompt style, few-shot examples and sampling.

    Attributes:
        name: Arm suffix (``model/name``).
        style: ``"direct"`` or ``"cot"`` (which prompt template).
        few_shot: Worked examples in the prompt.
        samples: Sampled answers per query (> 1: majority vote, self-consistency).
        temperature: Sampling temperature (must be > 0 when ``samples`` > 1).
        max_tokens: Completion budget.
    """

    name: str
    style: str
    few_shot: int = 0
    samples: int = 1
    temperature: float = 0.0
    max_tokens: int = 192


DEFAULT_STRATEGIES: tuple[Strategy, ...] = (
    Strategy("direct", "direct", max_tokens=24),
    Strategy("cot", "cot", max_tokens=192),
    Strategy("fewshot_cot", "cot", few_shot=3, max_tokens=192),
    Strategy("self_consistency3", "cot", samples=3, temperature=0.7, max_tokens=192),
)
"""Direct answer, chain of thought, 3-shot chain of thought, self-consistency over 3 samples
(3, not 5: the sampled chains were 70% of the demo's routing time, issue 31)."""


def strategy_template(dataset: str, strategy: Strategy, directory: str | os.PathLike[str]) -> Path:
    """Write the prompt template of ``strategy`` for ``dataset`` as a YAML file (the format
    ``evalcore.runs`` reads) and return its path."""
    key = (dataset, strategy.style)
    if key not in _TEMPLATES:
        raise EvalcoreError(f"no {strategy.style!r} prompt for dataset {dataset!r} (gsm8k, mmlu)", field="datasets")
    path = Path(directory) / f"{dataset}-{strategy.style}.yaml"
    data = {"name": f"routing-{dataset}-{strategy.style}", "dataset": dataset, **_TEMPLATES[key]}
    text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
    if not path.is_file() or path.read_text("utf-8") != text:
        write_text_atomic(path, text)
    return path


def build_default_outcomes(
    datasets: Sequence[str] = ("gsm8k", "mmlu"),
    limit: int | None = 20,
    model: str | ChatModel = "local:smollm2",
    *,
    strategies: Sequence[Strategy] = DEFAULT_STRATEGIES,
    run_dir: str | os.PathLike[str] = "runs/routing",
    seed: int = 0,
    concurrency: int = 4,
    source: str = "auto",
    progress: bool | None = None,
) -> OutcomeMatrix:
    """Run the model × strategies on the shipped samples and build the outcome matrix.

    Every strategy × dataset is a recorded run ``run_dir/<dataset>-<strategy>`` (resumed if it
    exists, so a second call calls no model); self-consistency runs ``samples`` epochs at
    temperature > 0 with a different seed per epoch, and its arm's quality is the majority
    vote. Local models cost nothing in money, so the cost of a call is its token count
    (prompt + completion). The matrix is cached in ``run_dir/.cache`` on the runs'
    fingerprints.

    Args:
        datasets: Datasets (``gsm8k``, ``mmlu``).
        limit: Items per dataset (None = all shipped sample items).
        model: A model spec (``"local:smollm2"``) or a ChatModel.
        strategies: The strategies (arms).
        run_dir: Where the runs are recorded.
        seed: Item-selection and sampling seed.
        concurrency: Concurrent requests per run (the embedded model decodes them together);
            1 for the few-shot strategies, whose prompts share a long prefix.
        source: Dataset source (``"auto"``, ``"sample"`` …) passed to the loader.
        progress: Progress bars.

    Returns:
        The outcome matrix, arms named ``<model>/<strategy>``.
    """
    from evalcore.models import GenerationParams
    from evalcore.routing._progress import Progress
    from evalcore.runs import run_benchmark

    model_name = model if isinstance(model, str) else getattr(model, "name", "model")
    run_root = Path(run_dir)
    groups: dict[str, list[Path]] = {}
    aggregate: dict[str, str] = {}
    _check_strategies(strategies)
    queries = item_queries(datasets, limit=limit, seed=seed, source=source)
    per_dataset = {ds: len(_dataset_ids(ds, limit=limit, seed=seed, source=source)) for ds in datasets}
    # one line per run (strategy × dataset) with the generations done of all of them and the
    # time left: the whole matrix is one wait, whose end the reader can see
    lines = Progress(
        sum(per_dataset[ds] * st.samples for st in strategies for ds in datasets),
        "routing outcome matrix",
        unit="generations",
        every_s=0.0,
        enabled=progress is not False,
    )
    for strat in strategies:
        arm = f"{model_name}/{strat.name}"
        aggregate[arm] = "majority" if strat.samples > 1 else "mean"
        for ds in datasets:
            template = strategy_template(ds, strat, run_root / "prompts")
            params = GenerationParams(temperature=strat.temperature, max_tokens=strat.max_tokens, seed=seed)
            path = run_benchmark(
                ds,
                model,
                limit=limit,
                seed=seed,
                epochs=strat.samples,
                # few-shot prompts share a long prefix that one context evaluates once; asked
                # at once, each of the embedded model's streams would evaluate it again
                concurrency=1 if strat.few_shot else concurrency,
                run_dir=str(run_root),
                run_id=f"{ds}-{strat.name}",
                prompt=str(template),
                params=params,
                few_shot=strat.few_shot,
                source=source,
                progress=bool(progress) if progress is not None else True,
            )
            groups.setdefault(arm, []).append(Path(path))
            lines.update(per_dataset[ds] * strat.samples, note=f"{ds} × {strat.name} recorded")
    return outcomes_from_runs(groups, aggregate=aggregate, cache_dir=run_root / ".cache", queries=queries)


def _check_strategies(strategies: Sequence[Strategy]) -> None:
    """Refuse a strategy that samples several answers at temperature 0 (they would all be the same)."""
    for strat in strategies:
        if strat.samples > 1 and strat.temperature <= 0:
            raise EvalcoreError(
                f"strategy {strat.name}: sampling several answers needs temperature > 0", field="temperature"
            )


def _dataset_ids(dataset: str, *, limit: int | None, seed: int, source: str) -> list[str]:
    from evalcore.benchmarks import load

    return [item.id for item in load(dataset, limit=limit, seed=seed, source=source)]


def item_queries(datasets: Sequence[str], *, limit: int | None, seed: int, source: str) -> dict[str, str]:
    """Item id → query text (:func:`evalcore.datasets.question_text`: the question, for MMLU
    followed by its options), the text context features are computed from, free of any
    strategy's prompt wrapping."""
    from evalcore.benchmarks import load
    from evalcore.datasets import question_text

    return {
        item.id: question_text(item.fields)
        for ds in datasets
        for item in load(ds, limit=limit, seed=seed, source=source)
    }


def outcome_matrix(
    source: str = "default",
    *,
    outcomes: str | Sequence[str] = "",
    datasets: Sequence[str] = ("gsm8k", "mmlu"),
    limit: int | None = 20,
    model: str | ChatModel = "local:smollm2",
    run_dir: str | os.PathLike[str] = "runs/routing",
    seed: int = 0,
    n_simulated: int = 1319,
) -> OutcomeMatrix:
    """The outcome matrix a notebook or script asks for by name.

    Args:
        source: ``"default"`` (:func:`build_default_outcomes`: the model × four strategies),
            ``"file"`` (``outcomes``: a CSV/Parquet table or run directories) or
            ``"simulated"`` (:func:`evalcore.routing.simulate_contextual` with four arms
            of costs 1, 2, 4, 8 whose best arm depends on the query).
        outcomes: For ``"file"``: a path, comma-separated paths, or a list of paths.
        datasets: For ``"default"``.
        limit: Items per dataset for ``"default"``.
        model: Model spec for ``"default"``.
        run_dir: Run folder for ``"default"`` (and the cache for run directories).
        seed: Seed.
        n_simulated: Items for ``"simulated"``.

    Returns:
        The matrix.
    """
    if source == "default":
        return build_default_outcomes(datasets=tuple(datasets), limit=limit, model=model, run_dir=run_dir, seed=seed)
    if source == "file":
        from evalcore.routing._outcomes import read_outcomes

        paths = [p.strip() for p in outcomes.split(",")] if isinstance(outcomes, str) else [str(p) for p in outcomes]
        paths = [p for p in paths if p]
        if not paths:
            raise EvalcoreError("source='file' needs an outcomes path", field="outcomes")
        return read_outcomes(paths, cache_dir=Path(run_dir) / ".cache")
    if source == "simulated":
        from evalcore.routing._simulate import simulate_contextual

        return simulate_contextual(n_simulated, 4, n_features=8, arm_cost=(1.0, 2.0, 4.0, 8.0), seed=seed)
    raise EvalcoreError(f"unknown source {source!r} (default, file, simulated)", field="source")


def expected_samples(params: dict[str, Any]) -> dict[str, int]:
    """Run id → samples the routing notebook's default outcome matrix records, from its
    parameters (``source``, ``datasets``, ``limit``): what the suite's progress line shows as
    ``N/M samples`` (and its time left from) while the matrix is built. Empty when the
    parameters do not say (another source, no limit)."""
    if "datasets" not in params or params.get("source", "default") != "default":
        return {}
    limit = params.get("limit")
    if isinstance(limit, bool) or not isinstance(limit, int) or limit <= 0:
        return {}
    names = [d.strip() for d in str(params["datasets"]).split(",") if d.strip()]
    return {f"{ds}-{st.name}": limit * st.samples for st in DEFAULT_STRATEGIES for ds in names}
