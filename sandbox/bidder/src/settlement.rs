//! Settling an accepted bid, the bidder's side.
//!
//! The free grant: the requester writes a `market.accepts.free` about one of the bidder's bids
//! and GETs `{url}/{accepts.free at-uri}/{accepts.free cid}` (the `url` of the bid's
//! `bids.free` terms, open like the public market's grant endpoint). The bidder reads the
//! `accepts.free` at that CID from the requester's PDS, checks its signature, that it accepts one
//! of its bids (and that bid's terms) and that its author wrote the RFP of that bid, then writes
//! a `market.receipts.free` whose `cid` binds it to that `accepts.free` in the requester's repo,
//! and answers `{uri, cid}`. The same `accepts.free` always gets the same grant. A bid with paid
//! terms (`bids.x402`) gets no free grant; its payment endpoint answers `402` (see
//! [`crate::routes`]), so it is never accepted.
//!
//! `market.submitAccept {acceptUri, acceptCid}`: the caller's token names the requester; the
//! accept must be authored by it, stand at the CID, carry a verifying signature, point at one of
//! the bidder's bids and that bid's RFP, be authored by the RFP's author, and carry as `payload`
//! the bidder's grant for that bid, or no `payload` at all when the bid's terms are free (the
//! public implementation's requester settles a free bid with no grant). The bidder then writes
//! the `market.receipt` (`rfp`, `bid`, `accept`, `payload` = the grant when there is one,
//! `submitEvent` = its `#compute_event` service, `cid` = the attestation CID over the accept in
//! the requester's repo), signed, answers
//! `{id, uri, cid, submitEvent}`, and boots the guest. The same accept gets the same receipt; a
//! bid already accepted by another accept is refused.

use std::sync::Arc;

use serde_json::{Map, Value, json};
use swdesk_auction::compute::StrongRef;
use swdesk_lexicon::attestation::attestation_cid;
use swdesk_lexicon::com::publicdomainrelay::temp::market::{
    accept, accepts, receipt, receipts, submit_accept,
};

use crate::bidder::{Bidder, strong_json};
use crate::records::{Fetched, fetch, parts, strong_ref};
use crate::state::{BidMade, GrantMade, Guest, GuestPhase};
use crate::xrpc::Refusal;

/// The grant for the `accepts.free` at `accepts`.
pub async fn grant(bidder: &Bidder, accepts: StrongRef) -> Result<StrongRef, Refusal> {
    if let Some(made) = bidder.ledger.grant_for(&accepts) {
        return Ok(made.grant);
    }
    let (_, collection, _) = parts(&accepts.uri)?;
    if collection != accepts::free::NSID {
        return Err(Refusal::invalid(format!(
            "{} is not a {}",
            accepts.uri,
            accepts::free::NSID
        )));
    }
    let fetched = fetch(&bidder.resolver, &accepts).await?;
    bidder.check_attested(&fetched, "accepts.free").await?;
    let made = accepted_bid(bidder, &fetched)?;
    if !made.is_free() {
        return Err(Refusal::invalid(format!(
            "the bid {} has paid terms ({}): it is settled at their x402 url, not by a free grant",
            made.bid.uri, made.terms.uri
        )));
    }
    if let Ok(terms) = strong_ref(&fetched.value, "payload")
        && terms != made.terms
    {
        return Err(Refusal::invalid(format!(
            "the accepts.free accepts {}, not the bid's terms",
            terms.uri
        )));
    }
    let record = json!({"$type": receipts::free::NSID, "accept": strong_json(&accepts), "cid": "", "signatures": []});
    let record = bound(record, &fetched)?;
    let (grant, _) = bidder.write_signed(receipts::free::NSID, &record).await?;
    bidder.ledger.grant_made(GrantMade {
        accepts,
        bid: made.bid,
        grant: grant.clone(),
    });
    Ok(grant)
}

/// The bidder's bid `fetched` (an `accepts.free` or an accept) points at, when its author wrote
/// that bid's RFP.
fn accepted_bid(bidder: &Bidder, fetched: &Fetched) -> Result<BidMade, Refusal> {
    let bid = strong_ref(&fetched.value, "bid")?;
    let made = bidder.ledger.bid(&bid).ok_or_else(|| {
        Refusal::invalid(format!(
            "{} ({}) is not a bid of this bidder",
            bid.uri, bid.cid
        ))
    })?;
    if made.requester != fetched.author {
        return Err(Refusal::forbidden(format!(
            "{} accepts a bid on {}'s RFP, which it did not author",
            fetched.author, made.requester
        )));
    }
    Ok(made)
}

/// `proof` with its `cid` set to the attestation CID over `subject` in its author's repo.
fn bound(mut proof: Value, subject: &Fetched) -> Result<Value, Refusal> {
    let cid = attestation_cid(&subject.value, &proof, &subject.author).map_err(|error| {
        Refusal::invalid(format!(
            "{} cannot be attested: {error}",
            subject.reference.uri
        ))
    })?;
    proof["cid"] = Value::String(cid.to_string());
    Ok(proof)
}

/// Answers `submitAccept` from `issuer`.
pub async fn submit_accept(
    bidder: &Arc<Bidder>,
    issuer: &str,
    input: submit_accept::Input,
) -> Result<submit_accept::Output, Refusal> {
    let reference = StrongRef {
        uri: input.accept_uri,
        cid: input.accept_cid,
    };
    if let Some(guest) = bidder.ledger.guest_where(|guest| guest.accept == reference) {
        return answer(bidder, &guest.receipt);
    }
    let fetched = checked_accept(bidder, issuer, &reference).await?;
    let made = accepted_bid(bidder, &fetched)?;
    if strong_ref(&fetched.value, "rfp")? != made.rfp {
        return Err(Refusal::invalid(
            "the accept names another RFP than the bid's",
        ));
    }
    if bidder
        .ledger
        .guest_where(|guest| guest.bid == made.bid)
        .is_some()
    {
        return Err(Refusal::invalid(format!(
            "the bid {} is already accepted",
            made.bid.uri
        )));
    }
    let grant = granted(bidder, &fetched, &made)?;
    let mut record = json!({
        "$type": receipt::NSID,
        "rfp": strong_json(&made.rfp),
        "bid": strong_json(&made.bid),
        "accept": strong_json(&reference),
        "submitEvent": bidder.event_service(),
        "cid": "",
        "signatures": [],
    });
    if let Some(grant) = grant {
        record["payload"] = strong_json(&grant);
    }
    let (written, _) = bidder
        .write_signed(receipt::NSID, &bound(record, &fetched)?)
        .await?;
    let guest = new_guest(bidder, &written, &fetched, &made);
    bidder.ledger.add_guest(guest);
    crate::guest::boot(
        Arc::clone(bidder),
        written.clone(),
        fetched.value["submitEvent"].as_str().map(str::to_owned),
    );
    tracing::info!(receipt = %written.uri, "the sandbox bidder accepted; the guest boots");
    answer(bidder, &written)
}

/// The accept `reference` names, authored by `issuer`, at its CID, signed.
async fn checked_accept(
    bidder: &Bidder,
    issuer: &str,
    reference: &StrongRef,
) -> Result<Fetched, Refusal> {
    let (author, collection, _) = parts(&reference.uri)?;
    if collection != accept::NSID {
        return Err(Refusal::invalid(format!(
            "{} is not a {}",
            reference.uri,
            accept::NSID
        )));
    }
    if author != issuer {
        return Err(Refusal::forbidden(format!(
            "the caller {issuer} did not author the accept {}",
            reference.uri
        )));
    }
    let fetched = fetch(&bidder.resolver, reference).await?;
    bidder.check_attested(&fetched, "accept").await?;
    Ok(fetched)
}

/// The accept's `payload`: the bidder's grant for `made`; none when the accept names no
/// settlement and `made` is free.
fn granted(
    bidder: &Bidder,
    accept: &Fetched,
    made: &BidMade,
) -> Result<Option<StrongRef>, Refusal> {
    if accept.value.get("payload").is_none_or(Value::is_null) {
        return if made.is_free() {
            Ok(None)
        } else {
            Err(Refusal::invalid(
                "the accept carries no settlement of the bid's paid terms",
            ))
        };
    }
    let payload = strong_ref(&accept.value, "payload")?;
    match bidder.ledger.grant(&payload) {
        Some(grant) if grant.bid == made.bid => Ok(Some(payload)),
        _ => Err(Refusal::invalid(format!(
            "the accept's payload {} is not this bidder's grant for the bid",
            payload.uri
        ))),
    }
}

fn new_guest(bidder: &Bidder, receipt: &StrongRef, accept: &Fetched, made: &BidMade) -> Guest {
    let number = bidder.ledger.snapshot().guests.len() % 250 + 1;
    Guest {
        receipt: receipt.clone(),
        accept: accept.reference.clone(),
        accept_author: accept.author.clone(),
        bid: made.bid.clone(),
        phase: GuestPhase::Provisioning,
        events: Vec::new(),
        released_by: None,
        address: format!("192.0.2.{number}"),
        key: None,
        opened: Vec::new(),
    }
}

fn answer(bidder: &Bidder, receipt: &StrongRef) -> Result<submit_accept::Output, Refusal> {
    let (_, _, rkey) = parts(&receipt.uri)?;
    Ok(submit_accept::Output {
        id: rkey,
        uri: receipt.uri.clone(),
        cid: receipt.cid.clone(),
        submit_event: bidder.event_service(),
        extra: Map::new(),
    })
}
