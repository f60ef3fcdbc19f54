//! Attestation CIDs (`network.attested.*`, the badge.blue CID-first scheme the compute market
//! signs its records with): what an inline signature signs, and what a remote proof binds.
//!
//! The attestation CID of a record is the record CID (DAG-CBOR, sha-256, CIDv1) of:
//! the record without `signatures`, with `"$sig"` = the attestation's metadata without `cid`,
//! `signature` and `signatures`, plus `"repository"` = the DID of the repo that holds the record.
//! For an inline signature the metadata is the `signatures` entry itself (with its `$type`); for
//! a remote proof (a `market.receipt`, a `network.attested.proof`) it is the proof record.
//!
//! Invariants: attaching signatures never changes the CID (they are stripped first); the same
//! record in another repo has another CID (the repository is inside); everything else in the
//! record and the metadata, unknown fields included, is covered.

use serde_json::{Map, Value};

use crate::cid::{Cid, CidError, record_cid};

/// The field of a record that holds its attestations.
pub const SIGNATURES_FIELD: &str = "signatures";
/// The field the metadata is inserted under.
pub const SIG_FIELD: &str = "$sig";

/// Why an attestation CID could not be computed.
#[derive(Debug, thiserror::Error)]
pub enum AttestationError {
    /// The record or the metadata is not a JSON object.
    #[error("the {0} of an attestation must be a JSON object")]
    NotAnObject(&'static str),
    /// The record already holds a `$sig` field.
    #[error("the record already has a `$sig` field, which attestation reserves")]
    SigFieldTaken,
    /// The prepared record is not atproto data.
    #[error(transparent)]
    Cid(#[from] CidError),
}

/// The attestation CID of `record` in `repository`'s repo, under `metadata`.
pub fn attestation_cid(
    record: &Value,
    metadata: &Value,
    repository: &str,
) -> Result<Cid, AttestationError> {
    record_cid(&prepared(record, metadata, repository)?).map_err(AttestationError::from)
}

/// The value whose CID is the attestation CID (for inspection and tests).
pub fn prepared(
    record: &Value,
    metadata: &Value,
    repository: &str,
) -> Result<Value, AttestationError> {
    let Value::Object(record) = record else {
        return Err(AttestationError::NotAnObject("record"));
    };
    let Value::Object(metadata) = metadata else {
        return Err(AttestationError::NotAnObject("metadata"));
    };
    if record.contains_key(SIG_FIELD) {
        return Err(AttestationError::SigFieldTaken);
    }
    let mut prepared: Map<String, Value> = record
        .iter()
        .filter(|(key, _)| key.as_str() != SIGNATURES_FIELD)
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    let mut sig: Map<String, Value> = metadata
        .iter()
        .filter(|(key, _)| !matches!(key.as_str(), "cid" | "signature" | SIGNATURES_FIELD))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    sig.insert(
        "repository".to_owned(),
        Value::String(repository.to_owned()),
    );
    prepared.insert(SIG_FIELD.to_owned(), Value::Object(sig));
    Ok(Value::Object(prepared))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry() -> Value {
        json!({"$type": "network.attested.signature", "key": "did:key:zQ3sh", "issuedAt": "2026-12-03T10:00:00.000Z"})
    }

    #[test]
    fn signatures_are_stripped_and_the_metadata_goes_under_sig_with_the_repository() {
        let record = json!({"$type": "com.example.note", "text": "hi", "signatures": [entry()]});
        let mut metadata = entry();
        metadata["cid"] = json!("bafy");
        metadata["signature"] = json!({"$bytes": "AAAA"});
        let prepared = prepared(&record, &metadata, "did:plc:repo").expect("prepares");
        assert_eq!(
            prepared,
            json!({"$type": "com.example.note", "text": "hi", "$sig": {
                "$type": "network.attested.signature", "key": "did:key:zQ3sh",
                "issuedAt": "2026-12-03T10:00:00.000Z", "repository": "did:plc:repo"}})
        );
    }

    #[test]
    fn attaching_signatures_keeps_the_cid_and_another_repo_changes_it() {
        let bare = json!({"$type": "com.example.note", "text": "hi"});
        let mut signed = bare.clone();
        signed["signatures"] =
            json!([{"$type": "com.atproto.repo.strongRef", "uri": "at://x", "cid": "y"}]);
        let cid = |record: &Value, repo: &str| {
            attestation_cid(record, &entry(), repo)
                .map(|cid| cid.to_string())
                .ok()
        };
        assert_eq!(cid(&bare, "did:plc:a"), cid(&signed, "did:plc:a"));
        assert_ne!(cid(&bare, "did:plc:a"), cid(&bare, "did:plc:b"));
        let mut changed = bare.clone();
        changed["text"] = json!("ho");
        assert_ne!(cid(&bare, "did:plc:a"), cid(&changed, "did:plc:a"));
    }

    #[test]
    fn a_record_that_already_has_sig_or_is_not_an_object_is_refused() {
        let taken = json!({"$sig": {}});
        assert!(matches!(
            attestation_cid(&taken, &entry(), "did:plc:a"),
            Err(AttestationError::SigFieldTaken)
        ));
        assert!(matches!(
            attestation_cid(&json!([]), &entry(), "did:plc:a"),
            Err(AttestationError::NotAnObject("record"))
        ));
        assert!(matches!(
            attestation_cid(&json!({}), &json!("x"), "did:plc:a"),
            Err(AttestationError::NotAnObject("metadata"))
        ));
    }
}
