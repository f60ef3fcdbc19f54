//! `cargo xtask run` (set up, build the window and the app, open it), plus the two generators:
//! `bindings` (the window's TypeScript types) and `icons` (every icon from one SVG).

use std::process::Command;

use anyhow::Context;

use crate::cmd;
use crate::paths::Paths;
use crate::setup::{self, Purpose};

/// The app binary's name (see `src-tauri/Cargo.toml`).
pub const APP_BINARY: &str = "swdesk";

pub fn run(paths: &Paths) -> anyhow::Result<()> {
    setup::ensure(paths, Purpose::Run)?;
    build_ui(paths)?;
    cmd::run(cmd::cargo().args(["build", "--package", "swdesk-app", "--bin", APP_BINARY]))?;
    anyhow::ensure!(
        std::env::var_os("DISPLAY").is_some() || std::env::var_os("WAYLAND_DISPLAY").is_some(),
        "no display to open the window on: run from a desktop session (or under xvfb-run)"
    );
    cmd::run(&mut Command::new(paths.binary("debug", APP_BINARY)))
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
        "--bin",
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
