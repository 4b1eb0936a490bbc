"""Reference solution for the `pk_multidose` recon task (standalone: stdlib, numpy, scipy).

Reads one scenario JSON object on stdin, prints the output JSON object on stdout.

Model
-----
A one-compartment model with first-order oral absorption and saturable
(Michaelis-Menten) elimination, the textbook model of drugs such as phenytoin:

    dA_gut/dt = -ka * A_gut
    dA/dt     =  ka * A_gut - vmax * C / (km + C),     C = A / V

A_gut and A are amounts (mg) in the gut and in the body, C the plasma
concentration (mg/L).  ``n_doses`` doses of ``dose_mg`` are taken every
``interval_h`` hours from t = 0; each adds ``bioavailability * dose_mg`` to the gut.
The course is observed until one interval after the last dose,
T_end = n_doses * interval_h.  Both compartments start empty.

The ODE is integrated one dosing interval at a time with an 8th-order Runge-Kutta
method (DOP853) at tight tolerances.  Maxima and MEC crossings are located exactly
with the integrator's event detection on the dense output, not on a time grid.
"""
from __future__ import annotations

import json
import sys
from typing import Any

import numpy as np
from scipy.integrate import solve_ivp

RTOL = 1e-10
ATOL = 1e-10          # mg; concentrations are good to ~1e-11 mg/L
PROFILE_STEP_MIN = 15  # evidence sampling grid (minutes)


def simulate(params: dict[str, Any]) -> tuple[dict[str, Any], list[Any]]:
    """Outputs and the per-interval dense solutions [(t0, t1, sol), ...]."""
    tau = float(params["interval_h"])
    n = int(params["n_doses"])
    dose = float(params["bioavailability"]) * float(params["dose_mg"])
    vol, ka = float(params["volume_l"]), float(params["ka_per_h"])
    vmax, km, mec = float(params["vmax_mg_per_h"]), float(params["km_mg_per_l"]), float(params["mec_mg_per_l"])

    # State: gut amount (mg), body amount (mg) and the running AUC (mg*h/L), which is
    # integrated as a third state so that it shares the solver's accuracy.
    def rhs(t: float, z: np.ndarray) -> list[float]:
        gut, conc = z[0], z[1] / vol
        return [-ka * gut, ka * gut - vmax * conc / (km + conc), conc]

    def peak(t: float, z: np.ndarray) -> float:
        # dC/dt is zero where absorption equals elimination; a maximum when it turns negative.
        conc = z[1] / vol
        return float(ka * z[0] - vmax * conc / (km + conc))

    peak.direction = -1  # type: ignore[attr-defined]

    def cross(t: float, z: np.ndarray) -> float:
        return float(z[1] / vol - mec)

    gut = body = auc = above = 0.0
    interval_max: list[tuple[float, float]] = []  # (highest C in the interval, its time after the dose)
    pieces: list[Any] = []
    for k in range(n):
        t0, t1 = k * tau, (k + 1) * tau
        gut += dose
        sol = solve_ivp(rhs, (t0, t1), [gut, body, 0.0], method="DOP853", rtol=RTOL, atol=ATOL,
                        dense_output=True, events=[peak, cross])
        if sol.status != 0:  # pragma: no cover - DOP853 on this smooth ODE does not fail
            raise RuntimeError(f"integration failed on interval {k}: {sol.message}")
        # Candidates for the interval's maximum: its two ends and every interior maximum.
        cands = [(body / vol, t0), (float(sol.y[1, -1]) / vol, t1)]
        cands += [(float(z[1]) / vol, float(t)) for t, z in zip(sol.t_events[0], sol.y_events[0])]
        best = max(cands, key=lambda c: (c[0], -c[1]))  # the earliest of equal maxima
        interval_max.append((best[0], best[1] - t0))
        # Time above the MEC: split the interval at the crossings, test each piece's midpoint.
        cuts = [t0, *[float(t) for t in sol.t_events[1]], t1]
        for a, b in zip(cuts, cuts[1:]):
            if b > a and float(sol.sol(0.5 * (a + b))[1]) / vol > mec:
                above += b - a
        gut, body = float(sol.y[0, -1]), float(sol.y[1, -1])
        auc += float(sol.y[2, -1])
        pieces.append((t0, t1, sol))

    out = {
        "cmax_mg_per_l": max(c for c, _ in interval_max),
        "tmax_last_h": interval_max[-1][1],
        # A fully eliminated trough may come out as -1e-14 from round-off: it is 0.
        "ctrough_mg_per_l": max(body / vol, 0.0),
        "auc_mg_h_per_l": auc,
        "time_above_mec_h": above,
        "accumulation_ratio": interval_max[-1][0] / interval_max[0][0],
    }
    return {k: float(v) for k, v in out.items()}, pieces


def profile(params: dict[str, Any], pieces: list[Any]) -> list[tuple[int, float]]:
    """(minutes, concentration) every PROFILE_STEP_MIN minutes over [0, T_end]."""
    vol = float(params["volume_l"])
    rows: list[tuple[int, float]] = []
    for k, (t0, t1, sol) in enumerate(pieces):
        last = k == len(pieces) - 1
        # minutes in [t0, t1) of this interval; the last interval also gets T_end
        lo, hi = round(t0 * 60), round(t1 * 60) + (1 if last else 0)
        minutes = np.arange(lo, hi, PROFILE_STEP_MIN)
        conc = np.maximum(sol.sol(minutes / 60.0)[1] / vol, 0.0)
        rows += [(int(m), float(c)) for m, c in zip(minutes, conc)]
    return rows


def solve(scenario: dict[str, Any]) -> dict[str, Any]:
    out, _ = simulate(scenario["parameters"])
    return out


def main() -> None:
    scenario = json.load(sys.stdin)
    print(json.dumps(solve(scenario)))


if __name__ == "__main__":
    main()
