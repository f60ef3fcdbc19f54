//! The domain of swdesk's embedded core controller, with no I/O: declaration validation and
//! hashing, the sync decision, rkeys, the index at `self`, the contract lifecycle and the phase
//! rollup. Every rule here is a pure function the controller calls; time comes in as a
//! [`timestamp::Timestamp`] parameter, never from a clock.

pub mod aturi;
pub mod compute;
pub mod declaration;
pub mod index;
pub mod infra;
pub mod lifecycle;
pub mod name;
mod newtype;
pub mod object;
pub mod progress;
pub mod record;
pub mod rkey;
pub mod rollup;
pub mod secret;
pub mod sync;
pub mod timestamp;
