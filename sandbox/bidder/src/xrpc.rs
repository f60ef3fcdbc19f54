//! XRPC error answers: the sandbox peers' shared [`Refusal`] (`{error, message}` with the HTTP
//! status the error calls for: 400 refused input, 401 authentication, 403 not the party the
//! protocol allows, 502 a PDS that failed the bidder), [`answer`] and [`parse_body`].

pub use swdesk_sandbox_peer::xrpc::{Refusal, answer, parse_body};
