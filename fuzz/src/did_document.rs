//! `did_document`: a DID document as a PLC directory or a `did:web` host serves it, read into
//! `swdesk_atproto::identity::DidDocument`, and its accessors: `pds_endpoint`, `key("atproto")`
//! (and the gateway's and the market's fragments), `handle`, `claims_handle`; every verification
//! method's key through `PublicKey::from_verification_method`.
//!
//! Invariants:
//! - the PDS endpoint is the string endpoint of a service of type `AtprotoPersonalDataServer`
//!   whose id is `#atproto_pds` or `<the document's id>#atproto_pds`;
//! - a key that reads is a compressed point that prints (`to_multibase`) to a `z…` text that reads
//!   back to the same key, also as a `did:key:`;
//! - the handle is lower case and claimed by the document.

use swdesk_atproto::did_key::PublicKey;
use swdesk_atproto::identity::{DidDocument, loopback_web_did_port};

/// The fragments the app looks up.
const FRAGMENTS: [&str; 4] = [
    "atproto",
    "socialweb_cluster_gateway",
    "temp_market",
    "attestation",
];

pub fn check(data: &[u8]) {
    let Ok(document) = serde_json::from_slice::<DidDocument>(data) else {
        return;
    };
    let _ = loopback_web_did_port(&document.id);
    if let Some(endpoint) = document.pds_endpoint() {
        let named = |id: &str| {
            id == "#atproto_pds"
                || id
                    .strip_prefix(document.id.as_str())
                    .is_some_and(|rest| rest == "#atproto_pds")
        };
        assert!(
            document.service.iter().any(|service| named(&service.id)
                && service.kind == "AtprotoPersonalDataServer"
                && service.service_endpoint.as_str() == Some(endpoint)),
            "the PDS endpoint {endpoint:?} is no #atproto_pds service's"
        );
    }
    for fragment in FRAGMENTS {
        if let Some(Ok(key)) = document.key(fragment) {
            republished(&key);
        }
        let _ = document.service_endpoint(fragment, "AtprotoPersonalDataServer");
    }
    for method in &document.verification_method {
        let multibase = method.public_key_multibase.as_deref().unwrap_or("");
        if let Ok(key) = PublicKey::from_verification_method(&method.kind, multibase) {
            republished(&key);
        }
        if let Ok(key) = PublicKey::from_did_key(multibase) {
            republished(&key);
        }
    }
    if let Some(handle) = document.handle() {
        assert_eq!(handle, handle.to_ascii_lowercase());
        assert!(
            document.claims_handle(&handle),
            "the document does not claim its own handle {handle:?}"
        );
    }
}

/// A key read from a document prints to a multikey that reads back to it.
fn republished(key: &PublicKey) {
    let multibase = key.to_multibase();
    assert!(multibase.starts_with('z'), "{multibase}");
    assert_eq!(PublicKey::from_multibase(&multibase).as_ref(), Ok(key));
    assert_eq!(
        PublicKey::from_did_key(&format!("did:key:{multibase}")).as_ref(),
        Ok(key)
    );
    assert_eq!(
        PublicKey::from_verification_method("Multikey", &multibase).as_ref(),
        Ok(key)
    );
}
