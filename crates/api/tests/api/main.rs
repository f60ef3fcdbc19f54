//! The facade against real parts: the sandbox's PDS, Chromium at its authorization page, the
//! real Secret Service.

// Test suites reach the sandbox's services directly, as any public reader would.
#![allow(clippy::disallowed_methods)]
// Test helpers fail their test by panicking, as the tests themselves do.
#![allow(clippy::unwrap_used)]

mod conflict;
mod contracts;
mod controller;
mod deployments;
mod desk;
mod faults;
mod install;
mod killed;
mod live;
mod market;
mod market_key;
mod offline;
mod profiles;
mod secrets;
mod session;
mod soak;
mod support;

/// Every allocation of this test binary counted, so the soak can say how much the Rust heap
/// holds beside what the process holds: a leak in Rust code climbs there; the rest is the
/// allocator's arenas, SQLite's own memory, stacks.
#[global_allocator]
static HEAP: &stats_alloc::StatsAlloc<std::alloc::System> = &stats_alloc::INSTRUMENTED_SYSTEM;
