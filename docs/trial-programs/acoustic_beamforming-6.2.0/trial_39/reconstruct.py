import sys, json, math
import numpy as np
import scipy.signal as ss

FS = 16000
C = 343.0
ROOMS = {"small": [4.0, 3.5, 2.7], "medium": [6.0, 4.5, 3.0], "large": [9.0, 7.0, 3.5]}
FIN = {
    "office": dict(west="plasterboard", east="plasterboard", south="glass_window", north="plasterboard",
                   floor="carpet_cotton", ceiling="ceiling_fissured_tile"),
    "studio": dict(west="plasterboard", east="facing_brick", south="curtains_fabric", north="plasterboard",
                   floor="carpet_tufted_9.5mm", ceiling="ceiling_fissured_tile"),
    "classroom": dict(west="plasterboard", east="glass_window", south="plasterboard", north="wooden_lining",
                      floor="linoleum_on_concrete", ceiling="ceiling_perforated_gypsum_board"),
    "chapel": dict(west="limestone_wall", east="limestone_wall", south="curtains_cotton_0.5", north="limestone_wall",
                   floor="marble_floor", ceiling="wooden_lining"),
}
BANDS = [125, 250, 500, 1000, 2000, 4000]


def array_geom(name, centre):
    cx, cy, cz = centre
    if name.startswith("linear"):
        M = 4 if name == "linear4_5cm" else 8
        d = 0.05 if name == "linear4_5cm" else 0.04
        xs = (np.arange(M) - (M - 1) / 2) * d
        return np.array([[cx + x, cy, cz] for x in xs])
    M = 6 if name == "circular6_5cm" else 8
    r = 0.05 if name == "circular6_5cm" else 0.10
    a = 2 * np.pi * np.arange(M) / M
    return np.array([[cx + r * np.cos(t), cy + r * np.sin(t), cz] for t in a])


def sweep():
    T = 1.0
    f1, f2 = 50.0, 7000.0
    n = int(T * FS)
    t = np.arange(n) / FS
    L = T / np.log(f2 / f1)
    x = np.sin(2 * np.pi * f1 * L * (np.exp(t / L) - 1))
    nf = int(0.01 * FS)
    w = np.hanning(2 * nf)
    x[:nf] *= w[:nf]
    x[-nf:] *= w[nf:]
    return x


def simulate(p):
    import pyroomacoustics as pra
    dim = ROOMS[p["room_size"]]
    centre = [dim[0] / 2, dim[1] / 2, 1.2]
    mics = array_geom(p["microphone_array"], centre)
    az = math.radians(p["source_azimuth"])
    d = p["source_distance"]
    src = [centre[0] + d * math.cos(az), centre[1] + d * math.sin(az), 1.2]
    mats = pra.make_materials(**{k: v for k, v in FIN[p["finish"]].items()})
    room = pra.ShoeBox(dim, fs=FS, materials=mats, max_order=int(p["max_order"]), air_absorption=True)
    x = sweep()
    room.add_source(src, signal=x)
    room.add_microphone_array(pra.MicrophoneArray(mics.T, FS))
    room.simulate()
    sig = room.mic_array.signals
    N = 2 * FS
    out = np.zeros((sig.shape[0], N))
    n = min(N, sig.shape[1])
    out[:, :n] = sig[:, :n]
    return out, mics, np.array(centre), x


def add_noise(clean, p):
    M, N = clean.shape
    P = np.mean(clean[0, :FS] ** 2)
    sig = math.sqrt(P / 10 ** (p["snr_db"] / 10))
    rng = np.random.default_rng(int(p["seed"]))
    return clean + sig * rng.standard_normal((M, N))


def deconv(y, x, L=FS):
    T = 1.0
    Lr = T / np.log(7000.0 / 50.0)
    t = np.arange(len(x)) / FS
    inv = x[::-1] * np.exp(-t / Lr)
    full = ss.fftconvolve(y, inv)
    n0 = len(x) - 1
    return full[n0:n0 + L]


def octave(h, fc):
    lo = fc / np.sqrt(2)
    hi = min(fc * np.sqrt(2), FS / 2 * 0.999)
    sos = ss.butter(3, [lo, hi], btype="bandpass", fs=FS, output="sos")
    return ss.sosfiltfilt(sos, h)


def noise_level(e):
    # mean energy of the last 10 %
    n = len(e)
    return np.mean(e[int(0.9 * n):])


def edc_db(e):
    nl = noise_level(e)
    # truncation at crossing (Lundeby-lite): where smoothed energy hits noise*2
    ec = e.copy()
    sm = np.convolve(e, np.ones(160) / 160, mode="same")
    pk = int(np.argmax(sm))
    idx = np.where(sm[pk:] < nl * 1.0)[0]
    end = pk + idx[0] if len(idx) else len(e)
    ec = np.clip(e[:end] - nl, 0, None)
    sch = np.cumsum(ec[::-1])[::-1]
    sch = sch / max(sch[0], 1e-30)
    return 10 * np.log10(np.maximum(sch, 1e-30))


def decay_time(edc, start_db, end_db):
    i0 = np.where(edc <= start_db)[0]
    i1 = np.where(edc <= end_db)[0]
    if len(i0) == 0 or len(i1) == 0:
        # fallback: fit whatever available
        i0 = [0]
        i1 = [len(edc) - 1]
    a, b = i0[0], i1[0]
    if b <= a + 1:
        b = a + 2
    t = np.arange(a, min(b + 1, len(edc))) / FS
    y = edc[a:min(b + 1, len(edc))]
    if len(t) < 2:
        return 0.0
    k = np.polyfit(t, y, 1)[0]
    if k >= 0:
        return 0.0
    return float(-60.0 / k)


def clarity(e, t0, ms):
    n = int(ms * FS / 1000)
    a = np.sum(e[t0:t0 + n])
    b = np.sum(e[t0 + n:])
    if b <= 0:
        return 40.0
    return float(min(40.0, 10 * np.log10(max(a, 1e-30) / b)))


def onset(h):
    e = h ** 2
    pk = int(np.argmax(np.abs(h)))
    return pk


def trunc_point(e, nl, pk, win=80, k=3.16):
    sm = np.convolve(e, np.ones(win) / win, mode="same")
    idx = np.where(sm[pk:] < nl * k)[0]
    return pk + int(idx[0]) if len(idx) else len(e)


def db40(a, b):
    if b <= 0 or a <= 0:
        return 40.0
    return float(min(40.0, 10 * np.log10(a / b)))


def fit_decay(edc, a_db, b_db):
    i0 = np.where(edc <= a_db)[0]
    i1 = np.where(edc <= b_db)[0]
    if len(i0) == 0:
        return 0.0
    a = int(i0[0])
    b = int(i1[0]) if len(i1) else len(edc) - 1
    if b <= a + 1:
        b = min(len(edc) - 1, a + 2)
    if b <= a:
        return 0.0
    t = np.arange(a, b + 1) / FS
    k = np.polyfit(t, edc[a:b + 1], 1)[0]
    return float(-60.0 / k) if k < 0 else 0.0


def band_filter(h, fc):
    sos = ss.butter(3, [fc / np.sqrt(2), fc * np.sqrt(2)], btype="bandpass", fs=FS, output="sos")
    return ss.sosfilt(sos, h)


def measure(h, full=True):
    e = h ** 2
    pk = int(np.argmax(e))
    t0 = int(np.where(e > e[pk] * 0.01)[0][0])
    nl = noise_level(e)
    res = {}
    c50, c80, edt, t20, t30, inr = [], [], [], [], [], []
    for fc in BANDS:
        hb = band_filter(h, fc)
        eb = hb ** 2
        nb = noise_level(eb)
        nb2 = np.mean(eb[int(0.8 * len(eb)):])
        pb = int(np.argmax(eb))
        te = trunc_point(eb, nb2, pb, 320, 1.5)
        ee = eb[:te] - nb2
        c50.append(db40(np.sum(ee[t0:t0 + 800]), np.sum(ee[t0 + 800:])))
        c80.append(db40(np.sum(ee[t0:t0 + 1280]), np.sum(ee[t0 + 1280:])))
        sm = np.convolve(eb, np.ones(160) / 160, "valid")
        nb5 = np.mean(eb[int(0.5 * len(eb)):])
        inr.append(float(10 * np.log10(np.max(sm) / max(nb5, 1e-30))))
        if full:
            def edc_of(te_, sub):
                x_ = eb[t0:te_] - (nb if sub else 0.0)
                sch = np.cumsum(x_[::-1])[::-1]
                if len(sch) == 0 or sch[0] <= 0:
                    return np.array([0.0, -100.0])
                return 10 * np.log10(np.maximum(sch, 1e-30) / sch[0])
            te2 = trunc_point(eb, nb2, pb, 800, 5.0)
            edt.append(fit_decay(edc_of(te2, False), 0.0, -10.0))
            te3 = trunc_point(eb, nb2, pb, 800, 3.0)
            t20.append(fit_decay(edc_of(te3, False), -5.0, -25.0))
            te4 = trunc_point(eb, nb, pb, 800, 5.0)
            t30.append(fit_decay(edc_of(te4, True), -5.0, -35.0))
    te = trunc_point(e, nl, pk, 80, 1.0)
    ee = e[:te] - nl
    w = 40
    d = np.sum(ee[max(0, pk - w):pk + w + 1])
    r = np.sum(ee[pk + w + 1:])
    res["c50"] = c50
    res["inr"] = inr
    res["drr"] = db40(d, r)
    if full:
        res["c80"] = c80
        res["edt"] = edt
        res["t20"] = t20
        res["t30"] = t30
        te = trunc_point(e, nl, pk, 80, 3.16)
        a = np.sum(e[t0:min(te, t0 + 800)])
        b = np.sum(e[t0:te])
        res["d50"] = float(min(0.9999, a / b)) if b > 0 else 0.9999
        res["pnr"] = float(10 * np.log10(np.max(e) / max(nl, 1e-30)))
    return res


def doa(y, mics, centre):
    nfft = 1024
    _, _, X = ss.stft(y, fs=FS, nperseg=nfft, noverlap=nfft // 2)
    f = np.fft.rfftfreq(nfft, 1 / FS)
    sel = (f >= 100) & (f <= 7000)
    Xs = X[:, sel, :]
    fs_ = f[sel]
    Xn = Xs / np.maximum(np.abs(Xs), 1e-12)
    Cm = np.einsum("mft,nft->fmn", Xn, Xn.conj())
    P = (mics - centre)[:, :2]

    def spec(grid):
        U = np.stack([np.cos(np.radians(grid)), np.sin(np.radians(grid))], 1)
        tau = P @ U.T / C
        A = np.exp(2j * np.pi * fs_[None, :, None] * tau[:, None, :])
        return np.real(np.einsum("mfg,fmn,nfg->g", A.conj(), Cm, A))

    grid = np.arange(0, 360, 1.0)
    sp = spec(grid)
    k = int(np.argmax(sp))
    fine = grid[k] + np.arange(-1.0, 1.0001, 0.01)
    spf = spec(fine)
    az = float(fine[int(np.argmax(spf))] % 360.0)
    if np.ptp(P[:, 1]) < 1e-9 and az > 180.0:
        az = 360.0 - az
    spp = sp - sp.min() + 1e-12
    par = float(10 * np.log10(spp.max() / spp.mean())) if sp.min() <= 0 else float(10 * np.log10(sp.max() / sp.mean()))
    return az, par


def beamform(y, mics, centre, az_deg, reg=1e-2):
    M, N = y.shape
    Y = np.fft.rfft(y, axis=1)
    f = np.fft.rfftfreq(N, 1 / FS)
    pos = (mics - centre)
    u = np.array([np.cos(np.radians(az_deg)), np.sin(np.radians(az_deg)), 0.0])
    dist = np.linalg.norm(pos[:, None, :] - pos[None, :, :], axis=2)
    tau = pos @ u / C  # arrival earlier by tau
    out = np.zeros(len(f), dtype=complex)
    I = np.eye(M)
    for i, fi in enumerate(f):
        G = np.sinc(2 * fi * dist / C) + reg * I
        dvec = np.exp(2j * np.pi * fi * tau)
        gi = np.linalg.solve(G, dvec)
        w = gi / (np.conj(dvec) @ gi)
        out[i] = np.conj(w) @ Y[:, i]
    return np.fft.irfft(out, N)


def main():
    sc = json.load(sys.stdin)
    p = sc["parameters"]
    clean, mics, centre, x = simulate(p)
    y = add_noise(clean, p)
    h0 = deconv(y[0], x)
    m0 = measure(h0)
    az, par = doa(y, mics, centre)
    yb = beamform(y, mics, centre, az)
    hb = deconv(yb, x)
    mb = measure(hb, full=False)
    out = {
        "azimuth_deg": az,
        "beam_c50_db": mb["c50"],
        "beam_drr_db": mb["drr"],
        "beam_inr_db": mb["inr"],
        "c50_db": m0["c50"],
        "c80_db": m0["c80"],
        "d50": m0["d50"],
        "drr_db": m0["drr"],
        "edt_s": m0["edt"],
        "inr_db": m0["inr"],
        "peak_to_noise_db": m0["pnr"],
        "spectrum_par_db": par,
        "t20_s": m0["t20"],
        "t30_s": m0["t30"],
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
