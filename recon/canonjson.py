"""Canonical JSON: the only way recon writes JSON.

UTF-8, sorted keys, no NaN or Infinity, floats written with ``repr`` so they
round-trip exactly. ``dumps`` is indented for files people read; ``dumpb_compact``
gives the byte string that hashes and signatures are computed over.
"""
from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

from .errors import CanonicalJSONError

__all__ = ["dumps", "dumps_compact", "write", "read", "loads", "sha256_of", "check_jsonable"]


def check_jsonable(value: Any, where: str = "$") -> None:
    """Raise :class:`CanonicalJSONError` naming the first non-canonical value."""
    if value is None or isinstance(value, (bool, str)):
        return
    if isinstance(value, int):
        if type(value) is not int and not isinstance(value, bool):
            raise CanonicalJSONError(
                f"{where} = {value!r} is a {type(value).__name__}, not a JSON number",
                hint="convert it with int(...)",
            )
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise CanonicalJSONError(
                f"{where} = {value!r}: NaN and Infinity are not JSON",
                hint="return a finite number (or a documented sentinel such as 0.0)",
            )
        return
    if isinstance(value, dict):
        for k, v in value.items():
            if not isinstance(k, str):
                raise CanonicalJSONError(f"{where} has a non-string key {k!r}", hint="use string keys")
            check_jsonable(v, f"{where}.{k}")
        return
    if isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            check_jsonable(v, f"{where}[{i}]")
        return
    hint = "convert it to a plain Python value"
    tname = type(value).__name__
    if tname.startswith(("float", "int", "uint", "bool")) or type(value).__module__ == "numpy":
        hint = "convert numpy values with float(x), int(x), bool(x) or arr.tolist()"
    raise CanonicalJSONError(f"{where} = {value!r} is a {tname}, which is not a JSON value", hint=hint)


def _plain(value: Any) -> Any:
    # Float subclasses (numpy.float64) are written as plain floats so the bytes never
    # depend on where a number came from.
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, float):
        return float(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def dumps(value: Any) -> str:
    """Indented canonical JSON text with a trailing newline."""
    check_jsonable(value)
    return json.dumps(_plain(value), sort_keys=True, ensure_ascii=False, allow_nan=False, indent=2) + "\n"


def dumps_compact(value: Any) -> str:
    """Compact canonical JSON text (no whitespace), the form that is hashed."""
    check_jsonable(value)
    return json.dumps(_plain(value), sort_keys=True, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def sha256_of(value: Any) -> str:
    return hashlib.sha256(dumps_compact(value).encode("utf-8")).hexdigest()


def write(path: Path, value: Any) -> None:
    path.write_bytes(dumps(value).encode("utf-8"))


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def loads(text: str | bytes) -> Any:
    """Parse JSON, refusing NaN/Infinity literals."""
    return json.loads(text, parse_constant=_reject_constant)


def read(path: Path) -> Any:
    return loads(path.read_bytes())
