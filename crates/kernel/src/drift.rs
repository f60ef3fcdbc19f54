//! Drift: what the world says that the records do not. A contract the owner's record calls
//! Deployed whose provider's receipt is gone from the provider's repo, or stands there at
//! another CID than the one verified, has drifted: the guest it paid for may be gone or its
//! terms rewritten. Each drift says what differs, since when, and the fix the owner can take
//! in one click.
//!
//! A tenant cluster's nodes drift from the one Infra that holds them
//! (`swdesk_core::cluster_nodes`).
//!
//! Invariants: drift is looked for only while a contract is live, and found again at every
//! look (level-triggered): a look that cannot tell (the provider's PDS unreachable) keeps what
//! was found before; a drift found again keeps the time it was first seen.

use serde::{Deserialize, Deserializer, Serialize};

use crate::timestamp::Timestamp;

/// What drifted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum DriftKind {
    /// The receipt record is gone from its author's repo.
    ReceiptGone,
    /// The receipt record stands at another CID than the one verified.
    ReceiptChanged,
    /// A live contract of a cluster's node Infra that no node of the cluster claims.
    NodeUnclaimed,
}

/// The one-click fix of a drift.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum DriftFix {
    /// Release the contract (and request it again if it is still wanted).
    Release,
    /// Nothing to click here: the record's keeper (a cluster's gateway) releases it.
    Keeper,
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
            DriftKind::NodeUnclaimed => DriftFix::Keeper,
        }
    }

    /// A drift of `kind` seen `now`: found again in `before` (what the last look found), it
    /// keeps the time it was first seen; a drift of another kind starts anew.
    pub fn found<'a>(
        kind: DriftKind,
        detail: String,
        before: impl IntoIterator<Item = &'a Drift>,
        now: Timestamp,
    ) -> Self {
        let since = before
            .into_iter()
            .find(|drift| drift.kind == kind)
            .map_or(now, |drift| drift.since);
        Drift {
            kind,
            detail,
            since,
        }
    }
}

/// Reads a contract's drift as the store keeps it. Earlier builds kept only its words (and a
/// later one may keep a kind this one does not know): such a drift is dropped, and the next
/// look finds it again.
pub fn stored<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Drift>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Stored {
        Drift(Drift),
        Other(serde::de::IgnoredAny),
    }
    Ok(match Option::<Stored>::deserialize(deserializer)? {
        Some(Stored::Drift(drift)) => Some(drift),
        Some(Stored::Other(_)) | None => None,
    })
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
    Some(Drift::found(kind, detail, before, now))
}

#[cfg(test)]
mod tests {
    use super::*;

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
