//! Answers read under a size cap. A peer's answer is read chunk by chunk and the read stops
//! (with an error) as soon as it passes the cap of its kind of call, so an enormous or endless
//! body costs at most the cap in memory; the total timeout of [`crate::Outbound`] bounds its
//! time.

use serde::de::DeserializeOwned;
use serde_json::Value;

/// The most bytes an answer of one kind of call may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit(pub usize);

impl Limit {
    /// A record, a bid, a receipt, an XRPC answer about one thing: 1 MiB.
    pub const RECORD: Self = Self(1024 * 1024);
    /// A page of a list (`listRecords`, `listReposByCollection`), a gateway answer: 8 MiB.
    pub const LIST: Self = Self(8 * 1024 * 1024);
    /// A DID document, OAuth metadata, a token answer, a handle: 64 KiB.
    pub const DOCUMENT: Self = Self(64 * 1024);
    /// An error answer: 16 KiB (only its `error` and `message` are read).
    pub const ERROR: Self = Self(16 * 1024);
}

/// Why an answer could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BodyError {
    /// It is longer than its kind of call allows.
    #[error("the answer is larger than {0} bytes")]
    TooLarge(usize),
    /// The connection failed or timed out while it was read.
    #[error("the answer could not be read: {0}")]
    Transport(String),
    /// It is not the JSON expected.
    #[error("the answer is not the JSON expected: {0}")]
    NotJson(String),
}

/// The body of `response`, at most `limit` bytes.
pub async fn read_bytes(response: reqwest::Response, limit: Limit) -> Result<Vec<u8>, BodyError> {
    read_bytes_observed(response, limit, |_, _| {}).await
}

/// The body of `response`, at most `limit` bytes, telling `progress` after each chunk the bytes
/// received so far and the length the answer announced (a download's progress bar).
pub async fn read_bytes_observed(
    mut response: reqwest::Response,
    limit: Limit,
    mut progress: impl FnMut(u64, Option<u64>),
) -> Result<Vec<u8>, BodyError> {
    let Limit(max) = limit;
    let announced = response.content_length();
    if announced.is_some_and(|length| length > max as u64) {
        return Err(BodyError::TooLarge(max));
    }
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|error| BodyError::Transport(transport_text(error)))?
    {
        if body.len() + chunk.len() > max {
            return Err(BodyError::TooLarge(max));
        }
        body.extend_from_slice(&chunk);
        progress(body.len() as u64, announced);
    }
    Ok(body)
}

/// The body of `response` as `T`, at most `limit` bytes.
pub async fn read_json<T: DeserializeOwned>(
    response: reqwest::Response,
    limit: Limit,
) -> Result<T, BodyError> {
    let bytes = read_bytes(response, limit).await?;
    serde_json::from_slice(&bytes).map_err(|error| BodyError::NotJson(error.to_string()))
}

/// An error answer's JSON (`{"error", "message"}`), or `null` when it has none readable.
pub async fn read_error(response: reqwest::Response) -> Value {
    read_json(response, Limit::ERROR)
        .await
        .unwrap_or(Value::Null)
}

fn transport_text(error: reqwest::Error) -> String {
    if error.is_timeout() {
        "timed out".to_owned()
    } else {
        error.without_url().to_string()
    }
}
