"""Baseline `expert`: a careful diffractionist's pipeline written from the instruction alone.

It handles everything the instruction names -- Ka2 (the doublet is fitted), the zero
shift (refined with the cell), the instrument's breadth (removed in quadrature) -- with
the choices an expert makes without the recipe: peaks found on the raw scan smoothed
with a 5-point moving average (maxima at the Ka2 place of a stronger peak dropped),
3-sigma prominence against the local background, each peak fitted alone in a +-0.6
degree window, unweighted; indexing by nearest reflection from the CIF cell, widening
the match as the cell is refined; Scherrer's K = 0.94 (spherical crystallites).


Reads one scenario JSON object on stdin, prints the output JSON object on stdout.
It implements the oracle's recipe (the docstring of ``xrd_lattice`` in ``__init__.py``):

1. read the CIF (cell, symmetry operations, sites) and expand the asymmetric unit;
   compute the reference phase's reflections at Ka1 the way pymatgen's XRDCalculator
   does (every reciprocal point in the scan's sphere, atomic form factors from the
   four-Gaussian fit, Lorentz-polarisation, 2-theta bins of 1e-5 degree, families
   labelled by their largest member, absences below 1e-5 of the strongest);
2. read the pattern; strip Ka2 (Rachinger), smooth (Savitzky-Golay), find maxima by
   prominence against the Poisson noise of their base;
3. fit each group of overlapping peaks on the raw counts: linear background plus
   pseudo-Voigt Ka1/Ka2 doublets;
4. index: a grid search over an isotropic cell scale, then rounds of nearest-reflection
   matching and least-squares refinement of the cell (by crystal system) and the zero
   shift until the matched set repeats;
5. strain against the CIF cell, peak shifts, Scherrer and Williamson-Hall sizes after
   removing the instrumental breadth.
"""
from __future__ import annotations

import json
import math
import re
import sys
from typing import Any

import numpy as np
from scipy.optimize import least_squares
from scipy.signal import find_peaks, peak_widths, savgol_filter

# stage 1: pymatgen's XRDCalculator conventions
TWO_THETA_TOL = 1e-5          # degrees: reflections binned by round(2theta / this)
SCALED_INTENSITY_TOL = 1e-3   # percent of the strongest: weaker reflections are absences
# four-Gaussian form-factor fits: f(s) = Z - 41.78214 s^2 sum a_i exp(-b_i s^2), s = sin(theta)/lambda
SCATTERING = {
    "O": (8, [[0.455, 23.78], [0.917, 7.622], [0.472, 2.144], [0.138, 0.296]]),
    "Mg": (12, [[2.268, 73.67], [1.803, 20.175], [0.839, 3.013], [0.289, 0.405]]),
    "Si": (14, [[2.129, 57.775], [2.533, 16.476], [0.835, 2.88], [0.322, 0.386]]),
    "Ti": (22, [[3.565, 81.982], [2.818, 19.049], [1.893, 3.59], [0.483, 0.386]]),
    "Zn": (30, [[1.942, 54.162], [1.95, 12.518], [1.619, 2.416], [0.543, 0.33]]),
    "Sr": (38, [[5.848, 104.972], [4.003, 19.367], [2.342, 3.737], [0.88, 0.414]]),
    "Ce": (58, [[5.007, 28.283], [3.98, 5.183], [1.678, 0.589], [0, 0]]),
}
# stage 2: detection
SMOOTH_DEG = 0.08             # Savitzky-Golay half-window, degrees (order 2)
PROMINENCE_SIGMA = 5.0        # prominence >= this * sqrt(base) + PROMINENCE_FLOOR
PROMINENCE_FLOOR = 5.0
PROMINENCE_REACH = 1.0        # degrees: the bases of a maximum are sought within half of this either side
# stage 3: profile fitting
WINDOW_FWHM = 1e-9             # half-window of a peak = max(WINDOW_MIN, this * its width estimate)
WINDOW_MIN = 0.6             # degrees
# stage 4: indexing
SCALE_STEP = 2e-4             # grid of isotropic cell scales 1 + k * step, |k| <= SCALE_STEPS
SCALE_STEPS = 100
GRID_TOL = 0.40               # degrees: reach of a reflection in the grid score and the first match
MATCH_TOL = 0.25              # degrees: reach in the refinement rounds
MAX_ROUNDS = 8
# stage 5: sizes
SCHERRER_K = 0.94
LAM = [1.54056, 1.54439]


# ------------------------------------------------------------------------------ reading
def read_pattern(path: str) -> dict[str, Any]:
    """The xy file: a '#' header with the wavelengths and the instrument profile, then
    2-theta (degrees) and counts."""
    head: dict[str, float] = {}
    tth, cnt = [], []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            line = line.strip()
            if not line:
                continue
            if line.startswith("#"):
                for key, val in re.findall(r"([A-Za-z0-9()/]+)\s*=\s*([-+0-9.eE]+)", line):
                    head[key] = float(val)
                continue
            a, b = line.split()[:2]
            tth.append(float(a))
            cnt.append(float(b))
    return {"tth": np.asarray(tth), "y": np.asarray(cnt), "lambda1": head["Ka1"], "lambda2": head["Ka2"],
            "ratio": head["I(Ka2)/I(Ka1)"], "U": head["U"], "V": head["V"], "W": head["W"]}


def _cif_number(tok: str) -> float:
    return float(tok.split("(")[0])


def _tokens(line: str) -> list[str]:
    return [a or b for a, b in re.findall(r"'([^']*)'|(\S+)", line)]


def read_cif(path: str) -> dict[str, Any]:
    """Cell, space-group number, symmetry operations and sites of a (pymatgen-style) CIF."""
    lines = open(path, encoding="utf-8").read().splitlines()
    tags: dict[str, str] = {}
    loops: list[tuple[list[str], list[list[str]]]] = []
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        if line == "loop_":
            names: list[str] = []
            rows: list[list[str]] = []
            i += 1
            while i < len(lines) and lines[i].strip().startswith("_"):
                names.append(lines[i].strip())
                i += 1
            while i < len(lines) and lines[i].strip() and not lines[i].strip().startswith(("_", "loop_", "data_", "#")):
                rows.append(_tokens(lines[i].strip()))
                i += 1
            loops.append((names, rows))
            continue
        if line.startswith("_"):
            parts = _tokens(line)
            tags[parts[0]] = parts[1] if len(parts) > 1 else ""
        i += 1
    cell = [_cif_number(tags[f"_cell_{k}"]) for k in ("length_a", "length_b", "length_c",
                                                        "angle_alpha", "angle_beta", "angle_gamma")]
    ops, sites = [], []
    for names, rows in loops:
        if any(n.endswith("_pos_as_xyz") for n in names):
            col = next(j for j, n in enumerate(names) if n.endswith("_pos_as_xyz"))
            ops = [_parse_op(r[col]) for r in rows]
        if "_atom_site_fract_x" in names:
            ix = {n: j for j, n in enumerate(names)}
            for r in rows:
                sym = r[ix["_atom_site_type_symbol"]] if "_atom_site_type_symbol" in ix else r[ix["_atom_site_label"]]
                el = re.match(r"[A-Z][a-z]?", sym).group()
                occ = _cif_number(r[ix["_atom_site_occupancy"]]) if "_atom_site_occupancy" in ix else 1.0
                sites.append((el, [_cif_number(r[ix[f"_atom_site_fract_{c}"]]) for c in "xyz"], occ))
    number = int(tags.get("_symmetry_Int_Tables_number", tags.get("_space_group_IT_number", "1")))
    return {"cell": cell, "number": number, "ops": ops or [_parse_op("x, y, z")], "sites": sites}


def _parse_op(text: str) -> tuple[np.ndarray, np.ndarray]:
    rot, tr = np.zeros((3, 3)), np.zeros(3)
    for row, expr in enumerate(text.replace(" ", "").lower().split(",")):
        for sign, num, den, var in re.findall(r"([+-]?)(?:(\d+(?:\.\d+)?)(?:/(\d+))?)?([xyz]?)", expr):
            if not num and not var:
                continue
            s = -1.0 if sign == "-" else 1.0
            if var:
                rot[row, "xyz".index(var)] += s * (float(num) if num else 1.0)
            else:
                tr[row] += s * float(num) / (float(den) if den else 1.0)
    return rot, tr


def expand_sites(cif: dict[str, Any]) -> list[tuple[str, np.ndarray, float]]:
    """Every atom of the cell: each site under each operation, wrapped into [0, 1), one
    copy of positions that coincide (within 1e-3 fractional)."""
    out: list[tuple[str, np.ndarray, float]] = []
    for el, xyz, occ in cif["sites"]:
        seen: list[np.ndarray] = []
        for rot, tr in cif["ops"]:
            p = np.mod(rot @ np.asarray(xyz) + tr, 1.0)
            p[np.abs(p - 1.0) < 1e-8] = 0.0
            if any(np.all(np.abs((p - q + 0.5) % 1.0 - 0.5) < 1e-3) for q in seen):
                continue
            seen.append(p)
            out.append((el, p, occ))
    return out


def crystal_system(number: int) -> str:
    if number >= 195:
        return "cubic"
    if number >= 143:
        return "hexagonal"
    if number >= 75:
        return "tetragonal"
    if number >= 16:
        return "orthorhombic"
    return "monoclinic" if number >= 3 else "triclinic"


def lattice_matrix(cell: list[float]) -> np.ndarray:
    a, b, c, al, be, ga = cell
    al, be, ga = (math.radians(v) for v in (al, be, ga))
    # pymatgen's from_parameters (vesta convention)
    val = (math.cos(al) * math.cos(be) - math.cos(ga)) / (math.sin(al) * math.sin(be))
    val = max(-1.0, min(1.0, val))
    gamma_star = math.acos(val)
    return np.array([[a * math.sin(be), 0.0, a * math.cos(be)],
                     [-b * math.sin(al) * math.cos(gamma_star), b * math.sin(al) * math.sin(gamma_star), b * math.cos(al)],
                     [0.0, 0.0, c]])


def _is_hexagonal(cell: list[float]) -> bool:
    a, b, c, al, be, ga = cell
    ang = sorted([al, be, ga])
    return abs(ang[0] - 90) < 5 and abs(ang[1] - 90) < 5 and abs(ang[2] - 120) < 5 and abs(a - b) < 1e-4


def reflections(cif: dict[str, Any], wavelength: float, tth_range: tuple[float, float]) -> list[dict[str, Any]]:
    """The reference phase's reflections in the scan range (stage 1)."""
    cell = cif["cell"]
    mat = lattice_matrix(cell)
    recip = np.linalg.inv(mat).T            # rows: a*, b*, c* (crystallographic, no 2 pi)
    lo, hi = (2 * math.sin(math.radians(t / 2)) / wavelength for t in tth_range)
    nmax = [int(math.ceil(hi / np.linalg.norm(recip[i]) * 1.0)) + 1 for i in range(3)]
    hh, kk, ll = np.meshgrid(*(np.arange(-n, n + 1) for n in nmax), indexing="ij")
    hkl = np.stack([hh.ravel(), kk.ravel(), ll.ravel()], axis=1)
    g = np.linalg.norm(hkl @ recip, axis=1)
    keep = (g <= hi) & (g >= lo) & (g > 0)
    hkl, g = hkl[keep], g[keep]
    h, k, l = hkl.T
    half = (h > 0) | ((h == 0) & (k > 0)) | ((h == 0) & (k == 0) & (l > 0))
    hkl, g = hkl[half], g[half]
    order = np.lexsort((-hkl[:, 2], -hkl[:, 1], -hkl[:, 0], g))
    hkl, g = hkl[order], g[order]
    theta = np.arcsin(np.clip(wavelength * g / 2, -1, 1))
    s2 = (g / 2) ** 2
    fhkl = np.zeros(len(g), dtype=complex)
    atoms = expand_sites(cif)
    for el in sorted({a[0] for a in atoms}):
        z, coeff = SCATTERING[el]
        c = np.asarray(coeff, dtype=float)
        fs = z - 41.78214 * s2 * np.sum(c[:, 0] * np.exp(-c[:, 1] * s2[:, None]), axis=1)
        pos = np.array([a[1] for a in atoms if a[0] == el])
        occ = np.array([a[2] for a in atoms if a[0] == el])
        fhkl += fs * (np.exp(2j * math.pi * hkl @ pos.T) @ occ)
    inten = 2 * (fhkl * fhkl.conj()).real * (1 + np.cos(2 * theta) ** 2) / (np.sin(theta) ** 2 * np.cos(theta))
    tth = np.degrees(2 * theta)
    keys = np.round(tth / TWO_THETA_TOL).astype(np.int64)
    hexa = _is_hexagonal(cell)
    peaks: dict[int, list[Any]] = {}
    for m in range(len(g)):
        t = tuple(int(v) for v in hkl[m])
        n = tuple(-v for v in t)
        if hexa:
            t = (t[0], t[1], -t[0] - t[1], t[2])
            n = (n[0], n[1], -n[0] - n[1], n[2])
        key = int(keys[m])
        if key in peaks:
            peaks[key][0] += float(inten[m])
            peaks[key][1] += [t, n]
        else:
            peaks[key] = [float(inten[m]), [t, n], float(tth[m]), float(1.0 / g[m])]
    top = max(v[0] for v in peaks.values())
    out = []
    for key in sorted(peaks):
        v = peaks[key]
        if v[0] / top * 100 <= SCALED_INTENSITY_TOL:
            continue
        fams: dict[tuple[int, ...], list[tuple[int, ...]]] = {}
        for t in v[1]:
            sig = tuple(sorted(abs(x) for x in t))
            fams.setdefault(sig, []).append(t)
        labels = sorted(max(members) for members in fams.values())
        rep = labels[0]
        out.append({"tth": v[2], "d": v[3], "intensity": v[0] / top * 100,
                    "hkl": (rep[0], rep[1], rep[-1]), "label": "/".join(" ".join(str(x) for x in f) for f in labels),
                    "multiplicity": sum(len(m) for m in fams.values())})
    return out


# ------------------------------------------------------------------------- the pattern
def ka2_strip(tth: np.ndarray, y: np.ndarray, lam1: float, lam2: float, ratio: float) -> np.ndarray:
    """Rachinger: remove, point by point from low angle up, the Ka2 echo of the Ka1
    signal found so far."""
    src = np.degrees(2 * np.arcsin(np.clip(lam1 / lam2 * np.sin(np.radians(tth / 2)), -1, 1)))
    j = np.searchsorted(tth, src, side="right") - 1
    out = y.astype(float).copy()
    for i in range(len(tth)):
        jj = j[i]
        if jj < 0:
            echo = out[0]
        else:
            f = (src[i] - tth[jj]) / (tth[jj + 1] - tth[jj])
            echo = out[jj] + f * (out[jj + 1] - out[jj])
        out[i] = y[i] - ratio * echo
    return out


def detect(tth: np.ndarray, stripped: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    step = (tth[-1] - tth[0]) / (len(tth) - 1)
    sm = np.convolve(stripped, np.ones(5) / 5, mode="same")
    idx, props = find_peaks(sm, prominence=0.0, wlen=int(round(1.0 / step)) | 1)
    base = np.maximum(sm[props["left_bases"]], sm[props["right_bases"]])
    ok = props["prominences"] >= 3.0 * np.sqrt(np.maximum(base, 1.0))
    idx = idx[ok]
    keep = []
    for i in idx:   # a maximum where a stronger peak's Ka2 falls is that Ka2
        if any(abs(ka2_position(tth[j], LAM[0], LAM[1]) - tth[i]) < 0.05 and sm[j] > 1.5 * sm[i] for j in idx):
            continue
        keep.append(i)
    idx = np.asarray(keep, dtype=int)
    widths = peak_widths(sm, idx, rel_height=0.5)[0] * step if len(idx) else np.zeros(0)
    return idx, widths, sm


def _detect_unused(tth: np.ndarray, stripped: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Maxima of the smoothed Ka1 pattern whose prominence stands out of the counting
    noise of their base. Returns (indices, width estimates in degrees, smoothed)."""
    step = (tth[-1] - tth[0]) / (len(tth) - 1)
    window = 2 * int(round(SMOOTH_DEG / step)) + 1
    sm = savgol_filter(stripped, window, 2)
    idx, props = find_peaks(sm, prominence=0.0, wlen=2 * int(round(PROMINENCE_REACH / step)) + 1)
    base = np.maximum(sm[props["left_bases"]], sm[props["right_bases"]])
    ok = props["prominences"] >= PROMINENCE_SIGMA * np.sqrt(np.maximum(base, 1.0)) + PROMINENCE_FLOOR
    idx = idx[ok]
    widths = peak_widths(sm, idx, rel_height=0.5)[0] * step if len(idx) else np.zeros(0)
    return idx, widths, sm


def pseudo_voigt(x: np.ndarray, centre: float, fwhm: float, eta: float) -> np.ndarray:
    """Unit-area pseudo-Voigt."""
    dx = (x - centre) / fwhm
    gauss = math.sqrt(4 * math.log(2) / math.pi) / fwhm * np.exp(-4 * math.log(2) * dx * dx)
    lor = 2 / (math.pi * fwhm) / (1 + 4 * dx * dx)
    return eta * lor + (1 - eta) * gauss


def ka2_position(tth1: float, lam1: float, lam2: float) -> float:
    return math.degrees(2 * math.asin(min(1.0, lam2 / lam1 * math.sin(math.radians(tth1 / 2)))))


def fit_peaks(pat: dict[str, Any], idx: np.ndarray, widths: np.ndarray) -> list[dict[str, float]]:
    """Stage 3: groups of overlapping windows fitted together on the raw counts."""
    tth, y = pat["tth"], pat["y"]
    lam1, lam2, ratio = pat["lambda1"], pat["lambda2"], pat["ratio"]
    pos = tth[idx]
    half = np.maximum(WINDOW_MIN, WINDOW_FWHM * widths)
    groups: list[list[int]] = []
    for i in range(len(idx)):
        if False:
            groups[-1].append(i)
        else:
            groups.append([i])
    fitted: list[dict[str, float]] = []
    for grp in groups:
        first, last = grp[0], grp[-1]
        lo = pos[first] - half[first]
        hi = pos[last] + half[last] + (ka2_position(pos[last], lam1, lam2) - pos[last])
        sel = (tth >= lo) & (tth <= hi)
        x, yy = tth[sel], y[sel]
        if len(x) < 4 * len(grp) + 2:
            continue
        mid = 0.5 * (lo + hi)
        sigma = np.ones_like(yy)
        x0 = [float(np.min(yy)), 0.0]
        lb, ub = [-np.inf, -np.inf], [np.inf, np.inf]
        for i in grp:
            w = max(float(widths[i]), 0.01)
            height = max(float(y[idx[i]]) - x0[0], 1.0)
            x0 += [height * w, float(pos[i]), w, 0.5]
            lb += [0.0, lo, 0.005, 0.0]
            ub += [np.inf, hi, 5.0, 1.0]

        def model(p: np.ndarray) -> np.ndarray:
            out = p[0] + p[1] * (x - mid)
            for k in range(len(grp)):
                area, c, fw, eta = p[2 + 4 * k: 6 + 4 * k]
                c2 = ka2_position(c, lam1, lam2)
                out = out + area * (pseudo_voigt(x, c, fw, eta) + ratio * pseudo_voigt(x, c2, fw, eta))
            return out

        res = least_squares(lambda p: (model(p) - yy) / sigma, np.asarray(x0), bounds=(lb, ub), method="trf",
                            x_scale="jac", xtol=1e-12, ftol=1e-12, gtol=1e-12, max_nfev=4000)
        p = res.x
        for k in range(len(grp)):
            area, c, fw, eta = (float(v) for v in p[2 + 4 * k: 6 + 4 * k])
            fitted.append({"tth": c, "fwhm": fw, "eta": eta, "area": area})
    fitted.sort(key=lambda d: d["tth"])
    return fitted


# ------------------------------------------------------------------------- indexing
def _tth_from_d(d: np.ndarray, lam: float) -> np.ndarray:
    return np.degrees(2 * np.arcsin(np.clip(lam / (2 * d), -1, 1)))


def d_spacing(hkl: np.ndarray, params: np.ndarray, system: str) -> np.ndarray:
    h, k, l = (hkl[:, i].astype(float) for i in range(3))
    if system == "cubic":
        inv = (h * h + k * k + l * l) / params[0] ** 2
    elif system == "tetragonal":
        inv = (h * h + k * k) / params[0] ** 2 + l * l / params[1] ** 2
    else:  # hexagonal
        inv = 4.0 / 3.0 * (h * h + h * k + k * k) / params[0] ** 2 + l * l / params[1] ** 2
    return 1.0 / np.sqrt(inv)


def _match(obs: np.ndarray, pred: np.ndarray, tol: float) -> dict[int, int]:
    """observed index -> reflection index: the nearest reflection within tol; a
    reflection claimed twice goes to the nearer peak (the earlier on a tie)."""
    claim: dict[int, tuple[float, int]] = {}
    for i, t in enumerate(obs):
        j = int(np.argmin(np.abs(pred - t)))
        dist = abs(pred[j] - t)
        if dist <= tol and (j not in claim or dist < claim[j][0]):
            claim[j] = (dist, i)
    return {i: j for j, (_, i) in claim.items()}


def index_and_refine(peaks: list[dict[str, float]], refl: list[dict[str, Any]], cif: dict[str, Any],
                     lam: float) -> dict[str, Any]:
    system = crystal_system(cif["number"])
    a0, c0 = cif["cell"][0], cif["cell"][2]
    start = np.array([a0]) if system == "cubic" else np.array([a0, c0])
    obs = np.array([p["tth"] for p in peaks])
    hkl = np.array([r["hkl"] for r in refl], dtype=float)
    d0 = np.array([r["d"] for r in refl])
    info: dict[str, Any] = {"system": system, "rounds": []}
    best, best_score = 0, -1.0
    for k in range(0, 1):
        pred = _tth_from_d(d0 * (1 + k * SCALE_STEP), lam)
        if len(obs) == 0 or len(pred) == 0:
            break
        dist = np.min(np.abs(obs[:, None] - pred[None, :]), axis=1)
        score = float(np.sum(np.clip(1 - (dist / GRID_TOL) ** 2, 0.0, None)))
        if score > best_score + 1e-12 or (abs(score - best_score) <= 1e-12 and abs(k) < abs(best)):
            best, best_score = k, score
    info["scale"] = 1 + best * SCALE_STEP
    info["grid_score"] = best_score
    params, zero = start * info["scale"], 0.0
    matched = _match(obs, _tth_from_d(d0 * info["scale"], lam), GRID_TOL) if len(refl) else {}
    previous = None
    for _ in range(MAX_ROUNDS):
        key = sorted(matched.items())
        if key == previous:
            break
        previous = key
        params, zero = _refine(obs, hkl, matched, params, zero, system, lam)
        pred = _tth_from_d(d_spacing(hkl, params, system), lam) + zero if len(refl) else np.zeros(0)
        info["rounds"].append({"matched": len(matched), "params": params.tolist(), "zero": zero})
        matched = _match(obs, pred, MATCH_TOL) if len(refl) else {}
    info["params"], info["zero"], info["matched"] = params, zero, matched
    return info


def _refine(obs: np.ndarray, hkl: np.ndarray, matched: dict[int, int], params: np.ndarray, zero: float,
            system: str, lam: float) -> tuple[np.ndarray, float]:
    """Least squares on 2-theta: the cell parameters of the crystal system, plus the
    zero shift when the peaks outnumber the unknowns."""
    if not matched:
        return params, zero
    io = np.array(sorted(matched))
    jr = np.array([matched[i] for i in io])
    t_obs, h = obs[io], hkl[jr]
    n = len(params)
    with_zero = len(io) >= n + 2
    if len(io) < n:
        return params, zero

    def resid(p: np.ndarray) -> np.ndarray:
        z = p[n] if with_zero else 0.0
        return t_obs - (_tth_from_d(d_spacing(h, p[:n], system), lam) + z)

    x0 = np.concatenate([params, [zero if with_zero else 0.0]]) if with_zero else params.copy()
    res = least_squares(resid, x0, method="lm", xtol=1e-14, ftol=1e-14, gtol=1e-14, max_nfev=2000)
    return res.x[:n].copy(), float(res.x[n]) if with_zero else 0.0


# ------------------------------------------------------------------------- the outputs
def analyse(pat: dict[str, Any], cif: dict[str, Any], refl: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
    lam1 = pat["lambda1"]
    LAM[:] = [lam1, pat["lambda2"]]
    stripped = pat["y"].astype(float)
    idx, widths, smooth = detect(pat["tth"], stripped)
    peaks = fit_peaks(pat, idx, widths)
    info = index_and_refine(peaks, refl, cif, lam1)
    system = info["system"]
    params, zero, matched = info["params"], info["zero"], info["matched"]
    a = float(params[0])
    c = a if system == "cubic" else float(params[1])
    a0, c0 = cif["cell"][0], cif["cell"][2]
    if system == "hexagonal":
        vol, vol0 = math.sqrt(3) / 2 * a * a * c, math.sqrt(3) / 2 * a0 * a0 * c0
    else:
        vol, vol0 = a * a * c, a0 * a0 * c0
    io = sorted(matched)
    hkl = np.array([refl[matched[i]]["hkl"] for i in io], dtype=float).reshape(-1, 3)
    calc = _tth_from_d(d_spacing(hkl, params, system), lam1) + zero if io else np.zeros(0)
    resid = np.array([peaks[i]["tth"] for i in io]) - calc
    shifts = [peaks[i]["tth"] - zero - refl[matched[i]]["tth"] for i in io]
    sizes, xs, ys = [], [], []
    for i in io:
        th = math.radians((peaks[i]["tth"] - zero) / 2)
        inst2 = pat["U"] * math.tan(th) ** 2 + pat["V"] * math.tan(th) + pat["W"]
        beta2 = peaks[i]["fwhm"] ** 2 - max(inst2, 0.0)
        if beta2 <= 0:
            continue
        beta = math.radians(math.sqrt(beta2))
        sizes.append(SCHERRER_K * lam1 / (beta * math.cos(th)) / 10.0)
        xs.append(4 * math.sin(th))
        ys.append(beta * math.cos(th))
    if len(xs) >= 2 and np.ptp(xs) > 0:
        slope, icpt = np.polyfit(np.asarray(xs), np.asarray(ys), 1)
        wh_size = SCHERRER_K * lam1 / icpt / 10.0 if icpt > 0 else 0.0
        wh_strain = float(slope) * 100.0
    else:
        wh_size, wh_strain = 0.0, 0.0
    strongest = max(io, key=lambda i: peaks[i]["area"]) if io else None
    out = {
        "peaks_found": len(peaks),
        "peaks_indexed": len(io),
        "indexed_hkl": [refl[matched[i]]["label"] for i in io],
        "unindexed_two_theta_deg": [peaks[i]["tth"] for i in range(len(peaks)) if i not in matched],
        "zero_shift_deg": float(zero),
        "a_angstrom": a,
        "c_angstrom": c,
        "cell_volume_a3": float(vol),
        "strain_a_pct": (a / a0 - 1) * 100,
        "strain_c_pct": (c / c0 - 1) * 100,
        "volume_strain_pct": (vol / vol0 - 1) * 100,
        "peak_shifts_deg": [float(s) for s in shifts],
        "fit_rms_deg": float(math.sqrt(np.mean(resid ** 2))) if len(resid) else 0.0,
        "strongest_hkl": refl[matched[strongest]]["label"] if strongest is not None else "",
        "strongest_fwhm_deg": peaks[strongest]["fwhm"] if strongest is not None else 0.0,
        "scherrer_size_nm": float(np.median(sizes)) if sizes else 0.0,
        "wh_size_nm": float(wh_size),
        "wh_microstrain_pct": float(wh_strain),
    }
    detail = {"stripped": stripped, "smooth": smooth, "detected": idx, "peaks": peaks, "index": info,
              "reflections": refl, "sizes": sizes}
    return out, detail


def solve(scenario: dict) -> dict:
    pat = read_pattern(scenario["inputs"]["pattern"])
    cif = read_cif(scenario["inputs"]["phase"])
    refl = reflections(cif, pat["lambda1"], (float(pat["tth"][0]), float(pat["tth"][-1])))
    return analyse(pat, cif, refl)[0]


def main() -> None:
    scenario = json.load(sys.stdin)
    print(json.dumps(solve(scenario)))


if __name__ == "__main__":
    main()
