"""The prompt templates in params/prompts/ are the package defaults, byte for byte."""

from __future__ import annotations

from pathlib import Path

import pytest

import evalcore.runs

ROOT = Path(__file__).resolve().parents[2]
PACKAGED = Path(evalcore.runs.__file__).parent / "templates"


@pytest.mark.parametrize("dataset", ["gsm8k", "mmlu", "humaneval"])
def test_params_prompt_is_the_packaged_default(dataset: str) -> None:
    params_copy = ROOT / "params" / "prompts" / f"{dataset}.yaml"
    assert params_copy.read_bytes() == (PACKAGED / f"{dataset}.yaml").read_bytes(), (
        f"{params_copy} and the packaged default differ: edit both, or pass the params copy "
        "explicitly with --prompt"
    )
