//! `kubectlApplyServerSide` and `getJob`: field-manager conflicts, force, dry run,
//! generation and resourceVersion; a Job through its phases with its logs and their cap.

use serde_json::{Value, json};
use swdesk_gateway::{ErrorName, Gateway, GatewayClient, GatewayError};
use swdesk_lexicon::com::publicdomainrelay::temp::cluster::defs::Phase;
use swdesk_lexicon::computer::socialweb::k8s::get_job::{self, OutputPhase};
use swdesk_lexicon::computer::socialweb::k8s::kubectl_apply_server_side as ssa;

use crate::clusters::{config_map, until_phase};
use crate::support::{World, eventually};

fn refusal(result: Result<ssa::Output, GatewayError>) -> (ErrorName, String) {
    match result {
        Err(GatewayError::Refused { name, message, .. }) => (name, message),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

fn by(manager: &str, cluster: &str, data: Value) -> ssa::Input {
    let mut input = config_map("shared-settings", data);
    input.cluster = cluster.to_owned();
    input.field_manager = Some(manager.to_owned());
    input
}

fn managers_of(output: &ssa::Output, field: &str) -> Vec<String> {
    let object = output.object.as_ref().unwrap();
    object["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|entry| {
            entry["fields"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f == field)
        })
        .map(|entry| entry["manager"].as_str().unwrap().to_owned())
        .collect()
}

async fn ready_cluster(world: &World, prefix: &str, name: &str) -> GatewayClient {
    let owner = world.owner(prefix).await;
    owner.client.create_cluster(name).await.unwrap();
    let (name_error, _) = refusal(
        owner
            .client
            .kubectl_apply_server_side(&by("a", name, json!({})))
            .await,
    );
    assert!(
        matches!(
            name_error,
            ErrorName::ClusterNotReady | ErrorName::InvalidManifest
        ),
        "{name_error:?}"
    );
    until_phase(&owner.client, name, Phase::Ready).await;
    owner.client
}

#[tokio::test]
async fn server_side_apply_tracks_owners_refuses_conflicts_and_dry_runs_store_nothing() {
    let world = World::start().await;
    let client = ready_cluster(&world, "ssa", "eta").await;

    let first = client
        .kubectl_apply_server_side(&by("alice", "eta", json!({"a": "1", "b": "x"})))
        .await
        .unwrap();
    assert_eq!(
        (first.generation, first.kind.as_str()),
        (Some(1), "ConfigMap")
    );
    let same = client
        .kubectl_apply_server_side(&by("alice", "eta", json!({"a": "1", "b": "x"})))
        .await
        .unwrap();
    assert_eq!(
        same.resource_version, first.resource_version,
        "a no-op apply changes nothing"
    );

    let (name, message) = refusal(
        client
            .kubectl_apply_server_side(&by("bob", "eta", json!({"a": "2"})))
            .await,
    );
    assert_eq!(name, ErrorName::Conflict);
    assert!(
        message.contains("data.a") && message.contains("alice"),
        "{message}"
    );

    let shared = client
        .kubectl_apply_server_side(&by("bob", "eta", json!({"a": "1"})))
        .await
        .unwrap();
    let mut owners = managers_of(&shared, "data.a");
    owners.sort();
    assert_eq!(
        owners,
        ["alice", "bob"],
        "the same value is shared, not a conflict"
    );

    let mut dry = by("bob", "eta", json!({"a": "3"}));
    dry.force = Some(true);
    dry.dry_run = Some(true);
    let preview = client.kubectl_apply_server_side(&dry).await.unwrap();
    assert_eq!(
        preview.object.as_ref().unwrap()["data"]["a"],
        "3",
        "a dry run shows the result"
    );

    let mut forced = by("bob", "eta", json!({"a": "2"}));
    forced.force = Some(true);
    let taken = client.kubectl_apply_server_side(&forced).await.unwrap();
    assert_eq!(
        taken.object.as_ref().unwrap()["data"],
        json!({"a": "2", "b": "x"})
    );
    assert_eq!(
        managers_of(&taken, "data.a"),
        ["bob"],
        "force takes the field"
    );
    assert_eq!(
        taken.generation,
        Some(2),
        "the dry run stored nothing: one data change since the first apply"
    );
    let first_version: u64 = first.resource_version.as_deref().unwrap().parse().unwrap();
    let taken_version: u64 = taken.resource_version.as_deref().unwrap().parse().unwrap();
    assert!(taken_version > first_version);

    let mut labelled = by("alice", "eta", json!({"b": "x"}));
    labelled.manifest["metadata"]["labels"] = json!({"team": "blue"});
    let relabelled = client.kubectl_apply_server_side(&labelled).await.unwrap();
    assert_eq!(
        relabelled.generation,
        Some(2),
        "metadata changes keep the generation"
    );
    assert_ne!(relabelled.resource_version, taken.resource_version);

    let mut broken = by("alice", "eta", json!({}));
    broken.manifest.remove("kind");
    broken.manifest["metadata"]["name"] = json!("Not Valid");
    let (name, message) = refusal(client.kubectl_apply_server_side(&broken).await);
    assert_eq!(name, ErrorName::InvalidManifest);
    assert!(
        message.contains("kind is missing") && message.contains("metadata.name"),
        "{message}"
    );
}

fn job(name: &str, args: &[&str], annotations: Value) -> ssa::Input {
    let manifest = json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "work", "annotations": annotations},
        "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [
            {"name": "main", "image": "busybox", "command": ["echo"], "args": args}
        ]}}},
    });
    ssa::Input {
        cluster: "theta".into(),
        manifest: manifest.as_object().unwrap().clone(),
        namespace: None,
        name: None,
        field_manager: None,
        force: None,
        dry_run: None,
        extra: Default::default(),
    }
}

fn params(name: &str, tail_lines: Option<i64>) -> get_job::Params {
    get_job::Params {
        cluster: "theta".into(),
        namespace: "work".into(),
        name: name.into(),
        tail_lines,
    }
}

fn log_of(output: &get_job::Output) -> (String, bool) {
    let container = &output.pods.as_ref().unwrap()[0]
        .containers
        .as_ref()
        .unwrap()[0];
    (
        container.log.clone().unwrap_or_default(),
        container.log_truncated.unwrap_or(false),
    )
}

#[tokio::test]
async fn a_job_runs_pending_running_then_finishes_with_tailed_and_capped_logs() {
    // Phases long enough to be seen by polling on a busy machine.
    let world = World::start_with(|config| {
        config.timings.job_pending = std::time::Duration::from_millis(1500);
        config.timings.job_running = std::time::Duration::from_millis(1500);
    })
    .await;
    let client = ready_cluster(&world, "jobs", "theta").await;
    // The first getJob mints its token: do it before the Job's clock starts.
    let unknown = client.get_job(&params("hello", None)).await;
    assert!(matches!(
        unknown,
        Err(GatewayError::Refused {
            name: ErrorName::JobNotFound,
            ..
        })
    ));

    client
        .kubectl_apply_server_side(&job("hello", &["hello", "world"], json!({})))
        .await
        .unwrap();
    let mut phases: Vec<OutputPhase> = Vec::new();
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(20);
    let done = loop {
        let status = client.get_job(&params("hello", Some(1))).await.unwrap();
        if phases.last() != Some(&status.phase) {
            phases.push(status.phase.clone());
        }
        if status.phase == OutputPhase::Succeeded {
            break status;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the Job finishes in time: {phases:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    assert_eq!(
        phases,
        [
            OutputPhase::Pending,
            OutputPhase::Running,
            OutputPhase::Succeeded
        ]
    );
    assert_eq!(done.succeeded, Some(1));
    assert_eq!(done.conditions.as_ref().unwrap()[0].r#type, "Complete");
    assert_eq!(
        log_of(&done),
        ("world\n".to_owned(), false),
        "tailLines 1 keeps the last line"
    );

    let line = "x".repeat(99);
    client.kubectl_apply_server_side(&job("loud", &[&line], json!({"sandbox.socialweb.computer/repeat": "2000", "sandbox.socialweb.computer/exit-code": "3"}))).await.unwrap();
    let failed = eventually("the loud Job to fail", || async {
        let status = client
            .get_job(&params("loud", Some(100_000)))
            .await
            .unwrap();
        (status.phase == OutputPhase::Failed).then_some(status)
    })
    .await;
    assert_eq!(failed.failed, Some(1));
    let (log, truncated) = log_of(&failed);
    assert!(truncated, "200,000 bytes of log are cut");
    assert_eq!(log.len(), 65_536, "to the 64 KiB cap");
    assert!(log.ends_with(&format!("{line}\n")), "the end is kept");
    let (short, short_truncated) =
        log_of(&client.get_job(&params("loud", Some(10))).await.unwrap());
    assert_eq!((short.lines().count(), short_truncated), (10, false));

    let mut dry = job("dry", &["nothing"], json!({}));
    dry.dry_run = Some(true);
    client.kubectl_apply_server_side(&dry).await.unwrap();
    match client.get_job(&params("dry", None)).await {
        Err(GatewayError::Refused {
            name: ErrorName::JobNotFound,
            ..
        }) => {}
        other => panic!("a dry-run Job is not stored: {other:?}"),
    }
}
