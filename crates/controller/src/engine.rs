//! The running controller: one [`Controller`] per kind over one store, the owner's repo and a
//! market, fed by the store's watch. Every committed change triggers its own object and, for a
//! child (an AtprotoRecord, a ComputeContract), the deployment that owns it; each kind also
//! lists all its objects at start and every resync period. The index writer runs beside them.
//! An edit made elsewhere reaches the view through `changes.rs`: the live feed of the owner's
//! repo when there is one (seen within a second), a poll of the owner's collections every
//! `remote_poll` while it is not live, every `live_poll` while it is.
//!
//! Invariants: the watch is subscribed before the first listing, so no change falls between
//! the two; a watcher that lags behind the store relists every kind instead of guessing; the
//! engine stops every controller within one grace period.

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use swdesk_auction::compute::ComputeContractSpec;
use swdesk_auction::market::Market;
use swdesk_core::collection::{EphemeralInfraCollectionSpec, InfraCollectionSpec};
use swdesk_core::index_health::IndexHealth;
use swdesk_core::infra::{EphemeralInfraSpec, InfraSpec};
use swdesk_core::record::AtprotoRecordSpec;
use swdesk_core::sync::Resolution;
use swdesk_kernel::name::Name;
use swdesk_kernel::object::{Kind, OwnerRef};
use swdesk_kernel::repo::RecordRepo;
use swdesk_kernel::repo::live::LiveState;
use swdesk_kernel::timestamp::Clock;
use swdesk_store::{Change, Event, Resource, Store};
use tokio::sync::broadcast::error::RecvError;
use tokio::task::JoinHandle;

use crate::changes::{self, LiveFeed};
use crate::context::{Context, ReconcileError};
use crate::index_writer::IndexWriter;
use crate::kinds::collection::CollectionReconciler;
use crate::kinds::compute::ComputeReconciler;
use crate::kinds::deployment::{DeploymentReconciler, resolve_conflict};
use crate::kinds::record::RecordReconciler;
use crate::remote::RemoteView;
use crate::runtime::{
    Controller, ControllerConfig, KeyLister, KeyStatus, ObjectKey, RuntimeEvent, Trigger,
};

/// How the engine runs.
#[derive(Debug, Clone, Copy)]
pub struct EngineConfig {
    /// Each controller's queue settings (debounce, concurrency, resync period).
    pub controllers: ControllerConfig,
    /// How old a listing of the owner's records may be before it is read again.
    pub remote_max_age: Duration,
    /// How often the owner's collections are listed to notice edits made elsewhere (another
    /// device, another app) while the owner's repo is not followed live: one page per 100
    /// records; a difference looks at every object.
    pub remote_poll: Duration,
    /// The same listing while the repo is followed live: a safety net only.
    pub live_poll: Duration,
}

impl Default for EngineConfig {
    fn default() -> Self {
        Self {
            controllers: ControllerConfig::default(),
            remote_max_age: Duration::from_secs(60),
            remote_poll: Duration::from_secs(30),
            live_poll: Duration::from_secs(600),
        }
    }
}

/// The embedded core controller, running.
#[derive(Debug)]
pub struct Engine {
    controllers: Vec<Controller>,
    tasks: Vec<JoinHandle<()>>,
    conflicts: Arc<dyn ConflictResolver>,
    index_health: tokio::sync::watch::Receiver<IndexHealth>,
    live: tokio::sync::watch::Sender<LiveState>,
}

/// The owner's answers to conflicts, over the engine's store and view of the repo.
trait ConflictResolver: Send + Sync + std::fmt::Debug {
    fn resolve<'a>(
        &'a self,
        kind: Kind,
        name: &'a Name,
        resolution: Resolution,
    ) -> Pin<Box<dyn Future<Output = Result<(), ReconcileError>> + Send + 'a>>;
}

struct Conflicts<R> {
    context: Context<R>,
    view: Arc<RemoteView<R>>,
}

impl<R> std::fmt::Debug for Conflicts<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Conflicts").finish_non_exhaustive()
    }
}

impl<R: RecordRepo + 'static> ConflictResolver for Conflicts<R> {
    fn resolve<'a>(
        &'a self,
        kind: Kind,
        name: &'a Name,
        resolution: Resolution,
    ) -> Pin<Box<dyn Future<Output = Result<(), ReconcileError>> + Send + 'a>> {
        let (context, view) = (&self.context, &self.view);
        Box::pin(async move {
            match kind {
                Kind::Infra => {
                    resolve_conflict::<InfraSpec, R>(context, view, name, resolution).await
                }
                Kind::EphemeralInfra => {
                    resolve_conflict::<EphemeralInfraSpec, R>(context, view, name, resolution).await
                }
                other => Err(ReconcileError::Invalid(format!(
                    "a {other:?} is not a deployment; only deployments have conflicts"
                ))),
            }
        })
    }
}

impl Engine {
    /// Starts every controller on the current tokio runtime; edits made elsewhere are seen
    /// by polling.
    pub fn start<R: RecordRepo + 'static, M: Market + 'static>(
        store: Arc<Store>,
        repo: Arc<R>,
        market: Arc<M>,
        clock: Arc<dyn Clock>,
        config: EngineConfig,
    ) -> Self {
        Self::start_following(store, repo, market, clock, config, None)
    }

    /// Starts every controller on the current tokio runtime, following the owner's repo live
    /// through `feed` when there is one (polling only as a safety net while it is live).
    pub fn start_following<R: RecordRepo + 'static, M: Market + 'static>(
        store: Arc<Store>,
        repo: Arc<R>,
        market: Arc<M>,
        clock: Arc<dyn Clock>,
        config: EngineConfig,
        feed: Option<LiveFeed>,
    ) -> Self {
        let watch = store.watch();
        let context = Context::new(Arc::clone(&store), Arc::clone(&repo), Arc::clone(&clock));
        let view = Arc::new(RemoteView::new(Arc::clone(&repo), config.remote_max_age));
        let index = IndexWriter::new(repo, Arc::clone(&view), clock);
        let conflicts = Arc::new(Conflicts {
            context: context.clone(),
            view: Arc::clone(&view),
        });
        let settings = config.controllers;
        let controllers = vec![
            Controller::spawn_with_resync(
                Kind::Infra,
                DeploymentReconciler::<InfraSpec, R>::new(
                    context.clone(),
                    Arc::clone(&view),
                    Arc::clone(&index),
                ),
                settings,
                lister::<InfraSpec>(&store),
            ),
            Controller::spawn_with_resync(
                Kind::EphemeralInfra,
                DeploymentReconciler::<EphemeralInfraSpec, R>::new(
                    context.clone(),
                    Arc::clone(&view),
                    Arc::clone(&index),
                ),
                settings,
                lister::<EphemeralInfraSpec>(&store),
            ),
            Controller::spawn_with_resync(
                Kind::AtprotoRecord,
                RecordReconciler::new(context.clone()),
                settings,
                lister::<AtprotoRecordSpec>(&store),
            ),
            Controller::spawn_with_resync(
                Kind::ComputeContract,
                ComputeReconciler::new(context.clone(), market),
                settings,
                lister::<ComputeContractSpec>(&store),
            ),
            Controller::spawn_with_resync(
                Kind::InfraCollection,
                CollectionReconciler::<InfraCollectionSpec, InfraSpec, R>::new(
                    context.clone(),
                    Arc::clone(&view),
                ),
                settings,
                lister::<InfraCollectionSpec>(&store),
            ),
            Controller::spawn_with_resync(
                Kind::EphemeralInfraCollection,
                CollectionReconciler::<EphemeralInfraCollectionSpec, EphemeralInfraSpec, R>::new(
                    context,
                    Arc::clone(&view),
                ),
                settings,
                lister::<EphemeralInfraCollectionSpec>(&store),
            ),
        ];
        let triggers: Vec<Trigger> = controllers.iter().map(Controller::trigger).collect();
        let relist = {
            let (store, triggers) = (Arc::clone(&store), triggers.clone());
            move || {
                let (store, triggers) = (Arc::clone(&store), triggers.clone());
                async move {
                    let send = |kind: Kind, name: Name| schedule(&triggers, kind, name);
                    relist(&store, &send).await;
                }
            }
        };
        let unfollowed = "the owner's repo is not followed live".to_owned();
        let live = tokio::sync::watch::Sender::new(LiveState::Polling { why: unfollowed });
        let poll = changes::poll(
            Arc::clone(&view),
            live.subscribe(),
            config.remote_poll,
            config.live_poll,
            relist.clone(),
        );
        let index_health = index.health();
        let mut tasks = vec![
            tokio::spawn(index.run()),
            tokio::spawn(route(Arc::clone(&store), watch, triggers)),
            tokio::spawn(poll),
        ];
        if let Some(feed) = feed {
            let follow = changes::follow(feed, view, store, live.clone(), relist);
            tasks.push(tokio::spawn(follow));
        }
        Self {
            controllers,
            tasks,
            conflicts,
            index_health,
            live,
        }
    }

    /// Whether edits made elsewhere arrive live or by polling, and why, as it changes.
    pub fn live_state(&self) -> tokio::sync::watch::Receiver<LiveState> {
        self.live.subscribe()
    }

    /// How the index at `self` stands (its count, what waits for room, why it is not written
    /// when another client's index is there), as it changes.
    pub fn index_health(&self) -> tokio::sync::watch::Receiver<IndexHealth> {
        self.index_health.clone()
    }

    /// Applies the owner's answer to the conflict of the deployment `kind`/`name`, then runs
    /// its reconcile, which writes the record (keep local) or applies it here (take record).
    /// Refused, changing nothing, when the deployment is not in conflict.
    pub async fn resolve_conflict(
        &self,
        kind: Kind,
        name: &Name,
        resolution: Resolution,
    ) -> Result<(), ReconcileError> {
        self.conflicts.resolve(kind, name, resolution).await?;
        self.schedule(&ObjectKey::new(kind, name.clone()));
        Ok(())
    }

    /// What the controller of `kind` knows about `name`: last action, error, next run.
    pub fn status(&self, kind: Kind, name: &Name) -> Option<KeyStatus> {
        self.controller(kind)
            .and_then(|controller| controller.status(name))
    }

    /// Every reconcile as it starts, ends or fails, for the Activity view.
    pub fn events(&self) -> Vec<tokio::sync::broadcast::Receiver<RuntimeEvent>> {
        self.controllers.iter().map(Controller::events).collect()
    }

    /// Schedules `key` now (the owner asked for it, e.g. after resolving a conflict).
    pub fn schedule(&self, key: &ObjectKey) {
        if let Some(controller) = self.controller(key.kind) {
            let _stopped = controller.trigger().schedule(key.name.clone());
        }
    }

    /// A handle that schedules objects of `kind` (for a caller that learns of changes the
    /// store does not show, such as a record another account keeps).
    pub fn trigger(&self, kind: Kind) -> Option<Trigger> {
        self.controller(kind).map(Controller::trigger)
    }

    fn controller(&self, kind: Kind) -> Option<&Controller> {
        self.controllers
            .iter()
            .find(|controller| controller.kind() == kind)
    }

    /// Stops every controller, letting running reconciles finish within `grace`.
    pub async fn shutdown(self, grace: Duration) {
        for task in &self.tasks {
            task.abort();
        }
        for controller in self.controllers {
            let kind = controller.kind();
            match controller.shutdown(grace).await {
                Ok(report) if !report.cut_off.is_empty() => {
                    tracing::warn!(?kind, cut_off = ?report.cut_off, "reconciles cut off at shutdown");
                }
                Ok(_) => {}
                Err(error) => tracing::warn!(?kind, %error, "a controller did not stop cleanly"),
            }
        }
    }
}

/// Lists every object name of kind `R` in the store: the resync's source.
#[derive(Debug)]
struct StoreLister<R> {
    store: Arc<Store>,
    kind: PhantomData<fn() -> R>,
}

fn lister<R: Resource>(store: &Arc<Store>) -> StoreLister<R> {
    StoreLister {
        store: Arc::clone(store),
        kind: PhantomData,
    }
}

impl<R: Resource> KeyLister for StoreLister<R> {
    type Error = String;

    async fn list(&self) -> Result<Vec<Name>, String> {
        let listed = self.store.call(|store| store.list::<R>()).await;
        listed
            .and_then(|names| names)
            .map_err(|error| error.to_string())
            .map(|objects| {
                objects
                    .into_iter()
                    .map(|object| object.metadata.name)
                    .collect()
            })
            .map_err(|error| error.to_string())
    }
}

/// Routes every committed change to the controller of its kind, and a child's change to the
/// controller of its owner too.
async fn route(
    store: Arc<Store>,
    mut watch: tokio::sync::broadcast::Receiver<Event>,
    triggers: Vec<Trigger>,
) {
    let send = |kind: Kind, name: Name| schedule(&triggers, kind, name);
    loop {
        match watch.recv().await {
            Ok(event) => {
                send(event.kind, event.name.clone());
                if event.change != Change::Deleted {
                    for owner in owners(&store, &event).await {
                        send(owner.kind, owner.name);
                    }
                }
            }
            Err(RecvError::Lagged(missed)) => {
                tracing::warn!(
                    missed,
                    "the controller fell behind the store; relisting every kind"
                );
                relist(&store, &send).await;
            }
            Err(RecvError::Closed) => return,
        }
    }
}

/// Schedules `name` on the controller of `kind`.
fn schedule(triggers: &[Trigger], kind: Kind, name: Name) {
    if let Some(trigger) = triggers.iter().find(|trigger| trigger.kind() == kind) {
        let _stopped = trigger.schedule(name);
    }
}

/// The owners of the changed object (children only: deployments own records and contracts).
async fn owners(store: &Arc<Store>, event: &Event) -> Vec<OwnerRef> {
    let name = event.name.clone();
    let refs = match event.kind {
        Kind::AtprotoRecord => {
            store
                .call(move |store| {
                    let found = store.get::<AtprotoRecordSpec>(&name);
                    found.map(|found| found.map(|object| object.metadata.owner_refs))
                })
                .await
        }
        Kind::ComputeContract => {
            store
                .call(move |store| {
                    let found = store.get::<ComputeContractSpec>(&name);
                    found.map(|found| found.map(|object| object.metadata.owner_refs))
                })
                .await
        }
        _ => return Vec::new(),
    };
    refs.and_then(|found| found)
        .ok()
        .flatten()
        .unwrap_or_default()
}

async fn relist(store: &Arc<Store>, send: &impl Fn(Kind, Name)) {
    for (kind, names) in [
        (Kind::Infra, lister::<InfraSpec>(store).list().await),
        (
            Kind::EphemeralInfra,
            lister::<EphemeralInfraSpec>(store).list().await,
        ),
        (
            Kind::AtprotoRecord,
            lister::<AtprotoRecordSpec>(store).list().await,
        ),
        (
            Kind::ComputeContract,
            lister::<ComputeContractSpec>(store).list().await,
        ),
        (
            Kind::InfraCollection,
            lister::<InfraCollectionSpec>(store).list().await,
        ),
        (
            Kind::EphemeralInfraCollection,
            lister::<EphemeralInfraCollectionSpec>(store).list().await,
        ),
    ] {
        for name in names.unwrap_or_default() {
            send(kind, name);
        }
    }
}
