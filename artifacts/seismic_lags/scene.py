"""The synthetic network of `seismic_lags`: stations, instruments, a local event and the
defects of real telemetry, written as miniSEED records and StationXML with ObsPy.

Deterministic in the scenario's parameters (numpy's default_rng on `seed`). Only the
input writer imports ObsPy, lazily, so `recon list` never needs it.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any

NETWORK = "ZQ"
CODES = ["ALDR", "BRNK", "CASP", "DUNE", "ELKH", "FORD", "GRAN", "HALE", "IRON", "JASP", "KEEL", "LYNX", "MARL",
         "NORA", "OKEE", "PIKE", "QUAR", "ROSS", "SAGE", "TARN"]
REFERENCE = (2024, 5, 17, 3, 12, 0)          # the records start within a second after this instant
RECORD_S = 60.0                              # seconds of data per station (before defects)
EARTH_KM_PER_DEG = 111.195

# Instruments: (kind, channel, sampling rate, poles, zeros, input units, sensor gain, digitizer gain)
# Poles and zeros in rad/s (Laplace); gains in V per input unit and counts per V.
_BB_POLES = [complex(-0.037004, 0.037016), complex(-0.037004, -0.037016), complex(-251.33, 0.0),
             complex(-131.04, 467.29), complex(-131.04, -467.29)]
_SP_POLES = [complex(-4.4429, 4.4429), complex(-4.4429, -4.4429)]
_GEO_POLES = [complex(-19.792, 20.191), complex(-19.792, -20.191)]
INSTRUMENTS: dict[str, dict[str, Any]] = {
    "broadband": {"poles": _BB_POLES, "zeros": [0j, 0j], "units": "M/S", "sensor_gain": 1500.0,
                  "digitizer_gain": 4.0e5, "rates": {100.0: "HHZ", 40.0: "BHZ"}, "norm_hz": 1.0,
                  "sensor": "broadband seismometer, 120 s"},
    "short_period": {"poles": _SP_POLES, "zeros": [0j, 0j], "units": "M/S", "sensor_gain": 170.0,
                     "digitizer_gain": 4.0e5, "rates": {100.0: "EHZ", 50.0: "SHZ"}, "norm_hz": 5.0,
                     "sensor": "short-period seismometer, 1 Hz"},
    "geophone": {"poles": _GEO_POLES, "zeros": [0j, 0j], "units": "M/S", "sensor_gain": 28.8,
                 "digitizer_gain": 1.0e6, "rates": {200.0: "EPZ", 100.0: "EPZ"}, "norm_hz": 15.0,
                 "sensor": "geophone, 4.5 Hz"},
    "accelerometer": {"poles": [], "zeros": [], "units": "M/S**2", "sensor_gain": 1.02,
                      "digitizer_gain": 1.0e6, "rates": {200.0: "HNZ", 100.0: "HNZ"}, "norm_hz": 1.0,
                      "sensor": "force-balance accelerometer"},
}
KINDS = ["broadband", "short_period", "geophone", "accelerometer"]


def paz_a0(poles: list[complex], zeros: list[complex], f_hz: float) -> float:
    """Normalisation factor A0 that makes |A0 prod(s - z) / prod(s - p)| = 1 at f_hz."""
    s = 2j * math.pi * f_hz
    num = complex(1.0)
    for z in zeros:
        num *= s - z
    den = complex(1.0)
    for p in poles:
        den *= s - p
    return 1.0 / abs(num / den)


def velocity_response(inst: dict[str, Any], f: Any) -> Any:
    """Counts per (m/s) of ground velocity at frequencies f (Hz), complex."""
    import numpy as np

    s = 2j * np.pi * np.asarray(f, dtype=float)
    h = np.full(s.shape, paz_a0(inst["poles"], inst["zeros"], inst["norm_hz"]), dtype=complex)
    for z in inst["zeros"]:
        h = h * (s - z)
    for p in inst["poles"]:
        h = h / (s - p)
    h = h * inst["sensor_gain"] * inst["digitizer_gain"]
    if inst["units"] == "M/S**2":      # an accelerometer sees the derivative of velocity
        h = h * s
    return h


def _gabor(t: Any, f: float, phase: float) -> Any:
    import numpy as np

    sigma = 0.8 / f
    return np.exp(-(t / sigma) ** 2) * np.cos(2 * np.pi * f * t + phase)


def scene(params: dict[str, Any]) -> dict[str, Any]:
    """Everything about the scenario's network and event (numbers, no files)."""
    import numpy as np

    rng = np.random.default_rng(int(params["seed"]))
    n = int(params["stations"])
    aperture = float(params["aperture_km"])
    codes = sorted(str(c) for c in rng.choice(CODES, size=n, replace=False))
    lat0, lon0 = float(rng.uniform(-55.0, 62.0)), float(rng.uniform(-179.0, 179.0))
    xy: list[tuple[float, float]] = []
    for _ in range(5000):
        if len(xy) == n:
            break
        r = 0.5 * aperture * math.sqrt(float(rng.uniform(0.0, 1.0)))
        a = float(rng.uniform(0.0, 2 * math.pi))
        p = (r * math.cos(a), r * math.sin(a))
        if all(math.hypot(p[0] - q[0], p[1] - q[1]) > 0.22 * aperture for q in xy):
            xy.append(p)
    while len(xy) < n:   # pragma: no cover - the loop above always places them
        xy.append((0.5 * aperture * len(xy) / n, 0.0))
    kinds = [KINDS[int(k)] for k in rng.integers(0, 4, n)]
    kinds[int(rng.integers(0, n))] = "broadband"           # every network has one broadband station
    if len(set(kinds)) == 1:
        kinds[(kinds.index("broadband") + 1) % n] = "geophone"
    stations = []
    for i, code in enumerate(codes):
        inst = INSTRUMENTS[kinds[i]]
        rates = sorted(inst["rates"])
        rate = float(rates[int(rng.integers(0, len(rates)))])
        x, y = xy[i]
        lat = lat0 + y / EARTH_KM_PER_DEG
        lon = lon0 + x / (EARTH_KM_PER_DEG * math.cos(math.radians(lat0)))
        stations.append({
            "code": code, "kind": kinds[i], "rate": rate, "channel": inst["rates"][rate],
            "location": "00" if kinds[i] == "accelerometer" else "",
            "latitude": round(lat, 6), "longitude": round(lon, 6), "elevation": round(float(rng.uniform(80, 1600)), 1),
            "x_km": x, "y_km": y,
            "start_offset_us": int(rng.integers(0, 900_000)),
            "site_amp": float(math.exp(rng.normal(0.0, 0.25))),
            "dc": float(rng.uniform(-3000, 3000)), "drift": float(rng.uniform(-20, 20)),
        })
    # the event: a plane wave crossing the network
    baz = float(rng.uniform(0.0, 360.0))
    vel = float(rng.uniform(2.5, 7.5))
    prop = math.radians(baz + 180.0)
    slow = (math.sin(prop) / vel, math.cos(prop) / vel)       # s/km, (east, north)
    t_arrival = float(rng.uniform(24.0, 32.0))                  # at the network centre, s after REFERENCE
    fd = float(rng.uniform(1.5, 4.5))
    pgv = float(10 ** rng.uniform(-5.8, -4.6))                  # m/s
    coda = [(float(rng.uniform(0.05, 5.0)), float(rng.normal()), float(rng.uniform(0.6, 1.5)) * fd,
             float(rng.uniform(0, 2 * math.pi))) for _ in range(24)]
    sp = float(rng.uniform(3.0, 6.0))
    s_wave = (2.2 * float(rng.uniform(0.8, 1.2)), 0.6 * fd, float(rng.uniform(0, 2 * math.pi)))
    micro = [(float(rng.uniform(0.12, 0.3)), float(rng.uniform(0, 2 * math.pi))) for _ in range(3)]
    for st in stations:
        st["incoherent"] = [(float(rng.uniform(0.0, 5.0)), float(rng.normal()), float(rng.uniform(0.6, 1.5)) * fd,
                             float(rng.uniform(0, 2 * math.pi))) for _ in range(14)]
        st["noise_seed"] = int(rng.integers(0, 2**31 - 1))
        st["micro_amp"] = float(rng.uniform(1.0, 4.0))
    special = [int(i) for i in rng.permutation(n)]
    reversed_i = special[0] if params["reversed_sensor"] else None
    dead_i = special[1] if params["dead_channel"] else None
    # telemetry defects: gaps (missing samples) and re-sent (duplicated) records
    gaps = []
    for _ in range(int(params["gaps"])):
        i = int(rng.integers(0, n))
        gaps.append((i, float(rng.uniform(4.0, 54.0)), float(rng.uniform(0.2, 2.5))))
    duplicate = int(rng.integers(0, n)) if rng.uniform() < 0.5 else None
    return {"stations": stations, "baz": baz, "velocity": vel, "slowness": slow, "t_arrival": t_arrival,
            "fd": fd, "pgv": pgv, "coda": coda, "sp": sp, "s_wave": s_wave, "micro": micro,
            "reversed": reversed_i, "dead": dead_i, "gaps": gaps, "duplicate": duplicate,
            "lat0": lat0, "lon0": lon0}


def ground_velocity(sc: dict[str, Any], st: dict[str, Any], t: Any, snr_db: float) -> Any:
    """Vertical ground velocity (m/s) at the station at times t (s after REFERENCE)."""
    import numpy as np

    sx, sy = sc["slowness"]
    delay = sx * st["x_km"] + sy * st["y_km"]
    tp = sc["t_arrival"] + delay
    fd, amp = sc["fd"], sc["pgv"] * st["site_amp"]
    v = _gabor(t - tp, fd, 0.3)
    onset = np.clip((t - tp + 0.15) / 0.3, 0.0, 1.0)      # the scattered energy starts with the P wave
    for d, a, f, ph in sc["coda"]:
        v = v + 0.45 * a * math.exp(-d / 1.8) * _gabor(t - tp - d, f, ph) * onset
    for d, a, f, ph in st["incoherent"]:
        v = v + 0.12 * a * math.exp(-d / 1.8) * _gabor(t - tp - d, f, ph) * onset
    ts = sc["t_arrival"] + sc["sp"] + 1.7 * delay
    sa, sf, sph = sc["s_wave"]
    v = v + sa * _gabor(t - ts, sf, sph)
    v = v * amp
    rng = np.random.default_rng(st["noise_seed"])
    noise_rms = amp / 10 ** (snr_db / 20.0)
    white = rng.normal(0.0, 1.0, t.shape)
    # coloured background noise: a one-pole low-pass at ~8 Hz keeps it seismic
    alpha = math.exp(-2 * math.pi * 8.0 / st["rate"])
    from scipy.signal import lfilter

    col = lfilter([1.0 - alpha], [1.0, -alpha], white)
    col = col / max(float(np.std(col)), 1e-30) * noise_rms
    for f, ph in sc["micro"]:
        col = col + st["micro_amp"] * noise_rms * np.sin(2 * np.pi * f * t + ph + st["x_km"] * 0.01)
    return v + col


def station_counts(sc: dict[str, Any], i: int, snr_db: float) -> tuple[Any, int]:
    """(int32 counts of station i, start time offset in microseconds after REFERENCE)."""
    import numpy as np

    st = sc["stations"][i]
    fs = st["rate"]
    n = int(round(RECORD_S * fs))
    t0 = st["start_offset_us"] * 1e-6
    pad = int(round(10.0 * fs))
    t = t0 + (np.arange(n + 2 * pad) - pad) / fs
    inst = INSTRUMENTS[st["kind"]]
    rng = np.random.default_rng(st["noise_seed"] + 1)
    if sc["dead"] == i:
        counts = rng.normal(0.0, 35.0, n)     # the sensor is disconnected: digitizer noise only
    else:
        v = ground_velocity(sc, st, t, snr_db)
        nfft = 1 << int(math.ceil(math.log2(len(t))))
        spec = np.fft.rfft(v, nfft)
        f = np.fft.rfftfreq(nfft, 1.0 / fs)
        counts = np.fft.irfft(spec * velocity_response(inst, f), nfft)[pad:pad + n]
        counts = counts + rng.normal(0.0, 1.5, n)
        if sc["reversed"] == i:
            counts = -counts
    counts = counts + st["dc"] + st["drift"] * np.arange(n) / fs / RECORD_S
    return np.rint(counts).astype(np.int32), st["start_offset_us"]


def write_inputs(params: dict[str, Any], directory: Path) -> None:
    """waveforms.mseed (all stations, INT32, 512-byte records) and stations.xml (StationXML 1.2)."""
    import numpy as np
    from obspy import Stream, Trace, UTCDateTime
    from obspy.core.inventory import (Channel, CoefficientsTypeResponseStage, InstrumentSensitivity, Inventory,
                                      Network, PolesZerosResponseStage, Response, Site, Station)
    from obspy.core.inventory.util import Equipment

    sc = scene(params)
    ref = UTCDateTime(*REFERENCE)
    traces = []
    for i, st in enumerate(sc["stations"]):
        data, off_us = station_counts(sc, i, float(params["snr_db"]))
        fs = st["rate"]
        start = ref + off_us * 1e-6
        header = {"network": NETWORK, "station": st["code"], "location": st["location"], "channel": st["channel"],
                  "sampling_rate": fs}
        cuts = sorted((int(round(g_t * fs)), max(1, int(round(g_len * fs)))) for g_i, g_t, g_len in sc["gaps"]
                      if g_i == i)
        pieces: list[tuple[int, int]] = []
        pos = 0
        for a, m in cuts:
            a = max(a, pos + 1)
            b = min(a + m, len(data) - 1)
            if a >= b:
                continue
            pieces.append((pos, a))
            pos = b
        pieces.append((pos, len(data)))
        if sc["duplicate"] == i:
            # a re-sent telemetry packet: a stretch of samples arrives twice
            lo, hi = pieces[0]
            a = lo + (hi - lo) // 3
            pieces.append((a, min(hi, a + int(round(2.0 * fs)))))
        for lo, hi in pieces:
            traces.append(Trace(np.ascontiguousarray(data[lo:hi]), header=dict(header, starttime=start + lo / fs)))
    Stream(traces).write(str(Path(directory) / "waveforms.mseed"), format="MSEED", encoding="INT32", reclen=512,
                         byteorder=">")

    stations = []
    for st in sc["stations"]:
        inst = INSTRUMENTS[st["kind"]]
        a0 = paz_a0(inst["poles"], inst["zeros"], inst["norm_hz"])
        stage1 = PolesZerosResponseStage(
            1, inst["sensor_gain"], inst["norm_hz"], inst["units"], "V", "LAPLACE (RADIANS/SECOND)",
            inst["norm_hz"], list(inst["zeros"]), list(inst["poles"]), normalization_factor=a0)
        stage2 = CoefficientsTypeResponseStage(
            2, inst["digitizer_gain"], inst["norm_hz"], "V", "COUNTS", "DIGITAL", numerator=[], denominator=[],
            decimation_input_sample_rate=st["rate"], decimation_factor=1, decimation_offset=0, decimation_delay=0.0,
            decimation_correction=0.0)
        sens = InstrumentSensitivity(inst["sensor_gain"] * inst["digitizer_gain"], inst["norm_hz"], inst["units"],
                                     "COUNTS")
        cha = Channel(st["channel"], st["location"], st["latitude"], st["longitude"], st["elevation"], 0.0,
                      azimuth=0.0, dip=-90.0, sample_rate=st["rate"],
                      sensor=Equipment(description=inst["sensor"]),
                      response=Response(instrument_sensitivity=sens, response_stages=[stage1, stage2]),
                      start_date=UTCDateTime(2023, 1, 1))
        stations.append(Station(st["code"], st["latitude"], st["longitude"], st["elevation"], channels=[cha],
                                site=Site(name=f"{st['code']} temporary site"), start_date=UTCDateTime(2023, 1, 1)))
    inv = Inventory(networks=[Network(NETWORK, stations=stations, description="temporary aftershock network")],
                    source="recon seismic_lags", sender="recon", created=UTCDateTime(2024, 5, 18),
                    module="recon seismic_lags", module_uri="https://example.org/recon")
    inv.write(str(Path(directory) / "stations.xml"), format="STATIONXML")
