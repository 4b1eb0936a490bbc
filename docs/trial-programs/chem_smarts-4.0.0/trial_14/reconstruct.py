# Independent program: the final workspace of agent trial 14 of chem_smarts 4.0.0 at the default
# evidence level (docs/trials.md), kept as the agent wrote it.
import sys, json, math, os
DEBUG = os.environ.get('DEBUG')
from rdkit import Chem, RDLogger
from rdkit.Chem import AllChem, Descriptors, Crippen, rdMolDescriptors, QED
from rdkit.Chem.MolStandardize import rdMolStandardize
from rdkit.Chem.EnumerateStereoisomers import EnumerateStereoisomers, StereoEnumerationOptions
RDLogger.DisableLog('rdApp.*')

LV = [0.0, 0.6, 0.8, 0.95]
TIDX = {0: 0, 25: 1, 80: 2}

AMINE = '[NX3;H2,H1;!$(N-[C,S,P]=[O,S,N]);!$(N-a);!$(N-[#6]=[#6]);!$(N-S);!$(N-O);!$(N-N)]'
ANILINE = '[NX3;H2;$(N-c);!$(N-[C,S]=[O,S,N])]'
BOC = 'C(=O)OC(C)(C)C'
TBS = '[Si](C)(C)C(C)(C)C'
ACT = '[OX2,NX3;!$([N+]);!$(N=O);!$(N~[O-]);!$(N-S)]'

# transformation -> list of (rxn smarts, base offset); first matching rule per molecule per pass
RULES = {
    'boc_protection': [('%s>>[N:1]%s' % (AMINE[:-1] + ';H2:1]', BOC), 1),
                       ('%s>>[N:1]%s' % (AMINE[:-1] + ';H1:1]', BOC), 0)],
    'boc_deprotection': [('[N:1]C(=O)OC(C)(C)C>>[N:1]', 1)],
    'tbs_protection': [('[CH2:1][OX2H1:2]>>[CH2:1][O:2]' + TBS, 1),
                       ('[c;$(c:[cH]):1][OX2H1:2]>>[c:1][O:2]' + TBS, 0),
                       ('[CX4H1;$(C([OX2H1])([#6])[#6]):1][OX2H1:2]>>[C:1][O:2]' + TBS, -1)],
    'tbs_deprotection': [('[O:1][Si](C)(C)C(C)(C)C>>[O:1]', 1)],
    'esterification': [('[CX3:1](=[O:2])[OX2H1,OX1-]>>[C:1](=[O:2])OC', 0)],
    'amide_coupling': [('[CX3:1](=[O:2])[OX2H1,OX1-]>>[C:1](=[O:2])NCc1ccccc1', 1)],
    'lialh4_reduction': [('[CX3;$(C-[#6]):1](=O)[OX2H1]>>[CH2:1][OH]', 0),
                         ('[CX3;$(C-[#6]):1](=O)[OX2][#6:3]>>([CH2:1][OH].[#6:3][OH])', 0)],
    'nitro_reduction': [('[c,C:1][N+](=O)[O-]>>[*:1]N', 0),
                        ('[c:1]Br>>[c:1]', -1)],
    'acetylation': [('%s>>[N:1]C(C)=O' % (AMINE[:-1] + ':1]'), 1),
                    ('%s>>[N:1]C(C)=O' % (ANILINE[:-1] + ':1]'), 0),
                    ('[CH2:1][OX2H1:2]>>[CH2:1][O:2]C(C)=O', 0),
                    ('[CX4H1:1][OX2H1:2]>>[C:1][O:2]C(C)=O || [c:1][OX2H1:2]>>[c:1][O:2]C(C)=O', -1)],
    'alcohol_oxidation': [('[CX4H2;$(C([OX2H1])[#6]):1][OX2H1]>>[CH1:1]=O', 1),
                          ('[CX4H1;$(C([OX2H1])([#6])[#6]):1][OX2H1]>>[C:1]=O', 0),
                          ('[CH1;$(C-[#6]):1]=[O:2]>>[C:1](=[O:2])O', -1)],
    'reductive_amination': [('[CH1;$(C-[#6]):1]=[OX1]>>[CH2:1]N1CCOCC1', 1),
                            ('[CX3;$(C(-[#6])-[#6]):1]=[OX1]>>[CH1:1]N1CCOCC1', 0)],
    'eschweiler_clarke': [('[NX3;H2;!$(N-[C,S,P]=[O,S,N]);!$(N-a);!$(N-S):1]>>[N:1](C)C', 0),
                          ('[NX3;H1;!$(N-[C,S,P]=[O,S,N]);!$(N-a);!$(N-S):1]>>[N:1]C', -1)],
    'ester_hydrolysis': [('[CX3:1](=[O:2])[OX2][c:3]>>([C:1](=[O:2])O.[c:3]O)', 1),
                         ('[CX3:1](=[O:2])[OX2][CX4:3]>>([C:1](=[O:2])O.[C:3]O)', 0)],
    'dehalogenation': [('[c:1]Br>>[c:1]', 0), ('[c:1]Cl>>[c:1]', -1)],
    'aromatic_bromination': [('[cH;$(c1:c:c:c(-%s):c:c:1):1]>>[c:1]Br' % ACT, 1),
                             ('[cH;$(c:c-%s):1]>>[c:1]Br' % ACT, 0)],
}
_RXN = {}
DESTROY_AMINE = ('amide_coupling', 'alcohol_oxidation')
_FREEAMINE = Chem.MolFromSmarts(AMINE)


def rxns(name):
    if name not in _RXN:
        _RXN[name] = [([AllChem.ReactionFromSmarts(x.strip()) for x in s.split('||')], b) for s, b in RULES[name]]
    return _RXN[name]


_TP = rdMolStandardize.CleanupParameters()
if os.environ.get('KEEPSP3', '1') == '1':
    try:
        _TP.tautomerRemoveSp3Stereo = False
    except Exception:
        pass
_TE = rdMolStandardize.TautomerEnumerator(_TP)
_UN = rdMolStandardize.Uncharger()
MINHEAVY = 6
TAUTMODE = os.environ.get('TAUTMODE', 'all')


def _narom(x):
    return sum(1 for a in x.GetAtoms() if a.GetIsAromatic())


def clean(m, strip, prep=False):
    try:
        m = Chem.Mol(m)
        Chem.SanitizeMol(m)
        m = _UN.uncharge(m)
        try:
            t = _TE.Canonicalize(m)
            if Chem.MolToSmiles(t, isomericSmiles=False) != Chem.MolToSmiles(m, isomericSmiles=False):
                if prep or TAUTMODE == 'all' or _narom(t) > _narom(m):
                    m = t
        except Exception:
            pass
        if strip:
            Chem.RemoveStereochemistry(m)
        smi = Chem.MolToSmiles(m)
        m2 = Chem.MolFromSmiles(smi)
        if m2 is None:
            return None
        return Chem.MolToSmiles(m2)
    except Exception:
        return None


def prepare(record, strip):
    m = Chem.MolFromSmiles(record)
    m = rdMolStandardize.Cleanup(m)
    frags = Chem.GetMolFrags(m, asMols=True)
    m = max(frags, key=lambda f: (f.GetNumHeavyAtoms(), Descriptors.MolWt(f)))
    return clean(m, strip, prep=True)


def react_once(smi, name):
    m = Chem.MolFromSmiles(smi)
    for rxnl, base in rxns(name):
        prods = []
        for rxn in rxnl:
            prods.extend(rxn.RunReactants((m,)))
        if not prods:
            continue
        out = []
        for ps in prods:
            frags = []
            for p in ps:
                try:
                    pm = Chem.RWMol(p)
                    for at in pm.GetAtoms():
                        if at.HasProp('old_mapno') and not at.GetIsAromatic() and at.GetFormalCharge() == 0:
                            at.SetNumExplicitHs(0)
                            at.SetNoImplicit(False)
                    Chem.SanitizeMol(pm)
                    Chem.AssignStereochemistry(pm, cleanIt=True, force=True)
                    pm = Chem.MolFromSmiles(Chem.MolToSmiles(pm))
                    if pm is None:
                        continue
                    for f in Chem.GetMolFrags(pm, asMols=True):
                        frags.append(f)
                except Exception:
                    continue
            if not frags:
                continue
            out.append(frags)
        if out:
            return out, base
    return None, None


def enum_stereo(smi):
    m = Chem.MolFromSmiles(smi)
    try:
        opts = StereoEnumerationOptions(onlyUnassigned=True, unique=True)
        isos = list(EnumerateStereoisomers(m, options=opts))
        res = []
        for x in isos:
            s = Chem.MolToSmiles(x)
            if s not in res:
                res.append(s)
        return res or [smi]
    except Exception:
        return [smi]


def run_step(species, name, T, eq, stereo):
    strip = stereo == 'strip'
    result = {}
    def add(s, a):
        result[s] = result.get(s, 0.0) + a
    for smi, amt in species.items():
        if name in DESTROY_AMINE and Chem.MolFromSmiles(smi).HasSubstructMatch(_FREEAMINE):
            continue
        current = {smi: amt}
        for p in range(eq):
            nxt = {}
            for s, a in current.items():
                outs, base = react_once(s, name)
                if outs is None:
                    add(s, a)
                    continue
                idx = TIDX[T] + base
                c = LV[max(0, min(3, idx))]
                if c <= 0:
                    add(s, a)
                    continue
                add(s, a * (1 - c))
                # distinct main products
                prodsets = []
                for frags in outs:
                    keep = []
                    for f in frags:
                        if f.GetNumHeavyAtoms() >= MINHEAVY:
                            cs = clean(f, strip)
                            if cs:
                                keep.append(cs)
                    if not keep:
                        continue
                    key = tuple(sorted(keep))
                    if key not in prodsets:
                        prodsets.append(key)
                if not prodsets:
                    add(s, a * c)
                    continue
                share = a * c / len(prodsets)
                for key in prodsets:
                    for ps in key:
                        if stereo == 'enumerate':
                            isos = enum_stereo(ps)
                            for iso in isos:
                                nxt[iso] = nxt.get(iso, 0.0) + share / len(isos)
                        else:
                            nxt[ps] = nxt.get(ps, 0.0) + share
            current = nxt
            if not current:
                break
        for s, a in current.items():
            add(s, a)
    return result


# ---------------- pKa model ----------------
PKA = [
    ('[CX3](=O)[OX2H1]', 3.5, 'a'),
    ('[CX3](=O)[OX1-]', 3.5, 'a'),
    ('[c,$(C=C)][OX2H1]', 9.5, 'a'),
    ('[SX4](=O)(=O)[NX3H1]a', 6.5, 'a'),
    ('[SX4](=O)(=O)[NX3H2]', 9.9, 'a'),
    ('[NX3;H0;R;$(N1CCOCC1)]', 6.5, 'b'),
    ('[NX3;H2,H1,H0;!$(N-[C,S,P]=[O,S,N]);!$(N-a);!$(N-[#6]=[#6,#7]);!$(N-S);!$(N-O);!$(N#*);!$(N=*)]', 9.8, 'b'),
    ('[NX3;H2,H1;$(N-c);!$(N-[C,S]=[O,S,N]);!$(N-S)]', 4.6, 'b'),
    ('[nX2;r6]', 5.2, 'b'),
]
_PKA = [(Chem.MolFromSmarts(s), k, t) for s, k, t in PKA]


def sites(m):
    used = set()
    out = []
    for patt, k, t in _PKA:
        for match in m.GetSubstructMatches(patt):
            a = match[-1] if t == 'a' else match[0]
            if t == 'a' and patt.GetNumAtoms() > 1:
                # acidic atom is the O/N (last atom in pattern with H)
                a = [i for i in match if m.GetAtomWithIdx(i).GetSymbol() in 'ON'][-1]
            if a in used:
                continue
            used.add(a)
            out.append((k, t))
    return out


def neutral_fraction(m, ph):
    lf = 0.0
    for k, t in sites(m):
        if t == 'a':
            lf += math.log10(1 + 10 ** (ph - k))
        else:
            lf += math.log10(1 + 10 ** (k - ph))
    return lf


def n_ionized(m, ph):
    n = 0
    for k, t in sites(m):
        if (t == 'a' and ph > k) or (t == 'b' and ph < k):
            n += 1
    return n


def charge_at(m, ph):
    q = 0
    formal = 0
    for a in m.GetAtoms():
        formal += a.GetFormalCharge()
    for k, t in sites(m):
        if t == 'a' and ph > k:
            q -= 1
        elif t == 'b' and ph < k:
            q += 1
    return formal + q


def logD(m, ph):
    lp = Crippen.MolLogP(m)
    if any(a.GetFormalCharge() != 0 for a in m.GetAtoms()) and Chem.GetFormalCharge(m) != 0:
        return -99.0
    return lp - neutral_fraction(m, ph)


def phase_of(s, ph):
    m = Chem.MolFromSmiles(s)
    if charge_at(m, ph) != 0 or n_ionized(m, ph) > 0:
        return 'aqueous'
    return 'organic' if Crippen.MolLogP(m) > 0 else 'aqueous'


_MWC = {}


def _mw(s):
    if s not in _MWC:
        _MWC[s] = Descriptors.MolWt(Chem.MolFromSmiles(s))
    return _MWC[s]


def _lp(s):
    return Crippen.MolLogP(Chem.MolFromSmiles(s))


def SORTKEY(kv):
    if TIEMODE == 'smiles':
        return (-round(kv[1], 7), -round(_mw(kv[0]), 3), kv[0])
    if TIEMODE == 'logp':
        return (-round(kv[1], 7), -round(_lp(kv[0]), 4), kv[0])
    if TIEMODE == 'logpr':
        return (-round(kv[1], 7), round(_lp(kv[0]), 4), kv[0])
    if TIEMODE == 'insert':
        return (-round(kv[1], 7), -round(_mw(kv[0]), 3))
    return -kv[1]
TIEMODE = os.environ.get('TIEMODE', 'logp')


def main():
    sc = json.load(sys.stdin)
    P = sc['parameters']
    route, record = P['case'].split(': ', 1)
    eq = int(P['equivalents']); T = int(P['temperature']); mp = int(P['max_products'])
    stereo = P['stereochemistry']; ph = float(P['workup_ph']); rad = int(P['fingerprint_radius'])
    trans = ROUTES[route]
    strip = stereo == 'strip'
    sm = prepare(record, strip)
    species = {sm: 100.0}
    for i, t in enumerate(trans):
        res = run_step(species, t, T, eq, stereo)
        res = {k: v for k, v in res.items() if v > 1e-9}
        items = sorted(res.items(), key=SORTKEY)
        if i < len(trans) - 1:
            items = items[:mp]
        species = dict(items)
    crude = sum(species.values())
    if DEBUG:
        from rdkit.Chem import Descriptors as _D
        for s_, a_ in sorted(species.items(), key=lambda kv: -kv[1]):
            m_ = Chem.MolFromSmiles(s_)
            mz = _D.ExactMolWt(m_) + (1.007276 if Chem.GetFormalCharge(m_) <= 0 else 0)
            sys.stderr.write('  %7.3f %6.1f %-8s %s%s\n' % (a_, mz, phase_of(s_, ph), s_, ' SM' if s_ == sm else ''))
    nsp = len(species)
    info = {}
    for s, a in species.items():
        m = Chem.MolFromSmiles(s)
        d = logD(m, ph)
        info[s] = (a, d)
    prod_amt = {'organic': 0.0, 'aqueous': 0.0}
    for s, (a, d) in info.items():
        if s == sm:
            continue
        prod_amt[phase_of(s, ph)] += a
    out = dict(charge=0, crude_pct=round(crude, 6), fp_on=0, hba=0, hbd=0, isolated_pct=0.0,
               isolated_purity_pct=0.0, kept_pct=0.0, logp=0.0, mw=0.0, n_products=0,
               n_species=nsp, phase='none', products=[], purity_pct=0.0, qed=0.0,
               selected=[], tpsa=0.0, yield_pct=0.0)
    if prod_amt['organic'] + prod_amt['aqueous'] <= 0:
        print(json.dumps(out)); return
    phase = 'organic' if prod_amt['organic'] >= prod_amt['aqueous'] else 'aqueous'
    inphase = {s: v for s, v in info.items() if phase_of(s, ph) == phase}
    prods = sorted([(a, s) for s, (a, d) in inphase.items() if s != sm], key=lambda x: SORTKEY((x[1], x[0])))[:mp]
    top_a, top = prods[0]
    tot = sum(v[0] for v in inphase.values())
    # isolation
    kept = 0.0; iso_top = 0.0
    for s, (a, d) in info.items():
        D = 10 ** d if d > -50 else 0.0
        r = (1.0 / (1.0 + D)) ** 3
        f = (1 - r) if phase == 'organic' else r
        kept += a * f
        if s == top:
            iso_top = a * f
    m = Chem.MolFromSmiles(top)
    fp = AllChem.GetMorganFingerprintAsBitVect(m, rad, nBits=1024)
    out.update(charge=charge_at(m, ph), fp_on=fp.GetNumOnBits(), hba=rdMolDescriptors.CalcNumLipinskiHBA(m),
               hbd=rdMolDescriptors.CalcNumLipinskiHBD(m), isolated_pct=round(iso_top, 6),
               isolated_purity_pct=round(100 * iso_top / kept, 6) if kept > 0 else 0.0,
               kept_pct=round(kept, 6), logp=round(Crippen.MolLogP(m), 5), mw=round(Descriptors.MolWt(m), 3),
               n_products=len(prods), phase=phase, products=[s for a, s in prods],
               purity_pct=round(100 * top_a / tot, 6), qed=round(QED.qed(m), 6), selected=[top],
               tpsa=round(rdMolDescriptors.CalcTPSA(m, includeSandP=True), 2), yield_pct=round(top_a, 6))
    print(json.dumps(out))


ROUTES = {
    'oxidise_aminate': ['alcohol_oxidation', 'reductive_amination'],
    'tbs_oxidise_deprotect': ['tbs_protection', 'alcohol_oxidation', 'tbs_deprotection'],
    'boc_couple_deprotect': ['boc_protection', 'amide_coupling', 'boc_deprotection'],
    'acetylate_brominate': ['acetylation', 'aromatic_bromination'],
    'couple_reduce': ['amide_coupling', 'lialh4_reduction'],
    'tbs_acetylate_deprotect': ['tbs_protection', 'acetylation', 'tbs_deprotection'],
    'esterify_reduce': ['esterification', 'lialh4_reduction'],
    'methylate_hydrolyse': ['eschweiler_clarke', 'ester_hydrolysis'],
    'boc_esterify_deprotect': ['boc_protection', 'esterification', 'boc_deprotection'],
    'hydrolyse_couple': ['ester_hydrolysis', 'amide_coupling'],
    'nitro_reduce_acetylate': ['nitro_reduction', 'acetylation'],
    'dehalogenate_esterify': ['dehalogenation', 'esterification'],
    'boc_oxidise_deprotect': ['boc_protection', 'alcohol_oxidation', 'boc_deprotection'],
}

if __name__ == '__main__':
    try:
        main()
    except Exception:
        import traceback
        traceback.print_exc()
        print(json.dumps(dict(charge=0, crude_pct=0.0, fp_on=0, hba=0, hbd=0, isolated_pct=0.0,
                              isolated_purity_pct=0.0, kept_pct=0.0, logp=0.0, mw=0.0, n_products=0,
                              n_species=0, phase='none', products=[], purity_pct=0.0, qed=0.0,
                              selected=[], tpsa=0.0, yield_pct=0.0)))
