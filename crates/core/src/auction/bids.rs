//! The auction itself: which bids count, how long bids are collected, and who wins.
//!
//! Rules (issue 8, `market.md`):
//! - a bid counts only if its author (the authority of its at-uri) is an asked bidder and not
//!   denied, its `rfp` is our RFP (uri and cid), and it arrived within the window, from the
//!   moment the RFP was sent up to and including the moment it closes;
//! - the window closes `bidWindowSec` after the RFP was sent; with `firstFree`, the first
//!   counted free bid (its terms are a `market.bids.free`) wins at once;
//! - the winner has the strictly lowest cost; a bid without a readable cost counts as infinite
//!   (free terms without a cost cost zero); among equal costs the earliest bid wins, then the one
//!   received first;
//! - no counted bid when the window closes: the auction is rejected with the reason.
//!
//! A cost is read from the bid's `payload` strong reference (`cost`, as the public requester
//! reads it) as an integer, a JSON number or a decimal string, kept exactly to nine decimal
//! places ([`Cost`]) so the domain never compares floats.
//!
//! Invariants: [`admit`] names every reason a bid does not count at once; [`decide`] is a
//! function of the counted bids (in arrival order), the window and `now` only.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use swdesk_lexicon::com::publicdomainrelay::temp::market::bid::Bid;
use swdesk_lexicon::syntax::AtUri;

use super::bidders::AskedBidder;
use super::request::Bidding;
use crate::compute::StrongRef;
use crate::timestamp::Timestamp;

/// The collection of free bid terms.
pub const FREE_TERMS_NSID: &str = "com.publicdomainrelay.temp.market.bids.free";
/// Decimal places a cost keeps.
const COST_SCALE: u32 = 9;

/// A price in units of 10^-9, or unknown (infinite). Orders unknown after every price.
/// Persisted as its decimal text (`"0.25"`), or `null` when unknown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Cost {
    /// A price, in billionths.
    Nanos(i128),
    /// No readable price: counts as infinite.
    Unknown,
}

impl Cost {
    /// Reads a cost: an integer, a JSON number or a decimal string such as `"0.25"`.
    pub fn read(value: &Value) -> Self {
        let text = match value {
            Value::Number(number) => number.to_string(),
            Value::String(text) => text.trim().to_owned(),
            _ => return Self::Unknown,
        };
        parse_decimal(&text).map_or(Self::Unknown, Self::Nanos)
    }
}

impl Serialize for Cost {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Nanos(_) => serializer.serialize_str(&self.to_string()),
            Self::Unknown => serializer.serialize_none(),
        }
    }
}

impl<'de> Deserialize<'de> for Cost {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Option::<String>::deserialize(deserializer)? {
            None => Ok(Self::Unknown),
            Some(text) => parse_decimal(&text)
                .map(Self::Nanos)
                .ok_or_else(|| serde::de::Error::custom(format!("{text:?} is not a decimal cost"))),
        }
    }
}

impl fmt::Display for Cost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unknown => f.write_str("no price"),
            Self::Nanos(nanos) => {
                let scale = 10_i128.pow(COST_SCALE);
                let sign = if *nanos < 0 { "-" } else { "" };
                let (whole, fraction) = (nanos.abs() / scale, nanos.abs() % scale);
                let fraction = format!("{fraction:09}");
                let fraction = fraction.trim_end_matches('0');
                if fraction.is_empty() {
                    write!(f, "{sign}{whole}")
                } else {
                    write!(f, "{sign}{whole}.{fraction}")
                }
            }
        }
    }
}

/// `"-12.5"` -> -12_500_000_000; digits past the ninth decimal are dropped; exponents refused.
fn parse_decimal(text: &str) -> Option<i128> {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    let all_digits = |part: &str| part.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || !all_digits(whole) || !all_digits(fraction) || whole.len() > 20 {
        return None;
    }
    let kept: String = fraction
        .chars()
        .chain(std::iter::repeat('0'))
        .take(9)
        .collect();
    let value =
        whole.parse::<i128>().ok()? * 10_i128.pow(COST_SCALE) + kept.parse::<i128>().ok()?;
    Some(if negative { -value } else { value })
}

/// A bid as it reached the requester.
#[derive(Debug, Clone, PartialEq)]
pub struct ReceivedBid {
    /// The bid record's at-uri and cid.
    pub reference: StrongRef,
    /// The bid record.
    pub record: Bid,
    /// When it arrived.
    pub received_at: Timestamp,
}

/// A bid that counts, as the flow persists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CountedBid {
    /// The bidder's DID (the bid's author).
    pub bidder: String,
    /// The bid record.
    pub bid: StrongRef,
    /// Its terms record (`payload`).
    pub terms: StrongRef,
    /// Its price.
    pub cost: Cost,
    /// Whether its terms are free.
    pub free: bool,
    /// Where the winner is sent its accept (`submitAccept`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub submit_accept: Option<String>,
    /// When it arrived.
    pub received_at: Timestamp,
}

/// The auction a bid is judged against.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Auction {
    /// Our RFP.
    pub rfp: StrongRef,
    /// The bidders asked.
    pub asked: Vec<AskedBidder>,
    /// Bidders whose bids never count.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub denied: Vec<String>,
    /// When the RFP was sent: the window opens.
    pub opened_at: Timestamp,
    /// The window and `firstFree`.
    pub bidding: Bidding,
}

impl Auction {
    /// When the window closes.
    pub fn closes_at(&self) -> Timestamp {
        self.opened_at.saturating_add(self.bidding.window)
    }
}

/// Why a bid does not count.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// The bid's at-uri names no author.
    #[error("the bid's uri {0:?} is not an at-uri of a record")]
    NoAuthor(String),
    /// Its author was not asked.
    #[error("{0} was not asked for a proposal")]
    NotAsked(String),
    /// Its author is denied.
    #[error("{0} is a denied bidder")]
    Denied(String),
    /// It answers another RFP.
    #[error("the bid answers {found}, not our RFP {expected}")]
    OtherRfp {
        /// Our RFP's uri and cid.
        expected: String,
        /// The bid's `rfp`.
        found: String,
    },
    /// It arrived before the RFP was sent.
    #[error("the bid arrived at {received_at}, before the RFP was sent at {opened_at}")]
    Early {
        /// When it arrived.
        received_at: Timestamp,
        /// When the window opened.
        opened_at: Timestamp,
    },
    /// It arrived after the window closed.
    #[error("the bid arrived at {received_at}, after the window closed at {closed_at}")]
    Late {
        /// When it arrived.
        received_at: Timestamp,
        /// When the window closed.
        closed_at: Timestamp,
    },
}

/// The bid as it counts, or every reason it does not.
pub fn admit(auction: &Auction, bid: &ReceivedBid) -> Result<CountedBid, Vec<Refusal>> {
    let mut refusals = Vec::new();
    let author = author_of(&bid.reference.uri);
    match &author {
        None => refusals.push(Refusal::NoAuthor(bid.reference.uri.clone())),
        Some(did) if auction.denied.iter().any(|deny| deny == did) => {
            refusals.push(Refusal::Denied(did.clone()));
        }
        Some(did) if !auction.asked.iter().any(|asked| &asked.did == did) => {
            refusals.push(Refusal::NotAsked(did.clone()));
        }
        Some(_) => {}
    }
    let rfp = &bid.record.rfp;
    if rfp.uri != auction.rfp.uri || rfp.cid != auction.rfp.cid {
        refusals.push(Refusal::OtherRfp {
            expected: format!("{} ({})", auction.rfp.uri, auction.rfp.cid),
            found: format!("{} ({})", rfp.uri, rfp.cid),
        });
    }
    refusals.extend(timing_refusal(auction, bid.received_at));
    match author {
        Some(bidder) if refusals.is_empty() => Ok(counted(bidder, bid)),
        _ => Err(refusals),
    }
}

fn timing_refusal(auction: &Auction, received_at: Timestamp) -> Option<Refusal> {
    if received_at < auction.opened_at {
        return Some(Refusal::Early {
            received_at,
            opened_at: auction.opened_at,
        });
    }
    let closed_at = auction.closes_at();
    (received_at > closed_at).then_some(Refusal::Late {
        received_at,
        closed_at,
    })
}

fn counted(bidder: String, bid: &ReceivedBid) -> CountedBid {
    let payload = &bid.record.payload;
    let free = collection_of(&payload.uri).as_deref() == Some(FREE_TERMS_NSID);
    let cost = match payload.extra.get("cost") {
        Some(value) => Cost::read(value),
        None if free => Cost::Nanos(0),
        None => Cost::Unknown,
    };
    CountedBid {
        bidder,
        bid: bid.reference.clone(),
        terms: super::request::domain_ref(payload),
        cost,
        free,
        submit_accept: bid.record.submit_accept.clone(),
        received_at: bid.received_at,
    }
}

/// The DID whose repo holds the record at `uri`.
pub fn author_of(uri: &str) -> Option<String> {
    let uri: AtUri = uri.parse().ok()?;
    uri.rkey()?;
    let authority = uri.authority();
    authority.starts_with("did:").then(|| authority.to_owned())
}

fn collection_of(uri: &str) -> Option<String> {
    let uri: AtUri = uri.parse().ok()?;
    uri.collection().map(str::to_owned)
}

/// What the auction does now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Keep collecting until the window closes.
    CollectUntil(Timestamp),
    /// This bid wins.
    Winner {
        /// The winning bid.
        bid: CountedBid,
        /// Why now.
        why: WinReason,
    },
    /// The window closed without a counted bid.
    Rejected {
        /// Why, for the contract's message.
        reason: String,
    },
}

/// Why a winner was chosen when it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WinReason {
    /// `firstFree`: the first counted free bid.
    FirstFree,
    /// The window closed; the lowest cost won.
    LowestCost,
}

/// The auction's decision at `now`, given the counted bids in arrival order.
pub fn decide(auction: &Auction, counted: &[CountedBid], now: Timestamp) -> Decision {
    if auction.bidding.first_free
        && let Some(free) = counted.iter().find(|bid| bid.free)
    {
        return Decision::Winner {
            bid: free.clone(),
            why: WinReason::FirstFree,
        };
    }
    if now < auction.closes_at() {
        return Decision::CollectUntil(auction.closes_at());
    }
    match winner(counted) {
        Some(bid) => Decision::Winner {
            bid: bid.clone(),
            why: WinReason::LowestCost,
        },
        None => Decision::Rejected {
            reason: no_bids_reason(auction),
        },
    }
}

/// The lowest cost; ties to the earliest, then to the first received.
pub fn winner(counted: &[CountedBid]) -> Option<&CountedBid> {
    counted
        .iter()
        .enumerate()
        .min_by_key(|(position, bid)| (bid.cost, bid.received_at, *position))
        .map(|(_, bid)| bid)
}

fn no_bids_reason(auction: &Auction) -> String {
    let seconds = auction.bidding.window.as_secs();
    match auction.asked.len() {
        0 => "no bids: no bidder was asked (none named, none offering compute.vm)".to_owned(),
        asked => format!("no bids: {asked} bidder(s) asked, none bid within {seconds} s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;
    use std::time::Duration;

    const RFP: &str = "at://did:plc:owner/com.publicdomainrelay.temp.market.rfp/3lbjpbyznfc2b";
    const CID: &str = "bafyreid3imdulnhgeytpf6uk7zahjvrsqlofkmm5b5ub2maw4kqus6jp4i";

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_unix_millis(1_800_000_000_000 + seconds * 1000).expect("time")
    }

    fn auction(first_free: bool) -> Auction {
        Auction {
            rfp: StrongRef {
                uri: RFP.into(),
                cid: CID.into(),
            },
            asked: ["did:plc:a", "did:plc:b", "did:plc:c"]
                .iter()
                .map(|did| AskedBidder {
                    did: (*did).into(),
                    endpoint: None,
                })
                .collect(),
            denied: vec!["did:plc:x".into()],
            opened_at: at(0),
            bidding: Bidding {
                window: Duration::from_secs(30),
                first_free,
            },
        }
    }

    fn received(author: &str, terms: &str, cost: Option<Value>, second: i64) -> ReceivedBid {
        let mut payload = json!({
            "uri": format!("at://{author}/com.publicdomainrelay.temp.market.{terms}/3lbjpbyznfc2c"),
            "cid": CID,
        });
        if let Some(cost) = cost {
            payload["cost"] = cost;
        }
        let record = json!({"rfp": {"uri": RFP, "cid": CID}, "payload": payload, "signatures": []});
        ReceivedBid {
            reference: StrongRef {
                uri: format!(
                    "at://{author}/com.publicdomainrelay.temp.market.bid/3lbjpbyznf{second:03}"
                ),
                cid: CID.into(),
            },
            record: serde_json::from_value(record).expect("a bid"),
            received_at: at(second),
        }
    }

    fn count(bid: &ReceivedBid) -> CountedBid {
        admit(&auction(false), bid).expect("counts")
    }

    #[test]
    fn costs_read_integers_numbers_and_decimal_strings_exactly() {
        assert_eq!(Cost::read(&json!(3)), Cost::Nanos(3_000_000_000));
        assert_eq!(Cost::read(&json!("0.25")), Cost::Nanos(250_000_000));
        assert_eq!(Cost::read(&json!(1.5)), Cost::Nanos(1_500_000_000));
        assert_eq!(Cost::read(&json!("-2")), Cost::Nanos(-2_000_000_000));
        for unreadable in [
            json!("1e3"),
            json!("cheap"),
            json!(null),
            json!({"usd": 1}),
            json!(".5"),
        ] {
            assert_eq!(Cost::read(&unreadable), Cost::Unknown, "{unreadable}");
        }
        assert!(Cost::Nanos(i128::MAX) < Cost::Unknown);
        assert_eq!(Cost::Nanos(250_000_000).to_string(), "0.25");
        assert_eq!(Cost::Nanos(-3_000_000_000).to_string(), "-3");
        for cost in [Cost::Nanos(-1), Cost::Nanos(250_000_000), Cost::Unknown] {
            let text = serde_json::to_string(&cost).expect("persists");
            assert_eq!(
                serde_json::from_str::<Cost>(&text).ok(),
                Some(cost),
                "{text}"
            );
        }
    }

    #[test]
    fn a_bid_from_an_asked_bidder_for_our_rfp_within_the_window_counts() {
        let bid = received("did:plc:a", "bids.free", Some(json!(5)), 30);
        let counted = admit(&auction(false), &bid).expect("counts");
        assert_eq!(counted.bidder, "did:plc:a");
        assert_eq!(counted.cost, Cost::Nanos(5_000_000_000));
        assert!(counted.free);
    }

    #[test]
    fn every_reason_a_bid_does_not_count_is_named() {
        let mut bid = received("did:plc:x", "bids.free", None, 31);
        bid.record.rfp.cid = "bafyreiclp443lavogvhj3d2ob2cxbfuscni2k5jk7bebjzg7khl3esabwq".into();
        let refusals = admit(&auction(false), &bid).expect_err("refused");
        assert!(matches!(refusals[0], Refusal::Denied(ref did) if did == "did:plc:x"));
        assert!(matches!(refusals[1], Refusal::OtherRfp { .. }));
        assert!(matches!(refusals[2], Refusal::Late { closed_at, .. } if closed_at == at(30)));
        assert_eq!(refusals.len(), 3);
        let stranger = received("did:plc:z", "bids.free", None, -1);
        let refusals = admit(&auction(false), &stranger).expect_err("refused");
        assert_eq!(
            refusals,
            [
                Refusal::NotAsked("did:plc:z".into()),
                Refusal::Early {
                    received_at: at(-1),
                    opened_at: at(0)
                }
            ]
        );
    }

    #[test]
    fn the_lowest_cost_wins_when_the_window_closes_and_a_tie_goes_to_the_earliest() {
        let bids = [
            count(&received("did:plc:a", "bids.x402", Some(json!(7)), 1)),
            count(&received("did:plc:b", "bids.x402", Some(json!("3")), 5)),
            count(&received("did:plc:c", "bids.x402", Some(json!(3)), 2)),
        ];
        assert_eq!(
            decide(&auction(false), &bids, at(29)),
            Decision::CollectUntil(at(30))
        );
        let Decision::Winner { bid, why } = decide(&auction(false), &bids, at(30)) else {
            panic!("a winner");
        };
        assert_eq!(
            (bid.bidder.as_str(), why),
            ("did:plc:c", WinReason::LowestCost)
        );
    }

    #[test]
    fn a_bid_without_a_price_loses_to_any_priced_bid() {
        let bids = [
            count(&received("did:plc:a", "bids.x402", None, 1)),
            count(&received("did:plc:b", "bids.x402", Some(json!(1000)), 9)),
        ];
        assert_eq!(winner(&bids).map(|b| b.bidder.as_str()), Some("did:plc:b"));
    }

    #[test]
    fn with_first_free_the_first_free_bid_wins_at_once() {
        let bids = [
            count(&received("did:plc:a", "bids.x402", Some(json!(0)), 1)),
            count(&received("did:plc:b", "bids.free", None, 2)),
            count(&received("did:plc:c", "bids.free", None, 3)),
        ];
        let Decision::Winner { bid, why } = decide(&auction(true), &bids, at(3)) else {
            panic!("a winner before the window closes");
        };
        assert_eq!(
            (bid.bidder.as_str(), why),
            ("did:plc:b", WinReason::FirstFree)
        );
        assert_eq!(
            decide(&auction(true), &bids[..1], at(3)),
            Decision::CollectUntil(at(30))
        );
    }

    #[test]
    fn no_counted_bid_when_the_window_closes_rejects_with_the_reason() {
        let Decision::Rejected { reason } = decide(&auction(false), &[], at(30)) else {
            panic!("rejected");
        };
        assert_eq!(reason, "no bids: 3 bidder(s) asked, none bid within 30 s");
        let mut nobody = auction(false);
        nobody.asked.clear();
        let Decision::Rejected { reason } = decide(&nobody, &[], at(31)) else {
            panic!("rejected");
        };
        assert!(
            reason.starts_with("no bids: no bidder was asked"),
            "{reason}"
        );
    }

    proptest! {
        #[test]
        fn the_winner_has_the_lowest_cost_and_no_earlier_bid_costs_as_little(
            offers in prop::collection::vec((prop::option::of(0_i64..5), 0_i64..30), 1..8),
        ) {
            let bids: Vec<CountedBid> = offers
                .iter()
                .map(|(cost, second)| count(&received("did:plc:a", "bids.x402", cost.map(|c| json!(c)), *second)))
                .collect();
            let won = winner(&bids).expect("a winner");
            prop_assert!(bids.iter().all(|bid| won.cost <= bid.cost));
            prop_assert!(!bids.iter().any(|bid| bid.cost == won.cost && bid.received_at < won.received_at));
        }
    }
}
