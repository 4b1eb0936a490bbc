"""Sweep throughput: 1,000 scenarios of a cheap oracle on 1 and on 2 worker processes.

The oracle (cheap_oracle.py) costs microseconds, so this measures the sweep machinery
itself: drawing the scenarios, the worker pool, and writing each scenario's folder
(scenario.json, oracle_output.json, the evidence directory).
"""
from __future__ import annotations

import os
import shutil
import statistics
import time
from pathlib import Path
from typing import Callable

import pytest

from recon import Registry
from recon.sweep import SweepSpec, public_scenarios, run_scenarios

pytestmark = pytest.mark.perf

N = 1000
REPS = int(os.environ.get("RECON_PERF_REPS", "3"))


def test_sweep_throughput(tmp_path: Path, record: Callable[..., None]) -> None:
    reg = Registry()
    reg.load_plugin_file(Path(__file__).with_name("cheap_oracle.py"))
    o = reg.get("cheap_poly")
    t0 = time.perf_counter()
    scenarios = public_scenarios(o, SweepSpec(n_public=N, n_hidden=1))
    draw = time.perf_counter() - t0
    assert len(scenarios) == N
    walls: dict[int, list[float]] = {1: [], 2: []}
    for rep in range(REPS):  # alternate, so that the machine's load hits both alike
        for workers in (1, 2):
            out = tmp_path / f"w{workers}-{rep}"
            jobs = [(sc, out / sc.id, True) for sc in scenarios]
            t0 = time.perf_counter()
            runs = run_scenarios(o, jobs, workers=workers)
            walls[workers].append(time.perf_counter() - t0)
            assert len(runs) == N
            shutil.rmtree(out)
    rates = {w: N / statistics.median(v) for w, v in walls.items()}
    for w in (1, 2):
        record(f"sweep throughput, {w} worker(s)", rates[w], unit="scenarios/s",
               detail=f"median of {REPS}: {statistics.median(walls[w]):.2f} s for {N} scenarios "
                      f"(drawing them: {draw:.2f} s)")
    record("sweep speed-up, 2 workers vs 1", rates[2] / rates[1], unit="x")
