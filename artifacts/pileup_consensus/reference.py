"""Reference solution for the `pileup_consensus` recon task (standalone: stdlib and numpy).

Reads one scenario JSON object on stdin, prints the output JSON object on stdout.
It reproduces, without pysam, what the oracle computes with pysam / htslib:

1. decode the BAM: BGZF blocks are gzip members (zlib), then the binary header and
   records (flag, position, mapping quality, CIGAR, 4-bit sequence, qualities, mate
   fields; tags skipped);
2. the pileup's read filter, which depends on the stepper: "nofilter" keeps every
   mapped record, "all" drops unmapped, secondary, QC-failed and duplicate records,
   "samtools" also drops records below the mapping quality and, when orphans are
   ignored, paired records that are not in a proper pair;
3. overlapping mates of a proper pair (when overlaps are ignored): where both call a
   base at the same reference position, the agreeing pair keeps one base with the sum
   of the qualities (capped at 200) and zeroes the other; a disagreeing pair keeps the
   better base at 0.8 of its quality (truncated) and zeroes the other;
4. the columns: every aligned base, every deleted position (judged by the quality of
   the base after the deletion), an insertion or deletion hanging on the base before
   it; entries below the base quality threshold are dropped;
5. per position the consensus (base, IUPAC pair, deletion or N), the calls and the
   summary.
"""
from __future__ import annotations

import gzip
import json
import struct
import sys
from typing import Any

WINDOW = 250
HET_FRACTION = 0.2
MIN_INDEL_READS = 2
ALLELES = "ACGT*"
NT16 = "=ACMGRSVTWYHKDBN"
IUPAC = {frozenset("AG"): "R", frozenset("CT"): "Y", frozenset("CG"): "S", frozenset("AT"): "W",
         frozenset("GT"): "K", frozenset("AC"): "M"}
TRANSITIONS = {frozenset("AG"), frozenset("CT")}
FUNMAP, FSECONDARY, FQCFAIL, FDUP = 4, 256, 512, 1024
FPAIRED, FPROPER, FMUNMAP = 1, 2, 8
TAG_SIZE = {"A": 1, "c": 1, "C": 1, "s": 2, "S": 2, "i": 4, "I": 4, "f": 4}


# --------------------------------------------------------------------------- reading
def read_fasta(path: str) -> dict[str, str]:
    seqs: dict[str, list[str]] = {}
    name = None
    with open(path, encoding="ascii") as fh:
        for line in fh:
            if line.startswith(">"):
                name = line[1:].split()[0]
                seqs[name] = []
            elif name is not None:
                seqs[name].append(line.strip().upper())
    return {k: "".join(v) for k, v in seqs.items()}


def read_bam(path: str) -> tuple[list[tuple[str, int]], list[dict[str, Any]]]:
    """Reference names and lengths, and every record in file order."""
    with open(path, "rb") as fh:
        data = gzip.decompress(fh.read())   # BGZF = concatenated gzip members
    if data[:4] != b"BAM\x01":
        raise ValueError("not a BAM file")
    off = 4
    l_text = struct.unpack_from("<i", data, off)[0]
    off += 4 + l_text
    n_ref = struct.unpack_from("<i", data, off)[0]
    off += 4
    refs = []
    for _ in range(n_ref):
        l_name = struct.unpack_from("<i", data, off)[0]
        name = data[off + 4:off + 4 + l_name - 1].decode()
        l_ref = struct.unpack_from("<i", data, off + 4 + l_name)[0]
        refs.append((name, l_ref))
        off += 8 + l_name
    records = []
    while off < len(data):
        block = struct.unpack_from("<i", data, off)[0]
        (ref_id, pos, l_name, mapq, _bin, n_cigar, flag, l_seq, next_id, next_pos,
         tlen) = struct.unpack_from("<iiBBHHHiiii", data, off + 4)
        p = off + 36
        qname = data[p:p + l_name - 1].decode()
        p += l_name
        cigar = []
        for k in range(n_cigar):
            v = struct.unpack_from("<I", data, p + 4 * k)[0]
            cigar.append((v & 15, v >> 4))
        p += 4 * n_cigar
        packed = data[p:p + (l_seq + 1) // 2]
        seq = "".join(NT16[packed[i >> 1] >> 4 if i % 2 == 0 else packed[i >> 1] & 15] for i in range(l_seq))
        p += (l_seq + 1) // 2
        qual = list(data[p:p + l_seq])
        records.append({"qname": qname, "tid": ref_id, "pos": pos, "mapq": mapq, "flag": flag, "cigar": cigar,
                        "seq": seq, "qual": qual, "mtid": next_id, "mpos": next_pos, "tlen": tlen})
        off += 4 + block
    return refs, records


def end_pos(r: dict[str, Any]) -> int:
    return r["pos"] + sum(n for op, n in r["cigar"] if op in (0, 2, 3, 7, 8))


# ------------------------------------------------------------------------- the pileup
def keep(r: dict[str, Any], p: dict[str, Any]) -> bool:
    if r["flag"] & FUNMAP or not r["cigar"]:
        return False
    stepper = p["stepper"]
    if stepper == "nofilter":
        return True
    if r["flag"] & (FUNMAP | FSECONDARY | FQCFAIL | FDUP):
        return False
    if stepper == "samtools":
        if r["mapq"] < int(p["min_mapping_quality"]):
            return False
        if p["ignore_orphans"] and r["flag"] & FPAIRED and not r["flag"] & FPROPER:
            return False
    return True


def aligned(r: dict[str, Any]) -> dict[int, int]:
    """Reference position -> query index of the aligned (M/=/X) bases."""
    out = {}
    q, pos = 0, r["pos"]
    for op, n in r["cigar"]:
        if op in (0, 7, 8):
            for k in range(n):
                out[pos + k] = q + k
            q += n
            pos += n
        elif op in (1, 4):
            q += n
        elif op in (2, 3):
            pos += n
    return out


def tweak_overlap(a: dict[str, Any], b: dict[str, Any]) -> None:
    """Mates a (earlier) and b share reference positions: count the fragment once."""
    ma, mb = aligned(a), aligned(b)
    for pos in sorted(set(ma) & set(mb)):
        i, j = ma[pos], mb[pos]
        qa, qb = a["qual"][i], b["qual"][j]
        if a["seq"][i] == b["seq"][j]:
            a["qual"][i], b["qual"][j] = min(qa + qb, 200), 0
        elif qa >= qb:
            a["qual"][i], b["qual"][j] = int(0.8 * qa), 0
        else:
            a["qual"][i], b["qual"][j] = 0, int(0.8 * qb)


def resolve_overlaps(reads: list[dict[str, Any]]) -> None:
    """Pair the mates as the pileup meets them (file order) and adjust their qualities.
    The pileup reads one record ahead: a record is taken in (and its pair adjusted) before
    the columns from the previous record's start on are reported."""
    waiting: dict[str, dict[str, Any]] = {}
    prev_start = -1
    for r in reads:
        seen_from, prev_start = prev_start, r["pos"]
        f = r["flag"]
        if f & FMUNMAP or not f & FPROPER:
            continue
        if (r["mtid"] >= 0 and r["tid"] != r["mtid"]) or (abs(r["tlen"]) >= 2 * len(r["seq"])
                                                          and r["mpos"] >= end_pos(r)):
            continue
        if r["qname"] in waiting:
            a = waiting.pop(r["qname"])
            a["before"], a["tweaked_at"] = list(a["qual"]), seen_from
            tweak_overlap(a, r)
        elif r["mpos"] >= r["pos"] or (f & FPAIRED and r["mpos"] == -1):
            waiting[r["qname"]] = r


def pileup(reads: list[dict[str, Any]], length: int, min_bq: int) -> list[dict[str, Any]]:
    cols: list[dict[str, Any]] = [{"nseg": 0, "depth": 0, "counts": {}, "ins": {}, "dels": {}} for _ in range(length)]

    def add(pos: int, allele: str, qual: int, ins: str | None, dl: int) -> None:
        if not 0 <= pos < length:
            return
        c = cols[pos]
        c["nseg"] += 1
        if qual < min_bq:
            return
        c["depth"] += 1
        c["counts"][allele] = c["counts"].get(allele, 0) + 1
        if ins is not None:
            c["ins"][ins] = c["ins"].get(ins, 0) + 1
        if dl:
            c["dels"][dl] = c["dels"].get(dl, 0) + 1

    for r in reads:
        q, pos = 0, r["pos"]
        ops = r["cigar"]
        seq, qual = r["seq"], r["qual"]
        for k, (op, n) in enumerate(ops):
            nxt = ops[k + 1] if k + 1 < len(ops) else (None, 0)
            if op in (0, 7, 8):
                for m in range(n):
                    ins, dl = None, 0
                    if m == n - 1:
                        if nxt[0] == 1:
                            ins = seq[q + m + 1:q + m + 1 + nxt[1]]
                        elif nxt[0] == 2:
                            dl = nxt[1]
                    add(pos + m, seq[q + m], qual[q + m], ins, dl)
                q += n
                pos += n
            elif op in (1, 4):
                q += n
            elif op == 2:
                # a deleted position is judged by the quality of the next base, as it stands
                # when the column is reported
                for m in range(n):
                    src = r["before"] if pos + m < r.get("tweaked_at", -1) else qual
                    add(pos + m, "*", src[q] if q < len(src) else 0, None, 0)
                pos += n
            elif op == 3:
                pos += n
    return cols


# ---------------------------------------------------------------------- the consensus
def call_column(counts: dict[str, int], depth: int, min_depth: int, call_fraction: float) -> str:
    if depth < min_depth or depth == 0:
        return "N"
    ranked = sorted(ALLELES, key=lambda a: (-counts.get(a, 0), ALLELES.index(a)))
    c1, c2 = counts.get(ranked[0], 0), counts.get(ranked[1], 0)
    if c1 >= call_fraction * depth:
        return ranked[0]
    if c2 > 0 and "*" not in ranked[:2] and c2 >= HET_FRACTION * depth and c1 + c2 >= call_fraction * depth:
        return IUPAC[frozenset(ranked[:2])]
    return "N"


def summarise(ref: dict[str, str], columns: dict[str, list[dict[str, Any]]], p: dict[str, Any]) -> dict[str, Any]:
    min_depth, call_fraction = int(p["min_depth"]), float(p["call_fraction"])
    indel_fraction = float(p["indel_fraction"])
    total = depth_sum = zero = called = no_call = 0
    best = (-1, "")
    windows: list[float] = []
    snvs: set[str] = set()
    ins_calls: set[str] = set()
    del_calls: set[str] = set()
    het = hom = ts = tv = 0
    mism = match_depth = 0
    length = 0
    for contig, cols in columns.items():
        seq = ref[contig]
        for pos, c in enumerate(cols):
            d = c["depth"]
            total += 1
            depth_sum += d
            zero += d == 0
            if d > best[0]:
                best = (d, f"{contig}:{pos + 1}")
            call = call_column(c["counts"], d, min_depth, call_fraction)
            r = seq[pos]
            if call == "N":
                no_call += 1
                length += 1
            elif call != "*":
                called += 1
                length += 1
            if call in "ACGT" and d:
                match_depth += d
                mism += d - c["counts"].get(call, 0)
            if call in "ACGT" and call != r:
                hom += 1
                snvs.add(f"{contig}:{pos + 1}:{r}>{call}")
                ts += frozenset(r + call) in TRANSITIONS
                tv += frozenset(r + call) not in TRANSITIONS
            elif call in "RYSWKM":
                pair = next(k for k, v in IUPAC.items() if v == call)
                alts = [a for a in pair if a != r]
                if alts:
                    het += 1
                    snvs.add(f"{contig}:{pos + 1}:{r}>{call}")
                    for a in alts:
                        ts += frozenset(r + a) in TRANSITIONS
                        tv += frozenset(r + a) not in TRANSITIONS
            for s, n in c["ins"].items():
                if d and n >= MIN_INDEL_READS and n >= indel_fraction * d:
                    ins_calls.add(f"{contig}:{pos + 1}:+{s}")
            if c["ins"] and d:
                s, n = min(c["ins"].items(), key=lambda kv: (-kv[1], kv[0]))
                if n >= MIN_INDEL_READS and n >= call_fraction * d and call != "*":
                    length += len(s)
            for n_del, n in c["dels"].items():
                if d and n >= MIN_INDEL_READS and n >= indel_fraction * d:
                    del_calls.add(f"{contig}:{pos + 1}:-{seq[pos + 1:pos + 1 + n_del]}")
        for w0 in range(0, len(cols), WINDOW):
            part = cols[w0:w0 + WINDOW]
            windows.append(sum(c["depth"] for c in part) / len(part))
    return {
        "mean_depth": depth_sum / total,
        "depth_windows": windows,
        "zero_depth": zero,
        "max_depth": best[0],
        "max_depth_at": best[1],
        "called": called,
        "no_call": no_call,
        "consensus_length": length,
        "mismatch_rate": mism / match_depth if match_depth else 0.0,
        "snvs": sorted(snvs),
        "hom_snvs": hom,
        "het_snvs": het,
        "transitions": ts,
        "transversions": tv,
        "insertions": sorted(ins_calls),
        "deletions": sorted(del_calls),
    }


def process(scenario: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    p = scenario["parameters"]
    files = scenario["inputs"]
    ref = read_fasta(files["reference"])
    refs, records = read_bam(files["reads"])
    columns = {}
    for tid, (name, length) in enumerate(refs):
        reads = [r for r in records if r["tid"] == tid and keep(r, p)]
        if p["ignore_overlaps"]:
            resolve_overlaps(reads)
        columns[name] = pileup(reads, length, int(p["min_base_quality"]))
    return summarise(ref, columns, p), {"columns": columns}


def solve(scenario: dict[str, Any]) -> dict[str, Any]:
    return process(scenario)[0]


def main() -> None:
    print(json.dumps(solve(json.load(sys.stdin))))


if __name__ == "__main__":
    main()
