//! The guest's events as the requester reads them: the provider's `market.event` records about
//! our receipt, each naming a payload record (`compute.events.vm.started`,
//! `compute.events.vm.onNetwork {address}`, ...) in the provider's repo. What counts is decided
//! here; reading the records is the requester's.
//!
//! Invariants: an event counts only when it is about our receipt, is in the receipt's bidder's
//! repo, and every inline signature on it verifies as a record of that repo ([`about_receipt`])
//! and is by a key bound to the bidder under the auction's rule (`swdesk_auction::trust::bind`,
//! looked up by the requester): a self-signed report by a stranger's key does not count. Its
//! time and detail come from its payload when the payload can be read at the cid the event
//! names, else the time it was seen.

use serde_json::Value;
use swdesk_atproto::attestation::{SignatureCheck, verified_signers};
use swdesk_auction::compute::{GuestEvent, StrongRef};
use swdesk_auction::flow::Held;
use swdesk_auction::trust::KeyBinding;
use swdesk_kernel::repo::StoredRecord;
use swdesk_kernel::timestamp::Timestamp;
use swdesk_kernel::uri::RecordUri;
use swdesk_lexicon::com::publicdomainrelay::temp::compute::events::vm::on_network;

/// The NSID prefix cut from an event's kind.
const EVENTS_PREFIX: &str = "com.publicdomainrelay.temp.compute.events.";

/// One `market.event` about our receipt: the record and the payload it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reported {
    /// The `market.event` record's at-uri.
    pub event: String,
    /// Its payload.
    pub payload: StrongRef,
    /// How each key that signed it is bound to the bidder (filled in once bound).
    pub bindings: Vec<KeyBinding>,
}

/// A report whose signatures verify, with those signatures: it counts once each signer's key
/// is bound to the bidder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unbound {
    /// The report, its bindings still empty.
    pub report: Reported,
    /// Its verified signatures.
    pub signers: Vec<SignatureCheck>,
}

impl Reported {
    /// The payload's collection (NSID); empty when its uri is not a record's.
    pub fn payload_nsid(&self) -> String {
        RecordUri::parse(&self.payload.uri)
            .map(|uri| uri.collection().to_owned())
            .unwrap_or_default()
    }

    /// Whether it reports the guest on the network.
    pub fn is_on_network(&self) -> bool {
        self.payload_nsid() == on_network::NSID
    }

    /// The event to keep, from its payload when read (`None`: unreadable), seen at `seen_at`.
    pub fn to_event(&self, payload: Option<&Value>, seen_at: Timestamp) -> GuestEvent {
        let nsid = self.payload_nsid();
        let at = payload
            .and_then(|value| value["createdAt"].as_str())
            .and_then(|text| Timestamp::parse_rfc3339(text).ok())
            .unwrap_or(seen_at);
        GuestEvent {
            kind: nsid.strip_prefix(EVENTS_PREFIX).unwrap_or(&nsid).to_owned(),
            at,
            detail: payload.and_then(detail),
            uri: self.event.clone(),
        }
    }
}

/// The events among `records` (a page of the bidder's `market.event`s) about `held`'s receipt,
/// in the bidder's repo, whose inline signatures all verify there: each still to be bound.
pub fn about_receipt(records: &[StoredRecord], held: &Held) -> Vec<Unbound> {
    records
        .iter()
        .filter(|record| {
            record.uri.authority() == held.bidder
                && record.value["receipt"]["uri"].as_str() == Some(held.receipt.uri.as_str())
        })
        .filter_map(|record| {
            let signers = verified_signers(&record.value, &held.bidder)?;
            let payload = &record.value["payload"];
            let report = Reported {
                event: record.uri.to_string(),
                payload: StrongRef {
                    uri: payload["uri"].as_str()?.to_owned(),
                    cid: payload["cid"].as_str()?.to_owned(),
                },
                bindings: Vec::new(),
            };
            Some(Unbound { report, signers })
        })
        .collect()
}

/// What a payload tells beyond its kind: the guest's address.
fn detail(payload: &Value) -> Option<String> {
    payload["address"]
        .as_str()
        .filter(|address| !address.is_empty())
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn reported(nsid: &str) -> Reported {
        Reported {
            event: "at://did:plc:bidder/com.publicdomainrelay.temp.market.event/3l".into(),
            payload: StrongRef {
                uri: format!("at://did:plc:bidder/{nsid}/3m"),
                cid: "bafypayload".into(),
            },
            bindings: Vec::new(),
        }
    }

    fn at(text: &str) -> Timestamp {
        Timestamp::parse_rfc3339(text).expect("time")
    }

    #[test]
    fn an_on_network_event_shows_its_kind_time_and_address() {
        let event = reported(on_network::NSID);
        assert!(event.is_on_network());
        let payload = json!({"address": "10.0.0.7", "createdAt": "2027-01-15T08:00:05Z"});
        let kept = event.to_event(Some(&payload), at("2027-01-15T09:00:00Z"));
        assert_eq!(kept.kind, "vm.onNetwork");
        assert_eq!(kept.at, at("2027-01-15T08:00:05Z"));
        assert_eq!(kept.detail.as_deref(), Some("10.0.0.7"));
        assert_eq!(kept.uri, event.event);
    }

    #[test]
    fn an_unreadable_payload_is_shown_at_the_time_it_was_seen() {
        let event = reported("com.publicdomainrelay.temp.compute.events.vm.started");
        assert!(!event.is_on_network());
        let kept = event.to_event(None, at("2027-01-15T09:00:00Z"));
        assert_eq!(kept.kind, "vm.started");
        assert_eq!(kept.at, at("2027-01-15T09:00:00Z"));
        assert_eq!(kept.detail, None);
        assert_eq!(
            reported("org.example.other")
                .to_event(None, at("2027-01-15T09:00:00Z"))
                .kind,
            "org.example.other"
        );
    }
}
