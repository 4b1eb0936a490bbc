"""The command line, in-process (click's runner) and as a real installed script."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from recon.cli import cli

SCIENCE = ("numpy", "scipy", "laspy", "rdkit", "pyroomacoustics", "matplotlib", "docker")


def run(*args: str) -> "CliRunner.invoke":  # type: ignore[valid-type]
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_help_imports_no_science_library() -> None:
    code = ("import sys; from recon.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            f"bad = [m for m in sys.modules if m.split('.')[0] in {SCIENCE!r}]\n"
            "print('LOADED', bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "LOADED []" in out, out
    assert "build" in out and "validate" in out


def test_list_and_show() -> None:
    res = run("list")
    assert res.exit_code == 0
    assert "lidar_icp" in res.output and "geospatial" in res.output
    res = run("show", "lidar_icp", "--json")
    d = json.loads(res.output)
    assert d["name"] == "lidar_icp" and "voxel_size" in d["axes"] and d["outputs"]["source_points"]["tolerance"]
    res = run("show", "lidar_icp")
    assert "outputs:" in res.output and "voxel_size" in res.output


def test_unknown_name_is_one_line_error() -> None:
    res = CliRunner().invoke(cli, ["show", "nope"])
    assert res.exit_code == 2
    assert res.output.startswith("error: no oracle named 'nope'")
    assert "Traceback" not in res.output


BAD_PLUGIN = '''
from recon import oracle, Float, Number

@oracle(name="badbounds", version="1.0.0", title="t", domain="d", toolkit=[],
        axes={"voxel": Float(5.0, 1.0)}, outputs={"y": Number(abs=1)})
def badbounds(params, evidence):
    """Bad."""
    return {"y": 1.0}
'''


def test_plugin_with_inverted_bounds_is_refused_naming_the_axis(tmp_path: Path) -> None:
    plugin = tmp_path / "bad.py"
    plugin.write_text(BAD_PLUGIN)
    proc = subprocess.run([sys.executable, "-m", "recon", "show", "badbounds", "--plugin", str(plugin)],
                          capture_output=True, text=True)
    assert proc.returncode == 3
    lines = proc.stderr.strip().splitlines()
    assert 1 <= len(lines) <= 2, proc.stderr
    assert "axis 'voxel'" in lines[0] and "lo=5.0 is not below hi=1.0" in lines[0] and "bad.py:" in lines[0]
    assert "Traceback" not in proc.stderr


def test_installed_script_sweeps_reproducibly(tmp_path: Path) -> None:
    script = Path(sys.executable).parent / "recon"
    exe = [str(script)] if script.exists() else [sys.executable, "-m", "recon"]
    env = {**os.environ, "RECON_SECRET": "cli-test"}
    for out in ("a", "b"):
        subprocess.run([*exe, "sweep", "lidar_icp", "--out", str(tmp_path / out), "--public", "2", "--hidden", "1", "--select", "random", "-q"],
                       check=True, env=env, cwd=tmp_path)
    files_a = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*") if p.is_file())
    files_b = sorted(p.relative_to(tmp_path / "b") for p in (tmp_path / "b").rglob("*") if p.is_file())
    assert files_a == files_b
    assert Path("public_1/scenario.json") in files_a and Path("hidden/hidden_1/oracle_output.json") in files_a
    # the default evidence level (outputs): neither the per-stage counts nor the LAS traces
    assert Path("public_1/oracle_output.json") in files_a
    assert Path("public_1/stages.json") not in files_a and Path("public_1/source_downsampled.las") not in files_a
    assert not any(str(p).startswith("hidden/") and p.suffix == ".las" and "inputs" not in str(p) for p in files_a)
    for rel in files_a:
        assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes(), rel


def test_sweep_refuses_to_overwrite_foreign_directories(tmp_path: Path) -> None:
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "precious.txt").write_text("keep me")
    res = CliRunner().invoke(cli, ["sweep", "lidar_icp", "--out", str(tmp_path / "mine"), "-q"])
    assert res.exit_code == 2 and "not written by recon" in res.output
    assert (tmp_path / "mine" / "precious.txt").read_text() == "keep me"
