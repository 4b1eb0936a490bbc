"""The oracle's analysis chain, on xarray + cftime (imported lazily: `recon list` must not need them).

See the recipe (the docstring of `climate_seasonal` in __init__.py) for what each stage does.
"""
from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

REGIONS: dict[str, tuple[float, float, float, float]] = {   # south, north, west, east (degrees east)
    "nino34": (-5.0, 5.0, 190.0, 240.0),
    "nino3": (-5.0, 5.0, 210.0, 270.0),
    "nino4": (-5.0, 5.0, 160.0, 210.0),
    "warm_pool": (-10.0, 10.0, 135.0, 165.0),
    "south_pacific": (-25.0, -10.0, 200.0, 260.0),
}
SEASONS = ["DJF", "MAM", "JJA", "SON"]
KELVIN = 273.15
WARM = 0.5              # K, the anomaly index's warm threshold
MIN_RUN = 5             # months the index must stay at or above it


def _coarse_edges(lo: float, hi: float, step: float) -> Any:
    import numpy as np

    n = int(np.ceil(round((hi - lo) / step, 9)))
    return lo + step * np.arange(n + 1)


def regrid_weights(src_lat_e: Any, src_lon_e: Any, dst_lat_e: Any, dst_lon_e: Any) -> tuple[Any, Any, Any]:
    """Overlap weights: latitude in sin(latitude) (area per unit longitude), longitude in degrees."""
    import numpy as np
    import xarray as xr

    s = np.sin(np.deg2rad(src_lat_e))
    d = np.sin(np.deg2rad(dst_lat_e))
    lo = np.maximum(d[:-1, None], s[None, :-1])
    hi = np.minimum(d[1:, None], s[None, 1:])
    wlat = np.clip(hi - lo, 0.0, None)
    lo = np.maximum(dst_lon_e[:-1, None], src_lon_e[None, :-1])
    hi = np.minimum(dst_lon_e[1:, None], src_lon_e[None, 1:])
    wlon = np.clip(hi - lo, 0.0, None)
    clat = 0.5 * (dst_lat_e[:-1] + dst_lat_e[1:])
    clon = 0.5 * (dst_lon_e[:-1] + dst_lon_e[1:])
    area = np.diff(d)[:, None] * np.diff(dst_lon_e)[None, :]
    return (xr.DataArray(wlat, dims=("clat", "lat"), coords={"clat": clat}),
            xr.DataArray(wlon, dims=("clon", "lon"), coords={"clon": clon}),
            xr.DataArray(area, dims=("clat", "clon"), coords={"clat": clat, "clon": clon}))


def seasonal_climatology(da: Any) -> Any:
    """Day-weighted seasonal means over all years, NaN-aware (per cell)."""
    month_length = da.month_length
    weights = month_length.groupby("season") / month_length.groupby("season").sum()
    num = (da * weights).groupby("season").sum(dim="time")
    den = (da.notnull() * weights).groupby("season").sum(dim="time")
    return (num / den).sel(season=SEASONS)


def annual_means(series: Any) -> Any:
    month_length = series.month_length
    num = (series * month_length).groupby("year").sum(dim="time")
    den = month_length.where(series.notnull()).groupby("year").sum(dim="time")
    return num / den


def process(params: dict[str, Any], inputs: dict[str, Path]) -> tuple[dict[str, Any], dict[str, Any]]:
    import numpy as np
    import xarray as xr

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds = xr.open_dataset(str(inputs["sst"]), engine="scipy",
                             decode_times=xr.coders.CFDatetimeCoder(use_cftime=True))
        ds = ds.load()
    raw = ds["tos"]
    enc = raw.encoding
    vr = np.asarray(raw.attrs["valid_range"], dtype=float) * enc["scale_factor"] + enc["add_offset"]
    flagged = int(raw.isnull().sum())
    da = raw.where((raw >= vr[0]) & (raw <= vr[1]))
    masked = int(da.isnull().sum())
    da = da - KELVIN
    # one longitude convention (0..360, ascending) and ascending latitude, bounds alongside
    lat_b = ds["lat_bnds"].values
    lon_b = ds["lon_bnds"].values % 360.0
    lon_b[:, 1] = np.where(lon_b[:, 1] <= lon_b[:, 0], lon_b[:, 1] + 360.0, lon_b[:, 1])
    da = da.assign_coords(lon=da.lon % 360.0, lat_lo=("lat", lat_b.min(axis=1)), lat_hi=("lat", lat_b.max(axis=1)),
                          lon_lo=("lon", lon_b[:, 0]), lon_hi=("lon", lon_b[:, 1]))
    da = da.sortby("lon").sortby("lat")
    lat_e = np.append(da.lat_lo.values, da.lat_hi.values[-1])
    lon_e = np.append(da.lon_lo.values, da.lon_hi.values[-1])
    da = da.drop_vars(["lat_lo", "lat_hi", "lon_lo", "lon_hi"])
    t = da.time.dt
    da = da.assign_coords(month_length=t.days_in_month, season=t.season, month=t.month, year=t.year)
    s, n, w, e = REGIONS[params["region"]]
    box = {"lat": slice(s, n), "lon": slice(w, e)}

    def regional(x: Any) -> Any:
        sub = x.sel(box)
        return sub.weighted(np.cos(np.deg2rad(sub.lat))).mean(("lat", "lon"))

    # native grid
    seas = seasonal_climatology(da)
    seas_reg = regional(seas)
    clim = da.groupby("month").mean("time")
    anom = da.groupby("month") - clim
    clim_reg = regional(clim)
    anom_reg = regional(anom)
    series = regional(da)
    annual = annual_means(series)
    fit = annual.polyfit("year", 1).polyfit_coefficients
    imax = int(anom_reg.argmax("time", skipna=True))
    tmax = anom_reg.time.values[imax]
    # DJF seasons of the record (a season starts in December; the record's ends give partial seasons)
    quarterly = series.drop_vars(["month_length", "season", "month", "year"]).resample(time="QS-DEC").mean()
    djf = quarterly.where(quarterly.time.dt.month == 12, drop=True)
    idjf = int(djf.argmax("time", skipna=True))
    # warm episodes of the 3-month running mean of the regional anomaly
    index = anom_reg.rolling(time=3, center=True).mean()
    warm = (index >= WARM).values
    runs, start = [], None
    for k, w in enumerate(list(warm) + [False]):
        if w and start is None:
            start = k
        elif not w and start is not None:
            runs.append((start, k - start))
            start = None
    episodes = [(s0, n) for s0, n in runs if n >= MIN_RUN]
    # conservative regridding to the coarse grid
    res_c = float(params["coarse_resolution"])
    dst_lat = _coarse_edges(lat_e[0], lat_e[-1], res_c)
    dst_lon = _coarse_edges(lon_e[0], lon_e[-1], res_c)
    wlat, wlon, area = regrid_weights(lat_e, lon_e, dst_lat, dst_lon)
    plain = da
    num = xr.dot(xr.dot(plain.fillna(0.0), wlon, dim="lon"), wlat, dim="lat")
    cover = xr.dot(xr.dot(plain.notnull().astype(float), wlon, dim="lon"), wlat, dim="lat")
    coarse = (num / cover).where(cover >= float(params["min_coverage"]) * area)
    coarse = coarse.rename({"clat": "lat", "clon": "lon"}).transpose("time", "lat", "lon")
    c_seas = seasonal_climatology(coarse)
    c_seas_reg = regional(c_seas)
    c_annual = annual_means(regional(coarse))
    c_fit = c_annual.polyfit("year", 1).polyfit_coefficients
    c_range = (c_seas.max("season") - c_seas.min("season")).max()
    seas_vals = [float(v) for v in seas_reg.values]
    out = {
        "masked_values": masked,
        "region_cells": int(da.sel(box).lat.size * da.sel(box).lon.size),
        "seasonal_means_c": seas_vals,
        "warmest_season": SEASONS[int(np.nanargmax(seas_reg.values))],
        "annual_cycle_range_c": float(clim_reg.max() - clim_reg.min()),
        "anomaly_std_c": float(anom_reg.std()),
        "max_anomaly_c": float(anom_reg[imax]),
        "max_anomaly_month": f"{tmax.year:04d}-{tmax.month:02d}",
        "trend_c_per_decade": float(fit.sel(degree=1)) * 10.0,
        "warmest_djf": f"{djf.time.values[idjf].year:04d}-12",
        "djf_range_c": float(djf.max() - djf.min()),
        "warm_episodes": len(episodes),
        "warm_episode_months": int(sum(n for _, n in episodes)),
        "coarse_valid_cells": int(coarse.notnull().any("time").sum()),
        "coarse_seasonal_means_c": [float(v) for v in c_seas_reg.values],
        "coarse_trend_c_per_decade": float(c_fit.sel(degree=1)) * 10.0,
        "coarse_max_seasonal_range_c": float(c_range),
    }
    detail = {"flagged": flagged, "valid_range_k": vr, "da": da, "clim_reg": clim_reg, "anom_reg": anom_reg,
              "series": series, "annual": annual, "coarse": coarse, "c_annual": c_annual, "seas": seas,
              "c_seas": c_seas, "dst_lat": dst_lat, "dst_lon": dst_lon, "box": box, "djf": djf,
              "episodes": [(anom_reg.time.values[s0], n) for s0, n in episodes]}
    return out, detail
