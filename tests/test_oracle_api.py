"""The @oracle declaration: axes, outputs, and every error a broken plugin can get."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recon import Bool, Choice, Exact, Float, Int, Integer, Number, Registry, Seed, oracle
from recon.errors import DuplicateOracleError, OracleRunError, PluginError, UnknownOracleError

units = st.floats(min_value=0.0, max_value=1.0, exclude_max=True)


@given(st.floats(-1e6, 1e6), st.floats(1e-3, 1e6), units, st.booleans())
def test_float_samples_stay_in_bounds_and_validate(lo: float, width: float, u: float, log: bool) -> None:
    if log:
        lo = abs(lo) + 1e-3
    axis = Float(lo, lo + width, log=log)
    assert axis.problems() == []
    v = axis.from_unit(u)
    assert lo <= v <= lo + width
    assert axis.validate(v) is None
    assert axis.from_unit(u) == v  # deterministic


@given(st.integers(-1000, 1000), st.integers(0, 1000), units)
def test_int_samples_stay_in_bounds(lo: int, width: int, u: float) -> None:
    axis = Int(lo, lo + width)
    v = axis.from_unit(u)
    assert isinstance(v, int) and lo <= v <= lo + width and axis.validate(v) is None


@given(st.lists(st.text(max_size=4), min_size=1, max_size=8, unique=True), units)
def test_choice_samples_are_choices(values: list[str], u: float) -> None:
    axis = Choice(values)
    assert axis.validate(axis.from_unit(u)) is None


def test_axis_validation_and_schema() -> None:
    assert Float(0, 1).validate(1.5) is not None
    assert Float(0, 1).validate(True) is not None
    assert Float(0, 1).validate(math.nan) is not None
    assert Int(1, 4).validate(2.0) is not None
    assert Choice(["a", 1]).validate("1") is not None
    assert Bool().validate(1) is not None and Bool().validate(True) is None
    assert Seed().json_schema() == {"type": "integer", "minimum": 0, "maximum": 2**31 - 1}
    assert Float(0.5, 5.0, log=True).json_schema() == {"type": "number", "minimum": 0.5, "maximum": 5.0}
    assert Choice(["x", "y"]).json_schema() == {"enum": ["x", "y"]}


def _declare(**overrides):  # type: ignore[no-untyped-def]
    kwargs = dict(name="demo", version="1.0.0", title="Demo", domain="testing", toolkit=[],
                  description="A number is derived from x.",
                  axes={"x": Float(0.0, 1.0, doc="the input"), "seed": Seed(doc="unused seed")},
                  outputs={"y": Number(abs=1e-6, doc="the derived number")})
    kwargs.update(overrides)

    def demo(params, evidence):  # type: ignore[no-untyped-def]
        """Doubles x."""
        return {"y": 2 * params["x"]}

    return oracle(**kwargs)(demo)


def test_decorated_function_stays_callable(tmp_path: Path) -> None:
    o = _declare()
    assert o({"x": 0.25, "seed": 1}, tmp_path) == {"y": 0.5}
    with pytest.raises(OracleRunError, match=r"parameter x=2.0: 2.0 is outside \[0.0, 1.0\]"):
        o({"x": 2.0, "seed": 1}, tmp_path)


@pytest.mark.parametrize("overrides,pattern", [
    ({"axes": {"x": Float(5.0, 1.0)}}, r"axis 'x' = Float: lo=5.0 is not below hi=1.0.*\n  fix: write Float\(1.0, 5.0\)"),
    ({"axes": {"x": Float(-1.0, 1.0, log=True)}}, r"axis 'x' = Float: log=True needs lo > 0"),
    ({"axes": {"x": Int(3, 1)}}, r"axis 'x' = Int: lo=3 is above hi=1"),
    ({"axes": {"x": Choice([])}}, r"axis 'x' = Choice: choices must be a non-empty list"),
    ({"axes": {"x": Choice(["a", "a"])}}, r"choice 'a' appears twice"),
    ({"axes": {"x": (0, 1)}}, r"axis 'x' = \(0, 1\) is not an axis kind"),
    ({"axes": {"Bad-Name": Seed()}}, r"axis name 'Bad-Name' is not an identifier"),
    ({"outputs": {"y": "number"}}, r"output 'y' = 'number' is not an output kind"),
    ({"outputs": {"y": Number()}}, r"output 'y' = Number: Number\(\) with abs=0 and rel=0"),
    ({"outputs": {"y": Integer(tol=-1)}}, r"output 'y' = Integer: tol must be an integer >= 0, got -1"),
    ({"name": "Bad Name"}, r"name='Bad Name' is not a valid task id"),
    ({"version": "one"}, r"version='one' is not a version"),
    ({"toolkit": "numpy"}, r"toolkit='numpy' must be a list"),
    ({"reference": "missing.py"}, r"reference='missing.py' does not exist"),
    ({"evidence": {"oracle_output.json": "x"}}, r"evidence file name 'oracle_output.json' is not allowed"),
    ({"inputs": lambda p, d: None, "input_docs": {"a": "a file"}},
     r"has the wrong signature.*\n  fix: define it as def demo\(params, evidence, inputs\)"),
    # The public half of the declaration is required, and each error says what to write.
    ({"description": None}, r"description=None: the declaration has no public description.*\n  fix: add description="),
    ({"description": "   "}, r"description='   ': the declaration has no public description"),
    ({"axes": {"x": Float(0.0, 1.0)}}, r"axis 'x' = Float has no doc=.*\n  fix: write what the parameter means and its unit"),
    ({"axes": {"x": Float(0.0, 1.0, doc="x"), "seed": Seed()}}, r"axis 'seed' = Seed has no doc="),
    ({"outputs": {"y": Number(abs=1e-6)}}, r"output 'y' = Number has no doc=.*\n  fix: write what the value means"),
    ({"outputs": {"y": Exact(doc="")}}, r"output 'y' = Exact has no doc="),
    ({"inputs": lambda p, d: None}, r"inputs= is given without input_docs=.*\n  fix: describe every input file by its name"),
    ({"input_docs": {"source": "a scan"}}, r"input_docs=.* describes inputs, but the oracle declares no inputs="),
    ({"inputs": lambda p, d: None, "input_docs": {"source.las": "a scan"}}, r"input_docs key 'source.las' is not an input name"),
    ({"inputs": lambda p, d: None, "input_docs": {"source": ""}}, r"input 'source' has no description in input_docs"),
    ({"evidence": {"cloud.las": " "}}, r"evidence 'cloud.las' has no description"),
    ({"stages": "voxel grid"}, r"stages='voxel grid' must be a list of stage names"),
    ({"baselines": "nowhere"}, r"baselines='nowhere' is not a folder"),
    ({"upstream": ["y"]}, r"upstream=\['y'\] must be a dict of output -> the outputs it is computed from"),
    ({"upstream": {"z": ["y"]}}, r"upstream names 'z', which is not an output"),
    ({"upstream": {"y": "y"}}, r"upstream\['y'\] = 'y' must be a list of output names"),
    ({"upstream": {"y": ["w"]}}, r"upstream\['y'\] names \['w'\], which are not outputs"),
    ({"upstream": {"y": ["y"]}}, r"upstream has a cycle through 'y'"),
    ({"same_rule": {"y": ["y"]}}, r"same_rule=\{'y': \['y'\]\} must be a list of groups of output names"),
    ({"same_rule": [["y"]]}, r"same_rule group \['y'\] must list two or more output names"),
    ({"same_rule": [["y", "w"]]}, r"same_rule group \['w', 'y'\] names \['w'\], which are not outputs"),
])
def test_broken_declarations_name_plugin_file_field_and_fix(overrides: dict, pattern: str) -> None:
    with pytest.raises(PluginError) as info:
        _declare(**overrides)
    message = str(info.value)
    assert message.startswith("oracle ")
    assert f"{__file__}:" in message  # names the plugin's file and line
    import re

    assert re.search(pattern, message, re.S), message


def test_upstream_is_closed_and_explains_only_beside_a_shown_failure() -> None:
    outs = {n: Number(abs=1e-6, doc=n) for n in ("a", "b", "c", "d")}
    o = _declare(outputs=outs, upstream={"c": ["b"], "b": ["a"]})
    assert o.upstream == {"c": frozenset({"a", "b"}), "b": frozenset({"a"})}
    assert o.explained("c", failing={"a", "c"}, shown={"a"})           # through b, transitively
    assert not o.explained("c", failing={"c", "d"}, shown={"a", "d"})   # d is not upstream of c
    assert not o.explained("c", failing={"a", "c"}, shown=set())        # a fails there, but never publicly
    assert not o.explained("a", failing={"a", "b"}, shown={"b"})        # downstream never explains upstream
    assert _declare().upstream == {}
    with pytest.raises(PluginError, match="cycle through"):
        _declare(outputs=outs, upstream={"a": ["c"], "c": ["b"], "b": ["a"]})


def test_same_rule_groups_are_one_behaviour_shown_by_either_field() -> None:
    outs = {n: Number(abs=1e-6, doc=n) for n in ("src_n", "tgt_n", "src_pts", "tgt_pts", "pose")}
    o = _declare(outputs=outs, same_rule=[["src_n", "tgt_n"], ["src_pts", "tgt_pts"]],
                 upstream={"src_pts": ["src_n"], "pose": ["src_pts"]})
    assert o.same_rule["src_n"] == o.same_rule["tgt_n"] == frozenset({"src_n", "tgt_n"})
    assert o.behaviour("tgt_n") == o.behaviour("src_n") == "src_n|tgt_n" and o.behaviour("pose") == "pose"
    assert o.behaviour_fields("src_n|tgt_n") == {"src_n", "tgt_n"} and o.behaviour_fields("pose") == {"pose"}
    assert o.shown_fields({"tgt_n", "pose"}) == {"src_n", "tgt_n", "pose"}
    # an upstream failure shown publicly on the other scan explains its consequence here
    assert o.explained("src_pts", failing={"src_n", "src_pts"}, shown={"tgt_n"})
    assert not o.explained("src_pts", failing={"src_pts"}, shown={"tgt_n"})
    assert _declare().same_rule == {}
    with pytest.raises(PluginError, match=r"same_rule puts \['src_n'\] in more than one group"):
        _declare(outputs=outs, same_rule=[["src_n", "tgt_n"], ["src_n", "pose"]])


def test_missing_docstring_is_refused() -> None:
    def nodoc(params, evidence):  # type: ignore[no-untyped-def]
        return {}

    with pytest.raises(PluginError, match=r"has no docstring\n  fix: write the recipe in the docstring"):
        oracle(name="nodoc", version="1.0.0", title="t", domain="d", toolkit=[], description="d",
               axes={"s": Seed(doc="s")}, outputs={"y": Exact(doc="y")})(nodoc)


def test_a_broken_bound_is_reported_before_a_missing_doc() -> None:
    # An old declaration (no docs) with a real mistake hears about the mistake first.
    with pytest.raises(PluginError, match=r"lo=5.0 is not below hi=1.0"):
        _declare(axes={"x": Float(5.0, 1.0)}, description=None)


def test_the_declaration_separates_public_from_private(tmp_path: Path) -> None:
    (tmp_path / "baselines" / "naive").mkdir(parents=True)
    (tmp_path / "baselines" / "naive" / "reconstruct.py").write_text("print('{}')\n")
    (tmp_path / "baselines" / "notes").mkdir()  # no reconstruct.py: not a baseline
    plugin = tmp_path / "sep.py"
    plugin.write_text(SEPARATED)
    reg = Registry()
    [o] = reg.load_plugin_file(plugin)
    assert o.description == "Says how far a point is from the origin."
    assert o.recipe.startswith("Euclidean norm, computed with math.hypot")
    assert o.stages == ("square", "sum", "root")
    assert [b.name for b in o.baselines] == ["naive"]
    assert o.baselines[0].program == (tmp_path / "baselines" / "naive" / "reconstruct.py").resolve()
    pub = o.public()
    assert pub["axes"]["x"]["doc"] == "abscissa, metres" and pub["outputs"]["r"]["doc"] == "distance, metres"
    assert pub["outputs"]["r"]["tolerance"] == "abs tol 1e-09"
    # Nothing of the recipe is in the public half; all of it is in the private one.
    public_text = json.dumps(pub)
    assert "hypot" not in public_text and "square" not in public_text
    assert o.describe()["private"] == {"recipe": o.recipe, "stages": ["square", "sum", "root"], "baselines": ["naive"]}
    # Narrowing an axis (a sweep spec) keeps its doc.
    assert o.axes["x"].narrow({"lo": 0.5}).doc == "abscissa, metres"


def test_show_prints_the_public_half_then_the_private_one(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from recon.cli import cli

    plugin = tmp_path / "sep.py"
    plugin.write_text(SEPARATED)
    res = CliRunner().invoke(cli, ["show", "sep_demo", "--plugin", str(plugin)])
    assert res.exit_code == 0, res.output
    public, private = res.output.split("== private: the recipe")
    assert "Says how far a point is from the origin." in public and "abscissa, metres" in public
    assert "distance, metres" in public and "hypot" not in public
    assert "Euclidean norm, computed with math.hypot" in private and "stages: square; sum; root" in private
    res = CliRunner().invoke(cli, ["show", "sep_demo", "--plugin", str(plugin), "--json"])
    doc = json.loads(res.output)
    assert doc["description"] == "Says how far a point is from the origin." and "hypot" in doc["private"]["recipe"]


def test_every_input_must_be_described(tmp_path: Path) -> None:
    def make(params, directory):  # type: ignore[no-untyped-def]
        (directory / "cloud.las").write_bytes(b"x")
        (directory / "extra.txt").write_text("y")

    def fn(params, evidence, inputs):  # type: ignore[no-untyped-def]
        """Recipe."""
        return {"y": 1.0}

    o = oracle(name="inp", version="1.0.0", title="t", domain="d", toolkit=[], description="d",
               axes={"s": Seed(doc="s")}, outputs={"y": Number(abs=1, doc="y")}, inputs=make,
               input_docs={"cloud": "a point cloud"})(fn)
    with pytest.raises(OracleRunError, match=r"input 'extra.txt' \(input name 'extra'\) is not described in input_docs"):
        o({"s": 1}, tmp_path / "ev")


def test_bad_outputs_are_refused_at_run_time(tmp_path: Path) -> None:
    import numpy as np

    def make(ret):  # type: ignore[no-untyped-def]
        def f(params, evidence):  # type: ignore[no-untyped-def]
            """Returns a fixed value."""
            return ret

        return oracle(name="fixed", version="1.0.0", title="t", domain="d", toolkit=[], description="d",
                      axes={"s": Seed(doc="s")}, outputs={"y": Number(abs=1, doc="y")})(f)

    with pytest.raises(OracleRunError, match=r"output y = nan: NaN and Infinity"):
        make({"y": math.nan})({"s": 1}, tmp_path)
    with pytest.raises(OracleRunError, match=r"is a int64, which is not a JSON value"):
        make({"y": np.int64(3)})({"s": 1}, tmp_path)
    with pytest.raises(OracleRunError, match=r"missing \['y'\], undeclared \['z'\]"):
        make({"z": 1.0})({"s": 1}, tmp_path)
    with pytest.raises(OracleRunError, match="does not match its declared kind"):
        make({"y": "1.0"})({"s": 1}, tmp_path)
    with pytest.raises(OracleRunError, match="returned a list"):
        make([1.0])({"s": 1}, tmp_path)


PLUGIN = '''
from recon import oracle, Float, Seed, Number

@oracle(name={name!r}, version="1.0.0", title="Demo", domain="testing", toolkit=[],
        description="A number derived from x.",
        axes={{"x": Float(0.0, 1.0, doc="the input"), "seed": Seed(doc="unused")}},
        outputs={{"y": Number(abs=1e-9, doc="the number")}})
def demo(params, evidence):
    """Doubles x."""
    return {{"y": 2 * params["x"]}}
'''

SEPARATED = '''
from recon import oracle, Float, Number

@oracle(name="sep_demo", version="1.0.0", title="Distance", domain="geometry", toolkit=[],
        description="Says how far a point is from the origin.",
        axes={"x": Float(-1.0, 1.0, doc="abscissa, metres"), "y": Float(-1.0, 1.0, doc="ordinate, metres")},
        outputs={"r": Number(abs=1e-9, doc="distance, metres")}, stages=["square", "sum", "root"])
def sep_demo(params, evidence):
    """Euclidean norm, computed with math.hypot: square both coordinates, sum, root."""
    import math
    return {"r": math.hypot(params["x"], params["y"])}
'''


def _plugin(tmp_path: Path, name: str, fname: str = "plug.py") -> Path:
    p = tmp_path / fname
    p.write_text(PLUGIN.format(name=name))
    return p


def test_registry_loads_plugin_files_and_refuses_duplicates(tmp_path: Path, registry: Registry) -> None:
    p = _plugin(tmp_path, "demo_x")
    [o] = registry.load_plugin_file(p)
    assert registry.get("demo_x") is o and registry.plugin_file("demo_x") == p.resolve()
    dup = _plugin(tmp_path, "demo_x", "other.py")
    with pytest.raises(DuplicateOracleError) as info:
        registry.load_plugin_file(dup)
    assert "plug.py" in str(info.value) and "other.py" in str(info.value)
    with pytest.raises(DuplicateOracleError, match=r"built-in recon.artifacts.lidar_icp.*plugin file"):
        registry.load_plugin_file(_plugin(tmp_path, "lidar_icp", "clash.py"))


def test_registry_reports_broken_plugin_files(tmp_path: Path, registry: Registry) -> None:
    bad = tmp_path / "syntax.py"
    bad.write_text("def broken(:\n")
    with pytest.raises(PluginError, match=r"syntax error at .*syntax.py:1"):
        registry.load_plugin_file(bad)
    boom = tmp_path / "boom.py"
    boom.write_text("raise RuntimeError('kaboom')\n")
    with pytest.raises(PluginError, match=r"failed to import: RuntimeError: kaboom"):
        registry.load_plugin_file(boom)
    empty = tmp_path / "empty.py"
    empty.write_text("x = 1\n")
    with pytest.raises(PluginError, match="defines no @oracle"):
        registry.load_plugin_file(empty)
    with pytest.raises(PluginError, match="does not exist"):
        registry.load_plugin_file(tmp_path / "nope.py")
    with pytest.raises(UnknownOracleError, match=r"no oracle named 'nope' \(known: .*lidar_icp"):
        registry.get("nope")


def test_registries_are_independent(tmp_path: Path) -> None:
    a, b = Registry(), Registry()
    a.load_plugin_file(_plugin(tmp_path, "only_in_a"))
    assert "only_in_a" in a and "only_in_b" not in b and "only_in_a" not in b
