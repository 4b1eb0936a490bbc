"""Mutation analysis: mutant generation, the kill matrix, contract kills, the targeted
search, the report, the `recon mutate` command and the validate hook.

The plugin oracle below is small and fast on purpose; its reference has behaviours that
only some scenarios show: a step at the axis edge x = 1.0 (an off-by-one on `>=` is
killed only there), a cap that only the largest n reaches, and a narrow feature around
x = 0.7 that a random pool misses but a search steered by the deviation finds.
"""
from __future__ import annotations

import json
import os
import textwrap
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from recon import Registry
from recon.errors import UsageError, ValidationFailed
from recon.mutation import worker
from recon.mutation.worker import CONTRACT, SURVIVED, VALUE, process_cpu
from recon.mutation.operators import OPERATORS, generate_mutants, instrument, weak_helper, WEAK_HELPER
from recon.mutation import Engine, auto_nonces, mutation_analysis, mutation_score
from recon.mutation.engine import DEFAULT_MEMORY
from recon.mutation.store import VerdictStore
from recon.sweep import Scenario

REFERENCE = '''\
"""Reference of the boundary_demo test oracle (standard library only)."""
import json
import sys

LIMIT = 8
UNUSED_SCALE = 0.001


def solve(scenario):
    p = scenario["parameters"]
    x = float(p["x"])
    n = int(p["n"])
    steps = min(n, LIMIT)
    total = 0.0
    k = 0
    while k < steps:
        total += x / (k + 1)
        k += 1
    if x >= 1.0:
        total += 0.5
    total += 1e-3 / (1.0 + ((x - 0.7) / 0.0005) ** 2)
    scale = 2.0 if p["mode"] == "double" else 1.0
    return {"y": round(total * scale, 12), "steps": steps}


def main():
    print(json.dumps(solve(json.load(sys.stdin))))


if __name__ == "__main__":
    main()
'''

ORACLE = '''\
import importlib.util
from pathlib import Path

from recon import Choice, Float, Int, Integer, Number, oracle

_spec = importlib.util.spec_from_file_location("boundary_reference", Path(__file__).with_name("boundary_reference.py"))
reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(reference)


@oracle(name="boundary_demo", version="1.0.0", title="Boundary demo", domain="testing", toolkit=[],
        description="Sums a few terms of x and reports how many it used.", reference="boundary_reference.py",
        axes={"x": Float(0.0, 1.0, doc="the value summed"), "n": Int(1, 8, doc="how many terms"),
              "mode": Choice(["single", "double"], doc="whether the sum is doubled")},
        outputs={"y": Number(abs=1e-4, doc="the sum"), "steps": Integer(doc="terms used")}, timeout=0.5)
def boundary_demo(params, evidence):
    """Recipe: see boundary_reference.py."""
    return reference.solve({"parameters": params})
'''


def write_boundary_plugin(directory: Path, reference: str = REFERENCE) -> Path:
    """The boundary_demo plugin (oracle + reference) in ``directory``; returns the module path."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "boundary_reference.py").write_text(reference)
    path = directory / "boundary_oracle.py"
    path.write_text(ORACLE)
    return path


@pytest.fixture
def plugin(tmp_path: Path) -> Path:
    return write_boundary_plugin(tmp_path / "plugin")


@pytest.fixture
def boundary(plugin: Path) -> Registry:
    reg = Registry()
    reg.load_plugin_file(plugin)
    return reg


def _find(mutants, operator, before_has, after_has):  # type: ignore[no-untyped-def]
    found = [m for m in mutants if m.operator == operator and before_has in m.before and after_has in m.after]
    assert found, f"no {operator} mutant {before_has!r} -> {after_has!r}"
    return found[0]


# -- generation ---------------------------------------------------------------------------
SAMPLE = textwrap.dedent('''\
    import numpy as np

    THRESHOLD = 3


    def f(values, k, flag=True):
        """Docstring: never mutated."""
        head = values[1:k]
        total = np.sum(head, axis=0)
        if total < THRESHOLD and flag:
            total = -total
        for v in range(len(values)):
            total += v * 2
        total = total + 1.5
        return total


    if __name__ == "__main__":
        f([1, 2, 3], 2)
''')


def test_generate_mutants_applies_the_standard_operators() -> None:
    ms = generate_mutants(SAMPLE, max_per_line=None)
    mutants = ms.mutants
    assert {m.operator for m in mutants} >= {"compare", "arith", "number", "negate", "delete_statement", "unary",
                                             "and_or", "drop_kwarg", "return_early", "off_by_one", "zero_loop", "bool"}
    assert set(OPERATORS) >= {m.operator for m in mutants}
    lt = [m for m in mutants if m.operator == "compare" and "total < THRESHOLD" in m.before]
    assert sorted(m.after for m in lt) == ["total != THRESHOLD", "total <= THRESHOLD"]  # the sufficient set
    _find(mutants, "arith", "v * 2", "v / 2")
    _find(mutants, "number", "1.5", "1.65")
    _find(mutants, "number", "3", "4")
    _find(mutants, "negate", "total < THRESHOLD and flag", "not (total < THRESHOLD and flag)")
    _find(mutants, "drop_kwarg", "np.sum(head, axis=0)", "np.sum(head)")
    _find(mutants, "off_by_one", "k", "k + 1")
    _find(mutants, "off_by_one", "len(values)", "len(values) - 1")
    _find(mutants, "and_or", "total < THRESHOLD and flag", "total < THRESHOLD or flag")
    _find(mutants, "unary", "-total", "total")
    early = _find(mutants, "return_early", "total = total + 1.5", "return total")
    assert early.function == "f"
    for m in mutants:
        compile(m.source, "sample.py", "exec")  # every mutant is valid Python
        assert m.source != SAMPLE
        assert m.source.count("\n") in (SAMPLE.count("\n"), SAMPLE.count("\n") + 1)
        assert m.line < 18, f"the __main__ block must not be mutated: {m.describe()}"
        assert "Docstring" not in m.before
    assert len({m.source for m in mutants}) == len(mutants)  # no duplicates
    again = generate_mutants(SAMPLE, max_per_line=None).mutants
    assert [(m.describe(), m.source) for m in again] == [(m.describe(), m.source) for m in mutants]


SCOPED = textwrap.dedent('''\
    """Docstring."""
    from __future__ import annotations

    LIMIT = 3


    @staticmethod
    def outer(x):
        n = x + 1

        def inner():
            nonlocal n
            n += 2
            return n

        return inner() * LIMIT
    a = 1; b = a + 2
''')


@pytest.mark.parametrize("source", ["scoped", "chem_smarts"])
def test_a_mutant_compiles_or_not_as_its_whole_file_does(source: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whether a mutant compiles is decided on its top-level statement alone, and must be
    decided as compiling the whole mutated file decides it: a scope's error (a nonlocal
    whose binding was deleted) included, with statements sharing a line kept together."""
    from recon.mutation import operators

    text = SCOPED if source == "scoped" else (Path(__file__).parents[1] / "artifacts" / source / "reference.py").read_text()
    by_statement = generate_mutants(text, max_per_line=None)
    monkeypatch.setattr(operators, "_compiled_part", lambda src, chunks, e, mutated: mutated)
    whole = generate_mutants(text, max_per_line=None)
    assert [(m.describe(), m.source) for m in by_statement.mutants] == [(m.describe(), m.source) for m in whole.mutants]
    assert by_statement.invalid == whole.invalid
    if source == "scoped":
        assert whole.invalid >= 1 and not [m for m in whole.mutants if m.before == "n = x + 1"]
        assert operators._chunks(text) and all(text[lo] != " " for lo, _ in operators._chunks(text))


def test_mutants_keep_to_reached_lines_and_the_per_line_cap() -> None:
    full = generate_mutants(SAMPLE, max_per_line=None).mutants
    per_line: dict[int, int] = {}
    for m in full:
        per_line[m.line] = per_line.get(m.line, 0) + 1
    assert max(per_line.values()) > 3
    capped = generate_mutants(SAMPLE, max_per_line=3)
    counts: dict[int, int] = {}
    for m in capped.mutants:
        counts[m.line] = counts.get(m.line, 0) + 1
    assert max(counts.values()) <= 3 and capped.capped == len(full) - len(capped.mutants)
    # a line never run is not mutated; a module constant only if a run line reads it
    only = generate_mutants(SAMPLE, lines={8, 9}, max_per_line=None)
    assert only.mutants and {m.line for m in only.mutants} <= {8, 9}
    assert only.sites_uncovered > 0 and 11 in only.uncovered_lines
    reads = generate_mutants(SAMPLE, lines={10}, max_per_line=None).mutants
    assert {m.after for m in reads if m.line == 3} == {"2", "4"}
    assert all(m.reach == (10,) for m in reads if m.line == 3)


def test_instrumented_reference_computes_the_same_and_records_infection() -> None:
    src = "def g(x, y):\n    if x >= 1.0:\n        return -y\n    return x * y + 2\n"
    inst = instrument(src)
    assert inst.count("\n") == src.count("\n") and WEAK_HELPER in inst
    seen: set[str] = set()
    env: dict[str, object] = {WEAK_HELPER: weak_helper(seen)}
    exec(compile(inst, "g.py", "exec"), env)
    g = env["g"]
    assert g(0.5, 3.0) == 0.5 * 3.0 + 2  # type: ignore[operator]
    # at x = 0.5, x > 1.0 and x == 1.0 give what x >= 1.0 gives: no infection there
    assert not any(k.startswith("2:7:") for k in seen)
    assert {"4:11:4:16|/", "4:11:4:20|-"} <= seen
    assert g(1.0, 0.0) == 0.0  # type: ignore[operator]
    assert "2:7:2:15|>" in seen and "2:7:2:15|==" not in seen
    assert "3:15:3:17|unary" in seen  # -0.0 is not 0.0 (atan2 tells them apart)
    mutants = generate_mutants(src, max_per_line=None).mutants
    gt = _find(mutants, "compare", "x >= 1.0", "x > 1.0")
    assert gt.weak == "2:7:2:15|>"


# -- the engine ---------------------------------------------------------------------------
def test_boundary_mutants_die_only_at_the_edge_and_equivalents_survive(boundary: Registry) -> None:
    report = mutation_analysis("boundary_demo", registry=boundary, secret="one", pool_size=16, search_examples=0,
                               nonces=2, workers=2)
    by = {r.mutant.describe(): r for r in report.results}
    gt = next(r for d, r in by.items() if "x >= 1.0 -> x > 1.0" in d)
    assert gt.killed and gt.kind == VALUE and gt.first_kill is not None
    # x >= 1.0 -> x == 1.0 is equivalent on [0, 1]; so is the cap nudged above the axis
    eq = {r.mutant.describe() for r in report.equivalent}
    assert any("x >= 1.0 -> x == 1.0" in d for d in eq)
    assert any("LIMIT = 8" in d or "8 -> 9" in d for d in eq)
    # the unread module constant is never mutated
    assert not any("0.001" in d for d in by)
    # deleting the loop counter's increment loops forever: a contract kill, by timeout
    loop = next(r for d, r in by.items() if "k += 1 -> pass" in d)
    assert loop.kind == CONTRACT and loop.first_kill is not None and "timed out" in loop.first_kill["detail"]
    s = report.summary()
    assert s["mutants"] == len(report.results) == s["equivalent"] + s["non_equivalent"]
    assert s["killed_public"] <= s["non_equivalent"] and s["killed_hidden"] <= s["non_equivalent"]
    assert s["killed_hidden"] <= s["killed_hidden_probes"] + 1e-9
    assert report.timings["pruned_runs"] > 0  # reach and infection saved runs


def test_a_second_analysis_takes_the_verdicts_the_first_kept(boundary: Registry, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The same mutants on the same scenarios give the same verdicts: a second analysis of
    the same reference runs only what the store does not hold (a timeout only when it was
    reached on the run's own CPU time) and reports exactly what the first did; another
    reference does not see them."""
    monkeypatch.setenv("RECON_HOME", str(tmp_path / "home"))
    # a loop's share of the CPU on a machine the rest of the suite shares: a twentieth of
    # its limit is surely its own (the workers are forked after this)
    monkeypatch.setattr(worker, "OWN_CPU", 0.05)
    settings = dict(registry=boundary, secret="one", pool_size=16, search_examples=0, nonces=2, workers=2,
                    max_mutants=40)
    first = mutation_analysis("boundary_demo", **settings)  # type: ignore[arg-type]
    second = mutation_analysis("boundary_demo", **settings)  # type: ignore[arg-type]
    # (within one analysis too: edge draws repeat a scenario's parameters under another id)
    assert second.timings["reused_verdicts"] > first.timings["reused_verdicts"] and first.timings["runs"] > 0
    assert "verdicts kept from earlier analyses" in second.render()
    rows = lambda rep: [{k: v for k, v in r.to_json().items() if k != "first_kill"} for r in rep.results]  # noqa: E731
    assert rows(second) == rows(first) and second.summary() == first.summary()
    # the timeouts are kept too: the loop whose counter never grows spends its limit on the
    # CPU, which no load causes
    timed_out = [r for r in second.results if r.first_kill and "timed out" in r.first_kill["detail"]]
    assert timed_out and first.timings["runs"] > 0 and second.timings["runs"] == 0, second.timings
    store_dir = tmp_path / "home" / "cache" / "verdicts"
    (kept,) = list(store_dir.iterdir())
    assert oct(store_dir.stat().st_mode & 0o777) == "0o700"
    # another reference (the cap changed) has a store of its own: nothing is taken from this one
    other = Registry()
    other.load_plugin_file(write_boundary_plugin(tmp_path / "other", REFERENCE.replace("LIMIT = 8", "LIMIT = 7")))
    before = kept.read_bytes()
    assert len(VerdictStore.for_oracle(other.get("boundary_demo"), memory=DEFAULT_MEMORY)) == 0
    mutation_analysis("boundary_demo", **{**settings, "registry": other})  # type: ignore[arg-type]
    assert kept.read_bytes() == before and len(list(store_dir.iterdir())) == 2
    # a store that cannot be read is empty (and a cache: an analysis never fails for it)
    store = VerdictStore.for_oracle(boundary.get("boundary_demo"), memory=DEFAULT_MEMORY)
    assert store.path == kept and len(store) > 0
    kept.write_text("{not json")
    assert len(VerdictStore.for_oracle(boundary.get("boundary_demo"), memory=DEFAULT_MEMORY)) == 0
    # ... and an entry that is not a verdict is not taken for one: the pair runs
    sc, path = Scenario("s", {"x": 0.5}), tmp_path / "own.json"
    own = VerdictStore(path, {"format": "test"})
    own.put("m", sc, SURVIVED, "", 0.0)
    assert own.save() and VerdictStore(path, {"format": "test"}).get("m", sc) == (SURVIVED, "", 0.0)
    doc = json.loads(path.read_text())
    for row in doc["verdicts"]["m"].values():
        row[0] = "killed"
    path.write_text(json.dumps(doc))
    assert VerdictStore(path, {"format": "test"}).get("m", sc) is None


def test_edge_kill_needs_the_edge_scenario(boundary: Registry) -> None:
    o = boundary.get("boundary_demo")
    from recon.sweep import SweepSpec, pool_scenarios

    pool = pool_scenarios(o, SweepSpec(), 12)
    at_edge = [sc for sc in pool if sc.parameters["x"] == 1.0]
    assert at_edge
    with Engine(o, workers=2) as eng:
        idx = eng.add_scenarios(pool, "pool")
        eng.generate()
        mutants = eng.make_mutants(max_per_line=None)
        gt = next(m for m in mutants if m.operator == "compare" and m.after == "x > 1.0")
        eng.evaluate([(gt, idx)], stop_after=0)
        killers = {eng.cases[i].scenario.id for i in eng.kills(gt.id, idx)}
        assert killers == {sc.id for sc in at_edge}
        # ... and on the other scenarios it never ran: its comparison never differed there
        for i in idx:
            if eng.cases[i].scenario.parameters["x"] != 1.0:
                v = eng.verdicts[(gt.id, i)]
                assert (v.status, v.detail, v.seconds) == (SURVIVED, "not infected", 0.0)


def test_a_described_candidate_is_mutated_and_pruned_on_by_its_shipped_trace(boundary: Registry) -> None:
    """A traced scenario deferred with the trace an earlier build made there (the lines its
    reference ran, the weak keys that differed): its lines are mutated as if it had been
    generated, and a mutant that cannot differ there is pruned without generating it."""
    from recon.sweep import SweepSpec, pool_scenarios

    o = boundary.get("boundary_demo")
    pool = [sc for sc in pool_scenarios(o, SweepSpec(), 12) if sc.parameters["x"] != 1.0][:3]
    with Engine(o, workers=2) as made:   # what an earlier build made of them
        made.add_scenarios(pool, "pool")
        made.generate()
        traces = {made.cases[i].scenario.key(): (made.cases[i].covered, made.cases[i].infected) for i in range(len(pool))}
        truths = {made.cases[i].scenario.key(): ("a document", made.cases[i].case.truth) for i in range(len(pool))}
        want = {m.key for m in made.make_mutants(max_per_line=None)}
    with Engine(o, workers=2) as eng:
        idx = eng.add_scenarios(pool, "pool", known=lambda sc: truths[sc.key()], traces=lambda sc: traces[sc.key()])
        eng.generate()
        assert eng.deferred == len(pool) and all(eng.cases[i].case is None for i in idx)
        mutants = eng.make_mutants(max_per_line=None)
        assert {m.key for m in mutants} == want   # the shipped lines, mutated as the generated ones were
        first = eng.cases[idx[0]]
        pruned = [m for m in mutants if (m.reach and not first.covered & set(m.reach))
                  or (m.weak is not None and first.infected is not None and m.weak not in first.infected)]
        assert pruned and len(pruned) < len(mutants)
        eng.evaluate([(m, idx[:1]) for m in pruned], stop_after=0)
        assert eng.deferred == len(pool) and eng.generated_late == 0   # decided without generating anything
        assert all(eng.verdicts[(m.id, idx[0])].detail in ("not reached", "not infected") for m in pruned)
        # one that can differ there is run there: the scenario is generated first
        runs = next(m for m in mutants if m not in pruned)
        eng.evaluate([(runs, idx[:1])], stop_after=0)
        assert eng.generated_late == 1 and eng.cases[idx[0]].case is not None and (runs.id, idx[0]) in eng.verdicts
        # a trace that is not shipped: the scenario is generated at once, its lines are wanted
        late = eng.add_scenarios(pool_scenarios(o, SweepSpec(), 1, seed=6), "more", known=lambda sc: ("d", {}),
                                 traces=lambda sc: None)
        eng.generate()
        assert eng.cases[late[0]].case is not None


def test_targeted_search_finds_what_a_random_pool_misses(boundary: Registry) -> None:
    report = mutation_analysis("boundary_demo", registry=boundary, secret="one", pool_size=20, search_examples=40,
                               nonces=1, workers=2)
    bump = next(r for r in report.results if r.mutant.operator == "delete_statement" and "0.0005" in r.mutant.before)
    assert not bump.pool, "the pool of 20 should miss the narrow feature"
    assert bump.search and bump.killed and not bump.equivalent
    found = report.scenarios["found"]
    assert found and any(abs(f["parameters"]["x"] - 0.7) < 0.002 for f in found)
    # a survivor whose outputs never moved from the reference's leaves the search nothing
    # to climb: it is decided equivalent without one (the bump above moved by ~1e-8)
    eq = {r.mutant.describe() for r in report.equivalent}
    assert any("x >= 1.0 -> x == 1.0" in d for d in eq) and not report.undecided
    flat = report.settings["not_searched_flat"]
    assert 0 < flat <= len(eq) and report.settings["searched"] >= 1
    assert f"({flat} never deviated: not searched)" in report.render()


def test_worker_crash_and_bad_output_count_as_contract_kills(boundary: Registry) -> None:
    import dataclasses

    o = boundary.get("boundary_demo")
    from recon.sweep import SweepSpec, pool_scenarios

    with Engine(o, workers=1) as eng:
        idx = eng.add_scenarios(pool_scenarios(o, SweepSpec(), 3), "pool")
        eng.generate()
        base = eng.make_mutants(max_per_line=1)[0]
        crash = dataclasses.replace(base, id=9001, reach=(), weak=None,
                                    source="import os, signal\ndef solve(s):\n    os.kill(os.getpid(), signal.SIGKILL)\n")
        nan = dataclasses.replace(base, id=9002, reach=(), weak=None,
                                  source="def solve(s):\n    return {'y': float('nan'), 'steps': 1}\n")
        kind = dataclasses.replace(base, id=9003, reach=(), weak=None,
                                   source="def solve(s):\n    return {'y': 'one', 'steps': 1}\n")
        eng.evaluate([(crash, idx), (nan, idx), (kind, idx)], stop_after=0)
        for m in (crash, nan, kind):
            verdicts = [eng.verdicts[(m.id, i)] for i in idx]
            assert all(v.status == CONTRACT for v in verdicts), verdicts
        assert "crashed the worker" in eng.verdicts[(crash.id, idx[0])].detail
        assert "twice" in eng.verdicts[(crash.id, idx[0])].detail
        assert eng.pool.restarts == 2 * len(idx)   # each death is confirmed by a second run
        # the pool still works after the crashes
        original = dataclasses.replace(base, id=9004, reach=(), weak=None, source=REFERENCE)
        eng.evaluate([(original, idx)], stop_after=0)
        assert all(eng.verdicts[(9004, i)].status == SURVIVED for i in idx)


def _once_then(tmp: Path, first: str) -> str:
    """A solve() that does ``first`` on its first call per scenario (a marker file per
    scenario in ``tmp``), then computes the reference's answer: a fault that does not repeat."""
    head = REFERENCE.split("def main")[0].replace("def solve(", "def reference_solve(")
    return head + textwrap.dedent(f'''
        import hashlib, os, signal, time
        from pathlib import Path


        def solve(scenario):
            key = hashlib.sha256(json.dumps(scenario["parameters"], sort_keys=True).encode()).hexdigest()
            marker = Path({str(tmp)!r}) / key
            if not marker.exists():
                marker.write_text("")
                {first}
            return reference_solve(scenario)
        ''')


def test_a_timeout_counts_at_once_on_the_cpu_and_otherwise_when_it_repeats(boundary: Registry, tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A busy machine can time out or kill a correct run once; that must not make an
    equivalent mutant look killed. A fault that repeats with more time is a kill, and so
    is a timeout reached on the run's own CPU time."""
    import dataclasses

    monkeypatch.setattr(worker, "OWN_CPU", 0.05)   # (see the test above)

    from recon.mutation.worker import CONFIRM_FACTOR, is_own_timeout

    o = boundary.get("boundary_demo")
    from recon.sweep import SweepSpec, pool_scenarios

    with Engine(o, workers=2) as eng:
        idx = eng.add_scenarios(pool_scenarios(o, SweepSpec(), 3), "pool")
        eng.generate()
        limit = max(eng.cases[i].case.timeout for i in idx)
        assert limit * CONFIRM_FACTOR > limit + 0.6
        base = eng.make_mutants(max_per_line=1)[0]
        (tmp_path / "slow").mkdir()
        (tmp_path / "kill").mkdir()
        slow_once = dataclasses.replace(base, id=9101, reach=(), weak=None,
                                        source=_once_then(tmp_path / "slow", f"time.sleep({limit + 0.3})"))
        killed_once = dataclasses.replace(base, id=9102, reach=(), weak=None,
                                          source=_once_then(tmp_path / "kill", "os.kill(os.getpid(), signal.SIGKILL)"))
        loops = dataclasses.replace(base, id=9103, reach=(), weak=None,
                                    source="def solve(s):\n    while True:\n        pass\n")
        # a run that never ends without using the CPU (waiting on something that never
        # comes) looks like a run the machine starved: it needs the second run
        waits = dataclasses.replace(base, id=9104, reach=(), weak=None,
                                    source="import time\ndef solve(s):\n    time.sleep(1e6)\n")
        eng.evaluate([(slow_once, idx), (killed_once, idx), (loops, idx[:1]), (waits, idx[:1])], stop_after=0)
        for m in (slow_once, killed_once):
            verdicts = [eng.verdicts[(m.id, i)] for i in idx]
            assert all(v.status == SURVIVED for v in verdicts), verdicts
        assert len(list((tmp_path / "slow").iterdir())) == len(idx)   # each did time out once
        assert eng.pool.restarts == len(idx)                             # and each worker death was retried
        # a loop that spends its whole limit on the CPU is slow by itself: one run decides
        v = eng.verdicts[(loops.id, idx[0])]
        assert v.status == CONTRACT and is_own_timeout(v.detail) and "twice" not in v.detail, v
        assert v.seconds < limit * CONFIRM_FACTOR
        v = eng.verdicts[(waits.id, idx[0])]
        assert v.status == CONTRACT and "timed out" in v.detail and "twice" in v.detail, v
        assert not is_own_timeout(v.detail)
        # once confirmed, the mutant is slow, not unlucky: its next timeout counts at once
        assert eng.slow == {loops.id, waits.id}
        eng.evaluate([(waits, idx[1:2])], stop_after=0)
        v = eng.verdicts[(waits.id, idx[1])]
        assert v.status == CONTRACT and "timed out" in v.detail and "twice" not in v.detail
        # a loop the alarm cannot stop is the watchdog's: on the CPU all along, one run decides
        stuck = dataclasses.replace(base, id=9105, reach=(), weak=None, source=(
            "import signal\ndef solve(s):\n    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})\n"
            "    while True:\n        pass\n"))
        restarts = eng.pool.restarts
        eng.evaluate([(stuck, idx[:1])], stop_after=0)
        v = eng.verdicts[(stuck.id, idx[0])]
        assert v.status == CONTRACT and "watchdog" in v.detail and is_own_timeout(v.detail), v
        assert eng.pool.restarts == restarts + 1


def test_no_run_starts_after_the_deadline(boundary: Registry) -> None:
    o = boundary.get("boundary_demo")
    from recon.sweep import SweepSpec, pool_scenarios

    with Engine(o, workers=1) as eng:
        idx = eng.add_scenarios(pool_scenarios(o, SweepSpec(), 4), "pool")
        eng.generate()
        mutants = eng.make_mutants(max_per_line=1)[:3]
        eng.evaluate([(m, idx) for m in mutants], deadline=eng.clock() - 1.0)
        assert eng.runs == 0 and all(eng.killed_by(m.id, idx) is None for m in mutants)
        assert eng.search(mutants[:1], examples=5, deadline=eng.clock() - 1.0) == {}
        assert eng.cut_short == {mutants[0].id}
        eng.evaluate([(m, idx) for m in mutants])
        assert all(eng.killed_by(m.id, idx) is not None for m in mutants)


def test_the_budget_clock_runs_on_the_workers_cpu_time(boundary: Registry, monkeypatch: pytest.MonkeyPatch) -> None:
    """A budget buys the same runs on a loaded machine: the engine's clock advances with
    its workers' CPU time (per worker), and, when they get none, at a quarter of the wall
    clock's pace; the workers are given the wall-clock moment the clock will reach a
    deadline at its recent pace."""
    o = boundary.get("boundary_demo")
    with Engine(o, workers=2) as eng:
        used = {"cpu": 0.0}
        base = eng.pool.cpu_seconds()
        assert base is not None and base >= 0.0
        monkeypatch.setattr(eng.pool, "cpu_seconds", lambda: base + used["cpu"])
        start = eng.clock()
        time.sleep(0.8)                          # idle workers: a quarter of the wall clock's pace
        assert 0.15 <= eng.clock() - start <= 0.35
        used["cpu"] = 2.0 * 1.8                  # two workers, 1.8 CPU seconds each
        assert eng.clock() - start == pytest.approx(1.8, abs=0.1)
        time.sleep(0.3)                          # no CPU: the clock holds (the wall floor is behind)
        assert eng.clock() - start == pytest.approx(1.8, abs=0.1)
        eng._pace.clear()
        eng.clock()
        time.sleep(1.2)                          # still none: a deadline 1 s ahead is 4 s of wall away
        ahead = eng.wall_epoch(eng.clock() + 1.0)
        assert ahead is not None and 3.5 <= ahead - time.time() <= 4.1
        eng._pace.clear()
        eng.clock()
        time.sleep(1.2)
        used["cpu"] += 2.0 * 1.2                 # full speed over the last readings: 1 s is 1 s
        ahead = eng.wall_epoch(eng.clock() + 1.0)
        assert ahead is not None and 0.8 <= ahead - time.time() <= 1.2
        assert eng.past(eng.clock() - 0.01) and not eng.past(None)


def test_process_cpu_reads_a_process_s_cpu_time() -> None:
    before = process_cpu(os.getpid())
    assert before is not None
    t = time.process_time()
    while time.process_time() - t < 0.3:
        pass
    after = process_cpu(os.getpid())
    assert after is not None and after - before >= 0.2
    assert process_cpu(2 ** 22 + 12345) is None           # no such process


def test_mutation_workers_are_pinned_one_to_a_cpu_when_they_fill_the_machine_and_a_replacement_takes_its_cpu() -> None:
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        pytest.skip("one CPU: workers are not pinned")
    config = worker.WorkerConfig("ref.py", "", None, {}, DEFAULT_MEMORY)
    with worker.WorkerPool(len(cpus), config) as pool:
        assert [os.sched_getaffinity(w.process.pid) for w in pool.workers] == [{c} for c in cpus]
        first = pool.workers[-1]
        pool._died(first, "replaced by the test")   # a crashed or stuck worker is replaced on its CPU
        assert pool.workers[-1].process.pid != 0 and os.sched_getaffinity(pool.workers[-1].process.pid) == {cpus[-1]}
    with worker.WorkerPool(len(cpus) + 1, config) as pool:
        assert all(os.sched_getaffinity(w.process.pid) == set(cpus) for w in pool.workers)
    assert os.sched_getaffinity(0) == set(cpus)


def test_report_table_json_and_file(boundary: Registry, tmp_path: Path) -> None:
    report = mutation_analysis("boundary_demo", registry=boundary, secret="one", pool_size=8, search_examples=0,
                               nonces=2, max_mutants=15, workers=2)
    text = report.render()
    for label in ("mutants analysed", "equivalent", "killed by public", "killed by hidden + probes", "hidden-only kills"):
        assert label in text
    doc = report.to_json()
    assert doc["summary"]["mutants"] == len(doc["mutants"])
    assert set(doc["survivors"]) == {r.mutant.id for r in report.survivors}
    assert len(doc["scenarios"]["nonces"]) == 2 and doc["scenarios"]["pool"] == 8
    for m in doc["mutants"]:
        assert set(m) >= {"id", "operator", "line", "before", "after", "killed_by", "equivalent", "kind"}
    path = report.write(tmp_path / "out")
    assert json.loads(path.read_text())["summary"] == doc["summary"]


def test_a_spent_budget_leaves_survivors_undecided(boundary: Registry) -> None:
    report = mutation_analysis("boundary_demo", registry=boundary, secret="one", pool_size=64, search_examples=5,
                               nonces=1, max_mutants=20, budget=0.001, workers=2)
    assert report.undecided and not report.equivalent
    assert all(not r.killed for r in report.undecided)
    # the pool adds to the task's keyed draws what 64 generated scenarios need
    credited = report.settings["pool_credited"]
    assert credited == len(report.scenarios["hidden"]) + report.scenarios["probes"] > 0
    assert report.scenarios["pool"] < report.scenarios["pool_planned"] == 64 - credited
    assert report.score_conservative <= report.score
    assert any("undecided" in w for w in report.warnings) and "undecided (budget ran out)" in report.render()
    assert report.summary()["undecided"] == len(report.undecided)


def test_mutate_command(plugin: Path, tmp_path: Path) -> None:
    from recon.cli.mutate_cmd import mutate_cmd

    runner = CliRunner()
    args = ["boundary_demo", "--plugin", str(plugin), "--pool", "6", "--search", "0", "--nonces", "1",
            "--secret", "one", "--workers", "2", "--max-mutants", "12", "-q"]
    res = runner.invoke(mutate_cmd, [*args, "--json", "--out", str(tmp_path / "m")])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["oracle"] == "boundary_demo" and (tmp_path / "m" / "mutation.json").is_file()
    # (the command object raises ReconError; recon's group prints it and exits with its code)
    assert doc["selection"] == "stress"   # the default for an oracle whose reference defines solve()
    # drawn at random, these 3 hidden scenarios (no probes) miss some of the mutants stress selection catches
    res = runner.invoke(mutate_cmd, [*args, "--select", "random", "--probes", "0", "--fail-under", "1.0"])
    assert "killed by hidden" in res.output
    assert isinstance(res.exception, ValidationFailed) and res.exception.exit_code == 1
    res = runner.invoke(mutate_cmd, [*args, "--operator", "nope"])
    assert isinstance(res.exception, UsageError) and "unknown mutation operator" in res.exception.message


def test_mutation_score_hook_on_a_built_task(boundary: Registry, tmp_path: Path) -> None:
    from recon.build import build_task

    built = build_task(boundary, "boundary_demo", tmp_path / "tasks", secret="one", n_public=4, n_hidden=2)
    report = mutation_score(built.path, registry=boundary, threshold=0.5, pool_size=8, search_examples=0, nonces=2,
                            max_mutants=15, workers=2)
    assert report.scenarios["public"] == [f"public_{i}" for i in range(1, 5)]
    # the task's hidden scenarios, under the ids they were drawn with
    assert sorted(report.scenarios["hidden"]) == sorted(p.name for p in (built.path / "tests" / "hidden").iterdir())
    assert len(report.scenarios["hidden"]) == 2
    assert 0.0 <= report.score <= 1.0 and report.passed == (report.score >= 0.5)
    strict = mutation_score(built.path, registry=boundary, threshold=1.0, pool_size=8, search_examples=0, nonces=2,
                            max_mutants=15, workers=2)
    assert strict.score == report.score  # same task, same pool: the same analysis
    assert strict.passed == (not strict.survivors)
    # by default the probe draws are as many as keep the probes near 80 scenarios, 2 to 5
    auto = mutation_score(built.path, registry=boundary, pool_size=0, search_examples=0, max_mutants=5, workers=2)
    probes = auto.scenarios["probes"]
    assert len(auto.scenarios["nonces"]) == auto_nonces(probes) == (5 if probes <= 16 else max(2, -(-80 // probes)))


def test_probe_draws_shrink_as_probes_grow() -> None:
    assert [auto_nonces(p) for p in (0, 1, 3, 16, 17, 20, 27, 40, 80, 200)] == [1, 5, 5, 5, 5, 4, 3, 2, 2, 2]
