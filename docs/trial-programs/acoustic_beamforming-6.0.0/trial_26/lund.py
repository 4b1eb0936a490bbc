import numpy as np
FS = 16000


def blocks(x, blk):
    nb = len(x) // blk
    env = x[:nb * blk].reshape(nb, blk).mean(1)
    t = (np.arange(nb) + 0.5) * blk / FS
    return env, t


def regress(t, L):
    if len(t) < 2:
        return None
    sl, ic = np.polyfit(t, L, 1)
    return sl, ic


def lundeby(x, cfg):
    n = len(x)
    nf = x[int(n * 0.9):].mean()
    blk0 = int(cfg.get("lb_blk", 0.01) * FS)
    env, t = blocks(x, blk0)
    env = np.maximum(env, 1e-300)
    Ld = 10 * np.log10(env)
    Ln = 10 * np.log10(max(nf, 1e-300))
    i0 = int(np.argmax(Ld))
    below = np.where(Ld[i0:] < Ln + cfg.get("lb_first", 10))[0]
    i1 = i0 + (below[0] if len(below) else len(Ld) - i0)
    if cfg.get("lb_incl", 1) and len(below):
        i1 += 1
    r = regress(t[i0:i1], Ld[i0:i1])
    if r is None or r[0] >= 0:
        return (n, nf, env.max(), None) if cfg.get("ret4") else (n, nf, env.max())
    sl, ic = r
    tc = (Ln - ic) / sl
    if not np.isfinite(tc):
        tc = n / FS
    for _ in range(cfg.get("lb_iter", 5)):
        p = cfg.get("lb_p", 5)
        blk = int(max(10 / abs(sl) / p * FS, cfg.get("lb_minblk", 0.01) * FS * 0 + 16))
        blk = int(min(blk, max(16, n // 10)))
        env2, t2 = blocks(x, blk)
        if len(env2) < 3:
            break
        env2 = np.maximum(env2, 1e-300)
        Ld2 = 10 * np.log10(env2)
        # noise from point 5-10 dB after crossing
        tn = tc + cfg.get("lb_noise_db", 5) / abs(sl)
        ns = int(min(max(tn * FS, 0), n * 0.9))
        nf = x[ns:].mean()
        Ln = 10 * np.log10(max(nf, 1e-300))
        hi = Ln + cfg.get("lb_top", 10) + cfg.get("lb_dr", 20)
        lo = Ln + cfg.get("lb_top", 10)
        i0b = int(np.argmax(Ld2))
        sel = np.arange(len(Ld2))
        m = (sel >= i0b) & (Ld2 <= hi) & (Ld2 >= lo)
        # contiguous first region
        idx = np.where(m)[0]
        if len(idx) < 2:
            break
        r = regress(t2[idx], Ld2[idx])
        if r is None or r[0] >= 0:
            break
        sl, ic = r
        tc_new = (Ln - ic) / sl
        if not np.isfinite(tc_new):
            break
        if abs(tc_new - tc) < 1e-3:
            tc = tc_new
            break
        tc = tc_new
    tci = int(np.clip(tc * FS, 1, n))
    if cfg.get("ret4"):
        return tci, nf, env.max(), (sl, ic)
    return tci, nf, env.max()
