"""The oracle's core: `cryptography.x509.verification` (PolicyBuilder, Store, ServerVerifier,
ClientVerifier) run over every endpoint of the inventory (verifier side only)."""
from __future__ import annotations

import csv
import ipaddress
from datetime import datetime
from pathlib import Path
from typing import Any

# the tool's failure messages -> the audit's reason codes (first match wins)
REASONS = [
    ("cert is not valid at validation time", "validity"),
    ("leaf certificate has no matching subjectAltName", "hostname"),
    ("required EKU not found", "eku"),
    ("Neither EKU nor anyEKU could be found", "ca_eku"),
    ("leaf server certificate has no subjectAltName", "no_san"),
    ("basicConstraints.cA must not be asserted", "ee_ca"),
    ("EE keyUsage must not assert keyCertSign", "ee_certsign"),
    ("Certificate is missing required extension", "missing_ext"),
    ("Certificate extension has incorrect criticality", "criticality"),
    ("subjectAltName MUST NOT be critical", "san_crit"),
    ("subjectAltName MUST be critical", "san_crit"),
    ("unaccounted-for critical extensions", "unknown_ext"),
    ("Certificate contains prohibited extension", "prohibited"),
    ("all candidates exhausted with no interior errors", "no_issuer"),
    ("signature does not match", "signature"),
    ("path length constraint violated", "path_length"),
    ("no permitted name constraints matched SAN", "not_permitted"),
    ("excluded name constraint matched SAN", "excluded"),
    ("chain construction exceeds max depth", "max_depth"),
    ("RSA key is too weak", "weak_rsa"),
    ("Forbidden public key algorithm", "key_alg"),
    ("Forbidden signature algorithm", "sig_alg"),
    ("basicConstraints.cA must be asserted in a CA certificate", "not_ca"),
    ("keyUsage.keyCertSign must be asserted", "no_certsign"),
    ("must be an X509v3 certificate", "not_v3"),
]
GN_KINDS = ("DNSName", "IPAddress", "RFC822Name")


def reason_code(message: str) -> tuple[str, str]:
    """(stage, reason) of a VerificationError message."""
    text = message.split("validation failed: ", 1)[-1]
    stage = "path" if text.startswith("candidates exhausted") else "leaf"
    for needle, code in REASONS:
        if needle in text:
            return stage, code
    return stage, "other"


def load(inputs: dict[str, Path]) -> dict[str, Any]:
    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import Encoding

    def certs(name: str) -> list[Any]:
        return x509.load_pem_x509_certificates(Path(inputs[name]).read_bytes())

    roots, bundle, leaves = certs("roots"), certs("intermediates"), certs("endpoints")
    with open(inputs["inventory"], newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    return {"roots": roots, "bundle": bundle, "leaves": leaves, "rows": rows,
            "root_der": [c.public_bytes(Encoding.DER) for c in roots],
            "bundle_der": [c.public_bytes(Encoding.DER) for c in bundle]}


def verify_one(data: dict[str, Any], i: int, max_depth: int, bundle: list[Any] | None = None) -> dict[str, Any]:
    """Run the tool on endpoint i; the chain (as certificates) or the error message."""
    from cryptography import x509
    from cryptography.x509.verification import PolicyBuilder, Store, VerificationError

    row = data["rows"][i]
    when = datetime.fromisoformat(row["observed_at"].replace("Z", "+00:00"))
    builder = PolicyBuilder().store(Store(data["roots"])).time(when).max_chain_depth(max_depth)
    leaf = data["leaves"][i]
    inter = data["bundle"] if bundle is None else bundle
    try:
        if row["role"] == "server":
            try:
                subject: Any = x509.IPAddress(ipaddress.ip_address(row["name"]))
            except ValueError:
                subject = x509.DNSName(row["name"])
            chain = builder.build_server_verifier(subject).verify(leaf, inter)
        else:
            chain = builder.build_client_verifier().verify(leaf, inter).chain
        return {"chain": list(chain), "error": None, "when": when}
    except VerificationError as exc:
        return {"chain": None, "error": str(exc), "when": when}


def labels(data: dict[str, Any], chain: list[Any]) -> list[str]:
    from cryptography.hazmat.primitives.serialization import Encoding
    out = ["leaf"]
    for pos, c in enumerate(chain[1:], start=1):
        der = c.public_bytes(Encoding.DER)
        if pos == len(chain) - 1 and der in data["root_der"]:
            out.append(f"root:{data['root_der'].index(der)}")
        elif der in data["bundle_der"]:
            out.append(f"int:{data['bundle_der'].index(der)}")
        else:
            out.append(f"root:{data['root_der'].index(der)}")
    return out


def constrained_counts(chain: list[Any]) -> tuple[int, int]:
    """(SANs of the leaf under a permitted subtree of their own name type somewhere in the
    chain, the same for excluded subtrees)."""
    from cryptography import x509
    try:
        sans = list(chain[0].extensions.get_extension_for_class(x509.SubjectAlternativeName).value)
    except x509.ExtensionNotFound:
        return 0, 0
    perm: set[str] = set()
    excl: set[str] = set()
    for ca in chain[1:]:
        try:
            nc = ca.extensions.get_extension_for_class(x509.NameConstraints).value
        except x509.ExtensionNotFound:
            continue
        perm.update(type(g).__name__ for g in (nc.permitted_subtrees or []))
        excl.update(type(g).__name__ for g in (nc.excluded_subtrees or []))
    kinds = [type(g).__name__ for g in sans]
    return sum(k in perm for k in kinds if k in GN_KINDS), sum(k in excl for k in kinds if k in GN_KINDS)


def run(params: dict[str, Any], inputs: dict[str, Path]) -> tuple[dict[str, Any], dict[str, Any]]:
    data = load(inputs)
    depth = int(params["max_chain_depth"])
    stage, reason, length, issuer, anchor, days = [], [], [], [], [], []
    used: set[str] = set()
    perm_total = excl_total = 0
    per: list[dict[str, Any]] = []
    for i, row in enumerate(data["rows"]):
        res = verify_one(data, i, depth)
        if res["chain"] is not None:
            chain = res["chain"]
            lab = labels(data, chain)
            used.update(x for x in lab if x.startswith("int:"))
            stage.append("ok")
            reason.append("ok")
            length.append(len(chain))
            issuer.append(lab[1])
            anchor.append(lab[-1])
            end = min(c.not_valid_after_utc for c in chain)
            days.append((end - res["when"]).total_seconds() / 86400.0)
            p, e = constrained_counts(chain)
            perm_total += p
            excl_total += e
        else:
            lab = []
            st, rc = reason_code(res["error"])
            stage.append(st)
            reason.append(rc)
            length.append(0)
            issuer.append("none")
            anchor.append("none")
            days.append(-1.0)
        per.append({"row": row, "labels": lab, "error": res["error"],
                    "subjects": [c.subject.rfc4514_string() for c in res["chain"] or []]})
    valid = [k for k, s in enumerate(stage) if s == "ok"]
    out = {
        "stage": stage,
        "reason": reason,
        "chain_length": length,
        "issuer_used": issuer,
        "anchor_used": anchor,
        "days_to_expiry": days,
        "valid_servers": sum(1 for k in valid if data["rows"][k]["role"] == "server"),
        "valid_clients": sum(1 for k in valid if data["rows"][k]["role"] == "client"),
        "leaf_rejections": stage.count("leaf"),
        "path_failures": stage.count("path"),
        "next_expiry_days": min((days[k] for k in valid), default=-1.0),
        "longest_chain": max((length[k] for k in valid), default=0),
        "constrained_sans": perm_total,
        "excluded_sans": excl_total,
        "unused_intermediates": sorted(f"int:{k}" for k in range(len(data["bundle"])) if f"int:{k}" not in used),
    }
    return out, {"data": data, "per": per}
