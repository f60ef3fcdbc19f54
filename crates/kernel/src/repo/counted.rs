//! [`Counted`]: any [`RecordRepo`] with a tally of the requests made through it, by kind, so a
//! benchmark or an integration test can say how many requests a controller made against the
//! real PDS. It counts every attempt, and apart the ones the repo answered (a success or a
//! refusal, not an unreachable repo), which are the writes that actually reached it.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;

use super::{ProvenRecord, RecordPage, RecordRepo, RepoError, StoredRecord, Swap, Written};
use crate::rkey::Rkey;
use crate::uri::RecordUri;

/// Requests made to a repo, by kind.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Calls {
    /// `get`.
    pub gets: usize,
    /// `list` pages.
    pub lists: usize,
    /// `put`.
    pub puts: usize,
    /// `delete`.
    pub deletes: usize,
    /// `head` (the repo's latest revision, before a listing).
    pub heads: usize,
}

impl Calls {
    /// Writes of any kind.
    pub fn writes(&self) -> usize {
        self.puts + self.deletes
    }

    /// Requests of any kind.
    pub fn total(&self) -> usize {
        self.gets + self.lists + self.heads + self.writes()
    }

    /// The calls made since `earlier`.
    pub fn since(&self, earlier: Calls) -> Calls {
        Calls {
            gets: self.gets - earlier.gets,
            lists: self.lists - earlier.lists,
            puts: self.puts - earlier.puts,
            deletes: self.deletes - earlier.deletes,
            heads: self.heads - earlier.heads,
        }
    }
}

/// The kinds of request a repo serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallKind {
    /// `get`.
    Get,
    /// `list`.
    List,
    /// `put`.
    Put,
    /// `delete`.
    Delete,
    /// `head`.
    Head,
}

/// A thread-safe tally of [`Calls`].
#[derive(Debug, Default)]
pub struct CallCounter {
    gets: AtomicUsize,
    lists: AtomicUsize,
    puts: AtomicUsize,
    deletes: AtomicUsize,
    heads: AtomicUsize,
}

impl CallCounter {
    /// Counts one call of `kind`.
    pub fn count(&self, kind: CallKind) {
        let counter = match kind {
            CallKind::Get => &self.gets,
            CallKind::List => &self.lists,
            CallKind::Put => &self.puts,
            CallKind::Delete => &self.deletes,
            CallKind::Head => &self.heads,
        };
        counter.fetch_add(1, Ordering::SeqCst);
    }

    /// The calls counted so far.
    pub fn calls(&self) -> Calls {
        Calls {
            gets: self.gets.load(Ordering::SeqCst),
            lists: self.lists.load(Ordering::SeqCst),
            puts: self.puts.load(Ordering::SeqCst),
            deletes: self.deletes.load(Ordering::SeqCst),
            heads: self.heads.load(Ordering::SeqCst),
        }
    }
}

/// What passed through a [`Counted`] repo: every attempt, and those the repo answered.
#[derive(Debug, Default)]
pub struct Tally {
    attempted: CallCounter,
    answered: CallCounter,
}

impl Tally {
    /// Every request made, answered or not.
    pub fn attempted(&self) -> Calls {
        self.attempted.calls()
    }

    /// The requests the repo answered (a success or a refusal); an unreachable repo answers
    /// nothing.
    pub fn answered(&self) -> Calls {
        self.answered.calls()
    }

    fn record<T>(&self, kind: CallKind, result: &Result<T, RepoError>) {
        self.attempted.count(kind);
        if !matches!(result, Err(RepoError::Unavailable { .. })) {
            self.answered.count(kind);
        }
    }
}

/// `inner`, counting what passes through it into a shared [`Tally`].
#[derive(Debug)]
pub struct Counted<R> {
    inner: R,
    tally: Arc<Tally>,
}

impl<R: RecordRepo> Counted<R> {
    /// Wraps `inner`; read the counts through [`Self::tally`].
    pub fn new(inner: R) -> Self {
        Self {
            inner,
            tally: Arc::default(),
        }
    }

    /// The wrapped repo, for requests that should not be counted (a test looking on).
    pub fn inner(&self) -> &R {
        &self.inner
    }

    /// The tally, shared: it keeps counting after the repo moved into a controller.
    pub fn tally(&self) -> Arc<Tally> {
        Arc::clone(&self.tally)
    }
}

impl<R: RecordRepo> Counted<R> {
    /// The answer of `call`, tallied as one request of `kind`.
    async fn counted<T>(
        &self,
        kind: CallKind,
        call: impl Future<Output = Result<T, RepoError>>,
    ) -> Result<T, RepoError> {
        let result = call.await;
        self.tally.record(kind, &result);
        result
    }
}

impl<R: RecordRepo> RecordRepo for Counted<R> {
    fn owner(&self) -> &str {
        self.inner.owner()
    }

    async fn get(&self, uri: &RecordUri) -> Result<Option<StoredRecord>, RepoError> {
        self.counted(CallKind::Get, self.inner.get(uri)).await
    }

    async fn prove(&self, uri: &RecordUri) -> Result<Option<ProvenRecord>, RepoError> {
        self.counted(CallKind::Get, self.inner.prove(uri)).await
    }

    async fn list(
        &self,
        repo: &str,
        collection: &str,
        cursor: Option<&str>,
        limit: u16,
    ) -> Result<RecordPage, RepoError> {
        let call = self.inner.list(repo, collection, cursor, limit);
        self.counted(CallKind::List, call).await
    }

    async fn head(&self) -> Result<Option<String>, RepoError> {
        self.counted(CallKind::Head, self.inner.head()).await
    }

    async fn put(
        &self,
        collection: &str,
        rkey: &Rkey,
        value: &Value,
        swap: Swap,
    ) -> Result<Written, RepoError> {
        let call = self.inner.put(collection, rkey, value, swap);
        self.counted(CallKind::Put, call).await
    }

    async fn delete(&self, collection: &str, rkey: &Rkey, swap: Swap) -> Result<(), RepoError> {
        let call = self.inner.delete(collection, rkey, swap);
        self.counted(CallKind::Delete, call).await
    }
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::repo::memory::{MemoryRepo, ready};

    #[test]
    fn counts_every_attempt_and_apart_those_the_repo_answered() {
        let repo = Counted::new(MemoryRepo::new("did:plc:owner"));
        let tally = repo.tally();
        let rkey = Rkey::parse("a").unwrap();
        let value = serde_json::json!({"$type": "x.y.z"});
        ready(repo.put("x.y.z", &rkey, &value, Swap::Absent)).unwrap();
        let refused = ready(repo.put("x.y.z", &rkey, &value, Swap::Absent));
        assert!(matches!(refused, Err(RepoError::SwapMismatch { .. })));
        repo.inner.set_offline(true);
        assert!(ready(repo.list("did:plc:owner", "x.y.z", None, 10)).is_err());
        let puts_and_a_list = Calls {
            puts: 2,
            lists: 1,
            ..Calls::default()
        };
        assert_eq!(tally.attempted(), puts_and_a_list);
        assert_eq!(
            tally.answered(),
            Calls {
                puts: 2,
                ..Calls::default()
            }
        );
        assert_eq!(tally.attempted().since(tally.answered()).total(), 1);
    }
}
