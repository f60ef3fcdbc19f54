//! The bidder itself: its identities (the service `did:web` and the account's DID), its
//! account session, its attestation key, its behaviour and its [`Ledger`], plus what every
//! step shares: writing a signed record to its repo, and calling a method at another party's
//! service (`did:web:HOST#fragment`, resolved through that DID's document) with a service-auth
//! token minted by its own PDS.
//!
//! The protocol steps live beside it: [`crate::bidding`] (`submitRfp`), [`crate::settlement`]
//! (the free grant and `submitAccept`), [`crate::guest`] (the simulated guest and
//! `submitEvent`).

use std::sync::Mutex;
use swdesk_net::Outbound;

use serde_json::{Value, json};
use swdesk_atproto::attestation::{AttestationKey, sign_record};
use swdesk_atproto::identity::Resolver;
use swdesk_auction::compute::StrongRef;
use swdesk_kernel::timestamp::Timestamp;
use swdesk_lexicon::com::publicdomainrelay::temp::market::{event, submit_event};
use url::Url;

use crate::account::Account;
use crate::config::{Behaviour, Config};
use crate::did::{EVENT_SERVICE_ID, MARKET_SERVICE_ID, service_endpoint, split_service_ref};
use crate::records::{Fetched, check_attested};
use crate::state::Ledger;
use crate::xrpc::Refusal;

/// The running bidder's shared state.
#[derive(Debug)]
pub struct Bidder {
    pub(crate) did: String,
    pub(crate) url: Url,
    pub(crate) account: Account,
    pub(crate) key: AttestationKey,
    pub(crate) resolver: Resolver,
    pub(crate) ledger: Ledger,
    pub(crate) boot_step: std::time::Duration,
    pub(crate) guest_keys: crate::state::GuestKeys,
    behaviour: Mutex<Behaviour>,
    clock_skew_seconds: i64,
}

impl Bidder {
    /// The bidder of `config`, serving as `did` at `url`, writing through `account`. It reaches
    /// other parties under the sandbox's network policy: any loopback port, and the `*.localhost`
    /// names through the ingress when the configuration names one.
    #[allow(
        clippy::disallowed_methods,
        reason = "the sandbox bidder follows references the tests name on loopback"
    )]
    pub fn new(config: Config, did: String, url: Url, account: Account) -> Self {
        let mut policy = config.identity.net_policy().with_any_loopback_port();
        if let Some(port) = config.localhost_ingress {
            policy = policy.with_localhost_ingress(port);
        }
        Self {
            did,
            url,
            account,
            key: config.attestation_key,
            resolver: Resolver::new(config.identity.clone(), Outbound::new(policy)),
            ledger: Ledger::default(),
            boot_step: config.boot_step,
            guest_keys: Default::default(),
            behaviour: Mutex::new(config.behaviour),
            clock_skew_seconds: config.clock_skew_seconds,
        }
    }

    /// The service DID (`did:web:localhost%3A<port>`): the `aud` of calls to it.
    pub fn did(&self) -> &str {
        &self.did
    }

    /// The loopback URL.
    pub fn url(&self) -> &Url {
        &self.url
    }

    /// Whether `fetched` is signed by its author with keys bound to it, as this bidder binds
    /// them (strictly when its behaviour says so); otherwise the refusal naming the problem.
    pub(crate) async fn check_attested(
        &self,
        fetched: &Fetched,
        what: &str,
    ) -> Result<(), Refusal> {
        let documents_only = self.behaviour().bind_keys;
        check_attested(&self.resolver, fetched, what, documents_only).await
    }

    /// The resolver callers' DIDs resolve with.
    pub fn resolver(&self) -> &Resolver {
        &self.resolver
    }

    /// `did:web:…#temp_market`: where requesters call `submitRfp` and `submitAccept`.
    pub fn market_service(&self) -> String {
        format!("{}{MARKET_SERVICE_ID}", self.did)
    }

    /// `did:web:…#compute_event`: where requesters call `submitEvent`.
    pub fn event_service(&self) -> String {
        format!("{}{EVENT_SERVICE_ID}", self.did)
    }

    /// The behaviour now.
    pub fn behaviour(&self) -> Behaviour {
        self.behaviour
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Changes the behaviour for the next calls.
    pub fn set_behaviour(&self, behaviour: Behaviour) {
        *self
            .behaviour
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = behaviour;
    }

    /// The clock tokens' `exp` is checked against (Unix seconds, with the configured skew).
    pub fn token_clock(&self) -> i64 {
        unix_seconds() + self.clock_skew_seconds
    }

    /// Signs `record` as a record of the bidder's repo and writes it to `collection`.
    pub async fn write_signed(
        &self,
        collection: &str,
        record: &Value,
    ) -> Result<(StrongRef, Value), Refusal> {
        let signed = sign_record(record, &self.key, self.account.did(), &now_rfc3339()).map_err(
            |error| Refusal::invalid(format!("the {collection} cannot be signed: {error}")),
        )?;
        let written = self
            .account
            .create_record(collection, &signed)
            .await
            .map_err(|error| {
                Refusal::upstream(format!("the {collection} cannot be written: {error}"))
            })?;
        Ok((written, signed))
    }

    /// Writes `record` unsigned (event payloads, whose lexicons carry no signatures).
    pub async fn write(&self, collection: &str, record: &Value) -> Result<StrongRef, Refusal> {
        self.account
            .create_record(collection, record)
            .await
            .map_err(|error| {
                Refusal::upstream(format!("the {collection} cannot be written: {error}"))
            })
    }

    /// Calls the procedure `nsid` with `body` at the service `reference` (`did:…#fragment`).
    pub async fn call_service(
        &self,
        reference: &str,
        nsid: &str,
        body: &Value,
    ) -> Result<Value, String> {
        let (did, fragment) = split_service_ref(reference)
            .ok_or_else(|| format!("{reference:?} is not a service reference"))?;
        let document = self
            .resolver
            .did_document(did)
            .await
            .map_err(|error| error.to_string())?;
        let endpoint = service_endpoint(&document.service, did, fragment)
            .ok_or_else(|| format!("{did} has no service #{fragment}"))?;
        let token = self
            .account
            .service_auth(did, nsid)
            .await
            .map_err(|error| error.to_string())?;
        let url = format!("{}/xrpc/{nsid}", endpoint.trim_end_matches('/'));
        let request = self
            .resolver
            .http()
            .post(url)
            .map_err(|refused| refused.to_string())?
            .bearer_auth(token.expose())
            .json(body);
        crate::account::send("a market call", request)
            .await
            .map_err(|error| error.to_string())
    }

    /// Writes `payload` in `collection` of the bidder's repo and the signed `market.event` about
    /// `receipt` that carries it.
    pub(crate) async fn write_event(
        &self,
        receipt: &StrongRef,
        collection: &str,
        payload: &serde_json::Value,
    ) -> Result<(StrongRef, serde_json::Value), Refusal> {
        let payload = self.write(collection, payload).await?;
        let record = json!({"$type": event::NSID, "receipt": strong_json(receipt), "payload": strong_json(&payload), "signatures": []});
        self.write_signed(event::NSID, &record).await
    }

    /// Sends the event to the requester's `submitEvent` service, when the accept named one.
    pub(crate) async fn tell_requester(
        &self,
        requester_events: Option<&str>,
        event_ref: &StrongRef,
        record: &serde_json::Value,
    ) {
        let Some(service) = requester_events else {
            return;
        };
        let body = json!({"uri": event_ref.uri, "cid": event_ref.cid, "record": record});
        if let Err(error) = self.call_service(service, submit_event::NSID, &body).await {
            tracing::warn!(%service, %error, "submitEvent to the requester failed");
        }
    }
}

/// Now as an atproto datetime (milliseconds, `Z`).
pub fn now_rfc3339() -> String {
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or_default();
    Timestamp::from_unix_millis(millis)
        .map(Timestamp::to_rfc3339)
        .unwrap_or_default()
}

fn unix_seconds() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| i64::try_from(elapsed.as_secs()).unwrap_or(i64::MAX))
        .unwrap_or_default()
}

/// A strong reference as record JSON.
pub fn strong_json(reference: &StrongRef) -> Value {
    serde_json::json!({"uri": reference.uri, "cid": reference.cid})
}
