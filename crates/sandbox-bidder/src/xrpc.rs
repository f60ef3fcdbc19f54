//! XRPC error answers: `{error, message}` with the HTTP status the error calls for (400 for
//! refused input and declared errors, 401 for authentication, 403 when the caller is not the
//! party the protocol allows). Handlers return `Result<T, Refusal>`; [`answer`] turns it into a
//! response. (The shape is the sandbox gateway's `xrpc.rs`, copied in its minimal part.)

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// A refused call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The HTTP status.
    pub status: StatusCode,
    /// The XRPC error name.
    pub error: String,
    /// What went wrong, in words.
    pub message: String,
}

impl Refusal {
    /// A 400 with a declared error name.
    pub fn bad(error: &str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, error, message)
    }

    /// A 400 `InvalidRequest`: malformed, or its records do not verify.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::bad("InvalidRequest", message)
    }

    /// A 401 (authentication).
    pub fn unauthorized(error: &str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, error, message)
    }

    /// A 403 `Forbidden`: the caller is not the party allowed to do this.
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, "Forbidden", message)
    }

    /// A 502 `UpstreamFailure`: a PDS the bidder needed did not answer as it should.
    pub fn upstream(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_GATEWAY, "UpstreamFailure", message)
    }

    fn new(status: StatusCode, error: &str, message: impl Into<String>) -> Self {
        Self {
            status,
            error: error.to_owned(),
            message: message.into(),
        }
    }

    /// The JSON body.
    pub fn body(&self) -> serde_json::Value {
        serde_json::json!({"error": self.error, "message": self.message})
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        (self.status, Json(self.body())).into_response()
    }
}

/// The response of a handler's result.
pub fn answer<T: Serialize>(result: Result<T, Refusal>) -> Response {
    match result {
        Ok(output) => Json(output).into_response(),
        Err(refusal) => refusal.into_response(),
    }
}

/// A JSON request body as `T`, or `InvalidRequest` naming what is wrong.
pub fn parse_body<T: DeserializeOwned>(body: &[u8]) -> Result<T, Refusal> {
    serde_json::from_slice(body)
        .map_err(|error| Refusal::invalid(format!("the input is not valid: {error}")))
}
