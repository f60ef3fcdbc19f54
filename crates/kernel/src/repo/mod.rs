//! The `RecordRepo` port: the owner's atproto repo as the controller sees it. Reads take any
//! record URI (a record may live in another account's repo, e.g. a bidder's receipt); writes go
//! to the signed-in owner's own repo. The adapter that speaks XRPC lives in `swdesk-atproto`;
//! the domain only states what an answer means.
//!
//! Invariants: a write states its precondition explicitly ([`Swap`]), so a lost race is never
//! silent: it is [`RepoError::SwapMismatch`] carrying the cid that is there now (or `None` when
//! the record is gone). A missing record is `Ok(None)` on `get`, never an error.

pub mod counted;
pub mod journal;
pub mod live;
#[cfg(any(test, feature = "test-support"))]
pub mod memory;

use std::future::Future;

use serde_json::Value;
use thiserror::Error;

use crate::retry::Fault;
use crate::rkey::Rkey;
use crate::uri::RecordUri;

/// A record as the repo holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredRecord {
    /// Where it lives.
    pub uri: RecordUri,
    /// Its content id, as the repo reports it.
    pub cid: String,
    /// Its value in the JSON data model, `$type` included.
    pub value: Value,
}

/// How far a record read from another repo is trusted.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Provenance {
    /// Its bytes hash to its cid, a commit signed by the repo's key holds it (the repo's
    /// `com.atproto.sync.getRecord` proof, checked here); `rev` is that commit's.
    Proven {
        /// The revision of the signed commit.
        rev: String,
    },
    /// Read without a proof (its PDS serves none); its cid is the PDS's word.
    Unproven {
        /// Why there is no proof.
        why: String,
    },
}

/// A record with how far it is trusted.
#[derive(Debug, Clone, PartialEq)]
pub struct ProvenRecord {
    /// The record (its cid computed from the proven bytes when proven).
    pub record: StoredRecord,
    /// Proven or not, and why.
    pub provenance: Provenance,
}

/// One page of a collection, oldest-first or newest-first as the repo lists it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RecordPage {
    /// The records of this page.
    pub records: Vec<StoredRecord>,
    /// Where the next page starts; `None` on the last page.
    pub cursor: Option<String>,
}

/// What a write expects to find before it writes (`swapRecord`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Swap {
    /// Write whatever is there (no precondition).
    Any,
    /// Write only when no record exists (create-if-absent).
    Absent,
    /// Write only when the record is at exactly this cid.
    Cid(String),
}

/// Where a write landed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// The record's URI.
    pub uri: RecordUri,
    /// The cid of the value just written.
    pub cid: String,
    /// The revision of the owner's repo the write's commit made (a TID), when the repo said:
    /// what orders this write against a change heard of another way ([`RecordRepo::head`]).
    pub rev: Option<String>,
}

/// Why a repo call failed; each case tells the controller what to do next.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RepoError {
    /// The record was not where the write expected it: read it again and decide again.
    #[error("the record changed under this write: it is now at {}", current.as_deref().unwrap_or("nothing (gone)"))]
    SwapMismatch {
        /// The cid the record has now; `None` when there is no record.
        current: Option<String>,
    },
    /// The repo refused the record's content.
    #[error("the repo refused the record: {message}")]
    Invalid {
        /// The repo's own words.
        message: String,
    },
    /// The session may not do this (a scope not granted, a revoked or expired session).
    #[error("not allowed: {message}")]
    Unauthorized {
        /// The server's own words, or what to do.
        message: String,
    },
    /// The repo could not be reached or answered with a server error: try again later.
    #[error("the repo is unreachable or failing: {message}")]
    Unavailable {
        /// What went wrong on the way.
        message: String,
        /// How long the repo asked to be left alone (its `Retry-After`), when it said.
        retry_after: Option<std::time::Duration>,
    },
    /// A record's proof does not hold (its bytes, its commit's signature or its tree path):
    /// the record is not trusted.
    #[error("the record's proof does not hold: {message}")]
    BadProof {
        /// Which check failed, with the cids involved.
        message: String,
    },
    /// The record was not sent: it does not validate against its lexicon ([`check_write`], run
    /// before every write), so nothing invalid leaves the app.
    #[error("the record was not sent, it does not validate: {problems}")]
    NotSent {
        /// Every problem, joined.
        problems: String,
    },
    /// Any other refusal, with the server's error name.
    #[error("the repo answered {error}: {message}")]
    Other {
        /// The XRPC error name (or HTTP status).
        error: String,
        /// The server's message.
        message: String,
    },
}

/// Whether `value` may be written at `collection`/`rkey`: every problem the built-in lexicons
/// find in the record and its key, joined, as [`RepoError::NotSent`]. The adapter that writes
/// to a PDS runs it before every write, so a record the app would publish invalid (a peer's
/// text too long, an unknown collection) is refused here with its reasons, never by the PDS or,
/// worse, accepted there and refused by every reader.
pub fn check_write(collection: &str, rkey: &Rkey, value: &Value) -> Result<(), RepoError> {
    let catalog = swdesk_lexicon::validate::builtin().map_err(|error| RepoError::NotSent {
        problems: format!("the built-in lexicons do not load: {error}"),
    })?;
    let mut problems = catalog.validate_rkey(collection, rkey.as_str());
    problems.extend(catalog.validate_record(collection, value));
    if problems.is_empty() {
        return Ok(());
    }
    let mut described: Vec<String> = Vec::new();
    for problem in problems.iter().map(ToString::to_string) {
        if !described.contains(&problem) {
            described.push(problem);
        }
    }
    Err(RepoError::NotSent {
        problems: described.join("; "),
    })
}

impl RepoError {
    /// An unavailable repo that named no wait.
    pub fn unavailable(message: impl Into<String>) -> Self {
        Self::Unavailable {
            message: message.into(),
            retry_after: None,
        }
    }

    /// Whether trying the same call again later may succeed, and the repo's own wait.
    pub fn fault(&self) -> Fault {
        match self {
            Self::Unavailable { retry_after, .. } => Fault::Transient {
                retry_after: *retry_after,
            },
            _ => Fault::Permanent,
        }
    }

    /// Whether trying the same call again later may succeed.
    pub fn is_transient(&self) -> bool {
        self.fault().is_transient()
    }
}

/// The owner's repo. Implemented by `swdesk-atproto` against a PDS; by fakes in unit tests.
pub trait RecordRepo: Send + Sync {
    /// The DID of the repo that writes go to.
    fn owner(&self) -> &str;

    /// The record at `uri`, or `None` when there is none.
    fn get(
        &self,
        uri: &RecordUri,
    ) -> impl Future<Output = Result<Option<StoredRecord>, RepoError>> + Send;

    /// The record at `uri` with the repo's proof checked: the record's bytes, the signed
    /// commit and the tree path that holds it (`com.atproto.sync.getRecord`); unproven (with
    /// why) where the repo serves no proof; an error naming both cids when the proof does not
    /// hold. `None` when the proof shows there is no record.
    fn prove(
        &self,
        uri: &RecordUri,
    ) -> impl Future<Output = Result<Option<ProvenRecord>, RepoError>> + Send;

    /// One page of `collection` in `repo`'s repo, starting at `cursor`.
    fn list(
        &self,
        repo: &str,
        collection: &str,
        cursor: Option<&str>,
        limit: u16,
    ) -> impl Future<Output = Result<RecordPage, RepoError>> + Send;

    /// The revision of the owner's repo now (its latest commit's, a TID), `None` where the
    /// repo does not say: taken before a listing, it says how new the listing is at least.
    fn head(&self) -> impl Future<Output = Result<Option<String>, RepoError>> + Send;

    /// Writes `value` at `collection/rkey` of the owner's repo when `swap` holds.
    fn put(
        &self,
        collection: &str,
        rkey: &Rkey,
        value: &Value,
        swap: Swap,
    ) -> impl Future<Output = Result<Written, RepoError>> + Send;

    /// Deletes `collection/rkey` of the owner's repo when `swap` holds; deleting a record that
    /// is not there succeeds.
    fn delete(
        &self,
        collection: &str,
        rkey: &Rkey,
        swap: Swap,
    ) -> impl Future<Output = Result<(), RepoError>> + Send;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rkey(text: &str) -> Rkey {
        Rkey::parse(text).expect("a record key")
    }

    #[test]
    fn a_valid_record_may_be_written() {
        let key = serde_json::json!({
            "$type": "com.publicdomainrelay.temp.market.badgeBlueKey",
            "key": "did:key:zDnaeTiq1PdzvZXUaMdezchcMJQpBdH2VN4pgrrEhMCCbmwSb",
            "createdAt": "2026-12-05T02:00:00.000Z",
        });
        let did_key = "did:key:zDnaeTiq1PdzvZXUaMdezchcMJQpBdH2VN4pgrrEhMCCbmwSb";
        assert_eq!(
            check_write(
                "com.publicdomainrelay.temp.market.badgeBlueKey",
                &rkey(did_key),
                &key
            ),
            Ok(())
        );
    }

    #[test]
    fn a_record_that_would_not_validate_is_not_sent_and_every_problem_is_named() {
        let wrong = serde_json::json!({
            "$type": "com.publicdomainrelay.temp.market.badgeBlueKey",
            "createdAt": 7,
        });
        let Err(RepoError::NotSent { problems }) = check_write(
            "com.publicdomainrelay.temp.market.badgeBlueKey",
            &rkey("did:key:zDn"),
            &wrong,
        ) else {
            panic!("refused before it is sent");
        };
        assert!(
            problems.contains("/key"),
            "the missing key is named: {problems}"
        );
        assert!(
            problems.contains("/createdAt"),
            "the wrong type is named: {problems}"
        );
        assert_eq!(
            check_write("com.example.unknown", &rkey("x"), &wrong).map_err(|error| error.fault()),
            Err(crate::retry::Fault::Permanent)
        );
    }
}
