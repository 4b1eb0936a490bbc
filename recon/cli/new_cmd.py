from __future__ import annotations

import os
from pathlib import Path

import click

from ..scaffold import default_dir, scaffold
from ._common import load_registry


@click.command("new")
@click.argument("name")
@click.option("--dir", "directory", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder to create (default: ./recon-NAME); must not exist or be empty.")
def new_cmd(name: str, directory: Path | None) -> None:
    """Scaffold a plugin package for a new oracle NAME: pyproject.toml with the
    `recon.oracles` entry point, a commented @oracle example with its reference program,
    pytest tests and a README. It builds and validates as it is once installed."""
    result = scaffold(name, directory, registry=load_registry(()))
    shown = directory if directory is not None else default_dir(name)
    click.echo(f"created {shown}{os.sep} (oracle {result.name}, package {result.package}, distribution {result.dist})")
    for rel in result.files:
        click.echo(f"  {rel}")
    steps = [
        (f"pip install -e {shown}", f"registers {name} with recon (see `recon list`)"),
        (f"pytest {shown}", "runs the oracle's own tests"),
        (f"recon build {name}", f"packages the task into tasks/{name}/"),
        (f"recon validate tasks/{name}", "proves the task sound"),
    ]
    width = max(len(cmd) for cmd, _ in steps)
    click.echo("next:")
    for cmd, why in steps:
        click.echo(f"  {cmd.ljust(width)}  # {why}")
