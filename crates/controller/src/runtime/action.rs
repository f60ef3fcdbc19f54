//! [`Action`], what a reconcile asks of the runtime once it is done, and how the default error
//! policy turns core's [`Backoff`] (the app's one retry rule, `swdesk_kernel::retry`) into one.
//! The runtime's own backoff has no jitter: one desktop app retries its own objects, and a
//! deterministic schedule is easier to show and to test; calls to other parties add jitter
//! where they are made.

use std::time::Duration;

pub use swdesk_kernel::retry::Backoff;

/// What the runtime does with a key after its reconcile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Reconcile the key again after this delay (or earlier, if it is triggered before).
    RequeueAfter(Duration),
    /// Nothing until the key is triggered again (a change, a resync).
    AwaitChange,
}

impl Action {
    /// [`Action::RequeueAfter`] the `backoff`'s delay after the `attempt`-th failure.
    pub fn backoff(backoff: &Backoff, attempt: u32) -> Self {
        Self::RequeueAfter(backoff.delay(attempt))
    }
}
