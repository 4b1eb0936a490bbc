"""Baseline `textbook`: the ensemble analysis as a structural-biology tutorial writes it.

Written from the task's instruction alone (it does not know the recipe): the PDB file is
read the way Biopython's PDBParser presents it (for each atom with alternate locations,
the conformer with the highest occupancy; standard residues are the ATOM records, so the
HETATM records are hetero groups), every model is fitted onto the first with the Kabsch
algorithm on the selected atoms, outliers beyond trim_cutoff x RMSD are dropped for
trim_cycles rounds, the RMSF of the CA atoms gives the core, the core's backbone atoms
refit the ensemble, the medoid has the least mean pairwise RMSD, and contacts are atom
pairs within the cutoff between residues that are not sequence neighbours.
"""
from __future__ import annotations

import json
import sys
from typing import Any

import numpy as np


def read_pdb(path: str) -> list[dict[str, Any]]:
    models: list[dict[str, Any]] = []
    cur: dict[str, Any] | None = None
    for line in open(path, encoding="ascii", errors="replace"):
        rec = line[:6]
        if rec == "MODEL ":
            cur = {"num": int(line[10:14]), "residues": {}}
            models.append(cur)
        elif rec in ("ATOM  ", "HETATM"):
            if cur is None:
                cur = {"num": 1, "residues": {}}
                models.append(cur)
            resname = line[17:20].strip()
            key = (line[21], int(line[22:26]), line[26].strip())
            res = cur["residues"].setdefault(key, {"name": resname, "het": rec == "HETATM", "atoms": {},
                                                   "label": f"{key[1]}{key[2]}", "num": key[1]})
            name = line[12:16].strip()
            occ = float(line[54:60])
            xyz = np.array([float(line[30:38]), float(line[38:46]), float(line[46:54])])
            # DisorderedAtom: the conformer with the highest occupancy represents the atom
            if name not in res["atoms"] or occ > res["atoms"][name]["occ"]:
                res["atoms"][name] = {"xyz": xyz, "occ": occ}
    for m in models:
        m["residues"] = list(m["residues"].values())
    return models


def kabsch(p: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    pc, qc = p.mean(0), q.mean(0)
    h = (q - qc).T @ (p - pc)
    u, _, vt = np.linalg.svd(h)
    d = np.sign(np.linalg.det(vt.T @ u.T))
    r = vt.T @ np.diag([1, 1, d]) @ u.T
    t = pc - r @ qc
    return r, t, float(np.sqrt((((q @ r.T + t) - p) ** 2).sum(1).mean()))


def main() -> None:
    sc = json.load(sys.stdin)
    p = sc["parameters"]
    models = read_pdb(sc["inputs"]["ensemble"])
    chains = [[r for r in m["residues"] if not r["het"]] for m in models]
    names = {"CA": ["CA"], "mainchain": ["N", "CA", "C", "O"]}
    n = len(models)
    ref = chains[0]

    def atoms(a: int, b: int, which: list[str] | None, residues: list[int] | None = None):
        pa, pb = [], []
        for i, (r1, r2) in enumerate(zip(chains[a], chains[b])):
            if residues is not None and i not in residues:
                continue
            for nm in (which if which is not None else list(r1["atoms"])):
                if nm in r1["atoms"] and nm in r2["atoms"]:
                    pa.append(r1["atoms"][nm]["xyz"])
                    pb.append(r2["atoms"][nm]["xyz"])
        return np.array(pa), np.array(pb)

    def move(k: int, r: np.ndarray, t: np.ndarray) -> None:
        for res in models[k]["residues"]:
            for a in res["atoms"].values():
                a["xyz"] = r @ a["xyz"] + t

    fit_pairs, fit_rmsd = [], []
    for k in range(1, n):
        pa, pb = atoms(0, k, names.get(p["selection"]))
        r, t, rmsd = kabsch(pa, pb)
        for _ in range(int(p["trim_cycles"])):
            keep = np.linalg.norm(pb @ r.T + t - pa, axis=1) < p["trim_cutoff"] * rmsd
            pa, pb = pa[keep], pb[keep]
            r, t, rmsd = kabsch(pa, pb)
        move(k, r, t)
        fit_pairs.append(len(pa))
        fit_rmsd.append(rmsd)

    rmsf = []
    for i in range(len(ref)):
        pts = np.array([c[i]["atoms"]["CA"]["xyz"] for c in chains if "CA" in c[i]["atoms"]]).reshape(-1, 3)
        rmsf.append(float(np.sqrt(((pts - pts.mean(0)) ** 2).sum(1).mean())) if len(pts) > 1 else 0.0)
    core = [i for i in range(len(ref)) if rmsf[i] < p["core_cutoff"]] or list(range(len(ref)))
    core_rmsd = []
    for k in range(1, n):
        r, t, rmsd = kabsch(*atoms(0, k, ["N", "CA", "C", "O"], core))
        move(k, r, t)
        core_rmsd.append(rmsd)
    mean = np.zeros(n)
    for a in range(n):
        for b in range(n):
            if a != b:
                mean[a] += kabsch(*atoms(a, b, ["N", "CA", "C", "O"], core))[2] / (n - 1)
    med = int(np.argmin(mean))

    residues = models[med]["residues"]
    flat = [(ri, nm, a["xyz"]) for ri, res in enumerate(residues) for nm, a in res["atoms"].items()]
    xyz = np.array([f[2] for f in flat])
    d = np.linalg.norm(xyz[:, None] - xyz[None], axis=2)
    lig = poly = hb = 0
    site, wet = set(), set()
    for i, j in np.argwhere(np.triu(d <= p["contact_cutoff"], 1)):
        r1, r2 = residues[flat[i][0]], residues[flat[j][0]]
        if r1 is r2:
            continue
        kinds = {"lig" if r["het"] and r["name"] != "HOH" else "wat" if r["het"] else "pol" for r in (r1, r2)}
        if kinds == {"lig", "wat"}:
            wet.add(id(r1 if r1["name"] == "HOH" else r2))
        elif kinds == {"lig", "pol"}:
            lig += 1
            site.add((r1 if not r1["het"] else r2)["label"])
        elif kinds == {"pol"} and abs(r1["num"] - r2["num"]) > 1:
            poly += 1
            if {(flat[i][1], r1["num"]), (flat[j][1], r2["num"])} in (
                    {("O", r1["num"]), ("N", r1["num"] + 4)}, {("O", r2["num"]), ("N", r2["num"] + 4)}):
                hb += 1
    print(json.dumps({
        "n_residues": len(ref),
        "fit_pairs": fit_pairs, "fit_rmsd": fit_rmsd, "mean_fit_rmsd": float(np.mean(fit_rmsd)),
        "rmsf_mean": float(np.mean(rmsf)), "steadiest": ref[int(np.argmin(rmsf))]["label"],
        "core": [ref[i]["label"] for i in core], "n_core": len(core), "core_rmsd": core_rmsd,
        "medoid_model": models[med]["num"], "medoid_rmsd": float(mean[med]),
        "ligand_contacts": lig, "ligand_site": sorted(site), "ligand_waters": len(wet), "polymer_contacts": poly, "helical_hbonds": hb,
    }))


if __name__ == "__main__":
    main()
