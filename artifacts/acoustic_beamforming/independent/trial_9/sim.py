import numpy as np
import pyroomacoustics as pra

FS = 16000
C = 343.0
ROOMS = {"small": [4.0, 3.5, 2.7], "medium": [6.0, 4.5, 3.0], "large": [9.0, 7.0, 3.5]}
FINISH = {
    "classroom": dict(west="plasterboard", east="glass_window", south="plasterboard", north="wooden_lining",
                      floor="linoleum_on_concrete", ceiling="ceiling_perforated_gypsum_board"),
    "chapel": dict(west="limestone_wall", east="limestone_wall", south="curtains_cotton_0.5", north="limestone_wall",
                   floor="marble_floor", ceiling="wooden_lining"),
    "studio": dict(west="plasterboard", east="facing_brick", south="curtains_fabric", north="plasterboard",
                   floor="carpet_tufted_9.5mm", ceiling="ceiling_fissured_tile"),
    "office": dict(west="plasterboard", east="plasterboard", south="glass_window", north="plasterboard",
                   floor="carpet_cotton", ceiling="ceiling_fissured_tile"),
}


def array_offsets(name):
    if name.startswith("linear"):
        n = int(name[6]); d = float(name.split("_")[1][:-2]) / 100
        x = (np.arange(n) - (n - 1) / 2) * d
        return np.stack([x, np.zeros(n), np.zeros(n)], 1)
    n = int(name[8]); r = float(name.split("_")[1][:-2]) / 100
    a = 2 * np.pi * np.arange(n) / n
    return np.stack([r * np.cos(a), r * np.sin(a), np.zeros(n)], 1)


def sweep():
    t = np.arange(FS) / FS
    f1, f2, T = 50.0, 7000.0, 1.0
    L = T / np.log(f2 / f1)
    x = np.sin(2 * np.pi * f1 * L * (np.exp(t / L) - 1))
    nf = int(0.01 * FS)
    w = np.hanning(2 * nf)
    x[:nf] *= w[:nf]
    x[-nf:] *= w[nf:]
    return x


def simulate(p):
    dim = ROOMS[p["room_size"]]
    centre = np.array([dim[0] / 2, dim[1] / 2, 1.2])
    mics = centre + array_offsets(p["microphone_array"])
    az = np.deg2rad(p["source_azimuth"])
    src = centre + p["source_distance"] * np.array([np.cos(az), np.sin(az), 0.0])
    mats = pra.make_materials(**FINISH[p["finish"]])
    room = pra.ShoeBox(dim, fs=FS, materials=mats, max_order=int(p["max_order"]), air_absorption=True)
    s = sweep()
    room.add_source(src, signal=s)
    room.add_microphone_array(pra.MicrophoneArray(mics.T, FS))
    room.simulate()
    sig = room.mic_array.signals
    N = 2 * FS
    out = np.zeros((sig.shape[0], N))
    n = min(N, sig.shape[1])
    out[:, :n] = sig[:, :n]
    ps = np.mean(out[0, :FS] ** 2)
    noise = np.random.default_rng(int(p["seed"])).standard_normal(out.shape)
    noise *= np.sqrt(ps / 10 ** (p["snr_db"] / 10))
    return out + noise, out, s, mics, centre, room
