"""Built-in oracle `lidar_icp`: clean, classify, thin and register two terrestrial LiDAR scans, and find what changed."""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from recon import Angle, Bool, Evidence, Exact, Float, Int, Integer, Number, Seed, oracle

# ------------------------------------------------------------------ the synthetic scene
# World frame = the frame of scanner 1 (source): optical centre at the origin, z up.
MAX_RANGE = 30.0             # m, farthest return a pulse can give
MIN_RANGE = 0.6              # m, nearer hits are blanked by the instrument
ELEVATION = (-40.0, 30.0)    # degrees, the vertical field of view
GROUND_HALF = 14.0           # m, the paved area is |x|, |y| <= this
# mean intensity per surface: ground, wall, parked box, pole, vehicle, multipath ghost, dust
INTENSITY = (420.0, 1700.0, 2500.0, 3300.0, 2500.0, 300.0, 150.0)


def _rz(a: float) -> Any:
    import numpy as np

    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


class _Ground:
    """z = c0 + sx x + sy y + a sin(x / lx + ph) cos(y / ly): a sloping, gently undulating street."""

    def __init__(self, c0: float, sx: float, sy: float, und: tuple[float, float, float, float]) -> None:
        self.c0, self.sx, self.sy, self.und = c0, sx, sy, und

    def __call__(self, x: Any, y: Any) -> Any:
        import numpy as np

        a, lx, ly, ph = self.und
        return self.c0 + self.sx * x + self.sy * y + a * np.sin(x / lx + ph) * np.cos(y / ly)


def _world(rng: Any, params: dict[str, Any]) -> dict[str, Any]:
    """The street: an L-shaped facade, parked cars, poles, one vehicle that may drive
    off, and the second station `station_distance_m` from the first on the street side."""
    import numpy as np

    h_a = rng.uniform(1.4, 1.9)
    slope = rng.uniform(-0.035, 0.035, 2)
    ground = _Ground(-h_a, float(slope[0]), float(slope[1]),
                     (rng.uniform(0.02, 0.05), rng.uniform(2.5, 4.0), rng.uniform(3.0, 5.0), rng.uniform(0, 2 * np.pi)))
    cx, cy = -rng.uniform(5.0, 8.0), rng.uniform(5.0, 8.0)
    la, lb, wall_h = rng.uniform(11.0, 17.0), rng.uniform(9.0, 15.0), rng.uniform(4.0, 8.0)
    walls = [(np.array([cx, cy]), np.array([1.0, 0.0]), la, wall_h),
             (np.array([cx, cy]), np.array([0.0, -1.0]), lb, wall_h)]
    d = float(params["station_distance_m"])
    bx = by = 0.0
    for _ in range(1000):
        beta = rng.uniform(0.0, 2 * np.pi)
        bx, by = d * math.cos(beta), d * math.sin(beta)
        if bx > cx + 2.0 and by < cy - 2.0 and abs(bx) < 10.0 and abs(by) < 10.0:
            break
    heading = rng.uniform(-np.pi, np.pi)
    h_b = rng.uniform(1.4, 1.9)
    stations = [np.zeros(3), np.array([bx, by, float(ground(bx, by)) + h_b])]

    def free(px: float, py: float, r: float) -> bool:
        return all(math.hypot(px - s[0], py - s[1]) > r for s in stations)

    boxes: list[tuple[Any, float, float, float, float]] = []
    n_boxes = int(rng.integers(3, 6))
    for _ in range(1000):
        if len(boxes) == n_boxes:
            break
        px, py = rng.uniform(cx + 2.5, 11.0), rng.uniform(-11.0, cy - 2.5)
        if not free(px, py, 5.0):
            continue
        # parked along the street (parallel to a wall); the first one stands askew
        yaw = (rng.uniform(0, np.pi) if not boxes
               else 0.5 * np.pi * int(rng.integers(0, 2)) + math.radians(rng.uniform(-4.0, 4.0)))
        boxes.append((np.array([px, py]), yaw, rng.uniform(3.5, 5.5), rng.uniform(1.7, 2.3), rng.uniform(1.3, 2.6)))
    poles: list[tuple[Any, float, float]] = []
    n_poles = int(rng.integers(2, 5))
    for _ in range(1000):
        if len(poles) == n_poles:
            break
        px, py = rng.uniform(cx + 1.0, 11.0), rng.uniform(-11.0, cy - 1.0)
        if free(px, py, 1.5):
            poles.append((np.array([px, py]), rng.uniform(0.10, 0.2), rng.uniform(3.5, 7.0)))
    px = py = 0.0
    for _ in range(1000):
        px, py = rng.uniform(cx + 3.0, 9.0), rng.uniform(-9.0, cy - 3.0)
        if free(px, py, 5.0):
            break
    myaw = 0.5 * np.pi * int(rng.integers(0, 2)) + math.radians(rng.uniform(-3.0, 3.0))
    step = rng.uniform(2.5, 6.0) * rng.choice([-1.0, 1.0])
    return {"ground": ground, "walls": walls, "boxes": boxes, "poles": poles,
            "mover": (np.array([px, py]), myaw, 4.4, 1.9, 1.6, step), "stations": stations, "heading": heading}


def _hit_ground(o: Any, d: Any, g: _Ground) -> Any:
    import numpy as np

    denom = d[:, 2] - g.sx * d[:, 0] - g.sy * d[:, 1]
    t = (g.c0 + g.sx * o[0] + g.sy * o[1] - o[2]) / denom
    for _ in range(4):  # onto the undulating surface (its gradient is small)
        t = t + (g(o[0] + t * d[:, 0], o[1] + t * d[:, 1]) - (o[2] + t * d[:, 2])) / denom
    x, y = o[0] + t * d[:, 0], o[1] + t * d[:, 1]
    return np.where((t > 0) & np.isfinite(t) & (np.abs(x) <= GROUND_HALF) & (np.abs(y) <= GROUND_HALF), t, np.inf)


def _hit_wall(o: Any, d: Any, wall: Any, g: _Ground) -> Any:
    import numpy as np

    p0, u, length, height = wall
    nx, ny = -u[1], u[0]
    t = ((p0[0] - o[0]) * nx + (p0[1] - o[1]) * ny) / (d[:, 0] * nx + d[:, 1] * ny)
    x, y, z = o[0] + t * d[:, 0], o[1] + t * d[:, 1], o[2] + t * d[:, 2]
    s = (x - p0[0]) * u[0] + (y - p0[1]) * u[1]
    base = g(x, y)
    ok = (t > 0) & (s >= 0) & (s <= length) & (z >= base - 0.3) & (z <= base + height)
    return np.where(ok, t, np.inf)


def _hit_box(o: Any, d: Any, box: Any, g: _Ground) -> Any:
    import numpy as np

    c, yaw, length, width, height = box[:5]
    base = float(g(c[0], c[1]))
    r = _rz(-yaw)
    lo_ = r @ (o - np.array([c[0], c[1], base]))
    ld = d @ r.T
    centre = np.array([0.0, 0.0, height / 2 - 0.15])   # the body reaches 0.15 m into the ground
    half = np.array([length / 2, width / 2, height / 2 + 0.15])
    t1 = (centre - half - lo_) / ld
    t2 = (centre + half - lo_) / ld
    tmin = np.nanmax(np.minimum(t1, t2), axis=1)
    tmax = np.nanmin(np.maximum(t1, t2), axis=1)
    return np.where((tmax >= tmin) & (tmin > 0), tmin, np.inf)


def _hit_pole(o: Any, d: Any, pole: Any, g: _Ground) -> Any:
    import numpy as np

    c, rad, height = pole
    base = float(g(c[0], c[1]))
    ox, oy = o[0] - c[0], o[1] - c[1]
    a = d[:, 0] ** 2 + d[:, 1] ** 2
    b = 2 * (ox * d[:, 0] + oy * d[:, 1])
    disc = b * b - 4 * a * (ox * ox + oy * oy - rad * rad)
    t = (-b - np.sqrt(disc)) / (2 * a)
    z = o[2] + t * d[:, 2]
    return np.where((disc > 0) & (t > 0) & (z >= base - 0.3) & (z <= base + height), t, np.inf)


def _scan(world: dict[str, Any], station: int, params: dict[str, Any], rng: Any) -> dict[str, Any]:
    """Cast the pulses of one station (a regular azimuth x elevation grid) into the scene;
    add range noise, multipath ghosts and dust; return points in the station's frame."""
    import numpy as np

    pulses = int(params["pulse_count"])
    sigma = float(params["noise_sigma"])
    bad = float(params["outlier_fraction"])
    o = world["stations"][station]
    heading = 0.0 if station == 0 else world["heading"]
    span = ELEVATION[1] - ELEVATION[0]
    n_el = max(8, int(round(math.sqrt(pulses * span / 360.0))))
    n_az = int(round(pulses / n_el))
    az = np.radians(rng.uniform(0.0, 360.0 / n_az) + np.arange(n_az) * 360.0 / n_az)
    el = np.radians(ELEVATION[0] + (np.arange(n_el) + 0.5) * span / n_el)
    a, e = (m.ravel() for m in np.meshgrid(az, el, indexing="ij"))   # the head turns; the mirror sweeps
    d = np.stack([np.cos(e) * np.cos(a), np.cos(e) * np.sin(a), np.sin(e)], axis=1) @ _rz(heading).T
    g = world["ground"]
    hits = [_hit_ground(o, d, g)] + [_hit_wall(o, d, w, g) for w in world["walls"]]
    kinds = [0] + [1] * len(world["walls"])
    hits += [_hit_box(o, d, b, g) for b in world["boxes"]]
    kinds += [2] * len(world["boxes"])
    hits += [_hit_pole(o, d, p, g) for p in world["poles"]]
    kinds += [3] * len(world["poles"])
    if params["moving_vehicle"]:
        c, yaw, length, width, height, step = world["mover"]
        if station == 1:  # it drove on along its heading between the scans
            c = c + step * np.array([math.cos(yaw), math.sin(yaw)])
        hits.append(_hit_box(o, d, (c, yaw, length, width, height), g))
        kinds.append(4)
    tt = np.stack(hits, axis=1)
    first = np.argmin(tt, axis=1)
    t = tt[np.arange(len(tt)), first]
    kind = np.asarray(kinds)[first]
    hit = np.isfinite(t) & (t <= MAX_RANGE) & (t >= MIN_RANGE)
    hit_idx = np.flatnonzero(hit)
    n_bad = int(round(bad * 0.5 * len(hit_idx)))
    ghost = rng.choice(hit_idx, size=min(n_bad, len(hit_idx)), replace=False)
    t[ghost] += rng.uniform(0.4, 3.5, len(ghost))       # multipath: the echo arrives late
    kind[ghost] = 5
    dust = rng.choice(len(t), size=min(n_bad, len(t)), replace=False)
    t_dust = rng.uniform(1.0, 14.0, len(dust))
    nearer = ~hit[dust] | (t_dust < t[dust])
    dust = dust[nearer]
    t[dust] = t_dust[nearer]
    kind[dust] = 6
    hit[dust] = True
    t = t + rng.normal(0.0, sigma, len(t))
    keep = np.flatnonzero(hit)
    local = (t[keep, None] * d[keep]) @ _rz(heading)   # world -> station frame: R(heading)^T (p - o)
    return {"xyz": local, "kind": kind[keep], "pulse": keep, "range": t[keep]}


def scene(params: dict[str, Any]) -> dict[str, Any]:
    """Both scans of the scenario (deterministic in params) and the true motion
    (yaw, translation) that maps source coordinates to target coordinates."""
    import numpy as np

    rng = np.random.default_rng(int(params["seed"]))
    with np.errstate(all="ignore"):   # rays parallel to a surface divide by zero: no hit
        world = _world(rng, params)
        scans = [_scan(world, st, params, rng) for st in (0, 1)]
    for s in scans:
        s["intensity"] = np.clip(np.asarray(INTENSITY)[s["kind"]] * np.minimum(1.0, np.sqrt(6.0 / np.maximum(s["range"], 1e-3)))
                                 * rng.normal(1.0, 0.08, len(s["kind"])), 1.0, 65535.0)
    rot = _rz(-world["heading"])
    return {"source": scans[0], "target": scans[1], "yaw_deg": math.degrees(-world["heading"]),
            "translation": -rot @ world["stations"][1]}


def make_inputs(params: dict[str, Any], directory: Path) -> None:
    """Write source.las and target.las (LAS 1.2, point format 3, 1 mm scale)."""
    from . import reference

    sc = scene(params)
    for station, name in ((1, "source"), (2, "target")):
        s = sc[name]
        reference.write_las(Path(directory) / f"{name}.las", s["xyz"], s["intensity"],
                            gps_time=s["pulse"] * 2e-5 + 600.0 * (station - 1), point_source_id=station,
                            software=f"recon lidar_icp station {station}")


# ------------------------------------------------------------------------ the evidence
def _classified(src_path: Path, dest: Path, classification: Any) -> None:
    import laspy
    import numpy as np

    las = laspy.read(str(src_path))
    las.classification = np.asarray(classification, dtype=np.uint8)
    las.write(str(dest))


def _scan_counts(detail: dict[str, Any], name: str) -> dict[str, Any]:
    import numpy as np

    s = detail[name]
    cls = s["classification"]
    return {"points": int(len(cls)), "flagged": int(np.count_nonzero(cls == 7)),
            "ground": int(np.count_nonzero(cls == 2)),
            "thinned": {"points": int(len(s["index"])), "ground": int(s["ground_mask"].sum()),
                        "other": int((~s["ground_mask"]).sum())}}


def _sig(value: Any, digits: int = 4) -> Any:
    """Floats (also inside lists and dicts) to ``digits`` significant digits."""
    if isinstance(value, float):
        return float(f"{value:.{digits}g}")
    if isinstance(value, list):
        return [_sig(v, digits) for v in value]
    if isinstance(value, dict):
        return {k: _sig(v, digits) for k, v in value.items()}
    return value


def _stage_summary(detail: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
    """Per-stage aggregates (the summary level): what each stage produced, not how."""
    co = detail["coarse"]
    chosen = co["candidates"][co["chosen"]]
    return {
        "parameters": dict(sorted(params.items())),
        "source": _scan_counts(detail, "source"),
        "target": _scan_counts(detail, "target"),
        "coarse": {"candidates": len(co["candidates"]),
                   "chosen": {"yaw_deg": _sig(chosen["yaw_deg"]), "translation_m": _sig(chosen["translation_m"]),
                              "score": chosen["score"]}},
        "fine": {"iterations": len(detail["log"]), "converged": detail["converged"]},
        "fit_before": _sig(detail["before"]),
        "fit_after": _sig(detail["after"]),
        "change": dict(detail["change"]["counts"]),
    }


def _stage_trace(detail: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
    """Step-by-step internals (the trace level): every statistic, candidate and iteration."""
    co = detail["coarse"]

    def scan_part(name: str) -> dict[str, Any]:
        s = detail[name]
        return {"outliers": dict(s["sor"]), "ground": dict(s["ground"]),
                "azimuth_histogram": [float(v) for v in co[f"hist_{name}"]],
                "dominant_azimuth_deg": co[f"phi_{name}"]}

    return {"parameters": dict(sorted(params.items())), "source": scan_part("source"), "target": scan_part("target"),
            "coarse": {"candidates": co["candidates"], "chosen": co["chosen"]},
            "fine": {"iterations": detail["log"], "converged": detail["converged"]},
            "change": {name: [{"verdict": v, "median_range_m": None if math.isnan(m) else _sig(float(m))}
                              for v, m in zip(*detail["change"][name])] for name in ("source", "target")}}


@oracle(
    name="lidar_icp",
    version="3.0.0",
    title="Two-station terrestrial LiDAR scan registration",
    domain="geospatial",
    toolkit=["laspy", "numpy", "scipy"],
    description=(
        "Two terrestrial laser scans of the same street, taken from two scanner stations, are "
        "processed the way a survey office prepares scans for a registered point cloud: spurious "
        "returns (multipath ghosts, dust) are rejected, ground is separated from everything else, "
        "each scan is thinned on a voxel grid, and the first scan (source) is registered onto the "
        "second (target), first coarsely, with no initial guess, then finely. The scans carry the "
        "defects of real ones: point density falling with range, occlusion shadows, range noise, "
        "spurious returns, and in some scenarios a vehicle that moved between the scans. The "
        "question: how many spurious returns and ground points each scan holds, how the ground "
        "lies under the first scanner, how many points each thinned scan keeps, which rigid motion "
        "(yaw about the vertical plus a translation) maps source coordinates onto target "
        "coordinates after the coarse and after the fine stage, how well the scans agree "
        "before and after the fine stage, and what changed between the scans: at the final registration, "
        "which thinned non-ground points of each scan the other station sees through (the surface vanished "
        "or appeared between the scans), cannot see because a nearer surface hides them, or has no return "
        "toward."
    ),
    axes={
        "voxel_size": Float(0.1, 0.4, doc="edge of the cubic voxels of the thinning grid, metres"),
        "max_correspondence_m": Float(0.4, 2.0, log=True,
                                      doc="largest distance at which a source point and its nearest target point "
                                          "still count as a pair, metres"),
        "pulse_count": Int(3000, 9000, doc="laser pulses each station fires (pulses that hit nothing give no point)"),
        "noise_sigma": Float(0.002, 0.02, doc="standard deviation of the range noise, metres"),
        "outlier_fraction": Float(0.0, 0.08, doc="share of returns that are spurious (about half multipath ghosts "
                                                 "behind surfaces, half dust in the air)"),
        "station_distance_m": Float(2.0, 7.0, doc="horizontal distance between the two scanner stations, metres"),
        "moving_vehicle": Bool(doc="whether a vehicle drove off between the scans (it is in both, at different places)"),
        "seed": Seed(doc="seed of the street scene, the second station's place and heading, and the noise"),
    },
    outputs={
        "source_noise": Integer(tol=0, doc="returns of the source scan rejected as spurious"),
        "target_noise": Integer(tol=0, doc="returns of the target scan rejected as spurious"),
        "source_ground": Integer(tol=0, doc="returns of the source scan classified as ground"),
        "target_ground": Integer(tol=0, doc="returns of the target scan classified as ground"),
        "ground_tilt_deg": Number(abs=1e-4, doc="tilt of the source scan's ground plane from level, degrees"),
        "scanner_height_m": Number(abs=1e-4, doc="height of the source scanner's origin above its ground plane, metres"),
        "source_points": Integer(tol=0, doc="points of the thinned source scan"),
        "target_points": Integer(tol=0, doc="points of the thinned target scan"),
        "coarse_yaw_deg": Angle(tol=0.01, doc="yaw of the coarse alignment (source to target, about z), degrees"),
        "coarse_shift_m": Number(abs=0.001, doc="length of the coarse alignment's translation, metres"),
        "fitness_before": Number(abs=0.002, doc="share of the thinned non-ground source points paired with a target "
                                                "point at the coarse alignment (0..1)"),
        "rmse_before": Number(abs=1e-4, rel=0.005, doc="root mean square point-to-plane distance of those pairs at the "
                                                       "coarse alignment, metres (0.0 with no pair)"),
        "yaw_deg": Angle(tol=0.005, doc="yaw of the final registration (source to target, about z), degrees"),
        "tx": Number(abs=0.001, doc="x of the final registration's translation, metres"),
        "ty": Number(abs=0.001, doc="y of the final registration's translation, metres"),
        "tz": Number(abs=0.001, doc="z of the final registration's translation, metres"),
        "fitness": Number(abs=0.002, doc="share of the thinned non-ground source points paired with a target point "
                                         "at the final registration (0..1)"),
        "rmse": Number(abs=1e-4, rel=0.005, doc="root mean square point-to-plane distance of those pairs at the final "
                                                "registration, metres (0.0 with no pair)"),
        "robust_inliers": Integer(tol=2, doc="of those final pairs, how many the fine stage's robust weighting "
                                             "still trusts"),
        "iterations": Integer(tol=1, doc="updates the fine registration applied"),
        "converged": Exact(doc="whether the fine registration settled (true) or stopped without settling (false)"),
        "vanished_points": Integer(tol=1, doc="thinned non-ground source points the target station sees through at the "
                                              "final registration: a surface there for the first station and gone "
                                              "for the second"),
        "appeared_points": Integer(tol=1, doc="thinned non-ground target points the source station sees through at the "
                                              "final registration: a surface that was not there for the first "
                                              "station"),
        "source_occluded": Integer(tol=1, doc="thinned non-ground source points the target station cannot see at the "
                                              "final registration because a nearer surface hides them"),
        "target_occluded": Integer(tol=1, doc="thinned non-ground target points the source station cannot see at the "
                                              "final registration because a nearer surface hides them"),
        "source_unseen": Integer(tol=1, doc="thinned non-ground source points toward which the target station has no "
                                            "return (outside its field of view or its range)"),
        "target_unseen": Integer(tol=1, doc="thinned non-ground target points toward which the source station has no "
                                            "return"),
    },
    inputs=make_inputs,
    input_docs={
        "source": "the scan of station 1: LAS 1.2, point format 3, scale 0.001 (coordinates are whole millimetres), "
                  "in the scanner's own levelled frame (its optical centre at the origin, z up), one return per "
                  "pulse, with intensity, GPS time (pulse order) and point source ID 1; classification is 0 "
                  "(never classified)",
        "target": "the scan of station 2 of the same street, same format, in station 2's own frame, point source ID 2",
    },
    stages=["read both scans on their millimetre grid", "range-normalised statistical outlier removal",
            "ground plane from per-cell lowest points and a height band", "per-class voxel thinning to the point "
            "nearest each voxel centroid", "normals and coarse yaw from folded normal azimuths, shift from a 2-D "
            "occupancy correlation checked in 3-D", "point-to-plane ICP in yaw and translation with Tukey weights on "
            "a MAD scale, ground down-weighted", "fit statistics before and after",
            "change between the scans from each station's view of the other's points"],
    reference="reference.py",
    evidence_level="outputs",
    # what each output is computed from: the ground plane is fitted to the returns kept,
    # the thinning works on the classes, the alignments on the thinned scans, and each
    # fit's statistics on its pose
    upstream={
        "ground_tilt_deg": ["source_noise"],
        "scanner_height_m": ["source_noise"],
        "source_ground": ["source_noise", "ground_tilt_deg", "scanner_height_m"],
        "target_ground": ["target_noise"],
        "source_points": ["source_ground"],
        "target_points": ["target_ground"],
        "coarse_yaw_deg": ["source_points", "target_points"],
        "coarse_shift_m": ["source_points", "target_points"],
        "fitness_before": ["coarse_yaw_deg", "coarse_shift_m"],
        "rmse_before": ["coarse_yaw_deg", "coarse_shift_m"],
        **{name: ["coarse_yaw_deg", "coarse_shift_m"] for name in ("yaw_deg", "tx", "ty", "tz", "iterations",
                                                                   "converged")},
        **{name: ["yaw_deg", "tx", "ty", "tz"] for name in ("fitness", "rmse", "robust_inliers")},
        # the change verdicts look the thinned non-ground points up, at the final pose, in the
        # other station's non-noise returns
        **{name: ["source_points", "target_points", "source_noise", "target_noise", "yaw_deg", "tx", "ty", "tz"]
           for name in ("vanished_points", "appeared_points", "source_occluded", "target_occluded", "source_unseen",
                        "target_unseen")},
    },
    # what one rule computes for each scan alike (the spurious-return cut, the ground
    # classification and the thinning run on each scan's own file): a published failure on
    # either scan shows the rule. (The change counts are not grouped: the two look-ups
    # move the points in opposite directions.)
    same_rule=[["source_noise", "target_noise"], ["source_ground", "target_ground"],
               ["source_points", "target_points"]],
    evidence={
        "stages.json": Evidence(
            "per-stage counts and results (summary): for each scan the returns read, how many were rejected as "
            "spurious, how many classified as ground, and the thinned scan's points per class; the number of coarse "
            "candidates and the chosen one (yaw, translation, score); how many fine iterations ran and whether they "
            "settled; the fit statistics before and after the fine stage; the change counts", reveals="summary"),
        "registration_trace.json": Evidence(
            "the step-by-step internals (trace): for each scan the statistic behind the spurious-return rejection "
            "(mean, std, cut-off), the ground plane z = a x + b y + c as [a, b, c] with the cells it was fitted to, "
            "the histogram of folded normal azimuths (90 one-degree bins) and its dominant direction; every coarse "
            "candidate (yaw, shift in cells, translation, shared cells, score); every fine iteration (pairs, scale, "
            "weighted pairs, weight sum, RMS residual, step); for every thinned non-ground point of each scan, in "
            "thinned order, how the other station sees it (through, occluded, unseen, confirmed) and the range it "
            "compared against", reveals="trace"),
        "source_classified.las": Evidence(
            "every return of source.las in file order, same header and point records, with the classification the "
            "processing assigned: 7 spurious return (noise), 2 ground, 1 anything else", reveals="trace"),
        "target_classified.las": Evidence("the same for target.las", reveals="trace"),
        "source_downsampled.las": Evidence(
            "the thinned source scan: LAS 1.2 point format 3, scale 0.001, offsets floor(min); every point is an "
            "original return of source.las carrying its GPS time, intensity and classification (1 or 2); the "
            "class-1 points come first, then the class-2 points; its point count equals `source_points`",
            reveals="trace"),
        "target_downsampled.las": Evidence("the thinned target scan, same layout; its point count equals "
                                           "`target_points`", reveals="trace"),
    },
)
def lidar_icp(params: dict[str, Any], evidence: Path, inputs: dict[str, Path]) -> dict[str, Any]:
    """Clean, classify, thin and register two terrestrial LiDAR scans, find what changed; summarise each stage.

    Inputs: `source` and `target`, LAS 1.2 point format 3, scale 0.001 (whole
    millimetres), each in its own scanner frame (optical centre at the origin, z up,
    levelled, so the motion between them is a yaw about z plus a translation). Only
    `voxel_size` (v) and `max_correspondence_m` (the gate) steer the processing; the
    other axes shape the scene. Work in millimetre integers where a stage says "exact".

    1. Read. Coordinates x = X × scale + offset; round x × 1000 to the integer
       millimetre it encodes (mm) and use x = mm / 1000 (metres) as the float value.
    2. Spurious returns, per scan, on all its returns: for each point the mean
       Euclidean distance to its 8 nearest OTHER points (query 9 with a k-d tree and drop
       the zero self-distance), divided by the point's range |x| to the scanner origin.
       With mean and population std (ddof 0) of that statistic over the scan, the point is
       noise when statistic > mean + 2.0 × std (a scan of 8 points or fewer has no noise).
       Why range-normalised: a scanner's point spacing grows linearly with range, so a
       plain distance would flag far returns.
    3. Ground, per scan, on the non-noise returns: cells of 1 m anchored at the origin
       (cell = floor(mm_x / 1000), floor(mm_y / 1000)); in each occupied cell the lowest
       point (smallest z; ties: earliest in the file). Start from the level plane z = median
       of the cell minima's z (numpy median). Then repeat: select the cell minima whose
       |z - plane(x, y)| <= 0.30 m; if that selection equals the previous one, or holds fewer
       than 3 cells, stop; else least-squares fit z = a x + b y + c to it (ordinary least
       squares, e.g. numpy lstsq) - at most 10 fits. Ground = non-noise returns with
       |z - plane(x, y)| <= 0.15 m. Classes: 7 noise, 2 ground, 1 the rest.
       ground_tilt_deg = degrees(atan(hypot(a, b))) and scanner_height_m = -c, both from
       the source scan's plane (a scan with no non-noise return has the plane 0, 0, 0).
    4. Thinning, per scan and per class separately (class 1 and class 2 never share a
       voxel): voxel key = floor(mm / v_mm) per axis, the grid anchored at the scanner
       origin, computed exactly with v_mm the exact decimal of v (as written in the scenario
       JSON, shortest float repr) times 1000, so a point on a voxel face belongs to the upper
       voxel. Each occupied voxel keeps ONE ORIGINAL point: the one nearest the centroid of
       the voxel's points, decided exactly (n^2 |p - centroid|^2 = |n p - sum p|^2 in integer
       mm); ties: earliest in the file. The thinned cloud lists the class-1 points, then the
       class-2 points, each in (ix, iy, iz) key order. source_points / target_points are
       the thinned counts.
    5. Normals, per thinned scan (both classes together): the 10 nearest thinned points of
       each point, itself included, by exact squared distance in mm^2, ties broken by the
       neighbour's (x, y, z) lexicographically; normal = eigenvector of the smallest
       eigenvalue of the covariance of those 10 points about their mean; flip it when
       n . x > 0 (so it faces the scanner origin). A cloud of fewer than 3 points gets
       normals (0, 0, 1).
    6. Coarse alignment (no initial guess). For each scan, over its class-1 thinned
       points with |n_z| <= 0.25: azimuth = degrees(atan2(n_y, n_x)), folded
       bin = floor(azimuth mod 90) (then mod 90, for a float that lands on 90.0); a 90-bin
       histogram h where each normal adds its point's squared horizontal range x^2 + y^2
       (metres^2; a scanner sample's footprint grows with range^2, so this weighs surface
       area and a dense nearby car cannot outvote a facade); smoothed
       s[b] = h[b-1] + 2 h[b] + h[b+1] (circular); the dominant direction
       phi = argmax(s) + 0.5 degrees (first maximum). Candidates: yaw_m =
       wrap(phi_target - phi_source + 90 m), m = 0, 1, 2, 3, wrap to [-180, 180). For each
       candidate, rotate the source class-1 thinned points about z by yaw_m; occupied 2-D
       cells (floor(x / 0.5), floor(y / 0.5)) of those and of the target class-1 points
       (0/1 occupancy, not counts); for every cell shift (dx, dy) with |dx|, |dy| <= 30,
       shared = number of occupied source cells c with c + (dx, dy) occupied in the
       target. Keep the 5 best shifts by: most shared, then smallest dx^2 + dy^2, then
       smallest dx, then smallest dy. Each kept shift gives the translation
       t = (0.5 dx, 0.5 dy, a_t tx + b_t ty + c_t - c_s) (the target's ground plane under the
       source scanner fixes the height; a, b, c from step 3) and a score = number of rotated
       and shifted source class-1 points whose nearest target class-1 point lies within
       0.5 m (<=). The 20 (candidate, shift) pairs are taken in order m = 0..3, shift rank
       0..4; the highest score wins, ties to the earliest. coarse_yaw_deg = its yaw_m,
       coarse_shift_m = |t|. (When either scan has no class-1 point, every candidate
       has the single shift (0, 0) with score 0.)
    7. Fine registration: point-to-plane ICP over (yaw, tx, ty, tz) only (roll and pitch
       stay zero), starting at the coarse pose. Source = all thinned source points (both
       classes), target = all thinned target points with their normals. Each iteration:
       move the source (p' = Rz(yaw) p + t); pair every p' with its nearest target point q
       (Euclidean, k-d tree); pairs with |p' - q| <= gate count; residual r = n_q . (p' - q).
       Scale s = max(1.4826 × median |r| over the counted pairs of CLASS-1 source points,
       0.01 m) (0.01 m when there is no such pair; 1 cm is about the ranging accuracy, a
       tighter scale would trust noise); Tukey cut-off c = 4.685 s; weight
       w = (1 - (r/c)^2)^2 when |r| < c else 0, times 0.2 for ground (class-2) source
       points. Stop (not converged) with fewer than 6
       counted pairs or fewer than 6 non-zero weights. Solve the weighted linearised
       least squares sum w (J . delta + r)^2, J = [n_y p'_x - n_x p'_y, n_x, n_y, n_z], for
       delta = (dyaw, dtx, dty, dtz) (normal equations; a singular system stops, not
       converged); apply it exactly: yaw += dyaw, t = Rz(dyaw) t + (dtx, dty, dtz). That
       is one iteration. Converged when |dyaw| < 1e-6 rad and |(dtx, dty, dtz)| < 1e-5 m
       after an update; at most 30 iterations (then not converged).
       yaw_deg = wrap(degrees(yaw)), (tx, ty, tz) = t, iterations = updates applied.
    8. Fit statistics at a pose (the coarse pose gives fitness_before and rmse_before,
       the final pose the rest), over the class-1 source points only: pair with the
       nearest target point (all classes) as in 7; fitness = pairs within the gate /
       class-1 count (0 when none); rmse = sqrt(mean r^2) over those pairs (0.0 when
       none); robust_inliers = those pairs with |r| < c, c = 4.685 × max(1.4826 × median
       |r| over those pairs, 0.01).
    9. Change between the scans, at the final pose (yaw, t). A station's view is its own
       scan's non-noise returns (classes 1 and 2, not thinned), each with its range |x| and
       direction x / |x|. The class-1 thinned source points go into the target's frame
       (p' = Rz(yaw) p + t) and are looked up in the target's view; the class-1 thinned
       target points go into the source's frame (q' = Rz(yaw)^T (q - t)) and are looked up
       in the source's view. Look-up of a point x of range rho = |x|: the view's returns
       whose direction is within 2.0 degrees of x / rho (unit vectors at most
       2 sin(1 degree) apart, inclusive); none: unseen; else m = numpy median of their
       ranges: m > rho + 0.5 m: seen through; m < rho - 0.5 m: occluded; otherwise
       confirmed. vanished_points / source_occluded / source_unseen count the source
       points seen through / occluded / unseen by the target; appeared_points /
       target_occluded / target_unseen the target points by the source.

    Tolerances, and why:
    - Counts (noise, ground, thinned points): exact. Every rule is a comparison of a
      statistic far from its threshold or exact integer arithmetic; a different k, factor,
      band, cell, anchor, representative or class mixing changes them by many points.
    - ground_tilt_deg, scanner_height_m: 1e-4 (degrees, metres). A least-squares plane
      differs between solvers by ~1e-12; a different support (another band, cell size, all
      ground points instead of cell minima) moves it by millimetres and hundredths of a
      degree.
    - coarse_yaw_deg: 0.01 degree; candidates are differences of bin centres, whole
      degrees, so any other peak or candidate is >= 1 degree away. coarse_shift_m: 1 mm;
      shifts are 0.5 m steps, only the height term is continuous (planes, ~1e-12).
    - yaw_deg 0.005 degree, tx/ty/tz 1 mm: a faithful implementation follows the same
      pairings, so it agrees to ~1e-9; the slack covers a stop one update earlier or later
      (a step below 1e-6 rad = 6e-5 degree and 1e-5 m) and another normal-equation solver.
      Other robust rules (no Tukey, another scale, ground weight 1, point-to-point, 6 DoF)
      land centimetres or hundredths of a degree away when a vehicle moved or outliers
      remain, and usually by more than these tolerances otherwise.
    - fitness / fitness_before: 0.002 (one pair in 500); rmse / rmse_before: 0.5 % (or
      0.1 mm); robust_inliers: 2 pairs. The same pairings give the same values; the slack
      absorbs a pair whose distance ties with the gate or the cut-off to ~1e-12.
    - iterations: within 1 (a step that lands next to the stopping thresholds);
      converged: exact.
    - the change counts: 1 point. At the same pose they are exact; a pose that differs
      by a step below the stopping thresholds changes none of them, while one at the
      pose tolerances (1 mm, 0.005 degree) can move up to ~3. Another cone (1.5 or 2.5
      degrees), margin (0.4 or 0.6 m), the mean or the least range instead of the median,
      the thinned scan or the noise in the view move them, on most scans, by several
      points to a hundred or more.
    """
    from . import reference

    scenario = {"parameters": dict(params), "inputs": {k: str(v) for k, v in inputs.items()}}
    out, detail = reference.process(scenario)
    evidence = Path(evidence)
    for name, station in (("source", 1), ("target", 2)):
        s = detail[name]
        _classified(inputs[name], evidence / f"{name}_classified.las", s["classification"])
        idx = s["index"]
        reference.write_las(evidence / f"{name}_downsampled.las", s["xyz"], s["scan"]["intensity"][idx],
                            classification=s["classification"][idx], gps_time=s["scan"]["gps_time"][idx],
                            point_source_id=station, software=f"recon lidar_icp thinned {station}")
    for fname, doc in (("stages.json", _stage_summary(detail, params)),
                       ("registration_trace.json", _stage_trace(detail, params))):
        (evidence / fname).write_text(json.dumps(doc, indent=1, sort_keys=True, allow_nan=False) + "\n",
                                      encoding="utf-8")
    return out
