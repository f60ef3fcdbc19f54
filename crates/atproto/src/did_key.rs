//! Public keys as atproto publishes them: a `did:key:z…` or a DID document's
//! `publicKeyMultibase` (`z` + base58btc of a multicodec prefix and a compressed point), for the
//! two curves atproto uses: P-256 (`0x1200`) and secp256k1 (`0xe7`).
//!
//! Older DID documents (the `EcdsaSecp256k1VerificationKey2019` and
//! `EcdsaSecp256r1VerificationKey2019` suites, still served by some PLC directories) carry the
//! bare point without a multicodec prefix, compressed or not: [`PublicKey::from_verification_method`]
//! reads both forms by the method's type.
//!
//! Invariants: a `Multikey` is a compressed 33-byte point; a high-S signature is refused
//! (atproto requires low-S signatures on both curves).

use std::fmt;

/// Multicodec `p256-pub` as a varint.
const P256_PREFIX: [u8; 2] = [0x80, 0x24];
/// Multicodec `secp256k1-pub` as a varint.
const K256_PREFIX: [u8; 2] = [0xe7, 0x01];

/// A verifying key on one of the atproto curves.
#[derive(Clone, PartialEq, Eq)]
pub enum PublicKey {
    /// NIST P-256 (`ES256`).
    P256(p256::ecdsa::VerifyingKey),
    /// secp256k1 (`ES256K`).
    K256(k256::ecdsa::VerifyingKey),
}

impl fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PublicKey({})", self.to_multibase())
    }
}

/// Why a key text was not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{text:?} is not an atproto public key: {reason}")]
pub struct KeyError {
    /// The text given.
    pub text: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

impl PublicKey {
    /// Reads a `publicKeyMultibase` value (`z…`).
    pub fn from_multibase(text: &str) -> Result<Self, KeyError> {
        let error = |reason| KeyError {
            text: text.to_owned(),
            reason,
        };
        let encoded = text
            .strip_prefix('z')
            .ok_or_else(|| error("it is not base58btc multibase (no leading z)"))?;
        let bytes = bs58::decode(encoded)
            .into_vec()
            .map_err(|_| error("it is not base58btc"))?;
        let (prefix, point) = bytes.split_at(bytes.len().min(2));
        let key = match prefix {
            p if p == P256_PREFIX => {
                p256::ecdsa::VerifyingKey::from_sec1_bytes(point).map(Self::P256)
            }
            p if p == K256_PREFIX => {
                k256::ecdsa::VerifyingKey::from_sec1_bytes(point).map(Self::K256)
            }
            _ => {
                return Err(error(
                    "its multicodec is neither p256-pub nor secp256k1-pub",
                ));
            }
        };
        if point.len() != 33 {
            return Err(error("it is not a compressed point"));
        }
        key.map_err(|_| error("it is not a point on its curve"))
    }

    /// Reads a DID document's key by its verification method type.
    pub fn from_verification_method(kind: &str, multibase: &str) -> Result<Self, KeyError> {
        let error = |reason| KeyError {
            text: multibase.to_owned(),
            reason,
        };
        let bare = || {
            let encoded = multibase
                .strip_prefix('z')
                .ok_or_else(|| error("it is not base58btc multibase (no leading z)"))?;
            bs58::decode(encoded)
                .into_vec()
                .map_err(|_| error("it is not base58btc"))
        };
        match kind {
            "Multikey" => Self::from_multibase(multibase),
            "EcdsaSecp256k1VerificationKey2019" => {
                k256::ecdsa::VerifyingKey::from_sec1_bytes(&bare()?)
                    .map(Self::K256)
                    .map_err(|_| error("it is not a secp256k1 point"))
            }
            "EcdsaSecp256r1VerificationKey2019" => {
                p256::ecdsa::VerifyingKey::from_sec1_bytes(&bare()?)
                    .map(Self::P256)
                    .map_err(|_| error("it is not a P-256 point"))
            }
            _ => Err(error(
                "its verification method type is not an atproto key type",
            )),
        }
    }

    /// Reads a `did:key:z…`.
    pub fn from_did_key(text: &str) -> Result<Self, KeyError> {
        let multibase = text.strip_prefix("did:key:").ok_or(KeyError {
            text: text.to_owned(),
            reason: "it does not start with did:key:",
        })?;
        Self::from_multibase(multibase)
    }

    /// The key as `publicKeyMultibase`.
    pub fn to_multibase(&self) -> String {
        let (prefix, point) = match self {
            Self::P256(key) => (P256_PREFIX, key.to_encoded_point(true).as_bytes().to_vec()),
            Self::K256(key) => (K256_PREFIX, key.to_encoded_point(true).as_bytes().to_vec()),
        };
        let bytes: Vec<u8> = prefix.iter().copied().chain(point).collect();
        format!("z{}", bs58::encode(bytes).into_string())
    }

    /// The JWS `alg` a signature by this key carries.
    pub fn jws_algorithm(&self) -> &'static str {
        match self {
            Self::P256(_) => "ES256",
            Self::K256(_) => "ES256K",
        }
    }

    /// Whether `signature` (64 bytes, `r || s`, low-S) signs `message` (SHA-256 inside).
    pub fn verifies(&self, message: &[u8], signature: &[u8]) -> bool {
        use k256::ecdsa::signature::Verifier as _;
        match self {
            Self::P256(key) => p256::ecdsa::Signature::from_slice(signature)
                .is_ok_and(|sig| sig.normalize_s().is_none() && key.verify(message, &sig).is_ok()),
            Self::K256(key) => k256::ecdsa::Signature::from_slice(signature)
                .is_ok_and(|sig| sig.normalize_s().is_none() && key.verify(message, &sig).is_ok()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_atproto_interop_did_keys_are_read_on_both_curves() {
        // From the atproto crypto interop vectors (`did:key` examples of both curves).
        let k256 = "did:key:zQ3shqwJEJyMBsBXCWyCBpUBMqxcon9oHB7mCvx4sSpMdLJwc";
        let p256 = "did:key:zDnaembgSGUhZULN2Caob4HLJPaxBh92N7rtH21TErzqf8HQo";
        assert!(matches!(
            PublicKey::from_did_key(k256),
            Ok(PublicKey::K256(_))
        ));
        assert!(matches!(
            PublicKey::from_did_key(p256),
            Ok(PublicKey::P256(_))
        ));
        let back = PublicKey::from_did_key(k256).unwrap().to_multibase();
        assert_eq!(format!("did:key:{back}"), k256);
    }

    #[test]
    fn keys_that_are_not_atproto_keys_say_why() {
        let cases = [
            ("did:web:example.com", "it does not start with did:key:"),
            (
                "did:key:abc",
                "it is not base58btc multibase (no leading z)",
            ),
            ("did:key:z0OIl", "it is not base58btc"),
            (
                "did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK",
                "its multicodec is neither p256-pub nor secp256k1-pub",
            ),
        ];
        for (text, reason) in cases {
            assert_eq!(
                PublicKey::from_did_key(text).unwrap_err().reason,
                reason,
                "{text}"
            );
        }
    }
}
