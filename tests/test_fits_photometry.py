"""Tests of the built-in `fits_photometry` oracle with real reproject / astropy / scipy (no mocks)."""
from __future__ import annotations

import csv
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("reproject")
# reproject, dask and astropy announce deprecations of their own on import
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning")

import numpy as np  # noqa: E402
from astropy.io import fits  # noqa: E402
from astropy.wcs import WCS  # noqa: E402

from recon import Registry  # noqa: E402
from recon.artifacts.fits_photometry import SATURATE, exposures, fits_photometry  # noqa: E402
from recon.artifacts.fits_photometry import reference as ref  # noqa: E402
from recon.audit import grade_baselines  # noqa: E402
from recon.build import build_task  # noqa: E402

FIELDS = {"mosaic_nx", "mosaic_ny", "mosaic_pixel_arcsec", "mosaic_ra_deg", "mosaic_dec_deg", "footprint_arcmin2",
          "full_overlap_fraction", "masked_pixels", "cosmic_rays", "sky_rates", "mosaic_noise", "n_sources",
          "n_flagged", "brightest_fluxes", "brightest_ra_deg", "brightest_dec_deg", "total_flux"}
EVIDENCE = {"stages.json", "sources.csv", "mosaic.fits"}


def params(**kw: Any) -> dict[str, Any]:
    base = {"method": "interp", "n_exposures": 3, "pixel_scale_arcsec": 0.5, "max_rotation_deg": 30.0,
            "dither_arcsec": 8.0, "seeing_arcsec": 1.6, "sky_rate": 2.0, "star_density": 20.0, "cosmic_rays": 30,
            "aperture_arcsec": 2.5, "seed": 1}
    base.update(kw)
    return base


def run(p: dict[str, Any], root: Path) -> tuple[dict[str, Any], Path, dict[str, Path]]:
    inputs = fits_photometry.make_inputs(p, root / "inputs")
    return fits_photometry(p, root / "evidence", inputs), root / "evidence", inputs


def scenario(p: dict[str, Any], inputs: dict[str, Path]) -> dict[str, Any]:
    return {"task": "fits_photometry", "id": "public_1", "parameters": p,
            "inputs": {k: str(v) for k, v in inputs.items()}}


def mismatches(got: dict[str, Any], want: dict[str, Any]) -> set[str]:
    return {f for f, o in fits_photometry.outputs.items() if not o.compare(got[f], want[f])}


def check_outputs(out: dict[str, Any], n_exp: int) -> None:
    assert set(out) == FIELDS
    json.dumps(out, allow_nan=False)
    assert len(out["sky_rates"]) == n_exp and all(s > 0 for s in out["sky_rates"])
    assert 0 <= out["n_flagged"] <= out["n_sources"] and len(out["brightest_fluxes"]) <= 5
    assert out["brightest_fluxes"] == sorted(out["brightest_fluxes"], reverse=True)
    assert 0.0 <= out["full_overlap_fraction"] <= 1.0 and out["footprint_arcmin2"] > 0
    assert out["cosmic_rays"] <= out["masked_pixels"]


@pytest.fixture(scope="module", params=["interp", "exact"])
def field(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    p = params(method=request.param)
    out, ev, inputs = run(p, tmp_path_factory.mktemp(request.param))
    return p, out, ev, inputs


def test_declaration() -> None:
    o = fits_photometry
    assert o.name == "fits_photometry" and o.domain == "astronomy"
    assert set(o.toolkit) == {"numpy", "scipy", "astropy"} and o.requires == ("reproject",)
    assert set(o.outputs) == FIELDS and set(o.evidence) == EVIDENCE and o.evidence_level == "summary"
    assert o.evidence_reveals == {"stages.json": "summary", "sources.csv": "outputs", "mosaic.fits": "trace"}
    for word in ("find_optimal_celestial_wcs", "unit vectors", "[-0.5, 0)", "int(min x + 0.5)", "6 noise(m3)",
                 "d > 3 m3", "sigma 3", "F / sigma > 5", "at least 5 pixels", "2r .. 3r", "Tolerances, and why"):
        assert word in o.recipe, word
    public = o.public()
    what = " ".join([public["description"], *(a["doc"] for a in public["axes"].values()),
                     *(v["doc"] for v in public["outputs"].values()), *public["input_docs"].values(),
                     *public["evidence"].values()]).lower()
    for word in ("median", "unit vector", "clamp", "3x3", "sigma_clipped", "inverse-variance", "2r", "8-connected"):
        assert word not in what, word
    assert (ref.CR_SIGMA, ref.CR_CONTRAST, ref.DETECT_SIGMA, ref.MIN_PIXELS, ref.ANNULUS) == (6.0, 3.0, 5.0, 5, (2.0, 3.0))


def test_inputs_are_fits_frames_with_their_defects(tmp_path: Path) -> None:
    p = params(n_exposures=2, cosmic_rays=60, max_rotation_deg=180.0)
    files = fits_photometry.make_inputs(p, tmp_path)
    assert set(files) == {"exposure_1", "exposure_2"}
    truth = exposures(p)
    for k, name in enumerate(sorted(files)):
        assert files[name].stat().st_size < 200_000
        with fits.open(files[name]) as h:
            assert h[0].data.dtype == np.dtype(">f4") and h["MASK"].data.dtype == np.uint8
            w = WCS(h[0].header)
            assert w.wcs.ctype[0] == "RA---TAN" and h[0].header["SATURATE"] == SATURATE
            assert h["MASK"].data.sum() >= 5 and (h[0].data >= SATURATE).sum() >= 0
            scale = math.sqrt(abs(np.linalg.det(w.pixel_scale_matrix))) * 3600
            assert scale == pytest.approx(truth[k]["scale"], rel=1e-9)
    assert truth[0]["scale"] == p["pixel_scale_arcsec"] and truth[1]["scale"] >= truth[0]["scale"]


def test_evidence_matches_outputs(field: Any) -> None:
    p, out, ev, _ = field
    check_outputs(out, 3)
    assert {f.name for f in ev.iterdir()} == EVIDENCE
    st = json.loads((ev / "stages.json").read_text(encoding="utf-8"))
    assert st["mosaic"]["shape"] == [out["mosaic_ny"], out["mosaic_nx"]]
    assert sum(e["cosmic_ray_pixels"] for e in st["exposures"]) == out["cosmic_rays"]
    assert sum(e["bad_pixels"] + e["saturated_pixels"] + e["cosmic_ray_pixels"] for e in st["exposures"]) \
        == out["masked_pixels"]
    rows = list(csv.DictReader((ev / "sources.csv").read_text(encoding="utf-8").splitlines()))
    assert len(rows) == out["n_sources"] == st["detection"]["segments"]
    assert sum(int(r["flagged"]) for r in rows) == out["n_flagged"]
    with fits.open(ev / "mosaic.fits") as h:
        assert h[0].data.shape == (out["mosaic_ny"], out["mosaic_nx"]) and h["WEIGHT"].data.shape == h[0].data.shape
        assert (h["WEIGHT"].data > 0).sum() == st["mosaic"]["covered_pixels"]


def test_reference_program_matches_oracle(field: Any) -> None:
    p, out, _, inputs = field
    proc = subprocess.run([sys.executable, str(fits_photometry.reference)], input=json.dumps(scenario(p, inputs)),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert mismatches(json.loads(proc.stdout), out) == set()


def test_grid_and_resampling_follow_reproject(field: Any) -> None:
    """The reference's own grid, interp and exact resampling against reproject itself."""
    from reproject import reproject_exact, reproject_interp
    from reproject.mosaicking import find_optimal_celestial_wcs

    p, out, _, inputs = field
    exps = [ref.load_exposure(str(inputs[k])) for k in sorted(inputs)]
    mine, shape = ref.optimal_grid(exps)
    theirs, shape2 = find_optimal_celestial_wcs([(e["shape"], e["wcs"]) for e in exps], frame="icrs",
                                                negative_lon_cdelt=True)
    assert shape == shape2 and np.allclose(mine.wcs.crpix, theirs.wcs.crpix, atol=1e-9)
    assert np.allclose(mine.wcs.crval, theirs.wcs.crval, atol=1e-12, rtol=0)
    e = exps[1]
    fn, own = (reproject_exact, ref.resample_exact) if p["method"] == "exact" else (reproject_interp, ref.resample_interp)
    arr, foot = fn((e["sb"], e["wcs"]), theirs, shape_out=shape)
    arr2, foot2 = own(e, mine, shape)
    assert np.array_equal(np.isnan(arr), np.isnan(arr2))
    ok = ~np.isnan(arr)
    assert np.allclose(arr[ok], arr2[ok], rtol=1e-7, atol=1e-9) and np.allclose(foot, foot2, atol=1e-7)


def test_wrong_rules_fail(field: Any) -> None:
    p, out, _, inputs = field
    sc = scenario(p, inputs)

    def patched(**swap: Any) -> dict[str, Any]:
        old = {k: getattr(ref, k) for k in swap}
        try:
            for k, v in swap.items():
                setattr(ref, k, v)
            return ref.solve(sc)
        finally:
            for k, v in old.items():
                setattr(ref, k, v)

    assert mismatches(patched(CR_SIGMA=4.0), out) >= {"cosmic_rays", "masked_pixels"}
    assert mismatches(patched(ANNULUS=(1.5, 2.5)), out) >= {"brightest_fluxes", "total_flux"}
    assert "sky_rates" in mismatches(patched(CLIP_SIGMA=2.5), out)


def test_total_at_corners(tmp_path: Path) -> None:
    ax = fits_photometry.axes
    for i in range(2):
        corner = {n: ax[n].edges()[i] for n in ax if n not in ("seed", "method", "n_exposures")}
        corner.update(method=["interp", "exact"][i], n_exposures=[2, 3][i], seed=[0, 2**31 - 1][i])
        out, _, inputs = run(corner, tmp_path / f"c{i}")
        check_outputs(out, corner["n_exposures"])
        assert mismatches(ref.solve(scenario(corner, inputs)), out) == set()
    a, _, _ = run(params(seed=9), tmp_path / "a")
    b, _, _ = run(params(seed=9), tmp_path / "b")
    assert a == b


def test_small_build_reference_and_baselines(tmp_path_factory: pytest.TempPathFactory) -> None:
    from recon.grader import grade

    registry = Registry.default(entry_points=False)
    task = build_task(registry, "fits_photometry", tmp_path_factory.mktemp("fits_small"), n_public=2, n_hidden=1,
                      probes=1, workers=1, select="random").path
    rows = {r.name: r for r in grade_baselines(task, fits_photometry, runtime="local")}
    assert set(rows) == {"textbook", "expert"}
    for row in rows.values():
        assert 0.5 < row.reward < 1.0, (row.name, row.reward, row.detail)
    assert grade(task, task / "solution", runtime="local", workers=1)["reward"] == 1.0
