"""Sandboxes that run untrusted submissions: ``local``, ``bwrap`` and ``docker``.

Use :func:`get_runtime` to obtain one by name (``auto`` picks the strongest available).
The concrete runtimes are imported only when picked, so naming the package stays cheap.
"""
from __future__ import annotations

from ..errors import RuntimeUnavailable, UsageError
from .base import Limits, RunResult, Runtime, Session, SessionPool

__all__ = ["Limits", "RunResult", "Runtime", "Session", "SessionPool", "get_runtime", "pick_runtime_name", "RUNTIME_NAMES"]

RUNTIME_NAMES = ("auto", "local", "bwrap", "docker")


def pick_runtime_name(requested: str) -> str:
    """Resolve ``auto``: docker when an engine answers, else bwrap when it works, else local."""
    if requested not in RUNTIME_NAMES:
        raise UsageError(f"unknown runtime {requested!r}", hint=f"choose one of {', '.join(RUNTIME_NAMES)}")
    if requested != "auto":
        return requested
    from .docker import engine_available  # noqa: PLC0415 - start-up: docker-py is imported only here

    if engine_available():
        return "docker"
    from .bwrap import bwrap_available  # noqa: PLC0415 - start-up: a runtime is imported only when picked

    if bwrap_available():
        return "bwrap"
    return "local"


def get_runtime(requested: str = "auto", *, for_grading: bool = True) -> Runtime:
    """A runtime by name. ``docker`` as a per-run sandbox is not offered to the grader
    (the docker runtime grades a whole task through its verifier image instead)."""
    name = pick_runtime_name(requested)
    if name == "docker" and for_grading:
        # Inside one grading, per-run sandboxing uses bwrap/local; the docker runtime
        # runs the grader itself in the verifier container (see recon run).
        name = "bwrap" if _bwrap_ok() else "local"
    if name == "local":
        from .local import LocalRuntime  # noqa: PLC0415 - start-up: a runtime is imported only when picked

        return LocalRuntime()
    if name == "bwrap":
        from .bwrap import BwrapRuntime  # noqa: PLC0415 - start-up: a runtime is imported only when picked

        return BwrapRuntime()
    raise RuntimeUnavailable(f"runtime {name!r} cannot run single submissions", hint="use --runtime local or bwrap")


def _bwrap_ok() -> bool:
    from .bwrap import bwrap_available  # noqa: PLC0415 - start-up: a runtime is imported only when picked

    return bwrap_available()
