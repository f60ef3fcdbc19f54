//! A deployment's declaration: its `description` and `contracts`, the part of an object that
//! is also its record's. [`rules`] validates a record (lexicon and semantic rules together),
//! [`object`] an object declaration, [`status`] a record's status, [`index`] the index record at
//! `self`; [`hash`] hashes a declaration for the sync decision.
//! The validators report in the lexicon crate's `Problem`, every problem at once.

pub mod hash;
pub mod index;
pub mod object;
pub mod rules;
pub mod status;

pub use hash::{Declaration, DeclarationHash, HashError};
pub use index::index_record_problems;
pub use object::{DeclaredObject, lifetime_change_problems, object_problems, parse_object};
pub use rules::record_problems;
