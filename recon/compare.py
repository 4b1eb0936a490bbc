"""Typed, tolerance-aware comparison of a program's output with the oracle's truth.

This module is the single source of comparison logic. The grader imports it, and the
in-container feedback tool carries a copy generated from this very file at build time,
so it must stay standard-library only and self-contained (no imports from recon).

An output field is described by a *spec*: a small JSON object such as
``{"kind": "number", "abs": 0.001, "rel": 0.0}``. Comparison is typed first (a string
never equals a number, ``true`` never equals ``1``), then tolerant. NaN and Infinity
never equal anything.

Everything here treats a program's output as hostile: :func:`parse_stdout` bounds the
size, nesting depth and element count of what it parses and refuses non-finite numbers
and integers beyond +-2**63; set fields are capped in length and count; SMILES are
canonicalised by RDKit in a separate helper process with time and memory limits, so a
molecule that makes RDKit crash or spin costs that one value ("unparseable"), never the
grader or the feedback tool.
"""
from __future__ import annotations

import itertools
import json
import math
import os
import re
import sys
import threading
import time
from typing import Any, Iterator, NamedTuple

KINDS = ("number", "integer", "exact", "text", "angle", "set", "sequence")

#: nesting depth of a program's output JSON ([[1]] has depth 2)
MAX_DEPTH = 64
#: JSON values (scalars and containers) in one output
MAX_ELEMENTS = 1_000_000
#: characters of stdout parsed as JSON
MAX_CHARS = 16 << 20
#: integers beyond this magnitude are refused (they overflow every float comparison)
MAX_INT = 2 ** 63
#: items of a set field, and characters of one item
MAX_SET_ITEMS = 1000
MAX_SET_ITEM_CHARS = 4096
#: seconds one SMILES may take in the helper, and in all for one set value
SMILES_ITEM_SECONDS = 5.0
SMILES_VALUE_SECONDS = 15.0
#: address space and CPU seconds of the SMILES helper process
SMILES_MEMORY = 2 << 30
SMILES_CPU_SECONDS = 300

PASS = "PASS"
MISMATCH = "MISMATCH"
MISSING = "MISSING"
WRONG_KIND = "WRONG_KIND"


class FieldResult(NamedTuple):
    """The verdict for one output field of one scenario."""

    field: str
    status: str  # PASS, MISMATCH, MISSING or WRONG_KIND
    detail: str  # empty for PASS; "got ... want ... (tolerance)" otherwise
    margin: float | None = None  # distance in units of the tolerance (None: not a numeric kind)

    @property
    def ok(self) -> bool:
        return self.status == PASS


def fmt(value: Any, limit: int = 60) -> str:
    """A short, readable rendering of a JSON value for one-line reports.

    Renders at most about ``limit`` characters of the value, however large or deep it is.
    """
    if isinstance(value, bool) or value is None:
        text = json.dumps(value)
    elif isinstance(value, float):
        text = format(value, ".6g") if math.isfinite(value) else repr(value)
    elif isinstance(value, int):
        text = str(value) if abs(value) <= MAX_INT else f"<integer of {value.bit_length()} bits>"
    elif isinstance(value, str):
        text = json.dumps(value[: limit + 1], ensure_ascii=False)
    else:
        text = _prefix(value, limit + 1)
    if len(text) > limit:
        text = text[: max(0, limit - 3)] + "..."
    return text


def _prefix(value: Any, limit: int) -> str:
    """The first ``limit`` characters of ``value`` as compact JSON, rendered lazily (a
    huge output is never encoded, nor walked, in full just to be cut)."""
    try:
        if _depth_exceeds(value, MAX_DEPTH, nodes=max(limit, MAX_DEPTH) + 2):
            return f"<a JSON {_kind_name(value)} nested deeper than {MAX_DEPTH} levels>"
        enc = json.JSONEncoder(ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=repr)
        parts: list[str] = []
        size = 0
        for chunk in enc.iterencode(value):
            parts.append(chunk[: limit - size + 1])
            size += len(parts[-1])
            if size > limit:
                break
        return "".join(parts)
    except (ValueError, TypeError, RecursionError):
        return f"<an unrenderable {type(value).__name__}>"


_END = object()


def _walk(value: Any, *, sort_keys: bool = False) -> Iterator[tuple[Any, int]]:
    """``value`` and every value it holds, each with its depth (``value`` itself: 1), in
    the order compact JSON encodes them (``sort_keys``: a dict's values by sorted key),
    lazily and without recursion: a caller that stops early walks no further."""
    stack: list[Iterator[Any]] = [iter((value,))]
    while stack:
        v = next(stack[-1], _END)
        if v is _END:
            stack.pop()
            continue
        yield v, len(stack)
        if isinstance(v, list):
            stack.append(iter(v))
        elif isinstance(v, dict):
            stack.append(iter([v[k] for k in sorted(v, key=str)]) if sort_keys else iter(v.values()))


def _depth_exceeds(value: Any, limit: int, *, nodes: int | None = None) -> bool:
    """Whether ``value`` nests deeper than ``limit``.

    ``nodes``: look only at the first ``nodes`` values in the order compact JSON encodes
    them (keys sorted). Each value encodes to at least one character, so that is every
    level an encoding cut at ``nodes - 1`` characters descends into, at a cost bounded by
    ``nodes`` rather than by the size of ``value``."""
    walk = _walk(value, sort_keys=nodes is not None)
    for v, depth in walk if nodes is None else itertools.islice(walk, nodes):
        if depth > limit and isinstance(v, (list, dict)):
            return True
    return False


def _at_most(value: Any, nodes: int) -> bool:
    """Whether ``value`` holds at most ``nodes`` JSON values (itself included), counted
    only as far as needed."""
    return next(itertools.islice(_walk(value), nodes, None), _END) is _END


def bounded(value: Any, limit: int = 400, depth: int = 16) -> Any:
    """``value`` itself when its compact JSON fits in ``limit`` characters and nests at
    most ``depth`` levels, else a string rendering of its beginning: what reports may
    record of an untrusted output. (A value of more than ``limit`` JSON values cannot
    fit; it is rendered without being walked in full.)"""
    if (_at_most(value, limit) and not _depth_exceeds(value, depth) and not _has_nonfinite(value)
            and len(_prefix(value, limit + 1)) <= limit):
        return value
    return fmt(value, limit)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _kind_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def describe(spec: dict[str, Any]) -> str:
    """The tolerance of a field in words, as reports and instructions print it."""
    kind = spec["kind"]
    if kind == "number":
        parts = []
        if spec.get("abs"):
            parts.append(f"abs tol {fmt(float(spec['abs']))}")
        if spec.get("rel"):
            parts.append(f"rel tol {fmt(float(spec['rel']))}")
        return " or ".join(parts) if parts else "exact number"
    if kind == "integer":
        tol = int(spec.get("tol", 0))
        return "exact integer" if tol == 0 else f"integer, tol {tol}"
    if kind == "exact":
        return "exact value and type"
    if kind == "text":
        norm = spec.get("normalize")
        return "exact text" if not norm else f"text after {norm}"
    if kind == "angle":
        return f"angle tol {fmt(float(spec['tol']))} deg (period {fmt(float(spec.get('period', 360.0)))})"
    if kind == "set":
        norm = spec.get("normalize")
        return "set of strings" + (f" after {norm} canonicalization" if norm else "")
    if kind == "sequence":
        return "same-length list, each item: " + describe(spec["item"])
    raise ValueError(f"unknown output kind {kind!r}")


def kind_error(spec: dict[str, Any], value: Any) -> str | None:
    """Why ``value`` is not of the field's kind, or None when it is."""
    kind = spec["kind"]
    ok: bool
    want: str
    if kind in ("number", "angle"):
        ok, want = _is_number(value), "a number"
        if ok and isinstance(value, int) and abs(value) > MAX_INT:
            return f"the integer {fmt(value, 30)} is beyond +-2**63"
    elif kind == "integer":
        ok, want = isinstance(value, int) and not isinstance(value, bool), "an integer"
        if ok and abs(value) > MAX_INT:
            return f"the integer {fmt(value, 30)} is beyond +-2**63"
    elif kind == "exact":
        return None
    elif kind == "text":
        ok, want = isinstance(value, str), "a string"
    elif kind == "set":
        ok, want = isinstance(value, list) and all(isinstance(v, str) for v in value), "a list of strings"
        if ok and len(value) > MAX_SET_ITEMS:
            return f"a set of at most {MAX_SET_ITEMS} items is expected, got {len(value)} items"
        if ok:
            for i, v in enumerate(value):
                if len(v) > MAX_SET_ITEM_CHARS:
                    return f"item {i} is {len(v)} characters long (at most {MAX_SET_ITEM_CHARS})"
    elif kind == "sequence":
        ok, want = isinstance(value, list), "a list"
        if ok:
            for i, item in enumerate(value):
                err = kind_error(spec["item"], item)
                if err:
                    return f"item {i}: {err}"
    else:
        raise ValueError(f"unknown output kind {kind!r}")
    if ok:
        return None
    return f"expected {want}, got {_kind_name(value)} {fmt(value, 30)}"


# The SMILES helper: RDKit runs in a child process, never in the grader or the feedback
# tool. A 20,000-atom chain makes RDKit recurse until it segfaults, and canonicalisation
# time grows quadratically with size, so each value gets a time limit, the helper runs
# under memory and CPU rlimits, and a crash or timeout costs only the value at hand.
_HELPER_SOURCE = """
import json, sys
try:
    import resource
    for which, value in ((resource.RLIMIT_AS, @MEM@), (resource.RLIMIT_CPU, @CPU@), (resource.RLIMIT_CORE, 0)):
        soft, hard = resource.getrlimit(which)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        resource.setrlimit(which, (value, hard))
except (ImportError, ValueError, OSError):
    pass
try:
    from rdkit import Chem, RDLogger
    RDLogger.DisableLog("rdApp.*")
except Exception:
    sys.stdout.write("no-rdkit\\n")
    sys.stdout.flush()
    sys.exit(0)
sys.stdout.write("ready\\n")
sys.stdout.flush()
for line in sys.stdin:
    try:
        mol = Chem.MolFromSmiles(json.loads(line))
        out = None if mol is None else Chem.MolToSmiles(mol)
    except Exception:
        out = None
    sys.stdout.write(json.dumps(out) + "\\n")
    sys.stdout.flush()
"""


class SmilesHelper:
    """A persistent child process that canonicalises SMILES with RDKit, under limits.

    :meth:`canonical` returns the canonical SMILES, or None when the string does not
    parse, the helper crashed on it, or it took longer than ``item_seconds`` (the helper
    is then killed and restarted on the next call). :attr:`available` is False when RDKit
    cannot be imported (SMILES then compare as written).
    """

    def __init__(self, *, item_seconds: float = SMILES_ITEM_SECONDS, memory: int = SMILES_MEMORY,
                 cpu_seconds: int = SMILES_CPU_SECONDS, python: str | None = None) -> None:
        self.item_seconds = item_seconds
        self.memory = memory
        self.cpu_seconds = cpu_seconds
        self.python = python or sys.executable or "python3"
        self.available: bool | None = None  # None: not started yet
        self.problem = ""
        self.crashes = 0
        self._proc: Any = None
        self._buf = b""
        self._lock = threading.Lock()

    def ready(self) -> bool:
        """Whether RDKit canonicalises SMILES here (starts the helper the first time)."""
        with self._lock:
            if self.available is None:
                self._ensure()
            return bool(self.available)

    def _ensure(self) -> bool:
        if self._proc is not None and self._proc.poll() is None:
            return True
        if self.available is False:
            return False
        import subprocess  # noqa: PLC0415 - only when a SMILES field is compared

        code = _HELPER_SOURCE.replace("@MEM@", str(int(self.memory))).replace("@CPU@", str(int(self.cpu_seconds)))
        self._buf = b""
        try:
            self._proc = subprocess.Popen([self.python, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          stderr=subprocess.DEVNULL, cwd="/", start_new_session=True)
        except OSError as exc:
            self.available, self.problem = False, f"cannot start {self.python}: {exc}"
            return False
        hello = self._readline(time.monotonic() + 120.0)
        if hello == b"ready":
            self.available = True
            return True
        self._kill()
        if self.available is None:
            # Never started: RDKit is missing, or it cannot even import under the limits.
            self.available = False
            self.problem = "RDKit is not importable" if hello == b"no-rdkit" else "the RDKit helper did not start"
        return False

    def _readline(self, deadline: float) -> bytes | None:
        import select  # noqa: PLC0415

        fd = self._proc.stdout.fileno()
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0 or len(self._buf) > (1 << 20):
                return None
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                return None
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return None  # the helper died
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        return line.strip()

    def canonical(self, smiles: str, timeout: float | None = None) -> str | None:
        """RDKit's canonical form of ``smiles``; None when it does not parse, crashes the
        helper or times out. Call only when :meth:`ready` is True."""
        limit = self.item_seconds if timeout is None else min(timeout, self.item_seconds)
        with self._lock:
            if not self._ensure():
                return None
            try:
                self._proc.stdin.write(json.dumps(smiles).encode("utf-8") + b"\n")
                self._proc.stdin.flush()
            except OSError:
                line = None
            else:
                line = self._readline(time.monotonic() + max(0.0, limit))
            if line is None:  # crashed or too slow: that value is unparseable
                self.crashes += 1
                self._kill()
                return None
            try:
                out = json.loads(line)
            except ValueError:
                out = None
            return out if isinstance(out, str) else None

    def _kill(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            proc.kill()
        except OSError:
            pass
        try:
            proc.wait(timeout=10)
        except Exception:  # noqa: BLE001 - a zombie is the worst outcome here
            pass
        for stream in (proc.stdin, proc.stdout):
            try:
                stream.close()
            except OSError:
                pass

    def close(self) -> None:
        """Stop the helper (the next call starts a new one)."""
        with self._lock:
            self._kill()
            self._buf = b""


_HELPER: list[SmilesHelper] = []
_HELPER_LOCK = threading.Lock()
_CANON_CACHE: dict[str, str | None] = {}
_CANON_CACHE_MAX = 100_000


def smiles_helper() -> SmilesHelper:
    """The process-wide SMILES helper (started on first use)."""
    with _HELPER_LOCK:
        if not _HELPER:
            import atexit  # noqa: PLC0415

            _HELPER.append(SmilesHelper())
            atexit.register(close_smiles_helper)
        return _HELPER[0]


def close_smiles_helper() -> None:
    """Stop the SMILES helper process, if one runs (it restarts on demand)."""
    with _HELPER_LOCK:
        helpers = list(_HELPER)
    for h in helpers:
        h.close()


def normalize_set(spec: dict[str, Any], values: list[str]) -> tuple[list[str], list[str]]:
    """Normalise a set field: returns (sorted unique items, items that did not parse).

    SMILES are canonicalised by the helper process; an item it cannot canonicalise in
    time (or at all), an item longer than MAX_SET_ITEM_CHARS, and every item left when
    the value's time budget is spent count as unparseable.
    """
    norm = spec.get("normalize")
    bad: list[str] = []
    out: set[str] = set()
    if norm == "smiles":
        helper = smiles_helper()
        if not helper.ready():
            return sorted(set(values)), []  # no RDKit here: compare as written
        deadline = time.monotonic() + SMILES_VALUE_SECONDS
        for v in values:
            if v in _CANON_CACHE:
                c = _CANON_CACHE[v]
            elif len(v) > MAX_SET_ITEM_CHARS or time.monotonic() >= deadline:
                c = None
            else:
                left = deadline - time.monotonic()
                c = helper.canonical(v, timeout=left)
                if c is not None or left >= helper.item_seconds:  # not merely cut short by this value's budget
                    if len(_CANON_CACHE) >= _CANON_CACHE_MAX:
                        _CANON_CACHE.clear()
                    _CANON_CACHE[v] = c
            if c is None:
                bad.append(v)
            else:
                out.add(c)
    elif norm in (None, "strip"):
        out = {v.strip() if norm else v for v in values}
    else:
        raise ValueError(f"unknown set normalisation {norm!r}")
    return sorted(out), bad


def smiles_available() -> bool:
    """Whether RDKit can canonicalise SMILES here (else SMILES compare as written)."""
    return smiles_helper().ready()


def within(spec: dict[str, Any], got: Any, want: Any) -> bool:
    """True when ``got`` equals ``want`` under the field's kind and tolerance (what
    :func:`check` says, without writing the message)."""
    return _agree(spec, got, want)[0]


def _num_close(got: float, want: float, abs_tol: float, rel_tol: float) -> bool:
    if not (math.isfinite(got) and math.isfinite(want)):
        return False
    diff = abs(got - want)
    return diff <= max(abs_tol, rel_tol * max(abs(got), abs(want)))


def check(spec: dict[str, Any], got: Any, want: Any) -> tuple[bool, str]:
    """Compare one value with the truth: (ok, "got ... want ... (tolerance)")."""
    ok, why = _agree(spec, got, want)
    if ok:
        return True, ""
    return False, why if why is not None else f"got {fmt(got)}  want {fmt(want)}  ({describe(spec)})"


def _agree(spec: dict[str, Any], got: Any, want: Any) -> tuple[bool, str | None]:
    """Whether ``got`` agrees with ``want``, and the reason when it cannot be compared
    (a wrong kind, unparseable items); None where :func:`check` writes the usual one."""
    err = kind_error(spec, got)
    if err is not None:
        return False, err
    kind = spec["kind"]
    ok: bool
    if kind == "number":
        ok = _num_close(float(got), float(want), float(spec.get("abs", 0.0)), float(spec.get("rel", 0.0)))
    elif kind == "integer":
        ok = abs(int(got) - int(want)) <= int(spec.get("tol", 0))
    elif kind == "exact":
        ok = type(got) is type(want) and got == want and not _has_nonfinite(got)
    elif kind == "text":
        norm = spec.get("normalize")
        if norm == "strip":
            ok = got.strip() == want.strip()
        elif norm == "casefold":
            ok = got.strip().casefold() == want.strip().casefold()
        else:
            ok = got == want
    elif kind == "angle":
        g, w = float(got), float(want)
        if not (math.isfinite(g) and math.isfinite(w)):
            ok = False
        else:
            period = float(spec.get("period", 360.0))
            d = abs(g - w) % period
            ok = min(d, period - d) <= float(spec["tol"])
    elif kind == "set":
        g_items, g_bad = normalize_set(spec, got)
        w_items, _ = normalize_set(spec, want)
        ok = not g_bad and g_items == w_items
        if g_bad and not ok:
            return False, f"unparseable items {fmt(g_bad, 40)}  want {fmt(w_items)}  ({describe(spec)})"
    elif kind == "sequence":
        ok = len(got) == len(want) and all(within(spec["item"], g, w) for g, w in zip(got, want))
    else:
        raise ValueError(f"unknown output kind {kind!r}")
    return ok, None


def _has_nonfinite(value: Any) -> bool:
    return any(isinstance(v, float) and not math.isfinite(v) for v, _ in _walk(value))


def margin(spec: dict[str, Any], got: Any, want: Any) -> float | None:
    """How far ``got`` is from ``want`` in units of the field's tolerance (0 = exact, 1 =
    at the edge); None for kinds without a scale (exact, text, set), a zero tolerance
    that is exceeded, or values of the wrong kind."""
    if kind_error(spec, got) is not None:
        return None
    kind = spec["kind"]
    if kind == "number":
        g, w = float(got), float(want)
        tol = max(float(spec.get("abs", 0.0)), float(spec.get("rel", 0.0)) * max(abs(g), abs(w)))
        diff = abs(g - w)
    elif kind == "integer":
        tol, diff = float(spec.get("tol", 0)), float(abs(int(got) - int(want)))
    elif kind == "angle":
        period = float(spec.get("period", 360.0))
        d = abs(float(got) - float(want)) % period
        tol, diff = float(spec["tol"]), min(d, period - d)
    elif kind == "sequence":
        if len(got) != len(want):
            return None
        items = [margin(spec["item"], g, w) for g, w in zip(got, want)]
        if any(m is None for m in items):
            return None
        return max((m for m in items if m is not None), default=0.0)
    else:
        return None
    if not math.isfinite(diff):
        return None
    if diff == 0:
        return 0.0
    return diff / tol if tol > 0 else None


def format_margin(m: float | None) -> str:
    """A margin for a report line: "0.62 tol", "230 tol"; empty when there is none."""
    if m is None:
        return ""
    if m < 10:
        return f"{m:.2f} tol"
    return f"{m:.0f} tol" if m < 1e6 else f"{m:.2e} tol"


def compare_output(fields: dict[str, dict[str, Any]], got: dict[str, Any], want: dict[str, Any]) -> list[FieldResult]:
    """One :class:`FieldResult` per declared output field, in sorted field order."""
    results = []
    for name in sorted(fields):
        spec = fields[name]
        if name not in got:
            results.append(FieldResult(name, MISSING, "missing from the output"))
            continue
        kerr = kind_error(spec, got[name])
        if kerr is not None:
            results.append(FieldResult(name, WRONG_KIND, kerr))
            continue
        ok, detail = check(spec, got[name], want[name])
        results.append(FieldResult(name, PASS if ok else MISMATCH, detail, margin(spec, got[name], want[name])))
    return results


def contract_errors(fields: dict[str, dict[str, Any]], got: Any) -> list[str]:
    """Why an output does not speak the contract (empty list when it does)."""
    if not isinstance(got, dict):
        return [f"the output is a JSON {_kind_name(got)}, not an object"]
    errors = []
    for name in sorted(fields):
        if name not in got:
            errors.append(f"field {name!r} is missing")
        else:
            kerr = kind_error(fields[name], got[name])
            if kerr is not None:
                errors.append(f"field {name!r}: {kerr}")
    return errors


class _Refused(ValueError):
    """A JSON value recon refuses to hold (the message is the reason)."""


def _reject_constant(name: str) -> Any:
    raise _Refused(f"{name} is not valid JSON")


def _parse_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Refused(f"the number {fmt(text, 30)} is not a finite float (it overflows to infinity)")
    return value


def _parse_int(text: str) -> int:
    # Bound the digits before converting: int() of a huge literal costs quadratic time.
    if len(text) > 20:
        raise _Refused(f"the integer {fmt(text, 30)} ({len(text.lstrip('-'))} digits) is beyond +-2**63")
    value = int(text)
    if abs(value) > MAX_INT:
        raise _Refused(f"the integer {text} is beyond +-2**63")
    return value


# A JSON string, and everything that is not a bracket or a comma once strings are gone.
# Every match from a quote succeeds (an unterminated string runs to the end) and nothing
# is given back (possessive): a failing match retried from each later quote once took
# quadratic time. What else is wrong with a string is json.loads's to say.
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*+(?:"|\\?\Z)', re.DOTALL)
_NOT_STRUCTURE = re.compile(r"[^\[\]{},]+")
_DEPTH_STEP = {"[": 1, "{": 1, "]": -1, "}": -1, ",": 0}


def shape_problem(text: str) -> str | None:
    """Why ``text`` is too big, too deep or has too many elements to parse, or None.

    Scans without parsing (regular expressions and counting), so nothing recurses: the
    json module's parser recurses once per nesting level.
    """
    if len(text) > MAX_CHARS:
        return f"the output is {len(text)} characters long (at most {MAX_CHARS})"
    skeleton = _NOT_STRUCTURE.sub("", _JSON_STRING.sub("0", text))
    elements = skeleton.count(",") + skeleton.count("[") + skeleton.count("{") + 1
    if elements > MAX_ELEMENTS:
        return f"the output holds about {elements} JSON values (at most {MAX_ELEMENTS})"
    deepest = max(itertools.accumulate(_DEPTH_STEP[c] for c in skeleton), default=0)
    if deepest > MAX_DEPTH:
        return f"the output nests {deepest} levels deep (at most {MAX_DEPTH})"
    return None


def parse_stdout(stdout: bytes) -> tuple[Any, str | None]:
    """Decode a program's stdout as one JSON value: (value, None) or (None, why not).

    Never raises: outputs too large, too deep or with too many elements, non-finite
    numbers and integers beyond +-2**63 are refused with a reason.
    """
    if len(stdout) > 4 * MAX_CHARS:
        return None, f"the output is {len(stdout)} bytes long (at most {MAX_CHARS} characters)"
    try:
        text = stdout.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"output is not UTF-8 ({exc.reason} at byte {exc.start})"
    if not text.strip():
        return None, "no output on stdout"
    problem = shape_problem(text)
    if problem is not None:
        return None, f"unusable JSON on stdout: {problem}"
    try:
        value = json.loads(text, parse_constant=_reject_constant, parse_float=_parse_float, parse_int=_parse_int)
        # "\\udc80" is valid JSON but not Unicode text: it could never be written back out.
        json.dumps(value, ensure_ascii=False).encode("utf-8")
        return value, None
    except UnicodeEncodeError:
        return None, "unusable JSON on stdout: a string holds a lone UTF-16 surrogate escape, which is not text"
    except _Refused as exc:
        return None, f"unusable JSON on stdout: {exc}"
    except (ValueError, RecursionError) as exc:
        first = text.strip().splitlines()[0] if text.strip() else ""
        return None, f"invalid JSON on stdout ({fmt(str(exc), 120)}); it starts with {fmt(first, 50)}"
