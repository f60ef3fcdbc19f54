//! Licences, bans and sources of every crate the workspace locks, checked by cargo-deny against
//! `deny.toml` at the root (which says what each allowed licence is for, and why a ban is one).
//! The whole workspace, the shell (`src-tauri`, outside `default-members`) included, read from
//! the committed `Cargo.lock` as it is (`--locked`) and without the network (`--offline`). No
//! advisory check: it needs a database fetched from the network, which the proof does not take.

use crate::cmd;
use crate::paths::Paths;

/// The checks cargo-deny runs here, in its own words.
const CHECKS: &[&str] = &["licenses", "bans", "sources"];

/// Fails naming what cargo-deny refused (its own report is printed above).
pub fn check(paths: &Paths) -> anyhow::Result<()> {
    cmd::run(
        cmd::cargo()
            .arg("deny")
            .arg("--manifest-path")
            .arg(paths.root.join("Cargo.toml"))
            .arg("--config")
            .arg(paths.root.join("deny.toml"))
            .args(["--workspace", "--locked", "--offline", "check"])
            .args(CHECKS),
    )
}
