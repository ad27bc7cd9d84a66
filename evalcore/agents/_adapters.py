"""Load an agent from a spec string: "reference", "module:function" or "http://host:port/path"."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evalcore.agents._protocol import Agent, AgentResponse, ToolRegistry
from evalcore.errors import EvalcoreError


class FactoryAgent:
    """Wraps a user agent that has ``process_request`` and ``reset`` but no ``registry``.

    Requests pass straight through (exceptions included: an evaluator records an escaping
    exception as a critical failure); ``registry`` is None, so retrieval is not evaluated.
    """

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    @property
    def registry(self) -> ToolRegistry | None:
        return None

    def process_request(self, query: str) -> AgentResponse:
        return self.inner.process_request(query)

    def reset(self) -> None:
        self.inner.reset()


def _import_factory(spec: str) -> Any:
    """The factory named by ``spec`` (``module:function`` or ``path/file.py:function``).

    Raises:
        EvalcoreError: One line naming the spec, the module's file (and line, when its code
            failed) and what failed: no such module or file, a syntax error, the module's own
            code raising on import, or no callable of that name.
    """
    module_name, _, attr = spec.rpartition(":")
    if not module_name or not attr:
        raise EvalcoreError(f"agent spec {spec!r} is not 'module:function'", field="agent")
    try:
        module = _import_module(module_name, spec)
    except EvalcoreError:
        raise
    except SyntaxError as exc:
        raise EvalcoreError(
            f"agent {spec!r}: module {module_name!r} has a syntax error: {exc.msg}",
            path=exc.filename or module_name,
            line=exc.lineno,
            field="agent",
        ) from exc
    except ImportError as exc:
        where = _failing_line(exc)
        if where is None:  # the module itself (or a package above it) was not found
            raise EvalcoreError(f"agent {spec!r}: cannot import module {module_name!r}: {exc}", field="agent") from exc
        raise EvalcoreError(
            f"agent {spec!r}: importing module {module_name!r} raised {type(exc).__name__}: {exc}",
            path=where[0],
            line=where[1],
            field="agent",
        ) from exc
    except Exception as exc:  # the module's own top-level code failed
        where = _failing_line(exc)
        raise EvalcoreError(
            f"agent {spec!r}: importing module {module_name!r} raised {type(exc).__name__}: {exc}",
            path=where[0] if where else None,
            line=where[1] if where else None,
            field="agent",
        ) from exc
    factory = getattr(module, attr, None)
    if factory is None or not callable(factory):
        raise EvalcoreError(
            f"agent {spec!r}: module {module_name!r} has no callable {attr!r}",
            path=getattr(module, "__file__", None),
            field="agent",
        )
    return factory


def _import_module(module_name: str, spec: str) -> Any:
    """Import ``module_name``, a dotted name or a ``.py`` file."""
    if not module_name.endswith(".py"):
        return importlib.import_module(module_name)
    path = Path(module_name)
    if not path.is_file():
        raise EvalcoreError(f"agent {spec!r}: module file not found", path=path, field="agent")
    mod_spec = importlib.util.spec_from_file_location(path.stem, path)
    if mod_spec is None or mod_spec.loader is None:
        raise EvalcoreError(f"agent {spec!r}: cannot import the module file", path=path, field="agent")
    module = importlib.util.module_from_spec(mod_spec)
    sys.modules.setdefault(path.stem, module)
    mod_spec.loader.exec_module(module)
    return module


def _failing_line(exc: BaseException) -> tuple[str, int] | None:
    """The file and line of the agent module's code where ``exc`` arose: the first frame of its
    traceback past this module and the import machinery (None when no such frame exists, as
    for a module that was not found)."""
    tb = exc.__traceback__
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if name != __file__ and not name.startswith("<") and "importlib" not in Path(name).parts:
            return name, tb.tb_lineno
        tb = tb.tb_next
    return None


def check_agent(obj: Any, origin: str = "agent") -> Agent:
    """Return ``obj`` as an :class:`Agent`, or raise EvalcoreError naming what is missing.

    An object with callable ``process_request`` and ``reset`` but no ``registry`` attribute is
    wrapped in :class:`FactoryAgent` (registry None).
    """
    missing = [m for m in ("process_request", "reset") if not callable(getattr(obj, m, None))]
    if missing:
        raise EvalcoreError(
            f"{origin} returned {type(obj).__name__}, which lacks {', '.join(missing)} "
            "(an agent needs process_request(query) -> AgentResponse and reset())",
            field="agent",
        )
    if not hasattr(obj, "registry"):
        return FactoryAgent(obj)
    registry = obj.registry
    if registry is not None and not isinstance(registry, ToolRegistry):
        raise EvalcoreError(f"{origin}: registry lacks search(query, k, threshold) / list_tools()", field="agent")
    return obj


def build_in_process(spec: str, **kwargs: Any) -> Agent:
    """Import a ``module:function`` factory and call it in this process (see :func:`load_agent`).

    Raises:
        EvalcoreError: The spec cannot be resolved, the factory fails, or its result does not
            meet the protocol.
    """
    factory = _import_factory(spec)
    try:
        obj = factory(**kwargs)
    except EvalcoreError:
        raise
    except Exception as exc:
        where = _failing_line(exc)
        raise EvalcoreError(
            f"agent {spec!r}: the factory raised {type(exc).__name__}: {exc}",
            path=where[0] if where else None,
            line=where[1] if where else None,
            field="agent",
        ) from exc
    return check_agent(obj, f"agent {spec!r}: the factory")


def load_agent(
    spec: str,
    *,
    in_process: bool = False,
    timeout_s: float = 30.0,
    hide: Sequence[str | os.PathLike[str]] = (),
    writable: Sequence[str | os.PathLike[str]] = (),
    **kwargs: Any,
) -> Agent:
    """Build the agent named by ``spec``.

    A Python agent (``"reference"`` or ``"module:function"``) runs in a fresh interpreter of its
    own (:class:`~evalcore.agents.HostedAgent`) and is reached over the HTTP JSON protocol, so it
    cannot reach the evaluator; ``in_process=True`` builds it in this process instead (for
    debugging: the evaluator then marks its results ``trusted: false``).

    Args:
        spec: ``"reference"`` (the reference agent; ``kwargs`` go to
            :func:`evalcore.agents.reference.make_agent`), ``"module:function"`` or
            ``"path/to/file.py:function"`` (the factory is called with ``kwargs``), or an
            ``http://``/``https://`` URL (``kwargs`` go to :class:`HttpAgent`).
        in_process: Build a Python agent in this process.
        timeout_s: Per-request timeout of a hosted or HTTP agent.
        hide: Paths a hosted agent must not read (see :class:`~evalcore.agents.HostedAgent`).
        writable: Directories a hosted agent may write to; the rest of the file system is
            read-only for it but for its private ``/tmp`` (see :class:`~evalcore.agents.HostedAgent`).
            The reference agent's ``registry_path`` folder is added by itself.
        **kwargs: Options for the factory (JSON values for a hosted agent).

    Returns:
        An object meeting the :class:`Agent` protocol.

    Raises:
        EvalcoreError: When the spec cannot be resolved, the factory fails, or its result does
            not meet the protocol.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise EvalcoreError(f"empty agent spec {spec!r}", field="agent")
    spec = spec.strip()
    if spec.startswith(("http://", "https://")):
        from evalcore.agents._http import HttpAgent

        allowed = {"reset_url", "search_url", "tools_url", "describe_url", "has_registry"}
        unknown = sorted(set(kwargs) - allowed)
        if unknown:
            raise EvalcoreError(
                f"option(s) {unknown} do not apply to an HTTP agent (its threshold and model are "
                f"set on its server); allowed: {sorted(allowed | {'timeout_s'})}",
                field="agent",
            )
        return HttpAgent(spec, timeout_s=timeout_s, **kwargs)
    if "://" in spec:
        raise EvalcoreError(f"unsupported URL scheme in agent spec {spec!r} (use http:// or https://)", field="agent")
    if spec == "reference":
        if in_process:
            from evalcore.agents.reference import make_agent

            return make_agent(**kwargs)
        spec = "evalcore.agents.reference:make_agent"
        if kwargs.get("registry_path"):
            writable = [*writable, os.path.dirname(os.path.abspath(os.fspath(kwargs["registry_path"])))]
    if in_process:
        return build_in_process(spec, **kwargs)
    _import_check(spec)
    from evalcore.agents._host import HostedAgent

    return HostedAgent(spec, kwargs, timeout_s=timeout_s, hide=hide, writable=writable)


def _import_check(spec: str) -> None:
    """Fail early, with the usual messages, on a spec that cannot name a factory."""
    module_name, _, attr = spec.rpartition(":")
    if not module_name or not attr:
        raise EvalcoreError(f"agent spec {spec!r} is not 'module:function'", field="agent")
    if module_name.endswith(".py") and not Path(module_name).is_file():
        raise EvalcoreError(f"agent {spec!r}: module file not found", path=Path(module_name), field="agent")
