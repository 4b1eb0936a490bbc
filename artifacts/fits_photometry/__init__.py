"""Built-in oracle `fits_photometry`: mosaic overlapping FITS exposures with reproject and
measure the sources of the co-added image."""
from __future__ import annotations

import json
import math
import warnings
from pathlib import Path
from typing import Any

from recon import Choice, Evidence, Float, Int, Integer, Number, SequenceOf, Seed, oracle

SATURATE = 42000.0     # ADU, where the detector's response ends
GRID = ["mosaic_nx", "mosaic_ny", "mosaic_pixel_arcsec", "mosaic_ra_deg", "mosaic_dec_deg"]  # the common grid


def _g4(v: float) -> float:
    return float(f"{v:.4g}")


def exposures(params: dict[str, Any]) -> list[dict[str, Any]]:
    """The scenario's exposures (deterministic in params): a star field seen through two
    or three pointings with their own rotation, pixel scale, seeing, sky, exposure time,
    gain, bad pixels, cosmic rays and saturation. Returns data (ADU), mask and header
    cards per exposure, plus the true stars."""
    import numpy as np

    rng = np.random.default_rng(int(params["seed"]))
    ra0 = float(rng.uniform(0.0, 360.0))
    dec0 = float(rng.uniform(-60.0, 60.0))
    n_exp = int(params["n_exposures"])
    base_scale = float(params["pixel_scale_arcsec"])
    dither = float(params["dither_arcsec"])
    rot_max = float(params["max_rotation_deg"])
    cosdec = math.cos(math.radians(dec0))
    # the stars: uniform over a field larger than any pointing, power-law fluxes (e-/s)
    half = 0.5 * 90 * 0.75 + dither + 10.0      # arcsec
    n_star = int(rng.poisson(float(params["star_density"]) * (2 * half / 60.0) ** 2))
    sx = rng.uniform(-half, half, n_star)
    sy = rng.uniform(-half, half, n_star)
    flux = 30.0 * (1.0 - rng.random(n_star)) ** (-1.0 / 0.9)
    flux = np.minimum(flux, 6.0e4)
    stars = {"ra": ra0 + sx / 3600.0 / cosdec, "dec": dec0 + sy / 3600.0, "flux": flux}
    out = []
    for k in range(n_exp):
        scale = base_scale * (1.0 if k == 0 else float(rng.uniform(1.0, 1.45)))
        rot = float(rng.uniform(-rot_max, rot_max)) if k else float(rng.uniform(-1.0, 1.0)) * min(rot_max, 5.0)
        ny, nx = int(rng.integers(64, 91)), int(rng.integers(64, 91))
        off = rng.uniform(-dither, dither, 2)
        cra = ra0 + off[0] / 3600.0 / cosdec
        cdec = dec0 + off[1] / 3600.0
        s = scale / 3600.0
        c, si = math.cos(math.radians(rot)), math.sin(math.radians(rot))
        cd = [[-s * c, s * si], [s * si, s * c]]
        crpix = [(nx + 1) / 2 + float(rng.uniform(-3, 3)), (ny + 1) / 2 + float(rng.uniform(-3, 3))]
        exptime = float(rng.choice([30.0, 60.0, 120.0]))
        gain = _g4(rng.uniform(1.2, 2.6))
        rdnoise = _g4(rng.uniform(3.0, 8.0))
        seeing = float(params["seeing_arcsec"]) * float(rng.uniform(0.9, 1.15))
        sky_rate = float(params["sky_rate"]) * float(rng.uniform(0.8, 1.25))   # e-/s/arcsec^2
        header = {"CTYPE1": "RA---TAN", "CTYPE2": "DEC--TAN", "CUNIT1": "deg", "CUNIT2": "deg",
                  "CRVAL1": cra, "CRVAL2": cdec, "CRPIX1": crpix[0], "CRPIX2": crpix[1],
                  "CD1_1": cd[0][0], "CD1_2": cd[0][1], "CD2_1": cd[1][0], "CD2_2": cd[1][1],
                  "EXPTIME": exptime, "GAIN": gain, "RDNOISE": rdnoise, "SATURATE": SATURATE}
        out.append({"header": header, "shape": (ny, nx), "scale": scale, "seeing": seeing, "sky_rate": sky_rate})
    for k, e in enumerate(out):
        e.update(_render(e, stars, params, rng))
    return out


def _render(e: dict[str, Any], stars: dict[str, Any], params: dict[str, Any], rng: Any) -> dict[str, Any]:
    import numpy as np
    from astropy.wcs import WCS

    h = e["header"]
    ny, nx = e["shape"]
    w = WCS(naxis=2)
    w.wcs.ctype = [h["CTYPE1"], h["CTYPE2"]]
    w.wcs.crval = [h["CRVAL1"], h["CRVAL2"]]
    w.wcs.crpix = [h["CRPIX1"], h["CRPIX2"]]
    w.wcs.cd = [[h["CD1_1"], h["CD1_2"]], [h["CD2_1"], h["CD2_2"]]]
    x, y = w.all_world2pix(stars["ra"], stars["dec"], 0)
    sig = e["seeing"] / e["scale"] / 2.3548                     # pixels
    electrons = np.zeros((ny, nx))
    yy, xx = np.mgrid[0:ny, 0:nx]
    sub = (np.arange(3) - 1) / 3.0
    pixarea = e["scale"] ** 2
    for xs, ys, f in zip(x, y, stars["flux"]):
        if not (-8 < xs < nx + 8 and -8 < ys < ny + 8):
            continue
        x0, x1 = max(0, int(xs) - 8), min(nx, int(xs) + 9)
        y0, y1 = max(0, int(ys) - 8), min(ny, int(ys) + 9)
        if x1 <= x0 or y1 <= y0:
            continue
        gx, gy = xx[y0:y1, x0:x1], yy[y0:y1, x0:x1]
        acc = np.zeros(gx.shape)
        for du in sub:
            for dv in sub:
                acc += np.exp(-0.5 * (((gx + du - xs) ** 2 + (gy + dv - ys) ** 2) / sig ** 2))
        electrons[y0:y1, x0:x1] += f * h["EXPTIME"] * acc / 9.0 / (2 * math.pi * sig * sig)
    gx = (xx - nx / 2) / nx
    gy = (yy - ny / 2) / ny
    sky = e["sky_rate"] * pixarea * h["EXPTIME"] * (1.0 + 0.06 * gx - 0.04 * gy)
    counts = rng.poisson(np.maximum(electrons + sky, 0.0)).astype(float)
    adu = counts / h["GAIN"] + rng.normal(0.0, h["RDNOISE"] / h["GAIN"], counts.shape) + 100.0 * 0
    # cosmic rays: single pixels and short tracks
    n_cr = int(params["cosmic_rays"])
    for _ in range(n_cr):
        cy, cx = int(rng.integers(1, ny - 1)), int(rng.integers(1, nx - 1))
        amp = float(rng.uniform(400.0, 6000.0))
        adu[cy, cx] += amp
        if rng.random() < 0.4:
            dy, dx = [(0, 1), (1, 0), (1, 1)][int(rng.integers(0, 3))]
            adu[min(cy + dy, ny - 1), min(cx + dx, nx - 1)] += amp * float(rng.uniform(0.4, 0.9))
    # saturation: the detector stops at SATURATE
    adu = np.minimum(adu, SATURATE)
    # bad pixels: a hot column segment and scattered dead or hot pixels
    mask = np.zeros((ny, nx), dtype=np.uint8)
    col = int(rng.integers(5, nx - 5))
    r0 = int(rng.integers(0, ny // 2))
    mask[r0:, col] = 1
    n_bad = int(rng.integers(5, 25))
    mask[rng.integers(0, ny, n_bad), rng.integers(0, nx, n_bad)] = 1
    bad = mask.astype(bool)
    adu[bad] = np.where(rng.random(int(bad.sum())) < 0.5, 0.0, float(rng.uniform(2e4, 6e4)))
    return {"data": np.round(adu, 2).astype(np.float32), "mask": mask}


def make_inputs(params: dict[str, Any], directory: Path) -> None:
    """Write exposure_1.fits .. exposure_N.fits: the image (ADU, float32) in the primary
    HDU with its TAN WCS and detector cards, the bad-pixel mask as image extension MASK."""
    import numpy as np
    from astropy.io import fits

    for k, e in enumerate(exposures(params), start=1):
        hdr = fits.Header()
        for key, val in e["header"].items():
            hdr[key] = val
        hdr["BUNIT"] = "adu"
        hdr["FILTER"] = "r"
        hdr["OBJECT"] = "field"
        prim = fits.PrimaryHDU(data=e["data"], header=hdr)
        mask = fits.ImageHDU(data=np.asarray(e["mask"], dtype=np.uint8), name="MASK")
        fits.HDUList([prim, mask]).writeto(Path(directory) / f"exposure_{k}.fits", overwrite=True)


# ------------------------------------------------------------------------ the evidence
def _round4(a: Any) -> Any:
    """Every finite value to 4 significant digits (0 and non-finite values unchanged)."""
    import numpy as np

    a = np.asarray(a, dtype=np.float64)
    ok = np.isfinite(a) & (a != 0)
    mag = np.floor(np.log10(np.abs(np.where(ok, a, 1.0))))
    f = 10.0 ** (3 - mag)
    return np.where(ok, np.round(a * f) / f, a)


def _write_evidence(evidence: Path, out: dict[str, Any], detail: dict[str, Any]) -> None:
    import numpy as np
    from astropy.io import fits

    w = detail["wcs"]
    summary = {
        "exposures": [{"bad_pixels": e["bad"], "saturated_pixels": e["saturated"], "cosmic_ray_pixels": e["cosmic"],
                       "sky_adu": _g4(e["sky_adu"]), "noise_adu": _g4(e["noise_adu"]),
                       "weight": _g4(e["weight"])} for e in detail["exposures"]],
        "mosaic": {"shape": list(detail["shape"]), "crpix": [_g4(v) for v in w.wcs.crpix],
                   "cdelt_arcsec": [_g4(v * 3600.0) for v in w.wcs.cdelt], "ctype": list(w.wcs.ctype),
                   "covered_pixels": int((detail["coadd"]["weight"] > 0).sum()),
                   "covered_by_each": [int(c.sum()) for c in detail["coadd"]["covered"]]},
        "detection": {"segments": len(detail["sources"]), "aperture_radius_pix": _g4(detail["radius"])},
    }
    (evidence / "stages.json").write_text(json.dumps(summary, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    rows = ["x_pix,y_pix,east_arcsec,north_arcsec,segment_pixels,annulus_sky,flux_e_per_s,flagged"]
    ra0, dec0 = w.wcs.crval
    for s in detail["sources"]:
        ra, dec = w.all_pix2world([s["x"]], [s["y"]], 0)
        east = ((ra[0] - ra0 + 180.0) % 360.0 - 180.0) * math.cos(math.radians(dec0)) * 3600.0
        rows.append(f"{_g4(s['x'])},{_g4(s['y'])},{_g4(east)},{_g4((dec[0] - dec0) * 3600.0)},{s['npix']},"
                    f"{_g4(s['bkg'])},{_g4(s['flux'])},{int(s['flagged'])}")
    (evidence / "sources.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    img = _round4(detail["flux"]).astype(np.float32)
    wt = _round4(detail["coadd"]["weight"]).astype(np.float32)
    hdr = w.to_header()
    fits.HDUList([fits.PrimaryHDU(img, header=hdr), fits.ImageHDU(wt, header=hdr, name="WEIGHT")]).writeto(
        evidence / "mosaic.fits", overwrite=True)


@oracle(
    name="fits_photometry",
    version="1.1.0",
    title="FITS mosaicking and aperture photometry",
    domain="astronomy",
    toolkit=["numpy", "scipy", "astropy"],
    requires=["reproject"],
    description=(
        "Two or three CCD exposures of the same star field, taken at slightly different pointings, with the "
        "camera rotated between them and, in some exposures, a different pixel scale, arrive as FITS files "
        "with TAN world coordinate headers, detector cards (exposure time, gain, read noise, saturation level) "
        "and a bad-pixel mask. They carry what real frames carry: sky background with a gradient, photon and "
        "read noise, cosmic-ray hits, a hot column and dead pixels, saturated cores of bright stars. An "
        "astronomer removes the defects, measures each frame's sky, resamples every frame onto one common "
        "north-up grid with the reproject package (the method a scenario names: interpolation, or flux-"
        "conserving exact overlap) and co-adds them weighted by their noise, then finds the sources of the "
        "mosaic and measures them in circular apertures with a local sky annulus. The question: the mosaic's "
        "grid and footprint, how much of each frame was rejected, the sky, how many sources the mosaic shows "
        "and how many of them are compromised by missing data, and the fluxes and position of the brightest."
    ),
    axes={
        "method": Choice(["interp", "exact"], doc="how reproject resamples the frames onto the common grid: "
                                                  "bilinear interpolation (reproject_interp) or the exact "
                                                  "overlap-area method (reproject_exact)"),
        "n_exposures": Choice([2, 3], doc="number of exposures"),
        "pixel_scale_arcsec": Float(0.45, 0.7, doc="pixel scale of the first exposure, arcsec per pixel (the "
                                                   "others are the same or coarser)"),
        "max_rotation_deg": Float(0.0, 180.0, doc="largest rotation of the later exposures against north, degrees"),
        "dither_arcsec": Float(2.0, 15.0, doc="largest pointing offset of an exposure from the field centre, "
                                              "arcsec"),
        "seeing_arcsec": Float(1.3, 2.2, doc="typical full width at half maximum of a star, arcsec"),
        "sky_rate": Float(0.5, 8.0, log=True, doc="sky brightness, electrons per second per square arcsec"),
        "star_density": Float(8.0, 40.0, doc="stars per square arcminute"),
        "cosmic_rays": Int(0, 60, doc="cosmic-ray hits per exposure"),
        "aperture_arcsec": Float(1.5, 4.0, doc="radius of the photometric aperture, arcsec"),
        "seed": Seed(doc="seed of the field, the pointings, detectors and noise"),
    },
    outputs={
        "mosaic_nx": Integer(tol=0, doc="width of the common grid, pixels"),
        "mosaic_ny": Integer(tol=0, doc="height of the common grid, pixels"),
        "mosaic_pixel_arcsec": Number(rel=1e-9, doc="pixel scale of the common grid, arcsec"),
        "mosaic_ra_deg": Number(abs=1e-8, doc="right ascension of the common grid's reference point, degrees"),
        "mosaic_dec_deg": Number(abs=1e-8, doc="declination of the common grid's reference point, degrees"),
        "footprint_arcmin2": Number(rel=1e-6, doc="sky area of the grid that holds data, square arcmin"),
        "full_overlap_fraction": Number(abs=1e-6, doc="share of that area covered by every exposure (0..1)"),
        "masked_pixels": Integer(tol=0, doc="input pixels rejected over all exposures (bad, saturated or "
                                            "cosmic-ray hits)"),
        "cosmic_rays": Integer(tol=0, doc="of those, pixels rejected as cosmic-ray hits"),
        "sky_rates": SequenceOf(Number(rel=1e-6), doc="sky of each exposure in file order, electrons per second "
                                                      "per square arcsec"),
        "mosaic_noise": Number(rel=1e-4, doc="pixel-to-pixel noise of the co-added image, electrons per second per "
                                             "mosaic pixel"),
        "n_sources": Integer(tol=0, doc="sources detected in the mosaic"),
        "n_flagged": Integer(tol=0, doc="sources whose aperture touches missing data"),
        "brightest_fluxes": SequenceOf(Number(abs=0.01, rel=1e-4), doc="fluxes of the (up to) five brightest "
                                       "unflagged sources, descending, electrons per second"),
        "brightest_ra_deg": Number(abs=3e-7, doc="right ascension of the brightest unflagged source's centroid, "
                                                 "degrees (0 when there is none)"),
        "brightest_dec_deg": Number(abs=3e-7, doc="declination of that centroid, degrees (0 when there is none)"),
        "total_flux": Number(abs=0.05, rel=1e-4, doc="summed flux of all unflagged sources, electrons per second"),
    },
    inputs=make_inputs,
    input_docs={
        "exposure_1": "the first exposure: FITS, primary HDU a float32 image in ADU with a TAN WCS (CRVAL, CRPIX, "
                      "CD matrix) and the cards EXPTIME (s), GAIN (e-/ADU), RDNOISE (e-), SATURATE (ADU); image "
                      "extension MASK (uint8, nonzero = bad pixel)",
        "exposure_2": "the second exposure, same layout",
        "exposure_3": "the third exposure when the scenario has three, same layout",
    },
    evidence={
        "stages.json": Evidence("per-stage summary: for each exposure the pixels rejected as bad, saturated and "
                                "cosmic rays, its sky and noise in ADU and its weight; the common grid (shape, "
                                "reference pixel, pixel size, projection) with the pixels covered by any and by "
                                "each exposure; the number of detected segments and the aperture radius in mosaic "
                                "pixels", reveals="summary"),
        "sources.csv": Evidence("every detected source: centroid in mosaic pixels (0-based) and as offsets east "
                                "and north of the grid's reference point (arcsec), "
                                "segment size, annulus sky, flux and whether its aperture touches missing data",
                                reveals="outputs"),
        "mosaic.fits": Evidence("the co-added image in electrons per second per mosaic pixel with its WCS, and the "
                                "summed weight map as extension WEIGHT (4 significant digits)", reveals="trace"),
    },
    evidence_level="summary",
    # what each output is computed from: the rejected pixels feed the sky and the
    # co-add; the grid and the co-add's coverage feed the detection; the detected and
    # flagged sources feed the photometry
    upstream={
        "masked_pixels": ["cosmic_rays"],
        "sky_rates": ["masked_pixels"],
        "footprint_arcmin2": ["masked_pixels", *GRID],
        "full_overlap_fraction": ["masked_pixels", *GRID],
        "mosaic_noise": ["sky_rates", "masked_pixels", *GRID],
        "n_sources": ["sky_rates", "footprint_arcmin2"],
        "n_flagged": ["n_sources"],
        "brightest_fluxes": ["n_sources", "n_flagged"],
        "brightest_ra_deg": ["n_sources", "n_flagged"],
        "brightest_dec_deg": ["n_sources", "n_flagged"],
        "total_flux": ["n_sources", "n_flagged"],
    },
    stages=["reject bad, saturated and cosmic-ray pixels (3x3 median contrast)",
            "sigma-clipped sky and noise per exposure; sky-subtracted surface brightness",
            "common grid by reproject.find_optimal_celestial_wcs",
            "reproject_interp or reproject_exact of every exposure",
            "inverse-variance co-add by reproject_and_coadd",
            "S/N detection, 8-connected segments, centroids to RA/Dec",
            "aperture photometry with a sigma-clipped annulus sky"],
    reference="reference.py",
)
def fits_photometry(params: dict[str, Any], evidence: Path, inputs: dict[str, Path]) -> dict[str, Any]:
    """Mosaic overlapping FITS exposures with reproject and measure the co-added sources.

    Inputs: exposure_1.fits .. exposure_N.fits (N = 2 or 3), processed in name order.
    Only `method` and `aperture_arcsec` steer the processing; the other axes shape the
    field and the detectors.

    1. Rejection, per exposure, on the ADU image d: bad = MASK != 0; saturated =
       d >= SATURATE (and not bad); m3 = 3x3 median of d (scipy median_filter, mode
       "nearest", over every pixel, defects included); noise(m3) = sqrt(max(m3, 0) GAIN +
       RDNOISE^2) / GAIN; cosmic ray = d - m3 > 6 noise(m3) and d > 3 m3 (and neither bad
       nor saturated). No growing of the masks.
    2. Sky: astropy sigma_clipped_stats of d with the rejected pixels masked (sigma 3,
       maxiters 5, its default median centre and population std): sky and std (ADU).
       Surface brightness sb = (d - sky) GAIN / EXPTIME / A_in (e-/s/arcsec^2), A_in the
       pixel area |det CD| in arcsec^2; rejected pixels NaN. Weight w = 1 / (std GAIN /
       EXPTIME / A_in)^2 (inverse variance of the sky noise in sb units). sky_rates =
       sky GAIN / EXPTIME / A_in.
    3. Common grid: reproject.mosaicking.find_optimal_celestial_wcs over (shape, WCS)
       of every exposure, frame icrs, negative_lon_cdelt True: RA---TAN/DEC--TAN, no
       rotation; reference point = the mean of the exposures' CRVAL taken as unit vectors
       (normalised); resolution = the smallest of the inputs' projection-plane pixel
       scales (sqrt of the column sums of CD^2); cdelt (-res, res); the four outer corners
       (-0.5, -0.5) .. (n - 0.5, n - 0.5) of every exposure projected with CRPIX (1, 1),
       then CRPIX = (1 - min) + 0.5 per axis and the size round(max - min).
    4. Resampling, per exposure, sb onto the grid. interp (reproject_interp, order 1):
       each output pixel centre to world to input pixel; coordinates in [-0.5, 0) go to 0
       and in [n - 1, n - 0.5) to n - 1; scipy map_coordinates order 1, mode constant,
       cval NaN (a NaN neighbour with non-zero weight gives NaN); beyond half a pixel
       outside the image NaN. exact (reproject_exact): each input pixel's corners to
       output pixel coordinates; every output pixel (x0..x1, y0..y1) with x0 =
       int(min x + 0.5) clamped to >= 0, x1 = int(max x + 0.5) clamped to <= nx - 1 (the
       same in y) receives value x overlap and weight + overlap, overlap = spherical
       overlap area / output pixel area (here: the planar clip of the quadrilateral with
       the pixel square, exact for TAN to TAN); result = sum / weight, footprint = weight;
       a NaN input poisons every output pixel of its bounding box.
    5. Co-add: reproject_and_coadd(combine_function "mean", input_weights = constant
       maps w, the same reproject function): per exposure the weights are resampled too,
       pixels where the resampled data or weight are NaN get footprint 0, footprint x=
       weight, mosaic = sum(value footprint) / sum(footprint), 0 where the sum is 0
       (blank). covered_by_each = that exposure's footprint > 0 with finite data.
    6. Flux image F = mosaic x A_out (e-/s per mosaic pixel); valid = summed footprint
       W > 0; per-pixel sigma = A_out / sqrt(W). Detection: F / sigma > 5 on valid pixels,
       scipy label with a 3x3 structure (8-connected), segments of at least 5 pixels.
       Centroid = F-weighted mean of the segment's pixel indices (0-based), to RA/Dec with
       the grid's WCS (origin 0).
    7. Photometry: r = aperture_arcsec / grid scale (pixels); aperture = pixels whose
       centre lies within r of the centroid (<=); annulus 2r .. 3r (both <=), valid pixels
       only; local sky = sigma_clipped_stats median (3, 5) of F in the annulus (0 when
       empty); flux = sum over valid aperture pixels of (F - sky); flagged when any
       aperture pixel is not valid (off the grid counts as nothing, only grid pixels are
       tested). The brightest = unflagged sources by flux, descending (first five);
       total_flux over every unflagged source; mosaic_noise = sigma_clipped_stats std
       (3, 5) of F over valid pixels; footprint = valid pixels x A_out / 3600;
       full_overlap_fraction = pixels covered by every exposure / valid pixels.

    Tolerances, and why:
    - Grid: shape exact, scale 1e-9 relative, reference 1e-8 degree: the same formulae
      in double precision agree to 1e-12; the plain mean of RA/Dec (not unit vectors), a
      reference at the image centres, the mean scale or a +1 size are off by far more.
    - Counts exact (masked, cosmic, sources, flagged): every test is a comparison of a
      statistic with a threshold, far from it but for a vanishing share of pixels.
    - sky_rates 1e-6 relative: astropy's clipping is deterministic; another clipping
      (mean centre, 2.5 sigma, no mask) moves the sky by 1e-3 or more.
    - Fluxes 1e-4 relative (or 0.01 e-/s), positions 3e-7 degree (1 mas): bilinear
      sampling of the same grid agrees to 1e-10; the planar exact overlap differs from
      the spherical one by ~1e-9. Surface brightness not converted (no area ratio),
      unweighted co-add, a different edge rule or NaN treatment moves them by 1e-3..1e-1.
    - footprint 1e-6 relative, overlap fraction 1e-6: pixel counts over thousands.
    - mosaic_noise 1e-4 relative.
    """
    import numpy as np
    from reproject import reproject_exact, reproject_interp
    from reproject.mosaicking import find_optimal_celestial_wcs, reproject_and_coadd

    from . import reference

    names = sorted(k for k in inputs if k.startswith("exposure"))
    exps = [reference.load_exposure(str(inputs[k])) for k in names]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        wout, shape = find_optimal_celestial_wcs([(e["shape"], e["wcs"]) for e in exps], frame="icrs",
                                                 negative_lon_cdelt=True)
        func = reproject_exact if params["method"] == "exact" else reproject_interp
        mosaic, weight = reproject_and_coadd([(e["sb"], e["wcs"]) for e in exps], wout, shape_out=shape,
                                             input_weights=[np.full(e["shape"], e["weight"]) for e in exps],
                                             reproject_function=func, combine_function="mean")
        covered = []
        for e in exps:
            arr, foot = func((e["sb"], e["wcs"]), wout, shape_out=shape)
            covered.append((foot > 0) & ~np.isnan(arr))
    co = {"mosaic": mosaic, "weight": weight, "covered": np.array(covered)}
    area_out = reference.pixel_area_arcsec2(wout)
    valid = weight > 0
    flux = mosaic * area_out
    sigma = np.where(valid, area_out / np.sqrt(np.where(valid, weight, 1.0)), np.inf)
    radius = float(params["aperture_arcsec"]) / reference.pixel_scale_arcsec(wout)
    sources = reference.photometry(flux, sigma, valid, radius)
    good = sorted((s for s in sources if not s["flagged"]), key=lambda s: -s["flux"])
    if good:
        ra, dec = wout.all_pix2world([good[0]["x"]], [good[0]["y"]], 0)
        ra0, dec0 = float(ra[0]), float(dec[0])
    else:
        ra0, dec0 = 0.0, 0.0
    _, _, noise = reference.sigma_clipped_stats(flux[valid], sigma=reference.CLIP_SIGMA, maxiters=reference.CLIP_ITERS)
    out = {
        "mosaic_nx": int(shape[1]),
        "mosaic_ny": int(shape[0]),
        "mosaic_pixel_arcsec": float(reference.pixel_scale_arcsec(wout)),
        "mosaic_ra_deg": float(wout.wcs.crval[0]),
        "mosaic_dec_deg": float(wout.wcs.crval[1]),
        "footprint_arcmin2": float(valid.sum() * area_out / 3600.0),
        "full_overlap_fraction": float(np.all(co["covered"], axis=0).sum() / max(int(valid.sum()), 1)),
        "masked_pixels": int(sum(e["bad"] + e["saturated"] + e["cosmic"] for e in exps)),
        "cosmic_rays": int(sum(e["cosmic"] for e in exps)),
        "sky_rates": [e["sky_rate"] for e in exps],
        "mosaic_noise": float(noise),
        "n_sources": len(sources),
        "n_flagged": sum(1 for s in sources if s["flagged"]),
        "brightest_fluxes": [s["flux"] for s in good[:reference.N_BRIGHT]],
        "brightest_ra_deg": ra0,
        "brightest_dec_deg": dec0,
        "total_flux": float(sum(s["flux"] for s in good)),
    }
    _write_evidence(Path(evidence), out, {"exposures": exps, "wcs": wout, "shape": shape, "coadd": co, "flux": flux,
                                          "sources": sources, "radius": radius})
    return out
