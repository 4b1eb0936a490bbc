import numpy as np
import scipy.signal as ss
from sim import sweep, FS, C

BANDS = [125, 250, 500, 1000, 2000, 4000]
CFG = dict(bb="bp", reg=1.5e-3, L=16000, tailfrac=0.1, dw=0.0025, border=3, filtfilt=False,
           mu=1e-2, doa="SRP", nfft_doa=512, freq_range=(300, 3500))

_S = sweep()


def deconv(y, cfg=CFG):
    s = _S
    n = cfg.get("n") or (len(y) + len(s))
    X = np.fft.rfft(s, n)
    Y = np.fft.rfft(y, n)
    H = Y * np.conj(X) / (np.abs(X) ** 2 + cfg["reg"] * np.max(np.abs(X) ** 2))
    return np.fft.irfft(H, n)[:cfg["L"]]


def noise_floor(e, cfg=CFG):
    nt = int(len(e) * cfg["tailfrac"])
    return e[-nt:].mean()


def band(h, fc, cfg=CFG):
    sos = ss.butter(cfg["border"], [fc / np.sqrt(2), fc * np.sqrt(2)], "bandpass", fs=FS, output="sos")
    return ss.sosfiltfilt(sos, h) if cfg["filtfilt"] else ss.sosfilt(sos, h)


def db(x):
    return 10 * np.log10(max(x, 1e-300))


from lund import lundeby


def fitT(L, t, a, b):
    i0 = int(np.argmax(L <= a))
    i1 = int(np.argmax(L < b)) if np.any(L < b) else len(L)
    if i1 - i0 < 2:
        return float("nan")
    sl = np.polyfit(t[i0:i1], L[i0:i1], 1)[0]
    return -60.0 / sl if sl < 0 else float("nan")


def cratio(y, n):
    late = y[n:].sum()
    early = y[:n].sum()
    if late <= 0:
        return 40.0
    if early <= 0:
        return -40.0
    return float(np.clip(10 * np.log10(early / late), -40, 40))


def analyse_energy(e, p, cfg=CFG):
    x = e[p:p + cfg.get("L2", 16000)]
    tc, nf, top = lundeby(x, cfg)
    y = x[:tc] - nf
    yd = x[:tc] - (nf if cfg.get("dsub", 0) else 0)
    sch = np.cumsum(yd[::-1])[::-1]
    sch = np.maximum(sch, 1e-300)
    L = 10 * np.log10(sch / sch[0])
    t = np.arange(len(L)) / FS
    return dict(edt=fitT(L, t, 0, -10), t20=fitT(L, t, -5, -25), t30=fitT(L, t, -5, -35),
                c50=cratio(y, int(0.05 * FS)), c80=cratio(y, int(0.08 * FS)),
                inr=db(top / nf), tc=tc, nf=nf, y=y)


def measure(y, cfg=CFG, pk_ref=None, pk_drr=None):
    h = deconv(y, cfg)
    e = h ** 2
    pk = int(np.argmax(e)) if pk_ref is None else int(pk_ref)
    out = dict(edt=[], t20=[], t30=[], c50=[], c80=[], inr=[])
    for fc in BANDS:
        hb = band(h, fc, cfg)
        r = analyse_energy(hb ** 2, pk, cfg)
        for k in out:
            out[k].append(r[k])
    r = analyse_energy(e, pk, cfg)
    if cfg.get("bb") == "bp":
        sos = ss.butter(3, [125 / np.sqrt(2), 4000 * np.sqrt(2)], "bandpass", fs=FS, output="sos")
        c50 = analyse_energy(ss.sosfilt(sos, h) ** 2, pk, cfg)["c50"]
    else:
        c50 = r["c50"]
    d50 = 1.0 / (1.0 + 10 ** (-c50 / 10))
    W = int(cfg["dw"] * FS)
    nf = noise_floor(e, cfg)
    ec = e - nf
    pd = pk if pk_drr is None else int(pk_drr)
    d = ec[max(0, pd - W):pd + W + 1].sum()
    tce = pk + r["tc"] if cfg.get("drr_trunc", 1) else len(e)
    rv = ec[pd + W + 1:tce].sum()
    drr = float(np.clip(db(d) - db(rv), -40, 40)) if rv > 0 else 40.0
    ptn = db(e.max() / nf)
    out.update(drr=drr, d50=d50, ptn=ptn, pk=pk)
    return out, h


def doa(rec, mics, centre, cfg=CFG):
    from mydoa import spectrum
    pos = mics - centre
    lin = np.ptp(pos[:, 1]) == 0
    step = 1.0
    g = np.arange(181) * step if lin else np.arange(360) * step
    P = spectrum(rec, pos, nfft=512, fr=(300, 3500), grid=g)
    k = int(np.argmax(P))
    az = g[k]
    n = len(P)
    if lin:
        if 0 < k < n - 1:
            y0, y1, y2 = P[k - 1], P[k], P[k + 1]
        else:
            y0 = y1 = y2 = P[k]
    else:
        y0, y1, y2 = P[(k - 1) % n], P[k], P[(k + 1) % n]
    den = y0 - 2 * y1 + y2
    if den != 0:
        az += step * 0.5 * (y0 - y2) / den
    par = 10 * np.log10(P.max() / P.mean())
    return float(az % 360), float(par)


def beam_weights(f, mics, centre, az_deg, cfg=CFG):
    M = len(mics)
    pos = mics - centre
    u = np.array([np.cos(np.deg2rad(az_deg)), np.sin(np.deg2rad(az_deg)), 0.0])
    tau = -(pos @ u) / C
    D = np.linalg.norm(pos[:, None, :] - pos[None, :, :], axis=2)
    W = np.zeros((len(f), M), complex)
    for k in range(len(f)):
        d = np.exp(-2j * np.pi * f[k] * tau)
        G = np.sinc(2 * f[k] * D / C) + cfg["mu"] * np.eye(M)
        gi = np.linalg.solve(G, d)
        W[k] = gi / (np.conj(d) @ gi)
    return W


def beam(rec, mics, centre, az_deg, cfg=CFG):
    if cfg.get("stft"):
        import scipy.signal as ss2
        nfft = cfg["stft"]
        f, t, X = ss2.stft(rec, FS, nperseg=nfft, noverlap=nfft // 2)
        W = beam_weights(f, mics, centre, az_deg, cfg)
        Yf = np.einsum("km,mkt->kt", np.conj(W), X)
        _, y = ss2.istft(Yf, FS, nperseg=nfft, noverlap=nfft // 2)
        out = np.zeros(rec.shape[1])
        n = min(len(y), len(out))
        out[:n] = y[:n]
        return out
    M, N = rec.shape
    n = N
    Xf = np.fft.rfft(rec, n, axis=1)
    f = np.fft.rfftfreq(n, 1 / FS)
    pos = mics - centre
    u = np.array([np.cos(np.deg2rad(az_deg)), np.sin(np.deg2rad(az_deg)), 0.0])
    tau = -(pos @ u) / C  # arrival time relative to centre (plane wave)
    D = np.linalg.norm(pos[:, None, :] - pos[None, :, :], axis=2)
    Y = np.zeros(len(f), complex)
    for k in range(len(f)):
        d = np.exp(-2j * np.pi * f[k] * tau)
        if cfg.get("coh", "sinc") == "j0":
            from scipy.special import j0
            G = j0(2 * np.pi * f[k] * D / C) + cfg["mu"] * np.eye(M)
        else:
            G = np.sinc(2 * f[k] * D / C) + cfg["mu"] * np.eye(M)
        gi = np.linalg.solve(G, d)
        w = gi / (np.conj(d) @ gi)
        Y[k] = np.conj(w) @ Xf[:, k]
    return np.fft.irfft(Y, n)
