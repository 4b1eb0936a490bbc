"""The ``bwrap`` runtime: bubblewrap namespaces around each run.

Inside the sandbox: a read-only system (/usr, /bin, /lib*, /etc and the interpreter's
prefix at its own path), the task's public ``app/`` read-only at /app with a private
writable copy of the workspace at /app/workspace (the cwd), the inputs read-only at
/inputs, a private tmpfs /tmp, fresh /proc and /dev, no network (own net namespace with
only a loopback), own PID/IPC/UTS/cgroup namespaces, and no nested user namespaces.
Hidden data, the task's tests/ and solution/, the recon source tree and the grader's
output directory are never mounted; the installed ``recon`` package (and any oracle
plugin package) is covered by an empty tmpfs when it lies inside a bound directory.

Privileges — measured on this design's reference machine (bwrap 0.8, kernel 6.x, root):
``bwrap --unshare-user --uid 65534`` run *as root* works, but the sandbox's processes are
still host uid 0, for which the kernel never enforces ``RLIMIT_NPROC`` (a fork bomb would
be unbounded) and which owns every root file it can see. So, as root, the launcher sets
the rlimits, drops to a per-run unprivileged uid (61000 + slot) and only then ``exec``s
bwrap, which builds the sandbox from an unprivileged user namespace (the strongest setup
that works: no real root anywhere, NPROC counted for the slot uid — the user namespace
snapshots the limit when it is created). ``--ro-bind-fd`` cannot replace path binds for
an interpreter under a 0700 /root (bwrap cannot open its own /proc/self/fd after
switching namespaces), so the launcher first exposes such paths in a private mount
namespace (tmpfs over the closed directory, the prefix bound back). Not as root, bwrap
runs as the grader's user, which is enough: hidden data is simply not mounted.

Kill-all: with ``--unshare-pid`` bwrap's init exits when the main process exits and the
kernel kills everything left in the PID namespace; ``--die-with-parent`` ties the
sandbox to bwrap and bwrap to the grader; as root every process of the slot uid is
killed as well after the run.
"""
from __future__ import annotations

import base64
import json
import os
import selectors
import shutil
import signal
import stat
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from ..canonjson import dumps_compact
from ..errors import RuntimeUnavailable
from . import _sandbox as sb
from .base import Limits, RunResult, Runtime, Session, env_for_submission, preload_names

__all__ = ["BwrapRuntime", "bwrap_available"]

_INSTALL_HINT = "apt-get install bubblewrap"
_USERNS_HINT = ("enable unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, "
                "user.max_user_namespaces>0) or use --runtime local")

_avail_lock = threading.Lock()
_avail: dict[str, Any] = {}


def bwrap_available() -> bool:
    """True when a trivial submission really runs in the sandbox here (tried once, cached)."""
    with _avail_lock:
        if "ok" not in _avail:
            _avail["ok"], _avail["why"] = _probe()
        return bool(_avail["ok"])


def _probe() -> tuple[bool, str]:
    if shutil.which("bwrap") is None:
        return False, "bubblewrap (bwrap) is not installed"
    try:
        rt = BwrapRuntime(_probe=False)
        with tempfile.TemporaryDirectory(prefix="recon-probe-") as ws:
            res = rt._run(Path(ws), {}, {}, Limits(wall=20), app_dir=None,
                          argv=[sys.executable, "-S", "-c", "print('ok')"])
    except RuntimeUnavailable as exc:
        return False, exc.message
    except OSError as exc:
        return False, f"bwrap failed: {exc}"
    if res.exit_code == 0 and res.stdout.strip() == b"ok":
        return True, ""
    return False, f"bwrap sandbox test failed: {res.failure() or 'unexpected output'}"


class BwrapRuntime(Runtime):
    """bubblewrap sandbox per run."""

    name = "bwrap"
    isolates_hidden = True
    confines_view = True

    def __init__(self, *, _probe: bool = True) -> None:
        exe = shutil.which("bwrap")
        if exe is None:
            raise RuntimeUnavailable("bubblewrap (bwrap) is not installed", hint=_INSTALL_HINT)
        self._bwrap = os.path.realpath(exe)
        # no_new_privs would defeat a setuid bwrap (old distributions); ours is not setuid
        self._setuid_bwrap = bool(os.stat(self._bwrap).st_mode & stat.S_ISUID)
        self._pool = sb.SlotPool() if sb.IS_ROOT else None
        self._interp = sb.interpreter_paths()
        if _probe and not bwrap_available():
            raise RuntimeUnavailable(f"bwrap runtime unavailable: {_avail.get('why', 'sandbox test failed')}",
                                     hint=_INSTALL_HINT if shutil.which("bwrap") is None else _USERNS_HINT)

    def run(self, workspace: Path, scenario: dict[str, Any], inputs: dict[str, Path], limits: Limits,
            *, app_dir: Path | None = None) -> RunResult:
        return self._run(workspace, scenario, inputs, limits, app_dir=app_dir,
                         argv=[sys.executable, "reconstruct.py"])

    # ------------------------------------------------------------------ internals

    def session(self, workspace: Path, limits: Limits, *, app_dir: Path | None = None) -> Session:
        """A warm session: one sandbox whose interpreter imports the workspace's libraries
        once and forks for each run (see :meth:`Runtime.session` for what it is for)."""
        return _WarmSession(self, workspace, limits, app_dir=app_dir)

    def _bwrap_args(self, rd: sb.RunDir, app_dir: Path | None, env: dict[str, str], limits: Limits,
                    status_fd: int, argv: list[str], *, warm: bool = False) -> list[str]:
        a = [self._bwrap, "--unshare-user", "--unshare-ipc", "--unshare-pid", "--unshare-net",
             "--unshare-uts", "--unshare-cgroup-try", "--disable-userns",
             "--die-with-parent", "--new-session", "--hostname", "sandbox"]
        bound: list[str] = []
        for d in sb.SYSTEM_DIRS:
            if os.path.lexists(d):
                a += ["--ro-bind", d, d] if not os.path.islink(d) else ["--symlink", os.readlink(d), d]
                bound.append(d)
        # /proc, /dev and the private /tmp come before the interpreter's binds: bwrap applies
        # operations in order, and an interpreter or venv under /tmp must be bound on top of
        # the fresh tmpfs, not hidden by it.
        a += ["--proc", "/proc", "--dev", "/dev",
              "--size", str(max(4 * int(limits.fsize), 64 << 20)), "--perms", "1777", "--tmpfs", "/tmp"]
        for p in self._interp:
            if not any(sb._under(p, b) for b in bound) or sb._under(p, "/tmp"):
                a += ["--ro-bind", p, p]
                bound.append(p)
        for h in sb.concealed_sources():
            if any(sb._under(h, b) for b in bound):
                a += ["--tmpfs", h] if os.path.isdir(h) else ["--ro-bind", "/dev/null", h]
        a += ["--dir", "/app"]
        if app_dir is not None and Path(app_dir).is_dir():
            real_app = os.path.realpath(app_dir)
            for e in sorted(os.listdir(real_app)):
                if e != "workspace":
                    a += ["--ro-bind", os.path.join(real_app, e), f"/app/{e}"]
        if warm:   # the workspace read-only at /src, copied afresh to a tmpfs for each run
            a += ["--ro-bind", str(rd.workspace), "/src",
                  "--size", str(max(4 * int(limits.fsize), 64 << 20)), "--tmpfs", "/app/workspace"]
        else:
            a += ["--bind", str(rd.workspace), "/app/workspace"]
        a += ["--ro-bind", str(rd.inputs), "/inputs",
              "--remount-ro", "/",
              "--chdir", "/app/workspace", "--clearenv"]
        for k, v in sorted(env.items()):
            a += ["--setenv", k, v]
        a += ["--json-status-fd", str(status_fd), "--", *argv]
        return a

    def _run(self, workspace: Path, scenario: dict[str, Any], inputs: dict[str, Path], limits: Limits,
             *, app_dir: Path | None, argv: list[str]) -> RunResult:
        uid, lock_fd = self._pool.acquire() if self._pool is not None else (None, None)
        try:
            rd = sb.prepare_run(workspace, scenario, inputs, inputs_visible_at="/inputs", app_dir=app_dir,
                                link_app=False, owner=(uid, uid) if uid is not None else None)
            if rd.rejected:
                sb.remove_tree(rd.root)
                return RunResult(exit_code=None, stdout=b"", stderr_tail="", seconds=0.0, rejected=rd.rejected)
            js_r, js_w = os.pipe2(os.O_CLOEXEC)
            try:
                env = env_for_submission("/tmp")
                bargs = self._bwrap_args(rd, app_dir, env, limits, js_w, argv)
                expose: list[list[Any]] = []
                if uid is not None:  # bwrap runs as the slot uid: it must reach what it binds
                    need = list(self._interp) + [str(rd.root)]
                    if app_dir is not None:
                        need.append(os.path.realpath(app_dir))
                    expose = sb.expose_plan(need)
                cfg = {
                    "argv": bargs, "env": env, "cwd": "/",
                    # bwrap adds two tasks of the same uid (outer bwrap, the namespace's init)
                    "rlimits": sb.rlimits(limits, nproc_extra=2), "nproc_relative": not sb.IS_ROOT,
                    "uid": uid, "gid": uid, "expose": expose,
                    "no_new_privs": not self._setuid_bwrap, "pdeathsig": True, "mode": "exec",
                }
                try:
                    st = sb.launch(cfg, rd.stdin, extra_fds=(js_w,))
                finally:
                    os.close(js_w)
                pid = st.proc.pid

                def on_exit() -> None:
                    sb.killpg(pid)
                    if uid is not None:
                        sb.kill_uid(uid)

                res, setup_error, status = sb.supervise(st, limits, on_exit=on_exit, on_abort=on_exit,
                                                        extra_read=js_r)
            finally:
                os.close(js_r)
                sb.remove_tree(rd.root)
            if setup_error:
                raise RuntimeUnavailable(f"bwrap runtime could not start: {setup_error}",
                                         hint=_setup_hint(setup_error, argv))
            if b"child-pid" not in status and not (res.timed_out or res.stdout_overflow):
                # bwrap never started the command: its own setup failed, not the submission
                why = res.last_stderr_line() or res.failure() or "no status"
                raise RuntimeUnavailable(f"bwrap could not create the sandbox: {why}", hint=_setup_hint(why, argv))
            _map_exit(res, status)
            return res
        finally:
            if uid is not None:
                sb.kill_uid(uid)
                sb.SlotPool.release(lock_fd)  # type: ignore[arg-type]


def _setup_hint(why: str, argv: list[str]) -> str:
    """The fix for a sandbox that did not start, from what bwrap (or the launcher) said."""
    w = why.lower()
    if "execvp" in w or "no such file" in w:
        return (f"the program {argv[0]} is not visible inside the sandbox: bwrap binds /usr, /bin, /lib*, /etc "
                "and the interpreter's prefix; install Python where those cover it")
    if any(k in w for k in ("uid map", "new namespace", "user namespace", "operation not permitted",
                            "no permissions to create")):
        return _USERNS_HINT
    if "resource temporarily unavailable" in w or "can't fork" in w:
        return "the sandbox user hit its process limit at start-up; retry (leftover processes are being reaped)"
    return f"bwrap said: {why[:200]}; run `bwrap --ro-bind / / true` to check bubblewrap here"


def _map_exit(res: RunResult, status: bytes) -> None:
    """bwrap reports a child killed by signal N as exit code 128+N; show it as the local
    runtime does (same failure, same message)."""
    code = res.exit_code
    for line in status.splitlines():
        try:
            doc = json.loads(line)
        except ValueError:
            continue
        if isinstance(doc, dict) and isinstance(doc.get("exit-code"), int):
            code = doc["exit-code"]
    if code is not None and 128 < code < 128 + 65 and res.signal is None:
        res.exit_code, res.signal = None, code - 128
        if res.signal == signal.SIGXCPU:
            res.notes.append("CPU time limit exceeded")


_WARM_SOURCE = (Path(__file__).with_name("_warm.py")).read_text(encoding="utf-8")


class _WarmSession(Session):
    """One bwrap sandbox running :mod:`recon.runtimes._warm` for many runs of one
    workspace. Each run is a fresh fork in a fresh copy of the workspace, under the run's
    limits (CPU, memory, file size, wall clock); a protocol failure or a sandbox that will
    not start turns the session cold (each run through :meth:`BwrapRuntime.run`), so the
    results never depend on whether it stayed warm."""

    warm = True
    READY = 120.0   # seconds the interpreter may take to start and import the libraries

    def __init__(self, runtime: BwrapRuntime, workspace: Path, limits: Limits, *, app_dir: Path | None = None) -> None:
        super().__init__(runtime, workspace, limits, app_dir=app_dir)
        self.rt = runtime
        self.broken: str | None = None
        self._proc: Any = None
        self._to: int | None = None
        self._buf = b""
        self._js_r: int | None = None
        self._err = bytearray()
        self._uid: int | None = None
        self._lock_fd: int | None = None
        if runtime._pool is not None:
            self._uid, self._lock_fd = runtime._pool.acquire()
        self._rd: sb.RunDir | None = None
        try:
            self._start()
        except (OSError, ValueError, RuntimeUnavailable) as e:
            self._stop(f"the warm sandbox did not start: {e}")

    # -- life cycle
    def _start(self) -> None:
        uid = self._uid
        rd = self._rd = sb.prepare_run(self.workspace, {}, {}, inputs_visible_at="/inputs", app_dir=None,
                                       link_app=False, owner=(uid, uid) if uid is not None else None)
        if rd.rejected:
            raise ValueError(rd.rejected)
        env = env_for_submission("/tmp")
        # the interpreter's own limits are the session's: each run sets its own in its fork
        own = Limits(wall=self.limits.wall, cpu=3600, memory=self.limits.memory, fsize=self.limits.fsize,
                     nproc=self.limits.nproc, stdout=self.limits.stdout, stderr_tail=self.limits.stderr_tail)
        argv = [sys.executable, "-c", _WARM_SOURCE, json.dumps(preload_names(self.workspace))]
        js_r, js_w = os.pipe2(os.O_CLOEXEC)
        to_r, to_w = os.pipe2(os.O_CLOEXEC)
        self._js_r, self._to = js_r, to_w
        try:
            bargs = self.rt._bwrap_args(rd, self.app_dir, env, own, js_w, argv, warm=True)
            need = [*self.rt._interp, str(rd.root)]
            if self.app_dir is not None:
                need.append(os.path.realpath(self.app_dir))
            expose = sb.expose_plan(need) if uid is not None else []
            cfg = {"argv": bargs, "env": env, "cwd": "/", "rlimits": sb.rlimits(own, nproc_extra=3),
                   "nproc_relative": not sb.IS_ROOT, "uid": uid, "gid": uid, "expose": expose,
                   "no_new_privs": not self.rt._setuid_bwrap, "pdeathsig": True, "mode": "exec"}
            st = sb.launch(cfg, to_r, extra_fds=(js_w,))
        finally:
            os.close(js_w)
            os.close(to_r)
        os.close(st.status_r)
        self._proc = st.proc
        threading.Thread(target=self._drain_stderr, daemon=True).start()
        ready = self._reply(self.READY)
        if not isinstance(ready, dict) or ready.get("ready") is not True:
            tail = bytes(self._err[-400:]).decode("utf-8", "replace").strip()
            raise RuntimeUnavailable(f"no ready line ({tail or 'nothing on stderr'})")

    def _drain_stderr(self) -> None:
        err = self._proc.stderr
        while True:
            chunk = err.read1(65536) if hasattr(err, "read1") else err.read(65536)
            if not chunk:
                return
            self._err += chunk
            del self._err[:-4096]

    def _reply(self, timeout: float) -> Any:
        """The next protocol line, or None when none came within ``timeout`` seconds."""
        fd = self._proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while b"\n" not in self._buf:
                left = deadline - time.monotonic()
                if left <= 0 or not sel.select(left):
                    return None
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    return None
                self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        try:
            return json.loads(line)
        except ValueError:
            return None

    def _stop(self, why: str | None = None) -> None:
        if why and not self.broken:
            self.broken = why
        if self._to is not None:
            os.close(self._to)
            self._to = None
        if self._proc is not None:
            try:
                self._proc.wait(timeout=5)
            except Exception:  # noqa: BLE001 - a stuck sandbox is killed below
                pass
            sb.killpg(self._proc.pid)
            try:
                self._proc.wait(timeout=5)
            except Exception:  # noqa: BLE001
                pass
            for f in (self._proc.stdout, self._proc.stderr):
                if f is not None:
                    f.close()
            self._proc = None
        if self._js_r is not None:
            os.close(self._js_r)
            self._js_r = None
        if self._uid is not None:
            sb.kill_uid(self._uid)
        if self._rd is not None:
            sb.remove_tree(self._rd.root)
            self._rd = None

    def close(self) -> None:
        self._stop()
        if self._lock_fd is not None:
            sb.SlotPool.release(self._lock_fd)
            self._lock_fd = None

    # -- runs
    def run(self, scenario: dict[str, Any], inputs: dict[str, Path]) -> RunResult:
        if self.broken or self._rd is None:
            return super().run(scenario, inputs)
        rd, lim = self._rd, self.limits
        for e in list(rd.inputs.iterdir()):
            sb.remove_tree(e)
        _, rewritten = sb.place_inputs(inputs, rd.inputs, "/inputs")
        doc = dict(scenario)
        if inputs or "inputs" in doc:
            doc["inputs"] = rewritten
        job = {"stdin": dumps_compact(doc), "wall": float(lim.wall), "cpu": int(lim.cpu), "memory": int(lim.memory),
               "fsize": int(lim.fsize), "nproc": int(lim.nproc), "stdout": int(lim.stdout),
               "stderr_tail": int(lim.stderr_tail)}
        try:
            os.write(self._to, (json.dumps(job) + "\n").encode("utf-8"))  # type: ignore[arg-type]
        except OSError as e:
            self._stop(f"the warm sandbox went away: {e}")
            return super().run(scenario, inputs)
        reply = self._reply(float(lim.wall) + 30.0)
        if not isinstance(reply, dict) or "exit" not in reply:
            self._stop("the warm sandbox stopped answering")
            return super().run(scenario, inputs)
        res = RunResult(exit_code=reply["exit"], stdout=base64.b64decode(reply["stdout"]),
                        stderr_tail=str(reply["stderr"]), seconds=float(reply["seconds"]),
                        timed_out=bool(reply["timed_out"]), stdout_overflow=bool(reply["overflow"]),
                        signal=reply["signal"])
        if res.signal == signal.SIGXCPU:
            res.notes.append("CPU time limit exceeded")
        return res
