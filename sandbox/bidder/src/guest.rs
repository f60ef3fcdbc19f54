//! The simulated guest behind a receipt, and its release.
//!
//! Boot: one `boot_step` after the receipt the bidder writes `compute.events.vm.started` and a
//! signed `market.event {receipt, payload}` carrying it, one more step later
//! `compute.events.vm.onNetwork {address}` and its `market.event`, then the guest's key for its
//! secrets ([`crate::secrets`]), all in its own repo; when
//! the accept named a `submitEvent` service of the requester, each `market.event` is also sent
//! there (`market.submitEvent {uri, cid, record}`). Told to fail after accept, the guest goes
//! to `Failed` at the first step and reports nothing.
//!
//! `market.submitEvent {uri, cid, record}`: the caller's token names the event's author; the
//! `market.event` must be in the caller's repo at that CID, signed, about one of the bidder's
//! receipts, and carry a `compute.events.vm.delete` (a release) or a
//! `computer.socialweb.secret.sealed` (a secret for the guest) of the same author. Only the
//! author of the receipt's accept may act on its guest: another account is refused with
//! `Forbidden` (403). A release tears the guest down (a second release of it is answered `ok`
//! again); a sealed secret is opened by the guest.

use std::sync::Arc;

use serde_json::{Map, json};
use swdesk_auction::compute::StrongRef;
use swdesk_lexicon::com::publicdomainrelay::temp::compute::events::vm::{
    delete, on_network, started,
};
use swdesk_lexicon::com::publicdomainrelay::temp::market::{event, submit_event};
use swdesk_lexicon::computer::socialweb::secret::sealed;

use crate::bidder::{Bidder, now_rfc3339};
use crate::records::{fetch, parts, strong_ref};
use crate::state::GuestPhase;
use crate::xrpc::Refusal;

/// Boots the guest of `receipt` in the background; `requester_events` is the accept's
/// `submitEvent` service, if any.
pub fn boot(bidder: Arc<Bidder>, receipt: StrongRef, requester_events: Option<String>) {
    let fails = bidder.behaviour().fail_after_accept;
    tokio::spawn(async move {
        tokio::time::sleep(bidder.boot_step).await;
        if fails {
            bidder
                .ledger
                .advance(&receipt, GuestPhase::Provisioning, GuestPhase::Failed, None);
            tracing::info!(receipt = %receipt.uri, "the simulated guest failed (as told)");
            return;
        }
        let steps = [
            (GuestPhase::Provisioning, GuestPhase::Started),
            (GuestPhase::Started, GuestPhase::OnNetwork),
        ];
        for (index, (from, to)) in steps.into_iter().enumerate() {
            if index > 0 {
                tokio::time::sleep(bidder.boot_step).await;
            }
            if !report(&bidder, &receipt, from, to, requester_events.as_deref()).await {
                return;
            }
        }
        crate::secrets::publish_key(&bidder, &receipt, requester_events.as_deref()).await;
    });
}

/// Writes the event of the step `from` → `to`, moves the guest on, then sends the event; false
/// when the guest left `from` or the event could not be written.
async fn report(
    bidder: &Bidder,
    receipt: &StrongRef,
    from: GuestPhase,
    to: GuestPhase,
    requester_events: Option<&str>,
) -> bool {
    let Some(guest) = bidder.ledger.guest_where(|guest| &guest.receipt == receipt) else {
        return false;
    };
    if guest.phase != from {
        return false;
    }
    let (collection, payload) = match to {
        GuestPhase::Started => (
            started::NSID,
            json!({"$type": started::NSID, "createdAt": now_rfc3339()}),
        ),
        _ => (
            on_network::NSID,
            json!({"$type": on_network::NSID, "address": guest.address, "createdAt": now_rfc3339()}),
        ),
    };
    let (event_ref, record) = match bidder.write_event(receipt, collection, &payload).await {
        Ok(written) => written,
        Err(refusal) => {
            tracing::warn!(receipt = %receipt.uri, error = %refusal.message, "a guest event cannot be written");
            return false;
        }
    };
    // The guest is in its new phase before anyone is told: a requester that hears the event
    // and asks the bidder finds the phase it heard of.
    if !bidder
        .ledger
        .advance(receipt, from, to, Some(event_ref.clone()))
    {
        return false;
    }
    bidder
        .tell_requester(requester_events, &event_ref, &record)
        .await;
    true
}

/// Answers `submitEvent` from `issuer`: the release of a guest, or a secret sealed to it.
pub async fn submit_event(
    bidder: &Bidder,
    issuer: &str,
    input: submit_event::Input,
) -> Result<submit_event::Output, Refusal> {
    let reference = StrongRef {
        uri: input.uri,
        cid: input.cid,
    };
    let (author, collection, _) = parts(&reference.uri)?;
    if collection != event::NSID {
        return Err(Refusal::invalid(format!(
            "{} is not a {}",
            reference.uri,
            event::NSID
        )));
    }
    if author != issuer {
        return Err(Refusal::forbidden(format!(
            "the caller {issuer} did not author the event {}",
            reference.uri
        )));
    }
    let fetched = fetch(&bidder.resolver, &reference).await?;
    bidder.check_attested(&fetched, "event").await?;
    let receipt = strong_ref(&fetched.value, "receipt")?;
    let guest = bidder
        .ledger
        .guest_where(|guest| guest.receipt == receipt)
        .ok_or_else(|| {
            Refusal::invalid(format!("{} is not a receipt of this bidder", receipt.uri))
        })?;
    let payload = strong_ref(&fetched.value, "payload")?;
    let (payload_author, payload_nsid, _) = parts(&payload.uri)?;
    if payload_nsid != delete::NSID && payload_nsid != sealed::NSID {
        return Err(Refusal::invalid(format!(
            "this bidder acts on {} and {} events only, not {payload_nsid}",
            delete::NSID,
            sealed::NSID
        )));
    }
    if author != guest.accept_author || payload_author != author {
        return Err(Refusal::forbidden(format!(
            "only the author of the accept ({}) may act on this guest",
            guest.accept_author
        )));
    }
    let fetched_payload = fetch(&bidder.resolver, &payload).await?;
    if payload_nsid == sealed::NSID {
        crate::secrets::open(bidder, &guest, &fetched_payload.value)?;
    } else {
        bidder.ledger.tear_down(&receipt, &reference);
        tracing::info!(receipt = %receipt.uri, "the simulated guest is torn down");
    }
    Ok(submit_event::Output {
        ok: true,
        extra: Map::new(),
    })
}
