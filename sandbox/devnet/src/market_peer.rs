//! The public compute market's own implementation (`publicdomainrelay/atproto-market`,
//! third-party Deno code in `../shared/peers/atproto-market/`) run on loopback as a test peer:
//! its ingress dispatcher and its bidder, resolving DIDs at the sandbox's PLC. The project
//! starts it, never copies it (`peer.sh`, see its README).
//!
//! Its services are named `https://did-key-….localhost` and served by the dispatcher on one
//! loopback port over plain HTTP, routed by `Host`: a client reaches them only when its
//! network policy names that port as the sandbox's `*.localhost` ingress.
//!
//! Its bidder runs in one of two modes ([`BidderMode`]): as upstream by default, or strict
//! (`BIND_KEYS=1`): then it trusts a signature of an incoming RFP, accept or event only when
//! its key is listed in the DID document of the signature's issuer (or author).
//!
//! Its **requester** runs one flow on demand ([`PublicMarketPeer::run_requester`]): an RFP to
//! one invited bidder (ours, in the tests), the bids, an accept and the receipt's check, then it
//! exits with its result.
//!
//! Invariants: each process is killed when its handle is dropped; its logs go to a file the
//! tests can read (the bidder's log tells what it received).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde::Deserialize;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// How long a peer process may take to print its ready line (a cold install included).
const READY_TIMEOUT: Duration = Duration::from_secs(180);
/// The requester's bid window, in seconds.
const REQUESTER_BID_WINDOW_SECONDS: &str = "5";

/// The variable that points at `peer.sh` (default: `../shared/peers/atproto-market/peer.sh`
/// beside the project).
pub const PEER_SCRIPT_ENV: &str = "SWDESK_MARKET_PEER";

/// Why the peer did not start.
#[derive(Debug, thiserror::Error)]
pub enum MarketPeerError {
    /// `peer.sh` could not be run.
    #[error("the public market peer ({script}) could not be started: {source}")]
    Spawn {
        /// The script.
        script: String,
        /// What failed.
        source: std::io::Error,
    },
    /// It printed no ready line in time, or exited first.
    #[error("the public market peer's {0} did not get ready (its log: {1})")]
    NotReady(&'static str, String),
    /// Its ready line is not what its README describes.
    #[error("the public market peer's ready line is unreadable: {0}")]
    BadReadyLine(serde_json::Error),
    /// The bidder did not say it runs in the mode asked (a `peer.sh` without `BIND_KEYS`).
    #[error("the public bidder did not start in the mode asked ({0:?})")]
    WrongMode(BidderMode),
}

/// How strictly the public bidder binds signing keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BidderMode {
    /// As upstream's switchless default: a valid signature counts.
    Default,
    /// `BIND_KEYS=1`: a signing key counts only when the issuer's (or author's) DID document
    /// lists it.
    BindKeys,
}

impl BidderMode {
    fn bind_keys(self) -> &'static str {
        match self {
            Self::Default => "0",
            Self::BindKeys => "1",
        }
    }
}

#[derive(Debug, Deserialize)]
struct InfraReady {
    disp_port: u16,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct BidderReady {
    did: String,
    ingress_ref: String,
    #[serde(default)]
    bind_keys: bool,
}

/// What the public requester's flow ended with (its `requester_result`, or its
/// `requester_error` as `event` with the `error`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RequesterResult {
    /// `compute_request_complete`, `no_bids`, `policy_rejected` or `requester_error`.
    pub event: String,
    /// The winning bidder's DID.
    #[serde(default)]
    pub winner_did: Option<String>,
    /// The winning bid.
    #[serde(default)]
    pub bid_uri: Option<String>,
    /// The receipt the winner answered the accept with.
    #[serde(default)]
    pub receipt_uri: Option<String>,
    /// Whether the receipt's signature and its binding to the accept verified.
    #[serde(default)]
    pub receipt_ok: bool,
    /// How many bids arrived in the window.
    #[serde(default)]
    pub bids: u32,
    /// Why the flow failed, when it did.
    #[serde(default)]
    pub error: Option<String>,
}

#[derive(Debug, Deserialize)]
struct RequesterLine {
    event: String,
    #[serde(default)]
    result: Option<RequesterResult>,
    #[serde(default)]
    error: Option<String>,
}

/// The public market's dispatcher and bidder, running.
#[derive(Debug)]
pub struct PublicMarketPeer {
    /// The dispatcher's loopback port: the sandbox's `*.localhost` ingress.
    pub dispatcher_port: u16,
    /// The bidder's account (`did:plc:…` at the sandbox's PLC).
    pub bidder_did: String,
    /// The bidder's market service (`did:web:did-key-….localhost`).
    pub bidder_service: String,
    /// Where the bidder logs (JSON lines).
    pub bidder_log: PathBuf,
    plc_url: String,
    log_dir: PathBuf,
    _temporary_logs: Option<tempfile::TempDir>,
    _infra: Child,
    _bidder: Child,
}

impl PublicMarketPeer {
    /// Starts the dispatcher and a bidder resolving DIDs at `plc_url` (the sandbox's PLC),
    /// logging under `log_dir`.
    pub async fn start(plc_url: &str, log_dir: &Path) -> Result<Self, MarketPeerError> {
        Self::start_in_mode(plc_url, log_dir, BidderMode::Default).await
    }

    /// Starts it as [`PublicMarketPeer::start`] does, the bidder in `mode`.
    pub async fn start_in_mode(
        plc_url: &str,
        log_dir: &Path,
        mode: BidderMode,
    ) -> Result<Self, MarketPeerError> {
        let script = script();
        let infra_log = log_dir.join("market-peer-infra.log");
        let mut infra = spawn(
            &script,
            "infra",
            &infra_log,
            &[
                ("FAKE_PLC", "0"),
                ("PLC_URL", plc_url),
                ("DISP_PORT", "0"),
                ("PLC_PORT", "0"),
            ],
        )?;
        let ready: InfraReady = ready_line(&mut infra, "dispatcher", &infra_log).await?;
        let port = ready.disp_port.to_string();
        let bidder_log = log_dir.join("market-peer-bidder.log");
        let mut bidder = spawn(
            &script,
            "bidder",
            &bidder_log,
            &[
                ("PLC_URL", plc_url),
                ("DISP_PORT", &port),
                ("BIND_KEYS", mode.bind_keys()),
            ],
        )?;
        let ready_bidder: BidderReady = ready_line(&mut bidder, "bidder", &bidder_log).await?;
        if ready_bidder.bind_keys != (mode == BidderMode::BindKeys) {
            return Err(MarketPeerError::WrongMode(mode));
        }
        Ok(Self {
            dispatcher_port: ready.disp_port,
            bidder_did: ready_bidder.did,
            bidder_service: ready_bidder.ingress_ref,
            bidder_log,
            plc_url: plc_url.to_owned(),
            log_dir: log_dir.to_owned(),
            _temporary_logs: None,
            _infra: infra,
            _bidder: bidder,
        })
    }

    /// Starts it as [`PublicMarketPeer::start`] does, logging to a temporary folder removed
    /// with it (the tests' way).
    pub async fn start_with_temporary_logs(plc_url: &str) -> Result<Self, MarketPeerError> {
        Self::start_in_mode_with_temporary_logs(plc_url, BidderMode::Default).await
    }

    /// Starts it in `mode`, logging to a temporary folder removed with it.
    pub async fn start_in_mode_with_temporary_logs(
        plc_url: &str,
        mode: BidderMode,
    ) -> Result<Self, MarketPeerError> {
        let logs = tempfile::tempdir().map_err(|source| MarketPeerError::Spawn {
            script: script().display().to_string(),
            source,
        })?;
        let mut peer = Self::start_in_mode(plc_url, logs.path(), mode).await?;
        peer._temporary_logs = Some(logs);
        Ok(peer)
    }

    /// Runs the public requester once, inviting `bidder_did` only, and answers how its flow
    /// ended. Its log is `market-peer-requester.log` beside the others.
    pub async fn run_requester(
        &self,
        bidder_did: &str,
    ) -> Result<RequesterResult, MarketPeerError> {
        let log = self.requester_log();
        let port = self.dispatcher_port.to_string();
        let mut requester = spawn(
            &script(),
            "requester",
            &log,
            &[
                ("PLC_URL", self.plc_url.as_str()),
                ("DISP_PORT", &port),
                ("BIDDER_DID", bidder_did),
                ("BID_WINDOW_SEC", REQUESTER_BID_WINDOW_SECONDS),
            ],
        )?;
        let line: RequesterLine = ready_line(&mut requester, "requester", &log).await?;
        let _exited = requester.wait().await;
        Ok(line.result.unwrap_or(RequesterResult {
            event: line.event,
            error: line.error,
            ..RequesterResult::default()
        }))
    }

    /// Where the requester logs (JSON lines).
    pub fn requester_log(&self) -> PathBuf {
        self.log_dir.join("market-peer-requester.log")
    }

    /// What the bidder has logged so far.
    pub fn bidder_log_text(&self) -> String {
        std::fs::read_to_string(&self.bidder_log).unwrap_or_default()
    }

    /// Whether the bidder logs a line `matches` within `timeout`: it acts on some calls in the
    /// background (a `vm.delete` is acknowledged before the guest is destroyed), so what it
    /// logs may come a moment after the call returned.
    pub async fn bidder_logs(&self, matches: impl Fn(&str) -> bool, timeout: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            if self.bidder_log_text().lines().any(&matches) {
                return true;
            }
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// `peer.sh`, from [`PEER_SCRIPT_ENV`] or beside the project.
pub fn script() -> PathBuf {
    std::env::var_os(PEER_SCRIPT_ENV).map_or_else(
        || {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../../shared/peers/atproto-market/peer.sh")
        },
        PathBuf::from,
    )
}

fn spawn(
    script: &Path,
    role: &str,
    log: &Path,
    env: &[(&str, &str)],
) -> Result<Child, MarketPeerError> {
    let spawn_error = |source| MarketPeerError::Spawn {
        script: script.display().to_string(),
        source,
    };
    let log = std::fs::File::create(log).map_err(spawn_error)?;
    Command::new("bash")
        .arg(script)
        .arg(role)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(log)
        .kill_on_drop(true)
        .spawn()
        .map_err(spawn_error)
}

async fn ready_line<T: serde::de::DeserializeOwned>(
    child: &mut Child,
    role: &'static str,
    log: &Path,
) -> Result<T, MarketPeerError> {
    let not_ready = || MarketPeerError::NotReady(role, log.display().to_string());
    let stdout = child.stdout.take().ok_or_else(not_ready)?;
    let mut line = String::new();
    let mut reader = BufReader::new(stdout);
    let read = reader.read_line(&mut line);
    match tokio::time::timeout(READY_TIMEOUT, read).await {
        Ok(Ok(read)) if read > 0 => {}
        _ => return Err(not_ready()),
    }
    serde_json::from_str(&line).map_err(MarketPeerError::BadReadyLine)
}
