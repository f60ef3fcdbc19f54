//! The AtprotoRecord reconciler: one record in the owner's repo, kept equal to the object's
//! `spec.value` with `putRecord` and a swap cid. A deployment never writes its record itself:
//! it applies one of these (SPEC §2).
//!
//! Each run compares the cid of `spec.value` (computed locally, as the PDS computes it) with
//! the cid last written (`status.cid`): equal means in sync and costs no request. Otherwise it
//! writes with `swapRecord` = `spec.swap` (the record the owner read and replaces) or else the
//! last written cid (absent before the first write). When the
//! repo holds something else (another device wrote, the owner edited): if that record already
//! is `spec.value` the cid is adopted without a write; if not, nothing is overwritten, the
//! status says so, and the owning deployment decides (pull, or show the conflict).
//!
//! A write that finds the record at a cid this object wrote itself (its last write, when the
//! spec's swap is older than it; or a write whose answer was lost, a timeout after the repo
//! wrote) writes over it: that passes over no one else's record.
//!
//! A write that fails for now (the kernel's retry rule) keeps its schedule in the status
//! (`retry`: not before the default backoff, or the repo's `Retry-After` when longer), so the
//! object's own status write, a trigger or a restart never brings it back sooner; a new value
//! is tried at once.
//!
//! Invariants: a write never passes over a record this object did not write last; deleting
//! the object removes the repo record only under `Delete` and never for a deployment
//! collection ([`swdesk_core::record::deletes_from_repo`]); every outcome of a write is in the
//! status (`uri`, `cid`, `lastWriteAt`, `error`).

use swdesk_core::record::{AtprotoRecordObject, AtprotoRecordSpec, WriteRetry, deletes_from_repo};
use swdesk_kernel::object::Kind;
use swdesk_kernel::repo::{RecordRepo, RepoError, Swap};
use swdesk_kernel::uri::RecordUri;

use swdesk_store::StoreError;

use crate::context::{Context, ReconcileError};
use crate::runtime::finalizer::CleanupProgress;
use crate::runtime::{Action, ObjectKey, Reconciler};

/// The finalizer this reconciler holds on every AtprotoRecord it has acted on.
pub const FINALIZER: &str = "records.socialweb.computer/repo";

/// Reconciles AtprotoRecord objects.
#[derive(Debug, Clone)]
pub struct RecordReconciler<R> {
    context: Context<R>,
}

impl<R: RecordRepo + 'static> RecordReconciler<R> {
    /// A reconciler over `context`.
    pub fn new(context: Context<R>) -> Self {
        Self { context }
    }

    async fn apply(&self, object: &AtprotoRecordObject) -> Result<Action, ReconcileError> {
        let wanted = local_cid(&object.spec)?;
        if object.status.cid.as_deref() == Some(wanted.as_str()) && object.status.error.is_none() {
            return Ok(Action::AwaitChange);
        }
        let now = self.context.now();
        if let Some(wait) = object
            .status
            .retry
            .as_ref()
            .and_then(|r| r.wait_for(&wanted, now))
        {
            return Ok(Action::RequeueAfter(wait));
        }
        let spec = &object.spec;
        if spec.swap.as_deref() == Some(wanted.as_str()) {
            // The owner read the record holding exactly this value: adopt it, write nothing.
            let uri = RecordUri::new(self.context.repo().owner(), &spec.collection, &spec.rkey)
                .map_err(|error| ReconcileError::Invalid(error.to_string()))?;
            return self
                .record_write(object, uri.to_string(), wanted, None)
                .await;
        }
        let swap = spec
            .swap
            .clone()
            .or_else(|| object.status.cid.clone())
            .map_or(Swap::Absent, Swap::Cid);
        let written = self.put(object, swap).await;
        match written {
            Ok(written) => {
                let uri = written.uri.to_string();
                self.record_write(object, uri, written.cid, written.rev)
                    .await
            }
            Err(RepoError::SwapMismatch { current })
                if current.as_deref() == Some(wanted.as_str()) =>
            {
                let uri = RecordUri::new(self.context.repo().owner(), &spec.collection, &spec.rkey)
                    .map_err(|error| ReconcileError::Invalid(error.to_string()))?;
                self.record_write(object, uri.to_string(), wanted, None)
                    .await
            }
            Err(RepoError::SwapMismatch { current }) => {
                let message = match current {
                    Some(cid) => format!(
                        "the record changed in the repo (it is now at {cid}); nothing was overwritten"
                    ),
                    None => "the record is gone from the repo; nothing was written".to_owned(),
                };
                self.record_error(object, message, None).await?;
                Ok(Action::AwaitChange)
            }
            Err(error) => {
                // A `Retry-After` counts from the answer, not from when the write was sent.
                let answered_at = self.context.now();
                let retry = error.is_transient().then(|| {
                    WriteRetry::after(
                        object.status.retry.as_ref(),
                        &wanted,
                        error.fault(),
                        answered_at,
                    )
                });
                let message = match &retry {
                    Some(retry) => format!(
                        "{error}; retry in {} s",
                        retry.at.since(answered_at).as_secs()
                    ),
                    None => error.to_string(),
                };
                self.record_error(object, message, retry).await?;
                Err(error.into())
            }
        }
    }

    /// Writes the spec's value with `swap`. When the repo holds another record than `swap`
    /// names but it is one this object wrote (its last write, or a write whose answer was
    /// lost), the spec's swap was older than that write: the value is written over it, once.
    async fn put(
        &self,
        object: &AtprotoRecordObject,
        swap: Swap,
    ) -> Result<swdesk_kernel::repo::Written, RepoError> {
        let spec = &object.spec;
        let repo = self.context.repo();
        let written = repo
            .put(&spec.collection, &spec.rkey, &spec.value, swap.clone())
            .await;
        match written {
            Err(RepoError::SwapMismatch {
                current: Some(current),
            }) if written_here(object, &current) && swap != Swap::Cid(current.clone()) => {
                let swap = Swap::Cid(current);
                repo.put(&spec.collection, &spec.rkey, &spec.value, swap)
                    .await
            }
            other => other,
        }
    }

    /// Records that the repo holds what this object wrote at `cid` now. The outcome of a write
    /// is a fact about the repo, kept even when the spec moved on while the write was in
    /// flight: it is written onto the object as it is then (a lost `cid` would make the next
    /// write swap against nothing and refuse our own record as someone else's).
    async fn record_write(
        &self,
        object: &AtprotoRecordObject,
        uri: String,
        cid: String,
        rev: Option<String>,
    ) -> Result<Action, ReconcileError> {
        let written = Written {
            uri,
            cid,
            rev,
            at: self.context.now(),
        };
        let first = written.onto(object.clone());
        self.context
            .store(move |store| {
                let mut updated = first;
                loop {
                    match store.update_status::<AtprotoRecordSpec>(&updated) {
                        Err(StoreError::Conflict { .. }) => {
                            let Some(fresh) =
                                store.get::<AtprotoRecordSpec>(&updated.metadata.name)?
                            else {
                                return Ok(());
                            };
                            updated = written.onto(fresh);
                        }
                        other => return other.map(drop),
                    }
                }
            })
            .await?;
        Ok(Action::AwaitChange)
    }

    /// Records why the last write failed and, when it failed for now, when it may be tried
    /// again.
    async fn record_error(
        &self,
        object: &AtprotoRecordObject,
        message: String,
        retry: Option<WriteRetry>,
    ) -> Result<(), ReconcileError> {
        if object.status.error.as_deref() == Some(message.as_str()) && object.status.retry == retry
        {
            return Ok(());
        }
        let mut updated = object.clone();
        updated.status.error = Some(message);
        updated.status.retry = retry;
        self.context
            .store(move |store| store.update_status::<AtprotoRecordSpec>(&updated))
            .await?;
        Ok(())
    }

    async fn cleanup(
        &self,
        object: &AtprotoRecordObject,
    ) -> Result<CleanupProgress, ReconcileError> {
        let spec = &object.spec;
        if deletes_from_repo(&spec.collection, spec.deletion_policy) {
            self.context
                .repo()
                .delete(&spec.collection, &spec.rkey, Swap::Any)
                .await?;
        }
        Ok(CleanupProgress::Done)
    }
}

impl<R: RecordRepo + 'static> Reconciler for RecordReconciler<R> {
    type Error = ReconcileError;

    async fn reconcile(&self, key: &ObjectKey) -> Result<Action, ReconcileError> {
        self.context
            .reconcile_with_finalizer::<AtprotoRecordSpec, _, _>(
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

/// The kind this reconciler runs.
pub const KIND: Kind = Kind::AtprotoRecord;

/// The outcome of a successful write.
#[derive(Debug, Clone)]
struct Written {
    uri: String,
    cid: String,
    rev: Option<String>,
    at: swdesk_kernel::timestamp::Timestamp,
}

impl Written {
    /// `object` with this outcome in its status.
    fn onto(&self, mut object: AtprotoRecordObject) -> AtprotoRecordObject {
        object.status.uri = Some(self.uri.clone());
        object.status.cid = Some(self.cid.clone());
        object.status.rev.clone_from(&self.rev);
        object.status.last_write_at = Some(self.at);
        object.status.error = None;
        object.status.retry = None;
        object
    }
}

/// Whether `cid` is a record this object wrote: its last write, or one whose answer was lost.
fn written_here(object: &AtprotoRecordObject, cid: &str) -> bool {
    let status = &object.status;
    status.cid.as_deref() == Some(cid)
        || status.retry.as_ref().is_some_and(|retry| retry.cid == cid)
}

fn local_cid(spec: &AtprotoRecordSpec) -> Result<String, ReconcileError> {
    swdesk_lexicon::cid::record_cid(&spec.value)
        .map(|cid| cid.to_string())
        .map_err(|error| {
            ReconcileError::Invalid(format!("the record value cannot be stored: {error}"))
        })
}
