"""Built-in oracle `xrd_lattice`: index a measured powder pattern against a CIF phase and
refine the strained cell, with pymatgen's diffraction calculator at its core."""
from __future__ import annotations

import json
import math
import warnings
from pathlib import Path
from typing import Any

from recon import Bool, Choice, Evidence, Float, Integer, Number, SequenceOf, Seed, Text, oracle

# ------------------------------------------------------------------ the reference phases
# name -> space group, cell (a, c), sites, host species, dopant, relative cell change per
# unit dopant fraction (a, c) -- Vegard's law, plausible magnitudes for each system.
PHASES: dict[str, dict[str, Any]] = {
    "Si": {"sg": "Fd-3m", "cell": (5.4309, 5.4309), "sites": [("Si", (0.0, 0.0, 0.0))],
           "host": "Si", "dopant": "Ge", "vegard": (0.042, 0.042)},
    "CeO2": {"sg": "Fm-3m", "cell": (5.4113, 5.4113), "sites": [("Ce", (0.0, 0.0, 0.0)), ("O", (0.25, 0.25, 0.25))],
             "host": "Ce", "dopant": "Gd", "vegard": (0.012, 0.012)},
    "MgO": {"sg": "Fm-3m", "cell": (4.2117, 4.2117), "sites": [("Mg", (0.0, 0.0, 0.0)), ("O", (0.5, 0.5, 0.5))],
            "host": "Mg", "dopant": "Ni", "vegard": (-0.008, -0.008)},
    "SrTiO3": {"sg": "Pm-3m", "cell": (3.9053, 3.9053),
               "sites": [("Sr", (0.0, 0.0, 0.0)), ("Ti", (0.5, 0.5, 0.5)), ("O", (0.5, 0.5, 0.0))],
               "host": "Sr", "dopant": "Ba", "vegard": (0.028, 0.028)},
    "TiO2": {"sg": "P4_2/mnm", "cell": (4.5937, 2.9587), "sites": [("Ti", (0.0, 0.0, 0.0)), ("O", (0.3048, 0.3048, 0.0))],
             "host": "Ti", "dopant": "Nb", "vegard": (0.010, 0.016)},
    "ZnO": {"sg": "P6_3mc", "cell": (3.2498, 5.2066), "sites": [("Zn", (1 / 3, 2 / 3, 0.0)), ("O", (1 / 3, 2 / 3, 0.3819))],
            "host": "Zn", "dopant": "Mg", "vegard": (-0.004, 0.006)},
}
KA1, KA2, KA2_RATIO = 1.540560, 1.544390, 0.5     # Cu, angstrom (the values pymatgen tabulates)
TTH_START = 20.0


def _structure(phase: str, a: float, c: float, dopant_fraction: float = 0.0) -> Any:
    from pymatgen.core import Lattice, Structure

    ph = PHASES[phase]
    if ph["sg"].startswith("P6"):
        lat = Lattice.hexagonal(a, c)
    elif ph["sg"].startswith("P4"):
        lat = Lattice.tetragonal(a, c)
    else:
        lat = Lattice.cubic(a)
    s = Structure.from_spacegroup(ph["sg"], lat, [e for e, _ in ph["sites"]], [list(x) for _, x in ph["sites"]])
    if dopant_fraction > 0:
        s.replace_species({ph["host"]: {ph["host"]: 1.0 - dopant_fraction, ph["dopant"]: dopant_fraction}})
    return s


def _pv(x: Any, centre: float, fwhm: float, eta: float) -> Any:
    import numpy as np

    dx = (x - centre) / fwhm
    return (eta * 2 / (math.pi * fwhm) / (1 + 4 * dx * dx)
            + (1 - eta) * math.sqrt(4 * math.log(2) / math.pi) / fwhm * np.exp(-4 * math.log(2) * dx * dx))


def _tch(hg: float, hl: float) -> tuple[float, float]:
    """Thompson-Cox-Hastings: the pseudo-Voigt of a Voigt with Gaussian and Lorentzian FWHMs."""
    h = (hg ** 5 + 2.69269 * hg ** 4 * hl + 2.42843 * hg ** 3 * hl ** 2 + 4.47163 * hg ** 2 * hl ** 3
         + 0.07842 * hg * hl ** 4 + hl ** 5) ** 0.2
    q = hl / h
    return h, min(1.0, max(0.0, 1.36603 * q - 0.47719 * q * q + 0.11116 * q ** 3))


def scan(params: dict[str, Any]) -> dict[str, Any]:
    """The measured scan of the scenario: the doped, strained sample's reflections
    (pymatgen), Voigt-like profiles from the instrument, crystallite size and
    microstrain, Cu Ka1/Ka2, a zero shift, background, an optional impurity phase and
    Poisson counting noise. Deterministic in params."""
    import numpy as np
    from pymatgen.analysis.diffraction.xrd import XRDCalculator

    rng = np.random.default_rng(int(params["seed"]))
    ph = PHASES[params["phase"]]
    x = float(params["dopant_fraction"])
    ea = float(params["strain_pct"]) / 100
    ec = ea + (float(params["anisotropy_pct"]) / 100 if ph["cell"][0] != ph["cell"][1] else 0.0)
    a = ph["cell"][0] * (1 + ph["vegard"][0] * x) * (1 + ea)
    c = ph["cell"][1] * (1 + ph["vegard"][1] * x) * (1 + ec)
    if ph["cell"][0] == ph["cell"][1]:
        c = a
    sample = _structure(params["phase"], a, c, x)
    u = float(f"{rng.uniform(0.002, 0.006):.3g}")
    v = float(f"{-rng.uniform(0.001, 0.004):.3g}")
    w = float(f"{rng.uniform(0.002, 0.005):.3g}")
    step = float(params["step_deg"])
    n = int(math.floor((float(params["two_theta_max"]) - TTH_START) / step + 1e-9)) + 1
    tth = np.round(TTH_START + step * np.arange(n), 4)
    pat = XRDCalculator(wavelength=KA1).get_pattern(sample, two_theta_range=(TTH_START - 2, float(tth[-1]) + 2))
    zero = float(params["zero_shift_deg"])
    size_a = float(params["crystallite_nm"]) * 10.0
    eps = float(params["microstrain_pct"]) / 100
    prof = np.zeros(n)
    sticks = []
    for t1, inten, d in zip(pat.x, pat.y, pat.d_hkls):
        th = math.radians(t1 / 2)
        hg = math.sqrt(u * math.tan(th) ** 2 + v * math.tan(th) + w)
        hl = math.degrees(0.94 * KA1 / (size_a * math.cos(th)) + 4 * eps * math.tan(th))
        h, eta = _tch(hg, hl)
        t2 = math.degrees(2 * math.asin(min(1.0, KA2 / (2 * d))))
        prof += inten * (_pv(tth, t1 + zero, h, eta) + KA2_RATIO * _pv(tth, t2 + zero, h, eta))
        sticks.append(t1 + zero)
        sticks.append(t2 + zero)
    peak = float(params["peak_counts"])
    prof *= peak / max(float(prof.max()), 1e-12)
    if params["impurity"]:
        placed = 0
        for _ in range(200):
            if placed == 3:
                break
            t = float(rng.uniform(TTH_START + 3.0, float(tth[-1]) - 3.0))
            if min(abs(t - s) for s in sticks) < 1.0:
                continue
            h = float(rng.uniform(0.12, 0.25))
            t2 = math.degrees(2 * math.asin(min(1.0, KA2 / KA1 * math.sin(math.radians(t / 2)))))
            shape = _pv(tth, t, h, 0.3) + KA2_RATIO * _pv(tth, t2, h, 0.3)
            prof += peak * rng.uniform(0.04, 0.10) * shape / float(_pv(np.array([t]), t, h, 0.3)[0])
            sticks += [t, t2]
            placed += 1
    level = peak * rng.uniform(0.02, 0.08) + 15.0
    bg = level * (0.8 + 0.5 * np.exp(-(tth - TTH_START) / 12.0)) \
        + level * rng.uniform(0.2, 0.6) * np.exp(-0.5 * ((tth - rng.uniform(24.0, 30.0)) / 5.0) ** 2)
    counts = rng.poisson(bg + prof)
    return {"tth": tth, "counts": counts, "U": u, "V": v, "W": w, "a": a, "c": c}


def make_inputs(params: dict[str, Any], directory: Path) -> None:
    """Write phase.cif (the reference phase, pymatgen's CifWriter with symmetry) and
    pattern.xy (the measured scan)."""
    from pymatgen.io.cif import CifWriter

    ph = PHASES[params["phase"]]
    with warnings.catch_warnings():   # spglib's and pymatgen's deprecation notices
        warnings.simplefilter("ignore")
        ref = _structure(params["phase"], ph["cell"][0], ph["cell"][1])
        (Path(directory) / "phase.cif").write_text(str(CifWriter(ref, symprec=0.01)), encoding="utf-8")
        sc = scan(params)
    lines = ["# powder diffraction scan, Bragg-Brentano geometry, Cu tube, no monochromator",
             f"# wavelengths (angstrom): Ka1 = {KA1:.6f}  Ka2 = {KA2:.6f}  I(Ka2)/I(Ka1) = {KA2_RATIO}",
             "# instrument profile from a LaB6 standard, FWHM^2 = U tan^2(theta) + V tan(theta) + W (deg^2):",
             f"#   U = {sc['U']:.3g}  V = {sc['V']:.3g}  W = {sc['W']:.3g}",
             "# columns: 2theta (degrees), counts"]
    lines += [f"{t:.4f} {int(c)}" for t, c in zip(sc["tth"], sc["counts"])]
    (Path(directory) / "pattern.xy").write_text("\n".join(lines) + "\n", encoding="utf-8")


# ------------------------------------------------------------------------ the evidence
def _g4(v: float) -> str:
    return f"{v:.4g}"


def _write_evidence(evidence: Path, out: dict[str, Any], detail: dict[str, Any]) -> None:
    refl = detail["reflections"]
    rows = ["two_theta_deg,d_angstrom,relative_intensity,hkl,multiplicity"]
    rows += [f"{_g4(r['tth'])},{_g4(r['d'])},{_g4(r['intensity'])},{r['label']},{r['multiplicity']}" for r in refl]
    (evidence / "reference_pattern.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    matched = detail["index"]["matched"]
    rows = ["two_theta_deg,fwhm_deg,eta,area,hkl"]
    for i, p in enumerate(detail["peaks"]):
        label = refl[matched[i]]["label"] if i in matched else ""
        rows.append(f"{_g4(p['tth'])},{_g4(p['fwhm'])},{_g4(p['eta'])},{_g4(p['area'])},{label}")
    (evidence / "peaks.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    info = detail["index"]
    summary = {
        "crystal_system": info["system"],
        "cell_scale_search": {"scale": float(_g4(info["scale"])), "score": float(_g4(info["grid_score"]))},
        "rounds": [{"matched": r["matched"], "cell": [float(_g4(v)) for v in r["params"]],
                    "zero_shift_deg": float(_g4(r["zero"]))} for r in info["rounds"]],
        "indexed": out["peaks_indexed"],
        "peaks_found": out["peaks_found"],
        "sizes_nm": [float(_g4(s)) for s in detail["sizes"]],
    }
    (evidence / "refinement.json").write_text(json.dumps(summary, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    tth = detail["tth"]
    rows = ["two_theta_deg,ka1_counts_smoothed"]
    rows += [f"{t:.4f},{_g4(s)}" for t, s in zip(tth, detail["smooth"])]
    (evidence / "ka2_stripped.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")


@oracle(
    name="xrd_lattice",
    version="1.1.0",
    title="Powder XRD: indexing, lattice refinement, strain and crystallite size",
    domain="materials science",
    toolkit=["numpy", "scipy"],
    requires=["pymatgen"],
    description=(
        "A doped and strained polycrystalline sample of a known phase was measured on a laboratory powder "
        "diffractometer with a copper tube. The phase's reference structure comes as a CIF; the measured scan "
        "as an xy file (2-theta against counts) that carries what real scans carry: a background with an "
        "amorphous hump, counting noise, the Ka1/Ka2 doublet of every reflection, a zero-point error of the "
        "goniometer, line broadening from small crystallites and microstrain, and in some scenarios a few "
        "peaks of an impurity phase. The question, as a diffraction lab would answer it: which peaks the "
        "scan shows, which reflections of the reference phase they are (Miller indices as the reference "
        "phase's calculated pattern labels them), the refined cell and zero shift, how far the sample's cell "
        "is strained from the reference cell, how each indexed peak is shifted from its reference position, "
        "and the crystallite size and microstrain the line widths imply once the instrument's own broadening "
        "is removed."
    ),
    axes={
        "phase": Choice(list(PHASES), doc="the reference phase (its CIF is an input)"),
        "dopant_fraction": Float(0.0, 0.2, doc="fraction of the host cation replaced by a dopant, which changes "
                                               "the cell (Vegard's law) and the scattering"),
        "strain_pct": Float(-0.5, 0.5, doc="elastic strain of the a axis of the sample, percent"),
        "anisotropy_pct": Float(-0.25, 0.25, doc="additional strain of the c axis over the a axis (tetragonal and "
                                                 "hexagonal phases only), percent"),
        "zero_shift_deg": Float(-0.12, 0.12, doc="zero-point error of the goniometer added to every 2-theta, degrees"),
        "crystallite_nm": Float(15.0, 250.0, log=True, doc="mean crystallite size of the sample, nanometres"),
        "microstrain_pct": Float(0.0, 0.12, doc="root-mean-square microstrain of the sample, percent"),
        "peak_counts": Float(300.0, 30000.0, log=True, doc="counts at the top of the strongest peak above "
                                                           "background (sets the noise)"),
        "step_deg": Choice([0.01, 0.015, 0.02, 0.025], doc="2-theta step of the scan, degrees"),
        # 4 significant digits (0.1 degree): a scan end drawn finer lands on the 2-theta grid
        # every published pattern prints, so a hidden one would read as leaked
        "two_theta_max": Float(90.0, 125.0, digits=4, doc="end of the scan, degrees 2-theta (it starts at 20)"),
        "impurity": Bool(doc="whether a secondary phase adds a few weak peaks"),
        "seed": Seed(doc="seed of the instrument profile, background, impurity peaks and counting noise"),
    },
    outputs={
        "peaks_found": Integer(tol=0, doc="diffraction peaks (Ka1 lines) found in the scan"),
        "peaks_indexed": Integer(tol=0, doc="of those, peaks indexed to a reflection of the reference phase"),
        "indexed_hkl": SequenceOf(Text(normalize="strip"), doc="Miller indices of the indexed peaks in order of "
                                  "2-theta, each written as the reference pattern labels its reflection"),
        "unindexed_two_theta_deg": SequenceOf(Number(abs=0.02), doc="2-theta (Ka1) of the peaks left unindexed, "
                                              "ascending, degrees"),
        "zero_shift_deg": Number(abs=0.002, doc="refined zero shift (observed minus true 2-theta), degrees"),
        "a_angstrom": Number(abs=1.5e-4, doc="refined lattice parameter a, angstrom"),
        "c_angstrom": Number(abs=1.5e-4, doc="refined lattice parameter c, angstrom (equal to a for a cubic phase)"),
        "cell_volume_a3": Number(rel=1e-4, doc="volume of the refined unit cell, cubic angstrom"),
        "strain_a_pct": Number(abs=0.003, doc="strain of a against the reference cell, percent"),
        "strain_c_pct": Number(abs=0.003, doc="strain of c against the reference cell, percent"),
        "volume_strain_pct": Number(abs=0.008, doc="relative change of the cell volume against the reference cell, "
                                                   "percent"),
        "peak_shifts_deg": SequenceOf(Number(abs=0.003), doc="for each indexed peak (2-theta order), its position "
                                      "corrected for the zero shift minus the reference phase's calculated "
                                      "position, degrees"),
        "fit_rms_deg": Number(abs=3e-4, doc="root-mean-square 2-theta residual of the indexed peaks against the "
                                           "refined cell, degrees"),
        "strongest_hkl": Text(normalize="strip", doc="Miller indices of the indexed peak with the largest "
                                                      "integrated Ka1 intensity"),
        "strongest_fwhm_deg": Number(abs=0.003, doc="full width at half maximum of that peak's Ka1 line, degrees"),
        "scherrer_size_nm": Number(rel=0.03, doc="crystallite size from the Scherrer equation, the median over "
                                                 "the indexed peaks, nanometres"),
        "wh_size_nm": Number(abs=0.2, rel=0.02, doc="crystallite size from a Williamson-Hall analysis of the "
                                                    "indexed peaks, nanometres (0 when the analysis gives none)"),
        "wh_microstrain_pct": Number(abs=0.004, doc="microstrain from the same Williamson-Hall analysis, percent"),
    },
    inputs=make_inputs,
    input_docs={
        "phase": "the reference phase as a CIF 1.1 file written by pymatgen: cell, space group, symmetry "
                 "operations and the symmetry-independent sites with occupancies",
        "pattern": "the measured scan as text: '#' header lines (the Cu Ka1 and Ka2 wavelengths in angstrom, "
                   "their intensity ratio, and the instrument's FWHM function U, V, W measured on a LaB6 "
                   "standard), then one line per step: 2-theta in degrees (4 decimals) and integer counts",
    },
    evidence={
        "reference_pattern.csv": Evidence("the reference phase's calculated powder pattern at Ka1 over the scan "
                                          "range: 2-theta, d-spacing, intensity relative to the strongest (100), "
                                          "the reflection's Miller-index label and multiplicity", reveals="summary"),
        "peaks.csv": Evidence("every peak found: fitted Ka1 2-theta, FWHM, pseudo-Voigt mixing, integrated Ka1 "
                              "area (counts x degrees) and the label of the reflection it was indexed to (empty "
                              "when unindexed)", reveals="summary"),
        "refinement.json": Evidence("the indexing and refinement in brief: crystal system, the isotropic cell "
                                    "scale that first indexed the scan, each refinement round (peaks matched, "
                                    "cell, zero shift), and the per-peak Scherrer sizes", reveals="summary"),
        "ka2_stripped.csv": Evidence("the scan with the Ka2 component removed and smoothed, as the peak search "
                                     "saw it", reveals="trace"),
    },
    evidence_level="summary",
    stages=["read CIF and expand the cell; reference reflections at Ka1 (pymatgen XRDCalculator)",
            "Rachinger Ka2 stripping, Savitzky-Golay smoothing, prominence peak search",
            "grouped pseudo-Voigt doublet fits on the raw counts",
            "cell-scale grid search, then nearest-reflection matching and least-squares cell + zero refinement "
            "until the match repeats",
            "strain and peak shifts against the CIF cell",
            "Scherrer and Williamson-Hall after quadrature removal of the instrumental FWHM"],
    reference="reference.py",
)
def xrd_lattice(params: dict[str, Any], evidence: Path, inputs: dict[str, Path]) -> dict[str, Any]:
    """Index a measured powder pattern against a CIF phase, refine the cell, strain, size.

    Inputs: `phase` (phase.cif, pymatgen CifWriter with symprec 0.01: cell, space group,
    symmetry operations, symmetry-independent sites) and `pattern` (pattern.xy: header
    with Ka1 = 1.540560, Ka2 = 1.544390 angstrom, I(Ka2)/I(Ka1) = 0.5 and the instrument's
    U, V, W; then 2-theta and counts). Only the inputs steer the processing; the axes
    shape the sample and the scan.

    1. Reference reflections (pymatgen): CifParser(...).parse_structures(primitive=False)
       gives the conventional cell with every atom; XRDCalculator(wavelength=Ka1)
       .get_pattern(structure, two_theta_range=(first, last 2-theta of the scan)).
       pymatgen's rules, all of which matter: every reciprocal point in the shell;
       f(s) = Z - 41.78214 s^2 sum_i a_i exp(-b_i s^2) with s = sin(theta)/lambda (its
       four-term table), occupancy-weighted; I = |F|^2 (1 + cos^2 2theta) /
       (sin^2 theta cos theta); reflections binned by round(2theta / 1e-5), the bin's
       2-theta and d are those of its first member; bins weaker than 1e-3 percent of the
       strongest dropped (the systematic absences); members grouped into families of equal
       sorted |indices|, each family named by its largest member (lexicographic, so
       hexagonal 4-index labels read like "2 -1 -1 0"). The oracle writes a reflection's
       label as its families' names, sorted, each as space-separated integers, joined by
       "/" ("3 3 3/5 1 1"); the refinement uses the first family's (h, k, l) (the 4-index
       i dropped). Crystal system from SpacegroupAnalyzer(symprec=0.01): space-group
       number >= 195 cubic (a), 143-194 hexagonal (a, c), 75-142 tetragonal (a, c).
    2. Peak search. Rachinger Ka2 stripping from low angle up: y1[i] = y[i] - 0.5 *
       y1(t'), t' = 2 asin(Ka1/Ka2 sin(t_i/2)), y1(t') by linear interpolation between
       the stripped samples around t' (clamped to y1[0] below the scan). Savitzky-Golay
       smoothing, order 2, window 2 round(0.08 / step) + 1 points (step from the first and
       last 2-theta). Local maxima of the smoothed curve (scipy find_peaks, prominence
       with wlen = 2 round(1.0 / step) + 1); keep those with prominence >= 5 sqrt(max(base,
       1)) + 5, base = the larger smoothed value at the two bases. Width estimate
       w = peak_widths(rel_height 0.5) x step.
    3. Profile fits on the RAW counts. Half-window h = max(0.25, 3 w) around each
       maximum; consecutive maxima whose windows overlap (t_k - h_k < t_j + h_j of the
       previous) form one group; the group's window runs from its first t - h to its last
       t + h plus that peak's Ka2 separation (inclusive). Groups with fewer than
       4 n + 2 points are dropped. Model: c0 + c1 (t - window mid) + sum_k A_k [pV(t; t_k,
       H_k, eta_k) + 0.5 pV(t; t2_k, H_k, eta_k)], pV the unit-area pseudo-Voigt (eta
       Lorentzian), t2 = 2 asin(Ka2/Ka1 sin(t_k/2)) (the observed t_k, no zero
       correction), residuals (model - y)/sqrt(max(y, 1)). scipy least_squares trf,
       x_scale "jac", xtol = ftol = gtol = 1e-12; start c0 = min y, c1 = 0, A = (y at the
       maximum - c0, at least 1) x max(w, 0.01), t at the maximum, H = max(w, 0.01),
       eta = 0.5; bounds A >= 0, t in the window, H in [0.005, 5], eta in [0, 1]. Every
       fitted peak counts in peaks_found, sorted by t.
    4. Indexing. Grid of isotropic scales s = 1 + k 2e-4, k = -100..100: predicted
       2-theta of every reflection from d s at Ka1; score = sum over peaks of
       max(0, 1 - (dist/0.15)^2), dist to the nearest prediction; the best score wins
       (ties within 1e-12 to the smaller |k|). Match at that scale: each peak to its
       nearest prediction within 0.15 degree; a reflection claimed twice goes to the
       nearer peak (earlier on an exact tie). Then rounds: least squares (scipy lm,
       tolerances 1e-14) of t_obs - (2theta(hkl; cell) + z) over the matched peaks, the
       cell parameters of the crystal system from the current values, z (start 0) only
       when the matched peaks number at least parameters + 2, else z = 0; no refit with
       fewer matched peaks than cell parameters. Re-match every peak against the refined
       predictions (plus z) within 0.10 degree; stop when the matched set equals the one
       just refined (at most 8 refinements). 1/d^2: cubic (h^2+k^2+l^2)/a^2; tetragonal
       (h^2+k^2)/a^2 + l^2/c^2; hexagonal 4/3 (h^2+hk+k^2)/a^2 + l^2/c^2.
    5. Outputs. a, c (c = a when cubic); volume a^2 c, or sqrt(3)/2 a^2 c when hexagonal;
       strains (x/x_CIF - 1) 100; peak shift = t_obs - z - 2theta_ref (the pymatgen
       2-theta of the matched reflection); fit_rms = sqrt(mean residual^2) of the final
       refinement's predictions; unindexed = fitted peaks not matched, ascending; the
       strongest = the indexed peak with the largest A.
    6. Sizes. For each indexed peak, theta = (t - z)/2; instrumental FWHM^2 = U tan^2
       theta + V tan theta + W (negative taken as 0); beta^2 = H^2 - FWHM_inst^2
       (quadrature), peaks with beta^2 <= 0 skipped; Scherrer L = 0.9 Ka1 / (beta_rad cos
       theta) / 10 nm, the median is scherrer_size_nm. Williamson-Hall: unweighted
       straight line beta_rad cos theta = q + m (4 sin theta) over the same peaks (at
       least 2 distinct x, else 0, 0); wh_size_nm = 0.9 Ka1 / q / 10 (0.0 when q <= 0),
       wh_microstrain_pct = 100 m. With no indexed peak every derived value is 0 and the
       label "".

    Tolerances, and why:
    - Counts and labels exact: every decision is a comparison far from its threshold
      in all but a vanishing share of scans; a different smoothing, prominence, base
      reach or Ka2 treatment changes the count in a third to a half of the scans.
    - Positions: the same model and window converge to the same minimum to ~1e-7 degree
      with any bounded solver (measured: default tolerances, no x_scale). A wrong model
      moves them by 1e-3 to 1e-1 degree: no Ka2 in the fit, a window of 2.5 or 4 widths
      instead of 3, skipping the zero shift all fail a, c, shifts and z on most scans.
      Hence a, c 1.5e-4 angstrom (about 3e-5 relative), z 0.002 degree, peak shifts
      0.003 degree, rms 3e-4 degree, strains 0.003 percent, volume 1e-4 relative.
      Unindexed positions 0.02 degree: weak impurity and noise peaks are shallow minima.
    - Widths: FWHM 0.003 degree; Scherrer median 3 percent (a K of 0.94 is 4.4 percent
      off), Williamson-Hall size 2 percent, microstrain 0.004 percent (linear rather than
      quadrature instrument removal, or no removal, moves both far more).
    """
    from pymatgen.analysis.diffraction.xrd import XRDCalculator
    from pymatgen.io.cif import CifParser
    from pymatgen.symmetry.analyzer import SpacegroupAnalyzer

    from . import reference

    pat = reference.read_pattern(str(inputs["pattern"]))
    with warnings.catch_warnings():   # "fractional coordinates rounded to ideal values" (intended), spglib notices
        warnings.simplefilter("ignore")
        structure = CifParser(str(inputs["phase"])).parse_structures(primitive=False)[0]
        number = SpacegroupAnalyzer(structure, symprec=0.01).get_space_group_number()
        xrd = XRDCalculator(wavelength=pat["lambda1"]).get_pattern(
            structure, two_theta_range=(float(pat["tth"][0]), float(pat["tth"][-1])))
    lat = structure.lattice
    refl = []
    for t, inten, fams, d in zip(xrd.x, xrd.y, xrd.hkls, xrd.d_hkls):
        labels = sorted(tuple(f["hkl"]) for f in fams)
        rep = labels[0]
        refl.append({"tth": float(t), "d": float(d), "intensity": float(inten), "hkl": (rep[0], rep[1], rep[-1]),
                     "label": "/".join(" ".join(str(v) for v in f) for f in labels),
                     "multiplicity": sum(int(f["multiplicity"]) for f in fams)})
    cif = {"cell": [lat.a, lat.b, lat.c, lat.alpha, lat.beta, lat.gamma], "number": number}
    out, detail = reference.analyse(pat, cif, refl)
    detail["tth"] = pat["tth"]
    _write_evidence(Path(evidence), out, detail)
    return out
