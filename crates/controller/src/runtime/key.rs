//! [`ObjectKey`]: what the runtime schedules and hands to a reconciler, an object's kind and
//! name.
//!
//! Invariant: a key names an object and never carries it, so a queued key cannot go stale: the
//! reconciler reads the object afresh on every run (level-triggered).

use std::fmt;

use swdesk_kernel::name::Name;
use swdesk_kernel::object::Kind;

/// The kind and name of one object (names are unique per kind).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectKey {
    /// The object's kind.
    pub kind: Kind,
    /// The object's name.
    pub name: Name,
}

impl ObjectKey {
    /// The key of the object of `kind` named `name`.
    pub fn new(kind: Kind, name: Name) -> Self {
        Self { kind, name }
    }
}

impl fmt::Display for ObjectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}/{}", self.kind, self.name)
    }
}
