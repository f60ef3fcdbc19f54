//! Garbage collection: when an object is removed, every object whose owner references name its
//! uid has its deletion requested, and so on down as each of them goes.

use swdesk_core::infra::InfraSpec;
use swdesk_core::record::AtprotoRecordSpec;

use crate::support::{at, db_path, infra, name, open, owned_by, record};

#[test]
fn removing_an_owner_removes_its_children_without_finalizers() {
    let (_dir, store) = open();
    let owner = store.create(&infra("web", 1)).unwrap();
    store.create(&record("a", 2, &[&owner.metadata])).unwrap();
    store.create(&record("b", 3, &[&owner.metadata])).unwrap();
    store.delete::<InfraSpec>(&name("web"), at(5)).unwrap();
    assert!(store.list::<AtprotoRecordSpec>().unwrap().is_empty());
}

#[test]
fn objects_of_another_owner_are_left_alone() {
    let (_dir, store) = open();
    let owner = store.create(&infra("web", 1)).unwrap();
    let other = store.create(&infra("api", 2)).unwrap();
    store.create(&record("a", 3, &[&owner.metadata])).unwrap();
    let kept = store.create(&record("b", 4, &[&other.metadata])).unwrap();
    store.delete::<InfraSpec>(&name("web"), at(5)).unwrap();
    assert_eq!(store.list::<AtprotoRecordSpec>().unwrap(), [kept]);
}

#[test]
fn a_child_with_finalizers_is_asked_to_go_and_goes_with_its_last_finalizer() {
    let (_dir, store) = open();
    let owner = store.create(&infra("web", 1)).unwrap();
    let child = store.create(&record("a", 2, &[&owner.metadata])).unwrap();
    store.add_finalizer(&child, "unpublish").unwrap();
    store.delete::<InfraSpec>(&name("web"), at(5)).unwrap();
    let asked = store.get::<AtprotoRecordSpec>(&name("a")).unwrap().unwrap();
    assert_eq!(asked.metadata.deletion_requested_at, Some(at(5)));
    store.remove_finalizer(&asked, "unpublish").unwrap();
    assert_eq!(store.get::<AtprotoRecordSpec>(&name("a")).unwrap(), None);
}

#[test]
fn an_owner_held_by_a_finalizer_keeps_its_children_until_it_is_removed() {
    let (_dir, store) = open();
    let owner = store.create(&infra("web", 1)).unwrap();
    store.create(&record("a", 2, &[&owner.metadata])).unwrap();
    store.add_finalizer(&owner, "publish").unwrap();
    let deleting = store
        .delete::<InfraSpec>(&name("web"), at(5))
        .unwrap()
        .unwrap();
    let child = store.get::<AtprotoRecordSpec>(&name("a")).unwrap().unwrap();
    assert!(!child.metadata.is_deleting());
    store.remove_finalizer(&deleting, "publish").unwrap();
    assert_eq!(store.get::<AtprotoRecordSpec>(&name("a")).unwrap(), None);
}

#[test]
fn collection_cascades_to_grandchildren_as_each_generation_goes() {
    let (_dir, store) = open();
    let top = store.create(&infra("top", 1)).unwrap();
    let mut middle = infra("middle", 2);
    middle.metadata.owner_refs.push(owned_by(&top.metadata));
    middle.metadata.finalizers.push("publish".into());
    let middle = store.create(&middle).unwrap();
    store
        .create(&record("leaf", 3, &[&middle.metadata]))
        .unwrap();

    store.delete::<InfraSpec>(&name("top"), at(5)).unwrap();
    let middle = store.get::<InfraSpec>(&name("middle")).unwrap().unwrap();
    assert_eq!(middle.metadata.deletion_requested_at, Some(at(5)));
    assert!(
        store
            .get::<AtprotoRecordSpec>(&name("leaf"))
            .unwrap()
            .is_some()
    );

    store.remove_finalizer(&middle, "publish").unwrap();
    assert_eq!(store.get::<AtprotoRecordSpec>(&name("leaf")).unwrap(), None);
    assert!(store.list::<InfraSpec>().unwrap().is_empty());
}

#[test]
fn a_chain_without_finalizers_goes_in_one_write() {
    let (_dir, store) = open();
    let top = store.create(&infra("top", 1)).unwrap();
    let mut middle = infra("middle", 2);
    middle.metadata.owner_refs.push(owned_by(&top.metadata));
    let middle = store.create(&middle).unwrap();
    store
        .create(&record("leaf", 3, &[&middle.metadata]))
        .unwrap();
    store.delete::<InfraSpec>(&name("top"), at(5)).unwrap();
    assert!(store.list::<InfraSpec>().unwrap().is_empty());
    assert!(store.list::<AtprotoRecordSpec>().unwrap().is_empty());
}

#[test]
fn an_ownership_cycle_is_collected_once_and_ends() {
    let (_dir, store) = open();
    let mut first = infra("first", 1);
    let mut second = infra("second", 2);
    first.metadata.owner_refs.push(owned_by(&second.metadata));
    second.metadata.owner_refs.push(owned_by(&first.metadata));
    store.create(&first).unwrap();
    store.create(&second).unwrap();
    let mut events = store.watch();
    store.delete::<InfraSpec>(&name("first"), at(5)).unwrap();
    assert!(store.list::<InfraSpec>().unwrap().is_empty());
    let mut gone = Vec::new();
    while let Ok(event) = events.try_recv() {
        gone.push(event.name.to_string());
    }
    assert_eq!(gone, ["first", "second"]);
}

#[test]
fn a_child_of_two_owners_is_collected_when_either_goes() {
    let (_dir, store) = open();
    let web = store.create(&infra("web", 1)).unwrap();
    let api = store.create(&infra("api", 2)).unwrap();
    store
        .create(&record("a", 3, &[&web.metadata, &api.metadata]))
        .unwrap();
    store.delete::<InfraSpec>(&name("api"), at(5)).unwrap();
    assert_eq!(store.get::<AtprotoRecordSpec>(&name("a")).unwrap(), None);
}

#[test]
fn the_label_and_owner_rows_of_a_removed_object_go_with_it() {
    let (dir, store) = open();
    let owner = store.create(&infra("web", 1)).unwrap();
    let mut child = record("a", 2, &[&owner.metadata]);
    child.metadata.labels.insert("tier".into(), "front".into());
    store.create(&child).unwrap();
    store.delete::<InfraSpec>(&name("web"), at(5)).unwrap();
    let conn = rusqlite::Connection::open(db_path(&dir)).unwrap();
    let count = |table: &str| -> i64 {
        conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |row| {
            row.get(0)
        })
        .unwrap()
    };
    assert_eq!(
        (count("objects"), count("labels"), count("owner_refs")),
        (0, 0, 0)
    );
}
