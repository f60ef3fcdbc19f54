//! The two traits a kind plugs into the runtime: [`Reconciler`] (make one object converge) and
//! [`KeyLister`] (list every object of the kind, for the periodic resync).
//!
//! Invariants a reconciler keeps: it is idempotent and level-triggered (it reads the object
//! afresh and never branches on why it runs); it may be called for a key whose object is gone
//! and then returns quietly; it never runs twice at once for one key (the runtime sees to that),
//! but runs for different keys concurrently, hence `&self` and `Sync`.

use std::fmt::Display;
use std::future::Future;
use std::sync::Arc;

use swdesk_kernel::name::Name;

use super::action::{Action, Backoff};
use super::key::ObjectKey;

/// Makes one object converge on its spec; the kube-rs `reconcile` and `error_policy` pair. The
/// implementing value is the context (store, ports, clock) every run shares.
pub trait Reconciler: Send + Sync + 'static {
    /// Why a reconcile failed; its `Display` is what the status and the events show.
    type Error: std::error::Error + Send + Sync + 'static;

    /// Brings the object of `key` one step closer to its spec and says when to look again.
    fn reconcile(
        &self,
        key: &ObjectKey,
    ) -> impl Future<Output = Result<Action, Self::Error>> + Send;

    /// What to do after the `attempt`-th consecutive failure of `key` (1 for the first).
    /// By default [`Backoff::DEFAULT`]: 1 s doubling to 5 min.
    fn error_policy(&self, _key: &ObjectKey, _error: &Self::Error, attempt: u32) -> Action {
        Action::backoff(&Backoff::DEFAULT, attempt)
    }
}

/// A shared reconciler is one, so its owner may keep a handle to it.
impl<R: Reconciler> Reconciler for Arc<R> {
    type Error = R::Error;

    fn reconcile(
        &self,
        key: &ObjectKey,
    ) -> impl Future<Output = Result<Action, Self::Error>> + Send {
        R::reconcile(self, key)
    }

    fn error_policy(&self, key: &ObjectKey, error: &Self::Error, attempt: u32) -> Action {
        R::error_policy(self, key, error, attempt)
    }
}

/// Lists the names of every object of one kind: the resync's source, typically a store query.
/// Any `Fn() -> impl Future<Output = Result<Vec<Name>, E>>` closure is one.
pub trait KeyLister: Send + Sync + 'static {
    /// Why the listing failed; logged and reported as [`super::RuntimeEvent::ResyncFailed`].
    type Error: Display + Send + 'static;

    /// Every name of the kind.
    fn list(&self) -> impl Future<Output = Result<Vec<Name>, Self::Error>> + Send;
}

impl<F, Fut, E> KeyLister for F
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Vec<Name>, E>> + Send,
    E: Display + Send + 'static,
{
    type Error = E;

    fn list(&self) -> impl Future<Output = Result<Vec<Name>, E>> + Send {
        self()
    }
}
