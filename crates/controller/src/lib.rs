//! The embedded core controller of swdesk: it keeps the local objects of every kind (Infra,
//! EphemeralInfra, ComputeContract, AtprotoRecord, the collections) converging on what their
//! specs ask for, the kube-rs way.
//!
//! For now it holds only the [`runtime`]: per-kind queues that dedupe and debounce, one reconcile
//! per object at a time, requeues and capped exponential backoff, a periodic resync, finalizers
//! and a controlled shutdown. The runtime is driven by keys and knows no store: the reconcilers
//! (to come, one per kind) read and write objects through the store themselves, and whoever
//! watches the store feeds keys to a [`runtime::Trigger`].

pub mod context;
pub mod index_writer;
pub mod kinds;
pub mod remote;
pub mod runtime;

pub use context::{Context, ReconcileError, SystemClock};
