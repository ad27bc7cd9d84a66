"""HTTP JSON adapter for agents, and a small server that exposes any agent over HTTP.

Wire protocol (JSON bodies, UTF-8):

* ``POST <url>`` with ``{"query": "..."}`` → an :class:`AgentResponse` as JSON
  (``AgentResponse.to_dict()``; unknown keys, also inside ``steps`` entries, are ignored).
* ``POST <url>/../reset`` (the sibling path ``reset``) → any 2xx status.
* ``GET <url>/../search?q=...&k=5&threshold=0.6`` → ``{"matches": [{"name", "score"}, ...]}``.
* ``GET <url>/../tools`` → ``{"tools": ["name", ...]}``.
* ``GET <url>/../tools?code=1`` → ``{"tools": [{"name", "code", "tests"}, ...]}``: every
  registered tool with its source (a function named like the tool, called with keyword
  arguments) and its tests; the evaluator runs this code itself (synthesis, reuse and retrieval
  labels are measured from it, never taken from the agent's flags).
* ``GET <url>/../describe?name=...`` (optional) → ``{"name", "code", "tests", ...}`` of one tool,
  404 when unknown; lets the evaluator read the quality of synthesized code.

Sibling paths are resolved like a relative link: for ``http://h:8000/agent/query`` they are
``http://h:8000/agent/reset`` etc.; for ``http://h:8000/`` they are ``http://h:8000/reset``.
"""

from __future__ import annotations

import ast
import json
import threading
import time
import zlib
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlparse

import httpx

from evalcore._io import excerpt, terminal_safe
from evalcore.agents._protocol import AgentResponse, StepRecord, ToolMatch
from evalcore.errors import EvalcoreError

# ------------------------------------------------------------------------------ the wire
MAX_REPLY_BYTES = 16 * 2**20
"""Default cap on one reply of an agent, counted after decompression (16 MiB)."""

MAX_REPLY_DEPTH = 64
"""Deepest nesting of lists and objects accepted in an agent's reply (the evaluator's own code
walks replies recursively; a reply 100,000 levels deep is refused, not followed)."""

_ENCODINGS = {
    "": None,
    "identity": None,
    "gzip": 16 + zlib.MAX_WBITS,
    "x-gzip": 16 + zlib.MAX_WBITS,
    "deflate": zlib.MAX_WBITS,
}


class AgentReplyError(Exception):
    """An agent's reply could not be read: no complete answer before the deadline, larger than
    the cap after decompression, not JSON, or nested too deep (the message says which)."""


class AgentTimeout(AgentReplyError):
    """No complete reply before the interaction's overall deadline."""


@dataclass
class _Reply:
    status_code: int
    content: bytes

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", errors="replace")

    def json(self) -> Any:
        return parse_reply(self.content)


def parse_reply(content: bytes | str, max_depth: int = MAX_REPLY_DEPTH) -> Any:
    """Parse an agent's JSON reply as plain data.

    ``NaN`` and ``Infinity`` are refused (not JSON); an integer of more digits than Python
    converts (4,300) is refused by the parser; nesting deeper than ``max_depth`` is refused.

    Raises:
        ValueError: The reply is not JSON, or is nested deeper than ``max_depth`` (the message
            says which).
    """

    def constant(name: str) -> Any:
        raise ValueError(f"{name} is not a JSON value")

    try:
        data = json.loads(content, parse_constant=constant)
    except RecursionError:
        raise ValueError(f"nested deeper than {max_depth} levels") from None
    except (UnicodeDecodeError, MemoryError) as exc:
        raise ValueError(f"not JSON: {type(exc).__name__}") from None
    depth = json_depth(data, max_depth)
    if depth > max_depth:
        raise ValueError(f"nested deeper than {max_depth} levels")
    return data


def json_depth(value: Any, limit: int) -> int:
    """Nesting depth of lists and dicts in ``value`` (walked without recursion; stops counting
    past ``limit``, returning ``limit + 1``)."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, (list, tuple, dict)):
            if d > limit:
                return limit + 1
            deepest = max(deepest, d)
            stack.extend((x, d + 1) for x in (v.values() if isinstance(v, dict) else v))
    return deepest


MAX_CODE_CHARS = 200_000
"""Longest tool source (or tests) the evaluator reads from a registry."""

MAX_CODE_DEPTH = 100
"""Deepest syntax tree of a tool's source the evaluator accepts (its own checks walk the tree)."""


def readable_code(code: Any) -> tuple[str | None, str | None]:
    """A registered tool's source (or tests) as the evaluator may read it.

    Source that Python cannot even parse for its size or depth (``ast.parse`` raises
    ``RecursionError`` or ``MemoryError`` on code nested a few thousand levels deep), source
    over :data:`MAX_CODE_CHARS` characters or with a syntax tree deeper than
    :data:`MAX_CODE_DEPTH` is not read: the tool counts as a tool without code, and the reason
    is kept. A plain syntax error is left for the checks to find (a tool that does not compile
    fails them).

    Returns:
        ``(code or None, why it was not read or None)``.
    """
    if code is None:
        return None, None
    if not isinstance(code, str):
        return None, f"not a string ({type(code).__name__})"
    if len(code) > MAX_CODE_CHARS:
        return None, f"longer than {MAX_CODE_CHARS} characters ({len(code)})"
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return code, None
    except (RecursionError, MemoryError, ValueError) as exc:
        return None, f"Python cannot parse it ({type(exc).__name__}: nested too deep or malformed)"
    stack: list[tuple[ast.AST, int]] = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_CODE_DEPTH:
            return None, f"its syntax tree is deeper than {MAX_CODE_DEPTH} levels"
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return code, None


class _Wire:
    """One HTTP client to an agent: every interaction has an overall deadline (headers and body
    together, however slowly the agent trickles them) and a cap on the reply after
    decompression (gzip and deflate are decoded here, chunk by chunk, with a bound on what one
    chunk may grow to).

    A request that misses its deadline is cancelled by closing the client's connections (its
    thread then ends on the closed socket) and a fresh client serves the next interaction.
    """

    def __init__(self, timeout_s: float, max_bytes: int = MAX_REPLY_BYTES, uds: str | None = None) -> None:
        self.timeout_s = float(timeout_s)
        self.max_bytes = int(max_bytes)
        self.uds = uds
        self._lock = threading.Lock()
        self._client = self._new_client()

    def _new_client(self) -> httpx.Client:
        transport = httpx.HTTPTransport(uds=self.uds) if self.uds else None
        return httpx.Client(timeout=self.timeout_s, headers={"Accept-Encoding": "gzip, deflate"}, transport=transport)

    def close(self) -> None:
        with self._lock:
            self._client.close()

    def request(self, method: str, url: str, **kw: Any) -> _Reply:
        """One interaction, complete within ``timeout_s``.

        Raises:
            AgentTimeout: No complete reply within ``timeout_s``.
            AgentReplyError: The reply is larger than the cap or its encoding is unknown or broken.
            httpx.HTTPError: The connection failed.
        """
        with self._lock:
            client = self._client
        box: dict[str, Any] = {}
        cancelled = threading.Event()

        def work() -> None:
            try:
                box["reply"] = self._read(client, method, url, cancelled, **kw)
            except BaseException as exc:  # handed to the caller
                box["exc"] = exc

        worker = threading.Thread(target=work, daemon=True, name="evalcore-agent-wire")
        worker.start()
        worker.join(self.timeout_s)
        if worker.is_alive():
            cancelled.set()
            with self._lock:
                if self._client is client:
                    self._client = self._new_client()
            threading.Thread(target=client.close, daemon=True).start()  # ends the worker's socket
            raise AgentTimeout(f"no complete answer within {self.timeout_s:g}s")
        if "exc" in box:
            raise box["exc"]
        return box["reply"]

    def _read(self, client: httpx.Client, method: str, url: str, cancelled: threading.Event, **kw: Any) -> _Reply:
        with client.stream(method, url, **kw) as response:
            encoding = response.headers.get("content-encoding", "").strip().lower()
            if encoding not in _ENCODINGS:
                raise AgentReplyError(f"reply in an unsupported content encoding {encoding[:40]!r}")
            wbits = _ENCODINGS[encoding]
            decoder = zlib.decompressobj(wbits) if wbits is not None else None
            parts: list[bytes] = []
            size = 0

            def add(piece: bytes) -> None:
                nonlocal size
                size += len(piece)
                if size > self.max_bytes:
                    raise AgentReplyError(
                        f"reply larger than {self.max_bytes} bytes"
                        + (" after decompression" if decoder is not None else "")
                    )
                parts.append(piece)

            for raw in response.iter_raw():
                if cancelled.is_set():
                    raise AgentTimeout("cancelled")
                if decoder is None:
                    add(raw)
                    continue
                data = raw
                while data:
                    try:
                        piece = decoder.decompress(data, self.max_bytes - size + 1)
                    except zlib.error as exc:
                        raise AgentReplyError(f"reply not valid {encoding}: {exc}") from None
                    add(piece)
                    data = decoder.unconsumed_tail
            if decoder is not None:
                add(decoder.flush())
            return _Reply(response.status_code, b"".join(parts))


def _error_text(response: Any) -> str:
    """``HTTP <status>: <the body's first 200 characters>``, control characters escaped (the
    CLI prints it on one line)."""
    body = terminal_safe(response.text[:400].strip())
    return f"HTTP {response.status_code}" + (f": {body[:200]}" if body else "")


MAX_REGISTRY_TOOLS = 2000
"""Most tools the evaluator reads from an agent's registry. The evaluator's own work grows with
the registry (every tool is hashed, checked and run on every kind's held-out inputs): a listing
of more tools is refused with an error naming the cap, and the checks that needed the registry
fail (150,000 one-line tools once kept an evaluation busy for 378 s where an honest agent
takes 13 s)."""


MAX_REGISTRY_CODE_CHARS = 2_000_000
"""Most characters of tool code and tests the evaluator keeps from one registry listing; the
code of the tools past it is not read (those tools count as tools without code, the reason
kept), so the snapshots a category takes stay small whatever the agent lists."""


def _registry_cap(rows: list[Any], url: str) -> None:
    if len(rows) > MAX_REGISTRY_TOOLS:
        raise EvalcoreError(
            f"the agent's registry lists {len(rows)} tools, more than the evaluator reads "
            f"(MAX_REGISTRY_TOOLS = {MAX_REGISTRY_TOOLS}, docs/agents.md, Bounds)",
            path=url,
            field="tools",
        )


class HttpToolRegistry:
    """The search side of a remote agent's registry (``GET search`` and ``GET tools``).

    Raises:
        EvalcoreError: From :meth:`search` / :meth:`list_tools` when the endpoint fails or
            answers malformed JSON (retrieval cannot be evaluated then).
    """

    def __init__(self, wire: _Wire, search_url: str, tools_url: str, describe_url: str | None = None) -> None:
        self._wire = wire
        self.search_url = search_url
        self.tools_url = tools_url
        self.describe_url = describe_url if describe_url is not None else urljoin(tools_url, "describe")

    def _get(self, url: str, params: dict[str, Any] | None = None) -> Any:
        response = self._fetch(url, params)
        if response.status_code >= 400:
            raise EvalcoreError(f"agent registry answered {_error_text(response)}", path=url)
        try:
            return response.json()
        except ValueError as exc:
            raise EvalcoreError(f"agent registry answered non-JSON ({exc})", path=url) from exc

    def _fetch(self, url: str, params: dict[str, Any] | None = None) -> _Reply:
        try:
            return self._wire.request("GET", url, params=params)
        except AgentTimeout as exc:
            raise EvalcoreError(f"agent registry: {exc}", path=url) from None
        except AgentReplyError as exc:
            raise EvalcoreError(f"agent registry: {exc}", path=url) from None
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            raise EvalcoreError(f"agent registry unreachable: {type(exc).__name__}: {exc}", path=url) from exc

    def search(self, query: str, k: int = 5, threshold: float = 0.0) -> list[ToolMatch]:
        """Ranked matches from ``GET search?q=&k=&threshold=``."""
        data = self._get(self.search_url, {"q": query, "k": k, "threshold": threshold})
        rows = data.get("matches") if isinstance(data, dict) else data
        if not isinstance(rows, list):
            raise EvalcoreError("search answer has no 'matches' list", path=self.search_url, field="matches")
        try:
            return [ToolMatch(str(r["name"]), float(r["score"])) for r in rows]
        except (KeyError, TypeError, ValueError, OverflowError) as exc:
            raise EvalcoreError(f"malformed match {exc}", path=self.search_url, field="matches") from exc

    def list_tools(self) -> list[str]:
        """Tool names from ``GET tools``."""
        data = self._get(self.tools_url)
        rows = data.get("tools") if isinstance(data, dict) else data
        if not isinstance(rows, list):
            raise EvalcoreError("tools answer has no 'tools' list", path=self.tools_url, field="tools")
        _registry_cap(rows, self.tools_url)
        return [str(r) for r in rows]

    def tool_records(self) -> list[dict[str, Any]]:
        """Every registered tool with its code from ``GET tools?code=1``.

        A server that answers plain names (an older one) is asked ``describe`` per tool; a tool
        it cannot describe gets ``code`` None. The whole read, those ``describe`` calls
        included, must be complete within twice the interaction deadline (a listing of many
        names, each described slowly, would otherwise add up without bound).

        Returns:
            ``[{"name": str, "code": str | None, "tests": str | None}, ...]`` (plain JSON values).

        Raises:
            EvalcoreError: The endpoint fails, answers a malformed list, or the read takes longer
                than its deadline.
        """
        deadline = time.monotonic() + 2 * self._wire.timeout_s
        data = self._get(self.tools_url, {"code": 1})
        rows = data.get("tools") if isinstance(data, dict) else data
        if not isinstance(rows, list):
            raise EvalcoreError("tools answer has no 'tools' list", path=self.tools_url, field="tools")
        _registry_cap(rows, self.tools_url)
        out: list[dict[str, Any]] = []
        read = 0
        for r in rows:
            if isinstance(r, str) and time.monotonic() > deadline:
                raise EvalcoreError(
                    f"the tool listing was not read within {2 * self._wire.timeout_s:g}s "
                    f"({len(out)} of {len(rows)} tools described)",
                    path=self.describe_url,
                )
            if isinstance(r, str):
                try:
                    info = self.describe(r)
                except KeyError:
                    info = {}
                r = {"name": r, "code": info.get("code"), "tests": info.get("tests")}
            if not isinstance(r, dict) or not isinstance(r.get("name"), str):
                raise EvalcoreError("a tool record without a 'name' string", path=self.tools_url, field="tools")
            record: dict[str, Any] = {"name": excerpt(r["name"], 200), "code": r.get("code"), "tests": r.get("tests")}
            for key in ("code", "tests"):
                record[key], why = readable_code(record[key])
                if record[key] is not None and read + len(record[key]) > MAX_REGISTRY_CODE_CHARS:
                    record[key], why = None, f"past {MAX_REGISTRY_CODE_CHARS} characters of code in all (not read)"
                read += len(record[key] or "")
                if why is not None:
                    record.setdefault("problems", []).append(f"{key} of tool {r['name'][:60]!r}: {why}")
            out.append(record)
        return out

    def describe(self, name: str) -> dict[str, Any]:
        """One tool's record from ``GET describe?name=`` (code, tests, docstring …).

        Raises:
            KeyError: The endpoint answers 404 (unknown tool, or no describe endpoint).
            EvalcoreError: Any other failure or a body that is not a JSON object.
        """
        response = self._fetch(self.describe_url, {"name": name})
        if response.status_code == 404:
            raise KeyError(name)
        if response.status_code >= 400:
            raise EvalcoreError(f"agent registry answered {_error_text(response)}", path=self.describe_url)
        try:
            data = response.json()
        except ValueError as exc:
            raise EvalcoreError(f"agent registry answered non-JSON ({exc})", path=self.describe_url) from exc
        if not isinstance(data, dict):
            raise EvalcoreError("describe answer is not a JSON object", path=self.describe_url)
        return data


class AgentEndpointError(RuntimeError):
    """The remote agent crashed or broke the wire protocol (the HTTP form of an escaped exception)."""


class HttpAgent:
    """An agent behind an HTTP JSON endpoint, seen through the :class:`Agent` protocol.

    A 4xx status is the endpoint refusing the request: ``AgentResponse(success=False,
    error=...)``. A 5xx status (the agent behind it raised: :class:`AgentServer` answers 500), a
    connection failure, a timeout or a 2xx body that is not an ``AgentResponse`` raises
    :class:`AgentEndpointError`, which the evaluator records as a critical failure — a crashed
    endpoint must not pass for a clear error message.

    Args:
        url: The request endpoint (``POST {"query": ...}``).
        timeout_s: Per-request timeout in seconds.
        reset_url: Override of the reset endpoint (default: sibling ``reset``).
        search_url: Override of the search endpoint (default: sibling ``search``).
        tools_url: Override of the tool-list endpoint (default: sibling ``tools``).
        describe_url: Override of the tool-description endpoint (default: sibling ``describe``).
        has_registry: False when the endpoint has no search (``registry`` is then None).
        threshold: The agent's similarity threshold, when known (retrieval uses it).
        max_reply_bytes: Cap on one reply after decompression (default :data:`MAX_REPLY_BYTES`);
            a larger reply is a failure of that interaction.
        uds: Reach the endpoint over this Unix socket instead of TCP (the URL's host is then
            only a name; a hosted agent serves so, from a network namespace of its own).

    Every interaction (a request, a reset, a registry read) must be complete within
    ``timeout_s`` overall — an endpoint that trickles its answer a byte at a time is cut off at
    the deadline — and its reply is refused past ``max_reply_bytes`` or :data:`MAX_REPLY_DEPTH`
    levels of nesting.
    """

    def __init__(
        self,
        url: str,
        *,
        timeout_s: float = 30.0,
        reset_url: str | None = None,
        search_url: str | None = None,
        tools_url: str | None = None,
        describe_url: str | None = None,
        has_registry: bool = True,
        threshold: float | None = None,
        max_reply_bytes: int = MAX_REPLY_BYTES,
        uds: str | None = None,
    ) -> None:
        try:
            parsed = urlparse(url)
            parsed.port  # noqa: B018 (a bad port or IPv6 literal raises here)
        except ValueError as exc:
            raise EvalcoreError(f"not a valid URL: {url!r} ({exc})", field="agent") from None
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise EvalcoreError(f"not an http(s) URL: {url!r}", field="agent")
        if not parsed.path:
            url = url + "/"
        self.url = url
        self.timeout_s = float(timeout_s)
        if threshold is not None:
            self.threshold = float(threshold)
        self.reset_url = reset_url or urljoin(url, "reset")
        self._wire = _Wire(self.timeout_s, max_reply_bytes, uds)
        self._registry = (
            HttpToolRegistry(
                self._wire,
                search_url or urljoin(url, "search"),
                tools_url or urljoin(url, "tools"),
                describe_url or urljoin(url, "describe"),
            )
            if has_registry
            else None
        )

    @property
    def registry(self) -> HttpToolRegistry | None:
        """The remote registry (None when constructed with ``has_registry=False``)."""
        return self._registry

    def process_request(self, query: str) -> AgentResponse:
        """POST the query.

        Returns:
            The endpoint's response; a 4xx status becomes a failed response with the status and
            body as ``error``.

        Raises:
            AgentEndpointError: 5xx status, unreachable endpoint, timeout or malformed body.
        """
        try:
            response = self._wire.request("POST", self.url, json={"query": query})
        except (httpx.TimeoutException, AgentTimeout) as exc:
            raise AgentEndpointError(
                f"agent endpoint timed out after {self.timeout_s:g}s (no complete answer)"
            ) from exc
        except AgentReplyError as exc:
            raise AgentEndpointError(f"agent endpoint: {exc}") from None
        except httpx.HTTPError as exc:
            raise AgentEndpointError(f"agent endpoint unreachable: {type(exc).__name__}: {exc}") from exc
        if response.status_code >= 500:
            raise AgentEndpointError(f"agent endpoint answered {_error_text(response)}")
        if response.status_code >= 400:
            return AgentResponse(success=False, error=f"agent endpoint answered {_error_text(response)}")
        try:
            data = response.json()
        except ValueError as exc:
            raise AgentEndpointError(f"agent endpoint answered non-JSON ({exc})") from None
        if not isinstance(data, dict) or "success" not in data:
            raise AgentEndpointError("agent endpoint answered JSON without 'success'")
        if not isinstance(data["success"], bool):
            raise AgentEndpointError(f"agent endpoint answered 'success': {data['success']!r}, not a JSON boolean")
        steps = data.get("steps") or []
        if not isinstance(steps, list) or not all(isinstance(st, dict) for st in steps):
            raise AgentEndpointError("agent endpoint answered 'steps' that is not a list of objects")
        known = set(StepRecord.__dataclass_fields__)
        data = {**data, "steps": [{k: v for k, v in st.items() if k in known} for st in steps]}
        try:
            out = AgentResponse.from_dict(data)
        except (TypeError, ValueError, OverflowError, RecursionError) as exc:
            raise AgentEndpointError(f"agent endpoint answered a malformed response: {exc}") from exc
        return out

    def check(self) -> None:
        """Ask the endpoint, before (or after) an evaluation, whether an agent answers there.

        ``GET tools`` must answer ``{"tools": [...]}`` (a 404 is taken for an agent without a
        registry) and ``POST reset`` — which every agent serves, and which an evaluation sends
        before each category anyway — a 2xx status. A dead endpoint would otherwise be evaluated
        case by case, each one a critical failure, and reported as a normal (failed) result.

        Raises:
            EvalcoreError: Nobody answers (connection refused, timeout), or what answers is not
                an agent endpoint; the message names the URL and the reason.
        """

        def fail(why: str) -> EvalcoreError:
            return EvalcoreError(f"no agent answers at {self.url}: {why}", field="agent")

        def ask(method: str, url: str, **kw: Any) -> _Reply:
            try:
                return self._wire.request(method, url, **kw)
            except (httpx.TimeoutException, AgentTimeout):
                raise fail(f"{method} {url} timed out after {self.timeout_s:g}s") from None
            except AgentReplyError as exc:
                raise fail(f"{method} {url}: {exc}") from None
            except (httpx.HTTPError, httpx.InvalidURL) as exc:
                raise fail(f"{method} {url} failed: {type(exc).__name__}: {exc}") from None

        if self._registry is not None:
            url = self._registry.tools_url
            response = ask("GET", url)
            if response.status_code != 404:
                if response.status_code >= 400:
                    raise fail(f"GET {url} answered {_error_text(response)}")
                try:
                    data = response.json()
                except ValueError:
                    data = None
                rows = data.get("tools") if isinstance(data, dict) else data
                if not isinstance(rows, list):
                    raise fail(
                        f"GET {url} answered {response.status_code} without a JSON 'tools' list "
                        '(an agent answers {"tools": [...]}, see docs/agents.md)'
                    )
        response = ask("POST", self.reset_url, json={})
        if response.status_code >= 400:
            raise fail(
                f"POST {self.reset_url} answered {_error_text(response)} (an agent answers 2xx, see docs/agents.md)"
            )

    def reset(self) -> None:
        """POST the reset endpoint.

        Raises:
            EvalcoreError: When the reset fails (an evaluation would not be isolated).
        """
        try:
            response = self._wire.request("POST", self.reset_url, json={})
        except (AgentReplyError, httpx.HTTPError, httpx.InvalidURL) as exc:
            raise EvalcoreError(f"agent reset failed: {type(exc).__name__}: {exc}", path=self.reset_url) from exc
        if response.status_code >= 400:
            raise EvalcoreError(f"agent reset answered {_error_text(response)}", path=self.reset_url)

    def close(self) -> None:
        """Close the HTTP client."""
        self._wire.close()
