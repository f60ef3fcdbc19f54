//! A tenant cluster's nodes and the one Infra that holds them (seed 000, plan 0031): the
//! gateway keeps a cluster's nodes as one Infra record in its own account, one contract entry
//! per node, and each NodeClaim names its entry. A desk that follows that Infra labels its
//! object with [`CLUSTER_LABEL`] and keeps in its local-only `spec.nodes[]` which contract each
//! NodeClaim names ([`claim`]), as the gateway's live feed last said.
//!
//! The two drift apart when a NodeClaim names an entry the Infra does not hold, or a deployed
//! entry has no claim (a node lost without its contract released): [`node_disagreements`]
//! says both in words for the cluster's page; [`mark_unclaimed`] marks each unclaimed entry
//! as drifted on the Infra's status, so the deployment shows it like any other drift.
//!
//! Invariants: only a Deployed entry can be unclaimed (one coming up may not be claimed yet,
//! one released or failed holds no node); a drift found again keeps the time it was first
//! seen.

use std::collections::BTreeSet;

use swdesk_kernel::drift::{Drift, DriftKind};
use swdesk_kernel::object::Metadata;
use swdesk_kernel::rollup::ContractPhase;
use swdesk_kernel::timestamp::Timestamp;

use crate::infra::{ContractNode, ContractStatus, InfraSpec};

/// The label naming the tenant cluster whose nodes an Infra holds (the gateway labels its own
/// Infra so; the desk labels the object that follows it the same way).
pub const CLUSTER_LABEL: &str = "infra.socialweb.computer/cluster";

/// The cluster whose nodes the object with `metadata` holds, if it holds a cluster's nodes.
pub fn cluster_of(metadata: &Metadata) -> Option<&str> {
    metadata.labels.get(CLUSTER_LABEL).map(String::as_str)
}

/// A cluster node's claim on a contract entry of its Infra.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeClaim<'a> {
    /// The NodeClaim's name.
    pub node: &'a str,
    /// The Infra's contract entry it names.
    pub contract: &'a str,
}

/// The local-only node entry saying that the NodeClaim `node` names `contract`.
pub fn claim(node: &str, contract: &str) -> ContractNode {
    ContractNode {
        contract: contract.to_owned(),
        owner_did: None,
        adopt: false,
        node_claim: Some(node.to_owned()),
        join: None,
    }
}

/// The claims `spec`'s node entries keep.
pub fn claims_in(spec: &InfraSpec) -> Vec<NodeClaim<'_>> {
    spec.nodes
        .iter()
        .filter_map(|entry| {
            Some(NodeClaim {
                node: entry.node_claim.as_deref()?,
                contract: &entry.contract,
            })
        })
        .collect()
}

/// Where a cluster's node `claims` and its Infra's contract `statuses` disagree, in words:
/// each claim naming an entry the Infra does not hold, then each deployed entry no claim names.
pub fn node_disagreements(statuses: &[ContractStatus], claims: &[NodeClaim<'_>]) -> Vec<String> {
    let held: BTreeSet<&str> = statuses.iter().map(|status| status.name.as_str()).collect();
    let unheld = claims
        .iter()
        .filter(|claim| !held.contains(claim.contract))
        .map(|claim| {
            format!(
                "node {} names contract {}, which the Infra does not hold",
                claim.node, claim.contract
            )
        });
    let claimed = claimed(claims);
    let unclaimed = statuses
        .iter()
        .filter(|status| is_unclaimed(status, &claimed))
        .map(|status| {
            format!(
                "the Infra holds contract {} that no node claims",
                status.name
            )
        });
    unheld.chain(unclaimed).collect()
}

/// Marks each deployed entry of `statuses` that no claim names as drifted, and clears the drift
/// of every other; `before` is what the last look found.
pub fn mark_unclaimed(
    statuses: &mut [ContractStatus],
    claims: &[NodeClaim<'_>],
    before: &[ContractStatus],
    now: Timestamp,
) {
    let claimed = claimed(claims);
    for status in statuses {
        let found_before = before
            .iter()
            .filter(|earlier| earlier.name == status.name)
            .filter_map(|earlier| earlier.drift.as_ref());
        status.drift = is_unclaimed(status, &claimed).then(|| {
            Drift::found(
                DriftKind::NodeUnclaimed,
                "no node of the cluster claims it: the gateway may have lost the node without \
                 releasing its contract"
                    .to_owned(),
                found_before,
                now,
            )
        });
    }
}

fn claimed<'a>(claims: &[NodeClaim<'a>]) -> BTreeSet<&'a str> {
    claims.iter().map(|claim| claim.contract).collect()
}

/// Whether `status` is a deployed entry that no claim names (one still coming up may not be
/// claimed yet).
fn is_unclaimed(status: &ContractStatus, claimed: &BTreeSet<&str>) -> bool {
    status.phase == ContractPhase::Deployed && !claimed.contains(status.name.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(name: &str, phase: ContractPhase) -> ContractStatus {
        ContractStatus {
            name: name.into(),
            phase,
            winner: None,
            receipt: None,
            message: None,
            drift: None,
        }
    }

    fn statuses() -> [ContractStatus; 4] {
        [
            status("node-0", ContractPhase::Deployed),
            status("node-1", ContractPhase::Deployed),
            status("node-2", ContractPhase::Released),
            status("node-3", ContractPhase::Requesting),
        ]
    }

    const CLAIMS: [NodeClaim<'static>; 2] = [
        NodeClaim {
            node: "dev-node-0",
            contract: "node-0",
        },
        NodeClaim {
            node: "dev-node-9",
            contract: "node-9",
        },
    ];

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_unix_millis(1_800_000_000_000 + seconds * 1000).expect("time")
    }

    #[test]
    fn a_claim_without_an_entry_and_a_live_entry_without_a_claim_disagree() {
        let statuses = statuses();
        assert_eq!(
            node_disagreements(&statuses, &CLAIMS),
            [
                "node dev-node-9 names contract node-9, which the Infra does not hold",
                "the Infra holds contract node-1 that no node claims",
            ]
        );
        assert!(node_disagreements(&statuses[..1], &CLAIMS[..1]).is_empty());
    }

    #[test]
    fn only_a_deployed_unclaimed_entry_drifts_and_keeps_when_it_was_first_seen() {
        let mut first = statuses();
        mark_unclaimed(&mut first, &CLAIMS, &[], at(0));
        let drifted: Vec<&str> = first
            .iter()
            .filter(|status| status.drift.is_some())
            .map(|status| status.name.as_str())
            .collect();
        assert_eq!(drifted, ["node-1"]);
        let mut again = statuses();
        mark_unclaimed(&mut again, &CLAIMS, &first, at(60));
        let drift = again[1].drift.as_ref().expect("still drifted");
        assert_eq!((drift.kind, drift.since), (DriftKind::NodeUnclaimed, at(0)));
        let rejoined = [
            CLAIMS[0],
            NodeClaim {
                node: "dev-node-1",
                contract: "node-1",
            },
        ];
        mark_unclaimed(&mut again, &rejoined, &first, at(120));
        assert!(again.iter().all(|status| status.drift.is_none()));
    }

    #[test]
    fn the_claims_kept_in_the_spec_are_read_back() {
        let spec = InfraSpec {
            nodes: vec![claim("dev-node-0", "node-0")],
            ..InfraSpec::default()
        };
        assert_eq!(claims_in(&spec), [CLAIMS[0]]);
    }
}
