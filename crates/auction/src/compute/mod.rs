//! ComputeContract (SPEC §1, §3): one declared contract's run on the compute market, owned by
//! its Infra or EphemeralInfra. Its spec carries the contract's publishable fields and the
//! release request; its status the market's side: phase, bids, winner, receipt.
//!
//! Invariants: a contract that waits (for bids, a winner, its guest, a release) is in a
//! waiting phase and [`ComputeContractStatus::waiting_for`] says for what; only `Failed` is a
//! failure. The phase history's last entry is the phase now once the controller has looked at
//! the contract ([`ComputeContractStatus::record_phase`]); history and guest events are capped,
//! the oldest dropped, and a guest event is kept once however often it is seen. A contract
//! holds a guest from the moment it has a receipt until it is `Released`
//! ([`ComputeContractStatus::holds_guest`]): such a contract must never be lost or dropped.

use std::fmt;

use serde::{Deserialize, Serialize};
use swdesk_kernel::deployment_kind::DeploymentKind;
use swdesk_kernel::drift::Drift;
use swdesk_kernel::name::Name;
use swdesk_kernel::retry::Backoff;
use swdesk_kernel::secret::SecretRef;
use swdesk_kernel::timestamp::Timestamp;

use crate::flow::Flow;
use crate::secret::SecretsStatus;
use crate::trust::RecordCheck;
use swdesk_lexicon::computer::socialweb::infra::Contract;

pub mod phase;

pub use phase::{ComputePhase, StrongRef};

/// The deployment a ComputeContract belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeploymentRef {
    /// Infra or EphemeralInfra.
    pub kind: DeploymentKind,
    /// The deployment object's name.
    pub name: Name,
}

/// The spec of a ComputeContract.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ComputeContractSpec {
    /// The owning deployment.
    pub deployment: DeploymentRef,
    /// The contract's name in the deployment.
    pub contract: Name,
    /// The contract's publishable fields, as declared.
    pub fields: Contract,
    /// The secrets its guest receives, by reference.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub secrets: Vec<SecretRef>,
    /// Release the guest.
    #[serde(default)]
    pub release: bool,
    /// When the release was last asked for; a newer time sends the release again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub release_requested_at: Option<Timestamp>,
}

/// A bid received for the contract's request for proposals.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Bid {
    /// The bidder's DID.
    pub bidder: String,
    /// The bid record.
    pub record: StrongRef,
    /// When it arrived.
    pub received_at: Timestamp,
    /// Its price as decimal text (`"0.25"`), when the bid names a readable one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<String>,
    /// Why it does not count (a refused bid: its author, signature, RFP or terms did not
    /// check out), one cut line; `None` for a bid that counts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
    /// What was verified of its record (proof, key binding), when it was fetched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checked: Option<RecordCheck>,
}

/// What one bidder asked did with our RFP, as the contract card shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "answer")]
pub enum Answer {
    /// It bid (a bid that counts), at `cost` when the bid names a readable price.
    Bid {
        /// Its price as decimal text.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cost: Option<String>,
    },
    /// It refused our RFP (`rfp`), or its bid does not count: why, one cut and cleaned line.
    Refused {
        /// Whether it refused our RFP (else its bid was refused here).
        rfp: bool,
        /// Why.
        reason: String,
        /// Whether it refused our RFP for our signature (`crate::auction::bids::Declined`'s word).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        signature_untrusted: bool,
    },
    /// Nothing from it (yet, while the window is open).
    NoAnswer,
}

/// A bidder asked, and its answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Asked {
    /// The bidder's DID.
    pub bidder: String,
    /// What it did.
    #[serde(flatten)]
    pub answer: Answer,
}

/// The most phase changes a status keeps.
pub const HISTORY_CAP: usize = 32;
/// The most guest events a status keeps.
pub const EVENTS_CAP: usize = 32;
/// The most refused bids a status keeps (the first ones: a flood adds nothing).
pub const REFUSED_CAP: usize = 32;

/// One change of a contract's phase.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PhaseChange {
    /// The phase entered.
    pub phase: ComputePhase,
    /// When the controller saw it entered.
    pub at: Timestamp,
    /// What the contract said then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// An event the provider reported about the contract's guest (a `market.event`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GuestEvent {
    /// What happened: the payload's NSID after `compute.events.` (`vm.started`,
    /// `vm.onNetwork`), or the whole NSID of another kind.
    pub kind: String,
    /// When it happened, as the payload says (else when it was seen).
    pub at: Timestamp,
    /// What it tells (the guest's address on the network), when anything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// The `market.event` record's at-uri: the same event is kept once.
    pub uri: String,
}

/// The status of a ComputeContract.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ComputeContractStatus {
    /// Where the contract is.
    #[serde(default)]
    pub phase: ComputePhase,
    /// The winning bidder's DID.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub winner: Option<String>,
    /// The winner's market receipt: from now on the contract holds a guest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receipt: Option<StrongRef>,
    /// What was verified of the receipt's record (proof, key binding), once it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receipt_checked: Option<RecordCheck>,
    /// The bids received.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bids: Vec<Bid>,
    /// What it waits for, or why it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The release request the runner last acted on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub release_sent_at: Option<Timestamp>,
    /// The market's durable requester flow ([`crate::flow::Flow`]): each step's result,
    /// persisted before the next step is taken, so a restart resumes the same contract. Absent
    /// until the market starts the contract (and in statuses written before it existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow: Option<crate::flow::Flow>,
    /// The bids that arrived and do not count, each with why, at most [`REFUSED_CAP`]: a
    /// stranger's bid is shown refused with its reason, never silently dropped.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refused_bids: Vec<Bid>,
    /// The guest's events, oldest first, at most [`EVENTS_CAP`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<GuestEvent>,
    /// The phase changes, oldest first, at most [`HISTORY_CAP`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<PhaseChange>,
    /// Consecutive market steps that failed for now (the repo or a peer unreachable or busy);
    /// 0 once a step succeeds. The wait before the next try grows with it ([`FLOW_RETRY`]).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub retries: u32,
    /// The step failing for now and tried again: why, the next try, when it gives up. Absent
    /// once a step succeeds (and in statuses written before it existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retrying: Option<Retrying>,
    /// What the guest has of its secrets: its key and each secret sealed to it.
    #[serde(default, skip_serializing_if = "is_default")]
    pub secrets: SecretsStatus,
    /// What the world says that the records do not, while it is Deployed
    /// ([`swdesk_kernel::drift`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drift: Vec<Drift>,
    /// Every bidder the RFP went to, each with its answer (a bid, a refusal and why, or
    /// nothing), as of the auction's last step: kept after the auction ends.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub asked: Vec<Asked>,
}

fn is_default<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

/// The waits between market steps that failed for now: the kernel's retry rule from 3 s (the
/// pace of a moving flow) doubling to 5 minutes.
pub const FLOW_RETRY: Backoff = Backoff {
    initial: std::time::Duration::from_secs(3),
    cap: std::time::Duration::from_secs(300),
};

fn is_zero(count: &u32) -> bool {
    *count == 0
}

/// A market step that failed for now and is tried again, as the status shows it: the card
/// says "retrying: why; next try at …, gives up at …".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Retrying {
    /// The flow step that fails (`acceptSent`, `releasing`, ...).
    pub step: String,
    /// Why it failed last.
    pub why: String,
    /// When it first failed: its deadline runs from here.
    pub since: Timestamp,
    /// When it is tried next.
    pub next_at: Timestamp,
    /// When it gives up and the contract fails.
    pub gives_up_at: Timestamp,
}

impl Retrying {
    /// What the card says.
    pub fn message(&self) -> String {
        format!(
            "retrying: {}; next try at {}, gives up at {}",
            self.why, self.next_at, self.gives_up_at
        )
    }
}

impl ComputeContractStatus {
    /// How long after `now` the failing market step is tried again; `None` when the last step
    /// did not fail.
    pub fn next_try_in(&self, now: Timestamp) -> Option<std::time::Duration> {
        self.retrying
            .as_ref()
            .map(|retrying| retrying.next_at.since(now))
    }
}

/// What a contract waits for; shown as waiting, never as a failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Waiting {
    /// No bid has arrived yet.
    Bids,
    /// Bids arrived; the winner is not accepted yet.
    Winner,
    /// The winner accepted; the guest is not ready yet.
    Guest,
    /// The release was sent; not confirmed yet.
    Release,
    /// The guest runs; secrets wait to be sealed to its key and delivered.
    Secrets,
}

impl fmt::Display for Waiting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Bids => "waiting for bids",
            Self::Winner => "waiting for the winning bid to be accepted",
            Self::Guest => "waiting for the guest to be ready",
            Self::Release => "waiting for the release to be confirmed",
            Self::Secrets => "waiting to seal its secrets to the guest's key",
        })
    }
}

impl ComputeContractStatus {
    /// What the contract waits for, or `None` when it is not waiting (deployed, released,
    /// failed).
    pub fn waiting_for(&self) -> Option<Waiting> {
        match self.phase {
            ComputePhase::Requesting if self.receipt.is_some() => Some(Waiting::Guest),
            ComputePhase::Requesting if self.bids.is_empty() => Some(Waiting::Bids),
            ComputePhase::Requesting => Some(Waiting::Winner),
            ComputePhase::Releasing => Some(Waiting::Release),
            ComputePhase::Deployed if self.secrets.pending > 0 => Some(Waiting::Secrets),
            ComputePhase::Deployed | ComputePhase::Released | ComputePhase::Failed => None,
        }
    }

    /// What this contract's `secret` waits for, in words; `None` once it is delivered at its
    /// version to the guest key seen last.
    pub fn secret_waits_for(&self, secret: &SecretRef) -> Option<String> {
        let secrets = &self.secrets;
        if secrets.undelivered(std::slice::from_ref(secret)).is_empty() {
            return None;
        }
        Some(match (&secrets.guest_key, &secrets.problem) {
            _ if self.receipt.is_none() => "waiting for the contract to be deployed".to_owned(),
            (None, _) => "waiting for the guest's key".to_owned(),
            (Some(_), Some(problem)) => problem.clone(),
            (Some(_), None) => "waiting to be sealed and delivered".to_owned(),
        })
    }

    /// Whether the flow failed in its release (a refusal that cannot heal, or its deadline
    /// passed): it is sent again only for a newer request.
    pub fn release_gave_up(&self) -> bool {
        matches!(
            self.flow.as_ref().map(|flow| &flow.step),
            Some(crate::flow::Step::Failed {
                release_failed: Some(_),
                ..
            })
        )
    }

    /// Whether a guest may exist: a receipt is held and the release is not confirmed.
    pub fn holds_guest(&self) -> bool {
        self.receipt.is_some() && self.phase != ComputePhase::Released
    }

    /// Whether nothing more will happen without a new request: released or failed.
    pub fn is_finished(&self) -> bool {
        matches!(self.phase, ComputePhase::Released | ComputePhase::Failed)
    }

    /// Appends the phase now to the history, seen `at`, unless the history already ends in it;
    /// the oldest entries go past [`HISTORY_CAP`].
    pub fn record_phase(&mut self, at: Timestamp) {
        if self.history.last().map(|last| last.phase) == Some(self.phase) {
            return;
        }
        self.history.push(PhaseChange {
            phase: self.phase,
            at,
            message: self.message.clone(),
        });
        keep_last(&mut self.history, HISTORY_CAP);
    }

    /// Adds the guest events not kept yet (by their record's uri), in time order; the oldest
    /// go past [`EVENTS_CAP`].
    pub fn add_guest_events(&mut self, events: impl IntoIterator<Item = GuestEvent>) {
        for event in events {
            if !self.events.iter().any(|kept| kept.uri == event.uri) {
                self.events.push(event);
            }
        }
        self.events.sort_by_key(|event| event.at);
        keep_last(&mut self.events, EVENTS_CAP);
    }
}

impl ComputeContractStatus {
    /// Adds the refused bids not kept yet (by their record's uri), up to [`REFUSED_CAP`].
    pub fn add_refused_bids(&mut self, bids: impl IntoIterator<Item = Bid>) {
        for bid in bids {
            let kept = self
                .refused_bids
                .iter()
                .any(|refused| refused.record.uri == bid.record.uri);
            if !kept && self.refused_bids.len() < REFUSED_CAP {
                self.refused_bids.push(bid);
            }
        }
    }

    /// Sets [`Self::asked`] from the flow's auction, while there is one (kept as it was
    /// after): each bidder asked with its counted bid, else its refusal of the RFP, else why
    /// its bid was refused, else no answer.
    pub fn note_answers(&mut self) {
        let Some(auction) = self.flow.as_ref().and_then(Flow::auction) else {
            return;
        };
        let answer = |bidder: &str| {
            if let Some(bid) = self.bids.iter().find(|bid| bid.bidder == bidder) {
                return Answer::Bid {
                    cost: bid.cost.clone(),
                };
            }
            let declined = (auction.declined.iter())
                .find(|no| no.bidder == bidder)
                .map(|no| (true, &no.reason, no.signature_untrusted));
            let refused_bid = (self.refused_bids.iter())
                .find(|bid| bid.bidder == bidder)
                .and_then(|bid| bid.refused.as_ref())
                .map(|reason| (false, reason, false));
            match declined.or(refused_bid) {
                Some((rfp, reason, signature_untrusted)) => Answer::Refused {
                    rfp,
                    reason: reason.clone(),
                    signature_untrusted,
                },
                None => Answer::NoAnswer,
            }
        };
        let asked = auction.asked.iter().map(|asked| Asked {
            answer: answer(&asked.did),
            bidder: asked.did.clone(),
        });
        self.asked = asked.collect();
    }
}

fn keep_last<T>(items: &mut Vec<T>, cap: usize) {
    let excess = items.len().saturating_sub(cap);
    items.drain(..excess);
}

/// A ComputeContract object.
pub type ComputeContractObject =
    swdesk_kernel::object::Object<ComputeContractSpec, ComputeContractStatus>;

#[cfg(test)]
mod tests {
    use super::*;

    fn receipt() -> StrongRef {
        StrongRef {
            uri: "at://did:plc:bidder/com.publicdomainrelay.temp.market.receipt/1".into(),
            cid: "bafy".into(),
        }
    }

    fn bid() -> Bid {
        Bid {
            bidder: "did:plc:bidder".into(),
            record: receipt(),
            received_at: Timestamp::MIN,
            cost: None,
            refused: None,
            checked: None,
        }
    }

    fn second(seconds: i64) -> Timestamp {
        Timestamp::from_unix_millis(1_800_000_000_000 + seconds * 1000).expect("time")
    }

    fn event(uri: &str, seconds: i64) -> GuestEvent {
        GuestEvent {
            kind: "vm.started".into(),
            at: second(seconds),
            detail: None,
            uri: uri.into(),
        }
    }

    #[test]
    fn a_status_stored_before_retries_had_deadlines_still_reads() {
        let stored = r#"{"phase":"Failed","retries":3,"message":"x; retry in 12 s",
            "flow":{"startedAt":"2026-12-05T10:00:00.000Z",
                "step":{"step":"failed","reason":"x","held":null}}}"#;
        let status: ComputeContractStatus = serde_json::from_str(stored).expect("reads");
        assert_eq!((status.retries, status.retrying.clone()), (3, None));
        assert_eq!(status.next_try_in(second(0)), None);
        assert!(!status.release_gave_up());
    }

    #[test]
    fn a_secret_says_what_it_waits_for_until_it_is_delivered() {
        let secret = SecretRef {
            name: "db".into(),
            keychain_entry: "secret/Infra/web/db".into(),
            contracts: Vec::new(),
            version: 1,
        };
        let mut status = ComputeContractStatus::default();
        let waits = |status: &ComputeContractStatus| status.secret_waits_for(&secret);
        assert_eq!(
            waits(&status).as_deref(),
            Some("waiting for the contract to be deployed")
        );
        status.receipt = Some(receipt());
        assert_eq!(
            waits(&status).as_deref(),
            Some("waiting for the guest's key")
        );
        status.secrets.guest_key = Some(crate::secret::GuestKey {
            recipient: "age1guest".into(),
            event: "at://did:plc:bidder/com.publicdomainrelay.temp.market.event/1".into(),
            seen_at: second(0),
            checked: None,
        });
        assert_eq!(
            waits(&status).as_deref(),
            Some("waiting to be sealed and delivered")
        );
        status.secrets.problem = Some("the provider did not answer".into());
        assert_eq!(
            waits(&status).as_deref(),
            Some("the provider did not answer")
        );
    }

    #[test]
    fn a_phase_change_is_recorded_once_with_its_message() {
        let mut status = ComputeContractStatus {
            message: Some("waiting for bids".into()),
            ..Default::default()
        };
        status.record_phase(second(1));
        status.record_phase(second(2));
        assert_eq!(status.history.len(), 1, "no change appends nothing");
        status.phase = ComputePhase::Deployed;
        status.message = Some("deployed".into());
        status.record_phase(second(3));
        let phases: Vec<_> = status.history.iter().map(|change| change.phase).collect();
        assert_eq!(phases, [ComputePhase::Requesting, ComputePhase::Deployed]);
        assert_eq!(status.history[0].at, second(1));
        assert_eq!(status.history[1].message.as_deref(), Some("deployed"));
    }

    #[test]
    fn the_history_keeps_the_latest_changes_up_to_its_cap() {
        let mut status = ComputeContractStatus::default();
        let phases = [ComputePhase::Requesting, ComputePhase::Failed];
        for step in 0..(HISTORY_CAP as i64 + 5) {
            status.phase = phases[usize::try_from(step).expect("small") % 2];
            status.record_phase(second(step));
        }
        assert_eq!(status.history.len(), HISTORY_CAP);
        assert_eq!(
            status.history.last().map(|c| c.at),
            Some(second(HISTORY_CAP as i64 + 4))
        );
        assert_eq!(status.history[0].at, second(5));
    }

    #[test]
    fn guest_events_are_kept_once_in_time_order_up_to_their_cap() {
        let mut status = ComputeContractStatus::default();
        status.add_guest_events([event("at://e/2", 2), event("at://e/1", 1)]);
        status.add_guest_events([event("at://e/2", 2)]);
        let uris: Vec<_> = status.events.iter().map(|e| e.uri.as_str()).collect();
        assert_eq!(
            uris,
            ["at://e/1", "at://e/2"],
            "a redo does not double them"
        );
        status.add_guest_events(
            (3..(EVENTS_CAP as i64 + 10)).map(|n| event(&format!("at://e/{n}"), n)),
        );
        assert_eq!(status.events.len(), EVENTS_CAP);
        assert_eq!(
            status.events.last().map(|e| e.at),
            Some(second(EVENTS_CAP as i64 + 9))
        );
    }

    #[test]
    fn a_flood_of_refused_bids_keeps_the_first_32_each_once() {
        let refused = |n: usize| Bid {
            record: StrongRef {
                uri: format!("at://did:plc:bidder/com.publicdomainrelay.temp.market.bid/{n}"),
                cid: "bafy".into(),
            },
            refused: Some("its signature does not verify".into()),
            ..bid()
        };
        let mut status = ComputeContractStatus::default();
        status.add_refused_bids([refused(0), refused(0), refused(1)]);
        assert_eq!(status.refused_bids.len(), 2, "a bid is kept once");
        status.add_refused_bids((0..10_000).map(refused));
        assert_eq!(status.refused_bids.len(), REFUSED_CAP);
        assert_eq!(REFUSED_CAP, 32);
        let kept: Vec<_> = status.refused_bids.iter().map(|b| &b.record.uri).collect();
        assert!(kept[0].ends_with("/0") && kept[1].ends_with("/1"));
        assert!(kept[31].ends_with("/31"), "the first ones, in order");
    }

    #[test]
    fn a_status_written_before_events_history_and_costs_reads_back_empty() {
        let old: ComputeContractStatus = serde_json::from_str(
            r#"{"phase":"Deployed","bids":[{"bidder":"did:plc:b","record":{"uri":"at://x","cid":"c"},"receivedAt":"2027-01-15T08:00:00Z"}]}"#,
        )
        .expect("an older status reads");
        assert!(old.events.is_empty() && old.history.is_empty());
        assert_eq!(old.bids[0].cost, None);
        let text = serde_json::to_string(&old).expect("json");
        assert!(!text.contains("history") && !text.contains("events") && !text.contains("cost"));
    }

    #[test]
    fn a_request_without_bids_is_waiting_for_bids() {
        let status = ComputeContractStatus::default();
        assert_eq!(status.waiting_for(), Some(Waiting::Bids));
        assert_eq!(
            status.waiting_for().unwrap().to_string(),
            "waiting for bids"
        );
    }

    #[test]
    fn a_request_with_bids_waits_for_its_winner_then_its_guest() {
        let bids = ComputeContractStatus {
            bids: vec![bid()],
            ..Default::default()
        };
        let accepted = ComputeContractStatus {
            receipt: Some(receipt()),
            ..bids.clone()
        };
        assert_eq!(bids.waiting_for(), Some(Waiting::Winner));
        assert_eq!(accepted.waiting_for(), Some(Waiting::Guest));
    }

    #[test]
    fn a_failed_contract_is_not_waiting() {
        let failed = ComputeContractStatus {
            phase: ComputePhase::Failed,
            ..Default::default()
        };
        assert_eq!(failed.waiting_for(), None);
        assert!(failed.is_finished());
    }

    #[test]
    fn a_status_without_a_flow_reads_back_and_one_with_a_flow_round_trips() {
        let old: ComputeContractStatus =
            serde_json::from_str(r#"{"phase":"Requesting","message":"waiting for bids"}"#)
                .expect("an older status reads");
        assert_eq!(old.flow, None);
        assert!(!serde_json::to_string(&old).expect("json").contains("flow"));
        let started = Timestamp::from_unix_millis(1_800_000_000_000).expect("time");
        let with_flow = ComputeContractStatus {
            flow: Some(crate::flow::Flow::start(started)),
            ..old
        };
        let text = serde_json::to_string(&with_flow).expect("json");
        let back: ComputeContractStatus = serde_json::from_str(&text).expect("reads back");
        assert_eq!(back, with_flow);
    }

    #[test]
    fn a_receipt_holds_a_guest_until_the_release_is_confirmed() {
        let mut status = ComputeContractStatus {
            receipt: Some(receipt()),
            ..Default::default()
        };
        for phase in [
            ComputePhase::Requesting,
            ComputePhase::Deployed,
            ComputePhase::Releasing,
            ComputePhase::Failed,
        ] {
            status.phase = phase;
            assert!(status.holds_guest(), "{phase:?}");
        }
        status.phase = ComputePhase::Released;
        assert!(!status.holds_guest());
        assert!(!ComputeContractStatus::default().holds_guest());
    }
}
