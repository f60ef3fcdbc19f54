//! Record CIDs computed locally: JSON data model -> IPLD -> DAG-CBOR -> sha-256 -> CIDv1
//! (codec dag-cbor `0x71`), printed in base32 (`bafyrei...`), exactly as a PDS computes them.
//!
//! Invariants: DAG-CBOR bytes are canonical (map keys sorted by length, then bytewise; shortest
//! integer forms), so a value's bytes and CID do not depend on the order of its JSON keys; a
//! value that breaks the data model (a float, a malformed `$link`/`$bytes`/blob, an empty
//! `$type`) has no bytes and no CID.

pub use ::cid::Cid;
use ipld_core::ipld::Ipld;
use multihash::Multihash;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::data_model::{self, DataModelError, DataModelErrorKind};

/// Multicodec code of DAG-CBOR.
pub const DAG_CBOR_CODEC: u64 = 0x71;
/// Multihash code of sha2-256.
pub const SHA2_256_CODE: u64 = 0x12;

/// Why a value has no CID.
#[derive(Debug, thiserror::Error)]
pub enum CidError {
    /// The value breaks the atproto data model.
    #[error("not atproto data: {0}")]
    DataModel(#[from] DataModelError),
    /// The DAG-CBOR encoder failed (it does not for a valid IPLD value).
    #[error("DAG-CBOR encoding failed: {0}")]
    Encode(String),
}

/// The canonical DAG-CBOR bytes of any data-model value.
pub fn dag_cbor_bytes(value: &Value) -> Result<Vec<u8>, CidError> {
    ipld_dag_cbor_bytes(&data_model::to_ipld(value)?)
}

/// The canonical DAG-CBOR bytes of an IPLD value.
pub fn ipld_dag_cbor_bytes(ipld: &Ipld) -> Result<Vec<u8>, CidError> {
    serde_ipld_dagcbor::to_vec(ipld).map_err(|error| CidError::Encode(error.to_string()))
}

/// The CID of a record value (a JSON object, with its `$type`).
pub fn record_cid(value: &Value) -> Result<Cid, CidError> {
    if !value.is_object() {
        return Err(CidError::DataModel(DataModelError {
            path: String::new(),
            kind: DataModelErrorKind::NotAnObject,
        }));
    }
    Ok(cid_of_dag_cbor(&dag_cbor_bytes(value)?))
}

/// The CIDv1 (dag-cbor, sha2-256) of DAG-CBOR bytes.
pub fn cid_of_dag_cbor(bytes: &[u8]) -> Cid {
    let digest = Sha256::digest(bytes);
    // A 32-byte digest always fits the 64-byte multihash.
    let hash = Multihash::<64>::wrap(SHA2_256_CODE, &digest).unwrap_or_default();
    Cid::new_v1(DAG_CBOR_CODEC, hash)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_cid_of_a_record_is_base32_dag_cbor_sha256() {
        let cid = record_cid(&json!({"a": 1})).map(|cid| cid.to_string());
        let text = cid.unwrap_or_default();
        assert!(text.starts_with("bafyrei"), "{text}");
    }

    #[test]
    fn a_record_must_be_an_object() {
        assert!(record_cid(&json!([1])).is_err());
        assert!(dag_cbor_bytes(&json!([1])).is_ok());
    }
}
