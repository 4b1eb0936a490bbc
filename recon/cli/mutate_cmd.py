from __future__ import annotations

import sys
from pathlib import Path

import click

from .. import canonjson
from ..errors import UsageError, ValidationFailed
from ._common import info, load_registry, plugin_option, quiet_option, sweep_options


@click.command("mutate")
@click.argument("target")
@click.option("--pool", "pool_size", type=click.IntRange(0, 100_000), default=None,
              help="Generated scenarios a mutant must survive to count as equivalent (default 200).")
@click.option("--pool-seed", type=click.IntRange(min=0), default=0, show_default=True, help="Seed of the pool.")
@click.option("--nonces", type=click.IntRange(0, 100), default=None,
              help="Probe draws that hidden + probes is averaged over (default: 2 to 5, as many as keep the "
                   "probes within about 80 scenarios).")
@click.option("--probes", type=click.IntRange(0, 100), help="Probes per grading (default: the task's, 3).")
@click.option("--search", "search_examples", type=click.IntRange(min=0), default=None,
              help="Targeted-search examples per survivor of the pool (default 40; 0: no search).")
@click.option("--max-per-line", type=click.IntRange(min=0), default=None,
              help="At most this many mutants per source line (default 6; 0: no cap).")
@click.option("--max-mutants", type=click.IntRange(min=0), default=None,
              help="Analyse a deterministic sample of this many mutants (default 120; 0: all).")
@click.option("--budget", type=click.FloatRange(min=0.0), default=None,
              help="Seconds from the start (the scenario selection included) after which no pool or "
                   "search run starts, counted in the workers' CPU time once they run (a loaded machine "
                   "gets the same runs, later); mutants still alive are reported undecided (default 280; "
                   "0: no limit).")
@click.option("--operator", "operators", multiple=True,
              help="Only these mutation operators (repeatable; see --json for the list).")
@click.option("--select", type=click.Choice(["random", "stress"]),
              help="Scenario selection of an oracle NAME (default: its spec's, else stress when it has a reference).")
@click.option("--fail-under", type=click.FloatRange(0.0, 1.0),
              help="Exit 1 when hidden + probes kill less than this share of the non-equivalent mutants.")
@click.option("--json", "as_json", is_flag=True, help="Print the full report as JSON.")
@click.option("--out", "out", type=click.Path(file_okay=False, path_type=Path), help="Write OUT/mutation.json.")
@sweep_options
@plugin_option
@quiet_option
def mutate_cmd(target: str, pool_size: int | None, pool_seed: int, nonces: int | None, probes: int | None,
               search_examples: int | None, max_per_line: int | None, max_mutants: int | None, budget: float | None,
               operators: tuple[str, ...], select: str | None, fail_under: float | None, as_json: bool,
               out: Path | None, n_public: int | None, n_hidden: int | None, seed: int | None,
               spec_path: Path | None, secret: str | None, workers: int | None, plugins: tuple[Path, ...],
               quiet: bool) -> None:
    """Mutation analysis of TARGET's scenarios: an oracle NAME (the scenarios a build
    would give it) or a built TASK_DIR (its own public and hidden scenarios).

    Mutants of the oracle's reference.py run on the public, hidden and probe scenarios
    and on a pool of generated ones; a mutant is killed when a field fails the task's
    comparison or when it breaks the contract (crash, timeout, wrong kind). Survivors
    of the pool are searched for a killing scenario before they count as equivalent.
    Prints killed-by-public / hidden / hidden + probes, the survivors and the
    hidden-only kills (graded behaviour no public scenario shows)."""
    from .. import mutation as mutate  # noqa: PLC0415 - start-up: only `recon mutate` needs it
    from ..mutation.operators import OPERATORS  # noqa: PLC0415 - start-up: only `recon mutate` needs it

    is_task = Path(target).is_dir()
    if is_task and any(v is not None for v in (n_public, n_hidden, seed, spec_path, secret, select)):
        raise UsageError(f"{target} is a built task: its scenarios are fixed",
                         hint="drop --public/--hidden/--seed/--spec/--secret/--select, or give an oracle name")
    unknown = sorted(set(operators) - set(OPERATORS))
    if unknown:
        raise UsageError(f"unknown mutation operator(s) {', '.join(unknown)}", hint=f"choose from {', '.join(OPERATORS)}")
    registry = load_registry(plugins) if (plugins or not is_task) else None

    def log(msg: str) -> None:
        info(msg, quiet or as_json)

    report = mutate.mutation_analysis(
        target, registry=registry, spec_path=spec_path, secret=secret, select=select, n_public=n_public,
        n_hidden=n_hidden, seed=seed,
        pool_size=mutate.DEFAULT_POOL if pool_size is None else pool_size, pool_seed=pool_seed,
        nonces=nonces, probes=probes,
        search_examples=mutate.DEFAULT_SEARCH if search_examples is None else search_examples,
        max_per_line=mutate.DEFAULT_MAX_PER_LINE if max_per_line is None else (max_per_line or None),
        max_mutants=mutate.DEFAULT_MAX_MUTANTS if max_mutants is None else (max_mutants or None),
        budget=mutate.DEFAULT_BUDGET if budget is None else (budget or None), operators=operators or None,
        threshold=mutate.DEFAULT_THRESHOLD if fail_under is None else fail_under, workers=workers, log=log)
    if out is not None:
        path = report.write(out)
        log(f"wrote {path}")
    if as_json:
        click.echo(canonjson.dumps(report.to_json()), nl=False)
    else:
        click.echo(report.render())
    sys.stdout.flush()
    if fail_under is not None and not report.passed:
        raise ValidationFailed(f"{report.label}: hidden + probes kill {100 * report.score:.1f}% of the non-equivalent "
                               f"mutants, below --fail-under {100 * fail_under:.1f}%",
                               hint="select scenarios that kill more (select = \"stress\" in the sweep spec), "
                                    "or add hidden scenarios")
