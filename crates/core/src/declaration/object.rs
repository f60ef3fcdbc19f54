//! Object declarations: `{kind, metadata, spec}` as the user writes an Infra or an
//! EphemeralInfra, refused with every problem at once or accepted whole ([`parse_object`]).
//!
//! The checks: `kind` is `Infra` or `EphemeralInfra`; `metadata` holds only a `name` (a
//! DNS-1123 label, all of its problems) and `labels` (strings); the spec holds only known
//! fields; its declaration (description, contracts, ttlSeconds, endWhen) is validated as the
//! record it would publish ([`super::rules`], lexicon included), paths under `/spec`;
//! `record.uri` names a record of the kind's collection, not `self`; `record.sync` is `Both` or
//! `Publish`; `secrets`, `nodes` and `clusterRef` have their shapes and unique names, and name
//! only declared contracts. An EphemeralInfra's lifetime (`ttlSeconds`, `endWhen`) is fixed at
//! creation: [`super::genesis`] refuses a change rather than ignore it.
//!
//! Invariants: a declaration is either accepted whole or refused with the complete list; the
//! list is deterministic (root, metadata, spec fields, declaration, binding, local fields).

use std::collections::{BTreeMap, BTreeSet};

use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use swdesk_kernel::deployment_kind::DeploymentKind;
use swdesk_kernel::name::{Name, label_problems};
use swdesk_kernel::rkey::RESERVED;
use swdesk_kernel::secret::SecretRef;
use swdesk_kernel::uri::RecordUri;
use swdesk_lexicon::Problem;
use swdesk_lexicon::problem::{pointer_child, pointer_index};

use super::known::known_value;
use super::rules::{label_problem, record_problems};
use crate::infra::{ContractNode, DEFAULT_TTL_SECONDS, EphemeralInfraSpec, InfraSpec};

const SYNC_MODES: [&str; 2] = ["Both", "Publish"];
const INFRA_SPEC_FIELDS: [&str; 6] = [
    "description",
    "contracts",
    "record",
    "secrets",
    "clusterRef",
    "nodes",
];
const EPHEMERAL_SPEC_FIELDS: [&str; 2] = ["ttlSeconds", "endWhen"];

/// A declared object, accepted whole.
#[derive(Debug, Clone, PartialEq)]
pub struct Declared<Spec> {
    /// `metadata.name`.
    pub name: Name,
    /// `metadata.labels`.
    pub labels: BTreeMap<String, String>,
    /// The spec.
    pub spec: Spec,
}

/// An accepted object declaration of either deployment kind.
#[derive(Debug, Clone, PartialEq)]
pub enum DeclaredObject {
    /// `kind: Infra`.
    Infra(Declared<InfraSpec>),
    /// `kind: EphemeralInfra`.
    EphemeralInfra(Declared<EphemeralInfraSpec>),
}

/// Every problem of an object declaration `{kind, metadata, spec}`.
pub fn object_problems(value: &Value) -> Vec<Problem> {
    let Value::Object(root) = value else {
        return vec![Problem::new(
            "",
            "The declaration is not a JSON object.",
            "Send an object with kind, metadata and spec.",
        )];
    };
    let kind = declared_kind(root.get("kind"));
    let mut problems = unknown_fields(
        "",
        root,
        &["kind", "metadata", "spec"],
        "a declaration has kind, metadata and spec",
    );
    problems.extend(kind_problems(root.get("kind")));
    problems.extend(metadata_problems(root.get("metadata")));
    problems.extend(spec_problems(kind, root.get("spec")));
    problems
}

fn declared_kind(kind: Option<&Value>) -> Option<DeploymentKind> {
    match kind.and_then(Value::as_str) {
        Some("Infra") => Some(DeploymentKind::Infra),
        Some("EphemeralInfra") => Some(DeploymentKind::EphemeralInfra),
        _ => None,
    }
}

fn kind_problems(kind: Option<&Value>) -> Vec<Problem> {
    if declared_kind(kind).is_some() {
        return Vec::new();
    }
    let shown = kind.map_or("missing".to_owned(), |kind| format!("{kind}"));
    vec![Problem::new(
        "/kind",
        format!("The kind is {shown}; a deployment is an Infra or an EphemeralInfra."),
        "Set kind to \"Infra\" or \"EphemeralInfra\".",
    )]
}

fn unknown_fields(
    path: &str,
    object: &Map<String, Value>,
    known: &[&str],
    hint: &str,
) -> Vec<Problem> {
    object
        .keys()
        .filter(|key| !known.contains(&key.as_str()))
        .map(|key| {
            Problem::new(
                pointer_child(path, key),
                format!("The field {key:?} is not known here."),
                format!("Remove it or correct its spelling: {hint}."),
            )
        })
        .collect()
}

fn metadata_problems(metadata: Option<&Value>) -> Vec<Problem> {
    let Some(Value::Object(metadata)) = metadata else {
        return vec![Problem::new(
            "/metadata",
            "The metadata is missing or not an object.",
            "Give metadata with at least a name, e.g. {\"name\": \"web\"}.",
        )];
    };
    let hint = "metadata holds name and labels; the store sets uid, versions and times";
    let mut problems = unknown_fields("/metadata", metadata, &["name", "labels"], hint);
    problems.extend(object_name_problems(metadata.get("name")));
    problems.extend(labels_problems(metadata.get("labels")));
    problems
}

fn object_name_problems(name: Option<&Value>) -> Vec<Problem> {
    let Some(Value::String(name)) = name else {
        return vec![Problem::new(
            "/metadata/name",
            "The name is missing or not a string.",
            "Give the object a DNS-1123 label as its name, e.g. \"web\".",
        )];
    };
    let errors = label_problems(name);
    errors
        .iter()
        .map(|error| label_problem("/metadata/name", name, "name", error))
        .collect()
}

fn labels_problems(labels: Option<&Value>) -> Vec<Problem> {
    match labels {
        None => Vec::new(),
        Some(Value::Object(labels)) => labels
            .iter()
            .filter(|(_, value)| !value.is_string())
            .map(|(key, _)| {
                Problem::new(
                    pointer_child("/metadata/labels", key),
                    format!("The label {key:?} has a value that is not a string."),
                    "Give every label a string value.",
                )
            })
            .collect(),
        Some(_) => vec![Problem::new(
            "/metadata/labels",
            "The labels are not an object.",
            "Give labels as an object of strings, e.g. {\"team\": \"web\"}.",
        )],
    }
}

fn spec_problems(kind: Option<DeploymentKind>, spec: Option<&Value>) -> Vec<Problem> {
    let empty = Map::new();
    let spec = match spec {
        None => &empty,
        Some(Value::Object(spec)) => spec,
        Some(_) => {
            return vec![Problem::new(
                "/spec",
                "The spec is not an object.",
                "Give spec as an object, e.g. {\"contracts\": []}.",
            )];
        }
    };
    let mut problems = spec_field_problems(kind, spec);
    let collection_kind = kind.unwrap_or(DeploymentKind::Infra);
    problems.extend(Problem::under(
        "/spec",
        record_problems(collection_kind, &projected_record(collection_kind, spec)),
    ));
    problems.extend(binding_problems(collection_kind, spec.get("record")));
    let contracts = declared_contract_names(spec);
    problems.extend(secrets_problems(spec.get("secrets"), &contracts));
    problems.extend(nodes_problems(spec.get("nodes"), &contracts));
    problems.extend(cluster_ref_problems(spec.get("clusterRef")));
    problems
}

fn spec_field_problems(kind: Option<DeploymentKind>, spec: &Map<String, Value>) -> Vec<Problem> {
    let mut known: Vec<&str> = INFRA_SPEC_FIELDS.to_vec();
    if kind != Some(DeploymentKind::Infra) {
        known.extend(EPHEMERAL_SPEC_FIELDS);
    }
    unknown_fields(
        "/spec",
        spec,
        &known,
        &format!("a spec holds {}", known.join(", ")),
    )
}

/// The record the spec's declaration would publish, with a fixed `createdAt`.
fn projected_record(kind: DeploymentKind, spec: &Map<String, Value>) -> Value {
    let mut record = Map::new();
    record.insert("createdAt".to_owned(), json!("2000-01-01T00:00:00.000Z"));
    let mut fields = vec!["description", "contracts"];
    if kind == DeploymentKind::EphemeralInfra {
        record.insert("ttlSeconds".to_owned(), json!(DEFAULT_TTL_SECONDS));
        fields.extend(EPHEMERAL_SPEC_FIELDS);
    }
    for field in fields {
        if let Some(value) = spec.get(field) {
            record.insert(field.to_owned(), value.clone());
        }
    }
    Value::Object(record)
}

fn binding_problems(kind: DeploymentKind, binding: Option<&Value>) -> Vec<Problem> {
    let Some(binding) = binding else {
        return Vec::new();
    };
    let Value::Object(binding) = binding else {
        return vec![Problem::new(
            "/spec/record",
            "The record binding is not an object.",
            "Give record as an object, e.g. {\"sync\": \"Both\"}.",
        )];
    };
    let mut problems = unknown_fields(
        "/spec/record",
        binding,
        &["uri", "sync"],
        "record holds uri and sync",
    );
    problems.extend(known_value(
        "/spec/record/sync",
        "sync mode",
        binding.get("sync"),
        &SYNC_MODES,
    ));
    problems.extend(
        binding
            .get("sync")
            .filter(|sync| !sync.is_string())
            .map(|_| {
                Problem::new(
                    "/spec/record/sync",
                    "The sync mode is not a string.",
                    "Set sync to \"Both\" or \"Publish\".",
                )
            }),
    );
    problems.extend(
        binding
            .get("uri")
            .and_then(|uri| bound_uri_problem(kind, uri)),
    );
    problems
}

fn bound_uri_problem(kind: DeploymentKind, uri: &Value) -> Option<Problem> {
    let collection = kind.collection();
    let fix = format!(
        "Give the at-uri of a {collection} record, e.g. at://did:plc:abc123/{collection}/web."
    );
    let parsed = uri.as_str().map(RecordUri::parse);
    let message = match parsed {
        None => "The record uri is not a string.".to_owned(),
        Some(Err(error)) => format!("{error}."),
        Some(Ok(uri)) if uri.collection() != collection => {
            format!(
                "The record uri names collection {}, not {collection}.",
                uri.collection()
            )
        }
        Some(Ok(uri)) if uri.rkey().as_str() == RESERVED => {
            "The record uri names rkey self, which holds the index, not a deployment.".to_owned()
        }
        Some(Ok(_)) => return None,
    };
    Some(Problem::new("/spec/record/uri", message, fix))
}

fn declared_contract_names(spec: &Map<String, Value>) -> BTreeSet<String> {
    let contracts = spec.get("contracts").and_then(Value::as_array);
    let names = contracts
        .into_iter()
        .flatten()
        .filter_map(|c| c.get("name")?.as_str());
    names.map(str::to_owned).collect()
}

fn cluster_ref_problems(cluster: Option<&Value>) -> Vec<Problem> {
    let Some(cluster) = cluster else {
        return Vec::new();
    };
    let fix = "Give clusterRef a gateway DID and a cluster name, e.g. {\"gateway\": \"did:web:k8s.socialweb.computer\", \"name\": \"tenant-1\"}.";
    let Value::Object(fields) = cluster else {
        return vec![Problem::new(
            "/spec/clusterRef",
            "clusterRef is not an object.",
            fix,
        )];
    };
    let mut problems = unknown_fields(
        "/spec/clusterRef",
        fields,
        &["gateway", "name"],
        "clusterRef holds gateway and name",
    );
    if !fields
        .get("gateway")
        .and_then(Value::as_str)
        .is_some_and(|g| g.starts_with("did:"))
    {
        problems.push(Problem::new(
            "/spec/clusterRef/gateway",
            "The gateway is missing or not a DID.",
            fix,
        ));
    }
    match fields.get("name") {
        Some(Value::String(name)) => problems.extend(
            label_problems(name)
                .iter()
                .map(|e| label_problem("/spec/clusterRef/name", name, "cluster name", e)),
        ),
        _ => problems.push(Problem::new(
            "/spec/clusterRef/name",
            "The cluster name is missing or not a string.",
            fix,
        )),
    }
    problems
}

/// The elements of an optional array at `path`, or the problem that it is not one.
fn elements<'v>(path: &str, value: Option<&'v Value>, what: &str) -> Result<&'v [Value], Problem> {
    match value {
        None => Ok(&[]),
        Some(Value::Array(items)) => Ok(items),
        Some(_) => Err(Problem::new(
            path,
            format!("The {what} are not an array."),
            format!("Give {what} as an array."),
        )),
    }
}

/// Problems of an optional array at `path` whose elements deserialize as `T`: a shape problem
/// per element that does not, and `check`'s problems for each that does.
fn each_element<T: DeserializeOwned>(
    path: &str,
    value: Option<&Value>,
    what: &str,
    fix: &str,
    mut check: impl FnMut(&str, T) -> Vec<Problem>,
) -> Vec<Problem> {
    let items = match elements(path, value, what) {
        Ok(items) => items,
        Err(problem) => return vec![problem],
    };
    let mut problems = Vec::new();
    for (at, item) in items.iter().enumerate() {
        let path = pointer_index(path, at);
        match serde_json::from_value::<T>(item.clone()) {
            Err(error) => problems.push(Problem::new(
                &path,
                format!("This is not valid: {error}."),
                fix,
            )),
            Ok(element) => problems.extend(check(&path, element)),
        }
    }
    problems
}

fn secrets_problems(secrets: Option<&Value>, contracts: &BTreeSet<String>) -> Vec<Problem> {
    let fix = "Give each secret a name and a keychainEntry (the keychain entry that holds its value), and optionally contracts.";
    let mut names = BTreeSet::new();
    each_element(
        "/spec/secrets",
        secrets,
        "secrets",
        fix,
        |path, secret: SecretRef| secret_problems(path, &secret, &mut names, contracts),
    )
}

fn secret_problems(
    path: &str,
    secret: &SecretRef,
    names: &mut BTreeSet<String>,
    contracts: &BTreeSet<String>,
) -> Vec<Problem> {
    let mut problems = Vec::new();
    let valid = |c: char| c.is_ascii_alphanumeric() || "._-".contains(c);
    if secret.name.is_empty() || !secret.name.chars().all(valid) {
        problems.push(Problem::new(
            pointer_child(path, "name"),
            format!(
                "The secret name {:?} is empty or has characters other than A-Z, a-z, 0-9, '.', '_' and '-'.",
                secret.name
            ),
            "Name the secret as its file in the guest's bundle, e.g. \"agent-token\".",
        ));
    }
    if !names.insert(secret.name.clone()) {
        problems.push(Problem::new(
            pointer_child(path, "name"),
            format!("The secret name {:?} is used twice.", secret.name),
            "Give each secret its own name.",
        ));
    }
    if secret.keychain_entry.is_empty() {
        problems.push(Problem::new(
            pointer_child(path, "keychainEntry"),
            "The keychain entry is empty.",
            "Name the OS keychain entry that holds the secret's value.",
        ));
    }
    problems.extend(undeclared(
        &pointer_child(path, "contracts"),
        &secret.contracts,
        contracts,
    ));
    problems
}

fn undeclared(path: &str, names: &[String], contracts: &BTreeSet<String>) -> Vec<Problem> {
    let each = names.iter().enumerate();
    each.filter_map(|(at, name)| no_such_contract(&pointer_index(path, at), name, contracts))
        .collect()
}

fn no_such_contract(path: &str, name: &str, contracts: &BTreeSet<String>) -> Option<Problem> {
    (!contracts.contains(name)).then(|| {
        Problem::new(
            path,
            format!("No contract is named {name:?}."),
            format!("Name a declared contract: {}.", listed(contracts)),
        )
    })
}

fn listed(contracts: &BTreeSet<String>) -> String {
    if contracts.is_empty() {
        return "none is declared yet".to_owned();
    }
    contracts
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ")
}

fn nodes_problems(nodes: Option<&Value>, contracts: &BTreeSet<String>) -> Vec<Problem> {
    let fix = "Give each node entry the contract it belongs to, and optionally ownerDid, adopt, nodeClaim and join.";
    let mut seen = BTreeSet::new();
    each_element(
        "/spec/nodes",
        nodes,
        "nodes",
        fix,
        |path, node: ContractNode| node_problems(path, &node, &mut seen, contracts),
    )
}

fn node_problems(
    path: &str,
    node: &ContractNode,
    seen: &mut BTreeSet<String>,
    contracts: &BTreeSet<String>,
) -> Vec<Problem> {
    let path = pointer_child(path, "contract");
    let mut problems: Vec<Problem> = no_such_contract(&path, &node.contract, contracts)
        .into_iter()
        .collect();
    if !seen.insert(node.contract.clone()) {
        problems.push(Problem::new(
            &path,
            format!("The contract {:?} has a node entry already.", node.contract),
            "Keep one node entry per contract.",
        ));
    }
    problems
}

/// The declaration, accepted whole, or every problem it has.
pub fn parse_object(value: &Value) -> Result<DeclaredObject, Vec<Problem>> {
    let problems = object_problems(value);
    if !problems.is_empty() {
        return Err(problems);
    }
    let kind = declared_kind(value.get("kind"));
    let spec = value.get("spec").cloned().unwrap_or_else(|| json!({}));
    let name = value
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .map(Name::parse);
    let labels = value
        .pointer("/metadata/labels")
        .cloned()
        .unwrap_or_else(|| json!({}));
    let (Some(kind), Some(Ok(name))) = (kind, name) else {
        return Err(vec![Problem::new(
            "",
            "The declaration could not be read.",
            "Check kind and metadata.name.",
        )]);
    };
    let labels = read("/metadata/labels", labels)?;
    Ok(match kind {
        DeploymentKind::Infra => DeclaredObject::Infra(Declared {
            name,
            labels,
            spec: read("/spec", spec)?,
        }),
        DeploymentKind::EphemeralInfra => DeclaredObject::EphemeralInfra(Declared {
            name,
            labels,
            spec: read("/spec", spec)?,
        }),
    })
}

/// Deserializes a value the checks accepted; a failure here is reported, never hidden.
fn read<T: DeserializeOwned>(path: &str, value: Value) -> Result<T, Vec<Problem>> {
    serde_json::from_value(value).map_err(|error| {
        vec![Problem::new(
            path,
            format!("This could not be read: {error}."),
            "Correct the value to the documented shape.",
        )]
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::infra::EndWhen;
    use crate::sync::SyncMode;

    #[test]
    fn an_accepted_declaration_comes_back_typed_with_its_defaults() {
        let value = json!({
            "kind": "EphemeralInfra",
            "metadata": {"name": "scratch", "labels": {"team": "web"}},
            "spec": {"contracts": [{"name": "job", "state": "requested"}], "record": {}}
        });
        let Ok(DeclaredObject::EphemeralInfra(declared)) = parse_object(&value) else {
            panic!("not accepted: {:?}", parse_object(&value));
        };
        assert_eq!(declared.name.as_str(), "scratch");
        assert_eq!(declared.labels["team"], "web");
        assert_eq!(declared.spec.ttl_seconds, DEFAULT_TTL_SECONDS);
        assert_eq!(declared.spec.end_when, EndWhen::Complete);
        assert_eq!(declared.spec.infra.record.sync, SyncMode::Both);
        assert_eq!(declared.spec.infra.contracts[0].name, "job");
    }

    #[test]
    fn an_infra_spec_may_not_carry_a_lifetime() {
        let value =
            json!({"kind": "Infra", "metadata": {"name": "site"}, "spec": {"ttlSeconds": 600}});
        let paths: Vec<String> = object_problems(&value)
            .into_iter()
            .map(|p| p.path)
            .collect();
        assert_eq!(paths, ["/spec/ttlSeconds"]);
    }

    #[test]
    fn a_binding_to_the_index_rkey_is_refused() {
        let uri = "at://did:plc:abc123/computer.socialweb.infra/self";
        let value = json!({"kind": "Infra", "metadata": {"name": "site"}, "spec": {"record": {"uri": uri}}});
        let problems = object_problems(&value);
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].path, "/spec/record/uri");
        assert!(
            problems[0].message.contains("self"),
            "{}",
            problems[0].message
        );
    }

    #[test]
    fn a_declaration_that_is_not_an_object_has_one_problem_at_the_root() {
        let problems = object_problems(&json!([1, 2]));
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].path, "");
    }
}
