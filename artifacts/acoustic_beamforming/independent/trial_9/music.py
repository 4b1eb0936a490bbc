import numpy as np
import scipy.signal as ss
FS=16000; C=343.0
def spectra(y, nfft=512, hop=None, window="hann"):
    hop = hop or nfft//2
    f, t, Z = ss.stft(y, fs=FS, window=window, nperseg=nfft, noverlap=nfft-hop, boundary=None, padded=False)
    return f, Z  # M x F x T
def music(y, rel, az_grid_deg, nfft=512, fr=(300,3500), norm=False, hop=None, f=None, Z=None):
    if Z is None: f, Z = spectra(y, nfft, hop)
    M = y.shape[0]
    kk = np.where((f >= fr[0]) & (f <= fr[1]))[0]
    th = np.deg2rad(az_grid_deg)
    u = np.stack([np.cos(th), np.sin(th)], 0)  # 2 x G
    proj = rel[:, :2] @ u  # M x G
    P = np.zeros(len(th))
    for k in kk:
        X = Z[:, k, :]
        R = X @ X.conj().T / X.shape[1]
        w, V = np.linalg.eigh(R)
        En = V[:, :M-1]
        A = np.exp(2j*np.pi*f[k]*proj/C)  # M x G
        den = np.sum(np.abs(En.conj().T @ A)**2, 0)
        p = 1/den
        if norm: p = p/p.max()
        P += p
    return P
