"""Mutation analysis: how well a task's scenarios catch wrong programs (DESIGN §8).

Three hidden scenarios drawn at random say little about whether a program is right.
Following EvalPlus, recon measures the adequacy of a scenario set by its *mutation
score*: single-edit variants (mutants, :mod:`recon._mutants`) of the oracle's reference
program are run on the scenarios, and a mutant is *killed* by a scenario when some
output field fails the task's own comparison (:func:`recon.compare.check` with the
oracle's output specs, the grader's code) or when it breaks the contract (a crash, a
timeout, a wrong-kind output: reported apart). A timeout or a worker death counts only
when it repeats in a second run given three times as long: a busy machine must not make
an equivalent mutant look killed (and the hidden set look weak).

:func:`mutation_analysis` generates each scenario's inputs and truth once (the public,
hidden and probe scenarios of the task, then, while mutants survive them, chunks of a
pool of ``pool_size`` generated scenarios starting with the axis edges), runs every
mutant in long-lived workers (:mod:`recon._mutant_worker`) until its first kill per
scenario group, and before calling a survivor of the whole pool *equivalent* searches
for a scenario that kills it with hypothesis, steered by the mutant's deviation from
the truth in units of the tolerance. Probes are drawn at grading time from a nonce, so
"hidden + probes" is estimated over ``nonces`` fixed nonces: the score is the mean over
the nonces, and the minimum is reported too.

Runs that cannot change anything are skipped (see :mod:`recon._mutants`): a mutant on
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
import math
import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from . import canonjson
from ._mutant_worker import (CONFIRM_FACTOR, CONTRACT, REPLAYED, SURVIVED, VALUE, Case, Task, Verdict, WorkerConfig,
                             WorkerPool, is_timeout, past)
from ._mutants import Mutant, MutantSet, generate_mutants, instrument
from .errors import OracleRunError, UsageError
from .oracle import Oracle
from .registry import Registry
from .sweep import (Scenario, SweepSpec, build_secret, derive_task_key, effective_axes, hidden_scenarios,
                    load_spec, pool_scenarios, probe_scenarios, public_scenarios, select_scenarios)

__all__ = ["Engine", "MutationReport", "MutantResult", "mutation_analysis", "mutation_score", "compare_selections",
           "resolve_target",
           "Target", "DEFAULT_POOL", "DEFAULT_VALIDATE_POOL", "DEFAULT_NONCES", "DEFAULT_SEARCH", "DEFAULT_THRESHOLD",
           "DEFAULT_MAX_PER_LINE", "DEFAULT_MAX_MUTANTS", "DEFAULT_BUDGET"]

DEFAULT_POOL = 200            # generated scenarios a survivor must survive to be called equivalent
DEFAULT_VALIDATE_POOL = 60    # the validate hook's pool: minutes, not tens of minutes
DEFAULT_NONCES = 5            # probe draws the "hidden + probes" score is averaged over
DEFAULT_SEARCH = 40           # hypothesis examples per survivor of the pool
DEFAULT_THRESHOLD = 0.9
DEFAULT_MAX_PER_LINE = 6      # mutants per source line (round-robin over the operators)
DEFAULT_MAX_MUTANTS = 120     # `recon mutate` samples this many (the score is an estimate: its error is shown)
DEFAULT_BUDGET = 280.0        # `recon mutate`: seconds after which no pool or search run starts (under 5 min in all)
DEFAULT_MEMORY = 4 << 30      # address space of a worker
TIMEOUT_FACTOR = 10.0         # a mutant may take this many times the reference's time ...
MIN_TIMEOUT = 2.0             # ... but at least this many seconds, and at most the oracle's timeout


# --------------------------------------------------------------------------- the engine
@dataclass
class PoolCase:
    """A generated scenario on the parent side."""

    index: int
    scenario: Scenario
    group: str
    case: Case | None = None
    ref_ok: bool = True
    ref_detail: str = ""
    ref_seconds: float = 0.0
    oracle_seconds: float = 0.0
    covered: frozenset[int] = frozenset()
    infected: frozenset[str] | None = None   # weak-mutation keys that differ here (None: unknown)


class Engine:
    """Workers, generated scenarios, mutants and the (sparse) kill matrix.

    ``add_scenarios`` queues scenarios (generated in the workers, truth from the oracle,
    plus a traced run of the unmutated reference); ``generate`` runs the queue;
    ``make_mutants`` mutates the lines the scenarios ran; ``evaluate`` runs mutants on
    lists of scenarios (until the first kill, or all of them) and fills ``verdicts``.
    Everything already known is reused: a (mutant, scenario) pair runs at most once.
    """

    def __init__(self, oracle: Oracle, *, workers: int | None = None, memory: int = DEFAULT_MEMORY,
                 scratch: Path | None = None, log: Callable[[str], None] | None = None) -> None:
        if oracle.reference is None:
            raise UsageError(f"oracle {oracle.name!r} ({oracle.location}) declares no reference solution",
                             hint='mutation analysis mutates the reference: add reference="reference.py" to @oracle(...)')
        self.oracle = oracle
        self.reference = Path(oracle.reference)
        self.source = self.reference.read_text(encoding="utf-8")
        self.fields = oracle.output_specs()
        self.log = log or (lambda msg: None)
        self._own_scratch = scratch is None
        self.scratch = Path(tempfile.mkdtemp(prefix="recon-mutate-")) if scratch is None else Path(scratch)
        self.cases: list[PoolCase] = []
        self.mutants: list[Mutant] = []
        self.mutant_set: MutantSet | None = None
        self.verdicts: dict[tuple[int, int], Verdict] = {}
        self.kill_counts: dict[int, int] = {}
        self.runs = 0
        self.run_seconds = 0.0
        self._pending_gen: list[PoolCase] = []
        self.n_workers = max(1, workers or os.cpu_count() or 1)
        self.pruned = 0
        self.replayed = 0
        self.cut_short: set[int] = set()   # mutants whose search the deadline stopped
        self.slow: set[int] = set()        # mutants with a confirmed timeout: later ones count at once
        try:
            instrumented: str | None = instrument(self.source)
        except Exception:  # noqa: BLE001 - no infection data: every run happens, nothing is wrong
            instrumented = None
        self.pool = WorkerPool(self.n_workers, WorkerConfig(str(self.reference), self.source, instrumented,
                                                            self.fields, memory, oracle))
        self._t0 = time.perf_counter()
        self.pool.on_tick = lambda: self.log(
            f"  ... {self.runs} runs ({self.pruned} skipped: not reached or not infected; {self.replayed} by "
            f"replaying the mutated function), {len(self.pool.queue)} "
            f"tasks queued, {time.perf_counter() - self._t0:.0f} s")

    # -- scenarios -------------------------------------------------------------------
    def add_scenarios(self, scenarios: Iterable[Scenario], group: str,
                      existing: dict[str, tuple[dict[str, Any], dict[str, Any]]] | None = None) -> list[int]:
        """Queue scenarios for generation; ``existing`` maps an id to (document with
        absolute input paths, truth) for scenarios already generated (a built task)."""
        out = []
        for sc in scenarios:
            pc = PoolCase(len(self.cases), sc, group)
            self.cases.append(pc)
            out.append(pc.index)
            have = (existing or {}).get(sc.id)
            payload = {"id": sc.id, "scenario": sc, "dir": str(self.scratch / f"{pc.index:05d}"),
                       "limit": float(self.oracle.timeout) * 4,
                       "document": have[0] if have else None, "truth": have[1] if have else None}
            self.pool.submit(Task("gen", payload, self._generated(pc)))
            self._pending_gen.append(pc)
        return out

    def _generated(self, pc: PoolCase) -> Callable[[Task, Any], None]:
        def done(task: Task, result: Any) -> None:
            if "died" in result:
                raise OracleRunError(f"oracle {self.oracle.name!r} on scenario {pc.scenario.id} "
                                     f"(parameters {canonjson.dumps_compact(pc.scenario.parameters)}) "
                                     f"{result['died']}", hint="the oracle must finish every in-range scenario")
            timeout = min(float(self.oracle.timeout), max(MIN_TIMEOUT, TIMEOUT_FACTOR * result["ref_seconds"]))
            pc.case = Case(pc.index, pc.scenario.id, result["document"], result["truth"], timeout, result.get("calls"))
            pc.ref_ok = result["ref_status"] == SURVIVED
            pc.ref_detail = result["ref_detail"]
            pc.ref_seconds = result["ref_seconds"]
            pc.oracle_seconds = result["oracle_seconds"]
            pc.covered = frozenset(result["covered"])
            pc.infected = None if result["infected"] is None else frozenset(result["infected"])
        return done

    def generate(self) -> None:
        self.pool.drain()
        self._pending_gen.clear()

    def generation_estimate(self, n: int) -> float:
        """Seconds that generating ``n`` more scenarios should take (from those so far)."""
        done = [pc.oracle_seconds + pc.ref_seconds for pc in self.cases if pc.case is not None]
        return n * (sum(done) / len(done)) / self.n_workers if done else 0.0

    def usable(self, indices: Iterable[int]) -> list[int]:
        """Generated scenarios on which the unmutated reference reproduces the truth."""
        return [i for i in indices if self.cases[i].case is not None and self.cases[i].ref_ok]

    def disagreements(self) -> list[PoolCase]:
        return [pc for pc in self.cases if pc.case is not None and not pc.ref_ok]

    # -- mutants -----------------------------------------------------------------------
    def make_mutants(self, *, max_per_line: int | None = DEFAULT_MAX_PER_LINE,
                     operators: Iterable[str] | None = None) -> list[Mutant]:
        _need("libcst", "making mutants")
        covered: set[int] = set()
        for pc in self.cases:
            covered |= pc.covered
        self.mutant_set = generate_mutants(self.source, filename=str(self.reference), lines=covered,
                                           operators=operators, max_per_line=max_per_line)
        self.mutants = self.mutant_set.mutants
        return self.mutants

    # -- running -----------------------------------------------------------------------
    def known_kill(self, mid: int, indices: Iterable[int]) -> Verdict | None:
        for i in indices:
            v = self.verdicts.get((mid, i))
            if v is not None and v.killed:
                return v
        return None

    def killed_by(self, mid: int, indices: Sequence[int]) -> bool | None:
        """True/False when known, None when some scenario of ``indices`` has not run."""
        if self.known_kill(mid, indices) is not None:
            return True
        return False if all((mid, i) in self.verdicts for i in indices) else None

    def kills(self, mid: int, indices: Iterable[int]) -> set[int]:
        return {i for i in indices if (v := self.verdicts.get((mid, i))) is not None and v.killed}

    def evaluate(self, requests: Iterable[tuple[Mutant, Sequence[int]]], *, stop_after: int = 1,
                 order: Callable[[list[int]], list[int]] | None = None, deadline: float | None = None) -> None:
        """Run each mutant on its scenarios (skipping pairs already known). A mutant
        stops at its ``stop_after``-th kill among them (0: runs them all). ``order`` may
        reorder the remaining scenarios when a task is dispatched (kills first). No run
        starts after ``deadline`` (a ``time.perf_counter()`` value): pairs left unrun
        stay unknown (:meth:`killed_by` gives None for them)."""
        epoch = _epoch(deadline)
        for mutant, indices in requests:
            self._submit_run(mutant, list(indices), stop_after, order, epoch=epoch)
        self.pool.drain()

    def _enough(self, mid: int, indices: Sequence[int], stop_after: int) -> bool:
        return bool(stop_after) and self._kill_count(mid, indices, stop_after) >= stop_after

    def _kill_count(self, mid: int, indices: Iterable[int], stop_after: int) -> int:
        """Kills among ``indices``, a contract kill (crash, timeout) counting as
        ``stop_after``: it would repeat on every scenario, so more runs teach nothing."""
        n = 0
        for i in indices:
            v = self.verdicts.get((mid, i))
            if v is not None and v.killed:
                n += max(stop_after, 1) if v.status == CONTRACT else 1
        return n

    def _submit_run(self, mutant: Mutant, indices: list[int], stop_after: int,
                    order: Callable[[list[int]], list[int]] | None, front: bool = False,
                    epoch: float | None = None, patient: frozenset[int] = frozenset()) -> None:
        if self._enough(mutant.id, indices, stop_after) or past(epoch):
            return
        todo = [i for i in self.usable(indices) if (mutant.id, i) not in self.verdicts]
        todo = [i for i in todo if not self._prune(mutant, i)]
        if not todo:
            return

        def prepare() -> dict[str, Any]:
            # Built when a worker takes the task, so that it sees what other tasks learnt
            # meanwhile: kills found elsewhere, and which scenarios kill most (tried first).
            rest = [i for i in todo if (mutant.id, i) not in self.verdicts]
            need = stop_after - self._kill_count(mutant.id, indices, stop_after) if stop_after else 0
            if (stop_after and need <= 0) or past(epoch):
                rest = []
            if order is not None:
                rest = order(rest)
            return {"mutant": mutant.id, "source": mutant.source, "cases": [self.cases[i].case for i in rest],
                    "stop_after": max(need, 0), "scope": mutant.scope, "deadline": epoch,
                    "patient": sorted(patient & set(rest)), "slow": mutant.id in self.slow}

        def unit(task: Task, v: Verdict) -> None:
            self._record(mutant.id, v)

        def done(task: Task, result: Any) -> None:
            if isinstance(result, dict) and "died" in result:
                at = result.get("unit")
                if isinstance(at, int):
                    again = set(patient)
                    if at in patient or mutant.id in self.slow:   # it died again, given more time: a kill
                        why = (f"twice: the second time given {CONFIRM_FACTOR:g}x as long" if at in patient
                               else "a timeout of this mutant was confirmed before")
                        self._record(mutant.id, Verdict(at, CONTRACT, f"{result['died']} ({why})", 1e9, 0.0))
                    else:               # the machine's doing, or the mutant's? run it once more
                        again.add(at)
                    rest = [i for i in todo if (mutant.id, i) not in self.verdicts]
                    if rest and not self._enough(mutant.id, indices, stop_after):
                        self._submit_run(mutant, rest, stop_after, None, front=True, epoch=epoch,
                                         patient=frozenset(again))
                else:  # pragma: no cover - died before its first unit: retry once from the start
                    self._submit_run(mutant, todo, stop_after, None, front=True, epoch=epoch, patient=patient)

        self.pool.submit(Task("run", {}, done, unit, prepare), front=front)

    def _prune(self, mutant: Mutant, index: int) -> bool:
        """Record a survival without running when the mutant cannot differ on this
        scenario: none of its reach lines ran, or its site never yielded a different
        value (see recon._mutants). Returns whether it was pruned."""
        pc = self.cases[index]
        why = ""
        if mutant.reach and not pc.covered.intersection(mutant.reach):
            why = "not reached"
        elif mutant.weak is not None and pc.infected is not None and mutant.weak not in pc.infected:
            why = "not infected"
        if not why:
            return False
        self.verdicts[(mutant.id, index)] = Verdict(index, SURVIVED, why, 0.0, 0.0)
        self.pruned += 1
        return True

    def _record(self, mid: int, v: Verdict) -> None:
        self.verdicts[(mid, v.case)] = v
        if v.status == CONTRACT and is_timeout(v.detail):
            self.slow.add(mid)   # the workers report a timeout only once it is confirmed
        if v.detail == REPLAYED:
            self.replayed += 1
            return
        self.runs += 1
        self.run_seconds += v.seconds
        if v.killed:
            self.kill_counts[v.case] = self.kill_counts.get(v.case, 0) + 1

    def by_kills(self, indices: list[int]) -> list[int]:
        """Scenarios that killed the most mutants so far first (stable otherwise)."""
        return sorted(indices, key=lambda i: -self.kill_counts.get(i, 0))

    @staticmethod
    def new_scenarios(hits: dict[int, dict[str, Any]], taken: set[str], prefix: str, start: int = 1) -> list[Scenario]:
        """The scenarios :meth:`search` found (``hits``), named ``prefix_N`` from ``start``,
        without those whose key is in ``taken`` or repeats (``taken`` grows with them)."""
        new: list[Scenario] = []
        for mid in sorted(hits):
            sc = Scenario(f"{prefix}_{start + len(new)}", hits[mid]["params"])
            if sc.key() not in taken:
                taken.add(sc.key())
                new.append(sc)
        return new

    def search(self, mutants: Sequence[Mutant], *, examples: int, seed: int = 0,
               spec: SweepSpec | None = None, deadline: float | None = None) -> dict[int, dict[str, Any]]:
        """Targeted search for a killing scenario, one hypothesis run per mutant (in
        parallel). Returns mutant id -> {"params", "status", "detail"} for those found.
        A search still running at ``deadline`` (a ``time.perf_counter()`` value) stops;
        its mutant joins ``self.cut_short``."""
        _need("hypothesis", "the targeted search", "or pass --search 0")
        axes = effective_axes(self.oracle, spec or SweepSpec())
        epoch = _epoch(deadline)
        found: dict[int, dict[str, Any]] = {}
        for m in mutants:
            timeout = max((pc.case.timeout for pc in self.cases if pc.case is not None), default=MIN_TIMEOUT)
            payload = {"mutant": m.id, "source": m.source, "examples": examples, "seed": seed * 1_000_003 + m.id,
                       "axes": axes, "timeout": timeout, "dir": str(self.scratch), "deadline": epoch}

            def done(task: Task, result: Any, m: Mutant = m) -> None:
                if "died" in result:
                    if isinstance(result.get("unit"), dict):
                        found[m.id] = {"params": result["unit"], "status": CONTRACT, "detail": result["died"]}
                    return
                if result.get("stopped"):
                    self.cut_short.add(m.id)
                if result["found"]:
                    found[m.id] = result["found"]

            self.pool.submit(Task("search", payload, done))
        self.pool.drain()
        return found

    def close(self) -> None:
        self.pool.close()
        if self._own_scratch:
            shutil.rmtree(self.scratch, ignore_errors=True)

    def __enter__(self) -> "Engine":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _need(module: str, what: str, extra: str = "") -> None:
    import importlib.util  # noqa: PLC0415

    if importlib.util.find_spec(module) is None:
        raise UsageError(f"{what} needs the Python package {module!r}, which is not installed",
                         hint=f"pip install {module}" + (f" ({extra})" if extra else ""))


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
    from .task import Task as BuiltTask, load_task  # noqa: PLC0415

    task: BuiltTask | None = None
    if isinstance(target, BuiltTask):
        task = target
    elif isinstance(target, (str, Path)) and Path(target).is_dir():
        task = load_task(target)
    if task is not None:
        from .grader import resolve_oracle  # noqa: PLC0415

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
        return Target(oracle, spec, bytes.fromhex(task.meta["task_key"]), public, hidden, n_probes,
                      str(task.root or task.tests), existing)
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
    if spec.select == "random":
        public = public_scenarios(oracle, spec)
        hidden = hidden_scenarios(oracle, spec, key, public)
    else:
        sel = select_scenarios(oracle, spec, key, workers=workers or os.cpu_count() or 1, progress=log)
        public, hidden = sel.public, sel.hidden
    from .build import DEFAULT_PROBES  # noqa: PLC0415

    return Target(oracle, spec, key, public, hidden, DEFAULT_PROBES if probes is None else int(probes), oracle.name,
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
    kind: str                     # value, contract or "" (never killed)
    first_kill: dict[str, Any] | None
    decided: bool = True          # False: alive when the budget ran out before the full pool and search

    @property
    def killed(self) -> bool:
        return self.public or self.hidden or any(self.probes) or self.pool or self.search

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
                              "hidden_probes": round(self.graded_rate, 6), "pool": self.pool, "search": self.search},
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
                     f"pool of {self.scenarios['pool']} + targeted search"),
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
                 f"{int(t.get('replayed_runs', 0))} settled by replaying the mutated function"]
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
    nonces: int = DEFAULT_NONCES,
    probes: int | None = None,
    search_examples: int = DEFAULT_SEARCH,
    max_per_line: int | None = DEFAULT_MAX_PER_LINE,
    max_mutants: int | None = None,
    operators: Iterable[str] | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    workers: int | None = None,
    memory: int = DEFAULT_MEMORY,
    budget: float | None = None,
    log: Callable[[str], None] | None = None,
) -> MutationReport:
    """Mutation analysis of a task's scenarios (see the module docstring).

    ``target``: an oracle name, an :class:`Oracle`, a built task directory or a loaded
    task. ``pool_size`` generated scenarios (``pool_seed``) decide equivalence together
    with ``search_examples`` hypothesis examples per survivor (0: no search). ``nonces``
    probe draws of ``probes`` probes each estimate hidden + probes. ``max_per_line``
    caps mutants per source line; ``max_mutants`` keeps a deterministic sample.
    ``budget``: seconds after which the pool and the search stop (the mutants still
    alive are reported undecided); None runs them to the end.
    """
    _check_settings(threshold, nonces, pool_size, search_examples)
    t_start = time.perf_counter()
    tgt = resolve_target(target, registry=registry, spec_path=spec_path, secret=secret, n_public=n_public,
                         n_hidden=n_hidden, seed=seed, select=select, probes=probes, workers=workers, log=log)
    return _analyse([tgt], t_start=t_start, pool_size=pool_size, pool_seed=pool_seed, nonces=nonces,
                    search_examples=search_examples, max_per_line=max_per_line, max_mutants=max_mutants,
                    operators=operators, threshold=threshold, workers=workers, memory=memory, log=log,
                    budget=budget)[0]


def compare_selections(
    name: str | Oracle,
    strategies: Sequence[str] = ("random", "stress"),
    *,
    registry: Registry | None = None,
    spec_path: Path | None = None,
    secret: str | None = None,
    pool_size: int = DEFAULT_POOL,
    pool_seed: int = 0,
    nonces: int = DEFAULT_NONCES,
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


def _check_settings(threshold: float, nonces: int, pool_size: int, search_examples: int) -> None:
    if not (0.0 <= threshold <= 1.0):
        raise UsageError(f"threshold {threshold!r} must be in [0, 1]")
    if nonces < 0 or nonces > 100 or pool_size < 0 or search_examples < 0:
        raise UsageError("nonces must be in [0, 100]; pool size and search examples must not be negative")


def _analyse(targets: list[Target], *, t_start: float, pool_size: int, pool_seed: int, nonces: int,
             search_examples: int, max_per_line: int | None, max_mutants: int | None,
             operators: Iterable[str] | None, threshold: float, workers: int | None, memory: int,
             log: Callable[[str], None] | None, budget: float | None = None) -> list[MutationReport]:
    """The analysis proper, for one or more scenario sets of the same oracle and spec
    sharing one pool, one set of mutants and one verdict on equivalence.

    The pool is generated in chunks (edges first) and only while some mutant survives
    everything so far; with a ``budget`` (seconds since ``t_start``) the pool and the
    search stop when it is spent, and the mutants still alive are reported *undecided*
    rather than equivalent. The task's own scenarios are always run in full.
    """
    say = log or (lambda msg: None)
    oracle, spec = targets[0].oracle, targets[0].spec
    nonce_list = [f"mutation-{k}" for k in range(nonces)]
    cpu0 = _cpu_seconds()
    deadline = t_start + budget if budget else float("inf")
    timings: dict[str, float] = {}
    warnings: list[str] = []
    with Engine(oracle, workers=workers, memory=memory, log=say) as eng:
        t0 = time.perf_counter()
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
        pool_all = pool_scenarios(oracle, spec, pool_size, seed=pool_seed, taken=taken)
        chunk = max(16, 4 * eng.n_workers)
        pool = eng.add_scenarios(pool_all[:chunk], "pool")
        say(f"generating {len(eng.cases)} scenarios of {oracle.name} on {eng.n_workers} worker(s)")
        eng.generate()
        timings["generate"] = time.perf_counter() - t0
        t1 = time.perf_counter()
        mutants = eng.make_mutants(max_per_line=max_per_line, operators=operators)
        made = len(mutants)
        if max_mutants is not None and len(mutants) > max_mutants:
            from ._mutants import subsample  # noqa: PLC0415

            mutants = eng.mutants = subsample(mutants, max_mutants)
        say(f"{len(mutants)} mutants of {eng.reference.name}"
            + (f" (a sample of {made})" if made > len(mutants) else "") + "; running them on the task's scenarios")
        eng.evaluate([(m, g[part]) for g in sets for part in ("public", "hidden") for m in mutants])
        eng.evaluate([(m, ps) for g in sets for m in mutants if not eng.killed_by(m.id, g["hidden"])
                      for ps in g["probes"]])
        task_groups = [ix for g in sets for ix in (g["public"], g["hidden"], *g["probes"])]
        rest = [m for m in mutants if not any(eng.killed_by(m.id, ix) for ix in task_groups)]
        alive = list(rest)
        say(f"{len(rest)} mutants survive the task's scenarios; running them on a pool of up to {len(pool_all)}")
        used = 0  # pool scenarios the survivors actually ran on
        while alive and time.perf_counter() < deadline:
            eng.evaluate([(m, pool) for m in alive], order=eng.by_kills, deadline=deadline)
            used = len(pool)
            alive = [m for m in alive if not eng.killed_by(m.id, pool)]
            if not alive or len(pool) >= len(pool_all) or time.perf_counter() + eng.generation_estimate(chunk) >= deadline:
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
        queue = list(alive) if full_pool else []
        if search_examples and queue:
            say(f"{len(queue)} survive the pool; searching for killing scenarios ({search_examples} examples each)")
        while search_examples and queue and time.perf_counter() < deadline:
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
        decided = {m.id for m in alive if full_pool and (m.id in searched or not search_examples)}
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
            results = [_result(eng, m, groups, g["probes"], others, m.id not in undecided_ids) for m in mutants]
            scenarios = {
                "public": [eng.cases[i].scenario.id for i in g["public"]],
                "hidden": [eng.cases[i].scenario.id for i in g["hidden"]],
                "probes": tgt.probes, "nonces": nonce_list, "pool": used, "pool_planned": len(pool_all),
                "pool_seed": pool_seed,
                "found": [{"id": eng.cases[i].scenario.id, "parameters": eng.cases[i].scenario.parameters}
                          for i in found_idx],
                "excluded": [pc.scenario.id for pc in eng.disagreements()],
            }
            settings = {"pool_size": pool_size, "pool_seed": pool_seed, "nonces": nonces, "probes": tgt.probes,
                        "search_examples": search_examples, "searched": len(searched), "workers": eng.n_workers,
                        "budget": budget, "timeout_factor": TIMEOUT_FACTOR, "min_timeout": MIN_TIMEOUT,
                        "memory": memory, "spec": tgt.spec.to_json()}
            reports.append(MutationReport(oracle.name, oracle.version, tgt.label, tgt.spec.select, results, scenarios,
                                          settings, {**timings, "selection": tgt.selection_seconds}, mset,
                                          list(warnings), threshold))
    cpu = _cpu_seconds() - cpu0  # the workers have exited: their CPU time is counted now
    for r in reports:
        r.timings["cpu_seconds"] = cpu
    return reports


def _epoch(deadline: float | None) -> float | None:
    """A ``time.perf_counter()`` deadline as wall-clock epoch seconds, which the worker
    processes can compare with ``time.time()``."""
    return None if deadline is None else time.time() + (deadline - time.perf_counter())


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
            others: Sequence[Sequence[int]] = (), decided: bool = True) -> MutantResult:
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
    return MutantResult(m, pub, hid, probes, pool, search, kind, first, decided)


def mutation_score(
    task_or_oracle: str | Path | Oracle | Any,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    pool_size: int = DEFAULT_VALIDATE_POOL,
    nonces: int = DEFAULT_NONCES,
    search_examples: int = 20,
    max_per_line: int | None = DEFAULT_MAX_PER_LINE,
    max_mutants: int | None = 100,
    budget: float | None = 240.0,
    registry: Registry | None = None,
    workers: int | None = None,
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
                             threshold=threshold, workers=workers, budget=budget, log=log)
