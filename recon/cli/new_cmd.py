from __future__ import annotations

import os
from pathlib import Path

import click

from ..errors import PluginError
from ..registry import Registry
from ..scaffold import default_dir, scaffold
from ._common import info


@click.command("new")
@click.argument("name")
@click.option("--dir", "directory", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder to create (default: ./recon-NAME); must not exist or be empty.")
def new_cmd(name: str, directory: Path | None) -> None:
    """Scaffold a plugin package for a new oracle NAME: pyproject.toml with the
    `recon.oracles` entry point, a commented @oracle example with its reference program,
    pytest tests and a README. It builds and validates as it is once installed."""
    registry = Registry()
    registry.load_builtins()
    try:
        registry.load_entry_points()
    except PluginError as exc:
        # A broken plugin elsewhere must not stop anyone from starting a new one; say
        # what could not be checked instead of failing.
        info(f"warning: {exc.message}\n  so {name!r} was checked against the built-in oracles and the plugins "
             "loaded before that one only")
    result = scaffold(name, directory, registry=registry)
    shown = directory if directory is not None else default_dir(name)
    click.echo(f"created {shown}{os.sep} (oracle {result.name}, package {result.package}, distribution {result.dist})")
    for rel in result.files:
        click.echo(f"  {rel}")
    # pip reads a bare word as a package name, never as a folder: spell it as a path.
    as_path = str(shown) if shown.is_absolute() or str(shown).startswith(".") else f".{os.sep}{shown}"
    steps = [
        (f"pip install -e '{as_path}[test]'", f"registers {name} with recon (see `recon list`), installs pytest"),
        (f"pytest {shown}", "runs the oracle's own tests"),
        (f"recon build {name}", f"packages the task into tasks/{name}/"),
        (f"recon validate tasks/{name}", "proves the task sound"),
    ]
    width = max(len(cmd) for cmd, _ in steps)
    click.echo("next:")
    for cmd, why in steps:
        click.echo(f"  {cmd.ljust(width)}  # {why}")
