"""Baseline `expert`: a bioinformatician who knows pysam's pileup documentation.

Written from the task's instruction alone (it does not know the recipe): the BAM is
decoded with gzip and struct; the read filter follows pysam's documented steppers
("nofilter" keeps everything mapped, "all" drops unmapped, secondary, QC-failed and
duplicate records, "samtools" also applies the mapping quality threshold and, when told,
drops orphans); where the mates of a proper pair overlap, the base of the lower quality
is set to quality 0 (samtools' documented overlap removal); entries below the base quality
threshold are dropped (deletions carry no quality and always count); consensus by the
call fraction, an IUPAC pair when the second allele holds at least a quarter of the reads;
an indel is called when its share reaches the indel fraction.
"""
from __future__ import annotations

import gzip
import json
import struct
import sys

NT16 = "=ACMGRSVTWYHKDBN"
IUPAC = {frozenset("AG"): "R", frozenset("CT"): "Y", frozenset("CG"): "S", frozenset("AT"): "W",
         frozenset("GT"): "K", frozenset("AC"): "M"}
TS = {frozenset("AG"), frozenset("CT")}


def decode(path: str):
    data = gzip.decompress(open(path, "rb").read())
    off = 8 + struct.unpack_from("<i", data, 4)[0]
    refs = []
    for _ in range(struct.unpack_from("<i", data, off)[0]):
        off += 4
        ln = struct.unpack_from("<i", data, off)[0]
        refs.append((data[off + 4:off + 3 + ln].decode(), struct.unpack_from("<i", data, off + 4 + ln)[0]))
        off += 4 + ln
    off += 4
    out = []
    while off < len(data):
        size, tid, pos, lname, mapq, _, ncig, flag, lseq, mtid, mpos, tlen = struct.unpack_from("<iiiBBHHHiiii", data, off)
        p = off + 36
        name = data[p:p + lname - 1].decode()
        p += lname
        cig = [(v & 15, v >> 4) for v in struct.unpack_from(f"<{ncig}I", data, p)]
        p += 4 * ncig
        seq = "".join(NT16[(data[p + i // 2] >> (4 * (1 - i % 2))) & 15] for i in range(lseq))
        p += (lseq + 1) // 2
        out.append({"name": name, "tid": tid, "pos": pos, "mapq": mapq, "flag": flag, "cig": cig, "seq": seq,
                    "qual": list(data[p:p + lseq]), "mtid": mtid})
        off += 4 + size
    return refs, out


def ref_index(r):
    m, q, pos = {}, 0, r["pos"]
    for op, n in r["cig"]:
        if op == 0:
            for k in range(n):
                m[pos + k] = q + k
            q, pos = q + n, pos + n
        elif op in (1, 4):
            q += n
        elif op == 2:
            pos += n
    return m


def main() -> None:
    sc = json.load(sys.stdin)
    p = sc["parameters"]
    ref, name = {}, None
    for line in open(sc["inputs"]["reference"]):
        if line.startswith(">"):
            name = line[1:].split()[0]
            ref[name] = ""
        else:
            ref[name] += line.strip().upper()
    refs, recs = decode(sc["inputs"]["reads"])
    summary = {"dsum": 0, "total": 0, "zero": 0, "best": (-1, ""), "called": 0, "nocall": 0, "len": 0, "mism": 0,
               "md": 0, "hom": 0, "het": 0, "ts": 0, "tv": 0}
    windows, snvs, ins_calls, del_calls = [], set(), set(), set()
    for tid, (contig, length) in enumerate(refs):
        reads = []
        for r in recs:
            if r["tid"] != tid or r["flag"] & 4 or not r["cig"]:
                continue
            if p["stepper"] != "nofilter" and r["flag"] & (256 | 512 | 1024):
                continue
            if p["stepper"] == "samtools":
                if r["mapq"] < p["min_mapping_quality"]:
                    continue
                if p["ignore_orphans"] and r["flag"] & 1 and not r["flag"] & 2:
                    continue
            reads.append(r)
        if p["ignore_overlaps"]:
            mates = {}
            for r in reads:
                if r["flag"] & 2 and not r["flag"] & 8 and r["mtid"] == r["tid"]:
                    mates.setdefault(r["name"], []).append(r)
            for pair in mates.values():
                if len(pair) != 2:
                    continue
                a, b = pair
                ma, mb = ref_index(a), ref_index(b)
                for x in set(ma) & set(mb):
                    i, j = ma[x], mb[x]
                    if a["qual"][i] >= b["qual"][j]:
                        b["qual"][j] = 0
                    else:
                        a["qual"][i] = 0
        cols = [{"c": {}, "ins": {}, "del": {}, "d": 0} for _ in range(length)]
        for r in reads:
            q, pos = 0, r["pos"]
            for k, (op, n) in enumerate(r["cig"]):
                nxt = r["cig"][k + 1] if k + 1 < len(r["cig"]) else (None, 0)
                if op == 0:
                    for m in range(n):
                        if pos + m < length and r["qual"][q + m] >= p["min_base_quality"]:
                            c = cols[pos + m]
                            c["d"] += 1
                            c["c"][r["seq"][q + m]] = c["c"].get(r["seq"][q + m], 0) + 1
                            if m == n - 1 and nxt[0] == 1:
                                s = r["seq"][q + n:q + n + nxt[1]]
                                c["ins"][s] = c["ins"].get(s, 0) + 1
                            elif m == n - 1 and nxt[0] == 2:
                                c["del"][nxt[1]] = c["del"].get(nxt[1], 0) + 1
                    q, pos = q + n, pos + n
                elif op in (1, 4):
                    q += n
                elif op == 2:
                    for m in range(n):
                        if pos + m < length:
                            cols[pos + m]["d"] += 1
                            cols[pos + m]["c"]["*"] = cols[pos + m]["c"].get("*", 0) + 1
                    pos += n
        s = summary
        for i, c in enumerate(cols):
            d = c["d"]
            s["total"] += 1
            s["dsum"] += d
            s["zero"] += d == 0
            if d > s["best"][0]:
                s["best"] = (d, f"{contig}:{i + 1}")
            ranked = sorted("ACGT*", key=lambda a: (-c["c"].get(a, 0), "ACGT*".index(a)))
            c1, c2 = c["c"].get(ranked[0], 0), c["c"].get(ranked[1], 0)
            call = "N"
            if d and d >= p["min_depth"]:
                if c1 >= p["call_fraction"] * d:
                    call = ranked[0]
                elif "*" not in ranked[:2] and c2 >= 0.25 * d and c1 + c2 >= p["call_fraction"] * d:
                    call = IUPAC[frozenset(ranked[:2])]
            r0 = ref[contig][i]
            if call == "N":
                s["nocall"] += 1
                s["len"] += 1
            elif call != "*":
                s["called"] += 1
                s["len"] += 1
            if call in "ACGT":
                s["md"] += d
                s["mism"] += d - c["c"].get(call, 0)
                if call != r0:
                    s["hom"] += 1
                    snvs.add(f"{contig}:{i + 1}:{r0}>{call}")
                    s["ts" if frozenset(r0 + call) in TS else "tv"] += 1
            elif call in "RYSWKM":
                alts = [a for a in ranked[:2] if a != r0]
                if alts:
                    s["het"] += 1
                    snvs.add(f"{contig}:{i + 1}:{r0}>{call}")
                    for a in alts:
                        s["ts" if frozenset(r0 + a) in TS else "tv"] += 1
            for sq, k in c["ins"].items():
                if d and k >= p["indel_fraction"] * d:
                    ins_calls.add(f"{contig}:{i + 1}:+{sq}")
            if c["ins"] and d:
                sq, k = max(c["ins"].items(), key=lambda kv: kv[1])
                if k >= p["call_fraction"] * d and call != "*":
                    s["len"] += len(sq)
            for ln, k in c["del"].items():
                if d and k >= p["indel_fraction"] * d:
                    del_calls.add(f"{contig}:{i + 1}:-{ref[contig][i + 1:i + 1 + ln]}")
        for w in range(0, length, 250):
            part = cols[w:w + 250]
            windows.append(sum(c["d"] for c in part) / len(part))
    s = summary
    print(json.dumps({
        "mean_depth": s["dsum"] / s["total"], "depth_windows": windows, "zero_depth": s["zero"],
        "max_depth": s["best"][0], "max_depth_at": s["best"][1], "called": s["called"], "no_call": s["nocall"],
        "consensus_length": s["len"], "mismatch_rate": s["mism"] / s["md"] if s["md"] else 0.0,
        "snvs": sorted(snvs), "hom_snvs": s["hom"], "het_snvs": s["het"], "transitions": s["ts"],
        "transversions": s["tv"], "insertions": sorted(ins_calls), "deletions": sorted(del_calls),
    }))


if __name__ == "__main__":
    main()
