//! Event-stream frames as the sandbox gateway writes them and the client reads them: a
//! DAG-CBOR header then a DAG-CBOR body; an error frame is a refusal.

use serde::Deserialize;
use swdesk_gateway::subscription::decode;
use swdesk_gateway::{ErrorName, GatewayError};
use swdesk_lexicon::com::publicdomainrelay::temp::cluster::defs::Phase;
use swdesk_lexicon::com::publicdomainrelay::temp::cluster::subscribe_clusters::{Cluster, Message};
use swdesk_sandbox_gateway::stream::{encode, encode_error};
use swdesk_sandbox_gateway::xrpc::Refusal;

#[derive(Deserialize)]
struct Header {
    op: i64,
    t: String,
}

#[test]
fn a_frame_round_trips_and_its_header_names_the_type() {
    let message = Message::Cluster(Cluster {
        name: "alpha".into(),
        phase: Phase::Ready,
        running: Some(true),
        server: Some("https://example.test:6443".into()),
        ..Default::default()
    });
    let bytes = encode(&message).unwrap();
    let mut decoder = serde_ipld_dagcbor::de::Deserializer::from_slice(&bytes);
    let header = Header::deserialize(&mut decoder).unwrap();
    assert_eq!((header.op, header.t.as_str()), (1, "#cluster"));
    assert_eq!(decode(&bytes).unwrap(), message);
    let mut trailing = bytes.clone();
    trailing.push(0);
    assert!(decode(&trailing).is_err(), "trailing bytes are refused");
}

#[test]
fn an_error_frame_is_a_typed_refusal() {
    let refusal = Refusal::bad("ClusterNotFound", "you have no cluster named x");
    match decode(&encode_error(&refusal).unwrap()) {
        Err(GatewayError::Refused {
            name: ErrorName::ClusterNotFound,
            message,
            ..
        }) => assert_eq!(message, "you have no cluster named x"),
        other => panic!("{other:?}"),
    }
}
