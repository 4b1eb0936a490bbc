"""Baseline `textbook`: the first-tutorial mosaicking recipe with astropy and scipy.

Written from the task's instruction alone (it does not know the recipe): bad and
saturated pixels masked (no cosmic-ray search: the co-add is expected to average them
down), the sky as the plain median of each frame, counts per second per pixel resampled
onto a north-up grid whose reference is the mean RA/Dec of the frame centres and whose
pixel is the first frame's, with the grid sized to the corners' bounding box (ceil);
nearest-neighbour-free bilinear sampling (scipy map_coordinates, order 1) for both
methods, an unweighted mean of the frames, detection at 5 times the mosaic's clipped
standard deviation, centroids and aperture sums with a median annulus sky (2r..3r).
"""
from __future__ import annotations

import json
import math
import sys

import numpy as np
from astropy.io import fits
from astropy.stats import sigma_clipped_stats
from astropy.wcs import WCS
from scipy import ndimage


def load(path):
    with fits.open(path) as h:
        d = np.asarray(h[0].data, dtype=float)
        hd = h[0].header.copy()
        bpm = np.asarray(h["MASK"].data) != 0
    bad = bpm | (d >= hd["SATURATE"])
    sky = float(np.median(d[~bad]))
    rate = (d - sky) * hd["GAIN"] / hd["EXPTIME"]
    rate[bad] = np.nan
    w = WCS(hd)
    scale = float(np.sqrt((w.pixel_scale_matrix ** 2).sum(axis=0)).min()) * 3600
    return {"rate": rate, "wcs": w, "shape": d.shape, "bad": int(bad.sum()), "scale": scale,
            "sky_rate": sky * hd["GAIN"] / hd["EXPTIME"] / scale ** 2}


def solve(scenario):
    p = scenario["parameters"]
    names = sorted(k for k in scenario["inputs"] if k.startswith("exposure"))
    ex = [load(scenario["inputs"][k]) for k in names]
    ras, decs, cl, cb = [], [], [], []
    for e in ex:
        ny, nx = e["shape"]
        r, d = e["wcs"].all_pix2world([(nx - 1) / 2], [(ny - 1) / 2], 0)
        ras.append(r[0])
        decs.append(d[0])
        lo, la = e["wcs"].all_pix2world([0, nx - 1, nx - 1, 0], [0, 0, ny - 1, ny - 1], 0)
        cl += list(lo)
        cb += list(la)
    res = ex[0]["scale"] / 3600
    out = WCS(naxis=2)
    out.wcs.ctype = ["RA---TAN", "DEC--TAN"]
    out.wcs.crval = [float(np.mean(ras)), float(np.mean(decs))]
    out.wcs.cdelt = [-res, res]
    out.wcs.crpix = [1, 1]
    xp, yp = out.all_world2pix(cl, cb, 0)
    out.wcs.crpix = [1 - xp.min(), 1 - yp.min()]
    nx, ny = int(math.ceil(xp.max() - xp.min())) + 1, int(math.ceil(yp.max() - yp.min())) + 1
    yy, xx = np.mgrid[0:ny, 0:nx].astype(float)
    lon, lat = out.all_pix2world(xx.ravel(), yy.ravel(), 0)
    stack = []
    for e in ex:
        xi, yi = e["wcs"].all_world2pix(lon, lat, 0)
        v = ndimage.map_coordinates(e["rate"], [yi, xi], order=1, mode="constant", cval=np.nan)
        stack.append(v.reshape(ny, nx) * (res * 3600) ** 2 / e["scale"] ** 2)
    stack = np.array(stack)
    cover = ~np.isnan(stack)
    with np.errstate(invalid="ignore"):
        mosaic = np.nanmean(np.where(cover, stack, np.nan), axis=0) if cover.any() else np.zeros((ny, nx))
    valid = cover.any(axis=0)
    mosaic = np.where(valid, mosaic, 0.0)
    _, med, std = sigma_clipped_stats(mosaic[valid])
    lab, n = ndimage.label((mosaic - med > 5 * std) & valid, structure=np.ones((3, 3)))
    r = p["aperture_arcsec"] / (res * 3600)
    srcs = []
    for k in range(1, n + 1):
        sel = lab == k
        if sel.sum() < 5:
            continue
        f = mosaic[sel]
        xc, yc = (f * xx[sel]).sum() / f.sum(), (f * yy[sel]).sum() / f.sum()
        d2 = (xx - xc) ** 2 + (yy - yc) ** 2
        ap = d2 <= r * r
        ann = (d2 >= 4 * r * r) & (d2 <= 9 * r * r) & valid
        sky = float(np.median(mosaic[ann])) if ann.any() else 0.0
        srcs.append({"x": xc, "y": yc, "flux": float((mosaic[ap & valid] - sky).sum()),
                     "flag": bool((ap & ~valid).any())})
    good = sorted((s for s in srcs if not s["flag"]), key=lambda s: -s["flux"])
    ra0 = dec0 = 0.0
    if good:
        a, b = out.all_pix2world([good[0]["x"]], [good[0]["y"]], 0)
        ra0, dec0 = float(a[0]), float(b[0])
    return {
        "mosaic_nx": nx, "mosaic_ny": ny, "mosaic_pixel_arcsec": res * 3600,
        "mosaic_ra_deg": float(out.wcs.crval[0]), "mosaic_dec_deg": float(out.wcs.crval[1]),
        "footprint_arcmin2": float(valid.sum() * (res * 3600) ** 2 / 3600),
        "full_overlap_fraction": float(cover.all(axis=0).sum() / max(valid.sum(), 1)),
        "masked_pixels": sum(e["bad"] for e in ex), "cosmic_rays": 0,
        "sky_rates": [e["sky_rate"] for e in ex], "mosaic_noise": float(std),
        "n_sources": len(srcs), "n_flagged": sum(s["flag"] for s in srcs),
        "brightest_fluxes": [s["flux"] for s in good[:5]], "brightest_ra_deg": ra0, "brightest_dec_deg": dec0,
        "total_flux": float(sum(s["flux"] for s in good)),
    }


def main():
    print(json.dumps(solve(json.load(sys.stdin))))


if __name__ == "__main__":
    main()
