"""Dataset builds: `recon build --all` with its manifest, and `--variant N`."""
from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, strategies as st

from recon import Registry, __version__
from recon.cli import cli
from recon.dataset import (DATASET_NAME, MAX_BASE_SEED, REGISTRY, VARIANT_SEED_BASE, DatasetEntry, build_all,
                           read_manifest, registry_document, variant_name, variant_seed, write_manifest,
                           write_registry)
from recon.errors import BuildError, UsageError
from recon.fsutil import tree_digest
from recon.task import load_task

CHEAP = Path(__file__).parent / "perf" / "cheap_oracle.py"

FLAKY = '''
from recon import oracle, Float, Number

@oracle(name="flaky", version="1.0.0", title="t", domain="d", toolkit=[], reference="flaky_ref.py",
        description="Echoes x.", axes={"x": Float(0.0, 1.0, doc="the input")},
        outputs={"y": Number(abs=1, doc="x again")})
def flaky(params, evidence):
    """Fails on large x."""
    if params["x"] > 0.5:
        raise ValueError("x too large for this oracle")
    return {"y": params["x"]}
'''


def test_all_builds_every_builtin_and_the_manifest_digests_match(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    # A relative --out, from the folder it is relative to (this once crashed in the manifest).
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(cli, ["build", "--all", "--out", "dataset", "--public", "1", "--hidden", "1", "--select", "random", "-q"])
    assert res.exit_code == 0, res.output
    out = tmp_path / "dataset"
    manifest = read_manifest(out)
    names = [t["name"] for t in manifest["tasks"]]
    builtins = Registry.default(entry_points=False).names()
    assert set(builtins) <= set(names) and names == sorted(names)
    assert res.stdout.splitlines() == [str(Path("dataset") / n) for n in names]
    for t in manifest["tasks"]:
        task_dir = out / t["path"]
        assert t["path"] == t["name"]
        assert t["digest"] == tree_digest(task_dir), t["name"]
        assert t["task"] == f"recon/{t['name']}" and t["variant"] is None
        assert (t["n_public"], t["n_hidden"]) == (1, 1)
        assert load_task(task_dir).meta["oracle_version"] == t["oracle_version"]
    # the manifest is itself reproducible: no clock, no absolute paths
    text = (out / "dataset.json").read_text()
    assert str(tmp_path) not in text
    # and beside it, the Harbor registry of the same tasks
    registry = json.loads((out / REGISTRY).read_text())
    assert [d["name"] for d in registry] == [DATASET_NAME] and registry[0]["version"] == __version__
    assert [(t["name"], t["path"]) for t in registry[0]["tasks"]] == [(n, str(out / n)) for n in names]


def test_variant_changes_the_sweep_and_the_name(tmp_path: Path) -> None:
    runner = CliRunner()
    paths = {}
    for variant in (None, 6, 7):
        args = ["build", "cheap_poly", "--plugin", str(CHEAP), "--out", str(tmp_path), "-q", "--workers", "1"]
        if variant is not None:
            args += ["--variant", str(variant)]
        res = runner.invoke(cli, args)
        assert res.exit_code == 0, res.output
        paths[variant] = Path(res.stdout.strip())  # `recon build NAME` prints the task path, variants too
    assert paths[None] == tmp_path / "cheap_poly" and paths[6] == tmp_path / "cheap_poly__06"
    assert paths[7].name == "cheap_poly__07" == variant_name("cheap_poly", 7)
    assert 'name = "recon/cheap_poly__06"' in (paths[6] / "task.toml").read_text()
    tasks = {v: load_task(p) for v, p in paths.items()}
    assert tasks[None].meta["spec"]["seed"] == 0 and tasks[6].meta["spec"]["seed"] == variant_seed(0, 6)
    assert tasks[6].meta["oracle"] == "cheap_poly" and tasks[6].meta["task"] == "recon/cheap_poly__06"

    def params(t: object) -> set[str]:
        return {json.dumps(s.parameters, sort_keys=True) for s in t.public() + t.hidden()}  # type: ignore[attr-defined]

    assert params(tasks[None]).isdisjoint(params(tasks[6]))
    assert params(tasks[6]).isdisjoint(params(tasks[7]))
    # a variant is as reproducible as any build
    digest = tree_digest(paths[6])
    res = runner.invoke(cli, ["build", "cheap_poly", "--plugin", str(CHEAP), "--out", str(tmp_path), "-q",
                              "--variant", "6"])
    assert res.exit_code == 0 and tree_digest(paths[6]) == digest


@given(st.integers(0, MAX_BASE_SEED), st.integers(1, 99), st.integers(0, MAX_BASE_SEED), st.integers(1, 99))
def test_variant_seeds_never_collide(s1: int, n1: int, s2: int, n2: int) -> None:
    a, b = variant_seed(s1, n1), variant_seed(s2, n2)
    assert (a == b) == ((s1, n1) == (s2, n2))
    assert VARIANT_SEED_BASE <= a < 2**53  # never a hand-picked seed; exact in any JSON reader


def test_variant_and_all_usage_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError):
        variant_seed(0, 0)
    with pytest.raises(UsageError):
        variant_seed(2**40, 1)
    runner = CliRunner()
    for args in (["build"], ["build", "lidar_icp", "--all"], ["build", "--all", "--spec", str(tmp_path / "s.toml")],
                 ["build", "lidar_icp", "--variant", "0"], ["build", "lidar_icp", "--variant", "100"]):
        res = runner.invoke(cli, [*args, "--out", str(tmp_path)])
        assert res.exit_code == 2, (args, res.output)
        assert "Traceback" not in res.output
    assert list(tmp_path.iterdir()) == []


def test_all_reports_every_failure_and_writes_no_manifest(tmp_path: Path) -> None:
    (tmp_path / "flaky_ref.py").write_text("print('{}')\n")
    (tmp_path / "flaky.py").write_text(FLAKY)
    reg = Registry()
    reg.load_plugin_file(tmp_path / "flaky.py")
    reg.load_plugin_file(CHEAP)
    steps: list[int] = []
    with pytest.raises(BuildError, match=r"1 of 2 task\(s\) failed to build: flaky: .*x too large"):
        build_all(reg, tmp_path / "out", workers=2, progress=steps.append)
    assert (tmp_path / "out" / "cheap_poly" / "task.toml").is_file()  # the others are built
    assert not (tmp_path / "out" / "flaky").exists() and not (tmp_path / "out" / "dataset.json").exists()
    assert sum(steps) >= 9  # every scenario of cheap_poly reported progress from its worker process
    steps.clear()
    entries = build_all(reg, tmp_path / "out2", names=["cheap_poly"], workers=2, progress=steps.append)
    assert [e.name for e in entries] == ["cheap_poly"] and sum(steps) == 9


HARBOR = Path(os.environ.get("RECON_HARBOR", "/opt/harbor-venv/bin/harbor"))
needs_harbor = pytest.mark.skipif(not HARBOR.is_file(), reason="Harbor is not installed (see .ci/run)")

# Harbor's own reading of a registry file: its pydantic models, then its JSON registry
# client resolving NAME@VERSION to the tasks' local folders.
RESOLVE = """
import asyncio, json, sys
from pathlib import Path
from harbor.models.registry import Registry
from harbor.registry.client.json import JsonRegistryClient
Registry.from_path(Path(sys.argv[1]))
meta = asyncio.run(JsonRegistryClient(path=Path(sys.argv[1])).get_dataset_metadata(sys.argv[2]))
print(json.dumps({"name": meta.name, "version": meta.version, "metrics": [m.type.value for m in meta.metrics],
                  "tasks": [str(t.get_local_path()) for t in meta.task_ids],
                  "exist": [t.get_local_path().is_dir() for t in meta.task_ids]}))
"""


def _rebased(entries: list[DatasetEntry], folder: Path) -> list[DatasetEntry]:
    return [dataclasses.replace(e, path=folder / e.name) for e in entries]


def _harbor_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}


@pytest.fixture(scope="module")
def cheap_dataset(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[DatasetEntry]]:
    out = tmp_path_factory.mktemp("cheapds") / "ds"
    reg = Registry()
    reg.load_plugin_file(CHEAP)
    entries = build_all(reg, out, workers=1, n_public=2, n_hidden=1)
    write_manifest(out, entries)
    return out, entries


@needs_harbor
def test_harbor_reads_the_registry_from_any_folder(cheap_dataset: tuple[Path, list[DatasetEntry]], tmp_path: Path) -> None:
    out, entries = cheap_dataset
    listed = subprocess.run([str(HARBOR), "datasets", "list", "--registry-path", str(out / REGISTRY), "--json"],
                            capture_output=True, text=True, env=_harbor_env(), cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout) == [{"name": DATASET_NAME, "version": __version__,
                                          "description": registry_document(out, entries)[0]["description"],
                                          "task_count": len(entries)}]
    proc = subprocess.run([str(HARBOR.with_name("python")), "-c", RESOLVE, str(out / REGISTRY),
                           f"{DATASET_NAME}@{__version__}"], capture_output=True, text=True, env=_harbor_env(),
                          cwd=tmp_path)  # a working folder unrelated to the dataset
    assert proc.returncode == 0, proc.stderr
    meta = json.loads(proc.stdout)
    assert meta["tasks"] == [str(out / e.name) for e in entries] and all(meta["exist"])
    assert meta["metrics"] == ["mean"]


@needs_harbor
def test_relative_registry_paths_resolve_from_the_dataset_folder(cheap_dataset: tuple[Path, list[DatasetEntry]],
                                                                 tmp_path: Path) -> None:
    out, entries = cheap_dataset
    moved = tmp_path / "published"
    shutil.copytree(out, moved)
    path = write_registry(moved, _rebased(entries, moved), name="recon-small", version="2", relative_paths=True)
    doc = json.loads(path.read_text())
    assert [t["path"] for t in doc[0]["tasks"]] == [e.name for e in entries]
    assert str(tmp_path) not in path.read_text()  # portable: nothing of where it was built
    proc = subprocess.run([str(HARBOR.with_name("python")), "-c", RESOLVE, str(path), "recon-small@2"],
                          capture_output=True, text=True, env=_harbor_env(), cwd=moved)
    assert proc.returncode == 0, proc.stderr
    meta = json.loads(proc.stdout)
    assert (meta["name"], meta["version"]) == ("recon-small", "2")
    assert meta["tasks"] == [str(moved / e.name) for e in entries] and all(meta["exist"])


def test_registry_names_and_versions_are_checked(cheap_dataset: tuple[Path, list[DatasetEntry]], tmp_path: Path) -> None:
    out, entries = cheap_dataset
    doc = registry_document(out, entries, name="lhtb-recon", version="2026.10", description="ten tasks")
    assert doc == [{"name": "lhtb-recon", "version": "2026.10", "description": "ten tasks",
                    "tasks": [{"name": e.name, "path": str(out / e.name)} for e in entries],
                    "metrics": [{"type": "mean"}]}]
    # The default description names the tasks and a digest over their trees.
    assert "cheap_poly" in registry_document(out, entries)[0]["description"]
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    for name, version in (("org/recon", None), ("", None), ("recon", "1 0"), ("recon", "v@1")):
        with pytest.raises(UsageError, match="dataset (name|version)"):
            write_manifest(fresh, entries, dataset_name=name, dataset_version=version)
    assert list(fresh.iterdir()) == []  # a refused name writes neither file
    with pytest.raises(UsageError, match="at least one task"):
        registry_document(out, [])
    with pytest.raises(UsageError, match="not inside"):
        write_manifest(fresh, entries)  # the tasks live elsewhere
    copy = tmp_path / "copy"
    shutil.copytree(out, copy, ignore=shutil.ignore_patterns(REGISTRY))
    write_manifest(copy, _rebased(entries, copy), registry=False)
    assert not (copy / REGISTRY).exists() and (copy / "dataset.json").read_bytes() == (out / "dataset.json").read_bytes()


def test_manifest_and_registry_of_a_folder_named_either_way(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    reg = Registry()
    reg.load_plugin_file(CHEAP)
    entries = build_all(reg, "../ds", workers=1, n_public=1, n_hidden=1)  # entries hold "../ds/cheap_poly"
    texts = []
    for out in ("../ds", tmp_path / "ds", str(tmp_path / "sub" / ".." / "ds")):
        write_manifest(out, entries)
        texts.append(((tmp_path / "ds" / "dataset.json").read_bytes(), (tmp_path / "ds" / REGISTRY).read_bytes()))
    assert texts[0] == texts[1] == texts[2]
    doc = json.loads(texts[0][1])
    assert doc[0]["tasks"] == [{"name": "cheap_poly", "path": str(tmp_path / "ds" / "cheap_poly")}]
    assert read_manifest(tmp_path / "ds")["tasks"][0]["path"] == "cheap_poly"
