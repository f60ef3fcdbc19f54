//! Change events: one [`Event`] per object changed by a committed write, sent on a
//! `tokio::sync::broadcast` channel by [`crate::Store::watch`].
//!
//! Semantics, the way a level-triggered controller consumes them:
//! - events are sent after the transaction commits, never for a write that failed or rolled
//!   back, and in commit order (the store sends them before it lets the next write start);
//! - one write may send several events: a removal sends `Deleted` for the object and then one
//!   event for every child its garbage collection touched;
//! - subscribe first, then list: an event whose `resource_version` is not above that of the
//!   listed object of the same uid was already seen in the list (a removal counts as a write,
//!   so `Deleted` is always above); a re-created name has a new uid and starts again at 1;
//! - a receiver that falls behind by more than [`WATCH_CAPACITY`] events gets
//!   `RecvError::Lagged`: events were lost, and it must list again (relist every kind it
//!   watches) and carry on from there. Events are hints to reconcile, never the state itself.

use swdesk_kernel::name::Name;
use swdesk_kernel::object::{Kind, Metadata, Uid};

/// How many events a receiver may fall behind before it lags and must relist.
pub const WATCH_CAPACITY: usize = 1024;

/// What happened to an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Change {
    /// It was created.
    Added,
    /// Its spec, status, labels, owners or finalizers changed.
    Modified,
    /// Its deletion was requested; it stays until its last finalizer goes.
    DeletionRequested,
    /// It was removed from the store.
    Deleted,
}

/// One committed change of one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// The object's kind.
    pub kind: Kind,
    /// Its name.
    pub name: Name,
    /// Its uid (a re-created object of the same name has another).
    pub uid: Uid,
    /// Its version after the write; for `Deleted`, one above the last version stored.
    pub resource_version: u64,
    /// What happened.
    pub change: Change,
}

impl Event {
    /// The event of `change` to the object of `kind` with `metadata`.
    pub(crate) fn of(kind: Kind, metadata: &Metadata, change: Change) -> Self {
        Self {
            kind,
            name: metadata.name.clone(),
            uid: metadata.uid.clone(),
            resource_version: metadata.resource_version,
            change,
        }
    }
}
