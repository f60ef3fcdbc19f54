//! A signed-in session: who (DID, handle, PDS), with which server and grant, and the secrets
//! (access and refresh tokens, the DPoP key). [`StoredSession`] is its keychain form.
//!
//! Invariants: secrets are wrapped in [`Secret`], whose `Debug` and `Display` print
//! `<redacted>`; the only way to the text is [`Secret::expose`], called where a request is built
//! or the keychain entry is written. [`Account`] is what may be shown or logged.

use std::fmt;

use serde::{Deserialize, Serialize};
use url::Url;

use super::dpop::DpopKey;

/// A secret string: redacted in every `Debug` or `Display`.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret.
    pub fn new(text: impl Into<String>) -> Self {
        Self(text.into())
    }

    /// The secret text, for a request or the keychain.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// The signed-in account, as shown to the owner; nothing secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Account {
    /// The account's DID (the token's `sub`).
    pub did: String,
    /// Its handle, when its DID document claims one.
    pub handle: Option<String>,
    /// Its PDS.
    pub pds: Url,
    /// The authorization server that issued the tokens.
    pub issuer: String,
    /// The scopes the server granted, as it stated them.
    pub granted_scope: String,
}

impl Account {
    /// The granted scopes, one per item.
    pub fn granted_scopes(&self) -> Vec<String> {
        self.granted_scope
            .split_whitespace()
            .map(str::to_owned)
            .collect()
    }
}

/// A session in its keychain form.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredSession {
    /// Who and where.
    pub account: Account,
    /// The client id the tokens were issued to.
    pub client_id: String,
    /// Where tokens are refreshed.
    pub token_endpoint: Url,
    /// Where tokens are revoked.
    pub revocation_endpoint: Option<Url>,
    /// The access token (DPoP-bound).
    pub access_token: Secret,
    /// The single-use refresh token.
    pub refresh_token: Option<Secret>,
    /// When the access token expires, Unix seconds.
    pub expires_at: i64,
    /// The DPoP private key, base64url of its 32 bytes.
    pub dpop_key: Secret,
    /// How many refreshes this grant has had: a process that finds a higher number in the
    /// keychain than its own adopts that session instead of spending its refresh token again.
    #[serde(default)]
    pub generation: u64,
}

impl StoredSession {
    /// The DPoP key, when the stored bytes are one.
    pub fn dpop_key(&self) -> Option<DpopKey> {
        use base64::Engine as _;
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(self.dpop_key.expose())
            .ok()?;
        DpopKey::from_secret_bytes(&bytes)
    }

    /// Whether `other` is this grant (the same account and DPoP key) refreshed more often: the
    /// newer session another process wrote, to adopt rather than refresh again.
    pub fn is_outrun_by(&self, other: &StoredSession) -> bool {
        other.account.did == self.account.did
            && other.dpop_key == self.dpop_key
            && other.generation > self.generation
    }

    /// The keychain form of `key`.
    pub fn encode_key(key: &DpopKey) -> Secret {
        Secret::new(crate::jwt::b64url(&key.to_secret_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_output_of_a_session_shows_no_secret() {
        let key = DpopKey::generate();
        let session = StoredSession {
            account: Account {
                did: "did:plc:abc".into(),
                handle: Some("alice.test".into()),
                pds: Url::parse("http://localhost:2583").unwrap(),
                issuer: "http://localhost:2583".into(),
                granted_scope: "atproto transition:generic".into(),
            },
            client_id: "http://localhost".into(),
            token_endpoint: Url::parse("http://localhost:2583/oauth/token").unwrap(),
            revocation_endpoint: None,
            access_token: Secret::new("ACCESS-abc"),
            refresh_token: Some(Secret::new("REFRESH-xyz")),
            expires_at: 0,
            dpop_key: StoredSession::encode_key(&key),
            generation: 0,
        };
        let shown = format!("{session:?}");
        for secret in ["ACCESS-abc", "REFRESH-xyz", session.dpop_key.expose()] {
            assert!(!shown.contains(secret), "{secret} leaked into {shown}");
        }
        assert!(shown.contains("did:plc:abc"));
        assert_eq!(session.dpop_key().unwrap().thumbprint(), key.thumbprint());
        assert_eq!(
            session.account.granted_scopes(),
            ["atproto", "transition:generic"]
        );
    }
}
