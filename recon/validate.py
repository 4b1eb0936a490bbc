"""``recon validate``: prove a built task is sound (DESIGN §8).

Replays in fresh sandboxes: the reference solution (exactly 1.0), the untouched
workspace (0), a constant-output and a replay submission (below 5/6), the reference
with one field pushed past its tolerance (below 1.0); audits the agent's side for
leaks and the published files against their manifest hashes.
"""
from __future__ import annotations

import io
import json
import math
import shutil
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from . import canonjson
from .errors import TaskError
from .fsutil import sha256_file
from .grader import grade, resolve_oracle
from .registry import Registry
from .run import install_solution
from .runtimes.base import Runtime, get_runtime
from .task import Task, load_task

__all__ = ["validate", "ValidationRow", "count_work", "leak_audit", "manifest_audit", "perturbed_value"]

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


def _write_submission(ws: Path, kind: str, task: Task, reference: Path) -> None:
    public = task.public()
    fields = task.outputs
    if kind == "constant":
        out = public[0].truth
        (ws / "reconstruct.py").write_text(
            "# Constant: prints one published output whatever the scenario.\n"
            "import json, sys\nsys.stdin.read()\nOUT = " + repr(out) + "\nprint(json.dumps(OUT))\n")
    elif kind == "replay":
        table = [{"p": sd.parameters, "o": sd.truth} for sd in public]
        axes = task.meta["axes"]
        (ws / "reconstruct.py").write_text(REPLAY_TEMPLATE.format(table=repr(table), axes=repr(axes)))
    elif kind == "one_field_off":
        numeric = [n for n, s in sorted(fields.items()) if s["kind"] in ("number", "integer", "angle")]
        field = numeric[0] if numeric else sorted(fields)[0]
        shutil.copyfile(reference, ws / "_reference.py")
        (ws / "reconstruct.py").write_text(OFF_TEMPLATE.format(field=field, spec=repr(fields[field])))
    else:  # pragma: no cover
        raise ValueError(kind)


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
            import hashlib  # noqa: PLC0415

            if hashlib.sha256(f.read()).hexdigest() != digest:
                problems.append(rel)
    return problems


def _agent_side_texts(env: Path) -> list[tuple[str, bytes]]:
    """Every file under environment/, with the members of every archive opened."""
    out: list[tuple[str, bytes]] = []
    for p in sorted(env.rglob("*")):
        if not p.is_file():
            continue
        data = p.read_bytes()
        out.append((p.relative_to(env).as_posix(), data))
        if p.name.endswith((".tar.gz", ".tgz", ".tar")):
            with tarfile.open(fileobj=io.BytesIO(data)) as tar:
                for m in tar.getmembers():
                    f = tar.extractfile(m) if m.isfile() else None
                    if f is not None:
                        out.append((f"{p.relative_to(env).as_posix()}!{m.name}", f.read()))
    return out


def _distinctive(value: Any) -> list[str]:
    """String forms of a value specific enough that finding one means a leak."""
    if isinstance(value, bool) or value is None:
        return []
    if isinstance(value, float):
        if not math.isfinite(value) or value == 0:
            return []
        text = repr(value)
        return [text] if len(text.lstrip("-").replace(".", "").lstrip("0")) >= 5 else []
    if isinstance(value, int):
        return [str(value)] if abs(value) >= 100000 else []
    if isinstance(value, str):
        return [json.dumps(value)] if len(value) >= 12 else []
    if isinstance(value, list):
        return [s for v in value for s in _distinctive(v)]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _distinctive(v)]
    return []


def leak_audit(task: Task, oracle_files: list[Path]) -> list[str]:
    """Findings: hidden values, oracle source or solution files on the agent's side."""
    if task.root is None:
        raise TaskError("leak audit needs the whole task (environment/ and solution/), not just tests/")
    env = task.root / "environment"
    texts = _agent_side_texts(env)
    findings: list[str] = []
    needles: dict[str, str] = {}
    for sd in task.hidden():
        for k, v in sd.parameters.items():
            for s in _distinctive(v):
                needles[s] = f"hidden parameter {sd.id}.{k}"
        for k, v in sd.truth.items():
            for s in _distinctive(v):
                needles[s] = f"hidden output {sd.id}.{k}"
    public_values = set()
    for axis in task.meta["axes"].values():  # choices are published in manifest.json
        for choice in axis.get("choices", []):
            public_values.update(_distinctive(choice))
    for sd in task.public():
        for v in [*sd.parameters.values(), *sd.truth.values()]:
            public_values.update(_distinctive(v))
    for needle, what in sorted(needles.items()):
        if needle in public_values:
            continue  # the same value is published legitimately
        b = needle.encode()
        for name, data in texts:
            if b in data:
                findings.append(f"{what} ({needle}) appears in environment/{name}")
                break
    src_lines: set[bytes] = set()
    for f in oracle_files:
        for raw in f.read_bytes().splitlines():
            stripped = raw.strip()
            if len(stripped) >= 40 and not stripped.startswith((b"#", b'"""', b"'''")):
                src_lines.add(stripped)
    for name, data in texts:
        hits = sum(1 for ln in data.splitlines() if ln.strip() in src_lines)
        if hits >= 3:
            findings.append(f"environment/{name} contains {hits} lines of the oracle's source")
    sol = task.root / "solution"
    sol_hashes = {sha256_file(p): p.name for p in sol.rglob("*") if p.is_file()}
    for name, data in texts:
        import hashlib  # noqa: PLC0415

        h = hashlib.sha256(data).hexdigest()
        if h in sol_hashes:
            findings.append(f"environment/{name} is a copy of solution/{sol_hashes[h]}")
        base = name.rsplit("/", 1)[-1]
        if base in ("test.sh", "grader.json", "solve.sh") or base.startswith("hidden_"):
            findings.append(f"environment/{name} is a verifier or solution file")
    return findings


def validate(task_dir: Path | str, *, runtime: str | Runtime = "auto", registry: Registry | None = None,
             report: Callable[[ValidationRow], None] | None = None) -> tuple[list[ValidationRow], int]:
    """Run every check; returns the rows and the task's work W."""
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

    def graded(label: str, ws: Path) -> dict[str, Any]:
        return grade(task, ws, runtime=rt, registry=reg, workspace_label=label)

    with tempfile.TemporaryDirectory(prefix="recon-validate-") as tmpd:
        tmp = Path(tmpd)
        # 1. the reference solution, installed by solve.sh
        app = fresh_app(tmp / "reference")
        try:
            install_solution(task, app)
        except TaskError as exc:
            add(ValidationRow("reference", "= 1.0", None, False, f"solve.sh failed: {exc.message}"))
        else:
            g = graded("reference", app / "workspace")
            bad = [c for r in g["rungs"] for c in r["checks"] if not c["passed"]][:1]
            add(ValidationRow("reference", "= 1.0", g["reward"], g["reward"] == 1.0,
                              "all rungs pass" if not bad else f"{bad[0]['id']}: {bad[0]['reason']}"))
        # 2. the untouched workspace
        app = fresh_app(tmp / "untouched")
        g = graded("untouched", app / "workspace")
        add(ValidationRow("untouched workspace", "= 0", g["reward"], g["reward"] == 0.0, f"rung {g['rung']['index']}"))
        # 3-5. generated cheats and the key-step-removed reference
        for kind, expectation, limit in (("constant", "< 5/6", FIVE_SIXTHS), ("replay", "< 5/6", FIVE_SIXTHS),
                                         ("one_field_off", "< 1.0", 1.0)):
            app = fresh_app(tmp / kind)
            ws = app / "workspace"
            _write_submission(ws, kind, task, reference)
            if kind == "one_field_off":
                (ws / "recon_perturb.py").write_text(_perturb_module())
            g = graded(kind, ws)
            failing = [c["id"] for r in g["rungs"] for c in r["checks"] if not c["passed"]][:2]
            add(ValidationRow(kind.replace("_", " "), expectation, g["reward"], g["reward"] < limit - 1e-9,
                              f"rung {g['rung']['index']}; failing {', '.join(failing) or 'none'}"))
    # 6. leaks and 7. manifest
    oracle_files = [Path(oracle.source_file)]
    if oracle.reference is not None:
        oracle_files.append(oracle.reference)
    leaks = leak_audit(task, oracle_files)
    add(ValidationRow("leak audit", "no findings", None, not leaks, "; ".join(leaks[:3]) if leaks else "environment/ holds no hidden value, oracle source or solution"))
    altered = manifest_audit(task.app_dir)
    add(ValidationRow("manifest hashes", "all match", None, not altered, ", ".join(altered[:5]) if altered else "every published file matches manifest.json"))
    return rows, count_work(reference.read_text(encoding="utf-8"))
