import numpy as np, warnings
from astropy.wcs.utils import proj_plane_pixel_scales
from pipe import load_exposure
from grid import optimal_wcs
from reproj import reproject_exact, reproject_interp2 as reproject_interp

def build(paths, method):
    exps = [load_exposure(p) for p in paths]
    wf, sh, res = optimal_wcs(exps, 'crval')
    fn = reproject_exact if method == 'exact' else reproject_interp
    pix_as = res * 3600
    num = np.zeros(sh); den = np.zeros(sh)
    covs = []
    for E in exps:
        sc_as = proj_plane_pixel_scales(E['wcs'])[0] * 3600
        E['scale'] = sc_as
        sb = (E['data'] - E['sky']) * E['gain'] / E['t'] / sc_as**2
        sb = np.where(E['good'], sb, np.nan)
        nrate = E['noise'] * E['gain'] / E['t'] / sc_as**2
        E['weight'] = 1.0 / nrate**2
        o, f = fn(sb, E['wcs'], wf, sh)
        ok = np.isfinite(o) & np.isfinite(f) & (f > 0)
        covs.append(ok)
        num[ok] += E['weight'] * f[ok] * o[ok]; den[ok] += E['weight'] * f[ok]
    with np.errstate(invalid='ignore', divide='ignore'):
        mos = num / den
    mos[den == 0] = np.nan
    mos_pix = mos * pix_as**2
    return dict(exps=exps, wcs=wf, shape=sh, pix_as=pix_as, mos=mos_pix, covs=covs, den=den)
