//! What a follower saw change: a deployment whose record another writer keeps (another device
//! of the owner, or another account, as a gateway keeps a cluster's nodes) has no
//! ComputeContracts here, and its record holds no times, only each contract's phase now. So a
//! follower keeps the phase changes it saw, when it saw them: the timeline of its contracts as
//! this device watched it.
//!
//! Invariants: a change is noted only when a contract's phase differs from the one shown
//! before (or the contract is new); the newest [`MAX_SEEN`] are kept, oldest dropped first.

use swdesk_kernel::timestamp::Timestamp;

use crate::infra::{ContractStatus, SeenChange};

/// How many seen changes a follower keeps.
pub const MAX_SEEN: usize = 64;

/// Notes in `seen` each contract of `now` whose phase differs from `before`'s, at `at`.
pub fn note(
    seen: &mut Vec<SeenChange>,
    before: &[ContractStatus],
    now: &[ContractStatus],
    at: Timestamp,
) {
    let moved = now.iter().filter(|contract| {
        before
            .iter()
            .find(|previous| previous.name == contract.name)
            .is_none_or(|previous| previous.phase != contract.phase)
    });
    seen.extend(moved.map(|contract| SeenChange {
        contract: contract.name.clone(),
        phase: contract.phase,
        at,
        message: contract.message.clone(),
    }));
    let excess = seen.len().saturating_sub(MAX_SEEN);
    seen.drain(..excess);
}

#[cfg(test)]
mod tests {
    use super::*;
    use swdesk_kernel::rollup::ContractPhase;

    fn contract(name: &str, phase: ContractPhase) -> ContractStatus {
        ContractStatus {
            name: name.into(),
            phase,
            winner: None,
            receipt: None,
            message: Some(format!("{name} says")),
            drift: None,
        }
    }

    #[test]
    fn only_a_new_contract_or_a_moved_phase_is_noted() {
        let at = Timestamp::parse_rfc3339("2026-12-05T10:00:00Z").unwrap();
        let later = Timestamp::parse_rfc3339("2026-12-05T10:05:00Z").unwrap();
        let first = [contract("node-0", ContractPhase::Requesting)];
        let mut seen = Vec::new();
        note(&mut seen, &[], &first, at);
        note(&mut seen, &first, &first, later);
        let second = [
            contract("node-0", ContractPhase::Deployed),
            contract("node-1", ContractPhase::Requesting),
        ];
        note(&mut seen, &first, &second, later);
        let noted: Vec<(&str, ContractPhase, Timestamp)> = seen
            .iter()
            .map(|change| (change.contract.as_str(), change.phase, change.at))
            .collect();
        assert_eq!(
            noted,
            [
                ("node-0", ContractPhase::Requesting, at),
                ("node-0", ContractPhase::Deployed, later),
                ("node-1", ContractPhase::Requesting, later),
            ]
        );
        assert_eq!(seen[1].message.as_deref(), Some("node-0 says"));
    }

    #[test]
    fn only_the_newest_are_kept() {
        let at = Timestamp::parse_rfc3339("2026-12-05T10:00:00Z").unwrap();
        let mut seen = Vec::new();
        let phases = [ContractPhase::Requesting, ContractPhase::Deployed];
        let mut before = Vec::new();
        for turn in 0..MAX_SEEN + 5 {
            let now = vec![contract("node-0", phases[turn % 2])];
            note(&mut seen, &before, &now, at);
            before = now;
        }
        assert_eq!(seen.len(), MAX_SEEN);
        assert_eq!(
            seen.last().map(|change| change.phase),
            Some(phases[(MAX_SEEN + 4) % 2])
        );
    }
}
