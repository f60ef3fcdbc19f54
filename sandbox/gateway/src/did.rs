//! The gateway's `did:web` document, served at `/.well-known/did.json`: its id and one service,
//! `#socialweb_cluster_gateway`, whose endpoint is where the XRPC methods are. A client finds
//! the gateway's URL here, never from configuration.

use serde_json::{Value, json};

/// The service id (fragment) of the gateway's endpoint in its DID document.
pub const SERVICE_ID: &str = "#socialweb_cluster_gateway";
/// The service type of that endpoint.
pub const SERVICE_TYPE: &str = "SocialwebClusterGateway";

/// The DID document of `did`, serving at `endpoint`.
pub fn document(did: &str, endpoint: &str) -> Value {
    json!({
        "@context": ["https://www.w3.org/ns/did/v1"],
        "id": did,
        "service": [{
            "id": SERVICE_ID,
            "type": SERVICE_TYPE,
            "serviceEndpoint": endpoint.trim_end_matches('/'),
        }],
    })
}
