"""What a benchmark run asks for, checked before anything is written.

The arguments of :func:`~evalcore.runs.run_benchmark` (dataset, counts, modes, run id), the
generation parameters and the model: each bad value raises
:class:`~evalcore.errors.EvalcoreError` naming it, before a run directory exists.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import re
import warnings
from collections.abc import Mapping
from typing import Any

from evalcore.errors import EvalcoreError
from evalcore.models import ChatModel, GenerationParams

CHOICE_MODES = ("generate", "likelihood")
"""How a letter-choice benchmark (``supports_likelihood``) is answered: ``generate`` (the letter
read from the reply) or ``likelihood`` (the option letter the model finds most probable)."""
_RUN_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def refuse_judge(scorer: Any) -> None:
    """Refuse anything but the objective scorers in a benchmark run.

    Args:
        scorer: What the caller asked to score with (``"exact"``/``"auto"`` are accepted).

    Raises:
        EvalcoreError: An LLM judge (by name or object) or an unknown scorer was asked for.
    """
    if scorer in (None, "auto", "exact", "exact_match", "code_execution"):
        return
    from evalcore.evaluators.judge import LLMJudge

    is_judge = isinstance(scorer, LLMJudge) or (isinstance(scorer, str) and "judge" in scorer.lower())
    if is_judge:
        raise EvalcoreError(
            "an LLM judge cannot score a benchmark run: benchmark scores come "
            "from exact match or code execution only (judges are for production "
            "monitoring, evalcore.evaluators.judge)",
            field="scorer",
        )
    raise EvalcoreError(
        f"unknown scorer {scorer!r}; benchmark runs use 'exact' (each benchmark's "
        "own objective scorer: exact match or code execution)",
        field="scorer",
    )


def resolve_choice_mode(choice_mode: str | None, mmlu_mode: str | None) -> str:
    """The choice mode of a run, from ``choice_mode`` or its deprecated alias ``mmlu_mode``.

    Args:
        choice_mode: ``generate``, ``likelihood`` or None (``generate``, unless the alias is given).
        mmlu_mode: The name ``choice_mode`` had before issue 40; given, it warns.

    Returns:
        The mode asked for (checked later by :func:`check_arguments`).

    Raises:
        EvalcoreError: Both names given with different values.
    """
    if mmlu_mode is None:
        return "generate" if choice_mode is None else choice_mode
    warnings.warn(
        "run_benchmark(mmlu_mode=...) is deprecated: use choice_mode=... (same values)",
        DeprecationWarning,
        stacklevel=3,
    )
    if choice_mode is not None and choice_mode != mmlu_mode:
        raise EvalcoreError(
            f"choice_mode={choice_mode!r} and its deprecated alias mmlu_mode={mmlu_mode!r} differ: "
            "give choice_mode only",
            field="choice_mode",
        )
    return mmlu_mode


def check_arguments(
    dataset: Any,
    *,
    epochs: int,
    concurrency: int,
    few_shot: int,
    limit: int | None,
    choice_mode: str,
    run_id: str | None,
) -> None:
    """Refuse an unknown dataset or mode, a count out of range or a malformed run id.

    Args:
        dataset: The :class:`~evalcore.benchmarks.Benchmark` (a name or file is looked up).

    Raises:
        EvalcoreError: Naming the argument (``dataset``, ``epochs``, ``run_id`` ...).
    """
    from evalcore.benchmarks import get_benchmark

    benchmark = get_benchmark(dataset)
    for name, value, low in (("epochs", epochs, 1), ("concurrency", concurrency, 1), ("few_shot", few_shot, 0)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise EvalcoreError(f"must be an integer >= {low}, got {value!r}", field=name)
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise EvalcoreError(f"must be a positive integer (leave it out for every item), got {limit!r}", field="limit")
    if choice_mode not in CHOICE_MODES:
        raise EvalcoreError(
            f"unknown choice_mode {choice_mode!r}; choose one of {list(CHOICE_MODES)}", field="choice_mode"
        )
    if choice_mode == "likelihood" and not benchmark.supports_likelihood:
        raise EvalcoreError(
            "choice_mode='likelihood' applies to letter-choice benchmarks with "
            f"options (mmlu) only, not {benchmark.name}",
            field="choice_mode",
        )
    if run_id is not None and not _RUN_ID_RE.match(run_id):
        raise EvalcoreError(
            f"run id may hold letters, digits, '.', '_' and '-' only (max 128), got {run_id!r}", field="run_id"
        )


def resolve_params(params: GenerationParams | Mapping[str, Any] | None, dataset: Any, seed: int) -> GenerationParams:
    """Turn user generation parameters into :class:`GenerationParams`.

    Args:
        params: A GenerationParams, a mapping of its fields, or None.
        dataset: The benchmark (or its name/file) whose default settings (``max_tokens`` ...)
            fill what ``params`` leaves out.
        seed: Default generation seed.

    Returns:
        The resolved parameters.

    Raises:
        EvalcoreError: An unknown field or a bad value.
    """
    if isinstance(params, GenerationParams):
        _check_param_types(params.to_dict())
        gp = params
    else:
        given = dict(params or {})
        names = {f.name for f in dataclasses.fields(GenerationParams)}
        unknown = sorted(set(given) - names)
        if unknown:
            raise EvalcoreError(f"unknown generation parameter(s) {unknown}; known: {sorted(names)}", field=unknown[0])
        from evalcore.benchmarks import get_benchmark

        for key, value in get_benchmark(dataset).default_params().items():
            given.setdefault(key, list(value) if isinstance(value, list) else value)
        given.setdefault("seed", seed)
        if isinstance(given.get("stop"), str):
            given["stop"] = [given["stop"]]
        if given.get("stop") is None:
            given.pop("stop", None)
        _check_param_types(given)
        try:
            gp = GenerationParams.from_dict(given)
        except TypeError as exc:
            raise EvalcoreError(str(exc), field="params") from exc
    checks = [
        ("temperature", 0 <= gp.temperature <= 2),
        ("max_tokens", gp.max_tokens >= 1),
        ("top_p", 0 < gp.top_p <= 1),
        ("top_logprobs", 0 <= gp.top_logprobs <= 20),
    ]
    for name, ok in checks:
        if not ok:
            raise EvalcoreError(f"out of range: {getattr(gp, name)!r}", field=name)
    return gp


def _check_param_types(given: Mapping[str, Any]) -> None:
    """Refuse a generation parameter of the wrong type (``temperature="hot"``, ``max_tokens=1.5``).

    Raises:
        EvalcoreError: Naming the parameter and the type it needs.
    """

    def real(v: Any) -> bool:
        return isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v)

    def integer(v: Any) -> bool:
        return isinstance(v, numbers.Integral) and not isinstance(v, bool)

    rules: dict[str, tuple[Any, str]] = {
        "temperature": (real, "a number"),
        "top_p": (real, "a number"),
        "max_tokens": (integer, "an integer"),
        "top_logprobs": (integer, "an integer"),
        "seed": (lambda v: v is None or integer(v), "an integer or null"),
        "logprobs": (lambda v: isinstance(v, bool), "true or false"),
        "stop": (
            lambda v: isinstance(v, (list, tuple)) and all(isinstance(x, str) for x in v),
            "a string or a list of strings",
        ),
    }
    for name, value in given.items():
        check, wanted = rules.get(name, (lambda v: True, ""))
        if not check(value):
            raise EvalcoreError(f"must be {wanted}, got {value!r}", field=name)


def resolve_model(model: str | ChatModel, options: Mapping[str, Any] | None, choice_mode: str) -> tuple[ChatModel, str]:
    """The model to ask and the spec recorded for it.

    Args:
        model: A model spec (built with ``options``) or a ChatModel.
        options: Options for :func:`~evalcore.models.from_spec`; refused with a model object.
        choice_mode: ``likelihood`` needs a model that gives letter log-probabilities.

    Returns:
        The model and its spec (a model object's name when given an object).

    Raises:
        EvalcoreError: An unknown spec, options with a model object, something that is not a
            model, or a likelihood run with a model that has no log-probabilities.
    """
    from evalcore.models import from_spec

    if isinstance(model, str):
        chat_model, spec = from_spec(model, **dict(options or {})), model
    elif options:
        raise EvalcoreError("model_options apply to a model spec, not to a model object", field="model_options")
    elif not isinstance(model, ChatModel):
        raise EvalcoreError(f"not a ChatModel or model spec: {model!r}", field="model")
    else:
        chat_model, spec = model, str(model.name)
    if choice_mode == "likelihood" and not (
        hasattr(chat_model, "letter_logprobs") or hasattr(chat_model, "acomplete_item")
    ):
        raise EvalcoreError(
            f"choice_mode='likelihood' needs a model with letter log-probabilities "
            f"(local:smollm2); {chat_model.name} has none",
            field="choice_mode",
        )
    return chat_model, spec
