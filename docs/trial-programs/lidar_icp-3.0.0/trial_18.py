import sys, json, numpy as np, laspy
from scipy.spatial import cKDTree

def noise_mask(P):
    r = np.linalg.norm(P, axis=1)
    d, _ = cKDTree(P).query(P, k=9)
    m = d[:, 1:].mean(1) / r
    return m > m.mean() + 2 * m.std()

def fit_svd(Q):
    c = Q.mean(0); u, s, vt = np.linalg.svd(Q - c, full_matrices=False); nrm = vt[2]
    if nrm[2] < 0: nrm = -nrm
    return c, nrm

def ground(P, thr=0.15):
    m = P[:, 2] < -1.0
    if m.sum() < 3: m = P[:, 2] < np.percentile(P[:, 2], 20)
    for it in range(50):
        c, nrm = fit_svd(P[m]); d = (P - c) @ nrm; m2 = np.abs(d) < thr
        if (m2 == m).all() or m2.sum() < 3: break
        m = m2
    return m, c, nrm

def voxel(Q, v):
    if len(Q) == 0: return np.zeros((0, 3))
    k = np.floor(Q / v).astype(np.int64)
    u, inv = np.unique(k, axis=0, return_inverse=True); inv = inv.ravel()
    cnt = np.bincount(inv); C = np.zeros((len(u), 3))
    for j in range(3): C[:, j] = np.bincount(inv, Q[:, j]) / cnt
    return C

def pulse_model(f, P, pulse_count, t0):
    nrow = int(round(np.sqrt(pulse_count * 70.0 / 360.0)))
    ncol = pulse_count // nrow
    idx = np.round((np.asarray(f.gps_time) - t0) / 2e-5).astype(np.int64)
    col = idx // nrow
    daz = 360.0 / ncol
    az = np.degrees(np.arctan2(P[:, 1], P[:, 0]))
    res = (az - col * daz)
    # circular mean of offsets
    a = np.radians(res); az0 = np.degrees(np.arctan2(np.sin(a).mean(), np.cos(a).mean()))
    rng = np.full(nrow * ncol, np.nan)
    ok = idx < nrow * ncol
    rng[idx[ok]] = np.linalg.norm(P[ok], axis=1)
    return dict(nrow=nrow, ncol=ncol, daz=daz, az0=az0, dl=70.0 / nrow, rng=rng)

def prep(path, v, pulse_count):
    f = laspy.read(path); P = np.c_[f.x, f.y, f.z]
    t0 = 600.0 * (int(np.asarray(f.point_source_id)[0]) - 1)
    nm = noise_mask(P); Pn = P[~nm]
    g, c, nrm = ground(Pn)
    G = voxel(Pn[g], v); N = voxel(Pn[~g], v)
    pm = pulse_model(f, P, pulse_count, t0)
    # range image of non-noise returns only
    idx = np.round((np.asarray(f.gps_time) - t0) / 2e-5).astype(np.int64)
    rng = np.full(pm["nrow"] * pm["ncol"], np.nan)
    ok = (idx < len(rng))
    rng[idx[ok]] = np.linalg.norm(P[ok], axis=1)
    pm["rng"] = rng
    return dict(P=P, noise=int(nm.sum()), ground=int(g.sum()), c=c, nrm=nrm, G=G, N=N,
                npts=len(G) + len(N), pm=pm)

def Rz(a):
    c, s = np.cos(a), np.sin(a); return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]])

def normals(Q, k=10):
    k = min(k, len(Q))
    _, nb = cKDTree(Q).query(Q, k=k)
    X = Q[nb] - Q[nb].mean(1, keepdims=True)
    C = np.einsum('nki,nkj->nij', X, X)
    w, V = np.linalg.eigh(C)
    return V[:, :, 0]

def plane_tz(S, T, dx, dy):
    hs = -(S["c"] @ S["nrm"]); ht = -(T["c"] @ T["nrm"]); nt = T["nrm"]
    return float((hs - ht - nt[0] * dx - nt[1] * dy) / nt[2])

def _img(Q, n, ext, cell):
    I = np.zeros((n, n))
    ij = np.floor((Q[:, :2] + ext) / cell).astype(int)
    ok = (ij >= 0).all(1) & (ij < n).all(1)
    np.add.at(I, (ij[ok, 0], ij[ok, 1]), 1.0)
    return np.minimum(I, 1.0)

def _fft_shift(Ft, src, yd, n, ext, cell):
    cc = np.fft.irfft2(Ft * np.conj(np.fft.rfft2(_img(src @ Rz(np.radians(yd)).T, n, ext, cell))), s=(n, n))
    k = np.argmax(cc)
    i, j = np.unravel_index(k, cc.shape)
    if i > n // 2: i -= n
    if j > n // 2: j -= n
    return cc.flat[k], i * cell, j * cell

def _grid_best(S, T, tree, srca, yds, dx0, dy0, dist=0.5, step=0.5):
    best = None
    cx = np.round(dx0 / step) * step; cy = np.round(dy0 / step) * step
    for yd in yds:
        X = srca @ Rz(np.radians(yd)).T
        for dx in cx + step * np.arange(-3, 4):
            for dy in cy + step * np.arange(-3, 4):
                tz = plane_tz(S, T, dx, dy)
                d, _ = tree.query(X + [dx, dy, tz], distance_upper_bound=dist)
                c = int(np.isfinite(d).sum())
                if best is None or c > best[0]:
                    best = (c, yd, dx, dy, tz)
    return best

def hist_yaw(S, T, k=10, thr=0.3):
    hs = []
    for X in (S, T):
        n = normals(X["N"], k); m = np.abs(n[:, 2]) < thr
        a = np.degrees(np.arctan2(n[m, 1], n[m, 0])) % 180
        hs.append(np.bincount(np.floor(a).astype(int) % 180, minlength=180).astype(float))
    cc = np.array([np.dot(np.roll(hs[0], s), hs[1]) for s in range(180)])
    return int(np.argmax(cc))

def coarse(S, T, cell=0.25):
    src = S["N"]; tgt = T["N"]
    ext = 26.0
    n = int(2 * ext / cell)
    Ft = np.fft.rfft2(_img(tgt, n, ext, cell))
    best0 = None
    for yd in range(-179, 181):
        v, dx, dy = _fft_shift(Ft, src, yd, n, ext, cell)
        if best0 is None or v > best0[0]:
            best0 = (v, yd, dx, dy)
    _, y0, dx0, dy0 = best0
    srca = np.r_[S["N"], S["G"]]
    tree = cKDTree(T["N"])
    bf = _grid_best(S, T, tree, srca, range(y0 - 2, y0 + 3), dx0, dy0)
    best = bf
    try:
        yh = hist_yaw(S, T)
        hb = None
        for yd in (yh, yh + 180):
            yd = (yd + 180) % 360 - 180
            v, dx, dy = _fft_shift(Ft, src, yd, n, ext, cell)
            b = _grid_best(S, T, tree, srca, [yd], dx, dy)
            if hb is None or b[0] > hb[0]: hb = b
        if hb[0] >= 0.97 * bf[0] and abs(((hb[1] - bf[1]) + 180) % 360 - 180) <= 3:
            best = hb
    except Exception:
        pass
    _, yd, dx, dy, tz = best
    yd = (yd + 180) % 360 - 180
    return float(yd), np.array([dx, dy, tz])

def icp(src, tgt, tn, yaw, t, maxd, maxit=30):
    tree = cKDTree(tgt)
    it = 0; conv = False
    for it_ in range(maxit):
        R = Rz(yaw); X = src @ R.T + t
        d, j = tree.query(X, distance_upper_bound=maxd)
        ok = np.isfinite(d)
        if ok.sum() < 6: break
        x = X[ok]; q = tgt[j[ok]]; nn = tn[j[ok]]
        r = ((x - q) * nn).sum(1)
        s = 1.4826 * np.median(np.abs(r)) + 1e-9
        c = 4.685 * s
        w = np.where(np.abs(r) < c, (1 - (r / c) ** 2) ** 2, 0.0)
        # jacobian wrt yaw (about origin of current X frame, rotate around z) and t
        Jy = nn[:, 0] * (-x[:, 1] + t[1]) * 0 + (nn[:, 1] * x[:, 0] - nn[:, 0] * x[:, 1])
        J = np.c_[Jy, nn]
        A = (J * w[:, None]).T @ J; b = -(J * w[:, None]).T @ r
        try: dlt = np.linalg.solve(A + 1e-12 * np.eye(4), b)
        except Exception: break
        dy_ = dlt[0]
        Rd = Rz(dy_)
        yaw = yaw + dy_; t = Rd @ t + dlt[1:]
        it += 1
        if abs(dy_) < 1e-5 and np.linalg.norm(dlt[1:]) < 1e-4:
            conv = True; break
    return yaw, t, it, conv

RTHR = 0.05
def evaluate(src, tgt, tn, yaw, t, maxd):
    X = src @ Rz(yaw).T + t
    d, j = cKDTree(tgt).query(X, distance_upper_bound=maxd)
    ok = np.isfinite(d)
    if ok.sum() == 0: return 0.0, 0.0, 0
    r = ((X[ok] - tgt[j[ok]]) * tn[j[ok]]).sum(1)
    inl = int((np.abs(r) < RTHR).sum())
    return ok.sum() / len(src), float(np.sqrt((r ** 2).mean())), inl

def visibility(Q, P, tol=0.6, rad_deg=2.0):
    # Q: points in the viewing station's frame; P: that station's raw returns
    rp = np.linalg.norm(P, axis=1)
    u = P / rp[:, None]
    r = np.linalg.norm(Q, axis=1)
    q = Q / r[:, None]
    d, j = cKDTree(u).query(q, distance_upper_bound=2 * np.sin(np.radians(rad_deg) / 2))
    un = ~np.isfinite(d)
    ro = np.where(un, np.nan, rp[np.minimum(j, len(P) - 1)])
    with np.errstate(invalid="ignore"):
        through = (~un) & (ro > r + tol)
        occl = (~un) & (ro < r - tol)
    return int(un.sum()), int(through.sum()), int(occl.sum())

def main():
    sc = json.load(sys.stdin)
    p = sc["parameters"]; v = float(p["voxel_size"]); pc = int(p["pulse_count"])
    maxd = float(p["max_correspondence_m"])
    global RTHR
    RTHR = 5.25 * float(p["noise_sigma"]) + 0.025
    S = prep(sc["inputs"]["source"], v, pc); T = prep(sc["inputs"]["target"], v, pc)
    hs = float(-(S["c"] @ S["nrm"])); ht = float(-(T["c"] @ T["nrm"]))
    tilt = float(np.degrees(np.arccos(min(1.0, abs(S["nrm"][2])))))
    cy, ct = coarse(S, T)
    src = S["N"]; tgt = np.r_[T["N"], T["G"]]
    tn = normals(tgt)
    fb, rb, _ = evaluate(src, tgt, tn, np.radians(cy), ct, maxd)
    yaw, t, it, conv = icp(np.r_[S["N"], S["G"]], tgt, tn, np.radians(cy), ct.copy(), maxd)
    fa, ra, inl = evaluate(src, tgt, tn, yaw, t, maxd)
    R = Rz(yaw)
    tol = 0.5
    su, sv, so = visibility(src @ R.T + t, T["P"])
    Ti = (T["N"] - t) @ R  # target points into source frame
    tu, ta, to = visibility(Ti, S["P"])
    yd = (np.degrees(yaw) + 180) % 360 - 180
    out = dict(appeared_points=ta, coarse_shift_m=float(np.linalg.norm(ct)), coarse_yaw_deg=cy,
               converged=bool(conv), fitness=float(fa), fitness_before=float(fb),
               ground_tilt_deg=tilt, iterations=int(it), rmse=ra, rmse_before=rb,
               robust_inliers=int(inl), scanner_height_m=hs, source_ground=S["ground"],
               source_noise=S["noise"], source_occluded=so, source_points=S["npts"],
               source_unseen=su, target_ground=T["ground"], target_noise=T["noise"],
               target_occluded=to, target_points=T["npts"], target_unseen=tu,
               tx=float(t[0]), ty=float(t[1]), tz=float(t[2]), vanished_points=sv, yaw_deg=float(yd))
    print(json.dumps(out))

if __name__ == "__main__":
    main()
