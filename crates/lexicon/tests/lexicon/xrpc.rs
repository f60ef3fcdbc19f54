//! XRPC types: method traits, message unions tagged by `$type`, error enums, lexicon defaults,
//! credentials hidden from `Debug`, and body validation against the built-in lexicons.

use proptest::prelude::*;
use serde_json::{Value, json};
use subscribe_clusters::Message;
use swdesk_lexicon::com::publicdomainrelay::temp::cluster::defs::Phase;
use swdesk_lexicon::com::publicdomainrelay::temp::cluster::{
    get_kubeconfig, list_clusters, subscribe_clusters,
};
use swdesk_lexicon::computer::socialweb::k8s::{get_job, kubectl_apply_server_side};
use swdesk_lexicon::validate::{self, XrpcBody};
use swdesk_lexicon::xrpc::{Procedure, Query, Subscription};

fn nsid_of_query<Q: Query>() -> &'static str {
    Q::NSID
}

#[test]
fn every_method_type_names_its_nsid() {
    assert_eq!(
        nsid_of_query::<list_clusters::ListClusters>(),
        "com.publicdomainrelay.temp.cluster.listClusters"
    );
    assert_eq!(
        <get_kubeconfig::GetKubeconfig as Procedure>::NSID,
        get_kubeconfig::NSID
    );
    assert_eq!(
        <subscribe_clusters::SubscribeClusters as Subscription>::NSID,
        subscribe_clusters::NSID
    );
    assert_eq!(
        <get_job::GetJob as Query>::NSID,
        "computer.socialweb.k8s.getJob"
    );
}

#[test]
fn a_snapshot_of_frames_deserializes_by_short_and_full_type() {
    let frames = json!([
        {"$type": "#cluster", "name": "dev", "phase": "Ready", "running": true},
        {"$type": "com.publicdomainrelay.temp.cluster.subscribeClusters#member", "cluster": "dev", "did": "did:plc:abc", "state": "Active"},
        {"$type": "#nodeClaim", "cluster": "dev", "name": "node-1", "phase": "Ready",
         "infra": {"workspace": "root", "name": "nodes-1a2b", "contract": "node-1", "computeContract": "cc-1"}},
        {"$type": "#info", "name": "SnapshotComplete"}
    ]);
    let messages: Vec<Message> = serde_json::from_value(frames).expect("frames parse");
    let tags: Vec<&str> = messages.iter().map(Message::type_tag).collect();
    assert_eq!(tags, ["#cluster", "#member", "#nodeClaim", "#info"]);
    let Message::Cluster(cluster) = &messages[0] else {
        panic!("a cluster frame")
    };
    assert_eq!(cluster.phase, Phase::Ready);
    let Message::NodeClaim(node) = &messages[2] else {
        panic!("a nodeClaim frame")
    };
    let infra = node.infra.as_ref().expect("its infra entry");
    assert_eq!(
        (infra.name.as_str(), infra.contract.as_str()),
        ("nodes-1a2b", "node-1")
    );
    assert_eq!(infra.compute_contract.as_deref(), Some("cc-1"));
}

#[test]
fn a_message_serializes_with_its_type_first() {
    let message = Message::Info(subscribe_clusters::Info {
        name: subscribe_clusters::InfoName::SnapshotComplete,
        ..Default::default()
    });
    let text = serde_json::to_string(&message).expect("serializes");
    assert_eq!(text, r##"{"$type":"#info","name":"SnapshotComplete"}"##);
}

#[test]
fn a_frame_without_a_type_is_refused() {
    let frame = json!({"name": "dev", "phase": "Ready"});
    assert!(serde_json::from_value::<Message>(frame).is_err());
}

proptest! {
    #[test]
    fn a_frame_of_an_unknown_type_is_kept_whole(
        tag in "#[a-z]{1,8}",
        fields in prop::collection::btree_map("[a-z]{1,6}", any::<i64>(), 0..4),
    ) {
        prop_assume!(!["#cluster", "#member", "#info"].contains(&tag.as_str()));
        let mut frame = serde_json::Map::new();
        frame.insert("$type".to_owned(), Value::from(tag.clone()));
        frame.extend(fields.into_iter().map(|(k, v)| (k, Value::from(v))));
        let frame = Value::Object(frame);
        let message: Message = serde_json::from_value(frame.clone()).expect("parses");
        prop_assert!(matches!(message, Message::Other(_)));
        prop_assert_eq!(message.type_tag(), tag.as_str());
        prop_assert_eq!(serde_json::to_value(&message).expect("serializes"), frame);
    }
}

#[test]
fn declared_errors_are_named_variants_and_others_are_kept() {
    assert_eq!(
        get_kubeconfig::Error::from("InvalidTtl"),
        get_kubeconfig::Error::InvalidTtl
    );
    let other = get_job::Error::from("RateLimitExceeded");
    assert_eq!(other, get_job::Error::Other("RateLimitExceeded".to_owned()));
    assert_eq!(other.to_string(), "RateLimitExceeded");
    assert!(get_job::Error::KNOWN.contains(&"ClusterNotReady"));
}

#[test]
fn lexicon_defaults_are_the_seeds_values() {
    assert_eq!(
        get_kubeconfig::Input::default().ttl_seconds_or_default(),
        28800
    );
    assert!(!get_kubeconfig::Input::default().no_expiry_or_default());
    assert_eq!(get_job::Params::default().tail_lines_or_default(), 100);
    let apply = kubectl_apply_server_side::Input::default();
    assert_eq!(apply.field_manager_or_default(), "socialweb-computer");
}

#[test]
fn a_kubeconfig_never_shows_in_debug_output() {
    let output: get_kubeconfig::Output = serde_json::from_value(json!({
        "kubeconfig": "apiVersion: v1\nusers:\n- user:\n    client-key-data: SECRETKEY\n",
        "instance": "i-1"
    }))
    .expect("parses");
    let debug = format!("{output:?}");
    assert!(!debug.contains("SECRETKEY"), "{debug}");
    assert!(output.kubeconfig.expose().contains("SECRETKEY"));
}

#[test]
fn kubeconfig_ttls_outside_60_to_86400_are_refused() {
    let catalog = validate::builtin().expect("built-in lexicons load");
    let input = |ttl: i64| json!({"name": "dev", "ttlSeconds": ttl});
    let check = |ttl| catalog.validate_xrpc(get_kubeconfig::NSID, XrpcBody::Input, &input(ttl));
    assert_eq!(check(60), vec![]);
    assert_eq!(check(86400), vec![]);
    assert_eq!(check(59).len(), 1);
    assert_eq!(check(86401).len(), 1);
}

#[test]
fn a_frame_is_validated_against_its_union_member() {
    let catalog = validate::builtin().expect("built-in lexicons load");
    let frame = json!({"$type": "#nodeClaim", "name": "node-1", "infra": {"name": "nodes"}});
    let problems = catalog.validate_xrpc(subscribe_clusters::NSID, XrpcBody::Message, &frame);
    let paths: Vec<&str> = problems.iter().map(|p| p.path.as_str()).collect();
    assert_eq!(paths, ["/cluster", "/infra/contract"]);
}

#[test]
fn a_job_log_over_64_kib_is_refused() {
    let catalog = validate::builtin().expect("built-in lexicons load");
    let job = |log: &str| json!({"phase": "Succeeded", "pods": [{"name": "p", "containers": [{"name": "c", "log": log}]}]});
    let at_cap = "x".repeat(65536);
    assert_eq!(
        catalog.validate_xrpc(get_job::NSID, XrpcBody::Output, &job(&at_cap)),
        vec![]
    );
    let over = catalog.validate_xrpc(get_job::NSID, XrpcBody::Output, &job(&format!("{at_cap}x")));
    assert_eq!(over.len(), 1);
    assert_eq!(over[0].path, "/pods/0/containers/0/log");
}
