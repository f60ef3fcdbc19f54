//! The one integration test binary of `swdesk-controller`: the reconcile runtime driven by an
//! in-test fake reconciler, the finalizer protocol, the reconcilers of each kind and the whole
//! engine (two devices on one repo too) against a real object store (an SQLite file) and the
//! in-memory repo of `swdesk-kernel` (`record`, with `support`). Every test runs on paused time:
//! no real sleeps, tokio jumps the clock from timer to timer.

// Test helpers fail their test by panicking, as the tests themselves do.
#![allow(clippy::unwrap_used)]

mod deployment;
mod devices;
mod engine;
mod failures;
mod fake;
mod finalizer;
mod live;
mod observability;
mod read_only;
mod record;
mod resync;
mod scheduling;
mod shutdown;
mod support;

use std::time::Duration;

use swdesk_controller::runtime::{Controller, ControllerConfig};
use swdesk_kernel::name::Name;
use swdesk_kernel::object::Kind;

use fake::Fake;

/// The name `text`.
fn name(text: &str) -> Name {
    Name::parse(text).unwrap()
}

fn ms(millis: u64) -> Duration {
    Duration::from_millis(millis)
}

fn secs(secs: u64) -> Duration {
    Duration::from_secs(secs)
}

/// Lets `millis` of paused time go by.
async fn wait(millis: u64) {
    tokio::time::sleep(ms(millis)).await;
}

/// Runs of `(name, ms since the start)`, as the fake records them.
fn runs(expected: &[(&str, u64)]) -> Vec<(String, u64)> {
    expected
        .iter()
        .map(|(name, at)| ((*name).to_owned(), *at))
        .collect()
}

/// The defaults: debounce 100 ms (at most 1 s), 4 at once, resync every 5 min.
fn config() -> ControllerConfig {
    ControllerConfig::default()
}

/// An Infra controller over `fake` with the default configuration.
fn spawn(fake: &Fake) -> Controller {
    Controller::spawn(Kind::Infra, fake.clone(), config())
}
