//! `record_proof`: a `com.atproto.sync.getRecord` answer (a CAR file) as a peer's PDS sends it,
//! checked by `swdesk_atproto::proof::verify_record` for the seed account's repo and signing key
//! (the seeds are real proofs from the sandbox PDS: one of a record, one of an absence).
//!
//! Invariants:
//! - it never panics, hangs or allocates beyond the cap, whatever the bytes;
//! - a proof that holds names a record whose value is a data-model value that encodes again
//!   (so a proven record can always be shown and re-checked);
//! - the seed's commit verifies only with the seed account's key: with another key the same
//!   bytes are refused.

use swdesk_atproto::did_key::PublicKey;
use swdesk_atproto::proof::{ProofError, verify_record};

/// The seed account's DID.
pub const DID: &str = "did:plc:d3jtwrqe2mgqz2ag2lam6gyq";
/// Its repo signing key, as its DID document lists it (an `EcdsaSecp256k1VerificationKey2019`).
pub const KEY: &str =
    "zMtFKdKm9KWAEe9dniKLyLpTtdme9QohWEXukA6SAKLAWwLVMk9NPGypQQv9dTUnGDUTo8PrZEqy16a9x1avY6PW4";
const COLLECTION: &str = "computer.socialweb.infra";

pub fn check(data: &[u8]) {
    let Ok(key) = PublicKey::from_verification_method("EcdsaSecp256k1VerificationKey2019", KEY)
    else {
        unreachable!("the seed key reads")
    };
    for rkey in ["proven", "absent"] {
        match verify_record(data, DID, &key, COLLECTION, rkey) {
            Ok(Some(proven)) => {
                assert!(
                    swdesk_lexicon::cid::dag_cbor_bytes(&proven.value).is_ok(),
                    "a proven value encodes again"
                );
                let other = PublicKey::K256(*crate::jwt::k256_key().verifying_key());
                let refused = verify_record(data, DID, &other, COLLECTION, rkey);
                assert!(
                    matches!(refused, Err(ProofError::Signature(_))),
                    "another key does not verify the commit: {refused:?}"
                );
            }
            Ok(None) | Err(_) => {}
        }
    }
}
