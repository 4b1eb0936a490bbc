import numpy as np, scipy.signal as ss
FS=16000; C=343.0
def spectrum(rec, pos, nfft=512, hop=None, fr=(300,3500), grid=np.arange(3600)*0.1, norm=True, win='hann', seg=None):
    hop = hop or nfft//2
    x = rec if seg is None else rec[:, seg[0]:seg[1]]
    f, t, X = ss.stft(x, FS, window=win, nperseg=nfft, noverlap=nfft-hop, boundary=None, padded=False)
    k = np.where((f >= fr[0]) & (f <= fr[1]))[0]
    th = np.deg2rad(grid)
    u = np.stack([np.cos(th), np.sin(th)], 1)  # G x 2
    tau = (pos[:, :2] @ u.T) / C   # M x G : advance for mic
    P = np.zeros(len(grid))
    M = rec.shape[0]
    for kk in k:
        Xk = X[:, kk, :]
        R = Xk @ Xk.conj().T / Xk.shape[1]
        w, V = np.linalg.eigh(R)
        En = V[:, :M-1]
        A = np.exp(2j*np.pi*f[kk]*tau)  # M x G
        den = np.sum(np.abs(En.conj().T @ A)**2, 0)
        p = 1/np.maximum(den,1e-30)
        if norm: p = p/p.max()
        P += p
    return P
