//! What a live follower of the owner's repo (`com.atproto.sync.subscribeRepos`, read and
//! verified in `swdesk-atproto`) tells the controller: a verified commit's operations, a
//! request to list the collections again (the stream could not say what changed), and how the
//! follower stands (live, or polling and why). Plain data, no I/O: the controller applies it.
//!
//! Invariants: a [`RepoFeed::Commit`] carries only what its signed commit proves (each op's
//! record read from the block its CID names); its `cursor` is where a restarted follower
//! resumes, kept by whoever applied it, after it was applied.

use serde_json::Value;

/// Where a follower resumes: the stream's sequence number and the repo revision last applied.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FeedCursor {
    /// The last event's sequence number on the stream.
    pub seq: i64,
    /// The revision of the owner's repo that the view last took (a TID), if known.
    pub rev: Option<String>,
}

/// One record operation of a verified commit.
#[derive(Debug, Clone, PartialEq)]
pub struct RepoOp {
    /// The record's collection (NSID).
    pub collection: String,
    /// The record key.
    pub rkey: String,
    /// The record as the commit holds it; `None`: deleted.
    pub record: Option<OpRecord>,
}

/// A record as a verified commit holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct OpRecord {
    /// Its CID (the hash of its block).
    pub cid: String,
    /// Its value in the JSON data model, read from that block.
    pub value: Value,
}

/// How the follower stands, for the window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LiveState {
    /// Connecting (at start, or again after a break).
    Connecting,
    /// The stream is open: changes arrive as they are committed; nothing is polled.
    Live,
    /// No stream: changes are seen by listing the collections every poll; `why` says why.
    Polling {
        /// Why there is no stream (the last failure, in words).
        why: String,
    },
}

/// What the follower sends the controller.
#[derive(Debug, Clone, PartialEq)]
pub enum RepoFeed {
    /// A commit of the owner's repo, verified: apply its ops, then keep `cursor`.
    Commit {
        /// Its operations (every collection; the controller takes its own).
        ops: Vec<RepoOp>,
        /// The cursor once it is applied.
        cursor: FeedCursor,
    },
    /// The stream cannot say what changed (a `#sync`, a gap, a commit too big or unverifiable):
    /// list the collections again, then keep `cursor`.
    Resync {
        /// Why, in words.
        why: String,
        /// The cursor once the listing is done (none: keep the one there is).
        cursor: Option<FeedCursor>,
    },
    /// The follower's state changed.
    State(LiveState),
}
