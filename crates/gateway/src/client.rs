//! The real gateway client: one method per `cluster.*`/`k8s.*` XRPC call, over the
//! gateway's connection (`connection.rs`: its endpoint from its DID document, each call
//! with `Authorization: Bearer` a service-auth token minted by the owner's PDS for exactly that
//! method: `aud` = the gateway DID, `lxm` = the NSID, reused until shortly before its `exp`).

use std::sync::Arc;

use serde::Serialize;
use serde_json::{Map, Value};
use swdesk_atproto::Agent;
use swdesk_atproto::identity::Resolver;
use swdesk_lexicon::com::publicdomainrelay::temp::cluster::defs::{self, ClusterView, Phase};
use swdesk_lexicon::com::publicdomainrelay::temp::cluster::revoke_identity::RevokedGrant;
use swdesk_lexicon::com::publicdomainrelay::temp::cluster::{
    control_plane_down, control_plane_up, create_cluster, delete_cluster, get_kubeconfig,
    list_clusters, revoke_identity,
};
use swdesk_lexicon::computer::socialweb::k8s::{get_job, kubectl_apply_server_side as ssa};
use swdesk_lexicon::xrpc::{Procedure, Query};

pub use crate::connection::SERVICE_ID;
use crate::connection::{Connection, invalid};
use crate::error::GatewayError;
use crate::port::{Gateway, KubeconfigLifetime};
use crate::subscription::{ClusterFeed, FeedLimits};

/// The public network's gateway.
pub const DEFAULT_GATEWAY_DID: &str = "did:web:k8s.socialweb.computer";
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
    pub(crate) inner: Arc<Connection>,
    feed: FeedLimits,
}

impl GatewayClient {
    /// A client acting for `agent`'s account at the gateway `config` names.
    pub fn new(config: GatewayClientConfig, agent: Agent) -> Self {
        let http = config.resolver.http().clone();
        Self {
            inner: Arc::new(Connection::new(config.did, config.resolver, agent, http)),
            feed: FeedLimits::default(),
        }
    }

    /// This client with other bounds for its `subscribeClusters` feeds (tests shorten them).
    #[must_use]
    pub fn with_feed_limits(mut self, limits: FeedLimits) -> Self {
        self.feed = limits;
        self
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

/// A `listClusters` answer made fit to keep and show: each cluster cleaned as the feed's are
/// ([`crate::subscription::cluster_view`]), at most `cap` of them; an answer naming a bad
/// cluster, or more than `cap`, is refused whole, saying why.
fn listed(clusters: Vec<ClusterView>, cap: usize) -> Result<Vec<ClusterView>, GatewayError> {
    const METHOD: &str = "com.publicdomainrelay.temp.cluster.listClusters";
    if clusters.len() > cap {
        return Err(invalid(
            METHOD,
            &format!("{} clusters listed; at most {cap} are kept", clusters.len()),
        ));
    }
    clusters
        .into_iter()
        .map(|view| crate::subscription::cluster_view(view).map_err(|why| invalid(METHOD, &why)))
        .collect()
}

impl Gateway for GatewayClient {
    async fn create_cluster(&self, name: &str) -> Result<Phase, GatewayError> {
        self.phase_call::<create_cluster::CreateCluster>(name).await
    }

    async fn list_clusters(&self) -> Result<Vec<ClusterView>, GatewayError> {
        let clusters = self
            .query::<list_clusters::ListClusters>(&())
            .await?
            .clusters;
        listed(clusters, FeedLimits::default().clusters)
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
        ClusterFeed::connect(Arc::clone(&self.inner), name.map(str::to_owned), self.feed)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn view(name: &str, phase: &str) -> ClusterView {
        serde_json::from_value(serde_json::json!({
            "name": name,
            "phase": phase,
            "instance": "i-1\u{202E}\u{0}x",
            "server": "https://k8s.example\n:6443",
        }))
        .expect("a cluster view")
    }

    #[test]
    fn a_listed_cluster_s_texts_are_cleaned_and_unknown_fields_dropped() {
        let mut odd = view("dev", "Dancing\u{2066}\u{7}");
        odd.extra.insert("script".into(), "<script>".into());
        let kept = listed(vec![odd], 4).expect("kept");
        assert_eq!(kept[0].instance.as_deref(), Some("i-1 x"));
        assert_eq!(kept[0].server.as_deref(), Some("https://k8s.example :6443"));
        assert_eq!(kept[0].phase, Phase::Other("Dancing".to_owned()));
        assert!(kept[0].extra.is_empty());
    }

    #[test]
    fn a_list_naming_a_bad_cluster_or_too_many_is_refused_whole_saying_why() {
        let bad = listed(vec![view("dev", "Ready"), view("../etc", "Ready")], 4).unwrap_err();
        assert!(bad.to_string().contains("DNS-1123"), "{bad}");
        let many = (0..5).map(|n| view(&format!("c{n}"), "Ready")).collect();
        let refused = listed(many, 4).unwrap_err();
        assert!(
            refused.to_string().contains("5 clusters listed; at most 4"),
            "{refused}"
        );
    }
}
