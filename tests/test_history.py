"""Grading histories: `recon grade --history`, `recon watch`, and reading them back."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from recon.cli import cli
from recon.cli.watch_cmd import parse_duration
from recon.errors import UsageError
from recon.history import HistoryError, append, read, record_of, series


def _workspace(task: Path, where: Path, source: str) -> Path:
    ws = where
    shutil.copytree(task / "environment" / "app" / "workspace", ws)
    (ws / "reconstruct.py").write_text(source)
    return ws


CRASH = "import sys, json\njson.load(sys.stdin)\nraise RuntimeError('not implemented yet')\n"


@pytest.fixture(scope="module")
def crash_grading(lidar_task: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    from recon.grader import grade

    ws = _workspace(lidar_task, tmp_path_factory.mktemp("hist") / "crash", CRASH)
    return grade(lidar_task, ws, runtime="local", probes=0, workspace_label="crash-ws")


def test_record_holds_the_checkpoint_fields(crash_grading: dict, lidar_task: Path) -> None:
    from recon.task import load_task

    rec = record_of(crash_grading)
    assert rec["task"] == "recon/lidar_icp" and rec["workspace"] == "crash-ws"
    assert rec["timestamp"] == crash_grading["graded_at"] and rec["nonce"] == crash_grading["nonce"]
    assert rec["reward"] == crash_grading["reward"] == pytest.approx(2 / 6)
    assert rec["binary"] == 0 and rec["rung"] == 2 and rec["rung_name"] == "reconstruct.py present"
    # one fraction per rung: two passed, the third examined and failed on every scenario, the rest not examined
    assert rec["fractions"] == [1.0, 1.0, 0.0, 0.0, 0.0, 0.0]
    assert rec["runs"] == len(load_task(lidar_task).meta["public"]) and rec["runtime"] == "local"  # one per public scenario


def test_lines_parse_and_accumulate(crash_grading: dict, tmp_path: Path) -> None:
    path = tmp_path / "deep" / "history.jsonl"
    first = append(path, crash_grading)
    second = append(path, {**crash_grading, "nonce": "feedface", "graded_at": "2030-01-01T00:30:00+00:00"})
    lines = path.read_text().splitlines()
    assert len(lines) == 2 and all(json.loads(ln) for ln in lines)
    assert read(path) == [first, second]
    other = {**crash_grading, "workspace": "other", "graded_at": "2030-01-01T00:00:00+00:00"}
    append(path, other)
    groups = series(read(path))
    assert list(groups) == [("recon/lidar_icp", "crash-ws"), ("recon/lidar_icp", "other")]
    assert [r["nonce"] for r in groups[("recon/lidar_icp", "crash-ws")]] == [crash_grading["nonce"], "feedface"]


def test_torn_last_line_does_not_swallow_the_next(crash_grading: dict, tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    path.write_text('{"task": "cut off')
    append(path, crash_grading)
    assert path.read_text().splitlines()[1].startswith('{"binary"')
    with pytest.raises(HistoryError, match=r"h\.jsonl:1: not a JSON line"):
        read(path)


def test_bad_lines_are_errors_naming_the_line(crash_grading: dict, tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    append(path, crash_grading)
    with path.open("a") as fh:
        fh.write("\n")  # blank lines are fine
        fh.write(json.dumps({"task": "x"}) + "\n")
    with pytest.raises(HistoryError, match=r"h\.jsonl:3: history line lacks timestamp"):
        read(path)
    with pytest.raises(HistoryError, match="not a grading document"):
        record_of({"reward": 1.0})
    with pytest.raises(UsageError, match="does not exist"):
        read(tmp_path / "missing.jsonl")


def test_grade_cli_appends_history(lidar_task: Path, tmp_path: Path) -> None:
    ws = _workspace(lidar_task, tmp_path / "ws", CRASH)
    hist = tmp_path / "h.jsonl"
    for _ in range(2):
        res = CliRunner().invoke(cli, ["grade", str(lidar_task), "--workspace", str(ws), "--runtime", "local",
                                       "--probes", "0", "--history", str(hist), "--label", "me", "--json"])
        assert res.exit_code == 0, res.output
    recs = read(hist)
    assert [r["workspace"] for r in recs] == ["me", "me"] and recs[0]["nonce"] != recs[1]["nonce"]
    assert json.loads(res.stdout)["nonce"] == recs[1]["nonce"]


def test_watch_grades_on_a_schedule_until_count(lidar_task: Path, tmp_path: Path) -> None:
    ws = _workspace(lidar_task, tmp_path / "ws", CRASH)
    hist = tmp_path / "watch.jsonl"
    res = CliRunner().invoke(cli, ["watch", str(lidar_task), "--workspace", str(ws), "--every", "0.2s", "--count", "2",
                                   "--history", str(hist), "--runtime", "local", "--probes", "0", "-q"])
    assert res.exit_code == 0, res.output
    assert len(res.stdout.splitlines()) == 2 and "reward 0.3333  rung 2" in res.stdout
    assert len(read(hist)) == 2


def test_durations() -> None:
    assert parse_duration("30m") == 1800 and parse_duration("1h30m") == 5400
    assert parse_duration("90s") == 90 and parse_duration("45") == 45 and parse_duration("0.5s") == 0.5
    for bad in ("", "soon", "5x", "m30", "-1", "0"):
        with pytest.raises(UsageError):
            parse_duration(bad)
