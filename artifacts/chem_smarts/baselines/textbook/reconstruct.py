"""Baseline `textbook`: the RDKit tutorial way, written from the instruction alone.

It does not know the recipe. The record is parsed as given (no standardisation), each
transformation is one generic reaction SMARTS run with RunReactants on its defaults,
once per equivalent on the first match, at any temperature and to completion; a molecule
a step cannot transform is not a product of that step, every product of every outcome is
kept (by-products included) in equal amounts, products are RDKit canonical SMILES sorted
alphabetically, the first ones are carried forward and the first one is the route's
product. The work-up is taken as a plain extraction into the organic phase that loses
nothing. Descriptors are RDKit's defaults (TPSA of N and O), no starting material is recovered,
and the charge is the product's own formal charge.
"""
from __future__ import annotations

import json
import sys

from rdkit import Chem, RDLogger
from rdkit.Chem import QED, Crippen, Descriptors, EnumerateStereoisomers, rdChemReactions
from rdkit.Chem import rdMolDescriptors

RDLogger.DisableLog("rdApp.*")

TEMPLATES = {
    "boc_protection": "[NX3;H1,H2;!$(NC=O):1]>>[N:1]C(=O)OC(C)(C)C",
    "boc_deprotection": "[N:1]C(=O)OC(C)(C)C>>[N:1]",
    "tbs_protection": "[#6:2][OH:1]>>[#6:2][O:1][Si](C)(C)C(C)(C)C",
    "tbs_deprotection": "[O:1][Si](C)(C)C(C)(C)C>>[O:1]",
    "acetylation": "[N,O;H1,H2;!$(*C=O);!$(*S=O):1]>>[*:1]C(C)=O",
    "esterification": "[C:1](=[O:2])[OH]>>[C:1](=[O:2])OC",
    "amide_coupling": "[C:1](=[O:2])[OH]>>[C:1](=[O:2])NCc1ccccc1",
    "ester_hydrolysis": "[C:1](=[O:2])O[#6:3]>>[C:1](=[O:2])O.O[#6:3]",
    "lialh4_reduction": "[CX3:1]=[O:2]>>[C:1][O:2]",
    "nitro_reduction": "[N+:1](=O)[O-]>>[N+0:1]",
    "alcohol_oxidation": "[CX4;H1,H2:1][OH:2]>>[C:1]=[O:2]",
    "reductive_amination": "[CX3;$(C[#6]):1]=O>>[C:1]N1CCOCC1",
    "eschweiler_clarke": "[NX3;H1,H2;!$(NC=O);!$(Na):1]>>C[N:1]",
    "aromatic_bromination": "[cH:1]>>[c:1]Br",
    "dehalogenation": "[c:1][Cl,Br,I]>>[c:1]",
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


def smiles_of(mol, stereo):
    try:
        Chem.SanitizeMol(mol)
    except Exception:  # noqa: BLE001 - a product RDKit cannot sanitise is dropped
        return []
    if stereo == "strip":
        Chem.RemoveStereochemistry(mol)
    smi = Chem.MolToSmiles(mol)
    if Chem.MolFromSmiles(smi) is None:
        return []
    out = []
    for part in smi.split("."):
        if stereo == "enumerate":
            isomers = EnumerateStereoisomers.EnumerateStereoisomers(Chem.MolFromSmiles(part))
            out += [Chem.MolToSmiles(m) for m in isomers]
        else:
            out.append(Chem.MolToSmiles(Chem.MolFromSmiles(part)))
    return out


def run_step(inputs, name, equivalents, stereo):
    rxn = rdChemReactions.ReactionFromSmarts(TEMPLATES[name])
    products = set()
    for smi in inputs:
        mol = Chem.MolFromSmiles(smi)
        outcomes = rxn.RunReactants((mol,))
        if not outcomes:
            continue
        prod = outcomes[0][0]
        for _ in range(equivalents - 1):
            try:
                Chem.SanitizeMol(prod)
            except Exception:  # noqa: BLE001
                break
            more = rxn.RunReactants((prod,))
            if not more:
                break
            prod = more[0][0]
        products.update(smiles_of(Chem.Mol(prod), stereo))
    return sorted(products)


def solve(p):
    route, record = p["case"].split(": ", 1)
    mol = Chem.MolFromSmiles(record)
    if p["stereochemistry"] == "strip":
        Chem.RemoveStereochemistry(mol)
    current = [Chem.MolToSmiles(mol)]
    n_species = 0
    for name in ROUTES[route]:
        products = run_step(current, name, int(p["equivalents"]), p["stereochemistry"])
        n_species = len(products)
        current = products[: int(p["max_products"])]
    share = round(100.0 / n_species, 6) if n_species else 0.0
    out = {"products": current, "n_products": len(current), "selected": current[:1],
           "phase": "organic" if current else "none", "n_species": n_species,
           "crude_pct": 100.0 if current else 0.0, "yield_pct": share, "purity_pct": share,
           "product_yields_pct": [share] * len(current), "recovered_pct": 0.0}
    if not current:
        out.update(mw=0.0, logp=0.0, tpsa=0.0, qed=0.0, charge=0)
        return _with_isolation(out, {}, "none", None, float(p["workup_ph"]))
    m = Chem.MolFromSmiles(current[0])
    out.update(mw=Descriptors.MolWt(m), logp=Crippen.MolLogP(m), tpsa=rdMolDescriptors.CalcTPSA(m),
               qed=QED.qed(m), charge=Chem.GetFormalCharge(m))
    pool = {s: 100.0 / n_species for s in current}
    return _with_isolation(out, pool, "organic", current[0], float(p["workup_ph"]), extractions=1, ionise=False)


# ---- isolation (stage 7 of version 4, run on this program's own work-up)
ISO_ACIDS = [("[CX3](=O)[OX2H1,OX1-]", 3.5, 2), ("[#6]S(=O)(=O)[NX3H1,NX2-]c", 6.5, 4), ("c[OX2H1,OX1-]", 9.5, 1),
             ("[#6]S(=O)(=O)[NX3H2,NX3H1-]", 9.9, 4)]
ISO_BASES = [("[NX3;+0;R;$(N1CCOCC1)]", 6.5), ("[NX3;+0;!$(N[!#6]);!$(N[#6;!X4]);!$(N1CCOCC1)]", 9.8),
             ("[NX3;H1,H2;+0;$(Nc);!$(N(c)c);!$(N[!#6]);!$(N[#6;!X4;!c])]", 4.6), ("[nX2;+0;r6]", 5.2)]


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
    print(json.dumps(solve(json.load(sys.stdin)["parameters"])))
