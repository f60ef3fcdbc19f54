//! A cluster's nodes as one Infra (seed 000, plan 0031): the gateway keeps the nodes of a
//! tenant cluster as one `computer.socialweb.infra` record in its own account, one contract
//! entry per node, and each NodeClaim names its entry. The desk reads that record (read-only:
//! the gateway is its writer) and shows each node with its contract's phase, winner and
//! receipt, as a deployment's contracts are shown; a NodeClaim and an Infra that disagree
//! (a claim naming an entry the Infra does not hold, a live entry no claim names) are drift.
//!
//! Invariants: the record is read through the owner's outbound policy and validated as an
//! Infra record; what it says reaches the window only through [`NodeInfraView`].

use std::collections::BTreeSet;

use serde::Serialize;
use swdesk_core::infra::ContractStatus;
use swdesk_core::publish::observed_status;
use swdesk_core::rollup::ContractPhase;
use swdesk_lexicon::Record as _;
use swdesk_lexicon::computer::socialweb::infra::Infra;

use crate::clusters::NodeRow;
use crate::serde_name as text;

/// The collection the gateway keeps node Infras in.
pub const COLLECTION: &str = swdesk_lexicon::computer::socialweb::infra::NSID;

/// A cluster's node Infra as the window shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct NodeInfraView {
    /// The record's at-uri.
    pub uri: String,
    /// The Infra's rolled-up phase, as its record says.
    pub phase: String,
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
    /// The receipt's at-uri.
    pub receipt: Option<String>,
    /// What it waits for, or why it failed.
    pub message: Option<String>,
    /// The NodeClaim that names it, if any.
    pub node: Option<String>,
}

/// Where the node Infra of `nodes` lives: the first claim naming both workspace and Infra.
pub fn record_of(nodes: &[NodeRow]) -> Option<(String, String)> {
    nodes
        .iter()
        .find_map(|node| Some((node.workspace.clone()?, node.infra.clone()?)))
}

/// The view of the node Infra record `value` at `uri`, beside the cluster's `nodes`.
pub fn view(
    uri: &str,
    value: serde_json::Value,
    nodes: &[NodeRow],
) -> Result<NodeInfraView, String> {
    let infra = Infra::from_record_value(value)
        .map_err(|error| format!("the node Infra {uri} is not an Infra record: {error}"))?;
    let (phase, statuses) = observed_status(infra.status.as_ref());
    let contracts: Vec<NodeContractView> = statuses
        .iter()
        .map(|status| contract_view(status, nodes))
        .collect();
    Ok(NodeInfraView {
        uri: uri.to_owned(),
        phase: text(&phase),
        drift: disagreements(&statuses, nodes),
        contracts,
    })
}

fn contract_view(status: &ContractStatus, nodes: &[NodeRow]) -> NodeContractView {
    NodeContractView {
        name: status.name.clone(),
        phase: text(&status.phase),
        winner: status.winner.clone(),
        receipt: status.receipt.clone(),
        message: status.message.clone(),
        node: nodes
            .iter()
            .find(|node| node.contract.as_deref() == Some(status.name.as_str()))
            .map(|node| node.name.clone()),
    }
}

/// Where the claims and the Infra's entries disagree.
fn disagreements(statuses: &[ContractStatus], nodes: &[NodeRow]) -> Vec<String> {
    let held: BTreeSet<&str> = statuses.iter().map(|status| status.name.as_str()).collect();
    let claimed: BTreeSet<&str> = nodes
        .iter()
        .filter_map(|node| node.contract.as_deref())
        .collect();
    let mut drift: Vec<String> = nodes
        .iter()
        .filter_map(|node| Some((node, node.contract.as_deref()?)))
        .filter(|(_, contract)| !held.contains(contract))
        .map(|(node, contract)| {
            format!(
                "node {} names contract {contract}, which the Infra does not hold",
                node.name
            )
        })
        .collect();
    drift.extend(
        statuses
            .iter()
            .filter(|status| {
                !matches!(
                    status.phase,
                    ContractPhase::Released | ContractPhase::Failed
                )
            })
            .filter(|status| !claimed.contains(status.name.as_str()))
            .map(|status| {
                format!(
                    "the Infra holds contract {} that no node claims",
                    status.name
                )
            }),
    );
    drift
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn node(name: &str, contract: &str) -> NodeRow {
        NodeRow {
            name: name.into(),
            phase: Some("Ready".into()),
            node_name: None,
            message: None,
            workspace: Some("did:plc:gateway".into()),
            infra: Some("nodes-1".into()),
            contract: Some(contract.into()),
        }
    }

    fn record(contracts: &[(&str, &str)]) -> serde_json::Value {
        let statuses: Vec<_> = contracts
            .iter()
            .map(|(name, phase)| json!({"name": name, "phase": phase, "winner": "did:plc:bidder"}))
            .collect();
        json!({
            "$type": COLLECTION,
            "status": {"phase": "deployed", "contracts": statuses},
            "createdAt": "2026-12-05T10:00:00.000Z",
        })
    }

    #[test]
    fn each_node_is_shown_with_its_contract_and_agreement_is_no_drift() {
        let nodes = [node("dev-node-0", "node-0"), node("dev-node-1", "node-1")];
        assert_eq!(
            record_of(&nodes),
            Some(("did:plc:gateway".into(), "nodes-1".into()))
        );
        let shown = view(
            "at://did:plc:gateway/computer.socialweb.infra/nodes-1",
            record(&[("node-0", "deployed"), ("node-1", "deployed")]),
            &nodes,
        )
        .expect("an Infra");
        assert_eq!(shown.phase, "deployed");
        assert_eq!(shown.contracts[1].node.as_deref(), Some("dev-node-1"));
        assert_eq!(shown.contracts[1].winner.as_deref(), Some("did:plc:bidder"));
        assert!(shown.drift.is_empty(), "{:?}", shown.drift);
    }

    #[test]
    fn a_claim_without_an_entry_and_a_live_entry_without_a_claim_are_drift() {
        let nodes = [node("dev-node-0", "node-0"), node("dev-node-9", "node-9")];
        let shown = view(
            "at://did:plc:gateway/computer.socialweb.infra/nodes-1",
            record(&[
                ("node-0", "deployed"),
                ("node-1", "deployed"),
                ("node-2", "released"),
            ]),
            &nodes,
        )
        .expect("an Infra");
        assert_eq!(
            shown.drift,
            [
                "node dev-node-9 names contract node-9, which the Infra does not hold",
                "the Infra holds contract node-1 that no node claims",
            ]
        );
        assert!(view("at://x/y/z", json!({"$type": "app.other"}), &nodes).is_err());
    }
}
