"""Output kinds: how each field of an oracle's output is compared with the truth.

Each kind is a thin, validated wrapper around a spec dict understood by
:mod:`recon.compare`, the one comparison module shared by grader and feedback tool.
Every field carries ``doc=``: what the value means and its unit, in words the agent
reads (the instruction's output table, beside the tolerance). The reasons behind a
tolerance are not part of it: they belong to the oracle's private recipe.
"""
from __future__ import annotations

import math
from typing import Any

from . import compare

__all__ = ["Output", "Number", "Integer", "Exact", "Text", "Angle", "SetOf", "SequenceOf"]


def _nonneg(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v >= 0


class Output:
    """Base class of every output kind."""

    kind = "output"
    doc: str | None = None   # public: what the value means, with its unit

    def spec(self) -> dict[str, Any]:
        raise NotImplementedError

    def problems(self) -> list[tuple[str, str]]:
        return []

    def compare(self, got: Any, want: Any) -> bool:
        """True when ``got`` matches ``want`` within this field's tolerance."""
        return compare.within(self.spec(), got, want)

    def kind_error(self, value: Any) -> str | None:
        return compare.kind_error(self.spec(), value)

    def describe(self) -> str:
        """The tolerance in words."""
        return compare.describe(self.spec())

    def __repr__(self) -> str:  # pragma: no cover - cosmetic
        s = self.spec()
        s.pop("kind")
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in s.items())})"


class Number(Output):
    """A real number; passes when ``|got - want| <= max(abs, rel * max(|got|, |want|))``."""

    kind = "number"

    def __init__(self, abs: float = 0.0, rel: float = 0.0, *, doc: str | None = None) -> None:  # noqa: A002 - DESIGN names
        self.abs, self.rel, self.doc = abs, rel, doc

    def problems(self) -> list[tuple[str, str]]:
        if not (_nonneg(self.abs) and _nonneg(self.rel)):
            return [(f"tolerances must be finite and >= 0, got abs={self.abs!r}, rel={self.rel!r}", "e.g. Number(abs=1e-3)")]
        if self.abs == 0 and self.rel == 0:
            return [("Number() with abs=0 and rel=0 demands bit-identical floats", "give abs= or rel=, or use Exact()")]
        return []

    def spec(self) -> dict[str, Any]:
        return {"kind": "number", "abs": float(self.abs), "rel": float(self.rel)}


class Integer(Output):
    """An integer; passes when ``|got - want| <= tol``."""

    kind = "integer"

    def __init__(self, tol: int = 0, *, doc: str | None = None) -> None:
        self.tol, self.doc = tol, doc

    def problems(self) -> list[tuple[str, str]]:
        if not (isinstance(self.tol, int) and not isinstance(self.tol, bool) and self.tol >= 0):
            return [(f"tol must be an integer >= 0, got {self.tol!r}", "e.g. Integer(tol=0)")]
        return []

    def spec(self) -> dict[str, Any]:
        return {"kind": "integer", "tol": self.tol}


class Exact(Output):
    """Any JSON value; passes on the same type and value (``true`` is not ``1``)."""

    kind = "exact"

    def __init__(self, *, doc: str | None = None) -> None:
        self.doc = doc

    def spec(self) -> dict[str, Any]:
        return {"kind": "exact"}


class Text(Output):
    """A string; ``normalize`` may be None, ``"strip"`` or ``"casefold"``."""

    kind = "text"

    def __init__(self, normalize: str | None = None, *, doc: str | None = None) -> None:
        self.normalize, self.doc = normalize, doc

    def problems(self) -> list[tuple[str, str]]:
        if self.normalize not in (None, "strip", "casefold"):
            return [(f"normalize={self.normalize!r} is unknown", 'use None, "strip" or "casefold"')]
        return []

    def spec(self) -> dict[str, Any]:
        return {"kind": "text", "normalize": self.normalize}


class Angle(Output):
    """An angle in degrees compared on the circle: 359 and 1 are 2 apart."""

    kind = "angle"

    def __init__(self, tol: float, period: float = 360.0, *, doc: str | None = None) -> None:
        self.tol, self.period, self.doc = tol, period, doc

    def problems(self) -> list[tuple[str, str]]:
        if not _nonneg(self.tol) or not _nonneg(self.period) or self.period == 0:
            return [(f"tol and period must be finite, tol >= 0 and period > 0; got tol={self.tol!r}, period={self.period!r}", "e.g. Angle(tol=5.0)")]
        if self.tol >= self.period / 2:
            return [(f"tol={self.tol!r} accepts every angle of period {self.period!r}", "use a tolerance below half the period")]
        return []

    def spec(self) -> dict[str, Any]:
        return {"kind": "angle", "tol": float(self.tol), "period": float(self.period)}


class SetOf(Output):
    """A list of strings compared as a set; ``normalize="smiles"`` canonicalises with RDKit."""

    kind = "set"

    def __init__(self, normalize: str | None = None, *, doc: str | None = None) -> None:
        self.normalize, self.doc = normalize, doc

    def problems(self) -> list[tuple[str, str]]:
        if self.normalize not in (None, "strip", "smiles"):
            return [(f"normalize={self.normalize!r} is unknown", 'use None, "strip" or "smiles"')]
        return []

    def spec(self) -> dict[str, Any]:
        return {"kind": "set", "normalize": self.normalize}


class SequenceOf(Output):
    """A same-length list compared item by item with ``item``'s tolerance."""

    kind = "sequence"

    def __init__(self, item: Output, *, doc: str | None = None) -> None:
        # The sequence's doc= describes the list and its items; the item kind needs none.
        self.item, self.doc = item, doc

    def problems(self) -> list[tuple[str, str]]:
        if not isinstance(self.item, Output):
            return [(f"item must be an output kind, got {self.item!r}", "e.g. SequenceOf(Number(abs=1e-3))")]
        return self.item.problems()

    def spec(self) -> dict[str, Any]:
        return {"kind": "sequence", "item": self.item.spec()}
