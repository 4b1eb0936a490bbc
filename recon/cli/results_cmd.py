from __future__ import annotations

from pathlib import Path

import click

from ._common import info, progress, quiet_option
from ..results import write_results


@click.command("results")
@click.argument("jobs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--out", "out", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Folder that receives results.html, its PNG figures, results.json and the CSV files.")
@click.option("--title", default="recon benchmark results", show_default=True, help="Title of the page.")
@click.option("--no-figures", "no_figures", is_flag=True, help="Tables, CSV and JSON only (no matplotlib).")
@quiet_option
def results_cmd(jobs: tuple[Path, ...], out: Path, title: str, no_figures: bool, quiet: bool) -> None:
    """Benchmark results from Harbor's job folders.

    JOBS are folders written by `harbor run ... -o JOBS`: a job folder, a folder of job
    folders, or single trial folders. Trials are grouped by model (agent and model) and
    task. Writes OUT/results.html with figures (reward over time, solves over time,
    dense vs binary per task, models, final rungs), OUT/results.json and CSV files; the
    same job folders always give the same JSON and CSV bytes.

    Failed and missing trials are counted and listed with their reason: a trial whose
    verifier never ran counts as R = 0; one whose verifier left no valid reward, or with
    no readable result.json, is left out of means. Prints the page's path."""

    with progress("drawing figures", 0 if no_figures else 5, quiet) as bar:
        rep = write_results(jobs, out, title=title, figures=not no_figures, progress=bar)
    ov = rep.doc["overall"]
    dense = "-" if ov["dense_mean"] is None else f"{ov['dense_mean']:.3f}"
    binary = "-" if ov["binary_mean"] is None else f"{ov['binary_mean']:.3f}"
    info(f"{ov['trials']} trial(s) ({ov['scored']} scored, {ov['failed']} failed, {ov['missing']} missing"
         f"{', ' + str(ov['duplicates']) + ' duplicate(s) ignored' if ov['duplicates'] else ''}) of {ov['models']} "
         f"model(s) on {ov['tasks']} task(s) from {ov['jobs']} job folder(s); dense mean R {dense}, binary {binary}",
         quiet)
    click.echo(str(rep.html))
