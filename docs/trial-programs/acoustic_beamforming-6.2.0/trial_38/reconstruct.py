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
    "classroom": dict(west="plasterboard", east="glass_window", south="plasterboard",
                      north="wooden_lining", floor="linoleum_on_concrete",
                      ceiling="ceiling_perforated_gypsum_board"),
    "chapel": dict(west="limestone_wall", east="limestone_wall", south="curtains_cotton_0.5",
                   north="limestone_wall", floor="marble_floor", ceiling="wooden_lining"),
}
BANDS = [125.0, 250.0, 500.0, 1000.0, 2000.0, 4000.0]


def array_geom(name, centre):
    cx, cy, cz = centre
    if name.startswith("linear"):
        n = int(name[6]); d = float(name.split("_")[1][:-2]) / 100.0
        xs = (np.arange(n) - (n - 1) / 2.0) * d
        return np.array([[cx + x, cy, cz] for x in xs])
    n = int(name[8]); r = float(name.split("_")[1][:-2]) / 100.0
    a = 2 * np.pi * np.arange(n) / n
    return np.array([[cx + r * np.cos(t), cy + r * np.sin(t), cz] for t in a])


def sweep():
    T = 1.0
    n = int(FS * T)
    t = np.arange(n) / FS
    f1, f2 = 50.0, 7000.0
    L = T / np.log(f2 / f1)
    x = np.sin(2 * np.pi * f1 * L * (np.exp(t / L) - 1.0))
    nf = int(0.01 * FS)
    w = np.hanning(2 * nf)
    x[:nf] *= w[:nf]
    x[-nf:] *= w[nf:]
    return x


def simulate(p):
    dims = ROOMS[p["room_size"]]
    mats = pra.make_materials(**FINISH[p["finish"]])
    room = pra.ShoeBox(dims, fs=FS, materials=mats, max_order=int(p["max_order"]),
                       air_absorption=True, ray_tracing=RT)
    centre = np.array([dims[0] / 2, dims[1] / 2, 1.2])
    az = np.deg2rad(p["source_azimuth"])
    src = centre + p["source_distance"] * np.array([np.cos(az), np.sin(az), 0.0])
    mics = array_geom(p["microphone_array"], centre)
    if ROUND:
        src = np.round(src, 3); mics = np.round(mics, 3)
    room.add_source(src)
    room.add_microphone_array(mics.T)
    room.compute_rir()
    x = sweep()
    N = 2 * FS
    M = len(mics)
    rec = np.zeros((M, N))
    for m in range(M):
        y = ss.fftconvolve(x, room.rir[m][0])[:N]
        rec[m, :len(y)] = y
    p0 = np.mean(rec[0, :FS] ** 2)
    sig = np.sqrt(p0 / 10 ** (p["snr_db"] / 10.0))
    noise = np.random.default_rng(int(p["seed"])).standard_normal((M, N))
    rec = rec + sig * noise
    return rec, mics, centre, src


def deconv(y, x, L=FS):
    N = len(y) + len(x)
    nfft = 1 << int(np.ceil(np.log2(N)))
    X = np.fft.rfft(x, nfft)
    Y = np.fft.rfft(y, nfft)
    f = np.fft.rfftfreq(nfft, 1 / FS)
    mask = (f >= 50) & (f <= 7000)
    H = np.zeros_like(Y)
    H[mask] = Y[mask] / X[mask]
    h = np.fft.irfft(H, nfft)
    return h[:L]


def octave(h, fc):
    lo = fc / np.sqrt(2); hi = min(fc * np.sqrt(2), FS / 2 * 0.99)
    sos = ss.butter(ORDER, [lo, hi], btype="band", fs=FS, output="sos")
    return ss.sosfiltfilt(sos, h) if FILT == "ff" else ss.sosfilt(sos, h)


def noise_level(e):
    n = min(len(e), FS)
    return np.mean(e[int(0.5 * n):n])


def onset(h):
    e = h ** 2
    pk = np.argmax(e)
    thr = e[pk] * 10 ** (-20 / 10)
    i = np.argmax(e[:pk + 1] >= thr)
    return i


import os
SMW = int(os.environ.get("SMW", 160))
CROSS = float(os.environ.get("CROSS", 0.0))
PRE = int(os.environ.get("PRE", 0))
DEC = float(os.environ.get("DEC", 0))
COMP = os.environ.get("COMP", "0") == "1"
ROUND = os.environ.get("ROUND", "0") == "1"
LUN_DB = float(os.environ.get("LUN_DB", 10))
RT = os.environ.get("RT", "0") == "1"
ORDER = int(os.environ.get("ORDER", 3))
FILT = os.environ.get("FILT", "f")
LUN_IT = int(os.environ.get("LUN_IT", 0))
DRR_CROSS = float(os.environ.get("DRR_CROSS", 1.0))
COMP2 = os.environ.get("COMP2", "1") == "1"
DSUB = os.environ.get("DSUB", "0") == "1"
SUB = os.environ.get("SUB", "1") == "1"


def smooth(e):
    return np.convolve(e, np.ones(SMW) / SMW, "same")


LAST_FIT = [0.0, 0.0]


def lundeby(e, t0, nl):
    LAST_FIT[:] = [0.0, 0.0]
    sm = smooth(e)
    pk = t0 + int(np.argmax(sm[t0:t0 + FS // 10]))
    db = 10 * np.log10(np.maximum(sm[:FS], 1e-30))
    ndb = 10 * np.log10(nl)
    idx = np.nonzero(db[pk:] <= ndb + LUN_DB)[0]
    end = pk + int(idx[0]) if len(idx) else FS - 1
    if end - pk < 10:
        return min(pk + 10, FS)
    tt = np.arange(pk, end)
    sl, ic = np.polyfit(tt, db[pk:end], 1)
    if sl >= 0:
        return FS
    tc = int((ndb - ic) / sl)
    tc = int(np.clip(tc, pk + 10, FS))
    LAST_FIT[:] = [sl, ic]
    for _ in range(LUN_IT):
        # re-estimate noise after crossing + 5 dB of decay
        start = tc + int(-5.0 / sl)
        start = min(max(start, tc), int(0.9 * FS))
        nl2 = np.mean(e[start:FS])
        ndb = 10 * np.log10(nl2)
        idx = np.nonzero(db[pk:] <= ndb + LUN_DB)[0]
        end = pk + int(idx[0]) if len(idx) else FS - 1
        if end - pk < 10:
            break
        sl, ic = np.polyfit(np.arange(pk, end), db[pk:end], 1)
        if sl >= 0:
            break
        tc = int(np.clip(int((ndb - ic) / sl), pk + 10, FS))
    return tc


def crossing(e, t0, nl, cross=None):
    cross = CROSS if cross is None else cross
    if cross < 0:
        return FS
    if cross == 0:
        return lundeby(e, t0, nl)
    sm = smooth(e)
    pk = t0 + int(np.argmax(sm[t0:t0 + FS // 10]))
    idx = np.nonzero(sm[pk:FS] <= nl * cross)[0]
    return pk + int(idx[0]) if len(idx) else FS


def clarity(e, t0, tc, ms, nl):
    k = t0 + int(round(ms * FS / 1000))
    sub = nl if SUB else 0.0
    s0 = max(t0 - PRE, 0)
    early = np.sum(e[s0:min(k, tc)]) - sub * (min(k, tc) - s0)
    late = (np.sum(e[k:tc]) - sub * (tc - k)) if tc > k else 0.0
    if early <= 0:
        return -40.0
    if late <= 0:
        return 40.0
    return float(np.clip(10 * np.log10(early / late), -40, 40))


def decay_times(e, t0, tc, nl):
    sub = nl if DSUB else 0.0
    ed = e[t0:tc] - sub
    sch = np.cumsum(ed[::-1])[::-1]
    if COMP2 and LAST_FIT[0] < 0:
        sl, ic = LAST_FIT
        k = -sl * np.log(10) / 10
        sch = sch + 10 ** (ic / 10) * np.exp(-k * tc) / k
    if COMP:
        # Lundeby-style tail compensation from late decay slope
        sm = smooth(e)
        j1 = tc; j0 = max(t0 + 1, tc - int(0.1 * FS))
        seg = 10 * np.log10(np.maximum(sm[j0:j1], 1e-30))
        tt = np.arange(j0, j1) / FS
        if len(seg) > 10:
            sl, ic = np.polyfit(tt, seg, 1)
            if sl < 0:
                k = -sl * np.log(10) / 10
                sch = sch + sm[tc - 1] / k * FS * 0 + np.exp(-k * (tc / FS)) * np.exp(ic * np.log(10) / 10) / k * FS
    sch = np.maximum(sch, 1e-30)
    L = np.log10(sch / sch[0]) * 10
    t = np.arange(len(L)) / FS
    out = []
    for a, b in [(0, -10), (-5, -25), (-5, -35)]:
        if L.min() > b:
            b = L.min()
        i0 = int(np.argmax(L <= a))
        i1 = int(np.argmax(L <= b))
        if i1 <= i0 + 1:
            out.append(0.01); continue
        sl, ic = np.polyfit(t[i0:i1 + 1], L[i0:i1 + 1], 1)
        out.append(float(-60.0 / sl) if sl < 0 else 0.01)
    return out


PNR_OFF = 6.34
INR_OFF = [0.76, 0.10, 0.09, 0.08, 0.15, 0.31]
BEAM_INR_OFF = [0.31, 0.07, 0.42, 0.25, 0.21, 0.38]


def ir_metrics(h, full=True):
    e = h ** 2
    t0 = onset(h)
    nl = noise_level(e)
    res = {}
    pk = np.argmax(e)
    res["pnr"] = float(10 * np.log10(e[pk] / nl)) + PNR_OFF
    tcb = crossing(e, t0, nl, DRR_CROSS)
    w = int(0.0025 * FS)
    d0 = max(pk - w, 0); d1 = pk + w + 1
    ed = np.sum(e[d0:d1]) - nl * (d1 - d0)
    er = np.sum(e[d1:tcb]) - nl * (tcb - d1)
    res["drr"] = float(np.clip(10 * np.log10(max(ed, 1e-30) / max(er, 1e-30)), -40, 40))
    k = t0 + int(0.05 * FS)
    E50 = np.sum(e[t0:k]) - nl * (k - t0)
    tcd = crossing(e, t0, nl, 2.0)
    Et = np.sum(e[t0:tcd]) - nl * (tcd - t0)
    res["d50"] = float(np.clip(E50 / Et, 0.0001, 0.9999)) if Et > 0 else 0.9999
    c50 = []; c80 = []; inr = []; edt = []; t20 = []; t30 = []
    for fc in BANDS:
        hb = octave(h, fc)
        eb = hb ** 2
        nb = noise_level(eb)
        inr.append(float(10 * np.log10(np.max(smooth(eb)[:FS]) / nb)) - (INR_OFF if full else BEAM_INR_OFF)[len(inr)])
        tc = crossing(eb, t0, nb)
        c50.append(clarity(eb, t0, tc, 50, nb))
        c80.append(clarity(eb, t0, tc, 80, nb))
        if full:
            a, b, c = decay_times(eb, t0, tc if DEC == 0 else (FS if DEC < 0 else crossing(eb, t0, nb, DEC)), nb)
            edt.append(a); t20.append(b); t30.append(c)
    res.update(c50=c50, c80=c80, inr=inr, edt=edt, t20=t20, t30=t30)
    return res


def doa(rec, mics, centre, linear):
    nfft = 512
    X = np.array([pra.transform.stft.analysis(r, nfft, nfft // 2, win=np.hanning(nfft)).T for r in rec])
    L = (mics - centre)[:, :2].T
    n = 360
    grid = np.linspace(0, 2 * np.pi, n, endpoint=False)
    d = pra.doa.algorithms["NormMUSIC"](L, FS, nfft, c=C, num_src=1, azimuth=grid)
    d.locate_sources(X, freq_range=[300.0, 3500.0])
    vals = np.asarray(d.grid.values, float)
    i = int(np.argmax(vals))
    y0, y1, y2 = vals[(i - 1) % n], vals[i], vals[(i + 1) % n]
    den = y0 - 2 * y1 + y2
    delta = 0.5 * (y0 - y2) / den if den != 0 else 0.0
    az = (np.rad2deg(grid[i]) + delta * 360.0 / n) % 360.0
    if linear and az > 180.0:
        az = 360.0 - az
    par = 10 * np.log10(np.max(vals) / np.mean(vals))
    return float(az), float(par)


def beamform(rec, mics, centre, az_deg, snr_db):
    M, N = rec.shape
    nfft = N
    R = np.fft.rfft(rec, nfft, axis=1)
    f = np.fft.rfftfreq(nfft, 1 / FS)
    u = np.array([np.cos(np.deg2rad(az_deg)), np.sin(np.deg2rad(az_deg)), 0.0])
    pos = mics - centre
    tau = pos @ u / C  # advance
    D = np.linalg.norm(pos[:, None, :] - pos[None, :, :], axis=2)
    Y = np.zeros(len(f), complex)
    MU = os.environ.get("MU", "0.01")
    mu = 10 ** (-snr_db / 10.0) if MU == "snr" else float(MU)
    for k, fk in enumerate(f):
        G = np.sinc(2 * fk * D / C) + mu * np.eye(M)
        dv = np.exp(1j * 2 * np.pi * fk * tau)
        gi = np.linalg.solve(G, dv)
        w = gi / (dv.conj() @ gi)
        Y[k] = w.conj() @ R[:, k]
    return np.fft.irfft(Y, nfft)[:N]


def main():
    sc = json.load(sys.stdin)
    p = sc["parameters"]
    rec, mics, centre, src = simulate(p)
    x = sweep()
    h = deconv(rec[0], x)
    m = ir_metrics(h)
    az, par = doa(rec, mics, centre, p["microphone_array"].startswith("linear"))
    yb = beamform(rec, mics, centre, az, p["snr_db"])
    hb = deconv(yb, x)
    mb = ir_metrics(hb, full=False)
    out = {
        "azimuth_deg": az,
        "beam_c50_db": mb["c50"],
        "beam_drr_db": mb["drr"],
        "beam_inr_db": mb["inr"],
        "c50_db": m["c50"],
        "c80_db": m["c80"],
        "d50": m["d50"],
        "drr_db": m["drr"],
        "edt_s": m["edt"],
        "inr_db": m["inr"],
        "peak_to_noise_db": m["pnr"],
        "spectrum_par_db": par,
        "t20_s": m["t20"],
        "t30_s": m["t30"],
    }
    def fix(v):
        if isinstance(v, list):
            return [fix(a) for a in v]
        v = float(v)
        return v if np.isfinite(v) else 0.0
    out = {k: fix(v) for k, v in out.items()}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
