"""``recon report``: an HTML page and PNG figures from gradings and grading histories.

Inputs are grading documents (``grading.json``, or what ``recon grade --json`` prints)
and history files (``.jsonl``, one line per grading), given as files or folders to
search. Every grading becomes one record; records are grouped into *submissions* by
(task, workspace label). A submission's latest grading is where it landed; a
submission graded more than once is a checkpoint series.

Figures (PNG, fixed pixel sizes so pages lay out predictably):

- ``ladder.png``: where submissions land on the ladder, a rung histogram per task;
- ``dense_vs_binary.png``: mean dense reward next to the binary pass rate, per task and
  over all tasks, the comparison that shows how much partial progress a pass/fail
  verifier throws away;
- ``rungs.png``: per submission, the fraction of each rung's checks that passed;
- ``reward_over_time.png``: reward against time since the first checkpoint, for every
  submission graded more than once.

matplotlib is imported only when a report is drawn, with the Agg canvas (no display).
"""
from __future__ import annotations

import datetime as _dt
import json
import math
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from ._version import __version__
from ._plot import (BINARY_COLOR, CSS, DENSE_COLOR, FIGURE_HEIGHT, Figure, FIGURE_WIDTH, RUNG_NAMES, SOFT_PASS,
                    duration as _duration, escape as _e, new_figure as _new_figure, palette as _task_colors, rung_ticklabels as _rung_ticklabels,
                    save_png as _save)
from .errors import UsageError
from .history import HistoryError, parse_time, read as read_history, record_of, series

__all__ = ["build_report", "load_records", "Report", "Figure", "FIGURES", "FIGURE_WIDTH", "FIGURE_HEIGHT",
           "figure_height"]

FIGURES = ("ladder.png", "dense_vs_binary.png", "rungs.png", "reward_over_time.png")
MAX_JSON_BYTES = 64 << 20


def figure_height(name: str, rows: int) -> int:
    """The pixel height of figure ``name`` for ``rows`` submissions (the rung-fraction
    heatmap grows with the number of submissions; the others are fixed)."""
    if name == "rungs.png":
        return max(FIGURE_HEIGHT, 140 + 30 * rows)
    return FIGURE_HEIGHT


@dataclass
class Report:
    html: Path
    figures: list[Figure]
    records: int
    submissions: int
    tasks: list[str]
    sources: list[str] = field(default_factory=list)


# -- reading ---------------------------------------------------------------------------
def _is_grading(doc: Any) -> bool:
    return isinstance(doc, dict) and all(k in doc for k in ("rungs", "reward", "binary", "nonce", "task"))


def _is_mutation(doc: Any) -> bool:
    """``recon mutate --out DIR`` writes mutation.json: the summary of a mutation analysis."""
    return isinstance(doc, dict) and isinstance(doc.get("summary"), dict) and "score" in doc["summary"] \
        and "target" in doc and "hidden_only" in doc


def load_mutations(paths: Iterable[Path | str]) -> list[dict[str, Any]]:
    """Every mutation analysis (mutation.json) among ``paths`` (files, or folders searched)."""
    found: list[dict[str, Any]] = []
    for p in map(Path, paths):
        files = sorted(q for q in p.rglob("mutation*.json") if q.is_file()) if p.is_dir() else [p]
        for f in files:
            if not f.is_file() or f.suffix != ".json" or f.stat().st_size > MAX_JSON_BYTES:
                continue
            try:
                doc = json.loads(f.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, json.JSONDecodeError):
                continue
            if _is_mutation(doc):
                found.append({**doc, "_source": str(f)})
    return found


def _read_file(path: Path, explicit: bool) -> list[dict[str, Any]]:
    """Records in one file; for files found by searching a folder, files that are
    neither gradings nor histories are skipped (a folder may hold reward.json)."""
    if path.suffix == ".jsonl":
        return [{**r, "_source": f"{path}:{i}"} for i, r in enumerate(read_history(path), 1)]
    try:
        if path.stat().st_size > MAX_JSON_BYTES:
            if explicit:
                raise UsageError(f"{path} is larger than {MAX_JSON_BYTES >> 20} MiB; not a grading")
            return []
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {exc}") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError:
        # Maybe a history file without the .jsonl suffix.
        try:
            return [{**r, "_source": f"{path}:{i}"} for i, r in enumerate(read_history(path), 1)]
        except HistoryError:
            if explicit:
                raise UsageError(f"{path} is neither a grading JSON nor a history (.jsonl) file",
                                 hint="give grading.json files, `recon grade --json` output or --history files") from None
            return []
    if _is_grading(doc):
        return [{**record_of(doc), "_source": str(path)}]
    if _is_mutation(doc):
        return []  # read by load_mutations
    if explicit:
        raise UsageError(f"{path} is JSON but not a grading document (no rungs/reward/nonce)",
                         hint="give grading.json files, `recon grade --json` output or --history files")
    return []


def load_records(paths: Iterable[Path | str], *, allow_empty: bool = False) -> tuple[list[dict[str, Any]], list[str]]:
    """Every grading record in ``paths`` (files, or folders searched for ``*.json`` and
    ``*.jsonl``), without duplicates (a grading saved both as grading.json and as a
    history line counts once); and the list of files read."""
    records: list[dict[str, Any]] = []
    sources: list[str] = []
    seen: set[tuple[str, str, str, str]] = set()
    for p in map(Path, paths):
        if p.is_dir():
            files = sorted(q for q in p.rglob("*") if q.is_file() and q.suffix in (".json", ".jsonl"))
            found = [(f, _read_file(f, explicit=False)) for f in files]
        elif p.is_file():
            found = [(p, _read_file(p, explicit=True))]
        else:
            raise UsageError(f"{p} does not exist", hint="give grading JSON files, history files or folders holding them")
        for f, recs in found:
            if recs:
                sources.append(str(f))
            for r in recs:
                key = (str(r["task"]), str(r["workspace"]), str(r["nonce"]), str(r["timestamp"]))
                if key not in seen:
                    seen.add(key)
                    records.append(r)
    if not records and not allow_empty:
        raise UsageError("no gradings found in " + ", ".join(map(str, paths)),
                         hint="run `recon grade TASK --workspace WS --out DIR` (grading.json) or `--history FILE.jsonl`")
    return records, sources


# -- summaries ---------------------------------------------------------------------------
def _short_labels(labels: list[str]) -> dict[str, str]:
    """For each label, the shortest path suffix that no other label shares (workspace
    labels default to absolute paths, too long for a figure)."""
    parts = {lab: [p for p in lab.replace("\\", "/").split("/") if p] or [lab] for lab in labels}

    def suffix(lab: str, d: int) -> str:
        return "/".join(parts[lab][-d:])

    out = {}
    for lab in labels:
        out[lab] = lab
        for d in range(1, len(parts[lab]) + 1):
            if all(suffix(o, d) != suffix(lab, d) for o in labels if o != lab):
                out[lab] = suffix(lab, d)
                break
    return out


@dataclass
class Submission:
    task: str
    workspace: str
    label: str
    records: list[dict[str, Any]]

    @property
    def latest(self) -> dict[str, Any]:
        return self.records[-1]

    @property
    def best(self) -> float:
        return max(float(r["reward"]) for r in self.records)

    def elapsed(self) -> list[float]:
        t0 = parse_time(str(self.records[0]["timestamp"]))
        return [(parse_time(str(r["timestamp"])) - t0).total_seconds() for r in self.records]

    def regressions(self) -> int:
        rs = [float(r["reward"]) for r in self.records]
        return sum(1 for a, b in zip(rs, rs[1:]) if b < a - 1e-9)

    def first_pass(self) -> float | None:
        for r, t in zip(self.records, self.elapsed()):
            if r["binary"] == 1:
                return t
        return None


def _submissions(records: list[dict[str, Any]]) -> list[Submission]:
    groups = series(records)
    short = _short_labels(sorted({w for (_, w) in groups}))
    subs = [Submission(t, w, short[w], recs) for (t, w), recs in groups.items()]
    subs.sort(key=lambda s: (s.task, -float(s.latest["reward"]), s.label))
    return subs


def _task_name(task: str) -> str:
    return task.split("/", 1)[1] if task.startswith("recon/") else task


def _rates(subs: list[Submission]) -> dict[str, float]:
    rewards = [float(s.latest["reward"]) for s in subs]
    return {"n": len(subs), "dense": sum(rewards) / len(rewards),
            "binary": sum(int(s.latest["binary"]) for s in subs) / len(subs),
            "soft": sum(1 for r in rewards if r >= SOFT_PASS) / len(subs)}


# -- drawing -----------------------------------------------------------------------------
def _draw_ladder(subs: list[Submission], tasks: list[str], path: Path) -> None:
    fig = _new_figure()
    ax = fig.add_subplot()
    counts = {t: [0] * 7 for t in tasks}
    for s in subs:
        counts[s.task][int(s.latest["rung"])] += 1
    colors = _task_colors(len(tasks))
    if len(tasks) <= 6:
        width = 0.8 / len(tasks)
        for i, t in enumerate(tasks):
            xs = [k - 0.4 + width * (i + 0.5) for k in range(7)]
            bars = ax.bar(xs, counts[t], width=width * 0.92, color=colors[i], label=f"{_task_name(t)} "
                          f"(n={sum(counts[t])})", zorder=3)
            ax.bar_label(bars, labels=[str(c) if c else "" for c in counts[t]], fontsize=8, padding=1)
        ax.set_xticks(range(7), _rung_ticklabels(), fontsize=8)
        top = max(max(c) for c in counts.values())
        ax.set_ylim(0, top * 1.18 + 0.5)
        ax.yaxis.get_major_locator().set_params(integer=True)
        ax.set_ylabel("submissions (latest grading)")
        ax.set_xlabel("highest rung passed")
        ax.grid(axis="y", alpha=0.3, zorder=0)
        ax.legend(loc="upper left", fontsize=9, frameon=False, title="task", title_fontsize=9)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
    else:
        grid = [counts[t] for t in tasks]
        top = max(max(r) for r in grid) or 1
        im = ax.imshow(grid, aspect="auto", cmap="Blues", vmin=0, vmax=top)
        for i, row in enumerate(grid):
            for k, c in enumerate(row):
                if c:
                    ax.text(k, i, str(c), ha="center", va="center", fontsize=8,
                            color="white" if c > 0.6 * top else "black")
        ax.set_xticks(range(7), _rung_ticklabels(), fontsize=8)
        ax.set_yticks(range(len(tasks)), [_task_name(t) for t in tasks], fontsize=8 if len(tasks) < 25 else 6)
        ax.set_xlabel("highest rung passed")
        cb = fig.colorbar(im, ax=ax, label="submissions", shrink=0.8)
        from matplotlib.ticker import MaxNLocator  # noqa: PLC0415

        cb.locator = MaxNLocator(integer=True)
        cb.update_ticks()
    ax.set_title("Where submissions land on the ladder", fontsize=12)
    _save(fig, path)


def _draw_dense_vs_binary(subs: list[Submission], tasks: list[str], path: Path) -> None:
    fig = _new_figure()
    ax = fig.add_subplot()
    groups = [("all tasks", subs)] if len(tasks) > 1 else []
    groups += [(_task_name(t), [s for s in subs if s.task == t]) for t in tasks]
    rates = [_rates(g) for _, g in groups]
    xs = list(range(len(groups)))
    w = 0.38
    dense = ax.bar([x - w / 2 for x in xs], [r["dense"] for r in rates], width=w, color=DENSE_COLOR,
                   label="dense ladder reward (mean R)", zorder=3)
    binary = ax.bar([x + w / 2 for x in xs], [r["binary"] for r in rates], width=w, color=BINARY_COLOR,
                    label="binary pass rate (R = 1)", zorder=3)
    fs = 9 if len(groups) <= 8 else 7
    ax.bar_label(dense, labels=[f"{r['dense']:.3f}" for r in rates], fontsize=fs, padding=2)
    ax.bar_label(binary, labels=[f"{r['binary']:.3f}" for r in rates], fontsize=fs, padding=2)
    if len(groups) <= 8:
        ax.set_xticks(xs, [f"{name}\n(n={r['n']})" for (name, _), r in zip(groups, rates)], fontsize=9)
    else:
        ax.set_xticks(xs, [f"{name} (n={r['n']})" for (name, _), r in zip(groups, rates)], fontsize=7,
                      rotation=35, ha="right", rotation_mode="anchor")
    if len(groups) > 1 and len(tasks) > 1:
        ax.axvline(0.5, color="0.6", linewidth=0.8, linestyle=":")
    # Few groups would give bars as wide as the page; keep at least three slots of width.
    pad = max(0.0, (3 - len(groups)) / 2)
    ax.set_xlim(-0.6 - pad, len(groups) - 0.4 + pad)
    ax.set_ylim(0, 1.12)
    ax.set_yticks([0, 0.25, 0.5, 0.75, 1.0])
    ax.set_ylabel("score (latest grading per submission)")
    ax.grid(axis="y", alpha=0.3, zorder=0)
    ax.legend(loc="upper right", fontsize=9, frameon=False, ncols=2)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    ax.set_title("Dense ladder reward vs binary pass rate", fontsize=12)
    _save(fig, path)


def _draw_rungs(subs: list[Submission], path: Path, height: int) -> None:
    import numpy as np  # noqa: PLC0415
    from matplotlib import colormaps  # noqa: PLC0415

    fig = _new_figure(height)
    ax = fig.add_subplot()
    n_rungs = max(len(s.latest["fractions"]) for s in subs)
    data = np.full((len(subs), n_rungs), np.nan)
    for i, s in enumerate(subs):
        k = int(s.latest["rung"])
        for j, f in enumerate(s.latest["fractions"]):
            # A rung is examined up to one past the highest passed; beyond that it is blank.
            if j <= k:
                data[i, j] = float(f)
    cmap = colormaps["RdYlGn"].with_extremes(bad="#e6e6e6")
    im = ax.imshow(np.ma.masked_invalid(data), aspect="auto", cmap=cmap, vmin=0, vmax=1, interpolation="nearest")
    for i in range(len(subs)):
        for j in range(n_rungs):
            v = data[i, j]
            text = "not\nexamined" if math.isnan(v) else f"{v:.2f}"
            ax.text(j, i, text, ha="center", va="center", fontsize=7 if math.isnan(v) else 8,
                    color="0.45" if math.isnan(v) else ("white" if v < 0.2 or v > 0.85 else "black"))
    ax.set_xticks(range(n_rungs), [f"{j + 1}\n" + textwrap.fill(RUNG_NAMES[j + 1], 14) if j + 1 < len(RUNG_NAMES)
                                   else str(j + 1) for j in range(n_rungs)], fontsize=8)
    ax.xaxis.tick_top()
    ylabels = [f"{_task_name(s.task)} | {textwrap.shorten(s.label, 28, placeholder='...')}  "
               f"R={float(s.latest['reward']):.3f}" for s in subs]
    ax.set_yticks(range(len(subs)), ylabels, fontsize=8)
    ax.set_xticks([x - 0.5 for x in range(1, n_rungs)], minor=True)
    ax.set_yticks([y - 0.5 for y in range(1, len(subs))], minor=True)
    ax.grid(which="minor", color="white", linewidth=2)
    ax.tick_params(which="minor", length=0)
    fig.colorbar(im, ax=ax, label="fraction of the rung's checks passed", shrink=0.8)
    ax.set_title("Fraction of each rung's checks passed (latest grading)", fontsize=12)
    _save(fig, path)


def _draw_over_time(subs: list[Submission], path: Path) -> None:
    fig = _new_figure()
    ax = fig.add_subplot()
    span = max(max(s.elapsed()) for s in subs)
    unit, div = ("hours", 3600.0) if span >= 2 * 3600 else (("minutes", 60.0) if span >= 120 else ("seconds", 1.0))
    colors = _task_colors(len(subs))
    for i, s in enumerate(subs):
        xs = [t / div for t in s.elapsed()]
        ys = [float(r["reward"]) for r in s.records]
        ax.plot(xs, ys, marker="o", markersize=4, linewidth=1.6, color=colors[i],
                label=textwrap.shorten(f"{_task_name(s.task)} | {s.label}", 46, placeholder="..."))
        passes = [(x, y) for x, y, r in zip(xs, ys, s.records) if r["binary"] == 1]
        if passes:
            ax.plot([p[0] for p in passes], [p[1] for p in passes], linestyle="none", marker="*", markersize=13,
                    color=colors[i], markeredgecolor="black", markeredgewidth=0.6)
    ax.set_yticks([k / 6 for k in range(7)], ["0"] + [f"{k}/6" for k in range(1, 6)] + ["1"])
    ax.set_ylim(-0.03, 1.06)
    sec = ax.secondary_yaxis("right")
    sec.set_yticks([k / 6 for k in range(7)], [RUNG_NAMES[k] for k in range(7)], fontsize=7)
    right = max(span / div, 1e-9)
    ax.set_xlim(-0.02 * right, 1.02 * right)
    ax.set_xlabel(f"{unit} since the first checkpoint")
    ax.set_ylabel("reward R")
    ax.grid(alpha=0.3)
    if len(subs) <= 6:
        ax.legend(loc="lower right", fontsize=8, frameon=True, framealpha=0.9)
    else:
        fig.legend(loc="outside lower center", fontsize=7, ncols=3, frameon=False)
    ax.set_title("Reward over time (stars: full pass)", fontsize=12)
    _save(fig, path)


# -- the page ----------------------------------------------------------------------------
def _submission_rows(subs: list[Submission]) -> str:
    rows = []
    for s in subs:
        r = s.latest
        reward = float(r["reward"])
        nxt = "-" if r["binary"] == 1 else f"{float(r.get('next_rung_fraction') or 0.0):.3f}"
        rows.append(
            "<tr>"
            f"<td title=\"{_e(s.workspace)}\">{_e(s.label)}</td>"
            f"<td class=\"num\"><span class=\"bar\" style=\"width:{reward * 5:.2f}em\"></span>{reward:.4f}</td>"
            f"<td class=\"{'pass' if r['binary'] == 1 else 'fail'}\">{r['binary']}</td>"
            f"<td>{_e(r['rung'])}: {_e(r.get('rung_name') or RUNG_NAMES[int(r['rung'])])}</td>"
            f"<td class=\"num\">{nxt}</td>"
            f"<td class=\"num\">{s.best:.4f}</td>"
            f"<td class=\"num\">{len(s.records)}</td>"
            f"<td>{_e(r['timestamp'])}</td>"
            f"<td><code>{_e(r['nonce'])}</code></td>"
            "</tr>")
    head = ("<tr><th>submission</th><th>reward R</th><th>binary</th><th>rung reached</th><th>next-rung fraction</th>"
            "<th>best R</th><th>gradings</th><th>last graded</th><th>nonce</th></tr>")
    return f"<table>{head}{''.join(rows)}</table>"


def _series_rows(subs: list[Submission]) -> str:
    rows = []
    for s in subs:
        rs = [float(r["reward"]) for r in s.records]
        rows.append(
            "<tr>"
            f"<td>{_e(_task_name(s.task))}</td><td title=\"{_e(s.workspace)}\">{_e(s.label)}</td>"
            f"<td class=\"num\">{len(rs)}</td><td class=\"num\">{_duration(s.elapsed()[-1])}</td>"
            f"<td class=\"num\">{rs[0]:.4f}</td><td class=\"num\">{rs[-1]:.4f}</td><td class=\"num\">{max(rs):.4f}</td>"
            f"<td class=\"num\">{s.regressions()}</td><td class=\"num\">{_duration(s.first_pass())}</td>"
            "</tr>")
    head = ("<tr><th>task</th><th>submission</th><th>checkpoints</th><th>span</th><th>first R</th><th>last R</th>"
            "<th>best R</th><th>regressions</th><th>first full pass</th></tr>")
    return f"<table>{head}{''.join(rows)}</table>"


def build_report(paths: Iterable[Path | str], out_dir: Path | str, *, title: str = "recon grading report",
                 progress: Callable[[int], None] | None = None) -> Report:
    """Read gradings and histories from ``paths``; write ``out_dir/report.html`` and its
    PNG figures (``progress(1)`` after each); return what was written."""
    paths = list(paths)
    if not paths:
        raise UsageError("give at least one grading JSON, history file or folder")
    mutations = load_mutations(paths)
    records, sources = load_records(paths, allow_empty=bool(mutations))
    sources += [m["_source"] for m in mutations]
    subs = _submissions(records)
    tasks = sorted({s.task for s in subs})
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    figures: list[Figure] = []

    def add(name: str, title_: str, caption: str, height: int = FIGURE_HEIGHT) -> Path:
        if figures and progress:
            progress(1)
        figures.append(Figure(name, FIGURE_WIDTH, height, title_, caption))
        return out / name

    multi = [s for s in subs if len(s.records) > 1]
    if subs:  # a report of mutation analyses alone has no gradings to draw
        _draw_ladder(subs, tasks, add(
            "ladder.png", "Where submissions land on the ladder",
            "Highest rung passed by the latest grading of each submission, per task. Rung 6 is a full pass."))
        _draw_dense_vs_binary(subs, tasks, add(
            "dense_vs_binary.png", "Dense reward vs binary pass rate",
            "Mean dense ladder reward R = (k + f) / 6 next to the fraction of submissions with a full pass (R = 1), "
            "latest grading per submission. The gap is the partial progress a pass/fail verifier does not see."))
        h = figure_height("rungs.png", len(subs))
        _draw_rungs(subs, add(
            "rungs.png", "Rung by rung",
            "Fraction of each rung's checks that passed; grey rungs were not examined because a lower rung failed "
            "(the ladder is monotone).", h), h)
        if multi:
            _draw_over_time(multi, add(
                "reward_over_time.png", "Reward over time",
                "Each checkpoint series (a submission graded repeatedly, e.g. by recon watch): reward against time "
                "since its first checkpoint. Drops are regressions; stars mark full passes."))
    if progress:
        progress(1)
    produced = {f.name for f in figures}
    for stale in FIGURES:  # a figure from an earlier report that this one does not have
        if stale not in produced and (out / stale).is_file():
            (out / stale).unlink()

    overall = _rates(subs)
    cards = [("tasks", str(len(tasks))), ("submissions", str(len(subs))), ("gradings", str(len(records))),
             ("dense mean R", f"{overall['dense']:.3f}"), ("binary pass rate", f"{overall['binary']:.3f}"),
             (f"soft pass (R &ge; {SOFT_PASS})", f"{overall['soft']:.3f}")]
    parts = [
        "<!DOCTYPE html>", "<html lang=\"en\"><head><meta charset=\"utf-8\">",
        f"<title>{_e(title)}</title><style>{CSS}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
        f"<p class=\"meta\">{len(records)} grading(s) of {len(subs)} submission(s) on {len(tasks)} task(s), "
        f"from {len(sources)} file(s); generated {_dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()} "
        f"by recon {_e(__version__)}.</p>",
        "<div class=\"cards\">" + "".join(f"<div class=\"card\"><div class=\"v\">{v}</div><div class=\"k\">{k}</div></div>"
                                          for k, v in cards) + "</div>",
        "<h2>Figures</h2>",
    ]
    for f in figures:
        parts.append(f"<figure id=\"{_e(f.name[:-4])}\"><img src=\"{_e(f.name)}\" width=\"{f.width}\" "
                     f"height=\"{f.height}\" alt=\"{_e(f.title)}\"><figcaption><b>{_e(f.title)}.</b> "
                     f"{_e(f.caption)}</figcaption></figure>")
    if not multi:
        parts.append("<p class=\"meta\">No submission was graded more than once, so there is no reward-over-time "
                     "figure; record checkpoint series with <code>recon grade --history FILE.jsonl</code> or "
                     "<code>recon watch</code>.</p>")
    if mutations:
        parts.append("<h2>Mutation analysis</h2><p class=\"meta\">Single-edit mutants of each task's reference "
                     "(<code>recon mutate</code>): the share of the non-equivalent ones that the hidden scenarios plus "
                     "probes kill, and the behaviours the hidden set tests that no public scenario shows "
                     "(hidden-only kills).</p>")
        parts.append("<table><tr><th>task</th><th>mutants</th><th>non-equivalent</th><th>score (hidden + probes)</th>"
                     "<th>public</th><th>hidden-only</th><th>survivors</th><th>passed</th></tr>")
        for m in mutations:
            sm = m["summary"]
            err = sm.get("score_error")
            parts.append(
                f"<tr><td>{_e(m.get('target') or m.get('oracle'))}</td><td class=\"num\">{_e(sm.get('mutants'))}</td>"
                f"<td class=\"num\">{_e(sm.get('non_equivalent'))}</td>"
                f"<td class=\"num\">{float(sm['score']):.3f}" + (f" &plusmn; {float(err):.3f}" if err else "") + "</td>"
                f"<td class=\"num\">{float(sm.get('score_public', 0.0)):.3f}</td>"
                f"<td>{_e(', '.join(map(str, m.get('hidden_only') or [])) or 'none')}</td>"
                f"<td class=\"num\">{_e(sm.get('survivors'))}</td><td>{'yes' if sm.get('passed') else 'no'}</td></tr>")
        parts.append("</table>")
    parts.append("<h2>Submissions by task</h2>")
    for t in tasks:
        ts = [s for s in subs if s.task == t]
        r = _rates(ts)
        parts.append(f"<h3>{_e(t)}</h3><p class=\"meta\">{r['n']} submission(s): dense mean R {r['dense']:.3f}, "
                     f"binary pass rate {r['binary']:.3f}.</p>")
        parts.append(_submission_rows(ts))
    if multi:
        parts.append("<h2>Checkpoint series</h2>")
        parts.append(_series_rows(multi))
    parts.append("<h2>Sources</h2><ul>" + "".join(f"<li><code>{_e(s)}</code></li>" for s in sources) + "</ul>")
    parts.append("</body></html>\n")
    page = out / "report.html"
    page.write_text("\n".join(parts), encoding="utf-8")
    return Report(page, figures, len(records), len(subs), tasks, sources)
