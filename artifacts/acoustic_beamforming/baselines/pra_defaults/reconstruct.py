"""Baseline: pyroomacoustics on its defaults.

What a pyroomacoustics user writes from the task's description and the published
geometry: simulate the room, play the library's exponential sweep through it with the
library's own noise model, deconvolve with the library's deconvolution for the noisy
measurement, and read the room-acoustic parameters off the simulated impulse response
with the library's octave filter bank and RT60 routine; localise with the library's
SRP-PHAT on its defaults, and steer the library's far-field delay-and-sum beamformer at
that direction, reading the beam's INR, C50 and DRR off its deconvolved response.
"""
from __future__ import annotations

import json
import math
import sys

import numpy as np
import pyroomacoustics as pra
from pyroomacoustics.experimental import measure_rt60
from pyroomacoustics.experimental.deconvolution import deconvolve
from pyroomacoustics.experimental.signals import exponential_sweep

FS = 16000
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


def mic_offsets(name: str) -> np.ndarray:
    if name == "linear4_5cm":
        return pra.linear_2D_array([0, 0], 4, 0.0, 0.05)
    if name == "linear8_4cm":
        return pra.linear_2D_array([0, 0], 8, 0.0, 0.04)
    if name == "circular6_5cm":
        return pra.circular_2D_array([0, 0], 6, 0.0, 0.05)
    return pra.circular_2D_array([0, 0], 8, 0.0, 0.10)


def rt(h: np.ndarray, decay_db: float) -> float:
    try:
        v = float(measure_rt60(h, fs=FS, decay_db=decay_db))
    except (ValueError, IndexError, FloatingPointError):
        return 0.0
    return v if math.isfinite(v) and v > 0 else 0.0


def ratio_db(e: np.ndarray, n: int) -> float:
    early, late = float(np.sum(e[:n])), float(np.sum(e[n:]))
    return 10 * math.log10(early / late) if late > 0 and early > 0 else 0.0


def main() -> None:
    p = json.load(sys.stdin)["parameters"]
    dims = np.array(ROOMS[p["room_size"]])
    centre = np.array([dims[0] / 2, dims[1] / 2, 1.2])
    off = mic_offsets(p["microphone_array"])
    mics = np.vstack([off + centre[:2, None], np.full(off.shape[1], 1.2)])
    az = math.radians(p["source_azimuth"])
    src = centre + p["source_distance"] * np.array([math.cos(az), math.sin(az), 0.0])

    np.random.seed(p["seed"] % 2**32)
    room = pra.ShoeBox(dims, fs=FS, materials=pra.make_materials(**FINISHES[p["finish"]]),
                       max_order=p["max_order"], air_absorption=True)
    sweep = exponential_sweep(1.0, FS)
    room.add_source(src, signal=sweep)
    room.add_microphone_array(mics)
    room.simulate(snr=p["snr_db"])
    rec = room.mic_array.signals

    h_meas = deconvolve(rec[0], sweep, length=16000)
    pnr = 10 * math.log10(np.max(h_meas ** 2) / np.mean(h_meas[-1600:] ** 2))

    inr = []
    measured_bands = room.octave_bands.analysis(h_meas)
    for b in range(6):
        e = measured_bands[:, b] ** 2
        inr.append(10 * math.log10(np.max(e) / np.mean(e[-1600:])))

    h = np.asarray(room.rir[0][0], float)
    peak = int(np.argmax(np.abs(h)))
    bands = room.octave_bands.analysis(h)[:, :6]
    edt, t20, t30, c50, c80 = [], [], [], [], []
    for b in range(6):
        x = bands[:, b]
        edt.append(rt(x, 10))
        t20.append(rt(x, 20))
        t30.append(rt(x, 30))
        e = x[peak:] ** 2
        c50.append(ratio_db(e, 800))
        c80.append(ratio_db(e, 1280))
    e = h[peak:] ** 2
    d50 = float(np.sum(e[:800]) / np.sum(e))
    direct = float(np.sum(h[max(peak - 40, 0): peak + 41] ** 2))
    drr = 10 * math.log10(direct / float(np.sum(h[peak + 41:] ** 2)))

    X = pra.transform.stft.analysis(rec.T, 256, 128).transpose([2, 1, 0])
    doa = pra.doa.algorithms["SRP"](off, FS, 256, c=343.0, num_src=1)
    doa.locate_sources(X)
    est = float(np.degrees(doa.azimuth_recon[0])) % 360.0
    if p["microphone_array"].startswith("linear") and est > 180.0:
        est = 360.0 - est
    v = np.asarray(doa.grid.values, float)
    par = 10 * math.log10(v.max() / v.mean())

    bf = pra.Beamformer(mics[:2], FS, N=1024)
    bf.signals = rec
    bf.far_field_weights(math.radians(est))
    hb = deconvolve(bf.process(), sweep, length=16000)
    qb = int(np.argmax(np.abs(hb)))
    beam_bands = room.octave_bands.analysis(hb)
    beam_inr, beam_c50 = [], []
    for b in range(6):
        e = beam_bands[:, b] ** 2
        beam_inr.append(10 * math.log10(np.max(e) / np.mean(e[-1600:])))
        beam_c50.append(ratio_db(e[qb:], 800))
    beam_drr = 10 * math.log10(float(np.sum(hb[max(qb - 40, 0): qb + 41] ** 2)) / float(np.sum(hb[qb + 41:] ** 2)))

    out = {"peak_to_noise_db": pnr, "inr_db": inr, "edt_s": edt, "t20_s": t20, "t30_s": t30, "c50_db": c50, "c80_db": c80,
           "d50": d50, "drr_db": drr, "azimuth_deg": est, "spectrum_par_db": par,
           "beam_inr_db": beam_inr, "beam_c50_db": beam_c50, "beam_drr_db": beam_drr}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
