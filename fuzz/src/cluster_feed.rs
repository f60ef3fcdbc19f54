//! `cluster_feed`: a hostile gateway's `subscribeClusters` stream, frame after frame, through the
//! feed's state machine `swdesk_gateway::subscription::Reading` (each frame counted, decoded,
//! cleaned and admitted; the snapshot handed over whole at `SnapshotComplete`, changes after
//! it) under small [`LIMITS`]. The input is the frames, each two bytes of length (LE) then its
//! bytes.
//!
//! Invariants:
//! - at most one snapshot, and only changes after it; nothing is handed over before it;
//! - the snapshot ends exactly within the caps: a breach of its frames or bytes comes exactly at
//!   the frame that passes the count, never sooner, never later;
//! - what is kept, replayed in order, never names more than the caps of clusters, members and
//!   nodes of one cluster;
//! - everything kept is clean: no text holds a control, line separator or bidi character,
//!   cluster names are DNS labels, member DIDs are DIDs, and no frame of an unknown kind is
//!   kept;
//! - a frame that ends the connection is the last one read.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;
use swdesk_gateway::FeedEvent;
use swdesk_gateway::subscription::{Breach, FeedLimits, Reading, Stop};
use swdesk_lexicon::com::publicdomainrelay::temp::cluster::subscribe_clusters::Message;
use swdesk_lexicon::syntax;

/// The feed's limits here: small, so a fuzzer's stream reaches them.
pub const LIMITS: FeedLimits = FeedLimits {
    snapshot_frames: 12,
    snapshot_bytes: 3000,
    snapshot_deadline: std::time::Duration::from_secs(60),
    ping_every: std::time::Duration::from_secs(20),
    idle_timeout: std::time::Duration::from_secs(60),
    clusters: 3,
    members_per_cluster: 2,
    nodes_per_cluster: 2,
};

pub fn check(data: &[u8]) {
    let mut reading = Reading::new(LIMITS);
    let mut kept = Kept::default();
    let (mut frames, mut bytes, mut delivered) = (0_usize, 0_usize, false);
    for frame in frames_of(data) {
        if !delivered {
            frames += 1;
            bytes += frame.len();
        }
        let passes =
            !delivered && (frames > LIMITS.snapshot_frames || bytes > LIMITS.snapshot_bytes);
        match reading.take(frame) {
            Ok(event) => {
                assert!(
                    !passes,
                    "frame {frames} ({bytes} bytes) passed the snapshot's caps"
                );
                match event {
                    None => {}
                    Some(FeedEvent::Snapshot(messages)) => {
                        assert!(!delivered, "a second snapshot");
                        assert!(messages.len() < LIMITS.snapshot_frames);
                        delivered = true;
                        messages.iter().for_each(|message| kept.take(message));
                    }
                    Some(FeedEvent::Change(message)) => {
                        assert!(delivered, "a change before the snapshot");
                        kept.take(&message);
                    }
                    Some(other) => panic!("a frame made {other:?}"),
                }
            }
            Err(Stop::Breach(Breach::SnapshotFrames { .. } | Breach::SnapshotBytes { .. })) => {
                assert!(
                    passes,
                    "a snapshot breach at frame {frames} ({bytes} bytes)"
                );
                return;
            }
            Err(Stop::Breach(other)) => {
                assert!(!passes, "{other} instead of the snapshot's breach");
                return;
            }
            Err(Stop::Error(_)) => {
                assert!(!passes, "an error instead of the snapshot's breach");
                return;
            }
        }
    }
}

/// The frames of the input: two bytes of length (LE), then that many bytes (the last one cut).
fn frames_of(data: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = data;
    std::iter::from_fn(move || {
        let (head, tail) = rest.split_at_checked(2)?;
        let length = usize::from(u16::from_le_bytes([head[0], head[1]]));
        let (frame, after) = tail.split_at(length.min(tail.len()));
        rest = after;
        Some(frame)
    })
}

/// What the consumer was handed, replayed the way the tally counts it.
#[derive(Default)]
struct Kept {
    clusters: BTreeMap<String, (BTreeSet<String>, BTreeSet<String>)>,
}

impl Kept {
    fn take(&mut self, message: &Message) {
        clean(message);
        match message {
            Message::Cluster(cluster) if cluster.deleted == Some(true) => {
                self.clusters.remove(&cluster.name);
            }
            Message::Cluster(cluster) => {
                self.clusters.entry(cluster.name.clone()).or_default();
                assert!(
                    self.clusters.len() <= LIMITS.clusters,
                    "more clusters kept than the cap"
                );
            }
            Message::Member(member) => {
                if let Some((members, _)) = self.clusters.get_mut(&member.cluster) {
                    name(
                        members,
                        &member.did,
                        member.deleted,
                        LIMITS.members_per_cluster,
                    );
                }
            }
            Message::NodeClaim(node) => {
                if let Some((_, nodes)) = self.clusters.get_mut(&node.cluster) {
                    name(nodes, &node.name, node.deleted, LIMITS.nodes_per_cluster);
                }
            }
            Message::Info(_) => {}
            Message::Other(_) => panic!("a frame of an unknown kind was kept"),
        }
    }
}

fn name(set: &mut BTreeSet<String>, key: &str, deleted: Option<bool>, cap: usize) {
    if deleted == Some(true) {
        set.remove(key);
    } else {
        set.insert(key.to_owned());
        assert!(set.len() <= cap, "more than {cap} kept in one cluster");
    }
}

/// A kept message's texts are clean and its identifiers well-formed.
fn clean(message: &Message) {
    let (cluster, did) = match message {
        Message::Cluster(cluster) => (Some(&cluster.name), None),
        Message::Member(member) => (Some(&member.cluster), Some(&member.did)),
        Message::NodeClaim(node) => (Some(&node.cluster), None),
        Message::Info(_) | Message::Other(_) => (None, None),
    };
    if let Some(cluster) = cluster {
        let label = !cluster.is_empty()
            && cluster.len() <= 63
            && cluster
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !cluster.starts_with('-')
            && !cluster.ends_with('-');
        assert!(
            label,
            "a cluster name kept that is not a label: {cluster:?}"
        );
    }
    if let Some(did) = did {
        assert!(
            syntax::did(did).is_ok(),
            "a member DID kept that is not one: {did:?}"
        );
    }
    let value = match serde_json::to_value(message) {
        Ok(value) => value,
        Err(error) => panic!("a kept message does not serialize: {error}"),
    };
    texts(&value);
}

fn texts(value: &Value) {
    match value {
        Value::String(text) => {
            assert!(
                !text.chars().any(crate::peer_text::is_unclean),
                "{text:?} kept"
            );
            assert!(text.len() <= 2048, "a text of {} bytes kept", text.len());
        }
        Value::Array(items) => items.iter().for_each(texts),
        Value::Object(members) => members.iter().for_each(|(key, member)| {
            assert!(
                !key.chars().any(crate::peer_text::is_unclean),
                "{key:?} kept"
            );
            texts(member);
        }),
        _ => {}
    }
}
