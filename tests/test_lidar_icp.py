"""Tests of the built-in `lidar_icp` oracle with real laspy / numpy / scipy (no mocks)."""
from __future__ import annotations

import itertools
import json
import math
import subprocess
import sys
from pathlib import Path

import laspy
import numpy as np
import pytest

from recon.artifacts.lidar_icp import lidar_icp, make_inputs
from recon.artifacts.lidar_icp import reference as ref

FIELDS = {"count", "target_count", "xmax", "ymean", "fitness", "inlier_rmse", "rotation_deg",
          "translation_norm", "iterations", "converged"}


def params(**kw) -> dict:
    base = {"voxel_size": 0.2, "registration_threshold": 2.0, "rotation_deg": 8.0,
            "translation_m": 0.8, "noise_sigma": 0.01, "point_count": 2000, "seed": 11}
    base.update(kw)
    return base


def run(p: dict, root: Path) -> tuple[dict, Path, dict[str, Path]]:
    ev = root / "evidence"
    inputs = lidar_icp.make_inputs(p, root / "inputs")
    return lidar_icp(p, ev, inputs), ev, inputs


def check_outputs(out: dict) -> None:
    assert set(out) == FIELDS
    json.dumps(out, allow_nan=False)
    for k, v in out.items():
        if k in ("count", "target_count", "iterations"):
            assert type(v) is int, k
        elif k == "converged":
            assert type(v) is bool
        else:
            assert type(v) is float and math.isfinite(v), (k, v)
    assert 0.0 <= out["fitness"] <= 1.0
    assert out["inlier_rmse"] >= 0.0 and out["translation_norm"] >= 0.0
    assert 0 <= out["iterations"] <= ref.MAX_ITERATIONS
    assert -180.0 <= out["rotation_deg"] <= 180.0


def test_declaration() -> None:
    assert lidar_icp.name == "lidar_icp" and lidar_icp.version == "1.0.0"
    assert lidar_icp.domain == "geospatial"
    assert set(lidar_icp.toolkit) == {"laspy", "numpy", "scipy"}
    assert "seed" in lidar_icp.axes and len(lidar_icp.axes) >= 5
    assert set(lidar_icp.outputs) == FIELDS
    assert set(lidar_icp.evidence) == {"downsampled.las", "summary.txt"}
    assert lidar_icp.reference is not None and lidar_icp.reference.name == "reference.py"
    assert lidar_icp.inputs is make_inputs
    for word in ("voxel", "registration_threshold", "Tolerances"):
        assert word in lidar_icp.doc


def test_inputs_are_las12_pf3_on_a_millimetre_grid(tmp_path: Path) -> None:
    p = params(point_count=1234, rotation_deg=-12.5, translation_m=1.5)
    files = lidar_icp.make_inputs(p, tmp_path)
    assert set(files) == {"source", "target"}
    clouds = {}
    for name, path in files.items():
        las = laspy.read(path)
        assert str(las.header.version) == "1.2"
        assert las.header.point_format.id == 3
        assert las.header.point_count == 1234
        assert np.allclose(las.header.scales, 0.001)
        xyz = np.column_stack([las.x, las.y, las.z])
        assert np.array_equal(las.header.offsets, np.floor(xyz.min(axis=0)))
        assert las.intensity.min() > 0 and len(np.unique(las.intensity)) > 100
        assert set(np.unique(las.classification)) <= {1, 2, 6} and 2 in las.classification
        clouds[name] = xyz
    # The target is the source scene turned about z by about rotation_deg: fit it.
    src, tgt = clouds["source"], clouds["target"]
    r, t = ref._kabsch(src, tgt)
    yaw = math.degrees(math.atan2(r[1, 0], r[0, 0]))
    assert abs(yaw - p["rotation_deg"]) < 0.05
    assert abs(math.hypot(t[0], t[1]) - p["translation_m"]) < 0.02


def test_evidence_las_matches_outputs(tmp_path: Path) -> None:
    out, ev, _ = run(params(voxel_size=0.35, point_count=3000), tmp_path)
    check_outputs(out)
    las = laspy.read(ev / "downsampled.las")
    assert str(las.header.version) == "1.2" and las.header.point_format.id == 3
    assert las.header.point_count == out["count"] == len(las.points)
    assert np.allclose(las.header.scales, 0.001)
    assert las.intensity.min() > 0
    # centroids quantised to 1 mm: the statistics agree with the outputs within 0.5 mm
    assert abs(float(np.max(las.x)) - out["xmax"]) <= 0.0005 + 1e-9
    assert abs(float(np.mean(las.y)) - out["ymean"]) <= 0.0005 + 1e-9
    summary = (ev / "summary.txt").read_text(encoding="utf-8")
    assert f"count = {out['count']}" in summary and "fitness" in summary


def test_downsampling_reduces_and_is_independent_of_point_order(tmp_path: Path) -> None:
    p = params(voxel_size=0.5, point_count=5000)
    files = lidar_icp.make_inputs(p, tmp_path / "in")
    raw, xyz, scales, inten = ref.read_cloud(str(files["source"]))
    cent, _ = ref.voxel_downsample(raw, xyz, scales, inten, 0.5)
    assert 0 < len(cent) < 0.8 * 5000
    perm = np.random.default_rng(0).permutation(len(raw))
    cent2, _ = ref.voxel_downsample(raw[perm], xyz[perm], scales, inten[perm], 0.5)
    assert np.allclose(cent, cent2, atol=1e-9, rtol=0)
    # every centroid lies inside its own voxel of the min-anchored grid
    idx = np.floor((cent - xyz.min(axis=0)) / 0.5 + 1e-9)
    assert len(np.unique(idx, axis=0)) == len(cent)


def test_voxel_rule_is_exact_on_faces() -> None:
    # raw millimetre integers; a point exactly on a voxel face goes to the upper voxel,
    # even where float division would round below the integer (0.07 m voxels).
    raw = np.array([[0, 0, 0], [49, 50, 100], [210, 140, 70], [209, 139, 69]], dtype=np.int64)
    scales = np.array([0.001, 0.001, 0.001])
    assert ref.voxel_indices(raw, scales, 0.05).tolist() == [[0, 0, 0], [0, 1, 2], [4, 2, 1], [4, 2, 1]]
    assert ref.voxel_indices(raw, scales, 0.07).tolist() == [[0, 0, 0], [0, 0, 1], [3, 2, 1], [2, 1, 0]]
    assert math.floor(0.21 / 0.07) == 2  # the float pitfall the exact rule avoids
    assert ref.voxel_indices(raw - 7, scales, 0.5).tolist() == [[0, 0, 0]] * 4


def test_icp_recovers_an_exact_rigid_motion() -> None:
    rng = np.random.default_rng(3)
    src = np.concatenate([rng.uniform(-5, 5, (300, 3)) * [1, 1, 0.1],
                          np.column_stack([rng.uniform(-5, 5, 100), np.full(100, 4.0), rng.uniform(0, 3, 100)])])
    th = math.radians(4.0)
    rot = np.array([[math.cos(th), -math.sin(th), 0], [math.sin(th), math.cos(th), 0], [0, 0, 1]])
    tgt = src @ rot.T + [0.3, -0.2, 0.05]
    r, t, fitness, rmse, iterations, converged = ref.icp(src, tgt, 2.0)
    assert converged and fitness == 1.0 and rmse < 1e-6
    assert np.allclose(r, rot, atol=1e-6) and np.allclose(t, [0.3, -0.2, 0.05], atol=1e-5)


@pytest.mark.parametrize("seed,rot_deg", [(1, -9.0), (2, 4.5), (3, 10.0), (4, -2.0)])
def test_recovers_applied_rotation_on_clean_scenarios(tmp_path: Path, seed: int, rot_deg: float) -> None:
    p = params(seed=seed, rotation_deg=rot_deg, registration_threshold=3.0, noise_sigma=0.005,
               translation_m=0.5, voxel_size=0.1, point_count=3000)
    out, _, _ = run(p, tmp_path)
    check_outputs(out)
    assert out["converged"] and out["fitness"] > 0.95
    assert abs(out["rotation_deg"] - rot_deg) < 0.3
    assert abs(out["translation_norm"] - 0.5) < 0.3  # plus a vertical shift of at most 0.2 m
    assert out["inlier_rmse"] < 0.1


def test_small_threshold_with_large_rotation_is_a_different_answer(tmp_path: Path) -> None:
    good, _, _ = run(params(rotation_deg=25.0, registration_threshold=5.0), tmp_path / "a")
    bad, _, _ = run(params(rotation_deg=25.0, registration_threshold=0.5), tmp_path / "b")
    assert good["count"] == bad["count"]
    assert not lidar_icp.outputs["fitness"].compare(bad["fitness"], good["fitness"])


def test_deterministic_outputs_inputs_and_evidence(tmp_path: Path) -> None:
    p = params(seed=123456, point_count=2500)
    a, ev_a, in_a = run(p, tmp_path / "a")
    b, ev_b, in_b = run(dict(p), tmp_path / "b")
    assert a == b
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    for name in ("downsampled.las", "summary.txt"):
        assert (ev_a / name).read_bytes() == (ev_b / name).read_bytes()
    for name in in_a:
        assert in_a[name].read_bytes() == in_b[name].read_bytes()
    c, _, _ = run(params(seed=123457, point_count=2500), tmp_path / "c")
    assert c != a


def test_reference_program_matches_oracle(tmp_path: Path) -> None:
    p = params(seed=5, voxel_size=0.05, registration_threshold=0.5, rotation_deg=-30.0)
    out, _, inputs = run(p, tmp_path)
    scenario = {"task": "lidar_icp", "id": "public_1", "parameters": p,
                "inputs": {k: str(v) for k, v in inputs.items()}}
    proc = subprocess.run([sys.executable, str(lidar_icp.reference)], input=json.dumps(scenario),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == out


def test_never_raises_at_axis_corners(tmp_path: Path) -> None:
    axes = lidar_icp.axes
    names = ["voxel_size", "registration_threshold", "rotation_deg", "translation_m", "noise_sigma", "point_count"]
    seen = set()
    for i, corner in enumerate(itertools.product(*[axes[n].edges() for n in names])):
        p = dict(zip(names, corner), seed=[0, 2**31 - 1][i % 2])
        out, ev, _ = run(p, tmp_path / f"c{i}")
        check_outputs(out)
        assert laspy.read(ev / "downsampled.las").header.point_count == out["count"]
        seen.add(out["converged"])
    assert i == 63
