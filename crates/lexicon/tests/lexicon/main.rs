//! The one integration test binary of `swdesk-lexicon`: generated code drift, record round trips.

mod drift;
mod records;
