"""Baselines: plausible submissions that a task must not reward with 1.0.

A baseline is what a capable agent might write from the behaviour-only instruction
alone: the library's defaults, the textbook method, the obvious reading of the
description. An oracle ships each one as ``baselines/NAME/reconstruct.py`` beside its
module (the folder may hold helper modules too); :attr:`recon.Oracle.baselines` lists
them. A task whose baseline reaches R = 1.0 does not need the evidence: its instruction
(or the library's defaults) already gives the recipe away.

:func:`grade_baselines` grades every baseline of a built task with the task's own
grader, exactly as a submission, and returns one row each (name, R, rung).
"""
from __future__ import annotations

import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from .errors import TaskError

if TYPE_CHECKING:  # pragma: no cover - imports for annotations only
    from .oracle import Oracle
    from .registry import Registry
    from .runtimes.base import Runtime
    from .task import Task

__all__ = ["Baseline", "BaselineRow", "discover", "grade_baselines", "BASELINES_DIR", "PROGRAM"]

BASELINES_DIR = "baselines"
PROGRAM = "reconstruct.py"
BASELINE_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
IGNORED = ("__pycache__", "*.pyc", ".ipynb_checkpoints")


@dataclass(frozen=True)
class Baseline:
    """One shipped baseline: ``path`` is its folder, ``path / "reconstruct.py"`` its program."""

    name: str
    path: Path

    @property
    def program(self) -> Path:
        return self.path / PROGRAM


def discover(directory: Path | None) -> tuple[Baseline, ...]:
    """Every ``directory/NAME/reconstruct.py``, sorted by name (none when the folder is absent)."""
    if directory is None or not directory.is_dir():
        return ()
    found = []
    for sub in sorted(directory.iterdir(), key=lambda p: p.name):
        if sub.is_dir() and (sub / PROGRAM).is_file() and BASELINE_NAME_RE.match(sub.name):
            found.append(Baseline(sub.name, sub.resolve()))
    return tuple(found)


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


def grade_baselines(task: "Task | Path | str", oracle: "Oracle | None" = None, *, runtime: "str | Runtime" = "auto",
                    registry: "Registry | None" = None, nonce: str | None = "baselines",
                    report: Callable[[BaselineRow], None] | None = None) -> list[BaselineRow]:
    """Grade every baseline of ``oracle`` (default: the oracle ``task`` was built from)
    on the built ``task``, each in a fresh copy of the agent's ``app/``, with the task's
    grader on ``runtime``. Returns one row per baseline, in name order; none when the
    oracle ships no baseline.

    ``nonce`` fixes the probes drawn, so the rows are reproducible (None: fresh probes).
    """
    from .grader import grade, resolve_oracle  # noqa: PLC0415 - the grader is only needed here
    from .runtimes.base import Runtime, get_runtime  # noqa: PLC0415
    from .task import Task, load_task  # noqa: PLC0415

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
        from .registry import Registry  # noqa: PLC0415

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

