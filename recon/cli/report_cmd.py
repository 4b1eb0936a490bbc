from __future__ import annotations

from pathlib import Path

import click

from ._common import info, progress, quiet_option
from ..report import build_report


@click.command("report")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--out", "out", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Folder that receives report.html and its PNG figures.")
@click.option("--title", default="recon grading report", show_default=True, help="Title of the page.")
@quiet_option
def report_cmd(paths: tuple[Path, ...], out: Path, title: str, quiet: bool) -> None:
    """Write OUT/report.html and PNG figures from gradings and histories.

    PATHS are grading JSON files (grading.json, `recon grade --json` output), history
    files (`--history` .jsonl) or folders searched for both. A submission is a (task,
    workspace label) pair; its latest grading is where it landed, and a submission graded
    several times is plotted as a checkpoint series. Prints the page's path."""

    with progress("drawing figures", 4, quiet) as bar:
        rep = build_report(paths, out, title=title, progress=bar)
    info(f"{rep.records} grading(s), {rep.submissions} submission(s), {len(rep.tasks)} task(s); "
         f"figures: {', '.join(f.name for f in rep.figures)}", quiet)
    click.echo(str(rep.html))
