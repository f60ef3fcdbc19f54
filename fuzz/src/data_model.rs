//! `data_model`: any JSON value through the atproto data model of `swdesk_lexicon`: `check`,
//! `to_ipld`, canonical DAG-CBOR (`cid::dag_cbor_bytes`) and record CIDs (`cid::record_cid`);
//! every special object (`$link`, `$bytes`, blobs) through `data_model::classify`; `$bytes`
//! through the generated field type `Bytes`.
//!
//! Invariants:
//! - `check` finds nothing exactly when `to_ipld` succeeds, and `to_ipld` stops at the first
//!   violation `check` reports (same path, same kind);
//! - the DAG-CBOR bytes decode to the same IPLD and encode again to the same bytes (canonical); the
//!   bytes and the CID do not depend on the order of the JSON keys; a record's CID is the CID of
//!   its bytes;
//! - a link's CID prints to a text that parses back to it; a blob's size is not negative;
//! - `$bytes` that `Bytes` reads are the bytes the data model reads, and are written unpadded and
//!   read back the same.

use ipld_core::ipld::Ipld;
use serde_json::{Map, Value};
use swdesk_lexicon::Bytes;
use swdesk_lexicon::cid::{self, Cid};
use swdesk_lexicon::data_model::{self, Special};

pub fn check(data: &[u8]) {
    let Some(value) = crate::json(data) else {
        return;
    };
    check_value(&value);
}

pub fn check_value(value: &Value) {
    let violations = data_model::check(value);
    let ipld = data_model::to_ipld(value);
    match (&ipld, violations.first()) {
        (Ok(_), None) => {}
        (Err(error), Some(first)) => assert_eq!(error, first, "to_ipld and check disagree"),
        (Ok(_), Some(first)) => panic!("to_ipld accepted what check refused: {first}"),
        (Err(error), None) => panic!("to_ipld refused what check accepted: {error}"),
    }
    if value.is_object() {
        assert_eq!(
            data_model::check_record(value).is_empty(),
            violations.is_empty()
        );
    } else {
        assert!(!data_model::check_record(value).is_empty());
    }
    specials(value);
    let Ok(ipld) = ipld else {
        return;
    };
    let bytes = match cid::ipld_dag_cbor_bytes(&ipld) {
        Ok(bytes) => bytes,
        Err(error) => panic!("a data model value has no DAG-CBOR: {error}"),
    };
    let decoded: Ipld = match serde_ipld_dagcbor::from_slice(&bytes) {
        Ok(decoded) => decoded,
        Err(error) => panic!("our DAG-CBOR does not decode: {error}"),
    };
    assert_eq!(decoded, ipld, "DAG-CBOR changed the value");
    assert_eq!(
        cid::ipld_dag_cbor_bytes(&decoded).ok().as_ref(),
        Some(&bytes),
        "DAG-CBOR is not canonical"
    );
    assert_eq!(cid::dag_cbor_bytes(value).ok().as_ref(), Some(&bytes));
    let reordered = crate::reversed(value);
    assert_eq!(
        cid::dag_cbor_bytes(&reordered).ok().as_ref(),
        Some(&bytes),
        "the order of JSON keys changed the DAG-CBOR"
    );
    if value.is_object() {
        let record = cid::record_cid(value).ok();
        assert_eq!(record, Some(cid::cid_of_dag_cbor(&bytes)));
        assert_eq!(cid::record_cid(&reordered).ok(), record);
    } else {
        assert!(cid::record_cid(value).is_err());
    }
}

/// Every object's special form, wherever it is.
fn specials(value: &Value) {
    match value {
        Value::Array(items) => items.iter().for_each(specials),
        Value::Object(object) => {
            special(object);
            object.values().for_each(specials);
        }
        Value::Number(_) => {
            if let Ok(integer) = data_model::integer(value) {
                let exact = value.as_i64() == Some(integer)
                    || value.as_f64().is_some_and(|float| float == integer as f64);
                assert!(exact, "{value} read as the integer {integer}");
            }
        }
        _ => {}
    }
}

fn special(object: &Map<String, Value>) {
    let classified = data_model::classify(object);
    match &classified {
        Ok(Special::Link(link)) => reparsed(link),
        Ok(Special::Blob(blob)) => {
            assert!(blob.size >= 0, "a blob of size {}", blob.size);
            reparsed(&blob.cid);
        }
        _ => {}
    }
    let read = serde_json::from_value::<Bytes>(Value::Object(object.clone()));
    if let Ok(bytes) = read {
        assert_eq!(
            classified.as_ref().ok(),
            Some(&Special::Bytes(bytes.0.clone())),
            "Bytes and the data model read `$bytes` differently"
        );
        let written = serde_json::to_value(&bytes).ok();
        let text = bytes.to_base64();
        assert!(!text.ends_with('='), "written with padding: {text}");
        assert_eq!(
            written.as_ref(),
            Some(&serde_json::json!({ "$bytes": text }))
        );
        let back = written.and_then(|written| serde_json::from_value::<Bytes>(written).ok());
        assert_eq!(back.as_ref(), Some(&bytes));
    }
}

fn reparsed(link: &Cid) {
    let text = link.to_string();
    assert_eq!(
        Cid::try_from(text.as_str()).ok().as_ref(),
        Some(link),
        "{text}"
    );
}
