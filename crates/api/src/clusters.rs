//! The owner's tenant clusters as the window shows them (SPEC §4): a [`ClusterBoard`] kept live
//! from the gateway's `subscribeClusters` feed (clusters with their nodes and members), and the
//! owner's intents through the [`Gateway`] port: create, control plane up or down, delete,
//! revoke an identity, a kubeconfig saved with mode 0600, a manifest applied (or dry-run) and
//! a Job followed.
//!
//! Invariants: the board is replaced whole by every snapshot and changed only by frames after
//! it, so a reconnect never leaves a stale cluster; the board holds only what the feed admitted
//! (its caps on clusters, members and nodes, and the cleaning of its texts, live in one place,
//! `swdesk_gateway::FeedLimits` and the feed's cleaner), and a feed that passed a bound shows as
//! reconnecting with the bound in its message; a kubeconfig never passes through this
//! module except on its way to the file (it is a credential); a manifest is parsed here (YAML
//! or JSON) and refused with its parse error before any request is made.

use crate::error_code::ErrorCode;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Serialize;
use swdesk_kernel::timestamp::Clock as _;

use crate::identities::Names;
use crate::last_seen::{LastSeen, Seen};
use crate::serde_name as text;
use swdesk_gateway::kubeconfig::{self, Minimal, Summary};
use swdesk_gateway::{FeedEvent, Gateway, GatewayError, KubeconfigLifetime};
use swdesk_lexicon::com::publicdomainrelay::temp::cluster::defs::Phase;
use swdesk_lexicon::com::publicdomainrelay::temp::cluster::subscribe_clusters::{
    Cluster, Member, Message, NodeClaim,
};
use swdesk_lexicon::computer::socialweb::k8s::{get_job, kubectl_apply_server_side as ssa};

/// One node of a cluster: a NodeClaim and the Infra entry behind it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct NodeRow {
    /// The NodeClaim's name.
    pub name: String,
    /// Its phase (`Pending`, `Launched`, `Registered`, `Ready`, ...).
    pub phase: Option<String>,
    /// The Kubernetes node, once registered.
    pub node_name: Option<String>,
    /// What it says about itself.
    pub message: Option<String>,
    /// The account (DID) holding that Infra: the gateway's.
    pub workspace: Option<String>,
    /// The Infra (in the gateway's account) whose contract runs it.
    pub infra: Option<String>,
    /// That Infra's contract entry.
    pub contract: Option<String>,
}

/// One member of a cluster: an identity with a grant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct MemberRow {
    /// The member's DID.
    pub did: String,
    /// Its name in the cluster.
    pub name: Option<String>,
    /// Its grant's state.
    pub state: Option<String>,
    /// Its handle, when verified both ways (filled from what is known: [`name_members`]).
    #[serde(default)]
    pub handle: Option<String>,
    /// Whether it is the signed-in owner, who is never offered to revoke themself.
    #[serde(default)]
    pub you: bool,
}

/// One cluster, as the list shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct ClusterRow {
    /// Its name.
    pub name: String,
    /// `Unavailable`, `Initializing`, `Ready` or `Draining`.
    pub phase: String,
    /// Whether the phase waits for the gateway (`Initializing`, `Draining`).
    pub waiting: bool,
    /// Whether the control plane runs.
    pub running: Option<bool>,
    /// The instance serving it.
    pub instance: Option<String>,
    /// Whether teardown is blocked (something still holds it).
    pub teardown_blocked: Option<bool>,
    /// The API server URL.
    pub server: Option<String>,
    /// Its nodes.
    pub nodes: Vec<NodeRow>,
    /// Its members.
    pub members: Vec<MemberRow>,
}

/// The owner's clusters as the feed last described them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClusterBoard {
    clusters: BTreeMap<String, ClusterRow>,
}

impl ClusterBoard {
    /// Every cluster, by name.
    pub fn rows(&self) -> Vec<ClusterRow> {
        self.clusters.values().cloned().collect()
    }

    /// Applies one event of the feed; answers whether the board changed.
    pub fn apply(&mut self, event: &FeedEvent) -> bool {
        match event {
            FeedEvent::Snapshot(messages) => {
                let before = self.clusters.clone();
                self.clusters.clear();
                for message in messages {
                    self.apply_message(message);
                }
                before != self.clusters
            }
            FeedEvent::Change(message) => {
                let before = self.clusters.clone();
                self.apply_message(message);
                before != self.clusters
            }
            FeedEvent::Disconnected { .. } | FeedEvent::Failed(..) => false,
        }
    }

    /// Replaces the clusters with a `listClusters` answer (before the feed's first snapshot).
    pub fn replace(&mut self, rows: Vec<ClusterRow>) {
        self.clusters = rows
            .into_iter()
            .map(|row| (row.name.clone(), row))
            .collect();
    }

    fn apply_message(&mut self, message: &Message) {
        match message {
            Message::Cluster(cluster) => self.apply_cluster(cluster),
            Message::Member(member) => self.apply_member(member),
            Message::NodeClaim(claim) => self.apply_node(claim),
            _ => {}
        }
    }

    fn apply_cluster(&mut self, cluster: &Cluster) {
        if cluster.deleted == Some(true) {
            self.clusters.remove(&cluster.name);
            return;
        }
        let row = self
            .clusters
            .entry(cluster.name.clone())
            .or_insert_with(|| empty_row(&cluster.name));
        row.phase = phase_text(&cluster.phase);
        row.waiting = is_waiting(&cluster.phase);
        row.running = cluster.running;
        row.instance.clone_from(&cluster.instance);
        row.teardown_blocked = cluster.teardown_blocked;
        row.server.clone_from(&cluster.server);
    }

    fn apply_member(&mut self, member: &Member) {
        let Some(row) = self.clusters.get_mut(&member.cluster) else {
            return;
        };
        row.members.retain(|known| known.did != member.did);
        if member.deleted != Some(true) {
            row.members.push(MemberRow {
                did: member.did.clone(),
                name: member.name.clone(),
                state: member.state.as_ref().map(text),
                handle: None,
                you: false,
            });
            row.members.sort_by(|a, b| a.did.cmp(&b.did));
        }
    }

    fn apply_node(&mut self, claim: &NodeClaim) {
        let Some(row) = self.clusters.get_mut(&claim.cluster) else {
            return;
        };
        row.nodes.retain(|known| known.name != claim.name);
        if claim.deleted != Some(true) {
            row.nodes.push(NodeRow {
                name: claim.name.clone(),
                phase: claim.phase.as_ref().map(text),
                node_name: claim.node_name.clone(),
                message: claim.message.clone(),
                workspace: claim
                    .infra
                    .as_ref()
                    .and_then(|infra| infra.workspace.clone()),
                infra: claim.infra.as_ref().map(|infra| infra.name.clone()),
                contract: claim.infra.as_ref().map(|infra| infra.contract.clone()),
            });
            row.nodes.sort_by(|a, b| a.name.cmp(&b.name));
        }
    }
}

fn empty_row(name: &str) -> ClusterRow {
    ClusterRow {
        name: name.to_owned(),
        phase: String::new(),
        waiting: false,
        running: None,
        instance: None,
        teardown_blocked: None,
        server: None,
        nodes: Vec::new(),
        members: Vec::new(),
    }
}

/// A row from a `listClusters` entry.
pub fn row_of(
    view: &swdesk_lexicon::com::publicdomainrelay::temp::cluster::defs::ClusterView,
) -> ClusterRow {
    ClusterRow {
        phase: phase_text(&view.phase),
        waiting: is_waiting(&view.phase),
        running: view.running,
        instance: view.instance.clone(),
        teardown_blocked: view.teardown_blocked,
        server: view.server.clone(),
        ..empty_row(&view.name)
    }
}

/// The DIDs the clusters show: their members'.
pub fn member_dids(rows: &[ClusterRow]) -> BTreeSet<String> {
    rows.iter()
        .flat_map(|row| row.members.iter().map(|member| member.did.clone()))
        .collect()
}

/// Fills in each member's handle as far as `names` know it, and marks the signed-in owner
/// `own` (the one row the window offers no Revoke).
pub fn name_members(rows: &mut [ClusterRow], names: &Names, own: &str) {
    for member in rows.iter_mut().flat_map(|row| row.members.iter_mut()) {
        member.handle = names
            .get(&member.did)
            .and_then(|named| named.handle.clone());
        member.you = member.did == own;
    }
}

/// Refuses revoking the signed-in owner's own grant (`own`): it would lock them out of their
/// cluster, and only the gateway could undo it.
pub fn refuse_self_revoke(did: &str, own: &str) -> Result<(), ClusterError> {
    if did == own {
        return Err(ClusterError::SelfRevoke(did.to_owned()));
    }
    Ok(())
}

fn is_waiting(phase: &Phase) -> bool {
    matches!(phase_text(phase).as_str(), "Initializing" | "Draining")
}

fn phase_text(phase: &Phase) -> String {
    text(phase)
}

/// A kubeconfig saved to a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct SavedKubeconfig {
    /// Where it is (mode 0600).
    pub path: String,
    /// The API server it points at.
    pub server: String,
    /// When its client certificate expires (RFC 3339), or `None` without expiry.
    pub expires_at: Option<String>,
    /// The identity the certificate names.
    pub subject: String,
}

/// Why a cluster call was not carried out.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    /// The gateway refused or could not be reached.
    #[error(transparent)]
    Gateway(#[from] GatewayError),
    /// The manifest does not parse, or names no object.
    #[error("the manifest cannot be read: {0}")]
    Manifest(String),
    /// The TTL is outside what the gateway issues.
    #[error("a kubeconfig lives {min}..={max} seconds; {0} is outside", min = KubeconfigLifetime::MIN_SECONDS, max = KubeconfigLifetime::MAX_SECONDS)]
    Ttl(i64),
    /// The owner asked to revoke their own grant.
    #[error(
        "{0} is you: revoking your own grant would lock you out of the cluster; revoke another member"
    )]
    SelfRevoke(String),
    /// The kubeconfig could not be written or read back.
    #[error("the kubeconfig could not be saved at {path}: {message}")]
    Save {
        /// Where.
        path: String,
        /// Why.
        message: String,
    },
}

impl ClusterError {
    /// A stable code for the window to branch on.
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::Gateway(_) => ErrorCode::Gateway,
            Self::Manifest(_) => ErrorCode::Manifest,
            Self::Ttl(_) => ErrorCode::Ttl,
            Self::Save { .. } => ErrorCode::Save,
            Self::SelfRevoke(_) => ErrorCode::SelfRevoke,
        }
    }
}

/// The lifetime the owner picked: `None` for the gateway's default.
pub fn lifetime(
    ttl_seconds: Option<i64>,
    no_expiry: bool,
) -> Result<KubeconfigLifetime, ClusterError> {
    match (no_expiry, ttl_seconds) {
        (true, _) => Ok(KubeconfigLifetime::NoExpiry),
        (false, None) => Ok(KubeconfigLifetime::Default),
        (false, Some(seconds))
            if (KubeconfigLifetime::MIN_SECONDS..=KubeconfigLifetime::MAX_SECONDS)
                .contains(&seconds) =>
        {
            Ok(KubeconfigLifetime::Seconds(seconds))
        }
        (false, Some(seconds)) => Err(ClusterError::Ttl(seconds)),
    }
}

/// Fetches a kubeconfig for `cluster`, verifies and rebuilds it (see [`Minimal::rebuild`]:
/// nothing that runs code, reads files or weakens TLS passes) and only then saves it at
/// `path` with mode 0600, atomically; a kubeconfig that fails the check leaves `path` as it
/// was.
pub async fn save_kubeconfig(
    gateway: &impl Gateway,
    cluster: &str,
    lifetime: KubeconfigLifetime,
    path: &Path,
) -> Result<SavedKubeconfig, ClusterError> {
    let issued = gateway.get_kubeconfig(cluster, lifetime).await?;
    let failed = |message: String| ClusterError::Save {
        path: path.display().to_string(),
        message,
    };
    let now = swdesk_controller::SystemClock.now().unix_millis() / 1000;
    let minimal = Minimal::rebuild(issued.kubeconfig.expose(), cluster, now)
        .map_err(|error| failed(format!("the gateway's kubeconfig is not saved: {error}")))?;
    if let Some(directory) = path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
        std::fs::create_dir_all(directory).map_err(|error| failed(error.to_string()))?;
    }
    kubeconfig::save(path, minimal.text()).map_err(|error| failed(error.to_string()))?;
    Ok(saved(path, &minimal.summary, lifetime))
}

fn saved(path: &Path, summary: &Summary, lifetime: KubeconfigLifetime) -> SavedKubeconfig {
    let expires_at = (lifetime != KubeconfigLifetime::NoExpiry)
        .then(|| {
            swdesk_kernel::timestamp::Timestamp::from_unix_millis(summary.not_after * 1000)
                .ok()
                .map(swdesk_kernel::timestamp::Timestamp::to_rfc3339)
        })
        .flatten();
    SavedKubeconfig {
        path: path.display().to_string(),
        server: summary.server.clone(),
        expires_at,
        subject: summary.subject.clone(),
    }
}

/// The result of applying (or dry-running) one object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct Applied {
    /// The object's kind.
    pub kind: String,
    /// Its name.
    pub name: String,
    /// Its uid.
    pub uid: Option<String>,
    /// Its resource version after the apply (unchanged by a dry run).
    pub resource_version: Option<String>,
    /// Its generation.
    pub generation: Option<i32>,
    /// The object as the server has it (or would have it), pretty JSON.
    pub object: String,
    /// The manifest as sent, pretty JSON (the window diffs the two).
    pub sent: String,
    /// Whether it was a dry run (nothing stored).
    pub dry_run: bool,
}

/// What the owner asks to apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApplyRequest<'a> {
    /// The cluster.
    pub cluster: &'a str,
    /// One object, YAML or JSON.
    pub manifest: &'a str,
    /// Only show what would change.
    pub dry_run: bool,
    /// Take over fields another manager owns.
    pub force: bool,
}

/// Parses the manifest and applies it server-side (or dry-runs it).
pub async fn apply(
    gateway: &impl Gateway,
    request: ApplyRequest<'_>,
) -> Result<Applied, ClusterError> {
    let manifest = parse_manifest(request.manifest)?;
    let input = ssa::Input {
        cluster: request.cluster.to_owned(),
        manifest: manifest.clone(),
        namespace: None,
        name: None,
        field_manager: None,
        force: Some(request.force),
        dry_run: Some(request.dry_run),
        extra: serde_json::Map::new(),
    };
    let output = gateway.kubectl_apply_server_side(&input).await?;
    let pretty = |value: &serde_json::Map<String, serde_json::Value>| {
        serde_json::to_string_pretty(value).unwrap_or_default()
    };
    Ok(Applied {
        kind: output.kind,
        name: output.name,
        uid: output.uid,
        resource_version: output.resource_version,
        generation: output.generation.and_then(|g| i32::try_from(g).ok()),
        object: output.object.as_ref().map(pretty).unwrap_or_default(),
        sent: pretty(&manifest),
        dry_run: request.dry_run,
    })
}

/// One object from YAML (or JSON, which is YAML) text.
pub fn parse_manifest(
    text: &str,
) -> Result<serde_json::Map<String, serde_json::Value>, ClusterError> {
    let value: serde_json::Value =
        serde_saphyr::from_str(text).map_err(|error| ClusterError::Manifest(error.to_string()))?;
    let serde_json::Value::Object(object) = value else {
        return Err(ClusterError::Manifest(
            "it is not one object (a mapping with apiVersion, kind and metadata)".to_owned(),
        ));
    };
    let missing: Vec<&str> = ["apiVersion", "kind", "metadata"]
        .into_iter()
        .filter(|field| !object.contains_key(*field))
        .collect();
    if !missing.is_empty() {
        return Err(ClusterError::Manifest(format!(
            "it has no {}",
            missing.join(", no ")
        )));
    }
    Ok(object)
}

/// A Job as the window follows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct JobView {
    /// `Pending`, `Running`, `Succeeded` or `Failed`.
    pub phase: String,
    /// Whether it has finished.
    pub finished: bool,
    /// Each container's log (the last lines, capped).
    pub logs: Vec<ContainerLog>,
}

/// One container's log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct ContainerLog {
    /// `pod/container`.
    pub source: String,
    /// The log's text.
    pub log: String,
    /// Whether the log was cut at the cap.
    pub truncated: bool,
}

/// The Job `namespace/name` of `cluster` now, with its last `tail_lines` log lines.
pub async fn job(
    gateway: &impl Gateway,
    cluster: &str,
    namespace: &str,
    name: &str,
    tail_lines: u32,
) -> Result<JobView, ClusterError> {
    let params = get_job::Params {
        cluster: cluster.to_owned(),
        namespace: namespace.to_owned(),
        name: name.to_owned(),
        tail_lines: Some(i64::from(tail_lines)),
    };
    let output = gateway.get_job(&params).await?;
    let phase = text(&output.phase);
    let logs = output
        .pods
        .unwrap_or_default()
        .into_iter()
        .flat_map(|pod| {
            let pod_name = pod.name.clone();
            pod.containers
                .unwrap_or_default()
                .into_iter()
                .map(move |container| ContainerLog {
                    source: format!("{pod_name}/{}", container.name),
                    log: container.log.unwrap_or_default(),
                    truncated: container.log_truncated.unwrap_or(false),
                })
        })
        .collect();
    Ok(JobView {
        finished: matches!(phase.as_str(), "Succeeded" | "Failed"),
        phase,
        logs,
    })
}

/// How the window's view of the clusters stands with the gateway.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct ClustersView {
    /// Every cluster, by name.
    pub clusters: Vec<ClusterRow>,
    /// `connecting`, `live`, `reconnecting` or `failed`.
    pub connection: String,
    /// Why it is not live, in words.
    pub message: Option<String>,
    /// While it is not live: when the clusters shown were last seen live (RFC 3339), kept
    /// from an earlier run when the gateway has not answered since the start.
    pub as_of: Option<String>,
}

/// The signed-in owner's clusters: the gateway client and the board its feed keeps live.
#[derive(Debug)]
pub struct ClusterSession {
    client: swdesk_gateway::GatewayClient,
    view: std::sync::Arc<std::sync::Mutex<ClustersView>>,
    feed: tokio::task::JoinHandle<()>,
}

impl ClusterSession {
    /// Starts following the owner's clusters at the gateway `client` talks to; every change of
    /// the view goes to `changed`.
    pub fn start(
        client: swdesk_gateway::GatewayClient,
        kept: LastSeen,
        changed: impl Fn(ClustersView) + Send + 'static,
    ) -> Self {
        let seen = kept.read();
        let view = std::sync::Arc::new(std::sync::Mutex::new(ClustersView {
            clusters: seen
                .as_ref()
                .map(|seen| seen.clusters.clone())
                .unwrap_or_default(),
            connection: "connecting".to_owned(),
            message: None,
            as_of: seen.as_ref().map(|seen| seen.as_of.clone()),
        }));
        let feed = tokio::spawn(follow(
            client.subscribe_clusters(None),
            std::sync::Arc::clone(&view),
            Kept { kept, seen },
            changed,
        ));
        Self { client, view, feed }
    }

    /// The gateway client (for the owner's intents).
    pub fn client(&self) -> &swdesk_gateway::GatewayClient {
        &self.client
    }

    /// The clusters as last seen.
    pub fn view(&self) -> ClustersView {
        self.view
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Stops following.
    pub fn stop(self) {
        self.feed.abort();
    }
}

/// Where the clusters seen live are kept, and what was kept at the start.
struct Kept {
    kept: LastSeen,
    seen: Option<Seen<ClusterRow>>,
}

async fn follow(
    mut feed: swdesk_gateway::ClusterFeed,
    view: std::sync::Arc<std::sync::Mutex<ClustersView>>,
    Kept { kept, seen }: Kept,
    changed: impl Fn(ClustersView),
) {
    let mut board = ClusterBoard::default();
    let mut as_of = seen.as_ref().map(|seen| seen.as_of.clone());
    if let Some(seen) = seen {
        board.replace(seen.clusters);
    }
    while let Some(event) = feed.next().await {
        let live = matches!(event, FeedEvent::Snapshot(_) | FeedEvent::Change(_));
        let board_changed = board.apply(&event);
        let now = swdesk_controller::SystemClock.now();
        if live {
            as_of = Some(now.to_rfc3339());
        }
        // Kept once per snapshot and per change that changed something, not per frame.
        if live
            && (board_changed || matches!(event, FeedEvent::Snapshot(_)))
            && let Err(error) = kept.keep(&board.rows(), now)
        {
            tracing::warn!(%error, "the clusters seen could not be kept for an offline start");
        }
        let (connection, message) = match &event {
            FeedEvent::Snapshot(_) | FeedEvent::Change(_) => ("live", None),
            FeedEvent::Disconnected { reason, retry_in } => (
                "reconnecting",
                Some(format!(
                    "{reason}; trying again in {} s",
                    retry_in.as_secs().max(1)
                )),
            ),
            FeedEvent::Failed(reason, _) => ("failed", Some(reason.clone())),
        };
        let next = ClustersView {
            clusters: board.rows(),
            connection: connection.to_owned(),
            message,
            as_of: as_of.clone().filter(|_| !live),
        };
        *view
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = next.clone();
        changed(next);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn message(value: serde_json::Value) -> Message {
        serde_json::from_value(value).unwrap()
    }

    fn cluster(name: &str, phase: &str) -> Message {
        message(json!({"$type": "#cluster", "name": name, "phase": phase}))
    }

    #[test]
    fn a_snapshot_replaces_the_board_and_changes_follow_it() {
        let mut board = ClusterBoard::default();
        board.replace(vec![empty_row("stale")]);
        let snapshot = FeedEvent::Snapshot(vec![
            cluster("dev", "Initializing"),
            message(
                json!({"$type": "#nodeClaim", "cluster": "dev", "name": "dev-0", "phase": "Pending",
                "infra": {"name": "nodes-1", "contract": "node-0"}}),
            ),
            message(
                json!({"$type": "#member", "cluster": "dev", "did": "did:plc:owner", "state": "Active"}),
            ),
        ]);
        assert!(board.apply(&snapshot));
        let rows = board.rows();
        assert_eq!(rows.len(), 1, "the stale cluster is gone");
        assert_eq!(rows[0].phase, "Initializing");
        assert!(rows[0].waiting);
        assert_eq!(rows[0].nodes[0].infra.as_deref(), Some("nodes-1"));
        assert_eq!(rows[0].members[0].did, "did:plc:owner");

        assert!(board.apply(&FeedEvent::Change(cluster("dev", "Ready"))));
        assert!(!board.rows()[0].waiting);
        assert_eq!(
            board.rows()[0].nodes.len(),
            1,
            "a cluster change keeps its nodes"
        );
        assert!(
            !board.apply(&FeedEvent::Change(cluster("dev", "Ready"))),
            "nothing changed"
        );
        let gone = message(
            json!({"$type": "#cluster", "name": "dev", "phase": "Draining", "deleted": true}),
        );
        assert!(board.apply(&FeedEvent::Change(gone)));
        assert!(board.rows().is_empty());
    }

    /// A feed that passed a bound shows where the connection state is shown: reconnecting,
    /// the bound and how much, and when it tries again; the clusters seen stay.
    #[tokio::test]
    async fn a_breached_feed_shows_the_bound_it_passed_as_why_it_reconnects() {
        let (events, feed) = swdesk_gateway::ClusterFeed::channel();
        let directory = tempfile::tempdir().unwrap();
        let kept = LastSeen::beside(&directory.path().join("store.sqlite"));
        let view = std::sync::Arc::new(std::sync::Mutex::new(ClustersView {
            clusters: Vec::new(),
            connection: "connecting".to_owned(),
            message: None,
            as_of: None,
        }));
        let following = tokio::spawn(follow(
            feed,
            std::sync::Arc::clone(&view),
            Kept { kept, seen: None },
            |_| {},
        ));
        let reason = "the gateway could not be reached for com.publicdomainrelay.temp.cluster.subscribeClusters: the feed was closed: the gateway named more than 64 clusters";
        let breach = FeedEvent::Disconnected {
            reason: reason.to_owned(),
            retry_in: std::time::Duration::from_millis(1500),
        };
        events
            .send(FeedEvent::Snapshot(vec![cluster("dev", "Ready")]))
            .await
            .unwrap();
        events.send(breach).await.unwrap();
        drop(events);
        following.await.unwrap();
        let shown = view.lock().unwrap().clone();
        assert_eq!(shown.connection, "reconnecting");
        assert_eq!(
            shown.message,
            Some(format!("{reason}; trying again in 1 s"))
        );
        assert_eq!(shown.clusters.len(), 1, "the clusters seen stay shown");
        assert!(
            shown.as_of.is_some(),
            "marked with when they were seen live"
        );
    }

    #[test]
    fn members_are_named_as_far_as_known_and_the_owner_is_marked() {
        let mut board = ClusterBoard::default();
        board.apply(&FeedEvent::Snapshot(vec![
            cluster("dev", "Ready"),
            message(json!({"$type": "#member", "cluster": "dev", "did": "did:plc:owner"})),
            message(json!({"$type": "#member", "cluster": "dev", "did": "did:plc:mate"})),
            message(json!({"$type": "#member", "cluster": "dev", "did": "did:plc:stranger"})),
        ]));
        let mut rows = board.rows();
        let pds = url::Url::parse("http://localhost:2583").unwrap();
        let named = |handle: Option<&str>| crate::identities::Named {
            handle: handle.map(str::to_owned),
            pds: pds.clone(),
        };
        let names = Names::from([
            ("did:plc:owner".to_owned(), named(Some("owner.test"))),
            ("did:plc:mate".to_owned(), named(None)),
        ]);
        assert_eq!(
            member_dids(&rows),
            BTreeSet::from(["did:plc:mate", "did:plc:owner", "did:plc:stranger"].map(String::from))
        );
        name_members(&mut rows, &names, "did:plc:owner");
        let shown: Vec<_> = rows[0]
            .members
            .iter()
            .map(|member| (member.did.as_str(), member.handle.as_deref(), member.you))
            .collect();
        assert_eq!(
            shown,
            [
                ("did:plc:mate", None, false),
                ("did:plc:owner", Some("owner.test"), true),
                ("did:plc:stranger", None, false),
            ],
            "a handle only where verified; only the owner is marked"
        );
    }

    #[test]
    fn the_owner_is_refused_revoking_themself_with_why() {
        let refused = refuse_self_revoke("did:plc:owner", "did:plc:owner").unwrap_err();
        assert_eq!(refused.code(), ErrorCode::SelfRevoke);
        assert_eq!(
            refused.to_string(),
            "did:plc:owner is you: revoking your own grant would lock you out of the cluster; revoke another member"
        );
        assert!(refuse_self_revoke("did:plc:mate", "did:plc:owner").is_ok());
    }

    #[test]
    fn a_manifest_is_one_object_with_its_kind_and_metadata() {
        let job = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: hello\nspec: {}\n";
        assert_eq!(parse_manifest(job).unwrap()["kind"], "Job");
        assert!(
            parse_manifest("{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {}}")
                .is_ok()
        );
        let Err(ClusterError::Manifest(message)) = parse_manifest("kind: Job\n") else {
            panic!("refused");
        };
        assert!(
            message.contains("apiVersion") && message.contains("metadata"),
            "{message}"
        );
        assert!(parse_manifest("- a\n- b\n").is_err());
        assert!(parse_manifest("kind: [unclosed").is_err());
    }

    #[test]
    fn a_kubeconfig_lifetime_is_within_the_gateways_bounds() {
        assert_eq!(lifetime(None, false).unwrap(), KubeconfigLifetime::Default);
        assert_eq!(
            lifetime(Some(60), false).unwrap(),
            KubeconfigLifetime::Seconds(60)
        );
        assert_eq!(
            lifetime(Some(86_400), false).unwrap(),
            KubeconfigLifetime::Seconds(86_400)
        );
        assert!(matches!(
            lifetime(Some(59), false),
            Err(ClusterError::Ttl(59))
        ));
        assert!(matches!(
            lifetime(Some(86_401), false),
            Err(ClusterError::Ttl(_))
        ));
        assert_eq!(
            lifetime(Some(5), true).unwrap(),
            KubeconfigLifetime::NoExpiry
        );
    }
}
