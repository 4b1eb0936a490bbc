"""Nothing a submission prints crashes `recon grade`.

Each attack is a real program graded by a real `recon grade` subprocess on the local
runtime (a segfault in the grader must not take pytest down with it). The grading must
finish, write grading.json and the reward files, and fail the scenario's contract check
with a reason that names the problem.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from recon.task import load_task

# The reference solution's output with one field replaced by raw JSON text: everything
# else is right, so the hostile value travels as far into the grader as it can get.
INJECTOR = """import contextlib, io, json, runpy, sys
buf = io.StringIO()
with contextlib.redirect_stdout(buf):
    runpy.run_path("_reference.py", run_name="__main__")
out = json.loads(buf.getvalue())
orig = out[{field!r}]  # the attack may vary with it, so that it travels past the variance checks of old
out[{field!r}] = "@@ATTACK@@"
sys.stdout.write(json.dumps(out).replace('"@@ATTACK@@"', {raw}))
"""

ATTACKS = {
    # name: (task, kind of the field attacked (None: the whole output), raw JSON source,
    #        words the contract check's reason must contain)
    "200,000 nested brackets": ("lidar_icp", None, "'[' * 200000 + ']' * 200000", "nests 200000 levels deep"),
    "1e999": ("lidar_icp", "number", "'1e999'", "is not a finite float"),
    "406-digit integer": ("lidar_icp", "number", "'9' * 400 + '%06d' % (int(orig * 1e6) % 10 ** 6)", "beyond +-2**63"),
    "lone surrogate": ("lidar_icp", "exact", r"""'"\\udc80' + str(orig) + '"'""", "lone UTF-16 surrogate"),
    "20,000-atom SMILES": ("chem_smarts", "set", "'[\"' + 'C' * 20000 + '\"]'", "item 0 is 20000 characters long"),
}


def field_of_kind(task: Path, kind: str) -> str:
    """The first output field of ``kind`` (the attacks follow the oracles as they change)."""
    fields = load_task(task).outputs
    names = [n for n, s in sorted(fields.items()) if s["kind"] == kind]
    assert names, f"{task.name} has no {kind} field"
    return names[0]


def write_attack(ws: Path, task: Path, kind: str | None, raw: str) -> None:
    if kind is None:
        (ws / "reconstruct.py").write_text(f"import sys\nsys.stdin.read()\nsys.stdout.write({raw})\n")
        return
    shutil.copyfile(task / "solution" / "reconstruct.py", ws / "_reference.py")
    (ws / "reconstruct.py").write_text(INJECTOR.format(field=field_of_kind(task, kind), raw=raw))


@pytest.fixture(scope="module")
def tasks(lidar_task: Path, chem_task: Path) -> dict[str, Path]:
    return {"lidar_icp": lidar_task, "chem_smarts": chem_task}


def recon_grade(task: Path, ws: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "recon", "grade", str(task), "--workspace", str(ws), "--runtime", "local",
                           "--nonce", "hostile", "--out", str(out), "-q", *extra],
                          capture_output=True, text=True, timeout=900, env={**os.environ, "PYTHONFAULTHANDLER": "1"})


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_hostile_output_is_a_contract_failure(attack: str, tasks: dict[str, Path], tmp_path: Path) -> None:
    task_name, field, raw, needle = ATTACKS[attack]
    ws = tmp_path / "ws"
    ws.mkdir()
    write_attack(ws, tasks[task_name], field, raw)
    out = tmp_path / "out"
    proc = recon_grade(tasks[task_name], ws, out)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert {"grading.json", "reward.json", "reward.txt"} <= {p.name for p in out.iterdir()}
    g = json.loads((out / "grading.json").read_text(encoding="utf-8"))
    assert float((out / "reward.txt").read_text()) == g["reward"] == pytest.approx(2 / 6)  # rung 2, nothing of rung 3
    [check] = [c for c in g["rungs"][2]["checks"] if c["id"] == "public_contract:public_1"]
    assert not check["passed"] and needle in check["reason"], check["reason"]
    assert len(check["reason"]) < 400
    assert (out / "grading.json").stat().st_size < 200_000


def test_a_huge_exact_value_is_recorded_bounded(tasks: dict[str, Path], tmp_path: Path) -> None:
    """The reference, with its Exact field replaced by a 50 KB list (legal for an Exact
    field, and under the 64 KiB a grading keeps of a field): rung 5 loses that one field,
    rung 6 records the value cut short."""
    task = tasks["lidar_icp"]
    exact, number = field_of_kind(task, "exact"), field_of_kind(task, "number")
    ws = tmp_path / "ws"
    ws.mkdir()
    shutil.copyfile(task / "solution" / "reconstruct.py", ws / "_reference.py")
    (ws / "reconstruct.py").write_text(
        "import contextlib, io, json, runpy\nbuf = io.StringIO()\n"
        "with contextlib.redirect_stdout(buf):\n    runpy.run_path('_reference.py', run_name='__main__')\n"
        f"out = json.loads(buf.getvalue())\nout[{exact!r}] = [[123456, 'x' * 10]] * 2500 + [out[{exact!r}], out[{number!r}]]\n"
        "print(json.dumps(out))\n")
    out = tmp_path / "out"
    proc = recon_grade(task, ws, out)
    assert proc.returncode == 0, proc.stderr[-3000:]
    g = json.loads((out / "grading.json").read_text(encoding="utf-8"))
    assert g["rung"]["index"] == 5 and not any(c["passed"] for c in g["rungs"][5]["checks"] if c["field"] == exact)
    match = [c for c in g["rungs"][5]["checks"] if c["field"] == exact]
    assert match and all(c["got_truncated"] and isinstance(c["got"], str) and len(c["got"]) <= 400 for c in match)
    assert (out / "grading.json").stat().st_size < 300_000


def test_workspace_file_names_that_are_not_utf8_still_write_grading_json(tasks: dict[str, Path], tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / os.fsdecode(b"notes-\xff.md")).write_text("x")
    out = tmp_path / "out"
    proc = recon_grade(tasks["lidar_icp"], ws, out, "--probes", "0")
    assert proc.returncode == 0, proc.stderr[-3000:]
    g = json.loads((out / "grading.json").read_text(encoding="utf-8"))
    assert g["rungs"][0]["passed"] and "notes-" in g["rungs"][0]["checks"][0]["reason"]


def _tiny_outcomes(tmp_path: Path, injector: str) -> tuple[Any, list[Any]]:
    """The tiny task's public scenarios run in-process (``run_outcomes``) on the reference
    with ``injector`` (INJECTOR, filled in) around it: the task and the outcomes."""
    from recon import Registry
    from recon.build import build_task
    from recon.grader import graded_from, run_outcomes
    from recon.runtimes.local import LocalRuntime

    reg = Registry.default(entry_points=False)
    reg.load_plugin_file(Path(__file__).parent / "fixtures" / "tiny" / "tiny.py")
    built = build_task(reg, "tiny_series", tmp_path / "task", n_public=3, n_hidden=2, probes=0, select="random").path
    task = load_task(built)
    ws = tmp_path / "ws"
    ws.mkdir()
    shutil.copyfile(built / "solution" / "reconstruct.py", ws / "_reference.py")
    (ws / "reconstruct.py").write_text(injector)
    public, _ = graded_from(task)
    rt = LocalRuntime()
    try:
        return task, run_outcomes(rt, ws, public, task.limits, task.app_dir, task.outputs, 2)
    finally:
        rt.close()


def test_a_grading_keeps_only_the_declared_fields_of_what_a_run_prints(tmp_path: Path) -> None:
    """A grading holds every run's outcome to its end: a run that prints megabytes of keys
    the contract does not declare costs it nothing (80 such runs once held 6.8 GB)."""
    task, outcomes = _tiny_outcomes(tmp_path, INJECTOR.replace("{field!r}", "'pad'")
                                    .replace("{raw}", "'\"' + 'x' * (4 << 20) + '\"'")
                                    .replace("orig = out['pad']  #", "#"))
    assert [oc.problems for oc in outcomes] == [[]] * len(outcomes) and outcomes
    for oc in outcomes:
        assert oc.result.stdout == b"" and set(oc.output) == set(task.outputs)
        assert all(oc.output[n] == oc.graded.truth[n] for n in task.outputs)


def test_a_field_far_larger_than_any_answer_is_refused_not_kept(tmp_path: Path) -> None:
    """An `exact` field takes any shape: half a million objects in it, on every run, once held
    gigabytes to the end of a grading."""
    from recon.grader import FIELD_FLOOR

    _, outcomes = _tiny_outcomes(tmp_path, INJECTOR.format(field="rising", raw="'[' + ','.join(['{}'] * 100000) + ']'"))
    assert outcomes
    for oc in outcomes:
        assert oc.output is None and len(oc.problems) == 1, oc.problems
        assert "field 'rising' holds 300001 bytes of JSON" in oc.problems[0] and 300001 > FIELD_FLOOR
