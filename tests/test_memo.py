"""Sharing work across mutants: a mutant's full run takes the reference's recorded
result for every call the edit cannot reach (recon.mutation.callgraph decides which
functions; recon.mutation.worker records and answers the calls). Verdicts must be
exactly those of plain runs."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from recon import Registry
from recon.mutation import Engine, callgraph
from recon.mutation.callgraph import CallGraph
from recon.mutation.store import VerdictStore
from recon.sweep import SweepSpec, pool_scenarios

GRAPH = textwrap.dedent('''\
    import math
    from functools import reduce

    SCALE = 2.0
    NAMES = ("a", "b")
    LOOKUP = {"a": 1.0, "b": 2.0}        # a table only ever read
    CACHE = {}                          # written below: state
    counter = 0
    counter += 1                        # rebound: state


    def load(x):
        return [x * SCALE + LOOKUP["a"], math.sqrt(x)]


    def smooth(values):
        return [v / len(values) for v in values]


    def prepare(x):
        return smooth(load(x))


    def cached(x):
        if x not in CACHE:
            CACHE[x] = x + 1
        return CACHE[x]


    def counts():
        return counter


    def bump():
        global counter
        counter += 1


    def dynamic(name):
        return globals()[name]


    class Helper:
        def run(self, v):
            return finish(v)


    def uses_class(v):
        return Helper().run(v)


    def finish(values):
        return sum(values) + cached(1)


    def solve(scenario):
        return {"y": finish(prepare(scenario["parameters"]["x"]))}
''')


def test_the_call_graph_leaves_out_what_an_edit_can_reach() -> None:
    g = CallGraph(GRAPH)
    # an edit in finish cannot change the stages before it (nor anything they call) ...
    assert g.unaffected("finish") >= {"load", "smooth", "prepare"}
    # ... but reaches what calls it, directly or through a class
    assert not g.unaffected("finish") & {"solve", "uses_class"}
    # an edit in load reaches prepare, which calls it, and nothing else it calls
    assert "prepare" not in g.unaffected("load") and "smooth" in g.unaffected("load")
    # module state: a written table, a rebound name, `global`, globals()
    assert "cached" not in g.unaffected("load") and "counts" not in g.unaffected("load")
    assert "bump" not in g.unaffected("load") and "dynamic" not in g.unaffected("load")
    assert g.state >= {"CACHE", "counter"} and not g.state & {"SCALE", "NAMES", "LOOKUP", "math", "reduce"}
    # an edit that declares `global`, sits in a class or at module level shares nothing
    assert g.unaffected("bump") == g.unaffected("Helper") == g.unaffected("") == frozenset()
    assert CallGraph("def broken(:\n").unaffected("broken") == frozenset()


PIPELINE = '''\
"""Reference of the pipeline_demo test oracle: an expensive first stage, then cheap ones."""
import json
import random
import sys
from dataclasses import dataclass

ROUNDS = 4000


def expensive(x, n):
    acc = 0.0
    for k in range(ROUNDS):
        acc += ((x * (k + 1)) % 7.0) / (k + 1)
    return [acc + i * x for i in range(n)]


def noisy(values):
    # draws from the global generator: never answered from the record
    random.seed(len(values))
    return [v + random.random() * 1e-9 for v in values]


def order(values):
    values.sort()
    return values


def normalise(values):
    top = max(values)
    return [v / top for v in values]


@dataclass
class Summary:
    mean: float
    spread: float


def stats(values):
    return Summary(sum(values) / len(values), max(values) - min(values))


def solve(scenario):
    p = scenario["parameters"]
    raw = order(noisy(expensive(float(p["x"]), int(p["n"]))))
    summary = stats(normalise(raw))
    return {"mean": round(summary.mean, 9), "spread": round(summary.spread, 9), "count": len(raw)}


def main():
    print(json.dumps(solve(json.load(sys.stdin))))


if __name__ == "__main__":
    main()
'''

ORACLE = '''\
import importlib.util
from pathlib import Path

from recon import Float, Int, Integer, Number, oracle

_spec = importlib.util.spec_from_file_location("pipeline_reference", Path(__file__).with_name("pipeline_reference.py"))
reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(reference)


@oracle(name="pipeline_demo", version="1.0.0", title="Pipeline demo", domain="testing", toolkit=[],
        description="A sum over many rounds, normalised and summarised.", reference="pipeline_reference.py",
        axes={"x": Float(0.1, 5.0, doc="the value"), "n": Int(2, 6, doc="how many values")},
        outputs={"mean": Number(abs=1e-6, doc="mean"), "spread": Number(abs=1e-6, doc="spread"),
                 "count": Integer(doc="values")}, timeout=5.0)
def pipeline_demo(params, evidence):
    """Recipe: see pipeline_reference.py."""
    return reference.solve({"parameters": params})
'''


@pytest.fixture
def pipeline(tmp_path: Path) -> Registry:
    (tmp_path / "pipeline_reference.py").write_text(PIPELINE)
    (tmp_path / "pipeline_oracle.py").write_text(ORACLE)
    reg = Registry()
    reg.load_plugin_file(tmp_path / "pipeline_oracle.py")
    return reg


def _kill_matrix(reg: Registry, memo: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[dict, Engine]:
    if not memo:
        monkeypatch.setattr(callgraph.CallGraph, "unaffected", lambda self, scope: frozenset())
    o = reg.get("pipeline_demo")
    scenarios = pool_scenarios(o, SweepSpec(), 8, seed=3)
    with Engine(o, workers=2) as eng:
        idx = eng.add_scenarios(scenarios, "pool")
        eng.generate()
        mutants = eng.make_mutants(max_per_line=None)
        eng.evaluate([(m, idx) for m in mutants], stop_after=0)
        matrix = {(m.key, eng.cases[i].scenario.id): (v.status, v.deviation, v.memoized > 0)
                  for m in mutants for i in idx if (v := eng.verdicts.get((m.id, i))) is not None}
    monkeypatch.undo()
    return matrix, eng


def test_recorded_calls_answer_for_unreached_stages_with_the_verdicts_of_plain_runs(
        pipeline: Registry, monkeypatch: pytest.MonkeyPatch) -> None:
    memo, eng = _kill_matrix(pipeline, True, monkeypatch)
    plain, plain_eng = _kill_matrix(pipeline, False, monkeypatch)
    assert memo.keys() == plain.keys() and len(memo) > 50
    assert {k: v[:2] for k, v in memo.items()} == {k: v[:2] for k, v in plain.items()}
    assert eng.memoized > 0 and plain_eng.memoized == 0
    answered = {key.split(":")[0] for (key, _), (_, _, hit) in memo.items() if hit}
    lines = PIPELINE.splitlines()
    # mutants in the late stages got the expensive stage answered; in it, never
    for line in answered:
        assert not 10 <= int(line) <= 14, lines[int(line) - 1]
    assert any(lines[int(line) - 1].strip().startswith(("top", "return [v / top", "return Summary", "return {"))
               for line in answered)


def test_only_calls_that_act_through_arguments_and_result_are_answered(tmp_path: Path) -> None:
    from recon.mutation.worker import Case, WorkerConfig, _Memo, _Recorder, _Runner

    runner = _Runner(WorkerConfig("pipeline_reference.py", PIPELINE, None, {}, 4 << 30))
    code = compile(PIPELINE, "pipeline_reference.py", "exec")
    doc = {"parameters": {"x": 1.5, "n": 3}}
    rec = _Recorder("pipeline_reference.py")
    value, problem, _ = runner.call(code, doc, 30.0, wrap=rec.wrap)
    assert problem is None
    kept = {name: [k for *_, k in calls] for name, calls in rec.calls.items()}
    assert kept["expensive"] == kept["normalise"] == kept["stats"] == [True]
    assert kept["noisy"] == [False]          # it moved the global random generator
    assert kept["order"] == [False]          # it sorted its argument in place and returned it
    # a later run (another module) gets the recorded results, the reference's own class
    # (Summary) rebuilt as this run's; the calls that were not kept run
    case = Case(0, "s", doc, value, 30.0, rec.save(tmp_path / "calls.pkl", 1.0))
    memo = _Memo(case, frozenset({"expensive", "noisy", "order", "normalise", "stats"}))
    again, problem, _ = runner.call(code, doc, 30.0, wrap=memo.wrap)
    assert problem is None and again == value and memo.hits == 3


def test_a_result_sharing_an_argument_is_never_answered() -> None:
    """In the reference's run such a result and its argument change together; a result
    rebuilt from the record would not."""
    import numpy as np

    from recon.mutation.worker import _shares

    class Box:
        def __init__(self, arr: object) -> None:
            self.arr = arr

    a = np.arange(10.0)
    args = ((a,), {})
    assert _shares(a, args) and _shares([a], args) and _shares(a[::2], args) and _shares(Box(a[1:]), args)
    assert not _shares(a.copy(), args) and not _shares(Box(a.copy()), args) and not _shares([1.0, "x"], args)



def test_a_deferred_scenario_is_generated_only_when_a_mutant_must_run_on_it(pipeline: Registry,
                                                                            tmp_path: Path) -> None:
    """A scenario the engine knows (an earlier build of the same code made it) waits: a
    mutant's kept verdicts on it decide as far as they go, and it is generated when a run
    no verdict answers must be made there."""
    o = pipeline.get("pipeline_demo")
    base = pool_scenarios(o, SweepSpec(), 4, seed=3)
    later = pool_scenarios(o, SweepSpec(), 3, seed=4, taken=base)
    store = VerdictStore(tmp_path / "verdicts.json", {"test": 1})
    with Engine(o, workers=2, store=store) as eng:
        eng.add_scenarios(base, "pool")
        eng.generate()
        mutants = eng.make_mutants(max_per_line=None)[:4]
        known = {sc.key() for sc in later[:2]}
        D = eng.add_scenarios(later, "draws", traced=False,
                              known=lambda sc: ("a document", {"x": 1}) if sc.key() in known else None)
        eng.generate()
        assert eng.deferred == 2 and [eng.cases[i].case is None for i in D] == [True, True, False]
        for m in mutants:   # kept: each mutant killed on the first draw
            store.put(m.key, eng.cases[D[0]].scenario, "value", "x off by 1", 1.0)
        eng.evaluate([(m, D) for m in mutants], stop_after=1)
        assert (eng.deferred, eng.generated_late) == (2, 0)
        assert all(eng.kills(m.id, D) == {D[0]} and (m.id, D[1]) not in eng.verdicts for m in mutants)
        # every draw wanted: the second has no kept verdict, so it is generated and run
        eng.evaluate([(m, D) for m in mutants], stop_after=0)
        assert (eng.deferred, eng.generated_late) == (1, 1)
        assert eng.cases[D[1]].case is not None and all((m.id, D[1]) in eng.verdicts for m in mutants)
        assert eng.cases[D[0]].case is None   # still answered by the kept verdicts alone
