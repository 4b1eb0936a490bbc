import json
import sys
import os
import numpy as np
import scipy.signal as ss

FS = 16000
C = 343.0
T_SWEEP = 1.0
F1, F2 = 50.0, 7000.0
BANDS = [125, 250, 500, 1000, 2000, 4000]

ROOMS = {"small": [4.0, 3.5, 2.7], "medium": [6.0, 4.5, 3.0], "large": [9.0, 7.0, 3.5]}
FINISH = {
    "studio": dict(west="plasterboard", east="facing_brick", south="curtains_fabric",
                   north="plasterboard", floor="carpet_tufted_9.5mm", ceiling="ceiling_fissured_tile"),
    "chapel": dict(west="limestone_wall", east="limestone_wall", south="curtains_cotton_0.5",
                   north="limestone_wall", floor="marble_floor", ceiling="wooden_lining"),
    "office": dict(west="plasterboard", east="plasterboard", south="glass_window",
                   north="plasterboard", floor="carpet_cotton", ceiling="ceiling_fissured_tile"),
    "classroom": dict(west="plasterboard", east="glass_window", south="plasterboard",
                      north="wooden_lining", floor="linoleum_on_concrete",
                      ceiling="ceiling_perforated_gypsum_board"),
}

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lund

LUN = dict(blk_ms=20, p=7, noise_db=(0,), dyn=(10, 20), comp=True, init_margin=5, noise_frac=0.1)

CLUN = dict(blk_ms=20, p=5, noise_db=(5,), dyn=(5, 20), init_margin=5, noise_frac=0.1)

CFG = dict(clar_trunc=True, inr_mode='clun', 
    doa_alg="SRP", doa_nfft=256, doa_frange=(300.0, 3500.0), doa_grid=360,
    band_order=3, band_zero_phase=False, noise_sub=True, onset_db=20.0, clar_sub=True, inr_ms=10, inr_noise_frac=0.5,
    rec_offset=0,
)


def array_offsets(name):
    if name == "linear4_5cm":
        M, d = 4, 0.05
        xs = (np.arange(M) - (M - 1) / 2) * d
        return np.stack([xs, np.zeros(M)], 1)
    if name == "linear8_4cm":
        M, d = 8, 0.04
        xs = (np.arange(M) - (M - 1) / 2) * d
        return np.stack([xs, np.zeros(M)], 1)
    if name == "circular6_5cm":
        M, r = 6, 0.05
    else:
        M, r = 8, 0.10
    ph = 2 * np.pi * np.arange(M) / M
    return np.stack([r * np.cos(ph), r * np.sin(ph)], 1)


def make_sweep():
    n = int(T_SWEEP * FS)
    t = np.arange(n) / FS
    K = T_SWEEP / np.log(F2 / F1)
    x = np.sin(2 * np.pi * F1 * K * (np.exp(t / K) - 1.0))
    nf = int(0.01 * FS)
    w = np.hanning(2 * nf)
    x[:nf] *= w[:nf]
    x[-nf:] *= w[nf:]
    return x


def geometry(p):
    room = ROOMS[p["room_size"]]
    centre = np.array([room[0] / 2, room[1] / 2, 1.2])
    offs = array_offsets(p["microphone_array"])
    mics = np.concatenate([centre[:2] + offs, np.full((len(offs), 1), 1.2)], 1)
    az = np.deg2rad(p["source_azimuth"])
    r = p["source_distance"]
    src = centre + np.array([r * np.cos(az), r * np.sin(az), 0.0])
    return room, centre, mics, src, offs


def simulate(p, x):
    import pyroomacoustics as pra
    room_dim, centre, mics, src, offs = geometry(p)
    mats = {k: pra.Material(v) for k, v in FINISH[p["finish"]].items()}
    room = pra.ShoeBox(room_dim, fs=FS, materials=mats, max_order=int(p["max_order"]),
                       air_absorption=True)
    room.add_source(src.tolist(), signal=x)
    room.add_microphone_array(mics.T)
    room.simulate()
    sig = room.mic_array.signals
    nrec = 2 * len(x)
    off = CFG["rec_offset"]
    out = np.zeros((sig.shape[0], nrec))
    seg = sig[:, off:off + nrec]
    out[:, :seg.shape[1]] = seg
    return out


def add_noise(p, y, nsweep):
    rng = np.random.default_rng(int(p["seed"]))
    noise = rng.standard_normal(y.shape)
    P = np.mean(y[0, :nsweep] ** 2)
    sigma = np.sqrt(P / 10 ** (p["snr_db"] / 10))
    return y + sigma * noise


def inverse_filter(x):
    n = len(x)
    t = np.arange(n) / FS
    K = T_SWEEP / np.log(F2 / F1)
    inv = x[::-1] * np.exp(-t / K)
    return inv


def deconv(y, x):
    inv = inverse_filter(x)
    n = len(y) + len(inv) - 1
    nfft = 1 << int(np.ceil(np.log2(n)))
    h = np.fft.irfft(np.fft.rfft(y, nfft) * np.fft.rfft(inv, nfft), nfft)
    start = len(x) - 1
    return h[start:start + len(x)]


def band_filter(h, fc):
    lo, hi = fc / np.sqrt(2), fc * np.sqrt(2)
    sos = ss.butter(CFG["band_order"], [lo, hi], btype="band", fs=FS, output="sos")
    if CFG["band_zero_phase"]:
        return ss.sosfiltfilt(sos, h)
    return ss.sosfilt(sos, h)


def schroeder_db(h):
    e = h ** 2
    s = np.cumsum(e[::-1])[::-1]
    return 10 * np.log10(s / s[0] + 1e-300)


def decay_time(sdb, hi, lo):
    i0 = int(np.argmax(sdb <= hi))
    if not np.any(sdb <= lo):
        fin = np.where(sdb > -250)[0]
        i1 = int(fin[-1]) if len(fin) else 0
    else:
        i1 = int(np.argmax(sdb <= lo))
    if i1 - i0 < 2:
        return float("nan")
    t = np.arange(i0, i1 + 1) / FS
    a, b = np.polyfit(t, sdb[i0:i1 + 1], 1)
    return -60.0 / a


def noise_power(h):
    tail = h[int(0.9 * len(h)):]
    return np.mean(tail ** 2)


def clarity(h, onset, ms, trunc=False):
    n = int(ms * FS / 1000)
    e = h ** 2
    nb = noise_power(h)
    seg = e[onset:]
    if trunc:
        tc = lund.lundeby(seg, **CLUN)[0]
        seg = seg[:tc]
    if CFG["clar_sub"]:
        seg = seg - nb
    early = np.sum(seg[:n])
    late = np.sum(seg[n:])
    return early, late


def cdb(a, b):
    if b <= 0 or a <= 0:
        return 40.0
    return float(np.clip(10 * np.log10(a / b), -40.0, 40.0))


def measure(h):
    out = {}
    pk = int(np.argmax(np.abs(h)))
    npow = noise_power(h)
    out["peak_to_noise_db"] = 10 * np.log10(h[pk] ** 2 / npow)
    e0 = h ** 2
    onset = int(np.argmax(e0 >= e0.max() * 10 ** (-CFG["onset_db"] / 10)))
    e, l = clarity(h, onset, 50)
    out["d50"] = e / (e + l)
    nd = int(0.0025 * FS)
    e2 = h ** 2
    if CFG["clar_sub"]:
        e2 = e2 - npow
    direct = np.sum(e2[max(0, pk - nd):pk + nd + 1])
    rev = np.sum(e2[pk + nd + 1:])
    out["drr_db"] = 10 * np.log10(direct / rev)
    t20, t30, edt, c50, c80, inr = [], [], [], [], [], []
    for fc in BANDS:
        hb = band_filter(h, fc)
        eb = hb ** 2
        nb = noise_power(hb)
        nbi = np.mean(eb[int(CFG["inr_noise_frac"] * len(eb)):])
        B = int(CFG["inr_ms"] * FS / 1000)
        ee = eb[onset:]
        kb = len(ee) // B
        blk = ee[:kb * B].reshape(kb, B).mean(1)
        if CFG["inr_mode"] == "clun":
            nbi = lund.lundeby(ee, **CLUN)[3]
        inr.append(10 * np.log10(np.max(blk) / nbi))
        seg = eb[onset:]
        if CFG["noise_sub"]:
            seg = seg - nb
        S = np.cumsum(seg[::-1])[::-1]
        sdb = 10 * np.log10(np.maximum(S, 1e-300) / S[0])
        S2 = lund.edc(eb[onset:], **LUN)[0]
        sdb2 = 10 * np.log10(np.maximum(S2, 1e-300) / S2[0])
        t20.append(decay_time(sdb2, -5, -25))
        t30.append(decay_time(sdb2, -5, -35))
        edt.append(decay_time(sdb, 0, -10))
        a, b = clarity(hb, onset, 50, CFG["clar_trunc"])
        c50.append(cdb(a, b))
        a, b = clarity(hb, onset, 80, CFG["clar_trunc"])
        c80.append(cdb(a, b))
    out.update(t20_s=t20, t30_s=t30, edt_s=edt, c50_db=c50, c80_db=c80, inr_db=inr)
    return out


def doa(p, y, offs):
    import pyroomacoustics as pra
    nfft = 512
    X = ss.stft(y, fs=FS, nperseg=nfft, noverlap=nfft // 2)[2]
    ng = 360
    d = pra.doa.algorithms["NormMUSIC"](offs.T, FS, nfft, c=C, num_src=1, n_grid=ng)
    d.locate_sources(X, freq_bins=list(range(10, 113)))
    v = np.asarray(d.grid.values, float)
    azs = np.rad2deg(d.grid.azimuth)
    vv = v.copy()
    if p["microphone_array"].startswith("linear"):
        vv[azs > 180.0001] = -np.inf
    k = int(np.argmax(vv))
    a, b, c = v[(k - 1) % ng], v[k], v[(k + 1) % ng]
    den = a - 2 * b + c
    dl = 0.5 * (a - c) / den if den != 0 else 0.0
    az = float((azs[k] + dl * 360.0 / ng) % 360.0)
    par = 10 * np.log10(np.max(v) / np.mean(v))
    return az, par


def beamform(p, y, offs, az_deg, snr_db):
    M, N = y.shape
    Y = np.fft.rfft(y, axis=1)
    f = np.fft.rfftfreq(N, 1 / FS)
    u = np.array([np.cos(np.deg2rad(az_deg)), np.sin(np.deg2rad(az_deg))])
    tau = -(offs @ u) / C  # arrival delay relative to centre
    D = np.linalg.norm(offs[:, None, :] - offs[None, :, :], axis=2)
    eps = 0.01
    out = np.zeros(len(f), complex)
    I = np.eye(M)
    for k, fk in enumerate(f):
        G = np.sinc(2 * fk * D / C) + eps * I
        d = np.exp(-2j * np.pi * fk * tau)
        gi = np.linalg.solve(G, d)
        w = gi / (np.conj(d) @ gi)
        out[k] = np.conj(w) @ Y[:, k]
    return np.fft.irfft(out, N)


def main():
    sc = json.load(sys.stdin)
    p = sc["parameters"]
    x = make_sweep()
    room_dim, centre, mics, src, offs = geometry(p)
    y = simulate(p, x)
    y = add_noise(p, y, len(x))
    h0 = deconv(y[0], x)
    res = measure(h0)
    az, par = doa(p, y, offs)
    yb = beamform(p, y, offs, az, p["snr_db"])
    hb = deconv(yb, x)
    mb = measure(hb)
    out = {
        "azimuth_deg": az,
        "beam_c50_db": mb["c50_db"],
        "beam_drr_db": mb["drr_db"],
        "beam_inr_db": mb["inr_db"],
        "c50_db": res["c50_db"],
        "c80_db": res["c80_db"],
        "d50": res["d50"],
        "drr_db": res["drr_db"],
        "edt_s": res["edt_s"],
        "inr_db": res["inr_db"],
        "peak_to_noise_db": res["peak_to_noise_db"],
        "spectrum_par_db": par,
        "t20_s": res["t20_s"],
        "t30_s": res["t30_s"],
    }
    def clean(v):
        if isinstance(v, list):
            return [clean(a) for a in v]
        v = float(v)
        return v if np.isfinite(v) else 0.0
    print(json.dumps({k: clean(v) for k, v in out.items()}))


if __name__ == "__main__":
    main()
