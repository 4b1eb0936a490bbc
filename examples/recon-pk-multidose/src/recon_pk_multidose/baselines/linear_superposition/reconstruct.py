"""Baseline `linear_superposition`: the textbook closed form for multiple dosing.

A pharmacokinetics textbook treats repeated oral doses with the one-compartment Bateman
function and the superposition principle. Saturable elimination is linearised the usual
way, at concentrations well below km: the elimination rate constant is
k = vmax / (km * V). Concentrations are evaluated on a 0.001 h grid. Right where the
drug stays far below km, wrong (too low an exposure) where elimination saturates, so it
must stay below R = 1.0 while earning partial credit.
"""
import json
import math
import sys

import numpy as np

p = json.load(sys.stdin)["parameters"]
tau, n = float(p["interval_h"]), int(p["n_doses"])
vol, ka = p["volume_l"], p["ka_per_h"]
k = p["vmax_mg_per_h"] / (p["km_mg_per_l"] * vol)
dose = p["bioavailability"] * p["dose_mg"]
mec = p["mec_mg_per_l"]

t = np.linspace(0.0, n * tau, int(round(n * tau / 0.001)) + 1)
c = np.zeros_like(t)
for j in range(n):
    s = t - j * tau
    on = s >= 0
    if abs(ka - k) < 1e-9:
        c[on] += dose / vol * ka * s[on] * np.exp(-k * s[on])
    else:
        c[on] += dose * ka / (vol * (ka - k)) * (np.exp(-k * s[on]) - np.exp(-ka * s[on]))

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
    "accumulation_ratio": float(c[last].max() / max(c[first].max(), 1e-300)),
}))
