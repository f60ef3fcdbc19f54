//! The deployments as the window shows them, and the owner's intents on them. Rows
//! ([`DeploymentRow`]) for the list, a [`DeploymentDetail`] for one deployment, and the
//! intents: declare (create or edit, refused whole with every problem), move a contract
//! (stage, request, release, release again), end a deployment (its record stays, ended).
//!
//! Invariants: reading changes nothing; an intent is one compare-and-swap write of the object's
//! spec (retried when the controller wrote the status in between), so the controller sees it
//! as an ordinary change; a declaration with any problem writes nothing; a deployment another
//! device writes is edited the same way, and its writer acts on the edit (the writer rule).

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Value, json};
use swdesk_auction::compute::{ComputeContractObject, ComputeContractSpec};
use swdesk_auction::request::{request_problems, requested_problems};
use swdesk_core::collection::{
    CollectionStatus, EphemeralInfraCollectionSpec, InfraCollectionSpec,
};
use swdesk_core::declaration::genesis::contract_genesis_problems;
use swdesk_core::declaration::user_data_secret_problems;
use swdesk_core::declaration::{DeclaredObject, lifetime_change_problems, parse_object};
use swdesk_core::deployment::{Deployment, SyncSummary, Writer, writer};
use swdesk_core::infra::{ContractState, EphemeralInfraSpec, InfraSpec, InfraStatus};
use swdesk_kernel::deployment_kind::DeploymentKind;
use swdesk_kernel::name::Name;
use swdesk_kernel::object::{Metadata, Object};
use swdesk_kernel::timestamp::Timestamp;
use swdesk_lexicon::Problem;
use swdesk_store::{ObjectOf, Store, StoreError};

use crate::contracts::{self, ContractView, TimelineEntry};
pub use crate::intent::IntentError;
use crate::intent::{edit_declared, refuse_read_only};
use crate::node_infra;
use crate::serde_name as text;

/// A deployment's contracts in one phase.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct PhaseCount {
    /// The contract phase (`staged`, `requesting`, `deployed`, ...).
    pub phase: String,
    /// How many contracts are in it.
    pub count: u32,
}

/// One deployment in the list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct DeploymentRow {
    /// `Infra` or `EphemeralInfra`.
    pub kind: String,
    /// The object's name.
    pub name: String,
    /// What it is for.
    pub description: Option<String>,
    /// The rolled-up phase (`pending`, `staged`, `deploying`, `deployed`, ...).
    pub phase: String,
    /// Whether the phase waits for something (the market, a guest, a release).
    pub waiting: bool,
    /// Its contracts, counted by phase (phases with none left out).
    pub contracts: Vec<PhaseCount>,
    /// How many of its contracts drifted (the world disagrees with their records).
    pub drifting: u32,
    /// How it stands with its record.
    pub sync: SyncSummary,
    /// What the sync state means, in words, when there is more to say.
    pub sync_message: Option<String>,
    /// Whether this device writes it (runs its contracts); otherwise another device does, and
    /// actions here are record edits that device acts on.
    pub written_here: bool,
    /// The device that writes it, as the index says, when it is another one; for a record
    /// followed read-only, who keeps it ("the gateway of cluster dev").
    pub writer: Option<String>,
    /// Whether it follows a record another account keeps: shown as that record says, and
    /// changed only there (no edit, request, release or end here).
    pub read_only: bool,
    /// An EphemeralInfra's end (RFC 3339).
    pub expires_at: Option<String>,
    /// When it ended (RFC 3339).
    pub ended_at: Option<String>,
    /// Its record, once bound.
    pub record_uri: Option<String>,
    /// The object's uid (a deployment made again under the same name has another).
    pub uid: String,
    /// The object's count of writes (saturating): of two rows of the same object, the one with
    /// the higher version is the newer, whatever order they arrive in.
    pub version: u32,
}

/// Everything the window shows of one deployment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct DeploymentDetail {
    /// Its row.
    pub row: DeploymentRow,
    /// Every contract.
    pub contracts: Vec<ContractView>,
    /// The record's cid as last bound.
    pub record_cid: Option<String>,
    /// The declaration as the owner edits it, pretty JSON: `{kind, metadata: {name, labels},
    /// spec}` (the record binding left out).
    pub declaration: String,
    /// The local object's status, pretty JSON.
    pub status: String,
    /// Every contract's phase changes, newest first.
    pub timeline: Vec<TimelineEntry>,
    /// Its secrets (never their values) and what each guest has of them.
    pub secrets: Vec<crate::secrets::SecretView>,
}

/// The name of the collections that follow the account's own index.
pub const OWN_INDEX: &str = "own-index";

/// What the owner asks of one contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub enum ContractIntent {
    /// Back to declared only (no request for proposals).
    Stage,
    /// Rent a guest: run the request-for-proposals flow.
    Request,
    /// Release the guest (again, when a release failed: a newer `releaseRequestedAt`).
    Release,
}

/// Every deployment in the store, Infra and EphemeralInfra, by name.
pub fn rows(store: &Store) -> Result<Vec<DeploymentRow>, StoreError> {
    let writers = writers(store)?;
    let mut rows: Vec<DeploymentRow> = store
        .list::<InfraSpec>()?
        .iter()
        .map(|object| row(object, &writers))
        .collect();
    rows.extend(
        store
            .list::<EphemeralInfraSpec>()?
            .iter()
            .map(|object| row(object, &writers)),
    );
    rows.sort_by(|a, b| a.name.cmp(&b.name).then(a.kind.cmp(&b.kind)));
    Ok(rows)
}

/// One deployment, or `None` when there is none of that kind and name.
pub fn detail(
    store: &Store,
    kind: DeploymentKind,
    name: &Name,
) -> Result<Option<DeploymentDetail>, StoreError> {
    let writers = writers(store)?;
    let computes = store.list::<ComputeContractSpec>()?;
    Ok(match kind {
        DeploymentKind::Infra => store
            .get::<InfraSpec>(name)?
            .map(|object| describe(&object, &writers, &computes)),
        DeploymentKind::EphemeralInfra => store
            .get::<EphemeralInfraSpec>(name)?
            .map(|object| describe(&object, &writers, &computes)),
    })
}

/// Creates the declared deployment, or replaces the declaration of the one of that name;
/// refused whole, writing nothing, when it has any problem.
pub fn declare(
    store: &Store,
    declaration: &Value,
    now: Timestamp,
) -> Result<DeploymentRow, IntentError> {
    let writers = writers(store)?;
    let declared = parse_object(declaration).map_err(IntentError::Invalid)?;
    let contracts = match &declared {
        DeclaredObject::Infra(declared) => &declared.spec.contracts,
        DeclaredObject::EphemeralInfra(declared) => &declared.spec.infra.contracts,
    };
    let mut problems = requested_problems(contracts);
    problems.extend(user_data_secret_problems(contracts));
    if !problems.is_empty() {
        return Err(IntentError::Invalid(problems));
    }
    match declared {
        DeclaredObject::Infra(declared) => {
            let object = upsert(
                store,
                declared.name,
                declared.labels,
                declared.spec,
                now,
                |old: &InfraSpec, new: &InfraSpec| {
                    contract_genesis_problems(&old.contracts, &new.contracts)
                },
            )?;
            Ok(row(&object, &writers))
        }
        DeclaredObject::EphemeralInfra(declared) => {
            let object = upsert(
                store,
                declared.name,
                declared.labels,
                declared.spec,
                now,
                lifetime_change_problems,
            )?;
            Ok(row(&object, &writers))
        }
    }
}

/// Moves the contract `contract` of the deployment as the owner asks.
pub fn set_contract(
    store: &Store,
    kind: DeploymentKind,
    name: &Name,
    contract: &str,
    intent: ContractIntent,
    now: Timestamp,
) -> Result<(), IntentError> {
    edit_declared(store, kind, name, |spec| {
        apply_intent(spec, contract, intent, now)
    })
}

/// The owner's way out of a record changed elsewhere in fields only creation sets: a successor
/// deployment, `<name>-2` (or the next free number), declared as the record is (`record`, a
/// record of `kind`), and this one ended (its record gets its final write and stays). Refused
/// whole, writing nothing, when the record cannot be read as a deployment or the successor's
/// declaration has a problem.
pub fn succeed(
    store: &Store,
    kind: DeploymentKind,
    name: &Name,
    record: &Value,
    now: Timestamp,
) -> Result<DeploymentRow, IntentError> {
    let read = match kind {
        DeploymentKind::Infra => InfraSpec::read(record),
        DeploymentKind::EphemeralInfra => EphemeralInfraSpec::read(record),
    };
    let facts = read.map_err(|error| IntentError::Refused(error.to_string()))?;
    let mut spec = match kind {
        DeploymentKind::Infra => successor_spec::<InfraSpec>(store, name)?,
        DeploymentKind::EphemeralInfra => successor_spec::<EphemeralInfraSpec>(store, name)?,
    };
    if let Some(fields) = spec.as_object_mut() {
        fields.remove("description");
        if let Some(description) = facts.description {
            fields.insert("description".to_owned(), json!(description));
        }
        fields.insert("contracts".to_owned(), json!(facts.contracts));
    }
    let successor = free_successor_name(store, kind, name)?;
    let declaration = json!({
        "kind": format!("{kind:?}"),
        "metadata": {"name": successor.as_str()},
        "spec": spec,
    });
    let row = declare(store, &declaration, now)?;
    end(store, kind, name, now)?;
    Ok(row)
}

/// The declared spec of `name` without its record binding, as JSON, for a successor.
fn successor_spec<D: Deployment>(store: &Store, name: &Name) -> Result<Value, IntentError> {
    let object = store
        .get::<D>(name)?
        .ok_or_else(|| IntentError::NotFound(format!("there is no deployment {name}")))?;
    let mut spec = serde_json::to_value(&object.spec).unwrap_or_default();
    if let Some(fields) = spec.as_object_mut() {
        fields.remove("record");
    }
    Ok(spec)
}

/// `<name>-2`, `<name>-3`, ...: the first that names no deployment of `kind` yet.
fn free_successor_name(
    store: &Store,
    kind: DeploymentKind,
    name: &Name,
) -> Result<Name, IntentError> {
    let base = name.as_str().get(..60).unwrap_or(name.as_str());
    for number in 2..100 {
        let Ok(candidate) = Name::parse(&format!("{}-{number}", base.trim_end_matches('-'))) else {
            continue;
        };
        let taken = match kind {
            DeploymentKind::Infra => store.get::<InfraSpec>(&candidate)?.is_some(),
            DeploymentKind::EphemeralInfra => {
                store.get::<EphemeralInfraSpec>(&candidate)?.is_some()
            }
        };
        if !taken {
            return Ok(candidate);
        }
    }
    Err(IntentError::Refused(format!(
        "{name} has 98 successors already; end some of them first"
    )))
}

/// Ends the deployment: its contracts are released, then its record gets its final write and
/// stays, ended. A deployment another device writes cannot be ended here.
pub fn end(
    store: &Store,
    kind: DeploymentKind,
    name: &Name,
    now: Timestamp,
) -> Result<(), IntentError> {
    match kind {
        DeploymentKind::Infra => end_one::<InfraSpec>(store, name, now),
        DeploymentKind::EphemeralInfra => end_one::<EphemeralInfraSpec>(store, name, now),
    }
}

fn end_one<D: Deployment>(store: &Store, name: &Name, now: Timestamp) -> Result<(), IntentError> {
    let object = store
        .get::<D>(name)?
        .ok_or_else(|| IntentError::NotFound(format!("there is no deployment {name}")))?;
    match writer(&object.metadata, object.spec.infra()) {
        Writer::Here => {
            store.delete::<D>(name, now)?;
            Ok(())
        }
        Writer::OtherDevice => Err(IntentError::Refused(format!(
            "{name} is written by another device; end it there (or release its contracts here)"
        ))),
        Writer::RecordKeeper => refuse_read_only(&object),
    }
}

fn apply_intent(
    spec: &mut InfraSpec,
    contract: &str,
    intent: ContractIntent,
    now: Timestamp,
) -> Result<(), IntentError> {
    let (index, declared) = spec
        .contracts
        .iter_mut()
        .enumerate()
        .find(|(_, declared)| declared.name == contract)
        .ok_or_else(|| IntentError::NotFound(format!("there is no contract {contract}")))?;
    match intent {
        ContractIntent::Stage => {
            declared.state = ContractState::Staged;
            declared.release_requested_at = None;
        }
        ContractIntent::Request => {
            let problems = request_problems(index, declared);
            if !problems.is_empty() {
                return Err(IntentError::Invalid(problems));
            }
            declared.state = ContractState::Requested;
            declared.release_requested_at = None;
        }
        ContractIntent::Release => {
            declared.state = ContractState::Released;
            declared.release_requested_at = Some(now.to_rfc3339());
        }
    }
    Ok(())
}

/// Creates `name` with `spec`, or replaces the declaration of the one there (its binding and
/// local fields kept); `refuse` names the problems of changing `old` into `new`.
fn upsert<D>(
    store: &Store,
    name: Name,
    labels: BTreeMap<String, String>,
    spec: D,
    now: Timestamp,
    refuse: impl Fn(&D, &D) -> Vec<Problem>,
) -> Result<ObjectOf<D>, IntentError>
where
    D: Deployment,
    D::Status: Default,
{
    loop {
        let Some(mut object) = store.get::<D>(&name)? else {
            let uid = swdesk_store::random_uid()
                .map_err(|error| IntentError::Refused(error.to_string()))?;
            let mut metadata = Metadata::new(name.clone(), uid, now);
            metadata.labels = labels.clone();
            let object = Object {
                metadata,
                spec,
                status: D::Status::default(),
            };
            return Ok(store.create::<D>(&object)?);
        };
        refuse_read_only(&object)?;
        let problems = refuse(&object.spec, &spec);
        if !problems.is_empty() {
            return Err(IntentError::Invalid(problems));
        }
        let mut declared = spec.clone();
        *declared.infra_mut() = InfraSpec {
            record: object.spec.infra().record.clone(),
            ..declared.infra().clone()
        };
        object.spec = declared;
        object.metadata.labels.extend(labels.clone());
        match store.replace::<D>(&object) {
            Err(StoreError::Conflict { .. }) => continue,
            result => return Ok(result?),
        }
    }
}

/// The writer named by the index for each followed deployment, by name.
fn writers(store: &Store) -> Result<BTreeMap<String, String>, StoreError> {
    let mut writers = BTreeMap::new();
    let Ok(own) = Name::parse(OWN_INDEX) else {
        return Ok(writers);
    };
    let mut add = |status: Option<CollectionStatus>| {
        for entry in status.map(|status| status.following).unwrap_or_default() {
            writers.insert(entry.name, entry.writer);
        }
    };
    add(store
        .get::<InfraCollectionSpec>(&own)?
        .map(|object| object.status));
    add(store
        .get::<EphemeralInfraCollectionSpec>(&own)?
        .map(|object| object.status));
    Ok(writers)
}

fn row<D: Deployment>(object: &ObjectOf<D>, writers: &BTreeMap<String, String>) -> DeploymentRow {
    let status = D::status(&object.status);
    let (sync, sync_message) = sync_state(object);
    let written_by = writer(&object.metadata, object.spec.infra());
    let written_here = written_by == Writer::Here;
    DeploymentRow {
        kind: format!("{:?}", D::KIND),
        name: object.metadata.name.to_string(),
        description: object.spec.infra().description.clone(),
        phase: text(&status.phase),
        waiting: status.phase.is_waiting(),
        drifting: u32::try_from(
            status
                .contracts
                .iter()
                .filter(|contract| contract.drift.is_some())
                .count(),
        )
        .unwrap_or(u32::MAX),
        contracts: phase_counts(status),
        sync,
        sync_message,
        written_here,
        writer: match written_by {
            Writer::Here => None,
            Writer::OtherDevice => writers.get(object.metadata.name.as_str()).cloned(),
            Writer::RecordKeeper => Some(node_infra::keeper(&object.metadata, object.spec.infra())),
        },
        read_only: written_by == Writer::RecordKeeper,
        expires_at: D::expires_at(object).map(Timestamp::to_rfc3339),
        ended_at: status.ended_at.map(Timestamp::to_rfc3339),
        record_uri: status.record.as_ref().map(|bound| bound.uri.to_string()),
        uid: object.metadata.uid.to_string(),
        version: u32::try_from(object.metadata.resource_version).unwrap_or(u32::MAX),
    }
}

fn describe<D: Deployment>(
    object: &ObjectOf<D>,
    writers: &BTreeMap<String, String>,
    computes: &[ComputeContractObject],
) -> DeploymentDetail {
    let status = D::status(&object.status);
    let owned: Vec<&ComputeContractObject> = computes
        .iter()
        .filter(|compute| owned_by(compute, object))
        .collect();
    let compute_of = |name: &str| {
        owned
            .iter()
            .copied()
            .find(|compute| compute.spec.contract.as_str() == name)
    };
    let contracts = object
        .spec
        .infra()
        .contracts
        .iter()
        .map(|declared| {
            let seen = status
                .contracts
                .iter()
                .find(|seen| seen.name == declared.name);
            let mut view = contracts::contract_view(declared, seen, compute_of(&declared.name));
            if view.history.is_empty() {
                view.history = contracts::seen_history(&status.seen, &declared.name);
            }
            view
        })
        .collect();
    let mut timeline = contracts::timeline(
        owned
            .iter()
            .map(|compute| (compute.spec.contract.as_str(), *compute)),
    );
    if timeline.is_empty() {
        timeline = contracts::seen_timeline(&status.seen);
    }
    let secrets = crate::secrets::views(
        object.spec.infra(),
        &owned
            .iter()
            .map(|compute| (compute.spec.contract.to_string(), &compute.status))
            .collect::<Vec<_>>(),
    );
    let mut spec = serde_json::to_value(&object.spec).unwrap_or_default();
    if let Some(fields) = spec.as_object_mut() {
        fields.remove("record");
    }
    DeploymentDetail {
        row: row(object, writers),
        contracts,
        record_cid: status.record.as_ref().map(|bound| bound.cid.clone()),
        declaration: pretty(&json!({
            "kind": format!("{:?}", D::KIND),
            "metadata": {"name": object.metadata.name.as_str(), "labels": object.metadata.labels},
            "spec": spec,
        })),
        status: pretty(&object.status),
        timeline,
        secrets,
    }
}

fn owned_by<D: Deployment>(compute: &ComputeContractObject, object: &ObjectOf<D>) -> bool {
    compute
        .metadata
        .owner_refs
        .iter()
        .any(|owner| owner.uid == object.metadata.uid)
}

fn sync_state<D: Deployment>(object: &ObjectOf<D>) -> (SyncSummary, Option<String>) {
    let status = D::status(&object.status);
    let summary = SyncSummary::of(status, object.metadata.is_deleting());
    let message = match summary {
        SyncSummary::Ended | SyncSummary::Ending => None,
        _ => status.sync.as_ref().and_then(|sync| sync.state.message()),
    };
    (summary, message)
}

fn phase_counts(status: &InfraStatus) -> Vec<PhaseCount> {
    let mut counts: BTreeMap<_, u32> = BTreeMap::new();
    for contract in &status.contracts {
        *counts.entry(contract.phase).or_default() += 1;
    }
    counts
        .into_iter()
        .map(|(phase, count)| PhaseCount {
            phase: text(&phase),
            count,
        })
        .collect()
}

fn pretty(value: &impl Serialize) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}

/// One deployment changed in the store: its row now, or `None` once it is gone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct DeploymentChange {
    /// `Infra` or `EphemeralInfra`.
    pub kind: String,
    /// The deployment's name.
    pub name: String,
    /// Its row, or `None` when it left the store.
    pub row: Option<DeploymentRow>,
}

/// The change of the deployment `kind`/`name` as the list shows it.
pub fn change(
    store: &Store,
    kind: DeploymentKind,
    name: &Name,
) -> Result<DeploymentChange, StoreError> {
    let writers = writers(store)?;
    change_with(store, &writers, kind, name)
}

/// The changes of several deployments as the list shows them, reading the writers once (a
/// burst of store writes comes to one read per deployment).
pub fn changes<'a>(
    store: &Store,
    changed: impl IntoIterator<Item = &'a (DeploymentKind, Name)>,
) -> Result<Vec<DeploymentChange>, StoreError> {
    let writers = writers(store)?;
    changed
        .into_iter()
        .map(|(kind, name)| change_with(store, &writers, *kind, name))
        .collect()
}

fn change_with(
    store: &Store,
    writers: &BTreeMap<String, String>,
    kind: DeploymentKind,
    name: &Name,
) -> Result<DeploymentChange, StoreError> {
    let row = match kind {
        DeploymentKind::Infra => store
            .get::<InfraSpec>(name)?
            .map(|object| row(&object, writers)),
        DeploymentKind::EphemeralInfra => store
            .get::<EphemeralInfraSpec>(name)?
            .map(|object| row(&object, writers)),
    };
    Ok(DeploymentChange {
        kind: format!("{:?}", kind.kind()),
        name: name.to_string(),
        row,
    })
}

/// The deployments that own the ComputeContracts `names` (those still in the store).
pub fn owners_of_contracts<'a>(
    store: &Store,
    names: impl IntoIterator<Item = &'a Name>,
) -> Result<Vec<(DeploymentKind, Name)>, StoreError> {
    let mut owners = Vec::new();
    for name in names {
        let Some(contract) = store.get::<ComputeContractSpec>(name)? else {
            continue;
        };
        owners.extend(
            contract
                .metadata
                .owner_refs
                .iter()
                .filter_map(|owner| Some((deployment_kind(owner.kind)?, owner.name.clone()))),
        );
    }
    Ok(owners)
}

/// The deployment kind of a store kind, if it is one.
pub fn deployment_kind(kind: swdesk_kernel::object::Kind) -> Option<DeploymentKind> {
    match kind {
        swdesk_kernel::object::Kind::Infra => Some(DeploymentKind::Infra),
        swdesk_kernel::object::Kind::EphemeralInfra => Some(DeploymentKind::EphemeralInfra),
        _ => None,
    }
}
