//! Drift: what the world says that the records do not. A contract the owner's record calls
//! Deployed whose provider's receipt is gone from the provider's repo, or stands there at
//! another CID than the one verified, has drifted: the guest it paid for may be gone or its
//! terms rewritten. Each drift says what differs, since when, and the fix the owner can take
//! in one click.
//!
//! A tenant cluster's nodes drift from the one Infra that holds them (seed 000, plan 0031)
//! when a NodeClaim names an entry the Infra does not hold, or a live entry has no claim (a
//! node lost without a release): [`node_disagreements`].
//!
//! Invariants: drift is looked for only while a contract is Deployed, and found again at every
//! look (level-triggered): a look that cannot tell (the provider's PDS unreachable) keeps what
//! was found before; a drift found again keeps the time it was first seen.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::infra::ContractStatus;
use crate::rollup::ContractPhase;
use crate::timestamp::Timestamp;

/// What drifted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum DriftKind {
    /// The receipt record is gone from its author's repo.
    ReceiptGone,
    /// The receipt record stands at another CID than the one verified.
    ReceiptChanged,
}

/// The one-click fix of a drift.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum DriftFix {
    /// Release the contract (and request it again if it is still wanted).
    Release,
}

/// One drift of a contract.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Drift {
    /// What drifted.
    pub kind: DriftKind,
    /// What differs, in words.
    pub detail: String,
    /// When it was first seen.
    pub since: Timestamp,
}

impl Drift {
    /// The fix the window offers.
    pub fn fix(&self) -> DriftFix {
        match self.kind {
            DriftKind::ReceiptGone | DriftKind::ReceiptChanged => DriftFix::Release,
        }
    }
}

/// The receipt's drift, given the CID verified (`expected`) and what its author's repo holds
/// at its at-uri now (`found`: the CID there, `None` when there is no record), seen `now`;
/// `before` is what the last look found.
pub fn receipt_drift(
    expected: &str,
    found: Option<&str>,
    before: &[Drift],
    now: Timestamp,
) -> Option<Drift> {
    let (kind, detail) = match found {
        None => (
            DriftKind::ReceiptGone,
            "the provider's receipt is gone from its repo: the guest may be gone".to_owned(),
        ),
        Some(cid) if cid != expected => (
            DriftKind::ReceiptChanged,
            format!("the provider's receipt was rewritten (now at {cid}, verified at {expected})"),
        ),
        Some(_) => return None,
    };
    let since = before
        .iter()
        .find(|drift| drift.kind == kind)
        .map_or(now, |drift| drift.since);
    Some(Drift {
        kind,
        detail,
        since,
    })
}

/// A cluster node's claim on a contract entry of its Infra.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeClaim<'a> {
    /// The NodeClaim's name.
    pub node: &'a str,
    /// The Infra's contract entry it names.
    pub contract: &'a str,
}

/// Where a cluster's node `claims` and its Infra's contract `statuses` disagree, in words:
/// each claim naming an entry the Infra does not hold, then each live entry no claim names.
pub fn node_disagreements(statuses: &[ContractStatus], claims: &[NodeClaim<'_>]) -> Vec<String> {
    let held: BTreeSet<&str> = statuses.iter().map(|status| status.name.as_str()).collect();
    let claimed: BTreeSet<&str> = claims.iter().map(|claim| claim.contract).collect();
    let unheld = claims
        .iter()
        .filter(|claim| !held.contains(claim.contract))
        .map(|claim| {
            format!(
                "node {} names contract {}, which the Infra does not hold",
                claim.node, claim.contract
            )
        });
    let unclaimed = statuses
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
        });
    unheld.chain(unclaimed).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claim_without_an_entry_and_a_live_entry_without_a_claim_disagree() {
        let status = |name: &str, phase| ContractStatus {
            name: name.into(),
            phase,
            winner: None,
            receipt: None,
            message: None,
            drift: None,
        };
        let statuses = [
            status("node-0", ContractPhase::Deployed),
            status("node-1", ContractPhase::Deployed),
            status("node-2", ContractPhase::Released),
        ];
        let claims = [
            NodeClaim {
                node: "dev-node-0",
                contract: "node-0",
            },
            NodeClaim {
                node: "dev-node-9",
                contract: "node-9",
            },
        ];
        assert_eq!(
            node_disagreements(&statuses, &claims),
            [
                "node dev-node-9 names contract node-9, which the Infra does not hold",
                "the Infra holds contract node-1 that no node claims",
            ]
        );
        assert!(node_disagreements(&statuses[..1], &claims[..1]).is_empty());
    }

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_unix_millis(1_800_000_000_000 + seconds * 1000).expect("time")
    }

    #[test]
    fn a_receipt_at_its_verified_cid_has_not_drifted() {
        assert_eq!(receipt_drift("bafyA", Some("bafyA"), &[], at(0)), None);
    }

    #[test]
    fn a_gone_or_rewritten_receipt_drifts_and_offers_a_release() {
        let gone = receipt_drift("bafyA", None, &[], at(0)).expect("drift");
        assert_eq!(
            (gone.kind, gone.fix()),
            (DriftKind::ReceiptGone, DriftFix::Release)
        );
        let changed = receipt_drift("bafyA", Some("bafyB"), &[], at(0)).expect("drift");
        assert_eq!(changed.kind, DriftKind::ReceiptChanged);
        assert!(changed.detail.contains("bafyB") && changed.detail.contains("bafyA"));
    }

    #[test]
    fn a_drift_found_again_keeps_when_it_was_first_seen() {
        let first = receipt_drift("bafyA", None, &[], at(0)).expect("drift");
        let again = receipt_drift("bafyA", None, &[first], at(60)).expect("drift");
        assert_eq!(again.since, at(0));
        let other = receipt_drift("bafyA", Some("bafyB"), &[again], at(120)).expect("drift");
        assert_eq!(other.since, at(120), "another kind of drift starts anew");
    }
}
