//! The phase rollup: from the phases of a deployment's contracts, and three facts about the
//! object, to the object's phase (SPEC §3).
//!
//! The rollup depends only on *which* contract phases occur (not on how often, nor in which
//! order) and on the facts. The first matching row wins:
//!
//! | # | when | object phase |
//! |---|---|---|
//! | 1 | the object has ended (final write done) | `ended` |
//! | 2 | a deletion was asked for | `deleting` |
//! | 3 | the object is ending (TTL or completion reached, contracts being released) | `ending` |
//! | 4 | there are no contracts | `pending` |
//! | 5 | any contract `failed` | `degraded` |
//! | 6 | any contract `requesting` | `deploying` |
//! | 7 | any contract `releasing` | `releasing` |
//! | 8 | any contract `deployed` | `deployed` |
//! | 9 | any contract `staged` | `staged` |
//! | 10 | otherwise: every contract `released` | `released` |
//!
//! Reading it: the object's own end dominates everything; a failure is shown before motion;
//! motion (`deploying`, then `releasing`) before steady states; a running guest (`deployed`)
//! before contracts that only wait to be requested (`staged`). A contract that waits for bids
//! or for its guest is `requesting`, so its deployment is `deploying` — waiting, never
//! `degraded` ([`ObjectPhase::is_waiting`]). Only `failed` degrades.

use serde::{Deserialize, Serialize};

/// A contract's observed phase (`#contractStatus.phase`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ContractPhase {
    /// Declared; no request for proposals.
    Staged,
    /// The request-for-proposals flow runs: waiting for bids, accepting, waiting for the guest.
    Requesting,
    /// The guest runs.
    Deployed,
    /// The release was sent; waiting for it to be confirmed.
    Releasing,
    /// The guest is released (or was never requested).
    Released,
    /// The contract failed; its message says why.
    Failed,
}

impl ContractPhase {
    /// Every phase, in declaration order.
    pub const ALL: [ContractPhase; 6] = [
        Self::Staged,
        Self::Requesting,
        Self::Deployed,
        Self::Releasing,
        Self::Released,
        Self::Failed,
    ];
}

/// A deployment's phase (`#status.phase`).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "camelCase")]
pub enum ObjectPhase {
    /// No contracts declared yet (and the phase of an object not reconciled yet).
    #[default]
    Pending,
    /// Contracts declared, none requested.
    Staged,
    /// At least one contract is being requested.
    Deploying,
    /// Guests run; nothing in motion.
    Deployed,
    /// At least one guest is being released.
    Releasing,
    /// Every contract is released.
    Released,
    /// At least one contract failed.
    Degraded,
    /// The deployment reached its end; its contracts are being released.
    Ending,
    /// The object is being deleted; its contracts are being released.
    Deleting,
    /// Final: the record is never written again.
    Ended,
}

impl ObjectPhase {
    /// Whether the phase is a wait for something else (the market, a guest, a release), to be
    /// shown as waiting rather than as a failure or a steady state.
    pub fn is_waiting(self) -> bool {
        matches!(
            self,
            Self::Pending | Self::Deploying | Self::Releasing | Self::Ending | Self::Deleting
        )
    }
}

/// What the rollup needs to know about the object itself.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ObjectFacts {
    /// The final write is done (`endedAt` is set).
    pub ended: bool,
    /// A deletion was asked for (`deletionRequestedAt` is set).
    pub deleting: bool,
    /// The end was reached (an EphemeralInfra's deadline or completion), not yet written.
    pub ending: bool,
}

/// The object phase for these contract phases and facts; see the module table.
pub fn rollup(contracts: &[ContractPhase], facts: ObjectFacts) -> ObjectPhase {
    let any = |phase: ContractPhase| contracts.contains(&phase);
    if facts.ended {
        ObjectPhase::Ended
    } else if facts.deleting {
        ObjectPhase::Deleting
    } else if facts.ending {
        ObjectPhase::Ending
    } else if contracts.is_empty() {
        ObjectPhase::Pending
    } else {
        CONTRACT_ROWS
            .iter()
            .find(|(phase, _)| any(*phase))
            .map_or(ObjectPhase::Released, |(_, object)| *object)
    }
}

/// Rows 5 to 9 of the module table, in order.
const CONTRACT_ROWS: [(ContractPhase, ObjectPhase); 5] = [
    (ContractPhase::Failed, ObjectPhase::Degraded),
    (ContractPhase::Requesting, ObjectPhase::Deploying),
    (ContractPhase::Releasing, ObjectPhase::Releasing),
    (ContractPhase::Deployed, ObjectPhase::Deployed),
    (ContractPhase::Staged, ObjectPhase::Staged),
];

#[cfg(test)]
mod tests {
    use super::*;
    use ContractPhase as C;
    use ObjectPhase::*;
    use proptest::prelude::*;

    /// The phases a row's flags name: `S`taged, re`Q`uesting, `D`eployed, re`L`easing,
    /// `R`eleased, `F`ailed; `.` is absent.
    fn phases(flags: &str) -> Vec<ContractPhase> {
        flags
            .chars()
            .zip(C::ALL)
            .filter(|(flag, _)| *flag != '.')
            .map(|(_, phase)| phase)
            .collect()
    }

    /// Every subset of contract phases (2^6 = 64 rows), with no object fact set.
    #[rustfmt::skip]
    const TABLE: [(&str, ObjectPhase); 64] = [
        ("......", Pending),   ("S.....", Staged),    (".Q....", Deploying), ("SQ....", Deploying),
        ("..D...", Deployed),  ("S.D...", Deployed),  (".QD...", Deploying), ("SQD...", Deploying),
        ("...L..", Releasing), ("S..L..", Releasing), (".Q.L..", Deploying), ("SQ.L..", Deploying),
        ("..DL..", Releasing), ("S.DL..", Releasing), (".QDL..", Deploying), ("SQDL..", Deploying),
        ("....R.", Released),  ("S...R.", Staged),    (".Q..R.", Deploying), ("SQ..R.", Deploying),
        ("..D.R.", Deployed),  ("S.D.R.", Deployed),  (".QD.R.", Deploying), ("SQD.R.", Deploying),
        ("...LR.", Releasing), ("S..LR.", Releasing), (".Q.LR.", Deploying), ("SQ.LR.", Deploying),
        ("..DLR.", Releasing), ("S.DLR.", Releasing), (".QDLR.", Deploying), ("SQDLR.", Deploying),
        (".....F", Degraded),  ("S....F", Degraded),  (".Q...F", Degraded),  ("SQ...F", Degraded),
        ("..D..F", Degraded),  ("S.D..F", Degraded),  (".QD..F", Degraded),  ("SQD..F", Degraded),
        ("...L.F", Degraded),  ("S..L.F", Degraded),  (".Q.L.F", Degraded),  ("SQ.L.F", Degraded),
        ("..DL.F", Degraded),  ("S.DL.F", Degraded),  (".QDL.F", Degraded),  ("SQDL.F", Degraded),
        ("....RF", Degraded),  ("S...RF", Degraded),  (".Q..RF", Degraded),  ("SQ..RF", Degraded),
        ("..D.RF", Degraded),  ("S.D.RF", Degraded),  (".QD.RF", Degraded),  ("SQD.RF", Degraded),
        ("...LRF", Degraded),  ("S..LRF", Degraded),  (".Q.LRF", Degraded),  ("SQ.LRF", Degraded),
        ("..DLRF", Degraded),  ("S.DLRF", Degraded),  (".QDLRF", Degraded),  ("SQDLRF", Degraded),
    ];

    fn every_fact_combination() -> Vec<ObjectFacts> {
        (0..8u8)
            .map(|bits| ObjectFacts {
                ended: bits & 1 != 0,
                deleting: bits & 2 != 0,
                ending: bits & 4 != 0,
            })
            .collect()
    }

    /// The object fact rows 1 to 3, or `None` when no fact is set.
    fn fact_phase(facts: ObjectFacts) -> Option<ObjectPhase> {
        [
            (facts.ended, Ended),
            (facts.deleting, Deleting),
            (facts.ending, Ending),
        ]
        .into_iter()
        .find_map(|(set, phase)| set.then_some(phase))
    }

    #[test]
    fn the_table_lists_every_subset_of_contract_phases_once() {
        let mut flags: Vec<&str> = TABLE.iter().map(|(flags, _)| *flags).collect();
        flags.sort_unstable();
        flags.dedup();
        assert_eq!(flags.len(), 64);
    }

    #[test]
    fn every_combination_of_phases_and_facts_rolls_up_as_the_table_says() {
        for (flags, contracts_only) in TABLE {
            for facts in every_fact_combination() {
                let expected = fact_phase(facts).unwrap_or(contracts_only);
                assert_eq!(rollup(&phases(flags), facts), expected, "{flags} {facts:?}");
            }
        }
    }

    #[test]
    fn a_contract_waiting_for_bids_shows_its_deployment_waiting_not_degraded() {
        let phase = rollup(&[C::Deployed, C::Requesting], ObjectFacts::default());
        assert_eq!(phase, Deploying);
        assert!(phase.is_waiting());
    }

    #[test]
    fn steady_and_failed_phases_are_not_waiting() {
        for phase in [Staged, Deployed, Released, Degraded, Ended] {
            assert!(!phase.is_waiting(), "{phase:?}");
        }
    }

    #[test]
    fn phases_serialize_as_the_lexicon_spells_them() {
        assert_eq!(serde_json::to_value(C::Requesting).unwrap(), "requesting");
        assert_eq!(serde_json::to_value(Deleting).unwrap(), "deleting");
    }

    proptest! {
        #[test]
        fn only_which_phases_occur_matters(
            mut contracts in proptest::collection::vec(proptest::sample::select(C::ALL.to_vec()), 0..12),
            ended in any::<bool>(), deleting in any::<bool>(), ending in any::<bool>(),
        ) {
            let facts = ObjectFacts { ended, deleting, ending };
            let phase = rollup(&contracts, facts);
            contracts.sort_unstable();
            contracts.dedup();
            prop_assert_eq!(rollup(&contracts, facts), phase);
            contracts.reverse();
            prop_assert_eq!(rollup(&contracts, facts), phase);
        }
    }
}
