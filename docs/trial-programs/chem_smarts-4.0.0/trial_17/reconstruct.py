# Independent program: the final workspace of agent trial 17 of chem_smarts 4.0.0 at the default
# evidence level with the cover (docs/trials.md), kept as the agent wrote it.
import sys, json, math
from rdkit import Chem, RDLogger
RDLogger.DisableLog('rdApp.*')
from rdkit.Chem import AllChem, Descriptors, Crippen, rdMolDescriptors, QED, Lipinski
from rdkit.Chem import rdFingerprintGenerator as RFG
from rdkit.Chem.MolStandardize import rdMolStandardize as STD
from rdkit.Chem.EnumerateStereoisomers import EnumerateStereoisomers, StereoEnumerationOptions

LEV = [0.0, 0.6, 0.8, 0.95]
TIDX = {0: 0, 25: 1, 80: 2}
BYPROD_MAX_HEAVY = 6   # fragments with at most this many heavy atoms are dropped as by-products

ACT = '$([OX2H1]),$([OX2;!$(O-C=O)][#6X4]),$([NX3;+0;!$(N~[O,S]);!$(N=*)])'
AMINE_AL = '[NX3;H2,H1;+0;!$(N-[#6,#16,#15]=[O,S,N]);!$(N-a);!$(N-[#7,#8,#16]);!$(N-C=C):1]'
ANILINE = '[NX3;H2,H1;+0;!$(N-[#6,#16,#15]=[O,S,N]);$(N-a);!$(N(-a)-a);!$(N-[#7,#8,#16]):1]'
BOC = 'C(=O)OC(C)(C)C'
TBS = '[Si](C)(C)C(C)(C)C'

TEMPLATES = {
    'boc_protection': [
        (AMINE_AL.replace('H2,H1', 'H2') + '>>[N:1]' + BOC, 1),
        (AMINE_AL.replace('H2,H1', 'H1') + '>>[N:1]' + BOC, 0),
        (ANILINE + '>>[N:1]' + BOC, -1),
    ],
    'boc_deprotection': [
        ('[N:1]C(=O)OC(C)(C)C>>[N:1]', 1),
    ],
    'tbs_protection': [
        ('[OX2H1:1][CH2:2]>>[O:1](' + TBS + ')[C:2]', 1),
        ('[OX2H1:1][c:2]>>[O:1](' + TBS + ')[c:2]', 0),
        ('[OX2H1:1][CX4H1:2]>>[O:1](' + TBS + ')[C:2]', -1),
        ('[OX2H1:1][CX4H0:2]>>[O:1](' + TBS + ')[C:2]', -2),
    ],
    'tbs_deprotection': [
        ('[O:1][Si](C)(C)C(C)(C)C>>[O:1]', 1),
    ],
    'esterification': [
        ('[CX3:1](=[O:2])[OX2H1]>>[C:1](=[O:2])OC', 0),
    ],
    'amide_coupling': [
        ('[CX3:1](=[O:2])[OX2H1]>>[C:1](=[O:2])NCc1ccccc1', 1),
    ],
    'lialh4_reduction': [
        ('[CX3;$([CH1](=O)[#6]),$(C(=O)([#6])[#6]):1]=[O:2]>>[C:1][O:2]', 1),
        ('[#6:3][CX3:1](=[O:2])[OX2:4][#6:5]>>([#6:3][CH2:1][OH1:2].[OH1:4][#6:5])', 0, 'acyl'),
        ('[#6:3][CX3:1](=[O:2])[OX2H1]>>[#6:3][CH2:1][OH1:2]', 0, 'acyl'),
        ('[#6:3][CX3:1](=[O:2])[NX3;!$(N(C=O)C=O);!$(N-S);!$(N-a):4]>>[#6:3][CH2:1][N:4]', -1),
    ],
    'nitro_reduction': [
        ('[#6:1][N+](=O)[O-]>>[#6:1]N', 0),
        ('[c:1][Br,I]>>[c:1]', -1),
    ],
    'acetylation': [
        (AMINE_AL + '>>[N:1]C(C)=O', 1),
        (ANILINE + '>>[N:1]C(C)=O', 0),
        ('[OX2H1:1][CH2:2]>>[O:1](C(C)=O)[C:2]', 0),
        ('[OX2H1:1][CX4H1:2]>>[O:1](C(C)=O)[C:2]', -1),
        ('[OX2H1:1][c:2]>>[O:1](C(C)=O)[c:2]', -1),
    ],
    'ester_hydrolysis': [
        ('[#6:3][CX3:1](=[O:2])[OX2:4][c:5]>>([#6:3][C:1](=[O:2])[OH1].[OH1:4][c:5])', 1),
        ('[#6:3][CX3:1](=[O:2])[OX2:4][CX4:5]>>([#6:3][C:1](=[O:2])[OH1].[OH1:4][C:5])', 0),
    ],
    'alcohol_oxidation': [
        ('[OX2H1:1][CH2:2][#6:3]>>[OH0:1]=[CH1:2][#6:3]', 1),
        ('[OX2H1:1][CX4H1:2]([#6:3])[#6:4]>>[OH0:1]=[CH0:2]([#6:3])[#6:4]', 0),
        ('[O:1]=[CH1:2][#6:3]>>[O:1]=[CH0:2](O)[#6:3]', -1),
    ],
    'reductive_amination': [
        ('[CX3;$([CH1](=O)[#6]):1]=[O]>>[C:1]N1CCOCC1', 1),
        ('[CX3;$(C(=O)([#6])[#6]);!$(C(=O)[O,N]):1]=[O]>>[C:1]N1CCOCC1', 0),
    ],
    'eschweiler_clarke': [
        ('[NX3;H2;+0;!$(N-[#6,#16,#15]=[O,S,N]);!$(N-a);!$(N-[#7,#8,#16]):1]>>[N:1](C)C', 0),
        ('[NX3;H1;+0;!$(N-[#6,#16,#15]=[O,S,N]);!$(N-a);!$(N-[#7,#8,#16]):1]>>[N:1]C', -1),
    ],
    'bromination': [
        ('[cH1;$(c1ccc(' + '[' + ACT + ']' + ')cc1):1]>>[c:1]Br', 1),
        ('[cH1;$(c1c(' + '[' + ACT + ']' + ')cccc1):1]>>[c:1]Br', 0),
    ],
    'dehalogenation': [
        ('[c:1][Br,I]>>[c:1]', 0),
        ('[c:1]Cl>>[c:1]', -1),
    ],
}
ALIASES = {
    'esterify': 'esterification', 'lialh4_reduction': 'lialh4_reduction',
}

_rxn_cache = {}
_AMINE_AL_Q = Chem.MolFromSmarts(AMINE_AL.replace(':1]', ']'))


def get_rxn(sma):
    r = _rxn_cache.get(sma)
    if r is None:
        r = AllChem.ReactionFromSmarts(sma)
        r.Initialize()
        _rxn_cache[sma] = r
    return r


_te = STD.TautomerEnumerator()


def nostereo_smiles(m):
    m2 = Chem.Mol(m)
    Chem.RemoveStereochemistry(m2)
    return Chem.MolToSmiles(m2)


def _narom(m):
    return sum(1 for a in m.GetAtoms() if a.GetIsAromatic())


def _nst(m):
    n = sum(1 for a in m.GetAtoms() if a.GetChiralTag() != Chem.ChiralType.CHI_UNSPECIFIED)
    n += sum(1 for b in m.GetBonds() if b.GetStereo() not in (Chem.BondStereo.STEREONONE, Chem.BondStereo.STEREOANY))
    return n


def cleanup(m, strict=True):
    try:
        c = _te.Canonicalize(m)
        if nostereo_smiles(c) != nostereo_smiles(m) and (not strict or _narom(c) > _narom(m) or _nst(c) >= _nst(m)):
            m = c
    except Exception:
        pass
    return m


def neutralize(m):
    m = Chem.RWMol(m)
    for a in m.GetAtoms():
        q = a.GetFormalCharge()
        if q < 0 and not any(nb.GetFormalCharge() > 0 for nb in a.GetNeighbors()):
            a.SetFormalCharge(0)
            a.SetNumExplicitHs(a.GetTotalNumHs() - q)
            a.SetNoImplicit(True)
        elif q > 0 and a.GetTotalNumHs() > 0 and not any(nb.GetFormalCharge() < 0 for nb in a.GetNeighbors()):
            h = a.GetTotalNumHs()
            a.SetFormalCharge(0)
            a.SetNumExplicitHs(h - q)
            a.SetNoImplicit(True)
    m = m.GetMol()
    Chem.SanitizeMol(m)
    return Chem.MolFromSmiles(Chem.MolToSmiles(m))


def prepare_parent(smi):
    m = Chem.MolFromSmiles(smi)
    try:
        m = STD.Cleanup(m)
    except Exception:
        pass
    frags = Chem.GetMolFrags(m, asMols=True)
    m = max(frags, key=lambda f: f.GetNumHeavyAtoms())
    m = neutralize(m)
    m = cleanup(m, strict=False)
    return Chem.MolFromSmiles(Chem.MolToSmiles(m))


def canon(m):
    return Chem.MolToSmiles(m)


def run_template(mol, sma):
    rxn = get_rxn(sma)
    outs = []
    seen = set()
    try:
        res = rxn.RunReactants((mol,))
    except Exception:
        return []
    for prods in res:
        frags = []
        ok = True
        for p in prods:
            try:
                p = Chem.Mol(p)
                try:
                    Chem.SanitizeMol(p)
                    s = Chem.MolToSmiles(p)
                except Exception:
                    p = Chem.Mol(p)
                    p.UpdatePropertyCache(False)
                    s = Chem.MolToSmiles(p)
                pm = Chem.MolFromSmiles(s)
                if pm is None:
                    ok = False
                    break
                for f in Chem.GetMolFrags(pm, asMols=True):
                    frags.append(f)
            except Exception:
                ok = False
                break
        if not ok or not frags:
            continue
        key = tuple(sorted(Chem.MolToSmiles(f) for f in frags))
        if key in seen:
            continue
        seen.add(key)
        outs.append(frags)
    return outs


def process_new(m, stereo):
    """cleanup + stereo handling of a newly formed molecule -> list of (smiles, weight)"""
    m = cleanup(m)
    if stereo == 'strip':
        m = Chem.Mol(m)
        Chem.RemoveStereochemistry(m)
        return [(Chem.MolToSmiles(m), 1.0)]
    if stereo == 'enumerate':
        try:
            opts = StereoEnumerationOptions(onlyUnassigned=True, unique=True)
            isos = list(EnumerateStereoisomers(m, options=opts))
        except Exception:
            isos = [m]
        sm = []
        for i in isos:
            s = Chem.MolToSmiles(i)
            if s not in sm:
                sm.append(s)
        sm.sort()
        if not sm:
            sm = [Chem.MolToSmiles(m)]
        return [(s, 1.0 / len(sm)) for s in sm]
    return [(Chem.MolToSmiles(m), 1.0)]


def run_step(pool, trans, T, eq, stereo):
    """pool: dict smiles->amount (ordered). returns new pool"""
    temps = TEMPLATES.get(trans, [])
    tix = TIDX.get(int(T), 1)
    out = {}

    def add(s, a):
        out[s] = out.get(s, 0.0) + a

    if trans in ('amide_coupling', 'alcohol_oxidation'):
        pool = {k: v for k, v in pool.items()
                if not Chem.MolFromSmiles(k).HasSubstructMatch(_AMINE_AL_Q)}
    frontier = list(pool.items())
    byp = {}
    for rnd in range(int(eq)):
        newf = {}
        for s, a in frontier:
            if a <= 0:
                continue
            m = Chem.MolFromSmiles(s)
            chosen = None
            groups = []
            for i, t in enumerate(temps):
                g = t[2] if len(t) > 2 else 'g%d' % i
                for gg in groups:
                    if gg[0] == g:
                        gg[2].append(t[0])
                        break
                else:
                    groups.append([g, t[1], [t[0]]])
            groups.sort(key=lambda x: -x[1])
            for g, b, smas in groups:
                prods = []
                seenk = set()
                for sma in smas:
                    for frags in run_template(m, sma):
                        key = tuple(sorted(Chem.MolToSmiles(f) for f in frags))
                        if key not in seenk:
                            seenk.add(key)
                            prods.append(frags)
                if prods:
                    chosen = (prods, b)
                    break
            if chosen is None:
                add(s, a)
                continue
            prods, b = chosen
            c = LEV[max(0, min(3, tix + b))]
            if c <= 0:
                add(s, a)
                continue
            add(s, a * (1 - c))
            share = a * c / len(prods)
            for frags in prods:
                frags = sorted(frags, key=lambda f: -f.GetNumHeavyAtoms())
                for k, f in enumerate(frags):
                    if k > 0 and f.GetNumHeavyAtoms() <= BYPROD_MAX_HEAVY:
                        continue
                    for ps, w in process_new(f, stereo):
                        if k == 0:
                            newf[ps] = newf.get(ps, 0.0) + share * w
                        else:
                            byp[ps] = byp.get(ps, 0.0) + share * w
        frontier = list(newf.items())
        if rnd == int(eq) - 1:
            for s, a in frontier:
                add(s, a)
    for s, a in byp.items():
        add(s, a)
    return out


# ---------------- ionisation ----------------
ION = [
    # (smarts, pKa, kind) kind: 'a' acid, 'b' base
    ('[CX3](=O)[OX2H1]', 3.5, 'a'),
    ('[OX2H1]-c', 9.5, 'a'),
    ('[NX3;H2;+0]S(=O)(=O)', 9.9, 'a'),
    ('[NX3;H1;+0;$(N(a)S(=O)=O)]', 6.5, 'a'),
    ('[NX3;H2,H1,H0;+0;!$(N-[#6,#16,#15]=[O,S,N]);!$(N-a);!$(N-[#7,#8,#16]);!$(N-C=C);!$(N1CCOCC1)]', 9.8, 'b'),
    ('[NX3;+0;$(N1CCOCC1);!$(N-[#6,#16,#15]=[O,S,N]);!$(N-a)]', 6.5, 'b'),
    ('[NX3;H2,H1;+0;!$(N-[#6,#16,#15]=[O,S,N]);$(N-a);!$(N(-a)-a);!$(N-[#7,#8,#16])]', 4.6, 'b'),
    ('[nX2;r6;$(n1ccccc1)]', 5.2, 'b'),
]
ION = [(Chem.MolFromSmarts(s), p, k) for s, p, k in ION]


def ion_info(m, pH):
    """returns (log10 fraction neutral, charge, permanent)"""
    logfn = 0.0
    charge = 0
    perm = 0
    for a in m.GetAtoms():
        fc = a.GetFormalCharge()
        if fc > 0 and a.GetSymbol() == 'N' and not any(nb.GetFormalCharge() < 0 for nb in a.GetNeighbors()):
            perm += fc
    used = set()
    for patt, pka, kind in ION:
        for match in m.GetSubstructMatches(patt):
            if match[0] in used:
                continue
            used.add(match[0])
            if kind == 'a':
                logfn -= math.log10(1 + 10 ** (pH - pka))
                if pH > pka:
                    charge -= 1
            else:
                logfn -= math.log10(1 + 10 ** (pka - pH))
                if pH < pka:
                    charge += 1
    return logfn, charge + perm, perm


def logD(m, pH):
    lf, ch, perm = ion_info(m, pH)
    if perm:
        return -1e9
    return Crippen.MolLogP(m) + lf


def _nion(m, pH):
    used = set()
    n = 0
    for patt, pka, kind in ION:
        for match in m.GetSubstructMatches(patt):
            if match[0] in used:
                continue
            used.add(match[0])
            if (kind == 'a' and pH > pka) or (kind == 'b' and pH < pka):
                n += 1
    return n


def phase_assign(m, pH):
    lf, ch, perm = ion_info(m, pH)
    if ch != 0 or perm or _nion(m, pH):
        return 'aqueous'
    return 'organic' if Crippen.MolLogP(m) + lf > 0 else 'aqueous'


_mwc = {}


def _sortkey(x):
    s, a = x
    if s not in _mwc:
        _mwc[s] = Chem.MolFromSmiles(s).GetNumHeavyAtoms()
    return (-round(a, 6), -_mwc[s], s)


def main():
    sc = json.load(sys.stdin)
    p = sc['parameters']
    route, rec = [x.strip() for x in p['case'].split(':', 1)]
    eq = int(p['equivalents'])
    rad = int(p['fingerprint_radius'])
    maxp = int(p['max_products'])
    stereo = p['stereochemistry']
    T = int(float(p['temperature']))
    pH = float(p['workup_ph'])

    steps = route.split('_')
    trans = []
    n = len(steps)
    for i, st in enumerate(steps):
        if st == 'boc':
            trans.append('boc_protection' if i == 0 else 'boc_deprotection')
        elif st == 'tbs':
            trans.append('tbs_protection' if i == 0 else 'tbs_deprotection')
        elif st == 'esterify':
            trans.append('esterification')
        elif st == 'couple':
            trans.append('amide_coupling')
        elif st == 'reduce':
            trans.append('nitro_reduction' if 'nitro' in steps else 'lialh4_reduction')
        elif st == 'nitro':
            continue
        elif st == 'deprotect':
            trans.append('boc_deprotection' if steps[0] == 'boc' else 'tbs_deprotection')
        elif st == 'acetylate':
            trans.append('acetylation')
        elif st == 'hydrolyse':
            trans.append('ester_hydrolysis')
        elif st == 'oxidise':
            trans.append('alcohol_oxidation')
        elif st == 'aminate':
            trans.append('reductive_amination')
        elif st == 'methylate':
            trans.append('eschweiler_clarke')
        elif st == 'brominate':
            trans.append('bromination')
        elif st == 'dehalogenate':
            trans.append('dehalogenation')

    sm = prepare_parent(rec)
    if stereo == 'strip':
        Chem.RemoveStereochemistry(sm)
    sm_smi = Chem.MolToSmiles(sm)
    pool = {sm_smi: 100.0}
    for k, t in enumerate(trans):
        pool = run_step(pool, t, T, eq, stereo)
        pool = {s: a for s, a in pool.items() if a > 1e-9}
        if k < len(trans) - 1:
            items = sorted(pool.items(), key=_sortkey)[:maxp]
            pool = dict(items)

    species = sorted(pool.items(), key=_sortkey)
    crude = sum(a for s, a in species)
    n_species = len(species)
    mols = {s: Chem.MolFromSmiles(s) for s, a in species}
    allprods = [(s, a) for s, a in species if s != sm_smi]
    phase_of = {}
    for s, a in species:
        phase_of[s] = phase_assign(mols[s], pH)
    phase = 'none'
    prods = []
    if allprods:
        po = sum(a for s, a in allprods if phase_of[s] == 'organic')
        pa = sum(a for s, a in allprods if phase_of[s] == 'aqueous')
        phase = 'organic' if po >= pa else 'aqueous'
        prods = [(s, a) for s, a in allprods if phase_of[s] == phase][:maxp]

    out = dict(charge=0, crude_pct=round(crude, 6), fp_on=0, hba=0, hbd=0, isolated_pct=0.0,
               isolated_purity_pct=0.0, kept_pct=0.0, logp=0.0, mw=0.0, n_products=len(prods),
               n_species=n_species, phase='none', products=[s for s, a in prods], purity_pct=0.0,
               qed=0.0, selected=[], tpsa=0.0, yield_pct=0.0)
    if prods:
        top, ya = prods[0]
        tm = mols[top]
        inphase = sum(a for s, a in species if phase_of[s] == phase)
        purity = 100.0 * ya / inphase if inphase > 0 else 0.0
        kept = 0.0
        topiso = 0.0
        for s, a in species:
            ld = logD(mols[s], pH)
            if ld < -300:
                D = 0.0
            else:
                D = 10 ** min(ld, 300)
            g = (1.0 / (1.0 + D)) ** 3
            f = 1 - g if phase == 'organic' else g
            kept += a * f
            if s == top:
                topiso = a * f
        lf, ch, perm = ion_info(tm, pH)
        fp = RFG.GetMorganGenerator(radius=rad, fpSize=1024).GetFingerprint(tm).GetNumOnBits()
        out.update(charge=int(ch), fp_on=int(fp), hba=int(Lipinski.NOCount(tm)), hbd=int(Lipinski.NHOHCount(tm)),
                   isolated_pct=round(topiso, 6), isolated_purity_pct=round(100 * topiso / kept, 6) if kept > 0 else 0.0,
                   kept_pct=round(kept, 6), logp=round(Crippen.MolLogP(tm), 5), mw=round(Descriptors.MolWt(tm), 3),
                   phase=phase, purity_pct=round(purity, 6), qed=round(QED.qed(tm), 6), selected=[top],
                   tpsa=round(rdMolDescriptors.CalcTPSA(tm, includeSandP=True), 2), yield_pct=round(ya, 6))
    print(json.dumps(out))


def _fallback():
    print(json.dumps(dict(charge=0, crude_pct=100.0, fp_on=0, hba=0, hbd=0, isolated_pct=0.0,
                          isolated_purity_pct=0.0, kept_pct=0.0, logp=0.0, mw=0.0, n_products=0,
                          n_species=1, phase='none', products=[], purity_pct=0.0, qed=0.0,
                          selected=[], tpsa=0.0, yield_pct=0.0)))


if __name__ == '__main__':
    _buf = None
    try:
        import io
        _old = sys.stdout
        sys.stdout = io.StringIO()
        try:
            main()
            _buf = sys.stdout.getvalue()
        finally:
            sys.stdout = _old
    except Exception:
        _buf = None
    if _buf:
        sys.stdout.write(_buf)
    else:
        _fallback()
