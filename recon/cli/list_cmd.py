from __future__ import annotations

from pathlib import Path

import click

from .. import canonjson
from ._common import load_registry, plugin_option


@click.command("list")
@plugin_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def list_cmd(plugins: tuple[Path, ...], as_json: bool) -> None:
    """List the registered oracles: name, version, domain, number of axes, source."""
    reg = load_registry(plugins)
    rows = [(o.name, o.version, o.domain, len(o.axes), len(o.outputs), reg.source(o.name)) for o in reg]
    if as_json:
        click.echo(canonjson.dumps([{"name": r[0], "version": r[1], "domain": r[2], "axes": r[3], "outputs": r[4], "source": r[5]} for r in rows]), nl=False)
        return
    header = ("NAME", "VERSION", "DOMAIN", "AXES", "OUTPUTS", "SOURCE")
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    for row in [header, *rows]:
        click.echo("  ".join(str(v).ljust(w) for v, w in zip(row, widths)).rstrip())
