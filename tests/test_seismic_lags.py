"""Tests of the built-in `seismic_lags` oracle with real ObsPy / numpy / scipy (no mocks)."""
from __future__ import annotations

import itertools
import json
import re
import math
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

obspy = pytest.importorskip("obspy")

import numpy as np  # noqa: E402
from scipy import signal  # noqa: E402

from recon import Registry  # noqa: E402
from recon.artifacts.seismic_lags import reference as ref  # noqa: E402
from recon.artifacts.seismic_lags import scene, seismic_lags  # noqa: E402

FIELDS = {"gaps_filled", "peak_velocity_um_s", "trigger_times_s", "pair_polarity", "pair_delay_s", "pair_cc",
          "reversed_stations", "pairs_used", "back_azimuth_deg", "apparent_velocity_km_s", "residual_ms", "reliable",
          "aperture_km"}


def params(**kw: Any) -> dict[str, Any]:
    base = {"stations": 6, "aperture_km": 2.0, "snr_db": 24.0, "gaps": 2, "reversed_sensor": True,
            "dead_channel": False, "target_rate": 100, "freqmin": 1.0, "freqmax": 8.0, "corners": 4,
            "zerophase": True, "sta_s": 0.5, "lta_s": 8.0, "trigger_ratio": 3.5, "cc_maxlag_s": 0.3,
            "window_before_s": 0.2, "window_after_s": 1.0, "min_cc": 0.6, "seed": 4}
    base.update(kw)
    return base


def run(p: dict[str, Any], root: Path) -> tuple[dict[str, Any], Path, dict[str, Path]]:
    inputs = seismic_lags.make_inputs(p, root / "inputs")
    return seismic_lags(p, root / "evidence", inputs), root / "evidence", inputs


def scenario(p: dict[str, Any], inputs: dict[str, Path]) -> dict[str, Any]:
    return {"task": "seismic_lags", "id": "public_1", "parameters": p, "inputs": {k: str(v) for k, v in inputs.items()}}


def mismatches(got: dict[str, Any], want: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    return [(f, got[f], want[f]) for f, o in seismic_lags.outputs.items() if not o.compare(got[f], want[f])]


def check_outputs(out: dict[str, Any], p: dict[str, Any]) -> None:
    assert set(out) == FIELDS
    json.dumps(out, allow_nan=False)
    n = p["stations"]
    npairs = n * (n - 1) // 2
    assert len(out["peak_velocity_um_s"]) == len(out["trigger_times_s"]) == n
    assert len(out["pair_polarity"]) == len(out["pair_delay_s"]) == len(out["pair_cc"]) == npairs
    assert set(out["pair_polarity"]) <= {-1, 0, 1}
    assert 0 <= out["pairs_used"] <= sum(1 for v in out["pair_polarity"] if v != 0)
    assert 0.0 <= out["back_azimuth_deg"] < 360.0 and out["apparent_velocity_km_s"] >= 0.0
    assert type(out["reliable"]) is bool and type(out["gaps_filled"]) is int
    assert 0.0 < out["aperture_km"] <= p["aperture_km"] + 1e-6


@pytest.fixture(scope="module")
def typical(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], dict[str, Any], Path, dict[str, Path]]:
    p = params()
    out, ev, inputs = run(p, tmp_path_factory.mktemp("typical"))
    return p, out, ev, inputs


# --------------------------------------------------------------------------- declaration
def test_declaration_keeps_the_tool_on_the_verifier_side() -> None:
    assert seismic_lags.requires == ("obspy",) and "obspy" not in seismic_lags.toolkit
    assert set(seismic_lags.toolkit) == {"numpy", "scipy"} and set(seismic_lags.outputs) == FIELDS
    assert seismic_lags.evidence_level == "summary"
    assert seismic_lags.evidence_reveals == {"summary.json": "summary", "velocity.csv": "trace"}
    assert set(seismic_lags.published_evidence()) == {"summary.json"}
    for word in ("remove_response", "pre_filt=(0.25 freqmin", "window=\"hann\"", "classic_sta_lta",
                 "xcorr_pick_correction", "numpy.linspace(-cc_maxlag_s", "exactly 3", "Vincenty", "0.5 / target_rate",
                 "strictly more than half", "Tolerances, and why"):
        assert word in " ".join(seismic_lags.recipe.split()), word
    public = seismic_lags.public()
    what = " ".join([public["description"], *(a["doc"] for a in public["axes"].values()),
                     *(o["doc"] for o in public["outputs"].values()), *public["input_docs"].values(),
                     *public["evidence"].values()]).lower()
    for word in ("hann", "pre_filt", "pre-filter", "water level", "classic", "recursive", "parabola", "vincenty",
                 "concave", "linspace", "0.05", "half a sample", "majority"):
        assert not re.search(r"\b" + re.escape(word), what), word


# --------------------------------------------------------------------------------- inputs
def test_inputs_are_int32_minised_and_stationxml(tmp_path: Path) -> None:
    p = params(gaps=3, seed=11)
    files = seismic_lags.make_inputs(p, tmp_path)
    assert set(files) == {"waveforms", "stations"}
    raw = files["waveforms"].read_bytes()
    assert len(raw) % 512 == 0 and len(raw) < 1_000_000
    for pos in range(0, len(raw), 512):
        blk, found = struct.unpack(">H", raw[pos + 46:pos + 48])[0], {}
        while blk:
            kind, nxt = struct.unpack(">HH", raw[pos + blk:pos + blk + 4])
            found[kind] = raw[pos + blk + 4:pos + blk + 7]
            blk = nxt
        assert found[1000] == bytes([3, 1, 9])          # INT32, big-endian, 2**9 = 512-byte records
    st = obspy.read(str(files["waveforms"]))
    assert {tr.stats.network for tr in st} == {"ZQ"} and all(tr.data.dtype == np.int32 for tr in st)
    assert len({tr.stats.station for tr in st}) == p["stations"]
    assert len([g for g in st.get_gaps() if g[6] > 0]) == sum(1 for g in scene.scene(p)["gaps"]) > 0
    inv = obspy.read_inventory(str(files["stations"]))
    assert len(inv[0]) == p["stations"]
    rates = {tr.stats.sampling_rate for tr in st}
    assert len(rates) >= 2 and rates <= {40.0, 50.0, 100.0, 200.0}
    # the metadata is right: the StationXML response is the one the counts were made with
    for tr in st.select(station=inv[0][0].code)[:1]:
        resp = inv[0][0][0].response
        got, f = resp.get_evalresp_response(tr.stats.delta, 1024, output="VEL")
        kind = scene.scene(p)["stations"][0]["kind"]
        want = scene.velocity_response(scene.INSTRUMENTS[kind], f)
        assert np.allclose(got[1:], want[1:], rtol=1e-9)
    # ... the same files for the same parameters, byte for byte
    again = seismic_lags.make_inputs(p, tmp_path / "again")
    assert again["waveforms"].read_bytes() == raw and again["stations"].read_bytes() == files["stations"].read_bytes()


def test_the_defects_show_where_the_axes_ask_for_them(tmp_path: Path) -> None:
    p = params(stations=5, reversed_sensor=True, dead_channel=True, gaps=0, seed=23)
    out, _, _ = run(p, tmp_path)
    sc = scene.scene(p)
    codes = [s["code"] for s in sc["stations"]]
    assert out["gaps_filled"] == 0
    dead = codes[sc["dead"]]
    assert out["trigger_times_s"][codes.index(dead)] == -1.0                     # no ground motion, no trigger
    assert out["peak_velocity_um_s"][codes.index(dead)] < 0.2 * min(v for c, v in zip(codes, out["peak_velocity_um_s"]) if c != dead)
    assert out["reversed_stations"] == [codes[sc["reversed"]]]
    # the picks sit on the arrival, and the plane wave is the one the scene sent
    live = [t for t in out["trigger_times_s"] if t >= 0]
    assert all(abs(t - sc["t_arrival"]) < 1.5 for t in live)
    assert out["reliable"] and abs((out["back_azimuth_deg"] - sc["baz"] + 180) % 360 - 180) < 5.0
    assert abs(out["apparent_velocity_km_s"] / sc["velocity"] - 1) < 0.1


# ------------------------------------------------------------------------------- evidence
def test_evidence_matches_outputs(typical: Any) -> None:
    p, out, ev, _ = typical
    check_outputs(out, p)
    assert {f.name for f in ev.iterdir()} == {"summary.json", "velocity.csv"}
    s = json.loads((ev / "summary.json").read_text(encoding="utf-8"))
    assert [st["station"] for st in s["stations"]] == sorted(st["station"] for st in s["stations"])
    assert sum(st["gaps"] for st in s["stations"]) == out["gaps_filled"] == 2
    for st, peak, trig in zip(s["stations"], out["peak_velocity_um_s"], out["trigger_times_s"]):
        assert st["peak_filtered_um_s"] == pytest.approx(peak, rel=1e-3)
        assert (st["trigger_s"] is None) == (trig == -1.0)
        assert st["samples_resampled"] == int(st["samples_merged"] * p["target_rate"] / st["sampling_rate_hz"])
    assert [pr["polarity"] for pr in s["pairs"]] == out["pair_polarity"]
    assert sum(pr["used"] for pr in s["pairs"]) == out["pairs_used"] == s["plane_wave"]["pairs_used"]
    assert max(pr["distance_km"] for pr in s["pairs"]) == pytest.approx(out["aperture_km"], rel=1e-3)
    sx, sy = s["plane_wave"]["slowness_east_s_per_km"], s["plane_wave"]["slowness_north_s_per_km"]
    assert 1 / math.hypot(sx, sy) == pytest.approx(out["apparent_velocity_km_s"], rel=1e-3)
    assert math.degrees(math.atan2(-sx, -sy)) % 360 == pytest.approx(out["back_azimuth_deg"], abs=0.1)
    rows = (ev / "velocity.csv").read_text(encoding="utf-8").splitlines()
    assert rows[0] == "station,sample,velocity_um_s" and len(rows) > 1000
    # every published measurement has at most 4 significant digits
    numbers = [v for st in s["stations"] for v in st.values() if isinstance(v, float)]
    numbers += [float(r.split(",")[2]) for r in rows[1:]]
    assert all(float(f"{v:.4g}") == v for v in numbers)


# --------------------------------------------------------------------- reference program
def test_reference_program_matches_oracle(typical: Any, tmp_path: Path) -> None:
    cases = [typical[:1] + typical[3:]]
    for k, p in enumerate([params(target_rate=50, zerophase=False, corners=2, dead_channel=True, seed=8),
                           params(target_rate=80, stations=4, cc_maxlag_s=0.55, gaps=3, seed=31)]):
        _, _, inputs = run(p, tmp_path / f"c{k}")
        cases.append((p, inputs))
    for p, inputs in cases:
        want = seismic_lags(p, tmp_path / "ev", inputs)
        proc = subprocess.run([sys.executable, str(seismic_lags.reference)], input=json.dumps(scenario(p, inputs)),
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert mismatches(json.loads(proc.stdout), want) == []


def _corners() -> list[dict[str, Any]]:
    """Eight corners of seven processing axes, every pair of them in all four edge combinations."""
    names = ["stations", "target_rate", "corners", "zerophase", "cc_maxlag_s", "window_before_s", "min_cc"]
    rows = []
    for a, b, c in itertools.product((0, 1), repeat=3):
        levels = (a, b, c, a ^ b, a ^ c, b ^ c, a ^ b ^ c)
        rows.append({n: seismic_lags.axes[n].edges()[lv] for n, lv in zip(names, levels)})
    return rows


def test_never_raises_at_axis_corners(tmp_path: Path) -> None:
    others = ["aperture_km", "snr_db", "gaps", "freqmin", "freqmax", "sta_s", "lta_s", "trigger_ratio",
              "window_after_s"]
    for i, corner in enumerate(_corners()):
        edge = {n: seismic_lags.axes[n].edges()[i % 2] for n in others}
        p = params(**corner, **edge, reversed_sensor=bool(i % 2), dead_channel=i % 4 < 2,
                   seed=(0, 2**31 - 1)[i % 2])
        out, _, _ = run(p, tmp_path / f"k{i}")
        check_outputs(out, p)


# ----------------------------------------------------- tolerances: independent vs wrong
def _patched(sc: dict[str, Any], **swap: Any) -> dict[str, Any]:
    old = {k: getattr(ref, k) for k in swap}
    try:
        for k, v in swap.items():
            setattr(ref, k, v)
        return ref.solve(sc)
    finally:
        for k, v in old.items():
            setattr(ref, k, v)


def _sosfiltfilt(data: Any, rate: float, fmin: float, fmax: float, corners: int, zerophase: bool) -> Any:
    sos = signal.butter(corners, [fmin, fmax], btype="band", fs=rate, output="sos")
    return signal.sosfiltfilt(sos, data) if zerophase else signal.sosfilt(sos, data)


def _plain_resample(data: Any, rate: float, new_rate: float) -> Any:
    return signal.resample(data, int(len(data) * new_rate / rate))


def _sensitivity(data: Any, rate: float, stages: Any, pre_filt: Any) -> Any:
    return (data - data.mean()) / np.prod([s["gain"] for s in stages])


def test_independent_and_wrong_implementations(typical: Any) -> None:
    p, out, _, inputs = typical
    sc = scenario(p, inputs)
    # zero-phase filtering with scipy's padded filtfilt changes nothing the task reports
    assert mismatches(_patched(sc, bandpass=_sosfiltfilt), out) == []
    # ... while skipping ObsPy's spectral Hann window, or the response, does
    wrong = {f for f, _, _ in mismatches(_patched(sc, resample=_plain_resample), out)}
    assert {"peak_velocity_um_s", "pair_delay_s", "pair_cc"} <= wrong
    wrong = {f for f, _, _ in mismatches(_patched(sc, remove_response=_sensitivity), out)}
    assert {"peak_velocity_um_s", "pair_delay_s", "back_azimuth_deg"} <= wrong


# ------------------------------------------------------------------------ built task
@pytest.fixture(scope="module")
def small_task(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from recon.build import build_task

    return build_task(Registry.default(entry_points=False), "seismic_lags", tmp_path_factory.mktemp("seis_task"),
                      n_public=3, n_hidden=2, probes=1, workers=1, select="random").path


def test_small_build_grades_reference_full_and_baselines_partial(small_task: Path) -> None:
    from recon.audit import grade_baselines
    from recon.grader import grade

    g = grade(small_task, small_task / "solution", runtime="local", nonce="test", workers=1)
    assert g["reward"] == 1.0, g["rung"]
    rows = grade_baselines(small_task, runtime="local")
    assert {r.name for r in rows} == {"scipy_textbook", "obspy_recall"}
    for r in rows:
        assert 0.5 < r.reward < 1.0, (r.name, r.reward, r.detail)
