//! Integration tests of the sandbox bidder against the real local PDS and PLC (never fakes):
//! a requester written here (a signed-in test account writing its records with
//! `createRecord` and minting service auth with `getServiceAuth`) drives the market flow
//! against bidders started in-process.

// Test suites reach the sandbox's services directly, as any public reader would.
#![allow(clippy::disallowed_methods)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod auction;
mod auth;
mod callbacks;
mod public_requester;
mod release;
mod support;
