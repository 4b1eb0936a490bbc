"""Baseline `textbook_ode`: what a capable agent writes from the instruction alone.

The instruction names a saturable elimination and gives vmax and km, so the textbook
model follows: one compartment, first-order absorption from the gut, Michaelis-Menten
elimination. It is integrated with SciPy's `solve_ivp` at its default settings (RK45,
rtol 1e-3), sampled every 0.1 h (six-minute draws, as a sampling schedule would have it),
and the summary is read off the samples. The model is right; the library's default
accuracy and a sampled peak are not enough for the task's tolerances, so this must stay
below R = 1.0.
"""
import json
import sys

import numpy as np
from scipy.integrate import solve_ivp

p = json.load(sys.stdin)["parameters"]
tau, n = float(p["interval_h"]), int(p["n_doses"])
vol, ka = p["volume_l"], p["ka_per_h"]
vmax, km, mec = p["vmax_mg_per_h"], p["km_mg_per_l"], p["mec_mg_per_l"]


def rhs(t, y):
    gut, body = y
    c = body / vol
    return [-ka * gut, ka * gut - vmax * c / (km + c)]


steps = int(round(tau / 0.1))
gut = body = 0.0
times, conc = [], []
for k in range(n):
    gut += p["bioavailability"] * p["dose_mg"]
    t = np.linspace(k * tau, (k + 1) * tau, steps + 1)
    sol = solve_ivp(rhs, (t[0], t[-1]), [gut, body], t_eval=t)
    gut, body = sol.y[0, -1], sol.y[1, -1]
    start = 0 if k == 0 else 1  # the interval's first point is the previous one's last
    times.extend(sol.t[start:])
    conc.extend(sol.y[1, start:] / vol)

t, c = np.array(times), np.array(conc)
last = t >= (n - 1) * tau
first = t <= tau
i_last = int(np.argmax(np.where(last, c, -np.inf)))
dt = np.diff(t)
print(json.dumps({
    "cmax_mg_per_l": float(c.max()),
    "tmax_last_h": float(t[i_last] - (n - 1) * tau),
    "ctrough_mg_per_l": float(c[-1]),
    "auc_mg_h_per_l": float(np.sum((c[1:] + c[:-1]) / 2 * dt)),
    "time_above_mec_h": float(np.sum(dt[(c[1:] > mec) & (c[:-1] > mec)])),
    "accumulation_ratio": float(c[last].max() / c[first].max()),
}))
