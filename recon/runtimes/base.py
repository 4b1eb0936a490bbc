"""The runtime interface shared by every sandbox.

A runtime runs ``python3 reconstruct.py`` from a private copy of a workspace with one
scenario JSON on stdin, under limits, and returns what happened as a :class:`RunResult`.
It never raises for anything the submission does; it raises
:class:`recon.errors.RuntimeUnavailable` when it cannot run at all.
"""
from __future__ import annotations

import os
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


__all__ = ["Limits", "RunResult", "Runtime", "env_for_submission"]


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

    def failure(self) -> str | None:
        """One line saying why the run failed, or None when it exited 0."""
        if self.rejected:
            return f"not run: {self.rejected}"
        if self.timed_out:
            return f"timed out after {self.seconds:.1f} s (killed)"
        if self.stdout_overflow:
            return "printed more than the stdout limit (killed)"
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

    @abstractmethod
    def run(self, workspace: Path, scenario: dict[str, Any], inputs: dict[str, Path], limits: Limits,
            *, app_dir: Path | None = None) -> RunResult:
        """Run ``python3 reconstruct.py`` with cwd = a private copy of ``workspace``.

        ``scenario`` is the scenario document; its ``inputs`` are replaced by the paths
        at which the files of ``inputs`` (name -> real path) are visible to the run.
        ``app_dir`` is the task's public ``environment/app`` (mounted at /app where the
        runtime can). Thread-safe: the grader calls it from several threads at once.
        """

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
