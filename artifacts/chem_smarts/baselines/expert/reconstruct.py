"""Baseline `expert`: a careful cheminformatician's guess, written from the instruction alone.

It knows how enumeration workflows are usually built but not the recipe, so it uses the
common defaults of each stage: the registration parent from rdMolStandardize (Cleanup,
FragmentParent, Uncharger, canonical tautomer on RDKit's defaults); site classes in the
textbook order of reactivity (primary before secondary amines before anilines before
primary alcohols before secondary alcohols before phenols, and so on); protection and
deprotection steps pass molecules without a site through, functional-group steps drop
them; products are standardised like the compound, small leaving groups (fewer than
four heavy atoms) are dropped, and molecules are ranked by QED (then SMILES), the usual
drug-likeness selection; the final set loses the unchanged compound. Descriptors are
RDKit's defaults (CalcNumHBA/HBD, TPSA of N and O, Morgan 2048 bits); the pH 7.4 form
deprotonates carboxylic acids and protonates aliphatic amines.
"""
from __future__ import annotations

import json
import sys

from rdkit import Chem, RDLogger
from rdkit.Chem import QED, Crippen, Descriptors, EnumerateStereoisomers, rdChemReactions
from rdkit.Chem import rdFingerprintGenerator, rdMolDescriptors
from rdkit.Chem.MolStandardize import rdMolStandardize

RDLogger.DisableLog("rdApp.*")

PRIM = "[NX3;H2;!$(NC=[O,S,N]);!$(N[a]);!$(NS=O):1]"
SEC = "[NX3;H1;!$(NC=[O,S,N]);!$(N[a]);!$(NS=O):1]"
ANIL = "[NX3;H1,H2;$(Nc);!$(NC=O);!$(NS=O):1]"
P_OH = "[OX2H;$(O[CH2]):1]"
S_OH = "[OX2H;$(O[CH1]):1]"
PHEN = "[OX2H;$(Oc):1]"
ACT = "[$([OH]),$(O[CX4]),$([NX3;!$(NC=O);!$(NS=O)]),$([NH]C(C)=O)]"
BOC, TBS = "C(=O)OC(C)(C)C", "[Si](C)(C)C(C)(C)C"

# transformation -> (protecting-group step?, classes in order of reactivity)
TRANSFORMS = {
    "boc_protection": (True, [[f"{PRIM}>>[N:1]{BOC}"], [f"{SEC}>>[N:1]{BOC}"], [f"{ANIL}>>[N:1]{BOC}"]]),
    "boc_deprotection": (True, [["[N:1]C(=O)OC(C)(C)C>>[N:1]"]]),
    "tbs_protection": (True, [[f"{P_OH}>>[O:1]{TBS}"], [f"{S_OH}>>[O:1]{TBS}"], [f"{PHEN}>>[O:1]{TBS}"]]),
    "tbs_deprotection": (True, [["[O:1][Si](C)(C)C(C)(C)C>>[O:1]"]]),
    "acetylation": (False, [[f"{PRIM}>>[N:1]C(C)=O"], [f"{SEC}>>[N:1]C(C)=O"], [f"{ANIL}>>[N:1]C(C)=O"],
                            [f"{P_OH}>>[O:1]C(C)=O"], [f"{S_OH}>>[O:1]C(C)=O"], [f"{PHEN}>>[O:1]C(C)=O"]]),
    "esterification": (False, [["[#6:3][C:1](=[O:2])[OH1,O-]>>[#6:3][C:1](=[O:2])OC"]]),
    "amide_coupling": (False, [["[#6:3][C:1](=[O:2])[OH1,O-]>>[#6:3][C:1](=[O:2])NCc1ccccc1"]]),
    "ester_hydrolysis": (False, [["[#6:5][C:1](=[O:2])[O:3][#6:4]>>([#6:5][C:1](=[O:2])O.[O:3][#6:4])"]]),
    "lialh4_reduction": (False, [["[#6:3][CX3H1:1]=[O:2]>>[#6:3][C:1][O:2]",
                                  "[#6:3][CX3:1](=[O:2])[#6:4]>>[#6:3][C:1]([O:2])[#6:4]"],
                                 ["[#6:5][CX3:1](=[O:2])[O:3][#6:4]>>([#6:5][C:1][O:2].[O:3][#6:4])"],
                                 ["[#6:3][CX3:1](=[O:2])[OH1,O-]>>[#6:3][C:1][O:2]"],
                                 ["[#6:3][CX3:1](=O)[N:4]>>[#6:3][C:1][N:4]"]]),
    "nitro_reduction": (False, [["[N+:1](=O)[O-]>>[N+0:1]"]]),
    "alcohol_oxidation": (False, [["[CH2:1][OH:2]>>[C:1]=[O:2]"],
                                  ["[CH1:1]([#6:3])([#6:4])[OH:2]>>[C:1]([#6:3])([#6:4])=[O:2]"]]),
    "reductive_amination": (False, [["[#6:3][CX3H1:1]=O>>[#6:3][C:1]N1CCOCC1"],
                                    ["[#6:3][CX3:1](=O)[#6:4]>>[#6:3][C:1]([#6:4])N1CCOCC1"]]),
    "eschweiler_clarke": (False, [[f"{PRIM}>>C[N:1]C"], [f"{SEC}>>C[N:1]"]]),
    "aromatic_bromination": (False, [[f"[cH;$(c1ccc(-{ACT})cc1):1]>>[c:1]Br"], [f"[cH;$(c(-{ACT})):1]>>[c:1]Br",
                                                                              f"[cH;$(cc-{ACT}):1]>>[c:1]Br"]]),
    "dehalogenation": (False, [["[c:1]I>>[c:1]"], ["[c:1]Br>>[c:1]"], ["[c:1]Cl>>[c:1]"]]),
}
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
RXNS = {name: (flag, [[rdChemReactions.ReactionFromSmarts(s) for s in cls] for cls in classes])
        for name, (flag, classes) in TRANSFORMS.items()}
TAUT = rdMolStandardize.TautomerEnumerator()
UNCHARGER = rdMolStandardize.Uncharger()


def standard(mol, stereo):
    """Registration parent: Cleanup, FragmentParent, Uncharger, canonical tautomer."""
    mol = rdMolStandardize.Cleanup(mol)
    mol = rdMolStandardize.FragmentParent(mol)
    mol = UNCHARGER.uncharge(mol)
    mol = TAUT.Canonicalize(mol)
    if stereo == "strip":
        Chem.RemoveStereochemistry(mol)
    return Chem.MolToSmiles(mol)


def prepare(smiles):
    """Hydrogens implicit so that reaction centres written [C@@H] can change."""
    mol = Chem.MolFromSmiles(smiles)
    for atom in mol.GetAtoms():
        if not atom.GetIsAromatic() and atom.GetFormalCharge() == 0:
            atom.SetNoImplicit(False)
            atom.SetNumExplicitHs(0)
    mol.UpdatePropertyCache(strict=False)
    return mol


def outcomes(mol, classes, mode):
    found = []
    for cls in classes:
        here = [o[0] for rxn in cls for o in rxn.RunReactants((mol,))]
        if here and mode == "selective":
            return here
        found += here
    return found


def exhaustive(mol, classes):
    changed = False
    for _ in range(20):
        outs = outcomes(mol, classes, "every_site")
        if not outs:
            break
        nxt = outs[0]
        try:
            Chem.SanitizeMol(nxt)
        except Exception:  # noqa: BLE001
            return []
        mol, changed = prepare(Chem.MolToSmiles(nxt)), True
    return [mol] if changed else []


def tidy(mol, stereo):
    try:
        Chem.SanitizeMol(mol)
    except Exception:  # noqa: BLE001 - dropped, as any enumeration tool would
        return []
    out = []
    for frag in Chem.GetMolFrags(mol, asMols=True):
        if frag.GetNumHeavyAtoms() < 4:
            continue
        smi = standard(frag, stereo)
        if stereo == "enumerate":
            out += [Chem.MolToSmiles(m) for m in EnumerateStereoisomers.EnumerateStereoisomers(Chem.MolFromSmiles(smi))]
        else:
            out.append(smi)
    return out


def rank(smiles):
    return (-round(QED.qed(Chem.MolFromSmiles(smiles)), 4), smiles)


def run_step(inputs, name, mode, stereo):
    passthrough, classes = RXNS[name]
    pool, unchanged = [], 0
    for smi in inputs:
        mol = prepare(smi)
        outs = exhaustive(mol, classes) if mode == "exhaustive" else outcomes(mol, classes, mode)
        if not outs:
            if passthrough:
                pool.append(smi)
                unchanged += 1
            continue
        for o in outs:
            pool += tidy(o, stereo)
    return sorted(set(pool), key=rank), unchanged


def describe(smiles, radius):
    m = Chem.MolFromSmiles(smiles)
    charged = Chem.RWMol(m)
    for match in m.GetSubstructMatches(Chem.MolFromSmarts("C(=O)[OH]")):
        a = charged.GetAtomWithIdx(match[2])
        a.SetFormalCharge(-1)
        a.SetNumExplicitHs(0)
    for (i,) in m.GetSubstructMatches(Chem.MolFromSmarts("[NX3;!$(NC=[O,S,N]);!$(N[a]);!$(NS=O);!$(N[N,O])]")):
        a = charged.GetAtomWithIdx(i)
        a.SetFormalCharge(1)
        a.SetNumExplicitHs(a.GetTotalNumHs() + 1)
    gen = rdFingerprintGenerator.GetMorganGenerator(radius=radius, fpSize=2048)
    return {"mw": Descriptors.MolWt(m), "logp": Crippen.MolLogP(m), "tpsa": rdMolDescriptors.CalcTPSA(m),
            "hba": rdMolDescriptors.CalcNumHBA(m), "hbd": rdMolDescriptors.CalcNumHBD(m),
            "rotb": rdMolDescriptors.CalcNumRotatableBonds(m), "fsp3": rdMolDescriptors.CalcFractionCSP3(m),
            "qed": QED.qed(m), "fp_on": gen.GetFingerprint(m).GetNumOnBits(),
            "charge": sum(a.GetFormalCharge() for a in charged.GetAtoms())}


def solve(p):
    start = standard(Chem.MolFromSmiles(p["reactant"]), p["stereochemistry"])
    current = [start]
    counts, mws, kept_back = [], [], []
    names = ROUTES[p["route"]]
    for i, name in enumerate(names):
        products, unchanged = run_step(current, name, p["site_mode"], p["stereochemistry"])
        kept_back.append(unchanged)
        if i == len(names) - 1:
            products = [s for s in products if s != start]
        counts.append(len(products))
        mws.append(Descriptors.MolWt(Chem.MolFromSmiles(products[0])) if products else 0.0)
        current = products[: int(p["max_products"])]
    out = {"parent": [start], "products": current, "n_products": len(current), "selected": current[:1],
           "step_counts": counts, "step_unchanged": kept_back, "step_mw": mws}
    if current:
        out.update(describe(current[0], int(p["fingerprint_radius"])))
    else:
        out.update(mw=0.0, logp=0.0, tpsa=0.0, hba=0, hbd=0, rotb=0, fsp3=0.0, qed=0.0, fp_on=0, charge=0)
    return out


if __name__ == "__main__":
    print(json.dumps(solve(json.load(sys.stdin)["parameters"])))
