import sys, json, os
import numpy as np
import scipy.signal as sps
import pyroomacoustics as pra
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lundeby as LB

FS = 16000
C = 343.0
HERE = os.path.dirname(os.path.abspath(__file__))
FIN = json.load(open(os.path.join(HERE, 'finishes.json')))
ROOMS = {'small': [4.0, 3.5, 2.7], 'medium': [6.0, 4.5, 3.0], 'large': [9.0, 7.0, 3.5]}
BANDS = [125.0, 250.0, 500.0, 1000.0, 2000.0, 4000.0]


def array_geom(name, centre):
    cx, cy, cz = centre
    if name.startswith('linear'):
        n = int(name[6]); d = float(name.split('_')[1][:-2]) / 100
        xs = (np.arange(n) - (n - 1) / 2) * d
        return np.array([[cx + x, cy, cz] for x in xs])
    n = int(name[8]); r = float(name.split('_')[1][:-2]) / 100
    if n == 6:
        r = 0.05
    ang = 2 * np.pi * np.arange(n) / n
    return np.array([[cx + r * np.cos(a), cy + r * np.sin(a), cz] for a in ang])


def sweep():
    N = FS
    t = np.arange(N) / FS
    f1, f2, T = 50.0, 7000.0, 1.0
    L = np.log(f2 / f1)
    x = np.sin(2 * np.pi * f1 * T / L * (np.exp(t / T * L) - 1))
    nf = int(0.01 * FS)
    w = np.hanning(2 * nf)
    x[:nf] *= w[:nf]
    x[-nf:] *= w[nf:]
    return x


def deconv(y, x, nout):
    t = np.arange(len(x)) / FS
    inv = x[::-1] * np.exp(-t * np.log(7000.0 / 50.0))
    h = sps.fftconvolve(y, inv)[len(x) - 1:len(x) - 1 + nout]
    return h


def deconv_old(y, x, nout):
    n = len(y) + len(x)
    nfft = 1 << int(np.ceil(np.log2(n)))
    X = np.fft.rfft(x, nfft)
    Y = np.fft.rfft(y, nfft)
    f = np.fft.rfftfreq(nfft, 1 / FS)
    eps = 1e-3 * np.max(np.abs(X)) ** 2
    H = Y * np.conj(X) / (np.abs(X) ** 2 + eps)
    h = np.fft.irfft(H, nfft)[:nout]
    return h


def band_filter(h, fc):
    sos = sps.butter(3, [fc / np.sqrt(2), fc * np.sqrt(2)], btype='band', fs=FS, output='sos')
    return sps.sosfilt(sos, h)


def noise_level(h):
    tail = h[int(0.9 * len(h)):]
    return np.mean(tail ** 2)


def trunc_point(e, nb, wms=10):
    w = int(wms * FS / 1000)
    sm = np.convolve(e, np.ones(w) / w, 'same')
    pk = int(np.argmax(sm))
    idx = np.where(sm[pk:] <= nb)[0]
    T = pk + int(idx[0]) if len(idx) else len(e)
    return T, sm


def lund(e, nb, bot=10.0):
    w = 160
    sm = np.convolve(e, np.ones(w) / w, 'same'); pk = int(np.argmax(sm))
    L = 10 * np.log10(np.maximum(sm, 1e-30)); Ln = 10 * np.log10(nb)
    i0 = pk
    j = np.where(L[pk:] <= Ln + bot)[0]; i1 = pk + int(j[0]) if len(j) else len(e)
    if i1 <= i0 + 5:
        return len(e)
    p = np.polyfit(np.arange(i0, i1), L[i0:i1], 1)
    if p[0] >= 0:
        return len(e)
    return int(min(len(e), max(i1, (Ln - p[1]) / p[0])))


def schroeder_plain(e, T):
    ee = e[:T]
    E = np.maximum(np.cumsum(ee[::-1])[::-1], 1e-30)
    return 10 * np.log10(E / E[0])


def schroeder(e, nb, T):
    ee = e[:T]
    E = np.cumsum(ee[::-1])[::-1] - nb * np.arange(T, 0, -1)
    E = np.maximum(E, 1e-30)
    return 10 * np.log10(E / E[0])


def decay_time(edc, hi, lo):
    t = np.arange(len(edc)) / FS
    i0 = int(np.argmax(edc <= hi))
    if not np.any(edc <= lo):
        i1 = len(edc)
    else:
        i1 = int(np.argmax(edc <= lo))
    if i1 <= i0 + 2:
        return 0.0
    p = np.polyfit(t[i0:i1], edc[i0:i1], 1)
    if p[0] >= 0:
        return 0.0
    return float(-60.0 / p[0])


def robust_dt(edcs, hi, lo):
    for edc in edcs:
        v = decay_time(edc, hi, lo)
        if np.isfinite(v) and 0.01 < v < 20:
            return float(v)
    return 0.5


def clarity(e, ms, nb, T):
    k = int(ms * FS / 1000)
    early = np.sum(e[:min(k, T)])
    late = np.sum(e[k:T]) - nb * max(T - k, 0)
    if late <= 0 or early <= 0:
        return 40.0
    return float(np.clip(10 * np.log10(early / late), -40, 40))


def onset_of(h):
    pk = np.argmax(np.abs(h))
    thr = np.max(h ** 2) * 10 ** (-20 / 10)
    idx = np.where(h[:pk + 1] ** 2 >= thr)[0]
    return int(idx[0]) if len(idx) else pk


def drr(h):
    on = onset_of(h)
    nl = noise_level(h)
    b = on + int(0.0025 * FS) + 1
    d = np.sum(h[on:b] ** 2)
    r = np.sum(h[b:] ** 2) - nl * (len(h) - b)
    if r <= 0:
        return 40.0
    return float(10 * np.log10(d / r))


def measure(h, full=True):
    out = {}
    nl = noise_level(h)
    onset = onset_of(h)
    out['peak_to_noise_db'] = float(10 * np.log10(np.max(h ** 2) / nl))
    c50 = []; c80 = []; inr = []; edt = []; t20 = []; t30 = []
    for fc in BANDS:
        hb = band_filter(h, fc)
        nb = noise_level(hb)
        e = hb[onset:] ** 2
        TL, nz, fit = LB.lundeby(e, p=5, margin_db=10.0, dyn=(5.0, 25.0), w0=320, lo0=5.0)
        c50.append(clarity(e, 50, nz, TL))
        c80.append(clarity(e, 80, nz, TL))
        sm = np.convolve(hb ** 2, np.ones(160) / 160)
        inr.append(float(10 * np.log10(np.max(sm) / nz)))
        if full:
            edcs = [schroeder_plain(e, TL), schroeder_plain(e, lund(e, nb)), schroeder(e, nb, len(e))]
            edt.append(robust_dt([edcs[0], edcs[1], edcs[2]], 0.0, -10.0))
            t20.append(robust_dt([edcs[1], edcs[0], edcs[2]], -5.0, -25.0))
            t30.append(robust_dt([edcs[1], edcs[0], edcs[2]], -5.0, -35.0))
    out['c50'] = c50; out['c80'] = c80; out['inr'] = inr
    out['edt'] = edt; out['t20'] = t20; out['t30'] = t30
    e = h[onset:] ** 2
    k = int(0.05 * FS)
    TL, nz, _ = LB.lundeby(e, p=5, margin_db=10.0, dyn=(5.0, 25.0), w0=320, lo0=5.0)
    kk = min(k, TL)
    num = np.sum(e[:kk]) - nz * kk
    den = np.sum(e[:TL]) - nz * TL
    out['d50'] = float(np.clip(num / den, 0, 0.9999)) if den > 0 else 0.9999
    out['drr'] = drr(h)
    return out


def doa(sig, mics, linear):
    nfft = 512
    X = sps.stft(sig, fs=FS, nperseg=nfft, noverlap=nfft // 2)[2]
    az = np.arange(0, 360, 1.0)
    L = (mics[:, :2] - mics[:, :2].mean(0)).T
    d = pra.doa.algorithms['NormMUSIC'](L, FS, nfft, c=C, num_src=1, azimuth=np.deg2rad(az))
    d.locate_sources(X, freq_range=[300.0, 3500.0])
    g = np.asarray(d.grid.values, float).copy()
    gs = g[:181] if linear else g
    k = int(np.argmax(gs)); n = len(g)
    y0, y1, y2 = g[(k - 1) % n], g[k], g[(k + 1) % n]
    den = y0 - 2 * y1 + y2
    off = 0.5 * (y0 - y2) / den if den != 0 else 0.0
    a = float((az[k] + off) % 360)
    par = float(10 * np.log10(np.max(gs) / np.mean(gs)))
    return a, par


def beamform(sig, mics, az_deg, nl_reg=1e-2):
    M, N = sig.shape
    nfft = 1 << int(np.ceil(np.log2(N)))
    Y = np.fft.rfft(sig, nfft, axis=1)
    f = np.fft.rfftfreq(nfft, 1 / FS)
    p = mics - mics.mean(0)
    u = np.array([np.cos(np.deg2rad(az_deg)), np.sin(np.deg2rad(az_deg)), 0])
    tau = p @ u / C  # advance
    D = np.linalg.norm(p[:, None, :] - p[None, :, :], axis=2)
    out = np.zeros(len(f), complex)
    for k in range(len(f)):
        d = np.exp(1j * 2 * np.pi * f[k] * tau)
        G = np.sinc(2 * f[k] * D / C) + nl_reg * np.eye(M)
        Gi = np.linalg.solve(G, d)
        w = Gi / (np.conj(d) @ Gi)
        out[k] = np.conj(w) @ Y[:, k]
    return np.fft.irfft(out, nfft)[:N]


def simulate(P):
    dim = ROOMS[P['room_size']]
    centre = np.array([dim[0] / 2, dim[1] / 2, 1.2])
    mics = array_geom(P['microphone_array'], centre)
    az = np.deg2rad(P['source_azimuth'])
    src = centre + P['source_distance'] * np.array([np.cos(az), np.sin(az), 0])
    fin = FIN[P['finish']]
    mats = {k: pra.Material(v[0]) for k, v in fin.items()}
    room = pra.ShoeBox(dim, fs=FS, materials=mats, max_order=int(P['max_order']), air_absorption=True)
    x = sweep()
    room.add_source(src, signal=x)
    room.add_microphone_array(mics.T)
    room.simulate()
    NR = 2 * FS
    sig = room.mic_array.signals[:, :NR]
    if sig.shape[1] < NR:
        sig = np.pad(sig, ((0, 0), (0, NR - sig.shape[1])))
    M = sig.shape[0]
    rng = np.random.default_rng(int(P['seed']))
    noise = rng.standard_normal((M, NR))
    ps = np.mean(sig[0, :FS] ** 2)
    noise *= np.sqrt(ps / 10 ** (P['snr_db'] / 10))
    rec = sig + noise
    return rec, mics, sig


def analyse(P, rec, mics):
    x = sweep()
    h = deconv(rec[0], x, FS)
    m = measure(h)
    linear = P['microphone_array'].startswith('linear')
    try:
        a, par = doa(rec, mics, linear)
    except Exception as e:
        print(e, file=sys.stderr)
        a, par = float(P['source_azimuth']), 5.0
    yb = beamform(rec, mics, a)
    hb = deconv(yb, x, FS)
    mb = measure(hb, full=False)
    res = {
        'azimuth_deg': a,
        'beam_c50_db': mb['c50'],
        'beam_drr_db': mb['drr'],
        'beam_inr_db': mb['inr'],
        'c50_db': m['c50'],
        'c80_db': m['c80'],
        'd50': m['d50'],
        'drr_db': m['drr'],
        'edt_s': m['edt'],
        'inr_db': m['inr'],
        'peak_to_noise_db': m['peak_to_noise_db'],
        'spectrum_par_db': par,
        't20_s': m['t20'],
        't30_s': m['t30'],
    }
    return res


def main():
    sc = json.load(sys.stdin)
    P = sc['parameters']
    rec, mics, _ = simulate(P)
    print(json.dumps(analyse(P, rec, mics)))


if __name__ == '__main__':
    main()
