//! The loop behind a [`super::Controller`]: one task per controller that owns the queue, takes
//! commands from triggers and the resync, starts reconciles and applies what they return.
//!
//! Invariants: only this task touches the queue, so scheduling needs no lock; a reconcile starts
//! only when the queue hands its key out, and the queue never hands out a running key; at most
//! `concurrency` reconciles run at once, each as its own task inside a `tracing` span; a panic
//! in a reconcile fails that run only (retried with [`Backoff::DEFAULT`], since there is no
//! error value to give the error policy); the status board and the events follow every change.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use swdesk_kernel::name::Name;
use swdesk_kernel::object::Kind;
use tokio::sync::{broadcast, mpsc, oneshot};
use tokio::task::{self, AbortHandle, JoinError, JoinSet};
use tokio::time::{Instant, sleep_until, timeout_at};
use tracing::Instrument;

use super::action::{Action, Backoff};
use super::config::ControllerConfig;
use super::key::ObjectKey;
use super::observe::{EVENT_CAPACITY, RuntimeEvent, StatusBoard};
use super::queue::{Queue, later};
use super::reconciler::Reconciler;
use super::shutdown::ShutdownReport;

/// What triggers and the resync send the loop.
#[derive(Debug)]
pub(crate) enum Command {
    /// Run the key, debounced.
    Trigger(Name),
    /// Run the key at this instant (or earlier).
    RunAt(Name, Instant),
    /// The resync listed these keys: trigger each.
    Resync(Vec<Name>),
}

/// A reconcile in flight.
#[derive(Debug)]
struct Run {
    name: Name,
    started: Instant,
    failures: u32,
}

/// How a reconcile ended.
#[derive(Debug)]
enum Outcome {
    Succeeded(Action),
    Failed { error: String, retry: Action },
}

impl Outcome {
    fn action(&self) -> Action {
        match self {
            Self::Succeeded(action) | Self::Failed { retry: action, .. } => *action,
        }
    }
}

/// The state of one controller's loop.
#[derive(Debug)]
pub(crate) struct Dispatch<R> {
    kind: Kind,
    reconciler: Arc<R>,
    config: ControllerConfig,
    queue: Queue,
    tasks: JoinSet<(Outcome, Duration)>,
    running: HashMap<task::Id, Run>,
    board: StatusBoard,
    events: broadcast::Sender<RuntimeEvent>,
    resync: Option<AbortHandle>,
}

impl<R: Reconciler> Dispatch<R> {
    /// A loop for `kind` that has run nothing yet.
    pub(crate) fn new(kind: Kind, reconciler: R, config: ControllerConfig) -> Self {
        Self {
            kind,
            reconciler: Arc::new(reconciler),
            config,
            queue: Queue::default(),
            tasks: JoinSet::new(),
            running: HashMap::new(),
            board: StatusBoard::default(),
            events: broadcast::channel(EVENT_CAPACITY).0,
            resync: None,
        }
    }

    /// The kind this loop reconciles.
    pub(crate) fn kind(&self) -> Kind {
        self.kind
    }

    /// The board this loop writes.
    pub(crate) fn board(&self) -> StatusBoard {
        self.board.clone()
    }

    /// The sender of this loop's events.
    pub(crate) fn events(&self) -> broadcast::Sender<RuntimeEvent> {
        self.events.clone()
    }

    /// Makes the shutdown stop the resync task of `handle`.
    pub(crate) fn stop_with_it(&mut self, handle: AbortHandle) {
        self.resync = Some(handle);
    }

    /// Runs until `stop` says (with the grace period) or its sender goes (no grace).
    pub(crate) async fn run(
        mut self,
        mut commands: mpsc::UnboundedReceiver<Command>,
        mut stop: oneshot::Receiver<Duration>,
    ) -> ShutdownReport {
        loop {
            self.start_due();
            let wake = self.wake_time();
            tokio::select! {
                biased;
                grace = &mut stop => {
                    return self.shut_down(commands, grace.unwrap_or(Duration::ZERO)).await;
                }
                Some(joined) = self.tasks.join_next_with_id() => {
                    self.on_joined(joined);
                }
                Some(command) = commands.recv() => self.on_command(command),
                () = sleep_until_some(wake) => {}
            }
        }
    }

    fn has_capacity(&self) -> bool {
        self.running.len() < self.config.effective_concurrency()
    }

    /// When the loop must wake to start a key: never while it is at capacity.
    fn wake_time(&self) -> Option<Instant> {
        self.queue.next_due().filter(|_| self.has_capacity())
    }

    fn start_due(&mut self) {
        let now = Instant::now();
        while self.has_capacity() {
            let Some(name) = self.queue.pop_due(now) else {
                return;
            };
            self.start(name, now);
        }
    }

    fn start(&mut self, name: Name, now: Instant) {
        let failures = self.board.failures(&name);
        let key = ObjectKey::new(self.kind, name.clone());
        let run = reconcile_once(Arc::clone(&self.reconciler), key.clone(), failures);
        let id = self.tasks.spawn(run).id();
        self.running.insert(
            id,
            Run {
                name: name.clone(),
                started: now,
                failures,
            },
        );
        self.publish(&name);
        self.emit(RuntimeEvent::Started { key, failures });
    }

    /// Takes in a finished task; the name of its key, if it was one of ours.
    fn on_joined(
        &mut self,
        joined: Result<(task::Id, (Outcome, Duration)), JoinError>,
    ) -> Option<Name> {
        let id = match &joined {
            Ok((id, _)) => *id,
            Err(error) => error.id(),
        };
        let run = self.running.remove(&id)?;
        let (outcome, duration) = match joined {
            Ok((_, finished)) => finished,
            Err(error) => (crashed(error, run.failures), run.started.elapsed()),
        };
        self.finish(&run, outcome, duration);
        Some(run.name)
    }

    fn finish(&mut self, run: &Run, outcome: Outcome, duration: Duration) {
        let action = outcome.action();
        self.queue.finish(&run.name);
        if let Action::RequeueAfter(delay) = action {
            self.queue
                .requeue(run.name.clone(), later(Instant::now(), delay));
        }
        let (failures, error) = match outcome {
            Outcome::Succeeded(_) => (0, None),
            Outcome::Failed { error, .. } => (run.failures.saturating_add(1), Some(error)),
        };
        let next_run = self.queue.next_run(&run.name);
        self.board.update(&run.name, |status| {
            status.running = false;
            status.last_action = Some(action);
            status.last_error.clone_from(&error);
            status.last_duration = Some(duration);
            status.next_run = next_run;
            status.failures = failures;
        });
        let key = ObjectKey::new(self.kind, run.name.clone());
        self.emit(match error {
            None => RuntimeEvent::Finished {
                key,
                action,
                duration,
            },
            Some(error) => RuntimeEvent::Failed {
                key,
                error,
                failures,
                retry: action,
                duration,
            },
        });
    }

    fn on_command(&mut self, command: Command) {
        let now = Instant::now();
        match command {
            Command::Trigger(name) => self.trigger(name, now),
            Command::RunAt(name, at) => {
                self.queue.requeue(name.clone(), at);
                self.publish(&name);
            }
            Command::Resync(names) => {
                self.emit(RuntimeEvent::Resynced {
                    kind: self.kind,
                    keys: names.len(),
                });
                // A key the store no longer lists, idle and unscheduled, is an object gone:
                // its status goes too, so the board holds what exists, not all that ever did.
                let listed: HashSet<&Name> = names.iter().collect();
                self.board.retain(|name, status| {
                    listed.contains(name) || status.running || status.next_run.is_some()
                });
                names.into_iter().for_each(|name| self.trigger(name, now));
            }
        }
    }

    fn trigger(&mut self, name: Name, now: Instant) {
        self.queue.trigger(name.clone(), now, self.config.debounce);
        self.publish(&name);
    }

    /// Copies whether `name` runs and when it is due onto the board.
    fn publish(&self, name: &Name) {
        let running = self.queue.is_running(name);
        let next_run = self.queue.next_run(name);
        self.board.update(name, |status| {
            status.running = running;
            status.next_run = next_run;
        });
    }

    fn emit(&self, event: RuntimeEvent) {
        // No receiver is fine: nobody is watching the activity.
        let _ = self.events.send(event);
    }

    /// Stops taking commands, lets running reconciles finish until `grace` is over, then
    /// stops the rest.
    async fn shut_down(
        mut self,
        mut commands: mpsc::UnboundedReceiver<Command>,
        grace: Duration,
    ) -> ShutdownReport {
        commands.close();
        while let Ok(command) = commands.try_recv() {
            self.on_command(command);
        }
        if let Some(resync) = self.resync.take() {
            resync.abort();
        }
        let pending = self.queue.pending_names();
        let finished = self.wait_for_running(later(Instant::now(), grace)).await;
        let cut_off = self.cut_off().await;
        self.board.update_all(|status| status.next_run = None);
        tracing::info!(kind = ?self.kind, ?finished, ?cut_off, ?pending, "controller stopped");
        ShutdownReport {
            finished,
            cut_off,
            pending,
        }
    }

    /// The keys whose reconciles finished before `deadline`, in name order.
    async fn wait_for_running(&mut self, deadline: Instant) -> Vec<Name> {
        let mut finished = Vec::new();
        while let Ok(Some(joined)) = timeout_at(deadline, self.tasks.join_next_with_id()).await {
            finished.extend(self.on_joined(joined));
        }
        finished.sort();
        finished
    }

    /// Stops the reconciles still running; their keys, in name order.
    async fn cut_off(&mut self) -> Vec<Name> {
        self.tasks.shutdown().await;
        let mut cut_off: Vec<Name> = self.running.drain().map(|(_, run)| run.name).collect();
        cut_off.sort();
        for name in &cut_off {
            self.board.update(name, |status| status.running = false);
            let key = ObjectKey::new(self.kind, name.clone());
            tracing::warn!(%key, "reconcile cut off by the shutdown");
            self.emit(RuntimeEvent::CutOff { key });
        }
        cut_off
    }
}

/// One reconcile of `key`, in its span, with the error policy applied to a failure.
async fn reconcile_once<R: Reconciler>(
    reconciler: Arc<R>,
    key: ObjectKey,
    failures: u32,
) -> (Outcome, Duration) {
    let span = tracing::info_span!("reconcile", kind = ?key.kind, name = %key.name, failures);
    async move {
        let started = Instant::now();
        let outcome = match reconciler.reconcile(&key).await {
            Ok(action) => {
                tracing::debug!(?action, "reconciled");
                Outcome::Succeeded(action)
            }
            Err(error) => {
                let retry = reconciler.error_policy(&key, &error, failures.saturating_add(1));
                tracing::warn!(%error, ?retry, "reconcile failed");
                Outcome::Failed {
                    error: error.to_string(),
                    retry,
                }
            }
        };
        (outcome, started.elapsed())
    }
    .instrument(span)
    .await
}

/// The failure of a reconcile task that panicked (or was cancelled).
fn crashed(error: JoinError, failures: u32) -> Outcome {
    let error = match error.try_into_panic() {
        Ok(payload) => format!("the reconcile panicked: {}", panic_text(payload.as_ref())),
        Err(error) => format!("the reconcile did not finish: {error}"),
    };
    tracing::error!(%error, "reconcile crashed");
    Outcome::Failed {
        error,
        retry: Action::backoff(&Backoff::DEFAULT, failures.saturating_add(1)),
    }
}

fn panic_text(payload: &(dyn std::any::Any + Send)) -> &str {
    if let Some(text) = payload.downcast_ref::<&str>() {
        text
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text
    } else {
        "(no message)"
    }
}

async fn sleep_until_some(wake: Option<Instant>) {
    match wake {
        Some(at) => sleep_until(at).await,
        None => std::future::pending().await,
    }
}
