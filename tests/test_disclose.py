"""`recon build NAME --disclose recipe`: the easier variant whose instruction adds the
oracle's recipe, named NAME__recipe, recorded in task.toml, and still leak-free."""
from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from recon import Registry
from recon.build import build_task
from recon.cli import cli
from recon.errors import BuildError
from recon.fsutil import tree_digest
from recon.leaks import audit, recipe_sentences
from recon.task import load_task


@pytest.fixture(scope="module")
def recipe_task(tmp_path_factory: pytest.TempPathFactory, session_registry: Registry,
                small_build: dict[str, Any]) -> Path:
    """The recipe variant of the same (small) build as `lidar_task`."""
    return build_task(session_registry, "lidar_icp", tmp_path_factory.mktemp("disclosed"), workers=2,
                      disclose="recipe", **small_build).path


def _flat(text: str) -> str:
    return " ".join(text.replace("`", "").split()).casefold()


def test_the_variant_is_named_and_recorded(recipe_task: Path, lidar_task: Path) -> None:
    assert recipe_task.name == "lidar_icp__recipe"
    conf = tomllib.loads((recipe_task / "task.toml").read_text())
    assert conf["task"]["name"] == "recon/lidar_icp__recipe"
    assert conf["metadata"]["disclose"] == "recipe" and "recipe" in conf["task"]["description"]
    assert tomllib.loads((lidar_task / "task.toml").read_text())["metadata"]["disclose"] == "none"
    manifest = json.loads((recipe_task / "environment/app/observations/manifest.json").read_text())
    assert manifest["task"] == "recon/lidar_icp__recipe"
    assert load_task(recipe_task).meta["disclose"] == "recipe"
    assert load_task(lidar_task).meta["disclose"] is None


def test_the_instruction_adds_the_recipe_and_nothing_else_changes(recipe_task: Path, lidar_task: Path,
                                                                 session_registry: Registry) -> None:
    o = session_registry.get("lidar_icp")
    disclosed = (recipe_task / "instruction.md").read_text()
    default = (lidar_task / "instruction.md").read_text()
    doc_sentences = [r for r in recipe_sentences(o) if r.source.startswith("the oracle's docstring")]
    assert len(doc_sentences) > 10
    assert all(r.key in _flat(disclosed) for r in doc_sentences)
    assert not any(r.key in _flat(default) for r in doc_sentences)
    assert "## Recipe (disclosed)" in disclosed and "## Recipe" not in default
    assert "; ".join(o.stages) in " ".join(disclosed.split())
    # Everything before the recipe is the default instruction (same task, same scenarios).
    assert disclosed.split("\n## Recipe (disclosed)")[0].rstrip() == default.rstrip()
    same = lambda t: [json.dumps(s.parameters, sort_keys=True) for s in t.hidden()]  # noqa: E731
    assert same(load_task(recipe_task)) == same(load_task(lidar_task))


def test_the_disclosed_build_passes_the_audit_but_only_the_recipe_is_exempt(recipe_task: Path, tmp_path: Path,
                                                                            session_registry: Registry) -> None:
    import shutil

    o = session_registry.get("lidar_icp")
    assert audit(load_task(recipe_task), o) == []
    copy = tmp_path / "copy"
    shutil.copytree(recipe_task, copy)
    shutil.copyfile(copy / "solution/reconstruct.py", copy / "environment/app/workspace/helper.py")
    kinds = {f.kind for f in audit(load_task(copy), o)}
    assert {"solution", "source"} <= kinds and "recipe" not in kinds


def test_disclosed_builds_are_reproducible(recipe_task: Path, tmp_path: Path, session_registry: Registry,
                                          small_build: dict[str, Any]) -> None:
    again = build_task(session_registry, "lidar_icp", tmp_path, workers=1, disclose="recipe", **small_build).path
    assert tree_digest(again) == tree_digest(recipe_task)


def test_unknown_disclosures_are_refused(tmp_path: Path, session_registry: Registry) -> None:
    with pytest.raises(BuildError, match="--disclose 'answers' is not something a build can disclose"):
        build_task(session_registry, "lidar_icp", tmp_path, disclose="answers")
    assert list(tmp_path.iterdir()) == []
    res = CliRunner().invoke(cli, ["build", "lidar_icp", "--disclose", "answers", "--out", str(tmp_path)])
    assert res.exit_code == 2 and "Invalid value for '--disclose'" in res.output


def test_cli_builds_the_variant(tmp_path: Path) -> None:
    res = CliRunner().invoke(cli, ["build", "lidar_icp", "--disclose", "recipe", "--out", str(tmp_path), "-q",
                                   "--public", "2", "--hidden", "1", "--select", "random"])
    assert res.exit_code == 0, res.output
    assert res.stdout.strip() == str(tmp_path / "lidar_icp__recipe")
    assert "## Recipe (disclosed)" in (tmp_path / "lidar_icp__recipe" / "instruction.md").read_text()
