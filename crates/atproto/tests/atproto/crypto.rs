//! Keys and signatures against the atproto crypto interop vectors.

use base64::Engine as _;
use swdesk_atproto::did_key::PublicKey;

fn fixture(name: &str) -> serde_json::Value {
    let path = format!(
        "{}/tests/fixtures/interop/crypto/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn base64(text: &str) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD_NO_PAD
        .decode(text.trim_end_matches('='))
        .unwrap()
}

#[test]
fn every_signature_vector_verifies_exactly_when_it_is_valid() {
    let vectors = fixture("signature-fixtures.json");
    for vector in vectors.as_array().unwrap() {
        let message = base64(vector["messageBase64"].as_str().unwrap());
        let signature = base64(vector["signatureBase64"].as_str().unwrap());
        let valid = vector["validSignature"].as_bool().unwrap();
        let by_did = PublicKey::from_did_key(vector["publicKeyDid"].as_str().unwrap()).unwrap();
        let by_document = PublicKey::from_verification_method(
            vector["didDocSuite"].as_str().unwrap(),
            vector["publicKeyMultibase"].as_str().unwrap(),
        )
        .unwrap();
        assert_eq!(by_did, by_document, "{}", vector["comment"]);
        assert_eq!(
            by_did.verifies(&message, &signature),
            valid,
            "{}",
            vector["comment"]
        );
    }
}

#[test]
fn every_did_key_vector_round_trips_on_both_curves() {
    for file in ["w3c_didkey_K256.json", "w3c_didkey_P256.json"] {
        for vector in fixture(file).as_array().unwrap() {
            let did = vector["publicDidKey"].as_str().unwrap();
            let key = PublicKey::from_did_key(did).unwrap();
            assert_eq!(format!("did:key:{}", key.to_multibase()), did);
        }
    }
}
