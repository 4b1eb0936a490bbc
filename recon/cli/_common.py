"""Options and helpers shared by the subcommands."""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Callable, Iterator, TypeVar
from contextlib import contextmanager

import click

from ..registry import Registry

F = TypeVar("F", bound=Callable[..., Any])


def plugin_option(fn: F) -> F:
    return click.option(
        "--plugin", "plugins", multiple=True, type=click.Path(dir_okay=False, path_type=Path),
        help="Load oracles from this Python file (repeatable).",
    )(fn)


def sweep_options(fn: F) -> F:
    """--public, --hidden, --seed, --spec, --secret, --workers: what shapes a sweep."""
    for option in reversed([
        click.option("--public", "n_public", type=int, help="Published scenarios (default 6 or the spec's; given here, exactly this many: the spec's cover is not added)."),
        click.option("--hidden", "n_hidden", type=int, help="Hidden scenarios (default 3 or the spec's)."),
        click.option("--seed", type=int, help="Sweep seed (default 0 or the spec's)."),
        click.option("--spec", "spec_path", type=click.Path(dir_okay=False, path_type=Path), help="Sweep spec TOML."),
        click.option("--secret", help="Build secret for hidden scenarios (default: $RECON_SECRET or the machine's)."),
        click.option("--workers", type=click.IntRange(min=1), default=None,
                     help="Processes to run the oracle on (default: cores)."),
    ]):
        fn = option(fn)
    return fn


def quiet_option(fn: F) -> F:
    return click.option("--quiet", "-q", is_flag=True, help="No progress bars or chatter.")(fn)


def load_registry(plugins: tuple[Path, ...] | list[Path]) -> Registry:
    return Registry.default(plugins)


def show_progress(quiet: bool) -> bool:
    return not quiet and sys.stderr.isatty() and os.environ.get("CI") is None


class Bar:
    """What a progress bar is told: ``bar(n)``, n more steps done; ``bar.extend(n)``, n
    more steps to do than first announced (a build's cover scenarios, known once its
    scenarios are chosen). Without a bar, both do nothing."""

    def __init__(self, bar: Any = None) -> None:
        self._bar = bar

    def __call__(self, n: int) -> None:
        if self._bar is not None:
            self._bar.update(n)

    def extend(self, n: int) -> None:
        if self._bar is not None and self._bar.length is not None:
            self._bar.length += n


@contextmanager
def progress(label: str, total: int, quiet: bool) -> Iterator[Bar]:
    """A progress bar on stderr when it is a terminal; a no-op otherwise."""
    if not show_progress(quiet) or total <= 1:
        yield Bar()
        return
    with click.progressbar(length=total, label=label, file=sys.stderr, show_pos=True) as bar:
        yield Bar(bar)


def info(message: str, quiet: bool = False) -> None:
    if not quiet:
        click.echo(message, err=True)
