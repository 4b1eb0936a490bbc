# Independent program: the final workspace of agent trial 10 of chem_smarts 4.0.0 at the default
# evidence level (docs/trials.md), kept as the agent wrote it.
import sys, json, math, itertools
from rdkit import Chem, RDLogger
from rdkit.Chem import AllChem, Descriptors, Crippen, rdMolDescriptors, QED
from rdkit.Chem.MolStandardize import rdMolStandardize
from rdkit.Chem.EnumerateStereoisomers import EnumerateStereoisomers, StereoEnumerationOptions
RDLogger.DisableLog('rdApp.*')
import os
DEBUG = os.environ.get('DEBUG')
CLEAN_TAUT = True

LEVELS = [0.0, 0.6, 0.8, 0.95]
TIDX = {0: 0, 25: 1, 80: 2}
BYPRODUCT_MAX_HEAVY = 4

# transformation -> list of (site SMARTS rxn, offset)  ; order = preference
RXN = {
    'boc_protection': [
        ('[NX3;H2;+0;!$(N-a);!$(N-[#6,#16,#15]=[O,S,N]);!$(N-[#7,#8,#16]):1]>>CC(C)(C)OC(=O)[N:1]', 1),
        ('[NX3;H1;+0;!$(N-a);!$(N-[#6,#16,#15]=[O,S,N]);!$(N-[#7,#8,#16]):1]>>CC(C)(C)OC(=O)[N:1]', 0),
    ],
    'boc_deprotection': [
        ('[CH3]C([CH3])([CH3])OC(=O)[N:1]>>[N:1]', 1),
    ],
    'tbs_protection': [
        ('[OX2H1;$(O[CH2;X4]):1]>>[O:1][Si](C)(C)C(C)(C)C', 1),
        ('[OX2H1;$(Oc):1]>>[O:1][Si](C)(C)C(C)(C)C', 0),
        ('[OX2H1;$(O[CX4;H1,H0]):1]>>[O:1][Si](C)(C)C(C)(C)C', -1),
    ],
    'tbs_deprotection': [
        ('[O:1][Si]([CH3])([CH3])C([CH3])([CH3])[CH3]>>[O:1]', 1),
    ],
    'esterification': [
        ('[CX3:1](=[O:2])[OX2H1]>>[C:1](=[O:2])OC', 0),
    ],
    'amide_coupling': [
        ('[CX3:1](=[O:2])[OX2H1]>>[C:1](=[O:2])NCc1ccccc1', 1),
    ],
    'lialh4_reduction': [
        ('[CX3;$(C[#6]):1](=O)[OX2H1:2]>>[CH2:1][O:2]', 0),
        ('[CX3;$(C[#6]):1](=O)[OX2:2][#6:3]>>([CH2:1][OH].[OH:2][#6:3])', 0),
        ('[CX3;$(C[#6]):1](=O)[NX3:2]>>[CH2:1][N:2]', -1),
    ],
    'nitro_reduction': [
        ('[N+:1](=O)[O-]>>[N+0:1]', 0),
    ],
    'acetylation': [
        ('[NX3;H2,H1;+0;!$(N-a);!$(N-[#6,#16,#15]=[O,S,N]);!$(N-[#7,#8,#16]):1]>>CC(=O)[N:1]', 1),
        ('[NX3;H2,H1;+0;$(N-a);!$(N-[#6,#16,#15]=[O,S,N]);!$(N-[#7,#8,#16]):1]>>CC(=O)[N:1]', 0),
        ('[OX2H1;$(O[CH2X4]):1]>>CC(=O)[O:1]', 0),
        ('[OX2H1;$(O[CX4;H1,H0]):1]>>CC(=O)[O:1]', -1),
        ('[OX2H1;$(Oc):1]>>CC(=O)[O:1]', -1),
    ],
    'ester_hydrolysis': [
        ('[CX3;$(C[#6]):1](=[O:3])[OX2:2][c:4]>>([C:1](=[O:3])O.[OH:2][c:4])', 1),
        ('[CX3;$(C[#6]):1](=[O:3])[OX2:2][CX4:4]>>([C:1](=[O:3])O.[OH:2][C:4])', 0),
    ],
    'alcohol_oxidation': [
        ('[CH2;X4:1][OX2H1:2]>>[CH1:1]=[O:2]', 1),
        ('[CH1;X4;!R;!$(C-a):1]([#6:3])([#6:4])[OX2H1:2]>>[CH0:1]([#6:3])([#6:4])=[O:2]', 1),
        ('[CH1;X4:1]([#6:3])([#6:4])[OX2H1:2]>>[CH0:1]([#6:3])([#6:4])=[O:2]', 0),
        ('[CH1;X3:1](=[O:2])[#6:3]>>[CH0:1](=[O:2])([#6:3])O', -1),
    ],
    'reductive_amination': [
        ('[CH1;X3:1](=O)[#6:2]>>[CH2:1]([#6:2])N1CCOCC1', 1),
        ('[CX3:1](=O)([#6:2])[#6:3]>>[CH1:1]([#6:2])([#6:3])N1CCOCC1', 0),
    ],
    'eschweiler_clarke': [
        ('[NX3;H2;+0;!$(N-a);!$(N-[#6,#16,#15]=[O,S,N]);!$(N-[#7,#8,#16]):1]>>C[N:1]C', 0),
        ('[NX3;H1;+0;!$(N-a);!$(N-[#6,#16,#15]=[O,S,N]);!$(N-[#7,#8,#16]):1]>>C[N:1]', -1),
    ],
    'aromatic_bromination': [
        ('[cH:1]1:[c:2]:[c:3]:[c:4](-[OX2,NX3;+0:5]):[c:6]:[c:7]:1>>Br[c:1]1:[c:2]:[c:3]:[c:4](-[*:5]):[c:6]:[c:7]:1', 1),
    ],
    'dehalogenation': [
        ('[c:1][Br,I]>>[c:1]', 0),
        ('[c:1]Cl>>[c:1]', -1),
    ],
}
ALIASES = {
    'boc_protect': 'boc_protection', 'boc_deprotect': 'boc_deprotection',
}


def find_rxn(name):
    if name in RXN:
        return name
    n = name.lower()
    for k in RXN:
        if k.split('_')[0] in n:
            pass
    keys = {
        'boc_prot': 'boc_protection', 'boc_deprot': 'boc_deprotection', 'boc_remov': 'boc_deprotection',
        'tbs_prot': 'tbs_protection', 'silyl_prot': 'tbs_protection', 'tbs_deprot': 'tbs_deprotection',
        'silyl_deprot': 'tbs_deprotection', 'tbs_remov': 'tbs_deprotection',
        'ester': 'esterification', 'coupl': 'amide_coupling', 'amide': 'amide_coupling',
        'lialh4': 'lialh4_reduction', 'nitro': 'nitro_reduction', 'acetyl': 'acetylation',
        'hydroly': 'ester_hydrolysis', 'oxid': 'alcohol_oxidation', 'amin': 'reductive_amination',
        'eschweiler': 'eschweiler_clarke', 'methyl': 'eschweiler_clarke', 'brom': 'aromatic_bromination',
        'dehalo': 'dehalogenation',
    }
    for k, v in keys.items():
        if k in n:
            return v
    return None


ROUTE_STEPS = {
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

_RXCACHE = {}


def get_rxn(sm):
    if sm not in _RXCACHE:
        _RXCACHE[sm] = AllChem.ReactionFromSmarts(sm)
    return _RXCACHE[sm]


def canon(m):
    return Chem.MolToSmiles(m)


_TE = None


def taut(smi):
    global _TE
    if _TE is None:
        _TE = rdMolStandardize.TautomerEnumerator()
        _TE.SetRemoveSp3Stereo(False)
        _TE.SetRemoveBondStereo(False)
    try:
        m = Chem.MolFromSmiles(smi)
        m2 = _TE.Canonicalize(m)
        return Chem.MolToSmiles(m2)
    except Exception:
        return smi


def _lfc():
    cp = rdMolStandardize.CleanupParameters()
    cp.largestFragmentChooserCountHeavyAtomsOnly = True
    return rdMolStandardize.LargestFragmentChooser(cp)


def prepare(record, stereo):
    m = Chem.MolFromSmiles(record)
    m = rdMolStandardize.Cleanup(m)
    m = _lfc().choose(m)
    m = rdMolStandardize.Uncharger().uncharge(m)
    # neutralise remaining anions (e.g. inner salts) by protonation
    rw = Chem.RWMol(m)
    changed = False
    for a in rw.GetAtoms():
        if a.GetFormalCharge() < 0 and a.GetSymbol() in ('O', 'S', 'N'):
            nb_pos = any(n.GetFormalCharge() > 0 for n in a.GetNeighbors())
            if nb_pos:
                continue
            a.SetFormalCharge(0)
            a.SetNumExplicitHs(a.GetTotalNumHs() + 1)
            changed = True
    m = rw.GetMol()
    Chem.SanitizeMol(m)
    try:
        te = rdMolStandardize.TautomerEnumerator()
        te.SetRemoveSp3Stereo(False)
        te.SetRemoveBondStereo(False)
        m2 = te.Canonicalize(m)
        if m2 is not None:
            m = m2
    except Exception:
        pass
    if stereo == 'strip':
        Chem.RemoveStereochemistry(m)
    return Chem.MolFromSmiles(canon(m))


def site_key(rxn, m):
    patt = rxn.GetReactants()[0]
    matches = m.GetSubstructMatches(patt, uniquify=True, useChirality=False)
    # site = mapped atom 1
    idx = None
    for a in patt.GetAtoms():
        if a.GetAtomMapNum() == 1:
            idx = a.GetIdx()
    sites = set()
    for mt in matches:
        sites.add(mt[idx])
    return sites


def apply_once(rxn, m, site):
    """apply reaction at a given site atom index; return list of product mols (fragments)"""
    patt = rxn.GetReactants()[0]
    idx = [a.GetIdx() for a in patt.GetAtoms() if a.GetAtomMapNum() == 1][0]
    outs = rxn.RunReactants((m,))
    for prods in outs:
        # find which reactant atom index was site: use react_atom_idx prop
        ok = False
        for p in prods:
            for a in p.GetAtoms():
                if a.HasProp('react_atom_idx') and a.GetIntProp('react_atom_idx') == site and a.HasProp('old_mapno') and a.GetIntProp('old_mapno') == 1:
                    ok = True
        if not ok:
            continue
        res = []
        good = True
        for p in prods:
            try:
                pm = Chem.Mol(p)
                Chem.SanitizeMol(pm)
                smi = Chem.MolToSmiles(pm)
                pm = Chem.MolFromSmiles(smi)
                if pm is None:
                    good = False
                    break
                res.append(pm)
            except Exception:
                good = False
                break
        if good:
            return res
    return None


def split_main(frags):
    """frags: list of mols; returns list of tracked mols (drop small by-products)"""
    out = []
    for f in frags:
        for piece in Chem.GetMolFrags(f, asMols=True):
            if piece.GetNumHeavyAtoms() <= BYPRODUCT_MAX_HEAVY:
                continue
            out.append(piece)
    return out


AMINE = '[NX3;H2,H1;+0;!$(N-a);!$(N-[#6,#16,#15]=[O,S,N]);!$(N-[#7,#8,#16])]'
COOH = '[CX3](=O)[OX2H1]'


def destroyed(m, step):
    if step == 'alcohol_oxidation' and m.HasSubstructMatch(pat(AMINE)):
        return True
    if step == 'amide_coupling' and m.HasSubstructMatch(pat(AMINE)) and m.HasSubstructMatch(pat(COOH)):
        return True
    return False


def react_molecule(m, step, T, eq):
    """returns dict smiles->fraction of products formed (excluding unreacted), and unreacted fraction"""
    classes = RXN[step]
    ti = TIDX.get(int(T), 1)
    # gather sites per class
    found = []
    for sm, off in classes:
        rx = get_rxn(sm)
        s = site_key(rx, m)
        used = set(x for f in found for x in f[2])
        s = s - used
        if s:
            L = ti + off
            c = LEVELS[max(0, min(3, L))]
            found.append((sm, c, s))
    if not found:
        return None, 1.0
    sites = []
    for ci, f in enumerate(found):
        if f[1] <= 0:
            continue
        for st_ in sorted(f[2]):
            sites.append((f[0], st_, f[1], ci))
    if not sites:
        return None, 1.0
    if step == 'alcohol_oxidation':
        ti_ = TIDX.get(int(T), 1)
        cv = LEVELS[max(0, min(3, ti_ - 1))]
        if cv > 0:
            vs = '[CH1;X3:1](=[O:2])[#6:3]>>[CH0:1](=[O:2])([#6:3])O'
            for x in list(sites):
                if x[0].startswith('[CH2;X4:1]'):
                    sites.append((vs, x[1], cv, 50))
    sites.sort(key=lambda x: (-x[2], x[3]))
    n = len(sites)
    k = min(n, eq)
    rates = [x[2] for x in sites]
    c = rates[0]
    prods = {}
    # products for subsets of size j, 1..k
    def prod_for_subset(sub):
        # apply sequentially; need re-index after each application: use atom map trick
        mol = Chem.Mol(m)
        for a in mol.GetAtoms():
            a.SetIntProp('orig', a.GetIdx())
        cur = [mol]
        for sm, s in sub:
            rx = get_rxn(sm)
            # find molecule containing orig s
            newcur = []
            done = False
            for x in cur:
                if done:
                    newcur.append(x)
                    continue
                idxs = [a.GetIdx() for a in x.GetAtoms() if a.HasProp('orig') and a.GetIntProp('orig') == s]
                if not idxs:
                    newcur.append(x)
                    continue
                r = apply_keep(rx, x, idxs[0])
                if r is None:
                    return None
                newcur.extend(r)
                done = True
            if not done:
                return None
            cur = newcur
        frags = []
        for x in cur:
            try:
                y = Chem.Mol(x)
                Chem.SanitizeMol(y)
                frags.append(Chem.MolFromSmiles(Chem.MolToSmiles(y)))
            except Exception:
                return None
        return split_main(frags)

    for j in range(1, k + 1):
        amt = 1.0
        for i in range(j):
            amt *= rates[i]
        if j < k:
            amt *= (1 - rates[j])
        if amt <= 0:
            continue
        bj = sites[j - 1]
        fixed = [(x[0], x[1]) for x in sites if (-x[2], x[3]) < (-bj[2], bj[3])]
        tied = [(x[0], x[1]) for x in sites if x[2] == bj[2] and x[3] == bj[3]]
        need = j - len(fixed)
        lst = []
        for sub in itertools.combinations(tied, need):
            r = prod_for_subset(fixed + list(sub))
            if r is None:
                continue
            lst.append(tuple(sorted(canon(x) for x in r)))
        if not lst:
            continue
        tot = len(lst)
        for key in lst:
            for smi in key:
                prods[smi] = prods.get(smi, 0) + amt / tot
    return prods, 1 - c


def apply_keep(rx, x, site):
    outs = rx.RunReactants((x,))
    for prods in outs:
        hit = False
        for p in prods:
            for a in p.GetAtoms():
                if a.HasProp('react_atom_idx') and a.GetIntProp('react_atom_idx') == site and a.HasProp('old_mapno') and a.GetIntProp('old_mapno') == 1:
                    hit = True
        if not hit:
            continue
        res = []
        for p in prods:
            pm = Chem.RWMol(p)
            # carry orig props
            for a in pm.GetAtoms():
                if a.HasProp('react_atom_idx'):
                    ra = x.GetAtomWithIdx(a.GetIntProp('react_atom_idx'))
                    if ra.HasProp('orig'):
                        a.SetIntProp('orig', ra.GetIntProp('orig'))
            try:
                mm = pm.GetMol()
                mm.UpdatePropertyCache(False)
                Chem.SanitizeMol(mm)
            except Exception:
                return None
            res.append(mm)
        return res
    return None


def expand_stereo(smi):
    m = Chem.MolFromSmiles(smi)
    opts = StereoEnumerationOptions(onlyUnassigned=True, unique=True)
    isos = list(EnumerateStereoisomers(m, options=opts))
    out = sorted(set(Chem.MolToSmiles(i) for i in isos))
    return out if out else [smi]


# ---------------- ionisation model ----------------
ACIDS = [
    ('[CX3](=O)[OX2H1]', 3.5),
    ('[SX4](=O)(=O)[NX3H2]', 9.9),
    ('[SX4](=O)(=O)[NX3H1]a', 6.5),
    ('[c,$(C=C)][OX2H1]', 9.5),
]
BASES = [
    ('[NX3;+0;$(N1CCOCC1);!$(N-[#6,#16,#15]=[O,S,N])]', 6.5),
    ('[NX3;H2,H1,H0;+0;!$(N-a);!$(N-[#6,#16,#15]=[O,S,N]);!$(N-[#7,#8,#16]);!$(N-C=[C,N])]', 9.8),
    ('[NX3;H2,H1;+0;$(N-a);!$(N(-a)-a);!$(N-[#6,#16,#15]=[O,S,N]);!$(Na[$(a[S](=O)=O)])]', 4.6),
    ('[nX2;r6]', 5.2),
]
_PC = {}


def pat(s):
    if s not in _PC:
        _PC[s] = Chem.MolFromSmarts(s)
    return _PC[s]


def groups(m):
    acids, bases = [], []
    used = set()
    for s, pk in ACIDS:
        for mt in m.GetSubstructMatches(pat(s)):
            if mt[0] in used:
                continue
            used.add(mt[0])
            acids.append(pk)
    used = set()
    for s, pk in BASES:
        for mt in m.GetSubstructMatches(pat(s)):
            if mt[0] in used:
                continue
            used.add(mt[0])
            bases.append(pk)
    perm = sum(a.GetFormalCharge() for a in m.GetAtoms() if a.GetFormalCharge() > 0 and a.GetSymbol() == 'N' and a.GetTotalNumHs() == 0 and not any(n.GetFormalCharge() < 0 for n in a.GetNeighbors()))
    return acids, bases, perm


def charge_at(m, pH):
    acids, bases, perm = groups(m)
    ch = perm
    for pk in acids:
        if pH > pk:
            ch -= 1
    for pk in bases:
        if pH < pk:
            ch += 1
    return ch


def n_ionised(m, pH):
    acids, bases, perm = groups(m)
    return perm + sum(1 for pk in acids if pH > pk) + sum(1 for pk in bases if pH < pk) + sum(1 for a in m.GetAtoms() if a.GetFormalCharge() < 0 and not any(n.GetFormalCharge() > 0 for n in a.GetNeighbors()))


def logD(m, pH):
    acids, bases, perm = groups(m)
    logp = Crippen.MolLogP(m)
    if perm:
        return -99.0
    lf = 0.0
    for pk in acids:
        lf -= math.log10(1 + 10 ** (pH - pk))
    for pk in bases:
        lf -= math.log10(1 + 10 ** (pk - pH))
    return logp + lf


def main():
    sc = json.load(sys.stdin)
    p = sc['parameters']
    route, record = [x.strip() for x in p['case'].split(':', 1)]
    eq = int(p['equivalents'])
    rad = int(p['fingerprint_radius'])
    mp = int(p['max_products'])
    stereo = p['stereochemistry']
    T = int(float(p['temperature']))
    pH = float(p['workup_ph'])
    steps = ROUTE_STEPS.get(route)
    if steps is None:
        steps = [find_rxn(x) for x in route.split('_')]
        steps = [s for s in steps if s]
    sm = prepare(record, stereo)
    sm_smi = canon(sm)
    pool = {sm_smi: 100.0}
    for si, st in enumerate(steps):
        newpool = {}
        for smi, amt in pool.items():
            m = Chem.MolFromSmiles(smi)
            if destroyed(m, st):
                continue
            try:
                prods, unr = react_molecule(m, st, T, eq)
            except Exception:
                prods, unr = None, 1.0
            if not prods:
                newpool[smi] = newpool.get(smi, 0) + amt
                continue
            newpool[smi] = newpool.get(smi, 0) + amt * unr
            for ps, fr in prods.items():
                if CLEAN_TAUT:
                    ps = taut(ps)
                if stereo == 'strip':
                    pm = Chem.MolFromSmiles(ps)
                    Chem.RemoveStereochemistry(pm)
                    ps = canon(pm)
                    isos = [ps]
                elif stereo == 'enumerate':
                    isos = expand_stereo(ps)
                else:
                    isos = [ps]
                for iso in isos:
                    newpool[iso] = newpool.get(iso, 0) + amt * fr / len(isos)
        items = [(s, a) for s, a in newpool.items() if a > 1e-9]
        items.sort(key=lambda x: -round(x[1], 9))
        pool = dict(items[:mp]) if si < len(steps) - 1 else dict(items)
    if DEBUG:
        for smi, amt in sorted(pool.items(), key=lambda x: -x[1]):
            mm = Chem.MolFromSmiles(smi)
            sys.stderr.write('POOL %.4f %s mz=%.1f logD=%.2f\n' % (amt, smi, Descriptors.ExactMolWt(mm) + 1.00728, logD(mm, pH)))
    crude = sum(pool.values())
    n_species = len(pool)
    info = {}
    for smi, amt in pool.items():
        m = Chem.MolFromSmiles(smi)
        d = logD(m, pH)
        ion = n_ionised(m, pH)
        info[smi] = (amt, d, 'organic' if (d > 0 and ion == 0) else 'aqueous')
    prod_items = [(s, v) for s, v in info.items() if s != sm_smi]
    out = {}
    zero = dict(charge=0, crude_pct=round(crude, 6), fp_on=0, hba=0, hbd=0, isolated_pct=0.0,
                isolated_purity_pct=0.0, kept_pct=0.0, logp=0.0, mw=0.0, n_products=0,
                n_species=n_species, phase='none', products=[], purity_pct=0.0, qed=0.0,
                selected=[], tpsa=0.0, yield_pct=0.0)
    if not prod_items:
        print(json.dumps(zero))
        return
    prod_items.sort(key=lambda x: (-round(x[1][0], 9), x[0]))
    top = prod_items[0]
    org = sum(v[0] for s, v in prod_items if v[2] == 'organic')
    aq = sum(v[0] for s, v in prod_items if v[2] == 'aqueous')
    phase = top[1][2]
    if org > aq + 1e-9:
        phase = 'organic'
    elif aq > org + 1e-9:
        phase = 'aqueous'
    kept = [(s, v) for s, v in prod_items if v[2] == phase]
    kept.sort(key=lambda x: (-round(x[1][0], 9), x[0]))
    products = [s for s, v in kept[:mp]]
    top_smi = products[0]
    top_amt = info[top_smi][0]
    phase_total = sum(v[0] for s, v in info.items() if v[2] == phase)
    purity = 100.0 * top_amt / phase_total if phase_total else 0.0

    def frac(d):
        D = 10 ** d if d > -50 else 0.0
        rem = (1.0 / (1.0 + D)) ** 3
        return (1 - rem) if phase == 'organic' else rem
    kept_pct = sum(v[0] * frac(v[1]) for s, v in info.items())
    iso = top_amt * frac(info[top_smi][1])
    m = Chem.MolFromSmiles(top_smi)
    fp = AllChem.GetMorganFingerprintAsBitVect(m, rad, nBits=1024)
    out = dict(
        charge=int(charge_at(m, pH)),
        crude_pct=round(crude, 6),
        fp_on=int(fp.GetNumOnBits()),
        hba=int(rdMolDescriptors.CalcNumLipinskiHBA(m)),
        hbd=int(rdMolDescriptors.CalcNumLipinskiHBD(m)),
        isolated_pct=round(iso, 6),
        isolated_purity_pct=round(100.0 * iso / kept_pct, 6) if kept_pct > 0 else 0.0,
        kept_pct=round(kept_pct, 6),
        logp=round(Crippen.MolLogP(m), 4),
        mw=round(Descriptors.MolWt(m), 3),
        n_products=len(products),
        n_species=n_species,
        phase=phase,
        products=products,
        purity_pct=round(purity, 6),
        qed=round(QED.qed(m), 6),
        selected=[top_smi],
        tpsa=round(rdMolDescriptors.CalcTPSA(m, includeSandP=True), 2),
        yield_pct=round(top_amt, 6),
    )
    print(json.dumps(out))


if __name__ == '__main__':
    main()
