"""Reference solution for the `fits_photometry` recon task (standalone: stdlib, numpy, scipy, astropy).

Reads one scenario JSON object on stdin, prints the output JSON object on stdout.
It implements the oracle's recipe (the docstring of ``fits_photometry`` in
``__init__.py``) without the reproject package:

1. per exposure: mask bad pixels (the MASK extension), saturated pixels and cosmic rays
   (a 3x3-median contrast test); sigma-clipped sky and noise; sky-subtracted surface
   brightness in electrons per second per square arcsecond;
2. the common grid as reproject's find_optimal_celestial_wcs builds it (north up, the
   finest input scale, reference at the mean of the inputs' reference points, shape
   from the projected image corners);
3. each exposure resampled as reproject_interp (bilinear, values at pixel centres,
   the outer half pixel clamped, NaN outside) or reproject_exact (overlap-area
   weighted; TAN pixel edges are great circles, which are straight lines in the output
   TAN plane, so the overlap is a planar polygon clip);
4. inverse-variance co-add as reproject_and_coadd's weighted mean;
5. detection on the signal-to-noise map, 8-connected segments, centroids in world
   coordinates, circular-aperture photometry with an annulus sky.
"""
from __future__ import annotations

import json
import math
import sys
from typing import Any

import numpy as np
from astropy.io import fits
from astropy.stats import sigma_clipped_stats
from astropy.wcs import WCS
from scipy import ndimage

CR_SIGMA = 6.0        # cosmic ray: data - median3x3 > CR_SIGMA * noise(median3x3) ...
CR_CONTRAST = 3.0     # ... and data > CR_CONTRAST * median3x3
CLIP_SIGMA = 3.0      # sigma clipping of sky statistics
CLIP_ITERS = 5
DETECT_SIGMA = 5.0    # detection threshold, signal-to-noise per pixel
MIN_PIXELS = 5        # smallest segment that counts as a source
ANNULUS = (2.0, 3.0)  # annulus radii in units of the aperture radius
N_BRIGHT = 5


# ----------------------------------------------------------------------- exposures
def load_exposure(path: str) -> dict[str, Any]:
    with fits.open(path) as hdul:
        data = np.asarray(hdul[0].data, dtype=np.float64)
        head = hdul[0].header.copy()
        bpm = np.asarray(hdul["MASK"].data) != 0
    wcs = WCS(head)
    gain, exptime, rn, sat = (float(head[k]) for k in ("GAIN", "EXPTIME", "RDNOISE", "SATURATE"))
    saturated = (data >= sat) & ~bpm
    m3 = ndimage.median_filter(data, size=3, mode="nearest")
    noise = np.sqrt(np.maximum(m3, 0.0) * gain + rn * rn) / gain
    cosmic = (data - m3 > CR_SIGMA * noise) & (data > CR_CONTRAST * m3) & ~bpm & ~saturated
    bad = bpm | saturated | cosmic
    _, sky, std = sigma_clipped_stats(data, mask=bad, sigma=CLIP_SIGMA, maxiters=CLIP_ITERS)
    scale = pixel_scale_arcsec(wcs)
    area = pixel_area_arcsec2(wcs)
    conv = gain / exptime / area              # ADU -> e-/s/arcsec^2
    sb = (data - sky) * conv
    sb[bad] = np.nan
    return {"sb": sb, "wcs": wcs, "shape": data.shape, "weight": 1.0 / (std * conv) ** 2,
            "sky_adu": float(sky), "noise_adu": float(std), "sky_rate": float(sky * conv),
            "bad": int(bpm.sum()), "saturated": int(saturated.sum()), "cosmic": int(cosmic.sum()),
            "scale": scale, "area": area}


def pixel_scale_arcsec(wcs: WCS) -> float:
    """The smaller of the two projection-plane pixel scales (arcsec)."""
    cd = wcs.pixel_scale_matrix
    return float(min(np.sqrt((cd ** 2).sum(axis=0)))) * 3600.0


def pixel_area_arcsec2(wcs: WCS) -> float:
    return float(abs(np.linalg.det(wcs.pixel_scale_matrix))) * 3600.0 ** 2


# ------------------------------------------------------------------- the common grid
def optimal_grid(exposures: list[dict[str, Any]]) -> tuple[WCS, tuple[int, int]]:
    corners_lon, corners_lat, refs = [], [], []
    for e in exposures:
        ny, nx = e["shape"]
        w = e["wcs"]
        lon, lat = w.all_pix2world([-0.5, nx - 0.5, nx - 0.5, -0.5], [-0.5, -0.5, ny - 0.5, ny - 0.5], 0)
        corners_lon += list(lon)
        corners_lat += list(lat)
        rlon, rlat = w.all_pix2world([w.wcs.crpix[0]], [w.wcs.crpix[1]], 1)
        refs.append(_unit(rlon[0], rlat[0]))
    mean = np.mean(refs, axis=0)
    ref_lon = math.degrees(math.atan2(mean[1], mean[0])) % 360.0
    ref_lat = math.degrees(math.atan2(mean[2], math.hypot(mean[0], mean[1])))
    res = min(e["scale"] for e in exposures) / 3600.0
    out = WCS(naxis=2)
    out.wcs.ctype = ["RA---TAN", "DEC--TAN"]
    out.wcs.cunit = ["deg", "deg"]
    out.wcs.crval = [ref_lon, ref_lat]
    out.wcs.cdelt = [-res, res]
    out.wcs.crpix = [1.0, 1.0]
    xp, yp = out.all_world2pix(corners_lon, corners_lat, 1)
    out.wcs.crpix = [(1 - xp.min()) + 0.5, (1 - yp.min()) + 0.5]
    return out, (int(round(yp.max() - yp.min())), int(round(xp.max() - xp.min())))


def _unit(lon: float, lat: float) -> np.ndarray:
    lo, la = math.radians(lon), math.radians(lat)
    return np.array([math.cos(la) * math.cos(lo), math.cos(la) * math.sin(lo), math.sin(la)])


# ---------------------------------------------------------------------- resampling
def resample_interp(e: dict[str, Any], wout: WCS, shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    ny, nx = shape
    yy, xx = np.mgrid[0:ny, 0:nx].astype(float)
    lon, lat = wout.all_pix2world(xx.ravel(), yy.ravel(), 0)
    xi, yi = e["wcs"].all_world2pix(lon, lat, 0)
    coords = np.array([yi, xi])
    h, w = e["shape"]
    for i, n in enumerate((h, w)):
        c = coords[i]
        c[(c < 0) & (c >= -0.5)] = 0
        c[(c < n - 0.5) & (c >= n - 1)] = n - 1
    vals = ndimage.map_coordinates(e["sb"], coords, order=1, mode="constant", cval=np.nan)
    outside = np.zeros(vals.shape, dtype=bool)
    for i, n in enumerate((h, w)):
        outside |= (coords[i] < -0.5) | (coords[i] > n - 0.5)
    vals[outside] = np.nan
    vals = vals.reshape(shape)
    return vals, (~np.isnan(vals)).astype(float)


def resample_exact(e: dict[str, Any], wout: WCS, shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Each input pixel's quadrilateral (its corners in output pixel coordinates) clipped
    against every output pixel it can touch; value += input x overlap, weight += overlap."""
    h, w = e["shape"]
    ny, nx = shape
    gy, gx = np.mgrid[0:h + 1, 0:w + 1].astype(float) - 0.5
    lon, lat = e["wcs"].all_pix2world(gx.ravel(), gy.ravel(), 0)
    cx, cy = wout.all_world2pix(lon, lat, 0)
    cx, cy = cx.reshape(h + 1, w + 1), cy.reshape(h + 1, w + 1)
    # corners of input pixel (j, i) in order (j,i) (j,i+1) (j+1,i+1) (j+1,i)
    qx = np.stack([cx[:-1, :-1], cx[:-1, 1:], cx[1:, 1:], cx[1:, :-1]], axis=-1).reshape(-1, 4)
    qy = np.stack([cy[:-1, :-1], cy[:-1, 1:], cy[1:, 1:], cy[1:, :-1]], axis=-1).reshape(-1, 4)
    val = e["sb"].ravel()
    x0 = np.clip((qx.min(axis=1) + 0.5).astype(int), 0, None)
    x1 = np.clip((qx.max(axis=1) + 0.5).astype(int), None, nx - 1)
    y0 = np.clip((qy.min(axis=1) + 0.5).astype(int), 0, None)
    y1 = np.clip((qy.max(axis=1) + 0.5).astype(int), None, ny - 1)
    span = int(max((x1 - x0).max(initial=0), (y1 - y0).max(initial=0))) + 1
    acc = np.zeros(ny * nx)
    wts = np.zeros(ny * nx)
    for dy in range(span):
        for dx in range(span):
            ox, oy = x0 + dx, y0 + dy
            ok = (ox <= x1) & (oy <= y1)
            if not ok.any():
                continue
            area = _clip_area(qx[ok], qy[ok], ox[ok].astype(float), oy[ok].astype(float))
            idx = oy[ok] * nx + ox[ok]
            np.add.at(acc, idx, val[ok] * area)
            np.add.at(wts, idx, area)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = acc / wts
    return out.reshape(shape), wts.reshape(shape)


def _clip_area(px: np.ndarray, py: np.ndarray, ox: np.ndarray, oy: np.ndarray) -> np.ndarray:
    """Area of each quadrilateral (rows of px, py) inside the unit square centred on
    (ox, oy): Sutherland-Hodgman against the four edges, vectorised over rows."""
    n = px.shape[0]
    cap = 12
    vx = np.full((n, cap), np.nan)
    vy = np.full((n, cap), np.nan)
    vx[:, :4], vy[:, :4] = px, py
    cnt = np.full(n, 4)
    for axis, bound, keep_below in ((0, ox - 0.5, False), (0, ox + 0.5, True), (1, oy - 0.5, False), (1, oy + 0.5, True)):
        nvx = np.full((n, cap), np.nan)
        nvy = np.full((n, cap), np.nan)
        ncnt = np.zeros(n, dtype=int)
        rows = np.arange(n)
        for k in range(cap):
            live = k < cnt
            if not live.any():
                break
            k2 = np.where(k + 1 < cnt, k + 1, 0)
            ax_, ay_ = vx[:, k], vy[:, k]
            bx_, by_ = vx[rows, k2], vy[rows, k2]
            a = ax_ if axis == 0 else ay_
            b = bx_ if axis == 0 else by_
            ina = (a <= bound) if keep_below else (a >= bound)
            inb = (b <= bound) if keep_below else (b >= bound)
            with np.errstate(invalid="ignore", divide="ignore"):
                t = (bound - a) / (b - a)
                ix, iy = ax_ + t * (bx_ - ax_), ay_ + t * (by_ - ay_)
            # a inside: emit a; crossing: emit the intersection
            emit_a = live & ina
            r = np.flatnonzero(emit_a)
            nvx[r, ncnt[r]], nvy[r, ncnt[r]] = ax_[r], ay_[r]
            ncnt[r] += 1
            cross = live & (ina != inb)
            r = np.flatnonzero(cross)
            nvx[r, ncnt[r]], nvy[r, ncnt[r]] = ix[r], iy[r]
            ncnt[r] += 1
        vx, vy, cnt = nvx, nvy, ncnt
    area = np.zeros(n)
    rows = np.arange(n)
    for k in range(cap):
        live = k < cnt
        if not live.any():
            break
        k2 = np.where(k + 1 < cnt, k + 1, 0)
        term = vx[:, k] * vy[rows, k2] - vx[rows, k2] * vy[:, k]
        area += np.where(live, term, 0.0)
    return np.abs(area) / 2.0


# --------------------------------------------------------------------------- co-add
def coadd(exposures: list[dict[str, Any]], wout: WCS, shape: tuple[int, int], method: str) -> dict[str, Any]:
    num = np.zeros(shape)
    den = np.zeros(shape)
    covered = []
    for e in exposures:
        vals, foot = (resample_exact if method == "exact" else resample_interp)(e, wout, shape)
        bad = np.isnan(vals)
        foot = np.where(bad, 0.0, foot) * e["weight"]
        num += np.where(bad, 0.0, vals) * foot
        den += foot
        covered.append(foot > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mosaic = num / den
    mosaic[den == 0] = 0.0
    return {"mosaic": mosaic, "weight": den, "covered": np.array(covered)}


# ------------------------------------------------------------------- sources
def photometry(flux: np.ndarray, sigma: np.ndarray, valid: np.ndarray, radius: float) -> list[dict[str, Any]]:
    snr = np.where(valid, flux / np.where(valid, sigma, 1.0), 0.0)
    labels, n = ndimage.label(snr > DETECT_SIGMA, structure=np.ones((3, 3), dtype=int))
    ny, nx = flux.shape
    yy, xx = np.mgrid[0:ny, 0:nx]
    out = []
    for lab in range(1, n + 1):
        sel = labels == lab
        npix = int(sel.sum())
        if npix < MIN_PIXELS:
            continue
        f = flux[sel]
        xc = float((f * xx[sel]).sum() / f.sum())
        yc = float((f * yy[sel]).sum() / f.sum())
        r2 = (xx - xc) ** 2 + (yy - yc) ** 2
        ap = r2 <= radius * radius
        ann = (r2 >= (ANNULUS[0] * radius) ** 2) & (r2 <= (ANNULUS[1] * radius) ** 2) & valid
        _, bkg, _ = sigma_clipped_stats(flux[ann], sigma=CLIP_SIGMA, maxiters=CLIP_ITERS) if ann.any() else (0, 0.0, 0)
        flagged = bool((ap & ~valid).any())
        total = float(np.sum(flux[ap & valid] - bkg))
        out.append({"x": xc, "y": yc, "npix": npix, "flux": total, "bkg": float(bkg), "flagged": flagged,
                    "peak_snr": float(snr[sel].max())})
    return out


def process(scenario: dict) -> tuple[dict[str, Any], dict[str, Any]]:
    p = scenario["parameters"]
    names = sorted(k for k in scenario["inputs"] if k.startswith("exposure"))
    exposures = [load_exposure(scenario["inputs"][k]) for k in names]
    wout, shape = optimal_grid(exposures)
    co = coadd(exposures, wout, shape, p["method"])
    area_out = pixel_area_arcsec2(wout)
    valid = co["weight"] > 0
    flux = co["mosaic"] * area_out
    sigma = np.where(valid, area_out / np.sqrt(np.where(valid, co["weight"], 1.0)), np.inf)
    radius = float(p["aperture_arcsec"]) / (pixel_scale_arcsec(wout))
    sources = photometry(flux, sigma, valid, radius)
    good = sorted((s for s in sources if not s["flagged"]), key=lambda s: -s["flux"])
    if good:
        ra, dec = wout.all_pix2world([good[0]["x"]], [good[0]["y"]], 0)
        ra0, dec0 = float(ra[0]), float(dec[0])
    else:
        ra0, dec0 = 0.0, 0.0
    _, _, noise = sigma_clipped_stats(flux[valid], sigma=CLIP_SIGMA, maxiters=CLIP_ITERS)
    out = {
        "mosaic_nx": int(shape[1]),
        "mosaic_ny": int(shape[0]),
        "mosaic_pixel_arcsec": float(pixel_scale_arcsec(wout)),
        "mosaic_ra_deg": float(wout.wcs.crval[0]),
        "mosaic_dec_deg": float(wout.wcs.crval[1]),
        "footprint_arcmin2": float(valid.sum() * area_out / 3600.0),
        "full_overlap_fraction": float(np.all(co["covered"], axis=0).sum() / max(int(valid.sum()), 1)),
        "masked_pixels": int(sum(e["bad"] + e["saturated"] + e["cosmic"] for e in exposures)),
        "cosmic_rays": int(sum(e["cosmic"] for e in exposures)),
        "sky_rates": [e["sky_rate"] for e in exposures],
        "mosaic_noise": float(noise),
        "n_sources": len(sources),
        "n_flagged": sum(1 for s in sources if s["flagged"]),
        "brightest_fluxes": [s["flux"] for s in good[:N_BRIGHT]],
        "brightest_ra_deg": ra0,
        "brightest_dec_deg": dec0,
        "total_flux": float(sum(s["flux"] for s in good)),
    }
    detail = {"exposures": exposures, "wcs": wout, "shape": shape, "coadd": co, "flux": flux, "sources": sources,
              "radius": radius}
    return out, detail


def solve(scenario: dict) -> dict:
    return process(scenario)[0]


def main() -> None:
    print(json.dumps(solve(json.load(sys.stdin))))


if __name__ == "__main__":
    main()
