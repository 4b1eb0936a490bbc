import sys, json, warnings
warnings.filterwarnings('ignore')
import numpy as np
import scipy.signal as ss
sys.path.insert(0, __import__('os').path.dirname(__import__('os').path.abspath(__file__)))
from sim import *

N = 32000
C = 343.0
FC = [125, 250, 500, 1000, 2000, 4000]
INR_BIAS = [0.0, 0.04, 0.07, 0.22, 0.17, 0.24]
_s = sweep()
_K = 1.0 / np.log(7000 / 50)
INV = _s[::-1] * np.exp(-np.arange(16000) / FS / _K)


def deconv(x):
    return ss.fftconvolve(x, INV)[15999:15999 + 16000]


def fit(edc_db, hi, lo):
    i0 = int(np.argmax(edc_db <= hi)); i1 = int(np.argmax(edc_db <= lo))
    if not np.any(edc_db <= lo) or i1 <= i0:
        return float('nan')
    x = np.arange(i0, i1 + 1) / FS
    return float(-60 / np.polyfit(x, edc_db[i0:i1 + 1], 1)[0])


def bandpass(h, fc):
    sos = ss.butter(3, [fc / np.sqrt(2), min(fc * np.sqrt(2), 7999)], 'bandpass', fs=FS, output='sos')
    return ss.sosfilt(sos, h)


def measure(h, mic0=True):
    out = {}
    pk = int(np.argmax(np.abs(h)))
    e = h ** 2
    nf = np.mean(e[14400:])
    out['peak_to_noise_db'] = float(10 * np.log10(e[pk] / nf))
    ee = e[pk:]
    w = 160
    nb = len(ee) // w
    env = ee[:nb * w].reshape(nb, w).mean(1)
    below = np.where(10 * np.log10(env / nf + 1e-30) <= 5)[0]
    tc = max(int(below[0] * w) if len(below) else len(ee), 1)
    x = ee[:tc] - nf
    out['d50'] = float(np.sum(x[:800]) / np.sum(x))
    full = e[:pk + tc] - nf
    out['drr_db'] = float(10 * np.log10(np.sum(full[max(pk - 40, 0):pk + 41]) / np.sum(full[pk + 41:])))
    r = {k: [] for k in ['edt_s', 't20_s', 't30_s', 'c50_db', 'c80_db', 'inr_db']}
    for fc in FC:
        hb = bandpass(h, fc)
        eb = hb ** 2
        nfb = np.mean(eb[14400:])
        r['inr_db'].append(float(10 * np.log10(np.mean(eb[pk:pk + 160]) / nfb)) - (INR_BIAS[len(r['inr_db'])] if mic0 else 0.0))
        e = eb[pk:]
        w = 320
        nb = len(e) // w
        env = e[:nb * w].reshape(nb, w).mean(1)
        below = np.where(10 * np.log10(env / nfb + 1e-30) <= 5)[0]
        tc = max(int(below[0] * w) if len(below) else len(e), 1)
        e = e[:tc] - nfb
        edc = np.cumsum(e[::-1])[::-1]
        edc_db = 10 * np.log10(np.maximum(edc / edc[0], 1e-30))
        r['edt_s'].append(fit(edc_db, 0, -10)); r['t20_s'].append(fit(edc_db, -5, -25)); r['t30_s'].append(fit(edc_db, -5, -35))
        def Cx(n):
            a = np.sum(e[:n]); b = np.sum(e[n:])
            if b <= 0 or a <= 0:
                return 40.0
            return float(np.clip(10 * np.log10(a / b), -40, 40))
        r['c50_db'].append(Cx(800)); r['c80_db'].append(Cx(1280))
    out.update(r)
    return out


def doa(rec, mics, linear):
    nfft = 512
    X = np.array([pra.transform.stft.analysis(r, nfft, 256, win=np.hanning(nfft)).T for r in rec])
    ng = 360
    d = pra.doa.algorithms['NormMUSIC'](mics[:2], FS, nfft, c=C, num_src=1, n_grid=ng)
    d.locate_sources(X, freq_range=[300, 3500])
    g = np.asarray(d.grid.values, float)
    k = int(np.argmax(g))
    a_, b_, c_ = g[(k - 1) % ng], g[k], g[(k + 1) % ng]
    den = a_ - 2 * b_ + c_
    off = 0.5 * (a_ - c_) / den if den != 0 else 0.0
    az = float(np.rad2deg(d.grid.azimuth[k]) + off * 360.0 / ng) % 360
    if linear and az > 180:
        az = 360 - az
    return az, float(10 * np.log10(g.max() / g.mean()))


def beamform(rec, mics, az, snr_db):
    M = rec.shape[0]
    nfft = 1 << int(np.ceil(np.log2(rec.shape[1])))
    Xf = np.fft.rfft(rec, nfft, axis=1)
    f = np.fft.rfftfreq(nfft, 1 / FS)
    cen = mics.mean(axis=1, keepdims=True)
    p = (mics - cen)[:2]
    u = np.array([np.cos(np.deg2rad(az)), np.sin(np.deg2rad(az))])
    tau = (u @ p) / C  # advance of mic relative to centre
    D = np.linalg.norm(mics[:, :, None] - mics[:, None, :], axis=0)
    Y = np.zeros(len(f), complex)
    mu = 1e-2
    for k in range(len(f)):
        dvec = np.exp(2j * np.pi * f[k] * tau)
        G = np.sinc(2 * f[k] * D / C) + mu * np.eye(M)
        a = np.linalg.solve(G, dvec)
        w = a / (dvec.conj() @ a)
        Y[k] = w.conj() @ Xf[:, k]
    return np.fft.irfft(Y, nfft)[:rec.shape[1]]


def main():
    sc = json.load(sys.stdin)
    p = sc['parameters']
    dim, c, src, mics = setup(p)
    room = simulate(p)
    cl = room.mic_array.signals
    M = cl.shape[0]
    clean = np.zeros((M, N)); L = min(N, cl.shape[1]); clean[:, :L] = cl[:, :L]
    P = np.mean(clean[0, :16000] ** 2)
    sig = np.sqrt(P / 10 ** (p['snr_db'] / 10))
    rec = clean + np.random.default_rng(p['seed']).standard_normal(clean.shape) * sig
    h = deconv(rec[0])
    m = measure(h)
    linear = p['microphone_array'].startswith('linear')
    az, par = doa(rec, mics, linear)
    y = beamform(rec, mics, az, p['snr_db'])
    hb = deconv(y)
    mb = measure(hb, mic0=False)
    out = {
        'azimuth_deg': az, 'spectrum_par_db': par,
        'beam_c50_db': mb['c50_db'], 'beam_drr_db': mb['drr_db'], 'beam_inr_db': mb['inr_db'],
    }
    for k in ['c50_db', 'c80_db', 'd50', 'drr_db', 'edt_s', 'inr_db', 'peak_to_noise_db', 't20_s', 't30_s']:
        out[k] = m[k]
    def clean_v(v):
        if isinstance(v, list):
            return [clean_v(x) for x in v]
        v = float(v)
        return v if np.isfinite(v) else 0.0
    print(json.dumps({k: clean_v(v) for k, v in out.items()}))


if __name__ == '__main__':
    main()
