//! The embedded core controller of the signed-in account: its object store (one SQLite file
//! per account under the app's data directory, so two accounts never share objects) and the
//! engine reconciling it against the account's repo. The compute market is not connected in
//! this build: contracts wait, and say so.
//!
//! Invariants: one running controller per account and store file; stopping it lets running
//! reconciles finish within a grace period; the store outlives the controller (objects stay
//! when the owner signs out, and the controller picks them up at the next sign-in).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use swdesk_atproto::attestation::AttestationKey;
use swdesk_atproto::firehose::{FollowConfig, Follower};
use swdesk_atproto::identity::Resolver;
use swdesk_atproto::{Agent, PdsRepo};
use swdesk_auction::market::Market;
use swdesk_auction::market::Unconnected;
use swdesk_controller::ReconcileError;
use swdesk_controller::{Engine, EngineConfig, LiveFeed, SystemClock};
use swdesk_core::collection::{
    CollectionStatus, EphemeralInfraCollectionSpec, InfraCollectionSpec,
};
use swdesk_core::deployment::Deployment;
use swdesk_core::index_health::IndexHealth;
use swdesk_core::sync::Resolution;
use swdesk_kernel::deployment_kind::DeploymentKind;
use swdesk_kernel::name::Name;
use swdesk_kernel::object::{Kind, Metadata, Object};
use swdesk_kernel::repo::RecordRepo;
use swdesk_kernel::repo::journal::Journaled;
use swdesk_kernel::repo::live::LiveState;
use swdesk_kernel::secret::SecretVault;
use swdesk_kernel::timestamp::Clock;
use swdesk_lexicon::text::peer_text;
use swdesk_market::winner_stream::WinnerStreams;
use swdesk_market::{OfferingSource, RequesterMarket};
use swdesk_store::random_uid;
use swdesk_store::{Event as StoreEvent, LockError, Resource, Store, StoreError, StoreLock};

use crate::activity::{self, ActivityEvent, SyncView, child_record};
use crate::deployments::{self, DeploymentChange, OWN_INDEX};
use crate::live_source::LiveSource;
use crate::node_infra;

/// How long running reconciles may take to finish when the controller stops.
const STOP_GRACE: Duration = Duration::from_secs(5);
/// How many record writes may wait for the activity stream before the oldest are dropped.
const WRITES_BACKLOG: usize = 256;

/// The controller could not start.
#[derive(Debug, thiserror::Error)]
pub enum ControllerError {
    /// The store file could not be opened.
    #[error("the local store at {path} could not be opened: {source}")]
    Store {
        /// The file.
        path: PathBuf,
        /// Why.
        source: StoreError,
    },
    /// The objects the controller needs from the start could not be made.
    #[error("the controller could not be set up: {0}")]
    Setup(String),
    /// The local store could not be read.
    #[error("the local store could not be read: {0}")]
    Read(String),
    /// Another process (or controller) runs on this account's store.
    #[error("the local store {0}")]
    Locked(#[from] LockError),
    /// The data directory could not be made.
    #[error("the data directory {path} could not be made: {source}")]
    DataDir {
        /// The directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// What the controller needs to run contracts on the compute market.
#[derive(Debug)]
pub struct MarketAccess {
    /// Where the bidders' offerings are found.
    pub offerings: OfferingSource,
    /// The account's key for inline attestations (kept in the keychain).
    pub key: AttestationKey,
    /// Where the values of secrets sealed to guests are read (the keychain); none: a
    /// contract's secrets wait.
    pub vault: Option<Arc<dyn SecretVault>>,
    /// Whether each winner's repo is followed live (`subscribeRepos`) while a contract waits
    /// for its guest, so Deployed follows its `vm.onNetwork` at once; else timed reads only.
    pub follow_winners: bool,
}

/// The controller of one account, running.
#[derive(Debug)]
pub struct AccountController {
    did: String,
    store: Arc<Store>,
    engine: Engine,
    /// Every record write the repo accepted, as activity (see [`activity::write_listener`]).
    writes: tokio::sync::broadcast::Sender<ActivityEvent>,
    forwarders: std::sync::Mutex<Vec<tokio::task::JoinHandle<()>>>,
    /// The owner's repo followed live (`subscribeRepos`), while this controller lives.
    _follower: Option<Follower>,
    /// Where it is followed.
    source: LiveSource,
    /// The store's lock, held while this controller lives (one controller per store).
    _lock: StoreLock,
}

/// What the window hears from the account's controller, as it happens.
#[derive(Debug, Clone)]
pub enum LiveEvent {
    /// A deployment changed in the store (boxed: a row is large beside the other events).
    Deployment(Box<DeploymentChange>),
    /// A step of the controller.
    Activity(ActivityEvent),
    /// An account's controller started (`true`: its deployments can be read now) or stopped.
    ControllerRunning(bool),
    /// The owner's clusters changed (or the connection to the gateway did).
    Clusters(crate::clusters::ClustersView),
    /// Deployment changes were lost on the way (a receiver fell behind the store): whoever
    /// shows deployments must list them again.
    DeploymentsStale,
    /// A DID shown as itself (its resolution took longer than the read could wait) now has
    /// its handle: whoever shows bidders and winners may read again.
    IdentityNamed,
    /// How the index at `self` stands now: its count, the deployments waiting for room, why
    /// it is not written (another client's index this version cannot read).
    IndexHealth(IndexHealth),
    /// The authorization server ended the session (the grant is gone): whoever shows the
    /// session reads it again, and the owner is asked to sign in.
    SessionEnded,
    /// Whether edits made elsewhere arrive live or by polling, and why.
    LiveStatus(LiveStatus),
}

/// Whether edits made on the owner's other devices arrive live or by polling, for the window.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct LiveStatus {
    /// `live` (the repo's stream is open), `connecting`, or `polling`.
    pub mode: String,
    /// Why it is not live (the last failure, cleaned); none when live.
    pub why: Option<String>,
    /// The service followed instead of the owner's PDS (a relay the owner named in
    /// Settings); none: their PDS.
    pub source: Option<String>,
}

impl LiveStatus {
    /// The status of a follower's state, following `source`.
    pub fn of(state: &LiveState, source: &LiveSource) -> Self {
        let (mode, why) = match state {
            LiveState::Live => ("live", None),
            LiveState::Connecting => ("connecting", None),
            LiveState::Polling { why } => ("polling", Some(peer_text(why, 200))),
        };
        Self {
            mode: mode.to_owned(),
            why,
            source: source.service().map(|url| url.as_str().to_owned()),
        }
    }
}

impl AccountController {
    /// Opens the account's store under `data_dir` and starts the engine over its repo.
    pub async fn start(
        data_dir: &Path,
        agent: Agent,
        resolver: Resolver,
        config: EngineConfig,
    ) -> Result<Self, ControllerError> {
        let follow = LiveSource::Pds;
        Self::start_on_market(data_dir, agent, resolver, None, config, follow).await
    }

    /// Opens the account's store and starts the engine over its repo, running contracts on
    /// the compute market `market` opens (or, without one, leaving them waiting), the repo
    /// followed live at `source`.
    pub async fn start_on_market(
        data_dir: &Path,
        agent: Agent,
        resolver: Resolver,
        market: Option<MarketAccess>,
        config: EngineConfig,
        source: LiveSource,
    ) -> Result<Self, ControllerError> {
        let writes = tokio::sync::broadcast::channel(WRITES_BACKLOG).0;
        let follow = Some(Following {
            resolver: resolver.clone(),
            source,
        });
        let journaled = |resolver: Resolver| {
            let listener = activity::write_listener(writes.clone());
            Journaled::new(PdsRepo::new(agent.clone(), resolver), listener)
        };
        let repo = journaled(resolver.clone());
        let mut controller = match market {
            Some(access) => {
                let mut market = RequesterMarket::connect_over(
                    Arc::new(journaled(resolver.clone())),
                    agent,
                    resolver,
                    access.offerings,
                    access.key,
                );
                if let Some(vault) = access.vault {
                    market = market.with_vault(vault);
                }
                if !access.follow_winners {
                    market = market.timed_reads_only();
                }
                let woken = market.winner_streams().map(WinnerStreams::woken);
                let controller =
                    Self::start_following(data_dir, repo, market, config, follow).await?;
                if let Some(woken) = woken {
                    controller.run_woken_contracts(woken);
                }
                controller
            }
            None => Self::start_following(data_dir, repo, Unconnected, config, follow).await?,
        };
        controller.writes = writes;
        Ok(controller)
    }

    /// Opens the store of `repo`'s owner under `data_dir` and starts the engine over `repo`
    /// (the account's `PdsRepo`, possibly wrapped, e.g. counted by a benchmark).
    pub async fn start_over<R: RecordRepo + 'static>(
        data_dir: &Path,
        repo: R,
        config: EngineConfig,
    ) -> Result<Self, ControllerError> {
        Self::start_with(data_dir, repo, Unconnected, config).await
    }

    /// Opens the store of `repo`'s owner and starts the engine over `repo` and `market`.
    pub async fn start_with<R: RecordRepo + 'static, M: Market + 'static>(
        data_dir: &Path,
        repo: R,
        market: M,
        config: EngineConfig,
    ) -> Result<Self, ControllerError> {
        Self::start_following(data_dir, repo, market, config, None).await
    }

    /// [`Self::start_with`], following the owner's repo live (`subscribeRepos` of their PDS,
    /// found with `follow`'s resolver, or of the service it names) from the cursor the store
    /// kept for that source, when `follow` is given.
    pub async fn start_following<R: RecordRepo + 'static, M: Market + 'static>(
        data_dir: &Path,
        repo: R,
        market: M,
        config: EngineConfig,
        follow: Option<Following>,
    ) -> Result<Self, ControllerError> {
        let did = repo.owner().to_owned();
        let path = store_path(data_dir, &did);
        let (store, lock) = open_store(path).await?;
        follow_own_index(&store, &did).await?;
        let source = follow
            .as_ref()
            .map(|follow| follow.source.clone())
            .unwrap_or_default();
        let (follower, feed) = match follow {
            Some(follow) => {
                let (follower, feed) = follow_repo(&store, &did, follow).await?;
                (Some(follower), Some(feed))
            }
            None => (None, None),
        };
        let engine = Engine::start_following(
            Arc::clone(&store),
            Arc::new(repo),
            Arc::new(market),
            Arc::new(SystemClock),
            config,
            feed,
        );
        tracing::info!(%did, "the controller runs");
        Ok(Self {
            did,
            store,
            engine,
            writes: tokio::sync::broadcast::channel(WRITES_BACKLOG).0,
            forwarders: std::sync::Mutex::default(),
            _follower: follower,
            source,
            _lock: lock,
        })
    }

    /// The account the controller runs for.
    pub fn did(&self) -> &str {
        &self.did
    }

    /// The account's object store.
    pub fn store(&self) -> &Arc<Store> {
        &self.store
    }

    /// Whether edits made elsewhere arrive live or by polling, and why.
    pub fn live_status(&self) -> LiveStatus {
        LiveStatus::of(&self.engine.live_state().borrow(), &self.source)
    }

    /// The engine (statuses, events).
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// How the deployment `name` of kind `D` stands with its record and the runtime.
    pub async fn sync_view<D: Deployment>(
        &self,
        name: &Name,
    ) -> Result<Option<SyncView>, ControllerError> {
        let name = name.clone();
        let read = self.store.call(move |store| {
            let object = store.get::<D>(&name)?;
            let child = match &object {
                Some(object) => child_record::<D>(store, object)?,
                None => None,
            };
            Ok::<_, StoreError>((object, child))
        });
        let object = read
            .await
            .and_then(|read| read)
            .map_err(|error| ControllerError::Read(error.to_string()))?;
        let (Some(object), child) = object else {
            return Ok(None);
        };
        let runtime = self.engine.status(D::KIND, &object.metadata.name);
        Ok(Some(SyncView::of::<D>(
            &object,
            child.as_ref(),
            runtime.as_ref(),
        )))
    }

    /// Runs `work` (a read or a write) on the store off the async executor, in its turn (see
    /// [`Store::call`]).
    pub async fn with_store<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Store) -> T + Send + 'static,
    ) -> Result<T, ControllerError> {
        (self.store.call(work).await).map_err(|error| ControllerError::Read(error.to_string()))
    }

    /// Sends every deployment change and every controller step to `sender` until the
    /// controller stops.
    pub fn forward(&self, sender: &tokio::sync::broadcast::Sender<LiveEvent>) {
        let mut activity = self.activity();
        let to_window = sender.clone();
        let steps = tokio::spawn(async move {
            while let Some(event) = activity.recv().await {
                let _no_window = to_window.send(LiveEvent::Activity(event));
            }
        });
        let changes = tokio::spawn(forward_changes(Arc::clone(&self.store), sender.clone()));
        let mut health = self.engine.index_health();
        let to_window = sender.clone();
        let index = tokio::spawn(async move {
            // What it is now first: the count read at start may predate this subscription.
            let now = health.borrow_and_update().clone();
            let _no_window = to_window.send(LiveEvent::IndexHealth(now));
            while health.changed().await.is_ok() {
                let now = health.borrow_and_update().clone();
                let _no_window = to_window.send(LiveEvent::IndexHealth(now));
            }
        });
        let mut live = self.engine.live_state();
        let to_window = sender.clone();
        let source = self.source.clone();
        let live_status = tokio::spawn(async move {
            let now = LiveStatus::of(&live.borrow_and_update(), &source);
            let _no_window = to_window.send(LiveEvent::LiveStatus(now));
            while live.changed().await.is_ok() {
                let now = LiveStatus::of(&live.borrow_and_update(), &source);
                let _no_window = to_window.send(LiveEvent::LiveStatus(now));
            }
        });
        self.forwarders
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .extend([steps, changes, index, live_status]);
    }

    /// Runs each contract whose winner's repo changed at once (its `market.event`s, heard on
    /// the winner's stream), not at its next recheck: the wait for its guest reads them.
    fn run_woken_contracts(&self, mut woken: tokio::sync::broadcast::Receiver<String>) {
        let Some(trigger) = self.engine.trigger(Kind::ComputeContract) else {
            return;
        };
        let task = tokio::spawn(async move {
            loop {
                let name = match woken.recv().await {
                    Ok(name) => name,
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                };
                let Ok(name) = Name::parse(&name) else {
                    continue;
                };
                if trigger.schedule(name).is_err() {
                    return;
                }
            }
        });
        self.forwarders
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(task);
    }

    /// Keeps, in the store, a read-only Infra following the node Infra of each cluster the
    /// gateway describes live (`now`, then every [`LiveEvent::Clusters`] on `live`), and has
    /// the controller read each again whenever the clusters' nodes change: the gateway
    /// rewrites its record as nodes come and go, which the store alone would not show. A
    /// change of anything else (a member, a phase) reads nothing.
    pub fn follow_node_infras(
        &self,
        live: &tokio::sync::broadcast::Sender<LiveEvent>,
        now: Option<crate::clusters::ClustersView>,
    ) {
        let mut events = live.subscribe();
        let store = Arc::clone(&self.store);
        let trigger = self.engine.trigger(Kind::Infra);
        let task = tokio::spawn(async move {
            let mut next = now;
            let mut nodes_seen = None;
            loop {
                if let Some(view) = next.take().filter(|view| view.connection == "live") {
                    let nodes: Vec<_> = (view.clusters.iter())
                        .map(|cluster| (cluster.name.clone(), cluster.nodes.clone()))
                        .collect();
                    if nodes_seen.as_ref() != Some(&nodes) {
                        keep_node_infras(&store, trigger.as_ref(), view.clusters).await;
                        nodes_seen = Some(nodes);
                    }
                }
                next = match events.recv().await {
                    Ok(LiveEvent::Clusters(view)) => Some(view),
                    // Each view is the whole board: a lost one is made good by the next.
                    Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => None,
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                };
            }
        });
        self.forwarders
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(task);
    }

    /// How the index at `self` stands: its count, what waits for room, and why it is not
    /// written when another client's index is there (the deployments keep syncing meanwhile).
    pub fn index_health(&self) -> IndexHealth {
        self.engine.index_health().borrow().clone()
    }

    /// Every step of the controller as it happens, for the Activity view.
    pub fn activity(&self) -> tokio::sync::mpsc::Receiver<ActivityEvent> {
        activity::follow(&self.engine, self.writes.subscribe())
    }

    /// Applies the owner's answer to the conflict of the deployment `kind`/`name`.
    pub async fn resolve_conflict(
        &self,
        kind: Kind,
        name: &Name,
        resolution: Resolution,
    ) -> Result<(), ReconcileError> {
        self.engine.resolve_conflict(kind, name, resolution).await
    }

    /// Stops the engine; the store stays on disk.
    pub async fn stop(self) {
        for forwarder in self
            .forwarders
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .drain(..)
        {
            forwarder.abort();
        }
        self.engine.shutdown(STOP_GRACE).await;
        tracing::info!(did = %self.did, "the controller stopped");
    }
}

/// [`node_infra::keep`] for `clusters`, then each kept follower looked at again.
async fn keep_node_infras(
    store: &Arc<Store>,
    trigger: Option<&swdesk_controller::runtime::Trigger>,
    clusters: Vec<crate::clusters::ClusterRow>,
) {
    let kept = store
        .call(move |store| node_infra::keep(store, &clusters, SystemClock.now()))
        .await;
    match kept {
        Ok(Ok(names)) => {
            for (name, trigger) in names.into_iter().filter_map(|name| Some((name, trigger?))) {
                let _stopped = trigger.schedule(name);
            }
        }
        Ok(Err(error)) => tracing::warn!(%error, "the clusters' node Infras could not be kept"),
        Err(error) => tracing::warn!(%error, "keeping the clusters' node Infras stopped"),
    }
}

/// Turns every committed change of a deployment, or of a contract it owns (bids, the guest's
/// events, its secrets), into the deployment's row, for the window. Changes that arrive
/// together are read together, once per deployment; when the store's events were lost (this
/// task fell behind), the window is told to list again instead.
async fn forward_changes(store: Arc<Store>, sender: tokio::sync::broadcast::Sender<LiveEvent>) {
    let mut watch = store.watch();
    while let Some(batch) = ChangedDeployments::next(&mut watch).await {
        if batch.lost {
            tracing::debug!("the window's change stream fell behind the store; it lists again");
            let _no_window = sender.send(LiveEvent::DeploymentsStale);
            continue;
        }
        let read = store.call(move |reader| {
            let mut changed = batch.changed;
            changed.extend(deployments::owners_of_contracts(reader, &batch.contracts)?);
            deployments::changes(reader, &changed)
        });
        match read.await {
            Ok(Ok(changes)) => {
                for change in changes {
                    let _no_window = sender.send(LiveEvent::Deployment(Box::new(change)));
                }
            }
            Ok(Err(error)) => tracing::warn!(%error, "a changed deployment could not be read"),
            Err(error) => tracing::warn!(%error, "reading a changed deployment stopped"),
        }
    }
}

/// The deployments changed in one burst of store events.
#[derive(Debug, Default)]
struct ChangedDeployments {
    changed: BTreeSet<(DeploymentKind, Name)>,
    /// ComputeContracts changed: their deployments changed too.
    contracts: BTreeSet<Name>,
    /// Events were lost: the changed set is incomplete.
    lost: bool,
}

impl ChangedDeployments {
    /// Waits for the next event, then takes every event already waiting; `None` once the store
    /// is gone.
    async fn next(watch: &mut tokio::sync::broadcast::Receiver<StoreEvent>) -> Option<Self> {
        use tokio::sync::broadcast::error::{RecvError, TryRecvError};
        let mut batch = Self::default();
        match watch.recv().await {
            Ok(event) => batch.add(&event),
            Err(RecvError::Lagged(_)) => batch.lost = true,
            Err(RecvError::Closed) => return None,
        }
        loop {
            match watch.try_recv() {
                Ok(event) => batch.add(&event),
                Err(TryRecvError::Lagged(_)) => batch.lost = true,
                Err(TryRecvError::Empty | TryRecvError::Closed) => return Some(batch),
            }
        }
    }

    fn add(&mut self, event: &StoreEvent) {
        if let Some(kind) = deployments::deployment_kind(event.kind) {
            self.changed.insert((kind, event.name.clone()));
        } else if event.kind == Kind::ComputeContract {
            self.contracts.insert(event.name.clone());
        }
    }
}

/// Makes sure the account's own index is followed, so deployments written on the owner's
/// other devices appear here (as followers).
async fn follow_own_index(store: &Arc<Store>, did: &str) -> Result<(), ControllerError> {
    let did = did.to_owned();
    let ensured = store.call(move |store| {
        ensure::<InfraCollectionSpec>(store, InfraCollectionSpec { repo: did.clone() })?;
        ensure::<EphemeralInfraCollectionSpec>(store, EphemeralInfraCollectionSpec { repo: did })
    });
    ensured
        .await
        .map_err(|error| ControllerError::Setup(error.to_string()))?
}

fn ensure<C: Resource<Status = CollectionStatus>>(
    store: &Store,
    spec: C,
) -> Result<(), ControllerError> {
    let setup = |error: &dyn std::fmt::Display| ControllerError::Setup(error.to_string());
    let name = Name::parse(OWN_INDEX).map_err(|error| setup(&error))?;
    if store
        .get::<C>(&name)
        .map_err(|error| setup(&error))?
        .is_some()
    {
        return Ok(());
    }
    let uid = random_uid().map_err(|error| setup(&error))?;
    let object = Object {
        metadata: Metadata::new(name, uid, SystemClock.now()),
        spec,
        status: CollectionStatus::default(),
    };
    match store.create::<C>(&object) {
        Ok(_) | Err(StoreError::AlreadyExists { .. }) => Ok(()),
        Err(error) => Err(setup(&error)),
    }
}

/// `<data_dir>/accounts/<did, ':' as '_'>/objects.sqlite`.
pub fn store_path(data_dir: &Path, did: &str) -> PathBuf {
    let folder: String = did
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    data_dir
        .join("accounts")
        .join(folder)
        .join("objects.sqlite")
}

/// Locks the store at `path` (one controller per store, across processes), then opens it.
async fn open_store(path: PathBuf) -> Result<(Arc<Store>, StoreLock), ControllerError> {
    let opened = tokio::task::spawn_blocking(move || {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|source| ControllerError::DataDir {
                path: dir.to_owned(),
                source,
            })?;
        }
        let lock = StoreLock::acquire(&path)?;
        let store = Store::open(&path).map_err(|source| ControllerError::Store { path, source })?;
        Ok((Arc::new(store), lock))
    })
    .await;
    opened.unwrap_or_else(|error| {
        Err(ControllerError::DataDir {
            path: PathBuf::new(),
            source: std::io::Error::other(error),
        })
    })
}

/// How the owner's repo is followed live: the resolver that finds their PDS and key, and
/// where the stream is read.
#[derive(Debug, Clone)]
pub struct Following {
    /// Finds the owner's PDS and signing key (through the outbound policy).
    pub resolver: Resolver,
    /// Their PDS, or the service the owner named.
    pub source: LiveSource,
}

/// Starts following `did`'s repo at `follow.source`, from the cursor `store` kept for it.
async fn follow_repo(
    store: &Arc<Store>,
    did: &str,
    follow: Following,
) -> Result<(Follower, LiveFeed), ControllerError> {
    let stream = follow.source.stream();
    let name = stream.clone();
    let kept = store.call(move |store| store.cursor(&name)).await;
    let cursor = kept
        .and_then(|kept| kept)
        .map_err(|error| ControllerError::Read(error.to_string()))?;
    let config = FollowConfig {
        did: did.to_owned(),
        cursor,
        service: follow.source.service().cloned(),
        limits: Default::default(),
    };
    tracing::info!(stream, "following the owner's repo live");
    let (follower, events) = Follower::start(follow.resolver, config);
    Ok((follower, LiveFeed { events, stream }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_account_has_a_store_folder_of_its_own_with_a_portable_name() {
        let path = store_path(Path::new("/data"), "did:plc:abc123");
        assert_eq!(
            path,
            Path::new("/data/accounts/did_plc_abc123/objects.sqlite")
        );
        let web = store_path(Path::new("/data"), "did:web:example.com%3A8080");
        assert_eq!(
            web,
            Path::new("/data/accounts/did_web_example.com_3A8080/objects.sqlite")
        );
    }

    fn event(kind: Kind, name: &str) -> StoreEvent {
        StoreEvent {
            kind,
            name: Name::parse(name).expect("a valid name"),
            uid: swdesk_kernel::object::Uid::parse("0f8e3c1a-5b2d-4c7e-9a10-2b3c4d5e6f70")
                .expect("a valid uid"),
            resource_version: 1,
            change: swdesk_store::Change::Modified,
        }
    }

    #[tokio::test]
    async fn a_burst_of_store_events_comes_to_one_read_per_deployment() {
        let (sender, mut watch) = tokio::sync::broadcast::channel(16);
        for (kind, name) in [
            (Kind::Infra, "web"),
            (Kind::Infra, "web"),
            (Kind::ComputeContract, "web-vm"),
            (Kind::EphemeralInfra, "web"),
            (Kind::Infra, "api"),
        ] {
            sender.send(event(kind, name)).expect("a receiver");
        }
        let batch = ChangedDeployments::next(&mut watch).await.expect("a batch");
        let named: Vec<(DeploymentKind, &str)> = batch
            .changed
            .iter()
            .map(|(kind, name)| (*kind, name.as_str()))
            .collect();
        assert_eq!(
            named,
            [
                (DeploymentKind::Infra, "api"),
                (DeploymentKind::Infra, "web"),
                (DeploymentKind::EphemeralInfra, "web"),
            ]
        );
        let contracts: Vec<&str> = batch.contracts.iter().map(Name::as_str).collect();
        assert_eq!(
            contracts,
            ["web-vm"],
            "read for the deployment that owns it"
        );
        assert!(!batch.lost);
        sender.send(event(Kind::Infra, "next")).expect("a receiver");
        let next = ChangedDeployments::next(&mut watch).await.expect("a batch");
        assert_eq!(
            next.changed.len(),
            1,
            "the first batch took only what was waiting"
        );
    }

    #[tokio::test]
    async fn events_lost_behind_the_store_are_told_and_the_stream_ends_with_the_store() {
        let (sender, mut watch) = tokio::sync::broadcast::channel(2);
        for name in ["a", "b", "c", "d"] {
            sender.send(event(Kind::Infra, name)).expect("a receiver");
        }
        let batch = ChangedDeployments::next(&mut watch).await.expect("a batch");
        assert!(batch.lost, "two of four events were lost");
        drop(sender);
        assert!(ChangedDeployments::next(&mut watch).await.is_none());
    }
}
