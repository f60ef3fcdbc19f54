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

fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn an_attestation_key_from_each_did_key_vector_publishes_that_did_key() {
    use swdesk_atproto::attestation::{AttestationKey, Curve};
    let cases = [
        ("w3c_didkey_K256.json", Curve::K256),
        ("w3c_didkey_P256.json", Curve::P256),
    ];
    for (file, curve) in cases {
        for vector in fixture(file).as_array().unwrap() {
            let secret = match (
                &vector["privateKeyBytesHex"],
                &vector["privateKeyBytesBase58"],
            ) {
                (serde_json::Value::String(text), _) => hex(text),
                (_, serde_json::Value::String(text)) => bs58::decode(text).into_vec().unwrap(),
                _ => panic!("a vector without a private key: {vector}"),
            };
            let key = AttestationKey::from_secret_bytes(curve, &secret).unwrap();
            assert_eq!(
                key.did_key(),
                vector["publicDidKey"].as_str().unwrap(),
                "{file}"
            );
        }
    }
}

#[test]
fn an_attestation_signed_with_a_vector_key_verifies_and_its_signature_is_low_s() {
    use swdesk_atproto::attestation::{
        AttestationKey, Curve, sign_record, verify_inline_signatures,
    };
    let vector = &fixture("w3c_didkey_K256.json")[0];
    let key = AttestationKey::from_secret_bytes(
        Curve::K256,
        &hex(vector["privateKeyBytesHex"].as_str().unwrap()),
    )
    .unwrap();
    let record = serde_json::json!({"$type": "com.publicdomainrelay.temp.market.event",
        "receipt": {"uri": "at://did:web:b.example.com/com.publicdomainrelay.temp.market.receipt/3lbjpbyznfc2h",
                    "cid": "bafyreiclp443lavogvhj3d2ob2cxbfuscni2k5jk7bebjzg7khl3esabwq"},
        "payload": {"uri": "at://did:plc:ewvi7nxzyoun6zhxrhs64oiz/com.publicdomainrelay.temp.compute.events.vm.delete/3lbjpbyznfc2i",
                    "cid": "bafyreid3imdulnhgeytpf6uk7zahjvrsqlofkmm5b5ub2maw4kqus6jp4i"}});
    let repo = "did:plc:ewvi7nxzyoun6zhxrhs64oiz";
    let signed = sign_record(&record, &key, repo, "2026-12-03T11:00:00.000Z").unwrap();
    let checks = verify_inline_signatures(&signed, repo);
    assert_eq!(checks.len(), 1);
    assert_eq!(checks[0].result, Ok(()));
    assert_eq!(checks[0].key, vector["publicDidKey"].as_str().unwrap());
    let bytes = base64(
        signed["signatures"][0]["signature"]["$bytes"]
            .as_str()
            .unwrap(),
    );
    let signature = k256::ecdsa::Signature::from_slice(&bytes).unwrap();
    assert!(signature.normalize_s().is_none(), "low-S");
}
