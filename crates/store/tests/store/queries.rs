//! Lists: per kind, by label, by owner uid.

use swdesk_core::infra::InfraSpec;
use swdesk_core::record::AtprotoRecordSpec;

use crate::support::{infra, open, record, uid};

fn names<S, T>(objects: &[swdesk_kernel::object::Object<S, T>]) -> Vec<&str> {
    objects.iter().map(|o| o.metadata.name.as_str()).collect()
}

#[test]
fn a_list_holds_the_objects_of_one_kind_in_name_order() {
    let (_dir, store) = open();
    store.create(&infra("web", 1)).unwrap();
    store.create(&infra("api", 2)).unwrap();
    store.create(&record("note", 3, &[])).unwrap();
    assert_eq!(names(&store.list::<InfraSpec>().unwrap()), ["api", "web"]);
    assert_eq!(names(&store.list::<AtprotoRecordSpec>().unwrap()), ["note"]);
}

#[test]
fn a_label_query_finds_only_the_objects_with_that_value() {
    let (_dir, store) = open();
    for (text, n, tier) in [("web", 1, "front"), ("api", 2, "back"), ("cdn", 3, "front")] {
        let mut object = infra(text, n);
        object.metadata.labels.insert("tier".into(), tier.into());
        store.create(&object).unwrap();
    }
    store.create(&infra("bare", 4)).unwrap();
    let front = store.list_by_label::<InfraSpec>("tier", "front").unwrap();
    assert_eq!(names(&front), ["cdn", "web"]);
    assert!(
        store
            .list_by_label::<InfraSpec>("zone", "front")
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .list_by_label::<AtprotoRecordSpec>("tier", "front")
            .unwrap()
            .is_empty()
    );
}

#[test]
fn a_label_change_moves_an_object_between_label_queries() {
    let (_dir, store) = open();
    let mut object = infra("web", 1);
    object.metadata.labels.insert("tier".into(), "front".into());
    let mut object = store.create(&object).unwrap();
    object.metadata.labels.insert("tier".into(), "back".into());
    store.replace(&object).unwrap();
    assert!(
        store
            .list_by_label::<InfraSpec>("tier", "front")
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        names(&store.list_by_label::<InfraSpec>("tier", "back").unwrap()),
        ["web"]
    );
}

#[test]
fn an_owner_query_finds_the_objects_that_name_that_uid() {
    let (_dir, store) = open();
    let web = store.create(&infra("web", 1)).unwrap();
    let api = store.create(&infra("api", 2)).unwrap();
    store.create(&record("b", 3, &[&web.metadata])).unwrap();
    store
        .create(&record("a", 4, &[&web.metadata, &api.metadata]))
        .unwrap();
    store.create(&record("c", 5, &[&api.metadata])).unwrap();
    let of_web = store
        .list_owned_by::<AtprotoRecordSpec>(&web.metadata.uid)
        .unwrap();
    assert_eq!(names(&of_web), ["a", "b"]);
    assert!(
        store
            .list_owned_by::<AtprotoRecordSpec>(&uid(9))
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .list_owned_by::<InfraSpec>(&web.metadata.uid)
            .unwrap()
            .is_empty()
    );
}

#[test]
fn an_owner_change_moves_an_object_between_owner_queries() {
    let (_dir, store) = open();
    let web = store.create(&infra("web", 1)).unwrap();
    let api = store.create(&infra("api", 2)).unwrap();
    let mut child = store.create(&record("a", 3, &[&web.metadata])).unwrap();
    child.metadata.owner_refs = vec![crate::support::owned_by(&api.metadata)];
    let moved = store.replace(&child).unwrap();
    assert_eq!(moved.metadata.generation, 1);
    assert!(
        store
            .list_owned_by::<AtprotoRecordSpec>(&web.metadata.uid)
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        store
            .list_owned_by::<AtprotoRecordSpec>(&api.metadata.uid)
            .unwrap(),
        [moved]
    );
}
