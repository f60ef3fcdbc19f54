//! The local sandbox's cluster gateway: a stand-in for `did:web:k8s.socialweb.computer` that
//! speaks the `com.publicdomainrelay.temp.cluster.*` and `computer.socialweb.k8s.*` lexicons
//! over XRPC (HTTP and a WebSocket subscription) on loopback, for `cargo xtask run` and the
//! tests. **It is plainly a local sandbox**: it runs no Kubernetes. Its clusters are simulated
//! in memory (phases on configurable timers, an in-memory object store with server-side-apply
//! semantics, Jobs that "run" by a documented convention, see [`jobs`]); what is real is what a
//! client can check: service-auth JWTs verified against the caller's DID document from the
//! local PLC, per-account isolation, `did:web` discovery of its endpoint, kubeconfigs with
//! client certificates signed by a per-cluster CA, and each cluster's nodes as one Infra record
//! in the gateway's own account on the local PDS (plan 0031).
//!
//! Map: [`config`] (what a start takes), [`did`] (its DID document), [`auth`] (service-auth
//! checks), [`xrpc`] (error answers), [`clusters`] (accounts, clusters, lifecycle, frames),
//! [`nodes`] (the Infra records), [`pki`] (CAs and kubeconfigs), [`apply`] (server-side apply),
//! [`jobs`] (Job runs and logs), [`routes`] (the XRPC handlers), [`stream`] (subscribeClusters).
//!
//! Invariants: every method authenticates before it reads input; an account sees and touches
//! only its own clusters; no token, key or kubeconfig is logged.

pub mod apply;
pub mod auth;
pub mod clusters;
pub mod config;
pub mod did;
pub mod jobs;
pub mod nodes;
pub mod pki;
pub mod routes;
pub mod stream;
pub mod xrpc;

use std::net::SocketAddr;
use std::sync::Arc;

use swdesk_sandbox_peer::{BindError, Loopback, Serving};
use url::Url;

pub use config::{Config, GatewayAccount, HostileStream, Timings};

/// Why the gateway did not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The loopback port could not be bound.
    #[error("the gateway could not listen on {address}: {source}")]
    Bind {
        /// Where it tried.
        address: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// The gateway account could not sign in to its PDS.
    #[error("the gateway account could not sign in: {0}")]
    Account(#[from] nodes::NodesError),
}

impl From<BindError> for StartError {
    fn from(BindError { address, source }: BindError) -> Self {
        Self::Bind { address, source }
    }
}

/// A started gateway: its URL and DID; dropping it (or [`RunningGateway::stop`]) stops it.
#[derive(Debug)]
pub struct RunningGateway {
    /// `http://localhost:<port>`.
    pub url: Url,
    /// `did:web:localhost%3A<port>`.
    pub did: String,
    /// The DID of the gateway's own account on the PDS (where the Infra records are).
    pub account_did: String,
    gateway: Arc<clusters::Gateway>,
    serving: Serving,
}

impl RunningGateway {
    /// Simulates the node of `owner`'s cluster `cluster` that runs `contract` lost (its
    /// NodeClaim gone, the Infra still holding the contract) or, with `lost` false, rejoined:
    /// the drift a desk must show, and clear.
    pub fn set_node_lost(
        &self,
        owner: &str,
        cluster: &str,
        contract: &str,
        lost: bool,
    ) -> Result<(), String> {
        self.gateway
            .set_node_lost(owner, cluster, contract, lost)
            .map_err(|refusal| format!("{}: {}", refusal.error, refusal.message))
    }

    /// Stops serving and waits until the listener is closed.
    pub async fn stop(mut self) {
        self.gateway.close();
        self.serving.stop().await;
    }
}

impl Drop for RunningGateway {
    fn drop(&mut self) {
        self.gateway.close();
    }
}

/// Starts a gateway on `127.0.0.1` (the port from `config`, 0 for any free one).
pub async fn start(config: Config) -> Result<RunningGateway, StartError> {
    let loopback = Loopback::bind(config.port).await?;
    let (url, did) = (loopback.url.clone(), loopback.did.clone());
    let records = nodes::InfraRecords::sign_in(&config.account).await?;
    let account_did = records.account_did().to_owned();
    let shared = Arc::new(clusters::Gateway::new(
        config,
        did.clone(),
        url.clone(),
        records,
    ));
    let serving = loopback.serve(routes::router(Arc::clone(&shared)), "the sandbox gateway");
    Ok(RunningGateway {
        url,
        did,
        account_did,
        gateway: shared,
        serving,
    })
}
