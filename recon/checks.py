"""The check families of the ladder grader, in one table.

A ladder (``ladders/*.toml``) names check families; :data:`CHECKS` maps each name to a
:class:`CheckFamily`: one small function, how it expands (once, per scenario, per field
...), and the options a ladder may set for it. Every function takes the
:class:`GradingContext` of one grading and the rung's options for it, and returns the
checks it produced, as the dicts grading.json records (``id``, ``passed``, ``reason``,
extras). Adding a family is one function here plus one line of TOML.

The context owns everything a check may use: the workspace *snapshot* (never the
agent's live workspace), the public scenarios, the hidden scenarios and probes (drawn on
first use), and the submission's runs on them (run once, shared by every family).
Nothing here imports a runtime, the oracle machinery or numpy at import time.
"""
from __future__ import annotations

import hashlib
import math
import os
import stat
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence, TypeVar

from . import canonjson, compare
from .runtimes.base import RunResult

__all__ = ["CHECKS", "CheckFamily", "GradingContext", "Graded", "Outcome", "Check", "PublicOnly",
           "cell_distance", "public_sample", "EXPANSIONS", "MAX_SOURCE_BYTES"]

T = TypeVar("T")

#: a check as grading.json records it
Check = dict[str, Any]

MAX_SOURCE_BYTES = 5 << 20
IGNORED_NAMES = frozenset({"__pycache__", ".ipynb_checkpoints"})
#: characters of a got/want value grading.json records before it is cut
RECORD_CHARS = 400

EXPANSIONS = ("once", "per public scenario", "per graded scenario", "per field", "per graded scenario and field")


@dataclass
class Graded:
    """A scenario the submission is run on, with the truth."""

    id: str
    document: dict[str, Any]
    truth: dict[str, Any]
    inputs: dict[str, Path]
    kind: str  # public, hidden or probe

    @property
    def parameters(self) -> dict[str, Any]:
        return dict(self.document["parameters"])


@dataclass
class Outcome:
    """One run of the submission on one scenario, and whether it spoke the contract."""

    graded: Graded
    result: RunResult
    output: Any
    problems: list[str]  # why it does not speak the contract (empty: it does)

    @property
    def ok(self) -> bool:
        return not self.problems


class GradingContext:
    """What the checks of one grading share: inputs, the snapshot and the runs (cached).

    ``run`` runs the submission (from the snapshot) on a list of scenarios and returns
    their outcomes; ``draw_probes`` returns the fresh probe scenarios. Both are called
    lazily, at most once per scenario set, so a grading that stops at rung 2 never runs
    the submission and never calls the oracle.
    """

    def __init__(self, *, fields: dict[str, dict[str, Any]], axes: dict[str, dict[str, Any]],
                 public: list[Graded], hidden: list[Graded], workspace: Path, starter: dict[str, str],
                 snapshot_problem: str | None, run: Callable[[list[Graded]], list[Outcome]],
                 draw_probes: Callable[[], list[Graded]]) -> None:
        self.fields = fields
        self.axes = axes
        self.public = public
        self.hidden = hidden
        self.workspace = workspace
        self.starter = starter
        self.snapshot_problem = snapshot_problem
        self._run = run
        self._draw_probes = draw_probes
        self._probes: list[Graded] | None = None
        self._public_runs: list[Outcome] | None = None
        self._graded_runs: list[Outcome] | None = None
        self._source: tuple[tuple[bool, str], tuple[bool, str]] | None = None
        self._public_only: PublicOnly | None = None

    def graded_set(self) -> list[Graded]:
        """Hidden scenarios plus the probes (drawn on first use)."""
        if self._probes is None:
            self._probes = list(self._draw_probes())
        return self.hidden + self._probes

    def public_outcomes(self, at_most: int | None = None) -> list[Outcome]:
        """The runs on the public scenarios (:func:`public_sample`: all, or ``at_most``)."""
        if self._public_runs is None:
            self._public_runs = self._run(public_sample(self.public, at_most))
        return self._public_runs

    def graded_outcomes(self) -> list[Outcome]:
        if self._graded_runs is None:
            self._graded_runs = self._run(self.graded_set())
        return self._graded_runs

    def usable_graded(self) -> list[Outcome]:
        """Graded outcomes where the submission spoke the contract."""
        return [oc for oc in self.graded_outcomes() if oc.ok]

    def source(self) -> tuple[tuple[bool, str], tuple[bool, str]]:
        if self._source is None:
            self._source = _source_checks(self.workspace)
        return self._source

    def public_only(self) -> PublicOnly:
        if self._public_only is None:
            self._public_only = PublicOnly(self.axes, self.fields, [(g.parameters, g.truth) for g in self.public])
        return self._public_only


CheckFn = Callable[[GradingContext, Mapping[str, Any]], list[Check]]


@dataclass(frozen=True)
class CheckFamily:
    """A family of checks: its function, how it expands, and the options a ladder may set
    (name -> JSON Schema fragment with a ``default``)."""

    name: str
    run: CheckFn
    expands: str
    summary: str
    options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    #: what the agent is told about the family beyond its rung's description, a format
    #: string over the family's options or a function of them (the instruction renders it
    #: from the ladder)
    explain: str | Callable[[Mapping[str, Any]], str] = ""

    def resolve_options(self, given: Mapping[str, Any] | None) -> dict[str, Any]:
        out = {k: spec["default"] for k, spec in self.options.items()}
        out.update(given or {})
        return out

    def explain_for(self, options: Mapping[str, Any]) -> str:
        """What the agent is told about the family with these (resolved) options."""
        if callable(self.explain):
            return self.explain(options)
        return self.explain.format(**options)


def public_sample(public: Sequence[T], at_most: int | None) -> list[T]:
    """The public scenarios a grading runs: all of them, or ``at_most`` spread evenly over
    them in the published order (the i-th of k is number ``i * n // k``). The same for
    every grading of a task: which ones does not depend on the nonce."""
    n = len(public)
    if at_most is None or n <= at_most:
        return list(public)
    return [public[i * n // at_most] for i in range(at_most)]


def make_check(cid: str, passed: bool, reason: str, **extra: Any) -> Check:
    return {"id": cid, "passed": bool(passed), "reason": reason, **extra}


# -- rungs 1 and 2: the workspace and the source ------------------------------------------------

def _starter_changed(workspace: Path, starter: dict[str, str]) -> tuple[bool, str]:
    changed: list[str] = []
    seen: set[str] = set()
    for root, dirs, files in os.walk(workspace):
        dirs[:] = sorted(d for d in dirs if d not in IGNORED_NAMES)
        for fname in sorted(files):
            p = Path(root) / fname
            rel = p.relative_to(workspace).as_posix()
            if fname.endswith(".pyc"):
                continue
            seen.add(rel)
            st = p.lstat()
            if stat.S_ISLNK(st.st_mode):
                digest = hashlib.sha256(os.fsencode(os.readlink(p))).hexdigest()
            elif stat.S_ISREG(st.st_mode):
                h = hashlib.sha256()
                with open(p, "rb") as f:
                    for chunk in iter(lambda: f.read(1 << 20), b""):
                        h.update(chunk)
                digest = h.hexdigest()
            else:
                digest = "special"
            if starter.get(rel) != digest:
                changed.append(rel)
    if changed:
        return True, f"{len(changed)} file(s) written by the agent, e.g. {changed[0]}"
    removed = sorted(set(starter) - seen)
    if removed:
        return True, f"starter file {removed[0]} was removed"
    return False, "the workspace is the untouched starter"


def _source_checks(workspace: Path) -> tuple[tuple[bool, str], tuple[bool, str]]:
    p = workspace / "reconstruct.py"
    try:
        st = p.lstat()
    except OSError:
        return (False, "reconstruct.py does not exist"), (False, "nothing to compile")
    if not stat.S_ISREG(st.st_mode):
        return (False, "reconstruct.py is not a regular file"), (False, "nothing to compile")
    if st.st_size > MAX_SOURCE_BYTES:
        return (True, "reconstruct.py exists"), (False, f"reconstruct.py is larger than {MAX_SOURCE_BYTES >> 20} MiB")
    try:
        source = p.read_bytes()
        compile(source, "reconstruct.py", "exec", dont_inherit=True)  # compiles; never executes
    except SyntaxError as exc:
        return (True, "reconstruct.py exists"), (False, f"syntax error at line {exc.lineno}: {exc.msg}")
    except (ValueError, OSError, RecursionError, MemoryError) as exc:
        return (True, "reconstruct.py exists"), (False, f"does not compile: {type(exc).__name__}: {exc}"[:300])
    return (True, "reconstruct.py exists"), (True, "compiles")


def check_workspace_changed(ctx: GradingContext, opts: Mapping[str, Any]) -> list[Check]:
    if ctx.snapshot_problem is not None:
        return [make_check("workspace_changed", False, ctx.snapshot_problem)]
    ok, why = _starter_changed(ctx.workspace, ctx.starter)
    return [make_check("workspace_changed", ok, why)]


def check_reconstruct_exists(ctx: GradingContext, opts: Mapping[str, Any]) -> list[Check]:
    ok, why = ctx.source()[0]
    return [make_check("reconstruct_exists", ok, why)]


def check_reconstruct_compiles(ctx: GradingContext, opts: Mapping[str, Any]) -> list[Check]:
    ok, why = ctx.source()[1]
    return [make_check("reconstruct_compiles", ok, why)]


# -- rungs 3 and 4: the contract ----------------------------------------------------------------

def _contract(family: str, outcomes: list[Outcome]) -> list[Check]:
    out = []
    for oc in outcomes:
        reason = "exit 0, every field of the right kind" if oc.ok else "; ".join(oc.problems)
        out.append(make_check(f"{family}:{oc.graded.id}", oc.ok, reason, scenario=oc.graded.id,
                              seconds=round(oc.result.seconds, 3)))
    return out


def check_public_contract(ctx: GradingContext, opts: Mapping[str, Any]) -> list[Check]:
    return _contract("public_contract", ctx.public_outcomes(opts.get("at_most")))


def _explain_public_contract(opts: Mapping[str, Any]) -> str:
    if opts.get("at_most") is None:
        return ""
    return (f"A grading runs your program on at most {opts['at_most']} of the published scenarios, spread evenly "
            "over them in the published order, the same ones every time; `/app/tools/feedback` runs it on any.")


def check_graded_contract(ctx: GradingContext, opts: Mapping[str, Any]) -> list[Check]:
    return _contract("graded_contract", ctx.graded_outcomes())


# -- rung 6: the hidden semantics ---------------------------------------------------------------

def _recorded(value: Any, key: str) -> dict[str, Any]:
    """``{key: value}`` for grading.json, cut to a bounded rendering when large or deep."""
    shown = compare.bounded(value, RECORD_CHARS)
    if shown is value:
        return {key: value}
    return {key: shown, f"{key}_truncated": True}


def check_graded_match(ctx: GradingContext, opts: Mapping[str, Any]) -> list[Check]:
    checks = []
    for oc in ctx.graded_outcomes():
        for name, spec in sorted(ctx.fields.items()):
            cid = f"graded_match:{oc.graded.id}:{name}"
            if not oc.ok or not isinstance(oc.output, dict) or name not in oc.output:
                checks.append(make_check(cid, False, "no usable output", scenario=oc.graded.id, field=name))
                continue
            ok, detail = compare.check(spec, oc.output[name], oc.graded.truth[name])
            checks.append(make_check(cid, ok, detail or "within tolerance", scenario=oc.graded.id, field=name,
                                     **_recorded(oc.output[name], "got"), **_recorded(oc.graded.truth[name], "want"),
                                     tolerance=compare.describe(spec)))
    return checks


# -- rung 5 (legacy): replay, variance, response ------------------------------------------------

def _same_output(fields: dict[str, dict[str, Any]], a: dict[str, Any], b: dict[str, Any]) -> bool:
    return all(n in a and n in b and compare.within(s, a[n], b[n]) for n, s in fields.items())


def check_replay(ctx: GradingContext, opts: Mapping[str, Any]) -> list[Check]:
    """An output that matches a public oracle output while the truth does not."""
    graded = ctx.usable_graded()
    replays = []
    for oc in graded:
        for p in ctx.public:
            if _same_output(ctx.fields, oc.output, p.truth) and not _same_output(ctx.fields, oc.graded.truth, p.truth):
                replays.append(f"{oc.graded.id}~{p.id}")
                break
    if replays:
        return [make_check("replay", False, f"outputs replay published oracle outputs: {', '.join(replays)}")]
    return [make_check("replay", True, f"no output of {len(graded)} graded scenarios replays a published one")]


def check_variance(ctx: GradingContext, opts: Mapping[str, Any]) -> list[Check]:
    """Every field that varies across the truths varies across the outputs."""
    graded = ctx.usable_graded()
    if len(graded) < 2:
        return [make_check("variance", True, "fewer than two graded scenarios")]
    constant = []
    varying = 0
    for name, spec in sorted(ctx.fields.items()):
        truths = [oc.graded.truth[name] for oc in graded]
        if all(compare.within(spec, t, truths[0]) for t in truths[1:]):
            continue
        varying += 1
        outs = {canonjson.dumps_compact(oc.output[name]) for oc in graded}
        if len(outs) == 1:
            constant.append(name)
    if constant:
        return [make_check("variance", False, f"constant where the truth varies: {', '.join(constant)}")]
    return [make_check("variance", True, f"all {varying} fields that vary in the truth vary in the outputs")]


def check_response(ctx: GradingContext, opts: Mapping[str, Any]) -> list[Check]:
    """Outputs change between scenarios that differ in one axis when the truth does."""
    graded = ctx.usable_graded()
    pairs = 0
    dead = []
    for i, a in enumerate(graded):
        for b in graded[i + 1:]:
            pa, pb = a.graded.parameters, b.graded.parameters
            diff = [k for k in pa if pa[k] != pb.get(k)]
            if len(diff) != 1 or _same_output(ctx.fields, a.graded.truth, b.graded.truth):
                continue
            pairs += 1
            if canonjson.dumps_compact(a.output) == canonjson.dumps_compact(b.output):
                dead.append(f"{a.graded.id}/{b.graded.id} ({diff[0]})")
    if dead:
        return [make_check("response", False, f"output did not change when the truth did: {', '.join(dead)}")]
    if pairs == 0:
        return [make_check("response", True, "no pair of graded scenarios differs in exactly one axis with a changed truth")]
    return [make_check("response", True, f"outputs respond in all {pairs} one-axis pairs")]


# -- rung 5: outputs carry information the public data does not ----------------------------------
#
# For every graded scenario and output field, the public-only predictions are what a
# program that does not compute could print: the nearest public scenario's value,
# inverse-distance-weighted means, the public mean/median/mode, a ridge-regularised
# linear fit. A cell is won when the output is within tolerance, or strictly closer to
# the truth than the best of those predictions; when a prediction is itself within
# tolerance the cell is "predictable" and only a within-tolerance output wins it.

NUMERIC = ("number", "integer", "angle")
IDW_POWERS = (1, 2, 4)
RIDGE = 1e-2
#: the weights an axis may take in the fitted nearest-scenario metric (0: ignored, 1: as in
#: param_distance, 16: a mismatch outweighs every other axis together)
FIT_WEIGHTS = (0.0, 1.0, 16.0)
#: rounds of the fit's coordinate search over the axes
FIT_ROUNDS = 2
#: public scenarios the fit looks up among the others (spread evenly over them)
FIT_QUERIES = 256


def _norm_axis(axis: Mapping[str, Any], value: Any) -> float | None:
    """A numeric parameter on [0, 1] of its axis (log axes in log space); None when the
    axis is categorical (choice, bool, seed) or the value is not a number."""
    kind = axis.get("kind")
    if kind not in ("float", "int") or isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    lo, hi, v = float(axis["lo"]), float(axis["hi"]), float(value)
    if kind == "float" and axis.get("log") and lo > 0 and v > 0:
        lo, hi, v = math.log(lo), math.log(hi), math.log(v)
    span = hi - lo
    return 0.0 if span <= 0 else (v - lo) / span


def _axis_gap(axis: Mapping[str, Any], a: Any, b: Any) -> float:
    """One axis's share of :func:`param_distance` (squared): the scaled difference of two
    numeric values, or 1 for a categorical mismatch."""
    x, y = _norm_axis(axis, a), _norm_axis(axis, b)
    if x is not None and y is not None:
        return (x - y) ** 2
    return 0.0 if a == b else 1.0


def param_distance(axes: Mapping[str, Mapping[str, Any]], a: Mapping[str, Any], b: Mapping[str, Any]) -> float:
    """Euclidean distance between two parameter sets: numeric axes scaled by their span
    (log axes in log space), any categorical mismatch (choice, bool, seed) counts 1."""
    return math.sqrt(sum(_axis_gap(axes.get(k, {}), a.get(k), b.get(k)) for k in sorted(set(a) | set(b))))


def _is_num(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _circular_mean(values: Sequence[float], weights: Sequence[float], period: float) -> float:
    s = sum(w * math.sin(2 * math.pi * v / period) for v, w in zip(values, weights))
    c = sum(w * math.cos(2 * math.pi * v / period) for v, w in zip(values, weights))
    return (math.atan2(s, c) * period / (2 * math.pi)) % period


def _unit(spec: Mapping[str, Any], want: Any) -> float:
    """One tolerance of a scalar field, at the truth ``want`` (0: none)."""
    kind = spec["kind"]
    if kind == "number":
        return max(float(spec.get("abs", 0.0)), float(spec.get("rel", 0.0)) * abs(float(want)))
    if kind == "integer":
        return float(max(int(spec.get("tol", 0)), 1))  # an exact integer: one count is one unit
    if kind == "angle":
        return float(spec["tol"])
    return 1.0


def cell_distance(spec: Mapping[str, Any], got: Any, want: Any) -> float:
    """How far ``got`` is from the truth ``want`` for one field, in units of the field's
    tolerance at the truth: |got - want| / tolerance for numbers and integers (circular
    for angles), 0/1 for exact and text, the Jaccard distance of the normalised sets, and
    for sequences the mean item distance, where a length that differs from the truth's
    is as far as it gets (infinite): an empty or truncated list is never "close"."""
    kind = spec["kind"]
    try:
        if kind in ("number", "integer", "angle"):
            g, w = float(got), float(want)
            d = abs(g - w)
            if kind == "angle":
                period = float(spec.get("period", 360.0))
                d = d % period
                d = min(d, period - d)
            if not math.isfinite(d):
                return math.inf
            if d == 0:
                return 0.0
            unit = _unit(spec, w)
            return d / unit if unit > 0 else math.inf
        if kind == "set":
            ga, bad_a = compare.normalize_set(dict(spec), got)
            gb, bad_b = compare.normalize_set(dict(spec), want)
            # an unparseable item can equal nothing
            sa = set(ga) | {("unparseable", i) for i in range(len(bad_a))}
            sb = set(gb) | {("unparseable-b", i) for i in range(len(bad_b))}
            union = sa | sb
            return 0.0 if not union else 1.0 - len(sa & sb) / len(union)
        if kind == "sequence":
            if not isinstance(got, list) or len(got) != len(want):
                return math.inf
            if not want:
                return 0.0
            item = spec["item"]
            return sum(cell_distance(item, x, y) for x, y in zip(got, want)) / len(want)
    except (TypeError, ValueError, OverflowError):
        return math.inf
    return 0.0 if compare.within(dict(spec), got, want) else 1.0


class PublicOnly:
    """Predictions of a field's value from the published scenarios alone."""

    def __init__(self, axes: Mapping[str, Mapping[str, Any]], fields: Mapping[str, Mapping[str, Any]],
                 public: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]]) -> None:
        self.axes = axes
        self.fields = fields
        self.params = [dict(p) for p, _ in public]
        self.truths = [dict(t) for _, t in public]
        self._design = self._features_fit()
        # what does not depend on the graded scenario (a mode, a circular median, the
        # linear fit's weights), worked out once per field and position: with hundreds of
        # public scenarios a mode is quadratic in them, and it was redone for every cell
        self._memo: dict[tuple[Any, ...], Any] = {}

    def _once(self, key: tuple[Any, ...] | None, make: Callable[[], Any]) -> Any:
        if key is None:
            return make()
        if key not in self._memo:
            self._memo[key] = make()
        return self._memo[key]

    # the linear model's design: numeric axes on [0, 1], booleans 0/1, one-hot choices
    def _features(self, params: Mapping[str, Any]) -> list[float]:
        row: list[float] = []
        for name in sorted(self.axes):
            axis = self.axes[name]
            kind = axis.get("kind")
            value = params.get(name)
            if kind in ("float", "int"):
                x = _norm_axis(axis, value)
                row.append(0.0 if x is None else x)
            elif kind == "bool":
                row.append(1.0 if value is True else 0.0)
            elif kind == "choice":
                row.extend(1.0 if value == c else 0.0 for c in axis.get("choices", []))
        return row

    def _features_fit(self) -> list[list[float]]:
        return [self._features(p) for p in self.params]

    def _linear(self, ys: Sequence[float], params: Mapping[str, Any], key: tuple[Any, ...] | None = None) -> float | None:
        import numpy as np  # noqa: PLC0415 - heavy, needed only at rung 5

        if len(ys) < 2 or not self._design or not self._design[0]:
            return None

        def fit() -> tuple[Any, Any, float]:
            x = np.asarray(self._design, dtype=float)
            y = np.asarray(ys, dtype=float)
            xm, ym = x.mean(axis=0), y.mean()
            xc = x - xm
            # ridge on centred features: the intercept (the mean) is not shrunk
            return xm, np.linalg.solve(xc.T @ xc + RIDGE * np.eye(x.shape[1]), xc.T @ (y - ym)), float(ym)

        xm, w, ym = self._once(None if key is None else ("linear", *key), fit)
        pred = float(ym + (np.asarray(self._features(params), dtype=float) - xm) @ w)
        return pred if math.isfinite(pred) else None

    # -- the nearest scenario in the metric the public scenarios favour, per field ------------------

    def _columns(self) -> list[tuple[Any, dict[str, int] | None]]:
        """Per axis (sorted by name), the public scenarios' values as :meth:`_gaps` compares
        them: their scaled values (a numeric axis whose values are all numbers), or a code per
        distinct value and the codes by value (any other axis)."""
        import numpy as np  # noqa: PLC0415 - heavy, needed only at rung 5

        out: list[tuple[Any, dict[str, int] | None]] = []
        for a in sorted(self.axes):
            values = [p.get(a) for p in self.params]
            xs = [_norm_axis(self.axes[a], v) for v in values]
            if all(x is not None for x in xs):
                out.append((np.asarray(xs, dtype=float), None))
                continue
            keys = [canonjson.dumps(v) for v in values]
            index = {key: i for i, key in enumerate(dict.fromkeys(keys))}
            out.append((np.asarray([index[key] for key in keys]), index))
        return out

    def _gaps(self, params: Mapping[str, Any]) -> Any:
        """(axes x public) squared gaps between ``params`` and every public scenario, axes
        sorted by name: the scaled difference on numeric axes, 1 for a different value on the
        others (a value no public scenario has differs from all). Kept for the parameters:
        the fit asks for public scenarios' gaps, every field of a graded scenario for its own."""
        import numpy as np  # noqa: PLC0415 - heavy, needed only at rung 5

        def make() -> Any:
            rows = []
            for a, (column, index) in zip(sorted(self.axes), self._once(("columns",), self._columns)):
                value = params.get(a)
                if index is None:
                    x = _norm_axis(self.axes[a], value)
                    rows.append(np.ones(len(column)) if x is None else (column - x) ** 2)
                else:
                    code = index.get(canonjson.dumps(value), -1)
                    rows.append((column != code).astype(float))
            return np.asarray(rows, dtype=float).reshape(len(self.axes), len(self.params))

        return self._once(("gaps", canonjson.dumps(dict(params))), make)

    def fitted_weights(self, name: str) -> tuple[float, ...]:
        """Per axis (sorted by name), the weight of the field's fitted metric: the one under
        which each public scenario's nearest other public scenario has its value (within
        the field's tolerance) most often, found by a coordinate search over
        :data:`FIT_WEIGHTS` from all ones (ties keep the earlier weights). A program that
        looks each scenario up in the published ones, matching the axes that decide the
        field, prints what this metric's nearest scenario holds."""
        return tuple(self._once(("fitted", name), lambda: self._fit(name)))

    def _fit(self, name: str) -> list[float]:
        import numpy as np  # noqa: PLC0415 - heavy, needed only at rung 5

        spec = self.fields[name]
        rows = [i for i, t in enumerate(self.truths) if name in t]
        weights = [1.0] * len(self.axes)
        if len(rows) < 3 or not self.axes:
            return weights
        n = len(rows)
        # each of at most FIT_QUERIES public scenarios (spread evenly) looks for its nearest
        # other one: axes x queries x rows, never the whole rows x rows
        queries = public_sample(range(n), FIT_QUERIES)
        q = len(queries)
        flat = np.stack([self._gaps(self.params[rows[i]])[:, rows] for i in queries], axis=1).reshape(len(weights), q * n)
        values = [self.truths[i][name] for i in rows]
        hits: dict[tuple[int, int], bool] = {}

        def hit(i: int, j: int) -> bool:
            if (i, j) not in hits:
                hits[(i, j)] = compare.within(dict(spec), values[j], values[i])
            return hits[(i, j)]

        def score(w: Sequence[float]) -> int:
            total = np.zeros(q * n)
            for a, wa in enumerate(w):
                if wa:
                    total += wa * flat[a]   # one axis at a time: no BLAS call, whose threads cost more here
            d = total.reshape(q, n)
            d[np.arange(q), queries] = np.inf
            nearest = np.argmin(d, axis=1)
            return sum(hit(i, int(j)) for i, j in zip(queries, nearest))

        best = score(weights)
        for _ in range(FIT_ROUNDS):
            moved = False
            for a in range(len(weights)):
                for v in FIT_WEIGHTS:
                    if v == weights[a]:
                        continue
                    trial = [*weights[:a], v, *weights[a + 1:]]
                    got = score(trial)
                    if got > best:
                        best, weights, moved = got, trial, True
            if not moved:
                break
        return weights

    def _distances(self, params: Mapping[str, Any]) -> list[float]:
        """:func:`param_distance` from ``params`` to every public scenario."""
        uniform = self._once(("uniform",), lambda: all(set(p) == set(self.axes) for p in self.params))
        if not uniform or set(params) != set(self.axes):
            return [param_distance(self.axes, params, p) for p in self.params]
        return self._once(("distances", canonjson.dumps(dict(params))),
                          lambda: [math.sqrt(x) for x in self._gaps(params).sum(axis=0).tolist()])

    def fitted_nearest(self, name: str, params: Mapping[str, Any]) -> Any:
        """The field's value at the public scenario nearest to ``params`` in its fitted
        metric (:meth:`fitted_weights`); None when no public scenario has the field."""
        import numpy as np  # noqa: PLC0415 - heavy, needed only at rung 5

        rows = [i for i, t in enumerate(self.truths) if name in t]
        if not rows:
            return None
        gaps = self._gaps(params)[:, rows]
        d = np.asarray(self.fitted_weights(name), dtype=float) @ gaps
        return self.truths[rows[int(np.argmin(d))]][name]

    def predictions(self, name: str, params: Mapping[str, Any], like: Any = None) -> list[tuple[str, Any]]:
        """(label, value) pairs: what programs that do not compute would print.

        For sequence and set fields the predictions include element-wise ones (per
        position for sequences, per element for sets); ``like`` (the truth) lends
        sequence predictions its length, so an output must beat a public-only guess that
        even knows how long the answer is."""
        spec = self.fields[name]
        values = [t[name] for t in self.truths if name in t]
        if not values:
            return []
        dist = self._distances(params) if len(values) == len(self.params) else \
            [param_distance(self.axes, params, p) for t, p in zip(self.truths, self.params) if name in t]
        nearest = values[min(range(len(values)), key=lambda i: dist[i])]
        preds: list[tuple[str, Any]] = [("nearest", nearest)]
        fitted = self.fitted_nearest(name, params)
        if fitted is not None:
            preds.append(("fitted nearest", fitted))
        kind = spec["kind"]
        if kind in NUMERIC:
            return preds + self._numeric(spec, [float(v) for v in values], dist, params, key=(name,))
        preds.append(("mode", self._once(("mode", name), lambda: self._mode(spec, values))))
        if kind == "sequence" and isinstance(like, list):
            preds += self._elementwise(spec["item"], values, dist, len(like), nearest, key=(name,))
        elif kind == "set":
            preds += self._once(("votes", name), lambda: self._set_votes(spec, values))
        return preds

    def _numeric(self, spec: Mapping[str, Any], nums: list[float], dist: list[float],
                 params: Mapping[str, Any] | None, key: tuple[Any, ...] | None = None) -> list[tuple[str, Any]]:
        """IDW, mean, median and (given parameters) the linear fit of numeric values.
        ``key``: the field (and position) ``nums`` are the public values of, for the parts
        that do not depend on the graded scenario (worked out once)."""
        kind = spec["kind"]
        raw: list[tuple[str, float | None]] = []
        if kind == "angle":
            period = float(spec.get("period", 360.0))
            for p in IDW_POWERS:
                raw.append((f"idw{p}", None if min(dist) == 0 else
                            _circular_mean(nums, [d ** -p for d in dist], period)))
            raw.append(("mean", _circular_mean(nums, [1.0] * len(nums), period)))
            # the circular median: the public value closest to all others
            raw.append(("median", self._once(None if key is None else ("median", *key), lambda: min(
                nums, key=lambda v: sum(cell_distance(spec, v, u) for u in nums)))))
            if params is not None:
                lin_s = self._linear([math.sin(2 * math.pi * v / period) for v in nums], params,
                                     None if key is None else ("sin", *key))
                lin_c = self._linear([math.cos(2 * math.pi * v / period) for v in nums], params,
                                     None if key is None else ("cos", *key))
                raw.append(("linear", None if lin_s is None or lin_c is None else
                            (math.atan2(lin_s, lin_c) * period / (2 * math.pi)) % period))
                lin = self._linear(nums, params, key)
                raw.append(("linear-raw", None if lin is None else lin % period))
        else:
            for p in IDW_POWERS:
                raw.append((f"idw{p}", None if min(dist) == 0 else
                            sum(v * d ** -p for v, d in zip(nums, dist)) / sum(d ** -p for d in dist)))
            raw.append(("mean", sum(nums) / len(nums)))
            ordered = sorted(nums)
            mid = len(ordered) // 2
            raw.append(("median", ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2))
            if params is not None:
                raw.append(("linear", self._linear(nums, params, key)))
        out: list[tuple[str, Any]] = []
        for label, v in raw:
            if v is None or not math.isfinite(v):
                continue
            out.append((label, int(round(v)) if kind == "integer" else float(v)))
        return out

    def _elementwise(self, item: Mapping[str, Any], values: list[Any], dist: list[float], length: int,
                     nearest: Any, key: tuple[Any, ...] | None = None) -> list[tuple[str, Any]]:
        """Sequences of ``length`` built position by position from the public sequences:
        the mean, median and inverse-distance mean of the public items at each position
        (a position no public sequence reaches takes the statistic over all their items),
        the nearest scenario's items, and for non-numeric items the most common one."""
        seqs = [v for v in values if isinstance(v, list)]
        if length == 0:
            return [("elementwise", [])]
        pooled = [x for sq in seqs for x in sq]
        if not pooled:
            return []
        labels: dict[str, list[Any]] = {}
        for i in range(length):
            here = [(sq[i], d) for sq, d in zip(seqs, dist) if i < len(sq)]
            column = [x for x, _ in here] if here else pooled
            weights = [d for _, d in here] if here else [1.0] * len(pooled)
            at = None if key is None else (*key, i)
            if item["kind"] in NUMERIC and all(_is_num(x) for x in column):
                for label, v in self._numeric(item, [float(x) for x in column], weights, None, at):
                    labels.setdefault(f"elementwise-{label}", []).append(v)
            else:
                labels.setdefault("elementwise-mode", []).append(
                    self._once(None if at is None else ("mode", *at), lambda: self._mode(item, column)))
        near = nearest if isinstance(nearest, list) else []
        if near:
            labels["elementwise-nearest"] = [near[min(i, len(near) - 1)] for i in range(length)]
        return [(label, seq) for label, seq in labels.items() if len(seq) == length]

    @staticmethod
    def _set_votes(spec: Mapping[str, Any], values: list[Any]) -> list[tuple[str, Any]]:
        """The elements in at least half of the public sets (majority) and in all of them."""
        sets = [set(compare.normalize_set(dict(spec), v)[0]) for v in values if isinstance(v, list)]
        if not sets:
            return []
        counts: dict[str, int] = {}
        for st in sets:
            for x in st:
                counts[x] = counts.get(x, 0) + 1
        majority = sorted(x for x, c in counts.items() if 2 * c >= len(sets))
        common = sorted(x for x, c in counts.items() if c == len(sets))
        return [("elementwise-majority", majority), ("elementwise-common", common)]

    @staticmethod
    def _mode(spec: Mapping[str, Any], values: Sequence[Any]) -> Any:
        groups: list[list[Any]] = []
        for v in values:
            for g in groups:
                if compare.within(dict(spec), v, g[0]):
                    g.append(v)
                    break
            else:
                groups.append([v])
        return max(groups, key=len)[0]  # max keeps the first of equal sizes


@dataclass
class Cell:
    """One graded scenario's verdict for one field."""

    scenario: str
    win: bool
    predictable: bool  # a public-only prediction is within tolerance
    how: str

    def to_json(self) -> dict[str, Any]:
        return {"scenario": self.scenario, "win": self.win, "predictable": self.predictable, "how": self.how}


def _short(x: float) -> str:
    return format(x, ".3g")


def judge_cell(spec: Mapping[str, Any], scenario: str, got: Any, want: Any,
               predictions: Sequence[tuple[str, Any]]) -> Cell:
    """Win, or not, for one output value against the truth and the public-only predictions."""
    sp = dict(spec)
    predictable = [label for label, v in predictions if compare.within(sp, v, want)]
    if compare.within(sp, got, want):
        return Cell(scenario, True, bool(predictable), "within tolerance")
    if predictable:
        return Cell(scenario, False, True, f"public-only {predictable[0]} is within tolerance, the output is not")
    d_got = cell_distance(sp, got, want)
    scored = [(cell_distance(sp, v, want), label) for label, v in predictions]
    if not scored:
        return Cell(scenario, False, False, "no public-only prediction to beat, and not within tolerance")
    best, label = min(scored)
    if d_got < best:
        return Cell(scenario, True, False, f"closer than every public-only prediction ({_short(d_got)} vs {label} {_short(best)})")
    return Cell(scenario, False, False, f"public-only {label} is as close or closer ({_short(best)} vs {_short(d_got)})")


def _needed(share: Fraction, n: int) -> int:
    return math.ceil(share * n)


def check_tracks(ctx: GradingContext, opts: Mapping[str, Any]) -> list[Check]:
    """One check per output field: does the field follow the truth on the graded set
    better than any program that only looks at the public scenarios could?"""
    win_share = Fraction(str(opts["win_share"]))
    unpredictable_share = Fraction(str(opts["unpredictable_win_share"]))
    usable = ctx.usable_graded()
    checks = []
    if not usable:
        for name in sorted(ctx.fields):
            checks.append(make_check(f"tracks:{name}", False, "no graded scenario with a usable output", field=name))
        return checks
    model = ctx.public_only()
    for name, spec in sorted(ctx.fields.items()):
        cells = [judge_cell(spec, oc.graded.id, oc.output[name], oc.graded.truth[name],
                            model.predictions(name, oc.graded.parameters, oc.graded.truth[name])) for oc in usable]
        wins = sum(c.win for c in cells)
        need = _needed(win_share, len(cells))
        hard = [c for c in cells if not c.predictable]
        hard_wins = sum(c.win for c in hard)
        hard_need = _needed(unpredictable_share, len(hard))
        passed = wins >= need and hard_wins >= hard_need
        reason = (f"wins {wins}/{len(cells)} graded scenarios (needs {need}); "
                  f"{hard_wins}/{len(hard)} of those the public data cannot predict (needs {hard_need})")
        if not passed:
            lost = [c for c in cells if not c.win]
            if lost:
                reason += f"; e.g. {lost[0].scenario}: {lost[0].how}"
        checks.append(make_check(
            f"tracks:{name}", passed, reason, field=name, wins=wins, needed=need,
            unpredictable=len(hard), unpredictable_wins=hard_wins, unpredictable_needed=hard_need,
            got={oc.graded.id: compare.bounded(oc.output[name], 120) for oc in usable},
            want={oc.graded.id: compare.bounded(oc.graded.truth[name], 120) for oc in usable},
            cells=[c.to_json() for c in cells], tolerance=compare.describe(spec)))
    return checks


_SHARE_OPTION = {"type": "string", "pattern": r"^\d+/\d+$"}

#: every check family a ladder may name
CHECKS: dict[str, CheckFamily] = {f.name: f for f in (
    CheckFamily("workspace_changed", check_workspace_changed, "once",
                "the workspace holds a file the agent wrote (differs from the starter)"),
    CheckFamily("reconstruct_exists", check_reconstruct_exists, "once", "reconstruct.py exists"),
    CheckFamily("reconstruct_compiles", check_reconstruct_compiles, "once", "reconstruct.py compiles"),
    CheckFamily("public_contract", check_public_contract, "per public scenario",
                "exit 0 and a JSON object with every output field of the right kind",
                {"at_most": {"type": "integer", "minimum": 1, "default": None,
                             "description": "run at most this many public scenarios, spread evenly over them "
                                            "(the default: every one)"}},
                _explain_public_contract),
    CheckFamily("graded_contract", check_graded_contract, "per graded scenario",
                "the same on every hidden scenario and probe"),
    CheckFamily("replay", check_replay, "once", "no output replays a published output where the truth differs"),
    CheckFamily("variance", check_variance, "once", "fields that vary in the truth vary in the outputs"),
    CheckFamily("response", check_response, "once", "outputs respond to one-axis parameter changes"),
    CheckFamily("tracks", check_tracks, "per field",
                "the field wins enough graded scenarios: within tolerance, or closer to the truth than "
                "every prediction made from the public scenarios alone",
                {"win_share": {**_SHARE_OPTION, "default": "2/3",
                               "description": "share of graded scenarios a field must win (rounded up)"},
                 "unpredictable_win_share": {**_SHARE_OPTION, "default": "1/2",
                                             "description": "share of the scenarios no public-only prediction "
                                                            "gets within tolerance that a field must win (rounded up)"}},
                "A field wins a graded scenario when its value is within tolerance, or strictly closer to the truth "
                "than every public-only prediction; it follows the truth when it wins at least {win_share} of the "
                "graded scenarios and at least {unpredictable_win_share} of those that no public-only prediction gets "
                "within tolerance (both rounded up)."),
    CheckFamily("graded_match", check_graded_match, "per graded scenario and field",
                "every field of every hidden scenario and probe is within tolerance"),
)}
