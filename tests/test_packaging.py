"""The wheel carries the built-in oracles, ladders and templates, and works from anywhere."""
from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(ROOT)],
                   check=True, capture_output=True)
    [whl] = out.glob("recon_tasks-*.whl")
    return whl


def test_wheel_contents(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    artifacts = sorted(p.name for p in (ROOT / "artifacts").iterdir() if (p / "__init__.py").is_file())
    assert artifacts, "no built-in oracles found"
    for name in artifacts:
        assert f"recon/artifacts/{name}/__init__.py" in names
        assert f"recon/artifacts/{name}/reference.py" in names
    for required in ("recon/py.typed", "recon/ladders/six_rung.toml", "recon/templates/feedback_main.py", "recon/compare.py"):
        assert required in names
    # what built-ins ship of their builds' work (kept/): a first build's shortcut
    kept = sorted(p.relative_to(ROOT / "artifacts").as_posix() for p in (ROOT / "artifacts").glob("*/kept/*.json.gz"))
    assert kept and all(f"recon/artifacts/{k}" in names for k in kept)
    assert not any(n.startswith(("tests/", "examples/")) for n in names)


def test_non_editable_install_lists_builtins_from_any_directory(wheel: Path, tmp_path: Path) -> None:
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)],
                   check=True, capture_output=True)
    code = (f"import sys; sys.path.insert(0, {str(target)!r}); import recon; "
            f"assert recon.__file__.startswith({str(target)!r}), recon.__file__; "
            "from recon.cli import main; main(['list'])")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    for name in ("lidar_icp",):
        assert name in proc.stdout


def test_every_folder_of_modules_is_declared_as_a_package() -> None:
    """Each built-in, and each of its baselines' and independent programs' folders, is a
    declared package: setuptools then ships it without warning that an importable folder is
    missing from its configuration."""
    import tomllib

    conf = tomllib.loads((ROOT / "pyproject.toml").read_text())
    packages = set(conf["tool"]["setuptools"]["packages"])
    folders = {p.parent for p in (ROOT / "artifacts").rglob("*.py") if "__pycache__" not in p.parts}
    assert len(folders) > 20
    for folder in folders:
        name = ".".join(("recon", *folder.relative_to(ROOT).parts))
        assert name in packages, f"{name} is missing from [tool.setuptools] packages in pyproject.toml"
    assert "recon.templates" in packages
