//! What the controller shows of itself to the window: for one deployment, how it stands with
//! its record and the runtime ([`SyncView`]: the last sync outcome, the last write, the next
//! retry, the last error); and for the Activity view, one stream of every reconcile as it
//! starts, ends or fails ([`ActivityEvent`]), merged from every kind's controller, with every
//! record write the repo accepted (from the deployments, the index and the market alike).
//!
//! Invariants: nothing here changes the store or the runtime; an error reaches the window as
//! its text only; events carry wall-clock times taken when they are received (the runtime
//! measures durations, not dates); a receiver that falls behind loses events, never the
//! controller's time.

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use swdesk_controller::runtime::{Action, KeyStatus, RuntimeEvent};
use swdesk_controller::{Engine, SystemClock};
use swdesk_core::deployment::{Deployment, record_child_name};
use swdesk_core::record::{AtprotoRecordObject, AtprotoRecordSpec};
use swdesk_core::sync::SyncState;
use swdesk_kernel::repo::journal::{RecordWrite, WriteListener};
use swdesk_kernel::timestamp::{Clock, Timestamp};
use swdesk_kernel::uri::RecordUri;
use swdesk_store::{ObjectOf, Store, StoreError};
use tokio::sync::{broadcast, mpsc};

/// How many activity events may wait for the window before the oldest are dropped.
const ACTIVITY_BACKLOG: usize = 512;

/// How one deployment stands with its record and with the controller's runtime.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct SyncView {
    /// Whether the record holds this declaration.
    pub synced: Option<bool>,
    /// The last sync outcome, with its reason as data.
    pub last_sync: Option<SyncState>,
    /// Since when it has been in (or out of) sync (RFC 3339).
    pub since: Option<String>,
    /// What the outcome means, in words.
    pub message: Option<String>,
    /// When the record was last written from here (RFC 3339).
    pub last_write_at: Option<String>,
    /// Why the last write failed, if it did.
    pub last_write_error: Option<String>,
    /// Whether a reconcile of the deployment runs now.
    pub running: bool,
    /// In how many milliseconds the controller looks at it again on its own (a retry or a
    /// planned write).
    pub next_run_in_ms: Option<u32>,
    /// The last reconcile's error.
    pub last_error: Option<String>,
    /// Consecutive failed reconciles.
    pub failures: u32,
}

impl SyncView {
    /// The view of `object`, with its record's writer `child` and the runtime's `status` of it.
    pub fn of<D: Deployment>(
        object: &ObjectOf<D>,
        child: Option<&AtprotoRecordObject>,
        runtime: Option<&KeyStatus>,
    ) -> Self {
        let mut view = Self::default();
        let status = D::status(&object.status);
        if let Some(sync) = &status.sync {
            view.synced = Some(sync.state.is_synced());
            view.message = sync.state.message();
            view.since = Some(sync.since.to_rfc3339());
            view.last_sync = Some(sync.state.clone());
        }
        if let Some(child) = child {
            view.last_write_at = child.status.last_write_at.map(Timestamp::to_rfc3339);
            view.last_write_error = child.status.error.clone();
        }
        if let Some(runtime) = runtime {
            view.running = runtime.running;
            view.next_run_in_ms = runtime
                .next_run
                .map(|at| millis(at.saturating_duration_since(tokio::time::Instant::now())));
            view.last_error = runtime.last_error.clone();
            view.failures = runtime.failures;
        }
        view
    }
}

/// The AtprotoRecord that writes `object`'s record, if there is one.
pub fn child_record<D: Deployment>(
    store: &Store,
    object: &ObjectOf<D>,
) -> Result<Option<AtprotoRecordObject>, StoreError> {
    match record_child_name(D::DEPLOYMENT, &object.metadata) {
        Ok(name) => store.get::<AtprotoRecordSpec>(&name),
        Err(_) => Ok(None),
    }
}

/// One step of the controller, for the Activity view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct ActivityEvent {
    /// When it was seen (RFC 3339).
    pub at: String,
    /// The kind of object (or of the resync): `Infra`, `AtprotoRecord`, ...
    pub kind: String,
    /// The object, when the step is about one.
    pub name: Option<String>,
    /// What happened.
    pub what: Activity,
}

/// What happened in one [`ActivityEvent`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase", tag = "type")]
pub enum Activity {
    /// A reconcile started.
    Started,
    /// A reconcile succeeded; it runs again after `nextInMs` unless something changes first.
    #[serde(rename_all = "camelCase")]
    Finished {
        /// In how many milliseconds it runs again on its own.
        next_in_ms: Option<u32>,
    },
    /// A reconcile failed; it is retried after `retryInMs`.
    #[serde(rename_all = "camelCase")]
    Failed {
        /// The error's text.
        error: String,
        /// Consecutive failures.
        failures: u32,
        /// In how many milliseconds it is retried.
        retry_in_ms: Option<u32>,
    },
    /// A reconcile outlasted the shutdown and was stopped.
    CutOff,
    /// Every object of the kind was looked at again.
    Resynced {
        /// How many.
        objects: u32,
    },
    /// The periodic look could not list the objects.
    ResyncFailed {
        /// Why.
        error: String,
    },
    /// The repo accepted a write of a record (`kind` is `Record`, `name` its collection).
    #[serde(rename_all = "camelCase")]
    Wrote {
        /// The record's at-uri.
        uri: String,
        /// Its new cid.
        cid: String,
    },
    /// The repo deleted a record.
    #[serde(rename_all = "camelCase")]
    Deleted {
        /// The record's at-uri.
        uri: String,
    },
}

impl ActivityEvent {
    /// The event for `event`, seen at `at`.
    pub fn from_runtime(event: RuntimeEvent, at: Timestamp) -> Self {
        let (kind, name, what) = match event {
            RuntimeEvent::Started { key, .. } => (key.kind, Some(key.name), Activity::Started),
            RuntimeEvent::Finished { key, action, .. } => (
                key.kind,
                Some(key.name),
                Activity::Finished {
                    next_in_ms: delay(action),
                },
            ),
            RuntimeEvent::Failed {
                key,
                error,
                failures,
                retry,
                ..
            } => (
                key.kind,
                Some(key.name),
                Activity::Failed {
                    error,
                    failures,
                    retry_in_ms: delay(retry),
                },
            ),
            RuntimeEvent::CutOff { key } => (key.kind, Some(key.name), Activity::CutOff),
            RuntimeEvent::Resynced { kind, keys } => (
                kind,
                None,
                Activity::Resynced {
                    objects: u32::try_from(keys).unwrap_or(u32::MAX),
                },
            ),
            RuntimeEvent::ResyncFailed { kind, error } => {
                (kind, None, Activity::ResyncFailed { error })
            }
        };
        Self {
            at: at.to_rfc3339(),
            kind: format!("{kind:?}"),
            name: name.map(|name| name.to_string()),
            what,
        }
    }
}

impl ActivityEvent {
    /// The event of a write the repo accepted, seen at `at`.
    pub fn from_write(write: RecordWrite, at: Timestamp) -> Self {
        let (uri, what) = match write {
            RecordWrite::Put { uri, cid } => (uri.clone(), Activity::Wrote { uri, cid }),
            RecordWrite::Delete { uri } => (uri.clone(), Activity::Deleted { uri }),
        };
        let collection = RecordUri::parse(&uri)
            .ok()
            .map(|parsed| parsed.collection().to_owned());
        Self {
            at: at.to_rfc3339(),
            kind: "Record".to_owned(),
            name: collection,
            what,
        }
    }
}

/// A listener that turns every accepted write into an [`ActivityEvent`] on `sender` (dropped
/// when nobody follows the activity).
pub fn write_listener(sender: broadcast::Sender<ActivityEvent>) -> WriteListener {
    Arc::new(move |write| {
        let _nobody_follows = sender.send(ActivityEvent::from_write(write, SystemClock.now()));
    })
}

fn delay(action: Action) -> Option<u32> {
    match action {
        Action::RequeueAfter(delay) => Some(millis(delay)),
        Action::AwaitChange => None,
    }
}

/// Milliseconds, saturating at about 49 days (the window's numbers are 32-bit safe).
fn millis(span: Duration) -> u32 {
    u32::try_from(span.as_millis()).unwrap_or(u32::MAX)
}

/// Every kind's events merged into one stream, stamped as they arrive; it ends when the
/// engine stops. A window that falls behind loses the oldest events, never blocks the engine.
pub fn follow(
    engine: &Engine,
    writes: broadcast::Receiver<ActivityEvent>,
) -> mpsc::Receiver<ActivityEvent> {
    let (sender, receiver) = mpsc::channel(ACTIVITY_BACKLOG);
    for events in engine.events() {
        tokio::spawn(forward(events, sender.clone(), |event| {
            ActivityEvent::from_runtime(event, SystemClock.now())
        }));
    }
    tokio::spawn(forward(writes, sender, |event| event));
    receiver
}

async fn forward<E: Clone>(
    mut events: broadcast::Receiver<E>,
    sender: mpsc::Sender<ActivityEvent>,
    stamp: impl Fn(E) -> ActivityEvent,
) {
    loop {
        match events.recv().await {
            Ok(event) => {
                if sender.send(stamp(event)).await.is_err() {
                    return;
                }
            }
            Err(broadcast::error::RecvError::Lagged(missed)) => {
                tracing::debug!(missed, "the activity stream fell behind the controller");
            }
            Err(broadcast::error::RecvError::Closed) => return,
        }
    }
}
