"""The ``recon`` command line. One module per subcommand, imported only when used,
so ``recon --help`` stays cheap and never imports a science library."""
from __future__ import annotations

import importlib
import importlib.util
import sys
from typing import Any

import click

from ..errors import ReconError

# name -> (module, attribute); help strings live here so --help imports nothing else.
COMMANDS: dict[str, tuple[str, str]] = {
    "list": ("recon.cli.list_cmd", "list_cmd"),
    "show": ("recon.cli.show_cmd", "show_cmd"),
    "sweep": ("recon.cli.sweep_cmd", "sweep_cmd"),
    "build": ("recon.cli.build_cmd", "build_cmd"),
    "grade": ("recon.cli.grade_cmd", "grade_cmd"),
    "validate": ("recon.cli.validate_cmd", "validate_cmd"),
    "run": ("recon.cli.run_cmd", "run_cmd"),
    "new": ("recon.cli.new_cmd", "new_cmd"),
    "stats": ("recon.cli.stats_cmd", "stats_cmd"),
    "report": ("recon.cli.report_cmd", "report_cmd"),
    "watch": ("recon.cli.watch_cmd", "watch_cmd"),
    "results": ("recon.cli.results_cmd", "results_cmd"),
    "mutate": ("recon.cli.mutate_cmd", "mutate_cmd"),
    "pool": ("recon.cli.pool_cmd", "pool_cmd"),
    "audit": ("recon.cli.audit_cmd", "audit_cmd"),
}
SHORT_HELP = {
    "list": "List the registered oracles.",
    "show": "Show an oracle's public declaration, then its private recipe.",
    "sweep": "Run an oracle over its public and hidden scenarios.",
    "build": "Package an oracle as a Harbor task.",
    "grade": "Grade a workspace on a built task's six-rung ladder.",
    "validate": "Prove a built task is sound (reference 1.0, cheats below 5/6, baselines, mutants, no leaks).",
    "run": "Replay a task end to end with the oracle or nop agent.",
    "new": "Scaffold a new oracle plugin package.",
    "stats": "Work, stages, baselines, mutation score, size and timings of a built task.",
    "report": "HTML report and figures from gradings and histories.",
    "watch": "Grade a live workspace on a schedule, appending to a history.",
    "results": "Benchmark tables and figures from Harbor's job folders.",
    "mutate": "Mutation analysis: which wrong programs a task's scenarios catch.",
    "pool": "Run any program on a pool of generated scenarios; failure rate per field.",
    "audit": "Fairness audit: hidden-only failures of independent programs (files or Harbor job folders).",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return [name for name in COMMANDS if self._available(name)]

    @staticmethod
    def _available(name: str) -> bool:
        return importlib.util.find_spec(COMMANDS[name][0]) is not None

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS or not self._available(cmd_name):
            return None
        module, attr = COMMANDS[cmd_name]
        cmd = getattr(importlib.import_module(module), attr)
        if not isinstance(cmd, click.Command):  # pragma: no cover - programming error
            raise RuntimeError(f"{module}.{attr} is not a click command")
        return cmd

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, SHORT_HELP[name]) for name in self.list_commands(ctx)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except ReconError as exc:
            click.echo(f"error: {exc.render()}", err=True)
            ctx.exit(exc.exit_code)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="recon-tasks", prog_name="recon")
def cli() -> None:
    """recon turns a parameterized reference oracle into a Harbor task whose hidden
    scenarios an agent must reproduce, and grades submissions on a six-rung ladder.

    Start with `recon list`, `recon build chem_smarts`, then `recon validate tasks/chem_smarts`.
    """


def main(argv: list[str] | None = None) -> None:
    cli.main(args=argv, prog_name="recon")


if __name__ == "__main__":  # pragma: no cover
    main(sys.argv[1:])
