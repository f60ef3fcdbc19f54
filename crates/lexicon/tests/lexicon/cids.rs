//! Record CIDs and DAG-CBOR bytes against the atproto interop data-model fixtures.

use base64::Engine as _;
use proptest::prelude::*;
use serde_json::{Value, json};
use swdesk_lexicon::data_model;
use swdesk_lexicon::{dag_cbor_bytes, record_cid};

fn fixture(name: &str) -> Vec<Value> {
    let path = format!(
        "{}/tests/fixtures/interop/data-model/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).expect("fixture reads");
    serde_json::from_str(&text).expect("fixture is JSON")
}

fn decode_unpadded(text: &str) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD_NO_PAD
        .decode(text.trim_end_matches('='))
        .expect("fixture base64")
}

#[test]
fn dag_cbor_bytes_and_cids_match_every_interop_fixture() {
    let fixtures = fixture("data-model-fixtures.json");
    assert!(fixtures.len() >= 3);
    for case in fixtures {
        let bytes = dag_cbor_bytes(&case["json"]).expect("fixture encodes");
        let expected = decode_unpadded(case["cbor_base64"].as_str().expect("cbor_base64"));
        assert_eq!(bytes, expected, "bytes of {}", case["json"]);
        let cid = record_cid(&case["json"]).expect("fixture has a CID");
        assert_eq!(cid.to_string(), case["cid"].as_str().expect("cid"));
    }
}

#[test]
fn every_invalid_interop_value_is_refused_by_both_check_and_encoding() {
    for case in fixture("data-model-invalid.json") {
        let note = case["note"].as_str().unwrap_or_default().to_owned();
        assert!(
            !data_model::check_record(&case["json"]).is_empty(),
            "check accepted: {note}"
        );
        assert!(
            record_cid(&case["json"]).is_err(),
            "CID computed for: {note}"
        );
    }
}

#[test]
fn every_valid_interop_value_is_accepted() {
    for case in fixture("data-model-valid.json") {
        assert_eq!(
            data_model::check_record(&case["json"]),
            vec![],
            "{}",
            case["note"]
        );
        assert!(record_cid(&case["json"]).is_ok(), "{}", case["note"]);
    }
}

#[test]
fn an_integral_float_encodes_like_the_integer() {
    let as_float: Value = serde_json::from_str(r#"{"a": 123.0}"#).expect("json");
    assert_eq!(
        dag_cbor_bytes(&as_float).ok(),
        dag_cbor_bytes(&json!({"a": 123})).ok()
    );
}

/// Object entries, in key order.
type Entries = Vec<(String, i64)>;

/// The same entries twice: sorted, and shuffled.
fn shuffled_object() -> impl Strategy<Value = (Entries, Entries)> {
    prop::collection::btree_map("[a-z$]{1,12}", any::<i64>(), 1..12).prop_flat_map(|map| {
        let entries: Entries = map.into_iter().collect();
        let shuffled = Just(entries.clone()).prop_shuffle();
        (Just(entries), shuffled)
    })
}

fn object_of(entries: Entries) -> Value {
    Value::Object(
        entries
            .into_iter()
            .map(|(k, v)| (k, Value::from(v)))
            .collect(),
    )
}

proptest! {
    #[test]
    fn the_cid_does_not_depend_on_key_order((entries, shuffled) in shuffled_object()) {
        let a = record_cid(&object_of(entries)).map(|c| c.to_string()).ok();
        let b = record_cid(&object_of(shuffled)).map(|c| c.to_string()).ok();
        prop_assert!(a.is_some());
        prop_assert_eq!(a, b);
    }

    #[test]
    fn different_values_have_different_cids(a in any::<i64>(), b in any::<i64>()) {
        prop_assume!(a != b);
        let cid_a = record_cid(&json!({"n": a})).map(|c| c.to_string()).ok();
        let cid_b = record_cid(&json!({"n": b})).map(|c| c.to_string()).ok();
        prop_assert_ne!(cid_a, cid_b);
    }
}
