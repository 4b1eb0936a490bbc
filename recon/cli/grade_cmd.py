from __future__ import annotations

from pathlib import Path

import click

from .. import canonjson
from ..grader import grade, render_table, write_outputs
from ..runtimes import RUNTIME_NAMES
from ..task import load_task
from ._common import info, load_registry, plugin_option, progress, quiet_option
from ..checkpoints import grade_checkpoints
from ..history import append
from ..runtimes import get_runtime


@click.command("grade")
@click.argument("task_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--workspace", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="The workspace to grade (the folder holding reconstruct.py).")
@click.option("--json", "as_json", is_flag=True, help="Print the grading as JSON on stdout.")
@click.option("--out", "out", type=click.Path(file_okay=False, path_type=Path),
              help="Write reward.txt, reward.json and grading.json here.")
@click.option("--runtime", type=click.Choice([r for r in RUNTIME_NAMES if r != "docker"]), default="auto",
              show_default=True, help="Sandbox for the submission's runs.")
@click.option("--timeout", type=float, help="Seconds per run (default: the task's).")
@click.option("--nonce", help="Replay a grading: the probes are drawn from this nonce.")
@click.option("--probes", type=int, help="Fresh probe scenarios (default: the task's).")
@click.option("--ladder", help="Ladder name (default: the task's, six_rung).")
@click.option("--label", help="Name of the workspace in reports (default: its path).")
@click.option("--workers", type=click.IntRange(min=1), default=None, help="Runs at a time (default: cores).")
@click.option("--history", "history", type=click.Path(dir_okay=False, path_type=Path),
              help="Append one line for this grading to this .jsonl file (a checkpoint series).")
@click.option("--checkpoints", "checkpoints", type=click.Path(file_okay=False, path_type=Path),
              help="Also grade the workspace snapshots in this folder (a task's checkpoint sidecar wrote them) "
                   "with the same nonce; the series goes into grading.json under `checkpoints`.")
@plugin_option
@quiet_option
def grade_cmd(task_dir: Path, workspace: Path, as_json: bool, out: Path | None, runtime: str, timeout: float | None,
              nonce: str | None, probes: int | None, ladder: str | None, label: str | None, workers: int | None,
              history: Path | None, checkpoints: Path | None, plugins: tuple[Path, ...], quiet: bool) -> None:
    """Grade WORKSPACE on the built task TASK_DIR's ladder."""
    task = load_task(task_dir)

    rt = get_runtime(runtime)
    if runtime == "auto":
        info(f"runtime: {rt.name}", quiet or as_json)
    for w in rt.warnings():
        info(f"warning: {w}")
    n = len(task.meta["public"]) + len(task.meta["hidden"]) + int(task.meta.get("probes", 3) if probes is None else probes)
    registry = load_registry(plugins) if plugins else None
    with progress("grading", n, quiet or as_json) as bar:
        g = grade(task, workspace, runtime=rt, nonce=nonce, probes=probes, ladder=ladder, timeout=timeout,
                  registry=registry, workspace_label=label, workers=workers, progress=bar)
    if checkpoints is not None:

        grade_checkpoints(task, g, checkpoints, runtime=rt, probes=probes, ladder=ladder, timeout=timeout,
                          registry=registry, workers=workers)
        if "checkpoints_refused" in g:
            info(f"warning: checkpoints not graded: {g['checkpoints_refused']}")
        else:
            info(f"graded {len(g['checkpoints']) - 1} checkpoint(s) from {checkpoints}", quiet or as_json)
    if out is not None:
        write_outputs(g, out)
    if history is not None:

        append(history, g)
        info(f"appended to {history}", quiet or as_json)
    if as_json:
        click.echo(canonjson.dumps(g), nl=False)
    else:
        click.echo(render_table(g))
