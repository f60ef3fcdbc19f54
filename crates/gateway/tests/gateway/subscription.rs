//! `subscribeClusters` through the client's feed: the snapshot, then changes, then a
//! reconnect after the gateway went away, with a fresh snapshot.

use swdesk_gateway::{FeedEvent, Gateway};
use swdesk_lexicon::com::publicdomainrelay::temp::cluster::defs::Phase;
use swdesk_lexicon::com::publicdomainrelay::temp::cluster::subscribe_clusters::Message;

use crate::support::World;

fn clusters(messages: &[Message]) -> Vec<(String, Phase)> {
    messages
        .iter()
        .filter_map(|m| match m {
            Message::Cluster(c) => Some((c.name.clone(), c.phase.clone())),
            _ => None,
        })
        .collect()
}

async fn next(feed: &mut swdesk_gateway::ClusterFeed) -> FeedEvent {
    tokio::time::timeout(std::time::Duration::from_secs(20), feed.next())
        .await
        .expect("the feed answers in time")
        .expect("the feed goes on")
}

#[tokio::test]
async fn the_feed_sends_a_snapshot_then_changes_and_reconnects_with_a_fresh_snapshot() {
    let world = World::start().await;
    let owner = world.owner("feed").await;
    owner.client.create_cluster("before").await.unwrap();

    let mut feed = owner.client.subscribe_clusters(None);
    let FeedEvent::Snapshot(snapshot) = next(&mut feed).await else {
        panic!("a snapshot first")
    };
    assert_eq!(clusters(&snapshot).len(), 1);
    assert_eq!(clusters(&snapshot)[0].0, "before");
    assert!(
        snapshot
            .iter()
            .any(|m| matches!(m, Message::Member(member) if member.did == owner.account.did))
    );
    assert!(snapshot.iter().any(|m| matches!(m, Message::NodeClaim(_))));

    owner.client.create_cluster("after").await.unwrap();
    let mut seen = Vec::new();
    while !seen.contains(&("after".to_owned(), Phase::Ready)) {
        if let FeedEvent::Change(message) = next(&mut feed).await {
            seen.extend(clusters(&[message]));
        }
    }
    let first_after = seen.iter().position(|(name, _)| name == "after").unwrap();
    assert_eq!(
        seen[first_after].1,
        Phase::Initializing,
        "a change is sent for each phase"
    );

    let _world = world.restart_gateway().await;
    let reconnected = async {
        let mut disconnected = false;
        loop {
            match next(&mut feed).await {
                FeedEvent::Disconnected { .. } => disconnected = true,
                FeedEvent::Snapshot(fresh) => return (disconnected, fresh),
                FeedEvent::Change(_) if !disconnected => {}
                other => panic!("unexpected {other:?}"),
            }
        }
    };
    let (disconnected, fresh) = reconnected.await;
    assert!(disconnected, "the break is reported");
    assert!(
        clusters(&fresh).is_empty(),
        "the fresh snapshot is the new gateway's state: {fresh:?}"
    );

    owner.client.create_cluster("fresh").await.unwrap();
    let FeedEvent::Change(Message::Cluster(change)) = next(&mut feed).await else {
        panic!("a change")
    };
    assert_eq!(change.name, "fresh");
}

/// A hostile gateway opens every stream with a 50 MiB frame: the client refuses it by its
/// header (at most 4 MiB a frame), says why, never hands it on as clusters, and keeps
/// reconnecting on its backoff rather than failing or retrying in a loop.
#[tokio::test]
async fn a_fifty_mebibyte_frame_is_refused_by_its_size_and_the_feed_keeps_trying() {
    let world = World::start_with(|config| config.hostile_frame_bytes = Some(50 << 20)).await;
    let owner = world.owner("flood").await;
    let mut feed = owner.client.subscribe_clusters(None);
    for attempt in 0..2 {
        match next(&mut feed).await {
            FeedEvent::Disconnected { reason, retry_in } => {
                assert!(
                    reason.ends_with(
                        "the gateway sent a frame of 52428800 bytes; at most 4194304 are read"
                    ),
                    "the reason names the size: {reason}"
                );
                assert!(
                    retry_in >= std::time::Duration::from_millis(100),
                    "attempt {attempt} waits before reconnecting: {retry_in:?}"
                );
            }
            other => panic!("the oversized frame is never delivered: {other:?}"),
        }
    }
}
