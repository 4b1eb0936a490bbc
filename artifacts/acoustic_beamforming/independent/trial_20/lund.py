import numpy as np
FS = 16000
def blocks(e, w):
    w = max(1, int(w)); nb = len(e) // w
    env = e[:nb * w].reshape(nb, w).mean(1)
    t = (np.arange(nb) + 0.5) * w
    return t, env
def linfit(t, y):
    if len(t) < 2: return None
    a, b = np.polyfit(t, y, 1); return a, b
def lundeby(e, W0=0.01, per10=5, after_db=5, hi=20, lo=5, maxit=10, noise_frac=0.1):
    """e: energy starting at onset. returns (tc samples, noise power, intercept dB, slope dB/sample, prelim intercept)"""
    N = len(e)
    noise = np.mean(e[int((1 - noise_frac) * N):])
    t, env = blocks(e, W0 * FS)
    with np.errstate(divide="ignore"):
        ed = 10 * np.log10(env + 1e-300); nd = 10 * np.log10(noise)
    i0 = int(np.argmax(ed))
    below = np.where(ed[i0:] <= nd + 10)[0]
    i1 = i0 + (below[0] if len(below) else len(ed) - i0)
    if i1 - i0 < 2:
        return N, noise, ed[i0], -1e-9, ed[i0]
    a, b = linfit(t[i0:i1], ed[i0:i1])
    prelim_b = b
    if a >= 0:
        return N, noise, b, a, b
    tc = (nd - b) / a
    for it in range(maxit):
        w = (-10.0 / a) / per10
        if w > len(e) / 4: break
        t, env = blocks(e, w)
        with np.errstate(divide="ignore"):
            ed = 10 * np.log10(env + 1e-300)
        # noise from point after_db below crossing
        ns = int(tc + after_db / (-a))
        ns = min(ns, int((1 - noise_frac) * N))
        ns = max(ns, 0)
        noise = np.mean(e[ns:]); nd = 10 * np.log10(noise)
        i0 = int(np.argmax(ed))
        sel = np.where((ed <= nd + lo + hi) & (ed >= nd + lo))[0]
        sel = sel[sel >= i0]
        if len(sel) < 2: break
        # contiguous from first
        j0 = sel[0]; j1 = sel[-1]
        a2, b2 = linfit(t[j0:j1 + 1], ed[j0:j1 + 1])
        if a2 >= 0: break
        a, b = a2, b2
        tc_new = (nd - b) / a
        if abs(tc_new - tc) < 0.001 * FS:
            tc = tc_new; break
        tc = tc_new
    tc = int(min(max(tc, 1), N))
    return tc, noise, b, a, prelim_b
