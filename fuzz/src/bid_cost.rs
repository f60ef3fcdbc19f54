//! `bid_cost`: a bid as the requester fetches it (a `getRecord` answer `{uri, cid, value}`),
//! judged by `swdesk_auction::bids::admit` against a fixed auction, and any JSON value read
//! as a price by `Cost::read`.
//!
//! Invariants (the module's):
//! - a price read is known, never negative and below 10^12 units; it prints (`Display`) to a text
//!   that reads back to it, and persists (serde) and reads back the same;
//! - a counted bid's price is such a price, 0 when its terms are free; its bidder is the bid's
//!   author; a bid that does not count names at least one reason;
//! - a refusal repeats at most 64 characters of each value a peer sent (`UnacceptableCost`,
//!   `PricedFreeTerms`, the bid's uri in `NoAuthor`, the bid's RFP uri and cid in `OtherRfp`);
//! - the winner of a decision is always a free bid.

use std::time::Duration;

use serde_json::{Value, json};
use swdesk_auction::bidders::AskedBidder;
use swdesk_auction::bids::{
    Auction, Cost, Decision, ReceivedBid, Refusal, admit, author_of, decide,
};
use swdesk_auction::compute::StrongRef;
use swdesk_auction::request::Bidding;
use swdesk_kernel::timestamp::Timestamp;
use swdesk_lexicon::Record as _;
use swdesk_lexicon::com::publicdomainrelay::temp::market::bid::Bid;

/// 10^12 units, in billionths: every price read is below it.
const MAX_NANOS: i128 = 1_000_000_000_000_000_000_000;
/// The most characters of a peer's value a refusal repeats.
const SHOWN_CHARS: usize = 64;

/// Our RFP, the one the seeds' bids answer.
pub const RFP_URI: &str = "at://did:plc:owner/com.publicdomainrelay.temp.market.rfp/3lbjpbyznfc2b";
/// Its CID.
pub const RFP_CID: &str = "bafyreid3imdulnhgeytpf6uk7zahjvrsqlofkmm5b5ub2maw4kqus6jp4i";
/// The bidders asked.
pub const ASKED: [&str; 3] = ["did:plc:a", "did:plc:b", "did:plc:c"];

fn at(seconds: i64) -> Timestamp {
    Timestamp::from_unix_millis(1_800_000_000_000 + seconds * 1000)
        .unwrap_or_else(|_| unreachable!())
}

fn auction(first_free: bool) -> Auction {
    Auction {
        rfp: StrongRef {
            uri: RFP_URI.to_owned(),
            cid: RFP_CID.to_owned(),
        },
        asked: ASKED
            .iter()
            .map(|did| AskedBidder {
                did: (*did).to_owned(),
                endpoint: None,
            })
            .collect(),
        denied: vec!["did:plc:x".to_owned()],
        opened_at: at(0),
        bidding: Bidding {
            window: Duration::from_secs(30),
            first_free,
        },
        declined: Vec::new(),
    }
}

pub fn check(data: &[u8]) {
    let Some(answer) = crate::json(data) else {
        return;
    };
    price(&answer);
    if let Some(cost) = answer.pointer("/value/payload/cost") {
        price(cost);
    }
    let Some(record) = answer.get("value") else {
        return;
    };
    let Ok(record) = Bid::from_record_value(record.clone()) else {
        return;
    };
    let text = |key: &str| answer[key].as_str().unwrap_or_default().to_owned();
    let bid = ReceivedBid {
        reference: StrongRef {
            uri: text("uri"),
            cid: text("cid"),
        },
        record,
        received_at: at((data.len() % 40) as i64),
        checked: None,
        terms: None,
    };
    let first_free = data.len().is_multiple_of(2);
    let auction = auction(first_free);
    match admit(&auction, &bid) {
        Ok(counted) => {
            let Cost::Nanos(nanos) = counted.cost else {
                panic!("a bid counted without a price");
            };
            assert!(
                (0..MAX_NANOS).contains(&nanos),
                "a counted price of {nanos}"
            );
            assert!(!counted.free || nanos == 0, "free terms counted at {nanos}");
            assert_eq!(Some(counted.bidder.clone()), author_of(&bid.reference.uri));
            let decision = decide(
                &auction,
                std::slice::from_ref(&counted),
                auction.closes_at(),
            );
            if let Decision::Winner { bid, .. } = decision {
                assert!(bid.free, "a paid bid won");
            }
        }
        Err(refusals) => {
            assert!(!refusals.is_empty(), "a bid refused without a reason");
            refusals.iter().for_each(bounded);
        }
    }
}

/// A refusal repeats at most 64 characters of each value a peer sent.
fn bounded(refusal: &Refusal) {
    let short = |value: &str| value.chars().count() <= SHOWN_CHARS;
    match refusal {
        Refusal::UnacceptableCost { value, .. } | Refusal::PricedFreeTerms(value) => {
            assert!(short(value), "{refusal:?}");
        }
        Refusal::NoAuthor(uri) => assert!(short(uri), "the bid's uri repeated whole: {uri:?}"),
        Refusal::OtherRfp { found, .. } => {
            // `<uri> (<cid>)`, each cut.
            assert!(
                found.chars().count() <= 2 * SHOWN_CHARS + 3,
                "the bid's RFP repeated whole: {found:?}"
            );
        }
        _ => {}
    }
}

/// Any value read as a price.
fn price(value: &Value) {
    let Ok(cost) = Cost::read(value) else {
        return;
    };
    let Cost::Nanos(nanos) = cost else {
        panic!("Cost::read gave an unknown price for {value}");
    };
    assert!((0..MAX_NANOS).contains(&nanos), "{value} read as {nanos}");
    assert_eq!(Cost::read(&json!(cost.to_string())), Ok(cost), "{cost}");
    let persisted = serde_json::to_value(cost).ok();
    let back = persisted.and_then(|persisted| serde_json::from_value::<Cost>(persisted).ok());
    assert_eq!(back, Some(cost));
}
