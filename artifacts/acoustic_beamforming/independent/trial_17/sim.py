import json, numpy as np, os
import pyroomacoustics as pra
from scipy.signal import chirp
FS = 16000
HERE = os.path.dirname(os.path.abspath(__file__))

ROOMS = {'small': [4.0, 3.5, 2.7], 'medium': [6.0, 4.5, 3.0], 'large': [9.0, 7.0, 3.5]}
FINISH = {
 'classroom': dict(west='plasterboard', east='glass_window', south='plasterboard', north='wooden_lining', floor='linoleum_on_concrete', ceiling='ceiling_perforated_gypsum_board'),
 'studio': dict(west='plasterboard', east='facing_brick', south='curtains_fabric', north='plasterboard', floor='carpet_tufted_9.5mm', ceiling='ceiling_fissured_tile'),
 'chapel': dict(west='limestone_wall', east='limestone_wall', south='curtains_cotton_0.5', north='limestone_wall', floor='marble_floor', ceiling='wooden_lining'),
 'office': dict(west='plasterboard', east='plasterboard', south='glass_window', north='plasterboard', floor='carpet_cotton', ceiling='ceiling_fissured_tile'),
}

def array_xy(name, centre):
    cx, cy = centre[0], centre[1]
    if name.startswith('linear'):
        n = int(name[6]); d = float(name.split('_')[1][:-2]) / 100
        xs = (np.arange(n) - (n - 1) / 2) * d
        return np.array([[cx + x, cy] for x in xs])
    n = int(name[8]); r = float(name.split('_')[1][:-2]) / 100
    a = 2 * np.pi * np.arange(n) / n
    return np.stack([cx + r * np.cos(a), cy + r * np.sin(a)], 1)

def sweep():
    t = np.arange(FS) / FS
    x = chirp(t, 50, 1.0, 7000, method='logarithmic', phi=-90)
    n = int(0.01 * FS); w = np.hanning(2 * n)
    x[:n] *= w[:n]; x[-n:] *= w[n:]
    return x

def geometry(p):
    dim = ROOMS[p['room_size']]
    c = [dim[0] / 2, dim[1] / 2, 1.2]
    mics = array_xy(p['microphone_array'], c)
    az = np.deg2rad(p['source_azimuth']); r = p['source_distance']
    src = [c[0] + r * np.cos(az), c[1] + r * np.sin(az), 1.2]
    return dim, c, mics, src

def simulate(p):
    dim, c, mics, src = geometry(p)
    mats = {k: pra.Material(v) for k, v in FINISH[p['finish']].items()}
    room = pra.ShoeBox(dim, fs=FS, materials=mats, max_order=int(p['max_order']), air_absorption=True)
    x = sweep()
    room.add_source(src, signal=x)
    M = np.vstack([mics.T, np.full(len(mics), 1.2)])
    room.add_microphone_array(M)
    room.simulate()
    s = room.mic_array.signals
    N = 2 * FS
    out = np.zeros((s.shape[0], N))
    L = min(N, s.shape[1]); out[:, :L] = s[:, :L]
    rng = np.random.default_rng(int(p['seed']))
    noise = rng.standard_normal((s.shape[0], N))
    pw = np.mean(out[0, :FS] ** 2)
    sig = np.sqrt(pw / 10 ** (p['snr_db'] / 10))
    return out + sig * noise, out, x, mics, c
