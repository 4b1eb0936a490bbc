import numpy as np, scipy.signal as ss
from sim import sweep, FS
X = sweep()
INCL = False
BANDS = [125, 250, 500, 1000, 2000, 4000]
C = 343.0

def getir(y):
    n = np.arange(FS); L = 1.0 / np.log(7000 / 50)
    inv = X[::-1] * np.exp(-(n / FS) / L)
    h = ss.fftconvolve(y, inv)
    return h[FS - 1:2 * FS - 1]

def bandfilt(h, fc):
    sos = ss.butter(3, [fc / np.sqrt(2), min(fc * np.sqrt(2), FS / 2 * .999)], btype='band', fs=FS, output='sos')
    return ss.sosfilt(sos, h)

def smooth(e, w=0.01):
    nw = int(w * FS)
    return np.convolve(e, np.ones(nw) / nw, 'same')

def noise_level(e):
    return np.mean(e[int(0.9 * len(e)):])

def truncation(e):
    noise = noise_level(e)
    sm = smooth(e)
    pk = int(np.argmax(sm))
    L = 10 * np.log10(sm + 1e-300); Ln = 10 * np.log10(noise)
    idx = np.where(L[pk:] <= Ln + 10)[0]
    stop = pk + (idx[0] if len(idx) else len(e) - pk)
    if stop - pk < 3:
        return stop
    t = np.arange(pk, stop)
    a, b = np.polyfit(t, L[pk:stop], 1)
    if a >= 0:
        return len(e)
    cp = (Ln - b) / a
    N = len(e)
    for it in range(0):
        if not np.isfinite(cp) or cp <= pk:
            break
        slope = a  # dB per sample
        win = int(max(min((-10.0 / slope) / 5, 800), 16))
        nb = N // win
        blk = e[:nb * win].reshape(nb, win).mean(1)
        tb = (np.arange(nb) + 0.5) * win
        Lb = 10 * np.log10(blk + 1e-300)
        nstart = int(cp + (-5.0 / slope))
        nstart = min(nstart, int(0.9 * N))
        noise = np.mean(e[max(nstart, 0):])
        Ln = 10 * np.log10(noise)
        hi = Ln + 25; lo = Ln + 5
        pkb = int(np.argmax(blk))
        sel = np.arange(pkb, nb)
        m = (Lb[sel] <= hi) & (Lb[sel] >= lo)
        # first contiguous range
        if m.sum() < 2:
            break
        idx = sel[m]
        a2, b2 = np.polyfit(tb[idx], Lb[idx], 1)
        if a2 >= 0:
            break
        ncp = (Ln - b2) / a2
        a, b = a2, b2
        if abs(ncp - cp) < 1:
            cp = ncp; break
        cp = ncp
    return int(min(max(cp, pk + 1), N))

def truncation_old(e):
    # simple: index where smoothed energy meets noise
    noise = noise_level(e)
    sm = smooth(e)
    pk = np.argmax(sm)
    idx = np.where(sm[pk:] <= noise)[0]
    return pk + idx[0] if len(idx) else len(e)

def inr(e, fc=1000):
    nw = int((0.011 if fc <= 250 else 0.010) * FS)
    sm = np.convolve(e, np.ones(nw) / nw, 'valid')
    return 10 * np.log10(sm.max() / noise_level(e))

def clarity(e, t0, ms, tend=None):
    n = int(ms / 1000 * FS)
    end = len(e) if tend is None else tend
    late = e[t0 + n:end].sum()
    if late <= 0:
        late = e[t0 + n:t0 + n + 16].sum()
    return 10 * np.log10(e[t0:t0 + n].sum() / late)

def decay_time(e, t0, tend, lo, hi):
    noise = noise_level(e)
    ee = e[t0:tend]
    sch = np.cumsum(ee[::-1])[::-1]
    sch = 10 * np.log10(sch / sch[0] + 1e-30)
    t = np.arange(len(sch)) / FS
    m = (sch <= lo) & (sch >= hi)
    if INCL and lo == 0:
        j = np.where(sch < hi)[0]
        if len(j):
            m[:j[0] + 1] = True
    if m.sum() < 2:
        return float('nan')
    a, b = np.polyfit(t[m], sch[m], 1)
    return -60.0 / a

def drr(h, pk, win_ms=2.5, te=None):
    e = h ** 2
    n = int(win_ms / 1000 * FS)
    a = max(pk - n, 0); b = pk + n + 1
    te = len(e) if te is None else te
    return 10 * np.log10(e[a:b].sum() / (e[b:te].sum()))

def room_params(h):
    e = h ** 2
    pk = int(np.argmax(np.abs(h)))
    out = {}
    tail = e[int(0.9 * FS):]
    out['peak_to_noise_db'] = 10 * np.log10(e[pk] / tail.mean())
    n50 = int(0.05 * FS)
    te = truncation(e)
    out['d50'] = min(1.0, e[pk:pk + n50].sum() / e[pk:max(te, pk + n50)].sum())
    out['drr_db'] = drr(h, pk, te=te)
    c50 = []; c80 = []; edt = []; t20 = []; t30 = []; inrs = []
    for fc in BANDS:
        eb = bandfilt(h, fc) ** 2
        te = truncation(eb)
        c50.append(clarity(eb, pk, 50, te)); c80.append(clarity(eb, pk, 80, te))
        t0d = T0D(eb, pk)
        edt.append(decay_time(eb, t0d, te, 0, -10)); t20.append(decay_time(eb, t0d, te, -5, -25)); t30.append(decay_time(eb, t0d, te, -5, -35))
        inrs.append(inr(eb, fc))
    out.update(c50_db=c50, c80_db=c80, edt_s=edt, t20_s=t20, t30_s=t30, inr_db=inrs)
    return out

def beam_params(h):
    e = h ** 2
    pk = int(np.argmax(np.abs(h)))
    c50 = []; inrs = []
    for fc in BANDS:
        eb = bandfilt(h, fc) ** 2
        te = truncation(eb)
        c50.append(clarity(eb, pk, 50, te)); inrs.append(inr(eb, fc))
    return dict(beam_c50_db=c50, beam_inr_db=inrs, beam_drr_db=drr(h, pk))

def doa(y, mics, centre, ngrid=3600, fmin=300., fmax=3500., nfft=1024, linear=False):
    import pyroomacoustics as pra
    R = (mics - centre)[:, :2].T
    Xs = np.array([pra.transform.stft.analysis(s, nfft, nfft // 2).T for s in y])
    alg = pra.doa.algorithms['NormMUSIC'](R, FS, nfft, c=C, num_src=1, n_grid=ngrid)
    alg.locate_sources(Xs, freq_range=[fmin, fmax])
    az = float(np.rad2deg(alg.azimuth_recon[0])) % 360
    if linear and az > 180:
        az = 360 - az
    g = np.asarray(alg.grid.values, float)
    par = 10 * np.log10(g.max() / g.mean())
    return az, par

def superdirective(y, mics, centre, az_deg, mu=1e-2):
    M, N = y.shape
    Y = np.fft.rfft(y, axis=1)
    f = np.fft.rfftfreq(N, 1 / FS)
    u = np.array([np.cos(np.deg2rad(az_deg)), np.sin(np.deg2rad(az_deg)), 0])
    r = mics - centre
    tau = -(r @ u) / C  # arrival time relative to centre
    D = np.linalg.norm(mics[:, None] - mics[None], axis=2)
    out = np.zeros(len(f), complex)
    for k, fk in enumerate(f):
        G = np.sinc(2 * fk * D / C) + mu * np.eye(M)
        d = np.exp(-2j * np.pi * fk * tau)
        gi = np.linalg.solve(G, d)
        w = gi / (d.conj() @ gi)
        out[k] = w.conj() @ Y[:, k]
    return np.fft.irfft(out, N)

T0D = lambda eb, pk: pk
