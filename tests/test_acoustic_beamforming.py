"""Tests of the built-in `acoustic_beamforming` oracle (v3: sweep measurement, ISO 3382
octave-band parameters, NormMUSIC localisation, a superdirective beam toward the
estimate measured again) with the real pyroomacoustics."""
from __future__ import annotations

import csv
import itertools
import json
import math
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pyroomacoustics as pra
import pytest
from scipy import signal
from scipy.io import wavfile

from recon import Choice, Registry, compare
from recon.artifacts.acoustic_beamforming import (ARRAY_NAMES, FINISH_NAMES, ROOM_NAMES,
                                                  acoustic_beamforming)
from recon.artifacts.acoustic_beamforming import reference as ref

FIELDS = {"peak_to_noise_db", "inr_db", "edt_s", "t20_s", "t30_s", "c50_db", "c80_db", "d50", "drr_db", "azimuth_deg",
          "spectrum_par_db", "beam_inr_db", "beam_c50_db", "beam_drr_db"}
BAND_FIELDS = ("inr_db", "edt_s", "t20_s", "t30_s", "c50_db", "c80_db", "beam_inr_db", "beam_c50_db")
BEAM_FIELDS = ("beam_inr_db", "beam_c50_db", "beam_drr_db")
SPECS = acoustic_beamforming.output_specs()
EVIDENCE = {"geometry.json", "recording_mic0.wav", "rir_mic0.wav", "rir_beam.wav", "decay_curves.csv",
            "spatial_spectrum.csv", "summary.json"}


def params(array: str = "circular8_10cm", *, finish: str = "office", order: int = 11, room: str = "medium",
           az: float = 60.0, dist: float = 1.0, snr: float = 25.0, seed: int = 7) -> dict[str, Any]:
    return {"finish": finish, "max_order": order, "microphone_array": array, "room_size": room,
            "seed": seed, "snr_db": snr, "source_azimuth": az, "source_distance": dist}


def circ_dist(a: float, b: float) -> float:
    d = abs(a - b) % 360.0
    return min(d, 360.0 - d)


def folded(az: float) -> float:
    """The direction a linear array on the x axis reports: az mirrored into [0, 180]."""
    az = az % 360.0
    return az if az <= 180.0 else 360.0 - az


def within_all(out: dict[str, Any], want: dict[str, Any]) -> dict[str, bool]:
    return {k: compare.within(SPECS[k], out[k], want[k]) for k in SPECS}


# ---------------------------------------------------------------------------------- declaration
def test_declaration() -> None:
    o = acoustic_beamforming
    assert o.name == "acoustic_beamforming" and o.version == "6.2.0"
    assert set(o.outputs) == FIELDS
    assert set(o.axes) == {"finish", "max_order", "microphone_array", "room_size", "seed", "snr_db",
                           "source_azimuth", "source_distance"}
    assert set(ARRAY_NAMES) == set(ref.ARRAYS) and set(ROOM_NAMES) == set(ref.ROOM_SIZES)
    assert set(FINISH_NAMES) == set(ref.FINISHES)
    assert SPECS["azimuth_deg"] == {"kind": "angle", "tol": 0.01, "period": 360.0}
    assert all(SPECS[k]["kind"] == "sequence" for k in BAND_FIELDS)
    assert set(o.evidence) == EVIDENCE
    assert len(o.stages) == 7
    assert {b.name for b in o.baselines} == {"pra_defaults", "iso3382_textbook"}
    assert o.reference is not None and o.reference.name == "reference.py"
    # the private recipe names every scene value and every material it uses
    for name in [*ARRAY_NAMES, *FINISH_NAMES]:
        assert f'"{name}"' in o.recipe
    for walls in ref.FINISHES.values():
        for material in walls.values():
            assert material in o.recipe
    # the public texts do not give the recipe away
    public = json.dumps(o.public())
    for secret in ("NormMUSIC", "Farina", "Butterworth", "sosfilt", "Lundeby", "7000", "parabolic", "sinc",
                   "loading", "diagonal", "-20 dB"):
        assert secret not in public


def test_source_and_mics_inside_every_room_for_every_in_range_position() -> None:
    lo, hi = acoustic_beamforming.axes["source_distance"].lo, acoustic_beamforming.axes["source_distance"].hi
    for room, az, dist in itertools.product(ROOM_NAMES, np.linspace(0.0, 360.0, 73), (lo, hi)):
        geo = ref.geometry(params(room=room, az=float(az), dist=dist))
        assert np.all(geo["source"] > 0.2) and np.all(geo["source"] < geo["room_dim"] - 0.2)
        assert np.all(geo["mics"] > 0.2) and np.all(geo["mics"] < geo["room_dim"][:, None] - 0.2)


# ---------------------------------------------------------------------------------- the oracle and its evidence
@pytest.fixture(scope="module")
def evidence_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], dict[str, Any], Path]:
    p = params("linear8_4cm", finish="classroom", order=12, room="large", az=250.0, dist=1.3, snr=30.0, seed=11)
    ev = tmp_path_factory.mktemp("evidence")
    return p, acoustic_beamforming(p, ev), ev


def test_oracle_equals_reference(evidence_run: tuple[dict[str, Any], dict[str, Any], Path]) -> None:
    p, out, ev = evidence_run
    assert out == ref.solve({"task": "acoustic_beamforming", "id": "t", "parameters": p, "inputs": {}})
    assert set(out) == FIELDS and {f.name for f in ev.iterdir()} == EVIDENCE
    for k in BAND_FIELDS:
        assert len(out[k]) == len(ref.BAND_CENTRES) == 6


def test_evidence_files_describe_the_measurement(evidence_run: tuple[dict[str, Any], dict[str, Any], Path]) -> None:
    p, out, ev = evidence_run
    _, details = ref.run(p)
    summary = json.loads((ev / "summary.json").read_text())
    geo = json.loads((ev / "geometry.json").read_text())

    fs, rec = wavfile.read(ev / "recording_mic0.wav")
    assert fs == 16000 and rec.dtype == np.float32 and rec.shape == (32000,)
    assert summary["recording"]["samples"] == 32000 and summary["recording"]["excitation_samples"] == 16000
    assert np.allclose(rec, details["recording"], rtol=1e-6, atol=1e-7)
    # the noise is sized from mic 0's noise-free power while the sweep plays
    r = summary["recording"]
    assert math.isclose(r["noise_rms"] ** 2 / r["mic0_signal_power"], 10 ** (-p["snr_db"] / 10), rel_tol=2e-3)

    fs, h = wavfile.read(ev / "rir_mic0.wav")
    assert fs == 16000 and h.dtype == np.float32 and h.shape == (16000,)
    ir = summary["impulse_response"]
    assert int(np.argmax(np.abs(h))) == ir["peak_sample"] and ir["onset_sample"] <= ir["peak_sample"]
    # the direct sound arrives after distance / c, plus the 40-sample half length of the
    # simulation's fractional-delay filter
    mic0, src = np.array(geo["mics"][0]), np.array(geo["source"])
    assert abs(ir["peak_sample"] - (np.linalg.norm(src - mic0) / 343.0 * 16000 + 40)) <= 2.0
    tail = h[-1600:].astype(np.float64)
    assert abs(10 * math.log10(np.max(h.astype(np.float64) ** 2) / np.mean(tail ** 2)) - out["peak_to_noise_db"]) < 0.01

    assert geo["finish"] == "classroom" and geo["air_absorption"] is True and geo["max_order"] == 12
    assert {w: v["material"] for w, v in geo["walls"].items()} == ref.FINISHES["classroom"]
    assert geo["room_dim"] == [9.0, 7.0, 3.5] and len(geo["mics"]) == 8

    with (ev / "decay_curves.csv").open() as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["time_ms", "edc_125_db", "edc_250_db", "edc_500_db", "edc_1000_db", "edc_2000_db",
                       "edc_4000_db", "edc_broadband_db"]
    table = np.array(rows[1:], dtype=float)
    assert np.all(table[0, 1:] == 0.0) and np.all(np.diff(table[:, 0]) == 2.0)
    assert np.all(np.diff(table[:, 1:], axis=0) <= 0.0) and table[:, 1:].min() >= -99.99
    assert len(summary["decay"]) == 7 and summary["decay"][-1]["band_hz"] == "broadband"
    for band in summary["decay"]:
        assert band["decay_db_per_s"] < 0 and band["fit_start_ms"] < band["fit_end_ms"]
        assert band["noise_db"] < band["peak_block_db"] - 20
    for band, inr in zip(summary["decay"], out["inr_db"]):
        assert abs(band["peak_block_db"] - band["noise_db"] - inr) < 0.05

    with (ev / "spatial_spectrum.csv").open() as f:
        spec = np.array(list(csv.reader(f))[1:], dtype=float)
    assert spec.shape == (181, 2) and np.array_equal(spec[:, 0], np.arange(181.0))
    loc = summary["localisation"]
    assert loc == {"frames": 124, "frequency_bins": 103, "grid_points": 181,
                   "peak_grid_deg": float(spec[np.argmax(spec[:, 1]), 0])}
    par = 10 * math.log10(spec[:, 1].max() / spec[:, 1].mean())
    assert abs(par - out["spectrum_par_db"]) < 0.01
    assert abs(out["azimuth_deg"] - loc["peak_grid_deg"]) <= 0.5

    fs, hb = wavfile.read(ev / "rir_beam.wav")
    assert fs == 16000 and hb.dtype == np.float32 and hb.shape == (16000,)
    beam = summary["beam"]
    assert int(np.argmax(np.abs(hb))) == beam["peak_sample"] and beam["onset_sample"] <= beam["peak_sample"]
    assert len(beam["decay"]) == 7
    for band, inr in zip(beam["decay"], out["beam_inr_db"]):
        assert abs(band["peak_block_db"] - band["noise_db"] - inr) < 0.05
    drr = 10 * math.log10(beam["direct_energy"] / beam["reverberant_energy"])
    assert abs(drr - out["beam_drr_db"]) < 0.01


def test_evidence_numbers_are_too_short_to_contain_a_hidden_value(
        evidence_run: tuple[dict[str, Any], dict[str, Any], Path]) -> None:
    # hidden parameters and outputs have >= 5 significant digits; the leak audit looks
    # for them as substrings of every published file
    _, _, ev = evidence_run
    for name in ("summary.json", "geometry.json", "decay_curves.csv", "spatial_spectrum.csv"):
        for number in re.findall(r"\d+\.\d+|\d+", (ev / name).read_text()):
            if "." not in number:
                assert int(number) < 100000, (name, number)  # counts and sample indices
                continue
            digits = number.rstrip("0").rstrip(".").replace(".", "").lstrip("0")
            assert len(digits) <= 4, (name, number)


# ---------------------------------------------------------------------------------- physics of each stage
def test_sweep_deconvolution_recovers_the_simulated_impulse_response() -> None:
    p = params("circular6_5cm", finish="studio", order=10, room="small", az=120.0, dist=0.8)
    geo = ref.geometry(p)
    rirs = ref.simulate_rirs(p, geo)
    x = ref.sweep()
    assert x.shape == (16000,) and abs(x[0]) < 1e-12 and abs(x[-1]) < 1e-3
    recording, sigma, _ = ref.record(rirs, x, 200.0, 1)  # practically noise-free
    h = ref.measure_ir(recording[0], x)
    # within the sweep's band the measured response is the simulated one
    sos = signal.butter(4, [200.0, 5000.0], btype="bandpass", fs=16000, output="sos")
    want = signal.sosfiltfilt(sos, np.pad(rirs[0], (0, 16000 - rirs[0].shape[0])))
    got = signal.sosfiltfilt(sos, h)
    assert np.linalg.norm(got - want) / np.linalg.norm(want) < 0.02
    assert sigma < 1e-8


def test_noise_floor_follows_the_snr() -> None:
    hi = ref.solve({"parameters": params(snr=30.0)})

    def moved(lo: dict[str, Any], field: str) -> float:
        return float(np.mean([abs(a - b) / b for a, b in zip(lo[field], hi[field])]))

    mid, low = ref.solve({"parameters": params(snr=20.0)}), ref.solve({"parameters": params(snr=5.0)})
    for lo, drop in ((mid, 10.0), (low, 25.0)):
        assert abs((hi["peak_to_noise_db"] - lo["peak_to_noise_db"]) - drop) < 1.5
        assert all(abs((a - b) - drop) < 1.0 for a, b in zip(hi["inr_db"], lo["inr_db"]))
    # 10 dB more noise moves the late decay (T30) and leaves the early one (EDT) within
    # its tolerance; at the range's noisy end the noise reaches the early decay too
    assert moved(mid, "edt_s") < 0.05 < moved(mid, "t30_s")
    assert moved(low, "edt_s") > 0.1 and moved(low, "t30_s") > 2 * moved(mid, "t30_s")


def synthetic_decay(rt60: float, noise_db: float, seed: int = 0, n: int = 16000) -> np.ndarray:
    """White noise with an exponential energy decay of rt60 seconds over a noise floor
    noise_db below the start."""
    rng = np.random.default_rng(seed)
    t = np.arange(n) / 16000
    return (rng.standard_normal(n) * 10 ** (-3 * t / rt60)
            + rng.standard_normal(n) * 10 ** (noise_db / 20))


def test_decay_analysis_measures_a_known_decay_through_the_noise() -> None:
    for rt60 in (0.3, 0.6):
        y = synthetic_decay(rt60, -45.0)
        d = ref.decay_analysis(y)
        got = ref.band_parameters(d, y)
        assert abs(got["edt"] - rt60) / rt60 < 0.1, got
        for k in ("t20", "t30"):
            assert abs(got[k] - rt60) / rt60 < 0.05, (rt60, k, got)
        # the truncation point is where the decay meets the noise floor, 45 dB down
        assert abs(d.crossing / 16000 - rt60 * 45 / 60) < 0.1 * rt60
        ideal_c80 = 10 * math.log10(math.exp(13.8155 * 0.08 / rt60) - 1)
        assert abs(got["c80"] - ideal_c80) < 0.6
        # plain backward integration over the noise overestimates T30 badly
        e = np.cumsum((y * y)[::-1])[::-1]
        plain = ref.decay_time(10 * np.log10(e / e[0]), -5.0, -35.0)
        assert plain > 1.5 * got["t30"]


def test_clarity_and_drr_move_continuously_when_a_reflection_overtakes_the_direct_sound() -> None:
    """The direct window follows the onset and the energies are noise-subtracted sums, so
    a reflection growing past the direct sound moves the DRR, D50 and C50 by small steps;
    a window around the loudest sample would jump to the reflection."""
    base = synthetic_decay(0.4, -50.0, seed=5) * 0.05
    values = []
    for gain in np.linspace(0.9, 1.1, 21):
        h = np.concatenate((np.zeros(100), base))[:16000].copy()
        h[100] += 1.0            # the direct sound
        h[160] += gain           # a reflection 3.75 ms later, as loud as the direct sound +-10 %
        onset = ref.onset_index(h)
        broadband = ref.decay_analysis(h[onset:])
        drr, _, _ = ref.direct_to_reverberant(h, onset, broadband)
        c50 = ref.clarity(h[onset:], broadband.noise, ref.C50_SAMPLES)
        # the same DRR with the window around the loudest sample instead
        peak = int(np.argmax(np.abs(h)))
        e = h * h - broadband.noise
        at_peak = 10 * math.log10(np.sum(e[peak - 16: peak + 41]) / np.sum(e[peak + 41:]))
        values.append((onset, drr, c50, at_peak))
    assert {v[0] for v in values} == {100}
    steps = [max(abs(a[1] - b[1]), abs(a[2] - b[2])) for a, b in zip(values, values[1:])]
    assert max(steps) < 0.1, steps
    assert max(abs(a[3] - b[3]) for a, b in zip(values, values[1:])) > 1.0


def stop_rule_weights(level: np.ndarray, noise_db: float) -> np.ndarray:
    """Version 4's fit: every block from the loudest until the first one below the
    margin, at least three."""
    below = np.flatnonzero(level[1:] < noise_db + ref.FIT_MARGIN_DB)
    end = max(1 + int(below[0]) if below.size else level.shape[0], ref.MIN_FIT_BLOCKS)
    return (np.arange(level.shape[0]) < end).astype(float)


def test_decay_times_move_continuously_as_the_decay_sinks_into_the_noise(monkeypatch: pytest.MonkeyPatch) -> None:
    """The regression's blocks fade out between 15 and 10 dB above the noise floor, so
    T30 moves in steps that shrink with the noise floor's. A fit that stops at the first
    block below the margin jumps where one crosses (a real decay is not one straight line;
    here a fast decay with a slower one 20 dB below it): its largest step stays whatever
    the noise floor's step."""
    rng = np.random.default_rng(7)
    t = np.arange(16000) / 16000
    clean = rng.standard_normal(16000) * (10 ** (-3 * t / 0.2) + 0.1 * 10 ** (-3 * t / 1.0))
    hiss = rng.standard_normal(16000)

    def largest_step(n: int) -> float:
        t30 = []
        for noise_db in np.linspace(-52.0, -36.0, n):
            y = clean + hiss * 10 ** (noise_db / 20)
            t30.append(ref.band_parameters(ref.decay_analysis(y), y)["t30"])
        return float(np.max(np.abs(np.diff(t30)) / np.array(t30[:-1])))

    faded = largest_step(401), largest_step(801)
    monkeypatch.setattr(ref, "fit_weights", stop_rule_weights)
    stopped = largest_step(401), largest_step(801)
    # the faded fit's steps shrink with the noise floor's and stay within a fifth of the
    # tolerance (5 %); the stop rule's do not shrink and are several times larger
    assert faded[1] < faded[0] and faded[1] < 0.01, faded
    assert stopped[0] / stopped[1] < 1.3 and stopped[1] > 4 * faded[1], (stopped, faded)


def test_a_notch_in_the_decay_does_not_end_the_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """One block far below its neighbours just after the loudest (a beam's null passing
    over the early sound) weighs by the louder blocks after it: the line still follows
    the late decay. Version 5's fade-out, never above the block before it, stopped at
    the notch and drew the line through the first three blocks."""
    y = synthetic_decay(0.5, -45.0, seed=2)
    y[480:640] *= 10 ** (-35.0 / 20)         # block 3 (30-40 ms), 35 dB down
    d = ref.decay_analysis(y)
    assert d.fit_blocks[1] > 20, d.fit_blocks
    # nor does the notch tilt it: the line is the one without the notch
    clean = ref.decay_analysis(synthetic_decay(0.5, -45.0, seed=2))
    assert abs(d.slope - clean.slope) < 0.01 * abs(clean.slope), (d.slope, clean.slope)
    assert abs(ref.band_parameters(d, y)["t30"] - 0.5) / 0.5 < 0.05

    def v5_weights(level: np.ndarray, noise_db: float) -> np.ndarray:
        above = level - noise_db
        fade_out = np.minimum.accumulate(np.clip((above - ref.FIT_MARGIN_DB) / ref.FIT_FADE_DB, 0.0, 1.0))
        fade_in = np.clip((ref.FIT_TOP_DB + ref.FIT_FADE_DB - above) / ref.FIT_FADE_DB, 0.0, 1.0)
        weight = fade_out * np.maximum(fade_in, ref.EARLY_WEIGHT)
        weight[:ref.MIN_FIT_BLOCKS] = np.maximum(weight[:ref.MIN_FIT_BLOCKS], ref.EARLY_WEIGHT)
        return weight

    monkeypatch.setattr(ref, "fit_weights", v5_weights)
    assert ref.decay_analysis(y).fit_blocks[1] <= ref.MIN_FIT_BLOCKS + 1


def test_decay_analysis_without_a_decay_integrates_to_the_end() -> None:
    flat = np.random.default_rng(3).standard_normal(4000)
    d = ref.decay_analysis(flat)
    if d.slope >= 0:
        assert d.crossing == 4000 and d.tail == 0.0
    assert np.all(np.diff(d.edc) <= 0) and d.edc[-1] > 0


@pytest.mark.parametrize("array", ["circular6_5cm", "circular8_10cm"])
def test_circular_arrays_find_the_source(array: str) -> None:
    for az in (10.0, 135.0, 250.0, 359.0):
        out = ref.solve({"parameters": params(array, finish="studio", order=9, room="large", az=az)})
        assert circ_dist(out["azimuth_deg"], az) <= 3.0, (az, out["azimuth_deg"])


@pytest.mark.parametrize("array", ["linear4_5cm", "linear8_4cm"])
def test_linear_arrays_report_the_folded_direction(array: str) -> None:
    for az in (45.0, 110.0, 300.0):
        out = ref.solve({"parameters": params(array, finish="studio", order=9, room="large", az=az)})
        assert 0.0 <= out["azimuth_deg"] <= 180.0
        assert circ_dist(out["azimuth_deg"], folded(az)) <= 5.0, (az, out["azimuth_deg"])


def test_peak_refinement_wraps_and_mirrors() -> None:
    v = np.array([0.9, 1.0, 0.5, 0.1, 0.2, 0.7])
    k, off = ref.refine_peak(v, linear=False)
    assert k == 1 and -0.5 < off < 0.0         # the left neighbour is higher: the peak moves left
    k, off = ref.refine_peak(np.roll(v, -1), linear=False)
    assert k == 0 and -0.5 < off < 0.0         # wraps: the left neighbour is the last value
    k, off = ref.refine_peak(np.roll(v, -1), linear=True)
    assert k == 0 and off == 0.0               # mirrored at the end: symmetric, no shift


def test_the_beam_passes_a_plane_wave_from_its_direction_unchanged() -> None:
    offsets = ref.array_offsets("circular6_5cm")
    rng = np.random.default_rng(3)
    spectrum = np.fft.rfft(rng.standard_normal(4000))
    spectrum[-1] = 0.0                      # no Nyquist component: a real shift of it is not real
    source = np.fft.irfft(spectrum, 4000)
    freqs = np.fft.rfftfreq(4000, 1 / 16000)
    az = 123.4
    advance = offsets.T @ np.array([math.cos(math.radians(az)), math.sin(math.radians(az))]) / 343.0
    # each microphone hears the wave earlier than the centre by its advance (circular shifts)
    signals = np.fft.irfft(np.fft.rfft(source)[None, :] * np.exp(2j * np.pi * freqs[None, :] * advance[:, None]),
                           4000)
    assert np.allclose(ref.steer_beam(signals, offsets, az), source, atol=1e-9)
    # the same wave from elsewhere is not passed unchanged
    assert not np.allclose(ref.steer_beam(signals, offsets, az + 90.0), source, atol=1e-3)


def test_the_beam_trades_sensor_noise_at_low_frequencies_for_less_reverberation() -> None:
    for p in TOLERANCE_SCENARIOS:
        out = ref.solve({"parameters": p})
        # a superdirective beam lets less of the diffuse (late) sound through ...
        assert out["beam_drr_db"] > out["drr_db"] + 2.0
        assert out["beam_c50_db"][3] > out["c50_db"][3]
        # ... and amplifies the uncorrelated sensor noise where the array is small
        # against the wavelength
        assert out["beam_inr_db"][0] < out["inr_db"][0] - 3.0


# ---------------------------------------------------------------------------------- determinism and edges
def test_deterministic_and_no_global_side_effects() -> None:
    before = {k: pra.constants.get(k) for k in ref._PINNED_CONSTANTS}
    p = params("circular6_5cm", finish="chapel", order=13, room="large", az=311.0, seed=123)
    first = ref.solve({"parameters": p})
    assert ref.solve({"parameters": p}) == first
    assert {k: pra.constants.get(k) for k in ref._PINNED_CONSTANTS} == before
    # the seed drives the sensor noise: the measurement changes a little, not a lot
    other = ref.solve({"parameters": {**p, "seed": 124}})
    assert other != first
    assert abs(other["peak_to_noise_db"] - first["peak_to_noise_db"]) < 1.5
    assert circ_dist(other["azimuth_deg"], first["azimuth_deg"]) < 2.0


def pairwise_edges() -> Iterator[dict[str, Any]]:
    """A greedy covering set of the axes' edge values (every value of a choice axis):
    every pair of values of every two axes appears together in some scenario, and with
    them every combination of the edges of any two axes."""
    axes = acoustic_beamforming.axes
    names = sorted(axes)
    values = {n: list(a.values) if isinstance(a, Choice) else a.edges() for n, a in axes.items()}
    todo = {(a, va, b, vb) for a, b in itertools.combinations(names, 2) for va in values[a] for vb in values[b]}
    while todo:
        best, best_cover = None, -1
        for combo in itertools.product(*(values[n] for n in names)):
            row = dict(zip(names, combo))
            cover = sum((a, row[a], b, row[b]) in todo for a, b in itertools.combinations(names, 2))
            if cover > best_cover:
                best, best_cover = row, cover
        assert best is not None
        todo -= {(a, best[a], b, best[b]) for a, b in itertools.combinations(names, 2)}
        yield best


def test_axis_edges_never_raise_and_give_sane_outputs() -> None:
    rows = list(pairwise_edges())
    assert 16 <= len(rows) <= 30
    for p in rows:
        out = ref.solve({"parameters": p})
        json.dumps(out, allow_nan=False)
        for k, v in out.items():
            assert compare.kind_error(SPECS[k], v) is None, (k, v)
        for k in BAND_FIELDS:
            assert len(out[k]) == 6 and all(type(v) is float and math.isfinite(v) for v in out[k])
        assert all(v > 0 for k in ("edt_s", "t20_s", "t30_s") for v in out[k])
        assert all(10.0 < v < out["peak_to_noise_db"] for v in out["inr_db"])
        assert 0.0 < out["d50"] <= 1.0 and out["peak_to_noise_db"] > 15.0 and out["spectrum_par_db"] > 0.0
        # (no accuracy claim here: at endfire in a live room the diffuse field pulls a
        # short linear array's estimate towards broadside by tens of degrees)
        if p["microphone_array"].startswith("linear"):
            assert 0.0 <= out["azimuth_deg"] <= 180.0
        else:
            assert 0.0 <= out["azimuth_deg"] < 360.0


def test_reference_program_reproduces_oracle_exactly(tmp_path: Path) -> None:
    p = params("linear4_5cm", finish="chapel", order=9, room="small", az=17.0, dist=0.5, snr=20.0, seed=99)
    want = acoustic_beamforming(p, tmp_path)
    scenario = {"task": "acoustic_beamforming", "id": "public_1", "parameters": p, "inputs": {}}
    proc = subprocess.run([sys.executable, str(acoustic_beamforming.reference)], input=json.dumps(scenario),
                          capture_output=True, text=True, timeout=120, check=True)
    assert json.loads(proc.stdout) == want


# ---------------------------------------------------------------------------------- tolerances
TOLERANCE_SCENARIOS = [
    params("circular8_10cm", finish="office", order=12, room="medium", az=40.0, dist=1.2, snr=24.0, seed=5),
    params("linear8_4cm", finish="chapel", order=13, room="large", az=200.0, dist=0.9, snr=22.0, seed=6),
    params("circular6_5cm", finish="classroom", order=10, room="small", az=300.0, dist=1.4, snr=27.0, seed=8),
]


def own_norm_music(signals: np.ndarray, offsets: np.ndarray, array_name: str) -> dict[str, Any]:
    """NormMUSIC written out with numpy (and the STFT with scipy): an independent
    implementation of the localisation stage."""
    _, _, spec = signal.stft(signals, fs=16000, window="hann", nperseg=512, noverlap=256, boundary=None,
                             padded=False)
    bins = np.arange(10, 113)
    linear = array_name.startswith("linear")
    grid = np.arange(0.0, 181.0 if linear else 360.0)
    x = spec[:, bins, :]
    cov = np.einsum("mkf,nkf->kmn", x, x.conj()) / x.shape[2]
    e = np.linalg.eigh(cov)[1][:, :, -1]
    u = np.stack([np.cos(np.radians(grid)), np.sin(np.radians(grid))])
    a = np.exp(2j * np.pi * (bins * 16000 / 512)[:, None, None] * (offsets.T @ u / 343.0)[None])
    pseudo = 1.0 / np.abs(offsets.shape[1] - np.abs(np.einsum("km,kmg->kg", e.conj(), a)) ** 2)
    values = (pseudo / pseudo.max(axis=1, keepdims=True)).mean(axis=0)
    k, off = ref.refine_peak(values, linear)
    az = grid[k] + off
    return {"azimuth": min(max(az, 0.0), 180.0) if linear else az % 360.0,
            "par_db": 10 * math.log10(values.max() / values.mean()), "grid": grid, "values": values,
            "frames": x.shape[2], "bins": (10, 112), "peak_grid": float(grid[k]), "offset": off}


def with_patch(p: dict[str, Any], **patch: Any) -> dict[str, Any]:
    saved = {k: getattr(ref, k) for k in patch}
    try:
        for k, v in patch.items():
            setattr(ref, k, v)
        return ref.run(p)[0]
    finally:
        for k, v in saved.items():
            setattr(ref, k, v)


@pytest.fixture(scope="module")
def truths() -> list[dict[str, Any]]:
    return [ref.solve({"parameters": p}) for p in TOLERANCE_SCENARIOS]


def test_tolerances_admit_independent_implementations(truths: list[dict[str, Any]]) -> None:
    base10 = tuple(1000.0 * 10 ** (0.3 * k) for k in range(-3, 3))
    for p, want in zip(TOLERANCE_SCENARIOS, truths):
        own = with_patch(p, localise=own_norm_music)
        assert abs(own["azimuth_deg"] - want["azimuth_deg"]) < 1e-4
        assert abs(own["spectrum_par_db"] - want["spectrum_par_db"]) < 1e-4
        # the other common reading of the octave-band centres (base 10) stays within tolerance
        assert all(within_all(with_patch(p, BAND_CENTRES=base10), want).values())


def own_superdirective(signals: np.ndarray, offsets: np.ndarray, azimuth_deg: float) -> np.ndarray:
    """The steered beam written out another way: the spherical Bessel function for the
    diffuse coherence, an explicit inverse, a DFT zero-padded to twice the length."""
    from scipy.special import spherical_jn

    n = signals.shape[1]
    freqs = np.fft.rfftfreq(2 * n, 1 / 16000)
    u = np.array([math.cos(math.radians(azimuth_deg)), math.sin(math.radians(azimuth_deg))])
    d = np.exp(2j * np.pi * freqs[:, None] * (offsets.T @ u)[None, :] / 343.0)
    r = np.linalg.norm(offsets.T[:, None, :] - offsets.T[None, :, :], axis=2)
    inv = np.linalg.inv(spherical_jn(0, 2 * np.pi * freqs[:, None, None] * r[None] / 343.0)
                        + 0.01 * np.eye(offsets.shape[1]))
    num = np.einsum("fmn,fn->fm", inv, d)
    w = num / np.einsum("fm,fm->f", d.conj(), num)[:, None]
    y = np.einsum("fm,mf->f", w.conj(), np.fft.rfft(signals, 2 * n, axis=1))
    return np.fft.irfft(y, 2 * n)[:n]


def test_tolerances_admit_an_independent_beam(truths: list[dict[str, Any]]) -> None:
    for p, want in zip(TOLERANCE_SCENARIOS, truths):
        own = with_patch(p, steer_beam=own_superdirective)
        for k in BEAM_FIELDS:
            assert np.allclose(own[k], want[k], atol=1e-3), k


def test_tolerances_reject_other_beams(truths: list[dict[str, Any]]) -> None:
    from scipy.special import j0

    def delay_and_sum(offsets: np.ndarray, freqs: np.ndarray, azimuth_deg: float) -> np.ndarray:
        u = np.array([math.cos(math.radians(azimuth_deg)), math.sin(math.radians(azimuth_deg))])
        return np.exp(2j * np.pi * freqs[:, None] * (offsets.T @ u)[None, :] / 343.0) / offsets.shape[1]

    def cylindrical(offsets: np.ndarray, freqs: np.ndarray) -> np.ndarray:
        r = np.linalg.norm(offsets[:, :, None] - offsets[:, None, :], axis=0)
        return j0(2 * np.pi * freqs[:, None, None] * r[None] / 343.0)

    wrong = {
        "loading 0.02": ({"BEAM_LOADING": 0.02}, ("beam_inr_db", "beam_c50_db")),
        "loading 0.005": ({"BEAM_LOADING": 0.005}, ("beam_inr_db", "beam_c50_db")),
        "delay and sum": ({"beam_weights": delay_and_sum}, BEAM_FIELDS),
        "cylindrical diffuse field": ({"diffuse_coherence": cylindrical}, BEAM_FIELDS),
    }
    for label, (patch, fields) in wrong.items():
        failed = set()
        for p, want in zip(TOLERANCE_SCENARIOS, truths):
            ok = within_all(with_patch(p, **patch), want)
            failed |= {k for k in BEAM_FIELDS if not ok[k]}
            assert all(ok[k] for k in SPECS if k not in BEAM_FIELDS), label  # the earlier stages stand
        assert failed == set(fields), (label, failed)


def plain_schroeder(x: np.ndarray) -> ref.Decay:
    p = x * x
    return ref.Decay(np.cumsum(p[::-1])[::-1], 1.0, 0, 0.0, -1.0, 0.0, (0, 1), p.shape[0], 0.0)


def test_tolerances_reject_other_choices(truths: list[dict[str, Any]]) -> None:
    import pyroomacoustics

    class PlainMusic:  # pyroomacoustics with MUSIC in place of NormMUSIC
        def __getattr__(self, name: str) -> Any:
            return getattr(pyroomacoustics, name)

        class doa:  # noqa: N801 - mirrors the module attribute
            algorithms = {"NormMUSIC": pyroomacoustics.doa.algorithms["MUSIC"]}

    wrong = {
        "4th-order band filters": ({"BAND_ORDER": 4}, ("c50_db", "c80_db")),
        "no noise truncation": ({"decay_analysis": plain_schroeder}, ("t30_s",)),
        "plain MUSIC": ({"pra": PlainMusic()}, ("spectrum_par_db",)),
        "no peak interpolation": ({"refine_peak": lambda v, linear: (int(np.argmax(v)), 0.0)}, ("azimuth_deg",)),
        "2 s sweep": ({"SWEEP_SECONDS": 2.0}, ("peak_to_noise_db",)),
        # moves the peak-to-noise ratio by 0.05 to 0.35 dB: within 6.0.0's 0.5 dB everywhere
        "noise window of the last fifth": ({"NOISE_TAIL_DIVISOR": 5}, ("peak_to_noise_db",)),
        "direct window to 5 ms": ({"DIRECT_AFTER": 80}, ("drr_db",)),
        # pyroomacoustics' freq_range=[300, 3500] stops before bin 112: 0.0002 to 0.06 dB,
        # within 6.1.0's 0.1 dB almost everywhere
        "the band's top bin left out": ({"doa_bins": lambda: np.arange(10, 112)}, ("spectrum_par_db",)),
    }
    for label, (patch, fields) in wrong.items():
        failed = set()
        for p, want in zip(TOLERANCE_SCENARIOS, truths):
            ok = within_all(with_patch(p, **patch), want)
            failed |= {k for k in fields if not ok[k]}
        assert failed == set(fields), (label, failed)


def test_the_azimuth_tolerance_rejects_the_padded_frames_near_a_linear_arrays_axis() -> None:
    """scipy.signal.stft's default frames (zero-padded at both ends) move the azimuth by
    0.35 degrees here, near the axis of a linear array, and by < 0.001 on the tolerance
    scenarios: within 6.0.0's 0.3 degrees almost everywhere, a failure the published
    scenarios seldom showed."""
    def padded(signals: np.ndarray) -> np.ndarray:
        return signal.stft(signals, fs=16000, window="hann", nperseg=512, noverlap=256)[2]

    p = params("linear4_5cm", finish="office", order=12, room="large", az=174.992, dist=1.10547, snr=6.64002,
               seed=365012120)
    want, got = ref.run(p)[0], with_patch(p, stft=padded)
    assert 0.3 < circ_dist(got["azimuth_deg"], want["azimuth_deg"]) < 0.5
    assert not compare.within(SPECS["azimuth_deg"], got["azimuth_deg"], want["azimuth_deg"])


# ---------------------------------------------------------------------------------- baselines on a built task
@pytest.fixture(scope="module")
def small_task(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from recon.build import build_task

    out = tmp_path_factory.mktemp("ab_task")
    # a small task keeps the two gradings short (each run imports pyroomacoustics anew)
    return build_task(Registry.default(entry_points=False), "acoustic_beamforming", out, n_public=3, n_hidden=2,
                      probes=1, workers=2, select="random").path


def test_baselines_earn_partial_credit(small_task: Path) -> None:
    from recon.audit import grade_baselines

    rows = grade_baselines(small_task, runtime="local")
    assert {r.name for r in rows} == {"pra_defaults", "iso3382_textbook"}
    for r in rows:
        assert 0.5 < r.reward < 1.0, (r.name, r.reward, r.detail)
