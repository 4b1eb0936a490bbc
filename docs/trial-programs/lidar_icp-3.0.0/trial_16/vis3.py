import numpy as np, math
def classify2(G, p, margin, rel=0.0, win=0, noret='unseen', rmax=1e9, margin_o=None, rel_o=None):
    rp = np.linalg.norm(p, axis=1)
    el = np.arctan2(p[:, 2], np.hypot(p[:, 0], p[:, 1]))
    az = np.arctan2(p[:, 1], p[:, 0])
    rowf = (el - G['e0']) / G['de']; colf = np.mod(az - G['a0'], 2 * math.pi) / G['da']
    row = np.floor(rowf + 0.5).astype(np.int64)
    col = np.floor(colf + 0.5).astype(np.int64) % G['ncol']
    infov = (row >= 0) & (row < G['n']) & (rp <= rmax)
    pid = col * G['n'] + np.clip(row, 0, G['n'] - 1)
    rr = np.where(infov, G['R'][pid], np.nan)
    if win:
        # fill missing from neighbours: nearest available in window
        Rg = G['R'].reshape(G['ncol'], G['n'])
        for dc in range(-win, win + 1):
            for dr in range(-win, win + 1):
                if dc == 0 and dr == 0: continue
                r2 = np.clip(row + dr, 0, G['n'] - 1); c2 = (col + dc) % G['ncol']
                alt = Rg[c2, r2]
                rr = np.where(infov & ~np.isfinite(rr), alt, rr)
    has = np.isfinite(rr)
    m = margin + rel * rp
    through = has & (rr > rp + m)
    mo = (margin if margin_o is None else margin_o) + (rel if rel_o is None else rel_o) * rp
    occl = has & (rr < rp - mo)
    if noret == 'through':
        through |= infov & ~has
        unseen = ~infov
    else:
        unseen = ~has
    return int(through.sum()), int(occl.sum()), int(unseen.sum())
