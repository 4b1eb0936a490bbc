"""Grading programs other than the reference on a built task: the oracle's baselines.

A baseline (see :mod:`recon.baselines`) is what a capable agent might write from the
behaviour-only instruction alone. :func:`grade_baselines` grades every baseline of a
built task with the task's own grader, exactly as a submission, and returns one row each
(name, R, rung): a task whose baseline reaches R = 1.0 does not need its evidence.
"""
from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from .baselines import IGNORED
from .errors import TaskError
from .grader import grade, resolve_oracle
from .oracle import Oracle
from .registry import Registry
from .runtimes import Runtime, get_runtime
from .task import Task, load_task

__all__ = ["BaselineRow", "grade_baselines"]


@dataclass(frozen=True)
class BaselineRow:
    """How one baseline scored on a built task."""

    name: str
    reward: float
    rung: int              # highest rung passed
    rung_name: str
    detail: str            # the first failing check, or why it could not be graded

    @property
    def passed(self) -> bool:
        """A baseline passes the task's check when it stays below 1.0."""
        return self.reward < 1.0

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "reward": self.reward, "rung": self.rung, "rung_name": self.rung_name,
                "detail": self.detail, "passed": self.passed}


def grade_baselines(task: Task | Path | str, oracle: Oracle | None = None, *, runtime: str | Runtime = "auto",
                    registry: Registry | None = None, nonce: str | None = "baselines",
                    report: Callable[[BaselineRow], None] | None = None) -> list[BaselineRow]:
    """Grade every baseline of ``oracle`` (default: the oracle ``task`` was built from)
    on the built ``task``, each in a fresh copy of the agent's ``app/``, with the task's
    grader on ``runtime``. Returns one row per baseline, in name order; none when the
    oracle ships no baseline.

    ``nonce`` fixes the probes drawn, so the rows are reproducible (None: fresh probes).
    """
    t = task if isinstance(task, Task) else load_task(task)
    if t.app_dir is None:
        raise TaskError(f"{t.tests}: grading baselines needs the whole task (environment/app), not only tests/",
                        hint="give the folder `recon build` wrote (e.g. tasks/lidar_icp)")
    o = oracle if oracle is not None else resolve_oracle(t, registry)
    found = o.baselines
    if not found:
        return []
    if registry is None:
        # Grade with the oracle resolved once: probes need it, and resolving again per
        # baseline would load plugins again.
        registry = Registry()
        registry.register(o, f"resolved for {t.meta['task']}")
    rt = runtime if isinstance(runtime, Runtime) else get_runtime(runtime)
    rows: list[BaselineRow] = []
    with tempfile.TemporaryDirectory(prefix="recon-baselines-") as tmpd:
        for b in found:
            app = Path(tmpd) / b.name / "app"
            shutil.copytree(t.app_dir, app, symlinks=True)
            # The baseline's folder becomes the workspace's content, beside the starter README.
            shutil.copytree(b.path, app / "workspace", dirs_exist_ok=True, ignore=shutil.ignore_patterns(*IGNORED))
            g = grade(t, app / "workspace", runtime=rt, registry=registry, nonce=nonce,
                      workspace_label=f"baseline {b.name}")
            failing = [c for r in g["rungs"] for c in r["checks"] if not c["passed"]][:1]
            detail = "every check passes" if not failing else f"{failing[0]['id']}: {failing[0]['reason']}"
            row = BaselineRow(b.name, float(g["reward"]), int(g["rung"]["index"]), str(g["rung"]["name"]),
                              detail)
            rows.append(row)
            if report:
                report(row)
    return rows

