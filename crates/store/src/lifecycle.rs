//! The rules of an object's life, on untyped [`Raw`] objects inside the caller's transaction:
//! creation, compare-and-swap writes, deletion through finalizers, and the garbage collection
//! of owned objects. Each operation appends the [`Event`]s of what it changed; the store sends
//! them once the transaction committed.
//!
//! Invariants: the version checks come first and a failed check writes nothing; the pure
//! steps ([`created`], [`replaced`], [`status_updated`], [`with_finalizer`],
//! [`without_finalizer`]) answer `None` for a write that would change nothing, and such a write
//! is skipped; `deletionRequestedAt` is set once; an object is removed only when its deletion
//! was requested and it has no finalizer left, and every object it owns then has its deletion
//! requested, dated by the deletion that started the cascade.

use rusqlite::Connection;
use serde_json::Value;
use swdesk_kernel::name::Name;
use swdesk_kernel::object::{Kind, Uid};
use swdesk_kernel::timestamp::Timestamp;

use crate::error::StoreError;
use crate::row::{self, Raw};
use crate::watch::{Change, Event};

/// Stores `wanted` as a new object: version 1, generation 1, not being deleted.
pub(crate) fn create(
    tx: &Connection,
    wanted: Raw,
    events: &mut Vec<Event>,
) -> Result<Raw, StoreError> {
    let meta = &wanted.metadata;
    if row::find(tx, wanted.kind, &meta.name)?.is_some() {
        let (kind, name) = (wanted.kind, meta.name.clone());
        return Err(StoreError::AlreadyExists { kind, name });
    }
    if row::uid_exists(tx, &meta.uid)? {
        let uid = meta.uid.clone();
        return Err(StoreError::UidTaken { uid });
    }
    let object = created(wanted);
    row::insert(tx, &object)?;
    events.push(Event::of(object.kind, &object.metadata, Change::Added));
    Ok(object)
}

/// Replaces the spec, labels and owner references of the object `wanted` names, if it still
/// has `wanted`'s version.
pub(crate) fn replace(
    tx: &Connection,
    wanted: Raw,
    events: &mut Vec<Event>,
) -> Result<Raw, StoreError> {
    let meta = &wanted.metadata;
    let current = current_at(tx, wanted.kind, &meta.name, meta.resource_version)?;
    let next = replaced(&current, wanted);
    modify(tx, current, next, events)
}

/// Replaces the spec, labels, owner references and the status of `wanted`'s object together,
/// if it is still at `wanted`'s version: one write, so nobody ever sees one without the other.
pub(crate) fn replace_with_status(
    tx: &Connection,
    wanted: Raw,
    events: &mut Vec<Event>,
) -> Result<Raw, StoreError> {
    let meta = &wanted.metadata;
    let current = current_at(tx, wanted.kind, &meta.name, meta.resource_version)?;
    let status = wanted.status.clone();
    let next = match replaced(&current, wanted) {
        Some(mut next) => {
            next.status = status;
            Some(next)
        }
        None => status_updated(&current, status),
    };
    modify(tx, current, next, events)
}

/// Replaces the status of the object of `kind` called `name`, if it is still at `version`.
pub(crate) fn update_status(
    tx: &Connection,
    (kind, name, version): (Kind, &Name, u64),
    status: Value,
    events: &mut Vec<Event>,
) -> Result<Raw, StoreError> {
    let current = current_at(tx, kind, name, version)?;
    let next = status_updated(&current, status);
    modify(tx, current, next, events)
}

/// Adds `finalizer` to the object, if it is still at `version` and not being deleted.
pub(crate) fn add_finalizer(
    tx: &Connection,
    (kind, name, version): (Kind, &Name, u64),
    finalizer: &str,
    events: &mut Vec<Event>,
) -> Result<Raw, StoreError> {
    let current = current_at(tx, kind, name, version)?;
    let next = with_finalizer(&current, finalizer);
    if next.is_some() && current.metadata.is_deleting() {
        let name = name.clone();
        return Err(StoreError::Deleting { kind, name });
    }
    modify(tx, current, next, events)
}

/// Removes `finalizer` from the object, if it is still at `version`; the object goes when it
/// was being deleted and this was its last finalizer (answering `None`).
pub(crate) fn remove_finalizer(
    tx: &Connection,
    (kind, name, version): (Kind, &Name, u64),
    finalizer: &str,
    events: &mut Vec<Event>,
) -> Result<Option<Raw>, StoreError> {
    let current = current_at(tx, kind, name, version)?;
    let next = without_finalizer(&current, finalizer);
    let removable = next
        .as_ref()
        .is_some_and(|n| n.metadata.finalizers.is_empty());
    match current.metadata.deletion_requested_at {
        Some(at) if removable => {
            remove(tx, &current, events)?;
            collect_owned(tx, current.metadata.uid, at, events)?;
            Ok(None)
        }
        _ => modify(tx, current, next, events).map(Some),
    }
}

/// Requests the deletion of the object of `kind` called `name` at `now`, once: an object
/// without finalizers goes at once (answering `None`), with its owned objects collected.
pub(crate) fn delete(
    tx: &Connection,
    (kind, name): (Kind, &Name),
    now: Timestamp,
    events: &mut Vec<Event>,
) -> Result<Option<Raw>, StoreError> {
    let current = existing(tx, kind, name)?;
    if current.metadata.is_deleting() {
        return Ok(Some(current));
    }
    match request_deletion(tx, current, now, events)? {
        Requested::Marked(marked) => Ok(Some(*marked)),
        Requested::Removed(uid) => {
            collect_owned(tx, uid, now, events)?;
            Ok(None)
        }
    }
}

/// What requesting a deletion did.
enum Requested {
    /// The object had finalizers: it stays, marked.
    Marked(Box<Raw>),
    /// The object had none: it is gone; its owned objects are still to collect.
    Removed(Uid),
}

/// Sets `deletionRequestedAt` to `at` on an object not yet being deleted, or removes it when
/// it has no finalizer.
fn request_deletion(
    tx: &Connection,
    mut object: Raw,
    at: Timestamp,
    events: &mut Vec<Event>,
) -> Result<Requested, StoreError> {
    if object.metadata.finalizers.is_empty() {
        remove(tx, &object, events)?;
        return Ok(Requested::Removed(object.metadata.uid));
    }
    object.metadata.deletion_requested_at = Some(at);
    let marked = bumped(object);
    row::update(tx, &marked)?;
    events.push(Event::of(
        marked.kind,
        &marked.metadata,
        Change::DeletionRequested,
    ));
    Ok(Requested::Marked(Box::new(marked)))
}

/// Requests the deletion of every object owned by the removed `owner`, and of theirs in turn
/// as each goes. Objects already being deleted are left as they are, which also ends cycles.
fn collect_owned(
    tx: &Connection,
    owner: Uid,
    at: Timestamp,
    events: &mut Vec<Event>,
) -> Result<(), StoreError> {
    let mut removed = vec![owner];
    while let Some(owner) = removed.pop() {
        for child in row::owned_by(tx, &owner)? {
            if child.metadata.is_deleting() {
                continue;
            }
            if let Requested::Removed(uid) = request_deletion(tx, child, at, events)? {
                removed.push(uid);
            }
        }
    }
    Ok(())
}

/// Removes the row of `object`. The removal is a write of its own: its `Deleted` event
/// carries the version after the last one stored, so no watcher mistakes it for a change it
/// already listed.
fn remove(tx: &Connection, object: &Raw, events: &mut Vec<Event>) -> Result<(), StoreError> {
    row::remove(tx, &object.metadata.uid)?;
    let mut last = object.metadata.clone();
    last.resource_version = last.resource_version.saturating_add(1);
    events.push(Event::of(object.kind, &last, Change::Deleted));
    Ok(())
}

/// Writes `next` in place of `current` when there is a change; answers what is stored.
fn modify(
    tx: &Connection,
    current: Raw,
    next: Option<Raw>,
    events: &mut Vec<Event>,
) -> Result<Raw, StoreError> {
    let Some(next) = next else {
        return Ok(current);
    };
    row::update(tx, &next)?;
    events.push(Event::of(next.kind, &next.metadata, Change::Modified));
    Ok(next)
}

/// The stored object, which must exist.
fn existing(tx: &Connection, kind: Kind, name: &Name) -> Result<Raw, StoreError> {
    row::find(tx, kind, name)?.ok_or_else(|| StoreError::NotFound {
        kind,
        name: name.clone(),
    })
}

/// The stored object, which must exist and be at `expected`.
fn current_at(tx: &Connection, kind: Kind, name: &Name, expected: u64) -> Result<Raw, StoreError> {
    let current = existing(tx, kind, name)?;
    let stored = current.metadata.resource_version;
    if stored != expected {
        let name = name.clone();
        return Err(StoreError::Conflict {
            kind,
            name,
            expected,
            current: stored,
        });
    }
    Ok(current)
}

/// `wanted` as the store first keeps it: version 1, generation 1, not being deleted.
pub(crate) fn created(mut wanted: Raw) -> Raw {
    wanted.metadata.generation = 1;
    wanted.metadata.resource_version = 1;
    wanted.metadata.deletion_requested_at = None;
    wanted
}

/// `current` with the spec, labels and owner references of `wanted`, the generation bumped
/// when the spec changed; `None` when nothing changed.
pub(crate) fn replaced(current: &Raw, wanted: Raw) -> Option<Raw> {
    let spec_changed = wanted.spec != current.spec;
    let labels_changed = wanted.metadata.labels != current.metadata.labels;
    let owners_changed = wanted.metadata.owner_refs != current.metadata.owner_refs;
    if !(spec_changed || labels_changed || owners_changed) {
        return None;
    }
    let mut next = current.clone();
    next.spec = wanted.spec;
    next.metadata.labels = wanted.metadata.labels;
    next.metadata.owner_refs = wanted.metadata.owner_refs;
    if spec_changed {
        next.metadata.generation = next.metadata.generation.saturating_add(1);
    }
    Some(bumped(next))
}

/// `current` with `status`; `None` when it is the same.
pub(crate) fn status_updated(current: &Raw, status: Value) -> Option<Raw> {
    (status != current.status).then(|| {
        let mut next = current.clone();
        next.status = status;
        bumped(next)
    })
}

/// `current` with `finalizer` added at the end; `None` when it has it already.
pub(crate) fn with_finalizer(current: &Raw, finalizer: &str) -> Option<Raw> {
    let has = current.metadata.finalizers.iter().any(|f| f == finalizer);
    (!has).then(|| {
        let mut next = current.clone();
        next.metadata.finalizers.push(finalizer.to_owned());
        bumped(next)
    })
}

/// `current` without `finalizer`; `None` when it does not have it.
pub(crate) fn without_finalizer(current: &Raw, finalizer: &str) -> Option<Raw> {
    let has = current.metadata.finalizers.iter().any(|f| f == finalizer);
    has.then(|| {
        let mut next = current.clone();
        next.metadata.finalizers.retain(|f| f != finalizer);
        bumped(next)
    })
}

/// `raw` one write later.
fn bumped(mut raw: Raw) -> Raw {
    raw.metadata.resource_version = raw.metadata.resource_version.saturating_add(1);
    raw
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;
    use swdesk_kernel::object::Metadata;

    fn raw(spec: Value) -> Raw {
        let name = Name::parse("web").unwrap();
        let uid = Uid::from_bytes([7; 16]);
        let mut metadata = Metadata::new(name, uid, Timestamp::MIN);
        metadata.resource_version = 4;
        metadata.generation = 2;
        let status = json!({"phase": "Pending"});
        Raw {
            kind: Kind::Infra,
            metadata,
            spec,
            status,
        }
    }

    #[test]
    fn a_created_object_starts_at_version_and_generation_one_not_deleting() {
        let mut wanted = raw(json!({}));
        wanted.metadata.deletion_requested_at = Some(Timestamp::MAX);
        let object = created(wanted);
        assert_eq!(object.metadata.resource_version, 1);
        assert_eq!(object.metadata.generation, 1);
        assert!(!object.metadata.is_deleting());
    }

    #[test]
    fn a_label_change_bumps_the_version_but_not_the_generation() {
        let current = raw(json!({"description": "a"}));
        let mut wanted = current.clone();
        wanted.metadata.labels.insert("tier".into(), "web".into());
        let next = replaced(&current, wanted).unwrap();
        assert_eq!(next.metadata.resource_version, 5);
        assert_eq!(next.metadata.generation, 2);
    }

    #[test]
    fn a_replace_keeps_the_stored_status_finalizers_and_deletion() {
        let mut current = raw(json!({"description": "a"}));
        current.metadata.finalizers = vec!["keep".into()];
        current.metadata.deletion_requested_at = Some(Timestamp::MIN);
        let mut wanted = raw(json!({"description": "b"}));
        wanted.status = json!({"phase": "Forged"});
        wanted.metadata.finalizers.clear();
        wanted.metadata.deletion_requested_at = None;
        let next = replaced(&current, wanted).unwrap();
        assert_eq!(next.status, current.status);
        assert_eq!(next.metadata.finalizers, ["keep"]);
        assert!(next.metadata.is_deleting());
    }

    #[test]
    fn a_status_update_leaves_spec_and_generation_alone() {
        let current = raw(json!({"description": "a"}));
        let next = status_updated(&current, json!({"phase": "Ready"})).unwrap();
        assert_eq!((&next.spec, next.metadata.generation), (&current.spec, 2));
        assert_eq!(next.metadata.resource_version, 5);
        assert!(status_updated(&current, current.status.clone()).is_none());
    }

    #[test]
    fn adding_a_present_finalizer_or_removing_an_absent_one_is_no_write() {
        let current = raw(json!({}));
        let with = with_finalizer(&current, "x").unwrap();
        assert_eq!(with.metadata.finalizers, ["x"]);
        assert!(with_finalizer(&with, "x").is_none());
        assert!(without_finalizer(&current, "x").is_none());
        assert!(
            without_finalizer(&with, "x")
                .unwrap()
                .metadata
                .finalizers
                .is_empty()
        );
    }

    proptest! {
        #[test]
        fn the_generation_moves_exactly_when_the_spec_changes(a in 0u8..4, b in 0u8..4) {
            let current = raw(json!({"description": a.to_string()}));
            let wanted = raw(json!({"description": b.to_string()}));
            match replaced(&current, wanted) {
                None => prop_assert_eq!(a, b),
                Some(next) => {
                    prop_assert_ne!(a, b);
                    prop_assert_eq!(next.metadata.generation, 3);
                    prop_assert_eq!(next.metadata.resource_version, 5);
                }
            }
        }
    }
}
