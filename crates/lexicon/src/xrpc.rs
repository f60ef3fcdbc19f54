//! Traits tying each generated XRPC method (a unit struct named after the method) to its NSID
//! and its parameter, body, message and error types, so a client can be generic over methods:
//! `client.query::<list_clusters::ListClusters>(params)`.
//!
//! Invariants: `NSID` equals the lexicon id; a method without parameters or a body uses `()`;
//! a method without declared errors uses [`UndeclaredError`]. Transport is not here: this crate
//! does no I/O.

use std::fmt::{Debug, Display};

use serde::Serialize;
use serde::de::DeserializeOwned;

/// An XRPC query (HTTP GET).
pub trait Query {
    /// The method's NSID.
    const NSID: &'static str;
    /// Query-string parameters.
    type Params: Serialize + DeserializeOwned + Debug + Clone;
    /// The JSON response body.
    type Output: Serialize + DeserializeOwned + Debug + Clone;
    /// The declared errors, by the response's `error` name.
    type Error: for<'a> From<&'a str> + Display + Debug;
}

/// An XRPC procedure (HTTP POST).
pub trait Procedure {
    /// The method's NSID.
    const NSID: &'static str;
    /// Query-string parameters.
    type Params: Serialize + DeserializeOwned + Debug + Clone;
    /// The JSON request body.
    type Input: Serialize + DeserializeOwned + Debug + Clone;
    /// The JSON response body.
    type Output: Serialize + DeserializeOwned + Debug + Clone;
    /// The declared errors, by the response's `error` name.
    type Error: for<'a> From<&'a str> + Display + Debug;
}

/// An XRPC subscription (a WebSocket event stream).
pub trait Subscription {
    /// The method's NSID.
    const NSID: &'static str;
    /// Query-string parameters of the upgrade request.
    type Params: Serialize + DeserializeOwned + Debug + Clone;
    /// One message of the stream (a union tagged by `$type`).
    type Message: Serialize + DeserializeOwned + Debug + Clone;
    /// The declared errors, by the error frame's `error` name.
    type Error: for<'a> From<&'a str> + Display + Debug;
}

/// The error of a method that declares none: just the name the server answered with.
#[derive(Debug, Clone, PartialEq, Eq, Hash, thiserror::Error)]
#[error("{0}")]
pub struct UndeclaredError(pub String);

impl UndeclaredError {
    /// The `error` name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<&str> for UndeclaredError {
    fn from(name: &str) -> Self {
        Self(name.to_owned())
    }
}
