# Independent program: the final workspace of agent trial 12 of chem_smarts 4.0.0 at the default
# evidence level (docs/trials.md), kept as the agent wrote it.
import sys, json, math
from rdkit import Chem, RDLogger
from rdkit.Chem import AllChem, Descriptors, Crippen, rdMolDescriptors, QED, Lipinski
from rdkit.Chem.MolStandardize import rdMolStandardize
from rdkit.Chem.EnumerateStereoisomers import EnumerateStereoisomers, StereoEnumerationOptions
RDLogger.DisableLog('rdApp.*')

import os
CHILD_SORT = 0
TRUNC_SMI = 0
FINAL_SMI = 0
LADDER = [0.0, 0.6, 0.8, 0.95]
TIDX = {0: 0, 25: 1, 80: 2}

ROUTES = {
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

AMINE1 = '[NX3;H2;!$(N[C,S,P]=[O,S,N]);!$(Na);!$(N[a]);!$(N-[!#6;!#1])][CX4]'
AMINE2 = '[NX3;H1;!$(N[C,S,P]=[O,S,N]);!$(N[a]);!$(N-[!#6;!#1])]([CX4])[CX4]'
ARNH2 = '[NX3;H2;!$(N[C,S,P]=[O,S,N])][a]'
PRIM_OH = '[OX2H][CH2][#6]'
SEC_OH = '[OX2H][CH1]([#6])[#6]'
PHENOL = '[OX2H]c'
ACT = '[OX2,NX3;!$([N+]);!$(N[S](=O)=O);!$([N]=*)]'

# each class: (smarts, base, rxn smarts)  -- reaction applied at mapped atom 1
RX = {
    'boc_protection': [
        (AMINE1, 1, '[N:1]>>[N:1]C(=O)OC(C)(C)C'),
        (AMINE2, 0, '[N:1]>>[N:1]C(=O)OC(C)(C)C'),
    ],
    'boc_deprotection': [
        ('[NX3:1]C(=O)OC([CH3])([CH3])[CH3]', 1, '[N:1]C(=O)OC(C)(C)C>>[N:1]'),
    ],
    'tbs_protection': [
        (PRIM_OH, 1, '[O:1]>>[O:1][Si](C)(C)C(C)(C)C'),
        (PHENOL, 0, '[O:1]>>[O:1][Si](C)(C)C(C)(C)C'),
    ],
    'tbs_deprotection': [
        ('[OX2:1][Si](C)(C)C(C)(C)C', 1, '[O:1][Si](C)(C)C(C)(C)C>>[O:1]'),
    ],
    'esterification': [
        ('[CX3:1](=O)[OX2H1,OX1-]', 0, '[C:1](=O)[O;H1,-1]>>[C:1](=O)OC'),
    ],
    'amide_coupling': [
        ('[CX3:1](=O)[OX2H1,OX1-]', 1, '[C:1](=O)[O;H1,-1]>>[C:1](=O)NCc1ccccc1'),
    ],
    'lialh4_reduction': [
        ('[CX3:1](=O)[OX2H1,OX1-]', 0, '[C:1](=O)[O;H1,-1]>>[C:1]O'),
        ('[CX3:1](=O)[OX2][#6]', 0, '[C:1](=O)[O:2][#6:3]>>[C:1][O].[O:2][#6:3]'),
        ('[CX3H1:1](=O)[#6]', 0, '[C:1]=O>>[C:1]O'),
        ('[CX3:1](=O)([#6])[#6]', 0, '[C:1]=O>>[C:1]O'),
    ],
    'nitro_reduction': [
        ('[N+:1](=O)[O-]', 0, '[N+:1](=O)[O-]>>[N+0:1]'),
        ('[c:1][Br,I]', -1, '[c:1][Br,I]>>[c:1]'),
    ],
    'acetylation': [
        (AMINE1, 1, '[N:1]>>[N:1]C(C)=O'),
        (AMINE2, 1, '[N:1]>>[N:1]C(C)=O'),
        (ARNH2, 0, '[N:1]>>[N:1]C(C)=O'),
        (PRIM_OH, 0, '[O:1]>>[O:1]C(C)=O'),
        ('[OX2H;$([OX2H][CH1]([#6])[#6]),$([OX2H]c)]', -1, '[O:1]>>[O:1]C(C)=O'),
    ],
    'eschweiler_clarke': [
        (AMINE1, 0, '[N:1]>>[N:1](C)C'),
    ],
    'ester_hydrolysis': [
        ('[CX3:1](=O)[OX2]c', 1, '[C:1](=O)[O:2][c:3]>>[C:1](=O)O.[O:2][c:3]'),
        ('[CX3:1](=O)[OX2][CX4]', 0, '[C:1](=O)[O:2][C:3]>>[C:1](=O)O.[O:2][C:3]'),
    ],
    'alcohol_oxidation': [
        (PRIM_OH, 1, '[O:1][C:2]>>[O:1]=[C:2]'),
        (SEC_OH, 0, '[O:1][C:2]>>[O:1]=[C:2]'),
    ],
    'reductive_amination': [
        ('[CX3H1:1](=O)[#6]', 1, '[C:1]=O>>[C:1]N1CCOCC1'),
        ('[CX3:1](=O)([#6])[#6]', 0, '[C:1]=O>>[C:1]N1CCOCC1'),
    ],
    'aromatic_bromination': [
        ('[cH;r6:1]1:c:c:c(-' + ACT + '):c:c1', 1, '[cH:1]>>[c:1]Br'),
        ('[cH;r6:1]:c-' + ACT, 0, '[cH:1]>>[c:1]Br'),
    ],
    'dehalogenation': [
        ('[c:1][Cl,Br,I]', -1, '[c:1][Cl,Br,I]>>[c:1]'),
    ],
}
OVEROX = ('[CX3H1:1](=O)[#6]', -1, '[C:1]=O>>[C:1](=O)O')

_pat = {}
def pat(s):
    if s not in _pat:
        _pat[s] = Chem.MolFromSmarts(s)
    return _pat[s]

_te = rdMolStandardize.TautomerEnumerator()
_te.SetRemoveSp3Stereo(False)
_te.SetRemoveBondStereo(False)
_unch = rdMolStandardize.Uncharger()


def clean(m):
    try:
        m = Chem.Mol(m)
        Chem.SanitizeMol(m)
        m = _te.Canonicalize(m)
        m2 = Chem.MolFromSmiles(Chem.MolToSmiles(m))
        return m2 if m2 is not None else m
    except Exception:
        return None


def can(m):
    return Chem.MolToSmiles(m)


def prepare(record, stereo):
    m = Chem.MolFromSmiles(record)
    m = rdMolStandardize.Cleanup(m)
    frags = Chem.GetMolFrags(m, asMols=True)
    m = max(frags, key=lambda f: f.GetNumHeavyAtoms())
    m = _unch.uncharge(m)
    m = _te.Canonicalize(m)
    if stereo == 'strip':
        Chem.RemoveStereochemistry(m)
    return Chem.MolFromSmiles(Chem.MolToSmiles(m))


def apply_site(m, rxn_smarts, atom_idx):
    """Apply reaction at a specific atom (mapped 1). Return list of product mols (fragments)."""
    # mark atom
    mm = Chem.Mol(m)
    for a in mm.GetAtoms():
        a.SetIntProp('__orig', a.GetIdx())
    rs, ps = rxn_smarts.split('>>')
    rxn = AllChem.ReactionFromSmarts(rxn_smarts)
    outs = rxn.RunReactants((mm,))
    for prods in outs:
        # check mapped atom corresponds
        ok = False
        for p in prods:
            for a in p.GetAtoms():
                if a.HasProp('old_mapno') and a.GetIntProp('old_mapno') == 1:
                    if a.HasProp('react_atom_idx') and int(a.GetProp('react_atom_idx')) == atom_idx:
                        ok = True
        if not ok:
            continue
        res = []
        for p in prods:
            for a in p.GetAtoms():
                if a.HasProp('old_mapno'):
                    a.SetNumExplicitHs(0)
                    a.SetNoImplicit(False)
            try:
                Chem.SanitizeMol(p)
            except Exception:
                res = None
                break
            for frag in Chem.GetMolFrags(p, asMols=True, sanitizeFrags=False):
                res.append(frag)
        if res:
            return res
    return None


def sites(m, rname):
    out = []
    for ci, (sm, base, rx) in enumerate(RX[rname]):
        p = pat(sm)
        seen = set()
        for match in m.GetSubstructMatches(p):
            # atom mapped 1 index in pattern
            idx = None
            for qa in p.GetAtoms():
                if qa.GetAtomMapNum() == 1:
                    idx = match[qa.GetIdx()]
            if idx is None:
                idx = match[0]
            if idx in seen:
                continue
            seen.add(idx)
            out.append((ci, idx, base, rx))
    return out


def is_byproduct(m):
    return m.GetNumHeavyAtoms() <= 4


def children_of(m, cls_sites):
    res = {}
    order = []
    for ci, idx, base, rx in cls_sites:
        prods = apply_site(m, rx, idx)
        if not prods:
            continue
        cl = []
        for p in prods:
            c = clean(p)
            if c is None:
                cl = None
                break
            cl.append(c)
        if cl is None:
            continue
        # main = largest
        cl.sort(key=lambda x: -x.GetNumHeavyAtoms())
        main = cl[0]
        others = [x for x in cl[1:] if not is_byproduct(x)]
        key = can(main)
        if key not in res:
            res[key] = (main, others)
            order.append(key)
    if CHILD_SORT:
        order = sorted(order)
    return [res[k] for k in order]


def run_step(species, rname, T, eq, stereo):
    """species: list of (smiles, mol, amount). returns list of (smiles, mol, amount, formed)"""
    out = []  # list of [smi, mol, amount, formed]

    def add(mol, amt, formed):
        out.append([can(mol), mol, amt, formed])

    def rec(m, amt, depth, formed):
        if depth >= eq:
            add(m, amt, formed)
            return
        ss = sites(m, rname)
        if not ss:
            add(m, amt, formed)
            return
        best = min(s[0] for s in ss)
        cls = [s for s in ss if s[0] == best]
        base = cls[0][2]
        k = base + TIDX[T]
        p = LADDER[max(0, min(3, k))]
        if p <= 0:
            # try lower classes? no: this class blocks
            add(m, amt, formed)
            return
        ch = children_of(m, cls)
        if not ch:
            add(m, amt, formed)
            return
        add(m, amt * (1 - p), formed)
        share = amt * p / len(ch)
        for main, others in ch:
            for o in others:
                add(o, share, True)
            rec(main, share, depth + 1, True)

    for smi, m, amt in species:
        if rname == 'alcohol_oxidation' and (m.HasSubstructMatch(pat(AMINE1)) or m.HasSubstructMatch(pat(AMINE2))):
            continue
        if rname == 'amide_coupling' and (m.HasSubstructMatch(pat(AMINE1)) or m.HasSubstructMatch(pat(AMINE2))) \
                and m.HasSubstructMatch(pat('[CX3](=O)[OX2H1,OX1-]')):
            continue
        rec(m, amt, 0, False)
    # over-oxidation
    if rname == 'alcohol_oxidation' and eq >= 3:
        new = []
        for smi, m, amt, formed in out:
            if formed and not sites(m, rname):
                k = OVEROX[1] + TIDX[T]
                p = LADDER[max(0, min(3, k))]
                ss = []
                pp = pat(OVEROX[0])
                for match in m.GetSubstructMatches(pp):
                    ss.append((0, match[0], -1, OVEROX[2]))
                ch = children_of(m, ss) if ss else []
                if p > 0 and ch:
                    new.append([smi, m, amt * (1 - p), formed])
                    for main, others in ch:
                        new.append([can(main), main, amt * p / len(ch), True])
                    continue
            new.append([smi, m, amt, formed])
        out = new
    if rname == 'tbs_protection' and eq >= 3:
        k = -1 + TIDX[T]
        p = LADDER[max(0, min(3, k))]
        if p > 0:
            for o in out:
                if o[3] and o[1].HasSubstructMatch(pat(SEC_OH)):
                    o[2] = o[2] * (1 - p)
    # stereo enumerate
    if stereo == 'enumerate':
        new = []
        for smi, m, amt, formed in out:
            if formed:
                opts = StereoEnumerationOptions(onlyUnassigned=True, unique=True)
                isos = list(EnumerateStereoisomers(m, options=opts))
                isos = [Chem.MolFromSmiles(Chem.MolToSmiles(x)) for x in isos]
                isos.sort(key=lambda x: Chem.MolToSmiles(x))
                if len(isos) > 1:
                    for x in isos:
                        new.append([can(x), x, amt / len(isos), formed])
                    continue
            new.append([smi, m, amt, formed])
        out = new
    elif stereo == 'strip':
        for o in out:
            Chem.RemoveStereochemistry(o[1])
            o[0] = can(o[1])
    # merge
    merged = {}
    order = []
    for smi, m, amt, formed in out:
        if smi in merged:
            merged[smi][2] += amt
        else:
            merged[smi] = [smi, m, amt]
            order.append(smi)
    return [tuple(merged[s]) for s in order]


def truncate(species, n):
    if TRUNC_SMI:
        idx = sorted(range(len(species)), key=lambda i: (-round(species[i][2], 8), species[i][0]))
    else:
        idx = sorted(range(len(species)), key=lambda i: -round(species[i][2], 8))
    return [species[i] for i in idx[:n]]

# ---------------- ionisation ----------------
IONS = [
    # (smarts, pKa, type) type 'a' acid, 'b' base; first match per atom wins
    ('[CX3](=O)[OX2H1,OX1-]', None, 'a'),
    ('[SX4](=O)(=O)[NX3H1][a]', 6.5, 'a'),
    ('[SX4](=O)(=O)[NX3H2]', 9.9, 'a'),
    ('[OX2H1]c', 9.5, 'a'),
    ('[OX2H1][SX4,PX4]', 1.0, 'a'),
    ('[NX4+]', None, 'q'),
    ('[NX3;H0;!$(N[C,S,P]=[O,S,N]);!$(N[a]);!$(N-[!#6])]1CCOCC1', 6.5, 'b'),

    ('[NX3;!$(N[C,S,P]=[O,S,N]);!$(N[a]);!$(N-[!#6;!#1]);!$(NC=[C,N])]', 9.8, 'b'),
    ('[NX3;H2,H1;!$(N[C,S,P]=[O,S,N]);!$(Na(a)Na);!$(N(a)a)]a', 4.6, 'b'),
    ('[nX2;r6]', 5.2, 'b'),
]


def ion_groups(m):
    used = set()
    groups = []
    for sm, pka, typ in IONS:
        p = pat(sm)
        for match in m.GetSubstructMatches(p):
            a0 = match[0]
            if typ == 'a' and sm.startswith('[CX3]'):
                a0 = match[0]
                if a0 in used:
                    continue
                # aromatic acid lower
                c = m.GetAtomWithIdx(match[0])
                arom = any(n.GetIsAromatic() for n in c.GetNeighbors())
                pk = 3.5
                used.add(a0)
                groups.append((pk, 'a'))
                continue
            if a0 in used:
                continue
            used.add(a0)
            if typ == 'b' and sm.startswith('[nX2;r5'):
                # nitroimidazole weaker
                ring_nitro = m.HasSubstructMatch(pat('[N+](=O)[O-]c1ncc[nX3]1')) or m.HasSubstructMatch(pat('[N+](=O)[O-]c1cnc[nX3]1'))
                if ring_nitro:
                    continue
            groups.append((pka, typ))
    return groups


def ionisation(m, ph):
    charge = 0
    logf = 0.0
    ionised = False
    for pka, typ in ion_groups(m):
        if typ == 'q':
            charge += 1
            ionised = True
            logf -= 50
            continue
        if typ == 'a':
            if ph > pka:
                charge -= 1
                ionised = True
            logf -= math.log10(1 + 10 ** (ph - pka))
        else:
            if ph < pka:
                charge += 1
                ionised = True
            logf -= math.log10(1 + 10 ** (pka - ph))
    return charge, logf, ionised


def main():
    sc = json.load(sys.stdin)
    P = sc['parameters']
    case = P['case']
    route, record = [x.strip() for x in case.split(':', 1)]
    eq = int(P['equivalents'])
    radius = int(P['fingerprint_radius'])
    mp = int(P['max_products'])
    stereo = P['stereochemistry']
    T = int(P['temperature'])
    ph = float(P['workup_ph'])

    sm = prepare(record, stereo)
    sm_smi = can(sm)
    species = [(sm_smi, sm, 100.0)]
    steps = ROUTES[route]
    for i, st in enumerate(steps):
        if i > 0:
            species = truncate(species, mp)
        try:
            species = run_step(species, st, T, eq, stereo)
        except Exception as e:
            sys.stderr.write('step error %r\n' % e)
    species = [s for s in species if s[2] > 1e-9]
    crude = sum(s[2] for s in species)
    nsp = len(species)
    info = []
    for smi, m, amt in species:
        ch, logf, ionised = ionisation(m, ph)
        logp = Crippen.MolLogP(m)
        logd = logp + logf
        phase = 'aqueous' if (ionised and ch != 0) or ch != 0 or logp <= 0 else 'organic'
        if ionised:
            phase = 'aqueous'
        info.append(dict(smi=smi, m=m, amt=amt, charge=ch, D=10 ** logd, phase=phase, sm=(smi == sm_smi)))
    prod_org = sum(x['amt'] for x in info if not x['sm'] and x['phase'] == 'organic')
    prod_aq = sum(x['amt'] for x in info if not x['sm'] and x['phase'] == 'aqueous')
    out = {}
    has_prod = any(not x['sm'] for x in info)
    if not has_prod:
        phase = 'none'
    else:
        phase = 'organic' if prod_org >= prod_aq else 'aqueous'
    zero = dict(charge=0, crude_pct=round(crude, 6), fp_on=0, hba=0, hbd=0, isolated_pct=0.0,
                isolated_purity_pct=0.0, kept_pct=0.0, logp=0.0, mw=0.0, n_products=0, n_species=nsp,
                phase='none', products=[], purity_pct=0.0, qed=0.0, selected=[], tpsa=0.0, yield_pct=0.0)
    if phase == 'none':
        print(json.dumps(zero))
        return
    kept = [x for x in info if x['phase'] == phase]
    prods = [x for x in kept if not x['sm']]
    if FINAL_SMI == 2:
        prods_sorted = sorted(range(len(prods)), key=lambda i: (-prods[i]['amt'], prods[i]['smi']))
    elif FINAL_SMI:
        prods_sorted = sorted(range(len(prods)), key=lambda i: (-round(prods[i]['amt'], 8), prods[i]['smi']))
    else:
        prods_sorted = sorted(range(len(prods)), key=lambda i: (-round(prods[i]['amt'], 6), -round(Descriptors.MolWt(prods[i]['m']), 3), prods[i]['smi']))
    prods = [prods[i] for i in prods_sorted][:mp]
    top = prods[0]
    tot_kept = sum(x['amt'] for x in kept)
    # isolation
    def frac(x):
        r = (1.0 / (1.0 + x['D'])) ** 3
        return 1 - r if phase == 'organic' else r
    iso_tot = sum(x['amt'] * frac(x) for x in info)
    iso_top = top['amt'] * frac(top)
    m = top['m']
    fp = AllChem.GetMorganFingerprintAsBitVect(m, radius, nBits=1024)
    out = dict(
        charge=top['charge'], crude_pct=round(crude, 6), fp_on=fp.GetNumOnBits(),
        hba=rdMolDescriptors.CalcNumLipinskiHBA(m), hbd=rdMolDescriptors.CalcNumLipinskiHBD(m),
        isolated_pct=round(iso_top, 6), isolated_purity_pct=round(100 * iso_top / iso_tot, 6) if iso_tot > 0 else 0.0,
        kept_pct=round(iso_tot, 6), logp=round(Crippen.MolLogP(m), 6), mw=round(Descriptors.MolWt(m), 6),
        n_products=len(prods), n_species=nsp, phase=phase, products=[x['smi'] for x in prods],
        purity_pct=round(100 * top['amt'] / tot_kept, 6), qed=round(QED.qed(m), 6), selected=[top['smi']],
        tpsa=round(rdMolDescriptors.CalcTPSA(m, includeSandP=True), 6), yield_pct=round(top['amt'], 6))
    print(json.dumps(out))


if __name__ == '__main__':
    main()
