//! [`Action`], what a reconcile asks of the runtime once it is done, and [`Backoff`], the capped
//! exponential delay the default error policy retries with.
//!
//! Invariants: a backoff delay never decreases with the attempt, never exceeds its cap and never
//! overflows; attempt 1 (the first failure) waits `initial`. There is no jitter: one desktop app
//! talks to its own services, and a deterministic schedule is easier to show and to test.

use std::time::Duration;

/// What the runtime does with a key after its reconcile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Reconcile the key again after this delay (or earlier, if it is triggered before).
    RequeueAfter(Duration),
    /// Nothing until the key is triggered again (a change, a resync).
    AwaitChange,
}

/// Capped exponential backoff: `initial`, doubling with every consecutive failure, up to `cap`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    /// The delay after the first failure.
    pub initial: Duration,
    /// The longest delay.
    pub cap: Duration,
}

impl Backoff {
    /// 1 s after the first failure, doubling up to 5 min.
    pub const DEFAULT: Self = Self {
        initial: Duration::from_secs(1),
        cap: Duration::from_secs(300),
    };

    /// The delay before retrying after the `attempt`-th consecutive failure (1 for the first;
    /// 0 is taken as 1).
    pub fn delay(&self, attempt: u32) -> Duration {
        let doublings = attempt.saturating_sub(1).min(31);
        self.initial.saturating_mul(1 << doublings).min(self.cap)
    }

    /// [`Action::RequeueAfter`] the [`Self::delay`] of `attempt`.
    pub fn action(&self, attempt: u32) -> Action {
        Action::RequeueAfter(self.delay(attempt))
    }
}

impl Default for Backoff {
    fn default() -> Self {
        Self::DEFAULT
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(delays: impl Iterator<Item = Duration>) -> Vec<u64> {
        delays.map(|d| d.as_secs()).collect()
    }

    #[test]
    fn the_default_backoff_doubles_from_one_second_to_a_five_minute_cap() {
        let delays = (1..=11).map(|attempt| Backoff::DEFAULT.delay(attempt));
        assert_eq!(secs(delays), [1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300]);
    }

    #[test]
    fn attempt_zero_waits_like_the_first_failure() {
        assert_eq!(Backoff::DEFAULT.delay(0), Duration::from_secs(1));
    }

    #[test]
    fn a_huge_attempt_stays_at_the_cap_without_overflowing() {
        assert_eq!(Backoff::DEFAULT.delay(u32::MAX), Duration::from_secs(300));
        let uncapped = Backoff {
            initial: Duration::MAX,
            cap: Duration::MAX,
        };
        assert_eq!(uncapped.delay(40), Duration::MAX);
    }
}
