"""Reference solution for the `lidar_icp` recon task (standalone: stdlib, numpy, scipy, laspy).

Reads one scenario JSON object on stdin, prints the output JSON object on stdout.

Pipeline
--------
1. Read ``inputs["source"]`` and ``inputs["target"]`` (LAS files) with laspy.  Every
   coordinate used below is ``X * scale + offset`` in float64, where ``X`` is the raw
   integer stored in the file (this is exactly what ``las.x`` returns).
2. Voxel down-sample BOTH clouds with voxel edge ``voxel_size`` metres.  The grid of each
   cloud is anchored at that cloud's own minimum corner: on every axis the voxel index of
   a point is floor((coordinate - minimum coordinate of the cloud) / voxel_size).  The
   division is done EXACTLY, on the integer grid of the file (raw integer differences
   times the scale, the voxel size taken as the exact decimal number written in the
   scenario JSON), so a point lying exactly on a voxel face belongs to the upper voxel.
   Each occupied voxel yields one point: the arithmetic mean of the coordinates of the
   points it contains.  Voxels are ordered by (ix, iy, iz) lexicographically.
3. Point-to-point ICP aligning the down-sampled source to the down-sampled target,
   starting from the identity:
   - correspondences: each (currently transformed) source point is paired with its
     nearest target point (Euclidean); the pair is an inlier when the distance is
     <= registration_threshold;
   - fitness = inliers / number of source points; inlier_rmse = sqrt(mean squared
     inlier distance), 0.0 when there is no inlier;
   - one iteration = least-squares rigid transform of the inlier pairs (Kabsch / SVD,
     reflections excluded), applied on top of the current transform, then new
     correspondences;
   - stop (converged) when both |change of fitness| < 1e-6 and |change of inlier_rmse|
     < 1e-6 between consecutive correspondence sets; stop (not converged) after
     50 iterations or when fewer than 3 inliers remain to estimate a transform.
4. Report the recovered yaw atan2(R[1,0], R[0,0]) in degrees and the norm of the
   recovered translation, with statistics of the down-sampled clouds.
"""
from __future__ import annotations

import datetime
import json
import math
import sys
from fractions import Fraction

import laspy
import numpy as np
from scipy.spatial import cKDTree

MAX_ITERATIONS = 50
RELATIVE_FITNESS = 1e-6
RELATIVE_RMSE = 1e-6
LAS_SCALE = 0.001
LAS_DATE = datetime.date(2024, 1, 1)


# --------------------------------------------------------------------------- LAS I/O
def read_cloud(path: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Return (raw integer XYZ (n,3) int64, xyz metres (n,3) float64, scales, intensity)."""
    las = laspy.read(path)
    raw = np.stack(
        [np.asarray(las.X), np.asarray(las.Y), np.asarray(las.Z)], axis=1
    ).astype(np.int64)
    scales = np.asarray(las.header.scales, dtype=np.float64)
    offsets = np.asarray(las.header.offsets, dtype=np.float64)
    xyz = raw * scales + offsets
    intensity = np.asarray(las.intensity).astype(np.float64)
    return raw, xyz, scales, intensity


def write_las(path, xyz: np.ndarray, intensity: np.ndarray, *, classification=None,
              gps_time=None, software: str = "recon lidar_icp") -> None:
    """Write a LAS 1.2 point format 3 file, scale 0.001, offsets = floor(min) per axis.

    Deterministic: fixed creation date and header strings, so equal inputs give
    byte-identical files."""
    xyz = np.asarray(xyz, dtype=np.float64).reshape(-1, 3)
    header = laspy.LasHeader(point_format=3, version="1.2")
    header.scales = np.array([LAS_SCALE] * 3)
    offsets = np.floor(xyz.min(axis=0)) if len(xyz) else np.zeros(3)
    header.offsets = offsets
    header.creation_date = LAS_DATE
    header.generating_software = software[:31]
    header.system_identifier = "recon synthetic"
    las = laspy.LasData(header)
    raw = np.rint((xyz - offsets) / LAS_SCALE).astype(np.int32)
    las.X = raw[:, 0]
    las.Y = raw[:, 1]
    las.Z = raw[:, 2]
    las.intensity = np.clip(np.rint(np.asarray(intensity, dtype=np.float64)), 0, 65535).astype(np.uint16)
    n = len(xyz)
    las.return_number = np.ones(n, dtype=np.uint8)
    las.number_of_returns = np.ones(n, dtype=np.uint8)
    if classification is not None:
        las.classification = np.asarray(classification, dtype=np.uint8)
    if gps_time is not None:
        las.gps_time = np.asarray(gps_time, dtype=np.float64)
    las.write(str(path))


# ------------------------------------------------------------------- down-sampling
def _exact(value: float) -> Fraction:
    # The shortest repr of a float is the decimal written in canonical JSON.
    return Fraction(repr(float(value)))


def voxel_indices(raw: np.ndarray, scales: np.ndarray, voxel_size: float) -> np.ndarray:
    """Exact integer voxel index per point and axis: floor((X - Xmin) * scale / voxel)."""
    voxel = _exact(voxel_size)
    out = np.empty(raw.shape, dtype=np.int64)
    for axis in range(3):
        k = raw[:, axis] - raw[:, axis].min()            # non-negative integers
        scale = _exact(scales[axis])
        num = scale.numerator * voxel.denominator
        den = scale.denominator * voxel.numerator
        kmax = int(k.max()) if len(k) else 0
        if kmax * num < 2 ** 62:
            out[:, axis] = (k * num) // den
        else:  # exotic decimals: fall back to Python integers (exact, slower)
            out[:, axis] = np.array([(int(v) * num) // den for v in k], dtype=np.int64)
    return out


def voxel_downsample(raw, xyz, scales, intensity, voxel_size):
    """Voxel-centroid down-sampling; returns (centroids (m,3), mean intensity (m,))."""
    idx = voxel_indices(raw, scales, voxel_size)
    _, inverse, counts = np.unique(idx, axis=0, return_inverse=True, return_counts=True)
    inverse = inverse.reshape(-1)
    m = len(counts)
    cent = np.empty((m, 3), dtype=np.float64)
    for axis in range(3):
        cent[:, axis] = np.bincount(inverse, weights=xyz[:, axis], minlength=m) / counts
    mean_int = np.bincount(inverse, weights=intensity, minlength=m) / counts
    return cent, mean_int


# ---------------------------------------------------------------------------- ICP
def _correspond(tree: cKDTree, target: np.ndarray, src: np.ndarray, threshold: float):
    dist, j = tree.query(src, k=1)
    inl = dist <= threshold
    n_in = int(inl.sum())
    fitness = n_in / len(src) if len(src) else 0.0
    rmse = math.sqrt(float(np.sum(dist[inl] ** 2)) / n_in) if n_in else 0.0
    return inl, j, fitness, rmse, n_in


def _kabsch(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rigid (R, t) minimising sum |R a + t - b|^2 (no reflection)."""
    ca = a.mean(axis=0)
    cb = b.mean(axis=0)
    h = (a - ca).T @ (b - cb)
    u, _, vt = np.linalg.svd(h)
    d = np.sign(np.linalg.det(vt.T @ u.T))
    if d == 0:
        d = 1.0
    r = vt.T @ np.diag([1.0, 1.0, d]) @ u.T
    t = cb - r @ ca
    return r, t


def icp(source: np.ndarray, target: np.ndarray, threshold: float):
    tree = cKDTree(target)
    rot = np.eye(3)
    trans = np.zeros(3)
    cur = source.copy()
    inl, j, fitness, rmse, n_in = _correspond(tree, target, cur, threshold)
    iterations = 0
    converged = False
    while iterations < MAX_ITERATIONS and n_in >= 3:
        r, t = _kabsch(cur[inl], target[j[inl]])
        rot = r @ rot
        trans = r @ trans + t
        cur = source @ rot.T + trans
        iterations += 1
        inl, j, new_fit, new_rmse, n_in = _correspond(tree, target, cur, threshold)
        done = abs(new_fit - fitness) < RELATIVE_FITNESS and abs(new_rmse - rmse) < RELATIVE_RMSE
        fitness, rmse = new_fit, new_rmse
        if done:
            converged = True
            break
    return rot, trans, fitness, rmse, iterations, converged


# -------------------------------------------------------------------------- solve
def process(scenario: dict):
    """Full computation; returns (outputs dict, down-sampled source, its mean intensity)."""
    p = scenario["parameters"]
    voxel = float(p["voxel_size"])
    threshold = float(p["registration_threshold"])
    raw_s, xyz_s, sc_s, int_s = read_cloud(scenario["inputs"]["source"])
    raw_t, xyz_t, sc_t, int_t = read_cloud(scenario["inputs"]["target"])
    src, src_int = voxel_downsample(raw_s, xyz_s, sc_s, int_s, voxel)
    tgt, _ = voxel_downsample(raw_t, xyz_t, sc_t, int_t, voxel)
    rot, trans, fitness, rmse, iterations, converged = icp(src, tgt, threshold)
    yaw = math.degrees(math.atan2(rot[1, 0], rot[0, 0]))
    out = {
        "count": int(len(src)),
        "target_count": int(len(tgt)),
        "xmax": float(src[:, 0].max()),
        "ymean": float(src[:, 1].mean()),
        "fitness": float(fitness),
        "inlier_rmse": float(rmse),
        "rotation_deg": float(yaw),
        "translation_norm": float(np.linalg.norm(trans)),
        "iterations": int(iterations),
        "converged": bool(converged),
    }
    return out, src, src_int


def solve(scenario: dict) -> dict:
    return process(scenario)[0]


def main() -> None:
    scenario = json.load(sys.stdin)
    print(json.dumps(solve(scenario)))


if __name__ == "__main__":
    main()
