//! atproto OAuth for a native app: PAR + PKCE (S256) + DPoP (ES256), the system browser, a
//! redirect back through a loopback listener or the app's own link ([`app_link`]), the session
//! in the keychain. [`OAuthClient::sign_in`] runs the whole
//! flow and yields an [`Agent`](crate::agent::Agent); [`OAuthClient::restore`] brings back the
//! session of an earlier run.
//!
//! Why our own client rather than `atrium-oauth`: its callback panics when a code is refused,
//! its metadata type has no `application_type`, and it owns session storage; the flow here is
//! about 600 lines over `p256`, `reqwest` and `url`, each step checked against a real PDS.
//!
//! Invariants: the callback's `state` and `iss` must match what was sent and who issued it; the
//! token's `sub` must be the DID resolved at the start; nothing is stored until every check
//! passed; a sign-in that is dropped (cancelled) or times out leaves nothing behind.

pub mod app_link;
pub mod client_metadata;
mod dpop;
pub mod loopback;
mod metadata;
pub mod scope;
mod server;
pub(crate) mod session;
mod sign_in;

use std::sync::Arc;
use std::time::Duration;
use swdesk_lexicon::text::peer_text;
use swdesk_net::Outbound;

use url::Url;

pub use app_link::{APP_LINK_CALLBACK, APP_LINK_SCHEME, AppLinkError, AppLinks};
pub use dpop::{DpopKey, Nonces, random_token};
pub use loopback::{CALLBACK_PATH, Callback, CallbackListener};
pub use metadata::{AuthServer, ProtectedResource, discover};
pub use server::{AuthServerCalls, TokenResponse};
pub use session::{Account, Secret, StoredSession};

use crate::identity::{IdentityConfig, IdentityError, Resolver};
use crate::keychain::{KeychainError, SessionStore};
use crate::retry::Fault;

/// How long one request to an authorization server or PDS may take.
pub(crate) const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// Which client this app presents itself as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientKind {
    /// The development client id `http://localhost?redirect_uri=…&scope=…` (the sandbox).
    Loopback,
    /// A hosted client metadata document (a production build); its redirect URIs list
    /// `http://127.0.0.1/callback`, whose port a native client may choose (RFC 8252 §7.3), and
    /// the app's own link [`APP_LINK_CALLBACK`].
    Hosted {
        /// The URL of the client metadata document.
        client_id: Url,
    },
}

/// How sign-in is done on this network.
#[derive(Debug, Clone)]
pub struct OAuthConfig {
    /// Identity resolution.
    pub identity: IdentityConfig,
    /// The client id kind.
    pub client: ClientKind,
    /// How long the owner has to finish in the browser.
    pub callback_timeout: Duration,
}

/// Opens the authorization page. The product uses the system browser; tests drive Chromium.
pub trait Browser: Send + Sync + std::fmt::Debug {
    /// Opens `url` for the owner; returns once the browser was asked to, not when they finish.
    fn open(&self, url: &Url) -> Result<(), String>;
}

/// The owner's default browser (`$BROWSER` is honoured on Linux and the BSDs). Only http(s)
/// links are opened (checked here, and by `webbrowser`'s `hardened` feature).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemBrowser;

impl Browser for SystemBrowser {
    fn open(&self, url: &Url) -> Result<(), String> {
        if !matches!(url.scheme(), "https" | "http") {
            return Err(format!(
                "only web links open in the browser, not {}:",
                url.scheme()
            ));
        }
        webbrowser::open(url.as_str()).map_err(|error| error.to_string())
    }
}

/// Why sign-in (or a later token call) failed; one variant per hop and check.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OAuthError {
    /// The handle or DID did not resolve.
    #[error(transparent)]
    Identity(#[from] IdentityError),
    /// The PDS did not serve its protected-resource metadata.
    #[error("the PDS {pds} could not be reached for sign-in: {reason}")]
    PdsUnreachable {
        /// The PDS.
        pds: String,
        /// What went wrong.
        reason: String,
    },
    /// The PDS names no authorization server.
    #[error("the PDS {pds} names no authorization server")]
    NoAuthorizationServer {
        /// The PDS.
        pds: String,
    },
    /// The authorization server's metadata could not be fetched.
    #[error("the authorization server {issuer} could not be reached: {reason}")]
    AuthServerUnreachable {
        /// The server.
        issuer: String,
        /// What went wrong.
        reason: String,
    },
    /// The authorization server cannot serve this client.
    #[error("the authorization server {issuer} cannot sign in this app: {reason}")]
    AuthServerUnsuitable {
        /// The server.
        issuer: String,
        /// What it lacks.
        reason: String,
    },
    /// The server refused a request.
    #[error("the authorization server refused the {step}: {error}{}", if description.is_empty() { String::new() } else { format!(" ({description})") })]
    Refused {
        /// Which call (`authorization request`, `code exchange`, `refresh`, `revocation`).
        step: &'static str,
        /// The OAuth error code.
        error: String,
        /// Its description.
        description: String,
    },
    /// The server is busy or failing (408, 429, 5xx): try again later.
    #[error(
        "the authorization server could not serve the {step} now (HTTP {status}); it will be tried again"
    )]
    Unavailable {
        /// Which call.
        step: &'static str,
        /// The HTTP status.
        status: u16,
        /// The server's `Retry-After`, when it named one.
        retry_after: Option<Duration>,
    },
    /// A request did not reach the server.
    #[error("the {step} did not reach the authorization server: {reason}")]
    Transport {
        /// Which call.
        step: &'static str,
        /// What went wrong.
        reason: String,
    },
    /// The listener for the redirect could not be opened.
    #[error("cannot listen for the browser's redirect on 127.0.0.1: {0}")]
    Listener(String),
    /// The browser could not be opened.
    #[error("cannot open the browser: {0}. Open a browser and try again")]
    Browser(String),
    /// The owner said no (or the server ended the authorization).
    #[error("the authorization was not granted: {error}{}", if description.is_empty() { String::new() } else { format!(" ({description})") })]
    Denied {
        /// The OAuth error code from the redirect.
        error: String,
        /// Its description.
        description: String,
    },
    /// The redirect carried another `state` than the one sent: not our sign-in.
    #[error(
        "the browser returned from a different sign-in (state mismatch); nothing was stored, try again"
    )]
    StateMismatch,
    /// The redirect names another issuer than the server asked.
    #[error("the browser returned from {found}, not from {expected}; nothing was stored")]
    IssuerMismatch {
        /// The server asked.
        expected: String,
        /// What the redirect named.
        found: String,
    },
    /// The tokens are for another account than the one resolved at the start.
    #[error(
        "signed in as {found}, but {expected} was asked for; nothing was stored, sign in with that account"
    )]
    SubjectMismatch {
        /// The DID resolved at the start.
        expected: String,
        /// The token's `sub`.
        found: String,
    },
    /// The owner did not finish in time.
    #[error("the sign-in was not finished in the browser within {} minutes; try again", .0.as_secs() / 60)]
    TimedOut(Duration),
    /// The keychain did not take or give the session.
    #[error(transparent)]
    Keychain(#[from] KeychainError),
    /// The stored session can no longer be used (revoked, or its refresh token spent).
    #[error("the session has ended ({0}); sign in again")]
    SessionEnded(String),
}

/// The most of a server's OAuth error code kept (they are short identifiers).
const ERROR_CODE_BYTES: usize = 64;
/// The most of an `error_description` (or another text a server or redirect chose) kept.
const DESCRIPTION_BYTES: usize = 512;
/// The most of an identifier a server or redirect named (an issuer, an account) kept.
const NAMED_BYTES: usize = 256;

impl OAuthError {
    /// The server refused the `step` with `error` and `description`: its words, cleaned (one
    /// line, no controls or bidi overrides, cut), as every text from another party is.
    pub fn refused(step: &'static str, error: &str, description: &str) -> Self {
        Self::Refused {
            step,
            error: peer_text(error, ERROR_CODE_BYTES),
            description: peer_text(description, DESCRIPTION_BYTES),
        }
    }

    /// The redirect ended the authorization with `error` and `description`, cleaned (the
    /// redirect's query is anyone's to write: a link can carry it).
    pub fn denied(error: &str, description: &str) -> Self {
        Self::Denied {
            error: peer_text(error, ERROR_CODE_BYTES),
            description: peer_text(description, DESCRIPTION_BYTES),
        }
    }

    /// The redirect named `found` as its issuer, not `expected`; `found` cleaned.
    pub fn issuer_mismatch(expected: &str, found: &str) -> Self {
        Self::IssuerMismatch {
            expected: expected.to_owned(),
            found: peer_text(found, NAMED_BYTES),
        }
    }

    /// The tokens are for `found`, not `expected`; `found` (the server's `sub`) cleaned.
    pub fn subject_mismatch(expected: String, found: &str) -> Self {
        Self::SubjectMismatch {
            expected,
            found: peer_text(found, NAMED_BYTES),
        }
    }
}

impl OAuthError {
    /// Whether the same call may succeed later (the kernel's retry rule): the network, a busy or
    /// failing server, or its own words for that (`server_error`, `temporarily_unavailable`).
    pub fn fault(&self) -> Fault {
        match self {
            Self::Unavailable { retry_after, .. } => Fault::Transient {
                retry_after: *retry_after,
            },
            Self::Transport { .. }
            | Self::PdsUnreachable { .. }
            | Self::AuthServerUnreachable { .. } => Fault::TRANSIENT,
            Self::Refused { error, .. }
                if matches!(error.as_str(), "server_error" | "temporarily_unavailable") =>
            {
                Fault::TRANSIENT
            }
            _ => Fault::Permanent,
        }
    }

    /// Whether the authorization server said the grant itself is gone (RFC 6749 §5.2:
    /// `invalid_grant`, or the client no longer accepted): the session has ended. Nothing
    /// else ends a session: not the network, not a busy server, not a malformed answer.
    pub fn ends_the_grant(&self) -> bool {
        matches!(
            self,
            Self::Refused { error, .. }
                if matches!(error.as_str(), "invalid_grant" | "invalid_client" | "unauthorized_client")
        ) || matches!(self, Self::SessionEnded(_))
    }
}

/// Signs in, restores and hands out agents.
#[derive(Debug, Clone)]
pub struct OAuthClient {
    config: OAuthConfig,
    http: Outbound,
    resolver: Resolver,
    browser: Arc<dyn Browser>,
    store: Arc<dyn SessionStore>,
    /// The app's own sign-in links, when the desktop hands them to this app.
    app_links: Option<AppLinks>,
}

impl OAuthClient {
    /// A client for `config` that opens `browser` and keeps sessions in `store`.
    pub fn new(
        config: OAuthConfig,
        http: Outbound,
        browser: Arc<dyn Browser>,
        store: Arc<dyn SessionStore>,
    ) -> Self {
        let resolver = Resolver::new(config.identity.clone(), http.clone());
        Self {
            config,
            http,
            resolver,
            browser,
            store,
            app_links: None,
        }
    }

    /// Lets a sign-in with a hosted client id return through the app's own link, which the
    /// desktop opens this app with and the shell hands to `links`.
    #[must_use]
    pub fn with_app_links(mut self, links: AppLinks) -> Self {
        self.app_links = Some(links);
        self
    }

    /// The identity resolver this client uses.
    pub fn resolver(&self) -> &Resolver {
        &self.resolver
    }
}

/// Now, in Unix seconds (DPoP `iat`, token expiry).
pub(crate) fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| i64::try_from(elapsed.as_secs()).unwrap_or(i64::MAX))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_clean(text: &str) -> bool {
        !text.chars().any(|c| {
            c.is_control()
                || ('\u{202A}'..='\u{202E}').contains(&c)
                || ('\u{2066}'..='\u{2069}').contains(&c)
        })
    }

    #[test]
    fn texts_a_server_or_a_redirect_chose_are_kept_cleaned_and_cut() {
        let hostile = format!("no\u{202E}\0\r\n<script>{}", "d".repeat(100_000));
        let errors = [
            OAuthError::refused("refresh", &hostile, &hostile),
            OAuthError::denied(&hostile, &hostile),
            OAuthError::issuer_mismatch("https://pds.example", &hostile),
            OAuthError::subject_mismatch("did:plc:owner".to_owned(), &hostile),
        ];
        for error in errors {
            let shown = error.to_string();
            assert!(is_clean(&shown), "{shown:?}");
            assert!(shown.len() < 1_300, "{} bytes kept", shown.len());
            assert!(
                shown.contains("no   <script>d"),
                "the words stay readable: {shown:?}"
            );
        }
    }
}
