import numpy as np
from scipy.ndimage import map_coordinates as smc

def reproject_interp(arr, win, wout, shape_out):
    ny, nx = shape_out
    yy, xx = np.mgrid[0:ny, 0:nx].astype(float)
    ra, dec = wout.wcs_pix2world(xx.ravel(), yy.ravel(), 0)
    xi, yi = win.wcs_world2pix(ra, dec, 0)
    coords = np.array([yi, xi])
    img = np.pad(arr, 1, mode='edge')
    vals = smc(img, coords + 1, order=1, mode='constant', cval=np.nan)
    reset = (coords[0] < -0.5) | (coords[0] > arr.shape[0] - 0.5) | (coords[1] < -0.5) | (coords[1] > arr.shape[1] - 0.5)
    vals[reset] = np.nan
    out = vals.reshape(shape_out)
    return out, np.isfinite(out).astype(float)

def reproject_interp2(arr, win, wout, shape_out):
    ny, nx = shape_out
    yy, xx = np.mgrid[0:ny, 0:nx].astype(float)
    ra, dec = wout.wcs_pix2world(xx.ravel(), yy.ravel(), 0)
    xi, yi = win.wcs_world2pix(ra, dec, 0)
    coords = np.array([yi, xi])
    c = coords.copy()
    for i in range(2):
        n = arr.shape[i]
        c[i][(c[i] < 0) & (c[i] >= -0.5)] = 0
        c[i][(c[i] < n - 0.5) & (c[i] >= n - 1)] = n - 1
    vals = smc(arr, c, order=1, mode='constant', cval=np.nan)
    reset = (c[0] < -0.5) | (c[0] > arr.shape[0] - 0.5) | (c[1] < -0.5) | (c[1] > arr.shape[1] - 0.5)
    vals[reset] = np.nan
    out = vals.reshape(shape_out)
    return out, np.isfinite(out).astype(float)

def _clip(X, Y, n, a, b, c):
    # keep a*x + b*y + c >= 0 ; X,Y (N,M), n (N,)
    N, M = X.shape
    M2 = M + 4
    OX = np.zeros((N, M2)); OY = np.zeros((N, M2)); on = np.zeros(N, dtype=int)
    rows = np.arange(N)
    for k in range(M):
        act = k < n
        if not act.any():
            break
        kn = np.where(k + 1 < n, k + 1, 0)
        x1 = X[:, k]; y1 = Y[:, k]
        x2 = X[rows, kn]; y2 = Y[rows, kn]
        d1 = a * x1 + b * y1 + c; d2 = a * x2 + b * y2 + c
        in1 = d1 >= 0; in2 = d2 >= 0
        # if in1: emit p1
        e = act & in1
        OX[rows[e], on[e]] = x1[e]; OY[rows[e], on[e]] = y1[e]; on[e] += 1
        # if crossing: emit intersection
        e = act & (in1 != in2)
        with np.errstate(invalid='ignore', divide='ignore'):
            t = d1 / (d1 - d2)
        ix = x1 + t * (x2 - x1); iy = y1 + t * (y2 - y1)
        OX[rows[e], on[e]] = ix[e]; OY[rows[e], on[e]] = iy[e]; on[e] += 1
    mx = max(int(on.max()) if N else 0, 1)
    return OX[:, :mx], OY[:, :mx], on

def _area(X, Y, n):
    N, M = X.shape
    rows = np.arange(N)
    s = np.zeros(N)
    for k in range(M):
        act = k < n
        kn = np.where(k + 1 < n, k + 1, 0)
        s += np.where(act, X[:, k] * Y[rows, kn] - X[rows, kn] * Y[:, k], 0)
    return 0.5 * np.abs(s)

def reproject_exact(arr, win, wout, shape_out, keepzero=True):
    nyi, nxi = arr.shape
    ny, nx = shape_out
    # corners of input pixels
    yc, xc = np.mgrid[0:nyi + 1, 0:nxi + 1].astype(float) - 0.5
    ra, dec = win.wcs_pix2world(xc.ravel(), yc.ravel(), 0)
    xo, yo = wout.wcs_world2pix(ra, dec, 0)
    xo = xo.reshape(yc.shape) + 0.5; yo = yo.reshape(yc.shape) + 0.5  # output pixel i spans [i, i+1]
    # quad corners per input pixel
    QX = np.stack([xo[:-1, :-1], xo[:-1, 1:], xo[1:, 1:], xo[1:, :-1]], -1).reshape(-1, 4)
    QY = np.stack([yo[:-1, :-1], yo[:-1, 1:], yo[1:, 1:], yo[1:, :-1]], -1).reshape(-1, 4)
    vals = arr.ravel()
    x0 = np.floor(QX.min(1)).astype(int); x1 = np.floor(QX.max(1)).astype(int)
    y0 = np.floor(QY.min(1)).astype(int); y1 = np.floor(QY.max(1)).astype(int)
    wx = int((x1 - x0).max()) + 1; wy = int((y1 - y0).max()) + 1
    pi_list = []; ox_list = []; oy_list = []
    for dx in range(wx):
        for dy in range(wy):
            ox = x0 + dx; oy = y0 + dy
            ok = (ox <= x1) & (oy <= y1) & (ox >= 0) & (ox < nx) & (oy >= 0) & (oy < ny)
            idx = np.nonzero(ok)[0]
            pi_list.append(idx); ox_list.append(ox[idx]); oy_list.append(oy[idx])
    pi = np.concatenate(pi_list); ox = np.concatenate(ox_list); oy = np.concatenate(oy_list)
    X = QX[pi].copy(); Y = QY[pi].copy(); n = np.full(len(pi), 4)
    X, Y, n = _clip(X, Y, n, 1.0, 0.0, -ox.astype(float))
    X, Y, n = _clip(X, Y, n, -1.0, 0.0, ox + 1.0)
    X, Y, n = _clip(X, Y, n, 0.0, 1.0, -oy.astype(float))
    X, Y, n = _clip(X, Y, n, 0.0, -1.0, oy + 1.0)
    ov = _area(X, Y, n)
    ov[n < 3] = 0
    keep = (ov > 0) | (keepzero & ~np.isfinite(vals[pi]))
    ov = ov[keep]; pi = pi[keep]; ox = ox[keep]; oy = oy[keep]
    flat = oy * nx + ox
    wsum = np.bincount(flat, weights=ov, minlength=ny * nx)
    v = vals[pi]
    vsum = np.bincount(flat, weights=v * ov, minlength=ny * nx)
    with np.errstate(invalid='ignore', divide='ignore'):
        out = vsum / wsum
    out[wsum == 0] = np.nan
    return out.reshape(shape_out), wsum.reshape(shape_out)
