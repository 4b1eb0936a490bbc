import sys, json, math
import numpy as np
import laspy
from scipy.spatial import cKDTree

PULSE_DT = 2e-5


def load(path, pulse_count):
    f = laspy.read(path)
    x = np.c_[np.asarray(f.x), np.asarray(f.y), np.asarray(f.z)].astype(float)
    t = np.asarray(f.gps_time, dtype=float)
    t0 = round(t.min() / 600.0) * 600.0 if len(t) else 0.0
    idx = np.round((t - t0) / PULSE_DT).astype(np.int64)
    n_el = int(math.floor(math.sqrt(pulse_count / 5.0)))
    n_az = int(round(pulse_count / n_el))
    return x, idx, n_el, n_az, np.asarray(f.intensity, dtype=float)


class Scan:
    def __init__(self, x, idx, n_el, n_az):
        self.x = x
        self.idx = idx
        self.n_el = n_el
        self.n_az = n_az
        self.row = idx % n_el
        self.col = idx // n_el
        self.del_ = 70.0 / n_el
        self.daz = 360.0 / n_az
        az = np.degrees(np.arctan2(x[:, 1], x[:, 0]))
        res = (az - self.col * self.daz + 180.0) % 360.0 - 180.0
        # circular median-ish
        ang = np.radians(res)
        self.az0 = math.degrees(math.atan2(np.median(np.sin(ang)), np.median(np.cos(ang)))) if len(ang) else 0.0
        self.rng = np.linalg.norm(x, axis=1)


def noise_filter(scan, params, k=8, sr=2.0):
    """Statistical outlier removal on range-normalised mean neighbour distance."""
    x = scan.x
    tree = cKDTree(x)
    d, _ = tree.query(x, k=k + 1)
    md = d[:, 1:].mean(axis=1) / np.maximum(scan.rng, 1e-9)
    th = md.mean() + sr * md.std()
    return md > th


def fit_ground(x, thr=0.15):
    cand = x[:, 2] < -0.8
    pts = x[cand]
    sel = np.ones(len(pts), bool)
    t = 0.5
    for it in range(20):
        P = pts[sel]
        A = np.c_[P[:, 0], P[:, 1], np.ones(len(P))]
        coef = np.linalg.lstsq(A, P[:, 2], rcond=None)[0]
        r = pts[:, 2] - (pts[:, 0] * coef[0] + pts[:, 1] * coef[1] + coef[2])
        t = max(t * 0.6, 0.08)
        sel = np.abs(r) < t
    nrm = np.array([-coef[0], -coef[1], 1.0])
    nn = np.linalg.norm(nrm)
    nrm /= nn
    dc = -coef[2] / nn
    for it in range(50):
        gm = np.abs(x @ nrm + dc) < thr
        P = x[gm]
        c = P.mean(0)
        _, _, vt = np.linalg.svd(P - c, full_matrices=False)
        n2 = vt[2]
        if n2[2] < 0:
            n2 = -n2
        d2 = -n2 @ c
        if np.allclose(n2, nrm, atol=1e-13) and abs(d2 - dc) < 1e-13:
            break
        nrm, dc = n2, d2
    return nrm, dc


def voxel_thin(x, v):
    keys = np.floor(x / v).astype(np.int64)
    _, inv = np.unique(keys, axis=0, return_inverse=True)
    inv = inv.ravel()
    m = inv.max() + 1
    cnt = np.bincount(inv, minlength=m)
    out = np.zeros((m, 3))
    for j in range(3):
        out[:, j] = np.bincount(inv, weights=x[:, j], minlength=m) / cnt
    return out


def rotz(yaw):
    c, s = math.cos(yaw), math.sin(yaw)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]])


def apply(T, x):
    yaw, tx, ty, tz = T
    return x @ rotz(yaw).T + np.array([tx, ty, tz])


def normals(x, k=10):
    tree = cKDTree(x)
    _, nb = tree.query(x, k=min(k, len(x)))
    P = x[nb]
    P = P - P.mean(axis=1, keepdims=True)
    C = np.einsum('nki,nkj->nij', P, P)
    w, v = np.linalg.eigh(C)
    return v[:, :, 0]


def coarse(src, tgt, cell=0.5):
    """Exhaustive integer-degree yaw search, 3D occupancy correlation (xy shift) on a 0.5 m grid."""
    R0 = max(np.abs(src[:, :2]).max(), np.abs(tgt[:, :2]).max()) + 2.0
    R0 = math.ceil(R0 / cell) * cell
    n = int(round(2 * R0 / cell)) * 2
    zmin = min(src[:, 2].min(), tgt[:, 2].min()) - 1.0

    def grid(p):
        kz = np.floor((p[:, 2] - zmin) / cell).astype(int)
        ij = np.floor((p[:, :2] + R0) / cell).astype(int)
        ok = (ij >= 0).all(1) & (ij < n).all(1)
        g = np.zeros((kz.max() + 1, n, n))
        g[kz[ok], ij[ok, 0], ij[ok, 1]] = 1.0
        return g

    G = grid(tgt)
    FG = np.fft.rfft2(G)
    best = None
    for yd in range(-179, 181):
        ps = src @ rotz(math.radians(yd)).T
        S = grid(ps)
        nz = min(S.shape[0], G.shape[0])
        cc = np.fft.irfft2((FG[:nz] * np.conj(np.fft.rfft2(S[:nz]))).sum(0), s=(n, n))
        k = np.argmax(cc)
        i, j = np.unravel_index(k, cc.shape)
        if best is None or cc[i, j] > best[0] + 1e-6:
            di = i if i < n // 2 else i - n
            dj = j if j < n // 2 else j - n
            best = (cc[i, j], yd, di * cell, dj * cell)
    return best[1], best[2], best[3]


def plane_tz(Spl, Tpl, yaw, tx, ty):
    ns, ds = Spl
    nt, dt = Tpl
    foot = -ds * ns
    p = rotz(yaw) @ foot + np.array([tx, ty, 0.0])
    return float(-(nt @ p + dt) / nt[2])


CAUCHY_C = 2.385


def icp(src, tgt, tn, T, maxd, max_iter=30):
    tree = cKDTree(tgt)
    yaw, tx, ty, tz = T
    iters = 0
    converged = False
    scale = None
    for it in range(max_iter):
        p = apply((yaw, tx, ty, tz), src)
        d, j = tree.query(p, distance_upper_bound=maxd)
        ok = np.isfinite(d)
        if ok.sum() < 4:
            break
        ps = p[ok]; q = tgt[j[ok]]; nrm = tn[j[ok]]
        r = np.einsum('ij,ij->i', ps - q, nrm)
        s = 1.4826 * np.median(np.abs(r)) + 1e-12
        scale = s
        a = np.abs(r) / s
        w = 1.0 / (1.0 + (a / CAUCHY_C) ** 2)
        J = np.c_[nrm[:, 0] * (-ps[:, 1]) + nrm[:, 1] * ps[:, 0], nrm[:, 0], nrm[:, 1], nrm[:, 2]]
        H = J.T @ (J * w[:, None])
        g = J.T @ (w * r)
        try:
            dx = -np.linalg.solve(H + 1e-12 * np.eye(4), g)
        except np.linalg.LinAlgError:
            break
        dyaw = dx[0]
        Rd = rotz(dyaw)
        tvec = Rd @ np.array([tx, ty, tz]) + dx[1:]
        yaw += dyaw; tx, ty, tz = tvec
        iters += 1
        if abs(dyaw) < 1e-4 and np.linalg.norm(dx[1:]) < 1e-4:
            converged = True
            break
    # final scale at the final pose
    p = apply((yaw, tx, ty, tz), src)
    d, j = tree.query(p, distance_upper_bound=maxd)
    ok = np.isfinite(d)
    if ok.sum() > 0:
        r = np.einsum('ij,ij->i', p[ok] - tgt[j[ok]], tn[j[ok]])
        scale = 1.4826 * np.median(np.abs(r)) + 1e-12
    return (yaw, tx, ty, tz), iters, converged, scale


def metrics(src, tgt, tn, T, maxd):
    tree = cKDTree(tgt)
    p = apply(T, src)
    d, j = tree.query(p, distance_upper_bound=maxd)
    ok = np.isfinite(d)
    if ok.sum() == 0:
        return 0.0, 0.0, 0, ok, None
    r = np.einsum('ij,ij->i', p[ok] - tgt[j[ok]], tn[j[ok]])
    fit = ok.sum() / len(src)
    rmse = float(np.sqrt(np.mean(r ** 2)))
    return fit, rmse, int(ok.sum()), ok, r


def visibility(x, scan, valid, tol=None):
    """x expressed in the frame of `scan` station. Returns unseen, occluded, seethrough counts."""
    r = np.linalg.norm(x, axis=1)
    u = x / np.maximum(r, 1e-9)[:, None]
    X = scan.x[valid]
    R_ = np.linalg.norm(X, axis=1)
    U = X / np.maximum(R_, 1e-9)[:, None]
    el = np.degrees(np.arcsin(np.clip(u[:, 2], -1, 1)))
    fov = (el < -40.0) | (el > 30.0)
    step = math.radians(max(scan.del_, scan.daz))
    d, j = cKDTree(U).query(u, distance_upper_bound=step)
    has = np.isfinite(d) & ~fov
    rr = np.where(has, R_[np.minimum(j, len(R_) - 1)], np.nan)
    tl = 0.4 + 0.01 * r
    occl = has & (rr < r - tl)
    st = has & (rr > r + tl)
    return int((~has).sum()), int(occl.sum()), int(st.sum())


def main():
    sc = json.load(sys.stdin)
    P = sc['parameters']
    pc = int(P['pulse_count'])
    v = float(P['voxel_size'])
    maxd = float(P['max_correspondence_m'])
    scans = {}
    out = {}
    for name in ('source', 'target'):
        x, idx, n_el, n_az, inten = load(sc['inputs'][name], pc)
        s = Scan(x, idx, n_el, n_az)
        noise = noise_filter(s, P)
        good = ~noise
        nrm, dc = fit_ground(x[good])
        dist = x @ nrm + dc
        ground = good & (np.abs(dist) < 0.15)
        s.noise = noise; s.ground = ground; s.good = good
        s.plane = (nrm, dc)
        thin_g = voxel_thin(x[ground], v)
        thin_ng = voxel_thin(x[good & ~ground], v)
        s.thin_ng = thin_ng; s.thin_full = np.vstack([thin_g, thin_ng])
        scans[name] = s
        out[name + '_noise'] = int(noise.sum())
        out[name + '_ground'] = int(ground.sum())
        out[name + '_points'] = int(len(thin_g) + len(thin_ng))
    S, Tg = scans['source'], scans['target']
    nrm, dc = S.plane
    out['ground_tilt_deg'] = float(math.degrees(math.acos(min(1.0, abs(nrm[2])))))
    out['scanner_height_m'] = float(abs(dc))
    src = S.thin_ng; tgt = Tg.thin_full
    yd, cx, cy = coarse(src, Tg.thin_ng)
    # tz from ground planes: heights
    tz0 = plane_tz(S.plane, Tg.plane, math.radians(yd), cx, cy)
    T0 = (math.radians(yd), cx, cy, tz0)
    tn = normals(tgt)
    # refine coarse translation? keep
    out['coarse_yaw_deg'] = float(yd)
    out['coarse_shift_m'] = float(math.sqrt(cx * cx + cy * cy + tz0 * tz0))
    fb, rb, _, _, _ = metrics(src, tgt, tn, T0, maxd)
    T, iters, conv, scale = icp(S.thin_full, tgt, tn, T0, maxd)
    f1, r1, npair, ok, res = metrics(src, tgt, tn, T, maxd)
    out['fitness_before'] = float(fb); out['rmse_before'] = float(rb)
    out['fitness'] = float(f1); out['rmse'] = float(r1)
    if res is not None:
        out['robust_inliers'] = int((np.abs(res) < 7.2 * scale).sum())
        import os
        if os.environ.get('DUMPDIR'):
            np.savez(os.path.join(os.environ['DUMPDIR'], str(sc.get('id', 'x')) + '.npz'), res=res, scale=scale)
    else:
        out['robust_inliers'] = 0
    out['iterations'] = int(iters); out['converged'] = bool(conv)
    yaw = math.degrees(T[0])
    yaw = (yaw + 180.0) % 360.0 - 180.0
    out['yaw_deg'] = float(yaw); out['tx'] = float(T[1]); out['ty'] = float(T[2]); out['tz'] = float(T[3])
    tol = max(v, 0.1)
    # source thinned ng points into target frame
    ps_t = apply(T, src)
    u, o, st = visibility(ps_t, Tg, Tg.good, tol)
    out['source_unseen'] = u; out['source_occluded'] = o; out['vanished_points'] = st
    # target points into source frame: inverse
    Rinv = rotz(-T[0])
    pt_s = (Tg.thin_ng - np.array(T[1:])) @ Rinv.T
    u, o, st = visibility(pt_s, S, S.good, tol)
    out['target_unseen'] = u; out['target_occluded'] = o; out['appeared_points'] = st
    print(json.dumps(out))


FIELDS_INT = ['appeared_points', 'iterations', 'robust_inliers', 'source_ground', 'source_noise',
              'source_occluded', 'source_points', 'source_unseen', 'target_ground', 'target_noise',
              'target_occluded', 'target_points', 'target_unseen', 'vanished_points']
FIELDS_FLOAT = ['coarse_shift_m', 'coarse_yaw_deg', 'fitness', 'fitness_before', 'ground_tilt_deg', 'rmse',
                'rmse_before', 'scanner_height_m', 'tx', 'ty', 'tz', 'yaw_deg']


if __name__ == '__main__':
    import io, contextlib, traceback
    raw = sys.stdin.read()
    buf = io.StringIO()
    try:
        sys.stdin = io.StringIO(raw)
        with contextlib.redirect_stdout(buf):
            main()
        out = json.loads(buf.getvalue().strip().splitlines()[-1])
    except Exception:
        traceback.print_exc(file=sys.stderr)
        out = {}
    for k in FIELDS_INT:
        try:
            out[k] = int(out.get(k, 0))
        except Exception:
            out[k] = 0
    for k in FIELDS_FLOAT:
        try:
            val = float(out.get(k, 0.0))
            out[k] = val if math.isfinite(val) else 0.0
        except Exception:
            out[k] = 0.0
    out['converged'] = bool(out.get('converged', False))
    print(json.dumps(out))
