"""Built-in oracle `climate_seasonal`: a packed monthly sea-surface temperature product on a
non-standard calendar, analysed with xarray and cftime: day-weighted seasonal climatologies,
anomalies, area-weighted regional means, a conservative regridding and trends."""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from recon import Bool, Choice, Evidence, Float, Int, Integer, Number, Seed, SequenceOf, Text, oracle

from .scene import write_inputs

REGION_DOC = ("the analysis region, a box of cell centres (bounds included): nino34 = 5S-5N, 190-240E; nino3 = "
              "5S-5N, 210-270E; nino4 = 5S-5N, 160-210E; warm_pool = 10S-10N, 135-165E; south_pacific = "
              "25S-10S, 200-260E")


def make_inputs(params: dict[str, Any], directory: Path) -> None:
    """sst.nc of the scenario."""
    write_inputs(params, directory)


# Evidence numbers carry at most 4 significant digits (the leak audit compares every
# published number with the hidden values).
def _r(x: Any) -> Any:
    x = float(x)
    return None if math.isnan(x) else float(f"{x:.4g}")


def _write_evidence(detail: dict[str, Any], out: dict[str, Any], params: dict[str, Any], evidence: Path) -> None:
    import numpy as np

    da = detail["da"]
    times = da.time.values
    box = detail["box"]
    sub = da.sel(box)
    summary = {
        "decoding": {
            "flagged_fill_or_missing": detail["flagged"],
            "valid_range_k": [_r(v) for v in detail["valid_range_k"]],
            "masked_total": out["masked_values"],
        },
        "time": {
            "calendar": params["calendar"], "steps": int(len(times)),
            "first": f"{times[0].year:04d}-{times[0].month:02d}", "last": f"{times[-1].year:04d}-{times[-1].month:02d}",
            "days_in_month_first_year": [int(v) for v in da.month_length.values[:12]],
        },
        "grid": {"lat_cells": int(da.lat.size), "lon_cells": int(da.lon.size)},
        "region": {"lat_centres": [_r(v) for v in sub.lat.values], "lon_centres": [_r(v) for v in sub.lon.values],
                   "cells": out["region_cells"]},
        "regional": {
            "monthly_climatology_c": [_r(v) for v in detail["clim_reg"].values],
            "seasonal_climatology_c": {s: _r(v) for s, v in zip(["DJF", "MAM", "JJA", "SON"], out["seasonal_means_c"])},
            "annual_means_c": {str(int(y)): _r(v) for y, v in zip(detail["annual"].year.values, detail["annual"].values)},
            "djf_seasons_c": {f"{t.year:04d}-12": _r(v) for t, v in zip(detail["djf"].time.values, detail["djf"].values)},
            "warm_episodes": [{"first_month": f"{t.year:04d}-{t.month:02d}", "months": n} for t, n in detail["episodes"]],
        },
        "coarse": {
            "lat_edges": [_r(v) for v in detail["dst_lat"]], "lon_edges": [_r(v) for v in detail["dst_lon"]],
            "valid_cells": out["coarse_valid_cells"],
            "annual_means_c": {str(int(y)): _r(v) for y, v in zip(detail["c_annual"].year.values,
                                                               detail["c_annual"].values)},
        },
    }
    (evidence / "summary.json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")

    lines = ["month,days,regional_mean_c,regional_anomaly_c"]
    for t, d, m, a in zip(times, da.month_length.values, detail["series"].values, detail["anom_reg"].values):
        lines.append(f"{t.year:04d}-{t.month:02d},{int(d)},{_r(m)},{_r(a)}".replace("None", ""))
    (evidence / "regional_series.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")

    c = detail["c_seas"]
    rows = ["lat,lon,season,sst_c"]
    for season in ["DJF", "MAM", "JJA", "SON"]:
        vals = c.sel(season=season).values
        for i, la in enumerate(c.lat.values):
            for j, lo in enumerate(c.lon.values):
                if not np.isnan(vals[i, j]):
                    rows.append(f"{_r(la)},{_r(lo)},{season},{_r(vals[i, j])}")
    (evidence / "coarse_seasonal.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")


@oracle(
    name="climate_seasonal",
    version="1.0.0",
    title="Seasonal climatology, anomalies, regridding and trends of a packed monthly SST product",
    domain="earth and climate",
    toolkit=["numpy", "scipy"],
    requires=["xarray", "cftime", "pandas"],
    description=(
        "A monthly mean sea-surface temperature product over the tropical Pacific (30S-30N, 130E-290E) is "
        "distributed as a CF NetCDF3 file: the temperatures are packed into 16-bit integers, land is never "
        "observed, some months or cells are missing, a few values are sensor glitches outside the physically "
        "valid range the file declares, the time axis may use a model calendar (no leap years, every year "
        "leap, or twelve 30-day months) and the grid may be stored north-to-south or with longitudes in "
        "-180..180. A climate scientist analyses it with xarray (and cftime for the calendars): the field is "
        "decoded and cleaned, seasonal climatologies (DJF, MAM, JJA, SON) are formed with each month weighted "
        "by its length in days, monthly anomalies are taken against the monthly climatology, area-weighted "
        "means are taken over a region, annual means give a linear trend, the regional series gives a "
        "December-January-February season series and an anomaly index whose El Nino-like warm episodes are "
        "counted, and the whole monthly field is regridded conservatively to a coarser grid on which the "
        "regional climatology and trend are repeated. The question: what the scientist reports for the "
        "region on both grids."
    ),
    axes={
        "calendar": Choice(["standard", "noleap", "360_day", "all_leap"], doc="calendar of the file's time axis (CF "
                           "calendar attribute)"),
        "start_year": Int(1951, 2001, doc="first year of the record (it starts in January)"),
        "years": Int(8, 16, doc="length of the record, whole years"),
        "resolution": Choice([2.5, 4.0, 5.0], doc="spacing of the file's regular latitude-longitude grid, degrees"),
        "coarse_resolution": Choice([6.0, 7.5, 10.0], doc="spacing of the coarse grid the field is regridded to, "
                                    "degrees; its cells start at the south-west corner of the file's grid"),
        "region": Choice(["nino34", "nino3", "nino4", "warm_pool", "south_pacific"], doc=REGION_DOC),
        "lat_descending": Bool(doc="whether the file stores latitudes from north to south"),
        "lon_convention": Choice(["0_360", "-180_180"], doc="longitude convention of the file"),
        "missing_fraction": Float(0.0, 0.15, doc="share of ocean values that are missing from the record"),
        "bad_values": Bool(doc="whether some values are sensor glitches outside the declared valid range"),
        "min_coverage": Float(0.3, 0.7, doc="share of a coarse cell's area that must hold data for the cell to "
                                            "get a value in a month"),
        "seed": Seed(doc="seed of the temperature field, its land, gaps and glitches"),
    },
    outputs={
        "masked_values": Integer(tol=0, doc="values of the file that end up missing after decoding and cleaning"),
        "region_cells": Integer(tol=0, doc="cells of the file's grid inside the region"),
        "seasonal_means_c": SequenceOf(Number(abs=1e-6), doc="the region's seasonal climatology on the file's grid, "
                                       "DJF, MAM, JJA, SON, degrees Celsius"),
        "warmest_season": Text(doc="the season with the highest of those four values (DJF, MAM, JJA or SON)"),
        "annual_cycle_range_c": Number(abs=1e-6, doc="highest minus lowest value of the region's monthly "
                                                     "climatology (12 calendar months), kelvin"),
        "anomaly_std_c": Number(abs=1e-6, doc="standard deviation of the region's monthly anomaly series, kelvin"),
        "max_anomaly_c": Number(abs=1e-6, doc="largest monthly anomaly of the region, kelvin"),
        "max_anomaly_month": Text(doc="the month of that anomaly, YYYY-MM in the file's calendar"),
        "trend_c_per_decade": Number(abs=1e-5, doc="linear trend of the region's annual means, kelvin per decade"),
        "warmest_djf": Text(doc="the warmest December-January-February season of the region's monthly series, "
                                "named by the month it starts, YYYY-12"),
        "djf_range_c": Number(abs=1e-6, doc="warmest minus coldest December-January-February season of the "
                                            "record, kelvin"),
        "warm_episodes": Integer(tol=0, doc="warm (El Nino-like) episodes of the region's anomaly index"),
        "warm_episode_months": Integer(tol=0, doc="months that lie inside the warm episodes of the region's "
                                                   "anomaly index"),
        "coarse_valid_cells": Integer(tol=0, doc="cells of the coarse grid that hold a value in at least one month"),
        "coarse_seasonal_means_c": SequenceOf(Number(abs=1e-6), doc="the region's seasonal climatology on the coarse "
                                              "grid, DJF, MAM, JJA, SON, degrees Celsius"),
        "coarse_trend_c_per_decade": Number(abs=1e-5, doc="linear trend of the region's annual means on the coarse "
                                                          "grid, kelvin per decade"),
        "coarse_max_seasonal_range_c": Number(abs=1e-6, doc="largest difference between the warmest and the "
                                                            "coldest season of one coarse cell's seasonal "
                                                            "climatology, over all coarse cells, kelvin"),
    },
    inputs=make_inputs,
    input_docs={
        "sst": "NetCDF3 classic (CDF-1) file, CF-1.8: variable `tos` (time, lat, lon), 16-bit integers with "
               "scale_factor, add_offset, _FillValue, missing_value and valid_range attributes, units K; `time` in "
               "days since January 1 of the first year with a `calendar` attribute, and `time_bnds`; `lat`, `lon` "
               "(cell centres, degrees) with `lat_bnds`, `lon_bnds` (cell edges)",
    },
    stages=["CF decoding and valid-range cleaning", "calendar-aware time axis", "coordinate normalisation",
            "day-weighted seasonal climatology", "monthly climatology and anomalies",
            "area-weighted regional means", "day-weighted annual means and trend", "conservative regridding"],
    reference="reference.py",
    evidence={
        "summary.json": Evidence(
            "per-stage summary (4 significant digits): values flagged by the fill flags, the valid range in "
            "kelvin and the values missing in total; the calendar, the first and last month, the days of the "
            "first year's months; the grid size; the region's cell centres; the region's monthly "
            "climatology, seasonal climatology and annual means, its December-January-February seasons (by "
            "starting month) and its warm episodes (first month and length); the coarse grid's cell edges, its "
            "cells with data and its regional annual means", reveals="summary"),
        "regional_series.csv": Evidence(
            "the region's monthly series on the file's grid: month (YYYY-MM), days in the month, regional mean "
            "and regional anomaly (degrees Celsius and kelvin, 4 significant digits; empty when missing)",
            reveals="summary"),
        "coarse_seasonal.csv": Evidence(
            "the coarse grid's seasonal climatology map: cell centre latitude and longitude (0..360), season, "
            "value in degrees Celsius (4 significant digits), cells without a value left out", reveals="trace"),
    },
    evidence_level="summary",
)
def climate_seasonal(params: dict[str, Any], evidence: Path, inputs: dict[str, Path]) -> dict[str, Any]:
    """Analyse a packed monthly SST product with xarray (2026.9) and cftime (1.6).

    Input `sst`: NetCDF3 classic, `tos` int16 with scale_factor 0.01 and add_offset 290.0
    (both float64), _FillValue -32767 (land, an undelivered month), missing_value -32768
    (gaps), valid_range [-1885, 2015] in PACKED units (271.15 K .. 310.15 K), glitches of
    +32000 (610 K) or -20000 (90 K) packed.

    1. Decode: xr.open_dataset(engine="scipy", decode_times=CFDatetimeCoder(use_cftime=True)).
       CF decoding masks BOTH fill flags (xarray warns about two fill values and masks
       all) and unpacks in float64 (raw * 0.01 + 290.0). It does not apply valid_range:
       the analysis does, explicitly: valid = valid_range * scale_factor + add_offset, and
       values outside [lo, hi] (inclusive bounds kept) become NaN. masked_values = NaN
       count over the whole array after that. Then subtract 273.15 (degrees Celsius).
    2. Time: cftime dates in the file's calendar (standard = proleptic Gregorian for
       these years, noleap, 360_day, all_leap); time.dt.days_in_month (30 for 360_day,
       February 28 / 29 by the calendar), time.dt.season (DJF = months 12, 1, 2 of the SAME
       year, MAM, JJA, SON), time.dt.month, time.dt.year.
    3. Coordinates: lon = lon % 360, then sortby("lon") and sortby("lat") (ascending
       both); cell edges from lat_bnds (min, max per cell) and lon_bnds % 360 (an upper
       edge <= its lower edge gets + 360).
    4. Region: .sel(lat=slice(south, north), lon=slice(west, east)) on the sorted centres
       (bounds included); region_cells = rows x columns. Regional mean of any field:
       .weighted(cos(deg2rad(lat))).mean(("lat", "lon")): per time step (or season, or
       month) the sum of w x over cells with data divided by the sum of w over those
       cells (NaN when none).
    5. Seasonal climatology (per cell, before the regional mean), the xarray
       documentation's recipe with the NaN-aware denominator: weights = days_in_month /
       (sum of days_in_month over ALL time steps of the same season); num =
       (x * weights).groupby(season).sum("time") (NaN skipped), den = (x.notnull() *
       weights).groupby(season).sum("time"); climatology = num / den (NaN where a cell
       has no data in that season). seasonal_means_c = the regional means of DJF, MAM,
       JJA, SON; warmest_season = the largest (first on ties).
    6. Monthly climatology: x.groupby("time.month").mean("time") (NaN skipped);
       annual_cycle_range_c = max - min of its regional mean over the 12 months.
       Anomalies: x.groupby("time.month") - climatology (per cell); the regional mean of
       the anomaly field is the anomaly series; anomaly_std_c = its .std() (population,
       ddof 0, NaN months skipped); max_anomaly_c / max_anomaly_month = its largest value
       (first on ties, NaN skipped) and that time step's year-month.
       Warm episodes: index = anomaly series .rolling(time=3, center=True).mean() (NaN at
       both ends and wherever a month of the window is missing: min_periods = 3); a warm
       month has index >= 0.5 K (NaN is not warm); an episode is a run of at least 5
       consecutive warm months (the NOAA ONI convention); warm_episodes = their number,
       warm_episode_months = the months in them.
    7. Annual means of the regional mean series (regional mean of x, per time step):
       sum over the year's months of series * days_in_month divided by the sum of
       days_in_month of the months where the series has a value; trend = .polyfit("year",
       1) slope (least squares against the integer year) times 10: trend_c_per_decade.
       DJF seasons: the regional mean series .resample(time="QS-DEC").mean() (NaN months
       skipped, unweighted), keeping the bins that start in December: the record's first
       bin holds only January and February of the first year (labelled December of the year
       before) and its last only the final December. warmest_djf = the label (YYYY-12) of
       the largest (first on ties); djf_range_c = max - min over those bins.
    8. Conservative regridding of every monthly field: coarse edges start at the file
       grid's south-west corner (-30, 130) with step coarse_resolution, as many cells as
       needed to cover the grid (ceil; the last column may reach beyond 290E). Overlap
       weights separable: latitude w[J, j] = max(0, sin(min(N_J, n_j)) - sin(max(S_J,
       s_j))), longitude w[I, i] = max(0, min(E_I, e_i) - max(W_I, w_i)) (degrees); coarse
       value = sum w x over native cells with data / sum w over those cells, kept when
       that covered weight >= min_coverage x the coarse cell's FULL area (sin N - sin S)
       (E - W) (so a cell sticking out of the domain needs more of its inside), else NaN
       (xr.dot over lon then lat). On the coarse field (its centres as coordinates) the
       seasonal climatology (5), the regional means (4, cos of the coarse centres) and the
       trend (7) are repeated, which gives the two coarse regional outputs.
       coarse_valid_cells = coarse cells with a value in at least one month;
       coarse_max_seasonal_range_c = max over coarse cells of (max - min over the four
       seasons of its seasonal climatology, NaN seasons skipped).

    Tolerances, and why: every stage is deterministic float64 arithmetic, so a faithful
    implementation agrees to ~1e-13 (this reference: 3e-14). 1e-6 K (1e-5 K per decade for
    trends) leaves room for any summation order while every plausible wrong choice moves
    the outputs by 1e-4 K or more; measured on 40 scenarios: equal month weights fail
    the seasonal means in 31 (all but the 360_day ones), no NaN-aware denominator 40,
    DJF with the previous December 40, unweighted regional means 29, no renormalisation
    over missing cells 40 (anomaly_std), unweighted annual means 31 (trends), regridding
    weights in degrees of latitude instead of sin 40 (coarse seasonal means), coverage
    against the overlapped rather than the full cell area 13 (coarse_valid_cells), the
    standard calendar for every file 29, no valid-range cleaning 20-23, complete DJF seasons
    only 12-16 (warmest_djf, djf_range_c), a running mean over the months present at the
    ends (min_periods 1) 5-9, episodes of 6 months 7, no running mean 12-21 (episode
    counts; the regions off the equator rarely have an episode at all). Counts and the
    month/season labels and the episode counts are exact (the index is compared with 0.5 K,
    which it meets within 1e-12 only by accident).
    """
    from .pipeline import process

    out, detail = process(params, inputs)
    _write_evidence(detail, out, params, Path(evidence))
    return out
