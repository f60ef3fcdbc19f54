//! The one retry rule of the app: which failures are worth trying again, and when.
//!
//! - [`Backoff`]: capped exponential delays, with optional "equal jitter" (half the delay
//!   fixed, half random) so many clients failing together do not come back together;
//! - [`transient_status`]: 408, 425, 429 and 5xx (but 501 and 505, which will not change) are
//!   transient; every other refusal is permanent and told with its reason;
//! - [`retry_after`]: the `Retry-After` header, in seconds or as an HTTP date, capped by
//!   [`MAX_RETRY_AFTER`] so a peer cannot park a call for a year;
//! - [`Fault`]: what a failed call was: transient (with the server's wait, if it named one)
//!   or permanent. [`Fault::wait`] is the delay a caller sleeps or requeues for;
//! - [`Failure`]: what a failed call met (an answer, no answer, the owner's outbound policy, a
//!   request no client can make, an unusable answer); [`Failure::fault`] is the one place that
//!   says which of them may heal. A request that could not be built or that the policy refused
//!   never heals; neither does a definite refusal (a 4xx other than 408, 425, 429);
//! - [`Deadline`]: a step retried only until a fixed time after it first failed;
//!   [`Deadline::verdict`] says when the next try is, or that the step gives up.
//!
//! Invariants: a delay never decreases with the attempt, never exceeds its cap and never
//! overflows; a jittered delay lies in `[delay / 2, delay]`; a server's `Retry-After` is
//! honoured when it is longer than the backoff, never shortened below it. No clock and no
//! randomness live here: callers pass `now` and a random roll. A deadline's last try is at
//! the deadline itself, never after it.

use std::time::{Duration, SystemTime};

use crate::timestamp::Timestamp;

/// The longest `Retry-After` honoured; a longer one is taken as this.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(600);

/// Capped exponential backoff: `initial`, doubling with every consecutive failure, up to `cap`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    /// The delay after the first failure.
    pub initial: Duration,
    /// The longest delay.
    pub cap: Duration,
}

impl Backoff {
    /// 1 s after the first failure, doubling up to 5 min: the controller's reconciles.
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

    /// [`Self::delay`] with equal jitter: half of it fixed, the other half scaled by `roll`
    /// (any `u64`, from a random source).
    pub fn jittered(&self, attempt: u32, roll: u64) -> Duration {
        let delay = self.delay(attempt);
        let half = delay / 2;
        let spread = u64::try_from(half.as_millis()).unwrap_or(u64::MAX);
        let extra = roll.checked_rem(spread.saturating_add(1)).unwrap_or(0);
        half.saturating_add(Duration::from_millis(extra))
    }
}

impl Default for Backoff {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// What a failed call was, for the one who decides whether to call again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// It may succeed later (the network, a busy or failing server). `retry_after` is the
    /// server's own wait, when it named one.
    Transient {
        /// The server's `Retry-After`, capped.
        retry_after: Option<Duration>,
    },
    /// It will fail the same way again until something else changes.
    Permanent,
}

impl Fault {
    /// A transient fault with no wait named.
    pub const TRANSIENT: Self = Self::Transient { retry_after: None };

    /// The fault of an HTTP answer with `status` and `Retry-After` header value `retry_after`.
    pub fn of_status(status: u16, retry_after_header: Option<&str>, now: SystemTime) -> Self {
        if transient_status(status) {
            Self::Transient {
                retry_after: retry_after_header.and_then(|value| retry_after(value, now)),
            }
        } else {
            Self::Permanent
        }
    }

    /// Whether trying again later may succeed.
    pub fn is_transient(self) -> bool {
        matches!(self, Self::Transient { .. })
    }

    /// The controller's own wait before the `attempt`-th retry, without jitter (one app
    /// retrying its own objects): the backoff's delay, or the server's `Retry-After` when
    /// longer.
    pub fn delay(self, backoff: &Backoff, attempt: u32) -> Duration {
        let ours = backoff.delay(attempt);
        match self {
            Self::Transient {
                retry_after: Some(theirs),
            } => theirs.max(ours),
            _ => ours,
        }
    }

    /// How long to wait before the `attempt`-th retry: the backoff's jittered delay, or the
    /// server's `Retry-After` when that is longer. `None` for a permanent fault.
    pub fn wait(self, backoff: &Backoff, attempt: u32, roll: u64) -> Option<Duration> {
        match self {
            Self::Permanent => None,
            Self::Transient { retry_after } => {
                let ours = backoff.jittered(attempt, roll);
                Some(retry_after.map_or(ours, |theirs| theirs.max(ours)))
            }
        }
    }
}

/// What a failed call met, as the retry rule tells failures apart. Each network crate reads
/// its own errors into one of these (a client error through `swdesk_atproto::retry::failure_of`);
/// [`Failure::fault`] decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// The other party answered with `status`, naming `retry_after` (capped) or not.
    Answered {
        /// The HTTP status.
        status: u16,
        /// The server's `Retry-After`, read and capped.
        retry_after: Option<Duration>,
    },
    /// No answer came: unreachable, the connection broke or timed out, a name did not resolve.
    NoAnswer,
    /// The owner's outbound policy refused the place: the URL, a resolved address, a redirect.
    Policy,
    /// No request could be made at all: a URL no client sends (too long, malformed).
    Unbuildable,
    /// An answer came that cannot be used: too large, not what the method returns.
    Unusable,
}

impl Failure {
    /// Whether it may heal: only no answer, or an answer with a transient status.
    pub fn fault(self) -> Fault {
        match self {
            Self::Answered {
                status,
                retry_after,
            } if transient_status(status) => Fault::Transient { retry_after },
            Self::NoAnswer => Fault::TRANSIENT,
            Self::Answered { .. } | Self::Policy | Self::Unbuildable | Self::Unusable => {
                Fault::Permanent
            }
        }
    }
}

/// A step tried again only until `budget` after it first failed (`since`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deadline {
    /// When the step first failed.
    pub since: Timestamp,
    /// How long it may keep failing.
    pub budget: Duration,
}

/// What a step does after a failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Try again at this time.
    RetryAt(Timestamp),
    /// The failure cannot heal: the step fails now.
    CannotHeal,
    /// The deadline (this time) passed: the step fails now.
    PastDeadline(Timestamp),
}

impl Deadline {
    /// When the step gives up.
    pub fn at(&self) -> Timestamp {
        self.since.saturating_add(self.budget)
    }

    /// After the `attempt`-th consecutive failure with `fault` at `now`: the next try, after
    /// `backoff`'s delay (or the server's longer wait) but never past the deadline, so the last
    /// try is at it; or why the step gives up.
    pub fn verdict(
        &self,
        fault: Fault,
        backoff: &Backoff,
        attempt: u32,
        now: Timestamp,
    ) -> Verdict {
        let deadline = self.at();
        if !fault.is_transient() {
            Verdict::CannotHeal
        } else if now >= deadline {
            Verdict::PastDeadline(deadline)
        } else {
            let next = now.saturating_add(fault.delay(backoff, attempt));
            Verdict::RetryAt(next.min(deadline))
        }
    }
}

/// Whether an HTTP status says "try again later": 408 Request Timeout, 425 Too Early, 429 Too
/// Many Requests, and the 5xx server errors but 501 Not Implemented and 505 HTTP Version Not
/// Supported (which stay as they are).
pub fn transient_status(status: u16) -> bool {
    matches!(status, 408 | 425 | 429)
        || ((500..600).contains(&status) && !matches!(status, 501 | 505))
}

/// The wait a `Retry-After` header value asks for at `now`: delta-seconds or an HTTP date
/// (RFC 9110 §10.2.3), capped at [`MAX_RETRY_AFTER`]; a date in the past is no wait. `None`
/// when the value is neither.
pub fn retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    let wait = if let Ok(seconds) = value.parse::<u64>() {
        Duration::from_secs(seconds)
    } else {
        let at = httpdate::parse_http_date(value).ok()?;
        at.duration_since(now).unwrap_or(Duration::ZERO)
    };
    Some(wait.min(MAX_RETRY_AFTER))
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
        assert!(uncapped.jittered(40, u64::MAX) <= Duration::MAX);
    }

    #[test]
    fn a_jittered_delay_lies_between_half_the_delay_and_the_delay() {
        for attempt in 1..12 {
            let delay = Backoff::DEFAULT.delay(attempt);
            for roll in [0, 1, 499, 500, 12_345, u64::MAX] {
                let jittered = Backoff::DEFAULT.jittered(attempt, roll);
                assert!(
                    jittered >= delay / 2 && jittered <= delay,
                    "{jittered:?} of {delay:?}"
                );
            }
        }
        assert_eq!(Backoff::DEFAULT.jittered(1, 0), Duration::from_millis(500));
        assert_eq!(Backoff::DEFAULT.jittered(1, 500), Duration::from_secs(1));
    }

    #[test]
    fn busy_and_failing_servers_are_transient_and_refusals_are_not() {
        for status in [408, 425, 429, 500, 502, 503, 504, 599] {
            assert!(transient_status(status), "{status}");
        }
        for status in [200, 400, 401, 403, 404, 409, 413, 501, 505] {
            assert!(!transient_status(status), "{status}");
        }
    }

    #[test]
    fn retry_after_reads_seconds_and_http_dates_and_caps_them() {
        let now = httpdate::parse_http_date("Fri, 04 Dec 2026 22:00:00 GMT").unwrap();
        assert_eq!(retry_after("2", now), Some(Duration::from_secs(2)));
        assert_eq!(retry_after(" 120 ", now), Some(Duration::from_secs(120)));
        assert_eq!(
            retry_after("Fri, 04 Dec 2026 22:00:40 GMT", now),
            Some(Duration::from_secs(40))
        );
        assert_eq!(
            retry_after("Fri, 04 Dec 2026 21:00:00 GMT", now),
            Some(Duration::ZERO),
            "a date past is no wait"
        );
        assert_eq!(retry_after("31536000", now), Some(MAX_RETRY_AFTER));
        assert_eq!(retry_after("soon", now), None);
        assert_eq!(retry_after("-5", now), None);
    }

    #[test]
    fn a_fault_waits_for_the_longer_of_its_backoff_and_the_server_s_wait() {
        let now = SystemTime::UNIX_EPOCH;
        let busy = Fault::of_status(429, Some("40"), now);
        assert_eq!(
            busy,
            Fault::Transient {
                retry_after: Some(Duration::from_secs(40))
            }
        );
        assert_eq!(
            busy.wait(&Backoff::DEFAULT, 1, 0),
            Some(Duration::from_secs(40))
        );
        let late = busy.wait(&Backoff::DEFAULT, 10, 0);
        assert_eq!(
            late,
            Some(Duration::from_secs(150)),
            "the backoff wins when longer"
        );
        assert_eq!(busy.delay(&Backoff::DEFAULT, 1), Duration::from_secs(40));
        assert_eq!(busy.delay(&Backoff::DEFAULT, 10), Duration::from_secs(300));
        assert_eq!(
            Fault::Permanent.delay(&Backoff::DEFAULT, 2),
            Duration::from_secs(2)
        );
        assert_eq!(Fault::of_status(404, Some("40"), now), Fault::Permanent);
        assert_eq!(Fault::Permanent.wait(&Backoff::DEFAULT, 1, 0), None);
        assert_eq!(
            Fault::of_status(503, Some("never"), now),
            Fault::TRANSIENT,
            "an unreadable Retry-After is no wait named"
        );
    }

    #[test]
    fn only_no_answer_and_transient_statuses_may_heal() {
        let answered = |status| Failure::Answered {
            status,
            retry_after: None,
        };
        for failure in [
            answered(408),
            answered(429),
            answered(503),
            Failure::NoAnswer,
        ] {
            assert!(failure.fault().is_transient(), "{failure:?}");
        }
        for failure in [
            answered(400),
            answered(403),
            answered(404),
            answered(413),
            answered(501),
            Failure::Policy,
            Failure::Unbuildable,
            Failure::Unusable,
        ] {
            assert_eq!(failure.fault(), Fault::Permanent, "{failure:?}");
        }
        let busy = Failure::Answered {
            status: 429,
            retry_after: Some(Duration::from_secs(9)),
        };
        assert_eq!(
            busy.fault(),
            Fault::Transient {
                retry_after: Some(Duration::from_secs(9))
            }
        );
    }

    fn second(seconds: i64) -> Timestamp {
        Timestamp::from_unix_millis(1_800_000_000_000 + seconds * 1000).expect("time")
    }

    #[test]
    fn a_step_retries_until_its_deadline_with_the_last_try_at_it_then_gives_up() {
        let deadline = Deadline {
            since: second(0),
            budget: Duration::from_secs(60),
        };
        let backoff = Backoff {
            initial: Duration::from_secs(10),
            cap: Duration::from_secs(300),
        };
        let transient = Fault::TRANSIENT;
        assert_eq!(deadline.at(), second(60));
        assert_eq!(
            deadline.verdict(transient, &backoff, 1, second(0)),
            Verdict::RetryAt(second(10))
        );
        assert_eq!(
            deadline.verdict(transient, &backoff, 3, second(30)),
            Verdict::RetryAt(second(60)),
            "40 s later would be past the deadline: the last try is at it"
        );
        assert_eq!(
            deadline.verdict(transient, &backoff, 4, second(60)),
            Verdict::PastDeadline(second(60))
        );
        assert_eq!(
            deadline.verdict(Fault::Permanent, &backoff, 1, second(0)),
            Verdict::CannotHeal,
            "a failure that cannot heal is not retried, deadline or not"
        );
    }
}
