import sys, json, math
import numpy as np
import scipy.signal as ss

FS = 16000
C = 343.0
ROOMS = {'small': [4.0, 3.5, 2.7], 'medium': [6.0, 4.5, 3.0], 'large': [9.0, 7.0, 3.5]}
FINISH = {
    'chapel': dict(west='limestone_wall', east='limestone_wall', south='curtains_cotton_0.5',
                   north='limestone_wall', floor='marble_floor', ceiling='wooden_lining'),
    'studio': dict(west='plasterboard', east='facing_brick', south='curtains_fabric',
                   north='plasterboard', floor='carpet_tufted_9.5mm', ceiling='ceiling_fissured_tile'),
    'classroom': dict(west='plasterboard', east='glass_window', south='plasterboard',
                      north='wooden_lining', floor='linoleum_on_concrete',
                      ceiling='ceiling_perforated_gypsum_board'),
    'office': dict(west='plasterboard', east='plasterboard', south='glass_window',
                   north='plasterboard', floor='carpet_cotton', ceiling='ceiling_fissured_tile'),
}
BANDS = [125, 250, 500, 1000, 2000, 4000]


def sweep():
    T = 1.0
    n = int(T * FS)
    t = np.arange(n) / FS
    f1, f2 = 50.0, 7000.0
    L = T / np.log(f2 / f1)
    x = np.sin(2 * np.pi * f1 * L * (np.exp(t / L) - 1.0))
    nf = int(0.01 * FS)
    w = np.hanning(2 * nf)
    x[:nf] *= w[:nf]
    x[-nf:] *= w[nf:]
    return x


def array_geom(name, centre):
    cx, cy, cz = centre
    if name.startswith('linear'):
        M = int(name[6]); d = float(name.split('_')[1][:-2]) / 100
        xs = (np.arange(M) - (M - 1) / 2) * d
        P = np.stack([cx + xs, np.full(M, cy), np.full(M, cz)])
    else:
        M = int(name[8]); r = float(name.split('_')[1][:-2]) / 100
        a = 2 * np.pi * np.arange(M) / M
        P = np.stack([cx + r * np.cos(a), cy + r * np.sin(a), np.full(M, cz)])
    return P


def simulate(p):
    import pyroomacoustics as pra
    dim = ROOMS[p['room_size']]
    centre = [dim[0] / 2, dim[1] / 2, 1.2]
    mats = pra.make_materials(**FINISH[p['finish']])
    room = pra.ShoeBox(dim, fs=FS, materials=mats, max_order=int(p['max_order']),
                       air_absorption=True)
    az = np.deg2rad(p['source_azimuth'])
    d = p['source_distance']
    src = [centre[0] + d * np.cos(az), centre[1] + d * np.sin(az), centre[2]]
    x = sweep()
    room.add_source(src, signal=x)
    P = array_geom(p['microphone_array'], centre)
    room.add_microphone_array(pra.MicrophoneArray(P, FS))
    room.simulate()
    sig = room.mic_array.signals
    N = 2 * FS
    if sig.shape[1] < N:
        sig = np.pad(sig, ((0, 0), (0, N - sig.shape[1])))
    sig = sig[:, :N]
    M = sig.shape[0]
    pw = np.mean(sig[0, :FS] ** 2)
    npow = pw / 10 ** (p['snr_db'] / 10)
    noise = np.random.default_rng(int(p['seed'])).standard_normal((M, N)) * np.sqrt(npow)
    return sig + noise, P, np.array(centre), x


def deconv(y, x, L=FS):
    T = 1.0
    Lr = T / np.log(7000.0 / 50.0)
    t = np.arange(len(x)) / FS
    inv = x[::-1] * np.exp(-t / Lr)
    h = ss.fftconvolve(y, inv)[len(x) - 1:len(x) - 1 + L]
    return h


def octave(h, fc):
    lo = fc / np.sqrt(2); hi = min(fc * np.sqrt(2), FS / 2 * 0.99)
    sos = ss.butter(3, [lo, hi], btype='band', fs=FS, output='sos')
    return ss.sosfilt(sos, h)


def noise_level(h):
    tail = h[int(0.8 * len(h)):]
    return np.mean(tail ** 2)


LB = dict(nper=5, above=10, dyn=20, corr=10, w0=0.01, iters=0, comp=1, fixw=1)


def blocks(e, W):
    W = max(int(W), 1)
    n = len(e) // W
    if n < 1:
        return np.array([np.mean(e)]), np.array([len(e) / 2 / FS])
    lv = e[:n * W].reshape(n, W).mean(1)
    t = (np.arange(n) * W + W / 2) / FS
    return lv, t


def smooth(e, W):
    W = max(int(round(W)), 1)
    n = len(e) // W
    lv = e[:n * W].reshape(n, W).mean(1)
    t = (np.arange(n) * W + W / 2) / FS
    return lv, t


def lundeby(b, onset, fc=None):
    """Lundeby crossing point. returns (L samples from onset, noise, slope, intercept)"""
    e = b[onset:] ** 2
    N = len(e)
    with np.errstate(divide='ignore'):
        if fc is None or LB.get('fixw'):
            w0 = LB['w0']
        else:
            w0 = (800.0 / fc + 10.0) / 1000.0
        lv, t = smooth(e, w0 * FS)
        db = 10 * np.log10(lv)
        noise = np.mean(e[int(round(N * 0.9)):])
        ndb = 10 * np.log10(noise)
        i0 = int(np.argmax(db))
        idx = np.where(db[i0 + 1:] < ndb + LB['above'])[0]
        i1 = i0 + 1 + idx[0] if len(idx) else len(db)
        if i1 - i0 < 3:
            i1 = min(i0 + 3, len(db))
        if i1 - i0 < 2:
            return N, noise, None, None
        sl_ic = np.polyfit(t[i0:i1], db[i0:i1], 1)
        sl, ic = sl_ic
        if sl >= 0:
            return N, noise, None, None
        tc = (ndb - ic) / sl
        nblk = (db[i1 - 1] - db[i0]) / -10.0 * LB['nper'] if LB.get('nb_prev', 1) else 0
        nblk = (db[i1] - db[i0]) / -10.0 * LB['nper'] if i1 < len(db) else nblk
        W = np.round((t[min(i1, len(t) - 1)] - t[i0]) / max(nblk, 1e-9) * FS)
        lv, t = smooth(e, W)
        db = 10 * np.log10(lv)
        old = 0.0
        it = 0
        while abs(old - tc) > 0.001 and it < LB['iters']:
            old = tc
            i10 = max(1, int(round((tc - LB['corr'] / sl) * FS)))
            noise = np.mean(e[min(int(round(N * 0.9)), i10):])
            ndb = 10 * np.log10(noise)
            s0 = int(np.argmax(db < ndb + LB['above'] + LB['dyn']))
            idx = np.where(db[s0 + 1:] < ndb + LB['above'])[0]
            s1 = s0 + 1 + idx[0] if len(idx) else len(db)
            if s1 - s0 < 2:
                break
            sl2, ic2 = np.polyfit(t[s0:s1], db[s0:s1], 1)
            if sl2 >= 0:
                break
            sl, ic = sl2, ic2
            tc = (ndb - ic) / sl
            it += 1
    L = int(round(tc * FS))
    L = max(min(L, N), 2)
    return L, noise, sl, ic


def edc_lundeby(b, onset, fc):
    L, noise, sl, ic = lundeby(b, onset, fc)
    e = b[onset:onset + L] ** 2
    edc = np.cumsum(e[::-1])[::-1]
    Ntot = len(b) - onset
    if sl is not None and LB['comp']:
        T = -60.0 / sl
        corr = noise * T / (6 * np.log(10)) * FS
        edc = edc + corr
        t = np.arange(L, Ntot) / FS
        ext = corr * 10 ** (sl * (t - L / FS) / 10)
        edc = np.concatenate([edc, ext])
    else:
        edc = np.concatenate([edc, np.zeros(Ntot - L)])
    return edc


def edc_params(edc):
    with np.errstate(divide='ignore', invalid='ignore'):
        db = 10 * np.log10(edc / edc[0])
        out = {}
        for ms, key in ((50, 'c50'), (80, 'c80')):
            k = int(ms * FS / 1000)
            out[key] = 10 * np.log10((edc[0] - edc[k]) / edc[k])
        for key, (hi, lo) in (('edt', (0, -10)), ('t20', (-5, -25)), ('t30', (-5, -35))):
            i0 = int(np.argmax(db <= hi))
            i1 = int(np.argmax(db <= lo))
            if key == 'edt':
                i1 -= 1
            if i1 <= i0:
                out[key] = float('nan')
                continue
            tt = np.arange(i0, i1 + 1) / FS
            slope = np.polyfit(tt, db[i0:i1 + 1], 1)[0]
            out[key] = -60.0 / slope
    return out


def decay_time(h, hi, lo):
    e = h ** 2
    edc = np.cumsum(e[::-1])[::-1]
    edc_db = 10 * np.log10(edc / edc[0] + 1e-300)
    i0 = np.argmax(edc_db <= hi)
    i1 = np.argmax(edc_db <= lo)
    if i1 <= i0:
        return float('nan')
    t = np.arange(i0, i1 + 1) / FS
    slope, _ = np.polyfit(t, edc_db[i0:i1 + 1], 1)
    return -60.0 / slope


def inr(b, onset):
    e = b ** 2
    n = np.mean(e[int(0.9 * len(e)):])
    lv, _ = blocks(e[onset:], 160)
    return 10 * np.log10(lv.max() / n)


def clarity(h, onset, ms):
    e = h ** 2
    k = onset + int(ms * FS / 1000)
    return 10 * np.log10(np.sum(e[onset:k]) / np.sum(e[k:]))


def analyse(h, onset):
    out = {}
    bands = [octave(h, f) for f in BANDS]
    ps = [edc_params(edc_lundeby(b, onset, f)) for b, f in zip(bands, BANDS)]
    for k in ('c50', 'c80', 'edt', 't20', 't30'):
        out[k] = [q[k] for q in ps]
    out['inr'] = [inr(b, onset) for b in bands]
    e = h ** 2
    k = int(0.05 * FS)
    edc = edc_lundeby(h, onset, None) if BB['lund'] else np.cumsum(e[onset:][::-1])[::-1]
    out['d50'] = float((edc[0] - edc[k]) / edc[0])
    w = int(0.0025 * FS)
    pk = int(np.argmax(e))
    dstart = max(pk - w, 0)
    ed = np.sum(e[dstart:pk + w + 1])
    er = edc[pk + w + 1 - onset] if BB['lund'] else np.sum(e[pk + w + 1:])
    out['drr'] = 10 * np.log10(ed / er)
    out['pnr'] = 10 * np.log10(np.max(e) / noise_level(h))
    return out


def doa(rec, P, centre, linear):
    import pyroomacoustics as pra
    nfft = 512
    w = pra.hann(nfft)
    X = np.array([pra.transform.stft.analysis(r, nfft, nfft // 2, win=w).T for r in rec])
    ng = 360
    alg = pra.doa.algorithms['NormMUSIC'](P[:2] - centre[:2, None], FS, nfft, c=C,
                                          num_src=1, n_grid=ng)
    alg.locate_sources(X, freq_range=[300, 3500])
    g = np.asarray(alg.grid.values, dtype=float)
    k = int(np.argmax(g))
    y0, y1, y2 = g[(k - 1) % ng], g[k], g[(k + 1) % ng]
    den = y0 - 2 * y1 + y2
    d = 0.5 * (y0 - y2) / den if den != 0 else 0.0
    az = ((k + d) * 360.0 / ng) % 360
    if linear and az > 180:
        az = 360 - az
    par = 10 * np.log10(np.max(g) / np.mean(g))
    return az, par


BB = dict(lund=1)
BEAM = dict(mu=0.01, pad=1)


def beam(rec, P, centre, az_deg, snr_db):
    M, N = rec.shape
    nfft = N if not BEAM['pad'] else 1 << int(np.ceil(np.log2(2 * N)))
    X = np.fft.rfft(rec, nfft, axis=1)
    f = np.fft.rfftfreq(nfft, 1 / FS)
    az = np.deg2rad(az_deg)
    u = np.array([np.cos(az), np.sin(az), 0.0])
    r = P - centre[:, None]
    tau = -(u @ r) / C
    D = np.linalg.norm(P[:, :, None] - P[:, None, :], axis=0)
    mu = 10 ** (-snr_db / 10) if BEAM['mu'] == 'snr' else BEAM['mu']
    dvec = np.exp(-2j * np.pi * f[:, None] * tau[None, :])  # F x M
    G = np.sinc(2 * f[:, None, None] * D[None] / C) + mu * np.eye(M)[None]
    Gi = np.linalg.solve(G, dvec[:, :, None])[:, :, 0]
    den = np.sum(np.conj(dvec) * Gi, axis=1)
    W = Gi / den[:, None]
    Y = np.sum(np.conj(W) * X.T, axis=1)
    y = np.fft.irfft(Y, nfft)[:N]
    return y


def get_onset(h):
    e = h ** 2
    return int(np.argmax(e >= e.max() * 0.01))


def main():
    sc = json.load(sys.stdin)
    p = sc['parameters']
    rec, P, centre, x = simulate(p)
    h = deconv(rec[0], x)
    onset = get_onset(h)
    a = analyse(h, onset)
    az, par = doa(rec, P, centre, p['microphone_array'].startswith('linear'))
    yb = beam(rec, P, centre, az, p['snr_db'])
    hb = deconv(yb, x)
    ob = get_onset(hb)
    b = analyse(hb, ob)

    def fl(v):
        v = float(v)
        return v if np.isfinite(v) else 0.0
    out = {
        'azimuth_deg': fl(az),
        'beam_c50_db': [fl(v) for v in b['c50']],
        'beam_drr_db': fl(b['drr']),
        'beam_inr_db': [fl(v) for v in b['inr']],
        'c50_db': [fl(v) for v in a['c50']],
        'c80_db': [fl(v) for v in a['c80']],
        'd50': fl(a['d50']),
        'drr_db': fl(a['drr']),
        'edt_s': [fl(v) for v in a['edt']],
        'inr_db': [fl(v) for v in a['inr']],
        'peak_to_noise_db': fl(a['pnr']),
        'spectrum_par_db': fl(par),
        't20_s': [fl(v) for v in a['t20']],
        't30_s': [fl(v) for v in a['t30']],
    }
    print(json.dumps(out))


if __name__ == '__main__':
    main()
