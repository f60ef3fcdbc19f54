//! The embedded object store of swdesk's core controller: every object of SPEC §1 (Infra,
//! EphemeralInfra, ComputeContract, AtprotoRecord) with its metadata, in one SQLite file in the
//! app's data directory. It is to the controller what the API server is to a Kubernetes
//! controller: compare-and-swap on `resourceVersion`, finalizers, owner references with garbage
//! collection, and a watch stream of committed changes.
//!
//! Map: [`store`] (the [`Store`] and its operations), [`resource`] (how the database spells
//! each kind; the [`Resource`] trait itself is the core's), [`watch`] (change [`Event`]s), [`schema`] (pragmas and
//! the ordered migrations), [`error`] ([`StoreError`]), [`lock`] ([`StoreLock`]: one controller
//! per store file, across processes), [`uid`] (new objects' uids), `cursor` (where each followed event stream resumes); `lifecycle` and `row` are the untyped
//! engine beneath the typed API.
//!
//! Invariants:
//! - every write is one SQLite transaction, committed with the WAL journal and
//!   `synchronous=FULL`: a crash at any point loses no committed object and leaves no half
//!   write (a garbage-collection cascade commits whole or not at all);
//! - the store owns `resourceVersion` (1 at creation, +1 per write) and `generation` (1 at
//!   creation, +1 per spec change); every write but `delete` compares the caller's
//!   `resourceVersion` first and answers [`StoreError::Conflict`] when it is stale;
//! - a write that changes nothing is no write: no version bump, no event;
//! - an object is removed only when its deletion was requested and it has no finalizer left;
//!   its removal requests the deletion of every object whose `ownerRefs` name its uid;
//! - events go out after the commit, in commit order, one per object changed.
//!
//! Sync API, async callers: the store is synchronous (rusqlite) and `Send + Sync`; one
//! connection behind a mutex serializes all access, which SQLite does for writers anyway. Async
//! code holds an `Arc<Store>` and goes through [`Store::call`]: callers wait for the one turn
//! at the connection as tasks, and the call whose turn it is runs on tokio's blocking pool (a
//! write is one short transaction plus an fsync). So concurrent callers never park a blocking
//! thread each on the mutex, and the app keeps a thread or two for the store, not one per
//! waiting caller. Only [`Store::watch`] is async to consume (a `tokio::sync::broadcast`
//! receiver).

mod cursor;
pub mod error;
mod lifecycle;
pub mod lock;
pub mod resource;
mod row;
pub mod schema;
pub mod store;
pub mod uid;
pub mod watch;

pub use error::StoreError;
pub use lock::{LockError, StoreLock};
pub use resource::{ObjectOf, Resource};
pub use store::Store;
pub use uid::random_uid;
pub use watch::{Change, Event};
