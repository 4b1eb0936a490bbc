"""The mutation engine: mutants of a reference run on scenarios, in long-lived workers.

An :class:`Engine` holds one oracle's reference, the scenarios added to it (inputs and
truth generated once each, the reference run on each and its coverage recorded), the
mutants made from the lines those runs executed (:mod:`recon.mutation.operators`), and
every verdict: a mutant is *killed* by a scenario when some output field fails the
task's own comparison (:func:`recon.compare.check`) or when it breaks the contract (a
crash, a timeout, a wrong-kind output: counted apart). A timeout or a worker death
counts only when it repeats in a second run given three times as long: a busy machine
must not make an equivalent mutant look killed. Runs that cannot change anything are
skipped (a mutant on lines a scenario never executes, an operator swap whose site never
yields a different value there, a function that returns what it returned in the
reference's run). Workers (:mod:`recon.mutation.worker`) import the toolkit once.

Stress selection (:mod:`recon.mutation.selection`) and the mutation score
(:mod:`recon.mutation.analysis`) are built on it.
"""
from __future__ import annotations

import collections
import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from .. import canonjson
from ..errors import OracleRunError, UsageError
from ..oracle import Oracle
from ..sweep import Scenario, SweepSpec, effective_axes
from .operators import Mutant, MutantSet, generate_mutants, instrument
from .callgraph import CallGraph
from .store import VerdictStore
from .worker import (CONFIRM_FACTOR, CONTRACT, REPLAYED, SURVIVED, Case, Task, Verdict, WorkerConfig, WorkerPool,
                     is_own_timeout, is_timeout)

__all__ = ["Engine", "PoolCase", "DEFAULT_POOL", "DEFAULT_VALIDATE_POOL", "DEFAULT_NONCES", "DEFAULT_SEARCH",
           "DEFAULT_THRESHOLD", "DEFAULT_MAX_PER_LINE", "DEFAULT_MAX_MUTANTS", "DEFAULT_BUDGET", "PROBE_SCENARIOS",
           "auto_nonces", "SKIPPED", "NOT_REACHED", "NOT_INFECTED"]

DEFAULT_POOL = 200            # generated scenarios a survivor must survive to be called equivalent (its
                              # task's keyed draws counted: the pool's axis edges, then as many as are missing)
DEFAULT_VALIDATE_POOL = 60    # the validate hook's pool: minutes, not tens of minutes
DEFAULT_NONCES = 5            # at most this many probe draws the "hidden + probes" score is averaged over ...
PROBE_SCENARIOS = 80          # ... and at least two, as many as keep their probes within this many scenarios
DEFAULT_SEARCH = 40           # hypothesis examples per survivor of the pool
DEFAULT_THRESHOLD = 0.9
DEFAULT_MAX_PER_LINE = 6      # mutants per source line (round-robin over the operators)
DEFAULT_MAX_MUTANTS = 120     # `recon mutate` samples this many (the score is an estimate: its error is shown)
DEFAULT_BUDGET = 280.0        # `recon mutate`: seconds after which no pool or search run starts (under 5 min in all)
DEFAULT_MEMORY = 4 << 30      # address space of a worker
TIMEOUT_FACTOR = 10.0         # a mutant may take this many times the reference's time ...
MIN_TIMEOUT = 2.0             # ... but at least this many seconds, and at most the oracle's timeout
NOT_REACHED = "not reached"   # a survival recorded without a run: the mutated lines never ran there
NOT_INFECTED = "not infected"  # ... or the mutated expression never took another value there
SKIPPED = frozenset({NOT_REACHED, NOT_INFECTED, REPLAYED})   # (REPLAYED: its function returned the same)


def auto_nonces(probes: int) -> int:
    """Probe draws for a task with ``probes`` probes per grading: the survivors of the
    hidden set run on every draw, so many probes per draw need fewer draws (40 probes:
    2 draws, 80 scenarios) and a few probes more (3 probes: 5 draws, 15 scenarios)."""
    if probes <= 0:
        return 1
    return max(2, min(DEFAULT_NONCES, -(-PROBE_SCENARIOS // probes)))


# --------------------------------------------------------------------------- the engine
#: the budget clock (:meth:`Engine.clock`) runs at the workers' share of the CPU, but never
#: slower than the wall clock divided by this: a loaded machine may stretch a budget this far
STRETCH = 4.0
PACE_WINDOW = 10.0    # seconds of the wall clock over which the budget clock's pace is measured


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
    ref_deviation: float = 0.0   # the unmutated reference's own deviation from the truth
    oracle_seconds: float = 0.0
    covered: frozenset[int] = frozenset()
    infected: frozenset[str] | None = None   # weak-mutation keys that differ here (None: unknown)
    traced: bool = True          # False: generated without line tracing (no run on it is ever skipped)
    # (document key, truth) an earlier build of the same code made of it (ShippedRuns.draw)
    known: tuple[str, dict[str, Any]] | None = None
    pending: dict[str, Any] | None = None   # its generation, deferred until a run needs it (Engine.ensure)
    # deferred, its trace (covered, infected) taken from that build: runs on it are pruned
    # as on a generated scenario, and its lines are mutated
    shipped_trace: bool = False


class Engine:
    """Workers, generated scenarios, mutants and the (sparse) kill matrix.

    ``add_scenarios`` queues scenarios (generated in the workers, truth from the oracle,
    plus a traced run of the unmutated reference); ``generate`` runs the queue;
    ``make_mutants`` mutates the lines the scenarios ran; ``evaluate`` runs mutants on
    lists of scenarios (until the first kill, or all of them) and fills ``verdicts``.
    Everything already known is reused: a (mutant, scenario) pair runs at most once, and
    with a ``store`` (:class:`recon.mutation.store.VerdictStore`) at most once across
    analyses of the same reference: its verdicts are taken instead of runs (``reused``),
    and the runs made here are added to it when the engine closes.
    """

    def __init__(self, oracle: Oracle, *, workers: int | None = None, memory: int = DEFAULT_MEMORY,
                 scratch: Path | None = None, log: Callable[[str], None] | None = None,
                 store: VerdictStore | None = None) -> None:
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
        self.memoized = 0                  # runs in which recorded calls answered for unreached functions
        self.store = store
        self.reused = 0                    # verdicts taken from the store instead of a run
        self._keys: dict[int, str] = {}    # mutant id -> its edit's key (what the store knows it by)
        self.callgraph = CallGraph(self.source)
        self.cut_short: set[int] = set()   # mutants whose search the deadline stopped
        self.generated_late = 0            # deferred scenarios a run came to need
        self.slow: set[int] = set()        # mutants with a confirmed timeout: later ones count at once
        try:
            instrumented: str | None = instrument(self.source)
        except Exception:  # noqa: BLE001 - no infection data: every run happens, nothing is wrong
            instrumented = None
        self.pool = WorkerPool(self.n_workers, WorkerConfig(str(self.reference), self.source, instrumented,
                                                            self.fields, memory, oracle))
        self._t0 = time.perf_counter()
        self._cpu0 = self.pool.cpu_seconds()
        self._pace: collections.deque[tuple[float, float]] = collections.deque()   # (wall, clock) readings
        self.pool.on_tick = lambda: self.log(
            f"  ... {self.runs} runs ({self.pruned} skipped: not reached or not infected; {self.replayed} by "
            f"replaying the mutated function; {self.memoized} sped up by recorded calls"
            + (f"; {self.reused} verdicts kept from earlier analyses" if self.reused else "")
            + f"), {len(self.pool.queue)} "
            f"tasks queued, {time.perf_counter() - self._t0:.0f} s")

    # -- the budget clock ---------------------------------------------------------------
    def clock(self) -> float:
        """Seconds on the engine's budget clock, which every ``deadline`` here is read
        on: the CPU seconds its workers have used, per worker, since it started (from
        ``time.perf_counter()``'s reading then). On a quiet machine busy workers keep it
        at the wall clock's pace; on a loaded one it slows, so that a budget buys the
        same runs, but never below 1/STRETCH of the wall clock's pace (idle workers, a
        run waiting on the disk). Without ``/proc`` it is the wall clock."""
        wall = time.perf_counter() - self._t0
        cpu = self.pool.cpu_seconds() if self._cpu0 is not None else None
        if cpu is None or self._cpu0 is None:
            now = self._t0 + wall
        else:
            now = self._t0 + max((cpu - self._cpu0) / self.n_workers, wall / STRETCH)
        now = max(now, self._pace[-1][1]) if self._pace else now
        self._pace.append((wall, now))
        while len(self._pace) > 2 and wall - self._pace[1][0] >= PACE_WINDOW:
            self._pace.popleft()
        return now

    def past(self, deadline: float | None) -> bool:
        """Whether the budget clock has reached ``deadline`` (None: never)."""
        return deadline is not None and self.clock() >= deadline

    def wall_epoch(self, deadline: float | None) -> float | None:
        """A budget-clock deadline as the wall-clock epoch seconds at which the clock
        should reach it at its recent pace (the workers compare it with ``time.time()``
        before each run)."""
        if deadline is None:
            return None
        now = self.clock()
        (w0, c0), (w1, c1) = self._pace[0], self._pace[-1]
        pace = (c1 - c0) / (w1 - w0) if w1 - w0 >= 1.0 else 1.0
        return time.time() + (deadline - now) / min(1.0, max(pace, 1.0 / STRETCH))

    # -- scenarios -------------------------------------------------------------------
    def add_scenarios(self, scenarios: Iterable[Scenario], group: str,
                      existing: dict[str, tuple[dict[str, Any], dict[str, Any]]] | None = None,
                      traced: bool = True,
                      known: Callable[[Scenario], tuple[str, dict[str, Any]] | None] | None = None,
                      defer: bool = False,
                      traces: Callable[[Scenario], tuple[frozenset[int], frozenset[str] | None] | None] | None = None,
                      ) -> list[int]:
        """Queue scenarios for generation; ``existing`` maps an id to (document with
        absolute input paths, truth) for scenarios already generated (a built task).
        ``traced=False`` checks the reference there without tracing its lines (several
        times faster): for scenarios other programs run on and mutants seldom do; a
        mutant's run on one is never skipped as unreached. ``known``: what an earlier
        build of the same code made of a scenario (its document's key and its truth), or
        None; a scenario it knows is generated only when a run on it must be made
        (:meth:`ensure`): a mutant's without a kept verdict, a program's without a kept run.
        ``defer``: every scenario so, known or not (for candidates nothing may run on).
        ``traces``: what that build's traced run of the reference covered there (its lines
        and the weak-mutation keys that differed, :meth:`recon.grader.ShippedRuns.trace`);
        a traced scenario (one whose lines the mutants are made from) is deferred only when
        its trace is known too, and is then pruned on and mutated as if generated."""
        out = []
        for sc in scenarios:
            pc = PoolCase(len(self.cases), sc, group, traced=traced)
            self.cases.append(pc)
            out.append(pc.index)
            have = (existing or {}).get(sc.id)
            payload = {"id": sc.id, "scenario": sc, "dir": str(self.scratch / f"{pc.index:05d}"),
                       "limit": float(self.oracle.timeout) * 4, "traced": traced,
                       "document": have[0] if have else None, "truth": have[1] if have else None}
            pc.known = known(sc) if known is not None and have is None else None
            if pc.known is not None and traces is not None:
                trace = traces(sc)
                if trace is None:
                    pc.known = None   # its lines are wanted now: generate it
                else:
                    pc.covered, pc.infected = trace
                    pc.shipped_trace = True
            if pc.known is not None or (defer and have is None):
                pc.pending = payload
                continue
            self.pool.submit(Task("gen", payload, self._generated(pc)))
            self._pending_gen.append(pc)
        return out

    def ensure(self, indices: Iterable[int]) -> None:
        """Generate the scenarios of ``indices`` whose generation was deferred (``known``, ``defer``)."""
        todo = [self.cases[i] for i in dict.fromkeys(indices) if self.cases[i].pending is not None]
        for pc in todo:
            payload, pc.pending = pc.pending or {}, None
            self.pool.submit(Task("gen", payload, self._generated(pc)))
            self._pending_gen.append(pc)
        if todo:
            self.generate()
            self.generated_late += len(todo)

    @property
    def deferred(self) -> int:
        """Scenarios whose generation is still deferred: nothing has had to run on them."""
        return sum(pc.pending is not None for pc in self.cases)

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
            pc.ref_deviation = result["ref_deviation"]
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
        self._keys = {m.id: m.key for m in self.mutants}
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
        starts after ``deadline`` (a :meth:`clock` value): pairs left unrun stay
        unknown (:meth:`killed_by` gives None for them)."""
        listed = [(mutant, list(indices)) for mutant, indices in requests]
        self.ensure(self._to_generate(listed, stop_after, deadline))
        for mutant, indices in listed:
            self._submit_run(mutant, indices, stop_after, order, deadline=deadline)
        self.pool.drain()

    def _to_generate(self, requests: Sequence[tuple[Mutant, list[int]]], stop_after: int,
                     deadline: float | None) -> list[int]:
        """The deferred scenarios the runs of ``requests`` may reach. A mutant's verdicts kept
        on them are taken first, in the order its runs take them (index order), as far as
        they decide it: an earlier analysis that ran it until its ``stop_after``-th kill kept
        the verdicts that get it there. A pair a shipped trace decides is pruned here, as on a
        generated scenario (:meth:`_prune`)."""
        if self.past(deadline) or not any(pc.pending is not None for pc in self.cases):
            return []
        need: list[int] = []
        for mutant, indices in requests:
            kills = self._kill_count(mutant.id, indices, stop_after)
            for i in indices:
                if stop_after and kills >= stop_after:
                    break
                if (mutant.id, i) in self.verdicts:
                    continue
                if self._reuse(mutant, i):
                    kills += self._weight(self.verdicts[(mutant.id, i)], stop_after)
                elif self.cases[i].pending is not None and not self._prune(mutant, i):
                    need.append(i)
        return need

    def _enough(self, mid: int, indices: Sequence[int], stop_after: int) -> bool:
        return bool(stop_after) and self._kill_count(mid, indices, stop_after) >= stop_after

    def _kill_count(self, mid: int, indices: Iterable[int], stop_after: int) -> int:
        """Kills among ``indices``, a contract kill (crash, timeout) counting as
        ``stop_after``: it would repeat on every scenario, so more runs teach nothing."""
        return sum(self._weight(v, stop_after) for i in indices if (v := self.verdicts.get((mid, i))) is not None)

    @staticmethod
    def _weight(v: Verdict, stop_after: int) -> int:
        """What a verdict counts towards ``stop_after`` kills (a contract kill: all of them)."""
        if not v.killed:
            return 0
        return max(stop_after, 1) if v.status == CONTRACT else 1

    def _submit_run(self, mutant: Mutant, indices: list[int], stop_after: int,
                    order: Callable[[list[int]], list[int]] | None, front: bool = False,
                    deadline: float | None = None, patient: frozenset[int] = frozenset()) -> None:
        if self._enough(mutant.id, indices, stop_after) or self.past(deadline):
            return
        todo = [i for i in self.usable(indices) if (mutant.id, i) not in self.verdicts]
        todo = [i for i in todo if not self._prune(mutant, i) and not self._reuse(mutant, i)]
        if not todo or self._enough(mutant.id, indices, stop_after):
            return

        def prepare() -> dict[str, Any]:
            # Built when a worker takes the task, so that it sees what other tasks learnt
            # meanwhile: kills found elsewhere, and which scenarios kill most (tried first).
            rest = [i for i in todo if (mutant.id, i) not in self.verdicts]
            need = stop_after - self._kill_count(mutant.id, indices, stop_after) if stop_after else 0
            if (stop_after and need <= 0) or self.past(deadline):
                rest = []
            if order is not None:
                rest = order(rest)
            return {"mutant": mutant.id, "source": mutant.source, "cases": [self.cases[i].case for i in rest],
                    "stop_after": max(need, 0), "scope": mutant.scope, "deadline": self.wall_epoch(deadline),
                    "patient": sorted(patient & set(rest)), "slow": mutant.id in self.slow,
                    "memo": sorted(self.callgraph.unaffected(mutant.scope))}

        def unit(task: Task, v: Verdict) -> None:
            self._record(mutant.id, v)

        def done(task: Task, result: Any) -> None:
            if isinstance(result, dict) and "died" in result:
                at = result.get("unit")
                if isinstance(at, int):
                    again = set(patient)
                    if is_own_timeout(str(result["died"])):   # stuck on the CPU all along: its own doing
                        self._record(mutant.id, Verdict(at, CONTRACT, str(result["died"]), 1e9, 0.0))
                    elif at in patient or mutant.id in self.slow:   # it died again, given more time: a kill
                        why = (f"twice: the second time given {CONFIRM_FACTOR:g}x as long" if at in patient
                               else "a timeout of this mutant was confirmed before")
                        self._record(mutant.id, Verdict(at, CONTRACT, f"{result['died']} ({why})", 1e9, 0.0),
                                     keep=False)
                    else:               # the machine's doing, or the mutant's? run it once more
                        again.add(at)
                    rest = [i for i in todo if (mutant.id, i) not in self.verdicts]
                    if rest and not self._enough(mutant.id, indices, stop_after):
                        self._submit_run(mutant, rest, stop_after, None, front=True, deadline=deadline,
                                         patient=frozenset(again))
                else:  # pragma: no cover - died before its first unit: retry once from the start
                    self._submit_run(mutant, todo, stop_after, None, front=True, deadline=deadline, patient=patient)

        self.pool.submit(Task("run", {}, done, unit, prepare), front=front)

    def _prune(self, mutant: Mutant, index: int) -> bool:
        """Record a survival without running when the mutant cannot differ on this
        scenario: none of its reach lines ran, or its site never yielded a different
        value (see recon.mutation.operators). Returns whether it was pruned."""
        why = self._unchanged(mutant, index)
        if not why:
            return False
        self.verdicts[(mutant.id, index)] = Verdict(index, SURVIVED, why, 0.0, 0.0)
        self.pruned += 1
        return True

    def _unchanged(self, mutant: Mutant, index: int) -> str:
        """Why the mutant cannot differ on this scenario by its trace ("" when it may)."""
        pc = self.cases[index]
        if not pc.traced or (pc.case is None and not pc.shipped_trace):
            return ""
        if mutant.reach and not pc.covered.intersection(mutant.reach):
            return NOT_REACHED
        if mutant.weak is not None and pc.infected is not None and mutant.weak not in pc.infected:
            return NOT_INFECTED
        return ""

    def survives_known(self, mutant: Mutant, indices: Sequence[int]) -> bool:
        """Whether the mutant is known to survive every scenario of ``indices`` without a
        run: by a verdict of this engine's, the store's (peeked at, not taken: nothing is
        recorded) or the scenario's trace. False as soon as one is unknown or a kill."""
        for i in indices:
            v = self.verdicts.get((mutant.id, i))
            if v is None and self.store is not None:
                got = self.store.peek(mutant.key, self.cases[i].scenario)
                v = Verdict(i, *got, 0.0) if got is not None else None
            if v is None and not self._unchanged(mutant, i):
                return False
            if v is not None and v.killed:
                return False
        return True

    def _reuse(self, mutant: Mutant, index: int) -> bool:
        """Take the store's verdict of the mutant on this scenario instead of running it.
        Returns whether there was one."""
        if self.store is None:
            return False
        got = self.store.get(mutant.key, self.cases[index].scenario)
        if got is None:
            return False
        v = Verdict(index, *got, 0.0)
        self.verdicts[(mutant.id, index)] = v
        self.reused += 1
        if v.killed:
            self.kill_counts[index] = self.kill_counts.get(index, 0) + 1
        return True

    def _record(self, mid: int, v: Verdict, *, keep: bool = True) -> None:
        self.verdicts[(mid, v.case)] = v
        timeout = v.status == CONTRACT and is_timeout(v.detail)
        if timeout:
            self.slow.add(mid)   # the workers report a timeout only once it is confirmed
        # a timeout is kept when the run spent its limit on the CPU: the mutant's own
        # slowness, which repeats; one the machine's load may have caused is not
        if keep and (not timeout or is_own_timeout(v.detail)) and self.store is not None and mid in self._keys:
            self.store.put(self._keys[mid], self.cases[v.case].scenario, v.status, v.detail, v.deviation)
        if v.detail == REPLAYED:
            self.replayed += 1
            return
        self.runs += 1
        self.run_seconds += v.seconds
        self.memoized += v.memoized > 0
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
        A search still running at ``deadline`` (a :meth:`clock` value) stops; its
        mutant joins ``self.cut_short``."""
        _need("hypothesis", "the targeted search", "or pass --search 0")
        axes = effective_axes(self.oracle, spec or SweepSpec())
        epoch = self.wall_epoch(deadline)
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
        if self.store is not None:
            self.store.save()
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


