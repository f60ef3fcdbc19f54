//! The owner's atproto side of swdesk: who they are, how they sign in, where their session
//! lives, and how the app reads and writes their repo.
//!
//! Map:
//! - [`identity`]: handle → DID → DID document → PDS, each hop its own error;
//! - [`oauth`]: sign-in for a native app (PAR + PKCE + DPoP, loopback redirect, scopes);
//! - [`keychain`]: the session in the OS keychain, and nowhere else;
//! - [`agent`]: the signed-in XRPC client (DPoP nonces, serialized refresh, sign-out);
//! - [`plc`]: the owner's market key in their `did:plc` document (the PDS's emailed code, its
//!   PLC operation calls, the live document read back);
//! - [`firehose`]: the owner's repo followed live (`subscribeRepos`), every commit verified;
//! - [`proof`]: `sync.getRecord` proofs checked (block hashes, the signed commit, the tree path);
//! - [`repo`]: `PdsRepo`, the `RecordRepo` port of `swdesk-kernel` over XRPC;
//! - [`retry`]: the kernel's retry rule read off HTTP answers (`Retry-After`, 429, 5xx), jittered;
//! - [`service_auth`]: service-auth tokens, minted with a cache and verified against DID keys;
//! - [`attestation`]: inline `network.attested.signature`s on market records: the key, signing,
//!   verifying;
//! - [`websocket`]: what the app's WebSocket readers share (pings, policy closes, failures named);
//! - [`jwt`], [`did_key`], [`xrpc`]: the formats underneath.
//!
//! Nothing here knows of Tauri; the shell and the tests wire it.

pub mod agent;
pub mod attestation;
pub mod did_key;
pub mod firehose;
pub mod identity;
pub mod jwt;
pub mod keychain;
pub mod oauth;
pub mod plc;
pub mod proof;
pub mod repo;
pub mod retry;
pub mod service_auth;
pub mod websocket;
pub mod xrpc;

pub use agent::Agent;
pub use oauth::{
    Account, Browser, ClientKind, OAuthClient, OAuthConfig, OAuthError, SystemBrowser,
};
pub use repo::PdsRepo;
