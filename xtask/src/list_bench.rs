//! `cargo xtask bench list`: the deployments list with thousands of rows, in the real window.
//! Set up as the end-to-end suite is (a throwaway sandbox PDS, a private keyring session, Xvfb,
//! tauri-driver), then `deployments-list-bench` (in `tests/bench/`, on the suite's window
//! support) signs an owner in, measures the list with one deployment and with `--deployments`,
//! and prints both side by side with the targets.
//!
//! The app is the debug build by default: the one `cargo xtask test` builds, so a bench after
//! the tests costs no build. The list's figures are the window's work (the same production
//! bundle of the UI in either build); the debug shell only makes each change's trip through
//! the store slower, so its figures are an upper bound. `--release` measures the release app.

use crate::cmd;
use crate::paths::Paths;
use crate::run::{self, APP_BINARY};
use crate::sandbox::SandboxPds;
use crate::setup::{self, Purpose};
use crate::test::window_session;

/// The bench driver's binary (see `tests/Cargo.toml`).
const DRIVER_BINARY: &str = "deployments-list-bench";

/// What `cargo xtask bench list` takes.
#[derive(Debug, Clone, clap::Args)]
pub struct ListBench {
    /// Deployments in the list for the second measurement.
    #[arg(long, default_value_t = 5000)]
    deployments: usize,
    /// Store changes timed at each size (median and p95 are reported).
    #[arg(long, default_value_t = 20)]
    changes: usize,
    /// Seconds of scrolling at each size.
    #[arg(long, default_value_t = 3)]
    scroll_seconds: u64,
    /// How long the controller may take to publish every deployment before the bench goes on.
    #[arg(long, default_value_t = 1200)]
    publish_timeout_seconds: u64,
    /// Build and measure the release app (a cold release build takes about ten minutes).
    #[arg(long)]
    release: bool,
}

pub fn bench_list(paths: &Paths, options: &ListBench) -> anyhow::Result<()> {
    setup::ensure(paths, Purpose::Test)?;
    run::build_ui(paths)?;
    let profile = if options.release { "release" } else { "debug" };
    build_app(options.release)?;
    cmd::run(cmd::cargo().args(["build", "--package", "swdesk-tests", "--bin", DRIVER_BINARY]))?;
    let pds = SandboxPds::start(paths, None, &[])?;
    let app = paths.binary(profile, APP_BINARY);
    cmd::run(
        window_session(
            paths,
            "list-bench",
            &app,
            &pds,
            paths.binary("debug", DRIVER_BINARY),
        )?
        .args(driver_args(options, profile)),
    )
}

fn build_app(release: bool) -> anyhow::Result<()> {
    let mut cargo = cmd::cargo();
    cargo.arg("build");
    if release {
        cargo.arg("--release");
    }
    cmd::run(cargo.args(["--package", "swdesk-app", "--bin", APP_BINARY]))
}

fn driver_args(options: &ListBench, profile: &str) -> Vec<String> {
    [
        ("--deployments", options.deployments.to_string()),
        ("--changes", options.changes.to_string()),
        ("--scroll-seconds", options.scroll_seconds.to_string()),
        (
            "--publish-timeout-seconds",
            options.publish_timeout_seconds.to_string(),
        ),
        ("--app-build", profile.to_owned()),
    ]
    .into_iter()
    .flat_map(|(flag, value)| [flag.to_owned(), value])
    .collect()
}
