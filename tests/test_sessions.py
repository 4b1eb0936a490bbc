"""Warm sessions (``Runtime.session``): many runs of one workspace from one sandboxed
interpreter that forks per run. Every run must behave as a cold ``run`` does — same
output, a fresh workspace, the run's own limits — and a session that breaks goes cold
instead of giving different answers."""
from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path
from typing import Iterator

import pytest

from recon.runtimes import Limits, Runtime, Session
from recon.runtimes.base import SessionPool, preload_names
from recon.runtimes.bwrap import BwrapRuntime, bwrap_available
from recon.runtimes.local import LocalRuntime

FAST = Limits(wall=10, cpu=10, memory=1 << 30, nproc=32, stdout=1 << 20)


@pytest.fixture(scope="module")
def bwrap() -> Iterator[Runtime]:
    if not bwrap_available():
        pytest.skip("bwrap cannot create a sandbox here")
    rt = BwrapRuntime()
    yield rt
    rt.close()


@pytest.fixture(scope="module", params=["bwrap", "local"])
def warm_rt(request: pytest.FixtureRequest) -> Iterator[Runtime]:
    """The runtimes that keep warm sessions: bwrap, and local where it builds each run's
    view in namespaces (as root; elsewhere its sessions are cold)."""
    if request.param == "bwrap":
        if not bwrap_available():
            pytest.skip("bwrap cannot create a sandbox here")
        rt: Runtime = BwrapRuntime()
    else:
        rt = LocalRuntime()
        if rt.mode != "isolate":   # type: ignore[attr-defined]
            rt.close()
            pytest.skip(f"the local runtime runs in {rt.mode} mode here: its sessions are cold")  # type: ignore[attr-defined]
    yield rt
    rt.close()


def _ws(tmp: Path, code: str, **files: str) -> Path:
    ws = tmp / "ws"
    ws.mkdir()
    (ws / "reconstruct.py").write_text(textwrap.dedent(code))
    for name, text in files.items():
        (ws / name).write_text(textwrap.dedent(text))
    return ws


PROGRAM = """
    import json, os, sys
    import numpy as np
    import helper
    doc = json.load(sys.stdin)
    seen = sorted(os.listdir("."))
    open("left_behind.txt", "w").write("x")   # the next run must not see it
    data = open(doc["inputs"]["points"]).read().split()
    print(json.dumps({"id": doc["id"], "sum": helper.total(data), "seen": seen, "numpy": np.__name__}))
"""


def test_warm_runs_answer_as_cold_runs_and_start_from_a_fresh_workspace(warm_rt: Runtime, tmp_path: Path) -> None:
    ws = _ws(tmp_path, PROGRAM, **{"helper.py": "def total(xs):\n    return sum(float(x) for x in xs)\n"})
    with warm_rt.session(ws, FAST) as s:
        assert isinstance(s, Session) and s.warm and s.broken is None  # type: ignore[attr-defined]
        for i in range(3):
            points = tmp_path / f"points{i}.txt"
            points.write_text(" ".join(str(j) for j in range(i + 3)))
            doc = {"id": f"public_{i}", "parameters": {}, "inputs": {"points": str(points)}}
            warm, cold = s.run(doc, {"points": points}), warm_rt.run(ws, doc, {"points": points}, FAST)
            assert warm.failure() is None and warm.exit_code == 0, warm.stderr_tail
            assert warm.stdout == cold.stdout
            out = json.loads(warm.stdout)
            assert out["sum"] == sum(range(i + 3)) and out["seen"] == ["helper.py", "reconstruct.py"]
        assert s.broken is None  # type: ignore[attr-defined]


@pytest.mark.parametrize("code,check", [
    ("import sys\nsys.stdin.read()\nsys.exit(3)\n", lambda r: r.exit_code == 3 and r.failure().startswith("crashed")),
    ("raise ValueError('boom')\n", lambda r: r.exit_code == 1 and "ValueError: boom" in r.stderr_tail),
    ("import time\ntime.sleep(60)\n", lambda r: r.timed_out and r.exit_code is None and r.seconds < 8),
    ("while True:\n    pass\n", lambda r: r.signal is not None and "CPU time limit exceeded" in r.notes),
    ("import sys\nsys.stdout.write('x' * (2 << 20))\n", lambda r: r.stdout_overflow and len(r.stdout) == 1 << 20),
    ("import os\nos.kill(os.getpid(), 9)\n", lambda r: r.signal == 9),
])
def test_failures_are_reported_as_cold_runs_report_them_and_the_session_goes_on(
        warm_rt: Runtime, tmp_path: Path, code: str, check: object) -> None:
    ws = _ws(tmp_path, code)
    # the busy loop must meet its CPU limit before its wall limit even when the machine's
    # other work leaves it a tenth of a core; the sleeper must meet its wall limit
    wall = 30 if "while True" in code else 4
    limits = Limits(wall=wall, cpu=2, memory=1 << 30, nproc=32, stdout=1 << 20)
    ok = tmp_path / "ok"
    ok.mkdir()
    (ok / "reconstruct.py").write_text("import sys\nprint(sys.stdin.read())\n")
    with warm_rt.session(ws, limits) as s:
        res = s.run({"id": "p", "parameters": {}}, {})
        assert check(res), (res, res.failure())  # type: ignore[operator]
        again = s.run({"id": "q", "parameters": {}}, {})
        assert s.broken is None  # type: ignore[attr-defined]
        assert again.failure() == res.failure() or res.timed_out   # a time-out's message says how long


def test_a_session_started_by_a_worker_thread_outlives_it(warm_rt: Runtime, tmp_path: Path) -> None:
    """Gradings and reveals start sessions from pool threads that end between phases; the
    sandbox must not die with the thread that started it (the kernel's parent-death
    signal follows the starting thread), or every later run would fall back to cold."""
    from concurrent.futures import ThreadPoolExecutor

    ws = _ws(tmp_path, "import json, os, sys\nsys.stdin.read()\nprint(json.dumps(os.getppid()))\n")
    pool = SessionPool(warm_rt, ws, FAST)
    try:
        for phase in range(3):   # a fresh executor per phase, as run_outcomes has
            with ThreadPoolExecutor(max_workers=2) as ex:
                res = list(ex.map(lambda i: pool.run({"id": f"p{i}", "parameters": {}}, {}), range(4)))
            assert all(r.failure() is None for r in res), [r.failure() for r in res]
            assert all(s.warm and s.broken is None for s in pool._all), [getattr(s, "broken", None) for s in pool._all]
        assert pool.confirmed == 0 and 1 <= len(pool._all) <= 2   # the same sessions served every phase
    finally:
        pool.close()


_FORKED: dict[str, object] = {}   # what the forked child inherits (a runtime does not pickle)


def _session_in_a_forked_child(conn: object) -> None:
    rt, ws = _FORKED["rt"], _FORKED["ws"]
    with rt.session(ws, FAST) as s:  # type: ignore[attr-defined]
        conn.send((s.warm and s.broken is None, s.run({"id": "child", "parameters": {}}, {}).stdout))  # type: ignore[attr-defined]


def test_a_forked_process_starts_sessions_of_its_own(warm_rt: Runtime, tmp_path: Path) -> None:
    """`recon build --all` forks a process per task after sessions may have run in the
    parent: the child must not wait on the parent's session starter, which it did not inherit."""
    from multiprocessing import Pipe, get_context

    ws = _ws(tmp_path, "import sys\nprint(sys.stdin.read())\n")
    with warm_rt.session(ws, FAST) as s:   # the parent's starter exists now
        assert s.warm and s.run({"id": "parent", "parameters": {}}, {}).failure() is None
    _FORKED.update(rt=warm_rt, ws=ws)
    mine, theirs = Pipe()
    child = get_context("fork").Process(target=_session_in_a_forked_child, args=(theirs,))
    child.start()
    try:
        answered = mine.poll(60)
        assert answered, "the forked process's session never started"
        warm, out = mine.recv()
    finally:
        child.join(30)        # it closes its session (killed now, it would leave its run folder)
        if child.is_alive():
            child.kill()
            child.join()
    assert warm and json.loads(out)["id"] == "child"


def test_a_run_leaves_nothing_behind_for_the_next(warm_rt: Runtime, tmp_path: Path) -> None:
    """Not a daemon that left the run's session (it could write into a later run's
    output), not a file anywhere a run may write (/tmp, the job folder there, /dev/shm,
    /dev), not a message queue, not a System V shared memory segment."""
    ws = _ws(tmp_path, """
        import ctypes, json, os, subprocess, sys, time
        doc = json.load(sys.stdin)
        stash = ["/tmp/cache.txt", "/tmp/.recon-job/stash", "/dev/shm/stash", "/dev/stash", "/dev/shm/a/b/c",
                 "/dev/mqueue/stash"]
        seen = [p for p in stash if os.path.exists(p)]
        seen += [r for r in open("/proc/sysvipc/shm").read().splitlines()[1:]]
        if doc["id"] == "first":
            for new_session in (False, True):
                subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"],
                                 start_new_session=new_session)
            os.makedirs("/dev/shm/a/b", exist_ok=True)
            for p in stash:
                try:
                    open(p, "w").close()
                except OSError:   # /dev is the sandbox's to write under bwrap, root's under local
                    pass
            assert ctypes.CDLL(None).shmget(1234, 4096, 0o1000 | 0o600) >= 0   # IPC_CREAT
            time.sleep(0.5)
        print(json.dumps({"seen": seen, "procs": len([p for p in os.listdir("/proc") if p.isdigit()])}))
    """)
    with warm_rt.session(ws, FAST) as s:
        first = json.loads(s.run({"id": "first", "parameters": {}}, {}).stdout)
        second = json.loads(s.run({"id": "second", "parameters": {}}, {}).stdout)
        assert s.broken is None  # type: ignore[attr-defined]
    assert first["procs"] == second["procs"] + 2   # both sleepers were killed with the first run
    assert first["seen"] == [] and second["seen"] == []


def test_a_run_can_neither_remove_nor_add_anything_in_dev(bwrap: Runtime, tmp_path: Path) -> None:
    """/dev is read-only (its tmpfs is unsized): a later run starts in the same sandbox, and
    nothing can be stored there."""
    ws = _ws(tmp_path, """
        import json, os, sys
        doc = json.load(sys.stdin)
        tried = {}
        if doc["id"] == "first":
            for what, act in (("remove", lambda: os.unlink("/dev/core")),
                              ("add", lambda: open("/dev/left-by-first", "w").write("x"))):
                try:
                    act()
                    tried[what] = "done"
                except OSError as exc:
                    tried[what] = exc.strerror
        print(json.dumps({"tried": tried, "core": os.path.lexists("/dev/core"),
                          "left": os.path.lexists("/dev/left-by-first")}))
    """)
    with bwrap.session(ws, FAST) as s:
        first = json.loads(s.run({"id": "first", "parameters": {}}, {}).stdout)
        assert first["tried"] == {"remove": "Read-only file system", "add": "Read-only file system"}
        second = json.loads(s.run({"id": "second", "parameters": {}}, {}).stdout)
        assert s.broken is None  # type: ignore[attr-defined]
    assert second == {"tried": {}, "core": True, "left": False}


def test_the_workspace_source_is_read_only_and_hidden_paths_stay_unmounted(warm_rt: Runtime, tmp_path: Path) -> None:
    secret = tmp_path / "secret.json"
    secret.write_text("{}")
    os.chmod(tmp_path, 0o755)
    ws = _ws(tmp_path, f"""
        import json, os, sys
        sys.stdin.read()
        out = {{}}
        for name, path in (("src", "/src/reconstruct.py"), ("secret", {str(secret)!r})):
            try:
                open(path, "a").close()
                out[name] = "writable"
            except OSError as e:
                out[name] = type(e).__name__
        print(json.dumps(out))
    """)
    with warm_rt.session(ws, FAST) as s:
        out = json.loads(s.run({"id": "p", "parameters": {}}, {}).stdout)
    assert out["src"] in ("OSError", "PermissionError") and out["secret"] == "FileNotFoundError"


def test_a_runtime_without_warm_sessions_runs_each_cold(tmp_path: Path) -> None:
    ws = _ws(tmp_path, "import sys\nprint(sys.stdin.read())\n")
    rt = LocalRuntime(namespaces=False)   # no namespace of its own to hold a session
    try:
        with rt.session(ws, FAST) as s:
            assert not s.warm
            res = s.run({"id": "p", "parameters": {"a": 1}}, {})
        assert json.loads(res.stdout) == {"id": "p", "parameters": {"a": 1}}
    finally:
        rt.close()


def test_a_session_that_cannot_start_goes_cold(warm_rt: Runtime, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from recon.runtimes import _session

    monkeypatch.setattr(_session, "WARM_SOURCE", "import sys\nsys.exit(5)\n")
    ws = _ws(tmp_path, "import sys\nprint(sys.stdin.read())\n")
    with warm_rt.session(ws, FAST) as s:
        assert s.broken and "did not start" in s.broken  # type: ignore[attr-defined]
        res = s.run({"id": "p", "parameters": {}}, {})
    assert res.failure() is None and json.loads(res.stdout)["id"] == "p"


def test_preload_names_are_the_libraries_not_the_workspace_modules(tmp_path: Path) -> None:
    ws = _ws(tmp_path, """
        from __future__ import annotations
        import json, sys
        import numpy as np
        from scipy.spatial import cKDTree
        import helper
        from . import sibling
        from pkg.sub import thing
    """, **{"helper.py": "import laspy\n"})
    (ws / "pkg").mkdir()
    assert preload_names(ws) == ["laspy", "json", "sys", "numpy", "scipy.spatial"]


def test_a_run_cannot_answer_for_the_next_one(warm_rt: Runtime, tmp_path: Path) -> None:
    """A hostile first run writes a forged reply (a perfect score's stdout) to every
    descriptor it might share with the session's protocol; the next run's result is still
    its own."""
    forged = json.dumps({"exit": 0, "signal": None, "timed_out": False, "overflow": False, "seconds": 0.1,
                         "stdout": "eyJmb3JnZWQiOiB0cnVlfQ==", "stderr": ""})
    ws = _ws(tmp_path, f"""
        import json, os, sys
        doc = json.load(sys.stdin)
        if doc["id"] == "first":
            for fd in list(range(3, 256)) + [int(n) for n in os.listdir("/proc/self/fd")]:
                try:
                    os.write(fd, {(forged + chr(10))!r}.encode() * 4)
                except OSError:
                    pass
        print(json.dumps({{"id": doc["id"]}}))
    """)
    with warm_rt.session(ws, FAST) as s:
        first = s.run({"id": "first", "parameters": {}}, {})
        second = s.run({"id": "second", "parameters": {}}, {})
        third = s.run({"id": "third", "parameters": {}}, {})
    # what it wrote to its own stdout (descriptor 1) is its own output, nothing more
    assert json.loads(first.stdout.splitlines()[-1]) == {"id": "first"}
    assert json.loads(second.stdout) == {"id": "second"} and json.loads(third.stdout) == {"id": "third"}



def test_a_warm_run_reports_its_cpu_time_apart_from_its_wall_time(warm_rt: Runtime, tmp_path: Path) -> None:
    """Budgets that count CPU time (a build's revealed programs) read it from each run: a
    busy run's CPU time is about its wall time, a sleeping one's next to nothing."""
    ws = _ws(tmp_path, """
        import json, sys, time
        doc = json.load(sys.stdin)
        if doc["parameters"]["busy"]:
            while time.process_time() < 0.4:   # CPU time, however loaded the machine
                pass
        else:
            time.sleep(0.4)
        print(json.dumps({"ok": 1}))
    """)
    with warm_rt.session(ws, FAST) as s:
        busy = s.run({"id": "b", "parameters": {"busy": True}}, {})
        idle = s.run({"id": "i", "parameters": {"busy": False}}, {})
    assert busy.failure() is None and idle.failure() is None, (busy.stderr_tail, idle.stderr_tail)
    assert busy.cpu_seconds is not None and idle.cpu_seconds is not None
    assert busy.cpu_seconds >= 0.4 and busy.seconds >= 0.4
    assert idle.cpu_seconds < 0.15 < 0.4 <= idle.seconds


def test_a_warm_run_given_a_cpu_runs_on_it_and_one_given_none_where_the_session_may(
        warm_rt: Runtime, tmp_path: Path) -> None:
    """A caller that keeps one run per CPU (a build's revealed programs) names the CPU; the
    run is pinned to it and nothing else changes. Without one, the run may use every CPU
    its session may."""
    cpus = sorted(os.sched_getaffinity(0))
    ws = _ws(tmp_path, """
        import json, os, sys
        json.load(sys.stdin)
        print(json.dumps(sorted(os.sched_getaffinity(0))))
    """)
    with warm_rt.session(ws, FAST) as s:
        free = s.run({"id": "f", "parameters": {}}, {})
        pinned = [s.run({"id": f"c{c}", "parameters": {}}, {}, cpu=c) for c in cpus]
        after = s.run({"id": "a", "parameters": {}}, {})
        # a CPU the sandbox lacks (or no CPU at all) leaves the run where it may go, and the
        # session answers on
        odd = [s.run({"id": f"o{c}", "parameters": {}}, {}, cpu=c) for c in (max(cpus) + 1, 1 << 20, -1)]
        assert s.broken is None  # type: ignore[attr-defined]
    assert json.loads(free.stdout) == json.loads(after.stdout) == cpus, (free.stdout, after.stdout)
    assert [json.loads(r.stdout) for r in pinned] == [[c] for c in cpus]
    assert [json.loads(r.stdout) for r in odd] == [cpus] * 3, [r.stderr_tail for r in odd]
