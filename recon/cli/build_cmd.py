from __future__ import annotations

import os
import time
from pathlib import Path

import click

from ..build import build_task
from ._common import info, load_registry, plugin_option, progress, quiet_option


@click.command("build")
@click.argument("name")
@click.option("--out", "out", type=click.Path(file_okay=False, path_type=Path), default=Path("tasks"),
              show_default=True, help="Folder that receives NAME/.")
@click.option("--public", "n_public", type=int, help="Published scenarios (default 6 or the spec's).")
@click.option("--hidden", "n_hidden", type=int, help="Hidden scenarios (default 3 or the spec's).")
@click.option("--seed", type=int, help="Sweep seed (default 0 or the spec's).")
@click.option("--spec", "spec_path", type=click.Path(dir_okay=False, path_type=Path), help="Sweep spec TOML.")
@click.option("--secret", help="Build secret for hidden scenarios (default: $RECON_SECRET or the machine's).")
@click.option("--workers", type=int, default=None, help="Processes to run the oracle on (default: cores).")
@plugin_option
@quiet_option
def build_cmd(name: str, out: Path, n_public: int | None, n_hidden: int | None, seed: int | None,
              spec_path: Path | None, secret: str | None, workers: int | None, plugins: tuple[Path, ...],
              quiet: bool) -> None:
    """Package oracle NAME as a Harbor task in OUT/NAME (atomic, reproducible)."""
    t0 = time.perf_counter()
    reg = load_registry(plugins)
    o = reg.get(name)
    workers = workers or os.cpu_count() or 1
    from ..sweep import load_spec  # noqa: PLC0415

    spec = load_spec(o, spec_path, n_public=n_public, n_hidden=n_hidden, seed=seed)
    with progress(f"build {name}", spec.n_public + spec.n_hidden, quiet) as bar:
        result = build_task(reg, name, out, n_public=n_public, n_hidden=n_hidden, seed=seed, spec_path=spec_path,
                            secret=secret, workers=workers, progress=bar)
    info(f"built {result.path} ({result.spec.n_public} public, {result.spec.n_hidden} hidden scenarios; "
         f"oracle {result.oracle_seconds:.2f} s, wall {time.perf_counter() - t0:.2f} s; "
         f"hidden scenarios keyed by {result.secret_source})", quiet)
    click.echo(str(result.path))
