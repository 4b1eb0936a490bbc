"""The six-rung ladder grader (DESIGN §6).

``grade`` runs an untrusted workspace through a sandbox runtime on the public
scenarios, the hidden scenarios and fresh probes drawn now from the private oracle,
evaluates each rung's checks (a rung is examined only when the one below passed) and
returns the grading document that ``write_outputs`` turns into reward.txt,
reward.json and grading.json.
"""
from __future__ import annotations

import datetime as _dt
import importlib
import hashlib
import os
import secrets
import stat
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from . import __version__, canonjson, compare
from .errors import TaskError
from .ladder import Ladder, load_ladder, score
from .oracle import Oracle
from .registry import Registry
from .runtimes.base import Limits, RunResult, Runtime, get_runtime
from .sweep import Scenario, SweepSpec, probe_scenarios, run_scenario
from .task import ScenarioDir, Task, load_task

__all__ = ["grade", "write_outputs", "render_table", "resolve_oracle", "MAX_SOURCE_BYTES"]

MAX_SOURCE_BYTES = 5 << 20
IGNORED_NAMES = {"__pycache__", ".ipynb_checkpoints"}


@dataclass
class Graded:
    """A scenario the submission is run on, with the truth."""

    id: str
    document: dict[str, Any]
    truth: dict[str, Any]
    inputs: dict[str, Path]
    kind: str  # public, hidden or probe

    @property
    def parameters(self) -> dict[str, Any]:
        return dict(self.document["parameters"])


@dataclass
class Outcome:
    graded: Graded
    result: RunResult
    output: Any
    problems: list[str]  # why it does not speak the contract (empty: it does)

    @property
    def ok(self) -> bool:
        return not self.problems


def resolve_oracle(task: Task, registry: Registry | None = None) -> Oracle:
    """The oracle a task was built from, at the version it was built with."""
    name = task.name
    if registry is not None:
        reg = registry
    else:
        # Load only as much as needed, so an unrelated broken plugin cannot stop a grading.
        reg = Registry()
        reg.load_builtins()
        if name not in reg:
            reg.load_entry_points()
    if name not in reg and task.meta.get("plugin_module"):
        # A third-party package vendored into the verifier side at build time.
        vendored = str(task.tests / "vendor" / "plugins")
        if vendored not in sys.path:
            sys.path.insert(0, vendored)
        mod = str(task.meta["plugin_module"])
        try:
            module = importlib.import_module(mod)
        except Exception as exc:  # noqa: BLE001 - reported as the plugin's failure
            raise TaskError(f"the vendored oracle module {mod} failed to import: {type(exc).__name__}: {exc}",
                            hint="install the oracle's toolkit, or rebuild the task") from None
        reg.load_module(module, f"vendored module {mod}")
    if name not in reg and task.plugin_path() is not None:
        reg.load_plugin_file(task.plugin_path())  # type: ignore[arg-type]
    o = reg.get(name)
    if o.version != task.meta["oracle_version"]:
        raise TaskError(f"task {task.meta['task']} was built with oracle {name} {task.meta['oracle_version']}, "
                        f"but the installed oracle is {o.version}",
                        hint="rebuild the task, or install the oracle version it was built with")
    return o


def _from_dir(sd: ScenarioDir, kind: str) -> Graded:
    return Graded(sd.id, sd.document, sd.truth, sd.input_files(), kind)


def _starter_changed(workspace: Path, starter: dict[str, str]) -> tuple[bool, str]:
    if not workspace.is_dir():
        return False, f"the workspace {workspace} does not exist"
    changed: list[str] = []
    seen: set[str] = set()
    for root, dirs, files in os.walk(workspace):
        dirs[:] = sorted(d for d in dirs if d not in IGNORED_NAMES)
        for fname in sorted(files):
            p = Path(root) / fname
            rel = p.relative_to(workspace).as_posix()
            if fname.endswith(".pyc"):
                continue
            seen.add(rel)
            st = p.lstat()
            if stat.S_ISLNK(st.st_mode):
                digest = hashlib.sha256(os.readlink(p).encode()).hexdigest()
            elif stat.S_ISREG(st.st_mode):
                h = hashlib.sha256()
                with open(p, "rb") as f:
                    for chunk in iter(lambda: f.read(1 << 20), b""):
                        h.update(chunk)
                digest = h.hexdigest()
            else:
                digest = "special"
            if starter.get(rel) != digest:
                changed.append(rel)
    if changed:
        return True, f"{len(changed)} file(s) written by the agent, e.g. {changed[0]}"
    removed = sorted(set(starter) - seen)
    if removed:
        return True, f"starter file {removed[0]} was removed"
    return False, "the workspace is the untouched starter"


def _source_checks(workspace: Path) -> tuple[tuple[bool, str], tuple[bool, str]]:
    p = workspace / "reconstruct.py"
    try:
        st = p.lstat()
    except OSError:
        return (False, "reconstruct.py does not exist"), (False, "nothing to compile")
    if not stat.S_ISREG(st.st_mode):
        return (False, "reconstruct.py is not a regular file"), (False, "nothing to compile")
    if st.st_size > MAX_SOURCE_BYTES:
        return (True, "reconstruct.py exists"), (False, f"reconstruct.py is larger than {MAX_SOURCE_BYTES >> 20} MiB")
    try:
        source = p.read_bytes()
        compile(source, "reconstruct.py", "exec", dont_inherit=True)  # compiles; never executes
    except SyntaxError as exc:
        return (True, "reconstruct.py exists"), (False, f"syntax error at line {exc.lineno}: {exc.msg}")
    except (ValueError, OSError) as exc:
        return (True, "reconstruct.py exists"), (False, f"does not compile: {exc}")
    return (True, "reconstruct.py exists"), (True, "compiles")


def _check(cid: str, passed: bool, reason: str, **extra: Any) -> dict[str, Any]:
    return {"id": cid, "passed": bool(passed), "reason": reason, **extra}


def _same_output(fields: dict[str, dict[str, Any]], a: dict[str, Any], b: dict[str, Any]) -> bool:
    return all(n in a and n in b and compare.within(s, a[n], b[n]) for n, s in fields.items())


def _replay_check(fields: dict[str, dict[str, Any]], graded: list[Outcome], public: list[Graded]) -> dict[str, Any]:
    replays = []
    for oc in graded:
        for p in public:
            if _same_output(fields, oc.output, p.truth) and not _same_output(fields, oc.graded.truth, p.truth):
                replays.append(f"{oc.graded.id}~{p.id}")
                break
    if replays:
        return _check("replay", False, f"outputs replay published oracle outputs: {', '.join(replays)}")
    return _check("replay", True, f"no output of {len(graded)} graded scenarios replays a published one")


def _variance_check(fields: dict[str, dict[str, Any]], graded: list[Outcome]) -> dict[str, Any]:
    if len(graded) < 2:
        return _check("variance", True, "fewer than two graded scenarios")
    constant = []
    varying = 0
    for name, spec in sorted(fields.items()):
        truths = [oc.graded.truth[name] for oc in graded]
        if all(compare.within(spec, t, truths[0]) for t in truths[1:]):
            continue
        varying += 1
        outs = {canonjson.dumps_compact(oc.output[name]) for oc in graded}
        if len(outs) == 1:
            constant.append(name)
    if constant:
        return _check("variance", False, f"constant where the truth varies: {', '.join(constant)}")
    return _check("variance", True, f"all {varying} fields that vary in the truth vary in the outputs")


def _response_check(fields: dict[str, dict[str, Any]], graded: list[Outcome]) -> dict[str, Any]:
    pairs = 0
    dead = []
    for i, a in enumerate(graded):
        for b in graded[i + 1:]:
            pa, pb = a.graded.parameters, b.graded.parameters
            diff = [k for k in pa if pa[k] != pb.get(k)]
            if len(diff) != 1:
                continue
            if _same_output(fields, a.graded.truth, b.graded.truth):
                continue
            pairs += 1
            if canonjson.dumps_compact(a.output) == canonjson.dumps_compact(b.output):
                dead.append(f"{a.graded.id}/{b.graded.id} ({diff[0]})")
    if dead:
        return _check("response", False, f"output did not change when the truth did: {', '.join(dead)}")
    if pairs == 0:
        return _check("response", True, "no pair of graded scenarios differs in exactly one axis with a changed truth")
    return _check("response", True, f"outputs respond in all {pairs} one-axis pairs")


def _run_all(runtime: Runtime, workspace: Path, items: list[Graded], limits: Limits, app_dir: Path | None,
             fields: dict[str, dict[str, Any]], workers: int, progress: Callable[[int], None] | None) -> list[Outcome]:
    def one(g: Graded) -> Outcome:
        res = runtime.run(workspace, dict(g.document), g.inputs, limits, app_dir=app_dir)
        if progress:
            progress(1)
        fail = res.failure()
        if fail is not None:
            return Outcome(g, res, None, [fail])
        value, why = compare.parse_stdout(res.stdout)
        if why is not None:
            return Outcome(g, res, None, [why])
        return Outcome(g, res, value, compare.contract_errors(fields, value))

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        return list(pool.map(one, items))


def grade(
    task: Task | Path | str,
    workspace: Path | str,
    *,
    runtime: str | Runtime = "auto",
    nonce: str | None = None,
    probes: int | None = None,
    ladder: str | None = None,
    timeout: float | None = None,
    registry: Registry | None = None,
    workspace_label: str | None = None,
    workers: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Grade ``workspace`` on ``task``; returns the grading document."""
    t_start = time.perf_counter()
    if not isinstance(task, Task):
        task = load_task(task)
    workspace = Path(workspace).absolute()
    lad: Ladder = load_ladder(ladder or task.meta.get("ladder", "six_rung"), [task.tests / "ladders"])
    fields = task.outputs
    limits = task.limits
    if timeout is not None:
        if not (0 < timeout <= 3600):
            raise TaskError(f"--timeout {timeout} must be seconds in (0, 3600]")
        limits = Limits(**{**limits.to_json(), "wall": float(timeout), "cpu": int(max(2 * timeout, 10))})
    n_probes = int(task.meta.get("probes", 3) if probes is None else probes)
    if n_probes < 0 or n_probes > 100:
        raise TaskError(f"--probes {n_probes} must be in [0, 100]")
    nonce = nonce if nonce is not None else secrets.token_hex(8)
    rt = runtime if isinstance(runtime, Runtime) else get_runtime(runtime)
    workers = workers or os.cpu_count() or 1

    public = [_from_dir(sd, "public") for sd in task.public()]
    hidden = [_from_dir(sd, "hidden") for sd in task.hidden()]
    rungs_out: list[dict[str, Any]] = []
    outcomes: list[list[bool] | None] = []
    runs = 0
    t_runs = 0.0
    probe_docs: list[dict[str, Any]] = []
    t_oracle = 0.0

    with tempfile.TemporaryDirectory(prefix="recon-grade-") as tmp:
        probe_cache: list[Graded] | None = None

        def graded_set() -> list[Graded]:
            """Hidden scenarios plus the probes, drawn (once) when a rung first needs them:
            fresh scenarios from the private oracle, keyed by the task key and the nonce."""
            nonlocal probe_cache, t_oracle
            if probe_cache is None:
                probe_cache = []
                if n_probes:
                    oracle = resolve_oracle(task, registry)
                    spec = SweepSpec(**{k: task.meta["spec"][k] for k in ("n_public", "n_hidden", "seed", "axes")})
                    taken = [Scenario(g.id, g.parameters) for g in public]
                    graded_sc = [Scenario(g.id, g.parameters) for g in hidden]
                    t0 = time.perf_counter()
                    key = bytes.fromhex(task.meta["task_key"])
                    for sc in probe_scenarios(oracle, spec, key, nonce, n_probes, taken, graded_sc):
                        d = Path(tmp) / sc.id
                        run = run_scenario(oracle, sc, d, evidence=False)
                        doc = canonjson.read(d / "scenario.json")
                        probe_cache.append(Graded(sc.id, doc, run.output, {k: d / v for k, v in doc["inputs"].items()}, "probe"))
                        probe_docs.append({"id": sc.id, "parameters": sc.parameters})
                    t_oracle = time.perf_counter() - t0
            return hidden + probe_cache

        state: dict[str, Any] = {}
        for rung in lad.rungs:
            if outcomes and (outcomes[-1] is None or not all(outcomes[-1])):
                outcomes.append(None)
                rungs_out.append({"index": rung.index, "name": rung.name, "description": rung.description,
                                  "examined": False, "passed": False, "fraction": 0.0, "checks": []})
                continue
            checks: list[dict[str, Any]] = []
            for family in rung.checks:
                if family == "workspace_changed":
                    ok, why = _starter_changed(workspace, task.meta.get("starter", {}))
                    checks.append(_check("workspace_changed", ok, why))
                elif family in ("reconstruct_exists", "reconstruct_compiles"):
                    if "source" not in state:
                        state["source"] = _source_checks(workspace)
                    ok, why = state["source"][0 if family == "reconstruct_exists" else 1]
                    checks.append(_check(family, ok, why))
                elif family in ("public_contract", "graded_contract"):
                    items = public if family == "public_contract" else graded_set()
                    t0 = time.perf_counter()
                    res = _run_all(rt, workspace, items, limits, task.app_dir, fields, workers, progress)
                    t_runs += time.perf_counter() - t0
                    runs += len(res)
                    state[family] = res
                    for oc in res:
                        reason = "exit 0, every field of the right kind" if oc.ok else "; ".join(oc.problems)
                        checks.append(_check(f"{family}:{oc.graded.id}", oc.ok, reason, scenario=oc.graded.id,
                                             seconds=round(oc.result.seconds, 3)))
                elif family in ("replay", "variance", "response", "graded_match"):
                    graded_res: list[Outcome] = state.get("graded_contract") or []
                    if not graded_res:
                        t0 = time.perf_counter()
                        graded_res = _run_all(rt, workspace, graded_set(), limits, task.app_dir, fields, workers, progress)
                        t_runs += time.perf_counter() - t0
                        runs += len(graded_res)
                        state["graded_contract"] = graded_res
                    usable = [oc for oc in graded_res if oc.ok]
                    if family == "replay":
                        checks.append(_replay_check(fields, usable, public))
                    elif family == "variance":
                        checks.append(_variance_check(fields, usable))
                    elif family == "response":
                        checks.append(_response_check(fields, usable))
                    else:
                        for oc in graded_res:
                            for name, fspec in sorted(fields.items()):
                                if not oc.ok or not isinstance(oc.output, dict) or name not in oc.output:
                                    checks.append(_check(f"graded_match:{oc.graded.id}:{name}", False, "no usable output",
                                                         scenario=oc.graded.id, field=name))
                                    continue
                                ok, detail = compare.check(fspec, oc.output[name], oc.graded.truth[name])
                                checks.append(_check(f"graded_match:{oc.graded.id}:{name}", ok, detail or "within tolerance",
                                                     scenario=oc.graded.id, field=name, got=oc.output[name],
                                                     want=oc.graded.truth[name], tolerance=compare.describe(fspec)))
                else:  # pragma: no cover - the ladder schema only admits known families
                    raise TaskError(f"ladder {lad.name}: unknown check family {family!r}")
            results = [c["passed"] for c in checks]
            outcomes.append(results)
            passed = bool(results) and all(results)
            rungs_out.append({"index": rung.index, "name": rung.name, "description": rung.description,
                              "examined": True, "passed": passed,
                              "fraction": round(sum(results) / len(results), 6) if results else 0.0, "checks": checks})

    reward, k, f = score(outcomes)
    reward = round(reward, 6)
    return {
        "reward": reward,
        "binary": 1 if k == len(lad.rungs) else 0,
        "rung": {"index": k, "name": lad.rung_name(k)},
        "next_rung_fraction": round(f, 6),
        "ladder": lad.name,
        "rungs": rungs_out,
        "runs": runs,
        "nonce": nonce,
        "probes": probe_docs,
        "runtime": rt.name,
        "runtime_warnings": rt.warnings(),
        "limits": limits.to_json(),
        "task": task.meta["task"],
        "oracle": task.name,
        "oracle_version": task.meta["oracle_version"],
        "recon_version": __version__,
        "task_recon_version": task.meta.get("recon_version"),
        "workspace": workspace_label or str(workspace),
        "graded_at": _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
        "timings": {"total": round(time.perf_counter() - t_start, 3), "runs_wall": round(t_runs, 3),
                    "probe_oracle": round(t_oracle, 3),
                    "run_seconds": round(sum(c.get("seconds", 0.0) for r in rungs_out for c in r["checks"]), 3)},
    }


def write_outputs(grading: dict[str, Any], out_dir: Path | str) -> None:
    """Write reward.txt, reward.json and grading.json into ``out_dir`` (atomically each)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files = {
        "reward.txt": f"{grading['reward']}\n",
        "reward.json": canonjson.dumps({"reward": grading["reward"], "binary": grading["binary"]}),
        "grading.json": canonjson.dumps(grading),
    }
    for name, text in files.items():
        fd, tmp = tempfile.mkstemp(dir=out, prefix=f".{name}.")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(text.encode("utf-8"))
            os.chmod(tmp, 0o644)
            os.replace(tmp, out / name)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise


def render_table(grading: dict[str, Any]) -> str:
    """The ladder as a small table: rung, name, status, checks passed."""
    lines = [f"{'rung':<5} {'name':<28} {'status':<12} checks"]
    for r in grading["rungs"]:
        n = len(r["checks"])
        passed = sum(1 for c in r["checks"] if c["passed"])
        status = "PASS" if r["passed"] else ("not examined" if not r["examined"] else "FAIL")
        counts = f"{passed}/{n}" if r["examined"] else "-"
        lines.append(f"{r['index']:<5} {r['name']:<28} {status:<12} {counts}")
        if r["examined"] and not r["passed"]:
            for c in [c for c in r["checks"] if not c["passed"]][:3]:
                lines.append(f"{'':<5}   {c['id']}: {c['reason'][:110]}")
    lines.append(f"reward {grading['reward']:.4f}  (rung {grading['rung']['index']}: {grading['rung']['name']}; "
                 f"binary {grading['binary']}; {grading['runs']} runs; nonce {grading['nonce']})")
    return "\n".join(lines)

