//! Record proofs read offline from real answers: `fuzz/seeds/record_proof/` holds two CAR files
//! the sandbox PDS served for `com.atproto.sync.getRecord` (a record, and a key with no record),
//! the seeds of the `record_proof` fuzz target. They prove what they prove with the account's
//! key and nothing with another, so the fuzz target starts from proofs that hold.

use swdesk_atproto::did_key::PublicKey;
use swdesk_atproto::proof::{ProofError, verify_record};

const DID: &str = "did:plc:d3jtwrqe2mgqz2ag2lam6gyq";
const KEY: &str =
    "zMtFKdKm9KWAEe9dniKLyLpTtdme9QohWEXukA6SAKLAWwLVMk9NPGypQQv9dTUnGDUTo8PrZEqy16a9x1avY6PW4";
const INFRA: &str = "computer.socialweb.infra";

fn seed(name: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/seeds/record_proof")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

fn key() -> PublicKey {
    PublicKey::from_verification_method("EcdsaSecp256k1VerificationKey2019", KEY)
        .expect("the account's key")
}

#[test]
fn the_seed_proofs_hold_with_the_account_s_key_and_not_with_another() {
    let proven = verify_record(&seed("proven.car"), DID, &key(), INFRA, "proven")
        .expect("the proof holds")
        .expect("it proves a record");
    assert_eq!(proven.value["description"], "proven");
    assert_eq!(
        proven.cid,
        swdesk_lexicon::cid::cid_of_dag_cbor(
            &swdesk_lexicon::cid::dag_cbor_bytes(&proven.value).unwrap()
        ),
        "a canonical record's value encodes back to its cid"
    );
    let absent = verify_record(&seed("absent.car"), DID, &key(), INFRA, "absent");
    assert_eq!(absent, Ok(None), "the tree shows there is no such record");
    let stranger =
        PublicKey::from_did_key("did:key:zQ3shqwJEJyMBsBXCWyCBpUBMqxcon9oHB7mCvx4sSpMdLJwc")
            .unwrap();
    assert_eq!(
        verify_record(&seed("proven.car"), DID, &stranger, INFRA, "proven"),
        Err(ProofError::Signature(DID.to_owned()))
    );
}
