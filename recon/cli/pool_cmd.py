from __future__ import annotations

from pathlib import Path

import click

from .. import canonjson
from ..runtimes import RUNTIME_NAMES
from ._common import info, load_registry, plugin_option, progress, quiet_option
from ..grader import resolve_oracle
from ..mutation.pool import run_program_on_pool
from ..runtimes import get_runtime
from ..runtimes.base import Limits
from ..sweep import SweepSpec, load_spec
from ..task import load_task


@click.command("pool")
@click.argument("target")
@click.option("--program", required=True, type=click.Path(exists=True, path_type=Path),
              help="A reconstruct.py-style program (a file, or a workspace folder holding reconstruct.py).")
@click.option("--size", type=click.IntRange(1, 100_000), default=50, show_default=True,
              help="Scenarios in the pool.")
@click.option("--seed", "pool_seed", type=click.IntRange(min=0), default=0, show_default=True, help="Seed of the pool.")
@click.option("--runtime", type=click.Choice([r for r in RUNTIME_NAMES if r != "docker"]), default="auto",
              show_default=True, help="Sandbox the program runs in (it is untrusted).")
@click.option("--timeout", type=click.FloatRange(0.1, 3600.0), help="Seconds per run (default: the oracle's).")
@click.option("--spec", "spec_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Sweep spec TOML of an oracle NAME (narrowed axes).")
@click.option("--workers", type=click.IntRange(min=1), help="Parallel runs (default: cores).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@plugin_option
@quiet_option
@click.pass_context
def pool_cmd(ctx: click.Context, target: str, program: Path, size: int, pool_seed: int, runtime: str,
             timeout: float | None, spec_path: Path | None, workers: int | None, as_json: bool,
             plugins: tuple[Path, ...], quiet: bool) -> None:
    """Run PROGRAM on a pool of generated scenarios of TARGET (an oracle NAME or a built
    TASK_DIR) and report, per output field, the failure rate and the worst deviation in
    units of its tolerance, with the scenarios where it fails.

    An independent correct implementation should pass everywhere and a wrong one should
    fail often: a wrong program's low failure rate shows a tolerance too weak to catch
    it. Exit 0 when every field of every scenario is within tolerance, 1 otherwise."""

    app_dir = None
    if Path(target).is_dir():

        task = load_task(target)
        oracle = resolve_oracle(task, load_registry(plugins) if plugins else None)
        meta = task.meta["spec"]
        spec = SweepSpec(n_public=meta["n_public"], n_hidden=meta["n_hidden"], seed=meta["seed"],
                         axes=meta.get("axes", {}))
        limits = task.limits
        app_dir = task.app_dir
    else:
        oracle = load_registry(plugins).get(target)
        spec = load_spec(oracle, spec_path)
        limits = Limits(wall=oracle.timeout, cpu=int(max(oracle.timeout * 2, 10)))
    if timeout is not None:
        limits = Limits(**{**limits.to_json(), "wall": float(timeout), "cpu": int(max(2 * timeout, 10))})
    rt = get_runtime(runtime)
    info(f"runtime: {rt.name}", quiet or as_json)
    for w in rt.warnings():
        info(f"warning: {w}", quiet or as_json)
    with progress(f"pool {oracle.name}", size, quiet or as_json) as bar:
        report = run_program_on_pool(oracle, spec, program, rt, size=size, seed=pool_seed, limits=limits,
                                     workers=workers, app_dir=app_dir, progress=bar)
    if as_json:
        click.echo(canonjson.dumps(report.to_json()), nl=False)
    else:
        click.echo(report.render())
    if not report.ok:
        ctx.exit(1)
