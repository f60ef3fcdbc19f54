//! Creating, reading and writing objects: versions, generations, compare-and-swap.

use swdesk_core::infra::{InfraSpec, InfraStatus};
use swdesk_kernel::object::Kind;
use swdesk_kernel::rollup::ObjectPhase;
use swdesk_store::{Store, StoreError};

use crate::support::{at, db_path, described, infra, name, open, record};

#[test]
fn a_created_object_gets_version_one_and_keeps_its_uid_and_creation_time() {
    let (_dir, store) = open();
    let mut wanted = described(infra("web", 1), "site");
    wanted.metadata.generation = 9;
    wanted.metadata.resource_version = 9;
    wanted.metadata.deletion_requested_at = Some(at(5));
    let created = store.create(&wanted).unwrap();
    assert_eq!(created.metadata.resource_version, 1);
    assert_eq!(created.metadata.generation, 1);
    assert_eq!(created.metadata.deletion_requested_at, None);
    assert_eq!(created.metadata.uid, wanted.metadata.uid);
    assert_eq!(created.metadata.created_at, wanted.metadata.created_at);
    assert_eq!(store.get::<InfraSpec>(&name("web")).unwrap(), Some(created));
}

#[test]
fn a_second_object_of_the_same_kind_and_name_already_exists() {
    let (_dir, store) = open();
    store.create(&infra("web", 1)).unwrap();
    let error = store.create(&infra("web", 2)).unwrap_err();
    assert!(
        matches!(&error, StoreError::AlreadyExists { kind: Kind::Infra, name } if name.as_str() == "web"),
        "{error}"
    );
    assert_eq!(error.to_string(), "Infra 'web' already exists");
}

#[test]
fn two_kinds_may_use_the_same_name() {
    let (_dir, store) = open();
    store.create(&infra("web", 1)).unwrap();
    store.create(&record("web", 2, &[])).unwrap();
}

#[test]
fn a_uid_that_another_object_has_is_refused() {
    let (_dir, store) = open();
    store.create(&infra("web", 1)).unwrap();
    let error = store.create(&infra("api", 1)).unwrap_err();
    assert!(matches!(error, StoreError::UidTaken { .. }), "{error}");
}

#[test]
fn reading_a_missing_object_finds_none() {
    let (_dir, store) = open();
    assert_eq!(store.get::<InfraSpec>(&name("web")).unwrap(), None);
}

#[test]
fn a_spec_change_bumps_the_generation_and_the_version() {
    let (_dir, store) = open();
    let created = store.create(&infra("web", 1)).unwrap();
    let replaced = store.replace(&described(created, "site")).unwrap();
    assert_eq!(replaced.metadata.generation, 2);
    assert_eq!(replaced.metadata.resource_version, 2);
    assert_eq!(replaced.spec.description.as_deref(), Some("site"));
}

#[test]
fn a_label_change_bumps_the_version_but_not_the_generation() {
    let (_dir, store) = open();
    let mut object = store.create(&infra("web", 1)).unwrap();
    object.metadata.labels.insert("tier".into(), "front".into());
    let replaced = store.replace(&object).unwrap();
    assert_eq!(replaced.metadata.generation, 1);
    assert_eq!(replaced.metadata.resource_version, 2);
    assert_eq!(replaced.metadata.labels["tier"], "front");
}

#[test]
fn a_write_that_changes_nothing_keeps_the_version() {
    let (_dir, store) = open();
    let created = store.create(&infra("web", 1)).unwrap();
    assert_eq!(store.replace(&created).unwrap(), created);
    assert_eq!(store.update_status(&created).unwrap(), created);
}

#[test]
fn a_replace_at_a_stale_version_is_a_conflict_that_tells_the_current_version() {
    let (_dir, store) = open();
    let stale = store.create(&infra("web", 1)).unwrap();
    store.replace(&described(stale.clone(), "first")).unwrap();
    let error = store.replace(&described(stale, "second")).unwrap_err();
    assert!(
        matches!(
            error,
            StoreError::Conflict {
                expected: 1,
                current: 2,
                ..
            }
        ),
        "{error}"
    );
    let stored = store.get::<InfraSpec>(&name("web")).unwrap().unwrap();
    assert_eq!(stored.spec.description.as_deref(), Some("first"));
}

#[test]
fn a_replace_never_writes_the_status_or_the_finalizers() {
    let (_dir, store) = open();
    let created = store.create(&infra("web", 1)).unwrap();
    let mut wanted = described(created, "site");
    wanted.status.phase = ObjectPhase::Deployed;
    wanted.metadata.finalizers.push("sneaked".into());
    let replaced = store.replace(&wanted).unwrap();
    assert_eq!(replaced.status, InfraStatus::default());
    assert!(replaced.metadata.finalizers.is_empty());
}

#[test]
fn a_status_update_never_changes_the_spec_or_the_generation() {
    let (_dir, store) = open();
    let created = store.create(&described(infra("web", 1), "site")).unwrap();
    let mut wanted = described(created, "ignored");
    wanted.status.phase = ObjectPhase::Deployed;
    wanted.status.observed_generation = 1;
    let updated = store.update_status(&wanted).unwrap();
    assert_eq!(updated.status.phase, ObjectPhase::Deployed);
    assert_eq!(updated.spec.description.as_deref(), Some("site"));
    assert_eq!(updated.metadata.generation, 1);
    assert_eq!(updated.metadata.resource_version, 2);
}

#[test]
fn a_status_update_at_a_stale_version_is_a_conflict() {
    let (_dir, store) = open();
    let mut stale = store.create(&infra("web", 1)).unwrap();
    store.replace(&described(stale.clone(), "site")).unwrap();
    stale.status.phase = ObjectPhase::Deployed;
    let error = store.update_status(&stale).unwrap_err();
    assert!(
        matches!(error, StoreError::Conflict { current: 2, .. }),
        "{error}"
    );
}

#[test]
fn writing_a_missing_object_is_not_found() {
    let (_dir, store) = open();
    let error = store.replace(&infra("web", 1)).unwrap_err();
    assert!(matches!(error, StoreError::NotFound { .. }), "{error}");
    let error = store.delete::<InfraSpec>(&name("web"), at(1)).unwrap_err();
    assert_eq!(error.to_string(), "Infra 'web' does not exist");
}

#[test]
fn objects_outlive_the_store_that_wrote_them() {
    let (dir, store) = open();
    let written = store.create(&described(infra("web", 1), "site")).unwrap();
    let written = store.add_finalizer(&written, "keep").unwrap();
    drop(store);
    let reopened = Store::open(db_path(&dir)).unwrap();
    assert_eq!(
        reopened.get::<InfraSpec>(&name("web")).unwrap(),
        Some(written)
    );
}

#[test]
fn a_replace_with_status_writes_both_at_once_or_neither() {
    let (_dir, store) = open();
    let created = store.create(&infra("web", 1)).unwrap();
    let mut watch = store.watch();
    let mut wanted = described(created.clone(), "pulled");
    wanted.status.phase = ObjectPhase::Deployed;
    wanted.metadata.finalizers.push("sneaked".into());
    let written = store.replace_with_status(&wanted).unwrap();
    assert_eq!(written.spec.description.as_deref(), Some("pulled"));
    assert_eq!(written.status.phase, ObjectPhase::Deployed);
    assert_eq!(written.metadata.resource_version, 2, "one write");
    assert_eq!(written.metadata.generation, 2);
    assert!(written.metadata.finalizers.is_empty());
    assert_eq!(watch.try_recv().unwrap().resource_version, 2);
    assert!(watch.try_recv().is_err(), "one event");

    let mut stale = described(created, "late");
    stale.status.phase = ObjectPhase::Released;
    assert!(matches!(
        store.replace_with_status(&stale),
        Err(StoreError::Conflict { .. })
    ));
    let stored = store.get::<InfraSpec>(&name("web")).unwrap().unwrap();
    assert_eq!(stored, written, "a refused write changes nothing");
}
