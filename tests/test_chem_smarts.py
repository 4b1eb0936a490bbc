"""Tests of the built-in `chem_smarts` oracle (a route under conditions, worked up) with the real RDKit (no mocks)."""
from __future__ import annotations

import itertools
import json
import math
import random
import subprocess
import sys
import types
from collections import Counter
from pathlib import Path

import pytest
from rdkit import Chem
from rdkit.Chem import Crippen, Descriptors, QED, rdMolDescriptors
from rdkit.Chem.MolStandardize import rdMolStandardize

from recon import Registry, compare
from recon.artifacts.chem_smarts import CASES, chem_smarts
from recon.artifacts.chem_smarts import reference as ref

FIELDS = {"products", "n_products", "selected", "phase", "n_species", "crude_pct", "yield_pct", "purity_pct",
          "product_yields_pct", "recovered_pct", "mw", "logp", "tpsa", "qed", "charge", "isolated_pct",
          "isolated_purity_pct", "kept_pct"}
ISOLATION = ("isolated_pct", "isolated_purity_pct", "kept_pct")
DESCRIPTORS = {"yield_pct", "purity_pct", "mw", "logp", "tpsa", "qed", "charge"}
AMOUNTS = ("crude_pct", "yield_pct", "purity_pct", "product_yields_pct", "recovered_pct") + ISOLATION
NAMES = {name: smi for smi, name in ref.REACTANTS.items()}

TYROSINE = "N[C@@H](Cc1ccc(O)cc1)C(=O)O"
FOSFOMYCIN_TROMETAMOL = "C[C@@H]1O[C@@H]1P(=O)(O)O.NC(CO)(CO)CO"
CHOLINE_SALICYLATE = "C[N+](C)(C)CCO.O=C([O-])c1ccccc1O"
HYDROXYNICOTINIC = "O=C(O)c1ccc(O)nc1"
CARNITINE = "C[N+](C)(C)C[C@H](O)CC(=O)[O-]"


def case(route: str, name: str) -> str:
    value = f"{route}: {NAMES[name]}"
    assert value in CASES, value
    return value


def params(case_: str, *, temperature: int = 25, equivalents: int = 1, ph: float = 7.0, stereo: str = "keep",
           cap: int = 4) -> dict:
    return {"case": case_, "temperature": temperature, "equivalents": equivalents, "workup_ph": ph,
            "stereochemistry": stereo, "max_products": cap}


def share(rate: float, weight: float, reagent: float) -> float:
    """The share of a molecule that reacts in one round, written from the recipe."""
    return 1.0 - math.exp(-rate * weight * reagent)


def solve(case_: str, **kw) -> dict:
    return ref.solve({"parameters": params(case_, **kw), "inputs": {}})


def crude(case_: str, **kw) -> dict[str, float]:
    return {s: float(a) for s, a in ref.trace(params(case_, **kw))["workup"].crude.items()}


def test_declaration_matches_reference() -> None:
    assert chem_smarts.name == "chem_smarts" and chem_smarts.version == "5.0.0"
    assert set(chem_smarts.outputs) == FIELDS and 10 <= len(FIELDS) <= 20
    assert len(chem_smarts.stages) >= 5
    routes = Counter()
    for value in CASES:
        route, record = ref.parse_case(value)
        assert route in ref.ROUTES and record in ref.REACTANTS
        mol = Chem.MolFromSmiles(record)
        assert mol is not None and Chem.MolToSmiles(mol) == record   # the records are canonical SMILES
        routes[route] += 1
    assert set(routes) == set(ref.ROUTES) and min(routes.values()) >= 4   # every route on several compounds
    used = {name for steps in ref.ROUTES.values() for name in steps}
    assert used == set(ref.TRANSFORMS)
    assert chem_smarts.axes["temperature"].values == list(ref.TEMPERATURES)
    # the per-step outputs are gone: nothing exposes one stage alone
    assert not any(name.startswith("step_") for name in chem_smarts.outputs) and "parent" not in chem_smarts.outputs
    assert chem_smarts.evidence_level == "outputs"


def test_standardisation_makes_its_non_default_choices() -> None:
    # heavy atoms decide the parent: RDKit's default chooser (all atoms) keeps the counter-ion
    assert ref.standardise(FOSFOMYCIN_TROMETAMOL, "keep")["standardised"] == "C[C@@H]1O[C@@H]1P(=O)(O)O"
    default = rdMolStandardize.FragmentParent(Chem.MolFromSmiles(FOSFOMYCIN_TROMETAMOL))
    assert Chem.MolToSmiles(default) == "NC(CO)(CO)CO"
    assert ref.standardise(CHOLINE_SALICYLATE, "keep")["standardised"] == "O=C(O)c1ccccc1O"
    # the hydroxypyridine record becomes the pyridone; salts and charges go
    assert ref.standardise(HYDROXYNICOTINIC, "keep")["standardised"] == "O=C(O)c1ccc(=O)[nH]c1"
    assert ref.standardise("COC(=O)[C@@H]([NH3+])CO.[Cl-]", "keep")["standardised"] == "COC(=O)[C@@H](N)CO"
    assert ref.standardise(CARNITINE, "keep")["standardised"] == CARNITINE   # the zwitterion stays
    # the canonical tautomer keeps the alpha stereocentre that RDKit's default would strip
    assert ref.standardise(TYROSINE, "keep")["standardised"] == TYROSINE
    stripped = rdMolStandardize.TautomerEnumerator().Canonicalize(Chem.MolFromSmiles(TYROSINE))
    assert "@" not in Chem.MolToSmiles(stripped)
    assert "@" not in ref.standardise(TYROSINE, "strip")["standardised"]


def test_a_route_worked_by_hand() -> None:
    """Boc on, esterify, Boc off on tyrosine at 25 C with two equivalents, worked up at pH 7."""
    c = case("boc_esterify_deprotect", "L-tyrosine")
    # Boc: the amine N (primary amine, reacts from 0 C: one level above, rate 1.6) has two
    # heavy atoms two bonds away (CB, the acid C): factor 2/3; two equivalents of reagent.
    # The Boc-amino acid has no further site.
    boc = share(1.6, 2 / 3, 2)
    # Esterification (from 25 C: rate 0.9) at the acid C, crowded by N and CB: 2/3; both
    # molecules at once, with two equivalents; a second round finds no acid left.
    ester = share(0.9, 2 / 3, 2)
    bocester, bocacid, tyrester = 100 * boc * ester, 100 * boc * (1 - ester), 100 * (1 - boc) * ester
    # Cap 3 drops tyrosine. Deprotection (from 0 C: 1.6) at the carbamate N, crowded by CB,
    # the acid or ester C, the carbonyl O and the ester O of the Boc group: 2 / 5.
    off = share(1.6, 2 / 5, 2)
    expected = {"COC(=O)[C@@H](N)Cc1ccc(O)cc1": tyrester + bocester * off, TYROSINE: bocacid * off,
                "COC(=O)[C@H](Cc1ccc(O)cc1)NC(=O)OC(C)(C)C": bocester * (1 - off),
                "CC(C)(C)OC(=O)N[C@@H](Cc1ccc(O)cc1)C(=O)O": bocacid * (1 - off)}
    assert crude(c, equivalents=2, cap=3) == pytest.approx(expected, abs=1e-9)
    out = solve(c, equivalents=2, cap=3)
    # at pH 7 the amino ester (ammonium) and the Boc acid (carboxylate) are in the water
    # with the recovered tyrosine (zwitterion), the Boc ester in the organic phase
    assert out["phase"] == "aqueous" and out["n_species"] == 4
    assert out["selected"] == ["COC(=O)[C@@H](N)Cc1ccc(O)cc1"]
    assert out["products"] == sorted(["COC(=O)[C@@H](N)Cc1ccc(O)cc1", "CC(C)(C)OC(=O)N[C@@H](Cc1ccc(O)cc1)C(=O)O"])
    amine, acid = expected["COC(=O)[C@@H](N)Cc1ccc(O)cc1"], bocacid * (1 - off)
    assert out["yield_pct"] == pytest.approx(amine, abs=1e-6)
    assert out["crude_pct"] == pytest.approx(100 - 100 * (1 - boc) * (1 - ester), abs=1e-6)
    assert out["purity_pct"] == pytest.approx(100 * amine / (amine + bocacid * off + acid), abs=1e-6)
    assert out["product_yields_pct"] == pytest.approx([amine, acid], abs=1e-6)
    assert out["recovered_pct"] == pytest.approx(bocacid * off, abs=1e-6)
    assert out["charge"] == 1
    # at 0 C nothing is esterified: tyrosine comes back with Boc-tyrosine, the only product
    # (Boc at rate 0.9, its removal at 0.9 with the factor 2/5: CB, the acid C, two Boc O)
    cold = solve(c, temperature=0, equivalents=2, cap=3)
    assert cold["selected"] == ["CC(C)(C)OC(=O)N[C@@H](Cc1ccc(O)cc1)C(=O)O"]
    left = 100 * share(0.9, 2 / 3, 2) * (1 - share(0.9, 2 / 5, 2))
    assert cold["yield_pct"] == pytest.approx(left, abs=1e-6) and cold["purity_pct"] == pytest.approx(left, abs=1e-6)
    assert cold["recovered_pct"] == pytest.approx(100 - left, abs=1e-6)
    # TPSA counts sulfur (thioether 25.30) on top of N and O
    met = solve(case("boc_esterify_deprotect", "L-methionine"), temperature=80, ph=13.0)
    mol = Chem.MolFromSmiles(met["selected"][0])
    assert met["tpsa"] == pytest.approx(rdMolDescriptors.CalcTPSA(mol) + 25.30, abs=1e-6)


def test_work_up_ph_moves_the_product_between_phases() -> None:
    c = case("boc_esterify_deprotect", "L-methionine")
    basic, acidic = solve(c, temperature=80, ph=13.0), solve(c, temperature=80, ph=4.0)
    # the same crude mixture, the amino ester neutral at pH 13 and protonated at pH 4
    assert basic["n_species"] == acidic["n_species"] and basic["selected"] == acidic["selected"]
    assert (basic["phase"], basic["charge"]) == ("organic", 0) and (acidic["phase"], acidic["charge"]) == ("aqueous", 1)
    assert basic["purity_pct"] != pytest.approx(acidic["purity_pct"])
    # group rules: (net charge, ionised groups) at pH 1, 4, 7, 10, 13
    def ion(smiles: str) -> list[tuple[int, int]]:
        return [ref.ionisation(Chem.MolFromSmiles(smiles), ph) for ph in (1.0, 4.0, 7.0, 10.0, 13.0)]
    assert ion(NAMES["sulfamethoxazole"]) == [(1, 1), (1, 1), (-1, 1), (-1, 1), (-1, 1)]   # aniline, N-aryl SO2NH
    assert ion(NAMES["furosemide"]) == [(1, 1), (0, 2), (-1, 1), (-2, 2), (-2, 2)]      # + acid, SO2NH2
    assert ion("CC(c1ccccc1)N1CCOCC1") == [(1, 1), (1, 1), (0, 0), (0, 0), (0, 0)]       # morpholine
    assert ion(CARNITINE) == [(1, 1), (0, 2), (0, 2), (0, 2), (0, 2)]                   # quaternary N stays
    assert ion("Cc1ncc(CO)c(CO)c1O") == [(1, 1), (1, 1), (0, 0), (-1, 1), (-1, 1)]      # pyridine, phenol
    assert ion("CC(=O)Nc1ccc([N+](=O)[O-])cc1") == [(0, 0)] * 5                          # nitro is no charge
    # polar neutral molecules stay in the water, lipophilic ones are extracted
    assert ref.phase_of("CO[C@H]1O[C@H](CO)[C@@H](O)[C@H](O)[C@H]1O", 7.0) == "aqueous"
    assert ref.phase_of("CC(c1ccccc1)N1CCOCC1", 7.0) == "organic"


def test_temperature_and_equivalents_decide_the_sites() -> None:
    c = case("acetylate_brominate", "dopamine hydrochloride")
    cold = crude(c, temperature=0, equivalents=1)
    # 0 C, one equivalent: only the amine is acetylated (rate 0.9; one CH2 two bonds away:
    # factor 1), then the one ring CH para to an OH is brominated (rate 0.9; three heavy
    # atoms two bonds away: factor 1/2), in both molecules alike
    ac, br = share(0.9, 1, 1), share(0.9, 1 / 2, 1)
    assert cold == pytest.approx({"CC(=O)NCCc1cc(O)c(O)cc1Br": 100 * ac * br, "CC(=O)NCCc1ccc(O)c(O)c1":
                                  100 * ac * (1 - br), "NCCc1cc(O)c(O)cc1Br": 100 * (1 - ac) * br,
                                  "NCCc1ccc(O)c(O)c1": 100 * (1 - ac) * (1 - br)}, abs=1e-9)
    hot = solve(c, temperature=80, equivalents=3)
    # 80 C, three equivalents: phenols are acetylated too and the rings take up to three Br
    assert hot["n_species"] == 11 and hot["selected"] == ["CC(=O)NCCc1ccc(OC(C)=O)c(OC(C)=O)c1"]
    assert hot["product_yields_pct"][0] == hot["yield_pct"] and hot["product_yields_pct"] == sorted(
        hot["product_yields_pct"], reverse=True)
    # the amine takes 1 - exp(-3 x 1 x 3) of the dopamine in the first round; the cap of 4
    # drops the dopamine left after step 1
    assert hot["crude_pct"] == pytest.approx(100 * share(3.0, 1, 3), abs=1e-6)
    # incomplete steps leave partly converted material; an amine blocks a coupling
    blocked = solve(case("boc_couple_deprotect", "enalapril maleate"), temperature=0)
    assert blocked["phase"] == "none" and blocked["selected"] == [] and blocked["crude_pct"] == 0.0
    made = solve(case("boc_couple_deprotect", "enalapril maleate"), temperature=25)
    assert made["phase"] != "none" and Chem.MolFromSmiles(made["selected"][0]).HasSubstructMatch(
        Chem.MolFromSmarts("C(=O)NCc1ccccc1"))


def test_crowded_sites_react_slower_and_share_by_their_factors() -> None:
    # two primary alcohols oxidised at 0 C (rate 0.9); the site is the CH2: beside a CH2
    # one heavy atom lies two bonds away (factor 1), beside the quaternary C three (1/2)
    [out] = ref.react([("OCC(C)(C)CCCO", 100.0)], ref.TRANSFORMS["alcohol_oxidation"], 0, 1, "keep")
    reacted = 100 * share(0.9, 1 + 1 / 2, 1)
    assert dict(out) == pytest.approx({"OCC(C)(C)CCCO": 100 - reacted, "CC(C)(CO)CCC=O": reacted * 2 / 3,
                                       "CC(C)(C=O)CCCO": reacted / 3}, abs=1e-9)
    assert ref.crowding(ref.implicit_hs(Chem.MolFromSmiles("OCC(C)(C)CCCO")), 1) == 3


def test_a_site_matched_several_ways_counts_once() -> None:
    # the silyl ether's pattern matches the O twelve ways (the Si and C methyls permute);
    # the site is one O, crowded by the Si's three carbons and the CH2's carbon: 2/5
    smiles = "CC(C)(C)[Si](C)(C)OCCc1ccccc1"
    classes = ref.TRANSFORMS["tbs_deprotection"].classes
    cls, outs = ref._first_class(ref.implicit_hs(Chem.MolFromSmiles(smiles)), classes)
    assert len(outs) == 12
    o = ref.offer(smiles, classes, 0, "keep")
    assert o is not None and o.weights == pytest.approx([2 / 5]) and o.rate == 0.9


def test_the_reagent_is_shared_between_molecules_and_rounds() -> None:
    # TBS at 0 C with two equivalents on a diol and an alcohol, half each: the diol's two
    # alike O give one outcome weighing 2; the second round runs on what the first left
    tbs = "[Si](C)(C)C(C)(C)C"
    diol, alcohol = ref.react([("OCCCCCCO", 50.0), ("CCCCO", 50.0)], ref.TRANSFORMS["tbs_protection"], 0, 2, "keep")
    first_diol, first_alcohol = share(0.9, 2, 2), share(0.9, 1, 2)
    left = 2 - (50 * first_diol + 50 * first_alcohol) / 100
    second = share(0.9, 1, left)
    assert dict(diol) == pytest.approx({"OCCCCCCO": 50 * (1 - first_diol),
                                        f"CC(C)(C)[Si](C)(C)OCCCCCCO": 50 * first_diol * (1 - second),
                                        f"CC(C)(C)[Si](C)(C)OCCCCCCO{tbs}": 50 * first_diol * second}, abs=1e-9)
    assert dict(alcohol) == pytest.approx({"CCCCO": 50 * (1 - first_alcohol),
                                           "CCCCO[Si](C)(C)C(C)(C)C": 50 * first_alcohol}, abs=1e-9)


def test_tolerances_admit_another_form_of_the_kinetics_and_reject_near_misses(
        monkeypatch: pytest.MonkeyPatch) -> None:
    sp = chem_smarts.output_specs()
    scenarios = sample_scenarios(40, 11)
    truths = [ref.solve({"parameters": p}) for p in scenarios]

    def failing(module: types.ModuleType = ref) -> set[str]:
        return {k for p, want in zip(scenarios, truths) for k in AMOUNTS
                if not compare.within(sp[k], module.solve({"parameters": p})[k], want[k])}

    class ExpForm:
        """1 - exp(-x) from exp, not expm1."""
        @staticmethod
        def expm1(x: float) -> float:
            return math.exp(x) - 1.0

    with monkeypatch.context() as m:
        m.setattr(ref, "math", ExpForm)
        assert failing() == set()
    with monkeypatch.context() as m:
        m.setattr(ref, "RATE", tuple(r * 1.01 for r in ref.RATE))
        assert {"yield_pct", "product_yields_pct", "recovered_pct"} <= failing()
    with monkeypatch.context() as m:
        m.setattr(ref, "site_factor", lambda mol, atom: 2.0 / (2 + ref.crowding(mol, atom)))
        assert {"yield_pct", "product_yields_pct", "recovered_pct"} <= failing()
    with monkeypatch.context() as m:   # every site alike
        m.setattr(ref, "site_factor", lambda mol, atom: 1.0)
        assert {"yield_pct", "product_yields_pct", "recovered_pct"} <= failing()
    with monkeypatch.context() as m:   # every match of a template a site of its own
        matches = itertools.count()
        site_atom, site_factor = ref.site_atom, ref.site_factor
        m.setattr(ref, "site_atom", lambda product: (site_atom(product), next(matches)))
        m.setattr(ref, "site_factor", lambda mol, site: site_factor(mol, site[0]))
        assert {"yield_pct", "product_yields_pct", "recovered_pct"} <= failing()
    # the reagent never runs short: the reference's source without its one line of
    # accounting, run as a module of its own
    source = Path(ref.__file__).read_text(encoding="utf-8")
    line = "        reagent -= used / 100.0\n"
    assert source.count(line) == 1
    variant = types.ModuleType("chem_reference_reagent_never_runs_out")
    monkeypatch.setitem(sys.modules, variant.__name__, variant)
    exec(compile(source.replace(line, ""), variant.__name__, "exec"), variant.__dict__)
    assert {"yield_pct", "product_yields_pct"} <= failing(variant)


def test_stereo_modes_and_ranking() -> None:
    c = case("oxidise_aminate", "guaifenesin")
    keep, enum = solve(c), solve(c, stereo="enumerate")
    # the primary alcohol's CH2 is oxidised (rate 1.6, crowded by the CH's OH and CH2:
    # 2/3; the hydroxy aldehyde's canonical tautomer is the hydroxy ketone), then the
    # ketone is aminated (from 25 C: 0.9; crowded by two O: 2/3); the new stereocentre is
    # unassigned under keep, enumerate splits its amount in two
    ox, am = share(1.6, 2 / 3, 1), share(0.9, 2 / 3, 1)
    assert crude(c) == pytest.approx({"COc1ccccc1OCC(CO)N1CCOCC1": 100 * ox * am,
                                      "COc1ccccc1OCC(=O)CO": 100 * ox * (1 - am),
                                      "COc1ccccc1OCC(O)CO": 100 * (1 - ox)}, abs=1e-9)
    assert keep["selected"] == ["COc1ccccc1OCC(=O)CO"] and keep["product_yields_pct"] == pytest.approx(
        [100 * ox * (1 - am), 100 * ox * am], abs=1e-6)
    assert enum["selected"] == ["COc1ccccc1OCC(=O)CO"] and enum["product_yields_pct"] == pytest.approx(
        [100 * ox * (1 - am), 50 * ox * am, 50 * ox * am], abs=1e-6)
    assert enum["n_products"] == 3 and sum("@" in s for s in enum["products"]) == 2
    # ranking: amount, heavy atoms, QED (4 decimals), SMILES
    t = ref.trace(params(case("tbs_acetylate_deprotect", "methyl alpha-D-glucopyranoside"), temperature=80,
                         equivalents=2, stereo="enumerate", cap=2))
    for step in t["steps"]:
        keys = [(-round(float(step.pool[s]), 4), -Chem.MolFromSmiles(s).GetNumHeavyAtoms(),
                 -round(QED.qed(Chem.MolFromSmiles(s)), 4), s) for s in step.ranked]
        assert keys == sorted(keys)
    assert all(len(step.kept) <= 2 for step in t["steps"][:-1]) and len(t["steps"][-1].kept) == len(t["steps"][-1].ranked)


def test_evidence_files(tmp_path: Path) -> None:
    p = params(case("acetylate_brominate", "dopamine hydrochloride"), temperature=80, equivalents=3, cap=2)
    out = chem_smarts(p, tmp_path)
    assert set(out) == FIELDS
    lcms = json.loads((tmp_path / "lcms.json").read_text())
    assert len(lcms["peaks"]) == out["n_species"] and lcms["phase_kept"] == out["phase"]
    assert sum(peak["area_pct"] for peak in lcms["peaks"]) == pytest.approx(100.0, abs=0.5)
    assert [peak["mz"] for peak in lcms["peaks"]] == sorted(peak["mz"] for peak in lcms["peaks"])
    top = Chem.MolFromSmiles(out["selected"][0])
    assert round(Descriptors.ExactMolWt(top) + 1.007276, 1) in {peak["mz"] for peak in lcms["peaks"]}
    compound = json.loads((tmp_path / "compound.json").read_text())
    assert compound["name"] == "dopamine hydrochloride" and compound["transformations"] == [
        "acetylation", "aromatic_bromination"]
    mols = list(Chem.SDMolSupplier(str(tmp_path / "route.sdf")))
    t = ref.trace(p)
    assert len(mols) == sum(len(s.ranked) for s in t["steps"])
    last = [Chem.MolToSmiles(m) for m in mols if m.GetProp("step") == "2"]
    assert len(last) == out["n_species"]
    # the coupling refuses the compound: step 1 leaves it, nothing reaches the work-up
    empty = tmp_path / "empty"
    assert chem_smarts(params(case("boc_couple_deprotect", "enalapril maleate"), temperature=0), empty)["phase"] \
        == "none"
    assert json.loads((empty / "lcms.json").read_text()) == {"peaks": [], "phase_kept": "none"}
    with (empty / "route.sdf").open("rb") as fh:
        assert {m.GetProp("step") for m in Chem.ForwardSDMolSupplier(fh)} == {"1"}


def test_every_axis_corner_succeeds(tmp_path: Path) -> None:
    axes = chem_smarts.axes
    names = sorted(axes)
    seen = Counter()
    for i, combo in enumerate(itertools.product(*(axes[n].edges() for n in names))):
        p = dict(zip(names, combo))
        out = chem_smarts(p, tmp_path / str(i))
        for name, spec in chem_smarts.output_specs().items():
            assert compare.kind_error(spec, out[name]) is None, (name, out[name])
        assert out["n_products"] == len(out["products"]) <= p["max_products"]
        assert 0.0 <= out["purity_pct"] <= 100.0 and out["yield_pct"] <= out["crude_pct"] <= 100.0 + 1e-9
        seen[out["phase"]] += 1
        if not out["products"]:
            assert all(out[k] == 0 for k in DESCRIPTORS) and out["selected"] == [] and out["phase"] == "none"
    assert seen["organic"] + seen["aqueous"] > 0


def test_most_of_the_space_gives_a_product_and_both_phases_occur() -> None:
    phases = Counter()
    for i, c in enumerate(CASES[::3]):
        t = (0, 25, 80)[i % 3]
        phases[solve(c, temperature=t, equivalents=1 + i % 3, ph=(1.0, 7.0, 13.0)[i % 3], cap=2)["phase"]] += 1
    total = sum(phases.values())
    assert phases["none"] / total < 0.4 and phases["organic"] > 2 and phases["aqueous"] > 2


def test_program_matches_module_and_is_deterministic(tmp_path: Path) -> None:
    p = params(case("tbs_acetylate_deprotect", "(R)-norepinephrine bitartrate"), temperature=80, equivalents=2,
               stereo="enumerate", cap=3)
    a = ref.solve({"parameters": p, "inputs": {}})
    assert a == ref.solve({"parameters": dict(p), "inputs": {}})
    assert chem_smarts(p, tmp_path) == a
    scenario = {"task": "chem_smarts", "id": "public_1", "parameters": p, "inputs": {}}
    run = subprocess.run([sys.executable, str(Path(ref.__file__))], input=json.dumps(scenario),
                         capture_output=True, text=True, timeout=120, check=True)
    assert json.loads(run.stdout) == a


def test_tolerances_admit_independent_descriptors_and_reject_wrong_ones() -> None:
    sp = chem_smarts.output_specs()
    out = solve(case("boc_esterify_deprotect", "L-methionine"), temperature=80, ph=13.0)
    mol = Chem.MolFromSmiles(out["selected"][0])
    logp = sum(c[0] for c in reversed(rdMolDescriptors._CalcCrippenContribs(Chem.AddHs(mol))))
    assert compare.within(sp["logp"], logp, out["logp"])
    table = Chem.GetPeriodicTable()
    mw = sum(table.GetAtomicWeight(a.GetAtomicNum()) for a in Chem.AddHs(mol).GetAtoms())
    assert compare.within(sp["mw"], mw, out["mw"])
    props = QED.properties(mol)
    assert compare.within(sp["qed"], QED.qed(mol, w=QED.WEIGHT_MEAN, qedProperties=props), out["qed"])
    # amounts in floating point, summed in another order, agree with the exact fractions
    amounts = crude(case("boc_esterify_deprotect", "L-methionine"), temperature=80)
    assert compare.within(sp["crude_pct"], sum(sorted(amounts.values())), out["crude_pct"])
    assert not compare.within(sp["mw"], Descriptors.ExactMolWt(mol), out["mw"])
    assert not compare.within(sp["tpsa"], rdMolDescriptors.CalcTPSA(mol), out["tpsa"])
    assert not compare.within(sp["qed"], QED.qed(mol, w=QED.WEIGHT_MAX), out["qed"])
    assert not compare.within(sp["logp"], Crippen.MolMR(mol), out["logp"])
    other = [Chem.MolToSmiles(Chem.MolFromSmiles(s), doRandom=True) for s in out["products"]]
    assert compare.within(sp["products"], other, out["products"])
    flat = [Chem.MolToSmiles(Chem.MolFromSmiles(s), isomericSmiles=False) for s in out["products"]]
    assert not compare.within(sp["products"], flat, out["products"])


def sample_scenarios(n: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    return [params(rng.choice(CASES), temperature=rng.choice([0, 25, 80]), equivalents=rng.randint(1, 3),
                   ph=rng.choice([1.0, 4.0, 7.0, 10.0, 13.0]), stereo=rng.choice(["keep", "strip", "enumerate"]),
                   cap=rng.randint(1, 4)) for _ in range(n)]


def test_isolation_distributes_by_the_distribution_coefficient() -> None:
    # a permanent charge never enters the solvent; a molecule without ionisable groups
    # distributes by its partition coefficient; an acid at its pKa is half neutral
    assert ref.distribution(CARNITINE, 7.0) == 0.0
    toluene = "Cc1ccccc1"
    assert ref.distribution(toluene, 1.0) == pytest.approx(10 ** Crippen.MolLogP(Chem.MolFromSmiles(toluene)))
    benzoic = "O=C(O)c1ccccc1"
    pka = next(g[2] for g in ref.ACID_GROUPS if g[0] == "carboxylic acid")
    assert ref.distribution(benzoic, pka) == pytest.approx(0.5 * 10 ** Crippen.MolLogP(Chem.MolFromSmiles(benzoic)))
    # two sites ionise independently: an amino acid is least extractable between its pKa values
    tyrosine = [ref.distribution(TYROSINE, ph) for ph in (1.0, 7.0, 13.0)]
    assert tyrosine[1] > tyrosine[0] and tyrosine[1] > tyrosine[2]
    # what the kept phase holds is never more than the crude had
    for p in sample_scenarios(12, 5):
        out = ref.solve({"parameters": p})
        assert 0.0 <= out["isolated_pct"] <= out["yield_pct"] + 1e-9
        assert 0.0 <= out["kept_pct"] <= out["crude_pct"] + 1e-9
        if out["phase"] == "none":
            assert out["isolated_pct"] == out["isolated_purity_pct"] == out["kept_pct"] == 0.0


def own_isolation(t: dict, ph: float) -> dict[str, float]:
    """The isolation written another way: log D summed in log space, the water's share
    after three extractions from log1p."""
    w = t["workup"]
    if w.phase == "none":
        return {}
    kept = {}
    for smiles, amount in w.crude.items():
        mol = Chem.MolFromSmiles(smiles)
        sites = ref.ionisable_sites(mol)
        if ref.fixed_charges(mol, sites)[1]:
            in_water = 1.0
        else:
            log_d = Crippen.MolLogP(mol) - sum(math.log10(1 + 10 ** (ph - pka if sign < 0 else pka - ph))
                                               for sign, pka in sites.values())
            in_water = math.exp(-3 * math.log1p(10 ** log_d))
        kept[smiles] = float(amount) * (in_water if w.phase == "aqueous" else 1 - in_water)
    return kept


def test_tolerances_admit_another_isolation_and_reject_other_rules() -> None:
    sp = chem_smarts.output_specs()
    scenarios = sample_scenarios(40, 3)
    traces = [ref.trace(p) for p in scenarios]
    truths = [ref.outputs(t, p) for t, p in zip(traces, scenarios)]

    def outputs_with(isolation) -> list[dict]:
        return [ref.outputs({**t, "isolated": isolation(t, float(p["workup_ph"]))}, p)
                for t, p in zip(traces, scenarios)]

    def failing(isolation) -> set[str]:
        return {k for got, want in zip(outputs_with(isolation), truths) for k in ISOLATION
                if not compare.within(sp[k], got[k], want[k])}

    assert failing(own_isolation) == set()

    def patched(**patch):
        def isolation(t: dict, ph: float) -> dict[str, float]:
            saved = {k: getattr(ref, k) for k in patch}
            try:
                for k, v in patch.items():
                    setattr(ref, k, v)
                return ref.isolate(t["workup"], ph)
            finally:
                for k, v in saved.items():
                    setattr(ref, k, v)
        return isolation

    def dominant_form(smiles: str, ph: float) -> float:
        mol = Chem.MolFromSmiles(smiles)
        return 0.0 if ref.ionisation(mol, ph)[1] else 10 ** Crippen.MolLogP(mol)

    acids = [(n, sm, pka + 0.5 if n == "carboxylic acid" else pka, i) for n, sm, pka, i in ref.ACID_GROUPS]
    assert failing(patched(EXTRACTIONS=2)) == set(ISOLATION)
    assert failing(patched(VOLUME_RATIO=2.0)) == set(ISOLATION)
    assert failing(patched(distribution=dominant_form)) == set(ISOLATION)
    assert failing(patched(ACID_GROUPS=acids)) >= {"kept_pct"}


@pytest.fixture(scope="module")
def built_task(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from recon.build import build_task

    registry = Registry.default(entry_points=False)
    out = tmp_path_factory.mktemp("chem")
    return build_task(registry, "chem_smarts", out, n_public=24, n_hidden=6, workers=2, select="random").path


def test_baselines_earn_partial_credit(built_task: Path) -> None:
    from recon.audit import grade_baselines

    rows = grade_baselines(built_task, runtime="local")
    assert [r.name for r in rows] == ["expert", "textbook"]
    for row in rows:
        assert 0.0 < row.reward < 1.0, (row.name, row.reward, row.detail)
        assert row.rung >= 3, (row.name, row.detail)   # they speak the contract
