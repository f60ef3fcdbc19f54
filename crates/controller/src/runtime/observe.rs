//! What the runtime shows of itself: a [`KeyStatus`] per key (the snapshot a status view reads)
//! and [`RuntimeEvent`]s (the stream an Activity view follows).
//!
//! Invariants: only the controller's loop writes the status board, after every change of a key,
//! and the lock is never held across an await, so a snapshot is cheap and at most one step
//! behind; events go out on a broadcast channel that never blocks the runtime (a slow receiver
//! lags and loses events, the runtime does not wait); an error shows as its `Display` text only.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use swdesk_kernel::name::Name;
use swdesk_kernel::object::Kind;
use tokio::time::Instant;

use super::action::Action;
use super::key::ObjectKey;

/// How many events a receiver may fall behind before it lags.
pub(crate) const EVENT_CAPACITY: usize = 256;

/// The state of one key, as last seen by the runtime.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeyStatus {
    /// Whether a reconcile of the key is running.
    pub running: bool,
    /// What the last finished reconcile led to (its action, or its error policy's).
    pub last_action: Option<Action>,
    /// The error of the last finished reconcile, when it failed.
    pub last_error: Option<String>,
    /// How long the last finished reconcile took.
    pub last_duration: Option<Duration>,
    /// When the key is due next (`tokio::time::Instant`), if it is scheduled.
    pub next_run: Option<Instant>,
    /// Consecutive failures; 0 after a success. The next failure is attempt `failures + 1`.
    pub failures: u32,
}

/// One step of the runtime, for an Activity view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuntimeEvent {
    /// A reconcile started; `failures` consecutive ones failed before it.
    Started {
        /// The key reconciled.
        key: ObjectKey,
        /// Consecutive failures before this run.
        failures: u32,
    },
    /// A reconcile succeeded.
    Finished {
        /// The key reconciled.
        key: ObjectKey,
        /// What it asked for.
        action: Action,
        /// How long it took.
        duration: Duration,
    },
    /// A reconcile failed (or panicked).
    Failed {
        /// The key reconciled.
        key: ObjectKey,
        /// The error's text.
        error: String,
        /// Consecutive failures, this one included.
        failures: u32,
        /// What the error policy decided.
        retry: Action,
        /// How long it took.
        duration: Duration,
    },
    /// A reconcile was still running at the end of a shutdown's grace period and was stopped.
    CutOff {
        /// The key whose reconcile was stopped.
        key: ObjectKey,
    },
    /// The periodic resync listed and triggered every key of the kind.
    Resynced {
        /// The kind listed.
        kind: Kind,
        /// How many keys it listed.
        keys: usize,
    },
    /// The periodic resync could not list the keys; it tries again next period.
    ResyncFailed {
        /// The kind listed.
        kind: Kind,
        /// The lister's error text.
        error: String,
    },
}

/// The shared map of key statuses: written by the loop, read by the handle.
#[derive(Debug, Clone, Default)]
pub(crate) struct StatusBoard {
    statuses: Arc<Mutex<HashMap<Name, KeyStatus>>>,
}

impl StatusBoard {
    /// The status of `name`, if the runtime has seen it.
    pub(crate) fn get(&self, name: &Name) -> Option<KeyStatus> {
        self.lock().get(name).cloned()
    }

    /// Every status, in name order.
    pub(crate) fn all(&self) -> Vec<(Name, KeyStatus)> {
        let mut all: Vec<_> = self
            .lock()
            .iter()
            .map(|(name, status)| (name.clone(), status.clone()))
            .collect();
        all.sort_by(|a, b| a.0.cmp(&b.0));
        all
    }

    /// The consecutive failures of `name`.
    pub(crate) fn failures(&self, name: &Name) -> u32 {
        self.lock().get(name).map_or(0, |status| status.failures)
    }

    /// Changes the status of `name`, creating it if need be.
    pub(crate) fn update(&self, name: &Name, change: impl FnOnce(&mut KeyStatus)) {
        let mut statuses = self.lock();
        change(statuses.entry(name.clone()).or_default());
    }

    /// Keeps only the statuses `keep` says to.
    pub(crate) fn retain(&self, keep: impl Fn(&Name, &KeyStatus) -> bool) {
        self.lock().retain(|name, status| keep(name, status));
    }

    /// Changes every status.
    pub(crate) fn update_all(&self, change: impl Fn(&mut KeyStatus)) {
        self.lock().values_mut().for_each(change);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Name, KeyStatus>> {
        // A panic while holding the lock leaves whole values behind: keep using them.
        self.statuses.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
