#!/usr/bin/env python3
"""Baseline `expert`: a careful cheminformatician's guess, written from the instruction alone.

It knows how route-scouting workflows are usually built but not the recipe, so it uses the
common defaults and textbook chemistry of each stage: the registration parent from
rdMolStandardize's defaults (Cleanup, FragmentParent, Uncharger, canonical tautomer);
the site classes of a transformation react from a temperature on, most reactive first,
one site per equivalent, each step going to completion (no unreacted share); regioisomers in
equal amounts; the crude mixture ranked by amount; the work-up by textbook pKa values
(carboxylic acids 4.8, aliphatic amines 10.6) with every neutral molecule in the organic
phase; RDKit's default TPSA (N and O only).
"""
from __future__ import annotations

import json
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from rdkit import Chem, RDLogger
from rdkit.Chem import QED, Crippen, Descriptors, EnumerateStereoisomers, rdChemReactions, rdMolDescriptors
from rdkit.Chem.MolStandardize import rdMolStandardize

RDLogger.DisableLog("rdApp.*")

# ---------------------------------------------------------------------------------------
# Registered reactant records: the record's SMILES as registered -> name.
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

# Temperatures (degrees C) in order; a site class reacts from its level on.
TEMPERATURES = (0, 25, 80)
# Share of a molecule that reacts in one round, by how many temperature levels the
# reaction runs above the class's lowest level (0, 1, 2).
CONVERSION = (Fraction(3, 5), Fraction(4, 5), Fraction(19, 20))


def mapped(atom: str) -> str:
    """The site atom with map label 1."""
    return atom + ":1]"


def _rxn(smarts: str) -> Any:
    rxn = rdChemReactions.ReactionFromSmarts(smarts)
    rxn.Initialize()
    return rxn


@dataclass
class SiteClass:
    label: str
    level: int                 # the lowest temperature level (index into TEMPERATURES) it reacts at
    smarts: list[str]
    rxns: list[Any] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.rxns = [_rxn(s) for s in self.smarts]


@dataclass
class Transform:
    """A named transformation: site classes in order of reactivity, each reacting from a
    temperature level on, and the patterns that make a molecule incompatible with it."""

    name: str
    classes: list[SiteClass]
    incompatible: list[str] = field(default_factory=list)
    blockers: list[Any] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.blockers = [Chem.MolFromSmarts(s) for s in self.incompatible]


def C(label: str, level: int, smarts: list[str]) -> SiteClass:
    return SiteClass(label, level, smarts)


TRANSFORMS: dict[str, Transform] = {t.name: t for t in [
    Transform("boc_protection", [
        C("primary amine", 0, [f"{mapped(PRIMARY_AMINE)}>>[N:1]{BOC}"]),
        C("secondary amine", 1, [f"{mapped(SECONDARY_AMINE)}>>[N:1]{BOC}"]),
        C("aniline", 2, [f"{mapped(ANILINE)}>>[N:1]{BOC}"]),
    ]),
    Transform("boc_deprotection", [
        C("N-Boc", 0, ["[NX3:1][CX3](=O)O[CX4]([CH3])([CH3])[CH3]>>[N:1]"]),
    ]),
    Transform("tbs_protection", [
        C("primary alcohol", 0, [f"{mapped(PRIMARY_OH)}>>[O:1]{TBS}"]),
        C("phenol", 1, [f"{mapped(PHENOL)}>>[O:1]{TBS}"]),
        C("secondary alcohol", 2, [f"{mapped(SECONDARY_OH)}>>[O:1]{TBS}"]),
    ]),
    Transform("tbs_deprotection", [
        C("O-TBS", 0, ["[OX2:1][Si]([CH3])([CH3])[CX4]([CH3])([CH3])[CH3]>>[O:1]"]),
    ]),
    Transform("acetylation", [
        C("aliphatic amine", 0, [f"{mapped(AMINE)}>>[N:1]C(C)=O"]),
        C("aniline", 1, [f"{mapped(ANILINE)}>>[N:1]C(C)=O"]),
        C("primary alcohol", 1, [f"{mapped(PRIMARY_OH)}>>[O:1]C(C)=O"]),
        C("secondary alcohol or phenol", 2, [f"{mapped(SECONDARY_OH)}>>[O:1]C(C)=O", f"{mapped(PHENOL)}>>[O:1]C(C)=O"]),
    ]),
    Transform("esterification", [
        C("carboxylic acid", 1, [f"{ACID}>>[#6:3][C:1](=[O:2])OC"]),
    ]),
    Transform("amide_coupling", [
        C("carboxylic acid", 0, [f"{ACID}>>[#6:3][C:1](=[O:2]){BENZYLAMIDE}"]),
    ], incompatible=[AMINE + "]"]),
    Transform("ester_hydrolysis", [
        C("aryl ester", 0, ["[#6:5][CX3:1](=[O:2])[OX2:3][c:4]>>([#6:5][C:1](=[O:2])O.[O:3][c:4])"]),
        C("alkyl ester or lactone", 1, ["[#6:5][CX3:1](=[O:2])[OX2:3][CX4:4]>>([#6:5][C:1](=[O:2])O.[O:3][C:4])"]),
    ]),
    Transform("lialh4_reduction", [
        C("aldehyde or ketone", 0, ["[#6:3][CX3H1:1]=[O:2]>>[#6:3][C:1][O:2]",
                                    "[#6:3][CX3:1](=[O:2])[#6:4]>>[#6:3][C:1]([O:2])[#6:4]"]),
        C("ester or carboxylic acid", 1, ["[#6:5][CX3:1](=[O:2])[OX2:3][#6:4]>>([#6:5][C:1][O:2].[O:3][#6:4])",
                                          f"{ACID}>>[#6:3][C:1][O:2]"]),
        C("amide", 2, ["[#6:3][CX3:1](=O)[NX3:4]>>[#6:3][C:1][N:4]"]),
    ]),
    Transform("nitro_reduction", [
        C("nitro", 1, ["[#6:2][N+:1](=O)[O-]>>[#6:2][N+0:1]"]),
        C("aryl bromide or iodide", 2, ["[c:1][Br,I]>>[c:1]"]),
    ]),
    Transform("alcohol_oxidation", [
        C("primary alcohol", 0, ["[CH2X4:1][OX2H1:2]>>[C:1]=[O:2]"]),
        C("secondary alcohol", 1, ["[CH1X4:1]([#6:3])([#6:4])[OX2H1:2]>>[C:1]([#6:3])([#6:4])=[O:2]"]),
        C("aldehyde", 2, ["[#6:3][CX3H1:1]=[O:2]>>[#6:3][C:1](=[O:2])O"]),
    ], incompatible=[AMINE + "]"]),
    Transform("reductive_amination", [
        C("aldehyde", 0, [f"[#6:3][CX3H1:1]=O>>[#6:3][C:1]{MORPHOLINE}"]),
        C("ketone", 1, [f"[#6:3][CX3:1](=O)[#6:4]>>[#6:3][C:1]([#6:4]){MORPHOLINE}"]),
    ]),
    Transform("eschweiler_clarke", [
        C("primary amine", 1, [f"{mapped(PRIMARY_AMINE)}>>C[N:1]C"]),
        C("secondary amine", 2, [f"{mapped(SECONDARY_AMINE)}>>C[N:1]"]),
    ]),
    Transform("aromatic_bromination", [
        C("para to an activating group", 0, [f"[cH;$(c1:c:c:c(-{ACTIVATOR}):c:c1):1]>>[c:1]Br"]),
        C("ortho to an activating group", 1, [f"[cH;$(c:c-{ACTIVATOR}):1]>>[c:1]Br"]),
    ]),
    Transform("dehalogenation", [
        C("aryl iodide or bromide", 1, ["[c:1][I,Br]>>[c:1]"]),
        C("aryl chloride", 2, ["[c:1]Cl>>[c:1]"]),
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
RANK_DECIMALS = 4              # yields (percent) and QED are compared at this precision when ranking

# Work-up: ionisable groups and their pKa. An acid is ionised (-1) when the pH is above
# its pKa, a base protonated (+1) when the pH is below it. A molecule with any ionised
# group, or a neutral one with Crippen logP below AQUEOUS_LOGP, stays in the water.
ACID_GROUPS = [
    ("carboxylic acid", "[CX3](=O)[OX2H1,OX1-]", 4.8, 2),      # (name, SMARTS, pKa, index of the site atom)
]
BASE_GROUPS = [
    ("aliphatic amine", "[NX3;+0;!$(N[!#6]);!$(N[#6;!X4])]", 10.6),
]
AQUEOUS_LOGP = 0.0

_TAUTOMERS: list[Any] = []


def tautomer_enumerator() -> Any:
    """RDKit's canonical-tautomer enumerator, told to keep sp3 and double-bond stereo."""
    if not _TAUTOMERS:
        params = rdMolStandardize.CleanupParameters()
        params.tautomerRemoveSp3Stereo = False
        params.tautomerRemoveBondStereo = False
        _TAUTOMERS.append(rdMolStandardize.TautomerEnumerator())
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


def rank_key(item: tuple[str, Fraction]) -> tuple[float, int, float, str]:
    """Highest yield first (at 4 decimals), then most heavy atoms, then the higher QED
    (at 4 decimals), then the SMILES string."""
    smiles, amount = item
    return (-round(float(amount), RANK_DECIMALS), -heavy_atoms(smiles), -round(qed_of(smiles), RANK_DECIMALS),
            smiles)


# ---------------------------------------------------------------------------------------
# Stage 1: standardise the registered record
def standardise(record: str, stereo: str) -> dict[str, str | None]:
    """Cleanup -> largest fragment by heavy atoms -> uncharge -> canonical tautomer (stereo
    kept) -> stereo stripped on request. Every intermediate as canonical SMILES."""
    mol = Chem.MolFromSmiles(record)
    if mol is None:
        return {"cleaned": None, "fragment": None, "uncharged": None, "standardised": None}
    cleaned = rdMolStandardize.Cleanup(mol)
    fragment = rdMolStandardize.LargestFragmentChooser().choose(cleaned)
    uncharged = rdMolStandardize.Uncharger().uncharge(fragment)
    taut = tautomer_enumerator().Canonicalize(uncharged)
    if stereo == "strip":
        Chem.RemoveStereochemistry(taut)
    final = Chem.MolFromSmiles(canonical(taut))
    return {"cleaned": canonical(cleaned), "fragment": canonical(fragment), "uncharged": canonical(uncharged),
            "standardised": None if final is None else canonical(final)}


# ---------------------------------------------------------------------------------------
# Stage 2: clean-up of one outcome
_CANON: dict[tuple[str, str], str | None] = {}


def _sanitised(mol: Chem.Mol) -> Chem.Mol | None:
    m = Chem.Mol(mol)
    try:
        Chem.SanitizeMol(m)
    except Exception:  # noqa: BLE001 - RDKit raises several sanitisation exception types
        return None
    Chem.AssignStereochemistry(m, cleanIt=True, force=True)
    again = Chem.MolFromSmiles(canonical(m))
    return None if again is None else implicit_hs(again)


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


def clean(mol: Chem.Mol, stereo: str) -> tuple[list[str], list[str]] | None:
    """(kept fragments, by-products) of one outcome as canonical SMILES; None when it does
    not sanitise."""
    m = _sanitised(mol)
    if m is None:
        return None
    kept, small = [], []
    for frag in Chem.GetMolFrags(m, asMols=True):
        smi = canonical_tautomer(frag, stereo)
        if smi is None:
            return None
        (small if heavy_atoms(smi) <= BYPRODUCT_MAX_HEAVY else kept).append(smi)
    return sorted(kept), sorted(small)


# ---------------------------------------------------------------------------------------
# Stage 3: one step under the conditions
@dataclass
class Step:
    transformation: str
    pool: dict[str, Fraction]              # molecule -> amount (percent of the compound)
    ranked: list[str]
    kept: list[str]
    byproducts: set[str]
    counts: dict[str, int]


def _first_class(mol: Chem.Mol, classes: list[SiteClass]) -> tuple[SiteClass, list[Chem.Mol]] | None:
    for cls in classes:
        outs = [o[0] for rxn in cls.rxns for o in rxn.RunReactants((mol,))]
        if outs:
            return cls, outs
    return None


def react(smiles: str, amount: Fraction, tf: Transform, level: int, equivalents: int, stereo: str,
          counts: dict[str, int], byproducts: set[str]) -> dict[str, Fraction]:
    """What one input molecule becomes: `equivalents` rounds; in each, every molecule still
    reacting is edited at every site of the most reactive class it has (among the classes
    the temperature allows), the reacting share split equally over the distinct outcomes,
    the unreacted share carried as it is."""
    classes = [c for c in tf.classes if c.level <= level]
    frontier: dict[str, Fraction] = {smiles: amount}
    done: dict[str, Fraction] = defaultdict(Fraction)
    for _ in range(equivalents):
        nxt: dict[str, Fraction] = defaultdict(Fraction)
        for smi, amt in frontier.items():
            found = _first_class(implicit_hs(Chem.MolFromSmiles(smi)), classes)
            if found is None:
                done[smi] += amt
                continue
            cls, outs = found
            cleaned = []
            for raw in outs:
                c = clean(raw, stereo)
                if c is None:
                    counts["failed_sanitisation"] += 1
                elif c[0] and c not in cleaned:
                    cleaned.append(c)
            if not cleaned:
                done[smi] += amt
                continue
            counts["edits"] += 1
            conv = Fraction(1)
            done[smi] += amt * (1 - conv)
            share = amt * conv / len(cleaned)
            for kept, small in cleaned:
                byproducts.update(small)
                for frag in kept:
                    nxt[frag] += share
        frontier = nxt
    for smi, amt in frontier.items():
        done[smi] += amt
    return done


def run_step(inputs: list[tuple[str, Fraction]], tf: Transform, level: int, equivalents: int, stereo: str,
             cap: int | None) -> Step:
    counts = {"inputs": len(inputs), "incompatible": 0, "unchanged": 0, "edits": 0, "failed_sanitisation": 0}
    pool: dict[str, Fraction] = defaultdict(Fraction)
    byproducts: set[str] = set()
    for smi, amount in inputs:
        mol = implicit_hs(Chem.MolFromSmiles(smi))
        if any(mol.HasSubstructMatch(b) for b in tf.blockers):
            counts["incompatible"] += 1
            continue
        out = react(smi, amount, tf, level, equivalents, stereo, counts, byproducts)
        if list(out) == [smi]:
            counts["unchanged"] += 1
        for prod, amt in out.items():
            if stereo == "enumerate" and prod != smi:
                isomers = stereoisomers(prod)
                for iso in isomers:
                    pool[iso] += amt / len(isomers)
            else:
                pool[prod] += amt
    ranked = [s for s, _ in sorted(pool.items(), key=rank_key)]
    kept = ranked if cap is None else ranked[:cap]
    counts.update(products=len(ranked), kept=len(kept), byproducts=len(byproducts))
    return Step(tf.name, dict(pool), ranked, kept, byproducts, counts)


# ---------------------------------------------------------------------------------------
# Stage 4: work-up at a pH
_PATTERNS: dict[str, Any] = {}


def _pattern(smarts: str) -> Any:
    if smarts not in _PATTERNS:
        _PATTERNS[smarts] = Chem.MolFromSmarts(smarts)
    return _PATTERNS[smarts]


def ionisation(mol: Chem.Mol, ph: float) -> tuple[int, int]:
    """(net charge, ionised groups) of the molecule's dominant form at the pH."""
    sites: dict[int, int] = {}
    for _name, smarts, pka, idx in ACID_GROUPS:
        for match in mol.GetSubstructMatches(_pattern(smarts)):
            if match[idx] not in sites:
                sites[match[idx]] = -1 if ph > pka else 0
    for _name, smarts, pka in BASE_GROUPS:
        for (i,) in mol.GetSubstructMatches(_pattern(smarts)):
            if i not in sites:
                sites[i] = 1 if ph < pka else 0
    rest = sum(a.GetFormalCharge() for a in mol.GetAtoms() if a.GetIdx() not in sites)
    fixed = sum(1 for a in mol.GetAtoms() if a.GetIdx() not in sites and a.GetFormalCharge() != 0
                and not _neutral_pair(a))
    return rest + sum(sites.values()), fixed + sum(1 for v in sites.values() if v)


def _neutral_pair(atom: Chem.Atom) -> bool:
    """A charge that a neighbour's opposite charge cancels inside one group (nitro, N-oxide)."""
    return any(n.GetFormalCharge() == -atom.GetFormalCharge() for n in atom.GetNeighbors())


def phase_of(smiles: str, ph: float) -> str:
    mol = Chem.MolFromSmiles(smiles)
    _, ionised = ionisation(mol, ph)
    if ionised:
        return "aqueous"
    return "organic"


@dataclass
class Workup:
    crude: dict[str, Fraction]
    phases: dict[str, str]
    starting: set[str]
    phase: str                 # organic | aqueous | none
    products: list[str]
    selected: str | None
    purity: Fraction


def work_up(crude: dict[str, Fraction], parent: str | None, ph: float, cap: int) -> Workup:
    phases = {s: phase_of(s, ph) for s in crude}
    starting = {s for s in crude if parent is not None and flat(s) == flat(parent)}
    totals = {"organic": Fraction(0), "aqueous": Fraction(0)}
    for s, amt in crude.items():
        if s not in starting:
            totals[phases[s]] += amt
    if not any(totals.values()):
        return Workup(crude, phases, starting, "none", [], None, Fraction(0))
    phase = "aqueous" if totals["aqueous"] > totals["organic"] else "organic"
    ranked = [s for s, _ in sorted(((s, a) for s, a in crude.items() if phases[s] == phase and s not in starting),
                                   key=rank_key)]
    products = ranked[:cap]
    selected = products[0]
    everything = sum((a for s, a in crude.items() if phases[s] == phase), Fraction(0))
    return Workup(crude, phases, starting, phase, products, selected, 100 * crude[selected] / everything)


# ---------------------------------------------------------------------------------------
# Stage 5: descriptors of the top product
def describe(smiles: str, ph: float) -> dict[str, Any]:
    mol = Chem.MolFromSmiles(smiles)
    return {
        "mw": round(Descriptors.MolWt(mol), 6),
        "logp": round(Crippen.MolLogP(mol), 6),
        "tpsa": round(rdMolDescriptors.CalcTPSA(mol), 6),
        "qed": round(qed_of(smiles), 6),
        "charge": int(ionisation(mol, ph)[0]),
    }


EMPTY_DESCRIPTORS: dict[str, Any] = {"mw": 0.0, "logp": 0.0, "tpsa": 0.0, "qed": 0.0, "charge": 0}


# ---------------------------------------------------------------------------------------
def parse_case(case: str) -> tuple[str, str]:
    """'ROUTE: RECORD' -> (route, record SMILES)."""
    route, record = case.split(": ", 1)
    return route, record


def trace(p: dict[str, Any]) -> dict[str, Any]:
    """The whole route with every intermediate, for the outputs and the evidence."""
    route, record = parse_case(p["case"])
    stereo = p["stereochemistry"]
    level = TEMPERATURES.index(int(p["temperature"]))
    equivalents = int(p["equivalents"])
    cap = int(p["max_products"])
    std = standardise(record, stereo)
    parent = std["standardised"]
    current: list[tuple[str, Fraction]] = [(parent, Fraction(100))] if parent else []
    steps = []
    names = ROUTES[route]
    for i, name in enumerate(names):
        last = i == len(names) - 1
        step = run_step(current, TRANSFORMS[name], level, equivalents, stereo, None if last else cap)
        steps.append(step)
        current = [(s, step.pool[s]) for s in step.kept]
    crude = dict(current)
    return {"route": route, "record": record, "standardisation": std, "steps": steps,
            "workup": work_up(crude, parent, float(p["workup_ph"]), cap)}


def outputs(t: dict[str, Any], p: dict[str, Any]) -> dict[str, Any]:
    """The output fields from a trace."""
    w: Workup = t["workup"]
    out: dict[str, Any] = {
        "products": sorted(w.products),
        "n_products": len(w.products),
        "selected": [w.selected] if w.selected else [],
        "phase": w.phase,
        "n_species": len(w.crude),
        "crude_pct": round(float(sum(w.crude.values(), Fraction(0))), 6),
        "yield_pct": round(float(w.crude[w.selected]), 6) if w.selected else 0.0,
        "purity_pct": round(float(w.purity), 6),
        "product_yields_pct": [round(float(w.crude[s]), 6) for s in w.products],
        "recovered_pct": round(float(sum((a for s, a in w.crude.items() if s in w.starting), Fraction(0))), 6),
    }
    out.update(describe(w.selected, float(p["workup_ph"])) if w.selected else EMPTY_DESCRIPTORS)
    return _with_isolation(out, w.crude, w.phase, w.selected, float(p["workup_ph"]), extractions=1, dominant=True)


def solve(scenario: dict[str, Any]) -> dict[str, Any]:
    p = scenario["parameters"]
    return outputs(trace(p), p)


def main() -> None:
    scenario = json.load(sys.stdin)
    print(json.dumps(solve(scenario)))


# ---- isolation (stage 7 of version 4, run on this program's own work-up)
# this program's own work-up table (ACID_GROUPS, BASE_GROUPS), as the isolation sees it
ISO_ACIDS = [(smarts, pka, idx) for _name, smarts, pka, idx in ACID_GROUPS]
ISO_BASES = [(smarts, pka) for _name, smarts, pka in BASE_GROUPS]


def isolation(pool, phase, top, ph, extractions=3, dominant=False, ionise=True):
    """(isolated, purity, kept): the crude pool {smiles: amount} extracted `extractions`
    times with an equal volume, each molecule by its distribution coefficient."""
    if phase not in ("organic", "aqueous") or not top:
        return 0.0, 0.0, 0.0
    kept = {}
    for smi, amount in pool.items():
        mol = Chem.MolFromSmiles(smi)
        sites = {}
        for sm, pka, idx in ISO_ACIDS:
            for match in mol.GetSubstructMatches(Chem.MolFromSmarts(sm)):
                sites.setdefault(match[idx], (-1, pka))
        for sm, pka in ISO_BASES:
            for (i,) in mol.GetSubstructMatches(Chem.MolFromSmarts(sm)):
                sites.setdefault(i, (1, pka))
        fixed = any(a.GetFormalCharge() and a.GetIdx() not in sites
                    and not any(n.GetFormalCharge() == -a.GetFormalCharge() for n in a.GetNeighbors())
                    for a in mol.GetAtoms())
        d = 0.0 if fixed and ionise else 10 ** Crippen.MolLogP(mol)
        for sign, pka in (sites.values() if ionise else ()):
            if dominant:
                d = 0.0 if (ph > pka if sign < 0 else ph < pka) else d
            else:
                d /= 1 + 10 ** (-sign * (ph - pka))
        water = (1 / (1 + d)) ** extractions
        kept[smi] = float(amount) * (water if phase == "aqueous" else 1 - water)
    total = sum(kept.values())
    isolated = kept.get(top, 0.0)
    return round(isolated, 6), (round(100 * isolated / total, 6) if total > 0 else 0.0), round(total, 6)


def _with_isolation(out, pool, phase, top, ph, **rule):
    out["isolated_pct"], out["isolated_purity_pct"], out["kept_pct"] = isolation(pool, phase, top, ph, **rule)
    return out


if __name__ == "__main__":
    main()
