//! DPoP (RFC 9449): the session's ES256 key and the proofs it signs for every request to the
//! authorization server and the PDS, plus the server nonces those proofs must carry.
//!
//! Invariants: the private key leaves this module only as the bytes [`DpopKey::to_secret_bytes`]
//! returns, for the keychain; `Debug` shows the public thumbprint only. A proof's `htu` is the
//! request URL without query or fragment; `ath` (the access token's SHA-256) is present exactly
//! on resource requests. Nonces are remembered per origin and replaced by whatever the server
//! sends last; so is each server's clock (its `Date` header), and a proof's `iat` is the server's
//! time, not ours: a laptop whose clock is minutes off still signs proofs the server accepts.

use std::collections::HashMap;
use std::fmt;
use std::sync::Mutex;

use p256::ecdsa::SigningKey;
use rand_core::{OsRng, RngCore};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use url::Url;

use crate::jwt::{b64url, sign_es256};

/// The session's DPoP key pair (P-256).
#[derive(Clone)]
pub struct DpopKey(SigningKey);

impl fmt::Debug for DpopKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DpopKey(thumbprint {})", self.thumbprint())
    }
}

impl DpopKey {
    /// A fresh random key.
    pub fn generate() -> Self {
        Self(SigningKey::random(&mut OsRng))
    }

    /// The key from the 32 secret bytes [`Self::to_secret_bytes`] gave.
    pub fn from_secret_bytes(bytes: &[u8]) -> Option<Self> {
        SigningKey::from_slice(bytes).ok().map(Self)
    }

    /// The 32 secret bytes, for the keychain only.
    pub fn to_secret_bytes(&self) -> Vec<u8> {
        self.0.to_bytes().to_vec()
    }

    /// The public key as a JWK.
    pub fn public_jwk(&self) -> Value {
        let point = self.0.verifying_key().to_encoded_point(false);
        let coordinate = |part: Option<&p256::FieldBytes>| part.map(|bytes| b64url(bytes));
        json!({
            "kty": "EC",
            "crv": "P-256",
            "x": coordinate(point.x()),
            "y": coordinate(point.y()),
        })
    }

    /// The JWK thumbprint (RFC 7638), which the server binds tokens to (`cnf.jkt`).
    pub fn thumbprint(&self) -> String {
        let jwk = self.public_jwk();
        // RFC 7638: the required members in lexicographic order, no whitespace.
        let canonical = format!(
            r#"{{"crv":"P-256","kty":"EC","x":"{}","y":"{}"}}"#,
            jwk["x"].as_str().unwrap_or_default(),
            jwk["y"].as_str().unwrap_or_default()
        );
        b64url(&Sha256::digest(canonical.as_bytes()))
    }

    /// A proof for `method url`, carrying the server's `nonce` when it gave one and, for a
    /// resource request, the hash of `access_token`.
    pub fn proof(
        &self,
        method: &str,
        url: &Url,
        nonce: Option<&str>,
        access_token: Option<&str>,
        now_unix: i64,
    ) -> String {
        let mut claims = json!({
            "jti": random_token(16),
            "htm": method,
            "htu": htu(url),
            "iat": now_unix,
        });
        if let Some(nonce) = nonce {
            claims["nonce"] = Value::from(nonce);
        }
        if let Some(token) = access_token {
            claims["ath"] = Value::from(b64url(&Sha256::digest(token.as_bytes())));
        }
        let header = json!({ "typ": "dpop+jwt", "jwk": self.public_jwk() });
        sign_es256(&self.0, &header, &claims).unwrap_or_default()
    }
}

/// The request URL as DPoP names it: no query, no fragment.
fn htu(url: &Url) -> String {
    let mut bare = url.clone();
    bare.set_query(None);
    bare.set_fragment(None);
    bare.to_string()
}

/// `bytes` random bytes as base64url: states, verifiers, proof ids.
pub fn random_token(bytes: usize) -> String {
    let mut buffer = vec![0_u8; bytes];
    OsRng.fill_bytes(&mut buffer);
    b64url(&buffer)
}

/// What each server (by origin) last told the client: the nonce it asked for, and how far its
/// clock is from ours.
#[derive(Debug, Default)]
pub struct Nonces {
    nonces: Mutex<HashMap<String, String>>,
    /// Seconds to add to our clock to get the server's.
    offsets: Mutex<HashMap<String, i64>>,
    /// Seconds our clock is pretended off by (tests of a skewed laptop).
    skew: std::sync::atomic::AtomicI64,
}

impl Nonces {
    /// The nonce to send to `url`'s origin, if it gave one.
    pub fn for_url(&self, url: &Url) -> Option<String> {
        lock(&self.nonces).get(&origin(url)).cloned()
    }

    /// Remembers the `DPoP-Nonce` and the `Date` of a response from `url`.
    pub fn remember(&self, url: &Url, headers: &reqwest::header::HeaderMap) {
        if let Some(nonce) = headers.get("dpop-nonce").and_then(|v| v.to_str().ok()) {
            lock(&self.nonces).insert(origin(url), nonce.to_owned());
        }
        let date = headers
            .get(reqwest::header::DATE)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| httpdate::parse_http_date(value).ok())
            .and_then(|at| at.duration_since(std::time::UNIX_EPOCH).ok())
            .and_then(|since| i64::try_from(since.as_secs()).ok());
        if let Some(server) = date {
            lock(&self.offsets).insert(origin(url), server.saturating_sub(self.local_now()));
        }
    }

    /// Now on `url`'s server's clock, as far as its last answer told (ours before any).
    pub fn now_for(&self, url: &Url) -> i64 {
        let offset = lock(&self.offsets).get(&origin(url)).copied().unwrap_or(0);
        self.local_now().saturating_add(offset)
    }

    /// Replaces the nonce of `url`'s origin (a server rotating it looks like this to a client).
    pub fn set(&self, url: &Url, nonce: &str) {
        lock(&self.nonces).insert(origin(url), nonce.to_owned());
    }

    /// Pretends this machine's clock is `seconds` off (a test of a laptop with a wrong clock);
    /// only in tests and under the `test-support` feature.
    #[cfg(any(test, feature = "test-support"))]
    pub fn pretend_clock_off_by(&self, seconds: i64) {
        self.skew
            .store(seconds, std::sync::atomic::Ordering::SeqCst);
    }

    fn local_now(&self) -> i64 {
        super::unix_now().saturating_add(self.skew.load(std::sync::atomic::Ordering::SeqCst))
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn origin(url: &Url) -> String {
    url.origin().ascii_serialization()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::did_key::PublicKey;
    use crate::jwt::Unverified;

    #[test]
    fn a_proof_verifies_with_the_key_in_its_own_header_and_names_the_request() {
        let key = DpopKey::generate();
        let url =
            Url::parse("https://pds.example.com/xrpc/com.atproto.repo.putRecord?x=1#f").unwrap();
        let proof = key.proof("POST", &url, Some("n-1"), Some("token"), 1_700_000_000);
        let parsed = Unverified::parse(&proof).unwrap();
        assert_eq!(parsed.header["typ"], "dpop+jwt");
        assert_eq!(parsed.header["jwk"], key.public_jwk());
        let public = PublicKey::P256(*key.0.verifying_key());
        let claims: Value = parsed.verify(&public).unwrap();
        assert_eq!(claims["htm"], "POST");
        assert_eq!(
            claims["htu"],
            "https://pds.example.com/xrpc/com.atproto.repo.putRecord"
        );
        assert_eq!(claims["nonce"], "n-1");
        assert_eq!(claims["iat"], 1_700_000_000);
        assert_eq!(claims["ath"], b64url(&Sha256::digest(b"token")));
    }

    #[test]
    fn a_server_s_clock_is_read_off_its_date_and_proofs_take_its_time() {
        let nonces = Nonces::default();
        let pds = Url::parse("https://pds.example.com/xrpc/x").unwrap();
        let other = Url::parse("https://other.example.com/").unwrap();
        let ahead = std::time::SystemTime::now() + std::time::Duration::from_secs(3600);
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert("date", httpdate::fmt_http_date(ahead).parse().unwrap());
        nonces.remember(&pds, &headers);
        let offset = nonces.now_for(&pds) - crate::oauth::unix_now();
        assert!((3599..=3601).contains(&offset), "{offset}");
        assert!((nonces.now_for(&other) - crate::oauth::unix_now()).abs() <= 1);
        nonces.pretend_clock_off_by(-600);
        assert!((nonces.now_for(&other) - crate::oauth::unix_now() + 600).abs() <= 1);
    }

    #[test]
    fn a_proof_without_nonce_or_token_carries_neither_and_ids_never_repeat() {
        let key = DpopKey::generate();
        let url = Url::parse("https://auth.example.com/oauth/par").unwrap();
        let claims = |proof: &str| Unverified::parse(proof).unwrap().claims;
        let first = claims(&key.proof("POST", &url, None, None, 0));
        let second = claims(&key.proof("POST", &url, None, None, 0));
        assert!(first.get("nonce").is_none() && first.get("ath").is_none());
        assert_ne!(first["jti"], second["jti"]);
    }

    #[test]
    fn the_key_survives_the_keychain_round_trip_and_debug_shows_no_secret() {
        let key = DpopKey::generate();
        let back = DpopKey::from_secret_bytes(&key.to_secret_bytes()).unwrap();
        assert_eq!(back.thumbprint(), key.thumbprint());
        let shown = format!("{key:?}");
        assert!(shown.contains(&key.thumbprint()));
        assert!(!shown.contains(&b64url(&key.to_secret_bytes())));
    }

    #[test]
    fn nonces_are_kept_per_origin_and_replaced_by_the_newest() {
        let nonces = Nonces::default();
        let pds = Url::parse("http://localhost:2583/xrpc/a").unwrap();
        let other = Url::parse("http://localhost:2584/oauth/token").unwrap();
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert("dpop-nonce", "first".parse().unwrap());
        nonces.remember(&pds, &headers);
        headers.insert("dpop-nonce", "second".parse().unwrap());
        nonces.remember(
            &Url::parse("http://localhost:2583/xrpc/b").unwrap(),
            &headers,
        );
        assert_eq!(nonces.for_url(&pds).as_deref(), Some("second"));
        assert_eq!(nonces.for_url(&other), None);
    }
}
