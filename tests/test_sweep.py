from __future__ import annotations

import math
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recon import Bool, Choice, Float, Int, Number, Seed, oracle
from recon.errors import SpecError
from recon.mutation.selection import select_scenarios
from recon.sweep import (SweepSpec, cover_draws, cover_scenarios, derive_task_key, hidden_scenarios, load_spec,
                         pinned_cpus, probe_scenarios, public_scenarios, run_scenarios)


def _demo():  # type: ignore[no-untyped-def]
    @oracle(name="sweepdemo", version="1.0.0", title="t", domain="d", toolkit=[], description="Adds two numbers.",
            axes={"f": Float(0.0, 10.0, doc="a real"), "g": Float(0.1, 100.0, log=True, doc="a scale"),
                  "i": Int(1, 50, doc="a count"), "c": Choice(["a", "b", "c"], doc="a letter"), "b": Bool(doc="a flag"),
                  "seed": Seed(doc="a seed")},
            outputs={"y": Number(abs=1e-9, doc="the sum")}, evidence={"note.txt": "a note"})
    def sweepdemo(params, evidence):  # type: ignore[no-untyped-def]
        """Adds f and i."""
        (evidence / "note.txt").write_text("x")
        return {"y": params["f"] + params["i"]}

    return sweepdemo


DEMO = _demo()


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 40), st.integers(1, 12), st.integers(0, 10**6))
def test_sweeps_are_deterministic_and_stratified(n_public: int, n_hidden: int, seed: int) -> None:
    spec = SweepSpec(n_public=n_public, n_hidden=n_hidden, seed=seed)
    pub = public_scenarios(DEMO, spec)
    assert pub == public_scenarios(DEMO, spec)
    assert [s.id for s in pub] == [f"public_{i + 1}" for i in range(n_public)]
    for s in pub:
        DEMO.check_params(s.parameters)
    # stratified: each of the N equal strata of a continuous axis holds exactly one sample
    for name, lo, hi in (("f", 0.0, 10.0),):
        strata = sorted(min(int((s.parameters[name] - lo) / (hi - lo) * n_public), n_public - 1) for s in pub)
        assert len(set(strata)) >= n_public - 1  # rounding to 6 digits may nudge one across a boundary
    logs = sorted(min(int(math.log(s.parameters["g"] / 0.1) / math.log(1000.0) * n_public), n_public - 1) for s in pub)
    assert len(set(logs)) >= n_public - 1
    if n_public >= 3:
        assert {s.parameters["c"] for s in pub} == {"a", "b", "c"}
    if n_public >= 2:
        assert {s.parameters["b"] for s in pub} == {False, True}


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 20), st.integers(1, 12), st.integers(0, 10**6), st.binary(min_size=1, max_size=16))
def test_hidden_never_collide_with_public_and_touch_edges(n_public: int, n_hidden: int, seed: int, secret: bytes) -> None:
    spec = SweepSpec(n_public=n_public, n_hidden=n_hidden, seed=seed)
    pub = public_scenarios(DEMO, spec)
    key = derive_task_key(secret, DEMO, spec)
    hid = hidden_scenarios(DEMO, spec, key, pub)
    assert hid == hidden_scenarios(DEMO, spec, key, pub)
    keys = {s.key() for s in pub}
    assert len(hid) == n_hidden and len({s.key() for s in hid}) == n_hidden
    assert not keys & {s.key() for s in hid}
    for s in hid:
        DEMO.check_params(s.parameters)
    edges = [a for a, ax in DEMO.axes.items() if not isinstance(ax, Seed) and hid[0].parameters[a] in ax.edges()]
    assert edges, hid[0]
    if n_hidden >= 6:  # edges are favoured across the whole set
        at_edge = sum(1 for s in hid for a, ax in DEMO.axes.items()
                      if not isinstance(ax, Seed) and not isinstance(ax, (Bool, Choice)) and s.parameters[a] in ax.edges())
        assert at_edge >= 2


def test_hidden_depend_on_the_secret_and_consecutive_seeds_do_not_overlap() -> None:
    spec = SweepSpec(n_public=6, n_hidden=3, seed=0)
    a = hidden_scenarios(DEMO, spec, derive_task_key(b"one", DEMO, spec))
    b = hidden_scenarios(DEMO, spec, derive_task_key(b"two", DEMO, spec))
    assert a != b
    next_spec = SweepSpec(n_public=6, n_hidden=3, seed=1)
    pub0, pub1 = public_scenarios(DEMO, spec), public_scenarios(DEMO, next_spec)
    assert not {s.key() for s in pub0} & {s.key() for s in pub1}
    h1 = hidden_scenarios(DEMO, next_spec, derive_task_key(b"one", DEMO, next_spec))
    assert not {s.key() for s in a} & {s.key() for s in h1}


def test_probes_are_fresh_reproducible_independent_draws() -> None:
    spec = SweepSpec()
    key = derive_task_key(b"k", DEMO, spec)
    pub = public_scenarios(DEMO, spec)
    hid = hidden_scenarios(DEMO, spec, key, pub)
    p1 = probe_scenarios(DEMO, spec, key, "nonce-1", 12, pub, hid)
    assert p1 == probe_scenarios(DEMO, spec, key, "nonce-1", 12, pub, hid)
    assert p1 != probe_scenarios(DEMO, spec, key, "nonce-2", 12, pub, hid)
    taken = {s.key() for s in pub + hid}
    assert not taken & {s.key() for s in p1} and len({s.key() for s in p1}) == 12
    # independent draws, not one-axis variations of graded scenarios: power needs them
    graded = hid + p1
    near = [(a, b) for a in p1 for b in graded if a is not b
            and sum(a.parameters[k] != b.parameters[k] for k in a.parameters) == 1]
    assert len(near) <= 1
    # a probe's draw does not depend on how many probes are drawn
    assert probe_scenarios(DEMO, spec, key, "nonce-1", 5, pub, hid) == p1[:5]


def test_spec_files_narrow_axes_and_are_validated(tmp_path: Path) -> None:
    good = tmp_path / "s.toml"
    good.write_text('n_public = 4\nn_hidden = 2\nseed = 7\n[axes.f]\nlo = 2.0\nhi = 3.0\n[axes.c]\nchoices = ["a"]\n')
    spec = load_spec(DEMO, good)
    assert (spec.n_public, spec.n_hidden, spec.seed) == (4, 2, 7)
    for s in public_scenarios(DEMO, spec):
        assert 2.0 <= s.parameters["f"] <= 3.0 and s.parameters["c"] == "a"
    assert load_spec(DEMO, good, n_public=9).n_public == 9
    for text, pattern in [
        ("n_public = 0\n", r"n_public=0 must be an integer"),
        ("bogus = 1\n", r"unknown keys \['bogus'\]"),
        ("[axes.nope]\nlo = 1\n", r"axis 'nope' is not an axis"),
        ("[axes.f]\nlo = -5.0\n", r"narrowed bound -5.0 is outside"),
        ("[axes.c]\nchoices = [\"z\"]\n", r"narrowed choice 'z' is not one of"),
        ("n_public = \n", r"not valid TOML"),
    ]:
        bad = tmp_path / "bad.toml"
        bad.write_text(text)
        with pytest.raises(SpecError, match=pattern):
            load_spec(DEMO, bad)


def test_spec_files_set_probes_and_the_programs_to_reveal(tmp_path: Path) -> None:
    spec_file = tmp_path / "s.toml"
    (tmp_path / "mine").mkdir()
    spec_file.write_text('probes = 40\nreveal = ["baselines", "mine"]\n')
    spec = load_spec(DEMO, spec_file)
    assert spec.probes == 40 and spec.reveal == ("baselines", str(tmp_path / "mine"))
    assert load_spec(DEMO, None).probes == 3 and load_spec(DEMO, None).reveal == ()
    assert spec.reveal_budget is None
    spec_file.write_text('reveal = ["independent"]\nreveal_budget = 240\n')
    assert load_spec(DEMO, spec_file).reveal_budget == 240.0
    for text, pattern in [("probes = -1\n", r"probes=-1 must be an integer"),
                          ('reveal = "baselines"\n', r"reveal='baselines' must be a list"),
                          ("reveal_budget = 0\n", r"reveal_budget=0 must be a number of seconds"),
                          ("reveal_budget = true\n", r"reveal_budget=True must be a number of seconds"),
                          ('reveal_budget = "4m"\n', r"reveal_budget='4m' must be a number of seconds")]:
        spec_file.write_text(text)
        if pattern is None:   # 50 x 3 x 2 combinations: within the limit
            assert len(cover_draws(DEMO, load_spec(DEMO, spec_file))) == 300
            continue
        with pytest.raises(SpecError, match=pattern):
            load_spec(DEMO, spec_file)


def test_a_cover_publishes_every_combination_of_its_axes(tmp_path: Path) -> None:
    """``cover = [["c", "b"]]``: every letter with every flag is published, on top of
    ``n_public``, whatever chose the rest; the added scenarios are drawn from the spec's
    seed (the same for every key) and never coincide with a hidden one."""
    spec_file = tmp_path / "s.toml"
    spec_file.write_text('n_public = 2\nn_hidden = 4\ncover = [["c", "b"]]\n')
    spec = load_spec(DEMO, spec_file)
    assert spec.cover == (("c", "b"),) and spec.to_json()["cover"] == [["c", "b"]]
    pub = public_scenarios(DEMO, spec)
    hidden = {}
    for secret in (b"one", b"two"):
        key = derive_task_key(secret, DEMO, spec)
        sel = select_scenarios(DEMO, spec, key)
        assert sel.public[:2] == pub   # what n_public chose stays, in front
        combos = {(s.parameters["c"], s.parameters["b"]) for s in sel.public}
        assert combos == {(c, b) for c in "abc" for b in (False, True)}
        assert len(sel.public) == 2 + 6 - len({(s.parameters["c"], s.parameters["b"]) for s in pub})
        assert [s.id for s in sel.public] == [f"public_{i + 1}" for i in range(len(sel.public))]
        assert not {s.key() for s in sel.public} & {s.key() for s in sel.hidden}
        for s in sel.public:
            DEMO.check_params(s.parameters)
        hidden[secret] = sel
    assert hidden[b"one"].public == hidden[b"two"].public       # unkeyed
    assert load_spec(DEMO, spec_file, n_public=3).cover == ()     # --public N: exactly N
    assert cover_scenarios(DEMO, spec, pub) == hidden[b"one"].public[2:]
    # no hidden scenario is any scenario the cover may publish, so what it publishes never
    # depends on which scenarios are hidden
    draws = {s.key() for s in cover_draws(DEMO, spec)}
    assert len(draws) == 6 and not draws & {s.key() for sel in hidden.values() for s in sel.hidden}
    # a narrowed axis is covered as narrowed
    spec_file.write_text('n_public = 1\ncover = [["c"]]\n[axes.c]\nchoices = ["a", "b"]\n')
    narrowed = load_spec(DEMO, spec_file)
    assert {s.parameters["c"] for s in select_scenarios(DEMO, narrowed, b"k" * 32).public} == {"a", "b"}
    # an integer interval is covered value by value, as narrowed; a seed is no grid of values
    spec_file.write_text('n_public = 1\ncover = [["c", "i"]]\n[axes.i]\nlo = 3\nhi = 5\n')
    both = {(s.parameters["c"], s.parameters["i"]) for s in select_scenarios(DEMO, load_spec(DEMO, spec_file),
                                                                             b"k" * 32).public}
    assert both == {(c, i) for c in "abc" for i in (3, 4, 5)}
    for text, pattern in [('cover = ["c"]\n', r"cover=\['c'\] must be a list of lists of axis names"),
                          ('cover = [["f"]]\n', r"cover names 'f', which is not a choice or integer axis"),
                          ('cover = [["nope"]]\n', r"cover names 'nope', which is not a choice or integer axis"),
                          ('cover = [["seed"]]\n', r"cover names 'seed', which is not a choice or integer axis"),
                          ('cover = [["i", "c", "b"]]\n[axes.i]\nlo = 1\nhi = 50\n', None),
                          ('cover = [["c", "c"]]\n', r"names an axis twice"),
                          ('cover = [[]]\n', r"must be a list of lists of axis names")]:
        spec_file.write_text(text)
        if pattern is None:   # 50 x 3 x 2 combinations: within the limit
            assert len(cover_draws(DEMO, load_spec(DEMO, spec_file))) == 300
            continue
        with pytest.raises(SpecError, match=pattern):
            load_spec(DEMO, spec_file)


def test_small_axis_spaces_fail_clearly() -> None:
    @oracle(name="tiny", version="1.0.0", title="t", domain="d", toolkit=[], axes={"b": Bool(doc="a flag")},
            outputs={"y": Number(abs=1, doc="a number")}, description="Always one.")
    def tiny(params, evidence):  # type: ignore[no-untyped-def]
        """Tiny."""
        return {"y": 1.0}

    with pytest.raises(SpecError, match="cannot draw 3 distinct public scenarios"):
        public_scenarios(tiny, SweepSpec(n_public=3))


def test_running_scenarios_in_parallel_matches_serial(tmp_path: Path) -> None:
    spec = SweepSpec(n_public=8)
    pub = public_scenarios(DEMO, spec)
    serial = run_scenarios(DEMO, [(s, tmp_path / "a" / s.id, True) for s in pub], workers=1)
    parallel = run_scenarios(DEMO, [(s, tmp_path / "b" / s.id, True) for s in pub], workers=2)
    assert [r.output for r in serial] == [r.output for r in parallel]
    for s in pub:
        assert (tmp_path / "a" / s.id / "scenario.json").read_bytes() == (tmp_path / "b" / s.id / "scenario.json").read_bytes()
        assert (tmp_path / "a" / s.id / "note.txt").is_file()


def test_pool_scenarios_start_at_the_edges_and_are_reproducible() -> None:
    from recon.sweep import pool_scenarios

    spec = SweepSpec()
    pool = pool_scenarios(DEMO, spec, 40)
    assert pool == pool_scenarios(DEMO, spec, 40)
    assert pool != pool_scenarios(DEMO, spec, 40, seed=1)
    assert [s.id for s in pool] == [f"pool_{i + 1}" for i in range(40)]
    assert len({s.key() for s in pool}) == 40
    for s in pool:
        DEMO.check_params(s.parameters)
    edged = [a for a, ax in DEMO.axes.items() if not isinstance(ax, Seed)]
    # every axis at each of its ends, first
    for a in edged:
        ends = DEMO.axes[a].edges()
        assert any(s.parameters[a] == ends[0] for s in pool[:2 * len(edged) + 2])
        assert any(s.parameters[a] == ends[-1] for s in pool[:2 * len(edged) + 2])
    lows = pool[2 * len(edged)]
    assert all(lows.parameters[a] == DEMO.axes[a].edges()[0] for a in edged)
    taken = public_scenarios(DEMO, spec)
    assert not {s.key() for s in taken} & {s.key() for s in pool_scenarios(DEMO, spec, 40, taken=taken)}
    assert pool_scenarios(DEMO, spec, 5) == pool[:5]


def test_workers_are_pinned_one_to_a_cpu_only_when_they_are_as_many_as_the_cpus(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("os.sched_getaffinity", lambda pid: {3, 1})
    assert pinned_cpus(2) == [1, 3]
    assert pinned_cpus(1) is None and pinned_cpus(3) is None   # a core could idle beside another build's
    monkeypatch.setattr("os.sched_getaffinity", lambda pid: {0})
    assert pinned_cpus(1) is None                              # one CPU: nothing to place


def _affinity_oracle():  # type: ignore[no-untyped-def]
    @oracle(name="affinitydemo", version="1.0.0", title="t", domain="d", toolkit=[], description="Where it ran.",
            axes={"i": Int(1, 1000, doc="a count")}, outputs={"cpus": Number(abs=0.5, doc="its CPUs as a bit mask")})
    def affinitydemo(params, evidence):  # type: ignore[no-untyped-def]
        """The CPUs this process may run on."""
        import os
        return {"cpus": sum(1 << c for c in os.sched_getaffinity(0))}

    return affinitydemo


def test_the_oracle_runs_on_one_cpu_per_worker_when_the_workers_fill_the_machine(tmp_path: Path) -> None:
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        pytest.skip("one CPU: workers are not pinned")
    demo = _affinity_oracle()
    scs = public_scenarios(demo, SweepSpec(n_public=4 * len(cpus)))
    jobs = [(s, tmp_path / "p" / s.id, False) for s in scs]
    every = sum(1 << c for c in cpus)
    masks = {r.output["cpus"] for r in run_scenarios(demo, jobs, workers=len(cpus))}
    assert masks and masks <= {1 << c for c in cpus}, masks          # each run on one CPU of its worker's
    fewer = run_scenarios(demo, [(s, tmp_path / "f" / s.id, False) for s in scs], workers=len(cpus) + 1)
    assert {r.output["cpus"] for r in fewer} == {every}               # not pinned: the kernel places them
    assert os.sched_getaffinity(0) == set(cpus)                      # the caller is never pinned
