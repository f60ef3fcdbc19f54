//! A hostile gateway's `subscribeClusters` stream (`Config::hostile_stream`): a snapshot that
//! never completes (frames forever, or silence), one of more clusters than any account may
//! have, and one whose texts hold controls and bidi overrides. Each is sent in place of the
//! real stream, so the client's bounds and cleaner are tried on real frames over a real socket.

use std::time::Duration;

use axum::extract::ws::{Message as WsMessage, WebSocket};
use serde_json::{Value, json};
use swdesk_lexicon::com::publicdomainrelay::temp::cluster::subscribe_clusters::Message;

use super::send;
use crate::config::HostileStream;

/// Misbehaves on `socket` as `mode` says, until the client goes.
pub(super) async fn stream(mode: HostileStream, socket: &mut WebSocket) {
    match mode {
        HostileStream::Endless { every } => endless(every, socket).await,
        // Never read: a ping is never answered.
        HostileStream::Silent => tokio::time::sleep(Duration::from_secs(600)).await,
        HostileStream::Clusters(count) => {
            let clusters = (0..count).map(|n| cluster(&format!("c{n}"), "Ready"));
            snapshot_then_hold(clusters.collect(), socket).await;
        }
        HostileStream::Texts => snapshot_then_hold(texts(), socket).await,
    }
}

async fn endless(every: Duration, socket: &mut WebSocket) {
    let frame = cluster("endless", "Initializing");
    while send(socket, &frame).await.is_ok() {
        if !every.is_zero() {
            tokio::time::sleep(every).await;
        }
    }
}

async fn snapshot_then_hold(mut frames: Vec<Message>, socket: &mut WebSocket) {
    frames.push(message(
        json!({"$type": "#info", "name": "SnapshotComplete"}),
    ));
    for frame in &frames {
        if send(socket, frame).await.is_err() {
            return;
        }
    }
    while let Some(Ok(incoming)) = socket.recv().await {
        if matches!(incoming, WsMessage::Close(_)) {
            return;
        }
    }
}

/// Texts a hostile gateway could write: a right-to-left override, NUL, newlines, a bell, a
/// line separator, isolates; and a cluster name and a member DID that are no identifiers.
fn texts() -> Vec<Message> {
    let evil = "Re\u{202E}ady\u{0}\n\u{7}\u{2028}\u{2066}<b>";
    vec![
        cluster("ev\u{202E}il", "Ready"),
        message(json!({"$type": "#cluster", "name": "text", "phase": evil,
            "instance": evil, "server": format!("https://x.test/{evil}")})),
        message(json!({"$type": "#member", "cluster": "text", "did": "did:plc:ab\u{202E}cd"})),
        message(
            json!({"$type": "#member", "cluster": "text", "did": "did:plc:abcd",
            "name": evil, "state": evil}),
        ),
        message(
            json!({"$type": "#nodeClaim", "cluster": "text", "name": evil, "phase": evil,
            "nodeName": evil, "message": evil.repeat(1000),
            "infra": {"workspace": evil, "name": evil, "contract": evil}}),
        ),
        message(json!({"$type": "#info", "name": evil, "message": evil})),
    ]
}

fn cluster(name: &str, phase: &str) -> Message {
    message(json!({"$type": "#cluster", "name": name, "phase": phase}))
}

fn message(value: Value) -> Message {
    serde_json::from_value(value).unwrap_or_else(|_| Message::Other(serde_json::Map::new()))
}
