"""What benchmarks share: :class:`BenchmarkBase` (defaults any benchmark may keep) and
:class:`BuiltinBenchmark` (a benchmark folder: loading its
:class:`~evalcore.datasets.DatasetSource` through :mod:`evalcore.datasets`' generic readers, and
the folder's prompt template, ``template.yaml``; a run started while the built-ins' templates lay
in ``evalcore/runs/templates/`` still resumes: ``runs`` takes the moved file for the same prompt)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evalcore._yaml import YamlDoc
    from evalcore.datasets import DatasetSource, Item


class BenchmarkBase:
    """Defaults a benchmark may keep: no extra template fields, ``max_tokens`` as its only
    default generation setting, found again by its name. Subclass it with a scoring mixin
    (:class:`~evalcore.benchmarks.ExactMatchScoring` or
    :class:`~evalcore.benchmarks.CodeExecutionScoring`) and write ``load``, ``few_shot_pool``
    and ``template_doc`` (docs/benchmarks.md, "Adding a fourth benchmark")."""

    name = ""
    default_max_tokens = 512
    supports_likelihood = False

    def __repr__(self) -> str:
        return f"<benchmark {self.name}>"

    def default_params(self) -> dict[str, Any]:
        """Generation settings when the user gives none: ``max_tokens``."""
        return {"max_tokens": self.default_max_tokens}

    def prompt_fields(self, item: Item) -> dict[str, Any]:
        """No fields beyond the item's own."""
        return {}

    def to_config(self) -> dict[str, Any] | None:
        """Found again by its name."""
        return None


class BuiltinBenchmark(BenchmarkBase):
    """Loading, few-shot pool and template of a benchmark folder: ``data`` (a
    :class:`~evalcore.datasets.DatasetSource`: its splits, readers, HF id and shipped sample) is
    read by :func:`evalcore.datasets.load_items` from the best available source."""

    data: DatasetSource

    def load(
        self,
        split: str = "test",
        limit: int | None = None,
        seed: int = 0,
        source: str = "auto",
        path: str | Path | None = None,
    ) -> list[Item]:
        """:func:`evalcore.datasets.load_items` of this benchmark's ``data``."""
        from evalcore.datasets import load_items

        return load_items(self.data, split=split, limit=limit, seed=seed, source=source, path=path)

    def few_shot_pool(self) -> list[Item]:
        """:func:`evalcore.datasets.few_shot_items` of this benchmark's ``data`` (its few-shot split)."""
        from evalcore.datasets import few_shot_items

        return few_shot_items(self.data)

    def template_doc(self) -> YamlDoc:
        """The folder's ``template.yaml`` (``evalcore/benchmarks/<name>/template.yaml``)."""
        from evalcore._yaml import read_packaged_yaml

        return read_packaged_yaml(type(self).__module__, "template.yaml")
