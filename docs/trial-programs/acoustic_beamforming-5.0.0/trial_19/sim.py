import numpy as np, json
import pyroomacoustics as pra

FS = 16000
ROOMS = {'small': [4.0, 3.5, 2.7], 'medium': [6.0, 4.5, 3.0], 'large': [9.0, 7.0, 3.5]}
FINISH = {
 'studio': dict(west='plasterboard', east='facing_brick', south='curtains_fabric', north='plasterboard', floor='carpet_tufted_9.5mm', ceiling='ceiling_fissured_tile'),
 'office': dict(west='plasterboard', east='plasterboard', south='glass_window', north='plasterboard', floor='carpet_cotton', ceiling='ceiling_fissured_tile'),
 'classroom': dict(west='plasterboard', east='glass_window', south='plasterboard', north='wooden_lining', floor='linoleum_on_concrete', ceiling='ceiling_perforated_gypsum_board'),
 'chapel': dict(west='limestone_wall', east='limestone_wall', south='curtains_cotton_0.5', north='limestone_wall', floor='marble_floor', ceiling='wooden_lining'),
}

def array_offsets(name):
    if name == 'linear4_5cm':
        n, d = 4, 0.05
        return np.array([[(i - (n - 1) / 2) * d, 0, 0] for i in range(n)])
    if name == 'linear8_4cm':
        n, d = 8, 0.04
        return np.array([[(i - (n - 1) / 2) * d, 0, 0] for i in range(n)])
    if name == 'circular6_5cm':
        n, r = 6, 0.05
    else:
        n, r = 8, 0.10
    a = 2 * np.pi * np.arange(n) / n
    return np.stack([r * np.cos(a), r * np.sin(a), np.zeros(n)], 1)

def sweep():
    n = FS
    t = np.arange(n) / FS
    f1, f2, T = 50.0, 7000.0, 1.0
    L = T / np.log(f2 / f1)
    x = np.sin(2 * np.pi * f1 * L * (np.exp(t / L) - 1))
    nw = int(round(0.01 * FS))
    w = np.hanning(2 * nw)
    x[:nw] *= w[:nw]
    x[-nw:] *= w[nw:]
    return x

def geometry(p):
    dim = ROOMS[p['room_size']]
    c = np.array([dim[0] / 2, dim[1] / 2, 1.2])
    mics = c + array_offsets(p['microphone_array'])
    az = np.deg2rad(p['source_azimuth'])
    src = c + p['source_distance'] * np.array([np.cos(az), np.sin(az), 0])
    return dim, c, mics, src

def simulate(p):
    dim, c, mics, src = geometry(p)
    mats = {k: pra.Material(v) for k, v in FINISH[p['finish']].items()}
    room = pra.ShoeBox(dim, fs=FS, materials=mats, max_order=int(p['max_order']), air_absorption=True)
    x = sweep()
    room.add_source(src, signal=x)
    room.add_microphone_array(mics.T)
    room.simulate()
    y = room.mic_array.signals
    N = 2 * FS
    out = np.zeros((y.shape[0], N))
    L = min(N, y.shape[1])
    out[:, :L] = y[:, :L]
    return out, x, dim, c, mics, src

def add_noise(clean, p):
    P0 = np.mean(clean[0, :FS] ** 2)
    sig = np.sqrt(P0 * 10 ** (-p['snr_db'] / 10))
    rng = np.random.default_rng(int(p['seed']))
    return clean + sig * rng.standard_normal(clean.shape), sig
