//! The ComputeContract reconciler: one declared contract's run on the compute market, through
//! the [`Market`] port. Each run asks the market for the next step and records the status it
//! answers; a waiting contract is looked at again soon, a finished one only when it changes.
//!
//! Invariants: the market's message (which may quote a peer) is kept and logged only cleaned
//! (one line, no controls or bidi overrides, cut); a ComputeContract that holds a guest never
//! goes before its release is confirmed (its finalizer waits, asking for the release); the status is written only when
//! it changed; the phase history is appended here and only here, when the market's answer
//! enters another phase than the history's last.

use std::sync::Arc;
use std::time::Duration;

use swdesk_auction::compute::{
    ComputeContractObject, ComputeContractSpec, ComputeContractStatus, ComputePhase,
};
use swdesk_auction::market::{Market, MarketError};
use swdesk_kernel::repo::RecordRepo;
use swdesk_kernel::timestamp::Timestamp;

use crate::context::{Context, ReconcileError};
use crate::runtime::finalizer::CleanupProgress;
use crate::runtime::{Action, ObjectKey, Reconciler};

/// The finalizer held on every ComputeContract until its guest is released.
pub const FINALIZER: &str = "compute.socialweb.computer/guest";
/// How soon a waiting contract is looked at again.
const WAITING_RECHECK: Duration = Duration::from_secs(30);
/// How soon a contract whose market flow is under way (bids arriving, the window closing, the
/// guest booting) is looked at again: the market waits up to a few seconds itself each time.
const FLOW_RECHECK: Duration = Duration::from_secs(3);

/// How often a deployed contract is looked at for drift (its receipt gone or rewritten).
const DRIFT_RECHECK: Duration = Duration::from_secs(60);

/// When to look at a contract again on its own: at the next try its status names when its last
/// market step failed for now (the kernel's retry rule, never past the step's deadline), soon while its market flow moves, at the waiting
/// pace while it waits for something else, at the drift pace while deployed, never when it
/// rests (released, failed).
fn recheck_after(status: &ComputeContractStatus, now: Timestamp) -> Option<Duration> {
    if status.waiting_for().is_none() {
        return (status.phase == ComputePhase::Deployed).then_some(DRIFT_RECHECK);
    }
    if let Some(wait) = status.next_try_in(now) {
        return Some(wait);
    }
    Some(
        if status.flow.as_ref().is_some_and(|flow| !flow.is_finished()) {
            FLOW_RECHECK
        } else {
            WAITING_RECHECK
        },
    )
}

/// Reconciles ComputeContract objects.
#[derive(Debug)]
pub struct ComputeReconciler<R, M> {
    context: Context<R>,
    market: Arc<M>,
}

impl<R: RecordRepo + 'static, M: Market + 'static> ComputeReconciler<R, M> {
    /// A reconciler over `context` running contracts on `market`.
    pub fn new(context: Context<R>, market: Arc<M>) -> Self {
        Self { context, market }
    }

    async fn apply(&self, object: &ComputeContractObject) -> Result<Action, ReconcileError> {
        let mut status = self
            .market
            .advance(object, self.context.now())
            .await
            .map_err(market_error)?;
        status.message = status.message.as_deref().map(kept_text);
        status.record_phase(self.context.now());
        let recheck = recheck_after(&status, self.context.now());
        if status != object.status {
            let mut updated = object.clone();
            updated.status = status;
            self.context
                .store(move |store| store.update_status::<ComputeContractSpec>(&updated))
                .await?;
        }
        Ok(recheck.map_or(Action::AwaitChange, Action::RequeueAfter))
    }

    /// A contract that holds a guest is released before it goes.
    async fn cleanup(
        &self,
        object: &ComputeContractObject,
    ) -> Result<CleanupProgress, ReconcileError> {
        if !object.status.holds_guest() && object.status.phase != ComputePhase::Requesting {
            return Ok(CleanupProgress::Done);
        }
        if !object.spec.release {
            let mut updated = object.clone();
            updated.spec.release = true;
            updated.spec.release_requested_at = Some(self.context.now());
            self.context
                .store(move |store| store.replace::<ComputeContractSpec>(&updated))
                .await?;
            return Ok(CleanupProgress::Waiting(Action::AwaitChange));
        }
        self.apply(object).await?;
        Ok(CleanupProgress::Waiting(Action::RequeueAfter(
            WAITING_RECHECK,
        )))
    }
}

impl<R: RecordRepo + 'static, M: Market + 'static> Reconciler for ComputeReconciler<R, M> {
    type Error = ReconcileError;

    async fn reconcile(&self, key: &ObjectKey) -> Result<Action, ReconcileError> {
        self.context
            .reconcile_with_finalizer::<ComputeContractSpec, _, _>(
                &key.name,
                FINALIZER,
                async |object| self.apply(object).await,
                async |object| self.cleanup(object).await,
            )
            .await
    }
}

fn market_error(error: MarketError) -> ReconcileError {
    ReconcileError::Market(kept_text(&error.message))
}

/// The longest message a contract keeps: its record's `maxLength`.
const MESSAGE_MAX: usize = 2048;

/// A message of the market's, which may quote a peer, as the store keeps it and the window
/// shows it: one line, no controls or bidi overrides, cut to [`MESSAGE_MAX`].
fn kept_text(message: &str) -> String {
    swdesk_lexicon::text::peer_text(message, MESSAGE_MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use swdesk_auction::compute::ComputePhase;
    use swdesk_auction::flow::Flow;

    fn requesting(flow: Option<Flow>) -> ComputeContractStatus {
        ComputeContractStatus {
            phase: ComputePhase::Requesting,
            flow,
            ..ComputeContractStatus::default()
        }
    }

    #[test]
    fn a_moving_flow_is_looked_at_soon_a_wait_at_its_pace_a_guest_for_drift_and_a_rest_never() {
        let started =
            Timestamp::from_unix_millis(1_800_000_000_000).unwrap_or_else(|_| unreachable!());
        assert_eq!(
            recheck_after(&requesting(Some(Flow::start(started))), started),
            Some(FLOW_RECHECK)
        );
        assert_eq!(
            recheck_after(&requesting(None), started),
            Some(WAITING_RECHECK),
            "no market yet"
        );
        let deployed = ComputeContractStatus {
            phase: ComputePhase::Deployed,
            ..ComputeContractStatus::default()
        };
        assert_eq!(recheck_after(&deployed, started), Some(DRIFT_RECHECK));
        let released = ComputeContractStatus {
            phase: ComputePhase::Released,
            ..ComputeContractStatus::default()
        };
        assert_eq!(recheck_after(&released, started), None);
    }

    #[test]
    fn a_failing_step_is_looked_at_again_at_the_next_try_its_status_names() {
        let started =
            Timestamp::from_unix_millis(1_800_000_000_000).unwrap_or_else(|_| unreachable!());
        let status = ComputeContractStatus {
            retries: 2,
            retrying: Some(swdesk_auction::compute::Retrying {
                step: "acceptSent".into(),
                why: "unreachable".into(),
                since: started,
                next_at: started.saturating_add(Duration::from_secs(6)),
                gives_up_at: started.saturating_add(Duration::from_secs(600)),
            }),
            ..requesting(Some(Flow::start(started)))
        };
        let later = started.saturating_add(Duration::from_secs(2));
        assert_eq!(recheck_after(&status, later), Some(Duration::from_secs(4)));
    }
}
