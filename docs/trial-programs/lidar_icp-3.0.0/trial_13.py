import sys, json, math
import numpy as np
import laspy
from scipy.spatial import cKDTree

CFG = dict(
    sor_k=8, sor_ratio=3.0,
    ground_thr=0.15, icp_all=True, rob_w='cauchy', rob_c=2.385, eval_all=True, inl_c=4.85,
    vis_margin=0.5,
)


def load(path):
    f = laspy.read(path)
    P = np.vstack([np.asarray(f.x), np.asarray(f.y), np.asarray(f.z)]).T.astype(float)
    g = np.asarray(f.gps_time, dtype=float)
    idx = np.round((g - g.min()) / 2e-5).astype(int) if len(g) else np.zeros(0, int)
    # gps_time may start at offset (600 for target); pulse index relative to first pulse time
    base = np.floor(g.min() / 100.0) * 100.0 if len(g) else 0.0
    idx = np.round((g - base) / 2e-5).astype(int)
    return P, np.asarray(f.intensity), idx


def noise_filter(P):
    t = cKDTree(P)
    d, _ = t.query(P, 9)
    m = d[:, 1:].mean(1) / np.linalg.norm(P, axis=1)
    thr = m.mean() + 2.0 * m.std()
    return m > thr


def fit_ground(P):
    # initial: lowest points near the scanner
    z = P[:, 2]
    cand = P[z < np.percentile(z, 60)]
    # robust iterative plane fit
    zmed = np.median(cand[:, 2])
    sel = np.abs(cand[:, 2] - zmed) < 0.5
    pts = cand[sel]
    n = np.array([0, 0, 1.0]); d = -zmed
    for thr in [0.5, 0.3, 0.2, 0.1, 0.05, 0.05, 0.05]:
        dist = P @ n + d
        s = np.abs(dist) < thr
        pts = P[s]
        c = pts.mean(0)
        u, sv, vt = np.linalg.svd(pts - c, full_matrices=False)
        n = vt[2]
        if n[2] < 0:
            n = -n
        d = -n @ c
    # lowest point per 1 m cell among points near the plane, then plane fit
    G = P[np.abs(P @ n + d) < 0.3]
    key = np.floor(G[:, :2] / 1.0).astype(np.int64)
    o = np.lexsort((G[:, 2], key[:, 1], key[:, 0])); k = key[o]
    first = np.r_[True, np.any(k[1:] != k[:-1], 1)]
    L = G[o][first]
    c = L.mean(0)
    u, sv, vt = np.linalg.svd(L - c, full_matrices=False)
    n = vt[2] * np.sign(vt[2][2]); d = -n @ c
    return n, d


def voxel_down(P, vs):
    key = np.floor(P / vs).astype(np.int64)
    _, inv, cnt = np.unique(key, axis=0, return_inverse=True, return_counts=True)
    inv = inv.ravel()
    out = np.zeros((len(cnt), 3))
    np.add.at(out, inv, P)
    return out / cnt[:, None]


def normals(P, k=10):
    t = cKDTree(P)
    k = min(k, len(P))
    _, nn = t.query(P, k)
    Q = P[nn] - P[nn].mean(1, keepdims=True)
    C = np.einsum('nki,nkj->nij', Q, Q)
    w, v = np.linalg.eigh(C)
    N = v[:, :, 0]
    return N


def rotz(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]])


def coarse(S, TA, tzf, sd, radius=0.5, topk=12):
    cell = 0.5
    G = 128
    def grid(P2):
        ij = np.floor(P2 / cell).astype(int) + G // 2
        ok = (ij[:, 0] >= 0) & (ij[:, 0] < G) & (ij[:, 1] >= 0) & (ij[:, 1] < G)
        g = np.zeros((G, G))
        g[ij[ok, 0], ij[ok, 1]] = 1
        return g
    FT = np.fft.fft2(grid(TA[:, :2]))
    ii = np.arange(G); ii = np.where(ii > G // 2, ii - G, ii)
    A, B = np.meshgrid(ii * cell, ii * cell, indexing='ij')
    ring = np.abs(np.hypot(A, B) - sd) <= 1.0
    tA = cKDTree(TA)
    cands = []
    for yd in range(-180, 180):
        R = rotz(math.radians(yd))
        Sr = S @ R.T
        cc = np.real(np.fft.ifft2(FT * np.conj(np.fft.fft2(grid(Sr[:, :2])))))
        cc = np.where(ring, cc, -1)
        flat = np.argpartition(cc.ravel(), -topk)[-topk:]
        for k in flat:
            cands.append((cc.ravel()[k], yd, A.ravel()[k], B.ravel()[k]))
    cands.sort(key=lambda c: -c[0])
    cands = cands[:600]
    best = None
    for sc, yd, a, b in cands:
        R = rotz(math.radians(yd))
        t = np.array([a, b, tzf(a, b)])
        d, _ = tA.query(S @ R.T + t, distance_upper_bound=radius)
        cnt = int((d < radius).sum())
        key = (cnt, -abs(yd))
        if best is None or cnt > best[0]:
            best = (cnt, yd, t)
    return best[1], best[2]


def eval_pairs(S, T, tT, NT, R, t, maxd):
    Q = S @ R.T + t
    d, nn = tT.query(Q)
    ok = d < maxd
    if ok.sum() == 0:
        return 0.0, 0.0, ok, nn, Q
    r = np.einsum('ij,ij->i', Q[ok] - T[nn[ok]], NT[nn[ok]])
    return ok.mean(), math.sqrt(np.mean(r ** 2)), ok, nn, Q


def fine(S, T, tT, NT, yaw, t, maxd, iters=30):
    t = t.copy()
    n_upd = 0
    converged = False
    inl = 0
    for it in range(iters):
        R = rotz(yaw)
        Q = S @ R.T + t
        d, nn = tT.query(Q)
        ok = d < maxd
        if ok.sum() < 4:
            break
        q = Q[ok]; p = T[nn[ok]]; n = NT[nn[ok]]
        r = np.einsum('ij,ij->i', q - p, n)
        s = 1.4826 * np.median(np.abs(r)) + 1e-12
        c = CFG['rob_c'] * s
        if CFG['rob_w'] == 'cauchy':
            w = 1.0 / (1.0 + (r / c) ** 2)
        else:
            w = np.where(np.abs(r) < c, (1 - (r / c) ** 2) ** 2, 0.0)
        last_scale = s
        # params: dyaw, tx, ty, tz ; d q / d yaw = (-qy, qx, 0) about z (relative to origin)
        J = np.stack([-q[:, 1] * n[:, 0] + q[:, 0] * n[:, 1], n[:, 0], n[:, 1], n[:, 2]], 1)
        A = J.T @ (J * w[:, None]); b = -J.T @ (w * r)
        try:
            x = np.linalg.solve(A, b)
        except np.linalg.LinAlgError:
            break
        dR = rotz(x[0])
        t = dR @ t + x[1:]
        yaw = yaw + x[0]
        n_upd += 1
        if abs(x[0]) < 1e-5 and np.linalg.norm(x[1:]) < 1e-4:
            converged = True
            break
    R = rotz(yaw)
    Q = S @ R.T + t
    d, nn = tT.query(Q)
    ok = d < maxd
    if ok.sum():
        r = np.einsum('ij,ij->i', Q[ok] - T[nn[ok]], NT[nn[ok]])
        s = 1.4826 * np.median(np.abs(r)) + 1e-9
        inl = int((np.abs(r) <= 2.5 * s).sum())
    return yaw, t, n_upd, converged, inl


class RangeImage:
    def __init__(self, P, idx, pulses):
        ne = int(round(math.sqrt(pulses * 70.0 / 360.0)))
        na = int(round(pulses / ne))
        self.ne, self.na = ne, na
        row = idx % ne; col = idx // ne
        r = np.linalg.norm(P, axis=1)
        self.R = np.full((ne, na), np.nan)
        okc = col < na
        self.R[row[okc], col[okc]] = r[okc]
        az = np.arctan2(P[:, 1], P[:, 0])
        step = 2 * math.pi / na
        off = az - col * step
        self.az0 = math.atan2(np.mean(np.sin(off)), np.mean(np.cos(off)))
        self.step = step

    def lookup(self, Q):
        r = np.linalg.norm(Q, axis=1)
        az = np.arctan2(Q[:, 1], Q[:, 0])
        el = np.degrees(np.arctan2(Q[:, 2], np.hypot(Q[:, 0], Q[:, 1])))
        row = np.floor((el + 40.0) / (70.0 / self.ne)).astype(int)
        col = np.round((az - self.az0) / self.step).astype(int) % self.na
        inside = (row >= 0) & (row < self.ne)
        rr = np.full(len(Q), np.nan)
        rr[inside] = self.R[row[inside], col[inside]]
        return r, rr


def visibility_nn(Q, other, tol, margin):
    def unit(P):
        return P / np.linalg.norm(P, axis=1, keepdims=True)
    tr = cKDTree(unit(other))
    d, j = tr.query(unit(Q))
    rr = np.linalg.norm(other[j], axis=1); r = np.linalg.norm(Q, axis=1)
    un = d > tol
    th = (~un) & (rr > r + margin)
    oc = (~un) & (rr < r - margin)
    return int(th.sum()), int(oc.sum()), int(un.sum())


def visibility(Pts, RI, margin):
    r, rr = RI.lookup(Pts)
    unseen = np.isnan(rr)
    through = (~unseen) & (rr > r + margin)
    occl = (~unseen) & (rr < r - margin)
    return int(through.sum()), int(occl.sum()), int(unseen.sum())


INT_FIELDS = ['appeared_points', 'iterations', 'robust_inliers', 'source_ground', 'source_noise', 'source_occluded',
              'source_points', 'source_unseen', 'target_ground', 'target_noise', 'target_occluded', 'target_points',
              'target_unseen', 'vanished_points']
FLOAT_FIELDS = ['coarse_shift_m', 'coarse_yaw_deg', 'fitness', 'fitness_before', 'ground_tilt_deg', 'rmse', 'rmse_before',
                'scanner_height_m', 'tx', 'ty', 'tz', 'yaw_deg']


def main():
    sc = json.load(sys.stdin)
    out = {}
    try:
        run(sc, out)
    except Exception as e:
        print('error', repr(e), file=sys.stderr)
    for k in INT_FIELDS:
        v = out.get(k, 0)
        out[k] = int(v) if v is not None and np.isfinite(v) else 0
    for k in FLOAT_FIELDS:
        v = out.get(k, 0.0)
        out[k] = float(v) if v is not None and np.isfinite(v) else 0.0
    out['converged'] = bool(out.get('converged', True))
    print(json.dumps(out))


def run(sc, out):
    prm = sc['parameters']; inp = sc['inputs']
    vs = float(prm['voxel_size']); maxd = float(prm['max_correspondence_m'])
    pulses = int(prm['pulse_count'])
    res = {}
    for name in ['source', 'target']:
        P, I, idx = load(inp[name])
        bad = noise_filter(P)
        Pc = P[~bad]
        n, d = fit_ground(Pc)
        dist = Pc @ n + d
        gmask = np.abs(dist) < CFG['ground_thr']
        res[name] = dict(P=P, idx=idx, Pc=Pc, n=n, d=d, g=gmask, bad=bad)
        out[name + '_noise'] = int(bad.sum())
        out[name + '_ground'] = int(gmask.sum())
        VG = voxel_down(Pc[gmask], vs); VN = voxel_down(Pc[~gmask], vs)
        V = np.vstack([VG, VN])
        out[name + '_points'] = int(len(V))
        res[name]['V'] = V
        res[name]['NG'] = VN
    n, d = res['source']['n'], res['source']['d']
    out['ground_tilt_deg'] = float(math.degrees(math.acos(min(1.0, abs(n[2])))))
    out['scanner_height_m'] = float(abs(d))
    S = res['source']['NG']; T = res['target']['NG']
    tT = cKDTree(T)
    NT = normals(T)
    ns_, ds_ = res['source']['n'], res['source']['d']; nt_, dt_ = res['target']['n'], res['target']['d']
    tzf = lambda a, b: ds_ / ns_[2] - (dt_ + nt_[0] * a + nt_[1] * b) / nt_[2]
    yd, t0 = coarse(S, res['target']['V'], tzf, float(prm['station_distance_m']))
    out['coarse_yaw_deg'] = float(yd)
    out['coarse_shift_m'] = float(np.linalg.norm(t0))
    R0 = rotz(math.radians(yd))
    SA = res['source']['V']; TA = res['target']['V']; tTA = cKDTree(TA); NTA = normals(TA)
    if CFG['eval_all']:
        fb, rb, _, _, _ = eval_pairs(S, TA, tTA, NTA, R0, t0, maxd)
    else:
        fb, rb, _, _, _ = eval_pairs(S, T, tT, NT, R0, t0, maxd)
    out['fitness_before'] = float(fb); out['rmse_before'] = float(rb)
    if CFG['icp_all']:
        yaw, t, nit, conv, inl = fine(SA, TA, tTA, NTA, math.radians(yd), np.array([t0[0], t0[1], res['source']['d'] - res['target']['d']]), maxd)
    else:
        yaw, t, nit, conv, inl = fine(S, T, tT, NT, math.radians(yd), t0, maxd)
    R = rotz(yaw)
    if CFG['eval_all']:
        f, r, ok, nn, Q = eval_pairs(S, TA, tTA, NTA, R, t, maxd)
        rr = np.einsum('ij,ij->i', Q[ok] - TA[nn[ok]], NTA[nn[ok]])
    else:
        f, r, ok, nn, Q = eval_pairs(S, T, tT, NT, R, t, maxd)
        rr = np.einsum('ij,ij->i', Q[ok] - T[nn[ok]], NT[nn[ok]])
    inl = int((np.abs(rr) <= CFG['inl_c'] * (1.4826 * np.median(np.abs(rr)) + 1e-9)).sum()) if len(rr) else 0
    out['fitness'] = float(f); out['rmse'] = float(r)
    out['iterations'] = int(nit); out['converged'] = bool(conv); out['robust_inliers'] = int(inl)
    out['tx'], out['ty'], out['tz'] = float(t[0]), float(t[1]), float(t[2])
    yd2 = (math.degrees(yaw) + 180) % 360 - 180
    out['yaw_deg'] = float(yd2)
    import os
    if os.environ.get('DUMP'):
        np.savez(os.environ['DUMP'], S=S, T=T, SA=SA, TA=TA, R=R, t=t, Ps=res['source']['Pc'], Pt=res['target']['Pc'],
                 Prs=res['source']['P'], Prt=res['target']['P'], idxs=res['source']['idx'], idxt=res['target']['idx'],
                 bads=res['source']['bad'], badt=res['target']['bad'], gs=res['source']['g'], gt=res['target']['g'], yd=yd, t0=t0)
    ne = int(round(math.sqrt(pulses * 70.0 / 360.0))); na = int(round(pulses / ne))
    tol = max(2 * math.pi / na, math.radians(70.0 / ne))
    m = CFG['vis_margin']
    van, so, su = visibility_nn(S @ R.T + t, res['target']['Pc'], tol, m)
    app, to, tu = visibility_nn((T - t) @ R, res['source']['Pc'], tol, m)
    out.update(vanished_points=van, source_occluded=so, source_unseen=su,
               appeared_points=app, target_occluded=to, target_unseen=tu)


if __name__ == '__main__':
    main()
