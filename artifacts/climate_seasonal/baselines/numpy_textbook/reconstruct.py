"""Baseline `numpy_textbook`: the textbook climatology chain in numpy / scipy.

Written from the task's instruction alone (it does not know the recipe): the CF
attributes applied by hand (both fill flags, scale and offset, the valid range), the
calendar decoded by hand, a monthly climatology (nanmean over the years) from which the
seasonal climatology is the day-weighted mean of its three months (with the calendar's
days of a common year), cos-latitude weighted regional means over the cells with data,
annual means of the months with data and numpy.polyfit, and a first-order conservative regridding
whose weights are the overlap in degrees times cos(latitude) of the native cell, a coarse
cell kept when the covered share of its overlapped area reaches the threshold; complete DJF
seasons only, and warm episodes of a 3-month running mean (numpy.convolve) above 0.5 K for
at least five months.
"""
import datetime
import json
import math
import sys
import warnings

import numpy as np
from scipy.io import netcdf_file

REGIONS = {"nino34": (-5, 5, 190, 240), "nino3": (-5, 5, 210, 270), "nino4": (-5, 5, 160, 210),
           "warm_pool": (-10, 10, 135, 165), "south_pacific": (-25, -10, 200, 260)}
SEASONS = {"DJF": (12, 1, 2), "MAM": (3, 4, 5), "JJA": (6, 7, 8), "SON": (9, 10, 11)}
DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]


def mlen(y, m, cal):
    if cal == "360_day":
        return 30
    if m != 2:
        return DAYS[m - 1]
    leap = cal == "all_leap" or (cal != "noleap" and y % 4 == 0 and (y % 100 != 0 or y % 400 == 0))
    return 29 if leap else 28


def ymd(t, units, cal):
    y0 = int(units.split("since")[1].split("-")[0])
    d = int(t)
    if cal == "standard":
        x = datetime.date(y0, 1, 1) + datetime.timedelta(days=d)
        return x.year, x.month
    y, m = y0, 1
    while d >= mlen(y, m, cal):
        d -= mlen(y, m, cal)
        m += 1
        if m == 13:
            y, m = y + 1, 1
    return y, m


def regional(f, lat, lon, box):
    s, n, w, e = box
    i = (lat >= s) & (lat <= n)
    j = (lon >= w) & (lon <= e)
    sub = f[..., i, :][..., j]
    wt = np.broadcast_to(np.cos(np.radians(lat[i]))[:, None], sub.shape[-2:])
    ok = ~np.isnan(sub)
    num = np.sum(np.where(ok, sub, 0) * wt, axis=(-2, -1))
    den = np.sum(ok * wt, axis=(-2, -1))
    with np.errstate(all="ignore"):
        return np.where(den > 0, num / den, np.nan), int(i.sum() * j.sum())


def analyse(f, lat, lon, years, months, days, cal, box):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clim = np.array([np.nanmean(f[months == m], axis=0) for m in range(1, 13)])
    y1 = 2001 if cal != "all_leap" else 2000
    seas = []
    for name, ms in SEASONS.items():
        w = np.array([mlen(y1, m, cal) for m in ms], float)
        c = clim[[m - 1 for m in ms]]
        ok = ~np.isnan(c)
        with np.errstate(all="ignore"):
            seas.append(np.sum(np.where(ok, c, 0) * w[:, None, None], 0) / np.sum(ok * w[:, None, None], 0))
    seas = np.array(seas)
    seas_reg, cells = regional(seas, lat, lon, box)
    series, _ = regional(f, lat, lon, box)
    ann_x, ann_y = [], []
    for y in np.unique(years):
        k = (years == y) & ~np.isnan(series)
        ann_x.append(y)
        ann_y.append(np.mean(series[k]))
    slope = np.polyfit(np.array(ann_x, float), np.array(ann_y), 1)[0] * 10
    return clim, seas, seas_reg, series, slope, cells


def main():
    sc = json.load(sys.stdin)
    p = sc["parameters"]
    nc = netcdf_file(sc["inputs"]["sst"], "r", mmap=False, maskandscale=False)
    v = nc.variables["tos"]
    raw = v[:].copy()
    x = raw * float(v.scale_factor) + float(v.add_offset)
    bad = (raw == v._FillValue) | (raw == v.missing_value) | (raw < v.valid_range[0]) | (raw > v.valid_range[1])
    x[bad] = np.nan
    x = x - 273.15
    t = nc.variables["time"]
    units, cal = t.units.decode(), t.calendar.decode()
    ym = [ymd(v_, units, cal) for v_ in t[:]]
    lat = nc.variables["lat"][:].copy()
    lon = nc.variables["lon"][:].copy() % 360
    lat_b = nc.variables["lat_bnds"][:].copy()
    lon_b = nc.variables["lon_bnds"][:].copy() % 360
    nc.close()
    lon_b[:, 1] = np.where(lon_b[:, 1] <= lon_b[:, 0], lon_b[:, 1] + 360, lon_b[:, 1])
    io, jo = np.argsort(lat), np.argsort(lon)
    x, lat, lon, lat_b, lon_b = x[:, io][:, :, jo], lat[io], lon[jo], np.sort(lat_b[io], 1), lon_b[jo]
    years = np.array([a for a, _ in ym])
    months = np.array([b for _, b in ym])
    days = np.array([mlen(a, b, cal) for a, b in ym], float)
    box = REGIONS[p["region"]]
    clim, seas, seas_reg, series, slope, cells = analyse(x, lat, lon, years, months, days, cal, box)
    clim_reg, _ = regional(clim, lat, lon, box)
    anom = x - clim[months - 1]
    anom_reg, _ = regional(anom, lat, lon, box)
    k = int(np.nanargmax(anom_reg))
    # complete DJF seasons (a December and the following January and February)
    djf = {}
    for y in np.unique(years):
        sel = ((years == y) & (months == 12)) | ((years == y + 1) & np.isin(months, (1, 2)))
        if sel.sum() == 3:
            djf[int(y)] = np.nanmean(series[sel])
    djf_years = list(djf)
    djf_vals = np.array([djf[y] for y in djf_years])
    # warm episodes: 3-month running mean above 0.5 K for at least 5 months
    oni = np.convolve(np.nan_to_num(anom_reg), np.ones(3) / 3.0, mode="same")
    episodes, run = [], 0
    for v_ in list(oni) + [0.0]:
        if v_ > 0.5:
            run += 1
        else:
            if run >= 5:
                episodes.append(run)
            run = 0
    # regridding
    step = float(p["coarse_resolution"])
    s0, w0 = lat_b[0, 0], lon_b[0, 0]
    nla = int(math.ceil((lat_b[-1, 1] - s0) / step - 1e-9))
    nlo = int(math.ceil((lon_b[-1, 1] - w0) / step - 1e-9))
    cl_e = s0 + step * np.arange(nla + 1)
    co_e = w0 + step * np.arange(nlo + 1)
    wla = np.clip(np.minimum(cl_e[1:, None], lat_b[None, :, 1]) - np.maximum(cl_e[:-1, None], lat_b[None, :, 0]), 0, None)
    wla = wla * np.cos(np.radians(lat))[None, :]
    wlo = np.clip(np.minimum(co_e[1:, None], lon_b[None, :, 1]) - np.maximum(co_e[:-1, None], lon_b[None, :, 0]), 0, None)
    ok = ~np.isnan(x)
    num = np.einsum("tij,ai,bj->tab", np.where(ok, x, 0), wla, wlo)
    cov = np.einsum("tij,ai,bj->tab", ok * 1.0, wla, wlo)
    full = np.einsum("ai,bj->ab", wla, wlo)
    with np.errstate(all="ignore"):
        coarse = np.where(cov >= p["min_coverage"] * full, num / cov, np.nan)
    clat, clon = 0.5 * (cl_e[1:] + cl_e[:-1]), 0.5 * (co_e[1:] + co_e[:-1])
    _, cseas, cseas_reg, _, cslope, _ = analyse(coarse, clat, clon, years, months, days, cal, box)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        crange = float(np.nanmax(np.nanmax(cseas, 0) - np.nanmin(cseas, 0)))
    names = list(SEASONS)
    print(json.dumps({
        "masked_values": int(np.isnan(x).sum()), "region_cells": cells,
        "seasonal_means_c": [float(v_) for v_ in seas_reg], "warmest_season": names[int(np.nanargmax(seas_reg))],
        "annual_cycle_range_c": float(np.nanmax(clim_reg) - np.nanmin(clim_reg)),
        "anomaly_std_c": float(np.nanstd(anom_reg)), "max_anomaly_c": float(anom_reg[k]),
        "max_anomaly_month": f"{years[k]:04d}-{months[k]:02d}", "trend_c_per_decade": float(slope),
        "warmest_djf": f"{djf_years[int(np.nanargmax(djf_vals))]:04d}-12",
        "djf_range_c": float(np.nanmax(djf_vals) - np.nanmin(djf_vals)),
        "warm_episodes": len(episodes), "warm_episode_months": int(sum(episodes)),
        "coarse_valid_cells": int((~np.isnan(coarse)).any(0).sum()),
        "coarse_seasonal_means_c": [float(v_) for v_ in cseas_reg], "coarse_trend_c_per_decade": float(cslope),
        "coarse_max_seasonal_range_c": crange,
    }))


if __name__ == "__main__":
    main()
