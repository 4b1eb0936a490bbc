"""The leak audit (recon.leaks): the recipe stays off the agent's side, hidden values are
found by value whatever their spelling, and what recon publishes is never a finding."""
from __future__ import annotations

import io
import json
import shutil
import tarfile
import textwrap
from pathlib import Path

import pytest

from recon import Registry
from recon.build import build_task
from recon.leaks import audit, leak_audit, recipe_sentences, sentences, significant_digits
from recon.task import load_task

EDGE_PLUGIN = '''
from pathlib import Path
from recon import oracle, Float, Number, Seed

@oracle(name="edge_demo", version="1.0.0", title="Compounded number", domain="testing", toolkit=[],
        reference="edge_ref.py",
        description="A number is derived from x and a small rate over three periods of time.",
        axes={"rate": Float(1e-06, 0.01, log=True, doc="a small rate, per period"),
              "x": Float(0.0, 1.0, doc="the starting number"),
              "seed": Seed(doc="a label of the scenario")},
        outputs={"y": Number(rel=1e-9, doc="the derived number")},
        evidence={"note.txt": "a note on the scenario, in words"},
        stages=["compound", "round"])
def edge_demo(params, evidence):
    """A number is derived from x and a small rate over three periods of time.

    The number is x times one plus the rate, compounded over exactly three periods.
    The seed never changes the number: it only labels the scenario for the note.
    Short note.
    """
    (Path(evidence) / "note.txt").write_text("x grows a little.\\n")
    y = params["x"] * (1 + params["rate"]) ** 3
    return {"y": float(f"{y:.12g}")}
'''

EDGE_REFERENCE = '''"""Reference for edge_demo: compounds the rate over three whole periods of one second each."""
import json
import sys

# The compounding uses an integer power, so that no rounding creeps in between the periods.
p = json.load(sys.stdin)["parameters"]
y = p["x"] * (1 + p["rate"]) ** 3
print(json.dumps({"y": float(f"{y:.12g}")}))
'''


@pytest.fixture(scope="module")
def edge(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Registry]:
    """A task whose hidden set holds the axis's own lower bound, 1e-06 (found by trying
    sweep seeds: hidden scenarios favour axis edges)."""
    root = tmp_path_factory.mktemp("edge")
    (root / "edge_demo.py").write_text(EDGE_PLUGIN)
    (root / "edge_ref.py").write_text(EDGE_REFERENCE)
    reg = Registry()
    reg.load_plugin_file(root / "edge_demo.py")
    for seed in range(40):
        task = build_task(reg, "edge_demo", root / f"tasks{seed}", seed=seed, n_public=4, n_hidden=6).path
        if any(sd.parameters["rate"] == 1e-06 for sd in load_task(task).hidden()):
            return task, reg
    raise AssertionError("no sweep seed put the axis edge 1e-06 into the hidden set")


def _copy(task: Path, tmp_path: Path) -> Path:
    dest = tmp_path / "copy"
    shutil.copytree(task, dest)
    return dest


def _append_to_member(task: Path, member: str, text: str) -> None:
    """Rewrite the published archive with ``text`` appended to ``member``."""
    archive = task / "environment/app/observations/reference_outputs.tar.gz"
    with tarfile.open(archive) as tar:
        items = [(m, tar.extractfile(m).read() if m.isfile() else None) for m in tar.getmembers()]  # type: ignore[union-attr]
    with tarfile.open(archive, "w:gz") as tar:
        for m, data in items:
            if m.name == member and data is not None:
                data += text.encode()
                m.size = len(data)
            tar.addfile(m, io.BytesIO(data) if data is not None else None)


def test_sentences_and_significant_digits() -> None:
    text = ("Both clouds are voxel down-sampled with cubic voxels. Short one.\n"
            "- a list item that is long enough to count as a sentence\n"
            "1. Each occupied voxel becomes one point, the mean of its points")
    assert sentences(text) == ["Both clouds are voxel down-sampled with cubic voxels",
                               "a list item that is long enough to count as a sentence",
                               "Each occupied voxel becomes one point, the mean of its points"]
    assert [significant_digits(t) for t in ("1e-06", "0.0001", "1.0e-6", "123.450", "-0.012340", "120000")] == \
        [1, 1, 1, 5, 4, 2]


def test_the_bound_value_false_positive_is_gone(edge: tuple[Path, Registry]) -> None:
    task_dir, reg = edge
    task = load_task(task_dir)
    # What made the string-based audit report a leak: a hidden parameter equal to the
    # axis's own bound, spelled "1e-06" in the published manifest (and now in the
    # instruction's parameter table too). Bounds and edges are public by construction.
    assert any(sd.parameters["rate"] == 1e-06 for sd in task.hidden())
    assert '"lo": 1e-06' in (task_dir / "environment/app/observations/manifest.json").read_text()
    assert "[1e-06, 0.01]" in (task_dir / "instruction.md").read_text()
    assert audit(task, reg.get("edge_demo")) == []


def test_hidden_values_are_found_by_value_not_spelling(edge: tuple[Path, Registry], tmp_path: Path) -> None:
    task_dir, reg = edge
    copy = _copy(task_dir, tmp_path)
    task = load_task(copy)
    o = reg.get("edge_demo")
    public = {v for s in task.public() for v in [*s.parameters.values(), *s.truth.values()]}

    def distinctive(v: object) -> bool:
        return isinstance(v, float) and significant_digits(repr(v)) >= 6 and v not in public

    sd, name, value = next((s, k, v) for s in task.hidden() for k, v in sorted(s.parameters.items())
                           if k != "seed" and distinctive(v))
    out = next(s for s in task.hidden() if distinctive(s.truth["y"]))
    y = out.truth["y"]
    notes = copy / "environment/app/workspace/notes.txt"
    # A parameter written another way than JSON would (a leak), an output to 10 digits (a
    # leak), and the same output to 4 digits (what evidence may print: not a leak).
    notes.write_text(f"{name} = {value:.8e}\ny ~ {y:.10g}\ny rounded {y:.4g}\n")
    findings = audit(task, o)
    by_value = {f.value.split(" (written")[0]: f for f in findings}
    assert set(by_value) == {f"hidden parameter {sd.id}.{name} = {json.dumps(value)}",
                             f"hidden output {out.id}.y = {json.dumps(y)}"}, findings
    assert all(f.file == "environment/app/workspace/notes.txt" and f.kind == "hidden-value" for f in findings)
    # A hidden seed is distinctive; once written anywhere the agent can read, it is a leak.
    seeds = [s for s in task.hidden() if s.parameters["seed"] >= 100000
             and s.parameters["seed"] not in public and significant_digits(str(s.parameters["seed"])) >= 5]
    notes.write_text(f"seed {seeds[0].parameters['seed']}\n")
    [f] = audit(task, o)
    assert f.value.startswith(f"hidden parameter {seeds[0].id}.seed = {seeds[0].parameters['seed']}")


def test_a_finding_says_file_value_why_and_fix(edge: tuple[Path, Registry], tmp_path: Path) -> None:
    task_dir, reg = edge
    copy = _copy(task_dir, tmp_path)
    task = load_task(copy)
    sd = max(task.hidden(), key=lambda s: significant_digits(repr(s.truth["y"])))
    (copy / "environment/app/observations/extra.json").write_text(json.dumps({"y": sd.truth["y"]}))
    [f] = audit(task, reg.get("edge_demo"))
    assert f.kind == "hidden-value" and f.file == "environment/app/observations/extra.json"
    assert str(sd.truth["y"]) in f.value and "hidden scenario" in f.why and "public scenario only" in f.fix
    assert str(f) == f"{f.file}: {f.value} -- {f.why}; fix: {f.fix}"
    assert leak_audit(task, reg.get("edge_demo")) == [str(f)]


def test_recipe_sentences_come_from_the_docstring_and_the_reference(edge: tuple[Path, Registry]) -> None:
    o = edge[1].get("edge_demo")
    found = {r.text: r.source for r in recipe_sentences(o)}
    assert found["The number is x times one plus the rate, compounded over exactly three periods"].startswith(
        "the oracle's docstring (")
    assert found["The seed never changes the number"].startswith("the oracle's docstring (")
    assert found["compounds the rate over three whole periods of one second each"] == "edge_ref.py module docstring"
    assert found["The compounding uses an integer power, so that no rounding creeps in between the periods"] == \
        "edge_ref.py comment, line 5"
    # Published on purpose in description=: public, so not a recipe sentence to hide.
    assert "A number is derived from x and a small rate over three periods of time" not in found
    assert "Short note" not in found


def test_a_fragment_made_of_public_names_is_no_recipe_sentence(tmp_path: Path) -> None:
    """A recipe line split at its colon can leave only output names, which the workspace
    README lists anyway: not a leak. A real rule beside them still is."""
    plugin = tmp_path / "names_demo.py"
    plugin.write_text(textwrap.dedent('''
        from recon import oracle, Float, Number

        @oracle(name="names_demo", version="1.0.0", title="Names", domain="testing", toolkit=[],
                description="Two seasonal numbers from one parameter.",
                axes={"x": Float(0.0, 1.0, doc="the parameter")},
                outputs={"coarse_seasonal_means_c": Number(abs=0.1, doc="a mean"),
                         "coarse_trend_c_per_decade": Number(abs=0.1, doc="a trend")})
        def names_demo(params, evidence):
            """The regridded block gives: coarse_seasonal_means_c, coarse_trend_c_per_decade.

            The trend is the least-squares slope of the day-weighted annual means per decade.
            """
            return {"coarse_seasonal_means_c": 0.0, "coarse_trend_c_per_decade": 0.0}
    '''))
    reg = Registry()
    reg.load_plugin_file(plugin)
    texts = [r.text for r in recipe_sentences(reg.get("names_demo"))]
    assert "coarse_seasonal_means_c, coarse_trend_c_per_decade" not in texts
    assert "The trend is the least-squares slope of the day-weighted annual means per decade" in texts


def test_a_recipe_sentence_in_evidence_or_instruction_fails_the_audit(edge: tuple[Path, Registry],
                                                                      tmp_path: Path) -> None:
    task_dir, reg = edge
    o = reg.get("edge_demo")
    copy = _copy(task_dir, tmp_path)
    task = load_task(copy)
    # Planted into an evidence file inside the published archive, re-wrapped and
    # upper-cased: normalised matching still finds it.
    _append_to_member(copy, "public_1/note.txt",
                      "THE NUMBER IS X TIMES ONE PLUS THE RATE,\n   compounded over exactly three periods.\n")
    [f] = audit(task, o)
    assert f.kind == "recipe"
    assert f.file == "environment/app/observations/reference_outputs.tar.gz!public_1/note.txt"
    assert "compounded over exactly three periods" in f.value and "the oracle's docstring" in f.why
    assert "--disclose recipe" in f.fix
    # A comment of the reference is recipe too; in instruction.md it is found there.
    instruction = copy / "instruction.md"
    instruction.write_text(instruction.read_text() + "\nThe compounding uses an integer power, so that no "
                                                      "rounding creeps in between the periods.\n")
    findings = audit(task, o)
    [g] = [x for x in findings if x.file == "instruction.md"]
    assert "edge_ref.py comment, line 5" in g.why
    # A sentence the declaration publishes on purpose, or a short one, is no finding.
    shutil.rmtree(copy)
    copy = _copy(task_dir, tmp_path)
    (copy / "environment/app/workspace/notes.txt").write_text(
        "A number is derived from x and a small rate over three periods of time. Short note.\n")
    assert audit(load_task(copy), o) == []


def test_a_default_builtin_build_carries_no_recipe_sentence(lidar_task: Path, session_registry: Registry) -> None:
    o = session_registry.get("lidar_icp")
    recipe = recipe_sentences(o)
    assert len(recipe) > 20
    instruction = " ".join((lidar_task / "instruction.md").read_text().replace("`", "").split()).casefold()
    assert [r.text for r in recipe if r.key in instruction] == []
    assert audit(load_task(lidar_task), o) == []


def test_source_and_solution_copies_are_still_found(lidar_task: Path, session_registry: Registry,
                                                   tmp_path: Path) -> None:
    copy = _copy(lidar_task, tmp_path)
    shutil.copyfile(copy / "solution/reconstruct.py", copy / "environment/app/tools/helper.py")
    (copy / "environment/app/grader.json").write_text("{}")
    kinds = {(f.kind, f.file) for f in audit(load_task(copy), session_registry.get("lidar_icp"))}
    assert ("solution", "environment/app/tools/helper.py") in kinds
    assert ("source", "environment/app/tools/helper.py") in kinds
    assert ("verifier-file", "environment/app/grader.json") in kinds
    # The reference's docstring is recipe as well: the copy carries it.
    assert ("recipe", "environment/app/tools/helper.py") in kinds
