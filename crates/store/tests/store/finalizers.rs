//! Deletion: `deletionRequestedAt` set once, finalizers holding the object until the last one
//! goes.

use swdesk_core::infra::InfraSpec;
use swdesk_store::StoreError;

use crate::support::{at, infra, name, open};

#[test]
fn deleting_an_object_without_finalizers_removes_it_at_once() {
    let (_dir, store) = open();
    store.create(&infra("web", 1)).unwrap();
    assert_eq!(
        store.delete::<InfraSpec>(&name("web"), at(5)).unwrap(),
        None
    );
    assert_eq!(store.get::<InfraSpec>(&name("web")).unwrap(), None);
}

#[test]
fn deleting_an_object_with_finalizers_only_requests_its_deletion() {
    let (_dir, store) = open();
    let created = store.create(&infra("web", 1)).unwrap();
    store.add_finalizer(&created, "publish").unwrap();
    let deleting = store
        .delete::<InfraSpec>(&name("web"), at(5))
        .unwrap()
        .unwrap();
    assert_eq!(deleting.metadata.deletion_requested_at, Some(at(5)));
    assert_eq!(deleting.metadata.resource_version, 3);
    assert_eq!(deleting.metadata.generation, 1);
    assert_eq!(
        store.get::<InfraSpec>(&name("web")).unwrap(),
        Some(deleting)
    );
}

#[test]
fn a_second_deletion_request_keeps_the_first_time_and_version() {
    let (_dir, store) = open();
    let created = store.create(&infra("web", 1)).unwrap();
    store.add_finalizer(&created, "publish").unwrap();
    let first = store.delete::<InfraSpec>(&name("web"), at(5)).unwrap();
    let second = store.delete::<InfraSpec>(&name("web"), at(9)).unwrap();
    assert_eq!(first, second);
}

#[test]
fn removing_the_last_finalizer_of_a_deleting_object_removes_it() {
    let (_dir, store) = open();
    let created = store.create(&infra("web", 1)).unwrap();
    let held = store.add_finalizer(&created, "publish").unwrap();
    store.add_finalizer(&held, "index").unwrap();
    store.delete::<InfraSpec>(&name("web"), at(5)).unwrap();
    let deleting = store.get::<InfraSpec>(&name("web")).unwrap().unwrap();
    let left = store
        .remove_finalizer(&deleting, "publish")
        .unwrap()
        .unwrap();
    assert_eq!(left.metadata.finalizers, ["index"]);
    assert_eq!(store.remove_finalizer(&left, "index").unwrap(), None);
    assert_eq!(store.get::<InfraSpec>(&name("web")).unwrap(), None);
}

#[test]
fn removing_the_last_finalizer_of_an_object_not_being_deleted_keeps_it() {
    let (_dir, store) = open();
    let created = store.create(&infra("web", 1)).unwrap();
    let held = store.add_finalizer(&created, "publish").unwrap();
    let freed = store.remove_finalizer(&held, "publish").unwrap().unwrap();
    assert!(freed.metadata.finalizers.is_empty());
    assert_eq!(freed.metadata.resource_version, 3);
}

#[test]
fn no_finalizer_may_be_added_to_an_object_being_deleted() {
    let (_dir, store) = open();
    let created = store.create(&infra("web", 1)).unwrap();
    store.add_finalizer(&created, "publish").unwrap();
    let deleting = store
        .delete::<InfraSpec>(&name("web"), at(5))
        .unwrap()
        .unwrap();
    let error = store.add_finalizer(&deleting, "late").unwrap_err();
    assert!(matches!(error, StoreError::Deleting { .. }), "{error}");
    assert_eq!(store.add_finalizer(&deleting, "publish").unwrap(), deleting);
}

#[test]
fn finalizer_changes_compare_and_swap_on_the_version() {
    let (_dir, store) = open();
    let stale = store.create(&infra("web", 1)).unwrap();
    store.add_finalizer(&stale, "publish").unwrap();
    let error = store.add_finalizer(&stale, "index").unwrap_err();
    assert!(
        matches!(error, StoreError::Conflict { current: 2, .. }),
        "{error}"
    );
    let error = store.remove_finalizer(&stale, "publish").unwrap_err();
    assert!(
        matches!(error, StoreError::Conflict { current: 2, .. }),
        "{error}"
    );
}

#[test]
fn a_deleting_object_may_still_have_its_spec_and_status_written() {
    let (_dir, store) = open();
    let created = store.create(&infra("web", 1)).unwrap();
    store.add_finalizer(&created, "publish").unwrap();
    let mut deleting = store
        .delete::<InfraSpec>(&name("web"), at(5))
        .unwrap()
        .unwrap();
    deleting.status.observed_generation = 1;
    let written = store.update_status(&deleting).unwrap();
    assert_eq!(written.metadata.deletion_requested_at, Some(at(5)));
}
