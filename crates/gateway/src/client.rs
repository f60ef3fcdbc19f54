//! The real gateway client: XRPC over HTTP to the endpoint the gateway's DID document names
//! (service `#socialweb_cluster_gateway`), each call with `Authorization: Bearer` a service-auth
//! token minted by the owner's PDS for exactly that method (`aud` = the gateway DID, `lxm` =
//! the NSID), reused from `swdesk_atproto::service_auth::ServiceAuth`'s cache until shortly
//! before its `exp`.
//!
//! Invariants: the endpoint is `https` (or `http` on localhost in the sandbox); it is resolved
//! once and forgotten after a transport failure so the next call resolves it afresh; tokens are
//! never logged.

use std::sync::{Arc, Mutex, PoisonError};
use swdesk_net::{BodyError, Limit, read_bytes};

use reqwest::StatusCode;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use swdesk_atproto::Agent;
use swdesk_atproto::identity::Resolver;
use swdesk_atproto::oauth::Secret;
use swdesk_atproto::service_auth::ServiceAuth;
use swdesk_lexicon::com::publicdomainrelay::temp::cluster::defs::{self, ClusterView, Phase};
use swdesk_lexicon::com::publicdomainrelay::temp::cluster::revoke_identity::RevokedGrant;
use swdesk_lexicon::com::publicdomainrelay::temp::cluster::{
    control_plane_down, control_plane_up, create_cluster, delete_cluster, get_kubeconfig,
    list_clusters, revoke_identity,
};
use swdesk_lexicon::computer::socialweb::k8s::{get_job, kubectl_apply_server_side as ssa};
use swdesk_lexicon::xrpc::{Procedure, Query};
use tracing::Instrument as _;
use url::Url;

use crate::error::{ErrorName, GatewayError};
use crate::port::{Gateway, KubeconfigLifetime};
use crate::subscription::ClusterFeed;

/// The public network's gateway.
pub const DEFAULT_GATEWAY_DID: &str = "did:web:k8s.socialweb.computer";
/// The service id of the gateway's endpoint in its DID document.
pub const SERVICE_ID: &str = "#socialweb_cluster_gateway";

/// Which gateway, resolved how.
#[derive(Debug, Clone)]
pub struct GatewayClientConfig {
    /// The gateway's DID (`did:web`).
    pub did: String,
    /// Resolves the gateway's DID document (the sandbox's allows http on localhost).
    pub resolver: Resolver,
}

impl GatewayClientConfig {
    /// The gateway `did`, resolved with `resolver`.
    pub fn new(did: impl Into<String>, resolver: Resolver) -> Self {
        Self {
            did: did.into(),
            resolver,
        }
    }

    /// The public network's gateway ([`DEFAULT_GATEWAY_DID`]).
    pub fn public(resolver: Resolver) -> Self {
        Self::new(DEFAULT_GATEWAY_DID, resolver)
    }
}

/// The XRPC adapter of the [`Gateway`] port. Cheap to clone; clones share the token cache.
#[derive(Debug, Clone)]
pub struct GatewayClient {
    pub(crate) inner: Arc<Inner>,
}

#[derive(Debug)]
pub(crate) struct Inner {
    pub(crate) did: String,
    resolver: Resolver,
    auth: ServiceAuth,
    pub(crate) http: swdesk_net::Outbound,
    endpoint: Mutex<Option<Url>>,
}

impl GatewayClient {
    /// A client acting for `agent`'s account at the gateway `config` names.
    pub fn new(config: GatewayClientConfig, agent: Agent) -> Self {
        let http = config.resolver.http().clone();
        Self {
            inner: Arc::new(Inner {
                did: config.did,
                resolver: config.resolver,
                auth: ServiceAuth::new(agent),
                http,
                endpoint: Mutex::new(None),
            }),
        }
    }

    /// The gateway's DID.
    pub fn did(&self) -> &str {
        &self.inner.did
    }

    async fn procedure<P: Procedure>(&self, input: &P::Input) -> Result<P::Output, GatewayError> {
        let body = serde_json::to_value(input).map_err(|e| invalid(P::NSID, &e))?;
        self.inner
            .call(P::NSID, reqwest::Method::POST, &[], Some(body))
            .await
    }

    async fn query<Q: Query>(&self, params: &Q::Params) -> Result<Q::Output, GatewayError> {
        let pairs = query_pairs(params).map_err(|e| invalid(Q::NSID, &e))?;
        self.inner
            .call(Q::NSID, reqwest::Method::GET, &pairs, None)
            .await
    }

    async fn phase_call<P>(&self, name: &str) -> Result<Phase, GatewayError>
    where
        P: Procedure<Input = defs::ClusterRef, Output = defs::PhaseResult>,
    {
        let input = defs::ClusterRef {
            name: name.to_owned(),
            extra: Map::new(),
        };
        Ok(self.procedure::<P>(&input).await?.phase)
    }
}

/// Query-string pairs of a parameters struct (absent fields left out).
pub(crate) fn query_pairs(
    params: &impl Serialize,
) -> Result<Vec<(String, String)>, serde_json::Error> {
    let Value::Object(object) = serde_json::to_value(params)? else {
        return Ok(Vec::new());
    };
    Ok(object
        .into_iter()
        .filter(|(_, value)| !value.is_null())
        .map(|(key, value)| match value {
            Value::String(text) => (key, text),
            other => (key, other.to_string()),
        })
        .collect())
}

fn invalid(method: &'static str, error: &impl std::fmt::Display) -> GatewayError {
    GatewayError::InvalidResponse {
        method,
        reason: error.to_string(),
    }
}

impl Inner {
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

    async fn call<T: DeserializeOwned>(
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

/// The error of a non-success answer.
pub(crate) fn refusal(method: &'static str, status: StatusCode, text: &str) -> GatewayError {
    let body: Value = serde_json::from_str(text).unwrap_or(Value::Null);
    let name = body["error"]
        .as_str()
        .unwrap_or_else(|| status.canonical_reason().unwrap_or("Unknown"));
    GatewayError::Refused {
        method,
        status: status.as_u16(),
        name: ErrorName::parse(name),
        message: body["message"].as_str().unwrap_or_default().to_owned(),
    }
}

impl Gateway for GatewayClient {
    async fn create_cluster(&self, name: &str) -> Result<Phase, GatewayError> {
        self.phase_call::<create_cluster::CreateCluster>(name).await
    }

    async fn list_clusters(&self) -> Result<Vec<ClusterView>, GatewayError> {
        Ok(self
            .query::<list_clusters::ListClusters>(&())
            .await?
            .clusters)
    }

    async fn control_plane_up(&self, name: &str) -> Result<Phase, GatewayError> {
        self.phase_call::<control_plane_up::ControlPlaneUp>(name)
            .await
    }

    async fn control_plane_down(&self, name: &str) -> Result<Phase, GatewayError> {
        self.phase_call::<control_plane_down::ControlPlaneDown>(name)
            .await
    }

    async fn delete_cluster(&self, name: &str) -> Result<Phase, GatewayError> {
        self.phase_call::<delete_cluster::DeleteCluster>(name).await
    }

    async fn get_kubeconfig(
        &self,
        name: &str,
        lifetime: KubeconfigLifetime,
    ) -> Result<get_kubeconfig::Output, GatewayError> {
        let (ttl_seconds, no_expiry) = match lifetime {
            KubeconfigLifetime::Default => (None, None),
            KubeconfigLifetime::Seconds(seconds) => (Some(seconds), None),
            KubeconfigLifetime::NoExpiry => (None, Some(true)),
        };
        let input = get_kubeconfig::Input {
            name: name.to_owned(),
            ttl_seconds,
            no_expiry,
            extra: Map::new(),
        };
        self.procedure::<get_kubeconfig::GetKubeconfig>(&input)
            .await
    }

    async fn revoke_identity(
        &self,
        name: &str,
        did: &str,
    ) -> Result<Vec<RevokedGrant>, GatewayError> {
        let input = revoke_identity::Input {
            did: did.to_owned(),
            name: name.to_owned(),
            extra: Map::new(),
        };
        Ok(self
            .procedure::<revoke_identity::RevokeIdentity>(&input)
            .await?
            .revoked)
    }

    fn subscribe_clusters(&self, name: Option<&str>) -> ClusterFeed {
        ClusterFeed::connect(Arc::clone(&self.inner), name.map(str::to_owned))
    }

    async fn kubectl_apply_server_side(
        &self,
        input: &ssa::Input,
    ) -> Result<ssa::Output, GatewayError> {
        self.procedure::<ssa::KubectlApplyServerSide>(input).await
    }

    async fn get_job(&self, params: &get_job::Params) -> Result<get_job::Output, GatewayError> {
        self.query::<get_job::GetJob>(params).await
    }
}
