"""Tests of the built-in `xrd_lattice` oracle with real pymatgen / numpy / scipy (no mocks)."""
from __future__ import annotations

import csv
import json
import math
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pymatgen")
# pymatgen and spglib announce deprecations of their own on import and symmetry analysis
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

import numpy as np  # noqa: E402

from recon import Registry  # noqa: E402
from recon.artifacts.xrd_lattice import PHASES, make_inputs, scan, xrd_lattice  # noqa: E402
from recon.artifacts.xrd_lattice import reference as ref  # noqa: E402
from recon.audit import grade_baselines  # noqa: E402
from recon.build import build_task  # noqa: E402

FIELDS = {"peaks_found", "peaks_indexed", "indexed_hkl", "unindexed_two_theta_deg", "zero_shift_deg", "a_angstrom",
          "c_angstrom", "cell_volume_a3", "strain_a_pct", "strain_c_pct", "volume_strain_pct", "peak_shifts_deg",
          "fit_rms_deg", "strongest_hkl", "strongest_fwhm_deg", "scherrer_size_nm", "wh_size_nm",
          "wh_microstrain_pct"}
EVIDENCE = {"reference_pattern.csv", "peaks.csv", "refinement.json", "ka2_stripped.csv"}


def params(**kw: Any) -> dict[str, Any]:
    base = {"phase": "CeO2", "dopant_fraction": 0.1, "strain_pct": 0.2, "anisotropy_pct": 0.1, "zero_shift_deg": 0.05,
            "crystallite_nm": 40.0, "microstrain_pct": 0.05, "peak_counts": 3000.0, "step_deg": 0.02,
            "two_theta_max": 110.0, "impurity": True, "seed": 3}
    base.update(kw)
    return base


def run(p: dict[str, Any], root: Path) -> tuple[dict[str, Any], Path, dict[str, Path]]:
    inputs = xrd_lattice.make_inputs(p, root / "inputs")
    return xrd_lattice(p, root / "evidence", inputs), root / "evidence", inputs


def scenario(p: dict[str, Any], inputs: dict[str, Path]) -> dict[str, Any]:
    return {"task": "xrd_lattice", "id": "public_1", "parameters": p, "inputs": {k: str(v) for k, v in inputs.items()}}


def mismatches(got: dict[str, Any], want: dict[str, Any]) -> set[str]:
    return {f for f, o in xrd_lattice.outputs.items() if not o.compare(got[f], want[f])}


def check_outputs(out: dict[str, Any]) -> None:
    assert set(out) == FIELDS
    json.dumps(out, allow_nan=False)
    assert type(out["peaks_found"]) is int and type(out["peaks_indexed"]) is int
    assert 0 <= out["peaks_indexed"] <= out["peaks_found"]
    assert len(out["indexed_hkl"]) == len(out["peak_shifts_deg"]) == out["peaks_indexed"]
    assert len(out["unindexed_two_theta_deg"]) == out["peaks_found"] - out["peaks_indexed"]
    assert out["unindexed_two_theta_deg"] == sorted(out["unindexed_two_theta_deg"])
    assert out["fit_rms_deg"] >= 0 and out["scherrer_size_nm"] >= 0 and out["wh_size_nm"] >= 0


@pytest.fixture(scope="module")
def ceria(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], dict[str, Any], Path, dict[str, Path]]:
    p = params()
    out, ev, inputs = run(p, tmp_path_factory.mktemp("ceria"))
    return p, out, ev, inputs


# --------------------------------------------------------------------- declaration
def test_declaration() -> None:
    assert xrd_lattice.name == "xrd_lattice" and xrd_lattice.domain == "materials science"
    assert set(xrd_lattice.toolkit) == {"numpy", "scipy"} and xrd_lattice.requires == ("pymatgen",)
    assert set(xrd_lattice.outputs) == FIELDS and set(xrd_lattice.evidence) == EVIDENCE
    assert xrd_lattice.evidence_level == "summary" and xrd_lattice.evidence_reveals["ka2_stripped.csv"] == "trace"
    assert len(xrd_lattice.stages) >= 4
    for word in ("41.78214", "round(2theta / 1e-5)", "1e-3", "largest member", "Rachinger", "0.08 / step",
                 "5 sqrt(max(base", "h = max(0.25, 3 w)", "k = -100..100", "0.15 degree", "0.10 degree",
                 "quadrature", "0.9 Ka1", "Tolerances, and why"):
        assert word in xrd_lattice.recipe, word
    public = xrd_lattice.public()
    what = " ".join([public["description"], *(a["doc"] for a in public["axes"].values()),
                     *(o["doc"] for o in public["outputs"].values()), *public["input_docs"].values(),
                     *public["evidence"].values()]).lower()
    for word in ("rachinger", "savitzky", "prominence", "pseudo-voigt doublet", "0.9", "quadrature", "median of",
                 "grid", "41.78", "largest member"):
        assert word not in what, word
    assert (ref.SMOOTH_DEG, ref.PROMINENCE_SIGMA, ref.WINDOW_FWHM, ref.GRID_TOL, ref.MATCH_TOL,
            ref.SCHERRER_K) == (0.08, 5.0, 3.0, 0.15, 0.10, 0.9)


# --------------------------------------------------------------------------- inputs
def test_inputs_are_a_cif_and_a_realistic_scan(tmp_path: Path) -> None:
    from pymatgen.io.cif import CifParser

    p = params(phase="ZnO", step_deg=0.01, two_theta_max=125.0)
    files = xrd_lattice.make_inputs(p, tmp_path)
    assert set(files) == {"phase", "pattern"}
    assert files["pattern"].stat().st_size < 1_000_000
    structure = CifParser(str(files["phase"])).parse_structures(primitive=False)[0]
    assert structure.composition.reduced_formula == "ZnO" and len(structure) == 4
    assert structure.lattice.a == pytest.approx(3.2498) and structure.lattice.c == pytest.approx(5.2066)
    pat = ref.read_pattern(str(files["pattern"]))
    assert (pat["lambda1"], pat["lambda2"], pat["ratio"]) == (1.54056, 1.54439, 0.5)
    assert pat["tth"][0] == 20.0 and pat["tth"][-1] == pytest.approx(125.0) and np.allclose(np.diff(pat["tth"]), 0.01)
    assert np.all(pat["y"] == np.round(pat["y"])) and pat["y"].min() > 0      # background everywhere
    # the sample's cell is the reference cell, doped (Vegard) and strained
    truth = scan(p)
    ph = PHASES["ZnO"]
    assert truth["a"] == pytest.approx(ph["cell"][0] * (1 + ph["vegard"][0] * 0.1) * 1.002)
    assert truth["c"] == pytest.approx(ph["cell"][1] * (1 + ph["vegard"][1] * 0.1) * 1.003)


def test_reference_reflections_equal_pymatgen() -> None:
    """The reference's own form factors, binning, absences and labels reproduce
    XRDCalculator for every phase (the oracle's core)."""
    from pymatgen.analysis.diffraction.xrd import XRDCalculator
    from pymatgen.io.cif import CifParser, CifWriter

    from recon.artifacts.xrd_lattice import _structure

    for name, ph in PHASES.items():
        text = str(CifWriter(_structure(name, *ph["cell"]), symprec=0.01))
        path = Path(f"/tmp/xrd_lattice_test_{name}.cif")
        path.write_text(text, encoding="utf-8")
        mine = ref.reflections(ref.read_cif(str(path)), 1.54056, (20.0, 125.0))
        s = CifParser(str(path)).parse_structures(primitive=False)[0]
        pm = XRDCalculator(wavelength=1.54056).get_pattern(s, two_theta_range=(20.0, 125.0))
        path.unlink()
        assert len(mine) == len(pm.x), name
        for r, t, inten, fams, d in zip(mine, pm.x, pm.y, pm.hkls, pm.d_hkls):
            assert r["tth"] == pytest.approx(t, abs=1e-9) and r["d"] == pytest.approx(d, rel=1e-12)
            assert r["intensity"] == pytest.approx(inten, rel=1e-6)
            assert r["label"] == "/".join(" ".join(map(str, f)) for f in sorted(tuple(f["hkl"]) for f in fams))
    # the absences of the diamond structure and the 4-index hexagonal labels
    assert ref.crystal_system(227) == "cubic" and ref.crystal_system(186) == "hexagonal"


# ------------------------------------------------------------------------- evidence
def test_evidence_matches_outputs(ceria: Any) -> None:
    p, out, ev, _ = ceria
    check_outputs(out)
    assert {f.name for f in ev.iterdir()} == EVIDENCE
    rows = list(csv.DictReader((ev / "peaks.csv").read_text(encoding="utf-8").splitlines()))
    assert len(rows) == out["peaks_found"]
    assert [r["hkl"] for r in rows if r["hkl"]] == out["indexed_hkl"]
    assert sum(1 for r in rows if not r["hkl"]) == len(out["unindexed_two_theta_deg"]) >= 3   # the impurity
    summary = json.loads((ev / "refinement.json").read_text(encoding="utf-8"))
    assert summary["crystal_system"] == "cubic" and summary["indexed"] == out["peaks_indexed"]
    assert summary["rounds"][-1]["cell"][0] == float(f"{out['a_angstrom']:.4g}")
    refl = list(csv.DictReader((ev / "reference_pattern.csv").read_text(encoding="utf-8").splitlines()))
    assert refl[0]["hkl"] == "1 1 1" and float(refl[0]["relative_intensity"]) == 100.0
    assert "3 3 3/5 1 1" in {r["hkl"] for r in refl}
    for path in ev.iterdir():          # at most 4 significant digits in every computed number
        text = path.read_text(encoding="utf-8")
        if path.name == "ka2_stripped.csv":
            text = "\n".join(line.split(",", 1)[-1] for line in text.splitlines())   # past the scan's own grid
        for tok in re.findall(r"\d+\.\d+(?:e-?\d+)?", text):
            assert len(tok.split("e")[0].replace(".", "").lstrip("0").rstrip("0")) <= 4, (path.name, tok)


def test_refined_cell_recovers_the_sample(ceria: Any) -> None:
    p, out, _, _ = ceria
    truth = scan(p)
    assert out["a_angstrom"] == pytest.approx(truth["a"], abs=5e-4)
    assert out["zero_shift_deg"] == pytest.approx(p["zero_shift_deg"], abs=0.01)
    assert out["strain_a_pct"] == pytest.approx((truth["a"] / 5.4113 - 1) * 100, abs=0.01)
    assert out["indexed_hkl"][:3] == ["1 1 1", "2 0 0", "2 2 0"] and out["strongest_hkl"] == "1 1 1"
    assert 20.0 < out["scherrer_size_nm"] < 60.0 and out["fit_rms_deg"] < 0.02


# ------------------------------------------------- tolerances: independent vs wrong
def _patched(sc: dict[str, Any], **swap: Any) -> dict[str, Any]:
    old = {k: getattr(ref, k) for k in swap}
    try:
        for k, v in swap.items():
            setattr(ref, k, v)
        return ref.solve(sc)
    finally:
        for k, v in old.items():
            setattr(ref, k, v)


def _default_tolerances(*a: Any, **k: Any) -> Any:
    from scipy.optimize import least_squares

    for t in ("xtol", "ftol", "gtol"):
        k.pop(t, None)
    return least_squares(*a, **k)


def test_an_independent_solver_passes_and_wrong_rules_fail(ceria: Any) -> None:
    p, out, _, inputs = ceria
    sc = scenario(p, inputs)
    assert mismatches(_patched(sc, least_squares=_default_tolerances), out) == set()
    wrong = {
        "no Ka2 in the fit": ({"ka2_position": lambda t, l1, l2: t + 50.0}, {"a_angstrom", "zero_shift_deg"}),
        "Scherrer K 0.94": ({"SCHERRER_K": 0.94}, {"scherrer_size_nm", "wh_size_nm"}),
        "no Ka2 stripping": ({"ka2_strip": lambda tth, y, *a: y.astype(float)}, {"a_angstrom", "fit_rms_deg"}),
        "narrow windows": ({"WINDOW_FWHM": 2.5}, {"peak_shifts_deg", "fit_rms_deg"}),
    }
    for name, (swap, must) in wrong.items():
        failed = mismatches(_patched(sc, **swap), out)
        assert must <= failed, (name, failed)


def test_reference_program_matches_oracle(ceria: Any) -> None:
    p, out, _, inputs = ceria
    proc = subprocess.run([sys.executable, str(xrd_lattice.reference)], input=json.dumps(scenario(p, inputs)),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert mismatches(json.loads(proc.stdout), out) == set()


@pytest.mark.parametrize("phase", ["Si", "TiO2", "ZnO"])
def test_reference_matches_oracle_on_other_systems(tmp_path: Path, phase: str) -> None:
    p = params(phase=phase, impurity=phase == "TiO2", anisotropy_pct=-0.2, seed=17)
    out, _, inputs = run(p, tmp_path)
    check_outputs(out)
    assert mismatches(ref.solve(scenario(p, inputs)), out) == set()
    if phase == "ZnO":
        assert "1 0 -1 1" in out["indexed_hkl"] and "2 -1 -1 0" in out["indexed_hkl"]
        assert out["c_angstrom"] != out["a_angstrom"]
    if phase == "Si":
        assert "2 0 0" not in out["indexed_hkl"] and "2 2 2" not in out["indexed_hkl"]   # diamond absences


def test_deterministic_and_total_at_corners(tmp_path: Path) -> None:
    a, _, _ = run(params(seed=5), tmp_path / "a")
    b, _, _ = run(params(seed=5), tmp_path / "b")
    assert a == b
    ax = xrd_lattice.axes
    for i, phase in enumerate(("MgO", "SrTiO3")):
        corner = {n: ax[n].edges()[i] for n in ax if n not in ("phase", "seed", "impurity", "step_deg")}
        corner.update(phase=phase, impurity=bool(i), step_deg=ax["step_deg"].edges()[i], seed=2**31 - 1)
        out, _, _ = run(corner, tmp_path / f"c{i}")
        check_outputs(out)
        assert out["peaks_indexed"] >= 3


# ------------------------------------------------------------------ built task
def test_small_build_reference_and_baselines(tmp_path_factory: pytest.TempPathFactory) -> None:
    registry = Registry.default(entry_points=False)
    task = build_task(registry, "xrd_lattice", tmp_path_factory.mktemp("xrd_small"), n_public=2, n_hidden=1,
                      probes=1, workers=1, select="random").path
    rows = {r.name: r for r in grade_baselines(task, xrd_lattice, runtime="local")}
    assert set(rows) == {"textbook", "expert"}
    for row in rows.values():
        assert 0.5 < row.reward < 1.0, (row.name, row.reward, row.detail)
    from recon.grader import grade

    assert grade(task, task / "solution", runtime="local", workers=1)["reward"] == 1.0
