"""Any program on a pool of generated scenarios (``recon pool``), and the deviation measure.

A task author needs to know that an independent correct implementation passes and a
wrong one fails, on many more scenarios than a task publishes or hides. This module
draws a pool (:func:`recon.sweep.pool_scenarios`), runs the oracle once per scenario for
the truth and the input files, runs the program on each scenario through a sandbox
runtime exactly as the grader does, and reports per output field the failure rate and
the worst deviation in units of the field's tolerance.
"""
from __future__ import annotations

import math
import os
import shutil
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .. import canonjson, compare
from ..errors import UsageError
from ..oracle import Oracle
from ..runtimes.base import Limits, Runtime, SessionPool
from ..sweep import Scenario, SweepSpec, pool_scenarios, run_scenarios

__all__ = ["PreparedPool", "prepare_pool", "evaluate_program", "deviation", "FieldStats", "PoolReport",
           "run_program_on_pool", "prepare_workspace", "DEVIATION_CAP"]

# Deviations are finite so that they can be sorted, averaged and handed to
# hypothesis.target(); anything that fails a kind/exact comparison reads as this.
DEVIATION_CAP = 1e9


def _unit_number(spec: dict[str, Any], got: float, want: float) -> float:
    return max(float(spec.get("abs", 0.0)), float(spec.get("rel", 0.0)) * max(abs(got), abs(want)))


def deviation(spec: dict[str, Any], got: Any, want: Any) -> float:
    """How far ``got`` is from ``want`` in units of the field's tolerance.

    Scaled so that a value fails :func:`recon.compare.check` exactly when its deviation
    exceeds 1 (integers with tolerance t use the unit t + 0.5, so that a difference of
    t + 1 reads 1 + 1/(2t + 1)). Kinds without a numeric tolerance (exact, text, set)
    read 0 when they pass and :data:`DEVIATION_CAP` when they do not.
    """
    if compare.kind_error(spec, got) is not None:
        return DEVIATION_CAP
    kind = spec["kind"]
    d: float
    if kind == "number":
        g, w = float(got), float(want)
        if not (math.isfinite(g) and math.isfinite(w)):
            return DEVIATION_CAP
        unit = _unit_number(spec, g, w)
        diff = abs(g - w)
        d = (diff / unit) if unit > 0 else (0.0 if diff == 0 else DEVIATION_CAP)
    elif kind == "integer":
        d = abs(int(got) - int(want)) / (int(spec.get("tol", 0)) + 0.5)
    elif kind == "angle":
        g, w = float(got), float(want)
        if not (math.isfinite(g) and math.isfinite(w)):
            return DEVIATION_CAP
        period = float(spec.get("period", 360.0))
        r = abs(g - w) % period
        tol = float(spec["tol"])
        circ = min(r, period - r)
        d = circ / tol if tol > 0 else (0.0 if circ == 0 else DEVIATION_CAP)
    elif kind == "sequence":
        if len(got) != len(want):
            return DEVIATION_CAP
        d = max((deviation(spec["item"], g, w) for g, w in zip(got, want)), default=0.0)
    else:
        return 0.0 if compare.check(spec, got, want)[0] else DEVIATION_CAP
    # Rounding in the division must never contradict the check itself.
    if compare.check(spec, got, want)[0]:
        return min(d, 1.0)
    return min(max(d, math.nextafter(1.0, math.inf)), DEVIATION_CAP)


@dataclass
class FieldStats:
    """One output field over the pool."""

    name: str
    tolerance: str
    checked: int = 0                 # scenarios where the program gave a usable output
    failed: list[str] = field(default_factory=list)   # scenario ids where the field fails
    worst: float = 0.0               # largest deviation, in units of the tolerance
    worst_id: str | None = None

    @property
    def failure_rate(self) -> float:
        return len(self.failed) / self.checked if self.checked else 0.0

    def to_json(self) -> dict[str, Any]:
        return {"field": self.name, "tolerance": self.tolerance, "checked": self.checked,
                "failures": len(self.failed), "failure_rate": round(self.failure_rate, 6),
                "worst_deviation": round(self.worst, 6), "worst_scenario": self.worst_id,
                "failed_scenarios": list(self.failed)}


@dataclass
class PoolReport:
    """What ``recon pool`` found."""

    oracle: str
    program: str
    size: int
    seed: int
    runtime: str
    fields: dict[str, FieldStats]
    contract_failures: dict[str, str]     # scenario id -> why the run gave no usable output
    seconds: dict[str, float]

    @property
    def failed_scenarios(self) -> list[str]:
        bad = set(self.contract_failures)
        for f in self.fields.values():
            bad.update(f.failed)
        return sorted(bad, key=_id_order)

    @property
    def ok(self) -> bool:
        return not self.failed_scenarios

    def to_json(self) -> dict[str, Any]:
        return {
            "oracle": self.oracle, "program": self.program, "size": self.size, "seed": self.seed,
            "runtime": self.runtime, "ok": self.ok,
            "failed_scenarios": self.failed_scenarios,
            "failure_rate": round(len(self.failed_scenarios) / self.size, 6) if self.size else 0.0,
            "contract_failures": dict(sorted(self.contract_failures.items(), key=lambda kv: _id_order(kv[0]))),
            "fields": [self.fields[n].to_json() for n in sorted(self.fields)],
            "seconds": {k: round(v, 3) for k, v in self.seconds.items()},
        }

    def render(self) -> str:
        lines = [f"{'field':<20} {'tolerance':<34} {'fail':>9} {'rate':>7} {'worst dev':>10}  failing scenarios"]
        for name in sorted(self.fields):
            f = self.fields[name]
            ids = ", ".join(f.failed[:6]) + (f" (+{len(f.failed) - 6})" if len(f.failed) > 6 else "")
            worst = "-" if f.checked == 0 else (">1e9" if f.worst >= DEVIATION_CAP else f"{f.worst:.3g}")
            lines.append(f"{name:<20} {f.tolerance[:34]:<34} {len(f.failed):>4}/{f.checked:<4} "
                         f"{100 * f.failure_rate:>6.1f}% {worst:>10}  {ids}")
        if self.contract_failures:
            lines.append(f"no usable output on {len(self.contract_failures)}/{self.size} scenarios:")
            for sid, why in list(sorted(self.contract_failures.items(), key=lambda kv: _id_order(kv[0])))[:5]:
                lines.append(f"  {sid}: {why[:110]}")
        bad = self.failed_scenarios
        lines.append(f"{self.program} on {self.size} scenarios of {self.oracle} (pool seed {self.seed}, runtime "
                     f"{self.runtime}): {self.size - len(bad)}/{self.size} pass every field"
                     f" ({100 * len(bad) / self.size if self.size else 0.0:.1f}% fail); deviations are in units "
                     "of the field's tolerance (above 1 fails)")
        return "\n".join(lines)


def _id_order(sid: str) -> tuple[str, int]:
    head, _, tail = sid.rpartition("_")
    return (head, int(tail)) if tail.isdigit() else (sid, 0)


def prepare_workspace(program: Path, scratch: Path) -> tuple[Path, str]:
    """The workspace the runtime copies for each run, and a label for reports.

    A folder is used as it is (it must hold reconstruct.py); a file named
    reconstruct.py runs from its own folder (its helper modules beside it); any other
    file is copied alone into a fresh workspace as reconstruct.py.
    """
    program = Path(program)
    if program.is_dir():
        if not (program / "reconstruct.py").is_file():
            raise UsageError(f"{program} holds no reconstruct.py", hint="give the program file or its workspace folder")
        return program.absolute(), str(program)
    if not program.is_file():
        raise UsageError(f"program {program} does not exist", hint="give a path to a reconstruct.py-style program")
    if program.name == "reconstruct.py":
        return program.parent.absolute(), str(program)
    ws = scratch / "workspace"
    ws.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(program, ws / "reconstruct.py")
    return ws, str(program)


@dataclass
class PreparedPool:
    """Scenarios whose inputs and truths the oracle has generated once, so that many
    programs can be measured on them: ``root/scenarios/ID/`` for each scenario."""

    oracle: Oracle
    scenarios: list[Scenario]
    root: Path
    truths: dict[str, dict[str, Any]]
    seconds: float

    def document(self, sid: str) -> tuple[dict[str, Any], dict[str, Path]]:
        d = self.root / "scenarios" / sid
        doc = canonjson.read(d / "scenario.json")
        return doc, {k: d / v for k, v in doc.get("inputs", {}).items()}


def prepare_pool(oracle: Oracle, scenarios: list[Scenario], root: Path, *, workers: int | None = None) -> PreparedPool:
    """Generate every scenario's inputs and truth into ``root`` (the oracle in parallel
    processes)."""
    t0 = time.perf_counter()
    runs = run_scenarios(oracle, [(sc, root / "scenarios" / sc.id, False) for sc in scenarios],
                         workers=workers or os.cpu_count() or 1)
    return PreparedPool(oracle, list(scenarios), root, {r.scenario.id: r.output for r in runs},
                        time.perf_counter() - t0)


def evaluate_program(pool: PreparedPool, workspace: Path, label: str, runtime: Runtime, *, seed: int = 0,
                     limits: Limits | None = None, workers: int | None = None, app_dir: Path | None = None,
                     progress: Callable[[int], None] | None = None) -> PoolReport:
    """Run the (untrusted) program in ``workspace`` on every scenario of ``pool`` through
    ``runtime``, in the grader's sandbox and limits, and compare each field with the
    truth. The runs share warm sessions (the program's start and imports once per worker:
    :meth:`recon.runtimes.Runtime.session`); a failure is confirmed by a cold run."""
    oracle = pool.oracle
    workers = workers or os.cpu_count() or 1
    limits = limits or Limits(wall=oracle.timeout, cpu=int(max(oracle.timeout * 2, 10)))
    fields = oracle.output_specs()
    stats = {n: FieldStats(n, compare.describe(s)) for n, s in fields.items()}
    contract: dict[str, str] = {}

    def one(sc: Scenario) -> tuple[Scenario, Any, str | None]:
        doc, inputs = pool.document(sc.id)
        res = sessions.run(doc, inputs)
        if progress:
            progress(1)
        why = res.failure()
        if why is not None:
            return sc, None, why
        value, why = compare.parse_stdout(res.stdout)
        if why is not None:
            return sc, None, why
        errs = compare.contract_errors(fields, value)
        return (sc, None, "; ".join(errs)) if errs else (sc, value, None)

    t1 = time.perf_counter()
    with SessionPool(runtime, workspace, limits, app_dir=app_dir) as sessions, \
            ThreadPoolExecutor(max_workers=max(1, workers)) as ex:
        results = list(ex.map(one, pool.scenarios))
    t_program = time.perf_counter() - t1
    for sc, value, why in results:
        if why is not None:
            contract[sc.id] = why
            continue
        for name, spec_ in fields.items():
            st = stats[name]
            st.checked += 1
            want = pool.truths[sc.id][name]
            ok, _ = compare.check(spec_, value[name], want)
            d = deviation(spec_, value[name], want)
            if not ok:
                st.failed.append(sc.id)
            if d > st.worst or st.worst_id is None:
                st.worst, st.worst_id = d, sc.id
    return PoolReport(oracle.name, label, len(pool.scenarios), seed, runtime.name, stats, contract,
                      {"oracle": pool.seconds, "program": t_program, "total": pool.seconds + t_program})


def run_program_on_pool(
    oracle: Oracle,
    spec: SweepSpec,
    program: Path,
    runtime: Runtime,
    *,
    size: int = 50,
    seed: int = 0,
    limits: Limits | None = None,
    workers: int | None = None,
    scenarios: list[Scenario] | None = None,
    app_dir: Path | None = None,
    progress: Callable[[int], None] | None = None,
) -> PoolReport:
    """Run ``program`` (untrusted) on ``size`` pool scenarios and compare with the oracle.

    The oracle runs once per scenario (truth and input files, in parallel processes);
    the program runs through ``runtime`` with the task's limits, from a private copy of
    its workspace, with the scenario JSON on stdin, exactly as the grader runs it.
    ``scenarios`` replaces the drawn pool (its ids must be distinct).
    """
    scenarios = scenarios if scenarios is not None else pool_scenarios(oracle, spec, size, seed=seed)
    with tempfile.TemporaryDirectory(prefix="recon-pool-") as tmp:
        root = Path(tmp)
        ws, label = prepare_workspace(program, root)
        prepared = prepare_pool(oracle, scenarios, root, workers=workers)
        return evaluate_program(prepared, ws, label, runtime, seed=seed, limits=limits, workers=workers,
                                app_dir=app_dir, progress=progress)
