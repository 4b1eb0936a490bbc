"""Tests of the built-in `climate_seasonal` oracle with real xarray / cftime / numpy / scipy (no mocks)."""
from __future__ import annotations

import itertools
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

xr = pytest.importorskip("xarray")
cftime = pytest.importorskip("cftime")

import numpy as np  # noqa: E402
from scipy.io import netcdf_file  # noqa: E402

from recon import Registry  # noqa: E402
from recon.artifacts.climate_seasonal import climate_seasonal, scene  # noqa: E402
from recon.artifacts.climate_seasonal import reference as ref  # noqa: E402

FIELDS = {"masked_values", "region_cells", "seasonal_means_c", "warmest_season", "annual_cycle_range_c",
          "anomaly_std_c", "max_anomaly_c", "max_anomaly_month", "trend_c_per_decade", "coarse_valid_cells",
          "coarse_seasonal_means_c", "coarse_trend_c_per_decade", "coarse_max_seasonal_range_c", "warmest_djf",
          "djf_range_c", "warm_episodes", "warm_episode_months"}


def params(**kw: Any) -> dict[str, Any]:
    base = {"calendar": "noleap", "start_year": 1979, "years": 10, "resolution": 4.0, "coarse_resolution": 10.0,
            "region": "nino34", "lat_descending": True, "lon_convention": "-180_180", "missing_fraction": 0.05,
            "bad_values": True, "min_coverage": 0.5, "seed": 7}
    base.update(kw)
    return base


def run(p: dict[str, Any], root: Path) -> tuple[dict[str, Any], Path, dict[str, Path]]:
    inputs = climate_seasonal.make_inputs(p, root / "inputs")
    return climate_seasonal(p, root / "evidence", inputs), root / "evidence", inputs


def scenario(p: dict[str, Any], inputs: dict[str, Path]) -> dict[str, Any]:
    return {"task": "climate_seasonal", "id": "public_1", "parameters": p,
            "inputs": {k: str(v) for k, v in inputs.items()}}


def mismatches(got: dict[str, Any], want: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    return [(f, got[f], want[f]) for f, o in climate_seasonal.outputs.items() if not o.compare(got[f], want[f])]


def check_outputs(out: dict[str, Any]) -> None:
    assert set(out) == FIELDS
    json.dumps(out, allow_nan=False)
    assert len(out["seasonal_means_c"]) == len(out["coarse_seasonal_means_c"]) == 4
    assert out["warmest_season"] in ("DJF", "MAM", "JJA", "SON")
    assert out["warmest_season"] == ["DJF", "MAM", "JJA", "SON"][int(np.argmax(out["seasonal_means_c"]))]
    assert all(15.0 < v < 32.0 for v in out["seasonal_means_c"] + out["coarse_seasonal_means_c"])
    assert out["anomaly_std_c"] > 0 and out["max_anomaly_c"] > 0 and out["region_cells"] > 0
    assert out["coarse_valid_cells"] > 0 and out["annual_cycle_range_c"] > 0
    assert out["warmest_djf"].endswith("-12") and out["djf_range_c"] > 0
    assert out["warm_episode_months"] >= 5 * out["warm_episodes"] >= 0


@pytest.fixture(scope="module")
def typical(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], dict[str, Any], Path, dict[str, Path]]:
    p = params()
    out, ev, inputs = run(p, tmp_path_factory.mktemp("typical"))
    return p, out, ev, inputs


# --------------------------------------------------------------------------- declaration
def test_declaration_keeps_the_tools_on_the_verifier_side() -> None:
    assert set(climate_seasonal.requires) == {"xarray", "cftime", "pandas"}
    assert set(climate_seasonal.toolkit) == {"numpy", "scipy"} and set(climate_seasonal.outputs) == FIELDS
    assert climate_seasonal.evidence_level == "summary"
    assert set(climate_seasonal.published_evidence()) == {"summary.json", "regional_series.csv"}
    assert climate_seasonal.evidence_reveals["coarse_seasonal.csv"] == "trace"
    for word in ("valid_range", "SAME year", "NaN-aware denominator", "cos(deg2rad(lat))", "ddof 0",
                 "polyfit", "sin(min(N_J, n_j))", "FULL area", 'resample(time="QS-DEC")', "index >= 0.5 K",
                 "at least 5", "Tolerances, and why"):
        assert word in " ".join(climate_seasonal.recipe.split()), word
    public = climate_seasonal.public()
    what = " ".join([public["description"], *(a["doc"] for a in public["axes"].values()),
                     *(o["doc"] for o in public["outputs"].values()), *public["input_docs"].values(),
                     *public["evidence"].values()]).lower()
    for word in ("cos", "sine", "sin(", "ddof", "population", "same year", "previous december", "renormal",
                 "documentation", "polyfit", "inclusive", "0.5", "five", "running", "oni", "partial"):
        assert not re.search(r"\b" + re.escape(word), what), word


# --------------------------------------------------------------------------------- inputs
@pytest.mark.filterwarnings("ignore:variable 'tos' has multiple fill values")
@pytest.mark.parametrize("calendar,descending,convention", [("360_day", False, "0_360"), ("standard", True, "-180_180"),
                                                            ("all_leap", True, "0_360")])
def test_inputs_are_packed_netcdf3_in_the_asked_layout(tmp_path: Path, calendar: str, descending: bool,
                                                         convention: str) -> None:
    p = params(calendar=calendar, lat_descending=descending, lon_convention=convention, years=8, seed=3)
    files = climate_seasonal.make_inputs(p, tmp_path)
    raw = files["sst"].read_bytes()
    assert raw[:4] == b"CDF\x01" and len(raw) < 1_000_000
    nc = netcdf_file(str(files["sst"]), "r", mmap=False, maskandscale=False)
    v = nc.variables["tos"]
    assert v.data.dtype == np.dtype(">i2") and v.scale_factor == 0.01 and v.add_offset == 290.0
    assert int(v._FillValue) == -32767 and int(v.missing_value) == -32768
    assert list(v.valid_range) == [-1885, 2015]
    lat = np.array(nc.variables["lat"].data)
    lon = np.array(nc.variables["lon"].data)
    assert (np.diff(lat) < 0).all() == descending and (np.diff(lat) > 0).all() != descending
    assert (lon.min() < 0) == (convention == "-180_180") and (np.diff(lon) > 0).all()
    t = nc.variables["time"]
    assert t.calendar.decode() == calendar and t.units.decode() == "days since 1979-01-01 00:00:00"
    assert len(t.data) == 12 * p["years"]
    nc.close()
    # xarray decodes it as CF says: cftime dates in the calendar, both fill flags masked
    ds = xr.open_dataset(files["sst"], engine="scipy", decode_times=xr.coders.CFDatetimeCoder(use_cftime=True))
    assert ds.time.dt.days_in_month.values[1] == {"360_day": 30, "standard": 28, "all_leap": 29}[calendar]
    assert ds.tos.dtype == np.float64 and float(ds.tos.min()) > -40.0
    ds.close()
    again = climate_seasonal.make_inputs(p, tmp_path / "again")
    assert again["sst"].read_bytes() == raw


def test_glitches_and_gaps_are_where_the_axes_ask(tmp_path: Path) -> None:
    clean = scene.field(params(bad_values=False, missing_fraction=0.0, seed=5))
    dirty = scene.field(params(bad_values=True, missing_fraction=0.1, seed=5))
    lo, hi = -1885, 2015
    assert not ((clean["packed"] > hi) & (clean["packed"] != scene.FILL)).any()
    assert ((dirty["packed"] > hi) | ((dirty["packed"] < lo) & (dirty["packed"] > scene.MISSING)
                                      & (dirty["packed"] != scene.FILL))).sum() >= 8
    assert (clean["packed"] == scene.MISSING).sum() == 0
    assert 0.07 < (dirty["packed"] == scene.MISSING).mean() < 0.12
    assert clean["land"].any() and (clean["packed"][:, clean["land"]] == scene.FILL).all()


# ------------------------------------------------------------------------------- evidence
def test_evidence_matches_outputs(typical: Any) -> None:
    p, out, ev, _ = typical
    check_outputs(out)
    assert {f.name for f in ev.iterdir()} == {"summary.json", "regional_series.csv", "coarse_seasonal.csv"}
    s = json.loads((ev / "summary.json").read_text(encoding="utf-8"))
    assert s["decoding"]["masked_total"] == out["masked_values"] >= s["decoding"]["flagged_fill_or_missing"]
    assert s["time"]["days_in_month_first_year"] == [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
    assert s["region"]["cells"] == out["region_cells"] == len(s["region"]["lat_centres"]) * len(
        s["region"]["lon_centres"])
    assert all(-5 <= la <= 5 for la in s["region"]["lat_centres"]) and all(
        190 <= lo <= 240 for lo in s["region"]["lon_centres"])
    clim = s["regional"]["monthly_climatology_c"]
    assert max(clim) - min(clim) == pytest.approx(out["annual_cycle_range_c"], abs=0.011)
    seas = s["regional"]["seasonal_climatology_c"]
    assert [seas[k] for k in ("DJF", "MAM", "JJA", "SON")] == pytest.approx(out["seasonal_means_c"], abs=0.006)
    assert s["coarse"]["valid_cells"] == out["coarse_valid_cells"]
    djf = s["regional"]["djf_seasons_c"]
    assert list(djf)[0] == f"{p['start_year'] - 1}-12" and list(djf)[-1] == f"{p['start_year'] + p['years'] - 1}-12"
    assert max(djf, key=djf.get) == out["warmest_djf"]
    assert max(djf.values()) - min(djf.values()) == pytest.approx(out["djf_range_c"], abs=0.011)
    episodes = s["regional"]["warm_episodes"]
    assert len(episodes) == out["warm_episodes"] and sum(e["months"] for e in episodes) == out["warm_episode_months"]
    rows = (ev / "regional_series.csv").read_text(encoding="utf-8").splitlines()
    assert rows[0] == "month,days,regional_mean_c,regional_anomaly_c" and len(rows) == 1 + 12 * p["years"]
    anomalies = [float(r.split(",")[3]) for r in rows[1:] if r.split(",")[3]]
    assert max(anomalies) == pytest.approx(out["max_anomaly_c"], rel=1e-3)
    best = max((r for r in rows[1:] if r.split(",")[3]), key=lambda r: float(r.split(",")[3]))
    assert best.split(",")[0] == out["max_anomaly_month"]
    assert all(float(f"{v:.4g}") == v for v in anomalies)


# --------------------------------------------------------------------- reference program
def test_reference_program_matches_oracle(typical: Any, tmp_path: Path) -> None:
    cases = [(typical[0], typical[3])]
    for k, p in enumerate([params(calendar="360_day", resolution=2.5, coarse_resolution=7.5, region="south_pacific",
                                  lat_descending=False, lon_convention="0_360", seed=12),
                           params(calendar="standard", start_year=1996, resolution=5.0, coarse_resolution=6.0,
                                  region="warm_pool", bad_values=False, missing_fraction=0.15, seed=99)]):
        _, _, inputs = run(p, tmp_path / f"c{k}")
        cases.append((p, inputs))
    for p, inputs in cases:
        want = climate_seasonal(p, tmp_path / "ev", inputs)
        proc = subprocess.run([sys.executable, str(climate_seasonal.reference)], input=json.dumps(scenario(p, inputs)),
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert mismatches(json.loads(proc.stdout), want) == []


def test_never_raises_at_axis_corners(tmp_path: Path) -> None:
    names = ["resolution", "coarse_resolution", "years", "lat_descending", "missing_fraction", "min_coverage",
             "bad_values"]
    regions = climate_seasonal.axes["region"].edges()
    calendars = climate_seasonal.axes["calendar"].edges()
    for i, (a, b, c) in enumerate(itertools.product((0, 1), repeat=3)):
        levels = (a, b, c, a ^ b, a ^ c, b ^ c, a ^ b ^ c)
        corner = {n: climate_seasonal.axes[n].edges()[lv] for n, lv in zip(names, levels)}
        p = params(**corner, region=regions[i % len(regions)], calendar=calendars[i % len(calendars)],
                   lon_convention=("0_360", "-180_180")[i % 2], start_year=(1951, 2001)[i % 2],
                   seed=(0, 2**31 - 1)[i % 2])
        out, _, _ = run(p, tmp_path / f"k{i}")
        check_outputs(out)


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


def _seasonal_by_loops(x: Any, months: Any, days: Any) -> Any:
    """The day-weighted, NaN-aware seasonal climatology written independently: explicit sums per cell."""
    season = np.array([ref.SEASON_OF_MONTH[m - 1] for m in months])
    out = np.full((4,) + x.shape[1:], np.nan)
    for s in range(4):
        idx = np.flatnonzero(season == s)
        total = float(sum(days[idx]))
        for i in range(x.shape[1]):
            for j in range(x.shape[2]):
                num = den = 0.0
                for t in idx:
                    if not np.isnan(x[t, i, j]):
                        num += x[t, i, j] * days[t] / total
                        den += days[t] / total
                if den > 0:
                    out[s, i, j] = num / den
    return out


def _equal_weights(x: Any, months: Any, days: Any) -> Any:
    return _ORIG_SEASONAL(x, months, np.ones_like(days))


def _previous_december(x: Any, months: Any, days: Any) -> Any:
    keep = np.ones(len(months), bool)
    keep[:2] = False
    keep[-1] = False
    return _ORIG_SEASONAL(x[keep], months[keep], days[keep])


def _degree_regrid(field: Any, lat_e: Any, lon_e: Any, step: float, min_cover: float) -> Any:
    dlat, dlon = ref.coarse_edges(lat_e[0], lat_e[-1], step), ref.coarse_edges(lon_e[0], lon_e[-1], step)
    wlat, wlon = ref.overlap(dlat, lat_e), ref.overlap(dlon, lon_e)
    ok = ~np.isnan(field)
    num = np.einsum("tij,ai,bj->tab", np.where(ok, field, 0.0), wlat, wlon)
    cov = np.einsum("tij,ai,bj->tab", ok * 1.0, wlat, wlon)
    area = np.diff(dlat)[:, None] * np.diff(dlon)[None, :]
    with np.errstate(all="ignore"):
        return np.where(cov >= min_cover * area, num / cov, np.nan), 0.5 * (dlat[1:] + dlat[:-1]), 0.5 * (
            dlon[1:] + dlon[:-1])


_ORIG_SEASONAL = ref.seasonal_climatology


def test_independent_and_wrong_implementations(tmp_path: Path) -> None:
    p = params(calendar="standard", resolution=5.0, years=8, seed=17)
    out, _, inputs = run(p, tmp_path)
    sc = scenario(p, inputs)
    assert mismatches(_patched(sc, seasonal_climatology=_seasonal_by_loops), out) == []
    for swap, must in (({"seasonal_climatology": _equal_weights}, {"seasonal_means_c", "coarse_seasonal_means_c"}),
                       ({"seasonal_climatology": _previous_december}, {"seasonal_means_c"}),
                       ({"regrid": _degree_regrid}, {"coarse_seasonal_means_c", "coarse_trend_c_per_decade"})):
        failed = {f for f, _, _ in mismatches(_patched(sc, **swap), out)}
        assert must <= failed, (swap, failed)


# ------------------------------------------------------------------------ built task
@pytest.fixture(scope="module")
def small_task(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from recon.build import build_task

    return build_task(Registry.default(entry_points=False), "climate_seasonal", tmp_path_factory.mktemp("clim_task"),
                      n_public=3, n_hidden=2, probes=1, workers=1, select="random").path


def test_small_build_grades_reference_full_and_baselines_partial(small_task: Path) -> None:
    from recon.audit import grade_baselines
    from recon.grader import grade

    g = grade(small_task, small_task / "solution", runtime="local", nonce="test", workers=1)
    assert g["reward"] == 1.0, g["rung"]
    rows = grade_baselines(small_task, runtime="local")
    assert {r.name for r in rows} == {"numpy_textbook", "xarray_recall"}
    for r in rows:
        assert 0.5 < r.reward < 1.0, (r.name, r.reward, r.detail)
