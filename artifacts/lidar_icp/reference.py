"""Reference solution for the `lidar_icp` recon task (standalone: stdlib, numpy, scipy, laspy).

Reads one scenario JSON object on stdin, prints the output JSON object on stdout.
It implements the oracle's recipe (the docstring of ``lidar_icp`` in ``__init__.py``),
stage by stage:

1. read both LAS scans on their millimetre grid (each in its own scanner frame);
2. range-normalised statistical outlier removal per scan (noise);
3. a ground plane fitted to per-cell lowest points with refits until its support
   repeats, and ground points within a height band of it;
4. voxel down-sampling per class on an origin-anchored grid, keeping the real point
   nearest each voxel's centroid;
5. normals from exact k-nearest neighbourhoods; coarse yaw from the folded histogram
   of vertical-surface normal azimuths, the 90-degree ambiguity and the shift settled
   by a 2-D occupancy correlation and a 3-D overlap count;
6. point-to-plane ICP in yaw + translation with Tukey weights on a MAD scale, ground
   down-weighted; fit statistics before and after;
7. change between the scans: each thinned non-ground point, moved into the other
   station's frame by the final pose, looked up in that station's returns by direction
   (the median range within a cone), so a surface the other station sees through
   vanished or appeared, and one behind a nearer surface is occluded.
"""
from __future__ import annotations

import datetime
import json
import math
import sys
from fractions import Fraction
from typing import Any

import laspy
import numpy as np
from scipy.spatial import cKDTree

LAS_SCALE = 0.001
LAS_DATE = datetime.date(2024, 1, 1)
NOISE, GROUND, OTHER = 7, 2, 1          # ASPRS codes: low point (noise), ground, unclassified

# stage 2: statistical outlier removal
SOR_K = 8                # neighbours, the point itself excluded
SOR_ALPHA = 2.0          # noise: statistic > mean + SOR_ALPHA * std (population std)
# stage 3: ground
GROUND_CELL_MM = 1000    # cells of the lowest-point grid (millimetres), anchored at the origin
GROUND_FIT_BAND = 0.30   # cell minima within this of the current plane are refitted, m
GROUND_MAX_FITS = 10
GROUND_BAND = 0.15       # |height above the plane| <= this is ground, m
# stage 5: normals and coarse alignment
NORMAL_K = 10            # neighbours, the point itself included
VERTICAL_NZ = 0.25       # |n_z| <= this: a vertical surface
HIST_BINS = 90           # 1-degree bins of the normal azimuth folded modulo 90 degrees
COARSE_CELL = 0.5        # m: 2-D occupancy cells, and the 3-D overlap distance
COARSE_REACH = 30        # cells searched either way on each axis
COARSE_SHIFTS = 5        # best shifts per yaw candidate checked in 3-D
# stage 6: fine registration
GROUND_WEIGHT = 0.2
MAD_TO_SIGMA = 1.4826
TUKEY_C = 4.685
SCALE_FLOOR = 0.01       # m: the ranging accuracy; a tighter scale would trust noise
MIN_PAIRS = 6
MAX_ITERATIONS = 30
STOP_YAW = 1e-6          # rad
STOP_SHIFT = 1e-5        # m
# stage 7: change between the scans
VIEW_CONE_DEG = 2.0      # returns within this angle of a point's direction are its look-up
CHANGE_MARGIN = 0.5      # m: the median range beyond (before) the point by more: seen through (occluded)


# --------------------------------------------------------------------------- LAS I/O
def read_scan(path: str) -> dict[str, np.ndarray]:
    """Points of a LAS file as exact millimetre integers (and metres), with intensity
    and GPS time. The files hold whole millimetres, so X * scale + offset is rounded to
    the millimetre it encodes."""
    las = laspy.read(path)
    raw = np.stack([np.asarray(las.X), np.asarray(las.Y), np.asarray(las.Z)], axis=1).astype(np.int64)
    scales = np.asarray(las.header.scales, dtype=np.float64)
    offsets = np.asarray(las.header.offsets, dtype=np.float64)
    mm = np.rint((raw * scales + offsets) * 1000.0).astype(np.int64)
    return {"mm": mm, "xyz": mm / 1000.0, "intensity": np.asarray(las.intensity).astype(np.int64),
            "gps_time": np.asarray(las.gps_time, dtype=np.float64)}


def write_las(path: Any, xyz: np.ndarray, intensity: np.ndarray, *, classification: Any = None,
              gps_time: Any = None, point_source_id: int | None = None, software: str = "recon lidar_icp") -> None:
    """LAS 1.2 point format 3, scale 0.001, offsets floor(min) per axis; byte-stable
    (fixed creation date and header strings)."""
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
    las.X, las.Y, las.Z = raw[:, 0], raw[:, 1], raw[:, 2]
    las.intensity = np.clip(np.rint(np.asarray(intensity, dtype=np.float64)), 0, 65535).astype(np.uint16)
    n = len(xyz)
    las.return_number = np.ones(n, dtype=np.uint8)
    las.number_of_returns = np.ones(n, dtype=np.uint8)
    if classification is not None:
        las.classification = np.asarray(classification, dtype=np.uint8)
    if gps_time is not None:
        las.gps_time = np.asarray(gps_time, dtype=np.float64)
    if point_source_id is not None:
        las.point_source_id = np.full(n, int(point_source_id), dtype=np.uint16)
    las.write(str(path))


# ------------------------------------------------------- stage 2: outlier removal
def outlier_mask(xyz: np.ndarray) -> tuple[np.ndarray, dict[str, float]]:
    """Noise: the mean distance to the SOR_K nearest other points divided by the range
    to the scanner (the origin) exceeds mean + SOR_ALPHA * std of that statistic.

    Point spacing of a scanner grows linearly with range, so the ratio is comparable
    near and far, where a plain distance would flag every far return."""
    n = len(xyz)
    if n <= SOR_K:
        return np.zeros(n, dtype=bool), {"statistic_mean": 0.0, "statistic_std": 0.0, "cutoff": 0.0}
    dist, _ = cKDTree(xyz).query(xyz, k=SOR_K + 1)
    rng = np.maximum(np.linalg.norm(xyz, axis=1), 1e-3)
    stat = dist[:, 1:].mean(axis=1) / rng
    mean, std = float(stat.mean()), float(stat.std())
    cutoff = mean + SOR_ALPHA * std
    return stat > cutoff, {"statistic_mean": mean, "statistic_std": std, "cutoff": cutoff}


# ---------------------------------------------------------------- stage 3: ground
def lowest_per_cell(mm: np.ndarray) -> np.ndarray:
    """Index of the lowest point of every occupied GROUND_CELL_MM cell (ties: earliest)."""
    cells = np.floor_divide(mm[:, :2], GROUND_CELL_MM)
    order = np.lexsort((np.arange(len(mm)), mm[:, 2], cells[:, 1], cells[:, 0]))
    c = cells[order]
    first = np.ones(len(order), dtype=bool)
    first[1:] = np.any(c[1:] != c[:-1], axis=1)
    return order[first]


def fit_ground(xyz: np.ndarray, mm: np.ndarray) -> tuple[np.ndarray, dict[str, Any]]:
    """Plane z = a x + b y + c: start level at the median height of the cell minima,
    then least-squares refits to the minima within GROUND_FIT_BAND of the current plane
    until that set repeats (at most GROUND_MAX_FITS fits)."""
    if len(xyz) == 0:
        return np.zeros(3), {"cells": 0, "cells_fitted": 0, "fits": 0, "plane": [0.0, 0.0, 0.0]}
    lows = xyz[lowest_per_cell(mm)]
    plane = np.array([0.0, 0.0, float(np.median(lows[:, 2]))])
    used: np.ndarray | None = None
    fits = 0
    while fits < GROUND_MAX_FITS:
        keep = np.abs(height_above(plane, lows)) <= GROUND_FIT_BAND
        if (used is not None and np.array_equal(keep, used)) or keep.sum() < 3:
            break
        design = np.column_stack([lows[keep, 0], lows[keep, 1], np.ones(int(keep.sum()))])
        plane = np.linalg.lstsq(design, lows[keep, 2], rcond=None)[0]
        used = keep
        fits += 1
    info = {"cells": int(len(lows)), "cells_fitted": int(0 if used is None else used.sum()), "fits": fits,
            "plane": [float(v) for v in plane]}
    return plane, info


def height_above(plane: np.ndarray, xyz: np.ndarray) -> np.ndarray:
    return xyz[:, 2] - (plane[0] * xyz[:, 0] + plane[1] * xyz[:, 1] + plane[2])


# ----------------------------------------------------------- stage 4: down-sampling
def voxel_keys(mm: np.ndarray, voxel_size: float) -> np.ndarray:
    """floor(coordinate / voxel) per axis, exactly: millimetre integers against the
    voxel edge taken as the exact decimal written in the scenario JSON (the shortest
    repr of the float). The grid is anchored at the scanner origin."""
    v = Fraction(repr(float(voxel_size))) * 1000          # voxel edge in millimetres
    num, den = v.denominator, v.numerator                 # index = floor(mm * num / den)
    if int(np.abs(mm).max(initial=0)) * num < 2 ** 62:
        return np.floor_divide(mm * num, den)
    return np.array([[(int(c) * num) // den for c in row] for row in mm], dtype=np.int64).reshape(-1, 3)


def downsample(mm: np.ndarray, idx: np.ndarray, voxel_size: float) -> np.ndarray:
    """Per occupied voxel, the candidate point nearest the voxel's centroid (exactly:
    n^2 |p - centroid|^2 = |n p - sum|^2 in integers; ties: earliest in the file).
    ``idx`` are the candidates (indices into ``mm``); the result is in voxel-key order
    (ix, then iy, then iz)."""
    if len(idx) == 0:
        return np.zeros(0, dtype=np.int64)
    keys = voxel_keys(mm[idx], voxel_size)
    lo = keys.min(axis=0)
    span = keys.max(axis=0) - lo + 1
    code = ((keys[:, 0] - lo[0]) * span[1] + (keys[:, 1] - lo[1])) * span[2] + (keys[:, 2] - lo[2])
    _, inverse, counts = np.unique(code, return_inverse=True, return_counts=True)
    inverse = inverse.reshape(-1)
    sums = np.zeros((len(counts), 3), dtype=np.int64)
    np.add.at(sums, inverse, mm[idx])
    dev = counts[inverse, None] * mm[idx] - sums[inverse]
    score = np.einsum("ij,ij->i", dev, dev)
    order = np.lexsort((idx, score, inverse))
    first = np.ones(len(order), dtype=bool)
    first[1:] = inverse[order][1:] != inverse[order][:-1]
    return idx[order[first]]


# ----------------------------------------------------------------- stage 5: normals
def knn_exact(mm: np.ndarray, k: int) -> np.ndarray:
    """The k nearest points of every point (itself included) by exact squared distance
    in mm^2; ties broken by the neighbour's (x, y, z), so the set never depends on the
    search structure."""
    n = len(mm)
    k = min(k, n)
    rank = np.empty(n, dtype=np.int64)
    rank[np.lexsort((mm[:, 2], mm[:, 1], mm[:, 0]))] = np.arange(n)
    tree = cKDTree(mm.astype(np.float64))
    out = np.empty((n, k), dtype=np.int64)
    extra = 6
    todo = np.arange(n)
    while len(todo):
        q = min(k + extra, n)
        _, cand = tree.query(mm[todo].astype(np.float64), k=q)
        cand = cand.reshape(len(todo), q)
        diff = mm[cand] - mm[todo][:, None, :]
        d2 = np.einsum("ijk,ijk->ij", diff, diff)
        order = np.argsort(d2 * n + rank[cand], axis=1)   # exact: d2 < 2**40 and n < 2**20
        ranked = np.take_along_axis(cand, order, axis=1)
        d2s = np.take_along_axis(d2, order, axis=1)
        # a tie with the k-th may reach past the candidates: ask those rows for more
        again = (d2s[:, k - 1] >= d2s[:, -1]) if q < n else np.zeros(len(todo), dtype=bool)
        out[todo[~again]] = ranked[~again, :k]
        todo = todo[again]
        extra *= 4
    return out


def normals(mm: np.ndarray) -> np.ndarray:
    """Unit normals: eigenvector of the smallest eigenvalue of the covariance of the
    NORMAL_K exact neighbours, turned to face the scanner origin."""
    if len(mm) < 3:
        return np.tile([0.0, 0.0, 1.0], (len(mm), 1))
    xyz = mm / 1000.0
    pts = xyz[knn_exact(mm, NORMAL_K)]
    centred = pts - pts.mean(axis=1, keepdims=True)
    _, vec = np.linalg.eigh(np.einsum("nki,nkj->nij", centred, centred))
    nrm = vec[:, :, 0]
    nrm[np.einsum("ij,ij->i", nrm, xyz) > 0] *= -1.0
    return nrm


# ------------------------------------------------------------------ stage 5: coarse
def azimuth_histogram(nrm: np.ndarray, xyz: np.ndarray) -> np.ndarray:
    """Vertical-surface normals per 1-degree bin of azimuth folded mod 90, each weighted
    by its point's squared horizontal range: a scanner's sample covers an area growing
    with range squared, so the weight stands for surface area, and the dense patch of a
    nearby car cannot outvote a facade."""
    vertical = np.abs(nrm[:, 2]) <= VERTICAL_NZ
    az = np.degrees(np.arctan2(nrm[vertical, 1], nrm[vertical, 0]))
    bins = np.floor(np.mod(az, 90.0)).astype(np.int64) % HIST_BINS
    weight = xyz[vertical, 0] ** 2 + xyz[vertical, 1] ** 2
    return np.bincount(bins, weights=weight, minlength=HIST_BINS)


def dominant_azimuth(hist: np.ndarray) -> float:
    """Centre of the peak bin of the circularly [1, 2, 1]-smoothed histogram (first peak)."""
    smooth = np.roll(hist, 1) + 2 * hist + np.roll(hist, -1)
    return float(np.argmax(smooth)) + 0.5


def wrap180(deg: float) -> float:
    return (deg + 180.0) % 360.0 - 180.0


def rot_z(yaw: float) -> np.ndarray:
    c, s = math.cos(yaw), math.sin(yaw)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def occupied_cells(xy: np.ndarray) -> np.ndarray:
    """Distinct (floor(x / COARSE_CELL), floor(y / COARSE_CELL)) cells, anchored at the origin."""
    cells = np.floor(xy / COARSE_CELL).astype(np.int64)
    if len(cells) == 0:
        return cells.reshape(0, 2)
    lo = cells.min(axis=0)
    span = int(cells[:, 1].max() - lo[1]) + 1
    code = np.unique((cells[:, 0] - lo[0]) * span + (cells[:, 1] - lo[1]))
    return np.column_stack([code // span + lo[0], code % span + lo[1]])


def best_shifts(src_xy: np.ndarray, tgt_xy: np.ndarray) -> list[tuple[int, int, int]]:
    """The COARSE_SHIFTS best cell shifts d (|dx|, |dy| <= COARSE_REACH), as (shared,
    dx, dy): shared = occupied source cells c whose cell c + d is occupied in the target.
    Order: most shared, then smallest dx^2 + dy^2, then smallest dx, then smallest dy."""
    cs, ct = occupied_cells(src_xy), occupied_cells(tgt_xy)
    span = 2 * COARSE_REACH + 1
    acc = np.zeros((span, span), dtype=np.int64)
    d = (ct[None, :, :] - cs[:, None, :]).reshape(-1, 2)
    ok = (np.abs(d[:, 0]) <= COARSE_REACH) & (np.abs(d[:, 1]) <= COARSE_REACH)
    np.add.at(acc, (d[ok, 0] + COARSE_REACH, d[ok, 1] + COARSE_REACH), 1)
    dx, dy = np.meshgrid(np.arange(-COARSE_REACH, COARSE_REACH + 1), np.arange(-COARSE_REACH, COARSE_REACH + 1),
                         indexing="ij")
    dx, dy, acc = dx.ravel(), dy.ravel(), acc.ravel()
    order = np.lexsort((dy, dx, dx * dx + dy * dy, -acc))[:COARSE_SHIFTS]
    return [(int(acc[i]), int(dx[i]), int(dy[i])) for i in order]


def coarse_align(src: dict[str, Any], tgt: dict[str, Any]) -> dict[str, Any]:
    """Yaw candidates phi_t - phi_s + 90 m (m = 0..3); per candidate the best 2-D shifts;
    the (candidate, shift) with the most non-ground source points within COARSE_CELL of a
    non-ground target point wins (ties: the earlier m, then the better-ranked shift)."""
    hs = azimuth_histogram(src["normals"][src["nonground"]], src["xyz"][src["nonground"]])
    ht = azimuth_histogram(tgt["normals"][tgt["nonground"]], tgt["xyz"][tgt["nonground"]])
    phi_s, phi_t = dominant_azimuth(hs), dominant_azimuth(ht)
    s_xyz = src["xyz"][src["nonground"]]
    t_xyz = tgt["xyz"][tgt["nonground"]]
    ps, pt = src["plane"], tgt["plane"]
    candidates: list[dict[str, Any]] = []
    t_tree = cKDTree(t_xyz) if len(t_xyz) else None
    for m in range(4):
        yaw = wrap180(phi_t - phi_s + 90.0 * m)
        turned = s_xyz @ rot_z(math.radians(yaw)).T
        shifts = best_shifts(turned[:, :2], t_xyz[:, :2]) if t_tree is not None and len(s_xyz) else [(0, 0, 0)]
        for rank, (shared, dx, dy) in enumerate(shifts):
            tx, ty = dx * COARSE_CELL, dy * COARSE_CELL
            # the level of the target's ground under the source scanner fixes the height
            t = np.array([tx, ty, pt[0] * tx + pt[1] * ty + pt[2] - ps[2]])
            score = 0
            if t_tree is not None and len(s_xyz):
                dist, _ = t_tree.query(turned + t, distance_upper_bound=COARSE_CELL * (1.0 + 1e-9))
                score = int(np.count_nonzero(dist <= COARSE_CELL))
            candidates.append({"yaw_deg": yaw, "rank": rank, "shared_cells": shared, "shift_cells": [dx, dy],
                               "translation_m": [float(v) for v in t], "score": score})
    best = max(range(len(candidates)), key=lambda i: (candidates[i]["score"], -i))
    c = candidates[best]
    return {"hist_source": hs, "hist_target": ht, "phi_source": phi_s, "phi_target": phi_t,
            "candidates": candidates, "chosen": best, "yaw": math.radians(c["yaw_deg"]),
            "t": np.array(c["translation_m"])}


# -------------------------------------------------------------------- stage 6: fine
def pairs(tree: cKDTree, moved: np.ndarray, tgt_xyz: np.ndarray, tgt_n: np.ndarray,
          gate: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Nearest target point of each moved source point within the gate: (paired,
    index, signed point-to-plane residual along the target normal; 0 when unpaired).
    The search is bounded just past the gate (the nearest point inside it is the same)."""
    dist, j = tree.query(moved, distance_upper_bound=gate * (1.0 + 1e-9))
    gated = dist <= gate
    j = np.where(gated, j, 0)
    r = np.where(gated, np.einsum("ij,ij->i", tgt_n[j], moved - tgt_xyz[j]), 0.0)
    return gated, j, r


def robust_scale(r: np.ndarray) -> tuple[float, float]:
    """(scale, Tukey cut-off): scale = max(1.4826 median |r|, SCALE_FLOOR)."""
    scale = max(MAD_TO_SIGMA * float(np.median(np.abs(r))), SCALE_FLOOR) if len(r) else SCALE_FLOOR
    return scale, TUKEY_C * scale


def fine_icp(src_xyz: np.ndarray, src_ground: np.ndarray, tgt_xyz: np.ndarray, tgt_n: np.ndarray,
             yaw0: float, t0: np.ndarray, gate: float) -> tuple[float, np.ndarray, int, bool, list[dict[str, Any]]]:
    """Point-to-plane ICP over yaw and translation, Tukey-weighted, from the coarse pose."""
    yaw, t = yaw0, t0.copy()
    log: list[dict[str, Any]] = []
    if len(src_xyz) == 0 or len(tgt_xyz) == 0:
        return yaw, t, 0, False, log
    tree = cKDTree(tgt_xyz)
    cls_w = np.where(src_ground, GROUND_WEIGHT, 1.0)
    converged = False
    iterations = 0
    while iterations < MAX_ITERATIONS:
        moved = src_xyz @ rot_z(yaw).T + t
        gated, j, r = pairs(tree, moved, tgt_xyz, tgt_n, gate)
        if gated.sum() < MIN_PAIRS:
            break
        # the scale comes from the non-ground pairs: the flat ground fits well in any
        # horizontal misalignment and would shrink it too early
        scale, cut = robust_scale(r[gated & ~src_ground])
        rg = r[gated]
        u = rg / cut
        w = np.where(np.abs(u) < 1.0, (1.0 - u * u) ** 2, 0.0) * cls_w[gated]
        if np.count_nonzero(w) < MIN_PAIRS:
            break
        p, n = moved[gated], tgt_n[j[gated]]
        jac = np.column_stack([n[:, 1] * p[:, 0] - n[:, 0] * p[:, 1], n[:, 0], n[:, 1], n[:, 2]])
        try:
            delta = np.linalg.solve(jac.T @ (jac * w[:, None]), -jac.T @ (w * rg))
        except np.linalg.LinAlgError:
            break
        if not np.all(np.isfinite(delta)):
            break
        yaw += float(delta[0])
        t = rot_z(float(delta[0])) @ t + delta[1:]
        iterations += 1
        step = float(np.linalg.norm(delta[1:]))
        log.append({"iteration": iterations, "pairs": int(gated.sum()), "scale_m": scale,
                    "weighted_pairs": int(np.count_nonzero(w)), "weight_sum": float(w.sum()),
                    "rms_residual_m": math.sqrt(float(np.mean(rg * rg))),
                    "step_yaw_deg": math.degrees(float(delta[0])), "step_shift_m": step})
        if abs(float(delta[0])) < STOP_YAW and step < STOP_SHIFT:
            converged = True
            break
    return yaw, t, iterations, converged, log


def fit_stats(src_xyz: np.ndarray, src_ground: np.ndarray, tgt_xyz: np.ndarray, tgt_n: np.ndarray,
              yaw: float, t: np.ndarray, gate: float) -> dict[str, Any]:
    """Over the non-ground source points: share paired within the gate, RMS residual of
    those pairs, and how many of them fall inside the Tukey cut-off."""
    ng = ~src_ground
    n_ng = int(ng.sum())
    if n_ng == 0 or len(tgt_xyz) == 0:
        return {"fitness": 0.0, "rmse": 0.0, "robust_inliers": 0}
    moved = src_xyz @ rot_z(yaw).T + t
    gated, _, r = pairs(cKDTree(tgt_xyz), moved, tgt_xyz, tgt_n, gate)
    sel = gated & ng
    fitness = float(sel.sum()) / n_ng
    rmse = math.sqrt(float(np.mean(r[sel] ** 2))) if sel.any() else 0.0
    _, cut = robust_scale(r[sel])
    return {"fitness": fitness, "rmse": rmse, "robust_inliers": int(np.count_nonzero(sel & (np.abs(r) < cut)))}


# --------------------------------------------------------------------- stage 7: change
def look_up(points: np.ndarray, view: np.ndarray) -> tuple[list[str], np.ndarray]:
    """How a station sees ``points`` (in its own frame) against ``view``, its own non-noise
    returns: the returns within VIEW_CONE_DEG of a point's direction give the median range
    m; no such return: unseen; m > range + CHANGE_MARGIN: seen through (the surface is not
    there for this station); m < range - CHANGE_MARGIN: occluded; otherwise confirmed.
    Returns each point's verdict and m (nan when unseen)."""
    rho = np.linalg.norm(points, axis=1)
    view_rng = np.linalg.norm(view, axis=1)
    ok = view_rng > 0.0
    view_rng = view_rng[ok]
    verdicts = ["unseen"] * len(points)
    medians = np.full(len(points), np.nan)
    if len(points) == 0 or len(view_rng) == 0:
        return verdicts, medians
    tree = cKDTree(view[ok] / view_rng[:, None])
    chord = 2.0 * math.sin(math.radians(VIEW_CONE_DEG) / 2.0)
    near = tree.query_ball_point(points / np.maximum(rho, 1e-12)[:, None], chord)
    for i, (r, idx) in enumerate(zip(rho, near)):
        if r <= 0.0 or not idx:
            continue
        m = float(np.median(view_rng[idx]))
        medians[i] = m
        verdicts[i] = "through" if m > r + CHANGE_MARGIN else "occluded" if m < r - CHANGE_MARGIN else "confirmed"
    return verdicts, medians


def change(src: dict[str, Any], tgt: dict[str, Any], yaw: float, t: np.ndarray) -> dict[str, Any]:
    """Each scan's thinned non-ground points as the other station sees them at the pose
    (source -> target: p' = Rz(yaw) p + t; target -> source: the inverse)."""
    rot = rot_z(yaw)
    by_target = look_up(src["xyz"][src["nonground"]] @ rot.T + t, tgt["view"])
    by_source = look_up((tgt["xyz"][tgt["nonground"]] - t) @ rot, src["view"])
    return {"counts": {"vanished_points": by_target[0].count("through"),
                       "appeared_points": by_source[0].count("through"),
                       "source_occluded": by_target[0].count("occluded"),
                       "target_occluded": by_source[0].count("occluded"),
                       "source_unseen": by_target[0].count("unseen"),
                       "target_unseen": by_source[0].count("unseen")},
            "source": by_target, "target": by_source}


# ---------------------------------------------------------------------- the pipeline
def prepare(path: str, voxel: float) -> dict[str, Any]:
    """Stages 1-5 (without the coarse alignment) for one scan."""
    scan = read_scan(path)
    mm, xyz = scan["mm"], scan["xyz"]
    noise, sor = outlier_mask(xyz)
    keep = np.flatnonzero(~noise)
    plane, ground_info = fit_ground(xyz[keep], mm[keep])
    cls = np.full(len(xyz), OTHER, dtype=np.int64)
    cls[noise] = NOISE
    cls[(~noise) & (np.abs(height_above(plane, xyz)) <= GROUND_BAND)] = GROUND
    other = downsample(mm, np.flatnonzero(cls == OTHER), voxel)
    ground = downsample(mm, np.flatnonzero(cls == GROUND), voxel)
    ds = np.concatenate([other, ground]).astype(np.int64)
    ground_mask = np.concatenate([np.zeros(len(other), dtype=bool), np.ones(len(ground), dtype=bool)])
    return {"scan": scan, "classification": cls, "sor": sor, "ground": ground_info, "plane": plane,
            "index": ds, "ground_mask": ground_mask, "nonground": ~ground_mask, "xyz": xyz[ds],
            "view": xyz[~noise],
            "normals": normals(mm[ds])}


def process(scenario: dict) -> tuple[dict[str, Any], dict[str, Any]]:
    """All stages; returns (outputs, everything the evidence reports)."""
    p = scenario["parameters"]
    voxel = float(p["voxel_size"])
    gate = float(p["max_correspondence_m"])
    src = prepare(scenario["inputs"]["source"], voxel)
    tgt = prepare(scenario["inputs"]["target"], voxel)
    coarse = coarse_align(src, tgt)
    args = (src["xyz"], src["ground_mask"], tgt["xyz"], tgt["normals"])
    before = fit_stats(*args, coarse["yaw"], coarse["t"], gate)
    yaw, t, iterations, converged, log = fine_icp(*args, coarse["yaw"], coarse["t"], gate)
    after = fit_stats(*args, yaw, t, gate)
    changes = change(src, tgt, yaw, t)
    a, b, c = (float(v) for v in src["plane"])
    out = {
        "source_noise": int(np.count_nonzero(src["classification"] == NOISE)),
        "target_noise": int(np.count_nonzero(tgt["classification"] == NOISE)),
        "source_ground": int(np.count_nonzero(src["classification"] == GROUND)),
        "target_ground": int(np.count_nonzero(tgt["classification"] == GROUND)),
        "ground_tilt_deg": math.degrees(math.atan(math.hypot(a, b))),
        "scanner_height_m": -c,
        "source_points": int(len(src["index"])),
        "target_points": int(len(tgt["index"])),
        "coarse_yaw_deg": float(wrap180(math.degrees(coarse["yaw"]))),
        "coarse_shift_m": float(np.linalg.norm(coarse["t"])),
        "fitness_before": before["fitness"],
        "rmse_before": before["rmse"],
        "yaw_deg": float(wrap180(math.degrees(yaw))),
        "tx": float(t[0]),
        "ty": float(t[1]),
        "tz": float(t[2]),
        "fitness": after["fitness"],
        "rmse": after["rmse"],
        "robust_inliers": after["robust_inliers"],
        "iterations": int(iterations),
        "converged": bool(converged),
        **changes["counts"],
    }
    detail = {"source": src, "target": tgt, "coarse": coarse, "before": before, "after": after, "log": log,
              "converged": converged, "change": changes}
    return out, detail


def solve(scenario: dict) -> dict:
    return process(scenario)[0]


def main() -> None:
    scenario = json.load(sys.stdin)
    print(json.dumps(solve(scenario)))


if __name__ == "__main__":
    main()
