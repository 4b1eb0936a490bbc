"""Programs other than the reference on a built task: baselines, and the fairness audit.

A baseline (see :mod:`recon.baselines`) is what a capable agent might write from the
behaviour-only instruction alone. :func:`grade_baselines` grades every baseline of a
built task with the task's own grader, exactly as a submission, and returns one row each
(name, R, rung): a task whose baseline reaches R = 1.0 does not need its evidence.

:func:`audit_programs` is the fairness audit (``recon audit``): which graded cells an
independent program fails while it passes that field on every published scenario, and
which generated scenarios would have shown that behaviour publicly.
"""
from __future__ import annotations

import dataclasses
import math
import os
import statistics
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from . import canonjson, compare
from .baselines import IGNORED
from .axes import Axis, Float
from .checks import Graded, Outcome
from .errors import TaskError
from .grader import RunMemo, draw_probes, grade, graded_from, resolve_oracle, run_outcomes
from .mutation.pool import PreparedPool, evaluate_program, prepare_pool, prepare_workspace
from .mutation.selection import reveal_variants
from .oracle import Oracle
from .registry import Registry
from .runtimes import Runtime, SessionPool, get_runtime
from .runtimes.snapshot import snapshot_workspace
from .sweep import Scenario, SweepSpec, effective_axes, pool_scenarios, run_scenarios
from .task import Task, load_task

__all__ = ["BaselineRow", "grade_baselines", "baseline_workspace", "audit_programs", "audit_baselines", "AuditReport",
           "ProgramAudit", "FieldAudit"]


#: the probe draws of the fairness audit; a baseline's grading uses the first, so that
#: ``recon stats``, ``recon validate`` and the audit see the same probes
DEFAULT_NONCES = ("audit-1", "audit-2", "audit-3")


@dataclass(frozen=True)
class BaselineRow:
    """How one baseline scored on a built task."""

    name: str
    reward: float
    rung: int              # highest rung passed
    rung_name: str
    detail: str            # the first failing check, or why it could not be graded

    @property
    def passed(self) -> bool:
        """A baseline passes the task's check when it stays below 1.0."""
        return self.reward < 1.0

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "reward": self.reward, "rung": self.rung, "rung_name": self.rung_name,
                "detail": self.detail, "passed": self.passed}


def grade_baselines(task: Task | Path | str, oracle: Oracle | None = None, *, runtime: str | Runtime = "auto",
                    registry: Registry | None = None, nonce: str | None = DEFAULT_NONCES[0],
                    report: Callable[[BaselineRow], None] | None = None,
                    probe_cache: Path | None = None, warm: bool = True,
                    memo: RunMemo | None = None) -> list[BaselineRow]:
    """Grade every baseline of ``oracle`` (default: the oracle ``task`` was built from)
    on the built ``task``, each in a fresh copy of the agent's ``app/``, with the task's
    grader on ``runtime``. Returns one row per baseline, in name order; none when the
    oracle ships no baseline.

    ``nonce`` fixes the probes drawn, so the rows are reproducible (None: fresh probes);
    they are drawn once for all baselines (in ``probe_cache``, or a folder of their own).
    ``warm``: run them in warm sessions (the author's programs: their imports paid once
    per worker, a run that fails warm run again cold); ``memo``: their runs shared with
    a fairness audit of the same baselines (:class:`recon.grader.RunMemo`).
    """
    t = task if isinstance(task, Task) else load_task(task)
    if t.app_dir is None:
        raise TaskError(f"{t.tests}: grading baselines needs the whole task (environment/app), not only tests/",
                        hint="give the folder `recon build` wrote (e.g. tasks/lidar_icp)")
    o = oracle if oracle is not None else resolve_oracle(t, registry)
    found = o.baselines
    if not found:
        return []
    if registry is None:
        # Grade with the oracle resolved once: probes need it, and resolving again per
        # baseline would load plugins again.
        registry = Registry()
        registry.register(o, f"resolved for {t.meta['task']}")
    rt = runtime if isinstance(runtime, Runtime) else get_runtime(runtime)
    rows: list[BaselineRow] = []
    with tempfile.TemporaryDirectory(prefix="recon-baselines-") as tmpd:
        for b in found:
            ws = baseline_workspace(t, b.path, Path(tmpd) / b.name / "workspace")
            g = grade(t, ws, runtime=rt, registry=registry, nonce=nonce,
                      workspace_label=f"baseline {b.name}", warm=warm, memo=memo,
                      probe_cache=(probe_cache or Path(tmpd) / "probes") if nonce is not None else None)
            failing = [c for r in g["rungs"] for c in r["checks"] if not c["passed"]][:1]
            detail = "every check passes" if not failing else f"{failing[0]['id']}: {failing[0]['reason']}"
            row = BaselineRow(b.name, float(g["reward"]), int(g["rung"]["index"]), str(g["rung"]["name"]),
                              detail)
            rows.append(row)
            if report:
                report(row)
    return rows



def baseline_workspace(task: Task, program: Path, dest: Path) -> Path:
    """A baseline as a submission: the agent's starter workspace with the baseline's
    folder copied over it (its files beside the starter README). Its gradings and its
    audit run this same content."""
    if task.app_dir is None:
        raise TaskError(f"{task.tests}: a baseline's workspace needs the whole task (environment/app)",
                        hint="give the folder `recon build` wrote (e.g. tasks/lidar_icp)")
    shutil.copytree(task.app_dir / "workspace", dest, symlinks=True)
    shutil.copytree(program, dest, dirs_exist_ok=True, ignore=shutil.ignore_patterns(*IGNORED))
    return dest


# --------------------------------------------------------------------------- the fairness audit
#
# A task is fair when every behaviour its graded set catches is one some published
# scenario shows: a program that fails a field on a hidden scenario or a probe also fails
# it on a public scenario, so the agent could have seen it. The audit runs independent
# programs (trial workspaces, a colleague's implementation, the baselines) on the public,
# hidden and probe scenarios of a built task, and reports, per program and field, the
# graded cells it fails while it passes that field on every public scenario: hidden-only
# failures. For each, it runs the program on a pool of generated scenarios and lists
# those that would have shown the behaviour publicly. A program runs on the graded set
# first and on the public scenarios only as far as its graded failures need: until each
# field it fails there has failed publicly too. One that fails every field publicly has
# no failure left that could be hidden-only: the rest of its graded set is not run.

DEFAULT_POOL = 40
SHOWN = 5   # revealing pool scenarios listed per behaviour
#: A knife edge: along a real axis, within KNIFE_SPAN of its range either side of a
#: hidden-only failure, the oracle's own value of the field takes one step (between
#: KNIFE_POINTS evenly spaced samples) beyond the field's tolerance and KNIFE_RATIO times
#: its typical step. There, any difference in an intermediate quantity flips a discrete
#: decision, and no published scenario makes the failure fair.
KNIFE_SPAN = 0.01
KNIFE_POINTS = 9
KNIFE_RATIO = 5.0


@dataclass
class FieldAudit:
    """One program's verdicts on one output field."""

    field: str
    public_failed: list[str]            # public scenario ids where the field fails (of those run)
    graded_failed: list[str]            # hidden and probe cells where it fails
    graded_checked: int
    revealing: list[dict[str, Any]] = dataclasses.field(default_factory=list)   # pool scenarios showing it
    pool_failure_rate: float | None = None
    explained: list[str] = dataclasses.field(default_factory=list)   # of graded_failed: an upstream field fails there too
    knife_edge: dict[str, Any] | None = None   # the oracle's own step near a hidden-only failure (knife_edge())
    shown_by: list[str] = dataclasses.field(default_factory=list)   # fields of its same_rule group failing publicly

    @property
    def hidden_only(self) -> bool:
        """Failing on graded cells while passing on every public scenario, no field its
        rule also computes failing publicly either, at least once without an upstream
        failure the public scenarios show beside it."""
        return (not self.public_failed and not self.shown_by
                and any(c not in self.explained for c in self.graded_failed))

    def to_json(self) -> dict[str, Any]:
        return {"field": self.field, "public_failed": self.public_failed, "graded_failed": self.graded_failed,
                "graded_checked": self.graded_checked, "hidden_only": self.hidden_only,
                "explained_by_upstream": self.explained, "shown_by_same_rule": self.shown_by,
                "knife_edge": self.knife_edge,
                "revealing": self.revealing, "pool_failure_rate": self.pool_failure_rate}


@dataclass
class ProgramAudit:
    """What the audit found for one program."""

    label: str
    fields: dict[str, FieldAudit]
    contract: dict[str, str]            # scenario id -> why the run gave no usable output
    runs: int
    public_run: int = 0                 # public scenarios run: as many as the verdicts needed ...
    public_total: int = 0               # ... of these (see _audit_runs)
    graded_run: int = 0                 # graded scenarios run: all of them unless every field fails publicly ...
    graded_total: int = 0               # ... of these

    @property
    def hidden_only(self) -> list[FieldAudit]:
        return [f for f in self.fields.values() if f.hidden_only]

    def to_json(self) -> dict[str, Any]:
        return {"program": self.label, "runs": self.runs, "public_run": self.public_run,
                "public_total": self.public_total, "graded_run": self.graded_run, "graded_total": self.graded_total,
                "contract_failures": self.contract,
                "hidden_only": [f.field for f in self.hidden_only],
                "fields": [self.fields[n].to_json() for n in sorted(self.fields)]}


@dataclass
class AuditReport:
    task: str
    nonces: list[str]
    graded: int                          # hidden scenarios plus probes
    programs: list[ProgramAudit]
    pool_size: int

    @property
    def hidden_only(self) -> int:
        return sum(len(p.hidden_only) for p in self.programs)

    @property
    def fair(self) -> bool:
        return self.hidden_only == 0

    def to_json(self) -> dict[str, Any]:
        return {"task": self.task, "nonces": self.nonces, "graded_scenarios": self.graded, "pool": self.pool_size,
                "fair": self.fair, "hidden_only": self.hidden_only, "programs": [p.to_json() for p in self.programs]}

    def render(self) -> str:
        lines = [f"fairness audit of {self.task}: {len(self.programs)} program(s) on the public scenarios, "
                 f"{self.graded} graded scenarios (hidden + probes of nonces {', '.join(self.nonces)})"]
        for p in self.programs:
            bad = p.hidden_only
            failing = sorted(n for n, f in p.fields.items() if f.graded_failed)
            head = f"  {p.label}: fails {len(failing)} field(s) on the graded set"
            if p.graded_run < p.graded_total:
                head = (f"  {p.label}: fails every field publicly, so none can fail on hidden scenarios only "
                        f"(stopped after {p.graded_run} of {p.graded_total} graded scenarios, failing "
                        f"{len(failing)} field(s) there)")
            consequences = any(f.explained and not f.public_failed for f in p.fields.values())
            siblings = any(f.shown_by and f.graded_failed for f in p.fields.values())
            head += (f"; {len(bad)} hidden-only" if bad else "; every one also fails publicly"
                     + (" or only beside a published failure of a field it is computed from" if consequences else "")
                     + (" or where its rule fails publicly on another input" if siblings else ""))
            if p.contract:
                head += f"; no usable output on {len(p.contract)} scenario(s)"
            lines.append(head)
            for f in bad:
                own = [c for c in f.graded_failed if c not in f.explained]
                cells = ", ".join(own[:4]) + (f" (+{len(own) - 4})" if len(own) > 4 else "")
                beside = f" (and {len(f.explained)} beside a published upstream failure)" if f.explained else ""
                lines.append(f"    {f.field}: fails {cells}{beside}; passes it on every public scenario")
                if f.revealing:
                    rate = f" ({100 * f.pool_failure_rate:.0f} % of the pool)" if f.pool_failure_rate is not None else ""
                    lines.append(f"      shown by {len(f.revealing)} pool scenario(s){rate}, e.g. "
                                 + canonjson.dumps_compact(f.revealing[0]["parameters"])[:160])
                else:
                    lines.append(f"      no scenario of a {self.pool_size}-scenario pool shows it")
                if f.knife_edge:
                    k = f.knife_edge
                    size = "an exact field's change" if k["step"] is None else f"{k['step']:.1f} x its tolerance"
                    lines.append(f"      a knife edge near {k['cell']}: the oracle's own value steps {size} between "
                                 f"{k['axis']} = {k['between'][0]:g} and {k['between'][1]:g} (a typical step there: "
                                 f"{k['typical']:.2f} x); no published scenario makes that fair: make the output "
                                 "continuous there, or its tolerance wider")
            for n, f in sorted(p.fields.items()):
                if f.shown_by and f.graded_failed:
                    lines.append(f"    {n}: fails {len(f.graded_failed)} graded cell(s) and no public one; the same rule "
                                 f"fails publicly as {', '.join(f.shown_by)} (one rule, computed for each input)")
                elif f.explained and not f.public_failed and not f.hidden_only:
                    lines.append(f"    {n}: fails {len(f.explained)} graded cell(s), each where a field it is computed "
                                 "from fails too, as it does publicly (a consequence, not a hidden behaviour)")
        lines.append(f"verdict: {'fair' if self.fair else f'{self.hidden_only} hidden-only behaviour(s)'}")
        return "\n".join(lines)


def audit_programs(task: Task | Path | str, programs: Sequence[tuple[str, Path]], *, runtime: str | Runtime = "auto",
                   registry: Registry | None = None, nonces: Sequence[str] = DEFAULT_NONCES,
                   pool_size: int = DEFAULT_POOL, pool_seed: int = 0, workers: int | None = None,
                   log: Callable[[str], None] | None = None, memo: RunMemo | None = None,
                   probe_cache: Path | None = None) -> AuditReport:
    """Audit ``programs`` ((label, workspace folder or reconstruct.py) pairs) on a built
    task: their hidden-only failures, and the pool scenarios that would show each.
    ``memo`` and ``probe_cache``: runs and probe draws shared with gradings of the same
    programs (an author's own, in one validate)."""
    say = log or (lambda msg: None)
    t = task if isinstance(task, Task) else load_task(task)
    oracle = resolve_oracle(t, registry)
    rt = runtime if isinstance(runtime, Runtime) else get_runtime(runtime)
    workers = workers or os.cpu_count() or 1
    fields = t.outputs
    n_probes = int(t.meta.get("probes", 3))
    report_programs: list[ProgramAudit] = []
    with tempfile.TemporaryDirectory(prefix="recon-audit-") as tmp:
        root = Path(tmp)
        public, hidden = graded_from(t)
        graded = list(hidden)
        for nonce in nonces:
            graded += [dataclasses.replace(g, id=f"{g.id}@{nonce}")
                       for g in draw_probes(t, oracle, nonce, n_probes, root / "probes" / nonce, cache=probe_cache)]
        say(f"audit: {len(public)} public and {len(graded)} graded scenarios of {t.meta['task']}")
        pool: PreparedPool | None = None
        spec = SweepSpec(**{k: t.meta["spec"][k] for k in ("n_public", "n_hidden", "seed", "axes")})
        by_id = {g.id: g for g in graded}
        # the oracle near a failing cell, sampled once whatever fields and programs fail there
        near: dict[str, Neighbours | None] = {}
        for i, (label, program) in enumerate(programs):
            ws, _ = prepare_workspace(Path(program), root / f"program-{i}")
            snap = snapshot_workspace(ws, root / f"snap-{i}")
            # warm sessions: the program's start and imports once per worker, not per run
            # (what differs from a grading is speed only: a failure is confirmed cold)
            with SessionPool(rt, snap.path, t.limits, app_dir=t.app_dir) as sessions:
                def run(items: list[Graded], pool: SessionPool = sessions, path: Path = snap.path) -> list[Outcome]:
                    return run_outcomes(rt, path, items, t.limits, t.app_dir, fields, workers,
                                        sessions=pool, memo=memo)

                graded_out, public_out = _audit_runs(run, public, graded, fields, workers)
            audit = _program_audit(label, public_out, graded_out, fields, oracle, len(public), len(graded))
            if audit.hidden_only:
                if pool is None:
                    say(f"audit: generating a {pool_size}-scenario pool")
                    pool = prepare_pool(oracle, pool_scenarios(oracle, spec, pool_size, seed=pool_seed), root / "pool",
                                        workers=workers)
                rep = evaluate_program(pool, snap.path, label, rt, seed=pool_seed, limits=t.limits, workers=workers,
                                       app_dir=t.app_dir)
                params = {sc.id: sc.parameters for sc in pool.scenarios}
                for f in audit.hidden_only:
                    st = rep.fields[f.field]
                    f.pool_failure_rate = st.failure_rate
                    f.revealing = [{"id": sid, "parameters": params[sid]} for sid in st.failed[:SHOWN]]
                    cell = next(c for c in f.graded_failed if c not in f.explained)
                    if cell not in near:
                        near[cell] = neighbours(oracle, effective_axes(oracle, spec), by_id[cell],
                                                root / "edges" / str(len(near)), workers=workers)
                    f.knife_edge = knife_edge(oracle, by_id[cell], f.field, near[cell])
            say(f"audit: {label}: {len(audit.hidden_only)} hidden-only field(s)")
            report_programs.append(audit)
    return AuditReport(str(t.meta["task"]), list(nonces), len(graded), report_programs, pool_size)


#: the oracle's outputs along each real axis near a graded cell: axis -> [(value, outputs)]
Neighbours = dict[str, list[tuple[float, dict[str, Any]]]]


def neighbours(oracle: Oracle, axes: dict[str, Axis], cell: Graded, root: Path, *,
               workers: int = 1) -> Neighbours | None:
    """The oracle on KNIFE_POINTS scenarios per real axis within KNIFE_SPAN of its range
    either side of the graded ``cell``, the other parameters kept (None when the oracle
    fails on one of them: a refused neighbour is no verdict on an edge)."""
    params = dict(cell.document.get("parameters") or {})
    lines: dict[str, list[tuple[float, Scenario]]] = {}
    for name, ax in axes.items():
        if not isinstance(ax, Float) or not isinstance(params.get(name), (int, float)):
            continue
        x0, width = float(params[name]), KNIFE_SPAN * (float(ax.hi) - float(ax.lo))
        xs = sorted({min(float(ax.hi), max(float(ax.lo), x0 + width * (2 * k / (KNIFE_POINTS - 1) - 1)))
                     for k in range(KNIFE_POINTS)})
        lines[name] = [(x, Scenario(f"edge_{name}_{k}", {**params, name: x})) for k, x in enumerate(xs)]
    jobs = [(sc, root / sc.id, False) for pts in lines.values() for _, sc in pts]
    try:
        out = {r.scenario.id: r.output for r in run_scenarios(oracle, jobs, workers=workers)} if jobs else {}
    except Exception:
        return None
    return {name: [(x, out[sc.id]) for x, sc in pts] for name, pts in lines.items()}


def knife_edge(oracle: Oracle, cell: Graded, field: str, near: Neighbours | None) -> dict[str, Any] | None:
    """The largest step of the oracle's own value of ``field`` along a real axis near the
    graded ``cell`` (sampled by :func:`neighbours`) that makes it a knife edge (see
    :data:`KNIFE_SPAN`), or None."""
    spec = oracle.output_specs()[field]
    best: dict[str, Any] | None = None
    for name, pts in (near or {}).items():
        values = [out[field] for _, out in pts]
        steps = [_step(spec, a, b) for a, b in zip(values, values[1:])]
        if not steps:
            continue
        typical = statistics.median(steps)
        k = max(range(len(steps)), key=steps.__getitem__)
        if steps[k] > 1.0 and steps[k] > KNIFE_RATIO * typical and (best is None or steps[k] > (best["step"] or math.inf)):
            best = {"cell": cell.id, "axis": name, "between": [pts[k][0], pts[k + 1][0]],
                    "step": None if math.isinf(steps[k]) else round(steps[k], 3), "typical": round(typical, 3)}
    return best


def _step(spec: dict[str, Any], a: Any, b: Any) -> float:
    """How far apart two of the oracle's values are, in units of the field's tolerance
    (infinite for a change in a field compared exactly)."""
    m = compare.margin(spec, a, b)
    if m is None:
        return 0.0 if a == b else math.inf
    return m


def _failing(outcome: Outcome, fields: dict[str, dict[str, Any]]) -> set[str]:
    """The fields one run fails (all of them without usable output)."""
    if not outcome.ok:
        return set(fields)
    return {n for n, spec in fields.items() if not compare.within(spec, outcome.output[n], outcome.graded.truth[n])}


def _audit_runs(run: Callable[[list[Graded]], list[Outcome]], public: list[Graded], graded: list[Graded],
                fields: dict[str, dict[str, Any]], workers: int) -> tuple[list[Outcome], list[Outcome]]:
    """The program's outcomes on the graded set and on the public scenarios, as far as
    the verdicts need them. Public scenarios run in order until every field the program
    fails on a graded cell has failed on one of them too: a field that fails on no graded
    cell cannot be hidden-only, and one already seen failing publicly is shown, however
    often it fails elsewhere. So a program that passes the whole graded set runs on no
    public scenario, and one whose graded failures all show early stops early; only a
    field that is really hidden-only (or shown late) needs every public scenario. The
    graded set runs a first chunk, then the rest, unless by then every field has failed
    publicly: nothing could be hidden-only (a baseline that gets everything wrong costs a
    few runs). The same verdicts as running them all, not the same counts."""
    step = max(4 * workers, 8)
    wanted: set[str] = set()
    shown: set[str] = set()
    graded_out: list[Outcome] = []
    public_out: list[Outcome] = []
    for part in (graded[:step], graded[step:]):
        if not part or shown >= set(fields):
            break
        for oc in run(part):
            graded_out.append(oc)
            wanted |= _failing(oc, fields)
        while wanted - shown and len(public_out) < len(public):
            for oc in run(public[len(public_out):len(public_out) + step]):
                public_out.append(oc)
                shown |= _failing(oc, fields)
    return graded_out, public_out


def _program_audit(label: str, public: list[Outcome], graded: list[Outcome], fields: dict[str, dict[str, Any]],
                   oracle: Oracle, n_public: int, n_graded: int) -> ProgramAudit:
    per = {n: FieldAudit(n, [], [], 0) for n in fields}
    contract: dict[str, str] = {}
    failing: dict[str, set[str]] = {}   # graded scenario id -> the fields failing there (usable output)
    outcomes = [*public, *graded]
    for k, oc in enumerate(outcomes):
        is_public = k < len(public)
        if not oc.ok:
            contract[oc.graded.id] = "; ".join(oc.problems)[:200]
            for n in fields:   # no usable output fails every field where it happens
                (per[n].public_failed if is_public else per[n].graded_failed).append(oc.graded.id)
                per[n].graded_checked += 0 if is_public else 1
            continue
        for n, spec in fields.items():
            ok = compare.within(spec, oc.output[n], oc.graded.truth[n])
            if is_public:
                if not ok:
                    per[n].public_failed.append(oc.graded.id)
            else:
                per[n].graded_checked += 1
                if not ok:
                    per[n].graded_failed.append(oc.graded.id)
                    failing.setdefault(oc.graded.id, set()).add(n)
    shown = {n for n, f in per.items() if f.public_failed}
    for n, f in per.items():
        # one rule computed for several inputs: a published failure of one of its fields shows it
        if not f.public_failed:
            f.shown_by = sorted(oracle.same_rule.get(n, frozenset()) & shown)
    if oracle.upstream:
        # a failure beside a published upstream failure is its consequence, not a hidden
        # behaviour (a run without usable output is one of its own: never explained)
        for n, f in per.items():
            f.explained = [c for c in f.graded_failed if c in failing and oracle.explained(n, failing[c], shown)]
    return ProgramAudit(label, per, contract, len(outcomes), len(public), n_public, len(graded), n_graded)


def audit_baselines(task: Task, oracle: Oracle, *, runtime: Runtime, registry: Registry | None = None,
                    nonces: Sequence[str] = DEFAULT_NONCES, pool_size: int = DEFAULT_POOL,
                    log: Callable[[str], None] | None = None, memo: RunMemo | None = None,
                    probe_cache: Path | None = None) -> AuditReport:
    """The fairness audit over the oracle's baselines (each in the workspace its gradings
    use: :func:`baseline_workspace`), its ``independent/`` programs and, on a task whose
    scenarios stress selection chose, the reference's variants that selection revealed
    (:func:`recon.mutation.selection.reveal_variants`); ``memo`` and ``probe_cache`` as for
    :func:`audit_programs`."""
    with tempfile.TemporaryDirectory(prefix="recon-audit-baselines-") as tmp:
        programs = [(f"baseline {b.name}", baseline_workspace(task, b.path, Path(tmp) / b.name))
                    for b in oracle.baselines]
        programs += [(f"independent {b.name}", b.path) for b in oracle.independent]
        if task.meta.get("spec", {}).get("select") == "stress":
            programs += reveal_variants(oracle, Path(tmp) / "variants")
        if not programs:   # nothing to audit: no probes drawn
            return AuditReport(str(task.meta["task"]), list(nonces), 0, [], pool_size)
        return audit_programs(task, programs, runtime=runtime, registry=registry, nonces=nonces,
                              pool_size=pool_size, log=log, memo=memo, probe_cache=probe_cache)
