//! The engine fed by a live feed of the owner's repo (the channel the follower of
//! `swdesk-atproto` sends on, fed by hand here): a verified commit's op is pulled with every
//! poll and resync an hour away, applied once however often it is replayed, its cursor kept in
//! the store; while live a whole idle hour lists nothing; a listing the feed asks for is made;
//! an edit another device lands while our own write of the record is in flight is pulled; an
//! op of our own earlier write arriving after a later one undoes nothing; a deployment waiting
//! for room in a full index asks the repo nothing while it waits, and takes the room another
//! client makes as soon as its commit arrives.

use std::sync::Arc;
use std::time::Duration;

use swdesk_auction::market::Unconnected;
use swdesk_controller::runtime::ControllerConfig;
use swdesk_controller::{Engine, EngineConfig, LiveFeed};
use swdesk_core::infra::{InfraSpec, InfraStatus};
use swdesk_kernel::name::Name;
use swdesk_kernel::object::Object;
use swdesk_kernel::repo::live::{FeedCursor, LiveState, OpRecord, RepoFeed, RepoOp};
use tokio::sync::mpsc;

use crate::support::{OWNER, World, index_listing_others, web_takes_the_room};

const INFRA: &str = "computer.socialweb.infra";
const HOUR: Duration = Duration::from_secs(3600);

async fn eventually(what: &str, check: impl Fn() -> bool) {
    swdesk_testkit::eventually(what, Duration::from_secs(20), async || {
        check().then_some(())
    })
    .await;
}

/// Nothing periodic within an hour.
fn no_polls() -> EngineConfig {
    EngineConfig {
        controllers: ControllerConfig {
            resync_period: HOUR * 2,
            ..Default::default()
        },
        remote_max_age: Duration::from_secs(60),
        remote_poll: HOUR * 2,
        live_poll: HOUR * 2,
    }
}

fn start(world: &World) -> (Engine, mpsc::Sender<RepoFeed>) {
    let (sender, events) = mpsc::channel(16);
    let feed = LiveFeed {
        events,
        stream: "owner".to_owned(),
    };
    let engine = Engine::start_following(
        world.store.clone(),
        world.repo.clone(),
        Arc::new(Unconnected),
        world.clock.clone(),
        no_polls(),
        Some(feed),
    );
    (engine, sender)
}

fn web(world: &World) -> swdesk_store::ObjectOf<InfraSpec> {
    world
        .store
        .get::<InfraSpec>(&Name::parse("web").unwrap())
        .unwrap()
        .unwrap()
}

/// A commit of one record of the infra collection, `rkey` now `value` (at `cid`).
fn commit_of(rkey: &str, cid: String, value: serde_json::Value, cursor: FeedCursor) -> RepoFeed {
    RepoFeed::Commit {
        ops: vec![RepoOp {
            collection: INFRA.into(),
            rkey: rkey.into(),
            record: Some(OpRecord { cid, value }),
        }],
        cursor,
    }
}

async fn published(world: &World, feed: &mpsc::Sender<RepoFeed>) {
    let object = Object {
        metadata: world.metadata("web"),
        spec: InfraSpec {
            description: Some("here".into()),
            ..Default::default()
        },
        status: InfraStatus::default(),
    };
    world.store.create::<InfraSpec>(&object).unwrap();
    feed.send(RepoFeed::State(LiveState::Live)).await.unwrap();
    eventually("the record is published", || {
        world.repo.value(OWNER, INFRA, "web").is_some()
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_commit_on_the_feed_is_pulled_at_once_applied_once_and_its_cursor_kept() {
    let world = World::new();
    let (engine, feed) = start(&world);
    published(&world, &feed).await;
    assert_eq!(*engine.live_state().borrow(), LiveState::Live);
    // Settled first: the publish and the reconciles after it are done before the other device
    // edits. (An edit landing while our own write is in flight is the case of the tests at the
    // end of this file.)
    tokio::time::sleep(Duration::from_secs(60)).await;
    let mut edited = world.repo.value(OWNER, INFRA, "web").unwrap();
    edited["description"] = "edited on another device".into();
    let cid = world
        .repo
        .write_directly(OWNER, INFRA, "web", edited.clone());
    let cursor = FeedCursor {
        seq: 7,
        rev: world.repo.rev(),
    };
    let commit = commit_of("web", cid, edited, cursor.clone());
    feed.send(commit.clone()).await.unwrap();
    eventually("the edit is pulled", || {
        web(&world).spec.description.as_deref() == Some("edited on another device")
    })
    .await;
    eventually("the cursor is kept", || {
        world.store.cursor("owner").unwrap() == Some(cursor.clone())
    })
    .await;
    // Settled: the pull and what follows it (the status, the record agreeing) are done.
    tokio::time::sleep(Duration::from_secs(60)).await;
    let pulled = web(&world).metadata.resource_version;
    let calls = world.repo.calls();
    let mut steps = engine.events();
    feed.send(commit).await.unwrap();
    tokio::time::sleep(HOUR).await;
    let reconciles: usize = steps
        .iter_mut()
        .map(|steps| std::iter::from_fn(|| steps.try_recv().ok()).count())
        .sum();
    assert_eq!(reconciles, 0, "a replayed commit schedules nothing");
    assert_eq!(
        web(&world).metadata.resource_version,
        pulled,
        "a replay changes nothing"
    );
    assert_eq!(
        world.repo.calls().since(calls).total(),
        0,
        "an idle hour while live asks the repo nothing"
    );
    engine.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test(start_paused = true)]
async fn a_listing_the_feed_asks_for_pulls_what_no_commit_carried() {
    let world = World::new();
    let (engine, feed) = start(&world);
    published(&world, &feed).await;
    // Settled first, as above.
    tokio::time::sleep(Duration::from_secs(60)).await;
    let mut edited = world.repo.value(OWNER, INFRA, "web").unwrap();
    edited["description"] = "changed while the stream skipped".into();
    world.repo.write_directly(OWNER, INFRA, "web", edited);
    let lists = world.repo.calls().lists;
    let cursor = FeedCursor { seq: 9, rev: None };
    let why = "the stream skipped from 7 to 9".to_owned();
    feed.send(RepoFeed::Resync {
        why,
        cursor: Some(cursor.clone()),
    })
    .await
    .unwrap();
    eventually("the edit is pulled", || {
        web(&world).spec.description.as_deref() == Some("changed while the stream skipped")
    })
    .await;
    assert!(
        world.repo.calls().lists > lists,
        "the collections were listed"
    );
    assert_eq!(world.store.cursor("owner").unwrap(), Some(cursor));
    let why = "the server closed the stream".to_owned();
    feed.send(RepoFeed::State(LiveState::Polling { why: why.clone() }))
        .await
        .unwrap();
    eventually("the state says polling", || {
        *engine.live_state().borrow() == LiveState::Polling { why: why.clone() }
    })
    .await;
    engine.shutdown(Duration::from_secs(5)).await;
}

/// The commit another device makes to `web` while one of our own writes of it is in flight:
/// written to the repo and sent on the feed from inside our `put`, after our record is stored
/// and before the put answers.
fn edited_during_next_put(world: &World, feed: &mpsc::Sender<RepoFeed>, description: &str) {
    let repo = Arc::clone(&world.repo);
    let feed = feed.clone();
    let description = description.to_owned();
    world.repo.during_next_put(move || {
        let mut edited = repo
            .value(OWNER, INFRA, "web")
            .expect("our write is stored");
        edited["description"] = description.into();
        let cid = repo.write_directly(OWNER, INFRA, "web", edited.clone());
        let commit = commit_of(
            "web",
            cid,
            edited,
            FeedCursor {
                seq: 11,
                rev: repo.rev(),
            },
        );
        feed.try_send(commit).expect("the feed has room");
    });
}

#[tokio::test(start_paused = true)]
async fn an_edit_elsewhere_landing_while_our_own_write_is_in_flight_is_pulled_not_overwritten() {
    let world = World::new();
    let (engine, feed) = start(&world);
    published(&world, &feed).await;
    tokio::time::sleep(Duration::from_secs(60)).await;
    edited_during_next_put(&world, &feed, "edited on another device meanwhile");
    let mut local = web(&world);
    local.spec.description = Some("edited here".into());
    world.store.replace::<InfraSpec>(&local).unwrap();
    eventually("the other device's later edit is pulled", || {
        web(&world).spec.description.as_deref() == Some("edited on another device meanwhile")
    })
    .await;
    // Settled: nothing of ours went over the later edit.
    tokio::time::sleep(Duration::from_secs(60)).await;
    let record = world.repo.value(OWNER, INFRA, "web").unwrap();
    assert_eq!(record["description"], "edited on another device meanwhile");
    assert_eq!(
        web(&world).spec.description.as_deref(),
        Some("edited on another device meanwhile")
    );
    engine.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test(start_paused = true)]
async fn an_edit_elsewhere_landing_while_our_first_publish_is_in_flight_is_pulled() {
    let world = World::new();
    let (engine, feed) = start(&world);
    edited_during_next_put(&world, &feed, "edited on another device at once");
    published(&world, &feed).await;
    eventually("the other device's edit is pulled", || {
        web(&world).spec.description.as_deref() == Some("edited on another device at once")
    })
    .await;
    tokio::time::sleep(Duration::from_secs(60)).await;
    let record = world.repo.value(OWNER, INFRA, "web").unwrap();
    assert_eq!(record["description"], "edited on another device at once");
    engine.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test(start_paused = true)]
async fn an_op_of_our_own_earlier_write_arriving_late_undoes_nothing() {
    let world = World::new();
    let (engine, feed) = start(&world);
    published(&world, &feed).await;
    tokio::time::sleep(Duration::from_secs(60)).await;
    let first = world.repo.value(OWNER, INFRA, "web").unwrap();
    let first_rev = world.repo.rev();
    let mut local = web(&world);
    local.spec.description = Some("edited here".into());
    world.store.replace::<InfraSpec>(&local).unwrap();
    eventually("our edit is written", || {
        world.repo.value(OWNER, INFRA, "web").unwrap()["description"] == "edited here"
    })
    .await;
    tokio::time::sleep(Duration::from_secs(60)).await;
    // The stream lags behind our answers: the commit of our first write comes only now.
    let cid = swdesk_lexicon::cid::record_cid(&first).unwrap().to_string();
    let late = commit_of(
        "web",
        cid,
        first,
        FeedCursor {
            seq: 12,
            rev: first_rev,
        },
    );
    feed.send(late).await.unwrap();
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert_eq!(web(&world).spec.description.as_deref(), Some("edited here"));
    let record = world.repo.value(OWNER, INFRA, "web").unwrap();
    assert_eq!(record["description"], "edited here");
    let sync = web(&world).status.sync.expect("a sync state");
    assert!(sync.state.is_synced(), "{sync:?}");
    engine.shutdown(Duration::from_secs(5)).await;
}

/// A deployment waits for room in an index another client keeps full: while live, the wait
/// asks the repo nothing (the stream keeps the view's index current), and the room the other
/// client makes is taken as soon as its commit arrives on the feed.
#[tokio::test(start_paused = true)]
async fn waiting_for_room_asks_nothing_while_live_and_takes_the_room_when_it_is_made() {
    let world = World::new();
    let full = index_listing_others(swdesk_core::index::MAX_LIVE);
    world
        .repo
        .write_directly(OWNER, INFRA, "self", full.clone());
    let (engine, feed) = start(&world);
    published(&world, &feed).await;
    let mut health = engine.index_health();
    tokio::time::timeout(
        Duration::from_secs(60),
        health.wait_for(|health| !health.waiting_for_room.is_empty()),
    )
    .await
    .expect("web waits for room")
    .unwrap();
    tokio::time::sleep(Duration::from_secs(60)).await;
    let calls = world.repo.calls();
    tokio::time::sleep(HOUR).await;
    assert_eq!(
        world.repo.calls().since(calls).total(),
        0,
        "an hour waiting for room while live asks the repo nothing"
    );

    let mut fewer = full;
    fewer["index"]["live"].as_array_mut().unwrap().pop();
    let cid = world
        .repo
        .write_directly(OWNER, INFRA, "self", fewer.clone());
    let commit = commit_of(
        "self",
        cid,
        fewer,
        FeedCursor {
            seq: 9,
            rev: world.repo.rev(),
        },
    );
    feed.send(commit).await.unwrap();
    web_takes_the_room(&world, &mut health, Duration::from_secs(60)).await;
    engine.shutdown(Duration::from_secs(5)).await;
}
