"""Tests of the built-in `pdb_ensemble` oracle with real gemmi (no mocks)."""
from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

gemmi = pytest.importorskip("gemmi")

import numpy as np  # noqa: E402

from recon import Registry  # noqa: E402
from recon.artifacts.pdb_ensemble import analyse, pdb_ensemble  # noqa: E402
from recon.artifacts.pdb_ensemble import reference as ref  # noqa: E402
from recon.audit import grade_baselines  # noqa: E402
from recon.build import build_task  # noqa: E402
from recon.grader import grade  # noqa: E402

FIELDS = {"n_residues", "fit_pairs", "fit_rmsd", "mean_fit_rmsd", "rmsf_mean", "steadiest", "core", "n_core",
          "core_rmsd", "medoid_model", "medoid_rmsd", "ligand_contacts", "ligand_site", "ligand_waters",
          "polymer_contacts", "helical_hbonds"}
EVIDENCE = {"fit.csv", "residues.csv", "contacts.csv", "fitted.pdb"}


def params(**kw: Any) -> dict[str, Any]:
    base = {"n_models": 8, "n_residues": 36, "flexibility": 1.5, "altloc_fraction": 0.15, "missing_fraction": 0.05,
            "chain_break": True, "selenomethionine": True, "selection": "mainchain", "trim_cycles": 2,
            "trim_cutoff": 2.0, "core_cutoff": 0.8, "contact_cutoff": 4.0, "seed": 7}
    base.update(kw)
    return base


def run(p: dict[str, Any], root: Path) -> tuple[dict[str, Any], Path, dict[str, Path]]:
    inputs = pdb_ensemble.make_inputs(p, root / "inputs")
    return pdb_ensemble(p, root / "evidence", inputs), root / "evidence", inputs


def scenario(p: dict[str, Any], inputs: dict[str, Path]) -> dict[str, Any]:
    return {"task": "pdb_ensemble", "id": "public_1", "parameters": p,
            "inputs": {k: str(v) for k, v in inputs.items()}}


def mismatches(got: dict[str, Any], want: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    return [(f, got[f], want[f]) for f, o in pdb_ensemble.outputs.items() if not o.compare(got[f], want[f])]


def check_outputs(out: dict[str, Any], p: dict[str, Any]) -> None:
    assert set(out) == FIELDS
    json.dumps(out, allow_nan=False)
    n = p["n_models"]
    assert len(out["fit_pairs"]) == len(out["fit_rmsd"]) == len(out["core_rmsd"]) == n - 1
    assert out["n_residues"] == p["n_residues"]
    assert out["n_core"] == len(out["core"]) >= 4
    assert 1 <= out["medoid_model"] <= n
    assert all(type(v) is int and v >= 3 for v in out["fit_pairs"])
    assert all(math.isfinite(v) and v >= 0 for v in out["fit_rmsd"] + out["core_rmsd"])
    assert abs(out["mean_fit_rmsd"] - sum(out["fit_rmsd"]) / (n - 1)) < 1e-12
    assert out["ligand_contacts"] >= len(out["ligand_site"])


@pytest.fixture(scope="module")
def typical(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], dict[str, Any], Path, dict[str, Path]]:
    p = params()
    out, ev, inputs = run(p, tmp_path_factory.mktemp("typical"))
    return p, out, ev, inputs


# ------------------------------------------------------------------ the oracle itself
def test_outputs_and_evidence_agree(typical: Any) -> None:
    p, out, ev, _ = typical
    check_outputs(out, p)
    assert {f.name for f in ev.iterdir()} == EVIDENCE == set(pdb_ensemble.evidence)
    assert pdb_ensemble.evidence_level == "summary"
    assert set(pdb_ensemble.published_evidence()) == {"fit.csv", "residues.csv"}
    fit = [line.split(",") for line in (ev / "fit.csv").read_text().splitlines()[1:]]
    assert [int(r[0]) for r in fit] == list(range(1, p["n_models"] + 1))
    assert [int(r[2]) for r in fit[1:]] == out["fit_pairs"]
    assert all(int(r[1]) >= int(r[2]) for r in fit[1:])           # trimming only removes pairs
    res = [line.split(",") for line in (ev / "residues.csv").read_text().splitlines()[1:]]
    assert len(res) == out["n_residues"]
    assert [r[1] for r in res if r[6] == "1"] == out["core"]
    assert sum(int(r[7]) for r in res) == out["ligand_contacts"]
    assert {r[1] for r in res if int(r[7]) > 0} == set(out["ligand_site"])
    assert any(r[3] == "HETATM" and r[2] == "MSE" for r in res)
    rows = (ev / "contacts.csv").read_text().splitlines()[1:]
    assert len(rows) >= out["ligand_contacts"] + out["polymer_contacts"]
    assert all(float(r.split(",")[-1]) <= p["contact_cutoff"] + 5e-4 for r in rows)   # 4 significant digits
    st = gemmi.read_structure(str(ev / "fitted.pdb"))
    assert len(st) == p["n_models"]


def test_fit_pairs_only_atoms_without_altloc(typical: Any) -> None:
    p, out, _, inputs = typical
    models = ref.read_pdb(str(inputs["ensemble"]))
    polys = [ref.polymer(m) for m in models]
    plain = sum(1 for r1, r2 in zip(polys[0], polys[1]) for name in ref.MAINCHAIN
                if ref.find_atom(r1, name[0], name[1], any_alt=False) and ref.find_atom(r2, name[0], name[1], any_alt=False))
    anyalt = sum(1 for r1, r2 in zip(polys[0], polys[1]) for name in ref.MAINCHAIN
                 if ref.find_atom(r1, name[0], name[1]) and ref.find_atom(r2, name[0], name[1]))
    st = gemmi.read_structure(str(inputs["ensemble"]))
    st.setup_entities()
    sup = gemmi.calculate_superposition(st[0]["A"].get_polymer(), st[1]["A"].get_polymer(),
                                        gemmi.PolymerType.PeptideL, gemmi.SupSelect.MainChain)
    assert sup.count == plain < anyalt       # the file has whole-residue altlocs; gemmi leaves them out


@pytest.mark.parametrize("corner", ["lo", "hi", "mixed"])
def test_axis_corners(tmp_path: Path, corner: str) -> None:
    axes = pdb_ensemble.axes
    pick = {"lo": lambda a: a.edges()[0], "hi": lambda a: a.edges()[-1]}
    if corner == "mixed":
        p = {n: axes[n].edges()[i % len(axes[n].edges())] for i, n in enumerate(sorted(axes))}
    else:
        p = {n: pick[corner](a) for n, a in axes.items()}
    p["seed"] = 2**31 - 1 if corner == "hi" else 0
    out, _, inputs = run(p, tmp_path)
    check_outputs(out, p)
    assert inputs["ensemble"].stat().st_size < 1_000_000
    assert ref.solve(scenario(p, inputs)) is not None
    assert mismatches(ref.solve(scenario(p, inputs)), out) == []


def test_core_floor_and_flexibility(tmp_path: Path) -> None:
    p = params(flexibility=2.5, core_cutoff=0.3, seed=11)
    out, _, inputs = run(p, tmp_path / "floor")
    _, detail = analyse(p, inputs["ensemble"])
    qualifying = [r for r in detail["rmsf"] if r is not None and r <= 0.3]
    assert len(qualifying) < 4 and out["n_core"] == 4
    steady = sorted(r for r in detail["rmsf"] if r is not None)[:4]
    assert sorted(detail["rmsf"][i] for i in detail["core"]) == steady
    # a stiff ensemble with a generous cutoff keeps nearly all residues
    q, _, _ = run(params(flexibility=0.5, core_cutoff=1.5, seed=11), tmp_path / "stiff")
    assert q["n_core"] > 0.7 * q["n_residues"] and q["rmsf_mean"] < out["rmsf_mean"]


# ------------------------------------------------------------ reference vs oracle
def test_reference_program_matches_oracle(tmp_path: Path) -> None:
    for k, p in enumerate([params(), params(selection="CA", trim_cycles=0, seed=3, chain_break=False),
                           params(selection="all", trim_cycles=4, trim_cutoff=1.5, seed=5, n_models=5)]):
        out, _, inputs = run(p, tmp_path / str(k))
        proc = subprocess.run([sys.executable, str(pdb_ensemble.reference)], input=json.dumps(scenario(p, inputs)),
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        got = json.loads(proc.stdout)
        assert mismatches(got, out) == []
        assert got["fit_pairs"] == out["fit_pairs"] and got["core"] == out["core"]


def _patched(sc: dict[str, Any], **swap: Any) -> dict[str, Any]:
    old = {k: getattr(ref, k) for k in swap}
    try:
        for k, v in swap.items():
            setattr(ref, k, v)
        return ref.solve(sc)
    finally:
        for k, v in old.items():
            setattr(ref, k, v)


_KABSCH = ref.kabsch
WRONG: dict[str, tuple[dict[str, Any], set[str]]] = {
    "no bonded exclusion": ({"PEPTIDE_BOND_SQ": 0.0}, {"polymer_contacts"}),
    "unweighted core refit": ({"kabsch": lambda p1, p2, w=None: _KABSCH(p1, p2, None)}, {"core_rmsd"}),
    "altloc atoms in the fit": ({"fit_pairs": lambda r1, r2, s: _pairs_any_alt(r1, r2, s)}, {"fit_pairs"}),
}


def _pairs_any_alt(ref_res: list[dict[str, Any]], mob: list[dict[str, Any]], selection: str) -> Any:
    p1, p2 = [], []
    for r1, r2 in zip(ref_res, mob):
        for name, el in ref.MAINCHAIN:
            a1, a2 = ref.find_atom(r1, name, el), ref.find_atom(r2, name, el)
            if a1 is not None and a2 is not None:
                p1.append(a1["xyz"])
                p2.append(a2["xyz"])
    return np.array(p1), np.array(p2)


@pytest.mark.parametrize("name", sorted(WRONG))
def test_a_wrong_rule_fails(typical: Any, name: str) -> None:
    p, out, _, inputs = typical
    swap, must = WRONG[name]
    failed = {f for f, _, _ in mismatches(_patched(scenario(p, inputs), **swap), out)}
    assert must <= failed, failed


def test_deterministic_inputs(tmp_path: Path) -> None:
    a = pdb_ensemble.make_inputs(params(seed=99), tmp_path / "a")
    b = pdb_ensemble.make_inputs(params(seed=99), tmp_path / "b")
    c = pdb_ensemble.make_inputs(params(seed=100), tmp_path / "c")
    assert a["ensemble"].read_bytes() == b["ensemble"].read_bytes() != c["ensemble"].read_bytes()
    text = a["ensemble"].read_text()
    assert "HETATM" in text and " HOH " in text and "MODEL        8" in text and "CRYST1    1.000" in text


# ------------------------------------------------------------------ built task
@pytest.fixture(scope="module")
def small_task(tmp_path_factory: pytest.TempPathFactory) -> Path:
    registry = Registry.default(entry_points=False)
    return build_task(registry, "pdb_ensemble", tmp_path_factory.mktemp("pdb_small"), n_public=3, n_hidden=2,
                      probes=1, workers=1, select="random").path


def test_reference_grades_one_and_baselines_fall_short(small_task: Path) -> None:
    doc = grade(small_task, small_task / "solution", runtime="local", nonce="pdb-test", probes=1, workers=1)
    assert doc["reward"] == 1.0
    rows = {r.name: r for r in grade_baselines(small_task, pdb_ensemble, runtime="local")}
    assert set(rows) == {"textbook", "expert"}
    for row in rows.values():
        assert 0.5 < row.reward < 1.0, (row.name, row.reward, row.detail)
