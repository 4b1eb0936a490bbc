"""Checkpoints inside a Harbor trial: snapshots of the agent's workspace taken during the
agent phase, out of the agent's reach, graded by the verifier after the run.

Harbor 0.26 has no periodic verifier. What it does have (read from its source): a task's
``environment/docker-compose.yaml`` is merged over the agent's service, so a task can run
a **sidecar** container beside the agent's; and an artifact can be collected from any
compose service (``artifacts = [{source = "/checkpoints", service = "checkpoints"}]``),
after the agent's container has been stopped (separate-verifier mode), into the
verifier's container at the same path. So a built task with checkpoints carries:

- ``environment/docker-compose.yaml``: the agent's ``/app/workspace`` becomes a named
  volume (seeded from the image, so the starter files are there), mounted read-only in a
  ``checkpoints`` service that runs as root with no network;
- ``environment/checkpointer/``: that service's image (the task's base image and one
  standard-library script, generated from :mod:`recon.runtimes.snapshot`). Every
  interval it copies the workspace with the race-free, capped snapshot copier into its
  own file system: ``/checkpoints/NNN/`` holds exactly the agent's files, and its
  metadata (seconds since the environment started, sizes, whether the copy fitted the
  caps) goes into ``/checkpoints/NNN.json`` *beside* it, a file the sidecar creates
  itself (exclusively, never through a link), so nothing the agent writes can become
  metadata. A snapshot that fails is logged and recorded, and the next one is taken on
  time. The agent's container shares nothing else with the sidecar: it can neither read
  nor write the snapshots;
- the verifier grades ``/app/workspace`` (the reward) and then every snapshot with the
  same nonce, and writes the series into ``grading.json`` under ``checkpoints``:
  ``[{"t", "reward", "rung", "binary"}, ...]``, the last entry being the final workspace
  (``t`` null: the end of the agent phase).

What a series guarantees (:func:`grade_series`):

- a snapshot is graded on that snapshot alone: its runs see their own copy of it and
  nothing newer (not the final workspace, not other snapshots, not the checkpoint
  folder), nor anything another snapshot's runs left behind. Only a runtime that confines
  what a run sees and clears what it leaves can promise that
  (:attr:`recon.runtimes.base.Runtime.confines_view`,
  :attr:`~recon.runtimes.base.Runtime.separates_runs`); elsewhere the series is refused,
  never graded wrongly;
- identical trees are graded once, by a digest the grader computes over its own copy;
  times come from the sidecar's metadata only;
- grading reads the folder and never changes it: the same folder and nonce give the
  same series, however often it is graded.

Times count from the start of the task's environment (the sidecar starts with it, a
little before the agent's own set-up), the only clock the sidecar has.
"""
from __future__ import annotations

import re
import sys
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any, Callable

from . import canonjson
from .errors import UsageError
from .grader import grade
from .runtimes.base import Runtime
from .runtimes.snapshot import snapshot_workspace, tree_digest
from .task import Task

__all__ = ["parse_interval", "DEFAULT_INTERVAL", "SERVICE", "SNAPSHOT_ROOT", "compose_file", "checkpointer_files",
           "grade_checkpoints", "grade_series", "snapshot_dirs", "refusal"]

DEFAULT_INTERVAL = 1800.0          # the seed's verifier cadence: every 30 minutes
SERVICE = "checkpoints"
SNAPSHOT_ROOT = "/checkpoints"
VOLUME = "workspace"
_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0}


def parse_interval(text: str | float | None) -> float | None:
    """``"30m"``, ``"90s"``, ``"1h"``, a number of seconds, or ``"off"`` (None)."""
    if text is None:
        return DEFAULT_INTERVAL
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        seconds = float(text)
    else:
        t = str(text).strip().lower()
        if t in ("off", "none", "no", "0"):
            return None
        m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([smh]?)", t)
        if m is None:
            raise UsageError(f"--checkpoint-every {text!r} is not an interval",
                             hint="give seconds, minutes or hours like 90s, 30m, 1h, or off")
        seconds = float(m.group(1)) * _UNITS.get(m.group(2) or "s", 1.0)
    if not (1.0 <= seconds <= 86400.0):
        raise UsageError(f"--checkpoint-every {text!r} must lie between 1 s and 24 h", hint="e.g. 30m, or off")
    return seconds


def compose_file(interval: float) -> str:
    """``environment/docker-compose.yaml``: the shared workspace volume and the sidecar."""
    return f"""# Checkpoints of the agent's workspace, taken by a sidecar the agent cannot reach
# (written by recon build; `recon build --checkpoint-every off` leaves this file out).
# init: a process that forwards signals runs as PID 1, so each service stops when asked
# (a shell or Python as PID 1 ignores SIGTERM: every stop would wait out its grace period).
services:
  main:
    init: true
    volumes:
      - {VOLUME}:/app/workspace
  {SERVICE}:
    build:
      context: ./checkpointer
    init: true
    user: root
    network_mode: none
    environment:
      RECON_CHECKPOINT_EVERY: "{interval:g}"
    volumes:
      - {VOLUME}:/workspace:ro
volumes:
  {VOLUME}: {{}}
"""


def checkpointer_files(base_image: str) -> dict[str, str]:
    """The sidecar's build context: a Dockerfile and its one standard-library script."""
    snapshot_src = resources.files("recon").joinpath("runtimes/snapshot.py").read_text(encoding="utf-8")
    body = "\n".join(ln for ln in snapshot_src.splitlines() if ln.strip() != "from __future__ import annotations")
    script = (
        "#!/usr/bin/env python3\n"
        '"""Snapshots /workspace (read-only) into /checkpoints/NNN every $RECON_CHECKPOINT_EVERY\n'
        "seconds, with recon's race-free, capped copier. Generated by recon build; do not edit.\"\"\"\n"
        + body.split('"""', 2)[2]
        + _LOOP
    )
    dockerfile = f"""FROM {base_image}

# Takes the checkpoints of the agent's workspace (see ../docker-compose.yaml).
COPY snap.py /usr/local/lib/recon-checkpointer/snap.py
CMD ["python3", "-u", "/usr/local/lib/recon-checkpointer/snap.py"]
"""
    return {"Dockerfile": dockerfile, "snap.py": script}


_LOOP = """

# ---- the checkpoint loop -------------------------------------------------------------
import json as _json
import sys as _sys
import time as _time


def _log(text):
    # never let an odd file name (undecodable bytes) in a message stop the loop
    _sys.stdout.write(text.encode("ascii", "backslashreplace").decode("ascii") + "\\n")
    _sys.stdout.flush()


def _write_meta(out, k, meta):
    # Created exclusively in the sidecar's own folder and never through a link.
    path = os.path.join(out, "%03d.json" % k)
    tmp = os.path.join(out, ".%03d.json.tmp" % k)
    if os.path.lexists(tmp):
        os.unlink(tmp)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "w") as f:
        _json.dump(meta, f, sort_keys=True)
    os.rename(tmp, path)


def _take(src, out, k, t0):
    tmp = os.path.join(out, ".%03d.tmp" % k)
    if os.path.lexists(tmp):
        shutil.rmtree(tmp, ignore_errors=True)
    snap = snapshot_workspace(src, tmp)
    t = round(_time.monotonic() - t0, 3)
    os.rename(tmp, os.path.join(out, "%03d" % k))
    _write_meta(out, k, {"index": k, "t": t, "ok": snap.ok, "reason": snap.reason, "files": snap.files,
                         "bytes": snap.bytes, "skipped": len(snap.skipped)})
    return t, ("ok" if snap.ok else snap.reason)


def main():
    every = float(os.environ.get("RECON_CHECKPOINT_EVERY", "1800"))
    src = os.environ.get("RECON_CHECKPOINT_SOURCE", "/workspace")
    out = os.environ.get("RECON_CHECKPOINT_DIR", "/checkpoints")
    os.makedirs(out, mode=0o700, exist_ok=True)
    t0 = _time.monotonic()
    k = 0
    while True:
        # the next tick of the schedule t0 + k * every (ticks a slow copy overran are skipped)
        k = max(k + 1, int((_time.monotonic() - t0) // every) + 1)
        _time.sleep(max(0.0, t0 + k * every - _time.monotonic()))
        try:
            t, how = _take(src, out, k, t0)
            _log("checkpoint %03d at %.0f s: %s" % (k, t, how))
        except Exception as exc:  # a failed snapshot is recorded and logged; the loop goes on
            shutil.rmtree(os.path.join(out, ".%03d.tmp" % k), ignore_errors=True)
            reason = "snapshot failed: %s: %s" % (type(exc).__name__, exc)
            try:
                _write_meta(out, k, {"index": k, "t": round(_time.monotonic() - t0, 3), "ok": False,
                                     "reason": reason[:300], "files": 0, "bytes": 0, "skipped": 0})
            except Exception:
                pass
            _log("checkpoint %03d failed: %s" % (k, reason))


if __name__ == "__main__":
    main()
"""


def snapshot_dirs(root: Path) -> list[tuple[Path, dict[str, Any]]]:
    """The snapshots under ``root`` in order, each with the sidecar's metadata
    (``NNN.json`` beside ``NNN/``). A folder without metadata is not a finished
    snapshot; metadata is read from regular files only, never through a link."""
    out: list[tuple[Path, dict[str, Any]]] = []
    if not root.is_dir():
        return out
    for meta_path in sorted(root.iterdir()):
        m = re.fullmatch(r"(\d{3,})\.json", meta_path.name)
        if m is None or meta_path.is_symlink() or not meta_path.is_file():
            continue
        try:
            meta = canonjson.read(meta_path)
        except (OSError, ValueError):
            continue
        if isinstance(meta, dict):
            out.append((root / m.group(1), meta))
    return out


def refusal(runtime: Runtime) -> str | None:
    """Why ``runtime`` cannot grade a checkpoint series here, or None."""
    if not runtime.confines_view:
        return (f"the {runtime.name} runtime here cannot confine a run to its own snapshot, so an early snapshot "
                "could run code written after it; checkpoint series are graded only where it can (bwrap, or local "
                "with namespaces or Landlock)")
    if not runtime.separates_runs:
        return (f"the {runtime.name} runtime here cannot clear what a run leaves behind (it runs as this user, "
                "without namespaces), so an early snapshot's runs could read what the final workspace's runs left; "
                "checkpoint series are graded only where it can (bwrap, or local as root)")
    return None


def grade_checkpoints(task: Task, final: dict[str, Any], root: Path, *, runtime: Runtime,
                      **grade_options: Any) -> dict[str, Any]:
    """Grade the snapshots under ``root`` with the final grading's nonce and record the
    series in ``final`` (``checkpoints``), or why it was refused (``checkpoints_refused``:
    the runtime cannot confine a run to its snapshot). Returns ``final``."""
    why = refusal(runtime)
    if why is not None:
        final["checkpoints_refused"] = why
        return final

    def grade_one(ws: Path) -> dict[str, Any]:
        return grade(task, ws, runtime=runtime, nonce=final["nonce"], workspace_label=f"checkpoint {ws.name}",
                     **grade_options)

    with tempfile.TemporaryDirectory(prefix="recon-series-") as scratch:
        final["checkpoints"] = grade_series(root, final, grade_one, scratch=Path(scratch))
    return final


def grade_series(root: Path, final: dict[str, Any], grade_one: Callable[[Path], dict[str, Any]],
                 *, scratch: Path) -> list[dict[str, Any]]:
    """Grade every snapshot under ``root`` and return the series, closed by the final
    workspace's grading ``final`` (``t`` None).

    Each snapshot is copied once into ``scratch`` (a private folder of the grader's) and
    graded from that copy; copies with the same digest (computed here, over the copy)
    share one grading. ``root`` is only read."""
    series: list[dict[str, Any]] = []
    seen: dict[str, dict[str, Any]] = {}
    for d, meta in snapshot_dirs(root):
        t = meta.get("t")
        entry: dict[str, Any] = {"t": float(t) if isinstance(t, (int, float)) and not isinstance(t, bool) else None,
                                 "index": int(d.name)}
        try:
            snap = snapshot_workspace(d, scratch / d.name) if meta.get("ok") is True else None
        except OSError as exc:   # snapshot_workspace refuses what it finds; this is the copy failing
            entry.update(reward=0.0, rung=0, binary=0, note=f"copying this snapshot failed: {exc}"[:200])
            series.append(entry)
            continue
        if snap is None or not snap.ok:
            why = meta.get("reason") if snap is None else snap.reason
            entry.update(reward=0.0, rung=0, binary=0, note=str(why or "snapshot failed")[:200])
        else:
            digest = tree_digest(snap.path)
            if digest not in seen:
                try:
                    g = grade_one(snap.path)
                except Exception as exc:  # noqa: BLE001 - one snapshot's failure never costs the series
                    why = f"grading this snapshot failed: {type(exc).__name__}: {exc}"
                    print(f"recon: checkpoint {d.name}: {why}", file=sys.stderr)
                    seen[digest] = {"reward": 0.0, "rung": 0, "binary": 0, "note": why[:200]}
                else:
                    seen[digest] = {"reward": g["reward"], "rung": g["rung"]["index"], "binary": g["binary"]}
            entry.update(seen[digest], digest=digest)
        series.append(entry)
    series.append({"t": None, "index": None, "reward": final["reward"], "rung": final["rung"]["index"],
                   "binary": final["binary"], "final": True})
    return series
