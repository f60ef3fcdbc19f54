//! The parts of a DID document atproto reads: the handle it claims (`alsoKnownAs`), the PDS
//! (`#atproto_pds` service) and the repo signing key (`#atproto` verification method).
//! Anything else in the document is carried along unread.

use serde::Deserialize;

use crate::did_key::{KeyError, PublicKey};

/// A DID document, as resolved.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DidDocument {
    /// The DID the document is for.
    pub id: String,
    /// `at://<handle>` among other URIs.
    #[serde(default)]
    pub also_known_as: Vec<String>,
    /// Keys.
    #[serde(default)]
    pub verification_method: Vec<VerificationMethod>,
    /// Endpoints.
    #[serde(default)]
    pub service: Vec<Service>,
}

/// One key of a DID document.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VerificationMethod {
    /// `#atproto` or `did:…#atproto`.
    pub id: String,
    /// `Multikey` for atproto keys.
    #[serde(rename = "type")]
    pub kind: String,
    /// The key, `z…`.
    pub public_key_multibase: Option<String>,
}

/// One service endpoint of a DID document.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Service {
    /// `#atproto_pds` or `did:…#atproto_pds`.
    pub id: String,
    /// `AtprotoPersonalDataServer` for a PDS.
    #[serde(rename = "type")]
    pub kind: String,
    /// The service's URL (a string in atproto documents).
    pub service_endpoint: serde_json::Value,
}

impl DidDocument {
    /// The first handle the document claims (`at://<handle>`), lower-cased.
    pub fn handle(&self) -> Option<String> {
        self.also_known_as
            .iter()
            .find_map(|uri| uri.strip_prefix("at://"))
            .map(str::to_ascii_lowercase)
    }

    /// Whether the document claims `handle` (case-insensitive).
    pub fn claims_handle(&self, handle: &str) -> bool {
        self.also_known_as
            .iter()
            .filter_map(|uri| uri.strip_prefix("at://"))
            .any(|claimed| claimed.eq_ignore_ascii_case(handle))
    }

    /// The endpoint of the service with fragment `fragment` and type `kind`.
    pub fn service_endpoint(&self, fragment: &str, kind: &str) -> Option<&str> {
        self.service
            .iter()
            .find(|service| self.is_fragment(&service.id, fragment) && service.kind == kind)
            .and_then(|service| service.service_endpoint.as_str())
    }

    /// The PDS endpoint (`#atproto_pds`).
    pub fn pds_endpoint(&self) -> Option<&str> {
        self.service_endpoint("atproto_pds", "AtprotoPersonalDataServer")
    }

    /// The key with fragment `fragment` (`atproto` is the repo signing key).
    pub fn key(&self, fragment: &str) -> Option<Result<PublicKey, KeyError>> {
        self.verification_method
            .iter()
            .find(|method| self.is_fragment(&method.id, fragment))
            .map(|method| {
                let multibase = method.public_key_multibase.as_deref().unwrap_or("");
                PublicKey::from_verification_method(&method.kind, multibase)
            })
    }

    /// Every key the document vouches for (its verification methods), as `did:key`s; a key it
    /// cannot read is left out.
    pub fn did_keys(&self) -> Vec<String> {
        self.verification_method
            .iter()
            .filter_map(|method| {
                let multibase = method.public_key_multibase.as_deref()?;
                PublicKey::from_verification_method(&method.kind, multibase).ok()
            })
            .map(|key| format!("did:key:{}", key.to_multibase()))
            .collect()
    }

    /// Every service endpoint the document names as a string, in its order.
    pub fn service_endpoints(&self) -> Vec<String> {
        self.service
            .iter()
            .filter_map(|service| service.service_endpoint.as_str())
            .map(str::to_owned)
            .collect()
    }

    /// `#fragment` or `<this did>#fragment`.
    fn is_fragment(&self, id: &str, fragment: &str) -> bool {
        let local = id.strip_prefix(self.id.as_str()).unwrap_or(id);
        local.strip_prefix('#') == Some(fragment)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn document() -> DidDocument {
        serde_json::from_value(json!({
            "@context": ["https://www.w3.org/ns/did/v1"],
            "id": "did:plc:ewvi7nxzyoun6zhxrhs64oiz",
            "alsoKnownAs": ["at://Atproto.com"],
            "verificationMethod": [{
                "id": "did:plc:ewvi7nxzyoun6zhxrhs64oiz#atproto",
                "type": "Multikey",
                "controller": "did:plc:ewvi7nxzyoun6zhxrhs64oiz",
                "publicKeyMultibase": "zQ3shunBKsXixLxKtC5qeSG9E4J5RkGN57im31pcTzbNQnm5w"
            }],
            "service": [{
                "id": "#atproto_pds",
                "type": "AtprotoPersonalDataServer",
                "serviceEndpoint": "https://enoki.us-east.host.bsky.network"
            }]
        }))
        .unwrap()
    }

    #[test]
    fn the_handle_pds_and_signing_key_are_read_with_either_id_form() {
        let doc = document();
        assert_eq!(doc.handle().as_deref(), Some("atproto.com"));
        assert!(doc.claims_handle("ATPROTO.com"));
        assert!(!doc.claims_handle("bsky.app"));
        assert_eq!(
            doc.pds_endpoint(),
            Some("https://enoki.us-east.host.bsky.network")
        );
        assert!(matches!(doc.key("atproto"), Some(Ok(PublicKey::K256(_)))));
        assert!(doc.key("other").is_none());
        assert_eq!(
            doc.service_endpoints(),
            vec!["https://enoki.us-east.host.bsky.network".to_owned()]
        );
    }
}
