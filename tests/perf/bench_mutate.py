"""Mutation analysis speed: `recon mutate NAME` for each built-in on 2 workers, wall
time and mutants/s (the goal: under 5 minutes each, cold: the stress selection of the
task's scenarios included).

The command runs as a user runs it (the click command, default pool of 200 scenarios,
targeted search, 5 probe nonces, default budget); the numbers come from its JSON
report. RECON_PERF_MUTATE=lidar_icp,... measures only those.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Callable

import pytest
from click.testing import CliRunner

pytestmark = pytest.mark.perf

TASKS = [t for t in os.environ.get("RECON_PERF_MUTATE", "").split(",") if t] or [
    "lidar_icp", "chem_smarts", "acoustic_beamforming"]


@pytest.mark.parametrize("name", TASKS)
def test_mutate_wall_time(name: str, record: Callable[..., None]) -> None:
    from recon.cli.mutate_cmd import mutate_cmd

    t0 = time.perf_counter()
    res = CliRunner().invoke(mutate_cmd, [name, "--workers", "2", "--json", "-q", "--secret", "recon-perf"])
    wall = time.perf_counter() - t0
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    s, t = doc["summary"], doc["timings"]
    assert s["mutants"] > 0
    detail = (f"{s['mutants']} mutants ({s['equivalent']} equivalent, {s['undecided']} undecided), "
              f"{t['cpu_seconds']:.0f} CPU s, {int(t['runs'])} runs, "
              f"{int(t['pruned_runs'])} skipped, pool {doc['scenarios']['pool']}; "
              f"scenarios {t['generate']:.0f} s, mutants {t['mutants']:.0f} s, search {t['search']:.0f} s")
    record(f"recon mutate {name} wall, 2 workers", wall, goal="<= 300", unit="s", detail=detail)
    record(f"recon mutate {name} throughput", t["mutants_per_second"], unit="mutants/s")


COMPARE = [t for t in os.environ.get("RECON_PERF_SELECT", "").split(",") if t]


@pytest.mark.skipif(not COMPARE, reason="set RECON_PERF_SELECT=lidar_icp,chem_smarts,... (minutes per task)")
@pytest.mark.parametrize("name", COMPARE or ["-"])
def test_random_versus_stress_selection(name: str, record: Callable[..., None], tmp_path: Path) -> None:
    """Side by side for one built-in: the mutation score of hidden + probes, hidden-only
    kills and build time under each strategy (one shared pool, so one set of equivalents).
    Build time under stress = the random build's time + the stress selection's time (the
    rest of a build does not depend on how the scenarios were chosen)."""
    from recon import Registry
    from recon.build import build_task
    from recon.mutation import compare_selections

    reg = Registry.default(entry_points=False)
    t0 = time.perf_counter()
    build_task(reg, name, tmp_path, secret="recon-perf", workers=2)
    build = time.perf_counter() - t0
    reports = compare_selections(name, registry=reg, secret="recon-perf", workers=2)
    for strategy, rep in reports.items():
        s = rep.summary()
        t_build = build + (rep.timings["selection"] if strategy != "random" else 0.0)
        record(f"{name} {strategy}: score hidden+probes", s["score"], unit="share",
               detail=f"{s['killed_hidden_probes']:.1f}/{s['non_equivalent']} non-equivalent "
                      f"(public {s['killed_public']}, hidden {s['killed_hidden']}; {s['mutants']} mutants, "
                      f"{s['equivalent']} equivalent)")
        record(f"{name} {strategy}: hidden-only kills", s["hidden_only"], unit="mutants")
        record(f"{name} {strategy}: build time", t_build, unit="s",
               detail=f"selection {rep.timings['selection']:.1f} s")
    assert reports["stress"].summary()["killed_hidden"] >= reports["random"].summary()["killed_hidden"]


SHARED = [t for t in os.environ.get("RECON_PERF_SHARED", "").split(",") if t] or [
    "lidar_icp", "acoustic_beamforming"]


@pytest.mark.parametrize("name", SHARED)
def test_shared_work_across_mutants(name: str, record: Callable[..., None], monkeypatch: pytest.MonkeyPatch) -> None:
    """The same 60 mutants on the same 16 scenarios until their first kill, with calls the
    edit cannot reach answered from the reference's record and without: the wall time of
    the runs, the workers' CPU seconds (generation included, the same in both), and the
    verdicts, which must agree."""
    import resource

    from recon import Registry
    from recon.mutation import Engine, callgraph
    from recon.mutation.operators import subsample
    from recon.sweep import SweepSpec, pool_scenarios

    oracle = Registry.default(entry_points=False).get(name)
    scenarios = pool_scenarios(oracle, SweepSpec(), 16, seed=7)

    def children_cpu() -> float:
        r = resource.getrusage(resource.RUSAGE_CHILDREN)
        return r.ru_utime + r.ru_stime

    wall: dict[str, float] = {}
    cpu: dict[str, float] = {}
    verdicts: dict[str, dict[tuple[str, str], bool]] = {}
    for mode in ("shared", "plain"):
        if mode == "plain":
            monkeypatch.setattr(callgraph.CallGraph, "unaffected", lambda self, scope: frozenset())
        c0 = children_cpu()
        with Engine(oracle, workers=2) as eng:
            idx = eng.add_scenarios(scenarios, "pool")
            eng.generate()
            mutants = subsample(eng.make_mutants(), 60)
            t0 = time.perf_counter()
            eng.evaluate([(m, idx) for m in mutants], stop_after=1)
            wall[mode] = time.perf_counter() - t0
            answered = eng.memoized
        cpu[mode] = children_cpu() - c0   # the workers are reaped when the engine closes
        verdicts[mode] = {(m.key, eng.cases[i].scenario.id): v.killed for m in mutants for i in idx
                          if (v := eng.verdicts.get((m.id, i))) is not None and not v.detail.startswith("timed out")}
        if mode == "shared":
            assert answered > 0
    common = verdicts["shared"].keys() & verdicts["plain"].keys()
    assert len(common) > 100 and all(verdicts["shared"][k] == verdicts["plain"][k] for k in common)
    record(f"mutant runs of {name}: wall with shared work / without", wall["shared"] / wall["plain"],
           goal="< 1", detail=f"{wall['shared']:.0f} s vs {wall['plain']:.0f} s; workers {cpu['shared']:.0f} vs "
                               f"{cpu['plain']:.0f} CPU s; 60 mutants x 16 scenarios, until the first kill")
