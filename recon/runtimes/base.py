"""The runtime interface shared by every sandbox.

A runtime runs ``python3 reconstruct.py`` from a private copy of a workspace with one
scenario JSON on stdin, under limits, and returns what happened as a :class:`RunResult`.
It never raises for anything the submission does; it raises
:class:`recon.errors.RuntimeUnavailable` when it cannot run at all.
"""
from __future__ import annotations

import os
import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


__all__ = ["Limits", "RunResult", "Runtime", "Session", "SessionPool", "env_for_submission", "preload_names"]


@dataclass(frozen=True)
class Limits:
    """Resource limits for one run of a submission."""

    wall: float = 30.0            # seconds of wall clock, then the whole run is killed
    cpu: int = 60                 # seconds of CPU time (RLIMIT_CPU)
    memory: int = 4 << 30         # bytes of address space (RLIMIT_AS)
    fsize: int = 64 << 20         # largest file it may write (RLIMIT_FSIZE)
    nproc: int = 64               # processes/threads (RLIMIT_NPROC, per sandbox user)
    stdout: int = 16 << 20        # bytes of stdout read; more is killed and reported
    stderr_tail: int = 2000       # characters of stderr kept

    @property
    def scratch(self) -> int:
        """Bytes a run may write into each place it can write: each temp directory (a sized
        tmpfs where the runtime can make one) and its own run folder (watched)."""
        return max(4 * int(self.fsize), 64 << 20)

    def to_json(self) -> dict[str, Any]:
        return {"wall": self.wall, "cpu": self.cpu, "memory": self.memory, "fsize": self.fsize,
                "nproc": self.nproc, "stdout": self.stdout, "stderr_tail": self.stderr_tail}


@dataclass
class RunResult:
    """What one run of a submission did."""

    exit_code: int | None          # None when it was killed (timeout, overflow, signal)
    stdout: bytes
    stderr_tail: str
    seconds: float
    timed_out: bool = False
    stdout_overflow: bool = False
    signal: int | None = None
    notes: list[str] = field(default_factory=list)
    rejected: str | None = None    # the run never started: the workspace broke a cap
    disk_overflow: str | None = None   # killed for writing more than its run folder may hold
    cpu_seconds: float | None = None   # CPU time of the run and the children it waited for, when measured
    stall_seconds: float | None = None   # time its main thread was runnable but waiting for a CPU, when measured

    def failure(self) -> str | None:
        """One line saying why the run failed, or None when it exited 0."""
        if self.rejected:
            return f"not run: {self.rejected}"
        if self.timed_out:
            return f"timed out after {self.seconds:.1f} s (killed)"
        if self.stdout_overflow:
            return "printed more than the stdout limit (killed)"
        if self.disk_overflow:
            return f"{self.disk_overflow} (killed)"
        if self.signal is not None:
            return f"killed by signal {self.signal}" + (f": {self.last_stderr_line()}" if self.stderr_tail.strip() else "")
        if self.exit_code not in (0, None):
            tail = self.last_stderr_line()
            return f"crashed with exit code {self.exit_code}" + (f": {tail}" if tail else "")
        return None

    def last_stderr_line(self) -> str:
        lines = [ln for ln in self.stderr_tail.strip().splitlines() if ln.strip()]
        return lines[-1].strip()[:200] if lines else ""


class Runtime(ABC):
    """Runs a submission's ``reconstruct.py`` on one scenario at a time."""

    name: str = "runtime"
    #: whether hidden data and the grader's outputs are out of the submission's reach
    isolates_hidden: bool = False
    #: whether a run sees only what it needs (the system, the interpreter, the public app
    #: and its own copy of the workspace) and nothing else of the machine: other
    #: workspaces, checkpoint snapshots, the checkout recon runs from. Checkpoint series
    #: are graded only where this holds.
    confines_view: bool = False
    #: whether nothing a run leaves outside its run folder (files in shared temp
    #: directories, IPC objects, processes) reaches a later run: namespaces of its own, or a
    #: uid of its own whose leftovers are cleared after it. Checkpoint series are graded
    #: only where this holds too (an early snapshot's runs could read what the final
    #: workspace's runs left behind).
    separates_runs: bool = False

    @abstractmethod
    def run(self, workspace: Path, scenario: dict[str, Any], inputs: dict[str, Path], limits: Limits,
            *, app_dir: Path | None = None) -> RunResult:
        """Run ``python3 reconstruct.py`` with cwd = a private copy of ``workspace``.

        ``scenario`` is the scenario document; its ``inputs`` are replaced by the paths
        at which the files of ``inputs`` (name -> real path) are visible to the run.
        ``app_dir`` is the task's public ``environment/app`` (mounted at /app where the
        runtime can). Thread-safe: the grader calls it from several threads at once.
        """

    def session(self, workspace: Path, limits: Limits, *, app_dir: Path | None = None) -> "Session":
        """Many runs of one workspace, one at a time (close it, or use it as a context
        manager). A runtime that can keeps one sandboxed interpreter with the workspace's
        libraries imported and forks it for each run (see :mod:`recon.runtimes._warm`:
        bwrap, and local where each run's view is built in namespaces); this one runs each
        cold, as :meth:`run` does. For the author's own programs run many times (revealed
        programs, the fairness audit, ``recon pool``, validate's controls and baselines),
        never for grading a submission under test: warm runs share the interpreter's start,
        and their times leave out the imports a cold run pays."""
        return Session(self, workspace, limits, app_dir=app_dir)

    def warnings(self) -> list[str]:
        """Things the user should know about this runtime's isolation here."""
        return []

    def close(self) -> None:
        """Release anything the runtime holds (temporary users, images...)."""


def env_for_submission(home: str) -> dict[str, str]:
    """The scrubbed environment every run gets: nothing of the grader's leaks in."""
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": home,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONHASHSEED": "0",
        "PYTHONUNBUFFERED": "1",
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "MPLBACKEND": "Agg",
        "TMPDIR": "/tmp",
        **({"OPENBLAS_CORETYPE": os.environ["OPENBLAS_CORETYPE"]} if "OPENBLAS_CORETYPE" in os.environ else {}),
    }


class Session:
    """Runs of one workspace under one set of limits (:meth:`Runtime.session`): this base
    runs each cold through the runtime."""

    warm = False

    def __init__(self, runtime: Runtime, workspace: Path, limits: Limits, *, app_dir: Path | None = None) -> None:
        self.runtime, self.workspace, self.limits, self.app_dir = runtime, Path(workspace), limits, app_dir

    def run(self, scenario: dict[str, Any], inputs: dict[str, Path], *, cpu: int | None = None) -> RunResult:
        """One run of the workspace on ``scenario``. ``cpu``: the CPU a warm session runs it
        on (a caller that keeps one run per CPU); a cold run goes where the kernel puts it."""
        return self.runtime.run(self.workspace, scenario, inputs, self.limits, app_dir=self.app_dir)

    def close(self) -> None:
        """Release what the session holds."""

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class SessionPool:
    """Sessions of one workspace, one per concurrent caller (thread-safe :meth:`run`). A
    run that fails in a warm session (a crash, a time-out, an overflow) is run again cold
    and the cold result stands: a program that cannot bear a forked start is judged as a
    fresh process would be."""

    def __init__(self, runtime: Runtime, workspace: Path, limits: Limits, *, app_dir: Path | None = None) -> None:
        self.runtime, self.workspace, self.limits, self.app_dir = runtime, Path(workspace), limits, app_dir
        self._lock = threading.Lock()
        self._idle: list[Session] = []
        self._all: list[Session] = []
        self.confirmed = 0   # warm failures run again cold

    def run(self, scenario: dict[str, Any], inputs: dict[str, Path], *, cpu: int | None = None) -> RunResult:
        with self._lock:
            s = self._idle.pop() if self._idle else None
        if s is None:
            s = self.runtime.session(self.workspace, self.limits, app_dir=self.app_dir)
            with self._lock:
                self._all.append(s)
        try:
            res = s.run(scenario, inputs, cpu=cpu)
        finally:
            with self._lock:
                self._idle.append(s)
        if s.warm and res.failure() is not None:
            with self._lock:
                self.confirmed += 1
            res = self.runtime.run(self.workspace, scenario, inputs, self.limits, app_dir=self.app_dir)
        return res

    def close(self) -> None:
        with self._lock:
            sessions, self._all, self._idle = self._all, [], []
        for s in sessions:
            s.close()

    def __enter__(self) -> "SessionPool":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_PARSE_LOCK = threading.Lock()   # CPython 3.11's parser is not safe in concurrent threads
                                 # ("AST constructor recursion depth mismatch")


def preload_names(workspace: Path) -> list[str]:
    """Top-level modules a workspace's Python files import that are not its own (what a
    warm session imports once): ``import numpy as np`` and ``from scipy.spatial import
    cKDTree`` give ``numpy`` and ``scipy.spatial``."""
    import ast  # noqa: PLC0415 - start-up: only sessions need the parser

    root = Path(workspace)
    own = {p.stem for p in root.glob("*.py")} | {p.name for p in root.iterdir() if p.is_dir()}
    names: dict[str, None] = {}
    for path in sorted(root.rglob("*.py")):
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
            with _PARSE_LOCK:
                tree = ast.parse(text)
        except (SyntaxError, ValueError, OSError, RecursionError):
            continue
        for node in ast.walk(tree):
            mods = ([a.name for a in node.names] if isinstance(node, ast.Import)
                    else [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level
                    else [])
            for m in mods:
                if m.split(".")[0] not in own and m.split(".")[0] != "__future__":
                    names[m] = None
    return list(names)
