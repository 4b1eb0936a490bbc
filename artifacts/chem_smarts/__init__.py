"""Built-in oracle `chem_smarts`: a short synthetic route enumerated with RDKit reaction SMARTS,
from a registered compound record to the characterised top product."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from recon import Choice, Evidence, Int, Integer, Number, SequenceOf, SetOf, oracle

ROUTE_NAMES = [
    "boc_esterify_deprotect", "boc_couple_deprotect", "couple_reduce", "nitro_reduce_acetylate",
    "hydrolyse_couple", "oxidise_aminate", "boc_oxidise_deprotect", "tbs_oxidise_deprotect",
    "esterify_reduce", "acetylate_brominate", "dehalogenate_esterify", "methylate_hydrolyse",
    "tbs_acetylate_deprotect",
]

# Choice values ARE the registered records (SMILES, RDKit canonical form, one per line);
# names are in reference.REACTANTS and in the evidence.
REACTANT_SMILES = r"""
N[C@@H](Cc1ccc(O)cc1)C(=O)O
Cl.NC[C@H](CC(=O)O)c1ccc(Cl)cc1
CCN(CC)CCOC(=O)c1ccc(N)cc1.Cl
CN[C@@H](C)[C@H](O)c1ccccc1.CN[C@@H](C)[C@H](O)c1ccccc1.O=S(=O)(O)O
O=C(N[C@H](CO)[C@H](O)c1ccc([N+](=O)[O-])cc1)C(Cl)Cl
COC(=O)[C@@H]([NH3+])CO.[Cl-]
O=C([O-])c1ccc([N+](=O)[O-])cc1Cl.[Na+]
CCOC(=O)c1ccc(N)cc1
CC(=O)Oc1ccccc1C(=O)O
NC[C@H](O)c1ccc(O)c(O)c1.O=C(O)[C@H](O)[C@@H](O)C(=O)O
Cc1ncc([N+](=O)[O-])n1CCO
C[N+](C)(C)C[C@H](O)CC(=O)[O-]
C[C@@H]1O[C@@H]1P(=O)(O)O.NC(CO)(CO)CO
Nc1ccc(S(N)(=O)=O)cc1
O=C(O)c1ccc(O)nc1
Cc1cn([C@H]2C[C@H](O)[C@@H](CO)O2)c(=O)[nH]c1=O
CC(=O)Nc1ccc(O)cc1
COC(=O)c1ccc(O)cc1
NCC1(CC(=O)O)CCCCC1
Cc1cccc(C)c1OCC(C)N.Cl
COc1cc(C=O)ccc1O
COc1ccc2cc(CCC(C)=O)ccc2c1
O=C(O)c1cc(Br)ccc1Cl
O=C([O-])Cc1ccccc1Nc1c(Cl)cccc1Cl.[Na+]
CSCC[C@H](N)C(=O)O
C[C@H](CS)C(=O)N1CCC[C@H]1C(=O)O
CCOC(=O)C[C@H](O)CCl
COC(=O)[C@@H](O)c1ccccc1
CC(C)(C)NCC(O)c1ccc(O)c(CO)c1.CC(C)(C)NCC(O)c1ccc(O)c(CO)c1.O=S(=O)(O)O
Cc1ncc(CO)c(CO)c1O.Cl
COc1ccccc1OCC(O)CO
C[C@]12CC[C@@H]3c4ccc(O)cc4CC[C@H]3[C@@H]1CC[C@@H]2O
CO[C@H]1O[C@H](CO)[C@@H](O)[C@H](O)[C@H]1O
CC(C)NCC(O)COc1ccc(CC(N)=O)cc1
CC(C)NCC(O)COc1cccc2ccccc12.Cl
Cl.NCCc1ccc(O)c(O)c1
CCOC(=O)[C@H](CCc1ccccc1)N[C@@H](C)C(=O)N1CCC[C@H]1C(=O)O.O=C(O)/C=C\C(=O)O
CCOC(=O)C1=C[C@@H](OC(CC)CC)[C@H](NC(C)=O)[C@@H](N)C1.O=P(O)(O)O
COc1c(C)c2c(c(O)c1C/C=C(\C)CCC(=O)O)C(=O)OC2
CCCCCCCCc1ccc(CCC(N)(CO)CO)cc1.Cl
NC(=O)c1ncn([C@@H]2O[C@H](CO)[C@@H](O)[C@H]2O)n1
CC(=O)Nc1c(I)c(NC(C)=O)c(I)c(C(=O)O)c1I.CNC[C@H](O)[C@@H](O)[C@H](O)[C@H](O)CO
C[N+](C)(C)CCO.O=C([O-])c1ccccc1O
NS(=O)(=O)c1cc(C(=O)O)c(NCc2ccco2)cc1Cl
CS(=O)(=O)c1ccc([C@@H](O)[C@@H](CO)NC(=O)C(Cl)Cl)cc1
O=C(O)CCCC[C@@H]1SC[C@@H]2NC(=O)N[C@@H]21
CCS(=O)(=O)CCn1c([N+](=O)[O-])cnc1C
Cc1cc(NS(=O)(=O)c2ccc(N)cc2)no1
""".split()

TOP = "the route's top product"


@oracle(
    name="chem_smarts",
    version="2.0.0",
    title="Multi-step route enumeration on a registered compound, with product descriptors",
    domain="chemistry",
    toolkit=["rdkit"],
    description=(
        "A medicinal-chemistry enumeration workflow plans a short synthetic route on one registered "
        "compound. The compound record is taken as registered (it may carry a counter-ion or salt "
        "partner, charges, or an unusual tautomer) and prepared the way a registration system prepares "
        "its parent structure. A named route of two or three named transformations (protections and "
        "deprotections, couplings, reductions, oxidations, ...; co-reagents implicit) is then applied "
        "step by step, each step to every molecule carried forward from the previous one, in one of "
        "three site modes; the molecules each step gives are cleaned up, ranked and capped, and the top "
        "molecule at the end of the route is characterised. The question: how many distinct molecules "
        "each step gives, which molecules the route ends with and which one ranks first, and that "
        "product's molecular weight, lipophilicity, polar surface area, hydrogen-bond counts, rotatable "
        "bonds, sp3 fraction, drug-likeness, fingerprint size and net charge at physiological pH. A "
        "route that makes no net change to the compound has no product."
    ),
    axes={
        "route": Choice(ROUTE_NAMES, doc=(
            "the route, named after its steps in order: boc = Boc protection of amines (first) or Boc removal "
            "(last); tbs = TBS silyl protection of OH groups (first) or its removal (last); esterify = methyl "
            "ester formation from carboxylic acids (methanol); couple = amide coupling of carboxylic acids with "
            "benzylamine; reduce = LiAlH4 reduction (couple_reduce, esterify_reduce) or nitro-to-amine reduction "
            "(nitro_reduce); acetylate = acetylation (acetic anhydride); hydrolyse = ester hydrolysis; oxidise = "
            "alcohol oxidation to aldehyde/ketone; aminate = reductive amination with morpholine; methylate = "
            "Eschweiler-Clarke N-methylation; brominate = electrophilic aromatic bromination; dehalogenate = "
            "removal of aryl halogens (C-X to C-H)")),
        "reactant": Choice(REACTANT_SMILES, doc=(
            "the registered compound record as SMILES, exactly as registered (salts, counter-ions and charges "
            "included); its name is in standardisation.json")),
        "site_mode": Choice(["selective", "every_site", "exhaustive"], doc=(
            "how many reactive sites one application of a step transforms: selective = one site per product, "
            "among the kind of site the reagent attacks first; every_site = one site per product, any reactive "
            "site; exhaustive = all reactive sites at once")),
        "stereochemistry": Choice(["keep", "strip", "enumerate"], doc=(
            "keep = molecules keep the compound's stereochemistry; strip = all stereochemistry is removed; "
            "enumerate = kept, and every molecule a step forms is expanded into the stereoisomers of its "
            "unassigned stereocentres and stereo double bonds")),
        "max_products": Int(1, 4, doc="at most this many molecules, the best-ranked, are carried from one step "
                                      "to the next and reported at the end"),
        "fingerprint_radius": Int(1, 3, doc="radius of the Morgan (circular) fingerprint behind fp_on, in bonds"),
    },
    outputs={
        "parent": SetOf(normalize="smiles", doc="the prepared compound the route starts from, as a one-element "
                                                "list of SMILES"),
        "products": SetOf(normalize="smiles", doc="the molecules the route ends with (the last step's carried "
                                                  "molecules), as SMILES; empty when the route has no product"),
        "n_products": Integer(tol=0, doc="how many molecules `products` holds"),
        "selected": SetOf(normalize="smiles", doc=f"{TOP} (the best-ranked of `products`) as a one-element list "
                                                  "of SMILES; empty with no product"),
        "step_counts": SequenceOf(Integer(tol=0), doc="per step in route order: distinct molecules the step "
                                                      "leaves before the cap"),
        "step_unchanged": SequenceOf(Integer(tol=0), doc="per step in route order: how many of the step's input "
                                                         "molecules came through it untouched"),
        "step_mw": SequenceOf(Number(abs=0.02), doc="per step in route order: average molecular weight of the "
                                                    "step's best-ranked molecule, g/mol (0.0 when it leaves none)"),
        "mw": Number(abs=0.02, doc=f"average molecular weight of {TOP}, g/mol (this and every descriptor below "
                                   "is 0 with no product)"),
        "logp": Number(abs=0.01, doc=f"Wildman-Crippen logP of {TOP}"),
        "tpsa": Number(abs=0.01, doc=f"topological polar surface area of {TOP}, square angstrom"),
        "hba": Integer(tol=0, doc=f"hydrogen-bond acceptors of {TOP}"),
        "hbd": Integer(tol=0, doc=f"hydrogen-bond donors of {TOP}"),
        "rotb": Integer(tol=0, doc=f"rotatable bonds of {TOP}"),
        "fsp3": Number(abs=1e-4, doc=f"fraction of the carbons of {TOP} that are sp3 (0..1)"),
        "qed": Number(abs=0.002, doc=f"QED drug-likeness of {TOP} (0..1)"),
        "fp_on": Integer(tol=0, doc=f"set bits of the Morgan fingerprint of {TOP}"),
        "charge": Integer(tol=0, doc=f"net charge of the dominant form of {TOP} at pH 7.4"),
    },
    stages=["standardise the record: clean-up, heavy-atom largest fragment, uncharge, canonical tautomer keeping "
            "stereo", "per step: incompatibility check, ranked site classes applied in the site mode, unchanged "
            "pass-through", "product clean-up: sanitise, split, by-product filter, canonical tautomer, stereo "
            "keep/strip/enumerate, dedupe", "rank by heavy atoms, QED, SMILES and cap; after the last step drop "
            "the compound's constitution", "descriptors of the top product (Lipinski counts, TPSA with S and P, "
            "1024-bit Morgan)", "net charge at pH 7.4 from group rules"],
    reference="reference.py",
    evidence_level="summary",
    evidence={
        "standardisation.json": Evidence("the compound record and its preparation: the record SMILES and the "
                                "compound's name, then canonical SMILES after each preparation stage "
                                "(after_cleanup, after_fragment, after_uncharge) and the prepared "
                                "compound the route starts from (standardised)", reveals="trace"),
        "route.sdf": Evidence("every molecule each step produced, step by step (RDKit SD file, 2D depiction at 0.01 "
                     "angstrom, hydrogens implicit; a 0-byte file when no step produced anything: check the "
                     "size or use ForwardSDMolSupplier). SD tags: step (1-based), "
                     "transformation, status (kept = carried to the next step or reported at the end, "
                     "capped = ranked below the cap, excluded = dropped after the last step, byproduct = "
                     "dropped as a by-product), rank (1 = best; 0 for excluded and by-products), source "
                     "(1-based position, among the step's inputs in order, of the input it first came from; the "
                     "inputs of a step are the previous step's kept molecules in rank order) and unchanged "
                     "(1 when it is an input carried through the step untouched). Within a step: ranked "
                     "molecules in rank order, then excluded ones, then by-products", reveals="trace"),
        "route_summary.json": Evidence("the route's transformations and, per step, counts: inputs, reacted (inputs "
                              "with a reactive site), unchanged (inputs carried through), incompatible "
                              "(inputs the step refused), failed_sanitisation (outcomes RDKit could not "
                              "sanitise), byproducts, excluded, products (distinct molecules before the cap) "
                              "and kept; then the top product (selected), its dominant form at pH 7.4 "
                              "(selected_ph74) and the on-bit indices of its fingerprint "
                              "(selected_fingerprint_bits); null / [] with no product", reveals="summary"),
    },
)
def chem_smarts(params: dict[str, Any], evidence: Path) -> dict[str, Any]:
    """Enumerate a named route on a registered compound and describe its top product.

    Everything runs in RDKit (pinned version); SMILES are RDKit canonical SMILES
    (Chem.MolToSmiles defaults, isomeric). Parameters: `route` (its transformations
    below), `reactant` (the record SMILES), `site_mode`, `stereochemistry`,
    `max_products` (the cap, K), `fingerprint_radius` (r).

    1. Standardise the record (stage "standardise"):
       mol = MolFromSmiles(record); rdMolStandardize.Cleanup(mol) with default parameters;
       the largest fragment with rdMolStandardize.LargestFragmentChooser built from
       CleanupParameters with largestFragmentChooserCountHeavyAtomsOnly = True (heavy atoms,
       not all atoms: fosfomycin trometamol keeps fosfomycin, not trometamol; ties as RDKit
       breaks them); rdMolStandardize.Uncharger() (defaults: carnitine stays a zwitterion)
       .uncharge; the canonical tautomer with rdMolStandardize.TautomerEnumerator built from
       CleanupParameters with tautomerRemoveSp3Stereo = False and tautomerRemoveBondStereo =
       False (so alpha-carbon stereocentres survive; 6-hydroxynicotinic acid becomes the
       pyridone); with stereochemistry == "strip", Chem.RemoveStereochemistry. The
       standardised compound S = canonical SMILES of that (re-parsed); parent = [S].

    2. Each step runs on the molecules carried from the previous step (step 1: [S]), in
       that order. Every input molecule m is parsed and its bracket-atom H counts are made
       implicit wherever the default valence gives the same total H (non-aromatic atoms
       only; so that a centre written [C@@H] can lose its H in a reaction). Then:
       a. Incompatible: amide_coupling and alcohol_oxidation refuse any m with a free
          aliphatic amine (AMINE below; it would self-condense / be oxidised): m is
          dropped (counted "incompatible").
       b. Sites. A transformation is an ordered list of site classes, each a list of
          single-reactant reaction SMARTS applied with RunReactants((m,)); each outcome's
          first product is one outcome (one site transformed). Modes:
          - selective: the outcomes of the FIRST class (in order) that has any outcome;
          - every_site: the outcomes of every class;
          - exhaustive: work list [m]; pop the first molecule; take the first outcome of
            the first class with an outcome, sanitise it (as in 3a) and push its
            fragments to the end of the work list; a molecule without outcomes is done.
            The outcome is all done molecules together (one outcome). More than 24
            edits, or an edit that fails to sanitise, makes it one failed outcome.
          No outcome at all (no reactive site): m passes the step UNCHANGED into the
          step's pool, as is (not cleaned again, not enumerated). This holds for every
          transformation, protections and functional-group steps alike.
       c. Site atoms (SMARTS):
          AMINE = [NX3;H1,H2;+0;!$(N[!#6]);!$(N[#6;!X4])]  (aliphatic primary/secondary:
            every heavy neighbour an sp3 carbon); PRIMARY_AMINE / SECONDARY_AMINE the same
            with H2 / H1;
          ANILINE = [NX3;H1,H2;+0;$(Nc);!$(N(c)c);!$(N[!#6]);!$(N[#6;!X4;!c])];
          PRIMARY_OH = [OX2H1;$(O[CH2X4])]; SECONDARY_OH = [OX2H1;$(O[CH1X4]([#6])[#6])];
          PHENOL = [OX2H1;$(Oc)];
          ACTIVATOR = [$([OX2H1]),$([OX2][CX4]),$([NX3;+0;!$(N[!#6])])];
          ACID = [#6:3][CX3:1](=[O:2])[OX2H1,OX1-].
          A site atom X is written with map label 1 ([...:1]). Transformations, classes in
          order (class: reaction SMARTS, ...):
          - boc_protection: [AMINE: X>>[N:1]C(=O)OC(C)(C)C]  (anilines are not protected)
          - boc_deprotection: [[NX3:1][CX3](=O)O[CX4]([CH3])([CH3])[CH3]>>[N:1]]
          - tbs_protection: [PRIMARY_OH: X>>[O:1][Si](C)(C)C(C)(C)C],
            [SECONDARY_OH and PHENOL: the same]
          - tbs_deprotection: [[OX2:1][Si]([CH3])([CH3])[CX4]([CH3])([CH3])[CH3]>>[O:1]]
          - acetylation: [AMINE and ANILINE: X>>[N:1]C(C)=O],
            [PRIMARY_OH, SECONDARY_OH, PHENOL: X>>[O:1]C(C)=O]
          - esterification: [ACID>>[#6:3][C:1](=[O:2])OC]
          - amide_coupling: [ACID>>[#6:3][C:1](=[O:2])NCc1ccccc1]; incompatible: AMINE
          - ester_hydrolysis: [[#6:5][CX3:1](=[O:2])[OX2:3][#6:4]>>([#6:5][C:1](=[O:2])O.[O:3][#6:4])]
            (one product molecule holding both parts; lactones open to one molecule)
          - lialh4_reduction: [[#6:3][CX3H1:1]=[O:2]>>[#6:3][C:1][O:2],
            [#6:3][CX3:1](=[O:2])[#6:4]>>[#6:3][C:1]([O:2])[#6:4]],
            [[#6:5][CX3:1](=[O:2])[OX2:3][#6:4]>>([#6:5][C:1][O:2].[O:3][#6:4]),
            ACID>>[#6:3][C:1][O:2]], [[#6:3][CX3:1](=O)[NX3:4]>>[#6:3][C:1][N:4]]
          - nitro_reduction: [[#6:2][N+:1](=O)[O-]>>[#6:2][N+0:1]]
          - alcohol_oxidation: [[CH2X4:1][OX2H1:2]>>[C:1]=[O:2]],
            [[CH1X4:1]([#6:3])([#6:4])[OX2H1:2]>>[C:1]([#6:3])([#6:4])=[O:2]]; incompatible: AMINE
          - reductive_amination: [[#6:3][CX3H1:1]=O>>[#6:3][C:1]N1CCOCC1,
            [#6:3][CX3:1](=O)[#6:4]>>[#6:3][C:1]([#6:4])N1CCOCC1]
          - eschweiler_clarke: [PRIMARY_AMINE: X>>C[N:1]C, SECONDARY_AMINE: X>>C[N:1]]
          - aromatic_bromination: [[cH;$(c1:c:c:c(-ACTIVATOR):c:c1):1]>>[c:1]Br] (para),
            [[cH;$(c:c-ACTIVATOR):1]>>[c:1]Br] (ortho)
          - dehalogenation: [[c:1][I,Br]>>[c:1]], [[c:1]Cl>>[c:1]]
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
       a. copy; SanitizeMol (an exception: the outcome is dropped, "failed_sanitisation");
          AssignStereochemistry(cleanIt=True, force=True); round-trip through canonical
          SMILES; H counts made implicit as in 2.
       b. split into fragments (GetMolFrags); each fragment: the canonical tautomer (the
          enumerator of step 1), RemoveStereochemistry when "strip", canonical SMILES.
          With "enumerate", the fragment is replaced by its stereoisomers:
          EnumerateStereoisomers with StereoEnumerationOptions(onlyUnassigned=True,
          unique=True), each as canonical SMILES, deduplicated.
       c. a fragment with at most 4 heavy atoms is a by-product (methanol, ethanol, acetic
          acid) and is dropped; the others join the step's pool.
       The pool is deduplicated by canonical SMILES; a molecule's source is the first
       input (in input order) it came from.

    4. Rank and cap (stage "rank"): after the LAST step only, drop every pool molecule
       whose constitution (canonical SMILES with isomericSmiles=False) equals that of S
       (the route made no net change: "excluded"). Sort the pool by (most heavy atoms,
       then highest QED rounded to 4 decimals, then the canonical SMILES string
       ascending); keep the first K. The kept molecules are the next step's inputs, in
       that order. step_counts[i] = pool size after exclusion and before the cap;
       step_unchanged[i] = inputs of step i that had no reactive site (2b); step_mw[i]
       = Descriptors.MolWt of the step's first-ranked molecule (0.0 if none). products =
       the last step's kept molecules, n_products its length, selected = its first one.

    5. Descriptors of the selected product P (parsed from its SMILES; all 0 / 0.0 with
       no product): mw = Descriptors.MolWt; logp = Crippen.MolLogP; tpsa =
       rdMolDescriptors.CalcTPSA(includeSandP=True); hba / hbd =
       CalcNumLipinskiHBA / CalcNumLipinskiHBD (N+O count, NH+OH count); rotb =
       CalcNumRotatableBonds (default strictness); fsp3 = CalcFractionCSP3; qed = QED.qed
       (default weights); fp_on = on bits of rdFingerprintGenerator.GetMorganGenerator(
       radius=r, fpSize=1024) (no chirality, no counts).

    6. Charge at pH 7.4: on P, every carboxylic acid [CX3](=O)[OX2H1] loses its H (O-),
       every N matching [NX3;+0;!$(N[!#6]);!$(N[#6;!X4])] (aliphatic primary, secondary or
       tertiary amine) gains one H and a + charge; everything else (anilines, amides,
       phenols, heteroaromatic N, quaternary N, nitro) as is. charge = the net formal
       charge of that form.

    Tolerances, and why:
    - parent, products, selected (sets after RDKit canonicalisation), n_products,
      step_counts, step_unchanged, hba, hbd, rotb, fp_on, charge: exact. They are
      discrete functions of the molecular graphs; any deviation is a wrong rule, not
      rounding.
    - mw, step_mw: 0.02 absolute. Other standard atomic-weight tables (older IUPAC
      values) move these molecules by < 0.01; monoisotopic instead of average masses is
      off by > 0.04 for every product here, a wrong product by >= 1 unit (H2).
    - tpsa: 0.01 absolute: a sum of tabulated 2-decimal contributions; leaving out S and
      P (the RDKit default) moves a thioether by 25.30, a thiol by 38.80.
    - logp: 0.01 absolute: a sum of 4-decimal Crippen atom contributions; another
      summation order agrees to 1e-12, while a product one atom off, or molar
      refractivity taken for logP, is off by far more.
    - fsp3: 1e-4 absolute: a ratio of small integers.
    - qed: 0.002 absolute: RDKit's QED is deterministic; the tolerance absorbs another
      summation order, while QED with the other published weights moves 95 % (max
      weights, median 0.022) and 98 % (unweighted, median 0.055) of the molecules this
      task can select by more, and a wrong product usually by far more.
    """
    from rdkit import Chem
    from rdkit.Chem import rdDepictor

    from . import reference

    t = reference.trace(dict(params))
    out = reference.outputs(t, dict(params))
    evidence = Path(evidence)
    std = t["standardisation"]
    (evidence / "standardisation.json").write_text(json.dumps({
        "record": params["reactant"], "name": reference.REACTANTS.get(params["reactant"], "unnamed compound"),
        "after_cleanup": std["cleaned"], "after_fragment": std["fragment"], "after_uncharge": std["uncharged"],
        "standardised": std["standardised"]}, indent=1, sort_keys=True) + "\n", encoding="utf-8")

    sdf = evidence / "route.sdf"
    sdf.write_bytes(b"")
    if any(step.candidates for step in t["steps"]):
        # Structures, not SMILES text: a molecule that is also another scenario's product
        # is not spelled out as a string. 2D coordinates at 0.01 A carry the stereo wedges
        # and no long numbers.
        writer = Chem.SDWriter(str(sdf))
        inputs = [std["standardised"]]
        for i, step in enumerate(t["steps"], start=1):
            for row in step.candidates:
                mol = Chem.MolFromSmiles(row["smiles"])
                rdDepictor.Compute2DCoords(mol)
                conf = mol.GetConformer()
                for k in range(mol.GetNumAtoms()):
                    pos = conf.GetAtomPosition(k)
                    conf.SetAtomPosition(k, (round(pos.x, 2), round(pos.y, 2), 0.0))
                mol.SetProp("_Name", f"step {i} {row['status']} {row['rank']}")
                for key, value in (("step", str(i)), ("transformation", step.transformation),
                                   ("status", row["status"]), ("rank", str(row["rank"])),
                                   ("source", str(inputs.index(row["source"]) + 1)),
                                   ("unchanged", "1" if row["unchanged"] else "0")):
                    mol.SetProp(key, value)
                writer.write(mol)
            inputs = step.kept
        writer.close()

    selected = t["selected"]
    summary: dict[str, Any] = {
        "route": params["route"],
        "transformations": [s.transformation for s in t["steps"]],
        "steps": [{"step": i, "transformation": s.transformation, **s.counts} for i, s in enumerate(t["steps"], 1)],
        "selected": selected, "selected_ph74": None, "selected_fingerprint_bits": [],
    }
    if selected:
        mol = Chem.MolFromSmiles(selected)
        summary["selected_ph74"] = Chem.MolToSmiles(reference.ph74_form(mol))
        summary["selected_fingerprint_bits"] = reference.morgan_bits(mol, int(params["fingerprint_radius"]))
    (evidence / "route_summary.json").write_text(json.dumps(summary, indent=1, sort_keys=True) + "\n",
                                                 encoding="utf-8")
    return out
