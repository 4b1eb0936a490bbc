# Independent program: the final workspace of agent trial 7 of lidar_icp 2.1.0 at the
# summary evidence level (docs/trials.md), kept as the agent wrote it (for 3.0.0, stage 9 added at its end).
import sys, json, math
import numpy as np
import laspy
from scipy.spatial import cKDTree

GROUND_TH = 0.15
GRID_CELL = 1.0
MIN_TH = 0.3
GITER = 100
SOR_K = 8
SOR_SD = 2.0
COARSE_STEP = 0.5
TUKEY_C = 4.685
SCALE_FLOOR = 0.0
MAXIT = 30
ROT_EPS = 1e-5
TR_EPS = 1e-4
NCAND = 20
USE_SPLIT = True
SPLIT = None
SCALE_MODE = 'abs'
DOF6 = False
NMS = False
STAT_FLOOR = 0.011
WFUN = 'tukey'
HUBER_K = 1.345
LASTSTATS = 0
REF = 0.5
NORMAL_K = 10
SCORE_R = 0.5


def load(f):
    l = laspy.read(f)
    P = np.c_[np.asarray(l.x), np.asarray(l.y), np.asarray(l.z)].astype(float)
    return P, np.asarray(l.intensity).astype(float), np.asarray(l.gps_time)


def fitplane(Q):
    c = Q.mean(0)
    u, s, vt = np.linalg.svd(Q - c, full_matrices=False)
    n = vt[2]
    if n[2] < 0:
        n = -n
    return n, c


def noise_filter(P):
    t = cKDTree(P)
    dd, _ = t.query(P, SOR_K + 1)
    m = dd[:, 1:].mean(1) / np.linalg.norm(P, axis=1)
    return m > m.mean() + SOR_SD * m.std()


def lsqfit(M):
    A = np.c_[M[:, 0], M[:, 1], np.ones(len(M))]
    a, b, cc = np.linalg.lstsq(A, M[:, 2], rcond=None)[0]
    return a, b, cc


def ground_classify(P):
    k = np.floor(P[:, :2] / GRID_CELL).astype(np.int64)
    u, inv = np.unique(k, axis=0, return_inverse=True)
    inv = inv.ravel()
    order = np.lexsort((P[:, 2], inv))
    first = np.r_[True, inv[order][1:] != inv[order][:-1]]
    M = P[order[first]]
    m = np.ones(len(M), bool)
    for it in range(GITER):
        a, b, cc = lsqfit(M[m])
        n = np.array([-a, -b, 1.0])
        n /= np.linalg.norm(n)
        dist = (M[:, 2] - (a * M[:, 0] + b * M[:, 1] + cc)) * n[2]
        m2 = np.abs(dist) < MIN_TH
        if (m2 == m).all():
            break
        m = m2
    a, b, cc = lsqfit(M[m])
    n = np.array([-a, -b, 1.0])
    n /= np.linalg.norm(n)
    dist = (P[:, 2] - (a * P[:, 0] + b * P[:, 1] + cc)) * n[2]
    g = np.abs(dist) < GROUND_TH
    return g, n, cc


def voxel(P, v):
    k = np.floor(P.astype(np.float32) / np.float32(v)).astype(np.int64)
    u, inv = np.unique(k, axis=0, return_inverse=True)
    inv = inv.ravel()
    cnt = np.bincount(inv)
    out = np.zeros((len(u), 3))
    for d in range(3):
        out[:, d] = np.bincount(inv, weights=P[:, d]) / cnt
    return out


def rotz(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]])


def normals(Q, k=10):
    t = cKDTree(Q)
    _, idx = t.query(Q, min(k, len(Q)))
    nb = Q[idx]
    c = nb.mean(1, keepdims=True)
    C = np.einsum('nki,nkj->nij', nb - c, nb - c)
    w, v = np.linalg.eigh(C)
    return v[:, :, 0]


def coarse(S, T, tzf):
    # 2D correlation on 0.5 m grid
    st = COARSE_STEP
    allp = np.vstack([S[:, :2], T[:, :2]])
    R = np.abs(allp).max() + 1
    nc = int(math.ceil(R / st))
    N = 1
    while N < 4 * nc + 4:
        N *= 2
    ti = np.floor(T[:, :2] / st).astype(int) + N // 2
    occ = np.zeros((N, N))
    ok = (ti >= 0).all(1) & (ti < N).all(1)
    occ[ti[ok, 0], ti[ok, 1]] = 1
    Focc = np.fft.fft2(occ)
    best = None
    cands = []
    for yd in range(-179, 181):
        a = math.radians(yd)
        Sr = S[:, :2] @ rotz(a)[:2, :2].T
        si = np.floor(Sr / st).astype(int) + N // 2
        h = np.zeros((N, N))
        h[si[:, 0] % N, si[:, 1] % N] = 1
        # score[s] = sum_c h[c] occ[c+s]
        corr = np.real(np.fft.ifft2(Focc * np.conj(np.fft.fft2(h))))
        corr = np.round(corr).astype(int)
        shifts = np.arange(N)
        shifts = np.where(shifts >= N // 2, shifts - N, shifts)
        lim = int(round(8.0 / st))
        mask = (np.abs(shifts)[:, None] <= lim) & (np.abs(shifts)[None, :] <= lim)
        cm = np.where(mask, corr, -1)
        i = np.unravel_index(np.argmax(cm), cm.shape)
        cands.append((cm[i], yd, shifts[i[0]] * st, shifts[i[1]] * st))
    if NMS:
        sc_ = [c[0] for c in cands]
        nn = len(cands)
        cands = [cands[k] for k in range(nn) if sc_[k] >= sc_[(k - 1) % nn] and sc_[k] >= sc_[(k + 1) % nn]]
    cands.sort(key=lambda x: -x[0])
    t3 = cKDTree(T)
    best = None

    def score(Xr, tx, ty):
        tz = tzf(tx, ty)
        dd, _ = t3.query(Xr + np.array([tx, ty, tz]), distance_upper_bound=SCORE_R)
        return int(np.isfinite(dd).sum()), tz

    for (c0, yd, tx0, ty0) in cands[:NCAND]:
        a = math.radians(yd)
        Xr = S @ rotz(a).T
        for dx in np.arange(-REF, REF + 1e-9, st):
            for dy in np.arange(-REF, REF + 1e-9, st):
                tx, ty = tx0 + dx, ty0 + dy
                sc, tz = score(Xr, tx, ty)
                if best is None or sc > best[0]:
                    best = (sc, yd, tx, ty, tz)
    sc, yd, tx, ty, tz = best
    return yd, np.array([tx, ty, tz]), sc


def robust_scale(r, floor=None):
    if SCALE_MODE == 'mad':
        sc = 1.4826 * np.median(np.abs(r - np.median(r)))
    elif SCALE_MODE == 'std':
        sc = float(np.std(r))
    else:
        sc = 1.4826 * np.median(np.abs(r))
    return max(sc, SCALE_FLOOR if floor is None else floor)


def stats(S, T, tree, Tn, yaw, t, maxd):
    X = S @ rotz(yaw).T + t
    d, j = tree.query(X, distance_upper_bound=maxd)
    ok = np.isfinite(d)
    if not ok.any():
        return 0.0, 0.0, 0
    r = np.einsum('ij,ij->i', X[ok] - T[j[ok]], Tn[j[ok]])
    fit = ok.sum() / len(S)
    rmse = float(np.sqrt(np.mean(r ** 2)))
    sc = robust_scale(r, STAT_FLOOR)
    inl = int((np.abs(r) < TUKEY_C * sc).sum())
    return fit, rmse, inl


def icp(S, T, tree, Tn, yaw0, t0, maxd, maxit=MAXIT):
    yaw = yaw0
    t = np.array(t0, float).copy()
    it = 0
    conv = False
    for k in range(maxit):
        X = S @ rotz(yaw).T + t
        if SPLIT is not None:
            sg, tg_, trees = SPLIT
            d = np.full(len(X), np.inf)
            j = np.zeros(len(X), int)
            for lab in (0, 1):
                ms = sg == lab
                dd_, jj_ = trees[lab][0].query(X[ms], distance_upper_bound=maxd)
                okk = np.isfinite(dd_)
                d[np.where(ms)[0][okk]] = dd_[okk]
                j[np.where(ms)[0][okk]] = trees[lab][1][jj_[okk]]
        else:
            d, j = tree.query(X, distance_upper_bound=maxd)
        ok = np.isfinite(d)
        if ok.sum() < 4:
            break
        p = X[ok]
        q = T[j[ok]]
        n = Tn[j[ok]]
        r = np.einsum('ij,ij->i', p - q, n)
        sc = robust_scale(r)
        c = max(TUKEY_C * sc, 1e-9)
        last = (ok.copy(), r.copy(), sc)
        if WFUN == 'tukey':
            w = np.where(np.abs(r) < c, (1 - (r / c) ** 2) ** 2, 0.0)
        elif WFUN == 'huber':
            ch_ = HUBER_K * sc
            w = np.where(np.abs(r) <= ch_, 1.0, ch_ / np.maximum(np.abs(r), 1e-12))
        elif WFUN == 'cauchy':
            w = 1.0 / (1.0 + (r / (2.3849 * sc)) ** 2)
        else:
            w = np.ones_like(r)
        if DOF6:
            cr = np.cross(p, n)
            J = np.c_[cr[:, 2], n[:, 0], n[:, 1], n[:, 2], cr[:, 0], cr[:, 1]]
        else:
            J = np.c_[n[:, 1] * p[:, 0] - n[:, 0] * p[:, 1], n[:, 0], n[:, 1], n[:, 2]]
        A = J.T @ (J * w[:, None])
        b = -J.T @ (w * r)
        try:
            x = np.linalg.solve(A, b)[:4]
        except np.linalg.LinAlgError:
            break
        dR = rotz(x[0])
        yaw = yaw + x[0]
        t = dR @ t + x[1:]
        it += 1
        if abs(x[0]) < ROT_EPS and np.linalg.norm(x[1:]) < TR_EPS:
            conv = True
            break
    return yaw, t, it, conv, last


def main(out):
    sc = json.load(sys.stdin)
    prm = sc['parameters']
    v = float(prm['voxel_size'])
    maxd = float(prm['max_correspondence_m'])
    data = {}
    for nm in ['source', 'target']:
        P, I, G = load(sc['inputs'][nm])
        nz = noise_filter(P)
        Q = P[~nz]
        g, n, c = ground_classify(Q)
        Gv = voxel(Q[g], v)
        Ov = voxel(Q[~g], v)
        data[nm] = dict(noise=int(nz.sum()), ground=int(g.sum()), n=n, c=c, Gv=Gv, Ov=Ov, view=Q)
    s, tg = data['source'], data['target']
    n, c = s['n'], s['c']
    out['ground_tilt_deg'] = float(np.degrees(np.arccos(min(1.0, abs(n[2])))))
    out['scanner_height_m'] = float(-c)
    out['source_noise'] = s['noise']
    out['target_noise'] = tg['noise']
    out['source_ground'] = s['ground']
    out['target_ground'] = tg['ground']
    out['source_points'] = int(len(s['Gv']) + len(s['Ov']))
    out['target_points'] = int(len(tg['Gv']) + len(tg['Ov']))
    S = s['Ov']
    T = np.vstack([tg['Gv'], tg['Ov']])
    nt, ct, cs = tg['n'], tg['c'], s['c']
    tzf = lambda tx, ty: float(ct - nt[0] / nt[2] * tx - nt[1] / nt[2] * ty - cs)
    yd, t0, score = coarse(S, tg['Ov'], tzf)
    out['coarse_yaw_deg'] = float(yd)
    out['coarse_shift_m'] = float(np.linalg.norm(t0))
    y0 = math.radians(yd)
    tree = cKDTree(T)
    Tn = normals(T, NORMAL_K)
    Sall = np.vstack([s['Gv'], s['Ov']])
    global SPLIT
    if USE_SPLIT:
        ngt = len(tg['Gv'])
        sgl = np.r_[np.zeros(len(s['Gv']), int), np.ones(len(s['Ov']), int)]
        iG = np.arange(ngt)
        iO = np.arange(ngt, len(T))
        SPLIT = (sgl, None, {0: (cKDTree(T[iG]) if len(iG) else None, iG), 1: (cKDTree(T[iO]) if len(iO) else None, iO)})
        if len(iG) == 0 or len(iO) == 0 or len(s['Gv']) == 0:
            SPLIT = None
    yaw, t, it, conv, last = icp(Sall, T, tree, Tn, y0, t0, maxd)
    isng = np.r_[np.zeros(len(s['Gv']), bool), np.ones(len(s['Ov']), bool)]
    fb, rb, ib = stats(S, T, tree, Tn, y0, t0, maxd)
    fa, ra, ia = stats(S, T, tree, Tn, yaw, t, maxd)
    if LASTSTATS:
        okl, rl, scl = last
        rng = rl[isng[okl]]
        fa = okl[isng].sum() / len(S)
        ra = float(np.sqrt(np.mean(rng ** 2))) if len(rng) else 0.0
        ia = int((np.abs(rng) < TUKEY_C * (robust_scale(rng) if LASTSTATS == 2 else scl)).sum())
    yawd = (math.degrees(yaw) + 180) % 360 - 180
    out.update(converged=bool(conv), iterations=int(it), fitness=float(fa), fitness_before=float(fb),
               rmse=float(ra), rmse_before=float(rb), robust_inliers=int(ia),
               tx=float(t[0]), ty=float(t[1]), tz=float(t[2]), yaw_deg=float(yawd))
    out.update(change_counts(s['Ov'], s['view'], tg['Ov'], tg['view'], yaw, t))
    print(json.dumps(out))


# Added for lidar_icp 3.0.0, which asks for the change between the scans: the recipe's
# stage 9 on this program's own classes, thinning and pose (the rest is unchanged).
def change_counts(s_ng, s_view, t_ng, t_view, yaw, t):
    def look(points, view):
        through = occluded = unseen = 0
        if len(points) == 0:
            return 0, 0, 0
        rho = np.linalg.norm(points, axis=1)
        vr = np.linalg.norm(view, axis=1)
        if len(view) == 0:
            return 0, 0, len(points)
        near = cKDTree(view / vr[:, None]).query_ball_point(points / rho[:, None], 2 * math.sin(math.radians(1.0)))
        for r, idx in zip(rho, near):
            if not idx:
                unseen += 1
                continue
            m = float(np.median(vr[idx]))
            through += m > r + 0.5
            occluded += m < r - 0.5
        return int(through), int(occluded), unseen
    c, s = math.cos(yaw), math.sin(yaw)
    rot = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    a = look(s_ng @ rot.T + t, t_view)
    b = look((t_ng - t) @ rot, s_view)
    return {"vanished_points": a[0], "source_occluded": a[1], "source_unseen": a[2],
            "appeared_points": b[0], "target_occluded": b[1], "target_unseen": b[2]}


DEFAULTS = dict(coarse_shift_m=0.0, coarse_yaw_deg=0.0, converged=False, fitness=0.0, fitness_before=0.0,
                ground_tilt_deg=0.0, iterations=0, rmse=0.0, rmse_before=0.0, robust_inliers=0,
                scanner_height_m=0.0, source_ground=0, source_noise=0, source_points=0, target_ground=0,
                target_noise=0, target_points=0, tx=0.0, ty=0.0, tz=0.0, yaw_deg=0.0,
                appeared_points=0, source_occluded=0, source_unseen=0, target_occluded=0, target_unseen=0, vanished_points=0)

if __name__ == '__main__':
    out = {}
    try:
        main(out)
    except Exception as e:
        sys.stderr.write('error: %r\n' % (e,))
        for k, v in DEFAULTS.items():
            val = out.get(k, v)
            if isinstance(val, float) and not math.isfinite(val):
                val = v
            out[k] = val
        print(json.dumps(out))
