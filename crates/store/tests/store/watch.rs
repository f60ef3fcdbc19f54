//! The watch stream: one event per object changed by a committed write, in commit order.

use std::sync::Arc;

use swdesk_core::infra::InfraSpec;
use swdesk_store::{Change, Event, Store};
use tokio::sync::broadcast::Receiver;

use crate::support::{at, described, infra, name, open, record};

/// Every event received so far, as (name, change, resourceVersion).
fn drain(events: &mut Receiver<Event>) -> Vec<(String, Change, u64)> {
    let mut seen = Vec::new();
    while let Ok(event) = events.try_recv() {
        seen.push((event.name.to_string(), event.change, event.resource_version));
    }
    seen
}

fn seen(name: &str, change: Change, version: u64) -> (String, Change, u64) {
    (name.to_owned(), change, version)
}

#[test]
fn every_write_of_an_objects_life_is_seen_once_in_commit_order() {
    let (_dir, store) = open();
    let mut events = store.watch();
    let created = store.create(&infra("web", 1)).unwrap();
    let replaced = store.replace(&described(created, "site")).unwrap();
    let mut held = store.add_finalizer(&replaced, "publish").unwrap();
    held.status.observed_generation = 2;
    store.update_status(&held).unwrap();
    let deleting = store
        .delete::<InfraSpec>(&name("web"), at(5))
        .unwrap()
        .unwrap();
    store.remove_finalizer(&deleting, "publish").unwrap();
    assert_eq!(
        drain(&mut events),
        [
            seen("web", Change::Added, 1),
            seen("web", Change::Modified, 2),
            seen("web", Change::Modified, 3),
            seen("web", Change::Modified, 4),
            seen("web", Change::DeletionRequested, 5),
            seen("web", Change::Deleted, 6),
        ]
    );
}

#[test]
fn a_write_that_fails_or_changes_nothing_sends_no_event() {
    let (_dir, store) = open();
    let created = store.create(&infra("web", 1)).unwrap();
    let mut events = store.watch();
    store.create(&infra("web", 2)).unwrap_err();
    store.replace(&created).unwrap();
    store.replace(&described(created.clone(), "a")).unwrap();
    store.replace(&described(created, "b")).unwrap_err();
    assert_eq!(drain(&mut events), [seen("web", Change::Modified, 2)]);
}

#[test]
fn a_cascade_reports_the_removed_owner_then_each_child() {
    let (_dir, store) = open();
    let owner = store.create(&infra("web", 1)).unwrap();
    let held = store.create(&record("a", 2, &[&owner.metadata])).unwrap();
    store.add_finalizer(&held, "unpublish").unwrap();
    store.create(&record("b", 3, &[&owner.metadata])).unwrap();
    let mut events = store.watch();
    store.delete::<InfraSpec>(&name("web"), at(5)).unwrap();
    assert_eq!(
        drain(&mut events),
        [
            seen("web", Change::Deleted, 2),
            seen("a", Change::DeletionRequested, 3),
            seen("b", Change::Deleted, 2),
        ]
    );
}

#[test]
fn an_event_names_the_kind_and_uid_of_its_object() {
    let (_dir, store) = open();
    let mut events = store.watch();
    let created = store.create(&record("note", 7, &[])).unwrap();
    let event = events.try_recv().unwrap();
    assert_eq!(event.kind, swdesk_kernel::object::Kind::AtprotoRecord);
    assert_eq!(event.uid, created.metadata.uid);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn async_writers_on_blocking_threads_are_seen_in_each_objects_version_order() {
    let (_dir, store) = open();
    let store = Arc::new(store);
    let mut events = store.watch();
    let writers: Vec<_> = (0..4u8)
        .map(|n| {
            let store = Arc::clone(&store);
            tokio::task::spawn_blocking(move || write_ten_times(&store, n))
        })
        .collect();
    for writer in writers {
        writer.await.unwrap();
    }
    let mut last = std::collections::BTreeMap::new();
    for _ in 0..4 * 11 {
        let event = events.recv().await.unwrap();
        let previous = last.insert(event.name.to_string(), event.resource_version);
        assert_eq!(
            previous.unwrap_or(0) + 1,
            event.resource_version,
            "{event:?}"
        );
    }
    assert!(last.values().all(|version| *version == 11), "{last:?}");
}

fn write_ten_times(store: &Store, n: u8) {
    let mut object = store.create(&infra(&format!("obj-{n}"), n + 1)).unwrap();
    for round in 0..10 {
        object = store
            .replace(&described(object, &format!("round {round}")))
            .unwrap();
    }
}
