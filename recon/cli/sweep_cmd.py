from __future__ import annotations

import os
from pathlib import Path

import click

from .. import canonjson
from ..fsutil import atomic_directory
from ..mutation.selection import select_scenarios
from ..sweep import build_secret, derive_task_key, load_spec, run_scenarios
from ._common import info, load_registry, plugin_option, progress, quiet_option, sweep_options

MARKER = "sweep.json"


@click.command("sweep")
@click.argument("name")
@click.option("--out", "out", required=True, type=click.Path(file_okay=False, path_type=Path), help="Folder to write.")
@click.option("--select", "select", type=click.Choice(["random", "stress"]), default=None,
              help="How scenarios are chosen, as for `recon build` (default: the sweep spec's, else stress when "
                   "the oracle has a reference).")
@sweep_options
@plugin_option
@quiet_option
def sweep_cmd(name: str, out: Path, select: str | None, n_public: int | None, n_hidden: int | None, seed: int | None,
              spec_path: Path | None, secret: str | None, workers: int | None, plugins: tuple[Path, ...], quiet: bool) -> None:
    """Run oracle NAME over the scenarios its build would choose: OUT/public_i/ (scenario.json, oracle_output.json,
    inputs, evidence) and OUT/hidden/hidden_i/ (no evidence)."""
    reg = load_registry(plugins)
    o = reg.get(name)
    spec = load_spec(o, spec_path, n_public=n_public, n_hidden=n_hidden, seed=seed, select=select)
    key = derive_task_key(build_secret(secret)[0], o, spec)
    workers = workers or os.cpu_count() or 1
    with atomic_directory(out, marker=MARKER) as tmp:
        sel = select_scenarios(o, spec, key, workers=workers, progress=None if quiet else info)
        public, hidden = sel.public, sel.hidden
        jobs = [(sc, tmp / sc.id, True) for sc in public] + [(sc, tmp / "hidden" / sc.id, False) for sc in hidden]
        with progress(f"sweep {name}", len(jobs), quiet) as bar:
            runs = run_scenarios(o, jobs, workers=workers, progress=bar)
        canonjson.write(tmp / MARKER, {
            "oracle": o.name, "oracle_version": o.version, "spec": spec.to_json(),
            "public": [sc.id for sc in public], "hidden": [sc.id for sc in hidden],
        })
    total = sum(r.seconds for r in runs)
    info(f"wrote {len(public)} public and {len(hidden)} hidden scenarios of {name} to {out} "
         f"(oracle time {total:.2f} s)", quiet)
