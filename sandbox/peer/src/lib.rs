//! What every loopback peer of the sandbox shares (the sandbox gateway, the sandbox bidder):
//! service-auth checks of incoming calls ([`auth`]), XRPC error answers ([`xrpc`]), serving on
//! loopback with a graceful stop ([`serve`]), the peer's own account on the sandbox PDS
//! ([`account`]), and the process protocol of a ready line on stdout and a stop when stdin
//! closes ([`process`]).
//!
//! Invariants: every peer listens on `127.0.0.1` only and names itself
//! `did:web:localhost%3A<port>`; a refusal is always `{error, message}` with its HTTP status;
//! no token or password is logged or shown by `Debug`.

pub mod account;
pub mod auth;
pub mod process;
pub mod serve;
pub mod xrpc;

pub use account::{PeerAccount, SandboxJoinError, sandbox_identity};
pub use serve::{BindError, Loopback, Serving};
pub use xrpc::Refusal;
