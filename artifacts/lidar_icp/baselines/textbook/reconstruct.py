"""Baseline `textbook`: the textbook registration pipeline on Open3D's defaults.

Written from the task's instruction alone (it does not know the recipe): the Open3D
tutorial sequence re-implemented with numpy / scipy -- statistical outlier removal
(nb_neighbors=20, std_ratio=2.0), RANSAC plane segmentation for the ground
(distance_threshold=0.1, ransac_n=3, 1000 iterations, seeded), voxel down-sampling to
voxel centroids on the grid Open3D uses (anchored half a voxel below the minimum
corner), and point-to-point ICP from the identity (registration_icp defaults: 30
iterations, relative fitness and RMSE 1e-6). No coarse stage: the coarse pose is the
identity. Change between the scans as cloud-to-cloud distances (the CloudCompare C2C
habit): after registration, a thinned point farther than 0.3 m from every point of the
other thinned scan has vanished (source) or appeared (target); occlusion is not modelled.
"""
from __future__ import annotations

import json
import math
import sys

import laspy
import numpy as np
from scipy.spatial import cKDTree


def read(path: str) -> np.ndarray:
    las = laspy.read(path)
    return np.column_stack([np.asarray(las.x), np.asarray(las.y), np.asarray(las.z)]).astype(np.float64)


def statistical_outliers(xyz: np.ndarray, nb: int = 20, ratio: float = 2.0) -> np.ndarray:
    d, _ = cKDTree(xyz).query(xyz, k=nb + 1)
    mean = d[:, 1:].mean(axis=1)
    return mean > mean.mean() + ratio * mean.std(ddof=1)


def segment_plane(xyz: np.ndarray, threshold: float = 0.1, iterations: int = 1000, seed: int = 0):
    rng = np.random.default_rng(seed)
    best, best_n = None, -1
    for _ in range(iterations):
        a, b, c = xyz[rng.choice(len(xyz), 3, replace=False)]
        n = np.cross(b - a, c - a)
        norm = np.linalg.norm(n)
        if norm == 0:
            continue
        n /= norm
        d = -n @ a
        count = int(np.count_nonzero(np.abs(xyz @ n + d) <= threshold))
        if count > best_n:
            best, best_n = (n, d), count
    n, d = best
    if n[2] < 0:
        n, d = -n, -d
    return n, d, np.abs(xyz @ n + d) <= threshold


def voxel_down(xyz: np.ndarray, voxel: float) -> np.ndarray:
    lo = xyz.min(axis=0) - 0.5 * voxel
    keys = np.floor((xyz - lo) / voxel).astype(np.int64)
    _, inv = np.unique(keys, axis=0, return_inverse=True)
    inv = inv.reshape(-1)
    m = inv.max() + 1
    out = np.empty((m, 3))
    counts = np.bincount(inv, minlength=m)
    for k in range(3):
        out[:, k] = np.bincount(inv, weights=xyz[:, k], minlength=m) / counts
    return out


def kabsch(a: np.ndarray, b: np.ndarray):
    ca, cb = a.mean(axis=0), b.mean(axis=0)
    u, _, vt = np.linalg.svd((a - ca).T @ (b - cb))
    d = np.sign(np.linalg.det(vt.T @ u.T)) or 1.0
    r = vt.T @ np.diag([1.0, 1.0, d]) @ u.T
    return r, cb - r @ ca


def evaluate(tree, src, r, t, gate):
    dist, j = tree.query(src @ r.T + t)
    inl = dist <= gate
    n = int(inl.sum())
    fit = n / len(src) if len(src) else 0.0
    rmse = math.sqrt(float(np.mean(dist[inl] ** 2))) if n else 0.0
    return inl, j, fit, rmse, n


def icp(src, tgt, gate, max_iter=30):
    tree = cKDTree(tgt)
    r, t = np.eye(3), np.zeros(3)
    inl, j, fit, rmse, n = evaluate(tree, src, r, t, gate)
    before = (fit, rmse)
    it, converged = 0, False
    while it < max_iter and n >= 3:
        dr, dt = kabsch((src @ r.T + t)[inl], tgt[j[inl]])
        r, t = dr @ r, dr @ t + dt
        it += 1
        inl, j, nfit, nrmse, n = evaluate(tree, src, r, t, gate)
        done = abs(nfit - fit) < 1e-6 and abs(nrmse - rmse) < 1e-6
        fit, rmse = nfit, nrmse
        if done:
            converged = True
            break
    return r, t, before, (fit, rmse, n), it, converged


C2C_DISTANCE = 0.3


def c2c_changed(points: np.ndarray, other: np.ndarray) -> int:
    """Points farther than C2C_DISTANCE from every point of ``other``."""
    if len(points) == 0:
        return 0
    if len(other) == 0:
        return int(len(points))
    dist, _ = cKDTree(other).query(points)
    return int(np.count_nonzero(dist > C2C_DISTANCE))


def main() -> None:
    sc = json.load(sys.stdin)
    p = sc["parameters"]
    voxel, gate = float(p["voxel_size"]), float(p["max_correspondence_m"])
    out = {}
    clouds = {}
    for name in ("source", "target"):
        xyz = read(sc["inputs"][name])
        noise = statistical_outliers(xyz)
        clean = xyz[~noise]
        n, d, ground = segment_plane(clean)
        out[f"{name}_noise"] = int(noise.sum())
        out[f"{name}_ground"] = int(ground.sum())
        if name == "source":
            out["ground_tilt_deg"] = math.degrees(math.acos(min(1.0, abs(n[2]))))
            out["scanner_height_m"] = float(abs(d))
        clouds[name] = voxel_down(clean, voxel)
        out[f"{name}_points"] = int(len(clouds[name]))
    r, t, before, after, it, conv = icp(clouds["source"], clouds["target"], gate)
    out.update({
        "coarse_yaw_deg": 0.0, "coarse_shift_m": 0.0,
        "fitness_before": before[0], "rmse_before": before[1],
        "yaw_deg": math.degrees(math.atan2(r[1, 0], r[0, 0])),
        "tx": float(t[0]), "ty": float(t[1]), "tz": float(t[2]),
        "fitness": after[0], "rmse": after[1], "robust_inliers": int(after[2]),
        "iterations": it, "converged": conv,
    })
    moved = clouds["source"] @ r.T + t
    out.update({"vanished_points": c2c_changed(moved, clouds["target"]),
                "appeared_points": c2c_changed(clouds["target"], moved),
                "source_occluded": 0, "target_occluded": 0, "source_unseen": 0, "target_unseen": 0})
    print(json.dumps(out))


if __name__ == "__main__":
    main()
