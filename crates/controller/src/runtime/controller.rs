//! [`Controller`], the handle of one kind's running loop, and [`Trigger`], the cloneable door
//! through which watchers schedule keys.
//!
//! Invariants: a controller runs one kind, so a trigger takes names only and can never send a
//! key of another kind; scheduling never blocks nor waits (an unbounded channel to the loop,
//! which only files keys); once the shutdown starts, every trigger is refused with [`Stopped`];
//! dropping the handle without [`Controller::shutdown`] stops the loop with no grace period.

use std::time::Duration;

use swdesk_kernel::name::Name;
use swdesk_kernel::object::Kind;
use thiserror::Error;
use tokio::sync::{broadcast, mpsc, oneshot};
use tokio::task::{JoinError, JoinHandle};
use tokio::time::Instant;

use super::config::ControllerConfig;
use super::dispatch::{Command, Dispatch};
use super::key::ObjectKey;
use super::observe::{KeyStatus, RuntimeEvent, StatusBoard};
use super::queue::later;
use super::reconciler::{KeyLister, Reconciler};
use super::resync::resync_loop;
use super::shutdown::ShutdownReport;

/// Schedules keys of one controller; cheap to clone, one per watcher.
#[derive(Debug, Clone)]
pub struct Trigger {
    kind: Kind,
    commands: mpsc::UnboundedSender<Command>,
}

/// The controller has stopped: it takes no more triggers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[error("the {kind:?} controller has stopped and takes no more triggers")]
pub struct Stopped {
    /// The controller's kind.
    pub kind: Kind,
}

impl Trigger {
    /// The kind of the keys this trigger schedules.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// Schedules `name`, debounced: bursts of triggers coalesce into one run.
    pub fn schedule(&self, name: Name) -> Result<(), Stopped> {
        self.send(Command::Trigger(name))
    }

    /// Schedules `name` to run `delay` from now (not debounced), unless it is due earlier.
    pub fn schedule_after(&self, name: Name, delay: Duration) -> Result<(), Stopped> {
        self.send(Command::RunAt(name, later(Instant::now(), delay)))
    }

    fn send(&self, command: Command) -> Result<(), Stopped> {
        self.commands
            .send(command)
            .map_err(|_| Stopped { kind: self.kind })
    }
}

/// The controller's loop ended otherwise than by its shutdown (it panicked).
#[derive(Debug, Error)]
#[error("the {kind:?} controller's loop ended abnormally")]
pub struct ShutdownError {
    /// The controller's kind.
    pub kind: Kind,
    /// How the loop's task ended.
    #[source]
    pub source: JoinError,
}

/// The running reconcile loop of one kind.
#[derive(Debug)]
#[must_use = "dropping the controller stops its loop at once"]
pub struct Controller {
    kind: Kind,
    trigger: Trigger,
    board: StatusBoard,
    events: broadcast::Sender<RuntimeEvent>,
    stop: oneshot::Sender<Duration>,
    task: JoinHandle<ShutdownReport>,
}

impl Controller {
    /// Starts the loop of `kind` on the current tokio runtime, with no resync.
    ///
    /// Panics outside a tokio runtime, as `tokio::spawn` does.
    pub fn spawn<R: Reconciler>(kind: Kind, reconciler: R, config: ControllerConfig) -> Self {
        let (commands, receiver) = mpsc::unbounded_channel();
        Self::launch(Dispatch::new(kind, reconciler, config), commands, receiver)
    }

    /// Starts the loop of `kind` with a resync that lists every key with `lister` at start and
    /// then every `config.resync_period`, and triggers each.
    ///
    /// Panics outside a tokio runtime, as `tokio::spawn` does.
    pub fn spawn_with_resync<R: Reconciler, L: KeyLister>(
        kind: Kind,
        reconciler: R,
        config: ControllerConfig,
        lister: L,
    ) -> Self {
        let (commands, receiver) = mpsc::unbounded_channel();
        let mut dispatch = Dispatch::new(kind, reconciler, config);
        let period = config.effective_resync_period();
        let resync = resync_loop(kind, lister, period, commands.clone(), dispatch.events());
        dispatch.stop_with_it(tokio::spawn(resync).abort_handle());
        Self::launch(dispatch, commands, receiver)
    }

    fn launch<R: Reconciler>(
        dispatch: Dispatch<R>,
        commands: mpsc::UnboundedSender<Command>,
        receiver: mpsc::UnboundedReceiver<Command>,
    ) -> Self {
        let (stop, stopped) = oneshot::channel();
        let (board, events) = (dispatch.board(), dispatch.events());
        let kind = dispatch.kind();
        let task = tokio::spawn(dispatch.run(receiver, stopped));
        Self {
            kind,
            trigger: Trigger { kind, commands },
            board,
            events,
            stop,
            task,
        }
    }

    /// The kind this controller reconciles.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// A trigger for this controller.
    pub fn trigger(&self) -> Trigger {
        self.trigger.clone()
    }

    /// The status of `name`, if the controller has seen it.
    pub fn status(&self, name: &Name) -> Option<KeyStatus> {
        self.board.get(name)
    }

    /// The status of every key the controller has seen, in name order.
    pub fn statuses(&self) -> Vec<(ObjectKey, KeyStatus)> {
        let kind = self.kind;
        self.board
            .all()
            .into_iter()
            .map(|(name, status)| (ObjectKey::new(kind, name), status))
            .collect()
    }

    /// A receiver of the runtime's events from now on.
    pub fn events(&self) -> broadcast::Receiver<RuntimeEvent> {
        self.events.subscribe()
    }

    /// Stops taking triggers, lets running reconciles finish within `grace`, stops the rest,
    /// and reports what was finished, cut off and left pending.
    pub async fn shutdown(self, grace: Duration) -> Result<ShutdownReport, ShutdownError> {
        let Self {
            kind, stop, task, ..
        } = self;
        // A loop that is gone already cannot take the signal; its task says why.
        let _ = stop.send(grace);
        task.await.map_err(|source| ShutdownError { kind, source })
    }
}
