//! Where another party's XRPC service is, as the market's two dialects name it: our
//! `did:…#temp_market` / `#compute_event`, the public implementation's `#pdr_temp_market` /
//! `#pdr_temp_compute_event` (a reference of one family finds a service of the other), and a
//! plain `https://` URL (`bid.submitAccept`, `receipt.submitEvent`, `offering.endpointUrl`).
//!
//! The audience of a call (the service-auth token's `aud`) is the reference's `did:web` when it
//! names one (our sandbox peers are `did:web` services), else `did:web:<host of the endpoint>`,
//! the service DID the public implementation checks.
//!
//! Invariant: a URL here is only parsed; whether it may be called is the owner's network
//! policy's decision, made when it is called.

use url::Url;

/// Service ids that name the same service in the two dialects.
const FAMILIES: [[&str; 2]; 2] = [
    ["temp_market", "pdr_temp_market"],
    ["compute_event", "pdr_temp_compute_event"],
];

/// A parsed service reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServiceRef {
    /// A service in a DID document: `did:…#id`.
    Did {
        /// The DID.
        did: String,
        /// The service id, without `#`.
        id: String,
    },
    /// The endpoint itself.
    Url(Url),
}

impl ServiceRef {
    /// Reads `text`, or says why it is no service reference.
    pub fn parse(text: &str) -> Result<Self, String> {
        if let Some((did, id)) = text.split_once('#')
            && did.starts_with("did:")
            && !id.is_empty()
        {
            return Ok(Self::Did {
                did: did.to_owned(),
                id: id.to_owned(),
            });
        }
        match Url::parse(text) {
            Ok(url) if url.scheme() == "https" || url.scheme() == "http" => Ok(Self::Url(url)),
            _ => Err("neither did:…#service nor an https URL".to_owned()),
        }
    }

    /// The ids a DID document's service may carry to be this one (`#id` and `did#id`, and the
    /// same for the other dialect's id of the same service).
    pub fn matching_ids(did: &str, id: &str) -> Vec<String> {
        let mut ids = vec![id.to_owned()];
        for family in FAMILIES {
            if family.contains(&id) {
                ids.extend(
                    family
                        .iter()
                        .filter(|other| **other != id)
                        .map(|o| (*o).to_owned()),
                );
            }
        }
        ids.iter()
            .flat_map(|id| [format!("#{id}"), format!("{did}#{id}")])
            .collect()
    }
}

/// The audience of a call to `endpoint` reached through `did` (when the reference named one).
pub fn audience(did: Option<&str>, endpoint: &Url) -> String {
    match did {
        Some(did) if did.starts_with("did:web:") => did.to_owned(),
        _ => {
            let host = endpoint.host_str().unwrap_or_default();
            match endpoint.port() {
                Some(port) => format!("did:web:{host}%3A{port}"),
                None => format!("did:web:{host}"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_dialects_parse() {
        assert_eq!(
            ServiceRef::parse("did:plc:abc#pdr_temp_market"),
            Ok(ServiceRef::Did {
                did: "did:plc:abc".into(),
                id: "pdr_temp_market".into()
            })
        );
        assert!(matches!(
            ServiceRef::parse("https://did-key-z.localhost"),
            Ok(ServiceRef::Url(_))
        ));
        for wrong in [
            "did:plc:abc",
            "did:plc:abc#",
            "ftp://x",
            "nothing",
            "#temp_market",
        ] {
            assert!(ServiceRef::parse(wrong).is_err(), "{wrong}");
        }
    }

    #[test]
    fn a_reference_of_one_family_finds_the_service_of_the_other() {
        let ids = ServiceRef::matching_ids("did:plc:a", "temp_market");
        assert!(ids.contains(&"#pdr_temp_market".to_owned()));
        assert!(ids.contains(&"did:plc:a#temp_market".to_owned()));
        let events = ServiceRef::matching_ids("did:plc:a", "pdr_temp_compute_event");
        assert!(events.contains(&"#compute_event".to_owned()));
        assert_eq!(ServiceRef::matching_ids("did:plc:a", "other").len(), 2);
    }

    #[test]
    fn the_audience_is_the_did_web_named_or_the_endpoints_host() {
        let public = Url::parse("https://did-key-z.localhost").unwrap();
        assert_eq!(
            audience(Some("did:plc:a"), &public),
            "did:web:did-key-z.localhost"
        );
        assert_eq!(audience(None, &public), "did:web:did-key-z.localhost");
        let sandbox = Url::parse("http://localhost:7001").unwrap();
        assert_eq!(
            audience(Some("did:web:localhost%3A7001"), &sandbox),
            "did:web:localhost%3A7001"
        );
        assert_eq!(audience(None, &sandbox), "did:web:localhost%3A7001");
    }
}
