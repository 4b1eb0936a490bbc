"""Attacks on the sandboxes themselves: each test reproduces an attack that once worked.

- a run swapping a directory of the workspace for a symlink while root copies the
  workspace for a sibling run (the copy followed the link into hidden data);
- files left in /tmp, /var/tmp and /dev/shm carrying state from one run to the next;
- a sparse multi-gigabyte file making every run's copy allocate and read it;
- a fork bomb whose survivors made the next run on the same sandbox uid fail to start;
- bwrap with the interpreter under /tmp (hidden by the sandbox's own /tmp);
- a grader killing the runs of another grader (a container's verifier) that happens to
  use the same sandbox uid in another PID namespace — the cause of the verifier's
  "killed by signal 9".
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import textwrap
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from recon.runtimes import Limits, Runtime
from recon.runtimes import _sandbox as sb
from recon.runtimes.bwrap import BwrapRuntime, bwrap_available
from recon.runtimes.local import LocalRuntime

IS_ROOT = os.geteuid() == 0
FAST = Limits(wall=20, cpu=20, memory=1 << 30, nproc=32, stdout=1 << 20)
KINDS = ["local", "local-nons", "bwrap"]


def _make(kind: str) -> Runtime:
    if kind == "bwrap":
        if not bwrap_available():
            pytest.skip("bwrap cannot create a sandbox here")
        return BwrapRuntime()
    if not IS_ROOT:
        pytest.skip("uid-per-run sandboxes need root")
    return LocalRuntime(namespaces=None if kind == "local" else False)


@pytest.fixture(scope="module", params=KINDS)
def rt(request: pytest.FixtureRequest) -> Iterator[Runtime]:
    runtime = _make(request.param)
    yield runtime
    runtime.close()


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A world-traversable directory outside pytest's 0700 tmp root."""
    d = Path(tempfile.mkdtemp(prefix="recon-attack-"))
    os.chmod(d, 0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def _ws(parent: Path, code: str, name: str = "ws") -> Path:
    ws = parent / name
    ws.mkdir()
    (ws / "reconstruct.py").write_text(textwrap.dedent(code))
    return ws


def _owned_by_slots(top: str) -> list[str]:
    found = []
    for root, dirs, files in os.walk(top):
        for n in dirs + files:
            p = os.path.join(root, n)
            try:
                uid = os.lstat(p).st_uid
            except OSError:
                continue
            if sb.UID_BASE <= uid < sb.UID_BASE + sb.MAX_SLOTS:
                found.append(p)
    return found


def test_symlink_swap_during_the_copy_never_reaches_hidden_data(rt: Runtime, shared_dir: Path) -> None:
    """Run A keeps swapping ``data/`` for a link to a hidden directory while sibling runs
    are copied from the same (world-writable) workspace; no copy may contain the secret."""
    hidden = shared_dir / "tests" / "hidden"
    hidden.mkdir(parents=True)
    (hidden / "oracle_output.json").write_text('{"secret": "HIDDEN-TRUTH-7"}')
    os.chmod(shared_dir / "tests", 0o700)
    ws = _ws(shared_dir, """
        import json, os, sys, time
        doc = json.load(sys.stdin)
        found = []
        for root, dirs, files in os.walk("."):
            for f in files:
                try:
                    if b"HIDDEN-" + b"TRUTH" in open(os.path.join(root, f), "rb").read():
                        found.append(os.path.join(root, f))
                except OSError:
                    pass
        if doc["id"] == "swapper":
            ws = doc["parameters"]["original"]
            found.append(os.path.isdir(ws))  # namespaced runtimes cannot even see it
            swaps = 0
            end = time.time() + 3
            while time.time() < end:
                try:
                    os.rename(os.path.join(ws, "data"), os.path.join(ws, "data.real"))
                    os.symlink(doc["parameters"]["hidden"], os.path.join(ws, "data"))
                    time.sleep(0.0005)
                    os.unlink(os.path.join(ws, "data"))
                    os.rename(os.path.join(ws, "data.real"), os.path.join(ws, "data"))
                    swaps += 1
                except OSError:
                    pass
                time.sleep(0.0005)
            found.append(swaps)
        print(json.dumps(found))
    """)
    (ws / "data").mkdir()
    (ws / "data" / "x.txt").write_text("public")
    # many files widen the window between reading the workspace's entries and entering data/
    for i in range(300):
        (ws / f"pad{i:03d}.bin").write_bytes(os.urandom(1) * 20000)
    for p in [ws, *ws.rglob("*")]:
        os.chmod(p, 0o777 if p.is_dir() else 0o666)  # as `docker cp` may leave it
    stop = time.monotonic() + 3
    swaps: list[Any] = []
    swapper = threading.Thread(target=lambda: swaps.append(rt.run(ws, {"id": "swapper", "parameters": {
        "original": str(ws), "hidden": str(hidden)}}, {}, FAST)))
    swapper.start()
    leaks = []
    while time.monotonic() < stop:
        res = rt.run(ws, {"id": "sibling", "parameters": {}}, {}, FAST)
        if res.exit_code == 0 and json.loads(res.stdout) != []:
            leaks.append(res.stdout)
    swapper.join()
    assert swaps[0].exit_code == 0, swaps[0].failure()
    reachable, count = json.loads(swaps[0].stdout)[-2:]
    assert count > 100 or not reachable  # the attack really ran, where it can
    if isinstance(rt, LocalRuntime) and rt.mode == "supervise":
        assert reachable
    assert leaks == []


def test_temp_files_do_not_outlive_their_run(rt: Runtime, shared_dir: Path) -> None:
    token = f"recon-left-{os.getpid()}"
    ws = _ws(shared_dir, f"""
        import json, os, sys
        doc = json.load(sys.stdin)
        seen = {{}}
        for d in ("/tmp", "/var/tmp", "/dev/shm"):
            p = os.path.join(d, "{token}")
            seen[d] = os.path.exists(p)
            if doc["id"] == "writer":
                try:
                    os.makedirs(p + ".dir", exist_ok=True)
                    open(os.path.join(p + ".dir", "f"), "w").write("x")
                    open(p, "w").write("state from an earlier run")
                except OSError as exc:
                    seen[d] = str(exc)
        print(json.dumps(seen))
    """)
    first = rt.run(ws, {"id": "writer"}, {}, FAST)
    assert first.exit_code == 0, first.stderr_tail
    second = rt.run(ws, {"id": "reader"}, {}, FAST)
    assert json.loads(second.stdout) == {"/tmp": False, "/var/tmp": False, "/dev/shm": False}
    for d in ("/tmp", "/var/tmp", "/dev/shm"):
        assert not os.path.exists(os.path.join(d, token))
        assert [p for p in _owned_by_slots(d) if token in p] == []


def test_sparse_giant_file_is_refused_without_reading_it(rt: Runtime, shared_dir: Path) -> None:
    ws = _ws(shared_dir, "print('{}')\n")
    with open(ws / "blob.bin", "wb") as f:
        f.truncate(3 << 30)  # 3 GiB, allocates nothing
    t0 = time.monotonic()
    res = rt.run(ws, {"id": "x"}, {}, FAST)
    assert time.monotonic() - t0 < 5
    assert res.rejected and "MiB" in res.rejected and "blob.bin" in res.rejected
    assert res.failure() is not None and res.failure().startswith("not run:")


def test_fork_bomb_never_breaks_the_next_run_on_the_same_uid(rt: Runtime, shared_dir: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    # every acquire starts at the same slot, so the next run wants the bomb's uid
    monkeypatch.setattr(sb.secrets, "randbelow", lambda n: 7)
    bomb = _ws(shared_dir, """
        import os
        while True:
            try:
                os.fork()
            except OSError:
                pass
    """, name="bomb")
    ok = _ws(shared_dir, "import os\nprint(os.getuid())\n", name="ok")
    limits = Limits(wall=2, cpu=20, memory=1 << 30, nproc=24, stdout=1 << 20)
    for _ in range(2):
        res = rt.run(bomb, {"id": "bomb"}, {}, limits)
        assert res.timed_out or res.signal is not None or res.exit_code is not None
        after = [rt.run(ok, {"id": "ok"}, {}, FAST) for _ in range(3)]
        assert [r.exit_code for r in after] == [0, 0, 0], [r.failure() for r in after]
    # the bomb's uid empties (a namespace being torn down may take a moment), and
    # until it has, the slot is skipped rather than shared
    deadline = time.monotonic() + 5
    while sb.uid_processes(sb.UID_BASE + 7) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sb.uid_processes(sb.UID_BASE + 7) == []


@pytest.mark.skipif(not bwrap_available() or not IS_ROOT, reason="needs bwrap and root")
def test_bwrap_runs_an_interpreter_that_lives_under_tmp() -> None:
    venv = Path(tempfile.mkdtemp(prefix="recon-venv-", dir="/tmp"))
    try:
        os.chmod(venv, 0o755)
        subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv / "v")],
                       check=True)
        code = textwrap.dedent("""
            import json, tempfile
            from pathlib import Path
            from recon.runtimes import Limits
            from recon.runtimes.bwrap import BwrapRuntime
            with tempfile.TemporaryDirectory() as d:
                ws = Path(d) / "ws"; ws.mkdir()
                (ws / "reconstruct.py").write_text("import sys; print(sys.prefix)")
                r = BwrapRuntime().run(ws, {"id": "x"}, {}, Limits(wall=20))
                print(json.dumps([r.exit_code, r.stdout.decode().strip(), r.failure()]))
        """)
        # the new interpreter sees this one's packages (recon and its dependencies) by path
        path = os.pathsep.join([str(Path(__file__).resolve().parents[1]), sysconfig.get_paths()["purelib"]])
        out = subprocess.run([str(venv / "v" / "bin" / "python"), "-c", code], capture_output=True, text=True,
                             timeout=120, cwd="/", env={**os.environ, "PYTHONPATH": path})
        assert out.returncode == 0, out.stderr[-2000:]
        code_, prefix, failure = json.loads(out.stdout.strip().splitlines()[-1])
        assert code_ == 0, failure
        assert prefix == str(venv / "v")
    finally:
        shutil.rmtree(venv, ignore_errors=True)


@pytest.mark.skipif(not IS_ROOT or shutil.which("unshare") is None, reason="needs root and util-linux unshare")
def test_a_foreign_process_with_our_uid_in_another_pid_namespace_is_never_killed() -> None:
    """A verifier container and its host grader share the kernel's uids but not their PID
    namespaces or slot locks. The host's sweep used to kill the container's runs (SIGKILL
    after 0.05-1.5 s); now a uid is only ours inside our own namespace, and a slot whose
    uid someone else uses is skipped."""
    uid = sb.UID_BASE + 11
    foreign = subprocess.Popen(["unshare", "--pid", "--fork", "--mount-proc", "--", "setpriv",
                                f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "sleep", "30"])
    try:
        deadline = time.monotonic() + 5
        while not sb.uid_processes(uid) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert sb.uid_processes(uid), "the foreign process did not start"
        assert sb.kill_uid(uid) is True          # nothing of ours to kill ...
        time.sleep(0.2)
        assert sb.uid_processes(uid)             # ... and the stranger lives on
        pool = sb.SlotPool()
        got = []
        import recon.runtimes._sandbox as mod
        orig = mod.secrets.randbelow
        try:
            mod.secrets.randbelow = lambda n: 11   # type: ignore[assignment]
            got_uid, fd = pool.acquire()
            got.append(got_uid)
            pool.release(fd)
        finally:
            mod.secrets.randbelow = orig          # type: ignore[assignment]
        assert got and got[0] != uid             # its slot was skipped
    finally:
        foreign.kill()
        foreign.wait()


def test_fifos_sockets_and_devices_in_the_workspace_neither_block_nor_travel(rt: Runtime, shared_dir: Path) -> None:
    import socket
    import stat as st

    ws = _ws(shared_dir, """
        import json, os
        print(json.dumps(sorted(os.listdir("."))))
    """)
    os.mkfifo(ws / "pipe")          # opening it for reading would block a naive copier forever
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(ws / "sock"))
    if IS_ROOT:
        os.mknod(ws / "null", 0o666 | st.S_IFCHR, os.makedev(1, 3))
    try:
        t0 = time.monotonic()
        res = rt.run(ws, {"id": "x"}, {}, FAST)
        assert time.monotonic() - t0 < 10
        assert res.exit_code == 0, res.failure()
        assert json.loads(res.stdout) == ["reconstruct.py"]
    finally:
        sock.close()


def test_a_run_can_neither_signal_nor_trace_the_grader(rt: Runtime, shared_dir: Path) -> None:
    """Every process the run can see gets SIGKILL and a ptrace attach; the grader (this
    process) and the run's own supervisor survive, and the run is graded normally."""
    ws = _ws(shared_dir, f"""
        import ctypes, json, os, signal
        libc = ctypes.CDLL(None, use_errno=True)
        me = os.getpid()
        killed, traced = [], []
        for d in os.listdir("/proc"):
            if d.isdigit() and int(d) != me:
                try:
                    os.kill(int(d), signal.SIGKILL)
                    killed.append(int(d))
                except OSError:
                    pass
                if libc.ptrace(16, int(d), None, None) == 0:   # PTRACE_ATTACH
                    traced.append(int(d))
        print(json.dumps({{"killed": killed, "traced": traced, "grader_visible": {os.getpid()} in
                          [int(d) for d in os.listdir("/proc") if d.isdigit()]}}))
    """)
    limits = Limits(wall=5, cpu=20, memory=1 << 30, nproc=32, stdout=1 << 20)
    res = rt.run(ws, {"id": "x"}, {}, limits)
    out = json.loads(res.stdout)
    assert os.getpid() not in out["killed"]
    if isinstance(rt, BwrapRuntime) or getattr(rt, "mode", "") == "isolate":
        # a private PID namespace: nothing of the grader's is even visible. (Inside bwrap the
        # run may stop its own sandbox's init, which only costs it its wall-clock limit.)
        assert out["grader_visible"] is False
    else:
        assert res.exit_code == 0, res.failure()
        assert out["traced"] == [] and out["killed"] == []
    # and the grader's runtime still works afterwards
    again = rt.run(_ws(shared_dir, "print('{}')\n", name="again"), {"id": "y"}, {}, FAST)
    assert again.exit_code == 0


def test_no_ipc_object_carries_state_from_one_run_to_the_next(rt: Runtime, shared_dir: Path) -> None:
    """System V shared memory, semaphores and message queues, and POSIX message queues,
    outlive their process when there is no IPC namespace: a later run (another program's,
    an earlier checkpoint's) must find nothing of an earlier one's there."""
    key = 0x5EC000 + os.getpid() % 4096
    ws = _ws(shared_dir, f"""
        import ctypes, json, sys
        libc = ctypes.CDLL(None, use_errno=True)
        doc = json.load(sys.stdin)
        seen = {{"shm": libc.shmget({key}, 4096, 0) >= 0, "sem": libc.semget({key}, 1, 0) >= 0,
                 "msg": libc.msgget({key}, 0) >= 0}}
        libc.mq_open.restype = ctypes.c_int
        mq = libc.mq_open(b"/recon-{key}", 0o2)
        seen["mq"] = mq >= 0
        if doc["id"] == "writer":
            made = {{"shm": libc.shmget({key}, 4096, 0o1666), "sem": libc.semget({key}, 1, 0o1666),
                     "msg": libc.msgget({key}, 0o1666),
                     "mq": libc.mq_open(b"/recon-{key}", 0o102, 0o666, None)}}   # O_RDWR | O_CREAT
            seen["made"] = sorted(k for k, v in made.items() if v >= 0)
        print(json.dumps(seen))
    """)
    first = rt.run(ws, {"id": "writer"}, {}, FAST)
    assert first.exit_code == 0, first.failure()
    assert {"shm", "sem", "msg"} <= set(json.loads(first.stdout)["made"])   # the attack was possible
    second = rt.run(ws, {"id": "reader"}, {}, FAST)
    assert json.loads(second.stdout) == {"shm": False, "sem": False, "msg": False, "mq": False}
    for kind in ("shm", "sem", "msg"):
        with open(f"/proc/sysvipc/{kind}") as f:
            assert not [line for line in f if line.split()[0] == str(key)], kind


@pytest.mark.parametrize("place", ["workspace", "home", "/tmp", "/var/tmp", "/dev/shm", "/dev"])
def test_no_place_a_run_writes_to_holds_more_than_its_scratch_limit(rt: Runtime, shared_dir: Path, place: str) -> None:
    """Files of at most RLIMIT_FSIZE each, as many as it likes, wherever it may write: a
    sized tmpfs refuses the excess, and on the host's disk the run is killed (measured
    every quarter second, so long before it has written what it tries to: 2 GiB)."""
    limits = Limits(wall=30, cpu=30, memory=1 << 30, nproc=32, stdout=1 << 20, fsize=8 << 20)
    assert limits.scratch == 64 << 20
    ws = _ws(shared_dir, f"""
        import json, os
        place = {place!r}
        top = {{"workspace": ".", "home": os.environ.get("HOME", ".")}}.get(place, place)
        chunk, written, why = b"x" * (8 << 20), 0, "done"
        try:
            d = os.path.join(top, "fill-%d" % os.getpid())
            os.makedirs(d)
            for i in range(256):                 # 2 GiB, 32 times the limit
                with open(os.path.join(d, str(i)), "wb") as f:
                    f.write(chunk)
                written += len(chunk)
        except OSError as exc:
            why = type(exc).__name__
        print(json.dumps({{"written": written, "why": why}}))
    """)
    res = rt.run(ws, {"id": "fill"}, {}, limits)
    if res.disk_overflow:
        assert res.failure() == "wrote more than 64 MiB to disk (killed)"
        return
    assert res.exit_code == 0, res.failure()
    out = json.loads(res.stdout)
    assert out["written"] <= limits.scratch and out["why"] != "done", out


def test_a_run_filling_the_disk_through_unlinked_files_is_killed(rt: Runtime, shared_dir: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Files unlinked while held open are in no folder, yet take disk space: the run is
    killed once the disk has lost more than the scratch limit and is down to its reserve
    (here the reserve is everything, as if the disk were nearly full)."""
    monkeypatch.setattr(sb, "DISK_RESERVE", (1 << 62, 1.0))
    limits = Limits(wall=30, cpu=30, memory=1 << 30, nproc=32, stdout=1 << 20, fsize=8 << 20)
    ws = _ws(shared_dir, """
        import json, os
        chunk, held, written = b"x" * (8 << 20), [], 0
        for i in range(256):                     # 2 GiB, none of it in any folder
            name = "hidden-%d" % i
            f = open(name, "wb")
            os.unlink(name)
            f.write(chunk)
            f.flush()
            held.append(f)
            written += len(chunk)
        print(json.dumps({"written": written}))
    """)
    res = rt.run(ws, {"id": "fill"}, {}, limits)
    assert (res.disk_overflow or "").startswith("held more than 64 MiB in unlinked files"), res.failure() or res.stdout


def _an_honest_run_beside(rt: Runtime, shared_dir: Path, neighbour: Callable[[], None]) -> None:
    """An honest 1.5 s run while ``neighbour`` (another tenant of the machine) works: the
    neighbour gets done, and the run exits 0 with its output."""
    limits = Limits(wall=30, cpu=30, memory=512 << 20, nproc=32, stdout=1 << 20, fsize=8 << 20)
    ws = _ws(shared_dir, "import json, sys, time\nsys.stdin.read()\ntime.sleep(1.5)\nprint(json.dumps('done'))\n")
    done = threading.Event()

    def work() -> None:
        time.sleep(0.2)
        neighbour()
        done.set()

    t = threading.Thread(target=work)
    t.start()
    try:
        res = rt.run(ws, {"id": "x"}, {}, limits)
    finally:
        t.join()
    assert done.is_set()
    assert res.exit_code == 0 and json.loads(res.stdout) == "done", res.failure()


def test_a_neighbour_filling_the_disk_gets_no_run_killed(rt: Runtime, shared_dir: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The disk is every tenant's: another writer taking it down to its reserve while an
    honest run works must not cost the run anything."""
    monkeypatch.setattr(sb, "DISK_RESERVE", (1 << 62, 1.0))     # as if the disk were nearly full

    def fill() -> None:
        with open(shared_dir / "neighbour.bin", "wb") as f:
            for _ in range(24):                  # 192 MiB, beyond the run's 64
                f.write(b"x" * (8 << 20))
            f.flush()
            os.fsync(f.fileno())

    _an_honest_run_beside(rt, shared_dir, fill)


def test_a_folder_made_unreadable_hides_nothing_from_the_disk_watch(rt: Runtime, shared_dir: Path) -> None:
    limits = Limits(wall=30, cpu=30, memory=1 << 30, nproc=32, stdout=1 << 20, fsize=8 << 20)
    ws = _ws(shared_dir, """
        import json, os
        chunk, written = b"x" * (8 << 20), 0
        for i in range(256):                     # 2 GiB in folders nobody may list or enter
            d = "hide-%d" % i
            os.mkdir(d)
            with open(os.path.join(d, "f"), "wb") as f:
                f.write(chunk)
            os.chmod(d, 0o000 if i % 2 else 0o400)
            written += len(chunk)
        print(json.dumps({"written": written}))
    """)
    res = rt.run(ws, {"id": "fill"}, {}, limits)
    assert res.failure() == "wrote more than 64 MiB to disk (killed)", res.failure() or res.stdout


def test_folders_nested_thousands_deep_neither_crash_the_grader_nor_outlive_the_run(rt: Runtime,
                                                                                   shared_dir: Path) -> None:
    """Deeper than any path may be long and than the interpreter may recurse: removing them
    once raised RecursionError in the grader (and, without namespaces, in the supervisor
    purging /tmp, which left them for the next run)."""
    token = f"recon-deep-{os.getpid()}"
    ws = _ws(shared_dir, f"""
        import json, os, sys
        doc = json.load(sys.stdin)
        found = os.path.exists("/tmp/{token}")
        if doc["id"] == "writer":
            for top in (".", "/tmp/{token}"):
                try:
                    os.makedirs(top, exist_ok=True)
                    fd = os.open(top, os.O_RDONLY)
                    for i in range(3000):
                        os.mkdir("d", dir_fd=fd)
                        nfd = os.open("d", os.O_RDONLY, dir_fd=fd)
                        os.close(fd)
                        fd = nfd
                    os.close(os.open("payload", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))
                    os.close(fd)
                except OSError:
                    pass
        print(json.dumps({{"found": found}}))
    """)
    first = rt.run(ws, {"id": "writer"}, {}, FAST)
    assert first.exit_code == 0 or (first.disk_overflow or "").startswith("nested folders deeper"), first.failure()
    second = rt.run(ws, {"id": "reader"}, {}, FAST)
    assert json.loads(second.stdout) == {"found": False}
    assert not os.path.exists(f"/tmp/{token}")


def test_a_run_stopped_at_its_time_limit_leaves_nothing_for_the_next(rt: Runtime, shared_dir: Path) -> None:
    """The same as a run that exits, for one the grader stops: its supervisor still purges
    what it left (once it crashed on the stop request and purged nothing)."""
    token = f"recon-stopped-{os.getpid()}"
    key = 0x5ED000 + os.getpid() % 4096
    ws = _ws(shared_dir, f"""
        import ctypes, json, os, sys, time
        doc = json.load(sys.stdin)
        places = ["/tmp/{token}", "/var/tmp/{token}", "/dev/shm/{token}"]
        libc = ctypes.CDLL(None, use_errno=True)
        seen = [p for p in places if os.path.exists(p)] + (["shm"] if libc.shmget({key}, 4096, 0) >= 0 else [])
        if doc["id"] == "writer":
            for p in places:
                try:
                    with open(p, "w") as f:
                        f.write("left by a run that was stopped")
                    os.chmod(p, 0o644)
                except OSError:
                    pass
            libc.shmget({key}, 4096, 0o1644)
            time.sleep(60)
        print(json.dumps(seen))
    """)
    limits = Limits(wall=2, cpu=20, memory=1 << 30, nproc=32, stdout=1 << 20)
    first = rt.run(ws, {"id": "writer"}, {}, limits)
    assert first.timed_out
    second = rt.run(ws, {"id": "reader"}, {}, FAST)
    assert json.loads(second.stdout) == []


def test_no_kernel_keyring_and_without_a_network_namespace_no_ip_socket(rt: Runtime, shared_dir: Path) -> None:
    """Kernel keys belong to no namespace: a key a run made world-readable outlived it, and a
    checkpoint read the final workspace's code from it. Without a network namespace
    (Landlock refuses TCP, not UDP) a run could send what it read to anyone listening."""
    import platform

    if platform.machine() not in ("x86_64", "aarch64", "arm64"):
        pytest.skip("the seccomp filter knows this machine's syscall numbers only on x86_64 and arm64")
    add_key = 248 if platform.machine() == "x86_64" else 217
    ws = _ws(shared_dir, f"""
        import ctypes, json, socket, sys
        sys.stdin.read()
        libc = ctypes.CDLL(None, use_errno=True)
        made = libc.syscall({add_key}, b"user", b"recon-left", b"state", 5, -4)   # into the uid's keyring
        out = {{"add_key": [made, ctypes.get_errno()], "unix": socket.socketpair()[0].family.name}}
        try:
            socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("127.0.0.1", 9))
            out["udp"] = "sent"
        except OSError as exc:
            out["udp"] = exc.strerror
        print(json.dumps(out))
    """)
    res = rt.run(ws, {"id": "x"}, {}, FAST)
    out = json.loads(res.stdout)
    assert out["add_key"] == [-1, 38] and out["unix"] == "AF_UNIX", out      # ENOSYS
    if isinstance(rt, LocalRuntime) and rt.mode != "isolate":
        assert out["udp"] == "Address family not supported by protocol", out


def test_paths_past_the_system_limit_hide_nothing_from_the_disk_watch(rt: Runtime, shared_dir: Path) -> None:
    limits = Limits(wall=30, cpu=30, memory=1 << 30, nproc=32, stdout=1 << 20, fsize=8 << 20)
    ws = _ws(shared_dir, """
        import json, os
        fd = os.open(".", os.O_RDONLY)
        for i in range(20):                      # 20 names of 250 bytes: past PATH_MAX
            name = "%03d" % i + "n" * 247
            os.mkdir(name, dir_fd=fd)
            nfd = os.open(name, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = nfd
        chunk = b"x" * (8 << 20)
        for i in range(256):                     # 2 GiB down there
            f = os.open("f%d" % i, os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
            os.write(f, chunk)
            os.close(f)
        print(json.dumps("done"))
    """)
    res = rt.run(ws, {"id": "fill"}, {}, limits)
    assert (res.disk_overflow or "").startswith("nested folders deeper than can be measured"), res.failure()


def test_memory_no_rlimit_counts_is_bounded_too(rt: Runtime, shared_dir: Path) -> None:
    """memfd pages are shared memory: RLIMIT_AS does not count them and RLIMIT_FSIZE caps
    each one only. A run held 3 GiB that way with a 512 MiB limit."""
    limits = Limits(wall=30, cpu=30, memory=512 << 20, nproc=32, stdout=1 << 20, fsize=8 << 20)
    ws = _ws(shared_dir, """
        import json, os
        chunk, held = b"x" * (8 << 20), []
        for i in range(384):                     # 3 GiB
            fd = os.memfd_create("held-%d" % i)
            os.write(fd, chunk)
            held.append(fd)
        print(json.dumps(len(held)))
    """)
    res = rt.run(ws, {"id": "fill"}, {}, limits)
    assert (res.disk_overflow or "").startswith("held more than 512 MiB in memory files"), res.failure()


def test_no_other_tenants_shared_memory_gets_a_run_killed(rt: Runtime, shared_dir: Path) -> None:
    """The machine's shared memory is every tenant's: a neighbour (another grading, another
    trial's verifier on the same kernel) growing it by more than this run's memory limit
    while the run works must not cost the run anything."""
    neighbour = os.memfd_create("neighbour")

    def grow() -> None:
        for _ in range(96):                      # 768 MiB, beyond the run's 512
            os.write(neighbour, b"x" * (8 << 20))

    try:
        _an_honest_run_beside(rt, shared_dir, grow)
    finally:
        os.close(neighbour)


def _live_slot_processes(comm: str) -> list[int]:
    """Processes of a sandbox uid with a live thread named ``comm`` (a zombie leader counts
    while one runs); the name keeps other graders' runs on this machine out of it."""
    found = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            if not sb.UID_BASE <= os.stat(f"/proc/{d}").st_uid < sb.UID_BASE + sb.MAX_SLOTS:
                continue
            tasks = os.listdir(f"/proc/{d}/task")
            live = []
            for t in tasks:
                with open(f"/proc/{d}/task/{t}/stat", "rb") as f:
                    state = f.read().rsplit(b")", 1)[1].split()[0]
                with open(f"/proc/{d}/task/{t}/comm") as f:
                    name = f.read().strip()
                live.append(state not in (b"Z", b"X") and name == comm)
        except OSError:
            continue
        if any(live):
            found.append(int(d))
    return found


def test_a_thread_whose_leader_exited_dies_with_its_run(rt: Runtime, shared_dir: Path) -> None:
    """A daemon (setsid, double fork) whose main thread ends with a raw exit(2) is a zombie
    leader in /proc while its other thread runs on: skipped as "dead", it outlived its run
    and the grader, and kept files in /tmp for the next runs (a checkpoint read the final
    workspace's answers from it)."""
    import platform

    sys_exit = {"x86_64": 60, "aarch64": 93, "arm64": 93}.get(platform.machine())
    if sys_exit is None:
        pytest.skip("exit(2)'s number is known here for x86_64 and arm64 only")
    beat = shared_dir / "beat"
    beat.mkdir(mode=0o777)
    os.chmod(beat, 0o777)
    ws = _ws(shared_dir, f"""
        import ctypes, json, os, sys, threading, time
        sys.stdin.read()
        def beat():
            ctypes.CDLL(None).prctl(15, b"recon-leader", 0, 0, 0)   # PR_SET_NAME
            while True:
                try:
                    with open("{beat}/alive", "a") as f:
                        f.write("x")
                except OSError:
                    pass
                time.sleep(0.05)
        pid = os.fork()
        if pid == 0:
            os.setsid()
            if os.fork() == 0:
                threading.Thread(target=beat).start()
                time.sleep(0.2)
                ctypes.CDLL(None).syscall({sys_exit}, 0)   # only the main thread ends
            os._exit(0)
        os.waitpid(pid, 0)
        time.sleep(0.5)
        print(json.dumps({{"ok": 1}}))
    """)
    t0 = time.monotonic()
    res = rt.run(ws, {"id": "x"}, {}, FAST)
    took = time.monotonic() - t0
    assert res.exit_code == 0, res.stderr_tail
    assert took < 8.0, took                       # no kill loop waited out its deadline
    alive = beat / "alive"
    time.sleep(0.3)
    size = alive.stat().st_size if alive.exists() else 0
    time.sleep(0.5)
    assert (alive.stat().st_size if alive.exists() else 0) == size, "the daemon's thread still writes"
    assert _live_slot_processes("recon-leader") == []


def test_files_put_back_under_a_finished_runs_uid_are_cleared_and_counted(rt: Runtime, shared_dir: Path) -> None:
    """Two concurrent runs: B leaves world-writable files in /tmp; A links them into a folder
    of its own, waits until B's purge removed B's names for them, and links them back at the
    top of /tmp, where they belong to B's uid, so A's purge (by owner) skipped them and a
    later run read them; nor did the disk watch count what A wrote into them. They must be
    gone after A's run, and A may not write more than its scratch limit into them."""
    token = f"recon-back-{os.getpid()}"
    limits = Limits(wall=20, cpu=20, memory=1 << 30, nproc=32, stdout=1 << 20, fsize=16 << 20)   # scratch 64 MiB
    ws = _ws(shared_dir, f"""
        import json, os, sys, time
        role = json.load(sys.stdin)["id"]
        b, mine, keep = "/tmp/{token}-b", "/tmp/{token}-a", "/tmp/{token}-keep"
        out = {{"role": role}}
        if role == "B":
            for i in range(5):
                with open(f"{{b}}{{i}}", "w") as f:
                    f.write("from B")
                os.chmod(f"{{b}}{{i}}", 0o666)
            time.sleep(0.5)
        elif role == "A":
            end = time.time() + 4
            while not os.path.exists(b + "4") and time.time() < end:
                time.sleep(0.01)
            try:
                os.makedirs(mine, exist_ok=True)
                for i in range(5):
                    os.link(f"{{b}}{{i}}", f"{{mine}}/{{i}}")
                while os.path.exists(b + "0") and time.time() < end:
                    time.sleep(0.01)
                for i in range(5):
                    os.link(f"{{mine}}/{{i}}", f"{{keep}}{{i}}")
                    os.unlink(f"{{mine}}/{{i}}")
                out["kept"] = os.stat(keep + "0").st_uid != os.getuid()
                for i in range(5):                           # 80 MiB in files of B's uid
                    with open(f"{{keep}}{{i}}", "wb") as f:
                        f.write(b"x" * (16 << 20))
                time.sleep(1.0)
                out["left"] = [i for i in range(5) if os.path.exists(f"{{keep}}{{i}}")]
            except OSError as exc:
                out["kept"] = str(exc)
        else:
            out["found"] = [i for i in range(5) if os.path.exists(f"{{keep}}{{i}}")]
        print(json.dumps(out))
    """)
    got: dict[str, Any] = {}

    def go(role: str) -> None:
        got[role] = rt.run(ws, {"id": role}, {}, limits)

    threads = [threading.Thread(target=go, args=(r,)) for r in ("A", "B")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got["B"].exit_code == 0, got["B"].stderr_tail
    if isinstance(rt, LocalRuntime) and rt.mode == "supervise":
        # killed past its scratch limit, or what it kept of B's files stays within that limit
        # (the idle-uid purge after B's run may race A's links and remove some of them)
        over = got["A"].disk_overflow
        left = json.loads(got["A"].stdout)["left"] if not over else None
        assert (over and "wrote more than 64 MiB" in over) or len(left) * (16 << 20) <= 64 << 20, got["A"]
    else:   # a /tmp of its own: the runs share nothing there
        assert got["A"].exit_code == 0 and "No such file" in json.loads(got["A"].stdout)["kept"], got["A"]
    go("C")
    assert json.loads(got["C"].stdout) == {"role": "C", "found": []}
    assert [p for p in _owned_by_slots("/tmp") if token in p] == []


def test_io_uring_is_refused(rt: Runtime, shared_dir: Path) -> None:
    """io_uring's requests never pass through the seccomp filter: IORING_OP_SOCKET made the
    IPv4 and IPv6 sockets the filter refuses to socket(2). Its calls are refused whole."""
    import platform

    if platform.machine() not in ("x86_64", "aarch64", "arm64"):
        pytest.skip("the seccomp filter knows this machine's syscall numbers only on x86_64 and arm64")
    ws = _ws(shared_dir, """
        import ctypes, json, sys
        sys.stdin.read()
        libc = ctypes.CDLL(None, use_errno=True)
        params = ctypes.create_string_buffer(120)            # struct io_uring_params, zeroed
        fd = libc.syscall(425, 8, params)                    # io_uring_setup(8 entries)
        print(json.dumps([fd, ctypes.get_errno()]))
    """)
    res = rt.run(ws, {"id": "x"}, {}, FAST)
    assert json.loads(res.stdout) == [-1, 38], res.stderr_tail       # ENOSYS


def test_removing_a_tree_never_leaves_it_when_a_folder_is_moved_out(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A run still alive moved the folder the root purge was emptying out of the tree; the
    purge went back up by ``..``, landed in the folder's new parent and emptied the names it
    still had to visit there: root deleting outside the run's files (up to ``/``)."""
    from recon.runtimes import _launcher

    base = tmp_path / "base"
    tree = base / "tree" / "cdir"
    for name in ("d3", "rt4v"):
        (tree / name).mkdir(parents=True)
        (tree / name / "f").write_text("the run's")
        (base / name).mkdir()
        (base / name / "keep").write_text("not the run's")   # what `..` would lead to
    clear, moved = _launcher._clear_files, []

    def clear_and_move(fd: int) -> list[str]:
        where = os.readlink(f"/proc/self/fd/{fd}")
        if not moved and Path(where).parent == tree:       # the first folder entered in cdir
            os.rename(where, base / (Path(where).name + "x"))   # the run moves it out meanwhile
            moved.append(where)
        return clear(fd)

    monkeypatch.setattr(_launcher, "_clear_files", clear_and_move)
    _launcher.remove_tree(base / "tree")
    assert moved
    for name in ("d3", "rt4v"):
        assert (base / name / "keep").read_text() == "not the run's"
    assert not (base / "tree").exists()


def test_a_process_that_never_stops_is_killed_with_the_others(rt: Runtime, shared_dir: Path) -> None:
    """A daemon's child waits before its exec on a FIFO nobody opens, so the daemon sits in
    vfork (uninterruptible, never stopped): the sweep kept stopping the rest and killed
    nothing until its deadline, the grader killed the supervisor before its purge, and the
    daemon and its System V segment outlived the run."""
    ws = _ws(shared_dir, """
        import json, os, sys, time
        sys.stdin.read()
        fifo = os.path.join(os.environ.get("TMPDIR", "/tmp"), "fifo")
        os.mkfifo(fifo)
        if os.fork() == 0:
            os.setsid()
            import ctypes
            ctypes.CDLL(None).prctl(15, b"recon-vfork", 0, 0, 0)    # PR_SET_NAME
            if os.fork() == 0:
                os.posix_spawn("/bin/true", ["true"], {}, file_actions=[(os.POSIX_SPAWN_OPEN, 0, fifo, os.O_RDONLY, 0)])
                os._exit(0)
            while True:
                time.sleep(0.05)
        time.sleep(0.5)
        print(json.dumps({"ok": 1}))
    """)
    t0 = time.monotonic()
    res = rt.run(ws, {"id": "x"}, {}, FAST)
    took = time.monotonic() - t0
    assert res.exit_code == 0, res.stderr_tail
    assert took < 6.0, took
    assert _live_slot_processes("recon-vfork") == []
