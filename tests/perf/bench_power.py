"""Power of the built-in tasks' graded sets against plausible wrong programs.

README, "6. Fair and powerful": "a program wrong on 5 % of the generator does not reach
1.0". Mutants are single edits; the programs agents write differ from the reference by a
whole idea. ``wrong_programs.py`` holds 8-10 such programs per built-in task (one idea
each: another estimator, convention, library default, a missing stage). For each task
this benchmark

1. builds the task once with its default sweep spec (stress selection, 20 hidden
   scenarios, 40 probes per grading);
2. measures each wrong program's wrong rate on a pool of 60 generated scenarios of the
   task's generator (``prepare_pool`` once, ``evaluate_program`` per program; a scenario
   is wrong when any field fails or the run gives no usable output);
3. grades each program K times (``RECON_POWER_GRADINGS``, default 5) with nonces
   ``power-0`` .. ``power-{K-1}``, so that every grading draws its own 40 probes, and
   keeps every reward.

The assertion: every program wrong on at least 5 % of the pool scores below 1.0 in every
grading. Programs wrong on less are reported, not asserted (with 60 graded scenarios a
field wrong on 2 % escapes a grading 30 % of the time; that is the claim's limit, not a
failure).

Knobs: RECON_POWER_TASKS=lidar_icp,... and RECON_POWER_PROGRAMS=name,... narrow the run;
RECON_POWER_POOL changes the pool size (default 60, the size the claim is stated for).
With RECON_PERF_JSON set, the per-program results (wrong rate, failing fields, contract
failures, rewards, rungs, timings) are also written beside it as ``<stem>.power.json``.

Cost (2 cores): every grading runs the program on the public, hidden and probe
scenarios (chem_smarts 116 runs, the others 76) and the oracle on 40 probes, so a full
run is dominated by 3 x 10 x K gradings: hours, not minutes. Measured on a 2-core machine
at load 10-19: a cold stress build of chem_smarts 14 min (before stress selection had
its 90 s budget; now a few minutes per task), one chem_smarts grading 160 s,
one run of a program ~2.3 s (chem_smarts), ~4-5 s (lidar_icp), ~8 s
(acoustic_beamforming); that extrapolates to about 2.5 h (chem_smarts), 5.5 h (lidar_icp)
and 7.5 h (acoustic_beamforming) for K = 5, some 16 h in all, perhaps a third of that on
a quiet machine. RECON_POWER_GRADINGS=1 cuts it to about a quarter. Measured on a quiet
2-core machine with K = 2 (the README's row): chem_smarts 12 min, lidar_icp 18 min,
acoustic_beamforming 28 min, their cold builds included (94, 298 and 349 s); a grading
took 22 to 24 s, 30 to 38 s and 45 to 50 s.
"""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import time
from pathlib import Path
from typing import Any, Callable

import pytest

pytestmark = pytest.mark.perf

HERE = Path(__file__).parent


def _wrong_programs() -> Any:
    spec = importlib.util.spec_from_file_location("recon_perf_wrong_programs", HERE / "wrong_programs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


WP = _wrong_programs()

TASKS = [t for t in os.environ.get("RECON_POWER_TASKS", "").split(",") if t] or list(WP.WRONG)
ONLY = {p for p in os.environ.get("RECON_POWER_PROGRAMS", "").split(",") if p}
K = int(os.environ.get("RECON_POWER_GRADINGS", "5"))
POOL_SIZE = int(os.environ.get("RECON_POWER_POOL", "60"))
THRESHOLD = 0.05   # the README's claim: wrong on 5 % of the generator -> below 1.0

RESULTS: dict[str, Any] = {}


def _write_json() -> None:
    out = os.environ.get("RECON_PERF_JSON")
    if out:
        path = Path(out)
        path.with_name(f"{path.stem}.power.json").write_text(json.dumps(
            {"load": os.getloadavg(), "gradings": K, "pool": POOL_SIZE, "threshold": THRESHOLD, "tasks": RESULTS},
            indent=2) + "\n")


@pytest.mark.parametrize("name", TASKS)
def test_power_against_wrong_programs(name: str, tmp_path: Path, record: Callable[..., None]) -> None:
    from recon import Registry
    from recon.build import build_task
    from recon.grader import grade, resolve_oracle
    from recon.mutation.pool import evaluate_program, prepare_pool
    from recon.runtimes import get_runtime
    from recon.sweep import SweepSpec, pool_scenarios
    from recon.task import load_task

    programs = [p for p in WP.names(name) if not ONLY or p in ONLY]
    if not programs:
        pytest.skip(f"RECON_POWER_PROGRAMS selects none of {name}'s wrong programs")
    sources = {p: WP.apply(name, p) for p in programs}   # a patch that no longer applies fails here, first

    reg = Registry.default(entry_points=False)
    t0 = time.perf_counter()
    built = build_task(reg, name, tmp_path / "tasks", workers=2)
    t_build = time.perf_counter() - t0
    task = load_task(built.path)
    oracle = resolve_oracle(task, reg)
    # The pool is drawn from the task's own generator (its spec as built), as `recon pool TASK_DIR` does.
    spec = SweepSpec(**{k: task.meta["spec"][k] for k in ("n_public", "n_hidden", "seed", "axes")})
    t0 = time.perf_counter()
    pool = prepare_pool(oracle, pool_scenarios(oracle, spec, POOL_SIZE, seed=0), tmp_path / "pool", workers=2)
    t_pool = time.perf_counter() - t0
    rt = get_runtime("local")
    n = len(pool.scenarios)
    record(f"power {name}: build + pool", t_build + t_pool, unit="s",
           detail=f"build {t_build:.0f} s (stress selection), oracle on {n} pool scenarios {t_pool:.0f} s")

    task_doc: dict[str, Any] = {"build_seconds": round(t_build, 1), "pool_seconds": round(t_pool, 1), "programs": []}
    RESULTS[name] = task_doc
    escaped: list[str] = []
    for prog in programs:
        ws = tmp_path / "ws" / prog
        shutil.copytree(built.path / "environment" / "app" / "workspace", ws)
        (ws / "reconstruct.py").write_text(sources[prog], encoding="utf-8")

        t0 = time.perf_counter()
        rep = evaluate_program(pool, ws, prog, rt, limits=task.limits, workers=2, app_dir=task.app_dir)
        t_eval = time.perf_counter() - t0
        wrong = rep.failed_scenarios                      # any field failed, or no usable output
        rate = len(wrong) / n if n else 0.0
        asserted = len(wrong) >= THRESHOLD * n
        fields = {f: len(st.failed) for f, st in sorted(rep.fields.items()) if st.failed}

        gradings = []
        t0 = time.perf_counter()
        for k in range(K):
            g = grade(task, ws, runtime="local", nonce=f"power-{k}")
            gradings.append({"nonce": g["nonce"], "reward": g["reward"], "rung": g["rung"]["index"],
                             "seconds": g["timings"]["total"]})
        t_grade = time.perf_counter() - t0
        rewards = [x["reward"] for x in gradings]
        best = max(rewards) if rewards else 0.0
        if asserted and best >= 1.0:
            escaped.append(f"{prog} (wrong on {len(wrong)}/{n} pool scenarios, rewards {rewards})")

        task_doc["programs"].append({
            "name": prog, "wrong_rate": round(rate, 6), "wrong_scenarios": wrong, "asserted": asserted,
            "failing_fields": fields, "contract_failures": len(rep.contract_failures),
            "rewards": rewards, "max_reward": best, "gradings": gradings,
            "seconds": {"pool_runs": round(t_eval, 1), "gradings": round(t_grade, 1)},
        })
        _write_json()
        field_text = ", ".join(f"{f} {c}" for f, c in fields.items()) or "none"
        if rep.contract_failures:
            field_text += f"; no usable output on {len(rep.contract_failures)}"
        record(f"power {name} {prog}: wrong rate", rate, unit="share",
               detail=f"{len(wrong)}/{n} pool scenarios; failing fields (scenarios): {field_text}")
        record(f"power {name} {prog}: max reward", best, goal="< 1.0" if asserted else None, unit="reward",
               detail=f"{K} gradings: {', '.join(f'{r:.3f}' for r in rewards)}"
                      + ("" if asserted else "; reported only (wrong on < 5 % of the pool)")
                      + f"; {t_eval:.0f} s on the pool, {t_grade:.0f} s grading")

    caught = sum(1 for p in task_doc["programs"] if p["asserted"] and p["max_reward"] < 1.0)
    n_asserted = sum(1 for p in task_doc["programs"] if p["asserted"])
    record(f"power {name}: asserted programs below 1.0", caught, goal=f"= {n_asserted}", unit="programs",
           detail=f"{len(programs) - n_asserted} of {len(programs)} wrong on < 5 % of the pool (reported only)")
    assert not escaped, (f"{name}: programs wrong on >= 5 % of a {n}-scenario pool reached reward 1.0 in some of "
                         f"{K} gradings: " + "; ".join(escaped))
