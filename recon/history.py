"""Grading histories: one JSON line per grading, appended to a ``.jsonl`` file.

Repeated gradings of a live workspace (``recon grade --history FILE``, ``recon watch``)
form a checkpoint series, like the 30-minute verifier checkpoints of long-horizon
benchmarks: the file shows whether a run made sustained progress, plateaued or
regressed, not only where it ended. ``recon report`` plots the series.

A line holds what a reader of the series needs and nothing secret:

``{"schema": 1, "timestamp": ..., "task": ..., "workspace": ..., "reward": ...,
"binary": ..., "rung": k, "rung_name": ..., "fractions": [f1, ..., f6], "nonce": ...,
"runs": ..., "seconds": ..., "runtime": ..., "recon_version": ...}``

``fractions[i]`` is the fraction of rung i+1's checks that passed (0 when the rung was
not examined), so a reader sees how far into the next rung a submission got.
"""
from __future__ import annotations

import datetime as _dt
import fcntl
import json
import os
from collections import OrderedDict
from pathlib import Path
from typing import Any, Iterable

from . import canonjson
from .errors import ReconError, UsageError

__all__ = ["HISTORY_SCHEMA", "HistoryError", "record_of", "append", "read", "series", "parse_time"]

HISTORY_SCHEMA = 1
REQUIRED = ("timestamp", "task", "workspace", "reward", "binary", "rung", "fractions", "nonce")


class HistoryError(ReconError):
    """A history file cannot be read or written."""

    exit_code = 3


def record_of(grading: dict[str, Any]) -> dict[str, Any]:
    """The history line for one grading document (as :func:`recon.grader.grade` returns)."""
    try:
        rungs = sorted(grading["rungs"], key=lambda r: r["index"])
        return {
            "schema": HISTORY_SCHEMA,
            "timestamp": grading["graded_at"],
            "task": grading["task"],
            "workspace": grading["workspace"],
            "reward": grading["reward"],
            "binary": grading["binary"],
            "rung": grading["rung"]["index"],
            "rung_name": grading["rung"]["name"],
            "next_rung_fraction": grading.get("next_rung_fraction", 0.0),
            "fractions": [float(r["fraction"]) if r["examined"] else 0.0 for r in rungs],
            "nonce": grading["nonce"],
            "runs": grading.get("runs", 0),
            "seconds": grading.get("timings", {}).get("total"),
            "runtime": grading.get("runtime"),
            "recon_version": grading.get("recon_version"),
        }
    except (KeyError, TypeError) as exc:
        raise HistoryError(f"not a grading document (missing {exc})",
                           hint="pass what `recon grade --json` prints or a grading.json") from None


def append(path: Path | str, grading: dict[str, Any]) -> dict[str, Any]:
    """Append the grading's line to ``path`` (created with its folder); returns the line.

    One ``write`` of one line under an exclusive lock, so concurrent writers (two
    ``recon watch`` on one file) never interleave or tear lines.
    """
    rec = record_of(grading)
    line = (canonjson.dumps_compact(rec) + "\n").encode("utf-8")
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    except OSError as exc:
        raise HistoryError(f"cannot open history file {path}: {exc.strerror or exc}",
                           hint="give a writable --history path") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        # A previous writer killed mid-line would glue our line onto its fragment.
        if os.fstat(fd).st_size > 0:
            with open(path, "rb") as fh:
                fh.seek(-1, os.SEEK_END)
                if fh.read(1) != b"\n":
                    line = b"\n" + line
        os.write(fd, line)
        os.fsync(fd)
    finally:
        os.close(fd)
    return rec


def parse_time(stamp: str) -> _dt.datetime:
    """An ISO 8601 timestamp as an aware datetime (naive ones are taken as UTC)."""
    t = _dt.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    return t if t.tzinfo else t.replace(tzinfo=_dt.timezone.utc)


def _check_record(rec: Any, where: str) -> dict[str, Any]:
    if not isinstance(rec, dict):
        raise HistoryError(f"{where}: a history line must be a JSON object")
    missing = [k for k in REQUIRED if k not in rec]
    if missing:
        raise HistoryError(f"{where}: history line lacks {', '.join(missing)}",
                           hint="history files are written by `recon grade --history` and `recon watch`")
    reward = rec["reward"]
    if not isinstance(reward, (int, float)) or isinstance(reward, bool) or not 0.0 <= reward <= 1.0:
        raise HistoryError(f"{where}: reward={reward!r} is not a number in [0, 1]")
    if not isinstance(rec["fractions"], list):
        raise HistoryError(f"{where}: fractions must be a list of per-rung fractions")
    try:
        parse_time(str(rec["timestamp"]))
    except ValueError:
        raise HistoryError(f"{where}: timestamp={rec['timestamp']!r} is not ISO 8601") from None
    return rec


def read(path: Path | str) -> list[dict[str, Any]]:
    """Every line of a history file, in file order. Blank lines are skipped; a
    malformed line is an error naming its line number (never silently dropped)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"history file {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise HistoryError(f"cannot read history file {path}: {exc}") from None
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise HistoryError(f"{path}:{n}: not a JSON line ({exc.msg})",
                               hint="a history file holds one JSON object per line") from None
        out.append(_check_record(rec, f"{path}:{n}"))
    return out


def series(records: Iterable[dict[str, Any]]) -> "OrderedDict[tuple[str, str], list[dict[str, Any]]]":
    """Records grouped by (task, workspace), each group sorted by timestamp;
    groups in order of first appearance."""
    groups: OrderedDict[tuple[str, str], list[dict[str, Any]]] = OrderedDict()
    for rec in records:
        groups.setdefault((str(rec["task"]), str(rec["workspace"])), []).append(rec)
    for key, recs in groups.items():
        recs.sort(key=lambda r: parse_time(str(r["timestamp"])))
    return groups
