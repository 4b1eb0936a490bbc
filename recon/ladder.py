"""Ladders as data: loading ``ladders/<name>.toml`` and scoring a graded ladder.

A ladder is a list of rungs, each with a name, a score, a description and the check
families it consists of (names from :data:`recon.checks.CHECKS`, the one table of check
families). A rung may set a ``quorum``: how many of its checks may fail while the rung
still passes (``max(may_fail_at_least, floor(may_fail_share * n))`` of its n checks, and
never half of them or more); without one, every check must pass. A rung may also set
``options`` for its families (``[rung.options.FAMILY]``).

Scoring is monotone: rung k+1 counts only when rung k passed, and ``R = (k + f) / n``
with k the highest rung passed and f the fraction of rung k+1's checks that passed.
"""
from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, field
from fractions import Fraction
from importlib import resources
from pathlib import Path
from typing import Any, Mapping, Sequence

import jsonschema

from .checks import CHECKS, public_sample
from .errors import SpecError

__all__ = ["Ladder", "Rung", "Quorum", "load_ladder", "score", "CHECK_FAMILIES", "LADDER_SCHEMA"]

#: check families the grader implements, and how each expands (per scenario / field...)
CHECK_FAMILIES = {name: fam.expands for name, fam in CHECKS.items()}

_FRACTION = {"type": "string", "pattern": r"^\d+/\d+$"}

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
                    "checks": {"type": "array", "minItems": 1, "items": {"enum": sorted(CHECKS)}},
                    "quorum": {
                        "type": "object",
                        "additionalProperties": False,
                        "properties": {
                            "may_fail_share": _FRACTION,
                            "may_fail_at_least": {"type": "integer", "minimum": 0},
                        },
                    },
                    "options": {
                        "type": "object",
                        "additionalProperties": False,
                        "properties": {
                            name: {
                                "type": "object",
                                "additionalProperties": False,
                                "properties": {k: {kk: vv for kk, vv in spec.items() if kk != "default"}
                                               for k, spec in fam.options.items()},
                            }
                            for name, fam in CHECKS.items()
                        },
                    },
                },
            },
        },
    },
}


@dataclass(frozen=True)
class Quorum:
    """How many of a rung's checks may fail while the rung passes."""

    share: Fraction = Fraction(0)
    at_least: int = 0

    def allowed_failures(self, n: int) -> int:
        """``max(at_least, floor(share * n))``, and always fewer than half of ``n``."""
        if n <= 0:
            return 0
        return min(max(self.at_least, math.floor(self.share * n)), (n - 1) // 2)


@dataclass(frozen=True)
class Rung:
    index: int
    name: str
    score: Fraction
    description: str
    checks: tuple[str, ...]
    quorum: Quorum = Quorum()
    options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def options_for(self, family: str) -> dict[str, Any]:
        """The family's options on this rung, defaults filled in."""
        return CHECKS[family].resolve_options(self.options.get(family))

    def passes(self, outcomes: Sequence[bool]) -> bool:
        failed = sum(1 for ok in outcomes if not ok)
        return bool(outcomes) and failed <= self.quorum.allowed_failures(len(outcomes))


@dataclass(frozen=True)
class Ladder:
    name: str
    description: str
    rungs: tuple[Rung, ...]

    def public_runs(self, n_public: int) -> int:
        """How many public scenarios of ``n_public`` a grading runs (``public_contract``'s
        ``at_most``; none when no rung checks them)."""
        return max((len(public_sample(range(n_public), r.options_for("public_contract")["at_most"]))
                    for r in self.rungs if "public_contract" in r.checks), default=0)

    def rung_name(self, index: int) -> str:
        return "nothing usable" if index == 0 else self.rungs[index - 1].name


def _share(text: str, where: str, source: str) -> Fraction:
    num, den = (int(x) for x in text.split("/"))
    if den == 0 or num > den:
        raise SpecError(f"ladder {source}: {where} = {text!r} is not a share in [0, 1]",
                        hint='write a fraction such as "1/4"')
    return Fraction(num, den)


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
        q = r.get("quorum", {})
        quorum = Quorum(_share(q.get("may_fail_share", "0/1"), f"rung {i} quorum.may_fail_share", source),
                        int(q.get("may_fail_at_least", 0)))
        options: dict[str, dict[str, Any]] = {}
        for fam, opts in r.get("options", {}).items():
            if fam not in r["checks"]:
                raise SpecError(f"ladder {source}: rung {i} sets options for {fam!r}, which it does not check",
                                hint=f"add {fam!r} to the rung's checks, or drop [rung.options.{fam}]")
            for k, v in opts.items():
                if CHECKS[fam].options[k].get("pattern") == _FRACTION["pattern"]:
                    _share(v, f"rung {i} options.{fam}.{k}", source)
            options[fam] = dict(opts)
        rungs.append(Rung(i, r["name"], Fraction(num, den), r["description"], tuple(r["checks"]), quorum, options))
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


def score(outcomes: Sequence[Sequence[bool] | None], allowed_failures: Sequence[int] | None = None
          ) -> tuple[float, int, float]:
    """(R, k, f) for per-rung check outcomes (None: not examined).

    A rung passes when it was examined, has checks, and at most ``allowed_failures[i]``
    of them failed (default 0: all must pass). k is the number of leading rungs that
    passed; f is the fraction of rung k+1's checks that passed (0 when it was not
    examined).
    """
    n = len(outcomes)
    allowed = list(allowed_failures) if allowed_failures is not None else [0] * n
    k = 0
    for i, checks in enumerate(outcomes):
        if checks is not None and len(checks) > 0 and sum(1 for c in checks if not c) <= allowed[i]:
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
