//! The cluster methods through the client: the lifecycle, isolation between accounts, quota,
//! revoking an identity, and each cluster's nodes as one Infra record in the gateway's account.

use serde_json::{Map, Value, json};
use swdesk_gateway::{ErrorName, FeedEvent, Gateway, GatewayError};
use swdesk_lexicon::com::publicdomainrelay::temp::cluster::defs::{ClusterView, Phase};
use swdesk_lexicon::com::publicdomainrelay::temp::cluster::revoke_identity::RevokedGrantState;
use swdesk_lexicon::com::publicdomainrelay::temp::cluster::subscribe_clusters::{
    Message, NodeClaimPhase,
};
use swdesk_lexicon::computer::socialweb::k8s::kubectl_apply_server_side as ssa;

use crate::support::{World, eventually};

fn refused_as(result: Result<impl std::fmt::Debug, GatewayError>, name: ErrorName) -> String {
    match result {
        Err(GatewayError::Refused {
            name: found,
            message,
            ..
        }) if found == name => message,
        other => panic!("expected {name:?}, got {other:?}"),
    }
}

async fn view(client: &impl Gateway, name: &str) -> Option<ClusterView> {
    client
        .list_clusters()
        .await
        .unwrap()
        .into_iter()
        .find(|c| c.name == name)
}

pub async fn until_phase(client: &impl Gateway, name: &str, phase: Phase) -> ClusterView {
    eventually(&format!("{name} to be {phase:?}"), || async {
        view(client, name).await.filter(|c| c.phase == phase)
    })
    .await
}

pub fn config_map(name: &str, data: Value) -> ssa::Input {
    let manifest =
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data});
    ssa::Input {
        cluster: String::new(),
        manifest: manifest.as_object().unwrap().clone(),
        namespace: None,
        name: None,
        field_manager: None,
        force: None,
        dry_run: None,
        extra: Map::new(),
    }
}

#[tokio::test]
async fn a_cluster_initializes_to_ready_stops_with_its_store_kept_restarts_and_drains_away() {
    // Draining lasts long enough to be seen on a busy machine.
    let world =
        World::start_with(|config| config.timings.drain = std::time::Duration::from_secs(3)).await;
    let owner = world.owner("life").await;
    let client = &owner.client;

    assert_eq!(
        client.create_cluster("alpha").await.unwrap(),
        Phase::Initializing
    );
    let listed = view(client, "alpha").await.unwrap();
    assert_eq!(listed.running, Some(true));
    assert!(listed.server.as_deref().unwrap().starts_with("https://"));
    let ready = until_phase(client, "alpha", Phase::Ready).await;
    assert_eq!(
        client.create_cluster("alpha").await.unwrap(),
        Phase::Ready,
        "creating again answers the phase"
    );

    let mut input = config_map("settings", json!({"mode": "on"}));
    input.cluster = "alpha".into();
    let stored = client.kubectl_apply_server_side(&input).await.unwrap();

    assert_eq!(
        client.control_plane_down("alpha").await.unwrap(),
        Phase::Unavailable
    );
    let down = view(client, "alpha").await.unwrap();
    assert_eq!(
        (down.phase, down.running),
        (Phase::Unavailable, Some(false))
    );
    refused_as(
        client.kubectl_apply_server_side(&input).await,
        ErrorName::ClusterNotReady,
    );

    assert_eq!(
        client.control_plane_up("alpha").await.unwrap(),
        Phase::Initializing
    );
    let again = until_phase(client, "alpha", Phase::Ready).await;
    assert_eq!(
        again.instance, ready.instance,
        "a restart keeps the instance"
    );
    let reapplied = client.kubectl_apply_server_side(&input).await.unwrap();
    assert_eq!(
        reapplied.uid, stored.uid,
        "the object store was kept while the control plane was down"
    );
    assert_eq!(reapplied.resource_version, stored.resource_version);

    assert_eq!(
        client.delete_cluster("alpha").await.unwrap(),
        Phase::Draining
    );
    let draining = view(client, "alpha").await.unwrap();
    assert_eq!(
        (draining.phase, draining.teardown_blocked),
        (Phase::Draining, Some(true))
    );
    refused_as(
        client.control_plane_up("alpha").await,
        ErrorName::ClusterDraining,
    );
    eventually("alpha to be gone", || async {
        view(client, "alpha").await.is_none().then_some(())
    })
    .await;
    refused_as(
        client.control_plane_down("alpha").await,
        ErrorName::ClusterNotFound,
    );
    refused_as(
        client.create_cluster("Not_A_Label").await,
        ErrorName::InvalidName,
    );
}

#[tokio::test]
async fn an_account_sees_and_touches_only_its_own_clusters_within_its_quota() {
    let world = World::start_with(|config| config.max_clusters = 2).await;
    let alice = world.owner("alice").await;
    let bob = world.owner("bob").await;

    alice.client.create_cluster("shared").await.unwrap();
    alice.client.create_cluster("second").await.unwrap();
    refused_as(
        alice.client.create_cluster("third").await,
        ErrorName::QuotaExceeded,
    );

    assert!(
        bob.client.list_clusters().await.unwrap().is_empty(),
        "bob sees none of alice's clusters"
    );
    refused_as(
        bob.client.delete_cluster("shared").await,
        ErrorName::ClusterNotFound,
    );
    refused_as(
        bob.client.control_plane_down("second").await,
        ErrorName::ClusterNotFound,
    );
    refused_as(
        bob.client
            .revoke_identity("shared", &alice.account.did)
            .await,
        ErrorName::ClusterNotFound,
    );
    let mut feed = bob.client.subscribe_clusters(Some("shared"));
    assert!(matches!(
        feed.next().await,
        Some(FeedEvent::Failed(_, Some(ErrorName::ClusterNotFound)))
    ));

    bob.client.create_cluster("shared").await.unwrap();
    let alices = until_phase(&alice.client, "shared", Phase::Ready).await;
    let bobs = view(&bob.client, "shared").await.unwrap();
    assert_ne!(
        alices.instance, bobs.instance,
        "the same name is another cluster for another account"
    );
    assert_eq!(alice.client.list_clusters().await.unwrap().len(), 2);
}

#[tokio::test]
async fn revoking_the_owners_identity_forbids_its_calls_and_unknown_identities_are_named() {
    let world = World::start().await;
    let owner = world.owner("revoke").await;
    let client = &owner.client;
    client.create_cluster("gamma").await.unwrap();
    until_phase(client, "gamma", Phase::Ready).await;

    let message = refused_as(
        client.revoke_identity("Bad Name", "not-a-did").await,
        ErrorName::InvalidName,
    );
    assert!(
        message.contains("DNS-1123") && message.contains("not a DID"),
        "{message}"
    );
    refused_as(
        client.revoke_identity("gamma", "did:plc:nobodyhere").await,
        ErrorName::IdentityNotFound,
    );

    let revoked = client
        .revoke_identity("gamma", &owner.account.did)
        .await
        .unwrap();
    assert_eq!(revoked.len(), 1);
    assert_eq!(revoked[0].state, RevokedGrantState::Revoked);
    let mut input = config_map("after-revoke", json!({"a": "b"}));
    input.cluster = "gamma".into();
    refused_as(
        client.kubectl_apply_server_side(&input).await,
        ErrorName::Forbidden,
    );
}

#[tokio::test]
async fn a_clusters_nodes_are_one_infra_record_in_the_gateways_account() {
    let world = World::start_with(|config| config.nodes_per_cluster = 3).await;
    let owner = world.owner("nodes").await;
    let client = &owner.client;
    client.create_cluster("delta").await.unwrap();

    let mut feed = client.subscribe_clusters(Some("delta"));
    let Some(FeedEvent::Snapshot(snapshot)) = feed.next().await else {
        panic!("a snapshot first")
    };
    let claims: Vec<_> = snapshot
        .iter()
        .filter_map(|m| match m {
            Message::NodeClaim(n) => Some(n.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(claims.len(), 3);
    let infra = claims[0].infra.clone().unwrap();
    assert!(
        claims
            .iter()
            .all(|c| c.infra.as_ref().unwrap().name == infra.name)
    );

    assert_eq!(
        infra.workspace.as_deref(),
        Some(world.gateway.account_did.as_str()),
        "the Infra is in the gateway's account"
    );
    let record = infra_record(&world, &infra.name).await;
    assert_eq!(
        record["labels"]["infra.socialweb.computer/cluster"],
        "delta"
    );
    let contracts: Vec<&str> = record["contracts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    let mut named: Vec<String> = claims
        .iter()
        .map(|c| c.infra.as_ref().unwrap().contract.clone())
        .collect();
    named.sort();
    assert_eq!(contracts, named, "one contract entry per NodeClaim");
    assert!(
        claims
            .iter()
            .all(|c| c.infra.as_ref().unwrap().compute_contract.is_some())
    );

    let mut ready: std::collections::BTreeSet<String> = claims
        .iter()
        .filter(|c| c.phase == Some(NodeClaimPhase::Ready))
        .map(|c| c.name.clone())
        .collect();
    let all_ready = async {
        while ready.len() < 3 {
            if let Some(FeedEvent::Change(Message::NodeClaim(node))) = feed.next().await
                && node.phase == Some(NodeClaimPhase::Ready)
            {
                assert!(node.node_name.is_some(), "a joined node has a node name");
                ready.insert(node.name);
            }
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(20), all_ready)
        .await
        .expect("every node becomes Ready");

    client.delete_cluster("delta").await.unwrap();
    eventually("the Infra's final write", || async {
        let record = infra_record(&world, &infra.name).await;
        (record["status"]["phase"] == "ended").then_some(record)
    })
    .await;
}

async fn infra_record(world: &World, rkey: &str) -> Value {
    let mut url = world.pds_url();
    url.set_path("/xrpc/com.atproto.repo.getRecord");
    url.query_pairs_mut()
        .append_pair("repo", &world.gateway.account_did)
        .append_pair("collection", "computer.socialweb.infra")
        .append_pair("rkey", rkey);
    let answer: Value = reqwest::get(url).await.unwrap().json().await.unwrap();
    answer["value"].clone()
}
