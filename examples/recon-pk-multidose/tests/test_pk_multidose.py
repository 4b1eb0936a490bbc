"""Tests for the `pk_multidose` oracle. The decorated function stays callable: call it
with a parameter dict and an evidence directory and check what it returns."""
from __future__ import annotations

import itertools
import json
import math
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from recon import Registry
from recon.compare import within

from recon_pk_multidose import pk_multidose, reference

# A phenytoin-like regimen: 300 mg once a day for a week.
PHENYTOIN = {"dose_mg": 300.0, "interval_h": 24, "n_doses": 7, "bioavailability": 0.9, "ka_per_h": 1.0,
             "volume_l": 45.0, "vmax_mg_per_h": 20.0, "km_mg_per_l": 4.0, "mec_mg_per_l": 5.0}
# Dosing 100 mg/h against a 5 mg/h elimination ceiling: the drug piles up.
SATURATED = {"dose_mg": 600.0, "interval_h": 6, "n_doses": 10, "bioavailability": 1.0, "ka_per_h": 3.0,
             "volume_l": 20.0, "vmax_mg_per_h": 5.0, "km_mg_per_l": 1.0, "mec_mg_per_l": 20.0}
# Fast elimination, rare doses: every trough is essentially zero.
WASHOUT = {"dose_mg": 600.0, "interval_h": 24, "n_doses": 3, "bioavailability": 1.0, "ka_per_h": 3.0,
           "volume_l": 20.0, "vmax_mg_per_h": 100.0, "km_mg_per_l": 1.0, "mec_mg_per_l": 1.0}
# Concentrations far below km: elimination is first order with k = vmax / (km * V).
LINEAR = {"dose_mg": 50.0, "interval_h": 12, "n_doses": 1, "bioavailability": 0.5, "ka_per_h": 1.5,
          "volume_l": 80.0, "vmax_mg_per_h": 10.0, "km_mg_per_l": 20.0, "mec_mg_per_l": 1.0}
SCENARIOS = [PHENYTOIN, SATURATED, WASHOUT, LINEAR]
FIELDS = {"cmax_mg_per_l", "tmax_last_h", "ctrough_mg_per_l", "auc_mg_h_per_l", "time_above_mec_h",
          "accumulation_ratio"}


def test_outputs_and_evidence(tmp_path: Path) -> None:
    out = pk_multidose(PHENYTOIN, tmp_path)
    assert set(out) == FIELDS
    rows = (tmp_path / "profile.csv").read_text().splitlines()
    assert rows[0] == "t_min,conc_mg_per_l"
    samples = [tuple(map(float, r.split(","))) for r in rows[1:]]
    end_h = PHENYTOIN["n_doses"] * PHENYTOIN["interval_h"]
    assert [t for t, _ in samples] == [15.0 * i for i in range(end_h * 4 + 1)]
    assert samples[0][1] == 0.0
    assert samples[-1][1] == pytest.approx(out["ctrough_mg_per_l"], rel=1e-3)
    # the 15-minute profile peaks just below the true maximum
    assert max(c for _, c in samples) == pytest.approx(out["cmax_mg_per_l"], rel=5e-3)
    assert max(c for _, c in samples) <= out["cmax_mg_per_l"] * (1 + 5e-4)
    # time above the MEC, counted on the profile, within a sample per crossing
    above = 0.25 * sum(1 for _, c in samples[1:] if c > PHENYTOIN["mec_mg_per_l"])
    assert abs(above - out["time_above_mec_h"]) <= 0.25 * 2 * PHENYTOIN["n_doses"]


def test_single_dose_in_the_linear_regime_matches_the_bateman_function(tmp_path: Path) -> None:
    # C << km: elimination is first order, and the single-dose curve has a closed form.
    p = LINEAR
    out = pk_multidose(p, tmp_path)
    ka, k = p["ka_per_h"], p["vmax_mg_per_h"] / (p["km_mg_per_l"] * p["volume_l"])
    c0 = p["bioavailability"] * p["dose_mg"] / p["volume_l"] * ka / (ka - k)
    tmax = math.log(ka / k) / (ka - k)
    cmax = c0 * (math.exp(-k * tmax) - math.exp(-ka * tmax))
    assert out["cmax_mg_per_l"] / p["km_mg_per_l"] < 0.02          # really linear
    assert out["cmax_mg_per_l"] == pytest.approx(cmax, rel=0.02)
    assert out["tmax_last_h"] == pytest.approx(tmax, rel=0.02)
    assert out["accumulation_ratio"] == 1.0
    t = p["interval_h"]
    assert out["ctrough_mg_per_l"] == pytest.approx(c0 * (math.exp(-k * t) - math.exp(-ka * t)), rel=0.02)


def test_saturated_elimination_accumulates_at_the_zero_order_rate(tmp_path: Path) -> None:
    # Far above km the body removes ~vmax mg/h whatever the concentration: the amount in
    # the body is what was absorbed minus vmax * time (minus a little, early on).
    p = SATURATED
    out = pk_multidose(p, tmp_path)
    tau, n, ka = p["interval_h"], p["n_doses"], p["ka_per_h"]
    in_gut = p["dose_mg"] * sum(math.exp(-ka * tau * (n - j)) for j in range(n))
    zero_order = (n * p["dose_mg"] - in_gut - p["vmax_mg_per_h"] * n * tau) / p["volume_l"]
    assert out["ctrough_mg_per_l"] == pytest.approx(zero_order, rel=0.01)
    assert out["ctrough_mg_per_l"] > 10 * p["km_mg_per_l"]
    assert out["accumulation_ratio"] > 5
    assert out["cmax_mg_per_l"] >= out["ctrough_mg_per_l"]


def test_a_washed_out_trough_is_zero_and_every_interval_alike(tmp_path: Path) -> None:
    out = pk_multidose(WASHOUT, tmp_path)
    assert 0.0 <= out["ctrough_mg_per_l"] < 1e-9
    assert out["accumulation_ratio"] == pytest.approx(1.0, abs=1e-9)
    assert 0 < out["time_above_mec_h"] < WASHOUT["n_doses"] * WASHOUT["interval_h"]


def test_outputs_respond_to_the_parameters(tmp_path: Path) -> None:
    base = pk_multidose(PHENYTOIN, tmp_path)
    more = pk_multidose({**PHENYTOIN, "dose_mg": 400.0}, tmp_path)
    assert more["cmax_mg_per_l"] > base["cmax_mg_per_l"] and more["auc_mg_h_per_l"] > base["auc_mg_h_per_l"]
    # saturable elimination: 33 % more dose gives MORE than 33 % more exposure
    assert more["auc_mg_h_per_l"] / base["auc_mg_h_per_l"] > 400.0 / 300.0
    slower = pk_multidose({**PHENYTOIN, "ka_per_h": 0.4}, tmp_path)
    assert slower["tmax_last_h"] > base["tmax_last_h"]


def _independent(p: dict[str, Any]) -> dict[str, float]:
    """The same model written differently: LSODA on a 0.005 h grid, maxima and MEC
    crossings read off the grid (what an agent might well write)."""
    tau, n, vol, mec = p["interval_h"], p["n_doses"], p["volume_l"], p["mec_mg_per_l"]

    def f(t: float, y: np.ndarray) -> list[float]:
        c = y[1] / vol
        return [-p["ka_per_h"] * y[0], p["ka_per_h"] * y[0] - p["vmax_mg_per_h"] * c / (p["km_mg_per_l"] + c)]

    y, auc, above, peaks = [0.0, 0.0], 0.0, 0.0, []
    for k in range(n):
        y = [y[0] + p["bioavailability"] * p["dose_mg"], y[1]]
        t = np.linspace(k * tau, (k + 1) * tau, tau * 200 + 1)
        sol = solve_ivp(f, (t[0], t[-1]), y, method="LSODA", rtol=1e-9, atol=1e-11, t_eval=t)
        c = sol.y[1] / vol
        i = int(np.argmax(c))
        peaks.append((float(c[i]), float(t[i] - t[0])))
        auc += float(np.sum((c[1:] + c[:-1]) / 2 * np.diff(t)))
        d0, d1, dt = c[:-1] - mec, c[1:] - mec, np.diff(t)
        both = (d0 > 0) & (d1 > 0)
        cross = (d0 > 0) != (d1 > 0)
        above += float(np.sum(dt[both]) + np.sum(dt[cross] * np.maximum(d0, d1)[cross] / np.abs(d0 - d1)[cross]))
        y = [float(sol.y[0, -1]), float(sol.y[1, -1])]
    return {"cmax_mg_per_l": max(c for c, _ in peaks), "tmax_last_h": peaks[-1][1],
            "ctrough_mg_per_l": max(y[1] / vol, 0.0), "auc_mg_h_per_l": auc, "time_above_mec_h": above,
            "accumulation_ratio": peaks[-1][0] / peaks[0][0]}


@pytest.mark.parametrize("params", SCENARIOS, ids=["phenytoin", "saturated", "washout", "linear"])
def test_tolerances_pass_an_independent_implementation_and_fail_a_wrong_model(params: dict[str, Any],
                                                                            tmp_path: Path) -> None:
    truth = pk_multidose(params, tmp_path)
    specs = pk_multidose.output_specs()
    other = _independent(params)
    assert all(within(specs[k], other[k], truth[k]) for k in truth), (other, truth)
    # A classic mistake: linear elimination with clearance vmax / km. Outside the linear
    # regime it misses the peak by far more than the tolerance.
    if params is not LINEAR:
        wrong = _independent({**params, "km_mg_per_l": 1e9, "vmax_mg_per_h": 1e9 * params["vmax_mg_per_h"] / params["km_mg_per_l"]})
        assert not within(specs["cmax_mg_per_l"], wrong["cmax_mg_per_l"], truth["cmax_mg_per_l"])


def test_axis_corners_give_valid_outputs(tmp_path: Path) -> None:
    # Sweeps include the axis edges: a sample of the 2**9 corners must all work (the
    # oracle checks the kinds of its outputs and raises otherwise).
    names = sorted(pk_multidose.axes)
    corners = list(itertools.product(*[pk_multidose.axes[n].edges() for n in names]))
    for corner in random.Random(0).sample(corners, 16):
        out = pk_multidose(dict(zip(names, corner)), tmp_path)
        assert all(math.isfinite(v) and v >= 0 for v in out.values())


def test_the_reference_program_reproduces_the_oracle(tmp_path: Path) -> None:
    # reference.py is the task's reference solution: run it the way the grader does.
    scenario = {"task": "pk_multidose", "id": "t", "parameters": PHENYTOIN, "inputs": {}}
    proc = subprocess.run([sys.executable, reference.__file__], input=json.dumps(scenario),
                          capture_output=True, text=True, check=True, cwd=tmp_path)
    assert json.loads(proc.stdout) == pk_multidose(PHENYTOIN, tmp_path)


@pytest.mark.parametrize("which", ["textbook_ode", "linear_superposition"])
def test_the_baselines_are_plausible_but_not_the_recipe(which: str, tmp_path: Path) -> None:
    # textbook_ode is the right model at the library's default accuracy, read off six-minute
    # samples: close to the truth everywhere, yet outside some tolerance on most regimens.
    # linear_superposition is the textbook closed form with the elimination linearised
    # (k = vmax / (km V)): right far below km, off wherever elimination saturates.
    baseline = {b.name: b for b in pk_multidose.baselines}[which]
    specs = pk_multidose.output_specs()
    missed = {}
    for name, params in zip(["phenytoin", "saturated", "washout", "linear"], SCENARIOS):
        scenario = {"task": "pk_multidose", "id": "t", "parameters": params, "inputs": {}}
        proc = subprocess.run([sys.executable, str(baseline.program)], input=json.dumps(scenario),
                              capture_output=True, text=True, check=True, cwd=tmp_path)
        got, truth = json.loads(proc.stdout), pk_multidose(params, tmp_path)
        if which == "textbook_ode":
            assert got["cmax_mg_per_l"] == pytest.approx(truth["cmax_mg_per_l"], rel=0.01)
        missed[name] = [k for k in truth if not within(specs[k], got[k], truth[k])]
    assert sum(1 for fields in missed.values() if fields) >= 2, missed
    if which == "linear_superposition":
        assert missed["saturated"], missed      # saturation is exactly what it leaves out


def test_registered_through_the_entry_point() -> None:
    registry = Registry()
    registry.load_entry_points()
    assert registry.get("pk_multidose") is pk_multidose
