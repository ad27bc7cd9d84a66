"""``evalcore serve-local``."""

from __future__ import annotations

import argparse
from typing import Any


def _serve(args: argparse.Namespace) -> int:
    from evalcore.models._server import serve_local

    return serve_local(port=args.port, host=args.host, verbose=args.verbose)


def register(subparsers: Any, groups: dict[str, Any]) -> None:
    """Add ``serve-local`` to the CLI."""
    p = subparsers.add_parser(
        "serve-local",
        help="serve the embedded model over an OpenAI-compatible API",
        description="Serve SmolLM2-135M-Instruct through llama-cpp-python's OpenAI-compatible "
        "server; use it as --model openai-compatible:smollm2@http://HOST:PORT/v1.",
    )
    p.add_argument("--port", type=int, default=8000, help="TCP port (default 8000)")
    p.add_argument("--host", default="127.0.0.1", help="interface (default 127.0.0.1)")
    p.add_argument(
        "--verbose",
        action="store_true",
        help="print llama.cpp's model-loader log and per-request timings (about 2,100 lines "
        "at start-up; off by default)",
    )
    p.set_defaults(func=_serve)
