import sys, json, math
from rdkit import Chem, RDLogger
from rdkit.Chem import AllChem, Descriptors, Crippen, rdMolDescriptors, QED
from rdkit.Chem.MolStandardize import rdMolStandardize
from rdkit.Chem.EnumerateStereoisomers import EnumerateStereoisomers, StereoEnumerationOptions
RDLogger.DisableLog('rdApp.*')

TF = {0: 0.5625, 25: 1.0, 80: 1.7778}

AMP = '[NX3;H2;!$(N[C,S,P]=[O,S,N]);!$(N-a);!$(N-[N,O]):1]'
AMS = '[NX3;H1;!$(N[C,S,P]=[O,S,N]);!$(N-a);!$(N-[N,O,Si]):1]'
ANI = '[NX3;H1,H2;!$(N[C,S]=[O,S,N]);$(N-c);!$(N:a):1]'
# (reactant smarts, product smarts, rate at 25C, min temperature)
RX = {
    'boc_protection': [
        (AMP, '[N:1]C(=O)OC(C)(C)C', 1.0667, 0),
        (AMS, '[N:1]C(=O)OC(C)(C)C', 0.6, 25),
        (ANI, '[N:1]C(=O)OC(C)(C)C', 0.6, 80),
    ],
    'boc_deprotection': [
        ('[N:1]C(=O)OC(C)(C)C', '[N:1]', 1.0667, 25),
    ],
    'tbs_protection': [
        ('[OX2H;$(O[CH2]);!$(OC=O):1]', '[O:1][Si](C)(C)C(C)(C)C', 1.0667, 0),
        ('[OX2H;$(O[CH1,CH0;!$(C=O)]);!$(Oc):1]', '[O:1][Si](C)(C)C(C)(C)C', 0.2, 80),
        ('[OX2H;$(Oc):1]', '[O:1][Si](C)(C)C(C)(C)C', 0.45, 25),
    ],
    'tbs_deprotection': [
        ('[O:1][Si](C)(C)C(C)(C)C', '[O:1]', 1.0667, 25),
    ],
    'esterification': [
        ('[CX3:1](=[O:2])[OX2H1]', '[C:1](=[O:2])OC', 0.6, 25),
    ],
    'amide_coupling': [
        ('[CX3:1](=[O:2])[OX2H1]', '[C:1](=[O:2])NCc1ccccc1', 1.0667, 0),
    ],
    'lialh4_reduction': [
        ('[CX3;!$(C-[OH]);!$(C(=O)O[#6]):1](=O)[NX3;H1:2]', '[CH2:1][N:2]', 0.6, 80),
        ('[CX3:1](=O)[OX2H1]', '[CH2:1]O', 0.6, 25),
        ('[CX3:1](=O)[OX2:3][#6:4]', '[CH2:1]O.[O:3][#6:4]', 0.45, 25),
        ('[CX3;H1:1]=O', '[CH2:1]O', 1.0667, 0),
    ],
    'nitro_reduction': [
        ('[N+:1](=O)[O-]', '[N+0:1]', 0.6, 25),
        ('[c:1]Br', '[cH:1]', 0.3375, 80),
        ('[c:1]I', '[cH:1]', 0.3375, 80),
    ],
    'acetylation': [
        (AMP, '[N:1]C(C)=O', 2.4, 0),
        (AMS, '[N:1]C(C)=O', 0.8, 0),
        (ANI, '[N:1]C(C)=O', 0.6, 25),
        ('[OX2H;$(O[CH2]);!$(OC=O):1]', '[O:1]C(C)=O', 0.6, 25),
        ('[OX2H;$(Oc):1]', '[O:1]C(C)=O', 0.45, 80),
        ('[OX2H;$(O[CH1,CH0]);!$(OC=O);!$(Oc):1]', '[O:1]C(C)=O', 0.2, 80),
    ],
    'ester_hydrolysis': [
        ('[CX3:1](=[O:2])[OX2:3][C:4]', '[C:1](=[O:2])O.[O:3][C:4]', 0.45, 25),
        ('[CX3:1](=[O:2])[OX2:3][c:4]', '[C:1](=[O:2])O.[O:3][c:4]', 1.6, 0),
    ],
    'alcohol_oxidation': [
        ('[CH2:1][OH]', '[CH1:1]=O', 1.0667, 0),
        ('[CH1;!$(C=*):1][OH]', '[C:1]=O', 0.45, 25),
        ('[CH1;!$(C-[O,N]):1](=O)', '[C:1](=O)O', 0.4, 80),
    ],
    'reductive_amination': [
        ('[CX3;H1;!$(C-[O,N,S]):1]=O', '[C:1]N1CCOCC1', 1.0667, 0),
        ('[CX3;H0;!$(C-[O,N,S]);!$(C=C):1]=O', '[C:1]N1CCOCC1', 0.9, 25),
    ],
    'eschweiler_clarke': [
        (AMP, '[N:1](C)C', 0.6, 25),
        (AMS, '[N:1]C', 0.3375, 80),
    ],
    'bromination': [
        ('[cH;r6;$(c1ccccc1);$(c:c-[OH,NH2,NH1,OX2]),$(c:c:c:c-[OH,NH2,NH1,OX2]):1]', '[c:1]Br', 0.6, 25),
    ],
    'dehalogenation': [
        ('[c:1][Cl]', '[cH:1]', 0.3, 80),
        ('[c:1][Br,I]', '[cH:1]', 1.2, 25),
    ],
}
_RXN = {}


def rxns(name):
    if name not in _RXN:
        lst = []
        for a, b, k, tmin in RX.get(name, []):
            r = AllChem.ReactionFromSmarts(a + '>>' + b)
            r.Initialize()
            lst.append((r, Chem.MolFromSmarts(a), k, tmin))
        _RXN[name] = lst
    return _RXN[name]


def canon(m):
    try:
        return Chem.MolToSmiles(m)
    except Exception:
        return None


def prep(record, stereo):
    m = Chem.MolFromSmiles(record)
    frags = Chem.GetMolFrags(m, asMols=True)
    m = max(frags, key=lambda x: (x.GetNumHeavyAtoms(), Chem.MolToSmiles(x)))
    try:
        m = rdMolStandardize.Uncharger().uncharge(m)
    except Exception:
        pass
    rw = Chem.RWMol(m)
    for a in rw.GetAtoms():
        if a.GetFormalCharge() == -1 and a.GetSymbol() == 'O' and not any(n.GetFormalCharge() > 0 and n.GetSymbol() == 'N' and n.GetDegree() == 3 and any(x.GetSymbol() == 'O' for x in n.GetNeighbors() if x.GetIdx() != a.GetIdx()) for n in a.GetNeighbors()):
            a.SetFormalCharge(0)
            a.SetNumExplicitHs(a.GetNumExplicitHs() + 1)
    m = rw.GetMol()
    Chem.SanitizeMol(m)
    if USE_TAUT:
        try:
            m2 = rdMolStandardize.TautomerEnumerator().Canonicalize(m)
            if m2 is not None and Chem.MolToSmiles(m2, isomericSmiles=False) != Chem.MolToSmiles(m, isomericSmiles=False):
                m = m2
        except Exception:
            pass
    if stereo == 'strip':
        Chem.RemoveStereochemistry(m)
    return Chem.MolToSmiles(m)


USE_TAUT = True
ORG_RULE = lambda logd, logp: True


def crowd(m, idx):
    a = m.GetAtomWithIdx(idx)
    n = 0
    for nb in a.GetNeighbors():
        n += max(0, nb.GetDegree() - 2)
    return 1.0 / (1.0 + 0.25 * n)


def sites(smi, step, T):
    """list of (product_smiles_list, rate)"""
    m = Chem.MolFromSmiles(smi)
    if m is None:
        return []
    out = []
    for r, patt, k, tmin in rxns(step):
        if T < tmin:
            continue
        matches = m.GetSubstructMatches(patt)
        if not matches:
            continue
        prods = r.RunReactants((m,))
        seen = {}
        for ps in prods:
            frs = []
            ok = True
            for x in ps:
                try:
                    Chem.SanitizeMol(x)
                    sx = Chem.MolToSmiles(Chem.MolFromSmiles(Chem.MolToSmiles(x)))
                except Exception:
                    ok = False
                    break
                frs.append((x.GetNumHeavyAtoms(), sx))
            if not ok:
                continue
            frs.sort(reverse=True)
            key = tuple([frs[0][1]] + [f for n, f in frs[1:] if n >= 5])
            seen[key] = seen.get(key, 0) + 1
        if not seen:
            continue
        tot = sum(seen.values())
        cr = 1.0
        kk = k * TF[T] * cr
        nsite = len(matches)
        for s, c in seen.items():
            out.append((s, kk * nsite * c / tot))
    return out


def expand(smi, stereo):
    if stereo != 'enumerate':
        return [smi]
    m = Chem.MolFromSmiles(smi)
    try:
        opts = StereoEnumerationOptions(onlyUnassigned=True, unique=True)
        isos = [Chem.MolToSmiles(x) for x in EnumerateStereoisomers(m, options=opts)]
        isos = sorted(set(isos))
        return isos or [smi]
    except Exception:
        return [smi]


def run_step(mix, step, T, eq, stereo):
    cache = {}
    reagent = 100.0 * eq
    for rnd in range(eq):
        new = {}
        demand = []
        for s, a in mix.items():
            if s not in cache:
                cache[s] = sites(s, step, T)
            st = cache[s]
            ktot = sum(k for _, k in st)
            if ktot <= 0 or a <= 0:
                new[s] = new.get(s, 0) + a
                continue
            frac = 1 - math.exp(-ktot)
            demand.append((s, a, frac, st, ktot))
        need = sum(a * f for _, a, f, _, _ in demand)
        scale = 1.0
        if need > reagent and need > 0:
            scale = reagent / need
        for s, a, f, st, ktot in demand:
            r = a * f * scale
            reagent -= r
            new[s] = new.get(s, 0) + a - r
            for ps, k in st:
                for p in ps:
                    isos = expand(p, stereo)
                    for i in isos:
                        new[i] = new.get(i, 0) + r * k / ktot / len(isos)
        mix = {s: a for s, a in new.items() if a > 1e-9}
    return mix


# ---------- ionisation ----------
ACIDS = [
    ('[CX3](=O)[OX2H1]', 3.5),
    ('[SX4](=O)(=O)[NH2]', 9.9),
    ('[SX4](=O)(=O)[NH1]a', 6.5),
    ('[OH]c', 9.5),
    ('[nH]1nnnc1', 4.9),
]
BASES = [
    ('[NX3;+0;R]1CCOCC1', 6.5),
    ('[NX3;+0;H2,H1,H0;!$(N[C,S,P]=[O,S,N]);!$(N-a);!$(N-[C,N]=*);!$(N#*);!$(N-O);!$(N[Si])]', 9.8),
    ('[NX3;+0;H2,H1,H0;!$(N[C,S]=[O,S,N]);$(N-c);!$(N(-a)-a)]', 4.6),
    ('[nX2;r6]', 5.0),
]
_P = {}


def patt(s):
    if s not in _P:
        _P[s] = Chem.MolFromSmarts(s)
    return _P[s]


def groups(m):
    acids, bases = [], []
    used = set()
    for s, pk in ACIDS:
        for mt in m.GetSubstructMatches(patt(s)):
            if mt[0] in used:
                continue
            used.add(mt[0])
            acids.append(pk)
    for s, pk in BASES:
        for mt in m.GetSubstructMatches(patt(s)):
            if mt[0] in used:
                continue
            used.add(mt[0])
            bases.append(pk)
    perm = sum(a.GetFormalCharge() for a in m.GetAtoms()
               if a.GetFormalCharge() > 0 and a.GetSymbol() == 'N' and a.GetTotalNumHs() == 0
               and not any(nb.GetFormalCharge() < 0 for nb in a.GetNeighbors()))
    return acids, bases, perm


def ion(smi, ph):
    m = Chem.MolFromSmiles(smi)
    acids, bases, perm = groups(m)
    ch = perm
    for pk in acids:
        if ph > pk:
            ch -= 1
    for pk in bases:
        if ph < pk:
            ch += 1
    # neutral fraction
    lf = 0.0
    for pk in acids:
        lf += math.log10(1 + 10 ** (ph - pk))
    for pk in bases:
        lf += math.log10(1 + 10 ** (pk - ph))
    logp = Crippen.MolLogP(m)
    if perm:
        logd = -10.0
    else:
        logd = logp - lf
    return ch, logd


def main():
    sc = json.load(sys.stdin)
    p = sc['parameters']
    route, record = p['case'].split(':', 1)
    record = record.strip()
    route = route.strip()
    eq = int(p['equivalents'])
    mp = int(p['max_products'])
    stereo = p['stereochemistry']
    T = int(p['temperature'])
    ph = float(p['workup_ph'])
    steps_map = {
        'boc_esterify_deprotect': ['boc_protection', 'esterification', 'boc_deprotection'],
        'boc_couple_deprotect': ['boc_protection', 'amide_coupling', 'boc_deprotection'],
        'couple_reduce': ['amide_coupling', 'lialh4_reduction'],
        'nitro_reduce_acetylate': ['nitro_reduction', 'acetylation'],
        'hydrolyse_couple': ['ester_hydrolysis', 'amide_coupling'],
        'oxidise_aminate': ['alcohol_oxidation', 'reductive_amination'],
        'boc_oxidise_deprotect': ['boc_protection', 'alcohol_oxidation', 'boc_deprotection'],
        'tbs_oxidise_deprotect': ['tbs_protection', 'alcohol_oxidation', 'tbs_deprotection'],
        'esterify_reduce': ['esterification', 'lialh4_reduction'],
        'acetylate_brominate': ['acetylation', 'bromination'],
        'dehalogenate_esterify': ['dehalogenation', 'esterification'],
        'methylate_hydrolyse': ['eschweiler_clarke', 'ester_hydrolysis'],
        'tbs_acetylate_deprotect': ['tbs_protection', 'acetylation', 'tbs_deprotection'],
    }
    steps = steps_map.get(route, [])
    parent = prep(record, stereo)
    mix = {parent: 100.0}
    for st in steps:
        try:
            mix = run_step(mix, st, T, eq, stereo)
        except Exception:
            pass
        items = sorted(mix.items(), key=lambda x: -x[1])
        mix = dict(items[:mp + 1])
    pm = Chem.MolFromSmiles(parent)
    pconst = Chem.MolToSmiles(pm, isomericSmiles=False)
    def is_sm(s):
        return Chem.MolToSmiles(Chem.MolFromSmiles(s), isomericSmiles=False) == pconst
    crude = sum(mix.values())
    rec = sum(a for s, a in mix.items() if is_sm(s))
    allprods = [(s, a) for s, a in mix.items() if not is_sm(s)]
    out = {'charge': 0, 'crude_pct': round(crude, 6), 'isolated_pct': 0.0, 'isolated_purity_pct': 0.0,
           'kept_pct': 0.0, 'logp': 0.0, 'mw': 0.0, 'n_products': 0, 'n_species': len(mix),
           'phase': 'none', 'product_yields_pct': [],
           'products': [], 'purity_pct': 0.0, 'qed': 0.0,
           'recovered_pct': round(rec, 6), 'selected': [], 'tpsa': 0.0, 'yield_pct': 0.0}
    if allprods:
        info = {s: ion(s, ph) for s in mix}
        org = {}
        aq = {}
        for s, a in mix.items():
            chs, lds = info[s]
            m_ = Chem.MolFromSmiles(s)
            neutral_dom = (chs == 0 and not any(at.GetFormalCharge() != 0 for at in m_.GetAtoms() if not (at.GetSymbol() in 'NO' and any(nb.GetFormalCharge() * at.GetFormalCharge() < 0 for nb in at.GetNeighbors()))))
            acids_, bases_, perm_ = groups(m_)
            zw = any(ph > pk for pk in acids_) and any(ph < pk for pk in bases_)
            if neutral_dom and not zw and ORG_RULE(lds, Crippen.MolLogP(m_)):
                org[s] = a
                aq[s] = 0.0
            else:
                org[s] = 0.0
                aq[s] = a
        prodset = set(s for s, _ in allprods)
        porg = sum(org[s] for s in prodset)
        paq = sum(aq[s] for s in prodset)
        phase = 'organic' if porg >= paq else 'aqueous'
        kept = org if phase == 'organic' else aq
        prods = sorted([(s, kept[s]) for s in prodset if kept[s] > 0], key=lambda x: -x[1])[:mp]
        top, ty = prods[0]
        tm = Chem.MolFromSmiles(top)
        ch = info[top][0]
        tot = sum(kept.values())
        purity = 100 * kept[top] / tot if tot > 0 else 0
        out['n_products'] = len(prods)
        out['products'] = [s for s, _ in prods]
        out['product_yields_pct'] = [round(a, 6) for _, a in prods]
        iso = {}
        for s, a in mix.items():
            D = 10 ** max(-20, min(20, info[s][1]))
            faq = (1 / (1 + D)) ** 3
            iso[s] = a * (1 - faq) if phase == 'organic' else a * faq
        itot = sum(iso.values())
        out.update({'charge': ch, 'logp': round(Crippen.MolLogP(tm), 4),
                    'mw': round(Descriptors.MolWt(tm), 3), 'tpsa': round(rdMolDescriptors.CalcTPSA(tm), 2),
                    'qed': round(QED.qed(tm), 6), 'phase': phase, 'purity_pct': round(purity, 6),
                    'selected': [top], 'yield_pct': round(ty, 6), 'isolated_pct': round(iso[top], 6),
                    'kept_pct': round(itot, 6),
                    'isolated_purity_pct': round(100 * iso[top] / itot if itot > 0 else 0, 6)})
    print(json.dumps(out))


if __name__ == '__main__':
    try:
        main()
    except Exception:
        print(json.dumps({'charge': 0, 'crude_pct': 100.0, 'isolated_pct': 0.0, 'isolated_purity_pct': 0.0,
                          'kept_pct': 0.0, 'logp': 0.0, 'mw': 0.0, 'n_products': 0, 'n_species': 1,
                          'phase': 'none', 'product_yields_pct': [], 'products': [], 'purity_pct': 0.0,
                          'qed': 0.0, 'recovered_pct': 100.0, 'selected': [], 'tpsa': 0.0, 'yield_pct': 0.0}))
