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
from recon.runtimes.base import preload_names
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


def test_warm_runs_answer_as_cold_runs_and_start_from_a_fresh_workspace(bwrap: Runtime, tmp_path: Path) -> None:
    ws = _ws(tmp_path, PROGRAM, **{"helper.py": "def total(xs):\n    return sum(float(x) for x in xs)\n"})
    with bwrap.session(ws, FAST) as s:
        assert isinstance(s, Session) and s.warm and s.broken is None  # type: ignore[attr-defined]
        for i in range(3):
            points = tmp_path / f"points{i}.txt"
            points.write_text(" ".join(str(j) for j in range(i + 3)))
            doc = {"id": f"public_{i}", "parameters": {}, "inputs": {"points": str(points)}}
            warm, cold = s.run(doc, {"points": points}), bwrap.run(ws, doc, {"points": points}, FAST)
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
        bwrap: Runtime, tmp_path: Path, code: str, check: object) -> None:
    ws = _ws(tmp_path, code)
    limits = Limits(wall=4, cpu=2, memory=1 << 30, nproc=32, stdout=1 << 20)
    ok = tmp_path / "ok"
    ok.mkdir()
    (ok / "reconstruct.py").write_text("import sys\nprint(sys.stdin.read())\n")
    with bwrap.session(ws, limits) as s:
        res = s.run({"id": "p", "parameters": {}}, {})
        assert check(res), (res, res.failure())  # type: ignore[operator]
        again = s.run({"id": "q", "parameters": {}}, {})
        assert s.broken is None  # type: ignore[attr-defined]
        assert again.failure() == res.failure() or res.timed_out   # a time-out's message says how long


def test_a_run_leaves_nothing_behind_for_the_next(bwrap: Runtime, tmp_path: Path) -> None:
    """Not a daemon that left the run's session (it could write into a later run's
    output), not a file in /tmp."""
    ws = _ws(tmp_path, """
        import json, os, subprocess, sys, time
        doc = json.load(sys.stdin)
        if doc["id"] == "first":
            for new_session in (False, True):
                subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"],
                                 start_new_session=new_session)
            open("/tmp/cache.txt", "w").write("x")
            time.sleep(0.5)
        print(json.dumps({"tmp": sorted(os.listdir("/tmp")),
                          "procs": len([p for p in os.listdir("/proc") if p.isdigit()])}))
    """)
    with bwrap.session(ws, FAST) as s:
        first = json.loads(s.run({"id": "first", "parameters": {}}, {}).stdout)
        second = json.loads(s.run({"id": "second", "parameters": {}}, {}).stdout)
    assert first["procs"] == second["procs"] + 2   # both sleepers were killed with the first run
    assert "cache.txt" in first["tmp"] and "cache.txt" not in second["tmp"]


def test_the_workspace_source_is_read_only_and_hidden_paths_stay_unmounted(bwrap: Runtime, tmp_path: Path) -> None:
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
    with bwrap.session(ws, FAST) as s:
        out = json.loads(s.run({"id": "p", "parameters": {}}, {}).stdout)
    assert out["src"] in ("OSError", "PermissionError") and out["secret"] == "FileNotFoundError"


def test_a_runtime_without_warm_sessions_runs_each_cold(tmp_path: Path) -> None:
    ws = _ws(tmp_path, "import sys\nprint(sys.stdin.read())\n")
    rt = LocalRuntime()
    try:
        with rt.session(ws, FAST) as s:
            assert not s.warm
            res = s.run({"id": "p", "parameters": {"a": 1}}, {})
        assert json.loads(res.stdout) == {"id": "p", "parameters": {"a": 1}}
    finally:
        rt.close()


def test_a_session_that_cannot_start_goes_cold(bwrap: Runtime, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from recon.runtimes import bwrap as bw

    monkeypatch.setattr(bw, "_WARM_SOURCE", "import sys\nsys.exit(5)\n")
    ws = _ws(tmp_path, "import sys\nprint(sys.stdin.read())\n")
    with bwrap.session(ws, FAST) as s:
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


def test_a_run_cannot_answer_for_the_next_one(bwrap: Runtime, tmp_path: Path) -> None:
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
    with bwrap.session(ws, FAST) as s:
        first = s.run({"id": "first", "parameters": {}}, {})
        second = s.run({"id": "second", "parameters": {}}, {})
        third = s.run({"id": "third", "parameters": {}}, {})
    # what it wrote to its own stdout (descriptor 1) is its own output, nothing more
    assert json.loads(first.stdout.splitlines()[-1]) == {"id": "first"}
    assert json.loads(second.stdout) == {"id": "second"} and json.loads(third.stdout) == {"id": "third"}
