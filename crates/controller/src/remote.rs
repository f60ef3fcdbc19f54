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
//! caller while the others wait for it (single flight); [`RemoteView::invalidate`] forces the
//! next read to fetch. While the owner's repo is followed live ([`RemoteView::set_live`]), a
//! fetched snapshot does not age: the stream's verified ops keep it current
//! ([`RemoteView::apply`]), so a resync reads it without a request.
//!
//! Newest wins, by the repo's revision: every record is kept with the revision it is known at
//! (a stream op's commit, our own write's commit, or for a listing the repo's head taken
//! before the walk), and news of a record older than what the view holds is dropped. So the
//! answer of our own write ([`RemoteView::note`]) never goes over an edit another device
//! committed after it, a replayed op never over a newer listing, and a listing never over a
//! write committed after it began. A record deleted is kept as a tombstone at its revision
//! for the same reason. Where the order cannot be told (a write whose revision the repo did not
//! say), the collection is listed again by its next reader: only the repo can say.

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

/// A record as a snapshot keeps it: its cid and its value as compact JSON text (none: deleted),
/// and the repo revision it is known at.
#[derive(Debug, Clone, PartialEq)]
struct Kept {
    record: Option<(String, Box<str>)>,
    rev: Option<String>,
}

impl Kept {
    fn of(record: Option<RemoteRecord>, rev: Option<&str>) -> Self {
        Self {
            record: record.map(|record| (record.cid, record.value.to_string().into_boxed_str())),
            rev: rev.map(str::to_owned),
        }
    }

    fn cid(&self) -> Option<&str> {
        self.record.as_ref().map(|(cid, _)| cid.as_str())
    }

    /// The record again (`Ok(None)`: deleted); `Err` only if the text no longer reads as
    /// JSON, which text written from a value always does.
    fn record(&self) -> Result<Option<RemoteRecord>, serde_json::Error> {
        let Some((cid, text)) = &self.record else {
            return Ok(None);
        };
        Ok(Some(RemoteRecord {
            cid: cid.clone(),
            value: serde_json::from_str(text)?,
        }))
    }
}

/// How news of a record stands against what the view holds, by revision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Order {
    /// Newer (or nothing held to compare with): taken.
    Newer,
    /// The record held, at the same cid: only its revision moves on.
    Same,
    /// Not newer than what is held: dropped.
    Older,
    /// Cannot be told (no revision to the news, one to what is held).
    Unknown,
}

impl Order {
    fn of(news: Option<&RemoteRecord>, rev: Option<&str>, held: Option<&Kept>) -> Self {
        let Some(held) = held else {
            return Self::Newer;
        };
        match (rev, held.rev.as_deref()) {
            (Some(rev), Some(held_rev)) if rev <= held_rev => Self::Older,
            _ if news.map(|news| news.cid.as_str()) == held.cid() => Self::Same,
            (None, Some(_)) => Self::Unknown,
            _ => Self::Newer,
        }
    }
}

#[derive(Debug, Default)]
struct Snapshot {
    records: BTreeMap<String, Kept>,
    fetched_at: Option<Instant>,
}

impl Snapshot {
    /// Takes news of `rkey` at `rev` by [`Order`]; where the order cannot be told, the next
    /// reader lists the collection again (only the repo can say). Answers whether the view
    /// changed or must be read again.
    fn take(&mut self, rkey: &str, news: Option<RemoteRecord>, rev: Option<&str>) -> bool {
        match Order::of(news.as_ref(), rev, self.records.get(rkey)) {
            Order::Newer => {
                self.records.insert(rkey.to_owned(), Kept::of(news, rev));
                true
            }
            Order::Same => {
                if let (Some(held), Some(rev)) = (self.records.get_mut(rkey), rev) {
                    held.rev = Some(rev.to_owned());
                }
                false
            }
            Order::Older => false,
            Order::Unknown => {
                self.fetched_at = None;
                true
            }
        }
    }

    /// Replaces the records by a listing made from revision `head` on, keeping what the view
    /// learned of at a later revision (a write committed after the walk began).
    fn replace(&mut self, listed: BTreeMap<String, Kept>, head: Option<&str>) {
        let later = |kept: &Kept| matches!((kept.rev.as_deref(), head), (Some(rev), Some(head)) if rev > head);
        let mut records = listed;
        for (rkey, kept) in std::mem::take(&mut self.records) {
            if later(&kept) {
                records.insert(rkey, kept);
            }
        }
        self.records = records;
        self.fetched_at = Some(Instant::now());
    }
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
            let (listed, head) = self.fetch(collection).await?;
            snapshot.replace(listed, head.as_deref());
        }
        let Some(kept) = snapshot.records.get(rkey) else {
            return Ok(None);
        };
        match kept.record() {
            Ok(record) => Ok(record),
            Err(_) => {
                // Never seen: the next read fetches the collection again.
                snapshot.fetched_at = None;
                Err(RepoError::Unavailable {
                    message: format!("the view's copy of {collection}/{rkey} did not read back"),
                    retry_after: None,
                })
            }
        }
    }

    /// Notes a write this app made, committed at `rev` (as the repo answered it), so the next
    /// read agrees without a request: never over news of a later commit (another device's
    /// edit that landed while our write was in flight). A write whose revision is unknown
    /// over another record the view holds at a known one makes the next reader list again.
    pub async fn note(
        &self,
        collection: &str,
        rkey: &str,
        record: RemoteRecord,
        rev: Option<&str>,
    ) {
        let snapshot = self.snapshot(collection);
        let mut snapshot = snapshot.lock().await;
        snapshot.take(rkey, Some(record), rev);
    }

    /// Fetches `collection` now; answers whether any record differs from what the view held
    /// (a write another device made). Writes this app noted are not a difference.
    pub async fn refresh(&self, collection: &str) -> Result<bool, RepoError> {
        let snapshot = self.snapshot(collection);
        let mut snapshot = snapshot.lock().await;
        let (listed, head) = self.fetch(collection).await?;
        let known = snapshot.fetched_at.is_some();
        let before = cids(&snapshot.records);
        snapshot.replace(listed, head.as_deref());
        Ok(known && before != cids(&snapshot.records))
    }

    /// Applies an op a verified commit of the owner's repo made at `rev`; answers whether the
    /// view changed (a record it did not hold at that cid, newer than what it held) or must be
    /// listed again (an op without a revision over a record held at one). A
    /// collection never fetched is left to its first read, and counts as changed so the
    /// reconcilers read it.
    pub async fn apply(
        &self,
        collection: &str,
        rkey: &str,
        record: Option<RemoteRecord>,
        rev: Option<&str>,
    ) -> bool {
        let snapshot = self.snapshot(collection);
        let mut snapshot = snapshot.lock().await;
        if snapshot.fetched_at.is_none() {
            return true;
        }
        snapshot.take(rkey, record, rev)
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

    /// Every record of `collection`, and the repo's revision before the walk began (the
    /// listing is at least that new).
    async fn fetch(
        &self,
        collection: &str,
    ) -> Result<(BTreeMap<String, Kept>, Option<String>), RepoError> {
        let head = self.repo.head().await?;
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
                let record = RemoteRecord {
                    cid: record.cid,
                    value: record.value,
                };
                records.insert(rkey, Kept::of(Some(record), head.as_deref()));
            }
            match page.cursor {
                Some(next) if full => cursor = Some(next),
                _ => return Ok((records, head)),
            }
        }
    }
}

/// The records held (tombstones left out), by cid.
fn cids(records: &BTreeMap<String, Kept>) -> Vec<(String, String)> {
    records
        .iter()
        .filter_map(|(rkey, kept)| Some((rkey.clone(), kept.cid()?.to_owned())))
        .collect()
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
        let again = Kept::of(Some(record.clone()), None)
            .record()
            .expect("reads back");
        let again = again.expect("a record");
        assert_eq!(again, record);
        let keys: Vec<&String> = again.value.as_object().expect("object").keys().collect();
        assert_eq!(keys, ["$type", "zeta", "contracts", "count", "big"]);
    }

    const INFRA: &str = "computer.socialweb.infra";
    const OWNER: &str = "did:plc:owner";

    fn record(value: Value) -> RemoteRecord {
        RemoteRecord {
            cid: swdesk_lexicon::cid::record_cid(&value).unwrap().to_string(),
            value,
        }
    }

    async fn held(view: &RemoteView<MemoryRepo>) -> Option<RemoteRecord> {
        view.record(INFRA, "web").await.unwrap()
    }

    fn heads_and_lists(repo: &MemoryRepo) -> (usize, usize) {
        let calls = repo.calls();
        (calls.heads, calls.lists)
    }

    use swdesk_kernel::repo::memory::MemoryRepo;

    #[tokio::test]
    async fn news_of_a_record_is_taken_only_when_its_revision_is_newer() {
        let repo = Arc::new(MemoryRepo::new(OWNER));
        repo.write_directly(OWNER, INFRA, "web", json!({"n": 1}));
        let view = RemoteView::new(Arc::clone(&repo), Duration::from_secs(3600));
        assert_eq!(held(&view).await.unwrap().value, json!({"n": 1}));
        let listed = repo.rev();

        // Our write, then another device's edit over it: its op arrives before our answer.
        let ours = record(json!({"n": 2}));
        let our_rev = tid_after(listed.as_deref());
        let theirs = record(json!({"n": 3}));
        let their_rev = tid_after(Some(&our_rev));
        assert!(
            view.apply(INFRA, "web", Some(theirs.clone()), Some(&their_rev))
                .await
        );
        view.note(INFRA, "web", ours.clone(), Some(&our_rev)).await;
        assert_eq!(
            held(&view).await,
            Some(theirs.clone()),
            "a later commit is never noted over"
        );

        // A replayed op of an older commit changes nothing; a newer one is taken, whatever cid.
        assert!(
            !view
                .apply(INFRA, "web", Some(ours.clone()), Some(&our_rev))
                .await
        );
        assert_eq!(held(&view).await, Some(theirs.clone()));
        let again = tid_after(Some(&their_rev));
        assert!(
            view.apply(INFRA, "web", Some(ours.clone()), Some(&again))
                .await
        );
        assert_eq!(
            held(&view).await,
            Some(ours.clone()),
            "the same record written again is news"
        );

        // A deletion is remembered at its revision: an older write is not noted over it.
        let gone = tid_after(Some(&again));
        assert!(view.apply(INFRA, "web", None, Some(&gone)).await);
        view.note(INFRA, "web", theirs.clone(), Some(&again)).await;
        assert_eq!(held(&view).await, None);
        assert_eq!(repo.calls().lists, 1, "none of it cost a listing");
    }

    #[tokio::test]
    async fn a_listing_keeps_what_was_committed_after_it_began_and_unknown_order_lists_again() {
        let repo = Arc::new(MemoryRepo::new(OWNER));
        repo.write_directly(OWNER, INFRA, "web", json!({"n": 1}));
        let view = RemoteView::new(Arc::clone(&repo), Duration::from_secs(3600));
        held(&view).await;
        // A commit past the repo's head as the next listing will see it.
        let ahead = tid_after(Some(&tid_after(repo.rev().as_deref())));
        let ours = record(json!({"n": 2}));
        view.note(INFRA, "web", ours.clone(), Some(&ahead)).await;
        assert!(
            !view.refresh(INFRA).await.unwrap(),
            "the listing is older than our note"
        );
        assert_eq!(held(&view).await, Some(ours.clone()));
        assert_eq!(
            heads_and_lists(&repo),
            (2, 2),
            "a head is read before each walk"
        );

        // A write whose revision the repo did not say: the repo is listed again.
        view.note(INFRA, "web", record(json!({"n": 4})), None).await;
        assert_eq!(
            held(&view).await,
            Some(ours),
            "kept: the listing is still older than our note"
        );
        assert_eq!(heads_and_lists(&repo), (3, 3));
    }

    /// A revision just after `rev` (the memory repo's TIDs end in a base-32 digit).
    fn tid_after(rev: Option<&str>) -> String {
        let rev = rev.unwrap_or("2222222222222");
        let mut next = rev.to_owned();
        next.push('2');
        next
    }
}
