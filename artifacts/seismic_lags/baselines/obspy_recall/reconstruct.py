"""Baseline `obspy_recall`: ObsPy's processing recalled from its documentation, in numpy / scipy.

Written from the task's instruction alone by someone who knows ObsPy well: Stream.merge
with interpolation, detrend and taper, remove_response to velocity with a water level and
a conventional fixed pre-filter (0.05, 0.1 Hz at the low end), Trace.resample (Hann
window), Trace.filter("bandpass"), classic STA/LTA with trigger_onset, then the usual
sub-sample lag: correlate + xcorr_max over the pick windows refined by a three-point
parabola, and distances on a spherical Earth (locations2degrees x 111.19 km).
"""
from __future__ import annotations

import calendar
import json
import math
import struct
import sys
import xml.etree.ElementTree as ET
from typing import Any

import numpy as np
from scipy.signal import detrend as sp_detrend
from scipy.signal import get_window, iirfilter, lfilter, sosfilt
from scipy.signal import correlate as sp_correlate
from scipy.signal.windows import hann

TAPER = 0.05
WATER_LEVEL = 60.0


# --------------------------------------------------------------------------- times
def ns_add(t_ns: int, seconds: float) -> int:
    """UTCDateTime + float: the offset is rounded to whole nanoseconds."""
    return t_ns + int(round(float(seconds) * 1e9))


def ns_diff(a_ns: int, b_ns: int) -> float:
    """UTCDateTime - UTCDateTime: seconds, rounded to the microsecond."""
    return round((a_ns - b_ns) / 1e9, 6)


def round_away(x: float) -> int:
    f = math.floor(x)
    c = math.ceil(x)
    if x - f == c - x and f != c:
        return int(c if x > 0 else f)
    return int(round(x))


def lt_us(a_ns: int, b_ns: int) -> bool:
    """a < b as UTCDateTime compares them: nanoseconds rounded to microseconds."""
    return round(a_ns, -3) < round(b_ns, -3)


# ------------------------------------------------------------------------- miniSEED
def read_mseed(path: str) -> list[dict[str, Any]]:
    """Contiguous segments: dicts with id, station, rate, start (ns), data (int32)."""
    with open(path, "rb") as fh:
        raw = fh.read()
    pos = 0
    segments: list[dict[str, Any]] = []
    while pos + 48 <= len(raw):
        head = raw[pos:pos + 48]
        sta = head[8:13].decode("ascii").strip()
        loc = head[13:15].decode("ascii").strip()
        cha = head[15:18].decode("ascii").strip()
        net = head[18:20].decode("ascii").strip()
        year, doy, hh, mm, ss, _, frac = struct.unpack(">HHBBBBH", head[20:30])
        nsamp, factor, mult = struct.unpack(">Hhh", head[30:36])
        act, _, _, nblk, tcorr, data_off, blk_off = struct.unpack(">BBBBiHH", head[36:48])
        if factor > 0 and mult > 0:
            rate = float(factor * mult)
        elif factor > 0 > mult:
            rate = -float(factor) / mult
        elif factor < 0 < mult:
            rate = -float(mult) / factor
        else:
            rate = 1.0 / (factor * mult)
        encoding, order, reclen, usec = 3, 1, 512, 0
        b = blk_off
        for _ in range(nblk):
            btype, bnext = struct.unpack(">HH", raw[pos + b:pos + b + 4])
            if btype == 1000:
                encoding, order, exp = struct.unpack(">BBB", raw[pos + b + 4:pos + b + 7])
                reclen = 1 << exp
            elif btype == 1001:
                usec = struct.unpack(">b", raw[pos + b + 5:pos + b + 6])[0]
            if bnext == 0:
                break
            b = bnext
        secs = calendar.timegm((year, 1, 1, hh, mm, ss, 0, 0, 0)) + (doy - 1) * 86400
        start = secs * 10**9 + frac * 100_000 + usec * 1000
        if not act & 0x02:
            start += tcorr * 100_000
        fmt = {3: "i4", 4: "f4", 5: "f8"}[encoding]
        dt = np.dtype((">" if order == 1 else "<") + fmt)
        data = np.frombuffer(raw, dtype=dt, count=nsamp, offset=pos + data_off).astype(np.int32)
        rid = f"{net}.{sta}.{loc}.{cha}"
        for seg in segments:
            if seg["id"] == rid and seg["rate"] == rate:
                expect = seg["start"] + int(round(seg["npts"] * 1e9 / rate))
                if abs(start - expect) <= 0.5e9 / rate:
                    seg["chunks"].append(data)
                    seg["npts"] += len(data)
                    break
        else:
            segments.append({"id": rid, "station": sta, "channel": cha, "rate": rate, "start": start,
                             "chunks": [data], "npts": len(data)})
        pos += reclen
    for seg in segments:
        seg["data"] = np.concatenate(seg.pop("chunks"))
    return segments


def end_ns(start: int, npts: int, rate: float) -> int:
    return start + int(round(float(npts - 1) * (1.0 / rate) * 1e9)) if npts else start


def merge(segs: list[dict[str, Any]]) -> tuple[dict[str, Any], int]:
    """One station's segments merged; returns (trace, gaps interpolated over)."""
    segs = sorted(segs, key=lambda s: (s["start"], end_ns(s["start"], len(s["data"]), s["rate"])))
    cur = dict(segs[0])
    gaps = 0
    for nxt in segs[1:]:
        sr = cur["rate"]
        lt_end = end_ns(cur["start"], len(cur["data"]), sr)
        rt_end = end_ns(nxt["start"], len(nxt["data"]), sr)
        delta = round_away(ns_diff(nxt["start"], lt_end) * sr) - 1
        if delta < 0 and rt_end > lt_end:              # overlap: identical samples assumed
            data = np.concatenate([cur["data"][:delta], nxt["data"]])
        elif delta < 0:                                # a contained (re-sent) stretch
            data = cur["data"]
        elif delta == 0:
            data = np.concatenate([cur["data"], nxt["data"]])
        else:
            gaps += 1
            fill = np.linspace(cur["data"][-1], nxt["data"][0], delta + 2)[1:-1].astype(cur["data"].dtype)
            data = np.concatenate([cur["data"], fill, nxt["data"]])
        cur["data"] = data
    return cur, gaps


# ----------------------------------------------------------------------- StationXML
def read_stationxml(path: str) -> dict[str, dict[str, Any]]:
    root = ET.parse(path).getroot()
    ns = root.tag.split("}")[0] + "}" if root.tag.startswith("{") else ""

    def num(el: Any, tag: str) -> float:
        return float(el.find(ns + tag).text)

    out: dict[str, dict[str, Any]] = {}
    for sta in root.iter(ns + "Station"):
        cha = sta.find(ns + "Channel")
        resp = cha.find(ns + "Response")
        stages = []
        for stage in resp.findall(ns + "Stage"):
            gain = num(stage.find(ns + "StageGain"), "Value")
            pz = stage.find(ns + "PolesZeros")
            if pz is not None:
                def cplx(el: Any) -> complex:
                    return complex(num(el, "Real"), num(el, "Imaginary"))

                stages.append({"gain": gain, "a0": num(pz, "NormalizationFactor"),
                               "units": pz.find(ns + "InputUnits").find(ns + "Name").text,
                               "zeros": [cplx(z) for z in pz.findall(ns + "Zero")],
                               "poles": [cplx(p) for p in pz.findall(ns + "Pole")]})
            else:
                stages.append({"gain": gain})
        out[sta.get("code")] = {"lat": num(cha, "Latitude"), "lon": num(cha, "Longitude"), "stages": stages}
    return out


def velocity_response(stages: list[dict[str, Any]], freqs: Any) -> Any:
    """evalresp's response for output velocity: counts per m/s at freqs."""
    s = 2j * np.pi * freqs
    h = np.ones(len(freqs), dtype=complex)
    units = "M/S"
    for st in stages:
        if "poles" in st:
            units = st["units"].upper()
            num = np.ones(len(freqs), dtype=complex)
            for z in st["zeros"]:
                num = num * (s - z)
            den = np.ones(len(freqs), dtype=complex)
            for p in st["poles"]:
                den = den * (s - p)
            h = h * st["a0"] * num / den
        h = h * st["gain"]
    if units == "M/S**2":
        h = h * s
    elif units == "M":
        h = h / np.where(s == 0, 1.0, s)
        h[0] = 0.0
    return h


# ------------------------------------------------------------------------ processing
def obspy_taper(data: Any, fraction: float) -> Any:
    npts = len(data)
    wlen = min(int(fraction * npts), int(npts / 2))
    sides = hann(2 * wlen) if 2 * wlen == npts else hann(2 * wlen + 1)
    return data * np.hstack((sides[:wlen], np.ones(npts - 2 * wlen), sides[len(sides) - wlen:]))


def sac_cosine_taper(npts: int, p: float) -> Any:
    """obspy.signal.invsim.cosine_taper(npts, p, sactaper=True, halfcosine=False)."""
    frac = int(npts * p / 2.0 + 0.5)
    idx1, idx2, idx3, idx4 = 0, frac - 1 + 1, npts - frac - 1, npts - 1
    if idx1 == idx2:
        idx2 += 1
    if idx3 == idx4:
        idx3 -= 1
    w = np.zeros(npts)
    w[idx1:idx2 + 1] = np.cos(-(np.pi / 2.0 * (float(idx2) - np.arange(idx1, idx2 + 1)) / (idx2 - idx1)))
    w[idx2 + 1:idx3] = 1.0
    w[idx3:idx4 + 1] = np.cos(np.pi / 2.0 * (float(idx3) - np.arange(idx3, idx4 + 1)) / (idx4 - idx3))
    return w


def npts2nfft(npts: int) -> int:
    nfft = 2 * (npts + 1) if npts & 1 else 2 * npts

    def largest_factor(x: int) -> int:
        big, f = 1, 2
        while f * f <= x:
            while x % f == 0:
                big, x = max(big, f), x // f
            f += 1
        return max(big, x)

    if nfft > 5000 and largest_factor(nfft) >= 500:
        for i in range(1, 11):
            if largest_factor(nfft + 2 * i) < 500:
                return nfft + 2 * i
        return 1 << (nfft - 1).bit_length()
    return nfft


def remove_response(data: Any, rate: float, stages: list[dict[str, Any]], pre_filt: tuple[float, ...]) -> Any:
    x = data.astype(np.float64)
    npts = len(x)
    x = x - x.mean()
    x = x * sac_cosine_taper(npts, TAPER)
    nfft = npts2nfft(npts)
    spec = np.fft.rfft(x, n=nfft)
    freqs = np.linspace(0, rate / 2.0, nfft // 2 + 1)
    resp = velocity_response(stages, freqs)
    f1, f2, f3, f4 = pre_filt
    tap = np.zeros_like(freqs)
    a = (f1 <= freqs) & (freqs <= f2)
    tap[a] = 0.5 * (1.0 - np.cos(np.pi * (freqs[a] - f1) / (f2 - f1)))
    tap[(f2 < freqs) & (freqs < f3)] = 1.0
    c = (f3 <= freqs) & (freqs <= f4)
    tap[c] = 0.5 * (1.0 + np.cos(np.pi * (freqs[c] - f3) / (f4 - f3)))
    spec = spec * tap
    swamp = np.abs(resp).max() * 10.0 ** (-WATER_LEVEL / 20.0)
    mag = np.abs(resp)
    low = (mag < swamp) & (mag > 0.0)
    resp[low] = resp[low] * (swamp / mag[low])
    mag = np.abs(resp)
    inv = np.zeros_like(resp)
    inv[mag > 0] = 1.0 / resp[mag > 0]
    spec = spec * inv
    spec[-1] = abs(spec[-1]) + 0.0j
    return np.fft.irfft(spec)[:npts]


def resample(data: Any, rate: float, new_rate: float) -> Any:
    npts = len(data)
    factor = rate / float(new_rate)
    x = np.fft.rfft(data)
    w = np.fft.ifftshift(get_window("hann", npts))[:npts // 2 + 1]
    xr, xi = x.real * w, x.imag * w
    num = int(npts / factor)
    df = 1.0 / (npts * (1.0 / rate))
    f = df * np.arange(0, npts // 2 + 1)
    big_f = (1.0 / num * new_rate) * np.arange(0, num // 2 + 1)
    y = np.interp(big_f, f, xr) + 1j * np.interp(big_f, f, xi)
    return np.fft.irfft(y, n=num) * (float(num) / float(npts))


def bandpass(data: Any, rate: float, fmin: float, fmax: float, corners: int, zerophase: bool) -> Any:
    fe = 0.5 * rate
    sos = iirfilter(corners, [fmin / fe, fmax / fe], btype="band", ftype="butter", output="sos")
    if zerophase:
        return sosfilt(sos, sosfilt(sos, data)[::-1])[::-1]
    return sosfilt(sos, data)


def sta_lta(data: Any, nsta: int, nlta: int) -> Any:
    sq = np.cumsum(np.square(data))
    sta = sq.copy()
    lta = sq.copy()
    sta[nsta:] = sta[nsta:] - sta[:-nsta]
    sta /= nsta
    lta[nlta:] = lta[nlta:] - lta[:-nlta]
    lta /= nlta
    sta[:nlta - 1] = 0
    lta[lta < np.finfo(0.0).tiny] = np.finfo(0.0).tiny
    return sta / lta


# ---------------------------------------------------------------- windows and lags
def slice_trace(tr: dict[str, Any], t1: int, t2: int) -> dict[str, Any]:
    """Trace.slice(t1, t2) with nearest-sample rounding."""
    rate, start, data = tr["rate"], tr["start"], tr["data"]
    delta = round_away(ns_diff(t1, start) * rate)
    if delta > 0:
        start = ns_add(start, delta * (1.0 / rate))
        data = data[delta:]
    d2 = round_away(ns_diff(t2, start) * rate) - len(data) + 1
    if d2 < 0:
        data = data[:len(data) + d2]
    return {"rate": rate, "start": start, "data": data}


def correlate(a: Any, b: Any, shift: int, method: str = "auto") -> Any:
    a = a - np.mean(a)
    b = b - np.mean(b)
    if method == "direct":
        dif = len(a) - len(b) - 2 * shift
        if dif > 0:
            b = np.concatenate([np.zeros(dif // 2), b, np.zeros(dif // 2)])
        else:
            a = np.concatenate([np.zeros(-dif // 2), a, np.zeros(-dif // 2)])
        cc = sp_correlate(a, b, mode="valid", method="direct")
    else:
        mid = (len(a) + len(b) - 1) // 2
        cc = sp_correlate(a, b, mode="full", method="direct")[mid - shift:mid + shift + (len(a) + len(b) - 1) % 2]
    norm = (np.sum(a ** 2) * np.sum(b ** 2)) ** 0.5
    return cc * 0.0 if norm <= np.finfo(float).eps else cc / norm


def lag_3pt(pa, ta, pb, tb, before, after, maxlag, rate):
    wa = slice_trace(ta, ns_add(ns_add(pa, -before), -(maxlag / 2.0)), ns_add(ns_add(pa, after), maxlag / 2.0))
    wb = slice_trace(tb, ns_add(ns_add(pb, -before), -(maxlag / 2.0)), ns_add(ns_add(pb, after), maxlag / 2.0))
    if len(wa["data"]) < 4 or len(wb["data"]) < 4:
        return None
    shift = int(maxlag * rate)
    cc = correlate(wa["data"], wb["data"], shift)
    k = int(np.argmax(np.abs(cc)))
    sign = 1 if cc[k] >= 0 else -1
    if k == 0 or k == len(cc) - 1:
        return sign, -(k - (len(cc) - 1) / 2) / rate, float(sign * cc[k])
    y0, y1, y2 = sign * cc[k - 1], sign * cc[k], sign * cc[k + 1]
    den = y0 - 2 * y1 + y2
    off = 0.5 * (y0 - y2) / den if den < 0 else 0.0
    lag = (k + off - (len(cc) - 1) / 2) / rate
    return sign, -lag, float(y1 - 0.25 * (y0 - y2) * off)


def sphere(lat1, lon1, lat2, lon2):
    p1, p2, dl = math.radians(lat1), math.radians(lat2), math.radians(lon2 - lon1)
    deg = math.degrees(math.acos(min(1.0, math.sin(p1) * math.sin(p2) + math.cos(p1) * math.cos(p2) * math.cos(dl))))
    az = math.degrees(math.atan2(math.sin(dl) * math.cos(p2), math.cos(p1) * math.sin(p2) - math.sin(p1) * math.cos(p2) * math.cos(dl)))
    return deg * 111.19, az % 360.0


def solve(scenario: dict) -> dict:
    p = scenario["parameters"]
    segs = read_mseed(scenario["inputs"]["waveforms"])
    meta = read_stationxml(scenario["inputs"]["stations"])
    codes = sorted({s["station"] for s in segs})
    t_ref = min(s["start"] for s in segs)
    rate = float(p["target_rate"])
    fmin, fmax = float(p["freqmin"]), float(p["freqmax"])
    traces, picks, peaks = {}, {}, {}
    gaps_total = 0
    for code in codes:
        tr, gaps = merge([s for s in segs if s["station"] == code])
        gaps_total += gaps
        fs = tr["rate"]
        x = sp_detrend(tr["data"].astype(np.float64), type="linear")
        x = obspy_taper(x, 0.05)
        x = remove_response(x, fs, meta[code]["stages"], (0.05, 0.1, 0.4 * fs, 0.45 * fs))
        x = resample(x, fs, rate)
        x = bandpass(x, rate, fmin, fmax, int(p["corners"]), bool(p["zerophase"]))
        peaks[code] = float(np.abs(x).max() * 1e6)
        cft = sta_lta(x, int(p["sta_s"] * rate), int(p["lta_s"] * rate))
        on = np.flatnonzero(cft >= float(p["trigger_ratio"]))
        picks[code] = ns_add(tr["start"], int(on[0]) * (1.0 / rate)) if len(on) else None
        traces[code] = {"rate": rate, "start": tr["start"], "data": x}
    before, after, maxlag = float(p["window_before_s"]), float(p["window_after_s"]), float(p["cc_maxlag_s"])
    pairs = []
    for i, a in enumerate(codes):
        for b in codes[i + 1:]:
            d, az = sphere(meta[a]["lat"], meta[a]["lon"], meta[b]["lat"], meta[b]["lon"])
            pr = {"a": a, "b": b, "d": d, "az": az, "pol": 0, "delay": 0.0, "cc": 0.0, "used": False}
            pairs.append(pr)
            if picks[a] is None or picks[b] is None:
                continue
            res = lag_3pt(picks[a], traces[a], picks[b], traces[b], before, after, maxlag, rate)
            if res is None:
                continue
            sign, corr, coeff = res
            pr.update(pol=sign, delay=ns_diff(ns_add(picks[b], corr), picks[a]), cc=coeff, used=coeff >= p["min_cc"])
    used = [pr for pr in pairs if pr["used"]]
    sx = sy = residual = 0.0
    if len(used) >= 3:
        g = np.array([[pr["d"] * math.sin(math.radians(pr["az"])), pr["d"] * math.cos(math.radians(pr["az"]))]
                      for pr in used])
        dt = np.array([pr["delay"] for pr in used])
        sol = np.linalg.lstsq(g, dt, rcond=None)[0]
        sx, sy = float(sol[0]), float(sol[1])
        residual = float(np.sqrt(np.mean((g @ sol - dt) ** 2)))
    smag = math.hypot(sx, sy)
    solved = len(used) >= 3 and smag > 0
    rev = []
    for c in codes:
        pol = [pr["pol"] for pr in pairs if c in (pr["a"], pr["b"]) and pr["pol"] != 0]
        if pol and 2 * sum(1 for v in pol if v < 0) > len(pol):
            rev.append(c)
    return {
        "gaps_filled": gaps_total,
        "peak_velocity_um_s": [peaks[c] for c in codes],
        "trigger_times_s": [ns_diff(picks[c], t_ref) if picks[c] is not None else -1.0 for c in codes],
        "pair_polarity": [pr["pol"] for pr in pairs],
        "pair_delay_s": [float(pr["delay"]) for pr in pairs],
        "pair_cc": [float(pr["cc"]) for pr in pairs],
        "reversed_stations": rev,
        "pairs_used": len(used),
        "back_azimuth_deg": float(math.degrees(math.atan2(-sx, -sy)) % 360.0) if solved else 0.0,
        "apparent_velocity_km_s": 1.0 / smag if solved else 0.0,
        "residual_ms": residual * 1000.0,
        "reliable": bool(solved and residual <= 0.5 / rate),
        "aperture_km": max(pr["d"] for pr in pairs),
    }


def main() -> None:
    print(json.dumps(solve(json.load(sys.stdin))))


if __name__ == "__main__":
    main()
