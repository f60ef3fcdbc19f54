//! The local sandbox's market bidder: the provider side of the compute market
//! (`com.publicdomainrelay.temp.market.*`) on loopback, for `cargo xtask run` and the tests.
//! **It is plainly a local sandbox**: its guests are simulated (no VM runs; each "boots" on a
//! timer and reports a documentation address, see [`guest`]). What is real is everything a
//! requester can check: its own account on the local PDS with a `market.offering` for
//! `compute.vm`, its `did:web` document naming its services, service-auth JWTs verified against
//! the caller's DID document from the local PLC, authorship of every record it is shown checked
//! against the author's PDS at the given CID, and its bids, free grants, receipts and events
//! written as signed records (inline `network.attested.signature`s by its attestation key) in
//! its own repo. It bids free terms (`market.bids.free`), or paid ones (`market.bids.x402`,
//! settled at an endpoint that answers `402`: it takes no payment) when told a price above
//! zero, see [`bidding`].
//!
//! Map: [`config`] (what a start takes, the behaviour and test controls), [`did`] (its DID
//! document and service references), [`auth`] (service-auth checks), [`xrpc`] (error answers),
//! [`account`] (its PDS session), [`records`] (reading records by strong reference),
//! [`bidder`] (the shared state), [`bidding`] (`submitRfp`, free and paid terms), [`settlement`]
//! (the free grant, `submitAccept`, the receipt), [`guest`] (the simulated guest,
//! `submitEvent`), [`secrets`] (the guest's key and the sealed secrets it opens), [`state`] (what it remembers, readable by tests), [`routes`] (including the
//! `402` payment endpoint).
//!
//! Invariants: every market method authenticates before it reads input; a record is acted on
//! only when its author is the party the protocol names and it stands at the CID given; only
//! the author of an accept releases its guest or sends it secrets; only a bid with free terms is granted and
//! accepted; no token, password or key is logged.

pub mod account;
pub mod auth;
pub mod bidder;
pub mod bidding;
pub mod config;
pub mod did;
pub mod guest;
pub mod records;
pub mod routes;
pub mod secrets;
pub mod settlement;
pub mod state;
pub mod xrpc;

use std::net::SocketAddr;
use std::sync::Arc;

use serde_json::json;
use swdesk_auction::compute::StrongRef;
use swdesk_lexicon::com::publicdomainrelay::temp::compute::vm;
use swdesk_lexicon::com::publicdomainrelay::temp::market::{badge_blue_key, offering};
use swdesk_sandbox_peer::{BindError, Loopback, Serving};
use url::Url;

pub use config::{Behaviour, BidderAccount, Config};
pub use state::{GuestPhase, Opened, Snapshot};

/// Why the bidder did not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The loopback port could not be bound.
    #[error("the bidder could not listen on {address}: {source}")]
    Bind {
        /// Where it tried.
        address: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// The bidder account could not sign in to its PDS.
    #[error("the bidder account could not sign in: {0}")]
    Account(#[from] account::AccountError),
    /// Its offering could not be written.
    #[error("the bidder's offering could not be written: {0}")]
    Offering(String),
    /// Its attestation key could not be published.
    #[error("the bidder's attestation key could not be published: {0}")]
    Key(account::AccountError),
}

impl From<BindError> for StartError {
    fn from(BindError { address, source }: BindError) -> Self {
        Self::Bind { address, source }
    }
}

/// A started bidder; dropping it (or [`RunningBidder::stop`]) stops it (its [`Serving`]).
#[derive(Debug)]
pub struct RunningBidder {
    /// `http://localhost:<port>`.
    pub url: Url,
    /// `did:web:localhost%3A<port>`: the service DID, the `aud` of calls to it.
    pub did: String,
    /// The DID of its account on the PDS: the author of its offering, bids and receipts.
    pub account: String,
    /// Its `market.offering`.
    pub offering: StrongRef,
    bidder: Arc<bidder::Bidder>,
    serving: Serving,
}

impl RunningBidder {
    /// What it remembers now: RFPs seen and refused, bids, grants, guests.
    pub fn state(&self) -> Snapshot {
        self.bidder.ledger.snapshot()
    }

    /// Changes its price and test controls for the next calls.
    pub fn set_behaviour(&self, behaviour: Behaviour) {
        self.bidder.set_behaviour(behaviour);
    }

    /// `did:web:…#temp_market`, as its offering and bids name it.
    pub fn market_service(&self) -> String {
        self.bidder.market_service()
    }

    /// The `did:key` of its attestation key.
    pub fn attestation_did_key(&self) -> String {
        self.bidder.key.did_key()
    }

    /// Deletes its receipt `receipt` from its repo, as a provider that dropped the guest
    /// might: the drift tests' control.
    pub async fn delete_receipt(&self, receipt: &StrongRef) -> Result<(), String> {
        let uri = swdesk_kernel::uri::RecordUri::parse(&receipt.uri).map_err(|e| e.to_string())?;
        self.bidder
            .account
            .delete_record(uri.collection(), &uri.rkey().to_string())
            .await
            .map_err(|error| error.to_string())
    }

    /// Stops serving and waits until the listener is closed.
    pub async fn stop(mut self) {
        self.serving.stop().await;
    }
}

/// Starts a bidder on `127.0.0.1` (the port from `config`, 0 for any free one): signs its
/// account in, writes its offering, serves.
#[allow(
    clippy::disallowed_methods,
    reason = "the sandbox bidder signs in to the sandbox PDS on loopback"
)]
pub async fn start(config: Config) -> Result<RunningBidder, StartError> {
    let loopback = Loopback::bind(config.port).await?;
    let (url, did) = (loopback.url.clone(), loopback.did.clone());
    let account = account::Account::sign_in(reqwest::Client::new(), &config.account).await?;
    let shared = Arc::new(bidder::Bidder::new(
        config,
        did.clone(),
        url.clone(),
        account,
    ));
    publish_key(&shared).await?;
    let offering = write_offering(&shared).await?;
    let serving = loopback.serve(routes::router(Arc::clone(&shared)), "the sandbox bidder");
    Ok(RunningBidder {
        url,
        did,
        account: shared.account.did().to_owned(),
        offering,
        bidder: shared,
        serving,
    })
}

/// Its attestation key, published in its repo (`market.badgeBlueKey`, keyed by the `did:key`)
/// so requesters can trust its signed bids and receipts.
async fn publish_key(bidder: &bidder::Bidder) -> Result<(), StartError> {
    let did_key = bidder.key.did_key();
    let record = json!({
        "$type": badge_blue_key::NSID,
        "key": did_key,
        "issuer": bidder.did,
        "createdAt": bidder::now_rfc3339(),
    });
    bidder
        .account
        .put_record(badge_blue_key::NSID, &did_key, &record)
        .await
        .map(|_| ())
        .map_err(StartError::Key)
}

/// Its `market.offering`: bids on `compute.vm`, at its `#temp_market` service.
async fn write_offering(bidder: &bidder::Bidder) -> Result<StrongRef, StartError> {
    let record = json!({
        "$type": offering::NSID,
        "endpointUrl": bidder.market_service(),
        "appliesTo": [vm::NSID],
        "createdAt": bidder::now_rfc3339(),
    });
    bidder
        .write(offering::NSID, &record)
        .await
        .map_err(|refusal| StartError::Offering(refusal.message))
}
