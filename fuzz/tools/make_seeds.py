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


def main():
    made = [records(), xrpc_answer(), did_document(), syntax(), data_model(), cluster_frames(),
            kubeconfig_corpus(), oauth_metadata(), jwt(), peer_text(), bid_cost()]
    for corpus in made:
        print(f"{corpus.dir.relative_to(FUZZ)}: {len(corpus.seen)} seeds")
    check_dictionaries()


if __name__ == "__main__":
    main()
