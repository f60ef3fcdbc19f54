//! Starting the sandbox PDS and handing out accounts. [`SandboxPds::start`] spawns the Node
//! harness (`pds/pds.mjs`), waits for its one JSON line, and keeps its stdin open: when the
//! handle is dropped (or the test process dies) stdin closes and the harness stops and removes
//! its data. [`SandboxPds::start_with`] a [`Storage::Persistent`] directory keeps the sandbox
//! (secrets, repos, PLC operations) across restarts instead. [`SandboxPds::from_env_or_start`]
//! reuses a PDS that `cargo xtask test` started once for the whole run (`SWDESK_SANDBOX_PDS`
//! holds its JSON line), so tests do not each pay for a start.
//! [`SandboxPds::create_account`] gives each test an account of its own, with an address
//! whose mail [`SandboxPds::mails_to`] reads.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::mailbox::Mail;

/// Where a sandbox keeps its data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Storage {
    /// Free ports ([`crate::ports`]) and a temporary directory, removed when the harness stops
    /// (tests).
    Throwaway,
    /// Kept in `dir` across restarts, on fixed ports (`cargo xtask run`).
    Persistent {
        /// The data directory.
        dir: PathBuf,
        /// The PDS's port.
        pds_port: u16,
        /// The PLC directory's port.
        plc_port: u16,
    },
}

/// The environment variable through which a started PDS is shared with test processes.
pub const SANDBOX_PDS_ENV: &str = "SWDESK_SANDBOX_PDS";

/// How long the harness may take to print its line (a cold start is 2-3 s).
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// What the harness prints once ready.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PdsInfo {
    /// The PDS, e.g. `http://localhost:43881` (its issuer and DID-document endpoint too).
    pub pds_url: String,
    /// The in-memory PLC directory.
    pub plc_url: String,
    /// The PDS's own DID (`did:web:localhost`).
    pub service_did: String,
    /// The PDS's admin password (made up at start).
    pub admin_password: String,
    /// Where the PDS keeps its data; removed when it stops.
    pub data_directory: String,
    /// The folder the PDS's mail lands in, a JSON file each (see [`crate::mailbox`]); empty
    /// in the line of a harness older than the mailbox.
    #[serde(default)]
    pub mailbox: String,
    /// The accounts asked for on the command line.
    pub accounts: Vec<Account>,
}

impl std::fmt::Debug for PdsInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PdsInfo")
            .field("pds_url", &self.pds_url)
            .field("plc_url", &self.plc_url)
            .field("service_did", &self.service_did)
            .field("admin_password", &"<redacted>")
            .field("data_directory", &self.data_directory)
            .field("mailbox", &self.mailbox)
            .field("accounts", &self.accounts)
            .finish()
    }
}

/// An account on the sandbox PDS.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Account {
    pub handle: String,
    pub did: String,
    pub password: String,
}

impl Account {
    /// The address the account was created with (the harness's accounts too): its mail is
    /// read with [`SandboxPds::mails_to`].
    pub fn email(&self) -> String {
        email_of(&self.handle)
    }
}

/// The made-up address of the account `handle`.
fn email_of(handle: &str) -> String {
    format!("{handle}@example.test")
}

impl std::fmt::Debug for Account {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Account")
            .field("handle", &self.handle)
            .field("did", &self.did)
            .field("password", &"<redacted>")
            .finish()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SandboxPdsError {
    #[error(
        "cannot start the sandbox PDS harness (is Node.js installed, and `npm ci` run in {dir}?): {source}"
    )]
    Spawn { dir: String, source: std::io::Error },
    #[error("the sandbox PDS harness exited before it was ready (see its stderr above)")]
    ExitedEarly,
    #[error("the sandbox PDS was not ready within {0:?}")]
    Timeout(Duration),
    #[error("the sandbox PDS printed something that is not its ready line: {0}")]
    BadReadyLine(serde_json::Error),
    #[error("{SANDBOX_PDS_ENV} does not hold a ready line: {0}")]
    BadEnvironment(serde_json::Error),
    #[error("creating account {handle} failed: {message}")]
    CreateAccount { handle: String, message: String },
    #[error("reading the repo of {did} failed: {message}")]
    ReadRepo { did: String, message: String },
    #[error("writing {uri} as another client failed: {message}")]
    WriteRecord { uri: String, message: String },
    #[error("reading the harness's output failed: {0}")]
    Io(#[from] std::io::Error),
}

/// A running sandbox PDS: started here (and stopped on drop) or shared from the environment.
/// Dropping a started one closes the harness's stdin; the harness then stops and removes its
/// data by itself (a kill would leave the data behind).
#[derive(Debug)]
pub struct SandboxPds {
    info: PdsInfo,
    /// Held for its stdin: dropping it closes the pipe, and the harness stops by itself.
    _harness: Option<Child>,
    http: reqwest::Client,
}

static ACCOUNTS_MADE: AtomicU64 = AtomicU64::new(0);

impl SandboxPds {
    /// The directory of the Node harness (`npm ci` there installs the PDS).
    pub fn harness_dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("pds")
    }

    /// Starts a throwaway PDS with the given `(handle, password)` accounts.
    pub async fn start(accounts: &[(&str, &str)]) -> Result<Self, SandboxPdsError> {
        Self::start_with(&Storage::Throwaway, accounts).await
    }

    /// Starts a PDS kept as `storage` says, with the given `(handle, password)` accounts
    /// (created unless they exist).
    pub async fn start_with(
        storage: &Storage,
        accounts: &[(&str, &str)],
    ) -> Result<Self, SandboxPdsError> {
        Self::spawn(storage, None, accounts).await
    }

    /// Starts a persistent PDS that keeps its public URL (`storage`'s PDS port, named in DID
    /// documents and DPoP proofs) but listens on `listen_port`, so a
    /// [`crate::FaultProxy`] can stand on the public port in front of it.
    pub async fn start_listening_on(
        storage: &Storage,
        listen_port: u16,
        accounts: &[(&str, &str)],
    ) -> Result<Self, SandboxPdsError> {
        Self::spawn(storage, Some(listen_port), accounts).await
    }

    #[allow(
        clippy::disallowed_methods,
        reason = "the harness's own client to the sandbox PDS it runs on loopback"
    )]
    async fn spawn(
        storage: &Storage,
        listen_port: Option<u16>,
        accounts: &[(&str, &str)],
    ) -> Result<Self, SandboxPdsError> {
        let dir = Self::harness_dir();
        let mut command = Command::new("node");
        command
            .arg("pds.mjs")
            .current_dir(&dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let (pds_port, plc_port) = match storage {
            Storage::Persistent {
                dir,
                pds_port,
                plc_port,
            } => {
                command.arg("--data").arg(dir);
                (*pds_port, *plc_port)
            }
            Storage::Throwaway => {
                let ports = crate::ports::free_ports(2);
                (ports[0], ports[1])
            }
        };
        command.args([
            "--pds-port",
            &pds_port.to_string(),
            "--plc-port",
            &plc_port.to_string(),
        ]);
        if let Some(port) = listen_port {
            command.args(["--listen-port", &port.to_string()]);
        }
        for (handle, password) in accounts {
            command.arg("--account").arg(format!("{handle}:{password}"));
        }
        let mut harness = command.spawn().map_err(|source| SandboxPdsError::Spawn {
            dir: dir.display().to_string(),
            source,
        })?;
        let stdout = harness.stdout.take().ok_or(SandboxPdsError::ExitedEarly)?;
        let mut line = String::new();
        let mut reader = BufReader::new(stdout);
        let read = reader.read_line(&mut line);
        match tokio::time::timeout(START_TIMEOUT, read).await {
            Err(_) => return Err(SandboxPdsError::Timeout(START_TIMEOUT)),
            Ok(Ok(0)) => return Err(SandboxPdsError::ExitedEarly),
            Ok(result) => result?,
        };
        let info = serde_json::from_str(&line).map_err(SandboxPdsError::BadReadyLine)?;
        Ok(Self {
            info,
            _harness: Some(harness),
            http: reqwest::Client::new(),
        })
    }

    /// The PDS named by `SWDESK_SANDBOX_PDS`, when the test run started one; else a new one.
    #[allow(
        clippy::disallowed_methods,
        reason = "the harness's own client to the sandbox PDS it runs on loopback"
    )]
    pub async fn from_env_or_start() -> Result<Self, SandboxPdsError> {
        match std::env::var(SANDBOX_PDS_ENV) {
            Ok(line) => {
                let info = serde_json::from_str(&line).map_err(SandboxPdsError::BadEnvironment)?;
                Ok(Self {
                    info,
                    _harness: None,
                    http: reqwest::Client::new(),
                })
            }
            Err(_) => Self::start(&[]).await,
        }
    }

    /// Stops a harness this handle started and waits until it has (its ports are free then).
    pub async fn stop(mut self) -> Result<(), SandboxPdsError> {
        if let Some(mut harness) = self._harness.take() {
            drop(harness.stdin.take());
            harness.wait().await?;
        }
        Ok(())
    }

    pub fn info(&self) -> &PdsInfo {
        &self.info
    }

    /// The ready line, for handing this PDS to child processes through [`SANDBOX_PDS_ENV`].
    pub fn ready_line(&self) -> String {
        serde_json::to_string(&self.info).unwrap_or_default()
    }

    /// The mails the PDS sent to `address` so far, oldest first.
    pub fn mails_to(&self, address: &str) -> std::io::Result<Vec<Mail>> {
        let mails = crate::mailbox::read(Path::new(&self.info.mailbox))?;
        Ok(mails
            .into_iter()
            .filter(|mail| mail.is_to(address))
            .collect())
    }

    /// Creates a fresh account whose handle starts with `prefix` (as much of it as fits; the
    /// handle is unique across processes).
    pub async fn create_account(&self, prefix: &str) -> Result<Account, SandboxPdsError> {
        // The PDS allows 18 characters before `.test`: the prefix gives way to the suffix.
        let suffix = unique_suffix();
        let room = 18usize.saturating_sub(suffix.len() + 1);
        let prefix: String = prefix.chars().take(room).collect();
        let handle = format!("{prefix}-{suffix}.test");
        let password = format!("pw-{}", unique_suffix());
        let url = format!(
            "{}/xrpc/com.atproto.server.createAccount",
            self.info.pds_url
        );
        let body = serde_json::json!({
            "handle": handle,
            "password": password,
            "email": email_of(&handle),
        });
        let failed = |message: String| SandboxPdsError::CreateAccount {
            handle: handle.clone(),
            message,
        };
        let response = self
            .http
            .post(url)
            .json(&body)
            .send()
            .await
            .map_err(|e| failed(e.to_string()))?;
        let status = response.status();
        let answer: serde_json::Value = response.json().await.map_err(|e| failed(e.to_string()))?;
        if !status.is_success() {
            return Err(failed(format!("{status}: {answer}")));
        }
        let did = answer["did"]
            .as_str()
            .ok_or_else(|| failed(format!("no did in {answer}")))?;
        Ok(Account {
            handle: handle.clone(),
            did: did.to_owned(),
            password,
        })
    }

    /// The whole repo of `did` as the PDS serves it (`com.atproto.sync.getRepo`: a CAR of
    /// every record and commit), for tests that look for bytes that must not be there.
    pub async fn repo_bytes(&self, did: &str) -> Result<Vec<u8>, SandboxPdsError> {
        let url = format!("{}/xrpc/com.atproto.sync.getRepo", self.info.pds_url);
        let failed = |message: String| SandboxPdsError::ReadRepo {
            did: did.to_owned(),
            message,
        };
        let response = self
            .http
            .get(url)
            .query(&[("did", did)])
            .send()
            .await
            .map_err(|e| failed(e.to_string()))?;
        if !response.status().is_success() {
            return Err(failed(response.status().to_string()));
        }
        let bytes = response.bytes().await.map_err(|e| failed(e.to_string()))?;
        Ok(bytes.to_vec())
    }

    /// Writes `value` at `collection`/`rkey` in `account`'s repo as another client would (a
    /// password session of its own, `putRecord` without a swap): the edit made elsewhere that
    /// the app must notice.
    pub async fn put_record_as(
        &self,
        account: &Account,
        collection: &str,
        rkey: &str,
        value: &serde_json::Value,
    ) -> Result<(), SandboxPdsError> {
        let uri = format!("at://{}/{collection}/{rkey}", account.did);
        let body = serde_json::json!({
            "repo": account.did, "collection": collection, "rkey": rkey, "record": value,
        });
        self.post_as(account, "com.atproto.repo.putRecord", &body)
            .await
            .map_err(|message| SandboxPdsError::WriteRecord { uri, message })
    }

    /// Writes every `(rkey, value)` of `records` in `collection` of `account`'s repo as
    /// another client would, in `applyWrites` batches (the PDS takes 200 writes a call): many
    /// records of another client's at once.
    pub async fn put_records_as(
        &self,
        account: &Account,
        collection: &str,
        records: &[(String, serde_json::Value)],
    ) -> Result<(), SandboxPdsError> {
        for batch in records.chunks(200) {
            let writes: Vec<serde_json::Value> = batch
                .iter()
                .map(|(rkey, value)| {
                    serde_json::json!({
                        "$type": "com.atproto.repo.applyWrites#create",
                        "collection": collection, "rkey": rkey, "value": value,
                    })
                })
                .collect();
            let body = serde_json::json!({"repo": account.did, "writes": writes});
            self.post_as(account, "com.atproto.repo.applyWrites", &body)
                .await
                .map_err(|message| SandboxPdsError::WriteRecord {
                    uri: format!("at://{}/{collection}", account.did),
                    message,
                })?;
        }
        Ok(())
    }

    /// Calls the procedure `method` with `body` in a password session of `account`'s own.
    async fn post_as(
        &self,
        account: &Account,
        method: &str,
        body: &serde_json::Value,
    ) -> Result<(), String> {
        let pds = &self.info.pds_url;
        let session: serde_json::Value = self
            .http
            .post(format!("{pds}/xrpc/com.atproto.server.createSession"))
            .json(&serde_json::json!({"identifier": account.did, "password": account.password}))
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .map_err(|e| e.to_string())?
            .json()
            .await
            .map_err(|e| e.to_string())?;
        let token = session["accessJwt"].as_str().unwrap_or_default();
        self.http
            .post(format!("{pds}/xrpc/{method}"))
            .bearer_auth(token)
            .json(body)
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .map_err(|e| e.to_string())?;
        Ok(())
    }
}

/// Whether `needle` occurs in `haystack`: a value looked for in a repo, a file, a log.
pub fn holds_bytes(haystack: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty()
        && haystack
            .windows(needle.len())
            .any(|window| window == needle)
}

/// Process id, a per-process counter and the clock: unique among concurrent test processes.
fn unique_suffix() -> String {
    let count = ACCOUNTS_MADE.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.subsec_nanos())
        .unwrap_or_default();
    format!("{:x}{count:x}{:x}", std::process::id(), nanos % 0xfff)
}
