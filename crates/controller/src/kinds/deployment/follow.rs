//! A follower: a deployment another device writes (SPEC §3, "who runs a contract"), kept here
//! by an InfraCollection and bound to the writer's record. It shows the status the writer
//! publishes, pulls the declaration, and pushes the owner's edits of the declaration (a
//! release here is such an edit: `state: released` with a new `releaseRequestedAt`, which the
//! writer's controller acts on). It never runs contracts and never makes a final write: the
//! writer does both. While the writer's record shows a phase in motion, a follower looks at it
//! again every [`FOLLOW_REFRESH`] from a listing at most that old, so the owner sees a release
//! or a deployment progress on every device within about that (plus the writer's once-a-minute
//! progress writes); at rest it waits for the resync.
//!
//! A record followed read-only (`sync: Follow`: another account keeps it, as a gateway keeps a
//! tenant cluster's nodes as one Infra) is read from its keeper's repo at every run and
//! mirrored whole, declaration and status; nothing is ever written back. Either kind of
//! follower keeps the contract phase changes it saw ([`swdesk_core::seen`]): its timeline. A
//! cluster's node Infra marks each deployed entry no node claims as drifted
//! ([`swdesk_core::cluster_nodes`]), against the claims its spec keeps.
//!
//! Invariants: a follower's write replaces the declaration only, over exactly the record it
//! read, keeping the writer's status and every other field; a read-only follower writes
//! nothing to any repo and has no record writer child; a follower that goes leaves the record
//! as it is.

use std::time::Duration;

use swdesk_core::cluster_nodes::{claims_in, cluster_of, mark_unclaimed};
use swdesk_core::declaration::Declaration;
use swdesk_core::deployment::Deployment;
use swdesk_core::infra::BoundRecord;
use swdesk_core::seen;
use swdesk_core::sync::{SyncAction, SyncState};
use swdesk_kernel::repo::RecordRepo;
use swdesk_kernel::rollup::ObjectPhase;
use swdesk_store::ObjectOf;

use super::{DeploymentReconciler, Observed, child_written, invalid, set_sync};
use crate::context::ReconcileError;
use crate::runtime::Action;

/// How often a follower whose writer shows a phase in motion looks at the record again (a
/// resting one waits for the resync): one listing page, shared by every follower.
pub const FOLLOW_REFRESH: Duration = Duration::from_secs(20);

/// What a follower asks for after showing the writer's `phase`.
fn follow_again(phase: ObjectPhase) -> Action {
    if phase.is_waiting() {
        Action::RequeueAfter(FOLLOW_REFRESH)
    } else {
        Action::AwaitChange
    }
}

impl<D: Deployment, R: RecordRepo + 'static> DeploymentReconciler<D, R> {
    /// One run of a follower.
    pub(super) async fn follow(&self, object: &ObjectOf<D>) -> Result<Action, ReconcileError> {
        let now = self.context.now();
        let mut status = object.status.clone();
        let read_only = object.spec.infra().record.sync.is_read_only();
        let in_motion = D::status(&object.status).phase.is_waiting();
        if let Some(bound) = D::status(&object.status)
            .record
            .as_ref()
            .filter(|_| in_motion && !read_only)
        {
            // The writer's progress moves: read its record from a recent listing (a record
            // followed read-only is read afresh from its keeper's repo at every run).
            self.view
                .record_within(
                    D::DEPLOYMENT.collection(),
                    bound.rkey.as_str(),
                    FOLLOW_REFRESH,
                )
                .await?;
        }
        let Some(observed) = self.observe_or_report(object, &mut status).await? else {
            return Ok(Action::AwaitChange);
        };
        self.show_writer_status(object, &mut status, &observed);
        match self.decide(object, &observed, false)? {
            SyncAction::Pull if read_only => self.mirror(object, status, &observed).await,
            SyncAction::Pull => self.pull(object, status, &observed).await,
            SyncAction::Push => self.push_declaration(object, status, &observed).await,
            SyncAction::InSync => {
                let spec = Declaration::of_spec(object.spec.infra())
                    .hash()
                    .map_err(invalid)?;
                D::status_mut(&mut status).last_declaration_hash = Some(spec);
                set_sync(D::status_mut(&mut status), SyncState::Following, now);
                let again = follow_again(D::status(&status).phase);
                self.write_status(object, status).await?;
                Ok(again)
            }
            SyncAction::Delete => {
                let name = object.metadata.name.clone();
                self.context
                    .store(move |store| store.delete::<D>(&name, now))
                    .await?;
                Ok(Action::AwaitChange)
            }
            action => {
                let state = match action {
                    SyncAction::Ended => SyncState::RecordEnded,
                    SyncAction::Conflict => SyncState::Conflict,
                    _ => SyncState::RecordGone,
                };
                set_sync(D::status_mut(&mut status), state, now);
                self.write_status(object, status).await?;
                Ok(Action::AwaitChange)
            }
        }
    }

    /// The phase, contracts and end the writer's record shows, and the binding.
    fn show_writer_status(
        &self,
        object: &ObjectOf<D>,
        status: &mut D::Status,
        observed: &Observed,
    ) {
        let (Some(facts), Some(remote)) = (observed.facts.as_ref(), observed.remote.as_ref())
        else {
            return;
        };
        let infra = D::status_mut(status);
        let now = self.context.now();
        seen::note(
            &mut infra.seen,
            &infra.contracts,
            &facts.contract_statuses,
            now,
        );
        infra.phase = facts.phase;
        let before = std::mem::replace(&mut infra.contracts, facts.contract_statuses.clone());
        if cluster_of(&object.metadata).is_some() {
            let claims = claims_in(object.spec.infra());
            mark_unclaimed(&mut infra.contracts, &claims, &before, now);
        }
        infra.ended_at = facts.ended_at;
        infra.end_reason = facts.end_reason;
        infra.observed_generation = object.metadata.generation;
        if let Some(uri) = object.spec.infra().record.uri.clone() {
            infra.record = Some(BoundRecord {
                uri,
                cid: remote.cid.clone(),
                rkey: observed.rkey.clone(),
            });
        }
    }

    /// A record followed read-only changed: its declaration replaces the spec, with the
    /// status already shown; nothing is written anywhere but the store.
    async fn mirror(
        &self,
        object: &ObjectOf<D>,
        status: D::Status,
        observed: &Observed,
    ) -> Result<Action, ReconcileError> {
        let Some(facts) = observed.facts.as_ref() else {
            return Ok(Action::AwaitChange);
        };
        let again = follow_again(D::status(&status).phase);
        self.take_declaration(object, status, facts, SyncState::Following)
            .await?;
        Ok(again)
    }

    /// The owner edited the declaration here: write it into the writer's record, nothing else.
    async fn push_declaration(
        &self,
        object: &ObjectOf<D>,
        mut status: D::Status,
        observed: &Observed,
    ) -> Result<Action, ReconcileError> {
        let Some(remote) = observed.remote.as_ref() else {
            return Ok(Action::AwaitChange);
        };
        let value = D::with_declaration(&remote.value, object.spec.infra())?;
        let child = self.child(object).await?;
        self.apply_child(
            object,
            &observed.rkey,
            child.as_ref(),
            value,
            Some(remote.cid.clone()),
        )
        .await?;
        if let Some(child) = child.filter(child_written) {
            self.note_written(&observed.rkey, &child).await;
        }
        let now = self.context.now();
        set_sync(D::status_mut(&mut status), SyncState::Pushed, now);
        self.write_status(object, status).await?;
        Ok(Action::AwaitChange)
    }
}
