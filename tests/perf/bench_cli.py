"""`recon --help` start-up / `python -c pass`: goal <= 3 (no science library at import)."""
from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

import pytest

pytestmark = pytest.mark.perf


def _median_wall(cmd: list[str], n: int = 15) -> float:
    subprocess.run(cmd, capture_output=True, check=True)  # warm
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        subprocess.run(cmd, capture_output=True, check=True)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def test_help_startup(record: Callable[..., None]) -> None:
    # The console script beside the interpreter, not a version manager's shim on PATH.
    exe = Path(sys.executable).with_name("recon")
    recon = [str(exe)] if exe.is_file() else [sys.executable, "-m", "recon"]
    base = _median_wall([sys.executable, "-c", "pass"])
    help_ = _median_wall([*recon, "--help"])
    record("recon --help / python -c pass", help_ / base, "<= 3",
           detail=f"{help_ * 1000:.0f} ms vs {base * 1000:.0f} ms (median of 15)")
    build_help = _median_wall([*recon, "build", "--help"])
    record("recon build --help / python -c pass", build_help / base, detail=f"{build_help * 1000:.0f} ms")
