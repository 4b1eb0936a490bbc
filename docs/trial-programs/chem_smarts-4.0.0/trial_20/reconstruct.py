# Independent program: the final workspace of agent trial 20 of chem_smarts 4.0.0 at evidence level
# `outputs` with the cover (docs/trials.md), kept as the agent wrote it.
import sys, json, math, itertools
from rdkit import Chem, RDLogger
from rdkit.Chem import AllChem, Descriptors, Crippen, rdMolDescriptors, QED
from rdkit.Chem.MolStandardize import rdMolStandardize
from rdkit.Chem.EnumerateStereoisomers import EnumerateStereoisomers, StereoEnumerationOptions
RDLogger.DisableLog('rdApp.*')

P = {0: 0.6, 25: 0.8, 80: 0.95}
TBU = 'C(C)(C)C'
# transformation -> list of (reaction smarts, min temperature)
AMINE = '[NX3;H2,H1;!$(N-C=[O,S,N]);!$(N-S(=O)=O);!$(N-a);!$(N-N);!$(N-O);!$(N-C=C)'
RXN = {
    'boc_protection': [(AMINE + ';H2:1]>>[N:1]C(=O)OC(C)(C)C', 0),
                       (AMINE + ';H1:1]>>[N:1]C(=O)OC(C)(C)C', 1),
                       ('[NX3;H2,H1;$(N-a);!$(N-C=[O,S,N]);!$(N-S(=O)=O);!$(N[a;r5])]>>[N:1]C(=O)OC(C)(C)C'.replace('[NX3', '[NX3').replace(')]>>', '):1]>>'), 2)],
    'boc_deprotection': [('[N:1]C(=O)OC(C)(C)C>>[N:1]', 0)],
    'tbs_protection': [('[OX2H;$(O[CH2]);!$(OC=O):1]>>[O:1][Si](C)(C)C(C)(C)C', 0),
                       ('[OX2H;$(Oc);!$(O[#6]=,:[#7,#8]);!$(Oc:n):1]>>[O:1][Si](C)(C)C(C)(C)C', 1),
                       ('[OX2H;$(O[CX4;H1]);!$(OC=O):1]>>[O:1][Si](C)(C)C(C)(C)C', 2)],
    'tbs_deprotection': [('[O:1][Si](C)(C)C(C)(C)C>>[O:1]', 0)],
    'esterification': [('[CX3:1](=[O:2])[OX2H1]>>[C:1](=[O:2])OC', 1)],
    'amide_coupling': [('[CX3:1](=[O:2])[OX2H1]>>[C:1](=[O:2])NCc1ccccc1', 0)],
    'lialh4_reduction': [('[CX3;$(C[#6,#1]):1](=O)[OX2H1]>>[CH2:1]O', 1),
                         ('([CX3;$(C[#6,#1]):1](=O)[OX2:2][#6:3])>>([CH2:1]O.[O:2][#6:3])', 1),
                         ('[CX3;!$(C(N)(N)=O);!$(C(O)(N)=O);!$(C(=O)O[#6]);!$(C[N+]);$(C[#6,#1]):1](=O)[NX3:2]>>[CH2:1][N:2]', 2)],
    'nitro_reduction': [('[N+:1](=O)[O-]>>[N+0:1]', 1), ('[c:1][Br,I]>>[cH1:1]', 2)],
    'acetylation': [(AMINE + ':1]>>[N:1]C(C)=O', 0),
                    ('[NX3;H2,H1;!$(N-C=[O,S,N]);!$(N-S(=O)=O);$(N-a):1]>>[N:1]C(C)=O', 1),
                    ('[OX2H;$(O[CH2]);!$(OC=O):1]>>[O:1]C(C)=O', 1),
                    ('[OX2H;$(O[CX4;H1,H0]);!$(OC=O):1]>>[O:1]C(C)=O', 2),
                    ('[OX2H;$(Oc);!$(Oc:n):1]>>[O:1]C(C)=O', 2)],
    'ester_hydrolysis': [('([CX3:1](=[O:2])[OX2:3][CX4:4])>>([C:1](=[O:2])O.[O:3][C:4])', 1),
                         ('([CX3:1](=[O:2])[OX2:3][c:4])>>([C:1](=[O:2])O.[O:3][c:4])', 0)],
    'alcohol_oxidation': [('[OX2H:1][CH2;!$(C=O);!$(C[OX2][CX4])&!$(C[CH1]([OH])[CH2][OH]):2]>>[O:1]=[CH1:2]', 0),
                          ('[OX2H:1][CH1;!$(C=O);!$(Ca):2]>>[O:1]=[CH0:2]', 1),
                          ('[OX2H:1][CH1;!$(C=O);$(Ca):2]>>[O:1]=[CH0:2]', 1),
                          ('[CX3H1:1](=[O:2])[#6:3]>>[CH0:1](=[O:2])(O)[#6:3]', 2)],
    'reductive_amination': [('[CX3H1:1]=O>>[CH2:1]N1CCOCC1', 0), ('[CX3H0;$(C([#6])[#6]);!$(C(=O)[O,N]):1]=O>>[CH1:1]N1CCOCC1', 1)],
    'eschweiler_clarke': [(AMINE + ';H2:1]>>[N:1](C)C', 1), (AMINE + ';H1:1]>>[N:1]C', 2)],
    'bromination': [('[cH;$(c1:c:c:c([OH,NH2,$(NC=O),$(O[CX4]),$(O[Si])]):c:c1):1]>>[c:1]Br', 0),
                    ('[cH;$(c:c[OH,NH2,$(NC=O),$(O[CX4])]);!$(c1:c:c:c([OH,NH2,$(NC=O),$(O[CX4])]):c:c1):1]>>[c:1]Br', 1)],
    'dehalogenation': [('[c:1][Br,I]>>[cH1:1]', 1), ('[c:1][Cl]>>[cH1:1]', 2)],
}
ALIASES = {}


def canon(m):
    return Chem.MolToSmiles(m)


def prep_parent(smi):
    m = Chem.MolFromSmiles(smi)
    frags = sorted(Chem.GetMolFrags(m, asMols=True), key=lambda f: (-f.GetNumHeavyAtoms(), Chem.MolToSmiles(f)))
    m = frags[0]
    try:
        m = rdMolStandardize.Uncharger().uncharge(m)
    except Exception:
        pass
    rw = Chem.RWMol(m)
    for a in rw.GetAtoms():
        if a.GetSymbol() == 'O' and a.GetFormalCharge() == -1 and not any(n.GetFormalCharge() > 0 for n in a.GetNeighbors()):
            a.SetFormalCharge(0); a.SetNumExplicitHs(a.GetNumExplicitHs() + 1)
    m = rw.GetMol()
    Chem.SanitizeMol(m)
    try:
        t = rdMolStandardize.TautomerEnumerator().Canonicalize(m)
        a = Chem.Mol(m); Chem.RemoveStereochemistry(a)
        b = Chem.Mol(t); Chem.RemoveStereochemistry(b)
        if Chem.MolToSmiles(a) != Chem.MolToSmiles(b):
            m = t
    except Exception:
        pass
    return m


PL = [0.6, 0.8, 0.95]
TI = {0: 0, 25: 1, 80: 2}


def get_rxns(name, T):
    out = []
    ti = TI.get(T, 1)
    for sm, off in RXN.get(name, []):
        L = ti - off
        if L >= 0:
            r = AllChem.ReactionFromSmarts(sm)
            r.Initialize()
            out.append((r, PL[L]))
    return out


def main_frag_products(prods, small=5):
    """split products into main molecule list (by-products with < small heavy atoms removed)"""
    res = []
    for p in prods:
        try:
            Chem.SanitizeMol(p)
        except Exception:
            return None
        smi = Chem.MolToSmiles(p)
        for f in smi.split('.'):
            fm = Chem.MolFromSmiles(f)
            if fm is None:
                continue
            if fm.GetNumHeavyAtoms() < small:
                continue
            res.append(fm)
    return res


BR_PARA = Chem.MolFromSmarts('[cH;$(c1:c:c:c([OH,NH2,$(NC=O),$(O[CX4]),$(O[Si])]):c:c1)]')


def sites_of(mol, rxns):
    res = []
    has_para = mol.HasSubstructMatch(BR_PARA)
    seen = set()
    for ri, (r, p) in enumerate(rxns):
        patt = r.GetReactantTemplate(0)
        if has_para and r.GetNumProductTemplates() == 1 and 'Br' in Chem.MolToSmarts(r.GetProductTemplate(0)) and ri > 0 and 'Br' in Chem.MolToSmarts(rxns[0][0].GetProductTemplate(0)):
            continue
        for mt in mol.GetSubstructMatches(patt):
            key = mt[0]
            if key in seen:
                continue
            seen.add(key)
            res.append((ri, key, p))
    return res


def choose_sets(st, eq):
    n = len(st)
    if eq >= n:
        return [(list(range(n)), 1.0)]
    groups = []
    for i, x in enumerate(st):
        if groups and st[groups[-1][0]][0] == x[0]:
            groups[-1].append(i)
        else:
            groups.append([i])
    fixed = []
    slots = eq
    for g in groups:
        if len(g) <= slots:
            fixed += g; slots -= len(g)
            if slots == 0:
                return [(fixed, 1.0)]
        else:
            combs = list(itertools.combinations(g, slots))
            return [(fixed + list(c), 1.0 / len(combs)) for c in combs]
    return [(fixed, 1.0)]


def apply_site(mol, rxn, atom):
    """apply rxn at site whose first template atom is `atom`; returns (main, sides, mapping old->new idx)"""
    patt = rxn.GetReactantTemplate(0)
    for prods in rxn.RunReactants((mol,)):
        ok = False
        plist = []
        for pm in prods:
            try:
                Chem.SanitizeMol(pm)
            except Exception:
                plist = None
                break
            plist.append(pm)
        if plist is None:
            continue
        # identify which reactant atom was the key: mapped atoms retain react_atom_idx
        # take first product, find atoms
        keyhit = False
        for pm in plist:
            for at in pm.GetAtoms():
                if at.HasProp('react_atom_idx') and at.GetIntProp('react_atom_idx') == atom and at.HasProp('old_mapno') and at.GetIntProp('old_mapno') == 1:
                    keyhit = True
        if not keyhit:
            continue
        plist.sort(key=lambda x: -x.GetNumHeavyAtoms())
        main = plist[0]
        mapping = {}
        for at in main.GetAtoms():
            if at.HasProp('react_atom_idx'):
                mapping[at.GetIntProp('react_atom_idx')] = at.GetIdx()
        sides = [x for x in plist[1:]]
        return main, sides, mapping
    return None


def frag_smiles(m, small=5):
    out = []
    for f in Chem.MolToSmiles(m).split('.'):
        fm = Chem.MolFromSmiles(f)
        if fm is not None and fm.GetNumHeavyAtoms() >= small:
            out.append(Chem.MolToSmiles(fm))
    return out


FREE_AMINE = Chem.MolFromSmarts(AMINE + ']')


def run_step(pool, rxns, p_unused, eq, stereo, maxn=8, kill_amine=False):
    new = {}

    def add(smi, a):
        new[smi] = new.get(smi, 0) + a

    for smi, amt in pool.items():
        mol = Chem.MolFromSmiles(smi)
        if kill_amine and mol.HasSubstructMatch(FREE_AMINE):
            continue
        st = sites_of(mol, rxns) if rxns else []
        n = len(st)
        if n == 0:
            add(smi, amt)
            continue
        st = st[:maxn]
        n = len(st)
        subsets = []
        for sel, wsel in choose_sets(st, eq):
            m_ = len(sel)
            ps_ = sorted((st[i][2] for i in sel), reverse=True)
            for k in range(0, m_ + 1):
                pk = 1.0
                for j in range(k):
                    pk *= ps_[j]
                if k < m_:
                    pk *= (1 - ps_[k])
                combs = list(itertools.combinations(sel, k))
                ws = []
                for sub in combs:
                    w = 1.0
                    for i in sub:
                        w *= st[i][2]
                    ws.append(w)
                tw = sum(ws)
                for sub, w in zip(combs, ws):
                    subsets.append((sub, wsel * pk * w / tw))
        for sub, pr in subsets:
            if pr <= 0:
                continue
            if not sub:
                add(smi, amt * pr)
                continue
            cur = Chem.Mol(mol)
            idxmap = {i: i for i in range(mol.GetNumAtoms())}
            sides = []
            ok = True
            for i in sub:
                ri, key, _ = st[i]
                if key not in idxmap:
                    ok = False; break
                r = apply_site(cur, rxns[ri][0], idxmap[key])
                if r is None:
                    ok = False; break
                main, sd, mapping = r
                sides += sd
                idxmap = {o: mapping[c] for o, c in idxmap.items() if c in mapping}
                cur = main
            if not ok:
                add(smi, amt * pr)
                continue
            outs = frag_smiles(cur) + [s2 for sdm in sides for s2 in frag_smiles(sdm)]
            for o in outs:
                for form in expand(o, stereo):
                    add(form[0], amt * pr * form[1])
    return new


_TE = rdMolStandardize.TautomerEnumerator()


def taut(m):
    try:
        t = _TE.Canonicalize(m)
        a = Chem.Mol(m); Chem.RemoveStereochemistry(a)
        b = Chem.Mol(t); Chem.RemoveStereochemistry(b)
        if Chem.MolToSmiles(a) != Chem.MolToSmiles(b):
            return t
    except Exception:
        pass
    return m


def expand(smi, stereo):
    m = taut(Chem.MolFromSmiles(smi))
    if stereo == 'strip':
        Chem.RemoveStereochemistry(m)
        return [(Chem.MolToSmiles(m), 1.0)]
    if stereo == 'enumerate':
        opts = StereoEnumerationOptions(onlyUnassigned=True, unique=True)
        isos = list(EnumerateStereoisomers(m, options=opts))
        ss = sorted(set(Chem.MolToSmiles(x) for x in isos))
        if not ss:
            ss = [Chem.MolToSmiles(m)]
        return [(s, 1.0 / len(ss)) for s in ss]
    return [(Chem.MolToSmiles(m), 1.0)]


# ---------------- ionisation ----------------
ACIDS = [('[CX3](=O)[OX2H1]', 3.8), ('[SX4](=O)(=O)[NH2]', 9.5), ('[SX4](=O)(=O)[NH1]a', 6.5),
         ('[OX2H1]c', 9.5), ('[SX2H1]', 10.5)]
BASES = [('[NX3;R;$(N1CCOCC1)]', 6.5), ('[NX3;H2,H1,H0;!$(N-C=[O,S,N]);!$(N-S);!$(N-a);!$(N-[CX3]=[CX3]);!$(N#*);!$(N=*);!$(N-N);!$(N-O);!$([N+])]', 9.8),
         ('[NX3;H2,H1;!$(N-C=[O,S,N]);!$(N-S);$(N-a);!$(N(-a)-a)]', 4.6),
         ('[nX2;r6]', 5.0)]
_AP = [(Chem.MolFromSmarts(s), k) for s, k in ACIDS]
_BP = [(Chem.MolFromSmarts(s), k) for s, k in BASES]


def groups(m):
    acids, bases = [], []
    used = set()
    for pat, k in _AP:
        for mt in m.GetSubstructMatches(pat):
            if mt[-1] in used:
                continue
            used.add(mt[-1]); acids.append(k)
    for pat, k in _BP:
        for mt in m.GetSubstructMatches(pat):
            if mt[0] in used:
                continue
            used.add(mt[0]); bases.append(k)
    perm = sum(1 for a in m.GetAtoms() if a.GetFormalCharge() > 0 and a.GetTotalNumHs() == 0 and a.GetSymbol() == 'N' and not any(n.GetFormalCharge() < 0 for n in a.GetNeighbors()))
    return acids, bases, perm


def charge_at(m, pH):
    acids, bases, perm = groups(m)
    c = perm - sum(1 for k in acids if pH > k) + sum(1 for k in bases if pH < k)
    return c


def neutral_frac(m, pH):
    acids, bases, perm = groups(m)
    if perm:
        return 0.0
    f = 1.0
    for k in acids:
        f *= 1.0 / (1.0 + 10 ** (pH - k))
    for k in bases:
        f *= 1.0 / (1.0 + 10 ** (k - pH))
    return f


def logD(m, pH):
    nf = neutral_frac(m, pH)
    lp = Crippen.MolLogP(m)
    if nf <= 0:
        return -99.0
    return lp + math.log10(nf)


def main():
    sc = json.load(sys.stdin)
    pr = sc['parameters']
    route, rec = [x.strip() for x in pr['case'].split(':', 1)]
    T = int(pr['temperature']); eq = int(pr['equivalents']); mp = int(pr['max_products'])
    stereo = pr['stereochemistry']; pH = float(pr['workup_ph']); rad = int(pr['fingerprint_radius'])
    steps = route_steps(route)
    m0 = prep_parent(rec)
    if stereo == 'strip':
        Chem.RemoveStereochemistry(m0)
    sm = Chem.MolToSmiles(m0)
    pool = {sm: 100.0}
    p = P.get(T, 0.8)
    for si, st in enumerate(steps):
        rx = get_rxns(st, T)
        new = run_step(pool, rx, p, eq, stereo, kill_amine=st in ('amide_coupling', 'alcohol_oxidation'))
        items = sorted(new.items(), key=lambda kv: (-round(kv[1], 6), -Descriptors.MolWt(Chem.MolFromSmiles(kv[0])), kv[0]))
        if si < len(steps) - 1:
            items = items[:mp]
        pool = {k: v for k, v in items if v > 1e-9}
    crude = sum(pool.values())
    allp = sorted(((k, v) for k, v in pool.items() if k != sm), key=lambda kv: (-round(kv[1], 6), -Descriptors.MolWt(Chem.MolFromSmiles(kv[0])), kv[0]))
    mols = {k: Chem.MolFromSmiles(k) for k in pool}
    ld = {k: logD(mols[k], pH) for k in pool}
    isorg = {k: (charge_at(mols[k], pH) == 0 and ld[k] > -1.0) for k in pool}
    org_prod = sum(v for k, v in allp if isorg[k])
    aq_prod = sum(v for k, v in allp if not isorg[k])
    phase = 'organic' if org_prod >= aq_prod else 'aqueous'
    prods = dict([(k, v) for k, v in allp if isorg[k] == (phase == 'organic')][:mp])
    out = {'charge': 0, 'crude_pct': round(crude, 6), 'fp_on': 0, 'hba': 0, 'hbd': 0, 'isolated_pct': 0.0,
           'isolated_purity_pct': 0.0, 'kept_pct': 0.0, 'logp': 0.0, 'mw': 0.0, 'n_products': len(prods),
           'n_species': len(pool), 'phase': 'none', 'products': [], 'purity_pct': 0.0, 'qed': 0.0,
           'selected': [], 'tpsa': 0.0, 'yield_pct': 0.0}
    if not prods:
        print(json.dumps(out)); return
    top = list(prods)[0]
    tm = Chem.MolFromSmiles(top)
    inphase = [k for k in pool if isorg[k] == (phase == 'organic')]
    tot = sum(pool[k] for k in inphase)
    out['phase'] = phase
    out['purity_pct'] = round(100.0 * prods[top] / tot, 6) if tot > 0 else 0.0
    # isolation
    kept = {}
    for k, v in pool.items():
        D = 10 ** ld[k] if ld[k] > -50 else 0.0
        fa = (1.0 / (1.0 + D)) ** 3
        kept[k] = v * (1 - fa) if phase == 'organic' else v * fa
    ktot = sum(kept.values())
    out['isolated_pct'] = round(kept[top], 6)
    out['kept_pct'] = round(ktot, 6)
    out['isolated_purity_pct'] = round(100 * kept[top] / ktot, 6) if ktot > 0 else 0.0
    out['yield_pct'] = round(prods[top], 6)
    out['products'] = [top] + sorted(k for k in prods if k != top)
    out['selected'] = [top]
    out['charge'] = charge_at(tm, pH)
    out['mw'] = round(Descriptors.MolWt(tm), 3)
    out['logp'] = round(Crippen.MolLogP(tm), 5)
    out['tpsa'] = round(rdMolDescriptors.CalcTPSA(tm, includeSandP=True), 2)
    out['hba'] = rdMolDescriptors.CalcNumLipinskiHBA(tm)
    out['hbd'] = rdMolDescriptors.CalcNumLipinskiHBD(tm)
    out['qed'] = round(QED.qed(tm), 6)
    from rdkit.Chem import rdFingerprintGenerator as G
    fp = G.GetMorganGenerator(radius=rad, fpSize=1024).GetFingerprint(tm)
    out['fp_on'] = fp.GetNumOnBits()
    print(json.dumps(out))


def route_steps(route):
    # map route name to transformation names
    parts = route.split('_')
    names = []
    for i, ptn in enumerate(parts):
        first = i == 0
        if ptn == 'boc':
            names.append('boc_protection' if first else 'boc_deprotection')
        elif ptn == 'tbs':
            names.append('tbs_protection' if first else 'tbs_deprotection')
        elif ptn == 'deprotect':
            names.append('boc_deprotection' if parts[0] == 'boc' else 'tbs_deprotection')
        elif ptn == 'esterify':
            names.append('esterification')
        elif ptn == 'couple':
            names.append('amide_coupling')
        elif ptn == 'reduce':
            names.append('nitro_reduction' if (i > 0 and parts[i - 1] == 'nitro') else 'lialh4_reduction')
        elif ptn == 'nitro':
            continue
        elif ptn == 'acetylate':
            names.append('acetylation')
        elif ptn == 'hydrolyse':
            names.append('ester_hydrolysis')
        elif ptn == 'oxidise':
            names.append('alcohol_oxidation')
        elif ptn == 'aminate':
            names.append('reductive_amination')
        elif ptn == 'methylate':
            names.append('eschweiler_clarke')
        elif ptn == 'brominate':
            names.append('bromination')
        elif ptn == 'dehalogenate':
            names.append('dehalogenation')
    return names


if __name__ == '__main__':
    try:
        main()
    except Exception as e:
        import traceback; traceback.print_exc()
        print(json.dumps({'charge': 0, 'crude_pct': 100.0, 'fp_on': 0, 'hba': 0, 'hbd': 0, 'isolated_pct': 0.0,
                          'isolated_purity_pct': 0.0, 'kept_pct': 0.0, 'logp': 0.0, 'mw': 0.0, 'n_products': 0,
                          'n_species': 1, 'phase': 'none', 'products': [], 'purity_pct': 0.0, 'qed': 0.0,
                          'selected': [], 'tpsa': 0.0, 'yield_pct': 0.0}))
