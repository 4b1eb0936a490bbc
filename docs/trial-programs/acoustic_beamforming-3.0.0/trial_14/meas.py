import numpy as np
from scipy import signal as ss
FS = 16000
BANDS = [125, 250, 500, 1000, 2000, 4000]

def add_noise(rec, seed, snr_db):
    p0 = np.mean(rec[0, :FS] ** 2)
    sig = np.sqrt(p0 / 10 ** (snr_db / 10))
    n = np.random.default_rng(seed).standard_normal(rec.shape)
    return rec + sig * n

def deconv(y, x, mode='div', n=None, eps=0.0):
    if n is None: n = len(y) + len(x)
    Y = np.fft.rfft(y, n); X = np.fft.rfft(x, n)
    if mode == 'div':
        H = Y / X
    else:
        H = Y * np.conj(X) / (np.abs(X) ** 2 + eps * np.max(np.abs(X)) ** 2)
    return np.fft.irfft(H, n)

def farina_inv(x):
    n = len(x); t = np.arange(n) / FS
    L = 1.0 / np.log(7000 / 50)
    inv = x[::-1] * np.exp(-t / L)
    return inv

def band_filter(h, fc, order=3):
    sos = ss.butter(order, [fc / np.sqrt(2), fc * np.sqrt(2)], btype='bandpass', fs=FS, output='sos')
    return ss.sosfilt(sos, h)

def schroeder_db(h):
    e = np.cumsum((h ** 2)[::-1])[::-1]
    return 10 * np.log10(e / e[0] + 1e-300)

def decay_time(edc, lo, hi):
    # fit between lo and hi dB (negative numbers), return time to -60
    i0 = np.argmax(edc <= lo); i1 = np.argmax(edc <= hi)
    if i1 <= i0 + 1: return float('nan')
    t = np.arange(i0, i1) / FS
    a, b = np.polyfit(t, edc[i0:i1], 1)
    return -60.0 / a
