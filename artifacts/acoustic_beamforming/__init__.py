"""Built-in oracle `acoustic_beamforming`: a room-acoustics measurement and localisation
chain on a pyroomacoustics image-source simulation (sweep measurement, ISO 3382 style
octave-band parameters, subspace direction finding)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from recon import Angle, Choice, Evidence, Float, Int, Number, Seed, SequenceOf, oracle

ARRAY_NAMES = ["linear4_5cm", "circular6_5cm", "circular8_10cm", "linear8_4cm"]
ROOM_NAMES = ["small", "medium", "large"]
FINISH_NAMES = ["studio", "office", "classroom", "chapel"]
BAND_LABELS = ["125", "250", "500", "1000", "2000", "4000"]
CURVE_STEP = 32            # decay_curves.csv: one row every 2 ms


# Evidence numbers carry at most 4 significant digits (coordinates: millimetres): a
# hidden parameter or output has 5 or more, so no published number can contain one by
# chance (the leak audit looks for them as substrings).
def _round(x: float, digits: int = 4) -> float:
    return float(f"{float(x):.{digits}g}")


def _mm(x: float) -> float:
    return round(float(x), 3)


def _write_evidence(details: dict[str, Any], params: dict[str, Any], outputs: dict[str, Any], evidence: Path) -> None:
    import numpy as np
    from pyroomacoustics import materials_data
    from scipy.io import wavfile

    from . import reference as ref

    wavfile.write(str(evidence / "recording_mic0.wav"), ref.FS, np.asarray(details["recording"], dtype=np.float32))
    wavfile.write(str(evidence / "rir_mic0.wav"), ref.FS, np.asarray(details["ir"], dtype=np.float32))
    beam = details["beam"]
    wavfile.write(str(evidence / "rir_beam.wav"), ref.FS, np.asarray(beam.ir, dtype=np.float32))

    coeffs = {name: entry["coeffs"] for group in materials_data["absorption"].values() for name, entry in group.items()}
    walls = ref.FINISHES[params["finish"]]
    layout = {
        "fs": ref.FS,
        "speed_of_sound": ref.C,
        "room_dim": [_mm(v) for v in details["room_dim"]],
        "finish": params["finish"],
        "walls": {w: {"material": m, "absorption": coeffs[m]} for w, m in walls.items()},
        "absorption_centre_hz": [float(f) for f in materials_data["center_freqs"]],
        "air_absorption": True,
        "max_order": int(params["max_order"]),
        "array": params["microphone_array"],
        "centre": [_mm(v) for v in details["centre"]],
        "mics": [[_mm(v) for v in col] for col in details["mics"].T],
        "source": [_mm(v) for v in details["source"]],
    }
    (evidence / "geometry.json").write_text(json.dumps(layout, indent=2) + "\n", encoding="utf-8")

    curves = [ref.edc_db(d.edc) for d in details["bands"]] + [ref.edc_db(details["broadband"].edc)]
    n = min(c.shape[0] for c in curves)
    lines = ["time_ms," + ",".join(f"edc_{b}_db" for b in BAND_LABELS) + ",edc_broadband_db"]
    for i in range(0, n, CURVE_STEP):
        lines.append(f"{1000.0 * i / ref.FS:g}," + ",".join(f"{max(float(c[i]), -99.99):.2f}" for c in curves))
    (evidence / "decay_curves.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")

    loc = details["localisation"]
    rows = ["azimuth_deg,value"] + [f"{a:g},{v:.4g}" for a, v in zip(loc["grid"], loc["values"])]
    (evidence / "spatial_spectrum.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")

    def band_entry(label: str, d: Any) -> dict[str, Any]:
        return {
            "band_hz": label,
            "peak_block_db": _round(d.peak_block_db),
            "noise_db": _round(10.0 * np.log10(d.noise)),
            "noise_from_ms": _round(1000.0 * d.noise_from / ref.FS),
            "fit_start_ms": _round(1000.0 * d.fit_blocks[0] * ref.BLOCK_SAMPLES / ref.FS),
            "fit_end_ms": _round(1000.0 * d.fit_blocks[1] * ref.BLOCK_SAMPLES / ref.FS),
            "decay_db_per_s": _round(d.slope),
            "truncation_ms": _round(1000.0 * d.crossing / ref.FS),
            "tail_energy_db": _round(10.0 * np.log10(d.tail / d.edc[0])) if d.tail > 0 else None,
        }

    summary = {
        "recording": {
            "samples": int(details["recording"].shape[0]),
            "excitation_samples": int(details["excitation"].shape[0]),
            "mic0_signal_power": _round(details["power"]),
            "noise_rms": _round(details["sigma"]),
        },
        "impulse_response": {
            "samples": int(details["ir"].shape[0]),
            "onset_sample": int(details["onset"]),
            "peak_sample": int(details["peak"]),
            "direct_energy": _round(details["direct"]),
            "reverberant_energy": _round(details["reverberant"]),
        },
        "decay": [band_entry(label, d) for label, d in zip(BAND_LABELS, details["bands"])]
        + [band_entry("broadband", details["broadband"])],
        "localisation": {
            "frames": loc["frames"],
            "frequency_bins": loc["bins"][1] - loc["bins"][0] + 1,
            "grid_points": int(loc["grid"].shape[0]),
            "peak_grid_deg": loc["peak_grid"],
        },
        "beam": {
            "onset_sample": int(beam.onset),
            "peak_sample": int(beam.peak),
            "direct_energy": _round(beam.direct),
            "reverberant_energy": _round(beam.reverberant),
            "decay": [band_entry(label, d) for label, d in zip(BAND_LABELS, beam.bands)]
            + [band_entry("broadband", beam.broadband)],
        },
    }
    (evidence / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")


@oracle(
    name="acoustic_beamforming",
    version="6.2.0",
    title="Room-acoustics measurement and source localisation",
    domain="acoustics / signals",
    toolkit=["pyroomacoustics", "numpy", "scipy"],
    description=(
        "A loudspeaker in a furnished shoebox room (walls, floor and ceiling of different "
        "materials, air absorption) plays a test signal that a small microphone array "
        "records, with sensor noise. From the recording of the first microphone a room-"
        "acoustics engineer measures the room impulse response and reports the usual "
        "ISO 3382 room-acoustic parameters per octave band (decay times, clarity) and the "
        "direct-to-reverberant balance; from the whole array's recordings they estimate "
        "the direction of the loudspeaker. Then they steer the array at the direction they "
        "estimated: a superdirective beam (distortionless toward a plane wave from that "
        "direction at the array centre, minimising what a diffuse, reverberant sound field "
        "puts through, its design regularised against the sensor noise), applied to the "
        "whole recordings, whose output they measure like microphone 0's recording: how "
        "far the beam lifts the response over the noise per octave band, its clarity C50 "
        "per band and its direct-to-reverberant ratio. The question: what are those measured "
        "parameters and that direction for a given room, array, source position and "
        "noise level? The measurement set-up is fixed and known: everything runs at 16 kHz; "
        "the test signal is a 1 s exponential (logarithmic) sine sweep from 50 Hz to 7 kHz at "
        "unit amplitude, its first and last 10 ms shaped by the rising and falling halves of a "
        "Hann window; the array records the sweep and the 1 s after it (sample 0 = the instant "
        "the loudspeaker starts); and the sensor noise is white and Gaussian, microphone m "
        "getting row m of numpy.random.default_rng(seed).standard_normal((microphones, "
        "recorded samples)), scaled so that its power lies snr_db below the mean power of "
        "microphone 0's noise-free recording over the sweep. How the engineer turns those "
        "recordings into the parameters and the direction is for you to find."
    ),
    axes={
        "room_size": Choice(ROOM_NAMES, doc="the room, by size (dimensions in geometry.json)"),
        "finish": Choice(FINISH_NAMES, doc="the room's wall, floor and ceiling finish, by name (materials in "
                                           "geometry.json)"),
        "microphone_array": Choice(ARRAY_NAMES, doc="the microphone array's layout, by name"),
        "max_order": Int(9, 13, doc="highest order of wall reflections in the room simulation"),
        "source_azimuth": Float(0.0, 360.0, doc="direction of the loudspeaker seen from the array centre, degrees "
                                                 "counter-clockwise from +x"),
        "source_distance": Float(0.5, 1.5, doc="distance of the loudspeaker from the array centre, metres"),
        "snr_db": Float(5.0, 30.0, doc="signal-to-noise ratio of the recordings, dB"),
        "seed": Seed(doc="seed of the sensor noise"),
    },
    outputs={
        "peak_to_noise_db": Number(abs=0.1, doc="peak-to-noise ratio of the measured impulse response, dB"),
        "inr_db": SequenceOf(Number(abs=0.5), doc="impulse-response-to-noise ratio per octave band (125..4000 Hz) "
                                                   "of the measured impulse response, dB"),
        "edt_s": SequenceOf(Number(rel=0.05), doc="early decay time per octave band 125, 250, 500, 1000, 2000, "
                                                   "4000 Hz, seconds"),
        "t20_s": SequenceOf(Number(rel=0.05), doc="reverberation time T20 per octave band (125..4000 Hz), seconds"),
        "t30_s": SequenceOf(Number(rel=0.05), doc="reverberation time T30 per octave band (125..4000 Hz), seconds"),
        "c50_db": SequenceOf(Number(abs=0.3), doc="clarity C50 per octave band (125..4000 Hz), dB"),
        "c80_db": SequenceOf(Number(abs=0.3), doc="clarity C80 per octave band (125..4000 Hz), dB"),
        "d50": Number(abs=0.02, doc="definition D50 of the broadband impulse response, fraction in [0, 1]"),
        "drr_db": Number(abs=0.3, doc="direct-to-reverberant energy ratio of the broadband impulse response, dB"),
        "azimuth_deg": Angle(tol=0.01, doc="estimated direction of the loudspeaker, degrees counter-clockwise "
                                          "from +x"),
        "spectrum_par_db": Number(abs=0.001, doc="peak-to-average ratio of the localisation's spatial spectrum, dB"),
        "beam_inr_db": SequenceOf(Number(abs=0.5), doc="impulse-response-to-noise ratio per octave band (125..4000 Hz) "
                                                        "of the steered beam's measured impulse response, dB"),
        "beam_c50_db": SequenceOf(Number(abs=0.3), doc="clarity C50 per octave band (125..4000 Hz) of the steered "
                                                        "beam's measured impulse response, dB"),
        "beam_drr_db": Number(abs=0.3, doc="direct-to-reverberant energy ratio of the steered beam's broadband "
                                           "impulse response, dB"),
    },
    stages=["excitation and noisy recording", "sweep deconvolution", "octave-band filtering",
            "noise-compensated decay analysis", "ISO 3382 parameters", "subspace direction finding",
            "superdirective beam toward the estimate"],
    reference="reference.py",
    evidence_level="outputs",
    # what each output is computed from: a band's decay parameters come from its
    # noise-compensated decay curve, whose noise floor and peak the band's INR reports
    upstream={
        **{name: ["inr_db"] for name in ("edt_s", "t20_s", "t30_s", "c50_db", "c80_db")},
        # the beam is steered at the estimated azimuth; its C50 comes from its decay,
        # whose noise floor and peak the beam's INR reports
        "beam_inr_db": ["azimuth_deg"],
        "beam_c50_db": ["azimuth_deg", "beam_inr_db"],
        "beam_drr_db": ["azimuth_deg"],
    },
    evidence={
        "geometry.json": Evidence("the scene: fs (Hz), speed_of_sound (m/s), room_dim [Lx, Ly, Lz] (one corner at the "
                         "origin), finish, walls (west x=0, east x=Lx, south y=0, north y=Ly, floor, ceiling: "
                         "material name and its energy absorption coefficients at absorption_centre_hz), "
                         "air_absorption, max_order, array name, centre (array centre), mics (one [x, y, z] per "
                         "microphone, mic 0 first) and source [x, y, z], metres rounded to the millimetre", reveals="outputs"),
        "recording_mic0.wav": Evidence("what microphone 0 recorded (test signal through the room plus sensor noise), mono "
                              "WAV, 16000 Hz, 32-bit float, sample 0 = the instant the loudspeaker starts", reveals="trace"),
        "rir_mic0.wav": Evidence("the impulse response measured from that recording, mono WAV, 16000 Hz, 32-bit float, "
                        "sample 0 = emission time", reveals="trace"),
        "rir_beam.wav": Evidence("the impulse response measured from the steered beam's output, mono WAV, 16000 Hz, "
                        "32-bit float, sample 0 = emission time", reveals="trace"),
        "decay_curves.csv": Evidence("energy decay curves in dB re their start (2 decimals, floored at -99.99), every 2 ms "
                            "from the response's onset (time_ms), one column per octave band and one for the "
                            "broadband response", reveals="trace"),
        "spatial_spectrum.csv": Evidence("the localisation's spatial spectrum: azimuth_deg (the search grid) and value (4 "
                                "significant digits)", reveals="trace"),
        "summary.json": Evidence("per-stage numbers (4 significant digits): recording (samples, excitation_samples, "
                        "mic0_signal_power, noise_rms), impulse_response (samples, onset_sample, peak_sample, "
                        "direct_energy, reverberant_energy), decay (per band and broadband: peak_block_db and "
                        "noise_db in dB of energy per sample, fit_start_ms, fit_end_ms and decay_db_per_s of the "
                        "fitted decay line, truncation_ms, tail_energy_db re the curve's start) and localisation "
                        "(frames, frequency_bins, grid_points, peak_grid_deg) and beam (the steered beam's response: onset_sample, "
                        "peak_sample, direct_energy, reverberant_energy and its decay entries as above)", reveals="summary"),
    },
)
def acoustic_beamforming(params: dict[str, Any], evidence: Path) -> dict[str, Any]:
    """Simulate a sweep measurement in a furnished shoebox room with a small microphone
    array, then measure the room the way a room-acoustics engineer does (ISO 3382-1
    parameters per octave band on the measured impulse response) and localise the
    loudspeaker with a subspace method.

    Everything runs at fs = 16000 Hz with c = 343 m/s, in float64. Outputs are rounded
    to 6 significant digits (an azimuth that rounds to 360 is reported as 0).

    Stage 0, the scene (pyroomacoustics image-source model):
    - `room_size`: "small" 4.0 x 3.5 x 2.7 m, "medium" 6.0 x 4.5 x 3.0 m, "large"
      9.0 x 7.0 x 3.5 m (Lx x Ly x Lz, one corner at the origin).
    - `finish`: the material of each wall, from pyroomacoustics' material database
      (frequency-dependent energy absorption, no scattering), via
      pra.make_materials(west=..., east=..., south=..., north=..., floor=..., ceiling=...):
      "studio":    west plasterboard, east facing_brick, south curtains_fabric, north
                   plasterboard, floor carpet_tufted_9.5mm, ceiling ceiling_fissured_tile;
      "office":    west plasterboard, east plasterboard, south glass_window, north
                   plasterboard, floor carpet_cotton, ceiling ceiling_fissured_tile;
      "classroom": west plasterboard, east glass_window, south plasterboard, north
                   wooden_lining, floor linoleum_on_concrete, ceiling
                   ceiling_perforated_gypsum_board;
      "chapel":    west limestone_wall, east limestone_wall, south curtains_cotton_0.5,
                   north limestone_wall, floor marble_floor, ceiling wooden_lining.
      (west is x = 0, east x = Lx, south y = 0, north y = Ly.)
    - pra.ShoeBox(room_dim, fs=16000, materials=..., max_order=`max_order`,
      air_absorption=True, ray_tracing=False, use_rand_ism=False): the library's air
      absorption table for 20 C, 30-50 % (what it picks for c = 343 m/s and no humidity
      given), its octave-band processing, 81-tap windowed-sinc fractional delays (look-up
      granularity 20) and its zero-phase 10 Hz high-pass on every RIR; one thread
      (pra.constants num_threads = 1) so the float accumulation order is fixed.
    - The array centre is (Lx/2, Ly/2, 1.2 m); all microphones lie in the plane z = 1.2 m.
      `microphone_array` (offsets from the centre): "linear4_5cm" 4 mics on the x axis at
      x = (k - 1.5) * 0.05; "linear8_4cm" 8 mics at x = (k - 3.5) * 0.04; "circular6_5cm"
      6 mics on a circle of radius 5 cm, mic k at 60 k degrees; "circular8_10cm" 8 mics on
      a circle of radius 10 cm at 45 k degrees (pra.linear_2D_array / circular_2D_array
      with centre 0, angle 0). Mic 0 is the first one.
    - The loudspeaker (a point source) is at the array height, `source_distance` m from the
      centre in the direction `source_azimuth` (degrees counter-clockwise from +x).
    - RIR_m = room.rir[m][0] after room.compute_rir().

    Stage 1, excitation and recording:
    - Exponential sine sweep, N = 16000 samples (T = 1 s), f1 = 50 Hz, f2 = 7000 Hz,
      R = ln(f2 / f1): x[n] = sin(2 pi f1 T / R * (exp(R n / N) - 1)), n = 0..N-1.
      Fades: the first 160 samples are multiplied by w[i] = 0.5 (1 - cos(pi i / 160)),
      i = 0..159, the last 160 by the same ramp reversed.
    - The recording of mic m is the full linear convolution x * RIR_m, zero-padded (or
      cut) to N_rec = N + 16000 = 32000 samples (1 s of silence follows the sweep).
    - Sensor noise: P = mean over n in [0, N) of mic 0's noise-free recording squared;
      sigma = sqrt(P * 10^(-snr_db / 10)); noise = sigma *
      numpy.random.default_rng(seed).standard_normal((M, N_rec)), row m added to mic m.

    Stage 2, deconvolution (Farina): inverse filter v[n] = x[N-1-n] * exp(-R n / N),
    scaled so that d = x * v (full convolution) has |sum_n d[n] exp(-2 pi i 1000 n / fs)|
    = 1 (unit gain at 1 kHz). The measured impulse response h is samples N-1 ..
    N-1+15999 (16000 samples) of recording_mic0 * v (full convolution); h[0] is the
    emission instant.
    - peak_to_noise_db = 10 log10(max h^2 / mean of h^2 over its last 16000 // 10 = 1600
      samples).

    Stage 3, octave bands: centres 125, 250, 500, 1000, 2000, 4000 Hz; for each,
    scipy.signal.butter(3, [fc / sqrt 2, fc * sqrt 2], btype="bandpass", fs=16000,
    output="sos") applied causally (scipy.signal.sosfilt, zero initial state) to the whole
    h. Onset: o = first index with h[o]^2 >= 0.01 max h^2 (within 20 dB of the peak, on
    the broadband h). Every band response, and the broadband h, is analysed from o on:
    y = filtered[o:] (length L = 16000 - o).

    Stage 4, noise-compensated decay analysis of one response y (p = y^2):
    - envelope: B = 160-sample (10 ms) blocks, nb = L // B, block k covers
      p[kB:(k+1)B]; level E_k = 10 log10(mean), at time t_k = (k + 0.5) B / fs.
    - noise floor and decay line together (after Lundeby et al. 1995): first nf = mean
      of p over its last L // 10 samples (from s = L - L // 10). Then 3 times: fit the
      regression below against NF = 10 log10 nf; if b >= 0 stop; otherwise s =
      round((NF - 10 dB - a) / b * fs) (where the line lies 10 dB below the noise
      floor), clamped to [1, L - L // 10], and nf = mean of p over [s, L). The final
      nf (NF) is the noise floor; the regression is fitted once more against it, and
      that line (a, b) is the one used below.
    - regression against a noise floor NF: k0 = argmax E (first); for k >= k0, with
      A_k = E_k - NF and F_k = max(A_k, A_k+1, ..., A_nb-1): o_k = clip((F_k - 10 dB) /
      5 dB, 0, 1) (fading out between 15 and 10 dB above the noise by the loudest of the
      block and the blocks after it, so that a notch, one block far below a later one,
      does not end the line), n_k = clip((A_k - F_k + 10 dB) / 5 dB, 0, 1) (the notch
      itself fades out between 5 and 10 dB below that loudest later block), v_k = clip((35 dB - A_k) / 5 dB, 0, 1) (fading in
      between 35 and 30 dB above the noise); w_k = o_k * n_k * max(v_k, 0.01), and w_k :=
      max(w_k, 0.01) for k0 <= k < k0 + 3. So the line follows the late decay, 30 to 10
      dB above the noise, and a strong direct sound or a steep early decay weighs 1 %.
      k1 = 1 + the last k with w_k > 0. Weighted least-squares line E = a + b t over
      blocks k0 .. k1-1 (numpy.polyfit degree 1 with w = sqrt(w_k), i.e. squared
      residuals weighted by w_k). Every weight moves continuously with the levels: the
      line has no step where a block crosses a bound.
    - if b < 0: truncation point c = round((NF - a) / b * fs) (Python round), clamped to
      [1, L]; tail energy T = fs * 10^((a + b c / fs) / 10) * 10 / (-b ln 10) (the
      fitted exponential integrated from c to infinity, in energy-per-sample units).
      EDC[n] = sum_{m=n}^{c-1} p[m] + T for n < c, and EDC[n] = T * 10^(b (n - c) /
      (10 fs)) for c <= n < L.
      If b >= 0: c = L, T = 0, EDC[n] = sum_{m=n}^{L-1} p[m].
    - the decay curve in dB: D[n] = 10 log10(EDC[n] / EDC[0]). The broadband response
      is analysed the same way.
    - inr_db (per band) = max_k E_k - NF: the loudest block over the noise floor.

    Stage 5, parameters (per octave band, in band order 125..4000 Hz):
    - decay times: for a range (upper, lower) take every sample n with
      lower <= D[n] <= upper, fit a least-squares line D = s * (n / fs) + const, report
      -60 / s (0.0 if fewer than two samples qualify or s >= 0). EDT: (0, -10);
      T20: (-5, -25); T30: (-5, -35).
    - clarity from noise-subtracted energies of the band response y (from o on) and its
      noise floor nf (not from the decay curve): e = y^2 - nf, early = sum of e over
      [0, 800), late = sum of e over [800, L), late := max(late, 1e-4 early);
      C50 = 10 log10(early / late); C80 the same with 1280 samples.
    - on the broadband response (y = h[o:], its nf), the same energies at 800 samples:
      D50 = early / (early + late).
    - DRR: direct-sound window [max(o - 16, 0), o + 40] of the whole h (1 ms before to
      2.5 ms after the onset, inclusive), with e = h^2 - nf (nf: the broadband
      response's noise floor): direct = sum of e over the window, reverberant = sum of e
      from o + 41 to the end of h, reverberant := max(reverberant, 1e-4 direct);
      drr_db = 10 log10(direct / reverberant).

    Stage 6, localisation on all M recordings (noise included):
    - STFT: 512-sample frames, hop 256, frames f = 0 .. 1 + (N_rec - 512) // 256 - 1
      (only whole frames: 124), periodic Hann window (scipy.signal.get_window("hann",
      512)), X[m, k, f] = rfft(window * frame)[k].
    - bins k = 10 .. 112 (ceil(300 * 512 / fs) .. floor(3500 * 512 / fs)).
    - pyroomacoustics' NormMUSIC (pra.doa.algorithms["NormMUSIC"], i.e. MUSIC with
      per-frequency normalisation) with L = the (2, M) mic offsets from the centre,
      fs, nfft = 512, c = 343, num_src = 1, azimuth grid in 1-degree steps:
      0..359 for circular arrays, 0..180 (inclusive) for linear arrays (a linear array
      on the x axis cannot tell az from -az: it searches the upper half plane only);
      locate_sources(X, freq_bins=bins). Equivalently: per bin, the covariance
      S = mean_f X X^H, its principal eigenvector e, steering a_m = exp(+2 pi i f_k
      (x_m cos az + y_m sin az) / c) with f_k = k fs / 512, P_k(az) = 1 / |a^H (I - e
      e^H) a|, divided by its maximum over the grid, averaged over the bins.
    - peak: g = argmax of the grid values V (first on ties); parabolic interpolation
      through (V[g-1], V[g], V[g+1]): offset = 0.5 (V[g-1] - V[g+1]) / (V[g-1] - 2 V[g] +
      V[g+1]) grid steps when that denominator is negative, else 0. Neighbours wrap
      around for circular arrays; for linear arrays the spectrum is mirrored at the ends
      (V[-1] := V[1], V[181] := V[179]). azimuth_deg = grid[g] + offset, taken modulo 360
      (circular) or clamped to [0, 180] (linear).
    - spectrum_par_db = 10 log10(max V / mean V) over the grid.

    Stage 7, the steered beam (a superdirective beamformer toward the estimate):
    - the steering direction is the reported azimuth (the interpolated one, stage 6);
      a plane wave from there reaches mic m earlier than the array centre by
      tau_m = (x_m cos az + y_m sin az) / c (offsets from the centre); at frequency f
      the steering vector is d_m = exp(+2 pi i f tau_m).
    - diffuse-field coherence (spherically isotropic): G_mn(f) = sin(k r_mn) / (k r_mn)
      with k = 2 pi f / c and r_mn the distance between mics m and n (numpy.sinc(2 f
      r_mn / c); 1 on the diagonal); diagonal loading mu = 0.01 (-20 dB):
      w(f) = (G + mu I)^-1 d / (d^H (G + mu I)^-1 d) (MVDR against that field,
      distortionless toward the estimate).
    - applied to the whole noisy recordings in the frequency domain: X_m =
      numpy.fft.rfft(recording_m) (N_rec = 32000 points, frequencies k fs / N_rec),
      Y = sum_m conj(w_m) X_m, beam = numpy.fft.irfft(Y, N_rec).
    - the beam's output is measured exactly like mic 0's recording (stages 2 to 5 on
      the beam instead of recording_mic0, with the beam response's own onset, noise
      floor, peak and decay): beam_inr_db per band (stage 4's inr), beam_c50_db per band
      and beam_drr_db (stage 5's C50 and DRR).

    Evidence (public scenarios): geometry.json, recording_mic0.wav (the noisy mic-0
    recording), rir_mic0.wav (h), decay_curves.csv (D for each band and the broadband
    response, every 32 samples from the onset), spatial_spectrum.csv (grid and V), and
    summary.json (per-stage numbers: P and sigma, o and q = argmax |h|, the direct and reverberant
    energies of the DRR; per band and for the broadband response peak_block_db = max E,
    noise_db = NF, noise_from_ms = 1000 s / fs, fit_start_ms / fit_end_ms = 1000 k0 B / fs
    and 1000 k1 B / fs (the final fit),
    decay_db_per_s = b, truncation_ms = 1000 c / fs, tail_energy_db = 10 log10(T /
    EDC[0]) (null when T = 0); the STFT frame and bin counts, the grid size and grid[g];
    the beam's onset, peak, direct and reverberant energies and decay entries), and
    rir_beam.wav (the beam's measured impulse response).

    Version 6 records at 5 to 30 dB SNR (version 5: 20 to 50 dB), where the response's
    noise floor lies 18 to 57 dB below its loudest block: the noise estimate and the
    decay line it sets reach into every decay time, the clarities and the beam's
    measurement, not only the late decay. The per-choice figures below were measured on
    version 5's generator; version 6's mutation score and power are in its catalog record.

    Tolerances, and why (the pipeline is deterministic, so a faithful transcription
    agrees to the printed digits; each tolerance is several times what equivalent
    implementations move and smaller than what a different choice moves on a good share
    of scenarios; the noise draw is part of the recipe: another realisation of the same
    noise level fails inr_db nearly always and T30 in ~7 % of scenarios):
    - peak_to_noise_db: 0.1 dB (6.0.0: 0.5 dB). Faithful implementations agree to 0.001
      dB. The peak of a band-passed response (50-7000 Hz) moves it by 0.1-0.5 dB, another
      noise-window length (last 20 %) by up to 0.35 dB (beyond 0.1 dB on a quarter of
      scenarios), another noise realisation by < 0.8 dB; another sweep (length, band) or
      SNR reference (whole recording instead of the sweep) by 2-7 dB, plain spectral
      division (pyroomacoustics' deconvolve) by tens of dB. At 0.5 dB the choices that
      move it by 0.1-0.5 dB crossed the tolerance on about 1 % of scenarios: a failure
      the published scenarios seldom show (three earlier agents' programs had one).
    - inr_db: 0.5 dB per band. Base-10 band centres or an onset at the peak move it by
      < 0.15 dB; 5 or 20 ms blocks (2.5-3 dB), a 4th-order filter (~1.5 dB), a noise
      window of the last 20 % (~0.9 dB) or another noise realisation (~1.5 dB, the 125 Hz
      band's noise estimate rests on few independent samples) fail nearly always, and so
      does the noise floor of the last tenth alone, without the re-estimates (inr_db in 36
      and beam_inr_db in 37 of 40 scenarios, C80 and the beam's C50 in 4, C50 in 1; the
      decay times stay within 5 %).
    - edt_s, t20_s, t30_s: 5 % relative per band. Base-10 band centres (125.9, 251, ...)
      move them by < 4.6 %, a direct-form (b, a) filter or another fade shape by < 0.1 %;
      a 4th-order filter fails in 17-30 % of scenarios, zero-phase filtering in > 80 %,
      Schroeder integration without truncation in 67 % (T30), truncation without the
      tail compensation in ~15 %, 5 or 20 ms blocks or a 5/15 dB fit margin in 13-17 %.
      The faded regression weights make them continuous in the block levels (a fit that
      stops at the first block below the margin steps there, and so do T20 and T30 with
      it); EDT still steps where the onset moves by a sample, since the curve starts there.
    - c50_db, c80_db: 0.3 dB per band. Base-10 centres move them by < 0.2 dB; a 4th-order
      filter fails most scenarios, zero-phase filtering or an onset at sample 0 all of
      them. The noise subtraction makes them continuous in every level (the tail-
      compensated decay curve steps with its fit's last block); where a band's late sound
      barely clears the noise they are steep in the noise floor: another noise window moves
      them there.
    - d50: 0.02 (ISO 3382-1 puts its just-noticeable difference at 0.05). A D50 from
      the truncated decay curve plus its tail instead of noise-subtracted sums, with its
      window from 1 ms before the onset, moves it by up to 0.018 near the axes' corners
      (a strong direct sound at low SNR); 0.01 made that a rare failure.
    - drr_db: 0.3 dB. The direct window follows the onset, not the loudest
      sample (which jumps from the direct sound to a reflection as the source moves by a
      fraction of a degree); ending it 5 ms after the onset moves the DRR past 0.3 dB in
      most scenarios.
    - azimuth_deg: 0.01 degrees (6.0.0: 0.3). An own MUSIC implementation or
      scipy.signal.stft over the frames that fit reproduce it to 1e-9, and the truth's six
      significant digits round it by < 0.0005 (another noise realisation moves it by ~0.01
      degrees, rarely by up to 0.7). scipy.signal.stft's default frames (padded at both
      ends) move it by > 0.01 degrees on ~12 % of scenarios and by up to 0.35 near a
      linear array's axis, where the spectrum's peak is flat: at 0.3 degrees that choice
      failed on < 1 % of scenarios, seldom a published one (three earlier agents' programs
      made it). Skipping the parabolic interpolation fails ~half of the scenarios at 0.3,
      plain MUSIC, SRP-PHAT, 256-point frames, no window or another band (250..3000,
      500..4000 Hz) 40-97 % (reverberation makes the spectrum's peak sensitive to every
      choice: in a live room the array may even favour a reflection).
    - spectrum_par_db: 0.001 dB (6.1.0: 0.1 dB). Equivalent implementations agree to 1e-9
      and the truth's six significant digits round it by < 0.00001 dB. Every change of
      method, frame, window or band above moves it by more than 0.1 dB in 57-100 % of
      scenarios; subtler ones move it continuously, so a looser tolerance made them rare
      failures: pyroomacoustics' freq_range=[300, 3500] (its bins stop before 112) moves it
      by 0.0002-0.06 dB (beyond 0.001 in 97 % of 300 generated scenarios), scipy.signal.stft's
      default padded frames by up to 0.009 dB (beyond 0.001 in 16 %), a 0..359 grid for a
      linear array by up to 0.04 dB (beyond 0.001 in 48 of 50 linear-array scenarios). Two
      agents' programs with such choices were within 0.05 dB on every published scenario
      of a 6.1.0 build and 0.1-0.115 dB off on one graded scenario.
    - beam_inr_db: 0.5 dB per band; beam_c50_db: 0.3 dB per band; beam_drr_db: 0.3 dB
      (measured on 40 generated scenarios). Zero-padding the DFT to twice the length
      moves them by < 1e-3 dB; steering at the grid peak instead of the interpolated
      azimuth, or at an azimuth off by 6.0.0's tolerance (0.3 degrees), moves the INR by
      < 0.25 dB and the DRR by < 0.15 dB, C50 by < 0.3 dB except in one band of ~2 % of
      scenarios (a band whose decay meets the noise within 50 ms, where C50 is large and
      steep). Other loadings (mu 0.005 or 0.02) fail the INR in every scenario and C50 in
      60-70 % (the DRR stays within 0.26 dB); mu = 0.1 or a cylindrical (J0) coherence
      fail the INR always and C50 and the DRR in 50-100 %; a delay-and-sum beam fails
      everything in > 90 %; steering at the true direction instead of the estimate fails
      each field in 22-28 % (the estimate can favour a reflection).
    """
    from . import reference

    outputs, details = reference.run(params)
    _write_evidence(details, params, outputs, evidence)
    return outputs
