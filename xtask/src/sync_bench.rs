//! `cargo xtask bench sync`: how soon an edit made by another client reaches the controller, live
//! (`subscribeRepos`) beside the poll from the same run, and requests per idle minute of each, then
//! the market's `vm.onNetwork` → Deployed with the winner's repo followed live beside timed reads.
//! It installs what the tests need (the sandbox PDS, Chromium), then runs the api crate's `sync`
//! bench (`crates/api/benches/sync.rs`), which prints p50 and p95 in milliseconds.

use crate::cmd;
use crate::paths::Paths;
use crate::setup::{self, Purpose};

pub fn bench_sync(paths: &Paths) -> anyhow::Result<()> {
    setup::ensure(paths, Purpose::Test)?;
    cmd::run(cmd::cargo().args(["bench", "-p", "swdesk-api", "--bench", "sync"]))
}
