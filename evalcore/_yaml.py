"""Reading YAML files with errors that name the file and line: the one YAML reader of evalcore.

Used for the pricing table, prompt templates, the notebook-suite file and parameter files.
``yaml`` (PyYAML) is imported here only, so modules that read YAML import this one where they
need it.

Every document is bounded before it is built (YAML files are trusted input, but a hostile or
damaged one must not take the machine): at most :data:`MAX_YAML_BYTES` of text, scalars of at
most :data:`MAX_SCALAR_CHARS` characters, nesting at most :data:`MAX_DEPTH` deep, and at most
:data:`MAX_EXPANDED_NODES` nodes and :data:`MAX_EXPANDED_CHARS` scalar characters once every alias
is expanded (an "alias bomb" of nested anchors is refused, never built). The text is parsed once,
with LibYAML's C parser where PyYAML has it (the pure-Python one otherwise), into a list of
events checked for depth and scalar size; the node graph is composed from those same events
(PyYAML's composer, its depth already bounded), checked for alias expansion, and built.
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from evalcore.errors import EvalcoreError

__all__ = [
    "YamlDoc",
    "read_yaml",
    "read_packaged_yaml",
    "parse_yaml",
    "MAX_YAML_BYTES",
    "MAX_SCALAR_CHARS",
    "MAX_DEPTH",
    "MAX_EXPANDED_NODES",
    "MAX_EXPANDED_CHARS",
]

#: The largest YAML file read (bytes).
MAX_YAML_BYTES = 16 * 1024 * 1024
#: The longest scalar (characters) in a document.
MAX_SCALAR_CHARS = 1024 * 1024
#: The deepest nesting of mappings and sequences.
MAX_DEPTH = 64
#: Nodes in the document once every alias is expanded.
MAX_EXPANDED_NODES = 1_000_000
#: Scalar characters in the document once every alias is expanded.
MAX_EXPANDED_CHARS = 32 * 1024 * 1024

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _EventComposer(yaml.composer.Composer, yaml.constructor.SafeConstructor, yaml.resolver.Resolver):
    """PyYAML's safe composer and constructor reading events already parsed (and checked)."""

    def __init__(self, events: list[Any]) -> None:
        self._events = events
        self._next = 0
        yaml.composer.Composer.__init__(self)
        yaml.constructor.SafeConstructor.__init__(self)
        yaml.resolver.Resolver.__init__(self)

    def check_event(self, *choices: Any) -> bool:
        if self._next >= len(self._events):
            return False
        return not choices or isinstance(self._events[self._next], choices)

    def peek_event(self) -> Any:
        return self._events[self._next]

    def get_event(self) -> Any:
        event = self._events[self._next]
        self._next += 1
        return event


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
    if len(text) > MAX_YAML_BYTES:
        raise EvalcoreError(f"YAML text of {len(text):,} characters, over the limit of {MAX_YAML_BYTES:,}", path=source)
    try:
        composer = _EventComposer(_checked_events(text, source))
        node = composer.get_single_node()
        if node is not None:
            _check_expansion(node, source)
        data = composer.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc)
        raise EvalcoreError(f"malformed YAML: {_excerpt(problem)}", path=source, line=line) from exc
    except RecursionError as exc:
        raise EvalcoreError(f"YAML nested too deep (the limit is {MAX_DEPTH})", path=source) from exc
    return YamlDoc(data, source, node)


def _excerpt(text: str, limit: int = 200) -> str:
    """``text`` cut to ``limit`` characters for a message."""
    return text if len(text) <= limit else text[:limit] + f"… ({len(text):,} characters)"


def _checked_events(text: str, source: str | os.PathLike[str]) -> list[Any]:
    """The text's events; nesting deeper than MAX_DEPTH or a scalar over MAX_SCALAR_CHARS refused.

    Reads the event stream (no recursion, nothing built), so a document nested a million deep
    is refused before the recursive composer or constructor sees it.
    """
    events: list[Any] = []
    depth = 0
    values = 0  # scalars and collections: each a node (aliases only add), so the events kept are bounded
    for event in yaml.parse(text, Loader=_Loader):
        events.append(event)
        mark = event.start_mark
        line = mark.line + 1 if mark is not None else None
        if isinstance(event, (yaml.ScalarEvent, yaml.CollectionStartEvent)):
            values += 1
            if values > MAX_EXPANDED_NODES:
                raise EvalcoreError(f"a YAML document of over {MAX_EXPANDED_NODES:,} values", path=source, line=line)
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                raise EvalcoreError(f"YAML nested more than {MAX_DEPTH} deep", path=source, line=line)
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
        elif isinstance(event, yaml.ScalarEvent) and len(event.value) > MAX_SCALAR_CHARS:
            raise EvalcoreError(
                f"a YAML value of {len(event.value):,} characters, over the limit of {MAX_SCALAR_CHARS:,}",
                path=source,
                line=line,
            )
    return events


def _check_expansion(root: Any, source: str | os.PathLike[str]) -> None:
    """Refuse a node graph whose alias expansion is too large, or that refers to itself.

    Each node's expanded size (nodes, scalar characters) is computed once, bottom-up, so the
    check costs the size of the graph, not of its expansion.
    """
    sizes: dict[int, tuple[int, int]] = {}
    on_path: set[int] = set()
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            on_path.discard(key)
            nodes, chars = 1, 0
            for child in _children(node):
                n, c = sizes[id(child)]
                nodes += n
                chars += c
            if nodes > MAX_EXPANDED_NODES or chars > MAX_EXPANDED_CHARS:
                raise EvalcoreError(
                    f"YAML aliases expand to over {MAX_EXPANDED_NODES:,} values or {MAX_EXPANDED_CHARS:,} "
                    "characters (an alias bomb?)",
                    path=source,
                    line=node.start_mark.line + 1,
                )
            sizes[key] = (nodes, chars)
            continue
        if key in sizes:
            continue
        if key in on_path:
            raise EvalcoreError("a YAML anchor refers to itself", path=source, line=node.start_mark.line + 1)
        if isinstance(node, yaml.ScalarNode):
            sizes[key] = (1, len(node.value))
            continue
        on_path.add(key)
        stack.append((node, True))
        for child in _children(node):
            if id(child) in on_path:
                raise EvalcoreError("a YAML anchor refers to itself", path=source, line=child.start_mark.line + 1)
            if id(child) not in sizes:
                stack.append((child, False))


def _children(node: Any) -> list[Any]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


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
        size = p.stat().st_size
        if p.is_file() and size > MAX_YAML_BYTES:
            raise EvalcoreError(
                f"a YAML file of {size:,} bytes, over the limit of {MAX_YAML_BYTES:,}", path=p, field=field
            )
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
