"""Parameter axes: what an oracle can be swept over.

An axis validates values, maps a point of the unit interval to a value (the sweep
draws the points), names its edges, and describes itself as a JSON Schema fragment.
Every axis carries ``doc=``: what the parameter means and its unit, in words the agent
reads (the instruction's parameter table). Constructors only record their arguments;
``@oracle`` checks them, so an error can name the plugin and the axis (see
:meth:`Axis.problems`).
"""
from __future__ import annotations

import math
from typing import Any, Sequence

__all__ = ["Axis", "Float", "Int", "Choice", "Bool", "Seed"]

SEED_MAX = 2**31 - 1


def _round_sig(x: float, digits: int = 6) -> float:
    if x == 0 or not math.isfinite(x):
        return x
    return float(f"{x:.{digits}g}")


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


class Axis:
    """Base class of every axis kind."""

    kind: str = "axis"
    doc: str | None = None   # public: what the parameter means, with its unit

    def problems(self) -> list[tuple[str, str]]:
        """Definition errors as (what is wrong, what to do instead)."""
        return []

    def validate(self, value: Any) -> str | None:
        """Why ``value`` is not a valid value of this axis, or None."""
        raise NotImplementedError

    def from_unit(self, u: float) -> Any:
        """The value at position ``u`` in [0, 1) of the axis (deterministic)."""
        raise NotImplementedError

    def edges(self) -> list[Any]:
        """The extreme values of the axis (hidden scenarios include them)."""
        raise NotImplementedError

    def json_schema(self) -> dict[str, Any]:
        raise NotImplementedError

    def describe(self) -> dict[str, Any]:
        """The manifest entry: kind and bounds (or choices)."""
        raise NotImplementedError

    def narrow(self, spec: dict[str, Any]) -> "Axis":
        """A copy restricted by a sweep spec table (``lo``/``hi`` or ``choices``)."""
        raise ValueError(f"{self.kind} axes cannot be narrowed")

    def __repr__(self) -> str:  # pragma: no cover - cosmetic
        d = self.describe()
        d.pop("kind", None)
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in d.items())})"


class Float(Axis):
    """A real interval ``[lo, hi]``; ``log=True`` spreads samples evenly in log space.

    Sampled values are rounded to ``digits`` significant digits so scenarios stay
    readable and byte-stable.
    """

    kind = "float"

    def __init__(self, lo: float, hi: float, log: bool = False, *, digits: int = 6, doc: str | None = None) -> None:
        self.lo, self.hi, self.log, self.digits, self.doc = lo, hi, log, digits, doc

    def problems(self) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        if not (_is_number(self.lo) and _is_number(self.hi)):
            return [(f"bounds must be numbers, got lo={self.lo!r}, hi={self.hi!r}", "write Float(lo, hi) with numbers")]
        if not (math.isfinite(self.lo) and math.isfinite(self.hi)):
            out.append((f"bounds must be finite, got lo={self.lo!r}, hi={self.hi!r}", "use finite bounds"))
        elif self.lo >= self.hi:
            out.append((f"lo={self.lo!r} is not below hi={self.hi!r}", f"write Float({self.hi!r}, {self.lo!r}) or widen the interval"))
        if self.log and _is_number(self.lo) and self.lo <= 0:
            out.append((f"log=True needs lo > 0, got lo={self.lo!r}", "use a positive lower bound or log=False"))
        if not isinstance(self.log, bool):
            out.append((f"log must be True or False, got {self.log!r}", "pass log=True or log=False"))
        if not (isinstance(self.digits, int) and 1 <= self.digits <= 17):
            out.append((f"digits must be an integer in 1..17, got {self.digits!r}", "use digits=6"))
        return out

    def validate(self, value: Any) -> str | None:
        if not _is_number(value):
            return f"expected a number, got {value!r}"
        if not math.isfinite(value) or not (self.lo <= value <= self.hi):
            return f"{value!r} is outside [{self.lo!r}, {self.hi!r}]"
        return None

    def from_unit(self, u: float) -> float:
        if self.log:
            x = math.exp(math.log(self.lo) + u * (math.log(self.hi) - math.log(self.lo)))
        else:
            x = self.lo + u * (self.hi - self.lo)
        return float(min(max(_round_sig(x, self.digits), float(self.lo)), float(self.hi)))

    def edges(self) -> list[Any]:
        return [float(self.lo), float(self.hi)]

    def json_schema(self) -> dict[str, Any]:
        return {"type": "number", "minimum": float(self.lo), "maximum": float(self.hi)}

    def describe(self) -> dict[str, Any]:
        return {"kind": "float", "lo": float(self.lo), "hi": float(self.hi), "log": self.log}

    def narrow(self, spec: dict[str, Any]) -> "Float":
        lo, hi = spec.get("lo", self.lo), spec.get("hi", self.hi)
        for v in (lo, hi):
            if self.validate(v):
                raise ValueError(f"narrowed bound {v!r} is outside [{self.lo!r}, {self.hi!r}]")
        new = Float(lo, hi, log=spec.get("log", self.log), digits=self.digits, doc=self.doc)
        if new.problems():
            raise ValueError(new.problems()[0][0])
        return new


class Int(Axis):
    """An integer interval ``[lo, hi]``, both ends included."""

    kind = "int"

    def __init__(self, lo: int, hi: int, *, doc: str | None = None) -> None:
        self.lo, self.hi, self.doc = lo, hi, doc

    def problems(self) -> list[tuple[str, str]]:
        for v in (self.lo, self.hi):
            if not (isinstance(v, int) and not isinstance(v, bool)):
                return [(f"bounds must be integers, got lo={self.lo!r}, hi={self.hi!r}", "write Int(lo, hi) with ints, or use Float")]
        if self.lo > self.hi:
            return [(f"lo={self.lo!r} is above hi={self.hi!r}", f"write Int({self.hi!r}, {self.lo!r})")]
        return []

    def validate(self, value: Any) -> str | None:
        if not (isinstance(value, int) and not isinstance(value, bool)):
            return f"expected an integer, got {value!r}"
        if not (self.lo <= value <= self.hi):
            return f"{value!r} is outside [{self.lo!r}, {self.hi!r}]"
        return None

    def from_unit(self, u: float) -> int:
        n = self.hi - self.lo + 1
        return int(min(self.lo + math.floor(u * n), self.hi))

    def edges(self) -> list[Any]:
        return [self.lo, self.hi]

    def json_schema(self) -> dict[str, Any]:
        return {"type": "integer", "minimum": self.lo, "maximum": self.hi}

    def describe(self) -> dict[str, Any]:
        return {"kind": "int", "lo": self.lo, "hi": self.hi}

    def narrow(self, spec: dict[str, Any]) -> "Int":
        lo, hi = spec.get("lo", self.lo), spec.get("hi", self.hi)
        for v in (lo, hi):
            if self.validate(v):
                raise ValueError(f"narrowed bound {v!r} is outside [{self.lo!r}, {self.hi!r}]")
        new = Int(lo, hi, doc=self.doc)
        if new.problems():
            raise ValueError(new.problems()[0][0])
        return new


class Choice(Axis):
    """One of a fixed list of JSON scalars (strings, numbers, booleans)."""

    kind = "choice"

    def __init__(self, values: Sequence[Any], *, doc: str | None = None) -> None:
        self.values = list(values) if isinstance(values, (list, tuple)) else values
        self.doc = doc

    def problems(self) -> list[tuple[str, str]]:
        if not isinstance(self.values, list) or not self.values:
            return [(f"choices must be a non-empty list, got {self.values!r}", 'write Choice(["a", "b"])')]
        for v in self.values:
            if not (isinstance(v, (str, bool, int)) or (isinstance(v, float) and math.isfinite(v))):
                return [(f"choice {v!r} is not a JSON scalar", "use strings, integers, finite floats or booleans")]
        keys = [(type(v).__name__, v) for v in self.values]
        if len(set(keys)) != len(keys):
            dup = next(v for v in self.values if keys.count((type(v).__name__, v)) > 1)
            return [(f"choice {dup!r} appears twice", "list each choice once")]
        return []

    def validate(self, value: Any) -> str | None:
        for v in self.values:
            if type(v) is type(value) and v == value:
                return None
        return f"{value!r} is not one of {self.values!r}"

    def from_unit(self, u: float) -> Any:
        return self.values[min(math.floor(u * len(self.values)), len(self.values) - 1)]

    def edges(self) -> list[Any]:
        return [self.values[0], self.values[-1]]

    def json_schema(self) -> dict[str, Any]:
        return {"enum": list(self.values)}

    def describe(self) -> dict[str, Any]:
        return {"kind": "choice", "choices": list(self.values)}

    def narrow(self, spec: dict[str, Any]) -> "Choice":
        values = spec.get("choices", self.values)
        for v in values:
            if self.validate(v):
                raise ValueError(f"narrowed choice {v!r} is not one of {self.values!r}")
        new = Choice(values, doc=self.doc)
        if new.problems():
            raise ValueError(new.problems()[0][0])
        return new


class Bool(Choice):
    """``false`` or ``true``."""

    kind = "bool"

    def __init__(self, *, doc: str | None = None) -> None:
        super().__init__([False, True], doc=doc)

    def json_schema(self) -> dict[str, Any]:
        return {"type": "boolean"}

    def describe(self) -> dict[str, Any]:
        return {"kind": "bool"}


class Seed(Int):
    """A random seed for the oracle's own generator, in ``[0, 2**31 - 1]``."""

    kind = "seed"

    def __init__(self, lo: int = 0, hi: int = SEED_MAX, *, doc: str | None = None) -> None:
        super().__init__(lo, hi, doc=doc)

    def describe(self) -> dict[str, Any]:
        return {"kind": "seed", "lo": self.lo, "hi": self.hi}
