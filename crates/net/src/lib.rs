//! The one outbound HTTP policy of the app. Everything that talks to another party (the PDS,
//! the PLC, DID documents, OAuth servers, bidders, grant endpoints, the cluster gateway and its
//! WebSocket) goes through an [`Outbound`] built once from the owner's [`NetPolicy`]:
//! - [`policy`]: which URLs may be called and which resolved addresses a name may reach;
//! - [`address`]: which IP addresses are the public internet;
//! - [`outbound`]: the client: checked URLs, checked addresses at connect time, redirects
//!   re-checked and limited, timeouts, no environment proxy;
//! - [`body`]: answers read under a cap per kind of call.
//!
//! This crate knows nothing of atproto; it is the floor every network crate stands on.

pub mod address;
pub mod body;
pub mod outbound;
pub mod policy;

pub use body::{BodyError, Limit, read_bytes, read_error, read_json};
pub use outbound::{Dns, Outbound, SocketError, SystemDns};
pub use policy::{NetPolicy, Refused, refusal_in};
