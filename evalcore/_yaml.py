"""Reading YAML files with errors that name the file and line: the one YAML reader of evalcore.

Used for the pricing table, prompt templates, the notebook-suite file and parameter files.
``yaml`` (PyYAML) is imported here only, so modules that read YAML import this one where they
need it.
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from evalcore.errors import EvalcoreError

__all__ = ["YamlDoc", "read_yaml", "read_packaged_yaml", "parse_yaml"]


class YamlDoc:
    """A parsed YAML document and where its mapping keys are.

    Attributes:
        data: The loaded value (``yaml.safe_load``); ``None`` for an empty document.
        source: The file (or package resource) it came from, for messages.
    """

    __slots__ = ("data", "source", "_node")

    def __init__(self, data: Any, source: str | os.PathLike[str], node: Any) -> None:
        self.data = data
        self.source = source
        self._node = node

    def key_lines(self, *path: str | int) -> dict[str, int]:
        """1-based line of each key of the mapping at ``path`` (keys and list indexes from the top).

        Returns ``{}`` where the path does not lead to a mapping.
        """
        node = self.node(*path)
        if not isinstance(node, yaml.MappingNode):
            return {}
        return {str(k.value): k.start_mark.line + 1 for k, _ in node.value}

    def line(self, *path: str | int) -> int | None:
        """1-based line where the value at ``path`` starts (``None`` if there is none)."""
        node = self.node(*path)
        return node.start_mark.line + 1 if node is not None else None

    def node(self, *path: str | int) -> Any:
        """The YAML node at ``path`` (mapping keys and sequence indexes), or ``None``."""
        node = self._node
        for step in path:
            if isinstance(node, yaml.MappingNode) and isinstance(step, str):
                node = next((v for k, v in node.value if k.value == step), None)
            elif isinstance(node, yaml.SequenceNode) and isinstance(step, int) and 0 <= step < len(node.value):
                node = node.value[step]
            else:
                return None
        return node


def parse_yaml(text: str, source: str | os.PathLike[str]) -> YamlDoc:
    """Parse YAML text; a syntax error raises EvalcoreError naming ``source`` and the line.

    Args:
        text: The YAML text.
        source: Where it came from (named in messages).

    Returns:
        The document.

    Raises:
        EvalcoreError: Not valid YAML.
    """
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc)
        raise EvalcoreError(f"malformed YAML: {problem}", path=source, line=line) from exc
    return YamlDoc(data, source, node)


def read_yaml(path: str | os.PathLike[str], *, what: str = "file", field: str | None = None) -> YamlDoc:
    """Read and parse a YAML file.

    Args:
        path: The file.
        what: What the file is, for the not-found message (e.g. ``"pricing file"``).
        field: The parameter or option that named the file, added to messages.

    Returns:
        The document.

    Raises:
        EvalcoreError: The file is missing (or a folder), unreadable or not valid YAML.
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError) as exc:
        from evalcore._io import not_a_file_reason

        raise EvalcoreError(not_a_file_reason(p, what), path=p, field=field) from exc
    except UnicodeDecodeError as exc:
        raise EvalcoreError(f"not UTF-8 text: {exc.reason}", path=p, field=field) from exc
    except OSError as exc:
        raise EvalcoreError(f"cannot read: {exc.strerror}", path=p, field=field) from exc
    return parse_yaml(text, p)


def read_packaged_yaml(package: str, *parts: str) -> YamlDoc:
    """Read a YAML file shipped inside an evalcore package.

    Example: ``read_packaged_yaml("evalcore.models", "pricing.yaml")``.
    """
    text = resources.files(package).joinpath(*parts).read_text("utf-8")
    return parse_yaml(text, "/".join([package.replace(".", "/"), *parts]))
