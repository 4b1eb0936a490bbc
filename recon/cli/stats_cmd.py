from __future__ import annotations

from pathlib import Path

import click

from .. import canonjson
from ..runtimes import RUNTIME_NAMES
from ._common import info, load_registry, plugin_option, progress, quiet_option
from ..runtimes import get_runtime
from ..stats import render_stats, task_stats
from ..task import load_task


@click.command("stats")
@click.argument("task_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the statistics as JSON on stdout.")
@click.option("--no-run", "no_run", is_flag=True, help="Do not run the reference solution (no timings).")
@click.option("--baselines", "with_baselines", is_flag=True,
              help="Also grade every baseline the oracle ships (one full grading each; needs the oracle).")
@click.option("--mutation", "with_mutation", is_flag=True,
              help="Also show the mutation score and hidden-only kills (the analysis recon validate ran, or a new one).")
@click.option("--runtime", type=click.Choice([r for r in RUNTIME_NAMES if r != "docker"]), default="auto",
              show_default=True, help="Runtime that grades the baselines.")
@plugin_option
@quiet_option
def stats_cmd(task_dir: Path, as_json: bool, no_run: bool, with_baselines: bool, with_mutation: bool, runtime: str,
              plugins: tuple[Path, ...], quiet: bool) -> None:
    """Statistics of the built task TASK_DIR: work W (non-blank, non-comment lines of the
    reference solution), the recipe's number of stages, what the build disclosed,
    instruction words, evidence size, N/K, axes and outputs, and the reference solution's
    run time per scenario (one bare run each, no sandbox). --baselines adds each shipped
    baseline's reward R (a baseline at 1.0 means the instruction gives the recipe away)."""

    task = load_task(task_dir)
    rt = get_runtime(runtime) if with_baselines else runtime
    if with_baselines:
        info(f"runtime: {getattr(rt, 'name', runtime)} (baselines)", quiet or as_json)
    n = 0 if no_run else len(task.meta["public"]) + len(task.meta["hidden"])
    with progress("reference runs", n, quiet or as_json) as bar:
        s = task_stats(task_dir, run=not no_run, baselines=with_baselines, mutation=with_mutation, runtime=rt,
                       registry=load_registry(plugins) if plugins else None, progress=bar)
    if as_json:
        click.echo(canonjson.dumps(s), nl=False)
    else:
        click.echo(render_stats(s))
