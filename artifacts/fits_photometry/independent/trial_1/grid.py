import numpy as np
from astropy.wcs import WCS
from astropy.wcs.utils import proj_plane_pixel_scales
from astropy.coordinates import SkyCoord, UnitSphericalRepresentation
import astropy.units as u

def optimal_wcs(exps, refmode='center'):
    res = min(np.min(np.abs(proj_plane_pixel_scales(E['wcs']))) for E in exps)
    cx = []; ref = []
    for E in exps:
        ny, nx = E['data'].shape
        w = E['wcs']
        xc = np.array([-0.5, nx - 0.5, nx - 0.5, -0.5]); yc = np.array([-0.5, -0.5, ny - 0.5, ny - 0.5])
        ra, dec = w.wcs_pix2world(xc, yc, 0)
        cx.append((ra, dec))
        if refmode == 'center':
            r, d = w.wcs_pix2world([(nx - 1) / 2], [(ny - 1) / 2], 0)
        elif refmode == 'center2':
            r, d = w.wcs_pix2world([nx / 2], [ny / 2], 0)
        else:
            r, d = w.wcs.crval
            r = [r]; d = [d]
        ref.append((r[0], d[0]))
    ref = np.array(ref)
    sc = SkyCoord(ref[:, 0] * u.deg, ref[:, 1] * u.deg)
    c = sc.cartesian.xyz.value.mean(axis=1)
    lon = np.degrees(np.arctan2(c[1], c[0])) % 360
    lat = np.degrees(np.arctan2(c[2], np.hypot(c[0], c[1])))
    wf = WCS(naxis=2)
    wf.wcs.ctype = ['RA---TAN', 'DEC--TAN']
    wf.wcs.crval = [lon, lat]
    wf.wcs.cdelt = [-res, res]
    wf.wcs.crpix = [1, 1]
    ra = np.concatenate([a for a, b in cx]); de = np.concatenate([b for a, b in cx])
    xp, yp = wf.wcs_world2pix(ra, de, 0)
    xmin, xmax, ymin, ymax = xp.min(), xp.max(), yp.min(), yp.max()
    wf.wcs.crpix = [0.5 - xmin, 0.5 - ymin]
    nx = int(round(xmax - xmin)); ny = int(round(ymax - ymin))
    return wf, (ny, nx), res
