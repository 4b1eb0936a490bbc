from __future__ import annotations

import os
import time
from pathlib import Path

import click

from .._version import __version__
from ..errors import UsageError
from ..registry import BUILTIN_PACKAGE, install_command, missing_distributions
from ..runtimes import RUNTIME_NAMES
from ._common import info, load_registry, plugin_option, progress, quiet_option, sweep_options
from ..checkpoints import parse_interval
from ..dataset import build_all, build_one, write_manifest
from ..dataset import check_dataset_id
from ..sweep import load_spec


@click.command("build")
@click.argument("name", required=False)
@click.option("--all", "build_every", is_flag=True,
              help="Build every registered oracle (in parallel) and write OUT/dataset.json listing each task and its digest.")
@click.option("--variant", type=click.IntRange(1, 99),
              help="Build variant N (its own sweep seed, derived from the spec's) as NAME__NN.")
@click.option("--out", "out", type=click.Path(file_okay=False, path_type=Path), default=Path("tasks"),
              show_default=True, help="Folder that receives NAME/.")
@click.option("--base-image", "base_image", default=None, metavar="IMAGE",
              help="Base image of the agent and verifier images (default python:3.11-slim); pin a digest "
                   "(python@sha256:...) or name your own registry.")
@click.option("--disclose", "disclose", type=click.Choice(["recipe"]), default=None,
              help="Build the easier variant whose instruction adds the oracle's recipe (its docstring), "
                   "named NAME__recipe; by default the instruction says what the oracle computes, never how.")
@click.option("--evidence", "evidence", type=click.Choice(["outputs", "summary", "trace"]), default=None,
              help="How much of the pipeline the published evidence reveals (default: the oracle's level): outputs "
                   "(the results in another form), summary (per-stage aggregates) or trace (step-by-step internals).")
@click.option("--checkpoint-every", "checkpoint_every", default="30m", show_default=True, metavar="INTERVAL",
              help="Snapshot the agent's workspace this often during a Harbor trial (a sidecar the agent "
                   "cannot reach); the verifier grades every snapshot. 90s, 30m, 1h, or off.")
@click.option("--select", "select", type=click.Choice(["random", "stress"]), default=None,
              help="How scenarios are chosen (default: the sweep spec's, else stress when the oracle has a reference). "
                   "stress: hidden ones from a keyed pool, those that kill the most mutants of the reference, and "
                   "public ones that reveal what they test (minutes; kept for the next build); random: drawn.")
@click.option("--select-budget", "select_budget", type=click.FloatRange(0.0, 86400.0), default=None, metavar="SECONDS",
              help="Seconds a stress selection's mutant runs may take once its candidates are generated, counted "
                   "in its workers' CPU time (a loaded machine gets the same runs, later), and its revealed "
                   "programs' runs as long again, or the sweep spec's reveal_budget in proportion (default 75; 0: no "
                   "limit for either): then what is known decides.")
@click.option("--reveal", "reveal", multiple=True, type=click.Path(exists=True, path_type=Path),
              help="An independent program (reconstruct.py or its workspace folder; repeatable): whatever the hidden "
                   "scenarios catch in it, some published scenario must show (stress selection).")
@click.option("--runtime", type=click.Choice([r for r in RUNTIME_NAMES if r != "docker"]), default="auto",
              show_default=True,
              help="Where the revealed programs run (untrusted) while scenarios are chosen.")
@click.option("--dataset-name", default="recon", show_default=True,
              help="With --all: the dataset's name in OUT/registry.json (harbor run -d NAME@VERSION).")
@click.option("--dataset-version", default=None, help="With --all: its version (default: recon's version).")
@click.option("--registry-relative", is_flag=True,
              help="With --all: task paths in registry.json relative to OUT (then run Harbor from OUT).")
@sweep_options
@plugin_option
@quiet_option
def build_cmd(name: str | None, build_every: bool, variant: int | None, out: Path, base_image: str | None,
              disclose: str | None, evidence: str | None, checkpoint_every: str, select: str | None,
              select_budget: float | None, reveal: tuple[Path, ...], runtime: str, dataset_name: str,
              dataset_version: str | None,
              registry_relative: bool, n_public: int | None, n_hidden: int | None, seed: int | None,
              spec_path: Path | None, secret: str | None, workers: int | None, plugins: tuple[Path, ...],
              quiet: bool) -> None:
    """Package oracle NAME as a Harbor task in OUT/NAME (atomic, reproducible), or with
    --all every registered oracle plus a dataset manifest OUT/dataset.json. Prints the
    path of each task built on stdout."""
    if build_every == (name is not None):
        raise UsageError("give either an oracle NAME or --all", hint="e.g. `recon build lidar_icp` or `recon build --all`")
    if build_every and spec_path is not None:
        raise UsageError("--spec names one oracle's sweep and cannot be used with --all",
                         hint="build that oracle by name with --spec")

    interval = parse_interval(checkpoint_every)
    if build_every:
        check_dataset_id(dataset_name, dataset_version)
    t0 = time.perf_counter()
    reg = load_registry(plugins)
    workers = workers or os.cpu_count() or 1

    opts = {"n_public": n_public, "n_hidden": n_hidden, "seed": seed, "secret": secret, "base_image": base_image,
            "disclose": disclose, "evidence": evidence, "checkpoint_every": interval or 0.0, "select": select,
            "reveal": list(reveal), "select_budget": select_budget, "runtime": runtime,
            "log": (lambda msg: info(f"  {msg}", quiet))}
    if name is not None:
        o = reg.get(name)
        spec = load_spec(o, spec_path, n_public=n_public, n_hidden=n_hidden, seed=seed, select=select)
        label = f"build {name}" if variant is None else f"build {name} variant {variant}"
        if disclose:
            label += f" (disclosing the {disclose})"
        with progress(label, spec.n_public + spec.n_hidden, quiet) as bar:
            entry = build_one(reg, name, out, variant=variant, spec_path=spec_path, workers=workers, progress=bar,
                              more=bar.extend, **opts)
        info(f"built {entry.path} ({entry.n_public} public, {entry.n_hidden} hidden scenarios; seed {entry.seed}; "
             f"oracle {entry.oracle_seconds:.2f} s, wall {time.perf_counter() - t0:.2f} s; "
             f"hidden scenarios keyed by {entry.secret_source})", quiet)
        click.echo(str(entry.path))
        return
    if reveal:
        raise UsageError("--reveal names programs of one oracle and cannot be used with --all",
                         hint="build that oracle by name with --reveal")
    names = []
    for n in reg.names():
        missing = missing_distributions(reg.get(n).dependencies)
        if missing:
            builtin = reg.source(n).startswith(f"built-in {BUILTIN_PACKAGE}.")
            info(f"skipped {n}: needs {', '.join(missing)} ({install_command(missing, builtin)})")
        else:
            names.append(n)
    for b in reg.broken:
        info(f"skipped {b.name}: broken: {b.error.message}")
    if not names:
        raise UsageError("no registered oracle has its toolkit installed here", hint="see `recon list`")
    specs = [load_spec(reg.get(n), None, n_public=n_public, n_hidden=n_hidden, seed=seed) for n in names]
    total = sum(sp.n_public + sp.n_hidden for sp in specs)
    with progress(f"build {len(names)} tasks", total, quiet) as bar:
        entries = build_all(reg, out, names=names, workers=workers, progress=bar, more=bar.extend, variant=variant,
                            **opts)
    manifest = write_manifest(out, entries, dataset_name=dataset_name, dataset_version=dataset_version,
                              relative_paths=registry_relative)
    oracle_s = sum(e.oracle_seconds for e in entries)
    info(f"built {len(entries)} tasks into {out} (oracle {oracle_s:.2f} s, wall {time.perf_counter() - t0:.2f} s); "
         f"manifest {manifest}; Harbor registry {Path(manifest).with_name('registry.json')} "
         f"(harbor run -d {dataset_name}@{dataset_version or __version__} --registry-path ...)", quiet)
    for e in entries:
        click.echo(str(e.path))
