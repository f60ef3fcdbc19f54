//! [`ControllerConfig`]: the knobs of one controller, with defaults fit for a desktop app.
//!
//! Invariants: a concurrency of 0 is taken as 1 and a resync period below 1 ms as 1 ms, so no
//! configuration can stall the queue or spin the resync.

use std::time::Duration;

/// How triggers of one key coalesce.
///
/// A trigger schedules its key `delay` later; every further trigger before that run pushes it
/// back to `delay` after itself (a trailing debounce, so a burst runs once, after it settles),
/// but never beyond `max` after the first trigger of the burst, so a key triggered without pause
/// still runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Debounce {
    /// The quiet time a burst must leave before its run.
    pub delay: Duration,
    /// The longest a burst may delay its run, counted from its first trigger.
    pub max: Duration,
}

impl Default for Debounce {
    fn default() -> Self {
        Self {
            delay: Duration::from_millis(100),
            max: Duration::from_secs(1),
        }
    }
}

/// The configuration of one [`super::Controller`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ControllerConfig {
    /// How triggers coalesce.
    pub debounce: Debounce,
    /// How many keys may be reconciled at once (0 is taken as 1).
    pub concurrency: usize,
    /// How often every key is listed and triggered again, when the controller has a lister.
    pub resync_period: Duration,
}

impl Default for ControllerConfig {
    fn default() -> Self {
        Self {
            debounce: Debounce::default(),
            concurrency: 4,
            resync_period: Duration::from_secs(300),
        }
    }
}

impl ControllerConfig {
    /// The concurrency actually used: at least 1.
    pub(crate) fn effective_concurrency(&self) -> usize {
        self.concurrency.max(1)
    }

    /// The resync period actually used: at least 1 ms.
    pub(crate) fn effective_resync_period(&self) -> Duration {
        self.resync_period.max(Duration::from_millis(1))
    }
}
