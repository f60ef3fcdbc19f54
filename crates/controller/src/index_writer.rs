//! The writer of the account's index at `computer.socialweb.infra/self`. Reconcilers submit
//! operations (a deployment is live; a deployment ended); one background task applies every
//! operation waiting at that moment in one compare-and-swap write, so publishing N deployments
//! costs a handful of index writes, not N.
//!
//! Every few minutes it also prunes: a live entry whose record has been missing from the
//! owner's repo for ten minutes (as this writer saw it) is dropped (`swdesk_core::index`).
//!
//! Invariants: the index is written only with `swapRecord` = the cid last read (absent: create
//! if absent); a lost race re-reads the index and applies the batch again; an operation's
//! submitter learns when it is committed (the end of a deployment waits for it before the
//! object goes); nothing but the index is ever written at `self`, and never over a record there
//! that this version cannot read as an index (`swdesk_core::index::readable`: another
//! client's, newer or broken): the batch is refused, [`IndexWriter::health`] says why, and the
//! next batch looks again. A full index (`MAX_LIVE` live entries) is written without the new
//! entries, and the health says how many deployments wait for room. Fields this version does
//! not know are kept through every write.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use swdesk_core::index::{
    self as index_rules, Absences, EntryKey, IndexChange, IndexError, LiveEntry, MAX_LIVE,
};
use swdesk_core::infra::{DeploymentKind, EndReason};
use swdesk_core::repo::{RecordRepo, RepoError, Swap};
use swdesk_core::rkey::{RESERVED, Rkey};
use swdesk_core::timestamp::{Clock, Timestamp};
use swdesk_lexicon::{Infra, Record as _};
use tokio::sync::{Notify, oneshot, watch};

use crate::remote::{RemoteRecord, RemoteView};

/// The index's collection.
pub const INDEX_COLLECTION: &str = "computer.socialweb.infra";
/// How long the writer waits for more operations before it writes.
const BATCH_WINDOW: Duration = Duration::from_millis(200);
/// How often a batch is tried against a moving index before it waits for the next round.
const SWAP_ATTEMPTS: usize = 5;
/// The wait before a batch that failed (network) is tried again.
const RETRY_AFTER: Duration = Duration::from_secs(5);
/// How often entries whose records are gone are looked for.
const PRUNE_EVERY: Duration = Duration::from_secs(300);

/// One change to the index.
#[derive(Debug, Clone, PartialEq)]
pub enum IndexOp {
    /// The deployment is live (added, or refreshed).
    Live {
        /// Infra or EphemeralInfra.
        kind: DeploymentKind,
        /// Its record's rkey.
        rkey: Rkey,
        /// Its record's `createdAt`.
        created_at: Timestamp,
        /// When it expires (EphemeralInfra).
        expires_at: Option<Timestamp>,
    },
    /// Drop live entries whose records have been gone for `GONE_AFTER` (run periodically).
    Prune,
    /// The deployment ended.
    Ended {
        /// Infra or EphemeralInfra.
        kind: DeploymentKind,
        /// Its record's rkey.
        rkey: Rkey,
        /// When it ended.
        ended_at: Timestamp,
        /// Why.
        reason: EndReason,
    },
}

impl IndexOp {
    /// The deployment the operation is about, as `kind/rkey` (none for a prune).
    fn deployment(&self) -> Option<String> {
        match self {
            Self::Live { kind, rkey, .. } | Self::Ended { kind, rkey, .. } => {
                Some(format!("{kind:?}/{rkey}"))
            }
            Self::Prune => None,
        }
    }
}

type Waiter = oneshot::Sender<Result<(), String>>;

/// The index's refusals already told, by deployment and reason.
#[derive(Debug, Default)]
struct Refusals {
    told: BTreeSet<(String, String)>,
}

impl Refusals {
    /// Notes the outcome of an operation on `deployment`: `true` when it is a refusal not told
    /// yet. An accepted operation forgets the deployment's refusals, so a later one is told
    /// again.
    fn note(&mut self, deployment: &str, refusal: Option<&IndexError>) -> bool {
        match refusal {
            Some(error) => self.told.insert((deployment.to_owned(), error.to_string())),
            None => {
                self.told.retain(|(told, _)| told != deployment);
                false
            }
        }
    }

    /// How many deployments wait for room in a full index.
    fn waiting_for_room(&self) -> usize {
        let full = IndexError::Full.to_string();
        self.told.iter().filter(|(_, why)| *why == full).count()
    }
}

/// Batches index operations into compare-and-swap writes.
#[derive(Debug)]
pub struct IndexWriter<R> {
    repo: Arc<R>,
    view: Arc<RemoteView<R>>,
    clock: Arc<dyn Clock>,
    pending: Mutex<Vec<(IndexOp, Waiter)>>,
    wake: Notify,
    absent_since: Mutex<Absences>,
    /// The refusals already logged, so a deployment the index has no room for is told once,
    /// not at every write.
    refusals: Mutex<Refusals>,
    /// Why the index is not written now (`None` while it is).
    health: watch::Sender<Option<String>>,
}

/// Why a batch was not written.
#[derive(Debug)]
enum Stop {
    /// The repo failed or refused.
    Repo(RepoError),
    /// The record at `self` is no index this version may write over.
    Unreadable(String),
}

impl From<RepoError> for Stop {
    fn from(error: RepoError) -> Self {
        Self::Repo(error)
    }
}

impl<R: RecordRepo + 'static> IndexWriter<R> {
    /// A writer over `repo` that reads the index through `view`; call [`Self::run`] to start it.
    pub fn new(repo: Arc<R>, view: Arc<RemoteView<R>>, clock: Arc<dyn Clock>) -> Arc<Self> {
        Arc::new(Self {
            repo,
            view,
            clock,
            pending: Mutex::new(Vec::new()),
            wake: Notify::new(),
            absent_since: Mutex::new(Absences::new()),
            refusals: Mutex::new(Refusals::default()),
            health: watch::Sender::new(None),
        })
    }

    /// Why the index at `self` is not written now, as it changes (`None` while it is).
    pub fn health(&self) -> watch::Receiver<Option<String>> {
        self.health.subscribe()
    }

    /// Queues `op`; the receiver answers once it is committed (or why it could not be).
    pub fn submit(&self, op: IndexOp) -> oneshot::Receiver<Result<(), String>> {
        let (sender, receiver) = oneshot::channel();
        self.lock().push((op, sender));
        self.wake.notify_one();
        receiver
    }

    /// Writes batches until the task is dropped, and prunes every [`PRUNE_EVERY`].
    pub async fn run(self: Arc<Self>) {
        let mut prune = tokio::time::interval(PRUNE_EVERY);
        prune.tick().await;
        loop {
            tokio::select! {
                () = self.wake.notified() => {}
                _ = prune.tick() => drop(self.submit(IndexOp::Prune)),
            }
            tokio::time::sleep(BATCH_WINDOW).await;
            let batch = std::mem::take(&mut *self.lock());
            if batch.is_empty() {
                continue;
            }
            let ops: Vec<IndexOp> = batch.iter().map(|(op, _)| op.clone()).collect();
            match self.write(&ops).await {
                Ok(()) => {
                    self.set_health(self.room_problem());
                    answer(batch, Ok(()));
                }
                Err(Stop::Repo(error)) if error.is_transient() => {
                    tracing::warn!(%error, "the index could not be written; trying again");
                    self.lock().extend(batch);
                    tokio::time::sleep(RETRY_AFTER).await;
                    self.wake.notify_one();
                }
                Err(Stop::Repo(error)) => answer(batch, Err(error.to_string())),
                Err(Stop::Unreadable(why)) => self.refuse_unreadable(batch, why),
            }
        }
    }

    /// Tells why the index is not written (once per reason in the log) and answers the
    /// batch with it: an ended deployment waits and tries again; a live entry is submitted
    /// again by the deployment's next run.
    fn refuse_unreadable(&self, batch: Vec<(IndexOp, Waiter)>, why: String) {
        let why = format!(
            "{why}. It was written by a newer or broken client, and is not written over: the deployments keep syncing, the index waits until it reads again"
        );
        if self.set_health(Some(why.clone())) {
            tracing::warn!(reason = %why, "the index at self is not written");
        }
        answer(batch, Err(why));
    }

    /// Why new deployments are not listed, when the index is full of live ones.
    fn room_problem(&self) -> Option<String> {
        let waiting = self
            .refusals
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .waiting_for_room();
        (waiting > 0).then(|| {
            format!(
                "The index at self already lists {MAX_LIVE} live deployments, the most it may: \
                 {waiting} new deployment(s) are published but not listed until one ends. End \
                 or release a deployment you no longer need to make room"
            )
        })
    }

    /// Sets the index's health; `true` when it changed.
    fn set_health(&self, why: Option<String>) -> bool {
        self.health.send_if_modified(|now| {
            let changed = *now != why;
            *now = why.clone();
            changed
        })
    }

    /// Applies `ops` to the index and writes it, re-reading it after a lost race.
    async fn write(&self, ops: &[IndexOp]) -> Result<(), Stop> {
        for _ in 0..SWAP_ATTEMPTS {
            let current = self.view.record(INDEX_COLLECTION, RESERVED).await?;
            let record = match current.as_ref().map(|c| index_rules::readable(&c.value)) {
                Some(Err(why)) => {
                    self.view.invalidate(INDEX_COLLECTION).await;
                    return Err(Stop::Unreadable(why));
                }
                read => read.transpose().unwrap_or_default(),
            };
            let absences = self.absences(record.as_ref()).await?;
            let swap = current
                .as_ref()
                .map_or(Swap::Absent, |current| Swap::Cid(current.cid.clone()));
            let Some(value) = self.updated(record, ops, &absences) else {
                return Ok(());
            };
            let rkey = Rkey::parse(RESERVED).map_err(|error| RepoError::Invalid {
                message: error.to_string(),
            })?;
            match self.repo.put(INDEX_COLLECTION, &rkey, &value, swap).await {
                Ok(written) => {
                    let record = RemoteRecord {
                        cid: written.cid,
                        value,
                    };
                    self.view
                        .note(INDEX_COLLECTION, RESERVED, Some(record))
                        .await;
                    return Ok(());
                }
                Err(RepoError::SwapMismatch { .. }) => self.view.invalidate(INDEX_COLLECTION).await,
                Err(error) => return Err(error.into()),
            }
        }
        Err(Stop::Repo(RepoError::unavailable(format!(
            "the index kept changing under {SWAP_ATTEMPTS} writes in a row"
        ))))
    }

    /// The index record (`record` as read, or a new one) with `ops` applied, or `None` when
    /// nothing changes.
    fn updated(
        &self,
        record: Option<Infra>,
        ops: &[IndexOp],
        absences: &Absences,
    ) -> Option<Value> {
        let now = self.clock.now();
        let mut changed = record.is_none();
        let mut record = record.unwrap_or_else(|| Infra {
            created_at: now.to_rfc3339(),
            ..Infra::default()
        });
        let mut index = record
            .index
            .take()
            .unwrap_or_else(|| index_rules::empty(now));
        for op in ops {
            let outcome = apply(&mut index, op, absences, now);
            self.tell_refusal(op, outcome.as_ref().err());
            changed |= outcome == Ok(IndexChange::Changed);
        }
        if !changed {
            return None;
        }
        record.index = Some(index);
        record.to_record_value().ok()
    }

    /// Since when each live entry's record is missing from the owner's repo, as far as this
    /// writer has seen (remembered between writes, forgotten once the record is back).
    async fn absences(&self, record: Option<&Infra>) -> Result<Absences, RepoError> {
        let live = record
            .and_then(|record| record.index.as_ref())
            .and_then(|index| index.live.clone())
            .unwrap_or_default();
        let now = self.clock.now();
        let mut missing = Vec::new();
        for entry in &live {
            if self
                .view
                .record(entry.collection.as_str(), &entry.rkey)
                .await?
                .is_none()
            {
                missing.push(EntryKey::of_live(entry));
            }
        }
        let mut absent = self
            .absent_since
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        absent.retain(|key, _| missing.contains(key));
        for key in missing {
            absent.entry(key).or_insert(now);
        }
        Ok(absent.clone())
    }

    /// Logs a refused operation (an ended rkey made live, a full index) the first time it is
    /// refused for that reason.
    fn tell_refusal(&self, op: &IndexOp, refusal: Option<&IndexError>) {
        let Some(deployment) = op.deployment() else {
            return;
        };
        let first_time = self
            .refusals
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .note(&deployment, refusal);
        if let (true, Some(error)) = (first_time, refusal) {
            tracing::warn!(%error, ?op, "the index refused a change; told once per deployment");
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(IndexOp, Waiter)>> {
        self.pending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// One operation on `index`; a refused one (an ended rkey made live, a full index) leaves the
/// index as it was.
fn apply(
    index: &mut swdesk_lexicon::computer::socialweb::infra::Index,
    op: &IndexOp,
    absences: &Absences,
    now: Timestamp,
) -> Result<IndexChange, IndexError> {
    match op {
        IndexOp::Live {
            kind,
            rkey,
            created_at,
            expires_at,
        } => {
            let entry = LiveEntry {
                kind: *kind,
                rkey,
                created_at: *created_at,
                expires_at: *expires_at,
                writer: index_rules::DESKTOP_WRITER,
            };
            index_rules::upsert(index, &entry, absences, now)
        }
        IndexOp::Ended {
            kind,
            rkey,
            ended_at,
            reason,
        } => index_rules::end(index, *kind, rkey, *ended_at, *reason, absences, now),
        IndexOp::Prune => Ok(index_rules::prune(index, absences, now)),
    }
}

fn answer(batch: Vec<(IndexOp, Waiter)>, outcome: Result<(), String>) {
    for (_, waiter) in batch {
        let _ = waiter.send(outcome.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::{IndexError, Refusals};

    #[test]
    fn a_refusal_is_told_once_until_the_deployment_is_accepted() {
        let mut refusals = Refusals::default();
        assert!(refusals.note("Infra/web", Some(&IndexError::Full)));
        assert!(!refusals.note("Infra/web", Some(&IndexError::Full)));
        assert!(refusals.note("EphemeralInfra/web", Some(&IndexError::Full)));
        assert!(!refusals.note("Infra/web", None));
        assert!(refusals.note("Infra/web", Some(&IndexError::Full)));
    }
}
