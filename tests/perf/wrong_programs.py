"""Plausible wrong programs for the built-in tasks: the material of the power benchmark
(``bench_power.py``) and of its fast sanity test (``tests/test_wrong_programs.py``).

Each entry is what a careful practitioner might write with ONE idea different from the
reference: another estimator, another convention, a missing stage, a library's default.
An entry is data, a list of exact text replacements applied to
``artifacts/NAME/reference.py``; every ``old`` text must occur exactly once in the
reference (so that a change of the reference breaks the entry loudly instead of
silently testing something else), and the patched program must compile and run.

The ideas were chosen from the references and their recipes so that each matters on
some scenarios and not on others (a wrong rate between a few per cent and about half of
the generator is where a graded set's power is tested); at most a third of the entries
per task are single-constant edits. The expected rates in the comments are estimates
from reading the code and the recipes' own measurements, not measurements of these
exact programs: ``bench_power.py`` measures them.
"""
from __future__ import annotations

from pathlib import Path

__all__ = ["WRONG", "apply", "reference_source", "names", "PatchError"]

ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts"

Edit = tuple[str, str]

WRONG: dict[str, list[tuple[str, list[Edit]]]] = {
    # ------------------------------------------------------------------------ lidar_icp
    # The counts are exact and the pose is graded to 1 mm / 0.005 degree, so an idea
    # that moves every scenario a little fails everywhere; these move some scenarios.
    "lidar_icp": [
        # Spurious-return cut-off from the sample std (ddof 1) instead of the population
        # std: the cut-off moves by ~1e-4 of a std, so a scan's noise count changes only
        # when a return's statistic lies in that sliver (a few to ~15 % of scenarios).
        ("sor_sample_std", [
            ("mean, std = float(stat.mean()), float(stat.std())",
             "mean, std = float(stat.mean()), float(stat.std(ddof=1))"),
        ]),
        # The ground fit starts from the MEAN height of the cell minima instead of the
        # median: cells whose lowest point is a car roof or a wall pull the start up; the
        # refits usually reach the same support, not always.
        ("ground_start_mean", [
            ("plane = np.array([0.0, 0.0, float(np.median(lows[:, 2]))])",
             "plane = np.array([0.0, 0.0, float(np.mean(lows[:, 2]))])"),
        ]),
        # Voxel keys from floor(x / v) on floats instead of the exact millimetre grid:
        # identical unless a coordinate is a multiple of the voxel edge that the float
        # division puts below it (0.3 / 0.1 = 2.9999999999999996); that happens for
        # voxel sizes with few digits, in practice the axis edges 0.1 and 0.4 m.
        ("float_voxel_grid", [
            ("""    v = Fraction(repr(float(voxel_size))) * 1000          # voxel edge in millimetres
    num, den = v.denominator, v.numerator                 # index = floor(mm * num / den)
    if int(np.abs(mm).max(initial=0)) * num < 2 ** 62:
        return np.floor_divide(mm * num, den)
    return np.array([[(int(c) * num) // den for c in row] for row in mm], dtype=np.int64).reshape(-1, 3)
""",
             """    return np.floor((mm / 1000.0) / float(voxel_size)).astype(np.int64)   # metres, float grid
"""),
        ]),
        # The dominant normal azimuth from the raw histogram's peak bin, without the
        # circular [1, 2, 1] smoothing: the coarse yaw moves by a degree or more whenever
        # the raw and smoothed peaks differ.
        ("unsmoothed_histogram", [
            ("smooth = np.roll(hist, 1) + 2 * hist + np.roll(hist, -1)", "smooth = hist"),
        ]),
        # Every vertical normal counts once in the azimuth histogram (no range-squared
        # area weight): a dense nearby car can outvote a facade.
        ("unweighted_histogram", [
            ("return np.bincount(bins, weights=weight, minlength=HIST_BINS)",
             "return np.bincount(bins, minlength=HIST_BINS).astype(np.float64)"),
        ]),
        # A missing stage: the coarse pose is the candidate with the best 2-D occupancy
        # correlation (shared cells), without the 3-D overlap check between candidates.
        ("coarse_2d_only", [
            ('best = max(range(len(candidates)), key=lambda i: (candidates[i]["score"], -i))',
             'best = max(range(len(candidates)), key=lambda i: (candidates[i]["shared_cells"], -i))'),
        ]),
        # The textbook MAD, about the residuals' median, instead of median |r| about
        # zero: differs only where the scale is above its 1 cm floor and the residuals are
        # not centred (noisy scans, early iterations).
        ("mad_about_median", [
            ("scale = max(MAD_TO_SIGMA * float(np.median(np.abs(r))), SCALE_FLOOR) if len(r) else SCALE_FLOOR",
             "scale = max(MAD_TO_SIGMA * float(np.median(np.abs(r - np.median(r)))), SCALE_FLOOR) "
             "if len(r) else SCALE_FLOOR"),
        ]),
        # The robust scale from every pair, ground included, instead of the non-ground
        # pairs only: the flat ground shrinks it, which matters above the 1 cm floor.
        ("scale_from_all_pairs", [
            ("scale, cut = robust_scale(r[gated & ~src_ground])", "scale, cut = robust_scale(r[gated])"),
        ]),
        # No floor under the robust scale: on quiet scans (small noise_sigma) the Tukey
        # cut-off shrinks below the ranging accuracy and the weights trust the noise.
        ("no_scale_floor", [
            ("scale = max(MAD_TO_SIGMA * float(np.median(np.abs(r))), SCALE_FLOOR) if len(r) else SCALE_FLOOR",
             "scale = MAD_TO_SIGMA * float(np.median(np.abs(r))) if len(r) else SCALE_FLOOR"),
        ]),
        # The ICP increment composed additively (t += dt) instead of exactly (the yaw
        # step also turns the current translation): same fixed point, another path, so
        # the iteration count and, where the gate changes the pairs, the pose differ.
        ("additive_pose_update", [
            ("t = rot_z(float(delta[0])) @ t + delta[1:]", "t = t + delta[1:]"),
        ]),
        # The change look-up takes the MEAN range of the returns in the cone instead of the
        # median: the same wherever the cone holds one or two returns or all of them lie
        # on one surface, off where a silhouette edge mixes near and far returns (about
        # half of the scenarios move a count by more than one point).
        ("change_mean_range", [
            ("        m = float(np.median(view_rng[idx]))",
             "        m = float(np.mean(view_rng[idx]))"),
        ]),
    ],
    # ---------------------------------------------------------------------- chem_smarts
    # Most of the generator gives a product; each rule shows only where a case and the
    # conditions (temperature, equivalents, work-up pH, cap) exercise it together.
    "chem_smarts": [
        # TPSA with RDKit's default (no S and P contributions): wrong only when the
        # selected product holds a polar S or P (sulfonamides, thioethers, thiols).
        ("tpsa_without_s_p", [
            ("rdMolDescriptors.CalcTPSA(mol, includeSandP=True)", "rdMolDescriptors.CalcTPSA(mol)"),
        ]),
        # The largest fragment with the library's default chooser (all atoms, hydrogens
        # included): choline salicylate keeps choline instead of salicylate.
        ("largest_fragment_all_atoms", [
            ("fragment = rdMolStandardize.LargestFragmentChooser(params).choose(cleaned)",
             "fragment = rdMolStandardize.LargestFragmentChooser().choose(cleaned)"),
        ]),
        # The tautomer enumerator with the library's defaults, which drop sp3 and
        # double-bond stereo wherever tautomerism touches it (alpha carbons of amino
        # acids and esters), in the keep and enumerate modes.
        ("tautomer_library_defaults", [
            ("_TAUTOMERS.append(rdMolStandardize.TautomerEnumerator(params))",
             "_TAUTOMERS.append(rdMolStandardize.TautomerEnumerator())"),
        ]),
        # The temperature read as a rate only: every site class reacts at every
        # temperature (the conversion still follows the margin, wrapping below zero).
        ("every_class_at_every_temperature", [
            ("    classes = [c for c in tf.classes if c.level <= level]\n", "    classes = list(tf.classes)\n"),
        ]),
        # The unreacted share of an incomplete round is lost instead of carried on
        # (yields and crude totals drop; recovered starting material disappears).
        ("unreacted_share_lost", [
            ("                finished[smi] += amt - reacted\n", ""),
        ]),
        # Every site of a class alike, crowded or open: conversions of crowded sites too
        # high, regioisomers in equal shares.
        ("every_site_alike", [
            ("    return 2.0 / (1 + crowding(mol, atom))\n", "    return 1.0\n"),
        ]),
        # The reagent never runs short: every round at the full equivalents (later
        # rounds convert too much wherever a molecule reacts twice).
        ("reagent_never_runs_out", [
            ("        reagent -= used / 100.0\n", ""),
        ]),
        # The cap applied after the last step too, before the work-up: the minor
        # molecules never reach the work-up (crude counts, purity, sometimes the phase).
        ("cap_before_workup", [
            ("None if last else cap)", "cap)"),
        ]),
        # Recovered starting material counted as a product of the route.
        ("starting_material_is_product", [
            ("    starting = {s for s in crude if parent is not None and flat(s) == flat(parent)}\n",
             "    starting: set[str] = set()\n"),
        ]),
        # The product always taken from the organic phase when it holds any product
        # (the textbook extraction), the aqueous phase only when it holds all of it.
        ("organic_phase_first", [
            ('    phase = "aqueous" if totals["aqueous"] > totals["organic"] else "organic"\n',
             '    phase = "organic" if totals["organic"] else "aqueous"\n'),
        ]),
        # Rank by size first and amount second: another top product wherever a minor
        # molecule is larger than the main one (partly converted protected molecules).
        ("rank_heavy_atoms_first", [
            ("    return (-round(float(amount), RANK_DECIMALS), -heavy_atoms(smiles), -round(qed_of(smiles), RANK_DECIMALS),\n",
             "    return (-heavy_atoms(smiles), -round(float(amount), RANK_DECIMALS), -round(qed_of(smiles), RANK_DECIMALS),\n"),
        ]),
        # Purity among the products only: recovered starting material in the kept
        # phase is not counted as an impurity.
        ("purity_without_starting_material", [
            ("    everything = sum(a for s, a in crude.items() if phases[s] == phase)\n",
             "    everything = sum(a for s, a in crude.items() if phases[s] == phase and s not in starting)\n"),
        ]),
        # The isolation's neutral share from the most ionised group alone instead of
        # every group independently: the same for molecules with one ionisable group,
        # not for amino acids and other molecules with two near the work-up pH.
        ("isolation_one_site", [
            ("    neutral = 1.0\n    for sign, pka in sites.values():\n"
             "        neutral /= 1.0 + 10.0 ** (-sign * (ph - pka))\n",
             "    neutral = min((1.0 / (1.0 + 10.0 ** (-sign * (ph - pka))) for sign, pka in sites.values()),\n"
             "                  default=1.0)\n"),
        ]),
    ],
    # ------------------------------------------------------------- acoustic_beamforming
    # The recipe's own measurements of alternatives guide the choice: ideas it reports
    # failing 13-60 % of scenarios, ideas it does not measure, and one (base-10 bands) it
    # says stays inside every tolerance.
    "acoustic_beamforming": [
        # Truncation where the fitted decay meets the noise, without the compensation
        # for the energy beyond it (the recipe: ~15 % of scenarios).
        ("no_tail_compensation", [
            ("tail = FS * line * 10.0 / (-slope * math.log(10.0))", "tail = 0.0"),
        ]),
        # The noise floor estimated once, from the last tenth of the response, instead of
        # re-estimated from where the fitted decay lies 10 dB below it (a window that grows
        # where the decay is short): version 4's one-pass analysis.
        ("one_pass_noise_floor", [
            ("NOISE_ITERATIONS = 3", "NOISE_ITERATIONS = 0"),
        ]),
        # Single constant: the decay regression runs down to 5 dB above the noise floor
        # instead of 10 dB (the recipe: 13-17 % for the decay times).
        ("fit_margin_5db", [
            ("FIT_MARGIN_DB = 10.0", "FIT_MARGIN_DB = 5.0"),
        ]),
        # The analysis starts at the broadband peak instead of the first sample within
        # 20 dB of it (the recipe: D50 off in ~25 %).
        ("onset_at_peak", [
            ("return int(np.flatnonzero(e >= e.max() * 10.0 ** (ONSET_DB / 10.0))[0])",
             "return int(np.argmax(e))"),
        ]),
        # A missing stage: the azimuth is the spatial spectrum's grid peak, without the
        # parabolic interpolation (the recipe: ~half of the scenarios).
        ("no_peak_interpolation", [
            ("offset = 0.5 * (left - right) / curvature if curvature < 0.0 else 0.0", "offset = 0.0"),
        ]),
        # C50, C80 and D50 as plain early-to-late energy ratios of the band response, its
        # noise included, rather than with the noise floor subtracted: differs where a
        # band's late sound is weak next to the noise.
        ("clarity_without_noise_subtraction", [
            ("    e = x * x - noise\n", "    e = x * x\n"),
        ]),
        # C50 and C80 from the noise-compensated decay curve (the truncated Schroeder
        # integral plus its fitted tail, as ISO 3382's decay times use it) rather than
        # from noise-subtracted energies: the same where the band's decay is long and
        # clean, not where the fit's tail carries the late energy.
        ("clarity_from_decay_curve", [
            ('"c50": clarity(x, d.noise, C50_SAMPLES)',
             '"c50": 10.0 * math.log10((d.edc[0] - d.edc[C50_SAMPLES]) / d.edc[C50_SAMPLES])'),
            ('"c80": clarity(x, d.noise, C80_SAMPLES)',
             '"c80": 10.0 * math.log10((d.edc[0] - d.edc[C80_SAMPLES]) / d.edc[C80_SAMPLES])'),
        ]),
        # The DRR's direct-sound window around the loudest sample instead of the onset:
        # the same while the direct sound is the loudest arrival, not where a reflection
        # overtakes it.
        ("drr_window_at_peak", [
            ("lo, hi = max(onset - DIRECT_BEFORE, 0), onset + DIRECT_AFTER",
             "peak = int(np.argmax(np.abs(h)))\n    lo, hi = max(peak - DIRECT_BEFORE, 0), peak + DIRECT_AFTER"),
        ]),
        # Decay times from the two ends of the evaluation range (time from -5 to -25 dB,
        # times 3) instead of a least-squares line through it: differs where the decay
        # curve bends (coupled or non-diffuse decays, early part for EDT).
        ("decay_time_two_points", [
            ("slope = float(np.polyfit(idx / FS, curve_db[idx], 1)[0])",
             "slope = float((curve_db[idx[-1]] - curve_db[idx[0]]) / ((idx[-1] - idx[0]) / FS))"),
        ]),
        # The noise-truncation regression starts at the first envelope block instead of
        # the loudest one (the band filters' delay can put the maximum one block later);
        # the impulse-response-to-noise ratio still uses the loudest block.
        ("regression_from_first_block", [
            ("k0 = int(np.argmax(level))", "k0 = 0"),
            ("return Decay(edc, noise, noise_from, float(level[k0]), slope, intercept, (k0, k1), crossing, tail)",
             "return Decay(edc, noise, noise_from, float(level.max()), slope, intercept, (k0, k1), crossing, tail)"),
        ]),
        # Another band-edge convention: IEC 61260 base-ten octaves (centres 1000 x
        # 10^(0.3 k), edges at G^(+-1/2) with G = 10^0.3) instead of base two. The recipe
        # says this stays inside every tolerance (decay times move < 4.6 %): expected to
        # be wrong on few scenarios, if any (reported, not asserted).
        ("base10_band_edges", [
            ("BAND_CENTRES = (125.0, 250.0, 500.0, 1000.0, 2000.0, 4000.0)",
             "BAND_CENTRES = tuple(1000.0 * 10.0 ** (0.3 * k) for k in range(-3, 3))"),
            ("[fc / math.sqrt(2.0), fc * math.sqrt(2.0)]", "[fc / 10.0 ** 0.15, fc * 10.0 ** 0.15]"),
        ]),
        # Single constant: the direct-sound window ends 5 ms after the onset instead of
        # 2.5 ms (the recipe: the DRR fails in most scenarios).
        ("direct_window_5ms", [
            ("DIRECT_AFTER = 40", "DIRECT_AFTER = 80"),
        ]),
        # The beam steered at the loudspeaker's true direction (the geometry's, folded for
        # a linear array) instead of the estimate: the same wherever the localisation is
        # good, not where the estimate favours a reflection (measured: 22-28 % per field).
        ("beam_at_true_direction", [
            ('beam = measure(steer_beam(signals, geo["offsets"], loc["azimuth"]), excitation)',
             'true_az = float(params["source_azimuth"]) % 360.0\n'
             '    if ARRAYS[params["microphone_array"]][0] == "linear":\n'
             '        true_az = min(true_az, 360.0 - true_az)\n'
             '    beam = measure(steer_beam(signals, geo["offsets"], true_az), excitation)'),
        ]),
    ],
}


class PatchError(ValueError):
    """A wrong program no longer applies to its reference."""


def reference_source(task: str) -> str:
    path = ARTIFACTS / task / "reference.py"
    if not path.is_file():
        raise PatchError(f"no reference for task {task!r}: {path} does not exist")
    return path.read_text(encoding="utf-8")


def names(task: str) -> list[str]:
    return [n for n, _ in WRONG[task]]


def apply(task: str, name: str) -> str:
    """The source of wrong program ``name`` of ``task``: the reference with its edits
    applied in order. Raises :class:`PatchError` when a task or program is unknown or an
    edit's old text does not occur exactly once (in the reference, and again in the
    text the earlier edits left)."""
    if task not in WRONG:
        raise PatchError(f"unknown task {task!r}; known: {', '.join(sorted(WRONG))}")
    edits = dict(WRONG[task]).get(name)
    if edits is None:
        raise PatchError(f"{task} has no wrong program {name!r}; known: {', '.join(names(task))}")
    return patch(task, name, edits)


def patch(task: str, name: str, edits: list[tuple[str, str]]) -> str:
    """``task``'s reference with ``edits`` (old text, new text) applied in order; ``name``
    labels the errors (see :func:`apply`)."""
    if not edits:
        raise PatchError(f"{task}/{name} has no edits: it would be the reference itself")
    original = reference_source(task)
    src = original
    for i, (old, new) in enumerate(edits, 1):
        if old == new:
            raise PatchError(f"{task}/{name}, edit {i}: old and new text are the same")
        for label, text in (("the reference", original), ("the partly patched source", src)):
            n = text.count(old)
            if n != 1:
                raise PatchError(f"{task}/{name}, edit {i}: the old text occurs {n} times in {label} of "
                                 f"artifacts/{task}/reference.py (it must occur exactly once), so the patch no "
                                 f"longer applies; old text: {old[:120]!r}")
        src = src.replace(old, new, 1)
    return src
