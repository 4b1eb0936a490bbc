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
    """Show oracle NAME: what the agent reads (description, axes and outputs with their
    meanings and tolerances, inputs, evidence), then what stays private (the recipe,
    its stages, the baselines)."""
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
    click.echo("\n== public: what the agent reads ==")
    click.echo(f"\n{o.description}")
    click.echo("\naxes:")
    for aname, ax in sorted(o.axes.items()):
        desc = ax.describe()
        kind = desc.pop("kind")
        click.echo(f"  {aname:<24} {kind:<7} {', '.join(f'{k}={v}' for k, v in desc.items())}")
        click.echo(f"  {'':<24} {ax.doc}")
    click.echo("\noutputs:")
    for oname, out in sorted(o.outputs.items()):
        click.echo(f"  {oname:<24} {out.kind:<9} {out.describe()}")
        click.echo(f"  {'':<24} {out.doc}")
    if o.input_docs:
        click.echo("\ninputs (every scenario):")
        for iname, what in sorted(o.input_docs.items()):
            click.echo(f"  {iname:<24} {what}")
    if o.evidence:
        click.echo(f"\nevidence (public scenarios; a default build publishes level {o.evidence_level}):")
        for fname, what in sorted(o.evidence.items()):
            click.echo(f"  {fname:<24} [{o.evidence_reveals.get(fname, 'summary')}] {what}")
    click.echo(f"\n== private: the recipe (disclosed only by `recon build {o.name} --disclose recipe`) ==")
    if o.stages:
        click.echo(f"\nstages: {'; '.join(o.stages)}")
    click.echo(f"\n{o.recipe}")
    baselines = ", ".join(b.name for b in o.baselines) or "none"
    click.echo(f"\nbaselines: {baselines}")
