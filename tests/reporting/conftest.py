"""Helpers for the reporting tests: small notebooks built with nbformat."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest


def make_notebook(path: Path, parameters: str, *bodies: str) -> Path:
    """Write a notebook with a tagged parameters cell followed by code cells."""
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell(parameters)
    cell.metadata["tags"] = ["parameters"]
    nb.cells = [nbformat.v4.new_markdown_cell(f"# {path.stem}"), cell]
    nb.cells += [nbformat.v4.new_code_cell(body) for body in bodies]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


@pytest.fixture
def nb_factory():
    return make_notebook
