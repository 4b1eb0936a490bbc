import sys, json, os
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np
import scipy.signal as sps

FS = 16000
C = 343.0
ROOMS = {"small": [4.0, 3.5, 2.7], "medium": [6.0, 4.5, 3.0], "large": [9.0, 7.0, 3.5]}
FINISH = {
    "studio": dict(west="plasterboard", east="facing_brick", south="curtains_fabric", north="plasterboard",
                   floor="carpet_tufted_9.5mm", ceiling="ceiling_fissured_tile"),
    "office": dict(west="plasterboard", east="plasterboard", south="glass_window", north="plasterboard",
                   floor="carpet_cotton", ceiling="ceiling_fissured_tile"),
    "classroom": dict(west="plasterboard", east="glass_window", south="plasterboard", north="wooden_lining",
                      floor="linoleum_on_concrete", ceiling="ceiling_perforated_gypsum_board"),
    "chapel": dict(west="limestone_wall", east="limestone_wall", south="curtains_cotton_0.5", north="limestone_wall",
                   floor="marble_floor", ceiling="wooden_lining"),
}
BANDS = [125.0, 250.0, 500.0, 1000.0, 2000.0, 4000.0]
H = 1.2
NOBEAM = False


def array_geom(name, centre):
    cx, cy = centre[0], centre[1]
    if name.startswith("linear"):
        M = 4 if name == "linear4_5cm" else 8
        d = 0.05 if name == "linear4_5cm" else 0.04
        xs = (np.arange(M) - (M - 1) / 2) * d
        return np.array([[cx + x, cy, H] for x in xs])
    M = 6 if name == "circular6_5cm" else 8
    r = 0.05 if name == "circular6_5cm" else 0.10
    a = 2 * np.pi * np.arange(M) / M
    return np.array([[cx + r * np.cos(t), cy + r * np.sin(t), H] for t in a])


def sweep():
    T = 1.0
    N = int(FS * T)
    t = np.arange(N) / FS
    f1, f2 = 50.0, 7000.0
    L = np.log(f2 / f1)
    x = np.sin(2 * np.pi * f1 * T / L * (np.exp(t / T * L) - 1))
    nf = int(0.010 * FS)
    w = np.hanning(2 * nf)
    x[:nf] *= w[:nf]
    x[-nf:] *= w[nf:]
    return x


def simulate(p):
    import pyroomacoustics as pra
    dim = ROOMS[p["room_size"]]
    mats = pra.make_materials(**FINISH[p["finish"]])
    room = pra.ShoeBox(dim, fs=FS, materials=mats, max_order=int(p["max_order"]), air_absorption=True)
    centre = np.array([dim[0] / 2, dim[1] / 2, H])
    az = np.deg2rad(p["source_azimuth"])
    dist = p["source_distance"]
    src = centre + dist * np.array([np.cos(az), np.sin(az), 0.0])
    s = sweep()
    room.add_source(src, signal=s)
    mics = array_geom(p["microphone_array"], centre)
    room.add_microphone_array(pra.MicrophoneArray(mics.T, FS))
    room.simulate()
    sig = room.mic_array.signals
    n = 2 * FS
    out = np.zeros((sig.shape[0], n))
    m = min(n, sig.shape[1])
    out[:, :m] = sig[:, :m]
    rng = np.random.default_rng(int(p["seed"]))
    noise = rng.standard_normal(out.shape)
    p0 = np.mean(out[0, :FS] ** 2)
    sigma = np.sqrt(p0 / 10 ** (p["snr_db"] / 10))
    return out + sigma * noise, mics, centre, s


def measure_ir(y, s, length=FS):
    n = len(y)
    Y = np.fft.rfft(y, n)
    X = np.fft.rfft(s, n)
    f = np.fft.rfftfreq(n, 1 / FS)
    if DECONV in ("farina", "farina0"):
        T = 1.0
        t = np.arange(FS) / FS
        L = np.log(7000.0 / 50.0)
        src = np.sin(2 * np.pi * 50.0 * T / L * (np.exp(t / T * L) - 1)) if DECONV == "farina0" else s
        inv = src[::-1] * np.exp(-t * L / T)
        m = len(y) + len(inv) - 1
        h = sps.fftconvolve(y, inv)
        return h[FS - 1:FS - 1 + len(y)]
    if DECONV == "nofade":
        T = 1.0
        t = np.arange(FS) / FS
        L = np.log(7000.0 / 50.0)
        x0 = np.sin(2 * np.pi * 50.0 * T / L * (np.exp(t / T * L) - 1))
        X0 = np.fft.rfft(x0, n)
        f = np.fft.rfftfreq(n, 1 / FS)
        band = (f >= 50) & (f <= 7000)
        Hf = np.zeros_like(Y)
        Hf[band] = Y[band] / X0[band]
    else:
        Hf = Y * np.conj(X) / (np.abs(X) ** 2 + LAM * np.mean(np.abs(X) ** 2))
    h = np.fft.irfft(Hf, n)
    return h


def octave(h, fc):
    lo, hi = fc / np.sqrt(2), fc * np.sqrt(2)
    sos = sps.butter(3, [lo, hi], btype="band", fs=FS, output="sos")
    return sps.sosfilt(sos, h)


LAM = 0.05
DECONV = 'farina'
NSTART = int(0.9 * FS)
NEND = FS
ILEN = FS


def noise_level(e):
    return np.mean(e[NSTART:NEND])


def edc_db(e, nl):
    # truncate where energy envelope meets noise
    x = np.cumsum((e - nl)[::-1])[::-1]
    x = np.maximum(x, 1e-30)
    return 10 * np.log10(x / x[0])


def decay_time(edc, lo, hi):
    i0 = np.argmax(edc <= lo)
    idx = np.where(edc <= hi)[0]
    if len(idx) == 0:
        i1 = len(edc) - 1
    else:
        i1 = idx[0]
    if i1 <= i0 + 1:
        return 0.0
    t = np.arange(i0, i1) / FS
    a, b = np.polyfit(t, edc[i0:i1], 1)
    return float(-60.0 / a) if a < 0 else 0.0


def onset(h):
    e = h ** 2
    return int(np.argmax(e))


def clarity(e, i0, ms, nl):
    k = i0 + int(ms * FS / 1000)
    early = np.sum(e[i0:k]) - nl * (k - i0)
    late = np.sum(e[k:]) - nl * (len(e) - k)
    if late <= 0 or early <= 0:
        return 40.0
    return float(np.clip(10 * np.log10(early / late), -40, 40))


DRR_W = 50
DRR_THR = 10.0
DRR_WIN = 2.5
DRR_SUB = False


def drr(h, nl, i0=None):
    e = h ** 2
    if i0 is None:
        i0 = int(np.argmax(e))
    eo = e[i0:]
    tc = trunc_point(eo, nl, DRR_W, DRR_THR)
    w = int(DRR_WIN * FS / 1000)
    d = np.sum(e[max(0, i0 - w):i0 + w + 1])
    r = np.sum(eo[w + 1:tc])
    if DRR_SUB:
        r -= nl * max(tc - w - 1, 0)
    if r <= 0:
        return 40.0
    return float(10 * np.log10(d / r))


CL_W = 100
CL_THR = 3.0
CL_SUB = True
LW = 0.03
LP = 10
LH = 5.0
FALLBACK = True
COMP = True
CGUARD = 0.5


def trunc_point(e, nl, W=None, thr=None):
    W = CL_W if W is None else W
    thr = CL_THR if thr is None else thr
    w = int(W * 16)
    sm = np.convolve(e, np.ones(w) / w, "same")
    pk = int(np.argmax(sm))
    below = np.where(sm[pk:] < nl * 10 ** (thr / 10))[0]
    return pk + below[0] if len(below) else len(e)


def clar(et, ms, nl, total=False):
    k = int(ms * FS / 1000)
    ea = et[:k].sum()
    la = et[k:].sum()
    if CL_SUB:
        ea -= nl * min(k, len(et))
        la -= nl * max(len(et) - k, 0)
    if total:
        tot = ea + max(la, 0)
        if tot <= 0:
            return 0.9999
        return float(np.clip(ea / tot, 0, 0.9999))
    if la <= 0 or ea <= 0:
        return 40.0
    return float(np.clip(10 * np.log10(ea / la), -40, 40))


def band_energy(hfull, fc):
    hb = octave(hfull[:ILEN], fc)
    return hb ** 2


PRE = 32
LUND_CL = dict(W=0.01, p=5, head=5.0)
CL_MODE = "hyb"


def clar2(e, i0, tc, nl, ms, total=False):
    """early [i0-PRE, i0+k), late [i0+k, i0+tc), noise subtracted."""
    st = max(0, i0 - PRE)
    k = i0 + int(ms * FS / 1000)
    end = i0 + tc
    ea = e[st:min(k, end)].sum() - nl * max(min(k, end) - st, 0)
    la = e[k:end].sum() - nl * max(end - k, 0) if end > k else 0.0
    if total:
        tot = ea + la
        if tot <= 0:
            return 0.9999
        return float(np.clip(ea / tot, 0, 0.9999))
    if la <= 0 or ea <= 0:
        return 40.0
    return float(np.clip(10 * np.log10(ea / la), -40, 40))


def room_params(hfull, i0=None):
    import lund
    h = hfull[:ILEN]
    e = h ** 2
    if i0 is None:
        i0 = onset(h)
    out = dict(c50=[], c80=[], edt=[], t20=[], t30=[], inr=[])
    for fc in BANDS:
        eb = band_energy(hfull, fc)
        nl = noise_level(eb)
        eo = eb[i0:]
        tcl, Cc, nll, A, B, ndb = lund.lundeby(eo, W=LW, p=LP, head=LH)
        if CL_MODE.startswith("L"):
            sub = "s" in CL_MODE
            cmp_ = "c" in CL_MODE
            nn = nll if "n" in CL_MODE else nl
            st = max(0, i0 - PRE)
            for ms, key in ((50, "c50"), (80, "c80")):
                k = i0 + int(ms * FS / 1000)
                end = i0 + tcl
                ea = eb[st:min(k, end)].sum() - (nn * max(min(k, end) - st, 0) if sub else 0)
                la = (eb[k:end].sum() - (nn * max(end - k, 0) if sub else 0)) if end > k else 0.0
                if cmp_:
                    la += Cc
                out[key].append(float(np.clip(10 * np.log10(ea / la), -40, 40)) if (la > 0 and ea > 0) else 40.0)
        elif CL_MODE == "lund":
            tcc = lund.lundeby(eo, **LUND_CL)[0]
            out["c50"].append(clar2(eb, i0, tcc, nl, 50))
            out["c80"].append(clar2(eb, i0, tcc, nl, 80))
        elif CL_MODE in ("thr2n", "hyb"):
            tc = trunc_point(eo, nll)
            for ms, key in ((50, "c50"), (80, "c80")):
                if CL_MODE == "hyb" and tcl <= int(ms * FS / 1000):
                    out[key].append(40.0)
                else:
                    out[key].append(clar2(eb, i0, tc, nll, ms))
        elif CL_MODE == "thr2":
            tc = trunc_point(eo, nl)
            out["c50"].append(clar2(eb, i0, tc, nl, 50))
            out["c80"].append(clar2(eb, i0, tc, nl, 80))
        elif CL_MODE == "full":
            tc = len(eo)
            out["c50"].append(clar2(eb, i0, tc, nl, 50))
            out["c80"].append(clar2(eb, i0, tc, nl, 80))
        else:
            tc = trunc_point(eo, nl)
            et = eo[:tc]
            out["c50"].append(clar(et, 50, nl))
            out["c80"].append(clar(et, 80, nl))
        v = int(0.010 * FS)
        nbk = len(eo) // v
        bm = eo[:nbk * v].reshape(nbk, v).mean(1).max()
        out["inr"].append(float(10 * np.log10(bm / nll)))
        if not COMP:
            Cc = 0.0
        if Cc > CGUARD * eo[:tcl].sum():
            Cc = 0.0
        c = np.cumsum(eo[:tcl][::-1])[::-1] + Cc
        c = np.maximum(c, 1e-30)
        ed = 10 * np.log10(c / c[0])
        out["edt"].append(decay_time(ed, 0.0, -10.0))
        out["t20"].append(decay_time(ed, -5.0, -25.0))
        out["t30"].append(decay_time(ed, -5.0, -35.0))
    nl = noise_level(e)
    eo = e[i0:]
    tcb = lund.lundeby(eo, **LUND_CL)[0]
    out["d50"] = clar2(e, i0, tcb, nl, 50, total=True)
    w = 32
    d = np.sum(e[max(0, i0 - w):i0 + w + 1])
    r = np.sum(eo[w + 1:tcb]) - nl * max(tcb - w - 1, 0)
    out["drr"] = float(10 * np.log10(d / r)) if r > 0 else 40.0
    out["pnr"] = float(10 * np.log10(np.max(e) / nl))
    out["i0"] = i0
    return out


def steering(mics, centre, az, f):
    u = np.array([np.cos(az), np.sin(az), 0.0])
    tau = -(mics - centre) @ u / C  # arrival delay relative to centre
    return np.exp(-2j * np.pi * np.outer(f, tau))  # (F, M)


DOA_NFFT = 512
DOA_FR = [300, 3550]
DOA_STEP = 1.0


def doa(y, mics, centre, linear):
    import pyroomacoustics as pra
    nfft = DOA_NFFT
    w = pra.hann(nfft)
    X = np.array([pra.transform.stft.analysis(y[m], nfft, nfft // 2, win=w).T for m in range(len(y))])
    L = (mics[:, :2] - centre[:2]).T
    step = DOA_STEP
    az = np.deg2rad(np.arange(0, 180 + 1e-9 if linear else 360, step))
    d = pra.doa.algorithms["NormMUSIC"](L, FS, nfft, c=C, num_src=1, azimuth=az)
    d.locate_sources(X, freq_range=DOA_FR)
    G = np.asarray(d.grid.values, dtype=float)
    k = int(np.argmax(G))
    n = len(G)
    a = k * step
    if not (linear and (k == 0 or k == n - 1)):
        ym, y0, yp = G[(k - 1) % n], G[k], G[(k + 1) % n]
        den = ym - 2 * y0 + yp
        if den != 0:
            a = a + 0.5 * (ym - yp) / den * step
    par = float(10 * np.log10(G.max() / G.mean()))
    return float(a % 360), par


MU = 1e-2
MUK = 1.0


BEAM_I0 = True
BF_MODE = "fft"
BF_NFFT = 512


def bf_weights(mics, centre, az, f, mu):
    D = steering(mics, centre, az, f)
    dist = np.linalg.norm(mics[:, None, :] - mics[None, :, :], axis=2)
    M = mics.shape[0]
    G = np.sinc(2 * f[:, None, None] * dist[None] / C) + mu * np.eye(M)[None]
    gi = np.linalg.solve(G, D[:, :, None])[:, :, 0]
    den = np.sum(np.conj(D) * gi, axis=1)
    return gi / den[:, None]


def beamform(y, mics, centre, az, mu=None):
    mu = MU if mu is None else mu
    n = y.shape[1]
    if BF_MODE == "fft":
        Y = np.fft.rfft(y, axis=1)
        f = np.fft.rfftfreq(n, 1 / FS)
        W = bf_weights(mics, centre, az, f, mu)
        out = np.sum(np.conj(W).T * Y, axis=0)
        return np.fft.irfft(out, n)
    nf = BF_NFFT
    f, t, Z = sps.stft(y, fs=FS, nperseg=nf, noverlap=nf // 2)
    W = bf_weights(mics, centre, az, f, mu)
    out = np.sum(np.conj(W).T[:, :, None] * Z, axis=0)
    _, b = sps.istft(out, fs=FS, nperseg=nf, noverlap=nf // 2)
    bb = np.zeros(n)
    m = min(n, len(b))
    bb[:m] = b[:m]
    return bb


def main():
    sc = json.load(sys.stdin)
    p = sc["parameters"]
    y, mics, centre, s = simulate(p)
    res = analyse(p, y)
    res = sanitize(res)
    print(json.dumps(res))


def _fix(v, default):
    try:
        v = float(v)
    except Exception:
        return default
    if not np.isfinite(v):
        return default
    return v


def sanitize(res):
    out = {}
    for k, v in res.items():
        if isinstance(v, (list, tuple, np.ndarray)):
            out[k] = [_fix(x, 0.0) for x in v]
        else:
            out[k] = _fix(v, 0.0)
    return out


def analyse(p, y):
    dim = ROOMS[p["room_size"]]
    centre = np.array([dim[0] / 2, dim[1] / 2, H])
    mics = array_geom(p["microphone_array"], centre)
    s = sweep()
    h = measure_ir(y[0], s)
    rp = room_params(h)
    linear = p["microphone_array"].startswith("linear")
    az, par = doa(y, mics, centre, linear)
    if NOBEAM: return dict(rp=rp)
    b = beamform(y, mics, centre, np.deg2rad(az), mu=(MUK * 10 ** (-p['snr_db'] / 10) if MU == 'snr' else MU))
    hb = measure_ir(b, s)
    bp = room_params(hb, rp['i0'] if BEAM_I0 else None)
    res = {
        "azimuth_deg": az,
        "beam_c50_db": bp["c50"],
        "beam_drr_db": bp["drr"],
        "beam_inr_db": bp["inr"],
        "c50_db": rp["c50"],
        "c80_db": rp["c80"],
        "d50": rp["d50"],
        "drr_db": rp["drr"],
        "edt_s": rp["edt"],
        "inr_db": rp["inr"],
        "peak_to_noise_db": rp["pnr"],
        "spectrum_par_db": par,
        "t20_s": rp["t20"],
        "t30_s": rp["t30"],
    }
    return res


if __name__ == "__main__":
    main()
