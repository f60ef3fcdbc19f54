//! `cluster_frames`: one binary WebSocket frame of `subscribeClusters` as the gateway sends it (a
//! DAG-CBOR header `{op, t}` then a DAG-CBOR body), through the client's decoder
//! `swdesk_gateway::subscription::decode`. (The feed's snapshot/change state machine around it,
//! `subscription::connection`, is private: it is not fuzzed.)
//!
//! Invariants:
//! - a frame whose header has `op: -1` is never a message, and only such a frame is a refusal
//!   (status 0, the name parsed from its `error`);
//! - a decoded frame followed by another byte is refused (nothing after the body);
//! - a decoded message encoded again under the same header (`#cluster`, `#member`, `#nodeClaim`,
//!   `#info`, or any other `t`, whose body keeps `$type` = `t`) decodes to the same message.

use serde::{Deserialize, Serialize};
use swdesk_gateway::GatewayError;
use swdesk_gateway::subscription::decode;
use swdesk_lexicon::com::publicdomainrelay::temp::cluster::subscribe_clusters::Message;

#[derive(Deserialize, Serialize)]
struct Header {
    op: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    t: Option<String>,
}

pub fn check(data: &[u8]) {
    let header = {
        let mut decoder = serde_ipld_dagcbor::de::Deserializer::from_slice(data);
        Header::deserialize(&mut decoder).ok()
    };
    let decoded = decode(data);
    let error_frame = header.as_ref().is_some_and(|header| header.op == -1);
    match &decoded {
        Ok(message) => {
            assert!(!error_frame, "an error frame decoded as {message:?}");
        }
        Err(GatewayError::Refused { status, .. }) => {
            assert!(error_frame, "a frame without op -1 is a refusal");
            assert_eq!(*status, 0);
        }
        Err(GatewayError::InvalidResponse { .. }) => {}
        Err(other) => panic!("a frame decoded to an unexpected error: {other:?}"),
    }
    let (Ok(message), Some(header)) = (decoded, header) else {
        return;
    };
    let mut longer = data.to_vec();
    longer.push(0);
    assert!(decode(&longer).is_err(), "a trailing byte was accepted");
    let frame = encoded(&header, &message);
    let again = decode(&frame);
    assert_eq!(
        again.as_ref().ok(),
        Some(&message),
        "a message encoded again decodes differently ({:?})",
        again.as_ref().err()
    );
}

/// `message` under `header`'s type, as the gateway writes a frame.
fn encoded(header: &Header, message: &Message) -> Vec<u8> {
    let mut bytes = cbor(&Header {
        op: 1,
        t: header.t.clone(),
    });
    bytes.extend(match message {
        Message::Cluster(inner) => cbor(inner),
        Message::Member(inner) => cbor(inner),
        Message::NodeClaim(inner) => cbor(inner),
        Message::Info(inner) => cbor(inner),
        Message::Other(object) => cbor(object),
    });
    bytes
}

fn cbor(value: &impl Serialize) -> Vec<u8> {
    match serde_ipld_dagcbor::to_vec(value) {
        Ok(bytes) => bytes,
        Err(error) => panic!("a decoded message does not encode: {error}"),
    }
}
