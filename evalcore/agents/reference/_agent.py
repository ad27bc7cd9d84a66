"""The reference agent: tool search, argument extraction, planning, synthesis, workflow tracking."""

from __future__ import annotations

import ast
import logging
import os
import threading
import weakref
from collections import Counter
from pathlib import Path
from typing import Any

from evalcore.agents._protocol import AgentResponse, StepRecord
from evalcore.agents.reference._embedding import make_embedder, minilm_model_dir
from evalcore.agents.reference._execution import ToolRun, run_tool_in_process, run_tool_sandboxed
from evalcore.agents.reference._extract import (
    STARTER_PARSERS,
    Extraction,
    Param,
    _kind,
    function_params,
    parse_json_object,
    regex_extract,
    validate_model_args,
)
from evalcore.agents.reference._planner import resolve_references, split_steps
from evalcore.agents.reference._registry import SQLiteToolRegistry, temp_registry_path
from evalcore.agents.reference._starter import STARTER_TOOLS
from evalcore.agents.reference._synthesis import SynthesisAttempt, ToolSynthesizer
from evalcore.errors import EvalcoreError
from evalcore.models import ChatModel, GenerationParams

log = logging.getLogger(__name__)

_MAX_QUERY_CHARS = 4000
_ARG_STRATEGIES = ("auto", "model", "deterministic")


def _remove_file(path: str) -> None:
    for suffix in ("", "-journal", "-wal", "-shm"):
        try:
            os.remove(path + suffix)
        except OSError:
            pass


def _signature_line(code: str, name: str) -> str:
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return f"def {name}(...)"
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            ret = f" -> {ast.unparse(node.returns)}" if node.returns is not None else ""
            return f"def {name}({ast.unparse(node.args)}){ret}"
    return f"def {name}(...)"


def _format(value: Any) -> str:
    return repr(value) if isinstance(value, str) else str(value)


class _Failure(Exception):
    """Internal: ends a request with a clean failed response."""

    def __init__(self, error: str, *, clarification: bool = False) -> None:
        super().__init__(error)
        self.error = error
        self.clarification = clarification


class ReferenceAgent:
    """A tool-building agent that meets the :class:`~evalcore.agents.Agent` protocol.

    For each step of a request (see :func:`split_steps`) it searches its SQLite registry for a
    tool with similarity ≥ ``threshold``; when none qualifies and a model is configured it
    synthesizes one test-first and registers it only after its tests pass in the sandbox. It then
    extracts the arguments, runs the tool and records the step.

    Tool execution: the four vetted starter tools run in-process (their code is the package's
    own, reviewed and tested); every synthesized tool runs inside
    :func:`evalcore.evaluators.sandbox.run_python`, its result returned as JSON on stdout.

    Argument extraction (``arg_strategy``):
        * ``"auto"`` (default): a starter tool's dedicated deterministic parser when it fills
          every required parameter, else the model (a JSON object of named arguments, accepted
          only when every value is typed and occurs in the request), else the regex fallback
          (numbers and quoted strings).
        * ``"model"``: the model first, then the deterministic parsers.
        * ``"deterministic"``: never the model.

    ``process_request`` never raises: invalid input gives ``success=False`` with a clear error,
    an ambiguous request (a required value missing) gives ``needs_clarification=True``.

    Args:
        model: A ChatModel, or None for the no-LLM mode (existing tools only; synthesis fails
            cleanly).
        threshold: Minimum cosine similarity for a registered tool to be used.
        registry_path: SQLite file of the registry (created or reopened); None for a temporary
            file. :meth:`reset` always switches to a fresh temporary registry.
        embedder: "auto", "minilm" or "tfidf".
        seed: Generation seed of every model call.
        arg_strategy: "auto", "model" or "deterministic".
        synthesis_max_tokens: Completion budget of each synthesis prompt.
        arg_max_tokens: Completion budget of the argument-extraction prompt.
        sandbox_timeout_s: Time limit of each sandboxed run (tests or tool call).
    """

    def __init__(
        self,
        model: ChatModel | None,
        *,
        threshold: float = 0.6,
        registry_path: str | os.PathLike[str] | None = None,
        embedder: str = "auto",
        seed: int = 0,
        arg_strategy: str = "auto",
        synthesis_max_tokens: int = 512,
        arg_max_tokens: int = 96,
        sandbox_timeout_s: float = 10.0,
    ) -> None:
        if not isinstance(threshold, (int, float)) or not -1.0 <= float(threshold) <= 1.0:
            raise EvalcoreError(f"threshold must be a number in [-1, 1], got {threshold!r}", field="threshold")
        if arg_strategy not in _ARG_STRATEGIES:
            raise EvalcoreError(
                f"arg_strategy must be one of {_ARG_STRATEGIES}, got {arg_strategy!r}", field="arg_strategy"
            )
        kind = (embedder or "auto").lower()
        if kind == "auto":
            kind = "minilm" if minilm_model_dir() is not None else "tfidf"
        make_embedder(kind)  # validates the name early
        self.model = model
        self.threshold = float(threshold)
        self.embedder_kind = kind
        self.seed = seed
        self.arg_strategy = arg_strategy
        self.arg_params = GenerationParams(temperature=0.0, max_tokens=arg_max_tokens, seed=seed)
        self.sandbox_timeout_s = sandbox_timeout_s
        self._synthesizer = (
            ToolSynthesizer(model, max_tokens=synthesis_max_tokens, seed=seed, timeout_s=sandbox_timeout_s)
            if model is not None
            else None
        )
        self._lock = threading.RLock()
        self._register_lock = threading.Lock()
        self._registry: SQLiteToolRegistry | None = None
        self._temp_path: str | None = None
        self._finalizer: Any = None
        self._attempts: list[SynthesisAttempt] = []
        self._open(Path(registry_path) if registry_path is not None else None)

    # ------------------------------------------------------------------ state
    def _open(self, path: Path | None) -> None:
        temp = path is None
        if temp:
            path = temp_registry_path()
        assert path is not None
        registry = SQLiteToolRegistry(path, make_embedder(self.embedder_kind))
        present = set(registry.list_tools())
        for name, tool in STARTER_TOOLS.items():
            if name not in present:
                registry.add_tool(name, tool.code, tool.tests, origin="starter")
        with self._lock:
            old, old_finalizer = self._registry, self._finalizer
            self._registry = registry
            self._temp_path = str(path) if temp else None
            self._finalizer = weakref.finalize(self, _remove_file, str(path)) if temp else None
            self._attempts = []
        if old is not None:
            old.close()
        if old_finalizer is not None:
            old_finalizer()

    @property
    def registry(self) -> SQLiteToolRegistry:
        """The current tool registry (search, list_tools, describe)."""
        assert self._registry is not None
        return self._registry

    def reset(self) -> None:
        """Switch to a fresh temporary registry holding only the starter tools.

        Learned tools, usage statistics, workflow history and synthesis attempts are gone; a
        user-given ``registry_path`` file is left untouched.
        """
        self._open(None)

    def close(self) -> None:
        """Close the registry and delete its temporary file (if it made one)."""
        with self._lock:
            if self._registry is not None:
                self._registry.close()
            if self._finalizer is not None:
                self._finalizer()

    def workflow_patterns(self) -> dict[str, int]:
        """How often each multi-tool sequence was used by a successful request.

        Returns:
            ``{"factorial -> percentage": 3, ...}`` for sequences of two or more tools,
            most frequent first.
        """
        counts = Counter(
            " -> ".join(w["sequence"]) for w in self.registry.workflows() if w["success"] and len(w["sequence"]) >= 2
        )
        return dict(sorted(counts.items(), key=lambda t: (-t[1], t[0])))

    def workflow_history(self) -> list[dict[str, Any]]:
        """Every request's tool sequence: ``{"query", "sequence", "success", "created_at"}``."""
        return self.registry.workflows()

    def synthesis_attempts(self) -> list[dict[str, Any]]:
        """Every synthesis attempt since the last reset (see :class:`SynthesisAttempt`)."""
        with self._lock:
            return [a.to_dict() for a in self._attempts]

    # ------------------------------------------------------------------ requests
    def process_request(self, query: str) -> AgentResponse:
        """Serve one request; never raises.

        Args:
            query: The request in natural language.

        Returns:
            The response. ``result`` holds the outputs no later step consumed: for a single step
            or a dependent chain that is the last step's result; for independent steps ("A and
            also B", "A; B") it is the list of their results in step order.
        """
        steps: list[StepRecord] = []
        flags = {"synthesized": False, "reused": False}
        registry = self.registry
        try:
            if not isinstance(query, str) or not query.strip():
                raise _Failure("invalid request: the query is empty")
            if len(query) > _MAX_QUERY_CHARS:
                raise _Failure(f"invalid request: the query is longer than {_MAX_QUERY_CHARS} characters")
            for i, segment in enumerate(split_steps(query)):
                self._run_step(registry, i, segment, steps, flags)
        except _Failure as f:
            self._record(registry, query, steps, False)
            return AgentResponse(
                success=False,
                response=f.error,
                result=None,
                tool_used=steps[-1].tool if steps and steps[-1].tool else None,
                synthesized=flags["synthesized"],
                reused=flags["reused"],
                steps=steps,
                error=f.error,
                needs_clarification=f.clarification,
            )
        except Exception as exc:  # the guarantee of the protocol: nothing escapes
            log.exception("reference agent failed on %r", query)
            self._record(registry, query if isinstance(query, str) else repr(query), steps, False)
            return AgentResponse(
                success=False,
                error=f"internal error: {type(exc).__name__}: {exc}",
                steps=steps,
                synthesized=flags["synthesized"],
                reused=flags["reused"],
            )
        self._record(registry, query, steps, True)
        consumed = {j for s in steps for j in s.depends_on}
        outputs = [s.result for i, s in enumerate(steps) if i not in consumed]
        text = "; then ".join(
            f"{s.tool}({', '.join(f'{k}={_format(v)}' for k, v in s.args.items())}) = {_format(s.result)}"
            for s in steps
        )
        return AgentResponse(
            success=True,
            response=text,
            result=outputs[0] if len(outputs) == 1 else outputs,
            tool_used=steps[-1].tool,
            synthesized=flags["synthesized"],
            reused=flags["reused"],
            steps=steps,
        )

    def _record(self, registry: SQLiteToolRegistry, query: str, steps: list[StepRecord], ok: bool) -> None:
        try:
            registry.record_workflow(query, [s.tool for s in steps if s.tool], ok)
        except Exception:  # a closed registry after a concurrent reset
            log.debug("could not record workflow", exc_info=True)

    def _run_step(
        self, registry: SQLiteToolRegistry, i: int, segment: str, steps: list[StepRecord], flags: dict[str, bool]
    ) -> None:
        prev_ok = bool(steps) and steps[-1].error is None
        previous = steps[-1].result if prev_ok else None
        text, referenced = resolve_references(segment, previous, prev_ok)
        depends_on = [i - 1] if referenced else []
        matches = registry.search(text, k=1, threshold=self.threshold)
        if matches:
            name = matches[0].name
            flags["reused"] = True
        else:
            name = self._synthesize(registry, text, segment)
            flags["synthesized"] = True
        info = registry.describe(name)
        params = function_params(info["code"], name) or []
        extraction = self._extract(name, info, params, text)
        if extraction.missing and prev_ok and previous is not None and not referenced:
            p = next(p for p in params if p.name == extraction.missing[0])
            if _fits(previous, p):
                extraction.args[p.name] = previous
                extraction.missing.remove(p.name)
                depends_on = [i - 1]
        if extraction.missing:
            steps.append(
                StepRecord(
                    name, dict(extraction.args), None, f"missing value for {', '.join(extraction.missing)}", depends_on
                )
            )
            raise _Failure(
                f"ambiguous request: {segment!r} needs a value for "
                f"{', '.join(repr(m) for m in extraction.missing)} of tool {name}; please specify it",
                clarification=True,
            )
        run = self._execute(name, info, extraction.args)
        try:
            registry.record_use(name, run.ok)
        except Exception:
            log.debug("could not record tool use", exc_info=True)
        steps.append(
            StepRecord(
                name, dict(extraction.args), run.result if run.ok else None, None if run.ok else run.error, depends_on
            )
        )
        if not run.ok:
            raise _Failure(f"{name} failed: {run.error}")

    def _synthesize(self, registry: SQLiteToolRegistry, text: str, segment: str) -> str:
        best = registry.search(text, k=1, threshold=-1.0)
        best_txt = f"best match {best[0].name} at {best[0].score:.2f}" if best else "no tools"
        if self._synthesizer is None:
            raise _Failure(
                f"could not synthesize a verified tool: no registered tool matches {segment!r} "
                f"({best_txt} < threshold {self.threshold:g}) and no model is configured"
            )
        attempt = self._synthesizer.synthesize(text)
        with self._lock:
            self._attempts.append(attempt)
        if not attempt.success:
            raise _Failure(f"could not synthesize a verified tool: {attempt.error}")
        with self._register_lock:
            name = attempt.name
            existing = set(registry.list_tools())
            if name in existing:
                n = 2
                while f"{name}_{n}" in existing:
                    n += 1
                alias = f"{name}_{n}"
                attempt.code = _rename(attempt.code, name, alias)
                attempt.tests = _rename(attempt.tests, name, alias)
                name = alias
            docstring = None
            if not _has_docstring(attempt.code, name):
                docstring = attempt.description
            registry.add_tool(name, attempt.code, attempt.tests, docstring=docstring, origin="synthesized")
            attempt.stage = "registered"
            attempt.name = name
        return name

    def _model_args(self, name: str, info: dict[str, Any], params: list[Param], text: str) -> Extraction | None:
        if self.model is None or not params:
            return None
        doc = (info.get("docstring") or "").strip().split("\n")[0]
        prompt = (
            "Extract the arguments of a Python function call from a request.\n"
            f"Function: {_signature_line(info['code'], name)}\n"
            f"Purpose: {doc}\nRequest: {text}\n"
            "Reply with only a JSON object that maps each parameter name to its value, "
            "using values that appear in the request."
        )
        completion = self.model.complete([{"role": "user", "content": prompt}], self.arg_params)
        if completion.error is not None:
            return None
        return validate_model_args(parse_json_object(completion.text), params, text)

    def _extract(self, name: str, info: dict[str, Any], params: list[Param], text: str) -> Extraction:
        parser = STARTER_PARSERS.get(name) if info.get("origin") == "starter" else None

        def deterministic() -> Extraction:
            return parser(text) if parser is not None else regex_extract(text, params)

        if self.arg_strategy == "deterministic":
            return deterministic()
        if self.arg_strategy == "auto" and parser is not None:
            first = parser(text)
            if not first.missing:
                return first
        from_model = self._model_args(name, info, params, text)
        if from_model is not None and not from_model.missing:
            return from_model
        return deterministic()

    def _execute(self, name: str, info: dict[str, Any], args: dict[str, Any]) -> ToolRun:
        starter = STARTER_TOOLS.get(name)
        if starter is not None and info.get("origin") == "starter" and info.get("code") == starter.code:
            return run_tool_in_process(starter.function, args)
        return run_tool_sandboxed(info["code"], name, args, timeout_s=self.sandbox_timeout_s)


def _fits(value: Any, param: Param) -> bool:
    kind = _kind(param.annotation)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "str":
        return isinstance(value, str)
    if kind == "list":
        return isinstance(value, list)
    return True


def _rename(source: str, old: str, new: str) -> str:
    """Rename function ``old`` to ``new`` everywhere in ``source`` (definition and calls)."""

    class _Renamer(ast.NodeTransformer):
        def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
            if node.name == old:
                node.name = new
            self.generic_visit(node)
            return node

        def visit_Name(self, node: ast.Name) -> ast.AST:
            if node.id == old:
                node.id = new
            return node

    return ast.unparse(_Renamer().visit(ast.parse(source))) + "\n"


def _has_docstring(code: str, name: str) -> bool:
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return False
    return any(isinstance(n, ast.FunctionDef) and n.name == name and ast.get_docstring(n) for n in tree.body)


def make_agent(
    model: str | ChatModel | None = "local:smollm2",
    *,
    threshold: float = 0.6,
    registry_path: str | None = None,
    embedder: str = "auto",
    seed: int = 0,
    **options: Any,
) -> ReferenceAgent:
    """Build the reference agent.

    Args:
        model: A model spec for :func:`evalcore.models.from_spec` (e.g. "local:smollm2"), any
            ChatModel, or None for the deterministic no-LLM mode.
        threshold: Minimum cosine similarity for reusing a registered tool.
        registry_path: SQLite registry file (None: a temporary one).
        embedder: "auto" (MiniLM when installed, else TF-IDF), "minilm" or "tfidf".
        seed: Generation seed.
        **options: Further :class:`ReferenceAgent` options (``arg_strategy``,
            ``synthesis_max_tokens``, ``arg_max_tokens``, ``sandbox_timeout_s``).

    Returns:
        The agent.

    Raises:
        EvalcoreError: On a bad model spec or option.
    """
    if isinstance(model, str):
        from evalcore.models import from_spec

        model = from_spec(model)
    elif model is not None and not (hasattr(model, "complete") and hasattr(model, "name")):
        raise EvalcoreError(
            f"model must be a spec string, a ChatModel or None, got {type(model).__name__}", field="model"
        )
    known = {"arg_strategy", "synthesis_max_tokens", "arg_max_tokens", "sandbox_timeout_s"}
    unknown = sorted(set(options) - known)
    if unknown:
        raise EvalcoreError(f"unknown reference-agent option(s) {unknown}; allowed: {sorted(known)}", field="options")
    return ReferenceAgent(
        model, threshold=threshold, registry_path=registry_path, embedder=embedder, seed=seed, **options
    )
