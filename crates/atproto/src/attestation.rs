//! Inline attestation signatures (`network.attested.signature`) on the market records the
//! owner writes, and their verification on the records bidders write.
//!
//! Signing a record in repo `repository`: the entry `{$type, key, issuedAt}` is the `$sig`
//! metadata, [`swdesk_lexicon::attestation::attestation_cid`] gives the CID, the key signs the
//! CID's bytes (ECDSA with SHA-256, low-S, `r || s`), and the entry with `cid` and `signature`
//! is appended to the record's `signatures`. Verifying recomputes the CID from the record and
//! the entry and checks both the entry's `cid` and its signature against its `did:key`.
//!
//! Invariants: the private key leaves [`AttestationKey`] only as [`AttestationKey::to_secret_bytes`]
//! (for the keychain); `Debug` shows its `did:key` only; every signature made is low-S, and a
//! high-S one is refused on verification (atproto's rule).

use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD_NO_PAD;
use k256::ecdsa::signature::Signer as _;
use rand_core::OsRng;
use serde_json::{Map, Value, json};
use swdesk_lexicon::attestation::{AttestationError, SIGNATURES_FIELD, attestation_cid};

use crate::did_key::PublicKey;

/// `$type` of an inline signature entry.
pub const INLINE_SIGNATURE_TYPE: &str = "network.attested.signature";

/// The curve of an attestation key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Curve {
    /// NIST P-256.
    P256,
    /// secp256k1.
    K256,
}

/// A private key that signs attestations.
#[derive(Clone)]
pub enum AttestationKey {
    /// On P-256.
    P256(p256::ecdsa::SigningKey),
    /// On secp256k1.
    K256(k256::ecdsa::SigningKey),
}

impl fmt::Debug for AttestationKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AttestationKey({})", self.did_key())
    }
}

impl AttestationKey {
    /// A fresh random key on `curve`.
    pub fn generate(curve: Curve) -> Self {
        match curve {
            Curve::P256 => Self::P256(p256::ecdsa::SigningKey::random(&mut OsRng)),
            Curve::K256 => Self::K256(k256::ecdsa::SigningKey::random(&mut OsRng)),
        }
    }

    /// The key from its 32 secret bytes.
    pub fn from_secret_bytes(curve: Curve, bytes: &[u8]) -> Option<Self> {
        match curve {
            Curve::P256 => p256::ecdsa::SigningKey::from_slice(bytes)
                .ok()
                .map(Self::P256),
            Curve::K256 => k256::ecdsa::SigningKey::from_slice(bytes)
                .ok()
                .map(Self::K256),
        }
    }

    /// The 32 secret bytes, for the keychain only.
    pub fn to_secret_bytes(&self) -> Vec<u8> {
        match self {
            Self::P256(key) => key.to_bytes().to_vec(),
            Self::K256(key) => key.to_bytes().to_vec(),
        }
    }

    /// The public half.
    pub fn public_key(&self) -> PublicKey {
        match self {
            Self::P256(key) => PublicKey::P256(*key.verifying_key()),
            Self::K256(key) => PublicKey::K256(*key.verifying_key()),
        }
    }

    /// The `did:key` of the public half, as entries name it.
    pub fn did_key(&self) -> String {
        format!("did:key:{}", self.public_key().to_multibase())
    }

    /// A low-S signature (`r || s`, 64 bytes) over `message` (SHA-256 inside).
    pub fn sign(&self, message: &[u8]) -> Vec<u8> {
        match self {
            Self::P256(key) => {
                let signature: p256::ecdsa::Signature = key.sign(message);
                signature.normalize_s().unwrap_or(signature).to_vec()
            }
            Self::K256(key) => {
                let signature: k256::ecdsa::Signature = key.sign(message);
                signature.normalize_s().unwrap_or(signature).to_vec()
            }
        }
    }
}

/// `record` (a JSON object, with its `$type`) with an inline signature by `key` appended, as
/// the record of `repository`'s repo, signed at `issued_at` (an atproto datetime), naming no
/// issuer.
pub fn sign_record(
    record: &Value,
    key: &AttestationKey,
    repository: &str,
    issued_at: &str,
) -> Result<Value, AttestationError> {
    sign_record_as(record, key, repository, issued_at, None)
}

/// [`sign_record`] naming `issuer` (a DID whose document lists `key`) in the signature: the
/// entry's `issuer` is part of what is signed, as the public implementation's `Attestation`
/// signs it, and tells a strict verifier in whose DID document to look for the key.
pub fn sign_record_as(
    record: &Value,
    key: &AttestationKey,
    repository: &str,
    issued_at: &str,
    issuer: Option<&str>,
) -> Result<Value, AttestationError> {
    let mut entry = json!({
        "$type": INLINE_SIGNATURE_TYPE,
        "key": key.did_key(),
        "issuedAt": issued_at,
    });
    if let Some(issuer) = issuer {
        entry["issuer"] = Value::String(issuer.to_owned());
    }
    let cid = attestation_cid(record, &entry, repository)?;
    entry["cid"] = Value::String(cid.to_string());
    entry["signature"] = json!({"$bytes": STANDARD_NO_PAD.encode(key.sign(&cid.to_bytes()))});
    let Value::Object(mut signed) = record.clone() else {
        return Err(AttestationError::NotAnObject("record"));
    };
    let mut signatures = match signed.remove(SIGNATURES_FIELD) {
        Some(Value::Array(items)) => items,
        _ => Vec::new(),
    };
    signatures.push(entry);
    signed.insert(SIGNATURES_FIELD.to_owned(), Value::Array(signatures));
    Ok(Value::Object(signed))
}

/// Why one inline signature does not verify.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignatureProblem {
    /// `key` is not a `did:key` of an atproto curve.
    #[error("its key is not an atproto did:key: {0}")]
    Key(String),
    /// The attestation CID could not be computed.
    #[error("the attestation CID cannot be computed: {0}")]
    Cid(String),
    /// `cid` is not the attestation CID of this record in this repo.
    #[error("its cid {found} is not the record's attestation CID {expected} in this repo")]
    CidMismatch {
        /// What the record and repo give.
        expected: String,
        /// What the entry says.
        found: String,
    },
    /// `signature` is missing or not `{"$bytes": ...}`.
    #[error("its signature is missing or not bytes")]
    NoSignature,
    /// The signature does not verify (or is high-S).
    #[error("its signature does not verify against its key")]
    BadSignature,
}

/// The check of one inline signature of a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignatureCheck {
    /// Its position in `signatures`.
    pub index: usize,
    /// The `did:key` it names.
    pub key: String,
    /// The DID it says signed (`issuer`), when it names one: the public market's binding, in
    /// whose DID document the key is to be found.
    pub issuer: Option<String>,
    /// Whether it verifies.
    pub result: Result<(), SignatureProblem>,
}

/// A check of every inline signature of `record` as a record of `repository`'s repo; remote
/// proofs (strong refs) and entries of other types are skipped.
pub fn verify_inline_signatures(record: &Value, repository: &str) -> Vec<SignatureCheck> {
    let entries = record
        .get(SIGNATURES_FIELD)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    entries
        .iter()
        .enumerate()
        .filter_map(|(index, entry)| {
            let entry = entry.as_object()?;
            (entry.get("$type")?.as_str()? == INLINE_SIGNATURE_TYPE).then(|| SignatureCheck {
                index,
                key: text(entry, "key").to_owned(),
                issuer: entry
                    .get("issuer")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                result: verify_entry(record, entry, repository),
            })
        })
        .collect()
}

/// The keys of `record`'s inline signatures when it carries some and every one verifies as a
/// record of `repository`'s repo; `None` otherwise.
pub fn verified_keys(record: &Value, repository: &str) -> Option<Vec<String>> {
    verified_signers(record, repository)
        .map(|checks| checks.into_iter().map(|check| check.key).collect())
}

/// The checks of `record`'s inline signatures (each with its key and issuer) when it carries
/// some and every one verifies as a record of `repository`'s repo; `None` otherwise. A
/// verified signature says only that its key signed: whether the key counts for the author is
/// `swdesk_auction::trust::bind`'s to say.
pub fn verified_signers(record: &Value, repository: &str) -> Option<Vec<SignatureCheck>> {
    let checks = verify_inline_signatures(record, repository);
    let verified = !checks.is_empty() && checks.iter().all(|check| check.result.is_ok());
    verified.then_some(checks)
}

/// Whether `record` carries an inline signature by `did_key` that verifies in `repository`.
pub fn is_signed_by(record: &Value, repository: &str, did_key: &str) -> bool {
    verify_inline_signatures(record, repository)
        .iter()
        .any(|check| check.key == did_key && check.result.is_ok())
}

fn verify_entry(
    record: &Value,
    entry: &Map<String, Value>,
    repository: &str,
) -> Result<(), SignatureProblem> {
    let key = PublicKey::from_did_key(text(entry, "key"))
        .map_err(|error| SignatureProblem::Key(error.to_string()))?;
    let metadata = Value::Object(entry.clone());
    let cid = attestation_cid(record, &metadata, repository)
        .map_err(|error| SignatureProblem::Cid(error.to_string()))?;
    let found = text(entry, "cid");
    if found != cid.to_string() {
        return Err(SignatureProblem::CidMismatch {
            expected: cid.to_string(),
            found: found.to_owned(),
        });
    }
    let signature = signature_bytes(entry).ok_or(SignatureProblem::NoSignature)?;
    if key.verifies(&cid.to_bytes(), &signature) {
        Ok(())
    } else {
        Err(SignatureProblem::BadSignature)
    }
}

fn text<'e>(entry: &'e Map<String, Value>, field: &str) -> &'e str {
    entry.get(field).and_then(Value::as_str).unwrap_or_default()
}

fn signature_bytes(entry: &Map<String, Value>) -> Option<Vec<u8>> {
    let encoded = entry.get("signature")?.get("$bytes")?.as_str()?;
    STANDARD_NO_PAD.decode(encoded.trim_end_matches('=')).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPO: &str = "did:plc:ewvi7nxzyoun6zhxrhs64oiz";

    fn rfp() -> Value {
        json!({
            "$type": "com.publicdomainrelay.temp.market.rfp",
            "payload": {
                "uri": "at://did:plc:ewvi7nxzyoun6zhxrhs64oiz/com.publicdomainrelay.temp.compute.vm/3lbjpbyznfc2a",
                "cid": "bafyreiclp443lavogvhj3d2ob2cxbfuscni2k5jk7bebjzg7khl3esabwq"
            },
            "signatures": []
        })
    }

    #[test]
    fn a_signed_record_verifies_on_both_curves_and_validates_against_its_lexicon() {
        for curve in [Curve::P256, Curve::K256] {
            let key = AttestationKey::generate(curve);
            let signed =
                sign_record(&rfp(), &key, REPO, "2026-12-03T10:00:00.000Z").expect("signs");
            let checks = verify_inline_signatures(&signed, REPO);
            assert_eq!(checks.len(), 1);
            assert_eq!(checks[0].result, Ok(()), "{curve:?}");
            assert!(is_signed_by(&signed, REPO, &key.did_key()));
            let problems = swdesk_lexicon::validate::validate_record(
                "com.publicdomainrelay.temp.market.rfp",
                &signed,
            );
            assert_eq!(problems, vec![], "{curve:?}");
        }
    }

    #[test]
    fn a_signature_naming_its_issuer_verifies_and_the_issuer_is_part_of_what_is_signed() {
        let key = AttestationKey::generate(Curve::P256);
        let at = "2026-12-03T10:00:00.000Z";
        let signed = sign_record_as(&rfp(), &key, REPO, at, Some(REPO)).expect("signs");
        let checks = verify_inline_signatures(&signed, REPO);
        assert_eq!(checks[0].issuer.as_deref(), Some(REPO));
        assert_eq!(checks[0].result, Ok(()));
        let problems = swdesk_lexicon::validate::validate_record(
            "com.publicdomainrelay.temp.market.rfp",
            &signed,
        );
        assert_eq!(problems, vec![]);
        let mut renamed = signed.clone();
        renamed["signatures"][0]["issuer"] = json!("did:web:stranger.example.com");
        let checks = verify_inline_signatures(&renamed, REPO);
        assert!(matches!(
            checks[0].result,
            Err(SignatureProblem::CidMismatch { .. })
        ));
        let plain = sign_record(&rfp(), &key, REPO, at).expect("signs");
        assert_eq!(verify_inline_signatures(&plain, REPO)[0].issuer, None);
    }

    #[test]
    fn a_signed_record_copied_to_another_repo_or_changed_does_not_verify() {
        let key = AttestationKey::generate(Curve::P256);
        let signed = sign_record(&rfp(), &key, REPO, "2026-12-03T10:00:00.000Z").expect("signs");
        let copied = verify_inline_signatures(&signed, "did:plc:copycat");
        assert!(matches!(
            copied[0].result,
            Err(SignatureProblem::CidMismatch { .. })
        ));
        let mut changed = signed.clone();
        changed["submitBid"] = json!("did:web:evil.example.com#temp_market");
        assert!(!is_signed_by(&changed, REPO, &key.did_key()));
    }

    #[test]
    fn a_forged_signature_with_the_right_cid_does_not_verify() {
        let key = AttestationKey::generate(Curve::K256);
        let other = AttestationKey::generate(Curve::K256);
        let mut signed =
            sign_record(&rfp(), &key, REPO, "2026-12-03T10:00:00.000Z").expect("signs");
        let cid = signed["signatures"][0]["cid"]
            .as_str()
            .expect("cid")
            .to_owned();
        let parsed: swdesk_lexicon::cid::Cid = cid.parse().expect("a cid");
        let forged = STANDARD_NO_PAD.encode(other.sign(&parsed.to_bytes()));
        signed["signatures"][0]["signature"] = json!({"$bytes": forged});
        let checks = verify_inline_signatures(&signed, REPO);
        assert_eq!(checks[0].result, Err(SignatureProblem::BadSignature));
    }

    #[test]
    fn a_second_signature_is_appended_and_both_verify() {
        let first = AttestationKey::generate(Curve::P256);
        let second = AttestationKey::generate(Curve::K256);
        let once = sign_record(&rfp(), &first, REPO, "2026-12-03T10:00:00.000Z").expect("signs");
        let twice = sign_record(&once, &second, REPO, "2026-12-03T10:00:01.000Z").expect("signs");
        let checks = verify_inline_signatures(&twice, REPO);
        assert_eq!(checks.len(), 2);
        assert!(checks.iter().all(|check| check.result.is_ok()));
    }

    #[test]
    fn debug_shows_the_did_key_never_the_secret() {
        let key = AttestationKey::generate(Curve::P256);
        let debug = format!("{key:?}");
        assert_eq!(debug, format!("AttestationKey({})", key.did_key()));
        let secret = STANDARD_NO_PAD.encode(key.to_secret_bytes());
        assert!(!debug.contains(&secret));
        let back = AttestationKey::from_secret_bytes(Curve::P256, &key.to_secret_bytes());
        assert_eq!(back.map(|k| k.did_key()), Some(key.did_key()));
    }
}
