import numpy as np
FS=16000
VAR = {'tstart': 0, 'regfull': 1, 'noisemin': 0, 'incl': 1, 'nobreak': 0}
def _blocks(e, n):
    nb = len(e) // n
    b = e[:nb * n].reshape(nb, n).mean(1)
    t = (np.arange(nb) + (0.0 if VAR['tstart'] else 0.5)) * n / FS
    return t, b

def lundeby(e, noise_frac=0.1, init_ms=10, p=5, margin_db=5, dyn_db=20, maxit=5, cdecay=None, first_db=10):
    """e: energy starting at onset. returns (cross_index, noise, slope_db_per_s, intercept_db)"""
    N = len(e)
    noise = np.mean(e[int((1 - noise_frac) * N):])
    n = int(init_ms * FS / 1000)
    t, b = _blocks(e, n)
    bdb = 10 * np.log10(np.maximum(b, 1e-300))
    ndb = 10 * np.log10(noise)
    idx = np.where(bdb < ndb + first_db)[0]
    i_end = idx[0] if len(idx) else len(b)
    i_end = max(i_end + VAR['incl'], 2)
    sl, ic = np.polyfit(t[:i_end], bdb[:i_end], 1)
    if sl >= 0:
        return N, noise, sl, ic
    tc = (ndb - ic) / sl
    for _ in range(maxit):
        # new block length: p blocks per 10 dB
        blen = max(int(-10.0 / sl / p * FS), 1)
        t, b = _blocks(e, blen)
        bdb = 10 * np.log10(np.maximum(b, 1e-300))
        # noise from point where line is margin below crosspoint... 
        tn = tc + (margin_db if cdecay is None else cdecay) / (-sl)
        i0 = int(tn * FS)
        if VAR['noisemin']:
            i0 = min(max(i0, 0), N - int(noise_frac * N))
        elif i0 > N - int(noise_frac * N) or i0 < 0:
            i0 = N - int(noise_frac * N)
        noise = np.mean(e[i0:])
        ndb = 10 * np.log10(noise)
        # regression between ndb+margin+dyn and ndb+margin
        hi = ndb + margin_db + dyn_db
        lo = ndb + margin_db
        sel = np.where((bdb <= hi) & (bdb >= lo))[0]
        # restrict to contiguous from first below hi
        try:
            i_a = 0 if VAR['regfull'] else np.where(bdb < hi)[0][0]
            i_b = np.where(bdb < lo)[0][0]
        except IndexError:
            break
        if VAR['nobreak']:
            i_b = max(i_b + VAR['incl'], i_a + 2)
        elif i_b - i_a < 2:
            break
        sl2, ic2 = np.polyfit(t[i_a:i_b], bdb[i_a:i_b], 1)
        if sl2 >= 0:
            break
        tc_new = (ndb - ic2) / sl2
        sl, ic = sl2, ic2
        if abs(tc_new - tc) < 1e-3:
            tc = tc_new
            break
        tc = tc_new
    ci = int(min(max(tc * FS, 1), N))
    return ci, noise, sl, ic

def edc_lundeby(e, comp=True, **kw):
    ci, noise, sl, ic = lundeby(e, **kw)
    ee = e[:ci]
    s = np.cumsum(ee[::-1])[::-1]
    if comp and sl < 0:
        # energy per sample at tc from line; tail integral
        lvl = 10 ** ((ic + sl * ci / FS) / 10)
        k = -sl * np.log(10) / 10  # 1/s
        s = s + lvl * FS / k
    return 10 * np.log10(np.maximum(s / s[0], 1e-300)), ci

def edc_full(e, **kw):
    """Compensated Schroeder curve (linear energy, not normalised) over full length of e."""
    ci, noise, sl, ic = lundeby(e, **kw)
    N = len(e)
    s = np.zeros(N)
    ee = e[:ci]
    cs = np.cumsum(ee[::-1])[::-1]
    if sl < 0:
        k = -sl * np.log(10) / 10
        t = np.arange(N) / FS
        lvl = 10 ** ((ic + sl * t) / 10)  # energy per sample on line
        tail = lvl * FS / k  # integral from t to inf
        s[:ci] = cs + tail[ci] if ci < N else cs
        s[ci:] = tail[ci:]
    else:
        s[:ci] = cs
    return s, ci
