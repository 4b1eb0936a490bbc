"""`recon report` from real gradings of a built task: the reference, a constant-output
submission, a crashing one and a partial one (the reference with one field off)."""
from __future__ import annotations

import json
import re
import shutil
import struct
import tarfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from recon.cli import cli
from recon.errors import UsageError
from recon.grader import grade, write_outputs
from recon.history import read
from recon.report import FIGURE_HEIGHT, FIGURE_WIDTH, build_report, figure_height

PARTIAL_PATCH = '''
_solve = solve


def solve(scenario):
    out = _solve(scenario)
    out["ymean"] = out["ymean"] + 0.5  # one field pushed far past its tolerance
    return out


'''


def _workspace(task: Path, ws: Path, source: str) -> Path:
    shutil.copytree(task / "environment" / "app" / "workspace", ws)
    (ws / "reconstruct.py").write_text(source)
    return ws


@pytest.fixture(scope="module")
def gradings(lidar_task: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of real gradings and histories of the four submissions."""
    root = tmp_path_factory.mktemp("gradings")
    reference = (lidar_task / "solution" / "reconstruct.py").read_text()
    cut = reference.rindex('if __name__ == "__main__":')
    with tarfile.open(lidar_task / "environment/app/observations/reference_outputs.tar.gz") as tar:
        member = tar.extractfile("public_1/oracle_output.json")
        assert member is not None
        published = json.loads(member.read())
    ws = {
        "reference": _workspace(lidar_task, root / "ws" / "reference", reference),
        "constant": _workspace(lidar_task, root / "ws" / "constant", f"print({json.dumps(json.dumps(published))})\n"),
        "crash": _workspace(lidar_task, root / "ws" / "crash", "import sys\nsys.exit('boom: not written yet')\n"),
        "partial": _workspace(lidar_task, root / "ws" / "partial", reference[:cut] + PARTIAL_PATCH + reference[cut:]),
    }
    runner = CliRunner()
    common = ["--runtime", "local", "--probes", "1"]
    # reference: watched; the first grading is a full pass, so watch stops by itself
    res = runner.invoke(cli, ["watch", str(lidar_task), "--workspace", str(ws["reference"]), "--every", "1h",
                              "--history", str(root / "reference.jsonl"), "--label", "reference", *common])
    assert res.exit_code == 0, res.output
    # crash: a checkpoint series of two gradings, plus its grading.json
    for _ in range(2):
        res = runner.invoke(cli, ["grade", str(lidar_task), "--workspace", str(ws["crash"]), "--label", "crash",
                                  "--history", str(root / "crash.jsonl"), "--out", str(root / "crash"), "-q", *common])
        assert res.exit_code == 0, res.output
    # constant: grading.json through the command line
    res = runner.invoke(cli, ["grade", str(lidar_task), "--workspace", str(ws["constant"]), "--label", "constant",
                              "--out", str(root / "constant"), "-q", *common])
    assert res.exit_code == 0, res.output
    # partial: through the library, as `recon grade --json` would print it
    g = grade(lidar_task, ws["partial"], runtime="local", probes=1, workspace_label="partial")
    (root / "partial.json").write_text(json.dumps(g))
    write_outputs(g, root / "partial-out")  # the same grading again, as grading.json: counted once
    return root


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", path
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_the_gradings_are_what_the_ladder_says(gradings: Path) -> None:
    ref = read(gradings / "reference.jsonl")
    assert len(ref) == 1 and ref[0]["reward"] == 1.0 and ref[0]["binary"] == 1  # watch stopped at the full pass
    assert [r["rung"] for r in read(gradings / "crash.jsonl")] == [2, 2]
    constant = json.loads((gradings / "constant" / "grading.json").read_text())
    assert 0.5 <= constant["reward"] < 5 / 6
    partial = json.loads((gradings / "partial.json").read_text())
    assert partial["rung"]["index"] == 5 and 5 / 6 < partial["reward"] < 1.0


def test_report_references_every_png_of_the_expected_size(gradings: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    res = CliRunner().invoke(cli, ["report", str(gradings), "--out", str(out), "--title", "lidar <gradings>"])
    assert res.exit_code == 0, res.output
    assert res.stdout.strip() == str(out / "report.html")
    page = (out / "report.html").read_text()
    pngs = sorted(p.name for p in out.glob("*.png"))
    assert pngs == ["dense_vs_binary.png", "ladder.png", "reward_over_time.png", "rungs.png"]
    referenced = sorted(set(re.findall(r'<img src="([^"]+)"', page)))
    assert referenced == pngs
    for name in pngs:
        assert (out / name).stat().st_size > 10_000, name
        assert _png_size(out / name) == (FIGURE_WIDTH, figure_height(name, 4)) == (FIGURE_WIDTH, FIGURE_HEIGHT)
        # a drawn figure, not a blank canvas
        from matplotlib.image import imread

        pixels = imread(out / name)
        assert pixels.shape[:2] == (FIGURE_HEIGHT, FIGURE_WIDTH) and float(pixels[..., :3].std()) > 0.05, name
    assert "lidar &lt;gradings&gt;" in page and "<gradings>" not in page  # escaped
    for label in ("reference", "constant", "crash", "partial"):
        assert f">{label}</td>" in page
    # 4 submissions, 5 distinct gradings (the partial one is both a JSON file and a grading.json)
    assert "5 grading(s) of 4 submission(s) on 1 task(s)" in page
    assert "0.250</div><div class=\"k\">binary pass rate" in page


def test_report_summary_numbers(gradings: Path, tmp_path: Path) -> None:
    rep = build_report([gradings], tmp_path / "r")
    assert rep.records == 5 and rep.submissions == 4 and rep.tasks == ["recon/lidar_icp"]
    assert [f.name for f in rep.figures] == ["ladder.png", "dense_vs_binary.png", "rungs.png", "reward_over_time.png"]
    # a report without repeated gradings has no time series, and an old figure is not left behind
    rep2 = build_report([gradings / "constant" / "grading.json", gradings / "partial.json"], tmp_path / "r")
    assert [f.name for f in rep2.figures] == ["ladder.png", "dense_vs_binary.png", "rungs.png"]
    assert not (tmp_path / "r" / "reward_over_time.png").exists()
    assert "no reward-over-time figure" in rep2.html.read_text()


def test_report_input_errors(gradings: Path, tmp_path: Path) -> None:
    (tmp_path / "other.json").write_text('{"reward": 1.0}')
    with pytest.raises(UsageError, match="not a grading document"):
        build_report([tmp_path / "other.json"], tmp_path / "r")
    with pytest.raises(UsageError, match="no gradings found"):
        build_report([tmp_path], tmp_path / "r")  # a folder with no grading in it
    with pytest.raises(UsageError, match="does not exist"):
        build_report([tmp_path / "nope.json"], tmp_path / "r")
    res = CliRunner().invoke(cli, ["report", str(tmp_path / "other.json"), "--out", str(tmp_path / "r")])
    assert res.exit_code == 2 and "Traceback" not in res.output
