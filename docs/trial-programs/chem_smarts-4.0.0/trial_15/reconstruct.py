# Independent program: the final workspace of agent trial 15 of chem_smarts 4.0.0 at the default
# evidence level with the cover (docs/trials.md), kept as the agent wrote it.
import sys, json, math
from rdkit import Chem, RDLogger
from rdkit.Chem import AllChem, Descriptors, Crippen, rdMolDescriptors, QED
from rdkit.Chem.EnumerateStereoisomers import EnumerateStereoisomers, StereoEnumerationOptions
RDLogger.DisableLog('rdApp.*')

LEVELS = [0.0, 0.6, 0.8, 0.95]
TIDX = {0: 0, 25: 1, 80: 2}

# reaction -> list of (smarts reaction, tier)
RX = {
    'boc_protection': [('[NX3;H2;!$(NC=[O,S,N]);!$(NS=O);!$(N-a);!$(N-[#6]=[#6]):1]>>[N:1]C(=O)OC(C)(C)C', 1),
                       ('[NX3;H1;!$(NC=[O,S,N]);!$(NS=O);!$(N-a);!$(N-[#6]=[#6]):1]>>[N:1]C(=O)OC(C)(C)C', 0)],
    'boc_deprotection': [('[N:1]C(=O)OC(C)(C)C>>[N:1]', 1)],
    'tbs_protection': [('[OX2H1:1][CH2:2]>>[CH2:2][O:1][Si](C)(C)C(C)(C)C', 1),
                       ('[OX2H1:1][c:2]>>[c:2][O:1][Si](C)(C)C(C)(C)C', 0),
                       ('[OX2H1:1][CX4;H1:2]>>[C:2][O:1][Si](C)(C)C(C)(C)C', -1)],
    'tbs_deprotection': [('[O:1][Si](C)(C)C(C)(C)C>>[O:1]', 1)],
    'esterification': [('[CX3:1](=[O:2])[OX2H1]>>[C:1](=[O:2])OC', 0)],
    'amide_coupling': [('[CX3:1](=[O:2])[OX2H1]>>[C:1](=[O:2])NCc1ccccc1', 1)],
    'lialh4_reduction': [('CUT_RED:[CX3;!$(C-[OH])](=O)[OX2][c,CX4]', 0),
                         ('[CX3:1](=O)[OX2H1]>>[CH2:1][OH]', 0),
                         ('[CX3:1](=O)[NX3;H1,H2:2]>>[CH2:1][N:2]', -1)],
    'nitro_reduction': [('[c,n:2][N+](=O)[O-]>>[*:2]N', 0), ('[C:2][N+](=O)[O-]>>[*:2]N', 0),
                        ('[c:1][Br,I]>>[c:1]', -1)],
    'acetylation': [('[NX3;H2,H1;!$(NC=[O,S,N]);!$(NS=O);!$(N-a):1]>>[N:1]C(C)=O', 1),
                    ('[NX3;H2,H1;!$(NC=[O,S,N]);!$(NS=O);$(N-a):1]>>[N:1]C(C)=O', 0),
                    ('[OX2H1:1][CH2:2]>>[CH2:2][O:1]C(C)=O', 0),
                    ('[OX2H1:1][c:2]>>[c:2][O:1]C(C)=O', 0),
                    ('[OX2H1:1][CX4;H1:2]>>[C:2][O:1]C(C)=O', -1)],
    'ester_hydrolysis': [('CUT_HYD:[CX3](=O)[OX2]c', 1),
                         ('CUT_HYD:[CX3](=O)[OX2][CX4]', 0)],
    'alcohol_oxidation': [('[OX2H1:1][CH2:2]>>[O:1]=[CH1:2]', 1),
                          ('[OX2H1:1][CX4;H1:2]>>[O:1]=[CH0:2]', 0),
                          ('[CX3;H1:2](=[O:1])[#6:3]>>[#6:3][CH0:2](=[O:1])O', -1)],
    'reductive_amination': [('[CX3;H1;!$(C-[O,N]):1]=O>>[CH2:1]N1CCOCC1', 1),
                            ('[CX3;H0;!$(C-[O,N,S]);!$(C(-a)-a):1](-[#6:2])(-[#6:3])=O>>[#6:2][CH1:1]([#6:3])N1CCOCC1', 0)],
    'eschweiler_clarke': [('[NX3;H2;!$(NC=[O,S,N]);!$(NS=O);!$(N-a):1]>>[N:1](C)C', 0),
                          ('[NX3;H1;!$(NC=[O,S,N]);!$(NS=O);!$(N-a):1]>>[N:1]C', -1)],
    'aromatic_bromination': [('[cH:1]>>[c:1]Br', 0)],
    'dehalogenation': [('[c:1]I>>[c:1]', 1), ('[c:1]Br>>[c:1]', 0), ('[c:1]Cl>>[c:1]', -1)],
}
_RXC = {}


def rxn(s):
    if s not in _RXC:
        _RXC[s] = AllChem.ReactionFromSmarts(s)
    return _RXC[s]


ACT = Chem.MolFromSmarts('[c;$(c[OH]),$(c[NH2]),$(c[NH]),$(cO[CX4]),$(c[OX2])]')


def brom_sites(mol):
    # activated aromatic CH: ortho/para to OH, OR, NH
    res = []
    ri = mol.GetRingInfo()
    for a in mol.GetAtoms():
        if not (a.GetIsAromatic() and a.GetSymbol() == 'C' and a.GetTotalNumHs() == 1):
            continue
        ok = False
        # ortho / para check
        for ar in ri.AtomRings():
            if a.GetIdx() in ar and len(ar) == 6 and all(mol.GetAtomWithIdx(j).GetSymbol() == 'C' for j in ar):
                n = len(ar); i = ar.index(a.GetIdx())
                for d in (1, 3, 5):
                    b = mol.GetAtomWithIdx(ar[(i + d) % n])
                    for nb in b.GetNeighbors():
                        if nb.GetIdx() in ar:
                            continue
                        if nb.GetSymbol() in ('O', 'N') and not nb.GetIsAromatic():
                            if nb.GetSymbol() == 'N' and any(x.GetSymbol() == 'O' for x in nb.GetNeighbors() if x.GetIdx() != b.GetIdx() and mol.GetBondBetweenAtoms(nb.GetIdx(), x.GetIdx()).GetBondTypeAsDouble() == 2):
                                continue
                            if nb.GetSymbol() == 'N' and nb.GetFormalCharge() != 0:
                                continue
                            ok = True
        if ok:
            res.append(a.GetIdx())
    return res


def canon(m):
    try:
        return Chem.MolToSmiles(m)
    except Exception:
        return None


def sanit(m):
    try:
        m = Chem.Mol(m)
        Chem.SanitizeMol(m)
        return Chem.MolFromSmiles(Chem.MolToSmiles(m))
    except Exception:
        return None


def site_products(mol, rname):
    """list of (tier, product smiles list) per site"""
    out = []
    if rname == 'aromatic_bromination':
        for idx in brom_sites(mol):
            rw = Chem.RWMol(mol)
            bi = rw.AddAtom(Chem.Atom(35))
            rw.AddBond(idx, bi, Chem.BondType.SINGLE)
            rw.GetAtomWithIdx(idx).SetNumExplicitHs(0)
            p = sanit(rw)
            if p is not None:
                out.append((0, [canon(p)], ('br', idx)))
        return out
    for s, tier in RX.get(rname, []):
        if s.startswith('CUT_'):
            kind, sm = s.split(':', 1)
            pat = Chem.MolFromSmarts(sm)
            for mt in mol.GetSubstructMatches(pat):
                c, o2, od = mt[0], mt[2], mt[1]
                rw = Chem.RWMol(mol)
                rw.RemoveBond(c, o2)
                if kind == 'CUT_HYD':
                    ni = rw.AddAtom(Chem.Atom(8))
                    rw.AddBond(c, ni, Chem.BondType.SINGLE)
                else:
                    rw.GetBondBetweenAtoms(c, od).SetBondType(Chem.BondType.SINGLE)
                for ai in (c, o2, od):
                    at = rw.GetAtomWithIdx(ai); at.SetNoImplicit(False); at.SetNumExplicitHs(0)
                q = sanit(rw)
                if q is None:
                    continue
                ps = [canon(Chem.MolFromSmiles(fr)) for fr in canon(q).split('.')]
                out.append((tier, ps, ('cut', mt)))
            continue
        r = rxn(s)
        seen = set()
        for prods in r.RunReactants((mol,)):
            ps = []
            okk = True
            for p in prods:
                q = sanit(p)
                if q is None:
                    okk = False; break
                for fr in canon(q).split('.'):
                    ps.append(canon(Chem.MolFromSmiles(fr)))
            if not okk:
                continue
            key = tuple(sorted(ps))
            if key in seen:
                continue
            seen.add(key)
            out.append((tier, ps, key))
    return out


def is_byproduct(smi):
    m = Chem.MolFromSmiles(smi)
    return m is None or m.GetNumHeavyAtoms() <= 5


def react_mol(smi, amt, rname, T, eq, res):
    mol = Chem.MolFromSmiles(smi)
    sites = site_products(mol, rname) if mol is not None else []
    if eq <= 0 or not sites:
        res[smi] = res.get(smi, 0) + amt
        return
    best = max(t for t, _, _ in sites)
    li = best + TIDX[T]
    p = LEVELS[max(0, min(3, li))]
    if p <= 0:
        res[smi] = res.get(smi, 0) + amt
        return
    res[smi] = res.get(smi, 0) + amt * (1 - p)
    bs = [s for s in sites if s[0] == best]
    # group by main product
    mains = {}
    for t, ps, k in bs:
        ps2 = [x for x in ps if not is_byproduct(x)]
        key = tuple(sorted(ps2))
        mains[key] = mains.get(key, 0) + 1
    n = len(bs)
    for key, c in mains.items():
        a = amt * p * c / n
        if not key:
            continue
        # main = largest
        mainx = max(key, key=lambda z: Chem.MolFromSmiles(z).GetNumHeavyAtoms())
        react_mol(mainx, a, rname, T, eq - 1, res)
        for x in key:
            if x != mainx:
                res[x] = res.get(x, 0) + a


AMINE = Chem.MolFromSmarts('[NX3;H2,H1;!$(NC=[O,S,N]);!$(NS=O);!$(N-a);!$(N-[#6]=[#6])]')


def strip(smi):
    m = Chem.MolFromSmiles(smi)
    Chem.RemoveStereochemistry(m)
    return Chem.MolToSmiles(m)


def enum(smi):
    m = Chem.MolFromSmiles(smi)
    try:
        opts = StereoEnumerationOptions(onlyUnassigned=True, unique=True)
        isos = [Chem.MolToSmiles(x) for x in EnumerateStereoisomers(m, options=opts)]
        isos = list(dict.fromkeys(isos))[::-1]
        return isos or [smi]
    except Exception:
        return [smi]


def prepare(record):
    m = Chem.MolFromSmiles(record)
    frags = Chem.GetMolFrags(m, asMols=True)
    frags = sorted(frags, key=lambda f: -f.GetNumHeavyAtoms())
    f = Chem.RWMol(frags[0])
    for a in f.GetAtoms():
        ch = a.GetFormalCharge()
        if ch == -1 and a.GetSymbol() in ('O', 'N', 'S'):
            if any(nb.GetFormalCharge() == 1 and nb.GetSymbol() == 'N' and nb.GetTotalNumHs() == 0 and any(x.GetSymbol() == 'O' for x in nb.GetNeighbors() if x.GetIdx() != a.GetIdx()) for nb in a.GetNeighbors()):
                continue
            a.SetFormalCharge(0); a.SetNumExplicitHs(a.GetTotalNumHs() + 1); a.SetNoImplicit(True)
        elif ch == 1 and a.GetSymbol() == 'N' and a.GetTotalNumHs() > 0:
            a.SetFormalCharge(0); a.SetNumExplicitHs(a.GetTotalNumHs() - 1); a.SetNoImplicit(True)
    Chem.SanitizeMol(f)
    try:
        from rdkit.Chem.MolStandardize import rdMolStandardize
        if f.HasSubstructMatch(Chem.MolFromSmarts('[OH]c:n')):
            f = rdMolStandardize.TautomerEnumerator().Canonicalize(f)
    except Exception:
        pass
    return Chem.MolToSmiles(Chem.MolFromSmiles(Chem.MolToSmiles(f)))


# ---------------- ionisation ----------------
IONS = [
    ('[CX3](=O)[OX2H1]', 'a', 3.5),
    ('[SX4](=O)(=O)[NH1]a', 'a', 6.5),
    ('[SX4](=O)(=O)[NH2]', 'a', 9.8),
    ('c[OX2H1]', 'a', 9.5),
    ('[SX2H1]', 'a', 10.5),
    ('[NX3;H0;R;$(N1CCOCC1)]', 'b', 6.8),
    ('[NX3;H2,H1,H0;!$(NC=[O,S,N]);!$(NS=O);!$(N-a);!$(N-[#6]=[#6,#7]);!$(N#*);!$(N=*);!$(N-O);!$(N[Si])]', 'b', 9.8),
    ('[NX3;H2,H1;!$(NC=[O,S,N]);!$(NS=O);$(N-c);!$(N(-c)-c)]', 'b', 4.6),
    ('[nX2;r6]', 'b', 5.0),
    ('[nX2;r5;$(n:c:[nX3]);!$(n:c:c[N+](=O)[O-]);!$(n:c:n:c[N+](=O)[O-]);!$(n:c(:n)[N+](=O)[O-]);!$(n:c:c:n-[N+](=O)[O-])]', 'b', 6.5),
]
_IP = [(Chem.MolFromSmarts(s), k, p) for s, k, p in IONS]


def groups(mol):
    used = set(); gs = []
    for pat, k, pka in _IP:
        for mt in mol.GetSubstructMatches(pat):
            if mt[-1] in used or mt[0] in used:
                continue
            used.update(mt)
            gs.append((k, pka))
    return gs


def ion_info(smi, ph):
    mol = Chem.MolFromSmiles(smi)
    gs = groups(mol)
    fixed = sum(a.GetFormalCharge() for a in mol.GetAtoms())
    charge = fixed
    fneu = 1.0 if fixed == 0 else 0.0
    for k, pka in gs:
        if k == 'a':
            if ph > pka: charge -= 1
            fneu *= 1 / (1 + 10 ** (ph - pka))
        else:
            if ph < pka: charge += 1
            fneu *= 1 / (1 + 10 ** (pka - ph))
    logp = Crippen.MolLogP(mol)
    D = (10 ** logp) * fneu
    return charge, D


def main():
    sc = json.load(sys.stdin)
    P = sc['parameters']
    route, record = [x.strip() for x in P['case'].split(':', 1)]
    T = int(P['temperature']); eq = int(P['equivalents']); mx = int(P['max_products'])
    st = P['stereochemistry']; ph = float(P['workup_ph']); rad = int(P['fingerprint_radius'])
    parts = route.split('_')
    steps = []
    for i, w in enumerate(parts):
        last = i == len(parts) - 1
        if w == 'boc': steps.append('boc_deprotection' if (last and i > 0) else 'boc_protection')
        elif w == 'tbs': steps.append('tbs_deprotection' if (last and i > 0) else 'tbs_protection')
        elif w == 'esterify': steps.append('esterification')
        elif w == 'couple': steps.append('amide_coupling')
        elif w == 'reduce': steps.append('nitro_reduction' if 'nitro' in parts else 'lialh4_reduction')
        elif w == 'nitro': continue
        elif w == 'deprotect': steps.append('tbs_deprotection' if parts[0] == 'tbs' else 'boc_deprotection')
        elif w == 'acetylate': steps.append('acetylation')
        elif w == 'hydrolyse': steps.append('ester_hydrolysis')
        elif w == 'oxidise': steps.append('alcohol_oxidation')
        elif w == 'aminate': steps.append('reductive_amination')
        elif w == 'methylate': steps.append('eschweiler_clarke')
        elif w == 'brominate': steps.append('aromatic_bromination')
        elif w == 'dehalogenate': steps.append('dehalogenation')
    sm = prepare(record)
    if st == 'strip':
        sm = strip(sm)
    cur = {sm: 100.0}
    for si, rn in enumerate(steps):
        res = {}
        for smi, amt in cur.items():
            sub = {}
            react_mol(smi, amt, rn, T, eq, sub)
            for k, v in sub.items():
                if st == 'strip':
                    k = strip(k)
                if st == 'enumerate' and k != smi:
                    isos = enum(k)
                    for iso in isos:
                        res[iso] = res.get(iso, 0) + v / len(isos)
                else:
                    res[k] = res.get(k, 0) + v
        res = {k: v for k, v in res.items() if v > 1e-9 and not is_byproduct(k)}
        if rn == 'amide_coupling':
            res = {k: v for k, v in res.items() if not Chem.MolFromSmiles(k).HasSubstructMatch(AMINE)}
        items = sorted(res.items(), key=lambda kv: -round(kv[1], 9))
        if si < len(steps) - 1:
            items = items[:mx]
        cur = dict(items)
    crude = sum(cur.values())
    info = {k: ion_info(k, ph) for k in cur}
    phase_of = {k: ('organic' if (info[k][0] == 0 and info[k][1] >= 1) else 'aqueous') for k in cur}
    prods = [k for k in cur if k != sm]
    out = dict(charge=0, crude_pct=round(crude, 6), fp_on=0, hba=0, hbd=0, isolated_pct=0.0,
               isolated_purity_pct=0.0, kept_pct=0.0, logp=0.0, mw=0.0, n_products=0,
               n_species=len(cur), phase='none', products=[], purity_pct=0.0, qed=0.0,
               selected=[], tpsa=0.0, yield_pct=0.0)
    if prods:
        po = sum(cur[k] for k in prods if phase_of[k] == 'organic')
        pa = sum(cur[k] for k in prods if phase_of[k] == 'aqueous')
        phase = 'organic' if po >= pa else 'aqueous'
        kp = sorted([k for k in prods if phase_of[k] == phase], key=lambda k: -round(cur[k], 9))
        kp = kp[:mx]
        top = kp[0]
        tot = sum(cur[k] for k in cur if phase_of[k] == phase)
        iso = {}
        for k in cur:
            D = info[k][1]
            r = (1 / (1 + D)) ** 3
            iso[k] = cur[k] * ((1 - r) if phase == 'organic' else r)
        kept = sum(iso.values())
        m = Chem.MolFromSmiles(top)
        fp = AllChem.GetMorganFingerprintAsBitVect(m, rad, nBits=1024)
        out.update(charge=info[top][0], phase=phase, products=kp, n_products=len(kp), selected=[top],
                   yield_pct=cur[top], purity_pct=100 * cur[top] / tot if tot else 0,
                   isolated_pct=iso[top], kept_pct=kept,
                   isolated_purity_pct=100 * iso[top] / kept if kept > 0 else 0.0,
                   mw=Descriptors.MolWt(m), logp=Crippen.MolLogP(m), tpsa=rdMolDescriptors.CalcTPSA(m, includeSandP=True),
                   hba=rdMolDescriptors.CalcNumLipinskiHBA(m), hbd=rdMolDescriptors.CalcNumLipinskiHBD(m),
                   qed=QED.qed(m), fp_on=fp.GetNumOnBits())
    print(json.dumps(out))


if __name__ == '__main__':
    try:
        main()
    except Exception as e:
        import traceback; traceback.print_exc()
        print(json.dumps(dict(charge=0, crude_pct=100.0, fp_on=0, hba=0, hbd=0, isolated_pct=0.0,
                              isolated_purity_pct=0.0, kept_pct=0.0, logp=0.0, mw=0.0, n_products=0,
                              n_species=1, phase='none', products=[], purity_pct=0.0, qed=0.0,
                              selected=[], tpsa=0.0, yield_pct=0.0)))
