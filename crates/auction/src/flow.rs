//! The durable requester flow of one contract: an enum of its steps, each holding what must
//! survive a restart, the next thing to do at each step ([`Flow::next`]), and the transition
//! an outcome makes ([`Flow::apply`]). The adapter does what `next` says, then persists the
//! flow `apply` returns before anything else; a restarted app reads the flow back and does the
//! same `next` again.
//!
//! Steps: `Planned` → `VmWritten` → `PolicyWritten` → `RfpWritten` → `RfpSent` (bids counted
//! as they come) → `BidsCollected` → `WinnerChosen` (a free bid: this requester does not pay;
//! or `Rejected`: no free bid) → free settlement
//! (`FreeAcceptWritten` → `GrantReceived`) → `AcceptWritten` → `AcceptSent` (the receipt is
//! known: a guest may run) → `ReceiptVerified` → `Deployed` (the guest is on the network);
//! `Releasing` → `Released`; `Failed` from anywhere, keeping the receipt if there is one.
//!
//! Invariants:
//! - records are written under [`record_key`]s fixed by the flow's start and the record's role,
//!   so redoing a write after a crash rewrites the same record: never a second RFP or accept;
//! - once the receipt is known, every later step keeps it until `Released`, so a guest can
//!   always be released ([`Flow::receipt`]);
//! - a release asked before the accept is written ends the flow at once (no guest can exist); a
//!   release asked while the accept is on its way waits for its answer, then releases; a
//!   release that failed is sent again only for a newer request;
//! - an outcome that does not fit the step is refused ([`InvalidTransition`]), never guessed at.

use serde::{Deserialize, Serialize};
use swdesk_kernel::timestamp::Timestamp;

use super::bids::{Auction, CountedBid, Decision, Declined, decide, winner};
use super::trust::RecordCheck;
use crate::compute::phase::{ComputePhase, StrongRef};

/// The winning bid and the auction it won.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Won {
    /// Our RFP.
    pub rfp: StrongRef,
    /// The winning bid.
    pub winner: CountedBid,
    /// How many bids counted.
    pub bid_count: usize,
}

/// The provider's receipt: from here on the contract holds a guest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Held {
    /// The receipt record.
    pub receipt: StrongRef,
    /// Where events about it are sent (`submitEvent`).
    pub submit_event: String,
    /// The winning bidder.
    pub bidder: String,
    /// What was verified of the receipt (proof, key binding), once it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checked: Option<RecordCheck>,
}

/// One step of the flow with what it persists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    tag = "step",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum Step {
    /// Nothing written yet.
    Planned,
    /// The `compute.vm` payload is written.
    VmWritten {
        /// The payload.
        vm: StrongRef,
    },
    /// The policy is written (or the request is open).
    PolicyWritten {
        /// The payload.
        vm: StrongRef,
        /// The policy record, if any.
        policy: Option<StrongRef>,
    },
    /// The RFP is written.
    RfpWritten {
        /// The RFP.
        rfp: StrongRef,
    },
    /// The RFP went to the bidders; bids are counted as they come.
    RfpSent {
        /// The auction.
        auction: Auction,
        /// Counted bids, in arrival order.
        bids: Vec<CountedBid>,
    },
    /// The window closed (or `firstFree` fired): no more bids count.
    BidsCollected {
        /// The auction.
        auction: Auction,
        /// Counted bids, in arrival order.
        bids: Vec<CountedBid>,
    },
    /// A winner was chosen.
    WinnerChosen(Won),
    /// The requester accepted the free terms (`accepts.free`).
    FreeAcceptWritten {
        /// The auction's result.
        won: Won,
        /// The `accepts.free` record.
        free_accept: StrongRef,
    },
    /// The bidder granted them (`receipts.free`), or its terms name no grant endpoint (the
    /// public implementation settles free terms without one: the accept then has no payload).
    GrantReceived {
        /// The auction's result.
        won: Won,
        /// The `receipts.free` record: the accept's payload, if the terms asked for one.
        #[serde(default)]
        grant: Option<StrongRef>,
    },
    /// The `market.accept` is written.
    AcceptWritten {
        /// The auction's result.
        won: Won,
        /// The accept.
        accept: StrongRef,
    },
    /// The bidder answered `submitAccept` with its receipt.
    AcceptSent {
        /// The auction's result.
        won: Won,
        /// The accept.
        accept: StrongRef,
        /// The receipt.
        held: Held,
    },
    /// The receipt matches the deal; the guest is coming up.
    ReceiptVerified {
        /// The receipt.
        held: Held,
        /// When it verified: the guest's ready timeout runs from here.
        verified_at: Timestamp,
    },
    /// The guest is on the network.
    Deployed {
        /// The receipt.
        held: Held,
    },
    /// The release is under way.
    Releasing {
        /// The receipt.
        held: Held,
        /// The release request acted on.
        requested_at: Timestamp,
        /// The `compute.events.vm.delete` record, once written.
        delete: Option<StrongRef>,
        /// The `market.event` record, once written.
        event: Option<StrongRef>,
    },
    /// Done: no guest is held.
    Released {
        /// The receipt of the guest that was released, if there was one.
        receipt: Option<StrongRef>,
    },
    /// No free bid counted (none at all, or paid offers only).
    Rejected {
        /// Why.
        reason: String,
    },
    /// Something failed; a held receipt is kept so the guest can be released.
    Failed {
        /// Why.
        reason: String,
        /// The receipt, when a guest may exist.
        held: Option<Held>,
        /// The release request whose release failed: asking again at that time does not
        /// send it again; a newer request does.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        release_failed: Option<Timestamp>,
    },
}

impl Step {
    /// The step's name, as statuses, errors and tests call it (`rfpSent`, `deployed`, ...).
    pub fn name(&self) -> &'static str {
        match self {
            Step::Planned => "planned",
            Step::VmWritten { .. } => "vmWritten",
            Step::PolicyWritten { .. } => "policyWritten",
            Step::RfpWritten { .. } => "rfpWritten",
            Step::RfpSent { .. } => "rfpSent",
            Step::BidsCollected { .. } => "bidsCollected",
            Step::WinnerChosen(_) => "winnerChosen",
            Step::FreeAcceptWritten { .. } => "freeAcceptWritten",
            Step::GrantReceived { .. } => "grantReceived",
            Step::AcceptWritten { .. } => "acceptWritten",
            Step::AcceptSent { .. } => "acceptSent",
            Step::ReceiptVerified { .. } => "receiptVerified",
            Step::Deployed { .. } => "deployed",
            Step::Releasing { .. } => "releasing",
            Step::Released { .. } => "released",
            Step::Rejected { .. } => "rejected",
            Step::Failed { .. } => "failed",
        }
    }
}

/// The role of a record the flow writes: part of its record key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordRole {
    /// `compute.vm`.
    Vm = 1,
    /// The policy record.
    Policy = 2,
    /// `market.rfp`.
    Rfp = 3,
    /// `market.accepts.free`.
    FreeAccept = 4,
    /// `market.accept`.
    Accept = 5,
    /// `compute.events.vm.delete`.
    Delete = 6,
    /// `market.event`.
    Event = 7,
    /// `computer.socialweb.secret.sealed`, a secret sealed to the guest.
    SealedSecret = 8,
    /// The `market.event` that delivers a sealed secret.
    SecretEvent = 9,
}

/// What the adapter does next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next {
    /// Write a record of this role (under [`record_key`]).
    Write(RecordRole),
    /// Discover bidders and send them the RFP (`submitRfp`).
    SendRfp,
    /// Keep counting bids until then.
    CollectBidsUntil(Timestamp),
    /// Close the window: the auction decides.
    CloseBidding,
    /// Choose the winner of the collected bids.
    ChooseWinner,
    /// Fetch the bidder's `receipts.free` for our `accepts.free`.
    FetchGrant,
    /// Call `submitAccept` at the winning bid's service.
    SendAccept,
    /// Fetch and verify the receipt.
    VerifyReceipt,
    /// Wait for the guest's `vm.onNetwork` (or its timeout).
    AwaitGuest,
    /// Call `submitEvent` with the release event.
    SendRelease,
    /// Nothing: the flow rests here.
    Rest,
}

/// The outcome of what the adapter did (or of what arrived).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// A record of this role was written.
    Written(RecordRole, StrongRef),
    /// The request is open: no policy record.
    NoPolicy,
    /// The RFP was sent to the asked bidders.
    RfpSent(Auction),
    /// A bid counted.
    BidCounted(CountedBid),
    /// A bidder refused the RFP, saying why.
    Declined(Declined),
    /// The auction's decision at the time it was taken.
    Decided(Decision),
    /// The bidder's `receipts.free`, or `None` when its free terms name no grant endpoint.
    GrantReceived(Option<StrongRef>),
    /// The bidder's answer to `submitAccept`.
    AcceptAnswered(Held),
    /// The receipt verified at this time, and what was verified of its record.
    ReceiptVerified(Timestamp, RecordCheck),
    /// The guest reported `vm.onNetwork`.
    GuestReady,
    /// The bidder acknowledged the release event.
    ReleaseAcknowledged,
    /// The owner asked for the release at this time.
    ReleaseRequested(Timestamp),
    /// The step failed for good.
    Failed(String),
}

/// An outcome that does not fit the step.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{outcome} does not fit the step {step}")]
pub struct InvalidTransition {
    /// The step's name.
    pub step: &'static str,
    /// The outcome, described.
    pub outcome: String,
}

/// One contract's flow: where it is, and the release asked for while it is on its way.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Flow {
    /// When the flow started: fixes its record keys.
    pub started_at: Timestamp,
    /// Where it is.
    pub step: Step,
    /// A release asked while the accept was on its way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub release_pending: Option<Timestamp>,
}

impl Flow {
    /// A new flow, started at `now`.
    pub fn start(now: Timestamp) -> Self {
        Self {
            started_at: now,
            step: Step::Planned,
            release_pending: None,
        }
    }

    /// What to do next at `now`.
    pub fn next(&self, now: Timestamp) -> Next {
        match &self.step {
            Step::Planned => Next::Write(RecordRole::Vm),
            Step::VmWritten { .. } => Next::Write(RecordRole::Policy),
            Step::PolicyWritten { .. } => Next::Write(RecordRole::Rfp),
            Step::RfpWritten { .. } => Next::SendRfp,
            Step::RfpSent { auction, bids } => match decide(auction, bids, now) {
                Decision::CollectUntil(until) => Next::CollectBidsUntil(until),
                _ => Next::CloseBidding,
            },
            Step::BidsCollected { .. } => Next::ChooseWinner,
            Step::WinnerChosen(_) => Next::Write(RecordRole::FreeAccept),
            Step::FreeAcceptWritten { .. } => Next::FetchGrant,
            Step::GrantReceived { .. } => Next::Write(RecordRole::Accept),
            Step::AcceptWritten { .. } => Next::SendAccept,
            Step::AcceptSent { .. } => Next::VerifyReceipt,
            Step::ReceiptVerified { .. } => Next::AwaitGuest,
            Step::Releasing { delete: None, .. } => Next::Write(RecordRole::Delete),
            Step::Releasing { event: None, .. } => Next::Write(RecordRole::Event),
            Step::Releasing { .. } => Next::SendRelease,
            Step::Deployed { .. }
            | Step::Released { .. }
            | Step::Rejected { .. }
            | Step::Failed { .. } => Next::Rest,
        }
    }

    /// The flow after `outcome`; persist it before acting on it.
    pub fn apply(mut self, outcome: Outcome) -> Result<Self, InvalidTransition> {
        match outcome {
            Outcome::ReleaseRequested(at) => Ok(self.release(at)),
            Outcome::Failed(reason) if self.is_finished() => Err(InvalidTransition {
                step: self.step.name(),
                outcome: format!("Failed({reason:?})"),
            }),
            Outcome::Failed(reason) => {
                let held = self.held().cloned();
                let release_failed = match &self.step {
                    Step::Releasing { requested_at, .. } => Some(*requested_at),
                    _ => None,
                };
                self.step = Step::Failed {
                    reason,
                    held,
                    release_failed,
                };
                Ok(self)
            }
            outcome => {
                let pending = self.release_pending;
                let step = advance(self.step, outcome)?;
                self.step = step;
                Ok(match (pending, self.held().is_some()) {
                    (Some(at), true) => self.release(at),
                    _ => self,
                })
            }
        }
    }

    /// Whether nothing more happens without a new release request: released, rejected or
    /// failed.
    pub fn is_finished(&self) -> bool {
        matches!(
            self.step,
            Step::Released { .. } | Step::Rejected { .. } | Step::Failed { .. }
        )
    }

    /// The auction under way, while bids are counted (until the winner is chosen).
    pub fn auction(&self) -> Option<&Auction> {
        match &self.step {
            Step::RfpSent { auction, .. } | Step::BidsCollected { auction, .. } => Some(auction),
            _ => None,
        }
    }

    /// The receipt of the guest this flow may hold.
    pub fn held(&self) -> Option<&Held> {
        held_in(&self.step)
    }

    /// When the guest must be on the network (`vmReadyTimeoutSec` after the receipt verified);
    /// past it, the adapter fails the flow (keeping the receipt, so it can be released).
    pub fn guest_deadline(&self, ready_timeout: std::time::Duration) -> Option<Timestamp> {
        match &self.step {
            Step::ReceiptVerified { verified_at, .. } => {
                Some(verified_at.saturating_add(ready_timeout))
            }
            _ => None,
        }
    }

    /// The receipt, while a guest may exist.
    pub fn receipt(&self) -> Option<&StrongRef> {
        self.held().map(|held| &held.receipt)
    }

    /// The contract phase this step shows.
    pub fn phase(&self) -> ComputePhase {
        match &self.step {
            Step::Deployed { .. } => ComputePhase::Deployed,
            Step::Releasing { .. } => ComputePhase::Releasing,
            Step::Released { .. } => ComputePhase::Released,
            Step::Rejected { .. } | Step::Failed { .. } => ComputePhase::Failed,
            _ => ComputePhase::Requesting,
        }
    }

    /// The flow after a release asked at `at` (see the module's invariants).
    fn release(mut self, at: Timestamp) -> Self {
        self.release_pending = None;
        let step = std::mem::replace(&mut self.step, Step::Planned);
        self.step = match step {
            Step::Releasing { requested_at, .. } if at <= requested_at => step,
            Step::Failed {
                release_failed: Some(failed),
                ..
            } if at <= failed => step,
            Step::Released { .. } => step,
            Step::AcceptWritten { .. } => {
                self.release_pending = Some(at);
                step
            }
            step => match held_in(&step).cloned() {
                Some(held) => Step::Releasing {
                    held,
                    requested_at: at,
                    delete: None,
                    event: None,
                },
                None => Step::Released { receipt: None },
            },
        };
        self
    }
}

fn held_in(step: &Step) -> Option<&Held> {
    match step {
        Step::AcceptSent { held, .. }
        | Step::ReceiptVerified { held, .. }
        | Step::Deployed { held }
        | Step::Releasing { held, .. } => Some(held),
        Step::Failed { held, .. } => held.as_ref(),
        _ => None,
    }
}

/// The step after `outcome` at `step` (release and failure are handled by [`Flow::apply`]).
fn advance(step: Step, outcome: Outcome) -> Result<Step, InvalidTransition> {
    use RecordRole as Role;
    Ok(match (step, outcome) {
        (Step::Planned, Outcome::Written(Role::Vm, vm)) => Step::VmWritten { vm },
        (Step::VmWritten { vm }, Outcome::Written(Role::Policy, policy)) => Step::PolicyWritten {
            vm,
            policy: Some(policy),
        },
        (Step::VmWritten { vm }, Outcome::NoPolicy) => Step::PolicyWritten { vm, policy: None },
        (Step::PolicyWritten { .. }, Outcome::Written(Role::Rfp, rfp)) => Step::RfpWritten { rfp },
        (Step::RfpWritten { rfp }, Outcome::RfpSent(auction)) if auction.rfp == rfp => {
            Step::RfpSent {
                auction,
                bids: Vec::new(),
            }
        }
        (Step::RfpSent { auction, mut bids }, Outcome::BidCounted(bid)) => {
            if !bids.iter().any(|known| known.bid.uri == bid.bid.uri) {
                bids.push(bid);
            }
            Step::RfpSent { auction, bids }
        }
        (Step::RfpSent { mut auction, bids }, Outcome::Declined(declined)) => {
            auction.keep_declined(declined);
            Step::RfpSent { auction, bids }
        }
        (Step::RfpSent { auction, bids }, Outcome::Decided(decision)) => match decision {
            Decision::CollectUntil(_) => Step::RfpSent { auction, bids },
            _ => Step::BidsCollected { auction, bids },
        },
        (Step::BidsCollected { auction, bids }, Outcome::Decided(decision)) => {
            chosen(auction, bids, decision)?
        }
        (Step::WinnerChosen(won), Outcome::Written(Role::FreeAccept, free_accept)) => {
            Step::FreeAcceptWritten { won, free_accept }
        }
        (Step::FreeAcceptWritten { won, .. }, Outcome::GrantReceived(grant)) => {
            Step::GrantReceived { won, grant }
        }
        (Step::GrantReceived { won, .. }, Outcome::Written(Role::Accept, accept)) => {
            Step::AcceptWritten { won, accept }
        }
        (Step::AcceptWritten { won, accept }, Outcome::AcceptAnswered(held)) => {
            Step::AcceptSent { won, accept, held }
        }
        (Step::AcceptSent { held, .. }, Outcome::ReceiptVerified(verified_at, checked)) => {
            Step::ReceiptVerified {
                held: Held {
                    checked: Some(checked),
                    ..held
                },
                verified_at,
            }
        }
        (Step::ReceiptVerified { held, .. }, Outcome::GuestReady) => Step::Deployed { held },
        (step @ Step::Deployed { .. }, Outcome::GuestReady) => step,
        (
            Step::Releasing {
                held,
                requested_at,
                event,
                ..
            },
            Outcome::Written(Role::Delete, delete),
        ) => Step::Releasing {
            held,
            requested_at,
            delete: Some(delete),
            event,
        },
        (
            Step::Releasing {
                held,
                requested_at,
                delete: Some(delete),
                ..
            },
            Outcome::Written(Role::Event, event),
        ) => Step::Releasing {
            held,
            requested_at,
            delete: Some(delete),
            event: Some(event),
        },
        (
            Step::Releasing {
                held,
                event: Some(_),
                ..
            },
            Outcome::ReleaseAcknowledged,
        ) => Step::Released {
            receipt: Some(held.receipt),
        },
        (step, outcome) => {
            return Err(InvalidTransition {
                step: step.name(),
                outcome: format!("{outcome:?}"),
            });
        }
    })
}

/// The step a decision on the collected bids makes: only a collected free bid can win (this
/// requester does not pay), and a rejection fits only when no free bid was collected.
fn chosen(
    auction: Auction,
    bids: Vec<CountedBid>,
    decision: Decision,
) -> Result<Step, InvalidTransition> {
    match decision {
        Decision::Winner { bid, .. } if bid.free && bids.contains(&bid) => {
            Ok(Step::WinnerChosen(Won {
                rfp: auction.rfp,
                winner: bid,
                bid_count: bids.len(),
            }))
        }
        Decision::Rejected { reason } if winner(&bids).is_none() => Ok(Step::Rejected { reason }),
        decision => Err(InvalidTransition {
            step: "bidsCollected",
            outcome: format!("{decision:?}"),
        }),
    }
}

/// The record key (a TID) of the record of `role` written by the flow started at `started_at`;
/// a release's records take the release request's time instead, so a newer request writes new
/// records. The same inputs always give the same key.
pub fn record_key(at: Timestamp, role: RecordRole) -> String {
    const ALPHABET: &[u8; 32] = b"234567abcdefghijklmnopqrstuvwxyz";
    let micros = u64::try_from(at.unix_millis())
        .unwrap_or(0)
        .saturating_mul(1000)
        & ((1 << 53) - 1);
    let value = (micros << 10) | role as u64;
    (0..13)
        .rev()
        .map(|index| char::from(ALPHABET[((value >> (index * 5)) & 31) as usize]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bids::{Cost, WinReason};
    use crate::request::Bidding;
    use proptest::prelude::*;
    use std::time::Duration;

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_unix_millis(1_800_000_000_000 + seconds * 1000).expect("time")
    }

    fn strong(name: &str) -> StrongRef {
        StrongRef {
            uri: format!("at://did:plc:owner/com.example.{name}/3lbjpbyznfc2a"),
            cid: format!("bafy{name}"),
        }
    }

    fn auction() -> Auction {
        let bidding = Bidding {
            window: Duration::from_secs(30),
            first_free: false,
        };
        Auction::asking(strong("rfp"), &["did:plc:bidder"], at(0), bidding)
    }

    /// The flow of [`auction`] collecting, no bid counted yet.
    fn collecting() -> Flow {
        Flow {
            started_at: at(0),
            step: Step::RfpSent {
                auction: auction(),
                bids: Vec::new(),
            },
            release_pending: None,
        }
    }

    fn bid(name: &str, second: i64) -> CountedBid {
        CountedBid {
            bidder: "did:plc:bidder".into(),
            bid: strong(name),
            terms: strong("terms"),
            cost: Cost::Nanos(0),
            free: true,
            submit_accept: Some("did:web:bidder#temp_market".into()),
            received_at: at(second),
            checked: None,
        }
    }

    fn held() -> Held {
        Held {
            receipt: strong("receipt"),
            submit_event: "did:web:bidder#compute_event".into(),
            bidder: "did:plc:bidder".into(),
            checked: None,
        }
    }

    fn proven() -> RecordCheck {
        RecordCheck {
            provenance: swdesk_kernel::repo::Provenance::Proven { rev: "3l2".into() },
            bindings: Vec::new(),
            linked: Vec::new(),
        }
    }

    /// The outcome an adapter reports for `next`, when everything goes well.
    fn happy_outcome(flow: &Flow, next: &Next) -> Option<Outcome> {
        if let Step::RfpSent { bids, .. } = &flow.step
            && bids.is_empty()
        {
            return Some(Outcome::BidCounted(bid("bid", 3)));
        }
        Some(match next {
            Next::Write(RecordRole::Policy) => Outcome::NoPolicy,
            Next::Write(role) => {
                Outcome::Written(*role, strong(&format!("{role:?}").to_lowercase()))
            }
            Next::SendRfp => Outcome::RfpSent(auction()),
            Next::CollectBidsUntil(_) => Outcome::BidCounted(bid("bid", 3)),
            Next::CloseBidding | Next::ChooseWinner => {
                let (Step::RfpSent { auction, bids } | Step::BidsCollected { auction, bids }) =
                    &flow.step
                else {
                    return None;
                };
                Outcome::Decided(decide(auction, bids, at(30)))
            }
            Next::FetchGrant => Outcome::GrantReceived(Some(strong("grant"))),
            Next::SendAccept => Outcome::AcceptAnswered(held()),
            Next::VerifyReceipt => Outcome::ReceiptVerified(at(40), proven()),
            Next::AwaitGuest => Outcome::GuestReady,
            Next::SendRelease => Outcome::ReleaseAcknowledged,
            Next::Rest => return None,
        })
    }

    /// Runs the flow the happy way from `flow`; returns every step it went through.
    fn run(mut flow: Flow, now: Timestamp) -> Vec<Flow> {
        let mut seen = vec![flow.clone()];
        for _ in 0..64 {
            let next = flow.next(now);
            let Some(outcome) = happy_outcome(&flow, &next) else {
                break;
            };
            flow = flow.apply(outcome).expect("fits");
            seen.push(flow.clone());
        }
        seen
    }

    fn names(flows: &[Flow]) -> Vec<&'static str> {
        let mut names: Vec<&'static str> = flows.iter().map(|f| f.step.name()).collect();
        names.dedup();
        names
    }

    #[test]
    fn a_contract_goes_through_every_step_in_order_to_deployed() {
        let flows = run(Flow::start(at(0)), at(30));
        assert_eq!(
            names(&flows),
            [
                "planned",
                "vmWritten",
                "policyWritten",
                "rfpWritten",
                "rfpSent",
                "bidsCollected",
                "winnerChosen",
                "freeAcceptWritten",
                "grantReceived",
                "acceptWritten",
                "acceptSent",
                "receiptVerified",
                "deployed"
            ]
        );
        let deployed = flows.last().expect("a last step");
        assert_eq!(deployed.phase(), ComputePhase::Deployed);
        assert_eq!(deployed.receipt(), Some(&strong("receipt")));
    }

    #[test]
    fn before_the_window_closes_the_flow_keeps_collecting_and_counts_a_bid_once() {
        let flow = collecting();
        assert_eq!(flow.next(at(10)), Next::CollectBidsUntil(at(30)));
        let flow = flow.apply(Outcome::BidCounted(bid("b", 3))).expect("fits");
        let flow = flow.apply(Outcome::BidCounted(bid("b", 4))).expect("fits");
        let Step::RfpSent { bids, .. } = &flow.step else {
            panic!("still collecting");
        };
        assert_eq!(bids.len(), 1);
        assert_eq!(flow.next(at(30)), Next::CloseBidding);
    }

    #[test]
    fn no_bids_rejects_the_contract_with_the_reason() {
        let flow = Flow {
            started_at: at(0),
            step: Step::BidsCollected {
                auction: auction(),
                bids: Vec::new(),
            },
            release_pending: None,
        };
        let decision = decide(&auction(), &[], at(30));
        let flow = flow.apply(Outcome::Decided(decision)).expect("fits");
        assert!(matches!(&flow.step, Step::Rejected { reason } if reason.starts_with("no bids")));
        assert_eq!(flow.phase(), ComputePhase::Failed);
    }

    #[test]
    fn a_bidders_refusal_is_kept_with_the_auction_and_named_when_none_bid() {
        let flow = collecting();
        let refusal = Declined {
            bidder: "did:plc:bidder".into(),
            reason: "record is missing a valid badge.blue signature".into(),
            signature_untrusted: true,
        };
        let mut flow = flow.apply(Outcome::Declined(refusal)).expect("fits");
        for _ in 0..2 {
            let (Step::RfpSent { auction, bids } | Step::BidsCollected { auction, bids }) =
                &flow.step
            else {
                panic!("no decision yet");
            };
            let decision = decide(auction, bids, at(30));
            flow = flow.apply(Outcome::Decided(decision)).expect("fits");
        }
        let Step::Rejected { reason } = &flow.step else {
            panic!("rejected");
        };
        assert!(
            reason.ends_with(
                "did:plc:bidder refused the RFP: record is missing a valid badge.blue signature"
            ),
            "{reason}"
        );
    }

    #[test]
    fn a_winner_that_did_not_bid_is_refused() {
        let flow = Flow {
            started_at: at(0),
            step: Step::BidsCollected {
                auction: auction(),
                bids: vec![bid("b", 1)],
            },
            release_pending: None,
        };
        let stranger = Decision::Winner {
            bid: bid("other", 2),
            why: WinReason::LowestCost,
        };
        assert!(flow.apply(Outcome::Decided(stranger)).is_err());
    }

    #[test]
    fn a_release_before_the_accept_ends_at_once_and_after_it_sends_delete_and_event() {
        let flows = run(Flow::start(at(0)), at(30));
        let early = flows[4].clone().apply(Outcome::ReleaseRequested(at(5)));
        assert_eq!(early.map(|f| f.step), Ok(Step::Released { receipt: None }));
        let deployed = flows.last().cloned().expect("deployed");
        let released = run(
            deployed
                .apply(Outcome::ReleaseRequested(at(50)))
                .expect("fits"),
            at(50),
        );
        assert_eq!(names(&released), ["releasing", "released"]);
        let Step::Released { receipt } = &released.last().expect("released").step else {
            panic!("released");
        };
        assert_eq!(receipt.as_ref(), Some(&strong("receipt")));
    }

    #[test]
    fn a_release_asked_while_the_accept_is_on_its_way_waits_for_the_receipt() {
        let flows = run(Flow::start(at(0)), at(30));
        let accept_written = flows
            .iter()
            .find(|f| matches!(f.step, Step::AcceptWritten { .. }))
            .cloned()
            .expect("the step");
        let pending = accept_written
            .apply(Outcome::ReleaseRequested(at(35)))
            .expect("fits");
        assert_eq!(pending.next(at(35)), Next::SendAccept);
        let releasing = pending
            .apply(Outcome::AcceptAnswered(held()))
            .expect("fits");
        assert!(
            matches!(&releasing.step, Step::Releasing { requested_at, .. } if *requested_at == at(35))
        );
        assert_eq!(releasing.release_pending, None);
    }

    #[test]
    fn a_failure_after_the_accept_keeps_the_receipt_and_can_be_released() {
        let flows = run(Flow::start(at(0)), at(30));
        let sent = flows
            .iter()
            .find(|f| matches!(f.step, Step::AcceptSent { .. }))
            .cloned()
            .expect("the step");
        let failed = sent
            .apply(Outcome::Failed("the provider failed".into()))
            .expect("fits");
        assert_eq!(failed.phase(), ComputePhase::Failed);
        assert_eq!(failed.receipt(), Some(&strong("receipt")));
        let releasing = failed
            .apply(Outcome::ReleaseRequested(at(60)))
            .expect("fits");
        assert_eq!(releasing.next(at(60)), Next::Write(RecordRole::Delete));
    }

    fn paid(name: &str, nanos: i128, second: i64) -> CountedBid {
        CountedBid {
            cost: Cost::Nanos(nanos),
            free: false,
            ..bid(name, second)
        }
    }

    fn collected(bids: Vec<CountedBid>) -> Flow {
        Flow {
            started_at: at(0),
            step: Step::BidsCollected {
                auction: auction(),
                bids,
            },
            release_pending: None,
        }
    }

    #[test]
    fn paid_offers_only_reject_the_contract_naming_the_cheapest() {
        let bids = vec![paid("dear", 500_000_000, 1), paid("cheap", 350_000_000, 2)];
        let decision = decide(&auction(), &bids, at(30));
        let flow = collected(bids)
            .apply(Outcome::Decided(decision))
            .expect("fits");
        let Step::Rejected { reason } = &flow.step else {
            panic!("rejected: {:?}", flow.step);
        };
        assert!(
            reason.starts_with("no free bid; cheapest paid offer: 0.35 from did:plc:bidder"),
            "{reason}"
        );
        assert_eq!(flow.phase(), ComputePhase::Failed);
    }

    #[test]
    fn a_free_bid_wins_over_a_cheaper_looking_earlier_paid_offer() {
        let bids = vec![paid("paid", 0, 1), bid("free", 9)];
        let decision = decide(&auction(), &bids, at(30));
        let flow = collected(bids)
            .apply(Outcome::Decided(decision))
            .expect("fits");
        let Step::WinnerChosen(won) = &flow.step else {
            panic!("a winner: {:?}", flow.step);
        };
        assert_eq!((won.winner.bid.clone(), won.bid_count), (strong("free"), 2));
    }

    #[test]
    fn a_paid_winner_or_a_rejection_despite_a_free_bid_is_refused() {
        let paid_won = Decision::Winner {
            bid: paid("paid", 0, 1),
            why: WinReason::LowestCost,
        };
        let refused = collected(vec![paid("paid", 0, 1)]).apply(Outcome::Decided(paid_won));
        assert!(matches!(
            refused,
            Err(InvalidTransition {
                step: "bidsCollected",
                ..
            })
        ));
        let rejected = Decision::Rejected {
            reason: "no free bid".into(),
        };
        let refused = collected(vec![bid("free", 1)]).apply(Outcome::Decided(rejected));
        assert!(refused.is_err());
    }

    #[test]
    fn the_guest_deadline_runs_from_the_verified_receipt() {
        let flows = run(Flow::start(at(0)), at(30));
        let verified = flows
            .iter()
            .find(|f| matches!(f.step, Step::ReceiptVerified { .. }))
            .expect("the step");
        assert_eq!(
            verified.guest_deadline(Duration::from_secs(600)),
            Some(at(640))
        );
        let deployed = flows.last().expect("deployed");
        assert_eq!(deployed.guest_deadline(Duration::from_secs(600)), None);
    }

    #[test]
    fn a_finished_flow_refuses_a_failure_and_keeps_what_it_ended_with() {
        let released = Flow {
            started_at: at(0),
            step: Step::Released {
                receipt: Some(strong("receipt")),
            },
            release_pending: None,
        };
        assert!(
            released
                .clone()
                .apply(Outcome::Failed("late".into()))
                .is_err()
        );
        let again = released.clone().apply(Outcome::ReleaseRequested(at(90)));
        assert_eq!(again, Ok(released));
    }

    /// A deployed flow whose release was asked at `requested`.
    fn deployed_then_released_at(requested: Timestamp) -> Flow {
        let deployed = run(Flow::start(at(0)), at(30)).pop().expect("deployed");
        deployed
            .apply(Outcome::ReleaseRequested(requested))
            .expect("fits")
    }

    #[test]
    fn a_failed_release_is_not_sent_again_for_the_same_request_but_is_for_a_newer_one() {
        let releasing = deployed_then_released_at(at(50));
        let failed = releasing
            .apply(Outcome::Failed("not called: refused".into()))
            .expect("fits");
        assert!(matches!(
            &failed.step,
            Step::Failed { release_failed: Some(at_), held: Some(_), .. } if *at_ == at(50)
        ));
        let same = failed
            .clone()
            .apply(Outcome::ReleaseRequested(at(50)))
            .expect("fits");
        assert_eq!(same, failed, "the same request does not loop");
        let newer = failed
            .apply(Outcome::ReleaseRequested(at(70)))
            .expect("fits");
        assert_eq!(newer.next(at(70)), Next::Write(RecordRole::Delete));
    }

    #[test]
    fn a_newer_release_request_sends_the_release_again_and_an_older_one_does_not() {
        let releasing = deployed_then_released_at(at(50));
        let written = releasing
            .apply(Outcome::Written(RecordRole::Delete, strong("delete")))
            .expect("fits");
        let same = written
            .clone()
            .apply(Outcome::ReleaseRequested(at(50)))
            .expect("fits");
        assert_eq!(same, written);
        let again = written
            .apply(Outcome::ReleaseRequested(at(70)))
            .expect("fits");
        assert_eq!(again.next(at(70)), Next::Write(RecordRole::Delete));
    }

    #[test]
    fn record_keys_are_tids_fixed_by_time_and_role() {
        let key = record_key(at(0), RecordRole::Rfp);
        assert!(swdesk_lexicon::syntax::tid(&key).is_ok(), "{key}");
        assert_eq!(key, record_key(at(0), RecordRole::Rfp));
        assert_ne!(key, record_key(at(0), RecordRole::Accept));
        assert_ne!(key, record_key(at(1), RecordRole::Rfp));
        assert!(record_key(at(0), RecordRole::Rfp) < record_key(at(1), RecordRole::Vm));
    }

    proptest! {
        /// A restart reads the persisted flow back: at every step of any run, with releases
        /// and failures at random points, the flow survives its JSON form unchanged, gives the
        /// same next thing to do, and never loses a receipt until it is released.
        #[test]
        fn a_restart_at_any_step_resumes_the_same_step_and_keeps_the_receipt(
            release_at in prop::option::of(0_usize..20),
            fail_at in prop::option::of(0_usize..20),
        ) {
            let mut flow = Flow::start(at(0));
            let mut receipt_seen = false;
            for index in 0..40 {
                let text = serde_json::to_string(&flow).expect("persists");
                let restored: Flow = serde_json::from_str(&text).expect("reads back");
                prop_assert_eq!(&restored, &flow);
                prop_assert_eq!(restored.next(at(30)), flow.next(at(30)));
                receipt_seen |= flow.receipt().is_some();
                let released = matches!(flow.step, Step::Released { .. });
                prop_assert!(!receipt_seen || released || flow.receipt().is_some());
                let outcome = if Some(index) == release_at {
                    Some(Outcome::ReleaseRequested(at(100)))
                } else if Some(index) == fail_at && !flow.is_finished() {
                    Some(Outcome::Failed("broken".into()))
                } else {
                    happy_outcome(&flow, &flow.next(at(30)))
                };
                let Some(outcome) = outcome else { break };
                flow = flow.apply(outcome).expect("fits");
            }
        }
    }
}
