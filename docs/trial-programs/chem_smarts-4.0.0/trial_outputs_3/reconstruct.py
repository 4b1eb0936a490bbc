import sys, json, math
from rdkit import Chem, RDLogger
from rdkit.Chem import Lipinski, Descriptors, Crippen, rdMolDescriptors, QED, AllChem
from rdkit.Chem.MolStandardize import rdMolStandardize
from rdkit.Chem.EnumerateStereoisomers import EnumerateStereoisomers, StereoEnumerationOptions
RDLogger.DisableLog('rdApp.*')

LEVELS = [0.0, 0.6, 0.8, 0.95]
TIDX = {0: 1, 25: 2, 80: 3}

# reaction: list of (site_smarts, rxn_smarts, slow) ; site smarts first atom is the site atom
AMINE1 = '[NX3;H2;!$(N-[C,S]=[O,S,N]);!$(N-a);!$(N-S);!$(N-[Si])]'
AMINE2 = '[NX3;H1;!$(N-[C,S]=[O,S,N]);!$(N-a);!$(N-S);!$(N-[Si])]'
OH1 = '[OX2H1;$(O[CH2]);!$(OC=O)]'
OH2 = '[OX2H1;$(O[CH1]);!$(OC=O);!$(O[C;R])]'
OH2R = '[OX2H1;$(O[CH1;R]);!$(OC=O)]'
OH3 = '[OX2H1;$(O[CH0;X4]);!$(OC=O)]'
PHOH = '[OX2H1;$(Oc)]'
R = {
 'boc_protection': [(AMINE1, '[N:1]>>[N:1]C(=O)OC(C)(C)C', 0), (AMINE2, '[N:1]>>[N:1]C(=O)OC(C)(C)C', 1),
                    ('[NX3;H2,H1;!$(N-[C,S]=[O,S,N]);!$(N-S);!$(N(-a)-a)]-a', '[N:1]>>[N:1]C(=O)OC(C)(C)C', 2)],
 'boc_deprotection': [('[N]C(=O)OC(C)(C)C', '[N:1]C(=O)OC(C)(C)C>>[N:1]', 0)],
 'tbs_protection': [(OH1, '[O:1]>>[O:1][Si](C)(C)C(C)(C)C', 0), (PHOH, '[O:1]>>[O:1][Si](C)(C)C(C)(C)C', 1),
                    (OH2, '[O:1]>>[O:1][Si](C)(C)C(C)(C)C', 2), (OH2R, '[O:1]>>[O:1][Si](C)(C)C(C)(C)C', 2)],
 'tbs_deprotection': [('O[Si](C)(C)C(C)(C)C', '[O:1][Si](C)(C)C(C)(C)C>>[O:1]', 0)],
 'esterification': [('[CX3](=O)[OX2H1,OX1-]', '[C:1](=[O:2])[O;H1,-1]>>[C:1](=[O:2])OC', 1)],
 'amide_coupling': [('[CX3](=O)[OX2H1,OX1-]', '[C:1](=[O:2])[O;H1,-1]>>[C:1](=[O:2])NCc1ccccc1', 0)],
 'lialh4_reduction': [
    ('[CX3](=O)[OX2][#6]', 'CUSTOM:red', 1),
    ('[CX3](=O)[OX2H1,OX1-]', '[C:1](=O)[O;H1,-1:2]>>[C:1][O+0:2]', 1),
    ('[CX3;!$(C(N)[N,O])](=O)[NX3;!$(N(C=O)C=O)]', '[C:1](=O)[N:2]>>[C:1][N:2]', 2),
    ('[CX3H1,CX3H0;$(C([#6,#1])([#6,#1])=O)](=O)', '[C:1]=[O:2]>>[C:1][O:2]', 1)],
 'nitro_reduction': [('[N+](=O)[O-]', '[N+:1](=O)[O-]>>[N+0:1]', 1),
                     ('cBr', '[c:1]Br>>[c:1]', 2), ('cI', '[c:1]I>>[c:1]', 2)],
 'acetylation': [(AMINE1, '[N:1]>>[N:1]C(C)=O', 0), (AMINE2, '[N:1]>>[N:1]C(C)=O', 0),
                 ('[NX3;H2,H1;!$(N-[C,S]=[O,S,N]);!$(N-S)]-a', '[N:1]>>[N:1]C(C)=O', 1),
                 (OH1, '[O:1]>>[O:1]C(C)=O', 1), (PHOH, '[O:1]>>[O:1]C(C)=O', 2),
                 (OH2, '[O:1]>>[O:1]C(C)=O', 2), (OH2R, '[O:1]>>[O:1]C(C)=O', 2)],
 'ester_hydrolysis': [('[CX3;!$(C(=O)(O)[N,O])](=O)[OX2]c', 'CUSTOM:hyd', 0),
                      ('[CX3;!$(C(=O)(O)[N,O])](=O)[OX2][C]', 'CUSTOM:hyd', 1)],
 'alcohol_oxidation': [('[CH2;!$(C=*)][OX2H1]', '[C:1][O:2]>>[C:1]=[O:2]', 0),
                       ('[CH1;!R;!$(C=*);!$(C-[!#6;!#1;!O]);!$(C-a)][OX2H1]', '[C:1][O:2]>>[C:1]=[O:2]', 0),
                       ('[CH1;!R;!$(C=*);!$(C-[!#6;!#1;!O]);$(C-a)][OX2H1]', '[C:1][O:2]>>[C:1]=[O:2]', 1),
                       ('[CH1;R;!$(C=*);!$(C-[!#6;!#1;!O])][OX2H1]', '[C:1][O:2]>>[C:1]=[O:2]', 1)],
 'reductive_amination': [('[CX3H1](=O)[#6]', '[C:1]=O>>[C:1]N1CCOCC1', 0),
                         ('[CX3H0](=O)([#6])[#6]', '[C:1]=O>>[C:1]N1CCOCC1', 1)],
 'eschweiler_clarke': [(AMINE1, '[N:1]>>[N:1](C)C', 1), (AMINE2, '[N:1]>>[N:1]C', 2)],
 'aromatic_bromination': [('[cH;$(c:c:c:c-[OX2H1,$([OX2](c)[CX4]),NX3;!$(N-S);!$(O-C=O)])]', '[cH:1]>>[c:1]Br', 0),
                          ('[cH;$(c:c-[OX2H1,$([OX2](c)[CX4]),NX3;!$(N-S);!$(O-C=O)])]', '[cH:1]>>[c:1]Br', 1)],
 'dehalogenation': [('cBr', '[c:1]Br>>[c:1]', 1), ('cI', '[c:1]I>>[c:1]', 1), ('cCl', '[c:1]Cl>>[c:1]', 2)],
}
PROTECT = {'boc_protection', 'tbs_protection'}

_rxn_cache = {}
def rxn(s):
    if s not in _rxn_cache:
        _rxn_cache[s] = AllChem.ReactionFromSmarts(s)
    return _rxn_cache[s]


def canon(m):
    return Chem.MolToSmiles(m)


def prep_parent(smi):
    m = Chem.MolFromSmiles(smi)
    frags = Chem.GetMolFrags(m, asMols=True)
    frags = sorted(frags, key=lambda f: (f.GetNumHeavyAtoms(), Descriptors.MolWt(f)), reverse=True)
    m = frags[0]
    try:
        m = rdMolStandardize.Uncharger().uncharge(m)
    except Exception:
        pass
    try:
        te = rdMolStandardize.TautomerEnumerator()
        m2 = te.Canonicalize(m)
        if Chem.MolToSmiles(m2, isomericSmiles=False) != Chem.MolToSmiles(m, isomericSmiles=False):
            m = m2
    except Exception:
        pass
    Chem.SanitizeMol(m)
    return m


def custom_ester(mol, c1, mode):
    a = mol.GetAtomWithIdx(c1)
    o3 = o2 = c4 = None
    for b in a.GetBonds():
        n = b.GetOtherAtom(a)
        if n.GetSymbol() == 'O' and b.GetBondType() == Chem.BondType.DOUBLE:
            o3 = n.GetIdx()
        elif n.GetSymbol() == 'O' and b.GetBondType() == Chem.BondType.SINGLE and n.GetDegree() == 2:
            o2 = n.GetIdx()
    if o2 is None or o3 is None:
        return None
    for n in mol.GetAtomWithIdx(o2).GetNeighbors():
        if n.GetIdx() != c1:
            c4 = n.GetIdx()
    rw = Chem.RWMol(mol)
    rw.RemoveBond(o2, c4)
    newo = rw.AddAtom(Chem.Atom(8))
    rw.AddBond(c4, newo, Chem.BondType.SINGLE)
    if mode == 'red':
        rw.RemoveBond(c1, o3)
    for i in (c1, o2, c4, o3):
        at = rw.GetAtomWithIdx(i)
        at.SetNumExplicitHs(0); at.SetNoImplicit(False)
        if at.GetIsAromatic() and not at.IsInRing():
            at.SetIsAromatic(False)
    if mode == 'red':
        rw.RemoveAtom(o3)
    m = rw.GetMol()
    try:
        Chem.SanitizeMol(m)
    except Exception:
        return None
    frags = list(Chem.GetMolFrags(m, asMols=True, sanitizeFrags=True))
    for f in frags:
        Chem.AssignStereochemistry(f, cleanIt=True, force=True)
    return frags


def react_site(mol, rsmarts, atom_idx):
    """apply reaction at site containing atom_idx (first mapped atom). return list of fragment smiles (main, byproducts)"""
    if rsmarts.startswith('CUSTOM:'):
        return custom_ester(mol, atom_idx, rsmarts[7:])
    r = rxn(rsmarts)
    outs = []
    for ps in r.RunReactants((mol,)):
        try:
            ok = False
            for p in ps:
                for a in p.GetAtoms():
                    if a.HasProp('react_atom_idx') and a.GetIntProp('react_atom_idx') == atom_idx and a.HasProp('old_mapno'):
                        ok = True
            if not ok:
                continue
            res = []
            for p in ps:
                p = Chem.RWMol(p)
                for a in p.GetAtoms():
                    if a.HasProp('old_mapno'):
                        a.SetNumExplicitHs(0)
                        a.SetNoImplicit(False)
                p = p.GetMol()
                Chem.SanitizeMol(p)
                Chem.AssignStereochemistry(p, cleanIt=True, force=True)
                res.append(p)
            outs.append(res)
        except Exception:
            continue
    return outs[0] if outs else None


_TE = None
def taut(m):
    global _TE
    try:
        if _TE is None:
            _TE = rdMolStandardize.TautomerEnumerator()
        m2 = _TE.Canonicalize(m)
        na = lambda x: sum(1 for at in x.GetAtoms() if at.GetIsAromatic())
        if Chem.MolToSmiles(m2, isomericSmiles=False) != Chem.MolToSmiles(m, isomericSmiles=False) and na(m2) > na(m):
            return m2
    except Exception:
        pass
    return m


def do_steps(mol0, transforms, T, eq, mp, stereo):
    species = {canon(mol0): 100.0}
    mols = {canon(mol0): mol0}
    ti = TIDX[int(T)]
    for si, tr in enumerate(transforms):
        new = {}
        newm = {}
        def add(m, amt, isnew):
            if isnew:
                m = taut(m)
            outs = [m]
            if stereo == 'strip':
                Chem.RemoveStereochemistry(m)
            elif stereo == 'enumerate' and isnew:
                try:
                    opts = StereoEnumerationOptions(onlyUnassigned=True, unique=True)
                    outs = list(EnumerateStereoisomers(m, options=opts))
                except Exception:
                    outs = [m]
            for o in outs:
                s = canon(o)
                s = canon(Chem.MolFromSmiles(s))
                new[s] = new.get(s, 0) + amt / len(outs)
                newm[s] = Chem.MolFromSmiles(s)
        for s, amt in species.items():
            m = mols[s]
            # find sites
            sites = []
            seen = set()
            for (ss, rs, slow) in R[tr]:
                patt = Chem.MolFromSmarts(ss)
                for match in m.GetSubstructMatches(patt):
                    if match[0] in seen:
                        continue
                    seen.add(match[0])
                    sites.append((slow, match[0], rs))
            sites = [x for x in sites if LEVELS[max(0, ti - x[0])] > 0]
            if tr in ('amide_coupling', 'alcohol_oxidation') and (m.HasSubstructMatch(Chem.MolFromSmarts(AMINE1)) or m.HasSubstructMatch(Chem.MolFromSmarts(AMINE2))):
                continue
            if not sites:
                add(m, amt, False)
                continue
            # sequential reaction on up to eq sites, grouped by reactivity
            # simple model: products by iterative application
            cur = {s: (m, 1.0)}
            for k in range(eq):
                nxt = {}
                for cs, (cm, frac) in cur.items():
                    csites = []
                    seen = set()
                    for ti_, (ss, rs, slow) in enumerate(R[tr]):
                        patt = Chem.MolFromSmarts(ss)
                        for match in cm.GetSubstructMatches(patt):
                            if match[0] in seen:
                                continue
                            seen.add(match[0])
                            csites.append((slow, match[0], rs, (slow, 1 if (tr == 'acetylation' and ss.startswith('[O')) else 0)))
                    csites = [x for x in csites if LEVELS[max(0, ti - x[0])] > 0]
                    if not csites or cs.startswith('#done'):
                        nxt[cs] = (cm, nxt.get(cs, (cm, 0))[1] + frac)
                        continue
                    best = min(c[3] for c in csites)
                    csites = [c for c in csites if c[3] == best]
                    conv = LEVELS[max(0, ti - best[0])]
                    # unreacted part
                    key = '#done' + cs
                    nxt[key] = (cm, nxt.get(key, (cm, 0))[1] + frac * (1 - conv))
                    # dedupe by product
                    prods = {}
                    for (_, ai, rs, _k) in csites:
                        out = react_site(cm, rs, ai)
                        if out is None:
                            continue
                        main = max(out, key=lambda p: p.GetNumHeavyAtoms())
                        ps = canon(main)
                        prods.setdefault(ps, [main, 0, out])
                        prods[ps][1] += 1
                    n = sum(v[1] for v in prods.values())
                    if n == 0:
                        nxt[key] = (cm, nxt[key][1] + frac * conv)
                        continue
                    for ps, (pm, cnt, out) in prods.items():
                        a = frac * conv * cnt / n
                        nxt[ps] = (pm, nxt.get(ps, (pm, 0))[1] + a)
                        for bp in out:
                            if bp is pm:
                                continue
                            if bp.GetNumHeavyAtoms() >= 5:
                                bs = '#bp' + canon(bp)
                                nxt[bs] = (bp, nxt.get(bs, (bp, 0))[1] + a)
                cur = nxt
            for cs, (cm, frac) in cur.items():
                isnew = not (cs.startswith('#done') and cs[5:] == s) and cs != s
                add(Chem.Mol(cm), amt * frac, isnew)
        items = sorted(new.items(), key=lambda kv: (-round(kv[1], 7), kv[0]))
        items = [(k, v) for k, v in items if v > 1e-9]
        if si < len(transforms) - 1:
            items = items[:mp]
        species = dict(items)
        mols = {k: newm[k] for k in species}
    return species, mols


PKA_ACID = [
    ('[CX3](=O)[OX2H1]', 3.8),
    ('c[OX2H1]', 9.5),
    ('[SX4](=O)(=O)[NX3H1]a', 6.5),
    ('[SX4](=O)(=O)[NX3H2]', 9.8),
    ('[SX2H1][CX4]', 9.8),
]
PKA_BASE = [
    ('[NX3;H2,H1,H0;!$(N-[C,S]=[O,S,N]);!$(N-a);!$(N-S);!$(N-[Si]);!$(N#*);!$(N=*);!$(N-O);!$([N]1CCOCC1)]', 9.6),
    ('[NX3;$(N1CCOCC1);!$(N-C=O);!$(N-a)]', 7.0),
    ('[NX3;H2,H1;!$(N-C=[O,S,N]);!$(N-S);!$(N(-a)-a)]-c', 4.6),
    ('[nX2;r6]', 5.2),
]


def charge_at(m, pH):
    ch = 0
    ionized = False
    for a in m.GetAtoms():
        if a.GetFormalCharge() != 0:
            if a.GetSymbol() == 'N' and a.GetFormalCharge() == 1 and a.GetTotalNumHs() == 0 and not any(n.GetFormalCharge() < 0 for n in a.GetNeighbors()):
                ch += 1; ionized = True
    used = set()
    for sm, pka in PKA_ACID:
        p = Chem.MolFromSmarts(sm)
        for mt in m.GetSubstructMatches(p):
            if mt[-1] in used or mt[0] in used:
                continue
            used.update(mt)
            if pH > pka:
                ch -= 1; ionized = True
    for sm, pka in PKA_BASE:
        p = Chem.MolFromSmarts(sm)
        for mt in m.GetSubstructMatches(p):
            if mt[0] in used:
                continue
            used.add(mt[0])
            if pH < pka:
                ch += 1; ionized = True
    return ch, ionized


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


def main():
    sc = json.load(sys.stdin)
    P = sc['parameters']
    route, rec = P['case'].split(': ', 1)
    transforms = TRANS[route]
    pH = float(P['workup_ph'])
    stereo = P['stereochemistry']
    mol0 = prep_parent(rec)
    if stereo == 'strip':
        Chem.RemoveStereochemistry(mol0)
    mol0 = Chem.MolFromSmiles(canon(mol0))
    sm = canon(mol0)
    sm_flat = Chem.MolToSmiles(mol0, isomericSmiles=False)
    out = dict(charge=0, crude_pct=0.0, fp_on=0, hba=0, hbd=0, logp=0.0, mw=0.0, n_products=0,
               n_species=0, phase='none', products=[], purity_pct=0.0, qed=0.0, selected=[], tpsa=0.0, yield_pct=0.0)
    try:
        species, mols = do_steps(mol0, transforms, P['temperature'], int(P['equivalents']), int(P['max_products']), stereo)
    except Exception as e:
        print(repr(e), file=sys.stderr)
        species, mols = {sm: 100.0}, {sm: mol0}
    out['crude_pct'] = round(sum(species.values()), 6)
    out['n_species'] = len(species)
    phases = {'organic': [], 'aqueous': []}
    for s, amt in species.items():
        ch, ion = charge_at(mols[s], pH)
        phases['aqueous' if (ion or Crippen.MolLogP(mols[s]) < 0) else 'organic'].append((s, amt, ch))
    def isprod(s):
        return s != sm and Chem.MolToSmiles(Chem.MolFromSmiles(s), isomericSmiles=False) != sm_flat
    def prodamt(ph):
        return sum(a for s, a, c in phases[ph] if isprod(s))
    po, pa = prodamt('organic'), prodamt('aqueous')
    if po == 0 and pa == 0:
        print(json.dumps(_with_isolation(out, {}, "none", None, pH))); return
    ph = 'organic' if po >= pa else 'aqueous'
    prods = sorted([x for x in phases[ph] if isprod(x[0])], key=lambda x: (-round(x[1], 7), x[0]))[:int(P['max_products'])]
    tot = sum(a for s, a, c in phases[ph])
    top, tamt, tch = prods[0]
    m = Chem.MolFromSmiles(top)
    out.update(phase=ph, products=[p[0] for p in prods], n_products=len(prods), selected=[top],
               yield_pct=round(tamt, 6), purity_pct=round(100 * tamt / tot, 6), charge=int(tch),
               mw=round(Descriptors.MolWt(m), 3), logp=round(Crippen.MolLogP(m), 4),
               tpsa=round(rdMolDescriptors.CalcTPSA(m, includeSandP=True), 2), hba=Lipinski.NOCount(m),
               hbd=Lipinski.NHOHCount(m), qed=round(QED.qed(m), 6))
    fp = AllChem.GetMorganFingerprintAsBitVect(m, int(P['fingerprint_radius']), nBits=1024)
    out['fp_on'] = fp.GetNumOnBits()
    _with_isolation(out, species, ph, top, pH)
    print(json.dumps(out))


TRANS = {
 'boc_esterify_deprotect': ['boc_protection', 'esterification', 'boc_deprotection'],
 'boc_couple_deprotect': ['boc_protection', 'amide_coupling', 'boc_deprotection'],
 'couple_reduce': ['amide_coupling', 'lialh4_reduction'],
 'nitro_reduce_acetylate': ['nitro_reduction', 'acetylation'],
 'hydrolyse_couple': ['ester_hydrolysis', 'amide_coupling'],
 'oxidise_aminate': ['alcohol_oxidation', 'reductive_amination'],
 'boc_oxidise_deprotect': ['boc_protection', 'alcohol_oxidation', 'boc_deprotection'],
 'tbs_oxidise_deprotect': ['tbs_protection', 'alcohol_oxidation', 'tbs_deprotection'],
 'esterify_reduce': ['esterification', 'lialh4_reduction'],
 'acetylate_brominate': ['acetylation', 'aromatic_bromination'],
 'dehalogenate_esterify': ['dehalogenation', 'esterification'],
 'methylate_hydrolyse': ['eschweiler_clarke', 'ester_hydrolysis'],
 'tbs_acetylate_deprotect': ['tbs_protection', 'acetylation', 'tbs_deprotection'],
}

if __name__ == '__main__':
    _raw = sys.stdin.read()
    try:
        sys.stdin = __import__('io').StringIO(_raw)
        main()
    except Exception as _e:
        print(repr(_e), file=sys.stderr)
        print(json.dumps(dict(charge=0, crude_pct=100.0, fp_on=0, hba=0, hbd=0, logp=0.0, mw=0.0, n_products=0,
                              n_species=1, phase='none', products=[], purity_pct=0.0, qed=0.0, selected=[], tpsa=0.0, yield_pct=0.0, isolated_pct=0.0, isolated_purity_pct=0.0, kept_pct=0.0)))
