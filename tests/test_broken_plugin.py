"""A plugin that fails to load blocks only itself: every other oracle works, `recon list`
shows it as broken with its error and the fix, and asking for it by name says why."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from recon import Registry
from recon.errors import PluginError

OLD_STYLE = textwrap.dedent("""
    from recon import oracle, Float, Number

    @oracle(name="old_style", version="0.1.0", title="A 0.1-style plugin", domain="testing", toolkit=[],
            axes={"x": Float(0.0, 1.0, doc="x")}, outputs={"y": Number(abs=0.1, doc="y")})
    def old_style(params, evidence):
        \"\"\"y = x\"\"\"
        return {"y": params["x"]}
""")


def _site(tmp: Path, modules: dict[str, str], entry_points: dict[str, str]) -> Path:
    """A folder that, on PYTHONPATH, looks like an installed distribution registering
    ``entry_points`` (name -> module) in the recon.oracles group."""
    site = tmp / "site"
    site.mkdir()
    for name, source in modules.items():
        (site / f"{name}.py").write_text(source)
    info = site / "recon_broken_demo-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: recon-broken-demo\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[recon.oracles]\n" + "".join(f"{k} = {v}\n" for k, v in entry_points.items()))
    return site


def _recon(site: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(site)}
    return subprocess.run([sys.executable, "-m", "recon", *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=600)


@pytest.fixture
def broken_site(tmp_path: Path) -> Path:
    return _site(tmp_path, {"old_style_plugin": OLD_STYLE, "crashing_plugin": "raise RuntimeError('boom at import')\n"},
                 {"old_style": "old_style_plugin", "crashing": "crashing_plugin"})


def test_a_broken_plugin_does_not_stop_a_builtin_build(broken_site: Path, tmp_path: Path) -> None:
    proc = _recon(broken_site, "build", "lidar_icp", "--select", "random", "--public", "2", "--hidden", "1",
                  "--out", str(tmp_path / "tasks"), "--workers", "1", "-q", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "tasks" / "lidar_icp" / "task.toml").is_file()


def test_recon_list_shows_the_broken_plugin_with_error_and_fix(broken_site: Path, tmp_path: Path) -> None:
    proc = _recon(broken_site, "list", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    rows = {r["name"]: r for r in json.loads(proc.stdout)}
    assert {"lidar_icp", "chem_smarts", "acoustic_beamforming"} <= set(rows)
    assert rows["lidar_icp"]["status"] == "ready"
    old = rows["old_style"]["status"]
    assert old.startswith("broken:") and "description" in old and "fix:" in old
    assert "boom at import" in rows["crashing"]["status"] and rows["crashing"]["status"].startswith("broken:")
    table = _recon(broken_site, "list", cwd=tmp_path)
    assert table.returncode == 0 and "old_style: broken:" in table.stdout


def test_asking_for_a_broken_plugin_by_name_gives_its_own_error(broken_site: Path, tmp_path: Path) -> None:
    proc = _recon(broken_site, "show", "old_style", cwd=tmp_path)
    assert proc.returncode != 0
    assert "old_style" in proc.stderr and "description" in proc.stderr and "Traceback" not in proc.stderr


def test_a_registry_records_what_failed(monkeypatch: pytest.MonkeyPatch, broken_site: Path) -> None:
    monkeypatch.syspath_prepend(str(broken_site))
    import importlib

    importlib.invalidate_caches()
    reg = Registry.default()
    assert {b.name for b in reg.broken} == {"old_style", "crashing"}
    assert "lidar_icp" in reg and reg.get("lidar_icp").name == "lidar_icp"
    with pytest.raises(PluginError, match="cannot be used"):
        reg.get("old_style")
    # a plugin file named explicitly must load: its failure is the command's
    bad = broken_site / "explicit.py"
    bad.write_text(OLD_STYLE)
    with pytest.raises(PluginError, match="description"):
        Registry.default([bad], entry_points=False)


NEEDS_TOOL = textwrap.dedent("""
    from recon import oracle, Float, Number

    @oracle(name="needs_tool", version="1.0.0", title="Needs a tool", domain="testing", toolkit=["numpy"],
            requires=["recon-no-such-tool"], reference="needs_tool_ref.py",
            description="A number from a tool that is not installed here.",
            axes={"x": Float(0.0, 1.0, doc="x")}, outputs={"y": Number(abs=0.1, doc="y")})
    def needs_tool(params, evidence):
        '''y = x, through the tool.'''
        import recon_no_such_tool  # noqa: F401 - imported lazily: listing never needs it
        return {"y": params["x"]}
""")


def test_an_oracle_without_its_tool_is_listed_with_the_install_command_and_skipped_by_build_all(
        tmp_path: Path) -> None:
    site = _site(tmp_path, {"needs_tool_plugin": NEEDS_TOOL}, {"needs_tool": "needs_tool_plugin"})
    (site / "needs_tool_ref.py").write_text("import json, sys\nprint(json.dumps({'y': 0.0}))\n")
    proc = _recon(site, "list", "--json", cwd=tmp_path)
    rows = {r["name"]: r for r in json.loads(proc.stdout)}
    assert rows["needs_tool"]["missing"] == ["recon-no-such-tool"]
    assert rows["needs_tool"]["status"] == "needs recon-no-such-tool: pip install recon-no-such-tool"
    assert rows["lidar_icp"]["status"] == "ready"
    built = _recon(site, "build", "--all", "--out", str(tmp_path / "ds"), "--select", "random", "--public", "2",
                   "--hidden", "1", "--workers", "1", cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    assert "skipped needs_tool: needs recon-no-such-tool (pip install recon-no-such-tool)" in built.stderr
    assert not (tmp_path / "ds" / "needs_tool").exists() and (tmp_path / "ds" / "lidar_icp").is_dir()


def test_a_builtin_names_the_extra_that_installs_its_tool() -> None:
    from recon.registry import install_command

    assert install_command(["obspy"], True) == "pip install 'recon-tasks[seismology]'"
    assert install_command(["gemmi", "pysam"], True) == "pip install 'recon-tasks[catalog]'"
    assert install_command(["obspy"], False) == "pip install obspy"
