#!/usr/bin/env python3
"""Reference solution for the `chem_smarts` recon task.

Reads one scenario JSON object on stdin and prints the output JSON object on stdout.
Standalone: imports only the standard library and RDKit.

Pipeline: reactant SMILES -> protonation rules -> one reaction template (reaction SMARTS,
single reactant, co-reagents implicit) applied with RDKit RunReactants at every matching
site -> unique canonical product SMILES (stereo kept or stripped) -> descriptors of the
main product (heaviest by average MW, ties: smallest SMILES string).
"""
from __future__ import annotations

import json
import math
import sys

from rdkit import Chem, RDLogger
from rdkit.Chem import Descriptors, rdChemReactions, rdDepictor, rdDistGeom
from rdkit.Chem import rdFingerprintGenerator, rdMolDescriptors

RDLogger.DisableLog("rdApp.*")

# ---------------------------------------------------------------------------------------
# Reaction templates (choice value -> reaction SMARTS). Each template has ONE reactant
# pattern; any co-reagent (methanol, methylamine, acetic acid, water, ...) is implicit.
# A neutral amine N with 1-2 H that is not an amide / sulfonamide / amidine-type N and is
# not bonded to N or O (anilines included; ammonium N+ never matches).
_AMINE = "[NX3;+0;H1,H2;!$(N[C,S,P]=[O,S,N]);!$(N[N,O]):1]"
TEMPLATES = {
    # carboxylic acid or carboxylate + methanol -> methyl ester
    "esterification": "[CX3:1](=[O:2])[OX2H1,OX1-]>>[C:1](=[O:2])OC",
    # carboxylic acid or carboxylate + methylamine -> N-methyl amide
    "amide_coupling": "[CX3:1](=[O:2])[OX2H1,OX1-]>>[C:1](=[O:2])NC",
    # free primary/secondary amine + acetic acid -> acetamide
    "n_acetylation": _AMINE + ">>CC(=O)[N:1]",
    # free primary/secondary amine -> one more N-methyl
    "n_methylation": _AMINE + ">>C[N:1]",
    # alcohol or phenol O-H (not a carboxylic acid) -> acetate ester
    "o_acetylation": "[OX2H1;$(O[CX4,c]):1]>>CC(=O)[O:1]",
    # C-Cl / C-Br / C-I -> C-H (C-F untouched), aliphatic or aromatic
    "dehalogenation": "[#6:1]-[Cl,Br,I]>>[#6:1]",
    # primary alcohol -> aldehyde, secondary alcohol -> ketone (phenols, tertiary untouched)
    "alcohol_oxidation": "[CX4;H1,H2:1][OX2H1:2]>>[C:1]=[O:2]",
    # nitro -> primary amine
    "nitro_reduction": "[N+:1](=O)[O-]>>[N+0:1]",
    # ester + water -> carboxylic acid + alcohol/phenol (two product molecules)
    "ester_hydrolysis": "[CX3:1](=[O:2])[OX2:3][#6:4]>>[C:1](=[O:2])O.[O:3][#6:4]",
    # formal replacement of one aromatic C-H by C-Br, every position (no regioselectivity)
    "aromatic_bromination": "[cH:1]>>[c:1]Br",
}

# Reactants (choice value = RDKit canonical SMILES -> name)
REACTANTS = {
    "N[C@@H](Cc1ccc(O)cc1)C(=O)O": "L-tyrosine",
    "C[C@H](O)C(=O)O": "(S)-lactic acid",
    "CC(C)Cc1ccc([C@H](C)C(=O)O)cc1": "(S)-ibuprofen",
    "O=C(O)Cc1ccccc1Nc1c(Cl)cccc1Cl": "diclofenac",
    "CN[C@@H](C)[C@H](O)c1ccccc1": "(1R,2S)-ephedrine",
    "CCOC(=O)C[C@H](O)CCl": "ethyl (S)-4-chloro-3-hydroxybutanoate",
    "O=C(N[C@H](CO)[C@H](O)c1ccc([N+](=O)[O-])cc1)C(Cl)Cl": "chloramphenicol",
    "CCN(CC)CCOC(=O)c1ccc(N)cc1": "procaine",
    "NC[C@H](CC(=O)O)c1ccc(Cl)cc1": "(R)-baclofen",
    "COC(=O)[C@@H](O)c1ccccc1": "methyl (S)-mandelate",
    "[NH3+][C@@H](CO)C(=O)[O-]": "L-serine (zwitterion)",
    "C[N+](C)(C)C[C@H](O)CC(=O)[O-]": "L-carnitine (inner salt)",
    "O=C(O)c1ccc([N+](=O)[O-])cc1Cl": "2-chloro-4-nitrobenzoic acid",
    "CCOC(=O)c1ccc(N)cc1": "benzocaine",
    "CC(=O)Oc1ccccc1C(=O)O": "aspirin",
    "NC[C@H](O)c1ccc(O)c(O)c1": "(R)-norepinephrine",
    "Cc1ncc([N+](=O)[O-])n1CCO": "metronidazole",
}

FP_SIZE = 2048
EMBED_MAX_ITERATIONS = 200

# Protonation patterns.
# anion to neutralise: O-/S- not sitting on a cationic atom (nitro, N-oxide O- excluded)
_ANION = Chem.MolFromSmarts("[O-,S-;!$([O-,S-][N+,n+,P+,S+])]")
# cation to neutralise: N+ carrying at least one H (ammonium); quaternary N+ and nitro stay
_AMMONIUM = Chem.MolFromSmarts("[N+,n+;!H0;!$([N+,n+][O-])]")
# charged state: carboxylic acid O-H -> O-
_ACID_OH = Chem.MolFromSmarts("[CX3](=O)[OX2H1]")
# charged state: basic aliphatic amine (not aryl-, acyl-, N/O-bonded, or enamine N) -> N+H
_BASIC_N = Chem.MolFromSmarts(
    "[NX3;+0;!$(N-a);!$(N[C,S,P]=[O,S,N]);!$(N[N,O]);!$(N-C=C)]")


def implicit_hs(mol: Chem.Mol) -> Chem.Mol:
    """Make bracket-atom H counts implicit wherever the default valence model gives the
    same total H count (so reaction centres such as [C@@H] can gain or lose H)."""
    rw = Chem.RWMol(mol)
    for atom in rw.GetAtoms():
        if atom.GetNumExplicitHs() == 0:
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


def _set_charge_h(atom: Chem.Atom, charge: int, n_h: int) -> None:
    atom.SetFormalCharge(charge)
    atom.SetNumExplicitHs(n_h)
    atom.SetNoImplicit(True)


def neutralise(mol: Chem.Mol) -> Chem.Mol:
    """O-/S- (not on a cation) gain one H; N+ bearing H loses one H. Others unchanged."""
    rw = Chem.RWMol(mol)
    for (i,) in mol.GetSubstructMatches(_ANION):
        atom = rw.GetAtomWithIdx(i)
        _set_charge_h(atom, 0, atom.GetTotalNumHs() + 1)
    for (i,) in mol.GetSubstructMatches(_AMMONIUM):
        atom = rw.GetAtomWithIdx(i)
        _set_charge_h(atom, 0, atom.GetTotalNumHs() - 1)
    out = rw.GetMol()
    Chem.SanitizeMol(out)
    return implicit_hs(out)


def charge(mol: Chem.Mol) -> Chem.Mol:
    """Neutralise first, then COOH -> COO- and basic aliphatic amine N -> N+H."""
    mol = neutralise(mol)
    rw = Chem.RWMol(mol)
    for match in mol.GetSubstructMatches(_ACID_OH):
        _set_charge_h(rw.GetAtomWithIdx(match[2]), -1, 0)
    for (i,) in mol.GetSubstructMatches(_BASIC_N):
        atom = rw.GetAtomWithIdx(i)
        _set_charge_h(atom, 1, atom.GetTotalNumHs() + 1)
    out = rw.GetMol()
    Chem.SanitizeMol(out)
    return implicit_hs(out)


def prepare_reactant(smiles: str, protonation_state: str) -> Chem.Mol | None:
    mol = Chem.MolFromSmiles(smiles)
    if mol is None:
        return None
    mol = implicit_hs(mol)
    return charge(mol) if protonation_state == "charged" else neutralise(mol)


def canonical(mol: Chem.Mol, stereochemistry: str) -> str | None:
    """Canonical SMILES of a raw reaction product (None if it does not sanitise)."""
    mol = Chem.Mol(mol)
    try:
        Chem.SanitizeMol(mol)
    except Exception:
        return None
    if stereochemistry == "strip":
        Chem.RemoveStereochemistry(mol)
    else:
        Chem.AssignStereochemistry(mol, cleanIt=True, force=True)
    again = Chem.MolFromSmiles(Chem.MolToSmiles(mol))
    return None if again is None else Chem.MolToSmiles(again)


def run_template(template: str, reactant: Chem.Mol | None, stereochemistry: str) -> list[str]:
    """Sorted unique canonical SMILES of every product molecule of every outcome."""
    if reactant is None or template not in TEMPLATES:
        return []
    rxn = rdChemReactions.ReactionFromSmarts(TEMPLATES[template])
    rxn.Initialize()
    found = set()
    for outcome in rxn.RunReactants((reactant,)):
        for prod in outcome:
            smi = canonical(prod, stereochemistry)
            if smi:
                found.add(smi)
    return sorted(found)


def main_product(products: list[str]) -> str | None:
    """Heaviest product by average MW (rounded to 1e-6); ties -> smallest SMILES string."""
    if not products:
        return None
    return min(products, key=lambda s: (-round(Descriptors.MolWt(Chem.MolFromSmiles(s)), 6), s))


def embed(mol: Chem.Mol, seed: int) -> Chem.Mol:
    """H-complete copy of `mol` with one conformer: ETKDGv3 with randomSeed=seed; if that
    fails, the same with random starting coordinates; if that fails, 2D coordinates."""
    molh = Chem.AddHs(mol)
    params = rdDistGeom.ETKDGv3()
    params.randomSeed = int(seed)
    params.maxIterations = EMBED_MAX_ITERATIONS
    if rdDistGeom.EmbedMolecule(molh, params) == 0:
        return molh
    params.useRandomCoords = True
    if rdDistGeom.EmbedMolecule(molh, params) == 0:
        return molh
    rdDepictor.Compute2DCoords(molh)
    return molh


def heavy_rg(molh: Chem.Mol) -> float:
    """Unweighted radius of gyration (Angstrom) of the heavy atoms of the conformer."""
    conf = molh.GetConformer()
    pts = [conf.GetAtomPosition(a.GetIdx()) for a in molh.GetAtoms() if a.GetAtomicNum() > 1]
    n = len(pts)
    cx = sum(p.x for p in pts) / n
    cy = sum(p.y for p in pts) / n
    cz = sum(p.z for p in pts) / n
    return math.sqrt(sum((p.x - cx) ** 2 + (p.y - cy) ** 2 + (p.z - cz) ** 2 for p in pts) / n)


def solve(scenario: dict) -> dict:
    p = scenario["parameters"]
    reactant = prepare_reactant(p["reactant"], p["protonation_state"])
    products = run_template(p["substructure_query"], reactant, p["stereochemistry"])
    out = {"products": products, "n_products": len(products)}
    main = main_product(products)
    if main is None:
        out.update(mw=0.0, hba=0, hbd=0, tpsa=0.0, fp_on=0, rg=0.0)
        return out
    mol = Chem.MolFromSmiles(main)
    gen = rdFingerprintGenerator.GetMorganGenerator(radius=int(p["fingerprint_radius"]), fpSize=FP_SIZE)
    out["mw"] = round(Descriptors.MolWt(mol), 6)
    out["hba"] = int(rdMolDescriptors.CalcNumHBA(mol))
    out["hbd"] = int(rdMolDescriptors.CalcNumHBD(mol))
    out["tpsa"] = round(rdMolDescriptors.CalcTPSA(mol), 6)
    out["fp_on"] = int(gen.GetFingerprint(mol).GetNumOnBits())
    out["rg"] = round(heavy_rg(embed(mol, int(p["conformer_seed"]))), 6)
    return out


def main() -> None:
    scenario = json.load(sys.stdin)
    print(json.dumps(solve(scenario)))


if __name__ == "__main__":
    main()
