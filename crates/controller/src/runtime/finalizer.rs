//! Finalizers, the kube-rs way: cleanup happens because an object holding our finalizer was
//! asked to go, never because of a delete event (which may be missed).
//!
//! [`next_step`] is the decision, pure: an object without our finalizer gets it first, one
//! holding it is applied, a deleting one holding it is cleaned up and then released, and a
//! deleting one without it needs nothing from us. [`finalize`] runs the step with the caller's
//! closures, so it needs no store.
//!
//! Invariants: apply never runs before the finalizer is in place, so every object we acted on
//! gets its cleanup; the finalizer goes only after a cleanup reported [`CleanupProgress::Done`]
//! (a cleanup may take several reconciles, e.g. waiting for a contract to end); adding the
//! finalizer ends the run with [`Action::AwaitChange`], since the object in hand is stale and the
//! write itself triggers the next run (unlike running apply at once on the stale object, this
//! never makes a write conflict on the old version).

use swdesk_kernel::object::Metadata;
use thiserror::Error;

use super::action::Action;

/// What a reconcile does about its finalizer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FinalizerStep {
    /// Not deleting and not holding the finalizer: add it (and apply on the next run).
    AddFinalizer,
    /// Not deleting and holding the finalizer: apply.
    Apply,
    /// Deleting and holding the finalizer: clean up, then remove the finalizer.
    Cleanup,
    /// Deleting and not holding the finalizer: our cleanup is done, nothing to do.
    Released,
}

/// How far a cleanup got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CleanupProgress {
    /// Everything is cleaned up: the finalizer may go.
    Done,
    /// Not yet: keep the finalizer and come back as the action says.
    Waiting(Action),
}

/// The step of `finalizer` for the object with `metadata`.
pub fn next_step(metadata: &Metadata, finalizer: &str) -> FinalizerStep {
    let holds = metadata.finalizers.iter().any(|held| held == finalizer);
    match (metadata.is_deleting(), holds) {
        (false, false) => FinalizerStep::AddFinalizer,
        (false, true) => FinalizerStep::Apply,
        (true, true) => FinalizerStep::Cleanup,
        (true, false) => FinalizerStep::Released,
    }
}

/// A step of [`finalize`] failed; the finalizer stays as it was.
#[derive(Debug, Error)]
pub enum FinalizerError<E> {
    /// Adding the finalizer failed.
    #[error("could not add the finalizer")]
    AddFinalizer(#[source] E),
    /// Applying failed.
    #[error("apply failed")]
    Apply(#[source] E),
    /// Cleaning up failed.
    #[error("cleanup failed")]
    Cleanup(#[source] E),
    /// Removing the finalizer after the cleanup failed.
    #[error("could not remove the finalizer")]
    RemoveFinalizer(#[source] E),
}

impl<E> FinalizerError<E> {
    /// The error of the step that failed.
    pub fn into_inner(self) -> E {
        match self {
            Self::AddFinalizer(error)
            | Self::Apply(error)
            | Self::Cleanup(error)
            | Self::RemoveFinalizer(error) => error,
        }
    }
}

/// The closures [`finalize`] runs; only those of the step are called.
#[derive(Debug)]
pub struct FinalizerSteps<Add, Apply, Cleanup, Remove> {
    /// Writes the finalizer onto the object.
    pub add_finalizer: Add,
    /// Makes the object converge; says when to look again.
    pub apply: Apply,
    /// Undoes what apply did; says whether it is done.
    pub cleanup: Cleanup,
    /// Removes the finalizer from the object.
    pub remove_finalizer: Remove,
}

/// Runs the [`next_step`] of `finalizer` for the object with `metadata`, and says what the
/// reconcile should return.
pub async fn finalize<E, Add, Apply, Cleanup, Remove>(
    metadata: &Metadata,
    finalizer: &str,
    steps: FinalizerSteps<Add, Apply, Cleanup, Remove>,
) -> Result<Action, FinalizerError<E>>
where
    Add: AsyncFnOnce() -> Result<(), E>,
    Apply: AsyncFnOnce() -> Result<Action, E>,
    Cleanup: AsyncFnOnce() -> Result<CleanupProgress, E>,
    Remove: AsyncFnOnce() -> Result<(), E>,
{
    match next_step(metadata, finalizer) {
        FinalizerStep::AddFinalizer => {
            (steps.add_finalizer)()
                .await
                .map_err(FinalizerError::AddFinalizer)?;
            Ok(Action::AwaitChange)
        }
        FinalizerStep::Apply => (steps.apply)().await.map_err(FinalizerError::Apply),
        FinalizerStep::Cleanup => cleanup_then_release(steps.cleanup, steps.remove_finalizer).await,
        FinalizerStep::Released => Ok(Action::AwaitChange),
    }
}

async fn cleanup_then_release<E, Cleanup, Remove>(
    cleanup: Cleanup,
    remove_finalizer: Remove,
) -> Result<Action, FinalizerError<E>>
where
    Cleanup: AsyncFnOnce() -> Result<CleanupProgress, E>,
    Remove: AsyncFnOnce() -> Result<(), E>,
{
    match cleanup().await.map_err(FinalizerError::Cleanup)? {
        CleanupProgress::Waiting(action) => Ok(action),
        CleanupProgress::Done => {
            remove_finalizer()
                .await
                .map_err(FinalizerError::RemoveFinalizer)?;
            Ok(Action::AwaitChange)
        }
    }
}
