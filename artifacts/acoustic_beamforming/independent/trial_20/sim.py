import numpy as np, pyroomacoustics as pra
FS = 16000
ROOMS = {"small": [4.0, 3.5, 2.7], "medium": [6.0, 4.5, 3.0], "large": [9.0, 7.0, 3.5]}
FIN = {
 "studio": dict(west="plasterboard", east="facing_brick", south="curtains_fabric", north="plasterboard", floor="carpet_tufted_9.5mm", ceiling="ceiling_fissured_tile"),
 "office": dict(west="plasterboard", east="plasterboard", south="glass_window", north="plasterboard", floor="carpet_cotton", ceiling="ceiling_fissured_tile"),
 "classroom": dict(west="plasterboard", east="glass_window", south="plasterboard", north="wooden_lining", floor="linoleum_on_concrete", ceiling="ceiling_perforated_gypsum_board"),
 "chapel": dict(west="limestone_wall", east="limestone_wall", south="curtains_cotton_0.5", north="limestone_wall", floor="marble_floor", ceiling="wooden_lining"),
}
def mics(name, c):
    if name.startswith("linear"):
        n = int(name[6]); d = float(name.split("_")[1][:-2]) / 100
        xs = (np.arange(n) - (n - 1) / 2) * d
        return np.array([[c[0] + x, c[1], c[2]] for x in xs])
    n = int(name[8]); r = float(name.split("_")[1][:-2]) / 100
    a = 2 * np.pi * np.arange(n) / n
    return np.array([[c[0] + r * np.cos(t), c[1] + r * np.sin(t), c[2]] for t in a])

def sweep():
    t = np.arange(FS) / FS
    f1, f2, T = 50.0, 7000.0, 1.0
    L = T / np.log(f2 / f1)
    x = np.sin(2 * np.pi * f1 * L * (np.exp(t / L) - 1))
    w = np.hanning(320)
    x[:160] *= w[:160]; x[-160:] *= w[160:]
    return x

def simulate(p):
    dim = ROOMS[p["room_size"]]
    c = [dim[0] / 2, dim[1] / 2, 1.2]
    az = np.deg2rad(p["source_azimuth"]); d = p["source_distance"]
    src = [c[0] + d * np.cos(az), c[1] + d * np.sin(az), 1.2]
    M = mics(p["microphone_array"], c)
    mats = {k: pra.Material(v) for k, v in FIN[p["finish"]].items()}
    room = pra.ShoeBox(dim, fs=FS, materials=mats, max_order=int(p["max_order"]), air_absorption=True)
    x = sweep()
    room.add_source(src, signal=x)
    room.add_microphone_array(pra.MicrophoneArray(M.T, FS))
    room.simulate()
    y = room.mic_array.signals
    N = 2 * FS
    out = np.zeros((y.shape[0], N))
    n = min(N, y.shape[1]); out[:, :n] = y[:, :n]
    return x, out, M, np.array(c), np.array(src), room
