"""Entry point of ``evalcore serve-local``'s server process: ``llama_cpp.server`` with fresh contexts.

``python -m evalcore.models._serve_main ARGS`` runs llama-cpp-python's OpenAI-compatible
server with the same arguments, after making every completion start from an empty llama
context (see :func:`evalcore.models._local._fresh_context`): a seeded answer then does not
depend on which requests the server answered before it.
"""

from __future__ import annotations

import functools
from typing import Any


def _patch_fresh_context() -> None:
    import llama_cpp

    from evalcore.models._local import _fresh_context

    original = llama_cpp.Llama.create_completion
    if getattr(original, "_evalcore_fresh", False):
        return

    @functools.wraps(original)
    def create_completion(self: Any, *args: Any, **kwargs: Any) -> Any:
        _fresh_context(self)
        return original(self, *args, **kwargs)

    create_completion._evalcore_fresh = True  # type: ignore[attr-defined]
    llama_cpp.Llama.create_completion = create_completion  # type: ignore[method-assign]


def main() -> None:
    """Patch llama-cpp-python, then hand over to ``llama_cpp.server``'s own ``main``."""
    _patch_fresh_context()
    from llama_cpp.server.__main__ import main as server_main

    from evalcore.models._local import _plain_weight_buffers

    with _plain_weight_buffers():  # the server's own model load: no AMX repacking where it crashes
        server_main()


if __name__ == "__main__":
    main()
