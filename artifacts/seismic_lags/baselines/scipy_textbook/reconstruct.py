"""Baseline `scipy_textbook`: the textbook array-processing chain in numpy / scipy.

Written from the task's instruction alone (it does not know the recipe): miniSEED and
StationXML read by hand, gaps bridged by linear interpolation, the instrument removed by
spectral division with a water level, scipy.signal.resample to the common rate, a
Butterworth band-pass (sosfiltfilt when zero-phase), a classic STA/LTA on moving
averages, the correlation peak of each pair refined by a three-point parabola, local flat
coordinates and a least-squares slowness vector.
"""
from __future__ import annotations

import calendar
import json
import math
import struct
import sys
import xml.etree.ElementTree as ET

import numpy as np
from scipy import signal


def read_mseed(path):
    with open(path, "rb") as fh:
        raw = fh.read()
    recs = []
    pos = 0
    while pos + 48 <= len(raw):
        sta = raw[pos + 8:pos + 13].decode().strip()
        year, doy, hh, mm, ss, _, frac = struct.unpack(">HHBBBBH", raw[pos + 20:pos + 30])
        n, fac, mul = struct.unpack(">Hhh", raw[pos + 30:pos + 36])
        nblk = raw[pos + 39]
        doff, boff = struct.unpack(">HH", raw[pos + 44:pos + 48])
        rate = fac * mul if fac > 0 and mul > 0 else (-fac / mul if fac > 0 else -mul / fac)
        usec, reclen = 0, 512
        b = boff
        for _ in range(nblk):
            bt, bn = struct.unpack(">HH", raw[pos + b:pos + b + 4])
            if bt == 1000:
                reclen = 1 << raw[pos + b + 6]
            if bt == 1001:
                usec = struct.unpack(">b", raw[pos + b + 5:pos + b + 6])[0]
            if not bn:
                break
            b = bn
        t = calendar.timegm((year, 1, 1, hh, mm, ss)) + (doy - 1) * 86400 + frac * 1e-4 + usec * 1e-6
        data = np.frombuffer(raw, ">i4", n, pos + doff).astype(float)
        recs.append((sta, float(rate), t, data))
        pos += reclen
    out = {}
    for sta, rate, t, data in recs:
        out.setdefault(sta, []).append((t, rate, data))
    stations = {}
    for sta, rs in out.items():
        rs.sort(key=lambda r: r[0])
        t0, rate = rs[0][0], rs[0][1]
        n_total = int(round((max(t + len(d) / rate for t, _, d in rs) - t0) * rate))
        y = np.full(n_total, np.nan)
        for t, _, d in rs:
            i = int(round((t - t0) * rate))
            y[i:i + len(d)] = d
        gaps = 0
        bad = np.isnan(y)
        if bad.any():
            edges = np.diff(bad.astype(int))
            gaps = int(np.sum(edges == 1))
            idx = np.arange(len(y))
            y[bad] = np.interp(idx[bad], idx[~bad], y[~bad])
        stations[sta] = {"t0": t0, "rate": rate, "data": y, "gaps": gaps}
    return stations


def read_xml(path):
    root = ET.parse(path).getroot()
    ns = root.tag.split("}")[0] + "}"
    meta = {}
    for st in root.iter(ns + "Station"):
        ch = st.find(ns + "Channel")
        poles, zeros, a0, gain, units = [], [], 1.0, 1.0, "M/S"
        for stage in ch.find(ns + "Response").findall(ns + "Stage"):
            gain *= float(stage.find(ns + "StageGain/" + ns + "Value").text)
            pz = stage.find(ns + "PolesZeros")
            if pz is not None:
                a0 = float(pz.find(ns + "NormalizationFactor").text)
                units = pz.find(ns + "InputUnits/" + ns + "Name").text
                for tag, lst in (("Pole", poles), ("Zero", zeros)):
                    for el in pz.findall(ns + tag):
                        lst.append(complex(float(el.find(ns + "Real").text), float(el.find(ns + "Imaginary").text)))
        meta[st.get("code")] = {"lat": float(ch.find(ns + "Latitude").text), "lon": float(ch.find(ns + "Longitude").text),
                                "poles": poles, "zeros": zeros, "a0": a0, "gain": gain, "units": units}
    return meta


def deconvolve(x, rate, m):
    n = len(x)
    nfft = 1 << (2 * n - 1).bit_length()
    f = np.fft.rfftfreq(nfft, 1.0 / rate)
    s = 2j * np.pi * f
    h = m["a0"] * m["gain"] * np.ones_like(s)
    for z in m["zeros"]:
        h = h * (s - z)
    for p in m["poles"]:
        h = h / (s - p)
    if m["units"].upper() == "M/S**2":
        h = h * s
    wl = np.abs(h).max() * 10 ** (-60 / 20)
    h = np.where(np.abs(h) < wl, wl * np.exp(1j * np.angle(h)), h)
    spec = np.fft.rfft(x, nfft) / h
    spec[0] = 0
    return np.fft.irfft(spec, nfft)[:n]


def main():
    sc = json.load(sys.stdin)
    p = sc["parameters"]
    st = read_mseed(sc["inputs"]["waveforms"])
    meta = read_xml(sc["inputs"]["stations"])
    codes = sorted(st)
    rate = float(p["target_rate"])
    t_ref = min(st[c]["t0"] for c in codes)
    traces, picks, peaks = {}, {}, []
    for c in codes:
        x = signal.detrend(st[c]["data"])
        x = x * signal.windows.tukey(len(x), 0.1)
        x = deconvolve(x, st[c]["rate"], meta[c])
        x = signal.resample(x, int(round(len(x) * rate / st[c]["rate"])))
        sos = signal.butter(p["corners"], [p["freqmin"], p["freqmax"]], btype="band", fs=rate, output="sos")
        x = signal.sosfiltfilt(sos, x) if p["zerophase"] else signal.sosfilt(sos, x)
        peaks.append(float(np.abs(x).max() * 1e6))
        nsta, nlta = int(round(p["sta_s"] * rate)), int(round(p["lta_s"] * rate))
        e = np.concatenate([[0.0], np.cumsum(x ** 2)])
        ratio = np.zeros(len(x))
        i = np.arange(nlta, len(x) + 1)
        ratio[i - 1] = ((e[i] - e[i - nsta]) / nsta) / np.maximum((e[i] - e[i - nlta]) / nlta, 1e-300)
        on = np.flatnonzero(ratio >= p["trigger_ratio"])
        picks[c] = int(on[0]) if len(on) else None
        traces[c] = (st[c]["t0"], x)
    lat0 = np.mean([meta[c]["lat"] for c in codes])
    xy = {c: (6371.0 * math.radians(meta[c]["lon"]) * math.cos(math.radians(lat0)), 6371.0 * math.radians(meta[c]["lat"]))
          for c in codes}
    nb, na, ml = int(round(p["window_before_s"] * rate)), int(round(p["window_after_s"] * rate)), int(round(p["cc_maxlag_s"] * rate))
    pol, delay, ccs, rows, dts = [], [], [], [], []
    for i, a in enumerate(codes):
        for b in codes[i + 1:]:
            if picks[a] is None or picks[b] is None:
                pol.append(0), delay.append(0.0), ccs.append(0.0)
                continue
            sa, sb = max(0, picks[a] - nb), max(0, picks[b] - nb - ml)
            wa = traces[a][1][sa:picks[a] + na]
            wb = traces[b][1][sb:picks[b] + na + ml]
            wa, wb = wa - wa.mean(), wb - wb.mean()
            cc = signal.correlate(wb, wa, mode="valid") / (np.linalg.norm(wa) * np.linalg.norm(wb) + 1e-300)
            if len(cc) < 3:
                pol.append(0), delay.append(0.0), ccs.append(0.0)
                continue
            k = int(np.argmax(np.abs(cc)))
            sign = 1 if cc[k] >= 0 else -1
            k = min(max(k, 1), len(cc) - 2)
            y0, y1, y2 = sign * cc[k - 1], sign * cc[k], sign * cc[k + 1]
            den = y0 - 2 * y1 + y2
            off = 0.5 * (y0 - y2) / den if den < 0 else 0.0
            d = (traces[b][0] + (sb + k + off) / rate) - (traces[a][0] + sa / rate)
            c = y1 - 0.25 * (y0 - y2) * off
            pol.append(sign), delay.append(float(d)), ccs.append(float(c))
            if c >= p["min_cc"]:
                rows.append([xy[b][0] - xy[a][0], xy[b][1] - xy[a][1]])
                dts.append(d)
    out_baz = out_vel = res = 0.0
    if len(rows) >= 3:
        g = np.array(rows)
        s = np.linalg.lstsq(g, np.array(dts), rcond=None)[0]
        res = float(np.sqrt(np.mean((g @ s - dts) ** 2)))
        out_baz = math.degrees(math.atan2(-s[0], -s[1])) % 360.0
        out_vel = 1.0 / math.hypot(*s)
    rev = []
    pairs = [(a, b) for i, a in enumerate(codes) for b in codes[i + 1:]]
    for c in codes:
        v = [pol[k] for k, (a, b) in enumerate(pairs) if c in (a, b) and pol[k] != 0]
        if v and sum(1 for x in v if x < 0) * 2 > len(v):
            rev.append(c)
    print(json.dumps({
        "gaps_filled": sum(st[c]["gaps"] for c in codes),
        "peak_velocity_um_s": peaks,
        "trigger_times_s": [traces[c][0] + picks[c] / rate - t_ref if picks[c] is not None else -1.0 for c in codes],
        "pair_polarity": pol, "pair_delay_s": delay, "pair_cc": ccs, "reversed_stations": rev,
        "pairs_used": len(rows), "back_azimuth_deg": out_baz, "apparent_velocity_km_s": out_vel,
        "residual_ms": res * 1000.0, "reliable": bool(len(rows) >= 3 and res <= 0.5 / rate),
        "aperture_km": max(math.dist(xy[a], xy[b]) for a, b in pairs),
    }))


if __name__ == "__main__":
    main()
