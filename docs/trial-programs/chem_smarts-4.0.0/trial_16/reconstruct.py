# Independent program: the final workspace of agent trial 16 of chem_smarts 4.0.0 at the default
# evidence level with the cover (docs/trials.md), kept as the agent wrote it.
import sys, json, math
from rdkit import Chem, RDLogger
from rdkit.Chem import rdFingerprintGenerator, AllChem, Descriptors, Crippen, rdMolDescriptors, QED
from rdkit.Chem.MolStandardize import rdMolStandardize
from rdkit.Chem.EnumerateStereoisomers import EnumerateStereoisomers, StereoEnumerationOptions

RDLogger.DisableLog('rdApp.*')

LEVELS = [0.0, 0.6, 0.8, 0.95]
TL = {0: 0, 25: 1, 80: 2}

BOC = 'C(=O)OC(C)(C)C'
TBS = '[Si](C)(C)C(C)(C)C'

# transformation -> list of (reaction smarts, difficulty)
RX = {
    'boc_protection': [('[N;X3;H2;!$(N[C,S]=[O,S,N]);!$(N-a);!$(N[N+](=O)):1]>>[N:1]' + BOC, 0),
                       ('[N;X3;H1;!$(N[C,S]=[O,S,N]);!$(N-a);!$(N[N+](=O)):1]>>[N:1]' + BOC, 1),
                       ('[N;X3;H1,H2;!$(N[C,S]=[O,S,N]);$(N-a);!$(N[N+](=O)):1]>>[N:1]' + BOC, 2)],
    'boc_deprotection': [('[N:1]C(=O)OC(C)(C)C>>[N:1]', 0)],
    'tbs_protection': [('[OX2H1;$(O[CH2]);!$(OC=O):1]>>[O:1]' + TBS, 0),
                       ('[OX2H1;$(O[CX4H1]);!$(OC=O):1]>>[O:1]' + TBS, 2),
                       ('[OX2H1;$(O[CX4H0]);!$(OC=O):1]>>[O:1]' + TBS, 3),
                       ('[OX2H1;$(Oc):1]>>[O:1]' + TBS, 1)],
    'tbs_deprotection': [('[O:1][Si](C)(C)C(C)(C)C>>[O:1]', 0)],
    'esterification': [('[CX3:1](=[O:2])[OX2H1,OX1-]>>[C:1](=[O:2])OC', 1)],
    'amide_coupling': [('[CX3:1](=[O:2])[OX2H1,OX1-]>>[C:1](=[O:2])NCc1ccccc1', 0)],
    'lialh4_reduction': [('RED:[CX3;!$(C(O)(=O)O)](=O)[OX2][#6]', 1, 'co'),
                         ('[CX3:1](=O)[OX2H1,OX1-]>>[CH2:1][OH]', 1, 'co'),
                         ('[CX3;!$(C(N)(=O)[N,O]):1](=O)[NX3:2]>>[CH2:1][N:2]', 2),
                         ('[CX3H1:1]=O>>[CH2:1]O', 0),
                         ('[#6:2][CX3:1](=O)[#6:3]>>[#6:2][CH1:1](O)[#6:3]', 0)],
    'nitro_reduction': [('[N+:1](=O)[O-]>>[NH2+0:1]', 1),
                        ('[c:1]Br>>[cH:1]', 2)],
    'acetylation': [('[N;X3;H1,H2;!$(N[C,S]=[O,S,N]);!$(N[N+](=O));!$(N-a):1]>>[N:1]C(C)=O', 0),
                    ('[N;X3;H1,H2;!$(N[C,S]=[O,S,N]);!$(N[N+](=O));$(N-a):1]>>[N:1]C(C)=O', 1),
                    ('[OX2H1;$(O[CH2]);!$(OC=O);!$(O[Si]):1]>>[O:1]C(C)=O', 1),
                    ('[OX2H1;$(O[CX4;H1,H0]);!$(OC=O);!$(O[Si]):1]>>[O:1]C(C)=O', 2),
                    ('[OX2H1;$(Oc):1]>>[O:1]C(C)=O', 2)],
    'ester_hydrolysis': [('HYD:[CX3;!$(C(O)(=O)O)](=O)[OX2][c]', 0),
                         ('HYD:[CX3;!$(C(O)(=O)O)](=O)[OX2][C]', 1)],
    'alcohol_oxidation': [('[CX4H2:1][OX2H1]>>[CH1:1]=O', 0),
                          ('[CX4H1:1]([#6:2])([#6:3])[OX2H1]>>[CH0:1]([#6:2])([#6:3])=O', 1),
                          ('[CX3H1:1](=[O:2])[#6:3]>>[C:1](=[O:2])(O)[#6:3]', 2)],
    'reductive_amination': [('[CX3H1:1](=O)[#6:2]>>[CH2:1](N1CCOCC1)[#6:2]', 0),
                            ('[#6:2][CX3H0:1](=O)[#6:3]>>[#6:2][CH1:1](N1CCOCC1)[#6:3]', 1)],
    'eschweiler_clarke': [('[NX3;H2;!$(N[C,S]=[O,S,N]);!$(N-a);!$(N[N+](=O)):1]>>[N:1](C)C', 1),
                          ('[NX3;H1;!$(N[C,S]=[O,S,N]);!$(N-a);!$(N[N+](=O)):1]>>[N:1]C', 2)],
    'bromination': [('[cH;$(c1ccccc1);$(c:c:c:c-[OX2,NX3;!$([N+]);!$(N-S);!$(OC=O)]):1]>>[c:1]Br', 0),
                    ('[cH;$(c1ccccc1);$(c:c-[OX2,NX3;!$([N+]);!$(N-S);!$(OC=O)]):1]>>[c:1]Br', 1)],
    'dehalogenation': [('[c:1]Br>>[cH:1]', 1), ('[c:1]I>>[cH:1]', 0), ('[c:1]Cl>>[cH:1]', 2)],
}
_RXC = {}


def rxn(sma):
    if sma not in _RXC:
        _RXC[sma] = AllChem.ReactionFromSmarts(sma)
    return _RXC[sma]


def steps_for(route):
    parts = route.split('_')
    out = []
    for i, p in enumerate(parts):
        last = (i == len(parts) - 1)
        if p == 'boc':
            out.append('boc_deprotection' if (last and i > 0) else 'boc_protection')
        elif p == 'tbs':
            out.append('tbs_deprotection' if (last and i > 0) else 'tbs_protection')
        elif p == 'deprotect':
            out.append('boc_deprotection' if parts[0] == 'boc' else 'tbs_deprotection')
        elif p == 'esterify':
            out.append('esterification')
        elif p == 'couple':
            out.append('amide_coupling')
        elif p == 'reduce':
            out.append('nitro_reduction' if 'nitro' in parts else 'lialh4_reduction')
        elif p == 'nitro':
            continue
        elif p == 'acetylate':
            out.append('acetylation')
        elif p == 'hydrolyse':
            out.append('ester_hydrolysis')
        elif p == 'oxidise':
            out.append('alcohol_oxidation')
        elif p == 'aminate':
            out.append('reductive_amination')
        elif p == 'methylate':
            out.append('eschweiler_clarke')
        elif p == 'brominate':
            out.append('bromination')
        elif p == 'dehalogenate':
            out.append('dehalogenation')
    return out


_TE = None


def cleanup(m, stereo):
    global _TE
    try:
        m = rdMolStandardize.Cleanup(m)
        frags = Chem.GetMolFrags(m, asMols=True)
        if len(frags) > 1:
            m = max(frags, key=lambda f: (f.GetNumHeavyAtoms(), Descriptors.MolWt(f)))
        m = rdMolStandardize.Uncharger().uncharge(m)
        if _TE is None:
            _p = rdMolStandardize.CleanupParameters()
            _p.tautomerRemoveSp3Stereo = False
            _p.tautomerRemoveBondStereo = False
            _TE = rdMolStandardize.TautomerEnumerator(_p)
        m2 = _TE.Canonicalize(m)
        if m2 is not None:
            m = m2
    except Exception:
        pass
    if stereo == 'strip':
        Chem.RemoveStereochemistry(m)
    return m


def canon(m):
    return Chem.MolToSmiles(m)


def small(m):
    return m.GetNumHeavyAtoms() <= 5


def expand_stereo(smi):
    m = Chem.MolFromSmiles(smi)
    opts = StereoEnumerationOptions(onlyUnassigned=True, unique=True)
    try:
        isos = list(EnumerateStereoisomers(m, options=opts))
    except Exception:
        isos = [m]
    out = sorted(set(Chem.MolToSmiles(i) for i in isos))
    return out or [smi]


def site_options(smi, step, tl):
    """best (lowest difficulty) reacting sites: returns (p, [frag lists])"""
    m = Chem.MolFromSmiles(smi)
    cands = []
    for ent in RX[step]:
        sma, d = ent[0], ent[1]
        grp = ent[2] if len(ent) > 2 else sma
        idx = tl + 1 - d
        if idx <= 0:
            continue
        if sma.startswith('HYD:') or sma.startswith('RED:'):
            prods = cleave(m, sma[:3], sma[4:])
        else:
            r = rxn(sma)
            try:
                prods = r.RunReactants((m,))
            except Exception:
                continue
        seen = set()
        res = []
        for ps in prods:
            frags = []
            ok = True
            for pm in ps:
                try:
                    pm = Chem.Mol(pm)
                    Chem.SanitizeMol(pm)
                    frags.extend(Chem.MolToSmiles(pm).split('.'))
                except Exception:
                    ok = False
            if not ok:
                continue
            key = tuple(sorted(frags))
            if key in seen:
                continue
            seen.add(key)
            res.append(list(frags))
        if res:
            cands.append((d, LEVELS[min(idx, 3)], res, grp))
    if not cands:
        return None
    dmin = min(c[0] for c in cands)
    g0 = None
    allres = []
    pp0 = None
    for d, pp, res, grp in cands:
        if d == dmin and (g0 is None or grp == g0):
            g0 = grp
            pp0 = pp
            allres.extend(res)
    return pp0, allres


def cleave(m, kind, sma):
    out = []
    for c, o1, o2, x in m.GetSubstructMatches(pat(sma)):
        rw = Chem.RWMol(m)
        rw.RemoveBond(c, o2)
        if kind == 'HYD':
            n = rw.AddAtom(Chem.Atom(8))
            rw.AddBond(c, n, Chem.BondType.SINGLE)
        else:
            rw.GetBondBetweenAtoms(c, o1).SetBondType(Chem.BondType.SINGLE)
        for a in (c, o1, o2):
            rw.GetAtomWithIdx(a).SetNoImplicit(False)
            rw.GetAtomWithIdx(a).SetNumExplicitHs(0)
            rw.GetAtomWithIdx(a).SetIsAromatic(False)
        mm = rw.GetMol()
        try:
            Chem.SanitizeMol(mm)
        except Exception:
            continue
        fr = Chem.GetMolFrags(mm, asMols=False, sanitizeFrags=False)
        if len(fr) > 1:
            mols = Chem.GetMolFrags(mm, asMols=True)
            order = sorted(range(len(fr)), key=lambda i: 0 if c in fr[i] else 1)
            out.append(tuple(mols[i] for i in order))
        else:
            out.append((mm,))
    return out


def clean_frag(f, stereo):
    fm = Chem.MolFromSmiles(f)
    if fm is None:
        return None
    fm = cleanup(fm, stereo)
    if small(fm):
        return None
    return canon(fm)


def chain(smi, amt, step, tl, left, stereo, out, formed, depth=0):
    opt = site_options(smi, step, tl) if left > 0 else None
    if not opt:
        out[smi] = out.get(smi, 0) + amt
        return
    p, res = opt
    out[smi] = out.get(smi, 0) + amt * (1 - p)
    n = len(res)
    for frags in res:
        for f in frags:
            fs = clean_frag(f, stereo)
            if fs is None:
                continue
            formed.add(fs)
            chain(fs, amt * p / n, step, tl, left - 1, stereo, out, formed, depth + 1)


AMINE = '[NX3;H2,H1;!$(N[C,S,P]=[O,S,N]);!$(N-a);!$(N[N+](=O))]'
ACID = '[CX3](=O)[OX2H1,OX1-]'


def is_amino_acid(smi):
    m = Chem.MolFromSmiles(smi)
    return m.HasSubstructMatch(pat(AMINE)) and m.HasSubstructMatch(pat(ACID))


_MW = {}


def molwt(s):
    if s not in _MW:
        _MW[s] = Descriptors.MolWt(Chem.MolFromSmiles(s))
    return _MW[s]


def run_step(mix, step, tl, eq, stereo, maxp):
    cur = {}
    formed = set()
    for smi, amt in mix.items():
        if step == 'amide_coupling' and Chem.MolFromSmiles(smi).HasSubstructMatch(pat(AMINE)):
            continue
        if step == 'alcohol_oxidation' and Chem.MolFromSmiles(smi).HasSubstructMatch(pat(AMINE)):
            continue
        chain(smi, amt, step, tl, eq, stereo, cur, formed)
    if stereo == 'enumerate':
        out = {}
        for s, a in cur.items():
            if s in formed:
                isos = expand_stereo(s)
                for i in isos:
                    out[i] = out.get(i, 0) + a / len(isos)
            else:
                out[s] = out.get(s, 0) + a
        cur = out
    cur = {s: a for s, a in cur.items() if a > 1e-9}
    items = sorted(cur.items(), key=lambda x: (-round(x[1], 6), -molwt(x[0]), x[0]))
    if maxp is not None:
        items = items[:maxp]
    return dict(items)


# ---------- ionisation ----------
ACIDS = [
    ('[CX3](=O)[OX2H1]', 3.5),
    ('[SX4](=O)(=O)[NX3H1]a', 6.5),
    ('[SX4](=O)(=O)[NX3H2]', 9.9),
    ('[OX2H1]a', 9.5),
]
BASES = [
    ('[NX3;H2,H1,H0;!$(N[C,S,P]=[O,S,N]);!$(N-a);!$(N[N+](=O));!$(N-[Si]);!$(NC=[C,N]);!$(N1CCOCC1);!$(N-[O,N,S])]', 9.8),
    ('[NX3;$(N1CCOCC1);!$(N[C,S]=[O,S,N]);!$(N-a)]', 6.5),
    ('[NX3;H1,H2;!$(N[C,S,P]=[O,S,N]);$(N-c);!$(N(-a)-a)]', 4.6),
    ('[nX2;r6]', 5.2),
]
_PAT = {}


def pat(s):
    if s not in _PAT:
        _PAT[s] = Chem.MolFromSmarts(s)
    return _PAT[s]


def ion_groups(m):
    acids = []
    used = set()
    for s, pk in ACIDS:
        for mt in m.GetSubstructMatches(pat(s)):
            if any(a in used for a in mt):
                continue
            used.update(mt)
            acids.append(pk)
    bases = []
    for s, pk in BASES:
        for mt in m.GetSubstructMatches(pat(s)):
            if mt[0] in used:
                continue
            used.add(mt[0])
            bases.append(pk)
    fixed = sum(a.GetFormalCharge() for a in m.GetAtoms() if a.GetFormalCharge() > 0 and not a.GetIsAromatic()
                and a.GetSymbol() == 'N' and a.GetTotalNumHs() == 0 and not any(n.GetFormalCharge() < 0 for n in a.GetNeighbors()))
    # quaternary counted; other charges assumed neutralised
    negfix = 0
    for a in m.GetAtoms():
        if a.GetFormalCharge() < 0 and not any(n.GetFormalCharge() > 0 for n in a.GetNeighbors()):
            negfix -= 1
    return acids, bases, fixed, negfix


def charge_and_fneutral(m, ph):
    acids, bases, fixed, negfix = ion_groups(m)
    ch = fixed + negfix
    fn = 1.0
    for pk in acids:
        if ph > pk:
            ch -= 1
        fn *= 1.0 / (1.0 + 10 ** (ph - pk))
    for pk in bases:
        if ph < pk:
            ch += 1
        fn *= 1.0 / (1.0 + 10 ** (pk - ph))
    if fixed != 0 or negfix != 0:
        fn = 0.0
    return ch, fn


def main():
    sc = json.load(sys.stdin)
    P = sc['parameters']
    route, record = P['case'].split(': ', 1)
    eq = int(P['equivalents'])
    rad = int(P['fingerprint_radius'])
    maxp = int(P['max_products'])
    stereo = P['stereochemistry']
    T = int(float(P['temperature']))
    ph = float(P['workup_ph'])
    tl = TL.get(T, 1)

    m0 = Chem.MolFromSmiles(record)
    m0 = cleanup(m0, stereo)
    sm = canon(m0)
    mix = {sm: 100.0}
    stl = steps_for(route)
    for k, st in enumerate(stl):
        try:
            mix = run_step(mix, st, tl, eq, stereo, maxp if k < len(stl) - 1 else None)
        except Exception:
            pass
    crude = sum(mix.values())
    nsp = len(mix)
    info = {}
    for s, a in mix.items():
        mm = Chem.MolFromSmiles(s)
        ch, fn = charge_and_fneutral(mm, ph)
        lp = Crippen.MolLogP(mm)
        phase = 'aqueous' if (fn < 0.5 or ch != 0) else ('organic' if lp > 0 else 'aqueous')
        D = (10 ** lp) * fn
        info[s] = dict(amt=a, ch=ch, lp=lp, phase=phase, D=D)
    prods = [s for s in mix if s != sm]
    out = {k: 0 for k in ['charge', 'fp_on', 'hba', 'hbd', 'n_products']}
    out.update({k: 0.0 for k in ['isolated_pct', 'isolated_purity_pct', 'kept_pct', 'logp', 'mw', 'purity_pct', 'qed', 'tpsa', 'yield_pct']})
    out['crude_pct'] = round(crude, 6)
    out['n_species'] = nsp
    out['phase'] = 'none'
    out['products'] = []
    out['selected'] = []
    if prods:
        org = sum(info[s]['amt'] for s in prods if info[s]['phase'] == 'organic')
        aq = sum(info[s]['amt'] for s in prods if info[s]['phase'] == 'aqueous')
        kept = 'organic' if org >= aq else 'aqueous'
        kp = [s for s in prods if info[s]['phase'] == kept]
        kp.sort(key=lambda s: (-round(info[s]['amt'], 6), -molwt(s), s))
        top0 = kp[0]
        rest = sorted(kp[1:], key=lambda s: (-round(info[s]['amt'], 6), s))
        kp = ([top0] + rest)[:maxp]
        top = kp[0]
        tm = Chem.MolFromSmiles(top)
        phase_tot = sum(info[s]['amt'] for s in mix if info[s]['phase'] == kept)
        iso = {}
        for s in mix:
            D = info[s]['D']
            if kept == 'organic':
                f = 1 - (1 / (1 + D)) ** 3
            else:
                f = (1 / (1 + D)) ** 3
            iso[s] = info[s]['amt'] * f
        ktot = sum(iso.values())
        out.update(dict(
            phase=kept, products=kp, selected=[top], n_products=len(kp),
            yield_pct=round(info[top]['amt'], 6),
            purity_pct=round(100 * info[top]['amt'] / phase_tot, 6) if phase_tot else 0.0,
            isolated_pct=round(iso[top], 6), kept_pct=round(ktot, 6),
            isolated_purity_pct=round(100 * iso[top] / ktot, 6) if ktot > 0 else 0.0,
            charge=int(info[top]['ch']),
            mw=round(Descriptors.MolWt(tm), 3), logp=round(Crippen.MolLogP(tm), 4),
            tpsa=round(rdMolDescriptors.CalcTPSA(tm, includeSandP=True), 2),
            hba=int(rdMolDescriptors.CalcNumLipinskiHBA(tm)), hbd=int(rdMolDescriptors.CalcNumLipinskiHBD(tm)),
            qed=round(QED.qed(tm), 6),
            fp_on=int(rdFingerprintGenerator.GetMorganGenerator(radius=rad, fpSize=1024).GetFingerprint(tm).GetNumOnBits()),
        ))
    print(json.dumps(out))


if __name__ == '__main__':
    try:
        main()
    except Exception as e:
        print(json.dumps({'charge': 0, 'crude_pct': 100.0, 'fp_on': 0, 'hba': 0, 'hbd': 0, 'isolated_pct': 0.0,
                          'isolated_purity_pct': 0.0, 'kept_pct': 0.0, 'logp': 0.0, 'mw': 0.0, 'n_products': 0,
                          'n_species': 1, 'phase': 'none', 'products': [], 'purity_pct': 0.0, 'qed': 0.0,
                          'selected': [], 'tpsa': 0.0, 'yield_pct': 0.0}))
        print(repr(e), file=sys.stderr)
