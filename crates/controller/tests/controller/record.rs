//! AtprotoRecord: written with a swap cid, in sync at no cost, never overwriting a record it did
//! not write last, and deleting only what its policy allows.

use serde_json::{Value, json};
use swdesk_controller::kinds::record::{FINALIZER, RecordReconciler};
use swdesk_controller::runtime::{Action, ObjectKey, Reconciler};
use swdesk_core::record::{AtprotoRecordObject, AtprotoRecordSpec, DeletionPolicy};
use swdesk_kernel::name::Name;
use swdesk_kernel::object::{Kind, Object};
use swdesk_kernel::rkey::Rkey;

use crate::support::{OWNER, World};

const INFRA: &str = "computer.socialweb.infra";
const NOTE: &str = "com.example.note";

fn value(description: &str) -> Value {
    json!({"$type": INFRA, "description": description, "contracts": [], "createdAt": "2026-12-03T00:00:00.000Z"})
}

fn create(
    world: &World,
    name: &str,
    collection: &str,
    value: Value,
    policy: DeletionPolicy,
) -> AtprotoRecordObject {
    let object = Object {
        metadata: world.metadata(name),
        spec: AtprotoRecordSpec {
            collection: collection.to_owned(),
            rkey: Rkey::parse(name).unwrap(),
            value,
            deletion_policy: policy,
            swap: None,
        },
        status: Default::default(),
    };
    world.store.create::<AtprotoRecordSpec>(&object).unwrap()
}

fn get(world: &World, name: &str) -> Option<AtprotoRecordObject> {
    world
        .store
        .get::<AtprotoRecordSpec>(&Name::parse(name).unwrap())
        .unwrap()
}

async fn reconcile(world: &World, name: &str) -> Result<Action, swdesk_controller::ReconcileError> {
    let reconciler = RecordReconciler::new(world.context.clone());
    reconciler
        .reconcile(&ObjectKey::new(
            Kind::AtprotoRecord,
            Name::parse(name).unwrap(),
        ))
        .await
}

/// Adds the finalizer, then writes: what every test starts with.
async fn written(
    world: &World,
    name: &str,
    collection: &str,
    policy: DeletionPolicy,
) -> AtprotoRecordObject {
    create(world, name, collection, value("first"), policy);
    assert_eq!(reconcile(world, name).await.unwrap(), Action::AwaitChange);
    assert_eq!(get(world, name).unwrap().metadata.finalizers, [FINALIZER]);
    reconcile(world, name).await.unwrap();
    get(world, name).unwrap()
}

#[tokio::test]
async fn a_new_record_is_written_once_and_then_costs_no_request() {
    let world = World::new();
    let object = written(&world, "web", INFRA, DeletionPolicy::Retain).await;
    assert_eq!(world.repo.value(OWNER, INFRA, "web"), Some(value("first")));
    let status = &object.status;
    assert_eq!(
        status.uri.as_deref(),
        Some(format!("at://{OWNER}/{INFRA}/web").as_str())
    );
    assert!(status.cid.is_some() && status.error.is_none() && status.last_write_at.is_some());
    let calls = world.repo.calls();
    assert_eq!(calls.puts, 1);

    reconcile(&world, "web").await.unwrap();
    reconcile(&world, "web").await.unwrap();
    assert_eq!(
        world.repo.calls(),
        calls,
        "an object in sync makes no request"
    );
}

#[tokio::test]
async fn a_changed_value_is_written_over_the_record_it_wrote_last() {
    let world = World::new();
    let mut object = written(&world, "web", INFRA, DeletionPolicy::Retain).await;
    let first_cid = object.status.cid.clone();
    object.spec.value = value("second");
    world.store.replace::<AtprotoRecordSpec>(&object).unwrap();
    reconcile(&world, "web").await.unwrap();
    assert_eq!(world.repo.value(OWNER, INFRA, "web"), Some(value("second")));
    let after = get(&world, "web").unwrap();
    assert_ne!(after.status.cid, first_cid);
    assert_eq!(after.status.error, None);
}

#[tokio::test]
async fn a_record_changed_elsewhere_is_never_overwritten_and_the_status_says_so() {
    let world = World::new();
    let mut object = written(&world, "web", INFRA, DeletionPolicy::Retain).await;
    world
        .repo
        .write_directly(OWNER, INFRA, "web", value("edited on another device"));
    object.spec.value = value("edited here");
    world.store.replace::<AtprotoRecordSpec>(&object).unwrap();

    assert_eq!(reconcile(&world, "web").await.unwrap(), Action::AwaitChange);
    assert_eq!(
        world.repo.value(OWNER, INFRA, "web"),
        Some(value("edited on another device"))
    );
    let error = get(&world, "web").unwrap().status.error.unwrap();
    assert!(error.contains("changed in the repo"), "{error}");
}

/// The deployment wrote a newer value into the object while the first write was in flight:
/// the write's outcome is still kept, so the next write swaps against our own record instead
/// of refusing it as someone else's (the "waiting to sync: the record changed in the repo" a
/// contract requested right after its deployment's creation was stuck in).
#[tokio::test]
async fn a_write_whose_object_changed_meanwhile_keeps_its_outcome_and_the_next_write_lands() {
    let world = World::new();
    create(&world, "web", INFRA, value("first"), DeletionPolicy::Retain);
    reconcile(&world, "web").await.unwrap();
    let store = world.store.clone();
    world.repo.during_next_put(move || {
        let name = Name::parse("web").unwrap();
        let mut object = store.get::<AtprotoRecordSpec>(&name).unwrap().unwrap();
        object.spec.value = value("second");
        store.replace::<AtprotoRecordSpec>(&object).unwrap();
    });
    reconcile(&world, "web").await.unwrap();
    let kept = get(&world, "web").unwrap();
    assert!(
        kept.status.cid.is_some(),
        "the first write's outcome is kept"
    );
    assert_eq!(kept.spec.value, value("second"));

    reconcile(&world, "web").await.unwrap();
    assert_eq!(world.repo.value(OWNER, INFRA, "web"), Some(value("second")));
    assert_eq!(get(&world, "web").unwrap().status.error, None);
}

#[tokio::test]
async fn a_record_that_already_holds_the_value_is_adopted_without_a_write() {
    let world = World::new();
    let mut object = written(&world, "web", INFRA, DeletionPolicy::Retain).await;
    let cid = world
        .repo
        .write_directly(OWNER, INFRA, "web", value("agreed"));
    object.spec.value = value("agreed");
    world.store.replace::<AtprotoRecordSpec>(&object).unwrap();

    reconcile(&world, "web").await.unwrap();
    let after = get(&world, "web").unwrap();
    assert_eq!(after.status.cid.as_deref(), Some(cid.as_str()));
    assert_eq!(after.status.error, None);
    let calls = world.repo.calls();
    reconcile(&world, "web").await.unwrap();
    assert_eq!(world.repo.calls(), calls, "adopted: in sync, no request");
}

#[tokio::test]
async fn an_unreachable_repo_fails_the_run_and_a_later_run_catches_up() {
    let world = World::new();
    create(&world, "web", INFRA, value("first"), DeletionPolicy::Retain);
    reconcile(&world, "web").await.unwrap();
    world.repo.set_offline(true);
    assert!(
        reconcile(&world, "web").await.is_err(),
        "the runtime backs off and retries"
    );
    assert!(
        get(&world, "web")
            .unwrap()
            .status
            .error
            .unwrap()
            .contains("offline")
    );

    let failed = get(&world, "web").unwrap();
    assert_eq!(failed.status.retry.as_ref().map(|r| r.failures), Some(1));
    assert!(failed.status.error.unwrap().ends_with("retry in 1 s"));

    world.repo.set_offline(false);
    let calls = world.repo.calls();
    let early = reconcile(&world, "web").await.unwrap();
    assert_eq!(
        early,
        Action::RequeueAfter(std::time::Duration::from_secs(1))
    );
    assert_eq!(
        world.repo.calls(),
        calls,
        "not tried again before it is due"
    );
    world.clock.advance_seconds(1);
    reconcile(&world, "web").await.unwrap();
    let after = get(&world, "web").unwrap();
    assert_eq!((after.status.error, after.status.retry), (None, None));
    assert_eq!(world.repo.value(OWNER, INFRA, "web"), Some(value("first")));
}

#[tokio::test]
async fn deleting_a_deployment_record_object_keeps_the_record_whatever_the_policy() {
    let world = World::new();
    written(&world, "web", INFRA, DeletionPolicy::Delete).await;
    world
        .store
        .delete::<AtprotoRecordSpec>(&Name::parse("web").unwrap(), world.clock_now())
        .unwrap();
    reconcile(&world, "web").await.unwrap();
    assert!(get(&world, "web").is_none(), "the object is gone");
    assert_eq!(
        world.repo.value(OWNER, INFRA, "web"),
        Some(value("first")),
        "the record stays"
    );
    assert_eq!(world.repo.calls().deletes, 0);
}

#[tokio::test]
async fn deleting_another_record_object_removes_the_record_only_under_delete() {
    let world = World::new();
    written(&world, "kept", NOTE, DeletionPolicy::Retain).await;
    written(&world, "gone", NOTE, DeletionPolicy::Delete).await;
    for name in ["kept", "gone"] {
        world
            .store
            .delete::<AtprotoRecordSpec>(&Name::parse(name).unwrap(), world.clock_now())
            .unwrap();
        reconcile(&world, name).await.unwrap();
        assert!(get(&world, name).is_none());
    }
    assert!(world.repo.value(OWNER, NOTE, "kept").is_some());
    assert!(world.repo.value(OWNER, NOTE, "gone").is_none());
}

#[tokio::test]
async fn a_write_whose_answer_was_lost_is_taken_as_ours_and_the_next_value_written_over_it() {
    let world = World::new();
    create(&world, "web", INFRA, value("first"), DeletionPolicy::Retain);
    reconcile(&world, "web").await.unwrap();
    world.repo.lose_next_answer();
    assert!(
        reconcile(&world, "web").await.is_err(),
        "the answer was lost"
    );
    assert_eq!(
        world.repo.value(OWNER, INFRA, "web"),
        Some(value("first")),
        "but the repo wrote it"
    );
    let mut object = get(&world, "web").unwrap();
    object.spec.value = value("second");
    world.store.replace::<AtprotoRecordSpec>(&object).unwrap();
    reconcile(&world, "web").await.unwrap();
    assert_eq!(
        world.repo.value(OWNER, INFRA, "web"),
        Some(value("second")),
        "written over our own earlier write, not taken for someone else's"
    );
    let after = get(&world, "web").unwrap();
    assert_eq!((after.status.error, after.status.retry), (None, None));
}

#[tokio::test]
async fn a_swap_older_than_the_objects_own_last_write_does_not_stop_the_next_write() {
    let world = World::new();
    let first = written(&world, "web", INFRA, DeletionPolicy::Retain).await;
    let stale = first.status.cid.clone().unwrap();
    let mut object = get(&world, "web").unwrap();
    object.spec.value = value("second");
    object.spec.swap = Some(stale.clone());
    world.store.replace::<AtprotoRecordSpec>(&object).unwrap();
    reconcile(&world, "web").await.unwrap();
    let mut object = get(&world, "web").unwrap();
    assert_eq!(object.status.error, None);
    object.spec.value = value("third");
    world.store.replace::<AtprotoRecordSpec>(&object).unwrap();
    assert_eq!(
        get(&world, "web").unwrap().spec.swap,
        Some(stale),
        "the spec's swap is old"
    );
    reconcile(&world, "web").await.unwrap();
    assert_eq!(world.repo.value(OWNER, INFRA, "web"), Some(value("third")));
    assert_eq!(get(&world, "web").unwrap().status.error, None);

    world
        .repo
        .write_directly(OWNER, INFRA, "web", value("someone else's"));
    let mut object = get(&world, "web").unwrap();
    object.spec.value = value("fourth");
    world.store.replace::<AtprotoRecordSpec>(&object).unwrap();
    reconcile(&world, "web").await.unwrap();
    assert_eq!(
        world.repo.value(OWNER, INFRA, "web"),
        Some(value("someone else's")),
        "a record this object did not write is never written over"
    );
    assert!(get(&world, "web").unwrap().status.error.is_some());
}
