"""Habits the code base keeps: typed, no asserts for validation, cheap imports."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_no_assert_statements_in_the_package() -> None:
    offenders = []
    for path in sorted((ROOT / "recon").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Assert):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offenders == [], "asserts vanish under -O; raise a ReconError instead"


def test_mypy_is_clean() -> None:
    pytest.importorskip("mypy")
    proc = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:]


def test_importing_recon_is_cheap() -> None:
    code = ("import sys, recon, recon.registry, recon.compare, recon.sweep, recon.build, recon.grader\n"
            "heavy = [m for m in sys.modules if m.split('.')[0] in "
            "('numpy', 'scipy', 'laspy', 'rdkit', 'pyroomacoustics', 'matplotlib', 'docker')]\n"
            "print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
