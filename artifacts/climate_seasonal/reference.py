"""Reference solution for the `climate_seasonal` recon task (standalone: stdlib, numpy, scipy).

Reads one scenario JSON object on stdin, prints the output JSON object on stdout. It
reproduces, without xarray or cftime, what the oracle's xarray chain computes:

1. the packed NetCDF3 variable decoded as xarray's CF decoding does (both fill flags
   masked, scale and offset applied in float64), then values outside the CF valid
   range (stored in packed units) masked, and converted to degrees Celsius;
2. the time axis decoded in its own calendar (standard, noleap, 360_day, all_leap):
   year, month and days in month of every time step;
3. longitudes brought to 0..360 and both axes sorted ascending;
4. seasonal climatologies weighted by days per month, grouped by xarray's seasons (the
   December of a year joins the January and February of the same year), NaN-aware;
5. regional means over a box (cell centres inside it), weighted by cos(latitude) and
   renormalised over the cells with data, as DataArray.weighted(...).mean does;
6. monthly climatology and anomalies, their spread and extreme, day-weighted annual
   means and their least-squares trend;
7. a conservative regridding to a coarser grid (overlap areas from cell bounds, a cell
   kept when the area with data reaches the coverage threshold) and the same statistics
   on it.
"""
from __future__ import annotations

import datetime
import json
import math
import sys
import warnings
from typing import Any

import numpy as np
from scipy.io import netcdf_file

REGIONS = {
    "nino34": (-5.0, 5.0, 190.0, 240.0),
    "nino3": (-5.0, 5.0, 210.0, 270.0),
    "nino4": (-5.0, 5.0, 160.0, 210.0),
    "warm_pool": (-10.0, 10.0, 135.0, 165.0),
    "south_pacific": (-25.0, -10.0, 200.0, 260.0),
}
SEASON_OF_MONTH = [0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 0]      # Jan..Dec -> DJF, MAM, JJA, SON
SEASONS = ["DJF", "MAM", "JJA", "SON"]
KELVIN = 273.15
WARM = 0.5
MIN_RUN = 5
MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]


# --------------------------------------------------------------------------- calendars
def is_leap(year: int, calendar: str) -> bool:
    if calendar == "all_leap":
        return True
    if calendar == "noleap":
        return False
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def month_length(year: int, month: int, calendar: str) -> int:
    if calendar == "360_day":
        return 30
    return 29 if month == 2 and is_leap(year, calendar) else MONTH_DAYS[month - 1]


def decode_times(values: Any, units: str, calendar: str) -> list[tuple[int, int]]:
    """(year, month) of each time value given in days since an epoch."""
    epoch = units.split("since")[1].strip().split()[0]
    y0, m0, d0 = (int(v) for v in epoch.split("-"))
    out = []
    for v in values:
        days = int(math.floor(float(v)))
        if calendar in ("standard", "gregorian", "proleptic_gregorian"):
            d = datetime.date(y0, m0, d0) + datetime.timedelta(days=days)
            out.append((d.year, d.month))
            continue
        y, m = y0, m0
        days += d0 - 1
        while days >= month_length(y, m, calendar):
            days -= month_length(y, m, calendar)
            m += 1
            if m == 13:
                y, m = y + 1, 1
        out.append((y, m))
    return out


# ------------------------------------------------------------------------ statistics
def weighted_mean2d(x: Any, w_lat: Any) -> Any:
    """DataArray.weighted(cos lat).mean over the last two axes (NaN cells dropped, weights renormalised)."""
    valid = ~np.isnan(x)
    w = np.broadcast_to(w_lat[:, None], x.shape[-2:])
    num = np.where(valid, x, 0.0).reshape(x.shape[:-2] + (-1,)) @ w.reshape(-1)
    den = valid.reshape(x.shape[:-2] + (-1,)).astype(float) @ w.reshape(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den != 0.0, num / np.where(den != 0.0, den, 1.0), np.nan)


def seasonal_climatology(x: Any, months: Any, days: Any) -> Any:
    season = np.array([SEASON_OF_MONTH[m - 1] for m in months])
    out = np.full((4,) + x.shape[1:], np.nan)
    for s in range(4):
        sel = season == s
        if not sel.any():
            continue
        w = days[sel] / days[sel].sum()
        xs = x[sel]
        valid = ~np.isnan(xs)
        num = np.tensordot(w, np.where(valid, xs, 0.0), axes=1)
        den = np.tensordot(w, valid.astype(float), axes=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[s] = num / den
    return out


def annual_means(series: Any, years: Any, days: Any) -> tuple[Any, Any]:
    ys = np.unique(years)
    vals = []
    for y in ys:
        sel = years == y
        ok = sel & ~np.isnan(series)
        vals.append(np.sum(series[ok] * days[ok]) / np.sum(days[ok]) if ok.any() else np.nan)
    return ys.astype(float), np.array(vals)


def trend(x: Any, y: Any) -> float:
    ok = ~np.isnan(y)
    lhs = np.vander(x[ok], 2)
    scale = np.sqrt((lhs * lhs).sum(axis=0))
    coef = np.linalg.lstsq(lhs / scale, y[ok], rcond=None)[0] / scale
    return float(coef[0])


def stats(field: Any, lat: Any, lon: Any, months: Any, years: Any, days: Any, box: tuple[float, ...]) -> dict[str, Any]:
    s, n, w, e = box
    il = (lat >= s) & (lat <= n)
    jl = (lon >= w) & (lon <= e)
    sub = field[:, il][:, :, jl]
    wl = np.cos(np.deg2rad(lat[il]))
    seas = seasonal_climatology(field, months, days)
    seas_reg = weighted_mean2d(seas[:, il][:, :, jl], wl)
    series = weighted_mean2d(sub, wl)
    ya, annual = annual_means(series, years, days)
    return {"seas": seas, "seas_reg": seas_reg, "series": series, "sub": sub, "wl": wl,
            "trend": trend(ya, annual) * 10.0, "cells": int(il.sum() * jl.sum())}


def djf_seasons(series: Any, years: Any, months: Any) -> tuple[list[int], Any]:
    """resample(time="QS-DEC").mean() of the series, December-started bins only (partial at the ends)."""
    key = np.where(months == 12, years, years - 1)
    in_djf = np.isin(months, (12, 1, 2))
    keys = sorted(set(key[in_djf].tolist()))
    out = []
    for k in keys:
        vals = series[in_djf & (key == k)]
        vals = vals[~np.isnan(vals)]
        out.append(np.sum(vals) / len(vals) if len(vals) else np.nan)
    return keys, np.array(out)


def warm_episodes(anomaly: Any) -> list[int]:
    """Lengths of the runs of >= MIN_RUN months whose centred 3-month mean anomaly is >= WARM."""
    index = np.full(len(anomaly), np.nan)
    index[1:-1] = (anomaly[:-2] + anomaly[1:-1] + anomaly[2:]) / 3.0
    runs, start = [], None
    for k, w in enumerate(list(index >= WARM) + [False]):
        if w and start is None:
            start = k
        elif not w and start is not None:
            runs.append(k - start)
            start = None
    return [n for n in runs if n >= MIN_RUN]


# ---------------------------------------------------------------------------- regrid
def coarse_edges(lo: float, hi: float, step: float) -> Any:
    n = int(np.ceil(round((hi - lo) / step, 9)))
    return lo + step * np.arange(n + 1)


def overlap(dst: Any, src: Any) -> Any:
    lo = np.maximum(dst[:-1, None], src[None, :-1])
    hi = np.minimum(dst[1:, None], src[None, 1:])
    return np.clip(hi - lo, 0.0, None)


def regrid(field: Any, lat_e: Any, lon_e: Any, step: float, min_cover: float) -> tuple[Any, Any, Any]:
    dlat = coarse_edges(lat_e[0], lat_e[-1], step)
    dlon = coarse_edges(lon_e[0], lon_e[-1], step)
    wlat = overlap(np.sin(np.deg2rad(dlat)), np.sin(np.deg2rad(lat_e)))
    wlon = overlap(dlon, lon_e)
    valid = ~np.isnan(field)
    num = np.einsum("tib,ai->tab", np.einsum("tij,bj->tib", np.where(valid, field, 0.0), wlon), wlat)
    cover = np.einsum("tib,ai->tab", np.einsum("tij,bj->tib", valid.astype(float), wlon), wlat)
    area = np.diff(np.sin(np.deg2rad(dlat)))[:, None] * np.diff(dlon)[None, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(cover >= min_cover * area, num / cover, np.nan)
    return out, 0.5 * (dlat[:-1] + dlat[1:]), 0.5 * (dlon[:-1] + dlon[1:])


# --------------------------------------------------------------------------- the chain
def solve(scenario: dict) -> dict:
    p = scenario["parameters"]
    nc = netcdf_file(scenario["inputs"]["sst"], "r", mmap=False, maskandscale=False)
    v = nc.variables["tos"]
    raw = np.array(v.data)
    scale, offset = float(v.scale_factor), float(v.add_offset)
    vr = np.asarray(v.valid_range, dtype=float) * scale + offset
    flags = [int(v._FillValue), int(v.missing_value)]
    tvar = nc.variables["time"]
    units = tvar.units.decode() if isinstance(tvar.units, bytes) else tvar.units
    cal = tvar.calendar.decode() if isinstance(tvar.calendar, bytes) else tvar.calendar
    tvals = np.array(tvar.data, dtype=float)
    lat = np.array(nc.variables["lat"].data, dtype=float)
    lon = np.array(nc.variables["lon"].data, dtype=float)
    lat_b = np.array(nc.variables["lat_bnds"].data, dtype=float)
    lon_b = np.array(nc.variables["lon_bnds"].data, dtype=float) % 360.0
    nc.close()

    x = raw.astype(np.float64) * scale + offset
    x[np.isin(raw, flags)] = np.nan
    with np.errstate(invalid="ignore"):
        x[(x < vr[0]) | (x > vr[1])] = np.nan
    masked = int(np.isnan(x).sum())
    x = x - KELVIN
    lon = lon % 360.0
    lon_b[:, 1] = np.where(lon_b[:, 1] <= lon_b[:, 0], lon_b[:, 1] + 360.0, lon_b[:, 1])
    jo = np.argsort(lon, kind="stable")
    io = np.argsort(lat, kind="stable")
    x = x[:, io][:, :, jo]
    lat, lon, lat_b, lon_b = lat[io], lon[jo], lat_b[io], lon_b[jo]
    lat_e = np.append(lat_b.min(axis=1), lat_b.max(axis=1)[-1])
    lon_e = np.append(lon_b[:, 0], lon_b[-1, 1])

    ym = decode_times(tvals, units, cal)
    years = np.array([y for y, _ in ym])
    months = np.array([m for _, m in ym])
    days = np.array([month_length(y, m, cal) for y, m in ym], dtype=float)
    box = REGIONS[p["region"]]

    nat = stats(x, lat, lon, months, years, days, box)
    clim = np.full((12,) + x.shape[1:], np.nan)
    anom = np.full(x.shape, np.nan)
    for m in range(1, 13):
        sel = months == m
        if sel.any():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                clim[m - 1] = np.nanmean(x[sel], axis=0)
            anom[sel] = x[sel] - clim[m - 1]
    present = sorted(set(months.tolist()))
    s, n, w, e = box
    il = (lat >= s) & (lat <= n)
    jl = (lon >= w) & (lon <= e)
    clim_reg = weighted_mean2d(clim[[m - 1 for m in present]][:, il][:, :, jl], nat["wl"])
    anom_reg = weighted_mean2d(anom[:, il][:, :, jl], nat["wl"])
    imax = int(np.nanargmax(anom_reg))

    djf_keys, djf = djf_seasons(nat["series"], years, months)
    episodes = warm_episodes(anom_reg)

    coarse, clat, clon = regrid(x, lat_e, lon_e, float(p["coarse_resolution"]), float(p["min_coverage"]))
    crs = stats(coarse, clat, clon, months, years, days, box)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        c_range = float(np.nanmax(np.nanmax(crs["seas"], axis=0) - np.nanmin(crs["seas"], axis=0)))
    return {
        "masked_values": masked,
        "region_cells": nat["cells"],
        "seasonal_means_c": [float(v) for v in nat["seas_reg"]],
        "warmest_season": SEASONS[int(np.nanargmax(nat["seas_reg"]))],
        "annual_cycle_range_c": float(np.nanmax(clim_reg) - np.nanmin(clim_reg)),
        "anomaly_std_c": float(np.nanstd(anom_reg)),
        "max_anomaly_c": float(anom_reg[imax]),
        "max_anomaly_month": f"{years[imax]:04d}-{months[imax]:02d}",
        "trend_c_per_decade": nat["trend"],
        "warmest_djf": f"{djf_keys[int(np.nanargmax(djf))]:04d}-12",
        "djf_range_c": float(np.nanmax(djf) - np.nanmin(djf)),
        "warm_episodes": len(episodes),
        "warm_episode_months": int(sum(episodes)),
        "coarse_valid_cells": int((~np.isnan(coarse)).any(axis=0).sum()),
        "coarse_seasonal_means_c": [float(v) for v in crs["seas_reg"]],
        "coarse_trend_c_per_decade": crs["trend"],
        "coarse_max_seasonal_range_c": c_range,
    }


def main() -> None:
    scenario = json.load(sys.stdin)
    print(json.dumps(solve(scenario)))


if __name__ == "__main__":
    main()
