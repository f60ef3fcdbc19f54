//! How soon an edit made by another client reaches the account's controller, live beside
//! polling, against the sandbox's real PDS: two accounts, one controller following its repo's
//! `subscribeRepos`, one listing every 30 s (the poll alone); each edit is written by another
//! client (a password session of its own) and timed until the controller pulled it into its
//! store (what the window shows). Then requests per idle minute of each, counted by their
//! outbound clients. Then (alone with the argument `market`) the market: a sandbox bidder's
//! `vm.onNetwork` written → the contract Deployed in the controller's store, with the winner's
//! repo followed live beside timed reads only (every 250 ms), a handful of contracts each. Run
//! by `cargo xtask bench sync`, or by hand with `SWDESK_SANDBOX_PDS` set (else it starts a PDS
//! of its own). Prints p50 and p95 in milliseconds; asserts nothing.

#![allow(clippy::unwrap_used, clippy::print_stdout)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use swdesk_api::controller::{AccountController, Following, MarketAccess};
use swdesk_api::live_source::LiveSource;
use swdesk_api::{Network, Sessions};
use swdesk_atproto::PdsRepo;
use swdesk_atproto::attestation::{AttestationKey, Curve};
use swdesk_atproto::identity::Resolver;
use swdesk_atproto::keychain::MemoryStore;
use swdesk_auction::market::Unconnected;
use swdesk_controller::EngineConfig;
use swdesk_core::infra::{InfraSpec, InfraStatus};
use swdesk_devnet::{Account, SandboxPds};
use swdesk_kernel::name::Name;
use swdesk_kernel::object::{Metadata, Object};
use swdesk_kernel::rollup::ContractPhase;
use swdesk_kernel::timestamp::Clock;
use swdesk_market::OfferingSource;
use swdesk_net::Outbound;
use swdesk_sandbox_bidder::{GuestPhase, RunningBidder};
use swdesk_store::random_uid;
use swdesk_testkit::Chromium;

const INFRA: &str = "computer.socialweb.infra";
const LIVE_CHANGES: usize = 50;
const POLLED_CHANGES: usize = 6;
const CONTRACTS: usize = 5;

/// One account's controller and what counts its requests.
struct Side {
    account: Account,
    controller: AccountController,
    network: Network,
    _sessions: Sessions,
    _data: tempfile::TempDir,
}

/// A fresh account named from `prefix`, signed in on its own network (its requests counted).
async fn signed_in(pds: &SandboxPds, prefix: &str) -> (Network, Account, Sessions) {
    let network = Network::sandbox(&pds.ready_line()).unwrap();
    let account = pds.create_account(prefix).await.unwrap();
    let sessions = Sessions::with_store(
        network.clone(),
        Chromium::approving(&account),
        Ok(Arc::new(MemoryStore::default())),
    );
    sessions.sign_in(&account.handle).await.unwrap();
    (network, account, sessions)
}

async fn side(pds: &SandboxPds, prefix: &str, live: bool) -> Side {
    let (network, account, sessions) = signed_in(pds, prefix).await;
    let agent = sessions.agent().unwrap();
    let resolver = Resolver::new(network.oauth.identity.clone(), network.outbound.clone());
    let data = tempfile::tempdir().unwrap();
    let repo = PdsRepo::new(agent, resolver.clone());
    let follow = live.then_some(Following {
        resolver,
        source: LiveSource::Pds,
    });
    let config = EngineConfig::default();
    let controller =
        AccountController::start_following(data.path(), repo, Unconnected, config, follow)
            .await
            .unwrap();
    declare(&controller);
    Side {
        account,
        controller,
        network,
        _sessions: sessions,
        _data: data,
    }
}

fn declare(controller: &AccountController) {
    let clock = swdesk_controller::SystemClock;
    let object = Object {
        metadata: Metadata::new(
            Name::parse("web").unwrap(),
            random_uid().unwrap(),
            clock.now(),
        ),
        spec: InfraSpec {
            description: Some("v0".into()),
            ..Default::default()
        },
        status: InfraStatus::default(),
    };
    controller.store().create::<InfraSpec>(&object).unwrap();
}

fn description(side: &Side) -> Option<String> {
    let name = Name::parse("web").unwrap();
    side.controller
        .store()
        .get::<InfraSpec>(&name)
        .ok()??
        .spec
        .description
}

async fn until(what: &str, limit: Duration, mut check: impl FnMut() -> bool) -> Duration {
    let started = Instant::now();
    while !check() {
        assert!(started.elapsed() < limit, "{what} within {limit:?}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    started.elapsed()
}

async fn published(pds: &SandboxPds, side: &Side) -> Value {
    let url = format!(
        "{}/xrpc/com.atproto.repo.getRecord?repo={}&collection={INFRA}&rkey=web",
        pds.info().pds_url,
        side.account.did
    );
    let started = Instant::now();
    loop {
        #[allow(
            clippy::disallowed_methods,
            reason = "a public reader of the sandbox PDS"
        )]
        let answer = reqwest::get(&url).await.unwrap();
        if answer.status().is_success() {
            return answer.json::<Value>().await.unwrap()["value"].clone();
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "published within a minute"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Edits written by another client, each timed until the controller pulled it.
async fn latencies(pds: &SandboxPds, side: &Side, changes: usize) -> Vec<Duration> {
    let mut record = published(pds, side).await;
    let mut took = Vec::with_capacity(changes);
    for n in 1..=changes {
        let text = format!("edited elsewhere, change {n}");
        record["description"] = Value::from(text.clone());
        let started = Instant::now();
        pds.put_record_as(&side.account, INFRA, "web", &record)
            .await
            .unwrap();
        until("the edit is pulled", Duration::from_secs(120), || {
            description(side).as_deref() == Some(text.as_str())
        })
        .await;
        took.push(started.elapsed());
        // Let the controller settle (its own writes) before the next edit.
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    took
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted
        .get(index)
        .map_or(f64::NAN, |d| d.as_secs_f64() * 1000.0)
}

fn report(label: &str, mut took: Vec<Duration>) {
    took.sort();
    println!(
        "{label:<34} {:>8.0} {:>8.0} {:>4}",
        percentile(&took, 0.5),
        percentile(&took, 0.95),
        took.len()
    );
}

async fn idle_requests(side: &Side, minutes: u64) -> u64 {
    tokio::time::sleep(Duration::from_secs(5)).await;
    let before = side.network.outbound.made();
    tokio::time::sleep(Duration::from_secs(60 * minutes)).await;
    side.network.outbound.made() - before
}

/// An account's controller on the market of `bidder`, following winners live or not.
async fn market_side(pds: &SandboxPds, bidder: &RunningBidder, live: bool) -> Side {
    let prefix = if live { "mktlive" } else { "mkttimed" };
    let (mut network, account, sessions) = signed_in(pds, prefix).await;
    let identity = network.oauth.identity.clone();
    let policy = identity.net_policy().with_loopback_service(&bidder.url);
    // The market's calls (the bidder's repo read among them) are the ones counted.
    network.outbound = Outbound::new(policy);
    let resolver = Resolver::new(identity, network.outbound.clone());
    let market = MarketAccess {
        offerings: OfferingSource::Repos(vec![bidder.account.clone()]),
        key: AttestationKey::generate(Curve::P256),
        vault: None,
        follow_winners: live,
    };
    let data = tempfile::tempdir().unwrap();
    let controller = AccountController::start_on_market(
        data.path(),
        sessions.agent().unwrap(),
        resolver,
        Some(market),
        EngineConfig::default(),
        LiveSource::Pds,
    )
    .await
    .unwrap();
    Side {
        account,
        controller,
        network,
        _sessions: sessions,
        _data: data,
    }
}

/// Contracts requested one after another, each timed from the bidder's `vm.onNetwork`
/// (watched in the bidder's state) until the controller's store shows it Deployed; and the
/// market's requests from each contract's request to its Deployed, in all.
async fn guest_latencies(side: &Side, bidder: &RunningBidder) -> (Vec<Duration>, u64) {
    let mut took = Vec::with_capacity(CONTRACTS);
    let before = side.network.outbound.made();
    for n in 0..CONTRACTS {
        let name = Name::parse(&format!("rented{n}")).unwrap();
        let object: Object<InfraSpec, _> = Object {
            metadata: Metadata::new(
                name.clone(),
                random_uid().unwrap(),
                swdesk_controller::SystemClock.now(),
            ),
            spec: serde_json::from_value(serde_json::json!({"contracts": [{"name": "vm",
                "state": "requested", "policyArgs": {"bidWindowSec": 1, "firstFree": true}}]}))
            .unwrap(),
            status: InfraStatus::default(),
        };
        side.controller
            .store()
            .create::<InfraSpec>(&object)
            .unwrap();
        let on_network = |bidder: &RunningBidder| {
            let guests = bidder.state().guests;
            let ours = guests
                .iter()
                .filter(|guest| guest.accept_author == side.account.did);
            ours.filter(|guest| guest.phase == GuestPhase::OnNetwork)
                .count()
                > n
        };
        until(
            "the guest is on the network",
            Duration::from_secs(120),
            || on_network(bidder),
        )
        .await;
        let deployed = until("the contract is Deployed", Duration::from_secs(60), || {
            let object = side
                .controller
                .store()
                .get::<InfraSpec>(&name)
                .ok()
                .flatten();
            object.is_some_and(|object| {
                object
                    .status
                    .contracts
                    .first()
                    .is_some_and(|contract| contract.phase == ContractPhase::Deployed)
            })
        })
        .await;
        took.push(deployed);
    }
    (took, side.network.outbound.made() - before)
}

/// `vm.onNetwork` → Deployed, the winner followed live beside timed reads, from one bidder.
async fn market(pds: &SandboxPds) {
    let identity = Network::sandbox(&pds.ready_line()).unwrap().oauth.identity;
    let mut config =
        swdesk_testkit::bidder_config(pds, &identity, "benchbid", Default::default()).await;
    config.boot_step = Duration::from_secs(1);
    let bidder = swdesk_sandbox_bidder::start(config).await.unwrap();
    let live = market_side(pds, &bidder, true).await;
    let timed = market_side(pds, &bidder, false).await;
    println!("vm.onNetwork written by the bidder → contract Deployed in the controller's store");
    println!("{:<34} {:>8} {:>8} {:>4}", "", "p50 ms", "p95 ms", "n");
    let (live_took, live_requests) = guest_latencies(&live, &bidder).await;
    let (timed_took, timed_requests) = guest_latencies(&timed, &bidder).await;
    report("winner followed (subscribeRepos)", live_took);
    report("timed reads (every 250 ms)", timed_took);
    println!(
        "the market's requests per contract, requested → Deployed: followed {}, timed {}",
        live_requests / CONTRACTS as u64,
        timed_requests / CONTRACTS as u64
    );
    live.controller.stop().await;
    timed.controller.stop().await;
    bidder.stop().await;
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let pds = SandboxPds::from_env_or_start().await.unwrap();
    if std::env::args().any(|arg| arg == "market") {
        market(&pds).await;
        return;
    }
    let live = side(&pds, "synclive", true).await;
    let polled = side(&pds, "syncpoll", false).await;
    until("the live side is live", Duration::from_secs(60), || {
        live.controller.live_status().mode == "live"
    })
    .await;
    println!(
        "edit by another client → pulled into the controller's store, sandbox PDS at {}",
        pds.info().pds_url
    );
    println!("{:<34} {:>8} {:>8} {:>4}", "", "p50 ms", "p95 ms", "n");
    let live_took = latencies(&pds, &live, LIVE_CHANGES).await;
    let polled_took = latencies(&pds, &polled, POLLED_CHANGES).await;
    report("live (subscribeRepos)", live_took);
    report("poll (listRecords every 30 s)", polled_took);
    let (live_idle, polled_idle) = tokio::join!(idle_requests(&live, 1), idle_requests(&polled, 1));
    println!("requests in an idle minute: live {live_idle} (goal 0), poll {polled_idle}");
    live.controller.stop().await;
    polled.controller.stop().await;
    market(&pds).await;
}
