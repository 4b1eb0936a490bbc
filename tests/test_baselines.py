"""Baselines: discovered beside the oracle's module, graded on a built task like any
submission, one row (name, R, rung) each."""
from __future__ import annotations

from pathlib import Path

import pytest

from recon import Registry
from recon.audit import BaselineRow, grade_baselines
from recon.baselines import discover
from recon.build import build_task
from recon.errors import PluginError
from recon.task import load_task

PLUGIN = '''
from recon import oracle, Float, Number

@oracle(name="cube_demo", version="1.0.0", title="Cube", domain="arithmetic", toolkit=[],
        reference="cube_ref.py", description="A number derived from x.",
        axes={"x": Float(-2.0, 2.0, doc="the input")}, outputs={"y": Number(rel=1e-9, doc="the number")}EXTRA)
def cube_demo(params, evidence):
    """The cube of x."""
    return {"y": params["x"] ** 3}
'''
REFERENCE = "import json, sys\nx = json.load(sys.stdin)['parameters']['x']\nprint(json.dumps({'y': x ** 3}))\n"
# A baseline may keep helper modules next to its reconstruct.py: the whole folder is its workspace.
HELPER = "def power(x):\n    return x ** 3\n"
RIGHT = "import json, sys\nfrom helper import power\nx = json.load(sys.stdin)['parameters']['x']\n" \
        "print(json.dumps({'y': power(x)}))\n"
WRONG = "import json, sys\nx = json.load(sys.stdin)['parameters']['x']\nprint(json.dumps({'y': x ** 3 + 0.01 * x}))\n"


def _plugin(root: Path, *, extra: str = "", folder: str = "baselines") -> Registry:
    root.mkdir(parents=True, exist_ok=True)
    (root / "cube.py").write_text(PLUGIN.replace("EXTRA", extra))
    (root / "cube_ref.py").write_text(REFERENCE)
    for name, files in {"textbook": {"reconstruct.py": RIGHT, "helper.py": HELPER},
                        "nearly": {"reconstruct.py": WRONG}}.items():
        (root / folder / name).mkdir(parents=True, exist_ok=True)
        for fname, text in files.items():
            (root / folder / name / fname).write_text(text)
    (root / folder / "drafts").mkdir(exist_ok=True)  # no reconstruct.py: not a baseline
    reg = Registry()
    reg.load_plugin_file(root / "cube.py")
    return reg


def test_baselines_are_discovered_beside_the_module(tmp_path: Path) -> None:
    o = _plugin(tmp_path / "a").get("cube_demo")
    assert [b.name for b in o.baselines] == ["nearly", "textbook"]
    assert o.baselines[1].program == (tmp_path / "a" / "baselines" / "textbook" / "reconstruct.py").resolve()
    assert discover(tmp_path / "missing") == ()
    # baselines= names another folder, relative to the module.
    o = _plugin(tmp_path / "b", extra=', baselines="yardsticks"', folder="yardsticks").get("cube_demo")
    assert [b.name for b in o.baselines] == ["nearly", "textbook"]
    with pytest.raises(PluginError, match=r"baselines='nowhere' is not a folder"):
        _plugin(tmp_path / "c", extra=', baselines="nowhere"')


def test_baselines_are_graded_on_the_built_task(tmp_path: Path) -> None:
    reg = _plugin(tmp_path / "plugin")
    task = build_task(reg, "cube_demo", tmp_path / "tasks", n_public=4, n_hidden=3).path
    seen: list[BaselineRow] = []
    rows = grade_baselines(load_task(task), reg.get("cube_demo"), runtime="local", report=seen.append)
    assert [r.name for r in rows] == ["nearly", "textbook"] and seen == rows
    nearly, textbook = rows
    # The textbook program is the recipe: a task like this one needs no evidence.
    assert (textbook.reward, textbook.rung, textbook.passed) == (1.0, 6, False)
    assert textbook.detail == "every check passes"
    assert 0 < nearly.reward < 1.0 and nearly.rung < 6 and nearly.passed
    assert nearly.to_json()["reward"] == nearly.reward and nearly.detail
    # Graded with a fixed nonce by default: the same rows again.
    again = grade_baselines(task, reg.get("cube_demo"), runtime="local")
    assert [(r.name, r.reward, r.rung) for r in again] == [(r.name, r.reward, r.rung) for r in rows]


def test_an_oracle_without_baselines_gives_no_rows(tmp_path: Path) -> None:
    (tmp_path / "cube.py").write_text(PLUGIN.replace("EXTRA", ""))
    (tmp_path / "cube_ref.py").write_text(REFERENCE)
    reg = Registry()
    reg.load_plugin_file(tmp_path / "cube.py")
    assert reg.get("cube_demo").baselines == ()
    task = build_task(reg, "cube_demo", tmp_path / "tasks", n_public=4, n_hidden=3, checkpoint_every=None).path
    assert grade_baselines(task, reg.get("cube_demo"), runtime="local") == []
