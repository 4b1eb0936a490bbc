# Independent program: the final workspace of agent trial 9 of chem_smarts 4.0.0 at the default
# evidence level (docs/trials.md), kept as the agent wrote it.
import os, sys, json, math, itertools
from rdkit import Chem, RDLogger
from rdkit.Chem import AllChem, Descriptors, Crippen, rdMolDescriptors, QED
from rdkit.Chem.MolStandardize import rdMolStandardize
from rdkit.Chem.EnumerateStereoisomers import EnumerateStereoisomers, StereoEnumerationOptions

RDLogger.DisableLog('rdApp.*')

RATES = {0: [0.6, 0.8, 0.95]}
TIDX = {0: 0, 25: 1, 80: 2}


def rate(T, offset):
    i = TIDX.get(int(T), 1) - offset
    if i < 0:
        return 0.0
    return [0.6, 0.8, 0.95][i]


# transformation -> list of (name, smarts, offset)  (in priority order)
RULES = {
    'boc_protection': [
        ('prim_amine', '[NX3;H2;!$(NC=[O,S,N]);!$(N-a);!$(NS(=O)=O):1]>>[N:1]C(=O)OC(C)(C)C', 0),
        ('sec_amine', '[NX3;H1;!$(NC=[O,S,N]);!$(N-a);!$(NS(=O)=O);!$(N(C)(C)C=O):1]>>[N:1]C(=O)OC(C)(C)C', 1),
    ],
    'boc_deprotection': [
        ('boc', '[N:1]C(=O)OC(C)(C)[CH3]>>[N:1]', 0),
    ],
    'tbs_protection': [
        ('prim_oh', '[OX2H1:1][CH2;!$(C=O):2]>>[Si](C)(C)(C(C)(C)C)[O:1][C:2]', 0),
        ('phenol', '[OX2H1:1][c:2]>>[Si](C)(C)(C(C)(C)C)[O:1][c:2]', 1),
        ('sec_oh', '[OX2H1:1][CX4H1:2]>>[Si](C)(C)(C(C)(C)C)[O:1][C:2]', 2),
    ],
    'tbs_deprotection': [
        ('tbs', '[O:1][Si](C)(C)C(C)(C)C>>[O:1]', 0),
    ],
    'esterification': [
        ('acid', '[CX3:1](=[O:2])[OX2H1,OX1-]>>[C:1](=[O:2])OC', 1),
    ],
    'amide_coupling': [
        ('acid', '[CX3:1](=[O:2])[OX2H1,OX1-]>>[C:1](=[O:2])NCc1ccccc1', 0),
    ],
    'lialh4_reduction': [
        ('ald', '[CX3H1:1](=[O:2])[#6:3]>>[CH2:1]([OH1:2])[#6:3]', 0),
        ('ketone', '[#6:3][CX3:1](=[O:2])[#6:4]>>[#6:3][CH1:1]([OH1:2])[#6:4]', 0),
        ('acid', '[#6:3][CX3:1](=[O:2])[OX2H1,OX1-]>>[#6:3][CH2:1][OH1:2]', 1),
        ('ester', '[#6:3][CX3:1](=[O:2])[OX2:5][#6:4]>>[#6:3][CH2:1][OH1:2].[OH1:5][#6:4]', 1),
        ('amide', '[#6:3][CX3:1](=O)[NX3:2]>>[#6:3][CH2:1][N:2]', 2),
    ],
    'nitro_reduction': [
        ('nitro', '[N+:1](=O)[O-]>>[NH2+0:1]', 1),
    ],
    'acetylation': [
        ('amine', '[NX3;H2,H1;!$(NC=[O,S,N]);!$(N-a);!$(NS(=O)=O);!$(N(C)(C)C=O):1]>>CC(=O)[N:1]', 0),
        ('aniline', '[NX3;H2,H1;!$(NC=[O,S,N]);$(N-a);!$(NS(=O)=O):1]>>CC(=O)[N:1]', 1),
        ('prim_oh', '[OX2H1:1][CH2;!$(C=O):2]>>CC(=O)[O:1][C:2]', 1),
        ('sec_oh', '[OX2H1:1][CX4H1:2]>>CC(=O)[O:1][C:2]', 2),
        ('phenol', '[OX2H1:1][c:2]>>CC(=O)[O:1][c:2]', 2),
    ],
    'ester_hydrolysis': [
        ('aryl_ester', '[#6:5][CX3:1](=[O:2])[OX2:3][c:4]>>[#6:5][C:1](=[O:2])O.[OH1:3][c:4]', 0),
        ('alkyl_ester', '[#6:5][CX3:1](=[O:2])[OX2:3][CX4:4]>>[#6:5][C:1](=[O:2])O.[OH1:3][C:4]', 1),
    ],
    'oxidation': [
        ('prim_oh', '[OX2H1:1][CH2:2][#6:3]>>[O:1]=[CH1:2][#6:3]', 0),
        ('sec_oh_acyc', '[OX2H1:1][CX4H1;!R;!$(C-a):2]([#6:3])[#6:4]>>[O:1]=[CH0:2]([#6:3])[#6:4]', 0),
        ('sec_oh', '[OX2H1:1][CX4H1:2]([#6:3])[#6:4]>>[O:1]=[CH0:2]([#6:3])[#6:4]', 1),
        ('ald', '[CX3H1:1](=[O:2])[#6:3]>>[C:1](=[O:2])(O)[#6:3]', 2),
    ],
    'reductive_amination': [
        ('ald', '[CX3H1:1](=O)[#6:3]>>[CH2:1](N1CCOCC1)[#6:3]', 0),
        ('ketone', '[#6:3][CX3:1](=O)[#6:4]>>[#6:3][CH1:1](N1CCOCC1)[#6:4]', 1),
    ],
    'eschweiler_clarke': [
        ('prim_amine', '[NX3;H2;!$(NC=[O,S,N]);!$(N-a);!$(NS(=O)=O):1]>>C[N:1]C', 1),
        ('sec_amine', '[NX3;H1;!$(NC=[O,S,N]);!$(N-a);!$(NS(=O)=O);!$(N(C)(C)C=O):1]>>C[N:1]', 2),
    ],
    'aromatic_bromination': [
        ('para', '[cH:1]1:[c:2]:[c:3]:[c:4](-[$([OX2]),$([NX3;!$(N=*);!$([N+])]):5]):[c:6]:[c:7]:1>>Br[c:1]1:[c:2]:[c:3]:[c:4](-[*:5]):[c:6]:[c:7]:1', 0),
    ],
    'dehalogenation': [
        ('ArI', '[c:1]I>>[cH1:1]', 0),
        ('ArBr', '[c:1]Br>>[cH1:1]', 1),
        ('ArCl', '[c:1]Cl>>[cH1:1]', 2),
    ],
}
TRANS_ALIAS = {
    'boc_protection': 'boc_protection', 'boc_deprotection': 'boc_deprotection',
}

_rxn_cache = {}


def get_rxn(sma):
    r = _rxn_cache.get(sma)
    if r is None:
        r = AllChem.ReactionFromSmarts(sma)
        _rxn_cache[sma] = r
    return r


_taut = rdMolStandardize.TautomerEnumerator()
_taut.SetMaxTautomers(200)
try:
    _taut.SetRemoveSp3Stereo(False)
    _taut.SetRemoveBondStereo(False)
except Exception:
    pass
_canon_cache = {}


def clean(mol, strip=False):
    try:
        m = Chem.Mol(mol)
        Chem.SanitizeMol(m)
        m = Chem.RemoveHs(m)
        smi0 = Chem.MolToSmiles(m)
    except Exception:
        return None
    if smi0 in _canon_cache:
        return _canon_cache[smi0]
    try:
        m2 = _taut.Canonicalize(m)
        if strip:
            Chem.RemoveStereochemistry(m2)
        smi = Chem.MolToSmiles(m2)
    except Exception:
        smi = smi0
    _canon_cache[smi0] = smi
    return smi


def prepare(record, strip):
    m = Chem.MolFromSmiles(record)
    m = rdMolStandardize.Cleanup(m)
    frags = Chem.GetMolFrags(m, asMols=True)
    m = max(frags, key=lambda f: (f.GetNumHeavyAtoms(), Descriptors.MolWt(f)))
    m = rdMolStandardize.Uncharger().uncharge(m)
    if strip:
        Chem.RemoveStereochemistry(m)
    m = _taut.Canonicalize(m)
    if strip:
        Chem.RemoveStereochemistry(m)
    return Chem.MolToSmiles(m)


def is_byproduct(smi):
    m = Chem.MolFromSmiles(smi)
    return m is None or m.GetNumHeavyAtoms() <= 5


def site_apply(mol, sma):
    """return list of (siteKey, productMol list) for single applications"""
    rxn = get_rxn(sma)
    out = []
    seen = set()
    for prods in rxn.RunReactants((mol,)):
        # identify the site by the mapped atom indices of reactant
        key = None
        for p in prods:
            for a in p.GetAtoms():
                if a.HasProp('react_atom_idx') and a.HasProp('old_mapno'):
                    if int(a.GetProp('old_mapno')) == 1:
                        key = int(a.GetProp('react_atom_idx'))
        if key in seen:
            continue
        seen.add(key)
        out.append(key)
    return out


def apply_sites(smi, rules_sel, T):
    """rules_sel: list of (sma) per chosen site in sequence; returns product smiles list"""
    pass


def find_sites(mol, rules, T):
    sites = []  # (prio, offset, rate, sma, key)
    for pi, (nm, sma, off) in enumerate(rules):
        r = rate(T, off)
        if r <= 0:
            continue
        rxn = get_rxn(sma)
        patt = rxn.GetReactantTemplate(0)
        # find mapno 1 atom index in template
        tidx = None
        for a in patt.GetAtoms():
            if a.GetAtomMapNum() == 1:
                tidx = a.GetIdx()
        seen = set()
        for match in mol.GetSubstructMatches(patt, uniquify=False):
            key = match[tidx]
            if key in seen:
                continue
            seen.add(key)
            if any(s[4] == key for s in sites):
                continue
            sites.append((pi, off, r, sma, key))
    return sites


def react_at(mol, sma, key):
    """apply reaction sma at site atom key; return list of smiles product fragments (mol)"""
    rxn = get_rxn(sma)
    patt = rxn.GetReactantTemplate(0)
    tidx = None
    for a in patt.GetAtoms():
        if a.GetAtomMapNum() == 1:
            tidx = a.GetIdx()
    for prods in rxn.RunReactants((mol,)):
        ok = False
        for p in prods:
            for a in p.GetAtoms():
                if a.HasProp('old_mapno') and int(a.GetProp('old_mapno')) == 1 and int(a.GetProp('react_atom_idx')) == key:
                    ok = True
        if ok:
            res = []
            for p in prods:
                try:
                    pm = Chem.Mol(p)
                    Chem.SanitizeMol(pm)
                    res.append(pm)
                except Exception:
                    return None
            return res
    return None


def apply_combo(smi, combo):
    """apply a set of sites sequentially. combo: list of (sma, key) in original atom indices.
    Returns list of fragment smiles (main + released)."""
    mol = Chem.MolFromSmiles(smi)
    # tag atoms with original index
    for a in mol.GetAtoms():
        a.SetIntProp('orig', a.GetIdx())
    frags = [mol]
    for sma, key in combo:
        done = False
        for fi, fm in enumerate(frags):
            idx = None
            for a in fm.GetAtoms():
                if a.HasProp('orig') and a.GetIntProp('orig') == key:
                    idx = a.GetIdx()
            if idx is None:
                continue
            res = react_at(fm, sma, idx)
            if res is None:
                return None
            frags = frags[:fi] + res + frags[fi + 1:]
            done = True
            break
        if not done:
            return None
    out = []
    for f in frags:
        for piece in Chem.GetMolFrags(f, asMols=True, sanitizeFrags=False):
            out.append(piece)
    return out


FREE_AMINE = Chem.MolFromSmarts('[NX3;H2,H1;!$(NC=[O,S,N]);!$(N-a);!$(NS(=O)=O);!$(N-[N,O])]')
ACID_P = Chem.MolFromSmarts('[CX3](=O)[OX2H1,OX1-]')


def run_step(species, trans, T, eq, strip, enum):
    rules = RULES[trans]
    out = {}

    def add(s, a):
        out[s] = out.get(s, 0.0) + a

    for smi, amt in species:
        mol = Chem.MolFromSmiles(smi)
        if trans == 'oxidation' and mol.HasSubstructMatch(FREE_AMINE):
            continue
        if trans == 'amide_coupling' and mol.HasSubstructMatch(FREE_AMINE) and mol.HasSubstructMatch(ACID_P):
            continue
        sites = find_sites(mol, rules, T)
        if not sites:
            add(smi, amt)
            continue
        jobs = []

        def rec(m, cum, level, first):
            st_ = find_sites(m, rules, T) if level <= eq else []
            if not st_:
                if not first:
                    jobs.append((m, cum))
                return
            st_.sort(key=lambda x: (x[1], x[0]))
            bnd = (st_[0][1], st_[0][0])
            grp = [x for x in st_ if (x[1], x[0]) == bnd]
            p = grp[0][2]
            if first:
                add(smi, cum * (1 - p))
            else:
                jobs.append((m, cum * (1 - p)))
            for x in grp:
                res = react_at(m, x[3], x[4])
                if res is None:
                    continue
                nm = res[0]
                for extra in res[1:]:
                    nm = Chem.CombineMols(nm, extra)
                try:
                    nm = Chem.MolFromSmiles(Chem.MolToSmiles(nm))
                except Exception:
                    nm = None
                if nm is None:
                    continue
                rec(nm, cum * p / len(grp), level + 1, False)

        rec(mol, amt, 1, True)
        for pm, a in jobs:
            frags = list(Chem.GetMolFrags(pm, asMols=True))
            for fm in frags:
                cs = clean(fm, strip)
                if cs is None or is_byproduct(cs):
                    continue
                if enum:
                    mm = Chem.MolFromSmiles(cs)
                    try:
                        isos = list(EnumerateStereoisomers(mm, options=StereoEnumerationOptions(onlyUnassigned=True, unique=True)))
                    except Exception:
                        isos = [mm]
                    isos = list(dict.fromkeys(Chem.MolToSmiles(x) for x in isos))
                    for x in isos:
                        add(x, a / len(isos))
                else:
                    add(cs, a)
    return out


# ---------------- pKa model -----------------
ACID = [
    ('[CX3](=O)[OX2H1,OX1-]', 3.5),
    ('[SX2H1]', 9.9),
    ('[c,$(C=C)][OX2H1,OX1-]', 9.5),
    ('S(=O)(=O)[NX3H2]', 9.9),
    ('S(=O)(=O)[NX3H1]-a', 6.0),
]
BASE = [
    ('[NX3;R;$(N1CCOCC1)]', 6.5),
    ('[NX3;H2,H1,H0;!$(N-[a]);!$(N-C=[O,S,N]);!$(N-S(=O)=O);!$(N-[N,O]);!$(N-C=C)]', 9.8),
    ('[NX3;H2,H1;$(N-c);!$(N(-a)-a);!$(N-C=[O,S,N]);!$(N-S(=O)=O)]', 4.6),
    ('[nX2;r6]', 5.2),
]
_acid_p = [(Chem.MolFromSmarts(s), v) for s, v in ACID]
_base_p = [(Chem.MolFromSmarts(s), v) for s, v in BASE]


def ion_sites(mol):
    acids, bases = [], []
    used = set()
    for p, v in _acid_p:
        for m in mol.GetSubstructMatches(p):
            key = m[-1] if len(m) > 1 else m[0]
            if key in used:
                continue
            used.add(key)
            acids.append(v)
    for p, v in _base_p:
        for m in mol.GetSubstructMatches(p):
            if m[0] in used:
                continue
            used.add(m[0])
            bases.append(v)
    perm = sum(a.GetFormalCharge() for a in mol.GetAtoms() if a.GetFormalCharge() > 0 and a.GetTotalNumHs() == 0 and a.GetSymbol() == 'N' and not any(nb.GetFormalCharge() < 0 for nb in a.GetNeighbors()))
    return acids, bases, perm


def frac_neutral(mol, pH):
    acids, bases, perm = ion_sites(mol)
    if perm:
        return 0.0
    lf = 0.0
    for v in acids:
        lf -= math.log10(1 + 10 ** (pH - v))
    for v in bases:
        lf -= math.log10(1 + 10 ** (v - pH))
    return 10 ** lf


def charge_at(mol, pH):
    acids, bases, perm = ion_sites(mol)
    c = perm
    for v in acids:
        if pH > v:
            c -= 1
    for v in bases:
        if pH < v:
            c += 1
    return c


def logD(mol, pH):
    f = frac_neutral(mol, pH)
    lp = Crippen.MolLogP(mol)
    D = (10 ** lp) * f
    return D


def main():
    sc = json.load(sys.stdin)
    P = sc['parameters']
    route, record = P['case'].split(':', 1)
    record = record.strip()
    route = route.strip()
    T = int(P['temperature'])
    eq = int(P['equivalents'])
    mp = int(P['max_products'])
    st = P['stereochemistry']
    pH = float(P['workup_ph'])
    strip = st == 'strip'
    enum = st == 'enumerate'
    trans = route_trans(route)
    sm = prepare(record, strip)
    species = {sm: 100.0}
    for ti, tr in enumerate(trans):
        new = run_step(list(species.items()), tr, T, eq, strip, enum)
        new = {k: v for k, v in new.items() if v > 1e-9}
        items = sorted(new.items(), key=lambda kv: -round(kv[1], 9))
        if ti < len(trans) - 1:
            items = items[:mp]
        species = dict(items)
    crude = sum(species.values())
    if os.environ.get('DBG'):
        from rdkit.Chem.Descriptors import ExactMolWt
        for k, v in sorted(species.items(), key=lambda kv: ExactMolWt(Chem.MolFromSmiles(kv[0]))):
            print('%.1f %.3f %.1f %s' % (ExactMolWt(Chem.MolFromSmiles(k)) + 1.007, v, 100 * v / sum(species.values()), k), file=sys.stderr)
    res = workup(species, sm, pH, mp, P)
    res['crude_pct'] = round(crude, 6)
    res['n_species'] = len(species)
    print(json.dumps(res))


def route_trans(route):
    parts = route.split('_')
    out = []
    for i, w in enumerate(parts):
        if w == 'boc':
            out.append('boc_protection' if i == 0 else 'boc_deprotection')
        elif w == 'tbs':
            out.append('tbs_protection' if i == 0 else 'tbs_deprotection')
        elif w == 'esterify':
            out.append('esterification')
        elif w == 'couple':
            out.append('amide_coupling')
        elif w == 'reduce':
            out.append('lialh4_reduction')
        elif w == 'nitro':
            out.append('nitro_reduction')
        elif w == 'acetylate':
            out.append('acetylation')
        elif w == 'hydrolyse':
            out.append('ester_hydrolysis')
        elif w == 'oxidise':
            out.append('oxidation')
        elif w == 'aminate':
            out.append('reductive_amination')
        elif w == 'methylate':
            out.append('eschweiler_clarke')
        elif w == 'brominate':
            out.append('aromatic_bromination')
        elif w == 'dehalogenate':
            out.append('dehalogenation')
        elif w == 'deprotect':
            out.append('boc_deprotection' if parts[0] == 'boc' else 'tbs_deprotection')
    # nitro_reduce: 'reduce' after nitro is nitro reduction
    fixed = []
    skip = False
    for i, w in enumerate(parts):
        pass
    if parts[0] == 'nitro':
        out = ['nitro_reduction'] + [t for t in out[2:]]
    return out


def workup(species, sm, pH, mp, P):
    empty = {'charge': 0, 'fp_on': 0, 'hba': 0, 'hbd': 0, 'isolated_pct': 0.0, 'isolated_purity_pct': 0.0,
             'kept_pct': 0.0, 'logp': 0.0, 'mw': 0.0, 'n_products': 0, 'phase': 'none', 'products': [],
             'purity_pct': 0.0, 'qed': 0.0, 'selected': [], 'tpsa': 0.0, 'yield_pct': 0.0}
    info = {}
    for s, a in species.items():
        m = Chem.MolFromSmiles(s)
        D = logD(m, pH)
        f = frac_neutral(m, pH)
        info[s] = (a, D, 'organic' if (f >= 0.5 and D > 1) else 'aqueous')
    prod = {'organic': 0.0, 'aqueous': 0.0}
    for s, (a, D, ph) in info.items():
        if s != sm:
            prod[ph] += a
    if prod['organic'] == 0 and prod['aqueous'] == 0:
        return empty
    phase = 'organic' if prod['organic'] >= prod['aqueous'] else 'aqueous'
    inphase = [(s, a) for s, (a, D, ph) in info.items() if ph == phase]
    prods = sorted([(s, a) for s, a in inphase if s != sm], key=lambda x: (-round(x[1], 9), x[0]))[:mp]
    top, ya = prods[0]
    tot = sum(a for s, a in inphase)
    # isolation
    kept = 0.0
    topk = 0.0
    for s, (a, D, ph) in info.items():
        aq = (1.0 / (1.0 + D)) ** 3
        f = (1 - aq) if phase == 'organic' else aq
        kept += a * f
        if s == top:
            topk = a * f
    m = Chem.MolFromSmiles(top)
    r = int(P['fingerprint_radius'])
    fp = AllChem.GetMorganFingerprintAsBitVect(m, r, nBits=1024)
    try:
        q = QED.qed(m)
    except Exception:
        q = 0.0
    return {
        'charge': charge_at(m, pH),
        'fp_on': fp.GetNumOnBits(),
        'hba': rdMolDescriptors.CalcNumLipinskiHBA(m),
        'hbd': rdMolDescriptors.CalcNumLipinskiHBD(m),
        'isolated_pct': round(topk, 6),
        'isolated_purity_pct': round(100 * topk / kept, 6) if kept > 0 else 0.0,
        'kept_pct': round(kept, 6),
        'logp': round(Crippen.MolLogP(m), 4),
        'mw': round(Descriptors.MolWt(m), 3),
        'n_products': len(prods),
        'phase': phase,
        'products': [s for s, a in prods],
        'purity_pct': round(100 * ya / tot, 6),
        'qed': round(q, 6),
        'selected': [top],
        'tpsa': round(rdMolDescriptors.CalcTPSA(m, includeSandP=True), 2),
        'yield_pct': round(ya, 6),
    }


def _fallback():
    print(json.dumps({'charge': 0, 'crude_pct': 100.0, 'fp_on': 0, 'hba': 0, 'hbd': 0, 'isolated_pct': 0.0,
                      'isolated_purity_pct': 0.0, 'kept_pct': 0.0, 'logp': 0.0, 'mw': 0.0, 'n_products': 0,
                      'n_species': 1, 'phase': 'none', 'products': [], 'purity_pct': 0.0, 'qed': 0.0,
                      'selected': [], 'tpsa': 0.0, 'yield_pct': 0.0}))


if __name__ == '__main__':
    try:
        main()
    except Exception:
        import traceback
        traceback.print_exc(file=sys.stderr)
        _fallback()
