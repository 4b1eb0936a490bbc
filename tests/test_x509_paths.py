"""Tests of the built-in `x509_paths` oracle with the real pyca/cryptography verifier (no mocks)."""
from __future__ import annotations

import csv
import ipaddress
import json
import random
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("cryptography")
pytest.importorskip("asn1crypto")

from cryptography import x509  # noqa: E402
from cryptography.x509.oid import ExtendedKeyUsageOID  # noqa: E402

from recon import Registry  # noqa: E402
from recon.artifacts.x509_paths import REASON_CODES, make_inputs, x509_paths  # noqa: E402
from recon.artifacts.x509_paths import _audit, _pki  # noqa: E402
from recon.artifacts.x509_paths import reference as ref  # noqa: E402
from recon.audit import grade_baselines  # noqa: E402
from recon.build import build_task  # noqa: E402
from recon.grader import grade  # noqa: E402

SEQUENCES = ("stage", "reason", "chain_length", "issuer_used", "anchor_used", "days_to_expiry")
CODES = {"ok"} | {part.split(" (")[0].strip() for part in REASON_CODES.split("), ")}
INPUTS = ("roots", "intermediates", "endpoints", "inventory")


def params(**kw: Any) -> dict[str, Any]:
    base = {"endpoints": 12, "defect_rate": 0.5, "client_share": 0.3, "max_chain_depth": 2, "trust_store": "current",
            "name_constraints": "both", "key_mix": "mixed", "seed": 7}
    base.update(kw)
    return base


def run(p: dict[str, Any], root: Path) -> tuple[dict[str, Any], Path, dict[str, Path]]:
    inputs = x509_paths.make_inputs(p, root / "inputs")
    return x509_paths(p, root / "evidence", inputs), root / "evidence", inputs


def scenario(p: dict[str, Any], inputs: dict[str, Path]) -> dict[str, Any]:
    return {"task": "x509_paths", "id": "public_1", "parameters": p, "inputs": {k: str(v) for k, v in inputs.items()}}


def mismatches(got: dict[str, Any], want: dict[str, Any]) -> list[str]:
    return [f for f, o in x509_paths.outputs.items() if not o.compare(got[f], want[f])]


def check_outputs(p: dict[str, Any], out: dict[str, Any]) -> None:
    n = p["endpoints"]
    for f in SEQUENCES:
        assert len(out[f]) == n, f
    assert set(out["reason"]) <= CODES, set(out["reason"]) - CODES
    for st, rc, ln, iu, au, dd in zip(*(out[f] for f in SEQUENCES)):
        assert (st == "ok") == (rc == "ok") == (ln > 0) == (iu != "none") == (au != "none") == (dd >= 0)
        if st == "ok":
            assert ln >= 2 and au.startswith("root:") and (ln > 2) == iu.startswith("int:")
    assert out["leaf_rejections"] == out["stage"].count("leaf")
    assert out["path_failures"] == out["stage"].count("path")
    assert out["valid_servers"] + out["valid_clients"] == out["stage"].count("ok")
    ok_days = [d for d, s in zip(out["days_to_expiry"], out["stage"]) if s == "ok"]
    assert out["next_expiry_days"] == (min(ok_days) if ok_days else -1.0)


# --------------------------------------------------------------------- declaration
def test_declaration_keeps_the_tool_on_the_verifier_side() -> None:
    assert x509_paths.toolkit == ("asn1crypto",) and x509_paths.requires == ("cryptography",)
    assert x509_paths.evidence_level == "summary"
    assert set(x509_paths.published_evidence()) == {"report.csv", "validator.log", "certificates.csv"}
    assert "whatif.csv" in x509_paths.published_evidence("trace")
    assert set(x509_paths.input_docs) == set(INPUTS) and len(x509_paths.stages) >= 4
    assert 10 <= len(x509_paths.outputs) <= 20
    for word in ("LAST candidate's error", "buckets", "d > max_chain_depth", "certificate's own order",
                 "inclusive", "Tolerances, and why"):
        assert word in " ".join(x509_paths.recipe.split()), word
    public = x509_paths.public()
    what = " ".join([public["description"], *(a["doc"] for a in public["axes"].values()),
                     *(o["doc"] for o in public["outputs"].values())]).lower()
    for word in ("last candidate", "bucket", "key identifier", "depth-first", "stable", "in the certificate's order"):
        assert word not in what, word


# -------------------------------------------------------------------------- inputs
def test_inputs_are_a_pki_in_pem_with_an_inventory(tmp_path: Path) -> None:
    p = params(endpoints=9, seed=3)
    files = x509_paths.make_inputs(p, tmp_path / "a")
    assert set(files) == set(INPUTS)
    roots = x509.load_pem_x509_certificates(files["roots"].read_bytes())
    bundle = x509.load_pem_x509_certificates(files["intermediates"].read_bytes())
    leaves = x509.load_pem_x509_certificates(files["endpoints"].read_bytes())
    assert len(roots) == 2 and len(leaves) == 9 and len(bundle) >= 6
    assert all(r.issuer == r.subject for r in roots)
    with open(files["inventory"], newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert [int(r["endpoint"]) for r in rows] == list(range(9)) and {r["role"] for r in rows} <= {"server", "client"}
    # a cross-certificate: the newest root's name and key, issued by the other root
    r2 = [r for r in roots if "Root CA R2" in r.subject.rfc4514_string()]
    cross = [b for b in bundle if "Root CA R2" in b.subject.rfc4514_string()]
    assert len(r2) == 1 and len(cross) == 1 and cross[0].issuer != cross[0].subject
    assert cross[0].subject == r2[0].subject and cross[0].public_key() == r2[0].public_key()
    # deterministic, byte for byte
    again = x509_paths.make_inputs(dict(p), tmp_path / "b")
    assert all(files[k].read_bytes() == again[k].read_bytes() for k in INPUTS)
    other = x509_paths.make_inputs(params(endpoints=9, seed=4), tmp_path / "c")
    assert files["endpoints"].read_bytes() != other["endpoints"].read_bytes()


# ----------------------------------------------------------------- oracle and evidence
@pytest.fixture(scope="module")
def dirty(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], dict[str, Any], Path, dict[str, Path]]:
    p = params(endpoints=16, defect_rate=0.7)
    out, ev, inputs = run(p, tmp_path_factory.mktemp("dirty"))
    return p, out, ev, inputs


def test_evidence_matches_outputs_and_declaration(dirty: Any) -> None:
    p, out, ev, _ = dirty
    check_outputs(p, out)
    assert {f.name for f in ev.iterdir()} == set(x509_paths.evidence)
    with open(ev / "report.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["reason"] for r in rows] == out["reason"] and [r["stage"] for r in rows] == out["stage"]
    for r, n in zip(rows, out["chain_length"]):
        assert (r["chain"] == "-") == (n == 0) and (n == 0 or len(r["chain"].split(">")) == n)
    log = (ev / "validator.log").read_text(encoding="utf-8").splitlines()
    assert len(log) == p["endpoints"]
    for line, st in zip(log, out["stage"]):
        assert ("OK" in line) == (st == "ok") and (st != "path" or "candidates exhausted" in line)
    listing = (ev / "certificates.csv").read_text(encoding="utf-8")
    assert listing.count("endpoints.pem") == p["endpoints"]
    whatif = (ev / "whatif.csv").read_text(encoding="utf-8").splitlines()
    assert whatif[0] == "endpoint,withheld,stage,reason,chain" and len(whatif) > 1


def test_dirty_scenario_shows_many_reasons(dirty: Any) -> None:
    _, out, _, _ = dirty
    assert {"leaf", "path", "ok"} <= set(out["stage"]) and len(set(out["reason"])) >= 5


def _corners() -> list[dict[str, Any]]:
    names = [n for n in sorted(x509_paths.axes) if n != "seed"]
    rng = random.Random(5)
    rows = [{n: x509_paths.axes[n].edges()[i % 2] for n in names} for i in range(2)]
    for _ in range(4):
        rows.append({n: x509_paths.axes[n].edges()[rng.randrange(2)] for n in names})
    return rows


@pytest.mark.parametrize("k", range(6))
def test_oracle_at_axis_corners_and_reference_agrees(tmp_path: Path, k: int) -> None:
    p = dict(_corners()[k], seed=[0, 2**31 - 1, 11, 12, 13, 14][k])
    out, _, inputs = run(p, tmp_path)
    check_outputs(p, out)
    proc = subprocess.run([sys.executable, str(x509_paths.reference)], input=json.dumps(scenario(p, inputs)),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert mismatches(json.loads(proc.stdout), out) == []


# ------------------------------------------------- the tool's behaviour, pinned down
T0 = datetime(2025, 3, 1, tzinfo=timezone.utc)
DAY = timedelta(days=1)


def _pkiset(rng: random.Random, nc: Any = None) -> tuple[Any, Any]:
    root = _pki.Authority("R", "Test Root", _pki._key(rng, "p256"))
    root.certs.append(_pki._ca_cert(rng, root, None, T0 - 900 * DAY, T0 + 900 * DAY))
    ca = _pki.Authority("I", "Test Issuing CA", _pki._key(rng, "p256"))
    ca.certs.append(_pki._ca_cert(rng, ca, root, T0 - 90 * DAY, T0 + 900 * DAY, pathlen=0, nc=nc))
    return root, ca


def _leaf(rng: random.Random, issuer: Any, sans: list[Any], *, key: Any = None, nb: datetime = T0 - 9 * DAY,
          na: datetime = T0 + 90 * DAY) -> Any:
    key = key or _pki._key(rng, "p256")
    b = (x509.CertificateBuilder().subject_name(_pki._name("leaf")).issuer_name(issuer.name)
         .public_key(key.public_key()).serial_number(rng.getrandbits(100) + 1).not_valid_before(nb).not_valid_after(na)
         .add_extension(x509.SubjectAlternativeName(sans), critical=False)
         .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
         .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer.key.public_key()), critical=False))
    return _pki._sign(b, issuer.key)


def _both(roots: list[Any], bundle: list[Any], leaf: Any, host: str, when: datetime = T0) -> tuple[str, str]:
    """(tool's reason, reference's reason) for one server endpoint."""
    from cryptography.hazmat.primitives.serialization import Encoding
    from cryptography.x509.verification import PolicyBuilder, Store, VerificationError
    try:
        subject: Any = x509.IPAddress(ipaddress.ip_address(host))
    except ValueError:
        subject = x509.DNSName(host)
    try:
        PolicyBuilder().store(Store(roots)).time(when).max_chain_depth(3).build_server_verifier(subject).verify(
            leaf, bundle)
        tool = "ok"
    except VerificationError as exc:
        tool = _audit.reason_code(str(exc))[1]
    der = lambda cs: [ref.Cert(c.public_bytes(Encoding.DER)) for c in cs]  # noqa: E731
    mine = ref.Builder(der(roots), der(bundle), ref.Policy("server", host, when, 3)).verify(der([leaf])[0])[1]
    return tool, mine


@pytest.mark.parametrize("kind", ["permitted", "excluded"])
def test_dns_name_constraints_and_wildcards_match_the_tool(kind: str) -> None:
    rng = random.Random(1 if kind == "permitted" else 2)
    constraints = ["corp.example", "a.corp.example", "x.a.corp.example", "example", "orp.example"]
    sans = ["*.corp.example", "*.a.corp.example", "a.corp.example", "corp.example", "*.example", "x.y.a.corp.example"]
    verdicts = set()
    for c in constraints:
        sub = [x509.DNSName(c)]
        nc = x509.NameConstraints(permitted_subtrees=sub if kind == "permitted" else None,
                                  excluded_subtrees=sub if kind == "excluded" else None)
        root, ca = _pkiset(rng, nc)
        for s in sans:
            tool, mine = _both(root.certs, ca.certs, _leaf(rng, ca, [x509.DNSName(s)]), s.replace("*", "q"))
            assert tool == mine, (c, s, tool, mine)
            verdicts.add(tool)
    assert verdicts == {"ok", "not_permitted" if kind == "permitted" else "excluded"}


def test_the_reported_reason_is_the_last_candidates_failure() -> None:
    """A CA re-keyed under the same name: the leaf's own (old) CA has expired, so the
    verifier falls through to the new one, whose signature check fails last."""
    rng = random.Random(9)
    root = _pki.Authority("R", "Test Root", _pki._key(rng, "p256"))
    root.certs.append(_pki._ca_cert(rng, root, None, T0 - 900 * DAY, T0 + 900 * DAY))
    old = _pki.Authority("W1", "Web CA", _pki._key(rng, "p256"))
    new = _pki.Authority("W2", "Web CA", _pki._key(rng, "p256"))
    old.certs.append(_pki._ca_cert(rng, old, root, T0 - 900 * DAY, T0 - DAY))
    new.certs.append(_pki._ca_cert(rng, new, root, T0 - 30 * DAY, T0 + 900 * DAY))
    leaf = _leaf(rng, old, [x509.DNSName("www.corp.example")])
    for bundle in ([old.certs[0], new.certs[0]], [new.certs[0], old.certs[0]]):
        assert _both(root.certs, bundle, leaf, "www.corp.example") == ("signature", "signature")
    # without the new CA the expiry itself is the reason
    assert _both(root.certs, old.certs, leaf, "www.corp.example") == ("validity", "validity")
    # validity is inclusive at both ends, to the second
    fresh = _leaf(rng, new, [x509.DNSName("www.corp.example")], nb=T0, na=T0 + DAY)
    for when, want in ((T0, "ok"), (T0 + DAY, "ok"), (T0 - timedelta(seconds=1), "validity"),
                       (T0 + DAY + timedelta(seconds=1), "validity")):
        assert _both(root.certs, new.certs, fresh, "www.corp.example", when) == (want, want)


def test_signature_checks_by_hand_agree_with_the_tool() -> None:
    rng = random.Random(4)
    root, ca = _pkiset(rng)
    good = _leaf(rng, ca, [x509.IPAddress(ipaddress.ip_address("10.1.2.3"))])
    assert _both(root.certs, ca.certs, good, "10.1.2.3") == ("ok", "ok")
    rogue = _pki.Authority("I", "Test Issuing CA", _pki._key(rng, "p256"))
    forged = _leaf(rng, rogue, [x509.IPAddress(ipaddress.ip_address("10.1.2.3"))])
    assert _both(root.certs, ca.certs, forged, "10.1.2.3") == ("signature", "signature")
    rsa_root = _pki.Authority("R", "RSA Root", _pki._key(rng, "rsa2048"))
    rsa_root.certs.append(_pki._ca_cert(rng, rsa_root, None, T0 - 900 * DAY, T0 + 900 * DAY))
    rsa_leaf = _leaf(rng, rsa_root, [x509.DNSName("a.example")], key=_pki._key(rng, "rsa1024"))
    assert _both(rsa_root.certs, [], rsa_leaf, "a.example") == ("ok", "ok")   # the leaf's own key size is not checked


# ------------------------------------------------------------------ built task
@pytest.fixture(scope="module")
def small_task(tmp_path_factory: pytest.TempPathFactory) -> Path:
    registry = Registry.default(entry_points=False)
    return build_task(registry, "x509_paths", tmp_path_factory.mktemp("x509_small"), n_public=4, n_hidden=3,
                      probes=1, workers=1, select="random").path


def test_small_build_reference_scores_one_and_baselines_do_not(small_task: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "reconstruct.py").write_text(Path(x509_paths.reference).read_text(encoding="utf-8"), encoding="utf-8")
    assert grade(small_task, ws, runtime="local", nonce="t", workers=1)["reward"] == 1.0
    rows = {r.name: r for r in grade_baselines(small_task, x509_paths, runtime="local")}
    assert set(rows) == {"expert", "textbook"}
    for row in rows.values():
        assert 0.5 < row.reward < 1.0, (row.name, row.reward, row.detail)
