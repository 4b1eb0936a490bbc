"""``recon validate``: prove a built task is sound (DESIGN §8).

Replays in fresh sandboxes: the reference solution (exactly 1.0), the untouched
workspace (0), generated task-agnostic cheats (constant output, nearest-public replay,
keyed noise, interpolation between public outputs: each below 5/6), the reference with
one field pushed past its tolerance (below 1.0), and the oracle's baselines (plausible
programs written from the instruction alone, recon.audit: each below 1.0); audits the
agent's side for leaks (recon.leaks) and the published files against their manifest
hashes.

The generated submissions are rows of :data:`GENERATED`: a name, what the reward must
stay below, and a writer. Adding a row is one entry there.
"""
from __future__ import annotations

import hashlib
import secrets
import shutil
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from . import canonjson
from ._version import __version__
from .audit import DEFAULT_NONCES, audit_baselines, grade_baselines
from .checks import PublicOnly
from .errors import TaskError
from .fsutil import sha256_file, tree_digest
from .grader import RunMemo, grade, resolve_oracle
from .leaks import leak_audit
from .oracle import Oracle
from .registry import Registry
from .run import install_solution
from .runtimes import get_runtime
from .runtimes.base import Runtime
from .task import Task, load_task
from .sweep import recon_home

__all__ = ["validate", "ValidationRow", "mutation_summary", "Generated", "GENERATED", "count_work", "leak_audit", "manifest_audit",
           "perturbed_value", "write_generated"]

FIVE_SIXTHS = 5 / 6


@dataclass
class ValidationRow:
    name: str
    expectation: str
    reward: float | None
    passed: bool
    detail: str


def count_work(text: str) -> int:
    """Work W: non-blank lines that are not comments."""
    return sum(1 for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("#"))


def perturbed_value(spec: dict[str, Any], value: Any) -> Any:
    """A value of the same kind that lies past the field's tolerance from ``value``."""
    kind = spec["kind"]
    if kind == "number":
        margin = max(float(spec.get("abs", 0.0)), float(spec.get("rel", 0.0)) * abs(value))
        bumped = float(value) + 10 * margin + 1.0
        if spec.get("rel", 0.0) >= 1.0:  # pragma: no cover - absurd tolerance
            bumped = float(value) * 10 + 10
        return bumped
    if kind == "integer":
        return int(value) + int(spec.get("tol", 0)) + 1
    if kind == "angle":
        return (float(value) + min(float(spec.get("period", 360.0)) / 2, 2 * float(spec["tol"]) + 1.0)) % float(spec.get("period", 360.0))
    if kind == "text":
        return str(value) + "_x"
    if kind == "set":
        return sorted(set(value) ^ {"[He]"}) if spec.get("normalize") == "smiles" else sorted(set(value) ^ {"__recon__"})
    if kind == "sequence":
        return list(value) + [value[0] if value else 0]
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    return [value]


def _public_table(task: Task) -> list[dict[str, Any]]:
    return [{"id": sd.id, "p": sd.parameters, "o": sd.truth} for sd in task.public()]


def _write_constant(ws: Path, task: Task, reference: Path) -> None:
    out = task.public()[0].truth
    (ws / "reconstruct.py").write_text(
        "# Constant: prints one published output whatever the scenario.\n"
        "import json, sys\nsys.stdin.read()\nOUT = " + repr(out) + "\nprint(json.dumps(OUT))\n")


def _write_replay(ws: Path, task: Task, reference: Path) -> None:
    table = [{"p": row["p"], "o": row["o"]} for row in _public_table(task)]
    (ws / "reconstruct.py").write_text(REPLAY_TEMPLATE.format(table=repr(table), axes=repr(task.meta["axes"])))


def _write_keyed_noise(ws: Path, task: Task, reference: Path) -> None:
    public = {row["id"]: row["o"] for row in _public_table(task)}
    (ws / "reconstruct.py").write_text(NOISE_TEMPLATE.format(public=repr(public), fields=repr(task.outputs)))


def _write_interpolation(ws: Path, task: Task, reference: Path) -> None:
    (ws / "reconstruct.py").write_text(INTERPOLATION_TEMPLATE.format(
        table=repr(_public_table(task)), axes=repr(task.meta["axes"]), fields=repr(task.outputs)))


def _write_fitted_lookup(ws: Path, task: Task, reference: Path) -> None:
    public = task.public()
    model = PublicOnly(task.meta["axes"], task.outputs, [(sd.parameters, sd.truth) for sd in public])
    weights = {name: dict(zip(sorted(task.meta["axes"]), model.fitted_weights(name))) for name in sorted(task.outputs)}
    (ws / "reconstruct.py").write_text(FITTED_LOOKUP_TEMPLATE.format(
        table=repr(_public_table(task)), axes=repr(task.meta["axes"]), weights=repr(weights)))


def _write_one_field_off(ws: Path, task: Task, reference: Path) -> None:
    fields = task.outputs
    numeric = [n for n, s in sorted(fields.items()) if s["kind"] in ("number", "integer", "angle")]
    field = numeric[0] if numeric else sorted(fields)[0]
    shutil.copyfile(reference, ws / "_reference.py")
    (ws / "recon_perturb.py").write_text(_perturb_module())
    (ws / "reconstruct.py").write_text(OFF_TEMPLATE.format(field=field, spec=repr(fields[field])))


@dataclass(frozen=True)
class Generated:
    """A generated submission validate grades: the reward must stay below ``limit``."""

    name: str
    expectation: str
    limit: float
    write: Callable[[Path, Task, Path], None]
    what: str


#: the generated submissions, in the order validate reports them
GENERATED: tuple[Generated, ...] = (
    Generated("constant", "< 5/6", FIVE_SIXTHS, _write_constant, "prints the first public output for every scenario"),
    Generated("replay", "< 5/6", FIVE_SIXTHS, _write_replay, "prints the output of the nearest public scenario"),
    Generated("keyed noise", "< 5/6", FIVE_SIXTHS, _write_keyed_noise,
              "public truth for public ids, elsewhere values of the right kind drawn by a hash of the parameters"),
    Generated("interpolation", "< 5/6", FIVE_SIXTHS, _write_interpolation,
              "public truth for public ids, elsewhere inverse-distance-weighted public outputs (nearest for "
              "non-numeric fields)"),
    Generated("fitted lookup", "< 5/6", FIVE_SIXTHS, _write_fitted_lookup,
              "public truth for public ids, elsewhere each field from the public scenario nearest in the metric "
              "that finds each public scenario's value among the others most often (axes weighted 0, 1 or 16)"),
    Generated("one field off", "< 1.0", 1.0, _write_one_field_off,
              "the reference with one field pushed past its tolerance"),
)


def write_generated(name: str, ws: Path, task: Task, reference: Path) -> None:
    """Write the generated submission ``name`` (a :data:`GENERATED` row) into ``ws``."""
    for g in GENERATED:
        if g.name == name:
            g.write(ws, task, reference)
            return
    raise ValueError(f"no generated submission named {name!r}")


REPLAY_TEMPLATE = '''# Memorizer: prints the published output whose parameters are nearest.
import json, sys
TABLE = {table}
AXES = {axes}
def dist(a, b):
    d = 0.0
    for k, ax in AXES.items():
        if ax["kind"] in ("float", "int", "seed"):
            span = (ax["hi"] - ax["lo"]) or 1.0
            d += ((a[k] - b[k]) / span) ** 2
        else:
            d += 0.0 if a[k] == b[k] else 1.0
    return d
doc = json.load(sys.stdin)
best = min(TABLE, key=lambda row: dist(row["p"], doc["parameters"]))
print(json.dumps(best["o"]))
'''

OFF_TEMPLATE = '''# The reference with one output field pushed past its tolerance.
import contextlib, io, json, runpy, sys
from recon_perturb import perturbed_value
buf = io.StringIO()
with contextlib.redirect_stdout(buf):
    runpy.run_path("_reference.py", run_name="__main__")
out = json.loads(buf.getvalue())
out[{field!r}] = perturbed_value({spec}, out[{field!r}])
print(json.dumps(out))
'''

# Shared by the generated templates: parameters on [0, 1] of their axis (log axes in log
# space), categorical mismatches (choice, bool, seed) count 1, as recon.checks does.
_DISTANCE_SOURCE = """
def _norm(ax, v):
    if ax.get("kind") not in ("float", "int") or isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    lo, hi, v = float(ax["lo"]), float(ax["hi"]), float(v)
    if ax.get("kind") == "float" and ax.get("log") and lo > 0 and v > 0:
        lo, hi, v = math.log(lo), math.log(hi), math.log(v)
    return 0.0 if hi <= lo else (v - lo) / (hi - lo)
def dist(a, b):
    d = 0.0
    for k in sorted(set(a) | set(b)):
        x, y = _norm(AXES.get(k, {{}}), a.get(k)), _norm(AXES.get(k, {{}}), b.get(k))
        if x is not None and y is not None:
            d += (x - y) ** 2
        elif a.get(k) != b.get(k):
            d += 1.0
    return math.sqrt(d)
"""

NOISE_TEMPLATE = '''# Keyed noise: the published truth for public ids; for any other id, values of the
# right kind drawn by a hash of the parameters (numbers within the public range, other
# kinds one of the public values). Outputs change with the parameters, and carry nothing.
import hashlib, json, sys
PUBLIC = {public}
FIELDS = {fields}
doc = json.load(sys.stdin)
if doc.get("id") in PUBLIC:
    print(json.dumps(PUBLIC[doc["id"]]))
    sys.exit(0)
key = json.dumps(doc["parameters"], sort_keys=True)
out = {{}}
for name, spec in sorted(FIELDS.items()):
    values = [t[name] for t in PUBLIC.values()]
    x = int.from_bytes(hashlib.sha256((key + "|" + name).encode()).digest()[:8], "big") / 2.0 ** 64
    if spec["kind"] in ("number", "angle"):
        lo, hi = min(values), max(values)
        out[name] = lo + x * (hi - lo)
    elif spec["kind"] == "integer":
        lo, hi = min(values), max(values)
        out[name] = lo + min(int(x * (hi - lo + 1)), hi - lo)
    else:
        out[name] = values[int(x * len(values))]
print(json.dumps(out))
'''

INTERPOLATION_TEMPLATE = '''# Interpolation: the published truth for public ids; elsewhere the inverse-distance-
# weighted mean (power 2, normalised parameters) of the public outputs for numeric
# fields, and the nearest public output for every other field.
import json, math, sys
TABLE = {table}
AXES = {axes}
FIELDS = {fields}
''' + _DISTANCE_SOURCE + '''
doc = json.load(sys.stdin)
for row in TABLE:
    if row["id"] == doc.get("id"):
        print(json.dumps(row["o"]))
        sys.exit(0)
d = [dist(doc["parameters"], row["p"]) for row in TABLE]
near = TABLE[d.index(min(d))]["o"]
out = {{}}
for name, spec in sorted(FIELDS.items()):
    if spec["kind"] in ("number", "integer", "angle") and min(d) > 0:
        w = [x ** -2 for x in d]
        v = sum(wi * row["o"][name] for wi, row in zip(w, TABLE)) / sum(w)
        out[name] = int(round(v)) if spec["kind"] == "integer" else v
    else:
        out[name] = near[name]
print(json.dumps(out))
'''


FITTED_LOOKUP_TEMPLATE = '''# Fitted lookup: the published truth for public ids; elsewhere each field is looked up
# in the public scenario nearest in that field's own metric (axes weighted so that each
# public scenario's nearest other one has its value as often as can be): the program an
# agent writes that matches the axes deciding a field instead of computing it.
import json, math, sys
TABLE = {table}
AXES = {axes}
WEIGHTS = {weights}
''' + _DISTANCE_SOURCE + '''
def gap(k, a, b):
    x, y = _norm(AXES[k], a), _norm(AXES[k], b)
    if x is not None and y is not None:
        return (x - y) ** 2
    return 0.0 if a == b else 1.0
doc = json.load(sys.stdin)
for row in TABLE:
    if row["id"] == doc.get("id"):
        print(json.dumps(row["o"]))
        sys.exit(0)
p = doc["parameters"]
out = {{}}
for name, w in sorted(WEIGHTS.items()):
    rows = [row for row in TABLE if name in row["o"]]
    d = [sum(wk * gap(k, p.get(k), row["p"].get(k)) for k, wk in w.items()) for row in rows]
    out[name] = rows[d.index(min(d))]["o"][name]
print(json.dumps(out))
'''


def _perturb_module() -> str:
    import inspect  # noqa: PLC0415

    return "from typing import Any\n\n" + inspect.getsource(perturbed_value)


def manifest_audit(app: Path) -> list[str]:
    """Published files whose sha256 differs from manifest.json."""
    obs = app / "observations"
    manifest = canonjson.read(obs / "manifest.json")
    problems = []
    archive = obs / "reference_outputs.tar.gz"
    if sha256_file(archive) != manifest["files"].get("reference_outputs.tar.gz"):
        problems.append("reference_outputs.tar.gz")
    with tarfile.open(archive, "r:gz") as tar:
        members = {m.name: m for m in tar.getmembers() if m.isfile()}
        for rel, digest in sorted(manifest["files"].items()):
            if rel == "reference_outputs.tar.gz":
                continue
            m = members.get(rel)
            f = tar.extractfile(m) if m is not None else None
            if f is None:
                problems.append(f"{rel} (missing)")
                continue
            if hashlib.sha256(f.read()).hexdigest() != digest:
                problems.append(rel)
    return problems


def _generated_detail(g: dict[str, Any], gen: Generated) -> str:
    """The rung reached and what failed; when a cheat got past rung 4, which checks of
    the anti-memorization rung it passed (the fields that let it through)."""
    failing = [c["id"] for r in g["rungs"] for c in r["checks"] if not c["passed"]][:2]
    text = f"rung {g['rung']['index']}; failing {', '.join(failing) or 'none'}"
    if gen.limit <= FIVE_SIXTHS + 1e-9 and len(g["rungs"]) >= 5 and g["rungs"][4]["examined"]:
        passed = [c["id"] for c in g["rungs"][4]["checks"] if c["passed"]]
        if g["reward"] >= gen.limit - 1e-9:
            text = (f"rung {g['rung']['index']}: rung 5 let it pass on {', '.join(passed) or 'no check'} "
                    f"({g['rungs'][4]['failed']} failed, {g['rungs'][4]['may_fail']} may fail)")
        elif passed:
            text += f"; rung 5 passed only {', '.join(passed)}"
    return text


def mutation_summary(task: Task, registry: Registry | None = None, threshold: float = 0.9,
                     log: Callable[[str], None] | None = None, workers: int | None = None) -> dict[str, Any]:
    """The mutation analysis of the task's hidden scenarios plus probes (recon.mutation):
    ``{"summary", "survivors", "hidden_only"}``, kept by the digest of exactly what it
    depends on -- the oracle's code, the reference program, the task key, the scenarios
    and their truths, the outputs and the probe count -- so that validating the same task
    again, or a rebuild that changed only a baseline, the instruction or the evidence
    level, costs nothing."""

    if task.root is None:  # pragma: no cover - validate checked it
        raise TaskError("mutation analysis needs the whole task")
    from .mutation.operators import OPERATORS  # noqa: PLC0415 - start-up: as mutation_score below

    meta = task.meta
    oracle = resolve_oracle(task, registry)
    ident = canonjson.dumps_compact({
        "oracle": [oracle.name, oracle.version, oracle.source_digest()],
        "reference": sha256_file(task.root / "solution" / "reconstruct.py"),
        "scenarios": [tree_digest(task.tests / "public"), tree_digest(task.tests / "hidden")],
        "key": meta["task_key"], "spec": meta["spec"], "outputs": meta["outputs"], "probes": meta.get("probes"),
        "recon": __version__, "threshold": threshold, "operators": sorted(OPERATORS)})
    cache = recon_home() / "cache" / "mutation" / f"{hashlib.sha256(ident.encode()).hexdigest()[:32]}.json"
    doc: dict[str, Any] | None = None
    if cache.is_file():
        try:
            doc = canonjson.read(cache)
        except (OSError, ValueError):
            doc = None
    if doc is None:
        from .mutation.analysis import mutation_score  # noqa: PLC0415 - start-up: validate without mutation analysis imports none of it

        rep = mutation_score(task.root, threshold=threshold, registry=registry, log=log, workers=workers)
        doc = {"summary": rep.summary(), "survivors": [r.mutant.describe() for r in rep.survivors],
               "hidden_only": [r.mutant.describe() for r in rep.hidden_only]}
        try:
            cache.parent.mkdir(parents=True, exist_ok=True)
            canonjson.write(cache, doc)
        except OSError:
            pass  # a cache: validate never fails for it
    return doc


def mutation_row(task: Task, registry: Registry, threshold: float,
                 log: Callable[[str], None] | None = None, workers: int | None = None) -> ValidationRow:
    """The validate row for :func:`mutation_summary`."""
    doc = mutation_summary(task, registry, threshold, log, workers)
    s = doc["summary"]
    detail = (f"hidden + probes kill {s['score']:.3f} ± {s['score_error']:.3f} of {s['non_equivalent']} "
              f"non-equivalent mutants (public {s['score_public']:.3f}); {s['equivalent']} equivalent, "
              f"{s['undecided']} undecided; {s['hidden_only']} hidden-only")
    if not s["passed"] and doc["survivors"]:
        detail += "; missed: " + "; ".join(doc["survivors"][:3])
    return ValidationRow("mutation score", f">= {threshold:g}", s["score"], bool(s["passed"]), detail)


#: the largest share of the generator a wrong field may cover and still escape 5 % of gradings
POWER_RATE = 0.05
POWER_CONFIDENCE = 0.95


def detectable_rate(graded: int, confidence: float = POWER_CONFIDENCE) -> float:
    """The smallest share p of scenarios on which a field may be wrong and still be caught
    with ``confidence`` by ``graded`` independent scenarios: 1 - (1 - p)^n = confidence."""
    return 1.0 if graded <= 0 else 1.0 - (1.0 - confidence) ** (1.0 / graded)


def power_row(task: Task) -> ValidationRow:
    """Per field, the smallest wrong rate the graded set (hidden scenarios plus the probes
    of one grading) catches in 95 % of gradings. Every graded scenario checks every
    field, so the rate is one number; it must not exceed 5 % (59 graded scenarios)."""
    n = len(task.meta["hidden"]) + int(task.meta.get("probes", 3))
    rate = detectable_rate(n)
    need = next(k for k in range(1, 10_000) if detectable_rate(k) <= POWER_RATE)
    fields = len(task.outputs)
    detail = (f"each of the {fields} fields is checked on {n} graded scenarios per grading "
              f"({len(task.meta['hidden'])} hidden + {task.meta.get('probes', 3)} probes): a field wrong on "
              f"{100 * rate:.1f} % of the generator escapes 5 % of gradings")
    if rate > POWER_RATE:
        detail += f"; {need} graded scenarios reach {100 * POWER_RATE:.0f} % (raise n_hidden or probes)"
    return ValidationRow("power", f"<= {100 * POWER_RATE:.0f} %", round(rate, 4), rate <= POWER_RATE, detail)


def fairness_row(task: Task, oracle: Oracle, runtime: Runtime, registry: Registry,
                 log: Callable[[str], None] | None = None, memo: RunMemo | None = None,
                 probe_cache: Path | None = None) -> ValidationRow:
    """The fairness audit (recon.audit) over the oracle's baselines, its ``independent/``
    programs and the reference's variants a stress selection revealed: no graded cell a
    program fails while it passes that field publicly. ``memo`` and ``probe_cache``: the
    baselines' runs and probes their gradings made."""
    rep = audit_baselines(task, oracle, runtime=runtime, registry=registry, log=log, memo=memo,
                          probe_cache=probe_cache)
    n = len(rep.programs)
    if not n:
        return ValidationRow("fairness", "0 hidden-only", 0, True,
                             "no baseline, independent program or variant to audit")
    bad = [f"{p.label}: {f.field} ({len(f.graded_failed) - len(f.explained)} cell(s)"
           + (f", a knife edge along {f.knife_edge['axis']}" if f.knife_edge else "") + ")"
           for p in rep.programs for f in p.hidden_only]
    beside = sum(len(f.explained) for p in rep.programs for f in p.fields.values()
                 if not f.public_failed and not f.shown_by)
    sibling = sum(len(f.graded_failed) for p in rep.programs for f in p.fields.values() if f.shown_by)
    notes = ([f"{beside} graded cell(s) fail only beside a published failure of a field they are computed from"]
             if beside else []) + ([f"{sibling} graded cell(s) fail a field whose rule fails publicly on another "
                                    "input"] if sibling else [])
    also = f" ({'; '.join(notes)})" if notes else ""
    detail = (f"{n} program(s) on {rep.graded} graded scenarios: every failure also shows publicly{also}" if not bad
              else "hidden-only: " + "; ".join(bad[:4]) + " (recon audit lists the scenarios that would show them)")
    return ValidationRow("fairness", "0 hidden-only", len(bad), not bad, detail)


def validate(task_dir: Path | str, *, runtime: str | Runtime = "auto", registry: Registry | None = None,
             report: Callable[[ValidationRow], None] | None = None, mutation: float | None = 0.9,
             fairness: bool = True, workers: int | None = None,
             log: Callable[[str], None] | None = None) -> tuple[list[ValidationRow], int]:
    """Run every check; returns the rows and the task's work W.

    ``mutation``: the share of non-equivalent mutants of the reference that the hidden
    scenarios plus probes must kill (None: skip the mutation analysis, which takes minutes).
    ``fairness``: audit the oracle's baselines and independent programs for hidden-only
    failures. ``workers``: parallel runs and mutation workers (default: cores).
    """
    task = load_task(task_dir)
    if task.root is None or task.app_dir is None:
        raise TaskError(f"{task_dir} is not a whole built task (needs environment/app and solution/)")
    oracle = resolve_oracle(task, registry)
    # Resolve once; every grading below reuses this registry instead of loading plugins again.
    reg = Registry()
    reg.register(oracle, f"resolved for {task.meta['task']}")
    rt = runtime if isinstance(runtime, Runtime) else get_runtime(runtime)
    reference = task.root / "solution" / "reconstruct.py"
    rows: list[ValidationRow] = []

    def add(row: ValidationRow) -> None:
        rows.append(row)
        if report:
            report(row)

    def fresh_app(tmp: Path) -> Path:
        app = tmp / "app"
        shutil.copytree(task.app_dir, app, symlinks=True)  # type: ignore[arg-type]
        return app

    # One nonce for the gradings below, fresh for each validate: they are graded on the
    # same probes, drawn once (the oracle's share of a grading is mostly its probes).
    nonce = secrets.token_hex(8)

    with tempfile.TemporaryDirectory(prefix="recon-validate-") as tmpd:
        tmp = Path(tmpd)
        probes = tmp / "probes"

        def graded(label: str, ws: Path, *, warm: bool = True) -> dict[str, Any]:
            return grade(task, ws, runtime=rt, registry=reg, workspace_label=label, workers=workers, nonce=nonce,
                         probe_cache=probes, warm=warm)

        # 1. the reference solution, installed by solve.sh, graded cold as the verifier
        # grades it (the generated controls and the baselines below run in warm sessions:
        # what they show does not depend on start-up time)
        app = fresh_app(tmp / "reference")
        try:
            install_solution(task, app)
        except TaskError as exc:
            add(ValidationRow("reference", "= 1.0", None, False, f"solve.sh failed: {exc.message}"))
        else:
            g = graded("reference", app / "workspace", warm=False)
            bad = [c for r in g["rungs"] for c in r["checks"] if not c["passed"]][:1]
            add(ValidationRow("reference", "= 1.0", g["reward"], g["reward"] == 1.0,
                              "all rungs pass" if not bad else f"{bad[0]['id']}: {bad[0]['reason']}"))
        # 2. the untouched workspace
        app = fresh_app(tmp / "untouched")
        g = graded("untouched", app / "workspace", warm=False)
        add(ValidationRow("untouched workspace", "= 0", g["reward"], g["reward"] == 0.0, f"rung {g['rung']['index']}"))
        # 3. generated submissions: cheats that must stay below 5/6, and the reference
        # with one field past its tolerance (below 1.0)
        for gen in GENERATED:
            app = fresh_app(tmp / gen.name.replace(" ", "_"))
            ws = app / "workspace"
            gen.write(ws, task, reference)
            g = graded(gen.name.replace(" ", "_"), ws)
            add(ValidationRow(gen.name, gen.expectation, g["reward"], g["reward"] < gen.limit - 1e-9,
                              _generated_detail(g, gen)))
        # 4. baselines: plausible programs written from the instruction alone (recon.audit);
        # one that reaches 1.0 means the instruction gives the recipe away. Their probes are
        # the fairness audit's first draw, and their runs are kept for it (memo): the audit
        # runs each of them only on what the gradings did not.
        memo = RunMemo.kept(task.limits, oracle)
        for b in grade_baselines(task, oracle, runtime=rt, registry=reg, probe_cache=probes, nonce=DEFAULT_NONCES[0],
                                 memo=memo):
            add(ValidationRow(f"baseline {b.name}", "< 1.0", b.reward, b.passed, f"rung {b.rung}; {b.detail}"))
        # 5. leaks (recon.leaks) and 6. manifest
        leaks = leak_audit(task, oracle)
        add(ValidationRow("leak audit", "no findings", None, not leaks, "; ".join(leaks[:3]) if leaks else
                          "the agent's side holds no hidden value, recipe sentence, oracle source or solution"))
        altered = manifest_audit(task.app_dir)
        add(ValidationRow("manifest hashes", "all match", None, not altered,
                          ", ".join(altered[:5]) if altered else "every published file matches manifest.json"))
        # 7. how well the hidden set catches wrong programs: single-edit mutants of the
        # reference, then any program wrong on a share of the generator (power)
        if mutation is not None:
            add(mutation_row(task, reg, mutation, log, workers))
        add(power_row(task))
        # 8. fairness: what the graded set catches in independent programs, some published
        # scenario shows
        if fairness:
            add(fairness_row(task, oracle, rt, reg, log, memo, probes))
        memo.save()
        if log is not None and memo.kept_hits:
            log(f"kept runs: {memo.kept_hits} runs of the baselines and independent programs, made by the task's "
                "build or an earlier validate")
    return rows, count_work(reference.read_text(encoding="utf-8"))
