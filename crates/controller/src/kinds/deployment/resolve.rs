//! The owner's answer to a conflict (the deployment was edited here and in the repo since they
//! last agreed): keep this side's declaration, or take the record's. A record edited elsewhere in
//! fields only creation sets can only be answered by keeping this side (the other way out is
//! ending the deployment for a successor). Neither writes anything
//! itself: each moves the last agreed declaration hash so that the next reconcile's sync
//! decision is the one the owner chose (`Push` for keep-local, `Pull` for take-record).
//!
//! Invariants: a resolution only applies to a deployment in conflict with the record as it is
//! now (the record is read afresh); anything else is refused and changes nothing.

use std::sync::Arc;

use swdesk_core::declaration::{Declaration, genesis_changes};
use swdesk_kernel::name::Name;
use swdesk_kernel::repo::RecordRepo;

use crate::context::{Context, ReconcileError};
use crate::remote::RemoteView;
use swdesk_core::deployment::Deployment;
use swdesk_core::sync::Resolution;

/// Applies `resolution` to the deployment `name`; the caller schedules its reconcile.
pub async fn resolve_conflict<D: Deployment, R: RecordRepo + 'static>(
    context: &Context<R>,
    view: &Arc<RemoteView<R>>,
    name: &Name,
    resolution: Resolution,
) -> Result<(), ReconcileError> {
    let lookup = name.clone();
    let object = context
        .store(move |store| store.get::<D>(&lookup))
        .await?
        .ok_or_else(|| ReconcileError::Invalid(format!("there is no deployment {name}")))?;
    let bound = D::status(&object.status).record.clone().ok_or_else(|| {
        ReconcileError::Invalid(format!("{name} has no record to be in conflict with"))
    })?;
    let collection = D::DEPLOYMENT.collection();
    view.invalidate(collection).await;
    let remote = view
        .record(collection, bound.rkey.as_str())
        .await?
        .ok_or_else(|| ReconcileError::Invalid(format!("the record of {name} is gone")))?;
    let declared = D::read(&remote.value)?;
    let record = declared.hash;
    let spec = Declaration::of_spec(object.spec.infra())
        .hash()
        .map_err(|error| ReconcileError::Invalid(error.to_string()))?;
    let last = D::status(&object.status).last_declaration_hash;
    let genesis = genesis_changes(&object.spec.infra().contracts, &declared.contracts);
    if !genesis.is_empty() && resolution == Resolution::TakeRecord {
        return Err(ReconcileError::Invalid(format!(
            "{name}'s record changes fields only creation sets; keep this side, or end it and declare a successor"
        )));
    }
    let conflict = record != spec && last.is_none_or(|last| last != spec && last != record);
    if !conflict && genesis.is_empty() {
        return Err(ReconcileError::Invalid(format!(
            "{name} is not in conflict with its record"
        )));
    }
    let mut resolved = object;
    D::status_mut(&mut resolved.status).last_declaration_hash = Some(match resolution {
        Resolution::KeepLocal => record,
        Resolution::TakeRecord => spec,
    });
    context
        .store(move |store| store.update_status::<D>(&resolved))
        .await
        .map(drop)
}
