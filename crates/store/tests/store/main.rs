//! The store against a real SQLite file in a temporary directory: objects and versions,
//! finalizers, garbage collection through owner references, watch events, queries, schema
//! migrations, and a crash in the middle of a stream of writes.

// Test helpers fail their test by panicking, as the tests themselves do.
#![allow(clippy::unwrap_used)]

mod collection;
mod durability;
mod finalizers;
mod migrations;
mod objects;
mod queries;
mod support;
mod turn;
mod watch;
