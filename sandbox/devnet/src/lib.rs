//! The local sandbox network: real peers on loopback, plainly a sandbox. Today it holds the
//! atproto PDS ([`pds`]): a real `@atproto/pds` with an in-memory PLC directory, run by the
//! Node harness in `sandbox/devnet/pds/`, and [`authorize`]: a person at its authorization page,
//! played by Chromium; [`market_peer`]: the public compute market's own dispatcher, bidder and requester;
//! [`canary`]: a listener counting the connections a hostile peer failed to make;
//! [`mailbox`]: the mail the PDS sends (codes of PLC operations), kept in a folder;
//! [`fault_proxy`]: a proxy on the PDS's public port injecting 429s and 5xx on a schedule;
//! [`ports`]: free loopback ports for them, drawn where no outgoing connection takes one.
//! Tests (through `swdesk-testkit`) and `cargo xtask run` use them; nothing here is a stub: records written to it are real records in
//! a real repo, and sign-in goes through its real OAuth pages.

pub mod authorize;
pub mod canary;
pub mod fault_proxy;
pub mod mailbox;
pub mod market_peer;
pub mod pds;
pub mod ports;

pub use authorize::{Decision, authorize};
pub use fault_proxy::{Fault, FaultProxy, Hold};
pub use mailbox::Mail;
pub use market_peer::{BidderMode, MarketPeerError, PublicMarketPeer, RequesterResult};
pub use pds::{Account, PdsInfo, SandboxPds, SandboxPdsError, Storage, holds_bytes};
