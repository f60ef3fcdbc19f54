//! The contract lifecycle (SPEC §3) and the end of a deployment (seed 002 "ephemeralInfra",
//! "Never Deleted").
//!
//! [`contract_action`] turns a declared contract (its `state`, its `releaseRequestedAt`) and
//! the ComputeContract that exists for it, if any, into one [`ContractAction`]. When the
//! object ends (deleted, or an EphemeralInfra reaching its end) every contract counts as
//! `released`, asked at the end time unless it names a time itself. The first matching row
//! wins:
//!
//! | desired | ComputeContract | action |
//! |---|---|---|
//! | any | none, state `requested` | `Create` |
//! | any | none | `Nothing` |
//! | `staged` | finished (`Released`, or `Failed` without a receipt) | `Delete` |
//! | `staged` | holds a guest or runs, release not set | `Release` (a guest is never dropped) |
//! | `staged` | a failed release (below) | `Release` again, at `now` |
//! | `staged` | release already set | `Nothing` (wait for it to finish) |
//! | `requested` | exists | `Nothing` (it runs; a finished one stays finished) |
//! | `released` | `Released` | `Nothing` |
//! | `released` | release not set (any other phase, `Failed` included) | `Release` |
//! | `released` | declared `releaseRequestedAt` newer than the contract's own | `Release` (again) |
//! | `released` | a failed release (below) | `Release` again, at `now` |
//! | `released` | otherwise | `Nothing` |
//!
//! A *failed release* is a ComputeContract that is `Failed`, still holds a guest (it has a
//! receipt), has `release` set, and whose runner already acted on its current request
//! (`status.releaseSentAt` is at or after `spec.releaseRequestedAt`): the release is sent
//! again with a request time newer than the one acted on, so the runner sees a new request.
//! One new request per failed attempt: while the runner has not acted yet, nothing changes.
//! A release that itself gave up (a refusal that cannot heal, or its deadline passed:
//! [`ComputeContractStatus::release_gave_up`]) is not sent again on its own: the contract
//! stays `Failed`, holding its receipt and saying why, until the owner asks again.
//! A `Failed` contract without a receipt holds no guest, so a release it already has is not
//! sent again.
//!
//! A contract whose `state` this version does not know is never acted on (validation refuses
//! it). The end: an Infra ends only when deleted (`deleted`); an EphemeralInfra's
//! `expiresAt = createdAt + ttlSeconds`, and its end reason is, in this order, `deadline`
//! (`now >= expiresAt`), `complete` (`endWhen: complete` and every contract, at least one,
//! is `released`), `deleted`. An end reason, once recorded, never changes. The final write
//! waits until no ComputeContract holds a guest ([`may_write_final`]).

use std::time::Duration;

use swdesk_auction::compute::{ComputeContractSpec, ComputeContractStatus, ComputePhase};
use swdesk_kernel::rollup::ContractPhase;
use swdesk_kernel::timestamp::Timestamp;

use crate::infra::{Contract, ContractState, ContractStatus, EndReason, EndWhen};

/// What to do about one contract's ComputeContract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ContractAction {
    /// Leave it as it is.
    Nothing,
    /// Create the ComputeContract; it runs the request-for-proposals flow.
    Create,
    /// Set its `release` and `releaseRequestedAt` to this time (none: the first release).
    Release {
        /// When the release was asked for.
        requested_at: Option<Timestamp>,
    },
    /// Delete the finished ComputeContract.
    Delete,
}

/// The ComputeContract that exists for a contract: its spec and status.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Existing<'a> {
    /// Its spec (`release`, `releaseRequestedAt`).
    pub spec: &'a ComputeContractSpec,
    /// Its status.
    pub status: &'a ComputeContractStatus,
}

/// The state a contract is driven to, after the object's end is applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Desired {
    Staged,
    Requested,
    Released(Option<Timestamp>),
}

fn desired(contract: &Contract, ended_at: Option<Timestamp>) -> Option<Desired> {
    let asked = contract
        .release_requested_at
        .as_deref()
        .and_then(|at| at.parse().ok());
    if let Some(end) = ended_at {
        return Some(Desired::Released(asked.or(Some(end))));
    }
    match contract.state {
        ContractState::Staged => Some(Desired::Staged),
        ContractState::Requested => Some(Desired::Requested),
        ContractState::Released => Some(Desired::Released(asked)),
        ContractState::Other(_) => None,
    }
}

/// The one action for `contract`; `ended_at` is set once the object has reached its end, and
/// `now` dates a release sent again after a failed one.
pub fn contract_action(
    contract: &Contract,
    existing: Option<Existing<'_>>,
    ended_at: Option<Timestamp>,
    now: Timestamp,
) -> ContractAction {
    let Some(desired) = desired(contract, ended_at) else {
        return ContractAction::Nothing;
    };
    match (desired, existing) {
        (Desired::Requested, None) => ContractAction::Create,
        (_, None) | (Desired::Requested, Some(_)) => ContractAction::Nothing,
        (Desired::Staged, Some(existing)) => staged_action(existing, now),
        (Desired::Released(asked), Some(existing)) => released_action(asked, existing, now),
    }
}

fn staged_action(existing: Existing<'_>, now: Timestamp) -> ContractAction {
    if existing.status.is_finished() && !existing.status.holds_guest() {
        ContractAction::Delete
    } else if let Some(again) = release_again(existing, now) {
        again
    } else if existing.spec.release {
        ContractAction::Nothing
    } else {
        ContractAction::Release { requested_at: None }
    }
}

fn released_action(
    asked: Option<Timestamp>,
    existing: Existing<'_>,
    now: Timestamp,
) -> ContractAction {
    let own = existing.spec.release_requested_at;
    let newer = asked.is_some_and(|asked| own.is_none_or(|own| asked > own));
    if existing.status.phase == ComputePhase::Released {
        ContractAction::Nothing
    } else if !existing.spec.release || newer {
        ContractAction::Release {
            requested_at: asked,
        }
    } else {
        release_again(existing, now).unwrap_or(ContractAction::Nothing)
    }
}

/// A new release request for a failed release (see the module docs), dated `now`, or one
/// millisecond after the request acted on when `now` is not later.
fn release_again(existing: Existing<'_>, now: Timestamp) -> Option<ContractAction> {
    let status = existing.status;
    let own = existing.spec.release_requested_at;
    let sent = status.release_sent_at?;
    let acted = own.is_none_or(|own| sent >= own);
    let failed =
        status.phase == ComputePhase::Failed && status.holds_guest() && !status.release_gave_up();
    (failed && existing.spec.release && acted).then(|| ContractAction::Release {
        requested_at: Some(now.max(sent.saturating_add(Duration::from_millis(1)))),
    })
}

/// The phase shown for `contract`: its ComputeContract's, or from its state when none exists
/// (`requested` without one yet is `requesting`: about to be created).
pub fn contract_phase(
    contract: &Contract,
    existing: Option<&ComputeContractStatus>,
) -> ContractPhase {
    match (existing, &contract.state) {
        (Some(status), _) => status.phase.contract_phase(),
        (None, ContractState::Requested) => ContractPhase::Requesting,
        (None, ContractState::Released) => ContractPhase::Released,
        (None, ContractState::Staged | ContractState::Other(_)) => ContractPhase::Staged,
    }
}

/// The status entry of `contract`: phase, winner, receipt, and a message that says what a
/// waiting contract waits for when the runner gave none.
pub fn contract_status(
    contract: &Contract,
    existing: Option<&ComputeContractStatus>,
) -> ContractStatus {
    let waiting = existing
        .and_then(ComputeContractStatus::waiting_for)
        .map(|w| w.to_string());
    ContractStatus {
        name: contract.name.clone(),
        phase: contract_phase(contract, existing),
        winner: existing.and_then(|status| status.winner.clone()),
        receipt: existing.and_then(|status| status.receipt.as_ref().map(|r| r.uri.clone())),
        message: existing
            .and_then(|status| status.message.clone())
            .or(waiting),
        drift: existing.and_then(|status| status.drift.first()).cloned(),
    }
}

/// `createdAt + ttlSeconds`.
pub fn expires_at(created_at: Timestamp, ttl_seconds: u64) -> Timestamp {
    created_at.saturating_add(Duration::from_secs(ttl_seconds))
}

/// What the end of an EphemeralInfra depends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EphemeralFacts<'a> {
    /// `spec.endWhen`.
    pub end_when: EndWhen,
    /// `status.expiresAt`.
    pub expires_at: Timestamp,
    /// The contracts' phases.
    pub contracts: &'a [ContractPhase],
    /// Whether a deletion was asked for.
    pub deleting: bool,
    /// The end reason already recorded, if any.
    pub recorded: Option<EndReason>,
}

/// Why an EphemeralInfra ends at `now`, or `None` while it lives; see the module docs.
pub fn ephemeral_end(facts: &EphemeralFacts<'_>, now: Timestamp) -> Option<EndReason> {
    let complete = facts.end_when == EndWhen::Complete
        && !facts.contracts.is_empty()
        && facts
            .contracts
            .iter()
            .all(|phase| *phase == ContractPhase::Released);
    facts.recorded.or_else(|| {
        [
            (now >= facts.expires_at, EndReason::Deadline),
            (complete, EndReason::Complete),
            (facts.deleting, EndReason::Deleted),
        ]
        .into_iter()
        .find_map(|(holds, reason)| holds.then_some(reason))
    })
}

/// Why an Infra ends: only its deletion does.
pub fn infra_end(deleting: bool, recorded: Option<EndReason>) -> Option<EndReason> {
    recorded.or(deleting.then_some(EndReason::Deleted))
}

/// Whether the final write may happen: no ComputeContract holds a guest or still runs.
pub fn may_write_final<'a>(contracts: impl IntoIterator<Item = &'a ComputeContractStatus>) -> bool {
    contracts
        .into_iter()
        .all(|status| status.is_finished() && !status.holds_guest())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ContractAction::*;
    use swdesk_auction::compute::{DeploymentRef, StrongRef};
    use swdesk_kernel::deployment_kind::DeploymentKind;
    use swdesk_kernel::name::Name;

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_unix_millis(seconds * 1000).unwrap()
    }

    fn contract(state: &str, asked: Option<i64>) -> Contract {
        Contract {
            name: "web".into(),
            state: ContractState::from(state),
            release_requested_at: asked.map(|s| at(s).to_rfc3339()),
            ..Default::default()
        }
    }

    fn spec(release: bool, own: Option<i64>) -> ComputeContractSpec {
        ComputeContractSpec {
            deployment: DeploymentRef {
                kind: DeploymentKind::Infra,
                name: Name::parse("site").unwrap(),
            },
            contract: Name::parse("web").unwrap(),
            fields: contract("requested", None),
            secrets: vec![],
            release,
            release_requested_at: own.map(at),
        }
    }

    fn status(phase: ComputePhase, receipt: bool) -> ComputeContractStatus {
        let receipt = receipt.then(|| StrongRef {
            uri: "at://did:plc:b/x.y.receipt/1".into(),
            cid: "bafy".into(),
        });
        ComputeContractStatus {
            phase,
            receipt,
            ..Default::default()
        }
    }

    fn act(
        declared: &Contract,
        cc: Option<(&ComputeContractSpec, &ComputeContractStatus)>,
        end: Option<i64>,
    ) -> ContractAction {
        let existing = cc.map(|(spec, status)| Existing { spec, status });
        contract_action(declared, existing, end.map(at), at(NOW))
    }

    /// The `now` every table row is decided at.
    const NOW: i64 = 1000;

    /// A ComputeContract in a table row: `release`, its own `releaseRequestedAt`, phase,
    /// whether it has a receipt.
    type Cc = (bool, Option<i64>, ComputePhase, bool);

    #[test]
    fn the_lifecycle_table_holds_row_by_row() {
        use ComputePhase::*;
        #[rustfmt::skip]
        let rows: &[(&str, Option<i64>, Option<Cc>, ContractAction)] = &[
            // (state, declared releaseRequestedAt, (release, own time, phase, receipt)) => action
            ("requested", None,      None,                                  Create),
            ("staged",    None,      None,                                  Nothing),
            ("released",  Some(10),  None,                                  Nothing),
            ("staged",    None,      Some((false, None, Released, true)),   Delete),
            ("staged",    None,      Some((false, None, Failed, false)),    Delete),
            ("staged",    None,      Some((false, None, Failed, true)),     Release { requested_at: None }),
            ("staged",    None,      Some((false, None, Deployed, true)),   Release { requested_at: None }),
            ("staged",    None,      Some((false, None, Requesting, false)), Release { requested_at: None }),
            ("staged",    None,      Some((true, None, Releasing, true)),   Nothing),
            ("requested", None,      Some((false, None, Deployed, true)),   Nothing),
            ("requested", None,      Some((false, None, Failed, false)),    Nothing),
            ("released",  None,      Some((true, None, Released, false)),   Nothing),
            ("released",  Some(20),  Some((true, Some(10), Released, true)), Nothing),
            ("released",  None,      Some((false, None, Deployed, true)),   Release { requested_at: None }),
            ("released",  Some(10),  Some((false, None, Failed, false)),    Release { requested_at: Some(at(10)) }),
            ("released",  Some(20),  Some((true, Some(10), Failed, true)),  Release { requested_at: Some(at(20)) }),
            ("released",  Some(20),  Some((true, Some(10), Releasing, true)), Release { requested_at: Some(at(20)) }),
            ("released",  Some(10),  Some((true, Some(10), Failed, true)),  Nothing),
            ("released",  Some(5),   Some((true, Some(10), Failed, true)),  Nothing),
            ("released",  None,      Some((true, Some(10), Releasing, true)), Nothing),
            ("released",  Some(20),  Some((true, None, Releasing, true)),   Release { requested_at: Some(at(20)) }),
            ("paused",    None,      None,                                  Nothing),
            ("paused",    None,      Some((false, None, Deployed, true)),   Nothing),
        ];
        for &(state, asked, cc, expected) in rows {
            let declared = contract(state, asked);
            let cc = cc
                .map(|(release, own, phase, receipt)| (spec(release, own), status(phase, receipt)));
            let got = act(&declared, cc.as_ref().map(|(s, t)| (s, t)), None);
            assert_eq!(got, expected, "{state} {asked:?} {cc:?}");
        }
    }

    /// A failed ComputeContract in a table row: its own `releaseRequestedAt`, whether it has a
    /// receipt, the request its runner last acted on.
    type FailedCc = (Option<i64>, bool, Option<i64>);

    /// A `Failed` ComputeContract with `release` set at `own`, a receipt or not, whose runner
    /// last acted on the request of `sent`.
    fn failed_release(
        own: Option<i64>,
        receipt: bool,
        sent: Option<i64>,
    ) -> (ComputeContractSpec, ComputeContractStatus) {
        let status = ComputeContractStatus {
            release_sent_at: sent.map(at),
            ..status(ComputePhase::Failed, receipt)
        };
        (spec(true, own), status)
    }

    #[test]
    fn a_failed_release_is_sent_again_once_per_attempt() {
        let again = Release {
            requested_at: Some(at(NOW)),
        };
        #[rustfmt::skip]
        let rows: &[(&str, Option<i64>, FailedCc, ContractAction)] = &[
            // (state, declared time, (own time, receipt, acted on)) => action
            ("released",  Some(10), (Some(10), true,  Some(10)), again),
            ("released",  None,     (None,     true,  Some(10)), again),
            ("released",  Some(10), (Some(10), true,  Some(20)), again),
            ("staged",    None,     (None,     true,  Some(10)), again),
            ("released",  Some(10), (Some(10), true,  None),     Nothing),
            ("released",  Some(10), (Some(10), true,  Some(5)),  Nothing),
            ("released",  Some(10), (Some(10), false, Some(10)), Nothing),
            ("staged",    None,     (None,     false, Some(10)), Delete),
            ("requested", None,     (Some(10), true,  Some(10)), Nothing),
        ];
        for &(state, asked, (own, receipt, sent), expected) in rows {
            let (spec, status) = failed_release(own, receipt, sent);
            let got = act(&contract(state, asked), Some((&spec, &status)), None);
            assert_eq!(
                got, expected,
                "{state} {asked:?} {own:?} {receipt} {sent:?}"
            );
        }
    }

    #[test]
    fn a_release_that_gave_up_is_not_sent_again_until_the_owner_asks() {
        use swdesk_auction::flow::{Flow, Step};
        let (spec, mut status) = failed_release(Some(10), true, Some(10));
        status.flow = Some(Flow {
            step: Step::Failed {
                reason: "not called: refused".into(),
                held: None,
                release_failed: Some(at(10)),
            },
            ..Flow::start(at(0))
        });
        let got = act(
            &contract("released", Some(10)),
            Some((&spec, &status)),
            None,
        );
        assert_eq!(got, Nothing);
        let asked_again = act(
            &contract("released", Some(20)),
            Some((&spec, &status)),
            None,
        );
        assert!(matches!(asked_again, Release { .. }), "{asked_again:?}");
    }

    #[test]
    fn a_release_sent_again_is_always_newer_than_the_one_acted_on() {
        let (spec, status) = failed_release(Some(2000), true, Some(2000));
        let got = act(
            &contract("released", Some(2000)),
            Some((&spec, &status)),
            None,
        );
        assert_eq!(
            got,
            Release {
                requested_at: Some(Timestamp::from_unix_millis(2_000_001).unwrap())
            }
        );
    }

    #[test]
    fn at_the_end_a_failed_release_is_sent_again() {
        let (spec, status) = failed_release(Some(100), true, Some(100));
        let got = act(
            &contract("requested", None),
            Some((&spec, &status)),
            Some(100),
        );
        assert_eq!(
            got,
            Release {
                requested_at: Some(at(NOW))
            }
        );
    }

    #[test]
    fn the_end_of_the_object_forces_every_contract_to_released() {
        let running = (spec(false, None), status(ComputePhase::Deployed, true));
        for state in ["staged", "requested", "released", "paused"] {
            let got = act(
                &contract(state, None),
                Some((&running.0, &running.1)),
                Some(100),
            );
            assert_eq!(
                got,
                Release {
                    requested_at: Some(at(100))
                },
                "{state}"
            );
        }
    }

    #[test]
    fn at_the_end_a_contract_not_yet_created_is_never_created() {
        assert_eq!(act(&contract("requested", None), None, Some(100)), Nothing);
    }

    #[test]
    fn at_the_end_a_declared_release_time_is_kept() {
        let running = (spec(false, None), status(ComputePhase::Deployed, true));
        let got = act(
            &contract("released", Some(50)),
            Some((&running.0, &running.1)),
            Some(100),
        );
        assert_eq!(
            got,
            Release {
                requested_at: Some(at(50))
            }
        );
    }

    #[test]
    fn a_requested_contract_without_a_compute_contract_shows_as_requesting() {
        assert_eq!(
            contract_phase(&contract("requested", None), None),
            ContractPhase::Requesting
        );
        assert_eq!(
            contract_phase(&contract("released", None), None),
            ContractPhase::Released
        );
        assert_eq!(
            contract_phase(&contract("staged", None), None),
            ContractPhase::Staged
        );
        let failed = status(ComputePhase::Failed, false);
        assert_eq!(
            contract_phase(&contract("requested", None), Some(&failed)),
            ContractPhase::Failed
        );
    }

    #[test]
    fn a_waiting_contract_says_what_it_waits_for_in_its_status() {
        let waiting = contract_status(
            &contract("requested", None),
            Some(&ComputeContractStatus::default()),
        );
        assert_eq!(waiting.phase, ContractPhase::Requesting);
        assert_eq!(waiting.message.as_deref(), Some("waiting for bids"));
        let failed = ComputeContractStatus {
            message: Some("no bids in 60 s".into()),
            ..status(ComputePhase::Failed, false)
        };
        assert_eq!(
            contract_status(&contract("requested", None), Some(&failed))
                .message
                .as_deref(),
            Some("no bids in 60 s")
        );
    }

    #[test]
    fn expiry_is_creation_plus_ttl() {
        assert_eq!(expires_at(at(1000), 3600), at(4600));
    }

    fn facts(end_when: EndWhen, contracts: &[ContractPhase], deleting: bool) -> EphemeralFacts<'_> {
        EphemeralFacts {
            end_when,
            expires_at: at(100),
            contracts,
            deleting,
            recorded: None,
        }
    }

    #[test]
    fn an_ephemeral_deployment_ends_at_its_deadline_first() {
        let released = [ContractPhase::Released];
        assert_eq!(
            ephemeral_end(&facts(EndWhen::Complete, &released, true), at(100)),
            Some(EndReason::Deadline)
        );
        assert_eq!(
            ephemeral_end(&facts(EndWhen::Deadline, &[], false), at(99)),
            None
        );
    }

    #[test]
    fn complete_ends_when_every_contract_is_released_and_deadline_waits() {
        let released = [ContractPhase::Released, ContractPhase::Released];
        let mixed = [ContractPhase::Released, ContractPhase::Failed];
        assert_eq!(
            ephemeral_end(&facts(EndWhen::Complete, &released, false), at(50)),
            Some(EndReason::Complete)
        );
        assert_eq!(
            ephemeral_end(&facts(EndWhen::Deadline, &released, false), at(50)),
            None
        );
        assert_eq!(
            ephemeral_end(&facts(EndWhen::Complete, &mixed, false), at(50)),
            None
        );
        assert_eq!(
            ephemeral_end(&facts(EndWhen::Complete, &[], false), at(50)),
            None
        );
    }

    #[test]
    fn deleting_a_living_ephemeral_deployment_ends_it_as_deleted() {
        assert_eq!(
            ephemeral_end(&facts(EndWhen::Deadline, &[], true), at(50)),
            Some(EndReason::Deleted)
        );
    }

    #[test]
    fn a_recorded_end_reason_never_changes() {
        let recorded = EphemeralFacts {
            recorded: Some(EndReason::Complete),
            ..facts(EndWhen::Complete, &[], true)
        };
        assert_eq!(ephemeral_end(&recorded, at(500)), Some(EndReason::Complete));
        assert_eq!(
            infra_end(true, Some(EndReason::Deleted)),
            Some(EndReason::Deleted)
        );
        assert_eq!(infra_end(false, None), None);
    }

    #[test]
    fn the_final_write_waits_while_a_guest_may_exist() {
        let released = status(ComputePhase::Released, true);
        let failed_early = status(ComputePhase::Failed, false);
        let failed_with_guest = status(ComputePhase::Failed, true);
        let requesting = status(ComputePhase::Requesting, false);
        assert!(may_write_final([&released, &failed_early]));
        assert!(!may_write_final([&released, &failed_with_guest]));
        assert!(!may_write_final([&requesting]));
        assert!(may_write_final([]));
    }
}
