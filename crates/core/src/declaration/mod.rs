//! A deployment's declaration: its `description` and `contracts`, the part of an object that
//! is also its record's. [`rules`] validates a record (lexicon and semantic rules together),
//! [`object`] an object declaration, [`status`] a record's status, [`index`] the index record at
//! `self`; [`hash`] hashes a declaration for the sync decision; [`secrets`] refuses a
//! `userData` that looks like it holds a secret (it is published in clear text); [`genesis`]
//! lists the fields only creation sets; `known` is the `knownValues` rule they share, and
//! [`types`] the small values (the hash, a genesis change) the object kinds and the sync
//! decision carry, below all of them.
//! The validators report in the lexicon crate's `Problem`, every problem at once.

pub mod genesis;
pub mod hash;
pub mod index;
mod known;
pub mod object;
pub mod rules;
pub mod secrets;
pub mod status;
pub mod types;

pub use genesis::{genesis_changes, lifetime_change_problems};
pub use hash::{Declaration, HashError};
pub use index::index_record_problems;
pub use object::{DeclaredObject, object_problems, parse_object};
pub use rules::record_problems;
pub use secrets::user_data_secret_problems;
pub use types::{DeclarationHash, GenesisChange};
