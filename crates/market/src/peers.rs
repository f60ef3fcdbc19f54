//! The other parties of the market, as the requester reaches them: the relay that knows which
//! repos hold offerings, and the bidders' XRPC services (`submitRfp`, `submitAccept`,
//! `submitEvent`) and free-grant endpoints. [`Peers`] is the port the step driver uses;
//! [`HttpPeers`] speaks HTTP: a service reference (`did:web:HOST#temp_market`) resolves through
//! the DID's document to an endpoint, and every call carries a service-auth token minted by the
//! owner's PDS (`aud` = the service DID, `lxm` = the method's NSID).
//!
//! Every call goes through the owner's [`Outbound`] policy: a service endpoint or a grant
//! `url` a peer names is called only when the policy allows its address (https to the public
//! internet, or a loopback service the owner's sandbox configuration names), and its answer is
//! read under a size cap.
//!
//! Invariants: a token is never logged; an answer is either the method's output or a
//! [`PeerError`] saying whether trying again may help (unreachable, timed out, 5xx, a rate
//! limit) or not (the bidder refused: 4xx; the policy forbids the address, at the URL or at
//! connect time; a URL no client can send; the answer is too large), by core's one rule; a
//! peer's words in a [`PeerError`] are one line of at most [`PEER_WORDS_MAX`] bytes.

use std::future::Future;
use swdesk_auction::bidders::MAX_OFFERING_REPOS;

use serde_json::{Value, json};
use swdesk_atproto::identity::{DidDocument, Resolver};
use swdesk_atproto::oauth::Secret;
use swdesk_atproto::plc::{Listing, live_listing};
use swdesk_atproto::service_auth::ServiceAuth;
use swdesk_auction::compute::StrongRef;
use swdesk_lexicon::com::publicdomainrelay::temp::market::{
    submit_accept, submit_event, submit_rfp,
};
use swdesk_lexicon::text::peer_text;

use crate::service_ref::{ServiceRef, audience};
use swdesk_net::{BodyError, Limit, Outbound, read_error, read_json};
use url::Url;

/// Why a call to another party failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct PeerError {
    /// What happened, with the party's own words.
    pub message: String,
    /// Whether trying again later may succeed.
    pub transient: bool,
    /// Whether the party refused a record of ours for its signature, recognised by the whole
    /// refusal ([`refuses_our_signature`]), never by a word in it.
    pub signature_untrusted: bool,
}

impl PeerError {
    /// A failure worth retrying.
    pub fn transient(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            transient: true,
            signature_untrusted: false,
        }
    }

    /// A refusal: retrying the same call will not help.
    pub fn refused(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            transient: false,
            signature_untrusted: false,
        }
    }
}

/// The winning bidder's answer to `submitAccept`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcceptAnswer {
    /// The receipt.
    pub receipt: StrongRef,
    /// Where events about it go (`submitEvent` service reference).
    pub submit_event: String,
}

/// The parties of the market other than the owner's repo.
pub trait Peers: Send + Sync + std::fmt::Debug + 'static {
    /// The repos that hold records of `collection`, as the relay lists them.
    fn repos_with(
        &self,
        collection: &str,
    ) -> impl Future<Output = Result<Vec<String>, PeerError>> + Send;

    /// Sends our RFP to the service `service`; the bid, when the bidder answers with one.
    fn submit_rfp(
        &self,
        service: &str,
        rfp: &StrongRef,
    ) -> impl Future<Output = Result<Option<StrongRef>, PeerError>> + Send;

    /// The keys `did`'s DID document vouches for, as `did:key`s (the public market binds a
    /// signing key to its signer this way).
    fn document_keys(
        &self,
        did: &str,
    ) -> impl Future<Output = Result<Vec<String>, PeerError>> + Send;

    /// How `did`'s live DID document (read afresh) stands with `key` under `#attestation`:
    /// whether the owner's records may name the owner as their signatures' issuer
    /// ([`crate::issuer`]).
    fn attestation_listing(
        &self,
        did: &str,
        key: &str,
    ) -> impl Future<Output = Result<Listing, PeerError>> + Send;

    /// The service endpoints `did`'s DID document names, as written (an issuer is tied to an
    /// author through them: `swdesk_auction::trust::is_tied`).
    fn document_endpoints(
        &self,
        did: &str,
    ) -> impl Future<Output = Result<Vec<String>, PeerError>> + Send;

    /// The bidder's grant (`receipts.free`) of our `accepts.free`, from the terms' `url`.
    fn fetch_grant(
        &self,
        terms_url: &str,
        accepts_free: &StrongRef,
    ) -> impl Future<Output = Result<StrongRef, PeerError>> + Send;

    /// Hands our accept to the service `service`; its receipt.
    fn submit_accept(
        &self,
        service: &str,
        accept: &StrongRef,
    ) -> impl Future<Output = Result<AcceptAnswer, PeerError>> + Send;

    /// Hands our `market.event` (`record` as written) to the service `service`.
    fn submit_event(
        &self,
        service: &str,
        event: &StrongRef,
        record: &Value,
    ) -> impl Future<Output = Result<(), PeerError>> + Send;
}

/// Where offerings are found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OfferingSource {
    /// A relay's `com.atproto.sync.listReposByCollection`.
    Relay(Url),
    /// A fixed list of repos (the sandbox, which runs no relay).
    Repos(Vec<String>),
}

/// Mints service-auth tokens for the owner (the product uses atproto's cached [`ServiceAuth`]).
pub trait ServiceTokens: Send + Sync + std::fmt::Debug + 'static {
    /// A token for calling `lxm` at the service DID `aud`.
    fn token(&self, aud: &str, lxm: &str)
    -> impl Future<Output = Result<Secret, PeerError>> + Send;
}

impl ServiceTokens for ServiceAuth {
    async fn token(&self, aud: &str, lxm: &str) -> Result<Secret, PeerError> {
        ServiceAuth::token(self, aud, lxm).await.map_err(|error| {
            PeerError::transient(format!("the PDS minted no service-auth token: {error}"))
        })
    }
}

/// [`Peers`] over HTTP.
#[derive(Debug)]
pub struct HttpPeers<T> {
    http: Outbound,
    resolver: Resolver,
    tokens: T,
    offerings: OfferingSource,
    timeout: std::time::Duration,
}

impl<T: ServiceTokens> HttpPeers<T> {
    /// Peers reached with `resolver`'s client, their services resolved with it, calls
    /// authorized by `tokens`, offerings found at `offerings`.
    pub fn new(resolver: Resolver, tokens: T, offerings: OfferingSource) -> Self {
        Self {
            http: resolver.http().clone(),
            resolver,
            tokens,
            offerings,
            timeout: PEER_TIMEOUT,
        }
    }

    /// The same peers, each call (answer included) given at most `timeout` instead of
    /// [`PEER_TIMEOUT`]: a step's deadline, not a slow peer, decides when it ends.
    #[must_use]
    pub fn with_timeout(mut self, timeout: std::time::Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The audience and endpoint of a service reference in either dialect
    /// ([`ServiceRef`]).
    async fn endpoint(&self, service: &str) -> Result<(String, String), PeerError> {
        let reference = ServiceRef::parse(service).map_err(|why| {
            let service = peer_text(service, PEER_WORDS_MAX);
            PeerError::refused(format!("{service:?} is not a service reference: {why}"))
        })?;
        let (did, endpoint) = match reference {
            ServiceRef::Url(url) => (None, url),
            ServiceRef::Did { did, id } => {
                let endpoint = self.endpoint_in_document(&did, &id).await?;
                (Some(did), endpoint)
            }
        };
        let audience = audience(did.as_deref(), &endpoint);
        Ok((audience, endpoint.as_str().trim_end_matches('/').to_owned()))
    }

    /// The endpoint of the service `id` (or its other dialect's id) in `did`'s document.
    async fn endpoint_in_document(&self, did: &str, id: &str) -> Result<Url, PeerError> {
        let document = self.document(did).await?;
        let ids = ServiceRef::matching_ids(did, id);
        let text = document
            .service
            .iter()
            .find(|entry| ids.contains(&entry.id))
            .and_then(|entry| entry.service_endpoint.as_str())
            .ok_or_else(|| PeerError::refused(format!("{did} has no service #{id}")))?;
        Url::parse(text).map_err(|_| {
            let text = peer_text(text, PEER_WORDS_MAX);
            PeerError::refused(format!("{did}'s service #{id} is not a URL: {text}"))
        })
    }

    /// Calls the procedure `nsid` at `service` with `body`, authorized for it.
    async fn call(&self, service: &str, nsid: &str, body: &Value) -> Result<Value, PeerError> {
        let (did, endpoint) = self.endpoint(service).await?;
        let token = self.tokens.token(&did, nsid).await?;
        let request = self
            .http
            .post(format!("{endpoint}/xrpc/{nsid}"))
            .map_err(refused_address)?
            .bearer_auth(token.expose())
            .json(body);
        send(nsid, request.timeout(self.timeout), Limit::RECORD).await
    }

    /// `did`'s DID document, as the resolver keeps it.
    async fn document(&self, did: &str) -> Result<DidDocument, PeerError> {
        self.resolver
            .did_document(did)
            .await
            .map_err(|error| PeerError::transient(format!("{did} does not resolve: {error}")))
    }
}

impl<T: ServiceTokens> Peers for HttpPeers<T> {
    async fn repos_with(&self, collection: &str) -> Result<Vec<String>, PeerError> {
        let relay = match &self.offerings {
            OfferingSource::Repos(repos) => return Ok(repos.clone()),
            OfferingSource::Relay(relay) => relay,
        };
        let mut repos = Vec::new();
        let mut cursor: Option<String> = None;
        for _page in 0..50 {
            let url = format!(
                "{}/xrpc/com.atproto.sync.listReposByCollection",
                relay.as_str().trim_end_matches('/')
            );
            let mut query = vec![
                ("collection", collection.to_owned()),
                ("limit", "500".into()),
            ];
            query.extend(cursor.take().map(|cursor| ("cursor", cursor)));
            let request = self.http.get(url).map_err(refused_address)?.query(&query);
            let request = request.timeout(self.timeout);
            let answer = send("listReposByCollection", request, Limit::LIST).await?;
            let page = listed_page(&answer);
            let room = MAX_OFFERING_REPOS.saturating_sub(repos.len());
            repos.extend(page.repos.into_iter().take(room));
            cursor = page.cursor;
            if cursor.is_none() || page.entries == 0 || repos.len() >= MAX_OFFERING_REPOS {
                break;
            }
        }
        Ok(repos)
    }

    async fn submit_rfp(
        &self,
        service: &str,
        rfp: &StrongRef,
    ) -> Result<Option<StrongRef>, PeerError> {
        let body = json!({"rfpUri": rfp.uri, "rfpCid": rfp.cid});
        let answer = self.call(service, submit_rfp::NSID, &body).await?;
        let output: submit_rfp::Output = parse(submit_rfp::NSID, answer)?;
        Ok(match (output.ok, output.bid_uri, output.bid_cid) {
            (true, Some(uri), Some(cid)) => Some(StrongRef { uri, cid }),
            _ => None,
        })
    }

    async fn document_keys(&self, did: &str) -> Result<Vec<String>, PeerError> {
        Ok(self.document(did).await?.did_keys())
    }

    async fn attestation_listing(&self, did: &str, key: &str) -> Result<Listing, PeerError> {
        live_listing(&self.resolver, did, key)
            .await
            .map_err(|error| PeerError::transient(format!("{did} does not resolve: {error}")))
    }

    async fn document_endpoints(&self, did: &str) -> Result<Vec<String>, PeerError> {
        Ok(self.document(did).await?.service_endpoints())
    }

    async fn fetch_grant(
        &self,
        terms_url: &str,
        accepts_free: &StrongRef,
    ) -> Result<StrongRef, PeerError> {
        let url = format!(
            "{}/{}/{}",
            terms_url.trim_end_matches('/'),
            path_segment(&accepts_free.uri),
            accepts_free.cid
        );
        let request = self.http.get(url).map_err(refused_address)?;
        let request = request.timeout(self.timeout);
        let answer = send("the free grant", request, Limit::RECORD).await?;
        grant_reference(&answer)
    }

    async fn submit_accept(
        &self,
        service: &str,
        accept: &StrongRef,
    ) -> Result<AcceptAnswer, PeerError> {
        let body = json!({"acceptUri": accept.uri, "acceptCid": accept.cid});
        let answer = self.call(service, submit_accept::NSID, &body).await?;
        let output: submit_accept::Output = parse(submit_accept::NSID, answer)?;
        Ok(AcceptAnswer {
            receipt: StrongRef {
                uri: output.uri,
                cid: output.cid,
            },
            submit_event: output.submit_event,
        })
    }

    async fn submit_event(
        &self,
        service: &str,
        event: &StrongRef,
        record: &Value,
    ) -> Result<(), PeerError> {
        let body = json!({"uri": event.uri, "cid": event.cid, "record": record});
        let answer = self.call(service, submit_event::NSID, &body).await?;
        let output: submit_event::Output = parse(submit_event::NSID, answer)?;
        if output.ok {
            Ok(())
        } else {
            Err(PeerError::transient("the bidder answered ok: false"))
        }
    }
}

/// One page of a relay's `listReposByCollection` answer, as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedPage {
    /// The DIDs listed, in order: only well-formed ones, at most [`MAX_OFFERING_REPOS`].
    pub repos: Vec<String>,
    /// How many entries the page held, well-formed or not (none: the listing ended).
    pub entries: usize,
    /// Where the next page starts: a cursor of at most [`CURSOR_MAX`] bytes without controls.
    pub cursor: Option<String>,
}

/// The longest relay cursor sent back.
pub const CURSOR_MAX: usize = 1024;

/// A relay's page of repos: each entry's `did` when it is a DID (any other entry is skipped,
/// never kept), at most [`MAX_OFFERING_REPOS`], and its cursor when it is one that can go back
/// in a query. Public for the fuzz suite (target `relay_grant`).
pub fn listed_page(answer: &Value) -> ListedPage {
    let entries = answer["repos"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let repos = entries
        .iter()
        .filter_map(|repo| repo["did"].as_str())
        .filter(|did| swdesk_lexicon::syntax::did(did).is_ok())
        .take(MAX_OFFERING_REPOS)
        .map(str::to_owned)
        .collect();
    let cursor = answer["cursor"]
        .as_str()
        .filter(|cursor| {
            !cursor.is_empty()
                && cursor.len() <= CURSOR_MAX
                && !cursor.chars().any(char::is_control)
        })
        .map(str::to_owned);
    ListedPage {
        repos,
        entries: entries.len(),
        cursor,
    }
}

/// A bidder's grant endpoint's answer: the strong reference to its `receipts.free`, when the
/// answer names one whose uri is an at-uri and whose cid is a CID; otherwise a refusal quoting
/// the answer cut to one line. Public for the fuzz suite (target `relay_grant`).
pub fn grant_reference(answer: &Value) -> Result<StrongRef, PeerError> {
    let uri = answer["uri"].as_str();
    let cid = answer["cid"].as_str();
    let well_formed = uri.is_some_and(|uri| swdesk_lexicon::syntax::at_uri(uri).is_ok())
        && cid.is_some_and(|cid| swdesk_lexicon::syntax::cid(cid).is_ok());
    match (uri, cid) {
        (Some(uri), Some(cid)) if well_formed => Ok(StrongRef {
            uri: uri.to_owned(),
            cid: cid.to_owned(),
        }),
        _ => Err(PeerError::refused(format!(
            "the grant endpoint answered no strong reference: {}",
            peer_text(&answer.to_string(), PEER_WORDS_MAX)
        ))),
    }
}

/// An at-uri as one percent-encoded path segment.
fn path_segment(uri: &str) -> String {
    uri.replace('%', "%25")
        .replace(':', "%3A")
        .replace('/', "%2F")
}

fn parse<O: serde::de::DeserializeOwned>(what: &str, answer: Value) -> Result<O, PeerError> {
    serde_json::from_value(answer).map_err(|error| {
        let error = peer_text(&error.to_string(), PEER_WORDS_MAX);
        PeerError::refused(format!("{what} answered an unreadable output: {error}"))
    })
}

/// The most bytes of a peer's own words (an error name, a message) a [`PeerError`] keeps.
pub const PEER_WORDS_MAX: usize = 512;

/// A call the owner's network policy forbids: the peer named an address it may not reach.
fn refused_address(refused: swdesk_net::Refused) -> PeerError {
    PeerError::refused(format!("not called: {refused}"))
}

/// Sends `request`, reads its JSON answer of at most `limit` bytes, or says whether the
/// failure is worth retrying.
async fn send(
    what: &str,
    request: reqwest::RequestBuilder,
    limit: Limit,
) -> Result<Value, PeerError> {
    let response = request
        .send()
        .await
        .map_err(|error| unreachable(what, error))?;
    let status = response.status();
    if status.is_success() {
        return read_json(response, limit)
            .await
            .map_err(|error| unreadable(what, error));
    }
    let body = read_error(response).await;
    let words = |field: &str| peer_text(body[field].as_str().unwrap_or_default(), PEER_WORDS_MAX);
    let message = if body.is_object() {
        format!(
            "{what} answered {status}: {} {}",
            words("error"),
            words("message")
        )
    } else {
        format!("{what} answered {status} (no readable error)")
    };
    let transient = swdesk_atproto::retry::transient_status(status.as_u16());
    Err(PeerError {
        message: message.trim_end().to_owned(),
        transient,
        signature_untrusted: refuses_our_signature(status.as_u16(), &body),
    })
}

/// The refusal the public market's bidders answer a record whose signature they do not trust
/// (`verifyAuthored` in its `market-atproto/server.ts`; with `bindKeys`, a key its author's DID
/// document does not list): status 400, error `InvalidRequest`, this message. The
/// implementation has no error name of its own for it, so the whole answer is compared: a
/// bidder that only mentions a signature in other words is not taken for it.
pub const SIGNATURE_REFUSAL: (u16, &str, &str) = (
    400,
    "InvalidRequest",
    "record is missing a valid badge.blue signature",
);

/// Whether an error answer of `status` with `body` is [`SIGNATURE_REFUSAL`].
pub fn refuses_our_signature(status: u16, body: &Value) -> bool {
    let (refusal_status, error, message) = SIGNATURE_REFUSAL;
    status == refusal_status && body["error"] == error && body["message"] == message
}

/// How long a call to a peer may take, answer included (an answer that trickles fails at it,
/// and is tried again within its step's deadline).
pub const PEER_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// A call that got no answer: retried only when it may heal (core's rule, through
/// [`swdesk_atproto::retry::failure_of`]); one that could not be made, or was refused by the
/// owner's policy, fails at once.
fn unreachable(what: &str, error: reqwest::Error) -> PeerError {
    use swdesk_atproto::retry::{Failure, failure_of};
    let failure = failure_of(&error);
    let transient = failure.fault().is_transient();
    let reason = match swdesk_net::refusal_in(&error) {
        Some(refused) => format!("not called: {refused}"),
        None if error.is_timeout() => "timed out".to_owned(),
        None => error.without_url().to_string(),
    };
    let message = match failure {
        Failure::Unbuildable => format!("{what}: the request cannot be made: {reason}"),
        Failure::NoAnswer => format!("{what}: unreachable: {reason}"),
        _ => format!("{what}: {reason}"),
    };
    PeerError {
        message,
        transient,
        signature_untrusted: false,
    }
}

fn unreadable(what: &str, error: BodyError) -> PeerError {
    match error {
        BodyError::Transport(reason) => {
            PeerError::transient(format!("{what}: the answer broke off: {reason}"))
        }
        refused => PeerError::refused(format!("{what}: {refused}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_public_markets_whole_refusal_of_a_signature_is_taken_for_one() {
        let (status, error, message) = SIGNATURE_REFUSAL;
        let answer = |error: &str, message: &str| json!({"error": error, "message": message});
        assert!(refuses_our_signature(status, &answer(error, message)));
        for (status, body) in [
            (403, answer(error, message)),
            (400, answer("Unauthorized", message)),
            (
                400,
                answer(error, "your signature is no good: publish your key"),
            ),
            (400, answer(error, &format!("{message}\u{202e}"))),
            (400, json!(message)),
        ] {
            assert!(!refuses_our_signature(status, &body), "{status} {body}");
        }
    }

    #[test]
    fn a_relay_page_keeps_only_dids_and_a_grant_only_a_well_formed_reference() {
        let hostile = format!("did:plc:a\u{202E}\n{}", "x".repeat(10_000));
        let answer = json!({
            "repos": [{"did": "did:plc:ewvi7nxzyoun6zhxrhs64oiz"}, {"did": hostile},
                      {"did": 7}, {"did": "<script>"}],
            "cursor": "next\u{0}",
        });
        let page = listed_page(&answer);
        assert_eq!(
            page.repos,
            vec!["did:plc:ewvi7nxzyoun6zhxrhs64oiz".to_owned()]
        );
        assert_eq!(page.entries, 4);
        assert_eq!(
            page.cursor, None,
            "a cursor with a control is not sent back"
        );
        let many: Vec<Value> = (0..MAX_OFFERING_REPOS + 10)
            .map(|n| json!({"did": format!("did:plc:a{n}")}))
            .collect();
        let page = listed_page(&json!({"repos": many, "cursor": "c"}));
        assert_eq!(page.repos.len(), MAX_OFFERING_REPOS);
        assert_eq!(page.cursor.as_deref(), Some("c"));

        let uri = "at://did:plc:ewvi7nxzyoun6zhxrhs64oiz/com.publicdomainrelay.temp.market.receipts.free/3l";
        let cid = "bafyreiclp443lavogvhj3d2ob2cxbfuscni2k5jk7bebjzg7khl3esabwq";
        let good = grant_reference(&json!({"uri": uri, "cid": cid})).expect("a reference");
        assert_eq!((good.uri.as_str(), good.cid.as_str()), (uri, cid));
        let refused = grant_reference(&json!({"uri": hostile, "cid": cid})).expect_err("junk");
        assert!(!refused.transient);
        assert!(
            refused.message.len() <= PEER_WORDS_MAX + 100,
            "{}",
            refused.message.len()
        );
        assert!(
            !refused
                .message
                .chars()
                .any(|c| c.is_control() || c == '\u{202E}')
        );
    }

    #[test]
    fn an_at_uri_becomes_one_path_segment() {
        assert_eq!(
            path_segment("at://did:plc:a/x.y.z/3l"),
            "at%3A%2F%2Fdid%3Aplc%3Aa%2Fx.y.z%2F3l"
        );
    }
}
