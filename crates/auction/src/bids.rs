//! The auction itself: which bids count, how long bids are collected, and who wins.
//!
//! Rules (issue 8, `market.md`; "Hostile peers" §3, "Public market" §5):
//! - a bid counts only if its author (the authority of its at-uri) is an asked bidder and not
//!   denied, its `rfp` is our RFP (uri and cid), it arrived within the window, from the moment
//!   the RFP was sent up to and including the moment it closes, and its price is acceptable;
//! - a price, when the bid states one, is a plain decimal: digits, optionally a point and at most
//!   nine decimal places, below 10^12 units. A negative, unreadable, NaN/Infinity, exponent-form,
//!   too precise or too large price is refused, naming the value sent (cut to 64 characters);
//! - free terms (a `market.bids.free`) without a price cost 0; free terms asking more than 0,
//!   in the bid's reference to them or in the terms record itself (its own `cost`, as the public
//!   bidder writes `cost: 0`), are refused (priced free terms). Paid terms (any other collection, e.g. `market.bids.x402`)
//!   without a price are refused (a paid offer without a price);
//! - this requester does not pay: paid bids count and are kept (the window shows them with their
//!   price), but only free bids win;
//! - the window closes `bidWindowSec` after the RFP was sent; with `firstFree`, the first
//!   counted free bid wins at once;
//! - when the window closes, the free bid with the strictly lowest price wins; among equal
//!   prices the earliest bid wins, then the one received first;
//! - no free bid when the window closes: the auction is rejected with the reason, which names
//!   the cheapest paid offer and its bidder when there is one.
//!
//! A price is read from the bid's `payload` strong reference (`cost`, as the public requester
//! reads it) and, for free terms, from the terms record the requester read at that reference
//! ([`ReceivedBid::terms`]), as a JSON number or a decimal string, kept exactly in billionths ([`Cost`]) so the
//! domain never compares floats.
//!
//! Invariants: [`admit`] names every reason a bid does not count at once, and a refusal repeats
//! at most 64 characters of a peer's value; a counted bid's price is known, never negative and
//! below 10^12; [`decide`] is a function of the counted bids (in arrival order), the window and
//! `now` only, and its winner is always a free bid.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use swdesk_kernel::timestamp::Timestamp;
use swdesk_lexicon::com::atproto::repo::strong_ref;
use swdesk_lexicon::com::publicdomainrelay::temp::market::bid::Bid;
use swdesk_lexicon::syntax::AtUri;

use super::bidders::AskedBidder;
use super::request::Bidding;
use super::trust::RecordCheck;
use crate::compute::phase::StrongRef;

/// The collection of free bid terms.
pub const FREE_TERMS_NSID: &str = "com.publicdomainrelay.temp.market.bids.free";
/// Decimal places a cost keeps.
const COST_SCALE: u32 = 9;
/// The most significant digits before the point a bid's price has: it stays below 10^12.
const OFFERED_WHOLE_DIGITS: usize = 12;
/// The most significant digits before the point a persisted cost has.
const PERSISTED_WHOLE_DIGITS: usize = 20;
/// The most characters of a peer's value a refusal repeats.
const SHOWN_CHARS: usize = 64;

/// A price in units of 10^-9, or unknown (infinite). Orders unknown after every price.
/// Persisted as its decimal text (`"0.25"`), or `null` when unknown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Cost {
    /// A price, in billionths.
    Nanos(i128),
    /// No readable price: counts as infinite. [`admit`] never counts a bid with it; a flow
    /// persisted before that rule may still hold one.
    Unknown,
}

/// Why a bid's price is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum CostProblem {
    /// Not a plain decimal: text, NaN, Infinity, an exponent, a stray sign or point, not a number.
    #[error("it is not a plain decimal (digits, optionally a point and more digits)")]
    Unreadable,
    /// Below zero.
    #[error("it is negative")]
    Negative,
    /// More than nine decimal places.
    #[error("it has more than 9 decimal places")]
    TooPrecise,
    /// 10^12 or more.
    #[error("it is not below the maximum of 10^12")]
    TooLarge,
}

impl Cost {
    /// Nothing to pay.
    pub const ZERO: Self = Self::Nanos(0);

    /// Reads a bid's price: a JSON number or a decimal string such as `"0.25"`, within the
    /// bounds of the module's rules.
    pub fn read(value: &Value) -> Result<Self, CostProblem> {
        let text = match value {
            Value::Number(number) => number.to_string(),
            Value::String(text) => text.trim().to_owned(),
            _ => return Err(CostProblem::Unreadable),
        };
        parse_offered(&text).map(Self::Nanos)
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
            Some(text) => parse_persisted(&text)
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

/// A bid's price: `"12.5"` -> 12_500_000_000, or why it is refused.
fn parse_offered(text: &str) -> Result<i128, CostProblem> {
    let (negative, unsigned) = split_sign(text);
    let (whole, fraction) = split_decimal(unsigned).ok_or(CostProblem::Unreadable)?;
    if negative {
        return Err(CostProblem::Negative);
    }
    if significant_digits(whole) > OFFERED_WHOLE_DIGITS {
        return Err(CostProblem::TooLarge);
    }
    if fraction.len() > COST_SCALE as usize {
        return Err(CostProblem::TooPrecise);
    }
    nanos(whole, fraction).ok_or(CostProblem::Unreadable)
}

/// A cost as [`Cost`]'s `Display` wrote it (a flow persisted earlier may hold a negative one).
fn parse_persisted(text: &str) -> Option<i128> {
    let (negative, unsigned) = split_sign(text);
    let (whole, fraction) = split_decimal(unsigned)?;
    if significant_digits(whole) > PERSISTED_WHOLE_DIGITS || fraction.len() > COST_SCALE as usize {
        return None;
    }
    nanos(whole, fraction).map(|value| if negative { -value } else { value })
}

fn split_sign(text: &str) -> (bool, &str) {
    match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    }
}

/// `"12.5"` -> `("12", "5")`: digits, then optionally a point and more digits; nothing else.
fn split_decimal(text: &str) -> Option<(&str, &str)> {
    let (whole, fraction) = match text.split_once('.') {
        Some((_, "")) => return None,
        Some(parts) => parts,
        None => (text, ""),
    };
    let all_digits = |part: &str| part.bytes().all(|b| b.is_ascii_digit());
    (!whole.is_empty() && all_digits(whole) && all_digits(fraction)).then_some((whole, fraction))
}

fn significant_digits(whole: &str) -> usize {
    whole.trim_start_matches('0').len()
}

/// `("12", "5")` -> 12_500_000_000; the caller bounds the digits so nothing overflows.
fn nanos(whole: &str, fraction: &str) -> Option<i128> {
    let whole: i128 = whole.parse().ok()?;
    let fraction: i128 = format!("{fraction:0<9}").parse().ok()?;
    Some(whole * 10_i128.pow(COST_SCALE) + fraction)
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
    /// What was verified of its record (proof, key binding).
    pub checked: Option<RecordCheck>,
    /// Its terms record (`payload`) as read at the cid the bid names: free terms are read for
    /// their own price. `None` only where the caller judges the bid alone (the sandbox's own
    /// checks, fuzzing); the requester always reads them.
    pub terms: Option<Value>,
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
    /// Its price: 0 for free terms, what the offer asks for paid ones.
    pub cost: Cost,
    /// Whether its terms are free: only a free bid can win.
    pub free: bool,
    /// Where the winner is sent its accept (`submitAccept`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub submit_accept: Option<String>,
    /// When it arrived.
    pub received_at: Timestamp,
    /// What was verified of its record (proof, key binding), when the adapter checked it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checked: Option<Box<RecordCheck>>,
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
    /// The bidders that refused the RFP, each with its words (the last it said).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub declined: Vec<Declined>,
}

/// A bidder's refusal of our RFP (`submitRfp` answered with a refusal), kept so that "none
/// bid" can say why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Declined {
    /// The bidder asked.
    pub bidder: String,
    /// Its refusal: one line, cleaned and cut by the adapter (`peer_text`).
    pub reason: String,
    /// Whether it refused our RFP for its signature (the key not bound to the owner as the
    /// bidder requires), as the adapter recognised the refusal, never read off `reason`'s words:
    /// what publishing the market key in the owner's DID document answers.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub signature_untrusted: bool,
}

impl Auction {
    /// The auction of `rfp` opened at `opened_at` that asked `bidders` (their services found
    /// later) and denies no one.
    pub fn asking(
        rfp: StrongRef,
        bidders: &[&str],
        opened_at: Timestamp,
        bidding: Bidding,
    ) -> Self {
        let asked = bidders.iter().map(|did| AskedBidder {
            did: (*did).to_owned(),
            endpoint: None,
        });
        Self {
            rfp,
            asked: asked.collect(),
            denied: Vec::new(),
            opened_at,
            bidding,
            declined: Vec::new(),
        }
    }

    /// When the window closes.
    pub fn closes_at(&self) -> Timestamp {
        self.opened_at.saturating_add(self.bidding.window)
    }

    /// Keeps `declined`: a bidder asked again (after a restart) and refusing again has one
    /// entry, its last words; a bidder not asked is ignored.
    pub fn keep_declined(&mut self, declined: Declined) {
        if !self.asked.iter().any(|asked| asked.did == declined.bidder) {
            return;
        }
        self.declined
            .retain(|known| known.bidder != declined.bidder);
        self.declined.push(declined);
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
    /// Its price is unreadable or out of bounds.
    #[error("the bid's cost {value:?} is refused: {problem}")]
    UnacceptableCost {
        /// The value sent, cut to 64 characters.
        value: String,
        /// What is wrong with it.
        problem: CostProblem,
    },
    /// Its terms are free but ask a price above 0.
    #[error("priced free terms: free terms that ask a cost of {0:?}")]
    PricedFreeTerms(String),
    /// Its terms are paid but state no price.
    #[error("a paid offer without a price")]
    PaidWithoutPrice,
}

/// The bid as it counts, or every reason it does not.
pub fn admit(auction: &Auction, bid: &ReceivedBid) -> Result<CountedBid, Vec<Refusal>> {
    let author = author_of(&bid.reference.uri);
    let free = is_free(&bid.record.payload);
    let cost = offered_cost(&bid.record.payload, free).and_then(|cost| {
        match bid.terms.as_ref().filter(|_| free) {
            Some(terms) => own_price(terms).map(|()| cost),
            None => Ok(cost),
        }
    });
    let refusals: Vec<Refusal> = author_refusal(auction, &bid.reference.uri, author.as_deref())
        .into_iter()
        .chain(rfp_refusal(auction, bid))
        .chain(timing_refusal(auction, bid.received_at))
        .chain(cost.as_ref().err().cloned())
        .collect();
    match (author, cost) {
        (Some(bidder), Ok(cost)) if refusals.is_empty() => Ok(counted(bidder, bid, cost, free)),
        _ => Err(refusals),
    }
}

fn author_refusal(auction: &Auction, uri: &str, author: Option<&str>) -> Option<Refusal> {
    match author {
        None => Some(Refusal::NoAuthor(shown_text(uri))),
        Some(did) if auction.denied.iter().any(|deny| deny == did) => {
            Some(Refusal::Denied(shown_text(did)))
        }
        Some(did) if !auction.asked.iter().any(|asked| asked.did == did) => {
            Some(Refusal::NotAsked(shown_text(did)))
        }
        Some(_) => None,
    }
}

fn rfp_refusal(auction: &Auction, bid: &ReceivedBid) -> Option<Refusal> {
    let rfp = &bid.record.rfp;
    (rfp.uri != auction.rfp.uri || rfp.cid != auction.rfp.cid).then(|| Refusal::OtherRfp {
        expected: format!("{} ({})", auction.rfp.uri, auction.rfp.cid),
        found: format!("{} ({})", shown_text(&rfp.uri), shown_text(&rfp.cid)),
    })
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

fn is_free(payload: &strong_ref::StrongRef) -> bool {
    collection_of(&payload.uri).as_deref() == Some(FREE_TERMS_NSID)
}

/// The price the terms ask, or why it is refused (see the module's rules).
fn offered_cost(payload: &strong_ref::StrongRef, free: bool) -> Result<Cost, Refusal> {
    let Some(value) = payload.extra.get("cost") else {
        return if free {
            Ok(Cost::ZERO)
        } else {
            Err(Refusal::PaidWithoutPrice)
        };
    };
    match Cost::read(value) {
        Err(problem) => Err(Refusal::UnacceptableCost {
            value: shown(value),
            problem,
        }),
        Ok(cost) if free && cost != Cost::ZERO => Err(Refusal::PricedFreeTerms(shown(value))),
        Ok(cost) => Ok(cost),
    }
}

/// Whether free terms, read as a record, ask no price of their own: no `cost`, or one of 0.
fn own_price(terms: &Value) -> Result<(), Refusal> {
    let Some(value) = terms.get("cost") else {
        return Ok(());
    };
    match Cost::read(value) {
        Err(problem) => Err(Refusal::UnacceptableCost {
            value: shown(value),
            problem,
        }),
        Ok(Cost::ZERO) => Ok(()),
        Ok(_) => Err(Refusal::PricedFreeTerms(shown(value))),
    }
}

/// A peer's value as a refusal repeats it: at most 64 characters.
fn shown(value: &Value) -> String {
    match value {
        Value::String(text) => shown_text(text),
        other => shown_text(&other.to_string()),
    }
}

/// A peer's text as a refusal repeats it: at most 64 characters.
fn shown_text(text: &str) -> String {
    text.chars().take(SHOWN_CHARS).collect()
}

fn counted(bidder: String, bid: &ReceivedBid, cost: Cost, free: bool) -> CountedBid {
    CountedBid {
        bidder,
        bid: bid.reference.clone(),
        terms: super::request::domain_ref(&bid.record.payload),
        cost,
        free,
        submit_accept: bid.record.submit_accept.clone(),
        received_at: bid.received_at,
        checked: bid.checked.clone().map(Box::new),
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
    /// This bid wins: always a free one.
    Winner {
        /// The winning bid.
        bid: CountedBid,
        /// Why now.
        why: WinReason,
    },
    /// The window closed without a free bid (no bid at all, or paid offers only).
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
    /// The window closed; the free bid with the lowest cost won.
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
            reason: rejection_reason(auction, counted),
        },
    }
}

/// The free bid with the lowest cost; ties to the earliest, then to the first received. A paid
/// bid never wins: this requester does not pay.
pub fn winner(counted: &[CountedBid]) -> Option<&CountedBid> {
    cheapest(counted.iter().filter(|bid| bid.free))
}

fn cheapest<'a>(bids: impl Iterator<Item = &'a CountedBid>) -> Option<&'a CountedBid> {
    bids.enumerate()
        .min_by_key(|(position, bid)| (bid.cost, bid.received_at, *position))
        .map(|(_, bid)| bid)
}

fn rejection_reason(auction: &Auction, counted: &[CountedBid]) -> String {
    let paid = || counted.iter().filter(|bid| !bid.free);
    match cheapest(paid()) {
        Some(offer) => format!(
            "no free bid; cheapest paid offer: {} from {} ({} paid offer(s); this app does not pay)",
            offer.cost,
            offer.bidder,
            paid().count()
        ),
        None => no_bids_reason(auction),
    }
}

fn no_bids_reason(auction: &Auction) -> String {
    let seconds = auction.bidding.window.as_secs();
    let none = match auction.asked.len() {
        0 => {
            return "no bids: no bidder was asked (none named, none offering compute.vm)"
                .to_owned();
        }
        asked => format!("no bids: {asked} bidder(s) asked, none bid within {seconds} s"),
    };
    match auction.declined.as_slice() {
        [] => none,
        declined => {
            let why: Vec<String> = declined
                .iter()
                .map(|declined| format!("{} refused the RFP: {}", declined.bidder, declined.reason))
                .collect();
            format!("{none}; {}", why.join("; "))
        }
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
    const BIDDERS: [&str; 3] = ["did:plc:a", "did:plc:b", "did:plc:c"];
    /// 10^12 units, in billionths: every counted price is below it.
    const MAX_NANOS: i128 = 1_000_000_000_000_000_000_000;

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_unix_millis(1_800_000_000_000 + seconds * 1000).expect("time")
    }

    fn auction(first_free: bool) -> Auction {
        Auction {
            rfp: StrongRef {
                uri: RFP.into(),
                cid: CID.into(),
            },
            asked: BIDDERS
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
            declined: Vec::new(),
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
            checked: None,
            terms: None,
        }
    }

    fn count(bid: &ReceivedBid) -> CountedBid {
        admit(&auction(false), bid).expect("counts")
    }

    fn free(author: &str, second: i64) -> CountedBid {
        count(&received(author, "bids.free", None, second))
    }

    fn paid(author: &str, cost: Value, second: i64) -> CountedBid {
        count(&received(author, "bids.x402", Some(cost), second))
    }

    fn refusals_of(terms: &str, cost: Value) -> Vec<Refusal> {
        let bid = received("did:plc:a", terms, Some(cost), 1);
        admit(&auction(false), &bid).expect_err("refused")
    }

    #[test]
    fn costs_read_plain_decimals_exactly() {
        let nanos = |value: Value| Cost::read(&value).expect("a price");
        assert_eq!(nanos(json!(3)), Cost::Nanos(3_000_000_000));
        assert_eq!(nanos(json!("0.25")), Cost::Nanos(250_000_000));
        assert_eq!(nanos(json!(1.5)), Cost::Nanos(1_500_000_000));
        assert_eq!(nanos(json!("007")), Cost::Nanos(7_000_000_000));
        assert_eq!(nanos(json!("0.000000001")), Cost::Nanos(1));
        assert_eq!(
            nanos(json!("999999999999.999999999")),
            Cost::Nanos(MAX_NANOS - 1)
        );
        assert!(Cost::Nanos(i128::MAX) < Cost::Unknown);
        assert_eq!(Cost::Nanos(250_000_000).to_string(), "0.25");
        assert_eq!(Cost::Nanos(-3_000_000_000).to_string(), "-3");
    }

    #[test]
    fn costs_that_are_unreadable_negative_too_precise_or_too_large_are_refused_by_kind() {
        use CostProblem::{Negative, TooLarge, TooPrecise, Unreadable};
        let cases = [
            (json!("-2"), Negative),
            (json!(-1), Negative),
            (json!("-0.5"), Negative),
            (json!("NaN"), Unreadable),
            (json!("Infinity"), Unreadable),
            (json!("-Infinity"), Unreadable),
            (json!("1e3"), Unreadable),
            (json!(1e300), Unreadable),
            (json!("cheap"), Unreadable),
            (json!(null), Unreadable),
            (json!({"usd": 1}), Unreadable),
            (json!(".5"), Unreadable),
            (json!("1."), Unreadable),
            (json!("+1"), Unreadable),
            (json!("0.1234567891"), TooPrecise),
            (json!(0.1 + 0.2), TooPrecise),
            (json!("1000000000000"), TooLarge),
            (json!(1_000_000_000_000_u64), TooLarge),
        ];
        for (value, problem) in cases {
            assert_eq!(Cost::read(&value), Err(problem), "{value}");
        }
    }

    #[test]
    fn a_cost_persists_as_its_decimal_text_and_reads_back() {
        for cost in [Cost::Nanos(-1), Cost::Nanos(250_000_000), Cost::Unknown] {
            let text = serde_json::to_string(&cost).expect("persists");
            assert_eq!(
                serde_json::from_str::<Cost>(&text).ok(),
                Some(cost),
                "{text}"
            );
        }
        assert!(serde_json::from_str::<Cost>("\"1e3\"").is_err());
    }

    #[test]
    fn a_bid_from_an_asked_bidder_for_our_rfp_within_the_window_counts() {
        let bid = received("did:plc:a", "bids.free", Some(json!("0")), 30);
        let counted = admit(&auction(false), &bid).expect("counts");
        assert_eq!(counted.bidder, "did:plc:a");
        assert_eq!(counted.cost, Cost::ZERO);
        assert!(counted.free);
        let offer = paid("did:plc:b", json!("0.35"), 2);
        assert_eq!((offer.cost, offer.free), (Cost::Nanos(350_000_000), false));
    }

    #[test]
    fn a_refused_cost_names_the_value_sent_cut_to_64_characters() {
        assert_eq!(
            refusals_of("bids.x402", json!("-5")),
            [Refusal::UnacceptableCost {
                value: "-5".into(),
                problem: CostProblem::Negative
            }]
        );
        let refusals = refusals_of("bids.x402", json!("9".repeat(1000)));
        let [Refusal::UnacceptableCost { value, problem }] = refusals.as_slice() else {
            panic!("one refusal: {refusals:?}");
        };
        assert_eq!(
            (value.as_str(), *problem),
            ("9".repeat(64).as_str(), CostProblem::TooLarge)
        );
        assert!(refusals[0].to_string().len() < 200, "{}", refusals[0]);
    }

    #[test]
    fn free_terms_that_ask_a_price_are_refused() {
        assert_eq!(
            refusals_of("bids.free", json!("0.5")),
            [Refusal::PricedFreeTerms("0.5".into())]
        );
        assert_eq!(
            refusals_of("bids.free", json!(2)),
            [Refusal::PricedFreeTerms("2".into())]
        );
        assert_eq!(free("did:plc:a", 1).cost, Cost::ZERO);
    }

    #[test]
    fn a_free_terms_record_that_asks_a_price_itself_is_refused() {
        let with_terms = |terms: Value| ReceivedBid {
            terms: Some(terms),
            ..received("did:plc:a", "bids.free", None, 1)
        };
        let priced = with_terms(json!({"reason": "a gift", "cost": 5000}));
        assert_eq!(
            admit(&auction(false), &priced),
            Err(vec![Refusal::PricedFreeTerms("5000".into())])
        );
        let unreadable = with_terms(json!({"reason": "a gift", "cost": "-1"}));
        assert!(matches!(
            admit(&auction(false), &unreadable)
                .as_ref()
                .map_err(Vec::as_slice),
            Err([Refusal::UnacceptableCost { .. }])
        ));
        for free in [json!({"cost": 0}), json!({"reason": "open-source CI"})] {
            assert_eq!(count(&with_terms(free)).cost, Cost::ZERO);
        }
        let paid = ReceivedBid {
            terms: Some(json!({"cost": "0.25", "currency": "USDC"})),
            ..received("did:plc:a", "bids.x402", Some(json!("0.25")), 1)
        };
        assert!(
            admit(&auction(false), &paid).is_ok(),
            "paid terms ask their price"
        );
    }

    #[test]
    fn a_paid_offer_without_a_price_is_refused() {
        let bid = received("did:plc:a", "bids.x402", None, 1);
        assert_eq!(
            admit(&auction(false), &bid),
            Err(vec![Refusal::PaidWithoutPrice])
        );
    }

    #[test]
    fn every_reason_a_bid_does_not_count_is_named() {
        let mut bid = received("did:plc:x", "bids.free", Some(json!("1e3")), 31);
        bid.record.rfp.cid = "bafyreiclp443lavogvhj3d2ob2cxbfuscni2k5jk7bebjzg7khl3esabwq".into();
        let refusals = admit(&auction(false), &bid).expect_err("refused");
        assert!(matches!(refusals[0], Refusal::Denied(ref did) if did == "did:plc:x"));
        assert!(matches!(refusals[1], Refusal::OtherRfp { .. }));
        assert!(matches!(refusals[2], Refusal::Late { closed_at, .. } if closed_at == at(30)));
        assert!(matches!(
            refusals[3],
            Refusal::UnacceptableCost { ref value, problem: CostProblem::Unreadable } if value == "1e3"
        ));
        assert_eq!(refusals.len(), 4);
        let stranger = received("did:plc:z", "bids.x402", None, -1);
        let refusals = admit(&auction(false), &stranger).expect_err("refused");
        assert_eq!(
            refusals,
            [
                Refusal::NotAsked("did:plc:z".into()),
                Refusal::Early {
                    received_at: at(-1),
                    opened_at: at(0)
                },
                Refusal::PaidWithoutPrice
            ]
        );
    }

    #[test]
    fn the_earliest_free_bid_wins_when_the_window_closes() {
        let bids = [
            free("did:plc:a", 7),
            free("did:plc:b", 5),
            free("did:plc:c", 2),
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
        let same_time = [free("did:plc:b", 4), free("did:plc:a", 4)];
        assert_eq!(
            winner(&same_time).map(|b| b.bidder.as_str()),
            Some("did:plc:b")
        );
    }

    #[test]
    fn a_free_bid_wins_over_an_earlier_paid_offer_as_cheap_or_cheaper() {
        let bids = [
            paid("did:plc:a", json!(0), 1),
            paid("did:plc:b", json!("0.01"), 2),
            free("did:plc:c", 9),
        ];
        let Decision::Winner { bid, .. } = decide(&auction(false), &bids, at(30)) else {
            panic!("a winner");
        };
        assert_eq!((bid.bidder.as_str(), bid.free), ("did:plc:c", true));
    }

    #[test]
    fn paid_offers_only_reject_naming_the_cheapest_offer_and_its_bidder() {
        let bids = [
            paid("did:plc:a", json!("0.5"), 1),
            paid("did:plc:b", json!("0.35"), 5),
            paid("did:plc:c", json!(0.35), 2),
        ];
        assert_eq!(winner(&bids), None);
        assert_eq!(
            decide(&auction(true), &bids, at(29)),
            Decision::CollectUntil(at(30))
        );
        assert_eq!(
            decide(&auction(false), &bids, at(30)),
            Decision::Rejected {
                reason: "no free bid; cheapest paid offer: 0.35 from did:plc:c \
                         (3 paid offer(s); this app does not pay)"
                    .into()
            }
        );
    }

    #[test]
    fn with_first_free_the_first_free_bid_wins_at_once() {
        let bids = [
            paid("did:plc:a", json!(0), 1),
            free("did:plc:b", 2),
            free("did:plc:c", 3),
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
        let mut refused = auction(false);
        for (bidder, reason) in [
            (BIDDERS[1], "first words"),
            ("did:plc:stranger", "not asked"),
            (BIDDERS[1], "record is missing a valid badge.blue signature"),
        ] {
            refused.keep_declined(Declined {
                bidder: bidder.into(),
                reason: reason.into(),
                signature_untrusted: false,
            });
        }
        let Decision::Rejected { reason } = decide(&refused, &[], at(30)) else {
            panic!("rejected");
        };
        assert_eq!(
            reason,
            format!(
                "no bids: 3 bidder(s) asked, none bid within 30 s; {} refused the RFP: record \
                 is missing a valid badge.blue signature",
                BIDDERS[1]
            )
        );
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
        fn only_a_free_bid_wins_and_paid_offers_only_name_the_cheapest(
            offers in prop::collection::vec((any::<bool>(), 0_i64..5, 0_usize..3, 0_i64..30), 1..8),
        ) {
            let bids: Vec<CountedBid> = offers
                .iter()
                .map(|&(is_free, cost, bidder, second)| if is_free {
                    free(BIDDERS[bidder], second)
                } else {
                    paid(BIDDERS[bidder], json!(cost), second)
                })
                .collect();
            let free_bids: Vec<&CountedBid> = bids.iter().filter(|bid| bid.free).collect();
            match decide(&auction(false), &bids, at(30)) {
                Decision::Winner { bid, .. } => {
                    prop_assert!(bid.free);
                    prop_assert!(free_bids.iter().all(|other| bid.cost <= other.cost));
                    prop_assert!(!free_bids.iter().any(|other| other.cost == bid.cost && other.received_at < bid.received_at));
                }
                Decision::Rejected { reason } => {
                    prop_assert!(free_bids.is_empty());
                    let cheapest = bids.iter().map(|bid| bid.cost).min().expect("a paid offer");
                    let named = |bid: &CountedBid| reason.starts_with(&format!(
                        "no free bid; cheapest paid offer: {cheapest} from {} (", bid.bidder
                    ));
                    prop_assert!(bids.iter().any(|bid| bid.cost == cheapest && named(bid)), "{}", reason);
                }
                Decision::CollectUntil(until) => prop_assert!(false, "still collecting until {until}"),
            }
        }

        #[test]
        fn any_cost_text_counts_within_bounds_or_is_refused_naming_at_most_64_characters(
            text in "\\PC{0,100}|-?[0-9]{0,14}(\\.[0-9]{0,11})?|[0-9]{1,3}(e[0-9])?",
        ) {
            let bid = received("did:plc:a", "bids.x402", Some(json!(text)), 1);
            match admit(&auction(false), &bid) {
                Ok(counted) => {
                    let Cost::Nanos(nanos) = counted.cost else {
                        return Err(TestCaseError::fail("an unknown price counted"));
                    };
                    prop_assert!((0..MAX_NANOS).contains(&nanos), "{}", nanos);
                    prop_assert_eq!(Cost::read(&json!(counted.cost.to_string())), Ok(counted.cost));
                }
                Err(refusals) => prop_assert!(
                    matches!(refusals.as_slice(), [Refusal::UnacceptableCost { value, .. }] if value.chars().count() <= 64),
                    "{:?}", refusals
                ),
            }
        }
    }
}
