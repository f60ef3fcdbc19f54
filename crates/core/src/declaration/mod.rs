//! A deployment's declaration: its `description` and `contracts`, the part of an object that
//! is also its record's. [`rules`] validates a record (lexicon and semantic rules together),
//! [`object`] an object declaration; [`hash`] hashes a declaration for the sync decision.
//! Both validators report in the lexicon crate's `Problem`, every problem at once.

pub mod hash;
pub mod object;
pub mod rules;

pub use hash::{Declaration, DeclarationHash, HashError};
pub use object::{DeclaredObject, lifetime_change_problems, object_problems, parse_object};
pub use rules::record_problems;
