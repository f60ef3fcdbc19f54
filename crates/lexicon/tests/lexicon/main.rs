//! The one integration test binary of `swdesk-lexicon`: generated code drift, record round trips.

mod cids;
mod drift;
mod market;
mod records;
mod syntax;
mod validation;
mod xrpc;
