"""Evidence files and what each reveals: the dial a build turns.

An oracle publishes evidence files for its public scenarios (never for hidden ones).
Each file declares how much of the pipeline it reveals, on one ordered scale:

``outputs``
    about the outputs only: the final result in another form (a rendered field, the
    output cloud, a table of the final values), nothing of how it was reached;
``summary``
    per-stage summaries: what each stage produced, in aggregate (counts, fitted
    parameters, the chosen candidate), so an agent can tell which stage it gets wrong;
``trace``
    step-by-step traces: every iteration, every intermediate artifact, enough to fit a
    stage on its own.

A build publishes the files at or below its level (``recon build --evidence LEVEL``,
else the oracle's ``evidence_level=``, else everything declared). Fewer internals make
a deeper task: the agent must reason about the whole pipeline from what it ends in.
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Evidence", "EVIDENCE_LEVELS", "DEFAULT_REVEALS", "level_rank", "check_level"]

EVIDENCE_LEVELS = ("outputs", "summary", "trace")
#: what a file declared by a plain description string reveals
DEFAULT_REVEALS = "summary"


@dataclass(frozen=True)
class Evidence:
    """One evidence file's public description and what it reveals (see the module doc).

    ``evidence={"stages.json": Evidence("per-stage counts and fits", reveals="summary")}``;
    a plain string is ``Evidence(text)`` (``reveals="summary"``).
    """

    doc: str
    reveals: str = DEFAULT_REVEALS


def level_rank(level: str) -> int:
    return EVIDENCE_LEVELS.index(level)


def check_level(level: object) -> str | None:
    """Why ``level`` is not an evidence level, or None."""
    if level not in EVIDENCE_LEVELS:
        return f"{level!r} is not an evidence level (one of {', '.join(EVIDENCE_LEVELS)})"
    return None
