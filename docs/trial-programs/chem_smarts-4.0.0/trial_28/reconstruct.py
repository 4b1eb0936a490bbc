import sys, json, math
from rdkit import Chem, RDLogger
RDLogger.DisableLog('rdApp.*')
from rdkit.Chem import AllChem, Descriptors, Crippen, rdMolDescriptors, QED, Lipinski
from rdkit.Chem.MolStandardize import rdMolStandardize
from rdkit.Chem.EnumerateStereoisomers import EnumerateStereoisomers, StereoEnumerationOptions

PCT = [0.6, 0.8, 0.95]
TIDX = {0: 0, 25: 1, 80: 2}


def conv(level, T):
    d = TIDX[T] - level
    return PCT[min(d, 2)] if d >= 0 else 0.0


AMINE_ALI_P = '[NX3;H2;!$(N-[C,S,P]=[O,S,N]);!$(N-a);!$(N-[S,P]);!$(N-N);!$(N-O)]'
AMINE_ALI_S = '[NX3;H1;!$(N-[C,S,P]=[O,S,N]);!$(N-a);!$(N-[S,P]);!$(N-N);!$(N-O);!$(N-C=C)]'
ANILINE_P = '[NX3;H2;$(N-a);!$(N-[S,P])]'
ANILINE_S = '[NX3;H1;$(N-a);!$(N-a(:a):n);!$(N-[C,S,P]=[O,S,N]);!$(N-[S,P]);!$(N(a)a)]'
OH_PRIM = '[OX2H1;$(O[CX4;H2])]'
OH_SEC = '[OX2H1;$(O[CX4;H1])]'
OH_TERT = '[OX2H1;$(O[CX4;H0])]'
OH_PHEN = '[OX2H1;$(Oc)]'
BOC = 'C(=O)OC(C)(C)C'
TBS = '[Si](C)(C)C(C)(C)C'

# each reaction: list of (reaction smarts, level, kind)
R = {}


def amine_rx(prod_suffix, levels):
    out = []
    for pat, lv in zip([AMINE_ALI_P, AMINE_ALI_S, ANILINE_P, ANILINE_S], levels):
        if lv is None:
            continue
        out.append((pat.replace(']', ':1]', 1) if False else pat, lv, prod_suffix))
    return out


def mk(react, prod):
    return AllChem.ReactionFromSmarts(react + '>>' + prod)


def map1(pat):
    # add map number 1 to first atom of the pattern
    depth = 0
    for i, ch in enumerate(pat):
        if ch == '[':
            depth += 1
        elif ch == ']':
            depth -= 1
            if depth == 0:
                return pat[:i] + ':1' + pat[i:]
    return pat


def build():
    r = {}
    # Boc protection
    L = []
    for pat, lv in [(AMINE_ALI_P, 0), (AMINE_ALI_S, 1), (ANILINE_P, 1), (ANILINE_S, 2)]:
        L.append((mk(map1(pat), '[N:1]' + BOC), lv))
    r['boc_protection'] = L
    r['boc_deprotection'] = [(mk('[N:1]C(=O)OC(C)(C)C', '[N:1]'), 0)]
    L = []
    for pat, lv in [(OH_PRIM, 0), (OH_SEC, 2), (OH_PHEN, 1)]:
        L.append((mk(map1(pat), '[O:1]' + TBS), lv))
    r['tbs_protection'] = L
    r['tbs_deprotection'] = [(mk('[O:1][Si](C)(C)C(C)(C)C', '[O:1]'), 0)]
    r['esterification'] = [(mk('[CX3:1](=[O:2])[OX2H1,OX1-]', '[C:1](=[O:2])OC'), 1)]
    r['amide_coupling'] = [(mk('[CX3:1](=[O:2])[OX2H1,OX1-]', '[C:1](=[O:2])NCc1ccccc1'), 0)]
    r['lialh4_reduction'] = [
        (mk('[CX3:1](=[O:2])[OX2H1,OX1-]', '[CH2:1][O:2]'), 1),
        (mk('[CX3;$(C-[#6]):1](=O)[OX2:2][#6:3]', '([CH2:1]O.[O:2][#6:3])'), 1),
        (mk('[CX3;$(C-[#6]):1](=O)[NX3:2]', '[CH2:1][N:2]'), 2),
        (mk('[CX3;H1,$(C([#6])[#6]):1]=[OX1:2]', '[C:1][O:2]'), 0),
    ]
    r['nitro_reduction'] = [(mk('[N+:1](=O)[O-]', '[N+0:1]'), 1), (mk('[c:1]Br', '[cH:1]'), 2)]
    L = []
    for pat, lv, rk in [(AMINE_ALI_P, 0, 0), (AMINE_ALI_S, 0, 0), (ANILINE_P, 1, 0), (ANILINE_S, 2, 0), (OH_PRIM, 1, 1), (OH_SEC, 2, 1), (OH_PHEN, 2, 1)]:
        L.append((mk(map1(pat), '[*:1]C(C)=O'), lv, rk))
    r['acetylation'] = L
    r['ester_hydrolysis'] = [
        (mk('[CX3;$(C-[#6]):1](=[O:3])[OX2:2][c:4]', '([C:1](=[O:3])O.[O:2][c:4])'), 0),
        (mk('[CX3;$(C-[#6]):1](=[O:3])[OX2:2][CX4:4]', '([C:1](=[O:3])O.[O:2][C:4])'), 1),
    ]
    r['alcohol_oxidation'] = [
        (mk('[OX2H1:1][CX4;H1;$(C([CH2][OX2H1])[CH2]O):2]', '[O:1]=[C:2]'), 0, -1),
        (mk('[OX2H1:1][CX4;H2:2]', '[O:1]=[C:2]'), 0),
        (mk('[OX2H1:1][CX4;H1:2]', '[O:1]=[C:2]'), 1),
        (mk('[OX1:1]=[CX3;H1:2][#6:3]', '[O:1]=[C:2](O)[#6:3]'), 2),
    ]
    r['reductive_amination'] = [
        (mk('[OX1]=[CX3;H1:2][#6:3]', '[C:2]([#6:3])N1CCOCC1'), 0),
        (mk('[OX1]=[CX3;H0:2]([#6:3])[#6:4]', '[C:2]([#6:3])([#6:4])N1CCOCC1'), 1),
    ]
    r['eschweiler_clarke'] = [
        (mk(map1(AMINE_ALI_P), '[N:1](C)C'), 1),
        (mk(map1(AMINE_ALI_S), '[N:1]C'), 2),
    ]
    act = '[OX2,NX3;!$([N+]);!$(N=*);!$(N-S(=O)=O);!$(O-C=O);!$(O[Si])]'
    r['aromatic_bromination'] = [
        (mk('[cH;$([cH]1:c:c:c(-' + act + '):c:c1):1]', '[c:1]Br'), 0),
        (mk('[cH;$([cH]:c-' + act + '):1]', '[c:1]Br'), 1),
    ]
    r['dehalogenation'] = [
        (mk('[c:1][Br,I]', '[cH:1]'), 1),
        (mk('[c:1]Cl', '[cH:1]'), 2),
    ]
    return r


NAMES = {}


def canon(m):
    return Chem.MolToSmiles(m)


TE = rdMolStandardize.TautomerEnumerator()
TE.SetRemoveSp3Stereo(False)
TE.SetRemoveBondStereo(False)


def cleanup(smi, strip):
    m = Chem.MolFromSmiles(smi)
    if m is None:
        return None
    try:
        m = TE.Canonicalize(m)
    except Exception:
        pass
    if strip:
        Chem.RemoveStereochemistry(m)
    return Chem.MolToSmiles(m)


def prepare(record, strip):
    m = Chem.MolFromSmiles(record)
    m = rdMolStandardize.Cleanup(m)
    frags = Chem.GetMolFrags(m, asMols=True)
    m = max(frags, key=lambda f: (f.GetNumHeavyAtoms(), Descriptors.MolWt(f)))
    un = rdMolStandardize.Uncharger()
    m = un.uncharge(m)
    m = TE.Canonicalize(m)
    if strip:
        Chem.RemoveStereochemistry(m)
    return Chem.MolToSmiles(m)


def enum_stereo(smi):
    m = Chem.MolFromSmiles(smi)
    opts = StereoEnumerationOptions(onlyUnassigned=True, unique=True)
    out = []
    for x in EnumerateStereoisomers(m, options=opts):
        sx = Chem.MolToSmiles(x)
        if sx not in out:
            out.append(sx)
    return out or [smi]


SMALL = 4


def apply_site_options(smi, rxlist, T):
    """return (level, list of product-smiles-lists) for most reactive available sites"""
    m = Chem.MolFromSmiles(smi)
    best = None
    opts = []
    for item in rxlist:
        rx, lv = item[0], item[1]
        rk = item[2] if len(item) > 2 else 0
        if conv(lv, T) <= 0:
            continue
        try:
            res = rx.RunReactants((m,))
        except Exception:
            continue
        seen = set()
        for prods in res:
            key = []
            for p in prods:
                for a in p.GetAtoms():
                    if a.HasProp('old_mapno') and a.HasProp('react_atom_idx'):
                        key.append(a.GetIntProp('react_atom_idx'))
            key = (id(rx), frozenset(key))
            if key in seen:
                continue
            seen.add(key)
            frags = []
            ok = True
            for p in prods:
                for a in p.GetAtoms():
                    if a.HasProp('old_mapno') and not a.GetIsAromatic():
                        a.SetNumExplicitHs(0)
                        a.SetNoImplicit(False)
                try:
                    Chem.SanitizeMol(p)
                    s = Chem.MolToSmiles(p)
                    s2 = Chem.MolToSmiles(Chem.MolFromSmiles(s))
                except Exception:
                    ok = False
                    break
                for f in s2.split('.'):
                    frags.append(f)
            if not ok:
                continue
            if best is None or (lv, rk) < best:
                best = (lv, rk)
                opts = []
            if (lv, rk) == best:
                opts.append(frags)
    return (best[0] if best else None), opts


def is_free_amine(smi):
    m = Chem.MolFromSmiles(smi)
    for pat in (AMINE_ALI_P, AMINE_ALI_S):
        if m.HasSubstructMatch(Chem.MolFromSmarts(pat)):
            return True
    return False


SIDE = set()
SORTLOC = True


def run_step(species, rxname, T, eq, stereo, RX):
    strip = stereo == 'strip'
    out = {}
    order = []

    def add(s, a):
        if s not in out:
            out[s] = 0.0
            order.append(s)
        out[s] += a

    rxlist = RX[rxname]
    gadd = add
    for smi, amt in species:
        loc = {}

        def add(s, a, loc=loc):
            loc[s] = loc.get(s, 0.0) + a
        if rxname in ('amide_coupling', 'alcohol_oxidation') and is_free_amine(smi):
            continue
        cur = [(smi, amt, True)]
        for rnd in range(eq):
            nxt = []
            for s, a, orig in cur:
                lv, opts = apply_site_options(s, rxlist, T)
                if lv is None or not opts:
                    nxt_keep = (s, a, orig)
                    add_final = True
                    add(s, a) if False else None
                    nxt.append((s, a, orig, 'final'))
                    continue
                p = conv(lv, T)
                nxt.append((s, a * (1 - p), orig, 'final'))
                share = a * p / len(opts)
                for frags in opts:
                    frags = sorted(frags, key=lambda f: -Chem.MolFromSmiles(f).GetNumHeavyAtoms())
                    main = frags[0]
                    nxt.append((main, share, False, 'go'))
                    for f in frags[1:]:
                        if Chem.MolFromSmiles(f).GetNumHeavyAtoms() > SMALL:
                            nxt.append((f, share, 'side', 'final'))
            cur2 = []
            for s, a, orig, st in nxt:
                if st == 'final':
                    fin_add(add, s, a, orig, strip, stereo)
                else:
                    cur2.append((s, a, orig))
            # merge identical
            merged = {}
            mo = []
            for s, a, o in cur2:
                if s not in merged:
                    merged[s] = [0.0, o]
                    mo.append(s)
                merged[s][0] += a
            cur = [(s, merged[s][0], merged[s][1]) for s in mo]
            if not cur:
                break
        for s, a, orig in cur:
            fin_add(add, s, a, orig, strip, stereo)
        keys = sorted(loc, key=lambda k: (k in SIDE, k)) if SORTLOC else sorted(loc, key=lambda k: k in SIDE)
        if smi in loc:
            keys.remove(smi)
            keys = [smi] + keys
        for k in keys:
            gadd(k, loc[k])
    return [(s, out[s]) for s in order]


def fin_add(add, s, a, orig, strip, stereo):
    if orig == 'side':
        c = cleanup(s, strip)
        if c is not None:
            SIDE.add(c)
            add(c, a)
        return
    if orig:
        add(s, a)
        return
    c = cleanup(s, strip)
    if c is None:
        return
    if stereo == 'enumerate':
        iso = enum_stereo(c)
        for x in iso:
            add(x, a / len(iso))
    else:
        add(c, a)


def topn(species, n):
    idx = list(range(len(species)))
    idx.sort(key=lambda i: -round(species[i][1], 9))
    return [species[i] for i in idx[:n] if species[i][1] > 1e-12]


# ---------------- ionisation ----------------
GROUPS = [
    # (smarts, 'A'/'B', pKa)
    ('[CX3](=O)[OX2H1,OX1-]', 'A', 3.5),
    ('[OX2H1]c', 'A', 9.5),
    ('[NX3;H2]S(=O)(=O)', 'A', 9.9),
    ('[NX3;H1](S(=O)(=O))a', 'A', 6.5),
    ('[NX3;$(N1CCOCC1);!$(N-[C,S,P]=[O,S,N]);!$(N-a)]', 'B', 6.5),
    ('[NX3;H2,H1,H0;!$(N-[C,S,P]=[O,S,N]);!$(N-a);!$(N-[S,P]);!$(N-N);!$(N-O);!$(N-C=[C,N]);!$(N#*);!$([N+])]', 'B', 9.8),
    ('[NX3;H2,H1;$(N-a);!$(N(a)a);!$(N-[C,S,P]=[O,S,N]);!$(N-[S,P])]', 'B', 4.6),
    ('[nX2;r6]', 'B', 5.2),
]
GP = [(Chem.MolFromSmarts(s), t, k) for s, t, k in GROUPS]


def ion_groups(m):
    gs = []
    used = set()
    for patt, t, k in GP:
        for match in m.GetSubstructMatches(patt):
            if match[0] in used:
                continue
            used.add(match[0])
            gs.append((t, k))
    return gs


def fneutral(m, pH):
    f = 1.0
    for t, k in ion_groups(m):
        if t == 'A':
            f *= 1.0 / (1.0 + 10 ** (pH - k))
        else:
            f *= 1.0 / (1.0 + 10 ** (k - pH))
    return f


def ionized(m, pH):
    for a in m.GetAtoms():
        if a.GetFormalCharge() > 0 and a.GetSymbol() == 'N' and a.GetTotalNumHs() == 0 and not any(n.GetFormalCharge() < 0 for n in a.GetNeighbors()):
            return True
    for t, k in ion_groups(m):
        if t == 'A' and pH > k:
            return True
        if t == 'B' and pH < k:
            return True
    return False


def charge_at(m, pH):
    q = 0
    for a in m.GetAtoms():
        if a.GetFormalCharge() > 0 and a.GetSymbol() == 'N' and a.GetTotalNumHs() == 0 and not any(n.GetFormalCharge() < 0 for n in a.GetNeighbors()):
            q += 1
    for t, k in ion_groups(m):
        if t == 'A' and pH > k:
            q -= 1
        if t == 'B' and pH < k:
            q += 1
    return q


def logD(m, pH):
    lp = Crippen.MolLogP(m)
    f = fneutral(m, pH)
    if any(a.GetFormalCharge() > 0 and a.GetTotalNumHs() == 0 and a.GetSymbol() == 'N' and not any(n.GetFormalCharge() < 0 for n in a.GetNeighbors()) for a in m.GetAtoms()):
        f = 0.0
    return (10 ** lp) * f


def nostereo(s):
    m = Chem.MolFromSmiles(s)
    Chem.RemoveStereochemistry(m)
    return Chem.MolToSmiles(m)


def main():
    sc = json.load(sys.stdin)
    P = sc['parameters']
    route, record = P['case'].split(': ', 1)
    T = int(P['temperature'])
    eq = int(P['equivalents'])
    nmax = int(P['max_products'])
    stereo = P['stereochemistry']
    pH = float(P['workup_ph'])
    R_ = int(P['fingerprint_radius'])
    steps = STEPS[route]
    RX = build()
    sm = prepare(record, stereo == 'strip')
    species = [(sm, 100.0)]
    for i, st in enumerate(steps):
        if i > 0:
            species = topn(species, nmax)
        species = run_step(species, st, T, eq, stereo, RX)
    species = [x for x in species if x[1] > 1e-12]
    crude = sum(a for s, a in species)
    n_species = len(species)
    # workup
    info = []
    for s, a in species:
        m = Chem.MolFromSmiles(s)
        D = logD(m, pH)
        info.append((s, a, D, m))
    info = [(s, a, D, m, (not ionized(m, pH)) and Crippen.MolLogP(m) > 0) for s, a, D, m in info]
    smk = nostereo(sm)
    prodsO = [(s, a) for s, a, D, m, org in info if nostereo(s) != smk and org]
    prodsA = [(s, a) for s, a, D, m, org in info if nostereo(s) != smk and not org]
    out = dict(charge=0, crude_pct=round(crude, 6), fp_on=0, hba=0, hbd=0, isolated_pct=0.0,
               isolated_purity_pct=0.0, kept_pct=0.0, logp=0.0, mw=0.0, n_products=0,
               n_species=n_species, phase='none', products=[], purity_pct=0.0, qed=0.0,
               selected=[], tpsa=0.0, yield_pct=0.0)
    if not prodsO and not prodsA:
        print(json.dumps(out))
        return
    sO = sum(a for s, a in prodsO)
    sA = sum(a for s, a in prodsA)
    phase = 'organic' if sO >= sA else 'aqueous'
    if sO == sA and sO > 0:
        phase = 'organic' if max(a for s, a in prodsO) >= max(a for s, a in prodsA) else 'aqueous'
    kept = prodsO if phase == 'organic' else prodsA
    kept = sorted(kept, key=lambda x: (-round(x[1], 9), x[0] in SIDE, x[0]))[:nmax]
    top, ya = kept[0]
    allphase = sum(a for s, a, D, m, org in info if org == (phase == 'organic'))
    purity = 100.0 * ya / allphase if allphase > 0 else 0.0
    # isolation
    kept_amt = 0.0
    iso_top = 0.0
    for s, a, D, m, org in info:
        q = 1.0 / (1.0 + D)
        fr = (1 - q ** 3) if phase == 'organic' else q ** 3
        kept_amt += a * fr
        if s == top:
            iso_top = a * fr
    m = Chem.MolFromSmiles(top)
    out.update(
        charge=charge_at(m, pH), fp_on=AllChem.GetMorganFingerprintAsBitVect(m, R_, 1024).GetNumOnBits(),
        hba=Lipinski.NOCount(m), hbd=Lipinski.NHOHCount(m), isolated_pct=iso_top,
        isolated_purity_pct=100.0 * iso_top / kept_amt if kept_amt > 0 else 0.0,
        kept_pct=kept_amt, logp=Crippen.MolLogP(m), mw=Descriptors.MolWt(m), n_products=len(kept),
        phase=phase, products=[s for s, a in kept], purity_pct=purity, qed=QED.qed(m),
        selected=[top], tpsa=rdMolDescriptors.CalcTPSA(m, includeSandP=True), yield_pct=ya)
    print(json.dumps(out))


STEPS = {
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
    try:
        main()
    except Exception as e:
        import traceback
        traceback.print_exc()
        print(json.dumps(dict(charge=0, crude_pct=100.0, fp_on=0, hba=0, hbd=0, isolated_pct=0.0,
                              isolated_purity_pct=0.0, kept_pct=0.0, logp=0.0, mw=0.0, n_products=0,
                              n_species=1, phase='none', products=[], purity_pct=0.0, qed=0.0,
                              selected=[], tpsa=0.0, yield_pct=0.0)))
