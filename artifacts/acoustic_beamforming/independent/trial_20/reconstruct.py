import sys, json, numpy as np
from scipy import signal
import pyroomacoustics as pra
from sim import simulate, FS
from lund import lundeby

BANDS = [125, 250, 500, 1000, 2000, 4000]
EPS_REG = 1e-3
IRLEN = FS

def deconv(x, y):
    N = len(y)
    X = np.fft.rfft(x, N); Y = np.fft.rfft(y, N)
    H = Y * np.conj(X) / (np.abs(X) ** 2 + EPS_REG * np.max(np.abs(X) ** 2))
    return np.fft.irfft(H, N)[:IRLEN]

def bandfilt(h, fc):
    sos = signal.butter(3, [fc / np.sqrt(2), fc * np.sqrt(2)], btype="band", fs=FS, output="sos")
    return signal.sosfilt(sos, h)

def edc_db(e):
    s = np.cumsum(e[::-1])[::-1]
    return 10 * np.log10(s / s[0] + 1e-300)

def fit_time(edc, hi, lo):
    idx = np.where((edc <= hi) & (edc >= lo))[0]
    if len(idx) < 2:
        return 0.0
    i0, i1 = idx[0], idx[-1]
    t = np.arange(i0, i1 + 1) / FS
    a, b = np.polyfit(t, edc[i0:i1 + 1], 1)
    return float(-60.0 / a) if a < 0 else 0.0

def noise_floor(h):
    return np.mean(h[int(0.9 * len(h)):] ** 2)

def clar(e, n0, ms):
    k = n0 + int(round(ms * FS / 1000))
    a = np.sum(e[n0:k]); b = np.sum(e[k:])
    v = 10 * np.log10(a / b) if b > 0 else 40.0
    return float(np.clip(v, -40, 40))

def drr(h, n0):
    w = int(round(0.0025 * FS))
    e = h ** 2
    a = np.sum(e[max(0, n0 - w):n0 + w + 1]); b = np.sum(e[n0 + w + 1:])
    return float(10 * np.log10(a / b))

LKW = dict(W0=0.01, per10=5, after_db=5, hi=20, lo=15, maxit=1)

ONSET_DB = 20.0

def measure(h, onset_db=None):
    if onset_db is None:
        onset_db = ONSET_DB
    ah = np.abs(h)
    n0 = int(np.where(ah >= ah.max() * 10 ** (-onset_db / 20))[0][0]) if onset_db > 0 else int(np.argmax(ah))
    npk = int(np.argmax(ah))
    out = {"c50": [], "c80": [], "edt": [], "t20": [], "t30": [], "inr": []}
    k5 = int(0.05 * FS); k8 = int(0.08 * FS)
    for fc in BANDS:
        e = bandfilt(h, fc)[n0:] ** 2
        tc, nl, b, a, pb = lundeby(e, **LKW)
        nb = len(e) // 160
        out["inr"].append(float(10 * np.log10(np.max(e[:nb * 160].reshape(nb, 160).mean(1)) / nl)))
        ee = e[:tc] - nl
        def cl(k):
            A = np.sum(ee[:k]); B = np.sum(ee[k:])
            if B <= 0 or A <= 0:
                return 40.0
            return float(np.clip(10 * np.log10(A / B), -40, 40))
        out["c50"].append(cl(k5)); out["c80"].append(cl(k8))
        s_ = np.cumsum(ee[::-1])[::-1]; s_ = np.maximum(s_, 1e-300)
        ed = 10 * np.log10(s_ / s_[0])
        out["edt"].append(fit_time(ed, 0.0, -10.0))
        out["t20"].append(fit_time(ed, -5.0, -25.0))
        out["t30"].append(fit_time(ed, -5.0, -35.0))
    sosb = signal.butter(3, [50.0, 7000.0], btype="band", fs=FS, output="sos")
    hbb = signal.sosfiltfilt(sosb, h)
    ahb = np.abs(hbb)
    n0 = int(np.where(ahb >= ahb.max() * 10 ** (-onset_db / 20))[0][0]) if onset_db > 0 else int(np.argmax(ahb))
    npk = int(np.argmax(ahb))
    e0 = hbb ** 2
    e = e0[n0:]
    tc, nl, b, a, pb = lundeby(e, **LKW)
    ee = e[:tc] - nl
    out["d50"] = float(np.clip(np.sum(ee[:k5]) / np.sum(ee), 0, 1))
    pre, post = 16, 40
    dirE = np.sum(e0[max(0, npk - pre):npk + post + 1]) - nl * (pre + post + 1)
    rest = np.sum(ee[npk - n0 + post + 1:])
    out["drr"] = float(10 * np.log10(dirE / rest)) if rest > 0 and dirE > 0 else 40.0
    out["pnr"] = float(10 * np.log10(np.max(e) / noise_floor(h)))
    return out

def doa(yn, M, c):
    nfft = 512
    win = signal.get_window("hann", nfft)
    X = np.array([pra.transform.stft.analysis(s_, nfft, nfft // 2, win=win).T for s_ in yn])
    L = (M - c).T[:2]
    ng = 360
    d = pra.doa.algorithms["NormMUSIC"](L, FS, nfft, c=343.0, num_src=1, n_grid=ng)
    d.locate_sources(X, freq_range=[300.0, 3500.0])
    g = np.asarray(d.grid.values, float)
    azg = np.rad2deg(np.asarray(d.grid.azimuth, float))
    k = int(np.argmax(g))
    step = 360.0 / ng
    a_, b_, c_ = g[(k - 1) % ng], g[k], g[(k + 1) % ng]
    den = a_ - 2 * b_ + c_
    off = 0.5 * (a_ - c_) / den if den != 0 else 0.0
    off = float(np.clip(off, -0.5, 0.5))
    az = float(azg[k] + off * step) % 360
    if np.ptp(M[:, 1]) < 1e-9 and az > 180:
        az = 360.0 - az
    par = float(10 * np.log10(np.max(g) / np.mean(g)))
    return az, par

def beam(yn, M, c, az, snr, mu=1e-2):
    Mn, N = yn.shape
    f = np.fft.rfftfreq(N, 1 / FS)
    u = np.array([np.cos(np.deg2rad(az)), np.sin(np.deg2rad(az)), 0.0])
    tau = -((M - c) @ u) / 343.0
    Dm = np.linalg.norm(M[:, None, :] - M[None, :, :], axis=2)
    Yf = np.fft.rfft(yn, axis=1)
    G = np.sinc(2 * f[:, None, None] * Dm[None] / 343.0) + mu * np.eye(Mn)[None]
    dv = np.exp(-2j * np.pi * f[:, None] * tau[None])
    gi = np.linalg.solve(G, dv[..., None])[..., 0]
    w = gi / np.sum(np.conj(dv) * gi, axis=1, keepdims=True)
    out = np.sum(np.conj(w) * Yf.T, axis=1)
    return np.fft.irfft(out, N)

def main():
    sc = json.load(sys.stdin)
    p = sc["parameters"]
    x, y, M, c, src, room = simulate(p)
    P = np.mean(y[0, :FS] ** 2)
    sig = np.sqrt(P / 10 ** (p["snr_db"] / 10))
    rng = np.random.default_rng(int(p["seed"]))
    yn = y + sig * rng.standard_normal(y.shape)
    h = deconv(x, yn[0])
    m = measure(h)
    az, par = doa(yn, M, c)
    yb = beam(yn, M, c, az, p["snr_db"])
    hb = deconv(x, yb)
    mb = measure(hb)
    res = {
        "azimuth_deg": az, "spectrum_par_db": par,
        "beam_c50_db": mb["c50"], "beam_drr_db": mb["drr"], "beam_inr_db": mb["inr"],
        "c50_db": m["c50"], "c80_db": m["c80"], "d50": m["d50"], "drr_db": m["drr"],
        "edt_s": m["edt"], "inr_db": m["inr"], "peak_to_noise_db": m["pnr"],
        "t20_s": m["t20"], "t30_s": m["t30"],
    }
    def clean(v, d=0.0):
        if isinstance(v, list):
            return [clean(a, d) for a in v]
        v = float(v)
        return v if np.isfinite(v) else d
    res = {k: clean(v) for k, v in res.items()}
    print(json.dumps(res))

if __name__ == "__main__":
    main()
