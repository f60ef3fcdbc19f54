//! The store's errors: what went wrong, worded for people, with the facts a program branches
//! on (the kind, the name, the versions) as fields.
//!
//! Invariant: a conflict always carries the version the store holds, so the caller can tell a
//! stale read from a missing object without another query.

use swdesk_kernel::name::Name;
use swdesk_kernel::object::{Kind, Uid};
use thiserror::Error;

/// Why a store operation failed.
#[derive(Debug, Error)]
pub enum StoreError {
    /// An object of this kind and name exists already (perhaps still being deleted).
    #[error("{kind:?} '{name}' already exists")]
    AlreadyExists {
        /// The kind asked for.
        kind: Kind,
        /// The name asked for.
        name: Name,
    },
    /// Another object already has this uid.
    #[error("uid {uid} already belongs to another object")]
    UidTaken {
        /// The uid asked for.
        uid: Uid,
    },
    /// No object of this kind has this name.
    #[error("{kind:?} '{name}' does not exist")]
    NotFound {
        /// The kind asked for.
        kind: Kind,
        /// The name asked for.
        name: Name,
    },
    /// The object was written since the caller read it.
    #[error(
        "{kind:?} '{name}' changed since it was read (resourceVersion {expected} was given, \
         the store holds {current}): read it again and retry"
    )]
    Conflict {
        /// The object's kind.
        kind: Kind,
        /// The object's name.
        name: Name,
        /// The version the caller wrote against.
        expected: u64,
        /// The version the store holds.
        current: u64,
    },
    /// A finalizer was added to an object whose deletion was requested.
    #[error("{kind:?} '{name}' is being deleted: no finalizer may be added to it")]
    Deleting {
        /// The object's kind.
        kind: Kind,
        /// The object's name.
        name: Name,
    },
    /// The database was written by a newer version of the app.
    #[error(
        "the database is at schema version {found}, newer than version {supported} that this \
         app knows: update the app"
    )]
    SchemaTooNew {
        /// The file's `user_version`.
        found: u32,
        /// The newest version this build migrates to.
        supported: u32,
    },
    /// SQLite would not keep a write-ahead log for the file.
    #[error(
        "the object database cannot use a write-ahead log (journal_mode stayed {mode}): keep \
         the app's data directory on a local disk"
    )]
    NoWriteAheadLog {
        /// The journal mode SQLite answered.
        mode: String,
    },
    /// A stored row cannot be read back.
    #[error("the stored {kind} '{name}' is unreadable ({field}): {detail}")]
    Corrupt {
        /// The row's kind, as stored.
        kind: String,
        /// The row's name, as stored.
        name: String,
        /// The column that failed.
        field: &'static str,
        /// What is wrong with it.
        detail: String,
    },
    /// A spec or status could not be turned into JSON.
    #[error("the {field} of {kind:?} '{name}' cannot be stored as JSON: {source}")]
    Encode {
        /// The object's kind.
        kind: Kind,
        /// The object's name.
        name: Name,
        /// `spec` or `status`.
        field: &'static str,
        /// The serializer's complaint.
        #[source]
        source: serde_json::Error,
    },
    /// The operating system gave no random bytes for a new uid.
    #[error("no random source for a new object's uid: {0}")]
    NoRandomness(String),
    /// A call from async code stopped before it answered: it panicked, or the runtime is
    /// shutting down.
    #[error("a store call stopped before it answered: {0}")]
    Interrupted(String),
    /// The database itself failed (I/O, a full disk, a locked file).
    #[error("the object database failed: {0}")]
    Database(#[from] rusqlite::Error),
}
