import numpy as np, math, laspy

def scan_grid(x, gt, pulse_count, keep=None):
    gt = gt - np.floor(gt.min())
    pid = np.round(gt / 2e-5).astype(np.int64)
    n = int(round(math.sqrt(pulse_count * 70.0 / 360.0)))
    ncol = pulse_count // n
    de = math.radians(70.0 / n); e0 = math.radians(-40.0) + 0.5 * de
    da = 2 * math.pi / ncol
    col = pid // n
    az = np.arctan2(x[:, 1], x[:, 0])
    res = np.angle(np.exp(1j * (az - col * da)))
    a0 = np.angle(np.mean(np.exp(1j * res)))
    rng = np.linalg.norm(x, axis=1)
    R = np.full(n * ncol, np.nan)
    ok = pid < len(R)
    if keep is not None: ok &= keep
    R[pid[ok]] = rng[ok]
    return dict(n=n, e0=e0, de=de, ncol=ncol, a0=a0, da=da, R=R)

def classify(G, p, margin, rel=0.0):
    rp = np.linalg.norm(p, axis=1)
    el = np.arctan2(p[:, 2], np.hypot(p[:, 0], p[:, 1]))
    az = np.arctan2(p[:, 1], p[:, 0])
    row = np.floor((el - G['e0']) / G['de'] + 0.5).astype(np.int64)
    col = np.floor(np.mod(az - G['a0'], 2 * math.pi) / G['da'] + 0.5).astype(np.int64) % G['ncol']
    inrow = (row >= 0) & (row < G['n'])
    pid = col * G['n'] + np.clip(row, 0, G['n'] - 1)
    rr = np.where(inrow, G['R'][pid], np.nan)
    has = np.isfinite(rr)
    m = margin + rel * rp
    through = has & (rr > rp + m)
    occl = has & (rr < rp - m)
    return int(through.sum()), int(occl.sum()), int((~has).sum())
