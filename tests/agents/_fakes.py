"""Scripted stand-ins shared by the agent tests (not a test module)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from evalcore.models._types import Completion, CompletionError, GenerationParams, Message


class ScriptedModel:
    """A ChatModel answering by the kind of prompt: spec, tests, implementation or arguments."""

    def __init__(
        self,
        *,
        spec: str = "",
        tests: str = "",
        implementation: str = "",
        args: str | Callable[[str], str] = "{}",
        fail: bool = False,
    ) -> None:
        self.replies = {"spec": spec, "tests": tests, "implementation": implementation}
        self.args = args
        self.fail = fail
        self.prompts: list[tuple[str, str]] = []

    @property
    def name(self) -> str:
        return "scripted"

    def complete(self, messages: Sequence[Message], params: GenerationParams) -> Completion:
        prompt = messages[-1]["content"]
        if "Extract the arguments" in prompt:
            kind = "args"
        elif prompt.startswith("Request:"):
            kind = "spec"
        elif prompt.startswith("Write tests"):
            kind = "tests"
        elif prompt.startswith("Implement"):
            kind = "implementation"
        else:
            raise AssertionError(f"unexpected prompt {prompt[:80]!r}")
        self.prompts.append((kind, prompt))
        if self.fail:
            return Completion(text="", error=CompletionError("ConnectionError", "down"))
        if kind == "args":
            text = self.args(prompt) if callable(self.args) else self.args
        else:
            text = self.replies[kind]
        return Completion(text=text, model="scripted")

    async def acomplete(self, messages: Sequence[Message], params: GenerationParams) -> Completion:
        return self.complete(messages, params)


CUBE_SPEC = (
    "NAME: cube\nSIGNATURE: def cube(x: float) -> float:\nDESCRIPTION: Cube a number: raise x to the third power, x**3."
)
CUBE_TESTS = (
    "```python\ndef test_cube():\n    assert cube(2) == 8\n    assert cube(3) == 27\n    assert cube(-1) == -1\n```"
)
CUBE_IMPL = (
    '```python\ndef cube(x: float) -> float:\n    """Cube a number: raise x to the third power.\n\n'
    '    Args:\n        x: The number.\n\n    Returns:\n        x cubed.\n    """\n'
    "    return x ** 3\n```"
)
CUBE_WRONG = '```python\ndef cube(x: float) -> float:\n    """Cube a number."""\n    return x * 3\n```'


def request_number(prompt: str) -> str:
    m = re.search(r"Request: (.*)", prompt)
    return m.group(1) if m else ""
