"""Built-in oracle `acoustic_beamforming`: shoebox-room impulse responses + SRP-PHAT DOA
with pyroomacoustics."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from recon import Angle, Choice, Float, Int, Integer, Number, Seed, oracle

ARRAY_NAMES = ["linear4_5cm", "circular6_5cm", "circular8_10cm", "linear8_4cm"]
ROOM_NAMES = ["small", "medium", "large"]


def _write_evidence(details: dict[str, Any], params: dict[str, Any], evidence: Path) -> None:
    import numpy as np
    from scipy.io import wavfile

    from . import reference

    rir = np.asarray(details["rir"], dtype=np.float32)
    wavfile.write(str(evidence / "rir_mic0.wav"), reference.FS, rir)
    layout = {
        "array": params["microphone_array"],
        "fs": reference.FS,
        "speed_of_sound": reference.C,
        "room_dim": [float(v) for v in details["room_dim"]],
        "centre": [float(v) for v in details["centre"]],
        "mics": [[float(v) for v in col] for col in details["mics"].T],
        "source": [float(v) for v in details["source"]],
    }
    (evidence / "array.json").write_text(json.dumps(layout, indent=2) + "\n", encoding="utf-8")


@oracle(
    name="acoustic_beamforming",
    version="1.0.0",
    title="Room-acoustics beamforming peak direction",
    domain="acoustics / signals",
    toolkit=["pyroomacoustics", "numpy", "scipy"],
    axes={
        "absorption": Float(0.2, 0.8),
        "microphone_array": Choice(ARRAY_NAMES),
        "max_order": Int(1, 12),
        "room_size": Choice(ROOM_NAMES),
        "source_azimuth": Float(0.0, 360.0),
        "source_distance": Float(0.5, 1.5),
        "seed": Seed(),
    },
    outputs={
        "rir_len": Integer(tol=6),
        "energy": Number(rel=0.2),
        "peak": Number(rel=0.2),
        "doa_deg": Angle(tol=5.0),
        "rt60": Number(rel=0.25),
    },
    reference="reference.py",
    evidence={
        "rir_mic0.wav": "room impulse response from the source to microphone 0, mono WAV, "
                        "16000 Hz, 32-bit IEEE float samples, unnormalised (the direct path "
                        "has amplitude about 1/distance); its length in samples equals `rir_len`",
        "array.json": "the scenario geometry: array name, fs (Hz), speed_of_sound (m/s), "
                      "room_dim [Lx, Ly, Lz], centre (array centre), mics (one [x, y, z] per "
                      "microphone, mic 0 first) and source [x, y, z], all in metres",
    },
)
def acoustic_beamforming(params: dict[str, Any], evidence: Path) -> dict[str, Any]:
    """Simulate a loudspeaker in a shoebox room recorded by a small microphone array,
    summarise the room impulse response and find the source direction by beamforming.

    Use pyroomacoustics (image-source model) at fs = 16000 Hz with the speed of sound
    343 m/s.

    Scene:
    - `room_size`: "small" 4.0 x 3.5 x 2.7 m, "medium" 6.0 x 4.5 x 3.0 m, "large"
      9.0 x 7.0 x 3.5 m (Lx x Ly x Lz, one corner at the origin).
    - `absorption`: energy absorption coefficient of all six walls (frequency
      independent, 0.2 = very reverberant, 0.8 = dead). No air absorption, no randomised
      image sources, no ray tracing, no added noise.
    - `max_order`: highest reflection order of the image-source model (1..12); it sets how
      long the impulse response is.
    - The array centre is at (Lx/2, Ly/2, 1.2 m); all microphones are in the horizontal
      plane z = 1.2 m. `microphone_array` (offsets from the centre):
      "linear4_5cm" 4 mics on the x axis 5 cm apart (x offsets -7.5, -2.5, 2.5, 7.5 cm);
      "linear8_4cm" 8 mics on the x axis 4 cm apart (x offsets -14, -10, ..., 14 cm);
      "circular6_5cm" 6 mics on a circle of radius 5 cm at angles 0, 60, ..., 300 deg;
      "circular8_10cm" 8 mics on a circle of radius 10 cm at angles 0, 45, ..., 315 deg.
      Microphone 0 is the first listed (x offset most negative, or angle 0).
    - The source is at the array height, `source_distance` m (0.5..1.5) from the array
      centre in the direction `source_azimuth` (degrees, counter-clockwise from +x).
    - The source plays 8000 samples (0.5 s) of white noise:
      numpy.random.default_rng(seed).standard_normal(8000).
    - Impulse responses use the library's defaults: 81-tap windowed-sinc fractional
      delays and a zero-phase 10 Hz high-pass applied to every RIR. Amplitudes are the
      library's (direct path about 1/distance, no 1/(4 pi) factor).

    Outputs:
    - `rir_len`: number of samples of microphone 0's impulse response.
    - `energy`: sum of squares of that impulse response; `peak`: its largest |sample|.
    - `rt60`: reverberation time (s) measured on that impulse response by Schroeder
      backward integration, fitted between -5 dB and -35 dB and extrapolated to 60 dB
      (pyroomacoustics' measure_rt60 with decay_db=30); if the fit gives a non-finite or
      non-positive value, 0.0.
    - `doa_deg`: direction of arrival from SRP-PHAT on the simulated microphone signals:
      STFT frames of 256 samples, hop 128, no analysis window; far-field steering with
      c = 343 m/s, frequencies 1500..7000 Hz (STFT bins 24..111); azimuth grid in 1
      degree steps. The answer is the grid azimuth with the largest steered response
      power (the first one on ties). For circular arrays the grid is 0..359 deg. A
      linear array on the x axis cannot distinguish az from -az, so its grid is only
      0..180 deg and the answer lies in [0, 180] (a source at 300 deg shows up near
      60 deg).

    Evidence for public scenarios: `rir_mic0.wav` (the microphone-0 RIR) and
    `array.json` (the geometry).

    Tolerances, and why:
    - rir_len: +-6 samples. The length follows from the farthest image source's delay
      plus the fractional-delay filter span (both ends of the 81-tap filter); rounding
      of delays and of the speed of sound moves it by a sample or two, a wrong
      reflection order or filter length by tens to thousands.
    - energy, peak: 20 % relative. Interpolation-table versus exact sinc, float32 versus
      float64 accumulation, or a different fractional-delay filter length change them by
      < 3 %; dropping the high-pass changes the energy by up to ~40 %, integer-sample
      delays change the peak by up to ~35 %, a wrong geometry or absorption changes both
      a lot.
    - rt60: 25 % relative. The decay fitted on a truncated image-source response is
      sensitive to the response tail: changing the fractional-delay filter length moves
      it by up to ~20 % at max_order 1 (< 3 % typically); a wrong absorption, order or
      decay range moves it much more.
    - doa_deg: 5 degrees on the circle. Changing SRP-PHAT details (FFT size 512, hop 64,
      a Hann window, grid step 0.5 or 2 degrees, band edges 1400..7200 or 1600..6800 Hz)
      moves the peak by 1 degree typically and by at most 4 degrees; a mirrored,
      rotated or clockwise convention is off by far more. Caveat: diffuse reverberation
      pulls a linear array's SRP-PHAT peak towards broadside (90 deg), so in the most
      reverberant rooms a source near endfire (near 0 or 180 deg) can give a spectrum
      with two almost equal maxima; there only the exact recipe above (including the
      noise signal) reproduces the answer.
    """
    from . import reference

    outputs, details = reference.run(params)
    _write_evidence(details, params, evidence)
    return outputs
