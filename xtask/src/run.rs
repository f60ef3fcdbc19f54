//! `cargo xtask run` (set up, build the window and the app, open it on the local sandbox; with
//! `--app`, open a built or installed app there instead), plus the two generators:
//! `bindings` (the window's TypeScript types) and `icons` (every icon from one SVG).

use std::process::Command;

use anyhow::Context;

use crate::cmd;
use crate::paths::Paths;
use crate::sandbox::{self, PublicMarketPeer, SandboxBidder, SandboxGateway, SandboxPds};
use crate::setup::{self, Purpose};

/// The app binary's name (see `src-tauri/Cargo.toml`).
pub const APP_BINARY: &str = "swdesk";
/// The variable that hands the sandbox to the app (see `swdesk-api`'s network).
const SANDBOX_ENV: &str = "SWDESK_SANDBOX";
/// The sandbox's demo account, shown on the sign-in screen: a password on loopback only.
const DEMO_ACCOUNT: (&str, &str) = ("alice.test", "alice-sandbox");

/// `cargo xtask run`'s options.
#[derive(Debug, Clone, clap::Args)]
pub struct RunArgs {
    /// Also start the public market's own bidder (`../shared/peers/atproto-market`, through
    /// its `peer.sh`) beside the sandbox's bidders, so contracts trade with it too.
    #[arg(long)]
    pub public_market: bool,
    /// Open this app binary on the sandbox instead of building the debug app: the installed
    /// one (`--app /usr/bin/swdesk`), or a release build.
    #[arg(long, value_name = "BINARY")]
    pub app: Option<std::path::PathBuf>,
}

pub fn run(paths: &Paths, args: &RunArgs) -> anyhow::Result<()> {
    setup::ensure(paths, Purpose::Run)?;
    let app = match &args.app {
        Some(app) => {
            anyhow::ensure!(app.is_file(), "no app at {}", app.display());
            app.clone()
        }
        None => {
            build_ui(paths)?;
            cmd::run(cmd::cargo().args(["build", "--package", "swdesk-app", "--bin", APP_BINARY]))?;
            paths.binary("debug", APP_BINARY)
        }
    };
    cmd::run(cmd::cargo().args([
        "build",
        "--package",
        "swdesk-sandbox-gateway",
        "--bin",
        sandbox::GATEWAY_BINARY,
        "--package",
        "swdesk-sandbox-bidder",
        "--bin",
        sandbox::BIDDER_BINARY,
    ]))?;
    anyhow::ensure!(
        std::env::var_os("DISPLAY").is_some() || std::env::var_os("WAYLAND_DISPLAY").is_some(),
        "no display to open the window on: run from a desktop session (or under xvfb-run)"
    );
    let data = sandbox::persistent_data(paths);
    let pds = SandboxPds::start(paths, Some(&data), &[DEMO_ACCOUNT])
        .context("starting the local sandbox (delete its data to start afresh)")?;
    eprintln!(
        "the local sandbox is running (data in {}); sign in as {} with the password {}",
        data.display(),
        DEMO_ACCOUNT.0,
        DEMO_ACCOUNT.1
    );
    let gateway = SandboxGateway::start(paths, &pds)?;
    // A free bidder and a paid one (`bids.x402` terms asking 0.35), so requesting a contract
    // shows a real auction: the free bid wins (the app does not pay), the paid offer is shown
    // with its price.
    let bidders = [
        SandboxBidder::start(paths, &pds, "0")?,
        SandboxBidder::start(paths, &pds, "0.35")?,
    ];
    let public = args
        .public_market
        .then(|| PublicMarketPeer::start(paths, &pds))
        .transpose()?;
    let line = sandbox::app_line(&pds, &gateway.did()?, &bidders, public.as_ref())?;
    let outcome = cmd::run(Command::new(app).env(SANDBOX_ENV, line));
    drop(public);
    drop(bidders);
    drop(gateway);
    drop(pds);
    outcome
}

/// Builds the window into `ui/dist`, which the app embeds.
pub fn build_ui(paths: &Paths) -> anyhow::Result<()> {
    cmd::run(
        Command::new("npm")
            .args(["run", "build"])
            .current_dir(paths.ui()),
    )
}

pub fn bindings(paths: &Paths) -> anyhow::Result<()> {
    setup::ensure_npm_packages(&paths.ui())?;
    cmd::run(cmd::cargo().args([
        "run",
        "--quiet",
        "--package",
        "swdesk-app",
        "--example",
        "export-bindings",
    ]))
}

pub fn icons(paths: &Paths) -> anyhow::Result<()> {
    setup::ensure_npm_packages(&paths.ui())?;
    let icons = paths.root.join("icons");
    let rendered = paths.target.join("icon-source.png");
    cmd::run(
        Command::new("rsvg-convert")
            .args(["--width", "1024", "--height", "1024", "--output"])
            .arg(&rendered)
            .arg(icons.join("source.svg")),
    )
    .context("rendering icons/source.svg (apt-get install librsvg2-bin)")?;
    cmd::run(
        Command::new("npx")
            .args(["tauri", "icon"])
            .arg(&rendered)
            .arg("--output")
            .arg(&icons)
            .current_dir(paths.ui()),
    )?;
    // A desktop app: the mobile sets `tauri icon` also writes are not ours to keep.
    for mobile in ["android", "ios"] {
        std::fs::remove_dir_all(icons.join(mobile)).ok();
    }
    std::fs::copy(
        icons.join("128x128.png"),
        paths.ui().join("public").join("icon.png"),
    )?;
    Ok(())
}
