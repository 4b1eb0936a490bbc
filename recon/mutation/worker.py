"""Long-lived worker processes that run a reference and its mutants in-process.

Running every mutant as a fresh ``python3 reference.py`` per scenario would spend most
of its time importing the toolkit (~0.5 s for numpy + scipy + laspy). Instead one worker
per core is forked from the analysing process (so it inherits the loaded oracle, and
imports the toolkit once), and for each (mutant, scenario) it executes the mutant's
source as a fresh module and calls ``solve(scenario)`` on a copy of the scenario, under
a per-call wall-clock alarm (``setitimer``) and an address-space limit (``RLIMIT_AS``).
The output goes through the same JSON round trip and the same comparison code as the
grader's (``json.dumps`` then :func:`recon.compare.parse_stdout`,
:func:`recon.compare.contract_errors`, :func:`recon.compare.check`).

A mutant that kills its worker (a segfault, an alarm swallowed by a bare ``except:``,
a C loop the alarm cannot interrupt) is killed by the parent's watchdog; the worker is
forked again and the unit it was running counts as killed by the contract. Workers
stream one message per unit (a scenario, a search example), so the parent always
knows what was running when a worker died.

A timeout or a worker death may be the machine's doing (other jobs sharing the cores, a
kernel out-of-memory kill), not the mutant's, and a single spurious kill turns an
equivalent mutant into a "survivor" the hidden set is blamed for missing. A timeout
whose run had at least ``OWN_CPU`` of its limit on the CPU was the mutant's own
slowness (a loop that never ends, say): it counts at once, and its detail says so
(:func:`is_own_timeout`; such a verdict is as repeatable as any other and is kept across
analyses). Any other timeout, and a worker death, counts only when it repeats: the unit
runs once more, given ``CONFIRM_FACTOR`` times as long, and the second run's verdict is
the one recorded. Once a mutant's timeout has been confirmed, its later timeouts count at
once (it is slow, not unlucky). A Python exception is deterministic and counts at once.

Parent side: :class:`WorkerPool` with :meth:`WorkerPool.submit` and
:meth:`WorkerPool.drain` (an event loop over the workers' pipes and process sentinels).
"""
from __future__ import annotations

import collections
import ctypes
import json
import os
import resource
import shutil
import signal
import sys
import tempfile
import time
import types
import warnings
from dataclasses import dataclass, field
from multiprocessing import connection, get_context
from pathlib import Path
from typing import Any, Callable

from .. import canonjson, compare
from ..axes import Choice, Float, Int, Seed
from ..errors import OracleRunError, ReconError
from ..oracle import Oracle
from ..sweep import Scenario, pin_process, pinned_cpus, run_scenario
from .operators import WEAK_HELPER, same_value, weak_helper
from .pool import DEVIATION_CAP, deviation

__all__ = ["Case", "Verdict", "WorkerConfig", "WorkerPool", "Task", "SURVIVED", "VALUE", "CONTRACT", "CONFIRM_FACTOR",
           "judge", "is_timeout", "is_own_timeout", "past"]

SURVIVED, VALUE, CONTRACT = "survived", "value", "contract"
REPLAYED = "not infected (its function returned the same)"
TIMED_OUT = "timed out after"
WATCHDOG = "timed out (killed by the watchdog)"
GRACE = 2.0            # seconds the watchdog waits beyond a unit's own alarm (a C call may not see it)
CONFIRM_FACTOR = 3.0   # a timeout or worker death is confirmed by a run given this many times as long
#: a timed-out run that had this share of its limit on the CPU was slow by itself, not
#: starved by other jobs: its timeout needs no second run (a CPU-bound run on a quiet
#: machine gets ~1; on a machine shared by two such jobs per core, ~0.5)
OWN_CPU = 0.75
OWN_TIMEOUT = "on its own CPU time"


@dataclass(frozen=True)
class Case:
    """One scenario as a worker needs it: the document (absolute input paths), the truth
    and the per-call time limit for mutants on it."""

    index: int
    id: str
    document: dict[str, Any]
    truth: dict[str, Any]
    timeout: float
    calls: str | None = None     # recorded calls of the reference's functions (see _Recorder)


@dataclass(frozen=True)
class Verdict:
    """What one mutant did on one scenario."""

    case: int
    status: str          # survived, value (a field out of tolerance) or contract
    detail: str          # the first failing field or the contract problem
    deviation: float     # largest field deviation in units of the tolerance (cap when unusable)
    seconds: float
    memoized: int = 0    # calls answered from the reference's recorded calls (see _Memo)

    @property
    def killed(self) -> bool:
        return self.status != SURVIVED


@dataclass(frozen=True)
class WorkerConfig:
    reference_path: str            # file name the sources compile under (tracebacks, __file__)
    reference_source: str          # the unmutated reference
    instrumented_source: str | None  # the reference with weak-mutation probes (see _mutants.instrument)
    fields: dict[str, dict[str, Any]]
    memory: int                    # RLIMIT_AS of a worker, bytes
    oracle: Oracle | None = None   # inherited through fork (never pickled)
    quiet: bool = True             # send the workers' stdout/stderr to /dev/null


# --------------------------------------------------------------------------- worker side
class _Timeout(BaseException):
    """Raised by the alarm inside a mutant; a BaseException so `except Exception` in the
    mutant cannot swallow it."""


class _Found(BaseException):
    """Ends a hypothesis search at its first kill (not an Exception: hypothesis lets it
    through at once instead of shrinking and replaying)."""


class _OutOfTime(BaseException):
    """Ends a search when the analysis' deadline has passed (the mutant stays undecided)."""


def _on_alarm(signum: int, frame: Any) -> None:
    raise _Timeout()


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def judge(fields: dict[str, dict[str, Any]], value: Any, truth: dict[str, Any]) -> tuple[str, str, float]:
    """(status, detail, deviation) of an output against the truth, as the grader sees it."""
    errs = compare.contract_errors(fields, value)
    if errs:
        return CONTRACT, errs[0], DEVIATION_CAP
    worst, first = 0.0, ""
    for name in sorted(fields):
        ok, detail = compare.check(fields[name], value[name], truth[name])
        d = deviation(fields[name], value[name], truth[name])
        worst = max(worst, d)
        if not ok and not first:
            first = f"{name}: {detail}"
    return (VALUE if first else SURVIVED), first, worst


def _field_deviations(fields: dict[str, dict[str, Any]], value: Any, truth: dict[str, Any]) -> dict[str, float]:
    if compare.contract_errors(fields, value):
        return {n: DEVIATION_CAP for n in fields}
    return {n: deviation(fields[n], value[n], truth[n]) for n in fields}


_RUN_MODULE = "_recon_mutant_"   # the module names of the runs (the reference's recorded one included)


class _Runner:
    """Executes sources as fresh modules and calls their solve()."""

    def __init__(self, config: WorkerConfig) -> None:
        self.config = config
        self.serial = 0

    def call(self, code: types.CodeType, document: dict[str, Any], timeout: float,
             tracer: Any = None, extra: dict[str, Any] | None = None,
             wrap: Callable[[dict[str, Any]], None] | None = None) -> tuple[Any, str | None, float]:
        """(output value, None) or (None, why it gave no usable output); seconds."""
        self.serial += 1
        name = f"{_RUN_MODULE}{os.getpid()}_{self.serial}"
        module = types.ModuleType(name)
        module.__file__ = self.config.reference_path
        if extra:
            module.__dict__.update(extra)
        scenario = json.loads(json.dumps(document))  # a private copy: solve() may modify it
        cwd = os.getcwd()
        filters = list(warnings.filters)  # a mutant may change them; the next one must not see it
        limit = sys.getrecursionlimit()
        t0 = time.perf_counter()
        c0 = time.process_time()
        text: str | None = None
        problem: str | None = None
        sys.modules[name] = module
        signal.setitimer(signal.ITIMER_REAL, max(timeout, 0.01))
        try:
            if tracer is not None:
                sys.settrace(tracer)
            try:
                exec(code, module.__dict__)  # noqa: S102 - the mutant of the author's own reference
                if wrap is not None:
                    wrap(module.__dict__)
                solve = module.__dict__.get("solve")
                if not callable(solve):
                    problem = "defines no solve(scenario)"
                else:
                    out = solve(scenario)
                    text = json.dumps(out)  # what main() prints
            finally:
                if tracer is not None:
                    sys.settrace(None)
                signal.setitimer(signal.ITIMER_REAL, 0)
        except _Timeout:
            own = time.process_time() - c0 >= OWN_CPU * timeout
            problem = f"{TIMED_OUT} {timeout:.1f} s" + (f" ({OWN_TIMEOUT})" if own else "")
        except MemoryError:
            problem = "ran out of memory"
        except RecursionError:
            problem = "crashed: RecursionError"
        except BaseException as exc:  # noqa: BLE001 - whatever the mutant raises is its verdict
            problem = f"crashed: {type(exc).__name__}: {str(exc)[:200]}"
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            seconds = time.perf_counter() - t0
            sys.modules.pop(name, None)
            warnings.filters[:] = filters  # type: ignore[index]
            sys.setrecursionlimit(limit)
            if os.getcwd() != cwd:
                os.chdir(cwd)
        if problem is not None:
            return None, problem, seconds
        value, why = compare.parse_stdout((text or "").encode("utf-8"))
        if why is not None:
            return None, why, seconds
        return value, None, seconds


_NOT_PLAIN = 0x20 | 0x80 | 0x100 | 0x200   # generator, coroutine, iterable coroutine, async generator
MAX_CALLS = 200                         # recorded calls per function and scenario
MAX_BYTES = 4 << 20                     # pickled bytes per function and scenario
MAX_TOTAL = 8 << 20                     # pickled bytes per scenario (those saving least time per byte dropped)


class _Recorder:
    """Records, during the reference's run on a scenario, every outermost call of each
    module-level function: its arguments before, and its result and arguments after
    (pickled), and its inclusive time. A mutant inside function F is then checked by
    calling the mutated F on the recorded arguments: if every call returns the same
    values and leaves the arguments the same, the rest of the program sees exactly what
    it saw in the reference's run, so the mutant cannot differ on this scenario and the
    full run is skipped. (This trusts F to act only through its arguments and result,
    the way reference helpers do; a helper that draws from a global random generator or
    keeps global state reads as "differs" or as unrecordable, never the other way.)

    The same records answer calls in a mutant's full run (:class:`_Memo`): a call of a
    function the edit cannot reach, with the arguments the reference called it with, is
    given the recorded result, when that call left its arguments as they were and its
    result shares nothing with them (each call records whether it did)."""

    def __init__(self, filename: str) -> None:
        self.filename = filename
        self.calls: dict[str, list[tuple[bytes, bytes, bool]]] = {}   # (arguments, result and arguments after, kept)
        self.seconds: dict[str, float] = {}
        self.size: dict[str, int] = {}
        self.bad: set[str] = set()
        self.active: set[str] = set()

    def wrap(self, namespace: dict[str, Any]) -> None:
        import functools  # noqa: PLC0415

        for name, f in list(namespace.items()):
            if not (isinstance(f, types.FunctionType) and f.__code__.co_filename == self.filename
                    and f.__qualname__ == name and not f.__code__.co_flags & _NOT_PLAIN):
                continue

            def make(name: str, f: Any) -> Any:
                @functools.wraps(f)
                def recorded(*args: Any, **kwargs: Any) -> Any:
                    if name in self.active:  # recursion: the outermost call replays it
                        return f(*args, **kwargs)
                    self.active.add(name)
                    try:
                        before = self._dump((args, kwargs), name)
                        rng = _global_rng_state()
                        t0 = time.perf_counter()
                        try:
                            result = f(*args, **kwargs)
                        except BaseException:
                            self.bad.add(name)  # a call that raised is not replayed
                            raise
                        self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - t0
                        after = self._dump((result, args, kwargs), name) if before is not None else None
                        if before is not None and after is not None:
                            # answerable from the record: the arguments came back unchanged,
                            # the result is not (a view of) one of them, and no global
                            # random generator moved
                            kept = (_pickled((args, kwargs)) == before and not _shares(result, (args, kwargs))
                                    and _global_rng_state() == rng)
                            self.calls.setdefault(name, []).append((before, after, kept))
                            if len(self.calls[name]) > MAX_CALLS:
                                self.bad.add(name)
                        return result
                    finally:
                        self.active.discard(name)
                return recorded

            namespace[name] = make(name, f)

    def _dump(self, value: Any, name: str) -> bytes | None:
        import pickle  # noqa: PLC0415

        if name in self.bad:
            return None
        try:
            blob = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # noqa: BLE001 - not picklable: this function is not replayed
            self.bad.add(name)
            return None
        self.size[name] = self.size.get(name, 0) + len(blob)
        if self.size[name] > MAX_BYTES:
            self.bad.add(name)
            return None
        return blob

    def save(self, path: Path, total: float) -> str | None:
        import pickle  # noqa: PLC0415

        functions = {n: {"seconds": self.seconds.get(n, 0.0), "calls": c}
                     for n, c in self.calls.items() if n not in self.bad}
        # keep the records that save the most time per byte within the total: small helpers
        # (replayed) and expensive stages with small inputs and results (memoized)
        kept, total_bytes = {}, 0
        for n in sorted(functions, key=lambda n: (-self.seconds.get(n, 0.0) / max(self.size.get(n, 0), 1), n)):
            if total_bytes + self.size.get(n, 0) <= MAX_TOTAL:
                kept[n] = functions[n]
                total_bytes += self.size.get(n, 0)
        functions = kept
        if not functions:
            return None
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(pickle.dumps({"total": total, "functions": functions}, protocol=pickle.HIGHEST_PROTOCOL))
        return str(path)


def _global_rng_state() -> tuple[Any, ...]:
    """The state of the global random generators a reference might draw from (random's
    and numpy's legacy one), comparable with ==."""
    import random  # noqa: PLC0415

    np = sys.modules.get("numpy")
    legacy = None
    if np is not None:
        kind, keys, pos, gauss, cached = np.random.get_state()
        legacy = (kind, keys.tobytes(), pos, gauss, cached)
    return random.getstate(), legacy


def _pickled(value: Any) -> bytes | None:
    import pickle  # noqa: PLC0415

    try:
        return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # noqa: BLE001 - not picklable
        return None


def _shares(result: Any, args: Any) -> bool:
    """Whether ``result`` is, holds, or (for arrays) may share memory with an object
    held by ``args`` (containers walked a few levels deep; True when in doubt)."""
    np = sys.modules.get("numpy")

    def leaves(v: Any, depth: int, out: list[Any]) -> bool:
        if len(out) > 2000 or depth > 6:
            return False
        if isinstance(v, (bool, int, float, complex, str, bytes, type(None))):
            return True
        out.append(v)
        if isinstance(v, dict):
            return all(leaves(x, depth + 1, out) for x in v.values())
        if isinstance(v, (list, tuple, set, frozenset)):
            return all(leaves(x, depth + 1, out) for x in v)
        if isinstance(getattr(v, "__dict__", None), dict) and not isinstance(v, (type, types.ModuleType,
                                                                               types.FunctionType)):
            return all(leaves(x, depth + 1, out) for x in vars(v).values())   # an object's fields
        return True

    mine: list[Any] = []
    theirs: list[Any] = []
    if not (leaves(result, 0, mine) and leaves(args, 0, theirs)):
        return True
    ids = {id(x) for x in theirs}
    if any(id(x) in ids for x in mine):
        return True
    if np is not None:
        a = [x for x in mine if isinstance(x, np.ndarray)]
        b = [x for x in theirs if isinstance(x, np.ndarray)]
        return any(np.may_share_memory(x, y) for x in a for y in b)
    return False


_CALLS_CACHE: "collections.OrderedDict[str, Any]" = collections.OrderedDict()
REPLAY_SHARE = 0.5   # replay a function only when it takes at most this share of the run


def _recorded(case: Case) -> dict[str, Any] | None:
    """The reference's recorded calls on ``case`` (see _Recorder), a few cases cached."""
    import pickle  # noqa: PLC0415

    if case.calls is None:
        return None
    rec = _CALLS_CACHE.get(case.calls)
    if rec is None:
        try:
            rec = pickle.loads(Path(case.calls).read_bytes())
        except (OSError, pickle.UnpicklingError, EOFError):
            return None
        _CALLS_CACHE[case.calls] = rec
        while len(_CALLS_CACHE) > 8:
            _CALLS_CACHE.popitem(last=False)
    else:
        _CALLS_CACHE.move_to_end(case.calls)
    return rec


class _Memo:
    """Answers calls of the functions an edit cannot reach (``names``, from
    :class:`recon.mutation.callgraph.CallGraph`) from the reference's recorded calls on one
    scenario: a call whose pickled arguments equal a recorded call's gets that call's
    result, unpickled afresh; any other call runs."""

    def __init__(self, case: Case, names: frozenset[str]) -> None:
        self.tables: dict[str, dict[bytes, bytes]] = {}
        self.hits = 0
        rec = _recorded(case) if names else None
        if rec is None:
            return
        tables = rec.setdefault("memo", {})
        for name in names:
            entry = rec["functions"].get(name)
            if entry is None:
                continue
            if name not in tables:
                tables[name] = {before: after for before, after, kept in entry["calls"] if kept}
            if tables[name]:
                self.tables[name] = tables[name]

    def wrap(self, namespace: dict[str, Any]) -> None:
        import functools  # noqa: PLC0415
        import io  # noqa: PLC0415
        import pickle  # noqa: PLC0415

        here = str(namespace.get("__name__", ""))

        class Unpickler(pickle.Unpickler):
            # a class the reference defines was recorded under the module name of the
            # reference's run; it is this run's class now (an edit inside a class shares nothing)
            def find_class(self, module: str, name: str) -> Any:
                if module.startswith(_RUN_MODULE) and here:
                    return namespace[name] if name in namespace else super().find_class(module, name)
                return super().find_class(module, name)

        for name, table in self.tables.items():
            f = namespace.get(name)
            if not isinstance(f, types.FunctionType):
                continue

            def make(f: Any, table: dict[bytes, bytes]) -> Any:
                @functools.wraps(f)
                def memoized(*args: Any, **kwargs: Any) -> Any:
                    key = _pickled((args, kwargs))
                    after = None if key is None else table.get(key)
                    if after is not None:
                        try:
                            result = Unpickler(io.BytesIO(after)).load()[0]
                        except Exception:  # noqa: BLE001 - cannot rebuild the result here: run the call
                            return f(*args, **kwargs)
                        self.hits += 1
                        return result
                    return f(*args, **kwargs)
                return memoized

            namespace[name] = make(f, table)


def _replay_same(code: types.CodeType, function: str, case: Case, config: WorkerConfig) -> bool:
    """Whether the mutated ``function`` returns the same as the reference on every call
    the reference made on this scenario (see _Recorder). False when it cannot tell."""
    import pickle  # noqa: PLC0415

    rec = _recorded(case)
    if rec is None:
        return False
    entry = rec["functions"].get(function)
    if entry is None or entry["seconds"] > REPLAY_SHARE * rec["total"]:
        return False
    module = types.ModuleType(f"_recon_replay_{os.getpid()}")
    module.__file__ = config.reference_path
    sys.modules[module.__name__] = module
    signal.setitimer(signal.ITIMER_REAL, max(case.timeout, 0.01))
    try:
        exec(code, module.__dict__)  # noqa: S102
        f = module.__dict__.get(function)
        if not isinstance(f, types.FunctionType):
            return False
        for before, after, _ in entry["calls"]:
            args, kwargs = pickle.loads(before)
            result = f(*args, **kwargs)
            want, want_args, want_kwargs = pickle.loads(after)
            if not (same_value(result, want) and same_value(args, want_args) and same_value(kwargs, want_kwargs)):
                return False
        return True
    except BaseException:  # noqa: BLE001 - _Timeout included: it differs, run it in full
        return False
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        sys.modules.pop(module.__name__, None)



def _serve(conn: Any, config: WorkerConfig) -> None:
    """The worker's loop: receive a task, stream its units, report done."""
    try:
        ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG: die with the parent
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        pass
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    signal.signal(signal.SIGALRM, _on_alarm)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = "1"  # like env_for_submission: one thread, as graded
    if config.quiet:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        os.close(devnull)
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    want = config.memory if hard == resource.RLIM_INFINITY else min(config.memory, hard)
    try:
        resource.setrlimit(resource.RLIMIT_AS, (want, hard))
    except (ValueError, OSError):  # pragma: no cover - a limit already lower
        pass
    warnings.simplefilter("ignore")  # a warning never changes a graded output
    runner = _Runner(config)
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        kind = msg[0]
        if kind == "stop":
            return
        task_id, payload = msg[1], msg[2]
        result: dict[str, Any] | None
        try:
            if kind == "gen":
                result = _gen(conn, task_id, payload, config, runner)
            elif kind == "run":
                _run(conn, task_id, payload, config, runner)
                result = None
            elif kind == "search":
                result = _search(conn, task_id, payload, config, runner)
            else:  # pragma: no cover - programming error
                raise ValueError(f"unknown task kind {kind!r}")
            conn.send(("done", task_id, result))
        except ReconError as exc:
            conn.send(("error", task_id, exc.message))
        except Exception as exc:  # noqa: BLE001 - reported to the parent, which raises
            conn.send(("error", task_id, f"{type(exc).__name__}: {exc}"))


def _gen(conn: Any, task_id: int, payload: dict[str, Any], config: WorkerConfig, runner: _Runner) -> dict[str, Any]:
    """Inputs and truth of one scenario (or an existing one), then the unmutated
    reference on it with line tracing: which lines run, how long, and whether it agrees."""

    oracle = config.oracle
    conn.send(("at", task_id, payload["id"], float(payload.get("limit", 600.0))))
    t0 = time.perf_counter()
    if payload.get("document") is None:
        if oracle is None:  # pragma: no cover - programming error
            raise ReconError("a worker needs the oracle to generate scenarios")
        d = Path(payload["dir"])
        run = run_scenario(oracle, payload["scenario"], d, evidence=False)
        doc = canonjson.read(d / "scenario.json")
        doc["inputs"] = {k: str(d / v) for k, v in doc.get("inputs", {}).items()}
        truth = run.output
    else:
        doc, truth = payload["document"], payload["truth"]
    oracle_seconds = time.perf_counter() - t0
    covered: set[int] = set()
    filename = config.reference_path

    def local(frame: Any, event: str, arg: Any) -> Any:
        if event == "line":
            covered.add(frame.f_lineno)
        return local

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        if frame.f_code.co_filename == filename:
            covered.add(frame.f_lineno)
            return local
        return None

    limit = float(payload.get("limit", 600.0))
    if not payload.get("traced", True):
        # the reference's agreement and time only (no lines, no infection, no recorded calls)
        code = compile(config.reference_source, filename, "exec", dont_inherit=True)
        value, problem, seconds = runner.call(code, doc, limit)
        plain = (CONTRACT, problem, DEVIATION_CAP) if problem is not None else judge(config.fields, value, truth)
        return {"document": doc, "truth": truth, "oracle_seconds": oracle_seconds, "ref_seconds": seconds,
                "covered": [], "infected": None, "calls": None, "ref_status": plain[0], "ref_detail": plain[1],
                "ref_deviation": plain[2]}
    record: set[str] = set()
    infected: set[str] | None = record
    ref: tuple[str, str, float] = (CONTRACT, "not run", DEVIATION_CAP)
    seconds = 0.0
    recorder = _Recorder(filename)
    if config.instrumented_source is not None:

        code = compile(config.instrumented_source, filename, "exec", dont_inherit=True)
        value, problem, seconds = runner.call(code, doc, limit, tracer=tracer, extra={WEAK_HELPER: weak_helper(record)},
                                              wrap=recorder.wrap)
        ref = (CONTRACT, problem, DEVIATION_CAP) if problem is not None else judge(config.fields, value, truth)
    if ref[0] != SURVIVED:
        # The instrumented run did not reproduce the truth (or there is none): trust the
        # plain reference, and do not use infection data on this scenario.
        infected = None if config.instrumented_source is not None else set()
        covered.clear()
        recorder = _Recorder(filename)
        code = compile(config.reference_source, filename, "exec", dont_inherit=True)
        value, problem, seconds = runner.call(code, doc, limit, tracer=tracer, wrap=recorder.wrap)
        ref = (CONTRACT, problem, DEVIATION_CAP) if problem is not None else judge(config.fields, value, truth)
    calls = recorder.save(Path(payload["dir"]) / "calls.pkl", seconds) if ref[0] == SURVIVED else None
    return {"document": doc, "truth": truth, "oracle_seconds": oracle_seconds, "ref_seconds": seconds,
            "covered": sorted(covered), "infected": None if infected is None else sorted(infected),
            "calls": calls, "ref_status": ref[0], "ref_detail": ref[1], "ref_deviation": ref[2]}


def past(epoch: float | None) -> bool:
    """Whether a wall-clock deadline (epoch seconds; None: none) has passed."""
    return epoch is not None and time.time() >= epoch


def is_timeout(problem: str) -> bool:
    """Whether a contract problem is a time limit (which the machine's load can cause)."""
    return problem.startswith(TIMED_OUT) or problem.startswith(WATCHDOG)


def is_own_timeout(problem: str) -> bool:
    """Whether a contract problem is a time limit the run reached on its own CPU time (the
    alarm's or the watchdog's; see the module docstring): the mutant's slowness, not the
    machine's load."""
    return is_timeout(problem) and f"({OWN_TIMEOUT})" in problem


def _run(conn: Any, task_id: int, payload: dict[str, Any], config: WorkerConfig, runner: _Runner) -> None:
    code = compile(payload["source"], config.reference_path, "exec", dont_inherit=True)
    stop_after = int(payload["stop_after"])  # 0: run every case; k: stop at the k-th kill
    kills = 0
    scope = payload.get("scope") or ""
    patient = set(payload.get("patient", ()))  # cases a worker died on: confirm with more time
    slow = bool(payload.get("slow"))          # a timeout of this mutant was confirmed already
    deadline = payload.get("deadline")        # wall-clock epoch after which no case starts
    memo_names = frozenset(payload.get("memo", ()))   # functions the edit cannot reach (see _Memo)
    for case in payload["cases"]:
        if past(deadline):
            break
        limit = case.timeout * CONFIRM_FACTOR if case.index in patient else case.timeout
        conn.send(("at", task_id, case.index, limit))
        if scope and case.calls is not None:
            t0 = time.perf_counter()
            if _replay_same(code, scope, case, config):
                conn.send(("unit", task_id, Verdict(case.index, SURVIVED, REPLAYED, 0.0, time.perf_counter() - t0)))
                continue
        memo = _Memo(case, memo_names)
        value, problem, seconds = runner.call(code, case.document, limit, wrap=memo.wrap if memo.tables else None)
        if problem is not None and is_timeout(problem) and not is_own_timeout(problem) and case.index not in patient \
                and not slow:
            # a timeout starved of CPU counts only when it repeats with more time (see the
            # module docstring)
            limit = case.timeout * CONFIRM_FACTOR
            conn.send(("at", task_id, case.index, limit))
            value, problem, seconds = runner.call(code, case.document, limit)
            if problem is not None and is_timeout(problem):
                problem = f"{problem} (twice: the second run was given {limit:.1f} s)"
        elif problem is not None and is_timeout(problem) and case.index in patient:
            problem = f"{problem} (after a worker death on it: the second run)"
        if problem is not None:
            v = Verdict(case.index, CONTRACT, problem, DEVIATION_CAP, seconds, memo.hits)
        else:
            status, detail, dev = judge(config.fields, value, case.truth)
            v = Verdict(case.index, status, detail, dev, seconds, memo.hits)
        conn.send(("unit", task_id, v))
        # A crash or a timeout is taken to repeat on every scenario: it ends the count at once.
        kills += (stop_after or 1) if v.status == CONTRACT else int(v.killed)
        if stop_after and kills >= stop_after:
            break


def _strategy(axes: dict[str, Any]) -> Any:
    from hypothesis import strategies as st  # noqa: PLC0415

    parts: dict[str, Any] = {}
    for name, ax in sorted(axes.items()):
        if isinstance(ax, Choice):
            parts[name] = st.sampled_from(list(ax.values))
        elif isinstance(ax, Int):
            parts[name] = st.integers(ax.lo, ax.hi)
        elif isinstance(ax, Float):
            lo, hi = ax.edges()

            def to_value(u: float, ax: Any = ax, lo: float = lo, hi: float = hi) -> float:
                # one draw in ten lands on an end of the axis, where boundary mistakes show
                if u < 0.05:
                    return float(lo)
                if u > 0.95:
                    return float(hi)
                return float(ax.from_unit(min((u - 0.05) / 0.9, 1.0 - 1e-12)))

            parts[name] = st.floats(0.0, 1.0).map(to_value)
        else:  # pragma: no cover - every axis kind is one of the above
            parts[name] = st.sampled_from(list(ax.edges()))
    return st.fixed_dictionaries(parts)


def _to_unit(ax: Any, value: Any) -> float:
    import math  # noqa: PLC0415

    if isinstance(ax, Float):
        lo, hi = float(ax.lo), float(ax.hi)
        if ax.log:
            return (math.log(value) - math.log(lo)) / (math.log(hi) - math.log(lo))
        return (float(value) - lo) / (hi - lo)
    return (int(value) - ax.lo + 0.5) / (ax.hi - ax.lo + 1)


def _search(conn: Any, task_id: int, payload: dict[str, Any], config: WorkerConfig, runner: _Runner) -> dict[str, Any]:
    """Look for a scenario on which the mutant fails.

    Two phases share the budget: hypothesis draws parameters from the axes (edges and
    odd values included) and is told each field's deviation from the truth in units of
    the tolerance (``hypothesis.target``); then a pattern search climbs the deviation
    from the best examples along the numeric axes, halving its step, because a
    deviation that grows towards a kill region is the common case (a nudged constant,
    a dropped term) and hill-climbing reaches it in tens of runs, not hundreds.
    """
    from hypothesis import HealthCheck, Phase, given, settings, target  # noqa: PLC0415
    from hypothesis import seed as hseed  # noqa: PLC0415

    oracle = config.oracle
    if oracle is None:  # pragma: no cover - programming error
        raise ReconError("a worker needs the oracle to search")
    code = compile(payload["source"], config.reference_path, "exec", dont_inherit=True)
    timeout = float(payload["timeout"])
    axes = payload["axes"]
    budget = int(payload["examples"])
    deadline = payload.get("deadline")   # wall-clock epoch after which no example starts
    found: dict[str, Any] = {}
    tried: list[tuple[float, dict[str, Any]]] = []
    scratch = Path(tempfile.mkdtemp(prefix="recon-search-", dir=payload.get("dir")))
    stopped = False

    def evaluate(params: dict[str, Any]) -> dict[str, float] | None:
        """Per-field deviations of the mutant on ``params`` (None: the oracle refused
        them); raises _Found on a kill, _OutOfTime past the deadline."""
        if past(deadline):
            raise _OutOfTime()
        n = len(tried) + 1
        d = scratch / f"s{n}"
        conn.send(("at", task_id, params, float(oracle.timeout) + timeout))
        try:
            try:
                run = run_scenario(oracle, Scenario(f"search_{n}", params), d, evidence=False)
            except OracleRunError:
                return None  # the oracle's own failure is not the mutant's: try another
            doc = canonjson.read(d / "scenario.json")
            doc["inputs"] = {k: str(d / v) for k, v in doc.get("inputs", {}).items()}
            value, problem, _ = runner.call(code, doc, timeout)
            if problem is not None:
                found.update(params=params, status=CONTRACT, detail=problem, deviation=DEVIATION_CAP)
                raise _Found()
            status, detail, dev = judge(config.fields, value, run.output)
            tried.append((dev, params))
            if status != SURVIVED:
                found.update(params=params, status=status, detail=detail, deviation=dev)
                raise _Found()
            return _field_deviations(config.fields, value, run.output)
        finally:
            shutil.rmtree(d, ignore_errors=True)

    @settings(max_examples=max(1, (budget * 3) // 5), deadline=None, database=None, derandomize=False,
              phases=[Phase.explicit, Phase.generate, Phase.target], suppress_health_check=list(HealthCheck),
              report_multiple_bugs=False, print_blob=False)
    @hseed(int(payload["seed"]))
    @given(params=_strategy(axes))
    def probe(params: dict[str, Any]) -> None:
        devs = evaluate(params)
        if devs:  # several labels: hypothesis climbs each field's deviation separately
            for name, fd in devs.items():
                target(min(fd, DEVIATION_CAP), label=name)

    def climb() -> None:
        numeric = [a for a in sorted(axes) if isinstance(axes[a], (Float, Int)) and not isinstance(axes[a], Seed)]
        starts: list[dict[str, Any]] = []
        for dev, params in sorted(tried, key=lambda t: -t[0]):
            if dev <= 0 or len(starts) >= 2:
                break
            if params not in starts:
                starts.append(params)
        for params in starts:
            cur = max(dev for dev, p in tried if p == params)
            point = {a: _to_unit(axes[a], params[a]) for a in numeric}
            step = 0.05
            while len(tried) < budget and step > 1e-6:
                moved = False
                for a in numeric:
                    for sign in (1.0, -1.0):
                        if len(tried) >= budget:
                            return
                        u = min(max(point[a] + sign * step, 0.0), 1.0 - 1e-12)
                        cand = dict(params)
                        cand[a] = axes[a].from_unit(u)
                        if cand == params:
                            continue
                        devs = evaluate(cand)
                        if devs and max(devs.values()) > cur:
                            params, point[a], cur, moved = cand, u, max(devs.values()), True
                            break
                    if moved:
                        break
                step = step * 1.5 if moved else step / 2

    try:
        probe()
        climb()
    except _Found:
        pass
    except _OutOfTime:
        stopped = True
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    best = max((dev for dev, _ in tried), default=0.0)
    return {"found": found or None, "examples": len(tried) + (1 if found else 0), "best_deviation": best,
            "stopped": stopped}


# --------------------------------------------------------------------------- parent side
@dataclass
class Task:
    """One unit of work for a worker; ``on_unit`` sees each streamed unit, ``on_done``
    the final result (or, after a worker death, the parent's account of it)."""

    kind: str                                   # gen, run, search
    payload: dict[str, Any]
    on_done: Callable[["Task", Any], None]
    on_unit: Callable[["Task", Any], None] | None = None
    prepare: Callable[[], dict[str, Any]] | None = None   # builds the payload when dispatched
    id: int = 0
    units: list[Any] = field(default_factory=list)


@dataclass
class _Worker:
    process: Any
    conn: Any
    task: Task | None = None
    unit: Any = None
    deadline: float = float("inf")
    unit_limit: float = 0.0          # the running unit's time limit ...
    unit_cpu: float | None = None    # ... and the worker's CPU seconds when it started


def process_cpu(pid: int) -> float | None:
    """CPU seconds a live process has used, with those of the children it waited for
    (Linux ``/proc``); None where that cannot be read."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rfind(")") + 2:].split()   # after "pid (comm) ": state is field 3
    try:
        return sum(int(f) for f in fields[11:15]) / _CLOCK_TICKS   # utime stime cutime cstime
    except (ValueError, IndexError):
        return None


_CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


class WorkerPool:
    """``n`` forked workers and a queue of tasks (pinned one to a CPU when they are as
    many as the CPUs: :func:`pinned_cpus`)."""

    def __init__(self, n: int, config: WorkerConfig) -> None:
        self.config = config
        self.ctx = get_context("fork")  # workers inherit the oracle and the imported toolkit
        self.cpus = pinned_cpus(max(1, n))
        self.workers = [self._start(slot) for slot in range(max(1, n))]
        self.queue: collections.deque[Task] = collections.deque()
        self.serial = 0
        self.restarts = 0
        self._error: str | None = None
        self.on_tick: Callable[[], None] | None = None   # called every tick_seconds while draining
        self.tick_seconds = 15.0
        self._last_tick = time.monotonic()
        self._cpu_seen: dict[int, float] = {}   # pid -> its last CPU reading
        self._cpu_gone = 0.0                     # CPU of workers replaced since (as last read)

    def cpu_seconds(self) -> float | None:
        """CPU seconds the workers have used (a replaced worker's up to its last
        reading); None where the system cannot say (no ``/proc``)."""
        total = self._cpu_gone
        for w in self.workers:
            cpu = process_cpu(w.process.pid)
            if cpu is None:
                if w.process.pid not in self._cpu_seen:
                    return None
                cpu = self._cpu_seen[w.process.pid]
            self._cpu_seen[w.process.pid] = cpu
            total += cpu
        return total

    def _start(self, slot: int) -> _Worker:
        parent, child = self.ctx.Pipe(duplex=True)
        p = self.ctx.Process(target=_serve, args=(child, self.config), daemon=True)
        p.start()
        child.close()
        if self.cpus and p.pid is not None:
            pin_process(p.pid, self.cpus[slot])
        return _Worker(p, parent)

    def submit(self, task: Task, *, front: bool = False) -> None:
        self.serial += 1
        task.id = self.serial
        if front:
            self.queue.appendleft(task)
        else:
            self.queue.append(task)

    def _send(self, w: _Worker, task: Task) -> None:
        if task.prepare is not None:
            task.payload = task.prepare()
        w.task, w.unit, w.deadline = task, None, float("inf")
        w.conn.send((task.kind, task.id, task.payload))

    def drain(self) -> None:
        """Run until the queue is empty and every worker is idle (callbacks may submit more)."""
        while True:
            for w in self.workers:
                if w.task is None and self.queue:
                    self._send(w, self.queue.popleft())
            busy = [w for w in self.workers if w.task is not None]
            if not busy:
                if self._error:
                    err, self._error = self._error, None
                    raise ReconError(f"mutation worker failed: {err}")
                return
            now = time.monotonic()
            wait = max(0.0, min(w.deadline for w in busy) - now) if any(w.deadline < float("inf") for w in busy) else 1.0
            ready = connection.wait([w.conn for w in busy] + [w.process.sentinel for w in busy], timeout=min(wait, 1.0))
            for w in busy:
                if w.conn in ready:
                    self._read(w)
                elif w.process.sentinel in ready and w.task is not None:
                    self._died(w, self._crash(w))
            now = time.monotonic()
            for w in self.workers:
                if w.task is not None and now > w.deadline:
                    # a unit stuck in a C loop: on the CPU all along, it is the mutant's own
                    cpu = process_cpu(w.process.pid)
                    own = cpu is not None and w.unit_cpu is not None and cpu - w.unit_cpu >= OWN_CPU * w.unit_limit
                    self._died(w, f"{WATCHDOG} ({OWN_TIMEOUT})" if own else WATCHDOG)
            if self.on_tick is not None and now - self._last_tick >= self.tick_seconds:
                self._last_tick = now
                self.on_tick()

    def _read(self, w: _Worker) -> None:
        while w.task is not None and w.conn.poll():
            try:
                msg = w.conn.recv()
            except (EOFError, OSError):
                self._died(w, self._crash(w))
                return
            kind = msg[0]
            task = w.task
            if kind == "at":
                w.unit = msg[2]
                w.unit_limit = float(msg[3])
                w.unit_cpu = process_cpu(w.process.pid)
                w.deadline = time.monotonic() + w.unit_limit * 1.2 + GRACE
            elif kind == "unit":
                task.units.append(msg[2])
                if task.on_unit:
                    task.on_unit(task, msg[2])
            elif kind == "done":
                w.task, w.unit, w.deadline = None, None, float("inf")
                task.on_done(task, msg[2])
            elif kind == "error":
                w.task, w.unit, w.deadline = None, None, float("inf")
                self._error = self._error or str(msg[2])
                self.queue.clear()

    @staticmethod
    def _crash(w: _Worker) -> str:
        """Why a worker that stopped answering is gone (its exit status, once reaped)."""
        w.process.join(1.0)
        code = w.process.exitcode
        why = f"killed by signal {-code}" if code is not None and code < 0 else f"exit code {code}"
        return f"crashed the worker ({why})"

    @staticmethod
    def _kill(w: _Worker, wait: float) -> None:
        try:
            os.kill(w.process.pid, signal.SIGKILL)
        except OSError:
            pass
        w.process.join(wait)

    def _died(self, w: _Worker, why: str) -> None:
        task, unit = w.task, w.unit
        self._kill(w, 5.0)
        self._cpu_gone += self._cpu_seen.pop(w.process.pid, 0.0)
        w.conn.close()
        self.restarts += 1
        fresh = self._start(self.workers.index(w))
        w.process, w.conn, w.task, w.unit, w.deadline = fresh.process, fresh.conn, None, None, float("inf")
        if task is not None:
            task.on_done(task, {"died": why, "unit": unit})

    def close(self) -> None:
        for w in self.workers:
            try:
                w.conn.send(("stop",))
            except (OSError, ValueError):
                pass
        for w in self.workers:
            w.process.join(2.0)
            if w.process.is_alive():
                self._kill(w, 2.0)
            w.conn.close()

    def __enter__(self) -> "WorkerPool":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
