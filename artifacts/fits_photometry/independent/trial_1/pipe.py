import json, numpy as np
from astropy.io import fits
from astropy.wcs import WCS
from astropy.stats import sigma_clipped_stats
from scipy import ndimage as ndi

def load_exposure(path):
    h = fits.open(path)
    d = h[0].data.astype(np.float64)
    m = h['MASK'].data > 0
    H = h[0].header
    g = float(H['GAIN']); rn = float(H['RDNOISE']); t = float(H['EXPTIME']); sat = float(H['SATURATE'])
    satm = (d >= sat) & ~m
    good = ~m & ~satm
    mf = ndi.median_filter(d, size=3)
    r = d - mf
    sig = np.sqrt(np.maximum(mf, 0) * g + rn**2) / g
    cr = (r > 5 * sig) & (r > 2 * mf) & good
    good2 = good & ~cr
    mn, md, sd = sigma_clipped_stats(d[good2], sigma=3, maxiters=5)
    w = WCS(H).celestial
    return dict(data=d, bad=m, sat=satm, cr=cr, good=good2, gain=g, rn=rn, t=t, satlev=sat,
                sky=md, mean=mn, noise=sd, wcs=w, header=H)
