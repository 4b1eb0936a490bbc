"""Every built-in task's recorded validation is current: its files are the ones the
catalog suite validated (docs/catalog.json), its scenarios were chosen by the selection
algorithm recon runs now from the mutants recon's operators make of its reference now, and
docs/catalog.md is the page rendered from that record. A task changed, a new selection
algorithm, or operators that make other mutants of a task's reference, without running the
catalog suite again for it, fails here."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "catalog"))
import record  # noqa: E402

from recon import Registry  # noqa: E402
from recon.mutation.operators import OPERATORS  # noqa: E402
from recon.mutation.selection import SELECTION_ALGORITHM  # noqa: E402
from recon.registry import BUILTIN_PACKAGE  # noqa: E402

REGISTRY = Registry.default(entry_points=False)
NAMES = [n for n in REGISTRY.names() if REGISTRY.source(n).startswith(f"built-in {BUILTIN_PACKAGE}.")]
FIX = ("run the catalog suite for it and record the result: "
       "RECON_CATALOG_RECORD=1 RECON_CATALOG_TASKS={name} pytest tests/catalog -m catalog")


@pytest.mark.parametrize("name", NAMES)
def test_the_recorded_validation_matches_the_task_files(name: str) -> None:
    rec = record.load()["tasks"].get(name)
    assert rec is not None, f"{name} has no recorded validation; " + FIX.format(name=name)
    if rec["validate"] == "pending":
        # Listed as not validated on the catalog page, with the reason: never a stale pass.
        assert rec.get("reason") and "digest" not in rec, f"{name}: a pending record says why and claims no files"
        return
    assert rec["digest"] == record.task_digest(name), (
        f"{name}'s files changed since its recorded validation; " + FIX.format(name=name))
    assert rec.get("selection_algorithm") == SELECTION_ALGORITHM, (
        f"{name} was validated on scenarios chosen by selection algorithm "
        f"{rec.get('selection_algorithm', 'unrecorded')}; "
        f"recon now selects with algorithm {SELECTION_ALGORITHM}, so a build publishes and withholds other "
        "scenarios; " + FIX.format(name=name))
    assert rec.get("mutants") == record.mutants_digest(REGISTRY.get(name).reference), (
        f"recon's mutation operators now make other mutants of {name}'s reference than the ones its recorded "
        "build chose scenarios by, so a build publishes and withholds other scenarios; " + FIX.format(name=name))
    assert rec["validate"] == "passed" and rec["harbor"] == {"oracle": 1.0, "nop": 0.0}
    assert rec["power"] <= 0.05 and rec["mutation_score"] >= 0.9


def test_the_catalog_page_is_rendered_from_the_records() -> None:
    doc = record.load()
    assert sorted(doc["tasks"]) == sorted(NAMES), "docs/catalog.json lists other tasks than the built-ins"
    assert record.PAGE.read_text(encoding="utf-8") == record.render(doc), (
        "docs/catalog.md was edited by hand or not regenerated: edit docs/catalog.json (trials, notes) and run "
        "python tests/catalog/record.py, or record with the catalog suite")


def test_a_new_operator_changes_the_mutants_digest_of_the_references_it_applies_to(tmp_path: Path) -> None:
    """The mutants digest follows the operators: one that makes no mutant of a reference
    leaves its digest (and record) alone."""
    spread, plain = tmp_path / "spread.py", tmp_path / "plain.py"
    spread.write_text("def f(a):\n    return a.std() + 1\n")
    plain.write_text("def f(a):\n    return a.sum() + 1\n")
    without = [op for op in OPERATORS if op != "ddof"]
    assert record.mutants_digest(spread) != record.mutants_digest(spread, operators=without)
    assert record.mutants_digest(plain) == record.mutants_digest(plain, operators=without)


def test_a_changed_file_changes_the_digest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = tmp_path / "artifacts" / "demo"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("x = 1\n")
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "demo.toml").write_text("n_public = 3\n")
    monkeypatch.setattr(record, "ROOT", tmp_path)
    first = record.task_digest("demo")
    (tmp_path / "scenarios" / "demo.toml").write_text("n_public = 4\n")
    assert record.task_digest("demo") != first
