//! `subscribeClusters` over WebSocket, in atproto's event-stream framing: each binary message
//! is a DAG-CBOR header `{op: 1, t: "#cluster" | "#member" | "#nodeClaim" | "#info"}` followed by
//! the DAG-CBOR body; an error is `{op: -1}` then `{error, message}`, and the stream closes.
//!
//! Order: the caller is authenticated before the upgrade (a refused token is an HTTP 401);
//! the stream subscribes to changes *before* it reads the snapshot, sends the snapshot, then
//! `#info SnapshotComplete`, then every change of the caller's clusters. A subscriber that
//! falls behind is disconnected, to reconnect and take a fresh snapshot. A hostile gateway
//! (`Config::hostile_frame_bytes`) opens each stream with one oversized frame instead; one with
//! `Config::hostile_stream` sends what [`hostile`] makes in place of the real stream.

use std::sync::Arc;

use axum::extract::State;
use axum::extract::ws::{Message as WsMessage, WebSocket, WebSocketUpgrade};
use axum::http::{HeaderMap, Uri};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::Map;
use swdesk_lexicon::com::publicdomainrelay::temp::cluster::subscribe_clusters::{
    self as frames, InfoName, Message, NSID, Params,
};
use tokio::sync::broadcast::error::RecvError;

use crate::auth::caller;
use crate::clusters::Gateway;
use crate::xrpc::{Refusal, parse_query};

mod hostile;

#[derive(Serialize)]
struct Header<'a> {
    op: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    t: Option<&'a str>,
}

/// The bytes of one frame: header then body.
pub fn encode(message: &Message) -> Result<Vec<u8>, String> {
    let tag = message.type_tag();
    let tag = tag.rfind('#').map_or(tag, |at| &tag[at..]);
    let mut bytes = to_cbor(&Header {
        op: 1,
        t: Some(tag),
    })?;
    let body = match message {
        Message::Cluster(inner) => to_cbor(inner),
        Message::Member(inner) => to_cbor(inner),
        Message::NodeClaim(inner) => to_cbor(inner),
        Message::Info(inner) => to_cbor(inner),
        Message::Other(object) => to_cbor(object),
    }?;
    bytes.extend(body);
    Ok(bytes)
}

/// The bytes of an error frame.
pub fn encode_error(refusal: &Refusal) -> Result<Vec<u8>, String> {
    let mut bytes = to_cbor(&Header { op: -1, t: None })?;
    bytes.extend(to_cbor(&refusal.body())?);
    Ok(bytes)
}

fn to_cbor(value: &impl Serialize) -> Result<Vec<u8>, String> {
    serde_ipld_dagcbor::to_vec(value).map_err(|error| error.to_string())
}

/// The upgrade handler.
pub async fn subscribe(
    State(gateway): State<Arc<Gateway>>,
    headers: HeaderMap,
    uri: Uri,
    upgrade: WebSocketUpgrade,
) -> Response {
    let owner = match caller(&gateway, &headers, NSID).await {
        Ok(owner) => owner,
        Err(refusal) => return refusal.into_response(),
    };
    let params: Params = match parse_query(&uri) {
        Ok(params) => params,
        Err(refusal) => return refusal.into_response(),
    };
    upgrade.on_upgrade(move |socket| stream(gateway, owner, params.name, socket))
}

async fn stream(gateway: Arc<Gateway>, owner: String, name: Option<String>, mut socket: WebSocket) {
    if let Some(size) = gateway.hostile_frame_bytes() {
        let _ = socket
            .send(WsMessage::Binary(vec![0xa2; size].into()))
            .await;
        let _ = socket.send(WsMessage::Close(None)).await;
        return;
    }
    if let Some(mode) = gateway.hostile_stream() {
        return hostile::stream(mode, &mut socket).await;
    }
    let mut changes = gateway.subscribe();
    let mut closing = gateway.closing();
    let snapshot = match gateway.snapshot(&owner, name.as_deref()) {
        Ok(snapshot) => snapshot,
        Err(refusal) => {
            if let Ok(bytes) = encode_error(&refusal) {
                let _ = socket.send(WsMessage::Binary(bytes.into())).await;
            }
            let _ = socket.send(WsMessage::Close(None)).await;
            return;
        }
    };
    let complete = Message::Info(frames::Info {
        name: InfoName::SnapshotComplete,
        message: None,
        extra: Map::new(),
    });
    for message in snapshot.iter().chain(std::iter::once(&complete)) {
        if send(&mut socket, message).await.is_err() {
            return;
        }
    }
    loop {
        tokio::select! {
            change = changes.recv() => match change {
                Ok(event) if event.owner == owner && concerns(&event.message, name.as_deref()) => {
                    if send(&mut socket, &event.message).await.is_err() {
                        return;
                    }
                }
                Ok(_) => {}
                Err(RecvError::Lagged(_)) | Err(RecvError::Closed) => {
                    let _ = socket.send(WsMessage::Close(None)).await;
                    return;
                }
            },
            _ = closing.changed() => {
                let _ = socket.send(WsMessage::Close(None)).await;
                return;
            }
            incoming = socket.recv() => match incoming {
                Some(Ok(WsMessage::Close(_))) | None | Some(Err(_)) => return,
                Some(Ok(_)) => {}
            },
        }
    }
}

async fn send(socket: &mut WebSocket, message: &Message) -> Result<(), ()> {
    let bytes = encode(message).map_err(|_| ())?;
    socket
        .send(WsMessage::Binary(bytes.into()))
        .await
        .map_err(|_| ())
}

/// Whether a frame is about the cluster `name` (any frame when no name was asked).
fn concerns(message: &Message, name: Option<&str>) -> bool {
    let Some(name) = name else { return true };
    match message {
        Message::Cluster(cluster) => cluster.name == name,
        Message::Member(member) => member.cluster == name,
        Message::NodeClaim(node) => node.cluster == name,
        Message::Info(_) | Message::Other(_) => true,
    }
}
