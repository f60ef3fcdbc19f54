//! A cluster's nodes as one Infra (seed 000, plan 0031, [`swdesk_core::cluster_nodes`]): the
//! gateway keeps the nodes of a tenant cluster as one `computer.socialweb.infra` record in its
//! own account, one contract entry per node, and each NodeClaim names its entry. The desk
//! follows that record like any followed deployment, read-only (`sync: Follow`: the gateway is
//! its writer): one Infra object per cluster in the account's store, labelled
//! [`CLUSTER_LABEL`], keeping which entry each NodeClaim names, which the controller mirrors
//! (declaration, each contract's phase, winner and receipt, the phase changes it saw, and an
//! entry no node claims as drift). So a node's contract shows on the same contract card as a
//! deployment's, with its timeline, offline too; the cluster's page shows each node beside its
//! entry, and where a NodeClaim and the Infra disagree (a claim naming an entry the Infra does
//! not hold, a live entry no claim names).
//!
//! Invariants: [`keep`] changes the store only from what the gateway's live feed says (never
//! from the clusters kept for an offline start); the record is only ever read, through the
//! owner's outbound policy, and validated as an Infra record by the controller; what it says
//! reaches the window only through [`NodeInfraView`] and the deployment views.

use std::collections::BTreeSet;

use serde::Serialize;
use swdesk_core::cluster_nodes::{self, NodeClaim, claim, node_disagreements};
use swdesk_core::infra::{ContractNode, ContractStatus, InfraSpec, InfraStatus, RecordBinding};
use swdesk_core::sync::SyncMode;
use swdesk_kernel::name::{Name, free_name};
use swdesk_kernel::object::{Metadata, Object};
use swdesk_kernel::timestamp::Timestamp;
use swdesk_kernel::uri::RecordUri;
use swdesk_store::{ObjectOf, Store, StoreError};

use crate::clusters::{ClusterRow, NodeRow};
use crate::contracts::named_text;
use crate::identities::Names;
use crate::serde_name as text;

/// The collection the gateway keeps node Infras in.
pub const COLLECTION: &str = swdesk_lexicon::computer::socialweb::infra::NSID;

/// The most clusters whose nodes the desk follows: a gateway that describes more (a hostile
/// one) fills no more of the store than this.
pub const MAX_FOLLOWED: usize = 64;

pub use swdesk_core::cluster_nodes::CLUSTER_LABEL;

/// A cluster's node Infra as the window shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct NodeInfraView {
    /// The Infra deployment that follows the record here (open it for every contract's card
    /// and the timeline).
    pub deployment: String,
    /// The record's at-uri.
    pub uri: String,
    /// The Infra's rolled-up phase, as its record says.
    pub phase: String,
    /// How the mirror stands with the record ("the repo cannot be read", "not in the repo"),
    /// when it is not following it.
    pub sync_message: Option<String>,
    /// Each contract entry: one per node.
    pub contracts: Vec<NodeContractView>,
    /// Where the NodeClaims and the Infra disagree, in words.
    pub drift: Vec<String>,
}

/// One node's contract entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct NodeContractView {
    /// The entry's name.
    pub name: String,
    /// Its phase.
    pub phase: String,
    /// The winning bidder's DID.
    pub winner: Option<String>,
    /// The winner's handle, when known and verified ([`name_winners`]).
    pub winner_handle: Option<String>,
    /// The receipt's at-uri.
    pub receipt: Option<String>,
    /// What it waits for, or why it failed.
    pub message: Option<String>,
    /// The NodeClaim that names it, if any.
    pub node: Option<String>,
}

/// The winners' DIDs `view` shows.
pub fn winners(view: &NodeInfraView) -> Vec<String> {
    view.contracts
        .iter()
        .filter_map(|contract| contract.winner.clone())
        .collect()
}

/// Fills in each winner's handle as far as `names` know it, and names them in the messages.
pub fn name_winners(view: &mut NodeInfraView, names: &Names) {
    for contract in &mut view.contracts {
        contract.winner_handle = contract
            .winner
            .as_deref()
            .and_then(|did| names.get(did)?.handle.clone());
        if let Some(message) = &mut contract.message {
            *message = named_text(message, names);
        }
    }
}

/// Where the node Infra of `nodes` lives: the first claim naming both workspace and Infra.
pub fn record_of(nodes: &[NodeRow]) -> Option<RecordUri> {
    nodes.iter().find_map(|node| {
        let (workspace, infra) = (node.workspace.as_deref()?, node.infra.as_deref()?);
        RecordUri::parse(&format!("at://{workspace}/{COLLECTION}/{infra}")).ok()
    })
}

/// Makes the store follow the node Infra of each of `clusters` (as the gateway's live feed
/// describes them): one read-only Infra per cluster whose claims name one, bound to that
/// record and keeping which entry each claim names, for at most [`MAX_FOLLOWED`] clusters; an
/// object whose cluster is gone goes (its record stays, the gateway's). Returns the objects
/// kept, for the controller to look at again now that their cluster changed.
pub fn keep(
    store: &Store,
    clusters: &[ClusterRow],
    now: Timestamp,
) -> Result<Vec<Name>, StoreError> {
    let followed = following(store)?;
    let mut kept = Vec::new();
    for cluster in clusters {
        let existing = followed
            .iter()
            .find(|object| cluster_of(object) == Some(cluster.name.as_str()));
        let claims = node_entries(&cluster.nodes);
        // No claim left names a record (every node lost): the one followed stays bound.
        let named = |object: &ObjectOf<InfraSpec>| {
            record_of(&cluster.nodes).or_else(|| object.spec.record.uri.clone())
        };
        match (existing, record_of(&cluster.nodes)) {
            (Some(object), _) => kept.push(match named(object) {
                Some(uri) => rebind(store, object, uri, claims)?,
                None => object.metadata.name.clone(),
            }),
            (None, Some(uri)) if kept.len() < MAX_FOLLOWED => {
                kept.push(create(
                    store,
                    &cluster.name,
                    follower_spec(uri, claims),
                    now,
                )?);
            }
            (None, Some(_)) => tracing::warn!(
                max = MAX_FOLLOWED,
                "the gateway describes more clusters with nodes than the desk follows"
            ),
            (None, None) => {}
        }
    }
    let live: BTreeSet<&str> = clusters
        .iter()
        .map(|cluster| cluster.name.as_str())
        .collect();
    for gone in followed
        .iter()
        .filter(|object| cluster_of(object).is_some_and(|name| !live.contains(name)))
        .filter(|object| !object.metadata.is_deleting())
    {
        store.delete::<InfraSpec>(&gone.metadata.name, now)?;
    }
    Ok(kept)
}

/// The node Infra of the cluster `cluster` as the store mirrors it, beside the cluster's
/// `nodes` (empty when the gateway has not described them); `None` while none is followed.
pub fn view(
    store: &Store,
    cluster: &str,
    nodes: &[NodeRow],
) -> Result<Option<NodeInfraView>, StoreError> {
    let Some(object) = following(store)?
        .into_iter()
        .find(|object| cluster_of(object).is_some_and(|name| name == cluster))
    else {
        return Ok(None);
    };
    let status = &object.status;
    let sync = status.sync.as_ref().map(|sync| &sync.state);
    Ok(Some(NodeInfraView {
        deployment: object.metadata.name.to_string(),
        uri: object
            .spec
            .record
            .uri
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_default(),
        phase: text(&status.phase),
        sync_message: sync
            .filter(|state| !state.is_synced())
            .and_then(|state| state.message()),
        contracts: status
            .contracts
            .iter()
            .map(|status| contract_view(status, nodes))
            .collect(),
        drift: if nodes.is_empty() {
            Vec::new()
        } else {
            node_disagreements(&status.contracts, &claims_of(nodes))
        },
    }))
}

/// Who keeps the record of a read-only deployment with `metadata`, in words.
pub fn keeper(metadata: &Metadata, spec: &InfraSpec) -> String {
    match metadata.labels.get(CLUSTER_LABEL) {
        Some(cluster) => format!("the gateway of cluster {cluster}"),
        None => spec.record.uri.as_ref().map_or_else(
            || "another account".to_owned(),
            |uri| uri.authority().to_owned(),
        ),
    }
}

/// The Infra objects that follow a cluster's nodes.
fn following(store: &Store) -> Result<Vec<ObjectOf<InfraSpec>>, StoreError> {
    Ok(store
        .list::<InfraSpec>()?
        .into_iter()
        .filter(|object| cluster_of(object).is_some() && object.spec.record.sync.is_read_only())
        .collect())
}

fn cluster_of(object: &ObjectOf<InfraSpec>) -> Option<&str> {
    cluster_nodes::cluster_of(&object.metadata)
}

/// The claims of the cluster's `nodes` (those that name an entry).
fn claims_of(nodes: &[NodeRow]) -> Vec<NodeClaim<'_>> {
    nodes
        .iter()
        .filter_map(|node| {
            Some(NodeClaim {
                node: &node.name,
                contract: node.contract.as_deref()?,
            })
        })
        .collect()
}

/// The local-only node entries keeping which entry each of `nodes` claims.
fn node_entries(nodes: &[NodeRow]) -> Vec<ContractNode> {
    claims_of(nodes)
        .into_iter()
        .map(|found| claim(found.node, found.contract))
        .collect()
}

/// Binds `object` to `uri` with `claims` when the claims name another record now, or other
/// entries. The controller writes the object's status meanwhile: a write that lost the race
/// reads the object again and is made again, so the claims are never left stale.
fn rebind(
    store: &Store,
    object: &ObjectOf<InfraSpec>,
    uri: RecordUri,
    claims: Vec<ContractNode>,
) -> Result<Name, StoreError> {
    let name = &object.metadata.name;
    let mut current = object.clone();
    loop {
        let mut bound = current.clone();
        if bound.spec.record.uri.as_ref() != Some(&uri) {
            bound.spec = follower_spec(uri.clone(), claims.clone());
        } else {
            bound.spec.nodes.clone_from(&claims);
        }
        if bound.spec == current.spec {
            return Ok(name.clone());
        }
        match store.replace::<InfraSpec>(&bound) {
            Err(StoreError::Conflict { .. }) => match store.get::<InfraSpec>(name)? {
                Some(again) => current = again,
                None => return Ok(name.clone()),
            },
            written => return written.map(|_| name.clone()),
        }
    }
}

fn create(
    store: &Store,
    cluster: &str,
    spec: InfraSpec,
    now: Timestamp,
) -> Result<Name, StoreError> {
    let taken = store.list::<InfraSpec>()?;
    let name = free_name(&format!("{cluster}-nodes"), "cluster-nodes", |candidate| {
        taken
            .iter()
            .any(|object| object.metadata.name.as_str() == candidate)
    });
    let mut metadata = Metadata::new(name.clone(), swdesk_store::random_uid()?, now);
    metadata
        .labels
        .insert(CLUSTER_LABEL.to_owned(), cluster.to_owned());
    let object = Object {
        metadata,
        spec,
        status: InfraStatus::default(),
    };
    match store.create::<InfraSpec>(&object) {
        Ok(_) | Err(StoreError::AlreadyExists { .. }) => Ok(name),
        Err(error) => Err(error),
    }
}

/// The spec of an Infra that follows `uri` read-only, keeping the cluster's `claims`; the
/// controller's mirror fills in the declaration.
fn follower_spec(uri: RecordUri, claims: Vec<ContractNode>) -> InfraSpec {
    InfraSpec {
        record: RecordBinding {
            uri: Some(uri),
            sync: SyncMode::Follow,
        },
        nodes: claims,
        ..InfraSpec::default()
    }
}

fn contract_view(status: &ContractStatus, nodes: &[NodeRow]) -> NodeContractView {
    NodeContractView {
        name: status.name.clone(),
        phase: text(&status.phase),
        winner: status.winner.clone(),
        winner_handle: None,
        receipt: status.receipt.clone(),
        message: status.message.clone(),
        node: nodes
            .iter()
            .find(|node| node.contract.as_deref() == Some(status.name.as_str()))
            .map(|node| node.name.clone()),
    }
}

#[cfg(test)]
mod tests {
    use swdesk_core::sync::{SyncState, SyncStatus};
    use swdesk_kernel::rollup::ContractPhase;

    use super::*;

    const AT: &str = "2026-12-05T10:00:00Z";

    fn now() -> Timestamp {
        Timestamp::parse_rfc3339(AT).unwrap()
    }

    fn node(name: &str, infra: &str, contract: &str) -> NodeRow {
        NodeRow {
            name: name.into(),
            phase: Some("Ready".into()),
            node_name: None,
            message: None,
            workspace: Some("did:plc:gateway".into()),
            infra: Some(infra.into()),
            contract: Some(contract.into()),
        }
    }

    fn cluster(name: &str, nodes: Vec<NodeRow>) -> ClusterRow {
        ClusterRow {
            name: name.into(),
            phase: "Ready".into(),
            waiting: false,
            running: Some(true),
            instance: None,
            teardown_blocked: None,
            server: None,
            nodes,
            members: Vec::new(),
        }
    }

    fn contract(name: &str, phase: ContractPhase) -> ContractStatus {
        ContractStatus {
            name: name.into(),
            phase,
            winner: Some("did:plc:bidder".into()),
            receipt: None,
            message: None,
            drift: None,
        }
    }

    /// What the controller's mirror would have written for `name`.
    fn mirrored(store: &Store, name: &Name, contracts: Vec<ContractStatus>) {
        let mut object = store.get::<InfraSpec>(name).unwrap().unwrap();
        object.status.contracts = contracts;
        object.status.sync = Some(SyncStatus::next(None, SyncState::Following, now()));
        store.update_status::<InfraSpec>(&object).unwrap();
    }

    #[test]
    fn the_claims_are_kept_even_when_the_controller_wrote_the_status_in_between() {
        let (_dir, store) = swdesk_testkit::store_file();
        let dev = cluster("dev", vec![node("dev-node-0", "nodes-1", "node-0")]);
        let name = keep(&store, &[dev], now()).unwrap().remove(0);
        let read = store.get::<InfraSpec>(&name).unwrap().unwrap();
        mirrored(
            &store,
            &name,
            vec![contract("node-0", ContractPhase::Deployed)],
        );
        let uri = read.spec.record.uri.clone().unwrap();
        let rejoined = vec![claim("dev-node-0", "node-0"), claim("dev-node-1", "node-1")];

        rebind(&store, &read, uri, rejoined.clone()).unwrap();

        let object = store.get::<InfraSpec>(&name).unwrap().unwrap();
        assert_eq!(object.spec.nodes, rejoined);
        assert_eq!(object.status.contracts.len(), 1, "the status written stays");
    }

    #[test]
    fn each_cluster_with_claims_gets_one_read_only_follower_that_goes_with_its_cluster() {
        let (_dir, store) = swdesk_testkit::store_file();
        let dev = cluster("dev", vec![node("dev-node-0", "nodes-1", "node-0")]);
        let empty = cluster("empty", Vec::new());
        let kept = keep(&store, &[dev.clone(), empty.clone()], now()).unwrap();
        assert_eq!(kept, [Name::parse("dev-nodes").unwrap()]);
        let object = store.get::<InfraSpec>(&kept[0]).unwrap().unwrap();
        assert_eq!(object.spec.record.sync, SyncMode::Follow);
        assert_eq!(
            object
                .spec
                .record
                .uri
                .as_ref()
                .map(ToString::to_string)
                .as_deref(),
            Some("at://did:plc:gateway/computer.socialweb.infra/nodes-1")
        );
        assert_eq!(
            keeper(&object.metadata, &object.spec),
            "the gateway of cluster dev"
        );

        // Idempotent; a new record named by the claims rebinds the same object.
        assert_eq!(
            keep(&store, std::slice::from_ref(&dev), now()).unwrap(),
            kept
        );
        let moved = cluster("dev", vec![node("dev-node-0", "nodes-2", "node-0")]);
        assert_eq!(keep(&store, &[moved], now()).unwrap(), kept);
        let object = store.get::<InfraSpec>(&kept[0]).unwrap().unwrap();
        assert!(
            object
                .spec
                .record
                .uri
                .unwrap()
                .to_string()
                .ends_with("/nodes-2")
        );
        assert_eq!(store.list::<InfraSpec>().unwrap().len(), 1);

        // The cluster gone: its follower goes.
        keep(&store, &[empty], now()).unwrap();
        assert!(store.get::<InfraSpec>(&kept[0]).unwrap().is_none());
    }

    #[test]
    fn a_gateway_describing_more_clusters_than_followed_fills_no_more_of_the_store() {
        let (_dir, store) = swdesk_testkit::store_file();
        let many: Vec<ClusterRow> = (0..MAX_FOLLOWED + 3)
            .map(|n| {
                let name = format!("c{n}");
                let claim = node(&format!("{name}-node"), &format!("nodes-{n}"), "node-0");
                cluster(&name, vec![claim])
            })
            .collect();
        assert_eq!(keep(&store, &many, now()).unwrap().len(), MAX_FOLLOWED);
        assert_eq!(store.list::<InfraSpec>().unwrap().len(), MAX_FOLLOWED);
    }

    #[test]
    fn an_owners_deployment_of_that_name_is_left_alone() {
        let (_dir, store) = swdesk_testkit::store_file();
        let mut metadata = Metadata::new(
            Name::parse("dev-nodes").unwrap(),
            swdesk_store::random_uid().unwrap(),
            now(),
        );
        metadata.labels.insert("team".into(), "web".into());
        store
            .create::<InfraSpec>(&Object {
                metadata,
                spec: InfraSpec::default(),
                status: InfraStatus::default(),
            })
            .unwrap();
        let dev = cluster("dev", vec![node("dev-node-0", "nodes-1", "node-0")]);
        let kept = keep(&store, &[dev], now()).unwrap();
        assert_eq!(kept, [Name::parse("dev-nodes-2").unwrap()]);
        keep(&store, &[], now()).unwrap();
        assert!(
            store
                .get::<InfraSpec>(&Name::parse("dev-nodes").unwrap())
                .unwrap()
                .is_some(),
            "only followers of clusters go"
        );
    }

    #[test]
    fn the_view_shows_each_node_beside_its_entry_and_where_they_disagree() {
        let (_dir, store) = swdesk_testkit::store_file();
        let nodes = vec![
            node("dev-node-0", "nodes-1", "node-0"),
            node("dev-node-9", "nodes-1", "node-9"),
        ];
        let kept = keep(&store, &[cluster("dev", nodes.clone())], now()).unwrap();
        mirrored(
            &store,
            &kept[0],
            vec![
                contract("node-0", ContractPhase::Deployed),
                contract("node-1", ContractPhase::Deployed),
                contract("node-2", ContractPhase::Released),
            ],
        );
        let shown = view(&store, "dev", &nodes).unwrap().expect("followed");
        assert_eq!(shown.deployment, "dev-nodes");
        assert_eq!(shown.contracts[0].node.as_deref(), Some("dev-node-0"));
        assert_eq!(shown.contracts[0].winner.as_deref(), Some("did:plc:bidder"));
        assert_eq!(shown.sync_message, None);
        assert_eq!(
            shown.drift,
            [
                "node dev-node-9 names contract node-9, which the Infra does not hold",
                "the Infra holds contract node-1 that no node claims",
            ]
        );
        let offline = view(&store, "dev", &[]).unwrap().expect("followed");
        assert!(
            offline.drift.is_empty(),
            "no claims known: nothing to compare"
        );
        assert!(view(&store, "other", &nodes).unwrap().is_none());
    }
}
