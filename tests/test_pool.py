"""Any program on a pool: the deviation measure and `recon pool`."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from recon import Registry, compare
from recon.mutation.pool import DEVIATION_CAP, deviation, prepare_workspace, run_program_on_pool
from recon.cli.pool_cmd import pool_cmd
from recon.errors import UsageError
from recon.runtimes.base import Limits
from recon.runtimes import get_runtime
from recon.sweep import SweepSpec
from test_mutate import REFERENCE, write_boundary_plugin

finite = st.floats(-1e6, 1e6, allow_nan=False)


@settings(max_examples=200, deadline=None)
@given(finite, finite, st.floats(0, 10), st.floats(0, 0.5))
def test_number_deviation_exceeds_one_exactly_when_the_check_fails(got: float, want: float, a: float, r: float) -> None:
    spec = {"kind": "number", "abs": a, "rel": r}
    d = deviation(spec, got, want)
    ok, _ = compare.check(spec, got, want)
    assert ok == (d <= 1.0)
    assert d == deviation(spec, want, got)  # symmetric, like the check


@settings(max_examples=100, deadline=None)
@given(st.integers(-50, 50), st.integers(-50, 50), st.integers(0, 5))
def test_integer_deviation(got: int, want: int, tol: int) -> None:
    spec = {"kind": "integer", "tol": tol}
    assert compare.check(spec, got, want)[0] == (deviation(spec, got, want) <= 1.0)


def test_deviation_of_other_kinds() -> None:
    angle = {"kind": "angle", "tol": 2.0, "period": 360.0}
    assert deviation(angle, 359.0, 1.0) == pytest.approx(1.0)
    assert deviation(angle, 350.0, 10.0) == pytest.approx(10.0)
    assert deviation({"kind": "exact"}, True, True) == 0.0
    assert deviation({"kind": "exact"}, 1, True) == DEVIATION_CAP
    assert deviation({"kind": "number", "abs": 0.1}, "x", 1.0) == DEVIATION_CAP
    assert deviation({"kind": "number", "abs": 0.1}, math.inf, 1.0) == DEVIATION_CAP
    seq = {"kind": "sequence", "item": {"kind": "number", "abs": 0.5}}
    assert deviation(seq, [1.0, 2.0], [1.0, 3.0]) == pytest.approx(2.0)
    assert deviation(seq, [1.0], [1.0, 3.0]) == DEVIATION_CAP


@pytest.fixture(scope="module")
def plugin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_boundary_plugin(tmp_path_factory.mktemp("plugin"))


def _wrong(tmp: Path) -> Path:
    """The reference with its cap one lower: wrong only where n reaches the cap."""
    p = tmp / "wrong_reconstruct.py"
    p.write_text(REFERENCE.replace("LIMIT = 8", "LIMIT = 7"))
    return p


def test_pool_command_passes_the_reference_and_fails_a_wrong_program(plugin: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    base = ["boundary_demo", "--plugin", str(plugin), "--size", "16", "--runtime", "local", "--workers", "2", "-q",
            "--timeout", "30"]  # the plugin's own limit is tight; a loaded machine must not fail the reference
    ok = runner.invoke(pool_cmd, [*base, "--program", str(plugin.with_name("boundary_reference.py")), "--json"])
    assert ok.exit_code == 0, ok.output
    doc = json.loads(ok.output)
    assert doc["ok"] and doc["failure_rate"] == 0.0 and doc["size"] == 16
    assert all(f["failures"] == 0 and f["worst_deviation"] <= 1.0 for f in doc["fields"])
    bad = runner.invoke(pool_cmd, [*base, "--program", str(_wrong(tmp_path)), "--json"])
    assert bad.exit_code == 1
    doc = json.loads(bad.output)
    steps = next(f for f in doc["fields"] if f["field"] == "steps")
    assert 0 < steps["failure_rate"] < 1 and steps["worst_deviation"] > 1.0
    assert doc["failed_scenarios"] and set(steps["failed_scenarios"]) <= set(doc["failed_scenarios"])


def test_pool_reports_programs_that_break_the_contract(plugin: Path, tmp_path: Path) -> None:
    reg = Registry()
    reg.load_plugin_file(plugin)
    o = reg.get("boundary_demo")
    crash = tmp_path / "crash.py"
    crash.write_text("import sys\nsys.exit(3)\n")
    report = run_program_on_pool(o, SweepSpec(), crash, get_runtime("local"), size=4, workers=2,
                                 limits=Limits(wall=30.0))
    assert not report.ok and len(report.contract_failures) == 4
    assert all("exit code 3" in why for why in report.contract_failures.values())
    assert all(f.checked == 0 for f in report.fields.values())
    text = report.render()
    assert "no usable output on 4/4 scenarios" in text and "0/4 pass every field" in text


def test_prepare_workspace(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "reconstruct.py").write_text("print(1)\n")
    assert prepare_workspace(ws, tmp_path / "s")[0] == ws
    assert prepare_workspace(ws / "reconstruct.py", tmp_path / "s")[0] == ws
    other = tmp_path / "other.py"
    other.write_text("print(2)\n")
    made, label = prepare_workspace(other, tmp_path / "s")
    assert (made / "reconstruct.py").read_text() == "print(2)\n" and label == str(other)
    with pytest.raises(UsageError):
        prepare_workspace(tmp_path / "missing.py", tmp_path / "s")
    (tmp_path / "empty").mkdir()
    with pytest.raises(UsageError):
        prepare_workspace(tmp_path / "empty", tmp_path / "s")
