"""The ladder grader: property-based scoring, and real submissions on both runtimes."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recon import canonjson
from recon.grader import grade, write_outputs
from recon.ladder import load_ladder, score
from recon.runtimes.bwrap import bwrap_available
from recon.task import load_task
from recon.runtimes.base import Limits, RunResult, Runtime
from recon.validate import OFF_TEMPLATE, _perturb_module

# -- the score ------------------------------------------------------------------------------
ladders = st.lists(st.lists(st.booleans(), min_size=1, max_size=6), min_size=6, max_size=6)


def gated(outcomes: list[list[bool]]) -> list[list[bool] | None]:
    """What the grader examines: rung k+1 only when rung k passed."""
    out: list[list[bool] | None] = []
    for checks in outcomes:
        if out and (out[-1] is None or not all(out[-1])):
            out.append(None)
        else:
            out.append(checks)
    return out


@given(ladders)
def test_score_is_bounded_and_one_only_when_everything_passes(outcomes: list[list[bool]]) -> None:
    r, k, f = score(gated(outcomes))
    assert 0.0 <= r <= 1.0 and 0.0 <= f < 1.0
    assert (r == 1.0) == all(all(c) for c in outcomes)
    assert r == pytest.approx((k + f) / 6)


@given(ladders, st.integers(0, 5), st.integers(0, 5))
def test_score_is_monotone(outcomes: list[list[bool]], rung: int, check: int) -> None:
    before = score(gated(outcomes))[0]
    checks = outcomes[rung]
    improved = [list(c) for c in outcomes]
    improved[rung][check % len(checks)] = True
    assert score(gated(improved))[0] >= before


@given(ladders, st.lists(st.integers(0, 3), min_size=6, max_size=6), st.integers(0, 5), st.integers(0, 5))
def test_score_with_quorums_is_monotone_and_bounded(outcomes: list[list[bool]], allowed: list[int], rung: int,
                                                     check: int) -> None:
    def gated_q(rows: list[list[bool]]) -> list[list[bool] | None]:
        out: list[list[bool] | None] = []
        for i, checks in enumerate(rows):
            prev_ok = not out or (out[-1] is not None and out[-1].count(False) <= allowed[i - 1])
            out.append(checks if prev_ok else None)
        return out

    r, k, f = score(gated_q(outcomes), allowed)
    assert 0.0 <= r <= 1.0 and 0.0 <= f < 1.0 and r == pytest.approx((k + f) / 6)
    improved = [list(c) for c in outcomes]
    improved[rung][check % len(improved[rung])] = True
    assert score(gated_q(improved), allowed)[0] >= r


@given(ladders)
def test_rung_gating(outcomes: list[list[bool]]) -> None:
    g = gated(outcomes)
    r, k, f = score(g)
    # nothing above rung k+1 contributes
    assert all(x is None for x in g[k + 1:]) or k == 6
    if k < 6 and g[k] is not None:
        assert f == pytest.approx(sum(g[k]) / len(g[k]))


def test_built_in_ladder_is_the_design_ladder() -> None:
    lad = load_ladder("six_rung")
    assert [r.name for r in lad.rungs] == ["editable workspace", "reconstruct.py present", "speaks the contract",
                                          "runs on hidden scenarios", "outputs follow the truth, not replays",
                                          "matches hidden semantics"]
    assert lad.rungs[4].checks == ("tracks",)
    assert [r.quorum.allowed_failures(10) for r in lad.rungs] == [0, 0, 0, 0, 2, 0]


def test_bad_ladders_are_refused(tmp_path: Path) -> None:
    from recon.errors import SpecError

    (tmp_path / "odd.toml").write_text('name = "odd"\n[[rung]]\nindex = 1\nname = "a"\nscore = "1/2"\n'
                                       'description = "x"\nchecks = ["workspace_changed"]\n')
    with pytest.raises(SpecError, match=r"rung 1 score '1/2' is not 1/1"):
        load_ladder("odd", [tmp_path])
    (tmp_path / "unknown.toml").write_text('name = "unknown"\n[[rung]]\nindex = 1\nname = "a"\nscore = "1/1"\n'
                                           'description = "x"\nchecks = ["telepathy"]\n')
    with pytest.raises(SpecError, match="telepathy"):
        load_ladder("unknown", [tmp_path])


# -- real submissions ---------------------------------------------------------------------------
RUNTIMES = ["local", pytest.param("bwrap", marks=pytest.mark.skipif(not bwrap_available(), reason="bubblewrap is not usable here"))]
SIXTH = 1 / 6


def _reference(ws: Path, task: Path) -> None:
    shutil.copyfile(task / "solution" / "reconstruct.py", ws / "reconstruct.py")


def _constant(ws: Path, task: Path) -> None:
    out = load_task(task).public()[0].truth
    (ws / "reconstruct.py").write_text(f"import json, sys\nsys.stdin.read()\nprint(json.dumps({out!r}))\n")


def _replay(ws: Path, task: Path) -> None:
    from recon.validate import REPLAY_TEMPLATE

    t = load_task(task)
    table = [{"p": sd.parameters, "o": sd.truth} for sd in t.public()]
    (ws / "reconstruct.py").write_text(REPLAY_TEMPLATE.format(table=repr(table), axes=repr(t.meta["axes"])))


def _one_off(ws: Path, task: Path) -> None:
    shutil.copyfile(task / "solution" / "reconstruct.py", ws / "_reference.py")
    (ws / "recon_perturb.py").write_text(_perturb_module())
    fields = load_task(task).outputs
    field = next(n for n, s in sorted(fields.items()) if s["kind"] == "number")
    (ws / "reconstruct.py").write_text(OFF_TEMPLATE.format(field=field, spec=repr(fields[field])))


def _source(text: str):  # type: ignore[no-untyped-def]
    def write(ws: Path, task: Path) -> None:
        (ws / "reconstruct.py").write_text(text)
    return write


def _notes(ws: Path, task: Path) -> None:
    (ws / "notes.md").write_text("ideas: voxel grid first, then ICP\n")


def _untouched(ws: Path, task: Path) -> None:
    pass


READ_HIDDEN = '''import json, sys, pathlib
doc = json.load(sys.stdin)
target = pathlib.Path(open("target.txt").read().strip())
try:
    truth = json.loads((target / "hidden" / doc["id"] / "oracle_output.json").read_text())
except OSError as exc:
    truth = {}
    print(f"could not read hidden data: {exc}", file=sys.stderr)
print(json.dumps(truth))
'''

DAEMON = '''import json, os, sys, time
sys.stdin.read()
out_dir = open("target.txt").read().strip()
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(2)
        for name, text in (("reward.txt", "1.0\\n"), ("reward.json", '{"reward": 1.0, "binary": 1}')):
            try:
                open(os.path.join(out_dir, name), "w").write(text)
            except OSError:
                pass
        os._exit(0)
    os._exit(0)
print(json.dumps({}))
'''

CASES = {
    # name: (writer, lowest reward, highest reward, timeout override)
    "reference": (_reference, 1.0, 1.0, None),
    "untouched": (_untouched, 0.0, 0.0, None),
    "notes only": (_notes, SIXTH, SIXTH, None),
    "syntax error": (_source("def broken(:\n"), 1.5 * SIXTH, 1.5 * SIXTH, None),
    "crash": (_source("import sys\nsys.stdin.read()\nraise RuntimeError('no')\n"), 2 * SIXTH, 2 * SIXTH, None),
    "constant": (_constant, 4 * SIXTH, 5 * SIXTH - 1e-5, None),
    "nearest-public replay": (_replay, 4 * SIXTH, 5 * SIXTH - 1e-5, None),
    "one field off": (_one_off, 5 * SIXTH, 1.0 - 1e-5, None),
    "infinite sleep": (_source("import time\nwhile True:\n    time.sleep(1)\n"), 2 * SIXTH, 2 * SIXTH, 2.0),
    "400 MB of stdout": (_source("import sys\nchunk = 'x' * (1 << 20)\nfor _ in range(400):\n    sys.stdout.write(chunk)\n"),
                         2 * SIXTH, 2 * SIXTH, 10.0),
    "memory hog": (_source("blob = bytearray(10 * 1024 ** 3)\nprint('{}')\n"), 2 * SIXTH, 2 * SIXTH, 10.0),
    "fork storm": (_source("import os, time\nfor _ in range(5000):\n    try:\n        os.fork()\n    except OSError:\n        break\n"
                           "time.sleep(0.5)\nprint('{}')\n"), 2 * SIXTH, 2 * SIXTH, 5.0),
}


@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("case", sorted(CASES))
def test_submission_lands_in_its_band(case: str, runtime: str, lidar_task: Path, app_copy: Path) -> None:
    writer, lo, hi, timeout = CASES[case]
    ws = app_copy / "workspace"
    writer(ws, lidar_task)
    t0 = time.monotonic()
    g = grade(lidar_task, ws, runtime=runtime, nonce="band", timeout=timeout)
    took = time.monotonic() - t0
    assert lo - 1e-6 <= g["reward"] <= hi + 1e-6, (case, g["reward"], [c for r in g["rungs"] for c in r["checks"] if not c["passed"]][:3])
    assert g["binary"] == (1 if g["reward"] == 1.0 else 0)
    if timeout is not None:
        # every run is bounded by the wall limit; all runs on 2 workers plus start-up and probes
        meta = load_task(lidar_task).meta
        runs = len(meta["public"]) + len(meta["hidden"]) + 3
        assert took < runs / 2 * (timeout + 3) + 60, took


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_hidden_scenarios_cannot_be_read(runtime: str, lidar_task: Path, app_copy: Path) -> None:
    ws = app_copy / "workspace"
    (ws / "reconstruct.py").write_text(READ_HIDDEN)
    (ws / "target.txt").write_text(str(lidar_task / "tests"))
    g = grade(lidar_task, ws, runtime=runtime, nonce="peek")
    assert g["reward"] <= 2 * SIXTH + 1e-9
    reasons = " ".join(c["reason"] for r in g["rungs"] for c in r["checks"])
    assert "field" in reasons  # it printed {}: the fields are missing


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_daemon_cannot_rewrite_the_reward(runtime: str, lidar_task: Path, app_copy: Path, tmp_path: Path) -> None:
    out = tmp_path / "verifier"
    out.mkdir(mode=0o755)
    ws = app_copy / "workspace"
    (ws / "reconstruct.py").write_text(DAEMON)
    (ws / "target.txt").write_text(str(out))
    g = grade(lidar_task, ws, runtime=runtime, nonce="daemon")
    write_outputs(g, out)
    time.sleep(4)  # longer than the daemon's sleep
    assert (out / "reward.txt").read_text().strip() == str(g["reward"])
    assert json.loads((out / "reward.json").read_text()) == {"reward": g["reward"], "binary": 0}
    assert g["reward"] <= 2 * SIXTH + 1e-9


@pytest.mark.skipif(not bwrap_available(), reason="bubblewrap is not usable here")
def test_runtimes_agree_and_nonce_replays(lidar_task: Path, app_copy: Path) -> None:
    ws = app_copy / "workspace"
    _one_off(ws, lidar_task)
    a = grade(lidar_task, ws, runtime="local", nonce="same")
    b = grade(lidar_task, ws, runtime="bwrap", nonce="same")
    strip = lambda g: [(c["id"], c["passed"]) for r in g["rungs"] for c in r["checks"]]  # noqa: E731
    assert a["reward"] == b["reward"] and strip(a) == strip(b)
    assert a["probes"] == b["probes"] and a["nonce"] == "same"
    c = grade(lidar_task, ws, runtime="local", nonce="other")
    assert c["probes"] != a["probes"]


def test_a_probe_cache_draws_a_nonce_once_and_grades_the_same(lidar_task: Path, app_copy: Path, tmp_path: Path) -> None:
    ws = app_copy / "workspace"
    _one_off(ws, lidar_task)
    strip = lambda g: [(c["id"], c["passed"]) for r in g["rungs"] for c in r["checks"]]  # noqa: E731
    plain = grade(lidar_task, ws, runtime="local", nonce="kept")
    cache = tmp_path / "probes"
    first = grade(lidar_task, ws, runtime="local", nonce="kept", probe_cache=cache)
    second = grade(lidar_task, ws, runtime="local", nonce="kept", probe_cache=cache)
    assert plain["probes"] == first["probes"] == second["probes"] and len(plain["probes"]) == 3
    assert strip(plain) == strip(first) == strip(second) and plain["reward"] == second["reward"] < 1.0
    assert first["timings"]["probe_oracle"] > 10 * second["timings"]["probe_oracle"]   # read, not drawn again
    [kept] = [p for p in cache.iterdir() if not p.name.startswith(".")]
    assert (kept / "probes.json").is_file() and oct(cache.stat().st_mode & 0o777) == "0o700"
    other = grade(lidar_task, ws, runtime="local", nonce="other", probe_cache=cache)
    assert other["probes"] != plain["probes"] and len([p for p in cache.iterdir() if not p.name.startswith(".")]) == 2


def test_grading_document_and_outputs(lidar_task: Path, app_copy: Path, tmp_path: Path) -> None:
    ws = app_copy / "workspace"
    _reference(ws, lidar_task)
    g = grade(lidar_task, ws, runtime="local", nonce="doc", workspace_label="ref")
    assert g["reward"] == 1.0 and g["binary"] == 1 and g["rung"] == {"index": 6, "name": "matches hidden semantics"}
    meta = load_task(lidar_task).meta
    probes = int(meta["probes"])  # the build's probes per grading (tests/conftest.py: SMALL_BUILD)
    assert probes == 3 and g["nonce"] == "doc" and len(g["probes"]) == probes
    assert g["runs"] == len(meta["public"]) + len(meta["hidden"]) + probes
    assert g["ladder"] == "six_rung" and g["oracle_version"] == meta["oracle_version"] and g["recon_version"]
    ids = {c["id"] for r in g["rungs"] for c in r["checks"]}
    assert {"workspace_changed"} | {f"tracks:{f}" for f in load_task(lidar_task).outputs} <= ids
    n_fields = len(load_task(lidar_task).outputs)
    assert g["rungs"][4]["failed"] == 0 and g["rungs"][4]["may_fail"] == max(1, n_fields // 4)
    snap = g["workspace_snapshot"]
    assert snap["ok"] and snap["files"] >= 2 and snap["bytes"] > 0 and snap["skipped"] == 0
    match = [c for c in g["rungs"][5]["checks"] if c["id"].startswith("graded_match:hidden_1:")]
    assert match and all({"got", "want", "tolerance"} <= set(c) for c in match)
    write_outputs(g, tmp_path)
    assert float((tmp_path / "reward.txt").read_text()) == 1.0
    assert canonjson.read(tmp_path / "reward.json") == {"reward": 1.0, "binary": 1}
    assert canonjson.read(tmp_path / "grading.json")["nonce"] == "doc"


def test_test_sh_writes_the_three_files(lidar_task: Path, app_copy: Path, tmp_path: Path) -> None:
    ws = app_copy / "workspace"
    _constant(ws, lidar_task)
    logs = tmp_path / "logs"
    env = {**os.environ, "RECON_WORKSPACE": str(ws), "RECON_LOGS": str(logs), "RECON_RUNTIME": "local"}
    proc = subprocess.run(["bash", str(lidar_task / "tests" / "test.sh")], env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert {p.name for p in logs.iterdir()} >= {"reward.txt", "reward.json", "grading.json"}
    reward = float((logs / "reward.txt").read_text())
    assert 4 * SIXTH <= reward < 5 * SIXTH
    # and it still exits 0, with a zero reward, when the grader cannot run at all
    proc = subprocess.run(["bash", str(lidar_task / "tests" / "test.sh")],
                          env={**env, "RECON_WORKSPACE": str(tmp_path / "missing"), "RECON_GRADE_ARGS": "--probes -5"},
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0
    assert float((logs / "reward.txt").read_text()) == 0.0


# -- the workspace snapshot -------------------------------------------------------------------------
class RecordingRuntime(Runtime):
    """The local runtime, recording which workspace every run was given."""

    name = "local"

    def __init__(self) -> None:
        from recon.runtimes.local import LocalRuntime

        self.inner = LocalRuntime()
        self.seen: list[Path] = []

    def run(self, workspace: Path, scenario: dict, inputs: dict, limits: Limits, *, app_dir: Path | None = None) -> RunResult:  # type: ignore[override]
        self.seen.append(Path(workspace))
        return self.inner.run(workspace, scenario, inputs, limits, app_dir=app_dir)


def test_runs_see_the_snapshot_never_the_workspace(lidar_task: Path, app_copy: Path) -> None:
    ws = app_copy / "workspace"
    # the program edits its own workspace copy; the next run must not see the edit
    (ws / "reconstruct.py").write_text(
        "import json, os, sys\nsys.stdin.read()\nn = len(open('mark.txt').read()) if os.path.exists('mark.txt') else 0\n"
        "open('mark.txt', 'a').write('x')\nprint(json.dumps({'n': n}))\n")
    rt = RecordingRuntime()
    g = grade(lidar_task, ws, runtime=rt, nonce="snap", probes=0)
    assert rt.seen and all(p != ws.absolute() and ws.absolute() not in p.parents for p in rt.seen)
    assert len(set(rt.seen)) == 1 and not (ws / "mark.txt").exists()
    assert g["rung"]["index"] == 2  # it does not speak the contract, but it ran from the snapshot


def test_an_oversized_workspace_scores_zero_with_the_reason(lidar_task: Path, app_copy: Path) -> None:
    ws = app_copy / "workspace"
    _reference(ws, lidar_task)
    with open(ws / "big.bin", "wb") as f:  # sparse: counts 300 MiB, occupies nothing
        f.truncate(300 << 20)
    rt = RecordingRuntime()
    g = grade(lidar_task, ws, runtime=rt, nonce="big")
    assert g["reward"] == 0.0 and rt.seen == []
    [check] = g["rungs"][0]["checks"]
    assert not check["passed"] and "MiB" in check["reason"] and check["reason"] == g["workspace_snapshot"]["reason"]
    assert g["workspace_snapshot"]["ok"] is False


def test_a_user_ladder_may_still_name_the_legacy_families(lidar_task: Path, app_copy: Path, tmp_path: Path) -> None:
    task = tmp_path / "task"
    shutil.copytree(lidar_task, task, symlinks=True)
    legacy = (task / "tests" / "ladders" / "six_rung.toml").read_text()
    head, rest = legacy.split('[[rung]]\nindex = 5', 1)
    rung5 = ('[[rung]]\nindex = 5\nname = "outputs vary, not replays"\nscore = "5/6"\ndescription = "legacy"\n'
             'checks = ["replay", "variance", "response"]\n\n')
    (task / "tests" / "ladders" / "legacy.toml").write_text(
        (head + rung5 + "[[rung]]" + rest.split("[[rung]]", 1)[1]).replace('name = "six_rung"', 'name = "legacy"'))
    ws = app_copy / "workspace"
    _reference(ws, task)
    g = grade(task, ws, runtime="local", nonce="legacy", ladder="legacy")
    assert g["reward"] == 1.0 and g["ladder"] == "legacy"
    assert [c["id"] for c in g["rungs"][4]["checks"]] == ["replay", "variance", "response"]


def test_a_ladder_may_run_a_spread_of_the_public_scenarios(lidar_task: Path, app_copy: Path, tmp_path: Path) -> None:
    """`public_contract`'s `at_most`: rung 3 runs that many public scenarios, the same
    spread for every nonce (here 3 of the 8: numbers 0, 2 and 5); the graded set is all
    run, and the run budget counts only the runs made."""
    from recon.grader import RunBudget

    task = tmp_path / "task"
    shutil.copytree(lidar_task, task, symlinks=True)
    ladders = task / "tests" / "ladders"
    text = (ladders / "six_rung.toml").read_text().replace('name = "six_rung"', 'name = "spread"')
    (ladders / "spread.toml").write_text(re.sub(r"(?m)^at_most = \d+$", "at_most = 3", text))
    meta = load_task(task).meta
    assert len(meta["public"]) == 8 and load_ladder("spread", [ladders]).public_runs(8) == 3
    ws = app_copy / "workspace"
    # fails the contract on public_3 (one of the three run) and public_2 (not run)
    shutil.copyfile(task / "solution" / "reconstruct.py", ws / "reference.py")
    (ws / "reconstruct.py").write_text(
        "import io, json, runpy, sys\ndoc = sys.stdin.read()\nif json.loads(doc)['id'] in ('public_2', 'public_3'):\n"
        "    sys.exit(3)\nsys.stdin = io.StringIO(doc)\nrunpy.run_path('reference.py', run_name='__main__')\n")
    for nonce in ("a", "b"):
        g = grade(task, ws, runtime="local", nonce=nonce, ladder="spread")
        rung3 = g["rungs"][2]
        assert [c["id"] for c in rung3["checks"]] == [f"public_contract:public_{i}" for i in (1, 3, 6)]
        assert [c["passed"] for c in rung3["checks"]] == [True, False, True]
        assert g["rung"]["index"] == 2 and g["reward"] == pytest.approx((2 + 2 / 3) / 6, abs=1e-6)
    _reference(ws, task)
    g = grade(task, ws, runtime="local", nonce="a", ladder="spread")
    assert g["reward"] == 1.0 and g["runs"] == 3 + len(meta["hidden"]) + int(meta["probes"])
    assert g["limits"]["budget"] == round(RunBudget(load_task(task).limits, g["runs"]).total, 3)
