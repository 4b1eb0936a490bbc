import sys, json
import numpy as np
import scipy.signal as ss
import pyroomacoustics as pra

FS = 16000
C = 343.0
ROOMS = {'small': [4.0, 3.5, 2.7], 'medium': [6.0, 4.5, 3.0], 'large': [9.0, 7.0, 3.5]}
FINISH = {
    'classroom': dict(west='plasterboard', east='glass_window', south='plasterboard', north='wooden_lining',
                      floor='linoleum_on_concrete', ceiling='ceiling_perforated_gypsum_board'),
    'office': dict(west='plasterboard', east='plasterboard', south='glass_window', north='plasterboard',
                   floor='carpet_cotton', ceiling='ceiling_fissured_tile'),
    'chapel': dict(west='limestone_wall', east='limestone_wall', south='curtains_cotton_0.5', north='limestone_wall',
                   floor='marble_floor', ceiling='wooden_lining'),
    'studio': dict(west='plasterboard', east='facing_brick', south='curtains_fabric', north='plasterboard',
                   floor='carpet_tufted_9.5mm', ceiling='ceiling_fissured_tile'),
}
INRF = 0.5
EPS = 1e-3
LIT = 0
LNS = 1.0
LM2 = 5.0
LUNDP = [0.0]
DPRE = 40
DPOST = 40
LW = 160
LM = 10.0
COMP = 1.0
DNF = 0.1
EPS_PNR = 1.1e-3
NF_FRAC = 0.1
BANDS = [125, 250, 500, 1000, 2000, 4000]


def array_offsets(name):
    if name.startswith('linear'):
        n = int(name[6]); d = float(name.split('_')[1][:-2]) / 100
        x = (np.arange(n) - (n - 1) / 2) * d
        return np.stack([x, np.zeros(n), np.zeros(n)], 1)
    n = int(name[8]); r = float(name.split('_')[1][:-2]) / 100
    a = 2 * np.pi * np.arange(n) / n
    return np.stack([r * np.cos(a), r * np.sin(a), np.zeros(n)], 1)


def sweep():
    n = FS
    t = np.arange(n) / FS
    f1, f2, T = 50.0, 7000.0, 1.0
    L = T / np.log(f2 / f1)
    x = np.sin(2 * np.pi * f1 * L * (np.exp(t / L) - 1))
    nw = int(0.01 * FS)
    w = np.hanning(2 * nw)
    x[:nw] *= w[:nw]
    x[-nw:] *= w[nw:]
    return x


def simulate(p, off=0):
    dim = ROOMS[p['room_size']]
    fin = FINISH[p['finish']]
    mats = pra.make_materials(**fin)
    room = pra.ShoeBox(dim, fs=FS, materials=mats, max_order=int(p['max_order']), air_absorption=True)
    centre = np.array([dim[0] / 2, dim[1] / 2, 1.2])
    az = np.deg2rad(p['source_azimuth'])
    src = centre + p['source_distance'] * np.array([np.cos(az), np.sin(az), 0.0])
    mics = centre + array_offsets(p['microphone_array'])
    x = sweep()
    room.add_source(src, signal=x)
    room.add_microphone_array(mics.T)
    room.simulate()
    y = room.mic_array.signals
    N = 2 * FS
    out = np.zeros((y.shape[0], N))
    yy = y[:, off:]
    L = min(N, yy.shape[1])
    out[:, :L] = yy[:, :L]
    sig_pow = np.mean(out[0, :FS] ** 2)
    rng = np.random.default_rng(int(p['seed']))
    noise = rng.standard_normal((y.shape[0], N))
    noise *= np.sqrt(sig_pow / 10 ** (p['snr_db'] / 10))
    return out + noise, x, mics, centre


def deconv(y, x, nir=FS, eps=None):
    eps = EPS if eps is None else eps
    N = y.shape[-1]
    nfft = 2 ** int(np.ceil(np.log2(N + len(x))))
    X = np.fft.rfft(x, nfft)
    Y = np.fft.rfft(y, nfft)
    f = np.fft.rfftfreq(nfft, 1 / FS)
    H = Y * np.conj(X) / (np.abs(X) ** 2 + eps * np.max(np.abs(X) ** 2))
    H[..., (f < 50) | (f > 7000)] = 0
    h = np.fft.irfft(H, nfft)
    return h[..., :nir]



def octave(h, fc):
    lo = fc / np.sqrt(2); hi = min(fc * np.sqrt(2), FS / 2 * 0.99)
    sos = ss.butter(3, [lo, hi], btype='band', fs=FS, output='sos')
    return ss.sosfilt(sos, h)


def decay_time(edc, lo, hi):
    t = np.arange(len(edc)) / FS
    i0 = int(np.argmax(edc <= lo))
    i1 = int(np.argmax(edc <= hi))
    if edc[-1] > hi:
        i1 = len(edc)
    if i1 <= i0 + 1:
        return float('nan')
    a, b = np.polyfit(t[i0:i1], edc[i0:i1], 1)
    return float(-60.0 / a)


def crossing(e, Pn, win=160):
    nb = len(e) // win
    if nb == 0:
        return len(e)
    env = e[:nb * win].reshape(nb, win).mean(1)
    c = int(np.argmax(env <= Pn)) * win
    return c if c > 0 else len(e)


def db_ratio(a, b):
    return float(np.clip(10 * np.log10(max(a, 1e-30) / max(b, 1e-30)), -40, 40))


def lundeby(ee, Pn, win=None, marg=None):
    LUNDP[0] = Pn
    win = int(LW) if win is None else win
    marg = LM if marg is None else marg
    nb = len(ee) // win
    if nb < 3:
        return len(ee), None
    env = ee[:nb * win].reshape(nb, win).mean(1)
    t = (np.arange(nb) + 0.5) * win / FS
    ed = 10 * np.log10(env / env.max() + 1e-30)
    nd = 10 * np.log10(Pn / env.max() + 1e-30)
    i0 = int(np.argmax(ed))
    idx = np.where(ed[i0:] <= nd + marg)[0]
    i1 = i0 + (int(idx[0]) if len(idx) else nb - i0)
    if i1 - i0 < 2:
        return len(ee), None
    a, b = np.polyfit(t[i0:i1], ed[i0:i1], 1)
    if a >= 0:
        return len(ee), None
    tc = (nd - b) / a
    for _ in range(int(LIT)):
        d10 = -10.0 / a
        w2 = max(int(d10 / 5 * FS), 16)
        nb2 = len(ee) // w2
        if nb2 < 3:
            break
        ns = int(min((tc + d10 * LNS) * FS, 0.9 * len(ee)))
        Pn2 = np.mean(ee[max(ns, 0):])
        env2 = ee[:nb2 * w2].reshape(nb2, w2).mean(1)
        t2 = (np.arange(nb2) + 0.5) * w2 / FS
        ed2 = 10 * np.log10(env2 / env2.max() + 1e-30)
        nd2 = 10 * np.log10(Pn2 / env2.max() + 1e-30)
        j0 = int(np.argmax(ed2))
        idx = np.where(ed2[j0:] <= nd2 + LM2)[0]
        j1 = j0 + (int(idx[0]) if len(idx) else nb2 - j0)
        if j1 - j0 < 2:
            break
        a2, b2 = np.polyfit(t2[j0:j1], ed2[j0:j1], 1)
        if a2 >= 0:
            break
        a, b, nd = a2, b2, nd2
        tc = (nd - b) / a
        LUNDP[0] = Pn2
    return int(np.clip(tc * FS, 1, len(ee))), a


def decay_edc(ee, Pn):
    c, a = lundeby(ee, Pn)
    Pn = LUNDP[0]
    s = ee[:c]
    sch = np.cumsum(s[::-1])[::-1]
    if a is not None:
        k = a / 10 * np.log(10)
        sch = sch + COMP * Pn * (-1 / k) * FS
    sch = np.maximum(sch, 1e-30)
    return 10 * np.log10(sch / sch[0])


def measure_pnr(h):
    e = h ** 2
    return float(10 * np.log10(e.max() / np.mean(e[-len(e) // 10:])))


def measure(h):
    res = {k: [] for k in ['c50', 'c80', 'edt', 't20', 't30', 'inr']}
    for fc in BANDS:
        hb = octave(h, fc)
        e = hb ** 2
        Pn = np.mean(e[-len(e) // 10:])
        m = np.convolve(e, np.ones(160) / 160, 'same').max()
        Pi = np.mean(e[-int(INRF * len(e)):])
        res['inr'].append(float(10 * np.log10(m / Pi)))
        Pn = np.mean(e[-int(NF_FRAC * len(e)):])
        s0 = int(np.argmax(e >= e.max() / 100))
        ee = e[s0:]
        c = crossing(ee, Pn)
        s = ee[:c] - Pn
        sch = np.cumsum(s[::-1])[::-1]
        sch = np.maximum(sch, 1e-30)
        edc = 10 * np.log10(sch / sch[0])
        edc = decay_edc(ee, np.mean(e[-int(DNF * len(e)):]))
        res['edt'].append(decay_time(edc, 0.0, -10.0))
        res['t20'].append(decay_time(edc, -5.0, -25.0))
        res['t30'].append(decay_time(edc, -5.0, -35.0))
        res['c50'].append(db_ratio(s[:800].sum(), s[800:].sum()))
        res['c80'].append(db_ratio(s[:1280].sum(), s[1280:].sum()))
    e = h ** 2
    Pn = np.mean(e[-len(e) // 10:])
    pk = int(np.argmax(e))
    c = pk + crossing(e[pk:], Pn)
    s = e - Pn
    a = max(pk - 40, 0)
    res['d50'] = float(np.clip(s[a:pk + 800].sum() / s[a:c].sum(), 0, 1))
    a2 = max(pk - int(DPRE), 0)
    res['drr'] = db_ratio(s[a2:pk + int(DPOST)].sum(), s[pk + int(DPOST):c].sum())
    res['pnr'] = float(10 * np.log10(e[pk] / Pn))
    return res


def doa(y, mics, centre, linear):
    NF = 512
    X = np.array([pra.transform.stft.analysis(s, NF, NF // 2, win=pra.hann(NF)).T for s in y])
    P = (mics - centre)[:, :2]
    kb = np.arange(10, 113)
    Xk = X[:, kb, :]
    Cm = np.einsum('mkt,nkt->kmn', Xk, Xk.conj()) / Xk.shape[2]
    w, vv = np.linalg.eigh(Cm)
    Es = vv[..., -1:]
    cross = np.eye(len(P))[None] - Es @ np.conj(np.swapaxes(Es, -1, -2))
    om = 2 * np.pi * kb * FS / NF
    th = np.deg2rad(np.arange(360.0))
    u = np.stack([np.cos(th), np.sin(th)], 0)
    a = np.exp(1j * om[:, None, None] * (P @ u / C)[None])
    Pc = 1 / np.abs(np.einsum('kmg,kmn,kng->kg', a.conj(), cross, a))
    g = (Pc / Pc.max(1, keepdims=True)).mean(0)
    k = int(np.argmax(g[:181])) if linear else int(np.argmax(g))
    n = 360
    ga, gb, gc = g[(k - 1) % n], g[k], g[(k + 1) % n]
    den = ga - 2 * gb + gc
    delta = 0.5 * (ga - gc) / den if den != 0 else 0.0
    az = float((k + delta) % 360)
    par = float(10 * np.log10(g.max() / g.mean()))
    return az, par


def bf_weights(f, mics, centre, az_deg, reg):
    P = mics - centre
    u = np.array([np.cos(np.deg2rad(az_deg)), np.sin(np.deg2rad(az_deg)), 0])
    tau = P @ u / C
    D = np.linalg.norm(mics[:, None] - mics[None], axis=2)
    M = len(mics)
    W = np.zeros((len(f), M), complex)
    for k, fk in enumerate(f):
        dvec = np.exp(2j * np.pi * fk * tau)
        G = np.sinc(2 * fk * D / C) + reg * np.eye(M)
        gi = np.linalg.solve(G, dvec)
        W[k] = gi / (np.conj(dvec) @ gi)
    return W


def beamform(y, mics, centre, az_deg, reg=1e-2, mode='fft', nfft=512):
    N = y.shape[1]
    if mode == 'fft':
        Y = np.fft.rfft(y, axis=1)
        f = np.fft.rfftfreq(N, 1 / FS)
        W = bf_weights(f, mics, centre, az_deg, reg)
        out = np.einsum('km,mk->k', W.conj(), Y)
        return np.fft.irfft(out, N)
    f, t, Z = ss.stft(y, fs=FS, nperseg=nfft)
    W = bf_weights(f, mics, centre, az_deg, reg)
    Zo = np.einsum('km,mkt->kt', W.conj(), Z)
    _, out = ss.istft(Zo, fs=FS, nperseg=nfft)
    return out[:N]


def main():
    sc = json.load(sys.stdin)
    p = sc['parameters']
    y, x, mics, centre = simulate(p)
    print(json.dumps(compute(p, y, x, mics, centre)))


def compute(p, y, x, mics, centre, reg=1e-2, mode='fft', nfft=512):
    h = deconv(y[0], x)
    r = measure(h)
    r['pnr'] = measure_pnr(deconv(y[0], x, eps=EPS_PNR))
    az, par = doa(y, mics, centre, p['microphone_array'].startswith('linear'))
    b = beamform(y, mics, centre, az, reg, mode, nfft)
    hb = deconv(b, x)
    rb = measure(hb)
    rnd = lambda v: [float(round(a, 6)) for a in v]
    out = {
        'azimuth_deg': az,
        'beam_c50_db': rnd(rb['c50']),
        'beam_drr_db': rb['drr'],
        'beam_inr_db': rnd(rb['inr']),
        'c50_db': rnd(r['c50']),
        'c80_db': rnd(r['c80']),
        'd50': r['d50'],
        'drr_db': r['drr'],
        'edt_s': rnd(r['edt']),
        'inr_db': rnd(r['inr']),
        'peak_to_noise_db': r['pnr'],
        'spectrum_par_db': par,
        't20_s': rnd(r['t20']),
        't30_s': rnd(r['t30']),
    }
    for k, v in out.items():
        if isinstance(v, list):
            out[k] = [0.0 if not np.isfinite(a) else a for a in v]
        elif not np.isfinite(v):
            out[k] = 0.0
    return out


if __name__ == '__main__':
    main()
