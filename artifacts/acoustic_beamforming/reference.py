"""Reference solution for the ``acoustic_beamforming`` recon task.

A shoebox room is simulated with the pyroomacoustics image-source model (ISM); a
white-noise source is played and recorded by a small planar microphone array; the
first microphone's room impulse response (RIR) is summarised and the direction of
arrival (DOA) of the source is estimated with SRP-PHAT.

Reads one scenario JSON object on stdin, prints the output JSON object on stdout.
Standalone: imports only the standard library, numpy, scipy and pyroomacoustics.

Fixed conventions (everything not given by the scenario parameters):

* sampling rate ``FS`` = 16000 Hz, speed of sound ``C`` = 343.0 m/s;
* rooms (``room_size``), metres: small 4.0 x 3.5 x 2.7, medium 6.0 x 4.5 x 3.0,
  large 9.0 x 7.0 x 3.5; every wall has the same frequency-independent energy
  absorption coefficient ``absorption``; no air absorption, no randomised ISM, no
  ray tracing, no sensor noise;
* the array centre is at (Lx/2, Ly/2, 1.2 m); all microphones lie in the horizontal
  plane z = 1.2 m; the source is at the same height, at
  centre + source_distance * (cos az, sin az, 0) with az = source_azimuth (degrees,
  counter-clockwise from +x);
* arrays (offsets from the centre, in the xy plane):
  ``linear4_5cm``   4 mics on the x axis, 5 cm apart, at x = (k - 1.5) * 0.05, k = 0..3
  ``linear8_4cm``   8 mics on the x axis, 4 cm apart, at x = (k - 3.5) * 0.04, k = 0..7
  ``circular6_5cm`` 6 mics on a circle of radius 5 cm, mic k at angle 60 deg * k
  ``circular8_10cm`` 8 mics on a circle of radius 10 cm, mic k at angle 45 deg * k
  (mic 0 is the first one listed: the most negative x for linear arrays, angle 0 for
  circular arrays);
* RIR: pyroomacoustics ISM with reflections up to ``max_order``, 81-tap windowed-sinc
  fractional delays (sinc look-up table granularity 20), then the library's default
  zero-phase 10 Hz 2nd-order Butterworth high-pass; computed single-threaded so the
  float32 accumulation order (and therefore every bit) is reproducible;
* source signal: 8000 samples (0.5 s) of standard white noise from
  ``numpy.random.default_rng(seed).standard_normal(8000)``;
* DOA: STFT with 256-sample frames, hop 128, no analysis window (pyroomacoustics
  ``transform.stft.analysis``); SRP-PHAT (``pra.doa.algorithms["SRP"]``) in far-field
  mode with c = 343, nfft = 256, freq_range [1500, 7000] Hz (bins 24..111; the upper
  band keeps the diffuse reverberant field from dragging linear arrays' peaks towards
  broadside), on an azimuth grid with 1 degree steps: 0..359 for circular arrays,
  0..180 (inclusive) for linear arrays (a linear array cannot tell az from -az, so it
  only searches the upper half plane).
  The answer is the grid azimuth where the spatial spectrum is largest (first one on
  ties);
* rt60: pyroomacoustics' Schroeder-integral estimate on mic 0's RIR with
  ``decay_db=30`` (fit from -5 dB to -35 dB, extrapolated to 60 dB). If that fit
  yields a non-finite or non-positive number, rt60 is reported as 0.0.
"""

from __future__ import annotations

import json
import math
import sys
import warnings

import numpy as np
import pyroomacoustics as pra
from pyroomacoustics.experimental import measure_rt60

FS = 16000
C = 343.0
SIGNAL_LENGTH = 8000
ARRAY_HEIGHT = 1.2
NFFT = 256
HOP = NFFT // 2
FREQ_RANGE = (1500.0, 7000.0)
RT60_DECAY_DB = 30

ROOM_SIZES = {
    "small": (4.0, 3.5, 2.7),
    "medium": (6.0, 4.5, 3.0),
    "large": (9.0, 7.0, 3.5),
}

# name -> (kind, number of mics, spacing (linear) or radius (circular) in metres)
ARRAYS = {
    "linear4_5cm": ("linear", 4, 0.05),
    "linear8_4cm": ("linear", 8, 0.04),
    "circular6_5cm": ("circular", 6, 0.05),
    "circular8_10cm": ("circular", 8, 0.10),
}

# pyroomacoustics global settings this simulation depends on; pinned for the duration
# of one call and restored afterwards.
_PINNED_CONSTANTS = {
    "c": C,
    "frac_delay_length": 81,
    "sinc_lut_granularity": 20,
    "num_threads": 1,
    "rir_hpf_enable": True,
    "rir_hpf_fc": 10.0,
    "rir_hpf_kwargs": {"n": 2, "rp": 5.0, "rs": 60.0, "type": "butter"},
}


def array_offsets(name: str) -> np.ndarray:
    """Microphone offsets from the array centre in the xy plane, shape (2, M)."""
    kind, m, size = ARRAYS[name]
    if kind == "linear":
        return pra.linear_2D_array([0.0, 0.0], m, 0.0, size)
    return pra.circular_2D_array([0.0, 0.0], m, 0.0, size)


def geometry(params: dict) -> dict:
    """Room dimensions, array centre, microphone and source positions (metres)."""
    dims = np.array(ROOM_SIZES[params["room_size"]], dtype=float)
    centre = np.array([dims[0] / 2.0, dims[1] / 2.0, ARRAY_HEIGHT])
    offsets = array_offsets(params["microphone_array"])
    mics = np.vstack(
        [offsets + centre[:2, None], np.full(offsets.shape[1], centre[2])]
    )
    az = math.radians(float(params["source_azimuth"]))
    dist = float(params["source_distance"])
    source = centre + dist * np.array([math.cos(az), math.sin(az), 0.0])
    return {
        "room_dim": dims,
        "centre": centre,
        "offsets": offsets,
        "mics": mics,
        "source": source,
    }


def _doa_grid_deg(array_name: str) -> np.ndarray:
    if ARRAYS[array_name][0] == "linear":
        return np.arange(0, 181, dtype=float)
    return np.arange(0, 360, dtype=float)


def _measure_rt60(h: np.ndarray) -> float:
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            value = float(measure_rt60(h, fs=FS, decay_db=RT60_DECAY_DB))
        except (ValueError, IndexError, ZeroDivisionError, FloatingPointError,
                np.linalg.LinAlgError):
            value = float("nan")
    if not math.isfinite(value) or value <= 0.0:
        return 0.0
    return value


def _sig(x: float, digits: int = 9) -> float:
    return float(f"{float(x):.{digits}g}")


def run(params: dict) -> tuple[dict, dict]:
    """Simulate one scenario. Returns (outputs, details); details carry the mic-0 RIR
    and the geometry (used by the oracle to write evidence files)."""
    geo = geometry(params)
    saved = {k: pra.constants.get(k) for k in _PINNED_CONSTANTS}
    try:
        for k, v in _PINNED_CONSTANTS.items():
            pra.constants.set(k, v)

        room = pra.ShoeBox(
            geo["room_dim"],
            fs=FS,
            materials=pra.Material(float(params["absorption"])),
            max_order=int(params["max_order"]),
            air_absorption=False,
            ray_tracing=False,
            use_rand_ism=False,
        )
        signal = np.random.default_rng(int(params["seed"])).standard_normal(SIGNAL_LENGTH)
        room.add_source(geo["source"], signal=signal)
        room.add_microphone_array(geo["mics"])
        room.compute_rir()
        room.simulate()

        h = np.asarray(room.rir[0][0], dtype=np.float64)
        rt60 = _measure_rt60(h)

        frames = pra.transform.stft.analysis(room.mic_array.signals.T, NFFT, HOP)
        X = frames.transpose([2, 1, 0])  # (mics, freq bins, frames)
        grid_deg = _doa_grid_deg(params["microphone_array"])
        doa = pra.doa.algorithms["SRP"](
            geo["offsets"], FS, NFFT, c=C, num_src=1, azimuth=np.deg2rad(grid_deg)
        )
        doa.locate_sources(X, freq_range=list(FREQ_RANGE))
        doa_deg = float(grid_deg[int(np.argmax(doa.grid.values))])
    finally:
        for k, v in saved.items():
            pra.constants.set(k, v)

    outputs = {
        "rir_len": int(h.shape[0]),
        "energy": _sig(np.sum(h * h)),
        "peak": _sig(np.max(np.abs(h))),
        "doa_deg": doa_deg,
        "rt60": _sig(rt60),
    }
    details = {"rir": h, **geo}
    return outputs, details


def solve(scenario: dict) -> dict:
    """Outputs for one scenario dict ({"parameters": {...}, ...})."""
    return run(scenario["parameters"])[0]


def main() -> None:
    scenario = json.load(sys.stdin)
    print(json.dumps(solve(scenario)))


if __name__ == "__main__":
    main()
