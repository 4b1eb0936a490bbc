"""Ladders as data: loading ``ladders/<name>.toml`` and scoring a graded ladder.

A ladder is a list of rungs, each with a name, a score, a description and the check
families it consists of. Scoring is monotone: rung k+1 counts only when rung k passed,
and ``R = (k + f) / n`` with k the highest rung passed and f the fraction of rung
k+1's checks that passed.
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass
from fractions import Fraction
from importlib import resources
from pathlib import Path
from typing import Any, Sequence

import jsonschema

from .errors import SpecError

__all__ = ["Ladder", "Rung", "load_ladder", "score", "CHECK_FAMILIES"]

#: check families the grader implements, and whether they expand per scenario / field
CHECK_FAMILIES = {
    "workspace_changed": "once",
    "reconstruct_exists": "once",
    "reconstruct_compiles": "once",
    "public_contract": "per public scenario",
    "graded_contract": "per graded scenario",
    "replay": "once",
    "variance": "once",
    "response": "once",
    "graded_match": "per graded scenario and field",
}

LADDER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["name", "rung"],
    "additionalProperties": False,
    "properties": {
        "name": {"type": "string", "pattern": "^[a-z0-9_]+$"},
        "description": {"type": "string"},
        "rung": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["index", "name", "score", "description", "checks"],
                "additionalProperties": False,
                "properties": {
                    "index": {"type": "integer", "minimum": 1},
                    "name": {"type": "string", "minLength": 1},
                    "score": {"type": "string", "pattern": r"^\d+/\d+$"},
                    "description": {"type": "string"},
                    "checks": {"type": "array", "minItems": 1, "items": {"enum": sorted(CHECK_FAMILIES)}},
                },
            },
        },
    },
}


@dataclass(frozen=True)
class Rung:
    index: int
    name: str
    score: Fraction
    description: str
    checks: tuple[str, ...]


@dataclass(frozen=True)
class Ladder:
    name: str
    description: str
    rungs: tuple[Rung, ...]

    def rung_name(self, index: int) -> str:
        return "nothing usable" if index == 0 else self.rungs[index - 1].name


def _parse(text: str, source: str) -> Ladder:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"ladder {source} is not valid TOML: {exc}") from None
    try:
        jsonschema.validate(data, LADDER_SCHEMA)
    except jsonschema.ValidationError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "top level"
        raise SpecError(f"ladder {source}: {where}: {exc.message}", hint="see ladders/six_rung.toml for the format") from None
    rungs = []
    n = len(data["rung"])
    for i, r in enumerate(data["rung"], start=1):
        if r["index"] != i:
            raise SpecError(f"ladder {source}: rung {r['name']!r} has index {r['index']}, expected {i}",
                            hint="number rungs 1, 2, 3, ... in order")
        num, den = (int(x) for x in r["score"].split("/"))
        if den == 0 or Fraction(num, den) != Fraction(i, n):
            raise SpecError(f"ladder {source}: rung {i} score {r['score']!r} is not {i}/{n}",
                            hint="rung k of an n-rung ladder scores k/n")
        rungs.append(Rung(i, r["name"], Fraction(num, den), r["description"], tuple(r["checks"])))
    return Ladder(data["name"], data.get("description", ""), tuple(rungs))


def load_ladder(name: str, search: Sequence[Path] = ()) -> Ladder:
    """Load ladder ``name``: from a folder in ``search`` first, else the built-in ones."""
    for folder in search:
        p = Path(folder) / f"{name}.toml"
        if p.is_file():
            return _parse(p.read_text(encoding="utf-8"), str(p))
    res = resources.files("recon.ladders").joinpath(f"{name}.toml")
    if not res.is_file():
        known = sorted(p.name[:-5] for p in resources.files("recon.ladders").iterdir() if p.name.endswith(".toml"))
        raise SpecError(f"no ladder named {name!r} (known: {', '.join(known)})", hint="use --ladder six_rung")
    return _parse(res.read_text(encoding="utf-8"), f"built-in ladders/{name}.toml")


def score(outcomes: Sequence[Sequence[bool] | None]) -> tuple[float, int, float]:
    """(R, k, f) for per-rung check outcomes (None: not examined).

    k is the number of leading rungs whose checks all passed; f is the fraction of
    rung k+1's checks that passed (0 when it was not examined).
    """
    n = len(outcomes)
    k = 0
    for checks in outcomes:
        if checks is not None and len(checks) > 0 and all(checks):
            k += 1
        else:
            break
    f = 0.0
    if k < n:
        nxt = outcomes[k]
        if nxt:
            f = sum(1 for c in nxt if c) / len(nxt)
            if f >= 1.0:  # pragma: no cover - would have counted as passed
                f = 0.0
    return (k + f) / n, k, f
