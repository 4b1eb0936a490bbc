import sys, json, math
import numpy as np
import scipy.signal as ss
import pyroomacoustics as pra

FS = 16000
C = 343.0
ROOMS = {"small": [4.0, 3.5, 2.7], "medium": [6.0, 4.5, 3.0], "large": [9.0, 7.0, 3.5]}
FINISH = {
    "studio": dict(west="plasterboard", east="facing_brick", south="curtains_fabric",
                   north="plasterboard", floor="carpet_tufted_9.5mm", ceiling="ceiling_fissured_tile"),
    "office": dict(west="plasterboard", east="plasterboard", south="glass_window",
                   north="plasterboard", floor="carpet_cotton", ceiling="ceiling_fissured_tile"),
    "chapel": dict(west="limestone_wall", east="limestone_wall", south="curtains_cotton_0.5",
                   north="limestone_wall", floor="marble_floor", ceiling="wooden_lining"),
    "classroom": dict(west="plasterboard", east="glass_window", south="plasterboard",
                      north="wooden_lining", floor="linoleum_on_concrete",
                      ceiling="ceiling_perforated_gypsum_board"),
}
BANDS = [125, 250, 500, 1000, 2000, 4000]
CFG = dict(
    eps=1e-6, ir_len=16000, filt_order=4, filtfilt=False, direct_ms=2.5,
    mu=None, doa_fmin=300.0, doa_fmax=4000.0, nfft=512,
)


def array_geom(name, centre):
    cx, cy, cz = centre
    if name.startswith("linear"):
        M = int(name[6]); d = float(name.split("_")[1][:-2]) / 100
        xs = (np.arange(M) - (M - 1) / 2) * d
        return np.array([[cx + x, cy, cz] for x in xs]).T
    M = int(name[8]); r = float(name.split("_")[1][:-2]) / 100
    a = 2 * np.pi * np.arange(M) / M
    return np.array([[cx + r * np.cos(t), cy + r * np.sin(t), cz] for t in a]).T


def sweep():
    n = np.arange(FS) / FS
    f1, f2, T = 50.0, 7000.0, 1.0
    L = T / np.log(f2 / f1)
    x = np.sin(2 * np.pi * f1 * L * (np.exp(n / L) - 1))
    nf = int(0.01 * FS)
    w = np.hanning(2 * nf)
    x[:nf] *= w[:nf]
    x[-nf:] *= w[nf:]
    return x


def simulate(p):
    dim = ROOMS[p["room_size"]]
    centre = [dim[0] / 2, dim[1] / 2, 1.2]
    mats = {k: pra.Material(v) for k, v in FINISH[p["finish"]].items()}
    room = pra.ShoeBox(dim, fs=FS, materials=mats, max_order=int(p["max_order"]),
                       air_absorption=True)
    az = math.radians(p["source_azimuth"]); d = p["source_distance"]
    src = [centre[0] + d * math.cos(az), centre[1] + d * math.sin(az), centre[2]]
    x = sweep()
    room.add_source(src, signal=x)
    R = array_geom(p["microphone_array"], centre)
    room.add_microphone_array(pra.MicrophoneArray(R, FS))
    room.simulate()
    sig = room.mic_array.signals
    N = 2 * FS
    if sig.shape[1] < N:
        sig = np.pad(sig, ((0, 0), (0, N - sig.shape[1])))
    sig = sig[:, :N]
    M = sig.shape[0]
    ps = np.mean(sig[0, :FS] ** 2)
    sigma = np.sqrt(ps / 10 ** (p["snr_db"] / 10))
    noise = np.random.default_rng(int(p["seed"])).standard_normal((M, N)) * sigma
    return sig + noise, x, R, np.array(centre), sigma


_INV = None


def inv_filter(x):
    global _INV
    if _INV is None:
        t = np.arange(len(x)) / FS
        L = 1.0 / np.log(7000.0 / 50.0)
        inv = x[::-1] * np.exp(-t / L)
        k = ss.fftconvolve(x, inv)
        _INV = inv / np.max(np.abs(k))
    return _INV


def deconv(y, x):
    inv = inv_filter(x)
    h = ss.fftconvolve(y, inv)[len(x) - 1:]
    return h[:CFG["ir_len"]]


def bandpass(h, fc):
    lo, hi = fc / np.sqrt(2), min(fc * np.sqrt(2), FS / 2 * 0.99)
    sos = ss.butter(3, [lo, hi], btype="band", fs=FS, output="sos")
    return ss.sosfilt(sos, h)


def onset(h):
    e = h ** 2
    return int(np.argmax(e >= e.max() * 0.01))


def noise_level(h):
    e = h ** 2
    return np.mean(e[-(len(e) // 10):])


def decay_params(hb, t0=None):
    e = hb ** 2
    if t0 is None:
        t0 = onset(hb)
    nl = noise_level(hb)
    E = e[t0:] - nl
    s = np.cumsum(E[::-1])[::-1]
    L = 10 * np.log10(np.maximum(s / s[0], 1e-30))
    t = np.arange(len(s)) / FS

    def fit(a, b):
        try:
            i0 = int(np.argmax(L <= a))
            i1 = int(np.argmax(L < b)) if (L < b).any() else len(L)
            if i1 - i0 < 2:
                return float("nan")
            k = np.polyfit(t[i0:i1], L[i0:i1], 1)[0]
            return -60.0 / k if k < 0 else float("nan")
        except Exception:
            return float("nan")
    edt = fit(0, -10)
    t20c, t30c = fit(-5, -25), fit(-5, -35)
    try:
        sl = lundeby_curve(hb, t0=t0)
        L = 10 * np.log10(np.maximum(sl / sl[0], 1e-30))
        t = np.arange(len(L)) / FS
    except Exception:
        return edt, t20c, t30c
    t20, t30 = fit(-5, -25), fit(-5, -35)
    if not np.isfinite(t20):
        t20 = t20c
    if not np.isfinite(t30):
        t30 = t30c
    return edt, t20, t30


def lundeby_curve(hb, marg=7.0, t0=None):
    e = hb ** 2
    N = noise_level(hb)
    if t0 is None:
        t0 = onset(hb)
    E = e[t0:]
    sm = np.convolve(E, np.ones(160) / 160, mode="same")
    Ld = 10 * np.log10(np.maximum(sm, 1e-300) / N)
    i0 = int(np.argmax(sm))
    r = np.where(Ld[i0:] < marg)[0]
    i1 = i0 + (r[0] if len(r) else len(Ld) - i0)
    if i1 - i0 < 3:
        raise ValueError
    k, c = np.polyfit(np.arange(i0, i1), Ld[i0:i1], 1)
    if k >= 0:
        raise ValueError
    tc = int(np.clip(-c / k, 10, len(E)))
    s = np.cumsum(E[:tc][::-1])[::-1]
    s = s + N * 10 / (np.log(10) * (-k))
    return s


def clarity(h, ms, t0=None):
    e = h ** 2
    if t0 is None:
        t0 = onset(h)
    n = int(round(ms * FS / 1000))
    nl = noise_level(h)
    E = e[t0:]
    sm = np.convolve(E, np.ones(160) / 160, mode="same")
    kk = int(np.argmax(sm <= nl))
    if kk > 0:
        E = E[:kk]
    early = E[:n].sum() - nl * min(n, len(E))
    late = E[n:].sum() - nl * max(0, len(E) - n)
    if late <= 0 or early <= 0:
        return 40.0
    return float(np.clip(10 * np.log10(early / late), -40, 40))


def drr(h):
    e = h ** 2
    t0 = int(np.argmax(e))
    n = int(CFG["direct_ms"] * FS / 1000)
    a = max(0, t0 - n)
    d = e[a:t0 + n + 1].sum()
    nl = noise_level(h)
    r = e[t0 + n + 1:].sum() - nl * len(e[t0 + n + 1:])
    if r <= 0:
        return 40.0
    return float(10 * np.log10(d / r))


def inr(h):
    e = h ** 2
    return float(10 * np.log10(e.max() / noise_level(h)))


def inr_band(h):
    e = h ** 2
    sm = np.convolve(e, np.ones(160) / 160, mode="same")
    return float(10 * np.log10(sm.max() / noise_level(h)))


def _music_prep(y, R, centre):
    f, t, Z = ss.stft(y, fs=FS, nperseg=512)
    sel = (f >= 300.0) & (f <= 3500.0)
    f = f[sel]; Z = Z[:, sel, :]
    En = []
    for k in range(len(f)):
        X = Z[:, k, :]
        Cm = X @ X.conj().T / X.shape[1]
        w, V = np.linalg.eigh(Cm)
        En.append(V[:, :-1])
    rel = (R - centre[:, None])[:2]
    return f, En, rel


def _music_spec(prep, grid_deg, norms=None, ret_norms=False):
    f, En, rel = prep
    G = np.radians(grid_deg)
    u = np.stack([np.cos(G), np.sin(G)])
    tau = (u.T @ rel) / C
    P = np.zeros(len(G))
    mx = []
    for k, fk in enumerate(f):
        A = np.exp(2j * np.pi * fk * tau)
        q = np.sum(np.abs(A.conj() @ En[k]) ** 2, axis=1)
        Pk = 1.0 / q
        m = Pk.max() if norms is None else max(norms[k], Pk.max())
        mx.append(m)
        P += Pk / m
    if ret_norms:
        return P / len(f), mx
    return P / len(f)


def doa(y, R, centre, linear):
    prep = _music_prep(y, R, centre)
    grid = np.arange(0, 360, 1.0)
    P = _music_spec(prep, grid)
    par = 10 * np.log10(P.max() / np.mean(P))
    Pm = P.copy()
    if linear:
        Pm[grid > 180] = -np.inf
    g2 = np.arange(0, 360, 0.1)
    P2, nm = _music_spec(prep, g2, ret_norms=True)
    if linear:
        P2[g2 > 180] = -np.inf
    g = g2[int(np.argmax(P2))]
    fine = np.arange(g - 0.2, g + 0.2 + 1e-9, 0.002)
    if linear:
        fine = fine[(fine >= 0) & (fine <= 180)]
    Pf = _music_spec(prep, fine, norms=nm)
    az = fine[int(np.argmax(Pf))] % 360
    return float(az), float(par)


def beam(y, R, centre, az, sigma, ps):
    M, N = y.shape
    n = N
    Y = np.fft.rfft(y, n)
    f = np.fft.rfftfreq(n, 1 / FS)
    rel = (R - centre[:, None])
    u = np.array([math.cos(math.radians(az)), math.sin(math.radians(az)), 0.0])
    tau = -(u @ rel) / C
    D = np.linalg.norm(R[:, :, None] - R[:, None, :], axis=0)
    mu = CFG["mu"] if CFG["mu"] is not None else 1e-2
    out = np.zeros(len(f), complex)
    for k in range(len(f)):
        G = np.sinc(2 * f[k] * D / C) + mu * np.eye(M)
        dvec = np.exp(-2j * np.pi * f[k] * tau)
        gi = np.linalg.solve(G, dvec)
        w = gi / np.vdot(dvec, gi)
        out[k] = np.vdot(w, Y[:, k])
    return np.fft.irfft(out, n)


def main():
    sc = json.load(sys.stdin)
    p = sc["parameters"]
    y, x, R, centre, sigma = simulate(p)
    h = deconv(y[0], x)
    res = {}
    linear = p["microphone_array"].startswith("linear")
    az, par = doa(y, R, centre, linear)
    res["azimuth_deg"] = az
    res["spectrum_par_db"] = par
    tb0 = onset(h)
    edt, t20, t30, c50, c80, inrs = [], [], [], [], [], []
    for fc in BANDS:
        hb = bandpass(h, fc)
        a, b, c = decay_params(hb, tb0)
        edt.append(a); t20.append(b); t30.append(c)
        c50.append(clarity(hb, 50, tb0)); c80.append(clarity(hb, 80, tb0)); inrs.append(inr_band(hb))
    res.update(edt_s=edt, t20_s=t20, t30_s=t30, c50_db=c50, c80_db=c80, inr_db=inrs)
    e = h ** 2; t0 = onset(h); nl = noise_level(h)
    E = e[t0:] - nl
    res["d50"] = float(E[:800].sum() / E.sum())
    res["drr_db"] = drr(h)
    res["peak_to_noise_db"] = inr(h)
    yb = beam(y, R, centre, az, sigma, None)
    hbm = deconv(yb, x)
    res["beam_drr_db"] = drr(hbm)
    bc, bi = [], []
    for fc in BANDS:
        hb = bandpass(hbm, fc)
        bc.append(clarity(hb, 50, onset(hbm))); bi.append(inr_band(hb))
    res["beam_c50_db"] = bc; res["beam_inr_db"] = bi
    for k, v in res.items():
        if isinstance(v, list):
            res[k] = [float(z) if np.isfinite(z) else 0.0 for z in v]
        elif not np.isfinite(v):
            res[k] = 0.0
    print(json.dumps(res))


if __name__ == "__main__":
    main()
