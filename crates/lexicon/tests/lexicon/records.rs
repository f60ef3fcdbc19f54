//! Record types: the JSON they read and write, unknown fields kept, open enums kept as written.

use proptest::prelude::*;
use serde_json::{Value, json};
use swdesk_lexicon::computer::socialweb::infra::{Contract, ContractState, StatusPhase};
use swdesk_lexicon::{EphemeralInfra, Infra, Record};

fn newer_client_infra() -> Value {
    json!({
        "$type": "computer.socialweb.infra",
        "description": "two guests",
        "contracts": [
            {"name": "web", "state": "requested", "computeKind": "vm", "gpu": {"count": 1}},
            {"name": "db", "state": "paused", "tunnels": [{"tag": "pg", "port": 5432, "mtu": 1400}]}
        ],
        "status": {"phase": "hibernating", "contracts": [{"name": "web", "phase": "deployed", "cost": 3}]},
        "createdAt": "2026-12-02T10:00:00.000Z",
        "labels": ["a", "b"]
    })
}

#[test]
fn a_record_from_a_newer_client_round_trips_unchanged() {
    let original = newer_client_infra();
    let infra = Infra::from_record_value(original.clone()).expect("reads");
    assert_eq!(infra.to_record_value().expect("writes"), original);
}

#[test]
fn unknown_fields_and_values_are_kept_where_they_were() {
    let infra = Infra::from_record_value(newer_client_infra()).expect("reads");
    let contracts = infra.contracts.as_deref().unwrap_or_default();
    assert_eq!(contracts[0].state, ContractState::Requested);
    assert_eq!(contracts[0].extra.get("gpu"), Some(&json!({"count": 1})));
    assert_eq!(
        contracts[1].state,
        ContractState::Other("paused".to_owned())
    );
    let status = infra.status.as_ref().expect("status");
    assert_eq!(
        status.phase,
        Some(StatusPhase::Other("hibernating".to_owned()))
    );
    assert_eq!(infra.extra.get("labels"), Some(&json!(["a", "b"])));
    assert!(!infra.extra.contains_key("$type"));
}

#[test]
fn a_read_modify_write_changes_only_what_was_modified() {
    let mut infra = Infra::from_record_value(newer_client_infra()).expect("reads");
    if let Some(contract) = infra.contracts.as_mut().and_then(|c| c.first_mut()) {
        contract.state = ContractState::Released;
    }
    let mut expected = newer_client_infra();
    expected["contracts"][0]["state"] = json!("released");
    assert_eq!(infra.to_record_value().expect("writes"), expected);
}

#[test]
fn a_new_record_is_written_with_its_type_first_and_without_absent_fields() {
    let infra = Infra {
        created_at: "2026-12-02T10:00:00Z".to_owned(),
        contracts: Some(vec![Contract {
            name: "web".to_owned(),
            ..Contract::default()
        }]),
        ..Infra::default()
    };
    let value = infra.to_record_value().expect("writes");
    assert_eq!(
        serde_json::to_string(&value).expect("json"),
        r#"{"$type":"computer.socialweb.infra","contracts":[{"name":"web","state":"staged"}],"createdAt":"2026-12-02T10:00:00Z"}"#
    );
}

#[test]
fn a_record_of_another_collection_is_refused() {
    let mut value = newer_client_infra();
    value["$type"] = json!("computer.socialweb.ephemeralInfra");
    assert!(Infra::from_record_value(value).is_err());
    assert!(EphemeralInfra::from_record_value(json!("not an object")).is_err());
}

#[test]
fn defaults_come_from_the_lexicon() {
    let ephemeral = EphemeralInfra::default();
    assert_eq!(ephemeral.end_when_or_default().as_str(), "complete");
    assert_eq!(Contract::default().compute_kind_or_default().as_str(), "vm");
}

fn json_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        "[a-z ]{0,8}".prop_map(Value::from),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    json_leaf().prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::btree_map("[a-z]{1,6}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn with_fields(object: Value, fields: std::collections::BTreeMap<String, Value>) -> Value {
    let Value::Object(mut object) = object else {
        panic!("an object");
    };
    object.extend(fields);
    Value::Object(object)
}

/// Keys no lexicon def here declares, so they land in `extra`.
fn unknown_key() -> impl Strategy<Value = String> {
    "x[A-Z][a-z]{1,6}"
}

proptest! {
    #[test]
    fn unknown_fields_survive_a_round_trip_at_every_level(
        top in prop::collection::btree_map(unknown_key(), json_value(), 0..4),
        in_contract in prop::collection::btree_map(unknown_key(), json_value(), 0..4),
        in_status in prop::collection::btree_map(unknown_key(), json_value(), 0..4),
        state in "[a-z]{1,10}",
    ) {
        let contract = with_fields(json!({"name": "web", "state": state}), in_contract);
        let status = with_fields(json!({"phase": "deployed"}), in_status);
        let record = with_fields(json!({
            "$type": "computer.socialweb.ephemeralInfra",
            "contracts": [contract],
            "ttlSeconds": 3600,
            "status": status,
            "createdAt": "2026-12-02T10:00:00Z",
        }), top);
        let typed = EphemeralInfra::from_record_value(record.clone()).expect("reads");
        prop_assert_eq!(typed.to_record_value().expect("writes"), record);
    }
}
