//! Infra and EphemeralInfra: published through their child records, pulled, in conflict,
//! ended with a final write the record keeps, listed in the index at `self`, and re-created on
//! a successor rkey.

use serde_json::{Value, json};
use swdesk_controller::kinds::deployment::resolve_conflict;
use swdesk_controller::runtime::{ObjectKey, Reconciler};
use swdesk_core::infra::{Contract, ContractState, EphemeralInfraSpec, InfraSpec, InfraStatus};
use swdesk_core::record::AtprotoRecordSpec;
use swdesk_core::sync::{Resolution, SyncState};
use swdesk_kernel::name::Name;
use swdesk_kernel::object::Kind;
use swdesk_kernel::object::Object;
use swdesk_kernel::rollup::{ContractPhase, ObjectPhase};
use swdesk_store::ObjectOf;

use crate::support::{Core, OWNER, World};

const INFRA: &str = "computer.socialweb.infra";
const EPHEMERAL: &str = "computer.socialweb.ephemeralInfra";

fn contract(name: &str, state: &str) -> Contract {
    Contract {
        name: name.to_owned(),
        state: ContractState::from(state),
        ..Default::default()
    }
}

fn infra(
    world: &World,
    name: &str,
    description: &str,
    contracts: Vec<Contract>,
) -> ObjectOf<InfraSpec> {
    let object = Object {
        metadata: world.metadata(name),
        spec: InfraSpec {
            description: Some(description.to_owned()),
            contracts,
            ..Default::default()
        },
        status: InfraStatus::default(),
    };
    world.store.create::<InfraSpec>(&object).unwrap()
}

fn get(world: &World, name: &str) -> Option<ObjectOf<InfraSpec>> {
    world
        .store
        .get::<InfraSpec>(&Name::parse(name).unwrap())
        .unwrap()
}

fn record(world: &World, rkey: &str) -> Option<Value> {
    world.repo.value(OWNER, INFRA, rkey)
}

fn index(world: &World) -> Value {
    record(world, "self").expect("the index exists")["index"].clone()
}

fn live_rkeys(world: &World) -> Vec<String> {
    index(world)["live"]
        .as_array()
        .map(|live| {
            live.iter()
                .map(|entry| entry["rkey"].as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

fn sync(object: &ObjectOf<InfraSpec>) -> SyncState {
    object.status.sync.clone().expect("a sync state").state
}

/// Edits the record as another device would, and lets the controller's view see it.
async fn edit_elsewhere(world: &World, core: &Core, rkey: &str, edit: impl FnOnce(&mut Value)) {
    let mut value = record(world, rkey).unwrap();
    edit(&mut value);
    world.repo.write_directly(OWNER, INFRA, rkey, value);
    core.view.invalidate(INFRA).await;
}

#[tokio::test(start_paused = true)]
async fn a_new_deployment_is_published_bound_and_listed_in_the_index() {
    let world = World::new();
    let core = Core::new(&world);
    infra(
        &world,
        "web",
        "a web server",
        vec![contract("api", "staged")],
    );
    core.settle(&world).await;

    let published = record(&world, "web").expect("the record exists at the object's name");
    assert_eq!(published["$type"], INFRA);
    assert_eq!(published["description"], "a web server");
    assert_eq!(published["contracts"][0]["name"], "api");
    assert_eq!(published["status"]["phase"], "staged");
    let object = get(&world, "web").unwrap();
    assert_eq!(object.status.record.as_ref().unwrap().rkey.as_str(), "web");
    assert_eq!(object.status.phase, ObjectPhase::Staged);
    assert_eq!(sync(&object), SyncState::Published);
    assert_eq!(live_rkeys(&world), ["web"]);
    assert_eq!(index(&world)["live"][0]["writer"], "desktop");
}

#[tokio::test(start_paused = true)]
async fn a_deployment_in_sync_costs_no_write_on_a_resync() {
    let world = World::new();
    let core = Core::new(&world);
    for name in ["alpha", "beta", "gamma"] {
        infra(&world, name, name, vec![]);
    }
    core.settle(&world).await;
    let before = world.repo.calls();
    core.view.invalidate(INFRA).await;
    core.settle(&world).await;
    let after = world.repo.calls();
    assert_eq!(
        after.writes(),
        before.writes(),
        "no write in the steady state"
    );
    assert_eq!(
        after.gets, before.gets,
        "records come from the list, not one get each"
    );
    assert!(
        after.lists - before.lists <= 1,
        "one page lists all three: {before:?} → {after:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn an_edit_made_elsewhere_is_pulled_onto_the_spec() {
    let world = World::new();
    let core = Core::new(&world);
    infra(&world, "web", "before", vec![]);
    core.settle(&world).await;
    edit_elsewhere(&world, &core, "web", |value| {
        value["description"] = json!("edited elsewhere")
    })
    .await;
    core.settle(&world).await;

    let object = get(&world, "web").unwrap();
    assert_eq!(object.spec.description.as_deref(), Some("edited elsewhere"));
    assert_eq!(sync(&object), SyncState::Published);
    assert_eq!(
        record(&world, "web").unwrap()["description"],
        "edited elsewhere"
    );
}

#[tokio::test(start_paused = true)]
async fn edits_on_both_sides_stop_at_a_conflict_and_nothing_is_overwritten() {
    let world = World::new();
    let core = Core::new(&world);
    let mut object = infra(&world, "web", "before", vec![]);
    core.settle(&world).await;
    edit_elsewhere(&world, &core, "web", |value| {
        value["description"] = json!("theirs")
    })
    .await;
    object = get(&world, "web").unwrap_or(object);
    object.spec.description = Some("ours".to_owned());
    world.store.replace::<InfraSpec>(&object).unwrap();
    core.settle(&world).await;

    let object = get(&world, "web").unwrap();
    assert_eq!(sync(&object), SyncState::Conflict);
    assert_eq!(
        record(&world, "web").unwrap()["description"],
        "theirs",
        "the record is untouched"
    );
    assert_eq!(
        object.spec.description.as_deref(),
        Some("ours"),
        "the spec is untouched"
    );
}

#[tokio::test(start_paused = true)]
async fn an_edit_made_while_our_own_write_was_in_flight_is_pushed_not_a_conflict() {
    let world = World::new();
    let core = Core::new(&world);
    infra(&world, "web", "v1", vec![]);
    core.settle(&world).await;
    let edit = |store: &swdesk_store::Store, description: &str| {
        let name = Name::parse("web").unwrap();
        let mut object = store.get::<InfraSpec>(&name).unwrap().unwrap();
        object.spec.description = Some(description.to_owned());
        store.replace::<InfraSpec>(&object).unwrap();
    };
    edit(&world.store, "v2");
    let store = world.store.clone();
    world.repo.during_next_put(move || {
        // While v2 is being written, the owner edits again and the deployment hands the
        // child v3: the write of v2 lands on a child that already wants v3.
        edit(&store, "v3");
        let mut child = store.list::<AtprotoRecordSpec>().unwrap().remove(0);
        child.spec.value["description"] = json!("v3");
        store.replace::<AtprotoRecordSpec>(&child).unwrap();
    });
    core.settle(&world).await;

    let object = get(&world, "web").unwrap();
    assert!(sync(&object).is_synced(), "{:?}", sync(&object));
    assert_eq!(record(&world, "web").unwrap()["description"], "v3");
}

/// The first write of a new deployment has landed in the repo, and the view lists it, but the
/// child has not recorded the write's cid yet when the owner edits (requests a contract a
/// moment after declaring): the record is this device's own write, so the edit is pushed, never
/// taken for a conflict that would hold the deployment back until the owner chose a side.
#[tokio::test(start_paused = true)]
async fn an_edit_made_before_the_first_writes_answer_was_recorded_is_pushed_not_a_conflict() {
    let world = World::new();
    let core = Core::new(&world);
    infra(&world, "web", "v1", vec![]);
    let name = Name::parse("web").unwrap();
    // The first run takes the finalizer, the next one makes the child.
    for _ in 0..2 {
        core.run(&core.infra, Kind::Infra, &name).await;
    }
    let mut child = world.store.list::<AtprotoRecordSpec>().unwrap().remove(0);
    for _ in 0..2 {
        core.run(&core.records, Kind::AtprotoRecord, &child.metadata.name)
            .await;
    }
    assert_eq!(record(&world, "web").unwrap()["description"], "v1");
    // The write's answer not recorded yet: the child as it was while the answer was on its way.
    child = world
        .store
        .get::<AtprotoRecordSpec>(&child.metadata.name)
        .unwrap()
        .unwrap();
    child.status.cid = None;
    child.status.uri = None;
    world
        .store
        .update_status::<AtprotoRecordSpec>(&child)
        .unwrap();
    let mut object = get(&world, "web").unwrap();
    object.spec.description = Some("v2".to_owned());
    world.store.replace::<InfraSpec>(&object).unwrap();
    core.view.invalidate(INFRA).await;

    core.run(&core.infra, Kind::Infra, &name).await;
    let state = sync(&get(&world, "web").unwrap());
    assert!(
        !matches!(state, SyncState::Conflict),
        "our own first write is no edit made elsewhere"
    );
    core.settle(&world).await;
    let object = get(&world, "web").unwrap();
    assert!(sync(&object).is_synced(), "{:?}", sync(&object));
    assert_eq!(record(&world, "web").unwrap()["description"], "v2");
}

#[tokio::test(start_paused = true)]
async fn deleting_a_deployment_ends_its_record_which_stays_and_moves_in_the_index() {
    let world = World::new();
    let core = Core::new(&world);
    infra(&world, "web", "to end", vec![contract("api", "requested")]);
    core.settle(&world).await;
    world
        .store
        .delete::<InfraSpec>(&Name::parse("web").unwrap(), world.clock_now())
        .unwrap();
    core.settle(&world).await;

    assert!(
        get(&world, "web").is_none(),
        "the object is gone once the final write is done"
    );
    let ended = record(&world, "web").expect("the record is never deleted");
    assert_eq!(ended["status"]["phase"], "ended");
    assert_eq!(ended["status"]["endReason"], "deleted");
    assert!(ended["status"]["endedAt"].is_string());
    assert_eq!(ended["status"]["contracts"][0]["phase"], "released");
    assert!(live_rkeys(&world).is_empty());
    assert_eq!(index(&world)["recentEnded"][0]["rkey"], "web");
    assert!(
        world
            .store
            .list::<swdesk_auction::compute::ComputeContractSpec>()
            .unwrap()
            .is_empty()
    );
}

/// The soak found deployments that never ended: the owner deleted them while their record's
/// first write was in flight, before the binding was recorded, and the end found no binding
/// and finished without a final write. The record, written a moment later, stayed live.
#[tokio::test(start_paused = true)]
async fn a_deployment_deleted_while_its_first_write_is_in_flight_still_ends_its_record() {
    let world = World::new();
    let core = Core::new(&world);
    let (store, repo) = (world.store.clone(), world.repo.clone());
    let now = world.clock_now();
    let deleted = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let deleted_then = deleted.clone();
    world.repo.during_next_put(move || {
        if repo.value(OWNER, INFRA, "web").is_some() {
            store
                .delete::<InfraSpec>(&Name::parse("web").unwrap(), now)
                .unwrap();
            deleted_then.store(true, std::sync::atomic::Ordering::SeqCst);
        }
    });
    infra(&world, "web", "short-lived", vec![]);
    core.settle(&world).await;

    assert!(
        deleted.load(std::sync::atomic::Ordering::SeqCst),
        "the deletion came while the record's first write was in flight"
    );
    assert!(get(&world, "web").is_none(), "the object is gone");
    let ended = record(&world, "web").expect("the record stays");
    assert_eq!(ended["status"]["phase"], "ended", "{ended}");
    assert_eq!(ended["status"]["endReason"], "deleted");
}

#[tokio::test(start_paused = true)]
async fn a_deployment_re_created_under_an_ended_name_takes_a_successor_rkey() {
    let world = World::new();
    let core = Core::new(&world);
    infra(&world, "web", "first", vec![]);
    core.settle(&world).await;
    world
        .store
        .delete::<InfraSpec>(&Name::parse("web").unwrap(), world.clock_now())
        .unwrap();
    core.settle(&world).await;
    let again = infra(&world, "web", "second", vec![]);
    core.settle(&world).await;

    let successor = format!("web-{}", again.metadata.uid.short());
    assert_eq!(
        get(&world, "web")
            .unwrap()
            .status
            .record
            .unwrap()
            .rkey
            .as_str(),
        successor
    );
    assert_eq!(record(&world, &successor).unwrap()["description"], "second");
    assert_eq!(
        record(&world, "web").unwrap()["description"],
        "first",
        "the ended record is untouched"
    );
    assert_eq!(live_rkeys(&world), [successor]);
}

#[tokio::test(start_paused = true)]
async fn a_record_that_does_not_read_as_a_deployment_is_shown_and_never_overwritten() {
    let world = World::new();
    let core = Core::new(&world);
    let broken =
        json!({"$type": INFRA, "contracts": "not a list", "createdAt": "2026-12-03T00:00:00.000Z"});
    world
        .repo
        .write_directly(OWNER, INFRA, "web", broken.clone());
    let mut object = infra(&world, "web", "mine", vec![]);
    object.spec.record.uri =
        Some(swdesk_kernel::uri::RecordUri::parse(&format!("at://{OWNER}/{INFRA}/web")).unwrap());
    world.store.replace::<InfraSpec>(&object).unwrap();
    core.settle(&world).await;

    let object = get(&world, "web").unwrap();
    assert!(
        matches!(sync(&object), SyncState::RecordInvalid { .. }),
        "{:?}",
        sync(&object)
    );
    assert_eq!(record(&world, "web").unwrap(), broken);
}

/// A world with the deployment `web` whose contract `api` is requested, published and settled.
async fn requested_and_settled() -> (World, Core) {
    let world = World::new();
    let core = Core::new(&world);
    infra(
        &world,
        "web",
        "wants a guest",
        vec![contract("api", "requested")],
    );
    core.settle(&world).await;
    (world, core)
}

#[tokio::test(start_paused = true)]
async fn a_requested_contract_waits_for_the_market_and_is_shown_as_waiting() {
    let (world, core) = requested_and_settled().await;

    let object = get(&world, "web").unwrap();
    assert_eq!(object.status.phase, ObjectPhase::Deploying);
    assert!(object.status.phase.is_waiting());
    let status = &object.status.contracts[0];
    assert_eq!(status.phase, ContractPhase::Requesting);
    assert!(
        status.message.as_deref().unwrap().contains("waiting"),
        "{status:?}"
    );
    assert_eq!(
        record(&world, "web").unwrap()["status"]["contracts"][0]["phase"],
        "requesting"
    );
    let history = || {
        let computes = world
            .store
            .list::<swdesk_auction::compute::ComputeContractSpec>()
            .unwrap();
        computes[0].status.history.clone()
    };
    let first = history();
    assert_eq!(first.len(), 1, "the phase entered is recorded: {first:?}");
    assert_eq!(
        first[0].phase,
        swdesk_auction::compute::ComputePhase::Requesting
    );
    assert!(first[0].message.as_deref().unwrap().contains("waiting"));
    core.settle(&world).await;
    assert_eq!(
        history(),
        first,
        "looking again at the same phase appends nothing"
    );
}

#[tokio::test(start_paused = true)]
async fn a_contract_that_moves_on_shows_in_the_deployment_at_once_while_its_record_waits() {
    use swdesk_auction::compute::{ComputeContractSpec, ComputePhase};
    let (world, core) = requested_and_settled().await;
    let before = get(&world, "web").unwrap();
    assert_eq!(before.status.contracts[0].phase, ContractPhase::Requesting);

    // The market moves the contract on (as the requester does once the guest is ready); nothing
    // else changes, and the record's next progress write is a minute away.
    let mut compute = world.store.list::<ComputeContractSpec>().unwrap().remove(0);
    compute.status.phase = ComputePhase::Deployed;
    world.store.update_status(&compute).unwrap();
    let _ = core
        .infra
        .reconcile(&ObjectKey::new(Kind::Infra, Name::parse("web").unwrap()))
        .await;

    let after = get(&world, "web").unwrap();
    assert_eq!(
        after.status.contracts[0].phase,
        ContractPhase::Deployed,
        "the deployment shows its contract's phase at once"
    );
    assert_eq!(after.status.phase, ObjectPhase::Deployed);
    assert_eq!(
        record(&world, "web").unwrap()["status"]["contracts"][0]["phase"],
        "requesting",
        "the record's progress write waits for its minute"
    );
}

#[tokio::test(start_paused = true)]
async fn an_ephemeral_deployment_ends_itself_at_its_deadline() {
    let world = World::new();
    let core = Core::new(&world);
    let object = Object {
        metadata: world.metadata("batch"),
        spec: EphemeralInfraSpec {
            infra: InfraSpec {
                description: Some("short lived".into()),
                ..Default::default()
            },
            ttl_seconds: 60,
            end_when: Default::default(),
        },
        status: Default::default(),
    };
    world.store.create::<EphemeralInfraSpec>(&object).unwrap();
    core.settle(&world).await;
    assert_eq!(
        world.repo.value(OWNER, EPHEMERAL, "batch").unwrap()["status"]["phase"],
        "pending"
    );

    world.clock.advance_seconds(61);
    core.settle(&world).await;
    let ended = world.repo.value(OWNER, EPHEMERAL, "batch").unwrap();
    assert_eq!(ended["status"]["phase"], "ended");
    assert_eq!(ended["status"]["endReason"], "deadline");
    let object = world
        .store
        .get::<EphemeralInfraSpec>(&Name::parse("batch").unwrap())
        .unwrap()
        .unwrap();
    assert_eq!(
        object.status.infra.phase,
        ObjectPhase::Ended,
        "the object stays, ended"
    );
    assert_eq!(index(&world)["recentEnded"][0]["rkey"], "batch");
}

/// Two sides edited "web": ours says "ours", the record says "theirs".
async fn in_conflict(world: &World, core: &Core) {
    let object = infra(world, "web", "before", vec![]);
    core.settle(world).await;
    edit_elsewhere(world, core, "web", |value| {
        value["description"] = json!("theirs")
    })
    .await;
    let mut object = get(world, "web").unwrap_or(object);
    object.spec.description = Some("ours".to_owned());
    world.store.replace::<InfraSpec>(&object).unwrap();
    core.settle(world).await;
    assert_eq!(sync(&get(world, "web").unwrap()), SyncState::Conflict);
}

async fn resolve(world: &World, core: &Core, resolution: Resolution) {
    let name = Name::parse("web").unwrap();
    resolve_conflict::<InfraSpec, _>(&world.context, &core.view, &name, resolution)
        .await
        .unwrap();
    core.settle(world).await;
}

#[tokio::test(start_paused = true)]
async fn keeping_this_side_in_a_conflict_writes_it_to_the_record() {
    let world = World::new();
    let core = Core::new(&world);
    in_conflict(&world, &core).await;
    resolve(&world, &core, Resolution::KeepLocal).await;
    assert_eq!(record(&world, "web").unwrap()["description"], "ours");
    let object = get(&world, "web").unwrap();
    assert_eq!(object.spec.description.as_deref(), Some("ours"));
    assert_eq!(sync(&object), SyncState::Published);
}

#[tokio::test(start_paused = true)]
async fn taking_the_record_in_a_conflict_applies_it_here() {
    let world = World::new();
    let core = Core::new(&world);
    in_conflict(&world, &core).await;
    resolve(&world, &core, Resolution::TakeRecord).await;
    assert_eq!(record(&world, "web").unwrap()["description"], "theirs");
    let object = get(&world, "web").unwrap();
    assert_eq!(object.spec.description.as_deref(), Some("theirs"));
    assert_eq!(sync(&object), SyncState::Published);
}

#[tokio::test(start_paused = true)]
async fn a_contract_kind_changed_elsewhere_is_neither_applied_nor_reverted_until_kept() {
    let world = World::new();
    let core = Core::new(&world);
    infra(&world, "web", "web", vec![contract("api", "staged")]);
    core.settle(&world).await;
    edit_elsewhere(&world, &core, "web", |value| {
        value["contracts"][0]["computeKind"] = json!("deno");
        value["description"] = json!("edited elsewhere");
    })
    .await;
    core.settle(&world).await;

    let object = get(&world, "web").unwrap();
    let SyncState::ChangedElsewhere { changes } = sync(&object) else {
        panic!("not shown as changed elsewhere: {:?}", sync(&object));
    };
    assert_eq!(
        changes[0].to_string(),
        "`computeKind` of contract api may only be set at creation (was vm, the record says deno)"
    );
    assert_eq!(
        object.spec.description.as_deref(),
        Some("web"),
        "nothing applied"
    );
    assert_eq!(object.spec.contracts[0].compute_kind, None);
    assert_eq!(
        record(&world, "web").unwrap()["contracts"][0]["computeKind"],
        "deno",
        "nothing reverted"
    );
    let name = Name::parse("web").unwrap();
    let take =
        resolve_conflict::<InfraSpec, _>(&world.context, &core.view, &name, Resolution::TakeRecord)
            .await;
    assert!(
        take.is_err(),
        "a genesis field cannot be taken from the record"
    );

    resolve(&world, &core, Resolution::KeepLocal).await;
    let kept = record(&world, "web").unwrap();
    assert_eq!(kept["description"], "web");
    assert!(kept["contracts"][0].get("computeKind").is_none(), "{kept}");
    assert_eq!(sync(&get(&world, "web").unwrap()), SyncState::Published);
}

#[tokio::test(start_paused = true)]
async fn a_resolution_without_a_conflict_is_refused_and_changes_nothing() {
    let world = World::new();
    let core = Core::new(&world);
    infra(&world, "web", "calm", vec![]);
    core.settle(&world).await;
    let before = get(&world, "web").unwrap();
    let name = Name::parse("web").unwrap();
    let refused =
        resolve_conflict::<InfraSpec, _>(&world.context, &core.view, &name, Resolution::KeepLocal)
            .await;
    assert!(refused.is_err());
    assert_eq!(get(&world, "web").unwrap().status, before.status);
}

#[tokio::test(start_paused = true)]
async fn deployments_made_offline_are_published_once_the_repo_is_back_with_no_extra_write() {
    let world = World::new();
    let core = Core::new(&world);
    world.repo.set_offline(true);
    for name in ["alpha", "beta", "gamma"] {
        infra(&world, name, name, vec![]);
    }
    core.settle(&world).await;
    assert!(
        record(&world, "alpha").is_none(),
        "nothing reached the repo while it was down"
    );
    let waiting = get(&world, "alpha").unwrap();
    assert_eq!(
        waiting.spec.description.as_deref(),
        Some("alpha"),
        "nothing is lost"
    );
    let state = sync(&waiting);
    assert!(
        matches!(
            state,
            SyncState::Offline { .. } | SyncState::WriteFailed { .. }
        ),
        "the deployment says it waits to sync, not {state:?}"
    );
    assert!(
        state
            .message()
            .is_some_and(|words| words.starts_with("waiting to sync"))
    );

    world.repo.set_offline(false);
    let before = world.repo.calls();
    core.settle(&world).await;
    let puts = world.repo.calls().puts - before.puts;
    for name in ["alpha", "beta", "gamma"] {
        assert_eq!(record(&world, name).unwrap()["description"], name);
    }
    let mut live = live_rkeys(&world);
    live.sort();
    assert_eq!(live, ["alpha", "beta", "gamma"]);
    assert!(
        puts <= 3 + 2,
        "three records and at most two index writes, not {puts}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_controller_stopped_between_the_final_write_and_the_finalizer_finishes_after_a_restart() {
    let world = World::new();
    let first = Core::new(&world);
    infra(&world, "web", "ends across a restart", vec![]);
    first.settle(&world).await;
    world
        .store
        .delete::<InfraSpec>(&Name::parse("web").unwrap(), world.clock_now())
        .unwrap();
    let key = |kind, name: &str| ObjectKey::new(kind, Name::parse(name).unwrap());
    // One step each: the deployment prepares its final write, the child makes it. Then the
    // process goes away before the deployment records the end and lets go of its finalizer.
    let _ = first.infra.reconcile(&key(Kind::Infra, "web")).await;
    for child in world
        .store
        .list::<swdesk_core::record::AtprotoRecordSpec>()
        .unwrap()
    {
        let _ = first
            .records
            .reconcile(&key(Kind::AtprotoRecord, child.metadata.name.as_str()))
            .await;
    }
    assert_eq!(
        record(&world, "web").unwrap()["status"]["phase"],
        "ended",
        "the final write is made"
    );
    assert!(
        get(&world, "web").is_some(),
        "the object still holds its finalizer"
    );
    drop(first);

    let restarted = Core::new(&world);
    restarted.settle(&world).await;
    assert!(
        get(&world, "web").is_none(),
        "the restarted controller finishes the end"
    );
    assert!(live_rkeys(&world).is_empty());
    assert_eq!(index(&world)["recentEnded"][0]["rkey"], "web");
}

#[tokio::test(start_paused = true)]
async fn an_index_entry_whose_record_is_gone_is_dropped_ten_minutes_later() {
    let world = World::new();
    let core = Core::new(&world);
    infra(&world, "web", "short lived record", vec![]);
    core.settle(&world).await;
    world.repo.remove_directly(OWNER, INFRA, "web");
    core.view.invalidate(INFRA).await;
    core.settle(&world).await;
    assert!(
        get(&world, "web").is_none(),
        "a record gone in `Both` deletes the local object"
    );
    assert_eq!(
        live_rkeys(&world),
        ["web"],
        "the entry stays while the record may come back"
    );

    let prune = core
        .index
        .submit(swdesk_controller::index_writer::IndexOp::Prune);
    prune.await.unwrap().unwrap();
    assert_eq!(
        live_rkeys(&world),
        ["web"],
        "gone for less than ten minutes: kept"
    );
    world.clock.advance_seconds(11 * 60);
    let prune = core
        .index
        .submit(swdesk_controller::index_writer::IndexOp::Prune);
    prune.await.unwrap().unwrap();
    assert!(
        live_rkeys(&world).is_empty(),
        "gone for ten minutes: dropped"
    );
}
