//! The local sandbox as the task runner starts it: the devnet PDS harness
//! (`sandbox/devnet/pds/pds.mjs`, a real PDS and PLC on loopback) kept running for as long as a
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

/// A process of the sandbox that prints one JSON ready line on stdout and stops when its stdin
/// closes (the PDS harness, the sandbox gateway).
#[derive(Debug)]
pub struct Harness {
    child: Child,
    ready_line: String,
}

impl Harness {
    /// Spawns `command` (stdin and stdout piped) and waits for its ready line.
    fn spawn(command: Command, what: &str) -> anyhow::Result<Self> {
        Self::spawn_with(command, what, Stdio::inherit())
    }

    /// As [`Harness::spawn`], its logs (stderr) going to `stderr`.
    fn spawn_with(mut command: Command, what: &str, stderr: Stdio) -> anyhow::Result<Self> {
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr);
        eprintln!("$ {} ({what})", crate::cmd::describe(&command));
        let mut child = command
            .spawn()
            .with_context(|| format!("starting {what}"))?;
        let stdout = child.stdout.take().context("the process has no stdout")?;
        let mut ready_line = String::new();
        BufReader::new(stdout)
            .read_line(&mut ready_line)
            .with_context(|| format!("reading the ready line of {what}"))?;
        anyhow::ensure!(
            ready_line.trim_start().starts_with('{'),
            "{what} did not start (see its output above)"
        );
        Ok(Self {
            child,
            ready_line: ready_line.trim().to_owned(),
        })
    }

    /// The process's JSON ready line.
    pub fn ready_line(&self) -> &str {
        &self.ready_line
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let deadline = Instant::now() + STOP_TIMEOUT;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A running sandbox PDS.
#[derive(Debug)]
pub struct SandboxPds(Harness);

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
        command.arg("pds.mjs").current_dir(paths.devnet_pds());
        if let Some(data) = data {
            std::fs::create_dir_all(data)?;
            command.arg("--data").arg(data);
        }
        for (handle, password) in accounts {
            command.arg("--account").arg(format!("{handle}:{password}"));
        }
        Harness::spawn(command, "the sandbox PDS").map(Self)
    }

    /// The harness's JSON ready line: URLs and accounts.
    pub fn ready_line(&self) -> &str {
        self.0.ready_line()
    }
}

/// The sandbox's cluster gateway (`swdesk-sandbox-gateway`), joined to a running PDS.
#[derive(Debug)]
pub struct SandboxGateway(Harness);

impl SandboxGateway {
    /// Starts the built gateway binary on `pds` and waits until it serves.
    pub fn start(paths: &Paths, pds: &SandboxPds) -> anyhow::Result<Self> {
        let mut command = Command::new(paths.binary("debug", GATEWAY_BINARY));
        command.env(SANDBOX_PDS_ENV, pds.ready_line());
        Harness::spawn(command, "the sandbox cluster gateway").map(Self)
    }

    /// The gateway's `did:web`.
    pub fn did(&self) -> anyhow::Result<String> {
        let line: serde_json::Value = serde_json::from_str(self.0.ready_line())?;
        line["did"]
            .as_str()
            .map(str::to_owned)
            .context("the gateway's ready line names no did")
    }
}

/// A sandbox bidder (`swdesk-sandbox-bidder`) asking `cost` for a guest, joined to a running PDS.
#[derive(Debug)]
pub struct SandboxBidder(Harness);

impl SandboxBidder {
    /// Starts the built bidder binary on `pds` and waits until it serves.
    pub fn start(paths: &Paths, pds: &SandboxPds, cost: &str) -> anyhow::Result<Self> {
        let mut command = Command::new(paths.binary("debug", BIDDER_BINARY));
        command
            .env(SANDBOX_PDS_ENV, pds.ready_line())
            .env("SWDESK_SANDBOX_BIDDER_COST", cost);
        Harness::spawn(command, "a sandbox bidder").map(Self)
    }

    /// The bidder's market service (`did:web:localhost%3A<port>`).
    pub fn service(&self) -> anyhow::Result<String> {
        let line: serde_json::Value = serde_json::from_str(self.0.ready_line())?;
        line["did"]
            .as_str()
            .map(str::to_owned)
            .context("the bidder's ready line names no did")
    }

    /// The DID of the bidder's account (the author of its offering and bids).
    pub fn account(&self) -> anyhow::Result<String> {
        let line: serde_json::Value = serde_json::from_str(self.0.ready_line())?;
        line["accountDid"]
            .as_str()
            .map(str::to_owned)
            .context("the bidder's ready line names no accountDid")
    }
}

/// The public market's own dispatcher and bidder (third-party Deno code beside the project in
/// `../shared/peers/atproto-market`, started through its `peer.sh`), resolving DIDs at the
/// sandbox's PLC: `cargo xtask run --public-market`. Their logs go to files under the target
/// directory; they are stopped (killed) when this is dropped, as they do not read stdin.
#[derive(Debug)]
pub struct PublicMarketPeer {
    dispatcher: Harness,
    bidder: Harness,
}

impl PublicMarketPeer {
    /// Starts the dispatcher, then the bidder, on `pds`'s PLC.
    pub fn start(paths: &Paths, pds: &SandboxPds) -> anyhow::Result<Self> {
        let line: serde_json::Value = serde_json::from_str(pds.ready_line())?;
        let plc = line["plcUrl"]
            .as_str()
            .context("the PDS's ready line names no plcUrl")?;
        let logs = paths.target.join("market-peer");
        std::fs::create_dir_all(&logs)?;
        let peer = |role: &str, env: &[(&str, &str)]| -> anyhow::Result<Harness> {
            let mut command = Command::new("bash");
            command
                .arg(paths.market_peer())
                .arg(role)
                .envs(env.iter().copied());
            let log = std::fs::File::create(logs.join(format!("{role}.log")))?;
            Harness::spawn_with(command, &format!("the public market's {role}"), log.into())
        };
        let zero = [
            ("FAKE_PLC", "0"),
            ("PLC_URL", plc),
            ("DISP_PORT", "0"),
            ("PLC_PORT", "0"),
        ];
        let dispatcher = peer("infra", &zero)?;
        let port = ready_field(&dispatcher, "disp_port")?.to_string();
        let bidder = peer("bidder", &[("PLC_URL", plc), ("DISP_PORT", &port)])?;
        eprintln!(
            "the public market's bidder runs; its logs are in {}",
            logs.display()
        );
        Ok(Self { dispatcher, bidder })
    }

    /// The dispatcher's loopback port: the sandbox's `*.localhost` ingress.
    pub fn dispatcher_port(&self) -> anyhow::Result<serde_json::Value> {
        ready_field(&self.dispatcher, "disp_port")
    }

    /// The bidder's account (`did:plc:…`).
    pub fn bidder_did(&self) -> anyhow::Result<serde_json::Value> {
        ready_field(&self.bidder, "did")
    }
}

impl Drop for PublicMarketPeer {
    fn drop(&mut self) {
        for harness in [&mut self.bidder, &mut self.dispatcher] {
            let _ = harness.child.kill();
        }
    }
}

fn ready_field(harness: &Harness, field: &str) -> anyhow::Result<serde_json::Value> {
    let line: serde_json::Value = serde_json::from_str(harness.ready_line())?;
    let value = line[field].clone();
    anyhow::ensure!(!value.is_null(), "the ready line names no {field}: {line}");
    Ok(value)
}

/// The bidder's binary (see `sandbox/bidder`).
pub const BIDDER_BINARY: &str = "swdesk-sandbox-bidder";

/// The gateway's binary (see `sandbox/gateway`).
pub const GATEWAY_BINARY: &str = "swdesk-sandbox-gateway";

/// The PDS's ready line naming `gateway_did` as the network's cluster gateway and `bidders`
/// as its market's bidders (their accounts, and their services the app may call on
/// loopback), and the public market's bidder and its dispatcher when `public` runs: what the
/// app reads from `SWDESK_SANDBOX`.
pub fn app_line(
    pds: &SandboxPds,
    gateway_did: &str,
    bidders: &[SandboxBidder],
    public: Option<&PublicMarketPeer>,
) -> anyhow::Result<String> {
    let mut accounts = bidders
        .iter()
        .map(SandboxBidder::account)
        .collect::<anyhow::Result<Vec<_>>>()?;
    let services = bidders
        .iter()
        .map(SandboxBidder::service)
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mut line: serde_json::Value = serde_json::from_str(pds.ready_line())?;
    line["gatewayDid"] = serde_json::Value::from(gateway_did);
    line["bidderServices"] = serde_json::Value::from(services);
    if let Some(public) = public {
        if let Some(did) = public.bidder_did()?.as_str() {
            accounts.push(did.to_owned());
        }
        line["marketIngressPort"] = public.dispatcher_port()?;
    }
    line["bidderDids"] = serde_json::Value::from(accounts);
    Ok(line.to_string())
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
