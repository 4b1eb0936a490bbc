import numpy as np
from scipy.signal import butter, sosfiltfilt, sosfilt
FS = 16000
BANDS = [125, 250, 500, 1000, 2000, 4000]

def deconv(y, x, L=16000, eps=1e-3, n=1<<16):
    Y = np.fft.rfft(y, n); X = np.fft.rfft(x, n)
    P = np.abs(X) ** 2
    H = Y * np.conj(X) / (P + eps * P.max())
    return np.fft.irfft(H, n)[:L]

def bandpass(h, fc, order=4, zero_phase=True):
    lo, hi = fc / np.sqrt(2), min(fc * np.sqrt(2), FS / 2 * 0.999)
    sos = butter(order, [lo, hi], btype='band', fs=FS, output='sos')
    return sosfiltfilt(sos, h) if zero_phase else sosfilt(sos, h)

def onset(h, thr_db=-20):
    e = h ** 2
    return int(np.argmax(e >= e.max() * 10 ** (thr_db / 10)))

def clarity(h, t0, ms):
    e = h ** 2; k = t0 + int(round(ms * FS / 1000))
    return 10 * np.log10(e[t0:k].sum() / e[k:].sum())

def schroeder(h, t0):
    e = h[t0:] ** 2
    s = np.cumsum(e[::-1])[::-1]
    return 10 * np.log10(s / s[0] + 1e-300)

def decay_time(edc, a, b, regress=True):
    t = np.arange(len(edc)) / FS
    idx = np.nonzero((edc <= a) & (edc > b))[0]
    if len(idx) < 2:
        i0 = int(np.argmax(edc <= a)); i1 = int(np.argmax(edc <= b))
        return (t[i1] - t[i0]) * 60 / (a - b) if i1 > i0 else float('nan')
    A = np.polyfit(t[idx], edc[idx], 1)
    return -60 / A[0]

def farina(y, x, L=16000):
    from scipy.signal import fftconvolve
    n = len(x); Lr = (n / FS) / np.log(7000 / 50)
    t = np.arange(n) / FS
    inv = x[::-1] * np.exp(-t / Lr)
    return fftconvolve(y, inv)[n - 1:n - 1 + L]
