"""Reference solution for the ``acoustic_beamforming`` recon task (version 6).

A furnished shoebox room (per-wall, frequency-dependent materials from the
pyroomacoustics database, air absorption) is simulated with the pyroomacoustics
image-source model. A loudspeaker plays an exponential sine sweep, a small planar
microphone array records it with seeded sensor noise, and the pipeline then works like
a room-acoustics engineer's measurement chain:

1. excitation and recording: a 1 s exponential sweep 50 Hz..7 kHz with 10 ms Hann
   fades, 1 s of silence after it, white sensor noise at ``snr_db`` (re the mean power
   of microphone 0's noise-free recording while the sweep plays);
2. deconvolution: Farina's inverse filter (time-reversed sweep with a -6 dB/octave
   amplitude envelope, unit gain at 1 kHz) recovers microphone 0's impulse response;
3. octave-band filtering: 125..4000 Hz, 3rd-order Butterworth band-passes (second-order
   sections), run forward (causal) on the whole measured response;
4. decay analysis per band (ISO 3382-1 style): start at the broadband onset (first
   sample within 20 dB of the peak), 10 ms block envelope, a regression line through
   the late decay (blocks 30 to 10 dB above the noise, faded at both ends, earlier
   blocks at 1 %: continuous weights),
   the noise floor first from the last 10 % of the response, then three times from
   where the current line lies 10 dB below it (Lundeby's iteration, a fixed number of
   rounds); truncation where the final line meets the noise, plus the fitted
   exponential's energy beyond the truncation point (compensation); Schroeder backward
   integration;
   the impulse-response-to-noise ratio per band is the loudest block over the noise;
5. room-acoustic parameters: EDT (0..-10 dB), T20 (-5..-25 dB), T30 (-5..-35 dB) from
   least-squares lines on the decay curve; C50, C80 per band from noise-subtracted
   energies; D50 and the direct-to-reverberant ratio (direct window 1 ms before to
   2.5 ms after the onset) on the broadband response, noise-subtracted too;
6. localisation: Hann-windowed STFT (512 samples, hop 256) of all microphones, bins
   300..3500 Hz, MUSIC with per-frequency normalisation (pyroomacoustics
   ``NormMUSIC``) on a 1-degree azimuth grid, parabolic interpolation of the peak; a
   linear array searches the upper half plane only (0..180 degrees);
7. the steered beam: a superdirective beam (MVDR against a spherically isotropic,
   i.e. diffuse, sound field, with diagonal loading against sensor noise) toward the
   estimated azimuth, distortionless for a plane wave from there at the array centre,
   applied to the whole recordings in the frequency domain; the beam's output is then
   measured like microphone 0's recording (stages 2 to 5): per-band INR and C50 and
   the broadband DRR of the beam.

Reads one scenario JSON object on stdin, prints the output JSON object on stdout.
Standalone: imports only the standard library, numpy, scipy and pyroomacoustics.
"""

from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyroomacoustics as pra
from scipy import signal

# --------------------------------------------------------------------------- constants
FS = 16000                 # sampling rate, Hz
C = 343.0                  # speed of sound, m/s
ARRAY_HEIGHT = 1.2         # array and loudspeaker height, m

# Excitation: exponential (logarithmic) sine sweep.
SWEEP_SECONDS = 1.0
SWEEP_F1 = 50.0
SWEEP_F2 = 7000.0
FADE_SAMPLES = 160         # 10 ms Hann fade-in and fade-out
SILENCE_SAMPLES = 16000    # 1 s recorded after the sweep ends
IR_SAMPLES = 16000         # length of the measured impulse response (1 s)
NORM_FREQ = 1000.0         # the inverse filter has unit gain here

# Octave bands and their filters.
BAND_CENTRES = (125.0, 250.0, 500.0, 1000.0, 2000.0, 4000.0)
BAND_ORDER = 3             # Butterworth prototype order (a 6th-order band-pass)

# Decay analysis.
ONSET_DB = -20.0           # ISO 3382-1: the response starts within 20 dB of its peak
NOISE_TAIL_DIVISOR = 10    # the first noise estimate is the mean energy of the last n // 10 samples
NOISE_GUARD_DB = 10.0      # later ones start where the decay line is 10 dB below the noise floor
NOISE_ITERATIONS = 3       # re-estimates of the noise floor (each after a fit against the last)
BLOCK_SAMPLES = 160        # 10 ms envelope blocks
FIT_MARGIN_DB = 10.0       # the regression's blocks fade out between 15 and 10 dB above the noise floor ...
FIT_FADE_DB = 5.0
NOTCH_DB = 10.0           # a block this far below a later one (a notch) weighs nothing
FIT_TOP_DB = 30.0          # ... and in between 35 and 30 dB above it: the late decay
EARLY_WEIGHT = 0.01        # the weight of the blocks above that range (a line even where it is empty)
MIN_FIT_BLOCKS = 3         # the first three blocks from the loudest weigh at least that much
EDT_RANGE = (0.0, -10.0)
T20_RANGE = (-5.0, -25.0)
T30_RANGE = (-5.0, -35.0)
C50_SAMPLES = 800          # 50 ms
C80_SAMPLES = 1280         # 80 ms
DIRECT_BEFORE = 16         # direct-sound window: 1 ms before the onset ...
DIRECT_AFTER = 40          # ... to 2.5 ms after it (inclusive)
CLARITY_FLOOR = 1e-4       # a late (or reverberant) energy is at least 1e-4 of the early one: 40 dB at most

# Localisation.
NFFT = 512
HOP = 256
DOA_BAND = (300.0, 3500.0)

# The steered beam.
BEAM_LOADING = 0.01        # diagonal loading of the diffuse-field coherence matrix (-20 dB)

ROOM_SIZES = {
    "small": (4.0, 3.5, 2.7),
    "medium": (6.0, 4.5, 3.0),
    "large": (9.0, 7.0, 3.5),
}

# Wall finishes: pyroomacoustics material-database names per wall. pyroomacoustics'
# ShoeBox names the walls west (x = 0), east (x = Lx), south (y = 0), north (y = Ly),
# floor (z = 0) and ceiling (z = Lz).
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

# name -> (kind, number of mics, spacing (linear) or radius (circular) in metres)
ARRAYS = {
    "linear4_5cm": ("linear", 4, 0.05),
    "linear8_4cm": ("linear", 8, 0.04),
    "circular6_5cm": ("circular", 6, 0.05),
    "circular8_10cm": ("circular", 8, 0.10),
}

# pyroomacoustics global settings the simulation depends on (the library's defaults,
# except one thread so that the float accumulation order, hence every bit, is fixed);
# pinned for the duration of one call and restored afterwards.
_PINNED_CONSTANTS: dict[str, Any] = {
    "c": C,
    "frac_delay_length": 81,
    "sinc_lut_granularity": 20,
    "num_threads": 1,
    "octave_bands_n_fft": 512,
    "octave_bands_base_freq": 125.0,
    "octave_bands_keep_dc": True,
    "rir_hpf_enable": True,
    "rir_hpf_fc": 10.0,
    "rir_hpf_kwargs": {"n": 2, "rp": 5.0, "rs": 60.0, "type": "butter"},
}


# --------------------------------------------------------------------------- stage 0: the scene
def array_offsets(name: str) -> np.ndarray:
    """Microphone offsets from the array centre in the xy plane, shape (2, M)."""
    kind, m, size = ARRAYS[name]
    if kind == "linear":
        return np.asarray(pra.linear_2D_array([0.0, 0.0], m, 0.0, size), dtype=float)
    return np.asarray(pra.circular_2D_array([0.0, 0.0], m, 0.0, size), dtype=float)


def geometry(params: dict) -> dict:
    """Room dimensions, array centre, microphone and source positions (metres)."""
    dims = np.array(ROOM_SIZES[params["room_size"]], dtype=float)
    centre = np.array([dims[0] / 2.0, dims[1] / 2.0, ARRAY_HEIGHT])
    offsets = array_offsets(params["microphone_array"])
    mics = np.vstack([offsets + centre[:2, None], np.full(offsets.shape[1], centre[2])])
    az = math.radians(float(params["source_azimuth"]))
    dist = float(params["source_distance"])
    source = centre + dist * np.array([math.cos(az), math.sin(az), 0.0])
    return {"room_dim": dims, "centre": centre, "offsets": offsets, "mics": mics, "source": source}


def simulate_rirs(params: dict, geo: dict) -> list[np.ndarray]:
    """Image-source impulse responses from the loudspeaker to every microphone."""
    saved = {k: pra.constants.get(k) for k in _PINNED_CONSTANTS}
    try:
        for k, v in _PINNED_CONSTANTS.items():
            pra.constants.set(k, v)
        room = pra.ShoeBox(
            geo["room_dim"],
            fs=FS,
            materials=pra.make_materials(**FINISHES[params["finish"]]),
            max_order=int(params["max_order"]),
            air_absorption=True,
            ray_tracing=False,
            use_rand_ism=False,
        )
        room.add_source(geo["source"])
        room.add_microphone_array(geo["mics"])
        room.compute_rir()
        return [np.asarray(room.rir[m][0], dtype=np.float64) for m in range(geo["mics"].shape[1])]
    finally:
        for k, v in saved.items():
            pra.constants.set(k, v)


# --------------------------------------------------------------------------- stage 1: excitation and recording
def sweep() -> np.ndarray:
    """The exponential sine sweep with Hann fades (SWEEP_SECONDS long)."""
    n_samples = int(round(SWEEP_SECONDS * FS))
    n = np.arange(n_samples, dtype=np.float64)
    rate = math.log(SWEEP_F2 / SWEEP_F1)
    duration = n_samples / FS
    x = np.sin(2.0 * math.pi * SWEEP_F1 * duration / rate * (np.exp(n / n_samples * rate) - 1.0))
    ramp = 0.5 * (1.0 - np.cos(math.pi * np.arange(FADE_SAMPLES) / FADE_SAMPLES))
    x[:FADE_SAMPLES] *= ramp
    x[-FADE_SAMPLES:] *= ramp[::-1]
    return x


def record(rirs: list[np.ndarray], excitation: np.ndarray, snr_db: float, seed: int) -> tuple[np.ndarray, float, float]:
    """Microphone signals (M, N_rec): the sweep through each RIR plus white sensor noise.

    Returns (signals, noise standard deviation, mic-0 signal power)."""
    n_sweep = excitation.shape[0]
    n_rec = n_sweep + SILENCE_SAMPLES
    clean = np.zeros((len(rirs), n_rec))
    for m, h in enumerate(rirs):
        y = signal.fftconvolve(excitation, h)[:n_rec]
        clean[m, : y.shape[0]] = y
    power = float(np.mean(clean[0, :n_sweep] ** 2))
    sigma = math.sqrt(power * 10.0 ** (-float(snr_db) / 10.0))
    noise = np.random.default_rng(int(seed)).standard_normal((len(rirs), n_rec))
    return clean + sigma * noise, sigma, power


# --------------------------------------------------------------------------- stage 2: deconvolution
def inverse_filter(excitation: np.ndarray) -> np.ndarray:
    """Farina's inverse filter: the time-reversed sweep with an amplitude envelope
    falling 6 dB per octave of the reversed sweep's frequency, scaled so that the sweep
    convolved with it has unit gain at NORM_FREQ."""
    n_sweep = excitation.shape[0]
    rate = math.log(SWEEP_F2 / SWEEP_F1)
    inv = excitation[::-1] * np.exp(-np.arange(n_sweep) / n_sweep * rate)
    pulse = signal.fftconvolve(excitation, inv)
    k = np.arange(pulse.shape[0])
    gain = abs(np.sum(pulse * np.exp(-2j * math.pi * NORM_FREQ * k / FS)))
    return inv / gain


def measure_ir(recording: np.ndarray, excitation: np.ndarray) -> np.ndarray:
    """Microphone 0's measured impulse response: the recording convolved with the
    inverse filter, from the lag where the sweep itself compresses to a pulse."""
    n_sweep = excitation.shape[0]
    full = signal.fftconvolve(recording, inverse_filter(excitation))
    return full[n_sweep - 1: n_sweep - 1 + IR_SAMPLES]


# --------------------------------------------------------------------------- stage 3: octave bands
def band_filters() -> list[np.ndarray]:
    """Second-order sections of the octave band-passes (edges fc / sqrt 2, fc * sqrt 2)."""
    return [signal.butter(BAND_ORDER, [fc / math.sqrt(2.0), fc * math.sqrt(2.0)], btype="bandpass",
                          fs=FS, output="sos") for fc in BAND_CENTRES]


def onset_index(h: np.ndarray) -> int:
    """First sample whose energy is within 20 dB of the response's peak energy."""
    e = h * h
    return int(np.flatnonzero(e >= e.max() * 10.0 ** (ONSET_DB / 10.0))[0])


# --------------------------------------------------------------------------- stage 4: decay analysis
@dataclass
class Decay:
    edc: np.ndarray        # energy decay curve (absolute energy), one value per sample
    noise: float           # noise-floor energy per sample
    noise_from: int        # the noise floor is the mean energy from this sample to the end
    peak_block_db: float   # level of the loudest envelope block
    slope: float           # fitted decay, dB per second (negative)
    intercept: float       # fitted level at t = 0, dB
    fit_blocks: tuple[int, int]
    crossing: int          # truncation point, samples from the onset
    tail: float            # energy added beyond the truncation point


def fit_weights(level: np.ndarray, noise_db: float) -> np.ndarray:
    """Weights of the decay regression's blocks, from the loudest block (``level[0]``) on.
    The line follows the late decay, just above the noise: full weight from
    FIT_MARGIN_DB + FIT_FADE_DB to FIT_TOP_DB above the noise floor, fading out to none
    at FIT_MARGIN_DB (by the loudest of the block and the blocks after it, so that a
    notch in the decay, a block far below a later one, does not end the line early; the
    notch itself fades out between 5 and NOTCH_DB below that loudest later block) and
    fading in from FIT_TOP_DB + FIT_FADE_DB,
    so that a strong direct sound and a steep early decay do not tilt it. Blocks above
    that range keep EARLY_WEIGHT, and so do the first MIN_FIT_BLOCKS at least, so that
    a decay with no block in the range still has a line. Every weight moves
    continuously with the levels: the line has no step where a block crosses a bound."""
    above = level - noise_db
    later = np.maximum.accumulate(above[::-1])[::-1]
    fade_out = np.clip((later - FIT_MARGIN_DB) / FIT_FADE_DB, 0.0, 1.0)
    notch = np.clip((above - later + NOTCH_DB) / FIT_FADE_DB, 0.0, 1.0)
    fade_in = np.clip((FIT_TOP_DB + FIT_FADE_DB - above) / FIT_FADE_DB, 0.0, 1.0)
    weight = fade_out * notch * np.maximum(fade_in, EARLY_WEIGHT)
    weight[:MIN_FIT_BLOCKS] = np.maximum(weight[:MIN_FIT_BLOCKS], EARLY_WEIGHT)
    return weight


def decay_fit(level: np.ndarray, k0: int, noise_db: float) -> tuple[float, float, int]:
    """The regression line (slope dB/s, intercept dB) through the block levels from the
    loudest block k0 on, weighted by :func:`fit_weights` against the noise floor, and the
    end of its blocks (one past the last block with a weight)."""
    t = (np.arange(level.shape[0]) + 0.5) * BLOCK_SAMPLES / FS
    weight = fit_weights(level[k0:], noise_db)
    k1 = k0 + int(np.flatnonzero(weight > 0.0)[-1]) + 1
    slope, intercept = np.polyfit(t[k0:k1], level[k0:k1], 1, w=np.sqrt(weight[: k1 - k0]))
    return float(slope), float(intercept), k1


def decay_analysis(x: np.ndarray) -> Decay:
    """Noise-compensated Schroeder decay of one response ``x`` (starting at the onset).

    The noise floor and the decay line are found together (after Lundeby et al. 1995):
    the first noise estimate is the mean energy of the last tenth; then, NOISE_ITERATIONS
    times, the line is fitted against the current estimate and the noise re-estimated
    from where that line lies NOISE_GUARD_DB below the noise floor to the end (never less
    than the last tenth). A fixed number of rounds and windows that move with the line
    keep every result continuous in the response."""
    p = x * x
    n = p.shape[0]
    n_blocks = n // BLOCK_SAMPLES
    blocks = p[: n_blocks * BLOCK_SAMPLES].reshape(n_blocks, BLOCK_SAMPLES).mean(axis=1)
    level = 10.0 * np.log10(blocks)
    k0 = int(np.argmax(level))
    last_tenth = n - n // NOISE_TAIL_DIVISOR
    noise_from = last_tenth
    noise = float(np.mean(p[noise_from:]))
    for _ in range(NOISE_ITERATIONS):
        slope, intercept, _ = decay_fit(level, k0, 10.0 * math.log10(noise))
        if slope >= 0.0:
            break
        guard = (10.0 * math.log10(noise) - NOISE_GUARD_DB - intercept) / slope
        noise_from = int(min(max(round(guard * FS), 1), last_tenth))
        noise = float(np.mean(p[noise_from:]))
    noise_db = 10.0 * math.log10(noise)
    slope, intercept, k1 = decay_fit(level, k0, noise_db)
    edc = np.empty(n)
    if slope < 0.0:
        crossing = int(min(max(round((noise_db - intercept) / slope * FS), 1), n))
        line = 10.0 ** ((intercept + slope * crossing / FS) / 10.0)
        tail = FS * line * 10.0 / (-slope * math.log(10.0))
        edc[:crossing] = np.cumsum(p[:crossing][::-1])[::-1] + tail
        edc[crossing:] = tail * 10.0 ** (slope * np.arange(n - crossing) / (10.0 * FS))
    else:  # no decay to speak of: plain backward integration to the end
        crossing, tail = n, 0.0
        edc[:] = np.cumsum(p[::-1])[::-1]
    return Decay(edc, noise, noise_from, float(level[k0]), slope, intercept, (k0, k1), crossing, tail)


def edc_db(edc: np.ndarray) -> np.ndarray:
    """The decay curve in dB re its start (floored far below any fit range)."""
    return 10.0 * np.log10(np.maximum(edc, edc[0] * 1e-30) / edc[0])


# --------------------------------------------------------------------------- stage 5: parameters
def decay_time(curve_db: np.ndarray, upper: float, lower: float) -> float:
    """Seconds for a 60 dB decay from the least-squares line through the curve's
    samples with lower <= level <= upper (0.0 when fewer than two samples qualify)."""
    idx = np.flatnonzero((curve_db <= upper) & (curve_db >= lower))
    if idx.size < 2:
        return 0.0
    slope = float(np.polyfit(idx / FS, curve_db[idx], 1)[0])
    return -60.0 / slope if slope < 0.0 else 0.0


def energies(x: np.ndarray, noise: float, n_early: int) -> tuple[float, float]:
    """Noise-subtracted energies of the response ``x`` (from its onset) before and from
    sample n_early on: the sums of x^2 - noise (the late one at least CLARITY_FLOOR of the
    early one, so that the ratio stays finite where the late sound is lost in the noise)."""
    e = x * x - noise
    early = float(np.sum(e[:n_early]))
    late = float(np.sum(e[n_early:]))
    return early, max(late, CLARITY_FLOOR * early)


def clarity(x: np.ndarray, noise: float, n_early: int) -> float:
    """Early-to-late energy ratio (dB) with the boundary n_early samples after the onset."""
    early, late = energies(x, noise, n_early)
    return 10.0 * math.log10(early / late)


def band_parameters(d: Decay, x: np.ndarray) -> dict[str, float]:
    curve = edc_db(d.edc)
    return {
        "edt": decay_time(curve, *EDT_RANGE),
        "t20": decay_time(curve, *T20_RANGE),
        "t30": decay_time(curve, *T30_RANGE),
        "c50": clarity(x, d.noise, C50_SAMPLES),
        "c80": clarity(x, d.noise, C80_SAMPLES),
    }


def direct_to_reverberant(h: np.ndarray, onset: int, broadband: Decay) -> tuple[float, float, float]:
    """DRR (dB): the noise-subtracted energy in the direct-sound window (from 1 ms before
    the onset to 2.5 ms after it) over the noise-subtracted energy after it (at least
    CLARITY_FLOOR of the direct energy). Returns (drr, direct, reverberant)."""
    lo, hi = max(onset - DIRECT_BEFORE, 0), onset + DIRECT_AFTER
    e = h * h - broadband.noise
    direct = float(np.sum(e[lo: hi + 1]))
    reverberant = max(float(np.sum(e[hi + 1:])), CLARITY_FLOOR * direct)
    return 10.0 * math.log10(direct / reverberant), direct, reverberant


# --------------------------------------------------------------------------- stage 6: localisation
def stft(signals: np.ndarray) -> np.ndarray:
    """Hann-windowed STFT, shape (M, NFFT // 2 + 1, frames); frames that fit entirely."""
    window = signal.get_window("hann", NFFT)
    n_frames = 1 + (signals.shape[1] - NFFT) // HOP
    idx = np.arange(NFFT)[None, :] + HOP * np.arange(n_frames)[:, None]
    spec = np.fft.rfft(signals[:, idx] * window, axis=-1)
    return spec.transpose(0, 2, 1)


def doa_bins() -> np.ndarray:
    lo = math.ceil(DOA_BAND[0] * NFFT / FS)
    hi = math.floor(DOA_BAND[1] * NFFT / FS)
    return np.arange(lo, hi + 1)


def doa_grid_deg(array_name: str) -> np.ndarray:
    if ARRAYS[array_name][0] == "linear":
        return np.arange(0, 181, dtype=float)
    return np.arange(0, 360, dtype=float)


def refine_peak(values: np.ndarray, linear: bool) -> tuple[int, float]:
    """Grid index of the largest value (first on ties) and the parabolic offset (grid
    steps) through it and its neighbours; a linear array's spectrum is mirrored at 0
    and 180 degrees, a circular array's wraps around."""
    k = int(np.argmax(values))
    n = values.shape[0]
    if linear:
        left = values[k - 1] if k > 0 else values[1]
        right = values[k + 1] if k < n - 1 else values[n - 2]
    else:
        left, right = values[(k - 1) % n], values[(k + 1) % n]
    centre = values[k]
    curvature = left - 2.0 * centre + right
    offset = 0.5 * (left - right) / curvature if curvature < 0.0 else 0.0
    return k, float(offset)


def localise(signals: np.ndarray, offsets: np.ndarray, array_name: str) -> dict[str, Any]:
    spec = stft(signals)
    bins = doa_bins()
    grid = doa_grid_deg(array_name)
    linear = ARRAYS[array_name][0] == "linear"
    doa = pra.doa.algorithms["NormMUSIC"](offsets, FS, NFFT, c=C, num_src=1, azimuth=np.deg2rad(grid))
    doa.locate_sources(spec, freq_bins=bins)
    values = np.asarray(doa.grid.values, dtype=np.float64)
    k, offset = refine_peak(values, linear)
    az = grid[k] + offset
    az = min(max(az, 0.0), 180.0) if linear else az % 360.0
    return {
        "azimuth": float(az),
        "par_db": 10.0 * math.log10(float(values.max()) / float(values.mean())),
        "grid": grid,
        "values": values,
        "frames": int(spec.shape[2]),
        "bins": (int(bins[0]), int(bins[-1])),
        "peak_grid": float(grid[k]),
        "offset": offset,
    }


# --------------------------------------------------------------------------- stage 7: the steered beam
def diffuse_coherence(offsets: np.ndarray, freqs: np.ndarray) -> np.ndarray:
    """Coherence of a spherically isotropic sound field between every pair of
    microphones, sin(k d) / (k d), shape (F, M, M)."""
    dist = np.linalg.norm(offsets[:, :, None] - offsets[:, None, :], axis=0)
    return np.sinc(2.0 * freqs[:, None, None] * dist[None, :, :] / C)


def beam_weights(offsets: np.ndarray, freqs: np.ndarray, azimuth_deg: float) -> np.ndarray:
    """Superdirective (diffuse-field MVDR) weights toward a plane wave from
    ``azimuth_deg``, distortionless at the array centre, shape (F, M):
    w = (G + mu I)^-1 d / (d^H (G + mu I)^-1 d)."""
    az = math.radians(azimuth_deg)
    advance = (offsets[0] * math.cos(az) + offsets[1] * math.sin(az)) / C
    steer = np.exp(2j * math.pi * freqs[:, None] * advance[None, :])
    loaded = diffuse_coherence(offsets, freqs) + BEAM_LOADING * np.eye(offsets.shape[1])[None, :, :]
    a = np.linalg.solve(loaded, steer[:, :, None])[:, :, 0]
    return a / np.einsum("fm,fm->f", steer.conj(), a)[:, None]


def steer_beam(signals: np.ndarray, offsets: np.ndarray, azimuth_deg: float) -> np.ndarray:
    """The beam's output: every recording's DFT (its own length) weighted and summed,
    y = irfft(sum_m conj(w_m) X_m)."""
    n = signals.shape[1]
    spectra = np.fft.rfft(signals, axis=1)
    weights = beam_weights(offsets, np.fft.rfftfreq(n, 1.0 / FS), azimuth_deg)
    return np.fft.irfft(np.einsum("fm,mf->f", weights.conj(), spectra), n)


# --------------------------------------------------------------------------- stages 2 to 5 on one recording
@dataclass
class Measurement:
    ir: np.ndarray
    peak_to_noise: float
    onset: int
    bands: list[Decay]
    broadband: Decay
    per_band: list[dict[str, float]]
    drr: float
    peak: int
    direct: float
    reverberant: float
    d50: float

    def inr(self) -> list[float]:
        return [d.peak_block_db - 10.0 * math.log10(d.noise) for d in self.bands]


def measure(recording: np.ndarray, excitation: np.ndarray) -> Measurement:
    """Stages 2 to 5 on one recorded signal: its impulse response, the octave bands'
    noise-compensated decays and their parameters, the broadband DRR."""
    h = measure_ir(recording, excitation)
    tail = h[h.shape[0] - h.shape[0] // NOISE_TAIL_DIVISOR:]
    peak_to_noise = 10.0 * math.log10(float(np.max(h * h)) / float(np.mean(tail * tail)))
    onset = onset_index(h)
    responses = [signal.sosfilt(sos, h)[onset:] for sos in band_filters()]
    bands = [decay_analysis(x) for x in responses]
    broadband = decay_analysis(h[onset:])
    drr, direct, reverberant = direct_to_reverberant(h, onset, broadband)
    peak = int(np.argmax(np.abs(h)))
    early, late = energies(h[onset:], broadband.noise, C50_SAMPLES)
    return Measurement(h, peak_to_noise, onset, bands, broadband,
                       [band_parameters(d, x) for d, x in zip(bands, responses)], drr, peak, direct, reverberant,
                       early / (early + late))


# --------------------------------------------------------------------------- the pipeline
def _sig(x: float, digits: int = 6) -> float:
    return float(f"{float(x):.{digits}g}")


def run(params: dict) -> tuple[dict, dict]:
    """Run one scenario. Returns (outputs, details); details carry the intermediate
    signals and numbers (the oracle writes its evidence files from them)."""
    geo = geometry(params)
    rirs = simulate_rirs(params, geo)

    excitation = sweep()
    signals, sigma, power = record(rirs, excitation, float(params["snr_db"]), int(params["seed"]))

    mic0 = measure(signals[0], excitation)

    loc = localise(signals, geo["offsets"], params["microphone_array"])
    beam = measure(steer_beam(signals, geo["offsets"], loc["azimuth"]), excitation)

    outputs = {
        "peak_to_noise_db": _sig(mic0.peak_to_noise),
        "inr_db": [_sig(v) for v in mic0.inr()],
        "edt_s": [_sig(b["edt"]) for b in mic0.per_band],
        "t20_s": [_sig(b["t20"]) for b in mic0.per_band],
        "t30_s": [_sig(b["t30"]) for b in mic0.per_band],
        "c50_db": [_sig(b["c50"]) for b in mic0.per_band],
        "c80_db": [_sig(b["c80"]) for b in mic0.per_band],
        "d50": _sig(mic0.d50),
        "drr_db": _sig(mic0.drr),
        "azimuth_deg": _sig(loc["azimuth"]) % 360.0,  # 359.9999997 rounds to 360, reported as 0
        "spectrum_par_db": _sig(loc["par_db"]),
        "beam_inr_db": [_sig(v) for v in beam.inr()],
        "beam_c50_db": [_sig(b["c50"]) for b in beam.per_band],
        "beam_drr_db": _sig(beam.drr),
    }
    details = {
        **geo,
        "rirs": rirs,
        "excitation": excitation,
        "recording": signals[0],
        "sigma": sigma,
        "power": power,
        "ir": mic0.ir,
        "onset": mic0.onset,
        "peak": mic0.peak,
        "direct": mic0.direct,
        "reverberant": mic0.reverberant,
        "bands": mic0.bands,
        "broadband": mic0.broadband,
        "localisation": loc,
        "beam": beam,
    }
    return outputs, details


def solve(scenario: dict) -> dict:
    """Outputs for one scenario dict ({"parameters": {...}, ...})."""
    return run(scenario["parameters"])[0]


def main() -> None:
    scenario = json.load(sys.stdin)
    print(json.dumps(solve(scenario)))


if __name__ == "__main__":
    main()
