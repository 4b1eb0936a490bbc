"""The oracle's processing chain, on ObsPy (imported lazily: `recon list` must not need it).

See the recipe (the docstring of `seismic_lags` in __init__.py) for what each stage does.
"""
from __future__ import annotations

import math
import warnings
from pathlib import Path
from typing import Any

TAPER = 0.05            # Trace.taper max_percentage (Hann), before the response removal
WATER_LEVEL = 60.0      # dB, remove_response's water level
MIN_PAIRS = 3           # fewer used pairs: no plane-wave solution


def pre_filt(freqmin: float, rate: float) -> tuple[float, float, float, float]:
    return (0.25 * freqmin, 0.5 * freqmin, 0.4 * rate, 0.45 * rate)


def process(params: dict[str, Any], inputs: dict[str, Path]) -> tuple[dict[str, Any], dict[str, Any]]:
    import numpy as np
    import obspy
    from obspy.geodetics import gps2dist_azimuth
    from obspy.signal.cross_correlation import correlate, xcorr_max, xcorr_pick_correction
    from obspy.signal.trigger import classic_sta_lta, trigger_onset

    st = obspy.read(str(inputs["waveforms"]), format="MSEED")
    inv = obspy.read_inventory(str(inputs["stations"]), format="STATIONXML")
    t_ref = min(tr.stats.starttime for tr in st)
    codes = sorted({tr.stats.station for tr in st})
    segments = {c: len([tr for tr in st if tr.stats.station == c]) for c in codes}
    gap_list = [g for g in st.get_gaps() if g[6] > 0]
    gaps = {c: len([g for g in gap_list if g[1] == c]) for c in codes}
    st.merge(method=1, fill_value="interpolate")
    rate = float(params["target_rate"])
    fmin, fmax = float(params["freqmin"]), float(params["freqmax"])
    traces: dict[str, Any] = {}
    info: dict[str, dict[str, Any]] = {}
    for code in codes:
        tr = st.select(station=code)[0]
        d: dict[str, Any] = {"code": code, "channel": tr.stats.channel, "sampling_rate": tr.stats.sampling_rate,
                             "segments": segments[code], "gaps": gaps[code], "samples": tr.stats.npts}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tr.detrend("linear")
            tr.taper(TAPER, type="hann")
            tr.remove_response(inventory=inv, output="VEL", water_level=WATER_LEVEL,
                               pre_filt=pre_filt(fmin, tr.stats.sampling_rate))
            d["peak_deconvolved_um_s"] = float(np.abs(tr.data).max() * 1e6)
            tr.resample(rate)
            tr.filter("bandpass", freqmin=fmin, freqmax=fmax, corners=int(params["corners"]),
                      zerophase=bool(params["zerophase"]))
        d["resampled_samples"] = tr.stats.npts
        d["peak_um_s"] = float(np.abs(tr.data).max() * 1e6)
        cft = classic_sta_lta(tr.data, int(params["sta_s"] * rate), int(params["lta_s"] * rate))
        on = trigger_onset(cft, float(params["trigger_ratio"]), 0.5 * float(params["trigger_ratio"]))
        d["stalta_max"] = float(cft.max())
        d["pick"] = tr.stats.starttime + int(on[0][0]) * tr.stats.delta if len(on) else None
        d["pick_index"] = int(on[0][0]) if len(on) else None
        traces[code] = tr
        info[code] = d
    inv_sel = {code: inv.select(station=code)[0][0] for code in codes}

    before, after, maxlag = float(params["window_before_s"]), float(params["window_after_s"]), float(params["cc_maxlag_s"])
    pairs = []
    for i, a in enumerate(codes):
        for b in codes[i + 1:]:
            sa, sb = inv_sel[a], inv_sel[b]
            dist, az, _ = gps2dist_azimuth(sa.latitude, sa.longitude, sb.latitude, sb.longitude)
            p = {"a": a, "b": b, "distance_km": dist / 1000.0, "azimuth_deg": az, "polarity": 0, "shift": None,
                 "delay_s": 0.0, "cc": 0.0, "used": False}
            pairs.append(p)
            pa, pb = info[a]["pick"], info[b]["pick"]
            if pa is None or pb is None:
                continue
            ta, tb = traces[a], traces[b]
            wa = ta.slice(pa - before - maxlag / 2.0, pa + after + maxlag / 2.0)
            wb = tb.slice(pb - before - maxlag / 2.0, pb + after + maxlag / 2.0)
            cc = correlate(wa.data, wb.data, int(maxlag * rate))
            shift, value = xcorr_max(cc)
            polarity = 1 if value >= 0 else -1
            tb2 = tb.copy()
            if polarity < 0:
                tb2.data = -tb2.data
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    corr, coeff = xcorr_pick_correction(pa, ta, pb, tb2, before, after, maxlag)
            except Exception:  # noqa: BLE001 - too little data or too few samples to fit: not measured
                continue
            p.update(polarity=polarity, shift=int(shift), delay_s=float((pb + corr) - pa), cc=float(coeff))
            p["used"] = bool(coeff >= float(params["min_cc"]))

    used = [p for p in pairs if p["used"]]
    sx = sy = 0.0
    residual = 0.0
    if len(used) >= MIN_PAIRS:
        g = np.array([[p["distance_km"] * math.sin(math.radians(p["azimuth_deg"])),
                       p["distance_km"] * math.cos(math.radians(p["azimuth_deg"]))] for p in used])
        dt = np.array([p["delay_s"] for p in used])
        sol = np.linalg.lstsq(g, dt, rcond=None)[0]
        sx, sy = float(sol[0]), float(sol[1])
        residual = float(np.sqrt(np.mean((g @ sol - dt) ** 2)))
    smag = math.hypot(sx, sy)
    solved = len(used) >= MIN_PAIRS and smag > 0
    baz = (math.degrees(math.atan2(-sx, -sy)) % 360.0) if solved else 0.0
    vel = 1.0 / smag if solved else 0.0
    reversed_codes = []
    for c in codes:
        pol = [p["polarity"] for p in pairs if c in (p["a"], p["b"]) and p["polarity"] != 0]
        if pol and sum(1 for v in pol if v < 0) * 2 > len(pol):
            reversed_codes.append(c)
    aperture = max(p["distance_km"] for p in pairs)
    out = {
        "gaps_filled": len(gap_list),
        "peak_velocity_um_s": [info[c]["peak_um_s"] for c in codes],
        "trigger_times_s": [float(info[c]["pick"] - t_ref) if info[c]["pick"] is not None else -1.0 for c in codes],
        "pair_polarity": [p["polarity"] for p in pairs],
        "pair_delay_s": [p["delay_s"] for p in pairs],
        "pair_cc": [p["cc"] for p in pairs],
        "reversed_stations": reversed_codes,
        "pairs_used": len(used),
        "back_azimuth_deg": float(baz),
        "apparent_velocity_km_s": float(vel),
        "residual_ms": float(residual * 1000.0),
        "reliable": bool(solved and residual <= 0.5 / rate),
        "aperture_km": float(aperture),
    }
    detail = {"t_ref": t_ref, "codes": codes, "stations": info, "pairs": pairs, "slowness": (sx, sy),
              "traces": traces}
    return out, detail
