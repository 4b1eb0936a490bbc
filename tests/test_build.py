"""`recon build`: layout, reproducibility, atomicity, leaks, instructions, harbor lint."""
from __future__ import annotations

import json
import os
import re
import shutil
import tarfile
import tomllib
from pathlib import Path
from typing import Any

import pytest

from recon import Registry, canonjson
from recon.build import _unrevealed_warning, build_task, generate_feedback_tool
from recon.errors import BuildError
from recon.fsutil import tree_digest
from recon.leaks import leak_audit
from recon.task import load_task


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_layout(lidar_task: Path) -> None:
    for rel in ("task.toml", "instruction.md", "environment/Dockerfile", "environment/app/observations/manifest.json",
                "environment/app/observations/reference_outputs.tar.gz", "environment/app/tools/feedback",
                "environment/app/workspace/README.md", "tests/Dockerfile", "tests/test.sh", "solution/solve.sh",
                "solution/reconstruct.py", "tests/grader.json", "tests/hidden/hidden_1/oracle_output.json"):
        assert (lidar_task / rel).is_file(), rel
    assert not (lidar_task / "environment/app/workspace/reconstruct.py").exists()
    assert os.access(lidar_task / "environment/app/tools/feedback", os.X_OK)
    assert (lidar_task / "tests").stat().st_mode & 0o077 == 0  # owner-only
    # solution/ is copied into the agent's container by Harbor and solve.sh runs as the
    # agent user there: readable, solve.sh executable.
    assert (lidar_task / "solution").stat().st_mode & 0o777 == 0o755
    assert os.access(lidar_task / "solution/solve.sh", os.X_OK)
    conf = tomllib.loads((lidar_task / "task.toml").read_text())
    # the workspace for the verifier, and the checkpoint sidecar's snapshots (30 min by default)
    assert conf["schema_version"] == "1.4" and conf["artifacts"] == [
        "/app/workspace", {"source": "/checkpoints", "service": "checkpoints"}]
    assert conf["metadata"]["checkpoint_every"] == 1800.0
    compose = (lidar_task / "environment/docker-compose.yaml").read_text()
    # both services stop when Harbor stops them, not after the grace period: an init is PID 1
    services = re.findall(r"^  (\w+):\n((?:    .*\n)+)", compose, re.M)
    assert [(name, "    init: true\n" in body) for name, body in services] == [("main", True), ("checkpoints", True)]
    assert {p.name for p in (lidar_task / "environment/checkpointer").iterdir()} == {"Dockerfile", "snap.py"}
    assert conf["task"]["name"] == "recon/lidar_icp"
    assert conf["agent"]["user"] not in ("root", 0) and conf["agent"]["timeout_sec"] == 10800.0
    assert conf["environment"]["network_mode"] == "no-network"
    assert conf["verifier"]["environment_mode"] == "separate"
    assert conf["metadata"]["n_public"] == 8 and conf["metadata"]["n_hidden"] == 4  # tests/conftest.py: SMALL_BUILD
    for dockerfile in ("environment/Dockerfile", "tests/Dockerfile"):
        text = (lidar_task / dockerfile).read_text()
        installs = [w for ln in text.splitlines() if "pip install" in ln for w in ln.split() if w[0].isalpha() and "==" in w]
        assert installs and all("==" in w for w in installs)
    with tarfile.open(lidar_task / "environment/app/observations/reference_outputs.tar.gz") as tar:
        names = set(tar.getnames())
        assert {"public_1/scenario.json", "public_1/oracle_output.json", "public_1/signature.json",
                "public_6/inputs/source.las"} <= names
        # the default level (outputs): no summary, no trace
        assert "public_1/stages.json" not in names and "public_1/source_downsampled.las" not in names
        assert all(m.mtime == 946684800 and m.uid == 0 and m.uname == "" for m in tar.getmembers())


def test_every_file_mode_is_what_harbor_needs(lidar_task: Path) -> None:
    """environment/ is a docker build context (its modes go into the agent's image);
    Harbor copies solution/ into the agent's container WITH its modes and runs solve.sh as
    the non-root agent user; tests/ becomes the root verifier image and holds hidden data."""
    seen = 0
    for p in sorted(lidar_task.rglob("*")):
        rel = p.relative_to(lidar_task).as_posix()
        mode = p.stat().st_mode & 0o7777
        seen += 1
        assert mode & 0o022 == 0, f"{rel} is writable by group or others ({mode:o})"
        assert mode & 0o7000 == 0, f"{rel} has setuid/setgid/sticky bits ({mode:o})"
        top = rel.split("/")[0]
        if top == "tests":
            assert mode & 0o077 == 0 or p.is_file(), f"{rel}: hidden data must be owner-only ({mode:o})"
            if p.is_dir():
                assert mode == 0o700, rel
        elif p.is_dir():
            assert mode == 0o755, f"{rel}: the agent user must traverse it ({mode:o})"
        else:
            assert mode & 0o444 == 0o444, f"{rel}: the agent user must read it ({mode:o})"
            executable = rel in ("solution/solve.sh", "environment/app/tools/feedback")
            assert bool(mode & 0o111) == executable, f"{rel} ({mode:o})"
    assert (lidar_task / "tests").stat().st_mode & 0o777 == 0o700
    assert os.access(lidar_task / "tests/test.sh", os.X_OK)
    assert seen > 40


def test_signatures_tie_scenario_and_output(lidar_task: Path, tmp_path: Path) -> None:
    with tarfile.open(lidar_task / "environment/app/observations/reference_outputs.tar.gz") as tar:
        tar.extractall(tmp_path, filter="data")
    sig = canonjson.read(tmp_path / "public_2/signature.json")
    assert sig["scenario_sha256"] == canonjson.sha256_of(canonjson.read(tmp_path / "public_2/scenario.json"))
    assert sig["output_sha256"] == canonjson.sha256_of(canonjson.read(tmp_path / "public_2/oracle_output.json"))
    assert sig["oracle"] == "lidar_icp" and sig["oracle_version"] == "3.0.0"


def test_builds_are_byte_identical_and_seed_changes_both_sets(tmp_path: Path, registry: Registry, lidar_task: Path,
                                                               small_build: dict[str, Any]) -> None:
    again = build_task(registry, "lidar_icp", tmp_path / "again", workers=1, **small_build).path
    assert _files(again) == _files(lidar_task)
    assert tree_digest(again) == tree_digest(lidar_task)
    other = build_task(registry, "lidar_icp", tmp_path / "other", seed=1, n_public=2, n_hidden=2, select="random").path
    t0, t1 = load_task(lidar_task), load_task(other)
    assert {json.dumps(s.parameters, sort_keys=True) for s in t0.hidden()}.isdisjoint(
        json.dumps(s.parameters, sort_keys=True) for s in t1.hidden())
    assert {json.dumps(s.parameters, sort_keys=True) for s in t0.public()}.isdisjoint(
        json.dumps(s.parameters, sort_keys=True) for s in t1.public())


def test_failed_build_leaves_nothing_and_names_the_scenario(tmp_path: Path) -> None:
    plugin = tmp_path / "flaky.py"
    (tmp_path / "ref.py").write_text("print('{}')\n")
    plugin.write_text('''
from recon import oracle, Float, Number

@oracle(name="flaky", version="1.0.0", title="t", domain="d", toolkit=[], reference="ref.py",
        description="Echoes x.", axes={"x": Float(0.0, 1.0, doc="a number")},
        outputs={"y": Number(abs=1, doc="x again")})
def flaky(params, evidence):
    """Fails on large x."""
    if params["x"] > 0.5:
        raise ValueError("x too large for this oracle")
    return {"y": params["x"]}
''')
    reg = Registry()
    reg.load_plugin_file(plugin)
    out = tmp_path / "tasks"
    with pytest.raises(BuildError, match=r"scenario public_\d \(parameters \{\"x\":0\.[5-9].*ValueError: x too large"):
        build_task(reg, "flaky", out)
    assert not (out / "flaky").exists()
    assert [p.name for p in out.iterdir()] == []  # no temporary sibling left either


def test_no_hidden_value_or_oracle_source_on_the_agent_side(lidar_task: Path, session_registry: Registry) -> None:
    o = session_registry.get("lidar_icp")
    task = load_task(lidar_task)
    assert leak_audit(task, o) == []


def test_leak_audit_catches_a_planted_leak(lidar_task: Path, tmp_path: Path, session_registry: Registry) -> None:
    copy = tmp_path / "leaky"
    shutil.copytree(lidar_task, copy)
    task = load_task(copy)
    hidden = task.hidden()[0]
    (copy / "environment/app/workspace/notes.txt").write_text(json.dumps(hidden.parameters))
    shutil.copyfile(copy / "solution/reconstruct.py", copy / "environment/app/tools/helper.py")
    o = session_registry.get("lidar_icp")
    findings = leak_audit(task, o)
    assert any("hidden parameter hidden_1" in f for f in findings), findings
    assert any("copy of solution/reconstruct.py" in f for f in findings), findings
    assert any("lines of the oracle's source" in f for f in findings), findings


def test_instruction_names_every_field_and_tolerance_and_no_hidden_value(lidar_task: Path,
                                                                       session_registry: Registry) -> None:
    text = (lidar_task / "instruction.md").read_text()
    manifest = canonjson.read(lidar_task / "environment/app/observations/manifest.json")
    o = session_registry.get("lidar_icp")
    # Behaviour only: the description, each axis and output with its meaning, each input.
    assert " ".join(o.description.split()) in " ".join(text.split())
    assert manifest["description"] == o.description and "Recipe" not in text
    for name, out in manifest["outputs"].items():
        assert f"`{name}`" in text and out["tolerance"] in text and out["doc"] == o.outputs[name].doc
        assert f"| {out['doc']} | {out['tolerance']} |" in text
    for name, axis in manifest["axes"].items():
        assert f"`{name}`" in text and axis["doc"] == o.axes[name].doc and axis["doc"] in text
    for name, doc in o.input_docs.items():
        assert f"| `{name}` | {doc} |" in text
    for needle in ("/app/workspace/reconstruct.py", "/app/tools/feedback", "hidden", "(k + f) / 6", "laspy"):
        assert needle in text
    for sd in load_task(lidar_task).hidden():
        for v in sd.parameters.values():
            if isinstance(v, float) and len(repr(v)) > 5:
                assert repr(v) not in text


def test_feedback_tool_is_generated_from_compare_and_stdlib_only() -> None:
    import ast
    import sys

    from recon import compare

    tool = generate_feedback_tool()
    assert tool.startswith("#!/usr/bin/env -S python3 -S\n")
    src = Path(compare.__file__).read_text()
    body = src.split('"""', 2)[2]
    for line in body.splitlines():
        if line.strip() and line.strip() != "from __future__ import annotations":
            assert line in tool
    tree = ast.parse(tool)
    mods = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    mods |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert "recon" not in mods
    assert mods - {"rdkit"} <= set(sys.stdlib_module_names) | {"__future__"}


def test_plugin_file_task_grades_without_the_plugin(tmp_path: Path) -> None:
    from recon.grader import grade

    src = tmp_path / "plugin"
    src.mkdir()
    (src / "sq.py").write_text('''
from recon import oracle, Float, Number

@oracle(name="square_demo", version="1.0.0", title="Square", domain="arithmetic", toolkit=[],
        reference="sq_reference.py", description="A number derived from x.",
        axes={"x": Float(-3.0, 3.0, doc="the input")}, outputs={"y": Number(abs=1e-9, doc="the number")})
def square_demo(params, evidence):
    """Squares x."""
    return {"y": params["x"] ** 2}
''')
    (src / "sq_reference.py").write_text("import json, sys\nx = json.load(sys.stdin)['parameters']['x']\n"
                                         "print(json.dumps({'y': x ** 2}))\n")
    reg = Registry()
    reg.load_plugin_file(src / "sq.py")
    task = build_task(reg, "square_demo", tmp_path / "tasks").path
    assert (task / "tests/vendor/plugins/sq.py").is_file() and (task / "tests/vendor/plugins/sq_reference.py").is_file()
    shutil.rmtree(src)  # the verifier has only what the task carries
    app = tmp_path / "app"
    shutil.copytree(task / "environment/app", app)
    shutil.copyfile(task / "solution/reconstruct.py", app / "workspace/reconstruct.py")
    g = grade(task, app / "workspace", runtime="local", nonce="vendored")
    assert g["reward"] == 1.0, g["rungs"]


def test_the_build_warning_names_unrevealed_failures_and_runs_left_undone() -> None:
    only_undone = _unrevealed_warning({"unrevealed": [], "program_runs_not_made": 11})
    assert "show every failure found" in only_undone and "11 of their runs" in only_undone
    assert "do not show" not in only_undone
    both = _unrevealed_warning({"unrevealed": ["p: a", "p: b"], "program_runs_not_made": 3,
                                "unrevealed_seen": {"p: a": {"publishable": 0}, "p: b": {"publishable": 2}}})
    assert both.startswith("warning: the published scenarios do not show 2 failure(s)")
    assert "p: a (seen only on graded scenarios), p: b" in both and "3 of their runs" in both
    crowded = _unrevealed_warning({"unrevealed": ["p: b"], "unrevealed_seen": {"p: b": {"publishable": 2}}})
    assert "public slots ran out" in crowded and "--public N" in crowded and "undone" not in crowded
    beside = _unrevealed_warning({"unrevealed": [], "consequences_unshown": ["trial 9: converged"]})
    assert beside.startswith("warning: no published scenario shows trial 9: converged failing")
    assert "hidden-only" in beside and "\n" not in beside
    with_undone = _unrevealed_warning({"unrevealed": [], "consequences_unshown": ["q: c"], "program_runs_not_made": 5})
    assert with_undone.splitlines()[1].startswith("warning: the published scenarios show every failure")


def test_the_progress_counts_the_scenarios_a_cover_adds(tmp_path: Path) -> None:
    """A build announces ``n_public + n_hidden`` scenarios; a cover publishes more, and the
    build says how many (``more``) before it runs them, so a progress bar ends full."""
    plugin = tmp_path / "letters.py"
    (tmp_path / "ref.py").write_text("print('{}')\n")
    plugin.write_text('''
from recon import oracle, Choice, Float, Number

@oracle(name="letters", version="1.0.0", title="t", domain="d", toolkit=[], reference="ref.py",
        description="Counts letters.", axes={"c": Choice(["a", "b", "c", "d"], doc="a letter"),
                                            "k": Choice([1, 2, 3], doc="a count"),
                                            "x": Float(0.0, 1.0, doc="a number")},
        outputs={"n": Number(abs=0.5, doc="the count")})
def letters(params, evidence):
    """Repeats a letter."""
    return {"n": params["k"]}
''')
    spec = tmp_path / "letters.toml"
    spec.write_text('n_public = 2\nn_hidden = 1\nselect = "random"\ncover = [["c", "k"]]\n')
    reg = Registry()
    reg.load_plugin_file(plugin)
    done: list[int] = []
    added: list[int] = []
    res = build_task(reg, "letters", tmp_path / "tasks", spec_path=spec, progress=done.append, more=added.append)
    published = len(load_task(res.path).meta["public"])
    assert 12 <= published <= 14   # every (letter, count) pair, on top of the two chosen
    assert added == [published - 2] and sum(done) == published + 1 == 2 + 1 + sum(added)
    # without a cover nothing is added, and nothing is said
    spec.write_text('n_public = 2\nn_hidden = 1\nselect = "random"\n')
    added.clear()
    build_task(reg, "letters", tmp_path / "again", spec_path=spec, more=added.append)
    assert added == []
