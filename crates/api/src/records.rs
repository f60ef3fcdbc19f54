//! A deployment's record as the owner's repo holds it, beside this device's declaration: what
//! the record inspector shows (at-uri, cid, the raw record, every validation problem) and what
//! the conflict view compares (the declared parts of both sides, `description` and
//! `contracts`, in one shape so they can be diffed field by field).
//!
//! Invariant: reading a record changes nothing, here or in the repo.

use serde::Serialize;
use serde_json::{Value, json};
use swdesk_core::declaration::rules::record_problems;
use swdesk_core::deployment::{Deployment, RecordFacts};
use swdesk_core::infra::{EphemeralInfraSpec, InfraSpec};
use swdesk_kernel::deployment_kind::DeploymentKind;
use swdesk_kernel::name::Name;
use swdesk_kernel::repo::StoredRecord;
use swdesk_store::{Store, StoreError};

/// The record of a deployment, read from the repo now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct RecordView {
    /// Its at-uri.
    pub uri: String,
    /// Its cid, as the repo answers.
    pub cid: String,
    /// The record, pretty JSON.
    pub value: String,
    /// What the record declares (`description`, `contracts`), pretty JSON; `None` when it
    /// cannot be read as a deployment.
    pub declared: Option<String>,
    /// What this device declares, in the same shape.
    pub local: String,
    /// Every problem of the record against its lexicon and the rules; empty when valid.
    pub problems: Vec<String>,
}

/// This device's side of the deployment `kind`/`name`: its record's at-uri (once bound) and
/// its declared parts, pretty JSON; `None` when there is no such deployment.
pub fn local_side(
    store: &Store,
    kind: DeploymentKind,
    name: &Name,
) -> Result<Option<(Option<String>, String)>, StoreError> {
    let found = match kind {
        DeploymentKind::Infra => store
            .get::<InfraSpec>(name)?
            .map(|object| (object.spec, object.status)),
        DeploymentKind::EphemeralInfra => store
            .get::<EphemeralInfraSpec>(name)?
            .map(|object| (object.spec.infra, object.status.infra)),
    };
    Ok(found.map(|(spec, status)| {
        let bound = status.record.map(|record| record.uri.to_string());
        let uri = bound.or_else(|| spec.record.uri.as_ref().map(ToString::to_string));
        (uri, declared(spec.description.as_ref(), &spec.contracts))
    }))
}

/// The view of `stored`, a record of `kind`, beside this device's `local` declaration.
pub fn view(kind: DeploymentKind, stored: &StoredRecord, local: String) -> RecordView {
    let problems = record_problems(kind, &stored.value)
        .iter()
        .map(ToString::to_string)
        .collect();
    let facts = match kind {
        DeploymentKind::Infra => InfraSpec::read(&stored.value),
        DeploymentKind::EphemeralInfra => EphemeralInfraSpec::read(&stored.value),
    };
    RecordView {
        uri: stored.uri.to_string(),
        cid: stored.cid.clone(),
        value: pretty(&stored.value),
        declared: facts
            .ok()
            .map(|facts: RecordFacts| declared(facts.description.as_ref(), &facts.contracts)),
        local,
        problems,
    }
}

fn declared(description: Option<&String>, contracts: &[swdesk_core::infra::Contract]) -> String {
    pretty(&json!({"description": description, "contracts": contracts}))
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}
