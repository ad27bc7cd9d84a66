"""Defaults shared by ``evalcore run``, :func:`~evalcore.runs.run_benchmark` and the notebooks.

A light module (no imports) so the CLI can show these in its help without loading the runner.
"""

from __future__ import annotations

DEFAULT_MAX_TOKENS: dict[str, int] = {"gsm8k": 512, "mmlu": 64, "humaneval": 512}
"""Completion token limit per dataset when none is given: the one source of this default for
``evalcore run``, :func:`~evalcore.runs.run_benchmark` and the benchmark notebook (whose
``max_tokens = 0`` means "this default"; params/*.yaml leave it unset), so a CLI run and a
notebook run of the same settings ask the model the same thing."""
