"""Sandboxes that run untrusted submissions: ``local``, ``bwrap`` and ``docker``.

Use :func:`get_runtime` to obtain one by name (``auto`` picks the strongest available).
"""
from __future__ import annotations

from .base import Limits, RunResult, Runtime, get_runtime, pick_runtime_name

__all__ = ["Limits", "RunResult", "Runtime", "get_runtime", "pick_runtime_name"]
