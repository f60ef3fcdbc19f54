//! The periodic resync: a task that lists every key of the kind at start and then every
//! period, and sends the list to the controller's loop, which triggers each key.
//!
//! Invariants: listings never overlap (one task, one listing at a time; a slow listing delays
//! the next tick instead of piling ticks up); a failed listing is logged and reported, and the
//! next period tries again; the task ends when the loop stops taking commands, and the loop's
//! shutdown aborts it.

use std::time::Duration;

use swdesk_kernel::object::Kind;
use tokio::sync::{broadcast, mpsc};
use tokio::time::{MissedTickBehavior, interval};

use super::dispatch::Command;
use super::observe::RuntimeEvent;
use super::reconciler::KeyLister;

/// Lists with `lister` now and every `period`, until the loop stops taking commands.
pub(crate) async fn resync_loop<L: KeyLister>(
    kind: Kind,
    lister: L,
    period: Duration,
    commands: mpsc::UnboundedSender<Command>,
    events: broadcast::Sender<RuntimeEvent>,
) {
    let mut ticks = interval(period);
    ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        match lister.list().await {
            Ok(names) => {
                if commands.send(Command::Resync(names)).is_err() {
                    return;
                }
            }
            Err(error) => {
                let error = error.to_string();
                tracing::warn!(?kind, %error, "resync could not list the keys");
                let _ = events.send(RuntimeEvent::ResyncFailed { kind, error });
            }
        }
    }
}
