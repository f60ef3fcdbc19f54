//! [`Journaled`]: any [`RecordRepo`] that tells a listener of every write the repo accepted
//! (a put with its at-uri and new cid, a delete with its at-uri), so the window's Activity
//! view can list every record the app wrote, whichever part of it wrote it (the deployment
//! records, the index, the market's records). Reads and refused writes are not told.

use std::sync::Arc;

use serde_json::Value;

use super::{ProvenRecord, RecordPage, RecordRepo, RepoError, StoredRecord, Swap, Written};
use crate::rkey::Rkey;
use crate::uri::RecordUri;

/// A write the repo accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecordWrite {
    /// A record was created or replaced.
    Put {
        /// Its at-uri.
        uri: String,
        /// Its new cid.
        cid: String,
    },
    /// A record was deleted.
    Delete {
        /// Its at-uri.
        uri: String,
    },
}

/// Who hears of the writes.
pub type WriteListener = Arc<dyn Fn(RecordWrite) + Send + Sync>;

/// A repo whose accepted writes are told to a listener.
pub struct Journaled<R> {
    inner: R,
    listener: WriteListener,
}

impl<R> std::fmt::Debug for Journaled<R> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Journaled").finish_non_exhaustive()
    }
}

impl<R: RecordRepo> Journaled<R> {
    /// `inner`, telling `listener` of every accepted write.
    pub fn new(inner: R, listener: WriteListener) -> Self {
        Self { inner, listener }
    }
}

impl<R: RecordRepo> RecordRepo for Journaled<R> {
    fn owner(&self) -> &str {
        self.inner.owner()
    }

    async fn get(&self, uri: &RecordUri) -> Result<Option<StoredRecord>, RepoError> {
        self.inner.get(uri).await
    }

    async fn prove(&self, uri: &RecordUri) -> Result<Option<ProvenRecord>, RepoError> {
        self.inner.prove(uri).await
    }

    async fn list(
        &self,
        repo: &str,
        collection: &str,
        cursor: Option<&str>,
        limit: u16,
    ) -> Result<RecordPage, RepoError> {
        self.inner.list(repo, collection, cursor, limit).await
    }

    async fn head(&self) -> Result<Option<String>, RepoError> {
        self.inner.head().await
    }

    async fn put(
        &self,
        collection: &str,
        rkey: &Rkey,
        value: &Value,
        swap: Swap,
    ) -> Result<Written, RepoError> {
        let written = self.inner.put(collection, rkey, value, swap).await?;
        (self.listener)(RecordWrite::Put {
            uri: written.uri.to_string(),
            cid: written.cid.clone(),
        });
        Ok(written)
    }

    async fn delete(&self, collection: &str, rkey: &Rkey, swap: Swap) -> Result<(), RepoError> {
        self.inner.delete(collection, rkey, swap).await?;
        if let Ok(uri) = RecordUri::new(self.inner.owner(), collection, rkey) {
            (self.listener)(RecordWrite::Delete {
                uri: uri.to_string(),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::repo::memory::{MemoryRepo, ready};

    #[test]
    fn tells_every_accepted_write_and_nothing_else() {
        let heard = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&heard);
        let repo = Journaled::new(
            MemoryRepo::new("did:plc:owner"),
            Arc::new(move |write| sink.lock().unwrap().push(write)),
        );
        let rkey = Rkey::parse("a").unwrap();
        let value = serde_json::json!({"$type": "x.y.z"});
        let written = ready(repo.put("x.y.z", &rkey, &value, Swap::Absent)).unwrap();
        let refused = ready(repo.put("x.y.z", &rkey, &value, Swap::Absent));
        assert!(refused.is_err());
        let uri = RecordUri::parse(&written.uri.to_string()).unwrap();
        ready(repo.get(&uri)).unwrap();
        ready(repo.delete("x.y.z", &rkey, Swap::Any)).unwrap();
        assert_eq!(
            *heard.lock().unwrap(),
            vec![
                RecordWrite::Put {
                    uri: "at://did:plc:owner/x.y.z/a".into(),
                    cid: written.cid.clone(),
                },
                RecordWrite::Delete {
                    uri: "at://did:plc:owner/x.y.z/a".into(),
                },
            ]
        );
    }
}
