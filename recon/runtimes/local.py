"""The ``local`` runtime: a plain subprocess under resource limits.

How it contains a submission (``_launcher.py`` is the process side):

- **As root with namespaces** (a host, CI — the strongest mode, ``isolate``): every run is
  its own numeric uid (61000 + slot, no passwd entry, exclusive across graders on this
  machine by ``flock``) inside new mount, PID, network, IPC and UTS namespaces: fresh
  tmpfs on /tmp, /var/tmp and /dev/shm, a fresh /proc that shows only the run's own
  processes, loopback only, and empty mounts over the task's ``tests/`` and ``solution/``,
  recon's own source and oracle plugins. A root init inside the namespace reaps
  everything; when the submission exits the namespace dies with all it started, and
  nothing outside the namespace is ever signalled.
- **As root without namespaces** (``supervise``: an unprivileged container such as a
  task's verifier image, where ``unshare`` is refused): the same uid per run, rlimits,
  ``no_new_privs``; a root supervisor stays behind as subreaper, and when the
  submission exits every process of the uid *in our PID namespace* is frozen and killed
  and its files in /tmp, /var/tmp, /dev/shm and the directories below them that anyone
  may write (listed once per runtime) are removed. A built task's ``tests/`` is
  0700 root there, so hidden data is unreadable.
- **Not root** (``reap``): no other uid is available, so hidden data cannot be hidden (a
  warning says so). The launcher stays behind as a child-subreaper and kills the whole
  tree when the main process exits. ``RLIMIT_NPROC`` is set to the user's current task
  count plus the budget. A submission that kills its own launcher can escape this mode.

When the interpreter lives somewhere the sandbox uid cannot reach (pyenv under a 0700
``/root``), the launcher mounts a 0755 tmpfs on the closed directory with only the
interpreter's prefix bound back (private mount namespace).
"""
from __future__ import annotations

import os
import signal
import sys
import tempfile
import threading
import time
import weakref
from pathlib import Path
from typing import Any

from ..errors import RuntimeUnavailable
from . import _launcher
from . import _sandbox as sb
from ._session import WarmSession
from .base import Limits, RunResult, Runtime, Session, env_for_submission

__all__ = ["LocalRuntime"]

_NOT_ROOT_WARNING = ("local runtime without root cannot hide hidden data from the submission; "
                     "use --runtime bwrap")
_VIEW_WARNING = ("local runtime: neither namespaces nor Landlock confine runs here, so a run can read whatever "
                 "this machine lets its user read (the installed recon package, other workspaces); "
                 "checkpoint series are not graded; use --runtime bwrap")
_SHARED_WARNING = ("local runtime: runs are this user's own processes, so what one leaves in /dev/shm or in "
                   "System V IPC cannot be told from the user's own and is not cleared before the next; checkpoint "
                   "series are not graded; use --runtime bwrap")
_NO_NS_WARNING = ("local runtime: no namespaces here (unshare refused), so runs share /tmp (purged of the "
                  "run's files afterwards) and can list the grader's processes")
TEMP_DIRS = ("/tmp", "/var/tmp", "/dev/shm")

_probe_lock = threading.Lock()
_probe_cache: dict[str, str | None] = {}


class LocalRuntime(Runtime):
    """Subprocess runtime; as root each run is a separate unprivileged uid."""

    name = "local"

    def __init__(self, *, drop_privileges: bool | None = None, namespaces: bool | None = None,
                 landlock: bool | None = None) -> None:
        """``drop_privileges``: None = when root (default); False runs as the grader's own
        user with the subreaper fallback (tests use it to exercise that path).
        ``namespaces``: None = when the kernel allows them (default); False forces the
        no-namespace supervisor a task's verifier container gets. ``landlock``: None =
        confine runs with Landlock wherever namespaces are not used and the kernel has it;
        False never (tests use it to exercise the unconfined fallback)."""
        want = sb.IS_ROOT if drop_privileges is None else bool(drop_privileges)
        if want and not sb.IS_ROOT:
            raise RuntimeUnavailable("the local runtime can drop privileges only when recon runs as root",
                                     hint="run as root or use --runtime bwrap")
        self._warnings: list[str] = []
        self._pool = sb.SlotPool() if want else None
        self._interp = sb.interpreter_paths()
        self._mode = "reap"
        self._landlock = False
        self._view_root: str | None = None
        self._purge: list[str] | None = None  # supervise: where a run's uid may leave files (scanned once)
        self._purged_once = False             # supervise: leftovers of graders before us cleared
        if want:
            self._mode = "isolate" if namespaces is not False else "supervise"
            problem = _probe(self) if self._mode == "isolate" else "namespaces switched off"
            if problem is not None and self._mode == "isolate":
                self._mode = "supervise"
                problem = _probe(self)
                if problem is None:
                    self._warnings.append(_NO_NS_WARNING)
            if problem is not None and not (namespaces is False and problem == "namespaces switched off"):
                self._warnings.append(f"local runtime cannot run the interpreter as an unprivileged user "
                                      f"({problem}); submissions run as root and can read hidden data")
                want, self._pool, self._mode = False, None, "reap"
        if self._mode != "isolate" and landlock is not False and _launcher.landlock_abi() >= 1:
            # Without namespaces the kernel's Landlock LSM confines what a run can open.
            self._landlock = True
            problem = _probe(self)
            if problem is not None:
                self._landlock = False
                self._warnings.append(f"local runtime: Landlock is refused here ({problem})")
        if self._landlock:
            # Landlock cannot subtract: the temp directories a run may write are readable
            # whole, so a concealed path there that file permissions leave open to others
            # (a checkout cloned into /tmp) would be readable too.
            exposed = [c for c in sb.concealed_sources() if sb.exposed_under(c, TEMP_DIRS)]
            if exposed:
                self._landlock = False
                self._warnings.append(f"local runtime: Landlock cannot hide {exposed[0]} (it lies in a shared temp "
                                      "directory runs may write, readable by any user); move it or use --runtime bwrap")
        self._drop = want
        self.isolates_hidden = want or self._landlock
        self.confines_view = self._mode == "isolate" or self._landlock
        self.separates_runs = self._mode != "reap"
        if not self.isolates_hidden:
            self._warnings.insert(0, _NOT_ROOT_WARNING if not sb.IS_ROOT else
                                  "local runtime without privilege drop cannot hide hidden data from the "
                                  "submission; use --runtime bwrap")
        if not self.confines_view:
            self._warnings.append(_VIEW_WARNING)
        elif not self.separates_runs:
            self._warnings.append(_SHARED_WARNING)

    @property
    def mode(self) -> str:
        """``isolate``, ``supervise`` or ``reap`` (see the module docstring)."""
        return self._mode

    def warnings(self) -> list[str]:
        return list(self._warnings)

    def run(self, workspace: Path, scenario: dict[str, Any], inputs: dict[str, Path], limits: Limits,
            *, app_dir: Path | None = None) -> RunResult:
        return self._run(workspace, scenario, inputs, limits, app_dir=app_dir,
                         argv=[sys.executable, "reconstruct.py"])

    def session(self, workspace: Path, limits: Limits, *, app_dir: Path | None = None) -> Session:
        """Warm where each run's view is built in namespaces (``isolate``): one namespace
        whose interpreter imports the workspace's libraries once and forks for each run
        (:mod:`recon.runtimes._warm`); cold elsewhere, where no namespace of its own holds
        the session's processes and files."""
        if self._mode != "isolate":
            return Session(self, workspace, limits, app_dir=app_dir)
        return _WarmSession(self, workspace, limits, app_dir=app_dir)

    # ------------------------------------------------------------------ internals

    def _config(self, uid: int | None, rd: sb.RunDir, app_dir: Path | None, limits: Limits,
                argv: list[str], env: dict[str, str]) -> dict[str, Any]:
        cfg: dict[str, Any] = {
            "argv": argv, "env": env, "cwd": str(rd.workspace),
            "rlimits": sb.rlimits(limits), "nproc_relative": not sb.IS_ROOT,
            "uid": uid, "gid": uid, "expose": [], "no_new_privs": True, "pdeathsig": True, "mode": self._mode,
        }
        # What a run may see: the system, the interpreter, the public app (the run
        # directory's symlinks point into it) and its own run directory. Nothing else.
        readable = [d for d in sb.SYSTEM_DIRS if os.path.lexists(d)] + list(self._interp)
        if app_dir is not None and Path(app_dir).is_dir():
            readable.append(os.path.realpath(app_dir))
        concealed = sb.concealed_sources()
        if self._mode == "isolate":
            size = limits.scratch
            cfg["view"] = {"root": self._empty_root(), "ro": readable, "rw": [str(rd.root)],
                           "tmp": [[d, size] for d in TEMP_DIRS if os.path.isdir(d)],
                           "hide": [h for h in concealed if any(sb._under(h, r) for r in readable)]}
            env["TMPDIR"] = "/tmp"
            return cfg
        # no network namespace: Landlock refuses TCP, the seccomp filter IPv4 and IPv6 sockets
        cfg["deny_inet"] = True
        if self._mode == "supervise":
            if self._purge is None:
                self._purge = sb.shared_writable_dirs(list(TEMP_DIRS))
            cfg["purge"] = self._purge
        if uid is not None:
            cfg["expose"] = sb.expose_plan([*self._interp, str(rd.root), *readable[len(sb.SYSTEM_DIRS):]])
        if self._landlock:
            writable = [str(rd.root), "/dev", "/dev/shm"]
            if self._mode == "supervise":
                # other uids' files there are theirs; ours are purged after every run
                writable += ["/tmp", "/var/tmp"]
            cfg["landlock"] = {"ro": sb.allow_list(readable, concealed) + ["/proc"], "rw": writable}
        return cfg

    def _empty_root(self) -> str:
        """An empty directory each run mounts its own root file system on (in its own
        mount namespace, so one directory serves every run at once)."""
        if self._view_root is None:
            self._view_root = tempfile.mkdtemp(prefix="recon-view-")
            os.chmod(self._view_root, 0o700)
            weakref.finalize(self, _rmdir, self._view_root)
        return self._view_root

    def _purge_idle(self) -> None:
        """Without namespaces: clear the shared temp directories of what finished runs' uids
        still own there (see :meth:`SlotPool.purge_idle`)."""
        if self._mode == "supervise" and self._pool is not None:
            if self._purge is None:
                self._purge = sb.shared_writable_dirs(list(TEMP_DIRS))
            self._pool.purge_idle(self._purge)

    def _run(self, workspace: Path, scenario: dict[str, Any], inputs: dict[str, Path], limits: Limits,
             *, app_dir: Path | None, argv: list[str]) -> RunResult:
        if not self._purged_once:   # after that, each run's own purge clears what runs before it left
            self._purged_once = True
            self._purge_idle()
        uid, lock_fd = self._pool.acquire() if self._pool is not None else (None, None)
        try:
            rd = sb.prepare_run(workspace, scenario, inputs, inputs_visible_at=None, app_dir=app_dir,
                                link_app=True, owner=(uid, uid) if uid is not None else None)
            try:
                if rd.rejected:
                    return RunResult(exit_code=None, stdout=b"", stderr_tail="", seconds=0.0, rejected=rd.rejected)
                env = env_for_submission(str(rd.home))
                env["TMPDIR"] = str(rd.tmp)
                env["PWD"] = str(rd.workspace)  # bwrap sets PWD too: same environment keys
                cfg = self._config(uid, rd, app_dir, limits, argv, env)
                st = sb.launch(cfg, rd.stdin)
                pid = st.proc.pid

                def on_exit() -> None:
                    # The launcher supervises the run and has already killed what it left
                    # (isolate: the namespace is gone); its process group is what remains.
                    sb.killpg(pid)

                def on_abort() -> None:
                    _stop_supervisor(pid)
                    if uid is not None:
                        sb.kill_uid(uid)

                # the run folder is on the host's disk; without namespaces, so are the shared temp
                # directories, where what the run's uid made counts too (purged after the run),
                # and what it put back there under a finished run's uid (a link, a rename)
                watch: list[tuple[str, sb.Owner]] = [(str(rd.root), None)]
                if self._mode == "supervise" and uid is not None and self._pool is not None:
                    pool, own = self._pool, uid
                    watch += [(d, lambda u: u == own or pool.idle(u)) for d in cfg.get("purge", [])]
                res, setup_error, _ = sb.supervise(st, limits, on_exit=on_exit, on_abort=on_abort, watch=watch)
                if setup_error:
                    raise RuntimeUnavailable(f"local runtime could not start the submission: {setup_error}",
                                             hint="check the Python installation recon runs from")
                return res
            finally:
                sb.remove_tree(rd.root)
        finally:
            if uid is not None:
                gone = sb.kill_uid(uid)
                if self._mode == "supervise":
                    # the launcher purges after its run, unless it was killed first (a run
                    # whose processes would not stop outlasted the grace after SIGTERM); its
                    # temp files go with the idle uids' below, once the slot is released
                    _launcher.purge_ipc(uid)
                if gone:
                    sb.SlotPool.release(lock_fd)  # type: ignore[arg-type]
                # else the slot stays held for good: no later run may share a uid with survivors
            self._purge_idle()


class _WarmSession(WarmSession):
    """A warm session in one namespace built as a cold run's view is, but with the
    workspace read-only at /src, a tmpfs at /app/workspace, the inputs at /inputs and the
    app's other entries at /app (the run directory itself is not in the view)."""

    def _launch(self, rd: sb.RunDir, env: dict[str, str], own: Limits, argv: list[str], status_w: int,
                stdin_r: int) -> sb.Started:
        rt: LocalRuntime = self.rt
        cfg = rt._config(self._uid, rd, None, own, argv, env)
        size = own.scratch
        places = [[str(rd.workspace), "/src", True], [str(rd.inputs), "/inputs", True]]
        if self.app_dir is not None and Path(self.app_dir).is_dir():
            real_app = os.path.realpath(self.app_dir)
            places += [[os.path.join(real_app, e), f"/app/{e}", True] for e in sorted(os.listdir(real_app))
                       if e != "workspace"]
        view = cfg["view"]
        view["rw"] = []
        view["tmp"] = [*view["tmp"], ["/app/workspace", size]]
        view["map"] = places
        view["mqueue"] = True
        cfg.update(cwd="/app/workspace", rlimits=sb.rlimits(own, nproc_extra=1))
        cfg["env"].pop("TMPDIR", None)   # as in bwrap's sandbox
        return sb.launch_lasting(cfg, stdin_r)


def _rmdir(path: str) -> None:
    try:
        os.rmdir(path)
    except OSError:
        pass


def _stop_supervisor(pid: int) -> None:
    """Ask the supervising launcher to kill its run, then kill its process group."""
    try:
        os.kill(pid, signal.SIGTERM)
    except OSError:
        pass
    end = time.monotonic() + 3.0
    while time.monotonic() < end and not sb._exited(pid):
        time.sleep(0.005)
    sb.killpg(pid)


def _probe(rt: LocalRuntime) -> str | None:
    """Can the launcher start the interpreter as a sandbox uid in this mode here? (cached)"""
    key = repr((rt._mode, rt._landlock, rt._interp))
    with _probe_lock:
        if key in _probe_cache:
            return _probe_cache[key]
        problem: str | None
        with tempfile.TemporaryDirectory(prefix="recon-probe-") as ws:
            try:
                res = rt._run(Path(ws), {}, {}, Limits(wall=20), app_dir=None,
                              argv=[sys.executable, "-S", "-c", "print('ok')"])
                problem = None if res.exit_code == 0 and res.stdout.strip() == b"ok" else (
                    res.failure() or "unexpected output")
            except RuntimeUnavailable as exc:
                problem = exc.message.split(": ", 1)[-1]
        _probe_cache[key] = problem
        return problem
