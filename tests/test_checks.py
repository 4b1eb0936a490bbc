"""The check table and rung 5 ("outputs follow the truth, not replays").

Unit tests for the public-only predictions and the cell rule, then real gradings on
every built-in task: the reference, the reference with one field off, honest but
imprecise programs, and task-agnostic cheats (constant, replay, keyed noise,
interpolation) written by recon.validate.
"""
from __future__ import annotations

import json
import math
import shutil
import textwrap
from collections import Counter
from pathlib import Path
from typing import Any, Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recon.checks import CHECKS, PublicOnly, cell_distance, judge_cell, param_distance
from recon.grader import grade
from recon.ladder import CHECK_FAMILIES, LADDER_SCHEMA, Quorum, load_ladder
from recon.outputs import SequenceOf
from recon import Angle, Exact, Integer, Number, SetOf, Text
from recon.task import load_task

FIVE_SIXTHS = 5 / 6

# -- the table -----------------------------------------------------------------------------------


def test_ladder_schema_enum_is_the_check_table() -> None:
    enum = LADDER_SCHEMA["properties"]["rung"]["items"]["properties"]["checks"]["items"]["enum"]
    assert enum == sorted(CHECKS) and set(CHECK_FAMILIES) == set(CHECKS)
    assert {"replay", "variance", "response", "tracks", "graded_match"} <= set(CHECKS)
    for name, fam in CHECKS.items():
        assert fam.name == name and fam.expands in ("once", "per public scenario", "per graded scenario",
                                                     "per field", "per graded scenario and field")


def test_default_ladder_rung_5_is_tracks_with_a_quorum() -> None:
    rung = load_ladder("six_rung").rungs[4]
    assert rung.checks == ("tracks",)
    assert [rung.quorum.allowed_failures(n) for n in (1, 2, 3, 4, 5, 8, 10, 12)] == [0, 0, 1, 1, 1, 2, 2, 3]
    assert rung.options_for("tracks") == {"win_share": "2/3", "unpredictable_win_share": "1/2"}
    assert rung.passes([True] * 8 + [False] * 2) and not rung.passes([True] * 7 + [False] * 3)


@given(st.fractions(min_value=0, max_value=1), st.integers(0, 20), st.integers(0, 200))
def test_a_quorum_never_lets_half_fail(share: Any, at_least: int, n: int) -> None:
    allowed = Quorum(share, at_least).allowed_failures(n)
    assert 0 <= allowed and (n == 0 or 2 * allowed < n)


LADDER_HEAD = 'name = "x"\n[[rung]]\nindex = 1\nname = "a"\nscore = "1/1"\ndescription = "d"\n'


@pytest.mark.parametrize("body,needle", [
    ('checks = ["tracks"]\nquorum = { may_fail_share = "3/2" }\n', "not a share"),
    ('checks = ["tracks"]\n[rung.options.tracks]\nwin_share = "5/4"\n', "not a share"),
    ('checks = ["tracks"]\n[rung.options.tracks]\nsharpness = "1/2"\n', "sharpness"),
    ('checks = ["graded_match"]\n[rung.options.tracks]\nwin_share = "1/2"\n', "does not check"),
    ('checks = ["tracks"]\nquorum = { may_fail = 2 }\n', "may_fail"),
    ('checks = ["public_contract"]\n[rung.options.public_contract]\nat_most = 0\n', "at_most"),
    ('checks = ["public_contract"]\n[rung.options.public_contract]\nat_most = "all"\n', "at_most"),
])
def test_bad_rung_options_are_refused(tmp_path: Path, body: str, needle: str) -> None:
    from recon.errors import SpecError

    (tmp_path / "x.toml").write_text(LADDER_HEAD + body)
    with pytest.raises(SpecError, match=needle):
        load_ladder("x", [tmp_path])


# -- distances and predictions --------------------------------------------------------------------
AXES = {"a": {"kind": "float", "lo": 0.0, "hi": 10.0, "log": False},
        "t": {"kind": "float", "lo": 0.1, "hi": 10.0, "log": True},
        "c": {"kind": "choice", "choices": ["x", "y"]},
        "seed": {"kind": "seed", "lo": 0, "hi": 2 ** 31 - 1}}


def test_param_distance_scales_axes_and_counts_categorical_mismatches() -> None:
    base = {"a": 0.0, "t": 0.1, "c": "x", "seed": 1}
    assert param_distance(AXES, base, base) == 0.0
    assert param_distance(AXES, base, {**base, "a": 5.0}) == pytest.approx(0.5)
    assert param_distance(AXES, base, {**base, "t": 1.0}) == pytest.approx(0.5)  # log space: 0.1 -> 1 is half of 0.1 -> 10
    assert param_distance(AXES, base, {**base, "c": "y", "seed": 2}) == pytest.approx(math.sqrt(2))


def test_cell_distances_per_kind() -> None:
    assert cell_distance(Number(abs=1).spec(), 1.0, 3.5) == 2.5
    assert cell_distance(Integer().spec(), 7, 4) == 3
    assert cell_distance(Angle(tol=1).spec(), 359.0, 2.0) == pytest.approx(3.0)
    assert cell_distance(Exact().spec(), True, True) == 0.0 and cell_distance(Exact().spec(), True, 1) == 1.0
    assert cell_distance(Text(normalize="casefold").spec(), "A ", "a") == 0.0
    assert cell_distance(SetOf().spec(), ["a", "b"], ["b", "c"]) == pytest.approx(2 / 3)
    assert cell_distance(SetOf().spec(), [], []) == 0.0
    # distances are in units of the field's tolerance, at the truth
    assert cell_distance(Number(abs=0.5).spec(), 1.0, 3.5) == pytest.approx(5.0)
    assert cell_distance(Number(rel=0.1).spec(), 9.0, 10.0) == pytest.approx(1.0)
    assert cell_distance(Integer(tol=2).spec(), 7, 4) == pytest.approx(1.5)
    seq = SequenceOf(Number(abs=0.1)).spec()
    assert cell_distance(seq, [1.0, 2.0], [1.0, 3.0]) == pytest.approx(5.0)     # (0 + 10) / 2 tolerances
    # a length that differs from the truth's is as far as it gets: an empty list is never close
    assert cell_distance(seq, [1.0], [1.0, 3.0, 5.0]) == math.inf
    assert cell_distance(seq, [], [1.0, 3.0]) == math.inf
    assert cell_distance(seq, [], []) == 0.0
    assert cell_distance(Number(abs=1).spec(), 1e308, -1e308) == math.inf


def _public_linear(n: int = 6) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    rows = []
    for i in range(n):
        p = {"a": 10.0 * i / (n - 1), "t": 0.1 * 100 ** (((i * 7) % n) / (n - 1)), "c": "xy"[i % 2], "seed": 1000 + i}
        rows.append((p, {"y": 3.0 * p["a"] + 1.0, "k": int(p["a"]), "flag": p["c"] == "x", "s": ["q"] if i % 2 else []}))
    return rows


FIELDS = {"y": Number(abs=0.01).spec(), "k": Integer().spec(), "flag": Exact().spec(), "s": SetOf().spec()}


def test_predictions_cover_the_programs_that_do_not_compute() -> None:
    model = PublicOnly(AXES, FIELDS, _public_linear())
    probe = {"a": 5.0, "t": 1.0, "c": "x", "seed": 7}
    preds = dict(model.predictions("y", probe))
    assert set(preds) == {"nearest", "fitted nearest", "idw1", "idw2", "idw4", "mean", "median", "linear"}
    assert preds["mean"] == pytest.approx(16.0) and preds["linear"] == pytest.approx(16.0, abs=0.05)
    assert all(isinstance(v, int) for _, v in model.predictions("k", probe))
    assert dict(model.predictions("flag", probe)).keys() == {"nearest", "fitted nearest", "mode"}
    # a field that is linear in the parameters is predictable from the public data alone
    cell = judge_cell(FIELDS["y"], "probe_1", 99.0, 16.0, model.predictions("y", probe))
    assert not cell.win and cell.predictable and "within tolerance" in cell.how


def test_sequence_and_set_predictions_are_elementwise() -> None:
    axes = {"a": {"kind": "float", "lo": 0.0, "hi": 1.0}}
    fields = {"v": SequenceOf(Number(abs=0.01)).spec(), "s": SetOf().spec()}
    public = [({"a": 0.1}, {"v": [1.0, 2.0, 3.0], "s": ["x", "y"]}),
              ({"a": 0.5}, {"v": [3.0, 4.0], "s": ["x"]}),
              ({"a": 0.9}, {"v": [5.0, 6.0, 7.0, 8.0], "s": ["x", "z"]})]
    model = PublicOnly(axes, fields, public)
    preds = dict(model.predictions("v", {"a": 0.45}, like=[0.0, 0.0, 0.0]))
    # sized like the truth, position by position over the public sequences that reach it
    assert preds["elementwise-mean"] == pytest.approx([3.0, 4.0, 5.0])
    assert preds["elementwise-median"] == pytest.approx([3.0, 4.0, 5.0])
    assert preds["elementwise-nearest"] == [3.0, 4.0, 4.0]
    assert preds["nearest"] == [3.0, 4.0]
    sets = dict(model.predictions("s", {"a": 0.45}))
    assert sets["elementwise-majority"] == ["x"] and sets["elementwise-common"] == ["x"]
    # an empty list loses to the element-wise mean; an honest, slightly-off sequence wins
    truth = [3.2, 4.1, 5.3]
    preds_l = model.predictions("v", {"a": 0.45}, like=truth)
    assert not judge_cell(fields["v"], "h", [], truth, preds_l).win
    assert not judge_cell(fields["v"], "h", [3.0, 4.0, 5.0], truth, preds_l).win   # the mean itself
    assert judge_cell(fields["v"], "h", [3.19, 4.12, 5.25], truth, preds_l).win


def test_one_model_predicts_for_every_cell_what_it_would_work_out_afresh() -> None:
    """Rung 5 works out what does not depend on the graded scenario (a mode, a median, a
    linear fit's weights) once per field and position and keeps it in the model: whatever
    order the cells come in, every prediction is the one worked out afresh."""

    class Afresh(PublicOnly):
        def _once(self, key: Any, make: Any) -> Any:
            return make()

    axes = {"a": {"kind": "float", "lo": 0.0, "hi": 1.0}, "c": {"kind": "choice", "choices": ["x", "y"]}}
    fields = {"y": Number(abs=0.01).spec(), "k": Integer().spec(), "ang": Angle(tol=1.0).spec(),
              "bearing": Angle(tol=2.0).spec(),
              "v": SequenceOf(Number(abs=0.01)).spec(), "w": SequenceOf(Text()).spec(), "s": SetOf().spec(),
              "t": Text().spec()}
    rows = [(0.1, "x", 1.0, 3, 350.0, [1.0, 2.0], ["p", "q"], ["x", "y"], "u"),
            (0.4, "y", 2.5, 3, 10.0, [3.0], ["p"], ["x"], "u"),
            (0.7, "x", 2.0, 5, 20.0, [5.0, 6.0, 7.0], ["r", "q", "p"], ["y", "z"], "w"),
            (0.9, "y", 4.0, 1, 355.0, [], [], [], "u")]
    public = [({"a": a, "c": c}, {"y": y, "k": k, "ang": g, "bearing": 90.0 + 40.0 * y, "v": v, "w": w, "s": st_,
                                   "t": t})
              for a, c, y, k, g, v, w, st_, t in rows]
    shared, afresh = PublicOnly(axes, fields, public), Afresh(axes, fields, public)
    cells = [({"a": a, "c": c}, like) for a in (0.05, 0.5, 0.95) for c in ("x", "y") for like in ([0, 0], [0, 0, 0, 0])]
    for name in fields:
        for params, like in [*cells, *reversed(cells)]:
            assert shared.predictions(name, params, like) == afresh.predictions(name, params, like), \
                (name, params, like)


def test_cell_rule() -> None:
    spec = Number(abs=0.1).spec()
    preds = [("mean", 10.0), ("nearest", 4.0)]
    assert judge_cell(spec, "h", 5.05, 5.0, preds).win                            # within tolerance
    closer = judge_cell(spec, "h", 5.5, 5.0, preds)
    assert closer.win and not closer.predictable and "closer than every" in closer.how
    tie = judge_cell(spec, "h", 6.0, 5.0, preds)                                  # as far as the nearest public value
    assert not tie.win and "nearest" in tie.how
    predictable = judge_cell(spec, "h", 4.95, 4.0, preds)                         # nearest is exact; 4.95 is not
    assert not predictable.win and predictable.predictable


@given(st.lists(st.floats(-100, 100), min_size=3, max_size=8), st.floats(-100, 100), st.floats(0.01, 5))
def test_printing_a_public_only_prediction_never_wins_beyond_tolerance(ys: list[float], truth: float, tol: float) -> None:
    spec = Number(abs=tol).spec()
    public = [({"a": 10.0 * i / len(ys), "t": 1.0, "c": "x", "seed": i}, {"y": y}) for i, y in enumerate(ys)]
    model = PublicOnly(AXES, {"y": spec}, public)
    preds = model.predictions("y", {"a": 3.3, "t": 2.0, "c": "y", "seed": 99})
    for _, value in preds:
        cell = judge_cell(spec, "h", value, truth, preds)
        assert cell.win == (abs(value - truth) <= tol)


# -- real gradings on every built-in task ----------------------------------------------------------
BUILTINS = ["lidar_icp", "chem_smarts", "acoustic_beamforming"]
NONCES = ["rung5-a", "rung5-b"]

# Honest but imprecise programs: the reference with one small source edit each. The
# built-in oracles evolve, so each task lists a few candidates; every one that applies
# must keep rung 5, and at least one must really be imprecise on the graded set.
HONEST: dict[str, list[tuple[str, list[tuple[str, str]]]]] = {
    "chem_smarts": [
        # one site class missing: where it would react the step leaves those molecules
        # alone, so the route ends elsewhere (often where other published scenarios end)
        ("no secondary-alcohol oxidation",
         [('        C("secondary alcohol", 1, ["[CH1X4:1]([#6:3])([#6:4])[OX2H1:2]>>[C:1]([#6:3])([#6:4])=[O:2]"]),\n',
           "")]),
        ("no aryl-chloride dehalogenation", [('        C("aryl chloride", 2, ["[c:1]Cl>>[c:1]"]),\n', "")]),
        ("no ortho bromination",
         [('        C("ortho to an activating group", 1, [f"[cH;$(c:c-{ACTIVATOR}):1]>>[c:1]Br"]),\n', "")]),
        # the monoisotopic mass where the average one is asked: off on every product, on one field
        ("exact instead of average mass",
         [('"mw": round(Descriptors.MolWt(mol), 6)', '"mw": round(Descriptors.ExactMolWt(mol), 6)')]),
    ],
    "lidar_icp": [
        # a slightly different ICP stopping rule: iterations (and converged) differ
        ("stop rule 10x looser", [("STOP_YAW = 1e-6", "STOP_YAW = 1e-5"), ("STOP_SHIFT = 1e-5", "STOP_SHIFT = 1e-4")]),
        ("at most 6 iterations", [("MAX_ITERATIONS = 30", "MAX_ITERATIONS = 6")]),
    ],
}


def _constant_mode(ws: Path, task: Path) -> None:
    """A constant: the most common published output (chem_smarts: "no product")."""
    outs = Counter(json.dumps(sd.truth, sort_keys=True) for sd in load_task(task).public())
    (ws / "reconstruct.py").write_text(f"import sys\nsys.stdin.read()\nprint({outs.most_common(1)[0][0]!r})\n")


def _empty_lists(ws: Path, task: Path) -> None:
    """The reference with up to three sequence fields printed as [] and numeric fields
    constant: garbage on one field more than rung 5's quorum forgives (a quarter)."""
    fields = load_task(task).outputs
    garbage = len(fields) // 4 + 1
    seqs = sorted(n for n, s in fields.items() if s["kind"] in ("sequence", "set"))[:3]
    consts = sorted(n for n, s in fields.items() if s["kind"] == "number")[:max(2, garbage - len(seqs))]
    shutil.copyfile(task / "solution" / "reconstruct.py", ws / "ref_impl.py")
    (ws / "reconstruct.py").write_text(textwrap.dedent(f"""
        import json, sys
        import ref_impl
        out = ref_impl.solve(json.load(sys.stdin))
        for name in {seqs!r}:
            out[name] = []
        for name in {consts!r}:
            out[name] = 1.0
        print(json.dumps(out))
    """))


def _fitted_lookup(ws: Path, task: Path) -> None:
    """validate's fitted lookup: each field from the public scenario nearest in its own metric."""
    from recon.validate import write_generated

    write_generated("fitted lookup", ws, load_task(task), task / "solution" / "reconstruct.py")


PROGRAMS: dict[str, tuple[Callable[[Path, Path], None], float, float]] = {
    # name: (writer, lowest reward, highest reward)
    "constant mode": (_constant_mode, 0.0, FIVE_SIXTHS - 1e-6),
    "fitted lookup": (_fitted_lookup, 0.0, FIVE_SIXTHS - 1e-6),
    "empty lists": (_empty_lists, 0.0, FIVE_SIXTHS - 1e-6),
}
# The reference and the generated controls (constant, replay, keyed noise, interpolation,
# one field off) are rows of `recon validate`, which tests/test_builtins.py runs on a
# default build; here are the controls validate does not run, on small builds of each
# built-in (rung 5 judges every graded cell, so few cells make its quorum no easier).
CASES = [(t, "constant mode") for t in BUILTINS] + [(t, "fitted lookup") for t in BUILTINS]
# the empty-lists control needs sequence fields (lidar_icp has none)
CASES += [(t, "empty lists") for t in ("acoustic_beamforming", "chem_smarts")]


@pytest.mark.parametrize("task_name,program", CASES)
def test_rung_5_separates_computing_from_not(task_name: str, program: str, small_tasks: dict[str, Path],
                                              tmp_path: Path) -> None:
    task = small_tasks[task_name]
    writer, lo, hi = PROGRAMS[program]
    ws = tmp_path / "ws"
    ws.mkdir()
    writer(ws, task)
    for nonce in NONCES:
        g = grade(task, ws, runtime="local", nonce=nonce, workers=2)
        r5 = g["rungs"][4]
        why = [(c["id"], c["reason"]) for c in r5["checks"] if not c["passed"]][:4]
        assert lo - 1e-9 <= g["reward"] <= hi + 1e-9, (task_name, program, nonce, g["reward"], why)
        if hi < FIVE_SIXTHS:
            # the cheats speak the contract: it is rung 5 that stops them
            assert g["rung"]["index"] == 4 and r5["examined"] and not r5["passed"], (program, nonce)
        assert r5["may_fail"] == max(1, len(g["rungs"][4]["checks"]) // 4) or not r5["examined"]
        for c in r5["checks"]:
            assert c["id"] == f"tracks:{c['field']}" and {"got", "want", "cells", "wins", "needed"} <= set(c)
            assert f"wins {c['wins']}/{len(c['cells'])}" in c["reason"]


@pytest.mark.parametrize("task_name", sorted(HONEST))
def test_honest_but_imprecise_programs_keep_rung_5(task_name: str, small_tasks: dict[str, Path], tmp_path: Path) -> None:
    task = small_tasks[task_name]
    reference = (task / "solution" / "reconstruct.py").read_text()
    rewards: dict[str, list[float]] = {}
    for label, edits in HONEST[task_name]:
        if not all(old in reference for old, _ in edits):
            continue  # the reference moved on; another candidate covers the task
        source = reference
        for old, new in edits:
            source = source.replace(old, new)
        ws = tmp_path / label.replace(" ", "_")
        ws.mkdir()
        (ws / "reconstruct.py").write_text(source)
        for nonce in NONCES[:1]:
            g = grade(task, ws, runtime="local", nonce=nonce, workers=2)
            why = [(c["id"], c["reason"]) for c in g["rungs"][4]["checks"] if not c["passed"]][:4]
            assert g["reward"] >= FIVE_SIXTHS - 1e-9, (label, nonce, g["reward"], why)
            rewards.setdefault(label, []).append(g["reward"])
    assert rewards, f"no honest variant applies to the {task_name} reference any more: update HONEST"
    assert any(min(r) < 1.0 for r in rewards.values()), f"no variant is imprecise here: {rewards}"


def test_validate_names_the_fields_that_let_a_cheat_through() -> None:
    from recon.validate import GENERATED, _generated_detail

    noise = next(g for g in GENERATED if g.name == "keyed noise")
    checks = [{"id": f"tracks:{f}", "passed": f != "b"} for f in "abcde"]
    graded = {"reward": 0.9, "rung": {"index": 5},
              "rungs": [{"checks": []}] * 4 + [{"examined": True, "checks": checks, "failed": 1, "may_fail": 1},
                        {"examined": True, "checks": [{"id": "graded_match:h:a", "passed": False}]}]}
    detail = _generated_detail(graded, noise)
    assert detail.startswith("rung 5: rung 5 let it pass on tracks:a, tracks:c, tracks:d, tracks:e")
    graded["reward"], graded["rung"] = 0.7, {"index": 4}
    graded["rungs"][4]["checks"] = [{"id": "tracks:a", "passed": True}, {"id": "tracks:b", "passed": False}]
    assert _generated_detail(graded, noise) == "rung 4; failing tracks:b, graded_match:h:a; rung 5 passed only tracks:a"
    assert [g.name for g in GENERATED] == ["constant", "replay", "keyed noise", "interpolation", "fitted lookup",
                                           "one field off"]


def test_the_fitted_metric_finds_the_axes_that_decide_a_field() -> None:
    """A field decided by a choice axis and an integer, with a float axis that does not
    matter beside them. Every combination is published twice, at values of the float far
    apart, while the neighbouring integers' scenarios sit at other values of it: plain
    nearest takes a neighbour, the fitted metric drops the float and finds the twin, as a
    program that looks a scenario up by its deciding axes does."""
    axes = {"case": {"kind": "choice", "choices": list("abc")}, "t": {"kind": "int", "lo": 0, "hi": 5},
            "x": {"kind": "float", "lo": 0.0, "hi": 1.0, "log": False}}
    fields = {"y": Number(abs=0.01).spec(), "tag": Exact().spec()}

    def truth(p: dict[str, object]) -> dict[str, object]:
        return {"y": 10.0 * "abc".index(str(p["case"])) + float(p["t"]), "tag": f"{p['case']}{p['t']}"}  # type: ignore[arg-type]

    combos = [(c, t) for c in "abc" for t in range(6)]
    public = [({"case": c, "t": t, "x": x}, truth({"case": c, "t": t}))
              for c, t in combos for x in ((0.0, 0.9) if t % 2 == 0 else (0.45, 0.5))]
    model = PublicOnly(axes, fields, public)
    for name in fields:
        w = dict(zip(sorted(axes), model.fitted_weights(name)))
        assert w["x"] == 0.0 and w["case"] > 0 and w["t"] > 0, (name, w)
    fitted = plain = 0
    for c, t in combos:
        p = {"case": c, "t": t, "x": 0.45 if t % 2 == 0 else 0.0}
        want = truth(p)
        fitted += model.fitted_nearest("y", p) == want["y"] and model.fitted_nearest("tag", p) == want["tag"]
        plain += dict(model.predictions("y", p))["nearest"] == want["y"]
        assert ("fitted nearest", want["y"]) in model.predictions("y", p)
    assert fitted == len(combos) and plain == 0
