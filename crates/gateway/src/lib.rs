//! The cluster gateway client: the [`Gateway`] port (every `com.publicdomainrelay.temp.cluster.*`
//! and `computer.socialweb.k8s.*` method, SPEC §4) and [`GatewayClient`], its XRPC adapter.
//!
//! Map: [`port`] (the trait, what callers and fakes implement), [`client`] (the real client:
//! the endpoint from the gateway's `did:web` document, a service-auth token per call minted by
//! the owner's PDS and cached until shortly before `exp`), [`subscription`]
//! (`subscribeClusters` over WebSocket: DAG-CBOR frames, snapshot then changes, reconnect with
//! backoff and a fresh snapshot; its bounds in `subscription/bounds.rs`, its texts cleaned in
//! `subscription/clean.rs`), [`error`] (typed errors for every documented error and for
//! transport failures), [`kubeconfig`] (saving one with mode 0600, reading its server and its
//! certificate's validity).
//!
//! Nothing here knows of Tauri; tokens and kubeconfigs never reach a log or a `Debug` output.

pub mod client;
mod connection;
pub mod error;
pub mod kubeconfig;
pub mod port;
pub mod subscription;

pub use client::{DEFAULT_GATEWAY_DID, GatewayClient, GatewayClientConfig};
pub use error::{ErrorName, GatewayError};
pub use port::{Gateway, KubeconfigLifetime};
pub use subscription::{Breach, ClusterFeed, FeedEvent, FeedLimits};
