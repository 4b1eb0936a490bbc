import numpy as np
FS = 16000

def smooth(e, win):
    n = max(1, int(round(win * FS)))
    nb = len(e) // n
    blocks = e[:nb * n].reshape(nb, n).mean(1)
    t = (np.arange(nb) * n + n / 2) / FS
    return blocks, t

def lundeby(e, win0=0.03, per10=5, above=10, dyn=20, decay_below=10, maxit=30, noise_frac=0.1):
    """e: energy starting at onset. returns (crossing sample, noise, intercept dB, gradient dB/s)"""
    e = np.asarray(e, float)
    L = len(e)
    E, tw = smooth(e, win0)
    E = np.maximum(E, 1e-300)
    noise = np.mean(e[int(round(L * (1 - noise_frac))):])
    Ed = 10 * np.log10(E)
    nd = 10 * np.log10(noise)
    s = int(np.argmax(E))
    above_idx = np.where(Ed[s + 1:] > nd + above)[0]
    if len(above_idx) == 0:
        return L, noise, Ed[s], -60.0
    stop = above_idx[-1] + s + 1
    if stop <= s + 1:
        stop = s + 2
    g, b = np.polyfit(tw[s:stop], Ed[s:stop], 1)
    if g >= 0:
        return L, noise, Ed[s], -60.0
    cp = (nd - b) / g
    global PRE
    PRE = (b, g, nd, Ed[s])
    nblocks = (Ed[s] - Ed[stop]) / 10 * per10
    if nblocks <= 0:
        nblocks = 1
    nsamp = max(1, int(round((tw[stop] - tw[s]) / nblocks * FS)))
    E2, tw2 = smooth(e, nsamp / FS)
    E2 = np.maximum(E2, 1e-300)
    Ed2 = 10 * np.log10(E2)
    imax = int(np.argmax(E2))
    for it in range(maxit):
        i10 = int(round((cp - decay_below / g) * FS))
        i10 = max(1, i10)
        i_last = int(round(L * (1 - noise_frac)))
        noise = np.mean(e[min(i_last, i10):]) if min(i_last, i10) < L else noise
        nd = 10 * np.log10(noise)
        hi = np.where(Ed2[imax:] > nd + above + dyn)[0]
        st = (hi[-1] + imax) if len(hi) else imax
        lo = np.where(Ed2[st + 1:] < nd + above)[0]
        sp = (lo[0] + st + 1) if len(lo) else len(Ed2)
        if sp - st < 2:
            break
        g2, b2 = np.polyfit(tw2[st:sp], Ed2[st:sp], 1)
        if g2 >= 0:
            break
        g, b = g2, b2
        old = cp
        cp = (nd - b) / g
        if abs(old - cp) < 0.001:
            break
    cps = int(round(cp * FS))
    cps = min(max(cps, 1), L)
    return cps, noise, b, g


def lundeby2(e, win0=0.01, per10=5, above=10, dyn=20, decay_below=10, maxit=5, first=True, noise_frac=0.1, min_noise_region=True):
    e = np.asarray(e, float)
    L = len(e)
    E, tw = smooth(e, win0)
    E = np.maximum(E, 1e-300)
    Ed = 10 * np.log10(E)
    noise = np.mean(e[int(round(L * (1 - noise_frac))):])
    nd = 10 * np.log10(noise)
    s = int(np.argmax(E))
    if first:
        idx = np.where(Ed[s:] < nd + above)[0]
        stop = s + idx[0] if len(idx) else len(Ed)
    else:
        idx = np.where(Ed[s:] > nd + above)[0]
        stop = s + idx[-1] + 1 if len(idx) else s + 2
    stop = max(stop, s + 2)
    g, b = np.polyfit(tw[s:stop], Ed[s:stop], 1)
    if g >= 0:
        return L, noise, Ed[s], -60.0
    cp = (nd - b) / g
    win = -10.0 / g / per10
    win = max(win, 1.0 / FS)
    E2, tw2 = smooth(e, win)
    E2 = np.maximum(E2, 1e-300)
    Ed2 = 10 * np.log10(E2)
    imax = int(np.argmax(E2))
    for it in range(maxit):
        i10 = int(round((cp - decay_below / g) * FS))
        i_last = int(round(L * (1 - noise_frac)))
        st_n = min(i_last, max(i10, 0)) if min_noise_region else max(i10, 0)
        if st_n < L - 1:
            noise = np.mean(e[st_n:])
        nd = 10 * np.log10(noise)
        if first:
            i1 = np.where(Ed2[imax:] < nd + above + dyn)[0]
            st = imax + i1[0] if len(i1) else imax
            i2 = np.where(Ed2[st:] < nd + above)[0]
            sp = st + i2[0] if len(i2) else len(Ed2)
        else:
            hi = np.where(Ed2[imax:] > nd + above + dyn)[0]
            st = (hi[-1] + imax) if len(hi) else imax
            lo = np.where(Ed2[st + 1:] < nd + above)[0]
            sp = (lo[0] + st + 1) if len(lo) else len(Ed2)
        if sp - st < 2:
            break
        g2, b2 = np.polyfit(tw2[st:sp], Ed2[st:sp], 1)
        if g2 >= 0:
            break
        g, b = g2, b2
        old = cp
        cp = (nd - b) / g
        if abs(old - cp) < 0.001:
            break
    cps = int(round(cp * FS))
    cps = min(max(cps, 1), L)
    return cps, noise, b, g


def lundeby3(e, win0=0.03, per10=5, above=10, dyn=20, decay_below=10, maxit=30, noise_frac=0.1, conv=0.01, blocknoise=True):
    """e: energy starting at onset. returns (crossing sample, noise, intercept dB, gradient dB/s)"""
    e = np.asarray(e, float)
    L = len(e)
    E, tw = smooth(e, win0)
    E = np.maximum(E, 1e-300)
    noise = np.mean(e[int(round(L * (1 - noise_frac))):])
    Ed = 10 * np.log10(E)
    nd = 10 * np.log10(noise)
    s = int(np.argmax(E))
    above_idx = np.where(Ed[s + 1:] > nd + above)[0]
    if len(above_idx) == 0:
        return L, noise, Ed[s], -60.0
    stop = above_idx[-1] + s + 1
    if stop <= s + 1:
        stop = s + 2
    g, b = np.polyfit(tw[s:stop], Ed[s:stop], 1)
    if g >= 0:
        return L, noise, Ed[s], -60.0
    cp = (nd - b) / g
    global PRE
    PRE = (b, g, nd, Ed[s])
    nblocks = (Ed[s] - Ed[stop]) / 10 * per10
    if nblocks <= 0:
        nblocks = 1
    nsamp = max(1, int(round((tw[stop] - tw[s]) / nblocks * FS)))
    E2, tw2 = smooth(e, nsamp / FS)
    E2 = np.maximum(E2, 1e-300)
    Ed2 = 10 * np.log10(E2)
    imax = int(np.argmax(E2))
    for it in range(maxit):
        i10 = int(round((cp - decay_below / g) * FS))
        i10 = max(1, i10)
        i_last = int(round(L * (1 - noise_frac)))
        if blocknoise:
            bi = int(max(1, round((cp - decay_below / g) * FS / nsamp)))
            bl = int(round(len(E2) * 0.9))
            noise = np.mean(E2[min(bl, bi):]) if min(bl, bi) < len(E2) else noise
        else:
            noise = np.mean(e[min(i_last, i10):]) if min(i_last, i10) < L else noise
        nd = 10 * np.log10(noise)
        hi = np.where(Ed2[imax:] > nd + above + dyn)[0]
        st = (hi[-1] + imax) if len(hi) else imax
        lo = np.where(Ed2[st + 1:] < nd + above)[0]
        sp = (lo[0] + st + 1) if len(lo) else len(Ed2)
        if sp - st < 2:
            break
        g2, b2 = np.polyfit(tw2[st:sp], Ed2[st:sp], 1)
        if g2 >= 0:
            break
        g, b = g2, b2
        old = cp
        cp = (nd - b) / g
        if abs(old - cp) < conv:
            break
    cps = int(round(cp * FS))
    cps = min(max(cps, 1), L)
    return cps, noise, b, g




def lundeby4(e, win0=0.03, per10=5, above=10, dyn=20, decay_below=10, maxit=30, noise_frac=0.1, skip=1, skip2=0):
    """e: energy starting at onset. returns (crossing sample, noise, intercept dB, gradient dB/s)"""
    e = np.asarray(e, float)
    L = len(e)
    E, tw = smooth(e, win0)
    E = np.maximum(E, 1e-300)
    noise = np.mean(e[int(round(L * (1 - noise_frac))):])
    Ed = 10 * np.log10(E)
    nd = 10 * np.log10(noise)
    s = int(np.argmax(E))
    above_idx = np.where(Ed[s + 1:] > nd + above)[0]
    if len(above_idx) == 0:
        return L, noise, Ed[s], -60.0
    stop = above_idx[-1] + s + 1
    if stop <= s + 1:
        stop = s + 2
    if stop - (s + skip) >= 2:
        s = s + skip
    g, b = np.polyfit(tw[s:stop], Ed[s:stop], 1)
    if g >= 0:
        return L, noise, Ed[s], -60.0
    cp = (nd - b) / g
    global PRE
    PRE = (b, g, nd, Ed[s])
    nblocks = (Ed[s] - Ed[stop]) / 10 * per10
    if nblocks <= 0:
        nblocks = 1
    nsamp = max(1, int(round((tw[stop] - tw[s]) / nblocks * FS)))
    E2, tw2 = smooth(e, nsamp / FS)
    E2 = np.maximum(E2, 1e-300)
    Ed2 = 10 * np.log10(E2)
    imax = int(np.argmax(E2))
    for it in range(maxit):
        i10 = int(round((cp - decay_below / g) * FS))
        i10 = max(1, i10)
        i_last = int(round(L * (1 - noise_frac)))
        noise = np.mean(e[min(i_last, i10):]) if min(i_last, i10) < L else noise
        nd = 10 * np.log10(noise)
        hi = np.where(Ed2[imax:] > nd + above + dyn)[0]
        st = (hi[-1] + imax) if len(hi) else imax + skip2
        lo = np.where(Ed2[st + 1:] < nd + above)[0]
        sp = (lo[0] + st + 1) if len(lo) else len(Ed2)
        if sp - st < 2:
            break
        g2, b2 = np.polyfit(tw2[st:sp], Ed2[st:sp], 1)
        if g2 >= 0:
            break
        g, b = g2, b2
        old = cp
        cp = (nd - b) / g
        if abs(old - cp) < 0.001:
            break
    cps = int(round(cp * FS))
    cps = min(max(cps, 1), L)
    return cps, noise, b, g


