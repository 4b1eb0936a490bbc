"""``recon results``: benchmark results from Harbor's job folders.

``harbor run -d recon@VERSION --registry-path ds/registry.json -a AGENT -m MODEL -o JOBS``
leaves one folder per trial (see :mod:`recon._harborjobs`). ``write_results`` reads them
all, groups trials by model (agent and model) and task, and writes the tables and figures
of a long-horizon study such as LHTB 2.0 (15 models x 77 tasks, a verifier checkpoint
every 30 minutes over three hours):

- per model: trials, scored, failed, missing, the dense mean reward R with a 95 %
  Student-t interval, soft passes (R >= 0.95), strict passes (R = 1), the binary mean,
  the dense mean at the first hour, solves and regressions;
- per task: the dense mean next to the binary mean, the comparison that shows how much
  partial progress a pass/fail verifier throws away;
- the model x task matrix of dense means; time to first solve; regressions (a checkpoint
  scoring lower than the one before it);
- figures: reward over time (the mean step curve per model), solves over time, dense vs
  binary per task, per-model bars, the distribution of final rungs.

Which trials count. A scored trial counts with its final reward. A failed trial whose
verifier never ran (the environment, the agent setup or the agent broke first) counts as
R = 0 in every mean, as unscored tasks do in the seed study. A trial whose verifier ran
but left no valid reward, and a missing trial (no readable result.json), is left out of
means; every such trial is listed with its reason. A trial seen twice (same trial id)
counts once.

Checkpoints. A recon grading may carry ``"checkpoints": [{"t", "reward", "rung",
"binary"}, ...]`` (seconds since the agent phase started, sorted, the last one the final
workspace). Without them a trial has one point: its final reward at the end of its agent
phase. A trial's curve is a step function: 0 before its first checkpoint, then the reward
of its latest checkpoint. A trial is *solved* at its first checkpoint with R >= 0.95.

Outputs (``--out DIR``): ``results.html`` and its PNG figures, ``results.json`` (every
number above and every trial with its checkpoints, for other tools) and CSV files. The
CSV and JSON files are a function of the job folders alone: the same folders give the
same bytes (no clock, no absolute paths; means are exactly rounded sums).
"""
from __future__ import annotations

import bisect
import csv
import io
import math
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from . import canonjson
from ._version import __version__
from ._harborjobs import Checkpoint, Loaded, Trial, load_trials
from ._plot import (BINARY_COLOR, CSS, DENSE_COLOR, FIGURE_HEIGHT, FIGURE_WIDTH, RUNG_NAMES, SOFT_PASS, Figure,
                    duration as _duration, escape as _e, new_figure, palette, save_png, strip_spines)
from .errors import UsageError

__all__ = ["write_results", "summarize", "ResultsReport", "RESULTS_SCHEMA", "CSV_FILES", "FIGURES", "EARLY_SECONDS",
           "SOFT_PASS"]

RESULTS_SCHEMA = 1
EARLY_SECONDS = 3600.0
CSV_FILES = ("models.csv", "tasks.csv", "matrix.csv", "trials.csv", "checkpoints.csv", "reward_over_time.csv",
             "solves.csv", "regressions.csv")
FIGURES = ("reward_over_time.png", "solves_over_time.png", "dense_vs_binary.png", "models.png", "final_rungs.png")
EPS = 1e-9
HTML_ROW_CAP = 500  # longer lists (regressions, solves) are complete in their CSV files


@dataclass
class ResultsReport:
    html: Path
    json: Path
    csv: list[Path]
    figures: list[Figure]
    doc: dict[str, Any]
    jobs: list[Path] = field(default_factory=list)


# -- numbers ------------------------------------------------------------------------------
def _r(x: float | None, nd: int = 6) -> float | None:
    return None if x is None else round(float(x), nd)


def _mean(xs: list[float]) -> float | None:
    return math.fsum(xs) / len(xs) if xs else None


def _t_interval(xs: list[float]) -> tuple[float | None, float | None]:
    """The 95 % Student-t interval of the mean of ``xs``, clipped to [0, 1] (rewards are)."""
    n = len(xs)
    if n < 2:
        return None, None
    m = math.fsum(xs) / n
    sd = math.sqrt(math.fsum((x - m) ** 2 for x in xs) / (n - 1))
    from scipy.special import stdtrit  # noqa: PLC0415 - lazy: recon --help must stay cheap

    half = float(stdtrit(n - 1, 0.975)) * sd / math.sqrt(n)
    return max(0.0, m - half), min(1.0, m + half)


def _median(xs: list[float]) -> float | None:
    if not xs:
        return None
    s = sorted(xs)
    k = len(s) // 2
    return s[k] if len(s) % 2 else (s[k - 1] + s[k]) / 2


def _first_solve(t: Trial, soft: float) -> tuple[float | None, float | None]:
    """Seconds to the first checkpoint with R >= soft, and to the first full pass."""
    first_soft = next((c.t for c in t.checkpoints if c.reward >= soft - EPS), None)
    first_full = next((c.t for c in t.checkpoints if c.reward >= 1.0 - EPS or c.binary == 1), None)
    return first_soft, first_full


def _drops(t: Trial) -> list[tuple[Checkpoint, Checkpoint]]:
    cps = t.checkpoints
    return [(a, b) for a, b in zip(cps, cps[1:]) if b.reward < a.reward - EPS]


def _curve(trials: list[Trial]) -> list[tuple[float, float]]:
    """The mean step curve of ``trials`` at every time a checkpoint of one of them was
    taken (and at 0): each trial holds 0 until its first checkpoint, then the reward of
    its latest one. Trials that count as zero stay at 0."""
    n = len(trials)
    if n == 0:
        return []
    events: list[tuple[float, int, float]] = []
    for i, t in enumerate(trials):
        prev = 0.0
        for c in (t.checkpoints if t.status == "scored" else []):
            events.append((c.t, i, c.reward - prev))
            prev = c.reward
    events.sort(key=lambda e: (e[0], e[1]))
    total = 0.0
    out: list[tuple[float, float]] = [(0.0, 0.0)]
    for t_, _, delta in events:
        total += delta
        value = _r(total / n) or 0.0
        if out and out[-1][0] == t_:
            out[-1] = (t_, value)
        else:
            out.append((t_, value))
    return out


def _at(curve: list[tuple[float, float]], t: float) -> float | None:
    if not curve:
        return None
    i = bisect.bisect_right([p[0] for p in curve], t) - 1
    return curve[i][1] if i >= 0 else 0.0


def _solved_curve(trials: list[Trial], soft: float) -> list[tuple[float, float]]:
    """The share of ``trials`` solved (a checkpoint with R >= soft) by each time."""
    n = len(trials)
    times = sorted(s for t in trials if t.status == "scored" and (s := _first_solve(t, soft)[0]) is not None)
    out: list[tuple[float, float]] = [(0.0, 0.0)]
    for k, t_ in enumerate(times, 1):
        if out[-1][0] == t_:
            out[-1] = (t_, round(k / n, 6))
        else:
            out.append((t_, round(k / n, 6)))
    return out


# -- the summary --------------------------------------------------------------------------
def _group_stats(trials: list[Trial], soft: float) -> dict[str, Any]:
    counted = [t for t in trials if t.counted]
    values = [t.value for t in counted]
    lo, hi = _t_interval(values)
    return {
        "trials": len(trials),
        "scored": sum(t.status == "scored" for t in trials),
        "failed": sum(t.status == "failed" for t in trials),
        "failed_zero": sum(t.zero for t in trials),
        "failed_excluded": sum(t.status == "failed" and not t.zero for t in trials),
        "missing": sum(t.status == "missing" for t in trials),
        "counted": len(counted),
        "dense_mean": _r(_mean(values)),
        "dense_ci95": [_r(lo), _r(hi)] if lo is not None else None,
        "binary_mean": _r(_mean([float(t.value_binary) for t in counted])),
        "soft_passes": sum(v >= soft - EPS for v in values),
        "strict_passes": sum(v >= 1.0 - EPS for v in values),
    }


def summarize(loaded: Loaded, *, soft: float = SOFT_PASS, early: float = EARLY_SECONDS) -> dict[str, Any]:
    """Every table of the results, as one JSON-ready document (see the module doc)."""
    if not 0.0 < soft <= 1.0:
        raise UsageError(f"soft pass threshold {soft!r} must be in (0, 1]")
    if not (math.isfinite(early) and early > 0):
        raise UsageError(f"early={early!r} must be a positive number of seconds", hint="e.g. 3600 for the first hour")
    trials = sorted(loaded.trials, key=lambda t: (t.label, t.task, t.job, t.name, t.key))
    by_model: dict[str, list[Trial]] = defaultdict(list)
    by_task: dict[str, list[Trial]] = defaultdict(list)
    for t in trials:
        by_model[t.label].append(t)
        by_task[t.task].append(t)
    tasks = sorted(by_task)

    curves = {m: _curve([t for t in ts if t.counted]) for m, ts in by_model.items()}
    solved_curves = {m: _solved_curve([t for t in ts if t.counted], soft) for m, ts in by_model.items()}
    models = []
    for m, ts in by_model.items():
        counted = [t for t in ts if t.counted]
        solve_times = [s for t in counted if t.status == "scored" and (s := _first_solve(t, soft)[0]) is not None]
        mrow: dict[str, Any] = {"model": m, "agent": ts[0].agent, "model_name": ts[0].model, "tasks": len({t.task for t in ts}),
               **_group_stats(ts, soft),
               "dense_at_early": _at(curves[m], early) if counted else None,
               "solves": len(solve_times),
               "median_solve_seconds": _r(_median(solve_times), 3),
               "solves_after_early": sum(s > early for s in solve_times),
               "regressing_trials": sum(bool(_drops(t)) for t in counted if t.status == "scored")}
        models.append(mrow)
    models.sort(key=lambda r: (-(r["dense_mean"] if r["dense_mean"] is not None else -1.0), r["model"]))

    task_rows = []
    for name in tasks:
        ts = by_task[name]
        row: dict[str, Any] = {"task": name, "models": len({t.label for t in ts}), **_group_stats(ts, soft)}
        if row["dense_mean"] is not None and row["binary_mean"] is not None:
            row["gap"] = _r(row["dense_mean"] - row["binary_mean"])
        else:
            row["gap"] = None
        task_rows.append(row)

    matrix: dict[str, dict[str, Any]] = {}
    for name in tasks:
        cells: dict[str, Any] = {}
        for t in by_task[name]:
            cells.setdefault(t.label, []).append(t)
        matrix[name] = {}
        for label, cell in sorted(cells.items()):
            values = [t.value for t in cell if t.counted]
            matrix[name][label] = {"n": len(values), "mean": _r(_mean(values)),
                                   "not_counted": len(cell) - len(values)}

    solves: list[dict[str, Any]] = []
    regressions: list[dict[str, Any]] = []
    for t in trials:
        if t.status != "scored":
            continue
        s_soft, s_full = _first_solve(t, soft)
        if s_soft is not None or s_full is not None:
            solves.append({"model": t.label, "task": t.task, "job": t.job, "trial": t.name,
                           "soft_seconds": _r(s_soft, 3), "full_seconds": _r(s_full, 3),
                           "after_early": s_soft is not None and s_soft > early})
        for a, b in _drops(t):
            regressions.append({"model": t.label, "task": t.task, "job": t.job, "trial": t.name,
                                "t_before": _r(a.t, 3), "reward_before": _r(a.reward), "rung_before": a.rung,
                                "t_after": _r(b.t, 3), "reward_after": _r(b.reward), "rung_after": b.rung,
                                "drop": _r(a.reward - b.reward), "final_reward": _r(t.reward)})

    rungs: dict[str, dict[str, int]] = {}
    for m, ts in by_model.items():
        counts = {str(k): 0 for k in range(len(RUNG_NAMES))}
        counts.update({"no rung": 0, "failed (R = 0)": 0})
        for t in ts:
            if t.zero:
                counts["failed (R = 0)"] += 1
            elif t.status == "scored":
                key = str(t.rung) if t.rung is not None else "no rung"
                counts[key] = counts.get(key, 0) + 1
        rungs[m] = counts

    overall_counted = [t for t in trials if t.counted]
    solve_times = [s["soft_seconds"] for s in solves if s["soft_seconds"] is not None]
    task_dense = [float(r["dense_mean"]) for r in task_rows if r["dense_mean"] is not None]
    task_binary = [float(r["binary_mean"]) for r in task_rows if r["binary_mean"] is not None]
    overall = {
        **_group_stats(trials, soft),
        "models": len(by_model), "tasks": len(tasks), "jobs": len(loaded.jobs),
        "duplicates": len(loaded.duplicates),
        "task_mean_dense": _r(_mean(task_dense)), "task_mean_binary": _r(_mean(task_binary)),
        "solves": len(solve_times),
        "solves_after_early": sum(s > early for s in solve_times),
        "share_solves_after_early": _r(sum(s > early for s in solve_times) / len(solve_times)) if solve_times else None,
        "median_solve_seconds": _r(_median(solve_times), 3),
        "regressions": len(regressions),
        "regressing_trials": len({(r["job"], r["trial"]) for r in regressions}),
        "horizon_seconds": _r(max((c.t for t in overall_counted for c in t.checkpoints), default=0.0), 3),
    }
    return {
        "schema": RESULTS_SCHEMA,
        "recon_version": __version__,
        "definitions": {
            "soft_pass": f"final R >= {soft}", "strict_pass": "final R = 1",
            "early_seconds": early,
            "counted": "scored trials, and failed trials whose verifier never ran (as R = 0); trials whose verifier "
                       "ran without a valid reward, and missing trials, are listed but left out of means",
            "dense_ci95": "Student-t 95 % interval of the mean over counted trials, clipped to [0, 1]",
            "solve": f"the first checkpoint with R >= {soft}",
            "regression": "a checkpoint scoring lower than the one before it",
            "reward_over_time": "mean over counted trials of a step function: 0 before a trial's first checkpoint, "
                                "then its latest checkpoint's reward (0 throughout for a trial counted as zero)",
        },
        "overall": overall,
        "models": models,
        "tasks": task_rows,
        "matrix": matrix,
        "reward_over_time": {m: [[t, v] for t, v in c] for m, c in sorted(curves.items())},
        "solved_over_time": {m: [[t, v] for t, v in c] for m, c in sorted(solved_curves.items())},
        "final_rungs": dict(sorted(rungs.items())),
        "solves": solves,
        "regressions": regressions,
        "duplicates": [{k: d[k] for k in ("trial", "kept", "dropped")} for d in loaded.duplicates],
        "ignored_folders": list(loaded.ignored),
        "trials": [_trial_doc(t) for t in trials],
    }


def _trial_doc(t: Trial) -> dict[str, Any]:
    return {"id": t.key, "job": t.job, "trial": t.name, "agent": t.agent, "model_name": t.model, "model": t.label,
            "task": t.task, "status": t.status, "counted": t.counted, "reason": t.reason, "reward": t.reward,
            "binary": t.binary, "rung": t.rung, "rung_name": t.rung_name, "reward_source": t.reward_source,
            "agent_seconds": _r(t.agent_seconds, 3), "exception": t.exception, "notes": list(t.notes),
            "checkpoints": [[c.t, c.reward, c.rung, c.binary] for c in t.checkpoints]}


# -- CSV ----------------------------------------------------------------------------------
def _cell(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return str(int(v))
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, (list, tuple)):
        return "; ".join(map(str, v))
    return str(v)


def _csv(rows: Iterable[list[Any]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    for row in rows:
        w.writerow([_cell(v) for v in row])
    return buf.getvalue()


def _csv_files(doc: dict[str, Any]) -> dict[str, str]:
    mcols = ["model", "agent", "model_name", "tasks", "trials", "scored", "failed", "failed_zero", "failed_excluded",
             "missing", "counted", "dense_mean", "dense_ci95", "binary_mean", "soft_passes", "strict_passes",
             "dense_at_early", "solves", "median_solve_seconds", "solves_after_early", "regressing_trials"]
    models_rows: list[list[Any]] = [mcols[:12] + ["dense_ci95_low", "dense_ci95_high"] + mcols[13:]]
    for r in doc["models"]:
        ci = r["dense_ci95"] or [None, None]
        models_rows.append([r[c] for c in mcols[:12]] + ci + [r[c] for c in mcols[13:]])
    tcols = ["task", "models", "trials", "scored", "failed", "failed_zero", "failed_excluded", "missing", "counted",
             "dense_mean", "binary_mean", "gap", "soft_passes", "strict_passes"]
    labels = [r["model"] for r in doc["models"]]
    matrix_rows: list[list[Any]] = [["task", *labels]]
    for task, cells in doc["matrix"].items():
        matrix_rows.append([task, *[(cells.get(m) or {}).get("mean") for m in labels]])
    trcols = ["id", "job", "trial", "model", "agent", "model_name", "task", "status", "counted", "reward", "binary",
              "rung", "rung_name", "reward_source", "agent_seconds", "exception", "reason", "notes"]
    cp_rows: list[list[Any]] = [["model", "task", "job", "trial", "t", "reward", "rung", "binary"]]
    for t in doc["trials"]:
        for c in t["checkpoints"]:
            cp_rows.append([t["model"], t["task"], t["job"], t["trial"], *c])
    curve_rows: list[list[Any]] = [["model", "t", "mean_reward", "solved_share"]]
    for m, curve in doc["reward_over_time"].items():
        solved = doc["solved_over_time"][m]
        # Both step curves at the union of their times, in one merge pass.
        i = j = 0
        for t_ in sorted({p[0] for p in curve} | {p[0] for p in solved}):
            while i + 1 < len(curve) and curve[i + 1][0] <= t_:
                i += 1
            while j + 1 < len(solved) and solved[j + 1][0] <= t_:
                j += 1
            curve_rows.append([m, t_, curve[i][1] if curve else None, solved[j][1] if solved else None])
    scols = ["model", "task", "job", "trial", "soft_seconds", "full_seconds", "after_early"]
    rcols = ["model", "task", "job", "trial", "t_before", "reward_before", "rung_before", "t_after", "reward_after",
             "rung_after", "drop", "final_reward"]
    return {
        "models.csv": _csv(models_rows),
        "tasks.csv": _csv([tcols, *[[r[c] for c in tcols] for r in doc["tasks"]]]),
        "matrix.csv": _csv(matrix_rows),
        "trials.csv": _csv([trcols, *[[t[c] for c in trcols] for t in doc["trials"]]]),
        "checkpoints.csv": _csv(cp_rows),
        "reward_over_time.csv": _csv(curve_rows),
        "solves.csv": _csv([scols, *[[s[c] for c in scols] for s in doc["solves"]]]),
        "regressions.csv": _csv([rcols, *[[r[c] for c in rcols] for r in doc["regressions"]]]),
    }


# -- figures ------------------------------------------------------------------------------
def _time_unit(span: float) -> tuple[str, float]:
    if span >= 2 * 3600:
        return "hours", 3600.0
    if span >= 120:
        return "minutes", 60.0
    return "seconds", 1.0


def _legend(fig: Any, ax: Any, n: int) -> None:
    if n <= 8:
        ax.legend(loc="best", fontsize=8, frameon=True, framealpha=0.9)
    else:
        fig.legend(loc="outside right upper", fontsize=7, frameon=False)


def _draw_curves(doc: dict[str, Any], key: str, path: Path, ylabel: str, title: str, early: float) -> None:
    fig = new_figure()
    ax = fig.add_subplot()
    order = [r["model"] for r in doc["models"]]
    curves = {m: doc[key][m] for m in order if len(doc[key][m]) > 0}
    span = max((p[0] for c in curves.values() for p in c), default=0.0)
    unit, div = _time_unit(span)
    colors = palette(len(order))
    for i, m in enumerate(order):
        c = curves.get(m)
        if not c:
            continue
        xs = [p[0] / div for p in c] + [span / div]
        ys = [p[1] for p in c] + [c[-1][1]]
        ax.step(xs, ys, where="post", color=colors[i], linewidth=1.6, label=m)
    if 0 < early < span:
        ax.axvline(early / div, color="0.5", linestyle=":", linewidth=1)
        ax.text(early / div, 1.01, f" {early / 3600:g} h", transform=ax.get_xaxis_transform(), fontsize=8,
                color="0.4", va="bottom")
    ax.set_xlim(0, max(span / div, 1e-9) * 1.01)
    ax.set_ylim(-0.02, 1.02)  # a curve at 0 stays visible above the axis
    ax.set_xlabel(f"{unit} since the agent started")
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    strip_spines(ax)
    _legend(fig, ax, len(curves))
    ax.set_title(title, fontsize=12)
    save_png(fig, path)


def _hbar_height(rows: int) -> int:
    return max(FIGURE_HEIGHT, 130 + 22 * rows)


def _draw_dense_vs_binary(doc: dict[str, Any], path: Path, height: int) -> None:
    fig = new_figure(height)
    ax = fig.add_subplot()
    rows = [r for r in doc["tasks"] if r["dense_mean"] is not None]
    rows.sort(key=lambda r: (-r["dense_mean"], r["task"]))
    ov = doc["overall"]
    groups = [(f"all tasks (mean over {len(rows)})", ov["task_mean_dense"], ov["task_mean_binary"])] if len(rows) > 1 \
        else []
    groups += [(r["task"].split("/", 1)[-1], r["dense_mean"], r["binary_mean"]) for r in rows]
    ys = list(range(len(groups)))
    h = 0.4
    fs = 8 if len(groups) <= 30 else 6
    dense = ax.barh([y - h / 2 for y in ys], [g[1] for g in groups], height=h, color=DENSE_COLOR,
                    label="dense ladder reward (mean R)", zorder=3)
    binary = ax.barh([y + h / 2 for y in ys], [g[2] for g in groups], height=h, color=BINARY_COLOR,
                     label="binary (mean of full passes)", zorder=3)
    ax.bar_label(dense, labels=[f"{g[1]:.3f}" for g in groups], fontsize=fs - 1, padding=2)
    ax.bar_label(binary, labels=[f"{g[2]:.3f}" for g in groups], fontsize=fs - 1, padding=2)
    ax.set_yticks(ys, [g[0] for g in groups], fontsize=fs)
    ax.set_ylim(len(groups) - 0.4, -0.6)  # top to bottom, without matplotlib's default margins
    if groups and len(rows) > 1:
        ax.axhline(0.5, color="0.6", linewidth=0.8, linestyle=":")
    ax.set_xlim(0, 1.12)
    ax.set_xlabel("reward (counted trials of every model)")
    ax.grid(axis="x", alpha=0.3, zorder=0)
    ax.legend(loc="lower right", fontsize=8, frameon=True, framealpha=0.9)
    strip_spines(ax)
    ax.set_title("Dense ladder reward vs binary score, per task", fontsize=12)
    save_png(fig, path)


def _draw_models(doc: dict[str, Any], path: Path, height: int, soft: float) -> None:
    fig = new_figure(height)
    ax = fig.add_subplot()
    rows = [r for r in doc["models"] if r["dense_mean"] is not None]
    ys = list(range(len(rows)))
    h = 0.4
    dense = [r["dense_mean"] for r in rows]
    lo = [r["dense_mean"] - r["dense_ci95"][0] if r["dense_ci95"] else 0.0 for r in rows]
    hi = [r["dense_ci95"][1] - r["dense_mean"] if r["dense_ci95"] else 0.0 for r in rows]
    ax.barh([y - h / 2 for y in ys], dense, height=h, color=DENSE_COLOR, xerr=[lo, hi], capsize=2,
            error_kw={"elinewidth": 0.8, "ecolor": "0.25"}, label="dense mean R (95 % t interval)", zorder=3)
    ax.barh([y + h / 2 for y in ys], [r["binary_mean"] for r in rows], height=h, color=BINARY_COLOR,
            label="binary mean", zorder=3)
    fs = 8 if len(rows) <= 20 else 6
    for y, r in zip(ys, rows):
        ax.text(1.02, y, f"R {r['dense_mean']:.3f}  soft {r['soft_passes']}  strict {r['strict_passes']}  "
                f"n {r['counted']}", va="center", fontsize=fs - 1, transform=ax.get_yaxis_transform())
    ax.set_yticks(ys, [r["model"] for r in rows], fontsize=fs)
    ax.set_ylim(len(rows) - 0.4, -0.6)
    ax.set_xlim(0, 1.0)
    ax.set_xlabel("reward")
    ax.grid(axis="x", alpha=0.3, zorder=0)
    ax.legend(loc="lower right", fontsize=8, frameon=True, framealpha=0.9)
    strip_spines(ax)
    ax.set_title(f"Models: dense mean reward and binary mean (soft: R ≥ {soft:g}, strict: R = 1)", fontsize=12)
    save_png(fig, path)


def _draw_rungs(doc: dict[str, Any], path: Path, height: int) -> None:
    from matplotlib import colormaps  # noqa: PLC0415

    fig = new_figure(height)
    ax = fig.add_subplot()
    order = [r["model"] for r in doc["models"] if r["counted"]]
    cats = ["failed (R = 0)", *[str(k) for k in range(len(RUNG_NAMES))], "no rung"]
    cmap = colormaps["RdYlGn"]
    colors = ["#555555", *[cmap(0.05 + 0.9 * k / (len(RUNG_NAMES) - 1)) for k in range(len(RUNG_NAMES))], "#c8c8c8"]
    names = ["failed before the verifier (R = 0)",
             *[f"rung {k}: {RUNG_NAMES[k]}" for k in range(len(RUNG_NAMES))], "scored, no rung (not a recon grading)"]
    left = [0.0] * len(order)
    for cat, color, name in zip(cats, colors, names):
        fracs = []
        for m in order:
            counts = doc["final_rungs"][m]
            total = sum(counts.values())
            fracs.append(counts.get(cat, 0) / total if total else 0.0)
        if not any(fracs):
            continue
        ax.barh(range(len(order)), fracs, left=left, color=color, label=name, height=0.7, zorder=3)
        left = [a + b for a, b in zip(left, fracs)]
    fs = 8 if len(order) <= 20 else 6
    ax.set_yticks(range(len(order)), order, fontsize=fs)
    ax.set_ylim(len(order) - 0.5, -0.5)
    ax.set_xlim(0, 1)
    ax.set_xlabel("share of counted trials")
    strip_spines(ax)
    fig.legend(loc="outside lower center", fontsize=7, ncols=3, frameon=False)
    ax.set_title("Where trials end on the ladder (final rung)", fontsize=12)
    save_png(fig, path)


# -- the page -------------------------------------------------------------------------------
def _f(v: Any, nd: int = 3) -> str:
    return "-" if v is None else f"{v:.{nd}f}"


def _table(head: list[str], rows: list[list[str]], num: set[int] | None = None) -> str:
    num = num or set()
    h = "".join(f"<th>{_e(c)}</th>" for c in head)
    body = "".join("<tr>" + "".join(f"<td class=\"num\">{c}</td>" if i in num else f"<td>{c}</td>"
                                    for i, c in enumerate(r)) + "</tr>" for r in rows)
    return f"<table><tr>{h}</tr>{body}</table>"


def _heat(v: float | None) -> str:
    if v is None:
        return ""
    color = "#fff" if v > 0.6 else "#222"
    return f" style=\"background: rgba(59,111,182,{0.08 + 0.92 * v:.3f}); color: {color}\""


def _page(doc: dict[str, Any], title: str, figures: list[Figure], loaded: Loaded, soft: float, early: float) -> str:
    ov = doc["overall"]
    early_h = f"{early / 3600:g} h"
    cards = [("models", ov["models"]), ("tasks", ov["tasks"]), ("trials", ov["trials"]), ("scored", ov["scored"]),
             ("failed", ov["failed"]), ("missing", ov["missing"]), ("dense mean R", _f(ov["dense_mean"])),
             ("binary mean", _f(ov["binary_mean"])),
             (f"solves after {early_h}", "-" if ov["share_solves_after_early"] is None
              else f"{100 * ov['share_solves_after_early']:.0f} %")]
    parts = [
        "<!DOCTYPE html>", "<html lang=\"en\"><head><meta charset=\"utf-8\">",
        f"<title>{_e(title)}</title><style>{CSS}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
        f"<p class=\"meta\">{ov['trials']} trial(s) of {ov['models']} model(s) on {ov['tasks']} task(s) from "
        f"{ov['jobs']} Harbor job folder(s); written by recon {_e(__version__)} from the job folders alone.</p>",
        "<div class=\"cards\">" + "".join(f"<div class=\"card\"><div class=\"v\">{_e(v)}</div><div class=\"k\">"
                                          f"{_e(k)}</div></div>" for k, v in cards) + "</div>",
        "<h2>How trials are counted</h2>",
        "<p>A <b>scored</b> trial counts with its final reward R. A <b>failed</b> trial whose verifier never ran (the "
        "environment, the agent setup or the agent broke first) <b>counts as R = 0</b> in every mean, as unscored "
        "tasks do in the LHTB 2.0 study. A failed trial whose verifier ran but left no valid reward (a verifier "
        "timeout, unreadable output, a reward Harbor's error policy marks invalid) and a <b>missing</b> trial (no "
        "readable result.json) are <b>left out of means</b>; all of them are listed below with their reason. A trial "
        f"seen twice (same trial id) counts once ({ov['duplicates']} duplicate(s) ignored). Soft pass: R &ge; "
        f"{soft:g}; strict pass: R = 1; binary: the verifier's full-pass bit. Intervals are 95 % Student-t intervals "
        f"of the mean. A trial is solved at its first checkpoint with R &ge; {soft:g}; a regression is a "
        "checkpoint scoring lower than the one before it.</p>",
    ]
    if figures:
        parts.append("<h2>Figures</h2>")
    for f in figures:
        parts.append(f"<figure id=\"{_e(f.name[:-4])}\"><img src=\"{_e(f.name)}\" width=\"{f.width}\" "
                     f"height=\"{f.height}\" alt=\"{_e(f.title)}\"><figcaption><b>{_e(f.title)}.</b> "
                     f"{_e(f.caption)}</figcaption></figure>")

    parts.append("<h2>Models</h2>")
    rows = []
    for r in doc["models"]:
        ci = r["dense_ci95"]
        rows.append([_e(r["model"]), str(r["trials"]), str(r["scored"]),
                     f"{r['failed']} ({r['failed_zero']} as 0)", str(r["missing"]),
                     f"<b>{_f(r['dense_mean'])}</b>", "-" if not ci else f"{ci[0]:.3f}&ndash;{ci[1]:.3f}",
                     str(r["soft_passes"]), str(r["strict_passes"]), _f(r["binary_mean"]),
                     _f(r["dense_at_early"]), str(r["solves"]), _duration(r["median_solve_seconds"]),
                     str(r["solves_after_early"]), str(r["regressing_trials"])])
    parts.append(_table(["model", "trials", "scored", "failed", "missing", "dense mean R", "95 % interval",
                         f"soft (R ≥ {soft:g})", "strict (R = 1)", "binary mean", f"R at {early_h}", "solves",
                         "median time to solve", f"solves after {early_h}", "trials with regressions"],
                        rows, set(range(1, 15))))

    parts.append("<h2>Tasks: dense vs binary</h2>")
    parts.append(f"<p class=\"meta\">Mean over tasks: dense {_f(ov['task_mean_dense'])}, binary "
                 f"{_f(ov['task_mean_binary'])}.</p>")
    rows = [[_e(r["task"]), str(r["models"]), str(r["trials"]), str(r["counted"]), f"<b>{_f(r['dense_mean'])}</b>",
             _f(r["binary_mean"]), _f(r["gap"]), str(r["soft_passes"]), str(r["strict_passes"]),
             str(r["failed"] + r["missing"])] for r in doc["tasks"]]
    parts.append(_table(["task", "models", "trials", "counted", "dense mean R", "binary mean", "gap",
                         "soft", "strict", "failed or missing"], rows, set(range(1, 10))))

    parts.append("<h2>Model &times; task</h2><p class=\"meta\">Dense mean R of the counted trials in each cell "
                 "(several attempts are averaged); &ldquo;&times;&rdquo;: trials that were not counted only.</p>")
    labels = [r["model"] for r in doc["models"]]
    head = "<tr><th>task</th>" + "".join(f"<th>{_e(m)}</th>" for m in labels) + "</tr>"
    body = []
    for task, cells in doc["matrix"].items():
        tds = []
        for m in labels:
            c = cells.get(m)
            if c is None:
                tds.append("<td></td>")
            elif c["mean"] is None:
                tds.append("<td class=\"num fail\">&times;</td>")
            else:
                tds.append(f"<td class=\"num\"{_heat(c['mean'])}>{c['mean']:.2f}</td>")
        body.append(f"<tr><td>{_e(task)}</td>{''.join(tds)}</tr>")
    parts.append(f"<div style=\"overflow-x: auto\"><table>{head}{''.join(body)}</table></div>")

    parts.append("<h2>Time to first solve</h2>")
    solves = doc["solves"]
    if solves:
        parts.append(f"<p class=\"meta\">{ov['solves']} solve(s); {ov['solves_after_early']} of them after "
                     f"{early_h}; median {_duration(ov['median_solve_seconds'])}. Full list in solves.csv.</p>")
        rows = [[_e(s["model"]), _e(s["task"]), _e(f"{s['job']}/{s['trial']}"), _duration(s["soft_seconds"]),
                 _duration(s["full_seconds"])] for s in sorted(solves, key=lambda s: (s["soft_seconds"] is None,
                                                                               s["soft_seconds"] or 0.0,
                                                                               s["model"], s["task"]))[:HTML_ROW_CAP]]
        parts.append(_table(["model", "task", "trial", f"first R ≥ {soft:g}", "first full pass"], rows, {3, 4}))
    else:
        parts.append(f"<p class=\"meta\">No trial reached R &ge; {soft:g}.</p>")

    parts.append("<h2>Regressions</h2>")
    regs = doc["regressions"]
    if regs:
        parts.append(f"<p class=\"meta\">{len(regs)} drop(s) in {ov['regressing_trials']} trial(s); largest first"
                     f"{' (the first ' + str(HTML_ROW_CAP) + '; all in regressions.csv)' if len(regs) > HTML_ROW_CAP else ''}.</p>")
        rows = [[_e(r["model"]), _e(r["task"]), _e(f"{r['job']}/{r['trial']}"),
                 f"{_duration(r['t_before'])}: {_f(r['reward_before'])}", f"{_duration(r['t_after'])}: {_f(r['reward_after'])}",
                 _f(r["drop"]), _f(r["final_reward"])]
                for r in sorted(regs, key=lambda r: (-r["drop"], r["model"], r["task"], r["trial"]))[:HTML_ROW_CAP]]
        parts.append(_table(["model", "task", "trial", "before", "after", "drop", "final R"], rows, {5, 6}))
    else:
        parts.append("<p class=\"meta\">No checkpoint scored lower than the one before it.</p>")

    parts.append("<h2>Failed and missing trials</h2>")
    bad = [t for t in doc["trials"] if t["status"] != "scored"]
    if bad:
        rows = [[_e(t["model"]), _e(t["task"]), _e(f"{t['job']}/{t['trial']}"), _e(t["status"]),
                 "R = 0" if t["counted"] else "left out", _e(t["reason"])] for t in bad]
        parts.append(_table(["model", "task", "trial", "status", "in means", "reason"], rows))
    else:
        parts.append("<p class=\"meta\">None: every trial was scored.</p>")
    noted = [t for t in doc["trials"] if t["notes"]]
    if noted:
        parts.append("<h2>Notes on scored trials</h2>")
        if len(noted) > HTML_ROW_CAP:
            parts.append(f"<p class=\"meta\">The first {HTML_ROW_CAP} of {len(noted)}; all in trials.csv.</p>")
        rows = [[_e(t["model"]), _e(t["task"]), _e(f"{t['job']}/{t['trial']}"), _e("; ".join(t["notes"]))]
                for t in noted[:HTML_ROW_CAP]]
        parts.append(_table(["model", "task", "trial", "note"], rows))
    if doc["duplicates"]:
        parts.append("<h2>Duplicates</h2>")
        rows = [[_e(d["trial"]), _e(d["kept"]), _e(d["dropped"])] for d in doc["duplicates"]]
        parts.append(_table(["trial id", "kept", "ignored copy"], rows))
    if loaded.ignored:
        parts.append("<h2>Folders that are not trials</h2><p class=\"meta\">Inside job folders, holding none of a "
                     "trial's files (Harbor creates agent/, verifier/ and artifacts/ when a trial starts):</p><ul>"
                     + "".join(f"<li><code>{_e(f)}</code></li>" for f in loaded.ignored) + "</ul>")
    parts.append("<h2>Sources</h2><ul>" + "".join(f"<li><code>{_e(j)}</code></li>" for j in loaded.jobs) + "</ul>")
    parts.append("<p class=\"meta\">Machine-readable: results.json and " + ", ".join(CSV_FILES) + ".</p>")
    parts.append("</body></html>\n")
    return "\n".join(parts)


def write_results(paths: Iterable[Path | str], out_dir: Path | str, *, title: str = "recon benchmark results",
                  figures: bool = True, soft: float = SOFT_PASS, early: float = EARLY_SECONDS,
                  progress: Callable[[int], None] | None = None) -> ResultsReport:
    """Read the Harbor job folders ``paths``; write ``out_dir/results.html``, its PNG
    figures (unless ``figures`` is false), ``results.json`` and the CSV files
    (``progress(1)`` after each figure); return what was written."""
    out = Path(out_dir)
    loaded = load_trials(paths, exclude=[out])
    doc = summarize(loaded, soft=soft, early=early)
    json_path = out / "results.json"
    csv_paths = []
    try:
        out.mkdir(parents=True, exist_ok=True)
        json_path.write_bytes(canonjson.dumps(doc).encode("utf-8"))
        for name, text in _csv_files(doc).items():
            (out / name).write_bytes(text.encode("utf-8"))
            csv_paths.append(out / name)
    except OSError as exc:
        raise UsageError(f"cannot write into {out}: {exc.strerror or exc}", hint="give a writable --out folder") from None

    drawn: list[Figure] = []
    if figures and doc["overall"]["counted"]:
        n_models = sum(1 for r in doc["models"] if r["counted"])
        n_tasks = sum(1 for r in doc["tasks"] if r["counted"])
        plan: list[tuple[Figure, Callable[[Path], None]]] = [
            (Figure("reward_over_time.png", FIGURE_WIDTH, FIGURE_HEIGHT, "Reward over time",
                    "Mean reward R of each model's counted trials against time since the agent started: each trial "
                    "holds the reward of its latest checkpoint (0 before its first; 0 throughout for a trial that "
                    f"failed before its verifier ran). The dotted line marks {early / 3600:g} h."),
             lambda p: _draw_curves(doc, "reward_over_time", p, "mean reward R", "Reward over time", early)),
            (Figure("solves_over_time.png", FIGURE_WIDTH, FIGURE_HEIGHT, "Solves over time",
                    f"Share of each model's counted trials solved (a checkpoint with R ≥ {soft:g}) by each time."),
             lambda p: _draw_curves(doc, "solved_over_time", p, f"share of trials solved (R ≥ {soft:g})",
                                    "Solves over time", early)),
            (Figure("dense_vs_binary.png", FIGURE_WIDTH, _hbar_height(n_tasks + 1), "Dense vs binary, per task",
                    "Mean dense ladder reward next to the mean binary score (full pass) of every counted trial of each "
                    "task, all models together; the gap is the partial progress a pass/fail verifier does not see."),
             lambda p: _draw_dense_vs_binary(doc, p, _hbar_height(n_tasks + 1))),
            (Figure("models.png", FIGURE_WIDTH, _hbar_height(n_models), "Models",
                    "Dense mean reward with its 95 % interval, and the binary mean, per model; soft and strict pass "
                    "counts at the right."),
             lambda p: _draw_models(doc, p, _hbar_height(n_models), soft)),
            (Figure("final_rungs.png", FIGURE_WIDTH, _hbar_height(n_models), "Final rungs",
                    "Where each model's counted trials end on the six-rung ladder; dark grey: failed before the "
                    "verifier ran (counted as R = 0)."),
             lambda p: _draw_rungs(doc, p, _hbar_height(n_models))),
        ]
        for fig, draw in plan:
            if drawn and progress:
                progress(1)
            draw(out / fig.name)
            drawn.append(fig)
        if progress:
            progress(1)
    produced = {f.name for f in drawn}
    for stale in FIGURES:  # a figure of an earlier run into the same folder that this one does not have
        if stale not in produced and (out / stale).is_file():
            (out / stale).unlink()
    html_path = out / "results.html"
    html_path.write_text(_page(doc, title, drawn, loaded, soft, early), encoding="utf-8")
    return ResultsReport(html_path, json_path, csv_paths, drawn, doc, loaded.jobs)
