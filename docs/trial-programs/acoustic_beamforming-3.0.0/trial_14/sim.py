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

def array_mics(name, centre):
    c = np.array(centre)
    if name.startswith('linear'):
        M = int(name[6]); d = float(name.split('_')[1][:-2]) / 100
        xs = (np.arange(M) - (M - 1) / 2) * d
        return np.array([[c[0] + x, c[1], c[2]] for x in xs])
    M = int(name[8]); r = float(name.split('_')[1][:-2]) / 100
    ang = 2 * np.pi * np.arange(M) / M
    return np.array([[c[0] + r * np.cos(a), c[1] + r * np.sin(a), c[2]] for a in ang])

def sweep():
    n = FS
    t = np.arange(n) / FS
    f1, f2, T = 50.0, 7000.0, 1.0
    L = T / np.log(f2 / f1)
    s = np.sin(2 * np.pi * f1 * L * (np.exp(t / L) - 1))
    nw = int(0.01 * FS)
    w = np.hanning(2 * nw)
    s[:nw] *= w[:nw]; s[-nw:] *= w[nw:]
    return s

def scene(p):
    dim = ROOMS[p['room_size']]
    centre = [dim[0] / 2, dim[1] / 2, 1.2]
    mics = array_mics(p['microphone_array'], centre)
    az = np.deg2rad(p['source_azimuth']); d = p['source_distance']
    src = [centre[0] + d * np.cos(az), centre[1] + d * np.sin(az), 1.2]
    return dim, np.array(centre), mics, np.array(src)

def simulate(p):
    dim, centre, mics, src = scene(p)
    mats = pra.make_materials(**FINISH[p['finish']])
    room = pra.ShoeBox(dim, fs=FS, materials=mats, max_order=p['max_order'], air_absorption=True)
    x = sweep()
    room.add_source(src, signal=x)
    room.add_microphone_array(mics.T)
    room.simulate()
    sig = room.mic_array.signals
    N = 2 * FS
    rec = np.zeros((len(mics), N))
    m = min(N, sig.shape[1]); rec[:, :m] = sig[:, :m]
    return rec, room, x, centre, mics, src
