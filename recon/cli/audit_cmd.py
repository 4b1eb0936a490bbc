from __future__ import annotations

import re
from pathlib import Path

import click

from .. import canonjson
from .._harborjobs import load_trials
from ..audit import DEFAULT_NONCES, DEFAULT_POOL, audit_programs
from ..errors import UsageError, ValidationFailed
from ..grader import RunMemo, resolve_oracle
from ..runtimes import RUNTIME_NAMES, get_runtime
from ..task import load_task
from ._common import info, load_registry, plugin_option, quiet_option


def job_programs(jobs: tuple[Path, ...], task_id: str) -> list[tuple[str, Path]]:
    """The final workspace and every checkpoint snapshot of each trial of ``task_id`` in
    Harbor job folders (artifacts mirror their source paths under the trial's
    ``artifacts/``)."""
    found: list[tuple[str, Path]] = []
    loaded = load_trials(list(jobs))
    for trial in loaded.trials:
        if trial.task not in (task_id, task_id.split("/", 1)[-1]):
            continue
        art = trial.path / "artifacts"
        final = art / "app" / "workspace"
        if (final / "reconstruct.py").is_file():
            found.append((f"{trial.job}/{trial.name} final", final))
        snaps = art / "checkpoints"
        if snaps.is_dir():
            for meta in sorted(snaps.glob("[0-9][0-9][0-9]*.json")):
                d = snaps / meta.stem
                try:
                    t = canonjson.read(meta).get("t")
                except (OSError, ValueError, AttributeError):
                    continue
                if re.fullmatch(r"\d+", meta.stem) and (d / "reconstruct.py").is_file():
                    when = f" t={t:.0f}s" if isinstance(t, (int, float)) else ""
                    found.append((f"{trial.job}/{trial.name} checkpoint {meta.stem}{when}", d))
    return found


@click.command("audit")
@click.argument("task_dir", type=click.Path(file_okay=False, path_type=Path))
@click.argument("programs", nargs=-1, type=click.Path(exists=True, path_type=Path))
@click.option("--jobs", "jobs", multiple=True, type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="A Harbor job folder (repeatable): audit every trial's final workspace and checkpoints of this task.")
@click.option("--nonces", type=click.IntRange(0, 20), default=len(DEFAULT_NONCES), show_default=True,
              help="Probe draws added to the hidden scenarios.")
@click.option("--pool", "pool_size", type=click.IntRange(0, 10_000), default=DEFAULT_POOL, show_default=True,
              help="Generated scenarios searched for the ones that would show a hidden-only failure publicly.")
@click.option("--runtime", type=click.Choice([r for r in RUNTIME_NAMES if r != "docker"]), default="auto",
              show_default=True, help="Sandbox the programs run in (they are untrusted).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@plugin_option
@quiet_option
def audit_cmd(task_dir: Path, programs: tuple[Path, ...], jobs: tuple[Path, ...], nonces: int, pool_size: int,
              runtime: str, as_json: bool, plugins: tuple[Path, ...], quiet: bool) -> None:
    """Fairness audit: run independent PROGRAMS (reconstruct.py files or workspace
    folders) on the built task TASK_DIR and report, per program and field, the hidden
    and probe cells it fails while it passes that field on every published scenario,
    with generated scenarios that would have shown each such behaviour publicly.
    Exits 1 when any hidden-only failure is found."""
    task = load_task(task_dir)
    found = [(str(p), p) for p in programs] + (job_programs(jobs, str(task.meta["task"])) if jobs else [])
    if not found:
        raise UsageError("nothing to audit: give programs or --jobs folders holding trials of this task",
                         hint=f"e.g. recon audit {task_dir} other/reconstruct.py, or --jobs jobs/")
    rt = get_runtime(runtime)
    registry = load_registry(plugins) if plugins else None
    # the programs' runs are kept for the next audit or validate of the same task (by the
    # programs' and the scenarios' content: another program, or a rebuilt task, runs again)
    memo = RunMemo.kept(task.limits, resolve_oracle(task, registry))
    report = audit_programs(task, found, runtime=rt, registry=registry,
                            nonces=[f"audit-{i + 1}" for i in range(nonces)], pool_size=pool_size,
                            log=lambda msg: info(msg, quiet or as_json), memo=memo)
    memo.save()
    if memo.kept_hits:
        info(f"audit: {memo.kept_hits} runs kept from an earlier audit or validate", quiet or as_json)
    click.echo(canonjson.dumps(report.to_json()) if as_json else report.render(), nl=not as_json)
    if not report.fair:
        edges = sum(1 for p in report.programs for f in p.hidden_only if f.knife_edge)
        hint = ("publish scenarios that show them (recon build --reveal PROGRAM), or evidence that reveals them"
                + (f"; {edges} of them sit on a knife edge of the oracle, which only a continuous output or a wider "
                   "tolerance makes fair" if edges else ""))
        raise ValidationFailed(f"{report.hidden_only} hidden-only behaviour(s) in {task.meta['task']}", hint=hint)
