//! Identity resolution: handle → DID → DID document → PDS. Handles resolve through the methods
//! the network is configured with (DNS TXT `_atproto.<handle>`, `https://<handle>/.well-known/
//! atproto-did`, or an XRPC `resolveHandle` service such as the sandbox PDS); `did:plc`
//! documents come from the configured PLC directory, `did:web` ones from the domain itself.
//!
//! Invariants: every hop's failure is its own [`IdentityError`] variant naming what was asked
//! and where; a handle is accepted only when the DID document it leads to claims it back
//! (bidirectional verification); plain `http` is used only for `localhost` hosts and only when
//! the configuration allows it (the sandbox).

mod document;
mod handle;

use std::sync::Arc;
use std::time::{Duration, Instant};

use swdesk_net::{Limit, NetPolicy, Outbound, read_json};
use url::Url;

pub use document::{DidDocument, Service, VerificationMethod};
pub use handle::{HandleAnswer, HandleMethod, did_of_answer};

use crate::did_key::PublicKey;

/// How long one identity hop may take.
const HOP_TIMEOUT: Duration = Duration::from_secs(10);

/// Where identities are resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdentityConfig {
    /// The PLC directory, `https://plc.directory` on the public network.
    pub plc_url: Url,
    /// Handle resolution methods, tried in order until one answers.
    pub handle_methods: Vec<HandleMethod>,
    /// Whether `http://localhost…` endpoints are acceptable (the sandbox only).
    pub allow_http_localhost: bool,
}

impl IdentityConfig {
    /// The public atproto network: DNS then HTTPS for handles, plc.directory for DIDs.
    pub fn public() -> Self {
        Self {
            plc_url: Url::parse("https://plc.directory").expect("a constant URL"),
            handle_methods: vec![HandleMethod::Dns, HandleMethod::WellKnown],
            allow_http_localhost: false,
        }
    }

    /// The local sandbox: its PLC, handles through its PDS, http on localhost.
    pub fn sandbox(plc_url: Url, pds_url: Url) -> Self {
        Self {
            plc_url,
            handle_methods: vec![HandleMethod::Xrpc(pds_url)],
            allow_http_localhost: true,
        }
    }
}

impl IdentityConfig {
    /// What outbound calls may reach on this network: the public internet over https, and on
    /// the sandbox its PLC and handle service on loopback (the owner's configuration names
    /// them; nothing a peer answers adds to it).
    pub fn net_policy(&self) -> NetPolicy {
        if !self.allow_http_localhost {
            return NetPolicy::public();
        }
        let handle_services = self
            .handle_methods
            .iter()
            .filter_map(|method| match method {
                HandleMethod::Xrpc(service) => Some(service),
                _ => None,
            });
        std::iter::once(&self.plc_url)
            .chain(handle_services)
            .fold(NetPolicy::public(), |policy, url| {
                policy.with_loopback_service(url)
            })
    }
}

/// The port of a sandbox peer's `did:web:localhost%3A<port>`, when `did` is one: the owner's
/// sandbox configuration names its peers by such DIDs.
pub fn loopback_web_did_port(did: &str) -> Option<u16> {
    did.strip_prefix("did:web:localhost%3A")?.parse().ok()
}

/// A resolved account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The account's DID.
    pub did: String,
    /// Its handle, when the DID document claims one.
    pub handle: Option<String>,
    /// Its PDS.
    pub pds: Url,
    /// Its repo signing key (`#atproto`).
    pub signing_key: PublicKey,
}

/// Why an identity did not resolve; one variant per hop.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdentityError {
    /// The text is neither a handle nor a DID.
    #[error("{input:?} is neither a handle (like alice.example.com) nor a DID (like did:plc:…)")]
    NotAnIdentifier {
        /// What was typed.
        input: String,
    },
    /// No handle method found a DID.
    #[error("the handle {handle} does not resolve to an account: {}", tried.join("; "))]
    HandleNotFound {
        /// The handle.
        handle: String,
        /// What each method answered.
        tried: Vec<String>,
    },
    /// The DID document does not claim the handle that led to it.
    #[error("{handle} points to {did}, but that account does not claim the handle back")]
    HandleNotClaimed {
        /// The handle.
        handle: String,
        /// The DID it pointed to.
        did: String,
    },
    /// The DID method is not one atproto uses.
    #[error("{did} uses a DID method atproto does not support (did:plc and did:web only)")]
    UnsupportedDid {
        /// The DID.
        did: String,
    },
    /// The directory has no document for the DID.
    #[error("{did} is not registered at {url}")]
    DidNotFound {
        /// The DID.
        did: String,
        /// Where it was looked up.
        url: String,
    },
    /// The document could not be fetched.
    #[error("the DID document of {did} could not be fetched from {url}: {reason}")]
    DidUnreachable {
        /// The DID.
        did: String,
        /// Where it was fetched from.
        url: String,
        /// What went wrong.
        reason: String,
    },
    /// The document is not usable.
    #[error("the DID document of {did} is not usable: {reason}")]
    DidDocumentInvalid {
        /// The DID.
        did: String,
        /// What is missing or wrong.
        reason: String,
    },
}

/// How long a fetched DID document is used before it is fetched again.
pub const DOCUMENT_TTL: Duration = Duration::from_secs(300);
/// The most DID documents kept (the oldest goes first).
pub const DOCUMENT_CACHE_CAP: usize = 512;

/// DID documents fetched lately, by DID, with when each was fetched.
type DocumentCache = std::sync::Mutex<std::collections::HashMap<String, (Instant, DidDocument)>>;

/// Resolves handles and DIDs with one HTTP client and one DNS resolver. DID documents are kept
/// for [`DOCUMENT_TTL`] (the market reads many records of the same few authors); sign-in
/// ([`Self::resolve`]) always fetches afresh, and a caller that finds a document stale (a proof
/// signed by another key) [`Self::forget`]s it.
#[derive(Debug, Clone)]
pub struct Resolver {
    config: IdentityConfig,
    http: Outbound,
    documents: Arc<DocumentCache>,
}

impl Resolver {
    /// A resolver for `config`, using `http` for every HTTP hop.
    pub fn new(config: IdentityConfig, http: Outbound) -> Self {
        Self {
            config,
            http,
            documents: Arc::default(),
        }
    }

    /// Drops the kept document of `did`, so the next read fetches it.
    pub fn forget(&self, did: &str) {
        self.lock_documents().remove(did);
    }

    fn lock_documents(
        &self,
    ) -> std::sync::MutexGuard<'_, std::collections::HashMap<String, (Instant, DidDocument)>> {
        self.documents
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn kept(&self, did: &str) -> Option<DidDocument> {
        let documents = self.lock_documents();
        let (fetched_at, document) = documents.get(did)?;
        (fetched_at.elapsed() < DOCUMENT_TTL).then(|| document.clone())
    }

    fn keep(&self, did: &str, document: &DidDocument) {
        let mut documents = self.lock_documents();
        if documents.len() >= DOCUMENT_CACHE_CAP && !documents.contains_key(did) {
            let oldest = documents
                .iter()
                .min_by_key(|(_, (fetched_at, _))| *fetched_at)
                .map(|(oldest, _)| oldest.clone());
            if let Some(oldest) = oldest {
                documents.remove(&oldest);
            }
        }
        documents.insert(did.to_owned(), (Instant::now(), document.clone()));
    }

    /// The client identity hops go through; other parties' services are reached with it too
    /// (the owner's network policy, including the sandbox's peers).
    pub fn http(&self) -> &Outbound {
        &self.http
    }

    /// The configuration it resolves with.
    pub fn config(&self) -> &IdentityConfig {
        &self.config
    }

    /// Resolves a handle or a DID (as typed at sign-in) to a verified identity, from a freshly
    /// fetched DID document.
    pub async fn resolve(&self, input: &str) -> Result<Identity, IdentityError> {
        let input = input.trim().trim_start_matches('@');
        if swdesk_lexicon::syntax::did(input).is_ok() {
            self.forget(input);
            return self.resolve_did(input).await;
        }
        let handle = input.to_ascii_lowercase();
        if swdesk_lexicon::syntax::handle(&handle).is_err() {
            return Err(IdentityError::NotAnIdentifier {
                input: input.to_owned(),
            });
        }
        let did = handle::resolve(&self.http, &self.config.handle_methods, &handle).await?;
        self.forget(&did);
        let identity = self.resolve_did(&did).await?;
        if identity.handle.as_deref() != Some(handle.as_str()) {
            return Err(IdentityError::HandleNotClaimed { handle, did });
        }
        Ok(identity)
    }

    /// Resolves a DID to its document's handle, PDS and signing key.
    pub async fn resolve_did(&self, did: &str) -> Result<Identity, IdentityError> {
        let document = self.did_document(did).await?;
        identity_of(&document, self.config.allow_http_localhost)
    }

    /// The DID document of `did`: the one kept when it is recent, else fetched (and kept).
    pub async fn did_document(&self, did: &str) -> Result<DidDocument, IdentityError> {
        if let Some(document) = self.kept(did) {
            return Ok(document);
        }
        let document = self.fetch_did_document(did).await?;
        self.keep(did, &document);
        Ok(document)
    }

    async fn fetch_did_document(&self, did: &str) -> Result<DidDocument, IdentityError> {
        let url = self.document_url(did)?;
        let unreachable = |reason: String| IdentityError::DidUnreachable {
            did: did.to_owned(),
            url: url.to_string(),
            reason,
        };
        let response = self
            .http
            .get(&url)
            .map_err(|refused| unreachable(refused.to_string()))?
            .timeout(HOP_TIMEOUT)
            .send()
            .await
            .map_err(|error| unreachable(error.without_url().to_string()))?;
        if response.status() == reqwest::StatusCode::NOT_FOUND
            || response.status() == reqwest::StatusCode::GONE
        {
            return Err(IdentityError::DidNotFound {
                did: did.to_owned(),
                url: url.to_string(),
            });
        }
        if !response.status().is_success() {
            return Err(unreachable(format!("it answered {}", response.status())));
        }
        let document: DidDocument =
            read_json(response, Limit::DOCUMENT)
                .await
                .map_err(|error| IdentityError::DidDocumentInvalid {
                    did: did.to_owned(),
                    reason: error.to_string(),
                })?;
        if document.id != did {
            return Err(IdentityError::DidDocumentInvalid {
                did: did.to_owned(),
                reason: format!("it is the document of {}", document.id),
            });
        }
        Ok(document)
    }

    /// Where the document of `did` lives.
    fn document_url(&self, did: &str) -> Result<Url, IdentityError> {
        let unsupported = || IdentityError::UnsupportedDid {
            did: did.to_owned(),
        };
        if did.starts_with("did:plc:") {
            return self
                .config
                .plc_url
                .join(&format!("./{did}"))
                .map_err(|_| unsupported());
        }
        let host = did.strip_prefix("did:web:").ok_or_else(unsupported)?;
        // did:web encodes a port as %3A; atproto allows no path.
        let host = host.replace("%3A", ":");
        if host.contains(':') && !host.starts_with("localhost:") {
            return Err(unsupported());
        }
        let scheme = if self.config.allow_http_localhost && is_localhost(&host) {
            "http"
        } else {
            "https"
        };
        Url::parse(&format!("{scheme}://{host}/.well-known/did.json")).map_err(|_| unsupported())
    }
}

/// The identity a document describes, with its PDS checked for a usable URL.
fn identity_of(
    document: &DidDocument,
    allow_http_localhost: bool,
) -> Result<Identity, IdentityError> {
    let invalid = |reason: String| IdentityError::DidDocumentInvalid {
        did: document.id.clone(),
        reason,
    };
    let pds = document
        .pds_endpoint()
        .ok_or_else(|| invalid("it names no PDS (#atproto_pds service)".to_owned()))?;
    let pds = Url::parse(pds).map_err(|_| invalid(format!("its PDS {pds:?} is not a URL")))?;
    if !is_acceptable_endpoint(&pds, allow_http_localhost) {
        return Err(invalid(format!("its PDS {pds} is not an https URL")));
    }
    let signing_key = document
        .key("atproto")
        .ok_or_else(|| invalid("it has no #atproto signing key".to_owned()))?
        .map_err(|error| invalid(error.to_string()))?;
    Ok(Identity {
        did: document.id.clone(),
        handle: document.handle(),
        pds,
        signing_key,
    })
}

/// `https`, or `http` on localhost when allowed.
pub(crate) fn is_acceptable_endpoint(url: &Url, allow_http_localhost: bool) -> bool {
    match url.scheme() {
        "https" => true,
        "http" => allow_http_localhost && url.host_str().is_some_and(is_localhost),
        _ => false,
    }
}

fn is_localhost(host: &str) -> bool {
    let name = host.split(':').next().unwrap_or(host);
    matches!(name, "localhost" | "127.0.0.1" | "[::1]")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolver(allow_http_localhost: bool) -> Resolver {
        let mut config = IdentityConfig::public();
        config.allow_http_localhost = allow_http_localhost;
        Resolver::new(config, Outbound::new(NetPolicy::public()))
    }

    #[test]
    fn did_documents_are_found_at_the_plc_directory_or_the_web_domain() {
        let public = resolver(false);
        let url = |did: &str| public.document_url(did).map(|url| url.to_string());
        assert_eq!(
            url("did:plc:abc").unwrap(),
            "https://plc.directory/did:plc:abc"
        );
        assert_eq!(
            url("did:web:k8s.socialweb.computer").unwrap(),
            "https://k8s.socialweb.computer/.well-known/did.json"
        );
        assert_eq!(
            url("did:web:localhost%3A4000").unwrap(),
            "https://localhost:4000/.well-known/did.json"
        );
        assert!(matches!(
            url("did:key:zQ3s"),
            Err(IdentityError::UnsupportedDid { .. })
        ));
        assert!(matches!(
            url("did:web:example.com:path"),
            Err(IdentityError::UnsupportedDid { .. })
        ));
        let sandbox = resolver(true);
        assert_eq!(
            sandbox
                .document_url("did:web:localhost%3A4000")
                .unwrap()
                .as_str(),
            "http://localhost:4000/.well-known/did.json"
        );
    }

    #[test]
    fn plain_http_is_only_for_localhost_and_only_when_allowed() {
        let url = |text: &str| Url::parse(text).unwrap();
        assert!(is_acceptable_endpoint(
            &url("https://pds.example.com"),
            false
        ));
        assert!(!is_acceptable_endpoint(
            &url("http://pds.example.com"),
            true
        ));
        assert!(!is_acceptable_endpoint(
            &url("http://localhost:2583"),
            false
        ));
        assert!(is_acceptable_endpoint(&url("http://localhost:2583"), true));
        assert!(!is_acceptable_endpoint(&url("ftp://localhost"), true));
    }

    #[tokio::test]
    async fn text_that_is_neither_handle_nor_did_is_refused_before_any_lookup() {
        let refused = resolver(false).resolve("not a handle!").await;
        assert_eq!(
            refused,
            Err(IdentityError::NotAnIdentifier {
                input: "not a handle!".to_owned()
            })
        );
    }

    /// On paused time, over a real loopback socket: a PLC directory that takes the request
    /// and never answers ends the hop at its 10 s, far before a call's 60 s total.
    #[tokio::test(start_paused = true)]
    async fn a_did_document_never_answered_ends_at_the_hop_timeout() {
        let port = swdesk_devnet::canary::silent().unwrap();
        let plc = Url::parse(&format!("http://127.0.0.1:{port}")).unwrap();
        let config = IdentityConfig::sandbox(plc.clone(), plc);
        let policy = NetPolicy::public().with_loopback_port(port);
        let resolver = Resolver::new(config, Outbound::new(policy));
        let started = tokio::time::Instant::now();
        let asked = resolver.did_document("did:plc:ewvi7nxzyoun6zhxrhs64oiz");
        let outcome = tokio::time::timeout(10 * HOP_TIMEOUT, asked).await;
        let waited = started.elapsed();
        let error = outcome
            .unwrap_or_else(|_| panic!("still waiting after {waited:?}"))
            .expect_err("nothing answers");
        assert!(
            matches!(error, IdentityError::DidUnreachable { .. }),
            "{error:?}"
        );
        assert!(
            waited >= HOP_TIMEOUT && waited < HOP_TIMEOUT + Duration::from_secs(1),
            "{waited:?}"
        );
    }
}
