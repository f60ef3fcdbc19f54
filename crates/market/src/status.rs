//! The ComputeContract status a flow shows: its phase, the winner, the receipt, the bids
//! counted (free and paid, each with its price; only a free bid can win, as this app does not
//! pay), what it waits for (or why it failed), and the flow itself, persisted whole.
//!
//! Every bidder asked has its answer in the status (`asked`: a bid, a refusal and why, or
//! nothing), so the window only renders it.
//!
//! Invariant: the status is a function of the flow and the status before it; a value the flow
//! no longer carries (the bids once a winner is chosen, the winner once only the receipt is
//! held) is kept from the status before, so the window keeps showing it.

use swdesk_auction::bids::{Cost, CountedBid};
use swdesk_auction::compute::{Bid, ComputeContractStatus, Retrying};
use swdesk_auction::flow::{Flow, Step};

/// The status of `flow`, from `before`; `retrying` (a failure being retried, with its next
/// try and its deadline: the auction's `deadline`) replaces the message when there is one,
/// and is counted in `retries`.
pub fn project(
    before: &ComputeContractStatus,
    flow: Flow,
    retrying: Option<Retrying>,
) -> ComputeContractStatus {
    let mut status = before.clone();
    status.phase = flow.phase();
    if let Some(bids) = counted(&flow.step) {
        status.bids = bids;
    }
    if let Some(winner) = winner(&flow.step) {
        status.winner = Some(winner);
    }
    status.receipt = match &flow.step {
        Step::Released { receipt } => receipt.clone(),
        _ => flow.receipt().cloned(),
    };
    if let Some(checked) = flow.held().and_then(|held| held.checked.clone()) {
        status.receipt_checked = Some(checked);
    }
    if let Step::Releasing { requested_at, .. } = &flow.step {
        status.release_sent_at = Some(*requested_at);
    }
    status.retries = match retrying {
        Some(_) => before.retries.saturating_add(1),
        None => 0,
    };
    status.message = Some(match &retrying {
        Some(retrying) => retrying.message(),
        None => message(&flow.step, status.bids.len()),
    });
    status.retrying = retrying;
    status.flow = Some(flow);
    status.note_answers();
    status
}

fn counted(step: &Step) -> Option<Vec<Bid>> {
    match step {
        Step::RfpSent { bids, .. } | Step::BidsCollected { bids, .. } => Some(
            bids.iter()
                .map(|bid| Bid {
                    refused: None,
                    bidder: bid.bidder.clone(),
                    record: bid.bid.clone(),
                    received_at: bid.received_at,
                    cost: priced(bid.cost),
                    checked: bid.checked.as_deref().cloned(),
                })
                .collect(),
        ),
        _ => None,
    }
}

fn priced(cost: Cost) -> Option<String> {
    match cost {
        Cost::Nanos(_) => Some(cost.to_string()),
        Cost::Unknown => None,
    }
}

fn winner(step: &Step) -> Option<String> {
    match step {
        Step::WinnerChosen(won)
        | Step::FreeAcceptWritten { won, .. }
        | Step::GrantReceived { won, .. }
        | Step::AcceptWritten { won, .. } => Some(won.winner.bidder.clone()),
        Step::AcceptSent { held, .. }
        | Step::ReceiptVerified { held, .. }
        | Step::Deployed { held }
        | Step::Releasing { held, .. } => Some(held.bidder.clone()),
        _ => None,
    }
}

fn message(step: &Step, bid_count: usize) -> String {
    match step {
        Step::Planned | Step::VmWritten { .. } | Step::PolicyWritten { .. } => {
            "writing the request (compute.vm, policy, RFP)".to_owned()
        }
        Step::RfpWritten { .. } => "sending the RFP to the bidders".to_owned(),
        Step::RfpSent { auction, bids } => format!(
            "waiting for bids: {} from {} bidder(s) asked; the window closes at {}",
            tally(bids),
            auction.asked.len(),
            auction.closes_at()
        ),
        Step::BidsCollected { bids, .. } => format!("choosing the winner: {}", tally(bids)),
        Step::WinnerChosen(won)
        | Step::FreeAcceptWritten { won, .. }
        | Step::GrantReceived { won, .. }
        | Step::AcceptWritten { won, .. } => {
            format!("accepting the bid of {}", won.winner.bidder)
        }
        Step::AcceptSent { .. } => "verifying the receipt".to_owned(),
        Step::ReceiptVerified { .. } => "waiting for the guest to be on the network".to_owned(),
        Step::Deployed { held } => format!(
            "deployed by {} (receipt {}), the winner of {bid_count} bid(s)",
            held.bidder, held.receipt.uri
        ),
        Step::Releasing { .. } => "releasing: the release is on its way to the provider".to_owned(),
        Step::Released { receipt: Some(_) } => {
            "released: the provider tore the guest down".to_owned()
        }
        Step::Released { receipt: None } => "released before any guest was rented".to_owned(),
        Step::Rejected { reason } | Step::Failed { reason, .. } => reason.clone(),
    }
}

/// `"2 bid(s) counted"`, naming the paid ones when there are any: they cannot win.
fn tally(bids: &[CountedBid]) -> String {
    match bids.iter().filter(|bid| !bid.free).count() {
        0 => format!("{} bid(s) counted", bids.len()),
        paid => format!(
            "{} bid(s) counted, {paid} of them paid (this app does not pay)",
            bids.len()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;
    use swdesk_auction::bids::Auction;
    use swdesk_auction::compute::{ComputePhase, StrongRef};
    use swdesk_auction::flow::Held;
    use swdesk_auction::request::Bidding;
    use swdesk_auction::trust::RecordCheck;
    use swdesk_kernel::repo::Provenance;
    use swdesk_kernel::timestamp::Timestamp;

    fn held() -> Held {
        Held {
            receipt: StrongRef {
                uri: "at://did:plc:bidder/com.publicdomainrelay.temp.market.receipt/3l".into(),
                cid: "bafyreceipt".into(),
            },
            submit_event: "did:web:bidder#compute_event".into(),
            bidder: "did:plc:bidder".into(),
            checked: Some(RecordCheck {
                provenance: Provenance::Proven { rev: "3l2".into() },
                bindings: Vec::new(),
                linked: Vec::new(),
            }),
        }
    }

    fn flow(step: Step) -> Flow {
        Flow {
            step,
            ..Flow::start(Timestamp::from_unix_millis(1_800_000_000_000).expect("time"))
        }
    }

    #[test]
    fn a_deployed_flow_shows_its_winner_receipt_and_the_bids_counted_before() {
        let before = ComputeContractStatus {
            bids: vec![Bid {
                refused: None,
                bidder: "did:plc:bidder".into(),
                record: held().receipt,
                received_at: Timestamp::MIN,
                cost: Some("0.25".into()),
                checked: None,
            }],
            ..Default::default()
        };
        let status = project(&before, flow(Step::Deployed { held: held() }), None);
        assert_eq!(status.phase, ComputePhase::Deployed);
        assert_eq!(status.winner.as_deref(), Some("did:plc:bidder"));
        assert_eq!(status.receipt, Some(held().receipt));
        assert_eq!(status.receipt_checked, held().checked);
        assert_eq!(status.bids.len(), 1);
        assert!(
            status
                .message
                .as_deref()
                .is_some_and(|m| m.contains("1 bid(s)"))
        );
        assert!(status.flow.is_some());
    }

    #[test]
    fn a_bid_shows_its_price_as_decimal_text_and_no_price_when_it_has_none() {
        assert_eq!(priced(Cost::Nanos(250_000_000)).as_deref(), Some("0.25"));
        assert_eq!(priced(Cost::Nanos(0)).as_deref(), Some("0"));
        assert_eq!(priced(Cost::Unknown), None);
    }

    /// A counted free bid of `did:plc:free`.
    fn free_bid() -> CountedBid {
        CountedBid {
            bidder: "did:plc:free".into(),
            bid: held().receipt,
            terms: held().receipt,
            cost: Cost::ZERO,
            free: true,
            submit_accept: None,
            received_at: Timestamp::MIN,
            checked: None,
        }
    }

    #[test]
    fn collected_paid_bids_are_shown_with_their_price_and_named_as_paid() {
        let free = free_bid();
        let paid = CountedBid {
            bidder: "did:plc:paid".into(),
            cost: Cost::Nanos(350_000_000),
            free: false,
            ..free.clone()
        };
        let auction = Auction {
            rfp: held().receipt,
            asked: Vec::new(),
            denied: Vec::new(),
            opened_at: Timestamp::MIN,
            bidding: Bidding {
                window: Duration::from_secs(30),
                first_free: false,
            },
            declined: Vec::new(),
        };
        let step = Step::BidsCollected {
            auction,
            bids: vec![free, paid],
        };
        let status = project(&ComputeContractStatus::default(), flow(step), None);
        let shown: Vec<_> = status
            .bids
            .iter()
            .map(|bid| (bid.bidder.as_str(), bid.cost.as_deref()))
            .collect();
        assert_eq!(
            shown,
            [("did:plc:free", Some("0")), ("did:plc:paid", Some("0.35"))]
        );
        assert_eq!(
            status.message.as_deref(),
            Some("choosing the winner: 2 bid(s) counted, 1 of them paid (this app does not pay)")
        );
    }

    #[test]
    fn every_bidder_asked_has_its_answer_kept_after_the_auction_fails() {
        use swdesk_auction::bids::Declined;
        use swdesk_auction::compute::{Answer, Asked};
        let free = free_bid();
        let bidding = Bidding {
            window: Duration::from_secs(3),
            first_free: false,
        };
        let asked = [
            "did:plc:free",
            "did:plc:strict",
            "did:plc:stranger",
            "did:plc:silent",
        ];
        let mut auction = Auction::asking(held().receipt, &asked, Timestamp::MIN, bidding);
        auction.keep_declined(Declined {
            bidder: "did:plc:strict".into(),
            reason: "record is missing a valid badge.blue signature".into(),
            signature_untrusted: true,
        });
        let step = Step::RfpSent {
            auction,
            bids: vec![free],
        };
        let mut status = project(&ComputeContractStatus::default(), flow(step), None);
        status.add_refused_bids([Bid {
            bidder: "did:plc:stranger".into(),
            record: held().receipt,
            received_at: Timestamp::MIN,
            cost: None,
            refused: Some("its terms ask a price".into()),
            checked: None,
        }]);
        status.note_answers();
        let refused = |rfp: bool, reason: &str| Answer::Refused {
            rfp,
            reason: reason.into(),
            signature_untrusted: rfp,
        };
        let expected = vec![
            Asked {
                bidder: "did:plc:free".into(),
                answer: Answer::Bid {
                    cost: Some("0".into()),
                },
            },
            Asked {
                bidder: "did:plc:strict".into(),
                answer: refused(true, "record is missing a valid badge.blue signature"),
            },
            Asked {
                bidder: "did:plc:stranger".into(),
                answer: refused(false, "its terms ask a price"),
            },
            Asked {
                bidder: "did:plc:silent".into(),
                answer: Answer::NoAnswer,
            },
        ];
        assert_eq!(status.asked, expected);
        let failed = flow(Step::Rejected {
            reason: "no free bid".into(),
        });
        let after = project(&status, failed, None);
        assert_eq!(after.asked, expected, "kept once the auction is over");
    }

    #[test]
    fn a_rejected_flow_fails_with_its_reason_and_a_retried_problem_replaces_the_message() {
        let rejected = flow(Step::Rejected {
            reason: "no bids: no bidder was asked".into(),
        });
        let status = project(&ComputeContractStatus::default(), rejected, None);
        assert_eq!(status.phase, ComputePhase::Failed);
        assert_eq!(
            status.message.as_deref(),
            Some("no bids: no bidder was asked")
        );
        let releasing = flow(Step::Releasing {
            held: held(),
            requested_at: Timestamp::MIN,
            delete: None,
            event: None,
        });
        let retrying = |next: i64| Retrying {
            step: "releasing".into(),
            why: "unreachable".into(),
            since: Timestamp::MIN,
            next_at: Timestamp::from_unix_millis(next).expect("time"),
            gives_up_at: Timestamp::from_unix_millis(60_000).expect("time"),
        };
        let status = project(&status, releasing.clone(), Some(retrying(3_000)));
        assert_eq!(status.phase, ComputePhase::Releasing);
        assert_eq!(
            status.message.as_deref(),
            Some(
                "retrying: unreachable; next try at 1970-01-01T00:00:03.000Z, \
                 gives up at 1970-01-01T00:01:00.000Z"
            )
        );
        let again = project(&status, releasing.clone(), Some(retrying(9_000)));
        assert_eq!(again.retries, 2);
        assert_eq!(
            again.next_try_in(Timestamp::from_unix_millis(0).expect("time")),
            Some(Duration::from_secs(9))
        );
        let moved = project(&again, releasing, None);
        assert_eq!(
            (moved.retries, moved.retrying),
            (0, None),
            "a step that works resets"
        );
        assert_eq!(status.release_sent_at, Some(Timestamp::MIN));
        assert!(status.holds_guest());
    }
}
