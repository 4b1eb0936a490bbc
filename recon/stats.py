"""Statistics of a built task: how much work it asks for, how much evidence it gives,
how long its reference solution takes per scenario, and how far its baselines get.

``task_stats`` reads the task's files (it needs the verifier side, ``tests/``, and the
``solution/``) and, unless told not to, runs the reference solution once per public
and hidden scenario as a bare subprocess (no sandbox), so the numbers are the cost
of the work itself. With ``baselines=True`` it also grades every baseline the oracle
ships (see :mod:`recon.baselines`): a full grading each, so it is opt-in.
"""
from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from . import canonjson, compare
from .errors import TaskError
from .runtimes.base import env_for_submission
from .task import ScenarioDir, Task, load_task
from .validate import count_work
from .audit import grade_baselines
from .validate import mutation_summary

if TYPE_CHECKING:  # pragma: no cover
    from .registry import Registry
    from .runtimes.base import Runtime

__all__ = ["task_stats", "render_stats", "bare_run", "BareRun", "count_work"]


@dataclass
class BareRun:
    """One run of a program outside any sandbox."""

    seconds: float
    exit_code: int
    stdout: bytes
    stderr: bytes


def bare_run(program: Path, scenario: ScenarioDir, *, timeout: float = 600.0, python: str | None = None) -> BareRun:
    """Run ``python3 program < scenario.json`` from a private copy of the program, with
    the scenario's input paths made absolute and the environment every submission gets.
    The time is the subprocess's wall clock, start-up and imports included."""
    doc = dict(scenario.document)
    doc["inputs"] = {name: str(path) for name, path in scenario.input_files().items()}
    payload = canonjson.dumps_compact(doc).encode("utf-8")
    with tempfile.TemporaryDirectory(prefix="recon-bare-") as tmp:
        ws = Path(tmp) / "workspace"
        ws.mkdir()
        shutil.copyfile(program, ws / program.name)
        t0 = time.perf_counter()
        proc = subprocess.run([python or sys.executable, program.name], input=payload, cwd=ws,
                              env=env_for_submission(tmp), capture_output=True, timeout=timeout, check=False)
        seconds = time.perf_counter() - t0
    return BareRun(seconds, proc.returncode, proc.stdout, proc.stderr)


def _archive_stats(archive: Path, evidence_names: set[str]) -> dict[str, int]:
    unpacked = files = evidence = 0
    with tarfile.open(archive) as tar:
        for m in tar.getmembers():
            if m.isfile():
                files += 1
                unpacked += m.size
                if Path(m.name).name in evidence_names and "/inputs/" not in m.name:
                    evidence += m.size
    return {"archive_bytes": archive.stat().st_size, "unpacked_bytes": unpacked, "files": files,
            "evidence_file_bytes": evidence}


def _summary(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    return {"min": round(min(values), 4), "median": round(statistics.median(values), 4),
            "mean": round(statistics.fmean(values), 4), "max": round(max(values), 4),
            "total": round(sum(values), 4)}


def task_stats(task_dir: Path | str, *, run: bool = True, baselines: bool = False, mutation: bool = False,
               runtime: "str | Runtime" = "auto", registry: "Registry | None" = None,
               progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    """The statistics of the built task at ``task_dir`` as a JSON-able dict.

    ``work`` is W (non-blank, non-comment lines of the reference solution, as ``recon
    validate`` counts them); ``stages`` the number of stages the oracle's recipe names
    (None for a task built before recon recorded them); ``disclose`` what the build
    disclosed beyond the behaviour-only instruction; ``reference_seconds`` maps each
    public and hidden scenario to the wall time of one bare run of the reference (absent
    when ``run`` is False); ``baselines`` lists each shipped baseline's grading (name,
    reward, rung), graded on ``runtime`` (absent unless ``baselines`` is True; it needs
    the oracle, from ``registry`` or the installed plugins). ``mutation`` adds the
    mutation analysis (score of hidden + probes, hidden-only kills, survivors): the one
    ``recon validate`` ran, or a new one (minutes) kept for next time.
    """
    task: Task = load_task(task_dir)
    if task.root is None:
        raise TaskError(f"{task_dir}: statistics need the whole task folder, not only tests/",
                        hint="give the folder `recon build` wrote (e.g. tasks/lidar_icp)")
    root = task.root
    reference = root / "solution" / "reconstruct.py"
    instruction = root / "instruction.md"
    obs = root / "environment" / "app" / "observations"
    for needed in (reference, instruction, obs / "manifest.json", obs / "reference_outputs.tar.gz"):
        if not needed.is_file():
            raise TaskError(f"{task_dir}: {needed.relative_to(root)} is missing", hint="rebuild the task with `recon build`")
    manifest = canonjson.read(obs / "manifest.json")
    spec = task.meta["spec"]
    out: dict[str, Any] = {
        "task": task.meta["task"],
        "oracle": task.name,
        "oracle_version": task.meta["oracle_version"],
        "path": str(root),
        "work": count_work(reference.read_text(encoding="utf-8")),
        "stages": len(task.meta["stages"]) if isinstance(task.meta.get("stages"), list) else None,
        "stage_names": list(task.meta.get("stages") or []),
        "disclose": task.meta.get("disclose"),
        "instruction_words": len(instruction.read_text(encoding="utf-8").split()),
        "evidence": {**_archive_stats(obs / "reference_outputs.tar.gz", set(manifest.get("evidence", {}))),
                     "level": manifest.get("evidence_level")},
        "n_public": len(task.meta["public"]),
        "n_hidden": len(task.meta["hidden"]),
        "probes": int(task.meta.get("probes", 3)),
        "seed": spec.get("seed", 0),
        "axes": len(task.meta["axes"]),
        "axis_names": sorted(task.meta["axes"]),
        "outputs": len(task.meta["outputs"]),
        "output_names": sorted(task.meta["outputs"]),
        "timeout": task.limits.wall,
    }
    if run:
        seconds: dict[str, float] = {}
        failures: list[str] = []
        for sd in task.public() + task.hidden():
            r = bare_run(reference, sd, timeout=max(60.0, 4 * task.limits.wall))
            seconds[sd.id] = round(r.seconds, 4)
            if progress:
                progress(1)
            value, why = compare.parse_stdout(r.stdout) if r.exit_code == 0 else (None, f"exit code {r.exit_code}")
            if why is None and isinstance(value, dict):
                bad = [n for n, s in sorted(task.outputs.items()) if n not in value or not compare.within(s, value[n], sd.truth[n])]
                if bad:
                    failures.append(f"{sd.id}: {', '.join(bad)} off")
            else:
                failures.append(f"{sd.id}: {why or 'not a JSON object'}")
        out["reference_seconds"] = seconds
        out["reference_summary"] = _summary(list(seconds.values()))
        out["reference_matches"] = len(seconds) - len(failures)
        out["reference_failures"] = failures
    if baselines:


        out["baselines"] = [r.to_json() for r in grade_baselines(task, runtime=runtime, registry=registry)]
    if mutation:

        out["mutation"] = mutation_summary(task, registry)
    return out


def _human_bytes(n: int) -> str:
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"  # pragma: no cover


def render_stats(s: dict[str, Any]) -> str:
    """The statistics as a two-column table."""
    ev = s["evidence"]
    rows: list[tuple[str, str]] = [
        ("task", f"{s['task']} (oracle {s['oracle']} {s['oracle_version']})"),
        ("work W", f"{s['work']} lines (non-blank, non-comment lines of the reference solution)"),
        ("stages", "not recorded (built by an older recon)" if s.get("stages") is None
         else f"{s['stages']} in the recipe" + (f": {'; '.join(s['stage_names'])}" if s.get("stage_names") else "")),
        ("disclosed", "the recipe (an easier variant)" if s.get("disclose") == "recipe"
         else "nothing: behaviour-only instruction"),
        ("instruction", f"{s['instruction_words']} words"),
        ("evidence", f"level {ev.get('level') or 'unrecorded'}; {_human_bytes(ev['archive_bytes'])} archive, {_human_bytes(ev['unpacked_bytes'])} unpacked, "
                     f"{ev['files']} files ({_human_bytes(ev['evidence_file_bytes'])} in evidence files)"),
        ("scenarios N/K", f"{s['n_public']} public / {s['n_hidden']} hidden, +{s['probes']} probes per grading"),
        ("axes", f"{s['axes']}: {', '.join(s['axis_names'])}"),
        ("outputs", f"{s['outputs']}: {', '.join(s['output_names'])}"),
        ("run limit", f"{s['timeout']:g} s wall per run"),
    ]
    if "reference_seconds" in s:
        sm = s["reference_summary"]
        total = len(s["reference_seconds"])
        rows.append(("reference run", f"median {sm['median']:.3f} s, min {sm['min']:.3f} s, max {sm['max']:.3f} s "
                                      f"over {total} scenarios; matches the truth on {s['reference_matches']}/{total}"))
        for sid, sec in s["reference_seconds"].items():
            rows.append(("", f"{sid:<10} {sec:.3f} s"))
        for f in s["reference_failures"]:
            rows.append(("", f"MISMATCH {f}"))
    if "baselines" in s:
        if not s["baselines"]:
            rows.append(("baselines", "none shipped"))
        for i, b in enumerate(s["baselines"]):
            verdict = "ok, below 1.0" if b["passed"] else "REACHES 1.0: the instruction gives the recipe away"
            rows.append(("baselines" if i == 0 else "", f"{b['name']:<20} R = {b['reward']:.4f}  "
                                                         f"rung {b['rung']}  {verdict}"))
    if "mutation" in s:
        m = s["mutation"]["summary"]
        rows.append(("mutation score", f"{m['score']:.3f} ± {m['score_error']:.3f} of {m['non_equivalent']} "
                                       f"non-equivalent mutants killed by hidden + probes (public {m['score_public']:.3f}; "
                                       f"threshold {m['threshold']:g}: {'ok' if m['passed'] else 'FAILS'})"))
        hidden_only = s["mutation"].get("hidden_only") or []
        rows.append(("hidden-only kills", f"{len(hidden_only)}" + (": " + "; ".join(hidden_only[:5]) if hidden_only else
                                                                   " (every behaviour the hidden set tests is shown)")))
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)

