import numpy as np, json
import pyroomacoustics as pra

FS = 16000
ROOMS = {'small': [4.0, 3.5, 2.7], 'medium': [6.0, 4.5, 3.0], 'large': [9.0, 7.0, 3.5]}
FINISH = {
 'studio': dict(west='plasterboard', east='facing_brick', south='curtains_fabric', north='plasterboard', floor='carpet_tufted_9.5mm', ceiling='ceiling_fissured_tile'),
 'chapel': dict(west='limestone_wall', east='limestone_wall', south='curtains_cotton_0.5', north='limestone_wall', floor='marble_floor', ceiling='wooden_lining'),
 'office': dict(west='plasterboard', east='plasterboard', south='glass_window', north='plasterboard', floor='carpet_cotton', ceiling='ceiling_fissured_tile'),
 'classroom': dict(west='plasterboard', east='glass_window', south='plasterboard', north='wooden_lining', floor='linoleum_on_concrete', ceiling='ceiling_perforated_gypsum_board'),
}
Z = 1.2

def array_pos(name, c):
    c = np.asarray(c, float)
    if name.startswith('linear'):
        M = int(name[6]); d = float(name.split('_')[1][:-2]) / 100
        x = (np.arange(M) - (M - 1) / 2) * d
        P = np.stack([c[0] + x, np.full(M, c[1]), np.full(M, c[2])])
    else:
        M = int(name[8]); r = float(name.split('_')[1][:-2]) / 100
        a = 2 * np.pi * np.arange(M) / M
        P = np.stack([c[0] + r * np.cos(a), c[1] + r * np.sin(a), np.full(M, c[2])])
    return P

def sweep():
    T = 1.0; f1, f2 = 50.0, 7000.0
    t = np.arange(int(T * FS)) / FS
    K = T / np.log(f2 / f1)
    s = np.sin(2 * np.pi * f1 * K * (np.exp(t / K) - 1))
    n = int(0.01 * FS)
    w = np.hanning(2 * n)
    s[:n] *= w[:n]; s[-n:] *= w[n:]
    return s

def setup(p):
    dim = ROOMS[p['room_size']]
    c = [dim[0] / 2, dim[1] / 2, Z]
    az = np.deg2rad(p['source_azimuth'])
    src = [c[0] + p['source_distance'] * np.cos(az), c[1] + p['source_distance'] * np.sin(az), Z]
    mics = array_pos(p['microphone_array'], c)
    return dim, c, src, mics

def simulate(p, sig=None):
    dim, c, src, mics = setup(p)
    mats = pra.make_materials(**FINISH[p['finish']])
    room = pra.ShoeBox(dim, fs=FS, materials=mats, max_order=int(p['max_order']), air_absorption=True)
    if sig is None: sig = sweep()
    room.add_source(src, signal=sig)
    room.add_microphone_array(mics)
    room.compute_rir()
    room.simulate()
    return room
