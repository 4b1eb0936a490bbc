"""Mutation analysis: how well a task's scenarios catch wrong programs (DESIGN §8).

Three hidden scenarios drawn at random say little about whether a program is right.
Following EvalPlus, recon measures the adequacy of a scenario set by its *mutation
score*: single-edit variants (mutants, :mod:`recon.mutation.operators`) of the oracle's reference
program are run on the scenarios, and a mutant is *killed* by a scenario when some
output field fails the task's own comparison (:func:`recon.compare.check` with the
oracle's output specs, the grader's code) or when it breaks the contract (a crash, a
timeout, a wrong-kind output: reported apart). A timeout or a worker death counts only
when it repeats in a second run given three times as long: a busy machine must not make
an equivalent mutant look killed (and the hidden set look weak).

:func:`mutation_analysis` generates each scenario's inputs and truth once (the public,
hidden and probe scenarios of the task, then, while mutants survive them, chunks of a
pool starting with the axis edges), runs every mutant in long-lived workers
(:mod:`recon.mutation.worker`) until its first kill per scenario group, and before
calling a survivor of the whole pool *equivalent* searches for a scenario that kills it
with hypothesis, steered by the mutant's deviation from the truth in units of the
tolerance. A survivor must survive ``pool_size`` generated scenarios: the task's keyed
draws it already survived (hidden and probes) count, so the pool runs its axis edges and
only as many draws as are missing. A survivor whose every output deviated exactly as
much as the reference's leaves the search nothing to climb and is not searched. Probes are drawn at grading time from a nonce, so
"hidden + probes" is estimated over ``nonces`` fixed nonces (by default as many as keep
the probes within about 80 scenarios, between 2 and 5: :func:`~recon.mutation.engine.auto_nonces`):
the score is the mean over the nonces, and the minimum is reported too.

Runs that cannot change anything are skipped (see :mod:`recon.mutation.operators`): a mutant on
lines a scenario never executes, an operator swap whose site never yields a different
value there, and a mutant whose enclosing function, replayed on the arguments it got,
returns what it returned in the reference's run. A large reference is analysed on a
deterministic sample of its mutants (``max_mutants``; the score's standard error is
reported), and a ``budget`` (seconds from the start) stops the pool and the search in
time, no run starting after it: mutants still alive then are *undecided*, neither
killed nor equivalent.

:func:`mutation_score` is the hook for ``recon validate``; :func:`compare_selections`
measures selection strategies side by side on one shared pool.
"""
from __future__ import annotations

import dataclasses
import hashlib
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from .. import canonjson
from .engine import (DEFAULT_MAX_PER_LINE, DEFAULT_MEMORY, DEFAULT_POOL, DEFAULT_SEARCH,
                     DEFAULT_THRESHOLD, DEFAULT_VALIDATE_POOL, MIN_TIMEOUT, SKIPPED, TIMEOUT_FACTOR, Engine,
                     auto_nonces)
from .operators import Mutant, subsample
from .selection import select_scenarios
from .store import VerdictStore
from .worker import CONTRACT, VALUE
from ..errors import UsageError
from ..oracle import Oracle
from ..registry import Registry
from ..sweep import (Scenario, SweepSpec, build_secret, derive_task_key, load_spec,
                     pool_edges, pool_scenarios, probe_scenarios)
from ..grader import resolve_oracle
from ..task import Task as BuiltTask, load_task

__all__ = ["MutationReport", "MutantResult", "mutation_analysis", "mutation_score", "compare_selections",
           "resolve_target", "Target"]


# --------------------------------------------------------------------------- targets
@dataclass
class Target:
    """What is analysed: an oracle, its sweep, its task key, its public and hidden
    scenarios (with documents and truths when they come from a built task)."""

    oracle: Oracle
    spec: SweepSpec
    key: bytes
    public: list[Scenario]
    hidden: list[Scenario]
    probes: int
    label: str
    existing: dict[str, tuple[dict[str, Any], dict[str, Any]]] = field(default_factory=dict)
    selection_seconds: float = 0.0
    killable: frozenset[str] = frozenset()   # mutant keys a build's selection saw killed


def resolve_target(
    target: str | Path | Oracle | Any,
    *,
    registry: Registry | None = None,
    spec_path: Path | None = None,
    secret: str | None = None,
    n_public: int | None = None,
    n_hidden: int | None = None,
    seed: int | None = None,
    select: str | None = None,
    probes: int | None = None,
    workers: int | None = None,
    log: Callable[[str], None] | None = None,
) -> Target:
    """An oracle name, an :class:`Oracle`, a built task directory or a loaded task.

    A built task brings its own public and hidden scenarios (their documents and truths
    are read, not regenerated), its task key and its probe count. An oracle gets the
    scenarios a build would give it: its sweep spec, the build secret, and the spec's
    selection strategy (``select`` overrides it).
    """

    task: BuiltTask | None = None
    if isinstance(target, BuiltTask):
        task = target
    elif isinstance(target, (str, Path)) and Path(target).is_dir():
        task = load_task(target)
    if task is not None:

        oracle = resolve_oracle(task, registry)
        meta_spec = dict(task.meta["spec"])
        spec = SweepSpec(n_public=meta_spec["n_public"], n_hidden=meta_spec["n_hidden"], seed=meta_spec["seed"],
                         axes=meta_spec.get("axes", {}), select=meta_spec.get("select", "random"),
                         source=f"task {task.meta.get('task', oracle.name)}")
        existing: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
        public: list[Scenario] = []
        hidden: list[Scenario] = []
        for kind, dirs in (("public", task.public()), ("hidden", task.hidden())):
            for sd in dirs:
                doc = dict(sd.document)
                doc["inputs"] = {k: str(p) for k, p in sd.input_files().items()}
                existing[sd.id] = (doc, sd.truth)
                (public if kind == "public" else hidden).append(Scenario(sd.id, sd.parameters))
        n_probes = int(task.meta.get("probes", 3) if probes is None else probes)
        killable: frozenset[str] = frozenset()
        sel_file = task.tests / "selection.json"
        if sel_file.is_file() and oracle.reference is not None:
            try:
                doc = canonjson.read(sel_file)
                if doc.get("reference") == hashlib.sha256(oracle.reference.read_bytes()).hexdigest():
                    killable = frozenset(str(k) for k in doc.get("killable", []))
            except (OSError, ValueError, AttributeError):
                killable = frozenset()
        return Target(oracle, spec, bytes.fromhex(task.meta["task_key"]), public, hidden, n_probes,
                      str(task.root or task.tests), existing, killable=killable)
    if isinstance(target, Oracle):
        oracle = target
    elif isinstance(target, str):
        reg = registry if registry is not None else Registry.default([])
        oracle = reg.get(target)
    else:
        raise UsageError(f"cannot analyse {target!r}", hint="give an oracle name or a built task directory")
    spec = load_spec(oracle, spec_path, n_public=n_public, n_hidden=n_hidden, seed=seed, select=select)
    key = derive_task_key(build_secret(secret)[0], oracle, spec)
    t0 = time.perf_counter()
    sel = select_scenarios(oracle, spec, key, workers=workers or os.cpu_count() or 1, progress=log)
    public, hidden = sel.public, sel.hidden
    return Target(oracle, spec, key, public, hidden, spec.probes if probes is None else int(probes), oracle.name,
                  selection_seconds=time.perf_counter() - t0)


# --------------------------------------------------------------------------- the report
@dataclass
class MutantResult:
    mutant: Mutant
    public: bool
    hidden: bool
    probes: list[bool]            # per nonce: killed by hidden + that nonce's probes
    pool: bool                    # killed by a pool scenario
    search: bool                  # killed by a scenario the targeted search found
    elsewhere: bool               # killed by a scenario the build's selection ran (not searched again)
    kind: str                     # value, contract or "" (never killed)
    first_kill: dict[str, Any] | None
    decided: bool = True          # False: alive when the budget ran out before the full pool and search

    @property
    def killed(self) -> bool:
        return self.public or self.hidden or any(self.probes) or self.pool or self.search or self.elsewhere

    @property
    def equivalent(self) -> bool:
        return not self.killed and self.decided

    @property
    def undecided(self) -> bool:
        return not self.killed and not self.decided

    @property
    def graded_rate(self) -> float:
        """Fraction of nonces whose hidden + probes kill the mutant."""
        return sum(self.probes) / len(self.probes) if self.probes else float(self.hidden)

    def to_json(self) -> dict[str, Any]:
        return {**self.mutant.to_json(), "equivalent": self.equivalent, "undecided": self.undecided, "kind": self.kind,
                "killed_by": {"public": self.public, "hidden": self.hidden,
                              "hidden_probes": round(self.graded_rate, 6), "pool": self.pool, "search": self.search,
                              "selection": self.elsewhere},
                "first_kill": self.first_kill}


@dataclass
class MutationReport:
    """Per task: mutants made, equivalent, killed by the public set, the hidden set and
    hidden + probes; survivors; hidden-only kills; timings. ``score`` is the mean over
    the nonces of the fraction of non-equivalent mutants killed by hidden + probes."""

    oracle: str
    version: str
    label: str
    selection: str
    results: list[MutantResult]
    scenarios: dict[str, Any]
    settings: dict[str, Any]
    timings: dict[str, float]
    mutant_set: dict[str, Any]
    warnings: list[str]
    threshold: float = DEFAULT_THRESHOLD

    @property
    def non_equivalent(self) -> list[MutantResult]:
        return [r for r in self.results if r.killed]

    @property
    def equivalent(self) -> list[MutantResult]:
        return [r for r in self.results if r.equivalent]

    @property
    def undecided(self) -> list[MutantResult]:
        """Alive when the budget ran out: neither killed nor shown equivalent."""
        return [r for r in self.results if r.undecided]

    @property
    def score_conservative(self) -> float:
        """The score with undecided mutants counted as non-equivalent and missed."""
        ne, und = self.non_equivalent, len(self.undecided)
        return (sum(r.graded_rate for r in ne) / (len(ne) + und)) if ne or und else 1.0

    @property
    def score_error(self) -> float:
        """Standard error of the score as an estimate from the analysed mutants (binomial)."""
        n = len(self.non_equivalent)
        return math.sqrt(self.score * (1 - self.score) / n) if n else 0.0

    def _count(self, pred: Callable[[MutantResult], bool]) -> int:
        return sum(1 for r in self.non_equivalent if pred(r))

    @property
    def score(self) -> float:
        ne = self.non_equivalent
        if not ne:
            return 1.0
        return sum(r.graded_rate for r in ne) / len(ne)

    @property
    def score_min(self) -> float:
        ne = self.non_equivalent
        n = len(self.scenarios.get("nonces", [])) or 1
        if not ne:
            return 1.0
        if not ne[0].probes:
            return self.score
        return min(sum(r.probes[k] for r in ne) / len(ne) for k in range(n))

    @property
    def passed(self) -> bool:
        return self.score >= self.threshold

    @property
    def survivors(self) -> list[MutantResult]:
        """Non-equivalent mutants that hidden + probes miss for at least one nonce."""
        return [r for r in self.non_equivalent if r.graded_rate < 1.0]

    @property
    def hidden_only(self) -> list[MutantResult]:
        """Killed by a hidden scenario but by no public one: behaviour tested, never shown."""
        return [r for r in self.non_equivalent if r.hidden and not r.public]

    def summary(self) -> dict[str, Any]:
        ne = self.non_equivalent
        n = len(ne)

        def pct(k: float) -> float:
            return round(k / n, 6) if n else 1.0

        graded = sum(r.graded_rate for r in ne)
        return {
            "mutants": len(self.results),
            "equivalent": len(self.equivalent),
            "undecided": len(self.undecided),
            "non_equivalent": n,
            "killed_by_contract": self._count(lambda r: r.kind == CONTRACT),
            "killed_by_value": self._count(lambda r: r.kind == VALUE),
            "killed_public": self._count(lambda r: r.public),
            "killed_hidden": self._count(lambda r: r.hidden),
            "killed_hidden_probes": round(graded, 3),
            "score_public": pct(self._count(lambda r: r.public)),
            "score_hidden": pct(self._count(lambda r: r.hidden)),
            "score": round(self.score, 6),
            "score_min": round(self.score_min, 6),
            "score_error": round(self.score_error, 6),
            "score_conservative": round(self.score_conservative, 6),
            "hidden_only": len(self.hidden_only),
            "survivors": len(self.survivors),
            "threshold": self.threshold,
            "passed": self.passed,
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "oracle": self.oracle, "version": self.version, "target": self.label, "selection": self.selection,
            "summary": self.summary(), "settings": self.settings, "timings": {k: round(v, 3) for k, v in self.timings.items()},
            "mutant_generation": self.mutant_set, "scenarios": self.scenarios, "warnings": self.warnings,
            "survivors": [r.mutant.id for r in self.survivors],
            "hidden_only": [r.mutant.id for r in self.hidden_only],
            "equivalent": [r.mutant.id for r in self.equivalent],
            "undecided": [r.mutant.id for r in self.undecided],
            "mutants": [r.to_json() for r in self.results],
        }

    def render(self, *, limit: int = 25) -> str:
        s = self.summary()
        n = s["non_equivalent"]
        t = self.timings
        nonces = len(self.scenarios.get("nonces", []))

        def row(label: str, count: float, of: int, note: str = "") -> str:
            share = f"{100 * count / of:5.1f}%" if of else "    -"
            c = f"{count:g}" if isinstance(count, int) or float(count).is_integer() else f"{count:.1f}"
            return f"  {label:<34} {c:>7} {share:>7}  {note}"

        ms = self.mutant_set
        sample = f"a sample of {ms.get('made', s['mutants'])}; " if ms.get("made", s["mutants"]) > s["mutants"] else ""
        lines = [f"mutation analysis of {self.label} ({self.oracle} {self.version}, {self.selection} selection)",
                 f"  {'mutants analysed':<34} {s['mutants']:>7}          "
                 f"({sample}{ms['uncovered']} more on lines no scenario runs, {ms['capped']} over the "
                 f"per-line cap)",
                 row("equivalent (survive everything)", s["equivalent"], s["mutants"],
                     f"{self.settings.get('pool_credited', 0)} keyed draws of the task + a pool of "
                     f"{self.scenarios['pool']} + targeted search"
                     + (f" ({self.settings['not_searched_flat']} never deviated: not searched)"
                        if self.settings.get("not_searched_flat") else "")),
                 *([row("undecided (budget ran out)", s["undecided"], s["mutants"],
                        f"pool stopped at {self.scenarios['pool']} of {self.scenarios.get('pool_planned', '?')}")]
                   if s["undecided"] else []),
                 row("non-equivalent", n, s["mutants"], f"{s['killed_by_contract']} by the contract only, "
                     f"{s['killed_by_value']} by values"),
                 row("killed by public", s["killed_public"], n, f"{len(self.scenarios['public'])} scenarios"),
                 row("killed by hidden", s["killed_hidden"], n, f"{len(self.scenarios['hidden'])} scenarios"),
                 row("killed by hidden + probes", s["killed_hidden_probes"], n,
                     f"mean over {nonces} nonces of {self.scenarios['probes']} probes (min {100 * s['score_min']:.1f}%)"),
                 row("hidden-only kills", s["hidden_only"], n, "killed by hidden, by no public scenario"),
                 f"  score {100 * s['score']:.1f}% +- {100 * s['score_error']:.1f}% (threshold "
                 f"{100 * self.threshold:.0f}%): {'PASS' if s['passed'] else 'FAIL'}"
                 + (f"; {100 * s['score_conservative']:.1f}% counting undecided mutants as missed"
                    if s["undecided"] else ""),
                 f"  {t.get('total', 0.0):.1f} s wall ({t.get('generate', 0.0):.1f} s scenarios, {t.get('mutants', 0.0):.1f} s "
                 f"mutants, {t.get('search', 0.0):.1f} s search; {t.get('cpu_seconds', 0.0):.0f} CPU s); "
                 f"{t.get('mutants_per_second', 0.0):.2f} mutants/s, {int(t.get('runs', 0))} runs, "
                 f"{int(t.get('pruned_runs', 0))} skipped (not reached / not infected), "
                 f"{int(t.get('replayed_runs', 0))} settled by replaying the mutated function, "
                 f"{int(t.get('memoized_runs', 0))} sped up by the reference's recorded calls"
                 + (f"; {int(t['reused_verdicts'])} verdicts kept from earlier analyses of this reference"
                    if t.get("reused_verdicts") else "")]
        for title, items in (("survivors of hidden + probes", self.survivors), ("hidden-only kills", self.hidden_only),
                             ("undecided", self.undecided), ("equivalent", self.equivalent)):
            if not items:
                continue
            lines.append(f"{title}:")
            for r in items[:limit]:
                extra = f"  [graded {100 * r.graded_rate:.0f}%]" if title.startswith("survivors") else ""
                lines.append(f"  #{r.mutant.id:<4} {r.mutant.describe()}{extra}")
            if len(items) > limit:
                lines.append(f"  ... and {len(items) - limit} more (--json for all)")
        for w in self.warnings:
            lines.append(f"warning: {w}")
        return "\n".join(lines)

    def write(self, out_dir: Path | str) -> Path:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        path = out / "mutation.json"
        canonjson.write(path, self.to_json())
        return path


# --------------------------------------------------------------------------- analysis
def mutation_analysis(
    target: str | Path | Oracle | Any,
    *,
    registry: Registry | None = None,
    spec_path: Path | None = None,
    secret: str | None = None,
    select: str | None = None,
    n_public: int | None = None,
    n_hidden: int | None = None,
    seed: int | None = None,
    pool_size: int = DEFAULT_POOL,
    pool_seed: int = 0,
    nonces: int | None = None,
    probes: int | None = None,
    search_examples: int = DEFAULT_SEARCH,
    max_per_line: int | None = DEFAULT_MAX_PER_LINE,
    max_mutants: int | None = None,
    operators: Iterable[str] | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    workers: int | None = None,
    memory: int = DEFAULT_MEMORY,
    budget: float | None = None,
    reuse: bool = True,
    log: Callable[[str], None] | None = None,
) -> MutationReport:
    """Mutation analysis of a task's scenarios (see the module docstring).

    ``target``: an oracle name, an :class:`Oracle`, a built task directory or a loaded
    task. ``pool_size`` generated scenarios (the task's keyed draws included; the pool
    of ``pool_seed`` adds its axis edges and what is missing) decide equivalence together
    with ``search_examples`` hypothesis examples per survivor that deviated (0: no search). ``nonces``
    probe draws of ``probes`` probes each estimate hidden + probes (None: as many as
    :func:`~recon.mutation.engine.auto_nonces` gives for the task's probe count). ``max_per_line``
    caps mutants per source line; ``max_mutants`` keeps a deterministic sample.
    ``budget``: seconds after which the pool and the search stop (the mutants still
    alive are reported undecided); None runs them to the end. ``reuse``: take the
    verdicts earlier analyses and builds of the same reference kept instead of running
    those pairs again (:class:`~recon.mutation.store.VerdictStore`; False: run every pair).
    """
    _check_settings(threshold, nonces, pool_size, search_examples)
    t_start = time.perf_counter()
    tgt = resolve_target(target, registry=registry, spec_path=spec_path, secret=secret, n_public=n_public,
                         n_hidden=n_hidden, seed=seed, select=select, probes=probes, workers=workers, log=log)
    return _analyse([tgt], t_start=t_start, pool_size=pool_size, pool_seed=pool_seed, nonces=nonces,
                    search_examples=search_examples, max_per_line=max_per_line, max_mutants=max_mutants,
                    operators=operators, threshold=threshold, workers=workers, memory=memory, log=log,
                    budget=budget, reuse=reuse)[0]


def compare_selections(
    name: str | Oracle,
    strategies: Sequence[str] = ("random", "stress"),
    *,
    registry: Registry | None = None,
    spec_path: Path | None = None,
    secret: str | None = None,
    pool_size: int = DEFAULT_POOL,
    pool_seed: int = 0,
    nonces: int | None = None,
    search_examples: int = DEFAULT_SEARCH,
    max_per_line: int | None = DEFAULT_MAX_PER_LINE,
    max_mutants: int | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    workers: int | None = None,
    budget: float | None = None,
    log: Callable[[str], None] | None = None,
) -> dict[str, MutationReport]:
    """Mutation analysis of the scenarios each selection strategy gives oracle ``name``,
    side by side: one run of the mutants on one shared pool (so the same mutants are
    equivalent for every strategy). ``report.timings["selection"]`` is the time the
    strategy took to choose its scenarios (what it adds to ``recon build``)."""
    _check_settings(threshold, nonces, pool_size, search_examples)
    targets = [resolve_target(name, registry=registry, spec_path=spec_path, secret=secret, select=st,
                              workers=workers, log=log) for st in strategies]
    reports = _analyse(targets, t_start=time.perf_counter(), pool_size=pool_size, pool_seed=pool_seed, nonces=nonces,
                       search_examples=search_examples, max_per_line=max_per_line, max_mutants=max_mutants,
                       operators=None, threshold=threshold, workers=workers, memory=DEFAULT_MEMORY, log=log,
                       budget=budget)
    return dict(zip(strategies, reports))


def _check_settings(threshold: float, nonces: int | None, pool_size: int, search_examples: int) -> None:
    if not (0.0 <= threshold <= 1.0):
        raise UsageError(f"threshold {threshold!r} must be in [0, 1]")
    if (nonces is not None and not 0 <= nonces <= 100) or pool_size < 0 or search_examples < 0:
        raise UsageError("nonces must be in [0, 100]; pool size and search examples must not be negative")


def _analyse(targets: list[Target], *, t_start: float, pool_size: int, pool_seed: int, nonces: int | None,
             search_examples: int, max_per_line: int | None, max_mutants: int | None,
             operators: Iterable[str] | None, threshold: float, workers: int | None, memory: int,
             log: Callable[[str], None] | None, budget: float | None = None,
             reuse: bool = True) -> list[MutationReport]:
    """The analysis proper, for one or more scenario sets of the same oracle and spec
    sharing one pool, one set of mutants and one verdict on equivalence.

    The pool is generated in chunks (edges first) and only while some mutant survives
    everything so far; with a ``budget`` (seconds since ``t_start``) the pool and the
    search stop when it is spent, and the mutants still alive are reported *undecided*
    rather than equivalent. The task's own scenarios are always run in full.
    """
    say = log or (lambda msg: None)
    oracle, spec = targets[0].oracle, targets[0].spec
    if nonces is None:
        nonces = auto_nonces(max(t.probes for t in targets))
    nonce_list = [f"mutation-{k}" for k in range(nonces)]
    cpu0 = _cpu_seconds()
    timings: dict[str, float] = {}
    warnings: list[str] = []
    store = VerdictStore.for_oracle(oracle, memory=memory) if reuse else None
    with Engine(oracle, workers=workers, memory=memory, log=say, store=store) as eng:
        t0 = time.perf_counter()
        # the budget counts from t_start on the engine's budget clock (its workers' CPU
        # time): a loaded machine buys the same runs with it, only later
        deadline = eng.clock() - (t0 - t_start) + budget if budget else float("inf")
        sets: list[dict[str, Any]] = []
        for tgt in targets:
            tag = f"{tgt.spec.select}:" if len(targets) > 1 else ""
            groups: dict[str, Any] = {
                "public": eng.add_scenarios(tgt.public, f"{tag}public", tgt.existing),
                "hidden": eng.add_scenarios(tgt.hidden, f"{tag}hidden", tgt.existing),
                "probes": [],
            }
            for nonce in nonce_list:
                drawn = probe_scenarios(oracle, tgt.spec, tgt.key, nonce, tgt.probes, tgt.public, tgt.hidden)
                groups["probes"].append(eng.add_scenarios(
                    [dataclasses.replace(s, id=f"{s.id}@{nonce}") for s in drawn], f"{tag}probe:{nonce}"))
            sets.append(groups)
        taken = [s for tgt in targets for s in (*tgt.public, *tgt.hidden)]
        # A survivor of the task's scenarios has survived its keyed draws (the hidden set
        # and every probe draw: independent draws from the generator, like a pool's), so
        # they count towards the pool; the pool's planned axis edges always run.
        credited = min(len(tgt.hidden) + len(nonce_list) * tgt.probes for tgt in targets)
        edges = min(pool_edges(oracle, spec), pool_size)
        pool_all = pool_scenarios(oracle, spec, max(edges, pool_size - credited), seed=pool_seed, taken=taken)
        chunk = max(16, 4 * eng.n_workers)
        pool = eng.add_scenarios(pool_all[:chunk], "pool")
        say(f"generating {len(eng.cases)} scenarios of {oracle.name} on {eng.n_workers} worker(s)")
        eng.generate()
        timings["generate"] = time.perf_counter() - t0
        t1 = time.perf_counter()
        mutants = eng.make_mutants(max_per_line=max_per_line, operators=operators)
        made = len(mutants)
        if max_mutants is not None and len(mutants) > max_mutants:

            mutants = eng.mutants = subsample(mutants, max_mutants)
        say(f"{len(mutants)} mutants of {eng.reference.name}"
            + (f" (a sample of {made})" if made > len(mutants) else "") + "; running them on the task's scenarios")
        eng.evaluate([(m, g[part]) for g in sets for part in ("public", "hidden") for m in mutants])
        eng.evaluate([(m, ps) for g in sets for m in mutants if not eng.killed_by(m.id, g["hidden"])
                      for ps in g["probes"]])
        task_groups = [ix for g in sets for ix in (g["public"], g["hidden"], *g["probes"])]
        rest = [m for m in mutants if not any(eng.killed_by(m.id, ix) for ix in task_groups)]
        # a mutant the build's selection saw killed needs no pool or search to be non-equivalent
        proven = {m.id for m in rest if any(m.key in tgt.killable for tgt in targets)}
        alive = [m for m in rest if m.id not in proven]
        say(f"{len(rest)} mutants survive the task's scenarios; running them on a pool of up to {len(pool_all)}")
        used = 0  # pool scenarios the survivors actually ran on
        while alive and eng.clock() < deadline:
            eng.evaluate([(m, pool) for m in alive], order=eng.by_kills, deadline=deadline)
            used = len(pool)
            alive = [m for m in alive if not eng.killed_by(m.id, pool)]
            if not alive or len(pool) >= len(pool_all) or eng.clock() + eng.generation_estimate(chunk) >= deadline:
                break  # (a chunk that could not be generated in time would not be run either)
            pool += eng.add_scenarios(pool_all[len(pool):len(pool) + chunk], "pool")
            eng.generate()
        if not rest:
            used = len(pool)
        full_pool = used >= len(pool_all) and all(eng.killed_by(m.id, pool) is not None for m in alive)
        timings["mutants"] = time.perf_counter() - t1
        t2 = time.perf_counter()
        found_idx: list[int] = []
        searched: set[int] = set()
        # The search climbs a survivor's deviation from the truth; one that never deviated
        # on any scenario (every output within rounding of the truth's) leaves it nothing
        # to climb, and its random draws would only extend the pool it survived.
        flat = _flat(eng, alive)
        queue = [m for m in alive if m.id not in flat] if full_pool else []
        if search_examples and queue:
            say(f"{len(queue)} survive the pool; searching for killing scenarios ({search_examples} examples each)")
        while search_examples and queue and eng.clock() < deadline:
            batch, queue = queue[:eng.n_workers], queue[eng.n_workers:]
            hits = eng.search(batch, examples=search_examples, seed=pool_seed, spec=spec, deadline=deadline)
            searched.update(m.id for m in batch if m.id not in eng.cut_short)
            known = {eng.cases[i].scenario.key() for i in found_idx}
            new = eng.new_scenarios(hits, known, "found", start=len(found_idx) + 1)
            if new:
                idx = eng.add_scenarios(new, "found")
                eng.generate()
                found_idx += idx
                # a scenario found for one mutant often kills others: try it on every survivor
                eng.evaluate([(m, found_idx) for m in [*batch, *queue]], deadline=deadline)
                queue = [m for m in queue if not eng.killed_by(m.id, found_idx)]
        decided = {m.id for m in alive if full_pool and (m.id in searched or m.id in flat or not search_examples)}
        undecided = [m for m in alive if m.id not in decided and not eng.killed_by(m.id, found_idx)]
        if undecided:
            warnings.append(f"{len(undecided)} mutant(s) survived {used} of {len(pool_all)} pool scenarios when "
                            f"the budget of {budget:.0f} s ran out: undecided, left out of the score (see "
                            "score_conservative)" if budget else f"{len(undecided)} mutant(s) undecided")
        for pc in eng.disagreements():
            warnings.append(f"the reference does not reproduce the oracle on {pc.scenario.id} ({pc.ref_detail}); "
                            "the scenario is left out")
        timings["search"] = time.perf_counter() - t2
        timings["total"] = time.perf_counter() - t_start
        timings["runs"] = float(eng.runs)
        timings["mutants_per_second"] = len(mutants) / max(timings["mutants"] + timings["search"], 1e-9)
        timings["worker_restarts"] = float(eng.pool.restarts)
        timings["pruned_runs"] = float(eng.pruned)
        timings["replayed_runs"] = float(eng.replayed)
        timings["memoized_runs"] = float(eng.memoized)
        timings["reused_verdicts"] = float(eng.reused)
        ms = eng.mutant_set
        mset = {"made": made, "analysed": len(mutants), "uncovered": ms.sites_uncovered if ms else 0,
                "capped": ms.capped if ms else 0, "invalid": ms.invalid if ms else 0,
                "uncovered_lines": ms.uncovered_lines if ms else [], "max_per_line": max_per_line,
                "max_mutants": max_mutants, "by_operator": _by_operator(mutants)}
        reports = []
        undecided_ids = {m.id for m in undecided}
        for tgt, g in zip(targets, sets):
            groups = {"public": g["public"], "hidden": g["hidden"], "pool": pool, "found": found_idx}
            others = [ix for h in sets if h is not g for ix in (h["public"], h["hidden"], *h["probes"])]
            results = [_result(eng, m, groups, g["probes"], others, m.id not in undecided_ids, m.id in proven)
                       for m in mutants]
            scenarios = {
                "public": [eng.cases[i].scenario.id for i in g["public"]],
                "hidden": [eng.cases[i].scenario.id for i in g["hidden"]],
                "probes": tgt.probes, "nonces": nonce_list, "pool": used, "pool_planned": len(pool_all),
                "pool_seed": pool_seed,
                "found": [{"id": eng.cases[i].scenario.id, "parameters": eng.cases[i].scenario.parameters}
                          for i in found_idx],
                "excluded": [pc.scenario.id for pc in eng.disagreements()],
            }
            settings = {"pool_size": pool_size, "pool_seed": pool_seed, "pool_credited": credited, "nonces": nonces,
                        "probes": tgt.probes, "search_examples": search_examples, "searched": len(searched),
                        "not_searched_flat": len(flat & decided), "workers": eng.n_workers,
                        "budget": budget, "timeout_factor": TIMEOUT_FACTOR, "min_timeout": MIN_TIMEOUT,
                        "memory": memory, "spec": tgt.spec.to_json()}
            reports.append(MutationReport(oracle.name, oracle.version, tgt.label, tgt.spec.select, results, scenarios,
                                          settings, {**timings, "selection": tgt.selection_seconds}, mset,
                                          list(warnings), threshold))
    cpu = _cpu_seconds() - cpu0  # the workers have exited: their CPU time is counted now
    for r in reports:
        r.timings["cpu_seconds"] = cpu
    return reports


def _flat(eng: Engine, mutants: Sequence[Mutant]) -> set[int]:
    """The mutants among ``mutants`` whose every run so far deviated from the truth
    exactly as much as the unmutated reference did (runs skipped because the mutant could
    not differ count as such)."""
    ids = {m.id for m in mutants}
    moved = {mid for (mid, i), v in eng.verdicts.items()
             if mid in ids and v.detail not in SKIPPED and v.deviation != eng.cases[i].ref_deviation}
    return ids - moved


def _cpu_seconds() -> float:
    """CPU seconds of this process and its finished children: unlike the wall time, it
    does not grow when other jobs share the machine."""
    import resource  # noqa: PLC0415

    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def _by_operator(mutants: Sequence[Mutant]) -> dict[str, int]:
    out: dict[str, int] = {}
    for m in mutants:
        out[m.operator] = out.get(m.operator, 0) + 1
    return dict(sorted(out.items()))


def _result(eng: Engine, m: Mutant, groups: dict[str, list[int]], probe_sets: list[list[int]],
            others: Sequence[Sequence[int]] = (), decided: bool = True, elsewhere: bool = False) -> MutantResult:
    pub = bool(eng.killed_by(m.id, groups["public"]))
    hid = bool(eng.killed_by(m.id, groups["hidden"]))
    probes = [hid or bool(eng.killed_by(m.id, ps)) for ps in probe_sets]
    # "pool" also counts scenarios of other strategies' sets analysed alongside: they
    # are generated scenarios like the pool's, and equivalence must not depend on them
    pool = bool(eng.killed_by(m.id, groups["pool"])) or any(eng.killed_by(m.id, ix) for ix in others)
    search = bool(eng.killed_by(m.id, groups["found"]))
    mine = {*groups["public"], *groups["hidden"], *[i for ps in probe_sets for i in ps], *groups["pool"],
            *groups["found"], *[i for ix in others for i in ix]}
    kills = [v for (mid, i), v in eng.verdicts.items() if mid == m.id and v.killed and i in mine]
    kind = VALUE if any(v.status == VALUE for v in kills) else (CONTRACT if kills else "")
    first = None
    order = [*groups["public"], *groups["hidden"], *[i for ps in probe_sets for i in ps], *groups["pool"],
             *groups["found"], *[i for ix in others for i in ix]]
    for i in order:
        v = eng.verdicts.get((m.id, i))
        if v is not None and v.killed:
            first = {"scenario": eng.cases[i].scenario.id, "status": v.status, "detail": v.detail[:200]}
            break
    if elsewhere and first is None:
        first = {"scenario": "a candidate of the build's selection", "status": VALUE, "detail": ""}
        kind = kind or VALUE
    return MutantResult(m, pub, hid, probes, pool, search, elsewhere and not (pool or search), kind, first, decided)


def mutation_score(
    task_or_oracle: str | Path | Oracle | Any,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    pool_size: int = DEFAULT_VALIDATE_POOL,
    nonces: int | None = None,
    search_examples: int = 20,
    max_per_line: int | None = DEFAULT_MAX_PER_LINE,
    max_mutants: int | None = 100,
    budget: float | None = 240.0,
    registry: Registry | None = None,
    workers: int | None = None,
    reuse: bool = True,
    log: Callable[[str], None] | None = None,
) -> MutationReport:
    """The hook for ``recon validate``: mutation analysis of a built task (or an oracle)
    sized to finish in a few minutes (a sample of ``max_mutants`` mutants, a pool of
    ``pool_size``, the pool and search stopped after ``budget`` seconds).

    ``report.passed`` is False when hidden + probes kill less than ``threshold`` of the
    non-equivalent mutants (mean over ``nonces`` probe draws); ``report.survivors``
    names the mutants they miss, ``report.render()`` prints the table and
    ``report.to_json()`` the details.
    """
    return mutation_analysis(task_or_oracle, registry=registry, pool_size=pool_size, nonces=nonces,
                             search_examples=search_examples, max_per_line=max_per_line, max_mutants=max_mutants,
                             threshold=threshold, workers=workers, budget=budget, reuse=reuse, log=log)
