"""`recon new`: the scaffolded plugin package, the checks on its name and folder, and
the promise that it installs, passes its tests, builds and validates unchanged."""
from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path
from typing import Iterator

import pytest
from click.testing import CliRunner

from recon import Registry
from recon.cli import cli
from recon.errors import UsageError
from recon.scaffold import FILES, scaffold

from _editable import _can_build_without_isolation, editable_install, pip, recon

# Only the end-to-end tests use this name; a leftover install of it is replaced.
SELFTEST = "scaffold_selftest"


def test_scaffold_writes_a_complete_package(tmp_path: Path, registry: Registry) -> None:
    result = scaffold("demo_osc", tmp_path / "pkg", registry=registry)
    root = tmp_path / "pkg"
    assert result.path == root.absolute() and result.package == "recon_demo_osc" and result.dist == "recon-demo-osc"
    assert sorted(result.files) == sorted(["pyproject.toml", "README.md", "src/recon_demo_osc/__init__.py",
                                           "src/recon_demo_osc/reference.py", "tests/test_demo_osc.py",
                                           "src/recon_demo_osc/baselines/linspace_one_second/reconstruct.py",
                                           "src/recon_demo_osc/scenarios/demo_osc.toml"])
    assert len(result.files) == len(FILES)
    conf = tomllib.loads((root / "pyproject.toml").read_text())
    assert conf["project"]["name"] == "recon-demo-osc"
    assert conf["project"]["entry-points"]["recon.oracles"] == {"demo_osc": "recon_demo_osc"}
    assert conf["tool"]["setuptools"]["package-data"]["recon_demo_osc"] == ["reference.py", "baselines/*/*.py",
                                                                             "scenarios/*.toml"]
    assert any(d.startswith("recon-tasks>=") for d in conf["project"]["dependencies"])  # its own PyPI name
    for rel in result.files:
        text = (root / rel).read_text()
        assert not re.search(r"\$\{?(name|package|dist|recon_version)\b", text), f"unfilled placeholder in {rel}"
        if rel.endswith(".py"):
            compile(text, rel, "exec")
    module = (root / "src/recon_demo_osc/__init__.py").read_text()
    spec = tomllib.loads((root / "src/recon_demo_osc/scenarios/demo_osc.toml").read_text())
    assert spec["n_hidden"] + spec["probes"] >= 59 and spec["reveal"] == ["baselines"]  # passes validate's power row
    assert 'name="demo_osc"' in module and "def demo_osc(params" in module and 'reference="reference.py"' in module


def test_the_scaffolded_oracle_is_a_valid_declaration(tmp_path: Path) -> None:
    # Loaded as a plugin file (no install needed): the declaration passes every
    # decoration-time check, the oracle runs, and the reference agrees with it.
    scaffold("demo_file", tmp_path / "pkg")
    pkg = tmp_path / "pkg" / "src"
    sys.path.insert(0, str(pkg))
    try:
        reg = Registry()
        import recon_demo_file  # noqa: PLC0415

        [o] = reg.load_module(recon_demo_file, "test")
        out = o({"amplitude": 1.0, "frequency_hz": 1.0, "decay_per_s": 0.0, "n_samples": 101}, tmp_path / "ev")
        assert out["zero_crossings"] == 2 and abs(out["final_value"] - 1.0) < 1e-12
        assert (tmp_path / "ev" / "signal.csv").read_text().startswith("t_s,x\n0.00,1\n")
        assert o.reference == (pkg / "recon_demo_file" / "reference.py").resolve()
        # The example shows the split: public text in the declaration, the recipe in the
        # docstring, the baseline beside the module.
        assert "100 Hz" in o.recipe and "100" not in o.description
        assert all(ax.doc for ax in o.axes.values()) and all(out.doc for out in o.outputs.values())
        assert o.stages and [b.name for b in o.baselines] == ["linspace_one_second"]
    finally:
        sys.path.remove(str(pkg))
        for name in [m for m in sys.modules if m.startswith("recon_demo_file")]:
            del sys.modules[name]


@pytest.mark.parametrize("name, message", [
    ("Bad", "not a valid oracle name"),
    ("9lives", "not a valid oracle name"),
    ("with-dash", "not a valid oracle name"),
    ("", "not a valid oracle name"),
    ("class", "is a Python keyword"),
    ("lidar_icp", "already registered by built-in recon.artifacts.lidar_icp"),
])
def test_bad_or_taken_names_are_refused_and_nothing_is_written(name: str, message: str, tmp_path: Path,
                                                               registry: Registry) -> None:
    with pytest.raises(UsageError, match=message) as info:
        scaffold(name, tmp_path / "pkg", registry=registry)
    assert info.value.hint
    assert not (tmp_path / "pkg").exists()


def test_a_name_whose_package_is_already_importable_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "site" / "recon_shadowed").mkdir(parents=True)
    (tmp_path / "site" / "recon_shadowed" / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    with pytest.raises(UsageError, match="'recon_shadowed' is already importable"):
        scaffold("shadowed", tmp_path / "pkg")


def test_never_overwrites_a_non_empty_folder(tmp_path: Path) -> None:
    target = tmp_path / "mine"
    target.mkdir()
    (target / "notes.txt").write_text("keep me")
    with pytest.raises(UsageError, match="not empty; recon new never overwrites"):
        scaffold("demo_keep", target)
    assert [p.name for p in target.iterdir()] == ["notes.txt"]
    (tmp_path / "file").write_text("x")
    with pytest.raises(UsageError, match="not a directory"):
        scaffold("demo_keep", tmp_path / "file")
    empty = tmp_path / "empty"
    empty.mkdir()
    assert (scaffold("demo_keep", empty).path / "pyproject.toml").is_file()


def test_cli_new_prints_the_files_and_next_steps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # monkeypatch.chdir rather than CliRunner.isolated_filesystem, which click 8.5 deprecates
    runner = CliRunner()
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(cli, ["new", "demo_cli"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert Path("recon-demo-cli/src/recon_demo_cli/__init__.py").is_file()
    assert res.output.startswith("created recon-demo-cli/ (oracle demo_cli, package recon_demo_cli")
    assert "pip install -e './recon-demo-cli[test]'" in res.output and "recon validate tasks/demo_cli" in res.output
    again = runner.invoke(cli, ["new", "demo_cli"])
    assert again.exit_code == 2
    assert again.output.startswith("error: recon-demo-cli exists and is not empty") and "fix:" in again.output
    bad = runner.invoke(cli, ["new", "Demo", "--dir", "elsewhere"])
    assert bad.exit_code == 2 and "not a valid oracle name" in bad.output and "Traceback" not in bad.output
    assert not Path("elsewhere").exists()


# -- end to end: scaffold, pip install -e, its tests, build, validate --------------------
@pytest.fixture(scope="module")
def installed_scaffold(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    work = tmp_path_factory.mktemp("new-e2e")
    pkg = work / "recon-scaffold-selftest"
    # A leftover install from an interrupted run would point at a deleted folder: drop it
    # before `recon new` looks at the installed plugins.
    pip("uninstall", "-y", "-q", "recon-scaffold-selftest", check=False)
    proc = recon("new", SELFTEST, "--dir", str(pkg), cwd=work)
    assert proc.returncode == 0, proc.stderr
    with editable_install(pkg, "recon-scaffold-selftest", replace=True):
        yield pkg


def test_scaffold_registers_and_passes_its_own_tests(installed_scaffold: Path) -> None:
    proc = recon("list", "--json", cwd=installed_scaffold)
    [row] = [r for r in json.loads(proc.stdout) if r["name"] == SELFTEST]
    assert row["source"] == f"entry point '{SELFTEST}' (recon_{SELFTEST}) of recon-scaffold-selftest"
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:benchmark",
                           str(installed_scaffold)], capture_output=True, text=True, cwd=installed_scaffold, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "6 passed" in proc.stdout


def test_scaffold_builds_and_validates_unchanged(installed_scaffold: Path) -> None:
    work = installed_scaffold.parent
    proc = recon("build", SELFTEST, cwd=work)
    assert proc.returncode == 0, proc.stderr
    task = work / "tasks" / SELFTEST
    assert proc.stdout.strip() == str(Path("tasks") / SELFTEST) and (task / "task.toml").is_file()
    proc = recon("validate", str(task), cwd=work)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = [ln for ln in proc.stdout.splitlines() if ln.startswith(("ok ", "FAIL"))]
    assert len(rows) >= 7 and all(r.startswith("ok ") for r in rows), proc.stdout
    # the scaffold's baseline is graded there and stays below 1.0 with partial credit
    [baseline] = [r.split() for r in rows if r.split()[1:3] == ["baseline", "linspace_one_second"]]
    assert baseline[3:5] == ["<", "1.0"] and 0.0 < float(baseline[5]) < 1.0, baseline
    instruction = (task / "instruction.md").read_text()
    assert "100 Hz" not in instruction and "## Recipe" not in instruction
    # The easier variant shows the recipe, and validates too.
    proc = recon("build", SELFTEST, "--disclose", "recipe", cwd=work)
    assert proc.returncode == 0, proc.stderr
    variant = work / "tasks" / f"{SELFTEST}__recipe"
    assert proc.stdout.strip() == str(Path("tasks") / f"{SELFTEST}__recipe")
    assert "sampled at 100 Hz" in " ".join((variant / "instruction.md").read_text().split())
    proc = recon("validate", str(variant), "--no-mutation", "--no-fairness", cwd=work)  # the same analyses as above
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_scaffold_wheel_ships_the_reference_and_the_entry_point(installed_scaffold: Path, tmp_path: Path) -> None:
    # A non-editable install gets reference.py too: the oracle needs it at import time.
    args = ["wheel", "--no-deps", "-q", "-w", str(tmp_path), str(installed_scaffold)]
    if _can_build_without_isolation():
        args.insert(1, "--no-build-isolation")
    pip(*args)
    [whl] = tmp_path.glob("recon_scaffold_selftest-*.whl")
    with zipfile.ZipFile(whl) as z:
        names = set(z.namelist())
        [eps] = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
        entry_points = z.read(eps).decode()
    assert {f"recon_{SELFTEST}/__init__.py", f"recon_{SELFTEST}/reference.py",
            f"recon_{SELFTEST}/baselines/linspace_one_second/reconstruct.py"} <= names
    assert not any(n.startswith("tests/") for n in names)
    assert "[recon.oracles]" in entry_points and f"{SELFTEST} = recon_{SELFTEST}" in entry_points
