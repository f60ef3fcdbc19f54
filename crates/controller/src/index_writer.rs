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
//! entries, and the health names the deployments that wait for room. Fields this version does
//! not know are kept through every write.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use swdesk_core::index::{
    self as index_rules, Absences, EntryKey, IndexChange, IndexError, LiveEntry,
};
use swdesk_core::index_health::IndexHealth;
use swdesk_core::infra::EndReason;
use swdesk_kernel::deployment_kind::DeploymentKind;
use swdesk_kernel::repo::{RecordRepo, RepoError, Swap};
use swdesk_kernel::rkey::{RESERVED, Rkey};
use swdesk_kernel::timestamp::{Clock, Timestamp};
use swdesk_kernel::uri::RecordUri;
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
/// How often operations refused by a full index are tried again (over the view's index), while
/// there are any: room made elsewhere (another client, a deployment ended) is used within it.
const ROOM_RETRY: Duration = Duration::from_secs(30);
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
    /// The deployment the operation is about, as its record's `collection/rkey` (none for a
    /// prune).
    fn deployment(&self) -> Option<String> {
        match self {
            Self::Live { kind, rkey, .. } | Self::Ended { kind, rkey, .. } => {
                Some(format!("{}/{rkey}", kind.collection()))
            }
            Self::Prune => None,
        }
    }
}

type Waiter = oneshot::Sender<Result<(), String>>;

/// The index's refusals already told, by deployment and reason, and the operations that wait
/// for room.
#[derive(Debug, Default)]
struct Refusals {
    told: BTreeSet<(String, String)>,
    /// The operations refused by a full index, by deployment: tried again every
    /// [`ROOM_RETRY`] until one is accepted or the deployment's next operation replaces it.
    waiting: BTreeMap<String, IndexOp>,
}

impl Refusals {
    /// Notes the outcome of `op` on `deployment`: `true` when it is a refusal not told yet. An
    /// accepted operation forgets the deployment's refusals, so a later one is told again.
    fn note(&mut self, deployment: &str, op: &IndexOp, refusal: Option<&IndexError>) -> bool {
        if matches!(refusal, Some(IndexError::Full)) {
            self.waiting.insert(deployment.to_owned(), op.clone());
        } else {
            self.waiting.remove(deployment);
        }
        match refusal {
            Some(error) => self.told.insert((deployment.to_owned(), error.to_string())),
            None => {
                self.told.retain(|(told, _)| told != deployment);
                false
            }
        }
    }

    /// The deployments that wait for room in a full index.
    fn waiting_for_room(&self) -> Vec<String> {
        self.waiting.keys().cloned().collect()
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
    /// How the index stands: its count, what waits for room, why it is not written.
    health: watch::Sender<IndexHealth>,
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
            health: watch::Sender::new(IndexHealth::default()),
        })
    }

    /// How the index at `self` stands, as it changes.
    pub fn health(&self) -> watch::Receiver<IndexHealth> {
        self.health.subscribe()
    }

    /// Queues `op`; the receiver answers once it is committed (or why it could not be).
    pub fn submit(&self, op: IndexOp) -> oneshot::Receiver<Result<(), String>> {
        let (sender, receiver) = oneshot::channel();
        self.lock().push((op, sender));
        self.wake.notify_one();
        receiver
    }

    /// Reads the index's count, then writes batches until the task is dropped, and prunes
    /// every [`PRUNE_EVERY`].
    pub async fn run(self: Arc<Self>) {
        self.read_count().await;
        let mut prune = tokio::time::interval(PRUNE_EVERY);
        prune.tick().await;
        let mut room = tokio::time::interval(ROOM_RETRY);
        room.tick().await;
        loop {
            tokio::select! {
                () = self.wake.notified() => {}
                _ = prune.tick() => drop(self.submit(IndexOp::Prune)),
                _ = room.tick() => self.retry_waiting_for_room(),
            }
            tokio::time::sleep(BATCH_WINDOW).await;
            let batch = std::mem::take(&mut *self.lock());
            if batch.is_empty() {
                continue;
            }
            let ops: Vec<IndexOp> = batch.iter().map(|(op, _)| op.clone()).collect();
            match self.write(&ops).await {
                Ok(live) => {
                    self.set_health(IndexHealth::listing(live, self.waiting_for_room()));
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

    /// How many live deployments the index lists, read once at start so the owner sees the
    /// count before any deployment changes; read directly, not through the view, whose first
    /// listing belongs to the first reconciles. An index that cannot be read is told by the
    /// first write.
    async fn read_count(&self) {
        let Some(uri) = Rkey::parse(RESERVED)
            .ok()
            .and_then(|rkey| RecordUri::new(self.repo.owner(), INDEX_COLLECTION, &rkey).ok())
        else {
            return;
        };
        let record = match self.repo.get(&uri).await {
            Ok(Some(record)) => record,
            Ok(None) => return,
            Err(error) => {
                tracing::debug!(%error, "the index could not be read at start");
                return;
            }
        };
        if let Ok(index) = index_rules::readable(&record.value) {
            let live = index
                .index
                .and_then(|index| index.live)
                .map_or(0, |live| live.len());
            tracing::debug!(live, "the index read at start");
            self.set_health(IndexHealth::listing(live, Vec::new()));
        }
    }

    /// Tells why the index is not written (once per reason in the log) and answers the
    /// batch with it: an ended deployment waits and tries again; a live entry is submitted
    /// again by the deployment's next run.
    fn refuse_unreadable(&self, batch: Vec<(IndexOp, Waiter)>, why: String) {
        let health = self.health.borrow().clone().unreadable(&why);
        let told = health.problem.clone().unwrap_or(why);
        if self.set_health(health) {
            tracing::warn!(reason = %told, "the index at self is not written");
        }
        answer(batch, Err(told));
    }

    /// Submits again every operation a full index refused, over the view's index: kept
    /// current by the stream while live, by the poll and the view's age limit while not, so
    /// the wait itself asks the repo nothing.
    fn retry_waiting_for_room(&self) {
        let waiting: Vec<IndexOp> = self
            .refusals
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .waiting
            .values()
            .cloned()
            .collect();
        for op in waiting {
            drop(self.submit(op));
        }
    }

    /// The deployments published but not listed, for want of room.
    fn waiting_for_room(&self) -> Vec<String> {
        self.refusals
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .waiting_for_room()
    }

    /// Sets the index's health; `true` when it changed.
    fn set_health(&self, health: IndexHealth) -> bool {
        self.health.send_if_modified(|now| {
            let changed = *now != health;
            *now = health.clone();
            changed
        })
    }

    /// Applies `ops` to the index and writes it, re-reading it after a lost race; answers how
    /// many live entries it lists now.
    async fn write(&self, ops: &[IndexOp]) -> Result<usize, Stop> {
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
            let (live, value) = self.updated(record, ops, &absences);
            let Some(value) = value else {
                return Ok(live);
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
                        .note(INDEX_COLLECTION, RESERVED, record, written.rev.as_deref())
                        .await;
                    return Ok(live);
                }
                Err(RepoError::SwapMismatch { .. }) => self.view.invalidate(INDEX_COLLECTION).await,
                Err(error) => return Err(error.into()),
            }
        }
        Err(Stop::Repo(RepoError::unavailable(format!(
            "the index kept changing under {SWAP_ATTEMPTS} writes in a row"
        ))))
    }

    /// How many live entries the index lists with `ops` applied, and the index record
    /// (`record` as read, or a new one) to write, or `None` when nothing changes.
    fn updated(
        &self,
        record: Option<Infra>,
        ops: &[IndexOp],
        absences: &Absences,
    ) -> (usize, Option<Value>) {
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
        let live = index.live.as_ref().map_or(0, Vec::len);
        if !changed {
            return (live, None);
        }
        record.index = Some(index);
        (live, record.to_record_value().ok())
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
            .note(&deployment, op, refusal);
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
    use super::{IndexError, IndexOp, Refusals};

    #[test]
    fn a_refusal_is_told_once_until_the_deployment_is_accepted() {
        let mut refusals = Refusals::default();
        let op = IndexOp::Prune;
        assert!(refusals.note("computer.socialweb.infra/web", &op, Some(&IndexError::Full)));
        assert!(!refusals.note("computer.socialweb.infra/web", &op, Some(&IndexError::Full)));
        assert!(refusals.note(
            "computer.socialweb.ephemeralInfra/web",
            &op,
            Some(&IndexError::Full)
        ));
        assert!(!refusals.note("computer.socialweb.infra/web", &op, None));
        assert!(refusals.note("computer.socialweb.infra/web", &op, Some(&IndexError::Full)));
        assert_eq!(
            refusals.waiting_for_room(),
            [
                "computer.socialweb.ephemeralInfra/web",
                "computer.socialweb.infra/web"
            ],
            "both wait for room"
        );
        refusals.note("computer.socialweb.infra/web", &op, None);
        assert_eq!(
            refusals.waiting_for_room(),
            ["computer.socialweb.ephemeralInfra/web"],
            "an accepted one waits no more"
        );
    }
}
