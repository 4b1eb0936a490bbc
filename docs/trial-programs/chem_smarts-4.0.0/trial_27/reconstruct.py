import sys, json, math, itertools
from rdkit import Chem, RDLogger
from rdkit.Chem import AllChem, Descriptors, Crippen, rdMolDescriptors, QED, Lipinski
from rdkit.Chem.MolStandardize import rdMolStandardize
from rdkit.Chem.EnumerateStereoisomers import EnumerateStereoisomers, StereoEnumerationOptions
RDLogger.DisableLog('rdApp.*')

CONV = {0: 0.6, 25: 0.8, 80: 0.95}

TBS = 'O[Si](C)(C)C(C)(C)C'
BOC = 'C(=O)OC(C)(C)C'

# each transformation: list of (smarts reaction, min temperature)
RXN = {
    'boc_protection': [('[NX3;H2,H1;!$(N-C=[O,S,N]);!$(N-S(=O)=O);!$(N-a:n);!$([N]-[N]);!$(N=*);!$(N#*):1]>>[N:1]C(=O)OC(C)(C)C', 0)],
    'boc_deprotection': [('[N:1]C(=O)OC(C)(C)C>>[N:1]', 0)],
    'tbs_protection': [('[OX2H1:1][CH2:2]>>[C:2][O:1][Si](C)(C)C(C)(C)C', 0), ('[OX2H1:1][c:2]>>[c:2][O:1][Si](C)(C)C(C)(C)C', 25), ('[OX2H1:1][CX4;H1,H0:2]>>[C:2][O:1][Si](C)(C)C(C)(C)C', 80)],
    'tbs_deprotection': [('[O:1][Si](C)(C)C(C)(C)C>>[O:1]', 0)],
    'esterification': [('[CX3:1](=[O:2])[OX2H1]>>[C:1](=[O:2])OC', 25)],
    'amide_coupling': [('[CX3:1](=[O:2])[OX2H1]>>[C:1](=[O:2])NCc1ccccc1', 0)],
    'lialh4_reduction': [('[CX3:1](=O)[OX2:3][#6:2]>>([CH2:1]O.[O:3][#6:2])', 25),
                         ('[CX3:1](=O)[OX2H1]>>[CH2:1]O', 25),
                         ('[CX3;!$(C(N)(N)=O):1](=O)[NX3:2]>>[CH2:1][N:2]', 80)],
    'nitro_reduction': [('[c,C:1][N+](=O)[O-]>>[*:1]N', 25), ('[c:1]Br>>[c:1]', 80)],
    'acetylation': [('[NX3;H2,H1;!$(N-C=[O,S,N]);!$(N-S(=O)=O);!$(N-a);!$(N=*):1]>>[N:1]C(C)=O', 0),
                    ('[NX3;H2,H1;!$(N-C=[O,S,N]);!$(N-S(=O)=O);$(N-a);!$(N-a:n);!$(N=*):1]>>[N:1]C(C)=O', 25),
                    ('[NX3;H2;$(N-a:n):1]>>[N:1]C(C)=O', 25),
                    ('[OX2H1:1][CH2:2]>>[C:2][O:1]C(C)=O', 25),
                    ('[OX2H1:1][CX4;H1,H0:2]>>[C:2][O:1]C(C)=O', 80),
                    ('[OX2H1:1][c:2]>>[c:2][O:1]C(C)=O', 80)],
    'ester_hydrolysis': [('[CX3:1](=[O:2])[OX2:4][#6:3]>>([C:1](=[O:2])O.[O:4][#6:3])', 25)],
    'alcohol_oxidation': [('[OX2H1:1][CX4;H2:2]>>[O:1]=[CH1:2]', 0), ('[OX2H1:1][CX4;H1:2]>>[O:1]=[CH0:2]', 25),
                          ('[CX3;H1;!$(C(=O)[O,N,S]):1]=[O:2]>>[C:1](=[O:2])O', 80)],
    'reductive_amination': [('[CX3;H1;$(C([#6])=O);!$(C(=O)[O,N,S]):1]=O>>[C:1]N1CCOCC1', 0),
                            ('[CX3;H0;$(C([#6])([#6])=O);!$(C(=O)[O,N,S]):1]=O>>[C:1]N1CCOCC1', 25)],
    'eschweiler_clarke': [('[NX3;H2;!$(N-C=[O,S,N]);!$(N-S(=O)=O);!$(N-a);!$(N=*):1]>>[N:1](C)C', 25), ('[NX3;H1;!$(N-C=[O,S,N]);!$(N-S(=O)=O);!$(N-a);!$(N=*):1]>>[N:1]C', 25)],
    'aromatic_bromination': [('BROM', 0)],
    'dehalogenation': [('[c:1][Cl,Br,I]>>[c:1]', 80)],
}

_rxcache = {}


def rxn(sm):
    if sm not in _rxcache:
        _rxcache[sm] = AllChem.ReactionFromSmarts(sm)
    return _rxcache[sm]

_te = None


def canon(m):
    try:
        m = Chem.Mol(m)
        Chem.SanitizeMol(m)
        return Chem.MolToSmiles(m)
    except Exception:
        return None


def parent(smi):
    m = Chem.MolFromSmiles(smi)
    frags = Chem.GetMolFrags(m, asMols=True)
    frags = sorted(frags, key=lambda f: -f.GetNumHeavyAtoms())
    m = frags[0]
    un = rdMolStandardize.Uncharger()
    m = un.uncharge(m)
    try:
        te = rdMolStandardize.TautomerEnumerator()
        te.SetRemoveSp3Stereo(False)
        te.SetRemoveBondStereo(False)
        m2 = te.Canonicalize(m)
        m = m2
    except Exception:
        pass
    return Chem.MolToSmiles(m)


def sites(smi, sm):
    m = Chem.MolFromSmiles(smi)
    r = rxn(sm)
    patt = r.GetReactantTemplate(0)
    return m, len(m.GetSubstructMatches(patt))


def apply_once(smi, sm):
    """all distinct single-site products (main fragment)"""
    m = Chem.MolFromSmiles(smi)
    r = rxn(sm)
    outs = set()
    try:
        ps = r.RunReactants((m,))
    except Exception:
        return []
    for p in ps:
        frs = []
        for x in p:
            try:
                x = Chem.Mol(x)
                Chem.SanitizeMol(x)
                s = Chem.MolToSmiles(x)
            except Exception:
                continue
            for f in s.split('.'):
                frs.append(f)
        if not frs:
            continue
        keep = tuple(sorted(f2 for f2 in frs if f2 not in BYP and Chem.MolFromSmiles(f2).GetNumHeavyAtoms() > 4))
        if not keep:
            frs.sort(key=lambda f: -Chem.MolFromSmiles(f).GetNumHeavyAtoms())
            keep = (frs[0],)
        outs.add(keep)
    return sorted(outs)

BYP = set(Chem.MolToSmiles(Chem.MolFromSmiles(x)) for x in ['CC(C)(C)O', 'CC(C)(C)[Si](C)(C)O', 'OC(=O)O', 'CC(=O)O', 'CCO', 'CO'])


LADDER = [0.0, 0.6, 0.8, 0.95]
TIDX = {0: 0, 25: 1, 80: 2}


def conv(T, tmin):
    off = TIDX.get(tmin, 0)
    i = TIDX[T] + 1 - off
    return LADDER[max(0, min(3, i))]


def single(s, rules):
    """list of (product tuple) with multiplicity, one per matched site"""
    out = []
    m = Chem.MolFromSmiles(s)
    for r, tmin, f in rules:
        if r == 'BROM':
            out += brom_products(m, f)
            continue
        if 'NCc1ccccc1' in r and m.HasSubstructMatch(FREEAMINE):
            continue
        rx = rxn(r)
        try:
            ps = rx.RunReactants((m,))
        except Exception:
            continue
        if not ps:
            continue
        u = len(m.GetSubstructMatches(rx.GetReactantTemplate(0), uniquify=True))
        wgt = u / len(ps)
        for p in ps:
            frs = []
            ok = True
            for x in p:
                try:
                    x = Chem.Mol(x)
                    Chem.SanitizeMol(x)
                    frs += Chem.MolToSmiles(x).split('.')
                except Exception:
                    ok = False
            if not ok or not frs:
                continue
            keep = [f2 for f2 in frs if f2 not in BYP and Chem.MolFromSmiles(f2).GetNumHeavyAtoms() > 4]
            if not keep:
                frs.sort(key=lambda f2: -Chem.MolFromSmiles(f2).GetNumHeavyAtoms())
                keep = [frs[0]]
            keep = [Chem.MolToSmiles(Chem.MolFromSmiles(k)) for k in keep]
            out.append((tuple(keep), f, wgt))
    return out


def react_species(smi, rules, eq):
    """independent sites, each converting with prob f; at most eq sites."""
    # BFS over levels on main molecule; side fragments credited
    lvl = {smi: 1.0}  # path counts
    res = {}
    side = {}
    levels = [dict(lvl)]
    fvals = []
    cur = {smi: 1.0}
    allf = []
    for j in range(1, 8):
        nxt = {}
        for s, cnt in cur.items():
            for keep, f, wgt in single(s, rules):
                main = max(keep, key=lambda k: Chem.MolFromSmiles(k).GetNumHeavyAtoms())
                nxt[main] = nxt.get(main, 0) + cnt * wgt
                allf.append(f)
                for k in keep:
                    if k != main:
                        side.setdefault(j, {}).setdefault(main, []).append(k)
        if not nxt:
            break
        levels.append(nxt)
        cur = nxt
    k = len(levels) - 1
    if k == 0:
        return None
    f = max(allf) if allf else 0.0
    if f <= 0:
        return None
    top = min(eq, k)
    subs = []
    fact = 1
    for j in range(1, top + 1):
        fact *= j
        subs.append({s: c / fact for s, c in levels[j].items()})
    out = {smi: 1 - f}
    full = subs[top - 1]
    tf = sum(full.values())
    for s, c in full.items():
        out[s] = out.get(s, 0) + (f ** top) * c / tf
    if top > 1:
        tp = sum(sum(d.values()) for d in subs[:top - 1])
        for d in subs[:top - 1]:
            for s, c in d.items():
                out[s] = out.get(s, 0) + (f - f ** top) * c / tp
    sides = {}
    for j, dd in side.items():
        for mn, lst in dd.items():
            for x in set(lst):
                sides[x] = sides.get(x, 0) + out.get(mn, 0)
    return out, sides


ACT = Chem.MolFromSmarts('[c;r6]-[OX2,NX3;!$([N+]);!$(N(=O));!$(O-C=O);!$(O-[Si])]')
ALK = Chem.MolFromSmarts('[c;r6]-[CX4]')
STRONG = Chem.MolFromSmarts('[c;r6]-[OX2H1,NX3H2]')
EWG = Chem.MolFromSmarts('[c;r6]-[$(S(=O)=O),$(C=O),$(C#N),$([N+](=O)[O-])]')


def benz_rings(m):
    ri = m.GetRingInfo()
    out = []
    for ring in ri.AtomRings():
        if len(ring) == 6 and all(m.GetAtomWithIdx(i).GetSymbol() == 'C' and m.GetAtomWithIdx(i).GetIsAromatic() for i in ring):
            out.append(ring)
    return out


def brom_sites(m):
    """returns list of (atom idx, tmin)"""
    res = []
    acts = [(a, b) for a, b in m.GetSubstructMatches(ACT)]
    strong = set(a for a, b in m.GetSubstructMatches(STRONG))
    ewg = set(a for a, b in m.GetSubstructMatches(EWG))
    for ring in benz_rings(m):
        rs = list(ring)
        ract = [a for a, b in acts if a in rs]
        if not ract:
            continue
        nstrong = len([a for a in ract if a in strong])
        hasewg = any(a in ewg for a in rs)
        nalk = len([a for a, b in m.GetSubstructMatches(ALK) if a in rs])
        tmin = 80 if hasewg else (0 if len(ract) + nalk >= 3 else 25)
        n = len(rs)
        def rel(i, j):
            d = abs(rs.index(i) - rs.index(j)); return min(d, n - d)
        cands = []
        for i in rs:
            at = m.GetAtomWithIdx(i)
            if at.GetTotalNumHs() != 1:
                continue
            # neighbours in ring substituted?
            nb = [x.GetIdx() for x in at.GetNeighbors() if x.GetIdx() in rs]
            subs = [x for x in nb if m.GetAtomWithIdx(x).GetTotalNumHs() == 0]
            if len(subs) >= 2:
                continue
            para = any(rel(i, a) == 3 for a in ract)
            ortho = any(rel(i, a) == 1 for a in ract)
            if para or ortho:
                cands.append((i, para))
        if any(p for i, p in cands):
            cands = [(i, p) for i, p in cands if p]
        res += [(i, tmin) for i, p in cands]
    return res


def brom_products(m, fdummy):
    out = []
    T = CURT[0]
    for i, tmin in brom_sites(m):
        f = conv(T, tmin)
        if f <= 0:
            continue
        rw = Chem.RWMol(m)
        a = rw.GetAtomWithIdx(i)
        a.SetNumExplicitHs(0)
        a.SetNoImplicit(False)
        j = rw.AddAtom(Chem.Atom(35))
        rw.AddBond(i, j, Chem.BondType.SINGLE)
        try:
            x = rw.GetMol()
            Chem.SanitizeMol(x)
            out.append(((Chem.MolToSmiles(x),), f, 1.0))
        except Exception:
            pass
    return out

CURT = [25]
FREEAMINE = Chem.MolFromSmarts('[NX3;H2,H1;!$(N-C=[O,S,N]);!$(N-S);!$(N-a);!$(N-C=C)]')


def react_full(smi, classes, budget):
    if not classes or budget <= 0:
        return {smi: 1.0}
    rules = classes[0]
    rr = react_species(smi, rules, budget)
    if rr is None:
        return react_full(smi, classes[1:], budget)
    out, sides = rr
    m = Chem.MolFromSmiles(smi)
    k = 0
    for r, tmin, f in rules:
        if r == 'BROM':
            k += len(brom_sites(m))
            continue
        k += len(m.GetSubstructMatches(rxn(r).GetReactantTemplate(0)))
    res = {}
    for s, fr in out.items():
        for s2, fr2 in react_full(s, classes[1:], budget - k).items():
            res[s2] = res.get(s2, 0) + fr * fr2
    for s, fr in sides.items():
        res[s] = res.get(s, 0) + fr
    return res


def step(species, trans, T, eq, stereo, mp, last):
    CURT[0] = T
    rules = [(r, tmin, conv(T, tmin)) for r, tmin in RXN.get(trans, [])]
    rules = [x for x in rules if x[2] > 0]
    tm = sorted(set(x[1] for x in rules))
    classes = [[x for x in rules if x[1] == t] for t in tm]
    new = {}
    order = []
    for smi, a in species.items():
        out = react_full(smi, classes, eq)
        for s, fr in out.items():
            order.append((s, a * fr, s == smi))
    lst = []
    for s, a, isres in order:
        if isres:
            lst.append((s, a))
        elif stereo == 'strip':
            lst.append((strip(s), a))
        elif stereo == 'enumerate':
            iso = enum(s)
            for i in iso:
                lst.append((i, a / len(iso)))
        else:
            lst.append((s, a))
    allm = merge(lst)
    items = sorted(allm.items(), key=lambda x: -round(x[1], 9))
    items = [x for x in items if x[1] > 1e-9]
    if not last:
        items = items[:mp]
    return dict(items)


def merge(lst):
    d = {}
    for s, a in lst:
        d[s] = d.get(s, 0) + a
    return d


def strip(s):
    m = Chem.MolFromSmiles(s)
    Chem.RemoveStereochemistry(m)
    return Chem.MolToSmiles(m)


def enum(s):
    m = Chem.MolFromSmiles(s)
    opts = StereoEnumerationOptions(onlyUnassigned=True, unique=True)
    out = sorted(set(Chem.MolToSmiles(x) for x in EnumerateStereoisomers(m, options=opts)))
    return out or [s]

# --- acid/base -------------------------------------------------------------
ACIDS = [('[CX3](=O)[OX2H1]', 3.5), ('[c][OX2H1]', 9.5), ('[SX4](=O)(=O)[NH2]', 9.9),
         ('[SX4](=O)(=O)[NH1]a', 6.5), ('[nH]1nnnc1', 4.9)]
BASES = [('[NX3;$(N1CCOCC1);!$(N-C=[O,S,N]);!$(N-S);!$(N-a)]', 6.5),
         ('[NX3;H2,H1,H0;!$(N-C=[O,S,N]);!$(N-S);!$(N-a);!$(N-[#6]=[#6,#7,#8]);!$(N-O);!$(N#*);!$(N=*);!$([N+])]', 9.8),
         ('[nX2;r6]', 5.2), ('[NX3;H2,H1,H0;!$(N-C=[O,S,N]);!$(N-S);!$([N+])]-c', 4.6)]
_pa = None


def ionisable(smi):
    m = Chem.MolFromSmiles(smi)
    res = []
    used = set()
    for sm, pka in ACIDS:
        for mt in m.GetSubstructMatches(Chem.MolFromSmarts(sm)):
            if mt[-1] in used and len(mt) > 1:
                pass
            res.append(('a', pka))
    for sm, pka in BASES:
        for mt in m.GetSubstructMatches(Chem.MolFromSmarts(sm)):
            if mt[0] in used:
                continue
            used.add(mt[0])
            res.append(('b', pka))
    fixed = sum(a.GetFormalCharge() for a in m.GetAtoms() if a.GetSymbol() == 'N' and a.GetFormalCharge() == 1 and a.GetTotalNumHs() == 0 and not any(n.GetFormalCharge() < 0 for n in a.GetNeighbors()))
    return res, fixed


def charge_and_neutral(smi, ph):
    groups, fixed = ionisable(smi)
    ch = fixed
    fn = 1.0
    for t, pka in groups:
        if t == 'a':
            if ph > pka:
                ch -= 1
            fn *= 1 / (1 + 10 ** (ph - pka))
        else:
            if ph < pka:
                ch += 1
            fn *= 1 / (1 + 10 ** (pka - ph))
    if fixed:
        fn = 0.0
    return ch, fn


def D(smi, ph):
    m = Chem.MolFromSmiles(smi)
    lp = Crippen.MolLogP(m)
    ch, fn = charge_and_neutral(smi, ph)
    return (10 ** lp) * fn


def descriptors(smi, radius):
    m = Chem.MolFromSmiles(smi)
    fp = AllChem.GetMorganFingerprintAsBitVect(m, radius, nBits=1024)
    return dict(mw=round(Descriptors.MolWt(m), 3), logp=round(Crippen.MolLogP(m), 5),
                tpsa=round(rdMolDescriptors.CalcTPSA(m), 2),
                hba=int(rdMolDescriptors.CalcNumLipinskiHBA(m)), hbd=int(rdMolDescriptors.CalcNumLipinskiHBD(m)),
                qed=round(QED.qed(m), 6), fp_on=int(fp.GetNumOnBits()))


def main():
    sc = json.load(sys.stdin)
    p = sc['parameters']
    route, rec = p['case'].split(': ', 1)
    names = {'boc': None, 'tbs': None}
    parts = route.split('_')
    trans = []
    for i, w in enumerate(parts):
        if w == 'boc':
            trans.append('boc_protection' if i == 0 else 'boc_deprotection')
        elif w == 'tbs':
            trans.append('tbs_protection' if i == 0 else 'tbs_deprotection')
        elif w == 'esterify':
            trans.append('esterification')
        elif w == 'couple':
            trans.append('amide_coupling')
        elif w == 'reduce':
            trans.append('nitro_reduction' if 'nitro' in parts else 'lialh4_reduction')
        elif w == 'nitro':
            continue
        elif w == 'deprotect':
            trans.append('boc_deprotection' if parts[0] == 'boc' else 'tbs_deprotection')
        elif w == 'acetylate':
            trans.append('acetylation')
        elif w == 'hydrolyse':
            trans.append('ester_hydrolysis')
        elif w == 'oxidise':
            trans.append('alcohol_oxidation')
        elif w == 'aminate':
            trans.append('reductive_amination')
        elif w == 'methylate':
            trans.append('eschweiler_clarke')
        elif w == 'brominate':
            trans.append('aromatic_bromination')
        elif w == 'dehalogenate':
            trans.append('dehalogenation')
    T = int(p['temperature']); eq = int(p['equivalents']); mp = int(p['max_products'])
    stereo = p['stereochemistry']; ph = float(p['workup_ph']); rad = int(p['fingerprint_radius'])
    sm = parent(rec)
    if stereo == 'strip':
        sm = strip(sm)
    species = {sm: 100.0}
    for i, t in enumerate(trans):
        species = step(species, t, T, eq, stereo, mp, i == len(trans) - 1)
    crude = sum(species.values())
    prods = {s: a for s, a in species.items() if s != sm}
    out = dict(charge=0, crude_pct=round(crude, 6), fp_on=0, hba=0, hbd=0, isolated_pct=0.0,
               isolated_purity_pct=0.0, kept_pct=0.0, logp=0.0, mw=0.0, n_products=0,
               n_species=len(species), phase='none', products=[], purity_pct=0.0, qed=0.0,
               selected=[], tpsa=0.0, yield_pct=0.0)
    if prods:
        Ds = {s: D(s, ph) for s in species}
        inorg = {s: Ds[s] > 1.0 for s in species}
        org = sum(a for s, a in prods.items() if inorg[s])
        aq = sum(a for s, a in prods.items() if not inorg[s])
        phase = 'organic' if org > aq else 'aqueous'
        isorg = phase == 'organic'

        def frac(s, n):
            d = Ds[s]
            if isorg:
                return 1 - (1 / (1 + d)) ** n
            return (1 / (1 + d)) ** n
        pl = sorted([(s, a) for s, a in prods.items() if inorg[s] == isorg], key=lambda x: -round(x[1], 9))[:mp]
        if pl:
            top, ya = pl[0]
            kept1 = sum(a for s, a in species.items() if inorg[s] == isorg)
            kept3 = sum(a * frac(s, 3) for s, a in species.items())
            out.update(descriptors(top, rad))
            out['charge'] = charge_and_neutral(top, ph)[0]
            out.update(phase=phase, products=[s for s, _ in pl], selected=[top], n_products=len(pl),
                       yield_pct=round(ya, 6),
                       purity_pct=round(100 * ya / kept1, 6) if kept1 > 0 else 0.0,
                       isolated_pct=round(ya * frac(top, 3), 6), kept_pct=round(kept3, 6),
                       isolated_purity_pct=round(100 * ya * frac(top, 3) / kept3, 6) if kept3 > 0 else 0.0)
    print(json.dumps(out))


if __name__ == '__main__':
    main()
