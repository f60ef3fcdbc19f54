//! The client metadata document a production build presents as its `client_id` (hosted at
//! the URL the network names, e.g. `https://desk.socialweb.computer/oauth-client-metadata.json`):
//! a native public client (no secret: `token_endpoint_auth_method` `none`) that redirects to a
//! loopback port of its choosing or to its own link (`computer.socialweb.desk:/oauth/callback`,
//! the reverse of the document's host), and binds its tokens with DPoP. The committed copy
//! (`crates/atproto/oauth-client-metadata.json`) is what gets hosted; a test fails when it
//! drifts from [`document`].

use serde_json::{Value, json};
use url::Url;

use super::app_link::{APP_LINK_CALLBACK, app_link_fits};
use super::loopback::CALLBACK_PATH;
use super::scope;

/// The client metadata document for the client id `client_id`.
pub fn document(client_id: &Url) -> Value {
    json!({
        "client_id": client_id.as_str(),
        "client_name": "Socialweb Desk",
        // The provider refuses a client_uri of another origin than the client id.
        "client_uri": client_id.origin().ascii_serialization(),
        "application_type": "native",
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "redirect_uris": redirect_uris(client_id),
        "scope": scope::declared(),
        "token_endpoint_auth_method": "none",
        "dpop_bound_access_tokens": true,
    })
}

/// The loopback callback (any port), and the app's own link when its scheme is this client
/// id's host reversed, as the authorization server requires of a native app's link.
fn redirect_uris(client_id: &Url) -> Vec<String> {
    let loopback = format!("http://127.0.0.1{CALLBACK_PATH}");
    let link = app_link_fits(client_id).then(|| APP_LINK_CALLBACK.to_owned());
    std::iter::once(loopback).chain(link).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_committed_client_metadata_is_what_this_client_presents() {
        let client_id =
            Url::parse("https://desk.socialweb.computer/oauth-client-metadata.json").unwrap();
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/oauth-client-metadata.json");
        let committed: Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap_or_default())
                .unwrap_or_default();
        let fresh = document(&client_id);
        assert!(
            committed == fresh,
            "{path} is stale; write this:\n{}",
            serde_json::to_string_pretty(&fresh).unwrap()
        );
        assert!(
            fresh["scope"]
                .as_str()
                .unwrap()
                .contains("repo:computer.socialweb.infra")
        );
    }
}
