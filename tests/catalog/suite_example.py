"""The example plugin (examples/recon-pk-multidose) validated in full: the mutation
analysis included, on a cold cache. The default suite validates its build without the
mutation analysis (tests/test_example_plugin.py), whose own tests run on small oracles
(tests/test_mutate.py); this is the complete check an author's release would run."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from _editable import editable_install, recon  # noqa: E402 - the default suite's helpers

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "recon-pk-multidose"


def test_the_example_plugin_validates_in_full(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECON_HOME", str(tmp_path / "home"))
    with editable_install(EXAMPLE, "recon-pk-multidose"):
        proc = recon("build", "pk_multidose", "--out", str(tmp_path), "-q", cwd=tmp_path, timeout=1800)
        assert proc.returncode == 0, proc.stderr
        proc = recon("validate", str(tmp_path / "pk_multidose"), cwd=tmp_path, timeout=3600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = {ln.split()[1]: ln for ln in proc.stdout.splitlines() if ln.startswith(("ok ", "FAIL"))}
    assert "mutation" in rows and "fairness" in rows and all(r.startswith("ok ") for r in rows.values()), proc.stdout
