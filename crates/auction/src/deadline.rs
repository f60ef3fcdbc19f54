//! Every contract ends: how long each step of the requester flow may keep failing, and what a
//! failed try becomes. [`Deadlines`] gives each step its budget (the receipt within minutes of
//! the accept, the release within an hour, any other step within its own quarter hour); each
//! call within a step is bounded by its own total time (the network client's), so a slow
//! answer is a failed try like any other. [`after_failure`] turns a failure into the status's
//! [`Retrying`] (why, next try at, gives up at) or the reason the contract fails, naming the
//! step and its deadline; the kernel's retry rule ([`swdesk_kernel::retry`]) decides.
//!
//! Invariants: a step's deadline runs from its first failure and stays put while the same step
//! keeps failing (a success clears it); the last try is at the deadline, never after; a
//! failure that cannot heal fails the step at once, whatever its deadline.

use std::time::Duration;

use swdesk_kernel::retry::{Deadline, Fault, Verdict};
use swdesk_kernel::timestamp::Timestamp;

use super::flow::Step;
use crate::compute::{FLOW_RETRY, Retrying};

/// How long each step of the flow may keep failing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deadlines {
    /// From the accept's answer to a verified receipt (`acceptSent`).
    pub receipt: Duration,
    /// From the release's first failure to the bidder's acknowledgement (`releasing`).
    pub release: Duration,
    /// Any other step.
    pub step: Duration,
}

impl Deadlines {
    /// Ten minutes for the receipt, an hour for the release, a quarter hour for the rest.
    pub const DEFAULT: Self = Self {
        receipt: Duration::from_secs(600),
        release: Duration::from_secs(3600),
        step: Duration::from_secs(900),
    };

    /// The budget of `step` and what must happen within it, in words.
    pub fn of(&self, step: &Step) -> (Duration, &'static str) {
        match step {
            Step::AcceptSent { .. } => (self.receipt, "the receipt to appear and verify"),
            Step::Releasing { .. } => (self.release, "the release to be acknowledged"),
            _ => (self.step, "the step to succeed"),
        }
    }
}

impl Default for Deadlines {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// After the `attempt`-th consecutive failure (`why`, `fault`) of `step` at `now`, with
/// `before` the retry the status showed: the retry to show now, or the reason the contract
/// fails (the failure itself when it cannot heal; the step and its deadline when it passed).
pub fn after_failure(
    before: Option<&Retrying>,
    step: &Step,
    why: String,
    fault: Fault,
    attempt: u32,
    deadlines: &Deadlines,
    now: Timestamp,
) -> Result<Retrying, String> {
    let name = step.name();
    let since = before
        .filter(|retrying| retrying.step == name)
        .map_or(now, |retrying| retrying.since);
    let (budget, what) = deadlines.of(step);
    let deadline = Deadline { since, budget };
    match deadline.verdict(fault, &FLOW_RETRY, attempt, now) {
        Verdict::RetryAt(next_at) => Ok(Retrying {
            step: name.to_owned(),
            why,
            since,
            next_at,
            gives_up_at: deadline.at(),
        }),
        Verdict::CannotHeal => Err(why),
        Verdict::PastDeadline(at) => Err(format!(
            "gave up at {at}: {name} waited {} s for {what}; last: {why}",
            budget.as_secs()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bids::{Cost, CountedBid};
    use crate::compute::phase::StrongRef;
    use crate::flow::{Held, Won};

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_unix_millis(1_800_000_000_000 + seconds * 1000).expect("time")
    }

    fn releasing() -> Step {
        let strong = StrongRef {
            uri: "at://did:plc:bidder/com.example.receipt/3l".into(),
            cid: "bafy".into(),
        };
        Step::Releasing {
            held: Held {
                receipt: strong,
                submit_event: "did:web:bidder#e".into(),
                bidder: "did:plc:bidder".into(),
                checked: None,
            },
            requested_at: at(0),
            delete: None,
            event: None,
        }
    }

    const SHORT: Deadlines = Deadlines {
        receipt: Duration::from_secs(20),
        release: Duration::from_secs(20),
        step: Duration::from_secs(20),
    };

    fn fail(before: Option<&Retrying>, attempt: u32, now: i64) -> Result<Retrying, String> {
        let step = releasing();
        let why = "the bidder is unreachable".to_owned();
        after_failure(
            before,
            &step,
            why,
            Fault::TRANSIENT,
            attempt,
            &SHORT,
            at(now),
        )
    }

    #[test]
    fn a_failing_step_is_retried_from_its_first_failure_until_its_deadline_then_fails_naming_both()
    {
        let first = fail(None, 1, 0).expect("retried");
        assert_eq!((first.since, first.next_at), (at(0), at(3)));
        assert_eq!(first.gives_up_at, at(20));
        assert_eq!(first.step, "releasing");
        assert_eq!(
            first.message(),
            format!(
                "retrying: the bidder is unreachable; next try at {}, gives up at {}",
                at(3),
                at(20)
            )
        );
        let third = fail(Some(&first), 3, 15).expect("retried");
        assert_eq!(third.since, at(0), "the deadline stays put");
        assert_eq!(third.next_at, at(20), "the last try is at the deadline");
        let reason = fail(Some(&third), 4, 20).expect_err("past the deadline");
        assert_eq!(
            reason,
            format!(
                "gave up at {}: releasing waited 20 s for the release to be acknowledged; \
                 last: the bidder is unreachable",
                at(20)
            )
        );
    }

    #[test]
    fn another_steps_retry_starts_a_new_deadline_and_what_cannot_heal_fails_at_once() {
        let other = Retrying {
            step: "acceptWritten".into(),
            why: "old".into(),
            since: at(-100),
            next_at: at(0),
            gives_up_at: at(-80),
        };
        let retried = fail(Some(&other), 2, 0).expect("a new deadline");
        assert_eq!(retried.since, at(0));
        let step = releasing();
        let refused = after_failure(
            None,
            &step,
            "not called: refused".into(),
            Fault::Permanent,
            1,
            &SHORT,
            at(0),
        );
        assert_eq!(refused, Err("not called: refused".to_owned()));
    }

    #[test]
    fn the_receipt_has_its_own_deadline() {
        let Step::Releasing { held, .. } = releasing() else {
            unreachable!("a releasing step");
        };
        let winner = CountedBid {
            bidder: held.bidder.clone(),
            bid: held.receipt.clone(),
            terms: held.receipt.clone(),
            cost: Cost::ZERO,
            free: true,
            submit_accept: None,
            received_at: at(0),
            checked: None,
        };
        let won = Won {
            rfp: held.receipt.clone(),
            winner,
            bid_count: 1,
        };
        let accept = held.receipt.clone();
        let step = Step::AcceptSent { won, accept, held };
        let deadlines = Deadlines {
            receipt: Duration::from_secs(7),
            ..SHORT
        };
        assert_eq!(
            deadlines.of(&step),
            (Duration::from_secs(7), "the receipt to appear and verify")
        );
        assert_eq!(Deadlines::DEFAULT.of(&step).0, Duration::from_secs(600));
        assert_eq!(
            Deadlines::DEFAULT.of(&Step::Planned).0,
            Duration::from_secs(900)
        );
    }
}
