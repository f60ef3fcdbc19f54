//! The `Gateway` port: what the app asks of the cluster gateway, one method per lexicon method.
//! [`crate::GatewayClient`] implements it over XRPC; a fake for unit tests implements it in
//! memory. Futures are `Send` so callers can spawn them.

use std::future::Future;

use swdesk_lexicon::com::publicdomainrelay::temp::cluster::defs::{ClusterView, Phase};
use swdesk_lexicon::com::publicdomainrelay::temp::cluster::get_kubeconfig;
use swdesk_lexicon::com::publicdomainrelay::temp::cluster::revoke_identity::RevokedGrant;
use swdesk_lexicon::computer::socialweb::k8s::{get_job, kubectl_apply_server_side as ssa};

use crate::error::GatewayError;
use crate::subscription::ClusterFeed;

/// How long a kubeconfig's client certificate should live.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KubeconfigLifetime {
    /// The gateway's default (28800 s).
    Default,
    /// This many seconds (the gateway allows 60..=86400).
    Seconds(i64),
    /// No expiry (the gateway may refuse).
    NoExpiry,
}

impl KubeconfigLifetime {
    /// The shortest lifetime the gateway issues, in seconds.
    pub const MIN_SECONDS: i64 = 60;
    /// The longest, in seconds.
    pub const MAX_SECONDS: i64 = 86_400;
    /// The default, in seconds.
    pub const DEFAULT_SECONDS: i64 = 28_800;
}

/// The cluster gateway, as the app uses it. Every call acts for the signed-in owner.
pub trait Gateway: Send + Sync {
    /// `createCluster`: the cluster's phase (usually `Initializing`).
    fn create_cluster(
        &self,
        name: &str,
    ) -> impl Future<Output = Result<Phase, GatewayError>> + Send;

    /// `listClusters`: the owner's clusters.
    fn list_clusters(&self) -> impl Future<Output = Result<Vec<ClusterView>, GatewayError>> + Send;

    /// `controlPlaneUp`.
    fn control_plane_up(
        &self,
        name: &str,
    ) -> impl Future<Output = Result<Phase, GatewayError>> + Send;

    /// `controlPlaneDown`.
    fn control_plane_down(
        &self,
        name: &str,
    ) -> impl Future<Output = Result<Phase, GatewayError>> + Send;

    /// `deleteCluster`: `Draining`.
    fn delete_cluster(
        &self,
        name: &str,
    ) -> impl Future<Output = Result<Phase, GatewayError>> + Send;

    /// `getKubeconfig`: a kubeconfig (a credential, redacted in `Debug`) and its instance.
    fn get_kubeconfig(
        &self,
        name: &str,
        lifetime: KubeconfigLifetime,
    ) -> impl Future<Output = Result<get_kubeconfig::Output, GatewayError>> + Send;

    /// `revokeIdentity`: every grant of `did` on the cluster after the call.
    fn revoke_identity(
        &self,
        name: &str,
        did: &str,
    ) -> impl Future<Output = Result<Vec<RevokedGrant>, GatewayError>> + Send;

    /// `subscribeClusters`: a feed of snapshots and changes that reconnects by itself.
    fn subscribe_clusters(&self, name: Option<&str>) -> ClusterFeed;

    /// `computer.socialweb.k8s.kubectlApplyServerSide`.
    fn kubectl_apply_server_side(
        &self,
        input: &ssa::Input,
    ) -> impl Future<Output = Result<ssa::Output, GatewayError>> + Send;

    /// `computer.socialweb.k8s.getJob`.
    fn get_job(
        &self,
        params: &get_job::Params,
    ) -> impl Future<Output = Result<get_job::Output, GatewayError>> + Send;
}
