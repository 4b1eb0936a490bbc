"""`recon run` with the oracle and nop agents on the runtimes this machine has.

The real task (lidar_icp, the real reference solution, real laspy) is run end to end:
oracle must score exactly 1.0 and nop exactly 0, on ``local`` and on ``bwrap`` (where
bubblewrap works), and both runtimes must agree on every rung for the same nonce.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from recon.cli import cli
from recon.errors import TaskError, UsageError
from recon.run import choose_runtime, install_solution, run_task
from recon.runtimes import docker as rdocker
from recon.task import load_task


def _bwrap_ok() -> bool:
    try:
        from recon.runtimes.bwrap import bwrap_available
    except ImportError:
        return False
    return bool(bwrap_available())


RUNTIMES = ["local", pytest.param("bwrap", marks=pytest.mark.skipif(not _bwrap_ok(), reason="bubblewrap unusable here"))]


@pytest.fixture
def no_engine(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No Docker engine, whatever the machine has: auto must then fall back."""
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    monkeypatch.setattr(rdocker, "_engine_cache", {})


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_oracle_scores_one_and_nop_zero(lidar_task: Path, runtime: str, tmp_path: Path) -> None:
    workspace = lidar_task / "environment" / "app" / "workspace"
    before = sorted(p.name for p in workspace.iterdir())
    # oracle, through the command line, as JSON
    res = CliRunner().invoke(cli, ["run", str(lidar_task), "--agent", "oracle", "--runtime", runtime, "--json",
                                   "--probes", "1", "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["agent"] == "oracle" and doc["runtime"] == runtime and doc["runtime_reason"] is None
    assert doc["reward"] == 1.0 and doc["binary"] == 1 and doc["rung"]["index"] == 6, doc["grading"]
    assert doc["grading"]["runtime"] == runtime and doc["grading"]["workspace"] == "/app/workspace"
    assert (tmp_path / "reward.txt").read_text() == "1.0\n"
    assert json.loads((tmp_path / "reward.json").read_text()) == {"binary": 1, "reward": 1.0}
    assert json.loads((tmp_path / "grading.json").read_text())["nonce"] == doc["grading"]["nonce"]
    # nop, as the table
    res = CliRunner().invoke(cli, ["run", str(lidar_task), "--agent", "nop", "--runtime", runtime, "--probes", "1"])
    assert res.exit_code == 0, res.output
    assert "editable workspace" in res.stdout and "FAIL" in res.stdout
    assert res.stdout.rstrip().endswith(f"nop agent on {runtime}: reward 0.0")
    assert res.stderr.splitlines()[0] == f"runtime: {runtime}"
    # the agent worked on a copy: the task itself is untouched
    assert sorted(p.name for p in workspace.iterdir()) == before


def test_library_run_reports(lidar_task: Path) -> None:
    nop = run_task(lidar_task, "nop", runtime="local", probes=0)
    assert nop.reward == 0.0 and nop.binary == 0 and nop.reward_text == "0.0"
    assert nop.grading is not None and nop.grading["rung"]["index"] == 0
    assert nop.to_json()["rung"] == {"index": 0, "name": nop.grading["rung"]["name"]}


@pytest.mark.skipif(not _bwrap_ok(), reason="bubblewrap unusable here")
def test_same_submission_same_grade_on_bwrap_and_local(lidar_task: Path) -> None:
    a = run_task(lidar_task, "oracle", runtime="bwrap", nonce="same-grade", probes=1)
    b = run_task(lidar_task, "oracle", runtime="local", nonce="same-grade", probes=1)
    assert a.grading is not None and b.grading is not None
    assert a.reward == b.reward == 1.0
    assert a.grading["probes"] == b.grading["probes"]

    def checks(g: dict) -> list[tuple[str, bool]]:
        return [(c["id"], c["passed"]) for r in g["rungs"] for c in r["checks"]]

    assert checks(a.grading) == checks(b.grading)


def test_auto_says_what_it_picked(lidar_task: Path, no_engine: None) -> None:
    res = CliRunner().invoke(cli, ["run", str(lidar_task), "--agent", "nop", "--probes", "1"])
    assert res.exit_code == 0, res.output
    picked = "bwrap" if _bwrap_ok() else "local"
    first = res.stderr.splitlines()[0]
    assert first.startswith(f"runtime: {picked} (auto: no Docker engine answered")
    assert res.stdout.splitlines()[0].startswith("rung")          # the ladder table
    assert res.stdout.rstrip().endswith(f"nop agent on {picked}: reward 0.0")


def test_choose_runtime_reasons(no_engine: None) -> None:
    name, reason = choose_runtime("auto")
    assert name in ("bwrap", "local") and reason and "no Docker engine answered" in reason
    assert choose_runtime("local") == ("local", None)
    with pytest.raises(UsageError):
        choose_runtime("podman")


def test_cli_rejects_unknown_agent_and_runtime(lidar_task: Path) -> None:
    res = CliRunner().invoke(cli, ["run", str(lidar_task), "--agent", "wizard"])
    assert res.exit_code == 2 and "Traceback" not in res.output
    res = CliRunner().invoke(cli, ["run", str(lidar_task), "--agent", "nop", "--runtime", "podman"])
    assert res.exit_code == 2
    with pytest.raises(UsageError):
        run_task(lidar_task, "wizard")


def test_not_a_task_is_one_line(tmp_path: Path) -> None:
    res = CliRunner().invoke(cli, ["run", str(tmp_path), "--agent", "nop", "--runtime", "local"])
    assert res.exit_code == 3 and res.output.startswith("error: ") and "Traceback" not in res.output


def test_failing_solve_sh_is_reported(lidar_task: Path, tmp_path: Path) -> None:
    import shutil

    task_dir = tmp_path / "broken"
    shutil.copytree(lidar_task, task_dir)
    solve = task_dir / "solution" / "solve.sh"
    solve.write_text("#!/bin/bash\necho 'cannot install' >&2\nexit 7\n")
    with pytest.raises(TaskError, match="exited with 7: cannot install"):
        run_task(task_dir, "oracle", runtime="local")


def test_install_solution_targets_the_copy(lidar_task: Path, app_copy: Path) -> None:
    out = install_solution(load_task(lidar_task), app_copy)
    assert (app_copy / "workspace" / "reconstruct.py").read_bytes() == \
        (lidar_task / "solution" / "reconstruct.py").read_bytes()
    assert str(app_copy) in out
    assert not os.path.exists(lidar_task / "environment" / "app" / "workspace" / "reconstruct.py")
