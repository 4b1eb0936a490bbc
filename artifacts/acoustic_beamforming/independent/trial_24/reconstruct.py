import sys, json, math
import numpy as np
import scipy.signal as ss

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
BANDS = [125, 250, 500, 1000, 2000, 4000]
CFG = dict(lp=3, lit_bb=0, lit_d=0, causal=1, corr=1, ir_len=16000, reg=1e-3, doa="SRP", nfft=512, mu=0.01, drr_win=0.0025, interp=True)


def array_pos(name, centre):
    c = np.array(centre)
    if name.startswith("linear"):
        n = 4 if name == "linear4_5cm" else 8
        d = 0.05 if name == "linear4_5cm" else 0.04
        off = (np.arange(n) - (n - 1) / 2) * d
        P = np.stack([c[0] + off, np.full(n, c[1]), np.full(n, c[2])], 0)
    else:
        n = 6 if name == "circular6_5cm" else 8
        r = 0.05 if name == "circular6_5cm" else 0.10
        a = 2 * np.pi * np.arange(n) / n
        P = np.stack([c[0] + r * np.cos(a), c[1] + r * np.sin(a), np.full(n, c[2])], 0)
    return P


def sweep():
    T = 1.0
    f1, f2 = 50.0, 7000.0
    t = np.arange(int(T * FS)) / FS
    L = T / np.log(f2 / f1)
    x = np.sin(2 * np.pi * f1 * L * (np.exp(t / L) - 1))
    nf = int(0.01 * FS)
    w = np.hanning(2 * nf)
    x[:nf] *= w[:nf]
    x[-nf:] *= w[nf:]
    return x


def simulate(p):
    import pyroomacoustics as pra
    dims = ROOMS[p["room_size"]]
    centre = [dims[0] / 2, dims[1] / 2, 1.2]
    mats = pra.make_materials(**FINISH[p["finish"]])
    room = pra.ShoeBox(dims, fs=FS, materials=mats, max_order=int(p["max_order"]), air_absorption=True,
                       ray_tracing=False, use_rand_ism=False)
    az = math.radians(p["source_azimuth"])
    d = p["source_distance"]
    src = [centre[0] + d * math.cos(az), centre[1] + d * math.sin(az), centre[2]]
    x = sweep()
    room.add_source(src, signal=x)
    P = array_pos(p["microphone_array"], centre)
    room.add_microphone_array(pra.MicrophoneArray(P, FS))
    room.simulate()
    y = room.mic_array.signals
    N = 2 * FS
    out = np.zeros((y.shape[0], N))
    n = min(N, y.shape[1])
    out[:, :n] = y[:, :n]
    return out, x, P, np.array(centre)


def add_noise(y, snr, seed):
    M, N = y.shape
    ps = np.mean(y[0, :FS] ** 2)
    sig = np.sqrt(ps / 10 ** (snr / 10))
    rng = np.random.default_rng(seed)
    return y + sig * rng.standard_normal((M, N))


def deconv(y, x):
    N = len(y)
    nfft = 2 * N
    Y = np.fft.rfft(y, nfft)
    X = np.fft.rfft(x, nfft)
    H = Y * np.conj(X) / (np.abs(X) ** 2 + CFG["reg"] * np.max(np.abs(X) ** 2))
    h = np.fft.irfft(H, nfft)[:CFG["ir_len"]]
    return h


def octave(h, fc):
    lo = fc / np.sqrt(2)
    hi = min(fc * np.sqrt(2), FS / 2 * 0.999)
    sos = ss.butter(CFG.get("ford", 3), [lo, hi], btype="bandpass", fs=FS, output="sos")
    if CFG.get("causal"):
        return ss.sosfilt(sos, h)
    return ss.sosfiltfilt(sos, h)


def noise_level(h):
    n = len(h)
    return np.mean(h[int(0.9 * n):] ** 2)


def schroeder(h, noise=0.0):
    e = h ** 2
    e = e - noise
    sch = np.cumsum(e[::-1])[::-1]
    sch = np.maximum(sch, 1e-30)
    return 10 * np.log10(sch / sch[0])


def decay_time(sdb, lo, hi):
    t = np.arange(len(sdb)) / FS
    idx = np.where((sdb <= lo) & (sdb >= hi))[0]
    if len(idx) < 2:
        return float("nan")
    i0, i1 = idx[0], idx[-1]
    sl = np.polyfit(t[i0:i1 + 1], sdb[i0:i1 + 1], 1)[0]
    return -60.0 / sl


def clarity(h, t0, ms, nl=0.0):
    e = h ** 2 - nl
    k = t0 + int(round(ms * 1e-3 * FS))
    a = np.sum(e[t0:k])
    b = np.sum(e[k:])
    return a, b


def cdb(a, b):
    if b <= 0:
        return 40.0
    if a <= 0:
        return -40.0
    return float(np.clip(10 * np.log10(a / b), -40, 40))


def lundeby(e):
    """e: squared IR starting at onset. returns crosspoint index, noise level, slope (dB/sample), intercept dB"""
    N = len(e)
    noise = np.mean(e[int(0.9 * N):]) + 1e-30
    L = int(CFG.get("lw", 0.01) * FS)
    nw = N // L
    env = e[:nw * L].reshape(nw, L).mean(1) + 1e-30
    tc = (np.arange(nw) + 0.5) * L
    edb = 10 * np.log10(env)
    ndb = 10 * np.log10(noise)
    i0 = int(np.argmax(edb))
    idx = np.where(edb[i0:] < ndb + CFG.get("l0hi", 10.0))[0]
    i1 = i0 + (idx[0] if len(idx) else nw - i0)
    if i1 - i0 < 2:
        return max(L, 1), noise, -1e9, edb[i0]
    sl, ic = np.polyfit(tc[i0:i1], edb[i0:i1], 1)
    if sl >= 0:
        return N, noise, sl, ic
    cp = (ndb - ic) / sl
    for it in range(CFG.get("lit", 5)):
        # new interval: p intervals per 10 dB
        p = CFG.get("lp", 5)
        Ln = int(min(max(-10.0 / sl / p, 1), N // 4))
        # noise from point 10 dB below crosspoint-level line... (line 5-10 dB under noise)
        tn = int(cp + (-CFG.get("lnoise", 10.0)) / sl)
        tn = min(max(tn, 0), int(0.9 * N))
        noise = np.mean(e[tn:]) + 1e-30
        ndb = 10 * np.log10(noise)
        nw = N // Ln
        env = e[:nw * Ln].reshape(nw, Ln).mean(1) + 1e-30
        tc = (np.arange(nw) + 0.5) * Ln
        edb = 10 * np.log10(env)
        i0 = int(np.argmax(edb))
        hi = ndb + CFG.get("lhi", 5.0)
        lo_db = hi + CFG.get("lrange", 20.0)
        sel = np.where((edb <= lo_db) & (edb >= hi) & (np.arange(nw) >= i0))[0]
        # restrict to contiguous region before first drop under hi
        under = np.where((edb[i0:] < hi))[0]
        iend = i0 + (under[0] if len(under) else nw - i0)
        sel = sel[sel < iend]
        if len(sel) < 2:
            break
        sl2, ic2 = np.polyfit(tc[sel], edb[sel], 1)
        if sl2 >= 0:
            break
        sl, ic = sl2, ic2
        ncp = (ndb - ic) / sl
        if abs(ncp - cp) < 1:
            cp = ncp
            break
        cp = ncp
    cp = int(min(max(cp, 1), N))
    return cp, noise, sl, ic


def analyse(x, t0, nsub=False, lit=None):
    e = x[t0:] ** 2
    old = CFG.get("lit", 5)
    if lit is not None:
        CFG["lit"] = lit
    cp, noise, sl, ic = lundeby(e)
    CFG["lit"] = old
    if nsub:
        e = e - noise
    et = e[:cp].copy() if CFG.get("dtrunc", 1) or not nsub else e.copy()
    corr = 0.0
    if CFG.get("corr") and sl < 0 and sl > -1e8:
        corr = 10 ** ((ic + sl * cp) / 10) / (-sl * np.log(10) / 10)
    LAST.update(e0=x[t0:] ** 2, cp=cp, noise=noise, sl=sl, ic=ic, E=np.sum(x[t0:] ** 2))
    return et, corr, cp, noise


LAST = {}


def inr_of(hb, nb):
    m = CFG.get("inrm", "W10L")
    if m == "W10sL":
        n = int(0.01 * FS)
        return 10 * np.log10(np.max(np.convolve(LAST["e0"][:4 * n], np.ones(n) / n, "valid")) / LAST["noise"])
    if m == "W10":
        e0 = LAST["e0"]
        return 10 * np.log10(np.mean(e0[:int(0.01 * FS)]) / np.mean(e0[int(0.9 * len(e0)):]))
    if m == "W10L":
        return 10 * np.log10(np.mean(LAST["e0"][:int(0.01 * FS)]) / LAST["noise"])
    if m == "ic":
        return LAST["ic"] - 10 * np.log10(LAST["noise"])
    if m == "E":
        return 10 * np.log10(LAST["E"] / (LAST["noise"] * CFG.get("inrT", 1.0) * FS))
    if m == "Ecp":
        return 10 * np.log10(np.sum(hb[:LAST["cp"]] ** 2) / (LAST["noise"] * LAST["cp"]))
    return 10 * np.log10(np.max(hb ** 2) / nb)


def ir_params(h):
    pk = int(np.argmax(np.abs(h)))
    nl = noise_level(h)
    out = {}
    out["peak_to_noise_db"] = 10 * np.log10(h[pk] ** 2 / nl)
    t0 = int(np.argmax(h ** 2 >= h[pk] ** 2 * 10 ** (-CFG.get("onset", 20) / 10)))
    et, corr, cp, nb = analyse(h, t0, CFG.get("nsub_bb", 1), CFG.get("lit_bb"))
    k50 = int(0.05 * FS)
    a = np.sum(et[:k50]); b = np.sum(et[k50:]) + (corr if CFG.get("ccorr") else 0)
    out["d50"] = float(np.clip(a / (a + b) if b > 0 else 0.9999, 1e-4, 0.9999))
    w = int(round(CFG["drr_win"] * FS))
    dE = np.sum(h[max(0, pk - w):pk + w + 1] ** 2)
    dm = CFG.get("drr_mode", "trunc")
    if dm == "trunc":
        rE = np.sum(et[pk + w + 1 - t0:]) + (corr if CFG.get("ccorr") else 0)
    elif dm == "full":
        rE = np.sum(h[pk + w + 1:] ** 2 - nb)
        dE = dE - nb * (2 * w + 1)
    elif dm == "truncns":
        et2, _, _, _ = analyse(h, t0, False)
        rE = np.sum(et2[pk + w + 1 - t0:])
    out["drr_db"] = cdb(dE, rE)
    c50, c80, edt, t20, t30, inr = [], [], [], [], [], []
    tt = np.arange(len(h)) / FS
    for fc in BANDS:
        hb = octave(h, fc)
        et, corr, cp, nb = analyse(hb, t0, CFG.get("nsub_c", 1), CFG.get("lit_c"))
        inr.append(inr_of(hb, nb))
        cc = corr if CFG.get("ccorr") else 0
        k = int(0.05 * FS); c50.append(cdb(np.sum(et[:k]), np.sum(et[k:]) + cc))
        k = int(0.08 * FS); c80.append(cdb(np.sum(et[:k]), np.sum(et[k:]) + cc))
        et, corr, cp, nb = analyse(hb, t0, CFG.get("nsub_d", 0), CFG.get("lit_d"))
        sch = np.cumsum(et[::-1])[::-1] + corr
        sch = np.maximum(sch, 1e-30)
        sdb = 10 * np.log10(sch / sch[0])
        sl = LAST.get("sl", -1.0)
        fb = -60.0 / (sl * FS) if (np.isfinite(sl) and -1e8 < sl < 0) else 0.5
        fb = float(np.clip(fb, 0.01, 10.0))
        vals = []
        for lo, hi in ((0.0, -10.0), (-5.0, -25.0), (-5.0, -35.0)):
            v = decay_time(sdb, lo, hi)
            vals.append(v if (np.isfinite(v) and v > 0) else fb)
        edt.append(vals[0]); t20.append(vals[1]); t30.append(vals[2])
    out.update(c50_db=c50, c80_db=c80, edt_s=edt, t20_s=t20, t30_s=t30, inr_db=inr)
    return out


def doa(Y, P, centre, linear):
    M = Y.shape[0]
    nfft = CFG.get("nfft", 512)
    f, t, Z = ss.stft(Y, fs=FS, nperseg=nfft, noverlap=nfft // 2, window=CFG.get("win", "hann"))
    sel = (f >= CFG.get("fmin", 300)) & (f <= CFG.get("fmax", 3500))
    f = f[sel]
    Z = Z[:, sel, :]
    R = np.einsum("mft,nft->fmn", Z, np.conj(Z)) / Z.shape[2]
    step = CFG.get("gstep", 1.0)
    top = 180.0 if (linear and CFG.get("half", 1)) else 360.0
    grid = np.arange(0, top + (step / 2 if top == 180.0 else 0), step)
    grid = grid[grid < 360]
    ang = np.radians(grid)
    u = np.stack([np.cos(ang), np.sin(ang)], 1)
    r = (P[:2].T - centre[:2])
    tau = r @ u.T / C
    spec = np.zeros(len(grid))
    for i, fi in enumerate(f):
        w, V = np.linalg.eigh(R[i])
        En = V[:, :M - 1]
        a = np.exp(2j * np.pi * fi * tau)
        den = np.sum(np.abs(En.conj().T @ a) ** 2, axis=0)
        ps = 1.0 / np.maximum(den, 1e-30)
        if CFG.get("norm", 1):
            ps = ps / ps.max()
        spec += ps
    k = int(np.argmax(spec))
    az = grid[k]
    if CFG.get("interp", 0) and 0 < k < len(grid) - 1:
        y0, y1, y2 = spec[k - 1], spec[k], spec[k + 1]
        den = y0 - 2 * y1 + y2
        if den != 0:
            az = az + 0.5 * (y0 - y2) / den * step
    par = 10 * np.log10(spec.max() / spec.mean())
    return az % 360, par


def beamform(Y, P, centre, az, snr):
    M, N = Y.shape
    stft = CFG.get("bf") == "stft"
    if stft:
        nfft = CFG.get("bfn", 512)
        f, tt, Z = ss.stft(Y, fs=FS, nperseg=nfft, noverlap=nfft // 2)
        Xf = Z
    else:
        nfft = CFG.get("bfpad", 1) * N
        Xf = np.fft.rfft(Y, nfft, axis=1)
        f = np.fft.rfftfreq(nfft, 1 / FS)
    r = P.T - centre
    u = np.array([np.cos(np.radians(az)), np.sin(np.radians(az)), 0.0])
    tau = r @ u / C
    D = np.linalg.norm(P.T[:, None, :] - P.T[None, :, :], axis=2)
    mu = CFG["mu"] if CFG["mu"] is not None else 10 ** (-snr / 10)
    out = np.zeros((len(f),) + Xf.shape[2:], complex)
    I = np.eye(M)
    for i, fi in enumerate(f):
        if CFG.get("gam") == "j0":
            from scipy.special import j0
            G = j0(2 * np.pi * fi * D / C)
        else:
            G = np.sinc(2 * fi * D / C)
        d = np.exp(2j * np.pi * fi * tau)
        A = np.linalg.solve(G + mu * I, d)
        w = A / np.real(np.conj(d) @ A)
        out[i] = np.conj(w) @ Xf[:, i]
    if stft:
        _, b = ss.istft(out, fs=FS, nperseg=nfft, noverlap=nfft // 2)
        bb = np.zeros(N); bb[:min(N, len(b))] = b[:N]
        return bb
    return np.fft.irfft(out, nfft)[:N]


def main():
    if CFG.get('doa_only'):
        sc = json.load(sys.stdin); p = sc['parameters']; y, x, P, centre = simulate(p); y = add_noise(y, float(p['snr_db']), int(p['seed'])); az, par = doa(y, P, centre, p['microphone_array'].startswith('linear')); print(json.dumps(dict(azimuth_deg=az, spectrum_par_db=par))); return
    sc = json.load(sys.stdin)
    p = sc["parameters"]
    y, x, P, centre = simulate(p)
    y = add_noise(y, float(p["snr_db"]), int(p["seed"]))
    h0 = deconv(y[0], x)
    res = ir_params(h0)
    az, par = doa(y, P, centre, p["microphone_array"].startswith("linear"))
    b = beamform(y, P, centre, az, float(p["snr_db"]))
    hb = deconv(b, x)
    saved = dict(CFG)
    CFG.update(CFG.get("beam_over", {}))
    rb = ir_params(hb)
    CFG.clear(); CFG.update(saved)
    res["azimuth_deg"] = az
    res["spectrum_par_db"] = par
    res["beam_c50_db"] = rb["c50_db"]
    res["beam_drr_db"] = rb["drr_db"]
    res["beam_inr_db"] = rb["inr_db"]

    def clean(v):
        if isinstance(v, list):
            return [clean(a) for a in v]
        v = float(v)
        return v if np.isfinite(v) else 0.0
    print(json.dumps({k: clean(v) for k, v in res.items()}))


if __name__ == "__main__":
    main()
