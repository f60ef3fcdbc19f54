//! The words both of swdesk's domains (the deployment rules in `swdesk-core`, the market
//! requester's decisions) are written in, with no I/O, no async and no clock: time comes in as
//! a [`timestamp::Timestamp`] parameter (`now`). Nothing here knows a deployment's rules or
//! the auction's; both stand on this crate, and Cargo refuses it an import of either.
//!
//! Map:
//! - names and keys: [`name`] (DNS-1123 labels), [`rkey`] (record keys and their succession),
//!   [`uri`] (record URIs), [`deployment_kind`] (Infra and EphemeralInfra, their collections);
//! - objects: [`object`] (metadata, uids, the generic `Object`);
//! - phases and what the world says: [`rollup`] (a contract's phase, the object phase rolled
//!   up from them), [`drift`] (what the world says that the records do not);
//! - ports: [`repo`] (`RecordRepo`, the owner's atproto repo), [`timestamp`] (time values and
//!   the `Clock` port), [`secret`] (secrets by reference, a value in memory, the `SecretVault`
//!   that reads values);
//! - faults: [`retry`] (the one retry rule: which failures may heal, backoff with jitter,
//!   `Retry-After`, deadlines).

pub mod deployment_kind;
pub mod drift;
pub mod name;
mod newtype;
pub mod object;
pub mod repo;
pub mod retry;
pub mod rkey;
pub mod rollup;
pub mod secret;
pub mod timestamp;
pub mod uri;
