"""Baseline `textbook`: a pileup and majority consensus as a genomics course teaches it.

Written from the task's instruction alone (it does not know the recipe): the BAM is
decoded with zlib and struct following the SAM specification; reads are filtered the
standard way (unmapped, secondary, QC-failed and duplicate records dropped, mapping
quality below the threshold dropped) whatever the stepper; bases below the base quality
threshold are dropped, deletions always count; each position's consensus is the majority
allele when it reaches the call fraction, the IUPAC code of the two leading alleles when
together they do, else N; an indel is called when its share of the depth reaches the
indel fraction.
"""
from __future__ import annotations

import json
import struct
import sys
import zlib

NT16 = "=ACMGRSVTWYHKDBN"
IUPAC = {frozenset("AG"): "R", frozenset("CT"): "Y", frozenset("CG"): "S", frozenset("AT"): "W",
         frozenset("GT"): "K", frozenset("AC"): "M"}
TS = {frozenset("AG"), frozenset("CT")}


def bgzf_blocks(raw: bytes) -> bytes:
    out, off = [], 0
    while off < len(raw):
        xlen = struct.unpack_from("<H", raw, off + 10)[0]
        bsize = struct.unpack_from("<H", raw, off + 16)[0]      # BC subfield: total block size - 1
        d = zlib.decompressobj(-15)
        out.append(d.decompress(raw[off + 12 + xlen:off + bsize + 1 - 8]))
        off += bsize + 1
    return b"".join(out)


def read_bam(path: str):
    data = bgzf_blocks(open(path, "rb").read())
    l_text = struct.unpack_from("<i", data, 4)[0]
    off = 8 + l_text
    n_ref = struct.unpack_from("<i", data, off)[0]
    off += 4
    refs = []
    for _ in range(n_ref):
        ln = struct.unpack_from("<i", data, off)[0]
        refs.append((data[off + 4:off + 3 + ln].decode(), struct.unpack_from("<i", data, off + 4 + ln)[0]))
        off += 8 + ln
    recs = []
    while off < len(data):
        size = struct.unpack_from("<i", data, off)[0]
        tid, pos, lname, mapq, _, ncig, flag, lseq = struct.unpack_from("<iiBBHHHi", data, off + 4)
        p = off + 36 + lname
        cig = [(v & 15, v >> 4) for v in struct.unpack_from(f"<{ncig}I", data, p)]
        p += 4 * ncig
        seq = "".join(NT16[(data[p + i // 2] >> (4 * (1 - i % 2))) & 15] for i in range(lseq))
        qual = data[p + (lseq + 1) // 2:p + (lseq + 1) // 2 + lseq]
        recs.append((tid, pos, mapq, flag, cig, seq, qual))
        off += 4 + size
    return refs, recs


def main() -> None:
    sc = json.load(sys.stdin)
    p = sc["parameters"]
    ref = {}
    name = None
    for line in open(sc["inputs"]["reference"]):
        if line.startswith(">"):
            name = line[1:].split()[0]
            ref[name] = []
        else:
            ref[name].append(line.strip().upper())
    ref = {k: "".join(v) for k, v in ref.items()}
    refs, recs = read_bam(sc["inputs"]["reads"])
    cols = {n: [{"c": {}, "ins": {}, "del": {}, "d": 0} for _ in range(ln)] for n, ln in refs}
    for tid, pos, mapq, flag, cig, seq, qual in recs:
        if tid < 0 or flag & (4 | 256 | 512 | 1024) or not cig or mapq < p["min_mapping_quality"]:
            continue
        col = cols[refs[tid][0]]
        q = 0
        for k, (op, n) in enumerate(cig):
            nxt = cig[k + 1] if k + 1 < len(cig) else (None, 0)
            if op == 0:
                for m in range(n):
                    if qual[q + m] >= p["min_base_quality"] and pos + m < len(col):
                        c = col[pos + m]
                        c["d"] += 1
                        c["c"][seq[q + m]] = c["c"].get(seq[q + m], 0) + 1
                        if m == n - 1 and nxt[0] == 1:
                            s = seq[q + n:q + n + nxt[1]]
                            c["ins"][s] = c["ins"].get(s, 0) + 1
                        if m == n - 1 and nxt[0] == 2:
                            c["del"][nxt[1]] = c["del"].get(nxt[1], 0) + 1
                q += n
                pos += n
            elif op in (1, 4):
                q += n
            elif op == 2:
                for m in range(n):
                    if pos + m < len(col):
                        col[pos + m]["d"] += 1
                        col[pos + m]["c"]["*"] = col[pos + m]["c"].get("*", 0) + 1
                pos += n
    total = dsum = zero = called = nocall = length = 0
    best = (-1, "")
    windows, snvs, ins, dels = [], set(), set(), set()
    hom = het = ts = tv = 0
    mism = mdepth = 0
    cf, fi = p["call_fraction"], p["indel_fraction"]
    for n, _ in refs:
        for i, c in enumerate(cols[n]):
            d = c["d"]
            total += 1
            dsum += d
            zero += d == 0
            if d > best[0]:
                best = (d, f"{n}:{i + 1}")
            r = ref[n][i]
            ranked = sorted("ACGT*", key=lambda a: -c["c"].get(a, 0))
            c1, c2 = c["c"].get(ranked[0], 0), c["c"].get(ranked[1], 0)
            call = "N"
            if d >= p["min_depth"] and d:
                if c1 >= cf * d:
                    call = ranked[0]
                elif c1 + c2 >= cf * d and "*" not in ranked[:2]:
                    call = IUPAC[frozenset(ranked[:2])]
            if call == "N":
                nocall += 1
                length += 1
            elif call != "*":
                called += 1
                length += 1
            if call in "ACGT":
                mdepth += d
                mism += d - c1
                if call != r:
                    hom += 1
                    snvs.add(f"{n}:{i + 1}:{r}>{call}")
                    ts += frozenset(r + call) in TS
                    tv += frozenset(r + call) not in TS
            elif call in "RYSWKM":
                alts = [a for a in ranked[:2] if a != r]
                het += 1
                snvs.add(f"{n}:{i + 1}:{r}>{call}")
                for a in alts:
                    ts += frozenset(r + a) in TS
                    tv += frozenset(r + a) not in TS
            for s, k in c["ins"].items():
                if d and k >= fi * d:
                    ins.add(f"{n}:{i + 1}:+{s}")
                    if k >= cf * d:
                        length += len(s)
            for ln, k in c["del"].items():
                if d and k >= fi * d:
                    dels.add(f"{n}:{i + 1}:-{ref[n][i + 1:i + 1 + ln]}")
        for w in range(0, len(cols[n]), 250):
            part = cols[n][w:w + 250]
            windows.append(sum(c["d"] for c in part) / len(part))
    print(json.dumps({
        "mean_depth": dsum / total, "depth_windows": windows, "zero_depth": zero, "max_depth": best[0],
        "max_depth_at": best[1], "called": called, "no_call": nocall, "consensus_length": length,
        "mismatch_rate": mism / mdepth if mdepth else 0.0, "snvs": sorted(snvs), "hom_snvs": hom, "het_snvs": het,
        "transitions": ts, "transversions": tv, "insertions": sorted(ins), "deletions": sorted(dels),
    }))


if __name__ == "__main__":
    main()
