//! `subscribeClusters` through the client's feed: the snapshot, then changes, then a
//! reconnect after the gateway went away, with a fresh snapshot; and against hostile gateways:
//! a flooding frame, a snapshot that never completes (frames forever, a trickle, silence), too
//! many clusters, texts with controls and bidi overrides.

use std::time::Duration;

use swdesk_gateway::{FeedEvent, FeedLimits, Gateway};
use swdesk_lexicon::com::publicdomainrelay::temp::cluster::defs::Phase;
use swdesk_lexicon::com::publicdomainrelay::temp::cluster::subscribe_clusters::Message;

use swdesk_sandbox_gateway::HostileStream;

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

/// A feed from a gateway hostile as `mode` says, for a fresh owner, with `limits`; the world
/// lives as long as the feed is read.
async fn hostile_feed(
    mode: HostileStream,
    limits: FeedLimits,
) -> (World, swdesk_gateway::ClusterFeed) {
    let world = World::start_with(|config| config.hostile_stream = Some(mode)).await;
    let owner = world.owner("hostile").await;
    let feed = owner
        .client
        .with_feed_limits(limits)
        .subscribe_clusters(None);
    (world, feed)
}

/// The reasons of the first `attempts` disconnections of a hostile feed, each checked to wait
/// before retrying, longer after the first (the backoff is never reset by a connection that
/// passed a bound, so a breach is never retried in a hot loop).
async fn breaches(mode: HostileStream, limits: FeedLimits, attempts: usize) -> Vec<String> {
    let (_world, mut feed) = hostile_feed(mode, limits).await;
    let mut reasons = Vec::new();
    let mut floor = Duration::from_millis(100);
    while reasons.len() < attempts {
        match next(&mut feed).await {
            FeedEvent::Disconnected { reason, retry_in } => {
                assert!(retry_in >= floor, "{retry_in:?} after {reason}");
                floor = swdesk_gateway::subscription::INITIAL_BACKOFF;
                reasons.push(reason);
            }
            other => panic!("nothing is delivered past a bound: {other:?}"),
        }
    }
    reasons
}

/// Every reason holds `part` and ends with `end`.
fn assert_reasons(reasons: &[String], part: &str, end: &str) {
    for reason in reasons {
        assert!(
            reason.contains(part) && reason.ends_with(end),
            "the reason names the bound: {reason}"
        );
    }
}

const FLOOD: HostileStream = HostileStream::Endless {
    every: Duration::ZERO,
};

/// A snapshot that never completes, as fast as the socket takes it: closed at 20,000 frames
/// (the default), never delivered, retried on the backoff.
#[tokio::test]
async fn an_endless_snapshot_is_closed_at_its_frame_cap_and_retried_on_the_backoff() {
    let reasons = breaches(FLOOD, FeedLimits::default(), 2).await;
    let cap = "the feed was closed: the gateway's snapshot passed 20000 frames without completing";
    assert_reasons(&reasons, cap, cap);
}

/// The same endless snapshot against a byte cap of 64 KiB: the bytes are named.
#[tokio::test]
async fn an_endless_snapshot_is_closed_at_its_byte_cap() {
    let limits = FeedLimits {
        snapshot_bytes: 64 << 10,
        ..FeedLimits::default()
    };
    let reasons = breaches(FLOOD, limits, 1).await;
    let cap = "the gateway's snapshot passed 65536 bytes (";
    assert_reasons(&reasons, cap, " sent) without completing");
}

/// A snapshot trickling one frame every 50 ms (never silent, never too big) is closed at its
/// deadline, here shortened to 1 s through the client's limits.
#[tokio::test]
async fn a_trickling_snapshot_is_closed_at_its_deadline() {
    let trickle = HostileStream::Endless {
        every: Duration::from_millis(50),
    };
    let limits = FeedLimits {
        snapshot_deadline: Duration::from_secs(1),
        ..FeedLimits::default()
    };
    let reasons = breaches(trickle, limits, 2).await;
    let late = "the gateway's snapshot did not complete within 1 s (";
    assert_reasons(&reasons, late, " frames sent)");
}

/// A gateway that accepts the socket and then says nothing, not even to a ping, is closed
/// after the idle timeout (here 0.5 s with a ping every 0.1 s).
#[tokio::test]
async fn a_silent_gateway_is_closed_after_the_idle_timeout() {
    let limits = FeedLimits {
        ping_every: Duration::from_millis(100),
        idle_timeout: Duration::from_millis(500),
        ..FeedLimits::default()
    };
    let reasons = breaches(HostileStream::Silent, limits, 2).await;
    let silent = "the gateway was silent for 0.5 s (no frame, no answer to a ping)";
    assert_reasons(&reasons, silent, silent);
}

/// A snapshot of 65 clusters passes the cap of 64 (the default): closed, naming the cap.
#[tokio::test]
async fn a_snapshot_of_too_many_clusters_is_closed_at_the_cluster_cap() {
    let crowd = HostileStream::Clusters(65);
    let reasons = breaches(crowd, FeedLimits::default(), 2).await;
    let cap = "the feed was closed: the gateway named more than 64 clusters";
    assert_reasons(&reasons, cap, cap);
}

fn strings(value: &serde_json::Value, out: &mut Vec<String>) {
    match value {
        serde_json::Value::String(text) => out.push(text.clone()),
        serde_json::Value::Array(items) => items.iter().for_each(|item| strings(item, out)),
        serde_json::Value::Object(object) => {
            for (key, item) in object {
                out.push(key.clone());
                strings(item, out);
            }
        }
        _ => {}
    }
}

/// Texts with controls and bidi overrides reach the consumer cleaned (one line, none of
/// them, cut); a cluster whose name and a member whose DID are no identifiers are refused.
#[tokio::test]
async fn a_snapshots_texts_arrive_cleaned_and_bad_identifiers_are_refused() {
    let (_world, mut feed) = hostile_feed(HostileStream::Texts, FeedLimits::default()).await;
    let FeedEvent::Snapshot(snapshot) = next(&mut feed).await else {
        panic!("the snapshot completes")
    };
    let names: Vec<String> = clusters(&snapshot).into_iter().map(|c| c.0).collect();
    assert_eq!(
        names,
        ["text"],
        "the cluster named with an override is refused"
    );
    let dids: Vec<&str> = snapshot
        .iter()
        .filter_map(|m| match m {
            Message::Member(member) => Some(member.did.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        dids,
        ["did:plc:abcd"],
        "the DID with an override is refused"
    );
    let mut texts = Vec::new();
    for message in &snapshot {
        strings(&serde_json::to_value(message).unwrap(), &mut texts);
    }
    assert!(texts.iter().any(|text| text == "Ready    <b>"), "{texts:?}");
    for text in &texts {
        let dirty = text.chars().any(|c| {
            c.is_control()
                || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{2028}')
        });
        assert!(!dirty, "{text:?}");
        assert!(text.len() <= 2048, "cut to its limit: {} bytes", text.len());
    }
}
