//! The reconcile runtime: what turns "this object may need work" into exactly the reconciles
//! it needs, modelled on kube-rs's `kube-runtime` but driven by [`ObjectKey`]s, not by a store.
//!
//! A [`Controller`] runs one kind. Whoever watches changes holds a [`Trigger`] and schedules
//! names; the controller's queue dedupes and debounces them, runs the [`Reconciler`] with at
//! most `concurrency` keys at once and never one key twice at once, follows the [`Action`] it
//! returns (or, on an error, its `error_policy`: capped exponential [`Backoff`] by default),
//! lists every key again every resync period, and stops on [`Controller::shutdown`] within a
//! grace period. [`finalizer`] holds the finalizer protocol. Observability: a
//! [`KeyStatus`] snapshot per key and a broadcast stream of [`RuntimeEvent`]s.
//!
//! Choices where we part from kube-rs, and why: a [`Trigger`] takes names, not keys, since a
//! controller runs one kind and a key of another kind must not be sendable to it; the trailing
//! debounce is capped ([`Debounce::max`]) so a key triggered without pause still runs; requeues
//! are exact (not debounced) and the earliest request for a key wins; backoff has no jitter; a
//! cleanup may report [`finalizer::CleanupProgress::Waiting`] and keep its finalizer, since ending
//! a deployment can take several reconciles.
//!
//! Invariants: reconcilers are level-triggered and idempotent, so a run never learns *why* it
//! was scheduled and an extra run is harmless; a missed run is not (every trigger is followed by
//! a run that starts after it). All times are `tokio::time::Instant`s, so tests drive the runtime
//! with paused time.

mod action;
mod config;
mod controller;
mod dispatch;
pub mod finalizer;
mod key;
mod observe;
mod queue;
mod reconciler;
mod resync;
mod shutdown;

pub use action::{Action, Backoff};
pub use config::{ControllerConfig, Debounce};
pub use controller::{Controller, ShutdownError, Stopped, Trigger};
pub use key::ObjectKey;
pub use observe::{KeyStatus, RuntimeEvent};
pub use reconciler::{KeyLister, Reconciler};
pub use shutdown::ShutdownReport;
