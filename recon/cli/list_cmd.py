from __future__ import annotations

from pathlib import Path

import click

from .. import canonjson
from ..registry import BUILTIN_PACKAGE, install_command, missing_distributions
from ._common import load_registry, plugin_option


@click.command("list")
@plugin_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def list_cmd(plugins: tuple[Path, ...], as_json: bool) -> None:
    """List the registered oracles: name, version, domain, axes, outputs, whether their
    toolkit is installed here (and the command that installs it), source. Plugins that
    failed to load are listed as broken, with the error and the fix."""
    reg = load_registry(plugins)
    rows = []
    for o in reg:
        source = reg.source(o.name)
        missing = missing_distributions(o.dependencies)
        status = "ready" if not missing else (
            f"needs {', '.join(missing)}: {install_command(missing, source.startswith(f'built-in {BUILTIN_PACKAGE}.'))}")
        rows.append({"name": o.name, "version": o.version, "domain": o.domain, "axes": len(o.axes),
                     "outputs": len(o.outputs), "status": status, "missing": missing, "source": source})
    for b in reg.broken:
        rows.append({"name": b.name, "version": "-", "domain": "-", "axes": "-", "outputs": "-",
                     "status": f"broken: {b.error.message}" + (f" (fix: {b.error.hint})" if b.error.hint else ""),
                     "missing": [], "source": b.source})
    if as_json:
        click.echo(canonjson.dumps(rows), nl=False)
        return
    header = ("NAME", "VERSION", "DOMAIN", "AXES", "OUTPUTS", "SOURCE")
    table = [tuple(str(r[k]) for k in ("name", "version", "domain", "axes", "outputs", "source")) for r in rows]
    widths = [max(len(x) for x in col) for col in zip(header, *table)]
    for row in [header, *table]:
        click.echo("  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip())
    notes = [r for r in rows if r["status"] != "ready"]
    if notes:
        click.echo("")
        for r in notes:
            click.echo(f"{r['name']}: {r['status']}")
