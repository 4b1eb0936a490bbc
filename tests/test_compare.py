from __future__ import annotations

import math

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from recon import Angle, Exact, Integer, Number, SetOf, Text, compare
from recon.outputs import SequenceOf

finite = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e9, max_value=1e9)
tols = st.floats(min_value=1e-6, max_value=10.0)


@given(finite, finite, tols, st.floats(min_value=0, max_value=0.5))
def test_number_comparison_is_symmetric(a: float, b: float, abs_tol: float, rel: float) -> None:
    spec = Number(abs=abs_tol, rel=rel).spec()
    assert compare.within(spec, a, b) == compare.within(spec, b, a)


@given(finite, tols)
def test_abs_tolerance_boundary(want: float, tol: float) -> None:
    spec = Number(abs=tol).spec()
    inside = want + tol * 0.999
    assume(inside - want <= tol and inside != want or tol * 0.999 < abs(want) * 1e-15)
    assert compare.within(spec, inside, want)
    beyond = want + tol * 1.001 + 1e-9 * abs(want)
    assume(beyond - want > tol)
    assert not compare.within(spec, beyond, want)


@given(st.floats(min_value=1.0, max_value=1e6), st.floats(min_value=1e-4, max_value=0.2))
def test_rel_tolerance_boundary(want: float, rel: float) -> None:
    # symmetric: |g - w| <= rel * max(|g|, |w|), so g = w (1 + x) passes iff x <= rel / (1 - rel)
    spec = Number(rel=rel).spec()
    edge = rel / (1 - rel)
    assert compare.within(spec, want * (1 + edge * 0.99), want)
    assert not compare.within(spec, want * (1 + edge * 1.05), want)


@given(st.integers(-1000, 1000), st.integers(0, 5), st.integers(-10, 10))
def test_integer_tolerance(want: int, tol: int, delta: int) -> None:
    assert compare.within(Integer(tol=tol).spec(), want + delta, want) == (abs(delta) <= tol)


@pytest.mark.parametrize("spec,got,want", [
    (Number(abs=1).spec(), "1.0", 1.0),
    (Number(abs=1).spec(), True, 1.0),
    (Integer().spec(), 3.0, 3),
    (Integer().spec(), True, 1),
    (Exact().spec(), 1, True),
    (Exact().spec(), 1.0, 1),
    (Text().spec(), 5, "5"),
    (SetOf().spec(), "CCO", ["CCO"]),
])
def test_comparison_is_type_strict(spec: dict, got: object, want: object) -> None:
    assert not compare.within(spec, got, want)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_never_equal(bad: float) -> None:
    assert not compare.within(Number(abs=1e9).spec(), bad, bad)
    assert not compare.within(Angle(tol=10).spec(), bad, 0.0)
    assert not compare.within(Exact().spec(), bad, bad)


def test_angle_wraps_around() -> None:
    spec = Angle(tol=3.0).spec()
    assert compare.within(spec, 359.0, 1.0)
    assert compare.within(spec, -1.0, 1.0)
    assert not compare.within(spec, 355.0, 1.0)


@given(st.floats(0, 360), st.floats(0, 360), st.floats(0.1, 90))
def test_angle_is_symmetric(a: float, b: float, tol: float) -> None:
    spec = Angle(tol=tol).spec()
    assert compare.within(spec, a, b) == compare.within(spec, b, a)


def test_sets_ignore_order_and_duplicates_and_canonicalise_smiles() -> None:
    plain = SetOf().spec()
    assert compare.within(plain, ["b", "a", "a"], ["a", "b"])
    assert not compare.within(plain, ["a"], ["a", "b"])
    smiles = SetOf(normalize="smiles").spec()
    assert compare.within(smiles, ["OCC", "c1ccccc1"], ["C1=CC=CC=C1", "CCO"])
    ok, why = compare.check(smiles, ["not a smiles ((("], ["CCO"])
    assert not ok and "unparseable" in why


def test_text_normalisation() -> None:
    assert compare.within(Text(normalize="strip").spec(), " a ", "a")
    assert not compare.within(Text().spec(), " a ", "a")
    assert compare.within(Text(normalize="casefold").spec(), "ABC", "abc")


def test_sequence_itemwise() -> None:
    spec = SequenceOf(Number(abs=0.1)).spec()
    assert compare.within(spec, [1.0, 2.05], [1.0, 2.0])
    assert not compare.within(spec, [1.0], [1.0, 2.0])
    assert not compare.within(spec, [1.0, 2.5], [1.0, 2.0])


def test_mismatch_detail_names_got_want_and_tolerance() -> None:
    ok, detail = compare.check(Number(abs=0.001).spec(), 0.41, 0.64)
    assert not ok
    assert detail == "got 0.41  want 0.64  (abs tol 0.001)"


def test_compare_output_reports_missing_and_wrong_kind() -> None:
    fields = {"a": Integer().spec(), "b": Number(abs=1).spec(), "c": Exact().spec()}
    res = {r.field: r for r in compare.compare_output(fields, {"a": "3", "c": True}, {"a": 3, "b": 1.0, "c": True})}
    assert res["a"].status == compare.WRONG_KIND and "expected an integer" in res["a"].detail
    assert res["b"].status == compare.MISSING
    assert res["c"].status == compare.PASS


def test_parse_stdout_failures_are_named() -> None:
    assert compare.parse_stdout(b"")[1] == "no output on stdout"
    assert "invalid JSON" in compare.parse_stdout(b"{nope")[1]
    assert "not valid JSON" in compare.parse_stdout(b'{"x": NaN}')[1]
    assert compare.parse_stdout(b'{"x": 1}\n') == ({"x": 1}, None)
    assert "not UTF-8" in compare.parse_stdout(b"\xff\xfe")[1]


def test_describe_in_words() -> None:
    assert Number(abs=1e-3).describe() == "abs tol 0.001"
    assert Number(abs=1e-3, rel=0.05).describe() == "abs tol 0.001 or rel tol 0.05"
    assert Integer(tol=0).describe() == "exact integer"
    assert Integer(tol=6).describe() == "integer, tol 6"
    assert "359" not in Angle(tol=2).describe() and "angle tol 2" in Angle(tol=2).describe()


def test_compare_module_is_standard_library_only() -> None:
    import ast
    import sys
    from pathlib import Path

    tree = ast.parse(Path(compare.__file__).read_text())
    imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module and n.level == 0}
    imported -= {"rdkit"}  # optional, imported lazily for SMILES only
    assert imported <= set(sys.stdlib_module_names) | {"__future__"}, imported
