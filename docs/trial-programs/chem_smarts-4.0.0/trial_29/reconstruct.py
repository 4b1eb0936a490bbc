import sys, json, math
from rdkit import Chem, RDLogger
from rdkit.Chem import AllChem, Descriptors, Crippen, rdMolDescriptors, QED
from rdkit.Chem.MolStandardize import rdMolStandardize
from rdkit.Chem.EnumerateStereoisomers import EnumerateStereoisomers, StereoEnumerationOptions

RDLogger.DisableLog('rdApp.*')

E = {0: 0.6, 25: 0.8, 80: 0.95}
M = {0: 0.0, 25: 0.6, 80: 0.8}
H = {0: 0.0, 25: 0.0, 80: 0.6}

AMINE_PRIM = '[NX3;H2;!$(N[#6]=[#7,#8,#16]);!$(N[#16,#15,#7,#8]);!$(Na):1][CX4:2]'
AMINE_SEC = '[NX3;H1;!$(N[#6]=[#7,#8,#16]);!$(N[#16,#15,#7,#8]);!$(Na):1]([CX4:2])[CX4:3]'
ANILINE_PRIM = '[NX3;H2;!$(N[#6]=[#7,#8,#16]);!$(N[#16,#15,#7,#8]):1][c,n:2]'
ANILINE_SEC = '[NX3;H1;!$(N[#6]=[#7,#8,#16]);!$(N[#16,#15,#7,#8]):1]([c:2])[CX4:3]'
PRIM_OH = '[OX2;H1:1][CH2;X4:2]'
SEC_OH = '[OX2;H1:1][CH1;X4:2]'
TERT_OH = '[OX2;H1:1][CH0;X4:2]'
PHENOL = '[OX2;H1:1][c:2]'
COOH = '[CX3:1](=[O:2])[OX2H1,OX1-:3]'
BOC = 'CC(C)(C)OC(=O)'

# each transformation: list of (smarts_rxn, rate_table, byproduct_keep)
def R(s):
    r = AllChem.ReactionFromSmarts(s)
    r.Initialize()
    return r

T = {}
T['boc_protection'] = [
    (R(AMINE_PRIM + '>>CC(C)(C)OC(=O)[N:1][C:2]'), E),
    (R(AMINE_SEC + '>>CC(C)(C)OC(=O)[N:1]([C:2])[C:3]'), M),
    (R(ANILINE_SEC + '>>CC(C)(C)OC(=O)[N:1]([c:2])[C:3]'), H),
]
T['boc_deprotection'] = [
    (R('[CH3][C]([CH3])([CH3])[O][C](=O)[N:1]>>[N:1]'), E),
]
T['tbs_protection'] = [
    (R(PRIM_OH + '>>[Si](C)(C)(C(C)(C)C)[O:1][C:2]'), E),
    (R(PHENOL + '>>[Si](C)(C)(C(C)(C)C)[O:1][c:2]'), M),
    (R(SEC_OH + '>>[Si](C)(C)(C(C)(C)C)[O:1][C:2]'), H),
]
T['tbs_deprotection'] = [
    (R('[CH3][Si]([CH3])([C]([CH3])([CH3])[CH3])[O:1]>>[O:1]'), E),
]
T['esterification'] = [
    (R(COOH + '>>[C:1](=[O:2])[O+0:3]C'), M),
]
T['amide_coupling'] = [
    (R(COOH + '>>[C:1](=[O:2])NCc1ccccc1'), E),
]
T['lialh4_reduction'] = [
    (R('[CX3:1](=[O:2])[OX2H1,OX1-]>>[CH2:1][O:2]'), M),
    (R('[CX3;!R:1](=[O:2])[OX2:3][#6:4]>>[CH2:1][O:2].[O:3][#6:4]'), M),
    (R('[CX3;R:1](=[O:2])[OX2;R:3][#6:4]>>([CH2:1][O:2].[O:3][#6:4])'), M, 1),
    (R('[CX3;!$(C(=O)([#7,#8])[#7,#8]):1](=[O:2])[NX3:3]>>[CH2:1][N:3]'), H),
    (R('[CX3;H1:1]([#6:3])=[O:2]>>[CH2:1]([*:3])[O:2]'), E),
    (R('[CX3;H0:1]([#6:3])([#6:4])=[O:2]>>[CH1:1]([*:3])([*:4])[O:2]'), E),
]
T['nitro_reduction'] = [
    (R('[N+:1](=O)[O-]>>[N+0:1]'), M),
    (R('[c:1][I]>>[c:1]'), M),
    (R('[c:1][Br]>>[c:1]'), H),
]
T['acetylation'] = [
    (R(AMINE_PRIM + '>>CC(=O)[N:1][C:2]'), E),
    (R(AMINE_SEC + '>>CC(=O)[N:1]([C:2])[C:3]'), E),
    (R(ANILINE_PRIM + '>>CC(=O)[N:1][*:2]'), M),
    (R(PRIM_OH + '>>CC(=O)[O:1][C:2]'), M),
    (R(SEC_OH + '>>CC(=O)[O:1][C:2]'), H),
    (R(PHENOL + '>>CC(=O)[O:1][c:2]'), H),
]
T['ester_hydrolysis'] = [
    (R('[CX3;!R:1](=[O:2])[OX2:3][c:4]>>[C:1](=[O:2])O.[O:3][c:4]'), E),
    (R('[CX3;!R:1](=[O:2])[OX2:3][C:4]>>[C:1](=[O:2])O.[O:3][C:4]'), M),
    (R('[CX3;R:1](=[O:2])[OX2;R:3][#6:4]>>([C:1](=[O:2])O.[O:3][#6:4])'), M, 1),
]
T['alcohol_oxidation'] = [
    (R('[OX2;H1:1][CH1;X4:2]([CH2:3][OX2:5])[CH2:4][OX2:6]>>[O:1]=[C:2]([C:3][O:5])[C:4][O:6]'), E),
    (R(PRIM_OH + '>>[O:1]=[C:2]'), E),
    (R(SEC_OH + '>>[O:1]=[C:2]'), M),
    (R('[CX3;H1:1](=[O:2])[#6:3]>>[C:1](=[O:2])([*:3])O'), H),
]
T['reductive_amination'] = [
    (R('[CX3;H1:1](=[O])[#6:2]>>[CH2:1]([#6:2])N1CCOCC1'), E),
    (R('[CX3;H0:1](=[O])([#6:2])[#6:3]>>[CH1:1]([#6:2])([#6:3])N1CCOCC1'), M),
]
T['eschweiler_clarke'] = [
    (R(AMINE_PRIM + '>>C[N:1](C)[C:2]'), M),
    (R(AMINE_SEC + '>>C[N:1]([C:2])[C:3]'), H),
]
# bromination handled specially
T['dehalogenation'] = [
    (R('[c:1][I]>>[c:1]'), E),
    (R('[c:1][Br]>>[c:1]'), M),
    (R('[c:1][Cl]>>[c:1]'), H),
]

NAME_MAP = {}


_cp = rdMolStandardize.CleanupParameters()
_cp.tautomerRemoveSp3Stereo = False
_cp.tautomerRemoveBondStereo = False
_cp.tautomerRemoveIsotopicHs = False
TAUT = rdMolStandardize.TautomerEnumerator(_cp)
_tcache = {}


def canon(m):
    return Chem.MolToSmiles(m)


def clean_smiles(s):
    if s in _tcache:
        return _tcache[s]
    m = Chem.MolFromSmiles(s)
    try:
        m2 = TAUT.Canonicalize(m)
        r = Chem.MolToSmiles(m2)
    except Exception:
        r = s
    _tcache[s] = r
    return r


def sanitize_product(p):
    try:
        p = Chem.Mol(p)
        for a in p.GetAtoms():
            if a.HasProp('old_mapno') and not a.GetIsAromatic():
                a.SetNumExplicitHs(0)
                a.SetNoImplicit(False)
        Chem.SanitizeMol(p)
        s = Chem.MolToSmiles(p)
        m = Chem.MolFromSmiles(s)
        if m is None:
            return None
        return m
    except Exception:
        return None


ACT = Chem.MolFromSmarts('[OX2H1,OX2;$(O([#6;!$(C=O)])c),NX3;!$(N[S](=O)=O);!$(N=*);!$([N+])]')


def bromination_sites(m):
    # returns list of (atom idx, rate)
    sites = {}
    for a in m.GetAtoms():
        if a.GetSymbol() != 'C' or not a.GetIsAromatic() or a.GetTotalNumHs() != 1:
            continue
        if not a.IsInRingSize(6):
            continue
        ring_ok = False
        ri = m.GetRingInfo()
        ring = None
        for r in ri.AtomRings():
            if a.GetIdx() in r and len(r) == 6 and all(m.GetAtomWithIdx(i).GetSymbol() == 'C' and m.GetAtomWithIdx(i).GetIsAromatic() for i in r):
                ring = r
                break
        if ring is None:
            continue
        best = 0
        n = len(ring)
        pos = ring.index(a.GetIdx())
        for off, kind in ((1, 'o'), (n - 1, 'o'), (3, 'p')):
            j = ring[(pos + off) % n]
            ra = m.GetAtomWithIdx(j)
            for nb in ra.GetNeighbors():
                if nb.GetIdx() in ring:
                    continue
                if is_activator(m, nb, ra):
                    val = 2 if kind == 'p' else 1
                    best = max(best, val)
        if best:
            sites[a.GetIdx()] = best
    return sites


def is_activator(m, nb, ring_atom):
    sym = nb.GetSymbol()
    if nb.GetIsAromatic():
        return False
    if sym == 'O':
        if nb.GetFormalCharge() != 0:
            return False
        # O-H or O-alkyl, not O-acyl / O-Si
        for x in nb.GetNeighbors():
            if x.GetIdx() == ring_atom.GetIdx():
                continue
            if x.GetSymbol() == 'Si':
                return False
            for b in x.GetBonds():
                o = b.GetOtherAtom(x)
                if b.GetBondTypeAsDouble() == 2 and o.GetSymbol() in ('O', 'S', 'N'):
                    return False
        return True
    if sym == 'N':
        if nb.GetFormalCharge() != 0:
            return False
        for x in nb.GetNeighbors():
            if x.GetSymbol() == 'S':
                return False
        return True
    return False


def brominate_products(m, T_):
    sites = bromination_sites(m)
    out = []
    for idx, val in sites.items():
        rate = E[T_] if val == 2 else M[T_]
        rw = Chem.RWMol(m)
        bi = rw.AddAtom(Chem.Atom(35))
        rw.AddBond(idx, bi, Chem.BondType.SINGLE)
        p = sanitize_product(rw.GetMol())
        if p is not None:
            out.append((rate, 0, [p]))
    return out


def site_products(m, trans, T_):
    """list of (rate, priority, [products...]) one per site"""
    if trans == 'bromination':
        return brominate_products(m, T_)
    res = []
    for pri, ent in enumerate(T[trans]):
        rxn, table = ent[0], ent[1]
        if len(ent) > 2:
            pri = ent[2]
        rate = table[T_]
        outs = rxn.RunReactants((m,))
        seen = set()
        for prods in outs:
            ps = []
            ok = True
            for p in prods:
                q = sanitize_product(p)
                if q is None:
                    ok = False
                    break
                ps.append(q)
            if not ok:
                continue
            key = tuple(canon(p) for p in ps)
            # count each match as a site (duplicates = equivalent sites)
            res.append((rate, pri, ps))
    return res


def largest(ps):
    return max(ps, key=lambda p: p.GetNumHeavyAtoms())


def react_molecule(smi, amt, trans, T_, eq, order):
    """Return dict smiles->amount of outputs, plus byproducts dict."""
    out = {}
    byp = {}
    cur = [(smi, amt)]
    for rnd in range(eq):
        nxt = []
        for s, a in cur:
            m = Chem.MolFromSmiles(s)
            sites = site_products(m, trans, T_)
            sites = [x for x in sites if x[0] > 0]
            if not sites:
                add(out, s, a, order)
                continue
            best_rate = max(x[0] for x in sites)
            best_pri = min(x[1] for x in sites if x[0] == best_rate)
            chosen = [x for x in sites if x[0] == best_rate and x[1] == best_pri]
            p = best_rate
            add(out, s, a * (1 - p), order)
            share = a * p / len(chosen)
            for _, _, ps in chosen:
                main = largest(ps)
                ms = clean_smiles(canon(main))
                if ms not in order:
                    order[ms] = len(order)
                nxt.append((ms, share))
                for q in ps:
                    if q is main:
                        continue
                    if q.GetNumHeavyAtoms() > 4:
                        BYP.add(canon(q))
                        add(byp, canon(q), share, order)
        # merge nxt
        merged = {}
        for s, a in nxt:
            add(merged, s, a, order)
        cur = list(merged.items())
    for s, a in cur:
        add(out, s, a, order)
    return out, byp


BYP = set()


def add(d, s, a, order):
    if s not in order:
        order[s] = len(order)
    d[s] = d.get(s, 0.0) + a


FREE_AMINE = Chem.MolFromSmarts('[NX3;H1,H2;!$(N[#6]=[#7,#8,#16]);!$(N[#16,#15,#7,#8]);!$(Na);!$(N[a])]')


def enumerate_stereo(smi):
    m = Chem.MolFromSmiles(smi)
    opts = StereoEnumerationOptions(onlyUnassigned=True, unique=True)
    isos = list(EnumerateStereoisomers(m, options=opts))
    res = []
    for i in isos:
        res.append(Chem.MolToSmiles(i))
    # unique
    u = []
    for r in res:
        if r not in u:
            u.append(r)
    u.sort()
    return u if u else [smi]


def prepare(record, stereo):
    m = Chem.MolFromSmiles(record)
    frags = Chem.GetMolFrags(m, asMols=True)
    # remove duplicates and choose largest organic fragment
    best = None
    for f in frags:
        nC = sum(1 for a in f.GetAtoms() if a.GetSymbol() == 'C')
        if nC == 0:
            continue
        key = (f.GetNumHeavyAtoms(), nC)
        if best is None or key > best[0]:
            best = (key, f)
    f = best[1] if best else frags[0]
    un = rdMolStandardize.Uncharger()
    f = un.uncharge(f)
    if stereo == 'strip':
        Chem.RemoveStereochemistry(f)
    return Chem.MolToSmiles(f)


# ---------------- pKa model ----------------
ACID_GROUPS = [
    ('[CX3](=O)[OX2H1]', 3.5),
    ('[CX3](=O)[OX1-]', 3.5),
    ('[SX4](=O)(=O)[NX3;H1][c,n]', 6.0),
    ('[SX4](=O)(=O)[NX3;H2]', 9.9),
    ('c[OX2H1]', 9.5),
]
BASE_GROUPS = [
    ('[NX3;!$(N[#6]=[#7,#8,#16]);!$(Na)]1CCOCC1', 6.35),
    ('[NX3;H2,H1,H0;!$(N[#6]=[#7,#8,#16]);!$(N[#16,#15,#7,#8]);!$(Na);!$(N[a]);!$(N-C=C)]', 9.8),
    ('[NX3;H2,H1;!$(N[#6]=[#7,#8,#16]);!$(N[#16,#15,#7,#8]);!$(N(a)a)]c', 4.6),
    ('[nX2]1ccccc1', 5.2),
]
ACID_P = [(Chem.MolFromSmarts(s), k) for s, k in ACID_GROUPS]
BASE_P = [(Chem.MolFromSmarts(s), k) for s, k in BASE_GROUPS]


def ionisable(m):
    acids, bases = [], []
    used = set()
    for p, k in ACID_P:
        for match in m.GetSubstructMatches(p):
            key = match[-1] if len(match) > 1 else match[0]
            if key in used:
                continue
            used.add(key)
            acids.append(k)
    used = set()
    for p, k in BASE_P:
        for match in m.GetSubstructMatches(p):
            if match[0] in used:
                continue
            used.add(match[0])
            bases.append(k)
    perm = sum(a.GetFormalCharge() for a in m.GetAtoms() if a.GetSymbol() == 'N' and a.GetFormalCharge() == 1 and a.GetTotalNumHs() == 0 and not any(n.GetFormalCharge() < 0 for n in a.GetNeighbors()))
    return acids, bases, perm


def charge_at(m, pH):
    acids, bases, perm = ionisable(m)
    c = perm
    for k in acids:
        if pH > k:
            c -= 1
    for k in bases:
        if pH < k:
            c += 1
    return c


def ionized_any(m, pH):
    acids, bases, perm = ionisable(m)
    if perm:
        return True
    return any(pH > k for k in acids) or any(pH < k for k in bases)


def neutral_fraction(m, pH):
    acids, bases, perm = ionisable(m)
    if perm:
        return 0.0
    f = 1.0
    for k in acids:
        f *= 1.0 / (1.0 + 10 ** (pH - k))
    for k in bases:
        f *= 1.0 / (1.0 + 10 ** (k - pH))
    return f


def logD(m, pH):
    fn = neutral_fraction(m, pH)
    lp = Crippen.MolLogP(m)
    if fn <= 0:
        return -99.0
    return lp + math.log10(fn)


import os
LOGD_T = 10 ** float(os.environ.get('LOGD_T', '0'))
MODE = os.environ.get('MODE', 'p')


def main():
    inp = json.load(sys.stdin)
    P = inp['parameters']
    case = P['case']
    route, record = case.split(':', 1)
    record = record.strip()
    route = route.strip()
    T_ = int(P['temperature'])
    eq = int(P['equivalents'])
    mp = int(P['max_products'])
    stereo = P['stereochemistry']
    pH = float(P['workup_ph'])
    rad = int(P['fingerprint_radius'])

    steps = route_steps(route)
    sm = prepare(record, stereo)
    order = {}
    species = {sm: 100.0}
    add({}, sm, 0, order)
    nsteps = len(steps)
    for si, trans in enumerate(steps):
        new = {}
        for s, a in sorted(species.items(), key=lambda x: order[x[0]]):
            m = Chem.MolFromSmiles(s)
            if trans in ('amide_coupling', 'alcohol_oxidation') and m.HasSubstructMatch(FREE_AMINE):
                continue
            out, byp = react_molecule(s, a, trans, T_, eq, order)
            for s2, a2 in out.items():
                if s2 != s and stereo == 'enumerate':
                    isos = enumerate_stereo(s2)
                    for i in isos:
                        add(new, i, a2 / len(isos), order)
                else:
                    add(new, s2, a2, order)
            for s2, a2 in byp.items():
                add(new, s2, a2, order)
        new = {k: v for k, v in new.items() if v > 1e-9}
        if si < nsteps - 1:
            items = sorted(new.items(), key=lambda x: (-round(x[1], 9), order[x[0]]))[:mp]
            species = dict(items)
        else:
            species = new
    out = workup(species, sm, pH, mp, rad, order)
    print(json.dumps(out))


def route_steps(route):
    parts = route.split('_')
    steps = []
    n = len(parts)
    i = 0
    while i < n:
        w = parts[i]
        if w == 'boc':
            steps.append('boc_protection' if i == 0 else 'boc_deprotection')
        elif w == 'tbs':
            steps.append('tbs_protection' if i == 0 else 'tbs_deprotection')
        elif w == 'deprotect':
            # replace: deprotect refers to first protecting group
            steps.append(parts[0] + '_deprotection')
        elif w == 'esterify':
            steps.append('esterification')
        elif w == 'couple':
            steps.append('amide_coupling')
        elif w == 'reduce':
            if i > 0 and parts[i - 1] == 'nitro':
                steps[-1] = 'nitro_reduction'
            else:
                steps.append('lialh4_reduction')
        elif w == 'nitro':
            steps.append('nitro_reduction')
        elif w == 'acetylate':
            steps.append('acetylation')
        elif w == 'hydrolyse':
            steps.append('ester_hydrolysis')
        elif w == 'oxidise':
            steps.append('alcohol_oxidation')
        elif w == 'aminate':
            steps.append('reductive_amination')
        elif w == 'methylate':
            steps.append('eschweiler_clarke')
        elif w == 'brominate':
            steps.append('bromination')
        elif w == 'dehalogenate':
            steps.append('dehalogenation')
        i += 1
    # fix: 'boc_x_deprotect' -> boc_protection, x, boc_deprotection
    res = []
    for s in steps:
        if s == 'boc_deprotection_deprotection':
            s = 'boc_deprotection'
        res.append(s)
    res = [s.replace('boc_deprotection', 'boc_deprotection') for s in res]
    return [fixname(s) for s in res]


def fixname(s):
    return {'boc_deprotection': 'boc_deprotection', 'tbs_deprotection': 'tbs_deprotection'}.get(s, s)


def workup(species, sm, pH, mp, rad, order):
    crude = sum(species.values())
    nsp = len(species)
    data = {}
    for s, a in species.items():
        m = Chem.MolFromSmiles(s)
        D = 10 ** logD(m, pH)
        data[s] = (a, m, D)
    prods = {s: v for s, v in data.items() if s != sm}
    empty = dict(charge=0, crude_pct=round(crude, 6), fp_on=0, hba=0, hbd=0, isolated_pct=0.0,
                 isolated_purity_pct=0.0, kept_pct=0.0, logp=0.0, mw=0.0, n_products=0, n_species=nsp,
                 phase='none', products=[], purity_pct=0.0, qed=0.0, selected=[], tpsa=0.0, yield_pct=0.0)
    if not prods:
        return empty
    chg = {}
    for s, v in data.items():
        c = 99 if ionized_any(v[1], pH) else 0
        if c == 0:
            val = v[2] if MODE == 'd' else 10 ** Crippen.MolLogP(v[1])
            if val <= LOGD_T:
                c = 99
        chg[s] = c
    org = sum(v[0] for s, v in prods.items() if chg[s] == 0)
    aq = sum(v[0] for s, v in prods.items() if chg[s] != 0)
    phase = 'organic' if org >= aq else 'aqueous'

    def in_kept(s):
        return (chg[s] == 0) if phase == 'organic' else (chg[s] != 0)
    kept = [(s, v) for s, v in data.items() if in_kept(s)]
    kept_prods = [(s, v) for s, v in kept if s != sm]
    kept_prods.sort(key=lambda x: (-round(x[1][0], 9), x[0] in BYP, x[0]))
    if not kept_prods:
        return empty
    top_s, (top_a, top_m, top_D) = kept_prods[0]
    kept_total = sum(v[0] for s, v in kept)
    purity = 100.0 * top_a / kept_total if kept_total > 0 else 0.0
    # isolation
    iso = {}
    for s, (a, m, D) in data.items():
        rem = (1.0 / (1.0 + D)) ** 3
        iso[s] = a * ((1 - rem) if phase == 'organic' else rem)
    kept_iso = sum(iso.values())
    iso_top = iso[top_s]
    plist = [s for s, v in kept_prods[:mp]]
    m = top_m
    fp = AllChem.GetMorganFingerprintAsBitVect(m, rad, nBits=1024)
    return dict(
        charge=int(charge_at(m, pH)),
        crude_pct=round(crude, 6),
        fp_on=int(fp.GetNumOnBits()),
        hba=int(rdMolDescriptors.CalcNumLipinskiHBA(m)),
        hbd=int(rdMolDescriptors.CalcNumLipinskiHBD(m)),
        isolated_pct=round(iso_top, 6),
        isolated_purity_pct=round(100.0 * iso_top / kept_iso if kept_iso > 0 else 0.0, 6),
        kept_pct=round(kept_iso, 6),
        logp=round(Crippen.MolLogP(m), 5),
        mw=round(Descriptors.MolWt(m), 3),
        n_products=len(plist),
        n_species=nsp,
        phase=phase,
        products=plist,
        purity_pct=round(purity, 6),
        qed=round(QED.qed(m), 6),
        selected=[top_s],
        tpsa=round(rdMolDescriptors.CalcTPSA(m, includeSandP=True), 2),
        yield_pct=round(top_a, 6),
    )


if __name__ == '__main__':
    try:
        main()
    except Exception:
        print(json.dumps(dict(charge=0, crude_pct=100.0, fp_on=0, hba=0, hbd=0, isolated_pct=0.0,
                              isolated_purity_pct=0.0, kept_pct=0.0, logp=0.0, mw=0.0, n_products=0,
                              n_species=1, phase='none', products=[], purity_pct=0.0, qed=0.0,
                              selected=[], tpsa=0.0, yield_pct=0.0)))
