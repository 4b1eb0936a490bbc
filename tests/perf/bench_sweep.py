"""Sweep throughput: 1,000 scenarios of a cheap oracle on 1 and on 2 worker processes."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Callable

import pytest

from recon import Registry
from recon.sweep import SweepSpec, public_scenarios, run_scenarios

pytestmark = pytest.mark.perf

N = 1000


def test_sweep_throughput(tmp_path: Path, record: Callable[..., None]) -> None:
    reg = Registry()
    reg.load_plugin_file(Path(__file__).with_name("cheap_oracle.py"))
    o = reg.get("cheap_poly")
    t0 = time.perf_counter()
    scenarios = public_scenarios(o, SweepSpec(n_public=N, n_hidden=1))
    draw = time.perf_counter() - t0
    assert len(scenarios) == N
    rates = {}
    for workers in (1, 2):
        jobs = [(sc, tmp_path / f"w{workers}" / sc.id, True) for sc in scenarios]
        t0 = time.perf_counter()
        runs = run_scenarios(o, jobs, workers=workers)
        wall = time.perf_counter() - t0
        assert len(runs) == N
        rates[workers] = N / wall
        record(f"sweep throughput, {workers} worker(s)", rates[workers], unit="scenarios/s",
               detail=f"{wall:.2f} s for {N} scenarios (drawing them: {draw:.2f} s)")
    record("sweep speed-up, 2 workers vs 1", rates[2] / rates[1], unit="x")
