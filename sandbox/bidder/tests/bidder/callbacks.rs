//! The bidder calling the requester back: an RFP naming a `submitBid` service gets its bid
//! there (not in the `submitRfp` answer), and an accept naming a `submitEvent` service gets the
//! guest's `vm.started`, `vm.onNetwork` and key events there, each call carrying a service-auth
//! token the bidder's PDS minted for that service and method. The requester's service is a
//! small loopback server of this test with its own `did:web` document, verifying every token
//! with `swdesk_atproto::service_auth::verify`.

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Json, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};
use swdesk_atproto::identity::Resolver;
use swdesk_atproto::service_auth::verify;
use swdesk_auction::compute::StrongRef;
use swdesk_lexicon::com::publicdomainrelay::temp::compute::events::vm::{on_network, started};
use swdesk_lexicon::com::publicdomainrelay::temp::market::{submit_bid, submit_event, submit_rfp};
use swdesk_lexicon::computer::socialweb::secret::guest_key;
use swdesk_sandbox_bidder::{Behaviour, GuestPhase};

use crate::release::settled;
use crate::support::{eventually, get_record, sandbox};

/// One call the requester's service received: the verified issuer, the method, the body.
#[derive(Debug, Clone)]
struct Received {
    issuer: String,
    nsid: String,
    body: Value,
}

#[derive(Clone)]
struct Peer {
    did: String,
    url: String,
    resolver: Resolver,
    received: Arc<Mutex<Vec<Received>>>,
}

impl Peer {
    fn received(&self, nsid: &str) -> Vec<Received> {
        let all = self.received.lock().unwrap().clone();
        all.into_iter().filter(|call| call.nsid == nsid).collect()
    }
}

async fn start_peer(resolver: Resolver) -> Peer {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let peer = Peer {
        did: format!("did:web:localhost%3A{port}"),
        url: format!("http://localhost:{port}"),
        resolver,
        received: Arc::default(),
    };
    let app = Router::new()
        .route("/.well-known/did.json", get(document))
        .route("/xrpc/{nsid}", post(call))
        .with_state(peer.clone());
    tokio::spawn(async move { axum::serve(listener, app).await });
    peer
}

async fn document(State(peer): State<Peer>) -> Response {
    Json(json!({"id": peer.did, "service": [
        {"id": "#temp_market", "type": "ComputeMarketRequester", "serviceEndpoint": peer.url},
        {"id": "#compute_event", "type": "ComputeMarketEvents", "serviceEndpoint": peer.url},
    ]}))
    .into_response()
}

async fn call(
    State(peer): State<Peer>,
    Path(nsid): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let token = headers
        .get("authorization")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .unwrap_or_default()
        .to_owned();
    let now = i64::try_from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs(),
    )
    .unwrap();
    match verify(&peer.resolver, &token, &peer.did, &nsid, now).await {
        Ok(claims) => {
            peer.received.lock().unwrap().push(Received {
                issuer: claims.issuer_did().to_owned(),
                nsid,
                body: serde_json::from_slice(&body).unwrap_or(Value::Null),
            });
            Json(json!({"ok": true})).into_response()
        }
        Err(error) => (
            StatusCode::UNAUTHORIZED,
            Json(json!({"error": "BadJwt", "message": error.to_string()})),
        )
            .into_response(),
    }
}

#[tokio::test]
async fn the_bidder_sends_its_bid_to_submit_bid_and_the_guest_events_to_submit_event() {
    let sandbox = sandbox().await;
    let bidder = sandbox.bidder(Behaviour::default()).await;
    let requester = sandbox.requester("owner").await;
    let peer = start_peer(requester.resolver.clone()).await;
    let rfp = requester
        .rfp_with(Some(&format!("{}#temp_market", peer.did)))
        .await;
    let answer = requester
        .call(
            &bidder,
            submit_rfp::NSID,
            &json!({"rfpUri": rfp.uri, "rfpCid": rfp.cid}),
        )
        .await;
    assert_eq!(
        (answer.status, &answer.body["ok"]),
        (200, &json!(true)),
        "{:?}",
        answer.body
    );
    assert_eq!(answer.body.get("bidUri"), None, "the bid goes to submitBid");

    let sent = eventually("a submitBid call", || peer.received(submit_bid::NSID).pop()).await;
    assert_eq!(sent.issuer, bidder.account);
    let bid = StrongRef {
        uri: sent.body["uri"].as_str().unwrap().to_owned(),
        cid: sent.body["cid"].as_str().unwrap().to_owned(),
    };
    let (stored, cid) = get_record(&requester.resolver, &bid.uri).await;
    assert_eq!((&sent.body["record"], &cid), (&stored, &bid.cid));
    assert_eq!(stored["rfp"]["uri"], json!(rfp.uri));

    let events_service = format!("{}#compute_event", peer.did);
    let held = settled(&requester, &bidder, rfp, bid, Some(&events_service)).await;
    let events = eventually("three submitEvent calls", || {
        let events = peer.received(submit_event::NSID);
        (events.len() == 3).then_some(events)
    })
    .await;
    let payloads: Vec<&str> = events
        .iter()
        .map(|call| {
            assert_eq!(call.issuer, bidder.account);
            assert_eq!(
                call.body["record"]["receipt"]["uri"],
                json!(held.receipt.uri)
            );
            call.body["record"]["payload"]["uri"]
                .as_str()
                .unwrap()
                .split('/')
                .nth(3)
                .unwrap()
        })
        .collect();
    assert_eq!(payloads, [started::NSID, on_network::NSID, guest_key::NSID]);
    assert_eq!(
        bidder.state().guest(&held.receipt.uri).unwrap().phase,
        GuestPhase::OnNetwork
    );
}
