//! A record another account keeps, followed read-only (`sync: Follow`): a gateway's node Infra,
//! and its deployed entries no node claims marked as drift.

use serde_json::{Value, json};
use swdesk_auction::compute::ComputeContractSpec;
use swdesk_core::cluster_nodes::{CLUSTER_LABEL, claim};
use swdesk_core::infra::{ContractNode, InfraSpec, InfraStatus, RecordBinding};
use swdesk_core::record::AtprotoRecordSpec;
use swdesk_core::sync::{SyncMode, SyncState};
use swdesk_kernel::drift::DriftKind;
use swdesk_kernel::object::Object;
use swdesk_kernel::rkey::Rkey;
use swdesk_kernel::rollup::{ContractPhase, ObjectPhase};
use swdesk_kernel::timestamp::Timestamp;
use swdesk_kernel::uri::RecordUri;

use crate::name;
use crate::support::{Core, World};

const INFRA: &str = "computer.socialweb.infra";
const GATEWAY: &str = "did:plc:gatewaygatewaygateway";
const RKEY: &str = "nodes-0123456789abcdef0123";

/// The gateway's node Infra: one `requested` contract per node, each at `phases`.
fn nodes(phases: &[(&str, &str)], phase: &str) -> Value {
    let contracts: Vec<Value> = phases
        .iter()
        .map(|(name, _)| json!({"name": name, "state": "requested", "computeKind": "vm"}))
        .collect();
    let statuses: Vec<Value> = phases
        .iter()
        .map(|(name, phase)| json!({"name": name, "phase": phase, "winner": GATEWAY}))
        .collect();
    json!({
        "$type": INFRA,
        "description": "nodes of dev",
        "contracts": contracts,
        "status": {"phase": phase, "contracts": statuses},
        "createdAt": "2026-12-03T00:00:00.000Z",
    })
}

/// A device following the gateway's record, which holds `record`, settled.
async fn following(record: Value) -> (World, Core) {
    let world = World::new();
    let core = Core::new(&world);
    world.repo.write_directly(GATEWAY, INFRA, RKEY, record);
    follow_nodes(&world);
    core.settle(&world).await;
    (world, core)
}

fn follow_nodes(world: &World) {
    world.store.create::<InfraSpec>(&follower(world)).unwrap();
}

fn follower(world: &World) -> Object<InfraSpec, InfraStatus> {
    let uri = RecordUri::new(GATEWAY, INFRA, &Rkey::parse(RKEY).unwrap()).unwrap();
    Object {
        metadata: world.metadata("dev-nodes"),
        spec: InfraSpec {
            record: RecordBinding {
                uri: Some(uri),
                sync: SyncMode::Follow,
            },
            ..Default::default()
        },
        status: InfraStatus::default(),
    }
}

/// As the desk follows the node Infra of cluster `dev`: labelled with it, keeping which entry
/// each of `claims` (node, contract) names.
fn follow_cluster_nodes(world: &World, claims: &[(&str, &str)]) {
    let mut object = follower(world);
    object
        .metadata
        .labels
        .insert(CLUSTER_LABEL.to_owned(), "dev".to_owned());
    object.spec.nodes = entries(claims);
    world.store.create::<InfraSpec>(&object).unwrap();
}

fn entries(claims: &[(&str, &str)]) -> Vec<ContractNode> {
    claims
        .iter()
        .map(|(node, contract)| claim(node, contract))
        .collect()
}

/// The drift each contract shows, by name, with since when.
fn drifts(world: &World) -> Vec<(String, Option<(DriftKind, Timestamp)>)> {
    shown(world)
        .status
        .contracts
        .iter()
        .map(|status| {
            let drift = status.drift.as_ref().map(|drift| (drift.kind, drift.since));
            (status.name.clone(), drift)
        })
        .collect()
}

fn shown(world: &World) -> Object<InfraSpec, InfraStatus> {
    world
        .store
        .get::<InfraSpec>(&name("dev-nodes"))
        .unwrap()
        .unwrap()
}

#[tokio::test(start_paused = true)]
async fn a_record_another_account_keeps_is_mirrored_with_what_was_seen_and_never_written() {
    let (world, core) = following(nodes(&[("node-0", "requesting")], "deploying")).await;

    let first = shown(&world);
    assert_eq!(first.spec.description.as_deref(), Some("nodes of dev"));
    assert_eq!(first.status.phase, ObjectPhase::Deploying);
    assert_eq!(
        first.status.sync.as_ref().map(|sync| &sync.state),
        Some(&SyncState::Following)
    );

    world.clock.advance_seconds(90);
    world.repo.write_directly(
        GATEWAY,
        INFRA,
        RKEY,
        nodes(
            &[("node-0", "deployed"), ("node-1", "deployed")],
            "deployed",
        ),
    );
    core.settle(&world).await;

    let moved = shown(&world);
    assert_eq!(moved.spec.contracts.len(), 2, "the declaration is mirrored");
    assert_eq!(moved.status.phase, ObjectPhase::Deployed);
    assert_eq!(
        moved.status.contracts[1].winner.as_deref(),
        Some(GATEWAY),
        "the winner as the keeper's record says"
    );
    let seen: Vec<(&str, ContractPhase)> = moved
        .status
        .seen
        .iter()
        .map(|change| (change.contract.as_str(), change.phase))
        .collect();
    assert_eq!(
        seen,
        [
            ("node-0", ContractPhase::Requesting),
            ("node-0", ContractPhase::Deployed),
            ("node-1", ContractPhase::Deployed),
        ]
    );
    assert_eq!(moved.status.seen[1].at, world.clock_now());

    let calls = world.repo.calls();
    assert_eq!(
        calls.writes(),
        0,
        "nothing is written to any repo: {calls:?}"
    );
    assert!(
        world.store.list::<AtprotoRecordSpec>().unwrap().is_empty(),
        "no record writer"
    );
    assert!(
        world
            .store
            .list::<ComputeContractSpec>()
            .unwrap()
            .is_empty(),
        "its contracts run where it is kept"
    );
    assert!(
        world
            .repo
            .value(crate::support::OWNER, INFRA, "self")
            .is_none(),
        "it is not in the owner's index"
    );
}

#[tokio::test(start_paused = true)]
async fn a_kept_record_that_goes_or_does_not_answer_is_shown_as_such_and_the_mirror_stays() {
    let (world, core) = following(nodes(&[("node-0", "deployed")], "deployed")).await;

    world.repo.set_offline(true);
    core.settle(&world).await;
    let offline = shown(&world);
    assert!(matches!(
        offline.status.sync.as_ref().map(|sync| &sync.state),
        Some(SyncState::Offline { .. })
    ));
    assert_eq!(offline.spec.contracts.len(), 1, "the last mirror is kept");
    assert_eq!(offline.status.phase, ObjectPhase::Deployed);

    world.repo.set_offline(false);
    world.repo.remove_directly(GATEWAY, INFRA, RKEY);
    core.settle(&world).await;
    let gone = shown(&world);
    assert_eq!(
        gone.status.sync.as_ref().map(|sync| &sync.state),
        Some(&SyncState::RecordGone)
    );
    assert_eq!(gone.spec.contracts.len(), 1, "nothing is deleted here");

    world
        .store
        .delete::<InfraSpec>(&name("dev-nodes"), world.clock_now())
        .unwrap();
    core.settle(&world).await;
    assert!(
        world
            .store
            .get::<InfraSpec>(&name("dev-nodes"))
            .unwrap()
            .is_none(),
        "it goes without a final write"
    );
    assert_eq!(world.repo.calls().writes(), 0);
}

#[tokio::test(start_paused = true)]
async fn a_kept_record_that_does_not_validate_is_refused_naming_every_problem_and_the_mirror_stays()
{
    let (world, core) = following(nodes(&[("node-0", "deployed")], "deployed")).await;
    let mut hostile = nodes(
        &[("node-0", "deployed"), ("node-1", "deployed")],
        "deployed",
    );
    let record = hostile.as_object_mut().unwrap();
    record.remove("createdAt");
    record.insert("description".into(), json!("x".repeat(20_000)));
    hostile["contracts"][1]["name"] = json!("n".repeat(100));
    world.repo.write_directly(GATEWAY, INFRA, RKEY, hostile);
    world.clock.advance_seconds(90);
    core.settle(&world).await;

    let refused = shown(&world);
    let Some(SyncState::RecordInvalid { problems }) = refused.status.sync.map(|sync| sync.state)
    else {
        panic!("the record is refused as invalid")
    };
    for field in ["createdAt", "description", "name"] {
        assert!(problems.contains(field), "{field} is named: {problems}");
    }
    assert_eq!(
        refused.spec.contracts.len(),
        1,
        "the last valid mirror stays"
    );
    assert_eq!(refused.spec.description.as_deref(), Some("nodes of dev"));
    assert_eq!(
        world.repo.calls().writes(),
        0,
        "nothing is written anywhere"
    );
}

#[tokio::test(start_paused = true)]
async fn a_deployed_node_entry_no_claim_names_drifts_until_a_node_claims_it() {
    let world = World::new();
    let core = Core::new(&world);
    let record = nodes(
        &[
            ("node-0", "deployed"),
            ("node-1", "deployed"),
            ("node-2", "requesting"),
        ],
        "deploying",
    );
    world
        .repo
        .write_directly(GATEWAY, INFRA, RKEY, record.clone());
    follow_cluster_nodes(&world, &[("dev-node-0", "node-0")]);
    core.settle(&world).await;
    let lost_at = world.clock_now();
    let drift = Some((DriftKind::NodeUnclaimed, lost_at));
    assert_eq!(
        drifts(&world),
        [
            ("node-0".to_owned(), None),
            ("node-1".to_owned(), drift),
            ("node-2".to_owned(), None),
        ],
        "only the deployed entry no node claims drifts (node-2 is still coming up)"
    );

    // Looked at again later (the record rewritten), the drift keeps when it was first seen.
    world.clock.advance_seconds(90);
    world.repo.write_directly(GATEWAY, INFRA, RKEY, record);
    core.settle(&world).await;
    assert_eq!(drifts(&world)[1].1, drift);

    // The node rejoins: the desk keeps its claim again, and the drift clears.
    let mut rejoined = shown(&world);
    rejoined.spec.nodes = entries(&[("dev-node-0", "node-0"), ("dev-node-1", "node-1")]);
    world.store.replace::<InfraSpec>(&rejoined).unwrap();
    core.settle(&world).await;
    assert!(drifts(&world).iter().all(|(_, drift)| drift.is_none()));
    assert_eq!(
        world.repo.calls().writes(),
        0,
        "drift writes nothing anywhere"
    );
}
