//! `market.submitRfp`, the bidder's side: the caller's token names the requester; the RFP it
//! names must be authored by that requester, stand at the given CID on the requester's PDS,
//! carry a verifying inline signature, and wrap a `compute.vm` payload that exists; then the
//! policy decides, and the bidder writes its terms and its `market.bid` (whose `payload` is the
//! terms' strong reference), both signed.
//!
//! Terms, as the public market writes them (`market.bids.free`, `market.bids.x402`):
//! - no price configured, or zero: free terms (`bids.free`, with the free-grant endpoint as
//!   `url`); the payload reference carries no `cost` (a requester reads none as 0);
//! - a price above zero: paid terms (`bids.x402`: `cost` as the configured decimal string,
//!   `currency` `USDC`, `frequency` `one-time`, `prepay` true, `url` the bidder's x402 payment
//!   endpoint, [`PAYMENT_PATH`], which answers every call `402 PaymentRequired`: the sandbox
//!   takes no payment), and the payload reference carries the same `cost`. Our lexicons have no
//!   `bids.x402` type, so the record is written as raw JSON. A requester that does not pay (ours)
//!   counts and shows such a bid but never accepts it.
//!
//! The bid is answered in the response (`{ok, bidUri, bidCid}`), after the configured delay;
//! when the RFP names a `submitBid` service the bidder answers `{ok: true}` at once and, after
//! the delay, calls `market.submitBid {uri, cid, record}` there instead.
//!
//! Policy (`rfp.policy`): absent → open, the bidder bids; `only_me` → only the requester's own
//! bidder may bid, so this bidder declines unless `requesterDid` is its own account; any other
//! policy (`direct_network` walks a vouch graph this sandbox does not keep) → declined. A
//! declined RFP, or any RFP while the refusal control is on, is answered `{ok: false}` and no
//! bid is written. An RFP already bid on (same uri and cid) is answered with the same bid.

use std::sync::Arc;

use serde_json::{Map, Value, json};
use swdesk_auction::compute::StrongRef;
use swdesk_auction::request::ONLY_ME_NSID;
use swdesk_lexicon::com::publicdomainrelay::temp::compute::vm;
use swdesk_lexicon::com::publicdomainrelay::temp::market::{
    bid, bids, rfp, submit_bid, submit_rfp,
};

use crate::bidder::{Bidder, strong_json};
use crate::config::Behaviour;
use crate::records::{Fetched, fetch, parts, strong_ref};
use crate::state::BidMade;
use crate::xrpc::Refusal;

/// The path of the free-grant endpoint (`{url}/{accepts.free at-uri}/{accepts.free cid}`).
pub const GRANT_PATH: &str = "free/receipt";
/// The path of the x402 payment endpoint of paid terms (`{url}/{accepts.x402 at-uri}/{cid}`):
/// it answers `402 PaymentRequired`.
pub const PAYMENT_PATH: &str = "x402/receipt";
/// The collection of paid terms (not in our lexicons: written as raw JSON).
pub const PAID_TERMS_NSID: &str = "com.publicdomainrelay.temp.market.bids.x402";
/// The currency paid terms ask in.
pub const PAID_CURRENCY: &str = "USDC";

/// Answers `submitRfp` from `issuer`.
pub async fn submit_rfp(
    bidder: &Arc<Bidder>,
    issuer: &str,
    input: submit_rfp::Input,
) -> Result<submit_rfp::Output, Refusal> {
    let reference = StrongRef {
        uri: input.rfp_uri,
        cid: input.rfp_cid,
    };
    let rfp = checked_rfp(bidder, issuer, &reference).await?;
    let behaviour = bidder.behaviour();
    if let Some(made) = bidder.ledger.bid_on(&reference) {
        return Ok(answered(Some(&made), &behaviour));
    }
    bidder.ledger.saw_rfp(&reference, issuer);
    if let Some(reason) = declined(bidder, &rfp, &behaviour).await {
        tracing::info!(rfp = %reference.uri, %reason, "the sandbox bidder declines an RFP");
        bidder.ledger.refused(&reference);
        return Ok(answered(None, &behaviour));
    }
    match rfp.value["submitBid"].as_str() {
        Some(service) => {
            spawn_bid_to_service(
                Arc::clone(bidder),
                rfp.clone(),
                behaviour,
                service.to_owned(),
            );
            Ok(submit_rfp::Output {
                ok: true,
                ..answered(None, &Behaviour::default())
            })
        }
        None => {
            tokio::time::sleep(behaviour.bid_delay).await;
            let made = write_bid(bidder, &rfp, &behaviour).await?;
            Ok(answered(Some(&made), &behaviour))
        }
    }
}

/// The RFP `reference` names, once every check of the module doc passed.
async fn checked_rfp(
    bidder: &Bidder,
    issuer: &str,
    reference: &StrongRef,
) -> Result<Fetched, Refusal> {
    let (author, collection, _) = parts(&reference.uri)?;
    if collection != rfp::NSID {
        return Err(Refusal::invalid(format!(
            "{} is not a {}",
            reference.uri,
            rfp::NSID
        )));
    }
    if author != issuer {
        return Err(Refusal::forbidden(format!(
            "the caller {issuer} did not author the RFP {}",
            reference.uri
        )));
    }
    let fetched = fetch(&bidder.resolver, reference).await?;
    bidder.check_attested(&fetched, "RFP").await?;
    let payload = strong_ref(&fetched.value, "payload")?;
    let (_, payload_nsid, _) = parts(&payload.uri)?;
    if payload_nsid != vm::NSID {
        return Err(Refusal::bad(
            "NotApplicable",
            format!(
                "this bidder bids on {} payloads, not {payload_nsid}",
                vm::NSID
            ),
        ));
    }
    fetch(&bidder.resolver, &payload).await?;
    Ok(fetched)
}

/// Why the bidder declines `rfp`, if it does.
async fn declined(bidder: &Bidder, rfp: &Fetched, behaviour: &Behaviour) -> Option<String> {
    if behaviour.refuse {
        return Some("the bidder is told to refuse".to_owned());
    }
    let policy = strong_ref(&rfp.value, "policy").ok()?;
    let fetched = match fetch(&bidder.resolver, &policy).await {
        Ok(fetched) => fetched,
        Err(refusal) => return Some(format!("its policy cannot be read: {}", refusal.message)),
    };
    match fetched.collection.as_str() {
        ONLY_ME_NSID if fetched.value["requesterDid"].as_str() == Some(bidder.account.did()) => {
            None
        }
        ONLY_ME_NSID => Some("its only_me policy names another bidder".to_owned()),
        other => Some(format!(
            "this sandbox bidder does not evaluate the policy {other}"
        )),
    }
}

/// Writes the terms and the bid on `rfp`, signed, and remembers them.
pub async fn write_bid(
    bidder: &Bidder,
    rfp: &Fetched,
    behaviour: &Behaviour,
) -> Result<BidMade, Refusal> {
    let cost = behaviour.paid_cost().map(str::to_owned);
    let (collection, terms) = match &cost {
        None => (bids::free::NSID, free_terms(bidder)),
        Some(cost) => (PAID_TERMS_NSID, paid_terms(bidder, cost)),
    };
    let (terms_ref, _) = bidder.write_signed(collection, &terms).await?;
    let mut payload = strong_json(&terms_ref);
    if let Some(cost) = &cost {
        payload["cost"] = Value::String(cost.clone());
    }
    let record = json!({
        "$type": bid::NSID,
        "rfp": strong_json(&rfp.reference),
        "payload": payload,
        "submitAccept": bidder.market_service(),
        "signatures": [],
    });
    let (bid_ref, _) = bidder.write_signed(bid::NSID, &record).await?;
    let made = BidMade {
        rfp: rfp.reference.clone(),
        requester: rfp.author.clone(),
        bid: bid_ref,
        terms: terms_ref,
        cost,
    };
    bidder.ledger.bid_made(made.clone());
    tracing::info!(rfp = %rfp.reference.uri, bid = %made.bid.uri, cost = ?made.cost, "the sandbox bidder bids");
    Ok(made)
}

/// Free terms: the free grant at [`GRANT_PATH`].
fn free_terms(bidder: &Bidder) -> Value {
    json!({
        "$type": bids::free::NSID,
        "reason": "the local sandbox bidder (simulated guests)",
        "url": endpoint(bidder, GRANT_PATH),
        "signatures": [],
    })
}

/// Paid terms asking `cost`, once, before the guest starts, at [`PAYMENT_PATH`].
fn paid_terms(bidder: &Bidder, cost: &str) -> Value {
    json!({
        "$type": PAID_TERMS_NSID,
        "cost": cost,
        "currency": PAID_CURRENCY,
        "frequency": "one-time",
        "prepay": true,
        "url": endpoint(bidder, PAYMENT_PATH),
        "signatures": [],
    })
}

/// `path` on the bidder's URL.
fn endpoint(bidder: &Bidder, path: &str) -> String {
    format!("{}/{path}", bidder.url.as_str().trim_end_matches('/'))
}

/// After the delay, bids and hands the bid to the RFP's `submitBid` service.
fn spawn_bid_to_service(bidder: Arc<Bidder>, rfp: Fetched, behaviour: Behaviour, service: String) {
    tokio::spawn(async move {
        tokio::time::sleep(behaviour.bid_delay).await;
        let made = match write_bid(&bidder, &rfp, &behaviour).await {
            Ok(made) => made,
            Err(refusal) => {
                tracing::warn!(rfp = %rfp.reference.uri, error = %refusal.message, "no bid written");
                return;
            }
        };
        let record = match crate::records::fetch(&bidder.resolver, &made.bid).await {
            Ok(fetched) => fetched.value,
            Err(refusal) => {
                tracing::warn!(bid = %made.bid.uri, error = %refusal.message, "the bid cannot be read back");
                return;
            }
        };
        let body = json!({"uri": made.bid.uri, "cid": made.bid.cid, "record": record});
        if let Err(error) = bidder.call_service(&service, submit_bid::NSID, &body).await {
            tracing::warn!(%service, %error, "submitBid failed");
        }
    });
}

/// `{ok, bidUri?, bidCid?}`: ok with the bid when there is one, `ok: false` otherwise. A
/// bidder told to misstate its bid names the cid of its terms instead (a real cid, of
/// another record).
fn answered(made: Option<&BidMade>, behaviour: &Behaviour) -> submit_rfp::Output {
    let cid = |made: &BidMade| {
        if behaviour.misstate_bid_cid {
            made.terms.cid.clone()
        } else {
            made.bid.cid.clone()
        }
    };
    submit_rfp::Output {
        ok: made.is_some(),
        bid_uri: made.map(|made| made.bid.uri.clone()),
        bid_cid: made.map(cid),
        extra: Map::new(),
    }
}
