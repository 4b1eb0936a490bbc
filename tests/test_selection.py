"""Stress selection: greedy cover helpers, stress versus random on the same measurement,
determinism and keying, and the sweep spec's `select` key."""
from __future__ import annotations

import dataclasses
import itertools
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recon import Number, Registry
from recon.errors import SpecError
from recon.mutation import compare_selections
from recon.mutation.selection import (_Revealer, greedy_max_cover, greedy_set_cover, maximin_fill, select_scenarios,
                                     stress_selection)
from recon.runtimes.base import RunResult
from recon.sweep import SweepSpec, derive_task_key, hidden_scenarios, load_spec, public_scenarios
from test_mutate import write_boundary_plugin


@pytest.fixture(scope="module")
def boundary(tmp_path_factory: pytest.TempPathFactory) -> Registry:
    reg = Registry()
    reg.load_plugin_file(write_boundary_plugin(tmp_path_factory.mktemp("plugin")))
    return reg


rows_strategy = st.dictionaries(st.integers(0, 30), st.sets(st.integers(0, 7), max_size=5), max_size=25)


@settings(max_examples=60, deadline=None)
@given(rows_strategy, st.integers(1, 4))
def test_greedy_max_cover_is_near_optimal(rows: dict[int, set[int]], k: int) -> None:
    cands = list(range(8))
    chosen = greedy_max_cover(rows, cands, k)
    assert len(chosen) == min(k, len(cands)) and len(set(chosen)) == len(chosen)

    def covered(sel: tuple[int, ...] | list[int]) -> int:
        return sum(1 for cs in rows.values() if cs & set(sel))

    best = max(covered(c) for c in itertools.combinations(cands, min(k, len(cands))))
    assert covered(chosen) >= (1 - 1 / 2.718281828) * best  # the greedy guarantee
    assert greedy_max_cover(rows, cands, k) == chosen  # deterministic


@settings(max_examples=60, deadline=None)
@given(rows_strategy, st.integers(1, 8))
def test_greedy_set_cover_covers_what_it_can(rows: dict[int, set[int]], limit: int) -> None:
    cands = list(range(8))
    chosen, uncovered = greedy_set_cover(rows, cands, limit)
    assert len(chosen) <= limit
    assert uncovered == {m for m, cs in rows.items() if not cs & set(chosen)}
    if limit >= 8:  # with room for every candidate, only items nobody covers stay uncovered
        assert uncovered == {m for m, cs in rows.items() if not cs}


def test_maximin_fill_spreads() -> None:
    points = {i: {"x": i / 10} for i in range(11)}
    assert maximin_fill(points, [0], list(points), 3) == [0, 10, 5]
    assert maximin_fill(points, [], list(points), 2) == [0, 10]


def test_stress_kills_at_least_as_many_as_random_on_the_same_pool(boundary: Registry, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECON_HOME", str(tmp_path))   # no selection kept by an earlier test: time it
    reports = compare_selections("boundary_demo", registry=boundary, secret="one", pool_size=16, search_examples=12,
                                 nonces=1, workers=2, max_per_line=4)
    random_, stress = reports["random"], reports["stress"]
    # one shared pool: the same mutants, the same equivalents
    assert [r.mutant.describe() for r in random_.results] == [r.mutant.describe() for r in stress.results]
    assert [r.equivalent for r in random_.results] == [r.equivalent for r in stress.results]
    rs, ss = random_.summary(), stress.summary()
    assert ss["killed_hidden"] >= rs["killed_hidden"] and ss["score"] >= rs["score"]
    assert ss["hidden_only"] == 0  # every mutant the hidden set kills, a public scenario kills too
    assert stress.selection == "stress" and len(stress.scenarios["hidden"]) == 3
    assert len(stress.scenarios["public"]) == 6
    assert stress.timings["selection"] > random_.timings["selection"]


def test_stress_selection_is_keyed_and_deterministic(boundary: Registry) -> None:
    o = boundary.get("boundary_demo")
    spec = SweepSpec(n_public=4, n_hidden=2, select="stress")
    kw = dict(workers=2, search_examples=8, max_per_line=3, max_mutants=25)
    a = stress_selection(o, spec, derive_task_key(b"one", o, spec), **kw)  # type: ignore[arg-type]
    b = stress_selection(o, spec, derive_task_key(b"one", o, spec), **kw)  # type: ignore[arg-type]
    c = stress_selection(o, spec, derive_task_key(b"two", o, spec), **kw)  # type: ignore[arg-type]
    assert (a.public, a.hidden) == (b.public, b.hidden)
    assert [s.parameters for s in a.hidden] != [s.parameters for s in c.hidden]
    assert [s.id for s in a.public] == ["public_1", "public_2", "public_3", "public_4"]
    # the hidden scenarios keep the ids of the keyed draws they were chosen from (the runs a
    # build makes on them serve the task's gradings), distinct from each other
    assert len({s.id for s in a.hidden}) == 2 and all(re.fullmatch(r"hidden_[1-9][0-9]*", s.id) for s in a.hidden)
    assert not {s.key() for s in a.public} & {s.key() for s in a.hidden}
    edges = [s for s in a.hidden if any(s.parameters[n] in ax.edges() for n, ax in o.axes.items())]
    assert edges, "a hidden set includes an axis edge"
    assert a.report is not None and a.report["killed_by_hidden"] >= 1 and a.report["hidden_only"] == []


def test_a_mutant_every_public_candidate_leaves_alive_runs_on_the_chosen_hidden_set_only(
        boundary: Registry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Verdicts kept on every public candidate (as an oracle ships them) that show a mutant
    surviving them all, and enough of them: it runs on the hidden set the selection chooses,
    not on every hidden candidate; the choice is the one a selection without them makes,
    with fewer runs. One that a kept verdict shows killed anywhere is not spared."""
    from recon.mutation import selection
    from recon.mutation.engine import DEFAULT_MEMORY, Engine
    from recon.mutation.operators import subsample
    from recon.mutation.store import VerdictStore

    o = boundary.get("boundary_demo")
    spec = SweepSpec(n_public=4, n_hidden=2, select="stress")
    key = derive_task_key(b"one", o, spec)
    kw = dict(workers=2, search_examples=0, max_per_line=3, max_mutants=25)
    monkeypatch.setattr(selection, "SPARE_POOL", 4)   # this spec's public pool is small
    monkeypatch.setenv("RECON_HOME", str(tmp_path / "plain"))
    plain = stress_selection(o, spec, key, **kw)  # type: ignore[arg-type]
    monkeypatch.setenv("RECON_HOME", str(tmp_path / "kept"))
    store = VerdictStore.for_oracle(o, memory=DEFAULT_MEMORY)
    with Engine(o, workers=2, store=store) as eng:   # the public candidates' verdicts, as keep_runs.py ships them
        P = eng.add_scenarios(selection.public_candidates(o, spec)[1], "public-candidates")
        eng.generate()
        mutants = subsample(eng.make_mutants(max_per_line=3), 25)
        eng.evaluate([(m, P) for m in mutants], stop_after=selection.EASY)
        alive = {m.key for m in mutants if not eng.kills(m.id, P)}
    assert len(store) and alive and len(alive) < len(mutants)   # (kept when the engine closed)
    with Engine(o, workers=2, store=VerdictStore.for_oracle(o, memory=DEFAULT_MEMORY)) as again:
        P = again.add_scenarios(selection.public_candidates(o, spec)[1], "public-candidates")
        again.generate()
        mutants = subsample(again.make_mutants(max_per_line=3), 25)
        # known from the store (or a trace) without a run, and without taking anything
        assert {m.key for m in mutants if again.survives_known(m, P)} == alive
        assert not again.verdicts and again.reused == again.runs == 0
        assert not again.survives_known(mutants[0], [*P, *again.add_scenarios(
            hidden_scenarios(o, dataclasses.replace(spec, n_hidden=1), key), "unknown")]) or \
            not again.cases[-1].covered.intersection(mutants[0].reach)
    spared = stress_selection(o, spec, key, **kw)  # type: ignore[arg-type]
    assert plain.report is not None and spared.report is not None
    # without kept verdicts nothing is spared, whatever the traces say
    assert plain.report["spared_on_candidates"] == 0 and spared.report["spared_on_candidates"] > 0
    assert (spared.public, spared.hidden) == (plain.public, plain.hidden)
    for k in ("killed_by_hidden", "killed_by_public", "hidden_only"):
        assert spared.report[k] == plain.report[k], k
    assert spared.report["runs"] < plain.report["runs"]
    # a kill kept anywhere (here: planted on a hidden draw) means the mutant is not equivalent
    store = VerdictStore.for_oracle(o, memory=DEFAULT_MEMORY)
    assert any((store.survivals(k) or 0) >= 4 for k in alive)
    elsewhere = hidden_scenarios(o, dataclasses.replace(spec, n_hidden=1), derive_task_key(b"other", o, spec))[0]
    for k in alive:
        store.put(k, elsewhere, "value", "planted", 1.0)
    assert store.save() and all(store.survivals(k) is None for k in alive)
    killed = stress_selection(o, spec, key, **kw)  # type: ignore[arg-type]
    assert killed.report is not None and killed.report["spared_on_candidates"] == 0


def test_select_key_in_specs(boundary: Registry, tmp_path: Path) -> None:
    o = boundary.get("boundary_demo")
    f = tmp_path / "s.toml"
    f.write_text('n_public = 4\nselect = "stress"\n')
    spec = load_spec(o, f)
    assert spec.select == "stress" and spec.to_json()["select"] == "stress"
    assert load_spec(o).select == "stress"  # the default for an oracle with a reference
    assert load_spec(dataclasses.replace(o, reference=None)).select == "random"  # stress needs the reference
    script = tmp_path / "script.py"    # ... and its solve(scenario), which mutation analysis runs
    script.write_text("import json, sys\nprint(json.dumps(json.load(sys.stdin)['parameters']))\n")
    assert load_spec(dataclasses.replace(o, reference=script)).select == "random"
    assert "select" not in load_spec(o, f, select="random").to_json()  # random specs serialise as they always did
    (tmp_path / "r.toml").write_text('select = "random"\n')
    assert load_spec(o, tmp_path / "r.toml").select == "random"
    f.write_text('select = "best"\n')
    with pytest.raises(SpecError, match="select='best'"):
        load_spec(o, f)
    # the strategy is not part of the sweep identity: the key and the random draws do not move
    rnd, strs = SweepSpec(n_public=4), SweepSpec(n_public=4, select="stress")
    assert derive_task_key(b"k", o, rnd) == derive_task_key(b"k", o, strs)
    key = derive_task_key(b"k", o, rnd)
    sel = select_scenarios(o, rnd, key)
    assert sel.strategy == "random" and sel.public == public_scenarios(o, rnd)
    assert sel.hidden == hidden_scenarios(o, rnd, key, sel.public)


def test_every_choice_value_gets_a_published_scenario_while_slots_remain() -> None:
    from recon.axes import Bool, Choice, Float
    from recon.mutation.selection import cover_choices

    axes = {"phase": Choice(["Si", "MgO", "ZnO"]), "flag": Bool(), "x": Float(0.0, 1.0)}
    params = {0: {"phase": "Si", "flag": False, "x": 0.1}, 1: {"phase": "Si", "flag": True, "x": 0.9},
              2: {"phase": "MgO", "flag": False, "x": 0.2}, 3: {"phase": "MgO", "flag": False, "x": 0.5},
              4: {"phase": "ZnO", "flag": False, "x": 0.5}}
    points = {c: {"x": p["x"], "phase": ["Si", "MgO", "ZnO"].index(p["phase"]) / 2} for c, p in params.items()}
    out = cover_choices(axes, params, points, [0], list(params), total=5)
    assert out[0] == 0 and {params[c]["phase"] for c in out} == {"Si", "MgO", "ZnO"}
    assert {params[c]["flag"] for c in out} == {False, True}
    assert 3 in out and 2 not in out   # of the MgO candidates, the one farthest from what was chosen
    assert cover_choices(axes, params, points, [0], list(params), total=2) == [0, 1]   # flag first, then no slot


class _CostlyRuns:
    """A stand-in runtime whose every run reports ``cpu`` CPU seconds and no wall time."""

    def __init__(self, cpu: float) -> None:
        self.cpu = cpu
        self.runs = 0

    def session(self, workspace: Path, limits: object, app_dir: object = None) -> "_CostlyRuns":
        return self

    warm = False

    def run(self, scenario: dict, inputs: dict, *, cpu: int | None = None) -> RunResult:
        self.runs += 1
        return RunResult(exit_code=0, stdout=b'{"x": 1.0}', stderr_tail="", seconds=0.0, cpu_seconds=self.cpu)

    def close(self) -> None:
        pass


@pytest.mark.parametrize("cpu,most", [(1.0, 4 + 2), (0.0, 20)])
def test_revealed_programs_spend_their_budget_in_cpu_seconds_per_worker(tmp_path: Path, cpu: float,
                                                                         most: int) -> None:
    """Half of a budget of 4 s with 2 workers is 4 CPU seconds of runs: four runs of a
    program that takes 1 CPU second each (and those already started), however long the
    wall clock says they took; runs that cost no CPU time all fit."""
    cases = [SimpleNamespace(case=SimpleNamespace(document={"id": f"c{i}"}, truth={"x": 1.0}), pending=None, known=None)
             for i in range(20)]
    eng = SimpleNamespace(oracle=SimpleNamespace(timeout=5), fields={"x": Number(abs=0.1).spec()}, cases=cases,
                          ensure=lambda indices: list(indices))
    rt = _CostlyRuns(cpu)
    shows = _Revealer(eng, [("p", tmp_path)], rt, 2, lambda _: None, budget=4.0)  # type: ignore[arg-type]
    shows.run(range(20))
    shows.close()
    assert 4 <= rt.runs <= most and shows.runs == rt.runs and shows.skipped == 20 - rt.runs
    assert shows.cpu == cpu * rt.runs
    if cpu:
        assert shows.clock() >= 2.0 and not shows.spent()   # the first half spent; showing has the rest
