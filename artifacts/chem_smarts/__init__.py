"""Built-in oracle `chem_smarts`: a short synthetic route run under chosen conditions with RDKit
reaction SMARTS, from a registered compound record through an extractive work-up to the
characterised top product."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from recon import Choice, Evidence, Exact, Int, Integer, Number, SequenceOf, SetOf, oracle

# One case = a named route and the registered compound record it is run on, "ROUTE: RECORD"
# (the record as registered, RDKit canonical SMILES); names are in reference.REACTANTS.
CASES = [
    'boc_esterify_deprotect: N[C@@H](Cc1ccc(O)cc1)C(=O)O',
    'boc_esterify_deprotect: Cl.NC[C@H](CC(=O)O)c1ccc(Cl)cc1',
    'boc_esterify_deprotect: NCC1(CC(=O)O)CCCCC1',
    'boc_esterify_deprotect: CSCC[C@H](N)C(=O)O',
    'boc_esterify_deprotect: CCOC(=O)[C@H](CCc1ccccc1)N[C@@H](C)C(=O)N1CCC[C@H]1C(=O)O.O=C(O)/C=C\\C(=O)O',
    'boc_couple_deprotect: N[C@@H](Cc1ccc(O)cc1)C(=O)O',
    'boc_couple_deprotect: NCC1(CC(=O)O)CCCCC1',
    'boc_couple_deprotect: CCOC(=O)[C@H](CCc1ccccc1)N[C@@H](C)C(=O)N1CCC[C@H]1C(=O)O.O=C(O)/C=C\\C(=O)O',
    'boc_couple_deprotect: NS(=O)(=O)c1cc(C(=O)O)c(NCc2ccco2)cc1Cl',
    'boc_couple_deprotect: CSCC[C@H](N)C(=O)O',
    'couple_reduce: CC(=O)Oc1ccccc1C(=O)O',
    'couple_reduce: C[N+](C)(C)C[C@H](O)CC(=O)[O-]',
    'couple_reduce: O=C(O)c1ccc(O)nc1',
    'couple_reduce: O=C([O-])Cc1ccccc1Nc1c(Cl)cccc1Cl.[Na+]',
    'couple_reduce: C[C@H](CS)C(=O)N1CCC[C@H]1C(=O)O',
    'couple_reduce: C[N+](C)(C)CCO.O=C([O-])c1ccccc1O',
    'nitro_reduce_acetylate: O=C(N[C@H](CO)[C@H](O)c1ccc([N+](=O)[O-])cc1)C(Cl)Cl',
    'nitro_reduce_acetylate: O=C([O-])c1ccc([N+](=O)[O-])cc1Cl.[Na+]',
    'nitro_reduce_acetylate: Cc1ncc([N+](=O)[O-])n1CCO',
    'nitro_reduce_acetylate: CCS(=O)(=O)CCn1c([N+](=O)[O-])cnc1C',
    'nitro_reduce_acetylate: O=C(O)c1cc(Br)ccc1Cl',
    'hydrolyse_couple: CCN(CC)CCOC(=O)c1ccc(N)cc1.Cl',
    'hydrolyse_couple: CC(=O)Oc1ccccc1C(=O)O',
    'hydrolyse_couple: COC(=O)c1ccc(O)cc1',
    'hydrolyse_couple: COC(=O)[C@@H](O)c1ccccc1',
    'hydrolyse_couple: COc1c(C)c2c(c(O)c1C/C=C(\\C)CCC(=O)O)C(=O)OC2',
    'hydrolyse_couple: CCOC(=O)C1=C[C@@H](OC(CC)CC)[C@H](NC(C)=O)[C@@H](N)C1.O=P(O)(O)O',
    'oxidise_aminate: O=C(N[C@H](CO)[C@H](O)c1ccc([N+](=O)[O-])cc1)C(Cl)Cl',
    'oxidise_aminate: COc1cc(C=O)ccc1O',
    'oxidise_aminate: Cc1ncc(CO)c(CO)c1O.Cl',
    'oxidise_aminate: COc1ccccc1OCC(O)CO',
    'oxidise_aminate: COc1ccc2cc(CCC(C)=O)ccc2c1',
    'oxidise_aminate: Cc1ncc([N+](=O)[O-])n1CCO',
    'boc_oxidise_deprotect: CN[C@@H](C)[C@H](O)c1ccccc1.CN[C@@H](C)[C@H](O)c1ccccc1.O=S(=O)(O)O',
    'boc_oxidise_deprotect: COC(=O)[C@@H]([NH3+])CO.[Cl-]',
    'boc_oxidise_deprotect: NC[C@H](O)c1ccc(O)c(O)c1.O=C(O)[C@H](O)[C@@H](O)C(=O)O',
    'boc_oxidise_deprotect: CC(C)NCC(O)COc1cccc2ccccc12.Cl',
    'boc_oxidise_deprotect: CCCCCCCCc1ccc(CCC(N)(CO)CO)cc1.Cl',
    'tbs_oxidise_deprotect: Cc1cn([C@H]2C[C@H](O)[C@@H](CO)O2)c(=O)[nH]c1=O',
    'tbs_oxidise_deprotect: CO[C@H]1O[C@H](CO)[C@@H](O)[C@H](O)[C@H]1O',
    'tbs_oxidise_deprotect: C[C@]12CC[C@@H]3c4ccc(O)cc4CC[C@H]3[C@@H]1CC[C@@H]2O',
    'tbs_oxidise_deprotect: NC(=O)c1ncn([C@@H]2O[C@H](CO)[C@@H](O)[C@H]2O)n1',
    'tbs_oxidise_deprotect: CS(=O)(=O)c1ccc([C@@H](O)[C@@H](CO)NC(=O)C(Cl)Cl)cc1',
    'esterify_reduce: C[C@H](CS)C(=O)N1CCC[C@H]1C(=O)O',
    'esterify_reduce: O=C(O)CCCC[C@@H]1SC[C@@H]2NC(=O)N[C@@H]21',
    'esterify_reduce: COc1c(C)c2c(c(O)c1C/C=C(\\C)CCC(=O)O)C(=O)OC2',
    'esterify_reduce: CSCC[C@H](N)C(=O)O',
    'esterify_reduce: CCOC(=O)C[C@H](O)CCl',
    'acetylate_brominate: CC(=O)Nc1ccc(O)cc1',
    'acetylate_brominate: Nc1ccc(S(N)(=O)=O)cc1',
    'acetylate_brominate: Cl.NCCc1ccc(O)c(O)c1',
    'acetylate_brominate: Cc1cccc(C)c1OCC(C)N.Cl',
    'acetylate_brominate: Cc1cc(NS(=O)(=O)c2ccc(N)cc2)no1',
    'acetylate_brominate: CC(C)NCC(O)COc1ccc(CC(N)=O)cc1',
    'dehalogenate_esterify: Cl.NC[C@H](CC(=O)O)c1ccc(Cl)cc1',
    'dehalogenate_esterify: O=C(O)c1cc(Br)ccc1Cl',
    'dehalogenate_esterify: O=C([O-])Cc1ccccc1Nc1c(Cl)cccc1Cl.[Na+]',
    'dehalogenate_esterify: NS(=O)(=O)c1cc(C(=O)O)c(NCc2ccco2)cc1Cl',
    'methylate_hydrolyse: COC(=O)[C@@H]([NH3+])CO.[Cl-]',
    'methylate_hydrolyse: CCOC(=O)[C@H](CCc1ccccc1)N[C@@H](C)C(=O)N1CCC[C@H]1C(=O)O.O=C(O)/C=C\\C(=O)O',
    'methylate_hydrolyse: CCOC(=O)C1=C[C@@H](OC(CC)CC)[C@H](NC(C)=O)[C@@H](N)C1.O=P(O)(O)O',
    'methylate_hydrolyse: CCN(CC)CCOC(=O)c1ccc(N)cc1.Cl',
    'methylate_hydrolyse: Cc1cccc(C)c1OCC(C)N.Cl',
    'tbs_acetylate_deprotect: CC(C)(C)NCC(O)c1ccc(O)c(CO)c1.CC(C)(C)NCC(O)c1ccc(O)c(CO)c1.O=S(=O)(O)O',
    'tbs_acetylate_deprotect: NC[C@H](O)c1ccc(O)c(O)c1.O=C(O)[C@H](O)[C@@H](O)C(=O)O',
    'tbs_acetylate_deprotect: CCCCCCCCc1ccc(CCC(N)(CO)CO)cc1.Cl',
    'tbs_acetylate_deprotect: C[C@]12CC[C@@H]3c4ccc(O)cc4CC[C@H]3[C@@H]1CC[C@@H]2O',
    'tbs_acetylate_deprotect: CO[C@H]1O[C@H](CO)[C@@H](O)[C@H](O)[C@H]1O',
    'nitro_reduce_acetylate: Cc1cc(NS(=O)(=O)c2ccc(N)cc2)no1',
    'tbs_acetylate_deprotect: Cc1ncc(CO)c(CO)c1O.Cl',
    'tbs_oxidise_deprotect: Cc1ncc(CO)c(CO)c1O.Cl',
    'methylate_hydrolyse: CC(C)NCC(O)COc1cccc2ccccc12.Cl',
    'methylate_hydrolyse: CN[C@@H](C)[C@H](O)c1ccccc1.CN[C@@H](C)[C@H](O)c1ccccc1.O=S(=O)(O)O',
    'methylate_hydrolyse: CC(=O)Oc1ccccc1C(=O)O',
    'methylate_hydrolyse: COC(=O)c1ccc(O)cc1',
    'dehalogenate_esterify: O=C([O-])c1ccc([N+](=O)[O-])cc1Cl.[Na+]',
    'boc_esterify_deprotect: NS(=O)(=O)c1cc(C(=O)O)c(NCc2ccco2)cc1Cl',
    'esterify_reduce: NS(=O)(=O)c1cc(C(=O)O)c(NCc2ccco2)cc1Cl',
    'couple_reduce: NS(=O)(=O)c1cc(C(=O)O)c(NCc2ccco2)cc1Cl',
    'nitro_reduce_acetylate: Nc1ccc(S(N)(=O)=O)cc1',
    'tbs_acetylate_deprotect: Cc1cc(NS(=O)(=O)c2ccc(N)cc2)no1',
    'acetylate_brominate: Cc1ncc(CO)c(CO)c1O.Cl',
    'boc_oxidise_deprotect: Cc1ncc(CO)c(CO)c1O.Cl',
]

TOP = "the top product"


@oracle(
    name="chem_smarts",
    version="5.0.0",
    title="A short synthetic route under chosen conditions, worked up and characterised",
    domain="chemistry",
    toolkit=["rdkit"],
    description=(
        "A medicinal-chemistry route-scouting workflow runs a short synthetic route on one registered "
        "compound under chosen reaction conditions and works the result up. The compound record is taken as "
        "registered (it may carry a counter-ion or salt partner, charges, or an unusual tautomer) and prepared "
        "the way a registration system prepares its parent structure. A named route of two or three named "
        "transformations (protections and deprotections, couplings, reductions, oxidations, ...; co-reagents "
        "implicit) is then run step by step at the given temperature with the given reagent equivalents, each "
        "step on the material the previous step leaves; a step may be incomplete, may form several isomers or "
        "partly and fully converted molecules, and releases small by-products. Within a step the reagent is "
        "shared: the molecules react in rounds, one per equivalent, and how much of a molecule reacts in a round "
        "depends on the kind of site it reacts at, the temperature, how many such sites it has and how crowded "
        "each one is (a crowded site reacts more slowly), and the reagent still left; its isomers form in "
        "proportion to how readily their sites react, and what a round uses up is gone for the next. The "
        "amount of every molecule is followed in per cent of the starting compound. The molecules each step gives are cleaned up, and only "
        "the most abundant few are carried on. The final crude mixture is worked up by extraction between water "
        "buffered at the work-up pH and an organic solvent, and the phase that holds more product is kept; "
        "recovered starting material is not a product. The question: which molecules the route gives after the "
        "work-up, how much of each, and which one comes first; how pure the kept phase is in it; how much "
        "starting material is recovered; how many molecules the crude mixture held and how much material it "
        "accounts for; and the top product's molecular weight, lipophilicity, polar surface area, "
        "drug-likeness and net charge at the work-up pH. Then the top product is isolated: the crude mixture, taken up "
        "in the buffered water at the work-up pH, is extracted three times with an equal volume of the organic "
        "solvent each time and the extracts are combined (when the aqueous phase is the kept one, it is washed "
        "three times with an equal volume of solvent instead); every molecule distributes between the phases "
        "by its distribution coefficient at that pH, only its neutral form entering the solvent. The question "
        "also asks how much of the top product the kept phase then holds, its share of all material in that "
        "phase, and how much material the phase holds."
    ),
    axes={
        "case": Choice(CASES, doc=(
            "the route and the registered compound record it runs on, written 'ROUTE: RECORD'. The route is named "
            "after its steps in order: boc = Boc protection of amines (first) or Boc removal (last); tbs = TBS "
            "silyl protection of OH groups (first) or its removal (last); esterify = methyl ester formation from "
            "carboxylic acids (methanol); couple = amide coupling of carboxylic acids with benzylamine; reduce = "
            "LiAlH4 reduction (couple_reduce, esterify_reduce) or catalytic hydrogenation of nitro groups "
            "(nitro_reduce, H2 over Pd/C); acetylate = acetylation (acetic anhydride); hydrolyse = ester "
            "hydrolysis; oxidise = alcohol oxidation; aminate = reductive amination with morpholine; methylate = "
            "Eschweiler-Clarke N-methylation; brominate = electrophilic aromatic bromination; dehalogenate = "
            "removal of aryl halogens (C-X to C-H). The record is the compound exactly as registered (salts, "
            "counter-ions and charges included), as SMILES; its name is in compound.json")),
        "temperature": Choice([0, 25, 80], doc="reaction temperature of every step, degrees Celsius"),
        "equivalents": Int(1, 3, doc="equivalents of each step's reagent per molecule"),
        "workup_ph": Choice([1.0, 4.0, 7.0, 10.0, 13.0], doc="pH of the aqueous buffer of the extractive work-up"),
        "stereochemistry": Choice(["keep", "strip", "enumerate"], doc=(
            "keep = molecules keep the compound's stereochemistry; strip = all stereochemistry is removed; "
            "enumerate = kept, and every molecule a step forms is expanded into the stereoisomers of its "
            "unassigned stereocentres and stereo double bonds, in equal amounts")),
        "max_products": Int(1, 4, doc="at most this many molecules, the most abundant, are carried from one step "
                                      "to the next and reported at the end"),
    },
    outputs={
        "products": SetOf(normalize="smiles", doc="the products reported after the work-up, as SMILES; empty "
                                                  "when there is no product"),
        "n_products": Integer(tol=0, doc="how many molecules `products` holds"),
        "selected": SetOf(normalize="smiles", doc=f"{TOP} (the first of `products`) as a one-element list of "
                                                  "SMILES; empty with no product"),
        "phase": Exact(doc="the phase kept at the work-up: \"organic\", \"aqueous\", or \"none\" when the crude "
                           "mixture holds no product"),
        "n_species": Integer(tol=0, doc="distinct molecules in the final crude mixture, before the work-up "
                                        "(by-products not counted)"),
        "crude_pct": Number(abs=0.01, doc="total amount of the molecules in the final crude mixture, per cent of "
                                          "the starting compound"),
        "yield_pct": Number(abs=0.01, doc=f"amount of {TOP}, per cent of the starting compound (0 with no "
                                          "product)"),
        "purity_pct": Number(abs=0.01, doc=f"{TOP}'s share of all material in the kept phase, per cent (0 with "
                                           "no product)"),
        "product_yields_pct": SequenceOf(Number(abs=0.01), doc="the amount of every product in `products`, per "
                                         "cent of the starting compound, most abundant first (the order in "
                                         "which the products are ranked; the first is `yield_pct`); empty "
                                         "with no product"),
        "recovered_pct": Number(abs=0.01, doc="starting material in the final crude mixture (every molecule with "
                                              "the constitution of the prepared parent), per cent of the "
                                              "starting compound"),
        "mw": Number(abs=0.02, doc=f"average molecular weight of {TOP}, g/mol (this and every descriptor below "
                                   "is 0 with no product)"),
        "logp": Number(abs=0.01, doc=f"Wildman-Crippen logP of {TOP}"),
        "tpsa": Number(abs=0.01, doc=f"topological polar surface area of {TOP}, square angstrom"),
        "qed": Number(abs=0.002, doc=f"QED drug-likeness of {TOP} (0..1)"),
        "charge": Integer(tol=0, doc=f"net charge of the dominant form of {TOP} at the work-up pH"),
        "isolated_pct": Number(abs=0.05, doc=f"amount of {TOP} in the kept phase after the isolation, per cent of "
                                             "the starting compound (0 with no product)"),
        "isolated_purity_pct": Number(abs=0.05, doc=f"{TOP}'s share of all material in the kept phase after the "
                                                    "isolation, per cent (0 with no product)"),
        "kept_pct": Number(abs=0.05, doc="all material in the kept phase after the isolation, per cent of the "
                                         "starting compound (0 with no product)"),
    },
    stages=["standardise the record: clean-up, heavy-atom largest fragment, uncharge, canonical tautomer keeping "
            "stereo", "per step: incompatibility check; rounds (one per equivalent) sharing the step's reagent: "
            "every molecule reacts at the sites of the most reactive class the temperature allows, a share "
            "1 - exp(-rate x summed site factors x reagent left), the rate by temperature margin, a site's factor "
            "by its crowding; outcomes in proportion to their sites' factors; unreacted share carried; the "
            "reagent used is gone", "clean-up of every outcome: sanitise, split, by-product filter, "
            "canonical tautomer, stereo keep/strip/enumerate, amounts merged", "rank by amount, heavy atoms, "
            "QED, SMILES and cap between steps", "work-up: ionisation by group pKa rules and logP decide each "
            "molecule's phase; the phase with more product is kept; recovered starting material is no product; "
            "rank, cap, purity", "the products' amounts in rank order and the recovered starting material; descriptors "
            "of the top product (TPSA with S and P) and its net charge at the work-up pH", "isolation: three extractions (or washes) with an "
            "equal volume, every molecule by its distribution coefficient: Crippen logP of the neutral form "
            "times the neutral share, every ionisable group independently by its pKa"],
    reference="reference.py",
    # Measured with agents (docs/trials.md, trials 15 to 20): with the LC-MS reading and the
    # route file published, two of three matched every published field within 37 minutes;
    # with the outputs only, none did, and none failed a graded cell no published scenario shows.
    evidence_level="outputs",
    # what each output is computed from: the products are those of the kept phase, the
    # selected one is the first of them, and everything about it follows from it
    upstream={
        "products": ["phase"],
        "n_products": ["products"],
        "selected": ["products"],
        "yield_pct": ["selected"],
        "purity_pct": ["selected", "phase"],
        "product_yields_pct": ["products"],
        **{name: ["selected"] for name in ("mw", "logp", "tpsa", "qed", "charge")},
        # the isolation distributes the crude mixture the work-up kept a phase of
        "isolated_pct": ["yield_pct", "phase"],
        "isolated_purity_pct": ["phase", "n_species"],
        "kept_pct": ["phase", "n_species"],
    },
    evidence={
        "compound.json": Evidence("the case: the route, its transformations in order, the compound record and "
                                  "the compound's name", reveals="outputs"),
        "lcms.json": Evidence("an LC-MS reading of the final crude mixture before the work-up: one peak per "
                              "distinct molecule (by-products not included), sorted by m/z then area, each with "
                              "its m/z ([M+H]+ from monoisotopic masses, or M+ for a molecule already carrying a "
                              "net positive charge; 1 decimal, whole numbers from 1000 on), its area (the "
                              "molecule's share of the crude material, per cent, 1 decimal) and the phase it went "
                              "to at the work-up; then the phase kept", reveals="summary"),
        "route.sdf": Evidence("every molecule each step left, step by step (RDKit SD file, 2D depiction at 0.01 "
                              "angstrom, hydrogens implicit; a 0-byte file when no step left anything). SD tags: "
                              "step (1-based), transformation, amount (per cent of the starting compound, 4 "
                              "significant digits), rank (1 = most abundant) and status (kept = carried on or, after the last "
                              "step, sent to the work-up; capped = ranked below the cap)", reveals="trace"),
    },
)
def chem_smarts(params: dict[str, Any], evidence: Path) -> dict[str, Any]:
    """Run a named route on a registered compound under the conditions, work it up, describe the top product.

    Everything runs in RDKit (pinned version); SMILES are RDKit canonical SMILES
    (Chem.MolToSmiles defaults, isomeric). Parameters: `case` = "ROUTE: RECORD" (split at the
    first ": "), `temperature` T (level L = 0, 1, 2 for 0, 25, 80 degrees C), `equivalents`
    E, `workup_ph`, `stereochemistry`, `max_products` (the cap, K). Amounts are floats
    (IEEE double) in per cent of the starting compound.

    1. Standardise the record (stage "standardise"):
       mol = MolFromSmiles(record); rdMolStandardize.Cleanup(mol) with default parameters;
       the largest fragment with rdMolStandardize.LargestFragmentChooser built from
       CleanupParameters with largestFragmentChooserCountHeavyAtomsOnly = True (heavy atoms,
       not all atoms: choline salicylate keeps salicylate, not choline);
       rdMolStandardize.Uncharger() (defaults: carnitine stays a zwitterion).uncharge; the canonical tautomer with rdMolStandardize.TautomerEnumerator built from
       CleanupParameters with tautomerRemoveSp3Stereo = False and tautomerRemoveBondStereo =
       False (alpha-carbon stereocentres survive; 6-hydroxynicotinic acid becomes the
       pyridone); with stereochemistry == "strip", Chem.RemoveStereochemistry. The parent
       S = canonical SMILES of that (re-parsed). Step 1's input is [(S, 100)].

    2. Each step (stage "step") runs on the molecules carried from the previous step, each
       with its amount. A molecule m is parsed and its bracket-atom H counts are made
       implicit wherever the default valence gives the same total H (non-aromatic atoms
       only; so that a centre written [C@@H] can lose its H in a reaction). Then:
       a. Incompatible: amide_coupling and alcohol_oxidation refuse any m with a free
          aliphatic amine (AMINE below, primary or secondary; tertiary amines do not block):
          m and its amount are lost.
       b. The transformation's site classes, in order of reactivity, each with the lowest
          temperature level it reacts at; classes above L are ignored. The compatible
          inputs of the step react together in E rounds that share the reagent: the reagent
          left starts at r = E (equivalents per molecule of starting compound); each input
          m has a frontier, starting as {m: a}. In each round every frontier molecule x
          (amount q) is parsed (H implicit as above) and the FIRST allowed class with any
          outcome of RunReactants((x,)) over its reaction SMARTS (in order) is taken; each
          outcome's first product is cleaned (3a-c); outcomes that fail sanitisation or keep
          no fragment are dropped; identical cleaned outcomes (same kept fragments and
          by-products) merge. An outcome's site atom is the reactant atom the template maps
          as 1 (its product atom's "old_mapno" 1 gives "react_atom_idx"); its crowding c =
          the heavy atoms of x at topological distance exactly 2 from it (GetDistanceMatrix
          of x with H implicit); its factor f = 2 / (1 + c). A merged outcome weighs w = the
          sum of f over its DISTINCT site atoms (a site matched several ways, as Si(CH3)2
          and C(CH3)3 permute, counts once; symmetric sites at different atoms add). With no
          class or no surviving outcome x is done (amount q). Otherwise, with W = the sum
          of the outcomes' w and RATE = (0.9, 1.6, 3.0) by the margin L - class level, the
          reacted share is R = q (1 - exp(-RATE[margin] W r)); x keeps q - R and is done
          (the unreacted share is not offered again); each outcome gets R w / W, shared by
          every kept fragment of it (a split outcome gives each part that amount), and those
          fragments form m's next frontier (amounts of equal SMILES added). After the round
          (every input's frontier), r drops by the sum of every R of the round / 100. After
          E rounds the frontiers join the done molecules. So one lone open site (c = 1) at
          one equivalent converts 59.3, 79.8 or 95.0 %; a second round runs on what is left
          of the reagent; crowded sites react more slowly, and regioisomers form in the
          ratio of their sites' factors.
       c. With "enumerate", every resulting molecule other than m itself is replaced by its
          stereoisomers (EnumerateStereoisomers, StereoEnumerationOptions(onlyUnassigned=
          True, unique=True), canonical SMILES), the amount split equally.
       The step's pool adds the amounts of equal SMILES over all inputs.
       d. Site atoms (SMARTS):
          AMINE = [NX3;H1,H2;+0;!$(N[!#6]);!$(N[#6;!X4])]  (aliphatic primary/secondary:
            every heavy neighbour an sp3 carbon); PRIMARY_AMINE / SECONDARY_AMINE the same
            with H2 / H1;
          ANILINE = [NX3;H1,H2;+0;$(Nc);!$(N(c)c);!$(N[!#6]);!$(N[#6;!X4;!c])];
          PRIMARY_OH = [OX2H1;$(O[CH2X4])]; SECONDARY_OH = [OX2H1;$(O[CH1X4]([#6])[#6])];
          PHENOL = [OX2H1;$(Oc)];
          ACTIVATOR = [$([OX2H1]),$([OX2][CX4]),$([NX3;+0;!$(N[!#6])])];
          ACID = [#6:3][CX3:1](=[O:2])[OX2H1,OX1-].
          A site atom X is written with map label 1 ([...:1]). Transformations: classes in
          order as (label, level: reaction SMARTS, ...):
          - boc_protection: (primary amine, 0: PRIMARY_AMINE X>>[N:1]C(=O)OC(C)(C)C),
            (secondary amine, 1: SECONDARY_AMINE, the same), (aniline, 2: ANILINE, the same)
          - boc_deprotection: (N-Boc, 0: [NX3:1][CX3](=O)O[CX4]([CH3])([CH3])[CH3]>>[N:1])
          - tbs_protection: (primary alcohol, 0: X>>[O:1][Si](C)(C)C(C)(C)C), (phenol, 1),
            (secondary alcohol, 2)
          - tbs_deprotection: (O-TBS, 0: [OX2:1][Si]([CH3])([CH3])[CX4]([CH3])([CH3])[CH3]>>[O:1])
          - acetylation: (aliphatic amine, 0: AMINE X>>[N:1]C(C)=O), (aniline, 1),
            (primary alcohol, 1: X>>[O:1]C(C)=O), (secondary alcohol or phenol, 2: both)
          - esterification: (carboxylic acid, 1: ACID>>[#6:3][C:1](=[O:2])OC)
          - amide_coupling: (carboxylic acid, 0: ACID>>[#6:3][C:1](=[O:2])NCc1ccccc1);
            incompatible: AMINE
          - ester_hydrolysis: (aryl ester, 0: [#6:5][CX3:1](=[O:2])[OX2:3][c:4]>>
            ([#6:5][C:1](=[O:2])O.[O:3][c:4])), (alkyl ester or lactone, 1: the same with
            [CX4:4]; a lactone opens to one molecule)
          - lialh4_reduction: (aldehyde or ketone, 0: [#6:3][CX3H1:1]=[O:2]>>[#6:3][C:1][O:2],
            [#6:3][CX3:1](=[O:2])[#6:4]>>[#6:3][C:1]([O:2])[#6:4]), (ester or carboxylic acid,
            1: [#6:5][CX3:1](=[O:2])[OX2:3][#6:4]>>([#6:5][C:1][O:2].[O:3][#6:4]),
            ACID>>[#6:3][C:1][O:2]), (amide, 2: [#6:3][CX3:1](=O)[NX3:4]>>[#6:3][C:1][N:4])
          - nitro_reduction: (nitro, 1: [#6:2][N+:1](=O)[O-]>>[#6:2][N+0:1]), (aryl bromide
            or iodide, 2: [c:1][Br,I]>>[c:1]) (hydrogenolysis when hot)
          - alcohol_oxidation: (primary alcohol, 0: [CH2X4:1][OX2H1:2]>>[C:1]=[O:2]),
            (secondary alcohol, 1: [CH1X4:1]([#6:3])([#6:4])[OX2H1:2]>>
            [C:1]([#6:3])([#6:4])=[O:2]), (aldehyde, 2: [#6:3][CX3H1:1]=[O:2]>>
            [#6:3][C:1](=[O:2])O) (over-oxidation to the acid when hot); incompatible: AMINE
          - reductive_amination: (aldehyde, 0: [#6:3][CX3H1:1]=O>>[#6:3][C:1]N1CCOCC1),
            (ketone, 1: [#6:3][CX3:1](=O)[#6:4]>>[#6:3][C:1]([#6:4])N1CCOCC1)
          - eschweiler_clarke: (primary amine, 1: X>>C[N:1]C), (secondary amine, 2: X>>C[N:1])
          - aromatic_bromination: (para to an activating group, 0:
            [cH;$(c1:c:c:c(-ACTIVATOR):c:c1):1]>>[c:1]Br), (ortho, 1: [cH;$(c:c-ACTIVATOR):1]>>
            [c:1]Br)
          - dehalogenation: (aryl iodide or bromide, 1: [c:1][I,Br]>>[c:1]), (aryl chloride,
            2: [c:1]Cl>>[c:1])
          Routes: boc_esterify_deprotect = boc_protection, esterification, boc_deprotection;
          boc_couple_deprotect = boc_protection, amide_coupling, boc_deprotection;
          couple_reduce = amide_coupling, lialh4_reduction; nitro_reduce_acetylate =
          nitro_reduction, acetylation; hydrolyse_couple = ester_hydrolysis, amide_coupling;
          oxidise_aminate = alcohol_oxidation, reductive_amination; boc_oxidise_deprotect =
          boc_protection, alcohol_oxidation, boc_deprotection; tbs_oxidise_deprotect =
          tbs_protection, alcohol_oxidation, tbs_deprotection; esterify_reduce =
          esterification, lialh4_reduction; acetylate_brominate = acetylation,
          aromatic_bromination; dehalogenate_esterify = dehalogenation, esterification;
          methylate_hydrolyse = eschweiler_clarke, ester_hydrolysis; tbs_acetylate_deprotect
          = tbs_protection, acetylation, tbs_deprotection.

    3. Clean-up of every outcome (stage "clean-up"):
       a. copy; SanitizeMol (an exception: the outcome is dropped);
          AssignStereochemistry(cleanIt=True, force=True); round-trip through canonical
          SMILES; H counts made implicit as in 2.
       b. split into fragments (GetMolFrags); each fragment: the canonical tautomer (the
          enumerator of step 1), RemoveStereochemistry when "strip", canonical SMILES.
       c. a fragment with at most 4 heavy atoms (BYPRODUCT_MAX_HEAVY) is a by-product
          (methanol, ethanol, acetic acid, CO2-level fragments) and is dropped, not counted
          anywhere; the others are kept.

    4. Rank and cap (stage "rank"): sort a pool by (amount rounded to 4 decimals, largest
       first; then most heavy atoms; then highest QED.qed rounded to 4 decimals; then the
       canonical SMILES string ascending). After every step but the last, the first K go
       on (the rest, "capped", are lost). The last step is not capped: its whole pool is
       the crude mixture.

    5. Work-up at pH p (stage "work-up"). Ionisation of a molecule: acid groups (SMARTS,
       pKa, site atom), each site atom counted once, ionised (-1) when p > pKa:
       carboxylic acid [CX3](=O)[OX2H1,OX1-] 3.5 (the O); N-aryl sulfonamide
       [#6]S(=O)(=O)[NX3H1,NX2-]c 6.5 (the N); phenol c[OX2H1,OX1-] 9.5; primary
       sulfonamide [#6]S(=O)(=O)[NX3H2,NX3H1-] 9.9. Base groups, protonated (+1) when
       p < pKa, in this order (an atom takes the first group it matches): morpholine
       [NX3;+0;R;$(N1CCOCC1)] 6.5; aliphatic amine (primary, secondary or tertiary: every
       neighbour an sp3 carbon, not a morpholine N) 9.8; aniline (the ANILINE atom) 4.6;
       pyridine-type ring N [nX2;+0;r6] 5.2. Every other atom keeps its formal charge;
       charges cancelled by an opposite charge on a neighbour (nitro) are not an ionised
       group, any other formal charge (quaternary ammonium) is. The net charge is the sum.
       A molecule goes to the aqueous phase when it has any ionised group (zwitterions
       too) or, neutral, when Crippen.MolLogP < 0 (AQUEOUS_LOGP: it prefers water to
       octanol); otherwise to the organic phase.
       Recovered starting material: every crude molecule whose constitution (canonical
       SMILES with isomericSmiles=False) equals that of S. The other molecules are the
       product molecules. The kept phase: "aqueous" when its product amount is strictly
       larger than the organic phase's, else "organic"; "none" (no product, every output
       below but recovered_pct empty or 0) when there is no product molecule at all. products = the kept
       phase's product molecules ranked as in 4, the first K; selected = the first;
       yield_pct = its amount; purity_pct = 100 x its amount / the amount of every crude
       molecule in the kept phase (recovered starting material included; capped products
       too); product_yields_pct = the amounts of `products` in that rank order.
       n_species = molecules in the crude mixture; crude_pct = their total amount;
       recovered_pct = the amount of the recovered starting material in it (whatever the
       phase).

    6. Descriptors of the selected product P (parsed from its SMILES; all 0 / 0.0 with
       no product): mw = Descriptors.MolWt; logp = Crippen.MolLogP; tpsa =
       rdMolDescriptors.CalcTPSA(includeSandP=True); qed = QED.qed (default weights);
       charge = the net charge of 5 at the work-up pH.

    7. Isolation (stage "isolation"), with the phase kept in 5 (all three outputs 0 when
       it is "none"): every crude molecule m (recovered starting material included) with
       its amount a. Its ionisable sites are those of 5 (the same groups, pKa values and
       first-match rule); a molecule with a charge outside them that is not cancelled by a
       neighbour (quaternary ammonium) has D = 0; otherwise the neutral share is the
       product over its sites of 1 / (1 + 10^(p - pKa)) for an acid and 1 / (1 + 10^(pKa -
       p)) for a base (independent sites), and D = 10^(Crippen.MolLogP) x that share.
       Three extractions with an equal volume (VOLUME_RATIO = 1, EXTRACTIONS = 3): the
       share left in the water is w = (1 / (1 + D))^3; the kept phase holds a (1 - w) of m
       when it is "organic", a w when it is "aqueous". isolated_pct = the selected
       product's amount there; kept_pct = the sum over every crude molecule;
       isolated_purity_pct = 100 x isolated_pct / kept_pct (0 when kept_pct is 0).

    Tolerances, and why:
    - products, selected (sets after RDKit canonicalisation), n_products, n_species, phase,
      charge: exact. They are discrete functions of the molecular graphs
      and rules; any deviation is a wrong rule, not rounding.
    - yield_pct, purity_pct, crude_pct, recovered_pct, product_yields_pct (each item):
      0.01 absolute. Floating-point arithmetic in any summation order, and exp or expm1,
      agree to 1e-9, while a rate off by 1 %, one site's crowding off by one atom, the
      reagent not used up between rounds, a site matched twice counted twice, a wrong
      regioisomer split or a molecule missing from the kept phase moves them by more
      than 0.01 wherever they matter (measured in the tests).
    - mw: 0.02 absolute. Other standard atomic-weight tables (older IUPAC values) move
      these molecules by < 0.01; monoisotopic instead of average masses is off by > 0.04
      for every product here, a wrong product by >= 1 unit (H2).
    - tpsa: 0.01 absolute: a sum of tabulated 2-decimal contributions; leaving out S and
      P (the RDKit default) moves a thioether by 25.30, a thiol by 38.80.
    - logp: 0.01 absolute: a sum of 4-decimal Crippen atom contributions; another
      summation order agrees to 1e-12, while a product one atom off, or molar
      refractivity taken for logP, is off by far more.
    - qed: 0.002 absolute: RDKit's QED is deterministic; the tolerance absorbs another
      summation order, while QED with the other published weights moves most molecules
      of this task by more, and a wrong product usually by far more.
    - isolated_pct, isolated_purity_pct, kept_pct: 0.05 absolute (per cent). Any
      summation order or log/exp form of the same formula agrees to 1e-9; another
      extraction count or volume ratio, a pKa off by half a unit, a dominant-form (all or
      nothing) distribution, Descriptors.MolLogP of a charged form, or one ionised site
      for the whole molecule moves them by more than 0.05 wherever a molecule's D at the
      work-up pH lies between about 0.01 and 100 (measured below in the tests).
    """
    from rdkit import Chem
    from rdkit.Chem import Descriptors, rdDepictor

    from . import reference

    t = reference.trace(dict(params))
    out = reference.outputs(t, dict(params))
    evidence = Path(evidence)
    route, record = reference.parse_case(params["case"])
    (evidence / "compound.json").write_text(json.dumps({
        "route": route, "transformations": reference.ROUTES[route], "record": record,
        "name": reference.REACTANTS.get(record, "unnamed compound")}, indent=1, sort_keys=True) + "\n",
        encoding="utf-8")

    w = t["workup"]
    total = sum(w.crude.values())
    peaks = []
    for smi, amount in w.crude.items():
        mol = Chem.MolFromSmiles(smi)
        charged = Chem.GetFormalCharge(mol) > 0
        mz = Descriptors.ExactMolWt(mol) + (0.0 if charged else PROTON)
        peaks.append({"mz": round(mz) if mz >= 1000 else round(mz, 1),
                      "area_pct": round(float(100 * amount / total), 1), "phase": w.phases[smi]})
    peaks.sort(key=lambda p: (p["mz"], -p["area_pct"], p["phase"]))
    (evidence / "lcms.json").write_text(json.dumps({"peaks": peaks, "phase_kept": w.phase}, indent=1,
                                                   sort_keys=True) + "\n", encoding="utf-8")

    sdf = evidence / "route.sdf"
    sdf.write_bytes(b"")
    if any(step.ranked for step in t["steps"]):
        # Structures, not SMILES text: a molecule that is also another scenario's product
        # is not spelled out as a string.
        writer = Chem.SDWriter(str(sdf))
        for i, step in enumerate(t["steps"], start=1):
            for rank, smi in enumerate(step.ranked, start=1):
                mol = Chem.MolFromSmiles(smi)
                rdDepictor.Compute2DCoords(mol)
                conf = mol.GetConformer()
                for k in range(mol.GetNumAtoms()):
                    pos = conf.GetAtomPosition(k)
                    conf.SetAtomPosition(k, (round(pos.x, 2), round(pos.y, 2), 0.0))
                status = "kept" if smi in step.kept else "capped"
                mol.SetProp("_Name", f"step {i} {status} {rank}")
                for key, value in (("step", str(i)), ("transformation", step.transformation),
                                   ("amount", f"{float(step.pool[smi]):.4g}"), ("rank", str(rank)),
                                   ("status", status)):
                    mol.SetProp(key, value)
                writer.write(mol)
        writer.close()
    return out


PROTON = 1.007276
