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
  and its files in /tmp, /var/tmp and /dev/shm are removed. A built task's ``tests/`` is
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
from pathlib import Path
from typing import Any

from ..errors import RuntimeUnavailable
from . import _sandbox as sb
from .base import Limits, RunResult, Runtime, env_for_submission

__all__ = ["LocalRuntime"]

_NOT_ROOT_WARNING = ("local runtime without root cannot hide hidden data from the submission; "
                     "use --runtime bwrap")
_ORACLE_WARNING = ("local runtime: the installed recon package (the oracle's source) may be readable "
                   "by the submission; use --runtime bwrap to hide it")
_NO_NS_WARNING = ("local runtime: no namespaces here (unshare refused), so runs share /tmp (purged of the "
                  "run's files afterwards) and can list the grader's processes")
TEMP_DIRS = ("/tmp", "/var/tmp", "/dev/shm")

_probe_lock = threading.Lock()
_probe_cache: dict[str, str | None] = {}


class LocalRuntime(Runtime):
    """Subprocess runtime; as root each run is a separate unprivileged uid."""

    name = "local"

    def __init__(self, *, drop_privileges: bool | None = None, namespaces: bool | None = None) -> None:
        """``drop_privileges``: None = when root (default); False runs as the grader's own
        user with the subreaper fallback (tests use it to exercise that path).
        ``namespaces``: None = when the kernel allows them (default); False forces the
        no-namespace supervisor a task's verifier container gets."""
        want = sb.IS_ROOT if drop_privileges is None else bool(drop_privileges)
        if want and not sb.IS_ROOT:
            raise RuntimeUnavailable("the local runtime can drop privileges only when recon runs as root",
                                     hint="run as root or use --runtime bwrap")
        self._warnings: list[str] = []
        self._hidden: list[str] = []
        self._pool = sb.SlotPool() if want else None
        self._interp = sb.interpreter_paths()
        self._mode = "reap"
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
        self._drop = want
        self.isolates_hidden = want
        if not sb.IS_ROOT:
            self._warnings.insert(0, _NOT_ROOT_WARNING)
        elif drop_privileges is False:
            self._warnings.insert(0, "local runtime without privilege drop cannot hide hidden data from the "
                                     "submission; use --runtime bwrap")
        if self._mode != "isolate":
            self._warnings.append(_ORACLE_WARNING)

    @property
    def mode(self) -> str:
        """``isolate``, ``supervise`` or ``reap`` (see the module docstring)."""
        return self._mode

    def hide(self, *paths: Path | str) -> None:
        """Paths no run may see (in ``isolate`` mode): e.g. the original workspace."""
        self._hidden.extend(os.path.realpath(p) for p in paths)

    def warnings(self) -> list[str]:
        return list(self._warnings)

    def run(self, workspace: Path, scenario: dict[str, Any], inputs: dict[str, Path], limits: Limits,
            *, app_dir: Path | None = None) -> RunResult:
        return self._run(workspace, scenario, inputs, limits, app_dir=app_dir,
                         argv=[sys.executable, "reconstruct.py"])

    # ------------------------------------------------------------------ internals

    def _config(self, uid: int | None, rd: sb.RunDir, app_dir: Path | None, limits: Limits,
                argv: list[str], env: dict[str, str]) -> dict[str, Any]:
        cfg: dict[str, Any] = {
            "argv": argv, "env": env, "cwd": str(rd.workspace),
            "rlimits": sb.rlimits(limits), "nproc_relative": not sb.IS_ROOT,
            "uid": uid, "gid": uid, "expose": [], "no_new_privs": True, "pdeathsig": True, "mode": self._mode,
        }
        if uid is None:
            return cfg
        # What the sandbox uid must reach: the interpreter, its run directory and the public
        # app (the run directory's symlinks point into it), nothing else.
        keep = [*self._interp, str(rd.root)]
        if app_dir is not None and Path(app_dir).is_dir():
            keep.append(os.path.realpath(app_dir))
        cfg["expose"] = sb.expose_plan(keep)
        if self._mode == "isolate":
            size = max(4 * int(limits.fsize), 64 << 20)
            cfg["tmpfs"] = [[d, size, [p for p in keep if sb._under(p, os.path.realpath(d))]]
                            for d in TEMP_DIRS if os.path.isdir(d)]
            cfg["hide"] = [h for h in self._private_paths(app_dir) if not any(sb._under(k, h) for k in keep)]
            env["TMPDIR"] = "/tmp"
        return cfg

    def _private_paths(self, app_dir: Path | None) -> list[str]:
        from .bwrap import _hidden_sources  # noqa: PLC0415 - recon's own source and oracle plugins

        hidden = list(_hidden_sources()) + list(self._hidden)
        if app_dir is not None:
            root = Path(os.path.realpath(app_dir)).parent.parent
            if (root / "task.toml").is_file():  # a built task: its verifier side and solution
                hidden += [str(root / "tests"), str(root / "solution")]
        return sorted(set(hidden))

    def _run(self, workspace: Path, scenario: dict[str, Any], inputs: dict[str, Path], limits: Limits,
             *, app_dir: Path | None, argv: list[str]) -> RunResult:
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

                res, setup_error, _ = sb.supervise(st, limits, on_exit=on_exit, on_abort=on_abort)
                if setup_error:
                    raise RuntimeUnavailable(f"local runtime could not start the submission: {setup_error}",
                                             hint="check the Python installation recon runs from")
                return res
            finally:
                sb.remove_tree(rd.root)
        finally:
            if uid is not None:
                sb.kill_uid(uid)
                sb.SlotPool.release(lock_fd)  # type: ignore[arg-type]


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
    key = repr((rt._mode, rt._interp))
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
