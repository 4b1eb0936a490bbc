"""Checkpoint series that cannot be gamed: each snapshot is graded on itself alone, the
series is read without being changed, nothing in the agent's tree is taken for metadata,
and the sidecar survives any workspace. Every grading case runs on each runtime that can
confine a run (local with namespaces, local with Landlock, bwrap); a runtime that cannot
refuses the series instead of grading it wrongly. The same attack under Harbor on a real
engine is in test_harbor.py."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from recon import Registry, canonjson
from recon.build import build_task
from recon.checkpoints import checkpointer_files, grade_checkpoints, grade_series
from recon.grader import grade, write_outputs
from recon.runtimes._launcher import landlock_abi
from recon.runtimes.base import Runtime
from recon.runtimes.bwrap import BwrapRuntime, bwrap_available
from recon.runtimes.local import LocalRuntime
from recon.runtimes.snapshot import tree_digest
from recon.task import load_task

TINY = Path(__file__).parent / "fixtures" / "tiny" / "tiny.py"
IS_ROOT = os.geteuid() == 0


@pytest.fixture(scope="module")
def tiny_task(tmp_path_factory: pytest.TempPathFactory) -> Path:
    reg = Registry.default(entry_points=False)
    reg.load_plugin_file(TINY)
    out = tmp_path_factory.mktemp("tiny")
    return build_task(reg, "tiny_series", out, n_public=4, n_hidden=3, probes=2, select="random").path


@pytest.fixture
def where(tmp_path: Path) -> Iterator[Path]:
    """A private folder outside the temp directories (which some sandboxes replace with an
    empty tmpfs anyway): inside the checkout, where an author's workspaces and a built
    task's checkpoints may well lie, and where a run could once read them."""
    d = Path(tempfile.mkdtemp(prefix=".series-", dir=Path(__file__).parent))
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def _runtime(kind: str) -> Runtime:
    if kind == "local":
        rt = LocalRuntime()
        if rt.mode != "isolate":
            pytest.skip("no namespaces here")
        return rt
    if kind == "local-landlock":
        if landlock_abi() < 1:
            pytest.skip("this kernel has no Landlock")
        if not IS_ROOT:
            pytest.skip("without root a run is the user's own process: what it leaves cannot be cleared")
        return LocalRuntime(namespaces=False)
    if not bwrap_available():
        pytest.skip("bwrap cannot create a sandbox here")
    return BwrapRuntime()


@pytest.fixture(params=["local", "local-landlock", "bwrap"])
def confining(request: pytest.FixtureRequest) -> Iterator[Runtime]:
    rt = _runtime(request.param)
    assert rt.confines_view and rt.separates_runs
    yield rt
    rt.close()


def _snapshot(root: Path, index: int, t: float, files: dict[str, str], *, ok: bool = True) -> Path:
    """A snapshot as the sidecar leaves it: NNN/ with the agent's files, NNN.json beside."""
    d = root / f"{index:03d}"
    d.mkdir(parents=True)
    for name, text in files.items():
        (d / name).write_text(text)
    (root / f"{index:03d}.json").write_text(json.dumps({"index": index, "t": t, "ok": ok, "reason": "",
                                                        "files": len(files), "bytes": 0, "skipped": 0}))
    return d


def _attacker(final_ws: Path, series: Path) -> str:
    """An early workspace that only runs whatever solver it can find at grading time: the
    final workspace, any other snapshot, the grader's own copies of them."""
    return textwrap.dedent(f"""
        import glob, os, runpy, sys
        me = open(__file__).read()
        found = [{str(final_ws / "reconstruct.py")!r}]
        found += sorted(glob.glob({str(series)!r} + "/*/reconstruct.py"))
        found += sorted(glob.glob("/tmp/recon-*/*/reconstruct.py")) + sorted(glob.glob("/tmp/recon-*/*/*/reconstruct.py"))
        for path in found:
            try:
                text = open(path).read()
            except OSError:
                continue
            if text != me:
                sys.argv = [path]
                runpy.run_path(path, run_name="__main__")
                raise SystemExit(0)
        sys.stdin.read()
        print("{{}}")
    """)


def _grade_series(task: Path, final_ws: Path, series: Path, rt: Runtime, nonce: str = "series") -> dict[str, Any]:
    t = load_task(task)
    g = grade(t, final_ws, runtime=rt, nonce=nonce, workers=2)
    return grade_checkpoints(t, g, series, runtime=rt, workers=2)


def test_a_checkpoint_is_graded_on_its_own_snapshot(tiny_task: Path, confining: Runtime, where: Path) -> None:
    tmp_path = where
    reference = (tiny_task / "solution" / "reconstruct.py").read_text()
    final_ws = tmp_path / "final"
    final_ws.mkdir()
    (final_ws / "reconstruct.py").write_text(reference)
    series = tmp_path / "checkpoints"
    early = _snapshot(series, 1, 1.0, {"reconstruct.py": _attacker(final_ws, series)})
    _snapshot(series, 2, 2.0, {"reconstruct.py": reference})
    g = _grade_series(tiny_task, final_ws, series, confining)
    alone = grade(load_task(tiny_task), early, runtime=confining, nonce="series", workers=2)
    assert alone["reward"] < 0.5, alone["reward"]                # graded alone it finds nothing
    rewards = [c["reward"] for c in g["checkpoints"]]
    assert rewards == [alone["reward"], 1.0, 1.0], rewards     # and in the series it finds nothing either


@pytest.mark.parametrize("landlock", [False, True])
def test_a_runtime_that_cannot_confine_or_clear_refuses_the_series(tiny_task: Path, where: Path,
                                                                   landlock: bool) -> None:
    """Without Landlock nothing confines what a run reads; with it, a run as the grader's own
    user (no root, no namespaces) is still that user's process, and what it leaves in
    /dev/shm or System V IPC cannot be told from the user's own, so it is never cleared:
    an early snapshot's runs read what the final workspace's runs left there."""
    if landlock and landlock_abi() < 1:
        pytest.skip("this kernel has no Landlock")
    tmp_path = where
    rt = (LocalRuntime(drop_privileges=False, landlock=landlock) if IS_ROOT
          else LocalRuntime(landlock=landlock))
    assert rt.mode == "reap" and not rt.separates_runs and rt.confines_view == landlock
    final_ws = tmp_path / "final"
    final_ws.mkdir()
    (final_ws / "reconstruct.py").write_text((tiny_task / "solution" / "reconstruct.py").read_text())
    series = tmp_path / "checkpoints"
    _snapshot(series, 1, 1.0, {"reconstruct.py": _attacker(final_ws, series)})
    g = _grade_series(tiny_task, final_ws, series, rt)
    assert "checkpoints" not in g
    assert ("cannot clear what a run leaves" if landlock else "cannot confine") in g["checkpoints_refused"]
    assert g["reward"] == 1.0                                  # the final workspace is still graded


def test_grading_a_series_twice_reads_it_and_changes_nothing(tiny_task: Path, tmp_path: Path) -> None:
    rt = _runtime("bwrap" if bwrap_available() else "local")
    reference = (tiny_task / "solution" / "reconstruct.py").read_text()
    final_ws = tmp_path / "final"
    final_ws.mkdir()
    (final_ws / "reconstruct.py").write_text(reference)
    series = tmp_path / "checkpoints"
    _snapshot(series, 1, 30.0, {"reconstruct.py": 'print("{}")\n'})
    _snapshot(series, 2, 60.0, {"reconstruct.py": reference.replace('"summary": summary', '"summary": summary * 2')})
    _snapshot(series, 3, 90.0, {"reconstruct.py": reference})
    before = tree_digest(series)
    first = _grade_series(tiny_task, final_ws, series, rt)["checkpoints"]
    second = _grade_series(tiny_task, final_ws, series, rt)["checkpoints"]
    assert tree_digest(series) == before
    assert [c["t"] for c in first] == [30.0, 60.0, 90.0, None]
    assert first == second and len(first) == 4
    assert first[0]["reward"] < first[1]["reward"] < first[2]["reward"] == 1.0


def test_metadata_in_the_agents_tree_decides_nothing(tiny_task: Path, tmp_path: Path) -> None:
    """A regression must not inherit an earlier reward through a copied or forged metadata
    file, nor shift its time: only the sidecar's NNN.json beside the tree counts, and
    only digests the grader computes."""
    rt = _runtime("bwrap" if bwrap_available() else "local")
    reference = (tiny_task / "solution" / "reconstruct.py").read_text()
    final_ws = tmp_path / "final"
    final_ws.mkdir()
    (final_ws / "reconstruct.py").write_text('print("{}")\n')
    series = tmp_path / "checkpoints"
    good = _snapshot(series, 1, 60.0, {"reconstruct.py": reference})
    digest = tree_digest(good)
    forged = {"index": 1, "t": 5.0, "ok": True, "digest": digest}
    _snapshot(series, 2, 120.0, {"reconstruct.py": 'print("{}")\n', ".recon-checkpoint.json": json.dumps(forged),
                                 "digest": digest})
    series_out = _grade_series(tiny_task, final_ws, series, rt)["checkpoints"]
    assert series_out[0]["reward"] == 1.0
    assert series_out[1]["reward"] < 0.5 and series_out[1]["t"] == 120.0
    assert series_out[1]["digest"] != digest


def test_a_snapshot_without_sidecar_metadata_is_not_graded(tiny_task: Path, tmp_path: Path) -> None:
    rt = _runtime("bwrap" if bwrap_available() else "local")
    final_ws = tmp_path / "final"
    final_ws.mkdir()
    (final_ws / "reconstruct.py").write_text('print("{}")\n')
    series = tmp_path / "checkpoints"
    _snapshot(series, 1, 60.0, {"reconstruct.py": 'print("{}")\n'})
    (series / "002").mkdir()                                      # unfinished: no 002.json
    (series / "003.json").symlink_to(series / "001.json")       # metadata through a link: ignored
    (series / "003").mkdir()
    _snapshot(series, 4, 240.0, {}, ok=False)                   # the sidecar recorded a failure
    out = _grade_series(tiny_task, final_ws, series, rt)["checkpoints"]
    assert [c["index"] for c in out] == [1, 4, None]
    assert out[1]["reward"] == 0.0 and "note" in out[1]


def test_the_cli_grades_a_series(tiny_task: Path, where: Path) -> None:
    tmp_path = where
    final_ws = tmp_path / "final"
    final_ws.mkdir()
    (final_ws / "reconstruct.py").write_text((tiny_task / "solution" / "reconstruct.py").read_text())
    series = tmp_path / "checkpoints"
    _snapshot(series, 1, 1.0, {"reconstruct.py": _attacker(final_ws, series)})
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "recon", "grade", str(tiny_task), "--workspace", str(final_ws),
                           "--checkpoints", str(series), "--runtime", "local", "--out", str(out), "--quiet"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    g = canonjson.read(out / "grading.json")
    assert g["checkpoints"][0]["reward"] < 0.5 and g["checkpoints"][-1]["reward"] == 1.0


# -- the sidecar ---------------------------------------------------------------------------------

@pytest.fixture
def sidecar(tmp_path: Path) -> Path:
    script = tmp_path / "snap.py"
    script.write_text(checkpointer_files("python:3.11-slim")["snap.py"])
    return script


def _start(script: Path, ws: Path, out: Path, every: float) -> subprocess.Popen[str]:
    env = {"PATH": "/usr/bin:/bin", "RECON_CHECKPOINT_EVERY": str(every), "RECON_CHECKPOINT_SOURCE": str(ws),
           "RECON_CHECKPOINT_DIR": str(out)}
    return subprocess.Popen([sys.executable, "-u", str(script)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def test_the_sidecar_survives_any_workspace_and_keeps_its_schedule(sidecar: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    outside = tmp_path / "outside.txt"
    outside.write_text("untouched")
    (ws / ".recon-checkpoint.json").symlink_to(tmp_path / "missing" / "meta.json")   # into a missing folder
    (ws / "001.json").symlink_to(outside)                                             # absolute link out
    (ws / "link-dir").symlink_to("/etc")
    os.mkfifo(ws / "fifo")
    (ws / os.fsdecode(b"odd\xff\nname")).write_text("x")
    (ws / "reconstruct.py").write_text("print(1)\n")
    with open(ws / "sparse", "wb") as f:                                             # 3 GB, logically
        f.truncate(3 << 30)
    out = tmp_path / "checkpoints"
    stop = threading.Event()

    def churn() -> None:                      # a file that keeps changing during the copies
        i = 0
        while not stop.is_set():
            (ws / "growing.log").write_text("line\n" * (i % 500))
            i += 1

    writer = threading.Thread(target=churn)
    writer.start()
    proc = _start(sidecar, ws, out, 0.5)
    try:
        time.sleep(1.9)
        os.unlink(ws / "sparse")              # from now on the workspace fits the caps
        (out / "005").write_text("in the way")  # the fifth snapshot cannot be renamed into place
        time.sleep(2.0)
    finally:
        proc.terminate()
        log, _ = proc.communicate(timeout=10)
        stop.set()
        writer.join()
    metas = {int(p.stem): json.loads(p.read_text()) for p in out.glob("[0-9][0-9][0-9].json")}
    assert len(metas) >= 6, log
    assert metas[1]["ok"] is False and "256 MiB" in metas[1]["reason"]     # a capped snapshot is recorded
    assert metas[5]["ok"] is False and "snapshot failed" in metas[5]["reason"], log
    assert "checkpoint 005 failed" in log
    later = [m for k, m in metas.items() if k > 5]
    assert later and all(m["ok"] for m in later)                             # the next ones are on time
    ts = [metas[k]["t"] for k in sorted(metas)]
    assert all(abs(t - 0.5 * k) < 0.4 for k, t in zip(sorted(metas), ts)), ts
    assert outside.read_text() == "untouched" and not (tmp_path / "missing").exists()
    snap = out / f"{max(k for k, m in metas.items() if m['ok']):03d}"
    assert (snap / "001.json").is_symlink() and (snap / ".recon-checkpoint.json").is_symlink()
    assert not (snap / "fifo").exists() and (snap / "reconstruct.py").read_text() == "print(1)\n"


def test_the_sidecar_script_is_standard_library_only(sidecar: Path) -> None:
    proc = subprocess.run([sys.executable, "-I", "-S", "-c",
                           f"import ast; t = ast.parse(open({str(sidecar)!r}).read()); "
                           "print(sorted({a.name.split('.')[0] for n in ast.walk(t) if isinstance(n, ast.Import) "
                           "for a in n.names} | {n.module.split('.')[0] for n in ast.walk(t) "
                           "if isinstance(n, ast.ImportFrom) and n.module}))"], capture_output=True, text=True)
    mods = set(json.loads(proc.stdout.replace("'", '"')))
    assert mods <= set(sys.stdlib_module_names), mods - set(sys.stdlib_module_names)
    shutil.rmtree(sidecar.parent / "__pycache__", ignore_errors=True)


# -- what a hanging program may cost ---------------------------------------------------------------

def test_a_hanging_program_costs_a_grading_a_bounded_time(tmp_path: Path) -> None:
    """Timeouts are contagious and a grading's runs have a budget: a sleeper costs a
    fraction of runs x limit, and a correct program never meets either rule."""
    from recon.grader import BUDGET_SHARE, STRIKES

    reg = Registry.default(entry_points=False)
    reg.load_plugin_file(TINY)
    task = build_task(reg, "tiny_series", tmp_path / "t", n_public=12, n_hidden=2, probes=1, select="random").path
    sleeper = tmp_path / "sleeper"
    sleeper.mkdir()
    (sleeper / "reconstruct.py").write_text("import time\ntime.sleep(1000)\n")
    limit, runs = 6.0, 12
    t0 = time.monotonic()
    g = grade(task, sleeper, runtime="local", nonce="hang", timeout=limit, workers=2)
    wall = time.monotonic() - t0
    checks = g["rungs"][2]["checks"]
    timed_out = [c for c in checks if "timed out" in c["reason"]]
    not_run = [c for c in checks if "budget" in c["reason"]]
    assert len(timed_out) >= STRIKES and not_run, [c["reason"] for c in checks]
    # the budget, plus what the two workers' last runs may take past it (a killed run is
    # measured a little over its limit)
    assert g["budget"]["spent"] <= runs * limit * BUDGET_SHARE + 2 * (limit + 0.5)
    assert g["budget"]["retried"] == STRIKES   # each of the first timeouts was run once more
    assert wall < 0.6 * runs * limit / 2, wall          # unbounded: runs x limit / 2 workers = 36 s
    honest = grade(task, task / "solution", runtime="local", nonce="hang", timeout=limit, workers=2)
    assert honest["reward"] == 1.0 and honest["budget"]["timeouts"] == 0


def test_an_honest_program_slow_only_at_first_keeps_every_run(tmp_path: Path) -> None:
    """The first runs of a grading can be many times slower than the rest (a fresh
    container's cold caches, a busy engine): a run that times out is run once more with
    the full limit, and an honest program keeps every run and its reward."""
    reg = Registry.default(entry_points=False)
    reg.load_plugin_file(TINY)
    task = build_task(reg, "tiny_series", tmp_path / "t", n_public=6, n_hidden=2, probes=1, select="random").path
    slow = tmp_path / "slow_start"
    slow.mkdir()
    reference = (task / "solution" / "reconstruct.py").read_text()
    # every run that starts in the grading's first 3 seconds takes longer than the limit
    (slow / "reconstruct.py").write_text(f"import time\nif time.time() < {time.time() + 3.0!r}:\n"
                                         f"    time.sleep(30)\n{reference}")
    g = grade(task, slow, runtime="local", nonce="slow-start", timeout=4.0, workers=2)
    assert g["reward"] == 1.0, [c["reason"] for r in g["rungs"] for c in r["checks"] if not c["passed"]][:4]
    assert g["budget"]["timeouts"] == 0 and g["budget"]["retried"] == 2


def test_a_link_with_an_undecodable_target_is_graded_like_any_file(tiny_task: Path, tmp_path: Path) -> None:
    """File names and link targets are bytes: one that is not UTF-8 must not crash the grader."""
    rt = _runtime("bwrap" if bwrap_available() else "local")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "reconstruct.py").write_text((tiny_task / "solution" / "reconstruct.py").read_text())
    os.symlink(b"\xff\xfe", os.fsencode(ws / "badlink"))
    os.symlink(b"\xff", os.fsencode(ws) + b"/\xfe-name")
    g = grade(load_task(tiny_task), ws, runtime=rt, nonce="links", workers=2)
    assert g["reward"] == 1.0
    json.dumps(g, ensure_ascii=False).encode("utf-8")          # and grading.json can be written


def test_a_snapshot_whose_grading_fails_costs_only_itself(tiny_task: Path, tmp_path: Path) -> None:
    rt = _runtime("bwrap" if bwrap_available() else "local")
    t = load_task(tiny_task)
    reference = (tiny_task / "solution" / "reconstruct.py").read_text()
    series = tmp_path / "checkpoints"
    _snapshot(series, 1, 30.0, {"reconstruct.py": reference, "poison": "x"})
    _snapshot(series, 2, 60.0, {"reconstruct.py": reference})
    final = grade(t, series / "002", runtime=rt, nonce="isolated", workers=2)

    def grade_one(ws: Path) -> dict[str, Any]:
        if (ws / "poison").exists():
            raise RuntimeError("a grader fault on " + os.fsdecode(b"notes-\xff.md"))   # a name that is not UTF-8
        return grade(t, ws, runtime=rt, nonce="isolated", workers=2)

    scratch = tmp_path / "scratch"
    scratch.mkdir()
    out = grade_series(series, final, grade_one, scratch=scratch)
    assert [c["reward"] for c in out] == [0.0, 1.0, 1.0]
    assert "RuntimeError" in out[0]["note"] and out[0]["rung"] == 0
    write_outputs({**final, "checkpoints": out}, tmp_path / "out")          # and grading.json is written
    assert "notes-" in json.loads((tmp_path / "out" / "grading.json").read_text())["checkpoints"][0]["note"]
