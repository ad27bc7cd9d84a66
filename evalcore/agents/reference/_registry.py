"""SQLite tool registry with embedding search and usage statistics."""

from __future__ import annotations

import ast
import os
import sqlite3
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from evalcore.agents._protocol import ToolMatch
from evalcore.agents.reference._embedding import Embedder, query_views
from evalcore.errors import EvalcoreError

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tools (
    name TEXT PRIMARY KEY,
    code TEXT NOT NULL,
    docstring TEXT NOT NULL,
    tests TEXT NOT NULL,
    origin TEXT NOT NULL,
    embedding BLOB,
    calls INTEGER NOT NULL DEFAULT 0,
    successes INTEGER NOT NULL DEFAULT 0,
    last_used REAL,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS workflows (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created_at REAL NOT NULL,
    query TEXT NOT NULL,
    sequence TEXT NOT NULL,
    success INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


def tool_text(name: str, docstring: str) -> str:
    """The text a tool is embedded by: its name in words and its docstring's first two paragraphs."""
    paragraphs = [p.replace("\n", " ").strip() for p in docstring.strip().split("\n\n") if p.strip()]
    summary = [p for p in paragraphs[:2] if not p.endswith(":")]
    return f"{name.replace('_', ' ')}: {' '.join(summary)}".strip()


def function_docstring(code: str, name: str) -> str:
    """The docstring of function ``name`` defined in ``code`` ("" when absent or unparsable)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return ""
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return ast.get_docstring(node) or ""
    return ""


class SQLiteToolRegistry:
    """Tools in one SQLite file: code, docstring, tests, embedding and usage statistics.

    Search embeds each tool's name and docstring (see :func:`tool_text`) and ranks tools by the
    cosine similarity to the query (the maximum over :func:`query_views`), ties broken by name.
    All methods are thread-safe.

    Args:
        path: The SQLite file (created when missing). An existing file is reopened, so tools
            persist across processes.
        embedder: The embedder for tool texts and queries.
    """

    def __init__(self, path: str | os.PathLike[str], embedder: Embedder) -> None:
        self.path = Path(path)
        self.embedder = embedder
        self._lock = threading.RLock()
        try:
            self._conn = sqlite3.connect(str(self.path), check_same_thread=False)
            self._conn.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise EvalcoreError(f"not a usable tool registry: {exc}", path=self.path) from exc
        self._names: list[str] = []
        self._matrix = np.zeros((0, 1), dtype=np.float32)
        stored = self._meta("embedder")
        if stored != embedder.name or embedder.corpus_dependent:
            self._reembed_all()
        else:
            self._load_matrix()

    # ------------------------------------------------------------------ internals
    def _meta(self, key: str) -> str | None:
        row = self._conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def _reembed_all(self) -> None:
        with self._lock:
            rows = self._conn.execute("SELECT name, docstring FROM tools ORDER BY name").fetchall()
            texts = [tool_text(n, d) for n, d in rows]
            self.embedder.fit(texts)
            vecs = self.embedder.encode(texts) if texts else np.zeros((0, 1), np.float32)
            self._write_embeddings([name for name, _ in rows], vecs)

    def _write_embeddings(self, names: list[str], vecs: np.ndarray) -> None:
        """Store each tool's embedding and the embedder's name, then reload the search matrix."""
        with self._conn:
            for name, vec in zip(names, vecs):
                self._conn.execute(
                    "UPDATE tools SET embedding = ? WHERE name = ?",
                    (np.asarray(vec, np.float32).tobytes(), name),
                )
            self._conn.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES ('embedder', ?)",
                (self.embedder.name,),
            )
        self._load_matrix()

    def _load_matrix(self) -> None:
        rows = self._conn.execute("SELECT name, embedding FROM tools ORDER BY name").fetchall()
        self._names = [r[0] for r in rows]
        if rows:
            self._matrix = np.vstack([np.frombuffer(r[1], dtype=np.float32) for r in rows])
        else:
            self._matrix = np.zeros((0, 1), dtype=np.float32)

    # ------------------------------------------------------------------ writing
    def add_tool(
        self, name: str, code: str, tests: str, *, docstring: str | None = None, origin: str = "synthesized"
    ) -> None:
        """Register (or replace) a tool and embed it.

        Args:
            name: The function name the code defines.
            code: The tool's source (one self-contained function).
            tests: The source of its tests.
            docstring: Defaults to the function's own docstring.
            origin: "starter" or "synthesized".
        """
        doc = docstring if docstring is not None else function_docstring(code, name)
        now = time.time()
        with self._lock:
            with self._conn:
                self._conn.execute(
                    "INSERT OR REPLACE INTO tools(name, code, docstring, tests, origin, embedding, "
                    "calls, successes, last_used, created_at) VALUES (?, ?, ?, ?, ?, NULL, 0, 0, NULL, ?)",
                    (name, code, doc, tests, origin, now),
                )
            if self.embedder.corpus_dependent:
                self._reembed_all()
            else:
                self._write_embeddings([name], self.embedder.encode([tool_text(name, doc)]))

    def record_use(self, name: str, success: bool) -> None:
        """Count one call of ``name`` (and a success when ``success``); sets ``last_used``."""
        with self._lock, self._conn:
            self._conn.execute(
                "UPDATE tools SET calls = calls + 1, successes = successes + ?, last_used = ? WHERE name = ?",
                (1 if success else 0, time.time(), name),
            )

    def record_workflow(self, query: str, sequence: list[str], success: bool) -> None:
        """Store the tool sequence one request used."""
        with self._lock, self._conn:
            self._conn.execute(
                "INSERT INTO workflows(created_at, query, sequence, success) VALUES (?, ?, ?, ?)",
                (time.time(), query, " -> ".join(sequence), 1 if success else 0),
            )

    # ------------------------------------------------------------------ reading
    def search(self, query: str, k: int = 5, threshold: float = 0.0) -> list[ToolMatch]:
        """Return up to ``k`` tools with cosine similarity ≥ ``threshold``, best first.

        Args:
            query: The request text.
            k: Maximum number of matches.
            threshold: Minimum similarity in [-1, 1].

        Returns:
            Matches sorted by descending score, ties broken by name.
        """
        if not isinstance(query, str) or not query.strip() or k <= 0:
            return []
        with self._lock:
            names, matrix = list(self._names), self._matrix
            if not names:
                return []
            q = self.embedder.encode(query_views(query))
        scores = (q @ matrix.T).max(axis=0)
        ranked = sorted(zip(names, scores.tolist()), key=lambda t: (-t[1], t[0]))
        return [ToolMatch(n, float(s)) for n, s in ranked if s >= threshold][:k]

    def list_tools(self) -> list[str]:
        """Names of every registered tool, sorted."""
        with self._lock:
            return [r[0] for r in self._conn.execute("SELECT name FROM tools ORDER BY name")]

    def __contains__(self, name: object) -> bool:
        with self._lock:
            return bool(self._conn.execute("SELECT 1 FROM tools WHERE name = ?", (name,)).fetchone())

    def describe(self, name: str) -> dict[str, Any]:
        """Everything stored about one tool.

        Returns:
            ``{"name", "code", "docstring", "tests", "origin", "calls", "successes",
            "last_used", "created_at", "embedding_dim"}``.

        Raises:
            KeyError: If no tool has that name.
        """
        with self._lock:
            row = self._conn.execute(
                "SELECT name, code, docstring, tests, origin, calls, successes, last_used, "
                "created_at, length(embedding) FROM tools WHERE name = ?",
                (name,),
            ).fetchone()
        if row is None:
            raise KeyError(name)
        keys = ("name", "code", "docstring", "tests", "origin", "calls", "successes", "last_used", "created_at")
        out = dict(zip(keys, row[:9]))
        out["embedding_dim"] = (row[9] or 0) // 4
        return out

    def workflows(self) -> list[dict[str, Any]]:
        """Every recorded request: ``{"query", "sequence" (list of tool names), "success", "created_at"}``."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT created_at, query, sequence, success FROM workflows ORDER BY id"
            ).fetchall()
        return [
            {"created_at": c, "query": q, "sequence": s.split(" -> ") if s else [], "success": bool(ok)}
            for c, q, s, ok in rows
        ]

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._conn.close()


def temp_registry_path() -> Path:
    """A fresh, empty file path for a temporary registry."""
    fd, name = tempfile.mkstemp(prefix="evalcore_tools_", suffix=".sqlite")
    os.close(fd)
    return Path(name)
