"""The catalog's recorded validation: ``docs/catalog.json`` and the page rendered from it.

Every built-in task has a record: either ``"validate": "pending"`` with the reason (the
catalog page lists the task as not validated yet), or the digest of its files when it was last validated
(the oracle's package folder and its sweep spec), the selection algorithm its build chose
scenarios with and the digest of the mutants recon's operators made of its reference (what
the selection chose them by), what ``recon validate`` and Harbor said then, and the agent
trials run on it. ``tests/test_catalog_record.py`` (in the default suite, so in CI) fails
when a task's files no longer match its record, when recon now chooses its scenarios
otherwise (another algorithm, or operators that make other mutants of its reference: a
build today would publish and withhold other scenarios than the ones validated), or when
``docs/catalog.md`` is not the page rendered from the records: changing a task, or how
recon selects, means running the catalog suite again (``pytest tests/catalog -m catalog``,
see the README).
"""
from __future__ import annotations

import fcntl
import hashlib
import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
RECORDS = ROOT / "docs" / "catalog.json"
PAGE = ROOT / "docs" / "catalog.md"


def task_files(name: str) -> list[Path]:
    """The files that decide a built-in task: its package folder and its sweep spec (not
    the runs it ships in ``kept/``: a cache of what its programs print and its mutants'
    verdicts, which changes no run's result; where the selection budget binds, a build that
    finds more of them decides more mutants in its budget and may choose other scenarios,
    as another secret or a warm ``$RECON_HOME`` would; ``tests/test_kept_runs.py`` keeps
    it current)."""
    pkg = ROOT / "artifacts" / name
    files = [p for p in sorted(pkg.rglob("*")) if p.is_file() and "__pycache__" not in p.parts
             and p.suffix != ".pyc" and p.relative_to(pkg).parts[0] != "kept"]
    spec = ROOT / "scenarios" / f"{name}.toml"
    return files + ([spec] if spec.is_file() else [])


def task_digest(name: str) -> str:
    h = hashlib.sha256()
    for p in task_files(name):
        h.update(p.relative_to(ROOT).as_posix().encode() + b"\0" + hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()[:16]


def mutants_digest(reference: Path, operators: Any = None) -> str:
    """The mutants recon's operators make of a reference program, as stress selection
    makes them (every line, the per-line cap): a new operator or a changed one changes
    this digest only for the references it applies to."""
    from recon.mutation import DEFAULT_MAX_PER_LINE
    from recon.mutation.operators import generate_mutants

    made = generate_mutants(reference.read_text(encoding="utf-8"), operators=operators,
                            max_per_line=DEFAULT_MAX_PER_LINE)
    return hashlib.sha256("\n".join(sorted(m.key for m in made.mutants)).encode()).hexdigest()[:16]


def load() -> dict[str, Any]:
    return json.loads(RECORDS.read_text(encoding="utf-8")) if RECORDS.is_file() else {"tasks": {}}


def save(doc: dict[str, Any]) -> None:
    RECORDS.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    PAGE.write_text(render(doc), encoding="utf-8")


def update(name: str, rec: dict[str, Any]) -> None:
    """Record ``name``'s result, keeping its trials and notes; under a lock, so that suites
    run side by side (one ``RECON_CATALOG_TASKS`` each) never lose each other's records."""
    RECORDS.parent.mkdir(parents=True, exist_ok=True)
    with open(RECORDS.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        doc = load()
        old = doc.setdefault("tasks", {}).get(name, {})
        doc["tasks"][name] = {**rec, "trials": old.get("trials", []), "notes": old.get("notes", "")}
        save(doc)


def _fmt(x: Any, spec: str = ".3f") -> str:
    return "-" if x is None else format(x, spec) if isinstance(x, (int, float)) and not isinstance(x, bool) else str(x)


def _trial(t: dict[str, Any]) -> str:
    """One trial in the page's column: its final R (or that it was not graded), the task
    version it ran on, and how many published fields the agent matched by when."""
    reward = "not graded" if t.get("reward") is None else f"R {t['reward']:.4f}"
    return f"{reward} ({t.get('version', '?')}; public {t.get('public', '-')})"


def render(doc: dict[str, Any]) -> str:
    """``docs/catalog.md``: one row per task, then each task's notes."""
    tasks = doc.get("tasks", {})
    lines = [
        "# The catalog",
        "",
        "Every built-in task, as the catalog suite last validated it (`pytest tests/catalog -m catalog`; "
        "this page is generated from `docs/catalog.json`, and CI fails when a task's files, or the "
        "selection algorithm that chose its scenarios, no longer match its record). W is the reference "
        "solution's non-blank, non-comment lines; R the reward; the "
        "mutation score is the share of non-equivalent mutants of the reference that hidden scenarios "
        "plus probes kill; power is the share of the generator a wrong field may cover and still escape "
        "5 % of gradings. Trials: fresh agents given the task's container for 45 minutes "
        "(`docs/trials.md`), on the version named, with the published fields each matched and when.",
        "",
        "| task | domain | tool (oracle) | agent's toolkit | stages | W | evidence | public / hidden / probes "
        "| baselines' R | mutation score | power | Harbor oracle / nop | trials | files |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name in sorted(tasks):
        r = tasks[name]
        if r.get("validate") == "pending":
            lines.append(f"| `{name}` | {r.get('domain', '-')} | not validated yet: {r.get('reason', '-')} |"
                         + " |" * 11)
            continue
        base = ", ".join(f"{b} {_fmt(v)}" for b, v in sorted(r.get("baselines", {}).items())) or "-"
        tr = "; ".join(_trial(t) for t in r.get("trials") or []) or "-"
        harbor = r.get("harbor") or {}
        lines.append(
            f"| `{name}` | {r.get('domain', '-')} | {r.get('tool', '-')} | "
            f"{', '.join(r.get('toolkit') or []) or 'standard library'} | {r.get('stages', '-')} | {r.get('work', '-')} | "
            f"{r.get('evidence_level', '-')} | {r.get('n_public', '-')} / {r.get('n_hidden', '-')} / "
            f"{r.get('probes', '-')} | {base} | {_fmt(r.get('mutation_score'))} | "
            f"{_fmt(r.get('power'), '.1%') if r.get('power') is not None else '-'} | "
            f"{_fmt(harbor.get('oracle'), '.1f')} / {_fmt(harbor.get('nop'), '.1f')} | {tr} | "
            f"`{r.get('digest', '-')}` (selection {r.get('selection_algorithm', '-')}) |")
    lines.append("")
    for name in sorted(tasks):
        r = tasks[name]
        if r.get("notes"):
            lines += [f"## `{name}`", "", r["notes"].strip(), ""]
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":  # regenerate docs/catalog.md after editing docs/catalog.json by hand
    save(load())
