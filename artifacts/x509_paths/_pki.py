"""The scenario generator of `x509_paths`: a small corporate PKI written as PEM files, and the
inventory of the endpoints whose certificates an audit checks (verifier side only: it uses
the `cryptography` package to write the certificates)."""
from __future__ import annotations

import ipaddress
import random
from datetime import datetime, timedelta, timezone
from functools import lru_cache
from pathlib import Path
from typing import Any

UTC = timezone.utc
DAY = timedelta(days=1)
ORG = "Example Corp"
ZONE = "corp.example"
HOSTS = ["www", "api", "mail", "vpn", "git", "wiki", "shop", "auth", "cdn", "db", "ci", "grafana", "status",
         "intranet", "jira", "ldap", "smtp", "backup", "files", "chat", "sso", "proxy", "build", "docs"]
USERS = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy", "mallory", "oscar",
         "peggy", "rupert", "sybil", "trent", "victor", "walter"]
UNKNOWN_OID = "1.3.6.1.4.1.59999.7.1"
# leaf defects and their weights; a scenario draws from those that fit the endpoint
LEAF_DEFECTS = {
    "expired": 3, "not_yet_valid": 2, "name_mismatch": 2, "wildcard_deep": 1, "wrong_eku": 2, "ee_ca": 1,
    "ee_certsign": 1, "bad_signature": 2, "no_aki": 1, "no_san": 1, "san_critical": 1, "unknown_critical": 1,
    "prohibited_nc": 1, "sha1": 1, "v1": 1, "missing_intermediate": 2, "self_signed": 1,
    # issued by a CA that cannot vouch for it
    "via_dev_ca": 2, "via_vpn_ca": 1, "via_test_ca": 2, "via_client_ca": 1, "via_legacy_ca": 2, "via_lab_ca": 1,
}
QUIRKS = ["rsa1024_leaf", "ed25519_leaf", "no_eku", "upper_san", "ends_at_observation", "starts_at_observation",
          "extra_email", "extra_ip"]


def _x509() -> Any:
    from cryptography import x509
    return x509


@lru_cache(maxsize=None)
def _rsa_key(bits: int, index: int) -> Any:
    from cryptography.hazmat.primitives import serialization

    from . import _keys
    pool = _keys.RSA_2048 if bits == 2048 else _keys.RSA_1024
    return serialization.load_pem_private_key(pool[index % len(pool)].encode(), password=None)


def _key(rng: random.Random, kind: str) -> Any:
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519
    if kind == "p256":
        return ec.derive_private_key(rng.getrandbits(248) + 1, ec.SECP256R1())
    if kind == "p384":
        return ec.derive_private_key(rng.getrandbits(376) + 1, ec.SECP384R1())
    if kind == "ed25519":
        return ed25519.Ed25519PrivateKey.from_private_bytes(rng.randbytes(32))
    if kind == "rsa2048":
        return _rsa_key(2048, rng.randrange(1000))
    if kind == "rsa1024":
        return _rsa_key(1024, rng.randrange(1000))
    raise ValueError(kind)


def _hash_for(key: Any) -> Any:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519
    if isinstance(key, ed25519.Ed25519PrivateKey):
        return None
    if isinstance(key, ec.EllipticCurvePrivateKey) and key.curve.key_size == 384:
        return hashes.SHA384()
    return hashes.SHA256()


def _sign(builder: Any, key: Any) -> Any:
    from cryptography.hazmat.primitives.asymmetric import ec
    if isinstance(key, ec.EllipticCurvePrivateKey):
        return builder.sign(key, _hash_for(key), ecdsa_deterministic=True)
    return builder.sign(key, _hash_for(key))


def _name(cn: str, unit: str | None = None) -> Any:
    x509 = _x509()
    from cryptography.x509.oid import NameOID
    attrs = [x509.NameAttribute(NameOID.COUNTRY_NAME, "NL"), x509.NameAttribute(NameOID.ORGANIZATION_NAME, ORG)]
    if unit:
        attrs.append(x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, unit))
    attrs.append(x509.NameAttribute(NameOID.COMMON_NAME, cn))
    return x509.Name(attrs)


def _ku(ca: bool, certsign: bool | None = None, digital: bool = True, encipher: bool = False) -> Any:
    x509 = _x509()
    cs = ca if certsign is None else certsign
    return x509.KeyUsage(digital_signature=digital, content_commitment=False, key_encipherment=encipher,
                         data_encipherment=False, key_agreement=False, key_cert_sign=cs, crl_sign=ca,
                         encipher_only=False, decipher_only=False)


def _resign(cert: Any, issuer_key: Any, *, sha1: bool = False, v1: bool = False) -> Any:
    """Re-encode a certificate the `cryptography` builder refuses to write: a version 1
    certificate (no extensions) or one signed with SHA-1."""
    from asn1crypto import x509 as ax
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec, padding
    from cryptography.hazmat.primitives.serialization import Encoding

    parsed = ax.Certificate.load(cert.public_bytes(Encoding.DER))
    tbs = parsed["tbs_certificate"].copy()
    is_ec = isinstance(issuer_key, ec.EllipticCurvePrivateKey)
    digest: Any = hashes.SHA256()
    if sha1:
        digest = hashes.SHA1()
        alg = ax.SignedDigestAlgorithm({"algorithm": "sha1_ecdsa" if is_ec else "sha1_rsa"})
        tbs["signature"] = alg
    else:
        alg = parsed["signature_algorithm"].copy()
        if is_ec and issuer_key.curve.key_size == 384:
            digest = hashes.SHA384()
    if v1:
        tbs["version"] = "v1"
        tbs["extensions"] = ax.Extensions([])
        tbs = ax.TbsCertificate({k: tbs[k] for k in ("version", "serial_number", "signature", "issuer", "validity",
                                                   "subject", "subject_public_key_info")})
    data = tbs.dump(force=True)
    if is_ec:
        sig = issuer_key.sign(data, ec.ECDSA(digest, deterministic_signing=True))
    else:
        sig = issuer_key.sign(data, padding.PKCS1v15(), digest)
    out = ax.Certificate({"tbs_certificate": tbs, "signature_algorithm": alg, "signature_value": sig})
    return x509.load_der_x509_certificate(out.dump(force=True))


class Authority:
    """A CA of the scenario: its key, its certificate(s) and where they are published."""

    def __init__(self, label: str, cn: str, key: Any, unit: str | None = None) -> None:
        self.label, self.cn, self.key, self.unit = label, cn, key, unit
        self.name = _name(cn, unit)
        self.certs: list[Any] = []


def _ca_cert(rng: random.Random, subject: Authority, issuer: Authority | None, nb: datetime, na: datetime, *,
             pathlen: int | None = None, eku: list[Any] | None = None, nc: Any = None, ski: bool = True,
             aki: bool = True, bc_critical: bool = True, bc_ca: bool = True, ku: str = "ok",
             unknown_critical: bool = False) -> Any:
    x509 = _x509()
    signer = issuer or subject
    b = (x509.CertificateBuilder().subject_name(subject.name).issuer_name(signer.name)
         .public_key(subject.key.public_key()).serial_number(rng.getrandbits(120) | (1 << 100))
         .not_valid_before(nb).not_valid_after(na))
    b = b.add_extension(x509.BasicConstraints(ca=bc_ca, path_length=pathlen if bc_ca else None), critical=bc_critical)
    if ku == "ok":
        b = b.add_extension(_ku(True), critical=True)
    elif ku == "no_certsign":
        b = b.add_extension(_ku(True, certsign=False), critical=True)
    if ski:
        b = b.add_extension(x509.SubjectKeyIdentifier.from_public_key(subject.key.public_key()), critical=False)
    if aki and issuer is not None:
        b = b.add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(signer.key.public_key()), critical=False)
    if eku:
        b = b.add_extension(x509.ExtendedKeyUsage(eku), critical=False)
    if nc is not None:
        b = b.add_extension(nc, critical=True)
    if unknown_critical:
        b = b.add_extension(x509.UnrecognizedExtension(x509.ObjectIdentifier(UNKNOWN_OID), b"\x05\x00"), critical=True)
    return _sign(b, signer.key)


def _t(dt: datetime) -> datetime:
    return dt.replace(microsecond=0)


def world(params: dict[str, Any]) -> dict[str, Any]:
    """The whole scenario (deterministic in params): roots, intermediates bundle, endpoints."""
    x509 = _x509()
    from cryptography.x509.oid import ExtendedKeyUsageOID as EKU

    rng = random.Random(int(params["seed"]) * 7919 + 17)
    mixed = params["key_mix"] == "mixed"
    defect_rate = float(params["defect_rate"])
    t0 = datetime(2025, 1, 6, tzinfo=UTC) + rng.randrange(0, 540) * DAY
    window = 60 * DAY

    def when(lo_days: float, hi_days: float) -> datetime:
        return _t(t0 + timedelta(seconds=rng.randrange(int(lo_days * 86400), int(hi_days * 86400) + 1)))

    # ---------------------------------------------------------------- authorities
    r1 = Authority("R1", "Example Corp Root CA R1", _key(rng, "rsa2048" if mixed else "p384"))
    r2 = Authority("R2", "Example Corp Root CA R2", _key(rng, "p256"))
    r0 = Authority("R0", "Example Corp Legacy Root", _key(rng, "p256"))
    r1.certs.append(_ca_cert(rng, r1, None, when(-3400, -2500), when(2500, 4000)))
    r2.certs.append(_ca_cert(rng, r2, None, when(-800, -500), when(365 * 20, 365 * 27)))
    r0.certs.append(_ca_cert(rng, r0, None, when(-5000, -4000), when(-400, -30)))

    nc_mode = params["name_constraints"]
    permitted: list[Any] = []
    excluded: list[Any] = []
    if nc_mode in ("permitted", "both"):
        permitted = [x509.DNSName(ZONE)]
        if rng.random() < 0.5:
            permitted.append(x509.IPAddress(ipaddress.ip_network("10.0.0.0/8")))
        if rng.random() < 0.3:
            permitted.insert(0, x509.DNSName("corp-internal.test"))
    if nc_mode in ("excluded", "both"):
        excluded = [x509.DNSName("legacy." + ZONE)]
        if rng.random() < 0.4:
            excluded.append(x509.IPAddress(ipaddress.ip_network("10.99.0.0/16")))
    web_nc = x509.NameConstraints(permitted_subtrees=permitted or None, excluded_subtrees=excluded or None) \
        if (permitted or excluded) else None
    client_nc = None
    if nc_mode != "none":
        client_nc = x509.NameConstraints(
            permitted_subtrees=[x509.RFC822Name(rng.choice([ZONE, "." + ZONE]))] if nc_mode != "excluded" else None,
            excluded_subtrees=[x509.RFC822Name("contractors." + ZONE)] if nc_mode != "permitted" else None)

    kw = _key(rng, "p256")
    w1 = Authority("W1", "Example Corp Web CA", kw, "Web PKI")
    w2 = Authority("W2", "Example Corp Web CA", _key(rng, "p384" if rng.random() < 0.5 else "p256"), "Web PKI")
    w1_end = when(20, 80)
    w2_start = when(-25, 20)
    w1.certs.append(_ca_cert(rng, w1, r1, when(-1500, -1100), w1_end, pathlen=0,
                             eku=[EKU.SERVER_AUTH], nc=web_nc))
    w2.certs.append(_ca_cert(rng, w2, r1, w2_start, when(1500, 1900), pathlen=0,
                             eku=[EKU.SERVER_AUTH, EKU.CLIENT_AUTH] if rng.random() < 0.5 else [EKU.SERVER_AUTH],
                             nc=web_nc))
    x2 = Authority("X2", r2.cn, r2.key)  # R2 cross-signed by R1
    x2_end = when(15, 75)
    x2.certs.append(_ca_cert(rng, x2, r1, when(-700, -500), x2_end))
    pol = Authority("P", "Example Corp Policy CA", _key(rng, "p256"))
    pol.certs.append(_ca_cert(rng, pol, r2, when(-450, -300), when(2000, 3000), pathlen=1))
    svc = Authority("S", "Example Corp Services CA", _key(rng, "p256"), "Services")
    svc.certs.append(_ca_cert(rng, svc, pol, when(-300, -100), when(800, 1400), pathlen=0,
                              eku=[EKU.SERVER_AUTH, EKU.CLIENT_AUTH]))
    cli = Authority("C", "Example Corp Client CA", _key(rng, "p256"), "People")
    cli.certs.append(_ca_cert(rng, cli, r2, when(-400, -200), when(1000, 2000), pathlen=0,
                              eku=[EKU.CLIENT_AUTH], nc=client_nc))
    dev = Authority("D", "Example Corp Dev CA", _key(rng, "p256"), "Engineering")
    dev.certs.append(_ca_cert(rng, dev, w2, when(-20, -10), when(300, 700)))
    vpn = Authority("V", "Example Corp VPN CA", _key(rng, "p256"), "Network")
    vpn.certs.append(_ca_cert(rng, vpn, r0, when(-3000, -2000), when(300, 900), pathlen=0))
    partner = Authority("Q", "Example Corp Partner CA", _key(rng, "p256"))  # never published
    test_defect = rng.choice(["bc_noncritical", "no_ku", "no_certsign", "not_ca", "unknown_critical"])
    test = Authority("T", "Example Corp Test CA", _key(rng, "p256"), "QA")
    test.certs.append(_ca_cert(rng, test, r2, when(-200, -100), when(400, 900), pathlen=0,
                               bc_critical=test_defect != "bc_noncritical", bc_ca=test_defect != "not_ca",
                               ku={"no_ku": "none", "no_certsign": "no_certsign"}.get(test_defect, "ok"),
                               unknown_critical=test_defect == "unknown_critical"))
    cas = {a.label: a for a in (w1, w2, x2, pol, svc, cli, dev, vpn, test)}
    if mixed:
        hw = Authority("H", "Example Corp Hardware CA", _key(rng, "rsa2048"), "Devices")
        hw.certs.append(_ca_cert(rng, hw, r1, when(-900, -600), when(900, 1500), pathlen=0, ski=False))
        leg = Authority("L", "Example Corp Legacy CA", _key(rng, "rsa1024"), "Legacy")
        leg.certs.append(_ca_cert(rng, leg, r1, when(-2500, -2000), when(400, 800), pathlen=0))
        lab = Authority("E", "Example Corp Lab CA", _key(rng, "ed25519"), "Lab")
        lab.certs.append(_ca_cert(rng, lab, r2, when(-300, -200), when(600, 900), pathlen=0))
        cas.update({"H": hw, "L": leg, "E": lab})

    # ---------------------------------------------------------------- endpoints
    n = int(params["endpoints"])
    client_share = float(params["client_share"])
    defects = [d for d in LEAF_DEFECTS if mixed or d not in ("via_legacy_ca", "via_lab_ca")]
    used_hosts: set[str] = set()
    endpoints: list[dict[str, Any]] = []
    used_cas: set[str] = set()
    for i in range(n):
        role = "client" if rng.random() < client_share else "server"
        obs = when(0, window / DAY)
        picked: list[str] = []
        if rng.random() < defect_rate:
            picked.append(_pick(rng, defects, role))
            if rng.random() < defect_rate * 0.5:
                extra = _pick(rng, defects, role)
                if extra not in picked and not (extra.startswith("via_") and picked[0].startswith("via_")):
                    picked.append(extra)
        quirks = [q for q in QUIRKS if rng.random() < 0.06]
        ep = _endpoint(rng, i, role, obs, picked, quirks, cas, partner, used_hosts, mixed, w2_start)
        used_cas.add(ep["issuer_label"])
        endpoints.append(ep)

    # ---------------------------------------------------------------- publication
    roots = [r1, r2] if params["trust_store"] == "current" else [r1, r0]
    rng.shuffle(roots)
    bundle: list[Any] = []
    for label in ("W1", "W2", "X2", "P", "S", "C"):
        bundle.append(cas[label].certs[0])
    for label in ("D", "V", "T", "H", "L", "E"):
        if label in cas and (label in used_cas or (label == "D" and "D" in used_cas) or rng.random() < 0.3):
            bundle.append(cas[label].certs[0])
    if rng.random() < 0.5:  # a server sends one intermediate twice
        bundle.append(rng.choice(bundle))
    rng.shuffle(bundle)
    return {"t0": t0, "roots": [r.certs[0] for r in roots], "bundle": bundle, "endpoints": endpoints}


def _pick(rng: random.Random, defects: list[str], role: str) -> str:
    server_only = {"name_mismatch", "wildcard_deep", "via_client_ca"}
    pool = [d for d in defects if role == "server" or d not in server_only]
    return rng.choices(pool, weights=[LEAF_DEFECTS[d] for d in pool])[0]


def _endpoint(rng: random.Random, i: int, role: str, obs: datetime, picked: list[str], quirks: list[str],
              cas: dict[str, Authority], partner: Authority, used_hosts: set[str], mixed: bool,
              w2_start: datetime) -> dict[str, Any]:
    x509 = _x509()
    from cryptography.x509.oid import ExtendedKeyUsageOID as EKU

    # what the endpoint is called and which names its certificate carries
    sans: list[Any] = []
    if role == "server":
        kind = rng.choices(["plain", "wildcard", "legacy", "partner", "ip", "zone_wildcard"],
                           weights=[6, 2, 1.5, 1, 1.5, 0.7])[0]
        host = rng.choice(HOSTS)
        while host in used_hosts:
            host = host + str(rng.randrange(2, 9))
        used_hosts.add(host)
        if kind == "plain":
            zone = rng.choice([ZONE, ZONE, "eu." + ZONE])
            name = f"{host}.{zone}"
            sans = [x509.DNSName(name)]
            if rng.random() < 0.4:
                sans.append(x509.DNSName(f"{rng.choice(HOSTS)}.{zone}"))
        elif kind == "wildcard":
            name = f"{host}.apps.{ZONE}"
            sans = [x509.DNSName(f"*.apps.{ZONE}")]
        elif kind == "zone_wildcard":
            name = f"{host}.{ZONE}"
            sans = [x509.DNSName(f"*.{ZONE}"), x509.DNSName(ZONE)]
        elif kind == "legacy":
            name = f"{host}.legacy.{ZONE}"
            sans = [x509.DNSName(name)]
        elif kind == "partner":
            name = f"{host}.partner.test"
            sans = [x509.DNSName(name), x509.DNSName(f"{host}.{ZONE}")]
        else:
            net = rng.choice(["10.20", "10.99", "192.0"])
            name = f"{net}.{rng.randrange(1, 250)}.{rng.randrange(1, 250)}"
            sans = [x509.IPAddress(ipaddress.ip_address(name)), x509.DNSName(f"{host}.{ZONE}")]
    else:
        kind = "client"
        user = rng.choice(USERS)
        zone = rng.choice([ZONE, ZONE, ZONE, ZONE, "eu." + ZONE, "contractors." + ZONE])
        name = "-"
        sans = [x509.RFC822Name(f"{user}@{zone}")]
        if rng.random() < 0.4:
            sans.append(x509.DNSName(f"{user}-laptop.{ZONE}"))

    # the issuing CA
    issued = _t(obs - timedelta(seconds=rng.randrange(2 * 86400, (120 if rng.random() < 0.7 else 300) * 86400)))
    via = next((d for d in picked if d.startswith("via_")), None)
    if via is not None:
        label = {"via_dev_ca": "D", "via_vpn_ca": "V", "via_test_ca": "T", "via_client_ca": "C",
                 "via_legacy_ca": "L", "via_lab_ca": "E"}[via]
    elif role == "client":
        label = "C" if rng.random() < 0.75 else "S"
    else:
        choices = ["W", "W", "W", "S", "S"] + (["H", "H"] if mixed else [])
        label = rng.choice(choices)
        if label == "W":
            label = "W2" if issued >= w2_start else "W1"
    issuer = cas[label] if "missing_intermediate" not in picked else partner

    # the key of the endpoint
    key_kind = "p256"
    if "rsa1024_leaf" in quirks:
        key_kind = "rsa1024"
    elif "ed25519_leaf" in quirks:
        key_kind = "ed25519"
    elif mixed and rng.random() < 0.3:
        key_kind = "rsa2048"
    key = _key(rng, key_kind)

    nb = issued
    na = _t(issued + timedelta(days=rng.choice([90, 200, 397, 398])))
    if na < obs:
        na = _t(obs + timedelta(seconds=rng.randrange(86400, 60 * 86400)))
    if "expired" in picked:
        na = _t(obs - timedelta(seconds=rng.randrange(3600, 200 * 86400)))
        nb = _t(na - 397 * DAY)
    if "not_yet_valid" in picked:
        nb = _t(obs + timedelta(seconds=rng.randrange(600, 30 * 86400)))
        na = _t(nb + 200 * DAY)
    if "ends_at_observation" in quirks and "expired" not in picked and "not_yet_valid" not in picked:
        na = obs
    if "starts_at_observation" in quirks and "expired" not in picked and "not_yet_valid" not in picked:
        nb = obs

    if "name_mismatch" in picked and role == "server":
        sans = [s for s in sans if not (isinstance(s, x509.DNSName) and s.value == name)
                and not isinstance(s, x509.IPAddress)] or [x509.DNSName(f"{rng.choice(HOSTS)}-old.{ZONE}")]
    if "wildcard_deep" in picked and role == "server":
        name = f"{rng.choice(HOSTS)}.{rng.choice(HOSTS)}.apps.{ZONE}"
        sans = [x509.DNSName(f"*.apps.{ZONE}")]
    if "upper_san" in quirks:
        sans = [x509.DNSName(s.value.upper()) if isinstance(s, x509.DNSName) else s for s in sans]
    if "extra_email" in quirks:
        sans.append(x509.RFC822Name(f"{rng.choice(USERS)}@{rng.choice([ZONE, 'contractors.' + ZONE, 'mail.test'])}"))
    if "extra_ip" in quirks:
        sans.append(x509.IPAddress(ipaddress.ip_address(f"10.{rng.choice([20, 99])}.{rng.randrange(256)}.7")))

    exts: list[tuple[Any, bool]] = []
    if "ee_ca" in picked:
        exts.append((x509.BasicConstraints(ca=True, path_length=None), True))
    elif rng.random() < 0.5:
        exts.append((x509.BasicConstraints(ca=False, path_length=None), True))
    exts.append((_ku(False, certsign="ee_certsign" in picked, encipher=key_kind.startswith("rsa")), True))
    server_eku, client_eku = [EKU.SERVER_AUTH], [EKU.CLIENT_AUTH]
    if "wrong_eku" in picked:
        eku = client_eku if role == "server" else server_eku
    else:
        eku = server_eku if role == "server" else client_eku
        if rng.random() < 0.3:
            eku = [EKU.SERVER_AUTH, EKU.CLIENT_AUTH]
    if "no_eku" not in quirks:
        exts.append((x509.ExtendedKeyUsage(eku), False))
    if "no_san" not in picked:
        exts.append((x509.SubjectAlternativeName(sans), "san_critical" in picked))
    exts.append((x509.SubjectKeyIdentifier.from_public_key(key.public_key()), False))
    if "no_aki" not in picked:
        signer_pub = (key if "self_signed" in picked else issuer.key).public_key()
        exts.append((x509.AuthorityKeyIdentifier.from_issuer_public_key(signer_pub), False))
    if "unknown_critical" in picked:
        exts.append((x509.UnrecognizedExtension(x509.ObjectIdentifier(UNKNOWN_OID), b"\x05\x00"), True))
    if "prohibited_nc" in picked:
        exts.append((x509.NameConstraints(permitted_subtrees=[x509.DNSName(ZONE)], excluded_subtrees=None), True))
    rng.shuffle(exts)

    cn = name if role == "server" else sans[0].value.split("@")[0]
    subject = _name(cn, "Clients" if role == "client" else None)
    issuer_name = subject if "self_signed" in picked else issuer.name
    b = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer_name).public_key(key.public_key())
         .serial_number(rng.getrandbits(126) | (1 << 120)).not_valid_before(nb).not_valid_after(na))
    for ext, crit in exts:
        b = b.add_extension(ext, critical=crit)
    signer = issuer.key
    if "self_signed" in picked:
        signer = key
    if "bad_signature" in picked:
        signer = _key(rng, "p256")
    cert = _sign(b, signer)
    if "sha1" in picked or "v1" in picked:
        from cryptography.hazmat.primitives.asymmetric import ed25519
        if not isinstance(signer, ed25519.Ed25519PrivateKey):  # Ed25519 has no SHA-1 form
            cert = _resign(cert, signer, sha1="sha1" in picked, v1="v1" in picked)
    return {"index": i, "role": role, "name": name, "observed_at": obs, "cert": cert, "defects": picked,
            "quirks": quirks, "issuer_label": issuer.label, "kind": kind}


def write_inputs(params: dict[str, Any], directory: Path) -> None:
    from cryptography.hazmat.primitives.serialization import Encoding

    w = world(params)
    directory = Path(directory)

    def pem(certs: list[Any]) -> bytes:
        return b"".join(c.public_bytes(Encoding.PEM) for c in certs)

    (directory / "roots.pem").write_bytes(pem(w["roots"]))
    (directory / "intermediates.pem").write_bytes(pem(w["bundle"]))
    (directory / "endpoints.pem").write_bytes(pem([e["cert"] for e in w["endpoints"]]))
    lines = ["endpoint,role,name,observed_at"]
    for e in w["endpoints"]:
        lines.append(f"{e['index']},{e['role']},{e['name']},{e['observed_at'].strftime('%Y-%m-%dT%H:%M:%SZ')}")
    (directory / "inventory.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
