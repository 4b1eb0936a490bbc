import sys, json, warnings
warnings.filterwarnings("ignore")
import numpy as np
import scipy.signal as ss
import pyroomacoustics as pra

FS = 16000
C = 343.0
ROOMS = {"small": [4.0, 3.5, 2.7], "medium": [6.0, 4.5, 3.0], "large": [9.0, 7.0, 3.5]}
FINISH = {
    "classroom": dict(west="plasterboard", east="glass_window", south="plasterboard", north="wooden_lining",
                      floor="linoleum_on_concrete", ceiling="ceiling_perforated_gypsum_board"),
    "studio": dict(west="plasterboard", east="facing_brick", south="curtains_fabric", north="plasterboard",
                   floor="carpet_tufted_9.5mm", ceiling="ceiling_fissured_tile"),
    "chapel": dict(west="limestone_wall", east="limestone_wall", south="curtains_cotton_0.5", north="limestone_wall",
                   floor="marble_floor", ceiling="wooden_lining"),
    "office": dict(west="plasterboard", east="plasterboard", south="glass_window", north="plasterboard",
                   floor="carpet_cotton", ceiling="ceiling_fissured_tile"),
}
BANDS = [125, 250, 500, 1000, 2000, 4000]
CFG = dict(fade=160, bandorder=3, direct_ms=2.5, doa="NormMUSIC", nfft=256, fmin=100.0, fmax=4000.0, step=0.1, dnorm=True, hopdiv=2,
           reg=1e-2, irlen=16000, compensate_delay=False, lw=160, lit=5, lp=5, lmargin=5.0, lhi=5.0, trunc_bb=True, comp=False, inrw=160, inrw125=208, inrw125b=200, bp=0, dec="far", flo=50.0, fhi=7000.0, bpff=False, bandff=False, mode="sub", onset_all=True, subfrac=0.9, edcstart=lambda o: o)


def array_mics(name, centre):
    cx, cy, cz = centre
    if name.startswith("linear"):
        M = int(name[6]); d = 0.05 if name.endswith("5cm") else 0.04
        xs = (np.arange(M) - (M - 1) / 2) * d
        return np.array([[cx + x, cy, cz] for x in xs])
    M = int(name[8]); r = 0.05 if name.endswith("5cm") else 0.10
    ph = 2 * np.pi * np.arange(M) / M
    return np.array([[cx + r * np.cos(p), cy + r * np.sin(p), cz] for p in ph])


def sweep():
    n = FS
    t = np.arange(n) / FS
    f1, f2, T = 50.0, 7000.0, 1.0
    L = T / np.log(f2 / f1)
    s = np.sin(2 * np.pi * f1 * L * (np.exp(t / L) - 1))
    nf = CFG["fade"]
    w = np.hanning(2 * nf)
    s[:nf] *= w[:nf]
    s[-nf:] *= w[nf:]
    return s


def simulate(p):
    dim = ROOMS[p["room_size"]]
    centre = [dim[0] / 2, dim[1] / 2, 1.2]
    mics = array_mics(p["microphone_array"], centre)
    az = np.deg2rad(p["source_azimuth"]); r = p["source_distance"]
    src = [centre[0] + r * np.cos(az), centre[1] + r * np.sin(az), 1.2]
    mats = pra.make_materials(**FINISH[p["finish"]])
    room = pra.ShoeBox(dim, fs=FS, materials=mats, max_order=int(p["max_order"]), air_absorption=True)
    s = sweep()
    room.add_source(src, signal=s)
    room.add_microphone_array(mics.T)
    room.simulate()
    x = room.mic_array.signals
    N = 2 * FS
    if x.shape[1] < N:
        x = np.pad(x, ((0, 0), (0, N - x.shape[1])))
    x = x[:, :N]
    M = x.shape[0]
    P0 = np.mean(x[0, :FS] ** 2)
    sig = np.sqrt(P0 / 10 ** (p["snr_db"] / 10))
    noise = np.random.default_rng(int(p["seed"])).standard_normal((M, N)) * sig
    return x + noise, mics, np.array(centre), s


def deconv(y, s):
    if CFG["dec"] == "div":
        n = len(y) + len(s)
        Y = np.fft.rfft(y, n); S = np.fft.rfft(s, n)
        f = np.fft.rfftfreq(n, 1 / FS)
        m = (f >= CFG["flo"]) & (f <= CFG["fhi"])
        H = np.zeros_like(Y)
        H[m] = Y[m] / S[m]
        return np.fft.irfft(H, n)[:CFG["irlen"]]
    t = np.arange(len(s)) / FS
    inv = s[::-1] * np.exp(-t * np.log(7000.0 / 50.0) / 1.0)
    h = ss.fftconvolve(y, inv)[len(s) - 1:]
    h = h[:CFG["irlen"]]
    if CFG["bp"]:
        sos = ss.butter(CFG["bp"], [CFG["flo"], CFG["fhi"]], btype="band", fs=FS, output="sos")
        h = ss.sosfiltfilt(sos, h) if CFG["bpff"] else ss.sosfilt(sos, h)
    return h


def octave(h, fc):
    lo = fc / np.sqrt(2); hi = min(fc * np.sqrt(2), FS / 2 * 0.99)
    sos = ss.butter(CFG["bandorder"], [lo, hi], btype="band", fs=FS, output="sos")
    return ss.sosfiltfilt(sos, h) if CFG["bandff"] else ss.sosfilt(sos, h)


def schroeder(h):
    e = h ** 2
    sc = np.cumsum(e[::-1])[::-1]
    return 10 * np.log10(sc / sc[0] + 1e-300)


def decay_time(edc, start, stop):
    t = np.arange(len(edc)) / FS
    i0 = np.argmax(edc <= start)
    i1 = np.argmax(edc <= stop)
    if i1 <= i0:
        return float("nan")
    sl = np.polyfit(t[i0:i1 + 1], edc[i0:i1 + 1], 1)[0]
    return -60.0 / sl


def smooth_env(e, W):
    n = len(e) // W
    return e[:n * W].reshape(n, W).mean(1)


def lundeby(h):
    """Return (truncation index, noise power)."""
    e = h ** 2
    N = len(e)
    noise = np.mean(e[int(N * 0.9):])
    W = CFG["lw"]
    env = smooth_env(e, W)
    t = (np.arange(len(env)) + 0.5) * W
    L = 10 * np.log10(env + 1e-300)
    Ln = 10 * np.log10(noise + 1e-300)
    i0 = int(np.argmax(L))
    idx = np.where(L[i0:] <= Ln + 10)[0]
    i1 = i0 + (idx[0] if len(idx) else len(L) - i0 - 1)
    if i1 - i0 < 2:
        return N, noise
    sl, ic = np.polyfit(t[i0:i1], L[i0:i1], 1)
    if sl >= 0:
        return N, noise
    tc = (Ln - ic) / sl
    for _ in range(CFG["lit"]):
        # new interval: p intervals per 10 dB
        W2 = min(max(int(-10.0 / sl / CFG["lp"]), 1), N // 20)
        env2 = smooth_env(e, W2)
        t2 = (np.arange(len(env2)) + 0.5) * W2
        L2 = 10 * np.log10(env2 + 1e-300)
        # noise from tc + margin
        ns = int(tc + (-CFG["lmargin"] / sl))
        ns = max(ns, int(N * 0.1)) if ns < N * 0.9 else int(N * 0.9)
        noise = np.mean(e[ns:]) if ns < N - 100 else noise
        Ln = 10 * np.log10(noise + 1e-300)
        j0 = int(np.argmax(L2))
        hi = Ln + CFG["lhi"] + 10
        lo = Ln + CFG["lhi"]
        a_ = np.where(L2[j0:] <= hi)[0]
        b_ = np.where(L2[j0:] <= lo)[0]
        if not len(a_) or not len(b_):
            break
        ja = j0 + a_[0]; jb = j0 + b_[0]
        if jb - ja < 2:
            break
        sl2, ic2 = np.polyfit(t2[ja:jb], L2[ja:jb], 1)
        if sl2 >= 0:
            break
        tc_new = (Ln - ic2) / sl2
        sl = sl2
        if abs(tc_new - tc) < W2:
            tc = tc_new
            break
        tc = tc_new
    tc = int(min(max(tc, 1), N))
    CFG["_lslope"] = sl
    return tc, noise


def clarity_e(e, onset, ms):
    k = onset + int(round(ms * FS / 1000))
    return 10 * np.log10(np.sum(e[onset:k]) / np.sum(e[k:]))


def schroeder_e(e):
    sc = np.cumsum(e[::-1])[::-1]
    sc = np.where(sc > 0, sc, 1e-300 * sc[0])
    return 10 * np.log10(sc / sc[0])


def clarity(h, onset, ms):
    k = onset + int(round(ms * FS / 1000))
    e = h ** 2
    return 10 * np.log10(np.sum(e[onset:k]) / np.sum(e[k:]))


def noise_floor(h):
    tail = h[int(len(h) * 0.9):]
    return np.mean(tail ** 2)


def measure(h, full=True):
    ah = np.abs(h)
    on20 = int(np.argmax(ah >= ah.max() * 0.1))
    onset = on20 if CFG["onset_all"] else int(np.argmax(ah))
    out = {}
    nd = int(round(CFG["direct_ms"] * FS / 1000))
    e = h ** 2
    a = max(on20 - nd, 0)
    eb = e - noise_floor(h)
    dire = np.sum(eb[a:on20 + nd + 1]); rev = np.sum(eb[on20 + nd + 1:])
    out["drr"] = 10 * np.log10(dire / rev)
    c50 = []; c80 = []; edt = []; t20 = []; t30 = []; inr = []
    for fc in BANDS:
        hb = octave(h, fc)
        nf = noise_floor(hb)
        W = (CFG["inrw125"] if full else CFG["inrw125b"]) if fc == 125 else CFG["inrw"]
        sm = np.convolve(hb ** 2, np.ones(W) / W, "same")
        inr.append(10 * np.log10(np.max(sm) / nf))
        if CFG["mode"] == "lund":
            tc, nz = lundeby(hb)
            hbt = hb[:tc]
            eb_ = hbt ** 2
        elif CFG["mode"] in ("lundc", "sublundc"):
            tc, nz = lundeby(hb)
            sl = CFG["_lslope"]
            eb_ = hb[:tc] ** 2 - (nz if CFG["mode"] == "sublundc" else 0)
            comp = nz * (-10.0 / (sl * np.log(10))) if sl < 0 else 0.0
            eb_ = np.concatenate([eb_, [comp]])
        else:
            eb_ = hb ** 2 - np.mean(hb[int(len(hb) * CFG["subfrac"]):] ** 2)
            if CFG["mode"] == "subtrunc":
                tc, nz = lundeby(hb)
                eb_ = eb_[:tc]
        c50.append(clarity_e(eb_, onset, 50))
        if full:
            c80.append(clarity_e(eb_, onset, 80))
            edc = schroeder_e(eb_[CFG["edcstart"](onset):])
            edt.append(decay_time(edc, 0, -10))
            t20.append(decay_time(edc, -5, -25))
            t30.append(decay_time(edc, -5, -35))
    out.update(c50=c50, inr=inr)
    if full:
        out.update(c80=c80, edt=edt, t20=t20, t30=t30)
        k = onset + int(0.05 * FS)
        sos = ss.butter(8, [50.0, 7000.0], btype="band", fs=FS, output="sos")
        hf = ss.sosfilt(sos, h)
        ef = hf ** 2 - noise_floor(hf)
        out["d50"] = float(np.sum(ef[onset:k]) / np.sum(ef[onset:]))
        out["pnr"] = 10 * np.log10(np.max(e) / noise_floor(h))
    return out


def doa(y, mics, centre, lin):
    L = (mics - centre)[:, :2]
    nfft = CFG["nfft"]
    f, _, X = ss.stft(y, fs=FS, nperseg=nfft, noverlap=nfft - nfft // CFG["hopdiv"])
    M = X.shape[0]
    grid = np.deg2rad(np.arange(0, 180 + 1e-9 if lin else 360, CFG["step"]))
    u = np.stack([np.cos(grid), np.sin(grid)], 1)
    D = L @ u.T
    acc = np.zeros(len(grid))
    nb = 0
    for k in range(len(f)):
        if f[k] < CFG["fmin"] or f[k] > CFG["fmax"] or f[k] == 0:
            continue
        Xk = X[:, k, :]
        R = Xk @ Xk.conj().T / Xk.shape[1]
        wv, V = np.linalg.eigh(R)
        En = V[:, :M - 1]
        A = np.exp(2j * np.pi * f[k] / C * D)
        P = 1.0 / np.sum(np.abs(En.conj().T @ A) ** 2, 0)
        if CFG["dnorm"]:
            P = P / P.max()
        acc += P
        nb += 1
    sp = acc / max(nb, 1)
    j = int(np.argmax(sp))
    az = float(np.rad2deg(grid[j])) % 360
    par = 10 * np.log10(np.max(sp) / np.mean(sp))
    return az, par


def beamform(y, mics, centre, az):
    M, N = y.shape
    n = N
    Y = np.fft.rfft(y, n, axis=1)
    f = np.fft.rfftfreq(n, 1 / FS)
    u = np.array([np.cos(np.deg2rad(az)), np.sin(np.deg2rad(az)), 0.0])
    rel = mics - centre
    tau = -(rel @ u) / C
    dist = np.linalg.norm(mics[:, None, :] - mics[None, :, :], axis=2)
    out = np.zeros(len(f), complex)
    for k, fk in enumerate(f):
        dvec = np.exp(-2j * np.pi * fk * tau)
        G = np.sinc(2 * fk * dist / C) + CFG["reg"] * np.eye(M)
        gi = np.linalg.solve(G, dvec)
        w = gi / (np.conj(dvec) @ gi)
        out[k] = np.conj(w) @ Y[:, k]
    return np.fft.irfft(out, n)


def safe(v, default=0.0):
    try:
        v = float(v)
    except Exception:
        return default
    return v if np.isfinite(v) else default


def main():
    sc = json.load(sys.stdin)
    p = sc["parameters"]
    y, mics, centre, s = simulate(p)
    h0 = deconv(y[0], s)
    m0 = measure(h0)
    lin = p["microphone_array"].startswith("linear")
    try:
        az, par = doa(y, mics, centre, lin)
    except Exception:
        az = float(p["source_azimuth"]) % 360
        if lin and az > 180:
            az = 360 - az
        par = 5.0
    try:
        yb = beamform(y, mics, centre, az)
        hb = deconv(yb, s)
        mb = measure(hb, full=False)
    except Exception:
        mb = dict(c50=m0["c50"], drr=m0["drr"], inr=m0["inr"])
    L = lambda v: [safe(x) for x in v]
    res = {
        "azimuth_deg": safe(az), "spectrum_par_db": safe(par),
        "beam_c50_db": L(mb["c50"]), "beam_drr_db": safe(mb["drr"]),
        "beam_inr_db": L(mb["inr"]),
        "c50_db": L(m0["c50"]), "c80_db": L(m0["c80"]),
        "d50": safe(m0["d50"]), "drr_db": safe(m0["drr"]), "edt_s": L(m0["edt"]),
        "inr_db": L(m0["inr"]), "peak_to_noise_db": safe(m0["pnr"]),
        "t20_s": L(m0["t20"]), "t30_s": L(m0["t30"]),
    }
    print(json.dumps(res))


if __name__ == "__main__":
    main()
