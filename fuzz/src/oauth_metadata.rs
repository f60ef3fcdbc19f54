//! `oauth_metadata`: what the sign-in reads from servers and the browser: a PDS's
//! protected-resource metadata (`ProtectedResource`), an authorization server's metadata
//! (`AuthServer`), a token answer (`TokenResponse`, and the granted scope through
//! `scope::is_generic` and `Account::granted_scopes`), and the loopback redirect's query
//! (`Callback::from_url`). Each JSON input is read as all three answers. (The suitability check
//! `AuthServer::unsuitable` and the issuer check of `discover` are private: they are not fuzzed.)
//!
//! Invariants:
//! - every URL read (the endpoints, the first authorization server) prints to a text that parses
//!   back to the same URL, and the well-known paths join onto it;
//! - a granted scope is generic exactly when one of its items is `transition:generic`; the items
//!   are non-empty and without whitespace;
//! - every parameter of the redirect's query is found by the callback.

use swdesk_atproto::Account;
use swdesk_atproto::oauth::{AuthServer, Callback, ProtectedResource, TokenResponse, scope};
use url::Url;

pub fn check(data: &[u8]) {
    if let Ok(resource) = serde_json::from_slice::<ProtectedResource>(data) {
        for server in &resource.authorization_servers {
            if let Ok(url) = Url::parse(server) {
                stable(&url);
                let _ = url.join("/.well-known/oauth-authorization-server");
            }
        }
        if let Ok(url) = Url::parse(&resource.resource) {
            stable(&url);
        }
    }
    if let Ok(server) = serde_json::from_slice::<AuthServer>(data) {
        stable(&server.authorization_endpoint);
        stable(&server.token_endpoint);
        server
            .pushed_authorization_request_endpoint
            .iter()
            .chain(&server.revocation_endpoint)
            .for_each(stable);
    }
    if let Ok(token) = serde_json::from_slice::<TokenResponse>(data) {
        granted(&token.scope);
    }
    let text = crate::text(data);
    if let Ok(url) = Url::parse(&format!("http://127.0.0.1:1/callback?{text}")) {
        let callback = Callback::from_url(&url);
        for (name, _) in url.query_pairs() {
            assert!(
                callback.get(&name).is_some(),
                "the parameter {name:?} is lost"
            );
        }
    }
}

/// A URL prints to a text that parses back to it.
fn stable(url: &Url) {
    let again = Url::parse(url.as_str());
    assert_eq!(
        again.as_ref(),
        Ok(url),
        "{:?} does not parse back",
        url.as_str()
    );
}

fn granted(scope_text: &str) {
    let account = Account {
        did: "did:plc:ewvi7nxzyoun6zhxrhs64oiz".to_owned(),
        handle: None,
        pds: Url::parse("https://pds.example.com").unwrap_or_else(|_| unreachable!()),
        issuer: "https://pds.example.com".to_owned(),
        granted_scope: scope_text.to_owned(),
    };
    let items = account.granted_scopes();
    for item in &items {
        assert!(
            !item.is_empty() && !item.contains(char::is_whitespace),
            "{item:?}"
        );
    }
    assert_eq!(
        scope::is_generic(scope_text),
        items.iter().any(|item| item == "transition:generic")
    );
}
