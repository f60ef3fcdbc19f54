//! The requester against the public market's own bidder (`publicdomainrelay/atproto-market`,
//! run on loopback by `swdesk_devnet::PublicMarketPeer`), resolving DIDs at the sandbox's PLC
//! and reaching the peer's `https://did-key-….localhost` services only because the sandbox's
//! network policy names its dispatcher as the `*.localhost` ingress. Its strict mode
//! (`BIND_KEYS=1`) is tried in `strict_peer.rs` on the same [`World`].

use std::time::Duration;

use swdesk_atproto::Agent;
use swdesk_atproto::attestation::AttestationKey;
use swdesk_atproto::identity::Resolver;
use swdesk_atproto::xrpc::{XrpcRequest, call_public};
use swdesk_devnet::{BidderMode, PublicMarketPeer};
use swdesk_market::{OfferingSource, RequesterMarket};
use swdesk_net::Outbound;

use swdesk_auction::compute::ComputePhase;
use swdesk_kernel::timestamp::Clock;
use swdesk_market::SystemClock;

use crate::support::{
    Sandbox, TestMarket, asking, contract, deployed, drive, quick_settings, release, sandbox,
    window,
};

/// A sandbox and the public market's dispatcher and bidder resolving DIDs at its PLC.
pub struct World {
    pub sandbox: Sandbox,
    pub peer: PublicMarketPeer,
}

async fn world() -> World {
    World::start(sandbox().await, BidderMode::Default).await
}

impl World {
    /// The public peer started on `sandbox`, its bidder in `mode`.
    pub async fn start(sandbox: Sandbox, mode: BidderMode) -> Self {
        let _already = tracing_subscriber::fmt()
            .with_test_writer()
            .with_env_filter("swdesk_market=debug")
            .try_init();
        let plc = sandbox.kit.pds.info().plc_url.clone();
        let peer = PublicMarketPeer::start_in_mode_with_temporary_logs(&plc, mode)
            .await
            .expect("the public market peer starts (../shared/peers/atproto-market/peer.sh)");
        World { sandbox, peer }
    }

    /// The owner's market asking the public bidder only, signing with `key`.
    pub fn market(&self, agent: &Agent, key: &AttestationKey) -> TestMarket {
        RequesterMarket::connect(
            agent.clone(),
            self.resolver(),
            OfferingSource::Repos(vec![self.peer.bidder_did.clone()]),
            key.clone(),
        )
        .with_settings(quick_settings())
    }
}

impl Drop for World {
    /// A failing test shows what the public bidder logged last.
    fn drop(&mut self) {
        if std::thread::panicking() {
            let log = self.peer.bidder_log_text();
            let lines: Vec<&str> = log.lines().collect();
            let tail = lines[lines.len().saturating_sub(30)..].join("\n");
            eprintln!("the public bidder's log ends with:\n{tail}");
        }
    }
}

impl World {
    /// A resolver on the sandbox with the peer's dispatcher as its `*.localhost` ingress.
    pub fn resolver(&self) -> Resolver {
        let identity = self.sandbox.kit.identity.clone();
        let policy = identity
            .net_policy()
            .with_localhost_ingress(self.peer.dispatcher_port);
        Resolver::new(identity, Outbound::new(policy))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_public_bidder_resolves_and_its_repo_is_read_through_the_sandbox_ingress() {
    let world = world().await;
    let resolver = world.resolver();
    let bidder = resolver
        .resolve_did(&world.peer.bidder_did)
        .await
        .expect("the public bidder's did:plc resolves at the sandbox's PLC");
    assert!(
        bidder.pds.as_str().starts_with("https://did-key-"),
        "{}",
        bidder.pds
    );
    let described = call_public(
        resolver.http(),
        &bidder.pds,
        &XrpcRequest::query(
            "com.atproto.repo.describeRepo",
            vec![("repo", world.peer.bidder_did.clone())],
        ),
    )
    .await
    .expect("its PDS answers through the dispatcher");
    assert_eq!(described["did"], world.peer.bidder_did.as_str());
    let without_ingress = Resolver::new(
        world.sandbox.kit.identity.clone(),
        Outbound::new(world.sandbox.kit.identity.net_policy()),
    );
    let refused = call_public(
        without_ingress.http(),
        &bidder.pds,
        &XrpcRequest::query("com.atproto.repo.describeRepo", Vec::new()),
    )
    .await
    .expect_err("without the ingress in the owner's policy, *.localhost is not reached");
    assert!(
        refused.to_string().contains("may not be reached"),
        "{refused}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_contract_is_deployed_on_the_public_bidder() {
    let world = world().await;
    let owner = world.sandbox.owner().await;
    deployed_and_released(&world, &owner.agent, &owner.key).await;
}

/// A contract asking the public bidder only is deployed on it, its guest reports
/// `vm.onNetwork`, and our release reaches the bidder, which destroys the guest.
pub async fn deployed_and_released(world: &World, agent: &Agent, key: &AttestationKey) {
    let market = world.market(agent, key);
    let mut contract = contract(
        window(5, false),
        Some(vec![world.peer.bidder_did.clone()]),
        None,
    );
    drive(&market, &mut contract, Duration::from_secs(120), deployed).await;
    let bidder = world.peer.bidder_did.as_str();
    assert_eq!(contract.status.winner.as_deref(), Some(bidder));
    let receipt = contract.status.receipt.clone().expect("a verified receipt");
    assert!(
        receipt.uri.starts_with(&format!("at://{bidder}/")),
        "{}",
        receipt.uri
    );
    assert!(
        contract
            .status
            .events
            .iter()
            .any(|event| event.kind == "vm.onNetwork"),
        "the guest's vm.onNetwork, read from the bidder's repo: {:?}",
        contract.status.events
    );

    release(&mut contract, SystemClock.now());
    drive(&market, &mut contract, Duration::from_secs(120), |status| {
        status.phase == ComputePhase::Released
    })
    .await;
    let deleted = |line: &str| {
        line.contains("\"submitEvent: vm deleted\"") && line.contains(receipt.uri.as_str())
    };
    assert!(
        world
            .peer
            .bidder_logs(deleted, Duration::from_secs(20))
            .await,
        "the public bidder's log shows our vm.delete and its guest destroyed"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_a_mixed_auction_the_free_public_bid_wins_over_a_paid_sandbox_one() {
    let world = world().await;
    let paid = world.sandbox.bidder(asking("0.20", 0)).await;
    let owner = world.sandbox.owner().await;
    let policy = world
        .sandbox
        .kit
        .identity
        .net_policy()
        .with_localhost_ingress(world.peer.dispatcher_port)
        .with_loopback_service(&paid.url);
    let resolver = Resolver::new(world.sandbox.kit.identity.clone(), Outbound::new(policy));
    let bidders = vec![world.peer.bidder_did.clone(), paid.account.clone()];
    let market = RequesterMarket::connect(
        owner.agent.clone(),
        resolver,
        OfferingSource::Repos(bidders.clone()),
        owner.key.clone(),
    )
    .with_settings(quick_settings());
    let mut contract = contract(window(5, false), Some(bidders), None);
    drive(&market, &mut contract, Duration::from_secs(120), deployed).await;
    assert_eq!(
        contract.status.winner.as_deref(),
        Some(world.peer.bidder_did.as_str()),
        "the free bid wins whoever wrote it"
    );
    let costs: Vec<(&str, Option<&str>)> = contract
        .status
        .bids
        .iter()
        .map(|bid| (bid.bidder.as_str(), bid.cost.as_deref()))
        .collect();
    assert!(
        costs.contains(&(paid.account.as_str(), Some("0.2"))),
        "{costs:?}"
    );
    assert!(
        costs.contains(&(world.peer.bidder_did.as_str(), Some("0"))),
        "{costs:?}"
    );
}
