//! Core's retry rule (`swdesk_kernel::retry`) applied to HTTP answers: the [`Fault`] of a status
//! and its headers, what a client error was ([`failure_of`]: a request that could not be built
//! or that the owner's policy refused never heals), and the jittered wait before the next
//! attempt. Every network crate (the
//! agent and OAuth here, the market, the gateway) asks this module, so 429 means the same
//! everywhere.

use std::time::{Duration, SystemTime};

use rand_core::{OsRng, RngCore as _};
use reqwest::StatusCode;
use reqwest::header::{HeaderMap, RETRY_AFTER};
pub use swdesk_kernel::retry::{Backoff, Failure, Fault, transient_status};

/// The fault of an answer with `status` and `headers` (its `Retry-After`, if any).
pub fn fault_of(status: StatusCode, headers: &HeaderMap) -> Fault {
    let retry_after = headers
        .get(RETRY_AFTER)
        .and_then(|value| value.to_str().ok());
    Fault::of_status(status.as_u16(), retry_after, SystemTime::now())
}

/// How long to wait before retrying after the `attempt`-th failure with `fault`: the
/// backoff's delay with jitter, or the server's `Retry-After` when longer; `None` when the
/// fault is permanent.
pub fn wait(fault: Fault, backoff: &Backoff, attempt: u32) -> Option<Duration> {
    fault.wait(backoff, attempt, OsRng.next_u64())
}

/// The backoff's jittered delay after the `attempt`-th failure.
pub fn jittered(backoff: &Backoff, attempt: u32) -> Duration {
    backoff.jittered(attempt, OsRng.next_u64())
}

/// What a client `error` met, for core's rule ([`Failure::fault`]): a request the client could
/// not build (a URL too long or malformed) or the policy refused (at the URL, a resolved address
/// or a redirect) is not an outage, so it is never retried.
pub fn failure_of(error: &reqwest::Error) -> Failure {
    if error.is_builder() {
        Failure::Unbuildable
    } else if error.is_redirect() || swdesk_net::refusal_in(error).is_some() {
        Failure::Policy
    } else if let Some(status) = error.status() {
        Failure::Answered {
            status: status.as_u16(),
            retry_after: None,
        }
    } else {
        Failure::NoAnswer
    }
}
