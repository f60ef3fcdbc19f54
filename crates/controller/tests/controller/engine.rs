//! The engine running on its own: the store's watch drives every controller, no hand-driving.

use std::sync::Arc;
use std::time::Duration;

use swdesk_auction::market::Unconnected;
use swdesk_controller::{Engine, EngineConfig};
use swdesk_core::index_health::IndexHealth;
use swdesk_core::infra::{InfraSpec, InfraStatus};
use swdesk_kernel::name::Name;
use swdesk_kernel::object::Object;

use crate::support::{OWNER, World, index_listing_others, web_takes_the_room};

const INFRA: &str = "computer.socialweb.infra";

/// Waits (on the test's paused clock, up to 20 s of it) until `check` holds.
async fn eventually(what: &str, check: impl Fn() -> bool) {
    swdesk_testkit::eventually(what, Duration::from_secs(20), async || {
        check().then_some(())
    })
    .await;
}

/// The engine over the world's store and repo, with no market.
fn start(world: &World, config: EngineConfig) -> Engine {
    Engine::start(
        world.store.clone(),
        world.repo.clone(),
        Arc::new(Unconnected),
        world.clock.clone(),
        config,
    )
}

/// Declares the Infra `name` in the store.
fn declare(world: &World, name: &str, description: &str) {
    let object = Object {
        metadata: world.metadata(name),
        spec: InfraSpec {
            description: Some(description.into()),
            ..Default::default()
        },
        status: InfraStatus::default(),
    };
    world.store.create::<InfraSpec>(&object).unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_deployment_created_in_the_store_is_published_and_a_deletion_ends_it() {
    let world = World::new();
    let engine = start(&world, EngineConfig::default());
    declare(&world, "web", "hello");
    eventually("the record is published", || {
        world.repo.value(OWNER, INFRA, "web").is_some()
    })
    .await;
    eventually("the index lists it", || {
        world
            .repo
            .value(OWNER, INFRA, "self")
            .is_some_and(|index| index["index"]["live"][0]["rkey"] == "web")
    })
    .await;

    world
        .store
        .delete::<InfraSpec>(&Name::parse("web").unwrap(), world.clock_now())
        .unwrap();
    eventually("the object goes after its final write", || {
        world
            .store
            .get::<InfraSpec>(&Name::parse("web").unwrap())
            .unwrap()
            .is_none()
    })
    .await;
    let ended = world.repo.value(OWNER, INFRA, "web").unwrap();
    assert_eq!(ended["status"]["phase"], "ended");
    engine.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test(start_paused = true)]
async fn an_edit_made_elsewhere_is_pulled_by_the_poll_long_before_the_resync() {
    let world = World::new();
    let config = EngineConfig {
        remote_poll: Duration::from_millis(300),
        remote_max_age: Duration::from_secs(3600),
        ..EngineConfig::default()
    };
    let engine = start(&world, config);
    declare(&world, "web", "here");
    eventually("the record is published", || {
        world.repo.value(OWNER, INFRA, "web").is_some()
    })
    .await;
    let mut edited = world.repo.value(OWNER, INFRA, "web").unwrap();
    edited["description"] = "edited on another device".into();
    world.repo.write_directly(OWNER, INFRA, "web", edited);
    eventually("the edit is pulled without waiting for the resync", || {
        world
            .store
            .get::<InfraSpec>(&Name::parse("web").unwrap())
            .unwrap()
            .is_some_and(|object| {
                object.spec.description.as_deref() == Some("edited on another device")
            })
    })
    .await;
    engine.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test(start_paused = true)]
async fn an_index_another_client_wrote_in_a_form_this_version_cannot_read_is_never_written_over() {
    let world = World::new();
    let newer = serde_json::json!({
        "$type": INFRA,
        "createdAt": "2026-12-01T00:00:00.000Z",
        "index": {
            "updatedAt": "2026-12-01T00:00:00.000Z",
            "live": {"shards": ["self-1", "self-2"]},
        },
    });
    world
        .repo
        .write_directly(OWNER, INFRA, "self", newer.clone());
    let engine = start(&world, EngineConfig::default());
    let mut health = engine.index_health();
    let why = publish_web_and_read_index_problem(&world, &mut health).await;
    assert!(
        why.contains("does not validate") && why.contains("newer or broken client"),
        "{why}"
    );
    assert_eq!(
        world.repo.value(OWNER, INFRA, "self"),
        Some(newer),
        "the other client's index is untouched"
    );

    let fixed = serde_json::json!({
        "$type": INFRA,
        "createdAt": "2026-12-01T00:00:00.000Z",
        "index": {"updatedAt": "2026-12-01T00:00:00.000Z", "live": [], "shards": 2},
    });
    world.repo.write_directly(OWNER, INFRA, "self", fixed);
    declare(&world, "api", "second");
    eventually("the index is written again once it reads", || {
        world.repo.value(OWNER, INFRA, "self").is_some_and(|index| {
            index["index"]["live"]
                .as_array()
                .is_some_and(|live| live.iter().any(|entry| entry["rkey"] == "api"))
        })
    })
    .await;
    let index = world.repo.value(OWNER, INFRA, "self").unwrap();
    assert_eq!(index["index"]["shards"], 2, "its unknown fields are kept");
    assert_eq!(health.borrow().problem, None);
    assert!(
        health.borrow().live.is_some_and(|live| live >= 1),
        "the count of what it lists now"
    );
    engine.shutdown(Duration::from_secs(2)).await;
}

/// An index already listing the most live deployments it may: a new deployment is published
/// all the same, and the index's health tells the owner why it is not listed and what to do.
#[tokio::test(start_paused = true)]
async fn a_full_index_says_why_a_new_deployment_is_not_listed() {
    let world = World::new();
    let full = index_listing_others(swdesk_core::index::MAX_LIVE);
    world.repo.write_directly(OWNER, INFRA, "self", full);
    let engine = start(&world, EngineConfig::default());
    let mut health = engine.index_health();
    tokio::time::timeout(
        Duration::from_secs(20),
        health.wait_for(|health| health.live == Some(256)),
    )
    .await
    .expect("the count is read at start, before any deployment changes")
    .unwrap();
    let why = publish_web_and_read_index_problem(&world, &mut health).await;
    assert!(
        why.contains("already lists 256 live deployments")
            && why.contains("1 new deployment(s)")
            && why.contains("End or release"),
        "{why}"
    );
    let now = health.borrow().clone();
    assert_eq!(now.live, Some(256));
    assert_eq!(
        now.waiting_for_room,
        vec![format!("{INFRA}/web")],
        "the deployment that waits is named, for its row"
    );

    // The other client takes one of its own out: the waiting deployment gets the room.
    let mut fuller = world.repo.value(OWNER, INFRA, "self").unwrap();
    fuller["index"]["live"].as_array_mut().unwrap().pop();
    world.repo.write_directly(OWNER, INFRA, "self", fuller);
    let live = web_takes_the_room(&world, &mut health, Duration::from_secs(120)).await;
    assert_eq!(live.len(), 256);
    assert_eq!(health.borrow().problem, None);
    engine.shutdown(Duration::from_secs(2)).await;
}

/// Declares `web`, waits until its record is published (the index's trouble never holds a
/// deployment back), then until the index's health names a problem, and returns it.
async fn publish_web_and_read_index_problem(
    world: &World,
    health: &mut tokio::sync::watch::Receiver<IndexHealth>,
) -> String {
    declare(world, "web", "hello");
    eventually("the deployment is published all the same", || {
        world.repo.value(OWNER, INFRA, "web").is_some()
    })
    .await;
    tokio::time::timeout(
        Duration::from_secs(20),
        health.wait_for(|health| health.problem.is_some()),
    )
    .await
    .expect("the index's health names its problem")
    .unwrap();
    health.borrow().problem.clone().unwrap()
}
