"""Grading and feedback overhead against bare runs of the same submission.

- grading wall / (runs x one bare run): goal <= 0.75 on 2 cores. The grader runs the
  submission in parallel and its sandbox should cost little; a ratio under 1 means the
  parallelism pays for the sandbox and for drawing the probes.
- feedback tool wall (one public scenario) / one bare run of it: goal <= 1.15.
"""
from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

import pytest

from recon.grader import grade
from recon.stats import bare_run
from recon.task import load_task

pytestmark = pytest.mark.perf


def _bwrap_ok() -> bool:
    try:
        from recon.runtimes.bwrap import bwrap_available
    except ImportError:
        return False
    return bool(bwrap_available())


REPS = int(os.environ.get("RECON_PERF_REPS", "3"))


def _bare_mean(task_dir: Path) -> float:
    """Mean wall time of one bare run of the reference over the public and hidden scenarios."""
    task = load_task(task_dir)
    program = task_dir / "solution" / "reconstruct.py"
    return statistics.fmean(bare_run(program, sd).seconds for sd in task.public() + task.hidden())


@pytest.fixture(scope="module")
def bare(lidar_task: Path) -> dict[str, float]:
    """One bare run of the reference per public and hidden scenario (after a warm-up)."""
    task = load_task(lidar_task)
    program = lidar_task / "solution" / "reconstruct.py"
    bare_run(program, task.public()[0])  # warm the page cache and the .pyc files of the toolkit
    return {sd.id: bare_run(program, sd).seconds for sd in task.public() + task.hidden()}


@pytest.mark.parametrize("runtime", ["local", pytest.param("bwrap", marks=pytest.mark.skipif(
    not _bwrap_ok(), reason="bubblewrap unusable here"))])
def test_grading_overhead(lidar_task: Path, bare: dict[str, float], runtime: str, tmp_path: Path,
                          record: Callable[..., None]) -> None:
    ws = tmp_path / "ws"
    shutil.copytree(lidar_task / "environment/app/workspace", ws)
    shutil.copyfile(lidar_task / "solution/reconstruct.py", ws / "reconstruct.py")
    # Bare runs and gradings alternate, so that a change in the machine's load hits both.
    ratios, walls, ones = [], [], []
    for _ in range(REPS):
        one = _bare_mean(lidar_task)
        t0 = time.perf_counter()
        g = grade(lidar_task, ws, runtime=runtime, workers=2)
        wall = time.perf_counter() - t0
        assert g["reward"] == 1.0
        ratios.append(wall / (g["runs"] * one))
        walls.append(wall)
        ones.append(one)
    k = ratios.index(sorted(ratios)[len(ratios) // 2])
    record(f"grading wall / (runs x bare run) [{runtime}]", ratios[k], "<= 0.75",
           detail=f"median of {REPS}: {walls[k]:.2f} s for {g['runs']} runs (3 probes), bare run {ones[k]:.2f} s; "
                  f"all: {', '.join(f'{r:.2f}' for r in ratios)}")


def test_feedback_overhead(lidar_task: Path, bare: dict[str, float], tmp_path: Path,
                           record: Callable[..., None]) -> None:
    app = tmp_path / "app"
    shutil.copytree(lidar_task / "environment/app", app)
    shutil.copyfile(lidar_task / "solution/reconstruct.py", app / "workspace/reconstruct.py")
    task = load_task(lidar_task)
    program = lidar_task / "solution" / "reconstruct.py"
    # The interpreter is named explicitly: in the container `python3` is the interpreter;
    # here it may be a version-manager shim that adds its own start-up.
    tool = [sys.executable, str(app / "tools/feedback")]
    one_tool, one_bare = [], []
    for _ in range(3):
        t0 = time.perf_counter()
        proc = subprocess.run([*tool, "public_1"], capture_output=True, check=False)
        one_tool.append(time.perf_counter() - t0)
        assert proc.returncode == 0, proc.stdout.decode() + proc.stderr.decode()
        one_bare.append(bare_run(program, task.public()[0]).seconds)
    ratio = statistics.median(one_tool) / statistics.median(one_bare)
    record("feedback wall (1 scenario) / bare run", ratio, "<= 1.15",
           detail=f"{statistics.median(one_tool):.2f} s vs {statistics.median(one_bare):.2f} s (median of 3)")
    t0 = time.perf_counter()
    proc = subprocess.run(tool, capture_output=True, check=False)
    wall = time.perf_counter() - t0
    assert proc.returncode == 0
    n = len(task.public())
    record(f"feedback wall (all {n}) / ({n} x bare run)", wall / sum(bare[sd.id] for sd in task.public()),
           detail=f"{wall:.2f} s; runs in parallel on {min(n, 2)} cores")
