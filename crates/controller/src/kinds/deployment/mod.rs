//! The deployment reconciler, one for Infra and one for EphemeralInfra ([`Deployment`]): it
//! publishes the deployment as a record in the owner's repo (through a child AtprotoRecord,
//! never directly), pulls edits made elsewhere onto the spec, stops at a conflict, keeps the
//! index at `self`, runs the contracts as ComputeContracts, and ends the deployment with a
//! final write the record keeps for good.
//!
//! One run, for a deployment that lives: converge the contracts (lifecycle table), roll up the
//! phase, bind the rkey (successors past ended or expired records), read the record (from the
//! shared [`RemoteView`]), decide the one sync action (`swdesk_core::sync`), act on it, queue
//! the index entry, write the status if it changed. A deployment that reached its end (deleted,
//! or an EphemeralInfra at its deadline or completion) releases every contract, waits until no
//! guest is held, makes the final write (`ended`, `endedAt`, `endReason`), moves its index entry
//! to `recentEnded`, and only then lets the object go.
//!
//! Invariants: the record is written only by the child AtprotoRecord (swap cid); a record edited
//! elsewhere is pulled, or shown as a conflict, never overwritten; an edit elsewhere of a field
//! only creation sets (`swdesk_core::declaration::genesis`) is neither applied nor reverted
//! until the owner chooses; status-only changes reach the
//! record at most once a minute (`swdesk_core::progress`); a record that does not read as its
//! kind is shown with its problems and left untouched; an ended record is never written again;
//! nothing is deleted from the repo.

mod contracts;
mod follow;
mod resolve;

use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use swdesk_core::declaration::{Declaration, DeclarationHash, genesis_changes, record_problems};
use swdesk_core::deployment::{Deployment, RecordFacts, Writer, record_child_name, writer};
use swdesk_core::infra::{BoundRecord, EndReason, InfraStatus};
use swdesk_core::progress::{self, Changes, Write};
use swdesk_core::record::{AtprotoRecordObject, AtprotoRecordSpec, DeletionPolicy};
use swdesk_core::sync::{
    self, RemoteRecord as Remote, SyncAction, SyncInputs, SyncState, SyncStatus,
};
use swdesk_kernel::name::Name;
use swdesk_kernel::object::{Metadata, Object};
use swdesk_kernel::repo::RecordRepo;
use swdesk_kernel::rkey::{self, Occupant, Probe, Rkey, Start, Succession};
use swdesk_kernel::rollup::{self, ObjectFacts};
use swdesk_kernel::timestamp::Timestamp;
use swdesk_kernel::uri::RecordUri;
use swdesk_store::{ObjectOf, StoreError, random_uid};

pub use resolve::resolve_conflict;

use crate::context::{Context, ReconcileError};
use crate::index_writer::{IndexOp, IndexWriter};
use crate::remote::{RemoteRecord, RemoteView};
use crate::runtime::finalizer::CleanupProgress;
use crate::runtime::{Action, ObjectKey, Reconciler};

/// The finalizer a deployment holds until its final write is done.
pub const FINALIZER: &str = "infra.socialweb.computer/final-write";
/// How soon a deployment that waits (contracts, its record being written) is looked at again.
const WAIT: Duration = Duration::from_secs(15);

/// Reconciles the deployments of kind `D`.
#[derive(Debug)]
pub struct DeploymentReconciler<D, R> {
    context: Context<R>,
    view: Arc<RemoteView<R>>,
    index: Arc<IndexWriter<R>>,
    kind: PhantomData<fn() -> D>,
}

/// What one run found out about the record.
#[derive(Debug)]
struct Observed {
    rkey: Rkey,
    remote: Option<RemoteRecord>,
    facts: Option<RecordFacts>,
}

impl<D: Deployment, R: RecordRepo + 'static> DeploymentReconciler<D, R> {
    /// A reconciler over `context`, reading records through `view`, writing the index with
    /// `index`.
    pub fn new(context: Context<R>, view: Arc<RemoteView<R>>, index: Arc<IndexWriter<R>>) -> Self {
        Self {
            context,
            view,
            index,
            kind: PhantomData,
        }
    }

    /// One run for a deployment that has not ended.
    async fn apply(&self, object: &ObjectOf<D>) -> Result<Action, ReconcileError> {
        if writer(&object.metadata, object.spec.infra()) != Writer::Here {
            return self.follow(object).await;
        }
        if D::status(&object.status).ended_at.is_some() {
            return Ok(Action::AwaitChange);
        }
        let now = self.context.now();
        let contracts = contracts::converge(&self.context, object, None).await?;
        if let Some(reason) = D::end(object, &contracts.phases(), now) {
            return self.end(object, reason).await.map(progress_action);
        }
        let mut status = object.status.clone();
        self.roll_up(object, &mut status, &contracts, ObjectFacts::default());
        let child = self.child(object).await?;
        let written = child.as_ref().filter(|child| child_written(child));
        if let Some(child) = written {
            // The view learns of our last write before it is read (unless it heard of a later
            // commit of the record meanwhile: that stays).
            self.note_written(&child.spec.rkey, child).await;
        }
        let Some(observed) = self.observe_or_report(object, &mut status).await? else {
            return Ok(Action::AwaitChange);
        };
        let ours = repo_holds_our_write(child.as_ref(), &observed);
        let agreed = match observed.facts.as_ref().filter(|_| ours) {
            // Our own write is an agreed declaration: kept, so a view that has not seen our
            // next write yet reads as "only this side changed", never as a conflict.
            Some(facts) => Some(facts.hash),
            // Our last write, not bound yet, is the newest declaration both sides had: a record
            // other than it was written over it (another device's edit landing while ours was
            // in flight), and is pulled when nothing changed here since.
            None => written.and_then(|child| unbound_write::<D>(&status, child)),
        };
        if let Some(hash) = agreed {
            D::status_mut(&mut status).last_declaration_hash = Some(hash);
        }
        let action = self.decide(object, &observed, ours)?;
        self.act(object, status, &observed, action).await
    }

    /// The status fields every run recomputes: contracts, phase, generation.
    fn roll_up(
        &self,
        object: &ObjectOf<D>,
        status: &mut D::Status,
        contracts: &contracts::Contracts,
        facts: ObjectFacts,
    ) {
        let infra = D::status_mut(status);
        infra.contracts = contracts.statuses.clone();
        infra.phase = rollup::rollup(&contracts.phases(), facts);
        infra.observed_generation = object.metadata.generation;
    }

    /// The record as the repo holds it, or `None` once the status says why it cannot be used:
    /// `Offline` when the repo cannot be read (the error is returned too, so the run is retried
    /// with backoff), `RecordInvalid` with every problem when it does not validate.
    async fn observe_or_report(
        &self,
        object: &ObjectOf<D>,
        status: &mut D::Status,
    ) -> Result<Option<Observed>, ReconcileError> {
        let now = self.context.now();
        match self.observe(object).await {
            Err(ReconcileError::Repo(error)) if error.is_transient() => {
                let state = SyncState::Offline {
                    error: error.to_string(),
                };
                set_sync(D::status_mut(status), state, now);
                self.write_status(object, status.clone()).await?;
                Err(ReconcileError::Repo(error))
            }
            Err(error) => Err(error),
            Ok(Ok(observed)) => Ok(Some(observed)),
            Ok(Err(problems)) => {
                let state = SyncState::RecordInvalid { problems };
                set_sync(D::status_mut(status), state, now);
                self.write_status(object, status.clone()).await?;
                Ok(None)
            }
        }
    }

    /// Binds the rkey and reads the record there; a record that does not read as its kind is
    /// the inner error, with what is wrong with it.
    async fn observe(
        &self,
        object: &ObjectOf<D>,
    ) -> Result<Result<Observed, String>, ReconcileError> {
        let rkey = self.bind(object).await?;
        let remote = self.read_record(object, &rkey).await?;
        let facts = match remote
            .as_ref()
            .map(|record| read_valid::<D>(&record.value))
            .transpose()
        {
            Ok(facts) => facts,
            Err(problems) => return Ok(Err(problems)),
        };
        Ok(Ok(Observed {
            rkey,
            remote,
            facts,
        }))
    }

    /// The record at `rkey`: from the owner's shared listing, or, for a record another
    /// account keeps, from that account's repo.
    async fn read_record(
        &self,
        object: &ObjectOf<D>,
        rkey: &Rkey,
    ) -> Result<Option<RemoteRecord>, ReconcileError> {
        let owner = self.context.repo().owner();
        match (object.spec.infra().record.uri.as_ref()).filter(|uri| uri.authority() != owner) {
            Some(uri) => Ok(self
                .context
                .repo()
                .get(uri)
                .await?
                .map(|stored| RemoteRecord {
                    cid: stored.cid,
                    value: stored.value,
                })),
            None => Ok(self
                .view
                .record(D::DEPLOYMENT.collection(), rkey.as_str())
                .await?),
        }
    }

    /// The rkey of the deployment: the one declared, the one still bound, or the first of its
    /// succession whose record is neither ended nor expired.
    async fn bind(&self, object: &ObjectOf<D>) -> Result<Rkey, ReconcileError> {
        let succession = Succession::new(&object.metadata.name, &object.metadata.uid);
        let declared = object.spec.infra().record.uri.as_ref().map(RecordUri::rkey);
        let stored = D::status(&object.status)
            .record
            .as_ref()
            .map(|bound| &bound.rkey);
        match rkey::start(&succession, declared, stored) {
            Start::Follow(rkey) | Start::Keep(rkey) => Ok(rkey),
            Start::Fresh => self.probe(&succession).await,
        }
    }

    async fn probe(&self, succession: &Succession) -> Result<Rkey, ReconcileError> {
        let now = self.context.now();
        let mut n = 0;
        loop {
            let candidate = succession.nth(n).map_err(invalid)?;
            let remote = self
                .view
                .record(D::DEPLOYMENT.collection(), candidate.as_str())
                .await?;
            let occupant = match remote.as_ref().map(|record| D::read(&record.value)) {
                None => Occupant::Free,
                Some(Ok(facts)) => Occupant::Record {
                    ended: facts.ended(),
                    expires_at: facts.expires_at,
                },
                Some(Err(_)) => Occupant::Record {
                    ended: true,
                    expires_at: None,
                },
            };
            match rkey::probe(succession, n, occupant, now).map_err(invalid)? {
                Probe::Bind(rkey) => return Ok(rkey),
                Probe::Next(_) => n += 1,
            }
        }
    }

    /// The sync action for what was observed; a record that is our own last write counts as
    /// agreed (an edit here since then is pushed, never taken for a conflict).
    fn decide(
        &self,
        object: &ObjectOf<D>,
        observed: &Observed,
        ours: bool,
    ) -> Result<SyncAction, ReconcileError> {
        let (rkey, facts) = (&observed.rkey, observed.facts.as_ref());
        let spec = Declaration::of_spec(object.spec.infra())
            .hash()
            .map_err(invalid)?;
        let status = D::status(&object.status);
        let record = facts.map_or(Remote::Missing, |facts| Remote::Present {
            hash: facts.hash,
            ended: facts.ended(),
        });
        Ok(sync::decide(&SyncInputs {
            rkey,
            record,
            ever_bound: status.record.is_some(),
            spec,
            last: facts
                .filter(|_| ours)
                .map(|facts| facts.hash)
                .or(status.last_declaration_hash),
            mode: object.spec.infra().record.sync,
        }))
    }

    async fn act(
        &self,
        object: &ObjectOf<D>,
        mut status: D::Status,
        observed: &Observed,
        action: SyncAction,
    ) -> Result<Action, ReconcileError> {
        let now = self.context.now();
        match action {
            SyncAction::Create | SyncAction::Push | SyncAction::InSync => {
                self.publish(object, status, observed, action).await
            }
            SyncAction::Pull => self.pull(object, status, observed).await,
            SyncAction::Conflict | SyncAction::Absent => {
                let state = match action {
                    SyncAction::Conflict => SyncState::Conflict,
                    _ => SyncState::RecordGone,
                };
                set_sync(D::status_mut(&mut status), state, now);
                self.write_status(object, status).await?;
                Ok(Action::AwaitChange)
            }
            SyncAction::Delete => {
                let name = object.metadata.name.clone();
                self.context
                    .store(move |store| store.delete::<D>(&name, now))
                    .await?;
                Ok(Action::AwaitChange)
            }
            SyncAction::Ended => {
                let facts = observed.facts.as_ref();
                let infra = D::status_mut(&mut status);
                infra.ended_at = facts.and_then(|facts| facts.ended_at).or(Some(now));
                infra.end_reason = facts
                    .and_then(|facts| facts.end_reason)
                    .or(Some(EndReason::Deleted));
                infra.phase = rollup::ObjectPhase::Ended;
                set_sync(infra, SyncState::RecordEnded, now);
                self.write_status(object, status).await?;
                Ok(Action::AwaitChange)
            }
            SyncAction::Reserved => {
                set_sync(D::status_mut(&mut status), SyncState::ReservedKey, now);
                self.write_status(object, status).await?;
                Ok(Action::AwaitChange)
            }
        }
    }

    /// Create, Push, or InSync: the record should hold the spec and `status` (status-only
    /// changes at most once a minute); once the child wrote it, the binding is stored. The
    /// object's own status is stored at once whenever it differs from `stored`'s, the contracts
    /// rolled up included: only the record waits for its minute.
    async fn publish(
        &self,
        stored: &ObjectOf<D>,
        status: D::Status,
        observed: &Observed,
        action: SyncAction,
    ) -> Result<Action, ReconcileError> {
        let mut current = stored.clone();
        current.status = status;
        let object = &current;
        let now = self.context.now();
        let created_at = observed
            .facts
            .as_ref()
            .and_then(|facts| facts.created_at)
            .unwrap_or(object.metadata.created_at);
        let previous = observed.remote.as_ref().map(|record| &record.value);
        let wanted = D::record(object, created_at, previous)?;
        let child = self.child(object).await?;
        let written = child.as_ref().map(|child| &child.spec.value);
        let in_repo = observed.remote.as_ref().map(|record| &record.value);
        let changes = Changes {
            declaration: action != SyncAction::InSync
                && (declaration_differs::<D>(written, &wanted)
                    || declaration_differs::<D>(in_repo, &wanted)),
            status: written != Some(&wanted),
            ended: false,
        };
        let last_write = child.as_ref().and_then(|child| child.status.last_write_at);
        let state = publish_state::<D>(child.as_ref(), &wanted);
        let mut requeue = Action::AwaitChange;
        match progress::when_to_write(last_write, now, changes) {
            Write::Now => {
                let swap = observed.remote.as_ref().map(|record| record.cid.clone());
                self.apply_child(object, &observed.rkey, child.as_ref(), wanted, swap)
                    .await?
            }
            Write::At(due) => requeue = Action::RequeueAfter(due.since(now)),
            Write::Never => {}
        }
        let mut status = object.status.clone();
        if let Some(child) = child.as_ref().filter(|child| child_written(child)) {
            self.bind_status(object, &mut status, child, observed).await;
        }
        set_sync(D::status_mut(&mut status), state, now);
        self.write_status(stored, status).await?;
        Ok(requeue)
    }

    /// Records a written child in the status (binding, last agreed declaration) and the index.
    async fn bind_status(
        &self,
        object: &ObjectOf<D>,
        status: &mut D::Status,
        child: &AtprotoRecordObject,
        observed: &Observed,
    ) {
        let (Some(uri), Some(cid)) = (child.status.uri.as_deref(), child.status.cid.clone()) else {
            return;
        };
        let Ok(uri) = RecordUri::parse(uri) else {
            return;
        };
        let written_hash = D::read(&child.spec.value).ok().map(|facts| facts.hash);
        let infra = D::status_mut(status);
        infra.record = Some(BoundRecord {
            uri,
            cid: cid.clone(),
            rkey: observed.rkey.clone(),
        });
        infra.last_declaration_hash = written_hash.or(infra.last_declaration_hash);
        self.note_written(&observed.rkey, child).await;
        let created_at = D::read(&child.spec.value)
            .ok()
            .and_then(|facts| facts.created_at)
            .unwrap_or(object.metadata.created_at);
        let _committed_later = self.index.submit(IndexOp::Live {
            kind: D::DEPLOYMENT,
            rkey: observed.rkey.clone(),
            created_at,
            expires_at: D::expires_at(object),
        });
    }

    /// Only the record changed: its declaration becomes the spec's.
    async fn pull(
        &self,
        object: &ObjectOf<D>,
        mut status: D::Status,
        observed: &Observed,
    ) -> Result<Action, ReconcileError> {
        let (Some(facts), Some(remote)) = (observed.facts.as_ref(), observed.remote.as_ref())
        else {
            return Ok(Action::AwaitChange);
        };
        let now = self.context.now();
        let changes = genesis_changes(&object.spec.infra().contracts, &facts.contracts);
        if !changes.is_empty() {
            // Fields only creation sets: neither applied nor reverted; the owner chooses.
            set_sync(
                D::status_mut(&mut status),
                SyncState::ChangedElsewhere { changes },
                now,
            );
            self.write_status(object, status).await?;
            return Ok(Action::AwaitChange);
        }
        let pulled = self
            .take_declaration(object, status, facts, SyncState::Pulled)
            .await?;
        let child = self.child(&pulled).await?;
        self.apply_child(
            &pulled,
            &observed.rkey,
            child.as_ref(),
            remote.value.clone(),
            Some(remote.cid.clone()),
        )
        .await?;
        Ok(Action::AwaitChange)
    }

    /// Makes the record's declaration (`facts`) the spec, with `status` agreeing on its hash
    /// and in `state`. Both are written together: an owner's edit landing between the two
    /// would otherwise look like a conflict.
    async fn take_declaration(
        &self,
        object: &ObjectOf<D>,
        mut status: D::Status,
        facts: &RecordFacts,
        state: SyncState,
    ) -> Result<ObjectOf<D>, ReconcileError> {
        let agreed = D::status_mut(&mut status);
        agreed.last_declaration_hash = Some(facts.hash);
        set_sync(agreed, state, self.context.now());
        let mut taken = object.clone();
        let infra = taken.spec.infra_mut();
        infra.description = facts.description.clone();
        infra.contracts = facts.contracts.clone();
        taken.status = status;
        self.context
            .store(move |store| store.replace_with_status::<D>(&taken))
            .await
    }

    /// The end: release every contract, wait for the guests to go, make the final write, move
    /// the index entry, then record the end in the status. `Done` once all of it happened.
    async fn end(
        &self,
        object: &ObjectOf<D>,
        reason: EndReason,
    ) -> Result<CleanupProgress, ReconcileError> {
        let child = self.child(object).await?;
        let ended_at = self.end_time(object, child.as_ref(), reason);
        let contracts = contracts::converge(&self.context, object, Some(ended_at)).await?;
        let mut status = object.status.clone();
        let deleting = object.metadata.is_deleting();
        let facts = ObjectFacts {
            ended: false,
            deleting,
            ending: !deleting,
        };
        self.roll_up(object, &mut status, &contracts, facts);
        let statuses = contracts.objects.iter().map(|cc| &cc.status);
        if !swdesk_core::lifecycle::may_write_final(statuses) {
            self.write_status(object, status).await?;
            return Ok(CleanupProgress::Waiting(Action::RequeueAfter(WAIT)));
        }
        let mut ended = object.clone();
        ended.status = status.clone();
        let infra = D::status_mut(&mut ended.status);
        infra.ended_at = Some(ended_at);
        infra.end_reason = Some(reason);
        infra.phase = rollup::ObjectPhase::Ended;
        let rkey = match (D::status(&object.status).record.as_ref(), child.as_ref()) {
            (Some(bound), _) => bound.rkey.clone(),
            // Ended before the binding was recorded: the child may have written the record
            // already (it gets its final write) or may still (wait for it).
            (None, Some(child)) if child.status.cid.is_some() => child.spec.rkey.clone(),
            (None, Some(child)) if write_may_land(child) => {
                self.write_status(object, status).await?;
                return Ok(CleanupProgress::Waiting(Action::RequeueAfter(WAIT)));
            }
            (None, _) => {
                self.write_status(object, ended.status).await?;
                return Ok(CleanupProgress::Done);
            }
        };
        let Some(remote) = self.current_record(&rkey).await? else {
            // The record is gone (deleted elsewhere): there is nothing left to end.
            self.write_status(object, ended.status).await?;
            return Ok(CleanupProgress::Done);
        };
        let created_at = D::read(&remote.value)
            .ok()
            .and_then(|facts| facts.created_at)
            .unwrap_or(object.metadata.created_at);
        let final_value = D::record(&ended, created_at, Some(&remote.value))?;
        if child.as_ref().map(|child| &child.spec.value) != Some(&final_value) {
            let swap = Some(remote.cid.clone());
            self.apply_child(object, &rkey, child.as_ref(), final_value, swap)
                .await?;
            self.write_status(object, status).await?;
            return Ok(CleanupProgress::Waiting(Action::AwaitChange));
        }
        let Some(child) = child.filter(child_written) else {
            self.write_status(object, status).await?;
            return Ok(CleanupProgress::Waiting(Action::RequeueAfter(WAIT)));
        };
        self.note_written(&rkey, &child).await;
        let op = IndexOp::Ended {
            kind: D::DEPLOYMENT,
            rkey: rkey.clone(),
            ended_at,
            reason,
        };
        self.index
            .submit(op)
            .await
            .map_err(|_| ReconcileError::Invalid("the index writer stopped".to_owned()))?
            .map_err(ReconcileError::Invalid)?;
        self.write_status(object, ended.status).await?;
        Ok(CleanupProgress::Done)
    }

    /// The deployment's record at `rkey`, read afresh when the shared view does not hold it: the
    /// view may predate this app's own first write of it (created just before the owner ended
    /// it), and "gone" ends the deployment without its final write.
    async fn current_record(&self, rkey: &Rkey) -> Result<Option<RemoteRecord>, ReconcileError> {
        let collection = D::DEPLOYMENT.collection();
        if let Some(remote) = self.view.record(collection, rkey.as_str()).await? {
            return Ok(Some(remote));
        }
        self.view.invalidate(collection).await;
        Ok(self.view.record(collection, rkey.as_str()).await?)
    }

    /// When the deployment ended: as already recorded, as the final write being made says, or
    /// the moment that made it end (the deletion, the deadline), so every run agrees.
    fn end_time(
        &self,
        object: &ObjectOf<D>,
        child: Option<&AtprotoRecordObject>,
        reason: EndReason,
    ) -> Timestamp {
        let prepared = child
            .and_then(|child| D::read(&child.spec.value).ok())
            .and_then(|facts| facts.ended_at);
        let moment = match reason {
            EndReason::Deleted => object.metadata.deletion_requested_at,
            EndReason::Deadline => D::expires_at(object),
            EndReason::Complete => None,
        };
        D::status(&object.status)
            .ended_at
            .or(prepared)
            .or(moment)
            .unwrap_or_else(|| self.context.now())
    }

    /// Tells the view the record at `rkey` is what `child` wrote (at the revision the repo
    /// answered), so the next read agrees; a record the view heard of from a later commit
    /// stays.
    async fn note_written(&self, rkey: &Rkey, child: &AtprotoRecordObject) {
        let Some(cid) = child.status.cid.clone() else {
            return;
        };
        let record = RemoteRecord {
            cid,
            value: child.spec.value.clone(),
        };
        let rev = child.status.rev.as_deref();
        self.view
            .note(D::DEPLOYMENT.collection(), rkey.as_str(), record, rev)
            .await;
    }

    /// The child AtprotoRecord of `object`, if it has one.
    async fn child(
        &self,
        object: &ObjectOf<D>,
    ) -> Result<Option<AtprotoRecordObject>, ReconcileError> {
        let name = child_name::<D>(&object.metadata)?;
        self.context
            .store(move |store| store.get::<AtprotoRecordSpec>(&name))
            .await
    }

    /// Makes the child hold `value` at `rkey`, replacing the record at `swap` (the cid this run
    /// read there), creating the child, owned by `object`, when missing.
    async fn apply_child(
        &self,
        object: &ObjectOf<D>,
        rkey: &Rkey,
        child: Option<&AtprotoRecordObject>,
        value: Value,
        swap: Option<String>,
    ) -> Result<(), ReconcileError> {
        match child {
            Some(child) if child.spec.value == value && &child.spec.rkey == rkey => {
                if swap.is_none() || child.status.cid == swap || child.spec.swap == swap {
                    return Ok(());
                }
                // The repo holds another record than the child wrote or was told to replace
                // (edited elsewhere), and this side's value is to replace exactly the one read:
                // the child writes again, over that record only (a written child forgets its
                // write, so it does not count itself in sync).
                let mut rewrite = child.clone();
                rewrite.spec.swap = swap;
                if child_written(child) {
                    rewrite.status.cid = None;
                    rewrite.status.rev = None;
                }
                self.context
                    .store(move |store| store.replace_with_status::<AtprotoRecordSpec>(&rewrite))
                    .await
                    .map(drop)
            }
            Some(child) => {
                let mut updated = child.clone();
                updated.spec.value = value;
                updated.spec.rkey = rkey.clone();
                updated.spec.swap = swap;
                self.context
                    .store(move |store| store.replace::<AtprotoRecordSpec>(&updated))
                    .await
                    .map(drop)
            }
            None => {
                let mut created = new_child::<D>(object, rkey, value, self.context.now())?;
                created.spec.swap = swap;
                self.context
                    .store(move |store| store.create::<AtprotoRecordSpec>(&created))
                    .await
                    .map(drop)
            }
        }
    }

    async fn write_status(
        &self,
        object: &ObjectOf<D>,
        status: D::Status,
    ) -> Result<(), ReconcileError> {
        if status == object.status {
            return Ok(());
        }
        let mut updated = object.clone();
        updated.status = status;
        self.context
            .store(move |store| store.update_status::<D>(&updated))
            .await
            .map(drop)
    }

    /// After the final write: the child goes (its record stays: `Retain`); gone already is fine.
    async fn release_child(&self, object: &ObjectOf<D>) -> Result<(), ReconcileError> {
        let name = child_name::<D>(&object.metadata)?;
        let now = self.context.now();
        self.context
            .store(
                move |store| match store.delete::<AtprotoRecordSpec>(&name, now) {
                    Ok(_) | Err(StoreError::NotFound { .. }) => Ok(()),
                    Err(error) => Err(error),
                },
            )
            .await
    }

    /// The deletion: the end (unless the deployment ended already), then the child goes.
    async fn cleanup(&self, object: &ObjectOf<D>) -> Result<CleanupProgress, ReconcileError> {
        if writer(&object.metadata, object.spec.infra()) == Writer::Here
            && D::status(&object.status).ended_at.is_none()
            && let CleanupProgress::Waiting(action) = self.end(object, EndReason::Deleted).await?
        {
            return Ok(CleanupProgress::Waiting(action));
        }
        self.release_child(object).await?;
        Ok(CleanupProgress::Done)
    }
}

impl<D: Deployment, R: RecordRepo + 'static> Reconciler for DeploymentReconciler<D, R> {
    type Error = ReconcileError;

    async fn reconcile(&self, key: &ObjectKey) -> Result<Action, ReconcileError> {
        self.context
            .reconcile_with_finalizer::<D, _, _>(
                &key.name,
                FINALIZER,
                async |object| self.apply(object).await,
                async |object| self.cleanup(object).await,
            )
            .await
    }

    fn error_policy(&self, _key: &ObjectKey, error: &ReconcileError, attempt: u32) -> Action {
        error.retry(attempt)
    }
}

/// The child AtprotoRecord's name: `infra-<uid>` or `ephemeral-<uid>`.
fn child_name<D: Deployment>(metadata: &Metadata) -> Result<Name, ReconcileError> {
    record_child_name(D::DEPLOYMENT, metadata).map_err(invalid)
}

fn new_child<D: Deployment>(
    object: &ObjectOf<D>,
    rkey: &Rkey,
    value: Value,
    now: Timestamp,
) -> Result<AtprotoRecordObject, ReconcileError> {
    let mut metadata = Metadata::new(child_name::<D>(&object.metadata)?, random_uid()?, now);
    metadata.owner_refs.push(contracts::controlled_by(object));
    Ok(Object {
        metadata,
        spec: AtprotoRecordSpec {
            collection: D::DEPLOYMENT.collection().to_owned(),
            rkey: rkey.clone(),
            value,
            deletion_policy: DeletionPolicy::Retain,
            swap: None,
        },
        status: Default::default(),
    })
}

/// Whether the child's record holds its value now.
/// Whether the child's write may still reach the repo: not tried yet, in flight, or failed for
/// now with a retry scheduled (a permanent failure writes nothing).
fn write_may_land(child: &AtprotoRecordObject) -> bool {
    child.status.error.is_none() || child.status.retry.is_some()
}

/// Whether the record in the repo is this device's own last write, whatever the status
/// agreed last: then it is no edit made elsewhere. The child wrote it at that cid, or the repo
/// holds exactly the value the child writes (its write landed, its answer is not recorded yet:
/// an owner's edit in that moment is pushed, not taken for a conflict).
fn repo_holds_our_write(child: Option<&AtprotoRecordObject>, observed: &Observed) -> bool {
    let (Some(remote), Some(child)) = (observed.remote.as_ref(), child) else {
        return false;
    };
    child.status.cid.as_deref() == Some(remote.cid.as_str()) || child.spec.value == remote.value
}

/// The declaration hash of the child's write when the status has not bound that write yet.
fn unbound_write<D: Deployment>(
    status: &D::Status,
    child: &AtprotoRecordObject,
) -> Option<DeclarationHash> {
    let bound = D::status(status).record.as_ref().map(|bound| &bound.cid);
    if bound == child.status.cid.as_ref() {
        return None;
    }
    D::read(&child.spec.value).ok().map(|facts| facts.hash)
}

fn child_written(child: &AtprotoRecordObject) -> bool {
    child.status.error.is_none()
        && child.status.cid.is_some()
        && swdesk_lexicon::cid::record_cid(&child.spec.value)
            .is_ok_and(|cid| child.status.cid.as_deref() == Some(cid.to_string().as_str()))
}

fn declaration_differs<D: Deployment>(written: Option<&Value>, wanted: &Value) -> bool {
    let hash = |value: &Value| D::read(value).ok().map(|facts| facts.hash);
    written.is_none_or(|written| hash(written) != hash(wanted))
}

/// The facts of a record of the repo, or every problem that keeps it from being read (its
/// lexicon's and the semantic rules', joined).
fn read_valid<D: Deployment>(value: &Value) -> Result<RecordFacts, String> {
    let problems = record_problems(D::DEPLOYMENT, value);
    if !problems.is_empty() {
        let described: Vec<String> = problems.iter().map(ToString::to_string).collect();
        return Err(described.join("; "));
    }
    D::read(value).map_err(|error| error.to_string())
}

/// How publishing stands: the record holds this declaration (`Published`), the child failed
/// its last write and tries again (`WriteFailed`), or the child has not written it yet
/// (`Publishing`).
fn publish_state<D: Deployment>(child: Option<&AtprotoRecordObject>, wanted: &Value) -> SyncState {
    let Some(child) = child else {
        return SyncState::Publishing;
    };
    if child_written(child) && !declaration_differs::<D>(Some(&child.spec.value), wanted) {
        return SyncState::Published;
    }
    match &child.status.error {
        Some(error) => SyncState::WriteFailed {
            error: error.clone(),
        },
        None => SyncState::Publishing,
    }
}

/// Records `state` in the status (its `since` moves only when it turns in or out of sync).
fn set_sync(status: &mut InfraStatus, state: SyncState, now: Timestamp) {
    status.sync = Some(SyncStatus::next(status.sync.as_ref(), state, now));
}

fn progress_action(progress: CleanupProgress) -> Action {
    match progress {
        CleanupProgress::Done => Action::AwaitChange,
        CleanupProgress::Waiting(action) => action,
    }
}

fn invalid(error: impl std::fmt::Display) -> ReconcileError {
    ReconcileError::Invalid(error.to_string())
}
