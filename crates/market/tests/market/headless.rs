//! The requester as a process of its own, for the restart test (`restart.rs`): this test
//! binary, re-run on one ignored test (as the store's crash test does), runs one account's
//! contracts headless. It opens the SQLite store file it is given, starts the controller's
//! engine over the owner's real repo (`PdsRepo`, the session handed over in its environment)
//! and the `RequesterMarket`, and runs until it is killed.
//!
//! Each `advance` announces on stdout the step it starts from. Told to [`Hold`], the process
//! stops moving at one step and waits for its SIGKILL: right after that step was persisted
//! (before its next action), or right after that next action was done (before its result is
//! persisted). It exits on its own only when its stdin closes (the parent is gone).
//!
//! Invariant: the session and the attestation key come in the environment, never in argv,
//! and are never printed.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::Arc;
use swdesk_net::Outbound;

use serde::{Deserialize, Serialize};
use swdesk_atproto::attestation::{AttestationKey, Curve};
use swdesk_atproto::identity::{IdentityConfig, Resolver};
use swdesk_atproto::keychain::MemoryStore;
use swdesk_atproto::oauth::StoredSession;
use swdesk_atproto::{Agent, PdsRepo};
use swdesk_auction::compute::{ComputeContractObject, ComputeContractStatus};
use swdesk_auction::flow::Step;
use swdesk_auction::market::{Market, MarketError};
use swdesk_controller::{Engine, EngineConfig, SystemClock};
use swdesk_kernel::timestamp::Timestamp;
use swdesk_market::{OfferingSource, RequesterMarket};
use swdesk_store::Store;
use url::Url;

use crate::support::quick_settings;

/// The environment variable holding the child's [`Setup`] (JSON); set only for the child.
pub const SETUP_ENV: &str = "SWDESK_HEADLESS_SETUP";
/// The libtest arguments that run the child (this binary's ignored test below).
pub const CHILD_ARGS: [&str; 4] = [
    "--exact",
    "headless::runs_one_accounts_contracts_until_killed",
    "--ignored",
    "--nocapture",
];
/// What starts every line the child means for its parent.
pub const ANNOUNCE: &str = "swdesk-headless ";

/// Where the child stops moving, to be killed there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Hold {
    /// At the first `advance` from this step: it is persisted, its next action not begun.
    Persisted(String),
    /// Once the next action from this step is done and its result not yet persisted.
    Done(String),
}

/// What the child needs: the store file, the sandbox, the owner's session and key, the bidder.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Setup {
    /// The SQLite store file.
    pub store: PathBuf,
    /// The sandbox PLC.
    pub plc_url: Url,
    /// The sandbox PDS.
    pub pds_url: Url,
    /// The owner's session, as the keychain keeps it.
    pub session: StoredSession,
    /// The owner's attestation key (P-256 secret bytes).
    pub key: Vec<u8>,
    /// The repo whose offerings are read: the bidder's.
    pub bidder: String,
    /// The bidder's service on loopback (the network policy names it).
    pub bidder_url: Url,
    /// Where to stop.
    pub hold: Hold,
}

/// The name a status's flow step goes by in announcements; the release's three steps are
/// told apart by what they have written.
pub fn step_label(status: &ComputeContractStatus) -> &'static str {
    let Some(flow) = &status.flow else {
        return "none";
    };
    match &flow.step {
        Step::Releasing { delete: None, .. } => "releasing",
        Step::Releasing { event: None, .. } => "releasing:deleteWritten",
        Step::Releasing { .. } => "releasing:eventWritten",
        step => step.name(),
    }
}

/// The child: runs the contracts in the store until killed; does nothing in a normal run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "the child process of the restart test"]
async fn runs_one_accounts_contracts_until_killed() {
    let Ok(setup) = std::env::var(SETUP_ENV) else {
        return;
    };
    let setup: Setup = serde_json::from_str(&setup).unwrap();
    exit_when_stdin_closes();
    let _engine = start_engine(setup);
    announce("running");
    std::future::pending::<()>().await;
}

/// The engine over the store file, the owner's repo and the announcing market.
fn start_engine(setup: Setup) -> Engine {
    let store = Arc::new(Store::open(&setup.store).unwrap());
    let identity = IdentityConfig::sandbox(setup.plc_url, setup.pds_url);
    let policy = identity
        .net_policy()
        .with_loopback_service(&setup.bidder_url);
    let resolver = Resolver::new(identity, Outbound::new(policy));
    let agent = Agent::from_stored(
        setup.session,
        resolver.http().clone(),
        Arc::new(MemoryStore::default()),
    )
    .unwrap();
    let key = AttestationKey::from_secret_bytes(Curve::P256, &setup.key).unwrap();
    let market = RequesterMarket::connect(
        agent.clone(),
        resolver.clone(),
        OfferingSource::Repos(vec![setup.bidder]),
        key,
    )
    .with_settings(quick_settings());
    let repo = PdsRepo::new(agent, resolver);
    Engine::start(
        store,
        Arc::new(repo),
        Arc::new(Announcing {
            inner: market,
            hold: setup.hold,
        }),
        Arc::new(SystemClock),
        EngineConfig::default(),
    )
}

/// A market that says where each `advance` starts and stops moving where it is told to.
#[derive(Debug)]
struct Announcing<M> {
    inner: M,
    hold: Hold,
}

impl<M: Market> Market for Announcing<M> {
    async fn advance(
        &self,
        contract: &ComputeContractObject,
        now: Timestamp,
    ) -> Result<ComputeContractStatus, MarketError> {
        let from = step_label(&contract.status);
        announce(&format!("at {from}"));
        if self.hold == Hold::Persisted(from.to_owned()) {
            wait_for_the_kill(&format!("persisted {from}")).await;
        }
        let status = self.inner.advance(contract, now).await?;
        if self.hold == Hold::Done(from.to_owned()) && status.flow != contract.status.flow {
            wait_for_the_kill(&format!("done {from}")).await;
        }
        Ok(status)
    }
}

/// Says where it holds and never returns: the parent kills the process here.
async fn wait_for_the_kill(at: &str) {
    announce(&format!("holding {at}"));
    std::future::pending::<()>().await;
}

/// One line for the parent.
fn announce(line: &str) {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{ANNOUNCE}{line}").unwrap();
    out.flush().unwrap();
}

/// Exits when the parent closes stdin (or dies), so no child outlives its test.
fn exit_when_stdin_closes() {
    std::thread::spawn(|| {
        let mut sink = Vec::new();
        let _ = std::io::stdin().read_to_end(&mut sink);
        std::process::exit(3);
    });
}
