from __future__ import annotations

from pathlib import Path

import click

from .. import canonjson
from ..runtimes import RUNTIME_NAMES
from ._common import info, load_registry, plugin_option, progress, quiet_option
from ..grader import render_table
from ..ladder import load_ladder
from ..run import choose_runtime, run_task
from ..task import load_task


@click.command("run")
@click.argument("task_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--agent", type=click.Choice(["oracle", "nop"]), required=True,
              help="oracle: install the reference solution with solution/solve.sh; nop: touch nothing.")
@click.option("--runtime", type=click.Choice(list(RUNTIME_NAMES)), default="auto", show_default=True,
              help="docker runs the task as Harbor does; bwrap/local run the agent phase on a copy here.")
@click.option("--json", "as_json", is_flag=True, help="Print the run and its grading as JSON on stdout.")
@click.option("--out", "out", type=click.Path(file_okay=False, path_type=Path),
              help="Write reward.txt, reward.json and grading.json here.")
@click.option("--nonce", help="Replay a grading: the probes are drawn from this nonce.")
@click.option("--probes", type=int, help="Fresh probe scenarios (default: the task's).")
@plugin_option
@quiet_option
def run_cmd(task_dir: Path, agent: str, runtime: str, as_json: bool, out: Path | None, nonce: str | None,
            probes: int | None, plugins: tuple[Path, ...], quiet: bool) -> None:
    """Run a scripted agent on the built task TASK_DIR, then grade what it left.

    `--agent oracle` installs the reference solution, `--agent nop` changes nothing:
    a sound task gives 1.0 and 0, on every runtime.
    """

    task = load_task(task_dir)
    name, reason = choose_runtime(runtime)
    info(f"runtime: {name}" + (f" (auto: {reason})" if reason else ""), quiet)
    meta = task.meta
    ladder = load_ladder(meta.get("ladder", "six_rung"), [task.tests / "ladders"])
    n = ladder.public_runs(len(meta["public"])) + len(meta["hidden"]) + int(meta.get("probes", 3) if probes is None else probes)
    # Without --plugin the grader loads only the task's own oracle, so an unrelated broken
    # plugin cannot stop a run; the docker verifier carries its own copy anyway.
    registry = load_registry(plugins) if plugins and name != "docker" else None
    with progress(f"{agent} on {name}", n, quiet or as_json or name == "docker") as bar:
        report = run_task(task_dir, agent, runtime=name, nonce=nonce, probes=probes, out_dir=out,
                          registry=registry, log=lambda msg: info(msg, quiet), progress=bar)
    report.reason = reason
    for note in report.notes:
        info(f"note: {note}", quiet)
    if as_json:
        click.echo(canonjson.dumps(report.to_json()), nl=False)
        return
    if report.grading is not None:

        click.echo(render_table(report.grading))
    else:
        tail = [ln for ln in report.verifier_log.strip().splitlines() if ln.strip()][-5:]
        click.echo("the verifier wrote no grading.json; the end of its output:")
        for ln in tail:
            click.echo(f"  {ln}")
    click.echo(f"{agent} agent on {name}: reward {report.reward_text}")
