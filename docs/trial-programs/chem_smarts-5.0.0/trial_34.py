import sys, json, math
from rdkit import Chem, RDLogger
from rdkit.Chem import AllChem, Descriptors, Crippen, rdMolDescriptors, QED
from rdkit.Chem.MolStandardize import rdMolStandardize
from rdkit.Chem.EnumerateStereoisomers import EnumerateStereoisomers, StereoEnumerationOptions
RDLogger.DisableLog('rdApp.*')

# transformation -> list of (reaction smarts [site atom map 1], k25, class)
ACT = '$(c(c)[OX2H1,OX2,NX3;!$(N(=O)=O);!$([N+])])'
ACTC = '[cH;!$(c:n);!$(c:c:n);!$(c:c:c:n);$(c:c[OX2,NX3;!$([N+]);!$(N=O)]),$(c:c:c:c[OX2,NX3;!$([N+]);!$(N=O)]):1]'
RX = {
    'boc_protection': [('[NX3;H2,H1;!$(N[C,S]=[O,S,N]);!$(NS(=O)=O);!$(Na);!$(N-a):1]>>[N:1]C(=O)OC(C)(C)C', 0.672, 'A'),
                       ('[NX3;H1;$(N-a);!$(N[C,S]=[O,S,N]);!$(NS(=O)=O):1]>>[N:1]C(=O)OC(C)(C)C', 0.2, 'B')],
    'boc_deprotection': [('[N:1]C(=O)OC(C)(C)C>>[N:1]', 0.6, 'B')],
    'tbs_protection': [('[OX2H1:1][CH2:2]>>[CH2:2][O:1][Si](C)(C)C(C)(C)C', 0.6, 'A'),
                       ('[OX2H1:1][CX4;H1:2]>>[C:2][O:1][Si](C)(C)C(C)(C)C', 0.15, 'A'),
                       ('[OX2H1:1][c:2]>>[c:2][O:1][Si](C)(C)C(C)(C)C', 0.2, 'A')],
    'tbs_deprotection': [('[O:1]([CX4:2])[Si](C)(C)C(C)(C)C>>[O:1][C:2]', 0.6, 'A')],
    'esterification': [('[CX3:1](=[O:2])[OX2H1]>>[C:1](=[O:2])OC', 0.6, 'B')],
    'amide_coupling': [('[CX3:1](=[O:2])[OX2H1]>>[C:1](=[O:2])NCc1ccccc1', 1.0667, 'A')],
    'lialh4_reduction': [
        ('[CX3:1](=O)[OX2H1]>>[CH2:1]O', 0.6, 'B'),
        ('[CX3:1](=O)[OX2:2][#6:3]>>[CH2:1]O.[O:2][#6:3]', 0.6, 'B'),
        ('[CX3;!$(C(N)N):1](=O)[NX3:2]>>[CH2:1][N:2]', 0.3, 'B'),
        ('[CX3;!$(C[O,N,S]):1]=[O:2]>>[C:1][O:2]', 0.6, 'B'),
    ],
    'nitro_reduction': [('[N+:1](=O)[O-]>>[N+0:1]', 0.6, 'B'), ('[c:1][Br,I]>>[c:1]', 0.3, 'B')],
    'acetylation': [
        ('[NX3;H2,H1;!$(N[C,S]=[O,S,N]);!$(NS(=O)=O);!$(Na);!$(N-a):1]>>[N:1]C(C)=O', 0.6, 'B'),
        ('[NX3;H2,H1;$(N-c);!$(N[C,S]=[O,S,N]);!$(NS(=O)=O):1]>>[N:1]C(C)=O', 0.6, 'B'),
        ('[OX2H1;$(O[CH2]):1]>>[O:1]C(C)=O', 0.6, 'B'),
        ('[OX2H1;$(O[CX4;H1]):1]>>[O:1]C(C)=O', 0.2, 'B'),
        ('[OX2H1;$(Oc):1]>>[O:1]C(C)=O', 0.4, 'B'),
    ],
    'ester_hydrolysis': [('[CX3:1](=[O:2])[OX2:3][CX4:4]>>[C:1](=[O:2])O.[O:3][C:4]', 0.6, 'B'),
                         ('[CX3:1](=[O:2])[OX2:3][c:4]>>[C:1](=[O:2])O.[O:3][c:4]', 1.0667, 'A')],
    'alcohol_oxidation': [
        ('[OX2H1:1][CX4;H2:2]>>[O:1]=[C:2]', 0.711, 'A'),
        ('[OX2H1:1][CX4;H1:2]([#6])[#6]>>[O:1]=[C:2]', 0.25, 'A'),
        ('[CX3;H1:1](=[O:2])[#6:3]>>[C:1](=[O:2])(O)[#6:3]', 0.3375, 'B'),
    ],
    'reductive_amination': [('[CX3;H1:1](=[O])[#6:2]>>[C:1](N1CCOCC1)[#6:2]', 1.0667, 'A'),
                            ('[CX3;H0:1](=[O])([#6:2])[#6:3]>>[C:1](N1CCOCC1)([#6:2])[#6:3]', 0.9, 'B')],
    'eschweiler_clarke': [('[NX3;H2;!$(N[C,S]=[O,S,N]);!$(NS(=O)=O);!$(Na);!$(N-a):1]>>[N:1](C)C', 0.6, 'B'),
                          ('[NX3;H1;!$(N[C,S]=[O,S,N]);!$(NS(=O)=O);!$(Na);!$(N-a):1]>>[N:1]C', 0.3375, 'B')],
    'aromatic_bromination': [(ACTC + '>>[c:1]Br', 0.9, 'A')],
    'dehalogenation': [('[c:1]Br>>[c:1]', 0.6, 'B'), ('[c:1]I>>[c:1]', 0.6, 'B'), ('[c:1]Cl>>[c:1]', 0.3, 'B')],
}
TFS = {'A': {0: 0.5625, 25: 1.0, 80: 1.875}, 'B': {0: 0.36, 25: 1.0, 80: 1.7778}}
THR = {'A': 0.0, 'B': 0.34}

_rxn_cache = {}
def rxn(s):
    if s not in _rxn_cache:
        _rxn_cache[s] = AllChem.ReactionFromSmarts(s)
    return _rxn_cache[s]

def cleanup(m, strip):
    try:
        Chem.SanitizeMol(m)
        m = Chem.MolFromSmiles(Chem.MolToSmiles(m))
        if m is None:
            return None
        try:
            t = _TE.Canonicalize(m)
            if Chem.MolToSmiles(t, isomericSmiles=False) != Chem.MolToSmiles(m, isomericSmiles=False):
                m = t
        except Exception:
            pass
        if strip:
            Chem.RemoveStereochemistry(m)
        return Chem.MolFromSmiles(Chem.MolToSmiles(m))
    except Exception:
        return None

_TE = rdMolStandardize.TautomerEnumerator()

def can(m):
    return Chem.MolToSmiles(m)

def prepare(record, stereo):
    m = Chem.MolFromSmiles(record)
    frags = Chem.GetMolFrags(m, asMols=True)
    m = max(frags, key=lambda x: (x.GetNumHeavyAtoms(), Descriptors.MolWt(x)))
    try:
        m = rdMolStandardize.Uncharger().uncharge(m)
    except Exception:
        pass
    rw = Chem.RWMol(m)
    for a in rw.GetAtoms():
        if a.GetSymbol() == 'O' and a.GetFormalCharge() == -1:
            nb = a.GetNeighbors()
            if nb and nb[0].GetSymbol() == 'C':
                a.SetFormalCharge(0); a.SetNumExplicitHs(1)
        if a.GetSymbol() == 'N' and a.GetFormalCharge() == 1 and a.GetTotalNumHs() > 0:
            a.SetFormalCharge(0); a.SetNumExplicitHs(max(a.GetTotalNumHs() - 1, 0))
    m = rw.GetMol()
    Chem.SanitizeMol(m)
    try:
        m = _TE.Canonicalize(m)
    except Exception:
        pass
    if stereo == 'strip':
        Chem.RemoveStereochemistry(m)
    return Chem.MolFromSmiles(Chem.MolToSmiles(m))

def crowd_mult(m, idx):
    dm = Chem.GetDistanceMatrix(m)
    d2 = sum(1 for j in range(m.GetNumAtoms()) if dm[idx][j] == 2)
    n = max(d2 - 1, 0)
    return 1.5 / (1.0 + 0.5 * n)

BYPROD_MAX = 4

def sites(m, tname, strip, T):
    out = []  # (main product smiles, extra products, x)
    for s, k, cls in RX[tname]:
        tf = TFS[cls][T]
        r = rxn(s)
        res = {}
        for prods in r.RunReactants((m,)):
            site = None
            frags_all = []
            for pm in prods:
                for a in pm.GetAtoms():
                    if a.HasProp('old_mapno') and a.GetIntProp('old_mapno') == 1:
                        site = a.GetIntProp('react_atom_idx')
            if site is None:
                continue
            if site in res:
                continue
            comb = prods[0]
            for pm in prods[1:]:
                comb = Chem.CombineMols(comb, pm)
            mm = cleanup(Chem.Mol(comb), strip)
            if mm is None:
                continue
            frags = Chem.GetMolFrags(mm, asMols=True)
            frags = sorted(frags, key=lambda x: -x.GetNumHeavyAtoms())
            main = can(frags[0])
            if frags[0].GetNumHeavyAtoms() <= BYPROD_MAX:
                continue
            extra = [can(f) for f in frags[1:] if f.GetNumHeavyAtoms() > BYPROD_MAX]
            x = k * crowd_mult(m, site) * tf
            if x < THR[cls]:
                continue
            res[site] = (main, extra, x)
        out.extend(res.values())
    return out

def run_step(species, tname, eq, T, strip, enum, stereo_keep):
    cache = {}
    start = set(k for k, v in species.items() if v > 0)
    formed = set()
    pool = 100.0 * eq
    for rnd in range(eq):
        new = dict(species)
        demand = []
        for smi, amt in list(species.items()):
            if amt <= 1e-12:
                continue
            if smi not in cache:
                m = Chem.MolFromSmiles(smi)
                cache[smi] = sites(m, tname, strip, T) if m is not None else []
            st = cache[smi]
            if not st:
                continue
            tot = sum(x for _, _, x in st)
            frac = 1 - math.exp(-tot)
            demand.append((smi, amt * frac, st, tot))
        need = sum(d[1] for d in demand)
        scale = 1.0
        if need > pool and need > 0:
            scale = pool / need
        pool -= need * scale
        for smi, used, st, tot in demand:
            used *= scale
            new[smi] -= used
            for main, extra, x in st:
                new[main] = new.get(main, 0.0) + used * x / tot
                formed.add(main)
                for e in extra:
                    new[e] = new.get(e, 0.0) + used * x / tot
                    formed.add(e)
        species = new
    if enum:
        out = {}
        for smi, amt in species.items():
            if smi not in formed or smi in start:
                out[smi] = out.get(smi, 0) + amt
                continue
            m = Chem.MolFromSmiles(smi)
            opts = StereoEnumerationOptions(onlyUnassigned=True, unique=True)
            isos = list(EnumerateStereoisomers(m, options=opts))
            if len(isos) > 1 and len(isos) <= 64:
                for iso in isos:
                    s2 = Chem.MolToSmiles(iso)
                    out[s2] = out.get(s2, 0) + amt / len(isos)
            else:
                out[smi] = out.get(smi, 0) + amt
        species = out
    return species

# ---------- ionisation ----------
ACIDS = [('[CX3](=O)[OX2H1]', 3.8), ('[SX4](=O)(=O)[NX3H2]', 9.9), ('[SX4](=O)(=O)[NX3H1]c', 6.5),
         ('c[OX2H1]', 10.0), ('[nH]1c(=O)[nH]c(=O)cc1', 9.5)]
BASES = [('[NX3;H2,H1,H0;!$(N[C,S,P]=[O,S,N]);!$(N-a);!$(N-[SX4]);!$(NC=C);!$(N#*);!$(N=*);!$([N+]);!$(N1CCOCC1)]', 9.8),
         ('[NX3;$(N1CCOCC1);!$(N[C,S,P]=[O,S,N]);!$(N-a)]', 6.5),
         ('[NX3;H2,H1;$(N-c);!$(N[C,S,P]=[O,S,N]);!$(N-[SX4]);!$(Nc(=O));!$(N-c:n)]', 4.6), ('[nX2;r6]', 4.5)]
_pat = {}
def P(s):
    if s not in _pat:
        _pat[s] = Chem.MolFromSmarts(s)
    return _pat[s]

def ion_groups(m):
    acids = []; bases = []
    for s, pk in ACIDS:
        acids += [pk] * len(m.GetSubstructMatches(P(s)))
    used = set()
    for s, pk in BASES:
        for mt in m.GetSubstructMatches(P(s)):
            if mt[0] in used:
                continue
            used.add(mt[0]); bases.append(pk)
    perm = sum(1 for a in m.GetAtoms() if a.GetFormalCharge() > 0 and a.GetSymbol() == 'N' and a.GetTotalNumHs() == 0
               and not any(nb.GetFormalCharge() < 0 for nb in a.GetNeighbors()))
    return acids, bases, perm

def neutral_frac(m, pH):
    acids, bases, perm = ion_groups(m)
    if perm:
        return 0.0
    f = 1.0
    for pk in acids:
        f *= 1.0 / (1 + 10 ** (pH - pk))
    for pk in bases:
        f *= 1.0 / (1 + 10 ** (pk - pH))
    return f

def charge_at(m, pH):
    acids, bases, perm = ion_groups(m)
    c = perm
    c -= sum(1 for pk in acids if pH >= pk)
    c += sum(1 for pk in bases if pH < pk)
    return c

def logD(m, pH):
    lp = Crippen.MolLogP(m)
    f = neutral_frac(m, pH)
    if f <= 0:
        return -99.0
    return lp + math.log10(f)

def main():
    sc = json.load(sys.stdin)
    p = sc['parameters']
    route, record = p['case'].split(':', 1)
    record = record.strip()
    eq = int(p['equivalents']); maxp = int(p['max_products']); stereo = p['stereochemistry']
    T = int(p['temperature']); pH = float(p['workup_ph'])
    strip = stereo == 'strip'; enum = stereo == 'enumerate'
    steps = route.split('_')
    names = []
    for i, s in enumerate(steps):
        if s == 'boc': names.append('boc_protection' if i == 0 else 'boc_deprotection')
        elif s == 'tbs': names.append('tbs_protection' if i == 0 else 'tbs_deprotection')
        elif s == 'esterify': names.append('esterification')
        elif s == 'couple': names.append('amide_coupling')
        elif s == 'reduce': names.append('nitro_reduction' if 'nitro' in steps else 'lialh4_reduction')
        elif s == 'nitro': continue
        elif s == 'acetylate': names.append('acetylation')
        elif s == 'hydrolyse': names.append('ester_hydrolysis')
        elif s == 'oxidise': names.append('alcohol_oxidation')
        elif s == 'aminate': names.append('reductive_amination')
        elif s == 'methylate': names.append('eschweiler_clarke')
        elif s == 'brominate': names.append('aromatic_bromination')
        elif s == 'dehalogenate': names.append('dehalogenation')
    parent = prepare(record, stereo)
    psmi = can(parent)
    pcon = Chem.MolToSmiles(parent, isomericSmiles=False)
    species = {psmi: 100.0}
    for ti, t in enumerate(names):
        try:
            species = run_step(species, t, eq, T, strip, enum, stereo == 'keep')
        except Exception as e:
            print('step fail', t, e, file=sys.stderr)
        items = sorted(species.items(), key=lambda kv: (-round(kv[1], 9), kv[0]))
        items = [kv for kv in items if kv[1] > 1e-9]
        if ti < len(names) - 1:
            items = items[:maxp]
        species = dict(items)
    crude = sum(species.values())
    def is_sm(s):
        m = Chem.MolFromSmiles(s)
        return Chem.MolToSmiles(m, isomericSmiles=False) == pcon
    recovered = sum(a for s, a in species.items() if is_sm(s))
    prods = sorted([(s, a) for s, a in species.items() if not is_sm(s)], key=lambda kv: (-round(kv[1], 9), kv[0]))[:maxp]
    out = {'crude_pct': round(crude, 6), 'recovered_pct': round(recovered, 6), 'n_species': len(species)}
    if not prods:
        out.update(dict(charge=0, isolated_pct=0.0, isolated_purity_pct=0.0, kept_pct=0.0, logp=0.0, mw=0.0,
                        n_products=0, phase='none', product_yields_pct=[], products=[], purity_pct=0.0, qed=0.0,
                        selected=[], tpsa=0.0, yield_pct=0.0))
        print(json.dumps(out)); return
    top, ty = prods[0]
    tm = Chem.MolFromSmiles(top)
    D = {}
    for s in species:
        m = Chem.MolFromSmiles(s)
        ld = logD(m, pH)
        D[s] = 10 ** max(min(ld, 30), -30)
    forg = D[top] / (1 + D[top])
    phase = 'organic' if forg >= 0.5 else 'aqueous'
    if charge_at(tm, pH) != 0:
        phase = 'aqueous'
    def frac_kept_single(s):
        f = D[s] / (1 + D[s])
        return f if phase == 'organic' else 1 - f
    kept1 = sum(a * frac_kept_single(s) for s, a in species.items())
    purity = 100 * ty * frac_kept_single(top) / kept1 if kept1 > 0 else 0.0
    def frac_iso(s):
        a = 1.0 / (1 + D[s])
        if phase == 'organic':
            return 1 - a ** 3
        return a ** 3
    kept = sum(a * frac_iso(s) for s, a in species.items())
    iso = ty * frac_iso(top)
    out.update(dict(
        charge=int(charge_at(tm, pH)), isolated_pct=round(iso, 6),
        isolated_purity_pct=round(100 * iso / kept, 6) if kept > 0 else 0.0,
        kept_pct=round(kept, 6), logp=round(Crippen.MolLogP(tm), 4), mw=round(Descriptors.MolWt(tm), 3),
        n_products=len(prods), phase=phase, product_yields_pct=[round(a, 6) for _, a in prods],
        products=[s for s, _ in prods], purity_pct=round(purity, 6), qed=round(QED.qed(tm), 6),
        selected=[top], tpsa=round(rdMolDescriptors.CalcTPSA(tm), 2), yield_pct=round(ty, 6)))
    print(json.dumps(out))

if __name__ == '__main__':
    main()
