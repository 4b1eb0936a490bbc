# Independent program: the final workspace of agent trial 11 of chem_smarts 4.0.0 at the default
# evidence level (docs/trials.md), kept as the agent wrote it.
import sys, json, math, itertools
from rdkit import Chem, RDLogger
from rdkit.Chem import Descriptors, Crippen, rdMolDescriptors, QED, AllChem
from rdkit.Chem.MolStandardize import rdMolStandardize
from rdkit.Chem.EnumerateStereoisomers import EnumerateStereoisomers, StereoEnumerationOptions
RDLogger.DisableLog('rdApp.*')

_tp0 = rdMolStandardize.CleanupParameters()
_tp0.tautomerRemoveSp3Stereo = False
_tp0.tautomerRemoveBondStereo = False
TE = rdMolStandardize.TautomerEnumerator(_tp0)
DEPROT = 'chain'
DEBUG = False
LAST = None
LEV = [0.0, 0.6, 0.8, 0.95]
TI = {0: 1, 25: 2, 80: 3}

def conv(d, T):
    i = TI.get(int(T), 2) - d
    return LEV[max(0, min(3, i))]

def parent(smi, stereo):
    m = Chem.MolFromSmiles(smi)
    m = rdMolStandardize.Cleanup(m)
    fr = sorted(Chem.GetMolFrags(m, asMols=True), key=lambda f: -f.GetNumHeavyAtoms())
    m = fr[0]
    m = rdMolStandardize.Uncharger().uncharge(m)
    rw = Chem.RWMol(m)
    for a in rw.GetAtoms():
        if a.GetSymbol() == 'O' and a.GetFormalCharge() == -1 and any(n.GetSymbol() == 'C' and any(b.GetBondType() == Chem.BondType.DOUBLE and b.GetOtherAtom(n).GetSymbol() == 'O' for b in n.GetBonds()) for n in a.GetNeighbors()):
            a.SetFormalCharge(0); a.SetNumExplicitHs(1); a.SetNoImplicit(False)
    m = rw.GetMol(); Chem.SanitizeMol(m)
    try:
        m = TE.Canonicalize(m)
    except Exception:
        pass
    if stereo == 'strip':
        Chem.RemoveStereochemistry(m)
    return Chem.MolToSmiles(m)


AMINE_ALI = '[NX3;H2,H1;!$(N-C=[O,S,N]);!$(N-S);!$(N-a);!$(N-C=C);!$(N-[N,O])]'
# rule: (smarts, difficulty, mode)  mode: 'site' | 'all' | 'chain'
RX = {
 'boc_protection': [('[NX3;H2;!$(N-C=[O,S,N]);!$(N-S);!$(N-a);!$(N-C=C);!$(N-[N,O]):1]>>[N:1]C(=O)OC(C)(C)C', 0, 'site'),
                    ('[NX3;H1;!$(N-C=[O,S,N]);!$(N-S);!$(N-a);!$(N-C=C);!$(N-[N,O]):1]>>[N:1]C(=O)OC(C)(C)C', 1, 'site')],
 'boc_deprotection': [('[N:1]C(=O)OC(C)(C)C>>[N:1]', 0, 'all')],
 'tbs_protection': [('[OX2H1;$(O[CH2]):1]>>[O:1][Si](C)(C)C(C)(C)C', 0, 'site'),
                    ('[OX2H1;$(Oc):1]>>[O:1][Si](C)(C)C(C)(C)C', 1, 'site'),
                    ('[OX2H1;$(O[CX4H1]):1]>>[O:1][Si](C)(C)C(C)(C)C', 2, 'site')],
 'tbs_deprotection': [('[O:1][Si](C)(C)C(C)(C)C>>[O:1]', 0, 'all')],
 'esterification': [('[CX3:1](=[O:2])[OX2H1]>>[C:1](=[O:2])OC', 1, 'site')],
 'amide_coupling': [('[CX3:1](=[O:2])[OX2H1]>>[C:1](=[O:2])NCc1ccccc1', 0, 'site')],
 'lialh4_reduction': [('[CX3:1](=[O:2])[OX2H1]>>[CH2:1][O:2]', 1, 'site'),
                      ('[CX3;!R;!$(C(=O)(O)[N,O]):1](=O)[OX2:2][#6:3]>>[CH2:1]O.[O:2][#6:3]', 1, 'site'),
                      ('[CX3;R;!$(C(=O)(O)[N,O]):1](=O)[OX2;R:2][#6:3]>>([CH2:1]O.[O:2][#6:3])', 1, 'site'),
                      ('[CX3;!$(C(N)N):1](=O)[NX3;!$(N-a):2]>>[CH2:1][N:2]', 2, 'site'),
                      ('[CX3;$([CH1]),$(C([#6])[#6]):1]=[OX1]>>[CH1:1]O', 0, 'site')],
 'nitro_reduction': [('[N+:1](=O)[O-]>>[NH2:1]', 1, 'site')],
 'acetylation': [(AMINE_ALI.replace(']', ':1]', 1) if False else '[NX3;H2,H1;!$(N-C=[O,S,N]);!$(N-S);!$(N-a);!$(N-C=C);!$(N-[N,O]):1]>>[N:1]C(C)=O', 0, 'site'),
                 ('[NX3;H2,H1;!$(N-C=[O,S,N]);!$(N-S);$(N-a):1]>>[N:1]C(C)=O', 1, 'site'),
                 ('[OX2H1;$(O[CH2]):1]>>[O:1]C(C)=O', 1, 'site'),
                 ('[OX2H1;$(O[CX4H1]):1]>>[O:1]C(C)=O', 2, 'site')],
 'ester_hydrolysis': [('[CX3;!$(C(=O)(O)[N,O]):1](=[O:3])[OX2:2][c:4]>>[C:1](=[O:3])O.[O:2][c:4]', 0, 'site'),
                      ('[CX3;!R;!$(C(=O)(O)[N,O]):1](=[O:3])[OX2:2][CX4:4]>>[C:1](=[O:3])O.[O:2][C:4]', 1, 'site')],
 'alcohol_oxidation': [('[CH2:1][OH1:2]>>[CH1:1]=[O:2]', 0, 'site'), ('[CX4H1;!R;!$(C-a):1]([#6:3])([#6:4])[OH1:2]>>[C:1]([#6:3])([#6:4])=[O:2]', 0, 'site'), ('[CX4H1:1]([#6:3])([#6:4])[OH1:2]>>[C:1]([#6:3])([#6:4])=[O:2]', 1, 'site'),
                       ('[CX3H1:1](=[O:2])[#6:3]>>[C:1]([#6:3])(=[O:2])O', 2, 'chain')],
 'reductive_amination': [('[CX3H1:1](=O)[#6:3]>>[CH2:1]([#6:3])N1CCOCC1', 0, 'site'),
                         ('[CX3H0;$(C([#6])[#6]);!$(C-[O,N,S]):1](=O)>>[CH1:1]N1CCOCC1', 1, 'site')],
 'eschweiler_clarke': [('[NX3;H2;!$(N-C=[O,S,N]);!$(N-S);!$(N-a);!$(N-[N,O]):1]>>[N:1](C)C', 1, 'site'),
                       ('[NX3;H1;!$(N-C=[O,S,N]);!$(N-S);!$(N-a);!$(N-[N,O]):1]>>[N:1]C', 2, 'site')],
 'aromatic_bromination': [('BROM', 0, 'site')],
 'dehalogenation': [('[c:1][Br,I]>>[cH1:1]', 1, 'site'), ('[c:1][Cl]>>[cH1:1]', 2, 'site')],
}
_cache = {}
def getrx(s):
    if s not in _cache:
        r = AllChem.ReactionFromSmarts(s)
        r.Initialize()
        _cache[s] = r
    return _cache[s]

def canon(m):
    try:
        m = Chem.Mol(m)
        Chem.SanitizeMol(m)
        return Chem.MolToSmiles(m)
    except Exception:
        return None

def tag(m):
    for a in m.GetAtoms():
        a.SetIntProp('orig', a.GetIdx())
    return m

def sites_of(m, rs):
    rx = getrx(rs)
    patt = rx.GetReactantTemplate(0)
    # index of mapped atom 1 in pattern
    k = 0
    for a in patt.GetAtoms():
        if a.GetAtomMapNum() == 1:
            k = a.GetIdx(); break
    out = []
    for mt in m.GetSubstructMatches(patt, uniquify=True):
        o = m.GetAtomWithIdx(mt[k]).GetIntProp('orig')
        if o not in out:
            out.append(o)
    return out

def perm_parity(a, b):
    # parity of permutation mapping list a to list b
    a = list(a); b = list(b)
    idx = [a.index(x) for x in b]
    par = 0
    for i in range(len(idx)):
        for j in range(i + 1, len(idx)):
            if idx[i] > idx[j]: par ^= 1
    return par

def fix_stereo(m, p):
    rmap = {a.GetIntProp('orig'): a for a in m.GetAtoms()}
    for a in p.GetAtoms():
        d = a.GetPropsAsDict()
        o = d.get('orig', -1)
        if o < 0 or o not in rmap: continue
        ra = rmap[o]
        tg = ra.GetChiralTag()
        if tg not in (Chem.ChiralType.CHI_TETRAHEDRAL_CW, Chem.ChiralType.CHI_TETRAHEDRAL_CCW):
            continue
        R = [b.GetOtherAtom(ra).GetIntProp('orig') for b in ra.GetBonds()]
        P = []
        for b in a.GetBonds():
            P.append(b.GetOtherAtom(a).GetPropsAsDict().get('orig', -1))
        if len(P) != len(R): continue
        miss = [x for x in R if x not in P]
        if P.count(-1) > 1 or len(miss) > 1: continue
        P = [miss[0] if x == -1 else x for x in P]
        if sorted(P) != sorted(R): continue
        par = perm_parity(R, P)
        if par == 0:
            a.SetChiralTag(tg)
        else:
            a.SetChiralTag(Chem.ChiralType.CHI_TETRAHEDRAL_CW if tg == Chem.ChiralType.CHI_TETRAHEDRAL_CCW else Chem.ChiralType.CHI_TETRAHEDRAL_CCW)

def combine(ps):
    p = ps[0]
    for q in ps[1:]:
        p = Chem.CombineMols(p, q)
    return p

def apply_site(m, rs, site, keep_charge=True):
    rx = getrx(rs)
    for ps in rx.RunReactants((m,)):
        p = Chem.RWMol(combine(ps))
        hit = False
        for a in p.GetAtoms():
            d = a.GetPropsAsDict()
            if 'react_atom_idx' in d and 'orig' not in d:
                ra = m.GetAtomWithIdx(d['react_atom_idx'])
                a.SetIntProp('orig', ra.GetIntProp('orig'))
                if ra.GetIntProp('orig') == site and d.get('old_mapno', 1) == 1:
                    hit = True
                if 'N+' not in rs:
                    a.SetFormalCharge(ra.GetFormalCharge())
                else:
                    a.SetFormalCharge(0)
                a.SetNumExplicitHs(0); a.SetNoImplicit(False)
                if a.GetIsAromatic() and a.GetSymbol() == 'N' and ra.GetNumExplicitHs() and not a.GetAtomMapNum():
                    a.SetNumExplicitHs(ra.GetNumExplicitHs())
            elif 'orig' not in d:
                a.SetIntProp('orig', -1)
        if hit:
            try:
                fix_stereo(m, p)
                pm = p.GetMol()
                Chem.SanitizeMol(pm)
                Chem.AssignStereochemistry(pm, cleanIt=True, force=True)
                return pm
            except Exception:
                return None
    return None

def brom_site(m):
    acts = [('[c;$(c[OX2H1])]', 0), ('[c;$(c[NX3;H2,H1;!$(N-C=O);!$(N-S)])]', 1), ('[c;$(c[OX2][#6]),$(c[NX3]C=O)]', 2)]
    for sm, d, jj in [(x, y, j) for x, y in acts for j in ((3,), (1, 5))]:
        for mt in m.GetSubstructMatches(Chem.MolFromSmarts(sm)):
            a = mt[0]
            for r in m.GetRingInfo().AtomRings():
                if a in r and len(r) == 6 and all(m.GetAtomWithIdx(x).GetIsAromatic() for x in r):
                    dd = d + (0 if all(m.GetAtomWithIdx(x).GetSymbol() == 'C' for x in r) else 2)
                    i = r.index(a)
                    for j in jj:
                        o = m.GetAtomWithIdx(r[(i + j) % 6])
                        if o.GetSymbol() == 'C' and o.GetTotalNumHs() == 1:
                            return o.GetIdx(), dd
    return None, 0

def frags(m):
    out = []
    for f in Chem.GetMolFrags(m, asMols=True, sanitizeFrags=False):
        c = canon(f)
        if c is None: continue
        if f.GetNumHeavyAtoms() <= 4: continue
        out.append(c)
    return out

def seq_react(m0, smi, tiers, budget):
    res = {}
    def rec(m, w, done, nb):
        avail = None
        for ts in tiers:
            cand = [x for x in ts if x[1] not in done]
            if cand:
                avail = cand; break
        if avail is None or nb <= 0 or w < 1e-12:
            key = tuple(frags(m)) if done else (smi,)
            res[key] = res.get(key, 0) + w
            return
        p = avail[0][2]
        key = tuple(frags(m)) if done else (smi,)
        res[key] = res.get(key, 0) + w * (1 - p)
        for rs, s, pp in avail:
            mm = apply_site(m, rs, s)
            if mm is None:
                res[key] = res.get(key, 0) + w * p / len(avail)
                continue
            rec(mm, w * p / len(avail), done | {s}, nb - 1)
    rec(m0, 1.0, frozenset(), budget)
    return res

def react_mol(smi, trans, T, eq):
    rules = RX.get(trans, [])
    m0 = tag(Chem.MolFromSmiles(smi))
    if trans == 'aromatic_bromination':
        s, bd = brom_site(m0)
        p = conv(bd, T)
        if s is None or p <= 0: return {(smi,): 1.0}
        rw = Chem.RWMol(m0)
        b = rw.AddAtom(Chem.Atom(35)); rw.AddBond(s, b, Chem.BondType.SINGLE)
        rw.GetAtomWithIdx(s).SetNoImplicit(False); rw.GetAtomWithIdx(s).SetNumExplicitHs(0)
        pm = rw.GetMol(); Chem.SanitizeMol(pm)
        return {(smi,): 1 - p, (Chem.MolToSmiles(pm),): p}
    # deprotection style
    if rules and rules[0][2] == 'all':
        rs, d, _ = rules[0]
        p = conv(d, T)
        if p <= 0: return {(smi,): 1.0}
        m0 = tag(Chem.MolFromSmiles(smi))
        ss = sites_of(m0, rs)
        if not ss: return {(smi,): 1.0}
        tiers = [[(rs, s, p) for s in ss]]
        return seq_react(m0, smi, tiers, 99)
    tiers = []
    seen = set()
    for ri, (rs, d, mode) in enumerate(rules):
        if mode == 'chain': continue
        p = conv(d, T)
        if p <= 0: continue
        ts = []
        for s in sites_of(m0, rs):
            if s in seen: continue
            seen.add(s); ts.append((rs, s, p))
        if ts: tiers.append(ts)
    res = seq_react(m0, smi, tiers, max(1, eq))
    # chain rules (over-oxidation) need eq>=3
    for rs, d, mode in rules:
        if mode != 'chain' or eq < 3: continue
        p = conv(d, T)
        if p <= 0: continue
        new = {}
        for key, a in res.items():
            main = key[0]
            mm = tag(Chem.MolFromSmiles(main))
            ss = sites_of(mm, rs)
            if not ss:
                new[key] = new.get(key, 0) + a; continue
            sub = {}
            for mask in itertools.product([0, 1], repeat=len(ss)):
                pr = 1.0; m = mm
                for bit in mask: pr *= p if bit else 1 - p
                for bit, s in zip(mask, ss):
                    if bit:
                        m2 = apply_site(m, rs, s)
                        if m2 is not None: m = m2
                k2 = (canon(m),) + tuple(key[1:]) if any(mask) else key
                new[k2] = new.get(k2, 0) + a * pr
        res = new
    return res

def byproducts(smi):
    return False

def run(params):
    case = params['case']
    route, rec = [x.strip() for x in case.split(':', 1)]
    T = params['temperature']; eq = params['equivalents']; mp = params['max_products']
    st = params['stereochemistry']; ph = float(params['workup_ph'])
    steps = TRANS[route]
    sm = parent(rec, st)
    mix = {sm: 100.0}
    for i, tr in enumerate(steps):
        new = {}
        for s, a in mix.items():
            if vanish(s, tr):
                continue
            for key, f in react_mol(s, tr, T, eq).items():
                for q in key:
                    if key != (s,):
                        q = stereo_fix(q, st)
                        for q2, w in expand(q, st):
                            new[q2] = new.get(q2, 0) + a * f * w
                    else:
                        new[q] = new.get(q, 0) + a * f
        new = {k: v for k, v in new.items() if v > 1e-9}
        if DEBUG:
            print('STEP', tr, file=sys.stderr)
            for k, v in sorted(new.items(), key=lambda kv: -kv[1]): print('   %.4f %s' % (v, k), file=sys.stderr)
        if i < len(steps) - 1:
            items = sorted(new.items(), key=lambda kv: -round(kv[1], 7))[:mp]
            mix = dict(items)
        else:
            mix = new
    return finish(mix, sm, params)

TRANS = {}

def vanish(s, tr):
    m = Chem.MolFromSmiles(s)
    am = Chem.MolFromSmarts(AMINE_ALI)
    if tr == 'alcohol_oxidation' and m.HasSubstructMatch(am):
        return True
    if tr == 'amide_coupling' and m.HasSubstructMatch(am) and m.HasSubstructMatch(Chem.MolFromSmarts('C(=O)[OH1]')):
        return True
    return False

_tp = rdMolStandardize.CleanupParameters()
_tp.tautomerRemoveSp3Stereo = False
_tp.tautomerRemoveBondStereo = False
TE = rdMolStandardize.TautomerEnumerator(_tp)
_tc = {}
def taut(q):
    if q in _tc: return _tc[q]
    r = q
    try:
        m = Chem.MolFromSmiles(q)
        r = Chem.MolToSmiles(TE.Canonicalize(m))
    except Exception:
        pass
    _tc[q] = r
    return r

def stereo_fix(q, st):
    q = taut(q)
    if st == 'strip':
        m = Chem.MolFromSmiles(q); Chem.RemoveStereochemistry(m); return Chem.MolToSmiles(m)
    return q

def expand(q, st):
    if st != 'enumerate':
        return [(q, 1.0)]
    m = Chem.MolFromSmiles(q)
    opts = StereoEnumerationOptions(onlyUnassigned=True, unique=True)
    isos = sorted(set(Chem.MolToSmiles(x) for x in EnumerateStereoisomers(m, options=opts)))
    if not isos: return [(q, 1.0)]
    return [(x, 1.0 / len(isos)) for x in isos]

def f_neutral_charge(smi, ph):
    return ionize(smi, ph)

ACID = [('[CX3](=O)[OX2H1]', 3.5), ('[a][OX2H1]', 9.5), ('[SX4](=O)(=O)[NX3H2]', 9.9), ('[SX4](=O)(=O)[NX3H1]a', 6.5)]
BASE = [('[NX3;R;$(N1CCOCC1)]', 6.5),
        ('[NX3;H2,H1,H0;!$(N-[C,S,P]=[O,S,N]);!$(N-a);!$(N-C=[C,N]);!$(N#*);!$(N-[N,O,S])]', 9.8),
        ('[NX3;H2,H1,H0;!$(N-C=[O,S,N]);!$(N-S);!$(N-[N,O])]-c', 4.6),
        ('[nX2;r6;$(n1ccccc1)]', 5.2)]

def ionize(smi, ph):
    m = Chem.MolFromSmiles(smi)
    fixed = sum(a.GetFormalCharge() for a in m.GetAtoms() if not (a.GetSymbol()=='N' and a.GetFormalCharge()==1 and any(n.GetFormalCharge()==-1 for n in a.GetNeighbors())) and not (a.GetFormalCharge()==-1 and any(n.GetFormalCharge()==1 for n in a.GetNeighbors())))
    groups = []
    used = set()
    for s, pk in ACID:
        for mt in m.GetSubstructMatches(Chem.MolFromSmarts(s)):
            if mt[0] in used: continue
            used.add(mt[0]); groups.append(('a', pk))
    for s, pk in BASE:
        for mt in m.GetSubstructMatches(Chem.MolFromSmarts(s)):
            if mt[0] in used: continue
            used.add(mt[0]); groups.append(('b', pk))
    charge = fixed
    fneu = 1.0
    for t, pk in groups:
        if t == 'a':
            r = 10 ** (ph - pk)
            if ph > pk: charge -= 1
        else:
            r = 10 ** (pk - ph)
            if pk > ph: charge += 1
        fneu *= 1.0 / (1.0 + r)
    if fixed != 0:
        fneu = 0.0
    return charge, fneu

def ionized_any(smi, ph):
    m = Chem.MolFromSmiles(smi)
    if any(a.GetFormalCharge() != 0 for a in m.GetAtoms() if not (a.GetSymbol() == 'N' and a.GetFormalCharge() == 1 and any(n.GetFormalCharge() == -1 for n in a.GetNeighbors())) and not (a.GetFormalCharge() == -1 and any(n.GetFormalCharge() == 1 for n in a.GetNeighbors()))):
        return True
    used = set()
    for s, pk in ACID:
        for mt in m.GetSubstructMatches(Chem.MolFromSmarts(s)):
            if mt[0] in used: continue
            used.add(mt[0])
            if ph > pk: return True
    for s, pk in BASE:
        for mt in m.GetSubstructMatches(Chem.MolFromSmarts(s)):
            if mt[0] in used: continue
            used.add(mt[0])
            if pk > ph: return True
    return False

def logD(smi, ph):
    m = Chem.MolFromSmiles(smi)
    lp = Crippen.MolLogP(m)
    ch, fn = ionize(smi, ph)
    return lp + (math.log10(fn) if fn > 0 else -30), lp, fn

def finish(mix, sm, params):
    ph = float(params['workup_ph']); mp = params['max_products']
    st = params['stereochemistry']
    crude = sum(mix.values())
    phase_of = {}
    for s in mix:
        ld, lp, fn = logD(s, ph)
        phase_of[s] = 'organic' if (ld > 0 and not ionized_any(s, ph)) else 'aqueous'
    global LAST
    LAST = (dict(mix), dict(phase_of))
    prod = {s: a for s, a in mix.items() if s != sm}
    out = dict(charge=0, crude_pct=round(crude, 6), fp_on=0, hba=0, hbd=0, isolated_pct=0.0, isolated_purity_pct=0.0,
               kept_pct=0.0, logp=0.0, mw=0.0, n_products=0, n_species=len(mix), phase='none', products=[], purity_pct=0.0,
               qed=0.0, selected=[], tpsa=0.0, yield_pct=0.0)
    if not prod:
        return out
    org = sum(a for s, a in prod.items() if phase_of[s] == 'organic')
    aq = sum(a for s, a in prod.items() if phase_of[s] == 'aqueous')
    ph_k = 'organic' if org >= aq else 'aqueous'
    inph = {s: a for s, a in mix.items() if phase_of[s] == ph_k}
    pl = sorted([(a, s) for s, a in inph.items() if s != sm], key=lambda x: (-round(x[0], 7), x[1]))[:mp]
    products = [s for a, s in pl]
    top = products[0]; ya = pl[0][0]
    tot = sum(inph.values())
    # isolation
    iso = {}
    for s, a in mix.items():
        ld, lp, fn = logD(s, ph)
        D = 10 ** ld
        rem = (1.0 / (1.0 + D)) ** 3
        iso[s] = a * (1 - rem) if ph_k == 'organic' else a * rem
    kept = sum(iso.values())
    m = Chem.MolFromSmiles(top)
    ch, fn = ionize(top, ph)
    fp = AllChem.GetMorganFingerprintAsBitVect(m, int(params['fingerprint_radius']), nBits=1024)
    out.update(charge=ch, fp_on=fp.GetNumOnBits(), hba=rdMolDescriptors.CalcNumLipinskiHBA(m), hbd=rdMolDescriptors.CalcNumLipinskiHBD(m),
               isolated_pct=round(iso[top], 6), isolated_purity_pct=round(100 * iso[top] / kept, 6) if kept > 0 else 0.0,
               kept_pct=round(kept, 6), logp=round(Crippen.MolLogP(m), 4), mw=round(Descriptors.MolWt(m), 3),
               n_products=len(products), phase=ph_k, products=products, purity_pct=round(100 * ya / tot, 6),
               qed=round(QED.qed(m), 6), selected=[top], tpsa=round(rdMolDescriptors.CalcTPSA(m, includeSandP=True), 2), yield_pct=round(ya, 6))
    return out

TRANS.update({
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
})

EMPTY = dict(charge=0, crude_pct=100.0, fp_on=0, hba=0, hbd=0, isolated_pct=0.0, isolated_purity_pct=0.0,
             kept_pct=0.0, logp=0.0, mw=0.0, n_products=0, n_species=1, phase='none', products=[], purity_pct=0.0,
             qed=0.0, selected=[], tpsa=0.0, yield_pct=0.0)

def main():
    try:
        sc = json.loads(sys.stdin.read())
        out = run(sc['parameters'])
    except Exception as e:
        import traceback; traceback.print_exc()
        out = dict(EMPTY)
    print(json.dumps(out))

if __name__ == '__main__':
    main()
