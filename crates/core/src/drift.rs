//! Drift: what the world says that the records do not. A contract the owner's record calls
//! Deployed whose provider's receipt is gone from the provider's repo, or stands there at
//! another CID than the one verified, has drifted: the guest it paid for may be gone or its
//! terms rewritten. Each drift says what differs, since when, and the fix the owner can take
//! in one click.
//!
//! Invariants: drift is looked for only while a contract is Deployed, and found again at every
//! look (level-triggered): a look that cannot tell (the provider's PDS unreachable) keeps what
//! was found before; a drift found again keeps the time it was first seen.

use serde::{Deserialize, Serialize};

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
