//! One gateway as a service: its DID resolved to the endpoint its document names (service
//! `#socialweb_cluster_gateway`), service-auth tokens minted by the owner's PDS for each method,
//! and one XRPC call read under a cap. The request/response client and the `subscribeClusters`
//! feed both speak to the gateway through it.
//!
//! Invariants: the endpoint is `https` (or `http` on localhost in the sandbox); it is resolved
//! once and forgotten after a transport failure so the next call resolves it afresh; tokens are
//! never logged.

use std::sync::{Mutex, PoisonError};

use reqwest::StatusCode;
use serde::de::DeserializeOwned;
use serde_json::Value;
use swdesk_atproto::Agent;
use swdesk_atproto::identity::Resolver;
use swdesk_atproto::oauth::Secret;
use swdesk_atproto::service_auth::ServiceAuth;
use swdesk_lexicon::text::peer_text;
use swdesk_net::{BodyError, Limit, Outbound, read_bytes};
use tracing::Instrument as _;
use url::Url;

use crate::error::{ErrorName, GatewayError};

/// The service id of the gateway's endpoint in its DID document.
pub const SERVICE_ID: &str = "#socialweb_cluster_gateway";

#[derive(Debug)]
pub(crate) struct Connection {
    pub(crate) did: String,
    resolver: Resolver,
    auth: ServiceAuth,
    pub(crate) http: Outbound,
    endpoint: Mutex<Option<Url>>,
}

impl Connection {
    /// The gateway `did`, resolved by `resolver`, called for `agent`'s account over `http`.
    pub(crate) fn new(did: String, resolver: Resolver, agent: Agent, http: Outbound) -> Self {
        Self {
            did,
            resolver,
            auth: ServiceAuth::new(agent),
            http,
            endpoint: Mutex::new(None),
        }
    }

    /// The gateway's XRPC endpoint, from its DID document.
    pub(crate) async fn endpoint(&self) -> Result<Url, GatewayError> {
        if let Some(url) = self
            .endpoint
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
        {
            return Ok(url);
        }
        let document = self.resolver.did_document(&self.did).await?;
        let no_endpoint = |reason: &str| GatewayError::NoEndpoint {
            did: self.did.clone(),
            reason: reason.to_owned(),
        };
        let service = document
            .service
            .iter()
            .find(|service| {
                service.id == SERVICE_ID || service.id == format!("{}{SERVICE_ID}", self.did)
            })
            .ok_or_else(|| {
                no_endpoint("its DID document has no #socialweb_cluster_gateway service")
            })?;
        let text = service
            .service_endpoint
            .as_str()
            .ok_or_else(|| no_endpoint("the service endpoint is not a string"))?;
        let url = Url::parse(text).map_err(|_| no_endpoint("the service endpoint is not a URL"))?;
        let local = url
            .host_str()
            .is_some_and(|host| host == "localhost" || host == "127.0.0.1");
        let allowed = url.scheme() == "https"
            || (url.scheme() == "http" && local && self.resolver.config().allow_http_localhost);
        if !allowed {
            return Err(no_endpoint("the service endpoint is not https"));
        }
        *self.endpoint.lock().unwrap_or_else(PoisonError::into_inner) = Some(url.clone());
        Ok(url)
    }

    pub(crate) fn forget_endpoint(&self) {
        *self.endpoint.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }

    /// A service-auth token for `method` at this gateway.
    pub(crate) async fn token(&self, method: &'static str) -> Result<Secret, GatewayError> {
        self.auth
            .token(&self.did, method)
            .await
            .map_err(|source| GatewayError::ServiceAuth { method, source })
    }

    pub(crate) async fn call<T: DeserializeOwned>(
        &self,
        method: &'static str,
        verb: reqwest::Method,
        query: &[(String, String)],
        body: Option<Value>,
    ) -> Result<T, GatewayError> {
        let mut url = self.endpoint().await?;
        url.set_path(&format!("/xrpc/{method}"));
        let token = self.token(method).await?;
        let mut request = self
            .http
            .request(verb, url)
            .map_err(|refused| GatewayError::Transport {
                method,
                reason: refused.to_string(),
            })?
            .query(query)
            .bearer_auth(token.expose());
        if let Some(body) = body {
            request = request.json(&body);
        }
        let span = tracing::debug_span!("gateway_call", method);
        let response = request.send().instrument(span).await.map_err(|error| {
            self.forget_endpoint();
            GatewayError::Transport {
                method,
                reason: error.without_url().to_string(),
            }
        })?;
        let status = response.status();
        let limit = if status.is_success() {
            Limit::LIST
        } else {
            Limit::ERROR
        };
        let bytes = read_bytes(response, limit)
            .await
            .map_err(|error| match error {
                BodyError::Transport(reason) => GatewayError::Transport { method, reason },
                too_large => invalid(method, &too_large),
            })?;
        if !status.is_success() {
            return Err(refusal(method, status, &String::from_utf8_lossy(&bytes)));
        }
        serde_json::from_slice(&bytes).map_err(|error| invalid(method, &error))
    }
}

/// The most of a gateway's refusal message kept.
const REFUSAL_MESSAGE_BYTES: usize = 512;

/// The error of a non-success answer: its name and message cleaned (one line, no controls or
/// bidi overrides, cut), as every text from another party is.
pub(crate) fn refusal(method: &'static str, status: StatusCode, text: &str) -> GatewayError {
    let body: Value = serde_json::from_str(text).unwrap_or(Value::Null);
    let name = body["error"]
        .as_str()
        .unwrap_or_else(|| status.canonical_reason().unwrap_or("Unknown"));
    GatewayError::Refused {
        method,
        status: status.as_u16(),
        name: ErrorName::parse(name),
        message: peer_text(
            body["message"].as_str().unwrap_or_default(),
            REFUSAL_MESSAGE_BYTES,
        ),
    }
}

pub(crate) fn invalid(method: &'static str, error: &impl std::fmt::Display) -> GatewayError {
    GatewayError::InvalidResponse {
        method,
        reason: error.to_string(),
    }
}
