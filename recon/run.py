"""``recon run``: replay a built task end to end with a scripted agent.

Two agents exist: ``oracle`` installs the reference solution with the task's
``solution/solve.sh`` and ``nop`` does nothing, so a sound task grades 1.0 and 0.
On ``docker`` the whole task runs as Harbor runs it (agent image, separate verifier
image, ``tests/test.sh``); on ``bwrap`` and ``local`` the agent phase works in a private
copy of ``environment/app`` and the grader sandboxes each run of the submission.
The same submission gets the same grade everywhere (pass ``nonce`` to replay the
same probes).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .errors import TaskError, UsageError
from .runtimes import RUNTIME_NAMES, pick_runtime_name
from .task import Task, load_task
from .grader import grade, write_outputs
from .runtimes.docker import DockerTaskRunner
from .runtimes.docker import engine_url

__all__ = ["AGENTS", "RunReport", "choose_runtime", "install_solution", "run_task"]

AGENTS = ("oracle", "nop")
#: the path the grader reports for the workspace, on every runtime, so gradings compare
WORKSPACE_LABEL = "/app/workspace"
SOLVE_TIMEOUT = 600.0


@dataclass
class RunReport:
    """What ``recon run`` did: who ran where, and the grade."""

    agent: str
    runtime: str
    reason: str | None                 # why ``auto`` picked the runtime (None when named)
    reward: float
    binary: int
    reward_text: str                   # reward.txt as written (the grader's own formatting)
    grading: dict[str, Any] | None     # grading.json; None if the verifier could not write one
    seconds: float
    agent_log: str = ""
    verifier_log: str = ""
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"agent": self.agent, "runtime": self.runtime, "runtime_reason": self.reason,
                "reward": self.reward, "binary": self.binary,
                "rung": (self.grading or {}).get("rung"), "seconds": round(self.seconds, 3),
                "notes": list(self.notes), "grading": self.grading}


def choose_runtime(requested: str) -> tuple[str, str | None]:
    """The runtime to use and, for ``auto``, a few words saying why it was picked."""
    name = pick_runtime_name(requested)
    if requested != "auto":
        return name, None

    if name == "docker":
        return name, f"a Docker engine answered at {engine_url()}"
    if name == "bwrap":
        return name, "no Docker engine answered; bubblewrap is installed"
    return name, "no Docker engine answered; bubblewrap is not usable here"


def install_solution(task: Task, app: Path, *, timeout: float = SOLVE_TIMEOUT) -> str:
    """Run the task's ``solution/solve.sh`` against the copy of ``environment/app`` at ``app``.

    Returns what it printed; raises :class:`TaskError` when it fails.
    """
    if task.root is None:
        raise TaskError(f"{task.tests} has no task root, so there is no solution/ to run",
                        hint="give the task folder, not its tests/ folder")
    solve = task.root / "solution" / "solve.sh"
    if not solve.is_file():
        raise TaskError(f"{solve} is missing", hint="rebuild the task with `recon build`")
    env = {"PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"), "HOME": str(app),
           "LANG": "C.UTF-8", "RECON_APP": str(app)}
    try:
        proc = subprocess.run(["bash", str(solve)], env=env, cwd=app / "workspace", capture_output=True,
                              text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise TaskError(f"{solve} did not finish within {timeout:.0f} s") from None
    if proc.returncode != 0:
        tail = " | ".join(ln.strip() for ln in (proc.stderr or proc.stdout).strip().splitlines()[-3:])
        raise TaskError(f"{solve} exited with {proc.returncode}: {tail or 'no output'}",
                        hint="run it by hand with RECON_APP=<a copy of environment/app> to see why")
    return proc.stdout + proc.stderr


def run_task(
    task_dir: Path | str,
    agent: str,
    *,
    runtime: str = "auto",
    nonce: str | None = None,
    probes: int | None = None,
    out_dir: Path | str | None = None,
    registry: Any = None,
    client: Any = None,
    log: Callable[[str], None] | None = None,
    progress: Callable[[int], None] | None = None,
) -> RunReport:
    """Run ``agent`` on the built task at ``task_dir``, grade it and return the report.

    ``out_dir`` receives reward.txt, reward.json and grading.json (on docker: every file
    the verifier left in /logs/verifier). ``client`` is a Docker client for the docker
    runtime (tests inject a fake). ``log`` receives progress lines meant for stderr.
    """
    if agent not in AGENTS:
        raise UsageError(f"unknown agent {agent!r}", hint=f"use one of {', '.join(AGENTS)}")
    if runtime not in RUNTIME_NAMES:
        raise UsageError(f"unknown runtime {runtime!r}", hint=f"choose one of {', '.join(RUNTIME_NAMES)}")
    say = log or (lambda msg: None)
    t0 = time.perf_counter()
    task = load_task(task_dir)
    if task.root is None or task.app_dir is None:
        raise TaskError(f"{task_dir} is not a whole built task (need task.toml, environment/app, solution/, tests/)",
                        hint="give the folder `recon build` wrote (e.g. tasks/lidar_icp)")
    name, reason = choose_runtime(runtime)
    if name == "docker":
        report = _run_docker(task.root, agent, reason, nonce, probes, out_dir, client, say)
    else:
        report = _run_here(task, task.app_dir, agent, name, reason, nonce, probes, out_dir, registry, progress)
    report.seconds = time.perf_counter() - t0
    return report


def _run_here(task: Task, app_dir: Path, agent: str, name: str, reason: str | None, nonce: str | None, probes: int | None,
              out_dir: Path | str | None, registry: Any, progress: Callable[[int], None] | None) -> RunReport:

    with tempfile.TemporaryDirectory(prefix="recon-run-") as tmp:
        app = Path(tmp) / "app"
        shutil.copytree(app_dir, app, symlinks=True)
        agent_log = install_solution(task, app) if agent == "oracle" else ""
        grading = grade(task, app / "workspace", runtime=name, nonce=nonce, probes=probes, registry=registry,
                        workspace_label=WORKSPACE_LABEL, progress=progress)
    if out_dir is not None:
        write_outputs(grading, Path(out_dir))
    return RunReport(agent=agent, runtime=name, reason=reason, reward=float(grading["reward"]),
                     binary=int(grading["binary"]), reward_text=f"{grading['reward']}", grading=grading,
                     seconds=0.0, agent_log=agent_log, notes=list(grading.get("runtime_warnings") or []))


def _run_docker(root: Path, agent: str, reason: str | None, nonce: str | None, probes: int | None,
                out_dir: Path | str | None, client: Any, say: Callable[[str], None]) -> RunReport:

    runner = DockerTaskRunner(root, client=client, log=say)
    result = runner.run(agent, nonce=nonce, probes=probes)
    if out_dir is not None:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        for fname, data in sorted(result.files.items()):
            if "/" not in fname:
                (out / fname).write_bytes(data)
    binary = (result.reward_json or {}).get("binary")
    if binary is None:
        binary = 1 if result.reward >= 1.0 else 0
    return RunReport(agent=agent, runtime="docker", reason=reason, reward=result.reward, binary=int(binary),
                     reward_text=result.reward_text, grading=result.grading, seconds=0.0,
                     agent_log=result.agent_log, verifier_log=result.verifier_log, notes=list(result.notes))
