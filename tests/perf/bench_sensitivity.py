"""How an artifact answers small differences: the measure of knife edges.

A hidden-only failure needs a program that is wrong on few scenarios: on a few graded
cells, and on none of the public ones. Programs that reproduce a pipeline almost exactly
differ from it by small amounts in some intermediate (a noise floor estimated over another
window, a threshold a hair away). Where the artifact is continuous, such a difference moves
every output a little and fails nowhere, or fails broadly where the output is steep, which
publishes itself; where a discrete decision sits near its threshold, it flips that decision
and fails rarely. This benchmark measures both sides for a built-in:

1. **Near-exact programs.** Each is the reference with one small change of an intermediate
   (``NEAR`` below); on a pool of generated scenarios its wrong rate r per field, and for
   the riskiest field the chance that a build with 16 random public scenarios and 60
   graded ones catches it on graded cells only: (1 - r)^16 (1 - (1 - r)^60) (0.39 at
   r = 1 %, 0.51 at 2 %, 0.22 at 9 %, 0.07 at 15 %: rare failures are the unfair ones).
2. **The oracle's own steps.** On ``RECON_SENS_CELLS`` pool scenarios, the audit's knife-edge
   sampling (:func:`recon.audit.neighbours`: nine oracle runs within 1 % either side of
   every real axis) and the fields it names.

Run: ``pytest tests/perf/bench_sensitivity.py -m perf`` (RECON_SENS_POOL, default 100;
RECON_SENS_CELLS, default 20). About 10 minutes for ``acoustic_beamforming`` on 2 cores.
"""
from __future__ import annotations

import dataclasses
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Callable

import pytest
import wrong_programs as WP   # pytest puts this folder on sys.path: its patching of a reference

pytestmark = pytest.mark.perf

POOL = int(os.environ.get("RECON_SENS_POOL", "100"))
CELLS = int(os.environ.get("RECON_SENS_CELLS", "20"))

#: task -> [(name, [(old text, new text), ...])]: the reference with one small change
NEAR: dict[str, list[tuple[str, list[tuple[str, str]]]]] = {
    "acoustic_beamforming": [
        # the noise floor 0.5 % higher in amplitude (1 % in energy, 0.04 dB): what another
        # window or an off-by-one in its start moves it by
        ("noise_floor_+0.04dB", [("    noise_db = 10.0 * math.log10(noise)\n",
                                  "    noise *= 1.01\n    noise_db = 10.0 * math.log10(noise)\n")]),
        # the noise window starting where the decay line is 9.5 dB below the noise, not 10
        ("noise_guard_9.5dB", [("NOISE_GUARD_DB = 10.0", "NOISE_GUARD_DB = 9.5")]),
        # the onset 0.5 dB further below the peak
        ("onset_-20.5dB", [("ONSET_DB = -20.0", "ONSET_DB = -20.5")]),
    ],
}


def hidden_only_chance(rate: float, public: int = 16, graded: int = 60) -> float:
    return (1 - rate) ** public * (1 - (1 - rate) ** graded)


@pytest.mark.parametrize("name", sorted(NEAR))
def test_near_exact_programs_and_knife_edges(name: str, tmp_path: Path, record: Callable[..., None]) -> None:
    from recon import Registry
    from recon.audit import knife_edge, neighbours
    from recon.checks import Graded
    from recon.mutation.pool import evaluate_program, prepare_pool
    from recon.runtimes import get_runtime
    from recon.sweep import effective_axes, load_spec, pool_scenarios

    reg = Registry.default(entry_points=False)
    oracle = reg.get(name)
    spec = load_spec(oracle)
    # the same scenarios for every version of the artifact (a pool's draw follows the
    # version otherwise), so that two versions' numbers compare
    scenarios = pool_scenarios(dataclasses.replace(oracle, version="any"), spec, POOL, seed=5)
    pool = prepare_pool(oracle, scenarios, tmp_path / "pool", workers=2)
    out: dict[str, Any] = {"pool": len(pool.scenarios), "near": {}, "cells": CELLS}
    for label, edits in NEAR[name]:
        ws = tmp_path / "ws" / label
        ws.mkdir(parents=True)
        (ws / "reconstruct.py").write_text(WP.patch(name, label, edits), encoding="utf-8")
        rep = evaluate_program(pool, ws, label, get_runtime("local"), workers=2)
        assert not rep.contract_failures, f"{label}: runs without usable output: {rep.contract_failures}"
        rates = {f: st.failure_rate for f, st in rep.fields.items() if st.failure_rate > 0}
        risky = max(rates, key=lambda f: hidden_only_chance(rates[f]), default=None)
        wrong = len(rep.failed_scenarios) / rep.size
        out["near"][label] = {"wrong": wrong, "fields": rates}
        shown = ", ".join(f"{f} {r:.0%}" for f, r in sorted(rates.items(), key=lambda kv: -kv[1])) or "no field"
        risk = f"; the field most likely hidden-only in a build of 16 public and 60 graded scenarios: {risky} " \
               f"({hidden_only_chance(rates[risky]):.2f})" if risky else ""
        record(f"{name} {label}: scenarios wrong", wrong, unit="fraction", detail=shown + risk)
    axes = effective_axes(oracle, spec)
    edges: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, sc in enumerate(scenarios[:CELLS]):
            cell = Graded(sc.id, {"parameters": sc.parameters}, {}, {}, "probe")
            near = neighbours(oracle, axes, cell, Path(tmp) / str(i), workers=2)
            edges += [{"field": f, **k} for f in oracle.output_specs() if (k := knife_edge(oracle, cell, f, near))]
    by_field: dict[str, int] = {}
    for e in edges:
        by_field[e["field"]] = by_field.get(e["field"], 0) + 1
    out["edges"] = edges
    record(f"{name}: knife edges of the oracle itself", len(edges), unit="count",
           detail=f"on {CELLS} pool scenarios: " + (", ".join(f"{f} {n}" for f, n in sorted(by_field.items())) or "none"))
    if os.environ.get("RECON_PERF_JSON"):
        path = Path(os.environ["RECON_PERF_JSON"])
        path.with_name(f"{path.stem}.sensitivity.json").write_text(json.dumps(out, indent=2) + "\n")
