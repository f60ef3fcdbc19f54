//! The requester side of the compute market (issue 8, `market.md`): [`RequesterMarket`] implements
//! the auction's `Market` port over the owner's repo (`RecordRepo`), the other parties ([`peers`]:
//! the relay and the bidders' XRPC services, called with service auth) and an injected attestation
//! key (the caller keeps it in the keychain: `swdesk_api::market_key`).
//!
//! Map: [`requester`] (the step driver: one step of the durable flow per `advance`), [`collector`]
//! (the answers to an RFP while its window is open), [`guest`] (the guest's events about our
//! receipt), [`issuer`] (when the owner's records name the owner as their signatures' issuer: the
//! owner's DID document lists our key), [`keys`] (the attestation key published in the owner's
//! repo, and bidders' keys checked against theirs), [`peers`] (the port to the other parties and
//! its HTTP adapter), [`sealing`] (a guest's key and secrets sealed to it), [`service_ref`]
//! (service references in both dialects: `did:…#id` and plain URLs), [`status`] (the contract
//! status a flow shows), [`winner_stream`] (the winning bidders' repos followed live while a
//! contract waits for its guest, waking the wait).
//!
//! Invariants: every decision is the auction's (`swdesk_auction`); this crate only does what the
//! flow says and reports what happened. No token or key appears in a log or `Debug`.

pub mod collector;
pub mod guest;
pub mod issuer;
pub mod keys;
pub mod peers;
pub mod requester;
pub mod sealing;
pub mod service_ref;
pub mod status;
pub mod winner_stream;

pub use peers::{HttpPeers, OfferingSource, PeerError, Peers, ServiceTokens};
pub use requester::{RequesterMarket, Settings};
pub use swdesk_kernel::timestamp::SystemClock;
