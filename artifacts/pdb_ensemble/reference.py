"""Reference solution for the `pdb_ensemble` recon task (standalone: stdlib and numpy).

Reads one scenario JSON object on stdin, prints the output JSON object on stdout.
It reproduces, without gemmi, what the oracle computes with gemmi, stage by stage:

1. read the PDB file the way gemmi does: models, residues keyed by number, insertion
   code and name, alternate locations kept, polymer = the chain up to TER;
2. fit every model onto the first on the chosen atom set: pairs only of atoms without
   an alternate location, least squares, then rounds of rejecting pairs farther than
   `trim_cutoff` times the fit's RMSD (kept when <=), refitting until nothing changes;
3. CA fluctuation per residue over the fitted models (the first-listed CA);
4. the core: residues whose fluctuation is at most `core_cutoff` (at least 4, the
   steadiest, when fewer qualify);
5. an occupancy-weighted refit of every model on the core's main-chain atoms, and the
   medoid: the model with the least mean weighted core RMSD to the other models;
6. contacts in the medoid: atom pairs closer than `contact_cutoff` between different
   residues that are not peptide-bonded, never between two different alternate
   conformers; ligand contacts, polymer contacts, i -> i+4 backbone O...N contacts.
"""
from __future__ import annotations

import json
import sys
from typing import Any

import numpy as np

MAINCHAIN = (("N", "N"), ("CA", "C"), ("C", "C"), ("O", "O"))
PEPTIDE_BOND_SQ = (1.341 * 1.5) ** 2     # C(i)-N(j) closer than this: residues are bonded
MIN_CORE = 4


# ----------------------------------------------------------------------------- reading
def _element(line: str, name: str) -> str:
    el = line[76:78].strip().upper()
    if el:
        return el
    return name.strip()[:1].upper()


def read_pdb(path: str) -> list[dict[str, Any]]:
    """Models as lists of residues: {name, seqid (num, icode), label, het, kind, atoms}.
    kind is polymer for residues before the chain's TER, water for HOH, else ligand."""
    models: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    ter_seen: set[str] = set()

    def model() -> dict[str, Any]:
        nonlocal current
        if current is None:
            current = {"num": len(models) + 1, "residues": []}
            models.append(current)
        return current

    with open(path, encoding="ascii", errors="replace") as fh:
        for raw in fh:
            line = raw.rstrip("\n").ljust(80)
            rec = line[:6]
            if rec == "MODEL ":
                current = {"num": int(line[10:14]), "residues": []}
                models.append(current)
                ter_seen = set()
            elif rec == "ENDMDL":
                current = None
                ter_seen = set()
            elif rec.startswith("TER"):
                ter_seen.add(line[21])
            elif rec in ("ATOM  ", "HETATM"):
                m = model()
                name = line[12:16].strip()
                alt = line[16] if line[16] != " " else ""
                resname = line[17:20].strip()
                chain = line[21]
                num = int(line[22:26])
                icode = line[26].strip()
                xyz = (float(line[30:38]), float(line[38:46]), float(line[46:54]))
                occ = float(line[54:60]) if line[54:60].strip() else 1.0
                res_list = m["residues"]
                last = res_list[-1] if res_list else None
                if (last is None or last["chain"] != chain or last["seqid"] != (num, icode)
                        or last["name"] != resname):
                    if chain in ter_seen:
                        kind = "water" if resname in ("HOH", "WAT", "DOD", "H2O") else "ligand"
                    else:
                        kind = "polymer"
                    last = {"name": resname, "chain": chain, "seqid": (num, icode), "label": f"{num}{icode}",
                            "het": rec == "HETATM", "kind": kind, "atoms": []}
                    res_list.append(last)
                last["atoms"].append({"name": name, "alt": alt, "el": _element(line, name),
                                      "xyz": np.array(xyz, dtype=np.float64), "occ": occ})
    return models


def find_atom(res: dict[str, Any], name: str, el: str | None = None, any_alt: bool = True) -> dict[str, Any] | None:
    """The first atom of that name (and element); any_alt=False: only atoms without altloc."""
    for a in res["atoms"]:
        if a["name"] == name and (any_alt or a["alt"] == "") and (el is None or a["el"] == el):
            return a
    return None


def polymer(model: dict[str, Any]) -> list[dict[str, Any]]:
    chain = model["residues"][0]["chain"]
    return [r for r in model["residues"] if r["chain"] == chain and r["kind"] == "polymer"]


# ------------------------------------------------------------------------ superposition
def kabsch(p1: np.ndarray, p2: np.ndarray, w: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, float]:
    """Rotation R and translation t with R p2 + t closest to p1 (weighted least squares);
    and the weighted RMSD after it."""
    if w is None:
        w = np.ones(len(p1))
    ws = w.sum()
    c1 = (w[:, None] * p1).sum(0) / ws
    c2 = (w[:, None] * p2).sum(0) / ws
    a, b = p1 - c1, p2 - c2
    h = (w[:, None] * b).T @ a
    u, _, vt = np.linalg.svd(h)
    d = np.sign(np.linalg.det(vt.T @ u.T))
    rot = vt.T @ np.diag([1.0, 1.0, d]) @ u.T
    diff = b @ rot.T - a
    rmsd = float(np.sqrt((w * (diff ** 2).sum(1)).sum() / ws))
    return rot, c1 - rot @ c2, rmsd


def fit_pairs(ref: list[dict[str, Any]], mob: list[dict[str, Any]], selection: str) -> tuple[np.ndarray, np.ndarray]:
    p1, p2 = [], []
    for r1, r2 in zip(ref, mob):
        if r1["name"] != r2["name"]:
            continue
        if selection == "all":
            wanted = [(a["name"], a["el"]) for a in r1["atoms"] if a["alt"] == ""]
        elif selection == "mainchain":
            wanted = list(MAINCHAIN)
        else:
            wanted = [("CA", "C")]
        for name, el in wanted:
            a1 = find_atom(r1, name, el, any_alt=False)
            a2 = find_atom(r2, name, el, any_alt=False)
            if a1 is not None and a2 is not None:
                p1.append(a1["xyz"])
                p2.append(a2["xyz"])
    return np.array(p1).reshape(-1, 3), np.array(p2).reshape(-1, 3)


def trimmed_fit(p1: np.ndarray, p2: np.ndarray, cycles: int, cutoff: float) -> tuple[np.ndarray, np.ndarray, float, int]:
    rot, t, rmsd = kabsch(p1, p2)
    for _ in range(cycles):
        d2 = (((p2 @ rot.T + t) - p1) ** 2).sum(1)
        keep = d2 <= (cutoff * rmsd) ** 2
        if keep.all():
            break
        p1, p2 = p1[keep], p2[keep]
        rot, t, rmsd = kabsch(p1, p2)
    return rot, t, rmsd, len(p1)


def move(model: dict[str, Any], rot: np.ndarray, t: np.ndarray) -> None:
    for res in model["residues"]:
        for a in res["atoms"]:
            a["xyz"] = rot @ a["xyz"] + t


# ---------------------------------------------------------------------------- contacts
def contacts(model: dict[str, Any], cutoff: float) -> list[tuple[int, int, int, int]]:
    """(residue index, atom index) pairs closer than cutoff, each pair once, as gemmi's
    ContactSearch with AdjacentResidues reports them."""
    residues = model["residues"]
    flat = [(ri, ai, a) for ri, r in enumerate(residues) for ai, a in enumerate(r["atoms"]) if a["el"] != "H"]
    xyz = np.array([a["xyz"] for _, _, a in flat])
    alt = np.array([a["alt"] for _, _, a in flat])
    rid = np.array([ri for ri, _, _ in flat])
    d2 = ((xyz[:, None, :] - xyz[None, :, :]) ** 2).sum(-1)
    close = np.argwhere(np.triu(d2 < cutoff * cutoff, 1))
    bonded: set[tuple[int, int]] = set()
    for i, r in enumerate(residues):
        c = find_atom(r, "C", "C")
        if c is None:
            continue
        for j, s in enumerate(residues):
            n = find_atom(s, "N", "N")
            if j != i and n is not None and ((c["xyz"] - n["xyz"]) ** 2).sum() < PEPTIDE_BOND_SQ:
                bonded.add((i, j))
                bonded.add((j, i))
    out = []
    for i, j in close:
        if rid[i] == rid[j] or (int(rid[i]), int(rid[j])) in bonded:
            continue
        if alt[i] and alt[j] and alt[i] != alt[j]:
            continue
        out.append((int(rid[i]), flat[i][1], int(rid[j]), flat[j][1]))
    return out


# ------------------------------------------------------------------------------ solve
def process(scenario: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    p = scenario["parameters"]
    models = read_pdb(scenario["inputs"]["ensemble"])
    polys = [polymer(m) for m in models]
    ref = polys[0]
    n_res = len(ref)
    fits = []
    for k in range(1, len(models)):
        p1, p2 = fit_pairs(ref, polys[k], p["selection"])
        rot, t, rmsd, kept = trimmed_fit(p1, p2, int(p["trim_cycles"]), float(p["trim_cutoff"]))
        move(models[k], rot, t)
        fits.append({"model": models[k]["num"], "pairs": len(p1), "kept": kept, "rmsd": rmsd})

    rmsf: list[float | None] = []
    for i in range(n_res):
        pts = [a["xyz"] for a in (find_atom(poly[i], "CA", "C") for poly in polys) if a is not None]
        if len(pts) >= 2:
            arr = np.array(pts)
            rmsf.append(float(np.sqrt(((arr - arr.mean(0)) ** 2).sum(1).mean())))
        else:
            rmsf.append(None)
    valid = [i for i in range(n_res) if rmsf[i] is not None]
    core = [i for i in valid if rmsf[i] <= float(p["core_cutoff"])]
    if len(core) < MIN_CORE:
        core = sorted(sorted(valid, key=lambda i: (rmsf[i], i))[:MIN_CORE])

    def core_pairs(a: int, b: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        p1, p2, w = [], [], []
        for i in core:
            for name, _ in MAINCHAIN:
                x = find_atom(polys[a][i], name)
                y = find_atom(polys[b][i], name)
                if x is not None and y is not None:
                    p1.append(x["xyz"])
                    p2.append(y["xyz"])
                    w.append(x["occ"] * y["occ"])
        return np.array(p1).reshape(-1, 3), np.array(p2).reshape(-1, 3), np.array(w)

    core_rmsd = []
    for k in range(1, len(models)):
        p1, p2, w = core_pairs(0, k)
        rot, t, rmsd = kabsch(p1, p2, w)
        move(models[k], rot, t)
        core_rmsd.append(rmsd)
        fits[k - 1].update(core_pairs=len(p1), core_weight=float(w.sum()), core_rmsd=rmsd)
    n = len(models)
    pair = np.zeros((n, n))
    for a in range(n):
        for b in range(a + 1, n):
            pair[a, b] = pair[b, a] = kabsch(*core_pairs(a, b))[2]
    mean = pair.sum(1) / (n - 1)
    med = int(np.argmin(mean))

    medoid = models[med]
    found = contacts(medoid, float(p["contact_cutoff"]))
    residues = medoid["residues"]
    pos = {id(r): i for i, r in enumerate(polymer(medoid))}
    lig = poly_c = hb = 0
    site: set[str] = set()
    wet: set[int] = set()
    per_res = [0] * n_res
    for ri, ai, rj, aj in found:
        r1, r2 = residues[ri], residues[rj]
        kinds = {r1["kind"], r2["kind"]}
        if kinds == {"ligand", "water"}:
            wet.add(ri if r1["kind"] == "water" else rj)
        elif kinds == {"polymer", "ligand"}:
            lig += 1
            pr = r1 if r1["kind"] == "polymer" else r2
            site.add(pr["label"])
            per_res[pos[id(pr)]] += 1
        elif kinds == {"polymer"}:
            poly_c += 1
            n1, n2 = r1["atoms"][ai]["name"], r2["atoms"][aj]["name"]
            i1, i2 = pos[id(r1)], pos[id(r2)]
            if (n1 == "O" and n2 == "N" and i2 - i1 == 4) or (n1 == "N" and n2 == "O" and i1 - i2 == 4):
                hb += 1
    out = {
        "n_residues": n_res,
        "fit_pairs": [f["kept"] for f in fits],
        "fit_rmsd": [f["rmsd"] for f in fits],
        "mean_fit_rmsd": float(np.mean([f["rmsd"] for f in fits])),
        "rmsf_mean": float(np.mean([rmsf[i] for i in valid])),
        "steadiest": ref[min(valid, key=lambda i: (rmsf[i], i))]["label"],
        "core": [ref[i]["label"] for i in core],
        "n_core": len(core),
        "core_rmsd": core_rmsd,
        "medoid_model": models[med]["num"],
        "medoid_rmsd": float(mean[med]),
        "ligand_contacts": lig,
        "ligand_site": sorted(site),
        "ligand_waters": len(wet),
        "polymer_contacts": poly_c,
        "helical_hbonds": hb,
    }
    detail = {"fits": fits, "rmsf": rmsf, "core": core, "pair_mean": mean.tolist(), "labels": [r["label"] for r in ref],
              "contacts": found, "per_res_ligand": per_res}
    return out, detail


def solve(scenario: dict[str, Any]) -> dict[str, Any]:
    return process(scenario)[0]


def main() -> None:
    scenario = json.load(sys.stdin)
    print(json.dumps(solve(scenario)))


if __name__ == "__main__":
    main()
