//! `xrpc_answer`: a JSON answer body of an XRPC call, read the ways the app reads one: as an error
//! answer (`swdesk_atproto::xrpc::XrpcError::from_answer`, the gateway's `ErrorName::parse`, each
//! method's declared `Error`), and as the success body of every gateway and market method, against
//! its lexicon (`Catalog::validate_xrpc`) and into its generated `Output` (and a procedure's
//! `Input`, which the sandbox peers read).
//!
//! Invariants:
//! - an error answer's name is its `error` string, else the HTTP status; the error's text names the
//!   method and that name; it is transient exactly when its status is (core's retry rule), and the
//!   `Retry-After` it keeps (the input's first line as the header) is at most the cap;
//! - `ErrorName::parse` keeps an unknown name as written, and a method's `Error` prints back the
//!   name it was made from;
//! - a body its lexicon accepts reads into the generated type; a body that reads is written and
//!   read again to the same JSON.

use reqwest::StatusCode;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use swdesk_atproto::xrpc::XrpcError;
use swdesk_gateway::ErrorName;
use swdesk_kernel::retry::{Fault, MAX_RETRY_AFTER, transient_status};
use swdesk_lexicon::com::publicdomainrelay::temp::{cluster, market};
use swdesk_lexicon::computer::socialweb::k8s;
use swdesk_lexicon::text::peer_text;
use swdesk_lexicon::validate::{self, XrpcBody};
use swdesk_lexicon::xrpc::{Procedure, Query};

/// The statuses an error answer is tried with (the input's length picks one).
const STATUSES: [u16; 8] = [400, 401, 403, 404, 409, 429, 500, 502];

type Method = fn(&Value, Option<&str>);

/// Every method of the gateway and the market.
pub const METHODS: &[Method] = &[
    query::<cluster::list_clusters::ListClusters>,
    query::<k8s::get_job::GetJob>,
    procedure::<cluster::create_cluster::CreateCluster>,
    procedure::<cluster::control_plane_up::ControlPlaneUp>,
    procedure::<cluster::control_plane_down::ControlPlaneDown>,
    procedure::<cluster::delete_cluster::DeleteCluster>,
    procedure::<cluster::get_kubeconfig::GetKubeconfig>,
    procedure::<cluster::revoke_identity::RevokeIdentity>,
    procedure::<k8s::kubectl_apply_server_side::KubectlApplyServerSide>,
    procedure::<market::submit_rfp::SubmitRfp>,
    procedure::<market::submit_bid::SubmitBid>,
    procedure::<market::submit_accept::SubmitAccept>,
    procedure::<market::submit_event::SubmitEvent>,
];

pub fn check(data: &[u8]) {
    // What `swdesk_net::read_error` gives for a body that is not JSON.
    let body = crate::json(data).unwrap_or(Value::Null);
    let status = STATUSES[data.len() % STATUSES.len()];
    error_answer(&body, status, retry_after_header(data));
    let name = body.get("error").and_then(Value::as_str);
    for method in METHODS {
        method(&body, name);
    }
}

/// The first line of the input as a `Retry-After` header, when it is a valid header value.
fn retry_after_header(data: &[u8]) -> reqwest::header::HeaderMap {
    let line = data.split(|byte| *byte == b'\n').next().unwrap_or_default();
    let mut headers = reqwest::header::HeaderMap::new();
    if let Ok(value) = reqwest::header::HeaderValue::from_bytes(&line[..line.len().min(64)]) {
        headers.insert(reqwest::header::RETRY_AFTER, value);
    }
    headers
}

fn error_answer(body: &Value, status: u16, headers: reqwest::header::HeaderMap) {
    let Ok(status) = StatusCode::from_u16(status) else {
        return;
    };
    let nsid = "com.atproto.repo.putRecord";
    let error = XrpcError::from_answer(nsid, status, &headers, body);
    match error.fault() {
        Fault::Transient { retry_after } => {
            assert!(transient_status(status.as_u16()), "{status} is transient");
            assert!(retry_after.is_none_or(|wait| wait <= MAX_RETRY_AFTER));
        }
        Fault::Permanent => assert!(!transient_status(status.as_u16()), "{status}"),
    }
    // A server's error name is kept cleaned and cut (one line, 64 bytes), as every text from
    // another party is.
    let expected = body["error"]
        .as_str()
        .map_or_else(|| status.to_string(), |name| peer_text(name, 64));
    assert_eq!(error.name(), Some(expected.as_str()));
    let text = error.to_string();
    assert!(
        text.starts_with(&format!("{nsid} failed: {expected}")),
        "{text:?}"
    );
    if let Some(name) = body["error"].as_str() {
        match ErrorName::parse(name) {
            ErrorName::Other(kept) => assert_eq!(kept, peer_text(name, 64)),
            known => assert!(
                !matches!(known, ErrorName::Other(_)),
                "{name:?} parsed as {known:?}"
            ),
        }
    }
}

fn query<M: Query>(body: &Value, name: Option<&str>) {
    body_of::<M::Output>(M::NSID, XrpcBody::Output, body);
    error_name::<M::Error>(M::NSID, name);
}

fn procedure<M: Procedure>(body: &Value, name: Option<&str>) {
    body_of::<M::Output>(M::NSID, XrpcBody::Output, body);
    body_of::<M::Input>(M::NSID, XrpcBody::Input, body);
    error_name::<M::Error>(M::NSID, name);
}

fn error_name<E: for<'a> From<&'a str> + std::fmt::Display>(nsid: &str, name: Option<&str>) {
    if let Some(name) = name {
        assert_eq!(
            E::from(name).to_string(),
            name,
            "{nsid}: the declared error does not print back its name"
        );
    }
}

fn body_of<T: Serialize + DeserializeOwned>(nsid: &str, which: XrpcBody, body: &Value) {
    let read = serde_json::from_value::<T>(body.clone());
    let valid = validate::builtin()
        .map(|catalog| catalog.validate_xrpc(nsid, which, body).is_empty())
        .unwrap_or(false);
    if valid && let Err(error) = &read {
        panic!("{nsid} {which:?}: a body the lexicon accepts does not read: {error}");
    }
    let Ok(read) = read else {
        return;
    };
    let written = serde_json::to_value(&read)
        .unwrap_or_else(|error| panic!("{nsid} {which:?}: a body read cannot be written: {error}"));
    let again: T = serde_json::from_value(written.clone()).unwrap_or_else(|error| {
        panic!("{nsid} {which:?}: a written body does not read back: {error}")
    });
    assert_eq!(
        serde_json::to_value(&again).ok().as_ref(),
        Some(&written),
        "{nsid} {which:?}: reading and writing changed the body"
    );
}
