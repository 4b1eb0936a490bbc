from __future__ import annotations

from pathlib import Path

import click

from .. import canonjson
from ._common import load_registry, plugin_option


@click.command("show")
@click.argument("name")
@plugin_option
@click.option("--json", "as_json", is_flag=True, help="Print the description as JSON.")
def show_cmd(name: str, plugins: tuple[Path, ...], as_json: bool) -> None:
    """Show oracle NAME: axes, outputs with tolerances, toolkit and docstring."""
    reg = load_registry(plugins)
    o = reg.get(name)
    d = o.describe()
    d["registered_by"] = reg.source(name)
    if as_json:
        click.echo(canonjson.dumps(d), nl=False)
        return
    click.echo(f"{o.name} {o.version}: {o.title}")
    click.echo(f"domain: {o.domain}    toolkit: {', '.join(o.toolkit)}")
    click.echo(f"source: {o.location}  ({d['registered_by']})")
    click.echo("\naxes:")
    for aname, ax in sorted(o.axes.items()):
        desc = ax.describe()
        kind = desc.pop("kind")
        click.echo(f"  {aname:<24} {kind:<7} {', '.join(f'{k}={v}' for k, v in desc.items())}")
    click.echo("\noutputs:")
    for oname, out in sorted(o.outputs.items()):
        click.echo(f"  {oname:<24} {out.kind:<9} {out.describe()}")
    if o.evidence:
        click.echo("\nevidence (public scenarios):")
        for fname, what in sorted(o.evidence.items()):
            click.echo(f"  {fname:<24} {what}")
    click.echo(f"\n{o.doc}")
