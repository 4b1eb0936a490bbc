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
