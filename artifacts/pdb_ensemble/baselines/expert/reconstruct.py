"""Baseline `expert`: a structural bioinformatician who knows gemmi's documentation.

Written from the task's instruction alone (it does not know the recipe): the file is read
as gemmi presents it (models; residues by number, insertion code and name; alternate
locations kept; the polymer is the chain up to TER, modified residues included), each
model is fitted onto the first with the QCP least-squares fit on the selected atoms of
the first conformer (altloc blank or A, as gemmi's first_conformer iterates them), with
the documented outlier trimming (drop pairs beyond trim_cutoff x RMSD, refit, until
nothing changes or the rounds run out); RMSF of the first CA; the core by the cutoff;
a plain least-squares refit on the core backbone; the medoid by mean pairwise RMSD;
ContactSearch-like contacts that skip the same and the neighbouring residue.
"""
from __future__ import annotations

import json
import sys
from typing import Any

import numpy as np

MAIN = ["N", "CA", "C", "O"]


def read_pdb(path: str) -> list[dict[str, Any]]:
    models: list[dict[str, Any]] = []
    cur: dict[str, Any] | None = None
    ter = False
    for line in open(path, encoding="ascii", errors="replace"):
        rec = line[:6]
        if rec == "MODEL ":
            cur = {"num": int(line[10:14]), "residues": []}
            models.append(cur)
            ter = False
        elif rec.startswith("TER"):
            ter = True
        elif rec in ("ATOM  ", "HETATM"):
            if cur is None:
                cur = {"num": 1, "residues": []}
                models.append(cur)
            resname = line[17:20].strip()
            sid = (int(line[22:26]), line[26].strip())
            rs = cur["residues"]
            if not rs or rs[-1]["sid"] != sid or rs[-1]["name"] != resname:
                kind = "polymer" if not ter else "water" if resname == "HOH" else "ligand"
                rs.append({"name": resname, "sid": sid, "label": f"{sid[0]}{sid[1]}", "kind": kind, "atoms": []})
            rs[-1]["atoms"].append({"name": line[12:16].strip(), "alt": line[16].strip(),
                                    "xyz": np.array([float(line[30:38]), float(line[38:46]), float(line[46:54])]),
                                    "occ": float(line[54:60])})
    return models


def first(res: dict[str, Any], name: str) -> dict[str, Any] | None:
    for a in res["atoms"]:
        if a["name"] == name:
            return a
    return None


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
    polys = [[r for r in m["residues"] if r["kind"] == "polymer"] for m in models]
    n = len(models)
    ref = polys[0]

    def pairs(a: int, b: int, which: list[str] | None, only: list[int] | None = None, conformer: bool = True):
        pa, pb = [], []
        for i, (r1, r2) in enumerate(zip(polys[a], polys[b])):
            if only is not None and i not in only:
                continue
            names = which if which is not None else list(dict.fromkeys(x["name"] for x in r1["atoms"]))
            for nm in names:
                x, y = first(r1, nm), first(r2, nm)
                if x is not None and y is not None and (not conformer or (x["alt"] in ("", "A") and y["alt"] in ("", "A"))):
                    pa.append(x["xyz"])
                    pb.append(y["xyz"])
        return np.array(pa), np.array(pb)

    def move(k: int, r: np.ndarray, t: np.ndarray) -> None:
        for res in models[k]["residues"]:
            for a in res["atoms"]:
                a["xyz"] = r @ a["xyz"] + t

    which = {"CA": ["CA"], "mainchain": MAIN, "all": None}[p["selection"]]
    fit_pairs, fit_rmsd = [], []
    for k in range(1, n):
        pa, pb = pairs(0, k, which)
        r, t, rmsd = kabsch(pa, pb)
        for _ in range(int(p["trim_cycles"])):
            keep = np.linalg.norm(pb @ r.T + t - pa, axis=1) <= p["trim_cutoff"] * rmsd
            if keep.all():
                break
            pa, pb = pa[keep], pb[keep]
            r, t, rmsd = kabsch(pa, pb)
        move(k, r, t)
        fit_pairs.append(len(pa))
        fit_rmsd.append(rmsd)

    rmsf: list[float | None] = []
    for i in range(len(ref)):
        pts = [first(pl[i], "CA") for pl in polys]
        arr = np.array([a["xyz"] for a in pts if a is not None])
        rmsf.append(float(np.sqrt(((arr - arr.mean(0)) ** 2).sum(1).mean())) if len(arr) > 1 else None)
    valid = [i for i in range(len(ref)) if rmsf[i] is not None]
    core = [i for i in valid if rmsf[i] <= p["core_cutoff"]] or valid
    core_rmsd = []
    for k in range(1, n):
        r, t, rmsd = kabsch(*pairs(0, k, MAIN, core, conformer=False))
        move(k, r, t)
        core_rmsd.append(rmsd)
    mean = np.zeros(n)
    for a in range(n):
        for b in range(n):
            if a != b:
                mean[a] += kabsch(*pairs(a, b, MAIN, core, conformer=False))[2] / (n - 1)
    med = int(np.argmin(mean))

    residues = models[med]["residues"]
    pos = {id(r): i for i, r in enumerate(polys[med])}
    flat = [(ri, a) for ri, res in enumerate(residues) for a in res["atoms"]]
    xyz = np.array([a["xyz"] for _, a in flat])
    d = np.linalg.norm(xyz[:, None] - xyz[None], axis=2)
    lig = poly = hb = 0
    site, wet = set(), set()
    for i, j in np.argwhere(np.triu(d < p["contact_cutoff"], 1)):
        (ri, a1), (rj, a2) = flat[i], flat[j]
        if ri == rj or (a1["alt"] and a2["alt"] and a1["alt"] != a2["alt"]):
            continue
        r1, r2 = residues[ri], residues[rj]
        kinds = {r1["kind"], r2["kind"]}
        if kinds == {"ligand", "water"}:
            wet.add(ri if r1["kind"] == "water" else rj)
        elif kinds == {"ligand", "polymer"}:
            lig += 1
            site.add((r1 if r1["kind"] == "polymer" else r2)["label"])
        elif kinds == {"polymer"}:
            i1, i2 = pos[id(r1)], pos[id(r2)]
            if abs(i1 - i2) == 1:
                continue
            poly += 1
            if (a1["name"], a2["name"], i2 - i1) in (("O", "N", 4), ("N", "O", -4)):
                hb += 1
    print(json.dumps({
        "n_residues": len(ref),
        "fit_pairs": fit_pairs, "fit_rmsd": fit_rmsd, "mean_fit_rmsd": float(np.mean(fit_rmsd)),
        "rmsf_mean": float(np.mean([rmsf[i] for i in valid])),
        "steadiest": ref[min(valid, key=lambda i: rmsf[i])]["label"],
        "core": [ref[i]["label"] for i in core], "n_core": len(core), "core_rmsd": core_rmsd,
        "medoid_model": models[med]["num"], "medoid_rmsd": float(mean[med]),
        "ligand_contacts": lig, "ligand_site": sorted(site), "ligand_waters": len(wet), "polymer_contacts": poly, "helical_hbonds": hb,
    }))


if __name__ == "__main__":
    main()
