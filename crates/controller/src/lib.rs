//! The embedded core controller of swdesk: it keeps the local objects of every kind (Infra,
//! EphemeralInfra, ComputeContract, AtprotoRecord, the collections) converging on what their
//! specs ask for, the kube-rs way.
//!
//! Map: [`runtime`] (per-kind queues that dedupe and debounce, one reconcile per object at a
//! time, requeues and capped exponential backoff, a periodic resync, finalizers, a controlled
//! shutdown; driven by keys, it knows no store), [`kinds`] (one reconciler per kind, over a
//! [`Context`]: the store, the owner's repo, the clock), [`remote`] (the owner's records as a
//! shared listing), [`changes`] (edits made elsewhere reaching that listing: the live feed of
//! the owner's repo, the poll), [`index_writer`] (the index at `self`), [`engine`] (all of it
//! running, fed by the store's watch).

pub mod changes;
pub mod context;
pub mod engine;
pub mod index_writer;
pub mod kinds;
pub mod remote;
pub mod runtime;

pub use changes::LiveFeed;
pub use context::{Context, ReconcileError};
pub use engine::{Engine, EngineConfig};
pub use swdesk_kernel::timestamp::SystemClock;
