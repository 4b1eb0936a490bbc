from __future__ import annotations

from pathlib import Path

import click

from .. import canonjson
from ._common import progress, quiet_option


@click.command("stats")
@click.argument("task_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the statistics as JSON on stdout.")
@click.option("--no-run", "no_run", is_flag=True, help="Do not run the reference solution (no timings).")
@quiet_option
def stats_cmd(task_dir: Path, as_json: bool, no_run: bool, quiet: bool) -> None:
    """Statistics of the built task TASK_DIR: work W (non-blank, non-comment lines of the
    reference solution), instruction words, evidence size, N/K, axes and outputs, and the
    reference solution's run time per scenario (one bare run each, no sandbox)."""
    from ..stats import render_stats, task_stats  # noqa: PLC0415
    from ..task import load_task  # noqa: PLC0415

    task = load_task(task_dir)
    n = 0 if no_run else len(task.meta["public"]) + len(task.meta["hidden"])
    with progress("reference runs", n, quiet or as_json) as bar:
        s = task_stats(task_dir, run=not no_run, progress=bar)
    if as_json:
        click.echo(canonjson.dumps(s), nl=False)
    else:
        click.echo(render_stats(s))
