"""`recon results` on Harbor job folders.

A small study (4 models x 5 tasks) is written in Harbor 0.26's file formats by the
benchmark's writer (tests/perf/bench_results.py) from a real recon grading, with one trial
of each way a trial can fail; every number `recon results` reports is checked against the
writer's own record of what it wrote, computed here independently. The formats are
checked against Harbor's own pydantic models when Harbor is installed. The whole loop
(build --all, `harbor run -d` on a real engine, `recon results`) is in tests/test_harbor.py.
"""
from __future__ import annotations

import csv
import dataclasses
import importlib.util
import io
import json
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from recon._harborjobs import load_trials, read_trial
from recon.cli import cli
from recon.errors import UsageError
from recon.results import CSV_FILES, EARLY_SECONDS, SOFT_PASS, write_results

HERE = Path(__file__).parent
_spec = importlib.util.spec_from_file_location("bench_results", HERE / "perf" / "bench_results.py")
assert _spec is not None and _spec.loader is not None
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)

HARBOR_PY = Path(os.environ.get("RECON_HARBOR", "/opt/harbor-venv/bin/harbor")).with_name("python")
needs_harbor = pytest.mark.skipif(not HARBOR_PY.is_file(), reason="Harbor's venv is not installed (see .ci/run)")

# One trial of every way a trial can end, in fixed cells (model, task).
KINDS = {(1, 0): "zero", (1, 1): "verifier_timeout", (2, 2): "invalid", (2, 3): "missing", (3, 4): "corrupt",
         (3, 0): "agent_timeout"}
SCORED = ("scored", "agent_timeout", "duplicate")


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return bench.real_grading(tmp_path_factory.mktemp("grading"))


def _meaningful(written: list[dict[str, Any]]) -> bool:
    """Whether a study has what the checks below need: solves before and after the first
    hour, and series that drop."""
    scored = [r for r in written if r["kind"] in ("scored", "agent_timeout")]
    first = [next((c["t"] for c in r["checkpoints"] if c["reward"] >= SOFT_PASS), None) for r in scored]
    return (any(f is not None and f <= EARLY_SECONDS for f in first)
            and any(f is not None and f > EARLY_SECONDS for f in first)
            and any(b["reward"] < a["reward"] for r in scored for a, b in zip(r["checkpoints"], r["checkpoints"][1:])))


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory, template: dict[str, Any]) -> tuple[Path, list[dict[str, Any]]]:
    """4 models x 5 tasks; the writer also copies one trial into a second job folder. The
    first seed whose study has early and late solves and regressions (found the same way
    every run: the writer is deterministic)."""
    base = tmp_path_factory.mktemp("study")
    for seed in range(100):
        root = base / f"jobs{seed}"
        written = bench.write_jobs(root, template, models=4, tasks=5, kinds=KINDS, seed=seed)
        if _meaningful(written):
            break
        shutil.rmtree(root)
    else:  # pragma: no cover - the writer changed beyond recognition
        pytest.fail("no seed in 0..99 gives a study with early and late solves and regressions")
    assert sum(r["kind"] == "duplicate" for r in written) == 1
    return root, written


@pytest.fixture(scope="module")
def results(study: tuple[Path, list[dict[str, Any]]], tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("results")
    res = CliRunner().invoke(cli, ["results", str(study[0]), "--out", str(out), "--title", "study <4x5>"])
    assert res.exit_code == 0, res.output
    assert res.stdout.strip() == str(out / "results.html")
    return out, json.loads((out / "results.json").read_text())


def _label(r: dict[str, Any]) -> str:
    return f"{r['agent']} ({r['model']})" if r["model"] else r["agent"]


def _unique(written: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in written if r["kind"] != "duplicate"]


def _counted(r: dict[str, Any]) -> bool:
    return r["kind"] in ("scored", "agent_timeout", "zero")


def _value(r: dict[str, Any]) -> float:
    return r["reward"] if r["kind"] in ("scored", "agent_timeout") else 0.0


def _rows(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(path.read_text())))


def test_per_model_numbers_match_what_was_written(study: tuple[Path, list[dict]], results: tuple[Path, dict]) -> None:
    from scipy import stats

    written = _unique(study[1])
    doc = results[1]
    models = {r["model"]: r for r in doc["models"]}
    assert set(models) == {_label(r) for r in written} and len(models) == 4
    for label, row in models.items():
        mine = [r for r in written if _label(r) == label]
        counted = [r for r in mine if _counted(r)]
        values = [_value(r) for r in counted]
        assert row["trials"] == len(mine)
        assert row["scored"] == sum(r["kind"] in ("scored", "agent_timeout") for r in mine)
        assert row["failed"] == sum(r["kind"] in ("zero", "verifier_timeout", "invalid") for r in mine)
        assert row["failed_zero"] == sum(r["kind"] == "zero" for r in mine)
        assert row["missing"] == sum(r["kind"] in ("missing", "corrupt") for r in mine)
        assert row["counted"] == len(counted)
        assert row["dense_mean"] == pytest.approx(sum(values) / len(values), abs=1e-6)
        assert row["binary_mean"] == pytest.approx(sum(v == 1.0 for v in values) / len(values), abs=1e-6)
        assert row["soft_passes"] == sum(v >= SOFT_PASS for v in values)
        assert row["strict_passes"] == sum(v == 1.0 for v in values)
        mean = sum(values) / len(values)
        lo, hi = stats.t.interval(0.95, len(values) - 1, loc=mean, scale=stats.sem(values))
        assert row["dense_ci95"] == pytest.approx([max(0.0, lo), min(1.0, hi)], abs=1e-6)
    ranked = [r["dense_mean"] for r in doc["models"]]
    assert ranked == sorted(ranked, reverse=True)  # a leaderboard
    # the model CSV says the same
    csv_models = {r["model"]: r for r in _rows(results[0] / "models.csv")}
    for label, row in models.items():
        assert float(csv_models[label]["dense_mean"]) == row["dense_mean"]
        assert int(csv_models[label]["missing"]) == row["missing"]


def test_per_task_and_matrix_numbers(study: tuple[Path, list[dict]], results: tuple[Path, dict]) -> None:
    written = _unique(study[1])
    doc = results[1]
    tasks = {r["task"]: r for r in doc["tasks"]}
    assert sorted(tasks) == sorted({r["task"] for r in written}) and len(tasks) == 5  # missing trials too
    for name, row in tasks.items():
        counted = [r for r in written if r["task"] == name and _counted(r)]
        dense = sum(map(_value, counted)) / len(counted)
        binary = sum(_value(r) == 1.0 for r in counted) / len(counted)
        assert row["dense_mean"] == pytest.approx(dense, abs=1e-6)
        assert row["binary_mean"] == pytest.approx(binary, abs=1e-6)
        assert row["gap"] == pytest.approx(dense - binary, abs=2e-6)
        for r in written:
            if r["task"] == name:
                cell = doc["matrix"][name][_label(r)]
                assert cell["n"] == int(_counted(r)) and cell["not_counted"] == int(not _counted(r))
                assert cell["mean"] == (pytest.approx(_value(r), abs=1e-6) if _counted(r) else None)
    assert doc["overall"]["task_mean_dense"] == pytest.approx(
        sum(t["dense_mean"] for t in tasks.values()) / 5, abs=1e-6)
    matrix = _rows(results[0] / "matrix.csv")
    assert [r["task"] for r in matrix] == sorted(tasks)
    assert list(matrix[0])[1:] == [m["model"] for m in doc["models"]]


def _step(cps: list[dict[str, Any]], t: float) -> float:
    value = 0.0
    for c in cps:
        if c["t"] <= t:
            value = c["reward"]
    return value


def test_checkpoints_give_curves_solves_and_regressions(study: tuple[Path, list[dict]],
                                                         results: tuple[Path, dict]) -> None:
    written = _unique(study[1])
    doc = results[1]
    scored = [r for r in written if r["kind"] in ("scored", "agent_timeout")]
    assert all(len(r["checkpoints"]) >= 2 for r in scored)  # the synthetic trials carry series
    for m in doc["models"]:
        counted = [r for r in written if _label(r) == m["model"] and _counted(r)]
        curve = doc["reward_over_time"][m["model"]]
        for t in (0.0, 1800.0, EARLY_SECONDS, 5000.0, 10800.0):
            expected = sum(_step(r["checkpoints"], t) if r["kind"] != "zero" else 0.0 for r in counted) / len(counted)
            got = [v for (x, v) in curve if x <= t][-1]
            assert got == pytest.approx(expected, abs=1e-6), (m["model"], t)
        assert m["dense_at_early"] == pytest.approx(
            sum(_step(r["checkpoints"], EARLY_SECONDS) if r["kind"] != "zero" else 0.0 for r in counted) / len(counted),
            abs=1e-6)
        assert curve[-1][1] == pytest.approx(m["dense_mean"], abs=1e-6)  # the curve ends at the final rewards
    drops = [(r["job"], r["trial"], a["t"], b["t"]) for r in scored
             for a, b in zip(r["checkpoints"], r["checkpoints"][1:]) if b["reward"] < a["reward"]]
    assert drops, "the writer makes some series drop"
    assert sorted((g["job"], g["trial"], g["t_before"], g["t_after"]) for g in doc["regressions"]) == sorted(drops)
    solves = {(r["job"], r["trial"]): next((c["t"] for c in r["checkpoints"] if c["reward"] >= SOFT_PASS), None)
              for r in scored}
    solves = {k: v for k, v in solves.items() if v is not None}
    got = {(s["job"], s["trial"]): s["soft_seconds"] for s in doc["solves"] if s["soft_seconds"] is not None}
    assert got == solves and solves
    ov = doc["overall"]
    late = sum(v > EARLY_SECONDS for v in solves.values())
    assert ov["solves"] == len(solves) and ov["solves_after_early"] == late
    assert ov["share_solves_after_early"] == pytest.approx(late / len(solves), abs=1e-6)
    cps = _rows(results[0] / "checkpoints.csv")
    assert len(cps) == sum(len(r["checkpoints"]) for r in scored)


def test_failed_and_missing_trials_are_listed_with_their_reason(study: tuple[Path, list[dict]],
                                                                 results: tuple[Path, dict]) -> None:
    out, doc = results
    written = {(r["job"], r["trial"]): r for r in _unique(study[1])}
    rows = {(r["job"], r["trial"]): r for r in _rows(out / "trials.csv")}
    assert set(rows) == set(written)  # every trial folder, none dropped
    expect = {
        "zero": ("failed", "1", ["AgentSetupTimeoutError", "the verifier never ran"]),
        "verifier_timeout": ("failed", "0", ["VerifierTimeoutError", "the verifier ran but left no valid reward"]),
        "invalid": ("failed", "0", ["ApiError", "Harbor marks the reward invalid"]),
        "missing": ("missing", "0", ["no result.json"]),
        "corrupt": ("missing", "0", ["result.json is not valid JSON"]),
    }
    page = (out / "results.html").read_text()
    for key, r in written.items():
        row = rows[key]
        assert row["task"] == r["task"]  # a missing trial is named from its config.json, like the others
        assert row["model"] == _label(r)
        if r["kind"] in expect:
            status, counted, words = expect[r["kind"]]
            assert (row["status"], row["counted"]) == (status, counted), r["kind"]
            for w in words:
                assert w in row["reason"], (r["kind"], row["reason"])
            assert row["reason"].split(";")[0].replace("'", "&#x27;") in page
        elif r["kind"] == "agent_timeout":
            assert row["status"] == "scored" and "AgentTimeoutError" in row["notes"] and row["reason"] == ""
            assert float(row["reward"]) == r["reward"]
        else:
            assert row["status"] == "scored" and float(row["reward"]) == r["reward"]
            assert row["rung"] == str(min(6, int(r["reward"] * 6 + 1e-9))) and row["reward_source"] == "grading.json"
    assert "counts as R = 0" in page and "left out of means" in page


def test_a_trial_seen_twice_counts_once(study: tuple[Path, list[dict]], results: tuple[Path, dict],
                                        tmp_path: Path) -> None:
    root, written = study
    doc = results[1]
    assert doc["overall"]["trials"] == len(written) - 1 and doc["overall"]["duplicates"] == 1
    dup = next(r for r in written if r["kind"] == "duplicate")
    original = next(r for r in written if r["id"] == dup["id"] and r["kind"] != "duplicate")
    assert doc["duplicates"] == [{"trial": dup["id"], "kept": f"{original['job']}/{original['trial']}",
                                  "dropped": f"{dup['job']}/{dup['trial']}"}]
    # the same folder given twice, and a job folder inside another input: still once
    jobs = sorted(p for p in root.iterdir() if p.is_dir())
    loaded = load_trials([root, jobs[0], root])
    assert len(loaded.trials) == len(written) - 1


def test_outputs_are_a_function_of_the_job_folders(study: tuple[Path, list[dict]], results: tuple[Path, dict],
                                                   tmp_path: Path) -> None:
    root = study[0]
    # the job folders one by one, in reverse order, into another folder: the same bytes
    jobs = sorted((p for p in root.iterdir() if p.is_dir()), reverse=True)
    rep = write_results(jobs, tmp_path / "again", figures=False)
    assert rep.figures == [] and not list((tmp_path / "again").glob("*.png"))
    for name in ("results.json", *CSV_FILES):
        assert (tmp_path / "again" / name).read_bytes() == (results[0] / name).read_bytes(), name
    # nothing of where the folders live, or when the results were written
    text = (results[0] / "results.json").read_text()
    assert str(root) not in text and str(tmp_path) not in text


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", path
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_page_references_every_figure(results: tuple[Path, dict]) -> None:
    import re

    from matplotlib.image import imread

    out, doc = results
    page = (out / "results.html").read_text()
    assert "study &lt;4x5&gt;" in page and "<4x5>" not in page
    pngs = sorted(p.name for p in out.glob("*.png"))
    assert pngs == sorted(["reward_over_time.png", "solves_over_time.png", "dense_vs_binary.png", "models.png",
                           "final_rungs.png"])
    imgs = re.findall(r'<img src="([^"]+)" width="(\d+)" height="(\d+)"', page)
    assert sorted(i[0] for i in imgs) == pngs
    for name, w, h in imgs:
        assert _png_size(out / name) == (int(w), int(h)), name
        pixels = imread(out / name)
        assert float(pixels[..., :3].std()) > 0.05, name  # drawn, not blank
    for m in doc["models"]:
        assert f"<td>{m['model']}</td>" in page
    for name in CSV_FILES:
        assert (out / name).stat().st_size > 0


def _mutable_study(tmp_path: Path, template: dict[str, Any]) -> tuple[Path, list[dict[str, Any]]]:
    root = tmp_path / "jobs"
    written = bench.write_jobs(root, template, models=1, tasks=6, failures=False, seed=5)
    return root, written


def test_damaged_verifier_files_and_foreign_tasks(tmp_path: Path, template: dict[str, Any]) -> None:
    root, w = _mutable_study(tmp_path, template)
    v = [r["dir"] / "verifier" for r in w]
    # 0: grading.json damaged, reward.json intact: Harbor's reward stands, with a note
    (v[0] / "grading.json").write_text("{not json")
    # 1: grading.json disagrees with the reward Harbor recorded: stale files, left out
    g = json.loads((v[1] / "grading.json").read_text())
    g["reward"] = 1.0 if w[1]["reward"] < 1.0 else 0.5
    (v[1] / "grading.json").write_text(json.dumps(g))
    # 2: malformed checkpoint series: the final reward alone, with a note
    g = json.loads((v[2] / "grading.json").read_text())
    g["checkpoints"][0]["reward"] = 7
    (v[2] / "grading.json").write_text(json.dumps(g))
    # 3: a task that is not recon's: reward.txt only
    for f in ("grading.json", "reward.json"):
        (v[3] / f).unlink()
    # 4: a trial killed as it started: Harbor made its folders, nothing else
    shutil.rmtree(w[4]["dir"])
    (w[4]["dir"] / "agent").mkdir(parents=True)
    # and a folder in the job folder that is no trial at all
    (w[5]["dir"].parent / "notes").mkdir()
    loaded = load_trials([root])
    assert loaded.ignored == [f"{w[5]['job']}/notes"]
    t = {x.name: x for x in loaded.trials}
    a = t[w[0]["trial"]]
    assert a.status == "scored" and a.reward == w[0]["reward"] and a.reward_source == "reward.json" and a.rung is None
    assert any("grading.json is not valid JSON" in n for n in a.notes)
    b = t[w[1]["trial"]]
    assert b.status == "failed" and not b.counted and "Harbor recorded" in b.reason
    c = t[w[2]["trial"]]
    assert c.status == "scored" and len(c.checkpoints) == 1 and c.checkpoints[0].reward == w[2]["reward"]
    assert any("checkpoints ignored: checkpoint 0 has reward=7" in n for n in c.notes)
    assert c.checkpoints[0].t == pytest.approx(w[2]["checkpoints"][-1]["t"], abs=1e-3)  # the agent phase's length
    d = t[w[3]["trial"]]
    assert d.status == "scored" and d.reward_source == "reward.txt" and d.rung is None and d.counted
    e = t[w[4]["trial"]]
    assert e.status == "missing" and e.task == "unknown task" and "no result.json" in e.reason
    assert e.label == a.label  # named after the job's only agent
    doc = write_results([root], root / w[5]["job"] / "results").doc  # results written inside the job: not a trial
    assert doc["ignored_folders"] == [f"{w[5]['job']}/notes"] and doc["overall"]["trials"] == 6
    assert doc["final_rungs"][doc["models"][0]["model"]]["no rung"] == 2  # the reward.json and reward.txt ones
    assert doc["models"][0]["counted"] == 4 and doc["models"][0]["missing"] == 1


def test_inputs_a_trial_folder_nested_folders_and_errors(tmp_path: Path, template: dict[str, Any]) -> None:
    root, w = _mutable_study(tmp_path, template)
    one = read_trial(w[0]["dir"], "x")
    assert load_trials([w[0]["dir"]]).trials[0].key == one.key == w[0]["id"]
    nest = tmp_path / "study" / "runs"
    nest.mkdir(parents=True)
    shutil.move(str(root), nest / "jobs")
    assert len(load_trials([tmp_path / "study"]).trials) == 6  # a folder of folders of job folders
    runner = CliRunner()
    (tmp_path / "empty").mkdir()
    (tmp_path / "file.json").write_text("{}")
    for bad, words in ((tmp_path / "nope", "does not exist"), (tmp_path / "file.json", "is a file"),
                       (tmp_path / "empty", "no Harbor trials found")):
        res = runner.invoke(cli, ["results", str(bad), "--out", str(tmp_path / "o")])
        assert res.exit_code == 2 and words in res.output and "Traceback" not in res.output, res.output
    with pytest.raises(UsageError):
        load_trials([])


def test_help_and_tables_only_import_no_matplotlib(study: tuple[Path, list[dict]], tmp_path: Path) -> None:
    code = ("import sys\nfrom recon.cli import main\n"
            "try:\n    main(['results', '--help'])\nexcept SystemExit:\n    pass\n"
            "heavy = {'matplotlib', 'numpy', 'scipy'}\n"
            "print('HELP', sorted({m.split('.')[0] for m in sys.modules} & heavy))\n"
            "from recon.results import write_results\n"
            f"write_results([{str(study[0])!r}], {str(tmp_path / 'o')!r}, figures=False)\n"
            "print('TABLES', sorted({m.split('.')[0] for m in sys.modules} & {'matplotlib'}))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "HELP []" in out and "TABLES []" in out, out


@needs_harbor
def test_the_study_files_are_harbor_documents(study: tuple[Path, list[dict]], tmp_path: Path) -> None:
    """Every result.json and config.json the writer makes is accepted by Harbor's own
    models, and a result.json as Harbor itself serialises it reads the same."""
    root, written = study
    ok = [r for r in _unique(written) if r["kind"] not in ("missing", "corrupt")]
    check = (
        "import json, sys\nfrom pathlib import Path\n"
        "from harbor.models.trial.result import TrialResult\nfrom harbor.models.trial.config import TrialConfig\n"
        "from harbor.models.job.config import JobConfig\nfrom harbor.models.job.result import JobResult\n"
        "root, out = Path(sys.argv[1]), Path(sys.argv[2])\nn = 0\n"
        "for d in sorted(p for p in root.iterdir() if p.is_dir()):\n"
        "    JobConfig.model_validate_json((d / 'config.json').read_text())\n"
        "    if (d / 'result.json').is_file():\n"
        "        JobResult.model_validate_json((d / 'result.json').read_text())\n"
        "    for t in sorted(p for p in d.iterdir() if p.is_dir()):\n"
        "        TrialConfig.model_validate_json((t / 'config.json').read_text())\n"
        "        try:\n"
        "            r = TrialResult.model_validate_json((t / 'result.json').read_text())\n"
        "        except (FileNotFoundError, ValueError):\n"
        "            continue\n"
        "        n += 1\n"
        "        (out / (d.name + '__' + t.name + '.json')).write_text(r.model_dump_json(indent=4))\n"
        "print(n)\n")
    out = tmp_path / "dumped"
    out.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    proc = subprocess.run([str(HARBOR_PY), "-c", check, str(root), str(out)], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    assert int(proc.stdout) == len(ok) + 1  # and the duplicate's copy
    for r in ok:
        redone = tmp_path / "redone" / r["trial"]
        shutil.copytree(r["dir"], redone)
        (redone / "result.json").write_text((out / f"{r['job']}__{r['trial']}.json").read_text())
        a, b = read_trial(r["dir"], r["job"]), read_trial(redone, r["job"])
        assert dataclasses.replace(a, path=b.path) == b, r["kind"]
