//! XRPC error answers: `{error, message}` with the HTTP status the error calls for (400 for
//! refused input and declared errors, 401 for authentication, 403 when the caller is not the
//! party the protocol allows, 502 when a PDS the peer needed failed it). Handlers return
//! `Result<T, Refusal>`; [`answer`] turns it into a response.

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

    /// A 502 `UpstreamFailure`: a PDS the peer needed did not answer as it should.
    pub fn upstream(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_GATEWAY, "UpstreamFailure", message)
    }

    /// The same refusal, its message prefixed with what it was about.
    pub fn about(self, context: &str) -> Self {
        Self {
            message: format!("{context}: {}", self.message),
            ..self
        }
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn each_refusal_has_its_status_and_name() {
        let cases = [
            (Refusal::bad("InvalidName", "x"), 400, "InvalidName"),
            (Refusal::invalid("x"), 400, "InvalidRequest"),
            (Refusal::unauthorized("BadJwt", "x"), 401, "BadJwt"),
            (Refusal::forbidden("x"), 403, "Forbidden"),
            (Refusal::upstream("x"), 502, "UpstreamFailure"),
        ];
        for (refusal, status, name) in cases {
            assert_eq!(
                (refusal.status.as_u16(), refusal.error.as_str()),
                (status, name)
            );
        }
    }

    #[test]
    fn the_body_is_error_and_message() {
        let body = Refusal::forbidden("not yours").body();
        assert_eq!(
            body,
            serde_json::json!({"error": "Forbidden", "message": "not yours"})
        );
    }

    #[test]
    fn an_answer_carries_the_refusal_status() {
        let refused = answer::<()>(Err(Refusal::unauthorized("AuthMissing", "no token")));
        assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(answer(Ok(serde_json::json!({}))).status(), StatusCode::OK);
    }

    #[test]
    fn a_malformed_body_is_an_invalid_request() {
        let refusal = parse_body::<serde_json::Value>(b"{not json").unwrap_err();
        assert_eq!(refusal.error, "InvalidRequest");
        assert!(refusal.message.starts_with("the input is not valid: "));
        let parsed: serde_json::Value = parse_body(br#"{"a":1}"#).unwrap();
        assert_eq!(parsed["a"], 1);
    }
}
