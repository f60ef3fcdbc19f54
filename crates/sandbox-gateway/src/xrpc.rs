//! XRPC error answers: `{error, message}` with the HTTP status the error calls for (400 for
//! refused input and declared errors, 401 for authentication). Handlers return
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
        Self {
            status: StatusCode::BAD_REQUEST,
            error: error.to_owned(),
            message: message.into(),
        }
    }

    /// A 401 (authentication).
    pub fn unauthorized(error: &str, message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::UNAUTHORIZED,
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
        .map_err(|error| Refusal::bad("InvalidRequest", format!("the input is not valid: {error}")))
}

/// Whether `name` is a DNS-1123 label, and if not, why.
pub fn dns_label_problem(name: &str) -> Option<String> {
    let valid_chars = name
        .bytes()
        .all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'-');
    let ends_ok = !name.starts_with('-') && !name.ends_with('-');
    if (1..=63).contains(&name.len()) && valid_chars && ends_ok {
        return None;
    }
    Some(format!(
        "{name:?} is not a DNS-1123 label: use 1-63 lower-case letters, digits and '-', starting and ending with a letter or digit"
    ))
}

/// `name` as a cluster name, or `InvalidName`.
pub fn cluster_name(name: &str) -> Result<&str, Refusal> {
    match dns_label_problem(name) {
        None => Ok(name),
        Some(problem) => Err(Refusal::bad("InvalidName", problem)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_names_are_dns_labels() {
        for good in ["a", "alpha-1", &"a".repeat(63)] {
            assert_eq!(dns_label_problem(good), None, "{good}");
        }
        for bad in ["", "-a", "a-", "A", "a_b", "a.b", &"a".repeat(64)] {
            assert!(dns_label_problem(bad).is_some(), "{bad}");
        }
    }
}
