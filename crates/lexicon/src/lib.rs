//! Record and XRPC types for the NSIDs swdesk reads and writes, generated from the lexicon JSON
//! in `lexicons/` (by `swdesk-lexgen`; the drift test fails when they are stale), with the shared
//! [`Problem`] type. No I/O: everything here works on values in memory.
//!
//! Map: [`computer`] and [`com`] hold the generated modules, one per NSID
//! (`computer::socialweb::infra::{Infra, Contract, ...}`); [`Record`] converts a record type to and
//! from its stored JSON; [`xrpc`] ties methods to their types; [`schema`] is the lexicon format.

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
mod union;
pub mod validate;
pub mod xrpc;

pub use generated::{com, computer};
pub use macros::UnknownValue;
pub use problem::Problem;
pub use record::{Record, RecordError};
pub use redacted::Redacted;

pub use cid::{dag_cbor_bytes, record_cid};
pub use computer::socialweb::ephemeral_infra::EphemeralInfra;
pub use computer::socialweb::infra::Infra;
