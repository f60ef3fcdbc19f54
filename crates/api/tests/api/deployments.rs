//! The deployments as the window sees them, over a real store file: declarations accepted
//! whole or refused with every problem, contract intents, ending, rows and changes.

use serde_json::json;
use swdesk_api::clusters::{ClusterRow, NodeRow};
use swdesk_api::deployments::{
    self, ContractIntent, IntentError, change, declare, rows, set_contract,
};
use swdesk_api::node_infra;
use swdesk_api::secrets;
use swdesk_core::collection::FOLLOWER_LABEL;
use swdesk_core::deployment::SyncSummary;
use swdesk_core::infra::{ContractState, EphemeralInfraSpec, InfraSpec};
use swdesk_kernel::deployment_kind::DeploymentKind;
use swdesk_kernel::name::Name;
use swdesk_kernel::timestamp::Timestamp;
use swdesk_store::Store;
use swdesk_testkit::store_file;

fn at(seconds: i64) -> Timestamp {
    Timestamp::from_unix_millis(1_800_000_000_000 + seconds * 1000).unwrap()
}

fn web(description: &str) -> serde_json::Value {
    json!({
        "kind": "Infra",
        "metadata": {"name": "web"},
        "spec": {
            "description": description,
            "contracts": [
                {"name": "api", "state": "staged"},
                {"name": "worker", "state": "staged"}
            ]
        }
    })
}

#[test]
fn a_declaration_with_problems_is_refused_whole_naming_each_and_writes_nothing() {
    let (_dir, store) = store_file();
    let bad = json!({
        "kind": "Infra",
        "metadata": {"name": "Not_A_Label"},
        "spec": {"contracts": [{"name": "api", "state": "running"}, {"name": "api", "state": "staged"}]}
    });
    let Err(IntentError::Invalid(problems)) = declare(&store, &bad, at(0)) else {
        panic!("refused");
    };
    let paths: Vec<&str> = problems
        .iter()
        .map(|problem| problem.path.as_str())
        .collect();
    assert!(paths.contains(&"/metadata/name"), "{paths:?}");
    assert!(
        paths
            .iter()
            .any(|path| path.starts_with("/spec/contracts/0")),
        "{paths:?}"
    );
    assert!(
        paths
            .iter()
            .any(|path| path.starts_with("/spec/contracts/1")),
        "{paths:?}"
    );
    assert!(rows(&store).unwrap().is_empty(), "nothing was saved");
}

#[test]
fn declaring_again_edits_the_declaration_and_keeps_the_object() {
    let (_dir, store) = store_file();
    let first = declare(&store, &web("v1"), at(0)).unwrap();
    assert_eq!(first.sync, SyncSummary::Publishing);
    assert!(first.written_here);
    let uid = store
        .get::<InfraSpec>(&Name::parse("web").unwrap())
        .unwrap()
        .unwrap()
        .metadata
        .uid;
    let edited = declare(&store, &web("v2"), at(1)).unwrap();
    assert_eq!(edited.description.as_deref(), Some("v2"));
    let object = store
        .get::<InfraSpec>(&Name::parse("web").unwrap())
        .unwrap()
        .unwrap();
    assert_eq!(object.metadata.uid, uid, "the same deployment, edited");
    assert_eq!(object.metadata.generation, 2);
}

#[test]
fn an_ephemeral_deployment_keeps_its_lifetime_and_its_row_says_when_it_ends() {
    let (_dir, store) = store_file();
    let mut declaration = json!({
        "kind": "EphemeralInfra",
        "metadata": {"name": "batch"},
        "spec": {"ttlSeconds": 600, "contracts": []}
    });
    declare(&store, &declaration, at(0)).unwrap();
    declare(&store, &web("v1"), at(0)).unwrap();
    let ends: Vec<(String, Option<String>)> = rows(&store)
        .unwrap()
        .into_iter()
        .map(|row| (row.name, row.expires_at))
        .collect();
    assert_eq!(
        ends,
        [
            ("batch".to_owned(), Some(at(600).to_rfc3339())),
            ("web".to_owned(), None)
        ],
        "the list counts down to the end of the ephemeral one's lifetime, and of no Infra"
    );
    declaration["spec"]["ttlSeconds"] = json!(1200);
    let Err(IntentError::Invalid(problems)) = declare(&store, &declaration, at(1)) else {
        panic!("refused");
    };
    assert_eq!(problems[0].path, "/spec/ttlSeconds");
    let kept = store
        .get::<EphemeralInfraSpec>(&Name::parse("batch").unwrap())
        .unwrap()
        .unwrap();
    assert_eq!(kept.spec.ttl_seconds, 600);
}

#[test]
fn contracts_are_requested_released_and_released_again_with_a_newer_time() {
    let (_dir, store) = store_file();
    declare(&store, &web("v1"), at(0)).unwrap();
    let name = Name::parse("web").unwrap();
    let contract = |store: &Store| {
        let object = store.get::<InfraSpec>(&name).unwrap().unwrap();
        object.spec.contract("api").cloned().unwrap()
    };
    set_contract(
        &store,
        DeploymentKind::Infra,
        &name,
        "api",
        ContractIntent::Request,
        at(1),
    )
    .unwrap();
    assert_eq!(contract(&store).state, ContractState::Requested);
    set_contract(
        &store,
        DeploymentKind::Infra,
        &name,
        "api",
        ContractIntent::Release,
        at(2),
    )
    .unwrap();
    let released = contract(&store);
    assert_eq!(released.state, ContractState::Released);
    assert_eq!(released.release_requested_at, Some(at(2).to_rfc3339()));
    set_contract(
        &store,
        DeploymentKind::Infra,
        &name,
        "api",
        ContractIntent::Release,
        at(3),
    )
    .unwrap();
    assert_eq!(
        contract(&store).release_requested_at,
        Some(at(3).to_rfc3339())
    );
    let worker = store.get::<InfraSpec>(&name).unwrap().unwrap();
    assert_eq!(
        worker.spec.contract("worker").unwrap().state,
        ContractState::Staged,
        "only api moved"
    );
    let missing = set_contract(
        &store,
        DeploymentKind::Infra,
        &name,
        "db",
        ContractIntent::Request,
        at(4),
    );
    assert!(matches!(missing, Err(IntentError::NotFound(_))));
}

#[test]
fn ending_asks_for_the_deletion_and_then_takes_no_more_changes() {
    let (_dir, store) = store_file();
    declare(&store, &web("v1"), at(0)).unwrap();
    let name = Name::parse("web").unwrap();
    // The controller's finalizer holds the object until the final write.
    let object = store.get::<InfraSpec>(&name).unwrap().unwrap();
    store
        .add_finalizer::<InfraSpec>(&object, "test/final-write")
        .unwrap();
    deployments::end(&store, DeploymentKind::Infra, &name, at(1)).unwrap();
    let row = change(&store, DeploymentKind::Infra, &name)
        .unwrap()
        .row
        .unwrap();
    assert_eq!(row.sync, SyncSummary::Ending);
    let again = set_contract(
        &store,
        DeploymentKind::Infra,
        &name,
        "api",
        ContractIntent::Request,
        at(2),
    );
    assert!(matches!(again, Err(IntentError::Refused(_))), "{again:?}");
}

#[test]
fn a_deployment_another_device_writes_is_not_ended_here() {
    let (_dir, store) = store_file();
    let mut declaration = web("theirs");
    declaration["metadata"]["labels"] = json!({FOLLOWER_LABEL: "true"});
    let row = declare(&store, &declaration, at(0)).unwrap();
    assert!(!row.written_here);
    let name = Name::parse("web").unwrap();
    let refused = deployments::end(&store, DeploymentKind::Infra, &name, at(1));
    assert!(matches!(refused, Err(IntentError::Refused(_))));
    assert!(store.get::<InfraSpec>(&name).unwrap().is_some());
}

#[test]
fn a_deployment_another_account_keeps_takes_no_intent_and_says_who_keeps_it() {
    let (_dir, store) = store_file();
    let claim = NodeRow {
        name: "dev-node-0".into(),
        phase: Some("Ready".into()),
        node_name: None,
        message: None,
        workspace: Some("did:plc:gateway".into()),
        infra: Some("nodes-1".into()),
        contract: Some("node-0".into()),
    };
    let dev = ClusterRow {
        name: "dev".into(),
        phase: "Ready".into(),
        waiting: false,
        running: Some(true),
        instance: None,
        teardown_blocked: None,
        server: None,
        nodes: vec![claim],
        members: Vec::new(),
    };
    let name = node_infra::keep(&store, &[dev], at(0)).unwrap().remove(0);
    let row = rows(&store).unwrap().remove(0);
    assert!(row.read_only && !row.written_here);
    assert_eq!(row.writer.as_deref(), Some("the gateway of cluster dev"));

    let kind = DeploymentKind::Infra;
    let before = store.get::<InfraSpec>(&name).unwrap().unwrap();
    let mut edit = web("mine now");
    edit["metadata"]["name"] = json!(name.as_str());
    let refusals = [
        set_contract(
            &store,
            kind,
            &name,
            "node-0",
            ContractIntent::Release,
            at(1),
        )
        .err(),
        deployments::end(&store, kind, &name, at(1)).err(),
        declare(&store, &edit, at(1)).err(),
    ];
    for refused in refusals {
        let Some(IntentError::Refused(why)) = refused else {
            panic!("refused as read-only: {refused:?}");
        };
        assert!(
            why.contains("read-only") && why.contains("the gateway of cluster dev"),
            "{why}"
        );
    }
    let after = store.get::<InfraSpec>(&name).unwrap().unwrap();
    assert_eq!(
        after.metadata.resource_version,
        before.metadata.resource_version
    );
    assert!(!after.metadata.is_deleting());
}

#[test]
fn rows_list_both_kinds_by_name_with_their_contracts_declared() {
    let (_dir, store) = store_file();
    declare(&store, &web("v1"), at(0)).unwrap();
    declare(
        &store,
        &json!({"kind": "EphemeralInfra", "metadata": {"name": "batch"}, "spec": {}}),
        at(0),
    )
    .unwrap();
    let listed = rows(&store).unwrap();
    let names: Vec<(&str, &str)> = listed
        .iter()
        .map(|row| (row.name.as_str(), row.kind.as_str()))
        .collect();
    assert_eq!(names, [("batch", "EphemeralInfra"), ("web", "Infra")]);
    let detail = deployments::detail(&store, DeploymentKind::Infra, &Name::parse("web").unwrap())
        .unwrap()
        .unwrap();
    assert_eq!(detail.contracts.len(), 2);
    assert_eq!(detail.contracts[0].state, "staged");
    assert_eq!(
        detail.contracts[0].phase, None,
        "not looked at by a controller yet"
    );
    let declared: serde_json::Value = serde_json::from_str(&detail.declaration).unwrap();
    assert_eq!(declared["spec"]["description"], "v1");
    assert!(declared["spec"].get("record").is_none());
}

#[test]
fn a_row_carries_its_object_and_a_version_that_grows_with_every_write() {
    let (_dir, store) = store_file();
    let first = declare(&store, &web("v1"), at(0)).unwrap();
    let second = declare(&store, &web("v2"), at(1)).unwrap();
    assert_eq!(first.uid, second.uid, "the same object");
    assert!(second.version > first.version, "{first:?} then {second:?}");
    let name = Name::parse("web").unwrap();
    let both = deployments::changes(
        &store,
        &[
            (DeploymentKind::Infra, name.clone()),
            (DeploymentKind::EphemeralInfra, name.clone()),
        ],
    )
    .unwrap();
    assert_eq!(
        both[0].row.as_ref().map(|row| row.version),
        Some(second.version)
    );
    assert_eq!(both[1].row, None, "no EphemeralInfra of that name");
}

/// What the market would refuse is refused when the owner declares or requests it, naming the
/// field and what to do, and nothing is stored; a staged contract may still hold it.
#[test]
fn a_contract_field_the_market_cannot_carry_is_refused_when_it_is_requested() {
    let (_dir, store) = store_file();
    let requested = json!({
        "kind": "Infra",
        "metadata": {"name": "web"},
        "spec": {"contracts": [
            {"name": "api", "state": "requested", "sshAuthorizedKeys": ["ssh-ed25519 AAAAC3Nz owner"]},
            {"name": "tunnel", "state": "requested", "tunnels": [{"tag": "http", "port": 8080}]}
        ]}
    });
    let Err(IntentError::Invalid(problems)) = declare(&store, &requested, at(0)) else {
        panic!("refused");
    };
    let paths: Vec<&str> = problems.iter().map(|p| p.path.as_str()).collect();
    assert_eq!(paths, ["/spec/contracts/1/tunnels"], "{problems:?}");
    assert!(problems[0].fix.contains("userData"), "{problems:?}");
    assert!(rows(&store).unwrap().is_empty(), "nothing is stored");

    let staged = json!({
        "kind": "Infra",
        "metadata": {"name": "web"},
        "spec": {"contracts": [{"name": "api", "state": "staged", "vmName": "web-1"}]}
    });
    declare(&store, &staged, at(1)).expect("a staged contract may hold it");
    let name = Name::parse("web").unwrap();
    let Err(IntentError::Invalid(problems)) = set_contract(
        &store,
        DeploymentKind::Infra,
        &name,
        "api",
        ContractIntent::Request,
        at(2),
    ) else {
        panic!("requesting it is refused");
    };
    assert_eq!(problems[0].path, "/spec/contracts/0/vmName");
    let spec = store.get::<InfraSpec>(&name).unwrap().unwrap().spec;
    assert_eq!(
        spec.contracts[0].state,
        ContractState::Staged,
        "still staged"
    );
}

/// A `userData` that looks like it holds a secret is refused at declaration, with the market's
/// own problems in the same answer, each line named and never quoted; nothing is stored (the
/// record would publish it in clear text).
#[test]
fn user_data_holding_a_secret_is_refused_with_every_other_problem_and_nothing_stored() {
    let (_dir, store) = store_file();
    let declaration = json!({
        "kind": "Infra",
        "metadata": {"name": "web"},
        "spec": {"contracts": [
            {"name": "api", "state": "staged",
             "userData": "#!/bin/sh\nexport DB_PASSWORD=hunter2\n"},
            {"name": "tunnel", "state": "requested", "tunnels": [{"tag": "http", "port": 8080}]}
        ]}
    });
    let Err(IntentError::Invalid(problems)) = declare(&store, &declaration, at(0)) else {
        panic!("refused");
    };
    let paths: Vec<&str> = problems.iter().map(|p| p.path.as_str()).collect();
    assert_eq!(
        paths,
        ["/spec/contracts/1/tunnels", "/spec/contracts/0/userData"],
        "{problems:?}"
    );
    assert!(
        problems[1].message.starts_with("line 2 of userData")
            && problems[1].message.contains("public repo"),
        "{problems:?}"
    );
    assert!(!format!("{problems:?}").contains("hunter2"));
    assert!(rows(&store).unwrap().is_empty(), "nothing is stored");
}

#[test]
fn another_kind_for_a_declared_contract_is_refused_and_a_new_contract_may_take_it() {
    let (_dir, store) = store_file();
    declare(&store, &web("v1"), at(0)).unwrap();
    let mut edited = web("v2");
    edited["spec"]["contracts"][1]["computeKind"] = json!("deno");
    let Err(IntentError::Invalid(problems)) = declare(&store, &edited, at(1)) else {
        panic!("refused");
    };
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(problems[0].path, "/spec/contracts/1/computeKind");
    assert!(
        problems[0].fix.contains("another name"),
        "{}",
        problems[0].fix
    );
    let row = rows(&store).unwrap().remove(0);
    assert_eq!(row.description.as_deref(), Some("v1"), "nothing was saved");

    edited["spec"]["contracts"][1]["name"] = json!("worker-deno");
    declare(&store, &edited, at(2)).unwrap();
}

#[test]
fn a_successor_is_declared_as_the_record_is_and_the_deployment_ends() {
    let (_dir, store) = store_file();
    declare(&store, &web("ours"), at(0)).unwrap();
    declare(
        &store,
        &json!({"kind": "Infra", "metadata": {"name": "web-2"}, "spec": {}}),
        at(0),
    )
    .unwrap();
    let undescribed = json!({
        "$type": "computer.socialweb.infra",
        "contracts": [{"name": "api", "state": "staged", "computeKind": "deno"}],
        "createdAt": "2026-12-05T10:00:00.000Z"
    });
    let alone = Name::parse("alone").unwrap();
    declare(
        &store,
        &json!({"kind": "Infra", "metadata": {"name": "alone"}, "spec": {"description": "x"}}),
        at(0),
    )
    .unwrap();
    let successor =
        deployments::succeed(&store, DeploymentKind::Infra, &alone, &undescribed, at(1)).unwrap();
    assert_eq!(successor.name, "alone-2");
    assert_eq!(successor.description, None, "as the record says");

    let record = json!({
        "$type": "computer.socialweb.infra",
        "description": "theirs",
        "contracts": [{"name": "api", "state": "staged", "computeKind": "deno"}],
        "createdAt": "2026-12-05T10:00:00.000Z"
    });
    let name = Name::parse("web").unwrap();
    let successor =
        deployments::succeed(&store, DeploymentKind::Infra, &name, &record, at(5)).unwrap();

    assert_eq!(successor.name, "web-3", "web-2 is taken");
    assert_eq!(successor.description.as_deref(), Some("theirs"));
    let object = store
        .get::<InfraSpec>(&Name::parse("web-3").unwrap())
        .unwrap()
        .unwrap();
    assert_eq!(
        object.spec.contracts[0].compute_kind_or_default().as_str(),
        "deno"
    );
    // No controller holds its finalizer here, so the ended deployment leaves the store at once.
    let ended = store.get::<InfraSpec>(&name).unwrap();
    assert!(
        ended.is_none_or(|ended| ended.metadata.is_deleting()),
        "the deployment ends"
    );

    let unreadable = json!({"$type": "computer.socialweb.infra"});
    let other = Name::parse("web-3").unwrap();
    assert!(
        deployments::succeed(&store, DeploymentKind::Infra, &other, &unreadable, at(6)).is_err()
    );
    assert!(
        store
            .get::<InfraSpec>(&Name::parse("web-4").unwrap())
            .unwrap()
            .is_none(),
        "nothing was declared"
    );
}

#[test]
fn a_successor_reads_its_predecessors_secret_values_until_it_sets_its_own() {
    let (_dir, store) = store_file();
    let kind = DeploymentKind::Infra;
    declare(&store, &web("ours"), at(0)).unwrap();
    let name = Name::parse("web").unwrap();
    secrets::put(&store, kind, &name, "token", &[]).unwrap();
    let record = json!({
        "$type": "computer.socialweb.infra",
        "contracts": [{"name": "api", "state": "staged", "computeKind": "deno"}],
        "createdAt": "2026-12-05T10:00:00.000Z"
    });
    let successor = deployments::succeed(&store, kind, &name, &record, at(1)).unwrap();
    let successor = Name::parse(&successor.name).unwrap();

    let kept = secrets::kept(&store, kind, &successor, "token").unwrap();
    assert_eq!(
        kept.keychain_entry,
        secrets::keychain_entry(kind, &name, "token"),
        "the value stays where the predecessor's was written"
    );
    secrets::put(&store, kind, &successor, "token", &[]).unwrap();
    let rotated = secrets::kept(&store, kind, &successor, "token").unwrap();
    assert_eq!(
        rotated.keychain_entry,
        secrets::keychain_entry(kind, &successor, "token")
    );
    assert_eq!(rotated.version, 2);
    assert!(secrets::kept(&store, kind, &successor, "other").is_err());
}
