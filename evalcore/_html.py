"""HTML helpers shared by the pages evalcore writes (the notebook reports of ``reporting`` and the
agent evaluation's ``agent_eval`` report): the Content-Security-Policy that lets no script run
but the page's own. At the bottom, so both use one implementation and neither imports the other.
"""

from __future__ import annotations

import base64
import hashlib

__all__ = ["content_security_policy"]


def content_security_policy(*scripts: str) -> str:
    """A ``<meta>`` Content-Security-Policy that lets only the given inline scripts run.

    Defence in depth for pages that show what a model or an agent wrote: even if such text
    became markup, no script of it runs (no ``<script>``, no ``onerror=`` handler, no
    ``javascript:`` URL), nothing is fetched by script and no plug-in or frame is loaded. The
    page's own scripts are allowed by the SHA-256 of their exact text (CSP Level 2 hash sources,
    https://www.w3.org/TR/CSP2/#script-src-hash-usage).

    Args:
        *scripts: The exact text of each inline ``<script>`` the page needs to run.

    Returns:
        The ``<meta http-equiv="Content-Security-Policy" ...>`` element.

    Examples:
        >>> "script-src 'none'" in content_security_policy()
        True
    """
    hashes = " ".join(
        "'sha256-" + base64.b64encode(hashlib.sha256(s.encode("utf-8")).digest()).decode("ascii") + "'" for s in scripts
    )
    policy = (
        f"script-src {hashes or chr(39) + 'none' + chr(39)}; connect-src 'none'; object-src 'none'; "
        "frame-src 'none'; base-uri 'none'; form-action 'none'"
    )
    return f'<meta http-equiv="Content-Security-Policy" content="{policy}">'
