"""Built-in oracle `pdb_ensemble`: fit, fluctuation, core, medoid and contacts of an NMR-like
ensemble in PDB format, computed with gemmi."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from recon import Bool, Choice, Evidence, Float, Int, Integer, Number, Seed, SequenceOf, SetOf, Text, oracle

MAINCHAIN = ("N", "CA", "C", "O")
MIN_CORE = 4
HBOND_SPAN = 4


def make_inputs(params: dict[str, Any], directory: Path) -> None:
    """Write ensemble.pdb."""
    from .synth import build

    (Path(directory) / "ensemble.pdb").write_text(build(params), encoding="ascii")


def _label(res: Any) -> str:
    return str(res.seqid).strip()


def analyse(params: dict[str, Any], path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The workflow in gemmi; returns the outputs and the per-stage details."""
    import gemmi
    import numpy as np

    sel = {"CA": gemmi.SupSelect.CaP, "mainchain": gemmi.SupSelect.MainChain,
           "all": gemmi.SupSelect.All}[params["selection"]]
    peptide = gemmi.PolymerType.PeptideL
    st = gemmi.read_structure(str(path))
    st.setup_entities()
    chain = st[0][0].name
    n_models = len(st)

    def poly(k: int) -> Any:
        return st[k][chain].get_polymer()

    ref = poly(0)
    n_res = len(ref)
    labels = [_label(r) for r in ref]

    # stage 2: fit every model onto the first (trimmed, gemmi's pairing)
    fits = []
    for k in range(1, n_models):
        raw = gemmi.calculate_superposition(ref, poly(k), peptide, sel)
        sup = gemmi.calculate_superposition(ref, poly(k), peptide, sel, int(params["trim_cycles"]),
                                            float(params["trim_cutoff"]))
        st[k].transform_pos_and_adp(sup.transform)
        fits.append({"model": st[k].num, "pairs": raw.count, "kept": sup.count, "rmsd": sup.rmsd})

    # stage 3: CA fluctuation about the mean over the fitted models
    rmsf: list[float | None] = []
    for i in range(n_res):
        pts = [ca.pos.tolist() for ca in (poly(k)[i].get_ca() for k in range(n_models)) if ca is not None]
        if len(pts) >= 2:
            arr = np.array(pts)
            rmsf.append(float(np.sqrt(((arr - arr.mean(0)) ** 2).sum(1).mean())))
        else:
            rmsf.append(None)
    valid = [i for i in range(n_res) if rmsf[i] is not None]

    # stage 4: the core
    core = [i for i in valid if rmsf[i] <= float(params["core_cutoff"])]  # type: ignore[operator]
    if len(core) < MIN_CORE:
        core = sorted(sorted(valid, key=lambda i: (rmsf[i], i))[:MIN_CORE])

    def core_pairs(a: int, b: int) -> tuple[list[Any], list[Any], list[float]]:
        pa, pb = poly(a), poly(b)
        p1, p2, w = [], [], []
        for i in core:
            for name in MAINCHAIN:
                x = pa[i].find_atom(name, "*")
                y = pb[i].find_atom(name, "*")
                if x is not None and y is not None:
                    p1.append(x.pos)
                    p2.append(y.pos)
                    w.append(x.occ * y.occ)
        return p1, p2, w

    # stage 5: occupancy-weighted refit on the core, then the medoid
    for k in range(1, n_models):
        p1, p2, w = core_pairs(0, k)
        sup = gemmi.superpose_positions(p1, p2, w)
        st[k].transform_pos_and_adp(sup.transform)
        fits[k - 1].update(core_pairs=len(p1), core_weight=float(sum(w)), core_rmsd=sup.rmsd)
    pair = np.zeros((n_models, n_models))
    for a in range(n_models):
        for b in range(a + 1, n_models):
            pair[a, b] = pair[b, a] = gemmi.superpose_positions(*core_pairs(a, b)).rmsd
    mean = pair.sum(1) / (n_models - 1)
    med = int(np.argmin(mean))

    # stage 6: contacts in the medoid
    model = st[med]
    ns = gemmi.NeighborSearch(model, st.cell, 5.0).populate(include_h=False)
    cs = gemmi.ContactSearch(float(params["contact_cutoff"]))
    cs.ignore = gemmi.ContactSearch.Ignore.AdjacentResidues
    found = cs.find_contacts(ns)
    mpoly = model[chain].get_polymer()
    index = {(_label(r), r.name): i for i, r in enumerate(mpoly)}
    polymer_t, ligand_t = gemmi.EntityType.Polymer, gemmi.EntityType.NonPolymer
    lig = poly_c = hb = 0
    site: set[str] = set()
    wet: set[str] = set()
    per_res = [0] * n_res
    listed = []
    for c in found:
        r1, r2 = c.partner1.residue, c.partner2.residue
        a1, a2 = c.partner1.atom, c.partner2.atom
        listed.append((r1, a1, r2, a2, float(c.dist)))
        kinds = {r1.entity_type, r2.entity_type}
        if kinds == {ligand_t, gemmi.EntityType.Water}:
            wet.add(_label(r1 if r1.entity_type == gemmi.EntityType.Water else r2))
        elif kinds == {polymer_t, ligand_t}:
            lig += 1
            pr = r1 if r1.entity_type == polymer_t else r2
            site.add(_label(pr))
            per_res[index[(_label(pr), pr.name)]] += 1
        elif kinds == {polymer_t}:
            poly_c += 1
            i1, i2 = index[(_label(r1), r1.name)], index[(_label(r2), r2.name)]
            if ((a1.name == "O" and a2.name == "N" and i2 - i1 == HBOND_SPAN)
                    or (a1.name == "N" and a2.name == "O" and i1 - i2 == HBOND_SPAN)):
                hb += 1
    out = {
        "n_residues": n_res,
        "fit_pairs": [f["kept"] for f in fits],
        "fit_rmsd": [f["rmsd"] for f in fits],
        "mean_fit_rmsd": float(np.mean([f["rmsd"] for f in fits])),
        "rmsf_mean": float(np.mean([rmsf[i] for i in valid])),
        "steadiest": labels[min(valid, key=lambda i: (rmsf[i], i))],
        "core": [labels[i] for i in core],
        "n_core": len(core),
        "core_rmsd": [f["core_rmsd"] for f in fits],
        "medoid_model": int(st[med].num),
        "medoid_rmsd": float(mean[med]),
        "ligand_contacts": lig,
        "ligand_site": sorted(site),
        "ligand_waters": len(wet),
        "polymer_contacts": poly_c,
        "helical_hbonds": hb,
    }
    detail = {"structure": st, "fits": fits, "rmsf": rmsf, "core": core, "labels": labels,
              "resnames": [r.name for r in ref], "het": [r.het_flag == "H" for r in ref],
              "ca_models": [sum(1 for k in range(n_models) if poly(k)[i].get_ca() is not None) for i in range(n_res)],
              "pair_mean": mean.tolist(), "medoid": med, "contacts": listed, "per_res_ligand": per_res}
    return out, detail


# ------------------------------------------------------------------------ the evidence
def _g(x: float) -> str:
    return f"{x:.4g}"


def _write_evidence(detail: dict[str, Any], out: dict[str, Any], evidence: Path) -> None:
    import gemmi

    fits = detail["fits"]
    rows = ["model,pairs,kept,rmsd,core_pairs,core_weight,core_rmsd,mean_core_rmsd"]
    st = detail["structure"]
    rows.append(f"{st[0].num},,,,,,,{_g(detail['pair_mean'][0])}")
    for k, f in enumerate(fits, start=1):
        rows.append(f"{f['model']},{f['pairs']},{f['kept']},{_g(f['rmsd'])},{f['core_pairs']},{_g(f['core_weight'])},"
                    f"{_g(f['core_rmsd'])},{_g(detail['pair_mean'][k])}")
    (evidence / "fit.csv").write_text("\n".join(rows) + "\n", encoding="ascii")

    core = set(detail["core"])
    rows = ["index,label,resname,record,ca_models,rmsf,core,ligand_contacts"]
    for i, lab in enumerate(detail["labels"]):
        r = detail["rmsf"][i]
        rows.append(f"{i + 1},{lab},{detail['resnames'][i]},{'HETATM' if detail['het'][i] else 'ATOM'},"
                    f"{detail['ca_models'][i]},{'' if r is None else _g(r)},{int(i in core)},"
                    f"{detail['per_res_ligand'][i]}")
    (evidence / "residues.csv").write_text("\n".join(rows) + "\n", encoding="ascii")

    rows = ["residue1,resname1,atom1,altloc1,residue2,resname2,atom2,altloc2,distance"]
    for r1, a1, r2, a2, d in detail["contacts"]:
        rows.append(f"{_label(r1)},{r1.name},{a1.name},{a1.altloc.strip() if a1.altloc != chr(0) else ''},"
                    f"{_label(r2)},{r2.name},{a2.name},{a2.altloc.strip() if a2.altloc != chr(0) else ''},{_g(d)}")
    (evidence / "contacts.csv").write_text("\n".join(rows) + "\n", encoding="ascii")

    for model in st:
        for chain in model:
            for res in chain:
                for atom in res:
                    p = atom.pos
                    atom.pos = gemmi.Position(round(p.x, 2), round(p.y, 2), round(p.z, 2))
    opts = gemmi.PdbWriteOptions()
    opts.minimal_file = True
    st.write_pdb(str(evidence / "fitted.pdb"), opts)


@oracle(
    name="pdb_ensemble",
    version="1.0.0",
    title="Fit, fluctuation, core, medoid and contacts of an NMR-like ensemble in PDB format",
    domain="structural biology",
    toolkit=["numpy"],
    requires=["gemmi"],
    description=(
        "A structural biologist analyses a solution (NMR-like) structure deposited as one multi-model "
        "PDB file: a small protein chain with a bound ligand (benzamidine, BEN) and a few waters in every "
        "model. The file is real PDB text with the format's quirks: alternate locations, insertion codes, "
        "HETATM records, a numbering that may start at zero or below, atoms missing from some models, "
        "occupancies and B-factors. The lab's pipeline is built on the gemmi library (not available here). "
        "Every later model is fitted onto the first model on a chosen set of protein atoms, with optional "
        "rounds of outlier rejection; the fitted ensemble gives each residue's CA fluctuation; the "
        "well-ordered core (residues whose fluctuation stays within a cutoff) is used to refit every "
        "model onto the first and to pick the medoid, the model closest on average to all the others; in "
        "the medoid, atom contacts are counted. The question: what the file holds, how well each model "
        "fits the first, how mobile each residue is, which residues form the core, which model is the "
        "medoid, and which contacts the medoid makes (ligand to protein, protein to protein, and the "
        "backbone contacts of helical turns)."
    ),
    axes={
        "n_models": Int(4, 16, doc="models (conformers) in the ensemble file"),
        "n_residues": Int(28, 48, doc="residues of the protein chain in the file"),
        "flexibility": Float(0.5, 2.5, doc="how strongly the chain's tails, loop and helices move between models "
                                           "(dimensionless scale)"),
        "altloc_fraction": Float(0.0, 0.2, doc="share of residues deposited with two alternate conformations (the "
                                               "side chain, sometimes the whole residue)"),
        "missing_fraction": Float(0.0, 0.08, doc="for each model and residue, the chance that some of the residue's "
                                                 "atoms are missing from that model"),
        "chain_break": Bool(doc="whether two residues at the start of the second helix were never modelled (a gap "
                                "in the chain and its numbering)"),
        "selenomethionine": Bool(doc="whether the protein carries selenomethionine (MSE, written as HETATM records "
                                     "inside the chain)"),
        "selection": Choice(["CA", "mainchain", "all"], doc="which protein atoms the fit of a model onto the first "
                                                            "pairs: alpha carbons, main-chain atoms, or all atoms"),
        "trim_cycles": Int(0, 4, doc="rounds of outlier rejection in that fit (0: none)"),
        "trim_cutoff": Float(1.5, 3.0, doc="outlier rejection threshold of that fit, in units of the fit's RMSD"),
        "core_cutoff": Float(0.3, 1.5, doc="largest CA fluctuation of a well-ordered (core) residue, angstrom"),
        "contact_cutoff": Float(3.3, 4.5, doc="two atoms closer than this are in contact, angstrom"),
        "seed": Seed(doc="seed of the protein, its ensemble and the file's defects"),
    },
    outputs={
        "n_residues": Integer(tol=0, doc="residues of the protein chain (polymer) in the first model"),
        "fit_pairs": SequenceOf(Integer(tol=0), doc="per model after the first, in file order: the atom pairs the "
                                                    "fit onto the first model finally used"),
        "fit_rmsd": SequenceOf(Number(abs=2e-4), doc="per model after the first: the RMSD that fit reports, angstrom"),
        "mean_fit_rmsd": Number(abs=2e-4, doc="mean of fit_rmsd, angstrom"),
        "rmsf_mean": Number(abs=2e-4, doc="mean over residues of the CA fluctuation (root mean square distance "
                                          "of a residue's CA from its mean position over the fitted models), "
                                          "angstrom"),
        "steadiest": Text(doc="label (residue number with its insertion code, e.g. 27A or -1) of the residue "
                              "with the smallest CA fluctuation"),
        "core": SetOf(doc="labels of the core residues"),
        "n_core": Integer(tol=0, doc="how many residues the core holds"),
        "core_rmsd": SequenceOf(Number(abs=2e-4), doc="per model after the first: its RMSD to the first model "
                                                      "after the refit on the core, angstrom"),
        "medoid_model": Integer(tol=0, doc="MODEL number of the medoid"),
        "medoid_rmsd": Number(abs=2e-4, doc="mean core RMSD of the medoid to the other models, angstrom"),
        "ligand_contacts": Integer(tol=0, doc="atom pairs in contact between the ligand and the protein in the "
                                              "medoid"),
        "ligand_site": SetOf(doc="labels of the protein residues in contact with the ligand in the medoid"),
        "ligand_waters": Integer(tol=0, doc="water molecules in contact with the ligand in the medoid"),
        "polymer_contacts": Integer(tol=1, doc="atom pairs in contact between two protein residues that are not "
                                               "bonded to each other, in the medoid"),
        "helical_hbonds": Integer(tol=0, doc="contacts in the medoid between the main-chain O of a residue and the "
                                             "main-chain N of the residue four positions later in the chain"),
    },
    inputs=make_inputs,
    input_docs={
        "ensemble": "the deposited ensemble: PDB format (fixed columns, ASCII), MODEL/ENDMDL blocks numbered from 1, "
                    "chain A: the protein (ATOM records, and HETATM for modified residues), TER, then the ligand "
                    "and the waters as HETATM records",
    },
    stages=["read the PDB file as gemmi does (models, residues by number/icode/name, altlocs kept, polymer up to TER)",
            "fit every model onto the first with gemmi.calculate_superposition (selection, trimming)",
            "per-residue CA fluctuation over the fitted models (first-listed CA)",
            "core residues by the fluctuation cutoff, with a floor of four",
            "occupancy-weighted refit on core main-chain atoms and the medoid by mean pairwise core RMSD",
            "gemmi ContactSearch in the medoid (adjacent residues ignored): ligand, polymer and i->i+4 O-N counts"],
    reference="reference.py",
    evidence={
        "fit.csv": Evidence(
            "one row per model in file order: MODEL number; for each model after the first, the atom pairs the fit "
            "onto the first model started from (pairs) and finally used (kept) and its RMSD; then for the refit on "
            "the core, the atom pairs, the sum of the weights given to them (core_weight) and the RMSD; for every "
            "model its mean core RMSD to the other models (mean_core_rmsd)", reveals="summary"),
        "residues.csv": Evidence(
            "one row per protein residue in chain order: position (index, from 1), label, residue name, record "
            "type, in how many models the residue has a CA, its CA fluctuation (empty when it has none), whether "
            "it is in the core (1/0) and its contacts with the ligand in the medoid", reveals="summary"),
        "contacts.csv": Evidence(
            "every contact found in the medoid: both atoms (residue label, residue name, atom name, alternate "
            "location or empty) and their distance in angstrom", reveals="trace"),
        "fitted.pdb": Evidence(
            "the whole ensemble after the refit on the core, written as PDB with coordinates rounded to 0.01 "
            "angstrom", reveals="trace"),
    },
    evidence_level="summary",
)
def pdb_ensemble(params: dict[str, Any], evidence: Path, inputs: dict[str, Path]) -> dict[str, Any]:
    """Fit, fluctuation, core, medoid and contacts of a multi-model PDB ensemble, with gemmi.

    Input `ensemble.pdb` (synth.py builds it). Everything below is what the
    oracle does with gemmi (pinned version); reference.py reproduces it with numpy.

    1. Read. gemmi.read_structure, then setup_entities. Models in file order (MODEL
       numbers). A residue is a run of atom records with the same chain, number,
       insertion code and name; altloc atoms stay (A and B of an atom are two atoms,
       in file order). The chain's polymer is its residues before TER, including the
       HETATM MSE residues; after TER, HOH is water and BEN a ligand. The CRYST1 record
       of NMR entries (a 1 A cubic cell, P 1) is not a crystal: no periodic images. Labels are str(seqid): number
       plus insertion code ("16A", "-2"). n_residues: polymer residues of model 1.
    2. Fit on the first model: for k >= 2, gemmi.calculate_superposition(polymer of
       model 1, polymer of model k, PeptideL, sel, trim_cycles, trim_cutoff) with sel
       CaP / MainChain / All for selection CA / mainchain / all, altloc left at its
       default. Pairing: residues aligned by sequence (identical here, so position by
       position); CA: the atom named CA with element C; mainchain: N, CA, C, O (with
       their elements); all: every atom of the model-1 residue, matched by name and
       element. An atom is usable only when it has NO alternate location (altloc
       blank) in both residues - a residue deposited with A/B main chain drops out of
       a CA or main-chain fit entirely; a missing atom drops its pair. Unweighted
       least squares (QCP); then up to trim_cycles rounds: keep the pairs whose
       distance after the fit is <= trim_cutoff x RMSD, stop when all are kept,
       else refit on the kept ones. fit_pairs = pairs of the last fit, fit_rmsd its
       RMSD; the model is moved by that transform (all its atoms).
    3. CA fluctuation per polymer position i: the CA of each model is
       Residue.get_ca() = the FIRST atom named CA (element C) in file order, whatever
       its altloc (so A when A and B exist, even when B has the higher occupancy);
       over the models that have one (at least 2, else the residue has no value):
       rmsf_i = sqrt(mean |x - mean x|^2). rmsf_mean = mean over residues with a
       value; steadiest = label of the smallest (ties: the earliest).
    4. Core: residues with rmsf <= core_cutoff; when fewer than 4 qualify, the 4
       residues with the smallest rmsf (ties: earliest), in chain order.
    5. Refit and medoid. Core pairs between models a and b: for each core residue and
       each of N, CA, C, O, Residue.find_atom(name, '*') (the first listed, any
       altloc) in both; weight = occ_a x occ_b. gemmi.superpose_positions(p_ref,
       p_model, weights) for every k >= 2: core_rmsd = its weighted RMSD
       sqrt(sum w d^2 / sum w); the model is moved by it. Then the same weighted
       superposition for every pair of models; mean_k = mean of model k's pairwise
       RMSDs to the n-1 others; the medoid is the smallest mean (ties: the earliest
       model); medoid_rmsd = that mean.
    6. Contacts in the medoid: NeighborSearch(model, cell, 5).populate(include_h=
       False); ContactSearch(contact_cutoff) with ignore = AdjacentResidues, twice =
       False, min_occupancy 0. A pair is reported once; distance < cutoff (strict,
       float32 coordinates); atoms of the same residue never; two residues connected
       by a peptide bond (the first-listed C of one within 1.341 x 1.5 A of the first-
       listed N of the other, in either order) never - so residues across the chain
       break DO contact; two atoms with different non-blank altlocs (A vs B) never;
       A or B with a blank altloc atom yes. ligand_contacts: pairs of a ligand atom
       and a polymer atom; ligand_site: labels of those polymer residues; polymer_
       contacts: pairs of two polymer atoms; helical_hbonds: those polymer pairs that
       join atom O of position i with atom N of position i + 4 (positions in the
       polymer, not residue numbers; insertion codes and the chain break make them
       differ). ligand_waters: distinct water residues with at least one contact
       with a ligand atom (a water modelled at two sites A/B is one residue; each
       site is an atom with its own altloc). Water-protein and water-water contacts
       are counted nowhere.

    Tolerances, and why:
    - Counts (residues, pairs, core size, medoid, ligand contacts, ligand waters,
      helical contacts): exact. Each follows from discrete rules; another altloc
      rule, a missed HETATM residue, another trimming comparison, another contact
      exclusion changes them by whole units.
    - polymer_contacts: within 1. gemmi compares float32 distances; a faithful
      float64 implementation can disagree on a pair within ~1e-5 A of the cutoff
      (about one scenario in a thousand); other exclusion rules (sequence numbers
      instead of bonds, altloc pairs kept, <= instead of <) move it by several.
    - RMSDs and fluctuations: 2e-4 A. The same pairs give the same value to ~1e-9
      (QCP against SVD); including an altloc atom, weighting differently, taking
      the higher-occupancy conformer or skipping a trimming round moves them by
      1e-3 A or more.
    - Labels and sets (steadiest, core, ligand_site): exact. The steadiest residue is
      decided by fluctuations that differ by 1e-3 A or more between neighbours;
      faithful implementations agree to 1e-9.
    """
    out, detail = analyse(params, inputs["ensemble"])
    _write_evidence(detail, out, Path(evidence))
    return out
