import json, sys, os
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np
from sim import simulate
from analysis import *

def clean(v):
    if isinstance(v, (list, tuple, np.ndarray)):
        return [clean(a) for a in v]
    v = float(v)
    return v if np.isfinite(v) else 0.0

def run(p):
    y, _, _, mics, centre, src = simulate(p)
    h = getir(y[0])
    out = room_params(h)
    az, par = doa(y, mics, centre, linear=p['microphone_array'].startswith('lin'))
    _, par = doa(y, mics, centre, fmin=500., fmax=4000., nfft=512, linear=p['microphone_array'].startswith('lin'))
    out['azimuth_deg'] = az; out['spectrum_par_db'] = par
    b = superdirective(y, mics, centre, az)
    out.update(beam_params(getir(b)))
    return {k: clean(v) for k, v in out.items()}

if __name__ == '__main__':
    sc = json.load(sys.stdin)
    print(json.dumps(run(sc['parameters'])))
