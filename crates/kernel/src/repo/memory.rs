//! [`MemoryRepo`]: an in-memory `RecordRepo` for unit tests of the reconcilers (the
//! `test-support` feature). It keeps the PDS's observable rules: cids computed from the record
//! (DAG-CBOR, as the PDS does), `swapRecord` checked on every write (a stale swap is a
//! [`RepoError::SwapMismatch`] carrying the current cid), deleting a missing record succeeds,
//! listing pages in rkey order, every change a commit with a revision past the last (TIDs,
//! sortable as text). It counts calls so tests can assert how many requests a
//! reconcile made, and it can be taken offline. Integration tests use the real PDS instead.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use serde_json::Value;

pub use super::counted::Calls;
use super::counted::{CallCounter, CallKind};
use super::{
    ProvenRecord, Provenance, RecordPage, RecordRepo, RepoError, StoredRecord, Swap, Written,
};
use crate::rkey::Rkey;
use crate::uri::RecordUri;

/// (repo, collection, rkey) → (cid, value).
type Records = BTreeMap<(String, String, String), (String, Value)>;

/// What runs while the next write is in flight (a test's interleaving).
type DuringPut = Box<dyn FnOnce() + Send>;

/// An in-memory repo of one owner (and readable records of others).
pub struct MemoryRepo {
    owner: String,
    records: Mutex<Records>,
    calls: CallCounter,
    offline: AtomicBool,
    during_next_put: Mutex<Option<DuringPut>>,
    lose_next_answer: AtomicBool,
    commits: AtomicU64,
}

impl std::fmt::Debug for MemoryRepo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryRepo")
            .field("owner", &self.owner)
            .field("calls", &self.calls.calls())
            .finish_non_exhaustive()
    }
}

/// The answer of `future` when it is ready at once, as every `MemoryRepo` call is: the
/// synchronous tests of repo wrappers drive their calls with it.
pub fn ready<F: Future>(future: F) -> F::Output {
    let mut context = std::task::Context::from_waker(std::task::Waker::noop());
    match std::pin::pin!(future).poll(&mut context) {
        std::task::Poll::Ready(output) => output,
        std::task::Poll::Pending => panic!("a MemoryRepo call is ready at once"),
    }
}

impl MemoryRepo {
    /// An empty repo of `owner` (a DID).
    pub fn new(owner: &str) -> Self {
        Self {
            owner: owner.to_owned(),
            records: Mutex::new(BTreeMap::new()),
            calls: CallCounter::default(),
            offline: AtomicBool::new(false),
            during_next_put: Mutex::new(None),
            lose_next_answer: AtomicBool::new(false),
            commits: AtomicU64::new(0),
        }
    }

    /// The next `put` is carried out, but its answer is lost: the caller sees the repo as
    /// unreachable (a timeout after the PDS wrote).
    pub fn lose_next_answer(&self) {
        self.lose_next_answer.store(true, Ordering::SeqCst);
    }

    /// Runs `during` while the next `put` is in flight, after its record is stored and before
    /// it answers: what another task does meanwhile.
    pub fn during_next_put(&self, during: impl FnOnce() + Send + 'static) {
        *self
            .during_next_put
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(Box::new(during));
    }

    /// The calls made so far.
    pub fn calls(&self) -> Calls {
        self.calls.calls()
    }

    /// Makes every call fail as unreachable (`true`) or work again (`false`).
    pub fn set_offline(&self, offline: bool) {
        self.offline.store(offline, Ordering::SeqCst);
    }

    /// Writes a record directly, as another device or the owner elsewhere would.
    pub fn write_directly(&self, repo: &str, collection: &str, rkey: &str, value: Value) -> String {
        let cid = cid_of(&value);
        let mut records = self.lock();
        records.insert(key(repo, collection, rkey), (cid.clone(), value));
        self.commit();
        cid
    }

    /// Removes a record directly.
    pub fn remove_directly(&self, repo: &str, collection: &str, rkey: &str) {
        let mut records = self.lock();
        records.remove(&key(repo, collection, rkey));
        self.commit();
    }

    /// The revision of the repo's last commit (`None` before the first), as [`RecordRepo::head`]
    /// answers it, uncounted: what a test puts on a feed's commit.
    pub fn rev(&self) -> Option<String> {
        match self.commits.load(Ordering::SeqCst) {
            0 => None,
            commits => Some(tid(commits)),
        }
    }

    /// A new commit: its revision.
    fn commit(&self) -> String {
        tid(self
            .commits
            .fetch_add(1, Ordering::SeqCst)
            .saturating_add(1))
    }

    /// The record's value now, if any.
    pub fn value(&self, repo: &str, collection: &str, rkey: &str) -> Option<Value> {
        self.lock()
            .get(&key(repo, collection, rkey))
            .map(|(_, value)| value.clone())
    }

    fn check_online(&self) -> Result<(), RepoError> {
        if self.offline.load(Ordering::SeqCst) {
            return Err(RepoError::unavailable("the repo is offline (test)"));
        }
        Ok(())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Records> {
        self.records
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn check_swap(&self, current: Option<&String>, swap: &Swap) -> Result<(), RepoError> {
        let holds = match swap {
            Swap::Any => true,
            Swap::Absent => current.is_none(),
            Swap::Cid(expected) => current == Some(expected),
        };
        if holds {
            Ok(())
        } else {
            Err(RepoError::SwapMismatch {
                current: current.cloned(),
            })
        }
    }
}

fn key(repo: &str, collection: &str, rkey: &str) -> (String, String, String) {
    (repo.to_owned(), collection.to_owned(), rkey.to_owned())
}

/// `n` as a TID: 13 characters of the sortable base-32 alphabet, so later sorts after.
fn tid(n: u64) -> String {
    const ALPHABET: &[u8; 32] = b"234567abcdefghijklmnopqrstuvwxyz";
    (0..13)
        .rev()
        .map(|digit| {
            let index = n.checked_shr(digit * 5).unwrap_or(0) & 31;
            char::from(ALPHABET[usize::try_from(index).unwrap_or(0)])
        })
        .collect()
}

fn cid_of(value: &Value) -> String {
    swdesk_lexicon::cid::record_cid(value)
        .map(|cid| cid.to_string())
        .unwrap_or_else(|error| format!("invalid:{error}"))
}

fn stored(
    repo: &str,
    collection: &str,
    rkey: &str,
    cid: &str,
    value: &Value,
) -> Option<StoredRecord> {
    let rkey = Rkey::parse(rkey).ok()?;
    Some(StoredRecord {
        uri: RecordUri::new(repo, collection, &rkey).ok()?,
        cid: cid.to_owned(),
        value: value.clone(),
    })
}

impl RecordRepo for MemoryRepo {
    fn owner(&self) -> &str {
        &self.owner
    }

    async fn get(&self, uri: &RecordUri) -> Result<Option<StoredRecord>, RepoError> {
        self.calls.count(CallKind::Get);
        self.check_online()?;
        let rkey = uri.rkey().to_string();
        let records = self.lock();
        let found = records.get(&key(uri.authority(), uri.collection(), &rkey));
        Ok(found
            .and_then(|(cid, value)| stored(uri.authority(), uri.collection(), &rkey, cid, value)))
    }

    async fn prove(&self, uri: &RecordUri) -> Result<Option<ProvenRecord>, RepoError> {
        let record = self.get(uri).await?;
        Ok(record.map(|record| ProvenRecord {
            record,
            provenance: Provenance::Unproven {
                why: "an in-memory repo serves no proofs".to_owned(),
            },
        }))
    }

    async fn list(
        &self,
        repo: &str,
        collection: &str,
        cursor: Option<&str>,
        limit: u16,
    ) -> Result<RecordPage, RepoError> {
        self.calls.count(CallKind::List);
        self.check_online()?;
        let records = self.lock();
        let after = cursor.unwrap_or_default();
        let page: Vec<StoredRecord> = records
            .iter()
            .filter(|((r, c, k), _)| r == repo && c == collection && k.as_str() > after)
            .take(usize::from(limit.max(1)))
            .filter_map(|((r, c, k), (cid, value))| stored(r, c, k, cid, value))
            .collect();
        let cursor = (page.len() == usize::from(limit.max(1)))
            .then(|| page.last().map(|record| record.uri.rkey().to_string()))
            .flatten();
        Ok(RecordPage {
            records: page,
            cursor,
        })
    }

    async fn put(
        &self,
        collection: &str,
        rkey: &Rkey,
        value: &Value,
        swap: Swap,
    ) -> Result<Written, RepoError> {
        self.calls.count(CallKind::Put);
        self.check_online()?;
        let record_key = key(&self.owner, collection, rkey.as_str());
        let mut records = self.lock();
        self.check_swap(records.get(&record_key).map(|(cid, _)| cid), &swap)?;
        let cid = cid_of(value);
        records.insert(record_key, (cid.clone(), value.clone()));
        let rev = self.commit();
        drop(records);
        let during = self
            .during_next_put
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        if let Some(during) = during {
            during();
        }
        if self.lose_next_answer.swap(false, Ordering::SeqCst) {
            return Err(RepoError::unavailable("the answer was lost (test)"));
        }
        let uri =
            RecordUri::new(&self.owner, collection, rkey).map_err(|error| RepoError::Invalid {
                message: error.to_string(),
            })?;
        Ok(Written {
            uri,
            cid,
            rev: Some(rev),
        })
    }

    async fn head(&self) -> Result<Option<String>, RepoError> {
        self.calls.count(CallKind::Head);
        self.check_online()?;
        Ok(self.rev())
    }

    async fn delete(&self, collection: &str, rkey: &Rkey, swap: Swap) -> Result<(), RepoError> {
        self.calls.count(CallKind::Delete);
        self.check_online()?;
        let record_key = key(&self.owner, collection, rkey.as_str());
        let mut records = self.lock();
        self.check_swap(records.get(&record_key).map(|(cid, _)| cid), &swap)?;
        if records.remove(&record_key).is_some() {
            self.commit();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_commit_has_a_revision_that_sorts_after_the_last() {
        let repo = MemoryRepo::new("did:plc:owner");
        assert_eq!(repo.rev(), None);
        let mut revs = Vec::new();
        for n in 0..40 {
            repo.write_directly("did:plc:owner", "x.y.z", "a", serde_json::json!({"n": n}));
            revs.push(repo.rev().unwrap());
        }
        assert!(revs.windows(2).all(|pair| pair[0] < pair[1]), "{revs:?}");
        assert!(
            revs.iter()
                .all(|rev| swdesk_lexicon::syntax::tid(rev).is_ok()),
            "{revs:?}"
        );
        let value = serde_json::json!({"$type": "x.y.z"});
        let rkey = Rkey::parse("b").unwrap();
        let written = ready(repo.put("x.y.z", &rkey, &value, Swap::Any)).unwrap();
        assert_eq!(written.rev, repo.rev());
        assert!(written.rev.unwrap() > revs[39]);
    }
}
