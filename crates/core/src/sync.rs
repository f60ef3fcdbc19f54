//! The sync decision: one [`SyncAction`] per reconcile, between an object's spec and its record
//! (SPEC §2 "Sync", seed 002 "Sync Modes").
//!
//! [`decide`] takes plain facts ([`SyncInputs`]) and is total and deterministic: the same facts
//! always give the same action, and every combination of facts gives one. "Changed" means
//! "differs from the last stored declaration hash" (`last`); `spec` and `record` are the
//! declaration hashes of the object's spec and of the record. The first matching row wins:
//!
//! | # | facts | action |
//! |---|---|---|
//! | 1 | the rkey is `self` | `Reserved` (the index's key: never a deployment's) |
//! | 2 | the record exists and has ended | `Ended` (never written again) |
//! | 3 | no record, one was bound before, mode `Both` | `Delete` (the local object is deleted) |
//! | 4 | no record, mode `Follow` | `Absent` (nothing to write: another account writes it) |
//! | 5 | no record (never bound, or mode `Publish`) | `Create` |
//! | 6 | `record == spec` | `InSync` |
//! | 7 | mode `Follow` (the record differs) | `Pull` (its writer is the only source) |
//! | 8 | mode `Publish` (the record differs) | `Push` |
//! | 9 | mode `Both`, no `last` (nothing shows which side moved) | `Conflict` |
//! | 10 | mode `Both`, `spec != last` and `record != last` | `Conflict` |
//! | 11 | mode `Both`, `spec != last` (only the spec changed) | `Push` |
//! | 12 | mode `Both`, `record != last` (only the record changed) | `Pull` |
//!
//! Consequences worth knowing: `Publish` never pulls, deletes or conflicts (the object is the
//! only source); `Follow` never writes, deletes or conflicts (the record is the only source);
//! both sides changing to the same declaration is `InSync`, not a conflict; in
//! `Publish` a vanished record is created again, in `Both` it deletes the object. Row 7 covers
//! adopting an existing, different record through `spec.record.uri`: the user chooses.

use serde::{Deserialize, Serialize};
use swdesk_kernel::rkey::Rkey;
use swdesk_kernel::timestamp::Timestamp;

use crate::declaration::types::{DeclarationHash, GenesisChange};

/// `spec.record.sync`: which way declarations flow.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SyncMode {
    /// Object to record and record to object.
    #[default]
    Both,
    /// Object to record only.
    Publish,
    /// Record to object only: a record another account writes (a tenant cluster's node Infra,
    /// which its gateway keeps), shown here and never written; its contracts run where it is
    /// written.
    Follow,
}

impl SyncMode {
    /// Whether this side never writes the record (nor runs its contracts, nor ends it).
    pub fn is_read_only(self) -> bool {
        self == Self::Follow
    }
}

/// What one reconcile does about the record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SyncAction {
    /// No record yet: write it.
    Create,
    /// The spec changed (or, in `Publish`, the record differs): write the spec to the record.
    Push,
    /// Only the record changed (`Both`): apply it onto the spec.
    Pull,
    /// The record's declaration is the spec's: nothing to write.
    InSync,
    /// Both changed since the last stored hash: write nothing, show it, let the user choose.
    Conflict,
    /// `Both`, the bound record is gone: delete the local object.
    Delete,
    /// `Follow`, the record is not there: nothing to write, the object shows it.
    Absent,
    /// The record has ended: never write it again.
    Ended,
    /// The rkey is `self`: never touch it.
    Reserved,
}

/// How a deployment stands with its record, as its reconciler last found it. The reasons are
/// data: the api and the window read this type, and nothing matches on words.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(tag = "state", rename_all = "camelCase")]
pub enum SyncState {
    /// The declaration is handed to the record's writer and not written yet.
    Publishing,
    /// The record holds this declaration.
    Published,
    /// The record's declaration (edited elsewhere) was applied here.
    Pulled,
    /// A follower shows its writer's record, which holds this declaration.
    Following,
    /// A follower wrote the owner's edit into the writer's record, for the writer to act on.
    Pushed,
    /// The last write failed (the repo refused it or did not answer); it is retried.
    WriteFailed {
        /// Why, as the repo's client said it (already bounded and free of secrets).
        error: String,
    },
    /// The repo could not be read; changes made here wait and are kept.
    Offline {
        /// Why, as the repo's client said it.
        error: String,
    },
    /// Edited here and in the repo since they last agreed: the owner chooses.
    Conflict,
    /// The record was edited elsewhere in fields only creation sets
    /// ([`crate::declaration::genesis`]): nothing of it is applied, and nothing is written
    /// back, until the owner keeps this side or ends the deployment for a successor.
    ChangedElsewhere {
        /// Each such field, with both values.
        changes: Vec<GenesisChange>,
    },
    /// The record in the repo does not validate; nothing is written over it until it does.
    RecordInvalid {
        /// Every problem, joined.
        problems: String,
    },
    /// The record has ended; it is never written again.
    RecordEnded,
    /// A follower's record is not in the repo.
    RecordGone,
    /// The object is bound to `self`, the index's key, never a deployment's.
    ReservedKey,
}

impl SyncState {
    /// Whether the record and the object agree (or the record is final).
    pub fn is_synced(&self) -> bool {
        matches!(
            self,
            Self::Published | Self::Pulled | Self::Following | Self::Pushed | Self::RecordEnded
        )
    }

    /// What the state means, in words, when there is more to say than its name.
    pub fn message(&self) -> Option<String> {
        let text = match self {
            Self::Published | Self::Following => return None,
            Self::Publishing => "waiting for the record to be written to the repo".to_owned(),
            Self::Pulled => "the record's declaration was applied here".to_owned(),
            Self::Pushed => "the edit is written for the writer to act on".to_owned(),
            Self::WriteFailed { error } if error.contains("retry in") => {
                format!("waiting to sync: the last write failed ({error})")
            }
            Self::WriteFailed { error } => {
                format!("waiting to sync: the last write failed ({error}); it is retried")
            }
            Self::Offline { error } => format!(
                "waiting to sync: the repo cannot be read ({error}); changes made here are kept and published once it answers"
            ),
            Self::Conflict => "the deployment was edited here and in the repo since they last agreed; keep this one or take the record's".to_owned(),
            Self::ChangedElsewhere { changes } => {
                let changes: Vec<String> = changes.iter().map(ToString::to_string).collect();
                format!(
                    "changed elsewhere: {}; keep this side, or end this deployment and declare a successor with the new value",
                    changes.join("; ")
                )
            }
            Self::RecordInvalid { problems } => format!(
                "the record in the repo does not validate, and nothing is written over it until it does: {problems}"
            ),
            Self::RecordEnded => "the record has ended; it is never written again".to_owned(),
            Self::RecordGone => "the record this follows is not in the repo".to_owned(),
            Self::ReservedKey => "`self` is the index's key, never a deployment's".to_owned(),
        };
        Some(text)
    }
}

/// A [`SyncState`] and since when the deployment has been in (or out of) sync: the time moves
/// only when [`SyncState::is_synced`] turns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncStatus {
    /// The state.
    pub state: SyncState,
    /// When it last turned in or out of sync.
    pub since: Timestamp,
}

impl SyncStatus {
    /// `state` as of `now`, following `previous`: the time is kept while the truth holds.
    pub fn next(previous: Option<&Self>, state: SyncState, now: Timestamp) -> Self {
        let since = previous
            .filter(|previous| previous.state.is_synced() == state.is_synced())
            .map_or(now, |previous| previous.since);
        Self { state, since }
    }
}

/// The owner's answer to a [`SyncAction::Conflict`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub enum Resolution {
    /// This side's declaration wins: it is written to the record.
    KeepLocal,
    /// The record's declaration wins: it is applied here.
    TakeRecord,
}

/// What the reconcile knows about the record at the object's rkey.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RemoteRecord {
    /// There is no record at the rkey.
    Missing,
    /// There is one.
    Present {
        /// The declaration hash of the record's `description` + `contracts`.
        hash: DeclarationHash,
        /// Whether its status says it ended.
        ended: bool,
    },
}

/// The facts [`decide`] needs, all observed before it is called.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyncInputs<'a> {
    /// The rkey the object is bound to (or is about to bind).
    pub rkey: &'a Rkey,
    /// The record at that rkey.
    pub record: RemoteRecord,
    /// Whether a record was ever bound (a stored URI exists).
    pub ever_bound: bool,
    /// The declaration hash of the object's spec.
    pub spec: DeclarationHash,
    /// The last declaration hash stored in the object's status, if any.
    pub last: Option<DeclarationHash>,
    /// `spec.record.sync`.
    pub mode: SyncMode,
}

/// The one action for these facts; see the module table for the precedence.
pub fn decide(inputs: &SyncInputs<'_>) -> SyncAction {
    if inputs.rkey.is_reserved() {
        return SyncAction::Reserved;
    }
    match inputs.record {
        RemoteRecord::Present { ended: true, .. } => SyncAction::Ended,
        RemoteRecord::Missing => decide_missing(inputs),
        RemoteRecord::Present { hash, ended: false } => decide_present(inputs, hash),
    }
}

/// Rows 3 to 5.
fn decide_missing(inputs: &SyncInputs<'_>) -> SyncAction {
    match (inputs.mode, inputs.ever_bound) {
        (SyncMode::Both, true) => SyncAction::Delete,
        (SyncMode::Follow, _) => SyncAction::Absent,
        _ => SyncAction::Create,
    }
}

/// Rows 6 to 12.
fn decide_present(inputs: &SyncInputs<'_>, record: DeclarationHash) -> SyncAction {
    if record == inputs.spec {
        return SyncAction::InSync;
    }
    match inputs.mode {
        SyncMode::Follow => return SyncAction::Pull,
        SyncMode::Publish => return SyncAction::Push,
        SyncMode::Both => {}
    }
    let Some(last) = inputs.last else {
        return SyncAction::Conflict;
    };
    match (inputs.spec != last, record != last) {
        (true, true) => SyncAction::Conflict,
        (true, false) => SyncAction::Push,
        (false, _) => SyncAction::Pull,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use SyncAction::*;
    use SyncMode::{Both, Follow, Publish};
    use proptest::prelude::*;

    #[test]
    fn a_failed_write_says_when_it_is_retried_once() {
        let timed = SyncState::WriteFailed {
            error: "HTTP 503: busy; retry in 8 s".to_owned(),
        };
        assert_eq!(
            timed.message().as_deref(),
            Some("waiting to sync: the last write failed (HTTP 503: busy; retry in 8 s)")
        );
        let untimed = SyncState::WriteFailed {
            error: "HTTP 400: refused".to_owned(),
        };
        assert_eq!(
            untimed.message().as_deref(),
            Some("waiting to sync: the last write failed (HTTP 400: refused); it is retried")
        );
        assert!(!timed.is_synced());
    }

    const A: DeclarationHash = DeclarationHash::from_bytes([0xa; 32]);
    const B: DeclarationHash = DeclarationHash::from_bytes([0xb; 32]);
    const C: DeclarationHash = DeclarationHash::from_bytes([0xc; 32]);

    /// rkey, record, ever bound, mode, spec hash, last stored hash.
    type Facts = (
        &'static str,
        Rec,
        bool,
        SyncMode,
        DeclarationHash,
        Option<DeclarationHash>,
    );

    /// The record side of a table row.
    #[derive(Debug, Clone, Copy)]
    enum Rec {
        Missing,
        Live(DeclarationHash),
        Ended(DeclarationHash),
    }

    impl Rec {
        fn remote(self) -> RemoteRecord {
            match self {
                Rec::Missing => RemoteRecord::Missing,
                Rec::Live(hash) => RemoteRecord::Present { hash, ended: false },
                Rec::Ended(hash) => RemoteRecord::Present { hash, ended: true },
            }
        }
    }

    fn run((rkey, rec, bound, mode, spec, last): Facts) -> SyncAction {
        let rkey = Rkey::parse(rkey).unwrap();
        decide(&SyncInputs {
            rkey: &rkey,
            record: rec.remote(),
            ever_bound: bound,
            spec,
            last,
            mode,
        })
    }

    #[test]
    fn the_decision_table_holds_row_by_row() {
        use Rec::{Ended as E, Live as L, Missing as M};
        #[rustfmt::skip]
        let rows: &[(Facts, SyncAction)] = &[
            // ((rkey, record, bound, mode, spec, last), expected action)
            (("self", M,    false, Both,    A, None),    Reserved),
            (("self", L(A), true,  Publish, A, Some(A)), Reserved),
            (("self", E(A), true,  Both,    A, Some(A)), Reserved),
            (("web",  E(A), true,  Both,    A, Some(A)), Ended),
            (("web",  E(B), true,  Both,    A, Some(C)), Ended),
            (("web",  E(B), false, Publish, A, None),    Ended),
            (("web",  M,    true,  Both,    A, Some(A)), Delete),
            (("web",  M,    true,  Both,    B, Some(A)), Delete),
            (("web",  M,    false, Both,    A, None),    Create),
            (("web",  M,    true,  Publish, A, Some(A)), Create),
            (("web",  M,    false, Publish, A, None),    Create),
            (("web",  L(A), true,  Both,    A, Some(A)), InSync),
            (("web",  L(A), true,  Both,    A, Some(B)), InSync),
            (("web",  L(A), false, Both,    A, None),    InSync),
            (("web",  L(A), true,  Publish, A, Some(B)), InSync),
            (("web",  L(B), true,  Publish, A, Some(A)), Push),
            (("web",  L(B), true,  Publish, A, Some(B)), Push),
            (("web",  L(B), true,  Publish, A, Some(C)), Push),
            (("web",  L(B), false, Publish, A, None),    Push),
            (("web",  L(B), false, Both,    A, None),    Conflict),
            (("web",  L(B), true,  Both,    A, Some(C)), Conflict),
            (("web",  L(A), true,  Both,    B, Some(A)), Push),
            (("web",  L(B), true,  Both,    A, Some(A)), Pull),
            (("web",  L(C), true,  Both,    A, Some(A)), Pull),
            (("self", L(B), true,  Follow,  A, Some(A)), Reserved),
            (("web",  E(B), true,  Follow,  A, Some(A)), Ended),
            (("web",  M,    true,  Follow,  A, Some(A)), Absent),
            (("web",  M,    false, Follow,  A, None),    Absent),
            (("web",  L(A), true,  Follow,  A, Some(B)), InSync),
            (("web",  L(B), false, Follow,  A, None),    Pull),
            (("web",  L(B), true,  Follow,  A, Some(C)), Pull),
            (("web",  L(A), true,  Follow,  B, Some(A)), Pull),
        ];
        for &(facts, expected) in rows {
            assert_eq!(run(facts), expected, "{facts:?}");
        }
    }

    /// Every combination of the finite fact space: two rkeys, seven records, both `bound`
    /// values, the three modes, three specs and four `last` values.
    fn every_combination() -> Vec<Facts> {
        let records = [
            Rec::Missing,
            Rec::Live(A),
            Rec::Live(B),
            Rec::Live(C),
            Rec::Ended(A),
            Rec::Ended(B),
            Rec::Ended(C),
        ];
        let mut all = Vec::new();
        for rkey in ["self", "web"] {
            for rec in records {
                for bound in [false, true] {
                    for mode in [Both, Publish, Follow] {
                        for spec in [A, B, C] {
                            for last in [None, Some(A), Some(B), Some(C)] {
                                all.push((rkey, rec, bound, mode, spec, last));
                            }
                        }
                    }
                }
            }
        }
        all
    }

    #[test]
    fn each_action_happens_exactly_when_its_row_says() {
        for (rkey, rec, bound, mode, spec, last) in every_combination() {
            let action = run((rkey, rec, bound, mode, spec, last));
            let open = rkey != "self";
            let live = match rec {
                Rec::Live(hash) => Some(hash),
                _ => None,
            };
            let case = format!(
                "{rkey} {rec:?} bound={bound} {mode:?} spec={spec:?} last={last:?} gave {action:?}"
            );
            assert_eq!(action == Reserved, !open, "{case}");
            assert_eq!(
                action == Ended,
                open && matches!(rec, Rec::Ended(_)),
                "{case}"
            );
            assert_eq!(
                action == Delete,
                open && matches!(rec, Rec::Missing) && bound && mode == Both,
                "{case}"
            );
            assert_eq!(
                action == Absent,
                open && matches!(rec, Rec::Missing) && mode == Follow,
                "{case}"
            );
            assert_eq!(
                action == Create,
                open && matches!(rec, Rec::Missing) && !(bound && mode == Both) && mode != Follow,
                "{case}"
            );
            assert_eq!(action == InSync, open && live == Some(spec), "{case}");
            let differs = live.is_some_and(|record| record != spec);
            let spec_moved = last != Some(spec);
            let record_moved = live.is_some_and(|record| last != Some(record));
            assert_eq!(
                action == Pull,
                open && differs
                    && (mode == Follow || (mode == Both && last.is_some() && !spec_moved)),
                "{case}"
            );
            assert_eq!(
                action == Conflict,
                open && differs && mode == Both && spec_moved && record_moved,
                "{case}"
            );
            assert_eq!(
                action == Push,
                open && differs
                    && (mode == Publish || (mode == Both && spec_moved && !record_moved)),
                "{case}"
            );
        }
    }

    fn any_hash() -> impl Strategy<Value = DeclarationHash> {
        prop_oneof![
            Just(A),
            Just(B),
            any::<[u8; 32]>().prop_map(DeclarationHash::from_bytes)
        ]
    }

    proptest! {
        #[test]
        fn decide_is_total_and_deterministic(
            rkey in prop_oneof![Just("self".to_owned()), "[a-z][a-z0-9-]{0,20}"],
            present in any::<bool>(),
            ended in any::<bool>(),
            record in any_hash(),
            bound in any::<bool>(),
            mode in prop_oneof![Just(Both), Just(Publish), Just(Follow)],
            spec in any_hash(),
            last in proptest::option::of(any_hash()),
        ) {
            let rkey = Rkey::parse(&rkey).unwrap();
            let record = if present { RemoteRecord::Present { hash: record, ended } } else { RemoteRecord::Missing };
            let inputs = SyncInputs { rkey: &rkey, record, ever_bound: bound, spec, last, mode };
            let first = decide(&inputs);
            prop_assert_eq!(first, decide(&inputs.clone()));
            if mode == Publish {
                prop_assert!(!matches!(first, Pull | Delete | Conflict | Absent));
            }
            if mode.is_read_only() {
                prop_assert!(!matches!(first, Push | Create | Delete | Conflict));
            }
        }
    }
}
