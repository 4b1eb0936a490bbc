"""`recon report` from real gradings of a built task: the reference, a constant-output
submission, a crashing one and a partial one (the reference with one field off).

The task is built from the cheap test oracle (tests/perf/cheap_oracle.py) so that the
dozen real gradings below take seconds, not minutes."""
from __future__ import annotations

import json
import re
import shutil
import struct
import tarfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from recon import Registry
from recon.build import build_task
from recon.cli import cli
from recon.errors import UsageError
from recon.grader import grade, write_outputs
from recon.history import read
from recon.report import FIGURE_HEIGHT, FIGURE_WIDTH, build_report, figure_height

PARTIAL_PATCH = '''
_solve = solve


def solve(scenario):
    out = _solve(scenario)
    out["value"] = out["value"] + 0.5  # one field pushed far past its tolerance
    return out


'''


def _workspace(task: Path, ws: Path, source: str) -> Path:
    shutil.copytree(task / "environment" / "app" / "workspace", ws)
    (ws / "reconstruct.py").write_text(source)
    return ws


PLUGIN = Path(__file__).parent / "perf" / "cheap_oracle.py"


@pytest.fixture(scope="module")
def gradings(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of real gradings and histories of the four submissions."""
    root = tmp_path_factory.mktemp("gradings")
    reg = Registry()
    reg.load_plugin_file(PLUGIN)
    task = build_task(reg, "cheap_poly", root / "tasks", workers=1).path
    reference = (task / "solution" / "reconstruct.py").read_text()
    cut = reference.rindex('if __name__ == "__main__":')
    with tarfile.open(task / "environment/app/observations/reference_outputs.tar.gz") as tar:
        member = tar.extractfile("public_1/oracle_output.json")
        assert member is not None
        published = json.loads(member.read())
    ws = {
        "reference": _workspace(task, root / "ws" / "reference", reference),
        "constant": _workspace(task, root / "ws" / "constant", f"print({json.dumps(json.dumps(published))})\n"),
        "crash": _workspace(task, root / "ws" / "crash", "import sys\nsys.exit('boom: not written yet')\n"),
        "partial": _workspace(task, root / "ws" / "partial", reference[:cut] + PARTIAL_PATCH + reference[cut:]),
    }
    runner = CliRunner()
    common = ["--runtime", "local", "--plugin", str(PLUGIN)]
    # reference: watched; the first grading is a full pass, so watch stops by itself
    res = runner.invoke(cli, ["watch", str(task), "--workspace", str(ws["reference"]), "--every", "1h",
                              "--history", str(root / "reference.jsonl"), "--label", "reference", *common])
    assert res.exit_code == 0, res.output
    # crash: a checkpoint series of two gradings, plus its grading.json
    for _ in range(2):
        res = runner.invoke(cli, ["grade", str(task), "--workspace", str(ws["crash"]), "--label", "crash",
                                  "--history", str(root / "crash.jsonl"), "--out", str(root / "crash"), "-q", *common])
        assert res.exit_code == 0, res.output
    # constant: grading.json through the command line
    res = runner.invoke(cli, ["grade", str(task), "--workspace", str(ws["constant"]), "--label", "constant",
                              "--out", str(root / "constant"), "-q", *common])
    assert res.exit_code == 0, res.output
    # partial: through the library, as `recon grade --json` would print it
    g = grade(task, ws["partial"], runtime="local", registry=reg, workspace_label="partial")
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


@pytest.fixture(scope="module")
def report(gradings: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("report")
    res = CliRunner().invoke(cli, ["report", str(gradings), "--out", str(out), "--title", "cheap <gradings>"])
    assert res.exit_code == 0, res.output
    return out, res.stdout


def test_report_references_every_png_of_the_expected_size(report: tuple[Path, str]) -> None:
    out, stdout = report
    assert stdout.strip() == str(out / "report.html")
    page = (out / "report.html").read_text()
    pngs = sorted(p.name for p in out.glob("*.png"))
    assert pngs == ["dense_vs_binary.png", "ladder.png", "reward_over_time.png", "rungs.png"]
    referenced = sorted(set(re.findall(r'<img src="([^"]+)"', page)))
    assert referenced == pngs
    from matplotlib.image import imread

    for name in pngs:
        assert (out / name).stat().st_size > 10_000, name
        assert _png_size(out / name) == (FIGURE_WIDTH, figure_height(name, 4)) == (FIGURE_WIDTH, FIGURE_HEIGHT)
        pixels = imread(out / name)  # a drawn figure, not a blank canvas
        assert pixels.shape[:2] == (FIGURE_HEIGHT, FIGURE_WIDTH) and float(pixels[..., :3].std()) > 0.05, name


def test_report_tables_and_numbers(report: tuple[Path, str]) -> None:
    page = (report[0] / "report.html").read_text()
    assert "cheap &lt;gradings&gt;" in page and "<gradings>" not in page  # escaped
    for label in ("reference", "constant", "crash", "partial"):
        assert f">{label}</td>" in page
    # 4 submissions, 5 distinct gradings (the partial one is both a JSON file and a grading.json;
    # the second crash grading is both a history line and a grading.json)
    assert "5 grading(s) of 4 submission(s) on 1 task(s)" in page
    assert '0.250</div><div class="k">binary pass rate' in page
    assert "<h2>Checkpoint series</h2>" in page  # the crash series


def test_report_without_series_has_no_time_figure(gradings: Path, report: tuple[Path, str]) -> None:
    out = report[0].parent / "again"
    shutil.copytree(report[0], out)  # an earlier report's figures are in the folder
    rep = build_report([gradings / "constant" / "grading.json", gradings / "partial.json"], out)
    assert rep.records == 2 and rep.submissions == 2 and rep.tasks == ["recon/cheap_poly"]
    assert [f.name for f in rep.figures] == ["ladder.png", "dense_vs_binary.png", "rungs.png"]
    assert not (out / "reward_over_time.png").exists()  # not left behind
    assert "no reward-over-time figure" in rep.html.read_text()


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


def test_help_of_the_new_commands_imports_no_matplotlib() -> None:
    import subprocess
    import sys

    code = ("import sys\nfrom recon.cli import main\n"
            "for cmd in ('report', 'stats', 'watch', 'build'):\n"
            "    try:\n        main([cmd, '--help'])\n    except SystemExit:\n        pass\n"
            "print('LOADED', sorted({m.split('.')[0] for m in sys.modules} & {'matplotlib', 'numpy', 'laspy'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "LOADED []" in out, out
