import sys, json, math
from rdkit import Chem, RDLogger
from rdkit.Chem import AllChem, Descriptors, Crippen, rdMolDescriptors, QED
from rdkit.Chem.MolStandardize import rdMolStandardize
from rdkit.Chem.EnumerateStereoisomers import EnumerateStereoisomers, StereoEnumerationOptions
RDLogger.DisableLog('rdApp.*')

TF = {0: 1.0, 25: 16.0 / 9.0, 80: 10.0 / 3.0}
BASE = 0.6

RXN = {
    'boc_protection': [('amine', '[NX3;H2,H1;!$(N[C,S,P]=[O,S,N]);!$(Na);!$(N[#7,#8]);+0:1]>>[N:1]C(=O)OC(C)(C)C', 1.0)],
    'boc_deprotection': [('boc', '[N:1][CX3](=O)O[CX4]([CH3])([CH3])[CH3]>>[N:1]', 1.0)],
    'tbs_protection': [('oh', '[OX2H1;$(O[CX4H2,CH3]):1]>>[O:1][Si](C)(C)C(C)(C)C', 1.0),
                       ('oh2', '[OX2H1;$(O[CX4;H1,H0]):1]>>[O:1][Si](C)(C)C(C)(C)C', 1.0),
                       ('phenol', '[OX2H1;$(Oc):1]>>[O:1][Si](C)(C)C(C)(C)C', 1.0)],
    'tbs_deprotection': [('tbs', '[O:1][Si]([CH3])([CH3])C([CH3])([CH3])[CH3]>>[O:1]', 1.0)],
    'esterification': [('acid', '[CX3:1](=[O:2])[OX2H1]>>[C:1](=[O:2])OC', 1.0)],
    'amide_coupling': [('acid', '[CX3:1](=[O:2])[OX2H1]>>[C:1](=[O:2])NCc1ccccc1', 1.0)],
    'lialh4_reduction': [
        ('ester', '[#6:3][CX3:1](=O)[OX2:2][#6:4]>>[#6:3][CH2:1][OH].[OH:2][#6:4]', 1.0),
        ('amide', '[#6:3][CX3:1](=O)[NX3;H1,H2:2]>>[#6:3][CH2:1][N:2]', 1.0),
        ('acid', '[#6:3][CX3:1](=O)[OX2H1]>>[#6:3][CH2:1][OH]', 1.0),
        ('carbonyl', '[#6:3][CX3H0:1](=[O:2])[#6:4]>>[#6:3][CH1:1]([*:4])[OH:2]', 1.0),
        ('ald', '[#6:3][CX3H1:1]=[O:2]>>[#6:3][CH2:1][OH:2]', 1.0),
    ],
    'nitro_reduction': [('nitro', '[#6:2][N+:1](=O)[O-]>>[#6:2][NH2+0:1]', 1.0), ('arbr', '[c:1][Br,I]>>[cH:1]', 1.0)],
    'acetylation': [
        ('amine', '[NX3;H2,H1;!$(N[C,S,P]=[O,S,N]);!$(Na);!$(N[#7,#8]);+0:1]>>[N:1]C(C)=O', 1.0),
        ('aniline', '[NX3;H2,H1;!$(N[C,S,P]=[O,S,N]);$(Na);!$(N[#7,#8]);+0:1]>>[N:1]C(C)=O', 1.0),
        ('oh', '[OX2H1;$(O[CX4H2,CH3]):1]>>[O:1]C(C)=O', 1.0),
        ('oh2', '[OX2H1;$(O[CX4;H1,H0]):1]>>[O:1]C(C)=O', 1.0),
        ('phenol', '[OX2H1;$(Oc1ccccc1):1]>>[O:1]C(C)=O', 1.0),
    ],
    'ester_hydrolysis': [('ester', '[#6:3][CX3:1](=[O:5])[OX2:2][#6;!a:4]>>[#6:3][C:1](=[O:5])[OH].[OH:2][#6:4]', 1.0),
                         ('arester', '[#6:3][CX3:1](=[O:5])[OX2:2][a:4]>>[#6:3][C:1](=[O:5])[OH].[OH:2][*:4]', 1.0)],
    'alcohol_oxidation': [
        ('overox', '[#6:3][CX3H1:1](=[O:2])>>[#6:3][C:1](=[O:2])O', 1.0),
        ('pri', '[#6;!$([#6][OX2H1]):3][CX4H2:1][OX2H1:2]>>[#6:3][CH1:1]=[O:2]', 1.0),
        ('sec', '[#6;!a:3][CX4H1:1]([#6;!a:4])[OX2H1:2]>>[#6:3][C:1]([#6:4])=[O:2]', 1.0),
        ('secbz', '[#6:3][CX4H1:1]([a:4])[OX2H1:2]>>[#6:3][C:1]([*:4])=[O:2]', 1.0),
    ],
    'reductive_amination': [
        ('ald', '[#6:3][CX3H1:1]=[O:2]>>[#6:3][CH2:1]N1CCOCC1', 1.0),
        ('ket', '[#6:3][CX3H0:1](=[O:2])[#6:4]>>[#6:3][CH1:1]([*:4])N1CCOCC1', 1.0),
    ],
    'eschweiler_clarke': [('pri', '[NX3;H2;!$(N[C,S,P]=[O,S,N]);!$(Na);!$(N[#7,#8]);+0:1]>>[N:1](C)C', 1.0),
                          ('sec', '[NX3;H1;!$(N[C,S,P]=[O,S,N]);!$(Na);!$(N[#7,#8]);+0:1]>>[N:1]C', 1.0)],
    'aromatic_bromination': [
        ('para', '[cH;$(c1ccccc1);$(c:c:c:c-[O,N;!$([N+](=O)[O-]);!$(NS(=O)=O);!$(N=*)]):1]>>[c:1]Br', 1.0),
        ('ortho', '[cH;$(c1ccccc1);$(c:c-[O,N;!$([N+](=O)[O-]);!$(NS(=O)=O);!$(N=*)]);!$(c:c:c:c-[O,N;!$([N+](=O)[O-]);!$(NS(=O)=O);!$(N=*)]):1]>>[c:1]Br', 1.0),
    ],
    'dehalogenation': [('arbr', '[c:1][Br,I]>>[cH:1]', 1.0), ('arcl', '[c:1]Cl>>[cH:1]', 1.0)],
}
RX = {k: [(n, AllChem.ReactionFromSmarts(s), w) for n, s, w in v] for k, v in RXN.items()}


def prep_parent(smi):
    m = Chem.MolFromSmiles(smi)
    frags = Chem.GetMolFrags(m, asMols=True)
    m = max(frags, key=lambda f: (f.GetNumHeavyAtoms(), Chem.MolToSmiles(f)))
    try:
        m = rdMolStandardize.Uncharger().uncharge(m)
    except Exception:
        pass
    rw = Chem.RWMol(m)
    for at in rw.GetAtoms():
        if at.GetSymbol() == 'O' and at.GetFormalCharge() == -1 and any(n.GetSymbol() == 'C' for n in at.GetNeighbors()):
            at.SetFormalCharge(0); at.SetNumExplicitHs(1)
    m = rw.GetMol()
    Chem.SanitizeMol(m)
    if TAUT:
        try:
            t = rdMolStandardize.TautomerEnumerator().Canonicalize(m)
            if Chem.MolToSmiles(t, isomericSmiles=False) != Chem.MolToSmiles(m, isomericSmiles=False):
                m = t
        except Exception:
            pass
    return Chem.MolFromSmiles(Chem.MolToSmiles(m))


TAUT = True
import os
PTHR = float(os.environ.get('PTHR', '0.5'))


def canon(m, stereo=True):
    return Chem.MolToSmiles(m, isomericSmiles=stereo)


def crowd(mol, idx):
    a = mol.GetAtomWithIdx(idx)
    heavy = sum(1 for n in a.GetNeighbors() if n.GetAtomicNum() > 1)
    return 1.0


LEVELS = [0.0, 1.8, 3.2, 6.0]
SHIFT = {'amide_coupling': 0, 'reductive_amination': 0, 'esterification': 1, 'lialh4_reduction': 1,
         'dehalogenation': 1, 'boc_protection': 0, 'boc_deprotection': 1, 'tbs_protection': 1,
         'tbs_deprotection': 1, 'nitro_reduction': 1, 'acetylation': 1, 'ester_hydrolysis': 1,
         'alcohol_oxidation': 1, 'eschweiler_clarke': 1, 'aromatic_bromination': 0}
TIDX = {0: 1, 25: 2, 80: 3}


SUBSHIFT = {('tbs_protection', 'oh'): 0, ('tbs_protection', 'oh2'): 1, ('tbs_protection', 'phenol'): 1,('acetylation', 'oh2'): 2,('dehalogenation', 'arbr'): 1, ('dehalogenation', 'arcl'): 2, ('nitro_reduction', 'arbr'): 2,('lialh4_reduction', 'amide'): 2,('eschweiler_clarke', 'pri'): 1, ('eschweiler_clarke', 'sec'): 2, ('ester_hydrolysis', 'arester'): 0,
            ('ester_hydrolysis', 'ester'): 1,('alcohol_oxidation', 'pri'): 0, ('alcohol_oxidation', 'sec'): 0, ('alcohol_oxidation', 'secbz'): 1,
            ('reductive_amination', 'ket'): 1, ('reductive_amination', 'ald'): 0,('alcohol_oxidation', 'overox'): 2, ('acetylation', 'amine'): 0, ('acetylation', 'aniline'): 1,
            ('acetylation', 'oh'): 1, ('acetylation', 'phenol'): 2, ('aromatic_bromination', 'para'): 0,
            ('aromatic_bromination', 'ortho'): 1}


def kfor(rxn_name, T, sub=None):
    i = TIDX[T] - SUBSHIFT.get((rxn_name, sub), SHIFT.get(rxn_name, 0))
    return LEVELS[i] if i > 0 else 0.0


def n2(mol, idx):
    dm = Chem.GetDistanceMatrix(mol)
    return sum(1 for j in range(mol.GetNumAtoms()) if dm[idx][j] == 2 and mol.GetAtomWithIdx(j).GetAtomicNum() > 1)


def sites(mol, rxn_name, T):
    out = {}
    dm = Chem.GetDistanceMatrix(mol)
    for name, rxn, w in RX[rxn_name]:
        K = kfor(rxn_name, T, name)
        if K <= 0:
            continue
        prods = rxn.RunReactants((mol,))
        for ps in prods:
            site = None
            for p in ps:
                for a in p.GetAtoms():
                    if a.HasProp('old_mapno') and a.GetIntProp('old_mapno') == 1:
                        site = a.GetIntProp('react_atom_idx')
            frags = []
            ok = True
            for p in ps:
                try:
                    Chem.SanitizeMol(p)
                    frags.append(p)
                except Exception:
                    ok = False
            if not ok or not frags:
                continue
            allf = []
            for p in frags:
                for f in Chem.GetMolFrags(p, asMols=True):
                    allf.append(f)
            allf.sort(key=lambda f: -f.GetNumHeavyAtoms())
            try:
                keep = [allf[0]] + [f for f in allf[1:] if f.GetNumHeavyAtoms() >= 5 and not any(a.GetSymbol() == 'Si' for a in f.GetAtoms())]
                s = tuple(Chem.MolToSmiles(f) for f in keep)
                if any(Chem.MolFromSmiles(x) is None for x in s):
                    continue
            except Exception:
                continue
            key = (s, site)
            if key in out:
                continue
            nn = 0
            if site is not None:
                nn = sum(1 for j in range(mol.GetNumAtoms()) if dm[site][j] == 2 and mol.GetAtomWithIdx(j).GetAtomicNum() > 1)
            out[key] = K * w / (1.0 + nn)
    res = {}
    for (s, site), k in out.items():
        res[s] = res.get(s, 0) + k
    return [[s, k, ''] for s, k in res.items()]


def run_step(species, rxn_name, T, eq, mp, stereo_mode, pconst=None):
    k = 1.0
    cur = dict(species)
    for r in range(eq):
        nxt = {}
        for smi, amt in cur.items():
            m = Chem.MolFromSmiles(smi)
            st = sites(m, rxn_name, T)
            if not st:
                nxt[smi] = nxt.get(smi, 0) + amt
                continue
            W = sum(x[1] for x in st)
            frac = 1 - math.exp(-W)
            nxt[smi] = nxt.get(smi, 0) + amt * (1 - frac)
            for ps, w, nm in st:
              for ps1 in ps:
                outs = [ps1]
                if stereo_mode == 'strip':
                    pm = Chem.MolFromSmiles(ps1)
                    Chem.RemoveStereochemistry(pm)
                    outs = [Chem.MolToSmiles(pm)]
                elif stereo_mode == 'enumerate':
                    pm = Chem.MolFromSmiles(ps1)
                    opts = StereoEnumerationOptions(onlyUnassigned=True, unique=True)
                    outs = sorted(set(Chem.MolToSmiles(x) for x in EnumerateStereoisomers(pm, options=opts))) or [ps1]
                for o in outs:
                    nxt[o] = nxt.get(o, 0) + amt * frac * w / W / len(outs)
        cur = nxt
    items = sorted(cur.items(), key=lambda kv: -kv[1])
    items = [kv for kv in items if kv[1] > 1e-9]
    return dict(items[:mp])


ACID = [
    ('[CX3](=O)[OX2H1]', 3.5), ('[SX4](=O)(=O)[NX3H2]', 9.9), ('[SX4](=O)(=O)[NX3H1]a', 6.5),
    ('[OX2H1]c', 9.5),
]
BASEG = [
    ('[NX3;H2,H1,H0;+0;!$(N[C,S,P]=[O,S,N]);!$(Na);!$(N[#7,#8]);!$(NC=C);!$(N1CCOCC1)]', 9.8),
    ('[NX3;+0;$(N1CCOCC1);!$(N[C,S,P]=[O,S,N])]', 6.5),
    ('[NX3;H2,H1;+0;$(Na);!$(N(a)a);!$(N[C,S,P]=[O,S,N]);!$(N[#7,#8])]', 4.6),
    ('[nX2;r6;!$(n:c=O);!$(n:c:[nH]);!$(n:c:n)]', 5.2),
]


def ion_groups(m):
    acids, bases = [], []
    used = set()
    for s, pk in ACID:
        for mt in m.GetSubstructMatches(Chem.MolFromSmarts(s)):
            if mt[0] in used:
                continue
            used.add(mt[0])
            acids.append(pk)
    for s, pk in BASEG:
        for mt in m.GetSubstructMatches(Chem.MolFromSmarts(s)):
            if mt[0] in used:
                continue
            used.add(mt[0])
            bases.append(pk)
    perm = sum(a.GetFormalCharge() for a in m.GetAtoms() if a.GetFormalCharge() > 0 and a.GetTotalNumHs() == 0 and not any(n.GetFormalCharge() < 0 for n in a.GetNeighbors()))
    return acids, bases, perm


def fneutral(m, pH):
    acids, bases, perm = ion_groups(m)
    if perm:
        return 0.0
    f = 1.0
    for pk in acids:
        f /= (1 + 10 ** (pH - pk))
    for pk in bases:
        f /= (1 + 10 ** (pk - pH))
    return f


def charge_at(m, pH):
    acids, bases, perm = ion_groups(m)
    c = perm
    c -= sum(1 for pk in acids if pH > pk)
    c += sum(1 for pk in bases if pH < pk)
    return c


def logD(m, pH):
    P = 10 ** Crippen.MolLogP(m)
    return P * fneutral(m, pH)


NOCAPLAST = True


def main():
    sc = json.load(sys.stdin)
    p = sc['parameters']
    route, rec = p['case'].split(':', 1)
    rec = rec.strip()
    T = int(p['temperature']); eq = int(p['equivalents']); mp = int(p['max_products'])
    stm = p['stereochemistry']; pH = float(p['workup_ph'])
    steps = {
        'acetylate_brominate': ['acetylation', 'aromatic_bromination'],
        'boc_couple_deprotect': ['boc_protection', 'amide_coupling', 'boc_deprotection'],
        'boc_esterify_deprotect': ['boc_protection', 'esterification', 'boc_deprotection'],
        'boc_oxidise_deprotect': ['boc_protection', 'alcohol_oxidation', 'boc_deprotection'],
        'couple_reduce': ['amide_coupling', 'lialh4_reduction'],
        'dehalogenate_esterify': ['dehalogenation', 'esterification'],
        'esterify_reduce': ['esterification', 'lialh4_reduction'],
        'hydrolyse_couple': ['ester_hydrolysis', 'amide_coupling'],
        'methylate_hydrolyse': ['eschweiler_clarke', 'ester_hydrolysis'],
        'nitro_reduce_acetylate': ['nitro_reduction', 'acetylation'],
        'oxidise_aminate': ['alcohol_oxidation', 'reductive_amination'],
        'tbs_acetylate_deprotect': ['tbs_protection', 'acetylation', 'tbs_deprotection'],
        'tbs_oxidise_deprotect': ['tbs_protection', 'alcohol_oxidation', 'tbs_deprotection'],
    }[route.strip()]
    parent = prep_parent(rec)
    if stm == 'strip':
        Chem.RemoveStereochemistry(parent)
    psmi = Chem.MolToSmiles(parent)
    pconst = Chem.MolToSmiles(parent, isomericSmiles=False)
    species = {psmi: 100.0}
    for i, st in enumerate(steps):
        species = run_step(species, st, T, eq, (mp if (i < len(steps) - 1 or not NOCAPLAST) else 99), stm, pconst)
    crude = sum(species.values())
    def const(s):
        return Chem.MolToSmiles(Chem.MolFromSmiles(s), isomericSmiles=False)
    recovered = sum(a for s, a in species.items() if const(s) == pconst)
    D = {s: logD(Chem.MolFromSmiles(s), pH) for s in species}
    allp = [(s, a) for s, a in species.items() if const(s) != pconst]
    org = sum(a * D[s] / (1 + D[s]) for s, a in allp)
    aq = sum(a / (1 + D[s]) for s, a in allp)
    phase = 'none'
    if allp:
        phase = 'organic' if org > aq else 'aqueous'
    def inphase(s):
        fo = D[s] / (1 + D[s])
        fk = fo if phase == 'organic' else 1 - fo
        return fk > PTHR
    prods = sorted([(s, a) for s, a in allp if inphase(s)], key=lambda x: -x[1])[:mp]
    out = {'charge': 0, 'crude_pct': crude, 'isolated_pct': 0.0, 'isolated_purity_pct': 0.0,
           'kept_pct': 0.0, 'logp': 0.0, 'mw': 0.0, 'n_products': len(prods), 'n_species': len(species),
           'phase': 'none', 'product_yields_pct': [a for s, a in prods], 'products': [s for s, a in prods],
           'purity_pct': 0.0, 'qed': 0.0, 'recovered_pct': recovered, 'selected': [], 'tpsa': 0.0, 'yield_pct': 0.0}
    if prods:
        top, ya = prods[0]
        tm = Chem.MolFromSmiles(top)
        out['selected'] = [top]; out['yield_pct'] = ya
        out['mw'] = Descriptors.MolWt(tm); out['logp'] = Crippen.MolLogP(tm)
        out['tpsa'] = rdMolDescriptors.CalcTPSA(tm, includeSandP=True)
        try:
            out['qed'] = QED.qed(tm)
        except Exception:
            out['qed'] = 0.0
        out['charge'] = charge_at(tm, pH)
        out['phase'] = phase
        inph = {s: a for s, a in species.items() if inphase(s)}
        tot = sum(inph.values())
        out['purity_pct'] = 100 * ya / tot if tot else 0.0
        iso = {}
        for s, a in species.items():
            r = (1 / (1 + D[s])) ** 3
            iso[s] = a * (1 - r) if phase == 'organic' else a * r
        kept = sum(iso.values())
        out['kept_pct'] = kept; out['isolated_pct'] = iso[top]
        out['isolated_purity_pct'] = 100 * iso[top] / kept if kept > 0 else 0.0
    for k in ('crude_pct', 'isolated_pct', 'isolated_purity_pct', 'kept_pct', 'logp', 'mw', 'purity_pct', 'qed', 'recovered_pct', 'tpsa', 'yield_pct'):
        out[k] = round(float(out[k]), 6)
    out['product_yields_pct'] = [round(x, 6) for x in out['product_yields_pct']]
    print(json.dumps(out))


def fallback():
    print(json.dumps({'charge': 0, 'crude_pct': 100.0, 'isolated_pct': 0.0, 'isolated_purity_pct': 0.0,
                      'kept_pct': 0.0, 'logp': 0.0, 'mw': 0.0, 'n_products': 0, 'n_species': 1, 'phase': 'none',
                      'product_yields_pct': [], 'products': [], 'purity_pct': 0.0, 'qed': 0.0,
                      'recovered_pct': 100.0, 'selected': [], 'tpsa': 0.0, 'yield_pct': 0.0}))


if __name__ == '__main__':
    try:
        main()
    except Exception:
        fallback()
