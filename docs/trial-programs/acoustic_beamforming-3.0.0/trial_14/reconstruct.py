import sys, json, os
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np
from scipy import signal as ss
import sim, meas

FS = 16000
C = 343.0
BANDS = meas.BANDS
NIR = 16000

def measure_ir(y, x):
    inv = meas.farina_inv(x)
    return ss.fftconvolve(y, inv)[len(x) - 1:len(x) - 1 + NIR]

def onset(h):
    e = h ** 2
    return int(np.argmax(e >= e.max() * 1e-2))

def noise_tail(e):
    return e[int(0.9 * len(e)):].mean()

def band_e(h, fc):
    return meas.band_filter(h, fc, 3) ** 2

def cross_full(e, k1, B=160):
    nz = noise_tail(e)
    ee = e[k1:]; nb = len(ee) // B
    env = ee[:nb * B].reshape(nb, B).mean(1)
    db = 10 * np.log10(env / env[0] + 1e-300); ndb = 10 * np.log10(nz / env[0])
    j = int(np.argmax(db < ndb + 10)) if np.any(db < ndb + 10) else nb
    t = (np.arange(nb) + 0.5) * B
    j = max(j, 2)
    a, b = np.polyfit(t[:j], db[:j], 1)
    if a >= 0:
        return len(ee), None
    tc = int(min(len(ee), max(B, (ndb - b) / a)))
    return tc, (a, b, env[0])

def cross(e, k1, B=160):
    return cross_full(e, k1, B)[0]

def tail_energy(fit, t):
    if fit is None:
        return 0.0
    a, b, e0 = fit
    return e0 * 10 ** ((a * t + b) / 10) * 10 / (-a * np.log(10))

def clarity(e, k1, ms):
    n = int(ms * FS / 1000)
    tc, fit = cross_full(e, k1)
    ee = e[k1:k1 + tc]
    early = ee[:n].sum()
    if n < tc:
        late = ee[n:].sum() + tail_energy(fit, tc)
    else:
        late = tail_energy(fit, n)
    return 10 * np.log10(early / max(late, 1e-300))

def inr(e, k1):
    ee = e[k1:]; nb = len(ee) // 160
    env = ee[:nb * 160].reshape(nb, 160).mean(1)
    return 10 * np.log10(env.max() / noise_tail(e))

def decays(e, k1):
    tc, fit = cross_full(e, k1)
    e = e[k1:k1 + tc].copy()
    if os.environ.get('DECCORR'):
        e[-1] += tail_energy(fit, tc)
    edc = np.cumsum(e[::-1])[::-1]
    edc = 10 * np.log10(np.maximum(edc, 1e-300) / edc[0])
    return meas.decay_time(edc, 0, -10), meas.decay_time(edc, -5, -25), meas.decay_time(edc, -5, -35)

def drr(e, k0, k1, w=40):
    tc, fit = cross_full(e, k1)
    ee = e[:k1 + tc]
    dE = ee[max(0, k0 - w):k0 + w + 1].sum()
    return 10 * np.log10(dE / (ee[k0 + w + 1:].sum() + tail_energy(fit, tc)))

def fin(v, d=0.0):
    v = float(v)
    return v if np.isfinite(v) else d

def doa(y, mics, centre):
    import pyroomacoustics as pra
    nfft = 512
    X = np.array([pra.transform.stft.analysis(s, nfft, nfft // 2).T for s in y])
    L = (mics - centre)[:, :2].T
    alg = pra.doa.algorithms['NormMUSIC'](L, FS, nfft, c=C, num_src=1, n_grid=1440)
    alg.locate_sources(X, freq_range=[300, 5000])
    g = np.asarray(alg.grid.values)
    az = float(np.rad2deg(alg.grid.azimuth[np.argmax(g)])) % 360
    if abs(np.ptp(L[1])) < 1e-9 and az > 180:
        az = 360 - az
    par = 10 * np.log10(g.max() / g.mean())
    return az, par

def beamform(y, mics, centre, az_deg, mu=1e-2):
    n = y.shape[1]
    Y = np.fft.rfft(y, n)
    f = np.fft.rfftfreq(n, 1 / FS)
    u = np.array([np.cos(np.deg2rad(az_deg)), np.sin(np.deg2rad(az_deg)), 0.0])
    r = mics - centre
    tau = r @ u / C  # mic m receives earlier by tau
    D = np.linalg.norm(r[:, None, :] - r[None, :, :], axis=2)
    M = len(mics)
    out = np.zeros(len(f), complex)
    for k, fk in enumerate(f):
        d = np.exp(2j * np.pi * fk * tau)
        G = np.sinc(2 * fk * D / C) + mu * np.eye(M)
        gi = np.linalg.solve(G, d)
        w = gi / (np.conj(d) @ gi)
        out[k] = np.conj(w) @ Y[:, k]
    return np.fft.irfft(out, n)

def analyse(h):
    k1 = onset(h); e0 = h ** 2
    return k1, e0

def main():
    sc = json.load(sys.stdin)
    p = sc['parameters']
    rec, room, x, centre, mics, src = sim.simulate(p)
    y = meas.add_noise(rec, p['seed'], p['snr_db'])
    h = measure_ir(y[0], x)
    k1 = onset(h); k0 = int(np.argmax(np.abs(h))); e0 = h ** 2
    out = {}
    out['peak_to_noise_db'] = fin(10 * np.log10(e0.max() / noise_tail(e0)))
    c50 = []; c80 = []; inrs = []; edt = []; t20 = []; t30 = []
    for fc in BANDS:
        e = band_e(h, fc)
        c50.append(fin(clarity(e, k1, 50))); c80.append(fin(clarity(e, k1, 80)))
        inrs.append(fin(inr(e, k1)))
        a, b, c = decays(e, k1)
        edt.append(fin(a, 0.3)); t20.append(fin(b, 0.3)); t30.append(fin(c, 0.3))
    out.update(c50_db=c50, c80_db=c80, inr_db=inrs, edt_s=edt, t20_s=t20, t30_s=t30)
    en = e0 - noise_tail(e0)
    out['d50'] = fin(en[k1:k1 + 800].sum() / en[k1:].sum())
    w = 40
    out['drr_db'] = fin(drr(e0, k0, k1))
    try:
        az, par = doa(y, mics, centre)
    except Exception:
        az, par = float(p['source_azimuth']), 5.0
    out['azimuth_deg'] = fin(az); out['spectrum_par_db'] = fin(par)
    yb = beamform(y, mics, centre, az)
    hb = measure_ir(yb, x)
    k1b = onset(hb); k0b = int(np.argmax(np.abs(hb))); eb = hb ** 2
    bc50 = []; binr = []
    for fc in BANDS:
        e = band_e(hb, fc)
        bc50.append(fin(clarity(e, k1b, 50))); binr.append(fin(inr(e, k1b)))
    out['beam_c50_db'] = bc50; out['beam_inr_db'] = binr
    out['beam_drr_db'] = fin(drr(eb, k0b, k1b))
    print(json.dumps(out))

if __name__ == '__main__':
    main()
