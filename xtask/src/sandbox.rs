//! The local sandbox as the task runner starts it: the devnet PDS harness
//! (`crates/devnet/pds/pds.mjs`, a real PDS and PLC on loopback) kept running for as long as a
//! step needs it, and a keyring session (a private D-Bus with an unlocked gnome-keyring) for
//! steps whose processes keep secrets in the Secret Service.
//!
//! The harness stops by itself, removing its data, when its stdin closes: dropping
//! [`SandboxPds`] closes it and waits; a harness that does not stop in time is killed.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context;

use crate::paths::Paths;

/// The variable through which test processes find the running PDS (see `swdesk-devnet`).
pub const SANDBOX_PDS_ENV: &str = "SWDESK_SANDBOX_PDS";
/// How long the harness may take to stop once asked.
const STOP_TIMEOUT: Duration = Duration::from_secs(10);

/// A running sandbox PDS.
#[derive(Debug)]
pub struct SandboxPds {
    harness: Child,
    ready_line: String,
}

impl SandboxPds {
    /// Starts the harness with `(handle, password)` accounts and waits for its ready line. With
    /// `data`, the sandbox persists there (fixed ports, kept across runs); without, it is
    /// throwaway.
    pub fn start(
        paths: &Paths,
        data: Option<&Path>,
        accounts: &[(&str, &str)],
    ) -> anyhow::Result<Self> {
        let mut command = Command::new("node");
        command.arg("pds.mjs");
        if let Some(data) = data {
            std::fs::create_dir_all(data)?;
            command.arg("--data").arg(data);
        }
        command
            .current_dir(paths.devnet_pds())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        for (handle, password) in accounts {
            command.arg("--account").arg(format!("{handle}:{password}"));
        }
        eprintln!("$ {} (the sandbox PDS)", crate::cmd::describe(&command));
        let mut harness = command
            .spawn()
            .context("starting the sandbox PDS (node pds.mjs)")?;
        let stdout = harness.stdout.take().context("the harness has no stdout")?;
        let mut ready_line = String::new();
        BufReader::new(stdout)
            .read_line(&mut ready_line)
            .context("reading the sandbox PDS's ready line")?;
        anyhow::ensure!(
            ready_line.trim_start().starts_with('{'),
            "the sandbox PDS did not start (see its output above)"
        );
        Ok(Self {
            harness,
            ready_line: ready_line.trim().to_owned(),
        })
    }

    /// The harness's JSON ready line: URLs and accounts.
    pub fn ready_line(&self) -> &str {
        &self.ready_line
    }
}

impl Drop for SandboxPds {
    fn drop(&mut self) {
        drop(self.harness.stdin.take());
        let deadline = Instant::now() + STOP_TIMEOUT;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.harness.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.harness.kill();
        let _ = self.harness.wait();
    }
}

/// `program args…` inside a private D-Bus session with an unlocked gnome-keyring whose data
/// lives in `keyring_home` (made afresh, so its login keyring always opens).
pub fn keyring_session(keyring_home: &Path, program: impl AsRef<std::ffi::OsStr>) -> Command {
    std::fs::remove_dir_all(keyring_home).ok();
    let mut command = Command::new("dbus-run-session");
    command
        .args([
            "--",
            "bash",
            "-c",
            r#"eval "$(printf swdesk-test | gnome-keyring-daemon --unlock --components=secrets)" >/dev/null && exec "$@""#,
            "keyring-session",
        ])
        .arg(program)
        .env("XDG_DATA_HOME", keyring_home);
    command
}

/// Where `cargo xtask run` keeps its sandbox between runs.
pub fn persistent_data(paths: &Paths) -> PathBuf {
    paths.target.join("sandbox")
}

/// Where the keyring of a step keeps its data.
pub fn keyring_home(paths: &Paths, step: &str) -> PathBuf {
    paths.target.join("keyring").join(step)
}
