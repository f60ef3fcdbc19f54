//! The controller's view of the owner's deployment collections: every record of a collection
//! as one `listRecords` walk last saw it, shared by every reconcile. A steady-state resync of
//! N deployments then costs one page per 100 records instead of one `getRecord` each.
//!
//! The view holds every record of a collection, ended ones too (the SPEC keeps them), so it
//! grows with the repo: each record is kept as its compact JSON text, read back into a value
//! only when asked for. A `serde_json::Value` takes about 7x the room of its text (a 749-byte
//! deployment record: 5,309 bytes as a value, 765 as text).
//!
//! Invariants: a snapshot older than its `max_age` is fetched again before it is read, by one
//! caller while the others wait for it (single flight); writes this app makes are noted into
//! the snapshot at once ([`RemoteView::note`]), so a reconcile never mistakes its own write
//! for a remote edit; [`RemoteView::invalidate`] forces the next read to fetch. While the
//! owner's repo is followed live ([`RemoteView::set_live`]), a fetched snapshot does not age:
//! the stream's verified ops keep it current ([`RemoteView::apply`]), so a resync reads it
//! without a request.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use swdesk_kernel::repo::{RecordRepo, RepoError};
use tokio::time::Instant;

/// Records fetched per page.
const PAGE: u16 = 100;

/// A record as the view knows it.
#[derive(Debug, Clone, PartialEq)]
pub struct RemoteRecord {
    /// Its cid.
    pub cid: String,
    /// Its value.
    pub value: Value,
}

/// A record as a snapshot keeps it: its cid and its value as compact JSON text.
#[derive(Debug, Clone, PartialEq)]
struct Kept {
    cid: String,
    text: Box<str>,
}

impl Kept {
    fn of(record: RemoteRecord) -> Self {
        Self {
            cid: record.cid,
            text: record.value.to_string().into_boxed_str(),
        }
    }

    /// The record again; `None` only if the text no longer reads as JSON, which text written
    /// from a value always does.
    fn record(&self) -> Option<RemoteRecord> {
        let value = serde_json::from_str(&self.text).ok()?;
        Some(RemoteRecord {
            cid: self.cid.clone(),
            value,
        })
    }
}

#[derive(Debug, Default)]
struct Snapshot {
    records: BTreeMap<String, Kept>,
    fetched_at: Option<Instant>,
}

/// The owner's records of the collections the controller reads, cached.
#[derive(Debug)]
pub struct RemoteView<R> {
    repo: Arc<R>,
    max_age: Duration,
    live: AtomicBool,
    collections: Mutex<HashMap<String, Arc<tokio::sync::Mutex<Snapshot>>>>,
}

impl<R: RecordRepo> RemoteView<R> {
    /// A view over `repo` whose snapshots are fetched again once older than `max_age`.
    pub fn new(repo: Arc<R>, max_age: Duration) -> Self {
        Self {
            repo,
            max_age,
            live: AtomicBool::new(false),
            collections: Mutex::new(HashMap::new()),
        }
    }

    /// The record `collection/rkey` of the owner's repo, if there is one.
    pub async fn record(
        &self,
        collection: &str,
        rkey: &str,
    ) -> Result<Option<RemoteRecord>, RepoError> {
        self.record_within(collection, rkey, self.max_age).await
    }

    /// The record `collection/rkey`, from a listing at most `max_age` old (fetched again if
    /// older): for a reader that must see changes sooner than the view's own age.
    pub async fn record_within(
        &self,
        collection: &str,
        rkey: &str,
        max_age: Duration,
    ) -> Result<Option<RemoteRecord>, RepoError> {
        let snapshot = self.snapshot(collection);
        let mut snapshot = snapshot.lock().await;
        let live = self.live.load(Ordering::SeqCst);
        let fresh = snapshot
            .fetched_at
            .is_some_and(|at| live || at.elapsed() < max_age);
        if !fresh {
            snapshot.records = self.fetch(collection).await?;
            snapshot.fetched_at = Some(Instant::now());
        }
        let Some(kept) = snapshot.records.get(rkey) else {
            return Ok(None);
        };
        match kept.record() {
            Some(record) => Ok(Some(record)),
            None => {
                // Never seen: the next read fetches the collection again.
                snapshot.fetched_at = None;
                Err(RepoError::Unavailable {
                    message: format!("the view's copy of {collection}/{rkey} did not read back"),
                    retry_after: None,
                })
            }
        }
    }

    /// Notes a write this app made (or a record it read directly), so the view agrees at once.
    pub async fn note(&self, collection: &str, rkey: &str, record: Option<RemoteRecord>) {
        let snapshot = self.snapshot(collection);
        let mut snapshot = snapshot.lock().await;
        match record {
            Some(record) => snapshot.records.insert(rkey.to_owned(), Kept::of(record)),
            None => snapshot.records.remove(rkey),
        };
    }

    /// Fetches `collection` now; answers whether any record differs from what the view held
    /// (a write another device made). Writes this app noted are not a difference.
    pub async fn refresh(&self, collection: &str) -> Result<bool, RepoError> {
        let snapshot = self.snapshot(collection);
        let mut snapshot = snapshot.lock().await;
        let records = self.fetch(collection).await?;
        let known = snapshot.fetched_at.is_some();
        let changed = known && !same_cids(&snapshot.records, &records);
        snapshot.records = records;
        snapshot.fetched_at = Some(Instant::now());
        Ok(changed)
    }

    /// Applies an op a verified commit of the owner's repo made; answers whether the view
    /// changed (a record it did not hold at that cid). A collection never fetched is left to
    /// its first read, and counts as changed so the reconcilers read it.
    pub async fn apply(&self, collection: &str, rkey: &str, record: Option<RemoteRecord>) -> bool {
        let snapshot = self.snapshot(collection);
        let mut snapshot = snapshot.lock().await;
        if snapshot.fetched_at.is_none() {
            return true;
        }
        let held = snapshot.records.get(rkey).map(|kept| kept.cid.as_str());
        if held == record.as_ref().map(|record| record.cid.as_str()) {
            return false;
        }
        match record {
            Some(record) => snapshot.records.insert(rkey.to_owned(), Kept::of(record)),
            None => snapshot.records.remove(rkey),
        };
        true
    }

    /// Says whether the owner's repo is followed live: while it is, fetched snapshots do not
    /// age (the stream keeps them current).
    pub fn set_live(&self, live: bool) {
        self.live.store(live, Ordering::SeqCst);
    }

    /// Makes the next read of `collection` fetch it again.
    pub async fn invalidate(&self, collection: &str) {
        self.snapshot(collection).lock().await.fetched_at = None;
    }

    fn snapshot(&self, collection: &str) -> Arc<tokio::sync::Mutex<Snapshot>> {
        let mut collections = self
            .collections
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        Arc::clone(collections.entry(collection.to_owned()).or_default())
    }

    async fn fetch(&self, collection: &str) -> Result<BTreeMap<String, Kept>, RepoError> {
        let mut records = BTreeMap::new();
        let mut cursor: Option<String> = None;
        loop {
            let page = self
                .repo
                .list(self.repo.owner(), collection, cursor.as_deref(), PAGE)
                .await?;
            let full = page.records.len() == usize::from(PAGE);
            for record in page.records {
                let rkey = record.uri.rkey().to_string();
                records.insert(
                    rkey,
                    Kept::of(RemoteRecord {
                        cid: record.cid,
                        value: record.value,
                    }),
                );
            }
            match page.cursor {
                Some(next) if full => cursor = Some(next),
                _ => return Ok(records),
            }
        }
    }
}

fn same_cids(a: &BTreeMap<String, Kept>, b: &BTreeMap<String, Kept>) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|((ka, ra), (kb, rb))| ka == kb && ra.cid == rb.cid)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_kept_record_reads_back_as_it_was_noted_key_order_and_all() {
        let record = RemoteRecord {
            cid: "bafyreia".into(),
            value: json!({
                "$type": "computer.socialweb.infra",
                "zeta": "first key, kept first",
                "contracts": [{"name": "vm", "vcpus": 2, "note": "ünïcode \u{1F680} \"quoted\""}],
                "count": -7,
                "big": 18_446_744_073_709_551_615_u64,
            }),
        };
        let again = Kept::of(record.clone()).record().expect("reads back");
        assert_eq!(again, record);
        let keys: Vec<&String> = again.value.as_object().expect("object").keys().collect();
        assert_eq!(keys, ["$type", "zeta", "contracts", "count", "big"]);
    }
}
