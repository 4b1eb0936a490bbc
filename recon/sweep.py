"""Sweeps: which scenarios an oracle is run on, and running it on them.

A sweep is a pure function of (oracle name, oracle version, sweep spec, seed) for the
public scenarios, and of those plus a *task key* for the hidden scenarios and the
probes. The task key is derived from the build secret, which is written only into the
verifier side of a task, so published files never allow regenerating hidden scenarios.

Public scenarios are stratified (a Latin hypercube over every axis); hidden scenarios
are drawn with a keyed hash (HMAC-SHA256 of the spec and index, never ``seed + i``)
and include axis edges; probes are drawn at grading time from the task key and a nonce,
partly as one-axis variations of other graded scenarios so that the grader can check
that outputs respond to parameters.
"""
from __future__ import annotations

import ast
import hashlib
import hmac
import itertools
import os
import secrets
import shutil
import tempfile
import time
import tomllib
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from importlib import resources
from multiprocessing import get_context
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from . import canonjson
from .axes import Axis, Choice, Int, Seed
from .errors import OracleRunError, ReconError, SpecError
from .oracle import Oracle

__all__ = [
    "SweepSpec", "Scenario", "ScenarioRun", "load_spec", "public_scenarios", "hidden_scenarios",
    "probe_scenarios", "pool_scenarios", "pool_edges", "cover_draws", "cover_scenarios", "default_select", "Selection",
    "derive_task_key", "build_secret", "HIDDEN_PREFIX",
    "run_scenario", "run_scenarios", "DEFAULT_PUBLIC", "DEFAULT_HIDDEN", "DEFAULT_PROBES", "SELECT_STRATEGIES",
]

DEFAULT_PUBLIC = 6
DEFAULT_HIDDEN = 3
DEFAULT_PROBES = 3   # fresh scenarios a grading draws from the oracle
MAX_ATTEMPTS = 200
#: the ids of hidden draws (``hidden_1``, ...): scenarios drawn with a task key
HIDDEN_PREFIX = "hidden_"
SPEC_KEYS = {"n_public", "n_hidden", "seed", "axes", "select", "probes", "reveal", "reveal_budget", "cover"}
#: the most scenarios a spec's ``cover`` may add to the published ones
MAX_COVER = 2000
#: what a spec's ``reveal`` may name besides program paths (relative to the spec's folder)
REVEAL_KINDS = ("baselines", "independent")
# How the published and hidden scenarios are chosen: "random" draws them (stratified
# public, keyed hidden); "stress" picks them from larger pools of the same kinds so that
# the hidden set kills the most mutants of the reference and every mutant it kills is
# also killed by a public scenario (see recon.mutation.selection).
SELECT_STRATEGIES = ("random", "stress")


@dataclass(frozen=True)
class SweepSpec:
    """How many scenarios, which seed, and any narrowed axes."""

    n_public: int = DEFAULT_PUBLIC
    n_hidden: int = DEFAULT_HIDDEN
    seed: int = 0
    axes: dict[str, dict[str, Any]] = field(default_factory=dict)
    source: str = "defaults"
    select: str = "random"
    probes: int = DEFAULT_PROBES
    reveal: tuple[str, ...] = ()          # programs stress selection must reveal (see REVEAL_KINDS)
    reveal_budget: float | None = None    # seconds for their runs at the default budget (None: the mutants')
    cover: tuple[tuple[str, ...], ...] = ()   # choice / integer axes every combination of which is published

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"n_public": self.n_public, "n_hidden": self.n_hidden, "seed": self.seed,
                               "axes": {k: dict(sorted(v.items())) for k, v in sorted(self.axes.items())}}
        if self.select != "random":  # keeps the documents of random builds as they were
            out["select"] = self.select
        if self.cover:
            out["cover"] = [list(g) for g in self.cover]
        return out


@dataclass(frozen=True)
class Scenario:
    id: str
    parameters: dict[str, Any]

    def key(self) -> str:
        return canonjson.dumps_compact(self.parameters)

    def digest(self) -> str:
        """Its parameters digested (the oracle makes the rest from them): what kept
        verdicts and shipped draws are found by."""
        return hashlib.sha256(self.key().encode("utf-8")).hexdigest()[:24]


def _check_count(value: Any, label: str, where: str, minimum: int) -> int:
    if not (isinstance(value, int) and not isinstance(value, bool)) or value < minimum or value > 10_000:
        raise SpecError(f"{where}: {label}={value!r} must be an integer in [{minimum}, 10000]",
                        hint=f"set {label} to a whole number such as {DEFAULT_PUBLIC if label == 'n_public' else DEFAULT_HIDDEN}")
    return value


def _packaged_spec(name: str) -> tuple[str, str] | None:
    try:
        res = resources.files("recon.scenarios").joinpath(f"{name}.toml")
    except ModuleNotFoundError:  # pragma: no cover
        return None
    if res.is_file():
        return res.read_text(encoding="utf-8"), f"built-in scenarios/{name}.toml"
    return None


def load_spec(
    oracle: Oracle,
    path: Path | None = None,
    *,
    n_public: int | None = None,
    n_hidden: int | None = None,
    seed: int | None = None,
    select: str | None = None,
) -> SweepSpec:
    """The sweep spec for ``oracle``: an explicit file, else ``scenarios/<name>.toml``
    (built in, or beside the plugin module), else defaults; command-line values win (an
    explicit ``n_public`` is exactly what is published: the spec's ``cover`` is dropped)."""
    text: str | None = None
    source = "defaults"
    folder: Path | None = None   # where relative program paths in the spec are
    if path is not None:
        path = Path(path)
        if not path.is_file():
            raise SpecError(f"sweep spec {path} does not exist", hint="give the path of a TOML file")
        text, source, folder = path.read_text(encoding="utf-8"), str(path), path.resolve().parent
    else:
        found = _packaged_spec(oracle.name)
        if found is None:
            beside = Path(oracle.source_file).parent / "scenarios" / f"{oracle.name}.toml"
            if beside.is_file():
                found, folder = (beside.read_text(encoding="utf-8"), str(beside)), beside.resolve().parent
        if found is not None:
            text, source = found
    data: dict[str, Any] = {}
    if text is not None:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise SpecError(f"sweep spec {source} is not valid TOML: {exc}") from None
    unknown = sorted(set(data) - SPEC_KEYS)
    if unknown:
        raise SpecError(f"sweep spec {source}: unknown keys {unknown}", hint=f"allowed keys: {sorted(SPEC_KEYS)}")
    np_ = _check_count(n_public if n_public is not None else data.get("n_public", DEFAULT_PUBLIC), "n_public", source, 1)
    nh = _check_count(n_hidden if n_hidden is not None else data.get("n_hidden", DEFAULT_HIDDEN), "n_hidden", source, 1)
    sd = seed if seed is not None else data.get("seed", 0)
    if not (isinstance(sd, int) and not isinstance(sd, bool)) or sd < 0:
        raise SpecError(f"{source}: seed={sd!r} must be a non-negative integer")
    axes = data.get("axes", {})
    if not isinstance(axes, dict):
        raise SpecError(f"{source}: [axes] must be a table of axis tables")
    for aname, table in axes.items():
        if aname not in oracle.axes:
            raise SpecError(f"{source}: axis {aname!r} is not an axis of {oracle.name!r}",
                            hint=f"axes are {sorted(oracle.axes)}")
        if not isinstance(table, dict):
            raise SpecError(f"{source}: axes.{aname} must be a table (lo/hi or choices)")
        try:
            oracle.axes[aname].narrow(table)
        except ValueError as exc:
            raise SpecError(f"{source}: axes.{aname} = {table!r}: {exc}") from None
    sel = select if select is not None else data.get("select", default_select(oracle))
    if sel not in SELECT_STRATEGIES:
        raise SpecError(f"{source}: select={sel!r} is not a selection strategy",
                        hint=f"use one of {', '.join(repr(x) for x in SELECT_STRATEGIES)}")
    pr = _check_count(data.get("probes", DEFAULT_PROBES), "probes", source, 0)
    rv = data.get("reveal", [])
    if not (isinstance(rv, list) and all(isinstance(x, str) and x for x in rv)):
        raise SpecError(f"{source}: reveal={rv!r} must be a list of program paths or {' / '.join(REVEAL_KINDS)}",
                        hint='e.g. reveal = ["baselines", "independent"]')
    reveal = tuple(x if x in REVEAL_KINDS or Path(x).is_absolute() or folder is None else str(folder / x)
                   for x in rv)
    rb = data.get("reveal_budget")
    if rb is not None and (isinstance(rb, bool) or not isinstance(rb, (int, float)) or not 0 < rb <= 86400):
        raise SpecError(f"{source}: reveal_budget={rb!r} must be a number of seconds in (0, 86400]",
                        hint="the seconds the revealed programs' runs may take, e.g. reveal_budget = 240")
    cover = _check_cover(data.get("cover", []), oracle, axes, source)
    if n_public is not None:
        cover = ()   # a count given on the command line is what is published
    spec = SweepSpec(n_public=np_, n_hidden=nh, seed=sd, axes=axes, source=source, select=sel, probes=pr,
                     reveal=reveal, reveal_budget=float(rb) if rb is not None else None, cover=cover)
    return spec


def _coverable(ax: Axis | None) -> bool:
    """Whether a cover may name the axis: a choice, or an integer interval (not a seed)."""
    return isinstance(ax, Choice) or (isinstance(ax, Int) and not isinstance(ax, Seed))


def _cover_values(ax: Axis) -> Sequence[Any]:
    """Every value of a coverable axis: a choice's values, an integer interval's integers."""
    if isinstance(ax, Choice):
        return ax.values
    if isinstance(ax, Int):
        return range(ax.lo, ax.hi + 1)
    raise SpecError(f"a cover cannot name a {ax.kind} axis", hint="cover choice or integer axes")


def _check_cover(value: Any, oracle: Oracle, narrowed: dict[str, Any], source: str) -> tuple[tuple[str, ...], ...]:
    """A spec's ``cover``: groups of choice or integer axes (``[["case", "temperature"]]``),
    every combination of whose values is published."""
    hint = 'e.g. cover = [["case", "temperature"]]: every case is published at every temperature'
    if not (isinstance(value, list) and all(isinstance(g, list) and g and all(isinstance(a, str) for a in g)
                                            for g in value)):
        raise SpecError(f"{source}: cover={value!r} must be a list of lists of axis names", hint=hint)
    total = 0
    for g in value:
        size = 1
        for a in g:
            ax = oracle.axes.get(a)
            if ax is None or not _coverable(ax):
                choices = sorted(n for n, x in oracle.axes.items() if _coverable(x))
                raise SpecError(f"{source}: cover names {a!r}, which is not a choice or integer axis of "
                                f"{oracle.name!r}", hint=f"axes a cover may name: {choices}")
            size *= len(_cover_values(ax.narrow(narrowed[a]) if a in narrowed else ax))
        if len(set(g)) != len(g):
            raise SpecError(f"{source}: cover group {g!r} names an axis twice", hint=hint)
        total += size
    if total > MAX_COVER:
        raise SpecError(f"{source}: cover asks for {total} combinations, more than {MAX_COVER} scenarios",
                        hint="cover fewer axes together, or narrow them in [axes]")
    return tuple(tuple(g) for g in value)


def _cover_plan(oracle: Oracle, spec: SweepSpec) -> list[tuple[tuple[str, ...], Scenario]]:
    """(group, scenario) for every combination of every ``cover`` group's values, in order."""
    if not spec.cover:
        return []
    axes = effective_axes(oracle, spec)
    key = hashlib.sha256(b"recon-cover\x00" + _spec_identity(oracle, spec).encode("utf-8")).digest()
    used: set[str] = set()
    out: list[tuple[tuple[str, ...], Scenario]] = []
    for gi, group in enumerate(spec.cover):
        choices = [_cover_values(axes[a]) for a in group]
        for ci, combo in enumerate(itertools.product(*choices)):
            for attempt in range(MAX_ATTEMPTS):
                params = {**_draw(axes, key, f"cover-{gi}", ci, attempt, edges=False), **dict(zip(group, combo))}
                sc = Scenario(f"cover_{len(out) + 1}", params)
                if sc.key() not in used:
                    used.add(sc.key())
                    out.append((group, sc))
                    break
            else:
                raise SpecError(f"{oracle.name}: cannot draw a scenario with {dict(zip(group, combo))} "
                                "distinct from the others", hint="widen the other axes, or cover fewer")
    return out


def cover_draws(oracle: Oracle, spec: SweepSpec) -> list[Scenario]:
    """One scenario for every combination of every ``cover`` group's values, the other axes
    drawn from the spec's seed, never the key: the scenarios a cover may publish. Hidden
    scenarios are drawn distinct from all of them (so that publishing one never depends on
    which scenarios are hidden), and :func:`cover_scenarios` publishes those whose
    combination the chosen public scenarios lack."""
    return [sc for _, sc in _cover_plan(oracle, spec)]


def cover_scenarios(oracle: Oracle, spec: SweepSpec, public: Sequence[Scenario]) -> list[Scenario]:
    """The published scenarios a spec's ``cover`` adds to ``public``: the :func:`cover_draws`
    of every combination no scenario of ``public`` (or an earlier addition) has, numbered on
    from ``public`` (a behaviour only one combination shows would otherwise be seen by
    hidden scenarios and probes alone)."""
    def combo(group: tuple[str, ...], params: dict[str, Any]) -> tuple[str, ...]:
        return tuple(canonjson.dumps_compact(params[a]) for a in group)

    out: list[Scenario] = []
    have: dict[tuple[str, ...], set[tuple[str, ...]]] = {}
    for group, sc in _cover_plan(oracle, spec):
        if group not in have:   # what is published so far, for this group
            have[group] = {combo(group, s.parameters) for s in [*public, *out]}
        if combo(group, sc.parameters) not in have[group]:
            out.append(Scenario(f"public_{len(public) + len(out) + 1}", sc.parameters))
            have[group].add(combo(group, sc.parameters))
    return out


def default_select(oracle: Oracle) -> str:
    """The selection a spec gets when it names none: ``"stress"`` when the oracle's
    reference defines ``solve(scenario)``, which mutation analysis runs (measured on every
    built-in task, its hidden scenarios kill more wrong programs and leave fewer behaviours
    tested but never shown), else ``"random"``."""
    ref = oracle.reference
    try:
        tree = ast.parse(ref.read_bytes()) if ref is not None else None
    except (OSError, SyntaxError, ValueError):
        tree = None
    has_solve = tree is not None and any(
        isinstance(node, ast.FunctionDef) and node.name == "solve" for node in tree.body)
    return "stress" if has_solve else "random"


def effective_axes(oracle: Oracle, spec: SweepSpec) -> dict[str, Axis]:
    return {n: (a.narrow(spec.axes[n]) if n in spec.axes else a) for n, a in sorted(oracle.axes.items())}


# -- hashing helpers ---------------------------------------------------------------------
def _unit(key: bytes, *parts: Any) -> float:
    """A deterministic number in [0, 1) from a keyed hash of ``parts``."""
    msg = "\x1f".join(str(p) for p in parts).encode("utf-8")
    digest = hmac.new(key, msg, hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") / 2.0**64


def _spec_identity(oracle: Oracle, spec: SweepSpec) -> str:
    # The selection strategy is not part of the identity: both strategies draw from the
    # same stratified and keyed streams, and the task key stays the same. Nor is the cover:
    # it adds published scenarios on top of the same draws (a grading rebuilds the spec
    # from the task's n_public, n_hidden, seed and axes).
    ident = spec.to_json()
    ident.pop("select", None)
    ident.pop("cover", None)
    return canonjson.dumps_compact({"oracle": oracle.name, "version": oracle.version, "spec": ident})


def _few_valued(axis: Axis, n: int) -> bool:
    if isinstance(axis, Choice):
        return len(axis.values) <= n
    if isinstance(axis, Int) and not isinstance(axis, Seed):
        return axis.hi - axis.lo + 1 <= n
    return False


def public_scenarios(oracle: Oracle, spec: SweepSpec) -> list[Scenario]:
    """N public scenarios, stratified over every axis."""
    axes = effective_axes(oracle, spec)
    ident = _spec_identity(oracle, spec).encode("utf-8")
    base = hashlib.sha256(b"recon-public\x00" + ident).digest()
    n = spec.n_public
    perms: dict[str, list[int]] = {}
    for a in axes:
        perms[a] = sorted(range(n), key=lambda i: _unit(base, "perm", a, i))
    seen: set[str] = set()
    out: list[Scenario] = []
    for i in range(n):
        for attempt in range(MAX_ATTEMPTS):
            params = {}
            for a, axis in axes.items():
                # Few-valued axes take the middle of their stratum, so that every value
                # appears once N reaches the number of values; others jitter within it.
                centred = attempt == 0 and _few_valued(axis, n)
                jitter = 0.5 if centred else _unit(base, "jitter", a, i, attempt)
                u = (perms[a][i] + jitter) / n
                params[a] = axis.from_unit(min(u, 1.0 - 1e-12))
            sc = Scenario(f"public_{i + 1}", params)
            if sc.key() not in seen:
                break
        else:
            raise SpecError(f"{oracle.name}: cannot draw {n} distinct public scenarios from its axes",
                            hint="lower n_public or widen the axes")
        seen.add(sc.key())
        out.append(sc)
    return out


def derive_task_key(secret: bytes, oracle: Oracle, spec: SweepSpec) -> bytes:
    """The per-task key: HMAC of the sweep identity under the build secret."""
    return hmac.new(secret, b"recon-task-key\x00" + _spec_identity(oracle, spec).encode(), hashlib.sha256).digest()


def _draw(axes: dict[str, Axis], key: bytes, tag: str, index: int, attempt: int, *, edges: bool,
          force: bool = False) -> dict[str, Any]:
    params: dict[str, Any] = {}
    snapped = []
    for a, axis in axes.items():
        u = _unit(key, tag, index, attempt, "u", a)
        if edges and not isinstance(axis, Seed) and _unit(key, tag, index, attempt, "edge", a) < 0.3:
            ends = axis.edges()
            params[a] = ends[0] if _unit(key, tag, index, attempt, "end", a) < 0.5 else ends[-1]
            snapped.append(a)
        else:
            params[a] = axis.from_unit(u)
    if force and not snapped:
        candidates = [a for a, ax in axes.items() if not isinstance(ax, Seed)]
        if candidates:
            a = candidates[int(_unit(key, tag, index, attempt, "force") * len(candidates))]
            ends = axes[a].edges()
            params[a] = ends[0] if _unit(key, tag, index, attempt, "forced-end") < 0.5 else ends[-1]
    return params


def hidden_scenarios(oracle: Oracle, spec: SweepSpec, key: bytes, public: Iterable[Scenario] = ()) -> list[Scenario]:
    """K hidden scenarios, keyed by the task key, distinct from every public one,
    favouring the edges of the axes (the first one always has an axis at an edge)."""
    axes = effective_axes(oracle, spec)
    ident = _spec_identity(oracle, spec)
    taken = {s.key() for s in public} if public else {s.key() for s in public_scenarios(oracle, spec)}
    out: list[Scenario] = []
    for j in range(spec.n_hidden):
        for attempt in range(MAX_ATTEMPTS):
            # Edges are favoured (each axis snaps to an end with probability 0.3 and the
            # first hidden scenario always has one); small axis spaces may run out of
            # edge combinations, so later attempts draw freely.
            edges = attempt < MAX_ATTEMPTS // 4
            sc = Scenario(f"{HIDDEN_PREFIX}{j + 1}", _draw(axes, key, "hidden" + ident, j, attempt, edges=edges,
                                                   force=edges and (j == 0 or attempt < 8)))
            if sc.key() not in taken:
                break
        else:
            raise SpecError(f"{oracle.name}: cannot draw {spec.n_hidden} hidden scenarios distinct from the public ones",
                            hint="lower n_hidden or n_public, or widen the axes")
        taken.add(sc.key())
        out.append(sc)
    return out


def probe_scenarios(
    oracle: Oracle, spec: SweepSpec, key: bytes, nonce: str, count: int, taken: Iterable[Scenario], graded: list[Scenario]
) -> list[Scenario]:
    """``count`` fresh scenarios for one grading, each an independent keyed draw (axis
    edges favoured, as for hidden scenarios), distinct from the public and graded ones:
    independent draws are what gives a graded set its power against programs wrong on a
    small share of the generator."""
    axes = effective_axes(oracle, spec)
    pkey = hmac.new(key, b"recon-probe\x00" + nonce.encode("utf-8"), hashlib.sha256).digest()
    used = {s.key() for s in taken} | {s.key() for s in graded}
    out: list[Scenario] = []
    for k in range(count):
        for attempt in range(MAX_ATTEMPTS):
            sc = Scenario(f"probe_{k + 1}", _draw(axes, pkey, "probe", k, attempt, edges=attempt < MAX_ATTEMPTS // 4))
            if sc.key() not in used:
                break
        else:
            raise SpecError(f"{oracle.name}: cannot draw {count} fresh probes", hint="use fewer probes")
        used.add(sc.key())
        out.append(sc)
    return out


def pool_scenarios(oracle: Oracle, spec: SweepSpec, size: int, *, seed: int = 0, taken: Iterable[Scenario] = (),
                   prefix: str = "pool") -> list[Scenario]:
    """``size`` scenarios to measure programs and scenario sets on (mutation analysis,
    ``recon pool``): a pure function of the sweep identity and ``seed`` (unkeyed: a pool
    is an instrument, never a secret), distinct from ``taken`` and from each other.

    The pool starts at the edges, where off-by-one and boundary mistakes show: for every
    axis with two ends, one scenario at each end (the other axes drawn), then one with
    every axis at its low end and one with every axis at its high end; the rest are
    drawn with each axis snapped to an end with probability 0.3.
    """
    if not (isinstance(size, int) and 0 <= size <= 100_000):
        raise SpecError(f"pool size {size!r} must be an integer in [0, 100000]")
    axes = effective_axes(oracle, spec)
    key = hashlib.sha256(b"recon-pool\x00" + _spec_identity(oracle, spec).encode() + b"\x00" + str(seed).encode()).digest()
    used = {s.key() for s in taken}
    edge_axes, plans = _pool_plans(axes)
    out: list[Scenario] = []
    index = 0
    while len(out) < size:
        for attempt in range(MAX_ATTEMPTS):
            params = _draw(axes, key, prefix, index, attempt, edges=index >= len(plans))
            if index < len(plans):
                which, end = plans[index]
                for a in (edge_axes if which == "*" else [which]):
                    params[a] = axes[a].edges()[-1 if end else 0]
            sc = Scenario(f"{prefix}_{len(out) + 1}", params)
            if sc.key() not in used:
                used.add(sc.key())
                out.append(sc)
                break
        index += 1
        if index > size + len(plans) + MAX_ATTEMPTS:
            raise SpecError(f"{oracle.name}: cannot draw {size} distinct pool scenarios from its axes",
                            hint="use a smaller pool or widen the axes")
    return out


def pool_edges(oracle: Oracle, spec: SweepSpec) -> int:
    """How many scenarios a pool of ``spec`` starts with that are planned at the axis
    edges (see :func:`pool_scenarios`): the part of a pool no keyed draw stands in for."""
    return len(_pool_plans(effective_axes(oracle, spec))[1])


def _pool_plans(axes: dict[str, Axis]) -> tuple[list[str], list[tuple[str, Any]]]:
    edge_axes = [a for a, ax in axes.items() if not isinstance(ax, Seed) and len({canonjson.dumps_compact(v)
                                                                                 for v in ax.edges()}) == 2]
    plans: list[tuple[str, Any]] = [(a, end) for end in (0, 1) for a in edge_axes]
    if edge_axes:
        plans += [("*", 0), ("*", 1)]
    return edge_axes, plans


@dataclass
class Selection:
    """The scenarios a task publishes and withholds, and how they were chosen."""

    public: list[Scenario]
    hidden: list[Scenario]
    strategy: str
    report: dict[str, Any] | None = None   # stress: what the chosen sets kill (verifier side only)


# -- the build secret ----------------------------------------------------------------------
def recon_home() -> Path:
    return Path(os.environ.get("RECON_HOME") or Path.home() / ".local" / "share" / "recon")


def build_secret(explicit: str | None = None) -> tuple[bytes, str]:
    """The secret hidden scenarios are keyed by, and where it came from.

    Order: ``explicit`` (``--secret``), ``$RECON_SECRET``, then the file
    ``$RECON_HOME/secret`` (created with 32 random bytes, mode 0600, on first use), so
    builds on one machine are reproducible and nobody else can regenerate them.
    """
    if explicit:
        return explicit.encode("utf-8"), "--secret"
    env = os.environ.get("RECON_SECRET")
    if env:
        return env.encode("utf-8"), "$RECON_SECRET"
    path = recon_home() / "secret"
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".secret-")
        try:
            os.write(fd, secrets.token_hex(32).encode())
            os.fchmod(fd, 0o600)
        finally:
            os.close(fd)
        try:
            os.link(tmp, path)  # atomic: never replaces a secret another process just wrote
        except FileExistsError:
            pass
        finally:
            os.unlink(tmp)
    return path.read_bytes().strip(), str(path)


# -- running the oracle --------------------------------------------------------------------
@dataclass
class ScenarioRun:
    scenario: Scenario
    output: dict[str, Any]
    seconds: float
    files: list[str]  # files written into the scenario folder, relative, sorted


def scenario_document(oracle: Oracle, sc: Scenario, inputs: dict[str, str]) -> dict[str, Any]:
    """The scenario JSON a submission receives (input paths relative to its folder)."""
    return {"task": oracle.name, "id": sc.id, "parameters": sc.parameters, "inputs": inputs}


def run_scenario(oracle: Oracle, sc: Scenario, directory: Path, *, evidence: bool,
                 evidence_level: str | None = None) -> ScenarioRun:
    """Run the oracle on one scenario into ``directory``: scenario.json,
    oracle_output.json, inputs/ and (when ``evidence``) the evidence files a build at
    ``evidence_level`` publishes (default: the oracle's own level)."""
    directory.mkdir(parents=True, exist_ok=True)
    where = f"scenario {sc.id} (parameters {canonjson.dumps_compact(sc.parameters)})"
    inputs_dir = directory / "inputs"
    t0 = time.perf_counter()
    try:
        inputs = oracle.make_inputs(sc.parameters, inputs_dir) if oracle.inputs else {}
    except ReconError:
        raise
    except Exception as exc:  # noqa: BLE001 - reported with the scenario
        raise OracleRunError(f"oracle {oracle.name!r}: generating inputs for {where} failed: {type(exc).__name__}: {exc}") from None
    with tempfile.TemporaryDirectory(prefix="recon-evidence-") as tmp:
        ev_dir = Path(tmp)
        try:
            output = oracle(sc.parameters, ev_dir, inputs) if oracle.inputs else oracle(sc.parameters, ev_dir)
        except OracleRunError as exc:
            raise OracleRunError(f"{where}: {exc.message}", hint=exc.hint) from None
        except ReconError:
            raise
        except Exception as exc:  # noqa: BLE001
            raise OracleRunError(f"oracle {oracle.name!r} raised on {where}: {type(exc).__name__}: {exc}",
                                 hint=f"fix the oracle ({oracle.location}); every in-range scenario must succeed") from None
        seconds = time.perf_counter() - t0
        written = sorted(p.name for p in ev_dir.iterdir())
        undeclared = sorted(set(written) - set(oracle.evidence))
        missing = sorted(set(oracle.evidence) - set(written))
        if undeclared or missing:
            raise OracleRunError(f"oracle {oracle.name!r} on {where}: evidence files do not match the declaration "
                                 f"(undeclared {undeclared}, not written {missing})",
                                 hint="declare every evidence file in @oracle(evidence={...}) and always write them")
        if evidence:
            published = oracle.published_evidence(evidence_level)
            for name in [w for w in written if w in published]:
                src = ev_dir / name
                if not src.is_file():
                    raise OracleRunError(f"oracle {oracle.name!r} on {where}: evidence {name!r} is not a regular file")
                shutil.copyfile(src, directory / name)
    rel_inputs = {name: f"inputs/{path.name}" for name, path in sorted(inputs.items())}
    canonjson.write(directory / "scenario.json", scenario_document(oracle, sc, rel_inputs))
    canonjson.write(directory / "oracle_output.json", output)
    files = sorted(str(p.relative_to(directory)) for p in directory.rglob("*") if p.is_file())
    return ScenarioRun(sc, output, seconds, files)


def pinned_cpus(n: int) -> list[int] | None:
    """The CPUs ``n`` worker processes are pinned to, one each, when they are as many as
    the CPUs this process may use (the default): else None, and the kernel places them.

    An oracle that hands work to a thread of its own and waits for it (pyroomacoustics
    builds every impulse response on a fresh thread, even with one thread asked for)
    pays the kernel's placement of that thread on every hand-off: two processes running
    ``acoustic_beamforming``'s reference side by side on two cores took 1.3 x the wall
    time unpinned that they took pinned, at the same CPU time. Fewer workers than CPUs
    are not pinned: another build's could be pinned to the same ones and leave a core idle."""
    try:
        cpus = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return None
    return cpus if n >= 2 and len(cpus) == n else None


def pin_process(pid: int, cpu: int) -> None:
    """Run process ``pid`` on ``cpu`` only (see :func:`pinned_cpus`); a process already
    gone, or a system that forbids it, is left as it is."""
    try:
        os.sched_setaffinity(pid, {cpu})
    except (AttributeError, OSError):  # pragma: no cover - not Linux, or gone
        pass


_WORKER_ORACLE: Oracle | None = None


def _init_worker(oracle: Oracle, cpus: list[int] | None = None, started: Any = None) -> None:
    global _WORKER_ORACLE
    _WORKER_ORACLE = oracle
    if cpus and started is not None:
        with started.get_lock():   # the n-th worker to start takes the n-th CPU
            slot, started.value = started.value, started.value + 1
        pin_process(os.getpid(), cpus[slot % len(cpus)])


def _worker(job: tuple[Scenario, str, bool, str | None]) -> ScenarioRun:
    if _WORKER_ORACLE is None:  # pragma: no cover - set by the pool initializer
        raise RuntimeError("sweep worker started without an oracle")
    sc, directory, evidence, level = job
    return run_scenario(_WORKER_ORACLE, sc, Path(directory), evidence=evidence, evidence_level=level)


def run_scenarios(
    oracle: Oracle,
    jobs: list[tuple[Scenario, Path, bool]],
    *,
    workers: int = 1,
    progress: Callable[[int], None] | None = None,
    evidence_level: str | None = None,
) -> list[ScenarioRun]:
    """Run many scenarios, in order of ``jobs``, on up to ``workers`` processes."""
    results: list[ScenarioRun] = []
    if workers <= 1 or len(jobs) <= 1:
        for sc, d, ev in jobs:
            results.append(run_scenario(oracle, sc, d, evidence=ev, evidence_level=evidence_level))
            if progress:
                progress(1)
        return results
    ctx = get_context("fork")  # the oracle (maybe from a plugin file) is inherited, not pickled
    cpus = pinned_cpus(min(workers, len(jobs)))
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_init_worker,
                             initargs=(oracle, cpus, ctx.Value("i", 0) if cpus else None)) as pool:
        chunk = max(1, len(jobs) // (workers * 8))
        for run in pool.map(_worker, [(sc, str(d), ev, evidence_level) for sc, d, ev in jobs], chunksize=chunk):
            results.append(run)
            if progress:
                progress(1)
    return results
