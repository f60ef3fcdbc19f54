//! What every reconciler shares: the object store (reached off the async executor), the ports
//! (the owner's repo, the clock), and the one error type a reconcile fails with.
//!
//! Invariants: store calls never run on the async executor ([`Context::store`] moves them to
//! the blocking pool); an error says which side failed (store, repo) so the status and the
//! Activity view can tell "waiting for the network" from "something is wrong here".

use std::sync::Arc;

use swdesk_core::deployment::RecordError;
use swdesk_kernel::name::Name;
use swdesk_kernel::repo::{RecordRepo, RepoError};
use swdesk_kernel::retry::{Backoff, Fault};
use swdesk_kernel::timestamp::{Clock, Timestamp};
use swdesk_store::{ObjectOf, Resource, Store, StoreError};

use crate::runtime::Action;
use crate::runtime::finalizer::{CleanupProgress, FinalizerError, FinalizerSteps, finalize};
use thiserror::Error;

/// Why a reconcile failed.
#[derive(Debug, Clone, Error)]
pub enum ReconcileError {
    /// The object store refused or failed (a conflict is retried at once by the runtime).
    #[error("the local store: {0}")]
    Store(String),
    /// The owner's repo refused or could not be reached.
    #[error("the repo: {0}")]
    Repo(#[from] RepoError),
    /// The compute market refused or could not be reached.
    #[error("{0}")]
    Market(String),
    /// An object holds something this version cannot work with.
    #[error("{0}")]
    Invalid(String),
}

impl ReconcileError {
    /// When to try again after the `attempt`-th consecutive failure: the kernel's retry rule, the
    /// runtime's default backoff, or the repo's own `Retry-After` when it asked for longer.
    pub fn retry(&self, attempt: u32) -> Action {
        let fault = match self {
            Self::Repo(error) => error.fault(),
            _ => Fault::Permanent,
        };
        Action::RequeueAfter(fault.delay(&Backoff::DEFAULT, attempt))
    }
}

impl From<RecordError> for ReconcileError {
    fn from(error: RecordError) -> Self {
        Self::Invalid(error.0)
    }
}

impl From<StoreError> for ReconcileError {
    fn from(error: StoreError) -> Self {
        Self::Store(error.to_string())
    }
}

/// The store, the ports and the clock, shared by the reconcilers of every kind.
pub struct Context<R> {
    store: Arc<Store>,
    repo: Arc<R>,
    clock: Arc<dyn Clock>,
}

impl<R> std::fmt::Debug for Context<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("store", &self.store)
            .finish_non_exhaustive()
    }
}

impl<R> Clone for Context<R> {
    fn clone(&self) -> Self {
        Self {
            store: Arc::clone(&self.store),
            repo: Arc::clone(&self.repo),
            clock: Arc::clone(&self.clock),
        }
    }
}

impl<R: RecordRepo + 'static> Context<R> {
    /// A context over `store`, writing to `repo`, telling time with `clock`.
    pub fn new(store: Arc<Store>, repo: Arc<R>, clock: Arc<dyn Clock>) -> Self {
        Self { store, repo, clock }
    }

    /// Runs `call` against the store, in its turn (see [`Store::call`]).
    pub async fn store<T, F>(&self, call: F) -> Result<T, ReconcileError>
    where
        T: Send + 'static,
        F: FnOnce(&Store) -> Result<T, StoreError> + Send + 'static,
    {
        Ok(self.store.call(call).await??)
    }

    /// The usual reconcile of an object of kind `S` that holds `finalizer`: read it afresh
    /// (gone: nothing to do), then the finalizer protocol with the kind's `apply` and `cleanup`.
    pub async fn reconcile_with_finalizer<S, Apply, Cleanup>(
        &self,
        name: &Name,
        finalizer: &'static str,
        apply: Apply,
        cleanup: Cleanup,
    ) -> Result<Action, ReconcileError>
    where
        S: Resource<Status: Clone> + Clone,
        Apply: AsyncFnOnce(&ObjectOf<S>) -> Result<Action, ReconcileError>,
        Cleanup: AsyncFnOnce(&ObjectOf<S>) -> Result<CleanupProgress, ReconcileError>,
    {
        let name = name.clone();
        let Some(object) = self.store(move |store| store.get::<S>(&name)).await? else {
            return Ok(Action::AwaitChange);
        };
        let steps = FinalizerSteps {
            add_finalizer: async || {
                let object = object.clone();
                self.store(move |store| store.add_finalizer::<S>(&object, finalizer))
                    .await
                    .map(drop)
            },
            apply: async || apply(&object).await,
            cleanup: async || cleanup(&object).await,
            remove_finalizer: async || {
                let object = object.clone();
                self.store(move |store| store.remove_finalizer::<S>(&object, finalizer))
                    .await
                    .map(drop)
            },
        };
        finalize(&object.metadata, finalizer, steps)
            .await
            .map_err(FinalizerError::into_inner)
    }

    /// The owner's repo.
    pub fn repo(&self) -> &R {
        &self.repo
    }

    /// Now.
    pub fn now(&self) -> Timestamp {
        self.clock.now()
    }
}
