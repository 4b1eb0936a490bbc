import numpy as np
FS = 16000
INCL = 0
TOFF = 0.5
EXT = 1
FB = 3

def blocks(e, st, W):
    ee = e[st:]
    n = len(ee) // W
    return ee[:n * W].reshape(n, W).mean(1)

def lundeby(e, t0, iters=5, p=5, comp=True, fitlo=5, fitrange=20, first_margin=10):
    L = len(e)
    nb = np.mean(e[int(0.9 * L):])
    N = 10 * np.log10(nb)
    W = 160
    bl = blocks(e, t0, W)
    inr = 10 * np.log10(bl.max() / nb)
    Lb = 10 * np.log10(bl + 1e-300)
    tb = (np.arange(len(Lb)) + TOFF) * W  # sample centres rel t0
    i1 = int(np.argmax(Lb <= N + first_margin))
    if not np.any(Lb <= N + first_margin):
        i1 = len(Lb)
    i1 = i1 + INCL
    if i1 < 2 and len(Lb) >= FB:
        i1 = FB
    if i1 < 2:
        return dict(inr=inr, cp=L - t0, a=None, b=None, nb=nb)
    a, b = np.polyfit(tb[:i1], Lb[:i1], 1)
    cp = (N - b) / a if a < 0 else L - t0
    for _ in range(iters if iters else 0):
        if a >= 0: break
        Wn = int(max(1, round(-10 / (a * p))))
        bl = blocks(e, t0, Wn)
        Lb = 10 * np.log10(bl + 1e-300)
        tb = (np.arange(len(Lb)) + 0.5) * Wn
        nstart = int(cp - 10 / a) + t0  # point 10 dB below crossing on line
        nstart = min(nstart, int(0.9 * L))
        nb2 = np.mean(e[nstart:]) if nstart < L else nb
        N = 10 * np.log10(nb2)
        hi = N + fitlo + fitrange; lo = N + fitlo
        idx = np.where((Lb <= hi) & (Lb >= lo) & (tb < cp + 0 * W))[0]
        i_hi = int(np.argmax(Lb <= hi)); i_lo = int(np.argmax(Lb <= lo))
        if i_lo - i_hi < 2: break
        a2, b2 = np.polyfit(tb[i_hi:i_lo], Lb[i_hi:i_lo], 1)
        if a2 >= 0: break
        cp2 = (N - b2) / a2
        a, b = a2, b2
        if abs(cp2 - cp) < 0.001 * cp:
            cp = cp2; break
        cp = cp2
    cp = int(max(10, min(cp, L - t0)))
    return dict(inr=inr, cp=cp, a=a, b=b, nb=nb)

def edc_from(e, t0, lr, comp=True, start=None):
    cp = lr["cp"]
    st = t0 if start is None else start
    seg = e[st:t0 + cp]
    S = np.cumsum(seg[::-1])[::-1]
    if comp and lr["a"] is not None and lr["a"] < 0:
        a, b = lr["a"], lr["b"]
        S = S + 10 ** ((a * cp + b) / 10) / (-a * np.log(10) / 10)
        if EXT:
            n_ext = len(e) - (t0 + cp)
            if n_ext > 0:
                tt = cp + np.arange(n_ext)
                S = np.concatenate([S, 10 ** ((a * tt + b) / 10) / (-a * np.log(10) / 10)])
    return 10 * np.log10(S / S[0] + 1e-300)
