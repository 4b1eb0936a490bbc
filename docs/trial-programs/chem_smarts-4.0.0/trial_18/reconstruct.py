# Independent program: the final workspace of agent trial 18 of chem_smarts 4.0.0 at evidence level
# `outputs` with the cover (docs/trials.md), kept as the agent wrote it.
import sys, json, math
from rdkit import Chem, RDLogger
from rdkit.Chem import AllChem, Descriptors, Crippen, rdMolDescriptors, QED, Lipinski
from rdkit.Chem.MolStandardize import rdMolStandardize
from rdkit.Chem.EnumerateStereoisomers import EnumerateStereoisomers, StereoEnumerationOptions
RDLogger.DisableLog('rdApp.*')

LEVELS = [0.0, 0.6, 0.8, 0.95]
TIDX = {0: 0, 25: 1, 80: 2}
TBS = '[Si](C)(C)C(C)(C)C'
AMINE = '[NX3;H2,H1;!$(N[C,S,P]=[O,S,N]);!$(N[a]);!$(N-[N,O]);!$(N-C=[C,N]);!$(N#*)'
ARNH = '[NX3;H2,H1;!$(N[C,S,P]=[O,S,N]);$(N[a]);!$(N-[N,O])'
# (smarts, difficulty)
RULES = {
    'boc_protection': [(AMINE.replace('H2,H1', 'H2') + ':1]>>[N:1]C(=O)OC(C)(C)C', 0),
                       (AMINE.replace('H2,H1', 'H1') + ':1]>>[N:1]C(=O)OC(C)(C)C', 1),
                       (ARNH + ':1]>>[N:1]C(=O)OC(C)(C)C', 2)],
    'boc_deprotection': [('[N:1]C(=O)OC(C)(C)C>>[N:1]', 0)],
    'tbs_protection': [('[OX2H1;$(O[CX4H2]):1]>>[O:1]' + TBS, 0),
                       ('[OX2H1;$(O[CX4H1]),$(Oc):1]>>[O:1]' + TBS, 1),
                       ('[OX2H1;$(O[CX4H0]):1]>>[O:1]' + TBS, 2)],
    'tbs_deprotection': [('[O:1][Si](C)(C)C(C)(C)C>>[O:1]', 0)],
    'esterification': [('[CX3:1](=[O:2])[OX2H1]>>[C:1](=[O:2])OC', 1)],
    'amide_coupling': [('[CX3:1](=[O:2])[OX2H1]>>[C:1](=[O:2])NCc1ccccc1', 0)],
    'lialh4_reduction': [('[CX3:1](=O)[OX2:2][#6:3]>>([C:1]O.[O:2][#6:3])', 1),
                         ('[CX3:1](=O)[OX2H1]>>[C:1]O', 1),
                         ('[CX3;!$(C(=O)(N)N);!$(C(=O)N(C=O)):1](=O)[NX3:2]>>[C:1][N:2]', 2)],
    'nitro_reduction': [('[N+:1](=O)[O-]>>[N:1]', 1), ('[c:1][Br,I]>>[c:1]', 2)],
    'acetylation': [(AMINE + ':1]>>[N:1]C(C)=O', 0),
                    (ARNH + ':1]>>[N:1]C(C)=O', 1),
                    ('[OX2H1;$(O[CX4]):1]>>[O:1]C(C)=O', 2),
                    ('[OX2H1;$(Oc):1]>>[O:1]C(C)=O', 2)],
    'ester_hydrolysis': [('[CX3;!R:1](=[O:3])[OX2:2][c:4]>>([C:1](=[O:3])O.[O:2][c:4])', 0),
                         ('[CX3;!R:1](=[O:3])[OX2:2][#6:4]>>([C:1](=[O:3])O.[O:2][#6:4])', 1),
                         ('[CX3;R:1](=[O:3])[OX2;R:2][#6:4]>>([C:1](=[O:3])O.[O:2][#6:4])', 1)],
    'alcohol_oxidation': [('[CX4;H2;!$(C[CX4H1][OH]):1][OX2H1:2]>>[C:1]=[O:2]', 0),
                          ('[CX4;H1;!$(Cc):1][OX2H1:2]>>[C:1]=[O:2]', 0),
                          ('[CX4;H1;$(Cc):1][OX2H1:2]>>[C:1]=[O:2]', 1)],
    'over_oxidation': [('[CX3H1;$(C[#6]):1]=O>>[C:1](=O)O', 2)],
    'reductive_amination': [('[CX3H1;$(C[#6]):1]=O>>[C:1]N1CCOCC1', 0),
                            ('[CX3H0;$(C([#6])[#6]):1]=O>>[C:1]N1CCOCC1', 1)],
    'eschweiler_clarke': [('[NX3;H2;!$(N[C,S]=[O,S,N]);!$(Na):1]>>[N:1](C)C', 1),
                          ('[NX3;H1;!$(N[C,S]=[O,S,N]);!$(Na):1]>>[N:1]C', 2)],
    'aromatic_bromination': [('[cH;$(c1ccc([$([OX2;!$(OC=O);!$(O[Si])]),$([NX3;!$(NS(=O)=O);!$([N+])])])cc1);r6:1]>>[c:1]Br', 0),
                             ('[cH;$(c(:c[$([OX2;!$(OC=O);!$(O[Si])]),$([NX3;!$(NS(=O)=O);!$([N+])])]));r6:1]>>[c:1]Br', 1)],
    'dehalogenation': [('[c:1]Cl>>[c:1]', 2), ('[c:1][Br,I]>>[c:1]', 1)],
}
_rx = {}


def get_rules(name):
    if name not in _rx:
        _rx[name] = [(AllChem.ReactionFromSmarts(s), d) for s, d in RULES.get(name, [])]
    return _rx[name]


TE = None


def clean(m):
    global TE
    try:
        m = rdMolStandardize.Uncharger().uncharge(m)
    except Exception:
        pass
    return m


def prep(record, stereo):
    m = Chem.MolFromSmiles(record)
    m = rdMolStandardize.Cleanup(m)
    frags = Chem.GetMolFrags(m, asMols=True)
    m = max(frags, key=lambda f: (f.GetNumHeavyAtoms(), Chem.MolToSmiles(f)))
    try:
        m = rdMolStandardize.Uncharger().uncharge(m)
    except Exception:
        pass
    rw = Chem.RWMol(m)
    for at in rw.GetAtoms():
        if at.GetSymbol() == 'O' and at.GetFormalCharge() == -1 and any(
                nb.GetSymbol() == 'C' and any(b.GetBondTypeAsDouble() == 2 and b.GetOtherAtom(nb).GetSymbol() == 'O'
                                              for b in nb.GetBonds()) for nb in at.GetNeighbors()):
            at.SetFormalCharge(0)
            at.SetNumExplicitHs(1)
    m = rw.GetMol()
    Chem.SanitizeMol(m)
    try:
        cp = rdMolStandardize.CleanupParameters()
        cp.tautomerRemoveSp3Stereo = False
        cp.tautomerRemoveBondStereo = False
        m = rdMolStandardize.TautomerEnumerator(cp).Canonicalize(m)
    except Exception:
        pass
    if stereo == 'strip':
        Chem.RemoveStereochemistry(m)
    return Chem.MolToSmiles(m)


def find_sites(m, rules, p_of):
    sites = {}
    for ri, (r, d) in enumerate(rules):
        tmpl = r.GetReactantTemplate(0)
        anchor_q = None
        for qa in tmpl.GetAtoms():
            if qa.GetAtomMapNum() == 1:
                anchor_q = qa.GetIdx()
        for mt in m.GetSubstructMatches(tmpl):
            a = m.GetAtomWithIdx(mt[anchor_q]).GetIntProp('orig')
            if a not in sites:
                sites[a] = (ri, p_of(d))
    return sites


def apply_at(m, rxn, anchor):
    for ps in rxn.RunReactants((m,)):
        hit = False
        for p in ps:
            for a in p.GetAtoms():
                if a.HasProp('old_mapno') and a.GetIntProp('old_mapno') == 1:
                    ra = m.GetAtomWithIdx(a.GetIntProp('react_atom_idx'))
                    if ra.GetIntProp('orig') == anchor:
                        hit = True
        if not hit:
            continue
        out = []
        try:
            for p in ps:
                for a in p.GetAtoms():
                    if not a.HasProp('orig'):
                        if a.HasProp('react_atom_idx'):
                            a.SetIntProp('orig', m.GetAtomWithIdx(a.GetIntProp('react_atom_idx')).GetIntProp('orig'))
                        else:
                            a.SetIntProp('orig', -1)
                for a in p.GetAtoms():
                    if a.HasProp('old_mapno') and not a.GetIsAromatic():
                        a.SetNumExplicitHs(0)
                        a.SetNoImplicit(False)
                Chem.SanitizeMol(p)
                for fr in Chem.GetMolFrags(p, asMols=True, sanitizeFrags=False):
                    out.append(fr)
        except Exception:
            continue
        return out
    return None


def react(smi, rules, p_of, eq):
    m = Chem.MolFromSmiles(smi)
    for a in m.GetAtoms():
        a.SetIntProp('orig', a.GetIdx())
    sites = find_sites(m, rules, p_of)
    sites = {a: v for a, v in sites.items() if v[1] > 0}
    if not sites:
        return {smi: 1.0}
    keys = sorted(sites)
    n = len(keys)
    # sequential model: k-site level fraction p1..pk*(1-p_{k+1}); top-k most reactive sites
    from itertools import combinations
    ps = sorted((sites[k][1] for k in keys), reverse=True)
    kmax = min(eq, n)
    probs = {0: 1 - ps[0]}
    acc = 1.0
    for k in range(1, kmax + 1):
        acc *= ps[k - 1]
        lev = acc * ((1 - ps[k]) if k < kmax else 1.0)
        target = sorted(ps[:k])
        subs = [c for c in combinations(range(n), k)
                if sorted(sites[keys[i]][1] for i in c) == target]
        for c in subs:
            mask = 0
            for i in c:
                mask |= 1 << i
            probs[mask] = probs.get(mask, 0) + lev / len(subs)
    dist = {}
    for mask, pr in probs.items():
        if pr <= 0:
            continue
        frags = [m]
        for i, k in enumerate(keys):
            if not mask >> i & 1:
                continue
            rxn = rules[sites[k][0]][0]
            # find fragment holding anchor
            done = False
            for fi, fm in enumerate(frags):
                if any(a.GetIntProp('orig') == k for a in fm.GetAtoms()):
                    res = apply_at(fm, rxn, k)
                    if res is not None:
                        frags = frags[:fi] + res + frags[fi + 1:]
                    done = True
                    break
        for fm in frags:
            try:
                s = Chem.MolToSmiles(fm)
                s = Chem.MolToSmiles(clean(Chem.MolFromSmiles(s)))
            except Exception:
                continue
            dist[s] = dist.get(s, 0) + pr
    return dist


def is_byproduct(smi):
    m = Chem.MolFromSmiles(smi)
    return m.GetNumHeavyAtoms() <= 6


def enum_stereo(smi):
    m = Chem.MolFromSmiles(smi)
    opts = StereoEnumerationOptions(onlyUnassigned=True, unique=True, maxIsomers=64)
    try:
        isos = [Chem.MolToSmiles(x) for x in EnumerateStereoisomers(m, options=opts)]
    except Exception:
        isos = [smi]
    return isos or [smi]


# ---------------- pKa model -----------------
ACIDS = [('[CX3](=O)[OX2H1]', 3.5), ('[SX4](=O)(=O)[OX2H1]', 1.0), ('[c,$(C=C)][OX2H1]', 9.5),
         ('[SX4](=O)(=O)[NX3H1][a]', 6.5), ('[SX4](=O)(=O)[NX3H2]', 9.9)]
BASES = [('[NX3;$(N1CCOCC1);!$(N[a]);!$(N[C,S,P]=[O,S,N])]', 6.5),
         ('[NX3;H2,H1,H0;!$(N[a]);!$(N[C,S,P]=[O,S,N]);!$(N-[N,O,S]);!$(N-C=[C,N]);!$(N#*);!$([N+])]', 9.8),
         ('[NX3;H2,H1,H0;$(N([a])[!a]);!$(N([a])[a]);!$(N[C,S,P]=[O,S,N]);!$(N-[N,O,S]);!$(N(C=O))]', 4.6),
         ('[NX3H2;$(N[a])]', 4.6),
         ('[nX2;r6;!$(n[n,o,s]);!$(n:c=O)]', 5.2)]
_pat = {}


def pat(s):
    if s not in _pat:
        _pat[s] = Chem.MolFromSmarts(s)
    return _pat[s]


def ion_groups(m):
    acids, bases = [], []
    used = set()
    for s, pk in ACIDS:
        for mt in m.GetSubstructMatches(pat(s)):
            key = None
            for i in mt:
                at = m.GetAtomWithIdx(i)
                if at.GetSymbol() in ('O', 'N') and at.GetTotalNumHs() > 0:
                    key = i
                    break
            if key is None:
                key = mt[0]
            if key in used:
                continue
            used.add(key)
            acids.append(pk)
    for s, pk in BASES:
        for mt in m.GetSubstructMatches(pat(s)):
            if mt[0] in used:
                continue
            used.add(mt[0])
            bases.append(pk)
    perm = sum(1 for a in m.GetAtoms() if a.GetFormalCharge() > 0 and a.GetSymbol() == 'N'
               and a.GetTotalNumHs() == 0 and not any(nb.GetFormalCharge() < 0 for nb in a.GetNeighbors()))
    return acids, bases, perm


def charge_at(m, ph):
    acids, bases, perm = ion_groups(m)
    c = perm
    for pk in acids:
        if ph > pk:
            c -= 1
    for pk in bases:
        if ph < pk:
            c += 1
    return c


def frac_neutral(m, ph):
    acids, bases, perm = ion_groups(m)
    if perm:
        return 0.0
    lf = 0.0
    for pk in acids:
        lf -= math.log10(1.0 + 10 ** (ph - pk))
    for pk in bases:
        lf -= math.log10(1.0 + 10 ** (pk - ph))
    return lf


def logd(smi, ph):
    m = Chem.MolFromSmiles(smi)
    lp = Crippen.MolLogP(m)
    lf = frac_neutral(m, ph)
    if lf == 0.0 and ion_groups(m)[2]:
        return -50.0
    return lp + lf


def phase_of(smi, ph):
    m = Chem.MolFromSmiles(smi)
    acids, bases, perm = ion_groups(m)
    if perm or any(ph > pk for pk in acids) or any(ph < pk for pk in bases):
        return 'aqueous'
    return 'organic' if logd(smi, ph) >= 0 else 'aqueous'


def org_frac_once(smi, ph):
    ld = logd(smi, ph)
    D = 10 ** max(min(ld, 50), -50)
    return D / (1 + D)


def run(params):
    case = params['case']
    route, record = case.split(':', 1)
    route = route.strip()
    record = record.strip()
    eq = int(params['equivalents'])
    T = int(params['temperature'])
    maxp = int(params['max_products'])
    stereo = params['stereochemistry']
    ph = float(params['workup_ph'])
    rad = int(params['fingerprint_radius'])

    steps = route_steps(route)
    start = prep(record, stereo)
    mix = {start: 100.0}
    for si, st in enumerate(steps):
        p_of = lambda d: LEVELS[max(0, TIDX[T] + 1 - d)]
        passes = [st] + (['over_oxidation'] if st == 'alcohol_oxidation' else [])
        new = dict(mix)
        n_alc = 0
        if st == 'alcohol_oxidation':
            n_alc = max([len(Chem.MolFromSmiles(x).GetSubstructMatches(pat('[CX4;H1,H2][OX2H1]'))) for x in mix] + [0])
        for ps_name in passes:
            rules = get_rules(ps_name)
            cur, new = new, {}
            for smi, amt in cur.items():
                eq_use = eq
                if ps_name == 'over_oxidation':
                    eq_use = eq - n_alc
                    if eq_use <= 0:
                        new[smi] = new.get(smi, 0) + amt
                        continue
                d = react(smi, rules, p_of, eq_use)
                for s, f in d.items():
                    if s != smi and is_byproduct(s):
                        continue
                    if s != smi and s not in cur and stereo == 'enumerate':
                        isos = enum_stereo(s)
                        for i in isos:
                            new[i] = new.get(i, 0) + amt * f / len(isos)
                    else:
                        if stereo == 'strip':
                            mm = Chem.MolFromSmiles(s)
                            Chem.RemoveStereochemistry(mm)
                            s = Chem.MolToSmiles(mm)
                        new[s] = new.get(s, 0) + amt * f
        new = {k: v for k, v in new.items() if v > 1e-9}
        items = sorted(new.items(), key=lambda kv: (-kv[1], kv[0]))
        if si < len(steps) - 1:
            items = items[:maxp]
        mix = dict(items)
    crude = sum(mix.values())
    n_species = len(mix)
    prods = [(s, a) for s, a in sorted(mix.items(), key=lambda kv: (-kv[1], kv[0])) if s != start]
    if prods:
        ph_top = phase_of(prods[0][0], ph)
        prods = [x for x in prods if phase_of(x[0], ph) == ph_top]
    prods = prods[:maxp]
    out = {}
    if not prods:
        out.update(dict(charge=0, crude_pct=round(crude, 6), fp_on=0, hba=0, hbd=0, isolated_pct=0.0,
                        isolated_purity_pct=0.0, kept_pct=0.0, logp=0.0, mw=0.0, n_products=0,
                        n_species=n_species, phase='none', products=[], purity_pct=0.0, qed=0.0,
                        selected=[], tpsa=0.0, yield_pct=0.0))
        return out
    top, yld = prods[0]
    tm = Chem.MolFromSmiles(top)
    phase = phase_of(top, ph)
    tot_phase = 0.0
    iso_tot = 0.0
    iso_top = 0.0
    for s, a in mix.items():
        if phase_of(s, ph) == phase:
            tot_phase += a
        f = org_frac_once(s, ph)
        aq3 = (1 - f) ** 3
        fi = (1 - aq3) if phase == 'organic' else aq3
        iso_tot += a * fi
        if s == top:
            iso_top = a * fi
    purity = 100.0 * yld / tot_phase if tot_phase > 0 else 0.0
    ipur = 100.0 * iso_top / iso_tot if iso_tot > 0 else 0.0
    fp = AllChem.GetMorganFingerprintAsBitVect(tm, rad, nBits=1024)
    try:
        q = QED.qed(tm)
    except Exception:
        q = 0.0
    out.update(dict(
        charge=int(charge_at(tm, ph)), crude_pct=round(crude, 6), fp_on=int(fp.GetNumOnBits()),
        hba=int(rdMolDescriptors.CalcNumLipinskiHBA(tm)), hbd=int(rdMolDescriptors.CalcNumLipinskiHBD(tm)),
        isolated_pct=round(iso_top, 6), isolated_purity_pct=round(ipur, 6), kept_pct=round(iso_tot, 6),
        logp=round(Crippen.MolLogP(tm), 5), mw=round(Descriptors.MolWt(tm), 3), n_products=len(prods),
        n_species=n_species, phase=phase, products=[s for s, _ in prods], purity_pct=round(purity, 6),
        qed=round(q, 6), selected=[top], tpsa=round(rdMolDescriptors.CalcTPSA(tm, includeSandP=True), 2),
        yield_pct=round(yld, 6)))
    return out


STEPMAP = {
    'boc': None, 'tbs': None, 'esterify': 'esterification', 'couple': 'amide_coupling',
    'acetylate': 'acetylation', 'hydrolyse': 'ester_hydrolysis', 'oxidise': 'alcohol_oxidation',
    'aminate': 'reductive_amination', 'methylate': 'eschweiler_clarke', 'brominate': 'aromatic_bromination',
    'dehalogenate': 'dehalogenation',
}


def route_steps(route):
    parts = route.split('_')
    out = []
    i = 0
    while i < len(parts):
        w = parts[i]
        last = (i == len(parts) - 1)
        if w in ('boc', 'tbs'):
            out.append(w + ('_deprotection' if last and i > 0 else '_protection'))
        elif w == 'deprotect':
            out.append(out[0].replace('_protection', '_deprotection'))
        elif w == 'nitro' and i + 1 < len(parts) and parts[i + 1] == 'reduce':
            out.append('nitro_reduction')
            i += 1
        elif w == 'reduce':
            out.append('lialh4_reduction')
        else:
            out.append(STEPMAP.get(w, w))
        i += 1
    return out


def main():
    data = json.load(sys.stdin)
    params = data.get('parameters', {})
    try:
        out = run(params)
    except Exception as e:
        print(repr(e), file=sys.stderr)
        out = dict(charge=0, crude_pct=100.0, fp_on=0, hba=0, hbd=0, isolated_pct=0.0,
                   isolated_purity_pct=0.0, kept_pct=0.0, logp=0.0, mw=0.0, n_products=0,
                   n_species=1, phase='none', products=[], purity_pct=0.0, qed=0.0,
                   selected=[], tpsa=0.0, yield_pct=0.0)
    print(json.dumps(out))


if __name__ == '__main__':
    main()
