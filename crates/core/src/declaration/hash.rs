//! The declaration hash: a sha-256 over the canonical form of `description` + `contracts`.
//!
//! The canonical form is the DAG-CBOR encoding (the lexicon crate's [`dag_cbor_bytes`]: map
//! keys sorted, shortest integers) of the object `{"contracts": [...], "description": "..."}`,
//! where an empty `description` and an empty `contracts` list are left out, so "absent" and
//! "empty" are the same declaration. Defaults are not filled in: a contract that spells out
//! `computeKind: "vm"` is a different declaration from one that leaves it out.
//!
//! Invariants: the hash depends only on the declaration's data, never on field order, on a
//! serialize/parse round trip, on status or on local-only fields (`secrets`, `clusterRef`,
//! `nodes`); unknown fields inside contracts do count, since they are declaration too. It is
//! written and compared as 64 lower-case hex digits.

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use swdesk_lexicon::dag_cbor_bytes;
use thiserror::Error;

use super::types::DeclarationHash;
use crate::infra::{Contract, EphemeralInfraSpec, InfraSpec};

/// Why a declaration has no hash.
#[derive(Debug, Error)]
pub enum HashError {
    /// A contract holds something outside the atproto data model (a float, for one).
    #[error("the declaration is not atproto data: {0}")]
    NotData(String),
}

/// The declaration part of a spec or a record, borrowed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Declaration<'a> {
    /// `description`.
    pub description: Option<&'a str>,
    /// `contracts`.
    pub contracts: &'a [Contract],
}

impl<'a> Declaration<'a> {
    /// The declaration of an Infra spec.
    pub fn of_spec(spec: &'a InfraSpec) -> Self {
        Self {
            description: spec.description.as_deref(),
            contracts: &spec.contracts,
        }
    }

    /// The declaration of an EphemeralInfra spec.
    pub fn of_ephemeral_spec(spec: &'a EphemeralInfraSpec) -> Self {
        Self::of_spec(&spec.infra)
    }

    /// The declaration of an Infra record.
    pub fn of_record(record: &'a swdesk_lexicon::Infra) -> Self {
        let contracts = record.contracts.as_deref().unwrap_or_default();
        Self {
            description: record.description.as_deref(),
            contracts,
        }
    }

    /// The declaration of an EphemeralInfra record.
    pub fn of_ephemeral_record(record: &'a swdesk_lexicon::EphemeralInfra) -> Self {
        let contracts = record.contracts.as_deref().unwrap_or_default();
        Self {
            description: record.description.as_deref(),
            contracts,
        }
    }

    /// The canonical JSON value the hash is taken over.
    pub fn canonical_value(&self) -> Result<Value, HashError> {
        let mut fields = Map::new();
        if !self.contracts.is_empty() {
            let contracts = serde_json::to_value(self.contracts)
                .map_err(|error| HashError::NotData(error.to_string()))?;
            fields.insert("contracts".to_owned(), contracts);
        }
        if let Some(description) = self.description.filter(|d| !d.is_empty()) {
            fields.insert(
                "description".to_owned(),
                Value::String(description.to_owned()),
            );
        }
        Ok(Value::Object(fields))
    }

    /// The declaration hash.
    pub fn hash(&self) -> Result<DeclarationHash, HashError> {
        let bytes = dag_cbor_bytes(&self.canonical_value()?)
            .map_err(|error| HashError::NotData(error.to_string()))?;
        Ok(DeclarationHash::from_bytes(Sha256::digest(bytes).into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;
    use swdesk_kernel::secret::SecretRef;

    fn contracts(value: Value) -> Vec<Contract> {
        serde_json::from_value(value).unwrap()
    }

    fn hash_of(description: Option<&str>, contracts: &[Contract]) -> DeclarationHash {
        Declaration {
            description,
            contracts,
        }
        .hash()
        .unwrap()
    }

    #[test]
    fn the_hash_ignores_the_order_of_fields() {
        let one = contracts(json!([{"name": "web", "state": "staged", "vmName": "w"}]));
        let two = contracts(json!([{"vmName": "w", "state": "staged", "name": "web"}]));
        assert_eq!(hash_of(Some("d"), &one), hash_of(Some("d"), &two));
    }

    #[test]
    fn unknown_contract_fields_are_part_of_the_declaration() {
        let plain = contracts(json!([{"name": "web", "state": "staged"}]));
        let extra = contracts(json!([{"name": "web", "state": "staged", "gpu": "a100"}]));
        assert_ne!(hash_of(None, &plain), hash_of(None, &extra));
    }

    #[test]
    fn local_only_fields_and_the_binding_never_enter_the_hash() {
        let plain = InfraSpec {
            contracts: contracts(json!([{"name": "web", "state": "staged"}])),
            ..Default::default()
        };
        let mut local = plain.clone();
        local.secrets.push(SecretRef {
            name: "token".into(),
            keychain_entry: "k".into(),
            contracts: vec![],
            version: 1,
        });
        local.record.sync = crate::sync::SyncMode::Publish;
        let plain_hash = Declaration::of_spec(&plain).hash().unwrap();
        assert_eq!(Declaration::of_spec(&local).hash().unwrap(), plain_hash);
    }

    #[test]
    fn a_record_and_a_spec_with_the_same_declaration_hash_alike() {
        let record: swdesk_lexicon::Infra = serde_json::from_value(json!({
            "createdAt": "2026-12-02T00:00:00.000Z",
            "description": "d",
            "contracts": [{"name": "web", "state": "requested"}],
            "status": {"phase": "deploying"}
        }))
        .unwrap();
        let spec = InfraSpec {
            description: Some("d".into()),
            contracts: record.contracts.clone().unwrap(),
            ..Default::default()
        };
        assert_eq!(
            Declaration::of_record(&record).hash().unwrap(),
            Declaration::of_spec(&spec).hash().unwrap()
        );
    }

    #[test]
    fn absent_and_empty_are_the_same_declaration() {
        assert_eq!(hash_of(None, &[]), hash_of(Some(""), &[]));
    }

    #[test]
    fn a_float_in_a_contract_has_no_hash() {
        let floats =
            contracts(json!([{"name": "web", "state": "staged", "policyArgs": {"x": 1.5}}]));
        assert!(
            Declaration {
                description: None,
                contracts: &floats
            }
            .hash()
            .is_err()
        );
    }

    fn any_contract() -> impl Strategy<Value = Value> {
        (
            "[a-z]{1,8}",
            prop_oneof![Just("staged"), Just("requested")],
            proptest::option::of("[a-z ]{0,12}"),
            proptest::option::of(any::<i32>()),
        )
            .prop_map(|(name, state, user_data, extra)| {
                let mut contract = json!({"name": name, "state": state});
                if let Some(user_data) = user_data {
                    contract["userData"] = json!(user_data);
                }
                if let Some(extra) = extra {
                    contract["zExtra"] = json!(extra);
                }
                contract
            })
    }

    /// `value` with the keys of every object in reverse order.
    fn reversed(value: &Value) -> Value {
        match value {
            Value::Object(map) => Value::Object(
                map.iter()
                    .rev()
                    .map(|(k, v)| (k.clone(), reversed(v)))
                    .collect(),
            ),
            Value::Array(items) => Value::Array(items.iter().map(reversed).collect()),
            other => other.clone(),
        }
    }

    proptest! {
        #[test]
        fn the_hash_survives_reordering_and_a_round_trip(
            items in proptest::collection::vec(any_contract(), 0..4),
            description in proptest::option::of("[a-z ]{0,20}"),
        ) {
            let original = contracts(Value::Array(items.clone()));
            let shuffled = contracts(reversed(&Value::Array(items)));
            let text = serde_json::to_string(&original).unwrap();
            let reparsed: Vec<Contract> = serde_json::from_str(&text).unwrap();
            let hash = hash_of(description.as_deref(), &original);
            prop_assert_eq!(hash_of(description.as_deref(), &shuffled), hash);
            prop_assert_eq!(hash_of(description.as_deref(), &reparsed), hash);
        }
    }

    /// A spec's local-only fields and binding, from JSON the strategy below draws.
    fn local_only() -> impl Strategy<Value = Value> {
        (
            proptest::collection::vec(("[a-z]{1,8}", "[a-z/]{1,16}"), 0..3),
            proptest::option::of("[a-z][a-z0-9]{0,10}"),
            proptest::collection::vec(("[a-z]{1,8}", any::<bool>()), 0..3),
            any::<bool>(),
        )
            .prop_map(|(secrets, cluster, nodes, publish)| {
                let secrets: Vec<Value> = secrets
                    .into_iter()
                    .map(|(name, entry)| json!({"name": name, "keychainEntry": entry}))
                    .collect();
                let nodes: Vec<Value> = nodes
                    .into_iter()
                    .map(|(contract, adopt)| json!({"contract": contract, "adopt": adopt}))
                    .collect();
                let mut local = json!({
                    "secrets": secrets,
                    "nodes": nodes,
                    "record": {"sync": if publish { "Publish" } else { "Both" }},
                });
                if let Some(name) = cluster {
                    local["clusterRef"] =
                        json!({"gateway": "did:web:k8s.socialweb.computer", "name": name});
                }
                local
            })
    }

    proptest! {
        #[test]
        fn local_only_fields_and_the_binding_never_change_the_hash(
            items in proptest::collection::vec(any_contract(), 0..3),
            description in proptest::option::of("[a-z ]{0,20}"),
            local in local_only(),
        ) {
            let declaration = json!({"description": description, "contracts": items});
            let bare: InfraSpec = serde_json::from_value(declaration.clone()).unwrap();
            let mut with_local = local;
            with_local["description"] = declaration["description"].clone();
            with_local["contracts"] = declaration["contracts"].clone();
            let full: InfraSpec = serde_json::from_value(with_local).unwrap();
            prop_assert_eq!(
                Declaration::of_spec(&full).hash().unwrap(),
                Declaration::of_spec(&bare).hash().unwrap()
            );
        }
    }
}
