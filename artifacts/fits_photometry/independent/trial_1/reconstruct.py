import sys, os, json, warnings
import numpy as np
warnings.filterwarnings('ignore')
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from astropy.stats import sigma_clipped_stats
from scipy import ndimage as ndi
from mosaic import build

ANN_IN = 2.0
ANN_OUT = 3.0
SNR_K = 5.0
NPIX = 5
SUB = 1
EDGE_FLAG = False


def circle_frac(x0, y0, r, shape, sub=SUB):
    """fraction of each pixel inside circle (supersampled) within bounding box"""
    ny, nx = shape
    xa = max(int(np.floor(x0 - r - 1)), 0); xb = min(int(np.ceil(x0 + r + 1)), nx - 1)
    ya = max(int(np.floor(y0 - r - 1)), 0); yb = min(int(np.ceil(y0 + r + 1)), ny - 1)
    off = (np.arange(sub) + 0.5) / sub - 0.5
    ys = np.arange(ya, yb + 1); xs = np.arange(xa, xb + 1)
    YY = ys[:, None, None, None] + off[None, None, :, None]
    XX = xs[None, :, None, None] + off[None, None, None, :]
    inside = ((XX - x0) ** 2 + (YY - y0) ** 2) <= r * r
    frac = inside.mean(axis=(2, 3))
    return ya, yb, xa, xb, frac


def photometry(M, params):
    m = M['mos']
    pix = M['pix_as']
    den = M['den']
    finite = np.isfinite(m)
    mm = np.where(finite, m, 0.0)
    with np.errstate(invalid='ignore', divide='ignore'):
        sig = pix ** 2 / np.sqrt(den)
    snr = np.where(den > 0, mm / sig, 0.0)
    lab, n = ndi.label(snr > SNR_K, structure=np.ones((3, 3)))
    sizes = np.bincount(lab.ravel(), minlength=n + 1)
    r = params['aperture_arcsec'] / pix
    ny, nx = m.shape
    yy, xx = np.mgrid[0:ny, 0:nx]
    srcs = []
    objs = ndi.find_objects(lab)
    for l in range(1, n + 1):
        if sizes[l] < NPIX:
            continue
        sl = objs[l - 1]
        sub = lab[sl] == l
        v = mm[sl][sub]
        ys = yy[sl][sub]; xs = xx[sl][sub]
        tot = v.sum()
        xc = (v * xs).sum() / tot; yc = (v * ys).sum() / tot
        # annulus
        d = np.hypot(xx - xc, yy - yc)
        ann = (d >= ANN_IN * r) & (d <= ANN_OUT * r) & finite
        if ann.sum() > 0:
            _, skyv, _ = sigma_clipped_stats(m[ann], sigma=3, maxiters=5)
        else:
            skyv = 0.0
        ya, yb, xa, xb, frac = circle_frac(xc, yc, r, m.shape)
        patch = m[ya:yb + 1, xa:xb + 1]
        touch = frac > 0
        flagged = bool((~np.isfinite(patch[touch])).any())
        if EDGE_FLAG and (xc - r < -0.5 or yc - r < -0.5 or xc + r > nx - 0.5 or yc + r > ny - 0.5):
            flagged = True
        area = frac.sum()
        s = np.nansum(np.where(np.isfinite(patch), patch, 0.0) * frac)
        flux = s - skyv * area
        srcs.append(dict(x=xc, y=yc, flux=float(flux), flagged=flagged, npix=int(sizes[l]), sky=float(skyv)))
    return srcs


def run(scn):
    params = scn['parameters']
    names = sorted(scn['inputs'].keys(), key=lambda s: int(s.split('_')[-1]))
    paths = [scn['inputs'][k] for k in names]
    M = build(paths, params['method'])
    exps = M['exps']
    wf = M['wcs']
    m = M['mos']
    pix = M['pix_as']
    finite = np.isfinite(m)
    covs = M['covs']
    out = {}
    out['mosaic_ra_deg'] = float(wf.wcs.crval[0])
    out['mosaic_dec_deg'] = float(wf.wcs.crval[1])
    out['mosaic_nx'] = int(M['shape'][1]); out['mosaic_ny'] = int(M['shape'][0])
    out['mosaic_pixel_arcsec'] = float(pix)
    ncov = int(finite.sum())
    out['footprint_arcmin2'] = float(ncov * pix ** 2 / 3600.0)
    full = np.all(covs, axis=0).sum()
    out['full_overlap_fraction'] = float(full / ncov) if ncov else 0.0
    out['masked_pixels'] = int(sum((~E['good']).sum() for E in exps))
    out['cosmic_rays'] = int(sum(E['cr'].sum() for E in exps))
    out['sky_rates'] = [float(E['sky'] * E['gain'] / E['t'] / E['scale'] ** 2) for E in exps]
    v = m[finite]
    _, _, sd = sigma_clipped_stats(v, sigma=3, maxiters=5)
    out['mosaic_noise'] = float(sd)
    srcs = photometry(M, params)
    out['n_sources'] = len(srcs)
    out['n_flagged'] = int(sum(s['flagged'] for s in srcs))
    good = sorted([s for s in srcs if not s['flagged']], key=lambda s: -s['flux'])
    out['brightest_fluxes'] = [s['flux'] for s in good[:5]]
    out['total_flux'] = float(sum(s['flux'] for s in good))
    if good:
        ra, dec = wf.wcs_pix2world([good[0]['x']], [good[0]['y']], 0)
        out['brightest_ra_deg'] = float(ra[0]); out['brightest_dec_deg'] = float(dec[0])
    else:
        out['brightest_ra_deg'] = 0.0; out['brightest_dec_deg'] = 0.0
    return out, srcs, M


FALLBACK = {
    'brightest_dec_deg': 0.0, 'brightest_fluxes': [], 'brightest_ra_deg': 0.0, 'cosmic_rays': 0,
    'footprint_arcmin2': 0.0, 'full_overlap_fraction': 0.0, 'masked_pixels': 0, 'mosaic_dec_deg': 0.0,
    'mosaic_noise': 0.0, 'mosaic_nx': 0, 'mosaic_ny': 0, 'mosaic_pixel_arcsec': 0.0, 'mosaic_ra_deg': 0.0,
    'n_flagged': 0, 'n_sources': 0, 'sky_rates': [], 'total_flux': 0.0}


def main():
    scn = json.load(sys.stdin)
    try:
        out, _, _ = run(scn)
    except Exception as e:
        import traceback
        traceback.print_exc(file=sys.stderr)
        out = dict(FALLBACK)
    for k, v in FALLBACK.items():
        out.setdefault(k, v)
    print(json.dumps(out))


if __name__ == '__main__':
    main()
