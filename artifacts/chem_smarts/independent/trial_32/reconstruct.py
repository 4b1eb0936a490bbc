import sys, json, math
from rdkit import Chem, RDLogger
from rdkit.Chem import AllChem, Descriptors, Crippen, rdMolDescriptors, QED
from rdkit.Chem.MolStandardize import rdMolStandardize
from rdkit.Chem.EnumerateStereoisomers import EnumerateStereoisomers, StereoEnumerationOptions
RDLogger.DisableLog('rdApp.*')

TF = {0: 0.5625, 25: 1.0, 80: 2.8125}

# transformation -> list of (name, reaction smarts, base rate)
A1=(0.6,1.0667,1.8963); A0=(0.0,0.6,1.0667)
RX = {
    'boc_protection': [
        ('amine1', '[NX3;H2;!$(NC=[O,S,N]);!$(NS(=O)=O);!$(Na):1]>>[N:1]C(=O)OC(C)(C)C', (0.38,1.0667,1.9)),
        ('amine2', '[NX3;H1;!$(NC=[O,S,N]);!$(NS(=O)=O);!$(Na):1]>>[N:1]C(=O)OC(C)(C)C', (0.1,0.6,1.0667)),
        ('aniline', '[NX3;H1,H2;$(Nc);!$(NC=[O,S,N]);!$(NS(=O)=O):1]>>[N:1]C(=O)OC(C)(C)C', (0,0,1.0667)),
    ],
    'boc_deprotection': [
        ('boc', '[N:1]C(=O)OC(C)(C)C>>[N:1]', (0,0.6,1.5)),
    ],
    'tbs_protection': [
        ('oh1', '[OX2H1;$(O[CH2;!$(C=O)]):1]>>[O:1][Si](C)(C)C(C)(C)C', A1),
        ('oh2', '[OX2H1;$(O[CX4;H1,H0]):1]>>[O:1][Si](C)(C)C(C)(C)C', (0,0.3,0.6)),
        ('phenol', '[OX2H1;$(Oc):1]>>[O:1][Si](C)(C)C(C)(C)C', (0,0.3,0.6)),
    ],
    'tbs_deprotection': [
        ('tbs', '[O:1][Si](C)(C)C(C)(C)C>>[O:1]', (0,0.6,1.5)),
    ],
    'esterification': [
        ('acid', '[CX3:1](=[O:2])[OX2H1]>>[C:1](=[O:2])OC', (0,1.2,2.1333)),
    ],
    'amide_coupling': [
        ('acid', '[CX3:1](=[O:2])[OX2H1]>>[C:1](=[O:2])NCc1ccccc1', A1),
    ],
    'lialh4_reduction': [
        ('ester', '[CX3;!R:1](=O)[OX2:2][#6:3]>>[CH2:1][OH1].[OH1][#6:3]', (0,0.8875,1.578)),
        ('lactone', '[CX3;R:1](=O)[OX2;R:2][#6:3]>>[CH2:1][OH1].[OH1][#6:3]', (0,0.6,1.0667)),
        ('amide', '[CX3:1](=O)[NX3;H1;!$(N[S,P]);!$(N(C=O)C=O);!$(N[a]):2]>>[CH2:1][N:2]', (0,0.3375,0.6)),
        ('carbonyl', '[CX3;$(C([#6,#1])[#6,#1]);!$(C[O,N]):1]=[OX1]>>[C:1][OH1]', A1),
    ],
    'nitro_reduction': [
        ('nitro', '[N+:1](=O)[O-]>>[N+0H2:1]', A0),
        ('arbr', '[c:1][Br]>>[cH1:1]', (0,0,0.6)),
    ],
    'acetylation': [
        ('amine1', '[NX3;H2;!$(NC=[O,S,N]);!$(NS(=O)=O);!$(Na);!$(N[Si]):1]>>[N:1]C(C)=O', (1.35,2.4,4.27)),
        ('amine2', '[NX3;H1;!$(NC=[O,S,N]);!$(NS(=O)=O);!$(Na);!$(N[Si]):1]>>[N:1]C(C)=O', (0.45,0.8,1.42)),
        ('aniline', '[NX3;H1,H2;$(Nc);!$(NC=[O,S,N]);!$(NS(=O)=O):1]>>[N:1]C(C)=O', A0),
        ('oh1', '[OX2H1;$(O[CH2]):1]>>[O:1]C(C)=O', (0,0.9,1.6)),
        ('oh2', '[OX2H1;$(O[CX4;H1,H0]):1]>>[O:1]C(C)=O', (0,0.3,0.6)),
        ('phenol', '[OX2H1;$(Oc):1]>>[O:1]C(C)=O', (0,0,0.6)),
    ],
    'ester_hydrolysis': [
        ('arester', '[CX3;!R:1](=[O:4])[OX2:2][c:3]>>[C:1](=[O:4])[OH1].[OH1][c:3]', (0.9492, 1.6875, 3.0)),
        ('ester', '[CX3;!R:1](=[O:4])[OX2:2][C:3]>>[C:1](=[O:4])[OH1].[OH1][C:3]', (0, 0.45, 0.8)),
    ],
    'alcohol_oxidation': [
        ('prim', '[CX4;H2:1][OX2H1]>>[CH1:1]=O', A1),
        ('sec', '[CX4;H1:1]([#6])([#6])[OX2H1]>>[C:1]=O', (0.3375,0.6,1.0667)),
        ('ald', '[CX3;H1:1](=O)[#6]>>[C:1](=O)[OH1]', (0,0,0.6)),
    ],
    'reductive_amination': [
        ('ald', '[CX3;H1;!$(C[O,N]):1]=[OX1]>>[C:1]N1CCOCC1', A1),
        ('ketone', '[CX3;H0;!$(C[O,N]);$(C([#6])[#6]):1]=[OX1]>>[C:1]N1CCOCC1', (0,0.9,1.6)),
    ],
    'eschweiler_clarke': [
        ('amine1', '[NX3;H2;!$(NC=[O,S,N]);!$(NS(=O)=O);!$(Na):1]>>[N:1](C)C', A0),
        ('amine2', '[NX3;H1;!$(NC=[O,S,N]);!$(NS(=O)=O);!$(Na):1]>>[N:1]C', (0,0,0.45)),
    ],
    'bromination': [
        ('arh', '[cH1;$(c1ccccc1);$(c:c[OH1,OX2,NX3;!$([N+]);!$(NS)]),$(c:c:c:c[OH1,OX2,NX3;!$([N+])]):1]>>[c:1]Br', A0),
    ],
    'dehalogenation': [
        ('arbr', '[c:1][Br,I]>>[cH1:1]', (0,0.3375,0.6)),
        ('arcl', '[c:1][Cl]>>[cH1:1]', (0,0,0.6)),
    ],
}
TI = {0: 0, 25: 1, 80: 2}
import os
PURMODE = int(os.environ.get('PURMODE', '0'))
_RXN = {}


def rxn(sm):
    if sm not in _RXN:
        _RXN[sm] = AllChem.ReactionFromSmarts(sm)
    return _RXN[sm]


_te = None


def clean(m):
    global _te
    try:
        m = Chem.Mol(m)
        Chem.SanitizeMol(m)
        m = rdMolStandardize.Cleanup(m)
        if _te is None:
            _te = rdMolStandardize.TautomerEnumerator()
        try:
            m2 = _te.Canonicalize(m)
            if m2 is not None:
                if m2.GetNumAtoms() == m.GetNumAtoms():
                    for a, b in zip(m.GetAtoms(), m2.GetAtoms()):
                        if a.GetChiralTag() != Chem.ChiralType.CHI_UNSPECIFIED and b.GetChiralTag() == Chem.ChiralType.CHI_UNSPECIFIED \
                                and b.GetHybridization() == Chem.HybridizationType.SP3 and a.GetTotalNumHs() == b.GetTotalNumHs():
                            b.SetChiralTag(a.GetChiralTag())
                    for bo in m.GetBonds():
                        if bo.GetStereo() in (Chem.BondStereo.STEREOE, Chem.BondStereo.STEREOZ, Chem.BondStereo.STEREOCIS, Chem.BondStereo.STEREOTRANS):
                            b2 = m2.GetBondBetweenAtoms(bo.GetBeginAtomIdx(), bo.GetEndAtomIdx())
                            if b2 is not None and b2.GetBondType() == Chem.BondType.DOUBLE and b2.GetStereo() == Chem.BondStereo.STEREONONE:
                                sa = list(bo.GetStereoAtoms())
                                if len(sa) == 2:
                                    try:
                                        b2.SetStereoAtoms(sa[0], sa[1])
                                        b2.SetStereo(bo.GetStereo())
                                    except Exception:
                                        pass
                    try:
                        Chem.AssignStereochemistry(m2, cleanIt=True, force=True)
                    except Exception:
                        pass
                m = Chem.MolFromSmiles(Chem.MolToSmiles(m2)) or m2
        except Exception:
            pass
        return m
    except Exception:
        return None


def prepare(smi):
    m = Chem.MolFromSmiles(smi)
    m = rdMolStandardize.Cleanup(m)
    frags = Chem.GetMolFrags(m, asMols=True)
    if len(frags) > 1:
        m = max(frags, key=lambda f: (f.GetNumHeavyAtoms(), Descriptors.MolWt(f)))
    m = rdMolStandardize.Uncharger().uncharge(m)
    m = Chem.RWMol(m)
    for a in m.GetAtoms():
        if a.GetSymbol() == 'O' and a.GetFormalCharge() == -1:
            nb = a.GetNeighbors()
            if len(nb) == 1 and nb[0].GetSymbol() == 'C':
                a.SetFormalCharge(0); a.SetNumExplicitHs(1); a.SetNoImplicit(False)
    m = m.GetMol()
    Chem.SanitizeMol(m)
    m = clean(m)
    return m


def can(m):
    return Chem.MolToSmiles(m)


def constit(smi):
    m = Chem.MolFromSmiles(smi)
    Chem.RemoveStereochemistry(m)
    return Chem.MolToSmiles(m)


def heavy(smi):
    return Chem.MolFromSmiles(smi).GetNumHeavyAtoms()


def crowd(m, atom_idxs):
    # crowdedness: number of heavy neighbours of the neighbours of the reacting atom
    a = m.GetAtomWithIdx(atom_idxs[0])
    n = 0
    for nb in a.GetNeighbors():
        if nb.GetAtomicNum() > 1:
            n += nb.GetDegree() - 1
    return 1.0


def _parity(a, b):
    a = list(a); n = 0
    for i in range(len(a)):
        j = a.index(b[i], i)
        if j != i:
            a[i], a[j] = a[j], a[i]; n += 1
    return n % 2


def fix_stereo(r, p):
    for at in p.GetAtoms():
        if not at.HasProp('react_atom_idx'):
            continue
        ri = at.GetIntProp('react_atom_idx')
        ra = r.GetAtomWithIdx(ri)
        t = ra.GetChiralTag()
        if t not in (Chem.ChiralType.CHI_TETRAHEDRAL_CW, Chem.ChiralType.CHI_TETRAHEDRAL_CCW):
            continue
        rn = [b.GetOtherAtomIdx(ri) for b in ra.GetBonds()]
        pn = []
        for b in at.GetBonds():
            o = b.GetOtherAtom(at)
            pn.append(o.GetIntProp('react_atom_idx') if o.HasProp('react_atom_idx') else -1)
        if sorted(rn) != sorted(pn):
            continue
        par = _parity(rn, pn)
        if par:
            t = Chem.ChiralType.CHI_TETRAHEDRAL_CCW if t == Chem.ChiralType.CHI_TETRAHEDRAL_CW else Chem.ChiralType.CHI_TETRAHEDRAL_CW
        at.SetChiralTag(t)


def site_products(m, smarts):
    r = rxn(smarts)
    patt = r.GetReactants()[0]
    out = []
    matches = m.GetSubstructMatches(patt)
    prods = r.RunReactants((m,))
    seen = {}
    for ps in prods:
        smis = []
        ok = True
        for p in ps:
            try:
                fix_stereo(m, p)
                Chem.SanitizeMol(p)
                smis.append(Chem.MolToSmiles(p))
            except Exception:
                ok = False
        if not ok:
            continue
        full = Chem.MolFromSmiles('.'.join(smis))
        if full is None:
            continue
        key = Chem.MolToSmiles(full)
        seen.setdefault(key, 0)
        seen[key] += 1
    ntot = sum(seen.values())
    if ntot:
        sc = len(matches) / float(ntot)
        seen = {k: v * sc for k, v in seen.items()}
    cr = [crowd(m, mt) for mt in matches] or [1.0]
    avgc = sum(cr) / len(cr)
    return seen, avgc


def split_products(key):
    frags = key.split('.')
    main = []
    for f in frags:
        fm = Chem.MolFromSmiles(f)
        if fm is None:
            continue
        fm = clean(fm)
        if fm is None:
            continue
        main.append(can(fm))
    return main


def enum_stereo(smi):
    m = Chem.MolFromSmiles(smi)
    opts = StereoEnumerationOptions(onlyUnassigned=True, unique=True)
    try:
        isos = list(EnumerateStereoisomers(m, options=opts))
    except Exception:
        isos = [m]
    res = sorted(set(Chem.MolToSmiles(i) for i in isos))
    return res or [smi]


def strip(smi):
    m = Chem.MolFromSmiles(smi)
    Chem.RemoveStereochemistry(m)
    return Chem.MolToSmiles(m)


def run_step(mix, tname, eq, T, stereo, byp_limit=4):
    rules = RX.get(tname, [])
    tf = TF.get(T, 1.0)
    for rnd in range(eq):
        new = {}
        reagent = 100.0
        plans = []
        demand = 0.0
        for smi, amt in mix.items():
            m = Chem.MolFromSmiles(smi)
            opts = []
            for (nm, sm, k) in rules:
                kk = k[TI.get(T, 1)]
                if kk <= 0:
                    continue
                seen, cf = site_products(m, sm)
                for key, cnt in seen.items():
                    opts.append((key, kk * cnt * cf))
            R = sum(o[1] for o in opts)
            frac = 1 - math.exp(-R) if R > 0 else 0.0
            plans.append((smi, amt, opts, R, frac))
            demand += amt * frac
        scale = min(1.0, reagent / demand) if demand > 0 else 1.0
        for smi, amt, opts, R, frac in plans:
            f = frac * scale
            new[smi] = new.get(smi, 0) + amt * (1 - f)
            if f <= 0:
                continue
            for key, r in opts:
                a = amt * f * r / R
                parts = split_products(key)
                parts = [p for p in parts if heavy(p) > byp_limit]
                for p in parts:
                    if stereo == 'strip':
                        ps = [strip(p)]
                    elif stereo == 'enumerate':
                        ps = enum_stereo(p)
                    else:
                        ps = [p]
                    for q in ps:
                        new[q] = new.get(q, 0) + a / len(ps)
        mix = {k: v for k, v in new.items() if v > 1e-9}
    return mix


# ---------------- ionisation ----------------
ACIDS = [
    ('[CX3](=O)[OX2H1]', 3.8),
    ('[SX4](=O)(=O)[NH1]c1[n,o,s]***1', 6.5),
    ('[SX4](=O)(=O)[NH1]a', 7.0),
    ('[SX4](=O)(=O)[NH2]', 9.9),
    ('[OX2H1]c', 9.5),
]
BASES = [
    ('[NX3;H2,H1,H0;!$(N[C,S,P]=[O,S,N]);!$(Na);!$(N[a]);!$(NC=C);!$(N[Si]);$(N[CX4][CX3]=O)]', 7.5),
    ('[NX3;H2,H1,H0;!$(N[C,S,P]=[O,S,N]);!$(Na);!$(N[a]);!$(NC=C);!$(N[Si]);$(N1CCOCC1)]', 6.8),
    ('[NX3;H2,H1,H0;!$(N[C,S,P]=[O,S,N]);!$(Na);!$(N[a]);!$(NC=C);!$(N[Si])]', 9.8),
    ('[NX3;H2,H1;$(Nc);!$(N(c)c);!$(N[C,S]=[O,N]);!$(NS)]', 4.6),
    ('[nX2;r6]', 5.0),
]
_pc = {}


def pat(s):
    if s not in _pc:
        _pc[s] = Chem.MolFromSmarts(s)
    return _pc[s]


def groups(m):
    used = set()
    acids, bases = [], []
    for s, pk in ACIDS:
        for mt in m.GetSubstructMatches(pat(s)):
            key = mt[-1] if s.startswith('[OX2H1]') else mt[0]
            if any(i in used for i in mt[:1]) :
                continue
            used.add(mt[0])
            acids.append(pk)
    for s, pk in BASES:
        for mt in m.GetSubstructMatches(pat(s)):
            if mt[0] in used:
                continue
            used.add(mt[0])
            bases.append(pk)
    perm = 0
    for a in m.GetAtoms():
        if a.GetFormalCharge() > 0 and a.GetAtomicNum() == 7 and a.GetTotalNumHs() == 0 and not any(n.GetFormalCharge() < 0 for n in a.GetNeighbors()):
            perm += 1
    return acids, bases, perm


def ion(smi, pH):
    m = Chem.MolFromSmiles(smi)
    acids, bases, perm = groups(m)
    ch = perm
    lf = 0.0
    LD = {}
    for pk in acids:
        if pH > pk:
            ch -= 1
        pk = LD.get(pk, pk)
        lf += math.log10(1 + 10 ** (pH - pk))
    for pk in bases:
        if pH < pk:
            ch += 1
        pk = LD.get(pk, pk)
        lf += math.log10(1 + 10 ** (pk - pH))
    logp = Crippen.MolLogP(m)
    if perm:
        logD = -10.0
    else:
        logD = logp - lf
    return ch, logD


def main():
    inp = json.load(sys.stdin)
    p = inp['parameters']
    route, rec = p['case'].split(': ', 1)
    eq = int(p['equivalents']); T = int(p['temperature']); mp = int(p['max_products'])
    stereo = p['stereochemistry']; pH = float(p['workup_ph'])
    names = route.split('_')
    steps = []
    i = 0
    toks = names
    n = len(toks)
    for j, t in enumerate(toks):
        if t == 'boc':
            steps.append('boc_protection' if j == 0 else 'boc_deprotection')
        elif t == 'tbs':
            steps.append('tbs_protection' if j == 0 else 'tbs_deprotection')
        elif t == 'esterify':
            steps.append('esterification')
        elif t == 'couple':
            steps.append('amide_coupling')
        elif t == 'reduce':
            steps.append('nitro_reduction' if (j > 0 and toks[j - 1] == 'nitro') else 'lialh4_reduction')
        elif t == 'nitro':
            pass
        elif t == 'deprotect':
            steps.append('tbs_deprotection' if toks[0] == 'tbs' else 'boc_deprotection')
        elif t == 'acetylate':
            steps.append('acetylation')
        elif t == 'hydrolyse':
            steps.append('ester_hydrolysis')
        elif t == 'oxidise':
            steps.append('alcohol_oxidation')
        elif t == 'aminate':
            steps.append('reductive_amination')
        elif t == 'methylate':
            steps.append('eschweiler_clarke')
        elif t == 'brominate':
            steps.append('bromination')
        elif t == 'dehalogenate':
            steps.append('dehalogenation')
    parent = prepare(rec)
    psmi = can(parent)
    if stereo == 'strip':
        psmi = strip(psmi)
    pcon = constit(psmi)
    mix = {psmi: 100.0}
    for si, st in enumerate(steps):
        mix = run_step(mix, st, eq, T, stereo)
        if si < len(steps) - 1:
            items = sorted(mix.items(), key=lambda kv: (-round(kv[1], 6), kv[0]))[:mp]
            mix = dict(items)
    mix = {k: v for k, v in mix.items() if v > 1e-6}
    crude = sum(mix.values())
    recovered = sum(v for k, v in mix.items() if constit(k) == pcon)
    prods = {k: v for k, v in mix.items() if constit(k) != pcon}
    info = {k: ion(k, pH) for k in mix}
    out = dict(charge=0, crude_pct=round(crude, 6), isolated_pct=0.0, isolated_purity_pct=0.0, kept_pct=0.0,
               logp=0.0, mw=0.0, n_products=0, n_species=len(mix), phase='none', product_yields_pct=[],
               products=[], purity_pct=0.0, qed=0.0, recovered_pct=round(recovered, 6), selected=[], tpsa=0.0,
               yield_pct=0.0)
    if prods:
        org = sum(v for k, v in prods.items() if info[k][1] > 0)
        aq = sum(v for k, v in prods.items() if info[k][1] <= 0)
        phase = 'organic' if org >= aq else 'aqueous'
        inph = {k: v for k, v in mix.items() if (info[k][1] > 0) == (phase == 'organic')}
        pl = sorted(((k, v) for k, v in prods.items() if k in inph), key=lambda kv: (-round(kv[1], 6), kv[0]))[:mp]
        if not pl:
            pl = sorted(prods.items(), key=lambda kv: (-round(kv[1], 6), kv[0]))[:mp]
        top, ty = pl[0]
        def frac1(k):
            D = 10 ** max(-30, min(30, info[k][1]))
            return D / (1 + D) if phase == 'organic' else 1 / (1 + D)
        if PURMODE == 1:
            tot = sum(v * frac1(k) for k, v in mix.items())
            tot = tot / frac1(top) if frac1(top) > 0 else ty
        else:
            tot = sum(inph.values()) or ty
        m = Chem.MolFromSmiles(top)
        # isolation
        kept = {}
        for k, v in mix.items():
            D = 10 ** max(-30, min(30, info[k][1]))
            stay = (1.0 / (1.0 + D)) ** 3
            kept[k] = v * (1 - stay) if phase == 'organic' else v * stay
        ktot = sum(kept.values())
        out.update(charge=info[top][0], phase=phase, products=[k for k, _ in pl],
                   product_yields_pct=[round(v, 6) for _, v in pl], n_products=len(pl), selected=[top],
                   yield_pct=round(ty, 6), purity_pct=round(100 * ty / tot, 6),
                   mw=round(Descriptors.MolWt(m), 3), logp=round(Crippen.MolLogP(m), 4),
                   tpsa=round(rdMolDescriptors.CalcTPSA(m, includeSandP=True), 2), qed=round(QED.qed(m), 6),
                   isolated_pct=round(kept[top], 6), kept_pct=round(ktot, 6),
                   isolated_purity_pct=round(100 * kept[top] / ktot, 6) if ktot > 0 else 0.0)
    print(json.dumps(out))


if __name__ == '__main__':
    try:
        main()
    except Exception as e:
        import traceback
        traceback.print_exc()
        print(json.dumps(dict(charge=0, crude_pct=100.0, isolated_pct=0.0, isolated_purity_pct=0.0, kept_pct=0.0,
                              logp=0.0, mw=0.0, n_products=0, n_species=1, phase='none', product_yields_pct=[],
                              products=[], purity_pct=0.0, qed=0.0, recovered_pct=100.0, selected=[], tpsa=0.0,
                              yield_pct=0.0)))
