//! [`Desk`]: the app as its shell sees it, one value: the session of the network, and the
//! controller of the signed-in account, started when someone is signed in (at sign-in, or when
//! the session is restored at start) and stopped at sign-out.
//!
//! The deployment calls of the window go to the running controller's store
//! ([`crate::deployments`]); its changes and steps reach [`Desk::live`] subscribers.
//!
//! Invariants: at most one controller runs, for the account signed in; signing out stops it
//! before the session goes; a controller that cannot start leaves the owner signed in and says
//! why (the deployments wait, nothing is lost).

use crate::error_code::ErrorCode;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use swdesk_controller::SystemClock;
use swdesk_core::index_health::IndexHealth;
use swdesk_core::infra::{EphemeralInfraSpec, InfraSpec};
use swdesk_core::sync::Resolution;
use swdesk_gateway::{Gateway, GatewayClient, GatewayClientConfig};
use swdesk_kernel::deployment_kind::DeploymentKind;
use swdesk_kernel::name::Name;
use swdesk_kernel::timestamp::Clock;
use swdesk_store::{Store, StoreError};
use tokio::sync::broadcast;

use swdesk_atproto::identity::Resolver;
use swdesk_atproto::{Account, Browser, PdsRepo};
use swdesk_controller::EngineConfig;
use swdesk_kernel::repo::{RecordRepo, StoredRecord};
use swdesk_kernel::secret::{SecretValue, SecretVault};
use swdesk_kernel::uri::RecordUri;
use tokio::sync::Mutex;

use crate::activity::SyncView;
use crate::clusters::{
    self, Applied, ApplyRequest, ClusterError, ClusterSession, ClustersView, JobView,
    SavedKubeconfig,
};
use crate::contracts;
use crate::controller::{
    AccountController, ControllerError, LiveEvent, LiveStatus, MarketAccess, store_path,
};
use crate::deployments::{self, ContractIntent, DeploymentDetail, DeploymentRow, IntentError};
use crate::identities::Identities;
use crate::kubeconfig_paths::KubeconfigPaths;
use crate::kubeconfigs::{self, KeptKubeconfigs, KubeconfigView};
use crate::last_seen::LastSeen;
use crate::live_source::{KeptLiveSource, LiveSource, LiveSourceRefused};
use crate::network::Network;
use crate::node_infra::{self, NodeInfraView};
use crate::records::{self, RecordView};
use crate::secrets;
use crate::serde_name;
use crate::session::{SessionError, SessionView, Sessions};
use swdesk_atproto::keychain::{Keychain, SecretValues};

/// The session and the controller of the signed-in account.
#[derive(Debug)]
pub struct Desk {
    sessions: Sessions,
    data_dir: PathBuf,
    controller: Mutex<Option<AccountController>>,
    start_failure: std::sync::Mutex<Option<StartFailure>>,
    live: broadcast::Sender<LiveEvent>,
    clusters: std::sync::Mutex<Option<ClusterSession>>,
    identities: Identities,
    kubeconfig_paths: KubeconfigPaths,
    live_source: KeptLiveSource,
}

/// Why the account's controller could not start, and when a read may try again.
#[derive(Debug, Clone)]
struct StartFailure {
    /// The account whose controller it was.
    did: String,
    /// Why, for the window.
    why: String,
    /// Not before then: a window that polls must not restart the start (and the cluster feed)
    /// on every read.
    retry_at: std::time::Instant,
}

/// How long after a failed controller start a read tries it again.
const START_RETRY: Duration = Duration::from_secs(2);

/// The longest a deployment's detail waits for DIDs it shows for the first time.
const NAMING_BUDGET: Duration = Duration::from_secs(2);

/// How many live events may wait for a slow window before the oldest are dropped.
const LIVE_BACKLOG: usize = 1024;

/// Why a deployment call was not carried out.
#[derive(Debug, thiserror::Error)]
pub enum DeskError {
    /// Nobody is signed in: there is no account's store to show.
    #[error("sign in to see and change your deployments")]
    SignedOut,
    /// The controller could not start or read its store.
    #[error(transparent)]
    Controller(#[from] ControllerError),
    /// Someone is signed in, but the controller could not start (its store is held by
    /// another process, the data directory cannot be made, ...): why.
    #[error("the deployments cannot be shown: {0}")]
    NotRunning(String),
    /// The owner's intent was refused; nothing changed.
    #[error(transparent)]
    Intent(#[from] IntentError),
    /// A conflict answer was refused (there is no conflict now, or the repo cannot be read).
    #[error("{0}")]
    Resolve(String),
    /// The deployment's record could not be read from the repo.
    #[error("the record could not be read: {0}")]
    Record(String),
    /// This network has no cluster gateway.
    #[error("this network has no cluster gateway")]
    NoGateway,
    /// A cluster call failed.
    #[error(transparent)]
    Cluster(#[from] ClusterError),
    /// The contract has no receipt whose record can be opened (none yet, or its author's PDS
    /// is not known).
    #[error("this contract has no receipt to open yet")]
    NoReceipt,
    /// The owner's browser could not be opened.
    #[error("the browser could not be opened: {0}")]
    Browser(String),
    /// The OS keychain, where secret values live, did not answer.
    #[error("{0}")]
    Keychain(String),
    /// A kept kubeconfig could not be removed (or is not one saved here).
    #[error("{0}")]
    Kubeconfig(String),
    /// The live source the owner typed was refused (every problem named); nothing was kept.
    #[error(transparent)]
    LiveSource(#[from] LiveSourceRefused),
    /// The profile's settings could not be written; nothing changed.
    #[error("the settings could not be saved: {0}")]
    Settings(String),
}

impl DeskError {
    /// A stable code for the window to branch on.
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::SignedOut => ErrorCode::SignedOut,
            Self::Controller(_) | Self::NotRunning(_) => ErrorCode::Controller,
            Self::Intent(intent) => intent.code(),
            Self::Resolve(_) => ErrorCode::Resolve,
            Self::Record(_) => ErrorCode::Record,
            Self::NoGateway => ErrorCode::NoGateway,
            Self::Cluster(cluster) => cluster.code(),
            Self::NoReceipt => ErrorCode::NoReceipt,
            Self::Browser(_) => ErrorCode::Browser,
            Self::Keychain(_) => ErrorCode::Keychain,
            Self::Kubeconfig(_) => ErrorCode::Kubeconfig,
            Self::LiveSource(_) => ErrorCode::Invalid,
            Self::Settings(_) => ErrorCode::Store,
        }
    }
}

impl Desk {
    /// A desk on `network`, signing in through `browser`, keeping its stores under `data_dir`.
    pub fn new(network: Network, browser: Arc<dyn Browser>, data_dir: PathBuf) -> Self {
        Self::with_sessions(Sessions::new(network, browser, data_dir.clone()), data_dir)
    }

    /// A desk over `sessions` (tests give theirs a keychain entry of their own).
    pub fn with_sessions(sessions: Sessions, data_dir: PathBuf) -> Self {
        let network = sessions.network();
        let resolver = Resolver::new(network.oauth.identity.clone(), network.outbound.clone());
        let live = broadcast::channel(LIVE_BACKLOG).0;
        let live_source = KeptLiveSource::under(&data_dir);
        let to_window = live.clone();
        let identities = Identities::new(resolver).when_named_late(move |_did| {
            let _no_window = to_window.send(LiveEvent::IdentityNamed);
        });
        Self {
            identities,
            sessions,
            data_dir,
            controller: Mutex::new(None),
            start_failure: std::sync::Mutex::new(None),
            live,
            clusters: std::sync::Mutex::new(None),
            kubeconfig_paths: KubeconfigPaths::under_home(std::env::home_dir()),
            live_source,
        }
    }

    /// Every deployment change and controller step, of whichever account is signed in.
    pub fn live(&self) -> broadcast::Receiver<LiveEvent> {
        self.live.subscribe()
    }

    /// Every deployment of the signed-in account.
    pub async fn deployments(&self) -> Result<Vec<DeploymentRow>, DeskError> {
        let rows = self.read(deployments::rows).await?;
        // The window lists once per controller start (and when it lost change events); a line
        // per listing shows in the log when something asks more often.
        tracing::info!(rows = rows.len(), "listed the deployments");
        Ok(rows)
    }

    /// One deployment, with what the controller knows of it; the DIDs it shows named as far
    /// as they are known (waiting at most a moment for ones never seen).
    pub async fn deployment(
        &self,
        kind: DeploymentKind,
        name: &Name,
    ) -> Result<Option<(DeploymentDetail, Option<SyncView>)>, DeskError> {
        let Some((mut detail, sync)) = self.deployment_unnamed(kind, name).await? else {
            return Ok(None);
        };
        let names = self
            .identities
            .names(contracts::dids(&detail.contracts), NAMING_BUDGET)
            .await;
        contracts::name_identities(&mut detail.contracts, &names);
        Ok(Some((detail, sync)))
    }

    async fn deployment_unnamed(
        &self,
        kind: DeploymentKind,
        name: &Name,
    ) -> Result<Option<(DeploymentDetail, Option<SyncView>)>, DeskError> {
        let running = self.running().await;
        let controller = running.as_ref().ok_or_else(|| self.not_running())?;
        let lookup = name.clone();
        let detail = controller
            .with_store(move |store| deployments::detail(store, kind, &lookup))
            .await?
            .map_err(store_error)?;
        let Some(detail) = detail else {
            return Ok(None);
        };
        let sync = match kind {
            DeploymentKind::Infra => controller.sync_view::<InfraSpec>(name).await?,
            DeploymentKind::EphemeralInfra => {
                controller.sync_view::<EphemeralInfraSpec>(name).await?
            }
        };
        Ok(Some((detail, sync)))
    }

    /// Creates or edits a deployment from its declaration; refused whole with every problem.
    pub async fn declare(&self, declaration: Value) -> Result<DeploymentRow, DeskError> {
        let now = SystemClock.now();
        let declared = self
            .intent(move |store| deployments::declare(store, &declaration, now))
            .await;
        match &declared {
            Ok(row) => tracing::info!(kind = %row.kind, name = %row.name, "declared"),
            Err(error) => tracing::info!(%error, "a declaration was refused"),
        }
        declared
    }

    /// Stages, requests or releases one contract of a deployment.
    pub async fn set_contract(
        &self,
        kind: DeploymentKind,
        name: Name,
        contract: String,
        intent: ContractIntent,
    ) -> Result<(), DeskError> {
        let now = SystemClock.now();
        let asked = format!("{kind:?} {name}, contract {contract}: {intent:?}");
        let outcome = self
            .intent(move |store| {
                deployments::set_contract(store, kind, &name, &contract, intent, now)
            })
            .await;
        match &outcome {
            Ok(()) => tracing::info!(%asked, "the owner moved a contract"),
            Err(error) => tracing::info!(%asked, %error, "a contract move was refused"),
        }
        outcome
    }

    /// Sets the deployment's secret `secret` to `value` for `contracts` (none: all): a new
    /// secret, or a rotation whose new version every guest gets sealed afresh. The value goes
    /// to the keychain first, then its version is counted up; every problem is named at once
    /// and nothing is kept when there is one.
    pub async fn set_secret(
        &self,
        kind: DeploymentKind,
        name: Name,
        secret: String,
        value: String,
        contracts: Vec<String>,
    ) -> Result<(), DeskError> {
        let problems = secrets::problems(&secret, value.len(), &contracts);
        if !problems.is_empty() {
            return Err(IntentError::Invalid(problems).into());
        }
        // Everything that could refuse the change is checked before the keychain is written:
        // a refused secret must not leave a new value under the old version.
        self.intent({
            let (name, contracts) = (name.clone(), contracts.clone());
            move |store| secrets::admissible(store, kind, &name, &contracts)
        })
        .await?;
        let entry = secrets::keychain_entry(kind, &name, &secret);
        let value = SecretValue::new(value.into_bytes());
        self.with_secret_values(move |values| values.write(&entry, &value))
            .await?;
        self.intent(move |store| secrets::put(store, kind, &name, &secret, &contracts).map(drop))
            .await
    }

    /// Takes the secret off the deployment (its guests keep what they opened) and forgets
    /// its value.
    pub async fn remove_secret(
        &self,
        kind: DeploymentKind,
        name: Name,
        secret: String,
    ) -> Result<(), DeskError> {
        let removed = self
            .intent(move |store| secrets::remove(store, kind, &name, &secret))
            .await?;
        self.with_secret_values(move |values| values.remove(&removed.keychain_entry))
            .await
    }

    /// The value of the deployment's secret, read from the keychain: only when the owner
    /// asks to see it.
    pub async fn reveal_secret(
        &self,
        kind: DeploymentKind,
        name: Name,
        secret: String,
    ) -> Result<String, DeskError> {
        let entry = {
            let secret = secret.clone();
            self.intent(move |store| secrets::kept(store, kind, &name, &secret))
                .await?
                .keychain_entry
        };
        let value = self
            .with_secret_values(move |values| {
                values
                    .read(&entry)
                    .map_err(swdesk_atproto::keychain::KeychainError::unavailable)
            })
            .await?
            .ok_or_else(|| {
                DeskError::Keychain(format!("the keychain holds no value for {secret}"))
            })?;
        Ok(String::from_utf8_lossy(value.expose()).into_owned())
    }

    /// Runs `call` on the signed-in account's secret values in the keychain, off the runtime.
    async fn with_secret_values<T: Send + 'static>(
        &self,
        call: impl FnOnce(&SecretValues) -> Result<T, swdesk_atproto::keychain::KeychainError>
        + Send
        + 'static,
    ) -> Result<T, DeskError> {
        let did = self.sessions.agent().ok_or(DeskError::SignedOut)?.did();
        let keychain = self.sessions.network().keychain_name.clone();
        tokio::task::spawn_blocking(move || call(&Keychain::open(&keychain)?.secret_values(&did)))
            .await
            .map_err(|error| DeskError::Keychain(error.to_string()))?
            .map_err(|error| DeskError::Keychain(error.to_string()))
    }

    /// Ends a deployment: its contracts are released, its record stays, ended.
    pub async fn end(&self, kind: DeploymentKind, name: Name) -> Result<(), DeskError> {
        let now = SystemClock.now();
        self.intent(move |store| deployments::end(store, kind, &name, now))
            .await
    }

    /// Opens the receipt of the deployment's contract `contract` in the owner's browser: the
    /// record as its author's PDS serves it. Only the link the desk made for that receipt is
    /// opened, and only when its host is `confirmed_host`, the host the window showed the
    /// owner before they confirmed (the PDS is the winner's choice, not the app's).
    pub async fn open_receipt(
        &self,
        kind: DeploymentKind,
        name: &Name,
        contract: &str,
        confirmed_host: &str,
    ) -> Result<(), DeskError> {
        let receipt = self
            .deployment_unnamed(kind, name)
            .await?
            .and_then(|(detail, _)| {
                let mut contracts = detail.contracts.into_iter();
                contracts.find(|shown| shown.name == contract)
            })
            .and_then(|shown| shown.receipt)
            .ok_or(DeskError::NoReceipt)?;
        let author = contracts::author(&receipt);
        let names = self.identities.names(author, NAMING_BUDGET).await;
        let link = contracts::receipt_url(&receipt, &names).ok_or(DeskError::NoReceipt)?;
        let url = contracts::confirmed_link(&link, confirmed_host).map_err(DeskError::Browser)?;
        self.sessions
            .browser()
            .open(&url)
            .map_err(DeskError::Browser)
    }

    /// The deployment's record as the owner's repo holds it now, beside this device's
    /// declaration; `None` when there is no such deployment or it has no record yet.
    pub async fn deployment_record(
        &self,
        kind: DeploymentKind,
        name: &Name,
    ) -> Result<Option<RecordView>, DeskError> {
        let found = self.stored_record(kind, name).await?;
        Ok(found.map(|(stored, local)| records::view(kind, &stored, local)))
    }

    /// The deployment's record as the owner's repo holds it now, and this device's declaration
    /// as the inspector shows it; `None` when there is no such deployment or record.
    async fn stored_record(
        &self,
        kind: DeploymentKind,
        name: &Name,
    ) -> Result<Option<(StoredRecord, String)>, DeskError> {
        let asked = name.clone();
        let Some((Some(uri), local)) = self
            .read(move |store| records::local_side(store, kind, &asked))
            .await?
        else {
            return Ok(None);
        };
        let agent = self.sessions.agent().ok_or(DeskError::SignedOut)?;
        let repo = PdsRepo::new(agent, self.identities.resolver().clone());
        let uri = RecordUri::parse(&uri).map_err(|error| DeskError::Record(error.to_string()))?;
        let stored = repo
            .get(&uri)
            .await
            .map_err(|error| DeskError::Record(error.to_string()))?;
        Ok(stored.map(|stored| (stored, local)))
    }

    /// Ends the deployment `kind`/`name` for a successor declared as its record now is (the
    /// way out of a record changed elsewhere in fields only creation sets); the successor's row.
    pub async fn succeed_deployment(
        &self,
        kind: DeploymentKind,
        name: &Name,
    ) -> Result<DeploymentRow, DeskError> {
        let (record, _) = self
            .stored_record(kind, name)
            .await?
            .ok_or_else(|| DeskError::Record(format!("{name} has no record to succeed")))?;
        let name = name.clone();
        let now = SystemClock.now();
        self.intent(move |store| deployments::succeed(store, kind, &name, &record.value, now))
            .await
    }

    /// The owner's answer to a deployment's conflict.
    pub async fn resolve_conflict(
        &self,
        kind: DeploymentKind,
        name: &Name,
        resolution: Resolution,
    ) -> Result<(), DeskError> {
        let running = self.running().await;
        let controller = running.as_ref().ok_or_else(|| self.not_running())?;
        controller
            .resolve_conflict(kind.kind(), name, resolution)
            .await
            .map_err(|error| DeskError::Resolve(error.to_string()))
    }

    /// The owner's clusters as the gateway's feed last described them.
    /// Members are named as far as their handles are known now (those not yet known are
    /// resolved in the background and told by [`LiveEvent::IdentityNamed`]).
    pub fn clusters(&self) -> Result<ClustersView, DeskError> {
        let view = self
            .lock_clusters()
            .as_ref()
            .map(ClusterSession::view)
            .ok_or_else(|| self.no_clusters())?;
        let own = self.sessions.agent().map(|agent| agent.did());
        Ok(named_clusters(&self.identities, view, own.as_deref()))
    }

    /// Creates the cluster `name`.
    pub async fn create_cluster(&self, name: &str) -> Result<String, DeskError> {
        let phase = self
            .gateway()?
            .create_cluster(name)
            .await
            .map_err(ClusterError::from)?;
        Ok(serde_name(&phase))
    }

    /// Starts (`up`) or stops the control plane of `name` (its store is kept).
    pub async fn control_plane(&self, name: &str, up: bool) -> Result<String, DeskError> {
        let gateway = self.gateway()?;
        let phase = if up {
            gateway.control_plane_up(name).await
        } else {
            gateway.control_plane_down(name).await
        };
        Ok(serde_name(&phase.map_err(ClusterError::from)?))
    }

    /// Deletes the cluster `name` (it drains, then goes).
    pub async fn delete_cluster(&self, name: &str) -> Result<String, DeskError> {
        let phase = self
            .gateway()?
            .delete_cluster(name)
            .await
            .map_err(ClusterError::from)?;
        Ok(serde_name(&phase))
    }

    /// Revokes every grant of `did` on the cluster `name`; refused for the signed-in owner's
    /// own DID (it would lock them out).
    pub async fn revoke_identity(&self, name: &str, did: &str) -> Result<(), DeskError> {
        let own = self.sessions.agent().ok_or(DeskError::SignedOut)?.did();
        clusters::refuse_self_revoke(did, &own)?;
        self.gateway()?
            .revoke_identity(name, did)
            .await
            .map_err(ClusterError::from)?;
        Ok(())
    }

    /// Saves a kubeconfig of `name` at `path` (mode 0600): under `~/.kube`, or where the
    /// owner picked in the save dialog ([`Desk::kubeconfig_path_chosen`]); refused elsewhere.
    pub async fn save_kubeconfig(
        &self,
        name: &str,
        ttl_seconds: Option<i64>,
        no_expiry: bool,
        path: &std::path::Path,
    ) -> Result<SavedKubeconfig, DeskError> {
        let path = self.kubeconfig_path(path)?;
        let lifetime = clusters::lifetime(ttl_seconds, no_expiry)?;
        let saved = clusters::save_kubeconfig(&self.gateway()?, name, lifetime, &path).await?;
        if let Some(kept) = self.kept_kubeconfigs()
            && let Err(error) = kept.remember(name, &saved)
        {
            tracing::warn!(%error, "the saved kubeconfig could not be remembered");
        }
        Ok(saved)
    }

    /// The node Infra of the owner's cluster `name` (the record the gateway keeps for its
    /// nodes) as the store mirrors it, beside the cluster's nodes as last described (live or
    /// kept from an earlier run); `None` while none is followed.
    pub async fn node_infra(&self, name: &str) -> Result<Option<NodeInfraView>, DeskError> {
        let nodes = self
            .clusters()
            .map(|view| view.clusters)
            .unwrap_or_default()
            .into_iter()
            .find(|cluster| cluster.name == name)
            .map(|cluster| cluster.nodes)
            .unwrap_or_default();
        let cluster = name.to_owned();
        let Some(mut view) = self
            .read(move |store| node_infra::view(store, &cluster, &nodes))
            .await?
        else {
            return Ok(None);
        };
        let names = self
            .identities
            .names(node_infra::winners(&view), NAMING_BUDGET)
            .await;
        node_infra::name_winners(&mut view, &names);
        Ok(Some(view))
    }

    /// The kubeconfigs saved here for the signed-in account, kept across restarts, each with
    /// what no longer works (its file gone, its certificate expired).
    pub fn kubeconfigs(&self) -> Result<Vec<KubeconfigView>, DeskError> {
        let kept = self.kept_kubeconfigs().ok_or(DeskError::SignedOut)?;
        let live: Option<Vec<String>> = self
            .lock_clusters()
            .as_ref()
            .map(ClusterSession::view)
            .filter(|view| view.connection == "live")
            .map(|view| view.clusters.into_iter().map(|row| row.name).collect());
        let world = kubeconfigs::World {
            now: SystemClock.now(),
            exists: &Path::exists,
            clusters: live.as_deref(),
        };
        Ok(kubeconfigs::views(kept.list(), &world))
    }

    /// Removes a kubeconfig file this installation saved, and forgets it (the fix of a
    /// kubeconfig that no longer works); refused for any other path.
    pub fn forget_kubeconfig(&self, path: &str) -> Result<(), DeskError> {
        let kept = self.kept_kubeconfigs().ok_or(DeskError::SignedOut)?;
        KubeconfigPaths::check_removable(Path::new(path))
            .map_err(|refused| DeskError::Kubeconfig(refused.to_string()))?;
        match kept.forget(path) {
            Ok(true) => Ok(()),
            Ok(false) => Err(DeskError::Kubeconfig(format!(
                "{path} is not a kubeconfig saved here; nothing was removed"
            ))),
            Err(error) => Err(DeskError::Kubeconfig(format!(
                "{path} could not be removed: {error}"
            ))),
        }
    }

    /// Records a path the owner picked in the system's save dialog for a kubeconfig (the
    /// shell opens the dialog; the window never names such a path itself).
    pub fn kubeconfig_path_chosen(&self, path: &Path) {
        self.kubeconfig_paths.chosen(path);
    }

    fn kubeconfig_path(&self, path: &Path) -> Result<PathBuf, DeskError> {
        self.kubeconfig_paths
            .check(path)
            .map_err(|refused| DeskError::Kubeconfig(refused.to_string()))
    }

    fn kept_kubeconfigs(&self) -> Option<KeptKubeconfigs> {
        let did = self.sessions.agent()?.did();
        Some(KeptKubeconfigs::beside(&store_path(&self.data_dir, &did)))
    }

    /// Applies one object to a cluster server-side (or dry-runs it).
    pub async fn apply(&self, request: ApplyRequest<'_>) -> Result<Applied, DeskError> {
        Ok(clusters::apply(&self.gateway()?, request).await?)
    }

    /// A Job of a cluster, with its last log lines.
    pub async fn job(
        &self,
        cluster: &str,
        namespace: &str,
        name: &str,
        tail_lines: u32,
    ) -> Result<JobView, DeskError> {
        Ok(clusters::job(&self.gateway()?, cluster, namespace, name, tail_lines).await?)
    }

    fn gateway(&self) -> Result<GatewayClient, DeskError> {
        self.lock_clusters()
            .as_ref()
            .map(|session| session.client().clone())
            .ok_or_else(|| self.no_clusters())
    }

    fn no_clusters(&self) -> DeskError {
        if self.sessions.network().gateway_did.is_none() {
            DeskError::NoGateway
        } else {
            DeskError::SignedOut
        }
    }

    fn lock_clusters(&self) -> std::sync::MutexGuard<'_, Option<ClusterSession>> {
        self.clusters
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// What the controller needs to run contracts on the network's market: its offerings and
    /// the account's attestation key from the keychain. Without either, contracts wait.
    async fn market_access(&self, did: &str) -> Option<MarketAccess> {
        let network = self.sessions.network();
        let offerings = network.market.clone()?;
        let (keychain, did) = (network.keychain_name.clone(), did.to_owned());
        let opened = tokio::task::spawn_blocking(move || {
            let keychain = Keychain::open(&keychain)?;
            let key = keychain.attestation_key(&did)?;
            Ok::<_, swdesk_atproto::keychain::KeychainError>((key, keychain.secret_values(&did)))
        })
        .await
        .map_err(|error| error.to_string())
        .and_then(|opened| opened.map_err(|error| error.to_string()));
        match opened {
            Ok((key, values)) => Some(MarketAccess {
                offerings,
                key,
                vault: Some(Arc::new(values)),
                follow_winners: true,
            }),
            Err(error) => {
                tracing::error!(%error, "no attestation key: contracts wait for the market");
                None
            }
        }
    }

    /// Starts following the signed-in owner's clusters, when the network has a gateway.
    fn follow_clusters(&self, agent: &swdesk_atproto::Agent, resolver: &Resolver) {
        let Some(did) = self.sessions.network().gateway_did.clone() else {
            return;
        };
        let client = GatewayClient::new(
            GatewayClientConfig::new(did, resolver.clone()),
            agent.clone(),
        );
        let live = self.live.clone();
        let kept = LastSeen::beside(&store_path(&self.data_dir, &agent.did()));
        let (identities, own) = (self.identities.clone(), agent.did());
        let session = ClusterSession::start(client, kept, move |view| {
            let view = named_clusters(&identities, view, Some(&own));
            let _no_window = live.send(LiveEvent::Clusters(view));
        });
        if let Some(previous) = self.lock_clusters().replace(session) {
            previous.stop();
        }
    }

    async fn read<T: Send + 'static>(
        &self,
        read: impl FnOnce(&Store) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, DeskError> {
        let running = self.running().await;
        let controller = running.as_ref().ok_or_else(|| self.not_running())?;
        controller.with_store(read).await?.map_err(store_error)
    }

    async fn intent<T: Send + 'static>(
        &self,
        intent: impl FnOnce(&Store) -> Result<T, IntentError> + Send + 'static,
    ) -> Result<T, DeskError> {
        let running = self.running().await;
        let controller = running.as_ref().ok_or_else(|| self.not_running())?;
        Ok(controller.with_store(intent).await??)
    }

    /// The running controller; if it could not start for someone signed in, it is tried
    /// again first (a store another process held may be free now).
    async fn running(&self) -> tokio::sync::MutexGuard<'_, Option<AccountController>> {
        let due = self
            .lock_start_failure()
            .as_ref()
            .is_some_and(|failure| std::time::Instant::now() >= failure.retry_at);
        if due && self.sessions.agent().is_some() {
            self.ensure_controller().await;
        }
        self.controller.lock().await
    }

    /// Why there is no controller to ask: nobody signed in, or why it could not start.
    fn not_running(&self) -> DeskError {
        match (self.sessions.agent(), self.controller_error()) {
            (Some(_), Some(why)) => DeskError::NotRunning(why),
            _ => DeskError::SignedOut,
        }
    }

    /// The sessions of the network.
    pub fn sessions(&self) -> &Sessions {
        &self.sessions
    }

    /// The session now (restored at the first call), with the controller running if someone
    /// is signed in.
    pub async fn session(&self) -> SessionView {
        let view = self.sessions.current().await;
        if matches!(view, SessionView::SignedIn(_)) {
            self.ensure_controller().await;
        } else {
            self.stop_controller().await;
        }
        view
    }

    /// Signs in through the browser, then starts the account's controller.
    pub async fn sign_in(&self, input: &str) -> Result<Account, SessionError> {
        let account = self.sessions.sign_in(input).await?;
        self.ensure_controller().await;
        Ok(account)
    }

    /// Stops the controller, then revokes and forgets the session.
    pub async fn sign_out(&self) -> Result<(), SessionError> {
        self.shut_down().await;
        self.sessions.sign_out().await
    }

    /// Stops following the clusters and stops the controller (running reconciles finish within
    /// its grace); the session and the store stay for the next start. The app calls this as it
    /// quits.
    pub async fn shut_down(&self) {
        if let Some(session) = self.lock_clusters().take() {
            session.stop();
        }
        self.stop_controller().await;
    }

    /// The URL the owner's repo is followed at instead of their PDS, as Settings keeps it
    /// (none: their PDS).
    pub fn live_source(&self) -> Option<String> {
        self.live_source.url()
    }

    /// Follows the owner's repo at `url` from now on (empty: their PDS): checked by the
    /// network's outbound policy (refused whole, naming every problem, nothing kept), kept in
    /// the profile's settings, and the running controller started again on it.
    pub async fn set_live_source(&self, url: &str) -> Result<Option<String>, DeskError> {
        let policy = self.sessions.network().outbound.policy().clone();
        let source = LiveSource::parse(url, &policy).inspect_err(|refused| {
            tracing::info!(%refused, "a live source was refused");
        })?;
        self.live_source
            .keep(&source)
            .map_err(|error| DeskError::Settings(error.to_string()))?;
        tracing::info!(source = ?source.service().map(url::Url::as_str), "the live source changed");
        if self.controller.lock().await.is_some() {
            self.restart_controller().await;
        }
        Ok(self.live_source())
    }

    /// Starts the account's controller again on the session now (after the session was
    /// replaced by one with more granted), so no part of the app keeps the old one.
    pub(crate) async fn restart_controller(&self) {
        self.stop_controller().await;
        self.ensure_controller().await;
    }

    /// Stops the account's controller, if one runs (its store and declarations stay).
    async fn stop_controller(&self) {
        if let Some(controller) = self.controller.lock().await.take() {
            controller.stop().await;
            let _no_window = self.live.send(LiveEvent::ControllerRunning(false));
        }
    }

    /// How the index at `self` stands (the count in the list's header, the rows waiting for
    /// room, the notice above the list); the default, nothing known, while no one is signed in.
    pub async fn index_health(&self) -> IndexHealth {
        self.controller
            .lock()
            .await
            .as_ref()
            .map(AccountController::index_health)
            .unwrap_or_default()
    }

    /// Whether edits made on the owner's other devices arrive live or by polling, and why
    /// (`polling`, "nobody is signed in", without a controller).
    pub async fn live_status(&self) -> LiveStatus {
        let running = self.controller.lock().await;
        running.as_ref().map_or_else(
            || LiveStatus {
                mode: "polling".to_owned(),
                why: Some("the controller is not running".to_owned()),
                source: self.live_source(),
            },
            AccountController::live_status,
        )
    }

    /// Why the controller is not running although someone is signed in, if it is not.
    pub fn controller_error(&self) -> Option<String> {
        self.lock_start_failure()
            .as_ref()
            .map(|failure| failure.why.clone())
    }

    fn lock_start_failure(&self) -> std::sync::MutexGuard<'_, Option<StartFailure>> {
        self.start_failure
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    async fn ensure_controller(&self) {
        let Some(agent) = self.sessions.agent() else {
            return;
        };
        let mut running = self.controller.lock().await;
        if running
            .as_ref()
            .is_some_and(|controller| controller.did() == agent.did())
        {
            return;
        }
        if let Some(previous) = running.take() {
            previous.stop().await;
        }
        let network = self.sessions.network();
        let resolver = Resolver::new(network.oauth.identity.clone(), network.outbound.clone());
        let retrying = self
            .lock_start_failure()
            .as_ref()
            .is_some_and(|failure| failure.did == agent.did());
        if !retrying {
            self.follow_clusters(&agent, &resolver);
        }
        let market = self.market_access(&agent.did()).await;
        let agent_for_end = agent.clone();
        let did = agent.did();
        let started = AccountController::start_on_market(
            &self.data_dir,
            agent,
            resolver,
            market,
            EngineConfig::default(),
            self.live_source.source(network.outbound.policy()),
        )
        .await;
        let mut failure = self.lock_start_failure();
        match started {
            Ok(controller) => {
                controller.forward(&self.live);
                let clusters = self.lock_clusters().as_ref().map(ClusterSession::view);
                controller.follow_node_infras(&self.live, clusters);
                tell_when_ended(&agent_for_end, &self.live);
                *running = Some(controller);
                let _no_window = self.live.send(LiveEvent::ControllerRunning(true));
                *failure = None;
            }
            Err(error) => {
                tracing::error!(%error, "the controller could not start");
                *failure = Some(StartFailure {
                    did,
                    why: error.to_string(),
                    retry_at: std::time::Instant::now() + START_RETRY,
                });
            }
        }
    }
}

/// Tells the window once the session of `agent` ends (its grant gone), so it reads the session
/// again at once, not at the next thing the owner does.
fn tell_when_ended(agent: &swdesk_atproto::Agent, live: &broadcast::Sender<LiveEvent>) {
    let mut ended = agent.on_end();
    let live = live.clone();
    tokio::spawn(async move {
        if ended.wait_for(Option::is_some).await.is_ok() {
            let _no_window = live.send(LiveEvent::SessionEnded);
        }
    });
}

fn store_error(error: StoreError) -> DeskError {
    DeskError::Intent(IntentError::Store(error))
}

/// `view` with its members named as far as `identities` know now, and the signed-in owner
/// (`own`) marked.
fn named_clusters(
    identities: &Identities,
    mut view: ClustersView,
    own: Option<&str>,
) -> ClustersView {
    let names = identities.names_now(clusters::member_dids(&view.clusters));
    clusters::name_members(&mut view.clusters, &names, own.unwrap_or_default());
    view
}
