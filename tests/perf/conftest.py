"""Benchmarks: collected only on demand, never in the default `pytest` run.

Run them with ``pytest tests/perf -m perf`` (or ``RECON_PERF=1 pytest tests/perf``).
Benchmark files are named ``bench_*.py``, which the default run does not collect; this
conftest collects them when benchmarks are asked for, marks every item ``perf``, and
prints the measured ratios at the end (also written as JSON to ``$RECON_PERF_JSON``
when set).
"""
from __future__ import annotations

import json
import os
import platform
from pathlib import Path
from typing import Any, Callable

import pytest

HERE = Path(__file__).parent
RESULTS: list[dict[str, Any]] = []


def _enabled(config: pytest.Config) -> bool:
    expr = config.getoption("markexpr", "") or ""
    return os.environ.get("RECON_PERF") == "1" or (expr.strip() == "perf" or expr.strip().startswith("perf "))


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Module | None:
    if (file_path.parent == HERE and file_path.name.startswith("bench_") and file_path.suffix == ".py"
            and _enabled(parent.config) and not parent.session.isinitpath(file_path)):
        return pytest.Module.from_parent(parent, path=file_path)
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    skip = pytest.mark.skip(reason="benchmark: run with `pytest tests/perf -m perf` or RECON_PERF=1")
    for item in items:
        if HERE in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.perf)
            if not _enabled(config):
                item.add_marker(skip)


@pytest.fixture(scope="session")
def record() -> Callable[..., None]:
    """record(name, value, goal=None, unit="ratio", detail=""): keep one measured number."""

    def add(name: str, value: float, goal: str | None = None, unit: str = "ratio", detail: str = "") -> None:
        RESULTS.append({"name": name, "value": round(value, 4), "goal": goal, "unit": unit, "detail": detail})

    return add


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not RESULTS:
        return
    tr = terminalreporter
    tr.section("recon benchmarks")
    tr.write_line(f"machine: {os.cpu_count()} cores, {platform.python_implementation()} {platform.python_version()}, "
                  f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for r in RESULTS:
        goal = f"  (goal {r['goal']})" if r["goal"] else ""
        tr.write_line(f"{r['name']:<48} {r['value']:>10.3f} {r['unit']}{goal}  {r['detail']}")
    out = os.environ.get("RECON_PERF_JSON")
    if out:
        Path(out).write_text(json.dumps({"load": os.getloadavg(), "results": RESULTS}, indent=2) + "\n")
