import sys, json, numpy as np
import os
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sim, ana, lund, lund3
import pyroomacoustics as pra

C = 343.0
CFG = dict(drr_pre=0.0025, drr_post=0.0025, doa='NormMUSIC', nfft=512, hop=256, ngrid=360, freq_range=[300, 3500], mu=0.01, sm_ms=10, sub=True, edc="lund", lund_min=0.05, lmargin=10.0)

def edc_curve(e, t0, n):
    ee = e[t0:] - n
    s = np.cumsum(ee[::-1])[::-1]
    s = np.maximum(s, s[0] * 1e-12)
    return 10 * np.log10(s / s[0])

def clar(e, t0, ms, n):
    k = t0 + int(round(ms * ana.FS / 1000))
    return float(10 * np.log10((e[t0:k] - n).sum() / (e[k:] - n).sum()))

def measure(h, full=True):
    out = {}
    t0 = ana.onset(h)
    e = h ** 2
    nb = e[-len(e) // 10:].mean()
    out['peak_to_noise_db'] = float(10 * np.log10(e.max() / nb))
    inr, c50, c80, edt, t20, t30 = [], [], [], [], [], []
    for fc in ana.BANDS:
        hb = ana.bandpass(h, fc, 3, False); eb = hb ** 2
        n = eb[-len(eb) // 10:].mean()
        k = int(CFG['sm_ms'] * ana.FS / 1000)
        ee = eb[t0:]; mblk = len(ee) // k
        sm = ee[:mblk * k].reshape(mblk, k).mean(1)
        inr.append(float(10 * np.log10(sm.max() / n)))
        c50.append(clar(eb, t0, 50, n))
        if full:
            c80.append(clar(eb, t0, 80, n))
            try:
                edc = lund3.lundeby(eb, t0, margin=CFG['lmargin'], iters=0, comp=True, start='peak')[0]
            except Exception:
                edc = edc_curve(eb, t0, n)
            edt.append(float(ana.decay_time(edc, 0, -10)))
            t20.append(float(ana.decay_time(edc, -5, -25)))
            t30.append(float(ana.decay_time(edc, -5, -35)))
    out.update(inr_db=inr, c50_db=c50)
    if full:
        out.update(c80_db=c80, edt_s=edt, t20_s=t20, t30_s=t30)
        k50 = t0 + int(0.05 * ana.FS)
        out['d50'] = float((e[t0:k50] - nb).sum() / (e[t0:] - nb).sum())
    a = max(0, t0 - 16); b = t0 + 41  # direct window: 1 ms before onset .. 2.5 ms after (inclusive)
    out['drr_db'] = float(10 * np.log10((e[a:b] - nb).sum() / (e[b:] - nb).sum()))
    return out

def doa(y, mics, snr):
    from scipy.signal import stft
    nfft = CFG['nfft']
    f, t, X = stft(y, ana.FS, nperseg=nfft, noverlap=nfft // 2)
    L = mics.T - mics.mean(0)[:, None]
    algo = pra.doa.algorithms[CFG['doa']](L, ana.FS, nfft, c=C, num_src=1, n_grid=CFG['ngrid'])
    lo = int(round(CFG['freq_range'][0] / ana.FS * nfft)); hi = int(round(CFG['freq_range'][1] / ana.FS * nfft))
    algo.locate_sources(X, freq_bins=list(range(lo, hi + 1)))
    g = np.asarray(algo.grid.values, float); n = len(g); k = int(np.argmax(g))
    y0, y1, y2 = g[(k - 1) % n], g[k], g[(k + 1) % n]
    den = y0 - 2 * y1 + y2
    dl = 0.5 * (y0 - y2) / den if den != 0 else 0.0
    az = float(((k + dl) * 360.0 / n) % 360)
    if np.ptp(mics[:, 1]) < 1e-9 and az > 180:
        az = 360 - az
    if np.ptp(mics[:, 1]) < 1e-9:
        par = float(10 * np.log10(g.max() / g[:n // 2 + 1].mean()))
    else:
        par = float(10 * np.log10(g.max() / g.mean()))
    return az, par

def beam(y, mics, az, snr):
    N = y.shape[1]
    Y = np.fft.rfft(y, axis=1)
    f = np.fft.rfftfreq(N, 1 / ana.FS)
    rel = mics - mics.mean(0)
    u = np.array([np.cos(np.deg2rad(az)), np.sin(np.deg2rad(az))])
    tau = -(rel @ u) / C
    dist = np.linalg.norm(rel[:, None] - rel[None], axis=2)
    mu = CFG['mu'] if CFG['mu'] is not None else 10 ** (-snr / 10)
    M = len(mics); out = np.zeros(len(f), complex)
    I = np.eye(M)
    for i, fi in enumerate(f):
        G = np.sinc(2 * fi * dist / C) + mu * I
        d = np.exp(-2j * np.pi * fi * tau)
        gi = np.linalg.solve(G, d)
        w = gi / (d.conj() @ gi)
        out[i] = w.conj() @ Y[:, i]
    return np.fft.irfft(out, N)

def run(p):
    y, clean, x, mics, c = sim.simulate(p)
    h0 = ana.farina(y[0], x)
    res = measure(h0)
    az, par = doa(y, mics, p['snr_db'])
    yb = beam(y, mics, az, p['snr_db'])
    hb = ana.farina(yb, x)
    mb = measure(hb, full=False)
    res.update(azimuth_deg=az, spectrum_par_db=par, beam_c50_db=mb['c50_db'], beam_drr_db=mb['drr_db'], beam_inr_db=mb['inr_db'])
    for k, v in list(res.items()):
        if isinstance(v, list):
            res[k] = [float(z) if np.isfinite(z) else 0.0 for z in v]
        elif not np.isfinite(v):
            res[k] = 0.0
    return res

if __name__ == '__main__':
    sc = json.load(sys.stdin)
    print(json.dumps(run(sc['parameters'])))
