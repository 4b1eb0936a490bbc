from __future__ import annotations

from pathlib import Path

import click

from .. import canonjson
from ..errors import ValidationFailed
from ..runtimes import RUNTIME_NAMES, get_runtime
from ..validate import ValidationRow, validate
from ._common import info, load_registry, plugin_option, quiet_option


@click.command("validate")
@click.argument("task_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--runtime", type=click.Choice([r for r in RUNTIME_NAMES if r != "docker"]), default="auto", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option("--mutation-threshold", "threshold", type=click.FloatRange(0.0, 1.0), default=0.9, show_default=True,
              help="Share of non-equivalent mutants of the reference the hidden scenarios plus probes must kill.")
@click.option("--no-mutation", is_flag=True,
              help="Skip the mutation analysis (minutes the first time a task is validated; kept afterwards).")
@click.option("--workers", type=click.IntRange(min=1), default=None,
              help="Parallel runs and mutation workers (default: cores).")
@click.option("--no-fairness", is_flag=True,
              help="Skip the fairness audit of the oracle's baselines and independent programs.")
@plugin_option
@quiet_option
def validate_cmd(task_dir: Path, runtime: str, as_json: bool, threshold: float, no_mutation: bool,
                 workers: int | None, no_fairness: bool, plugins: tuple[Path, ...], quiet: bool) -> None:
    """Replay the reference, the untouched workspace and generated cheats on TASK_DIR,
    audit it for leaks, and fail unless every expectation holds."""
    rt = get_runtime(runtime)
    info(f"runtime: {rt.name}", quiet or as_json)

    def show(row: ValidationRow) -> None:
        if as_json:
            return
        reward = "-" if row.reward is None else f"{row.reward:.4f}"
        click.echo(f"{'ok ' if row.passed else 'FAIL'}  {row.name:<30} {row.expectation:<12} {reward:<8} {row.detail}")

    if not as_json:
        click.echo(f"{'':4}  {'check':<30} {'expect':<12} {'reward':<8} detail")
    rows, work = validate(task_dir, runtime=rt, registry=load_registry(plugins) if plugins else None, report=show,
                          mutation=None if no_mutation else threshold, fairness=not no_fairness, workers=workers,
                          log=lambda msg: info(f"  {msg}", quiet or as_json))
    failed = [r for r in rows if not r.passed]
    if as_json:
        click.echo(canonjson.dumps({"ok": not failed, "work": work, "runtime": rt.name, "rows": [
            {"name": r.name, "expectation": r.expectation, "reward": r.reward, "passed": r.passed, "detail": r.detail}
            for r in rows]}), nl=False)
    else:
        click.echo(f"work W = {work} lines (non-blank, non-comment lines of the reference solution)")
    if failed:
        raise ValidationFailed(f"{task_dir}: {len(failed)} check(s) failed: {', '.join(r.name for r in failed)}")
    if not as_json:
        # the verdict is the command's result: printed even with --quiet (which drops chatter only)
        click.echo(f"{task_dir} is valid")
