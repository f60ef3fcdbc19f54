//! XRPC requests and errors: a query (`GET`, parameters in the URL) or a procedure (`POST`,
//! a JSON body) to `<service>/xrpc/<nsid>`, and the error every failed call becomes: the
//! server's `{error, message}` with its HTTP status, a transport failure, or a session that
//! can no longer authenticate.

use reqwest::{Method, StatusCode};
use serde_json::Value;
use url::Url;

use swdesk_lexicon::text::peer_text;
use swdesk_net::{BodyError, Limit, Outbound, Refused, read_bytes, read_error};

use crate::oauth::OAuthError;
use crate::retry::{Fault, transient_status};

/// The most of a server's error name kept (lexicon error names are short identifiers).
const ERROR_NAME_BYTES: usize = 64;
/// The most of a server's error message kept: enough for any honest explanation.
pub const ERROR_MESSAGE_BYTES: usize = 512;

/// One XRPC call.
#[derive(Debug, Clone)]
pub struct XrpcRequest {
    /// The method's NSID.
    pub nsid: &'static str,
    /// Query parameters (queries; procedures may have some too).
    pub params: Vec<(&'static str, String)>,
    /// The JSON input of a procedure (`null` for one without input); `None` makes this a
    /// query.
    pub body: Option<Value>,
}

impl XrpcRequest {
    /// A query with `params`.
    pub fn query(nsid: &'static str, params: Vec<(&'static str, String)>) -> Self {
        Self {
            nsid,
            params,
            body: None,
        }
    }

    /// A procedure with a JSON `body`.
    pub fn procedure(nsid: &'static str, body: Value) -> Self {
        Self {
            nsid,
            params: Vec::new(),
            body: Some(body),
        }
    }

    /// A procedure that takes no input (`requestPlcOperationSignature`): posted with no body.
    pub fn procedure_without_input(nsid: &'static str) -> Self {
        Self::procedure(nsid, Value::Null)
    }

    /// The JSON body to send, when there is one (a procedure without input sends none).
    pub fn json_body(&self) -> Option<&Value> {
        self.body.as_ref().filter(|body| !body.is_null())
    }

    /// `GET` for a query, `POST` for a procedure.
    pub fn method(&self) -> Method {
        if self.body.is_some() {
            Method::POST
        } else {
            Method::GET
        }
    }

    /// The URL of this call at `service`.
    pub fn url(&self, service: &Url) -> Result<Url, XrpcError> {
        let mut url = service
            .join(&format!("/xrpc/{}", self.nsid))
            .map_err(|error| XrpcError::Transport {
                nsid: self.nsid,
                reason: format!("{service} is not a service URL: {error}"),
            })?;
        if !self.params.is_empty() {
            let mut query = url.query_pairs_mut();
            for (name, value) in &self.params {
                query.append_pair(name, value);
            }
        }
        Ok(url)
    }
}

/// Why an XRPC call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum XrpcError {
    /// The server answered with an error.
    #[error("{nsid} failed: {error}{}", if message.is_empty() { String::new() } else { format!(": {message}") })]
    Server {
        /// The method.
        nsid: &'static str,
        /// The HTTP status.
        status: u16,
        /// The XRPC error name (`InvalidSwap`, `RecordNotFound`, …).
        error: String,
        /// The server's message.
        message: String,
        /// The server's `Retry-After`, when it asked the client to wait.
        retry_after: Option<std::time::Duration>,
    },
    /// The call did not reach the server or its answer was cut short.
    #[error("{nsid} did not reach the server: {reason}")]
    Transport {
        /// The method.
        nsid: &'static str,
        /// What went wrong.
        reason: String,
    },
    /// The network policy forbids the call (the service is not an address it may reach).
    #[error("{nsid} was not sent: {reason}")]
    Refused {
        /// The method.
        nsid: &'static str,
        /// Which rule refused it.
        reason: String,
    },
    /// The answer is too large or not JSON.
    #[error("{nsid} answered what cannot be read: {reason}")]
    Unreadable {
        /// The method.
        nsid: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// The session cannot authenticate the call any more.
    #[error(transparent)]
    Session(#[from] OAuthError),
}

impl XrpcError {
    /// The error of a non-success answer with `headers` (its `Retry-After`) and `body`.
    pub fn from_answer(
        nsid: &'static str,
        status: StatusCode,
        headers: &reqwest::header::HeaderMap,
        body: &Value,
    ) -> Self {
        let retry_after = match crate::retry::fault_of(status, headers) {
            Fault::Transient { retry_after } => retry_after,
            Fault::Permanent => None,
        };
        Self::Server {
            nsid,
            status: status.as_u16(),
            error: body["error"].as_str().map_or_else(
                || status.to_string(),
                |name| peer_text(name, ERROR_NAME_BYTES),
            ),
            message: peer_text(
                body["message"].as_str().unwrap_or_default(),
                ERROR_MESSAGE_BYTES,
            ),
            retry_after,
        }
    }

    /// Whether the same call may succeed later, and how long the server asked to wait: the
    /// network, a busy or failing server (the kernel's retry rule), or a session whose refresh did
    /// not reach its server.
    pub fn fault(&self) -> Fault {
        match self {
            Self::Server {
                status,
                retry_after,
                ..
            } if transient_status(*status) => Fault::Transient {
                retry_after: *retry_after,
            },
            Self::Transport { .. } => Fault::TRANSIENT,
            Self::Session(error) => error.fault(),
            _ => Fault::Permanent,
        }
    }

    /// The error of a request that did not complete: refused when it cannot heal (it could
    /// not be built, or the policy refused where it led: [`crate::retry::failure_of`]).
    pub fn transport(nsid: &'static str, error: &reqwest::Error) -> Self {
        let reason = error_chain(error);
        match crate::retry::failure_of(error).fault() {
            Fault::Permanent => Self::Refused { nsid, reason },
            Fault::Transient { .. } => Self::Transport { nsid, reason },
        }
    }

    /// The error of a call the network policy forbids.
    pub fn refused(nsid: &'static str, refused: &Refused) -> Self {
        Self::Refused {
            nsid,
            reason: refused.to_string(),
        }
    }

    /// The XRPC error name, when the server gave one.
    pub fn name(&self) -> Option<&str> {
        match self {
            Self::Server { error, .. } => Some(error),
            _ => None,
        }
    }
}

/// A reqwest error with its causes, never its URL's query (it may carry a handle, not a token,
/// but one rule for all is simpler to keep).
fn error_chain(error: &reqwest::Error) -> String {
    let mut text = if error.is_timeout() {
        "timed out".to_owned()
    } else if error.is_connect() {
        "connection refused or unreachable".to_owned()
    } else {
        "request failed".to_owned()
    };
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// Sends an unauthenticated `request` to `service` (public reads of other repos, the PLC).
pub async fn call_public(
    http: &Outbound,
    service: &Url,
    request: &XrpcRequest,
) -> Result<Value, XrpcError> {
    let url = request.url(service)?;
    let builder = http
        .request(request.method(), url)
        .map_err(|refused| XrpcError::refused(request.nsid, &refused))?;
    let builder = match request.json_body() {
        Some(body) => builder.json(body),
        None => builder,
    };
    let response = builder
        .timeout(crate::oauth::REQUEST_TIMEOUT)
        .send()
        .await
        .map_err(|error| XrpcError::transport(request.nsid, &error))?;
    let status = response.status();
    let headers = response.headers().clone();
    let body = read_answer(request.nsid, status, response).await?;
    if status.is_success() {
        Ok(body)
    } else {
        Err(XrpcError::from_answer(
            request.nsid,
            status,
            &headers,
            &body,
        ))
    }
}

/// The JSON of an answer with `status`: a success read whole up to [`Limit::LIST`] (an error
/// when it is larger or not JSON; `null` when empty, a procedure without output), an error
/// answer's `{error, message}` or `null`.
pub(crate) async fn read_answer(
    nsid: &'static str,
    status: StatusCode,
    response: reqwest::Response,
) -> Result<Value, XrpcError> {
    if !status.is_success() {
        return Ok(read_error(response).await);
    }
    let unreadable = |reason: String| XrpcError::Unreadable { nsid, reason };
    let bytes = read_bytes(response, Limit::LIST)
        .await
        .map_err(|error| match error {
            BodyError::Transport(reason) => XrpcError::Transport { nsid, reason },
            other => unreadable(other.to_string()),
        })?;
    if bytes.is_empty() {
        return Ok(Value::Null);
    }
    serde_json::from_slice(&bytes)
        .map_err(|error| unreadable(BodyError::NotJson(error.to_string()).to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_query_puts_its_parameters_in_the_url_and_a_procedure_posts() {
        let service = Url::parse("http://localhost:2583").unwrap();
        let query = XrpcRequest::query(
            "com.atproto.repo.getRecord",
            vec![("repo", "did:plc:abc".into()), ("rkey", "a b".into())],
        );
        assert_eq!(query.method(), Method::GET);
        assert_eq!(
            query.url(&service).unwrap().as_str(),
            "http://localhost:2583/xrpc/com.atproto.repo.getRecord?repo=did%3Aplc%3Aabc&rkey=a+b"
        );
        let procedure = XrpcRequest::procedure("com.atproto.repo.putRecord", json!({}));
        assert_eq!(procedure.method(), Method::POST);
        assert_eq!(procedure.json_body(), Some(&json!({})));
        let bare = XrpcRequest::procedure_without_input(
            "com.atproto.identity.requestPlcOperationSignature",
        );
        assert_eq!(bare.method(), Method::POST);
        assert_eq!(bare.json_body(), None);
        assert_eq!(query.json_body(), None);
    }

    #[test]
    fn a_server_error_keeps_its_name_and_message() {
        let none = reqwest::header::HeaderMap::new();
        let error = XrpcError::from_answer(
            "com.atproto.repo.putRecord",
            StatusCode::BAD_REQUEST,
            &none,
            &json!({"error": "InvalidSwap", "message": "Record was at bafy"}),
        );
        assert_eq!(error.name(), Some("InvalidSwap"));
        assert_eq!(
            error.to_string(),
            "com.atproto.repo.putRecord failed: InvalidSwap: Record was at bafy"
        );
        assert_eq!(error.fault(), Fault::Permanent);
        let bare = XrpcError::from_answer("x.y.z", StatusCode::BAD_GATEWAY, &none, &Value::Null);
        assert_eq!(bare.name(), Some("502 Bad Gateway"));
        assert_eq!(bare.fault(), Fault::TRANSIENT);
    }

    #[test]
    fn a_hostile_server_s_error_is_kept_on_one_line_cut_and_without_controls() {
        let none = reqwest::header::HeaderMap::new();
        let message = format!("bad\u{202E}\0\n<script>{}", "x".repeat(600_000));
        let error = XrpcError::from_answer(
            "com.atproto.repo.getRecord",
            StatusCode::BAD_REQUEST,
            &none,
            &json!({"error": format!("Evil\u{2066}\r\n{}", "E".repeat(1_000)), "message": message}),
        );
        let shown = error.to_string();
        assert!(shown.len() < 700, "{} bytes kept", shown.len());
        assert!(
            !shown.chars().any(|c| c.is_control()
                || ('\u{2066}'..='\u{2069}').contains(&c)
                || c == '\u{202E}')
        );
        assert!(shown.contains("Evil"), "{shown}");
        assert!(
            error
                .name()
                .is_some_and(|name| name.len() <= ERROR_NAME_BYTES)
        );
    }

    #[test]
    fn a_busy_server_s_retry_after_is_kept() {
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert("retry-after", "2".parse().unwrap());
        let busy = XrpcError::from_answer(
            "com.atproto.repo.putRecord",
            StatusCode::TOO_MANY_REQUESTS,
            &headers,
            &json!({"error": "RateLimitExceeded"}),
        );
        assert_eq!(
            busy.fault(),
            Fault::Transient {
                retry_after: Some(std::time::Duration::from_secs(2))
            }
        );
    }
}
