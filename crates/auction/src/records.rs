//! The records the requester writes after the auction, built from what the flow persisted:
//! the acceptance of free terms (`market.accepts.free`), the accept (`market.accept`), the
//! release (`compute.events.vm.delete`), a secret sealed to the guest
//! (`computer.socialweb.secret.sealed`), and the `market.event` that carries either to the
//! provider.
//!
//! Invariants: every record comes out unsigned (`signatures` empty; the adapter signs it) and
//! validates against our lexicons and the public ones; its references are exactly the strong
//! references the flow holds, never rebuilt from parts.

use serde_json::Map;
use swdesk_lexicon::com::publicdomainrelay::temp::compute::events::vm::delete::Delete;
use swdesk_lexicon::com::publicdomainrelay::temp::market::accept::Accept;
use swdesk_lexicon::com::publicdomainrelay::temp::market::accepts::free::Free as FreeAccept;
use swdesk_lexicon::com::publicdomainrelay::temp::market::event::Event;

use swdesk_kernel::secret::SecretRef;
use swdesk_kernel::timestamp::Timestamp;
use swdesk_lexicon::Bytes;
use swdesk_lexicon::computer::socialweb::secret::sealed::Sealed;

use super::flow::{Held, Won};
use super::request::lexicon_ref;
use crate::compute::phase::StrongRef;

/// The `reason` of a release asked by the owner.
pub const RELEASE_REASON: &str = "released";

/// The acceptance of the winning bid's free terms.
pub fn free_accept(won: &Won) -> FreeAccept {
    FreeAccept {
        bid: lexicon_ref(&won.winner.bid),
        payload: Some(lexicon_ref(&won.winner.terms)),
        signatures: Vec::new(),
        extra: Map::new(),
    }
}

/// The accept of the winning bid, with the bidder's grant as its payload and our event
/// service, if we run one.
pub fn accept(won: &Won, grant: Option<&StrongRef>, submit_event: Option<&str>) -> Accept {
    Accept {
        rfp: lexicon_ref(&won.rfp),
        bid: lexicon_ref(&won.winner.bid),
        payload: grant.map(lexicon_ref),
        submit_event: submit_event.map(str::to_owned),
        signatures: Vec::new(),
        extra: Map::new(),
    }
}

/// The delete event of a release asked at `requested_at`.
pub fn delete_event(requested_at: Timestamp) -> Delete {
    Delete {
        reason: RELEASE_REASON.to_owned(),
        created_at: requested_at.to_rfc3339(),
        extra: Map::new(),
    }
}

/// A secret's ciphertext sealed to `recipient`, the guest of `held`, at `at`.
pub fn sealed_secret(
    held: &Held,
    recipient: &str,
    secret: &SecretRef,
    ciphertext: Vec<u8>,
    at: Timestamp,
) -> Sealed {
    Sealed {
        receipt: lexicon_ref(&held.receipt),
        recipient: recipient.to_owned(),
        name: secret.name.clone(),
        version: i64::from(secret.version),
        ciphertext: Bytes(ciphertext),
        created_at: at.to_rfc3339(),
        extra: Map::new(),
    }
}

/// The market event that carries `payload` (a delete event, a sealed secret) to the provider
/// of `held`.
pub fn event_about(held: &Held, payload: &StrongRef) -> Event {
    Event {
        receipt: lexicon_ref(&held.receipt),
        payload: lexicon_ref(payload),
        signatures: Vec::new(),
        extra: Map::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bids::{Cost, CountedBid};
    use swdesk_lexicon::Record;
    use swdesk_lexicon::validate::validate_record;

    const OWNER: &str = "did:plc:ewvi7nxzyoun6zhxrhs64oiz";
    const BIDDER: &str = "did:web:bidder.example.com";
    const CID: &str = "bafyreiclp443lavogvhj3d2ob2cxbfuscni2k5jk7bebjzg7khl3esabwq";

    fn strong(did: &str, collection: &str) -> StrongRef {
        StrongRef {
            uri: format!("at://{did}/com.publicdomainrelay.temp.{collection}/3lbjpbyznfc2a"),
            cid: CID.into(),
        }
    }

    fn won() -> Won {
        Won {
            rfp: strong(OWNER, "market.rfp"),
            winner: CountedBid {
                bidder: BIDDER.into(),
                bid: strong(BIDDER, "market.bid"),
                terms: strong(BIDDER, "market.bids.free"),
                cost: Cost::Nanos(0),
                free: true,
                submit_accept: None,
                received_at: Timestamp::MIN,
                checked: None,
            },
            bid_count: 2,
        }
    }

    fn problems<R: Record>(record: &R) -> Vec<swdesk_lexicon::Problem> {
        validate_record(R::NSID, &record.to_record_value().expect("a record value"))
    }

    #[test]
    fn free_terms_without_a_grant_endpoint_make_an_accept_without_payload() {
        let accept = accept(&won(), None, Some("did:plc:owner#pdr_temp_compute_event"));
        assert_eq!(accept.payload, None);
        assert_eq!(problems(&accept), vec![]);
    }

    #[test]
    fn the_accept_points_at_our_rfp_the_winning_bid_and_the_grant() {
        let grant = strong(BIDDER, "market.receipts.free");
        let accept = accept(
            &won(),
            Some(&grant),
            Some("did:web:desk.example.com#compute_event"),
        );
        assert_eq!(accept.rfp.uri, won().rfp.uri);
        assert_eq!(accept.bid.uri, won().winner.bid.uri);
        assert_eq!(
            accept.payload.as_ref().map(|p| p.uri.as_str()),
            Some(grant.uri.as_str())
        );
        assert_eq!(problems(&accept), vec![]);
        let free = free_accept(&won());
        assert_eq!(free.payload.map(|p| p.uri), Some(won().winner.terms.uri));
        assert_eq!(problems(&free_accept(&won())), vec![]);
    }

    #[test]
    fn the_release_is_a_delete_event_carried_by_a_market_event_about_the_receipt() {
        let held = Held {
            receipt: strong(BIDDER, "market.receipt"),
            submit_event: "did:web:bidder.example.com#compute_event".into(),
            bidder: BIDDER.into(),
            checked: None,
        };
        let at = Timestamp::parse_rfc3339("2026-12-03T11:00:00Z").expect("time");
        let delete = delete_event(at);
        assert_eq!(delete.created_at, "2026-12-03T11:00:00.000Z");
        assert_eq!(problems(&delete), vec![]);
        let delete_ref = strong(OWNER, "compute.events.vm.delete");
        let event = event_about(&held, &delete_ref);
        assert_eq!(event.receipt.uri, held.receipt.uri);
        assert_eq!(event.payload.uri, delete_ref.uri);
        assert_eq!(problems(&event), vec![]);
    }
}
