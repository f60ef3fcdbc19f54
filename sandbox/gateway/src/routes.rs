//! The XRPC handlers: one route a method under `/xrpc/<nsid>`, plus `/.well-known/did.json`.
//! Each handler authenticates the call for its own NSID first, then parses its input (a
//! refused input is a 400 naming the problem), then asks [`Gateway`] on behalf of the caller.

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Uri};
use axum::response::{IntoResponse, Json, Response};
use axum::routing::{get, post};
use serde_json::Map;
use swdesk_lexicon::com::publicdomainrelay::temp::cluster::{
    control_plane_down, control_plane_up, create_cluster, defs, delete_cluster, get_kubeconfig,
    list_clusters, revoke_identity, subscribe_clusters,
};
use swdesk_lexicon::computer::socialweb::k8s::{get_job, kubectl_apply_server_side as ssa};

use crate::auth::caller;
use crate::clusters::Gateway;
use crate::xrpc::{Refusal, answer, parse_body, parse_query};

type Shared = State<Arc<Gateway>>;

/// Every route of the gateway.
pub fn router(gateway: Arc<Gateway>) -> Router {
    let xrpc = |nsid: &str| format!("/xrpc/{nsid}");
    Router::new()
        .route("/.well-known/did.json", get(did_document))
        .route(&xrpc(create_cluster::NSID), post(create))
        .route(&xrpc(list_clusters::NSID), get(list))
        .route(&xrpc(control_plane_up::NSID), post(up))
        .route(&xrpc(control_plane_down::NSID), post(down))
        .route(&xrpc(delete_cluster::NSID), post(delete))
        .route(&xrpc(get_kubeconfig::NSID), post(kubeconfig))
        .route(&xrpc(revoke_identity::NSID), post(revoke))
        .route(
            &xrpc(subscribe_clusters::NSID),
            get(crate::stream::subscribe),
        )
        .route(&xrpc(ssa::NSID), post(apply))
        .route(&xrpc(get_job::NSID), get(job))
        .fallback(|| async {
            Refusal {
                status: axum::http::StatusCode::NOT_IMPLEMENTED,
                error: "MethodNotImplemented".to_owned(),
                message: "this gateway has no such method".to_owned(),
            }
        })
        .with_state(gateway)
}

async fn did_document(State(gateway): Shared) -> Response {
    Json(crate::did::document(gateway.did(), gateway.url().as_str())).into_response()
}

fn phase(phase: defs::Phase) -> defs::PhaseResult {
    defs::PhaseResult {
        phase,
        extra: Map::new(),
    }
}

async fn create(State(gateway): Shared, headers: HeaderMap, body: Bytes) -> Response {
    answer(
        async {
            let owner = caller(&gateway, &headers, create_cluster::NSID).await?;
            let input: defs::ClusterRef = parse_body(&body)?;
            gateway.create_cluster(&owner, &input.name).await.map(phase)
        }
        .await,
    )
}

async fn list(State(gateway): Shared, headers: HeaderMap) -> Response {
    answer(
        async {
            let owner = caller(&gateway, &headers, list_clusters::NSID).await?;
            Ok(list_clusters::Output {
                clusters: gateway.list(&owner),
                extra: Map::new(),
            })
        }
        .await,
    )
}

async fn up(State(gateway): Shared, headers: HeaderMap, body: Bytes) -> Response {
    answer(
        async {
            let owner = caller(&gateway, &headers, control_plane_up::NSID).await?;
            let input: defs::ClusterRef = parse_body(&body)?;
            gateway.control_plane_up(&owner, &input.name).map(phase)
        }
        .await,
    )
}

async fn down(State(gateway): Shared, headers: HeaderMap, body: Bytes) -> Response {
    answer(
        async {
            let owner = caller(&gateway, &headers, control_plane_down::NSID).await?;
            let input: defs::ClusterRef = parse_body(&body)?;
            gateway.control_plane_down(&owner, &input.name).map(phase)
        }
        .await,
    )
}

async fn delete(State(gateway): Shared, headers: HeaderMap, body: Bytes) -> Response {
    answer(
        async {
            let owner = caller(&gateway, &headers, delete_cluster::NSID).await?;
            let input: defs::ClusterRef = parse_body(&body)?;
            gateway.delete_cluster(&owner, &input.name).map(phase)
        }
        .await,
    )
}

async fn kubeconfig(State(gateway): Shared, headers: HeaderMap, body: Bytes) -> Response {
    answer(
        async {
            let owner = caller(&gateway, &headers, get_kubeconfig::NSID).await?;
            let input: get_kubeconfig::Input = parse_body(&body)?;
            let (kubeconfig, instance) = gateway
                .kubeconfig(
                    &owner,
                    &input.name,
                    input.ttl_seconds_or_default(),
                    input.no_expiry_or_default(),
                )
                .await?;
            Ok(get_kubeconfig::Output {
                kubeconfig: swdesk_lexicon::Redacted::new(kubeconfig),
                instance,
                extra: Map::new(),
            })
        }
        .await,
    )
}

async fn revoke(State(gateway): Shared, headers: HeaderMap, body: Bytes) -> Response {
    answer(
        async {
            let owner = caller(&gateway, &headers, revoke_identity::NSID).await?;
            let input: revoke_identity::Input = parse_body(&body)?;
            let revoked = gateway.revoke_identity(&owner, &input.name, &input.did)?;
            Ok(revoke_identity::Output {
                revoked,
                extra: Map::new(),
            })
        }
        .await,
    )
}

async fn apply(State(gateway): Shared, headers: HeaderMap, body: Bytes) -> Response {
    answer(
        async {
            let owner = caller(&gateway, &headers, ssa::NSID).await?;
            let input: ssa::Input = parse_body(&body)?;
            gateway.apply(&owner, &input)
        }
        .await,
    )
}

async fn job(State(gateway): Shared, headers: HeaderMap, uri: Uri) -> Response {
    answer(
        async {
            let owner = caller(&gateway, &headers, get_job::NSID).await?;
            let params: get_job::Params = parse_query(&uri)?;
            gateway.get_job(&owner, &params)
        }
        .await,
    )
}
