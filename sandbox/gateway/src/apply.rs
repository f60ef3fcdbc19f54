//! Server-side apply over a cluster's in-memory object store, with the semantics kubectl users
//! rely on: each field manager owns the fields its last apply set; a manager setting a field
//! another owns to a **different** value is a `Conflict` (naming every field and its owner)
//! unless `force` takes the field over; setting it to the same value shares it; a field the
//! manager set before and no longer sets is removed unless another manager owns it; `dryRun`
//! computes the result and stores nothing. `generation` starts at 1 and grows when anything
//! outside `metadata` and `status` changes; `resourceVersion` grows with every stored change and
//! not on a no-op.
//!
//! Simplifications of the sandbox: fields are leaf paths of nested objects and a list is one
//! field (atomic); `metadata.managedFields` lists each manager's paths rather than FieldsV1.
//!
//! Invariant: a refused apply changes nothing, and every problem of a manifest is named at once.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value, json};

/// A field: its path of keys from the object's root.
pub type FieldPath = Vec<String>;

/// Kinds without a namespace.
const CLUSTER_SCOPED: &[&str] = &[
    "Namespace",
    "Node",
    "PersistentVolume",
    "ClusterRole",
    "ClusterRoleBinding",
    "CustomResourceDefinition",
    "StorageClass",
];

/// Where an object lives in the store.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectKey {
    /// `group/version`.
    pub api_version: String,
    /// The kind.
    pub kind: String,
    /// The namespace, empty for cluster-scoped kinds.
    pub namespace: String,
    /// The name.
    pub name: String,
}

/// A stored object and who owns which of its fields.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredObject {
    /// The object as applied, without server metadata.
    pub content: Map<String, Value>,
    /// Its uid.
    pub uid: String,
    /// Its generation.
    pub generation: i64,
    /// Its resourceVersion.
    pub resource_version: u64,
    /// When it was created.
    pub created_at: String,
    /// Fields each manager owns.
    pub managers: BTreeMap<String, BTreeSet<FieldPath>>,
}

impl StoredObject {
    /// The object as the API server shows it (server metadata filled in).
    pub fn full(&self) -> Map<String, Value> {
        let mut object = self.content.clone();
        let managed: Vec<Value> = self
            .managers
            .iter()
            .filter(|(_, fields)| !fields.is_empty())
            .map(|(manager, fields)| {
                let paths: Vec<String> = fields.iter().map(|path| path.join(".")).collect();
                json!({"manager": manager, "operation": "Apply", "fields": paths})
            })
            .collect();
        let metadata = object
            .entry("metadata")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(metadata) = metadata {
            metadata.insert("uid".into(), json!(self.uid));
            metadata.insert("generation".into(), json!(self.generation));
            metadata.insert(
                "resourceVersion".into(),
                json!(self.resource_version.to_string()),
            );
            metadata.insert("creationTimestamp".into(), json!(self.created_at));
            metadata.insert("managedFields".into(), Value::Array(managed));
        }
        object
    }
}

/// One apply.
#[derive(Debug, Clone, Copy)]
pub struct ApplyRequest<'a> {
    /// The manifest: one object.
    pub manifest: &'a Map<String, Value>,
    /// Overrides the manifest's namespace.
    pub namespace: Option<&'a str>,
    /// Overrides the manifest's name.
    pub name: Option<&'a str>,
    /// The field manager.
    pub field_manager: &'a str,
    /// Take fields other managers own.
    pub force: bool,
    /// Store nothing.
    pub dry_run: bool,
}

/// Why an apply was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApplyError {
    /// The manifest is not one valid object: every problem.
    Invalid(Vec<String>),
    /// Fields other managers own with other values: each path and its owner.
    Conflict(Vec<(String, String)>),
}

impl ApplyError {
    /// The message naming every problem.
    pub fn message(&self) -> String {
        match self {
            Self::Invalid(problems) => problems.join("; "),
            Self::Conflict(fields) => {
                let fields: Vec<String> = fields
                    .iter()
                    .map(|(path, manager)| format!("{path} (owned by {manager})"))
                    .collect();
                format!(
                    "other field managers own fields this apply changes: {}; apply with force to take them",
                    fields.join(", ")
                )
            }
        }
    }
}

/// The result of an apply.
#[derive(Debug, Clone, PartialEq)]
pub struct Applied {
    /// Where the object is.
    pub key: ObjectKey,
    /// The object after the apply (as stored, or as it would be for a dry run).
    pub object: StoredObject,
    /// Whether it did not exist before.
    pub created: bool,
}

/// A cluster's objects.
#[derive(Debug, Clone, Default)]
pub struct ObjectStore {
    objects: BTreeMap<ObjectKey, StoredObject>,
    last_version: u64,
}

impl ObjectStore {
    /// The object at `key`.
    pub fn get(&self, key: &ObjectKey) -> Option<&StoredObject> {
        self.objects.get(key)
    }

    /// Applies `request` at `now` (RFC 3339), with `uid` for a new object.
    pub fn apply(
        &mut self,
        request: &ApplyRequest<'_>,
        now: &str,
        uid: String,
    ) -> Result<Applied, ApplyError> {
        let (key, manifest) = validated(request)?;
        let fields = leaves(&manifest);
        let existing = self.objects.get(&key);
        let mut candidate = merged(existing, request.field_manager, &fields, &key);
        let conflicts = conflicts(existing, request.field_manager, &fields, &candidate);
        if !conflicts.is_empty() && !request.force {
            return Err(ApplyError::Conflict(conflicts));
        }
        let mut managers = existing.map(|o| o.managers.clone()).unwrap_or_default();
        take_ownership(&mut managers, request, &fields, request.force);
        let changed =
            existing.is_none_or(|old| old.content != candidate || old.managers != managers);
        let spec_changed = existing
            .is_none_or(|old| without_metadata(&old.content) != without_metadata(&candidate));
        let object = StoredObject {
            uid: existing.map_or(uid, |old| old.uid.clone()),
            generation: existing.map_or(1, |old| old.generation + i64::from(spec_changed)),
            resource_version: if changed {
                self.last_version + 1
            } else {
                existing.map_or(0, |old| old.resource_version)
            },
            created_at: existing.map_or_else(|| now.to_owned(), |old| old.created_at.clone()),
            managers,
            content: std::mem::take(&mut candidate),
        };
        let created = existing.is_none();
        if !request.dry_run && changed {
            self.last_version += 1;
            self.objects.insert(key.clone(), object.clone());
        }
        Ok(Applied {
            key,
            object,
            created,
        })
    }
}

/// The manifest's key and the manifest with server-owned fields removed, or every problem.
fn validated(request: &ApplyRequest<'_>) -> Result<(ObjectKey, Map<String, Value>), ApplyError> {
    let mut problems = Vec::new();
    let metadata = metadata_of(request.manifest, &mut problems);
    let key = key_of(request, &metadata, &mut problems);
    if request.field_manager.is_empty() {
        problems
            .push("fieldManager is empty: name the manager, e.g. socialweb-computer".to_owned());
    }
    if key.kind == "Job" {
        problems.extend(crate::jobs::manifest_problems(request.manifest));
    }
    if !problems.is_empty() {
        return Err(ApplyError::Invalid(problems));
    }
    let manifest = with_server_fields_removed(request.manifest, metadata, &key);
    Ok((key, manifest))
}

/// The manifest's `metadata` (empty when absent; a problem when not an object).
fn metadata_of(manifest: &Map<String, Value>, problems: &mut Vec<String>) -> Map<String, Value> {
    match manifest.get("metadata") {
        None => Map::new(),
        Some(Value::Object(metadata)) => metadata.clone(),
        Some(_) => {
            problems.push("metadata is not an object".to_owned());
            Map::new()
        }
    }
}

/// Where the object goes (the request's overrides win over the manifest), and its problems.
fn key_of(
    request: &ApplyRequest<'_>,
    metadata: &Map<String, Value>,
    problems: &mut Vec<String>,
) -> ObjectKey {
    let text = |object: &Map<String, Value>, field: &str| {
        object.get(field).and_then(Value::as_str).map(str::to_owned)
    };
    let api_version = text(request.manifest, "apiVersion").unwrap_or_default();
    let kind = text(request.manifest, "kind").unwrap_or_default();
    if api_version.is_empty() {
        problems.push("apiVersion is missing: set it, e.g. batch/v1".to_owned());
    }
    if kind.is_empty() {
        problems.push("kind is missing: set it, e.g. Job".to_owned());
    }
    let name = request
        .name
        .map(str::to_owned)
        .or_else(|| text(metadata, "name"))
        .unwrap_or_default();
    problems.extend(name_problem(&name));
    let namespace = if CLUSTER_SCOPED.contains(&kind.as_str()) {
        String::new()
    } else {
        let namespace = request
            .namespace
            .filter(|ns| !ns.is_empty())
            .map(str::to_owned);
        let namespace = namespace
            .or_else(|| text(metadata, "namespace"))
            .unwrap_or_else(|| "default".to_owned());
        problems
            .extend(crate::xrpc::dns_label_problem(&namespace).map(|p| format!("namespace: {p}")));
        namespace
    };
    ObjectKey {
        api_version,
        kind,
        namespace,
        name,
    }
}

/// The manifest without `status` and the metadata the server owns, named as `key` says.
fn with_server_fields_removed(
    manifest: &Map<String, Value>,
    mut metadata: Map<String, Value>,
    key: &ObjectKey,
) -> Map<String, Value> {
    let mut manifest = manifest.clone();
    manifest.remove("status");
    for server_owned in [
        "uid",
        "resourceVersion",
        "generation",
        "managedFields",
        "creationTimestamp",
    ] {
        metadata.remove(server_owned);
    }
    metadata.insert("name".into(), json!(key.name));
    metadata.remove("namespace");
    if !key.namespace.is_empty() {
        metadata.insert("namespace".into(), json!(key.namespace));
    }
    manifest.insert("metadata".into(), Value::Object(metadata));
    manifest
}

/// Why `name` is not a valid object name (a DNS-1123 subdomain).
fn name_problem(name: &str) -> Option<String> {
    let valid = (1..=253).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric());
    (!valid).then(|| format!("metadata.name {name:?} is not a DNS-1123 subdomain: use lower-case letters, digits, '-' and '.', starting and ending with a letter or digit"))
}

/// Whether `path` is an identity field every apply sets and nobody owns.
fn is_identity(path: &[String]) -> bool {
    matches!(path, [top] if top == "apiVersion" || top == "kind")
        || matches!(path, [meta, field] if meta == "metadata" && (field == "name" || field == "namespace"))
}

/// The fields a manifest sets: leaf paths (a list or an empty object is one field).
pub fn leaves(manifest: &Map<String, Value>) -> BTreeMap<FieldPath, Value> {
    let mut fields = BTreeMap::new();
    collect_leaves(manifest, &mut Vec::new(), &mut fields);
    fields.retain(|path, _| !is_identity(path));
    fields
}

fn collect_leaves(
    object: &Map<String, Value>,
    prefix: &mut Vec<String>,
    out: &mut BTreeMap<FieldPath, Value>,
) {
    for (key, value) in object {
        prefix.push(key.clone());
        match value {
            Value::Object(inner) if !inner.is_empty() => collect_leaves(inner, prefix, out),
            other => {
                out.insert(prefix.clone(), other.clone());
            }
        }
        prefix.pop();
    }
}

/// The value at `path`.
fn value_at<'a>(object: &'a Map<String, Value>, path: &[String]) -> Option<&'a Value> {
    let (last, parents) = path.split_last()?;
    let mut current = object;
    for key in parents {
        current = current.get(key)?.as_object()?;
    }
    current.get(last)
}

fn set_at(object: &mut Map<String, Value>, path: &[String], value: Value) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut current = object;
    for key in parents {
        let entry = current
            .entry(key.clone())
            .or_insert_with(|| Value::Object(Map::new()));
        if !entry.is_object() {
            *entry = Value::Object(Map::new());
        }
        let Value::Object(inner) = entry else { return };
        current = inner;
    }
    current.insert(last.clone(), value);
}

fn remove_at(object: &mut Map<String, Value>, path: &[String]) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut current = object;
    for key in parents {
        let Some(Value::Object(inner)) = current.get_mut(key) else {
            return;
        };
        current = inner;
    }
    current.remove(last);
}

/// Whether one path is the other or contains it.
fn related(a: &[String], b: &[String]) -> bool {
    a.starts_with(b) || b.starts_with(a)
}

/// The object after `manager` applies `fields`: its old fields no one else owns removed, the
/// new ones set.
fn merged(
    existing: Option<&StoredObject>,
    manager: &str,
    fields: &BTreeMap<FieldPath, Value>,
    key: &ObjectKey,
) -> Map<String, Value> {
    let mut object = existing.map(|old| old.content.clone()).unwrap_or_default();
    if let Some(old) = existing {
        let owned_by_others: Vec<&FieldPath> = old
            .managers
            .iter()
            .filter(|(m, _)| *m != manager)
            .flat_map(|(_, f)| f)
            .collect();
        for path in old.managers.get(manager).into_iter().flatten() {
            let kept = fields.contains_key(path)
                || owned_by_others.iter().any(|other| related(other, path));
            if !kept {
                remove_at(&mut object, path);
            }
        }
    }
    for (path, value) in fields {
        set_at(&mut object, path, value.clone());
    }
    object.insert("apiVersion".into(), json!(key.api_version));
    object.insert("kind".into(), json!(key.kind));
    set_at(
        &mut object,
        &["metadata".into(), "name".into()],
        json!(key.name),
    );
    if !key.namespace.is_empty() {
        set_at(
            &mut object,
            &["metadata".into(), "namespace".into()],
            json!(key.namespace),
        );
    }
    object
}

/// Fields other managers own whose value the apply would change: (path, owner).
fn conflicts(
    existing: Option<&StoredObject>,
    manager: &str,
    fields: &BTreeMap<FieldPath, Value>,
    candidate: &Map<String, Value>,
) -> Vec<(String, String)> {
    let Some(old) = existing else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for (other, owned) in old.managers.iter().filter(|(m, _)| *m != manager) {
        for path in owned {
            let touched = fields.keys().any(|new| related(new, path));
            if touched && value_at(&old.content, path) != value_at(candidate, path) {
                found.push((path.join("."), other.clone()));
            }
        }
    }
    found
}

/// Records that `request.field_manager` owns exactly `fields`; with `force`, takes them from
/// other managers.
fn take_ownership(
    managers: &mut BTreeMap<String, BTreeSet<FieldPath>>,
    request: &ApplyRequest<'_>,
    fields: &BTreeMap<FieldPath, Value>,
    force: bool,
) {
    if force {
        for (manager, owned) in managers.iter_mut() {
            if manager != request.field_manager {
                owned.retain(|path| !fields.keys().any(|new| related(new, path)));
            }
        }
    }
    managers.insert(
        request.field_manager.to_owned(),
        fields.keys().cloned().collect(),
    );
    managers.retain(|_, owned| !owned.is_empty());
}

fn without_metadata(object: &Map<String, Value>) -> Map<String, Value> {
    let mut object = object.clone();
    object.remove("metadata");
    object.remove("status");
    object
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn apply(
        store: &mut ObjectStore,
        manager: &str,
        data: Value,
        force: bool,
        dry_run: bool,
    ) -> Result<Applied, ApplyError> {
        let manifest = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}, "data": data});
        let request = ApplyRequest {
            manifest: manifest.as_object().unwrap(),
            namespace: None,
            name: None,
            field_manager: manager,
            force,
            dry_run,
        };
        store.apply(&request, "2026-12-03T00:00:00Z", "uid-1".to_owned())
    }

    #[test]
    fn a_field_a_manager_stops_setting_is_removed_unless_another_manager_owns_it() {
        let mut store = ObjectStore::default();
        apply(&mut store, "a", json!({"x": "1", "y": "2"}), false, false).unwrap();
        apply(&mut store, "b", json!({"y": "2"}), false, false).unwrap();
        let after = apply(&mut store, "a", json!({"z": "3"}), false, false).unwrap();
        assert_eq!(after.object.content["data"], json!({"y": "2", "z": "3"}));
    }

    #[test]
    fn a_different_value_conflicts_the_same_value_is_shared_and_force_takes_over() {
        let mut store = ObjectStore::default();
        apply(&mut store, "a", json!({"x": "1"}), false, false).unwrap();
        let conflict = apply(&mut store, "b", json!({"x": "2"}), false, false).unwrap_err();
        assert_eq!(
            conflict,
            ApplyError::Conflict(vec![("data.x".into(), "a".into())])
        );
        let shared = apply(&mut store, "b", json!({"x": "1"}), false, false).unwrap();
        assert_eq!(shared.object.managers.len(), 2);
        let forced = apply(&mut store, "b", json!({"x": "2"}), true, false).unwrap();
        assert!(
            !forced.object.managers.contains_key("a"),
            "a owned nothing else"
        );
    }

    #[test]
    fn dry_runs_store_nothing_and_no_ops_keep_the_resource_version() {
        let mut store = ObjectStore::default();
        let first = apply(&mut store, "a", json!({"x": "1"}), false, false).unwrap();
        let dry = apply(&mut store, "a", json!({"x": "9"}), false, true).unwrap();
        assert_eq!(dry.object.content["data"]["x"], "9");
        let again = apply(&mut store, "a", json!({"x": "1"}), false, false).unwrap();
        assert_eq!(again.object.resource_version, first.object.resource_version);
        assert_eq!(again.object.generation, 1);
        let changed = apply(&mut store, "a", json!({"x": "2"}), false, false).unwrap();
        assert_eq!(
            (changed.object.generation, changed.object.resource_version),
            (2, 2)
        );
    }

    #[test]
    fn every_problem_of_a_manifest_is_named_at_once() {
        let manifest = json!({"metadata": {"name": "-bad-"}});
        let request = ApplyRequest {
            manifest: manifest.as_object().unwrap(),
            namespace: Some("Not_OK"),
            name: None,
            field_manager: "",
            force: false,
            dry_run: false,
        };
        let refused = ObjectStore::default().apply(&request, "now", String::new());
        let Err(ApplyError::Invalid(problems)) = refused else {
            panic!("{refused:?}")
        };
        assert_eq!(problems.len(), 5, "{problems:?}");
    }
}
