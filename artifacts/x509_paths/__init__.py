"""Built-in oracle `x509_paths`: certificate path building and validation of an organisation's
TLS servers and mTLS clients with pyca/cryptography's X.509 verifier."""
from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

from recon import Choice, Evidence, Exact, Float, Int, Integer, Number, Seed, SequenceOf, SetOf, oracle

REASON_CODES = (
    "validity (a certificate outside its validity period at the observation time), hostname (the endpoint "
    "certificate does not name the host or address), no_san (a server certificate without subject alternative "
    "names), eku (the endpoint certificate's extended key usage does not allow the role), ca_eku (a CA "
    "certificate's extended key usage does not allow the role), ee_ca (the endpoint certificate claims to be a "
    "CA), ee_certsign (the endpoint certificate's key usage allows certificate signing), san_crit (the subject "
    "alternative names extension has the wrong criticality), unknown_ext (an unrecognised critical extension), "
    "prohibited (an extension an endpoint certificate must not carry), missing_ext (a required extension is "
    "absent), criticality (an extension with the wrong criticality), not_v3 (not an X.509 version 3 "
    "certificate), no_issuer (no certificate with the issuer's name to try), signature (a signature that does "
    "not verify), path_length (a CA's path length constraint), not_permitted (a name outside the permitted "
    "subtrees of a name constraint), excluded (a name inside an excluded subtree), max_depth (the chain would "
    "exceed the depth limit), weak_rsa (an RSA CA key below the profile's minimum size), key_alg (a CA key "
    "algorithm the profile forbids), sig_alg (a signature algorithm the profile forbids), not_ca (a CA "
    "certificate whose basic constraints deny CA status), no_certsign (a CA certificate whose key usage does not "
    "allow certificate signing)"
)


def make_inputs(params: dict[str, Any], directory: Path) -> None:
    """roots.pem, intermediates.pem, endpoints.pem and inventory.csv (see _pki)."""
    from . import _pki

    _pki.write_inputs(params, Path(directory))


def _sig(x: float) -> str:
    return f"{x:.4g}"


def _inventory(data: dict[str, Any]) -> str:
    """One row per certificate of the three PEM files, as an inspection tool prints it."""
    from cryptography import x509
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["file", "index", "subject", "issuer", "version", "not_before", "not_after", "public_key",
                "signature_algorithm", "extensions"])
    for fname, certs in (("roots.pem", data["roots"]), ("intermediates.pem", data["bundle"]),
                         ("endpoints.pem", data["leaves"])):
        for k, c in enumerate(certs):
            pub = c.public_key()
            if isinstance(pub, rsa.RSAPublicKey):
                key = f"RSA-{pub.key_size}"
            elif isinstance(pub, ec.EllipticCurvePublicKey):
                key = f"EC-{pub.curve.name}"
            elif isinstance(pub, ed25519.Ed25519PublicKey):
                key = "Ed25519"
            else:
                key = type(pub).__name__
            exts = []
            if c.version == x509.Version.v3:
                for e in c.extensions:
                    name = getattr(e.oid, "_name", None) or e.oid.dotted_string
                    exts.append(f"{name}{'!' if e.critical else ''}")
            sig = c.signature_algorithm_oid._name
            w.writerow([fname, k, c.subject.rfc4514_string(), c.issuer.rfc4514_string(), c.version.name,
                        c.not_valid_before_utc.strftime("%Y-%m-%dT%H:%M:%SZ"),
                        c.not_valid_after_utc.strftime("%Y-%m-%dT%H:%M:%SZ"), key, sig, " ".join(exts)])
    return out.getvalue()


def _report(out: dict[str, Any], detail: dict[str, Any]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["endpoint", "role", "name", "observed_at", "stage", "reason", "chain", "days_to_expiry"])
    for k, item in enumerate(detail["per"]):
        row = item["row"]
        days = out["days_to_expiry"][k]
        w.writerow([row["endpoint"], row["role"], row["name"], row["observed_at"], out["stage"][k], out["reason"][k],
                    ">".join(item["labels"]) or "-", _sig(days) if days >= 0 else "-"])
    return buf.getvalue()


def _whatif(params: dict[str, Any], detail: dict[str, Any]) -> str:
    """The tool re-run on every endpoint with one entry of the bundle withheld, where that
    changes the verdict or the chain."""
    from . import _audit

    data = detail["data"]
    depth = int(params["max_chain_depth"])
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["endpoint", "withheld", "stage", "reason", "chain"])
    for i, item in enumerate(detail["per"]):
        base = (_audit.reason_code(item["error"]) if item["error"] else ("ok", "ok"), ">".join(item["labels"]))
        for k in range(len(data["bundle"])):
            rest = data["bundle"][:k] + data["bundle"][k + 1:]
            res = _audit.verify_one(data, i, depth, rest)
            if res["chain"] is not None:
                labels = _audit.labels({**data, "bundle_der": data["bundle_der"][:k] + data["bundle_der"][k + 1:]},
                                       res["chain"])
                labels = [x if not x.startswith("int:") or int(x[4:]) < k else f"int:{int(x[4:]) + 1}" for x in labels]
                now = (("ok", "ok"), ">".join(labels))
            else:
                now = (_audit.reason_code(res["error"]), "-")
            if now != base:
                w.writerow([item["row"]["endpoint"], f"int:{k}", now[0][0], now[0][1], now[1]])
    return buf.getvalue()


@oracle(
    name="x509_paths",
    version="1.0.0",
    title="Certificate path building and validation audit of an organisation's PKI",
    domain="security",
    toolkit=["asn1crypto"],
    requires=["cryptography"],
    description=(
        "A security team audits the TLS servers and mTLS clients of an organisation. It holds the "
        "organisation's trust store (root CA certificates), the bundle of intermediate CA certificates its "
        "servers send (untrusted: it may hold expired, cross-signed, re-keyed and duplicated CA certificates, "
        "and CAs that should not vouch for anyone), every endpoint's certificate, and an inventory saying "
        "whether each endpoint is a server (with the host name or IP address it answered on) or a client, "
        "and when its certificate was observed. Each endpoint certificate is verified as pyca/cryptography's "
        "X.509 verifier (`cryptography.x509.verification`, its web PKI profile, as shipped in cryptography "
        "50) verifies it: with the trust store as the only trust anchors, the bundle as the pool of "
        "intermediates, the observation time as the validation time, the scenario's maximum chain depth, a "
        "server against its host name or address, a client as a client certificate. The certificates carry "
        "the defects real ones do: expiry, certificates not yet valid, wrong names, wrong key usages, broken "
        "signatures, missing or malformed extensions, name and path length constraints, legacy algorithms. "
        "The question: for each endpoint whether it verifies, and when it does not, the reason the verifier "
        "gives; for each verified endpoint the chain it builds (its length, the certificate directly above "
        "the endpoint, the trust anchor) and how long the whole chain stays valid; and the audit's totals."
    ),
    axes={
        "endpoints": Int(6, 16, doc="endpoints in the inventory (one certificate each)"),
        "defect_rate": Float(0.0, 0.7, doc="share of endpoint certificates that carry a defect (some carry two)"),
        "client_share": Float(0.0, 0.5, doc="share of endpoints that are mTLS clients rather than TLS servers"),
        "max_chain_depth": Int(1, 4, doc="the verifier's maximum chain depth (its max_chain_depth setting)"),
        "trust_store": Choice(["current", "legacy"], doc=(
            "current: the organisation's two current roots; legacy: an older store that lacks the newest root "
            "and still holds a retired one")),
        "name_constraints": Choice(["none", "permitted", "excluded", "both"], doc=(
            "which name constraints the organisation's web and client issuing CAs carry: none, permitted "
            "subtrees, excluded subtrees or both")),
        "key_mix": Choice(["ecdsa", "mixed"], doc=(
            "ecdsa: every CA key is an elliptic-curve key; mixed: the first root and some issuing CAs use RSA "
            "keys, and legacy CAs with older key types and sizes take part")),
        "seed": Seed(doc="seed of the PKI, the endpoints, their names, defects and observation times"),
    },
    outputs={
        "stage": SequenceOf(Exact(), doc=(
            "per endpoint, in inventory order: ok (verified), leaf (the endpoint certificate itself was "
            "rejected before any issuer was tried) or path (no acceptable chain to a trust anchor was found)")),
        "reason": SequenceOf(Exact(), doc=(
            "per endpoint: ok, or the reason the verifier reports for the failure, one of: " + REASON_CODES)),
        "chain_length": SequenceOf(Integer(tol=0), doc=(
            "per endpoint: certificates in the verified chain, endpoint certificate and trust anchor included "
            "(0 when verification failed)")),
        "issuer_used": SequenceOf(Exact(), doc=(
            "per endpoint: the certificate directly above the endpoint certificate in the verified chain: "
            "int:K for entry K (from 0) of intermediates.pem (the first of identical copies), root:K for entry K "
            "of roots.pem; none when verification failed")),
        "anchor_used": SequenceOf(Exact(), doc="per endpoint: the trust anchor of the verified chain (root:K), "
                                              "none when verification failed"),
        "days_to_expiry": SequenceOf(Number(abs=1e-4), doc=(
            "per endpoint: days from the observation time to the earliest end of validity among the "
            "certificates of the verified chain, trust anchor included; -1.0 when verification failed")),
        "valid_servers": Integer(tol=0, doc="servers that verified"),
        "valid_clients": Integer(tol=0, doc="clients that verified"),
        "leaf_rejections": Integer(tol=0, doc="endpoints whose stage is leaf"),
        "path_failures": Integer(tol=0, doc="endpoints whose stage is path"),
        "next_expiry_days": Number(abs=1e-4, doc="the smallest days_to_expiry of a verified endpoint, days "
                                                "(-1.0 when none verified)"),
        "longest_chain": Integer(tol=0, doc="the longest verified chain, certificates (0 when none verified)"),
        "constrained_sans": Integer(tol=0, doc=(
            "over verified endpoints: subject alternative names of the endpoint certificate (DNS names, IP "
            "addresses, e-mail addresses) for which some CA certificate of the verified chain has a permitted "
            "subtree of the same name type")),
        "excluded_sans": Integer(tol=0, doc="the same count for excluded subtrees"),
        "unused_intermediates": SetOf(doc="the entries of intermediates.pem (int:K) that no verified chain uses"),
    },
    inputs=make_inputs,
    input_docs={
        "roots": "roots.pem: the trust store, PEM certificates (the trust anchors; entry K is root:K)",
        "intermediates": "intermediates.pem: the bundle of intermediate CA certificates, PEM, untrusted (entry K "
                         "is int:K)",
        "endpoints": "endpoints.pem: one PEM certificate per endpoint, in inventory order",
        "inventory": "inventory.csv: endpoint (index), role (server or client), name (the host name or IP address "
                     "a server answered on; - for a client), observed_at (UTC, ISO 8601 with Z, whole seconds)",
    },
    stages=["read the PEM bundles and the inventory", "endpoint-certificate profile checks in the certificate's "
            "extension order, host name first", "issuer candidates: trust store before bundle, bucketed by "
            "authority/subject key identifier", "depth-first path building: CA profile, path length, algorithms, "
            "RSA size, signature, depth limit after the trust-store test", "name constraints of each working "
            "certificate against the names below it, wildcard-aware", "the last failure of the search as the "
            "reason; chain summary and audit totals"],
    reference="reference.py",
    evidence={
        "report.csv": Evidence(
            "the audit report, one row per endpoint: endpoint, role, name, observed_at, stage, reason, the "
            "verified chain from the endpoint certificate up (leaf>int:K>...>root:K, - when it failed) and "
            "days_to_expiry (4 significant digits)", reveals="outputs"),
        "validator.log": Evidence(
            "the verifier's own message for every endpoint, verbatim: OK with the chain's subjects, or the "
            "text of the exception it raised", reveals="outputs"),
        "certificates.csv": Evidence(
            "an inspection listing of every certificate of the three PEM files: file, index, subject, issuer, "
            "version, validity, public key type, signature algorithm, and the extensions in the certificate's "
            "order (! marks a critical one)", reveals="summary"),
        "whatif.csv": Evidence(
            "the verifier re-run on every endpoint with one entry of intermediates.pem withheld at a time, one "
            "row wherever that changes the stage, reason or chain (entries keep their original int:K labels)",
            reveals="trace"),
    },
    evidence_level="summary",
)
def x509_paths(params: dict[str, Any], evidence: Path, inputs: dict[str, Path]) -> dict[str, Any]:
    """Verify every endpoint certificate with cryptography 50's X.509 verifier and summarise.

    The oracle runs `cryptography.x509.verification`: PolicyBuilder().store(Store(roots))
    .time(observed_at).max_chain_depth(max_chain_depth), then build_server_verifier(DNSName
    or IPAddress of the inventory name).verify(leaf, bundle) for a server and
    build_client_verifier().verify(leaf, bundle).chain for a client. The reference
    reproduces it as follows (every rule below was checked against the tool).

    1. Endpoint profile (a failure here is stage "leaf"). First the basic checks, in
       order: version must be v3 (not_v3); outer and TBS signature algorithms equal;
       serial 1..21 octets and non-negative; issuer non-empty; GeneralizedTime only for
       years outside 1950..2049; not_before <= t <= not_after, both ends inclusive, to
       the second (validity). Then, for a server only: no subjectAltName extension ->
       no_san; no SAN matching the name -> hostname (DNS SANs: exact, case-insensitive,
       or "*." wildcard as the whole left-most label, matching exactly one label; IP
       SANs: byte equality; other SAN types never match). Then the extensions in the
       certificate's own order, the first failure wins: AKI and AIA and EKU must be
       non-critical (criticality); keyUsage with keyCertSign -> ee_certsign; SAN
       critical while the subject is non-empty (or non-critical with an empty subject)
       -> san_crit (servers and clients); basicConstraints cA=TRUE -> ee_ca;
       nameConstraints present -> prohibited; EKU present without the role's EKU
       (serverAuth / clientAuth; anyExtendedKeyUsage does not count) -> eku; any other
       critical extension -> unknown_ext. Finally the required extensions in profile
       order: AKI missing, then (clients) SAN missing -> missing_ext. A missing EKU is
       fine; the endpoint's own key type and size are never checked.
    2. Path building (a failure is stage "path"), depth-first from the leaf at depth 0
       with name chain [leaf SANs]. At each working certificate W with depth d:
       (a) if W carries nameConstraints, check every name of the chain (leaf SANs
       first, then each non-self-issued CA's SANs) in SAN order: the permitted
       subtrees of the SAN's own type are tried in order (a subtree of another type is
       skipped; the first applicable one that matches permits; if the last applicable
       one did not match -> not_permitted; with no applicable subtree the name is
       permitted), then any applicable excluded subtree that matches -> excluded. DNS
       constraints match the name and names with labels added on the left
       (case-insensitive, whole labels); a wildcard SAN *.X is permitted when the
       constraint matches X, and excluded when the constraint matches X or is X with one
       more label on the left; IP constraints are address/mask; e-mail constraints are
       an exact mailbox, a domain (exactly) or .domain (strict subdomains). (b) if W is
       in the trust store (same DER) the chain ends here. (c) if d > max_chain_depth ->
       max_depth. (d) candidates: the store's certificates whose subject equals W's
       issuer (store order), then the bundle's (file order), stably sorted into
       buckets: 0 when W's AKI key identifier equals the candidate's SKI, 2 when both
       exist and differ, 1 otherwise. For each candidate C: valid_issuer(C, W, d) =
       C's basic checks (as in 1, same time); pathLenConstraint < d -> path_length;
       C's extensions in order: AKI/SKI/AIA non-critical, keyUsage must assert
       keyCertSign (no_certsign), basicConstraints must be critical (criticality) and
       cA (not_ca), EKU if present must hold the role's EKU or anyEKU (ca_eku), other
       critical -> unknown_ext; then KU and BC required (missing_ext); then C's SPKI
       algorithm must be RSA or EC P-256/384/521 (key_alg); W's signature algorithm
       must be RSA PKCS#1 v1.5 / PSS with SHA-256/384/512 or ECDSA with SHA-256/384/512
       (sig_alg); an RSA key whose modulus INTEGER encoding is under 256 octets ->
       weak_rsa; then the signature (ECDSA / RSA PKCS#1 v1.5 over the TBS bytes) ->
       signature. A valid candidate recurses at depth d+1, its SANs added to the name
       chain unless it is self-issued; the first candidate whose recursion succeeds
       wins. When all fail, the failure is the LAST candidate's error (an exhausted
       sub-search passes its own last error up); no candidate at all -> no_issuer.
    3. Outputs. The chain runs leaf..anchor; labels int:K / root:K by DER identity
       (first identical copy; the last element is the anchor). days_to_expiry =
       (min not_after over the chain - t) / 86400 s. constrained_sans / excluded_sans:
       per verified endpoint, the leaf's DNS/IP/e-mail SANs whose type occurs among the
       permitted (excluded) subtrees of the chain's CA certificates.

    Tolerances, and why: every verdict, code, label and count is exact: the verifier is
    deterministic and a wrong ordering or rule changes a code, not a number.
    days_to_expiry and next_expiry_days: 1e-4 day (9 s): the times are whole seconds, so
    a faithful implementation agrees to float rounding, while another chain or another
    end date differs by hours or days.
    """
    from . import _audit

    out, detail = _audit.run(params, inputs)
    evidence = Path(evidence)
    (evidence / "report.csv").write_text(_report(out, detail), encoding="utf-8")
    lines = []
    for k, item in enumerate(detail["per"]):
        if item["error"] is None:
            lines.append(f"endpoint {k}: OK " + " > ".join(item["subjects"]))
        else:
            lines.append(f"endpoint {k}: {item['error']}")
    (evidence / "validator.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (evidence / "certificates.csv").write_text(_inventory(detail["data"]), encoding="utf-8")
    (evidence / "whatif.csv").write_text(_whatif(params, detail), encoding="utf-8")
    return out
