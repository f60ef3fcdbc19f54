//! [`Store`]: the typed door to the object database. It opens (and migrates) the file, runs
//! each operation as one transaction on its one connection, converts between typed objects and
//! JSON rows, and sends the committed changes to the watchers.
//!
//! Invariants: every write runs in one `BEGIN IMMEDIATE` transaction and its events are sent
//! after `COMMIT` and before the connection is released, so receivers see writes in commit
//! order and never see a write that rolled back; reads see only committed state. A panic
//! inside an operation rolls its transaction back, so a poisoned lock still guards a
//! consistent connection and is taken over.

use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use rusqlite::{Connection, Params, TransactionBehavior, params};
use serde::Serialize;
use serde_json::Value;
use swdesk_kernel::name::Name;
use swdesk_kernel::object::{Kind, Object, Uid};
use swdesk_kernel::repo::live::FeedCursor;
use swdesk_kernel::timestamp::Timestamp;
use tokio::sync::{Semaphore, broadcast};

use crate::cursor;
use crate::error::StoreError;
use crate::lifecycle;
use crate::resource::{ObjectOf, Resource, kind_text};
use crate::row::{self, Raw};
use crate::schema;
use crate::watch::{Event, WATCH_CAPACITY};

/// The object database of the embedded core; share it as `Arc<Store>`.
#[derive(Debug)]
pub struct Store {
    conn: Mutex<Connection>,
    events: broadcast::Sender<Event>,
    /// The one turn at the connection that async callers wait for as tasks (see [`Store::call`]).
    turn: Arc<Semaphore>,
}

impl Store {
    /// Opens the database at `path` (created when missing), sets its pragmas and runs every
    /// migration it lacks.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let conn = schema::open(path.as_ref())?;
        let (events, _) = broadcast::channel(WATCH_CAPACITY);
        Ok(Self {
            conn: Mutex::new(conn),
            events,
            turn: Arc::new(Semaphore::new(1)),
        })
    }

    /// Runs `call` against the store from async code, on tokio's blocking pool, one call at a
    /// time: callers wait for their turn as tasks, and only the call whose turn it is holds a
    /// blocking thread. (Each waiting on the connection's mutex from a thread of its own grew
    /// the pool to a thread per concurrent caller, each stack resident as deep as it was ever
    /// used.) Fails only when `call` panicked or the runtime is shutting down.
    pub async fn call<T, F>(self: &Arc<Self>, call: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Store) -> T + Send + 'static,
    {
        let turn = Arc::clone(&self.turn)
            .acquire_owned()
            .await
            .map_err(|closed| StoreError::Interrupted(closed.to_string()))?;
        let store = Arc::clone(self);
        tokio::task::spawn_blocking(move || {
            let answer = call(&store);
            drop(turn);
            answer
        })
        .await
        .map_err(|stopped| StoreError::Interrupted(stopped.to_string()))
    }

    /// A receiver of every change committed from now on (see [`crate::watch`] for what to do
    /// when it lags).
    pub fn watch(&self) -> broadcast::Receiver<Event> {
        self.events.subscribe()
    }

    /// Stores a new object. The store sets `resourceVersion` and `generation` to 1 and clears
    /// `deletionRequestedAt`; it keeps the caller's name, uid, `createdAt`, finalizers, labels,
    /// owner references, spec and status.
    pub fn create<R: Resource>(&self, object: &ObjectOf<R>) -> Result<ObjectOf<R>, StoreError> {
        let raw = to_raw::<R>(object)?;
        typed(self.write(|tx, events| lifecycle::create(tx, raw, events))?)
    }

    /// The object of kind `R` called `name`, if there is one.
    pub fn get<R: Resource>(&self, name: &Name) -> Result<Option<ObjectOf<R>>, StoreError> {
        let found = self.read(|conn| row::find(conn, R::KIND, name))?;
        found.map(typed).transpose()
    }

    /// Every object of kind `R`, by name.
    pub fn list<R: Resource>(&self) -> Result<Vec<ObjectOf<R>>, StoreError> {
        let tail = "WHERE o.kind = ?1 ORDER BY o.name";
        self.query::<R, _>(tail, params![kind_text(R::KIND)])
    }

    /// Every object of kind `R` whose label `key` is `value`, by name.
    pub fn list_by_label<R: Resource>(
        &self,
        key: &str,
        value: &str,
    ) -> Result<Vec<ObjectOf<R>>, StoreError> {
        let tail = "JOIN labels l ON l.uid = o.uid \
                    WHERE o.kind = ?1 AND l.key = ?2 AND l.value = ?3 ORDER BY o.name";
        self.query::<R, _>(tail, params![kind_text(R::KIND), key, value])
    }

    /// Every object of kind `R` whose owner references name the uid `owner`, by name.
    pub fn list_owned_by<R: Resource>(&self, owner: &Uid) -> Result<Vec<ObjectOf<R>>, StoreError> {
        let tail = "JOIN owner_refs r ON r.uid = o.uid \
                    WHERE o.kind = ?1 AND r.owner_uid = ?2 ORDER BY o.name";
        self.query::<R, _>(tail, params![kind_text(R::KIND), owner.as_str()])
    }

    /// Writes the spec, labels and owner references of `object` if the stored object is still
    /// at `object`'s `resourceVersion` (else [`StoreError::Conflict`]). Bumps
    /// `resourceVersion`, and `generation` when the spec changed; the stored status,
    /// finalizers and deletion stay. Changing nothing writes nothing.
    pub fn replace<R: Resource>(&self, object: &ObjectOf<R>) -> Result<ObjectOf<R>, StoreError> {
        let raw = to_raw::<R>(object)?;
        typed(self.write(|tx, events| lifecycle::replace(tx, raw, events))?)
    }

    /// Writes the spec, labels, owner references and the status of `object` in one write, if
    /// the stored object is still at `object`'s `resourceVersion`: for a change whose spec and
    /// status must never be seen apart (a pull and the declaration it agreed on). Bumps
    /// `resourceVersion` once, and `generation` when the spec changed.
    pub fn replace_with_status<R: Resource>(
        &self,
        object: &ObjectOf<R>,
    ) -> Result<ObjectOf<R>, StoreError> {
        let raw = to_raw::<R>(object)?;
        typed(self.write(|tx, events| lifecycle::replace_with_status(tx, raw, events))?)
    }

    /// Writes the status of `object` if the stored object is still at its `resourceVersion`.
    /// Bumps `resourceVersion`; never changes the spec or `generation`.
    pub fn update_status<R: Resource>(
        &self,
        object: &ObjectOf<R>,
    ) -> Result<ObjectOf<R>, StoreError> {
        let status = encode(R::KIND, &object.metadata.name, "status", &object.status)?;
        let at = version_of::<R>(object);
        typed(self.write(|tx, events| lifecycle::update_status(tx, at, status, events))?)
    }

    /// Requests the deletion of the object of kind `R` called `name` at `now`. The first
    /// request sets `deletionRequestedAt`; later ones change nothing. An object without
    /// finalizers is removed at once (answering `None`), and the objects it owns have their
    /// deletion requested in the same transaction.
    pub fn delete<R: Resource>(
        &self,
        name: &Name,
        now: Timestamp,
    ) -> Result<Option<ObjectOf<R>>, StoreError> {
        let at = (R::KIND, name);
        let left = self.write(|tx, events| lifecycle::delete(tx, at, now, events))?;
        left.map(typed).transpose()
    }

    /// Adds `finalizer` if the stored object is still at `object`'s `resourceVersion`; refused
    /// with [`StoreError::Deleting`] once its deletion was requested.
    pub fn add_finalizer<R: Resource>(
        &self,
        object: &ObjectOf<R>,
        finalizer: &str,
    ) -> Result<ObjectOf<R>, StoreError> {
        let at = version_of::<R>(object);
        typed(self.write(|tx, events| lifecycle::add_finalizer(tx, at, finalizer, events))?)
    }

    /// Removes `finalizer` if the stored object is still at `object`'s `resourceVersion`. When
    /// the object is being deleted and this was its last finalizer, the object is removed
    /// (answering `None`) and the objects it owns have their deletion requested.
    pub fn remove_finalizer<R: Resource>(
        &self,
        object: &ObjectOf<R>,
        finalizer: &str,
    ) -> Result<Option<ObjectOf<R>>, StoreError> {
        let at = version_of::<R>(object);
        let left =
            self.write(|tx, events| lifecycle::remove_finalizer(tx, at, finalizer, events))?;
        left.map(typed).transpose()
    }

    /// Where the event stream `stream` resumes, if it was ever kept.
    pub fn cursor(&self, stream: &str) -> Result<Option<FeedCursor>, StoreError> {
        self.read(|conn| cursor::find(conn, stream))
    }

    /// Keeps `at` as where `stream` resumes (after what it names was applied).
    pub fn keep_cursor(&self, stream: &str, at: &FeedCursor) -> Result<(), StoreError> {
        self.write(|tx, _events| cursor::keep(tx, stream, at))
    }

    fn query<R: Resource, P: Params>(
        &self,
        tail: &str,
        params: P,
    ) -> Result<Vec<ObjectOf<R>>, StoreError> {
        let rows = self.read(|conn| row::select(conn, tail, params))?;
        rows.into_iter().map(typed).collect()
    }

    fn read<T>(
        &self,
        op: impl FnOnce(&Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        op(&self.connection())
    }

    /// Runs `op` in one immediate transaction; after the commit, sends the events it gathered.
    fn write<T>(
        &self,
        op: impl FnOnce(&Connection, &mut Vec<Event>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut conn = self.connection();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let mut events = Vec::new();
        let value = op(&tx, &mut events)?;
        tx.commit()?;
        for event in events {
            // An error only means that nobody watches right now.
            let _ = self.events.send(event);
        }
        Ok(value)
    }

    fn connection(&self) -> MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The kind, name and version a compare-and-swap write checks.
fn version_of<R: Resource>(object: &ObjectOf<R>) -> (Kind, &Name, u64) {
    let meta = &object.metadata;
    (R::KIND, &meta.name, meta.resource_version)
}

fn to_raw<R: Resource>(object: &ObjectOf<R>) -> Result<Raw, StoreError> {
    let name = &object.metadata.name;
    Ok(Raw {
        kind: R::KIND,
        metadata: object.metadata.clone(),
        spec: encode(R::KIND, name, "spec", &object.spec)?,
        status: encode(R::KIND, name, "status", &object.status)?,
    })
}

fn encode<T: Serialize>(
    kind: Kind,
    name: &Name,
    field: &'static str,
    value: &T,
) -> Result<Value, StoreError> {
    serde_json::to_value(value).map_err(|source| StoreError::Encode {
        kind,
        name: name.clone(),
        field,
        source,
    })
}

fn typed<R: Resource>(raw: Raw) -> Result<ObjectOf<R>, StoreError> {
    let Raw {
        kind,
        metadata,
        spec,
        status,
    } = raw;
    let corrupt = |field: &'static str, error: serde_json::Error| StoreError::Corrupt {
        kind: kind_text(kind).to_owned(),
        name: metadata.name.to_string(),
        field,
        detail: error.to_string(),
    };
    let spec = serde_json::from_value(spec).map_err(|e| corrupt("spec", e))?;
    let status = serde_json::from_value(status).map_err(|e| corrupt("status", e))?;
    Ok(Object {
        metadata,
        spec,
        status,
    })
}
