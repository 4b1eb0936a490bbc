"""The ``local`` runtime: a plain subprocess under resource limits.

How it contains a submission (see ``_launcher.py`` for the process side):

- **As root** (the verifier container, CI): every run gets its own numeric uid
  (61000 + slot, no passwd entry, exclusive across graders by ``flock``). The launcher
  sets the rlimits, drops to that uid/gid with no supplementary groups and
  ``no_new_privs``, then ``exec``s ``python reconstruct.py``. ``RLIMIT_NPROC`` is then
  really enforced (the kernel ignores it for uid 0). A built task's ``tests/`` is 0700
  root, so hidden data is unreadable, and the grader's output directory is not writable.
  When the interpreter lives somewhere that uid cannot reach (pyenv under a 0700
  ``/root``), the launcher first enters a private mount namespace and mounts a 0755
  tmpfs on the closed directory with only the interpreter's prefix bound back.
  After the main process exits (or on timeout/overflow) every process of the uid is
  SIGKILLed — setsid + double fork does not escape a uid.
- **Not root**: no other uid is available, so hidden data cannot be hidden (a warning
  says so). The launcher stays behind as a child-subreaper: orphans re-parent to it and
  it kills the whole tree when the main process exits or when the grader asks it to
  (SIGTERM on timeout). ``RLIMIT_NPROC`` is set to the user's current task count plus
  the budget. A submission that kills its own launcher can escape this mode.
"""
from __future__ import annotations

import os
import signal
import sys
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

_probe_lock = threading.Lock()
_probe_cache: dict[str, str | None] = {}


class LocalRuntime(Runtime):
    """Subprocess runtime; as root each run is a separate unprivileged uid."""

    name = "local"

    def __init__(self, *, drop_privileges: bool | None = None) -> None:
        """``drop_privileges``: None = when root (default); False runs as the grader's own
        user with the subreaper fallback (tests use it to exercise that path)."""
        want = sb.IS_ROOT if drop_privileges is None else bool(drop_privileges)
        if want and not sb.IS_ROOT:
            raise RuntimeUnavailable("the local runtime can drop privileges only when recon runs as root",
                                     hint="run as root or use --runtime bwrap")
        self._warnings: list[str] = []
        self._pool = sb.SlotPool() if want else None
        self._interp = sb.interpreter_paths()
        self._plan = sb.expose_plan(self._interp) if want else []
        if want and self._plan:
            problem = _probe_expose(self)
            if problem is not None:
                self._warnings.append(f"local runtime cannot run the interpreter as an unprivileged user "
                                      f"({problem}); submissions run as root and can read hidden data")
                want, self._pool, self._plan = False, None, []
        self._drop = want
        self.isolates_hidden = want
        if not sb.IS_ROOT:
            self._warnings.insert(0, _NOT_ROOT_WARNING)
        elif drop_privileges is False:
            self._warnings.insert(0, "local runtime without privilege drop cannot hide hidden data from the "
                                     "submission; use --runtime bwrap")
        self._warnings.append(_ORACLE_WARNING)

    def _expose(self, app_dir: Path | None, run_root: Path) -> list[list[Any]]:
        """What the sandbox uid must be able to reach: the interpreter, its run directory
        and the public app (the run directory's symlinks point into it), nothing else."""
        need = [*self._interp, str(run_root)]
        if app_dir is not None and Path(app_dir).is_dir():
            need.append(os.path.realpath(app_dir))
        return sb.expose_plan(need)

    def warnings(self) -> list[str]:
        return list(self._warnings)

    def run(self, workspace: Path, scenario: dict[str, Any], inputs: dict[str, Path], limits: Limits,
            *, app_dir: Path | None = None) -> RunResult:
        return self._run(workspace, scenario, inputs, limits, app_dir=app_dir,
                         argv=[sys.executable, "reconstruct.py"])

    def _run(self, workspace: Path, scenario: dict[str, Any], inputs: dict[str, Path], limits: Limits,
             *, app_dir: Path | None, argv: list[str]) -> RunResult:
        uid, lock_fd = self._pool.acquire() if self._pool is not None else (None, None)
        try:
            rd = sb.prepare_run(workspace, scenario, inputs, inputs_visible_at=None, app_dir=app_dir,
                                link_app=True, owner=(uid, uid) if uid is not None else None)
            try:
                env = env_for_submission(str(rd.home))
                env["TMPDIR"] = str(rd.tmp)
                env["PWD"] = str(rd.workspace)  # bwrap sets PWD too: same environment keys
                cfg = {
                    "argv": argv, "env": env, "cwd": str(rd.workspace),
                    "rlimits": sb.rlimits(limits), "nproc_relative": not sb.IS_ROOT,
                    "uid": uid, "gid": uid, "expose": self._expose(app_dir, rd.root) if uid is not None else [],
                    "no_new_privs": True, "pdeathsig": True,
                    "mode": "exec" if uid is not None else "reap",
                }
                st = sb.launch(cfg, rd.stdin)
                pid = st.proc.pid

                if uid is not None:
                    def on_exit() -> None:
                        sb.kill_uid(uid)

                    def on_abort() -> None:
                        sb.killpg(pid)
                        sb.kill_uid(uid)
                else:
                    def on_exit() -> None:
                        sb.killpg(pid)  # the launcher already killed its tree

                    def on_abort() -> None:
                        _stop_reaper(pid)

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


def _stop_reaper(pid: int) -> None:
    """Ask the subreaper launcher to kill its tree, then kill its process group."""
    try:
        os.kill(pid, signal.SIGTERM)
    except OSError:
        pass
    end = time.monotonic() + 3.0
    while time.monotonic() < end and not sb._exited(pid):
        time.sleep(0.005)
    sb.killpg(pid)


def _probe_expose(rt: LocalRuntime) -> str | None:
    """Can the launcher make the interpreter runnable for a sandbox uid here? (cached)"""
    key = repr(rt._plan)
    with _probe_lock:
        if key in _probe_cache:
            return _probe_cache[key]
        import tempfile  # noqa: PLC0415

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
