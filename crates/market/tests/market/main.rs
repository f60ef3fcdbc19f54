//! Integration tests of the requester market against the real local PDS and local bidders.

#![allow(clippy::unwrap_used)]

mod auction;
mod audience;
mod drift;
mod ends;
mod headless;
mod hostile;
mod lifecycle;
mod public_peer;
mod restart;
mod secrets;
mod strict_peer;
mod support;
mod winner;
