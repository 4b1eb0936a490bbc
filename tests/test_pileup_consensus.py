"""Tests of the built-in `pileup_consensus` oracle with real pysam (no mocks)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pysam = pytest.importorskip("pysam")

from recon import Registry  # noqa: E402
from recon.artifacts.pileup_consensus import analyse, pileup_consensus  # noqa: E402
from recon.artifacts.pileup_consensus import reference as ref  # noqa: E402
from recon.audit import grade_baselines  # noqa: E402
from recon.build import build_task  # noqa: E402
from recon.grader import grade  # noqa: E402

FIELDS = {"mean_depth", "depth_windows", "zero_depth", "max_depth", "max_depth_at", "called", "no_call",
          "consensus_length", "mismatch_rate", "snvs", "hom_snvs", "het_snvs", "transitions", "transversions",
          "insertions", "deletions"}
EVIDENCE = {"consensus.fa", "calls.vcf", "summary.json", "pileup.tsv"}


def params(**kw: Any) -> dict[str, Any]:
    base = {"stepper": "samtools", "min_mapping_quality": 20, "min_base_quality": 13, "ignore_overlaps": True,
            "ignore_orphans": True, "min_depth": 4, "call_fraction": 0.7, "indel_fraction": 0.25, "coverage": 20.0,
            "insert_mean": 180.0, "error_rate": 0.01, "duplicate_rate": 0.1, "seed": 5}
    base.update(kw)
    return base


def run(p: dict[str, Any], root: Path) -> tuple[dict[str, Any], Path, dict[str, Path]]:
    inputs = pileup_consensus.make_inputs(p, root / "inputs")
    return pileup_consensus(p, root / "evidence", inputs), root / "evidence", inputs


def scenario(p: dict[str, Any], inputs: dict[str, Path]) -> dict[str, Any]:
    return {"task": "pileup_consensus", "id": "public_1", "parameters": p,
            "inputs": {k: str(v) for k, v in inputs.items()}}


def mismatches(got: dict[str, Any], want: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    return [(f, got[f], want[f]) for f, o in pileup_consensus.outputs.items() if not o.compare(got[f], want[f])]


def check_outputs(out: dict[str, Any]) -> None:
    assert set(out) == FIELDS
    json.dumps(out, allow_nan=False)
    assert out["hom_snvs"] + out["het_snvs"] == len(out["snvs"])
    assert out["transitions"] + out["transversions"] >= len(out["snvs"])
    assert 0.0 <= out["mismatch_rate"] < 0.5 and out["max_depth"] >= out["mean_depth"] >= 0
    assert out["consensus_length"] >= out["called"] + out["no_call"]


@pytest.fixture(scope="module")
def typical(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], dict[str, Any], Path, dict[str, Path]]:
    p = params()
    out, ev, inputs = run(p, tmp_path_factory.mktemp("typical"))
    return p, out, ev, inputs


# ------------------------------------------------------------------ the oracle itself
def test_outputs_and_evidence_agree(typical: Any) -> None:
    p, out, ev, inputs = typical
    check_outputs(out)
    assert {f.name for f in ev.iterdir()} == EVIDENCE == set(pileup_consensus.evidence)
    assert set(pileup_consensus.published_evidence()) == {"consensus.fa", "calls.vcf", "summary.json"}
    fa = ref.read_fasta(str(ev / "consensus.fa"))
    assert sum(len(s) for s in fa.values()) == out["consensus_length"]
    assert sum(s.count("N") for s in fa.values()) == out["no_call"]
    vcf = [line.split("\t") for line in (ev / "calls.vcf").read_text().splitlines() if not line.startswith("#")]
    kinds = [v[7].split("KIND=")[1] for v in vcf]
    assert kinds.count("hom") == out["hom_snvs"] and kinds.count("het") == out["het_snvs"]
    assert kinds.count("ins") == len(out["insertions"]) and kinds.count("del") == len(out["deletions"])
    summary = json.loads((ev / "summary.json").read_text())
    contigs = summary["contigs"]
    assert list(contigs) == ["chr1", "chr2"] and summary["unplaced_records"] == 4
    assert sum(c["pileup"]["zero_depth"] for c in contigs.values()) == out["zero_depth"]
    assert sum(c["consensus"]["no_call"] for c in contigs.values()) == out["no_call"]
    assert [w for c in contigs.values() for w in c["pileup"]["depth_windows"]] == pytest.approx(
        out["depth_windows"], rel=1e-3)
    recs = contigs["chr1"]["records"]
    assert recs["secondary"] > 0 and recs["duplicate"] > 0 and recs["paired_not_proper"] > 0
    rows = (ev / "pileup.tsv").read_text().splitlines()
    assert len(rows) - 1 == sum(c["pileup"]["columns"] for c in contigs.values())


def test_stepper_semantics(tmp_path: Path, typical: Any) -> None:
    p, _, _, inputs = typical
    # the "all" stepper never reads the mapping quality threshold nor the orphan switch
    a = analyse(params(stepper="all", min_mapping_quality=0, ignore_orphans=False), inputs)[0]
    b = analyse(params(stepper="all", min_mapping_quality=30, ignore_orphans=True), inputs)[0]
    assert a == b
    # the samtools stepper does
    s0 = analyse(params(stepper="samtools", min_mapping_quality=0, ignore_orphans=False), inputs)[0]
    s30 = analyse(params(stepper="samtools", min_mapping_quality=30, ignore_orphans=True), inputs)[0]
    assert s30["mean_depth"] < s0["mean_depth"] <= a["mean_depth"]
    # nofilter keeps duplicates and secondary alignments
    n = analyse(params(stepper="nofilter"), inputs)[0]
    assert n["mean_depth"] > a["mean_depth"]
    # overlapping mates count once
    o = analyse(params(stepper="all", ignore_overlaps=False), inputs)[0]
    assert o["mean_depth"] > a["mean_depth"]


def _tiny_bam(root: Path) -> dict[str, Path]:
    """One deletion read whose next base has quality 5, one whose next base has 30, and an
    overlapping proper pair that disagrees at one position (qualities 20 and 25)."""
    seq = "ACGTACGTACGTTTGGCCAAACGTACGTAGCTAGCTAGGATCGATCGATTTACGACGATCGA" * 3
    root.mkdir(parents=True, exist_ok=True)
    (root / "reference.fa").write_text(">c1\n" + seq + "\n")
    hdr = {"HD": {"VN": "1.6", "SO": "coordinate"}, "SQ": [{"SN": "c1", "LN": len(seq)}]}

    def seg(name: str, flag: int, pos: int, cigar: str, s: str, q: list[int], mpos: int = -1, tlen: int = 0) -> Any:
        a = pysam.AlignedSegment()
        a.query_name, a.flag, a.reference_id, a.reference_start = name, flag, 0, pos
        a.mapping_quality, a.cigarstring, a.query_sequence = 60, cigar, s
        a.query_qualities = pysam.qualitystring_to_array("".join(chr(33 + x) for x in q))
        a.next_reference_id, a.next_reference_start, a.template_length = (0 if mpos >= 0 else -1), mpos, tlen
        return a

    body = seq[10:15] + seq[17:22]
    r2 = list(seq[40:60])
    r2[5] = "A" if r2[5] != "A" else "C"
    recs = [seg("del_low", 0, 10, "5M2D5M", body, [30] * 5 + [5] + [30] * 4),
            seg("del_ok", 0, 10, "5M2D5M", body, [30] * 10),
            seg("pair", 1 | 2 | 32 | 64, 30, "20M", seq[30:50], [20] * 20, mpos=40, tlen=30),
            seg("pair", 1 | 2 | 16 | 128, 40, "20M", "".join(r2), [25] * 20, mpos=30, tlen=-30)]
    with pysam.AlignmentFile(str(root / "reads.bam"), "wb", header=hdr) as fh:
        for r in recs:
            fh.write(r)
    pysam.index(str(root / "reads.bam"), str(root / "index.bai"))
    return {"reference": root / "reference.fa", "reads": root / "reads.bam", "index": root / "index.bai"}


def test_deletions_and_overlaps_on_a_hand_made_bam(tmp_path: Path) -> None:
    inputs = _tiny_bam(tmp_path)
    p = params(stepper="all", min_base_quality=13, min_depth=1)
    _, detail = analyse(p, inputs)
    cols = detail["columns"]["c1"]
    assert cols[15]["counts"] == {"*": 1} and cols[15]["nseg"] == 2      # judged by the next base: 5 < 13
    assert cols[17]["depth"] == 1                                         # that base itself, too
    assert cols[44]["depth"] == 1 and cols[44]["nseg"] == 2               # agreeing mates: once
    assert cols[45]["depth"] == 1 and sum(cols[45]["counts"].values()) == 1   # 25 wins at 0.8 x 25 = 20
    p16 = params(stepper="all", min_base_quality=21, min_depth=1)
    assert analyse(p16, inputs)[1]["columns"]["c1"][45]["depth"] == 0     # 20 < 21: the position is lost
    refcols = ref.process(scenario(p, inputs))[1]["columns"]["c1"]
    for k in (15, 17, 44, 45):
        assert (refcols[k]["depth"], refcols[k]["counts"]) == (cols[k]["depth"], cols[k]["counts"])


# ------------------------------------------------------------ reference vs oracle
def test_reference_program_matches_oracle(tmp_path: Path) -> None:
    cases = [params(), params(stepper="nofilter", ignore_overlaps=True, min_base_quality=25, seed=8),
             params(stepper="all", ignore_overlaps=False, insert_mean=130.0, coverage=30.0, seed=9)]
    for k, p in enumerate(cases):
        out, _, inputs = run(p, tmp_path / str(k))
        proc = subprocess.run([sys.executable, str(pileup_consensus.reference)], input=json.dumps(scenario(p, inputs)),
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        got = json.loads(proc.stdout)
        assert mismatches(got, out) == [] and got["snvs"] == out["snvs"]


@pytest.mark.parametrize("corner", ["lo", "hi"])
def test_axis_corners(tmp_path: Path, corner: str) -> None:
    axes = pileup_consensus.axes
    p = {n: a.edges()[0 if corner == "lo" else -1] for n, a in axes.items()}
    out, _, inputs = run(p, tmp_path)
    check_outputs(out)
    assert sum(f.stat().st_size for f in inputs.values()) < 1_000_000
    assert mismatches(ref.solve(scenario(p, inputs)), out) == []


def _patched(sc: dict[str, Any], **swap: Any) -> dict[str, Any]:
    old = {k: getattr(ref, k) for k in swap}
    try:
        for k, v in swap.items():
            setattr(ref, k, v)
        return ref.solve(sc)
    finally:
        for k, v in old.items():
            setattr(ref, k, v)


def _zero_lower(a: dict[str, Any], b: dict[str, Any]) -> None:
    ma, mb = ref.aligned(a), ref.aligned(b)
    for pos in set(ma) & set(mb):
        i, j = ma[pos], mb[pos]
        if a["qual"][i] >= b["qual"][j]:
            b["qual"][j] = 0
        else:
            a["qual"][i] = 0


_KEEP = ref.keep


def _thresholds_everywhere(r: dict[str, Any], p: dict[str, Any]) -> bool:
    return _KEEP(r, {**p, "stepper": "samtools"} if p["stepper"] == "all" else p)


WRONG: dict[str, tuple[dict[str, Any], set[str]]] = {
    "zero the lower mate only": ({"tweak_overlap": _zero_lower}, {"mean_depth"}),
    "every stepper reads the thresholds": ({"keep": _thresholds_everywhere}, {"mean_depth"}),
}


@pytest.mark.parametrize("name", sorted(WRONG))
def test_a_wrong_rule_fails(tmp_path: Path, name: str) -> None:
    p = params(stepper="all", ignore_overlaps=True, min_base_quality=20, min_mapping_quality=25, seed=12)
    out, _, inputs = run(p, tmp_path)
    swap, must = WRONG[name]
    failed = {f for f, _, _ in mismatches(_patched(scenario(p, inputs), **swap), out)}
    assert must <= failed, failed


def test_deterministic_inputs(tmp_path: Path) -> None:
    a = pileup_consensus.make_inputs(params(seed=99), tmp_path / "a")
    b = pileup_consensus.make_inputs(params(seed=99), tmp_path / "b")
    c = pileup_consensus.make_inputs(params(seed=100), tmp_path / "c")
    for k in ("reference", "reads", "index"):
        assert a[k].read_bytes() == b[k].read_bytes()
    assert a["reads"].read_bytes() != c["reads"].read_bytes()
    with pysam.AlignmentFile(str(a["reads"]), "rb", index_filename=str(a["index"])) as bam:
        flags = [r.flag for r in bam.fetch(until_eof=True)]
        assert bam.header["HD"]["SO"] == "coordinate"
    assert any(f & 2048 for f in flags) or any(f & 256 for f in flags)
    assert sum(1 for f in flags if f & 4) >= 4


# ------------------------------------------------------------------ built task
@pytest.fixture(scope="module")
def small_task(tmp_path_factory: pytest.TempPathFactory) -> Path:
    registry = Registry.default(entry_points=False)
    return build_task(registry, "pileup_consensus", tmp_path_factory.mktemp("pileup_small"), n_public=3, n_hidden=2,
                      probes=1, workers=1, select="random").path


def test_reference_grades_one_and_baselines_fall_short(small_task: Path) -> None:
    doc = grade(small_task, small_task / "solution", runtime="local", nonce="pileup-test", probes=1, workers=1)
    assert doc["reward"] == 1.0
    rows = {r.name: r for r in grade_baselines(small_task, pileup_consensus, runtime="local")}
    assert set(rows) == {"textbook", "expert"}
    for row in rows.values():
        assert 0.5 < row.reward < 1.0, (row.name, row.reward, row.detail)
