"""The sandboxed runtimes against hostile and broken submissions (real processes, real bwrap).

Every case runs on each runtime available here: ``local`` (as root: a dropped uid per
run), ``local-nodrop`` (root only: the subreaper fallback a non-root user gets) and
``bwrap`` (skipped only when :func:`bwrap_available` is False).
"""
from __future__ import annotations

import json
import os
import resource
import secrets
import shutil
import socket
import stat
import sys
import tempfile
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Iterator

import pytest

from recon.errors import RuntimeUnavailable
from recon.runtimes import Limits, RunResult, Runtime, pick_runtime_name
from recon.runtimes.base import env_for_submission
from recon.runtimes.bwrap import BwrapRuntime, bwrap_available
from recon.runtimes._launcher import landlock_abi
from recon.runtimes.local import LocalRuntime

IS_ROOT = os.geteuid() == 0
RUNTIME_IDS = ["local", "local-nodrop", "local-nons", "bwrap"]
FAST = Limits(wall=20, cpu=20, memory=1 << 30, nproc=32, stdout=1 << 20)


def _make(kind: str) -> Runtime:
    if kind == "local":
        return LocalRuntime()
    if kind == "local-nodrop":
        if not IS_ROOT:
            pytest.skip("without root, 'local' already is the no-drop mode")
        return LocalRuntime(drop_privileges=False)
    if kind == "local-nons":
        if not IS_ROOT:
            pytest.skip("the no-namespace supervisor is a root mode")
        return LocalRuntime(namespaces=False)
    if not bwrap_available():
        pytest.skip("bwrap cannot create a sandbox here")
    return BwrapRuntime()


@pytest.fixture(scope="module", params=["local", "local-nons", "bwrap"])
def rt(request: pytest.FixtureRequest) -> Iterator[Runtime]:
    """The two runtimes a user picks."""
    runtime = _make(request.param)
    yield runtime
    runtime.close()


@pytest.fixture(scope="module", params=RUNTIME_IDS)
def rt_all(request: pytest.FixtureRequest) -> Iterator[Runtime]:
    """Plus the subreaper mode a non-root user gets, for the kill/containment cases."""
    runtime = _make(request.param)
    yield runtime
    runtime.close()


@pytest.fixture(scope="module")
def all_runtimes() -> Iterator[dict[str, Runtime]]:
    """Every runtime available here at once, for the cases that mostly wait."""
    made: dict[str, Runtime] = {}
    for kind in RUNTIME_IDS:
        try:
            made[kind] = _make(kind)
        except pytest.skip.Exception:
            continue
    yield made
    for runtime in made.values():
        runtime.close()


def workspace(tmp: Path, code: str, name: str = "ws") -> Path:
    ws = tmp / name
    ws.mkdir()
    (ws / "reconstruct.py").write_text(textwrap.dedent(code))
    return ws


def run(rt: Runtime, tmp: Path, code: str, *, scenario: dict[str, Any] | None = None,
        inputs: dict[str, Path] | None = None, limits: Limits = FAST, app_dir: Path | None = None) -> RunResult:
    ws = workspace(tmp, code, name=f"ws-{secrets.token_hex(4)}")
    return rt.run(ws, scenario or {"id": "public_1", "parameters": {}}, inputs or {}, limits, app_dir=app_dir)


def marked_processes(token: str) -> list[int]:
    """Processes (any namespace, seen from here) whose comm is ``token``."""
    found = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                if Path(f"/proc/{d}/comm").read_text().strip() == token:
                    state = Path(f"/proc/{d}/stat").read_text().rsplit(")", 1)[1].split()[0]
                    if state not in ("Z", "X"):
                        found.append(int(d))
            except OSError:
                continue
    return found


@pytest.fixture
def root_dir() -> Iterator[Path]:
    """A world-traversable directory outside pytest's 0700 tmp root, as a task dir would be."""
    d = Path(tempfile.mkdtemp(prefix="recon-rt-test-"))
    os.chmod(d, 0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


# ------------------------------------------------------------------ contract


def test_echo_back(rt_all: Runtime, tmp_path: Path) -> None:
    rt = rt_all
    res = run(rt, tmp_path, """
        import json, sys
        doc = json.load(sys.stdin)
        print(json.dumps({"echo": doc}))
    """, scenario={"id": "public_3", "parameters": {"b": 2, "a": [1.5, "x"]}})
    assert res.exit_code == 0 and res.failure() is None, res
    assert json.loads(res.stdout) == {"echo": {"id": "public_3", "parameters": {"a": [1.5, "x"], "b": 2}}}
    assert not (res.timed_out or res.stdout_overflow)


def test_stdin_is_canonical_json(rt: Runtime, tmp_path: Path) -> None:
    res = run(rt, tmp_path, "import sys; sys.stdout.write(sys.stdin.read())",
              scenario={"parameters": {"z": 1, "a": 2}, "id": "p"})
    assert res.stdout.decode() == json.dumps({"id": "p", "parameters": {"a": 2, "z": 1}}, sort_keys=True,
                                             separators=(",", ":"))


def test_crash_reports_exception(rt_all: Runtime, tmp_path: Path) -> None:
    rt = rt_all
    res = run(rt, tmp_path, "print('partial')\nraise ValueError('boom-42')\n")
    assert res.exit_code not in (0, None)
    assert "ValueError: boom-42" in res.stderr_tail
    assert "boom-42" in (res.failure() or "")


def test_stderr_keeps_only_the_tail(rt: Runtime, tmp_path: Path) -> None:
    res = run(rt, tmp_path, "import sys\nfor i in range(5000): print('line', i, file=sys.stderr)\n",
              limits=Limits(wall=20, stderr_tail=100))
    assert res.exit_code == 0
    assert len(res.stderr_tail) <= 100 and "line 4999" in res.stderr_tail


def test_timeout_kills_within_wall(all_runtimes: dict[str, Runtime], tmp_path: Path) -> None:
    # the runtimes side by side (the grader runs them from threads): one 2 s wait in all
    def one(item: tuple[str, Runtime]) -> tuple[str, RunResult, float]:
        t0 = time.monotonic()
        res = run(item[1], tmp_path, "import time\ntime.sleep(1000)\n", limits=Limits(wall=2))
        return item[0], res, time.monotonic() - t0

    with ThreadPoolExecutor(len(all_runtimes)) as pool:
        outcomes = list(pool.map(one, all_runtimes.items()))
    for name, res, elapsed in outcomes:
        assert res.timed_out and res.exit_code is None, name
        assert "timed out" in (res.failure() or ""), name
        assert elapsed < 2 + 10, (name, elapsed)   # killed at the limit, not waited out (it sleeps 1000 s)


def test_stdout_flood_is_capped(rt_all: Runtime, tmp_path: Path) -> None:
    rt = rt_all
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    res = run(rt, tmp_path, """
        import sys
        chunk = b"x" * (1 << 20)
        for _ in range(400):
            sys.stdout.buffer.write(chunk)
    """, limits=Limits(wall=20, stdout=1 << 20))
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert res.stdout_overflow and len(res.stdout) == 1 << 20
    assert "stdout limit" in (res.failure() or "")
    assert after - before < 100 * 1024  # KiB: the 400 MB were never held


def test_memory_hog_fails_cleanly(rt: Runtime, tmp_path: Path) -> None:
    res = run(rt, tmp_path, "x = bytearray(10 << 30)\nprint('allocated')\n",
              limits=Limits(wall=20, memory=1 << 30))
    assert res.exit_code not in (0, None) or res.signal is not None
    assert b"allocated" not in res.stdout
    assert "MemoryError" in res.stderr_tail


def test_numpy_scipy_laspy_import_under_default_limits(rt: Runtime, tmp_path: Path) -> None:
    res = run(rt, tmp_path, """
        import numpy, scipy.spatial, laspy
        tree = scipy.spatial.cKDTree(numpy.random.default_rng(0).random((1000, 3)))
        print(len(tree.query_pairs(0.05)) >= 0)
    """, limits=Limits())
    assert res.exit_code == 0, res.stderr_tail
    assert res.stdout.strip() == b"True"


def test_cpu_limit(rt: Runtime, tmp_path: Path) -> None:
    res = run(rt, tmp_path, "while True: pass\n", limits=Limits(wall=15, cpu=1))
    assert not res.timed_out and res.failure() is not None
    assert res.signal in (24, 9), res  # SIGXCPU at the soft limit, SIGKILL at the hard one


def test_file_size_limit(rt: Runtime, tmp_path: Path) -> None:
    res = run(rt, tmp_path, "open('big.bin', 'wb').write(b'x' * (4 << 20))\n",
              limits=Limits(wall=20, fsize=1 << 20))
    assert res.exit_code not in (0, None) and "File too large" in res.stderr_tail


# ------------------------------------------------------------------ nothing survives a run


def test_fork_storm_is_contained(rt_all: Runtime, tmp_path: Path) -> None:
    rt = rt_all
    token = "rcn" + secrets.token_hex(4)
    res = run(rt, tmp_path, f"""
        import json, os, time
        ok = failed = 0
        for _ in range(60):
            try:
                pid = os.fork()
            except OSError:
                failed += 1
                continue
            if pid == 0:
                open("/proc/self/comm", "w").write("{token}")
                time.sleep(60)
                os._exit(0)
            ok += 1
        print(json.dumps({{"forked": ok, "failed": failed}}))
    """, limits=Limits(wall=20, nproc=16))
    assert res.exit_code == 0, res.stderr_tail
    out = json.loads(res.stdout)
    if getattr(rt, "_drop", True):  # NPROC is enforced for every non-root sandbox user
        assert out["forked"] < 16 and out["failed"] > 0
    assert marked_processes(token) == []


def test_double_forked_daemon_dies_with_its_run(all_runtimes: dict[str, Runtime], tmp_path: Path,
                                                root_dir: Path) -> None:
    """setsid + double fork, sleep 3 s, then write into the grader's 0700 output dir."""
    grader_out = root_dir / "verifier"
    grader_out.mkdir(mode=0o700)

    def one(item: tuple[str, Runtime]) -> tuple[str, RunResult, str, list[int]]:
        token = "rcn" + secrets.token_hex(4)
        res = run(item[1], tmp_path, f"""
            import json, os, sys, time
            target = json.load(sys.stdin)["parameters"]["target"]
            if os.fork() == 0:
                os.setsid()
                if os.fork() == 0:
                    open("/proc/self/comm", "w").write("{token}")
                    time.sleep(3)
                    try:
                        open(target, "w").write("1.0")
                    except OSError:
                        pass
                    os._exit(0)
                os._exit(0)
            print("{{}}")
        """, scenario={"id": "p", "parameters": {"target": str(grader_out / f"{item[0]}.txt")}})
        return item[0], res, token, marked_processes(token)

    t0 = time.monotonic()
    with ThreadPoolExecutor(len(all_runtimes)) as pool:
        outcomes = list(pool.map(one, all_runtimes.items()))
    for name, res, _, survivors in outcomes:
        assert res.exit_code == 0 and res.stdout.strip() == b"{}", (name, res)
        assert survivors == [], name  # nothing of the run exists once run() returned
    time.sleep(max(0.0, t0 + 4.5 - time.monotonic()))
    assert os.listdir(grader_out) == []
    assert [marked_processes(token) for _, _, token, _ in outcomes] == [[]] * len(outcomes)


def test_grader_dir_not_writable_during_run(rt: Runtime, tmp_path: Path, root_dir: Path) -> None:
    if not rt.isolates_hidden:
        pytest.skip("this runtime runs the submission as the grader's own user")
    grader_out = root_dir / "verifier"
    grader_out.mkdir(mode=0o755)  # even a world-readable output dir is not writable
    res = run(rt, tmp_path, """
        import json, sys
        target = json.load(sys.stdin)["parameters"]["target"]
        try:
            open(target, "w").write("1.0")
            print("wrote")
        except OSError as exc:
            print(type(exc).__name__)
    """, scenario={"id": "p", "parameters": {"target": str(grader_out / "reward.txt")}})
    assert res.stdout.strip() in (b"PermissionError", b"FileNotFoundError", b"OSError")
    assert not (grader_out / "reward.txt").exists()


# ------------------------------------------------------------------ isolation


def test_hidden_data_is_unreachable(rt: Runtime, tmp_path: Path, root_dir: Path) -> None:
    if not rt.isolates_hidden:
        assert not IS_ROOT or isinstance(rt, LocalRuntime)
        pytest.skip("this runtime cannot hide hidden data (it says so in warnings())")
    hidden = root_dir / "tests" / "hidden"
    hidden.mkdir(parents=True)
    (hidden / "oracle_output.json").write_text('{"answer": 42}')
    os.chmod(root_dir / "tests", 0o700)
    res = run(rt, tmp_path, """
        import json, sys
        path = json.load(sys.stdin)["parameters"]["path"]
        try:
            print(open(path).read())
        except OSError as exc:
            print(type(exc).__name__)
    """, scenario={"id": "p", "parameters": {"path": str(hidden / "oracle_output.json")}})
    # bwrap and the namespaced local mode never mount it (not found); without namespaces
    # the 0700 directory stops the sandbox uid (permission denied)
    hides = isinstance(rt, BwrapRuntime) or getattr(rt, "mode", "") == "isolate"
    assert res.stdout.strip() == (b"FileNotFoundError" if hides else b"PermissionError")


def test_environment_is_scrubbed(rt_all: Runtime, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rt = rt_all
    monkeypatch.setenv("RECON_SECRET_TEST", "do-not-leak")
    res = run(rt, tmp_path, "import json, os\nprint(json.dumps(dict(os.environ)))\n")
    env = json.loads(res.stdout)
    assert "RECON_SECRET_TEST" not in env and "do-not-leak" not in res.stdout.decode()
    assert set(env) == set(env_for_submission("/x")) | {"PWD"}
    assert env["OPENBLAS_NUM_THREADS"] == "1"


def test_workspace_copy_is_private(rt_all: Runtime, tmp_path: Path) -> None:
    rt = rt_all
    ws = workspace(tmp_path, """
        import os
        print(sorted(os.listdir(".")))
        open("dropped.txt", "w").write("state")
        open("reconstruct.py", "a").write("# tampered\\n")
    """)
    original = (ws / "reconstruct.py").read_text()
    first = rt.run(ws, {"id": "p"}, {}, FAST)
    second = rt.run(ws, {"id": "p"}, {}, FAST)
    assert first.exit_code == second.exit_code == 0
    assert first.stdout == second.stdout == b"['reconstruct.py']\n"
    assert sorted(os.listdir(ws)) == ["reconstruct.py"] and (ws / "reconstruct.py").read_text() == original


def test_inputs_visible_at_rewritten_paths(rt: Runtime, tmp_path: Path) -> None:
    src = tmp_path / "data" / "source.las"
    src.parent.mkdir()
    src.write_bytes(b"LASF-bytes")
    res = run(rt, tmp_path, """
        import json, os, sys
        doc = json.load(sys.stdin)
        path = doc["inputs"]["source"]
        print(json.dumps({"abs": os.path.isabs(path), "data": open(path, "rb").read().decode()}))
    """, scenario={"id": "p", "inputs": {"source": "inputs/source.las"}}, inputs={"source": src})
    assert json.loads(res.stdout) == {"abs": True, "data": "LASF-bytes"}


def test_public_app_is_visible_read_only(rt: Runtime, tmp_path: Path) -> None:
    app = tmp_path / "app"
    (app / "observations").mkdir(parents=True)
    (app / "observations" / "manifest.json").write_text('{"n": 6}')
    (app / "workspace").mkdir()
    res = run(rt, tmp_path, """
        import json
        data = open("../observations/manifest.json").read()
        try:
            open("../observations/manifest.json", "w").write("x")
            wrote = True
        except OSError:
            wrote = False
        print(json.dumps({"data": data, "wrote": wrote}))
    """, app_dir=app)
    assert res.exit_code == 0, res.stderr_tail
    out = json.loads(res.stdout)
    assert out["data"] == '{"n": 6}'
    assert out["wrote"] is False
    assert (app / "observations" / "manifest.json").read_text() == '{"n": 6}'


def test_network_is_unreachable_under_bwrap(rt: Runtime, tmp_path: Path) -> None:
    with socket.socket() as srv:
        srv.bind(("127.0.0.1", 0))
        srv.listen(8)
        port = srv.getsockname()[1]
        res = run(rt, tmp_path, f"""
            import socket
            try:
                socket.create_connection(("127.0.0.1", {port}), timeout=2).close()
                print("connected")
            except OSError as exc:
                print(type(exc).__name__)
        """)
    if isinstance(rt, BwrapRuntime):
        assert res.stdout.strip() in (b"ConnectionRefusedError", b"OSError", b"TimeoutError")
    else:
        assert res.exit_code == 0  # the local runtime has no network isolation


@pytest.mark.parametrize("kind", ["bwrap", "local"])
def test_runtime_hides_the_recon_package(kind: str, tmp_path: Path) -> None:
    # bwrap never mounts it; local covers it in its namespace (without namespaces it
    # cannot, and says so in its warnings)
    if kind == "bwrap" and not bwrap_available():
        pytest.skip("bubblewrap is not usable here")
    rt = BwrapRuntime() if kind == "bwrap" else LocalRuntime()
    if kind == "local" and rt.mode != "isolate":
        pytest.skip("no namespaces here")
    res = run(rt, tmp_path, """
        import glob, os
        try:
            import recon
            print("imported", recon.__file__)
        except (ImportError, OSError):
            print("hidden")
        # nor is any oracle's source readable by path
        import json
        print(json.dumps(sorted(glob.glob(os.path.join(%r, "*", "reference.py")))))
    """ % str(Path(__import__("recon.artifacts").artifacts.__path__[0])))
    first, second = res.stdout.strip().splitlines()
    assert first == b"hidden" and json.loads(second) == []


CHECKOUT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("kind", ["local", "local-nons", "local-nodrop", "bwrap"])
def test_a_run_sees_only_what_it_needs(kind: str, tmp_path: Path) -> None:
    """Not the checkout recon runs from (its .git holds every oracle's history), not the
    oracle sources, not RECON_HOME (the build secret), not another workspace: only the
    system, the interpreter, the public app and its own copy of the workspace."""
    rt = _make(kind)
    if not rt.confines_view:
        pytest.skip("this runtime cannot confine a run here (it warns, and refuses checkpoint series)")
    other = Path(tempfile.mkdtemp(prefix=".other-ws-", dir=CHECKOUT / "tests"))
    try:
        (other / "solver.py").write_text("SECRET = 42\n")
        secrets_to_try = [CHECKOUT / "artifacts" / "lidar_icp" / "reference.py", CHECKOUT / "pyproject.toml",
                          CHECKOUT / "tests" / "conftest.py", other / "solver.py",
                          Path(os.environ["RECON_HOME"]), Path.home() / ".local" / "share" / "recon"]
        if (CHECKOUT / ".git").exists():
            secrets_to_try.append(CHECKOUT / ".git" / "HEAD")
        res = run(rt, tmp_path, """
            import json, os, subprocess, sys
            paths = json.load(sys.stdin)["parameters"]["paths"]
            seen = []
            for p in paths:
                try:
                    if os.path.isdir(p):
                        os.listdir(p)
                    else:
                        open(p, "rb").read(1)
                    seen.append(p)
                except OSError:
                    pass
            try:
                out = subprocess.run(["git", "--git-dir", paths[-1].rsplit("/", 1)[0], "show",
                                      "HEAD:artifacts/lidar_icp/reference.py"], capture_output=True, timeout=10)
                if out.returncode == 0 and out.stdout:
                    seen.append("git show")
            except (OSError, subprocess.SubprocessError):
                pass
            import numpy  # the interpreter's packages stay usable
            print(json.dumps(seen))
        """, scenario={"id": "p", "parameters": {"paths": [str(p) for p in secrets_to_try]}})
        assert res.exit_code == 0, res.failure()
        assert json.loads(res.stdout) == []
    finally:
        shutil.rmtree(other, ignore_errors=True)


def test_concurrent_runs(rt_all: Runtime, tmp_path: Path) -> None:
    rt = rt_all
    ws = workspace(tmp_path, "import json, sys\nprint(json.load(sys.stdin)['id'])\n")
    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda i: rt.run(ws, {"id": f"s{i}"}, {}, FAST), range(8)))
    assert [r.exit_code for r in results] == [0] * 8
    assert [r.stdout.strip().decode() for r in results] == [f"s{i}" for i in range(8)]


# ------------------------------------------------------------------ availability and warnings


def test_local_warnings_and_isolation_flag() -> None:
    rt = LocalRuntime()
    landlock = landlock_abi() >= 1
    if IS_ROOT:
        assert rt.isolates_hidden and rt.confines_view
        assert not any("cannot hide hidden data" in w for w in rt.warnings())
        # without a uid of its own, a run is confined by Landlock where the kernel has it
        nodrop = LocalRuntime(drop_privileges=False)
        assert nodrop.isolates_hidden == landlock and nodrop.confines_view == landlock
        assert rt.separates_runs and not nodrop.separates_runs   # the grader's own user: nothing to clear by
    else:
        assert rt.confines_view == rt.isolates_hidden == landlock
    bare = LocalRuntime(drop_privileges=False, landlock=False) if IS_ROOT else LocalRuntime(landlock=False)
    assert not bare.isolates_hidden and not bare.confines_view
    assert any("cannot hide hidden data" in w for w in bare.warnings())
    assert any("checkpoint series are not graded" in w for w in bare.warnings())
    assert any("checkpoint series" in w for w in rt.warnings()) != (rt.confines_view and rt.separates_runs)


def test_bwrap_available_is_cached_bool() -> None:
    first = bwrap_available()
    t0 = time.monotonic()
    assert bwrap_available() is first and isinstance(first, bool)
    assert time.monotonic() - t0 < 0.05


def test_missing_bwrap_is_runtime_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None)
    with pytest.raises(RuntimeUnavailable) as info:
        BwrapRuntime()
    assert "apt-get install bubblewrap" in str(info.value)


def test_auto_prefers_bwrap_over_local() -> None:
    from recon.runtimes.docker import engine_available

    name = pick_runtime_name("auto")
    if engine_available():
        assert name == "docker"
    else:
        assert name == ("bwrap" if bwrap_available() else "local")


def test_launcher_reports_setup_errors() -> None:
    # the launcher is a script: a broken start goes to the status pipe, not to stderr/stdout
    import subprocess

    from recon.runtimes import _sandbox

    r, w = os.pipe()
    try:
        proc = subprocess.run([sys.executable, "-I", "-S", _sandbox.LAUNCHER,
                               json.dumps({"status_fd": w, "argv": ["/nonexistent"], "env": {}, "cwd": "/"})],
                              pass_fds=(w,), capture_output=True, timeout=30, check=False)
        os.close(w)
        w = -1
        assert proc.returncode == 127
        assert b"FileNotFoundError" in os.read(r, 4096)
    finally:
        os.close(r)
        if w >= 0:
            os.close(w)


def test_slot_directory_is_private() -> None:
    if not IS_ROOT:
        pytest.skip("slots are used only as root")
    from recon.runtimes._sandbox import SlotPool

    pool = SlotPool()
    uid, fd = pool.acquire()
    try:
        st = os.stat(pool._dir)
        assert stat.S_IMODE(st.st_mode) == 0o700 and st.st_uid == 0 and uid >= 61000
    finally:
        pool.release(fd)


@pytest.mark.skipif(not IS_ROOT, reason="the no-namespace supervisor is a root mode")
def test_the_supervisor_removes_what_a_run_leaves_in_shared_temp_directories(tmp_path: Path) -> None:
    """Without namespaces runs share /tmp: what a run leaves there, in a world-writable
    directory below it, or in /dev/shm is gone when it ends; a tree of read-only files in
    /tmp (a virtual environment kept there) neither slows the clean-up nor is touched."""
    token = secrets.token_hex(6)
    shared = Path(tempfile.mkdtemp(prefix=f"recon-shared-{token}-"))
    nested = shared / "a" / "b"
    nested.mkdir(parents=True)
    for d in (shared, shared / "a"):
        os.chmod(d, 0o755)
    os.chmod(nested, 0o1777)
    bulky = Path(tempfile.mkdtemp(prefix=f"recon-bulky-{token}-"))
    os.chmod(bulky, 0o755)
    for i in range(200):
        (bulky / f"d{i}").mkdir()
        for j in range(50):
            (bulky / f"d{i}" / f"f{j}").write_text("x")
    rt = LocalRuntime(namespaces=False)
    try:
        res = run(rt, tmp_path, f"""
            import os
            open('/tmp/left-{token}', 'w').write('x')
            os.makedirs('/tmp/tree-{token}/x/y'); open('/tmp/tree-{token}/x/y/z', 'w').write('x')
            open('{nested}/left-{token}', 'w').write('x')
            if os.path.isdir('/dev/shm'):
                open('/dev/shm/left-{token}', 'w').write('x')
            print('{{}}')
        """)
        assert res.exit_code == 0 and res.failure() is None, res
        left = [p for p in (Path(f"/tmp/left-{token}"), Path(f"/tmp/tree-{token}"), nested / f"left-{token}",
                            Path(f"/dev/shm/left-{token}")) if os.path.lexists(p)]
        assert left == []
        assert sum(1 for _ in bulky.rglob("f*")) == 200 * 50
    finally:
        rt.close()
        shutil.rmtree(shared, ignore_errors=True)
        shutil.rmtree(bulky, ignore_errors=True)


def test_a_concealed_path_is_exposed_under_a_temp_dir_only_through_traversable_directories(tmp_path: Path) -> None:
    from recon.runtimes._sandbox import exposed_under

    open_dir = Path(tempfile.mkdtemp(prefix="recon-exposed-"))
    try:
        os.chmod(open_dir, 0o755)
        (open_dir / "checkout").mkdir()
        assert exposed_under(str(open_dir / "checkout"), ("/tmp",))
        os.chmod(open_dir, 0o700)
        assert not exposed_under(str(open_dir / "checkout"), ("/tmp",))
        assert not exposed_under("/usr/lib", ("/tmp", "/var/tmp"))
    finally:
        shutil.rmtree(open_dir, ignore_errors=True)
