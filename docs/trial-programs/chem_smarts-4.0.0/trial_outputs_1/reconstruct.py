import sys, json
from rdkit import Chem, RDLogger
from rdkit.Chem import AllChem, Descriptors, Crippen, rdMolDescriptors, QED
from rdkit.Chem.MolStandardize import rdMolStandardize
from rdkit.Chem.EnumerateStereoisomers import EnumerateStereoisomers, StereoEnumerationOptions

RDLogger.DisableLog('rdApp.*')

_TE = None
_pat = {}


def P(s):
    if s not in _pat:
        _pat[s] = Chem.MolFromSmarts(s)
    return _pat[s]


def taut(m):
    global _TE
    if _TE is None:
        ps = rdMolStandardize.CleanupParameters()
        try:
            ps.tautomerRemoveSp3Stereo = False
            ps.tautomerRemoveBondStereo = False
        except Exception:
            pass
        _TE = rdMolStandardize.TautomerEnumerator(ps)
    try:
        return _TE.Canonicalize(m)
    except Exception:
        return m


def neutralize(mol):
    pat = Chem.MolFromSmarts("[+1!h0!$([*]~[-1,-2,-3,-4]),-1!$([*]~[+1,+2,+3,+4])]")
    mol = Chem.RWMol(mol)
    for (i,) in mol.GetSubstructMatches(pat):
        a = mol.GetAtomWithIdx(i)
        ch = a.GetFormalCharge()
        hc = a.GetTotalNumHs()
        a.SetFormalCharge(0)
        a.SetNumExplicitHs(hc - ch)
        a.UpdatePropertyCache()
    m = mol.GetMol()
    Chem.SanitizeMol(m)
    return m


def prepare(smi, stereo):
    m = Chem.MolFromSmiles(smi)
    m = rdMolStandardize.Cleanup(m)
    frags = Chem.GetMolFrags(m, asMols=True)
    m = max(frags, key=lambda f: f.GetNumHeavyAtoms())
    m = neutralize(m)
    m = taut(m)
    if stereo == 'strip':
        Chem.RemoveStereochemistry(m)
    return Chem.MolToSmiles(m)


# ---------------- reactions -----------------
AMINE_PRIM = '[NX3;H2;!$(N-[C,S,P]=[O,S,N]);!$(N-a);!$(N-[N,O,S]);!$(N-C=[C,N])]'
AMINE_SEC = '[NX3;H1;!$(N-[C,S,P]=[O,S,N]);!$(N-a);!$(N-[N,O,S]);!$(N-C=[C,N])]'
ANILINE = '[NX3;H2,H1;$(N-c);!$(N-[C,S,P]=[O,S,N]);!$(N-[N,O,S])]'
# rules: (reaction smarts, offset)
RULES = {
    'boc_protection': [
        ('[NX3;H2;!$(N-[C,S,P]=[O,S,N]);!$(N-a);!$(N-[N,O,S]);!$(N-C=[C,N]):1]>>[N:1]C(=O)OC(C)(C)C', 0),
        ('[NX3;H1;!$(N-[C,S,P]=[O,S,N]);!$(N-a);!$(N-[N,O,S]);!$(N-C=[C,N]):1]>>[N:1]C(=O)OC(C)(C)C', -1),
        ('[NX3;H2,H1;$(N-c);!$(N(-a)-a);!$(N-[C,S,P]=[O,S,N]);!$(N-[N,O,S]):1]>>[N:1]C(=O)OC(C)(C)C', -2)],
    'boc_deprotection': [('[N:1]C(=O)OC([CH3])([CH3])[CH3]>>[N:1]', 0)],
    'tbs_protection': [
        ('[OX2H1:1]-[CH2;!$(C=*):2]>>[C:2]-[O:1][Si](C)(C)C(C)(C)C', 0),
        ('[OX2H1:1]-[c:2]>>[c:2]-[O:1][Si](C)(C)C(C)(C)C', -1),
        ('[OX2H1:1]-[CH1;!$(C=*):2]>>[C:2]-[O:1][Si](C)(C)C(C)(C)C', -2)],
    'tbs_deprotection': [('[#6:2]-[O:1][Si](C)(C)C(C)(C)C>>[#6:2]-[O:1]', 0)],
    'esterification': [('[CX3:1](=[O:2])[OX2H1]>>[C:1](=[O:2])OC', -1)],
    'amide_coupling': [('[CX3:1](=[O:2])[OX2H1]>>[C:1](=[O:2])NCc1ccccc1', 0)],
    'lialh4_reduction': [
        ('[CX3:1](=O)[OX2H1]>>[CH2:1]O', -1),
        ('[CX3:1](=O)!@[OX2:3][#6;!$(C=O):4]>>[CH2:1]O.[O:3][#6:4]', -1),
        ('[CX3;!$(C-[O,N,S]):1]=[O:2]>>[CH:1][O:2]', 0),
        ('[CX3:1](=O)([#6:3])[NX3:2]>>[CH2:1]([#6:3])[N:2]', -2)],
    'nitro_reduction': [('[N+:1](=O)[O-]>>[NH2+0:1]', -1), ('[c:1]Br>>[cH:1]', -2), ('[c:1]I>>[cH:1]', -1)],
    'acetylation': [
        ('[NX3;H2,H1;!$(N-[C,S,P]=[O,S,N]);!$(N-a);!$(N-[N,O,S]);!$(N-C=[C,N]):1]>>[N:1]C(C)=O', 0),
        ('[NX3;H2,H1;$(N-a);!$(N-[C,S,P]=[O,S,N]);!$(N-[N,O,S]):1]>>[N:1]C(C)=O', -1),
        ('[OX2H1;$(O-[CH2,c]);!$(O-C=[O,N,S]):1]>>[O:1]C(C)=O', -2),
        ('[OX2H1;$(O-[CH1,CH0;X4]);!$(O-C=[O,N,S]):1]>>[O:1]C(C)=O', -2.1)],
    'ester_hydrolysis': [
        ('[CX3:1](=[O:2])!@[OX2:3][c:4]>>[C:1](=[O:2])O.[O:3][c:4]', 0),
        ('[CX3:1](=[O:2])!@[OX2:3][CX4:4]>>[C:1](=[O:2])O.[O:3][C:4]', -1)],
    'alcohol_oxidation': [
        ('[CH2;!$(C=*):1][OH:2]>>[CH1:1]=[O:2]', 0),
        ('[CH1;!$(C=*);$(C([#6])[#6]):1]-[OH:2]>>[CH0:1]=[O:2]', -1)],
    'reductive_amination': [
        ('[CX3H1:1](=O)[#6:2]>>[C:1]([#6:2])N1CCOCC1', 0),
        ('[CX3H0:1](=O)([#6:2])[#6:3]>>[C:1]([#6:2])([#6:3])N1CCOCC1', -1)],
    'eschweiler_clarke': [
        ('[NX3;H2;!$(N-[C,S,P]=[O,S,N]);!$(N-a);!$(N-[N,O,S]);!$(N-C=[C,N]):1]>>[N:1](C)C', -1),
        ('[NX3;H1;!$(N-[C,S,P]=[O,S,N]);!$(N-a);!$(N-[N,O,S]);!$(N-C=[C,N]):1]>>[N:1]C', -2)],
    'dehalogenation': [('[c:1]I>>[cH:1]', 0), ('[c:1]Br>>[cH:1]', -1), ('[c:1]Cl>>[cH:1]', -2)],
}

_rxcache = {}


def get_rxn(s):
    r = _rxcache.get(s)
    if r is None:
        r = AllChem.ReactionFromSmarts(s)
        _rxcache[s] = r
    return r


def canon(m):
    try:
        m = Chem.Mol(m)
        Chem.SanitizeMol(m)
        return Chem.MolToSmiles(m)
    except Exception:
        return None


def activators(m):
    acts = []  # (atom idx of ring carbon, is_OH)
    for a in m.GetAtoms():
        if not a.GetIsAromatic() or a.GetSymbol() != 'C':
            continue
        for nb in a.GetNeighbors():
            if nb.GetIsAromatic():
                continue
            s = nb.GetSymbol()
            if s == 'O':
                if nb.GetTotalNumHs() == 1:
                    acts.append((a.GetIdx(), True))
                else:
                    other = [x for x in nb.GetNeighbors() if x.GetIdx() != a.GetIdx()]
                    if other and not any(b.GetBondType() == Chem.BondType.DOUBLE for b in other[0].GetBonds()) and other[0].GetSymbol() == 'C':
                        acts.append((a.GetIdx(), False))
            elif s == 'N' and nb.GetFormalCharge() == 0:
                if any(x.GetSymbol() == 'S' for x in nb.GetNeighbors()):
                    continue
                acts.append((a.GetIdx(), False))
    return acts


def brom_sites(smi):
    m = Chem.MolFromSmiles(smi)
    ri = m.GetRingInfo()
    acts = activators(m)
    res = []  # (idx, para?, ohortho)
    for ring in ri.AtomRings():
        if len(ring) != 6 or not all(m.GetAtomWithIdx(i).GetIsAromatic() and m.GetAtomWithIdx(i).GetSymbol() == 'C' for i in ring):
            continue
        ring = list(ring)
        for k, i in enumerate(ring):
            a = m.GetAtomWithIdx(i)
            if a.GetTotalNumHs() != 1:
                continue
            para = False; ortho = False; ohortho = False
            for (ai, isoh) in acts:
                if ai not in ring:
                    continue
                d = (ring.index(ai) - k) % 6
                d = min(d, 6 - d)
                if d == 3:
                    para = True
                elif d == 1:
                    ortho = True
                    if isoh:
                        ohortho = True
            if para or ortho:
                res.append((i, para, ohortho))
    if not res:
        return []
    if any(p for _, p, _ in res):
        sel = [r for r in res if r[1]]
        off = 0
    else:
        sel = res
        off = 0 if any(o for _, _, o in res) else -1
    out = []
    for i, _, _ in sel:
        rw = Chem.RWMol(m)
        nb = rw.AddAtom(Chem.Atom(35))
        rw.AddBond(i, nb, Chem.BondType.SINGLE)
        rw.GetAtomWithIdx(i).SetNumExplicitHs(0)
        c = canon(rw)
        if c and c not in out:
            out.append(c)
    return [(off, out)]


def sites(smi, tname):
    """list of (offset, [products])"""
    if tname == 'aromatic_bromination':
        return brom_sites(smi)
    m = Chem.MolFromSmiles(smi)
    res = []
    for rs, off in RULES[tname]:
        r = get_rxn(rs)
        try:
            ps = r.RunReactants((m,))
        except Exception:
            ps = []
        out = []
        for p in ps:
            cs = [canon(x) for x in p]
            if any(x is None for x in cs):
                continue
            c = '.'.join(cs)
            try:
                c = Chem.MolToSmiles(Chem.MolFromSmiles(c))
            except Exception:
                continue
            if c and c not in out and c != smi:
                out.append(c)
        if out:
            res.append((off, out))
    if tname in ('ester_hydrolysis', 'lialh4_reduction'):
        lac = {}
        for mt in m.GetSubstructMatches(P('[CX3](=O)@[OX2]@[#6]')):
            c1, o2, o3, c4 = mt
            rw = Chem.RWMol(m)
            rw.RemoveBond(c1, o3)
            if tname == 'ester_hydrolysis':
                nO = rw.AddAtom(Chem.Atom(8))
                rw.AddBond(c1, nO, Chem.BondType.SINGLE)
                off = 0 if m.GetAtomWithIdx(c4).GetIsAromatic() else -1
            else:
                rw.GetBondBetweenAtoms(c1, o2).SetBondType(Chem.BondType.SINGLE)
                rw.GetAtomWithIdx(c1).SetNumExplicitHs(2)
                rw.GetAtomWithIdx(c1).SetChiralTag(Chem.ChiralType.CHI_UNSPECIFIED)
                off = -1
            for idx in (c1, o2, o3):
                rw.GetAtomWithIdx(idx).SetNoImplicit(False)
                rw.GetAtomWithIdx(idx).SetIsAromatic(False)
            c = canon(rw)
            if c:
                try:
                    c = Chem.MolToSmiles(Chem.MolFromSmiles(c))
                except Exception:
                    continue
                lac.setdefault(off, [])
                if c not in lac[off]:
                    lac[off].append(c)
        for off, ps in lac.items():
            res.append((off, ps))
    return res


LEVEL = {0: 1, 25: 2, 80: 3}
CONVL = {1: 0.6, 2: 0.8, 3: 0.95}


def rate(T, off):
    L = LEVEL[T] + int(off)
    if L <= 0:
        return 0.0
    return CONVL[min(L, 3)]


BYPROD_MAXHEAVY = 4


def expand_stereo(smi):
    m = Chem.MolFromSmiles(smi)
    opts = StereoEnumerationOptions(onlyUnassigned=True, unique=True)
    isos = [Chem.MolToSmiles(x) for x in EnumerateStereoisomers(m, options=opts)]
    isos = list(dict.fromkeys(isos))
    return isos or [smi]


def has_free_amine(smi):
    m = Chem.MolFromSmiles(smi)
    return m.HasSubstructMatch(P(AMINE_PRIM)) or m.HasSubstructMatch(P(AMINE_SEC))


def clean(smi, stereo):
    m = Chem.MolFromSmiles(smi)
    m = taut(m)
    if stereo == 'strip':
        Chem.RemoveStereochemistry(m)
    return Chem.MolToSmiles(m)


def run_step(pool, tname, T, eq, stereo):
    out = {}

    def add(k, v):
        out[k] = out.get(k, 0.0) + v

    def react(smi, amt, k, depth):
        if k <= 0:
            add(smi, amt); return
        ss = [(o, ps) for o, ps in sites(smi, tname) if rate(T, o) > 0]
        if not ss:
            add(smi, amt); return
        best = max(o for o, _ in ss)
        prods = []
        for o, ps in ss:
            if o == best:
                for p in ps:
                    if p not in prods:
                        prods.append(p)
        c = rate(T, best)
        add(smi, amt * (1 - c))
        share = amt * c / len(prods)
        for p in prods:
            frags = p.split('.')
            frags.sort(key=lambda f: -Chem.MolFromSmiles(f).GetNumHeavyAtoms())
            main = clean(frags[0], stereo)
            for f in frags[1:]:
                fm = Chem.MolFromSmiles(f)
                if fm.GetNumHeavyAtoms() > BYPROD_MAXHEAVY:
                    byp[clean(f, stereo)] = byp.get(clean(f, stereo), 0.0) + share
            react(main, share, k - 1, depth + 1)

    byp = {}
    for smi, amt in pool.items():
        if amt <= 0:
            continue
        if tname in ('amide_coupling', 'alcohol_oxidation') and has_free_amine(smi):
            continue  # oligomerises / lost
        react(smi, amt, eq, 0)
    for k, v in byp.items():
        out[k] = out.get(k, 0.0) + v
    if stereo == 'enumerate':
        out2 = {}
        for smi, amt in out.items():
            if smi in pool:
                out2[smi] = out2.get(smi, 0.0) + amt
                continue
            isos = expand_stereo(smi)
            for s in isos:
                out2[s] = out2.get(s, 0.0) + amt / len(isos)
        out = out2
    return out


def topn(pool, n):
    items = sorted(pool.items(), key=lambda kv: (-round(kv[1], 9), kv[0]))
    return dict(items[:n])


# ------------- pKa / charge ----------------
ACIDS = [
    ('[CX3](=O)[OX2H1]', 3.8),
    ('[SX4](=O)(=O)[NX3H1]a', 6.5),
    ('[SX4](=O)(=O)[NX3H2]', 9.8),
    ('[OX2H1]c', 9.5),
    ('[#6](=O)[nH,NH][#6]=O', 9.8),
]
BASES = [
    ('[NX3;H2,H1,H0;!$(N-[C,S,P]=[O,S,N]);!$(N-a);!$(N-[N,O]);!$(N-C=[C,N]);!$(N1CCOCC1)]', 9.8),
    ('[NX3;$(N1CCOCC1);!$(N-[C,S,P]=[O,S,N])]', 6.8),
    ('[NX3;H2,H1;!$(N-[C,S,P]=[O,S,N]);$(N-c);!$(N(-a)-a);!$(N-[N,O])]', 4.6),
]


def charge_at(smi, pH, ionised=False):
    m = Chem.MolFromSmiles(smi)
    q = 0
    for a in m.GetAtoms():
        if a.GetFormalCharge() > 0 and a.GetSymbol() == 'N' and a.GetTotalNumHs() == 0:
            # quaternary, but not nitro
            if not any(nb.GetFormalCharge() < 0 for nb in a.GetNeighbors()):
                q += 1
    nion = abs(q)
    for s, pk in ACIDS:
        if pH > pk:
            n = len(m.GetSubstructMatches(P(s)))
            q -= n
            nion += n
    for s, pk in BASES:
        if pH < pk:
            n = len(m.GetSubstructMatches(P(s)))
            q += n
            nion += n
    if ionised:
        return nion
    return q


def phase_of(smi, pH):
    q = charge_at(smi, pH, True)
    if q != 0:
        return 'aqueous'
    m = Chem.MolFromSmiles(smi)
    return 'organic' if Crippen.MolLogP(m) > 0 else 'aqueous'


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
    p = sc['parameters']
    route, rec = p['case'].split(': ', 1)
    eq = int(p['equivalents'])
    T = int(p['temperature'])
    mp = int(p['max_products'])
    stereo = p['stereochemistry']
    pH = float(p['workup_ph'])
    rad = int(p['fingerprint_radius'])
    steps = ROUTES[route]
    sm = prepare(rec, stereo)
    pool = {sm: 100.0}
    for i, t in enumerate(steps):
        pool = run_step(pool, t, T, eq, stereo)
        pool = {k: v for k, v in pool.items() if v > 1e-9}
        if i < len(steps) - 1:
            pool = topn(pool, mp)
    crude = sum(pool.values())
    nsp = len(pool)
    phases = {'organic': {}, 'aqueous': {}}
    for smi, a in pool.items():
        phases[phase_of(smi, pH)][smi] = a
    prodamt = {ph: sum(a for s, a in d.items() if s != sm) for ph, d in phases.items()}
    out = dict(charge=0, crude_pct=round(crude, 6), fp_on=0, hba=0, hbd=0, logp=0.0, mw=0.0,
               n_products=0, n_species=nsp, phase='none', products=[], purity_pct=0.0, qed=0.0,
               selected=[], tpsa=0.0, yield_pct=0.0)
    if max(prodamt.values()) > 1e-9:
        ph = 'organic' if prodamt['organic'] >= prodamt['aqueous'] else 'aqueous'
        d = phases[ph]
        prods = topn({s: a for s, a in d.items() if s != sm}, mp)
        order = sorted(prods.items(), key=lambda kv: (-round(kv[1], 9), kv[0]))
        top, ya = order[0]
        tot = sum(d.values())
        m = Chem.MolFromSmiles(top)
        fp = AllChem.GetMorganFingerprintAsBitVect(m, rad, nBits=1024)
        out.update(charge=charge_at(top, pH), fp_on=fp.GetNumOnBits(),
                   hba=rdMolDescriptors.CalcNumLipinskiHBA(m), hbd=rdMolDescriptors.CalcNumLipinskiHBD(m),
                   logp=round(Crippen.MolLogP(m), 6), mw=round(Descriptors.MolWt(m), 6),
                   n_products=len(order), phase=ph, products=[s for s, _ in order],
                   purity_pct=round(100.0 * ya / tot, 6), qed=round(QED.qed(m), 6),
                   selected=[top], tpsa=round(rdMolDescriptors.CalcTPSA(m, includeSandP=True), 6),
                   yield_pct=round(ya, 6))
    _with_isolation(out, pool, out["phase"], (out["selected"] or [None])[0], pH)
    print(json.dumps(out))


ROUTES = {}
_T = {
    'boc_esterify_deprotect': ['boc_protection', 'esterification', 'boc_deprotection'],
}


def _load_routes():
    import os, glob
    here = os.path.dirname(os.path.abspath(__file__))
    RT = {
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
    ROUTES.update(RT)


_load_routes()

if __name__ == '__main__':
    _raw = sys.stdin.read()
    try:
        sys.stdin = __import__('io').StringIO(_raw)
        main()
    except Exception:
        print(json.dumps(dict(charge=0, crude_pct=100.0, fp_on=0, hba=0, hbd=0, logp=0.0, mw=0.0,
                              n_products=0, n_species=1, phase='none', products=[], purity_pct=0.0,
                              qed=0.0, selected=[], tpsa=0.0, yield_pct=0.0, isolated_pct=0.0, isolated_purity_pct=0.0, kept_pct=0.0)))
