//! `cargo xtask soak --minutes N`: the soak of the faults issue, outside CI's default run. It
//! installs what the tests need, then runs the ignored test `soak::soak` of the api crate (the
//! real PDS behind the fault proxy, the account's controller, the owner declaring, editing,
//! releasing and ending deployments for N minutes) in a keyring session of its own, and shows
//! its report lines: operations, faults, checks, invariant violations, memory at start, after
//! each minute and at end.
//! It fails when any invariant was violated.

use crate::cmd;
use crate::paths::Paths;
use crate::sandbox;
use crate::setup::{self, Purpose};

#[derive(Debug, Clone, clap::Args)]
pub struct SoakArgs {
    /// How long the owner keeps working against the faults.
    #[arg(long, default_value_t = 30)]
    minutes: u64,
}

pub fn soak(paths: &Paths, args: &SoakArgs) -> anyhow::Result<()> {
    setup::ensure(paths, Purpose::Test)?;
    cmd::run(
        sandbox::keyring_session(&sandbox::keyring_home(paths, "soak"), cmd::cargo_program())
            .args(["nextest", "run", "-p", "swdesk-api", "--test", "api"])
            .args([
                "--run-ignored",
                "only",
                "--no-capture",
                "-E",
                "test(=soak::soak)",
            ])
            .env("SWDESK_SOAK_MINUTES", args.minutes.to_string()),
    )
}
