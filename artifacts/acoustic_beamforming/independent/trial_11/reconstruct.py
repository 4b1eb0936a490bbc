# Independent program: the final workspace of agent trial 11 of acoustic_beamforming 3.0.0 at the
# default evidence level (docs/trials.md), kept as the agent wrote it.
import sys, json
import numpy as np
import scipy.signal as ss

FS = 16000
C = 343.0
ROOMS = {"small": [4.0, 3.5, 2.7], "medium": [6.0, 4.5, 3.0], "large": [9.0, 7.0, 3.5]}
FINISH = {
    "classroom": dict(west="plasterboard", east="glass_window", south="plasterboard", north="wooden_lining",
                      floor="linoleum_on_concrete", ceiling="ceiling_perforated_gypsum_board"),
    "chapel": dict(west="limestone_wall", east="limestone_wall", south="curtains_cotton_0.5", north="limestone_wall",
                   floor="marble_floor", ceiling="wooden_lining"),
    "studio": dict(west="plasterboard", east="facing_brick", south="curtains_fabric", north="plasterboard",
                   floor="carpet_tufted_9.5mm", ceiling="ceiling_fissured_tile"),
    "office": dict(west="plasterboard", east="plasterboard", south="glass_window", north="plasterboard",
                   floor="carpet_cotton", ceiling="ceiling_fissured_tile"),
}
BANDS = [125, 250, 500, 1000, 2000, 4000]


def array_offsets(name):
    if name == "linear8_4cm":
        return np.array([[(-0.14 + 0.04 * i), 0, 0] for i in range(8)])
    if name == "linear4_5cm":
        return np.array([[(-0.075 + 0.05 * i), 0, 0] for i in range(4)])
    if name == "circular6_5cm":
        r, n = 0.05, 6
    else:
        r, n = 0.1, 8
    a = 2 * np.pi * np.arange(n) / n
    return np.stack([r * np.cos(a), r * np.sin(a), np.zeros(n)], 1)


def sweep():
    T = 1.0
    n = int(T * FS)
    t = np.arange(n) / FS
    f1, f2 = 50.0, 7000.0
    L = T / np.log(f2 / f1)
    x = np.sin(2 * np.pi * f1 * L * (np.exp(t / L) - 1))
    w = int(0.01 * FS)
    h = np.hanning(2 * w)
    x[:w] *= h[:w]
    x[-w:] *= h[w:]
    return x


def simulate(p):
    import pyroomacoustics as pra
    dim = ROOMS[p["room_size"]]
    mats = {k: pra.Material(v) for k, v in FINISH[p["finish"]].items()}
    room = pra.ShoeBox(dim, fs=FS, materials=mats, max_order=int(p["max_order"]), air_absorption=True)
    centre = np.array([dim[0] / 2, dim[1] / 2, 1.2])
    az = np.deg2rad(p["source_azimuth"])
    d = p["source_distance"]
    src = centre + d * np.array([np.cos(az), np.sin(az), 0.0])
    mics = centre[None, :] + array_offsets(p["microphone_array"])
    x = sweep()
    room.add_source(src.tolist(), signal=x)
    room.add_microphone_array(pra.MicrophoneArray(mics.T, FS))
    room.simulate()
    y = room.mic_array.signals[:, :2 * FS]
    if y.shape[1] < 2 * FS:
        y = np.pad(y, ((0, 0), (0, 2 * FS - y.shape[1])))
    return x, y, mics, centre, src


def add_noise(y, seed, snr):
    rng = np.random.default_rng(seed)
    n = rng.standard_normal(y.shape)
    ps = np.mean(y[0, :FS] ** 2)
    return y + n * np.sqrt(ps / 10 ** (snr / 10))


def deconv(yi, x):
    N = len(yi) + len(x)
    X = np.fft.rfft(x, N)
    Y = np.fft.rfft(yi, N)
    H = Y * np.conj(X) / (np.abs(X) ** 2 + 1e-3 * np.max(np.abs(X)) ** 2)
    h = np.fft.irfft(H, N)[:len(yi) - len(x) + len(x)]
    return h[:FS]


def octave(h, fc):
    lo, hi = fc / np.sqrt(2), min(fc * np.sqrt(2), FS / 2 * 0.99)
    sos = ss.butter(3, [lo, hi], btype="band", fs=FS, output="sos")
    return ss.sosfilt(sos, h)


def lundeby_end(h, on, thr=10.0):
    e = h ** 2
    nf = np.mean(e[int(0.9 * len(e)):])
    e = e[on:]
    nb = len(e) // 160
    blk = e[:nb * 160].reshape(nb, 160).mean(1)
    tb = (np.arange(nb) + 0.5) * 160 / FS
    L = 10 * np.log10(blk + 1e-300)
    Ln = 10 * np.log10(nf)
    i0 = int(np.argmax(L))
    idx = np.where(L[i0:] <= Ln + thr)[0]
    i1 = i0 + (idx[0] if len(idx) else nb - i0)
    if i1 - i0 < 2:
        i1 = i0 + 2
    b, a = np.polyfit(tb[i0:i1], L[i0:i1], 1)
    tc = (Ln - a) / b if b < 0 else len(e) / FS
    return on + max(min(int(tc * FS), len(e)), 2)


def trunc_end(h):
    e = h ** 2
    nf = np.mean(e[int(0.9 * len(e)):])
    sm = np.convolve(e, np.ones(160) / 160, "same")
    pk = np.argmax(sm)
    idx = np.where(sm[pk:] <= nf)[0]
    return pk + (idx[0] if len(idx) else len(e) - pk)


def schroeder(h, on=0, thr=10.0, comp=True):
    e = h ** 2
    nf = np.mean(e[int(0.9 * len(e)):])
    e = e[on:]
    w = 160
    nb = len(e) // w
    blk = e[:nb * w].reshape(nb, w).mean(1)
    tb = (np.arange(nb) + 0.5) * w / FS
    L = 10 * np.log10(blk + 1e-300)
    Ln = 10 * np.log10(nf)
    i0 = int(np.argmax(L))
    idx = np.where(L[i0:] <= Ln + thr)[0]
    i1 = i0 + (idx[0] if len(idx) else nb - i0)
    if i1 - i0 < 2:
        i1 = i0 + 2
    b, a = np.polyfit(tb[i0:i1], L[i0:i1], 1)
    tc = (Ln - a) / b if b < 0 else len(e) / FS
    end = max(min(int(tc * FS), len(e)), 2)
    ee = e[:end]
    s = np.cumsum(ee[::-1])[::-1]
    if comp and b < 0:
        s = s + 10 ** ((a + b * end / FS) / 10) * FS / (-b * np.log(10) / 10)
    return 10 * np.log10(np.maximum(s, 1e-300) / s[0])


def schroeder_old(h, on=0):
    e = h ** 2
    nf = np.mean(e[int(0.9 * len(e)):])
    w = 160
    sm = np.convolve(e, np.ones(w) / w, "same")
    pk = np.argmax(sm)
    idx = np.where(sm[pk:] <= nf)[0]
    end = pk + (idx[0] if len(idx) else len(e) - pk)
    ee = e[on:end]
    s = np.cumsum(ee[::-1])[::-1]
    s = np.maximum(s, 1e-300)
    return 10 * np.log10(s / s[0])


def decay_time(edc, a, b):
    t = np.arange(len(edc)) / FS
    m = (edc <= a) & (edc >= b)
    if m.sum() < 2:
        return float("nan")
    sl, _ = np.polyfit(t[m], edc[m], 1)
    return -60.0 / sl


def clarity(h, onset, ms):
    e = h ** 2
    end = lundeby_end(h, onset)
    k = onset + int(ms * FS / 1000)
    end = max(end, k + 1)
    return 10 * np.log10(np.sum(e[onset:k]) / max(np.sum(e[k:end]), 1e-300))


def onset_of(h, iso=True):
    e = h ** 2
    if iso:
        return int(np.argmax(e >= 0.01 * e.max()))
    return int(np.argmax(e))


def drr(h):
    pk = onset_of(h, iso=False)
    w = int(0.0025 * FS)
    e = h ** 2
    d = np.sum(e[max(pk - w, 0):pk + w + 1])
    r = np.sum(e[pk + w + 1:max(lundeby_end(h, pk), pk + w + 2)])
    return 10 * np.log10(d / r)


def inr(h, ms=None):
    e = h ** 2
    nf = np.mean(e[int(0.9 * len(e)):])
    if ms:
        w = int(ms * FS / 1000)
        e = np.convolve(e, np.ones(w) / w, "valid")
    return 10 * np.log10(np.max(e) / nf)


INTERP = True
BEAM_STFT = 0
NGRID = 3600


def doa(y, mics, centre, arrname):
    import pyroomacoustics as pra
    nfft = 512
    win = pra.hann(nfft)
    X = np.array([pra.transform.stft.analysis(s, nfft, nfft // 2, win=win).T for s in y])
    L = (mics - centre).T[:2]
    d = pra.doa.algorithms["NormMUSIC"](L, FS, nfft, c=C, num_src=1, n_grid=NGRID)
    d.locate_sources(X, freq_range=[300, 3500])
    sp = np.asarray(d.grid.values, dtype=float)
    n = len(sp)
    k = int(np.argmax(sp))
    kk = float(k)
    if INTERP:
        a_, b_, c_ = sp[(k - 1) % n], sp[k], sp[(k + 1) % n]
        den = a_ - 2 * b_ + c_
        if den != 0:
            kk = k + 0.5 * (a_ - c_) / den
    az = float(kk * 360.0 / n) % 360
    if arrname.startswith("linear") and az > 180:
        az = 360 - az
    par = 10 * np.log10(np.max(sp) / np.mean(sp))
    return az, float(par)


def mvdr_beam(y, mics, centre, az, snr):
    nfft = y.shape[1]
    L = mics - centre
    u = np.array([np.cos(np.deg2rad(az)), np.sin(np.deg2rad(az)), 0])
    f = np.fft.rfftfreq(nfft, 1 / FS)
    M = len(mics)
    D = np.linalg.norm(mics[:, None, :] - mics[None, :, :], axis=2)
    dv = np.exp(2j * np.pi * f[:, None] * (L @ u)[None, :] / C)
    G = np.sinc(2 * f[:, None, None] * D[None] / C) + 1e-2 * np.eye(M)[None]
    Gi = np.linalg.solve(G.astype(complex), dv[:, :, None])[:, :, 0]
    W = Gi / np.sum(np.conj(dv) * Gi, 1)[:, None]
    N = y.shape[1]
    if BEAM_STFT:
        n2 = BEAM_STFT
        ff = np.fft.rfftfreq(n2, 1 / FS)
        dv = np.exp(2j * np.pi * ff[:, None] * (L @ u)[None, :] / C)
        G = np.sinc(2 * ff[:, None, None] * D[None] / C) + 1e-2 * np.eye(M)[None]
        Gi = np.linalg.solve(G.astype(complex), dv[:, :, None])[:, :, 0]
        W2 = Gi / np.sum(np.conj(dv) * Gi, 1)[:, None]
        _, _, Z = ss.stft(y, fs=FS, nperseg=n2)
        out = np.einsum("km,mkt->kt", np.conj(W2), Z)
        _, z = ss.istft(out, fs=FS, nperseg=n2)
        z = z[:N]
        return np.pad(z, (0, N - len(z)))
    Yf = np.fft.rfft(y, axis=1)
    return np.fft.irfft(np.sum(np.conj(W).T * Yf, 0), N)


def measure(h):
    res = {}
    bands = [octave(h, fc) for fc in BANDS]
    pk = onset_of(h)
    edt, t20, t30, c50, c80, inrs = [], [], [], [], [], []
    for hb in bands:
        edc = schroeder(hb, pk)
        edt.append(decay_time(edc, -0.0, -10.0))
        t20.append(decay_time(edc, -5, -25))
        t30.append(decay_time(edc, -5, -35))
        c50.append(clarity(hb, pk, 50))
        c80.append(clarity(hb, pk, 80))
        eb = hb ** 2
        nfb = np.mean(eb[int(0.9 * len(eb)):])
        eb = eb[pk:]
        nbk = len(eb) // 160
        inrs.append(10 * np.log10(eb[:nbk * 160].reshape(nbk, 160).mean(1).max() / nfb))
    e = h ** 2
    k50 = pk + int(0.05 * FS)
    res.update(edt_s=edt, t20_s=t20, t30_s=t30, c50_db=c50, c80_db=c80, inr_db=inrs,
               d50=float(np.sum(e[pk:k50]) / np.sum(e[pk:trunc_end(h)])), drr_db=drr(h), peak_to_noise_db=inr(h))
    return res


def main():
    sc = json.load(sys.stdin)
    p = sc["parameters"]
    x, y, mics, centre, src = simulate(p)
    y = add_noise(y, int(p["seed"]), float(p["snr_db"]))
    h0 = deconv(y[0], x)
    r = measure(h0)
    az, par = doa(y, mics, centre, p["microphone_array"])
    z = mvdr_beam(y, mics, centre, az, p["snr_db"])
    hb = deconv(z, x)
    rb = measure(hb)
    out = dict(azimuth_deg=az, spectrum_par_db=par, beam_c50_db=rb["c50_db"], beam_drr_db=rb["drr_db"],
               beam_inr_db=rb["inr_db"])
    out.update({k: r[k] for k in ["c50_db", "c80_db", "d50", "drr_db", "edt_s", "inr_db", "peak_to_noise_db",
                                  "t20_s", "t30_s"]})

    def clean(v):
        if isinstance(v, list):
            return [clean(a) for a in v]
        v = float(v)
        return v if np.isfinite(v) else 0.0
    print(json.dumps({k: clean(v) for k, v in out.items()}))


if __name__ == "__main__":
    main()
