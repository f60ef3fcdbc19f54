//! A person at the sandbox PDS's authorization page, played by Debian's Chromium through
//! `pds/authorize.mjs`: it signs in with an account and approves or denies the request, then
//! follows the redirect back to the app. Tests use it as the "system browser"; the end-to-end
//! suite hands the script to the app as `$BROWSER`.

use std::path::PathBuf;
use std::process::Stdio;

use tokio::process::Command;

use crate::pds::{Account, SandboxPds};

/// What the person at the page does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Signs in and authorizes.
    Approve,
    /// Signs in and denies.
    Deny,
}

/// The script, for `$BROWSER` (its credentials go in [`credentials_env`]).
pub fn script() -> PathBuf {
    SandboxPds::harness_dir().join("authorize.mjs")
}

/// The environment that tells the script who signs in and what they decide.
pub fn credentials_env(account: &Account, decision: Decision) -> [(&'static str, String); 3] {
    let decision = match decision {
        Decision::Approve => "approve",
        Decision::Deny => "deny",
    };
    [
        ("SWDESK_AUTHORIZE_USERNAME", account.handle.clone()),
        ("SWDESK_AUTHORIZE_PASSWORD", account.password.clone()),
        ("SWDESK_AUTHORIZE_DECISION", decision.to_owned()),
    ]
}

/// Opens `url` in Chromium as `account` and decides; returns once the redirect was reached.
pub async fn authorize(url: &str, account: &Account, decision: Decision) -> Result<(), String> {
    let output = Command::new("node")
        .arg(script())
        .arg(url)
        .envs(credentials_env(account, decision))
        .current_dir(SandboxPds::harness_dir())
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output()
        .await
        .map_err(|error| format!("cannot run node authorize.mjs: {error}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&output.stderr).into_owned())
    }
}
