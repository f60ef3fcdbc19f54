//! The bidder's `did:web` document, served at `/.well-known/did.json`: its id, its attestation
//! key (`#attestation`, the `did:key` its inline signatures name) and two services on one
//! loopback endpoint: `#temp_market` (where requesters call `submitRfp` and `submitAccept`, the
//! `endpointUrl` of its offering and the `submitAccept` of its bids) and `#compute_event` (where
//! they call `submitEvent`, the `submitEvent` of its receipts). A requester finds the bidder's
//! URL here, never from configuration.

use serde_json::{Value, json};

/// The fragment of the market service (`submitRfp`, `submitAccept`).
pub const MARKET_SERVICE_ID: &str = "#temp_market";
/// The type of the market service.
pub const MARKET_SERVICE_TYPE: &str = "ComputeMarketBidder";
/// The fragment of the event service (`submitEvent`).
pub const EVENT_SERVICE_ID: &str = "#compute_event";
/// The type of the event service.
pub const EVENT_SERVICE_TYPE: &str = "ComputeMarketEvents";

/// The DID document of `did`, serving at `endpoint`, signing with `attestation_did_key`.
pub fn document(did: &str, endpoint: &str, attestation_did_key: &str) -> Value {
    let endpoint = endpoint.trim_end_matches('/');
    json!({
        "@context": ["https://www.w3.org/ns/did/v1", "https://w3id.org/security/multikey/v1"],
        "id": did,
        "verificationMethod": [{
            "id": format!("{did}#attestation"),
            "type": "Multikey",
            "controller": did,
            "publicKeyMultibase": attestation_did_key.trim_start_matches("did:key:"),
        }],
        "service": [
            {"id": MARKET_SERVICE_ID, "type": MARKET_SERVICE_TYPE, "serviceEndpoint": endpoint},
            {"id": EVENT_SERVICE_ID, "type": EVENT_SERVICE_TYPE, "serviceEndpoint": endpoint},
        ],
    })
}

/// The same `did:web` with its port written as the public implementation writes the audience
/// of a call (`did:web:` and the service URL's host, port unencoded: `did:web:localhost:4000`
/// for `did:web:localhost%3A4000`), when the DID names a port. Only the sandbox's services have
/// ports; a bidder on the public network is `did:web:HOST` in both forms.
pub fn host_form(did: &str) -> Option<String> {
    let host = did.strip_prefix("did:web:")?;
    let (name, port) = host.split_once("%3A")?;
    (!name.contains(':') && port.parse::<u16>().is_ok()).then(|| format!("did:web:{name}:{port}"))
}

/// Every `aud` a call to the bidder `did` may carry: its DID in both forms ([`host_form`]), and
/// each with the fragment of one of its services (`did:web:HOST#temp_market`, as a requester
/// addressing one service writes it). A fragment naming no service of its is none of them.
pub fn audiences(did: &str) -> Vec<String> {
    let forms: Vec<String> = std::iter::once(did.to_owned())
        .chain(host_form(did))
        .collect();
    let services = forms.iter().flat_map(|form| {
        [MARKET_SERVICE_ID, EVENT_SERVICE_ID].map(|service| format!("{form}{service}"))
    });
    forms.iter().cloned().chain(services).collect()
}

/// `did:web:HOST#fragment` split into the DID and the `#fragment`.
pub fn split_service_ref(reference: &str) -> Option<(&str, &str)> {
    let (did, fragment) = reference.split_once('#')?;
    (did.starts_with("did:") && !fragment.is_empty()).then_some((did, fragment))
}

/// The endpoint of the service `#fragment` in a resolved DID document (any type).
pub fn service_endpoint(
    services: &[swdesk_atproto::identity::Service],
    did: &str,
    fragment: &str,
) -> Option<String> {
    let short = format!("#{fragment}");
    let long = format!("{did}#{fragment}");
    services
        .iter()
        .find(|service| service.id == short || service.id == long)
        .and_then(|service| service.service_endpoint.as_str())
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_may_name_the_bidder_or_one_of_its_services_never_another_fragment() {
        let did = "did:web:localhost%3A4000";
        let audiences = audiences(did);
        for aud in [
            did,
            "did:web:localhost:4000",
            "did:web:localhost%3A4000#temp_market",
            "did:web:localhost:4000#compute_event",
        ] {
            assert!(audiences.iter().any(|known| known == aud), "{aud}");
        }
        for aud in [
            "did:web:localhost%3A4000#atproto_pds",
            "did:web:localhost%3A4000#",
        ] {
            assert!(!audiences.iter().any(|known| known == aud), "{aud}");
        }
        assert_eq!(audiences.len(), 6);
    }

    #[test]
    fn a_service_reference_splits_into_its_did_and_fragment() {
        assert_eq!(
            split_service_ref("did:web:localhost%3A4000#temp_market"),
            Some(("did:web:localhost%3A4000", "temp_market"))
        );
        assert_eq!(split_service_ref("did:web:localhost%3A4000"), None);
        assert_eq!(split_service_ref("https://x#y"), None);
    }

    #[test]
    fn a_did_web_with_a_port_has_the_public_implementations_host_form() {
        assert_eq!(
            host_form("did:web:localhost%3A4000").as_deref(),
            Some("did:web:localhost:4000")
        );
        assert_eq!(host_form("did:web:bidder.example"), None);
        assert_eq!(host_form("did:web:localhost%3Aport"), None);
        assert_eq!(host_form("did:plc:abc"), None);
    }

    #[test]
    fn the_document_names_both_services_at_the_endpoint() {
        let doc = document(
            "did:web:localhost%3A4000",
            "http://localhost:4000/",
            "did:key:zDn",
        );
        let services: Vec<swdesk_atproto::identity::Service> =
            serde_json::from_value(doc["service"].clone()).unwrap_or_default();
        for fragment in ["temp_market", "compute_event"] {
            assert_eq!(
                service_endpoint(&services, "did:web:localhost%3A4000", fragment).as_deref(),
                Some("http://localhost:4000"),
                "{fragment}"
            );
        }
        assert_eq!(doc["verificationMethod"][0]["publicKeyMultibase"], "zDn");
    }
}
