"""The generated feedback tool, run as a real subprocess on a copy of a built task's app/."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest

from recon import canonjson


def feedback(app: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RECON")}
    return subprocess.run([str(app / "tools" / "feedback"), *args], capture_output=True, text=True, timeout=timeout, env=env)


def install_reference(app: Path, task: Path) -> None:
    subprocess.run(["bash", str(task / "solution" / "solve.sh")], env={**os.environ, "RECON_APP": str(app)},
                   check=True, capture_output=True)


def write(app: Path, source: str) -> None:
    (app / "workspace" / "reconstruct.py").write_text(source)


def test_reference_passes_everything(app_copy: Path, lidar_task: Path) -> None:
    install_reference(app_copy, lidar_task)
    proc = feedback(app_copy)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    manifest = canonjson.read(app_copy / "observations" / "manifest.json")
    fields, n = manifest["outputs"], len(manifest["public"])
    passes = [ln for ln in lines if ln.split("  ")[2:3] == ["PASS"]]
    assert len(passes) == n * len(fields)
    # numeric fields show their margin in units of the tolerance; exact fields none
    exact_int = _field(fields, "integer", lambda s: s["tol"] == 0)
    assert any(ln.startswith(f"public_1  {exact_int}  PASS  (0.00 tol)") for ln in passes)
    scale_free = {n for n, s in fields.items() if s["kind"] in ("exact", "text", "set")}
    assert scale_free and all(ln.endswith("  PASS") for ln in passes if ln.split("  ")[1] in scale_free)
    margins = [float(ln.rsplit("(", 1)[1].split(" tol)")[0]) for ln in passes if ln.endswith(" tol)")]
    assert len(margins) == n * (len(fields) - len(scale_free)) and all(0.0 <= m <= 1.0 for m in margins)
    assert f"public: {n}/{n} scenarios, {n * len(fields)}/{n * len(fields)} fields" in lines
    assert any("hidden scenarios" in ln for ln in lines)
    assert proc.stderr == ""


def _field(fields: dict, kind: str, ok: Callable[[dict], bool] = lambda s: True) -> str:
    """The first output field of ``kind`` (the tests follow the oracle as it changes)."""
    return next(n for n, s in sorted(fields.items()) if s["kind"] == kind and ok(s))


def test_one_field_off_is_a_mismatch_with_got_want_and_tolerance(app_copy: Path, lidar_task: Path) -> None:
    install_reference(app_copy, lidar_task)
    fields = canonjson.read(app_copy / "observations" / "manifest.json")["outputs"]
    name = _field(fields, "number", lambda s: s["rel"] == 0 and s["abs"] > 0)
    ws = app_copy / "workspace"
    shutil.move(ws / "reconstruct.py", ws / "ref.py")
    write(app_copy, "import io, json, runpy, sys, contextlib\nbuf = io.StringIO()\n"
                    "with contextlib.redirect_stdout(buf):\n    runpy.run_path('ref.py', run_name='__main__')\n"
                    f"out = json.loads(buf.getvalue())\nout[{name!r}] += 0.5\nprint(json.dumps(out))\n")
    proc = feedback(app_copy, "public_2")
    assert proc.returncode == 1, proc.stdout
    [line] = [ln for ln in proc.stdout.splitlines() if "MISMATCH" in ln]
    tol = fields[name]["tolerance"]
    assert line.startswith(f"public_2  {name}  MISMATCH  got ") and "  want " in line and f"  ({tol})  " in line
    # how many tolerances off: 0.5 with an absolute tolerance
    assert line.endswith(f"  {0.5 / fields[name]['abs']:.0f} tol off"), line
    assert "public: 0/1 scenarios" in proc.stdout


@pytest.mark.parametrize("source,needle", [
    ("import sys\nsys.stdin.read()\nraise ValueError('boom at step 3')\n", "CRASH  exit code 1: ValueError: boom at step 3"),
    ("import time\ntime.sleep(60)\n", "TIMEOUT  no answer within 2 s"),
    ("print('not json')\n", "INVALID JSON"),
    ("pass\n", "NO OUTPUT  no output on stdout"),
    ("print('[1, 2]')\n", "INVALID JSON  the output is not a JSON object"),
])
def test_failures_are_one_clear_line_and_exit_2(app_copy: Path, source: str, needle: str) -> None:
    write(app_copy, source)
    proc = feedback(app_copy, "public_1", "--timeout", "2")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert any(ln.startswith("public_1  " + needle.split("  ")[0]) and needle in ln for ln in proc.stdout.splitlines()), proc.stdout
    assert "Traceback" not in proc.stderr


def test_missing_and_mistyped_fields_are_named(app_copy: Path) -> None:
    name = _field(canonjson.read(app_copy / "observations" / "manifest.json")["outputs"], "integer")
    write(app_copy, f"import json\nprint(json.dumps({{{name!r}: '12'}}))\n")
    proc = feedback(app_copy, "public_1")
    assert proc.returncode == 1
    assert f"public_1  {name}  WRONG_KIND  expected an integer, got string" in proc.stdout
    assert "MISSING  missing from the output" in proc.stdout


def test_bad_usage_exits_3(app_copy: Path) -> None:
    proc = feedback(app_copy, "public_99")
    assert proc.returncode == 3 and "unknown scenario id public_99" in proc.stderr
    proc = feedback(app_copy, "--bogus")
    assert proc.returncode == 3 and "Traceback" not in proc.stderr


def test_no_reconstruct_yet(app_copy: Path) -> None:
    proc = feedback(app_copy, "public_1")
    assert proc.returncode == 2 and "does not exist yet" in proc.stdout


def test_tampered_evidence_is_reported(app_copy: Path, lidar_task: Path, tmp_path: Path) -> None:
    import tarfile

    from recon.fsutil import reproducible_targz

    archive = app_copy / "observations" / "reference_outputs.tar.gz"
    unpacked = tmp_path / "u"
    with tarfile.open(archive) as tar:
        tar.extractall(unpacked, filter="data")
    out = unpacked / "public_3" / "oracle_output.json"
    doc = json.loads(out.read_text())
    doc[_field(canonjson.read(app_copy / "observations" / "manifest.json")["outputs"], "integer")] += 1
    out.write_text(json.dumps(doc))
    reproducible_targz(unpacked, archive)
    install_reference(app_copy, lidar_task)
    proc = feedback(app_copy, "public_1")
    assert "ALTERED  reference_outputs.tar.gz" in proc.stdout
    assert "ALTERED  public_3/oracle_output.json" in proc.stdout


def test_json_mode_and_works_from_any_location(app_copy: Path, lidar_task: Path, tmp_path: Path) -> None:
    install_reference(app_copy, lidar_task)
    env = {k: v for k, v in os.environ.items() if not k.startswith("RECON")}
    proc = subprocess.run([sys.executable, str(app_copy / "tools" / "feedback"), "public_1", "--json"],
                          capture_output=True, text=True, cwd=tmp_path, env=env)
    doc = json.loads(proc.stdout)
    assert doc["exit_code"] == 0 and doc["summary"]["scenarios_passed"] == 1
    assert proc.returncode == 0


@pytest.mark.parametrize("payload,needle", [
    ("'[' * 200000 + ']' * 200000", "nests 200000 levels deep"),
    ("'{\"count\": 1e999}'", "not a finite float"),
    ("'{\"count\": ' + '9' * 406 + '}'", "beyond +-2**63"),
])
def test_hostile_output_is_one_line_never_a_traceback(app_copy: Path, payload: str, needle: str) -> None:
    write(app_copy, f"import sys\nsys.stdin.read()\nsys.stdout.write({payload})\n")
    proc = feedback(app_copy, "public_1")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    [line] = [ln for ln in proc.stdout.splitlines() if ln.startswith("public_1  ")]
    assert line.startswith("public_1  INVALID JSON  unusable JSON on stdout") and needle in line, line
    assert "Traceback" not in proc.stderr and proc.stderr == ""
