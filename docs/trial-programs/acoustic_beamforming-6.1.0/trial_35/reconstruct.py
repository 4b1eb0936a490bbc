import sys, json
import numpy as np
import scipy.signal as ss
import os
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lund2 import lundeby

FS = 16000
C = 343.0
ROOMS = {"small": [4.0, 3.5, 2.7], "medium": [6.0, 4.5, 3.0], "large": [9.0, 7.0, 3.5]}
FINISH = {
    "studio": ["plasterboard", "facing_brick", "curtains_fabric", "plasterboard", "carpet_tufted_9.5mm", "ceiling_fissured_tile"],
    "office": ["plasterboard", "plasterboard", "glass_window", "plasterboard", "carpet_cotton", "ceiling_fissured_tile"],
    "classroom": ["plasterboard", "glass_window", "plasterboard", "wooden_lining", "linoleum_on_concrete", "ceiling_perforated_gypsum_board"],
    "chapel": ["limestone_wall", "limestone_wall", "curtains_cotton_0.5", "limestone_wall", "marble_floor", "wooden_lining"],
}
DRR_MS = 2.5
BANDS = [125, 250, 500, 1000, 2000, 4000]


def array_offsets(name):
    if name.startswith("linear"):
        n = int(name[6]); d = float(name.split("_")[1][:-2]) / 100
        x = (np.arange(n) - (n - 1) / 2) * d
        return np.stack([x, np.zeros(n), np.zeros(n)], 1)
    n = int(name[8]); r = float(name.split("_")[1][:-2]) / 100
    a = 2 * np.pi * np.arange(n) / n
    return np.stack([r * np.cos(a), r * np.sin(a), np.zeros(n)], 1)


def sweep():
    T = 1.0; f1, f2 = 50.0, 7000.0
    n = int(T * FS)
    t = np.arange(n) / FS
    K = T / np.log(f2 / f1)
    x = np.sin(2 * np.pi * f1 * K * (np.exp(t / K) - 1))
    nf = int(0.01 * FS)
    w = np.hanning(2 * nf)
    x[:nf] *= w[:nf]
    x[-nf:] *= w[nf:]
    return x


def simulate(p, x):
    import pyroomacoustics as pra
    dim = ROOMS[p["room_size"]]
    names = FINISH[p["finish"]]
    mats = pra.make_materials(west=names[0], east=names[1], south=names[2], north=names[3],
                              floor=names[4], ceiling=names[5])
    room = pra.ShoeBox(dim, fs=FS, materials=mats, max_order=int(p["max_order"]), air_absorption=True)
    centre = np.array([dim[0] / 2, dim[1] / 2, 1.2])
    mics = centre + array_offsets(p["microphone_array"])
    az = np.deg2rad(p["source_azimuth"])
    src = centre + p["source_distance"] * np.array([np.cos(az), np.sin(az), 0])
    room.add_source(src, signal=x)
    room.add_microphone_array(mics.T)
    room.simulate()
    y = room.mic_array.signals
    N = 2 * FS
    out = np.zeros((y.shape[0], N))
    L = min(N, y.shape[1])
    out[:, :L] = y[:, :L]
    return out, mics, centre


def deconv(y, x, nir=FS):
    T = len(x) / FS
    K = T / np.log(7000.0 / 50.0)
    t = np.arange(len(x)) / FS
    inv = x[::-1] * np.exp(-t / K)
    ref = ss.fftconvolve(x, inv)
    h = ss.fftconvolve(y, inv) / np.max(np.abs(ref))
    return h[len(x) - 1:len(x) - 1 + nir]


def band(h, fc):
    lo, hi = fc / np.sqrt(2), min(fc * np.sqrt(2), FS / 2 * 0.99)
    sos = ss.butter(3, [lo, hi], btype="band", fs=FS, output="sos")
    return ss.sosfilt(sos, h)


def noise_level(e):
    n = len(e)
    return np.mean(e[int(0.9 * n):])


def db(x):
    return 10 * np.log10(max(x, 1e-30))


def clar(e, i0, ms, nl, cr):
    k = i0 + int(round(ms * FS / 1000)); cr = i0 + cr
    a = e[i0:min(k, cr)].sum() - nl * (min(k, cr) - i0)
    b = e[k:cr].sum() - nl * max(cr - k, 0)
    if b <= 0:
        return 40.0
    if a <= 0:
        return -40.0
    return float(np.clip(db(a / b), -40, 40))


def lund(e, i0, nl, blk_ms=10):
    w = int(blk_ms * FS / 1000); seg = e[i0:]; nb = len(seg) // w
    bl = seg[:nb * w].reshape(nb, w).mean(1); t = (np.arange(nb) + 0.5) * w
    Lb = 10 * np.log10(bl + 1e-30); Ln = 10 * np.log10(nl)
    k = np.where(Lb < Ln + 10)[0]; k = k[0] if len(k) else nb
    k = max(k, 2)
    sl, ic = np.polyfit(t[:k], Lb[:k], 1)
    cross = (Ln - ic) / sl if sl < 0 else len(seg)
    return int(min(max(cross, w), len(seg)))


def decay_times(e, i0, nl):
    out = []
    cr, n, sl, ic = lundeby(e, i0, nl, p=5, hi=10, lo=10)
    C = 10 ** ((ic + sl * cr) / 10) / (-sl * np.log(10) / 10) if sl < 0 else 0.0
    seg = e[i0:i0 + cr]
    for comp, (a, b) in [(0, (0, -10)), (1, (-5, -25)), (1, (-5, -35))]:
        s = np.cumsum(seg[::-1])[::-1] + comp * C
        s = s / s[0]; s = np.maximum(s, 1e-30)
        L = 10 * np.log10(s); t = np.arange(len(L)) / FS
        idx = np.where((L <= a) & (L >= b))[0]
        if len(idx) < 2:
            out.append(float("nan")); continue
        slope = np.polyfit(t[idx], L[idx], 1)[0]
        out.append(-60.0 / slope if slope < 0 else float("nan"))
    return out


def inr_of(e, nl, win_ms=10):
    w = int(win_ms * FS / 1000)
    sm = np.convolve(e, np.ones(w) / w, "valid")
    return db(sm.max() / nl)


def measure(h):
    e = h ** 2
    i0 = int(np.argmax(np.abs(h)))
    nl = noise_level(e)
    pnr = db(np.max(e) / nl)
    c50, c80, inr, edt, t20, t30 = [], [], [], [], [], []
    for fc in BANDS:
        hb = band(h, fc)
        eb = hb ** 2
        nb = noise_level(eb)
        cr, nlu, _, _ = lundeby(eb, i0, nb, p=3, hi=10, lo=5)
        c50.append(clar(eb, i0, 50, nb, cr))
        c80.append(clar(eb, i0, 80, nb, cr))
        inr.append(inr_of(eb, nlu))
        a, b, c = decay_times(eb, i0, nb)
        edt.append(a); t20.append(b); t30.append(c)
    crb, nlb, _, _ = lundeby(e, i0, nl, p=3, hi=10, lo=5)
    crb += i0
    k = i0 + int(0.05 * FS)
    num = np.sum(e[:k]) - nlb * k
    den = np.sum(e[:crb]) - nlb * crb
    d50 = num / den if den > 0 else 1.0
    nd = int(round(DRR_MS * FS / 1000))
    a0 = max(0, i0 - nd)
    direct = np.sum(e[a0:i0 + nd + 1]) - nlb * (i0 + nd + 1 - a0)
    rev = np.sum(e[i0 + nd + 1:crb]) - nlb * max(crb - i0 - nd - 1, 0)
    drr = db(direct / rev) if rev > 0 and direct > 0 else 40.0
    return dict(c50=c50, c80=c80, inr=inr, edt=edt, t20=t20, t30=t30, d50=float(np.clip(d50, 0, 1)),
                drr=drr, pnr=pnr)


def doa(y, mics, centre, nfft=512, fr=(300.0, 3500.0)):
    import pyroomacoustics as pra
    X = ss.stft(y, fs=FS, nperseg=nfft, noverlap=nfft // 2)[2]
    L = (mics - centre)[:, :2].T
    d = pra.doa.algorithms["NormMUSIC"](L, FS, nfft, c=C, num_src=1)
    d.locate_sources(X, freq_range=list(fr))
    P = np.asarray(d.grid.values, float)
    grid = np.rad2deg(d.grid.azimuth)
    G = len(P)
    i = int(np.argmax(P))
    a, b, c = P[(i - 1) % G], P[i], P[(i + 1) % G]
    den = a - 2 * b + c
    off = 0.5 * (a - c) / den if den != 0 else 0.0
    az = (grid[i] + off * 360.0 / G) % 360
    if np.ptp((mics - centre)[:, 1]) < 1e-9 and az > 180:
        az = 360.0 - az
    par = db(P.max() / P.mean())
    return float(az), float(par)


def beamform(y, mics, centre, az_deg, reg=1e-2, pad=2):
    M, N0 = y.shape
    N = N0 * pad
    Y = np.fft.rfft(y, N, axis=1)
    f = np.fft.rfftfreq(N, 1 / FS)
    az = np.deg2rad(az_deg)
    u = np.array([np.cos(az), np.sin(az), 0])
    tau = -((mics - centre) @ u) / C
    D = np.linalg.norm(mics[:, None, :] - mics[None, :, :], axis=2)
    out = np.zeros(len(f), complex)
    for k in range(len(f)):
        d = np.exp(-2j * np.pi * f[k] * tau)
        G = np.sinc(2 * f[k] * D / C) + reg * np.eye(M)
        g = np.linalg.solve(G, d)
        w = g / np.vdot(d, g)
        out[k] = np.vdot(w, Y[:, k])
    return np.fft.irfft(out, N)[:N0]


def main():
    sc = json.load(sys.stdin)
    p = sc["parameters"]
    x = sweep()
    clean, mics, centre = simulate(p, x)
    M, N = clean.shape
    rng = np.random.default_rng(int(p["seed"]))
    nz = rng.standard_normal((M, N))
    P0 = np.mean(clean[0, :len(x)] ** 2)
    sig = np.sqrt(P0 / 10 ** (p["snr_db"] / 10))
    y = clean + sig * nz
    h0 = deconv(y[0], x)
    m0 = measure(h0)
    az, par = doa(y, mics, centre)
    yb = beamform(y, mics, centre, az)
    hb = deconv(yb, x)
    mb = measure(hb)

    def fl(v):
        v = [float(a) for a in v]
        return [a if np.isfinite(a) else 0.0 for a in v]
    out = {
        "azimuth_deg": az,
        "beam_c50_db": fl(mb["c50"]),
        "beam_drr_db": float(mb["drr"]),
        "beam_inr_db": fl(mb["inr"]),
        "c50_db": fl(m0["c50"]),
        "c80_db": fl(m0["c80"]),
        "d50": float(m0["d50"]),
        "drr_db": float(m0["drr"]),
        "edt_s": fl(m0["edt"]),
        "inr_db": fl(m0["inr"]),
        "peak_to_noise_db": float(m0["pnr"]),
        "spectrum_par_db": par,
        "t20_s": fl(m0["t20"]),
        "t30_s": fl(m0["t30"]),
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
