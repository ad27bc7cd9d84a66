"""Test-first tool synthesis through a ChatModel: spec → tests → implementation → sandbox."""

from __future__ import annotations

import ast
import re
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from evalcore.agents.reference._execution import verify_tool
from evalcore.models import ChatModel, GenerationParams

_SYSTEM = "You are a careful Python developer. You write small, correct, self-contained functions."


@dataclass
class SynthesisAttempt:
    """Everything about one synthesis attempt (kept for evaluation and debugging).

    Attributes:
        query: The request that triggered synthesis.
        success: The tool passed its own tests in the sandbox and was registered.
        stage: The last stage reached: "spec", "tests", "implementation", "verify", "registered".
        error: Why it failed (None on success).
        name: The function name from the spec.
        signature: The ``def`` line from the spec.
        description: The one-sentence spec.
        tests: The test source (sanitised).
        code: The implementation source (sanitised).
        verification: The sandbox's verdict text.
        model_calls: Number of model calls made.
        duration_s: Wall-clock seconds of the attempt.
    """

    query: str
    success: bool = False
    stage: str = "spec"
    error: str | None = None
    name: str = ""
    signature: str = ""
    description: str = ""
    tests: str = ""
    code: str = ""
    verification: str = ""
    model_calls: int = 0
    duration_s: float = 0.0
    raw: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def extract_code(text: str) -> str:
    """Every fenced code block of a reply joined (an unclosed last block counts), or the whole
    reply when it has none."""
    blocks = re.findall(r"```(?:python|py)?[ \t]*\n(.*?)(?:```|$)", text, re.S)
    if not blocks:
        return text.strip("\n")
    return "\n\n".join(b.strip("\n") for b in blocks)


def _parse_signature(line: str) -> ast.FunctionDef | None:
    line = line.strip().rstrip(":").strip()
    if not line.startswith("def "):
        line = "def " + line
    try:
        tree = ast.parse(line + ":\n    pass\n")
    except SyntaxError:
        return None
    node = tree.body[0]
    return node if isinstance(node, ast.FunctionDef) else None


def parse_spec(text: str) -> tuple[str, str, str] | None:
    """Read ``NAME:``, ``SIGNATURE:`` and ``DESCRIPTION:`` lines from a spec reply.

    Returns:
        ``(name, signature, description)`` with a signature that parses as a ``def`` header,
        or None.
    """
    sig_m = re.search(r"SIGNATURE:\s*`*\s*(def\s+[^\n`]+)", text, re.I) or re.search(
        r"^\s*(def\s+\w+\s*\([^\n]*\)[^\n]*)", text, re.M
    )
    if not sig_m:
        return None
    node = _parse_signature(sig_m.group(1))
    if node is None or not node.args.args:
        return None
    name = node.name
    signature = f"def {name}({ast.unparse(node.args)})"
    if node.returns is not None:
        signature += f" -> {ast.unparse(node.returns)}"
    desc_m = re.search(r"DESCRIPTION:\s*([^\n]+)", text, re.I)
    description = desc_m.group(1).strip() if desc_m else ""
    return name, signature + ":", description


def parse_lenient(source: str) -> ast.Module | None:
    """Parse ``source``; when it does not parse (a reply cut off by the token budget), parse the
    longest prefix of whole lines that does. None when no non-empty prefix parses."""
    try:
        return ast.parse(source)
    except SyntaxError:
        pass
    lines = source.splitlines()
    for end in range(len(lines) - 1, 0, -1):
        try:
            tree = ast.parse("\n".join(lines[:end]))
        except SyntaxError:
            continue
        return tree if tree.body else None
    return None


def _calls_name(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == name for n in ast.walk(node))


def sanitize_tests(source: str, name: str) -> str | None:
    """Keep imports and ``test_*`` functions (top-level asserts are wrapped into one).

    Returns:
        The test source, or None unless it parses (see :func:`parse_lenient`) and has an
        ``assert`` that calls ``name``.
    """
    tree = parse_lenient(source)
    if tree is None:
        return None
    keep: list[ast.stmt] = []
    loose: list[ast.stmt] = []
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            keep.append(node)
        elif isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
            keep.append(node)
        elif isinstance(node, ast.Assert):
            loose.append(node)
    if loose:
        fn = ast.parse(f"def test_{name}_cases():\n    pass\n").body[0]
        assert isinstance(fn, ast.FunctionDef)
        fn.body = loose
        keep.append(fn)
    module = ast.Module(body=keep, type_ignores=[])
    asserts = [n for n in ast.walk(module) if isinstance(n, ast.Assert) and _calls_name(n, name)]
    if not asserts:
        return None
    return ast.unparse(ast.fix_missing_locations(module)) + "\n"


def sanitize_implementation(source: str, name: str) -> str | None:
    """Keep imports, constants, helper functions and classes; drop tests and top-level calls.

    Returns:
        The implementation source, or None unless it parses (see :func:`parse_lenient`) and
        defines function ``name``.
    """
    tree = parse_lenient(source)
    if tree is None:
        return None
    keep: list[ast.stmt] = [
        node
        for node in tree.body
        if isinstance(node, (ast.Import, ast.ImportFrom, ast.ClassDef, ast.Assign, ast.AnnAssign))
        or (isinstance(node, ast.FunctionDef) and not node.name.startswith("test"))
    ]
    if not any(isinstance(n, ast.FunctionDef) and n.name == name for n in keep):
        return None
    return ast.unparse(ast.Module(body=keep, type_ignores=[])) + "\n"


class ToolSynthesizer:
    """Writes a new tool with a ChatModel in test-first order and verifies it in the sandbox.

    Three prompts: (1) a spec (name, typed signature, one-sentence description) for a reusable
    function whose inputs are parameters; (2) tests written from the spec alone; (3) the
    implementation, shown the spec and the tests. The tool counts as verified only when the
    implementation followed by the tests runs to its end in the sandbox
    (:func:`~evalcore.agents.reference._execution.verify_tool`).

    Args:
        model: The ChatModel.
        max_tokens: Completion budget of the tests and implementation prompts (the spec prompt
            gets at most 128 tokens).
        seed: Generation seed.
        timeout_s: Sandbox limit for the test run.
    """

    def __init__(self, model: ChatModel, *, max_tokens: int = 512, seed: int = 0, timeout_s: float = 10.0) -> None:
        self.model = model
        self.params = GenerationParams(temperature=0.0, max_tokens=max_tokens, seed=seed)
        self.spec_params = GenerationParams(temperature=0.0, max_tokens=min(max_tokens, 128), seed=seed)
        self.timeout_s = timeout_s

    def _ask(self, attempt: SynthesisAttempt, key: str, prompt: str) -> str | None:
        attempt.model_calls += 1
        params = self.spec_params if key == "spec" else self.params
        completion = self.model.complete(
            [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": prompt}], params
        )
        if completion.error is not None:
            attempt.error = f"model call failed at {key}: {completion.error.type}: {completion.error.message}"
            return None
        attempt.raw[key] = completion.text
        return completion.text

    def synthesize(self, query: str) -> SynthesisAttempt:
        """Run the three prompts and the sandbox check for ``query``; never raises."""
        t0 = time.perf_counter()
        attempt = SynthesisAttempt(query=query)
        try:
            self._run(attempt)
        finally:
            attempt.duration_s = time.perf_counter() - t0
        return attempt

    def _run(self, a: SynthesisAttempt) -> None:
        text = self._ask(
            a,
            "spec",
            f"Request: {a.query}\n\n"
            "Design ONE reusable Python function that answers requests like this one. The "
            "values mentioned in the request must be parameters, not constants.\n"
            "Reply in exactly this format and nothing else:\n"
            "NAME: <snake_case_name>\n"
            "SIGNATURE: def <snake_case_name>(<parameters with type hints>) -> <return type>:\n"
            "DESCRIPTION: <one sentence>",
        )
        if text is None:
            return
        spec = parse_spec(text)
        if spec is None:
            a.error = "spec: the model did not give a parsable function signature with parameters"
            return
        a.name, a.signature, a.description = spec
        a.stage = "tests"
        doc = f'    """{a.description.replace(chr(34) * 3, "")}"""' if a.description else "    ..."
        header = f"{a.signature}\n{doc}"
        text = self._ask(
            a,
            "tests",
            "Write tests for this Python function before it is implemented:\n\n"
            f"```python\n{header}\n```\n\n"
            f"Write one function `test_{a.name}()` containing at least three lines of the form "
            f"`assert {a.name}(...) == expected` with concrete values you have checked by hand. "
            "Reply with only a ```python code block.",
        )
        if text is None:
            return
        tests = sanitize_tests(extract_code(text), a.name)
        if tests is None:
            a.error = f"tests: the model's tests do not parse or never assert on {a.name}(...)"
            return
        a.tests = tests
        a.stage = "implementation"
        text = self._ask(
            a,
            "implementation",
            "Implement this Python function so that the tests below pass. Keep the signature, "
            "write a docstring with Args and Returns, keep the type hints, and use only the "
            "standard library.\n\n"
            f"```python\n{header}\n```\n\nTests:\n```python\n{tests}```\n\n"
            "Reply with only the function in a ```python code block.",
        )
        if text is None:
            return
        code = sanitize_implementation(extract_code(text), a.name)
        if code is None:
            a.error = f"implementation: the model's code does not parse or does not define {a.name}"
            return
        a.code = code
        a.stage = "verify"
        verdict = verify_tool(code, tests, timeout_s=self.timeout_s)
        a.verification = verdict.detail
        if not verdict.passed:
            a.error = f"verification: {verdict.detail}"
            return
        a.success = True
