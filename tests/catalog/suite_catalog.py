"""The whole catalog, validated as a release needs: every built-in task built by default,
`recon validate` passing every row, and Harbor's oracle and nop agents scoring 1.0 and 0
on a real Docker engine. Too long for CI (minutes per task); CI instead checks that the
record this suite writes (``RECON_CATALOG_RECORD=1``) is current for every task's files
(tests/test_catalog_record.py)."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

import record
from recon import Registry
from recon.build import build_task
from recon.mutation.selection import SELECTION_ALGORITHM
from recon.registry import BUILTIN_PACKAGE
from recon.stats import task_stats
from recon.validate import validate

REGISTRY = Registry.default(entry_points=False)
NAMES = [n for n in REGISTRY.names() if REGISTRY.source(n).startswith(f"built-in {BUILTIN_PACKAGE}.")]
if os.environ.get("RECON_CATALOG_TASKS"):
    NAMES = [n for n in NAMES if n in os.environ["RECON_CATALOG_TASKS"].split(",")]


def _harbor_rewards(task: Path, tmp: Path) -> dict[str, float]:
    from test_harbor import _harbor, _harbor_run, _public_copy  # the Harbor helpers of the default suite

    exe = _harbor()
    if exe is None:
        pytest.fail("the catalog suite runs every task under Harbor: install it (see .ci/run)")
    copy = _public_copy(task, tmp / "public")
    out = {}
    for agent in ("oracle", "nop"):
        [trial] = _harbor_run(exe, ["-p", str(copy)], agent, tmp / f"jobs-{agent}")
        out[agent] = float(trial["result"]["verifier_result"]["rewards"]["reward"])
    return out


@pytest.mark.parametrize("name", NAMES)
def test_catalog_task(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECON_HOME", str(tmp_path / "home"))   # a new user's machine: cold caches
    oracle = REGISTRY.get(name)
    built = build_task(REGISTRY, name, tmp_path / "tasks", workers=2)
    rows, work = validate(built.path, runtime="auto", registry=REGISTRY, workers=2)
    by = {r.name: r for r in rows}
    failed = [f"{r.name}: {r.detail}" for r in rows if not r.passed]
    harbor = _harbor_rewards(built.path, tmp_path)
    stats = task_stats(built.path, run=False)
    mutation = by.get("mutation score")
    rec: dict[str, Any] = {
        "digest": record.task_digest(name), "selection_algorithm": SELECTION_ALGORITHM,
        "mutants": record.mutants_digest(oracle.reference),
        "version": oracle.version, "domain": oracle.domain,
        "tool": ", ".join(oracle.requires or oracle.toolkit), "toolkit": list(oracle.toolkit),
        "stages": len(oracle.stages), "work": work, "evidence_level": stats["evidence"]["level"],
        "n_public": stats["n_public"], "n_hidden": stats["n_hidden"], "probes": stats["probes"],
        "baselines": {r.name.removeprefix("baseline "): r.reward for r in rows if r.name.startswith("baseline ")},
        "mutation_score": None if mutation is None else mutation.reward,
        "power": by["power"].reward, "fairness": by["fairness"].detail,
        "validate": "passed" if not failed else "failed", "harbor": harbor,
        "build_seconds": round(built.oracle_seconds, 1),
    }
    if os.environ.get("RECON_CATALOG_RECORD") == "1" and not failed and harbor == {"oracle": 1.0, "nop": 0.0}:
        record.update(name, rec)
    if failed:
        # what the build's stress selection saw and published, to tell a budget cut from a
        # behaviour no draw of the build showed
        sel = built.path / "tests" / "selection.json"
        if sel.is_file():
            doc = json.loads(sel.read_text(encoding="utf-8"))
            print("selection report:", json.dumps({k: v for k, v in doc.items()
                                                   if k not in ("killable", "hidden_only", "reference")}))
    assert not failed, failed
    assert harbor == {"oracle": 1.0, "nop": 0.0}
