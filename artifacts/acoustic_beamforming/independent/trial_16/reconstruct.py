import sys, json, os
import numpy as np
import scipy.signal as ss

FS = 16000
C = 343.0
ROOMS = {'small': ([4.0, 3.5, 2.7], [2.0, 1.75, 1.2]),
         'medium': ([6.0, 4.5, 3.0], [3.0, 2.25, 1.2]),
         'large': ([9.0, 7.0, 3.5], [4.5, 3.5, 1.2])}
FIN = {'classroom': {"west": "plasterboard", "east": "glass_window", "south": "plasterboard", "north": "wooden_lining", "floor": "linoleum_on_concrete", "ceiling": "ceiling_perforated_gypsum_board"},
       'studio': {"west": "plasterboard", "east": "facing_brick", "south": "curtains_fabric", "north": "plasterboard", "floor": "carpet_tufted_9.5mm", "ceiling": "ceiling_fissured_tile"},
       'chapel': {"west": "limestone_wall", "east": "limestone_wall", "south": "curtains_cotton_0.5", "north": "limestone_wall", "floor": "marble_floor", "ceiling": "wooden_lining"},
       'office': {"west": "plasterboard", "east": "plasterboard", "south": "glass_window", "north": "plasterboard", "floor": "carpet_cotton", "ceiling": "ceiling_fissured_tile"}}
BANDS = [125, 250, 500, 1000, 2000, 4000]

CFG = dict(
    comp_delay=False,
    oct_order=3,
    oct_filtfilt=False,
    direct_ms=2.5,
    doa='srp',
    doa_npts=3600,
    loading=1e-2,
    ir_len=16000,
)
try:
    CFG.update(json.loads(os.environ.get('RCFG', '{}')))
except Exception:
    pass


def array_offsets(name):
    if name.startswith('linear'):
        M = 4 if name == 'linear4_5cm' else 8
        d = 0.05 if name == 'linear4_5cm' else 0.04
        x = (np.arange(M) - (M - 1) / 2) * d
        return np.stack([x, np.zeros(M), np.zeros(M)], 1)
    M = 6 if name == 'circular6_5cm' else 8
    r = 0.05 if name == 'circular6_5cm' else 0.10
    a = 2 * np.pi * np.arange(M) / M
    return np.stack([r * np.cos(a), r * np.sin(a), np.zeros(M)], 1)


def sweep():
    T = 1.0
    n = int(T * FS)
    t = np.arange(n) / FS
    f1, f2 = 50.0, 7000.0
    L = np.log(f2 / f1)
    x = np.sin(2 * np.pi * f1 * T / L * (np.exp(t / T * L) - 1))
    nf = int(0.01 * FS)
    w = np.hanning(2 * nf)
    x[:nf] *= w[:nf]
    x[-nf:] *= w[nf:]
    return x


def simulate(p):
    import pyroomacoustics as pra
    dims, centre = ROOMS[p['room_size']]
    centre = np.array(centre)
    mats = pra.make_materials(**FIN[p['finish']])
    room = pra.ShoeBox(dims, fs=FS, materials=mats, max_order=int(p['max_order']), air_absorption=True)
    az = np.deg2rad(p['source_azimuth'])
    src = centre + p['source_distance'] * np.array([np.cos(az), np.sin(az), 0.0])
    x = sweep()
    room.add_source(src.tolist(), signal=x)
    mics = centre[None, :] + array_offsets(p['microphone_array'])
    room.add_microphone_array(pra.MicrophoneArray(mics.T, FS))
    room.simulate()
    y = room.mic_array.signals
    N = 2 * FS
    if CFG['comp_delay']:
        d = pra.constants.get('frac_delay_length') // 2
        y = y[:, d:]
    if y.shape[1] < N:
        y = np.pad(y, ((0, 0), (0, N - y.shape[1])))
    y = y[:, :N]
    M = y.shape[0]
    rng = np.random.default_rng(int(p['seed']))
    nz = rng.standard_normal((M, N))
    ps = np.mean(y[0, :FS] ** 2)
    pn = ps / 10 ** (p['snr_db'] / 10)
    y = y + np.sqrt(pn) * nz
    return y, x, mics, centre


def deconv(y, x):
    T = 1.0
    L = np.log(7000.0 / 50.0)
    t = np.arange(len(x)) / FS
    inv = x[::-1] * np.exp(-t * L / T)
    h = ss.fftconvolve(y, inv)
    k = np.fft.rfft(ss.fftconvolve(x, inv))
    h = h / np.max(np.abs(k))
    return h[len(x) - 1:len(x) - 1 + CFG['ir_len']]


def deconv_old(y, x):
    n = len(y) + len(x)
    Y = np.fft.rfft(y, n)
    X = np.fft.rfft(x, n)
    H = Y * np.conj(X) / (np.abs(X) ** 2 + 1e-3 * np.max(np.abs(X)) ** 2 * 1e-3)
    h = np.fft.irfft(H, n)
    return h[:CFG['ir_len']]


def octave(h, fc):
    lo, hi = fc / np.sqrt(2), fc * np.sqrt(2)
    sos = ss.butter(CFG['oct_order'], [lo, hi], btype='band', fs=FS, output='sos')
    if CFG['oct_filtfilt']:
        return ss.sosfiltfilt(sos, h)
    return ss.sosfilt(sos, h)


def noise_level(e):
    # mean energy of last 10 %
    n = len(e)
    return np.mean(e[int(0.9 * n):])


def truncation_point(e):
    # crude: smoothed envelope crossing noise level
    nl = noise_level(e)
    win = int(0.01 * FS)
    env = np.convolve(e, np.ones(win) / win, mode='same')
    pk = np.argmax(env)
    idx = np.where(env[pk:] <= nl * 1.0)[0]
    if len(idx) == 0:
        return len(e)
    return pk + idx[0]


def schroeder(e, trunc=True):
    if trunc:
        tp = truncation_point(e)
        e = e[:tp]
    s = np.cumsum(e[::-1])[::-1]
    s = s / s[0]
    return 10 * np.log10(np.maximum(s, 1e-30))


def decay_time(sdb, top, bot):
    i0 = np.argmax(sdb <= top)
    i1 = np.argmax(sdb <= bot)
    if i1 <= i0 + 1:
        i1 = len(sdb) - 1
    t = np.arange(i0, i1 + 1) / FS
    a, b = np.polyfit(t, sdb[i0:i1 + 1], 1)
    return -60.0 / a if a < 0 else float('nan')


def onset(h):
    if CFG.get('onset_peak'):
        return int(np.argmax(np.abs(h)))
    e = h ** 2
    return int(np.argmax(e >= np.max(e) * 0.01))


def clarity(e, t0, ms):
    k = t0 + int(round(ms * FS / 1000))
    return 10 * np.log10(np.sum(e[:k]) / np.sum(e[k:]))


def clarity_sub(ee, nl, ms):
    k = int(round(ms * FS / 1000))
    a = np.sum(ee[:k]) - nl * k
    b = np.sum(ee[k:]) - nl * (len(ee) - k)
    return 10 * np.log10(a / b)


def drr(h, t0, cp=None):
    w = int(round(CFG['direct_ms'] * FS / 1000))
    e = h ** 2
    if cp is not None:
        e = e[:t0 + cp]
    on = int(np.argmax(h ** 2 >= np.max(h ** 2) * 0.01))
    a = max(0, on - w)
    d = np.sum(e[a:on + w])
    r = np.sum(e[on + w:])
    return 10 * np.log10(d / r)


def inr(hb):
    e = hb ** 2
    nl = noise_level(e)
    return 10 * np.log10(np.max(e) / nl)


def analyse_rir(h, full=True):
    from lundeby import lundeby
    t0 = onset(h)
    out = {}
    c50, c80, edt, t20, t30, inrs = [], [], [], [], [], []
    for fc in BANDS:
        hb = octave(h, fc)
        e = hb ** 2
        ee = e[t0:]
        cp, nz, b, g = lundeby(ee, win0=(800.0 / fc + 10) / 1000, above=(10 if full else 5))
        if cp < CFG.get('min_cp', 1600):
            cp = max(cp, block_cross(ee))
        nl = np.mean(ee[int(0.9 * len(ee)):])
        c50.append(clarity_sub(ee, nl, 50))
        inrs.append(inr_def(ee, cp, nz, b, g))
        if full:
            c80.append(clarity_sub(ee, nl, 80))
            s = np.cumsum(ee[:cp][::-1])[::-1]
            s = 10 * np.log10(np.maximum(s / s[0], 1e-30))
            edt.append(decay_time(s, 0, -10))
            t20.append(decay_time(s, -5, -25))
            t30.append(decay_time(s, -5, -35))
    e = h ** 2
    ee0 = e[t0:]
    nlb = np.mean(ee0[int(0.9 * len(ee0)):])
    out['c50'] = c50
    out['inr'] = inrs
    a0 = max(0, t0 - 40)
    dd = np.sum(e[a0:t0 + 40]) - nlb * (t0 + 40 - a0)
    rr = np.sum(e[t0 + 40:]) - nlb * (len(e) - t0 - 40)
    out['drr'] = 10 * np.log10(dd / rr)
    if full:
        out['c80'] = c80
        out['edt'] = edt
        out['t20'] = t20
        out['t30'] = t30
        out['d50'] = float((np.sum(ee0[:800]) - nlb * 800) / (np.sum(ee0) - nlb * len(ee0)))
        out['pnr'] = 10 * np.log10(np.max(h ** 2) / noise_level(h ** 2))
    return out


def fallback_cp(ee, blk=160, above=CFG.get('fb_above', 5.0)):
    try:
        nb = len(ee) // blk
        E = ee[:nb * blk].reshape(nb, blk).mean(1)
        nl = np.mean(ee[int(0.9 * len(ee)):])
        Ed = 10 * np.log10(np.maximum(E, 1e-300) / nl)
        j = int(np.argmax(E)) + 1
        idx = np.where(Ed[j:] < above)[0]
        stop = j + (idx[0] if len(idx) else nb - j)
        if stop - j < 2:
            return block_cross(ee, blk)
        t = (np.arange(nb) + 0.5) * blk
        g, b = np.polyfit(t[j:stop], Ed[j:stop], 1)
        if g >= 0:
            return block_cross(ee, blk)
        return int(min(max(-b / g, blk), len(ee)))
    except Exception:
        return block_cross(ee, blk)


def block_cross(ee, blk=160):
    nb = len(ee) // blk
    E = ee[:nb * blk].reshape(nb, blk).mean(1)
    nl = np.mean(ee[int(0.9 * len(ee)):])
    idx = np.where(E <= nl)[0]
    if len(idx) == 0:
        return len(ee)
    return int(idx[0] * blk)


def inr_def(ee, cp, nz, b, g):
    n = int(0.01 * FS)
    nb = len(ee) // n
    E = ee[:nb * n].reshape(nb, n).mean(1)
    nl = np.mean(ee[int(0.9 * len(ee)):])
    return 10 * np.log10(np.max(E) / nl)


def doa(y, mics, centre, linear):
    f, t, Z = ss.stft(y, fs=FS, window='hann', nperseg=512, noverlap=256)
    sel = np.where((f >= 300) & (f <= 3500))[0]
    Zs = Z[:, sel, :]
    Rm = np.einsum('mft,nft->fmn', Zs, Zs.conj()) / Zs.shape[2]
    pos = (mics - centre)[:, :2]
    grid = np.arange(0, 360, 1.0)
    g = np.deg2rad(grid)
    u = np.stack([np.cos(g), np.sin(g)], 1)
    tau = (u @ pos.T) / C
    P = np.zeros(len(g))
    for k in range(len(sel)):
        A = np.exp(2j * np.pi * f[sel[k]] * tau)
        wv, V = np.linalg.eigh(Rm[k])
        En = V[:, :-1]
        p = 1.0 / np.sum(np.abs(A.conj() @ En) ** 2, 1)
        P += p / p.max()
    P /= len(sel)
    j = int(np.argmax(P))
    n = len(P)
    pm, p0, pp = P[j - 1], P[j], P[(j + 1) % n]
    den = pm - 2 * p0 + pp
    dl = 0.5 * (pm - pp) / den if den != 0 else 0.0
    az = (grid[j] + dl) % 360
    if linear and az > 180:
        az = 360 - az
    par = 10 * np.log10(P.max() / P.mean())
    return az, par


def beamform(y, mics, centre, az):
    M, N = y.shape
    n = N
    Y = np.fft.rfft(y, n, axis=1)
    f = np.fft.rfftfreq(n, 1 / FS)
    pos = mics - centre
    u = np.array([np.cos(np.deg2rad(az)), np.sin(np.deg2rad(az)), 0.0])
    tau = -(pos @ u) / C
    D = np.linalg.norm(pos[:, None, :] - pos[None, :, :], axis=2)
    out = np.zeros(len(f), complex)
    I = np.eye(M)
    for k in range(len(f)):
        G = np.sinc(2 * f[k] * D / C) + CFG['loading'] * I
        d = np.exp(-2j * np.pi * f[k] * tau)
        gi = np.linalg.solve(G, d)
        w = gi / (d.conj() @ gi)
        out[k] = w.conj() @ Y[:, k]
    return np.fft.irfft(out, n)


def safe(fn, default):
    try:
        return fn()
    except Exception as ex:
        sys.stderr.write('error: %r\n' % (ex,))
        return default


def main():
    sc = json.load(sys.stdin)
    p = sc['parameters']
    y, x, mics, centre = simulate(p)
    h0 = deconv(y[0], x)
    dflt = {'c50': [5.0] * 6, 'c80': [8.0] * 6, 'edt': [0.4] * 6, 't20': [0.4] * 6, 't30': [0.4] * 6,
            'inr': [50.0] * 6, 'drr': 0.0, 'd50': 0.9, 'pnr': 60.0}
    r = safe(lambda: analyse_rir(h0), dflt)
    az, par = safe(lambda: doa(y, mics, centre, p['microphone_array'].startswith('linear')),
                   (float(p['source_azimuth']), 5.0))
    rb = safe(lambda: analyse_rir(deconv(beamform(y, mics, centre, az), x), full=False), dflt)
    res = {
        'azimuth_deg': float(az),
        'beam_c50_db': rb['c50'],
        'beam_drr_db': rb['drr'],
        'beam_inr_db': rb['inr'],
        'c50_db': r['c50'],
        'c80_db': r['c80'],
        'd50': r['d50'],
        'drr_db': r['drr'],
        'edt_s': r['edt'],
        'inr_db': r['inr'],
        'peak_to_noise_db': r['pnr'],
        'spectrum_par_db': float(par),
        't20_s': r['t20'],
        't30_s': r['t30'],
    }

    def clean(v, d=0.0):
        if isinstance(v, (list, tuple)):
            return [clean(a) for a in v]
        v = float(v)
        return v if np.isfinite(v) else d
    res = {k: clean(v) for k, v in res.items()}
    print(json.dumps(res))


if __name__ == '__main__':
    main()
