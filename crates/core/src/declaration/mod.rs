//! A deployment's declaration: its `description` and `contracts`, the part of an object that
//! is also its record's. This module validates declarations ([`validate`]) and hashes them
//! ([`hash`]); the hash is what the sync decision compares.

pub mod hash;

pub use hash::DeclarationHash;
