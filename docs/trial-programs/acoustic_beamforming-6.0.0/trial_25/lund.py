import numpy as np
FS=16000
MODE='old'
DR=20.0
def blocks(e, v):
    nb = len(e) // v
    m = e[:nb * v].reshape(nb, v).mean(1)
    t = (np.arange(nb) * v + v / 2)
    return m, t
def linfit(t, L):
    B, A = np.polyfit(t, L, 1)
    return A, B
def lundeby(e, W=0.01, noise_frac=0.1, p=10, head=10.0, maxit=50):
    """e: energy from onset. returns tc, C, noise, A, B (dB per sample)"""
    n = len(e)
    emax = e.max()
    E = e / emax
    v = max(int(W * FS), 1)
    m, t = blocks(E, v)
    mdb = 10 * np.log10(np.maximum(m, 1e-30))
    noise = E[int((1 - noise_frac) * n):].mean()
    ndb = 10 * np.log10(noise)
    idx = np.where(mdb > ndb + head)[0]
    if len(idx) < 2:
        return n, 0.0, noise * emax, 0.0, -1.0, ndb
    r = idx[-1]
    i0 = int(np.argmax(mdb))
    A, B = linfit(t[i0:r + 1], mdb[i0:r + 1]) if r > i0 + 1 else linfit(t[:r+1], mdb[:r+1])
    if B >= 0:
        return n, 0.0, noise * emax, A, B, ndb
    tc = (ndb - A) / B
    err = 1.0; it = 0
    while err > 1e-4 and it < maxit:
        it += 1
        delta = abs(10 / B)
        v = max(int(np.floor(delta / p)), 1)
        end = int(round(tc - delta))
        if end < 2 * v: end = min(n, 2 * v)
        end = min(end, n)
        m, t = blocks(E[:end], v)
        if len(m) < 2: break
        mdb = 10 * np.log10(np.maximum(m, 1e-30))
        ns = int(round(tc + delta))
        if ns > int((1 - noise_frac) * n) or ns < 0:
            ns = int((1 - noise_frac) * n)
        noise = E[ns:].mean()
        ndb = 10 * np.log10(noise)
        i0 = int(np.argmax(mdb))
        if MODE == "contig":
            rr = np.where(mdb[i0:] < ndb + head)[0]
            r_ = i0 + rr[0] if len(rr) else len(mdb)
            ll = np.where(mdb[i0:] < ndb + head + DR)[0]
            l_ = i0 + ll[0] if len(ll) else i0
            if r_ - l_ < 2:
                l_ = i0
            sel = np.arange(l_, r_)
        else:
            sel = np.where((mdb[i0:] < mdb[i0] - 5) & (mdb[i0:] > ndb + head))[0] + i0
        if len(sel) < 2:
            sel = np.arange(i0, len(mdb))
            if len(sel) < 2: break
        A, B = linfit(t[sel], mdb[sel])
        if B >= 0: break
        tn = (ndb - A) / B
        err = abs(tc - tn) / max(tc, 1)
        tc = tn
    tc = int(min(max(round(tc), 1), n))
    # compensation
    k = -B / (10 * np.log10(np.e))  # per sample decay rate of energy (ln)
    C = emax * 10 ** (A / 10) * np.exp(-k * tc) / k if k > 0 else 0.0
    return tc, C, noise * emax, A, B, ndb
