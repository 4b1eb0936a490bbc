"""The synthetic monthly sea-surface temperature product of `climate_seasonal`, written as
a packed NetCDF3 classic file (scipy.io.netcdf_file, so any CF reader can open it).

Deterministic in the scenario's parameters (numpy's default_rng on `seed`); cftime (the
calendar arithmetic) is imported lazily.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any

DOMAIN = (-30.0, 30.0, 130.0, 290.0)        # south, north, west, east (degrees, east longitudes)
SCALE = 0.01                                 # K per packed count
OFFSET = 290.0                               # K
FILL = -32767
MISSING = -32768
VALID_K = (271.15, 310.15)                   # physically possible sea-surface temperatures, K
CALENDAR_UNITS = "days since {year}-01-01 00:00:00"


def grid(res: float) -> dict[str, Any]:
    import numpy as np

    s, n, w, e = DOMAIN
    nlat, nlon = int(round((n - s) / res)), int(round((e - w) / res))
    lat_edges = s + res * np.arange(nlat + 1)
    lon_edges = w + res * np.arange(nlon + 1)
    return {"lat_edges": lat_edges, "lon_edges": lon_edges, "lat": 0.5 * (lat_edges[:-1] + lat_edges[1:]),
            "lon": 0.5 * (lon_edges[:-1] + lon_edges[1:])}


def month_times(params: dict[str, Any]) -> dict[str, Any]:
    """Month boundaries and mid-points in the scenario's calendar (days since Jan 1 of start_year)."""
    import cftime
    import numpy as np

    cal, y0, ny = params["calendar"], int(params["start_year"]), int(params["years"])
    units = CALENDAR_UNITS.format(year=f"{y0:04d}")
    starts = [cftime.datetime(y0 + k // 12, k % 12 + 1, 1, calendar=cal) for k in range(12 * ny + 1)]
    edges = np.array(cftime.date2num(starts, units, calendar=cal), dtype=float)
    return {"units": units, "calendar": cal, "bounds": np.column_stack([edges[:-1], edges[1:]]),
            "mid": 0.5 * (edges[:-1] + edges[1:]), "days": np.diff(edges)}


def field(params: dict[str, Any]) -> dict[str, Any]:
    """The packed int16 field (time, lat, lon) on the ascending 0..360 grid, and the truth behind it."""
    import numpy as np

    rng = np.random.default_rng(int(params["seed"]))
    g = grid(float(params["resolution"]))
    tm = month_times(params)
    nt = len(tm["mid"])
    lat, lon = g["lat"][:, None], g["lon"][None, :]
    # climatological structure: warm pool in the west, cold tongue along the equator in the east
    base = (301.5 - 7.0 * (lat / 30.0) ** 2 - 2.8 * np.exp(-(lat / 5.0) ** 2) / (1 + np.exp(-(lon - 215.0) / 15.0))
            + rng.uniform(-0.4, 0.4))
    amp = 0.4 + 2.2 * np.abs(lat) / 30.0 * rng.uniform(0.8, 1.2)
    phase = np.where(lat >= 0, 8.0, 2.0) + rng.uniform(-0.5, 0.5)           # month of the maximum
    enso_pattern = np.exp(-(lat / 8.0) ** 2) * np.exp(-((lon - 230.0) / 40.0) ** 2)
    trend = float(rng.uniform(-0.15, 0.45))                                   # K per decade
    e = np.zeros(nt)
    phi = float(rng.uniform(0.85, 0.95))
    for k in range(1, nt):
        e[k] = phi * e[k - 1] + rng.normal(0.0, 0.35)
    t_years = (tm["mid"] - tm["mid"][0]) / 365.0
    month_index = np.arange(nt) % 12
    temp = (base[None] + amp[None] * np.cos(2 * np.pi * (month_index[:, None, None] + 0.5 - phase[None]) / 12.0)
            + 1.6 * enso_pattern[None] * e[:, None, None]
            + trend / 10.0 * t_years[:, None, None] * (0.7 + 0.6 * np.cos(np.radians(lat[None])))
            + rng.normal(0.0, 0.18, (nt,) + base.shape))
    packed = np.rint((temp - OFFSET) / SCALE).astype(np.int64)
    # land: a few islands and a coast, never observed
    land = np.zeros(base.shape, dtype=bool)
    for _ in range(int(rng.integers(2, 5))):
        la, lo = rng.uniform(-28.0, 26.0), rng.uniform(132.0, 280.0)
        land |= ((lat >= la) & (lat <= la + rng.uniform(3.0, 9.0)) & (lon >= lo) & (lon <= lo + rng.uniform(4.0, 14.0)))
    land |= (lon >= 283.0) & (lat >= 8.0)                                    # a coastline in the north-east
    packed[:, land] = FILL
    # gaps in the record (clouds, no ship): the missing_value flag
    gaps = rng.uniform(0.0, 1.0, packed.shape) < float(params["missing_fraction"])
    packed[gaps & ~land[None]] = MISSING
    dropped = None
    if rng.uniform() < 0.5:                                                   # a month never delivered
        dropped = int(rng.integers(0, nt))
        packed[dropped] = FILL
    if params["bad_values"]:
        n_bad = int(rng.integers(8, 30))
        idx = rng.integers(0, packed.size, n_bad)
        flat = packed.reshape(-1)
        flat[idx] = np.where(rng.uniform(size=n_bad) < 0.5, 32000, -20000)  # 610 K and 90 K: sensor glitches
    return {"grid": g, "times": tm, "packed": packed.astype(np.int16), "land": land, "trend": trend,
            "dropped": dropped}


def write_inputs(params: dict[str, Any], directory: Path) -> None:
    """sst.nc: NetCDF3 classic, CF-1.8, packed int16 `tos` with its coordinates and bounds."""
    import numpy as np
    from scipy.io import netcdf_file

    f = field(params)
    g, tm, data = f["grid"], f["times"], f["packed"]
    lat, lat_b = g["lat"], np.column_stack([g["lat_edges"][:-1], g["lat_edges"][1:]])
    lon, lon_b = g["lon"], np.column_stack([g["lon_edges"][:-1], g["lon_edges"][1:]])
    if params["lon_convention"] == "-180_180":
        lon = ((lon + 180.0) % 360.0) - 180.0
        lon_b = ((lon_b + 180.0) % 360.0) - 180.0
        lon_b[lon_b[:, 1] == -180.0, 1] = 180.0
        order = np.argsort(lon, kind="stable")
        lon, lon_b, data = lon[order], lon_b[order], data[:, :, order]
    if params["lat_descending"]:
        lat, lat_b, data = lat[::-1], lat_b[::-1, ::-1], data[:, ::-1, :]
    path = Path(directory) / "sst.nc"
    nc = netcdf_file(str(path), "w", version=1)
    nc.Conventions = "CF-1.8"
    nc.title = "Monthly mean sea surface temperature, tropical Pacific"
    nc.institution = "recon climate_seasonal"
    nc.source = "blended ship, buoy and satellite observations (synthetic)"
    nc.createDimension("time", None)
    nc.createDimension("lat", len(lat))
    nc.createDimension("lon", len(lon))
    nc.createDimension("nv", 2)
    v = nc.createVariable("time", "f8", ("time",))
    v.standard_name, v.units, v.calendar, v.bounds, v.axis = "time", tm["units"], tm["calendar"], "time_bnds", "T"
    v[:] = tm["mid"]
    v = nc.createVariable("time_bnds", "f8", ("time", "nv"))
    v[:] = tm["bounds"]
    v = nc.createVariable("lat", "f8", ("lat",))
    v.standard_name, v.units, v.bounds, v.axis = "latitude", "degrees_north", "lat_bnds", "Y"
    v[:] = lat
    v = nc.createVariable("lat_bnds", "f8", ("lat", "nv"))
    v[:] = lat_b
    v = nc.createVariable("lon", "f8", ("lon",))
    v.standard_name, v.units, v.bounds, v.axis = "longitude", "degrees_east", "lon_bnds", "X"
    v[:] = lon
    v = nc.createVariable("lon_bnds", "f8", ("lon", "nv"))
    v[:] = lon_b
    v = nc.createVariable("tos", "i2", ("time", "lat", "lon"))
    v.standard_name = "sea_surface_temperature"
    v.long_name = "Sea Surface Temperature"
    v.units = "K"
    v.scale_factor = np.float64(SCALE)
    v.add_offset = np.float64(OFFSET)
    v._FillValue = np.int16(FILL)
    v.missing_value = np.int16(MISSING)
    v.valid_range = np.array([int(round((VALID_K[0] - OFFSET) / SCALE)), int(round((VALID_K[1] - OFFSET) / SCALE))],
                             dtype=np.int16)
    v.cell_methods = "time: mean"
    v[:] = data
    nc.close()
