"""The synthetic NMR-like ensemble of `pdb_ensemble`, written as PDB text.

A small helical protein is built from ideal backbone geometry (NeRF from phi/psi),
given side chains with their real atom names, a bound ligand and a few waters, and
spread into an ensemble: hinge motions of the tails, smooth fluctuations of the loop
and the helices, per-atom jitter and an arbitrary rigid placement of every model. The
file carries the defects deposited ensembles have: alternate locations (side chains,
sometimes a whole residue), insertion codes, a negatively numbered tag, selenomethionine
as HETATM inside the chain, residues missing from a loop, atoms missing from some
models, and B-factors / occupancies that vary.

Deterministic in the parameters (everything random comes from ``seed``).
"""
from __future__ import annotations

import math
from typing import Any

# heavy side-chain atoms per residue type, in PDB order (CB first)
SIDE = {
    "GLY": [], "ALA": ["CB"], "SER": ["CB", "OG"], "CYS": ["CB", "SG"], "VAL": ["CB", "CG1", "CG2"],
    "THR": ["CB", "OG1", "CG2"], "LEU": ["CB", "CG", "CD1", "CD2"], "ILE": ["CB", "CG1", "CG2", "CD1"],
    "ASN": ["CB", "CG", "OD1", "ND2"], "ASP": ["CB", "CG", "OD1", "OD2"], "GLN": ["CB", "CG", "CD", "OE1", "NE2"],
    "GLU": ["CB", "CG", "CD", "OE1", "OE2"], "LYS": ["CB", "CG", "CD", "CE", "NZ"], "MET": ["CB", "CG", "SD", "CE"],
    "MSE": ["CB", "CG", "SE", "CE"], "PHE": ["CB", "CG", "CD1", "CD2", "CE1", "CE2", "CZ"],
    "ARG": ["CB", "CG", "CD", "NE", "CZ", "NH1", "NH2"], "PRO": ["CB", "CG", "CD"],
    "HIS": ["CB", "CG", "ND1", "CD2", "CE1", "NE2"], "TYR": ["CB", "CG", "CD1", "CD2", "CE1", "CE2", "CZ", "OH"],
}
# the parent atom of each side-chain atom (a tree rooted at CA)
PARENT = {"CB": "CA", "OG": "CB", "SG": "CB", "CG1": "CB", "CG2": "CB", "OG1": "CB", "CG": "CB", "CD1": "CG",
          "CD2": "CG", "OD1": "CG", "OD2": "CG", "ND2": "CG", "CD": "CG", "OE1": "CD", "OE2": "CD", "NE2": "CD",
          "CE": "CD", "NZ": "CE", "SD": "CG", "SE": "CG", "CE1": "CD1", "CE2": "CD2", "CZ": "CE1", "NE": "CD",
          "NH1": "CZ", "NH2": "CZ", "ND1": "CG", "OH": "CZ"}
HELIX_AA = ["ALA", "LEU", "GLU", "LYS", "ARG", "GLN", "MET", "ILE", "ALA", "LEU", "GLU", "LYS"]
LOOP_AA = ["GLY", "SER", "ASN", "ASP", "PRO", "THR", "GLY", "SER", "HIS", "TYR", "PHE", "VAL", "CYS"]
LIGAND = "BEN"      # benzamidine: ring C1..C6, C7 on C1, amidine N1 N2 on C7
LIGAND_ATOMS = ["C1", "C2", "C3", "C4", "C5", "C6", "C7", "N1", "N2"]


def _element(name: str, resname: str) -> str:
    if resname == "MSE" and name == "SE":
        return "SE"
    return name[0]


def _place(a: Any, b: Any, c: Any, bond: float, angle: float, torsion: float) -> Any:
    """NeRF: the atom d bonded to c with |cd| = bond, angle bcd, torsion abcd (degrees)."""
    import numpy as np

    ang, tor = math.radians(angle), math.radians(torsion)
    ax, ay, az = float(a[0]), float(a[1]), float(a[2])
    bx, by, bz = float(b[0]), float(b[1]), float(b[2])
    cx, cy, cz = float(c[0]), float(c[1]), float(c[2])
    ux, uy, uz = cx - bx, cy - by, cz - bz
    lu = math.sqrt(ux * ux + uy * uy + uz * uz)
    ux, uy, uz = ux / lu, uy / lu, uz / lu
    vx, vy, vz = bx - ax, by - ay, bz - az
    nx, ny, nz = vy * uz - vz * uy, vz * ux - vx * uz, vx * uy - vy * ux
    ln = math.sqrt(nx * nx + ny * ny + nz * nz)
    nx, ny, nz = nx / ln, ny / ln, nz / ln
    mx, my, mz = ny * uz - nz * uy, nz * ux - nx * uz, nx * uy - ny * ux
    d0 = -bond * math.cos(ang)
    d1 = bond * math.sin(ang) * math.cos(tor)
    d2 = bond * math.sin(ang) * math.sin(tor)
    return np.array([cx + d0 * ux + d1 * mx + d2 * nx, cy + d0 * uy + d1 * my + d2 * ny,
                     cz + d0 * uz + d1 * mz + d2 * nz])


def _backbone(phi: list[float], psi: list[float]) -> list[dict[str, Any]]:
    import numpy as np

    n_res = len(phi)
    res: list[dict[str, Any]] = []
    n = np.array([0.0, 0.0, 0.0])
    ca = np.array([1.458, 0.0, 0.0])
    c = _place(np.array([0.0, 1.0, 0.0]), n, ca, 1.525, 111.2, -60.0)
    for i in range(n_res):
        if i > 0:
            prev = res[-1]
            n = _place(prev["N"], prev["CA"], prev["C"], 1.329, 116.2, psi[i - 1])
            ca = _place(prev["CA"], prev["C"], n, 1.458, 121.7, 180.0)
            c = _place(prev["C"], n, ca, 1.525, 111.2, phi[i])
        res.append({"N": n, "CA": ca, "C": c})
    for i in range(n_res):
        r = res[i]
        if i + 1 < n_res:
            r["O"] = _place(res[i + 1]["N"], r["CA"], r["C"], 1.231, 120.5, 180.0)
        else:
            r["O"] = _place(r["N"], r["CA"], r["C"], 1.231, 120.5, psi[i] + 180.0)
    return res


def _side_chain(r: dict[str, Any], resname: str, chis: list[float]) -> None:
    names = SIDE[resname]
    if not names:
        return
    r["CB"] = _place(r["C"], r["N"], r["CA"], 1.53, 110.5, -122.5)   # L-amino acid
    up = {"CB": "CA", "CA": "N", "N": "C"}
    for k, name in enumerate(names[1:]):
        parent = {("ILE", "CD1"): "CG1", ("HIS", "CE1"): "ND1", ("HIS", "NE2"): "CD2", ("ARG", "CZ"): "NE",
                  ("MET", "CE"): "SD", ("MSE", "CE"): "SE"}.get((resname, name),
                                                                                         PARENT[name])
        gp = up[parent]
        sib = [x for x in names[1:k + 1] if up.get(x) == parent]
        tor = chis[k % len(chis)] + 120.0 * len(sib)
        heavy = name in ("SD", "SE", "SG") or parent in ("SD", "SE")
        bond = 1.9 if heavy else 1.45 if name[0] in "NO" else 1.52
        r[name] = _place(r[up[gp]], r[gp], r[parent], bond, 111.0, tor)
        up[name] = parent


def _rotation(axis: Any, angle: float) -> Any:
    import numpy as np

    axis = axis / np.linalg.norm(axis)
    x, y, z = axis
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c + x * x * (1 - c), x * y * (1 - c) - z * s, x * z * (1 - c) + y * s],
                     [y * x * (1 - c) + z * s, c + y * y * (1 - c), y * z * (1 - c) - x * s],
                     [z * x * (1 - c) - y * s, z * y * (1 - c) + x * s, c + z * z * (1 - c)]])


def _random_rotation(rng: Any) -> Any:
    import numpy as np

    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    a, b, c, d = q
    return np.array([[a * a + b * b - c * c - d * d, 2 * (b * c - a * d), 2 * (b * d + a * c)],
                     [2 * (b * c + a * d), a * a - b * b + c * c - d * d, 2 * (c * d - a * b)],
                     [2 * (b * d - a * c), 2 * (c * d + a * b), a * a - b * b - c * c + d * d]])


def _fold(rng: Any, n_res: int) -> tuple[list[str], list[dict[str, Any]], list[str]]:
    """Sequence, coordinates and secondary structure of a compact helix-loop-helix."""
    import numpy as np

    n_tail = int(rng.integers(3, 6))
    c_tail = int(rng.integers(3, 6))
    loop = int(rng.integers(3, 6))
    helices = n_res - n_tail - c_tail - loop
    h1 = helices // 2 + int(rng.integers(-1, 2))
    h2 = helices - h1
    ss = ["T"] * n_tail + ["H"] * h1 + ["L"] * loop + ["H"] * h2 + ["T"] * c_tail
    seq = []
    for s in ss:
        pool = HELIX_AA if s == "H" else LOOP_AA
        seq.append(pool[int(rng.integers(0, len(pool)))])
    best: tuple[float, Any] | None = None
    for _attempt in range(30):
        phi, psi = [], []
        for s in ss:
            if s == "H":
                phi.append(-62.0 + rng.normal(0, 3)), psi.append(-41.0 + rng.normal(0, 3))
            elif s == "L":
                k = int(rng.integers(0, 4))
                pp = [(-75.0, 145.0), (-90.0, 0.0), (60.0, 40.0), (-120.0, 130.0)][k]
                phi.append(pp[0] + rng.normal(0, 15)), psi.append(pp[1] + rng.normal(0, 15))
            else:
                phi.append(-75.0 + rng.normal(0, 20)), psi.append(140.0 + rng.normal(0, 20))
        bb = _backbone(phi, psi)
        ca = np.array([r["CA"] for r in bb])
        d = np.linalg.norm(ca[:, None] - ca[None], axis=2)
        iu = np.triu_indices(n_res, 3)
        if d[iu].min() < 4.2:
            continue
        core = np.array([s != "T" for s in ss])
        rg = float(np.sqrt(((ca[core] - ca[core].mean(0)) ** 2).sum(1).mean()))
        if best is None or rg < best[0]:
            best = (rg, bb)
    if best is None:
        raise RuntimeError("no clash-free fold found")
    bb = best[1]
    for i, r in enumerate(bb):
        chis = [float(rng.choice([-60.0, 180.0, 60.0])) + rng.normal(0, 8) for _ in range(3)]
        _side_chain(r, seq[i], chis)
    return seq, bb, ss


def _ligand(rng: Any, atoms: Any) -> Any:
    """Benzamidine coordinates in a shallow surface groove of the protein."""
    import numpy as np

    ring = np.array([[1.39 * math.cos(math.radians(60 * k)), 1.39 * math.sin(math.radians(60 * k)), 0.0]
                     for k in range(6)])
    c7 = np.array([1.39 + 1.48, 0.0, 0.0])
    n1 = c7 + np.array([0.67, 1.16, 0.0])
    n2 = c7 + np.array([0.67, -1.16, 0.0])
    lig = np.vstack([ring, c7, n1, n2])
    lig -= lig.mean(0)
    centre = atoms.mean(0)
    radii = np.arange(2.0, 30.0, 0.5)
    best: tuple[int, Any] | None = None
    for _ in range(80):
        rot = _random_rotation(rng)
        direction = rng.normal(size=3)
        direction /= np.linalg.norm(direction)
        body = lig @ rot.T + centre
        # the first radius along the direction where no ligand atom comes within 3.3 A
        line = centre + radii[:, None] * direction
        dc = np.sqrt(((line[:, None, :] - atoms[None]) ** 2).sum(-1)).min(axis=1)
        r = None
        for k in np.flatnonzero(dc >= 3.3):
            if np.sqrt((((body + radii[k] * direction)[:, None, :] - atoms[None]) ** 2).sum(-1)).min() >= 3.3:
                r = radii[k]
                break
        if r is None:
            continue
        near = int((np.linalg.norm(atoms - (centre + r * direction), axis=1) < 8.0).sum())
        if best is None or near > best[0]:
            best = (near, body + r * direction)
    if best is None:
        raise RuntimeError("no place for the ligand")
    return best[1]


def build(params: dict[str, Any]) -> str:
    """The ensemble of one scenario as PDB text."""
    import numpy as np

    rng = np.random.default_rng(int(params["seed"]))
    n_res = int(params["n_residues"])
    n_models = int(params["n_models"])
    flex = float(params["flexibility"])
    alt_frac = float(params["altloc_fraction"])
    miss_frac = float(params["missing_fraction"])
    gap = bool(params["chain_break"])
    mse = bool(params["selenomethionine"])

    n_total = n_res + (2 if gap else 0)
    seq, bb, ss = _fold(rng, n_total)
    if mse:
        mets = [i for i, s in enumerate(ss) if s == "H"]
        for i in rng.choice(mets, size=min(2, len(mets)), replace=False):
            seq[int(i)] = "MSE"
            chis = [float(rng.choice([-60.0, 180.0])) for _ in range(3)]
            for k in list(bb[int(i)]):
                if k not in ("N", "CA", "C", "O"):
                    del bb[int(i)][k]
            _side_chain(bb[int(i)], "MSE", chis)
    # residue numbering: a tag numbered from zero or below, insertion codes in the loop
    start = int(rng.choice([1, 1, -2, -3, 0, 5]))
    loop_idx = [i for i, s in enumerate(ss) if s == "L"]
    ins_at = int(loop_idx[int(rng.integers(0, len(loop_idx)))])
    drop: set[int] = set()
    if gap:   # two residues of the second helix's start were never modelled: a real chain break
        h2_start = max(loop_idx) + 1
        drop = {h2_start + 1, h2_start + 2}
    labels: list[tuple[int, str]] = []
    num = start
    for i in range(n_total):
        if i == ins_at:
            labels.append((num - 1, "A"))
        else:
            labels.append((num, " "))
            num += 1
    keep = [i for i in range(n_total) if i not in drop]

    atoms_all = np.array([p for i in keep for k, p in bb[i].items()])
    lig = _ligand(rng, atoms_all)

    # which residues carry alternate conformers (same residues in every model)
    candidates = [i for i in keep if len(SIDE[seq[i]]) >= 2]
    n_alt = int(round(alt_frac * len(keep)))
    alt_res = set(int(i) for i in rng.choice(candidates, size=min(n_alt, len(candidates)), replace=False))
    whole_alt = set(i for i in alt_res if rng.random() < 0.35)
    alt_occ = {i: [(0.5, 0.5), (0.6, 0.4), (0.7, 0.3), (0.4, 0.6), (0.35, 0.65)][int(rng.integers(0, 5))]
               for i in alt_res}
    alt_rot = {i: float(rng.choice([-120.0, 120.0])) for i in alt_res}

    # mobility per residue: hinge angles for the tails, smooth amplitudes elsewhere
    amp = np.array([{"H": 0.18, "L": 0.7, "T": 0.5}[s] for s in ss]) * flex
    n_tail = ss.index("H")
    c_first = len(ss) - ss[::-1].index("H")

    polar = [(i, k) for i in keep for k in bb[i] if k[0] in "NO" and k not in ("N",)]
    n_wat = int(rng.integers(3, 9))

    b_base = {i: 8.0 + 25.0 * amp[i] / max(flex, 1e-9) * min(flex, 2.0) for i in range(n_total)}

    lines = ["HEADER    DE NOVO PROTEIN                         01-JAN-24   0XXX",
             "TITLE     SYNTHETIC SOLUTION ENSEMBLE OF A HELICAL HAIRPIN WITH BOUND BENZAMIDINE",
             "EXPDTA    SOLUTION NMR",
             "CRYST1    1.000    1.000    1.000  90.00  90.00  90.00 P 1           1",
             f"NUMMDL    {n_models:<4d}",
             "REMARK 210 ",
             "REMARK 210 EXPERIMENTAL DETAILS",
             "REMARK 210  EXPERIMENT TYPE                : NMR",
             "REMARK 210  CONFORMERS, NUMBER SUBMITTED   : %d" % n_models]
    for m in range(n_models):
        coords = {i: {k: v.copy() for k, v in bb[i].items()} for i in range(n_total)}
        # tails: a hinge at every residue, rotating everything towards the chain end
        for lo, hi, step in ((n_tail - 1, -1, -1), (c_first, n_total, 1)):
            for j in range(lo, hi, step):
                axis = rng.normal(size=3)
                rot = _rotation(axis, math.radians(rng.normal(0.0, 9.0 * flex)))
                piv = coords[j]["CA"].copy()
                idx = range(0, j) if step < 0 else range(j + 1, n_total)
                for t in idx:
                    for k in coords[t]:
                        coords[t][k] = (coords[t][k] - piv) @ rot.T + piv
                # the atoms of residue j on the tail side of CA move with it
                for k in (["N"] if step < 0 else ["C", "O"]):
                    coords[j][k] = (coords[j][k] - piv) @ rot.T + piv
        # smooth fluctuations along the chain elsewhere
        raw = rng.normal(size=(n_total + 6, 3))
        kernel = np.array([1, 2, 3, 4, 3, 2, 1], dtype=float)
        kernel /= np.sqrt((kernel ** 2).sum())
        field = np.stack([np.convolve(raw[:, d], kernel, mode="valid") for d in range(3)], axis=1)
        for i in range(n_tail, c_first):
            for k in coords[i]:
                coords[i][k] = coords[i][k] + amp[i] * field[i]
        lig_m = lig + amp[n_tail:c_first].mean() * field[(n_tail + c_first) // 2] + rng.normal(0, 0.15 * flex, 3)
        rot = _random_rotation(rng)
        shift = rng.uniform(-12.0, 12.0, 3)
        lines.append(f"MODEL     {m + 1:4d}")
        serial = 0

        def emit(record: str, name: str, alt: str, resname: str, resnum: int, icode: str, xyz: Any,
                 occ: float, b: float) -> None:
            nonlocal serial
            serial += 1
            x, y, z = (np.asarray(xyz) @ rot.T + shift) + rng.normal(0, 0.04, 3)
            el = _element(name, resname)
            aname = name if len(name) == 4 or len(el) == 2 else " " + name
            lines.append(f"{record:<6s}{serial:5d} {aname:<4s}{alt}{resname:>3s} A{resnum:4d}{icode}   "
                         f"{x:8.3f}{y:8.3f}{z:8.3f}{occ:6.2f}{b:6.2f}          {el:>2s}")

        for i in keep:
            resname = seq[i]
            record = "HETATM" if resname == "MSE" else "ATOM"
            resnum, icode = labels[i]
            names = ["N", "CA", "C", "O"] + SIDE[resname]
            missing: set[str] = set()
            if rng.random() < miss_frac:
                kind = rng.random()
                if kind < 0.25:
                    missing = {"O"}
                elif kind < 0.4:
                    missing = {"CA"}
                else:
                    tip = SIDE[resname][1:]
                    missing = set(tip[len(tip) // 2:]) if tip else {"O"}
            b0 = b_base[i] + rng.normal(0, 1.5)
            for name in names:
                if name in missing:
                    continue
                xyz = coords[i][name]
                b = max(2.0, b0 + (4.0 if name not in ("N", "CA", "C", "O") else 0.0) + rng.normal(0, 0.8))
                split = i in alt_res and (i in whole_alt or name not in ("N", "CA", "C", "O", "CB"))
                if not split:
                    emit(record, name, " ", resname, resnum, icode, xyz, 1.0, b)
                    continue
                oa, ob = alt_occ[i]
                if name in ("N", "CA", "C", "O", "CB"):
                    other = xyz + rng.normal(0, 0.25, 3)
                else:
                    axis = coords[i]["CB"] - coords[i]["CA"]
                    other = (xyz - coords[i]["CA"]) @ _rotation(axis, math.radians(alt_rot[i])).T + coords[i]["CA"]
                emit(record, name, "A", resname, resnum, icode, xyz, oa, b)
                emit(record, name, "B", resname, resnum, icode, other, ob, b + 3.0)
        last = keep[-1]
        serial += 1
        lines.append(f"TER   {serial:5d}      {seq[last]:>3s} A{labels[last][0]:4d}{labels[last][1]}")
        lig_res = labels[last][0] + 100 - (labels[last][0] % 100) if labels[last][0] > 0 else 101
        for k, name in enumerate(LIGAND_ATOMS):
            emit("HETATM", name, " ", LIGAND, lig_res, " ", lig_m[k] + rng.normal(0, 0.03, 3), 1.0, 25.0 + 3 * flex)
        # waters: in the first hydration shell of polar atoms (protein, or the ligand's amidine),
        # not inside the protein; some were modelled at two alternate sites
        placed: list[tuple[Any, Any]] = []
        tries = 0
        heavy = np.array([p for i in keep for p in coords[i].values()] + list(lig_m))
        while len(placed) < n_wat and tries < 500:
            tries += 1
            if rng.random() < 0.4:
                anchor = lig_m[7 + int(rng.integers(0, 2))]
            else:
                i, k = polar[int(rng.integers(0, len(polar)))]
                anchor = coords[i][k]
            d = rng.normal(size=3)
            w = anchor + rng.uniform(2.7, 3.3) * d / np.linalg.norm(d)
            if np.linalg.norm(heavy - w, axis=1).min() < 2.6:
                continue
            if any(np.linalg.norm(w - p) < 2.7 for p, _ in placed):
                continue
            alt = None
            if rng.random() < 0.25:
                d = rng.normal(size=3)
                alt = w + rng.uniform(0.6, 1.2) * d / np.linalg.norm(d)
            placed.append((w, alt))
        for k, (w, alt) in enumerate(placed):
            b = 30.0 + rng.normal(0, 4)
            if alt is None:
                emit("HETATM", "O", " ", "HOH", lig_res + 100 + k, " ", w, 1.0, b)
            else:
                emit("HETATM", "O", "A", "HOH", lig_res + 100 + k, " ", w, 0.5, b)
                emit("HETATM", "O", "B", "HOH", lig_res + 100 + k, " ", alt, 0.5, b)
        lines.append("ENDMDL")
    lines.append("END")
    return "\n".join(line.ljust(80) if line.startswith(("ATOM", "HETATM")) else line for line in lines) + "\n"
