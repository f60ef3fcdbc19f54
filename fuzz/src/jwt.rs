//! `jwt`: a compact JWT as a caller presents it (service auth) or a server hands it over, split by
//! `swdesk_atproto::jwt::Unverified::parse` and checked by `Unverified::verify` with fixed P-256
//! and secp256k1 keys; its claims read as `service_auth::Claims`.
//!
//! Invariants:
//! - a token whose `alg` is not the key's is refused as such, before its signature is looked at;
//! - a token is accepted only with a 64-byte low-S signature over exactly its first two parts (the
//!   fuzzer cannot forge one: only the seeds signed with the fixed key verify);
//! - a parsed token's header (when it is an object) and claims, signed again with `sign_es256`,
//!   parse to the same claims and an `ES256` header, and verify with the key;
//! - `Claims::issuer_did` is a prefix of `iss` without `#`.

use serde_json::Value;
use swdesk_atproto::did_key::PublicKey;
use swdesk_atproto::jwt::{JwtError, Unverified, sign_es256};
use swdesk_atproto::service_auth::Claims;

/// The fixed P-256 key the seeds are signed with: the scalar 0x11 repeated.
pub fn p256_key() -> p256::ecdsa::SigningKey {
    p256::ecdsa::SigningKey::from_slice(&[0x11; 32]).unwrap_or_else(|_| unreachable!())
}

/// The fixed secp256k1 key: the scalar 0x22 repeated.
pub fn k256_key() -> k256::ecdsa::SigningKey {
    k256::ecdsa::SigningKey::from_slice(&[0x22; 32]).unwrap_or_else(|_| unreachable!())
}

pub fn check(data: &[u8]) {
    let token = crate::text(data);
    let Ok(parsed) = Unverified::parse(&token) else {
        return;
    };
    let signing = p256_key();
    let keys = [
        PublicKey::P256(*signing.verifying_key()),
        PublicKey::K256(*k256_key().verifying_key()),
    ];
    let alg = parsed.header["alg"].as_str().unwrap_or_default();
    for key in &keys {
        match parsed.verify::<Value>(key) {
            Ok(claims) => {
                assert_eq!(alg, key.jws_algorithm());
                assert_eq!(claims, parsed.claims);
                let (signing_input, signature) = token.rsplit_once('.').unwrap_or_default();
                assert_eq!(
                    signature.len(),
                    86,
                    "a signature that is not 64 bytes verified"
                );
                assert_eq!(signing_input.matches('.').count(), 1);
            }
            Err(JwtError::Algorithm { found, expected }) => {
                assert_ne!(alg, key.jws_algorithm());
                assert_eq!((found.as_str(), expected), (alg, key.jws_algorithm()));
            }
            Err(JwtError::BadSignature) => assert_eq!(alg, key.jws_algorithm()),
            Err(JwtError::Malformed(_)) => {}
        }
    }
    if let Ok(claims) = serde_json::from_value::<Claims>(parsed.claims.clone()) {
        let issuer = claims.issuer_did();
        assert!(claims.iss.starts_with(issuer) && !issuer.contains('#'));
    }
    if parsed.header.is_object() {
        let token = match sign_es256(&signing, &parsed.header, &parsed.claims) {
            Ok(token) => token,
            Err(error) => panic!("parsed parts do not sign: {error}"),
        };
        let again = match Unverified::parse(&token) {
            Ok(again) => again,
            Err(error) => panic!("a token we signed does not parse: {error}"),
        };
        assert_eq!(again.claims, parsed.claims);
        assert_eq!(again.header["alg"], "ES256");
        assert_eq!(again.verify::<Value>(&keys[0]).as_ref(), Ok(&parsed.claims));
    }
}
