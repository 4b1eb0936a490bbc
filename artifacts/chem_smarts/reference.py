#!/usr/bin/env python3
"""Reference solution for the `chem_smarts` recon task (version 2).

Reads one scenario JSON object on stdin and prints the output JSON object on stdout.
Standalone: imports only the standard library and RDKit.

Pipeline: a registered reactant record (salt, counter-ion, charges, an odd tautomer)
-> standardised parent -> a named route of 2-3 transformations, each run on every
molecule carried from the previous step (ranked site classes; selective, every-site or
exhaustive application; molecules without a site pass unchanged; two transformations
refuse molecules with a free aliphatic amine) -> product clean-up (sanitise, split,
by-product filter, canonical tautomer keeping stereo, stereo kept / stripped /
enumerated, dedupe) -> rank (heavy atoms, QED, SMILES) and cap -> after the last step,
products with the reactant's constitution are dropped -> descriptors of the top final
product and its net charge at pH 7.4 from group rules.
"""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from typing import Any

from rdkit import Chem, RDLogger
from rdkit.Chem import (QED, Crippen, Descriptors, EnumerateStereoisomers, rdChemReactions,
                        rdFingerprintGenerator, rdMolDescriptors)
from rdkit.Chem.MolStandardize import rdMolStandardize

RDLogger.DisableLog("rdApp.*")

# ---------------------------------------------------------------------------------------
# Registered reactant records: choice value (the record's SMILES as registered) -> name.
REACTANTS = {
    "N[C@@H](Cc1ccc(O)cc1)C(=O)O": "L-tyrosine",
    "Cl.NC[C@H](CC(=O)O)c1ccc(Cl)cc1": "(R)-baclofen hydrochloride",
    "CCN(CC)CCOC(=O)c1ccc(N)cc1.Cl": "procaine hydrochloride",
    "CN[C@@H](C)[C@H](O)c1ccccc1.CN[C@@H](C)[C@H](O)c1ccccc1.O=S(=O)(O)O": "(1R,2S)-ephedrine sulfate (2:1)",
    "O=C(N[C@H](CO)[C@H](O)c1ccc([N+](=O)[O-])cc1)C(Cl)Cl": "chloramphenicol",
    "COC(=O)[C@@H]([NH3+])CO.[Cl-]": "L-serine methyl ester hydrochloride",
    "O=C([O-])c1ccc([N+](=O)[O-])cc1Cl.[Na+]": "sodium 2-chloro-4-nitrobenzoate",
    "CCOC(=O)c1ccc(N)cc1": "benzocaine",
    "CC(=O)Oc1ccccc1C(=O)O": "aspirin",
    "NC[C@H](O)c1ccc(O)c(O)c1.O=C(O)[C@H](O)[C@@H](O)C(=O)O": "(R)-norepinephrine bitartrate",
    "Cc1ncc([N+](=O)[O-])n1CCO": "metronidazole",
    "C[N+](C)(C)C[C@H](O)CC(=O)[O-]": "L-carnitine (inner salt)",
    "C[C@@H]1O[C@@H]1P(=O)(O)O.NC(CO)(CO)CO": "fosfomycin trometamol",
    "Nc1ccc(S(N)(=O)=O)cc1": "sulfanilamide",
    "O=C(O)c1ccc(O)nc1": "6-hydroxynicotinic acid (registered as the hydroxy tautomer)",
    "Cc1cn([C@H]2C[C@H](O)[C@@H](CO)O2)c(=O)[nH]c1=O": "thymidine",
    "CC(=O)Nc1ccc(O)cc1": "paracetamol",
    "COC(=O)c1ccc(O)cc1": "methylparaben",
    "NCC1(CC(=O)O)CCCCC1": "gabapentin",
    "Cc1cccc(C)c1OCC(C)N.Cl": "mexiletine hydrochloride",
    "COc1cc(C=O)ccc1O": "vanillin",
    "COc1ccc2cc(CCC(C)=O)ccc2c1": "nabumetone",
    "O=C(O)c1cc(Br)ccc1Cl": "5-bromo-2-chlorobenzoic acid",
    "O=C([O-])Cc1ccccc1Nc1c(Cl)cccc1Cl.[Na+]": "diclofenac sodium",
    "CSCC[C@H](N)C(=O)O": "L-methionine",
    "C[C@H](CS)C(=O)N1CCC[C@H]1C(=O)O": "captopril",
    "CCOC(=O)C[C@H](O)CCl": "ethyl (S)-4-chloro-3-hydroxybutanoate",
    "COC(=O)[C@@H](O)c1ccccc1": "methyl (S)-mandelate",
    "CC(C)(C)NCC(O)c1ccc(O)c(CO)c1.CC(C)(C)NCC(O)c1ccc(O)c(CO)c1.O=S(=O)(O)O": "salbutamol sulfate (2:1)",
    "Cc1ncc(CO)c(CO)c1O.Cl": "pyridoxine hydrochloride",
    "COc1ccccc1OCC(O)CO": "guaifenesin",
    "C[C@]12CC[C@@H]3c4ccc(O)cc4CC[C@H]3[C@@H]1CC[C@@H]2O": "estradiol",
    "CO[C@H]1O[C@H](CO)[C@@H](O)[C@H](O)[C@H]1O": "methyl alpha-D-glucopyranoside",
    "CC(C)NCC(O)COc1ccc(CC(N)=O)cc1": "atenolol",
    "CC(C)NCC(O)COc1cccc2ccccc12.Cl": "propranolol hydrochloride",
    "Cl.NCCc1ccc(O)c(O)c1": "dopamine hydrochloride",
    "CCOC(=O)[C@H](CCc1ccccc1)N[C@@H](C)C(=O)N1CCC[C@H]1C(=O)O.O=C(O)/C=C\\C(=O)O": "enalapril maleate",
    "CCOC(=O)C1=C[C@@H](OC(CC)CC)[C@H](NC(C)=O)[C@@H](N)C1.O=P(O)(O)O": "oseltamivir phosphate",
    "COc1c(C)c2c(c(O)c1C/C=C(\\C)CCC(=O)O)C(=O)OC2": "mycophenolic acid",
    "CCCCCCCCc1ccc(CCC(N)(CO)CO)cc1.Cl": "fingolimod hydrochloride",
    "NC(=O)c1ncn([C@@H]2O[C@H](CO)[C@@H](O)[C@H]2O)n1": "ribavirin",
    "CC(=O)Nc1c(I)c(NC(C)=O)c(I)c(C(=O)O)c1I.CNC[C@H](O)[C@@H](O)[C@H](O)[C@H](O)CO": "meglumine diatrizoate",
    "C[N+](C)(C)CCO.O=C([O-])c1ccccc1O": "choline salicylate",
    "NS(=O)(=O)c1cc(C(=O)O)c(NCc2ccco2)cc1Cl": "furosemide",
    "CS(=O)(=O)c1ccc([C@@H](O)[C@@H](CO)NC(=O)C(Cl)Cl)cc1": "thiamphenicol",
    "O=C(O)CCCC[C@@H]1SC[C@@H]2NC(=O)N[C@@H]21": "biotin",
    "CCS(=O)(=O)CCn1c([N+](=O)[O-])cnc1C": "tinidazole",
    "Cc1cc(NS(=O)(=O)c2ccc(N)cc2)no1": "sulfamethoxazole",
}

# ---------------------------------------------------------------------------------------
# Reactive-site atoms (SMARTS, without the closing bracket so that a map label fits in).
# Amine: neutral three-connected N with 1-2 H whose heavy neighbours are all sp3 carbons.
AMINE = "[NX3;H1,H2;+0;!$(N[!#6]);!$(N[#6;!X4])"
PRIMARY_AMINE = "[NX3;H2;+0;!$(N[!#6]);!$(N[#6;!X4])"
SECONDARY_AMINE = "[NX3;H1;+0;!$(N[!#6]);!$(N[#6;!X4])"
# Aniline: neutral N with 1-2 H on exactly one aromatic carbon, other neighbours sp3 C.
ANILINE = "[NX3;H1,H2;+0;$(Nc);!$(N(c)c);!$(N[!#6]);!$(N[#6;!X4;!c])"
PRIMARY_OH = "[OX2H1;$(O[CH2X4])"
SECONDARY_OH = "[OX2H1;$(O[CH1X4]([#6])[#6])"
PHENOL = "[OX2H1;$(Oc)"
# ring activators for bromination: OH, O-alkyl, or a neutral N bonded only to carbons
ACTIVATOR = "[$([OX2H1]),$([OX2][CX4]),$([NX3;+0;!$(N[!#6])])]"
ACID = "[#6:3][CX3:1](=[O:2])[OX2H1,OX1-]"

BOC = "C(=O)OC(C)(C)C"
TBS = "[Si](C)(C)C(C)(C)C"
BENZYLAMIDE = "NCc1ccccc1"
MORPHOLINE = "N1CCOCC1"


def mapped(atom: str) -> str:
    """The site atom with map label 1."""
    return atom + ":1]"


def _rxn(smarts: str) -> Any:
    rxn = rdChemReactions.ReactionFromSmarts(smarts)
    rxn.Initialize()
    return rxn


@dataclass
class Transform:
    """A named transformation: site classes in order of preference, each a list of
    single-reactant reaction SMARTS (co-reagents implicit), and the patterns that make a
    molecule incompatible with it."""

    name: str
    classes: list[tuple[str, list[str]]]
    incompatible: list[str] = field(default_factory=list)
    rxns: list[list[Any]] = field(default_factory=list)
    blockers: list[Any] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.rxns = [[_rxn(s) for s in smarts] for _label, smarts in self.classes]
        self.blockers = [Chem.MolFromSmarts(s) for s in self.incompatible]


TRANSFORMS: dict[str, Transform] = {t.name: t for t in [
    Transform("boc_protection", [
        ("aliphatic amine", [f"{mapped(AMINE)}>>[N:1]{BOC}"]),
    ]),
    Transform("boc_deprotection", [
        ("N-Boc", ["[NX3:1][CX3](=O)O[CX4]([CH3])([CH3])[CH3]>>[N:1]"]),
    ]),
    Transform("tbs_protection", [
        ("primary alcohol", [f"{mapped(PRIMARY_OH)}>>[O:1]{TBS}"]),
        ("secondary alcohol or phenol", [f"{mapped(SECONDARY_OH)}>>[O:1]{TBS}", f"{mapped(PHENOL)}>>[O:1]{TBS}"]),
    ]),
    Transform("tbs_deprotection", [
        ("O-TBS", ["[OX2:1][Si]([CH3])([CH3])[CX4]([CH3])([CH3])[CH3]>>[O:1]"]),
    ]),
    Transform("acetylation", [
        ("amine or aniline", [f"{mapped(AMINE)}>>[N:1]C(C)=O", f"{mapped(ANILINE)}>>[N:1]C(C)=O"]),
        ("alcohol or phenol", [f"{mapped(PRIMARY_OH)}>>[O:1]C(C)=O", f"{mapped(SECONDARY_OH)}>>[O:1]C(C)=O",
                               f"{mapped(PHENOL)}>>[O:1]C(C)=O"]),
    ]),
    Transform("esterification", [
        ("carboxylic acid", [f"{ACID}>>[#6:3][C:1](=[O:2])OC"]),
    ]),
    Transform("amide_coupling", [
        ("carboxylic acid", [f"{ACID}>>[#6:3][C:1](=[O:2]){BENZYLAMIDE}"]),
    ], incompatible=[AMINE + "]"]),
    Transform("ester_hydrolysis", [
        ("ester", ["[#6:5][CX3:1](=[O:2])[OX2:3][#6:4]>>([#6:5][C:1](=[O:2])O.[O:3][#6:4])"]),
    ]),
    Transform("lialh4_reduction", [
        ("aldehyde or ketone", ["[#6:3][CX3H1:1]=[O:2]>>[#6:3][C:1][O:2]",
                                "[#6:3][CX3:1](=[O:2])[#6:4]>>[#6:3][C:1]([O:2])[#6:4]"]),
        ("ester or carboxylic acid", ["[#6:5][CX3:1](=[O:2])[OX2:3][#6:4]>>([#6:5][C:1][O:2].[O:3][#6:4])",
                                      f"{ACID}>>[#6:3][C:1][O:2]"]),
        ("amide", ["[#6:3][CX3:1](=O)[NX3:4]>>[#6:3][C:1][N:4]"]),
    ]),
    Transform("nitro_reduction", [
        ("nitro", ["[#6:2][N+:1](=O)[O-]>>[#6:2][N+0:1]"]),
    ]),
    Transform("alcohol_oxidation", [
        ("primary alcohol", ["[CH2X4:1][OX2H1:2]>>[C:1]=[O:2]"]),
        ("secondary alcohol", ["[CH1X4:1]([#6:3])([#6:4])[OX2H1:2]>>[C:1]([#6:3])([#6:4])=[O:2]"]),
    ], incompatible=[AMINE + "]"]),
    Transform("reductive_amination", [
        ("aldehyde or ketone", [f"[#6:3][CX3H1:1]=O>>[#6:3][C:1]{MORPHOLINE}",
                                f"[#6:3][CX3:1](=O)[#6:4]>>[#6:3][C:1]([#6:4]){MORPHOLINE}"]),
    ]),
    Transform("eschweiler_clarke", [
        ("aliphatic amine", [f"{mapped(PRIMARY_AMINE)}>>C[N:1]C", f"{mapped(SECONDARY_AMINE)}>>C[N:1]"]),
    ]),
    Transform("aromatic_bromination", [
        ("para to an activating group", [f"[cH;$(c1:c:c:c(-{ACTIVATOR}):c:c1):1]>>[c:1]Br"]),
        ("ortho to an activating group", [f"[cH;$(c:c-{ACTIVATOR}):1]>>[c:1]Br"]),
    ]),
    Transform("dehalogenation", [
        ("aryl iodide or bromide", ["[c:1][I,Br]>>[c:1]"]),
        ("aryl chloride", ["[c:1]Cl>>[c:1]"]),
    ]),
]}

ROUTES = {
    "boc_esterify_deprotect": ["boc_protection", "esterification", "boc_deprotection"],
    "boc_couple_deprotect": ["boc_protection", "amide_coupling", "boc_deprotection"],
    "couple_reduce": ["amide_coupling", "lialh4_reduction"],
    "nitro_reduce_acetylate": ["nitro_reduction", "acetylation"],
    "hydrolyse_couple": ["ester_hydrolysis", "amide_coupling"],
    "oxidise_aminate": ["alcohol_oxidation", "reductive_amination"],
    "boc_oxidise_deprotect": ["boc_protection", "alcohol_oxidation", "boc_deprotection"],
    "tbs_oxidise_deprotect": ["tbs_protection", "alcohol_oxidation", "tbs_deprotection"],
    "esterify_reduce": ["esterification", "lialh4_reduction"],
    "acetylate_brominate": ["acetylation", "aromatic_bromination"],
    "dehalogenate_esterify": ["dehalogenation", "esterification"],
    "methylate_hydrolyse": ["eschweiler_clarke", "ester_hydrolysis"],
    "tbs_acetylate_deprotect": ["tbs_protection", "acetylation", "tbs_deprotection"],
}

BYPRODUCT_MAX_HEAVY = 4        # fragments with at most this many heavy atoms are by-products
EXHAUSTIVE_MAX_EDITS = 24      # an exhaustive run needing more site edits counts as failed
QED_DECIMALS = 4               # QED is compared at this precision when ranking
FP_SIZE = 1024

# pH 7.4 ionisation: carboxylic acids lose a proton; aliphatic amines (primary, secondary
# or tertiary: N bonded only to sp3 carbons) gain one.
_ACID_OH = Chem.MolFromSmarts("[CX3](=O)[OX2H1]")
_BASIC_N = Chem.MolFromSmarts("[NX3;+0;!$(N[!#6]);!$(N[#6;!X4])]")

_TAUTOMERS: list[Any] = []


def tautomer_enumerator() -> Any:
    """RDKit's canonical-tautomer enumerator, told to keep sp3 and double-bond stereo."""
    if not _TAUTOMERS:
        params = rdMolStandardize.CleanupParameters()
        params.tautomerRemoveSp3Stereo = False
        params.tautomerRemoveBondStereo = False
        _TAUTOMERS.append(rdMolStandardize.TautomerEnumerator(params))
    return _TAUTOMERS[0]


# ---------------------------------------------------------------------------------------
# Molecule helpers
def canonical(mol: Chem.Mol) -> str:
    return Chem.MolToSmiles(mol)


def flat(smiles: str) -> str:
    """Canonical SMILES without stereochemistry: the constitution."""
    return Chem.MolToSmiles(Chem.MolFromSmiles(smiles), isomericSmiles=False)


def heavy_atoms(smiles: str) -> int:
    return Chem.MolFromSmiles(smiles).GetNumHeavyAtoms()


def implicit_hs(mol: Chem.Mol) -> Chem.Mol:
    """Make bracket-atom H counts implicit wherever the default valence model gives the
    same total H count, so that a reaction centre written [C@@H] can gain or lose H."""
    rw = Chem.RWMol(mol)
    for atom in rw.GetAtoms():
        if atom.GetNumExplicitHs() == 0 or atom.GetIsAromatic():
            continue
        total = atom.GetTotalNumHs()
        nexp, noimp = atom.GetNumExplicitHs(), atom.GetNoImplicit()
        atom.SetNumExplicitHs(0)
        atom.SetNoImplicit(False)
        atom.UpdatePropertyCache(strict=False)
        if atom.GetTotalNumHs() != total:
            atom.SetNumExplicitHs(nexp)
            atom.SetNoImplicit(noimp)
            atom.UpdatePropertyCache(strict=False)
    out = rw.GetMol()
    Chem.SanitizeMol(out)
    return out


_QED: dict[str, float] = {}


def qed_of(smiles: str) -> float:
    if smiles not in _QED:
        _QED[smiles] = float(QED.qed(Chem.MolFromSmiles(smiles)))
    return _QED[smiles]


def rank_key(smiles: str) -> tuple[int, float, str]:
    """Most heavy atoms first, then the higher QED (at 4 decimals), then the SMILES string."""
    return (-heavy_atoms(smiles), -round(qed_of(smiles), QED_DECIMALS), smiles)


# ---------------------------------------------------------------------------------------
# Stage 1: standardise the registered record
def standardise(record: str, stereo: str) -> dict[str, str | None]:
    """Cleanup -> largest fragment by heavy atoms -> uncharge -> canonical tautomer (stereo
    kept) -> stereo stripped on request. Every intermediate as canonical SMILES."""
    mol = Chem.MolFromSmiles(record)
    if mol is None:
        return {"cleaned": None, "fragment": None, "uncharged": None, "standardised": None}
    cleaned = rdMolStandardize.Cleanup(mol)
    params = rdMolStandardize.CleanupParameters()
    params.largestFragmentChooserCountHeavyAtomsOnly = True
    fragment = rdMolStandardize.LargestFragmentChooser(params).choose(cleaned)
    uncharged = rdMolStandardize.Uncharger().uncharge(fragment)
    taut = tautomer_enumerator().Canonicalize(uncharged)
    if stereo == "strip":
        Chem.RemoveStereochemistry(taut)
    final = Chem.MolFromSmiles(canonical(taut))
    return {"cleaned": canonical(cleaned), "fragment": canonical(fragment), "uncharged": canonical(uncharged),
            "standardised": None if final is None else canonical(final)}


# ---------------------------------------------------------------------------------------
# Stage 2: sites and outcomes
def _outcomes(rxns: list[Any], mol: Chem.Mol) -> list[Chem.Mol]:
    return [outcome[0] for rxn in rxns for outcome in rxn.RunReactants((mol,))]


def _sanitised(mol: Chem.Mol) -> Chem.Mol | None:
    m = Chem.Mol(mol)
    try:
        Chem.SanitizeMol(m)
    except Exception:  # noqa: BLE001 - RDKit raises several sanitisation exception types
        return None
    Chem.AssignStereochemistry(m, cleanIt=True, force=True)
    again = Chem.MolFromSmiles(canonical(m))
    return None if again is None else implicit_hs(again)


def selective(mol: Chem.Mol, tf: Transform) -> list[Chem.Mol | None]:
    """One outcome per site of the first site class that has any site."""
    for rxns in tf.rxns:
        outs = _outcomes(rxns, mol)
        if outs:
            return list(outs)
    return []


def every_site(mol: Chem.Mol, tf: Transform) -> list[Chem.Mol | None]:
    """One outcome per site of every site class."""
    return [o for rxns in tf.rxns for o in _outcomes(rxns, mol)]


def exhaustive(mol: Chem.Mol, tf: Transform) -> list[Chem.Mol | None]:
    """Every site transformed: repeatedly apply the first outcome of the first class with
    a site, fragment by fragment, until no site is left. One outcome (None: failed)."""
    work = [mol]
    done: list[Chem.Mol] = []
    edits = 0
    while work:
        m = work.pop(0)
        product = None
        for rxns in tf.rxns:
            outs = _outcomes(rxns, m)
            if outs:
                product = outs[0]
                break
        if product is None:
            done.append(m)
            continue
        edits += 1
        clean_mol = _sanitised(product)
        if clean_mol is None or edits > EXHAUSTIVE_MAX_EDITS:
            return [None]
        work.extend(Chem.GetMolFrags(clean_mol, asMols=True))
    if edits == 0:
        return []
    combined = done[0]
    for m in done[1:]:
        combined = Chem.CombineMols(combined, m)
    return [combined]


MODES = {"selective": selective, "every_site": every_site, "exhaustive": exhaustive}


# ---------------------------------------------------------------------------------------
# Stage 3: product clean-up
_CANON: dict[tuple[str, str], str | None] = {}


def canonical_tautomer(frag: Chem.Mol, stereo: str) -> str | None:
    """Canonical SMILES of the canonical tautomer of one fragment, stereo stripped on
    request (memoised: the same fragment recurs across sites, inputs and steps)."""
    key = (canonical(frag), stereo)
    if key not in _CANON:
        taut = tautomer_enumerator().Canonicalize(frag)
        if stereo == "strip":
            Chem.RemoveStereochemistry(taut)
        again = Chem.MolFromSmiles(canonical(taut))
        _CANON[key] = None if again is None else canonical(again)
    return _CANON[key]


def stereoisomers(smiles: str) -> list[str]:
    """Every assignment of the unassigned stereocentres and stereo double bonds."""
    opts = EnumerateStereoisomers.StereoEnumerationOptions(onlyUnassigned=True, unique=True)
    isomers = EnumerateStereoisomers.EnumerateStereoisomers(Chem.MolFromSmiles(smiles), options=opts)
    return sorted({canonical(Chem.MolFromSmiles(canonical(m))) for m in isomers})


def clean(mol: Chem.Mol | None, stereo: str) -> list[str] | None:
    """Canonical SMILES of every fragment of one outcome (None: it does not sanitise)."""
    if mol is None:
        return None
    m = _sanitised(mol)
    if m is None:
        return None
    out = []
    for frag in Chem.GetMolFrags(m, asMols=True):
        smi = canonical_tautomer(frag, stereo)
        if smi is None:
            return None
        out.extend(stereoisomers(smi) if stereo == "enumerate" else [smi])
    return out


# ---------------------------------------------------------------------------------------
# Stage 4: one step, ranked and capped
@dataclass
class Step:
    transformation: str
    counts: dict[str, int]
    candidates: list[dict[str, Any]]     # products in rank order, then excluded, then by-products
    kept: list[str]


def run_step(inputs: list[str], tf: Transform, mode: str, stereo: str, cap: int,
             exclude: str | None = None) -> Step:
    counts = {"inputs": len(inputs), "reacted": 0, "unchanged": 0, "incompatible": 0,
              "failed_sanitisation": 0, "byproducts": 0, "excluded": 0, "products": 0, "kept": 0}
    pool: dict[str, str] = {}        # product -> the first input it came from
    unchanged: set[str] = set()
    byproducts: dict[str, str] = {}
    for smi in inputs:
        mol = implicit_hs(Chem.MolFromSmiles(smi))
        if any(mol.HasSubstructMatch(b) for b in tf.blockers):
            counts["incompatible"] += 1
            continue
        outcomes = MODES[mode](mol, tf)
        if not outcomes:
            counts["unchanged"] += 1
            pool.setdefault(smi, smi)
            unchanged.add(smi)
            continue
        counts["reacted"] += 1
        for raw in outcomes:
            frags = clean(raw, stereo)
            if frags is None:
                counts["failed_sanitisation"] += 1
                continue
            for frag in frags:
                if heavy_atoms(frag) <= BYPRODUCT_MAX_HEAVY:
                    byproducts.setdefault(frag, smi)
                else:
                    pool.setdefault(frag, smi)
    excluded = []
    if exclude is not None:
        excluded = sorted(s for s in pool if flat(s) == flat(exclude))
    ranked = sorted((s for s in pool if s not in excluded), key=rank_key)
    kept = ranked[:cap]
    counts.update(byproducts=len(byproducts), excluded=len(excluded), products=len(ranked), kept=len(kept))

    def row(s: str, rank: int, status: str, source: str) -> dict[str, Any]:
        return {"smiles": s, "rank": rank, "status": status, "source": source, "unchanged": s in unchanged}

    candidates = [row(s, i + 1, "kept" if i < cap else "capped", pool[s]) for i, s in enumerate(ranked)]
    candidates += [row(s, 0, "excluded", pool[s]) for s in excluded]
    candidates += [row(s, 0, "byproduct", byproducts[s]) for s in sorted(byproducts)]
    return Step(tf.name, counts, candidates, kept)


# ---------------------------------------------------------------------------------------
# Stages 5 and 6: descriptors and the pH 7.4 form
def ph74_form(mol: Chem.Mol) -> Chem.Mol:
    """Carboxylic acid O-H -> O-; aliphatic amine N -> N+ with one more H."""
    rw = Chem.RWMol(mol)
    for match in mol.GetSubstructMatches(_ACID_OH):
        atom = rw.GetAtomWithIdx(match[2])
        atom.SetFormalCharge(-1)
        atom.SetNumExplicitHs(0)
        atom.SetNoImplicit(True)
    for (i,) in mol.GetSubstructMatches(_BASIC_N):
        atom = rw.GetAtomWithIdx(i)
        atom.SetNumExplicitHs(atom.GetTotalNumHs() + 1)
        atom.SetNoImplicit(True)
        atom.SetFormalCharge(1)
    out = rw.GetMol()
    Chem.SanitizeMol(out)
    return Chem.MolFromSmiles(canonical(out))


def morgan_bits(mol: Chem.Mol, radius: int) -> list[int]:
    gen = rdFingerprintGenerator.GetMorganGenerator(radius=radius, fpSize=FP_SIZE)
    return list(gen.GetFingerprint(mol).GetOnBits())


def describe(smiles: str, radius: int) -> dict[str, Any]:
    mol = Chem.MolFromSmiles(smiles)
    return {
        "mw": round(Descriptors.MolWt(mol), 6),
        "logp": round(Crippen.MolLogP(mol), 6),
        "tpsa": round(rdMolDescriptors.CalcTPSA(mol, includeSandP=True), 6),
        "hba": int(rdMolDescriptors.CalcNumLipinskiHBA(mol)),
        "hbd": int(rdMolDescriptors.CalcNumLipinskiHBD(mol)),
        "rotb": int(rdMolDescriptors.CalcNumRotatableBonds(mol)),
        "fsp3": round(rdMolDescriptors.CalcFractionCSP3(mol), 6),
        "qed": round(qed_of(smiles), 6),
        "fp_on": len(morgan_bits(mol, radius)),
        "charge": int(Chem.GetFormalCharge(ph74_form(mol))),
    }


EMPTY_DESCRIPTORS: dict[str, Any] = {"mw": 0.0, "logp": 0.0, "tpsa": 0.0, "hba": 0, "hbd": 0, "rotb": 0,
                                     "fsp3": 0.0, "qed": 0.0, "fp_on": 0, "charge": 0}


# ---------------------------------------------------------------------------------------
def trace(p: dict[str, Any]) -> dict[str, Any]:
    """The whole route with every intermediate, for the outputs and the evidence."""
    stereo = p["stereochemistry"]
    std = standardise(p["reactant"], stereo)
    reactant = std["standardised"]
    current = [reactant] if reactant else []
    steps = []
    names = ROUTES[p["route"]]
    for i, name in enumerate(names):
        last = i == len(names) - 1
        step = run_step(current, TRANSFORMS[name], p["site_mode"], stereo, int(p["max_products"]),
                        exclude=reactant if last else None)
        steps.append(step)
        current = step.kept
    return {"standardisation": std, "steps": steps, "final": current, "selected": current[0] if current else None}


def outputs(t: dict[str, Any], p: dict[str, Any]) -> dict[str, Any]:
    """The output fields from a trace."""
    parent = t["standardisation"]["standardised"]
    out: dict[str, Any] = {
        "parent": [parent] if parent else [],
        "products": sorted(t["final"]),
        "n_products": len(t["final"]),
        "selected": [t["selected"]] if t["selected"] else [],
        "step_counts": [s.counts["products"] for s in t["steps"]],
        "step_unchanged": [s.counts["unchanged"] for s in t["steps"]],
        "step_mw": [round(Descriptors.MolWt(Chem.MolFromSmiles(s.kept[0])), 6) if s.kept else 0.0
                    for s in t["steps"]],
    }
    out.update(describe(t["selected"], int(p["fingerprint_radius"])) if t["selected"] else EMPTY_DESCRIPTORS)
    return out


def solve(scenario: dict[str, Any]) -> dict[str, Any]:
    p = scenario["parameters"]
    return outputs(trace(p), p)


def main() -> None:
    scenario = json.load(sys.stdin)
    print(json.dumps(solve(scenario)))


if __name__ == "__main__":
    main()
