"""Built-in oracle `seismic_lags`: a small seismic network's records of a local earthquake,
corrected, resampled, filtered, picked and cross-correlated with ObsPy, and a plane wave
fitted to the station-pair delays (back-azimuth and apparent velocity)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from recon import Angle, Bool, Choice, Evidence, Exact, Float, Int, Integer, Number, Seed, SequenceOf, SetOf, oracle

from .scene import write_inputs


def make_inputs(params: dict[str, Any], directory: Path) -> None:
    """waveforms.mseed and stations.xml of the scenario (ObsPy writes both)."""
    write_inputs(params, directory)


# Evidence numbers carry at most 4 significant digits (the leak audit compares every
# published number with the hidden values).
def _r(x: Any) -> Any:
    return None if x is None else float(f"{float(x):.4g}")


def _write_evidence(detail: dict[str, Any], out: dict[str, Any], params: dict[str, Any], evidence: Path) -> None:
    t_ref = detail["t_ref"]
    stations = []
    for code in detail["codes"]:
        d = detail["stations"][code]
        stations.append({
            "station": code, "channel": d["channel"], "sampling_rate_hz": d["sampling_rate"],
            "segments_read": d["segments"], "gaps": d["gaps"], "samples_merged": d["samples"],
            "peak_deconvolved_um_s": _r(d["peak_deconvolved_um_s"]), "samples_resampled": d["resampled_samples"],
            "peak_filtered_um_s": _r(d["peak_um_s"]), "stalta_max": _r(d["stalta_max"]),
            "start_s": _r(detail["traces"][code].stats.starttime - t_ref),
            "trigger_sample": d["pick_index"],
            "trigger_s": _r(d["pick"] - t_ref) if d["pick"] is not None else None,
        })
    pairs = [{"a": p["a"], "b": p["b"], "distance_km": _r(p["distance_km"]), "azimuth_deg": _r(p["azimuth_deg"]),
              "polarity_lag_samples": p["shift"], "polarity": p["polarity"], "delay_s": _r(p["delay_s"]),
              "cc": _r(p["cc"]), "used": p["used"]} for p in detail["pairs"]]
    sx, sy = detail["slowness"]
    summary = {
        "reference_time": str(t_ref),
        "stations": stations,
        "pairs": pairs,
        "plane_wave": {"slowness_east_s_per_km": _r(sx), "slowness_north_s_per_km": _r(sy),
                       "pairs_used": out["pairs_used"], "residual_ms": _r(out["residual_ms"])},
    }
    (evidence / "summary.json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")

    # the processed velocity of every station around the event, by sample of its processed trace
    picks = [detail["stations"][c]["pick"] for c in detail["codes"] if detail["stations"][c]["pick"] is not None]
    lo = (min(picks) - t_ref - 3.0) if picks else 20.0
    hi = (max(picks) - t_ref + 6.0) if picks else 35.0
    lines = ["station,sample,velocity_um_s"]
    for code in detail["codes"]:
        tr = detail["traces"][code]
        t0 = tr.stats.starttime - t_ref
        for k, v in enumerate(tr.data):
            if lo <= t0 + k * tr.stats.delta <= hi:
                lines.append(f"{code},{k},{float(v) * 1e6:.4g}")
    (evidence / "velocity.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")


@oracle(
    name="seismic_lags",
    version="1.0.0",
    title="Array analysis of a local earthquake on a small mixed seismic network",
    domain="seismology",
    toolkit=["numpy", "scipy"],
    requires=["obspy"],
    description=(
        "A temporary network of four to seven vertical seismometers of mixed types (broadband "
        "seismometers, short-period seismometers, geophones and accelerometers, digitised at different "
        "sampling rates) recorded a local earthquake. The records are raw digitizer counts with the defects "
        "of real telemetry: gaps, stretches sent twice, DC offsets and drift; some scenarios have a sensor "
        "wired with reversed polarity or a channel whose sensor was disconnected. A seismologist processes "
        "them with ObsPy: each record is merged into one continuous trace, corrected for its instrument to "
        "ground velocity, brought to a common sampling rate and band-pass filtered; an STA/LTA trigger picks "
        "the arrival on each station; for every pair of picked stations, the polarity is checked and the "
        "differential arrival time is measured by cross-correlating windows around the two picks with "
        "sub-sample precision; a plane wave fitted to those delays gives the direction the wave came from "
        "and how fast it crossed the network. The question: what the seismologist reports for each station, "
        "each station pair and the network."
    ),
    axes={
        "stations": Int(4, 7, doc="number of stations in the network"),
        "aperture_km": Float(0.5, 3.0, doc="diameter of the area the stations are spread over, km"),
        "snr_db": Float(12.0, 32.0, doc="signal-to-noise ratio of the earthquake's first arrival against the "
                                         "background noise, dB"),
        "gaps": Int(0, 3, doc="telemetry gaps (stretches of missing samples) over the whole network"),
        "reversed_sensor": Bool(doc="whether one station's sensor is wired with reversed polarity (its metadata "
                                    "does not say so)"),
        "dead_channel": Bool(doc="whether one station's sensor was disconnected (its channel records only "
                                 "electronic noise)"),
        "target_rate": Choice([50, 80, 100], doc="common sampling rate all traces are brought to, Hz"),
        "freqmin": Float(0.5, 2.0, doc="lower corner of the band-pass filter, Hz"),
        "freqmax": Float(4.0, 12.0, doc="upper corner of the band-pass filter, Hz"),
        "corners": Int(2, 6, doc="corners (order) of the Butterworth band-pass filter, as ObsPy counts them"),
        "zerophase": Bool(doc="whether the band-pass filter is zero-phase (ObsPy's zerophase option)"),
        "sta_s": Float(0.3, 1.2, doc="short-term average window of the STA/LTA trigger, seconds"),
        "lta_s": Float(6.0, 15.0, doc="long-term average window of the STA/LTA trigger, seconds"),
        "trigger_ratio": Float(3.0, 5.0, doc="STA/LTA ratio at which the trigger turns on"),
        "cc_maxlag_s": Float(0.1, 0.6, doc="largest lag searched when cross-correlating a pair, seconds"),
        "window_before_s": Float(0.05, 0.5, doc="start of the correlation window before each pick, seconds"),
        "window_after_s": Float(0.5, 2.0, doc="end of the correlation window after each pick, seconds"),
        "min_cc": Float(0.5, 0.9, doc="smallest correlation coefficient a pair needs to enter the plane-wave fit"),
        "seed": Seed(doc="seed of the network layout, the instruments, the earthquake, the noise and the defects"),
    },
    outputs={
        "gaps_filled": Integer(tol=0, doc="gaps bridged while merging the records, over the whole network"),
        "peak_velocity_um_s": SequenceOf(Number(abs=1e-4, rel=1e-3), doc="per station (stations sorted by code): "
                                         "largest absolute ground velocity of the processed trace (instrument "
                                         "corrected, resampled, band-passed), micrometres per second"),
        "trigger_times_s": SequenceOf(Number(abs=1e-3), doc="per station (sorted by code): time of the trigger's "
                                      "first onset, seconds after the earliest first sample of the network's "
                                      "records; -1.0 when the trigger never turns on"),
        "pair_polarity": SequenceOf(Integer(tol=0), doc="per station pair (a, b), a before b in code order, pairs "
                                    "in order (first station, then second): 1 when the two records correlate "
                                    "with the same polarity, -1 when with opposite polarity, 0 when the pair's "
                                    "delay could not be measured"),
        "pair_delay_s": SequenceOf(Number(abs=2e-4), doc="per station pair, same order: arrival time at b minus "
                                   "arrival time at a as measured by cross-correlation, seconds; 0.0 when not "
                                   "measured"),
        "pair_cc": SequenceOf(Number(abs=2e-3), doc="per station pair, same order: the correlation coefficient "
                              "of that measurement; 0.0 when not measured"),
        "reversed_stations": SetOf(doc="codes of the stations judged to have reversed polarity"),
        "pairs_used": Integer(tol=0, doc="station pairs that enter the plane-wave fit"),
        "back_azimuth_deg": Angle(tol=0.05, doc="direction the wave came from, degrees clockwise from north, as "
                                                "seen from the network; 0.0 without a solution"),
        "apparent_velocity_km_s": Number(rel=1e-3, doc="speed at which the wave crossed the network, km/s; 0.0 "
                                                      "without a solution"),
        "residual_ms": Number(abs=0.01, rel=1e-3, doc="root mean square misfit of the plane wave to the delays "
                                                      "it was fitted to, milliseconds; 0.0 without a solution"),
        "reliable": Exact(doc="whether the plane-wave solution is trusted"),
        "aperture_km": Number(rel=1e-6, doc="largest distance between two stations of the network, km"),
    },
    inputs=make_inputs,
    input_docs={
        "waveforms": "miniSEED (SEED 2.4 data records of 512 bytes, big-endian, blockette 1000, uncompressed "
                     "32-bit integer samples, encoding 3; blockette 1001 carries the start time's microseconds): "
                     "one vertical channel per station of network ZQ, raw digitizer counts, about a minute of "
                     "data; a station's records may come in several stretches",
        "stations": "StationXML 1.2 of network ZQ: for every station its coordinates (WGS84 degrees), its "
                    "channel and the channel's full response (a poles-and-zeros sensor stage in rad/s and a "
                    "digitizer gain stage, with the overall sensitivity)",
    },
    stages=["read and merge the records", "detrend and taper", "instrument correction to velocity",
            "resampling to the common rate", "band-pass filter", "STA/LTA trigger",
            "polarity check and cross-correlation pick correction per pair", "plane-wave fit and quality flags"],
    reference="reference.py",
    evidence={
        "summary.json": Evidence(
            "per-stage summary (4 significant digits): the reference time (the earliest first sample); per "
            "station its channel, sampling rate, record stretches read, gaps, samples after merging, largest "
            "absolute velocity after the instrument correction (before resampling and filtering), samples after "
            "resampling, largest absolute velocity of the processed trace, largest STA/LTA ratio and trigger "
            "time; per pair the distance and azimuth from a to b, the integer lag (samples) and sign of the "
            "polarity check, the delay, the correlation coefficient and whether it entered the fit; the "
            "plane wave's slowness vector (east, north, s/km), the pairs used and the misfit",
            reveals="summary"),
        "velocity.csv": Evidence(
            "the processed velocity of every station (station, sample index of the processed trace, "
            "micrometres per second, 4 significant digits) from 3 s before the first pick to 6 s after the last",
            reveals="trace"),
    },
    evidence_level="summary",
)
def seismic_lags(params: dict[str, Any], evidence: Path, inputs: dict[str, Path]) -> dict[str, Any]:
    """Process a small network's records of a local earthquake with ObsPy (1.5) and fit a
    plane wave to the station-pair delays.

    Inputs: `waveforms` (miniSEED, INT32, 512-byte records, one vertical channel per
    station, a station possibly in several stretches) and `stations` (StationXML 1.2 with
    a poles-and-zeros stage and a digitizer gain stage per channel). Stations are handled
    in code order; pairs (a, b) with a before b, in the order (a, then b).

    1. Read and merge: obspy.read; gaps_filled = the gaps Stream.get_gaps() reports with a
       positive duration (over all stations); then Stream.merge(method=1,
       fill_value="interpolate"): a gap is bridged by numpy.linspace between the samples
       on either side, cast to the int32 of the data (truncation); a stretch that was sent
       twice (identical samples) is kept once. The reference time t_ref is the earliest
       first sample of all records (before merging).
    2. Per trace: Trace.detrend("linear") (scipy least-squares line), then
       Trace.taper(0.05, type="hann"): wlen = min(int(0.05 npts), int(npts / 2)), the
       first and last wlen samples multiplied by the halves of a symmetric Hann window of
       2 wlen + 1 points.
    3. Trace.remove_response(inventory, output="VEL", water_level=60,
       pre_filt=(0.25 freqmin, 0.5 freqmin, 0.4 fs, 0.45 fs)) with fs the trace's own
       sampling rate, and ObsPy's defaults zero_mean=True, taper=True, taper_fraction=0.05:
       subtract the mean; multiply by obspy.signal.invsim.cosine_taper(npts, 0.05,
       sactaper=True, halfcosine=False) (quarter-cosine flanks of int(npts 0.05 / 2 + 0.5)
       samples that already taper at the corner sample); nfft = 2 npts (2 (npts + 1) for
       odd npts; above 5000 points, when its largest prime factor is >= 500, the first of
       nfft + 2, nfft + 4, ... nfft + 20 whose factors are all < 500, else the next power
       of two); rfft; the response on numpy.linspace(0, fs / 2, nfft // 2 + 1) as evalresp
       computes it: A0 prod(s - z) / prod(s - p) (s = 2 pi i f, rad/s) times the product of
       the stage gains, times s for an accelerometer (input units M/S**2) so that it maps
       velocity to counts; the spectrum times cosine_sac_taper(freqs, pre_filt) (half-cosine
       flanks from f1 up to f2 and from f3 down to f4, one between, zero outside); the
       response inverted with a water level: values with 0 < |R| < max|R| 10^(-60/20) are
       scaled up to that magnitude (phase kept), then inverted (zero stays zero); the
       product's last (Nyquist) bin replaced by its absolute value; irfft, the first npts
       samples. (The water level never binds for these instruments.)
    4. Trace.resample(target_rate) with ObsPy's defaults (window="hann", no_filter=True):
       the rfft of the trace times the first npts // 2 + 1 values of
       ifftshift(scipy get_window("hann", npts)) (a periodic Hann window over the whole
       spectrum, so it attenuates well inside the band), num = int(npts / factor) with
       factor = fs / target_rate, the real and imaginary parts linearly interpolated
       (numpy.interp, clamped at the ends) from the old frequencies df k, df = 1 / (npts
       delta), onto target_rate / num k, k = 0 .. num // 2, then irfft to num samples times
       num / npts. The start time is unchanged.
    5. Trace.filter("bandpass", freqmin, freqmax, corners, zerophase): scipy iirfilter
       (corners, [freqmin, freqmax] / (target_rate / 2), btype="band", ftype="butter",
       output="sos"), sosfilt; zero phase = sosfilt, reverse, sosfilt, reverse (no
       padding). peak_velocity_um_s = max |v| of this trace, times 1e6.
    6. Trigger: obspy.signal.trigger.classic_sta_lta(data, int(sta_s target_rate),
       int(lta_s target_rate)) (moving averages of the squared trace over the last nsta and
       nlta samples, the ratio zero before sample nlta - 1) and trigger_onset(cft,
       trigger_ratio, trigger_ratio / 2); the pick is the first onset (the first sample
       with ratio >= trigger_ratio) at starttime + index delta; trigger_times_s = pick -
       t_ref (UTCDateTime difference, microseconds), -1.0 without an onset.
    7. Pairs where both stations have a pick. Windows: each trace sliced (Trace.slice,
       nearest sample) from its own pick - window_before_s - cc_maxlag_s / 2 to its pick +
       window_after_s + cc_maxlag_s / 2. Polarity: correlate(window_a, window_b,
       int(cc_maxlag_s target_rate)) (demeaned, normalised by the windows' norms) and
       xcorr_max (largest absolute value): its sign gives the polarity (1 for >= 0, else
       -1). When -1, b's whole trace is negated for the next step. Then
       xcorr_pick_correction(pick_a, trace_a, pick_b, trace_b, window_before_s,
       window_after_s, cc_maxlag_s) without filtering: the same windows correlated with
       method "direct", lags on numpy.linspace(-cc_maxlag_s, cc_maxlag_s, 2 shift + 1) (not
       multiples of the sample interval when cc_maxlag_s target_rate is not whole), from the
       correlation's largest (positive) value the run of samples whose second difference is
       <= 0 is extended both ways (the curvature array is padded with a zero at each end),
       a degree-2 numpy.polyfit over that run gives the vertex: correction = -(vertex lag),
       coefficient = the vertex value. It raises (the pair is not measured: polarity 0,
       delay 0.0, cc 0.0) when a window reaches beyond its trace, when the run has fewer
       than 3 samples, and also with exactly 3 (numpy 2 refuses the truth value of the
       empty residual array polyfit returns then). pair_delay_s = (pick_b + correction) -
       pick_a (UTCDateTime arithmetic: the correction rounded to the nanosecond, the
       difference to the microsecond); pair_cc = the coefficient. A pair is used when its
       coefficient >= min_cc.
    8. reversed_stations: a station whose measured pairs (polarity != 0) are negative in
       strictly more than half of them. Geometry: obspy.geodetics.gps2dist_azimuth(a -> b)
       (WGS84; Vincenty's inverse formula, as no geographiclib is installed) gives the
       distance d and azimuth az; aperture_km = the largest pair distance / 1000. Plane
       wave: with 3 or more used pairs, least squares (numpy lstsq) of delay = s_e d sin(az)
       + s_n d cos(az) (d in km); back_azimuth_deg = atan2(-s_e, -s_n) in degrees modulo
       360; apparent_velocity_km_s = 1 / |s|; residual_ms = 1000 sqrt(mean squared
       misfit); all three 0.0 with fewer used pairs. reliable = there is a solution and
       residual <= half a sample (0.5 / target_rate seconds).

    Tolerances, and why (40 scenarios, reference against plausible wrong programs; the
    reference matches the ObsPy chain to ~1e-12, the micro-second UTCDateTime rounding
    being the largest difference):
    - exact: the counts gaps_filled and pairs_used, the lists pair_polarity and
      reversed_stations, the flag reliable.
    - peak_velocity_um_s: 0.1 % (or 1e-4). Resampling without the Hann window or with
      scipy.signal.resample fails all 40 scenarios, the sensitivity alone instead of the
      response all 40, no pre-filter all 40, a wider pre-filter 12, no time-domain taper 1.
    - trigger_times_s: 1 ms, below one sample of every target rate: a pick is a sample.
      A recursive STA/LTA moves picks in all 40, skipping the resampling window in 28.
    - pair_delay_s: 0.2 ms. A three-point parabola fails 40 of 40, lags in whole sample
      intervals instead of ObsPy's linspace 37, no resampling window 36, a recursive
      STA/LTA (other picks, other windows) 36.
    - pair_cc: 0.002, the same programs fail 30-40 of 40.
    - back_azimuth_deg 0.05 degree, apparent_velocity_km_s 0.1 %, residual_ms 0.01 ms +
      0.1 %: spherical distances fail 23-27 of 40, the lag-axis mistake 25-28.
    - aperture_km: 1e-6 relative; a sphere is 0.1-0.5 % off, Vincenty and Karney's
      geodesics agree to 1e-9.
    Zero-phase filtering by sosfiltfilt (with its padding), a water level that never binds
    and a mean instead of a linear trend change no output: tapering has removed the edges.
    """
    from .pipeline import process

    out, detail = process(params, inputs)
    _write_evidence(detail, out, params, Path(evidence))
    return out
