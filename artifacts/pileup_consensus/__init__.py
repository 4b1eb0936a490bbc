"""Built-in oracle `pileup_consensus`: pileup, depth, consensus and small-variant calls from a
coordinate-sorted BAM, computed with pysam."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from recon import Bool, Choice, Evidence, Float, Int, Integer, Number, Seed, SequenceOf, SetOf, Text, oracle

WINDOW = 250
HET_FRACTION = 0.2
MIN_INDEL_READS = 2
ALLELES = "ACGT*"
IUPAC = {frozenset("AG"): "R", frozenset("CT"): "Y", frozenset("CG"): "S", frozenset("AT"): "W",
         frozenset("GT"): "K", frozenset("AC"): "M"}
TRANSITIONS = {frozenset("AG"), frozenset("CT")}


def make_inputs(params: dict[str, Any], directory: Path) -> None:
    """Write reference.fa, reads.bam and index.bai."""
    from .synth import build

    build(params, Path(directory))


def read_fasta(path: Path) -> dict[str, str]:
    seqs: dict[str, list[str]] = {}
    name = None
    for line in Path(path).read_text(encoding="ascii").splitlines():
        if line.startswith(">"):
            name = line[1:].split()[0]
            seqs[name] = []
        elif name is not None:
            seqs[name].append(line.strip().upper())
    return {k: "".join(v) for k, v in seqs.items()}


def _parse(entry: str) -> tuple[str, str | None, int]:
    """One pileup entry: (allele, insertion sequence or None, deletion length or 0)."""
    e = entry.upper()
    allele = e[0]
    if len(e) == 1:
        return allele, None, 0
    sign = e[1]
    k = 2
    while k < len(e) and e[k].isdigit():
        k += 1
    n = int(e[2:k])
    if sign == "+":
        return allele, e[k:k + n], 0
    return allele, None, n


def call_column(counts: dict[str, int], depth: int, min_depth: int, call_fraction: float) -> str:
    """The consensus symbol of one position: a base, '*' (deleted), an IUPAC pair or N."""
    if depth < min_depth or depth == 0:
        return "N"
    ranked = sorted(ALLELES, key=lambda a: (-counts.get(a, 0), ALLELES.index(a)))
    c1, c2 = counts.get(ranked[0], 0), counts.get(ranked[1], 0)
    if c1 >= call_fraction * depth:
        return ranked[0]
    if (c2 > 0 and "*" not in ranked[:2] and c2 >= HET_FRACTION * depth
            and c1 + c2 >= call_fraction * depth):
        return IUPAC[frozenset(ranked[:2])]
    return "N"


def analyse(params: dict[str, Any], inputs: dict[str, Path]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The workflow with pysam; the outputs and per-stage details for the evidence."""
    import pysam

    ref = read_fasta(inputs["reference"])
    bam = pysam.AlignmentFile(str(inputs["reads"]), "rb", index_filename=str(inputs["index"]))
    min_depth = int(params["min_depth"])
    call_fraction = float(params["call_fraction"])
    indel_fraction = float(params["indel_fraction"])
    columns: dict[str, list[dict[str, Any]]] = {}
    for contig in bam.references:
        seq = ref[contig]
        cols: list[dict[str, Any]] = [{"nseg": 0, "depth": 0, "counts": {}, "ins": {}, "dels": {}}
                                      for _ in range(len(seq))]
        for col in bam.pileup(contig, 0, len(seq), truncate=True, stepper=params["stepper"],
                              min_base_quality=int(params["min_base_quality"]),
                              min_mapping_quality=int(params["min_mapping_quality"]),
                              ignore_overlaps=bool(params["ignore_overlaps"]),
                              ignore_orphans=bool(params["ignore_orphans"]), max_depth=100000):
            c = cols[col.reference_pos]
            c["nseg"] = col.nsegments
            entries = col.get_query_sequences(add_indels=True) or []
            c["depth"] = col.get_num_aligned()
            for e in entries:
                allele, ins, dl = _parse(e)
                c["counts"][allele] = c["counts"].get(allele, 0) + 1
                if ins is not None:
                    c["ins"][ins] = c["ins"].get(ins, 0) + 1
                if dl:
                    c["dels"][dl] = c["dels"].get(dl, 0) + 1
        columns[contig] = cols
    bam.close()
    return summarise(ref, columns, min_depth, call_fraction, indel_fraction)


def summarise(ref: dict[str, str], columns: dict[str, list[dict[str, Any]]], min_depth: int,
              call_fraction: float, indel_fraction: float) -> tuple[dict[str, Any], dict[str, Any]]:
    """Consensus, calls and the summary, from the per-position columns."""
    total = depth_sum = zero = called = no_call = 0
    best = (-1, "")
    windows: list[float] = []
    snvs: set[str] = set()
    ins_calls: set[str] = set()
    del_calls: set[str] = set()
    het = hom = ts = tv = 0
    mism = match_depth = 0
    consensus: dict[str, str] = {}
    calls: dict[str, list[str]] = {}
    vcf: list[tuple[str, int, str, str, int, float, str]] = []
    for contig, cols in columns.items():
        seq = ref[contig]
        out: list[str] = []
        cl: list[str] = []
        for p, c in enumerate(cols):
            d = c["depth"]
            total += 1
            depth_sum += d
            zero += d == 0
            if d > best[0]:
                best = (d, f"{contig}:{p + 1}")
            call = call_column(c["counts"], d, min_depth, call_fraction)
            cl.append(call)
            r = seq[p]
            if call == "N":
                no_call += 1
                out.append("N")
            elif call != "*":
                called += 1
                out.append(call)
            if call in "ACGT" and d:
                match_depth += d
                mism += d - c["counts"].get(call, 0)
            if call in "ACGT" and call != r:
                hom += 1
                snvs.add(f"{contig}:{p + 1}:{r}>{call}")
                ts += frozenset(r + call) in TRANSITIONS
                tv += frozenset(r + call) not in TRANSITIONS
                vcf.append((contig, p + 1, r, call, d, c["counts"].get(call, 0) / d, "hom"))
            elif call in "RYSWKM":
                pair = next(k for k, v in IUPAC.items() if v == call)
                alts = sorted(a for a in pair if a != r)
                if alts:
                    het += 1
                    snvs.add(f"{contig}:{p + 1}:{r}>{call}")
                    for a in alts:
                        ts += frozenset(r + a) in TRANSITIONS
                        tv += frozenset(r + a) not in TRANSITIONS
                    vcf.append((contig, p + 1, r, ",".join(alts), d,
                                sum(c["counts"].get(a, 0) for a in alts) / d, "het"))
            # indels anchored at this position
            for s, n in sorted(c["ins"].items()):
                if d and n >= MIN_INDEL_READS and n >= indel_fraction * d:
                    ins_calls.add(f"{contig}:{p + 1}:+{s}")
                    vcf.append((contig, p + 1, r, r + s, d, n / d, "ins"))
            if c["ins"] and d:
                s, n = min(c["ins"].items(), key=lambda kv: (-kv[1], kv[0]))
                if n >= MIN_INDEL_READS and n >= call_fraction * d and call != "*":
                    out.append(s)
            for n_del, n in sorted(c["dels"].items()):
                if d and n >= MIN_INDEL_READS and n >= indel_fraction * d:
                    gone = seq[p + 1:p + 1 + n_del]
                    del_calls.add(f"{contig}:{p + 1}:-{gone}")
                    vcf.append((contig, p + 1, r + gone, r, d, n / d, "del"))
        for w0 in range(0, len(cols), WINDOW):
            part = cols[w0:w0 + WINDOW]
            windows.append(sum(c["depth"] for c in part) / len(part))
        consensus[contig] = "".join(out)
        calls[contig] = cl
    outputs = {
        "mean_depth": depth_sum / total,
        "depth_windows": windows,
        "zero_depth": zero,
        "max_depth": best[0],
        "max_depth_at": best[1],
        "called": called,
        "no_call": no_call,
        "consensus_length": sum(len(s) for s in consensus.values()),
        "mismatch_rate": mism / match_depth if match_depth else 0.0,
        "snvs": sorted(snvs),
        "hom_snvs": hom,
        "het_snvs": het,
        "transitions": ts,
        "transversions": tv,
        "insertions": sorted(ins_calls),
        "deletions": sorted(del_calls),
    }
    detail = {"columns": columns, "consensus": consensus, "calls": calls, "vcf": vcf, "reference": ref}
    return outputs, detail


# ------------------------------------------------------------------------ the evidence
def _g(x: float) -> str:
    return f"{x:.4g}"


def _bam_census(path: Path, index: Path, params: dict[str, Any]) -> dict[str, dict[str, int]]:
    """Records per contig by category, straight from the BAM (no pileup)."""
    import pysam

    out: dict[str, dict[str, int]] = {}
    with pysam.AlignmentFile(str(path), "rb", index_filename=str(index)) as bam:
        for r in bam.fetch(until_eof=True):
            key = r.reference_name if r.reference_id >= 0 else "*"
            c = out.setdefault(key, {k: 0 for k in ("records", "unmapped", "secondary", "supplementary", "duplicate",
                                                   "qc_fail", "paired_not_proper", "below_mapping_quality")})
            c["records"] += 1
            c["unmapped"] += r.is_unmapped
            c["secondary"] += r.is_secondary
            c["supplementary"] += r.is_supplementary
            c["duplicate"] += r.is_duplicate
            c["qc_fail"] += r.is_qcfail
            c["paired_not_proper"] += r.is_paired and not r.is_proper_pair
            c["below_mapping_quality"] += (not r.is_unmapped) and r.mapping_quality < int(params["min_mapping_quality"])
    return out


def _write_evidence(params: dict[str, Any], inputs: dict[str, Path], out: dict[str, Any], detail: dict[str, Any],
                    evidence: Path) -> None:
    cons = detail["consensus"]
    fa = "".join(f">{c} consensus\n" + "\n".join(s[i:i + 60] for i in range(0, len(s), 60)) + "\n"
                 for c, s in cons.items())
    (evidence / "consensus.fa").write_text(fa, encoding="ascii")

    lines = ["##fileformat=VCFv4.2", "##source=recon pileup_consensus",
             '##INFO=<ID=DP,Number=1,Type=Integer,Description="Depth at the position">',
             '##INFO=<ID=AF,Number=1,Type=Float,Description="Share of the depth behind the call">',
             '##INFO=<ID=KIND,Number=1,Type=String,Description="hom, het, ins or del">']
    lines += [f"##contig=<ID={c},length={len(detail['columns'][c])}>" for c in cons]
    lines.append("#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\tsample1")
    order = {c: i for i, c in enumerate(cons)}
    for contig, pos, ref, alt, dp, af, kind in sorted(detail["vcf"], key=lambda v: (order[v[0]], v[1], v[6], v[3])):
        gt = "1/1" if kind == "hom" else "0/1" if kind == "het" else "./."
        lines.append(f"{contig}\t{pos}\t.\t{ref}\t{alt}\t.\tPASS\tDP={dp};AF={_g(af)};KIND={kind}\tGT\t{gt}")
    (evidence / "calls.vcf").write_text("\n".join(lines) + "\n", encoding="ascii")

    census = _bam_census(inputs["reads"], inputs["index"], params)
    summary: dict[str, Any] = {"contigs": {}, "unplaced_records": census.get("*", {}).get("records", 0)}
    for contig, cols in detail["columns"].items():
        calls = detail["calls"][contig]
        windows = [sum(c["depth"] for c in cols[w:w + WINDOW]) / len(cols[w:w + WINDOW])
                   for w in range(0, len(cols), WINDOW)]
        summary["contigs"][contig] = {
            "length": len(cols),
            "records": census.get(contig, {}),
            "pileup": {"columns": sum(1 for c in cols if c["nseg"]),
                       "entries": sum(c["nseg"] for c in cols),
                       "entries_below_base_quality": sum(c["nseg"] - c["depth"] for c in cols),
                       "mean_depth": float(_g(sum(c["depth"] for c in cols) / len(cols))),
                       "zero_depth": sum(1 for c in cols if c["depth"] == 0),
                       "depth_windows": [float(_g(w)) for w in windows]},
            "consensus": {"bases": sum(1 for x in calls if x in "ACGT"),
                          "ambiguous": sum(1 for x in calls if x in "RYSWKM"),
                          "deleted": sum(1 for x in calls if x == "*"), "no_call": sum(1 for x in calls if x == "N"),
                          "length": len(cons[contig])},
        }
    (evidence / "summary.json").write_text(json.dumps(summary, indent=1) + "\n", encoding="ascii")

    rows = ["contig\tpos\tref\tentries\tdepth\tA\tC\tG\tT\tN\tdel\tinsertions\tdeletions\tcall"]
    for contig, cols in detail["columns"].items():
        calls = detail["calls"][contig]
        for p, c in enumerate(cols):
            if not c["nseg"]:
                continue
            k = c["counts"]
            ins = ";".join(f"{s}:{n}" for s, n in sorted(c["ins"].items()))
            dels = ";".join(f"{d}:{n}" for d, n in sorted(c["dels"].items()))
            rows.append(f"{contig}\t{p + 1}\t{cons_ref(detail, contig, p)}\t{c['nseg']}\t{c['depth']}\t"
                        + "\t".join(str(k.get(a, 0)) for a in "ACGTN*") + f"\t{ins}\t{dels}\t{calls[p]}")
    (evidence / "pileup.tsv").write_text("\n".join(rows) + "\n", encoding="ascii")


def cons_ref(detail: dict[str, Any], contig: str, pos: int) -> str:
    return detail["reference"][contig][pos]


@oracle(
    name="pileup_consensus",
    version="1.0.0",
    title="Pileup, consensus and small-variant calls from a paired-end BAM",
    domain="genomics",
    toolkit=["numpy"],
    requires=["pysam"],
    description=(
        "A genomics lab calls the consensus sequence and the small variants of one diploid sample from its "
        "short-read alignments. The inputs are the reference (two contigs, FASTA) and the sample's paired-end "
        "alignments as a coordinate-sorted, indexed BAM file holding what real runs hold: mapping and base "
        "qualities, soft-clipped ends, insertions and deletions, overlapping mates on short fragments, PCR "
        "duplicates, QC failures, secondary and supplementary alignments, discordant pairs, pairs with an "
        "unmapped mate and unmapped pairs. The lab's pipeline piles the reads up with pysam (not available "
        "here), its read filter, mapping- and base-quality thresholds and its handling of overlapping mates "
        "and of orphan reads set by the parameters; at every reference position it then calls a consensus (a "
        "base, a two-base IUPAC code at a heterozygous site, a deletion, or N where the evidence is too thin) "
        "and it calls the insertions and deletions that follow a position. The question: how deep the usable "
        "coverage is along the reference, how much of the reference the consensus calls, which SNVs "
        "(homozygous and heterozygous) and which indels it finds, and how noisy the bases behind its calls are."
    ),
    axes={
        "stepper": Choice(["samtools", "all", "nofilter"], doc="the pileup's read filter, by the names of pysam's "
                                                               "steppers"),
        "min_mapping_quality": Int(0, 30, doc="mapping quality threshold given to the pileup"),
        "min_base_quality": Int(0, 30, doc="base quality threshold given to the pileup (Phred)"),
        "ignore_overlaps": Bool(doc="whether the pileup is told to ignore the overlaps of read pairs "
                                    "(pysam's ignore_overlaps)"),
        "ignore_orphans": Bool(doc="whether the pileup is told to ignore orphan reads (pysam's ignore_orphans)"),
        "min_depth": Int(2, 10, doc="fewest usable reads at a position for the consensus to call it"),
        "call_fraction": Float(0.6, 0.9, doc="share of a position's usable reads that the consensus allele, or the "
                                             "two alleles of an IUPAC call together, must reach"),
        "indel_fraction": Float(0.15, 0.5, doc="share of a position's usable reads that must show the same insertion "
                                               "or deletion after it for an indel call"),
        "coverage": Float(8.0, 30.0, doc="sequencing depth of the run (read bases per reference base)"),
        "insert_mean": Float(120.0, 400.0, doc="mean fragment length of the library, bases (reads are 100 bases; "
                                               "shorter fragments give overlapping mates)"),
        "error_rate": Float(0.002, 0.02, doc="sequencing error rate per base"),
        "duplicate_rate": Float(0.0, 0.2, doc="share of fragments read twice (PCR duplicates, flagged as such)"),
        "seed": Seed(doc="seed of the reference, the sample's variants and the reads"),
    },
    outputs={
        "mean_depth": Number(abs=1e-6, doc="mean usable depth over every reference position (positions no read "
                                           "reaches count 0); a position's usable depth is the number of entries "
                                           "the pileup reports there that pass its base quality threshold, "
                                           "deletions included"),
        "depth_windows": SequenceOf(Number(abs=1e-6), doc="mean usable depth per window of 250 positions along "
                                                          "each contig, contigs in header order (a contig's last "
                                                          "window may be shorter)"),
        "zero_depth": Integer(tol=0, doc="reference positions with usable depth 0"),
        "max_depth": Integer(tol=0, doc="largest usable depth"),
        "max_depth_at": Text(doc="where it is first reached, as contig:position (1-based)"),
        "called": Integer(tol=0, doc="positions the consensus calls with a base or a two-base IUPAC code"),
        "no_call": Integer(tol=0, doc="positions the consensus calls N"),
        "consensus_length": Integer(tol=0, doc="length of the consensus sequences together: N included, positions "
                                               "called deleted left out, the insertions the consensus adopts added"),
        "mismatch_rate": Number(abs=1e-7, doc="over the positions called with a single base, the share of their "
                                              "usable entries that are not that base"),
        "snvs": SetOf(doc="single-nucleotide variants as contig:position:REF>CALL (1-based; CALL is the called "
                          "base, or the IUPAC code of a heterozygous site)"),
        "hom_snvs": Integer(tol=0, doc="SNVs called with a single base"),
        "het_snvs": Integer(tol=0, doc="SNVs called with an IUPAC code"),
        "transitions": Integer(tol=0, doc="non-reference alleles of the SNVs that are transitions (A<->G, C<->T)"),
        "transversions": Integer(tol=0, doc="non-reference alleles of the SNVs that are transversions"),
        "insertions": SetOf(doc="insertion calls as contig:position:+SEQ (position: the base before the "
                                "insertion, 1-based)"),
        "deletions": SetOf(doc="deletion calls as contig:position:-SEQ (SEQ: the deleted reference bases; "
                               "position: the base before them, 1-based)"),
    },
    # what each output is computed from. Every statistic of the usable depth summarises the
    # depth per position, which is no output itself: depth_windows publishes it at the
    # finest grain (a zero-depth position more or less moves its window's mean by 1/250,
    # far beyond the tolerance), so it stands for it. The calls judge each column's counts
    # against its depth; the SNV counts and classes are read off the SNV list.
    upstream={
        **{name: ["depth_windows"] for name in ("mean_depth", "zero_depth", "max_depth", "max_depth_at", "called",
                                                 "no_call", "snvs", "insertions", "deletions")},
        "mismatch_rate": ["called", "depth_windows"],
        "consensus_length": ["called", "no_call", "insertions"],
        **{name: ["snvs"] for name in ("hom_snvs", "het_snvs", "transitions", "transversions")},
    },
    inputs=make_inputs,
    input_docs={
        "reference": "the reference: FASTA, two contigs (chr1, chr2), 60 bases per line",
        "reads": "the sample's alignments: BAM (BGZF-compressed, coordinate-sorted, SAM spec 1.6), paired-end "
                 "reads of 100 bases or fewer, read group run1; unmapped pairs at the end",
        "index": "the BAI index of reads.bam",
    },
    stages=["decode the BAM (BGZF members, binary records)",
            "the stepper's read filter (flags; mapping quality and orphans only for the samtools stepper)",
            "htslib's overlap handling of proper pairs (agree: summed quality on one mate; disagree: 0.8 x the "
            "better, the other zeroed)",
            "pileup columns with the base quality filter (a deletion judged by the next base's quality)",
            "consensus per position (depth floor, call fraction, IUPAC pair, deletions)",
            "insertion and deletion calls, SNV classes and the depth summary"],
    reference="reference.py",
    evidence={
        "consensus.fa": Evidence("the consensus sequence of each contig, FASTA (60 per line): A/C/G/T, IUPAC "
                                 "codes at heterozygous sites, N without a call, adopted insertions in place, "
                                 "deleted positions left out", reveals="outputs"),
        "calls.vcf": Evidence("every call (SNVs and indels) as VCF 4.2 with its depth (DP) and the share of the "
                              "depth behind it (AF, 4 significant digits), KIND hom/het/ins/del", reveals="outputs"),
        "summary.json": Evidence("per contig: its records by category (unmapped, secondary, supplementary, "
                                 "duplicate, QC-failed, paired but not in a proper pair, below the mapping quality "
                                 "threshold), the pileup's columns, entries and the entries below the base quality "
                                 "threshold, mean depth, zero-depth positions, depth per window, and the consensus "
                                 "by kind of call; the unplaced records", reveals="summary"),
        "pileup.tsv": Evidence("one row per position the pileup reports: entries before and depth after the base "
                               "quality threshold, counts of A, C, G, T, N and deletions, the insertions (SEQ:count) "
                               "and deletions (length:count) that follow it, and its consensus call",
                               reveals="trace"),
    },
    evidence_level="summary",
)
def pileup_consensus(params: dict[str, Any], evidence: Path, inputs: dict[str, Path]) -> dict[str, Any]:
    """Pile up a paired-end BAM with pysam, call a consensus and small variants, summarise.

    Inputs (synth.py writes them): reference.fa, reads.bam (coordinate-sorted, BGZF,
    header @HD/@SQ/@RG/@PG; tags RG, AS, SA), index.bai. The oracle runs pysam (pinned);
    reference.py reproduces it from the bytes with gzip/struct.

    1. Pileup, per contig in header order: AlignmentFile.pileup(contig, 0, length,
       truncate=True, stepper, min_base_quality, min_mapping_quality, ignore_overlaps,
       ignore_orphans, max_depth=100000), no fasta file (so no BAQ, no capQ).
       Read filter by stepper (htslib/pysam semantics):
       - every stepper: unmapped records never enter (bam_plp_push skips them);
       - "nofilter": nothing else; duplicates, QC failures, secondary and supplementary
         alignments all count;
       - "all": drops flag & (UNMAP | SECONDARY | QCFAIL | DUP); supplementary stays;
         min_mapping_quality and ignore_orphans are IGNORED (only the samtools stepper
         reads them);
       - "samtools": the same flags, then mapq < min_mapping_quality drops the record,
         then with ignore_orphans a PAIRED record without PROPER_PAIR is dropped
         (discordant pairs, mates of unmapped reads, and the supplementary and secondary
         records, which the simulator writes without the proper-pair bit).
    2. Overlapping mates (ignore_overlaps): htslib's overlap_push/tweak_overlap_quality
       on the records that passed the filter, in file order: a record is considered
       only if its mate is mapped (no MUNMAP), it has PROPER_PAIR, its mate is on the
       same contig, and not (|TLEN| >= 2 x read length and mate start >= its end). The
       first mate seen waits (if mate start >= its start); when the second arrives, over
       the reference positions where both have an aligned (M) base: same base ->
       one mate gets min(qa + qb, 200), the other 0 (which one is a hash of the read
       name; it never matters here); different bases -> the higher-quality one gets
       int(0.8 x q), the other 0. The pileup reads one record ahead, so the adjustment is
       visible from the previous record's start on. The simulator guarantees that
       nothing here depends on htslib's hash: no equal qualities at a disagreement, no
       read starting right after a deletion or ending on an indel's anchor base, no
       errors inside inserted bases, no sequencing indels (so the deletion catch-up
       branch never runs).
    3. Entries: each read contributes to a column at every aligned base and every
       deleted position (is_del); pysam's base quality filter keeps an entry when
       quality[qpos] >= min_base_quality, where a deletion's qpos is the NEXT query base
       (so a deletion counts only if the base after it passes). Depth = get_num_aligned()
       (entries passing the filter, deletions included); get_query_sequences(add_indels=
       True) gives the entries: a base (lower case on the reverse strand; upper-cased
       here), '*' for a deletion, and "+nSEQ" / "-nNNN" appended to the last aligned base
       before an insertion / deletion. Soft clips contribute nothing. Positions no read
       reaches have depth 0.
    4. Consensus per position, with d = depth and counts over A, C, G, T, '*' (N bases
       count in d but are never an allele): d < min_depth (or 0) -> N; rank the alleles
       by count, ties in the order A C G T *; top count >= call_fraction x d -> that
       allele ('*' = the position is deleted from the consensus); else if neither of
       the top two is '*', the second's count > 0 and >= 0.2 x d and both together >=
       call_fraction x d -> their IUPAC code (R=AG Y=CT S=CG W=AT K=GT M=AC); else N.
       The consensus adopts after a position the most frequent insertion (ties: the
       smaller sequence) when its count >= 2 and >= call_fraction x d and the position is
       not deleted.
    5. Calls. SNVs: single-base calls differing from the reference (hom) and IUPAC calls
       with at least one non-reference allele (het), written contig:pos1:REF>CALL;
       transitions / transversions count non-reference alleles (A<->G, C<->T are
       transitions). Indels: for each distinct insertion sequence / deletion length
       hanging on position p: count >= 2 and count >= indel_fraction x d(p) -> call
       contig:p1:+SEQ or contig:p1:-DELETED_REF_BASES (p1 = p + 1, the anchor base).
    6. Summary: mean_depth = sum of depths / reference length (both contigs);
       depth_windows: mean depth of each 250-position window per contig (last window
       shorter); zero_depth; max_depth and the first position reaching it (contig order,
       then position); called (base or IUPAC), no_call (N), consensus_length = called +
       no_call + adopted insertion lengths; mismatch_rate = sum over single-base calls
       of (d - count of the called base) / sum of their d (0.0 when none).

    Tolerances, and why:
    - Counts, sets, the max position: exact. Every rule is integer arithmetic on counts;
      another stepper rule, quality comparison (> vs >=), overlap rule or deletion rule
      changes counts at many positions.
    - mean_depth, depth_windows: 1e-6. Ratios of integers; one entry more or less moves
      a window by 1/250 = 0.004 and the mean by ~3e-4.
    - mismatch_rate: 1e-7. A ratio of integer sums of ~5e4; one entry moves it by ~2e-5.
    """
    out, detail = analyse(params, inputs)
    _write_evidence(params, inputs, out, detail, Path(evidence))
    return out
