#!/usr/bin/env python3
"""Baseline `textbook` of x509_paths: RFC 5280 path validation and RFC 6125 host name
checking as a textbook teaches them, written from the instruction alone with asn1crypto and
hand-written ECDSA / RSA verification. The endpoint is checked first (validity, name, key
usages, unknown critical extensions, a minimum RSA size for every key), then issuers are
found by name, trust store first, and tried depth-first; a CA must be valid, a CA by its
basic constraints, allowed to sign certificates, within its path length and name
constraints, and its signature must verify; SHA-1 and RSA keys under 2048 bits are refused.
The reason reported is the first failure met."""
from __future__ import annotations

import csv
import hashlib
import ipaddress
import json
import sys
from datetime import datetime, timezone
from typing import Any

from asn1crypto import pem
from asn1crypto import x509 as ax

CURVES = {
    "secp256r1": (
        0xFFFFFFFF00000001000000000000000000000000FFFFFFFFFFFFFFFFFFFFFFFF,
        0xFFFFFFFF00000001000000000000000000000000FFFFFFFFFFFFFFFFFFFFFFFC,
        0x6B17D1F2E12C4247F8BCE6E563A440F277037D812DEB33A0F4A13945D898C296,
        0x4FE342E2FE1A7F9B8EE7EB4A7C0F9E162BCE33576B315ECECBB6406837BF51F5,
        0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551,
    ),
    "secp384r1": (
        0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEFFFFFFFF0000000000000000FFFFFFFF,
        0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEFFFFFFFF0000000000000000FFFFFFFC,
        0xAA87CA22BE8B05378EB1C71EF320AD746E1D3B628BA79B9859F741E082542A385502F25DBF55296C3A545E3872760AB7,
        0x3617DE4A96262C6F5D9E98BF9292DC29F8F41DBD289A147CE9DA3113B5F0B8C00A60B1CE1D7E819D7A431D7C90EA0E5F,
        0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFC7634D81F4372DDF581A0DB248B0A77AECEC196ACCC52973,
    ),
}


def _jdouble(P: tuple[int, int, int], p: int, a: int) -> tuple[int, int, int]:
    x, y, z = P
    if y == 0 or z == 0:
        return (0, 1, 0)
    yy = y * y % p
    s = 4 * x * yy % p
    m = (3 * x * x + a * pow(z, 4, p)) % p
    x3 = (m * m - 2 * s) % p
    return (x3, (m * (s - x3) - 8 * yy * yy) % p, 2 * y * z % p)


def _jadd(P: tuple[int, int, int], Q: tuple[int, int, int], p: int, a: int) -> tuple[int, int, int]:
    if P[2] == 0:
        return Q
    if Q[2] == 0:
        return P
    z1z1, z2z2 = P[2] * P[2] % p, Q[2] * Q[2] % p
    u1, u2 = P[0] * z2z2 % p, Q[0] * z1z1 % p
    s1, s2 = P[1] * Q[2] * z2z2 % p, Q[1] * P[2] * z1z1 % p
    if u1 == u2:
        return _jdouble(P, p, a) if s1 == s2 else (0, 1, 0)
    h, r = (u2 - u1) % p, (s2 - s1) % p
    hh = h * h % p
    hhh = h * hh % p
    v = u1 * hh % p
    x3 = (r * r - hhh - 2 * v) % p
    return (x3, (r * (v - x3) - s1 * hhh) % p, h * P[2] * Q[2] % p)


def ecdsa_verify(curve: str, point: bytes, digest: bytes, sig_der: bytes) -> bool:
    p, a, gx, gy, n = CURVES[curve]
    size = (p.bit_length() + 7) // 8
    if len(point) != 1 + 2 * size or point[0] != 4:
        return False
    qx, qy = int.from_bytes(point[1:1 + size], "big"), int.from_bytes(point[1 + size:], "big")
    r, s = _der_pair(sig_der)
    if not (0 < r < n and 0 < s < n):
        return False
    e = int.from_bytes(digest, "big")
    if len(digest) * 8 > n.bit_length():
        e >>= len(digest) * 8 - n.bit_length()
    w = pow(s, -1, n)
    u1, u2 = e * w % n, r * w % n
    G, Q = (gx, gy, 1), (qx, qy, 1)
    GQ = _jadd(G, Q, p, a)
    R = (0, 1, 0)
    for i in range(max(u1.bit_length(), u2.bit_length()) - 1, -1, -1):   # Shamir's trick
        R = _jdouble(R, p, a)
        b1, b2 = (u1 >> i) & 1, (u2 >> i) & 1
        if b1 and b2:
            R = _jadd(R, GQ, p, a)
        elif b1:
            R = _jadd(R, G, p, a)
        elif b2:
            R = _jadd(R, Q, p, a)
    if R[2] == 0:
        return False
    x = R[0] * pow(R[2] * R[2] % p, -1, p) % p
    return x % n == r


def _der_pair(sig: bytes) -> tuple[int, int]:
    """(r, s) of a DER ECDSA-Sig-Value."""
    def tlv(buf: bytes, i: int) -> tuple[int, int, int]:
        tag, ln = buf[i], buf[i + 1]
        i += 2
        if ln & 0x80:
            k = ln & 0x7F
            ln = int.from_bytes(buf[i:i + k], "big")
            i += k
        return tag, i, i + ln
    _, start, _ = tlv(sig, 0)
    _, a0, a1 = tlv(sig, start)
    _, b0, b1 = tlv(sig, a1)
    return int.from_bytes(sig[a0:a1], "big"), int.from_bytes(sig[b0:b1], "big")


DIGEST_INFO = {
    "sha256": bytes.fromhex("3031300d060960864801650304020105000420"),
    "sha384": bytes.fromhex("3041300d060960864801650304020205000430"),
    "sha512": bytes.fromhex("3051300d060960864801650304020305000440"),
}


def rsa_verify(n: int, e: int, hash_name: str, digest: bytes, sig: bytes) -> bool:
    k = (n.bit_length() + 7) // 8
    if len(sig) != k:
        return False
    em = pow(int.from_bytes(sig, "big"), e, n).to_bytes(k, "big")
    t = DIGEST_INFO[hash_name] + digest
    return em == b"\x00\x01" + b"\xff" * (k - len(t) - 3) + b"\x00" + t


OID_HASH = {"1.2.840.10045.4.3.2": "sha256", "1.2.840.10045.4.3.3": "sha384", "1.2.840.10045.4.3.4": "sha512",
            "1.2.840.113549.1.1.11": "sha256", "1.2.840.113549.1.1.12": "sha384", "1.2.840.113549.1.1.13": "sha512"}
SPKI_OK = {bytes.fromhex(h) for h in (
    "300d06092a864886f70d0101010500",                   # rsaEncryption, NULL
    "301306072a8648ce3d020106082a8648ce3d030107",       # EC P-256
    "301006072a8648ce3d020106052b81040022",             # EC P-384
    "301006072a8648ce3d020106052b81040023",             # EC P-521
)}
SIG_OK = {bytes.fromhex(h) for h in (
    "300d06092a864886f70d01010b0500", "300d06092a864886f70d01010c0500", "300d06092a864886f70d01010d0500",
    "300a06082a8648ce3d040302", "300a06082a8648ce3d040303", "300a06082a8648ce3d040304",
    "304106092a864886f70d01010a3034a00f300d06096086480165030402010500a11c301a06092a864886f70d010108300d0609608648"
    "0165030402010500a203020120",
    "304106092a864886f70d01010a3034a00f300d06096086480165030402020500a11c301a06092a864886f70d010108300d0609608648"
    "0165030402020500a203020130",
    "304106092a864886f70d01010a3034a00f300d06096086480165030402030500a11c301a06092a864886f70d010108300d0609608648"
    "0165030402030500a203020140",
)}
MIN_RSA_BITS = 2048
AIA, AKI, SKI, KU, SAN, BC, NC, EKU = ("1.3.6.1.5.5.7.1.1", "2.5.29.35", "2.5.29.14", "2.5.29.15", "2.5.29.17",
                                       "2.5.29.19", "2.5.29.30", "2.5.29.37")
KNOWN = (AIA, AKI, SKI, KU, SAN, BC, NC, EKU)
EKU_OID = {"server": "1.3.6.1.5.5.7.3.1", "client": "1.3.6.1.5.5.7.3.2"}
ANY_EKU = "2.5.29.37.0"


class Cert:
    """The fields of one certificate that the checks read."""

    def __init__(self, der: bytes) -> None:
        c = ax.Certificate.load(der)
        tbs = c["tbs_certificate"]
        self.der = der
        self.tbs = tbs.dump()
        self.version = tbs["version"].native
        self.serial = tbs["serial_number"].contents
        self.sig_alg = c["signature_algorithm"].dump()
        self.sig_oid = c["signature_algorithm"]["algorithm"].dotted
        self.tbs_sig_alg = tbs["signature"].dump()
        self.issuer = tbs["issuer"].dump()
        self.subject = tbs["subject"].dump()
        self.issuer_empty = len(tbs["issuer"].chosen) == 0
        self.subject_empty = len(tbs["subject"].chosen) == 0
        self.times = [(tbs["validity"][k].name, tbs["validity"][k].native) for k in ("not_before", "not_after")]
        spki = tbs["subject_public_key_info"]
        self.spki_alg = spki["algorithm"].dump()
        self.key_type = spki["algorithm"]["algorithm"].native
        self.curve = spki["algorithm"]["parameters"].native if self.key_type == "ec" else None
        self.key_bits = spki["public_key"].contents[1:] if self.key_type != "rsa" else None
        self.rsa: tuple[int, int, int] | None = None
        if self.key_type == "rsa":
            pub = spki["public_key"].parsed
            self.rsa = (pub["modulus"].native, pub["public_exponent"].native, len(pub["modulus"].contents))
        self.signature = c["signature_value"].native
        self.exts: list[tuple[str, bool, Any]] = []
        for e in tbs["extensions"] if self.version == "v3" else []:
            oid = e["extn_id"].dotted
            self.exts.append((oid, bool(e["critical"].native), e["extn_value"].parsed if oid in KNOWN else None))
        self.ski = self.value(SKI).native if self.value(SKI) is not None else None
        aki = self.value(AKI)
        self.aki = aki["key_identifier"].native if aki is not None else None
        self.sans = list(self.value(SAN)) if self.value(SAN) is not None else []
        self.self_issued = self.issuer == self.subject

    def value(self, oid: str) -> Any:
        for o, _, v in self.exts:
            if o == oid:
                return v
        return None

    def has(self, oid: str) -> bool:
        return any(o == oid for o, _, _ in self.exts)


def read_pem(path: str) -> list[Cert]:
    with open(path, "rb") as fh:
        return [Cert(der) for _, _, der in pem.unarmor(fh.read(), multiple=True)]


def dns_ok(value: str) -> bool:
    if not value or len(value) > 253:
        return False
    for label in value.split("."):
        if not label or len(label) > 63 or label[0] == "-" or label[-1] == "-":
            return False
        if not all(ch.isascii() and (ch.isalnum() or ch == "-") for ch in label):
            return False
    return True


def rlabels(name: str) -> list[str]:
    return name.lower().split(".")[::-1]


def constraint_matches(c: str, name: str) -> bool:
    """Zero or more labels added on the left of the constraint give the name."""
    return len(name) >= len(c) and all(a == b for a, b in zip(rlabels(c), rlabels(name)))


def pattern_matches(pattern: str, name: str) -> bool:
    """A SAN pattern (exact, or one wildcard as the whole left-most label) against a host."""
    if pattern.startswith("*."):
        base = pattern[2:]
        if not dns_ok(base) or "." not in name:
            return False
        parent = name.split(".", 1)[1]
        return dns_ok(parent) and parent.lower() == base.lower()
    return dns_ok(pattern) and pattern.lower() == name.lower()


def dns_permits(c: str, san: str) -> bool:
    return constraint_matches(c, san)


def dns_excludes(c: str, san: str) -> bool:
    return constraint_matches(c, san)


def ip_matches(constraint: bytes, addr: bytes) -> bool:
    half = len(constraint) // 2
    if len(constraint) not in (8, 32) or len(addr) != half:
        return False
    net, mask = int.from_bytes(constraint[:half], "big"), int.from_bytes(constraint[half:], "big")
    return (int.from_bytes(addr, "big") & mask) == (net & mask)


def email_parts(value: str) -> tuple[str, str] | None:
    if "@" not in value:
        return None
    local, domain = value.split("@", 1)
    return (local, domain) if dns_ok(domain) else None


def email_matches(constraint: str, value: str) -> bool:
    parts = email_parts(value)
    if parts is None:
        return False
    local, domain = parts
    if constraint.startswith("."):
        inner = constraint[1:]
        return len(domain) > len(inner) and all(a == b for a, b in zip(rlabels(inner), rlabels(domain)))
    exact = email_parts(constraint)
    if exact is not None:
        return local == exact[0] and domain.lower() == exact[1].lower()
    return domain.lower() == constraint.lower()


def nc_applies(kind: str, base: Any, san: Any, excluded: bool) -> bool | None:
    """None: the constraint and the name are of different types (skipped)."""
    if base.name != san.name or san.name not in ("dns_name", "ip_address", "rfc822_name"):
        return None
    if san.name == "dns_name":
        c, v = base.native, san.native
        return dns_excludes(c, v) if excluded else dns_permits(c, v)
    if san.name == "ip_address":
        return ip_matches(base.chosen.contents, san.chosen.contents)
    return email_matches(base.native, san.native)


def check_constraints(nc: Any, names: list[list[Any]]) -> str | None:
    for sans in names:                                # the leaf first, then up the chain
        for san in sans:
            permit = True
            for sub in nc["permitted_subtrees"] or []:
                status = nc_applies("permitted", sub["base"], san, False)
                if status is not None:
                    permit = status
                    if permit:
                        break
            if not permit:
                return "not_permitted"
            for sub in nc["excluded_subtrees"] or []:
                if nc_applies("excluded", sub["base"], san, True):
                    return "excluded"
    return None


class Policy:
    def __init__(self, role: str, name: str, when: datetime, max_depth: int) -> None:
        self.role, self.when, self.max_depth = role, when, max_depth
        self.eku = EKU_OID[role]
        self.ip: bytes | None = None
        self.host: str | None = None
        if role == "server":
            try:
                self.ip = ipaddress.ip_address(name).packed
            except ValueError:
                self.host = name

    def cn_matches(self, c: Cert) -> bool:
        cn = ax.Certificate.load(c.der).subject.native.get("common_name", "")
        return self.host is not None and pattern_matches(cn, self.host)

    def subject_matches(self, sans: list[Any]) -> bool:
        for gn in sans:
            if gn.name == "dns_name" and self.host is not None and pattern_matches(gn.native, self.host):
                return True
            if gn.name == "ip_address" and self.ip is not None and gn.chosen.contents == self.ip:
                return True
        return False


def permits_basic(c: Cert, policy: Policy) -> str | None:
    if c.version != "v3":
        return "not_v3"
    if c.sig_alg != c.tbs_sig_alg:
        return "other"
    if not 1 <= len(c.serial) <= 21 or c.serial[0] & 0x80:
        return "other"
    if c.issuer_empty:
        return "other"
    for kind, t in c.times:
        if kind == "general_time" and 1950 <= t.year < 2050:
            return "other"
    if policy.when < c.times[0][1] or policy.when > c.times[1][1]:
        return "validity"
    return None


def ee_extension(oid: str, critical: bool, v: Any, c: Cert, policy: Policy) -> str | None:
    if oid == AKI:
        return "criticality" if critical else None
    if oid == KU:
        return "ee_certsign" if "key_cert_sign" in v.native else None
    if oid == SAN:
        return "san_crit" if c.subject_empty != critical else None
    if oid == BC:
        return "ee_ca" if v["ca"].native else None
    if oid == NC:
        return "prohibited"
    if oid == EKU:
        if critical:
            return "criticality"
        return None if policy.eku in [e.dotted for e in v] else "eku"
    if oid == AIA:
        return "criticality" if critical else None
    if oid not in KNOWN and critical:
        return "unknown_ext"
    return None


def permits_ee(c: Cert, policy: Policy) -> str | None:
    if policy.when < c.times[0][1] or policy.when > c.times[1][1]:
        return "validity"
    if policy.role == "server":
        if c.has(SAN):
            if not policy.subject_matches(c.sans):
                return "hostname"
        elif not policy.cn_matches(c):
            return "hostname"
    eku = c.value(EKU)
    if eku is not None and policy.eku not in [e.dotted for e in eku]:
        return "eku"
    bc = c.value(BC)
    if bc is not None and bc["ca"].native:
        return "ee_ca"
    ku = c.value(KU)
    if ku is not None and "key_cert_sign" in ku.native:
        return "ee_certsign"
    if any(critical and oid not in KNOWN for oid, critical, _ in c.exts):
        return "unknown_ext"
    if c.rsa is not None and c.rsa[2] * 8 < MIN_RSA_BITS:
        return "weak_rsa"
    return None


def ca_extension(oid: str, critical: bool, v: Any, policy: Policy) -> str | None:
    if oid == AKI:
        if critical:
            return "criticality"
        return None if v["key_identifier"].native is not None else "other"
    if oid in (SKI, AIA):
        return "criticality" if critical else None
    if oid == KU:
        return None if "key_cert_sign" in v.native else "no_certsign"
    if oid == BC:
        if not critical:
            return "criticality"
        return None if v["ca"].native else "not_ca"
    if oid == NC:
        return None
    if oid == EKU:
        if critical:
            return "criticality"
        ekus = [e.dotted for e in v]
        return None if (policy.eku in ekus or ANY_EKU in ekus) else "ca_eku"
    if oid not in KNOWN and critical:
        return "unknown_ext"
    return None


def permits_ca(c: Cert, depth: int, policy: Policy) -> str | None:
    if policy.when < c.times[0][1] or policy.when > c.times[1][1]:
        return "validity"
    bc = c.value(BC)
    if bc is None or not bc["ca"].native:
        return "not_ca"
    if bc["path_len_constraint"].native is not None and depth > bc["path_len_constraint"].native:
        return "path_length"
    ku = c.value(KU)
    if ku is not None and "key_cert_sign" not in ku.native:
        return "no_certsign"
    if any(critical and oid not in KNOWN for oid, critical, _ in c.exts):
        return "unknown_ext"
    return None


_SIG_CACHE: dict[tuple[bytes, bytes], bool] = {}


def signed_by(child: Cert, issuer: Cert) -> bool:
    key = (child.der, issuer.der)
    if key not in _SIG_CACHE:
        name = OID_HASH.get(child.sig_oid)
        ok = False
        if name is not None:
            digest = hashlib.new(name, child.tbs).digest()
            if issuer.key_type == "rsa" and issuer.rsa is not None and child.sig_oid.startswith("1.2.840.113549"):
                ok = rsa_verify(issuer.rsa[0], issuer.rsa[1], name, digest, child.signature)
            elif issuer.key_type == "ec" and issuer.curve in CURVES and child.sig_oid.startswith("1.2.840.10045"):
                ok = ecdsa_verify(issuer.curve, issuer.key_bits, digest, child.signature)
        _SIG_CACHE[key] = ok
    return _SIG_CACHE[key]


def valid_issuer(issuer: Cert, child: Cert, depth: int, policy: Policy) -> str | None:
    err = permits_ca(issuer, depth, policy)
    if err:
        return err
    if child.sig_oid in ("1.2.840.10045.4.1", "1.2.840.113549.1.1.5"):
        return "sig_alg"
    if issuer.key_type not in ("rsa", "ec"):
        return "key_alg"
    if issuer.rsa is not None and issuer.rsa[2] * 8 < MIN_RSA_BITS:
        return "weak_rsa"
    if not signed_by(child, issuer):
        return "signature"
    return None


class Builder:
    def __init__(self, roots: list[Cert], bundle: list[Cert], policy: Policy) -> None:
        self.roots, self.bundle, self.policy = roots, bundle, policy

    def issuers(self, c: Cert) -> list[Cert]:
        found = [r for r in self.roots if r.subject == c.issuer] + [b for b in self.bundle if b.subject == c.issuer]

        return found

    def build(self, working: Cert, depth: int, names: list[list[Any]]) -> list[Cert] | str:
        nc = working.value(NC)
        if nc is not None:
            err = check_constraints(nc, names)
            if err:
                return err
        if any(working.der == r.der for r in self.roots):
            return [working]
        if depth > self.policy.max_depth:
            return "max_depth"
        first = None
        for cand in self.issuers(working):
            err = valid_issuer(cand, working, depth, self.policy)
            if err:
                first = first or err
                continue
            up = self.build(cand, depth + 1, names + ([] if cand.self_issued else [cand.sans]))
            if isinstance(up, list):
                return up + [working]
            first = first or up
        return first or "no_issuer"

    def verify(self, leaf: Cert) -> tuple[str, str, list[Cert]]:
        err = permits_ee(leaf, self.policy)
        if err:
            return "leaf", err, []
        res = self.build(leaf, 0, [leaf.sans])
        if isinstance(res, str):
            return "path", res, []
        return "ok", "ok", res[::-1]


def constrained(chain: list[Cert]) -> tuple[int, int]:
    perm: set[str] = set()
    excl: set[str] = set()
    for ca in chain[1:]:
        nc = ca.value(NC)
        if nc is None:
            continue
        perm.update(s["base"].name for s in nc["permitted_subtrees"] or [])
        excl.update(s["base"].name for s in nc["excluded_subtrees"] or [])
    kinds = [g.name for g in chain[0].sans if g.name in ("dns_name", "ip_address", "rfc822_name")]
    return sum(k in perm for k in kinds), sum(k in excl for k in kinds)


def solve(scenario: dict[str, Any]) -> dict[str, Any]:
    params, inputs = scenario["parameters"], scenario["inputs"]
    roots, bundle, leaves = read_pem(inputs["roots"]), read_pem(inputs["intermediates"]), read_pem(inputs["endpoints"])
    with open(inputs["inventory"], newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    root_der = [r.der for r in roots]
    bundle_der = [b.der for b in bundle]
    out: dict[str, Any] = {k: [] for k in ("stage", "reason", "chain_length", "issuer_used", "anchor_used",
                                           "days_to_expiry")}
    used: set[str] = set()
    perm = excl = 0
    valid_roles = []
    for row, leaf in zip(rows, leaves):
        when = datetime.strptime(row["observed_at"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
        policy = Policy(row["role"], row["name"], when, int(params["max_chain_depth"]))
        stage, reason, chain = Builder(roots, bundle, policy).verify(leaf)
        out["stage"].append(stage)
        out["reason"].append(reason)
        if stage != "ok":
            out["chain_length"].append(0)
            out["issuer_used"].append("none")
            out["anchor_used"].append("none")
            out["days_to_expiry"].append(-1.0)
            continue
        labels = ["leaf"]
        for pos, c in enumerate(chain[1:], start=1):
            if pos == len(chain) - 1 and c.der in root_der:
                labels.append(f"root:{root_der.index(c.der)}")
            else:
                labels.append(f"int:{bundle_der.index(c.der)}")
        used.update(x for x in labels if x.startswith("int:"))
        valid_roles.append(row["role"])
        out["chain_length"].append(len(chain))
        out["issuer_used"].append(labels[1])
        out["anchor_used"].append(labels[-1])
        end = min(c.times[1][1] for c in chain)
        out["days_to_expiry"].append((end - when).total_seconds() / 86400.0)
        p, e = constrained(chain)
        perm += p
        excl += e
    ok_days = [d for s, d in zip(out["stage"], out["days_to_expiry"]) if s == "ok"]
    ok_len = [n for s, n in zip(out["stage"], out["chain_length"]) if s == "ok"]
    out.update({
        "valid_servers": valid_roles.count("server"),
        "valid_clients": valid_roles.count("client"),
        "leaf_rejections": out["stage"].count("leaf"),
        "path_failures": out["stage"].count("path"),
        "next_expiry_days": min(ok_days, default=-1.0),
        "longest_chain": max(ok_len, default=0),
        "constrained_sans": perm,
        "excluded_sans": excl,
        "unused_intermediates": sorted(f"int:{k}" for k in range(len(bundle)) if f"int:{k}" not in used),
    })
    return out


def main() -> None:
    print(json.dumps(solve(json.load(sys.stdin))))


if __name__ == "__main__":
    main()
