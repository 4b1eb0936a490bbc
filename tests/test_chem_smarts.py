"""Tests of the built-in `chem_smarts` oracle (route enumeration) with the real RDKit (no mocks)."""
from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path

import pytest
from rdkit import Chem
from rdkit.Chem import AllChem, Crippen, Descriptors, QED, rdMolDescriptors
from rdkit.Chem.MolStandardize import rdMolStandardize

from recon import Registry, compare
from recon.artifacts.chem_smarts import REACTANT_SMILES, ROUTE_NAMES, chem_smarts
from recon.artifacts.chem_smarts import reference as ref

FIELDS = {"parent", "products", "n_products", "selected", "step_counts", "step_unchanged", "step_mw", "mw", "logp",
          "tpsa", "hba", "hbd", "rotb", "fsp3", "qed", "fp_on", "charge"}
DESCRIPTORS = {"mw", "logp", "tpsa", "hba", "hbd", "rotb", "fsp3", "qed", "fp_on", "charge"}

TYROSINE = "N[C@@H](Cc1ccc(O)cc1)C(=O)O"
BACLOFEN_HCL = "Cl.NC[C@H](CC(=O)O)c1ccc(Cl)cc1"
ASPIRIN = "CC(=O)Oc1ccccc1C(=O)O"
CHLORAMPHENICOL = "O=C(N[C@H](CO)[C@H](O)c1ccc([N+](=O)[O-])cc1)C(Cl)Cl"
MANDELATE = "COC(=O)[C@@H](O)c1ccccc1"
MEXILETINE_HCL = "Cc1cccc(C)c1OCC(C)N.Cl"
FOSFOMYCIN_TROMETAMOL = "C[C@@H]1O[C@@H]1P(=O)(O)O.NC(CO)(CO)CO"
HYDROXYNICOTINIC = "O=C(O)c1ccc(O)nc1"
METHIONINE = "CSCC[C@H](N)C(=O)O"
GUAIFENESIN = "COc1ccccc1OCC(O)CO"
GLUCOSIDE = "CO[C@H]1O[C@H](CO)[C@@H](O)[C@H](O)[C@H]1O"
CARNITINE = "C[N+](C)(C)C[C@H](O)CC(=O)[O-]"


def params(route: str, reactant: str, *, mode: str = "selective", stereo: str = "keep", cap: int = 4,
           radius: int = 2) -> dict:
    return {"route": route, "reactant": reactant, "site_mode": mode, "stereochemistry": stereo,
            "max_products": cap, "fingerprint_radius": radius}


def solve(route: str, reactant: str, **kw) -> dict:
    return ref.solve({"parameters": params(route, reactant, **kw), "inputs": {}})


def specs() -> dict:
    return chem_smarts.output_specs()


def test_declaration_matches_reference() -> None:
    assert chem_smarts.name == "chem_smarts" and chem_smarts.version == "2.0.0"
    assert set(chem_smarts.outputs) == FIELDS
    assert ROUTE_NAMES == list(ref.ROUTES) and REACTANT_SMILES == list(ref.REACTANTS)
    assert all(name in ref.TRANSFORMS for steps in ref.ROUTES.values() for name in steps)
    assert {len(steps) for steps in ref.ROUTES.values()} == {2, 3}
    assert len(chem_smarts.stages) >= 5
    salts = stereo = charged = 0
    for smi in REACTANT_SMILES:
        mol = Chem.MolFromSmiles(smi)
        assert mol is not None and Chem.MolToSmiles(mol) == smi   # the records are canonical SMILES
        salts += "." in smi
        stereo += bool(Chem.FindMolChiralCenters(mol, useLegacyImplementation=False))
        charged += any(a.GetFormalCharge() for a in mol.GetAtoms())
    assert salts >= 10 and stereo >= 10 and charged >= 5


def test_standardisation_makes_its_non_default_choices() -> None:
    # heavy atoms decide the parent: RDKit's default chooser (all atoms) keeps trometamol
    assert ref.standardise(FOSFOMYCIN_TROMETAMOL, "keep")["standardised"] == "C[C@@H]1O[C@@H]1P(=O)(O)O"
    default = rdMolStandardize.FragmentParent(Chem.MolFromSmiles(FOSFOMYCIN_TROMETAMOL))
    assert Chem.MolToSmiles(default) == "NC(CO)(CO)CO"
    # the hydroxypyridine record becomes the pyridone; salts and charges go
    assert ref.standardise(HYDROXYNICOTINIC, "keep")["standardised"] == "O=C(O)c1ccc(=O)[nH]c1"
    assert ref.standardise("COC(=O)[C@@H]([NH3+])CO.[Cl-]", "keep")["standardised"] == "COC(=O)[C@@H](N)CO"
    assert ref.standardise(CARNITINE, "keep")["standardised"] == CARNITINE   # the zwitterion stays
    # the canonical tautomer keeps the alpha stereocentre that RDKit's default would strip
    assert ref.standardise(TYROSINE, "keep")["standardised"] == TYROSINE
    stripped = rdMolStandardize.TautomerEnumerator().Canonicalize(Chem.MolFromSmiles(TYROSINE))
    assert "@" not in Chem.MolToSmiles(stripped)
    assert "@" not in ref.standardise(TYROSINE, "strip")["standardised"]


def test_known_routes() -> None:
    out = solve("boc_esterify_deprotect", BACLOFEN_HCL)
    assert out["products"] == ["COC(=O)C[C@@H](CN)c1ccc(Cl)cc1"] and out["step_counts"] == [1, 1, 1]
    assert out["selected"] == out["products"] and out["n_products"] == 1
    assert out["mw"] == pytest.approx(227.691, abs=1e-3)
    assert out["hbd"] == 2 and out["hba"] == 3          # Lipinski counts: NH2 is 2 donors
    assert out["charge"] == 1                           # the amine is protonated at pH 7.4
    # a free amine blocks the amide coupling (the molecule is refused, nothing else reacts)
    blocked = solve("couple_reduce", TYROSINE)
    assert blocked["products"] == [] and blocked["step_counts"] == [0, 0]
    assert solve("boc_couple_deprotect", TYROSINE)["products"] == ["N[C@@H](Cc1ccc(O)cc1)C(=O)NCc1ccccc1"]
    # acetic acid from the aryl acetate is a by-product; the amine-free compound passes step 1
    out = solve("methylate_hydrolyse", ASPIRIN)
    assert out["products"] == ["O=C(O)c1ccccc1O"] and out["step_counts"] == [1, 1]
    assert out["step_unchanged"] == [1, 0] and out["parent"] == [ASPIRIN]
    # no net change: Boc on, nothing to esterify, Boc off gives the compound back
    out = solve("boc_esterify_deprotect", MEXILETINE_HCL)
    assert out["products"] == [] and out["step_counts"] == [1, 1, 0] and out["mw"] == 0.0
    # TPSA counts sulfur (thioether 25.30) on top of N and O
    out = solve("boc_esterify_deprotect", METHIONINE)
    mol = Chem.MolFromSmiles(out["selected"][0])
    assert out["tpsa"] == pytest.approx(rdMolDescriptors.CalcTPSA(mol) + 25.30, abs=1e-6)


def test_site_modes_and_stereo_modes() -> None:
    # selective: primary before secondary alcohol; every_site: both; exhaustive: both at once
    sel = solve("boc_oxidise_deprotect", CHLORAMPHENICOL, mode="selective")
    assert sel["products"] == ["O=C[C@@H](NC(=O)C(Cl)Cl)[C@H](O)c1ccc([N+](=O)[O-])cc1"]
    every = solve("boc_oxidise_deprotect", CHLORAMPHENICOL, mode="every_site")
    assert every["n_products"] == 2 and set(sel["products"]) < set(every["products"])
    exh = solve("boc_oxidise_deprotect", CHLORAMPHENICOL, mode="exhaustive")
    assert exh["products"] == ["O=C[C@@H](NC(=O)C(Cl)Cl)C(=O)c1ccc([N+](=O)[O-])cc1"]
    # acetylation: the alcohols and phenols form one class, so selective gives regioisomers
    assert solve("acetylate_brominate", GLUCOSIDE, mode="selective")["step_counts"][0] == 4
    # a new stereocentre: unassigned under keep, both epimers under enumerate
    keep = solve("oxidise_aminate", MANDELATE, stereo="keep")
    enum = solve("oxidise_aminate", MANDELATE, stereo="enumerate")
    strip = solve("oxidise_aminate", MANDELATE, stereo="strip")
    assert keep["products"] == strip["products"] == ["COC(=O)C(c1ccccc1)N1CCOCC1"]
    assert enum["n_products"] == 2 and all("@" in s for s in enum["products"])


def test_ranking_and_cap() -> None:
    t = ref.trace(params("acetylate_brominate", GUAIFENESIN, mode="every_site", stereo="enumerate", cap=3))
    for step in t["steps"]:
        ranked = [c["smiles"] for c in step.candidates if c["status"] in ("kept", "capped")]
        assert len(ranked) == step.counts["products"] and step.kept == ranked[:3]
        # independently: most heavy atoms, then highest QED (4 decimals), then the string
        keys = [(-Chem.MolFromSmiles(s).GetNumHeavyAtoms(), -round(QED.qed(Chem.MolFromSmiles(s)), 4), s)
                for s in ranked]
        assert keys == sorted(keys)
    out = ref.outputs(t, params("acetylate_brominate", GUAIFENESIN, mode="every_site", stereo="enumerate", cap=3))
    assert out["step_counts"] == [4, 12] and out["n_products"] == 3      # 3 inputs x 4 bromides
    assert out["selected"] == [t["steps"][-1].kept[0]]
    # a cap of one keeps only the best-ranked molecule at every step
    one = solve("acetylate_brominate", GUAIFENESIN, mode="every_site", stereo="enumerate", cap=1)
    assert one["n_products"] == 1 and one["step_counts"] == [4, 4]


def test_evidence_files(tmp_path: Path) -> None:
    p = params("acetylate_brominate", GUAIFENESIN, mode="every_site", stereo="enumerate", cap=2)
    out = chem_smarts(p, tmp_path)
    assert set(out) == FIELDS
    t = ref.trace(p)
    mols = list(Chem.SDMolSupplier(str(tmp_path / "route.sdf")))
    rows = [(i, c) for i, s in enumerate(t["steps"], 1) for c in s.candidates]
    assert len(mols) == len(rows) and all(m is not None for m in mols)
    for mol, (i, row) in zip(mols, rows):
        # the structure (stereo included) survives the 0.01 A depiction
        assert Chem.MolToSmiles(mol) == row["smiles"]
        assert mol.GetProp("step") == str(i) and mol.GetProp("status") == row["status"]
        assert mol.GetProp("rank") == str(row["rank"])
    kept_last = [Chem.MolToSmiles(m) for m in mols if m.GetProp("step") == "2" and m.GetProp("status") == "kept"]
    assert sorted(kept_last) == out["products"]
    summary = json.loads((tmp_path / "route_summary.json").read_text())
    assert summary["transformations"] == ["acetylation", "aromatic_bromination"]
    assert [s["products"] for s in summary["steps"]] == out["step_counts"]
    assert summary["selected"] == out["selected"][0]
    bits = summary["selected_fingerprint_bits"]
    assert len(bits) == out["fp_on"] and max(bits) < 1024
    std = json.loads((tmp_path / "standardisation.json").read_text())
    assert std["name"] == "guaifenesin" and std["standardised"] == GUAIFENESIN
    # the compound is refused by the first step, so no step holds anything: a 0-byte SD
    # file, which the stream reader reads as empty
    empty = tmp_path / "empty"
    assert chem_smarts(params("couple_reduce", TYROSINE), empty)["products"] == []
    sdf = empty / "route.sdf"
    assert sdf.stat().st_size == 0
    with sdf.open("rb") as fh:
        assert list(Chem.ForwardSDMolSupplier(fh)) == []
    assert json.loads((empty / "route_summary.json").read_text())["selected"] is None


def test_every_axis_corner_succeeds(tmp_path: Path) -> None:
    axes = chem_smarts.axes
    names = sorted(axes)
    seen_products = 0
    for i, combo in enumerate(itertools.product(*(axes[n].edges() for n in names))):
        p = dict(zip(names, combo))
        out = chem_smarts(p, tmp_path / str(i))
        for field, spec in specs().items():
            assert compare.kind_error(spec, out[field]) is None, (field, out[field])
        assert out["n_products"] == len(out["products"]) <= p["max_products"]
        assert len(out["step_counts"]) == len(out["step_mw"]) == len(out["step_unchanged"]) == \
            len(ref.ROUTES[p["route"]])
        assert len(out["parent"]) == 1
        seen_products += out["n_products"] > 0
        if not out["products"]:
            assert all(out[k] == 0 for k in DESCRIPTORS) and out["selected"] == []
    assert seen_products > 0


def test_about_half_of_the_space_gives_products() -> None:
    productive = total = 0
    for route, reactant in itertools.product(ROUTE_NAMES, REACTANT_SMILES[::4]):
        total += 1
        productive += solve(route, reactant, mode="every_site", cap=2)["n_products"] > 0
    assert 0.3 < productive / total < 0.7


def test_program_matches_module_and_is_deterministic(tmp_path: Path) -> None:
    p = params("tbs_acetylate_deprotect", "Cl.NCCc1ccc(O)c(O)c1", mode="every_site", stereo="enumerate", cap=3,
               radius=3)
    a = ref.solve({"parameters": p, "inputs": {}})
    assert a == ref.solve({"parameters": dict(p), "inputs": {}})
    assert chem_smarts(p, tmp_path) == a
    scenario = {"task": "chem_smarts", "id": "public_1", "parameters": p, "inputs": {}}
    run = subprocess.run([sys.executable, str(Path(ref.__file__))], input=json.dumps(scenario),
                         capture_output=True, text=True, timeout=60, check=True)
    assert json.loads(run.stdout) == a
    # the radius matters for fp_on and for nothing else
    b = ref.solve({"parameters": {**p, "fingerprint_radius": 1}, "inputs": {}})
    assert b["fp_on"] < a["fp_on"] and {k: v for k, v in b.items() if k != "fp_on"} == \
        {k: v for k, v in a.items() if k != "fp_on"}


def test_tolerances_admit_independent_descriptors_and_reject_wrong_ones() -> None:
    sp = specs()
    out = solve("boc_esterify_deprotect", METHIONINE)
    mol = Chem.MolFromSmiles(out["selected"][0])
    # independent routes to the same numbers: Crippen contributions summed in reverse,
    # average mass from the periodic table, the legacy Morgan API, QED from its properties
    logp = sum(c[0] for c in reversed(rdMolDescriptors._CalcCrippenContribs(Chem.AddHs(mol))))
    assert compare.within(sp["logp"], logp, out["logp"])
    table = Chem.GetPeriodicTable()
    mw = sum(table.GetAtomicWeight(a.GetAtomicNum()) for a in Chem.AddHs(mol).GetAtoms())
    assert compare.within(sp["mw"], mw, out["mw"])
    legacy = AllChem.GetMorganFingerprintAsBitVect(mol, 2, nBits=1024).GetNumOnBits()
    assert compare.within(sp["fp_on"], legacy, out["fp_on"])
    props = QED.properties(mol)
    assert compare.within(sp["qed"], QED.qed(mol, w=QED.WEIGHT_MEAN, qedProperties=props), out["qed"])
    # and wrong ones fail: monoisotopic mass, TPSA without S, RDKit's default acceptor count,
    # QED with the max weights, Crippen molar refractivity instead of logP
    assert not compare.within(sp["mw"], Descriptors.ExactMolWt(mol), out["mw"])
    assert not compare.within(sp["tpsa"], rdMolDescriptors.CalcTPSA(mol), out["tpsa"])
    assert not compare.within(sp["hba"], rdMolDescriptors.CalcNumHBA(mol), out["hba"])
    assert not compare.within(sp["qed"], QED.qed(mol, w=QED.WEIGHT_MAX), out["qed"])
    assert not compare.within(sp["logp"], Crippen.MolMR(mol), out["logp"])
    # a product set in another SMILES spelling passes; without its stereo it does not
    other = [Chem.MolToSmiles(Chem.MolFromSmiles(s), doRandom=True) for s in out["products"]]
    assert compare.within(sp["products"], other, out["products"])
    flat = [Chem.MolToSmiles(Chem.MolFromSmiles(s), isomericSmiles=False) for s in out["products"]]
    assert not compare.within(sp["products"], flat, out["products"])


def test_fingerprint_size_is_observable() -> None:
    """1024 bits is not 2048: on some product of the space the counts differ (collisions)."""
    differ = 0
    for route, reactant in itertools.product(ROUTE_NAMES[:6], REACTANT_SMILES[::3]):
        out = solve(route, reactant, mode="exhaustive", radius=3)
        if out["selected"]:
            mol = Chem.MolFromSmiles(out["selected"][0])
            differ += AllChem.GetMorganFingerprintAsBitVect(mol, 3, nBits=2048).GetNumOnBits() != out["fp_on"]
    assert differ > 0


@pytest.fixture(scope="module")
def built_task(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from recon.build import build_task

    registry = Registry.default(entry_points=False)
    out = tmp_path_factory.mktemp("chem")
    return build_task(registry, "chem_smarts", out, n_public=24, n_hidden=6, workers=2, select="random").path


def test_baselines_earn_partial_credit(built_task: Path) -> None:
    from recon.baselines import grade_baselines

    rows = grade_baselines(built_task, runtime="local")
    assert [r.name for r in rows] == ["expert", "textbook"]
    for row in rows:
        assert 0.0 < row.reward < 1.0, (row.name, row.reward, row.detail)
        assert row.rung >= 3, (row.name, row.detail)   # they speak the contract
