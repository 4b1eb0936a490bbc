"""Every command's path options, relative and absolute.

Each command runs in-process (click's runner) twice: once from a working folder with
paths relative to it, once from an unrelated working folder with absolute paths. Inputs
are small: the cheap test oracle as a plugin file copied beside the test's own inputs, a
task of two public scenarios and one hidden one. ``recon build --all --out REL`` builds
every built-in and is tested in tests/test_dataset.py.
"""
from __future__ import annotations

import dataclasses
import importlib.util
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from recon import Registry
from recon.build import build_task
from recon.cli import cli
from recon.grader import grade, write_outputs
from recon.task import load_task

HERE = Path(__file__).parent
PERF = HERE / "perf"
SPEC = "n_public = 2\nn_hidden = 1\nseed = 5\n"

_spec = importlib.util.spec_from_file_location("bench_results", PERF / "bench_results.py")
assert _spec is not None and _spec.loader is not None
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder of inputs: plugin/, spec.toml, task/, ws/ (the reference), grading/,
    history.jsonl and jobs/ (a Harbor job folder made from that grading)."""
    root = tmp_path_factory.mktemp("inputs")
    (root / "plugin").mkdir()
    for f in ("cheap_oracle.py", "cheap_reference.py"):
        shutil.copy(PERF / f, root / "plugin" / f)
    (root / "spec.toml").write_text(SPEC)
    reg = Registry()
    reg.load_plugin_file(root / "plugin" / "cheap_oracle.py")
    built = build_task(reg, "cheap_poly", root / "built", n_public=2, n_hidden=1, workers=1).path
    built.rename(root / "task")
    shutil.rmtree(root / "built")
    task = root / "task"
    shutil.copytree(task / "environment" / "app" / "workspace", root / "ws")
    shutil.copy(task / "solution" / "reconstruct.py", root / "ws" / "reconstruct.py")
    g = grade(task, root / "ws", runtime="local", registry=reg, workspace_label="reference")
    write_outputs(g, root / "grading")
    res = CliRunner().invoke(cli, ["grade", str(task), "--workspace", str(root / "ws"), "--label", "reference",
                                   "--history", str(root / "history.jsonl"), "--runtime", "local", "-q",
                                   "--plugin", str(root / "plugin" / "cheap_oracle.py")])
    assert res.exit_code == 0, res.output
    bench.write_jobs(root / "jobs", g, models=1, tasks=2, failures=False)
    return root


@dataclasses.dataclass
class Where:
    mode: str
    base: Path  # the folder the relative paths are relative to

    def __call__(self, rel: str) -> str:
        """The argument naming ``base/rel``: relative in relative mode, absolute otherwise."""
        return rel if self.mode == "relative" else str(self.base / rel)

    def plugin(self) -> list[str]:
        return ["--plugin", self("in/plugin/cheap_oracle.py")]


@pytest.fixture(params=["relative", "absolute"])
def where(request: pytest.FixtureRequest, tmp_path: Path, inputs: Path, monkeypatch: pytest.MonkeyPatch) -> Where:
    base = tmp_path / "work"
    shutil.copytree(inputs, base / "in", symlinks=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(base if request.param == "relative" else elsewhere)
    return Where(request.param, base)


def run(*args: str) -> Result:
    res = CliRunner().invoke(cli, list(args))
    assert res.exit_code == 0, res.output
    assert "Traceback" not in res.output
    return res


def test_build_out_spec_plugin(where: Where) -> None:
    res = run("build", "cheap_poly", *where.plugin(), "--spec", where("in/spec.toml"), "--out", where("out/tasks"),
              "-q", "--workers", "1")
    target = where.base / "out" / "tasks" / "cheap_poly"
    assert Path(res.stdout.strip()).resolve() == target
    meta = load_task(target).meta
    assert meta["spec"]["seed"] == 5 and (meta["spec"]["n_public"], meta["spec"]["n_hidden"]) == (2, 1)


def test_sweep_out(where: Where) -> None:
    run("sweep", "cheap_poly", *where.plugin(), "--spec", where("in/spec.toml"), "--out", where("out/sweep"), "-q",
        "--workers", "1")
    out = where.base / "out" / "sweep"
    assert sorted(p.name for p in out.iterdir() if p.name.startswith("public_")) == ["public_1", "public_2"]


def test_grade_workspace_out_history(where: Where) -> None:
    res = run("grade", where("in/task"), "--workspace", where("in/ws"), "--out", where("out/grade"),
              "--history", where("out/h/history.jsonl"), "--runtime", "local", "--json", "-q", *where.plugin())
    assert json.loads(res.stdout)["reward"] == 1.0
    assert (where.base / "out" / "grade" / "reward.txt").read_text().strip() == "1.0"
    lines = (where.base / "out" / "h" / "history.jsonl").read_text().splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["reward"] == 1.0


def test_watch_workspace_history(where: Where) -> None:
    run("watch", where("in/task"), "--workspace", where("in/ws"), "--history", where("out/watch.jsonl"),
        "--count", "1", "--every", "1h", "--runtime", "local", "-q", *where.plugin())
    assert json.loads((where.base / "out" / "watch.jsonl").read_text())["reward"] == 1.0


def test_validate_task_dir(where: Where) -> None:
    # Whether a task this small is sound (a constant submission may luck into 5/6 with one
    # hidden scenario) is not the question here: that validate found, built and graded
    # the task named by the path is. Exit 1 is "checks ran, one failed"; a bad path is 2 or 3.
    res = CliRunner().invoke(cli, ["validate", where("in/task"), "--runtime", "local", "--json", "-q",
                                   *where.plugin()])
    assert res.exit_code in (0, 1) and "Traceback" not in res.output, res.output
    rows = {r["name"]: r for r in json.loads(res.stdout)["rows"]}
    assert rows["reference"]["passed"] and rows["reference"]["reward"] == 1.0
    assert rows["manifest hashes"]["passed"] and rows["leak audit"]["passed"]


def test_run_out(where: Where) -> None:
    run("run", where("in/task"), "--agent", "oracle", "--runtime", "local", "--out", where("out/run"), "-q",
        *where.plugin())
    assert json.loads((where.base / "out" / "run" / "reward.json").read_text())["reward"] == 1.0


def test_stats_task_dir(where: Where) -> None:
    res = run("stats", where("in/task"), "--json", "--no-run", *where.plugin())
    assert json.loads(res.stdout)


def test_report_inputs_and_out(where: Where) -> None:
    res = run("report", where("in/history.jsonl"), where("in/grading"), "--out", where("out/report"), "-q")
    assert Path(res.stdout.strip()).resolve() == where.base / "out" / "report" / "report.html"
    assert (where.base / "out" / "report" / "ladder.png").is_file()


def test_results_jobs_and_out(where: Where, inputs: Path, tmp_path: Path) -> None:
    res = run("results", where("in/jobs"), "--out", where("out/results"), "--no-figures", "-q")
    out = where.base / "out" / "results"
    assert Path(res.stdout.strip()).resolve() == out / "results.html"
    # the same bytes as from the absolute path of the original folder
    from recon.results import write_results

    ref = write_results([inputs / "jobs"], tmp_path / "ref", figures=False)
    assert (out / "results.json").read_bytes() == ref.json.read_bytes()
    assert json.loads((out / "results.json").read_text())["overall"]["trials"] == 2


def test_new_dir(where: Where) -> None:
    run("new", "path_probe", "--dir", where("out/pkg"))
    assert (where.base / "out" / "pkg" / "pyproject.toml").is_file()

