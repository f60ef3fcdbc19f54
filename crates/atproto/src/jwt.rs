//! Compact JWS (JWT) with the two atproto curves: signing ES256 (our DPoP proofs) and verifying
//! ES256 / ES256K (service-auth tokens minted by a PDS). Only what atproto uses: no `none`, no
//! HMAC, no key ids from the token itself; the verifier is always given the key to check with.
//!
//! Invariants: signatures are the fixed-size `r || s` form JOSE uses (64 bytes), and a
//! high-S ES256K signature is refused (atproto requires low-S).

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::did_key::PublicKey;

/// base64url without padding, the encoding of every JOSE part.
pub fn b64url(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// Why a token was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JwtError {
    /// Not three base64url parts of JSON.
    #[error("not a compact JWT: {0}")]
    Malformed(String),
    /// The header names an algorithm that does not fit the key.
    #[error("the token is signed with {found}, but the key is {expected}")]
    Algorithm {
        /// What the header says.
        found: String,
        /// What the key needs.
        expected: &'static str,
    },
    /// The signature does not verify against the key.
    #[error("the signature does not match the issuer's key")]
    BadSignature,
}

/// Signs `claims` with a P-256 key as ES256, with `header` fields added to `alg`.
pub fn sign_es256(
    key: &p256::ecdsa::SigningKey,
    header: &Value,
    claims: &impl Serialize,
) -> Result<String, serde_json::Error> {
    use p256::ecdsa::signature::Signer as _;
    let mut header = header.clone();
    header["alg"] = Value::from("ES256");
    let signing_input = format!(
        "{}.{}",
        b64url(&serde_json::to_vec(&header)?),
        b64url(&serde_json::to_vec(claims)?)
    );
    let signature: p256::ecdsa::Signature = key.sign(signing_input.as_bytes());
    // Low-S, as atproto requires of every signature it verifies.
    let signature = signature.normalize_s().unwrap_or(signature);
    Ok(format!("{signing_input}.{}", b64url(&signature.to_bytes())))
}

/// A token split into its parts, not yet verified.
#[derive(Debug, Clone)]
pub struct Unverified<'a> {
    /// The decoded header.
    pub header: Value,
    /// The decoded claims.
    pub claims: Value,
    signing_input: &'a str,
    signature: Vec<u8>,
}

impl<'a> Unverified<'a> {
    /// Splits and decodes a compact JWT.
    pub fn parse(token: &'a str) -> Result<Self, JwtError> {
        let malformed = |what: &str| JwtError::Malformed(what.to_owned());
        let (signing_input, signature) = token
            .rsplit_once('.')
            .ok_or_else(|| malformed("no signature part"))?;
        let (header, claims) = signing_input
            .split_once('.')
            .ok_or_else(|| malformed("no claims part"))?;
        let decode = |part: &str, what: &str| {
            URL_SAFE_NO_PAD
                .decode(part)
                .map_err(|_| malformed(&format!("the {what} is not base64url")))
        };
        let json = |part: &str, what: &str| -> Result<Value, JwtError> {
            serde_json::from_slice(&decode(part, what)?)
                .map_err(|_| malformed(&format!("the {what} is not JSON")))
        };
        Ok(Self {
            header: json(header, "header")?,
            claims: json(claims, "claims")?,
            signing_input,
            signature: decode(signature, "signature")?,
        })
    }

    /// The claims as `T`, once the signature verifies against `key`.
    pub fn verify<T: DeserializeOwned>(&self, key: &PublicKey) -> Result<T, JwtError> {
        let alg = self.header["alg"].as_str().unwrap_or_default();
        if alg != key.jws_algorithm() {
            return Err(JwtError::Algorithm {
                found: alg.to_owned(),
                expected: key.jws_algorithm(),
            });
        }
        if !key.verifies(self.signing_input.as_bytes(), &self.signature) {
            return Err(JwtError::BadSignature);
        }
        serde_json::from_value(self.claims.clone())
            .map_err(|error| JwtError::Malformed(format!("unexpected claims: {error}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use p256::ecdsa::SigningKey;
    use rand_core::OsRng;
    use serde_json::json;

    #[test]
    fn an_es256_token_verifies_with_its_key_and_not_with_another() {
        let key = SigningKey::random(&mut OsRng);
        let token = sign_es256(&key, &json!({"typ": "JWT"}), &json!({"sub": "me"})).unwrap();
        let parsed = Unverified::parse(&token).unwrap();
        assert_eq!(parsed.header["alg"], "ES256");
        let ours = PublicKey::P256(*key.verifying_key());
        let claims: Value = parsed.verify(&ours).unwrap();
        assert_eq!(claims["sub"], "me");

        let other = PublicKey::P256(*SigningKey::random(&mut OsRng).verifying_key());
        assert_eq!(parsed.verify::<Value>(&other), Err(JwtError::BadSignature));
    }

    #[test]
    fn a_token_whose_algorithm_does_not_fit_the_key_is_refused() {
        let key = SigningKey::random(&mut OsRng);
        let token = sign_es256(&key, &json!({}), &json!({})).unwrap();
        let k256 = PublicKey::K256(*k256::ecdsa::SigningKey::random(&mut OsRng).verifying_key());
        let refused = Unverified::parse(&token).unwrap().verify::<Value>(&k256);
        assert!(
            matches!(refused, Err(JwtError::Algorithm { .. })),
            "{refused:?}"
        );
    }

    #[test]
    fn garbage_is_malformed_not_a_panic() {
        for text in ["", "a", "a.b", "a.b.c", "e30.e30.***"] {
            assert!(
                matches!(Unverified::parse(text), Err(JwtError::Malformed(_))),
                "{text}"
            );
        }
    }
}
