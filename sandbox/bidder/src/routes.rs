//! The HTTP surface: `/.well-known/did.json`, one route a market method under
//! `/xrpc/<nsid>` (each authenticates the call for its own NSID first, then parses its input),
//! the open free-grant endpoint `GET /free/receipt/{accepts.free at-uri}/{cid}` (the at-uri
//! percent-encoded or not), and the x402 payment endpoint of paid terms,
//! `/x402/receipt/{accepts.x402 at-uri}/{cid}`, which answers every call
//! `402 PaymentRequired` (JSON `{error, message}`): the sandbox takes no payment.

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Json, Response};
use axum::routing::{any, get, post};
use swdesk_auction::compute::StrongRef;
use swdesk_lexicon::com::publicdomainrelay::temp::market::{
    submit_accept, submit_event, submit_rfp,
};

use crate::bidder::Bidder;
use crate::xrpc::{Refusal, answer, parse_body};

type Shared = State<Arc<Bidder>>;

/// Every route of the bidder.
pub fn router(bidder: Arc<Bidder>) -> Router {
    let xrpc = |nsid: &str| format!("/xrpc/{nsid}");
    Router::new()
        .route("/.well-known/did.json", get(did_document))
        .route(&xrpc(submit_rfp::NSID), post(rfp))
        .route(&xrpc(submit_accept::NSID), post(accept))
        .route(&xrpc(submit_event::NSID), post(event))
        .route(
            &format!("/{}/{{*rest}}", crate::bidding::GRANT_PATH),
            get(grant),
        )
        .route(&format!("/{}", crate::bidding::PAYMENT_PATH), any(payment))
        .route(
            &format!("/{}/{{*rest}}", crate::bidding::PAYMENT_PATH),
            any(payment),
        )
        .fallback(|| async {
            Refusal {
                status: StatusCode::NOT_IMPLEMENTED,
                error: "MethodNotImplemented".to_owned(),
                message: "this bidder has no such method".to_owned(),
            }
        })
        .with_state(bidder)
}

async fn did_document(State(bidder): Shared) -> Response {
    Json(crate::did::document(
        bidder.did(),
        bidder.url().as_str(),
        &bidder.key.did_key(),
    ))
    .into_response()
}

/// The caller of a call to `nsid`.
async fn caller(bidder: &Bidder, headers: &HeaderMap, nsid: &str) -> Result<String, Refusal> {
    let known = crate::did::audiences(bidder.did());
    let audiences: Vec<&str> = known.iter().map(String::as_str).collect();
    crate::auth::authenticate(
        bidder.resolver(),
        headers,
        &audiences,
        nsid,
        bidder.token_clock(),
    )
    .await
}

async fn rfp(State(bidder): Shared, headers: HeaderMap, body: Bytes) -> Response {
    answer(
        async {
            let issuer = caller(&bidder, &headers, submit_rfp::NSID).await?;
            let input: submit_rfp::Input = parse_body(&body)?;
            crate::bidding::submit_rfp(&bidder, &issuer, input).await
        }
        .await,
    )
}

async fn accept(State(bidder): Shared, headers: HeaderMap, body: Bytes) -> Response {
    answer(
        async {
            let issuer = caller(&bidder, &headers, submit_accept::NSID).await?;
            let input: submit_accept::Input = parse_body(&body)?;
            crate::settlement::submit_accept(&bidder, &issuer, input).await
        }
        .await,
    )
}

async fn event(State(bidder): Shared, headers: HeaderMap, body: Bytes) -> Response {
    answer(
        async {
            let issuer = caller(&bidder, &headers, submit_event::NSID).await?;
            let input: submit_event::Input = parse_body(&body)?;
            crate::guest::submit_event(&bidder, &issuer, input).await
        }
        .await,
    )
}

async fn grant(State(bidder): Shared, Path(rest): Path<String>) -> Response {
    answer(
        async {
            let accepts = grant_target(&rest)?;
            let grant = crate::settlement::grant(&bidder, accepts).await?;
            Ok(serde_json::json!({"uri": grant.uri, "cid": grant.cid}))
        }
        .await,
    )
}

/// The x402 payment endpoint: payment is required, and the sandbox cannot take it.
async fn payment() -> Refusal {
    Refusal {
        status: StatusCode::PAYMENT_REQUIRED,
        error: "PaymentRequired".to_owned(),
        message: "this sandbox bidder's paid terms (market.bids.x402) cannot be settled: the \
            local sandbox takes no payment and runs no x402 facilitator; ask a free bidder"
            .to_owned(),
    }
}

/// `{at-uri}/{cid}` (decoded) as the strong reference of an `accepts.free`.
pub fn grant_target(rest: &str) -> Result<StrongRef, Refusal> {
    let malformed =
        || Refusal::invalid("the grant path is {accepts.free at-uri}/{accepts.free cid}");
    let (uri, cid) = rest
        .trim_start_matches('/')
        .rsplit_once('/')
        .ok_or_else(malformed)?;
    let uri = match uri.strip_prefix("at:/") {
        Some(tail) if !tail.starts_with('/') => format!("at://{tail}"),
        _ => uri.to_owned(),
    };
    if !uri.starts_with("at://") || cid.is_empty() {
        return Err(malformed());
    }
    Ok(StrongRef {
        uri,
        cid: cid.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grant_path_names_the_accepts_free_by_uri_and_cid() {
        let expected = StrongRef {
            uri: "at://did:plc:a/com.publicdomainrelay.temp.market.accepts.free/3l".into(),
            cid: "bafy".into(),
        };
        for rest in [
            "at://did:plc:a/com.publicdomainrelay.temp.market.accepts.free/3l/bafy",
            "at:/did:plc:a/com.publicdomainrelay.temp.market.accepts.free/3l/bafy",
        ] {
            assert_eq!(grant_target(rest).ok().as_ref(), Some(&expected), "{rest}");
        }
        assert!(grant_target("bafy").is_err());
        assert!(grant_target("https://x/y/bafy").is_err());
    }
}
