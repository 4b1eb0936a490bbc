from __future__ import annotations

import re
import time
from pathlib import Path

import click

from ..errors import UsageError
from ..runtimes import RUNTIME_NAMES
from ._common import info, load_registry, plugin_option, progress, quiet_option
from ..grader import grade
from ..history import append
from ..runtimes import get_runtime
from ..task import load_task

_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)([smhd])")


def parse_duration(text: str) -> float:
    """Seconds in ``30m``, ``1h30m``, ``90s``, ``0.5s`` or a bare number of seconds."""
    s = text.strip().lower()
    try:
        value = float(s)
    except ValueError:
        pos, value = 0, 0.0
        for m in _PART.finditer(s):
            if m.start() != pos:
                break
            value += float(m.group(1)) * _UNITS[m.group(2)]
            pos = m.end()
        if pos != len(s) or not s:
            raise UsageError(f"--every {text!r} is not a duration", hint="write e.g. 30m, 1h, 1h30m, 90s or 45") from None
    if not (value > 0 and value < 366 * 86400):
        raise UsageError(f"--every {text!r} must be a positive duration under a year")
    return value


@click.command("watch")
@click.argument("task_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--workspace", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="The live workspace to grade (the folder holding reconstruct.py).")
@click.option("--every", "every", default="30m", show_default=True,
              help="Time between gradings: 30m, 1h, 90s, ... (gradings start on a fixed schedule).")
@click.option("--history", "history", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The .jsonl file that receives one line per grading.")
@click.option("--count", "count", type=click.IntRange(min=1), help="Stop after this many gradings.")
@click.option("--runtime", type=click.Choice([r for r in RUNTIME_NAMES if r != "docker"]), default="auto",
              show_default=True, help="Sandbox for the submission's runs.")
@click.option("--timeout", type=float, help="Seconds per run (default: the task's).")
@click.option("--probes", type=int, help="Fresh probe scenarios per grading (default: the task's, 3).")
@click.option("--label", help="Name of the workspace in the history (default: its path).")
@plugin_option
@quiet_option
@click.pass_context
def watch_cmd(ctx: click.Context, task_dir: Path, workspace: Path, every: str, history: Path, count: int | None,
              runtime: str, timeout: float | None, probes: int | None, label: str | None,
              plugins: tuple[Path, ...], quiet: bool) -> None:
    """Grade WORKSPACE on TASK_DIR now and then every --every, appending one line per
    grading to --history, until a grading passes all six rungs, --count gradings were
    made, or Ctrl-C. Each grading draws fresh probes (its own nonce)."""

    period = parse_duration(every)
    task = load_task(task_dir)
    registry = load_registry(plugins)
    rt = get_runtime(runtime)
    info(f"runtime: {rt.name}; grading {workspace} every {every} into {history} (Ctrl-C stops)", quiet)
    n_runs = len(task.meta["public"]) + len(task.meta["hidden"]) + int(task.meta.get("probes", 3) if probes is None else probes)
    start = time.monotonic()
    done = 0
    best = 0.0
    try:
        while True:
            with progress(f"grading #{done + 1}", n_runs, quiet) as bar:
                g = grade(task, workspace, runtime=rt, probes=probes, timeout=timeout, registry=registry,
                          workspace_label=label, progress=bar)
            rec = append(history, g)
            done += 1
            best = max(best, rec["reward"])
            click.echo(f"{rec['timestamp']}  reward {rec['reward']:.4f}  rung {rec['rung']} ({rec['rung_name']})  "
                       f"binary {rec['binary']}")
            if rec["binary"] == 1:
                info(f"full pass after {done} grading(s); stopping", quiet)
                return
            if count is not None and done >= count:
                info(f"{done} grading(s) made (--count); best reward {best:.4f}", quiet)
                return
            # Fixed-rate schedule: the k-th grading starts at start + k * period; a grading
            # that overran its slot makes the next one start at the next free tick.
            now = time.monotonic()
            k = max(done, int((now - start) // period) + 1)
            skipped = k - done
            if skipped:
                info(f"grading took longer than --every; skipping {skipped} tick(s)", quiet)
            time.sleep(max(0.0, start + k * period - time.monotonic()))
    except KeyboardInterrupt:
        click.echo(f"stopped after {done} grading(s); best reward {best:.4f}; history in {history}", err=True)
        ctx.exit(130)
    finally:
        rt.close()
