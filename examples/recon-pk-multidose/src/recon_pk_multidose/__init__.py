"""recon oracle plugin `pk_multidose`: oral multiple dosing with saturable elimination.

The `recon.oracles` entry point in pyproject.toml names this module; recon imports it
and registers the `@oracle` below. `reference.py`, next to this file, is the standalone
program that computes the outputs (and the task's reference solution).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from recon import Choice, Float, Int, Number, oracle


@oracle(
    name="pk_multidose",
    version="1.0.0",
    title="Oral multiple-dose pharmacokinetics with saturable elimination",
    domain="pharmacokinetics",
    toolkit=["numpy", "scipy"],
    # PUBLIC: what the agent reads. What is simulated and the question it answers, in
    # the words of the clinic; never the model's equations, the solver or the rules.
    description=(
        "A patient takes a drug by mouth: `n_doses` doses of `dose_mg` every `interval_h` hours, "
        "the first at time 0. The drug is absorbed from the gut into the blood and eliminated by "
        "a saturable process, as phenytoin is. The question: the clinical summary of the plasma "
        "concentration curve over the course of treatment, which ends one dosing interval after "
        "the last dose."
    ),
    axes={
        "dose_mg": Float(50.0, 600.0, doc="mass of each dose, mg"),
        "interval_h": Choice([6, 8, 12, 24], doc="time between two doses, hours"),
        "n_doses": Int(1, 10, doc="number of doses taken"),
        "bioavailability": Float(0.5, 1.0, doc="fraction of each dose that reaches the gut unchanged"),
        "ka_per_h": Float(0.3, 3.0, log=True, doc="absorption rate constant from the gut, per hour"),
        "volume_l": Float(20.0, 80.0, doc="volume of distribution of the drug in the body, litres"),
        "vmax_mg_per_h": Float(5.0, 100.0, log=True, doc="highest rate at which the body can eliminate the "
                                                        "drug, mg per hour"),
        "km_mg_per_l": Float(1.0, 20.0, log=True, doc="plasma concentration at which elimination runs at half "
                                                     "its highest rate, mg/L"),
        "mec_mg_per_l": Float(1.0, 20.0, log=True, doc="minimum effective concentration, mg/L"),
    },
    # PUBLIC: each field's meaning and unit, beside its tolerance. Why the tolerance is
    # what it is stays in the docstring.
    outputs={
        "cmax_mg_per_l": Number(rel=1e-4, doc="highest plasma concentration over the course, mg/L"),
        "tmax_last_h": Number(abs=0.01, doc="when the concentration peaks within the last dosing interval, "
                                            "hours after the last dose"),
        "ctrough_mg_per_l": Number(rel=1e-4, abs=1e-6, doc="plasma concentration at the end of the course "
                                                            "(the trough after the last dose), mg/L"),
        "auc_mg_h_per_l": Number(rel=1e-4, doc="area under the plasma concentration curve over the course, mg*h/L"),
        "time_above_mec_h": Number(abs=0.01, doc="total time during the course with the concentration above "
                                                 "`mec_mg_per_l`, hours"),
        "accumulation_ratio": Number(rel=1e-4, doc="peak concentration within the last dosing interval divided by "
                                                   "the peak within the first"),
    },
    reference="reference.py",
    # PUBLIC: the evidence, described as a lab would report it.
    evidence={
        "profile.csv": "the plasma concentration over the whole course, as a lab would report it: "
                       "columns t_min (minutes since the first dose, every 15 min, from 0 to the end "
                       "of the course) and conc_mg_per_l (4 significant digits); at a dosing time the "
                       "row holds the concentration just before that dose is absorbed (it is continuous)",
    },
    # PRIVATE: the names of the recipe's stages (`recon stats` counts them).
    stages=["dose the gut", "integrate gut and body amounts over each interval", "locate peaks and MEC crossings",
            "summarise the curve"],
    # Baselines (private) are found in baselines/NAME/reconstruct.py beside this file.
)
# PRIVATE: the docstring is the recipe -- the model, the outputs' exact definitions and
# tie-breaks, and why each tolerance is what it is. The agent reads it only in the
# easier variant, `recon build pk_multidose --disclose recipe`.
def pk_multidose(params: dict[str, Any], evidence: Path) -> dict[str, Any]:
    """The drug follows a one-compartment model with first-order absorption from the gut
    and Michaelis-Menten (saturable) elimination, as phenytoin or ethanol do:
    - `n_doses` doses of `dose_mg` mg are taken every `interval_h` hours, the first at
      t = 0; of each, the fraction `bioavailability` reaches the gut depot (the rest is
      lost), and the depot empties into the body at the rate `ka_per_h` times the
      amount still in it (per hour).
    - The body is one well-mixed volume of `volume_l` litres; the plasma concentration
      is the amount in the body divided by the volume.
    - The body eliminates `vmax_mg_per_h * C / (km_mg_per_l + C)` mg per hour at
      concentration C (mg/L): proportional to C when C is well below `km_mg_per_l`,
      close to the ceiling `vmax_mg_per_h` when C is well above it. When the dosing
      rate exceeds that ceiling the drug keeps accumulating.
    - Gut and body start empty. The course is observed until one interval after the
      last dose, T_end = `n_doses` * `interval_h` hours. Nothing has a closed form:
      the curve is the solution of the two differential equations, integrated
      accurately (relative error 1e-6 or better).

    Outputs (C is the plasma concentration, t in hours):
    - `cmax_mg_per_l`: the highest C over [0, T_end].
    - `tmax_last_h`: when C is highest within the last dosing interval, in hours after
      the last dose (0.0 when C only falls after that dose; the earliest of equal maxima).
    - `ctrough_mg_per_l`: C at T_end (the trough after the last dose).
    - `auc_mg_h_per_l`: the area under C(t) from 0 to T_end (mg*h/L).
    - `time_above_mec_h`: the total time within [0, T_end] during which C exceeds the
      minimum effective concentration `mec_mg_per_l`.
    - `accumulation_ratio`: the highest C within the last interval divided by the
      highest C within the first (1.0 for a single dose).

    Tolerances, and why:
    - cmax, ctrough, auc, accumulation_ratio: 0.01 % relative (ctrough also 1e-6 mg/L
      absolute, since a fast-eliminated trough is ~0 and only its absolute error is
      meaningful). Two accurate ODE solvers (any method at a relative tolerance of
      1e-7 or tighter) agree to better than 1e-6; a wrong model (linear elimination,
      instant absorption, bioavailability applied twice, a lost dose) is off by
      percents. A default-accuracy solver (1e-3) is not accurate enough, on purpose.
    - tmax_last_h, time_above_mec_h: 0.01 h (36 s). Locating a maximum or an MEC
      crossing by root finding agrees to ~1e-6 h; a time grid of 0.01 h or finer
      also passes; off-by-one-interval or wrong-rate errors are off by hours.
    """
    from . import reference  # imported here so that `recon list` stays cheap

    out, pieces = reference.simulate(params)
    lines = ["t_min,conc_mg_per_l"]
    # 4 significant digits: the precision of a plasma assay (and short enough that a
    # published number can never spell out a hidden value for recon's leak audit).
    lines += [f"{m},{c:.4g}" for m, c in reference.profile(params, pieces)]
    (Path(evidence) / "profile.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out
