"""Baselines: plausible submissions that a task must not reward with 1.0.

A baseline is what a capable agent might write from the behaviour-only instruction
alone: the library's defaults, the textbook method, the obvious reading of the
description. An oracle ships each one as ``baselines/NAME/reconstruct.py`` beside its
module (the folder may hold helper modules too); :attr:`recon.Oracle.baselines` lists
them. A task whose baseline reaches R = 1.0 does not need the evidence: its instruction
(or the library's defaults) already gives the recipe away.

:func:`recon.audit.grade_baselines` grades every baseline of a built task with the
task's own grader, exactly as a submission.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Baseline", "discover", "BASELINES_DIR", "INDEPENDENT_DIR", "PROGRAM"]

BASELINES_DIR = "baselines"
INDEPENDENT_DIR = "independent"   # other implementations, for the fairness audit
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
