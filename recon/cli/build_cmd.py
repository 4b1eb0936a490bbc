from __future__ import annotations

import os
import time
from pathlib import Path

import click

from ..errors import UsageError
from ._common import info, load_registry, plugin_option, progress, quiet_option, sweep_options


@click.command("build")
@click.argument("name", required=False)
@click.option("--all", "build_every", is_flag=True,
              help="Build every registered oracle (in parallel) and write OUT/dataset.json listing each task and its digest.")
@click.option("--variant", type=click.IntRange(1, 99),
              help="Build variant N (its own sweep seed, derived from the spec's) as NAME__NN.")
@click.option("--out", "out", type=click.Path(file_okay=False, path_type=Path), default=Path("tasks"),
              show_default=True, help="Folder that receives NAME/.")
@sweep_options
@plugin_option
@quiet_option
def build_cmd(name: str | None, build_every: bool, variant: int | None, out: Path, n_public: int | None,
              n_hidden: int | None, seed: int | None, spec_path: Path | None, secret: str | None,
              workers: int | None, plugins: tuple[Path, ...], quiet: bool) -> None:
    """Package oracle NAME as a Harbor task in OUT/NAME (atomic, reproducible), or with
    --all every registered oracle plus a dataset manifest OUT/dataset.json. Prints the
    path of each task built on stdout."""
    if build_every == (name is not None):
        raise UsageError("give either an oracle NAME or --all", hint="e.g. `recon build lidar_icp` or `recon build --all`")
    if build_every and spec_path is not None:
        raise UsageError("--spec names one oracle's sweep and cannot be used with --all",
                         hint="build that oracle by name with --spec")
    t0 = time.perf_counter()
    reg = load_registry(plugins)
    workers = workers or os.cpu_count() or 1
    from ..dataset import build_all, build_one, write_manifest  # noqa: PLC0415
    from ..sweep import load_spec  # noqa: PLC0415

    opts = {"n_public": n_public, "n_hidden": n_hidden, "seed": seed, "secret": secret}
    if name is not None:
        o = reg.get(name)
        spec = load_spec(o, spec_path, n_public=n_public, n_hidden=n_hidden, seed=seed)
        label = f"build {name}" if variant is None else f"build {name} variant {variant}"
        with progress(label, spec.n_public + spec.n_hidden, quiet) as bar:
            entry = build_one(reg, name, out, variant=variant, spec_path=spec_path, workers=workers, progress=bar, **opts)
        info(f"built {entry.path} ({entry.n_public} public, {entry.n_hidden} hidden scenarios; seed {entry.seed}; "
             f"oracle {entry.oracle_seconds:.2f} s, wall {time.perf_counter() - t0:.2f} s; "
             f"hidden scenarios keyed by {entry.secret_source})", quiet)
        click.echo(str(entry.path))
        return
    names = reg.names()
    specs = [load_spec(reg.get(n), None, n_public=n_public, n_hidden=n_hidden, seed=seed) for n in names]
    total = sum(sp.n_public + sp.n_hidden for sp in specs)
    with progress(f"build {len(names)} tasks", total, quiet) as bar:
        entries = build_all(reg, out, names=names, workers=workers, progress=bar, variant=variant, **opts)
    manifest = write_manifest(out, entries)
    oracle_s = sum(e.oracle_seconds for e in entries)
    info(f"built {len(entries)} tasks into {out} (oracle {oracle_s:.2f} s, wall {time.perf_counter() - t0:.2f} s); "
         f"manifest {manifest}", quiet)
    for e in entries:
        click.echo(str(e.path))
