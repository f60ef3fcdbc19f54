//! The controller's cost against the sandbox's real PDS, side by side with the bare minimum:
//! publishing 256 new deployments (their records and the index), then a resync with nothing
//! changed. Run by `cargo xtask bench-controller` (which starts the sandbox PDS), or by hand
//! with `SWDESK_SANDBOX_PDS` set. Prints requests and wall time; asserts nothing.

#![allow(clippy::unwrap_used, clippy::print_stdout)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use swdesk_api::{Network, Sessions};
use swdesk_atproto::identity::Resolver;
use swdesk_atproto::keychain::MemoryStore;
use swdesk_atproto::{Agent, PdsRepo};
use swdesk_auction::market::Unconnected;
use swdesk_controller::runtime::{ControllerConfig, ObjectKey};
use swdesk_controller::{Engine, EngineConfig, SystemClock};
use swdesk_core::infra::{InfraSpec, InfraStatus};
use swdesk_devnet::{Account, SandboxPds};
use swdesk_kernel::name::Name;
use swdesk_kernel::object::{Kind, Metadata, Object};
use swdesk_kernel::repo::counted::{Calls, Counted};
use swdesk_kernel::repo::{RecordRepo, Swap};
use swdesk_kernel::rkey::Rkey;
use swdesk_kernel::timestamp::Clock;
use swdesk_kernel::uri::RecordUri;
use swdesk_store::Store;
use swdesk_store::random_uid;
use swdesk_testkit::Chromium;

const DEPLOYMENTS: usize = 256;
const INFRA: &str = "computer.socialweb.infra";

async fn signed_in(network: &Network, account: &Account) -> (Agent, Sessions) {
    let sessions = Sessions::with_store(
        network.clone(),
        Chromium::approving(account),
        Ok(Arc::new(MemoryStore::default())),
    );
    sessions.sign_in(&account.handle).await.unwrap();
    (sessions.agent().unwrap(), sessions)
}

fn row(label: &str, calls: Calls, elapsed: Duration) {
    println!(
        "{label:<34} {:>9} {:>6} {:>6} {:>6} {:>9.2}",
        calls.total(),
        calls.puts,
        calls.lists,
        calls.gets,
        elapsed.as_secs_f64()
    );
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let pds = SandboxPds::from_env_or_start().await.unwrap();
    let network = Network::sandbox(&pds.ready_line()).unwrap();
    let resolver = Resolver::new(network.oauth.identity.clone(), network.outbound.clone());
    let (controller_account, bare_account) = (
        pds.create_account("benchc").await.unwrap(),
        pds.create_account("benchb").await.unwrap(),
    );
    let (controller_agent, _keep_a) = signed_in(&network, &controller_account).await;
    let (bare_agent, _keep_b) = signed_in(&network, &bare_account).await;
    println!(
        "{DEPLOYMENTS} deployments against the sandbox PDS at {}",
        pds.info().pds_url
    );
    println!(
        "{:<34} {:>9} {:>6} {:>6} {:>6} {:>9}",
        "", "requests", "puts", "lists", "gets", "seconds"
    );

    let bare = bare_minimum(bare_agent, resolver.clone()).await;
    let (publish, resync) = controller(controller_agent, resolver).await;
    row("bare minimum (256 puts + index)", bare.0, bare.1);
    row("controller: publish", publish.0, publish.1);
    row("controller: resync, nothing changed", resync.0, resync.1);
    let ratio = |a: usize, b: usize| a as f64 / b.max(1) as f64;
    println!(
        "publish / bare minimum: {:.2}x requests, {:.2}x time (target: at most 1.3x); resync writes: {}",
        ratio(publish.0.total(), bare.0.total()),
        publish.1.as_secs_f64() / bare.1.as_secs_f64(),
        resync.0.writes(),
    );
}

/// 256 `putRecord`s and one index write, one after another, by a plain client.
async fn bare_minimum(agent: Agent, resolver: Resolver) -> (Calls, Duration) {
    let repo = Counted::new(PdsRepo::new(agent, resolver));
    let tally = repo.tally();
    let started = Instant::now();
    let mut live = Vec::new();
    for n in 0..DEPLOYMENTS {
        let rkey = format!("d{n:03}");
        let record = json!({"$type": INFRA, "description": rkey, "contracts": [], "createdAt": "2026-12-03T00:00:00.000Z"});
        repo.put(INFRA, &Rkey::parse(&rkey).unwrap(), &record, Swap::Absent)
            .await
            .unwrap();
        live.push(json!({"collection": INFRA, "rkey": rkey, "createdAt": "2026-12-03T00:00:00.000Z", "addedAt": "2026-12-03T00:00:00.000Z", "writer": "desktop"}));
    }
    let index = json!({"$type": INFRA, "createdAt": "2026-12-03T00:00:00.000Z", "index": {"live": live, "updatedAt": "2026-12-03T00:00:00.000Z"}});
    repo.put(INFRA, &Rkey::parse("self").unwrap(), &index, Swap::Absent)
        .await
        .unwrap();
    (tally.attempted(), started.elapsed())
}

/// The controller publishing 256 new deployments, then a resync with nothing changed.
async fn controller(agent: Agent, resolver: Resolver) -> ((Calls, Duration), (Calls, Duration)) {
    let repo = Arc::new(Counted::new(PdsRepo::new(agent, resolver)));
    let tally = repo.tally();
    let data = tempfile::tempdir().unwrap();
    let store = Arc::new(Store::open(data.path().join("objects.sqlite")).unwrap());
    let config = EngineConfig {
        controllers: ControllerConfig {
            resync_period: Duration::from_secs(3600),
            ..Default::default()
        },
        remote_max_age: Duration::from_secs(1),
        ..Default::default()
    };
    let engine = Engine::start(
        Arc::clone(&store),
        Arc::clone(&repo),
        Arc::new(Unconnected),
        Arc::new(SystemClock),
        config,
    );
    let started = Instant::now();
    let names: Vec<Name> = (0..DEPLOYMENTS)
        .map(|n| Name::parse(&format!("d{n:03}")).unwrap())
        .collect();
    for name in &names {
        let object = Object {
            metadata: Metadata::new(name.clone(), random_uid().unwrap(), SystemClock.now()),
            spec: InfraSpec {
                description: Some(name.to_string()),
                ..Default::default()
            },
            status: InfraStatus::default(),
        };
        store.create::<InfraSpec>(&object).unwrap();
    }
    wait_until_published(&store, &repo).await;
    let publish = (tally.attempted(), started.elapsed());

    tokio::time::sleep(Duration::from_secs(2)).await;
    let before = tally.attempted();
    let started = Instant::now();
    for name in &names {
        engine.schedule(&ObjectKey::new(Kind::Infra, name.clone()));
    }
    while names.iter().any(|name| {
        engine
            .status(Kind::Infra, name)
            .is_some_and(|status| status.running || status.next_run.is_some())
    }) {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let resync = (tally.attempted().since(before), started.elapsed());
    engine.shutdown(Duration::from_secs(5)).await;
    (publish, resync)
}

async fn wait_until_published(store: &Store, repo: &Counted<PdsRepo>) {
    loop {
        let bound = store
            .list::<InfraSpec>()
            .unwrap()
            .iter()
            .filter(|object| object.status.record.is_some())
            .count();
        let index = repo
            .inner()
            .get(&RecordUri::parse(&format!("at://{}/{INFRA}/self", repo.owner())).unwrap())
            .await
            .ok()
            .flatten()
            .and_then(|record| record.value["index"]["live"].as_array().map(Vec::len))
            .unwrap_or(0);
        if bound == DEPLOYMENTS && index == DEPLOYMENTS {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
