import sys, json, math
import numpy as np
import laspy, os
MODE = os.environ.get('MODE', 'o3d'); EF = float(os.environ.get('EF', '1e-2')); ER = float(os.environ.get('ER', '3e-6'))
TK = float(os.environ.get('TK', '6'))
RI = float(os.environ.get('RI', '5.5'))
CR = float(os.environ.get('CR', '3e-5')); CT = float(os.environ.get('CT', '3e-5'))
from scipy.spatial import cKDTree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vis2 import scan_grid
from vis3 import classify2

def load(p, gt=False):
    f = laspy.read(p)
    x = np.c_[np.asarray(f.x), np.asarray(f.y), np.asarray(f.z)].astype(float)
    if gt:
        return x, np.asarray(f.gps_time).astype(float)
    return x

def sor(x, k=8, s=2.0):
    t = cKDTree(x)
    d, _ = t.query(x, k=k + 1)
    m = d[:, 1:].mean(1) / np.linalg.norm(x, axis=1)
    return m > m.mean() + s * m.std()

def ground_fit(x, thr=0.15):
    # initial: lowest points
    sel = x[:, 2] < np.percentile(x[:, 2], 30)
    n = np.array([0, 0, 1.0]); c = 0.0
    for it in range(20):
        P = x[sel]
        cen = P.mean(0)
        u, s, vt = np.linalg.svd(P - cen, full_matrices=False)
        n = vt[2]
        if n[2] < 0: n = -n
        c = -n @ cen
        d = x @ n + c
        nsel = np.abs(d) < thr
        if np.array_equal(nsel, sel): break
        sel = nsel
    return n, c, sel

def voxel(x, v):
    key = np.floor(x / v).astype(np.int64)
    _, inv = np.unique(key, axis=0, return_inverse=True)
    inv = inv.ravel()
    cnt = np.bincount(inv)
    out = np.zeros((cnt.size, 3))
    for j in range(3):
        out[:, j] = np.bincount(inv, x[:, j]) / cnt
    return out

def normals(x, k=10):
    t = cKDTree(x)
    _, idx = t.query(x, k=min(k, len(x)))
    P = x[idx] - x[idx].mean(1, keepdims=True)
    C = np.einsum('nki,nkj->nij', P, P)
    w, V = np.linalg.eigh(C)
    return V[:, :, 0]

def Rz(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]])

def _grid(p, n, res):
    g = np.zeros((n, n))
    ij = np.round(p[:, :2] / res).astype(np.int64) % n
    g[ij[:, 0], ij[:, 1]] = 1.0
    return g

def coarse(src, tgt, srcA, tgtA, res=0.5):
    n = 128
    G = np.fft.rfft2(_grid(tgt, n, res))
    best = None
    for yd in range(-179, 181):
        p = src @ Rz(math.radians(yd)).T
        cc = np.fft.irfft2(G * np.conj(np.fft.rfft2(_grid(p, n, res))), s=(n, n))
        k = int(np.argmax(cc)); i, j = divmod(k, n); sc = cc[i, j]
        if best is None or sc > best[0] + 1e-9:
            if i > n // 2: i -= n
            if j > n // 2: j -= n
            best = (sc, yd, i * res, j * res)
    yd = best[1]
    t = np.array([best[2], best[3], 0.0])
    p = srcA @ Rz(math.radians(yd)).T + t
    d, jj = cKDTree(tgtA[:, :2]).query(p[:, :2])
    m = d < 0.5
    tz = float(np.median(tgtA[jj[m], 2] - p[m, 2])) if m.any() else 0.0
    return yd, np.array([best[2], best[3], tz])

def main():
    sc = json.load(sys.stdin)
    P = sc["parameters"]; I = sc["inputs"]
    v = float(P["voxel_size"]); dmax = float(P["max_correspondence_m"])
    out = {}
    data = {}
    for nm in ["source", "target"]:
        x, gtime = load(I[nm], True)
        noise = sor(x)
        xc = x[~noise]
        n, c, g = ground_fit(xc, 0.15)
        out[nm + "_noise"] = int(noise.sum())
        out[nm + "_ground"] = int(g.sum())
        vox = np.vstack([voxel(xc[g], v), voxel(xc[~g], v)])
        out[nm + "_points"] = int(len(vox))
        ng = voxel(xc[~g], v)
        data[nm] = dict(noise=noise, gt=gtime, raw=x, clean=xc, n=n, c=c, ng=ng, all=vox)
        if nm == "source":
            out["ground_tilt_deg"] = float(math.degrees(math.acos(min(1, abs(n[2])))))
            out["scanner_height_m"] = float(abs(c))
    src = data["source"]["ng"]; tgt_ng = data["target"]["ng"]
    srcA = data["source"]["all"]; tgt = data["target"]["all"]
    yd, t0 = coarse(src, tgt_ng, srcA, tgt)
    R0 = Rz(math.radians(yd))
    out["coarse_yaw_deg"] = float(yd)
    out["coarse_shift_m"] = float(np.linalg.norm(t0))
    tn = normals(tgt, 10)
    tree = cKDTree(tgt)

    def pairs(S, R, t):
        p = S @ R.T + t
        d, j = tree.query(p, distance_upper_bound=dmax)
        ok = np.isfinite(d)
        r = np.einsum('ij,ij->i', p[ok] - tgt[j[ok]], tn[j[ok]])
        return ok, r, p, j

    def evaluate(R, t):
        ok, r, p, j = pairs(src, R, t)
        if ok.sum() == 0: return 0.0, 0.0, r
        return float(ok.mean()), float(np.sqrt(np.mean(r ** 2))), r

    fb, rb, _ = evaluate(R0, t0)
    out["fitness_before"] = fb; out["rmse_before"] = rb
    yaw = math.radians(yd); t = t0.copy()
    it = 0; conv = False; maxit = 30
    prev = None
    for k in range(1, maxit + 1):
        R = Rz(yaw)
        ok, r, p, j = pairs(srcA, R, t)
        cur = (ok.mean(), float(np.sqrt(np.mean(r ** 2))) if len(r) else 0.0)
        if MODE == 'o3d' and prev is not None and abs(cur[0] - prev[0]) < EF and abs(cur[1] - prev[1]) < ER:
            conv = True
            break
        prev = cur
        ps = p[ok]; nn = tn[j[ok]]
        sig = max(1.4826 * np.median(np.abs(r)), 1e-6)
        kk = TK * sig
        w = np.where(np.abs(r) < kk, (1 - (r / kk) ** 2) ** 2, 0.0)
        J = np.c_[nn[:, 1] * ps[:, 0] - nn[:, 0] * ps[:, 1], nn]
        A = (J * w[:, None]).T @ J + 1e-12 * np.eye(4)
        b = -(J * w[:, None]).T @ r
        dx = np.linalg.solve(A, b)
        dR = Rz(dx[0])
        t = dR @ t + dx[1:]
        yaw += dx[0]
        it = k
        if MODE != 'o3d' and abs(dx[0]) < CR and np.linalg.norm(dx[1:]) < CT:
            conv = True
            break
    R = Rz(yaw)
    f, rm, r = evaluate(R, t)
    sig = max(1.4826 * np.median(np.abs(r)), 1e-6) if len(r) else 1.0
    out["robust_inliers"] = int((np.abs(r) < RI * sig).sum())
    out["fitness"] = f; out["rmse"] = rm
    out["iterations"] = int(it); out["converged"] = bool(conv)
    yawd = (math.degrees(yaw) + 180) % 360 - 180
    out["yaw_deg"] = float(yawd)
    out["tx"], out["ty"], out["tz"] = map(float, t)
    tgt = tgt_ng
    # visibility via the other station's pulse grid
    R = Rz(yaw)
    npulse = int(P["pulse_count"])
    Gs = scan_grid(data["source"]["raw"], data["source"]["gt"], npulse, ~data["source"]["noise"])
    Gt = scan_grid(data["target"]["raw"], data["target"]["gt"], npulse, ~data["target"]["noise"])
    s_in_t = src @ R.T + t
    t_in_s = (tgt_ng - t) @ R
    a, b, c_ = classify2(Gt, s_in_t, 2 * v, 0.02, 1)
    out["vanished_points"], out["source_occluded"], out["source_unseen"] = a, b, c_
    a, b, c_ = classify2(Gs, t_in_s, 2 * v, 0.02, 1)
    out["appeared_points"], out["target_occluded"], out["target_unseen"] = a, b, c_
    print(json.dumps(out))

FIELDS = ["appeared_points", "coarse_shift_m", "coarse_yaw_deg", "converged", "fitness", "fitness_before",
          "ground_tilt_deg", "iterations", "rmse", "rmse_before", "robust_inliers", "scanner_height_m",
          "source_ground", "source_noise", "source_occluded", "source_points", "source_unseen", "target_ground",
          "target_noise", "target_occluded", "target_points", "target_unseen", "tx", "ty", "tz",
          "vanished_points", "yaw_deg"]
INTS = {"appeared_points", "iterations", "robust_inliers", "source_ground", "source_noise", "source_occluded",
        "source_points", "source_unseen", "target_ground", "target_noise", "target_occluded", "target_points",
        "target_unseen", "vanished_points"}

if __name__ == "__main__":
    import io
    buf = io.StringIO()
    real = sys.stdout
    sys.stdout = buf
    try:
        main()
        sys.stdout = real
        out = json.loads(buf.getvalue().strip().splitlines()[-1])
    except Exception as e:
        sys.stdout = real
        print("error: %r" % (e,), file=sys.stderr)
        out = {}
    for f in FIELDS:
        if f not in out or (isinstance(out[f], float) and not math.isfinite(out[f])):
            out[f] = True if f == "converged" else (0 if f in INTS else 0.0)
    print(json.dumps(out))
