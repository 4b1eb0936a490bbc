"""The synthetic sequencing run of `pileup_consensus`: a reference FASTA and a coordinate-sorted,
indexed BAM of simulated paired-end reads, written with pysam.

A diploid sample carries SNVs (heterozygous and homozygous) and small insertions and
deletions. Fragments are drawn from either haplotype and read from both ends; the reads
carry what a real run carries: sequencing errors that tend to have low base qualities,
N calls, soft-clipped adapter or chimeric ends, overlapping mates on short fragments
(down to fragments shorter than a read, trimmed), PCR duplicates, QC failures, a repeat
copied twice in the first contig (reads inside it map with quality 0 or 1 and have a
secondary alignment at the other copy), chimeric reads with a supplementary alignment,
discordant pairs (the mate on the other contig), pairs with one mate unmapped, a few
unmapped pairs at the end of the file, and mapping qualities below 60.

Deterministic in the parameters (everything random comes from ``seed``); the BAM bytes
are reproducible (no sort program, fixed header).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

BASES = "ACGT"
READ_LEN = 100
REPEAT_LEN = 130
CONTIGS = (("chr1", 1500, 2300), ("chr2", 700, 1100))


def _revcomp(s: str) -> str:
    return s[::-1].translate(str.maketrans("ACGTN", "TGCAN"))


def _genome(rng: Any) -> tuple[dict[str, str], list[tuple[int, int]]]:
    """Random contigs; chr1 holds one repeat copied twice (exact copies)."""
    seqs = {}
    for name, lo, hi in CONTIGS:
        n = int(rng.integers(lo, hi + 1))
        s = "".join(rng.choice(list(BASES), size=n, p=[0.28, 0.22, 0.22, 0.28]))
        seqs[name] = s
    s = seqs["chr1"]
    a = int(rng.integers(250, 450))
    b = int(rng.integers(len(s) - 700, len(s) - 300))
    rep = s[a:a + REPEAT_LEN]
    s = s[:b] + rep + s[b + REPEAT_LEN:]
    # a homopolymer run, where aligners and callers struggle
    h = int(rng.integers(600, 900))
    s = s[:h] + rng.choice(list(BASES)) * 9 + s[h + 9:]
    seqs["chr1"] = s
    return seqs, [(a, a + REPEAT_LEN), (b, b + REPEAT_LEN)]


def _variants(rng: Any, seqs: dict[str, str], repeats: list[tuple[int, int]]) -> dict[str, list[dict[str, Any]]]:
    """Per contig, sorted non-overlapping variants: pos (0-based), ref, alt, genotype (haplotypes carrying it)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for name, s in seqs.items():
        vs: list[dict[str, Any]] = []
        pos = int(rng.integers(40, 120))
        while pos < len(s) - 60:
            in_rep = any(lo - 5 <= pos < hi + 5 for lo, hi in repeats) and name == "chr1"
            if not in_rep:
                kind = rng.random()
                gt = [(1, 1), (0, 1), (1, 0)][int(rng.integers(0, 3))] if rng.random() < 0.6 else (1, 1)
                gt = gt if rng.random() < 0.6 else (0, 1)
                if kind < 0.78:
                    alt = rng.choice([b for b in BASES if b != s[pos]])
                    vs.append({"pos": pos, "ref": s[pos], "alt": str(alt), "gt": gt})
                elif kind < 0.89:
                    n = int(rng.integers(1, 5))
                    ins = "".join(rng.choice(list(BASES), size=n))
                    vs.append({"pos": pos, "ref": s[pos], "alt": s[pos] + ins, "gt": gt})
                else:
                    n = int(rng.integers(1, 5))
                    vs.append({"pos": pos, "ref": s[pos:pos + n + 1], "alt": s[pos], "gt": gt})
            pos += int(rng.integers(45, 160))
        out[name] = vs
    return out


def _haplotype(s: str, vs: list[dict[str, Any]], h: int) -> tuple[str, list[int]]:
    """Haplotype sequence and, for each of its bases, the reference position it aligns to
    (-1 for inserted bases); deleted reference positions are absent."""
    seq: list[str] = []
    where: list[int] = []
    i = 0
    for v in vs:
        if not v["gt"][h]:
            continue
        p = v["pos"]
        while i < p:
            seq.append(s[i])
            where.append(i)
            i += 1
        ref, alt = v["ref"], v["alt"]
        seq.append(alt[0])
        where.append(p)
        for extra in alt[1:]:
            seq.append(extra)
            where.append(-1)
        i = p + len(ref)
    while i < len(s):
        seq.append(s[i])
        where.append(i)
        i += 1
    return "".join(seq), where


def _cigar(where: list[int]) -> tuple[int, list[tuple[int, int]]]:
    """Start and CIGAR (pysam op codes) of a read whose bases align to `where` (-1 = inserted,
    -2 = soft clipped)."""
    ops: list[list[int]] = []
    start = next(w for w in where if w >= 0)
    last = -1
    for w in where:
        if w >= 0:
            if last >= 0 and w > last + 1:
                ops.append([2, w - last - 1])
            op = 0
            last = w
        else:
            op = 4 if w == -2 else 1
        if ops and ops[-1][0] == op:
            ops[-1][1] += 1
        else:
            ops.append([op, 1])
    return start, [(op, n) for op, n in ops]


def _clip_near_indels(w: list[int]) -> None:
    """An aligner soft-clips an end rather than place an indel within 7 aligned bases of
    it: clip (-2) everything before the first run of 7 contiguous aligned bases, and after
    the last such run, in place."""
    def first_run(idx: list[int]) -> int | None:
        run, prev = 0, None
        for k in idx:
            x = w[k]
            if x == -2 and run == 0:
                continue
            if x < 0 or (prev is not None and abs(x - prev) != 1):
                run = 0 if x < 0 else 1
                prev = None if x < 0 else x
                continue
            run += 1
            prev = x
            if run == 7:
                return k
        return None

    fwd = list(range(len(w)))
    k = first_run(fwd)
    if k is None:
        for i in fwd:
            w[i] = -2
        return
    for i in range(0, k - 6):
        w[i] = -2
    rev = fwd[::-1]
    k = first_run(rev)
    if k is None:
        raise RuntimeError("a run seen forwards must be seen backwards")
    for i in range(k + 7, len(w)):
        w[i] = -2


def _not_after_deletion(w: list[int], deleted: set[int]) -> None:
    """No read starts its alignment on the base right after a deletion (the aligner would
    have placed the deletion there): clip that base too, in place."""
    first = next((k for k, x in enumerate(w) if x >= 0), None)
    if first is not None and w[first] - 1 in deleted:
        w[first] = -2


def _not_on_anchor(w: list[int], anchors: set[int]) -> None:
    """No read ends its alignment on the base an indel follows (an aligner clips there):
    clip that base too, in place."""
    last = next((k for k in range(len(w) - 1, -1, -1) if w[k] >= 0), None)
    if last is not None and w[last] in anchors:
        w[last] = -2


def _qualities(rng: Any, n: int) -> Any:
    import numpy as np

    base = 37.0 - 9.0 * (np.arange(n) / max(n - 1, 1)) ** 2
    q = np.clip(np.rint(base + rng.normal(0, 4.0, n)), 2, 41)
    dips = rng.random(n) < 0.04
    q[dips] = rng.integers(2, 15, int(dips.sum()))
    return q.astype(int)


def _mutate(rng: Any, seq: list[str], qual: Any, err: float, inserted: list[bool]) -> None:
    """Substitution errors (mostly at low quality) and N calls, in place; inserted bases are
    read without error (so both mates of a fragment report the same insertion)."""
    import numpy as np

    n = len(seq)
    u = rng.random(n)
    p = err * (1.0 + 2.0 * (qual < 15))
    p[np.asarray(inserted, dtype=bool)] = 0.0
    hit = u < p
    shift = rng.integers(1, 4, n)
    lowq = rng.random(n) < 0.7
    newq = rng.integers(2, 20, n)
    ncall = (~hit) & (rng.random(n) < 0.002) & (p > 0)
    for i in hit.nonzero()[0]:
        b = seq[i]
        seq[i] = BASES[(BASES.index(b) + int(shift[i])) % 4] if b in BASES else "A"
        if lowq[i]:
            qual[i] = int(newq[i])
    for i in ncall.nonzero()[0]:
        seq[i] = "N"
        qual[i] = 2


def build(params: dict[str, Any], directory: Path) -> None:
    """Write reference.fa, reads.bam and its index index.bai into `directory`."""
    import numpy as np
    import pysam

    rng = np.random.default_rng(int(params["seed"]))
    seqs, repeats = _genome(rng)
    variants = _variants(rng, seqs, repeats)
    coverage = float(params["coverage"])
    insert_mean = float(params["insert_mean"])
    err = float(params["error_rate"])
    dup_rate = float(params["duplicate_rate"])
    names = [c[0] for c in CONTIGS]
    tid = {n: i for i, n in enumerate(names)}

    fa = "".join(f">{n} synthetic contig {n}\n" + "\n".join(seqs[n][i:i + 60] for i in range(0, len(seqs[n]), 60)) + "\n"
                 for n in names)
    (directory / "reference.fa").write_text(fa, encoding="ascii")

    records: list[dict[str, Any]] = []
    serial = 0

    def new_name() -> str:
        nonlocal serial
        serial += 1
        return f"SIM:1:FC1:{1 + serial % 4}:{1000 + serial}:{int(rng.integers(1000, 20000))}"

    def aligned_read(hap: str, where: list[int], lo: int, hi: int, reverse: bool) -> dict[str, Any] | None:
        """Bases lo..hi of a haplotype as one read (inserted bases at either end dropped)."""
        w = list(where[lo:hi])
        seq = list(hap[lo:hi])
        while w and w[0] < 0:   # a read never starts with inserted bases
            w, seq = w[1:], seq[1:]
        while w and w[-1] < 0:
            w, seq = w[:-1], seq[:-1]
        if len(w) < 30:
            return None
        return {"w": w, "seq": seq, "reverse": reverse}

    contig_of: dict[str, tuple[str, list[str], list[list[int]]]] = {}
    gaps: dict[str, list[set[int]]] = {}
    anchors: dict[str, list[set[int]]] = {}
    for name in names:
        haps = [_haplotype(seqs[name], variants[name], h) for h in (0, 1)]
        contig_of[name] = (name, [h[0] for h in haps], [h[1] for h in haps])
        gaps[name] = [set(range(len(seqs[name]))) - set(h[1]) for h in haps]
        anchors[name] = [{v["pos"] for v in variants[name] if v["gt"][h] and len(v["ref"]) != len(v["alt"])}
                         for h in (0, 1)]

    def make_pair(name: str, dup_of: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        _, hseqs, hwhere = contig_of[name]
        if dup_of is None:
            h = int(rng.integers(0, 2))
            hap, where = hseqs[h], hwhere[h]
            flen = int(np.clip(rng.normal(insert_mean, 0.25 * insert_mean), 70, 600))
            start = int(rng.integers(0, max(1, len(hap) - flen)))
            frag = (h, start, min(len(hap), start + flen))
        else:
            frag = dup_of["frag"]
            h = frag[0]
            hap, where = hseqs[h], hwhere[h]
        h, fs, fe = frag
        deleted = {h: gaps[name][h]}
        rl = min(READ_LEN, fe - fs)
        r1 = aligned_read(hap, where, fs, fs + rl, False)
        r2 = aligned_read(hap, where, fe - rl, fe, True)
        if r1 is None or r2 is None:
            return []
        qname = new_name()
        out = []
        for k, r in enumerate((r1, r2)):
            q = _qualities(rng, len(r["seq"]))
            if r["reverse"]:
                q = q[::-1].copy()
            seq = list(r["seq"])
            _mutate(rng, seq, q, err, [x == -1 for x in r["w"]])
            # adapter / chimeric soft clips at the outer ends, sometimes
            w = list(r["w"])
            if rng.random() < 0.06:
                n = int(rng.integers(4, 16))
                rs = range(n) if not r["reverse"] else range(len(w) - n, len(w))
                for i in rs:
                    if 0 <= i < len(w):
                        w[i] = -2
                        seq[i] = str(rng.choice(list(BASES)))
            _clip_near_indels(w)
            _not_after_deletion(w, deleted[frag[0]])
            _not_on_anchor(w, anchors[name][frag[0]])
            if sum(1 for x in w if x >= 0) < 20:
                return []
            pos, cig = _cigar(w)
            out.append({"qname": qname, "tid": tid[name], "pos": pos, "cigar": cig, "seq": "".join(seq),
                        "qual": [int(x) for x in q], "mapq": 60, "read": k + 1, "reverse": r["reverse"],
                        "frag": frag, "contig": name})
        return out

    for name in names:
        n_pairs = int(round(coverage * len(seqs[name]) / (2 * READ_LEN)))
        for _ in range(n_pairs):
            pair = make_pair(name)
            if not pair:
                continue
            kind = rng.random()
            for r in pair:
                r["flag"] = 1 | 2 | (64 if r["read"] == 1 else 128)
            if kind < 0.025:
                pair[1]["unmapped"] = True
            elif kind < 0.045 and name == "chr1":
                pair[1]["discordant"] = True
            elif kind < 0.055:
                for r in pair:
                    r["flag"] |= 512
            elif kind < 0.13:
                r = pair[int(rng.integers(0, 2))]
                r["mapq"] = int(rng.choice([3, 8, 12, 17, 22, 25, 29, 35, 40]))
            records.extend(pair)
            if rng.random() < dup_rate:
                dup = make_pair(name, dup_of=pair[0])
                for r in dup:
                    r["flag"] = 1 | 2 | 1024 | (64 if r["read"] == 1 else 128)
                records.extend(dup)
    finished = _finish(rng, records, seqs, repeats, tid, names)
    header = {"HD": {"VN": "1.6", "SO": "coordinate"},
              "SQ": [{"SN": n, "LN": len(seqs[n])} for n in names],
              "RG": [{"ID": "run1", "SM": "sample1", "PL": "ILLUMINA", "LB": "lib1"}],
              "PG": [{"ID": "sim", "PN": "recon-pileup-sim", "VN": "1.0"}]}
    bam = directory / "reads.bam"
    with pysam.AlignmentFile(str(bam), "wb", header=header) as fh:
        for r in finished:
            fh.write(_segment(r, fh.header))
    tmp = directory / "reads.bam.bai"
    pysam.index(str(bam), str(tmp))
    tmp.rename(directory / "index.bai")


def _finish(rng: Any, records: list[dict[str, Any]], seqs: dict[str, str], repeats: list[tuple[int, int]],
            tid: dict[str, int], names: list[str]) -> list[dict[str, Any]]:
    """Mate fields, repeat mapping qualities and secondaries, chimeras, unmapped mates,
    discordant pairs, unmapped pairs; returns the records in coordinate order."""
    def end(r: dict[str, Any]) -> int:
        return r["pos"] + sum(n for op, n in r["cigar"] if op in (0, 2))

    by_name: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        by_name.setdefault(r["qname"], []).append(r)
    extra: list[dict[str, Any]] = []
    for qname, (a, b) in by_name.items():
        for r, m in ((a, b), (b, a)):
            r.setdefault("tags", [("RG", "run1")])
        if b.get("unmapped"):
            b["flag"] = (b["flag"] & ~2) | 4
            a["flag"] = (a["flag"] & ~2) | 8
            b["seq"] = "".join(rng.choice(list(BASES), size=len(b["seq"])))
            b["cigar"] = []
            b["pos"] = a["pos"]
            b["tid"] = a["tid"]
            b["mapq"] = 0
            b["reverse"] = False
        if b.get("discordant"):
            other = names[1]
            s = seqs[other]
            p = int(rng.integers(0, len(s) - READ_LEN))
            b["tid"] = tid[other]
            b["pos"] = p
            b["cigar"] = [(0, READ_LEN)]
            b["seq"] = s[p:p + READ_LEN]
            b["qual"] = [int(x) for x in _qualities(rng, READ_LEN)]
            a["flag"] &= ~2
            b["flag"] &= ~2
        # repeat copies: reads inside one copy map ambiguously
        for r in (a, b):
            if r["flag"] & 4 or r["tid"] != 0:
                continue
            for k, (lo, hi) in enumerate(repeats):
                if lo <= r["pos"] and end(r) <= hi:
                    r["mapq"] = int(rng.integers(0, 2))
                    olo = repeats[1 - k][0]
                    sec = dict(r)
                    sec["pos"] = olo + (r["pos"] - lo)
                    sec["flag"] = (r["flag"] & ~(2 | 64 | 128)) | 256 | (r["flag"] & (64 | 128))
                    sec["flag"] &= ~2
                    sec["mapq"] = 0
                    sec["tags"] = [("RG", "run1")]
                    sec["secondary_of"] = r
                    extra.append(sec)
        # a chimeric read 1: its last bases come from chr2 (supplementary alignment there)
        if not (a["flag"] & 4) and a["tid"] == 0 and not a["reverse"] and rng.random() < 0.02 and len(a["cigar"]) == 1:
            n = int(rng.integers(25, 40))
            s2 = seqs[names[1]]
            p2 = int(rng.integers(0, len(s2) - n))
            L = len(a["seq"])
            a["seq"] = a["seq"][:L - n] + s2[p2:p2 + n]
            a["cigar"] = [(0, L - n), (4, n)]
            sup = {"qname": qname, "tid": 1, "pos": p2, "cigar": [(4, L - n), (0, n)], "seq": a["seq"],
                   "qual": list(a["qual"]), "mapq": int(rng.integers(20, 60)), "read": 1, "reverse": False,
                   "flag": (a["flag"] & ~2) | 2048, "tags": [("RG", "run1")]}
            a["tags"] = [("RG", "run1"), ("SA", f"{names[1]},{p2 + 1},+,{L - n}S{n}M,{sup['mapq']},0;")]
            sup["tags"] = [("RG", "run1"), ("SA", f"{names[0]},{a['pos'] + 1},+,{L - n}M{n}S,{a['mapq']},0;")]
            sup["mate"] = b
            extra.append(sup)
        # mate fields
        for r, m in ((a, b), (b, a)):
            r["mtid"] = m["tid"]
            r["mpos"] = m["pos"]
            if m["reverse"]:
                r["flag"] |= 32
            if r["reverse"]:
                r["flag"] |= 16
        if not (a["flag"] & 4 or b["flag"] & 4) and a["tid"] == b["tid"]:
            left = min(a["pos"], b["pos"])
            right = max(end(a), end(b))
            tl = right - left
            a["tlen"] = tl if a["pos"] <= b["pos"] else -tl
            b["tlen"] = -a["tlen"]
            if a["pos"] == b["pos"]:
                a["tlen"], b["tlen"] = tl, -tl
        else:
            a["tlen"] = b["tlen"] = 0
    for r in extra:
        if r["reverse"]:
            r["flag"] |= 16
        m = r.get("mate")
        if m is None:
            src = r["secondary_of"]
            r["mtid"], r["mpos"], r["tlen"] = src["mtid"], src["mpos"], 0
        else:
            r["mtid"], r["mpos"], r["tlen"] = m["tid"], m["pos"], 0
            if m["reverse"]:
                r["flag"] |= 32
    # two unmapped pairs, unplaced, at the end of the file
    tail = []
    for _ in range(2):
        qname = f"SIM:1:FC1:9:{int(rng.integers(1, 999))}:{int(rng.integers(1000, 20000))}"
        for k in (1, 2):
            tail.append({"qname": qname, "tid": -1, "pos": -1, "cigar": [], "mapq": 0, "reverse": False,
                         "seq": "".join(rng.choice(list(BASES), size=READ_LEN)),
                         "qual": [int(x) for x in _qualities(rng, READ_LEN)], "flag": 1 | 4 | 8 | (64 if k == 1 else 128),
                         "mtid": -1, "mpos": -1, "tlen": 0, "tags": [("RG", "run1")]})
    every = records + extra
    for r in every:
        if "flag" not in r:
            raise AssertionError(r)
        r.setdefault("tags", [("RG", "run1")])
        if r["cigar"]:
            indels = sum(n for op, n in r["cigar"] if op in (1, 2))
            r["tags"] = list(r["tags"]) + [("AS", int(max(0, 100 - 6 * indels)))]
    _no_overlap_ties(records)
    every.sort(key=lambda r: (r["tid"], r["pos"], r["flag"] & 16, r["qname"], r["flag"]))
    return every + tail


def _no_overlap_ties(records: list[dict[str, Any]]) -> None:
    """Where the two mates of a proper pair overlap and call different bases at a position,
    give them different qualities (htslib breaks such ties by a hash of the read name)."""
    pairs: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        if r["flag"] & 2 and not r["flag"] & (4 | 256 | 2048):
            pairs.setdefault(r["qname"], []).append(r)
    for a, b in (v for v in pairs.values() if len(v) == 2):
        if a["tid"] != b["tid"]:
            continue
        ma, mb = _ref_map(a), _ref_map(b)
        for p in sorted(set(ma) & set(mb)):
            i, j = ma[p], mb[p]
            if a["seq"][i] != b["seq"][j] and a["qual"][i] == b["qual"][j]:
                b["qual"][j] = b["qual"][j] + 1 if b["qual"][j] < 41 else b["qual"][j] - 1


def _ref_map(r: dict[str, Any]) -> dict[int, int]:
    """Reference position -> query index over the aligned (M) bases."""
    out = {}
    q, p = 0, r["pos"]
    for op, n in r["cigar"]:
        if op == 0:
            for k in range(n):
                out[p + k] = q + k
            q += n
            p += n
        elif op in (1, 4):
            q += n
        elif op == 2:
            p += n
    return out


def _segment(r: dict[str, Any], header: Any) -> Any:
    import pysam

    a = pysam.AlignedSegment(header)
    a.query_name = r["qname"]
    a.flag = int(r["flag"])
    a.reference_id = int(r["tid"])
    a.reference_start = int(r["pos"])
    a.mapping_quality = int(r["mapq"])
    if r["cigar"]:
        a.cigartuples = [(int(op), int(n)) for op, n in r["cigar"]]
    a.query_sequence = r["seq"]
    a.query_qualities = pysam.qualitystring_to_array("".join(chr(q + 33) for q in r["qual"]))
    a.next_reference_id = int(r["mtid"])
    a.next_reference_start = int(r["mpos"])
    a.template_length = int(r["tlen"])
    a.set_tags(r["tags"])
    return a
