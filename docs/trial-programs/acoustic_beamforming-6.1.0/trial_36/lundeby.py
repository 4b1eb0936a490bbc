import numpy as np
FS = 16000


def _blocks(e, w):
    n = len(e) // w
    b = e[:n * w].reshape(n, w).mean(1)
    t = (np.arange(n) + 0.5) * w
    return t, 10 * np.log10(np.maximum(b, 1e-300))


def lundeby(e, p=5, max_iter=5, w0=160, hi0=0.0, lo0=10.0, nfrac=0.1, margin_db=10.0, dyn=(5.0, 15.0)):
    N = len(e)
    noise = np.mean(e[int((1 - nfrac) * N):])
    Ln = 10 * np.log10(noise)
    t, L = _blocks(e, w0)
    pk = int(np.argmax(L))
    j = np.where(L[pk:] <= Ln + lo0)[0]
    i1 = pk + int(j[0]) if len(j) else len(L)
    if i1 - pk < 2:
        return N, noise, None
    a, b = np.polyfit(t[pk:i1], L[pk:i1], 1)
    if a >= 0:
        return N, noise, None
    cross = (Ln - b) / a
    for _ in range(max_iter):
        w = int(np.clip(-10.0 / a / p, 16, N // 20))
        t, L = _blocks(e, w)
        ns = int(cross + margin_db / (-a))
        if N - ns < nfrac * N:
            ns = int((1 - nfrac) * N)
        ns = max(ns, 0)
        noise = np.mean(e[ns:])
        Ln = 10 * np.log10(noise)
        pk = int(np.argmax(L))
        hi = np.where(L[pk:] <= Ln + dyn[1])[0]
        lo = np.where(L[pk:] <= Ln + dyn[0])[0]
        i0 = pk + int(hi[0]) if len(hi) else pk
        i1 = pk + int(lo[0]) if len(lo) else len(L)
        if i1 - i0 < 2:
            i0 = pk
        if i1 - i0 < 2:
            break
        a2, b2 = np.polyfit(t[i0:i1], L[i0:i1], 1)
        if a2 >= 0:
            break
        a, b = a2, b2
        cn = (Ln - b) / a
        if abs(cn - cross) < 0.001 * FS:
            cross = cn
            break
        cross = cn
    T = int(np.clip(cross, 1, N))
    return T, noise, (a, b)


def edc_comp(e, T, fit, comp=True):
    ee = e[:T]
    C = 0.0
    if comp and fit is not None:
        a, b = fit
        r = 10 ** (a / 10)
        C = 10 ** ((a * T + b) / 10) * r / (1 - r)
    E = np.cumsum(ee[::-1])[::-1] + C
    E = np.maximum(E, 1e-300)
    return 10 * np.log10(E / E[0])
