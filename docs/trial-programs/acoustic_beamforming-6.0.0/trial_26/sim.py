import numpy as np
import pyroomacoustics as pra

FS = 16000
C = 343.0
ROOMS = {"small": [4.0, 3.5, 2.7], "medium": [6.0, 4.5, 3.0], "large": [9.0, 7.0, 3.5]}
FINISH = {
    "studio": dict(west="plasterboard", east="facing_brick", south="curtains_fabric",
                   north="plasterboard", floor="carpet_tufted_9.5mm", ceiling="ceiling_fissured_tile"),
    "office": dict(west="plasterboard", east="plasterboard", south="glass_window",
                   north="plasterboard", floor="carpet_cotton", ceiling="ceiling_fissured_tile"),
    "classroom": dict(west="plasterboard", east="glass_window", south="plasterboard",
                      north="wooden_lining", floor="linoleum_on_concrete",
                      ceiling="ceiling_perforated_gypsum_board"),
    "chapel": dict(west="limestone_wall", east="limestone_wall", south="curtains_cotton_0.5",
                   north="limestone_wall", floor="marble_floor", ceiling="wooden_lining"),
}


def array_offsets(name):
    if name == "linear4_5cm":
        x = (np.arange(4) - 1.5) * 0.05
        return np.stack([x, 0 * x, 0 * x], 1)
    if name == "linear8_4cm":
        x = (np.arange(8) - 3.5) * 0.04
        return np.stack([x, 0 * x, 0 * x], 1)
    if name == "circular6_5cm":
        n, r = 6, 0.05
    else:
        n, r = 8, 0.10
    a = 2 * np.pi * np.arange(n) / n
    return np.stack([r * np.cos(a), r * np.sin(a), 0 * a], 1)


def sweep():
    n = FS
    t = np.arange(n) / FS
    f1, f2, T = 50.0, 7000.0, 1.0
    L = np.log(f2 / f1)
    x = np.sin(2 * np.pi * f1 * T / L * (np.exp(t / T * L) - 1.0))
    nf = int(0.01 * FS)
    w = np.hanning(2 * nf)
    x[:nf] *= w[:nf]
    x[-nf:] *= w[nf:]
    return x


def simulate(p):
    dim = ROOMS[p["room_size"]]
    centre = np.array([dim[0] / 2, dim[1] / 2, 1.2])
    az = np.deg2rad(p["source_azimuth"])
    d = p["source_distance"]
    src = centre + d * np.array([np.cos(az), np.sin(az), 0.0])
    mics = centre + array_offsets(p["microphone_array"])
    mats = pra.make_materials(**FINISH[p["finish"]])
    room = pra.ShoeBox(dim, fs=FS, materials=mats, max_order=int(p["max_order"]),
                       air_absorption=True)
    s = sweep()
    room.add_source(src.tolist(), signal=s)
    room.add_microphone_array(pra.MicrophoneArray(mics.T, FS))
    room.compute_rir()
    M = mics.shape[0]
    N = 2 * FS
    rec = np.zeros((M, N))
    for m in range(M):
        h = room.rir[m][0]
        y = np.convolve(s, h)[:N]
        rec[m, :len(y)] = y
    P0 = np.mean(rec[0, :FS] ** 2)
    sig = np.sqrt(P0 / 10 ** (p["snr_db"] / 10))
    noise = np.random.default_rng(int(p["seed"])).standard_normal((M, N)) * sig
    return rec + noise, rec, s, mics, centre, room
