"""Baseline: a textbook ISO 3382 measurement chain, written from the description and
the published evidence without the recipe.

Exponential sweep over the full band with Farina's inverse filter, white sensor noise
scaled to the SNR of the whole recording, octave bands from 4th-order Butterworth
band-passes, Schroeder backward integration over the whole response (no noise
compensation), EDT/T20/T30 from linear regressions, clarity and definition from the
direct-sound peak, DRR with a +-2.5 ms direct window, and MUSIC on its defaults on a
1-degree grid for the direction; then a superdirective beam toward it designed against a
cylindrically isotropic (2-D) diffuse field with a textbook loading of 0.1, measured the
same way.
"""
from __future__ import annotations

import json
import math
import sys

import numpy as np
import pyroomacoustics as pra
from scipy import signal

FS = 16000
C = 343.0
ROOMS = {"small": (4.0, 3.5, 2.7), "medium": (6.0, 4.5, 3.0), "large": (9.0, 7.0, 3.5)}
# the walls as geometry.json lists them
FINISHES = {
    "studio": {"west": "plasterboard", "east": "facing_brick", "south": "curtains_fabric",
               "north": "plasterboard", "floor": "carpet_tufted_9.5mm", "ceiling": "ceiling_fissured_tile"},
    "office": {"west": "plasterboard", "east": "plasterboard", "south": "glass_window",
               "north": "plasterboard", "floor": "carpet_cotton", "ceiling": "ceiling_fissured_tile"},
    "classroom": {"west": "plasterboard", "east": "glass_window", "south": "plasterboard",
                  "north": "wooden_lining", "floor": "linoleum_on_concrete",
                  "ceiling": "ceiling_perforated_gypsum_board"},
    "chapel": {"west": "limestone_wall", "east": "limestone_wall", "south": "curtains_cotton_0.5",
               "north": "limestone_wall", "floor": "marble_floor", "ceiling": "wooden_lining"},
}
ARRAYS = {"linear4_5cm": ("linear", 4, 0.05), "linear8_4cm": ("linear", 8, 0.04),
          "circular6_5cm": ("circular", 6, 0.05), "circular8_10cm": ("circular", 8, 0.10)}


def simulate(p: dict) -> tuple[list[np.ndarray], np.ndarray]:
    dims = np.array(ROOMS[p["room_size"]])
    centre = np.array([dims[0] / 2, dims[1] / 2, 1.2])
    kind, m, size = ARRAYS[p["microphone_array"]]
    off = pra.linear_2D_array([0, 0], m, 0.0, size) if kind == "linear" else pra.circular_2D_array([0, 0], m, 0.0, size)
    mics = np.vstack([off + centre[:2, None], np.full(m, 1.2)])
    az = math.radians(p["source_azimuth"])
    src = centre + p["source_distance"] * np.array([math.cos(az), math.sin(az), 0.0])
    room = pra.ShoeBox(dims, fs=FS, materials=pra.make_materials(**FINISHES[p["finish"]]),
                       max_order=p["max_order"], air_absorption=True)
    room.add_source(src)
    room.add_microphone_array(mics)
    room.compute_rir()
    return [np.asarray(room.rir[i][0], float) for i in range(m)], off


def farina_sweep(n: int, f1: float, f2: float) -> tuple[np.ndarray, np.ndarray]:
    t = np.arange(n) / FS
    T = n / FS
    r = math.log(f2 / f1)
    x = np.sin(2 * math.pi * f1 * T / r * (np.exp(t * r / T) - 1))
    inv = x[::-1] * np.exp(-t * r / T)
    inv /= np.max(np.abs(signal.fftconvolve(x, inv)))
    return x, inv


def schroeder_db(x: np.ndarray) -> np.ndarray:
    e = np.cumsum((x ** 2)[::-1])[::-1]
    return 10 * np.log10(e / e[0] + 1e-300)


def fit(db: np.ndarray, hi: float, lo: float) -> float:
    idx = np.flatnonzero((db <= hi) & (db >= lo))
    if idx.size < 2:
        return 0.0
    s = np.polyfit(idx / FS, db[idx], 1)[0]
    return float(-60 / s) if s < 0 else 0.0


def main() -> None:
    p = json.load(sys.stdin)["parameters"]
    rirs, off = simulate(p)
    n = FS
    x, inv = farina_sweep(n, 20.0, FS / 2)
    n_rec = 2 * n
    clean = np.zeros((len(rirs), n_rec))
    for i, h in enumerate(rirs):
        y = signal.fftconvolve(x, h)[:n_rec]
        clean[i, :len(y)] = y
    sigma = math.sqrt(np.mean(clean[0] ** 2) / 10 ** (p["snr_db"] / 10))
    rec = clean + sigma * np.random.default_rng(p["seed"]).standard_normal(clean.shape)
    h = signal.fftconvolve(rec[0], inv)[n - 1: 2 * n - 1]
    pnr = 10 * math.log10(np.max(h ** 2) / np.mean(h[-n // 10:] ** 2))

    peak, (inr, edt, t20, t30, c50, c80), d50, drr = analyse(h)

    _, _, Z = signal.stft(rec, fs=FS, window="hann", nperseg=512, noverlap=256)
    linear = ARRAYS[p["microphone_array"]][0] == "linear"
    grid = np.arange(0.0, 181.0 if linear else 360.0)
    doa = pra.doa.algorithms["MUSIC"](off, FS, 512, c=C, num_src=1, azimuth=np.deg2rad(grid))
    doa.locate_sources(Z)
    v = np.asarray(doa.grid.values, float)
    est = float(grid[int(np.argmax(v))])
    par = 10 * math.log10(v.max() / v.mean())

    beam = superdirective(rec, off, est)
    hb = signal.fftconvolve(beam, inv)[n - 1: 2 * n - 1]
    _, (beam_inr, _, _, _, beam_c50, _), _, beam_drr = analyse(hb)

    print(json.dumps({"peak_to_noise_db": pnr, "inr_db": inr, "edt_s": edt, "t20_s": t20, "t30_s": t30, "c50_db": c50,
                      "c80_db": c80, "d50": d50, "drr_db": drr, "azimuth_deg": est, "spectrum_par_db": par,
                      "beam_inr_db": beam_inr, "beam_c50_db": beam_c50, "beam_drr_db": beam_drr}))


def superdirective(rec: np.ndarray, off: np.ndarray, az_deg: float) -> np.ndarray:
    from scipy.special import j0

    n = rec.shape[1]
    f = np.fft.rfftfreq(n, 1 / FS)
    u = np.array([math.cos(math.radians(az_deg)), math.sin(math.radians(az_deg))])
    d = np.exp(2j * np.pi * f[:, None] * (off.T @ u)[None, :] / C)
    r = np.linalg.norm(off[:, :, None] - off[:, None, :], axis=0)
    g = j0(2 * np.pi * f[:, None, None] * r[None] / C) + 0.1 * np.eye(off.shape[1])
    a = np.linalg.solve(g, d[:, :, None])[:, :, 0]
    w = a / np.einsum("fm,fm->f", d.conj(), a)[:, None]
    return np.fft.irfft(np.einsum("fm,mf->f", w.conj(), np.fft.rfft(rec, axis=1)), n)


def analyse(h: np.ndarray) -> tuple[int, tuple[list[float], ...], float, float]:
    peak = int(np.argmax(np.abs(h)))
    inr, edt, t20, t30, c50, c80 = [], [], [], [], [], []
    for fc in (125, 250, 500, 1000, 2000, 4000):
        sos = signal.butter(4, [fc / math.sqrt(2), fc * math.sqrt(2)], btype="bandpass", fs=FS, output="sos")
        xb = signal.sosfilt(sos, h)[peak:]
        inr.append(10 * math.log10(np.max(xb ** 2) / np.mean(xb[-len(xb) // 10:] ** 2)))
        db = schroeder_db(xb)
        edt.append(fit(db, 0, -10))
        t20.append(fit(db, -5, -25))
        t30.append(fit(db, -5, -35))
        e = xb ** 2
        c50.append(10 * math.log10(np.sum(e[:800]) / np.sum(e[800:])))
        c80.append(10 * math.log10(np.sum(e[:1280]) / np.sum(e[1280:])))
    e = h[peak:] ** 2
    d50 = float(np.sum(e[:800]) / np.sum(e))
    lo, hi = max(peak - 40, 0), peak + 40
    drr = 10 * math.log10(np.sum(h[lo:hi + 1] ** 2) / np.sum(h[hi + 1:] ** 2))
    return peak, (inr, edt, t20, t30, c50, c80), d50, drr


if __name__ == "__main__":
    main()
