"""Typed, tolerance-aware comparison of a program's output with the oracle's truth.

This module is the single source of comparison logic. The grader imports it, and the
in-container feedback tool carries a copy generated from this very file at build time,
so it must stay standard-library only and self-contained (no imports from recon).

An output field is described by a *spec*: a small JSON object such as
``{"kind": "number", "abs": 0.001, "rel": 0.0}``. Comparison is typed first (a string
never equals a number, ``true`` never equals ``1``), then tolerant. NaN and Infinity
never equal anything.
"""
from __future__ import annotations

import json
import math
import sys
from typing import Any, NamedTuple

KINDS = ("number", "integer", "exact", "text", "angle", "set", "sequence")

PASS = "PASS"
MISMATCH = "MISMATCH"
MISSING = "MISSING"
WRONG_KIND = "WRONG_KIND"


class FieldResult(NamedTuple):
    """The verdict for one output field of one scenario."""

    field: str
    status: str  # PASS, MISMATCH, MISSING or WRONG_KIND
    detail: str  # empty for PASS; "got ... want ... (tolerance)" otherwise

    @property
    def ok(self) -> bool:
        return self.status == PASS


def fmt(value: Any, limit: int = 60) -> str:
    """A short, readable rendering of a JSON value for one-line reports."""
    if isinstance(value, bool) or value is None:
        text = json.dumps(value)
    elif isinstance(value, float):
        text = format(value, ".6g") if math.isfinite(value) else repr(value)
    elif isinstance(value, (int, str)):
        text = json.dumps(value, ensure_ascii=False)
    else:
        try:
            text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=repr)
        except ValueError:
            text = repr(value)
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return text


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _kind_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def describe(spec: dict[str, Any]) -> str:
    """The tolerance of a field in words, as reports and instructions print it."""
    kind = spec["kind"]
    if kind == "number":
        parts = []
        if spec.get("abs"):
            parts.append(f"abs tol {fmt(float(spec['abs']))}")
        if spec.get("rel"):
            parts.append(f"rel tol {fmt(float(spec['rel']))}")
        return " or ".join(parts) if parts else "exact number"
    if kind == "integer":
        tol = int(spec.get("tol", 0))
        return "exact integer" if tol == 0 else f"integer, tol {tol}"
    if kind == "exact":
        return "exact value and type"
    if kind == "text":
        norm = spec.get("normalize")
        return "exact text" if not norm else f"text after {norm}"
    if kind == "angle":
        return f"angle tol {fmt(float(spec['tol']))} deg (period {fmt(float(spec.get('period', 360.0)))})"
    if kind == "set":
        norm = spec.get("normalize")
        return "set of strings" + (f" after {norm} canonicalization" if norm else "")
    if kind == "sequence":
        return "same-length list, each item: " + describe(spec["item"])
    raise ValueError(f"unknown output kind {kind!r}")


def kind_error(spec: dict[str, Any], value: Any) -> str | None:
    """Why ``value`` is not of the field's kind, or None when it is."""
    kind = spec["kind"]
    ok: bool
    want: str
    if kind in ("number", "angle"):
        ok, want = _is_number(value), "a number"
    elif kind == "integer":
        ok, want = isinstance(value, int) and not isinstance(value, bool), "an integer"
    elif kind == "exact":
        return None
    elif kind == "text":
        ok, want = isinstance(value, str), "a string"
    elif kind == "set":
        ok, want = isinstance(value, list) and all(isinstance(v, str) for v in value), "a list of strings"
    elif kind == "sequence":
        ok, want = isinstance(value, list), "a list"
        if ok:
            for i, item in enumerate(value):
                err = kind_error(spec["item"], item)
                if err:
                    return f"item {i}: {err}"
    else:
        raise ValueError(f"unknown output kind {kind!r}")
    if ok:
        return None
    return f"expected {want}, got {_kind_name(value)} {fmt(value, 30)}"


def _smiles_canonicalizer() -> Any:
    if "site" not in sys.modules:  # started with -S (the feedback tool): find site-packages now
        import site

        site.main()
    try:
        from rdkit import Chem, RDLogger
    except ImportError:
        return None
    RDLogger.DisableLog("rdApp.*")  # type: ignore[attr-defined]

    def canon(s: str) -> str | None:
        mol = Chem.MolFromSmiles(s)
        return None if mol is None else Chem.MolToSmiles(mol)

    return canon


_CANON_CACHE: dict[str, Any] = {}


def normalize_set(spec: dict[str, Any], values: list[str]) -> tuple[list[str], list[str]]:
    """Normalise a set field: returns (sorted unique items, items that did not parse)."""
    norm = spec.get("normalize")
    bad: list[str] = []
    out: set[str] = set()
    if norm == "smiles":
        if "smiles" not in _CANON_CACHE:
            _CANON_CACHE["smiles"] = _smiles_canonicalizer()
        canon = _CANON_CACHE["smiles"]
        for v in values:
            c = canon(v) if canon is not None else v
            if c is None:
                bad.append(v)
            else:
                out.add(c)
    elif norm in (None, "strip"):
        out = {v.strip() if norm else v for v in values}
    else:
        raise ValueError(f"unknown set normalisation {norm!r}")
    return sorted(out), bad


def smiles_available() -> bool:
    """Whether RDKit can canonicalise SMILES here (else SMILES compare as written)."""
    if "smiles" not in _CANON_CACHE:
        _CANON_CACHE["smiles"] = _smiles_canonicalizer()
    return _CANON_CACHE["smiles"] is not None


def within(spec: dict[str, Any], got: Any, want: Any) -> bool:
    """True when ``got`` equals ``want`` under the field's kind and tolerance."""
    return check(spec, got, want)[0]


def _num_close(got: float, want: float, abs_tol: float, rel_tol: float) -> bool:
    if not (math.isfinite(got) and math.isfinite(want)):
        return False
    diff = abs(got - want)
    return diff <= max(abs_tol, rel_tol * max(abs(got), abs(want)))


def check(spec: dict[str, Any], got: Any, want: Any) -> tuple[bool, str]:
    """Compare one value with the truth: (ok, "got ... want ... (tolerance)")."""
    err = kind_error(spec, got)
    if err is not None:
        return False, err
    kind = spec["kind"]
    ok: bool
    if kind == "number":
        ok = _num_close(float(got), float(want), float(spec.get("abs", 0.0)), float(spec.get("rel", 0.0)))
    elif kind == "integer":
        ok = abs(int(got) - int(want)) <= int(spec.get("tol", 0))
    elif kind == "exact":
        ok = type(got) is type(want) and got == want and not _has_nonfinite(got)
    elif kind == "text":
        norm = spec.get("normalize")
        if norm == "strip":
            ok = got.strip() == want.strip()
        elif norm == "casefold":
            ok = got.strip().casefold() == want.strip().casefold()
        else:
            ok = got == want
    elif kind == "angle":
        g, w = float(got), float(want)
        if not (math.isfinite(g) and math.isfinite(w)):
            ok = False
        else:
            period = float(spec.get("period", 360.0))
            d = abs(g - w) % period
            ok = min(d, period - d) <= float(spec["tol"])
    elif kind == "set":
        g_items, g_bad = normalize_set(spec, got)
        w_items, _ = normalize_set(spec, want)
        ok = not g_bad and g_items == w_items
        if g_bad and not ok:
            return False, f"unparseable items {fmt(g_bad, 40)}  want {fmt(w_items)}  ({describe(spec)})"
    elif kind == "sequence":
        ok = len(got) == len(want) and all(within(spec["item"], g, w) for g, w in zip(got, want))
    else:
        raise ValueError(f"unknown output kind {kind!r}")
    if ok:
        return True, ""
    return False, f"got {fmt(got)}  want {fmt(want)}  ({describe(spec)})"


def _has_nonfinite(value: Any) -> bool:
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, list):
        return any(_has_nonfinite(v) for v in value)
    if isinstance(value, dict):
        return any(_has_nonfinite(v) for v in value.values())
    return False


def compare_output(fields: dict[str, dict[str, Any]], got: dict[str, Any], want: dict[str, Any]) -> list[FieldResult]:
    """One :class:`FieldResult` per declared output field, in sorted field order."""
    results = []
    for name in sorted(fields):
        spec = fields[name]
        if name not in got:
            results.append(FieldResult(name, MISSING, "missing from the output"))
            continue
        kerr = kind_error(spec, got[name])
        if kerr is not None:
            results.append(FieldResult(name, WRONG_KIND, kerr))
            continue
        ok, detail = check(spec, got[name], want[name])
        results.append(FieldResult(name, PASS if ok else MISMATCH, detail))
    return results


def contract_errors(fields: dict[str, dict[str, Any]], got: Any) -> list[str]:
    """Why an output does not speak the contract (empty list when it does)."""
    if not isinstance(got, dict):
        return [f"the output is a JSON {_kind_name(got)}, not an object"]
    errors = []
    for name in sorted(fields):
        if name not in got:
            errors.append(f"field {name!r} is missing")
        else:
            kerr = kind_error(fields[name], got[name])
            if kerr is not None:
                errors.append(f"field {name!r}: {kerr}")
    return errors


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def parse_stdout(stdout: bytes) -> tuple[Any, str | None]:
    """Decode a program's stdout as one JSON value: (value, None) or (None, why not)."""
    try:
        text = stdout.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"output is not UTF-8 ({exc.reason} at byte {exc.start})"
    if not text.strip():
        return None, "no output on stdout"
    try:
        return json.loads(text, parse_constant=_reject_constant), None
    except ValueError as exc:
        first = text.strip().splitlines()[0] if text.strip() else ""
        return None, f"invalid JSON on stdout ({exc}); it starts with {fmt(first, 50)}"
