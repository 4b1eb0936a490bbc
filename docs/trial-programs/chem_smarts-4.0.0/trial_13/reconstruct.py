# Independent program: the final workspace of agent trial 13 of chem_smarts 4.0.0 at the default
# evidence level (docs/trials.md), kept as the agent wrote it.
import sys, json, math, itertools
from rdkit import Chem, RDLogger
from rdkit.Chem import Descriptors, Crippen, rdMolDescriptors, QED, Lipinski, AllChem
from rdkit.Chem.MolStandardize import rdMolStandardize
from rdkit.Chem.EnumerateStereoisomers import EnumerateStereoisomers, StereoEnumerationOptions
RDLogger.DisableLog('rdApp.*')

LEVELS = [0.0, 0.6, 0.8, 0.95]
TIDX = {0: 0, 25: 1, 80: 2}
BYPRODUCT_MAX_HEAVY = 5


def conv(T, off):
    i = TIDX.get(int(T), 1) + off
    if i < 0:
        return 0.0
    return LEVELS[min(i, 3)]


_TE = None


def canon_taut(m):
    global _TE
    if _TE is None:
        ps = rdMolStandardize.CleanupParameters()
        ps.tautomerRemoveSp3Stereo = False
        ps.tautomerRemoveBondStereo = False
        _TE = rdMolStandardize.TautomerEnumerator(ps)
    try:
        return _TE.Canonicalize(m)
    except Exception:
        return m


def prepare(smi, stereo):
    m = Chem.MolFromSmiles(smi)
    frs = Chem.GetMolFrags(m, asMols=True)
    m = max(frs, key=lambda f: (f.GetNumHeavyAtoms(), Descriptors.MolWt(f)))
    m = rdMolStandardize.Uncharger().uncharge(m)
    # protonate remaining carboxylates (zwitterions with quaternary N)
    rw = Chem.RWMol(m)
    for a in rw.GetAtoms():
        if a.GetSymbol() == 'O' and a.GetFormalCharge() == -1:
            nb = a.GetNeighbors()
            if len(nb) == 1 and nb[0].GetSymbol() == 'C':
                a.SetFormalCharge(0)
                a.SetNoImplicit(False)
                a.SetNumExplicitHs(0)
    m = rw.GetMol()
    Chem.SanitizeMol(m)
    if stereo == 'strip':
        Chem.RemoveStereochemistry(m)
    m = canon_taut(m)
    return m


# ---------- edit primitives ----------

def attach(rw, idx, frag):
    f = Chem.MolFromSmiles(frag)
    n0 = rw.GetNumAtoms()
    for a in f.GetAtoms():
        na = Chem.Atom(a.GetAtomicNum())
        na.SetFormalCharge(a.GetFormalCharge())
        na.SetIsAromatic(a.GetIsAromatic())
        rw.AddAtom(na)
    for b in f.GetBonds():
        rw.AddBond(b.GetBeginAtomIdx() + n0, b.GetEndAtomIdx() + n0, b.GetBondType())
    rw.AddBond(idx, n0, Chem.BondType.SINGLE)
    a = rw.GetAtomWithIdx(idx)
    if a.GetNumExplicitHs() > 0:
        a.SetNumExplicitHs(a.GetNumExplicitHs() - 1)
    return n0


def loseH(a):
    if a.GetNumExplicitHs() > 0:
        a.SetNumExplicitHs(a.GetNumExplicitHs() - 1)


def finish(rw, dels):
    for i in sorted(set(dels), reverse=True):
        rw.RemoveAtom(i)
    m = rw.GetMol()
    for a in m.GetAtoms():
        if a.GetIsAromatic() and not a.IsInRing():
            a.SetIsAromatic(False)
        a.SetNumRadicalElectrons(0)
        if not a.GetIsAromatic():
            a.SetNoImplicit(False)
    try:
        Chem.SanitizeMol(m)
    except Exception:
        return None
    return m


# edits: function(rw, site, dels)
def e_boc(rw, s, d):
    attach(rw, s[0], 'C(=O)OC(C)(C)C')


def e_deboc(rw, s, d):
    d.extend(s[1:])


def e_tbs(rw, s, d):
    attach(rw, s[0], '[Si](C)(C)C(C)(C)C')


def e_detbs(rw, s, d):
    d.extend(s[1:])


def e_ester(rw, s, d):
    o = rw.GetAtomWithIdx(s[2]); o.SetFormalCharge(0); o.SetNumExplicitHs(0)
    attach(rw, s[2], 'C')


def e_couple(rw, s, d):
    o = rw.GetAtomWithIdx(s[2]); o.SetFormalCharge(0); o.SetNumExplicitHs(0)
    o.SetAtomicNum(7)
    attach(rw, s[2], 'Cc1ccccc1')


def e_red_acid(rw, s, d):
    o = rw.GetAtomWithIdx(s[2]); o.SetFormalCharge(0); o.SetNumExplicitHs(0)
    d.append(s[1])


def e_red_amide(rw, s, d):
    d.append(s[1])


def e_red_ester(rw, s, d):
    # s = C, =O, O, R
    d.append(s[1])
    rw.RemoveBond(s[0], s[2])
    attach(rw, s[0], 'O')


def e_hydrol(rw, s, d):
    rw.RemoveBond(s[0], s[2])
    attach(rw, s[0], 'O')


def e_nitro(rw, s, d):
    n = rw.GetAtomWithIdx(s[0]); n.SetFormalCharge(0); n.SetNumExplicitHs(0)
    d.extend([s[1], s[2]])


def e_dehal(rw, s, d):
    d.append(s[1])


def e_acetyl(rw, s, d):
    attach(rw, s[0], 'C(C)=O')


def e_ox(rw, s, d):
    # s = C, O
    b = rw.GetBondBetweenAtoms(s[0], s[1])
    b.SetBondType(Chem.BondType.DOUBLE)
    a = rw.GetAtomWithIdx(s[0]); loseH(a)
    if a.GetChiralTag() != Chem.ChiralType.CHI_UNSPECIFIED:
        a.SetChiralTag(Chem.ChiralType.CHI_UNSPECIFIED)


def e_overox(rw, s, d):
    attach(rw, s[0], 'O')


def e_redam(rw, s, d):
    d.append(s[1])
    attach(rw, s[0], 'N1CCOCC1')


def e_methyl(rw, s, d):
    attach(rw, s[0], 'C')
    attach(rw, s[0], 'C')


def e_methyl1(rw, s, d):
    attach(rw, s[0], 'C')


def e_brom(rw, s, d):
    attach(rw, s[0], 'Br')


P = Chem.MolFromSmarts
AMINE_ALI = '[NX3;H2,H1;!$(N-[C,S,P]=[O,S,N]);!$(N-a);!$(N-C=C);!$(N-S(=O)=O)]'
PATTS = {
    'amine_ali': P(AMINE_ALI),
    'amine_sec': P('[NX3;H1;!$(N-[C,S,P]=[O,S,N]);!$(N-a);!$(N-C=C);!$(N-S(=O)=O)]'),
    'amine_pri': P('[NX3;H2;!$(N-[C,S,P]=[O,S,N]);!$(N-a);!$(N-C=C);!$(N-S(=O)=O)]'),
    'amine_ar': P('[NX3;H2,H1;!$(N-[C,S,P]=[O,S,N]);!$(N-S(=O)=O);$(N-a)]'),
    'boc': P('[NX3]-C(=O)-O-C(-[CH3])(-[CH3])-[CH3]'),
    'oh_prim': P('[OX2H1]-[CH2]-[#6]'),
    'oh_sec': P('[OX2H1]-[CH1;!$([CH1]-[CX4H0])](-[#6])-[#6]'),
    'phenol_free': P('[OX2H1]-c:[cH1]'),
    'phenol': P('[OX2H1]-c'),
    'tbs': P('[OX2]-[Si](-[CH3])(-[CH3])-C(-[CH3])(-[CH3])-[CH3]'),
    'acid': P('[CX3](=O)-[OX2H1,OX1-]'),
    'ester': P('[CX3](=O)-[OX2]-[#6]'),
    'nitro': P('[NX3+](=O)-[OX1-]'),
    'arBr': P('c-[Br]'), 'arCl': P('c-[Cl]'), 'arI': P('c-[I]'),
    'prim_oh_c': P('[CH2;!$(C=*)](-[OX2H1])-[#6]'),
    'sec_oh_c': P('[CH1;!$(C=*)](-[OX2H1])(-[#6])-[#6]'),
    'ald': P('[CX3H1](=O)-[#6]'),
    'ketone': P('[#6]-[CX3](=O)-[#6]'),
    'amide': P('[#6]-[CX3](=O)-[NX3]'),
    'amine_prim': P('[NX3H2]-[CX4]'),
}


def matches(m, key, uniq_first=True):
    res = m.GetSubstructMatches(PATTS[key])
    out, seen = [], set()
    for r in res:
        if r[0] in seen:
            continue
        seen.add(r[0])
        out.append(r)
    return out


def brom_sites(m):
    para, ortho = [], []
    act = set()
    for a in m.GetAtoms():
        if not a.GetIsAromatic() or a.GetAtomicNum() != 6:
            continue
        if not a.IsInRingSize(6):
            continue
        for nb in a.GetNeighbors():
            if nb.GetIsAromatic():
                continue
            if nb.GetSymbol() == 'O' and nb.GetDegree() <= 2 and not any(
                    b.GetBondType() == Chem.BondType.DOUBLE for b in nb.GetBonds()):
                # OH or ether (not ester)
                ok = True
                for nn in nb.GetNeighbors():
                    if nn.GetIdx() != a.GetIdx():
                        if any(bb.GetBondType() == Chem.BondType.DOUBLE and bb.GetOtherAtom(nn).GetSymbol() == 'O' for bb in nn.GetBonds()):
                            ok = False
                        if nn.GetSymbol() == 'Si':
                            ok = True
                if ok:
                    act.add(a.GetIdx())
            if nb.GetSymbol() == 'N' and nb.GetFormalCharge() == 0 and not any(
                    b.GetBondType() == Chem.BondType.DOUBLE for b in nb.GetBonds()):
                # exclude sulfonamide N
                if any(nn.GetSymbol() == 'S' for nn in nb.GetNeighbors()):
                    continue
                act.add(a.GetIdx())
    ri = m.GetRingInfo()
    pset, oset = [], []
    for ci in act:
        for ring in ri.AtomRings():
            if ci not in ring or len(ring) != 6:
                continue
            if not all(m.GetAtomWithIdx(x).GetAtomicNum() == 6 for x in ring):
                continue
            if not all(m.GetAtomWithIdx(x).GetIsAromatic() for x in ring):
                continue
            k = ring.index(ci)
            for off, lst in ((3, pset), (1, oset), (5, oset)):
                j = ring[(k + off) % 6]
                at = m.GetAtomWithIdx(j)
                if at.GetAtomicNum() == 6 and at.GetIsAromatic() and at.GetTotalNumHs() == 1:
                    if j not in lst:
                        lst.append(j)
    oset = [x for x in oset if x not in pset]
    return [(x,) for x in pset], [(x,) for x in oset]


def tiers_for(rxn, m, T):
    """list of (sites, p, editfn)"""
    t = []
    if rxn == 'boc_protection':
        t.append((matches(m, 'amine_pri'), conv(T, 1), e_boc))
        t.append((matches(m, 'amine_sec'), conv(T, 0), e_boc))
    elif rxn == 'boc_deprotection':
        t.append((m.GetSubstructMatches(PATTS['boc']), conv(T, 1), e_deboc))
    elif rxn == 'tbs_protection':
        t.append((matches(m, 'oh_prim'), conv(T, 1), e_tbs))
        t.append((matches(m, 'phenol_free'), conv(T, 0), e_tbs))
        t.append((matches(m, 'oh_sec'), conv(T, -1), e_tbs))
    elif rxn == 'tbs_deprotection':
        t.append((m.GetSubstructMatches(PATTS['tbs']), conv(T, 1), e_detbs))
    elif rxn == 'esterification':
        t.append((matches(m, 'acid'), conv(T, 0), e_ester))
    elif rxn == 'amide_coupling':
        t.append((matches(m, 'acid'), conv(T, 1), e_couple))
    elif rxn == 'lialh4_reduction':
        t.append((matches(m, 'acid'), conv(T, 0), e_red_acid))
        t.append((matches(m, 'ester'), conv(T, 0), e_red_ester))
        t.append(([(x[1], x[2], x[3]) for x in m.GetSubstructMatches(PATTS['amide'])], conv(T, -1), e_red_amide))
    elif rxn == 'nitro_reduction':
        t.append((m.GetSubstructMatches(PATTS['nitro']), conv(T, 0), e_nitro))
        t.append((m.GetSubstructMatches(PATTS['arI']), conv(T, -1), e_dehal))
        t.append((m.GetSubstructMatches(PATTS['arBr']), conv(T, -1), e_dehal))
    elif rxn == 'acetylation':
        t.append((matches(m, 'amine_ali'), conv(T, 1), e_acetyl))
        t.append((matches(m, 'amine_ar'), conv(T, 0), e_acetyl))
        t.append((matches(m, 'oh_prim'), conv(T, 0), e_acetyl))
        t.append((matches(m, 'oh_sec') + matches(m, 'phenol'), conv(T, -1), e_acetyl))
    elif rxn == 'ester_hydrolysis':
        es = [s for s in m.GetSubstructMatches(PATTS['ester'])]
        ar = [s for s in es if m.GetAtomWithIdx(s[3]).GetIsAromatic()]
        al = [s for s in es if not m.GetAtomWithIdx(s[3]).GetIsAromatic()]
        t.append((ar, conv(T, 1), e_hydrol))
        t.append((al, conv(T, 0), e_hydrol))
    elif rxn == 'alcohol_oxidation':
        prim = [(s[0], s[1]) for s in m.GetSubstructMatches(PATTS['prim_oh_c'])]
        sec = [(s[0], s[1]) for s in m.GetSubstructMatches(PATTS['sec_oh_c'])]
        ald = [(s[0],) for s in m.GetSubstructMatches(PATTS['ald'])]
        def _slow(s):
            a = m.GetAtomWithIdx(s[0])
            return a.IsInRing() or any(nb.GetIsAromatic() for nb in a.GetNeighbors())
        secr = [s for s in sec if _slow(s)]
        seca = [s for s in sec if not _slow(s)]
        t.append((prim + seca, conv(T, 1), e_ox))
        t.append((secr, conv(T, 0), e_ox))
        t.append(([(s[0],) for s in prim] + ald, conv(T, -1), e_overox))
    elif rxn == 'reductive_amination':
        t.append((m.GetSubstructMatches(PATTS['ald']), conv(T, 1), e_redam))
        kt = [(s[1], s[2]) for s in m.GetSubstructMatches(PATTS['ketone'])]
        t.append((kt, conv(T, 0), e_redam))
    elif rxn == 'eschweiler_clarke':
        t.append((matches(m, 'amine_prim'), conv(T, 0), e_methyl))
        t.append((matches(m, 'amine_sec'), conv(T, -1), e_methyl1))
    elif rxn == 'bromination':
        pa, orr = brom_sites(m)
        t.append((pa, conv(T, 1), e_brom))
        t.append((orr, conv(T, 0), e_brom))
    elif rxn == 'dehalogenation':
        t.append((m.GetSubstructMatches(PATTS['arI']), conv(T, -1), e_dehal))
        t.append((m.GetSubstructMatches(PATTS['arBr']), conv(T, -1), e_dehal))
        t.append((m.GetSubstructMatches(PATTS['arCl']), conv(T, -1), e_dehal))
    # normalize ordering: remove empty tiers
    return [(list(s), p, f) for (s, p, f) in t if len(s) > 0]


def apply_sites(m, chosen):
    rw = Chem.RWMol(m)
    dels = []
    for (s, f) in chosen:
        f(rw, s, dels)
    out = finish(rw, dels)
    if out is None:
        return []
    frags = Chem.GetMolFrags(out, asMols=True, sanitizeFrags=False)
    res = []
    for fr in frags:
        if fr.GetNumHeavyAtoms() <= BYPRODUCT_MAX_HEAVY and len(frags) > 1:
            continue
        res.append(fr)
    return res


def react(m, rxn, T, eq):
    """returns list of (mol, fraction) including unreacted"""
    if rxn == 'amide_coupling' and m.HasSubstructMatch(PATTS['amine_ali']) and m.HasSubstructMatch(PATTS['acid']):
        return []
    if rxn == 'alcohol_oxidation' and m.HasSubstructMatch(PATTS['amine_ali']):
        return []
    tiers = tiers_for(rxn, m, T)
    flat = []
    for ti, (sites, p, f) in enumerate(tiers):
        for s in sites:
            flat.append((ti, s, p, f))
    K = min(eq, len(flat))
    if K == 0:
        return [(m, 1.0)]
    out = []
    prob = 1.0
    for k in range(0, K + 1):
        if k < K:
            pk = flat[k][2]
            pr = prob * (1 - pk)
        else:
            pr = prob
        if pr > 1e-12:
            if k == 0:
                out.append((m, pr))
            else:
                # first k sites: full tiers plus partial last tier
                last_t = flat[k - 1][0]
                fixed = [(x[1], x[3]) for x in flat[:k] if x[0] < last_t]
                tier_sites = [(x[1], x[3]) for x in flat if x[0] == last_t]
                nsel = sum(1 for x in flat[:k] if x[0] == last_t)
                combos = list(itertools.combinations(tier_sites, nsel))
                for c in combos:
                    prods = apply_sites(m, fixed + list(c))
                    for pm in prods:
                        out.append((pm, pr / len(combos)))
        if k < K:
            prob *= flat[k][2]
            if prob <= 0:
                break
    return out


def clean(m, stereo):
    try:
        m = Chem.Mol(m)
        Chem.SanitizeMol(m)
        if stereo == 'strip':
            Chem.RemoveStereochemistry(m)
        m = canon_taut(m)
        Chem.AssignStereochemistry(m, cleanIt=True, force=True)
        return m
    except Exception:
        return None


def expand(m):
    try:
        opts = StereoEnumerationOptions(onlyUnassigned=True, unique=True)
        isos = list(EnumerateStereoisomers(m, options=opts))
        if not isos:
            return [m]
        return isos
    except Exception:
        return [m]


def run_route(sm, transformations, T, eq, maxp, stereo):
    smi0 = Chem.MolToSmiles(sm)
    species = {smi0: [sm, 100.0]}
    order = [smi0]
    final = None
    for si, rxn in enumerate(transformations):
        new = {}
        norder = []
        for smi in order:
            m, amt = species[smi]
            for pm, fr in react(m, rxn, T, eq):
                if pm is m:
                    outs = [(m, amt * fr)]
                else:
                    cm = clean(pm, stereo)
                    if cm is None:
                        continue
                    if stereo == 'enumerate':
                        isos = expand(cm)
                        outs = [(clean(x, stereo) or x, amt * fr / len(isos)) for x in isos]
                    else:
                        outs = [(cm, amt * fr)]
                for om, oa in outs:
                    s = Chem.MolToSmiles(om)
                    if s in new:
                        new[s][1] += oa
                    else:
                        new[s] = [om, oa]
                        norder.append(s)
        norder = [s for s in norder if new[s][1] > 1e-9]
        ranked = sorted(norder, key=lambda s: -round(new[s][1], 7))
        if si < len(transformations) - 1:
            ranked = ranked[:maxp]
        species = {s: new[s] for s in ranked}
        order = ranked
    return species, order, smi0


# ---------- ionisation ----------
ION = [
    ('acid', P('[CX3](=O)[OX2H1,OX1-]'), 3.5, -1),
    ('arOH', P('[OX2H1]-a'), 9.5, -1),
    ('sulfNHar', P('[#16X4](=O)(=O)[NX3H1]-a'), 6.5, -1),
    ('sulfNH2', P('[#16X4](=O)(=O)[NX3H2]'), 9.9, -1),
    ('morph', P('[NX3;H0;!$(N-[C,S]=[O,S,N]);!$(N-a)]1CCOCC1'), 6.5, 1),
    ('amine', P('[NX3;!$(N-[C,S,P]=[O,S,N]);!$(N-a);!$(N-C=[C,N]);!$(N-S(=O)=O);!$(N-[N,O]);!$([N]1CCOCC1)]'), 9.8, 1),
    ('aniline', P('[NX3;H2,H1;!$(N-[C,S,P]=[O,S,N]);!$(N-S(=O)=O);$(N-c);!$(N(-a)-a)]'), 4.6, 1),
    ('pyridine', P('[nX2;r6]'), 5.2, 1),
]


def ion_groups(m):
    gs = []
    for name, pat, pka, sgn in ION:
        for mt in m.GetSubstructMatches(pat):
            gs.append((pka, sgn))
    perm = 0
    for a in m.GetAtoms():
        if a.GetSymbol() == 'N' and a.GetFormalCharge() == 1 and a.GetTotalNumHs() == 0 and not any(
                nb.GetFormalCharge() == -1 for nb in a.GetNeighbors()) and not a.GetIsAromatic():
            perm += 1
    return gs, perm


def charge_at(m, pH):
    gs, perm = ion_groups(m)
    c = perm
    for pka, sgn in gs:
        if sgn < 0 and pka < pH:
            c -= 1
        if sgn > 0 and pka > pH:
            c += 1
    return c


def any_ionized(m, pH):
    gs, perm = ion_groups(m)
    if perm:
        return True
    for pka, sgn in gs:
        if (sgn < 0 and pka < pH) or (sgn > 0 and pka > pH):
            return True
    return False


def logD(m, pH):
    gs, perm = ion_groups(m)
    if perm:
        return None
    lp = Crippen.MolLogP(m)
    s = 0.0
    for pka, sgn in gs:
        if sgn < 0:
            s += math.log10(1 + 10 ** (pH - pka))
        else:
            s += math.log10(1 + 10 ** (pka - pH))
    return lp - s


def phase_of(m, pH):
    if charge_at(m, pH) != 0 or any_ionized(m, pH):
        return 'aqueous'
    ld = logD(m, pH)
    return 'organic' if (ld is not None and ld > 0) else 'aqueous'


def main():
    data = json.load(sys.stdin)
    p = data['parameters']
    case = p['case']
    route, rec = case.split(':', 1)
    rec = rec.strip()
    T = int(float(p['temperature']))
    eq = int(p['equivalents'])
    maxp = int(p['max_products'])
    stereo = p['stereochemistry']
    pH = float(p['workup_ph'])
    rfp = int(p['fingerprint_radius'])
    trans = ROUTES.get(route.strip())
    sm = prepare(rec, stereo)
    species, order, smi0 = run_route(sm, trans, T, eq, maxp, stereo)
    crude = sum(v[1] for v in species.values())
    info = {}
    for s in order:
        m, a = species[s]
        info[s] = (m, a, phase_of(m, pH))
    prodsm = [s for s in order if s != smi0]
    org = sum(info[s][1] for s in prodsm if info[s][2] == 'organic')
    aq = sum(info[s][1] for s in prodsm if info[s][2] == 'aqueous')
    out = {'crude_pct': round(crude, 6), 'n_species': len(order)}
    if not prodsm:
        out.update(dict(charge=0, fp_on=0, hba=0, hbd=0, isolated_pct=0.0, isolated_purity_pct=0.0,
                        kept_pct=0.0, logp=0.0, mw=0.0, n_products=0, phase='none', products=[],
                        purity_pct=0.0, qed=0.0, selected=[], tpsa=0.0, yield_pct=0.0))
        print(json.dumps(out))
        return
    phase = 'organic' if org >= aq else 'aqueous'
    if org == aq:
        phase = 'organic'
    prods = sorted([s for s in prodsm if info[s][2] == phase], key=lambda s: (-round(info[s][1], 7), -round(Descriptors.MolWt(info[s][0]), 3), s))[:maxp]
    top = prods[0]
    tm = Chem.MolFromSmiles(top)
    y = info[top][1]
    tot_phase = sum(info[s][1] for s in order if info[s][2] == phase)
    # isolation
    kept = 0.0
    iso = 0.0
    for s in order:
        m, a, _ = info[s]
        ld = logD(m, pH)
        if ld is None:
            D = 0.0
        else:
            D = 10 ** ld
        q = (1.0 / (1.0 + D)) ** 3
        f = (1 - q) if phase == 'organic' else q
        kept += a * f
        if s == top:
            iso = a * f
    fp = AllChem.GetMorganFingerprintAsBitVect(tm, rfp, nBits=1024)
    out.update(dict(
        charge=charge_at(tm, pH),
        fp_on=fp.GetNumOnBits(),
        hba=rdMolDescriptors.CalcNumLipinskiHBA(tm), hbd=rdMolDescriptors.CalcNumLipinskiHBD(tm),
        isolated_pct=round(iso, 6),
        isolated_purity_pct=round(100 * iso / kept, 6) if kept > 0 else 0.0,
        kept_pct=round(kept, 6),
        logp=round(Crippen.MolLogP(tm), 6),
        mw=round(Descriptors.MolWt(tm), 6),
        n_products=len(prods), phase=phase, products=prods,
        purity_pct=round(100 * y / tot_phase, 6) if tot_phase > 0 else 0.0,
        qed=round(QED.qed(tm), 6), selected=[top],
        tpsa=round(rdMolDescriptors.CalcTPSA(tm, includeSandP=True), 6), yield_pct=round(y, 6)))
    print(json.dumps(out))


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
    'acetylate_brominate': ['acetylation', 'bromination'],
    'dehalogenate_esterify': ['dehalogenation', 'esterification'],
    'methylate_hydrolyse': ['eschweiler_clarke', 'ester_hydrolysis'],
    'tbs_acetylate_deprotect': ['tbs_protection', 'acetylation', 'tbs_deprotection'],
}

def _fallback():
    out = dict(charge=0, crude_pct=100.0, fp_on=0, hba=0, hbd=0, isolated_pct=0.0, isolated_purity_pct=0.0,
               kept_pct=0.0, logp=0.0, mw=0.0, n_products=0, n_species=1, phase='none', products=[],
               purity_pct=0.0, qed=0.0, selected=[], tpsa=0.0, yield_pct=0.0)
    print(json.dumps(out))


if __name__ == '__main__':
    import io
    _buf = io.StringIO()
    _old = sys.stdout
    try:
        sys.stdout = _buf
        main()
        sys.stdout = _old
        sys.stdout.write(_buf.getvalue())
    except Exception:
        sys.stdout = _old
        import traceback
        traceback.print_exc(file=sys.stderr)
        _fallback()
