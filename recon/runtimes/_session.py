"""The parent side of a warm session (:meth:`recon.runtimes.Runtime.session`): one
sandboxed interpreter running :mod:`recon.runtimes._warm`, spoken to one JSON line at a
time. The runtimes that can keep such a sandbox (bwrap; local when it builds each run's
view in namespaces) say how it is started."""
from __future__ import annotations

import base64
import json
import os
import selectors
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

from ..canonjson import dumps_compact
from ..errors import RuntimeUnavailable
from . import _sandbox as sb
from .base import Limits, RunResult, Runtime, Session, env_for_submission, preload_names

__all__ = ["WarmSession", "WARM_SOURCE"]

WARM_SOURCE = (Path(__file__).with_name("_warm.py")).read_text(encoding="utf-8")


class WarmSession(Session):
    """One sandbox running :mod:`recon.runtimes._warm` for many runs of one workspace.
    Each run is a fresh fork in a fresh copy of the workspace, under the run's limits
    (CPU, memory, file size, wall clock); a protocol failure or a sandbox that will not
    start turns the session cold (each run through the runtime's ``run``), so the results
    never depend on whether it stayed warm. A runtime subclasses it with :meth:`_launch`:
    how its sandbox is made, with the workspace read-only at /src, a tmpfs at
    /app/workspace, the run directory's inputs read-only at /inputs and the app's other
    entries read-only at /app."""

    warm = True
    READY = 120.0   # seconds the interpreter may take to start and import the libraries

    def __init__(self, runtime: Runtime, workspace: Path, limits: Limits, *, app_dir: Path | None = None) -> None:
        super().__init__(runtime, workspace, limits, app_dir=app_dir)
        self.rt: Any = runtime
        self.broken: str | None = None
        self._proc: Any = None
        self._to: int | None = None
        self._buf = b""
        self._js_r: int | None = None
        self._err = bytearray()
        self._uid: int | None = None
        self._lock_fd: int | None = None
        slots = getattr(runtime, "_pool", None)   # as root: a sandbox uid of its own
        if slots is not None:
            self._uid, self._lock_fd = slots.acquire()
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
        argv = [sys.executable, "-c", WARM_SOURCE, json.dumps(preload_names(self.workspace))]
        js_r, js_w = os.pipe2(os.O_CLOEXEC)
        to_r, to_w = os.pipe2(os.O_CLOEXEC)
        self._js_r, self._to = js_r, to_w
        try:
            st = self._launch(rd, env, own, argv, js_w, to_r)
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

    def _launch(self, rd: sb.RunDir, env: dict[str, str], own: Limits, argv: list[str], status_w: int,
                stdin_r: int) -> sb.Started:
        """Start ``argv`` in the runtime's sandbox (see the class docstring), its stdin
        ``stdin_r``, its stdout the protocol; ``status_w`` stays open in the starter only."""
        raise NotImplementedError

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
    def run(self, scenario: dict[str, Any], inputs: dict[str, Path], *, cpu: int | None = None) -> RunResult:
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
        if cpu is not None:
            job["affinity"] = int(cpu)
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
                        signal=reply["signal"], cpu_seconds=reply.get("cpu"), stall_seconds=reply.get("stall"))
        if res.signal == signal.SIGXCPU:
            res.notes.append("CPU time limit exceeded")
        if reply.get("retire"):
            self._stop("a run removed files the sandbox started with: later runs go cold")
        return res
