# Independent program: the final workspace of agent trial 19 of chem_smarts 4.0.0 at evidence level
# `outputs` with the cover (docs/trials.md), kept as the agent wrote it.
import sys, json, itertools, math
from rdkit import Chem, RDLogger
from rdkit.Chem import Lipinski, rdFingerprintGenerator, Descriptors, Crippen, rdMolDescriptors, QED, AllChem
from rdkit.Chem.MolStandardize import rdMolStandardize
from rdkit.Chem.EnumerateStereoisomers import EnumerateStereoisomers, StereoEnumerationOptions
RDLogger.DisableLog('rdApp.*')

ROUTES = {
    'boc_oxidise_deprotect': ['boc_protection', 'alcohol_oxidation', 'boc_deprotection'],
    'acetylate_brominate': ['acetylation', 'aromatic_bromination'],
    'boc_couple_deprotect': ['boc_protection', 'amide_coupling', 'boc_deprotection'],
    'couple_reduce': ['amide_coupling', 'lialh4_reduction'],
    'esterify_reduce': ['esterification', 'lialh4_reduction'],
    'nitro_reduce_acetylate': ['nitro_reduction', 'acetylation'],
    'hydrolyse_couple': ['ester_hydrolysis', 'amide_coupling'],
    'oxidise_aminate': ['alcohol_oxidation', 'reductive_amination'],
    'boc_esterify_deprotect': ['boc_protection', 'esterification', 'boc_deprotection'],
    'tbs_oxidise_deprotect': ['tbs_protection', 'alcohol_oxidation', 'tbs_deprotection'],
    'tbs_acetylate_deprotect': ['tbs_protection', 'acetylation', 'tbs_deprotection'],
    'dehalogenate_esterify': ['dehalogenation', 'esterification'],
    'methylate_hydrolyse': ['eschweiler_clarke', 'ester_hydrolysis'],
}

TEMP_P = {0: 0.6, 25: 0.8, 80: 0.95}

_tp = rdMolStandardize.CleanupParameters()
_tp.tautomerRemoveSp3Stereo = False
_tp.tautomerRemoveBondStereo = False
_te = rdMolStandardize.TautomerEnumerator(_tp)
_unch = rdMolStandardize.Uncharger()


def standardize(m, stereo):
    try:
        m = rdMolStandardize.Cleanup(m)
        frags = Chem.GetMolFrags(m, asMols=True)
        if len(frags) > 1:
            m = sorted(frags, key=lambda f: (-f.GetNumHeavyAtoms(), Chem.MolToSmiles(f)))[0]
        m = _unch.uncharge(m)
        m = _te.Canonicalize(m)
        if stereo == 'strip':
            Chem.RemoveStereochemistry(m)
        Chem.SanitizeMol(m)
        return m
    except Exception:
        return None


def canon(m):
    return Chem.MolToSmiles(m)


# ---------------- site definitions: (smarts, kind, class) ------------------
# each transformation: list of (pattern, edit_kind, cls)
P = lambda s: Chem.MolFromSmarts(s)
SITES = {
    'boc_protection': [
        (P('[NX3;H2;!$(N[C,S,P]=[O,S,N]);!$(N-a);!$(N-[N,O])]'), 'add_boc', 'amine'),
        (P('[NX3;H1;!$(N[C,S,P]=[O,S,N]);!$(N-a);!$(N-[N,O])]'), 'add_boc', 'secamine'),
        (P('[NX3;H1,H2;!$(N[C,S,P]=[O,S,N]);$(N-a);!$(N-[N,O])]'), 'add_boc', 'aniline'),
    ],
    'boc_deprotection': [
        (P('[#7]-C(=O)-O-C(-[CH3])(-[CH3])-[CH3]'), 'rm_boc', 'boc'),
    ],
    'tbs_protection': [
        (P('[OX2H1]-[CX4;H2]'), 'add_tbs', 'prim'),
        (P('[OX2H1]-[CX4;H1]'), 'add_tbs', 'sec'),
        (P('[OX2H1]-[CX4;H0]'), 'add_tbs', 'tert'),
        (P('[OX2H1]-c'), 'add_tbs', 'phenol'),
    ],
    'tbs_deprotection': [
        (P('O-[Si](-[CH3])(-[CH3])-C(-[CH3])(-[CH3])-[CH3]'), 'rm_tbs', 'tbs'),
    ],
    'esterification': [
        (P('[CX3](=O)-[OX2H1,OX1-]'), 'esterify', 'acid'),
    ],
    'amide_coupling': [
        (P('[CX3](=O)-[OX2H1,OX1-]'), 'couple', 'acid'),
    ],
    'lialh4_reduction': [
        (P('[CX3;!R](=O)-[OX2]-[#6]'), 'red_ester', 'ester'),
        (P('[CX3;R](=O)-[OX2;R]-[#6]'), 'red_ester', 'ester'),
        (P('[CX3](=O)-[OX2H1]'), 'red_acid', 'acid'),
        (P('[CX3;$([CX3](=O)([#6])[NX3]),$([CX3H1](=O)[NX3])](=O)-[NX3]'), 'red_amide', 'amide'),
        (P('[CX3;$(C([#6])[#6]),$([CH1][#6]),$([CH2])](=[OX1])'), 'red_ketone', 'ketone'),
    ],
    'nitro_reduction': [
        (P('[N+](=O)[O-]'), 'red_nitro', 'nitro'),
        (P('[Br,I]-c'), 'dehal', 'arbr'),
    ],
    'acetylation': [
        (P('[NX3;H1,H2;!$(N[C,S,P]=[O,S,N]);!$(N-a);!$(N-[N,O])]'), 'acetyl', 'amine'),
        (P('[NX3;H1,H2;!$(N[C,S,P]=[O,S,N]);$(N-a);!$(N-[N,O])]'), 'acetyl', 'aniline'),
        (P('[OX2H1]-[CX4;H2,H3]'), 'acetyl', 'alcohol'),
        (P('[OX2H1]-[CX4;H1,H0]'), 'acetyl', 'secalcohol'),
        (P('[OX2H1]-c'), 'acetyl', 'phenol'),
    ],
    'ester_hydrolysis': [
        (P('[CX3;$(C(=O)[#6,#1])](=O)-[OX2]-c'), 'hydrolyse', 'arylester'),
        (P('[CX3;!R;$(C(=O)[#6,#1])](=O)-[OX2]-[#6]'), 'hydrolyse', 'ester'),
        (P('[CX3;R;$(C(=O)[#6,#1])](=O)-[OX2;R]-[#6]'), 'hydrolyse', 'lactone'),
    ],
    'alcohol_oxidation': [
        (P('[OX2H1]-[CX4;H2]'), 'oxid_alc', 'prim'),
        (P('[OX2H1]-[CX4;H1]'), 'oxid_alc', 'sec'),
        (P('[CX3H1](=O)[#6]'), 'oxid_ald', 'ald'),
    ],
    'reductive_amination': [
        (P('[CX3;H1;!$(C[N,O])](=[OX1])'), 'redam', 'aldehyde'),
        (P('[CX3;$(C([#6])[#6])](=[OX1])'), 'redam', 'ketone'),
    ],
    'eschweiler_clarke': [
        (P('[NX3;H2;!$(N[C,S,P]=[O,S,N]);!$(N-a);!$(N-[N,O])]'), 'methylate', 'amine'),
        (P('[NX3;H1;!$(N[C,S,P]=[O,S,N]);!$(N-a);!$(N-[N,O])]'), 'methylate', 'secamine'),
    ],
    'aromatic_bromination': [
        (P('[cH1;r6;$(c1:c:c:c(-[$([OX2H1]),$([OX2]([#6;!$(C=O)])c),$([NX3;+0;!$(NS(=O)=O)])]):c:c1)]'), 'brom', 'para'),
        (P('[cH1;r6;$(c:c-[$([OX2H1]),$([OX2]([#6;!$(C=O)])c),$([NX3;+0;!$(NS(=O)=O)])])]'), 'brom', 'ortho'),
    ],
    'dehalogenation': [
        (P('[Br,I]-c'), 'dehal', 'arx'),
        (P('[Cl]-c'), 'dehal', 'arcl'),
    ],
}

# difficulty per (transformation, class): p = LEVELS[tidx - d]
LEVELS = [0.0, 0.6, 0.8, 0.95]
TIDX = {0: 1, 25: 2, 80: 3}
DIFF = {
    ('acetylation', 'aniline'): 1,
    ('acetylation', 'phenol'): 2,
    ('acetylation', 'alcohol'): 1,
    ('lialh4_reduction', 'amide'): 2,
    ('lialh4_reduction', 'ester'): 1,
    ('lialh4_reduction', 'acid'): 1,
    ('acetylation', 'secalcohol'): 2,
    ('dehalogenation', 'arcl'): 2,
    ('lialh4_reduction', 'ketone'): 0,
    ('ester_hydrolysis', 'ester'): 1,
    ('ester_hydrolysis', 'lactone'): 1,
    ('ester_hydrolysis', 'arylester'): 0,
    ('eschweiler_clarke', 'amine'): 1,
    ('eschweiler_clarke', 'secamine'): 2,
    ('nitro_reduction', 'nitro'): 1,
    ('nitro_reduction', 'arbr'): 2,
    ('dehalogenation', 'arx'): 1,
    ('esterification', 'acid'): 1,
    ('boc_protection', 'secamine'): 1,
    ('boc_protection', 'aniline'): 2,
    ('tbs_protection', 'sec'): 2,
    ('tbs_protection', 'tert'): 3,
    ('tbs_protection', 'phenol'): 1,
    ('alcohol_oxidation', 'sec'): 1,
    ('alcohol_oxidation', 'ald'): 2,
    ('reductive_amination', 'ketone'): 1,
    ('aromatic_bromination', 'para'): 0,
    ('aromatic_bromination', 'ortho'): 1,
}


def find_sites(m, tname):
    sites = []
    used = set()
    for rank, (patt, kind, cls) in enumerate(SITES[tname]):
        for match in m.GetSubstructMatches(patt):
            key = match[0]
            if key in used:
                continue
            if kind == 'brom':
                ri = m.GetRingInfo()
                ok = any(key in r and all(m.GetAtomWithIdx(j).GetAtomicNum() == 6 for j in r)
                         for r in ri.AtomRings() if len(r) == 6)
                if not ok:
                    continue
            used.add(key)
            sites.append((kind, cls, match, rank))
    return sites


def site_prob(tname, cls, temp, eq):
    d = DIFF.get((tname, cls), 0)
    i = TIDX[temp] - d
    if i <= 0:
        return 0.0
    return LEVELS[i]


def choose_sets(active, eq):
    """active: list of (site, p). returns list of (weight, subset-list)."""
    if len(active) <= eq:
        return [(1.0, active)]
    srt = sorted(active, key=lambda sp: sp[0][3])
    fixed = []
    i = 0
    while i < len(srt):
        r = srt[i][0][3]
        tier = [x for x in srt if x[0][3] == r]
        if len(fixed) + len(tier) <= eq:
            fixed += tier
            i += len(tier)
            continue
        k = eq - len(fixed)
        combs = list(itertools.combinations(tier, k))
        return [(1.0 / len(combs), fixed + list(c)) for c in combs]
    return [(1.0, fixed)]


def add_group(rw, anchor, smiles_frag, attach_idx=0):
    frag = Chem.MolFromSmiles(smiles_frag)
    off = rw.GetNumAtoms()
    for a in frag.GetAtoms():
        na = Chem.Atom(a.GetAtomicNum())
        rw.AddAtom(na)
    for b in frag.GetBonds():
        rw.AddBond(b.GetBeginAtomIdx() + off, b.GetEndAtomIdx() + off, b.GetBondType())
    rw.AddBond(anchor, off + attach_idx, Chem.BondType.SINGLE)
    return off


def apply_sites(m, chosen):
    rw = Chem.RWMol(Chem.AddHs(m)) if False else Chem.RWMol(m)
    dele = set()
    touched = set()
    for kind, cls, match, rank in chosen:
        touched.update(match)
    byprods = []
    for kind, cls, match, rank in chosen:
        if kind == 'add_boc':
            n = match[0]
            add_group(rw, n, 'C(=O)OC(C)(C)C')
        elif kind == 'acetyl':
            add_group(rw, match[0], 'C(C)=O')
        elif kind == 'add_tbs':
            add_group(rw, match[0], '[Si](C)(C)C(C)(C)C')
        elif kind == 'rm_boc':
            for i in match[1:]:
                dele.add(i)
        elif kind == 'rm_tbs':
            for i in match[1:]:
                dele.add(i)
        elif kind == 'esterify':
            rw.GetAtomWithIdx(match[2]).SetFormalCharge(0)
            add_group(rw, match[2], 'C')
        elif kind == 'couple':
            o = match[2]
            rw.GetAtomWithIdx(o).SetAtomicNum(7)
            rw.GetAtomWithIdx(o).SetFormalCharge(0)
            add_group(rw, o, 'Cc1ccccc1')
        elif kind == 'red_ester':
            c, o1, o2 = match[0], match[1], match[2]
            rw.RemoveBond(c, o2)
            rw.GetBondBetweenAtoms(c, o1).SetBondType(Chem.BondType.SINGLE)
        elif kind == 'red_acid':
            c, o1, o2 = match[0], match[1], match[2]
            rw.GetBondBetweenAtoms(c, o1).SetBondType(Chem.BondType.SINGLE)
            dele.add(o2)
        elif kind == 'red_amide':
            dele.add(match[1])
        elif kind == 'red_ketone':
            rw.GetBondBetweenAtoms(match[0], match[1]).SetBondType(Chem.BondType.SINGLE)
        elif kind == 'red_nitro':
            n = rw.GetAtomWithIdx(match[0])
            n.SetFormalCharge(0)
            dele.add(match[1]); dele.add(match[2])
        elif kind == 'hydrolyse':
            c, o1, o2 = match[0], match[1], match[2]
            rw.RemoveBond(c, o2)
            add_group(rw, c, 'O')
        elif kind == 'oxid_alc':
            o, c = match[0], match[1]
            rw.GetBondBetweenAtoms(o, c).SetBondType(Chem.BondType.DOUBLE)
        elif kind == 'oxid_ald':
            add_group(rw, match[0], 'O')
        elif kind == 'redam':
            c, o = match[0], match[1]
            dele.add(o)
            add_group(rw, c, 'N1CCOCC1')
        elif kind == 'methylate':
            n = match[0]
            nh = rw.GetAtomWithIdx(n).GetTotalNumHs()
            for _ in range(nh):
                add_group(rw, n, 'C')
        elif kind == 'brom':
            add_group(rw, match[0], 'Br')
        elif kind == 'dehal':
            dele.add(match[0])
    for i in touched:
        a = rw.GetAtomWithIdx(i)
        if not a.GetIsAromatic():
            a.SetNumExplicitHs(0)
            a.SetNoImplicit(False)
    for i in sorted(dele, reverse=True):
        rw.RemoveAtom(i)
    try:
        mm = rw.GetMol()
        mm.UpdatePropertyCache(strict=False)
        Chem.SanitizeMol(mm)
        smi = Chem.MolToSmiles(mm)
        out = Chem.MolFromSmiles(smi)
        return out
    except Exception:
        return None


FREE_AMINE = P('[NX3;H1,H2;+0;!$(N[C,S,P]=[O,S,N]);!$(N-a);!$(N-[N,O])]')


def run_step(pool, tname, temp, eq, maxp, stereo, last=False):
    newpool = {}
    for smi, amt in pool.items():
        m = Chem.MolFromSmiles(smi)
        if tname in ('amide_coupling', 'alcohol_oxidation') and m.HasSubstructMatch(FREE_AMINE):
            continue
        sites = find_sites(m, tname)
        probs = [site_prob(tname, s[1], temp, eq) for s in sites]
        active = [(s, p) for s, p in zip(sites, probs) if p > 0]
        if len(active) > 10:
            active = active[:10]
        if active and tname in ('boc_deprotection', 'tbs_deprotection'):
            p0 = active[0][1]
            prod = apply_sites(m, [a[0] for a in active])
            newpool[smi] = newpool.get(smi, 0) + amt * (1 - p0)
            if prod is not None:
                sm = standardize(prod, stereo)
                if sm is not None:
                    s2 = canon(sm)
                    newpool[s2] = newpool.get(s2, 0) + amt * p0
            continue
        if not active:
            newpool[smi] = newpool.get(smi, 0) + amt
            continue
        for wset, act in choose_sets(active, eq):
          for mask in itertools.product([0, 1], repeat=len(act)):
            w = wset
            chosen = []
            for bit, (s, p) in zip(mask, act):
                if bit:
                    w *= p
                    chosen.append(s)
                else:
                    w *= (1 - p)
            if w <= 0:
                continue
            if not chosen:
                newpool[smi] = newpool.get(smi, 0) + amt * w
                continue
            prod = apply_sites(m, chosen)
            if prod is None:
                continue
            frags = Chem.GetMolFrags(prod, asMols=True)
            frags = sorted(frags, key=lambda f: -f.GetNumHeavyAtoms())
            main = frags[0]
            outs = [main]
            for f in frags[1:]:
                if f.GetNumHeavyAtoms() >= 5:
                    outs.append(f)
            for f in outs:
                sm = standardize(f, stereo)
                if sm is None:
                    continue
                isos = [sm]
                if stereo == 'enumerate':
                    try:
                        opts = StereoEnumerationOptions(onlyUnassigned=True, unique=True)
                        isos = list(EnumerateStereoisomers(sm, options=opts)) or [sm]
                    except Exception:
                        isos = [sm]
                for iso in isos:
                    s2 = canon(iso)
                    newpool[s2] = newpool.get(s2, 0) + amt * w / len(isos)
    items = sorted(newpool.items(), key=lambda kv: (-kv[1], kv[0]))
    items = [kv for kv in items if kv[1] > 1e-9]
    if not last:
        items = items[:maxp]
    return dict(items)


# ---------------- pKa / charge -------------------
ACID_PATTS = [
    (P('[CX3](=O)([#6,#1;!a])[OX2H1,OX1-]'), 4.5),
    (P('[CX3](=O)(a)[OX2H1,OX1-]'), 3.8),
    (P('[CX3](=O)[OX2H1,OX1-]'), 4.0),
    (P('[SX4](=O)(=O)[NX3;H2,H1]'), 9.5),
    (P('c[OX2H1]'), 9.5),
]
BASE_PATTS = [
    (P('[NX3;H2,H1,H0;R;!$(N[C,S,P]=[O,S,N]);!$(N-a);!$(N-[N,O]);!$(N-C=C);$(N1CCOCC1)]'), 6.5),
    (P('[NX3;H2,H1,H0;!$(N[C,S,P]=[O,S,N]);!$(N-a);!$(N-[N,O]);!$(N-C=C)]'), 9.8),
    (P('[NX3;H2,H1;!$(N[C,S,P]=[O,S,N]);$(N-a);!$(N(-a)-a);!$(N-[N,O])]'), 4.6),
    (P('[nX2;r6]'), 5.0),
]


def ionisable(m):
    acids = []
    bases = []
    perm = 0
    for a in m.GetAtoms():
        if a.GetFormalCharge() > 0 and a.GetAtomicNum() == 7 and a.GetTotalNumHs() == 0 and not any(
                n.GetFormalCharge() < 0 for n in a.GetNeighbors()):
            perm += 1
    seen = set()
    for patt, pka in ACID_PATTS:
        for match in m.GetSubstructMatches(patt):
            if match[0] in seen:
                continue
            seen.add(match[0])
            acids.append(pka)
    for patt, pka in BASE_PATTS:
        for match in m.GetSubstructMatches(patt):
            if match[0] in seen:
                continue
            seen.add(match[0])
            bases.append(pka)
    return acids, bases, perm


def charge_and_fneutral(m, ph):
    acids, bases, perm = ionisable(m)
    ch = perm
    global _ANYION
    _ANYION = perm > 0 or any(ph > pk for pk in acids) or any(ph < pk for pk in bases)
    fn = 1.0
    for pk in acids:
        if ph > pk:
            ch -= 1
        fn *= 1.0 / (1 + 10 ** (ph - pk))
    for pk in bases:
        if ph < pk:
            ch += 1
        fn *= 1.0 / (1 + 10 ** (pk - ph))
    if perm:
        fn = 0.0
    return ch, fn


def logD(m, ph):
    ch, fn = charge_and_fneutral(m, ph)
    lp = Crippen.MolLogP(m)
    D = (10 ** lp) * fn
    return ch, D


def main():
    sc = json.load(sys.stdin)
    p = sc['parameters']
    route, rec = [x.strip() for x in p['case'].split(':', 1)]
    temp = int(p['temperature'])
    eq = int(p['equivalents'])
    maxp = int(p['max_products'])
    stereo = p['stereochemistry']
    ph = float(p['workup_ph'])
    rad = int(p['fingerprint_radius'])
    m0 = Chem.MolFromSmiles(rec)
    m0 = standardize(m0, stereo)
    sm0 = canon(m0)
    pool = {sm0: 100.0}
    steps = ROUTES[route]
    for k, t in enumerate(steps):
        pool = run_step(pool, t, temp, eq, maxp, stereo, last=(k == len(steps) - 1))
    crude = sum(pool.values())
    n_species = len(pool)
    prods = sorted([(k, v) for k, v in pool.items() if k != sm0], key=lambda kv: (-kv[1], kv[0]))[:maxp]
    prods = dict(prods)
    out = {}
    if not prods:
        out = dict(charge=0, crude_pct=round(crude, 6), fp_on=0, hba=0, hbd=0, isolated_pct=0.0,
                   isolated_purity_pct=0.0, kept_pct=0.0, logp=0.0, mw=0.0, n_products=0,
                   n_species=n_species, phase='none', products=[], purity_pct=0.0, qed=0.0,
                   selected=[], tpsa=0.0, yield_pct=0.0)
        print(json.dumps(out))
        return
    top = sorted(prods.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
    info = {}
    for s, a in pool.items():
        mm = Chem.MolFromSmiles(s)
        ch, D = logD(mm, ph)
        info[s] = (ch, D, a, _ANYION)
    # phase: by top product's charge state
    isorg = lambda s: (not info[s][3]) and info[s][1] > 1
    org = sum(a for s, a in prods.items() if isorg(s))
    aq = sum(a for s, a in prods.items() if not isorg(s))
    phase = 'organic' if isorg(top) else 'aqueous'
    inphase = lambda s: isorg(s) == (phase == 'organic')
    tot = sum(a for s, a in pool.items() if inphase(s))
    purity = 100.0 * pool[top] / tot if tot > 0 else 0.0
    iso = {}
    for s, (ch, D, a, _x) in info.items():
        r = (1.0 / (1.0 + D)) ** 3
        iso[s] = a * (1 - r) if phase == 'organic' else a * r
    kept = sum(iso.values())
    tm = Chem.MolFromSmiles(top)
    fp = rdFingerprintGenerator.GetMorganGenerator(radius=rad, fpSize=1024).GetFingerprint(tm)
    out = dict(
        charge=int(info[top][0]),
        crude_pct=round(crude, 6),
        fp_on=int(fp.GetNumOnBits()),
        hba=int(Lipinski.NOCount(tm)),
        hbd=int(Lipinski.NHOHCount(tm)),
        isolated_pct=round(iso[top], 6),
        isolated_purity_pct=round(100 * iso[top] / kept if kept > 0 else 0.0, 6),
        kept_pct=round(kept, 6),
        logp=round(Crippen.MolLogP(tm), 6),
        mw=round(Descriptors.MolWt(tm), 6),
        n_products=len(prods),
        n_species=n_species,
        phase=phase,
        products=sorted(prods.keys()),
        purity_pct=round(purity, 6),
        qed=round(QED.qed(tm), 6),
        selected=[top],
        tpsa=round(rdMolDescriptors.CalcTPSA(tm, includeSandP=True), 6),
        yield_pct=round(pool[top], 6),
    )
    print(json.dumps(out))


if __name__ == '__main__':
    main()
