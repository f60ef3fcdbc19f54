//! What the tests share beyond the test kit (the sandbox, an owner signed in through Chromium,
//! public reads): local bidders from `swdesk-sandbox-bidder` with their own accounts, the owner's
//! attestation key and session (a copy can be handed to a child process), a requester market
//! over the owner's real repo, a contract object, and driving `advance` the way the controller does
//! (the status persisted between calls) with a deadline.

use std::sync::Arc;
use std::time::{Duration, Instant};
use swdesk_net::Outbound;

use serde_json::{Map, Value, json};
use swdesk_atproto::attestation::{AttestationKey, Curve};
use swdesk_atproto::identity::{IdentityConfig, Resolver};
use swdesk_atproto::keychain::{MemoryStore, SessionStore};
use swdesk_atproto::oauth::StoredSession;
use swdesk_atproto::service_auth::ServiceAuth;
use swdesk_atproto::{Agent, PdsRepo};
use swdesk_auction::compute::{
    ComputeContractObject, ComputeContractSpec, ComputeContractStatus, ComputePhase, DeploymentRef,
};
use swdesk_auction::deadline::Deadlines;
use swdesk_auction::market::Market;
use swdesk_kernel::deployment_kind::DeploymentKind;
use swdesk_kernel::name::Name;
use swdesk_kernel::object::{Metadata, Object, Uid};
use swdesk_kernel::timestamp::{Clock, Timestamp};
use swdesk_lexicon::computer::socialweb::infra::{Contract, ContractState};
use swdesk_market::{HttpPeers, OfferingSource, RequesterMarket, Settings, SystemClock};
use swdesk_sandbox_bidder::{Behaviour, RunningBidder};

pub type TestMarket = RequesterMarket<PdsRepo, HttpPeers<ServiceAuth>>;

/// The sandbox of one test.
pub struct Sandbox {
    pub kit: swdesk_testkit::Sandbox,
}

pub async fn sandbox() -> Sandbox {
    Sandbox {
        kit: swdesk_testkit::Sandbox::start().await,
    }
}

impl Sandbox {
    /// A local bidder with its own fresh account, behaving as told.
    pub async fn bidder(&self, behaviour: Behaviour) -> RunningBidder {
        let mut config = self.kit.bidder_config("bidder", behaviour).await;
        config.boot_step = Duration::from_millis(150);
        swdesk_sandbox_bidder::start(config)
            .await
            .expect("the bidder starts")
    }

    /// A fresh owner, signed in through Chromium.
    pub async fn owner(&self) -> Owner {
        let swdesk_testkit::Owner { agent, session, .. } = self.kit.owner("owner").await;
        Owner {
            agent,
            identity: self.kit.identity.clone(),
            key: AttestationKey::generate(Curve::P256),
            session,
        }
    }
}

/// A signed-in owner and the attestation key its market signs with.
pub struct Owner {
    pub agent: Agent,
    pub identity: IdentityConfig,
    pub key: AttestationKey,
    /// Where the session lives (in memory): another process can be handed a copy.
    session: Arc<MemoryStore>,
}

impl Owner {
    /// The session as the keychain would keep it, for a process of its own.
    pub fn stored_session(&self) -> StoredSession {
        self.session
            .load()
            .unwrap()
            .expect("the signed-in session is stored")
    }

    /// A fresh market (as after a restart) asking offerings of `bidders`' repos.
    pub fn market(&self, bidders: &[&RunningBidder]) -> TestMarket {
        let repos = bidders.iter().map(|b| b.account.clone()).collect();
        RequesterMarket::connect(
            self.agent.clone(),
            resolver(&self.identity, bidders),
            OfferingSource::Repos(repos),
            self.key.clone(),
        )
        .with_settings(quick_settings())
    }

    /// Every record of `collection` in the owner's repo.
    pub async fn records(&self, collection: &str) -> Vec<Value> {
        list_records(&self.identity, &self.agent.did(), collection).await
    }
}

/// A resolver on the sandbox reaching its PLC and PDS and the `bidders` (the owner's
/// configuration names them; nothing else on loopback is reachable).
pub fn resolver(identity: &IdentityConfig, bidders: &[&RunningBidder]) -> Resolver {
    let policy = bidders
        .iter()
        .fold(identity.net_policy(), |policy, bidder| {
            policy.with_loopback_service(&bidder.url)
        });
    Resolver::new(identity.clone(), Outbound::new(policy))
}

/// The market's waits, short: a test sees each step soon.
pub fn quick_settings() -> Settings {
    Settings {
        longest_wait: Duration::from_millis(500),
        guest_poll: Duration::from_millis(100),
        live_guest_poll: Duration::from_millis(100),
        deadlines: Deadlines::DEFAULT,
    }
}

/// Every record of `collection` in `repo` (one page is plenty here).
pub async fn list_records(identity: &IdentityConfig, repo: &str, collection: &str) -> Vec<Value> {
    swdesk_testkit::public::records(&resolver(identity, &[]), repo, collection).await
}

/// A requested contract with these `policyArgs` and bidder lists.
pub fn contract(
    policy_args: Value,
    bidder_dids: Option<Vec<String>>,
    deny_bidder_dids: Option<Vec<String>>,
) -> ComputeContractObject {
    let fields = Contract {
        name: "web".to_owned(),
        state: ContractState::Requested,
        user_data: Some("#cloud-config\n".to_owned()),
        bidder_dids,
        deny_bidder_dids,
        policy_args: match policy_args {
            Value::Object(args) => Some(args),
            _ => Some(Map::new()),
        },
        vm_ready_timeout_sec: Some(30),
        ..Contract::default()
    };
    let name = Name::parse("web-contract").unwrap();
    Object {
        metadata: Metadata::new(name.clone(), Uid::from_bytes([7; 16]), SystemClock.now()),
        spec: ComputeContractSpec {
            deployment: DeploymentRef {
                kind: DeploymentKind::Infra,
                name,
            },
            contract: Name::parse("web").unwrap(),
            fields,
            secrets: Vec::new(),
            release: false,
            release_requested_at: None,
        },
        status: ComputeContractStatus::default(),
    }
}

/// The window's arguments: `bidWindowSec` and `firstFree`.
pub fn window(seconds: i64, first_free: bool) -> Value {
    json!({"bidWindowSec": seconds, "firstFree": first_free})
}

/// Advances `contract` with `market` until `done` holds, persisting (JSON round trip) each
/// status; fails after `limit`.
pub async fn drive(
    market: &TestMarket,
    contract: &mut ComputeContractObject,
    limit: Duration,
    done: impl Fn(&ComputeContractStatus) -> bool,
) {
    drive_with(|| market, contract, limit, done).await;
}

/// The same, with a market from `markets` for each call (a fresh one is a restart).
pub async fn drive_with<'a>(
    mut markets: impl FnMut() -> &'a TestMarket,
    contract: &mut ComputeContractObject,
    limit: Duration,
    done: impl Fn(&ComputeContractStatus) -> bool,
) {
    let deadline = Instant::now() + limit;
    while !done(&contract.status) {
        assert!(
            Instant::now() < deadline,
            "timed out; the contract is at {:?}: {:?}; its secrets: {:?}",
            contract.status.phase,
            contract.status.message,
            contract.status.secrets
        );
        let status = markets()
            .advance(contract, SystemClock.now())
            .await
            .expect("the market advances");
        let moved = status != contract.status;
        contract.status = persisted(&status);
        let ended = moved && contract.status.is_finished() && !done(&contract.status);
        assert!(
            !ended,
            "the contract ended elsewhere: {:?}",
            contract.status
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// `status` as the store would read it back.
pub fn persisted(status: &ComputeContractStatus) -> ComputeContractStatus {
    serde_json::from_str(&serde_json::to_string(status).unwrap()).unwrap()
}

pub fn deployed(status: &ComputeContractStatus) -> bool {
    status.phase == ComputePhase::Deployed
}

pub fn finished(status: &ComputeContractStatus) -> bool {
    status.is_finished()
}

/// A behaviour asking `cost`, bidding after `delay_ms`.
pub fn asking(cost: &str, delay_ms: u64) -> Behaviour {
    Behaviour {
        cost: Some(cost.to_owned()),
        bid_delay: Duration::from_millis(delay_ms),
        ..Behaviour::default()
    }
}

/// Asks for the release at `at`.
pub fn release(contract: &mut ComputeContractObject, at: Timestamp) {
    contract.spec.release = true;
    contract.spec.release_requested_at = Some(at);
}
