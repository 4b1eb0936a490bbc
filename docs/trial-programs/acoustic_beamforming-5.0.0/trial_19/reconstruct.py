import sys, json, numpy as np
from scipy.signal import fftconvolve, butter, sosfilt
sys.path.insert(0, __file__.rsplit('/', 1)[0] if '/' in __file__ else '.')
from sim import *

BANDS = [125, 250, 500, 1000, 2000, 4000]
C = 343.0
_x = sweep()
_t = np.arange(FS) / FS
_L = 1.0 / np.log(7000 / 50)
INV = _x[::-1] * np.exp(-_t / _L)
INV /= np.max(np.abs(fftconvolve(_x, INV)))

def measure_ir(y):
    return fftconvolve(y, INV)[FS - 1:2 * FS - 1]

def bandf(h, fc, order=3):
    sos = butter(order, [fc / np.sqrt(2), min(fc * np.sqrt(2), 7999)], btype='bandpass', fs=FS, output='sos')
    return sosfilt(sos, h)

def db(x):
    return 10 * np.log10(np.maximum(x, 1e-300))

def lundeby(e, start, blk_ms=10):
    """returns (noise, crossing index, slope dB/sample, intercept dB at start)"""
    n = len(e)
    noise = np.mean(e[int(0.9 * n):])
    blk = int(blk_ms * FS / 1000)
    nb = (n - start) // blk
    env = e[start:start + nb * blk].reshape(nb, blk).mean(1)
    tb = start + blk * (np.arange(nb) + 0.5)
    envdb = db(env)
    ndb = db(noise)
    # fit from 0 dB to noise+10 dB
    idx = np.where(envdb > ndb + 10)[0]
    last = idx[-1] if len(idx) else 1
    last = max(last, 1)
    s, b = np.polyfit(tb[:last + 1], envdb[:last + 1], 1)
    cross = int((ndb - b) / s) if s < 0 else n
    cross = int(min(max(cross, start + blk), n))
    for _ in range(5):
        # noise from region after crossing + margin
        m0 = int(cross + (-10.0 / s if s < 0 else 0))
        if m0 < int(0.9 * n) and n - m0 > 0.1 * n:
            noise = np.mean(e[m0:])
            ndb = db(noise)
        idx = np.where((envdb < envdb.max() - 5) & (envdb > ndb + 5))[0]
        if len(idx) < 2:
            break
        s, b = np.polyfit(tb[idx], envdb[idx], 1)
        if s >= 0:
            break
        nc = int((ndb - b) / s)
        nc = int(min(max(nc, start + blk), n))
        if abs(nc - cross) < blk:
            cross = nc
            break
        cross = nc
    return noise, cross, s, b

def prelim_cross(e, start):
    n = len(e)
    noise = np.mean(e[int(0.9 * n):])
    ndb = db(noise)
    nb = (n - start) // 160
    env = db(e[start:start + nb * 160].reshape(nb, 160).mean(1))
    tb = start + 160 * (np.arange(nb) + 0.5)
    idx = np.where(env > ndb + 10)[0]
    last = max(idx[-1] if len(idx) else 1, 1)
    s, b = np.polyfit(tb[:last + 1], env[:last + 1], 1)
    if s >= 0:
        return n
    return int(min(max((ndb - b) / s, start + 160), n))

def edc_db(e, start, cross, noise, s):
    seg = e[start:cross] - 0 * noise
    tail = 0.0
    edc = np.cumsum(seg[::-1])[::-1] + tail
    return db(edc / edc[0])

def decay(edb, lo, hi):
    t = np.arange(len(edb)) / FS
    i0 = np.argmax(edb <= lo); i1 = np.argmax(edb <= hi)
    if edb[-1] > hi:
        i1 = len(edb) - 1
    if i1 <= i0 + 1:
        return float('nan')
    s, b = np.polyfit(t[i0:i1 + 1], edb[i0:i1 + 1], 1)
    return -60 / s

def clar(a, b):
    if b <= 0:
        return 40.0
    if a <= 0:
        return -40.0
    return float(np.clip(db(a / b), -40.0, 40.0))

def band_params(h, pk, st=None):
    if st is None:
        st = pk
    out = {'edt': [], 't20': [], 't30': [], 'c50': [], 'c80': [], 'inr': []}
    for fc in BANDS:
        hb = bandf(h, fc)
        e = hb ** 2
        noise, cross, s, b = lundeby(e, st)
        cross = prelim_cross(e, st)
        edb = edc_db(e, st, cross, noise, s)
        out['edt'].append(decay(edb, 0, -10))
        out['t20'].append(decay(edb, -5, -25))
        out['t30'].append(decay(edb, -5, -35))
        ee = e[:cross] - noise
        out['c50'].append(clar(ee[st:st + 800].sum(), ee[st + 800:].sum()))
        out['c80'].append(clar(ee[st:st + 1280].sum(), ee[st + 1280:].sum()))
        nb = (len(e) - pk) // 160
        ma = e[pk:pk + nb * 160].reshape(nb, 160).mean(1)
        nz_inr = np.mean(e[cross:]) if cross < len(e) - 100 else noise
        out['inr'].append(float(db(ma.max() / nz_inr)))
    return out

def onset(h):
    E = h ** 2
    return int(np.argmax(E >= E.max() * 0.01))

def broadband(h, pk):
    e = h ** 2
    st = onset(h)
    noise, cross, s, b = lundeby(e, st)
    cross = prelim_cross(e, st)
    ee = e[:cross] - noise
    d50 = ee[st:st + 800].sum() / ee[st:].sum()
    w = 40
    dr = db(ee[max(0, pk - w):pk + w + 1].sum() / max(ee[pk + w + 1:].sum(), 1e-30))
    return float(d50), float(dr)

def steering(mics, centre, az, f):
    u = np.array([np.cos(az), np.sin(az), 0.0])
    tau = -(mics - centre) @ u / C
    return np.exp(-2j * np.pi * np.outer(f, tau))

def _music_spec(R, f, mics, centre, grid):
    u = np.stack([np.cos(grid), np.sin(grid)], 1)
    tau = (mics[:, :2] - centre[:2]) @ u.T / C
    P = np.zeros(len(grid))
    M = R.shape[1]
    for k in range(len(f)):
        w, V = np.linalg.eigh(R[k])
        En = V[:, :M - 1]
        A = np.exp(2j * np.pi * f[k] * tau)
        Pk = 1.0 / np.sum(np.abs(En.conj().T @ A) ** 2, 0)
        P += Pk / Pk.max()
    return P / len(f)

def doa(y, mics, centre, linear):
    from scipy.signal import stft
    nfft, hop = 512, 256
    f, t, X = stft(y, fs=FS, window='hann', nperseg=nfft, noverlap=nfft - hop)
    k0 = int(round(300 / FS * nfft)); k1 = int(round(3500 / FS * nfft))
    ks = np.arange(k0, k1 + 1)
    X = X[:, ks, :]
    f = f[ks]
    R = np.einsum('mft,nft->fmn', X, X.conj()) / X.shape[2]
    grid = np.deg2rad(np.arange(360.0))
    P = _music_spec(R, f, mics, centre, grid)
    par = 10 * np.log10(P.max() / P.mean())
    fine = np.deg2rad(np.arange(0, 360, 0.05))
    Pf = _music_spec(R, f, mics, centre, fine)
    if linear:
        Pf[fine > np.pi + 1e-9] = -1
    az = float(np.rad2deg(fine[np.argmax(Pf)])) % 360.0
    return az, float(par)

import os
from scipy.special import j0
COH = os.environ.get('COH', 'sinc')

def beamform(y, mics, centre, az, mu=1e-2):
    M, N = y.shape
    Y = np.fft.rfft(y, axis=1)
    f = np.fft.rfftfreq(N, 1 / FS)
    d = steering(mics, centre, az, f)  # F x M
    D = np.linalg.norm(mics[:, None, :] - mics[None, :, :], axis=2)
    out = np.zeros(len(f), complex)
    for k in range(len(f)):
        G = (np.sinc(2 * f[k] * D / C) if COH == 'sinc' else j0(2 * np.pi * f[k] * D / C)) + mu * np.eye(M)
        gi = np.linalg.solve(G, d[k])
        w = gi / (d[k].conj() @ gi)
        out[k] = w.conj() @ Y[:, k]
    return np.fft.irfft(out, N)

def main():
    sc = json.load(sys.stdin)
    p = sc['parameters']
    clean, x, dim, c, mics, src = simulate(p)
    y, sig = add_noise(clean, p)
    h = measure_ir(y[0])
    pk = int(np.argmax(np.abs(h)))
    e = h ** 2
    pnr = float(db(e[pk] / np.mean(e[int(0.9 * len(e)):])))
    bp = band_params(h, pk, onset(h))
    d50, drr = broadband(h, pk)
    az, par = doa(y, mics, c, p['microphone_array'].startswith('linear'))
    import os
    MU = os.environ.get('MU', '1e-2')
    mu = 10 ** (-p['snr_db'] / 10) if MU == 'snr' else float(MU)
    yb = beamform(y, mics, c, np.deg2rad(az), mu)
    hbm = measure_ir(yb)
    pkb = int(np.argmax(np.abs(hbm)))
    bbp = band_params(hbm, pkb, onset(hbm))
    _, bdrr = broadband(hbm, pkb)
    out = dict(azimuth_deg=az, beam_c50_db=bbp['c50'], beam_drr_db=bdrr, beam_inr_db=bbp['inr'],
               c50_db=bp['c50'], c80_db=bp['c80'], d50=d50, drr_db=drr, edt_s=bp['edt'], inr_db=bp['inr'],
               peak_to_noise_db=pnr, spectrum_par_db=par, t20_s=bp['t20'], t30_s=bp['t30'])
    def clean_v(v):
        if isinstance(v, list):
            return [clean_v(a) for a in v]
        v = float(v)
        return v if np.isfinite(v) else 0.0
    print(json.dumps({k: clean_v(v) for k, v in out.items()}))

if __name__ == '__main__':
    main()
