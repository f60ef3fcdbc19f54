//! Record and XRPC types for the NSIDs swdesk reads and writes, generated from the lexicon JSON
//! in `lexicons/` by `swdesk-lexgen` (a drift test fails when they are stale), with lexicon
//! validation, identifier syntax and local record CIDs. No I/O: everything works on values in
//! memory; the lexicon JSON is embedded at compile time.
//!
//! Map:
//! - [`computer`], [`com`], [`network`]: the generated modules, one per NSID
//!   (`computer::socialweb::infra::{Infra, Contract, ...}`, `com::publicdomainrelay::temp::cluster::*`,
//!   the compute market's `com::publicdomainrelay::temp::{market, compute}::*`,
//!   `network::attested::signature`, `com::atproto::repo::strong_ref`);
//!   [`Record`] converts a record type to and from its stored JSON (with `$type`); [`xrpc`] ties
//!   each method to its types; [`Redacted`] hides credentials from `Debug`.
//! - [`validate`]: checks values against the lexicons, reporting every [`Problem`] at once.
//! - [`syntax`]: DIDs, handles, NSIDs, at-uris ([`syntax::AtUri`]), record keys, TIDs, datetimes, ...
//! - [`cid`], [`data_model`]: the JSON data model, canonical DAG-CBOR and record CIDs;
//!   [`attestation`]: the attestation CIDs inline signatures sign and remote proofs bind.
//! - [`schema`]: the lexicon document format itself.

pub mod attestation;
mod bytes;
pub mod cid;
pub mod data_model;
#[rustfmt::skip]
mod generated;
mod macros;
pub mod problem;
mod record;
mod redacted;
pub mod schema;
pub mod syntax;
pub mod text;
mod union;
pub mod validate;
pub mod xrpc;

pub use bytes::Bytes;
pub use generated::{com, computer, network};
pub use macros::UnknownValue;
pub use problem::Problem;
pub use record::{Record, RecordError};
pub use redacted::Redacted;

pub use cid::{dag_cbor_bytes, record_cid};
pub use computer::socialweb::ephemeral_infra::EphemeralInfra;
pub use computer::socialweb::infra::Infra;
