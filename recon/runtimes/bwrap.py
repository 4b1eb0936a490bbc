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

import json
import os
import shutil
import signal
import stat
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

from ..errors import RuntimeUnavailable
from . import _sandbox as sb
from ._session import WarmSession
from .base import Limits, RunResult, Runtime, Session, env_for_submission

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
    separates_runs = True

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
        # /dev/shm gets the same sized tmpfs (bwrap's --dev leaves it a folder of an unsized
        # one, as large as half the host's memory); /dev itself is made read-only below.
        tmp_size = str(limits.scratch)
        a += ["--proc", "/proc", "--dev", "/dev", "--size", tmp_size, "--perms", "1777", "--tmpfs", "/dev/shm",
              "--size", tmp_size, "--perms", "1777", "--tmpfs", "/tmp"]
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
        if warm:   # the workspace read-only at /src, copied afresh to a tmpfs for each run; the
            # message queues listed at /dev/mqueue, so that what a run leaves there is removed
            a += ["--mqueue", "/dev/mqueue", "--ro-bind", str(rd.workspace), "/src",
                  "--size", tmp_size, "--tmpfs", "/app/workspace"]
        else:
            a += ["--bind", str(rd.workspace), "/app/workspace"]
        a += ["--ro-bind", str(rd.inputs), "/inputs",
              "--remount-ro", "/dev", "--remount-ro", "/",
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
                                                        extra_read=js_r, watch=[(str(rd.root), None)])
            finally:
                os.close(js_r)
                sb.remove_tree(rd.root)
            if setup_error:
                raise RuntimeUnavailable(f"bwrap runtime could not start: {setup_error}",
                                         hint=_setup_hint(setup_error, argv))
            if b"child-pid" not in status and not (res.timed_out or res.stdout_overflow or res.disk_overflow):
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


class _WarmSession(WarmSession):
    """A warm session in one bwrap sandbox (the arguments a cold run gets, with the
    workspace at /src and a tmpfs at /app/workspace)."""

    def _launch(self, rd: sb.RunDir, env: dict[str, str], own: Limits, argv: list[str], status_w: int,
                stdin_r: int) -> sb.Started:
        uid = self._uid
        bargs = self.rt._bwrap_args(rd, self.app_dir, env, own, status_w, argv, warm=True)
        need = [*self.rt._interp, str(rd.root)]
        if self.app_dir is not None:
            need.append(os.path.realpath(self.app_dir))
        expose = sb.expose_plan(need) if uid is not None else []
        cfg = {"argv": bargs, "env": env, "cwd": "/", "rlimits": sb.rlimits(own, nproc_extra=3),
               "nproc_relative": not sb.IS_ROOT, "uid": uid, "gid": uid, "expose": expose,
               "no_new_privs": not self.rt._setuid_bwrap, "pdeathsig": True, "mode": "exec"}
        return sb.launch_lasting(cfg, stdin_r, extra_fds=(status_w,))
