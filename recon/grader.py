"""The six-rung ladder grader (DESIGN §6).

``grade`` snapshots the untrusted workspace once, then walks the ladder: each rung's
check families (the table in :mod:`recon.checks`) run against a shared
:class:`~recon.checks.GradingContext`, which runs the submission from the snapshot through
a sandbox runtime on the public scenarios, the hidden scenarios and fresh probes drawn
now from the private oracle. A rung is examined only when the one below passed. The
result is the grading document that ``write_outputs`` turns into reward.txt,
reward.json and grading.json.
"""
from __future__ import annotations

import base64
import binascii
import contextlib
import dataclasses
import datetime as _dt
import hashlib
import importlib
import importlib.metadata
import json
import os
import secrets
import shutil
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable

from . import canonjson, compare
from ._version import __version__
from .checks import CHECKS, MAX_SOURCE_BYTES, GradingContext, Graded, Outcome
from .errors import TaskError
from .fsutil import read_json_gz, read_private, write_json_gz, write_private
from .ladder import Ladder, load_ladder, score
from .oracle import Oracle
from .registry import Registry
from .runtimes.base import Limits, RunResult, Runtime, SessionPool
from .runtimes import get_runtime
from .runtimes.snapshot import snapshot_workspace, tree_digest
from .sweep import Scenario, SweepSpec, probe_scenarios, recon_home, run_scenario
from .task import ScenarioDir, Task, load_task

__all__ = ["grade", "write_outputs", "render_table", "resolve_oracle", "run_outcomes", "draw_probes", "graded_from",
           "MAX_SOURCE_BYTES"]

#: special files a snapshot skipped that grading.json lists by name
MAX_SKIPPED_LISTED = 20


def resolve_oracle(task: Task, registry: Registry | None = None) -> Oracle:
    """The oracle a task was built from, at the version it was built with."""
    name = task.name
    if registry is not None:
        reg = registry
    else:
        # Load only as much as needed, so an unrelated broken plugin cannot stop a grading.
        reg = Registry(tolerant=True)
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


#: timed-out runs after which a grading stops giving later runs the full wall limit
STRIKES = 2
#: what a run gets after the strikes: this many times the slowest run that finished ...
STRIKE_FACTOR = 3.0
#: ... but never less than this many seconds
STRIKE_FLOOR = 2.0
#: a grading's runs may use this share of (runs x the wall limit) in all
BUDGET_SHARE = 1 / 3
#: a run is charged at least this share of its wall time, whatever it waited for a CPU
CHARGE_FLOOR = 1 / 3
#: the budget's bound on a grading's wall time, in budgets (see :func:`charge`)
BUDGET_WALL = 2.0


def charge(res: RunResult) -> float:
    """What a run costs its grading's budget: its wall time, less the time its main thread
    was runnable but waiting for a CPU (``stall_seconds``: a machine busy with other work --
    other trials, a checkpoint series' gradings -- must not make an honest program look
    slow), but never less than the CPU time of everything it started, nor than
    :data:`CHARGE_FLOOR` of its wall time. A run that timed out is charged its wall time.

    The discount cannot be bought: the main thread waits for a CPU only while every CPU it
    may use is busy, so a run that keeps them busy itself pays for it in CPU time. On a
    machine with nothing else to do, a run's charge is at least half its wall time (main
    thread asleep half the time, waiting on its own busy child the other half), so a
    grading's runs take at most :data:`BUDGET_WALL` budgets; the floor bounds what a hole
    in the CPU accounting could give."""
    if res.timed_out or res.stall_seconds is None:
        return res.seconds
    own = max(res.seconds - res.stall_seconds, res.cpu_seconds or 0.0)
    return min(res.seconds, max(own, CHARGE_FLOOR * res.seconds))


class RunBudget:
    """What one grading lets a program's runs cost (the instruction states it).

    Every run may take the task's wall limit. A program that hangs costs every run its
    full limit, so after ``STRIKES`` runs of one grading time out, each later run gets
    ``STRIKE_FACTOR`` times the slowest run that finished (at least ``STRIKE_FLOOR`` s).
    And a grading's runs use at most ``BUDGET_SHARE`` of runs x limit seconds in all: a
    run is not started once that is spent (it fails with the reason); a run is charged its
    wall time less what it waited for a CPU (:func:`charge`). A program within the limits a
    correct program needs -- none of its runs times out, and on average they take under a
    third of the limit on a machine of their own -- never meets either rule, however busy
    the machine it is graded on.

    A run that times out with the full limit before the strikes is run once more, with
    the full limit again, and only a second timeout counts (a strike and a failed run):
    the first runs in a fresh container (cold caches, a busy engine) can take many times
    their usual time, and an honest program must not lose a run, or its later runs' full
    limit, to that. A program that hangs pays for it: at most ``STRIKES`` more runs."""

    def __init__(self, limits: Limits, runs: int) -> None:
        self.limits = limits
        self.total = max(runs, 1) * float(limits.wall) * BUDGET_SHARE
        self.spent = 0.0
        self.timeouts = 0
        self.retried = 0     # timeouts run again (see the class docstring)
        self.slowest = 0.0
        self._lock = threading.Lock()

    def retry(self, lim: Limits, res: RunResult) -> bool:
        """Whether a timed-out run ``res`` (run with ``lim``) is run once more; if so its
        time is spent, and only the second run's outcome is recorded."""
        with self._lock:
            if not (res.timed_out and lim.wall >= float(self.limits.wall) and self.timeouts < STRIKES
                    and self.spent + res.seconds < self.total):
                return False
            self.spent += charge(res)
            self.retried += 1
            return True

    def next_limits(self) -> Limits | str:
        """The limits for the next run, or why it is not started."""
        with self._lock:
            if self.spent >= self.total:
                return (f"not run: the grading's runs used their budget of {self.total:.0f} s "
                        f"({BUDGET_SHARE:.2g} of runs x the {self.limits.wall:g} s limit)")
            wall = float(self.limits.wall)
            if self.timeouts >= STRIKES:
                wall = min(wall, max(STRIKE_FLOOR, STRIKE_FACTOR * self.slowest))
            return Limits(**{**self.limits.to_json(), "wall": wall})

    def record(self, res: RunResult) -> None:
        with self._lock:
            self.spent += charge(res)
            if res.timed_out:
                self.timeouts += 1
            elif res.rejected is None:
                self.slowest = max(self.slowest, res.seconds)


def encode_run(r: RunResult, scenario: dict[str, Any] | None = None) -> dict[str, Any]:
    """A clean run as a kept file holds it (with the scenario it ran on, when known: its
    id and parameters, from which the oracle makes the document and inputs again). Its
    output is kept as text when it is UTF-8 (``stdout_text``: a JSON answer compresses
    well as itself, not as base64), else base64 (``stdout``)."""
    try:
        out: dict[str, str] = {"stdout_text": r.stdout.decode("utf-8")}
    except UnicodeDecodeError:
        out = {"stdout": base64.b64encode(r.stdout).decode("ascii")}
    return {"exit_code": r.exit_code, **out,
            "stderr_tail": r.stderr_tail, "seconds": round(r.seconds, 6),
            "cpu_seconds": None if r.cpu_seconds is None else round(r.cpu_seconds, 6),
            **({"scenario": scenario} if scenario is not None else {})}


def _reencoded(r: Any) -> Any:
    """A kept run in :func:`encode_run`'s present form (as it was when it cannot be read)."""
    run = decode_run(r)
    if run is None:
        return r
    return encode_run(run, r["scenario"] if isinstance(r.get("scenario"), dict) else None)


def decode_run(r: Any) -> RunResult | None:
    """:func:`encode_run`'s inverse (either form of the output); None for anything else."""
    try:
        text = r.get("stdout_text")
        stdout = text.encode("utf-8") if isinstance(text, str) else base64.b64decode(r["stdout"], validate=True)
        return RunResult(exit_code=r["exit_code"], stdout=stdout,
                         stderr_tail=str(r["stderr_tail"]), seconds=float(r["seconds"]),
                         cpu_seconds=None if r.get("cpu_seconds") is None else float(r["cpu_seconds"]))
    except (ValueError, KeyError, TypeError, AttributeError, binascii.Error, UnicodeEncodeError):
        return None


def library_versions(oracle: Oracle) -> dict[str, str]:
    """The Python and library versions a program's output may depend on: numpy's and
    those of the oracle's toolkit and requirements, as installed here."""
    out = {"python": f"{sys.version_info.major}.{sys.version_info.minor}"}
    for dist in sorted({"numpy", *oracle.dependencies}):
        try:
            out[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            out[dist] = "not installed"
    return out


class ShippedRuns:
    """Runs an oracle ships beside its module (``kept/runs.json.gz``): its revealed
    programs' runs on the scenarios every build of it draws alike, whatever the secret --
    the public candidates and the revealing draws of stress selection -- so that a first
    build runs only what its secret decides. Keyed as :class:`RunMemo` keys them (the
    program's content, the scenario's document and inputs' content); used only when made
    under the same limits, the same recon and the same library versions
    (:func:`library_versions`) as here: a program's output may change with numpy's. The
    file holds no hidden scenario of any task: the secret that chose its build's hidden
    candidates is thrown away, and a run is found only by a scenario with the same
    content. ``tests/catalog/keep_runs.py`` writes the built-ins' and a test checks they
    are current."""

    FORMAT = 1
    NAME = "runs.json.gz"   # in the oracle's kept_dir

    def __init__(self, path: Path, ident: dict[str, Any], code: str | None = None) -> None:
        self.path = path
        self.ident = ident
        self.code = code   # the oracle's source digest here: the file's draws apply only if it made them
        self._doc: dict[str, Any] | None = None
        self._lock = threading.Lock()

    @classmethod
    def path_of(cls, oracle: Oracle) -> Path:
        return oracle.kept_dir / cls.NAME

    @classmethod
    def identity(cls, oracle: Oracle, limits: Limits) -> dict[str, Any]:
        return {"format": cls.FORMAT, "recon": __version__, "oracle": oracle.name, "limits": limits.to_json(),
                "libraries": library_versions(oracle)}

    @classmethod
    def of(cls, oracle: Oracle, limits: Limits) -> "ShippedRuns | None":
        """The runs ``oracle`` ships, if it ships any."""
        path = cls.path_of(oracle)
        return cls(path, cls.identity(oracle, limits), oracle.source_digest()) if path.is_file() else None

    def document(self) -> dict[str, Any]:
        """The whole file, read once ({} when unreadable)."""
        with self._lock:
            if self._doc is None:
                doc = read_json_gz(self.path)
                self._doc = doc if isinstance(doc, dict) else {}
            return self._doc

    def mismatch(self) -> str | None:
        """Why the shipped runs do not apply here (None: they do)."""
        kept = self.document().get("ident")
        if not isinstance(kept, dict):
            return f"{self.path} is unreadable"
        diff = sorted(k for k in set(kept) | set(self.ident) if kept.get(k) != self.ident.get(k))
        if not diff:
            return None
        if diff == ["libraries"]:
            lib = sorted(n for n in set(kept["libraries"]) | set(self.ident["libraries"])
                         if kept["libraries"].get(n) != self.ident["libraries"].get(n))
            return "made with " + ", ".join(f"{n} {kept['libraries'].get(n, '-')} (here {self.ident['libraries'].get(n, '-')})"
                                            for n in lib)
        return "made under another " + ", ".join(diff)

    def runs(self, program: str) -> dict[str, Any]:
        """scenario key -> encoded run of ``program`` (a workspace digest); {} when they do not apply."""
        if self.mismatch() is not None:
            return {}
        got = self.document().get("runs", {}).get(program)
        return got if isinstance(got, dict) else {}

    def draw(self, scenario: Scenario) -> tuple[str, dict[str, Any]] | None:
        """What the oracle made of ``scenario`` when its runs were kept: the key of its
        document and inputs (:meth:`RunMemo.document_key`) and its truth, so that a program
        whose run on it is shipped needs the scenario only to be published, never to be
        generated again to be judged. None where the file holds none, or where it does not
        apply (another identity, or code other than the oracle's here)."""
        got = self._described(scenario)
        if not (isinstance(got, dict) and isinstance(got.get("document"), str) and isinstance(got.get("truth"), dict)):
            return None
        return got["document"], got["truth"]

    def trace(self, scenario: Scenario) -> tuple[frozenset[int], frozenset[str] | None] | None:
        """What the reference's traced run covered on ``scenario`` when the file was written
        (its lines, and the weak-mutation keys whose value differed there, None when
        unknown): the mutants' pruning needs it, and stress selection makes its mutants of
        the lines its candidates cover. None where the file holds none or does not apply."""
        got = self._described(scenario)
        lines = got.get("covered") if isinstance(got, dict) else None
        if not (isinstance(lines, list) and all(isinstance(n, int) for n in lines)):
            return None
        infected = got.get("infected")
        if infected is not None and not (isinstance(infected, list) and all(isinstance(k, str) for k in infected)):
            return None
        return frozenset(lines), None if infected is None else frozenset(infected)

    def _described(self, scenario: Scenario) -> Any:
        if self.code is None or self.mismatch() is not None or self.document().get("code") != self.code:
            return None
        return self.document().get("draws", {}).get(scenario.digest())

    @staticmethod
    def write(path: Path, ident: dict[str, Any], runs: dict[str, dict[str, Any]], **meta: Any) -> None:
        """Write the file (canonical JSON, gzip without a timestamp: the same runs make the
        same bytes), each run as :func:`encode_run` writes it now."""
        write_json_gz(path, {"ident": ident, **meta, "runs": {p: {k: _reencoded(r) for k, r in rs.items()}
                                                              for p, rs in runs.items()}})


class RunMemo:
    """The runs of an author's own programs, kept by what decides their result: the
    workspace's content (:func:`tree_digest` of its snapshot) and the scenario (its
    document and the content of each input file). The baselines' gradings and the
    fairness audit run the same programs on the same scenarios; each pair runs once. Only
    runs that exited cleanly are kept: a failure (a timeout on a busy machine) runs again
    where it is asked for again.

    :meth:`kept` opens one that also keeps its runs across processes, in
    ``$RECON_HOME/cache/runs`` (a folder private to the user: the outputs are close to the
    hidden truth), one file per program and context (the limits, recon's version; not the
    runtime: a clean exit's output is the program's, whichever sandbox ran it, so a
    ``validate --runtime local`` takes the runs an audit made under bubblewrap): a second ``recon validate``
    or ``recon audit`` of the same task, or one after a rebuild that changed only the
    instruction, runs none of them again. A kept file that cannot be read is empty; one
    that cannot be written is not.

    ``shipped``: runs kept with the oracle itself (:class:`ShippedRuns`), consulted after
    the user's own; they count as kept runs."""

    FORMAT = 1

    def __init__(self, folder: Path | None = None, context: dict[str, Any] | None = None,
                 shipped: ShippedRuns | None = None) -> None:
        self._runs: dict[tuple[str, str], RunResult] = {}
        self._lock = threading.Lock()
        self.hits = 0
        self.kept_hits = 0     # of those, runs kept by an earlier process
        self.shipped_hits = 0  # ... of those, runs shipped with the oracle
        self.folder = folder
        self.shipped = shipped
        self.context = canonjson.dumps_compact({"format": self.FORMAT, "recon": __version__, **(context or {})})
        self._loaded: set[str] = set()
        self._from_disk: set[tuple[str, str]] = set()
        self._from_ship: set[tuple[str, str]] = set()
        self._about: dict[tuple[str, str], dict[str, Any]] = {}   # key -> the scenario run on, when known
        self._new: set[str] = set()   # programs with runs not yet written

    @classmethod
    def kept(cls, limits: Limits, oracle: Oracle | None = None) -> "RunMemo":
        """A memo whose runs outlive the process (see the class docstring); with
        ``oracle``, the runs shipped with it (when made under these limits, this recon and
        the library versions installed here) are kept runs too."""
        shipped = ShippedRuns.of(oracle, limits) if oracle is not None else None
        return cls(recon_home() / "cache" / "runs", {"limits": limits.to_json()}, shipped)

    @staticmethod
    def scenario_key(g: Graded) -> str:
        return RunMemo.document_key(g.document, g.inputs)

    @staticmethod
    def document_key(document: dict[str, Any], inputs: dict[str, Path]) -> str:
        """What decides a run besides the program: the scenario document as the program
        reads it and the content of each input file. A runtime rewrites the document's
        input paths to where the run sees the files, under their file names, so the key
        names each input by its file name, not by where it lies: a build's run on a hidden
        candidate and a grading's run on the same hidden scenario are one run."""
        if inputs or "inputs" in document:
            document = {**document, "inputs": {k: Path(v).name for k, v in inputs.items()}}
        h = hashlib.sha256(canonjson.dumps_compact(document).encode("utf-8"))
        for name in sorted(inputs):
            h.update(b"\0" + name.encode("utf-8") + b"\0" + hashlib.sha256(Path(inputs[name]).read_bytes()).digest())
        return h.hexdigest()

    def _file(self, folder: Path, program: str) -> Path:
        return folder / f"{hashlib.sha256((self.context + program).encode('utf-8')).hexdigest()[:32]}.json"

    def _load(self, program: str) -> None:
        """The kept runs of ``program`` (a workspace digest), once; under the lock."""
        if self.folder is None or program in self._loaded:
            return
        self._loaded.add(program)
        for kept, tag in ((self._kept(self.folder, program), None),
                          (self.shipped.runs(program) if self.shipped is not None else {}, self._from_ship)):
            for sk, r in kept.items():
                key = (program, sk)
                run = decode_run(r)
                if run is None or key in self._runs:
                    continue   # unreadable, or the user's own run first
                self._runs[key] = run
                self._from_disk.add(key)
                if isinstance(r.get("scenario"), dict):
                    self._about[key] = r["scenario"]
                if tag is not None:
                    tag.add(key)

    def stored(self, program: str) -> dict[str, Any]:
        """scenario key -> encoded run of every run of ``program`` this memo holds, kept
        ones included (shipped ones not)."""
        with self._lock:
            self._load(program)
            return {sk: encode_run(r, self._about.get((p, sk))) for (p, sk), r in sorted(self._runs.items())
                    if p == program and (p, sk) not in self._from_ship}

    def _kept(self, folder: Path, program: str) -> dict[str, Any]:
        """The runs of ``program`` kept in ``folder`` under this memo's context."""
        runs = read_private(self._file(folder, program), self.context).get("runs")
        return runs if isinstance(runs, dict) else {}

    def has(self, key: tuple[str, str]) -> bool:
        """Whether a run is kept for ``key`` (not counted as a hit)."""
        with self._lock:
            self._load(key[0])
            return key in self._runs

    def get(self, key: tuple[str, str]) -> RunResult | None:
        """The kept result for ``key``, if any (counted as a hit)."""
        with self._lock:
            self._load(key[0])
            kept = self._runs.get(key)
            if kept is not None:
                self.hits += 1
                self.kept_hits += key in self._from_disk
                self.shipped_hits += key in self._from_ship
            return kept

    def run(self, key: tuple[str, str], start: Callable[[], RunResult]) -> RunResult:
        """The kept result for ``key``, else ``start()``'s (kept when the run was clean)."""
        kept = self.get(key)
        if kept is not None:
            return kept
        res = start()
        self.put(key, res)
        return res

    def put(self, key: tuple[str, str], res: RunResult, scenario: Scenario | None = None) -> None:
        """Keep ``res`` for ``key`` when the run was clean (and the ``scenario`` it ran on)."""
        if res.failure() is None:
            with self._lock:
                self._runs[key] = res
                if scenario is not None:
                    self._about[key] = {"id": scenario.id, "parameters": scenario.parameters}
                self._new.add(key[0])

    def save(self) -> None:
        """Write the programs' new runs to the kept files, merged with what another process
        kept meanwhile (nothing without a folder)."""
        folder = self.folder
        if folder is None:
            return
        with self._lock:
            todo, self._new = self._new, set()
            runs = dict(self._runs)
        for program in sorted(todo):
            mine = {sk: encode_run(r, self._about.get((p, sk))) for (p, sk), r in sorted(runs.items())
                    if p == program and (p, sk) not in self._from_ship}
            write_private(self._file(folder, program),
                          {"ident": self.context, "runs": {**self._kept(folder, program), **mine}}, compact=True)


def run_outcomes(runtime: Runtime, workspace: Path, items: list[Graded], limits: Limits, app_dir: Path | None,
                 fields: dict[str, dict[str, Any]], workers: int,
                 progress: Callable[[int], None] | None = None, budget: RunBudget | None = None,
                 sessions: SessionPool | None = None, memo: RunMemo | None = None) -> list[Outcome]:
    """Run the submission in ``workspace`` (a snapshot) on each scenario of ``items``,
    ``workers`` at a time, and say for each whether it spoke the contract. With a
    ``budget``, its rules decide each run's limit and whether it starts. ``sessions``:
    warm sessions of the same workspace, limits and app to run in instead (an author's
    own programs at build or validate time, never a submission under test); ``memo``:
    their runs shared with other gradings of the same programs (:class:`RunMemo`)."""
    if memo is not None and sessions is None:
        raise ValueError("a run memo is for an author's programs in warm sessions, never a submission under test")
    ws_digest = tree_digest(workspace, skip_caches=True) if memo is not None else ""

    def one(g: Graded) -> Outcome:
        lim = budget.next_limits() if budget is not None else limits
        if isinstance(lim, str):
            res = RunResult(exit_code=None, stdout=b"", stderr_tail="", seconds=0.0, rejected=lim)
        elif sessions is not None:
            def start(pool: SessionPool = sessions) -> RunResult:
                return pool.run(dict(g.document), g.inputs)

            res = memo.run((ws_digest, RunMemo.scenario_key(g)), start) if memo is not None else start()
            if budget is not None:
                budget.record(res)
        else:
            res = runtime.run(workspace, dict(g.document), g.inputs, lim, app_dir=app_dir)
            if budget is not None:
                if budget.retry(lim, res):
                    res = runtime.run(workspace, dict(g.document), g.inputs, lim, app_dir=app_dir)
                budget.record(res)
        if progress:
            progress(1)
        fail = res.failure()
        if fail is not None:
            return Outcome(g, dataclasses.replace(res, stdout=b""), None, [fail])
        value, why = compare.parse_stdout(res.stdout)
        # A grading keeps every run's outcome to its end: only what the checks read is kept,
        # not the printed bytes nor keys the contract does not declare (a run may print up
        # to the stdout limit, and 80 runs of that once held gigabytes).
        res = dataclasses.replace(res, stdout=b"")   # a copy: a memo's results are shared
        if why is not None:
            return Outcome(g, res, None, [why])
        problems = compare.contract_errors(fields, value)
        if isinstance(value, dict):
            value = {k: v for k, v in value.items() if k in fields}
            problems += _oversized(value, g.truth)
        return Outcome(g, res, None if problems else value, problems)

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        return list(pool.map(one, items))


#: how much larger than the truth a field's JSON may be before it is refused (and at least
#: this many bytes): a grading holds every run's fields to its end, and an `exact` field
#: takes any shape
FIELD_GROWTH, FIELD_FLOOR = 16, 64 << 10


def _oversized(value: dict[str, Any], truth: dict[str, Any]) -> list[str]:
    """Why fields of ``value`` are too large to keep: far larger than any answer."""
    def size_of(x: Any) -> int:
        return len(json.dumps(x, separators=(",", ":"), ensure_ascii=False, default=str))

    out = []
    for name, v in value.items():
        if isinstance(v, (list, dict, str)):
            size = size_of(v)
            cap = max(FIELD_FLOOR, FIELD_GROWTH * size_of(truth.get(name)))
            if size > cap:
                out.append(f"field {name!r} holds {size} bytes of JSON, more than the grader keeps for it "
                           f"({FIELD_GROWTH} times the answer's size, at least {FIELD_FLOOR >> 10} KiB)")
    return out


def graded_from(task: Task) -> tuple[list[Graded], list[Graded]]:
    """The task's public and hidden scenarios, with their truths and input files."""
    return [_from_dir(sd, "public") for sd in task.public()], [_from_dir(sd, "hidden") for sd in task.hidden()]


def draw_probes(task: Task, oracle: Oracle, nonce: str, n: int, directory: Path, *,
                cache: Path | None = None) -> list[Graded]:
    """``n`` fresh scenarios from the private oracle, keyed by the task key and ``nonce``
    (distinct from the public and hidden ones), generated into ``directory``.

    ``cache``: a private folder where draws are kept for the gradings of one session (a
    validate, a set of baselines): the same task, nonce and count are generated once."""
    if not n:
        return []
    if cache is not None:
        ident = canonjson.dumps_compact({"task_key": task.meta["task_key"], "nonce": nonce, "n": n,
                                         "oracle": oracle.name, "version": oracle.version})
        kept = Path(cache) / hashlib.sha256(ident.encode()).hexdigest()[:24]
        index = kept / "probes.json"
        if not index.is_file():
            tmp = Path(tempfile.mkdtemp(prefix=".draw-", dir=_private_dir(Path(cache))))
            try:
                fresh = draw_probes(task, oracle, nonce, n, tmp / "probes")
                canonjson.write(tmp / "probes" / "probes.json", [
                    {"id": g.id, "document": g.document, "truth": g.truth,
                     "inputs": {k: os.path.relpath(v, tmp / "probes") for k, v in g.inputs.items()}} for g in fresh])
                try:
                    os.rename(tmp / "probes", kept)
                except OSError:   # drawn meanwhile by another grading: theirs is the same
                    pass
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
        return [Graded(d["id"], d["document"], d["truth"], {k: kept / v for k, v in d["inputs"].items()}, "probe")
                for d in canonjson.read(index)]
    drawn: list[Graded] = []
    spec = SweepSpec(**{k: task.meta["spec"][k] for k in ("n_public", "n_hidden", "seed", "axes")})
    taken = [Scenario(sd.id, sd.parameters) for sd in task.public()]
    graded_sc = [Scenario(sd.id, sd.parameters) for sd in task.hidden()]
    key = bytes.fromhex(task.meta["task_key"])
    for sc in probe_scenarios(oracle, spec, key, nonce, n, taken, graded_sc):
        d = directory / sc.id
        d.parent.mkdir(parents=True, exist_ok=True)
        out = run_scenario(oracle, sc, d, evidence=False)
        doc = canonjson.read(d / "scenario.json")
        drawn.append(Graded(sc.id, doc, out.output, {k: d / v for k, v in doc["inputs"].items()}, "probe"))
    return drawn


def _private_dir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    os.chmod(path, 0o700)
    return path


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
    probe_cache: Path | None = None,
    warm: bool = False,
    memo: RunMemo | None = None,
) -> dict[str, Any]:
    """Grade ``workspace`` on ``task``; returns the grading document. ``probe_cache``: a
    private folder that keeps the probes drawn for a nonce across gradings (see
    :func:`draw_probes`). ``warm``: run in warm sessions (:class:`SessionPool`: the
    interpreter and its imports paid once per worker, a run that fails warm run again
    cold) -- for an author's own programs that validate and ``stats`` grade (the
    reference, the generated controls, the baselines), never for a submission under test;
    ``memo``: those runs shared with other gradings and audits of the same programs
    (:class:`RunMemo`; warm gradings only)."""
    t_start = time.perf_counter()
    if memo is not None and not warm:
        raise ValueError("a run memo is for an author's programs in warm sessions, never a submission under test")
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

    public, hidden = graded_from(task)
    rungs_out: list[dict[str, Any]] = []
    outcomes: list[list[bool] | None] = []
    allowed: list[int] = []
    probe_docs: list[dict[str, Any]] = []
    timing = {"runs": 0, "runs_wall": 0.0, "probe_oracle": 0.0}

    try:
        with tempfile.TemporaryDirectory(prefix="recon-grade-") as tmp, contextlib.ExitStack() as stack:
            # One race-free, capped copy of the workspace before anything looks at it:
            # every check and every run sees this snapshot, never the live workspace.
            snap = snapshot_workspace(workspace, Path(tmp) / "workspace")
            budget = RunBudget(limits, lad.public_runs(len(public)) + len(hidden) + n_probes)
            sessions = stack.enter_context(SessionPool(rt, snap.path, limits, app_dir=task.app_dir)) if warm else None

            def run(items: list[Graded]) -> list[Outcome]:
                t0 = time.perf_counter()
                res = run_outcomes(rt, snap.path, items, limits, task.app_dir, fields, workers, progress, budget,
                                   sessions, memo)
                timing["runs_wall"] += time.perf_counter() - t0
                timing["runs"] += len(res)
                return res

            def probes_now() -> list[Graded]:
                """Fresh scenarios from the private oracle, keyed by the task key and the nonce."""
                t0 = time.perf_counter()
                drawn = draw_probes(task, resolve_oracle(task, registry), nonce, n_probes, Path(tmp) / "probes",
                                    cache=probe_cache)
                probe_docs.extend({"id": g.id, "parameters": g.parameters} for g in drawn)
                timing["probe_oracle"] = time.perf_counter() - t0
                return drawn

            ctx = GradingContext(fields=fields, axes=task.meta.get("axes", {}), public=public, hidden=hidden,
                                 workspace=snap.path, starter=task.meta.get("starter", {}),
                                 snapshot_problem=None if snap.ok else snap.reason, run=run, draw_probes=probes_now)
            for rung in lad.rungs:
                if outcomes and (outcomes[-1] is None or not lad.rungs[len(outcomes) - 1].passes(outcomes[-1])):
                    outcomes.append(None)
                    allowed.append(0)
                    rungs_out.append({"index": rung.index, "name": rung.name, "description": rung.description,
                                      "examined": False, "passed": False, "fraction": 0.0, "failed": 0, "may_fail": 0,
                                      "checks": []})
                    continue
                checks: list[dict[str, Any]] = []
                for family in rung.checks:
                    checks.extend(CHECKS[family].run(ctx, rung.options_for(family)))
                results = [bool(c["passed"]) for c in checks]
                outcomes.append(results)
                allowed.append(rung.quorum.allowed_failures(len(results)))
                rungs_out.append({"index": rung.index, "name": rung.name, "description": rung.description,
                                  "examined": True, "passed": rung.passes(results),
                                  "fraction": round(sum(results) / len(results), 6) if results else 0.0,
                                  "failed": results.count(False), "may_fail": allowed[-1], "checks": checks})
    finally:
        compare.close_smiles_helper()  # the helper lives for one grading

    reward, k, f = score(outcomes, allowed)
    reward = round(reward, 6)
    return _encodable({
        "reward": reward,
        "binary": 1 if k == len(lad.rungs) else 0,
        "rung": {"index": k, "name": lad.rung_name(k)},
        "next_rung_fraction": round(f, 6),
        "ladder": lad.name,
        "rungs": rungs_out,
        "runs": timing["runs"],
        "nonce": nonce,
        "probes": probe_docs,
        "runtime": rt.name,
        "runtime_warnings": rt.warnings(),
        "limits": {**limits.to_json(), "budget": round(budget.total, 3), "strikes": STRIKES},
        "budget": {"spent": round(budget.spent, 3), "timeouts": budget.timeouts, "retried": budget.retried},
        "task": task.meta["task"],
        "oracle": task.name,
        "oracle_version": task.meta["oracle_version"],
        "recon_version": __version__,
        "task_recon_version": task.meta.get("recon_version"),
        "workspace": workspace_label or str(workspace),
        "workspace_snapshot": {"ok": snap.ok, "reason": snap.reason, "files": snap.files, "bytes": snap.bytes,
                               "skipped": len(snap.skipped), "skipped_paths": snap.skipped[:MAX_SKIPPED_LISTED]},
        "graded_at": _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
        "timings": {"total": round(time.perf_counter() - t_start, 3), "runs_wall": round(timing["runs_wall"], 3),
                    "probe_oracle": round(timing["probe_oracle"], 3), "warm": warm,
                    "run_seconds": round(sum(c.get("seconds", 0.0) for r in rungs_out for c in r["checks"]), 3)},
    })


def _encodable(value: Any) -> Any:
    """``value`` with every string made encodable as UTF-8: file names from the workspace
    may hold undecodable bytes (lone surrogates), and grading.json must still be written."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-8", "backslashreplace").decode("utf-8")
        return value
    if isinstance(value, list):
        return [_encodable(v) for v in value]
    if isinstance(value, dict):
        return {_encodable(k): _encodable(v) for k, v in value.items()}
    return value


def write_outputs(grading: dict[str, Any], out_dir: Path | str) -> None:
    """Write reward.txt, reward.json and grading.json into ``out_dir`` (atomically each)."""
    grading = _encodable(grading)   # what was added after grade() (a checkpoint series' notes) too
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
    width = max([28, *(len(r["name"]) for r in grading["rungs"])])
    lines = [f"{'rung':<5} {'name':<{width}} {'status':<12} checks"]
    for r in grading["rungs"]:
        n = len(r["checks"])
        passed = sum(1 for c in r["checks"] if c["passed"])
        status = "PASS" if r["passed"] else ("not examined" if not r["examined"] else "FAIL")
        counts = f"{passed}/{n}" if r["examined"] else "-"
        if r["examined"] and r["passed"] and passed < n:
            counts += f" (at most {r.get('may_fail', 0)} may fail)"
        lines.append(f"{r['index']:<5} {r['name']:<{width}} {status:<12} {counts}")
        if r["examined"] and not r["passed"]:
            for c in [c for c in r["checks"] if not c["passed"]][:3]:
                lines.append(f"{'':<5}   {c['id']}: {c['reason'][:110]}")
    lines.append(f"reward {grading['reward']:.4f}  (rung {grading['rung']['index']}: {grading['rung']['name']}; "
                 f"binary {grading['binary']}; {grading['runs']} runs; nonce {grading['nonce']})")
    return "\n".join(lines)

