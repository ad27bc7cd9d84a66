"""The processes whose command line holds a token (shared by tests/agents: what a hosted agent
started, and whether it outlived the agent)."""

from __future__ import annotations

import os


def alive(token: str) -> list[int]:
    """The PIDs of the living processes (zombies left out) whose command line holds ``token``."""
    out = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open(f"/proc/{p}/cmdline", "rb") as fh:
                cmd = fh.read()
            with open(f"/proc/{p}/stat") as fh:
                state = fh.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if token.encode() in cmd and state != "Z":
            out.append(int(p))
    return out
