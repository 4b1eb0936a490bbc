"""Stress selection: hidden scenarios that kill the most mutants, public ones that show them.

The ``random`` strategy publishes a stratified sample and hides a keyed sample. With
``select = "stress"`` in a sweep spec, both sets are *chosen* from larger candidate pools
of the same kinds, by what they catch:

- **hidden**: from a keyed candidate pool (``hidden_factor`` x n_hidden scenarios drawn
  exactly as hidden scenarios are: with the task key, favouring the axis edges, so the
  published files never allow guessing them), greedy maximum coverage (the set-cover
  reduction EvalPlus applies to test suites) picks the n_hidden scenarios that together
  kill the most mutants of the reference; at least one of them has an axis at an edge;
- **public**: from a public pool (``public_factor`` x n_public stratified scenarios,
  unkeyed and deterministic), greedy set cover picks scenarios until every mutant the
  chosen hidden set kills is also killed by a public scenario (no *hidden-only kills*:
  no behaviour is graded that no published scenario shows), then the remaining slots go
  to the candidates farthest from those already chosen (maximin over the unit cube of
  the axes), keeping the published set spread over the axes; first, while slots remain,
  every value of every choice axis is given a published scenario. A mutant that no candidate
  of the pool kills gets one more pool of public candidates before it is reported as an
  unavoidable hidden-only kill. Independent programs a spec reveals (``reveal``) are
  treated like the mutants: they run on the chosen hidden set, its random draws, and as
  many gradings' worth of probe draws as the fairness audit grades (``REVEAL_GRADINGS``)
  plus one for each candidate left out of the hidden set (draws no secret decides, so
  their runs ship with a built-in), and every field one of them
  gets wrong there must be wrong on some published scenario too. What no drawn public
  candidate shows, a draw no grading uses may: the hidden candidates left out of the
  hidden set and those probe draws (drawn with a nonce no grading uses) are public
  candidates of last resort, before the search; a failure seen on graded scenarios only
  gets up to two more rounds of such draws, on which only the programs that still have
  one run.

The kill information comes from :class:`recon.mutation.engine.Engine`, on a deterministic sample
of ``max_mutants`` mutants. A mutant is run on the candidates in pool order until its
``easy``-th kill (a crash or a timeout counts as all of them: it repeats everywhere): a
mutant killed by the first few candidates it meets is killed by most (its remaining
entries count as kills for the greedy choice and are verified on the chosen set
afterwards); every other mutant is run on all candidates, but one: a mutant that every
public candidate is known to leave alive without a run (by the verdicts earlier analyses
kept or the oracle ships, or by the candidates' traces), and whose kept verdicts show it
surviving at least as many scenarios as validate's pool asks of an equivalent one and
killed by none, runs on the chosen hidden set only (what it kills there must be shown like
the rest). Without kept verdicts (an oracle that ships none, a first build) every mutant
runs on every candidate, as before. Selection is deterministic for the same oracle, spec
and key (it depends on mutant verdicts, which are deterministic unless a mutant's run time
sits at its time limit, and on a seeded search).
"""
from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import itertools
import math
import os
import tempfile
import threading
import time
from pathlib import Path
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Iterable, Sequence

from .. import canonjson, compare
from .._version import __version__
from ..axes import Axis, Choice, Float, Int, Seed
from ..errors import ReconError, SpecError
from ..fsutil import read_json_gz, write_private
from ..grader import RunMemo, ShippedRuns
from ..oracle import Oracle
from ..runtimes import get_runtime
from ..runtimes.base import Limits, Runtime, SessionPool
from ..runtimes.snapshot import tree_digest
from ..sweep import (HIDDEN_PREFIX, SELECT_STRATEGIES, Scenario, Selection, SweepSpec, cover_draws, cover_scenarios,
                     effective_axes, hidden_scenarios, pool_scenarios, probe_scenarios, public_scenarios, recon_home,
                     pinned_cpus, run_scenarios)
from .engine import (DEFAULT_MAX_MUTANTS, DEFAULT_MAX_PER_LINE, DEFAULT_MEMORY, DEFAULT_SEARCH, DEFAULT_VALIDATE_POOL,
                     STRETCH, Engine)
from .operators import OPERATORS, generate_mutants, subsample
from .pool import prepare_workspace
from .store import VerdictStore
from .worker import CONTRACT

__all__ = ["select_scenarios", "stress_selection", "public_candidates", "public_extra", "reveal_limits",
           "reveal_programs", "ship_kept", "greedy_max_cover", "greedy_set_cover", "maximin_fill", "unit_point",
           "cover_choices", "HIDDEN_FACTOR", "PUBLIC_FACTOR"]

HIDDEN_FACTOR = 4
PUBLIC_FACTOR = 3
#: seconds a stress selection's mutant runs may take (``recon build --select-budget``),
#: counted from when the candidates are generated: the first half for choosing the hidden
#: set, the rest for showing what it catches publicly; then what is known decides. Running
#: the programs a spec reveals gets as long again, of its own, so that mutants never use it
#: up. (75 s on a quiet machine is the mutants' share the 90 s budget left after the
#: candidates' generation when it counted that too.)
SELECTION_BUDGET = 75.0
#: bumped when the selection's algorithm changes, so that no cached selection outlives it
SELECTION_ALGORITHM = 14
TARGETED_HIDDEN = 8      # hidden scenarios chosen by the mutants they kill; the rest are keyed draws
TARGETED_PUBLIC = 12     # public candidates scale with this many, not with every published scenario
REVEAL_NONCE = "recon-reveal"  # the probe draws revealed programs run on at build time
#: gradings' worth of probe draws the revealed programs run on: as many as the fairness
#: audit grades (recon.audit.DEFAULT_NONCES), so that a behaviour rare enough for one
#: grading's draws to miss is as likely to be seen by the build as by an audit
REVEAL_GRADINGS = 3
MORE_DRAWS = 2           # rounds of fresh draws (nonces REVEAL_NONCE-2, -3) for failures seen only on graded scenarios
REVEAL_CHUNK = 4         # probe draws generated per worker at a time, as the revealed programs' runs reach them
SHOW_TRIES = 16          # public candidates tried, nearest first, for each failure of a revealed program
SHOW_WANT = 3            # ... until this many show it (the cover then has a choice)
BEHAVIOUR_IDS = 1 << 40  # set-cover ids of revealed programs' behaviours (apart from mutant ids)
EASY = 3
SPARE_POOL = DEFAULT_VALIDATE_POOL   # kept survivals (and no kill) a mutant needs to run on the chosen hidden set only


def reveal_draw_key(spec: SweepSpec) -> bytes:
    """The key of the revealing probe draws: the spec's seed, never the task key. No
    grading uses them, so they need no secret; drawn alike for every secret, a program's
    runs on them are kept across builds (``$RECON_HOME/cache/runs``), and a rebuild with
    another secret, or with one more program to reveal, runs only what is new."""
    return hashlib.sha256(b"recon-reveal-draws\0" + str(spec.seed).encode("ascii")).digest()


def fresh_draws(oracle: Oracle, spec: SweepSpec, round_: int, pub_pool: Sequence[Scenario],
                taken: Sequence[Scenario]) -> list[Scenario]:
    """Round ``round_`` (2 ... 1 + :data:`MORE_DRAWS`) of the fresh draws a stress selection
    makes for failures of revealed programs seen only on graded scenarios: independent
    draws from the generator under a nonce no grading uses, apart from ``pub_pool`` and
    ``taken``, named ``reveal_ROUND_N``."""
    return [dataclasses.replace(sc, id=f"reveal_{round_}_{i + 1}") for i, sc in enumerate(
        probe_scenarios(oracle, spec, reveal_draw_key(spec), f"{REVEAL_NONCE}-{round_}", max(spec.probes, 8),
                        pub_pool, list(taken)))]


def reveal_limits(oracle: Oracle) -> Limits:
    """The limits revealed programs run under at build time (their kept runs are keyed by them)."""
    return Limits(wall=float(oracle.timeout), cpu=int(max(oracle.timeout * 2, 10)))


#: Mutation operators whose mutants stand for how an honest independent implementation may
#: differ from the reference (a spread over n - 1 where it divides by n), not for a slip of
#: the pen: stress selection reveals them like independent programs (reveal_variants), so
#: that what the hidden set and a grading's probes may catch in them some published
#: scenario shows. A single-edit mutant is only shown where the hidden set kills it, and a
#: variant wrong on a few percent of scans is caught by a grading's probes more often than
#: by the hidden set (lidar_icp's trial 19: its noise cut over n - 1 failed the scans' noise
#: counts on 5 of 140 graded cells and no published scenario of a build that did not reveal it).
VARIANT_OPERATORS = ("ddof",)


def reveal_variants(oracle: Oracle, root: Path) -> list[tuple[str, Path]]:
    """The reference's variants by :data:`VARIANT_OPERATORS`, each written as a program
    under ``root`` (the same text on every machine: their runs are kept and shipped by
    content like any program's)."""
    if oracle.reference is None or not oracle.reference.is_file():
        return []
    out: list[tuple[str, Path]] = []
    for m in generate_mutants(oracle.reference.read_text(encoding="utf-8"), operators=VARIANT_OPERATORS).mutants:
        program = root / f"variant_{m.line}_{m.col}" / "reconstruct.py"
        program.parent.mkdir(parents=True, exist_ok=True)
        program.write_text(m.source, encoding="utf-8")
        out.append((f"variant line {m.line}: {m.before} -> {m.after}", program))
    return out


def reveal_programs(oracle: Oracle, spec: SweepSpec, variants: Path | None = None) -> list[tuple[str, Path]]:
    """The programs a spec's ``reveal`` names: ``baselines`` and ``independent`` (the
    oracle's own), and program paths; with ``variants`` (a folder to write them in) and
    a stress selection, the reference's variants (:func:`reveal_variants`) too."""
    out: list[tuple[str, Path]] = []
    for item in spec.reveal:
        if item == "baselines":
            out += [(f"baseline {b.name}", b.path) for b in oracle.baselines]
        elif item == "independent":
            out += [(f"independent {b.name}", b.path) for b in oracle.independent]
        else:
            if not Path(item).exists():
                raise SpecError(f"sweep spec {spec.source}: reveal names {item}, which does not exist",
                                 hint="name a reconstruct.py or its folder, relative to the spec")
            out.append((item, Path(item)))
    if variants is not None and spec.select == "stress":
        out += reveal_variants(oracle, variants)
    return out


def ship_kept(oracle: Oracle, spec: SweepSpec, reveal: Sequence[Path] = ()) -> tuple[int, int]:
    """Write what ``oracle`` ships of its builds' work, from what ``$RECON_HOME`` keeps of
    them: ``kept/runs.json.gz`` (the runs of the programs ``spec`` reveals, and of
    ``reveal``, on every scenario but the keyed hidden draws; :class:`recon.grader.ShippedRuns`)
    and ``kept/verdicts.json.gz`` (its mutants' verdicts; :class:`~recon.mutation.store.VerdictStore`),
    beside its module.
    Meant for a ``$RECON_HOME`` that one build with a throwaway secret filled
    (``tests/catalog/keep_runs.py``). Returns how many runs and verdicts were written."""
    limits = reveal_limits(oracle)
    memo = RunMemo.kept(limits)
    runs: dict[str, dict[str, Any]] = {}
    labels: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="recon-ship-") as scratch:
        named = [*reveal_programs(oracle, spec, Path(scratch) / "variants"), *((str(p), Path(p)) for p in reveal)]
        for label, workspace in _workspaces(named, Path(scratch)):
            digest = tree_digest(workspace, skip_caches=True)
            runs[digest] = {k: r for k, r in memo.stored(digest).items() if not _keyed(r)}
            labels[digest] = label
    ShippedRuns.write(ShippedRuns.path_of(oracle), ShippedRuns.identity(oracle, limits), runs,
                      code=oracle.source_digest(), programs=labels)
    ship_draws(oracle, spec=spec, workers=os.cpu_count() or 1, reveal=reveal)
    verdicts = VerdictStore.for_oracle(oracle, memory=DEFAULT_MEMORY).write_shipped(VerdictStore.shipped_path(oracle),
                                                                                    oracle)
    return sum(len(r) for r in runs.values()), verdicts


def ship_draws(oracle: Oracle, *, spec: SweepSpec | None = None, workers: int = 1, reveal: Sequence[Path] = ()) -> int:
    """Add to the runs ``oracle`` ships what it makes of each scenario they ran on: the key
    of its document and inputs and its truth (:meth:`recon.grader.ShippedRuns.draw`), made
    again here by the oracle of this code. A build then judges a program's shipped run on
    such a scenario without generating it; it generates it only where something must run
    on it. A scenario whose document no shipped run was made on (the oracle no longer makes
    it byte for byte) is left out. With a stress ``spec``, the public candidates of its
    selection are described too, with the reference's trace on each
    (:meth:`~recon.grader.ShippedRuns.trace`): a build mutates their lines and prunes its
    mutants there without generating them, and every program it reveals (and ``reveal``)
    runs on each of them. Returns how many scenarios the file now describes."""
    path = ShippedRuns.path_of(oracle)
    doc = read_json_gz(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("runs"), dict):
        raise ReconError(f"{path} holds no shipped runs", hint="ship the runs first (ship_kept)")
    keys: set[str] = set()
    scenarios: dict[str, Scenario] = {}
    for runs in doc["runs"].values():
        for k, r in runs.items():
            keys.add(k)
            about = r.get("scenario")
            if isinstance(about, dict) and isinstance(about.get("parameters"), dict) and not _keyed(r):
                sc = Scenario(str(about.get("id", "draw")), about["parameters"])
                scenarios.setdefault(sc.digest(), sc)
    shipped: dict[str, dict[str, Any]] = doc["runs"]
    meta = {k: v for k, v in doc.items() if k not in ("ident", "runs", "draws")}
    # the candidates first: they are generated (and described) there, not again below
    draws: dict[str, dict[str, Any]] = {}
    if spec is not None and spec.select == "stress" and oracle.reference is not None:
        draws, new_runs, labels = _candidate_work(oracle, spec, workers, reveal)
        for program, new in new_runs.items():
            shipped[program] = {**shipped.get(program, {}), **new}
        meta["programs"] = {**meta.get("programs", {}), **labels}
    with tempfile.TemporaryDirectory(prefix="recon-draws-") as scratch:
        order = sorted(d for d in scenarios if d not in draws)
        made = run_scenarios(oracle, [(scenarios[d], Path(scratch) / str(i), False) for i, d in enumerate(order)],
                             workers=workers)
        for i, (digest, run) in enumerate(zip(order, made)):
            folder = Path(scratch) / str(i)
            document = canonjson.read(folder / "scenario.json")
            key = RunMemo.document_key(document, {k: folder / v for k, v in document.get("inputs", {}).items()})
            if key in keys:
                draws[digest] = {"document": key, "truth": run.output}
    ShippedRuns.write(path, doc["ident"], shipped, **meta, draws=draws)
    return len(draws)


def _candidate_work(oracle: Oracle, spec: SweepSpec, workers: int, reveal: Sequence[Path] = ()
                       ) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]], dict[str, str]]:
    """The public candidates of a stress selection of ``spec`` (its public pool and its
    extra pool: :func:`public_extra`), generated as a selection generates them (the oracle,
    and a traced run of the reference), described by their documents' keys, truths and
    traces. What a build asks of them, which no secret decides, is done here so that it can
    be shipped too:

    - the mutants a selection makes of their lines run on the public pool as its cover runs
      them (in order, until the ``EASY``-th kill), and on the extra pool alike, into the
      verdicts ``$RECON_HOME`` keeps: a build tries the extra pool on a mutant its keyed
      hidden candidates kill and no public candidate does, which no secret names ahead;
    - every program the spec reveals (and ``reveal``) runs on every candidate: which of
      them a build tries, nearest first to where a program failed on its keyed hidden
      scenarios, depends on the secret; and on the rounds of fresh draws a build makes when
      a failure shows on graded scenarios only (described too, without a trace).

    Returns the descriptions by scenario digest, the programs' new runs (program digest ->
    scenario key -> run; not the runs shipped already) and the programs' labels."""
    out: dict[str, dict[str, Any]] = {}
    store = VerdictStore.for_oracle(oracle, memory=DEFAULT_MEMORY)
    _, pub_pool = public_candidates(oracle, spec)
    with Engine(oracle, workers=workers, store=store) as eng, \
            tempfile.TemporaryDirectory(prefix="recon-reveal-") as scratch:
        P = eng.add_scenarios(pub_pool, "public-candidates")
        X = eng.add_scenarios(public_extra(oracle, spec, pub_pool), "public-candidates")
        # the rounds of fresh draws a build makes for failures seen only on graded scenarios
        # (as it draws them, apart from a keyed scenario one of them may meet)
        more: list[int] = []
        for round_ in range(2, 2 + MORE_DRAWS):
            more += eng.add_scenarios(fresh_draws(oracle, spec, round_, pub_pool, [pc.scenario for pc in eng.cases]),
                                      "reveal-draws", traced=False)
        eng.generate()
        _reference_agrees(eng, oracle)
        mutants = eng.mutants = subsample(eng.make_mutants(max_per_line=DEFAULT_MAX_PER_LINE), DEFAULT_MAX_MUTANTS)
        eng.evaluate([(m, P) for m in mutants], stop_after=EASY)
        eng.evaluate([(m, X) for m in mutants], stop_after=EASY)
        programs = _workspaces([*reveal_programs(oracle, spec, Path(scratch) / "variants"),
                                *((str(p), Path(p)) for p in reveal)], Path(scratch))
        shows = _Revealer(eng, programs, get_runtime("auto"), workers, lambda msg: None, keep=True)
        try:
            shows.run_programs([label for label, _ in programs], [*P, *X, *more])
        finally:
            shows.close()
        made, labels = {}, {}
        for p, (label, _) in enumerate(programs):
            digest = shows._digest(p)
            labels[digest] = label
            stored = shows.memo.stored(digest) if shows.memo is not None else {}
            made[digest] = {k: r for k, r in stored.items() if not _keyed(r)}
        for pc in eng.cases:
            if pc.case is None:
                continue
            doc = dict(pc.case.document)
            key = RunMemo.document_key(doc, {k: Path(v) for k, v in doc.get("inputs", {}).items()})
            out[pc.scenario.digest()] = {"document": key, "truth": pc.case.truth}
            if pc.traced:   # a candidate's trace (the fresh draws are not traced)
                out[pc.scenario.digest()].update(covered=sorted(pc.covered),
                                                 infected=None if pc.infected is None else sorted(pc.infected))
    return out, made, labels


def _keyed(run: dict[str, Any]) -> bool:
    """Whether a kept run was made on a hidden draw (``hidden_N``, drawn with a task key):
    no build with another secret meets that scenario, so shipping it would only add weight."""
    scenario = run.get("scenario")
    return isinstance(scenario, dict) and str(scenario.get("id", "")).startswith(HIDDEN_PREFIX)


def select_scenarios(
    oracle: Oracle,
    spec: SweepSpec,
    key: bytes,
    *,
    workers: int = 1,
    progress: Callable[[str], None] | None = None,
    reveal: Sequence[tuple[str, Path]] = (),
    runtime: Runtime | None = None,
    budget: float | None = SELECTION_BUDGET,
) -> Selection:
    """The public and hidden scenarios of a task, chosen as ``spec.select`` says.

    ``"random"`` is :func:`public_scenarios` then :func:`hidden_scenarios` (what builds
    have always done). ``"stress"`` runs mutants of the oracle's reference on candidate
    pools (see :func:`recon.mutation.selection.stress_selection`); it needs ``oracle.reference``
    and takes minutes rather than seconds. Both are deterministic for the same oracle,
    spec and key (and the programs to reveal: the spec's ``reveal`` and ``reveal``, which
    need ``stress``; they run untrusted, through ``runtime``, by default the strongest here).
    """
    if reveal and spec.select != "stress":
        raise SpecError(f"revealing programs needs select = \"stress\" (the spec says {spec.select!r})",
                        hint="build with --select stress, or leave out --reveal")
    if spec.select == "stress":
        with tempfile.TemporaryDirectory(prefix="recon-reveal-") as scratch:
            named = [*reveal_programs(oracle, spec, Path(scratch) / "variants"), *reveal]
            if named:
                programs = _workspaces(named, Path(scratch))
                return _covered(oracle, spec, _select(oracle, spec, key, workers, progress, programs,
                                                      runtime or get_runtime("auto"), budget), progress)
    return _covered(oracle, spec, _select(oracle, spec, key, workers, progress, (), None, budget), progress)


def _workspaces(named: Sequence[tuple[str, Path]], scratch: Path) -> list[tuple[str, Path]]:
    """Each (label, program) with the program as the workspace it runs as (under ``scratch``)."""
    return [(label, prepare_workspace(p, scratch / str(i))[0]) for i, (label, p) in enumerate(named)]


def _covered(oracle: Oracle, spec: SweepSpec, sel: Selection, progress: Callable[[str], None] | None) -> Selection:
    """``sel`` with the scenarios the spec's ``cover`` adds to the published ones (on top of
    ``n_public``, whatever chose them; see :func:`recon.sweep.cover_scenarios`)."""
    if not spec.cover:
        return sel
    added = cover_scenarios(oracle, spec, sel.public)
    if progress:
        progress(f"cover: {len(added)} published scenario(s) added so that every combination of "
                 + ", ".join("(" + ", ".join(g) + ")" for g in spec.cover) + " is published")
    report = None if sel.report is None else {**sel.report, "cover": {"groups": [list(g) for g in spec.cover],
                                                                        "added": len(added)}}
    return dataclasses.replace(sel, public=[*sel.public, *added], report=report)


def _select(oracle: Oracle, spec: SweepSpec, key: bytes, workers: int, progress: Callable[[str], None] | None,
            reveal: Sequence[tuple[str, Path]], runtime: Runtime | None, budget: float | None) -> Selection:
    if spec.select == "random":
        public = public_scenarios(oracle, spec)
        return Selection(public, hidden_scenarios(oracle, spec, key, [*public, *cover_draws(oracle, spec)]), "random")
    if spec.select == "stress":

        cached = _selection_cache(oracle, spec, key, reveal, budget)
        if cached is not None and cached.is_file():
            try:
                doc = canonjson.read(cached)
                if progress:
                    progress(f"stress selection reused from {cached}")
                return Selection([Scenario(s["id"], s["parameters"]) for s in doc["public"]],
                                 [Scenario(s["id"], s["parameters"]) for s in doc["hidden"]], "stress", doc["report"])
            except (OSError, ValueError, KeyError, TypeError):
                pass  # unreadable: select again and overwrite
        sel = stress_selection(oracle, spec, key, workers=workers, progress=progress, reveal=reveal, runtime=runtime,
                               budget=budget)
        if cached is not None:
            write_private(cached, {"public": [{"id": s.id, "parameters": s.parameters} for s in sel.public],
                                   "hidden": [{"id": s.id, "parameters": s.parameters} for s in sel.hidden],
                                   "report": sel.report})
        return sel
    raise SpecError(f"select={spec.select!r} is not a selection strategy",
                    hint=f"use one of {', '.join(repr(x) for x in SELECT_STRATEGIES)}")


def _selection_cache(oracle: Oracle, spec: SweepSpec, key: bytes,
                     reveal: Sequence[tuple[str, Path]] = (), budget: float | None = None) -> Path | None:
    """Where a stress selection is kept for the next build of the same task: it costs
    minutes and is a pure function of the oracle's code (its module, input generator and
    reference: :meth:`recon.Oracle.source_digest`), the spec and the task key. The file
    names hidden scenarios, so it lives beside the build secret, private to this user
    (``$RECON_HOME/cache``)."""
    if oracle.reference is None or not oracle.reference.is_file():
        return None
    ident = canonjson.dumps_compact({
        "oracle": oracle.name, "version": oracle.version, "recon": __version__, "spec": spec.to_json(),
        "probes": spec.probes if reveal else None, "code": oracle.source_digest(), "key": key.hex(),
        "budget": budget, "algorithm": SELECTION_ALGORITHM, "operators": sorted(OPERATORS),
        **({"reveal_budget": spec.reveal_budget} if reveal and spec.reveal_budget else {}),
        "upstream": {name: sorted(ups) for name, ups in sorted(oracle.upstream.items())},
        **({"same_rule": sorted({oracle.behaviour(n) for n in oracle.same_rule})} if oracle.same_rule else {}),
        "reveal": [tree_digest(p, skip_caches=True) if Path(p).is_dir() else hashlib.sha256(Path(p).read_bytes()).hexdigest()
                   for _, p in reveal]})
    return recon_home() / "cache" / "selection" / f"{hashlib.sha256(ident.encode()).hexdigest()[:32]}.json"


def unit_point(axes: dict[str, Axis], params: dict[str, Any]) -> dict[str, float]:
    """A scenario's position in the unit cube of its (non-seed) axes."""
    out: dict[str, float] = {}
    for name, ax in sorted(axes.items()):
        v = params[name]
        if isinstance(ax, Seed):
            continue
        if isinstance(ax, Choice):
            idx = next(i for i, c in enumerate(ax.values) if type(c) is type(v) and c == v)
            out[name] = idx / (len(ax.values) - 1) if len(ax.values) > 1 else 0.5
        elif isinstance(ax, Float):
            lo, hi = float(ax.lo), float(ax.hi)
            if ax.log:
                out[name] = (math.log(v) - math.log(lo)) / (math.log(hi) - math.log(lo))
            else:
                out[name] = (float(v) - lo) / (hi - lo)
        elif isinstance(ax, Int):
            out[name] = (int(v) - ax.lo) / (ax.hi - ax.lo) if ax.hi > ax.lo else 0.5
    return out


def _distance(a: dict[str, float], b: dict[str, float]) -> float:
    return math.sqrt(sum((a[k] - b[k]) ** 2 for k in a))


def greedy_max_cover(rows: dict[int, set[int]], candidates: list[int], k: int,
                     assumed: dict[int, set[int]] | None = None) -> list[int]:
    """Pick ``k`` candidates that together cover the most rows.

    ``rows`` maps an item (a mutant) to the candidates known to cover it; ``assumed``
    maps an item to candidates assumed to cover it (unknown entries of an easy mutant).
    Ties go to the earlier candidate, so the choice is deterministic.
    """
    assumed = assumed or {}
    covered: set[int] = set()
    chosen: list[int] = []
    for _ in range(min(k, len(candidates))):
        best, gain = None, -1
        for c in candidates:
            if c in chosen:
                continue
            g = sum(1 for m, cs in rows.items() if m not in covered and (c in cs or c in assumed.get(m, ())))
            if g > gain:
                best, gain = c, g
        if best is None:
            break
        chosen.append(best)
        covered |= {m for m, cs in rows.items() if best in cs or best in assumed.get(m, ())}
    return chosen


def greedy_set_cover(rows: dict[int, set[int]], candidates: list[int], limit: int,
                     tie: Callable[[int, list[int]], float] | None = None) -> tuple[list[int], set[int]]:
    """Greedy set cover of ``rows`` (item -> candidates covering it) with at most
    ``limit`` candidates; returns (chosen, items left uncovered). Ties are broken by
    ``tie(candidate, chosen)`` (larger first), then by candidate order."""
    left = {m for m, cs in rows.items() if cs & set(candidates)}
    chosen: list[int] = []
    while left and len(chosen) < limit:
        def score(c: int) -> tuple[int, float, int]:
            return (sum(1 for m in left if c in rows[m]), tie(c, chosen) if tie else 0.0, -candidates.index(c))

        best = max((c for c in candidates if c not in chosen), key=score, default=None)
        if best is None or score(best)[0] == 0:
            break
        chosen.append(best)
        left = {m for m in left if best not in rows[m]}
    uncovered = {m for m, cs in rows.items() if not (cs & set(chosen))}
    return chosen, uncovered


def maximin_fill(points: dict[int, dict[str, float]], chosen: list[int], candidates: list[int], total: int) -> list[int]:
    """Add candidates, each the farthest from those already chosen, until ``total``."""
    out = list(chosen)
    while len(out) < total:
        rest = [c for c in candidates if c not in out]
        if not rest:
            break
        if not out:
            out.append(rest[0])
            continue
        best = max(rest, key=lambda c: (min(_distance(points[c], points[o]) for o in out), -candidates.index(c)))
        out.append(best)
    return out


def cover_choices(axes: dict[str, Axis], params: dict[int, dict[str, Any]], points: dict[int, dict[str, float]],
                  chosen: list[int], candidates: list[int], total: int) -> list[int]:
    """Add candidates until every value of every choice axis is published at least once
    (while slots remain): a value no published scenario uses is a behaviour only hidden
    scenarios and probes would show. Each addition is the candidate with that value
    farthest from those already chosen."""
    out = list(chosen)

    def same(a: Any, b: Any) -> bool:
        return type(a) is type(b) and a == b

    for name, ax in sorted(axes.items()):
        if not isinstance(ax, Choice):
            continue
        for v in ax.values:
            if len(out) >= total:
                return out
            if any(same(params[c][name], v) for c in out):
                continue
            having = [c for c in candidates if c not in out and same(params[c][name], v)]
            if having:
                out.append(max(having, key=lambda c: (min((_distance(points[c], points[o]) for o in out), default=0.0),
                                                      -candidates.index(c))))
    return out


def _at_edge(axes: dict[str, Axis], params: dict[str, Any]) -> bool:
    return any(not isinstance(ax, Seed) and params[a] in ax.edges() for a, ax in axes.items())


def _stratified_pool(oracle: Oracle, spec: SweepSpec) -> list[Scenario]:
    """``spec.n_public`` stratified candidates; where the axes hold fewer distinct
    stratified points than that (a space of few-valued choices), the stratified ones the
    spec's own size allows, topped up with edge-favouring pool draws."""
    try:
        return public_scenarios(oracle, spec)
    except SpecError:
        n = spec.n_public
        base: list[Scenario] = []
        for size in (n // 2, n // 4, spec.n_public and max(1, n // 8)):
            try:
                base = public_scenarios(oracle, dataclasses.replace(spec, n_public=size))
                break
            except SpecError:
                continue
        return base + [dataclasses.replace(s, id=f"public_fill_{i + 1}") for i, s in enumerate(
            pool_scenarios(oracle, spec, n - len(base), seed=spec.seed, taken=base, prefix="public-fill"))]


def public_candidates(oracle: Oracle, spec: SweepSpec,
                      public_factor: int = PUBLIC_FACTOR) -> tuple[SweepSpec, list[Scenario]]:
    """The public candidates of a stress selection of ``spec`` (no key decides them) and
    the spec of their stratified part: stratified candidates, plus candidates at the axis
    edges (each axis at each end, all axes low, all high, then edge-favouring draws), since
    a behaviour that only shows at an edge can only be shown by a public scenario there."""
    n_pub = spec.n_public
    pub_spec = dataclasses.replace(spec, n_public=max(public_factor * min(n_pub, TARGETED_PUBLIC),
                                                      min(n_pub, TARGETED_PUBLIC) + 4, n_pub))
    pub_pool = _stratified_pool(oracle, pub_spec)
    pub_pool += [dataclasses.replace(s, id=f"public_edge_{i + 1}") for i, s in enumerate(
        pool_scenarios(oracle, spec, 2 * len(effective_axes(oracle, spec)) + 2 + min(n_pub, TARGETED_PUBLIC),
                       seed=spec.seed, taken=pub_pool, prefix="public-edge"))]
    return pub_spec, pub_pool


def public_extra(oracle: Oracle, spec: SweepSpec, pub_pool: Sequence[Scenario], taken: Iterable[str] = ()
                 ) -> list[Scenario]:
    """The extra public pool a stress selection draws when its candidates leave some
    failure unshown: a stratified pool twice the size of ``pub_pool`` (seeded by the spec,
    never by a key), less what ``pub_pool`` and ``taken`` (scenario keys) hold. Ids follow
    the pool's order, so a scenario's is the same whatever is taken."""
    more = _stratified_pool(oracle, dataclasses.replace(spec, n_public=2 * len(pub_pool), seed=spec.seed))
    left = {s.key() for s in pub_pool} | set(taken)
    return [dataclasses.replace(s, id=f"public_extra_{i + 1}") for i, s in enumerate(more) if s.key() not in left]


def stress_selection(
    oracle: Oracle,
    spec: SweepSpec,
    key: bytes,
    *,
    workers: int = 1,
    progress: Callable[[str], None] | None = None,
    hidden_factor: int = HIDDEN_FACTOR,
    public_factor: int = PUBLIC_FACTOR,
    max_per_line: int | None = DEFAULT_MAX_PER_LINE,
    easy: int = EASY,
    search_examples: int = DEFAULT_SEARCH,
    max_mutants: int | None = DEFAULT_MAX_MUTANTS,
    reveal: Sequence[tuple[str, Path]] = (),
    runtime: Runtime | None = None,
    budget: float | None = SELECTION_BUDGET,
    reuse: bool = True,
) -> Selection:
    """Choose the public and hidden scenarios of ``spec`` by the mutants they kill (see
    the module docstring). ``budget``: seconds for the mutant runs (None: no limit). The
    hidden set is chosen within the first half; the public cover of what it catches, the
    extra candidates and the search get what is left of the whole; after that no mutant
    run starts and what is known decides (the report says the budget was reached). Returns
    a :class:`recon.sweep.Selection` whose ``report`` says what the chosen sets kill (for
    the verifier side: it names hidden scenarios).

    ``reveal``: independent programs ((label, workspace) pairs, run untrusted through
    ``runtime``). Whatever the hidden candidates catch in them -- a field a program gets
    wrong there -- some published scenario must show too, as for the mutants. Their runs
    have a budget of their own (``budget`` seconds from their first run, or the spec's
    ``reveal_budget``, scaled by ``budget`` / :data:`SELECTION_BUDGET`), so the mutants never
    leave them none; runs it leaves undone are counted in the report.

    ``reuse``: take the verdicts earlier analyses of the same reference kept
    (:class:`~recon.mutation.store.VerdictStore`) instead of running those pairs again,
    and keep this selection's for the next (a build of the same oracle with another
    secret shares its public candidates; ``recon validate`` the chosen scenarios)."""
    say = progress or (lambda msg: None)
    if oracle.reference is None:
        raise SpecError(f"select = \"stress\" needs the reference of {oracle.name!r} ({oracle.location})",
                        hint='add reference="reference.py" to @oracle(...), or use select = "random"')
    t_start = time.perf_counter()
    deadline: float | None = None   # set once the candidates are generated
    hidden_deadline: float | None = None

    clock: Callable[[], float] = time.perf_counter   # the engine's budget clock, once it runs

    def left() -> float:
        return float("inf") if deadline is None else deadline - clock()

    axes = effective_axes(oracle, spec)
    n_pub, n_hid = spec.n_public, spec.n_hidden
    # The hidden set is a core chosen by the mutants it kills plus keyed random draws: the
    # core makes the set catch single-edit mistakes, the draws give it the statistical
    # power against programs wrong on a small share of the generator (see validate).
    core = min(n_hid, TARGETED_HIDDEN)
    pub_spec, pub_pool = public_candidates(oracle, spec, public_factor)
    n_cand = max(hidden_factor * core, core + 4)
    # hidden draws are distinct from whatever the spec's cover may publish too
    drawn = hidden_scenarios(oracle, dataclasses.replace(spec, n_hidden=n_cand + n_hid - core), key,
                             [*pub_pool, *cover_draws(oracle, spec)])
    hid_pool, hid_random = drawn[:n_cand], drawn[n_cand:]
    store = VerdictStore.for_oracle(oracle, memory=DEFAULT_MEMORY) if reuse else None
    # what the oracle ships of the public candidates (kept/runs.json.gz: their documents'
    # keys, truths and the reference's traces, made by this code): such a candidate is
    # generated only when something must run on it, or when it is published
    shipped = ShippedRuns.of(oracle, reveal_limits(oracle)) if reuse else None
    with Engine(oracle, workers=workers, log=say, store=store) as eng, contextlib.ExitStack() as stack:
        P = eng.add_scenarios(pub_pool, "public-candidates", known=shipped.draw if shipped else None,
                              traces=shipped.trace if shipped else None)
        described = eng.deferred
        H = eng.add_scenarios(hid_pool, "hidden-candidates")
        say(f"stress selection: {len(P)} public and {len(H)} hidden candidates of {oracle.name}")
        eng.generate()
        _reference_agrees(eng, oracle)
        # The budget is for the mutant runs: the candidates' oracle runs are needed whatever
        # it is, and on a loaded machine they must not eat the mutants' share. It is read on
        # the engine's budget clock (its workers' CPU time), so that a loaded machine buys
        # the same runs with it, only later.
        clock = eng.clock
        t0 = clock()
        deadline = t0 + budget if budget else None
        hidden_deadline = t0 + budget / 2 if budget else None   # the hidden set's share
        mutants = eng.make_mutants(max_per_line=max_per_line)
        if max_mutants is not None and len(mutants) > max_mutants:
            mutants = eng.mutants = subsample(mutants, max_mutants)  # deterministic: same sample every build
        # A mutant that every public candidate is known to leave alive (their verdicts kept
        # by earlier analyses or shipped with the oracle, or their traces), and that the kept
        # verdicts show surviving as many scenarios as validate's pool asks of an equivalent
        # one and killed by none, runs on the hidden set once chosen (what it kills there
        # must be shown), not on every hidden candidate. On lidar_icp those runs were most
        # of this phase, and none killed.
        spared = {m.id for m in mutants if store is not None and (store.survivals(m.key) or 0) >= SPARE_POOL
                  and eng.survives_known(m, P)}
        say(f"stress selection: {len(mutants)} mutants on the hidden candidates"
            + (f" ({len(spared)} known to survive every public candidate: on the chosen ones only)" if spared else ""))
        eng.evaluate([(m, H) for m in mutants if m.id not in spared], stop_after=easy, deadline=hidden_deadline)

        # -- hidden: greedy maximum coverage, easy mutants' unknown entries assumed killing
        def rows_on(cands: list[int]) -> tuple[dict[int, set[int]], dict[int, set[int]]]:
            rows, assumed = {}, {}
            for m in mutants:
                rows[m.id] = eng.kills(m.id, cands)
                contract = any(eng.verdicts[(m.id, c)].status == CONTRACT for c in rows[m.id])
                if len(rows[m.id]) >= easy or contract:
                    assumed[m.id] = {c for c in cands if (m.id, c) not in eng.verdicts}
            return rows, assumed

        chosen_h: list[int] = []
        for _ in range(4):  # assumptions are checked on the chosen set; a few rounds settle it
            rows, assumed = rows_on(H)
            chosen_h = greedy_max_cover(rows, H, core, assumed)
            if not any(_at_edge(axes, eng.cases[c].scenario.parameters) for c in chosen_h):
                chosen_h = _with_edge(chosen_h, H, rows, assumed, axes, eng)
            unchecked = [m for m in mutants if m.id in assumed and not (rows[m.id] & set(chosen_h))]
            if not unchecked:
                break
            eng.evaluate([(m, chosen_h) for m in unchecked], stop_after=1, deadline=hidden_deadline)
        killed_h = {m.id for m in mutants if eng.kills(m.id, chosen_h)}
        unknown = [m for m in mutants if m.id not in killed_h and eng.killed_by(m.id, chosen_h) is None]
        eng.evaluate([(m, chosen_h) for m in unknown], stop_after=1, deadline=hidden_deadline)
        killed_h = {m.id for m in mutants if eng.kills(m.id, chosen_h)}

        # -- public: set cover of what the hidden distribution catches, then spread. The
        # random part of the hidden set and the probes are drawn from the same keyed
        # distribution as the candidates, so what any candidate catches must be shown.
        caught = {m.id for m in mutants if eng.kills(m.id, H)}
        must = [m for m in mutants if m.id in caught]
        say(f"stress selection: the hidden set kills {len(killed_h)}/{len(mutants)} mutants, its candidates "
            f"{len(caught)}; covering them with public candidates")
        eng.evaluate([(m, P) for m in must], stop_after=easy, deadline=deadline)
        points = {c: unit_point(axes, eng.cases[c].scenario.parameters) for c in P}
        # the revealed programs' own budget: the spec's reveal_budget (seconds at the default
        # budget, in proportion at another), else the mutants'; no budget bounds neither
        reveal_budget = (spec.reveal_budget * budget / SELECTION_BUDGET if spec.reveal_budget else budget) if budget \
            else None
        shows = stack.enter_context(contextlib.closing(_Revealer(eng, reveal, runtime, workers, say, reveal_budget,
                                                                 keep=reuse)))
        # What the revealed programs must be shown failing: whatever the hidden set and a
        # grading's probes may catch. Both are draws from the generator, so the programs
        # run on the chosen hidden scenarios, the set's random draws, and REVEAL_GRADINGS
        # gradings' worth of probe draws (from the spec's seed, with a nonce no grading
        # uses: reveal_draw_key) plus one for each hidden candidate left out of the set, in
        # that order (the budget may end the list early; the report counts what it left).
        # The candidates left out are draws from the same distribution as the probe draws
        # (axis edges favoured alike) that no grading uses; the draws stand in for them
        # because no secret decides them: their runs are kept across builds and shipped
        # with a built-in (kept/), where runs on keyed candidates would be made again by
        # every build. Mutants seldom run on the draws: they are generated without line
        # tracing, and the probe draws only as the programs' budget reaches them.
        left_out = [c for c in H if c not in chosen_h]
        R = [*chosen_h, *left_out]
        graded: set[int] = set(chosen_h)   # of R, what gradings use (the rest may be published)
        if reveal:
            draws = [dataclasses.replace(sc, id=f"reveal_{i + 1}") for i, sc in enumerate(
                probe_scenarios(oracle, spec, reveal_draw_key(spec), REVEAL_NONCE,
                                spec.probes * REVEAL_GRADINGS + len(left_out), pub_pool, [*hid_pool, *hid_random]))]
            # the hidden set's random draws keep their ids, as the task's hidden scenarios
            # do: a program's runs on them here are its gradings' runs there (RunMemo)
            D = eng.add_scenarios(hid_random, "reveal-draws", traced=False)
            eng.generate()
            _reference_agrees(eng, oracle)
            R = [*chosen_h, *D]
            graded |= set(D)
            shows.run(R)
            R += shows.run_draws(draws)
        behaviours = shows.caught(R)   # (program, field) pairs the hidden set or a probe may catch
        # ... and the fields caught only beside their cause: shown failing too, searched for
        # like the rest. The audit takes a field as shown once a published scenario shows it
        # failing at all, and its failures of its own may be rarer than these draws can
        # meet: lidar_icp's trial 9 failed `converged` beside its cause on these draws and
        # alone on 2 of the audit's 140 graded cells, which made the field hidden-only
        # where no published scenario showed it failing.
        consequences = shows.caught(R, consequences=True)
        points.update({c: unit_point(axes, eng.cases[c].scenario.parameters) for c in [*R, *left_out]})

        def spread(c: int, chosen: list[int]) -> float:
            return min((_distance(points[c], points[o]) for o in chosen), default=0.0)

        def cover_rows(cands: list[int]) -> dict[int, set[int]]:
            rows = {m.id: eng.kills(m.id, cands) for m in must}
            # the programs first run where the mutants' cover goes anyway, then nearest
            # to where each failure was seen
            shows.show([*behaviours, *consequences], R, cands, points,
                       prefer=greedy_set_cover(rows, cands, n_pub, spread)[0],
                       want=SHOW_WANT)
            return {**rows, **shows.rows([*behaviours, *consequences], cands)}

        cands = list(P)
        rows = cover_rows(cands)
        chosen_p, uncovered = greedy_set_cover(rows, cands, n_pub, spread)
        extra_pool: list[Scenario] = []
        if uncovered and len(chosen_p) < n_pub and eng.generation_estimate(len(pub_pool)) < left():
            # one more public pool, for the mutants no candidate kills yet
            extra_pool = public_extra(oracle, spec, pub_pool, {s.key() for s in hid_pool})
            X = eng.add_scenarios(extra_pool, "public-candidates", known=shows.known, defer=True,
                                  traces=shipped.trace if shipped else None)
            eng.generate()
            for c in X:
                points[c] = unit_point(axes, eng.cases[c].scenario.parameters)
            eng.evaluate([(m, X) for m in must if m.id in uncovered], stop_after=1, deadline=deadline)
            cands = [*P, *X]
            rows = cover_rows(cands)
            chosen_p, uncovered = greedy_set_cover(rows, cands, n_pub, spread)
        in_cands = set(cands)
        spare = [c for c in dict.fromkeys([*R, *left_out]) if c not in graded and c not in in_cands]
        if uncovered and spare:
            # What no drawn public candidate shows may show on the build's own draws that no
            # grading uses: the hidden candidates left out of the hidden set and the revealing
            # probe draws. They are generated and every program ran on them: publishing one
            # costs nothing and says nothing about a graded scenario.
            cands = [*cands, *spare]
            rows = cover_rows(cands)
            chosen_p, uncovered = greedy_set_cover(rows, cands, n_pub, spread)
        more_draws = 0
        for round_ in range(2, 2 + MORE_DRAWS):
            # A failure no candidate shows was seen on graded scenarios only: a rare
            # behaviour. Fresh probe draws under a nonce no grading uses are independent
            # draws from the generator a grading draws from: the programs that still have
            # such a failure run on them, and one that shows it may be published.
            unshown = [b for b, cs in shows.rows_by_name([*behaviours, *consequences], cands).items() if not cs]
            if not unshown or shows.spent():
                break
            fresh = fresh_draws(oracle, spec, round_, pub_pool, [pc.scenario for pc in eng.cases])
            say(f"stress selection: {len(unshown)} failure(s) of revealed programs seen only on graded scenarios; "
                f"{len(fresh)} more draws no grading uses")
            M = eng.add_scenarios(fresh, "reveal-draws", traced=False, known=shows.known)
            more_draws += len(M)
            eng.generate()
            _reference_agrees(eng, oracle)
            points.update({c: unit_point(axes, eng.cases[c].scenario.parameters) for c in M})
            shows.run_programs(sorted({label for label, _ in unshown}), M)
            spare += M
            cands = [*cands, *M]
            rows = cover_rows(cands)
            chosen_p, uncovered = greedy_set_cover(rows, cands, n_pub, spread)
        if uncovered and len(chosen_p) < n_pub and search_examples and left() > 0:
            # still shown by no candidate: search for a public scenario that kills them
            # (seeded by the spec, never by the key: public scenarios stay unkeyed)
            residual = [m for m in must if m.id in uncovered]
            hits = eng.search(residual, examples=search_examples, seed=spec.seed, spec=spec, deadline=deadline)
            taken = {eng.cases[c].scenario.key() for c in [*cands, *H]}
            found = eng.new_scenarios(hits, taken, "public_found")
            if found:
                extra_pool += found
                F = eng.add_scenarios(found, "public-candidates")
                eng.generate()
                for c in F:
                    points[c] = unit_point(axes, eng.cases[c].scenario.parameters)
                eng.evaluate([(m, F) for m in residual], stop_after=0, deadline=deadline)
                cands = [*cands, *F]
                rows = cover_rows(cands)
                chosen_p, uncovered = greedy_set_cover(rows, cands, n_pub, spread)
        chosen_p = cover_choices(axes, {c: eng.cases[c].scenario.parameters for c in cands}, points, chosen_p,
                                 list(cands), n_pub)
        chosen_p = maximin_fill(points, chosen_p, list(P[:pub_spec.n_public]), n_pub)  # spread: stratified ones
        killed_p = {m.id for m in must if eng.kills(m.id, chosen_p)}
        # verify exactly: a public scenario chosen for spread may kill more; unknown pairs run now
        eng.evaluate([(m, chosen_p) for m in must if m.id not in killed_p], stop_after=1, deadline=deadline)
        hidden_only = sorted(m.id for m in must if not eng.kills(m.id, chosen_p))
        # exactly: which failures the chosen set shows
        shows.show([*behaviours, *consequences], R, chosen_p, points, tries=None)
        unrevealed = sorted(f"{label}: {fld}" for (label, fld), cs in shows.rows_by_name(behaviours, chosen_p).items()
                            if not cs)
        # where each of them was seen: only on scenarios gradings use, or also on draws the
        # cover could have published (then the public slots ran out)
        seen_at = {f"{label}: {fld}": cs for (label, fld), cs in shows.rows_by_name(behaviours, R).items()}
        unrevealed_seen = {b: {"graded": len(seen_at[b] & graded), "publishable": len(seen_at[b] - graded)}
                           for b in unrevealed}
        public = [dataclasses.replace(eng.cases[c].scenario, id=f"public_{i + 1}")
                  for i, c in enumerate(sorted(chosen_p))]
        targeted = [eng.cases[c].scenario for c in sorted(chosen_h)]
        # the hidden scenarios keep the ids they were drawn with (hidden_1 ... of the keyed
        # draws): the runs made on them here serve the task's gradings and audits
        hidden = [*targeted, *hid_random]
        _reference_agrees(eng, oracle)   # on the deferred scenarios runs came to need too
        shipped_runs = shows.memo.shipped_hits if shows.memo is not None else 0
        shipped_verdicts = store.shipped_hits if store is not None else 0
        if shipped_runs or shipped_verdicts:
            say(f"stress selection: {shipped_runs} program run(s) and {shipped_verdicts} mutant verdict(s) taken from "
                f"what {oracle.name} ships (kept/)"
                + (f"; {eng.deferred} scenario(s) it describes judged without generating them" if eng.deferred else ""))
        report: dict[str, Any] = {
            "strategy": "stress",
            "reference": hashlib.sha256(oracle.reference.read_bytes()).hexdigest(),
            "candidates": {"public": len(P) + len(extra_pool), "hidden": len(H)},
            "public_from_draws": len(set(spare) & set(chosen_p)),
            "hidden": {"targeted": len(targeted), "random": len(hid_random)},
            "mutants": len(mutants),
            "killed_by_hidden": len(killed_h),
            "killed_by_candidates": len(caught),
            # known to survive every public candidate: run on the chosen hidden set only
            "spared_on_candidates": len(spared),
            "killed_by_public": len({m.id for m in mutants if eng.kills(m.id, chosen_p)}),
            "hidden_only": hidden_only,
            # mutants some candidate killed: not equivalent, whatever a later analysis
            # of the same reference sees (it skips their search for a killing scenario)
            "killable": sorted(m.key for m in mutants if eng.kills(m.id, list(range(len(eng.cases))))),
            "reveal_draws": len(R),
            "more_draws": more_draws,
            "revealed": sorted(f"{label}: {fld}" for label, fld in behaviours),
            "consequences": [f"{label}: {fld}" for label, fld in consequences],
            "consequences_unshown": sorted(f"{label}: {fld}" for (label, fld), cs in
                                           shows.rows_by_name(consequences, chosen_p).items() if not cs),
            "unrevealed": unrevealed,
            "unrevealed_seen": unrevealed_seen,
            "runs": eng.runs,
            "pruned_runs": eng.pruned,
            "memoized_runs": eng.memoized,
            "reused_verdicts": eng.reused,
            "shipped_verdicts": shipped_verdicts,   # of those, shipped with the oracle
            "program_runs": shows.runs,
            "program_runs_kept": shows.kept,   # of those, taken from an earlier build's
            "program_runs_shipped": shipped_runs,   # ... shipped with the oracle
            "program_runs_not_made": shows.skipped,
            # scenarios whose generation was deferred (their document's key and truth shipped)
            # and never needed, of them; and those a run came to need
            "scenarios_not_generated": eng.deferred,
            "public_candidates_described": described,   # deferred from the start: shipped with their traces
            "scenarios_generated_late": eng.generated_late,
            "program_runs_saturated": shows.saturated,   # finding runs of programs that had failed every field
            "budget": budget,
            "budget_reached": eng.past(deadline),
            "reveal_budget": reveal_budget if reveal else None,
            "seconds": round(time.perf_counter() - t_start, 3),
        }
    return Selection(public, hidden, "stress", report)


def _reference_agrees(eng: Engine, oracle: Oracle) -> None:
    bad = eng.disagreements()
    if bad:
        raise ReconError(f"the reference of {oracle.name!r} does not reproduce the oracle on "
                         f"{len(bad)} candidate scenario(s), e.g. {bad[0].scenario.id}: {bad[0].ref_detail}",
                         hint="fix reference.py so that it reproduces the oracle (recon validate checks this too)")


class _Revealer:
    """Independent programs run on the engine's scenarios (untrusted, through a runtime):
    which fields each gets wrong where, for the public cover (``--reveal``).

    Finding what they get wrong (:meth:`run` on the graded-like draws) gets the first half
    of the budget; showing it (:meth:`show`: each failure searched for among public
    candidates, nearest first to where it was seen) the rest. The budget is read on the
    runs' own clock, as the mutants' is: their CPU seconds per worker (a run's wall time
    where its runtime does not measure CPU), never below 1/STRETCH of the wall clock, so a
    loaded machine makes the same runs as a quiet one, later."""

    def __init__(self, eng: Engine, programs: Sequence[tuple[str, Path]], runtime: Runtime | None, workers: int,
                 say: Callable[[str], None], budget: float | None = None, *, keep: bool = False) -> None:
        if programs and runtime is None:
            raise ReconError("revealing programs need a runtime to run them in", hint="pass runtime=get_runtime()")
        self.eng = eng
        self.programs = list(programs)
        self.runtime = runtime
        self.workers = max(1, workers)
        self.say = say
        self.fails: dict[tuple[int, int], set[str]] = {}   # (program index, case) -> failing fields
        self.broken: set[tuple[int, int]] = set()          # ... of those, runs without usable output
        self.runs = 0
        self.skipped = 0     # runs the budget left undone
        # Finding what a program gets wrong ends once it has failed every field somewhere
        # (with usable output): its later graded-like draws could add no behaviour, only
        # places where one is seen (showing it runs the program on candidates all the
        # same). A weak program (a baseline that fails every field from the first
        # scenario on) then costs a handful of runs instead of one per draw.
        self.failed: dict[int, set[str]] = {}   # program index -> every field it has failed
        self.saturated = 0   # finding runs left out so
        self.budget = budget
        self.start: float | None = None   # the first run (wall clock)
        self.cpu = 0.0                    # the runs' CPU seconds so far
        self._ids: dict[tuple[str, str], int] = {}
        self.limits = reveal_limits(eng.oracle)
        # each program runs in warm sessions (one sandboxed interpreter per worker, forked
        # per run): its start and imports are paid once, not on every run
        self._pools: dict[int, SessionPool] = {}
        self._lock = threading.Lock()
        # one run per CPU at a time, each run on its thread's CPU (see pinned_cpus): the
        # programs of acoustic_beamforming hand every impulse response to a thread of their own
        self._cpus = pinned_cpus(self.workers)
        self._slot = threading.local()
        # ``keep``: runs kept across builds by the program's and the scenario's content (the
        # audit's kept runs: RunMemo); a kept run costs the budget nothing
        self.memo = RunMemo.kept(self.limits, eng.oracle) if keep and runtime is not None and self.programs else None
        if self.memo is not None and self.memo.shipped is not None and self.memo.shipped.mismatch():
            say(f"stress selection: the runs shipped with {eng.oracle.name} do not apply here "
                f"({self.memo.shipped.mismatch()}): its programs run on every scenario")
        self.kept = 0        # runs taken from earlier builds (or shipped with the oracle)
        self._digests: dict[int, str] = {}
        self._distances: dict[tuple[int, int], float] = {}   # (case, case) -> distance (points never move)

    def _pool(self, p: int) -> SessionPool:
        with self._lock:
            if p not in self._pools:
                self._pools[p] = SessionPool(self.runtime, Path(self.programs[p][1]), self.limits)  # type: ignore[arg-type]
            return self._pools[p]

    def close(self) -> None:
        """Stop the programs' warm sessions and keep their runs."""
        with self._lock:
            pools, self._pools = self._pools, {}
        if pools:   # side by side: each waits for its sandboxes to exit
            with ThreadPoolExecutor(max_workers=len(pools)) as ex:
                list(ex.map(SessionPool.close, pools.values()))
        if self.memo is not None:
            self.memo.save()

    def _cpu(self) -> int | None:
        """The CPU of the calling thread's runs (None: the kernel's choice)."""
        return getattr(self._slot, "cpu", None)

    def _digest(self, p: int) -> str:
        with self._lock:
            if p not in self._digests:
                self._digests[p] = tree_digest(self.programs[p][1], skip_caches=True)
            return self._digests[p]

    def clock(self) -> float:
        """Seconds spent on the budget's clock since the first run."""
        if self.start is None:
            self.start = time.perf_counter()
        with self._lock:
            cpu = self.cpu
        return max(cpu / self.workers, (time.perf_counter() - self.start) / STRETCH)

    def _deadline(self, share: float) -> float | None:
        """``share`` of the budget on :meth:`clock` (which starts with the first deadline asked for)."""
        if self.start is None:
            self.start = time.perf_counter()
        return None if not self.budget else share * self.budget

    def run(self, cases: Sequence[int], *, share: float = 0.5) -> None:
        """Every program on ``cases``, case by case (a budget that ends early leaves no
        program unseen), until ``share`` of the budget is spent."""
        if self.programs:
            self.say(f"stress selection: {len(self.programs)} program(s) to reveal, on {len(cases)} scenarios")
        self._run_pairs([(p, c) for c in cases for p in range(len(self.programs))], self._deadline(share),
                        finding=True)

    def run_draws(self, draws: Sequence[Scenario], *, share: float = 0.5) -> list[int]:
        """Every program on fresh draws, after :meth:`run`'s cases and within the same
        ``share`` of the budget. A draw is generated (the oracle and the reference on it) a
        few at a time, as the runs reach it: the draws the budget does not reach cost
        nothing, and their runs are counted as not made; once every program has failed every
        field, the rest are not generated. Returns the engine's indices of the draws generated."""
        out: list[int] = []
        deadline = self._deadline(share)
        step = REVEAL_CHUNK * self.workers
        for i in range(0, len(draws), step):
            if self.programs and all(self.is_saturated(p) for p in range(len(self.programs))):
                break   # nothing left to find in any program: the rest need not be generated
            if deadline is not None and self.clock() >= deadline:
                self.skipped += len(self.programs) * (len(draws) - i)
                break
            chunk = self.eng.add_scenarios(draws[i:i + step], "reveal-draws", traced=False, known=self.known)
            self.eng.generate()
            _reference_agrees(self.eng, self.eng.oracle)
            out += chunk
            self._run_pairs([(p, c) for c in chunk for p in range(len(self.programs))], deadline, finding=True)
        return out

    def _run_pairs(self, pairs: Sequence[tuple[int, int]], deadline: float | None, *, finding: bool = False) -> None:
        """Run the (program, case) pairs not run yet. ``finding``: runs that only look for
        what a program gets wrong, left out once it has failed every field."""
        todo = [pc for pc in dict.fromkeys(pairs) if pc not in self.fails]
        if not todo or self.runtime is None:
            return
        fields = self.eng.fields
        # a deferred scenario (one an earlier build of this code made, its document's key
        # and truth shipped, or a candidate nothing has run on yet) is generated only for a
        # run no build kept
        self.eng.ensure(c for p, c in todo if self.eng.cases[c].pending is not None
                        and not (finding and self.is_saturated(p)) and not self._kept_on(p, c)
                        and not (deadline is not None and self.clock() >= deadline))

        def one(item: tuple[int, int]) -> tuple[tuple[int, int], set[str], str]:
            p, c = item
            pc = self.eng.cases[c]
            case = pc.case
            if case is None and pc.known is None:   # deferred, and the budget left it so
                return item, set(), "run" if pc.pending is None else "budget"
            if finding and self.is_saturated(p):
                return item, set(), "saturated"   # not run: nothing left to find
            # a run an earlier build kept costs nothing, budget spent or not; the key is the
            # document as the program reads it, its inputs by name and content (not by where
            # this build generated them)
            doc: dict[str, Any] = dict(case.document) if case is not None else {}
            inputs = {k: Path(v) for k, v in doc.get("inputs", {}).items()}
            if case is not None:
                key, truth = (self._digest(p), RunMemo.document_key(doc, inputs)), case.truth
            else:   # deferred: what an earlier build made of it
                key, truth = (self._digest(p), pc.known[0]), pc.known[1]   # type: ignore[index]
            res = self.memo.get(key) if self.memo is not None else None
            if res is not None:
                with self._lock:
                    self.kept += 1
            else:
                if case is None or (deadline is not None and self.clock() >= deadline):
                    return item, set(), "budget"   # not run: the revealing budget is spent
                res = self._pool(p).run(doc, inputs, cpu=self._cpu())
                if self.memo is not None:
                    self.memo.put(key, res, self.eng.cases[c].scenario)
                with self._lock:
                    self.cpu += res.cpu_seconds if res.cpu_seconds is not None else res.seconds
            value, why = (None, res.failure()) if res.failure() else compare.parse_stdout(res.stdout)
            if why is not None or value is None or compare.contract_errors(fields, value):
                bad, broken = set(fields), True
            else:
                bad, broken = {n for n, sp in fields.items() if not compare.within(sp, value[n], truth[n])}, False
            if not broken:   # (a run without usable output, a timeout under load say, says nothing of a field)
                with self._lock:   # at once, not when the pool's results are read in order
                    self.failed.setdefault(p, set()).update(bad)
            return item, bad, "broken" if broken else "run"

        slots = itertools.count()

        def take_cpu() -> None:   # each thread of the pool a CPU of its own
            if self._cpus:
                self._slot.cpu = self._cpus[next(slots) % len(self._cpus)]

        with ThreadPoolExecutor(max_workers=self.workers, initializer=take_cpu) as pool:
            for key, bad, status in pool.map(one, todo):
                if status == "saturated":
                    self.saturated += 1
                    continue
                if status == "budget":
                    self.skipped += 1
                    continue
                self.fails[key] = bad
                if status == "broken":
                    self.broken.add(key)
                self.runs += 1

    def _kept_on(self, p: int, c: int) -> bool:
        """Whether program ``p``'s run on the deferred case ``c`` is kept (shipped)."""
        known = self.eng.cases[c].known
        return known is not None and self.memo is not None and self.memo.has((self._digest(p), known[0]))

    def known(self, sc: Scenario) -> tuple[str, dict[str, Any]] | None:
        """What the oracle ships of ``sc`` (:meth:`ShippedRuns.draw`), for the engine to
        defer its generation; None without shipped runs."""
        shipped = self.memo.shipped if self.memo is not None else None
        return shipped.draw(sc) if shipped is not None else None

    def is_saturated(self, p: int) -> bool:
        """Whether program ``p`` has failed every field on some run."""
        with self._lock:
            return len(self.failed.get(p, ())) == len(self.eng.fields)

    def show(self, behaviours: Sequence[tuple[str, str]], seen: Sequence[int], cands: Sequence[int],
             points: dict[int, dict[str, float]], *, prefer: Sequence[int] = (),
             tries: int | None = SHOW_TRIES, want: int = 1) -> None:
        """For each behaviour (program, field) found on ``seen``, run its program on
        candidates until ``want`` of them show it: first those in ``prefer`` (what the
        cover would choose anyway), then at most ``tries`` (None: all) nearest to where it
        was seen; a few behaviours at a time, to keep the workers busy. Several showing
        candidates leave the cover a choice (one may kill mutants too)."""
        index = {label: i for i, (label, _) in enumerate(self.programs)}
        queues: dict[tuple[int, str], list[int]] = {}
        in_cands = set(cands)
        first = [c for c in dict.fromkeys(prefer) if c in in_cands]
        taken = set(first)
        rest = [c for c in cands if c not in taken]
        for label, f in behaviours:
            p = index[label]
            at = [c for c in seen if self._shows(p, c, f) and c in points]
            order = sorted(rest, key=lambda c: (min((self._distance(points, c, q) for q in at), default=0.0), c))
            queues[(p, f)] = first + (order[:tries] if tries is not None else order)
        deadline = self._deadline(1.0)
        while queues:
            for (p, f), order in list(queues.items()):
                if not order or sum(self._shows(p, c, f) for c in cands) >= want:
                    del queues[(p, f)]
            # round robin over the behaviours, one candidate each, until the workers have
            # enough to do (a few behaviours left: several candidates each)
            batch: list[tuple[int, int]] = []
            while len(batch) < max(2 * self.workers, len(queues)) and any(queues.values()):
                for (p, f), order in queues.items():
                    while order:
                        c = order.pop(0)
                        if (p, c) not in self.fails and (p, c) not in batch:
                            batch.append((p, c))
                            break
            if not batch:
                break
            if deadline is not None and self.clock() >= deadline:
                self.skipped += sum(len(o) for o in queues.values())
                break
            self._run_pairs(batch, deadline)

    def _distance(self, points: dict[int, dict[str, float]], c: int, q: int) -> float:
        """The distance between cases ``c`` and ``q`` (kept: behaviours seen at the same
        places are ordered by the same distances, many times over)."""
        d = self._distances.get((c, q))
        if d is None:
            d = self._distances[(c, q)] = _distance(points[c], points[q])
        return d

    def spent(self) -> bool:
        """Whether the programs' budget is spent."""
        stop = self._deadline(1.0)
        return stop is not None and self.clock() >= stop

    def run_programs(self, labels: Sequence[str], cases: Sequence[int]) -> None:
        """The programs named ``labels`` on ``cases``, within the budget."""
        index = {label: i for i, (label, _) in enumerate(self.programs)}
        self._run_pairs([(index[label], c) for c in cases for label in labels], self._deadline(1.0))

    def _shows(self, p: int, c: int, behaviour: str) -> bool:
        """Whether program ``p``'s run on case ``c`` fails a field showing ``behaviour``."""
        return not self.eng.oracle.behaviour_fields(behaviour).isdisjoint(self.fails.get((p, c), ()))

    def caught(self, cases: Sequence[int], *, consequences: bool = False) -> list[tuple[str, str]]:
        """(program, behaviour) pairs some of ``cases`` catches, apart from a field's failures
        beside a failure of a field it is computed from (the oracle's ``upstream``): that
        one is caught too, and showing it shows their cause. ``consequences``: those
        instead, the fields caught only beside their cause. A behaviour is a field, or the
        fields one rule computes for several inputs (the oracle's ``same_rule``): a failure
        of any of them shows it."""
        within = set(cases)
        oracle = self.eng.oracle
        explained = oracle.explained
        own: set[tuple[str, str]] = set()
        beside: set[tuple[str, str]] = set()
        for (p, c), bad in self.fails.items():
            if c in within:
                for f in bad:
                    mine = (p, c) in self.broken or not explained(f, bad, bad)
                    (own if mine else beside).add((self.programs[p][0], oracle.behaviour(f)))
        return sorted(beside - own if consequences else own)

    def rows_by_name(self, behaviours: Sequence[tuple[str, str]], cases: Sequence[int]) -> dict[tuple[str, str], set[int]]:
        index = {label: i for i, (label, _) in enumerate(self.programs)}
        return {(label, f): {c for c in cases if self._shows(index[label], c, f)} for label, f in behaviours}

    def rows(self, behaviours: Sequence[tuple[str, str]], cases: Sequence[int]) -> dict[int, set[int]]:
        """Set-cover rows for the behaviours, keyed apart from the mutants' ids."""
        out = {}
        for name, cs in self.rows_by_name(behaviours, cases).items():
            out[self._ids.setdefault(name, BEHAVIOUR_IDS + len(self._ids))] = cs
        return out


def _with_edge(chosen: list[int], H: list[int], rows: dict[int, set[int]], assumed: dict[int, set[int]],
               axes: dict[str, Axis], eng: Engine) -> list[int]:
    """Replace the pick that adds least by the edge candidate that adds most, so the
    hidden set always includes an axis edge (as random hidden sets do)."""
    edges = [c for c in H if _at_edge(axes, eng.cases[c].scenario.parameters) and c not in chosen]
    if not edges or not chosen:
        return chosen

    def covered(sel: list[int]) -> int:
        return sum(1 for m, cs in rows.items() if any(c in cs or c in assumed.get(m, ()) for c in sel))

    best: tuple[int, int, int] | None = None
    for i in range(len(chosen)):
        for e in edges:
            trial = chosen[:i] + [e] + chosen[i + 1:]
            score = covered(trial)
            if best is None or score > best[0]:
                best = (score, i, e)
    if best is None:  # pragma: no cover - edges and chosen are non-empty
        return chosen
    _, i, e = best
    return chosen[:i] + [e] + chosen[i + 1:]
