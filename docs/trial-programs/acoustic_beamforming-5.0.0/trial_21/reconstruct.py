import sys, json
import numpy as np
import scipy.signal as ss
import pyroomacoustics as pra

FS = 16000
C = 343.0
ROOMS = {"small": [4.0, 3.5, 2.7], "medium": [6.0, 4.5, 3.0], "large": [9.0, 7.0, 3.5]}
FINISH = {
    "studio": dict(west="plasterboard", east="facing_brick", south="curtains_fabric", north="plasterboard",
                   floor="carpet_tufted_9.5mm", ceiling="ceiling_fissured_tile"),
    "chapel": dict(west="limestone_wall", east="limestone_wall", south="curtains_cotton_0.5", north="limestone_wall",
                   floor="marble_floor", ceiling="wooden_lining"),
    "office": dict(west="plasterboard", east="plasterboard", south="glass_window", north="plasterboard",
                   floor="carpet_cotton", ceiling="ceiling_fissured_tile"),
    "classroom": dict(west="plasterboard", east="glass_window", south="plasterboard", north="wooden_lining",
                      floor="linoleum_on_concrete", ceiling="ceiling_perforated_gypsum_board"),
}
BANDS = [125, 250, 500, 1000, 2000, 4000]
CFG = dict(sweep_len=FS, rec_len=2 * FS)


def array_xy(name):
    if name.startswith("linear"):
        n = int(name[6]); d = float(name.split("_")[1][:-2]) / 100
        x = (np.arange(n) - (n - 1) / 2) * d
        return np.stack([x, np.zeros(n)])
    n = int(name[8]); r = float(name.split("_")[1][:-2]) / 100
    a = 2 * np.pi * np.arange(n) / n
    return np.stack([r * np.cos(a), r * np.sin(a)])


def sweep():
    n = CFG["sweep_len"]
    T = n / FS
    t = np.arange(n) / FS
    f1, f2 = 50.0, 7000.0
    K = T / np.log(f2 / f1)
    x = np.sin(2 * np.pi * f1 * K * (np.exp(t / K) - 1))
    nf = int(0.01 * FS)
    w = np.hanning(2 * nf)
    x[:nf] *= w[:nf]
    x[-nf:] *= w[nf:]
    return x


def simulate(p):
    dim = ROOMS[p["room_size"]]
    mats = {k: pra.Material(v) for k, v in FINISH[p["finish"]].items()}
    room = pra.ShoeBox(dim, fs=FS, materials=mats, max_order=int(p["max_order"]), air_absorption=True)
    ctr = np.array([dim[0] / 2, dim[1] / 2, 1.2])
    az = np.deg2rad(p["source_azimuth"]); d = p["source_distance"]
    src = ctr + np.array([d * np.cos(az), d * np.sin(az), 0.0])
    xy = array_xy(p["microphone_array"])
    mics = np.vstack([xy + ctr[:2, None], np.full(xy.shape[1], ctr[2])])
    x = sweep()
    room.add_source(src, signal=x)
    room.add_microphone_array(pra.MicrophoneArray(mics, FS))
    room.simulate()
    y = room.mic_array.signals
    L = CFG["rec_len"]
    if y.shape[1] < L:
        y = np.pad(y, ((0, 0), (0, L - y.shape[1])))
    y = y[:, :L]
    M = y.shape[0]
    rng = np.random.default_rng(int(p["seed"]))
    nz = rng.standard_normal((M, L))
    ps = np.mean(y[0, :CFG["sweep_len"]] ** 2)
    pn = ps / 10 ** (p["snr_db"] / 10)
    y = y + nz * np.sqrt(pn)
    return y, x, xy, room


def deconv(y, x):
    n = len(x)
    T = n / FS
    K = T / np.log(7000 / 50)
    t = np.arange(n) / FS
    inv = x[::-1] * np.exp(-t / K)
    full = ss.fftconvolve(y, inv)
    return full[n - 1:n - 1 + FS]


def deconv_old(y, x):
    L = len(y)
    n = L + len(x)
    N = 1 << int(np.ceil(np.log2(n)))
    Y = np.fft.rfft(y, N); X = np.fft.rfft(x, N)
    f = np.fft.rfftfreq(N, 1 / FS)
    eps = 1e-3 * np.max(np.abs(X)) ** 2
    H = Y * np.conj(X) / (np.abs(X) ** 2 + eps)
    h = np.fft.irfft(H, N)[:L]
    return h


def octave(h, fc):
    lo = fc / np.sqrt(2); hi = min(fc * np.sqrt(2), FS / 2 * 0.99)
    sos = ss.butter(3, [lo, hi], btype="band", fs=FS, output="sos")
    return ss.sosfilt(sos, h)


def onset(h):
    e = h ** 2
    pk = np.argmax(e)
    thr = e[pk] * 10 ** (-20 / 10)
    i = np.where(e[:pk + 1] >= thr)[0][0]
    return i


def noise_floor(e, frac=0.1):
    n = len(e)
    return np.mean(e[-int(n * frac):])


def decay_time(sdb, a, b):
    i0 = np.where(sdb <= a)[0]; i1 = np.where(sdb < b)[0]
    if len(i0) == 0:
        return float("nan")
    i0 = i0[0]
    i1 = i1[0] if len(i1) else len(sdb)
    if i1 - i0 < 2:
        return float("nan")
    t = np.arange(i0, i1) / FS
    k, c0 = np.polyfit(t, sdb[i0:i1], 1)
    return -60.0 / k


W_ENV = 640
TR_MULT = 1.0


def band_params(eb, t0):
    nf = noise_floor(eb)
    e2 = eb - nf
    env = np.convolve(eb[t0:], np.ones(W_ENV) / W_ENV, "same")
    idx = np.where(env <= nf * TR_MULT)[0]
    tc = t0 + (idx[0] if len(idx) else len(env))
    r = {}
    for nm, n in [("c50", int(0.05 * FS)), ("c80", int(0.08 * FS))]:
        a = np.sum(e2[t0:t0 + n]); b = np.sum(e2[t0 + n:tc])
        r[nm] = float(10 * np.log10(a / b)) if (b > 0 and a > 0) else 40.0
        r[nm] = min(r[nm], 40.0)
    ee = np.clip(e2[t0:tc], 0, None)
    S = np.cumsum(ee[::-1])[::-1]
    sdb = 10 * np.log10(np.maximum(S / S[0], 1e-30))
    r["edt"] = decay_time(sdb, 0, -10)
    r["t20"] = decay_time(sdb, -5, -25)
    r["t30"] = decay_time(sdb, -5, -35)
    envi = np.convolve(eb, np.ones(160) / 160, "same")
    r["inr"] = float(10 * np.log10(np.max(envi) / noise_floor(eb, 0.5)))
    return r


def measure(h):
    out = {}
    t0 = onset(h)
    e = h ** 2
    nf = noise_floor(e)
    n50 = int(0.05 * FS)
    e2 = e - nf
    out["d50"] = float(np.sum(e2[t0:t0 + n50]) / np.sum(e2[t0:]))
    nd = int(0.0025 * FS)
    pk = np.argmax(e)
    a = np.sum(e2[max(pk - nd, 0):pk + nd + 1]); b = np.sum(e2[pk + nd + 1:])
    out["drr_db"] = float(min(10 * np.log10(a / b), 40.0)) if (a > 0 and b > 0) else 40.0
    out["peak_to_noise_db"] = float(10 * np.log10(e[pk] / nf))
    keys = dict(c50="c50_db", c80="c80_db", edt="edt_s", t20="t20_s", t30="t30_s", inr="inr_db")
    for k in keys.values():
        out[k] = []
    for fc in BANDS:
        r = band_params(octave(h, fc) ** 2, t0)
        for k, v in keys.items():
            out[v].append(r[k])
    return out


def stft(y, nfft=512):
    f, t, Z = ss.stft(y, fs=FS, nperseg=nfft, noverlap=nfft // 2)
    return f, Z  # (M, F, T)


def doa(y, xy, nfft=512, fr=(300, 3500), alg="NormMUSIC"):
    import warnings
    warnings.filterwarnings("ignore")
    X = pra.transform.stft.analysis(y.T, nfft, nfft // 2).transpose([2, 1, 0])
    grid = np.deg2rad(np.arange(0, 360, 0.1))
    d = pra.doa.algorithms[alg](xy, FS, nfft, c=C, num_src=1, azimuth=grid)
    d.locate_sources(X, freq_range=list(fr))
    v = np.array(d.grid.values, dtype=float)
    vv = v.copy()
    if np.allclose(xy[1], 0):
        vv[grid > np.pi + 1e-9] = -np.inf
    j = int(np.argmax(vv))
    az = float(np.rad2deg(grid[j])) % 360
    par = float(10 * np.log10(v.max() / v.mean()))
    return az, par


def beam(y, x, xy, az, snr_db):
    M, L = y.shape
    N = 1 << int(np.ceil(np.log2(L)))
    Y = np.fft.rfft(y, N, axis=1)
    f = np.fft.rfftfreq(N, 1 / FS)
    u = np.array([np.cos(np.deg2rad(az)), np.sin(np.deg2rad(az))])
    tau = (xy.T @ u) / C
    d = np.exp(2j * np.pi * f[:, None] * tau[None, :])  # F,M  (phase advance for mics closer to source)
    D = np.sqrt(((xy[:, :, None] - xy[:, None, :]) ** 2).sum(0))
    W = np.zeros_like(d)
    mu = 1e-2
    for k in range(len(f)):
        G = np.sinc(2 * f[k] * D / C) + mu * np.eye(M)
        gi = np.linalg.solve(G, d[k])
        W[k] = gi / (np.conj(d[k]) @ gi)
    Z = np.einsum("fm,mf->f", np.conj(W), Y)
    z = np.fft.irfft(Z, N)[:L]
    return z


FIELDS = ["azimuth_deg", "beam_c50_db", "beam_drr_db", "beam_inr_db", "c50_db", "c80_db", "d50", "drr_db",
          "edt_s", "inr_db", "peak_to_noise_db", "spectrum_par_db", "t20_s", "t30_s"]
LISTS = {"beam_c50_db", "beam_inr_db", "c50_db", "c80_db", "edt_s", "inr_db", "t20_s", "t30_s"}


def main():
    sc = json.load(sys.stdin)
    p = sc["parameters"]
    try:
        out = compute(p)
    except Exception as ex:  # keep the contract even on failure
        sys.stderr.write("error: %r\n" % (ex,))
        out = {}
    res = {}
    for k in FIELDS:
        v = out.get(k)
        if k in LISTS:
            v = list(v) if isinstance(v, (list, tuple)) and len(v) == 6 else [0.0] * 6
            res[k] = [float(a) if np.isfinite(a) else 0.0 for a in v]
        else:
            res[k] = float(v) if v is not None and np.isfinite(v) else 0.0
    print(json.dumps(res))


def compute(p):
    y, x, xy, room = simulate(p)
    h = deconv(y[0], x)
    m = measure(h)
    az, par = doa(y, xy)
    z = beam(y, x, xy, az, p["snr_db"])
    hb = deconv(z, x)
    mb = measure(hb)
    out = dict(azimuth_deg=float(az), spectrum_par_db=float(par),
               beam_c50_db=mb["c50_db"], beam_drr_db=mb["drr_db"], beam_inr_db=mb["inr_db"])
    out.update(m)
    return out


if __name__ == "__main__":
    main()
