#!/usr/bin/env python3
"""Reference solution for the `chem_smarts` recon task.

Reads one scenario JSON object on stdin, prints the output JSON object on stdout.
Standalone: imports only the standard library and RDKit.
"""
from __future__ import annotations

import json
import math
import sys

from rdkit import Chem, RDLogger
from rdkit.Chem import Descriptors, rdChemReactions, rdDistGeom, rdFingerprintGenerator
from rdkit.Chem import rdMolDescriptors

RDLogger.DisableLog("rdApp.*")

# --------------------------------------------------------------------------------------
# Reaction templates: single-reactant reaction SMARTS; any co-reagent is implicit.
# Amine pattern shared by n_acetylation and n_methylation: a neutral sp3/aniline-type
# nitrogen bearing 1 or 2 H that is not an amide/sulfonamide/urea N and not bonded to N/O.
_AMINE = "[NX3;+0;H1,H2;!$(N[C,S,P]=[O,S,N]);!$(N[N,O]):1]"
TEMPLATES = {
    # carboxylic acid or carboxylate + methanol -> methyl ester
    "esterification": "[CX3:1](=[O:2])[OX2H1,OX1-]>>[C:1](=[O:2])OC",
    # carboxylic acid or carboxylate + methylamine -> N-methyl amide
    "amide_coupling": "[CX3:1](=[O:2])[OX2H1,OX1-]>>[C:1](=[O:2])NC",
    # free primary/secondary amine (incl. anilines) + acetic acid -> acetamide
    "n_acetylation": _AMINE + ">>CC(=O)[N:1]",
    # free primary/secondary amine (incl. anilines) -> one extra N-methyl
    "n_methylation": _AMINE + ">>C[N:1]",
    # alcohol or phenol O-H (not carboxylic acid) -> acetate ester
    "o_acetylation": "[OX2H1;$(O[CX4,c]):1]>>CC(=O)[O:1]",
    # C-Cl / C-Br / C-I -> C-H (C-F untouched)
    "dehalogenation": "[#6:1]-[Cl,Br,I]>>[#6:1]",
    # primary alcohol -> aldehyde, secondary alcohol -> ketone (phenols untouched)
    "alcohol_oxidation": "[CX4;H1,H2:1][OX2H1:2]>>[C:1]=[O:2]",
    # nitro -> primary amine
    "nitro_reduction": "[N+:1](=O)[O-]>>[N+0:1]",
    # ester + water -> carboxylic acid + alcohol/phenol (two product molecules)
    "ester_hydrolysis": "[CX3:1](=[O:2])[OX2:3][#6:4]>>[C:1](=[O:2])O.[O:3][#6:4]",
    # formal substitution of any aromatic C-H by Br (no regioselectivity)
    "aromatic_bromination": "[cH:1]>>[c:1]Br",
}

# Reactants: choice value (SMILES) -> name
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
N_CONFORMERS = 1
EMBED_MAX_ITERATIONS = 200

_ACID_OH = Chem.MolFromSmarts("[CX3](=O)[OX2H1]")
_BASIC_N = Chem.MolFromSmarts(
    "[NX3;+0;!$(N-a);!$(N[C,S,P]=[O,S,N]);!$(N[N,O]);!$(N-C=C)]")
_ANION = Chem.MolFromSmarts("[O-,S-;!$([O-,S-][N+,n+,P+,S+])]")
_ACID_OH = Chem.MolFromSmarts("[CX3](=O)[OX2H1]")
_AMMONIUM = Chem.MolFromSmarts("[N+,n+;!H0;!$([N+,n+][O-])]")


def _implicit_hs(mol: Chem.Mol) -> Chem.Mol:
    """Turn bracket-atom H counts into implicit H wherever the default valence model
    gives the same total H count (so reaction sites can gain/lose H)."""
    mol = Chem.RWMol(mol)
    for atom in mol.GetAtoms():
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
    m = mol.GetMol()
    Chem.SanitizeMol(m)
    return m


def _set_h(atom: Chem.Atom, charge: int, nh: int) -> None:
    atom.SetFormalCharge(charge)
    atom.SetNumExplicitHs(nh)
    atom.SetNoImplicit(True)


def neutralise(mol: Chem.Mol) -> Chem.Mol:
    rw = Chem.RWMol(mol)
    for (i,) in mol.GetSubstructMatches(_ANION):
        a = rw.GetAtomWithIdx(i)
        _set_h(a, 0, a.GetTotalNumHs() + 1)
    for (i,) in mol.GetSubstructMatches(_AMMONIUM):
        a = rw.GetAtomWithIdx(i)
        _set_h(a, 0, a.GetTotalNumHs() - 1)
    m = rw.GetMol()
    Chem.SanitizeMol(m)
    return _implicit_hs(m)


def charge(mol: Chem.Mol) -> Chem.Mol:
    mol = neutralise(mol)
    rw = Chem.RWMol(mol)
    for match in mol.GetSubstructMatches(_ACID_OH):
        a = rw.GetAtomWithIdx(match[2])
        _set_h(a, -1, 0)
    for (i,) in mol.GetSubstructMatches(_BASIC_N):
        a = rw.GetAtomWithIdx(i)
        _set_h(a, 1, a.GetTotalNumHs() + 1)
    m = rw.GetMol()
    Chem.SanitizeMol(m)
    return _implicit_hs(m)


def prepare_reactant(smiles: str, protonation: str) -> Chem.Mol:
    mol = _implicit_hs(Chem.MolFromSmiles(smiles))
    return charge(mol) if protonation == "charged" else neutralise(mol)


def canonical(mol: Chem.Mol, stereo: str) -> str | None:
    mol = Chem.Mol(mol)
    try:
        Chem.SanitizeMol(mol)
    except Exception:
        return None
    if stereo == "strip":
        Chem.RemoveStereochemistry(mol)
    else:
        Chem.AssignStereochemistry(mol, cleanIt=True, force=True)
    smi = Chem.MolToSmiles(mol)
    again = Chem.MolFromSmiles(smi)
    if again is None:
        return None
    return Chem.MolToSmiles(again)


def run_template(template: str, reactant: Chem.Mol, stereo: str) -> list[str]:
    rxn = rdChemReactions.ReactionFromSmarts(TEMPLATES[template])
    rxn.Initialize()
    found = set()
    for outcome in rxn.RunReactants((reactant,)):
        for prod in outcome:
            smi = canonical(prod, stereo)
            if smi:
                found.add(smi)
    return sorted(found)


def embed(mol: Chem.Mol, seed: int) -> Chem.Mol:
    """Hydrogen-complete molecule with one 3D conformer (ETKDGv3, randomSeed=seed);
    falls back to random-coordinate embedding, then to 2D coordinates (z = 0)."""
    molh = Chem.AddHs(mol)
    params = rdDistGeom.ETKDGv3()
    params.randomSeed = int(seed)
    params.maxIterations = EMBED_MAX_ITERATIONS
    if rdDistGeom.EmbedMolecule(molh, params) == 0:
        return molh
    params.useRandomCoords = True
    if rdDistGeom.EmbedMolecule(molh, params) == 0:
        return molh
    from rdkit.Chem import rdDepictor
    rdDepictor.Compute2DCoords(molh)
    return molh


def heavy_rg(molh: Chem.Mol) -> float:
    conf = molh.GetConformer()
    pts = [conf.GetAtomPosition(a.GetIdx()) for a in molh.GetAtoms() if a.GetAtomicNum() > 1]
    n = len(pts)
    cx = sum(p.x for p in pts) / n
    cy = sum(p.y for p in pts) / n
    cz = sum(p.z for p in pts) / n
    return math.sqrt(sum((p.x - cx) ** 2 + (p.y - cy) ** 2 + (p.z - cz) ** 2 for p in pts) / n)


def main_product(products: list[str]) -> str | None:
    if not products:
        return None
    return sorted(products, key=lambda s: (-round(Descriptors.MolWt(Chem.MolFromSmiles(s)), 6), s))[0]


def solve(scenario: dict) -> dict:
    p = scenario["parameters"]
    reactant = prepare_reactant(p["reactant"], p["protonation_state"])
    products = run_template(p["substructure_query"], reactant, p["stereochemistry"])
    main = main_product(products)
    out = {"products": products, "n_products": len(products)}
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
    out["rg"] = round(heavy_rg(embed(mol, p["conformer_seed"])), 6)
    return out


def main() -> None:
    scenario = json.load(sys.stdin)
    print(json.dumps(solve(scenario)))


if __name__ == "__main__":
    main()
