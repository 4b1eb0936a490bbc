"""Verdicts kept across analyses: a mutant's verdict on a scenario is computed once.

A verdict is a pure function of the reference (the mutant is an edit of it), the oracle's
code (which makes the scenario's inputs and truth from its parameters and compares the
outputs), the scenario's parameters and the worker's memory limit. A build's stress
selection and the ``recon validate`` that follows it run the same mutants on the same
public and hidden scenarios; two builds of one oracle with different secrets share their
public candidates, which do not depend on the key. :class:`VerdictStore` keeps every
verdict a worker reported under that identity, in ``$RECON_HOME/cache/verdicts`` (private
to the user, like the selection cache: it holds digests of hidden scenarios' parameters),
and an engine given one runs only the pairs it does not hold.

An oracle may ship verdicts beside its module (``kept/verdicts.json.gz``, written with its
shipped runs by ``tests/catalog/keep_runs.py``): its mutants' verdicts on the public
candidates every build draws alike. They are consulted after the user's own, under the same
identity plus the library versions installed (:func:`recon.grader.library_versions`: a
scenario is kept by its parameters, and the inputs and truth the oracle makes from them may
change with a library's version); they are never copied into the user's store.

What is not kept: timeouts the machine's load may have caused and worker deaths (they are
confirmed by running again; a timeout reached on the run's own CPU time is kept), and
survivals recorded without sending the mutant to a worker (not reached or not infected:
line tracing, which the engine redoes, decides them). A store that cannot be read is
empty; one that cannot be written is not written: it is a cache, and never fails an
analysis.
"""
from __future__ import annotations

import hashlib
import math
import threading
from pathlib import Path
from typing import Any

from .. import canonjson
from ..fsutil import read_json_gz, read_private, write_json_gz, write_private
from ..grader import library_versions
from .._version import __version__
from ..oracle import Oracle
from ..sweep import Scenario, recon_home
from .worker import CONTRACT, SURVIVED, VALUE

__all__ = ["VerdictStore"]

#: bumped when what a verdict means changes (the comparison, the worker's protocol)
STORE_FORMAT = 1
VERDICTS = frozenset({SURVIVED, VALUE, CONTRACT})


def scenario_digest(scenario: Scenario) -> str:
    """What a verdict is kept under for a scenario: its parameters (the oracle makes the
    rest from them), digested."""
    return scenario.digest()


class VerdictStore:
    """Verdicts of one reference's mutants, keyed by the mutant's edit and the scenario's
    parameters (see the module docstring). Thread-safe: workers' callbacks record into it."""

    SHIPPED = "verdicts.json.gz"   # in the oracle's kept_dir

    def __init__(self, path: Path | None, ident: dict[str, Any],
                 shipped: tuple[Path, dict[str, Any]] | None = None) -> None:
        """``shipped``: (file, identity) of the verdicts the oracle ships, read when the
        file was written under that identity."""
        self.path = path
        self.ident = ident
        self._lock = threading.Lock()
        self._data: dict[str, dict[str, list[Any]]] = {}
        self._shipped: dict[str, dict[str, list[Any]]] = {}
        self._new = 0
        self.shipped_hits = 0
        if path is not None:
            self._data = self._kept(path)
        if shipped is not None and shipped[0].is_file():
            self._shipped = self._read_shipped(*shipped)

    @staticmethod
    def _read_shipped(path: Path, ident: dict[str, Any]) -> dict[str, dict[str, list[Any]]]:
        doc = read_json_gz(path)
        rows = doc.get("verdicts") if isinstance(doc, dict) and doc.get("ident") == ident else None
        return {str(k): dict(v) for k, v in rows.items() if isinstance(v, dict)} if isinstance(rows, dict) else {}

    def write_shipped(self, path: Path, oracle: Oracle, *, keep_shipped: bool = False) -> int:
        """Write every verdict this store holds (the user's, not shipped ones; with
        ``keep_shipped``, the ones shipped so far too) as ``oracle``'s shipped verdicts (gzip
        without a timestamp: the same verdicts make the same bytes). Returns how many."""
        with self._lock:
            rows = {k: {**(self._shipped.get(k, {}) if keep_shipped else {}), **self._data.get(k, {})}
                    for k in {*self._data, *(self._shipped if keep_shipped else {})}}
            data = {k: dict(sorted(v.items())) for k, v in sorted(rows.items())}
        write_json_gz(path, {"ident": {**self.ident, "libraries": library_versions(oracle)}, "verdicts": data})
        return sum(len(v) for v in data.values())

    def _kept(self, path: Path) -> dict[str, dict[str, list[Any]]]:
        """The verdicts kept at ``path`` under this store's identity."""
        rows = read_private(path, self.ident).get("verdicts")
        return {str(k): dict(v) for k, v in rows.items() if isinstance(v, dict)} if isinstance(rows, dict) else {}

    @classmethod
    def for_oracle(cls, oracle: Oracle, *, memory: int, home: Path | None = None) -> "VerdictStore":
        """The store of ``oracle``'s current code and reference, under ``home`` (default
        ``$RECON_HOME``)."""
        ident = {"format": STORE_FORMAT, "recon": __version__, "oracle": oracle.name, "version": oracle.version,
                 "code": oracle.source_digest(), "memory": memory}
        digest = hashlib.sha256(canonjson.dumps_compact(ident).encode("utf-8")).hexdigest()[:32]
        return cls((home or recon_home()) / "cache" / "verdicts" / f"{digest}.json", ident,
                   shipped=(cls.shipped_path(oracle), {**ident, "libraries": library_versions(oracle)}))

    @classmethod
    def shipped_path(cls, oracle: Oracle) -> Path:
        return oracle.kept_dir / cls.SHIPPED

    def __len__(self) -> int:
        with self._lock:
            return sum(len(v) for v in self._data.values())

    def get(self, mutant_key: str, scenario: Scenario) -> tuple[str, str, float] | None:
        """(status, detail, deviation) of the mutant on the scenario, when kept."""
        return self._get(mutant_key, scenario, count=True)

    def survivals(self, mutant_key: str) -> int | None:
        """How many scenarios the mutant's kept verdicts (the user's and the shipped ones)
        show it surviving; None when one of them shows it killed."""
        with self._lock:
            rows = {**self._shipped.get(mutant_key, {}), **self._data.get(mutant_key, {})}
        statuses = [v[0] if isinstance(v, list) and v else None for v in rows.values()]
        return None if any(st != SURVIVED for st in statuses) else len(statuses)

    def peek(self, mutant_key: str, scenario: Scenario) -> tuple[str, str, float] | None:
        """:meth:`get` without counting a shipped verdict as taken."""
        return self._get(mutant_key, scenario, count=False)

    def _get(self, mutant_key: str, scenario: Scenario, *, count: bool) -> tuple[str, str, float] | None:
        sd = scenario_digest(scenario)
        with self._lock:
            row = self._data.get(mutant_key)
            got = row.get(sd) if row else None
            if got is None:
                row = self._shipped.get(mutant_key)
                got = row.get(sd) if row else None
                self.shipped_hits += count and got is not None
        if got is None:
            return None
        try:
            status, detail, deviation = got
            if status in VERDICTS:
                return status, str(detail), float(deviation)
        except (TypeError, ValueError):
            pass
        return None   # not kept, or not a verdict: run the pair

    def put(self, mutant_key: str, scenario: Scenario, status: str, detail: str, deviation: float) -> None:
        if not math.isfinite(deviation):
            return
        with self._lock:
            self._data.setdefault(mutant_key, {})[scenario_digest(scenario)] = [status, detail, float(deviation)]
            self._new += 1

    def save(self) -> bool:
        """Write what was added (merged with what another process kept meanwhile)."""
        if self.path is None or not self._new:
            return False
        with self._lock:
            data = {k: dict(v) for k, v in self._data.items()}
        for k, row in self._kept(self.path).items():
            data[k] = {**row, **data.get(k, {})}
        ok = write_private(self.path, {"ident": self.ident, "verdicts": data}, compact=True)
        if ok:
            with self._lock:
                self._new = 0
        return ok
