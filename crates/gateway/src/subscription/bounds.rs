//! How much of a gateway's feed is taken, and for how long: [`FeedLimits`] (the one place each
//! cap and deadline lives), [`Tally`] (the clusters, and each cluster's members and nodes, a
//! connection has named so far), [`Watch`] (the snapshot's deadline and the idle timeout) and
//! [`Breach`] (which limit a gateway passed, and by how much, in words).
//!
//! Invariant: a connection keeps at most `snapshot_frames` frames and `snapshot_bytes` bytes
//! before `SnapshotComplete`, names at most `clusters` clusters with at most
//! `members_per_cluster` members and `nodes_per_cluster` nodes each; passing any of them, or a
//! deadline, is a [`Breach`] that closes the connection. Nothing here reads a clock: time is a
//! parameter.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use swdesk_lexicon::com::publicdomainrelay::temp::cluster::subscribe_clusters::Message;
use tokio::time::Instant;

/// The bounds of one `subscribeClusters` feed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeedLimits {
    /// Frames kept before `SnapshotComplete`.
    pub snapshot_frames: usize,
    /// Bytes of frames kept before `SnapshotComplete`.
    pub snapshot_bytes: usize,
    /// How long the snapshot may take, from the handshake to `SnapshotComplete`.
    pub snapshot_deadline: Duration,
    /// How often the feed pings the gateway.
    pub ping_every: Duration,
    /// How long the gateway may stay silent (no frame, no pong) before the feed closes.
    pub idle_timeout: Duration,
    /// Clusters one connection may name.
    pub clusters: usize,
    /// Members one cluster may have.
    pub members_per_cluster: usize,
    /// Nodes one cluster may have.
    pub nodes_per_cluster: usize,
}

impl Default for FeedLimits {
    /// 64 clusters (as many as the app follows node Infra for), 128 members and 128 nodes each;
    /// a snapshot of at most 20,000 frames and 32 MiB within 60 s; a ping every 20 s and 60 s of
    /// silence at most.
    fn default() -> Self {
        Self {
            snapshot_frames: 20_000,
            snapshot_bytes: 32 << 20,
            snapshot_deadline: Duration::from_secs(60),
            ping_every: Duration::from_secs(20),
            idle_timeout: Duration::from_secs(60),
            clusters: 64,
            members_per_cluster: 128,
            nodes_per_cluster: 128,
        }
    }
}

/// Which limit a gateway passed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Breach {
    /// Too many frames before `SnapshotComplete`.
    #[error("the gateway's snapshot passed {limit} frames without completing")]
    SnapshotFrames {
        /// The cap.
        limit: usize,
    },
    /// Too many bytes before `SnapshotComplete`.
    #[error("the gateway's snapshot passed {limit} bytes ({seen} sent) without completing")]
    SnapshotBytes {
        /// The cap.
        limit: usize,
        /// What it sent so far.
        seen: usize,
    },
    /// No `SnapshotComplete` in time.
    #[error("the gateway's snapshot did not complete within {} s ({frames} frames sent)", .limit.as_secs_f64())]
    SnapshotLate {
        /// The deadline.
        limit: Duration,
        /// Frames sent by then.
        frames: usize,
    },
    /// Nothing heard for too long.
    #[error("the gateway was silent for {} s (no frame, no answer to a ping)", .limit.as_secs_f64())]
    Silent {
        /// The idle timeout.
        limit: Duration,
    },
    /// Too many clusters.
    #[error("the gateway named more than {limit} clusters")]
    Clusters {
        /// The cap.
        limit: usize,
    },
    /// Too many members or nodes in one cluster.
    #[error("the gateway named more than {limit} {what} of cluster {cluster}")]
    PerCluster {
        /// `members` or `nodes`.
        what: &'static str,
        /// The cap.
        limit: usize,
        /// Which cluster (already cleaned: a label).
        cluster: String,
    },
}

/// What one connection has named: clusters, and each one's member DIDs and node names.
#[derive(Debug, Default)]
pub struct Tally {
    frames: usize,
    bytes: usize,
    clusters: BTreeMap<String, Named>,
}

#[derive(Debug, Default)]
struct Named {
    members: BTreeSet<String>,
    nodes: BTreeSet<String>,
}

impl Tally {
    /// Counts one snapshot frame of `bytes` bytes against the snapshot's caps.
    pub fn count(&mut self, bytes: usize, limits: &FeedLimits) -> Result<(), Breach> {
        self.frames += 1;
        self.bytes = self.bytes.saturating_add(bytes);
        if self.frames > limits.snapshot_frames {
            return Err(Breach::SnapshotFrames {
                limit: limits.snapshot_frames,
            });
        }
        if self.bytes > limits.snapshot_bytes {
            return Err(Breach::SnapshotBytes {
                limit: limits.snapshot_bytes,
                seen: self.bytes,
            });
        }
        Ok(())
    }

    /// Frames counted so far.
    pub fn frames(&self) -> usize {
        self.frames
    }

    /// Takes in what `message` adds or removes; refuses it when a cap would be passed.
    pub fn admit(&mut self, message: &Message, limits: &FeedLimits) -> Result<(), Breach> {
        match message {
            Message::Cluster(cluster) if cluster.deleted == Some(true) => {
                self.clusters.remove(&cluster.name);
            }
            Message::Cluster(cluster) => {
                self.clusters.entry(cluster.name.clone()).or_default();
                if self.clusters.len() > limits.clusters {
                    return Err(Breach::Clusters {
                        limit: limits.clusters,
                    });
                }
            }
            Message::Member(member) => {
                let gone = member.deleted == Some(true);
                let limit = limits.members_per_cluster;
                self.name(&member.cluster, &member.did, gone, limit, Kind::Members)?;
            }
            Message::NodeClaim(node) => {
                let gone = node.deleted == Some(true);
                let limit = limits.nodes_per_cluster;
                self.name(&node.cluster, &node.name, gone, limit, Kind::Nodes)?;
            }
            Message::Info(_) | Message::Other(_) => {}
        }
        Ok(())
    }

    /// Adds (or removes) `key` among `cluster`'s members or nodes; a cluster not named yet is
    /// ignored, as the board ignores it.
    fn name(
        &mut self,
        cluster: &str,
        key: &str,
        gone: bool,
        limit: usize,
        kind: Kind,
    ) -> Result<(), Breach> {
        let Some(named) = self.clusters.get_mut(cluster) else {
            return Ok(());
        };
        let (set, what) = match kind {
            Kind::Members => (&mut named.members, "members"),
            Kind::Nodes => (&mut named.nodes, "nodes"),
        };
        if gone {
            set.remove(key);
            return Ok(());
        }
        set.insert(key.to_owned());
        if set.len() > limit {
            return Err(Breach::PerCluster {
                what,
                limit,
                cluster: cluster.to_owned(),
            });
        }
        Ok(())
    }
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    Members,
    Nodes,
}

/// The deadlines of one connection: the snapshot's, counted from the handshake, and the idle
/// timeout, counted from the last thing heard.
#[derive(Debug, Clone, Copy)]
pub struct Watch {
    snapshot_by: Option<Instant>,
    heard: Instant,
    limits: FeedLimits,
}

impl Watch {
    /// A connection whose handshake ended at `now`.
    pub fn new(limits: FeedLimits, now: Instant) -> Self {
        Self {
            snapshot_by: Some(now + limits.snapshot_deadline),
            heard: now,
            limits,
        }
    }

    /// Something came from the gateway at `now`.
    pub fn heard(&mut self, now: Instant) {
        self.heard = now;
    }

    /// The snapshot completed: only the idle timeout is left.
    pub fn completed(&mut self) {
        self.snapshot_by = None;
    }

    /// When the next deadline falls.
    pub fn deadline(&self) -> Instant {
        let idle = self.heard + self.limits.idle_timeout;
        self.snapshot_by.map_or(idle, |by| by.min(idle))
    }

    /// Which deadline passed at `now` (with `frames` of the snapshot sent), if any.
    pub fn expired(&self, now: Instant, frames: usize) -> Option<Breach> {
        if self.snapshot_by.is_some_and(|by| now >= by) {
            return Some(Breach::SnapshotLate {
                limit: self.limits.snapshot_deadline,
                frames,
            });
        }
        (now >= self.heard + self.limits.idle_timeout).then_some(Breach::Silent {
            limit: self.limits.idle_timeout,
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn message(value: serde_json::Value) -> Message {
        serde_json::from_value(value).unwrap()
    }

    fn small() -> FeedLimits {
        FeedLimits {
            clusters: 2,
            members_per_cluster: 2,
            nodes_per_cluster: 2,
            snapshot_frames: 3,
            snapshot_bytes: 100,
            ..FeedLimits::default()
        }
    }

    #[test]
    fn a_third_cluster_passes_a_cap_of_two_but_a_deleted_one_makes_room() {
        let limits = small();
        let mut tally = Tally::default();
        let cluster =
            |name: &str| message(json!({"$type": "#cluster", "name": name, "phase": "Ready"}));
        tally.admit(&cluster("a"), &limits).unwrap();
        tally.admit(&cluster("b"), &limits).unwrap();
        tally.admit(&cluster("b"), &limits).unwrap();
        let gone =
            message(json!({"$type": "#cluster", "name": "b", "phase": "Ready", "deleted": true}));
        tally.admit(&gone, &limits).unwrap();
        tally.admit(&cluster("c"), &limits).unwrap();
        let breach = tally.admit(&cluster("d"), &limits).unwrap_err();
        assert_eq!(breach.to_string(), "the gateway named more than 2 clusters");
    }

    #[test]
    fn members_and_nodes_are_capped_per_cluster() {
        let limits = small();
        let mut tally = Tally::default();
        tally
            .admit(
                &message(json!({"$type": "#cluster", "name": "dev", "phase": "Ready"})),
                &limits,
            )
            .unwrap();
        let member = |did: &str| message(json!({"$type": "#member", "cluster": "dev", "did": did}));
        let node =
            |name: &str| message(json!({"$type": "#nodeClaim", "cluster": "dev", "name": name}));
        for n in 0..2 {
            tally
                .admit(&member(&format!("did:plc:{n}")), &limits)
                .unwrap();
            tally.admit(&node(&format!("n{n}")), &limits).unwrap();
        }
        let members = tally.admit(&member("did:plc:x"), &limits).unwrap_err();
        assert_eq!(
            members.to_string(),
            "the gateway named more than 2 members of cluster dev"
        );
        let nodes = tally.admit(&node("n9"), &limits).unwrap_err();
        assert_eq!(
            nodes.to_string(),
            "the gateway named more than 2 nodes of cluster dev"
        );
        let elsewhere =
            message(json!({"$type": "#member", "cluster": "unknown", "did": "did:plc:y"}));
        assert!(
            tally.admit(&elsewhere, &limits).is_ok(),
            "an unknown cluster's member is not kept"
        );
    }

    #[test]
    fn the_snapshot_is_capped_by_frames_and_bytes() {
        let limits = small();
        let mut tally = Tally::default();
        for _ in 0..3 {
            tally.count(10, &limits).unwrap();
        }
        assert_eq!(
            tally.count(10, &limits).unwrap_err().to_string(),
            "the gateway's snapshot passed 3 frames without completing"
        );
        let mut heavy = Tally::default();
        assert_eq!(
            heavy.count(101, &limits).unwrap_err().to_string(),
            "the gateway's snapshot passed 100 bytes (101 sent) without completing"
        );
    }

    #[test]
    fn the_snapshot_deadline_then_the_idle_timeout_expire() {
        let limits = FeedLimits {
            snapshot_deadline: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(4),
            ..FeedLimits::default()
        };
        let start = Instant::now();
        let at = |secs| start + Duration::from_secs(secs);
        let mut watch = Watch::new(limits, start);
        assert_eq!(watch.deadline(), at(4));
        for second in 1..10 {
            watch.heard(at(second));
            assert_eq!(watch.expired(at(second), 5), None);
        }
        assert_eq!(
            watch.deadline(),
            at(10),
            "the snapshot's deadline comes first"
        );
        let late = watch.expired(at(10), 7).unwrap();
        assert_eq!(
            late.to_string(),
            "the gateway's snapshot did not complete within 10 s (7 frames sent)"
        );
        watch.completed();
        assert_eq!(watch.expired(at(10), 7), None, "heard a second ago");
        assert_eq!(watch.deadline(), at(13));
        assert_eq!(
            watch.expired(at(13), 7).unwrap().to_string(),
            "the gateway was silent for 4 s (no frame, no answer to a ping)"
        );
    }
}
