"""Baseline `expert`: a careful practitioner's guess, written from the instruction alone.

It knows the shape of a scan-registration workflow but not the recipe, so it uses the
common defaults of each stage: statistical outlier removal (20 neighbours, 2 standard
deviations), a RANSAC ground plane refined by least squares (0.15 m band), voxel-centroid
down-sampling of the cleaned scan, normals from up to 30 neighbours within two voxels,
a coarse yaw and shift by correlative scan matching (the non-ground points' 2-D occupancy
rasters correlated by FFT at every 2 degrees of yaw, the highest peak kept), and
point-to-plane ICP with a
Tukey kernel (k = 0.1 m, the Open3D tutorial's value) in 6 degrees of freedom, stopping on
relative changes of 1e-6 in fitness and RMSE after at most 30 iterations. Change
between the scans by line of sight: each registered non-ground point is looked up in the
other station's cleaned returns by the nearest direction (within 1 degree), and that
return's range more than 0.3 m beyond (before) the point means seen through (occluded).
"""
from __future__ import annotations

import json
import math
import sys

import laspy
import numpy as np
from scipy.spatial import cKDTree

TUKEY_K = 0.1
LOS_CONE_DEG = 1.0
LOS_MARGIN = 0.3


def read(path: str) -> np.ndarray:
    las = laspy.read(path)
    return np.column_stack([np.asarray(las.x), np.asarray(las.y), np.asarray(las.z)]).astype(np.float64)


def remove_outliers(xyz: np.ndarray) -> np.ndarray:
    d, _ = cKDTree(xyz).query(xyz, k=21)
    mean = d[:, 1:].mean(axis=1)
    return mean > mean.mean() + 2.0 * mean.std()


def ground_plane(xyz: np.ndarray, band: float = 0.15):
    rng = np.random.default_rng(0)
    best, best_n = None, -1
    for _ in range(500):
        a, b, c = xyz[rng.choice(len(xyz), 3, replace=False)]
        n = np.cross(b - a, c - a)
        if np.linalg.norm(n) == 0 or abs(n[2]) < 0.9 * np.linalg.norm(n):
            continue  # only near-horizontal planes can be ground
        n = n / np.linalg.norm(n)
        cnt = int(np.count_nonzero(np.abs((xyz - a) @ n) <= band))
        if cnt > best_n:
            best, best_n = (n, a), cnt
    n, a = best
    inl = np.abs((xyz - a) @ n) <= band
    coef = np.linalg.lstsq(np.column_stack([xyz[inl, 0], xyz[inl, 1], np.ones(int(inl.sum()))]), xyz[inl, 2],
                           rcond=None)[0]
    h = xyz[:, 2] - (coef[0] * xyz[:, 0] + coef[1] * xyz[:, 1] + coef[2])
    return coef, np.abs(h) <= band


def voxel_down(xyz: np.ndarray, labels: np.ndarray, voxel: float):
    lo = xyz.min(axis=0)
    keys = np.floor((xyz - lo) / voxel).astype(np.int64)
    _, inv = np.unique(keys, axis=0, return_inverse=True)
    inv = inv.reshape(-1)
    m = inv.max() + 1
    counts = np.bincount(inv, minlength=m)
    out = np.column_stack([np.bincount(inv, weights=xyz[:, k], minlength=m) / counts for k in range(3)])
    ground_share = np.bincount(inv, weights=labels.astype(float), minlength=m) / counts
    return out, ground_share >= 0.5


def estimate_normals(xyz: np.ndarray, radius: float, max_nn: int = 30) -> np.ndarray:
    """Open3D's hybrid search: up to max_nn neighbours within radius (at least 3)."""
    k = min(max_nn, len(xyz))
    d, idx = cKDTree(xyz).query(xyz, k=k)
    use = (d <= radius) | (np.arange(k) < 3)
    w = use.astype(float)
    pts = xyz[idx]
    mean = (pts * w[..., None]).sum(axis=1) / w.sum(axis=1)[:, None]
    q = (pts - mean[:, None, :]) * np.sqrt(w)[..., None]
    _, vec = np.linalg.eigh(np.einsum("nki,nkj->nij", q, q))
    n = vec[:, :, 0]
    n[np.einsum("ij,ij->i", n, xyz) > 0] *= -1.0
    return n


def rz(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def raster(xy: np.ndarray, cell: float):
    ij = np.floor(xy / cell).astype(np.int64)
    origin = ij.min(axis=0)
    ij -= origin
    grid = np.zeros(ij.max(axis=0) + 1)
    grid[ij[:, 0], ij[:, 1]] = 1.0
    return grid, origin


def correlative_match(src_xy: np.ndarray, tgt_xy: np.ndarray, cell: float = 0.5):
    """Yaw (2-degree steps) and shift maximising the overlap of occupancy rasters."""
    from scipy.signal import fftconvolve

    tgrid, torigin = raster(tgt_xy, cell)
    best = None
    for deg in range(0, 360, 2):
        yaw = math.radians(deg)
        sgrid, sorigin = raster(src_xy @ rz(yaw)[:2, :2].T, cell)
        corr = fftconvolve(tgrid, sgrid[::-1, ::-1], mode="full")
        k = np.unravel_index(int(np.argmax(corr)), corr.shape)
        peak = float(corr[k])
        if best is None or peak > best[0] + 1e-6:
            shift = (np.array(k) - (np.array(sgrid.shape) - 1) + torigin - sorigin) * cell
            best = (peak, yaw, shift)
    return best[1], best[2]


def stats(tree, tgt, tn, src, r, t, gate):
    moved = src @ r.T + t
    dist, j = tree.query(moved)
    inl = dist <= gate
    n = int(inl.sum())
    fit = n / len(src) if len(src) else 0.0
    rmse = math.sqrt(float(np.mean(dist[inl] ** 2))) if n else 0.0
    return moved, inl, j, fit, rmse, n


def icp_point_to_plane(src, tgt, tn, r, t, gate, max_iter=30):
    tree = cKDTree(tgt)
    moved, inl, j, fit, rmse, n = stats(tree, tgt, tn, src, r, t, gate)
    before = (fit, rmse)
    it, conv = 0, False
    while it < max_iter and n >= 6:
        p, q, nq = moved[inl], tgt[j[inl]], tn[j[inl]]
        res = np.einsum("ij,ij->i", nq, p - q)
        w = np.where(np.abs(res) <= TUKEY_K, (1 - (res / TUKEY_K) ** 2) ** 2, 0.0)
        jac = np.column_stack([np.cross(p, nq), nq])
        try:
            x = np.linalg.solve(jac.T @ (jac * w[:, None]), -jac.T @ (w * res))
        except np.linalg.LinAlgError:
            break
        a, b, g = x[:3]
        dr = rz(g) @ np.array([[math.cos(b), 0, math.sin(b)], [0, 1, 0], [-math.sin(b), 0, math.cos(b)]]) @ \
            np.array([[1, 0, 0], [0, math.cos(a), -math.sin(a)], [0, math.sin(a), math.cos(a)]])
        r, t = dr @ r, dr @ t + x[3:]
        it += 1
        moved, inl, j, nfit, nrmse, n = stats(tree, tgt, tn, src, r, t, gate)
        done = abs(nfit - fit) < 1e-6 and abs(nrmse - rmse) < 1e-6
        fit, rmse = nfit, nrmse
        if done:
            conv = True
            break
    res = np.einsum("ij,ij->i", tn[j[inl]], moved[inl] - tgt[j[inl]])
    return r, t, before, (fit, rmse, int(np.count_nonzero(np.abs(res) <= TUKEY_K))), it, conv


def line_of_sight(points: np.ndarray, view: np.ndarray) -> tuple[int, int, int]:
    """(seen through, occluded, no return) for points in the viewing station's frame."""
    if len(points) == 0 or len(view) == 0:
        return 0, 0, len(points)
    rng, vr = np.linalg.norm(points, axis=1), np.linalg.norm(view, axis=1)
    dist, j = cKDTree(view / vr[:, None]).query(points / rng[:, None])
    seen = dist <= 2 * math.sin(math.radians(LOS_CONE_DEG) / 2)
    gap = vr[j] - rng
    return (int(np.count_nonzero(seen & (gap > LOS_MARGIN))), int(np.count_nonzero(seen & (gap < -LOS_MARGIN))),
            int(np.count_nonzero(~seen)))


def main() -> None:
    sc = json.load(sys.stdin)
    p = sc["parameters"]
    voxel, gate = float(p["voxel_size"]), float(p["max_correspondence_m"])
    out, clouds = {}, {}
    for name in ("source", "target"):
        xyz = read(sc["inputs"][name])
        noise = remove_outliers(xyz)
        clean = xyz[~noise]
        coef, ground = ground_plane(clean)
        out[f"{name}_noise"] = int(noise.sum())
        out[f"{name}_ground"] = int(ground.sum())
        if name == "source":
            out["ground_tilt_deg"] = math.degrees(math.atan(math.hypot(coef[0], coef[1])))
            out["scanner_height_m"] = float(-coef[2])
        ds, ds_ground = voxel_down(clean, ground, voxel)
        out[f"{name}_points"] = int(len(ds))
        clouds[name] = (ds, ds_ground, estimate_normals(ds, 2 * voxel), clean)
    src, src_g, _, src_view = clouds["source"]
    tgt, tgt_g, tn, tgt_view = clouds["target"]
    s_ng, t_ng = src[~src_g], tgt[~tgt_g]
    yaw0, shift = correlative_match(s_ng[:, :2], t_ng[:, :2])
    r0 = rz(yaw0)
    # height: the two ground planes through the scanner origins
    t0 = np.array([shift[0], shift[1], float(np.median(tgt[tgt_g][:, 2])) - float(np.median(src[src_g][:, 2]))])
    r, t, before, after, it, conv = icp_point_to_plane(src, tgt, tn, r0, t0, gate)
    out.update({
        "coarse_yaw_deg": (math.degrees(yaw0) + 180.0) % 360.0 - 180.0,
        "coarse_shift_m": float(np.linalg.norm(t0)),
        "fitness_before": before[0], "rmse_before": before[1],
        "yaw_deg": math.degrees(math.atan2(r[1, 0], r[0, 0])),
        "tx": float(t[0]), "ty": float(t[1]), "tz": float(t[2]),
        "fitness": after[0], "rmse": after[1], "robust_inliers": after[2],
        "iterations": it, "converged": conv,
    })
    gone, s_hidden, s_none = line_of_sight(s_ng @ r.T + t, tgt_view)
    new, t_hidden, t_none = line_of_sight((t_ng - t) @ r, src_view)
    out.update({"vanished_points": gone, "appeared_points": new, "source_occluded": s_hidden,
                "target_occluded": t_hidden, "source_unseen": s_none, "target_unseen": t_none})
    print(json.dumps(out))


if __name__ == "__main__":
    main()
