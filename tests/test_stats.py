"""`recon stats`: work W, instruction words, evidence size, N/K, axes/outputs, timings."""
from __future__ import annotations

import json
import re
import tarfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from recon import Registry
from recon.build import build_task
from recon.cli import cli
from recon.errors import TaskError
from recon.stats import task_stats

# A reference solution whose work is known by construction: 8 lines of code, the rest
# blank lines, comments (indented ones too) and a shebang.
COUNTED = '''#!/usr/bin/env python3
# reads a scenario, prints the doubled parameter
import json
import sys

    # an indented comment is still a comment

def solve(scenario):
    x = scenario["parameters"]["x"]  # a trailing comment does not make a line a comment
    return {"y": 2 * x}


def main():
    print(json.dumps(solve(json.load(sys.stdin))))
    #
main()
'''
COUNTED_W = 8

PLUGIN = '''
from recon import oracle, Float, Int, Number

@oracle(name="doubler", version="1.0.0", title="Doubler", domain="testing", toolkit=[],
        reference="doubler_ref.py", description="A number derived from x.",
        axes={"x": Float(0.0, 1.0, doc="the input"), "k": Int(1, 3, doc="unused")},
        outputs={"y": Number(abs=1e-9, doc="the number")}, stages=["read x", "double it"])
def doubler(params, evidence):
    """Doubles x."""
    return {"y": 2 * params["x"]}
'''

# Two baselines: one gets the recipe right (the task would be too easy), one does not.
BASELINES = {
    "doubles": "import json, sys\nx = json.load(sys.stdin)['parameters']['x']\nprint(json.dumps({'y': 2 * x}))\n",
    "rounded": "import json, sys\nx = json.load(sys.stdin)['parameters']['x']\nprint(json.dumps({'y': round(2 * x, 3)}))\n",
}


def independent_work(text: str) -> int:
    """W counted another way: lines whose first non-space character exists and is not '#'."""
    return len(re.findall(r"^[ \t]*[^\s#]", text, flags=re.MULTILINE))


@pytest.fixture(scope="module")
def doubler_task(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("doubler")
    (root / "doubler_ref.py").write_text(COUNTED)
    (root / "doubler.py").write_text(PLUGIN)
    for bname, program in BASELINES.items():
        (root / "baselines" / bname).mkdir(parents=True)
        (root / "baselines" / bname / "reconstruct.py").write_text(program)
    reg = Registry()
    reg.load_plugin_file(root / "doubler.py")
    return build_task(reg, "doubler", root / "tasks", n_public=4, n_hidden=2, workers=1,
                      select="random").path  # its reference is a file to count, not a program


def test_work_matches_an_independent_count(doubler_task: Path, lidar_task: Path) -> None:
    assert independent_work(COUNTED) == COUNTED_W
    assert task_stats(doubler_task, run=False)["work"] == COUNTED_W
    lidar_ref = (lidar_task / "solution" / "reconstruct.py").read_text()
    assert task_stats(lidar_task, run=False)["work"] == independent_work(lidar_ref) > 100


def test_stats_of_a_built_task(lidar_task: Path) -> None:
    s = task_stats(lidar_task, run=False)
    assert s["task"] == "recon/lidar_icp" and (s["n_public"], s["n_hidden"], s["probes"]) == (8, 4, 3)
    grader = json.loads((lidar_task / "tests" / "grader.json").read_text())
    assert s["axes"] == len(grader["axes"]) == 8 and s["outputs"] == len(grader["outputs"]) == 27
    assert s["instruction_words"] == len((lidar_task / "instruction.md").read_text().split()) > 200
    archive = lidar_task / "environment/app/observations/reference_outputs.tar.gz"
    with tarfile.open(archive) as tar:
        sizes = [m.size for m in tar.getmembers() if m.isfile()]
    assert s["evidence"]["archive_bytes"] == archive.stat().st_size
    assert s["evidence"]["unpacked_bytes"] == sum(sizes) and s["evidence"]["files"] == len(sizes)
    # lidar_icp's default level publishes the outputs alone: no evidence file
    assert s["evidence"]["level"] == "outputs" and s["evidence"]["evidence_file_bytes"] == 0
    assert "reference_seconds" not in s


def test_stats_count_the_evidence_files_of_the_level_built(chem_task: Path, session_registry: Registry) -> None:
    s = task_stats(chem_task, run=False)
    assert s["evidence"]["level"] == "summary"
    names = set(session_registry.get("chem_smarts").published_evidence("summary"))
    with tarfile.open(chem_task / "environment/app/observations/reference_outputs.tar.gz") as tar:
        sizes = [m.size for m in tar.getmembers() if m.isfile() and m.name.split("/")[-1] in names]
    assert names and len(sizes) == s["n_public"] * len(names)
    assert 0 < s["evidence"]["evidence_file_bytes"] == sum(sizes) < s["evidence"]["unpacked_bytes"]


def test_reference_timings_per_scenario(doubler_task: Path) -> None:
    s = task_stats(doubler_task)
    assert list(s["reference_seconds"]) == ["public_1", "public_2", "public_3", "public_4", "hidden_1", "hidden_2"]
    assert all(0 < t < 30 for t in s["reference_seconds"].values())
    assert s["reference_matches"] == 6 and s["reference_failures"] == []
    summary = s["reference_summary"]
    assert summary["min"] <= summary["median"] <= summary["max"]


def test_cli_table_and_json(doubler_task: Path) -> None:
    res = CliRunner().invoke(cli, ["stats", str(doubler_task)])
    assert res.exit_code == 0, res.output
    assert re.search(r"^work W\s+8 lines", res.stdout, re.MULTILINE)
    assert re.search(r"^scenarios N/K\s+4 public / 2 hidden", res.stdout, re.MULTILINE)
    assert "matches the truth on 6/6" in res.stdout and "hidden_2" in res.stdout
    res = CliRunner().invoke(cli, ["stats", str(doubler_task), "--json", "--no-run"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["work"] == COUNTED_W and doc["axes"] == 2 and doc["outputs"] == 1 and "reference_seconds" not in doc
    assert doc["stages"] == 2 and doc["stage_names"] == ["read x", "double it"] and doc["disclose"] is None
    assert "baselines" not in doc  # grading them is opt-in


def test_stages_of_a_builtin(lidar_task: Path, session_registry: Registry) -> None:
    s = task_stats(lidar_task, run=False)
    assert s["stages"] == len(session_registry.get("lidar_icp").stages) > 0


def test_baselines_are_graded_on_request(doubler_task: Path) -> None:
    plugin = doubler_task.parent.parent / "doubler.py"
    res = CliRunner().invoke(cli, ["stats", str(doubler_task), "--no-run", "--baselines", "--runtime", "local",
                                   "--json", "--plugin", str(plugin)])
    assert res.exit_code == 0, res.output
    rows = {b["name"]: b for b in json.loads(res.stdout)["baselines"]}
    assert set(rows) == {"doubles", "rounded"}
    assert rows["doubles"]["reward"] == 1.0 and rows["doubles"]["passed"] is False and rows["doubles"]["rung"] == 6
    assert 0 < rows["rounded"]["reward"] < 1.0 and rows["rounded"]["passed"] is True and rows["rounded"]["rung"] < 6
    res = CliRunner().invoke(cli, ["stats", str(doubler_task), "--no-run", "--baselines", "--runtime", "local",
                                   "--plugin", str(plugin)])
    assert res.exit_code == 0, res.output
    assert re.search(r"^baselines\s+doubles\s+R = 1\.0000\s+rung 6\s+REACHES 1\.0", res.stdout, re.MULTILINE)
    assert re.search(r"^\s+rounded\s+R = 0\.\d{4}\s+rung [1-5]\s+ok, below 1\.0", res.stdout, re.MULTILINE)
    assert re.search(r"^stages\s+2 in the recipe: read x; double it", res.stdout, re.MULTILINE)


def test_not_a_task(tmp_path: Path) -> None:
    with pytest.raises(TaskError):
        task_stats(tmp_path)
    res = CliRunner().invoke(cli, ["stats", str(tmp_path)])
    assert res.exit_code == TaskError.exit_code and "Traceback" not in res.output
