//! The sending side of service auth: every call to a bidder carries a token the owner's PDS
//! minted for exactly that bidder's service DID (`aud`) and that method (`lxm`), whichever
//! way the service is named (our `#temp_market`, the public implementation's
//! `#pdr_temp_market`, or a plain endpoint URL). The bidder here is a `did:web` on loopback,
//! over real HTTP and the real resolver; the token source records what it was asked to mint
//! and the bidder records the token it was sent, so the two are matched end to end. That the
//! PDS mints what is asked and a bidder refuses a token for another audience is tried on the
//! sandbox (`a_token_for_another_audience_or_method_or_none_is_refused`).

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::http::HeaderMap;
use axum::routing::{get, post};
use serde_json::json;
use swdesk_atproto::identity::{IdentityConfig, Resolver};
use swdesk_atproto::oauth::Secret;
use swdesk_auction::compute::StrongRef;
use swdesk_lexicon::com::publicdomainrelay::temp::market::submit_rfp;
use swdesk_market::{HttpPeers, OfferingSource, PeerError, Peers, ServiceTokens};
use swdesk_net::{NetPolicy, Outbound};
use url::Url;

/// A token source that mints `token:<aud>:<lxm>` and remembers each `(aud, lxm)` asked.
#[derive(Debug, Clone, Default)]
struct Minted(Arc<Mutex<Vec<(String, String)>>>);

impl ServiceTokens for Minted {
    async fn token(&self, aud: &str, lxm: &str) -> Result<Secret, PeerError> {
        self.0
            .lock()
            .unwrap()
            .push((aud.to_owned(), lxm.to_owned()));
        Ok(Secret::new(format!("token:{aud}:{lxm}")))
    }
}

/// A bidder at `did:web:localhost%3A<port>` whose `#temp_market` is itself; it answers every
/// procedure `{"ok": true}` and keeps the bearer token of each call, with the method called.
async fn bidder() -> (String, u16, Arc<Mutex<Vec<(String, String)>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let did = format!("did:web:localhost%3A{port}");
    let document = json!({"id": did, "service": [{"id": "#temp_market", "type": "TempMarket",
        "serviceEndpoint": format!("http://localhost:{port}")}]});
    let sent = Arc::new(Mutex::new(Vec::new()));
    let kept = Arc::clone(&sent);
    let app = Router::new()
        .route(
            "/.well-known/did.json",
            get(move || async move { axum::Json(document) }),
        )
        .route(
            "/xrpc/{nsid}",
            post(
                move |axum::extract::Path(nsid): axum::extract::Path<String>,
                      headers: HeaderMap| async move {
                    let bearer = headers["authorization"].to_str().unwrap_or_default();
                    let token = bearer.trim_start_matches("Bearer ").to_owned();
                    kept.lock().unwrap().push((token, nsid));
                    axum::Json(json!({"ok": true}))
                },
            ),
        );
    tokio::spawn(async move { axum::serve(listener, app).await });
    (did, port, sent)
}

#[tokio::test]
async fn each_call_carries_a_token_minted_for_the_bidders_service_did_and_the_method() {
    let (did, port, sent) = bidder().await;
    let unused = Url::parse("http://localhost:1").unwrap();
    let identity = IdentityConfig::sandbox(unused.clone(), unused);
    let policy = NetPolicy::public().with_loopback_port(port);
    let resolver = Resolver::new(identity, Outbound::new(policy));
    let minted = Minted::default();
    let peers = HttpPeers::new(resolver, minted.clone(), OfferingSource::Repos(Vec::new()));
    let rfp = StrongRef {
        uri: "at://did:plc:owner/com.publicdomainrelay.temp.market.rfp/3lbjpbyznfc2f".to_owned(),
        cid: "bafyreie5737gdxlw5i64vzichcalba3z2v5n6icifvx5xytvske7mr3hpm".to_owned(),
    };
    let services = [
        format!("{did}#temp_market"),
        format!("{did}#pdr_temp_market"),
        format!("http://localhost:{port}"),
    ];
    for service in &services {
        let answer = peers.submit_rfp(service, &rfp).await;
        assert_eq!(answer, Ok(None), "{service}");
    }
    let asked = (did.clone(), submit_rfp::NSID.to_owned());
    assert_eq!(*minted.0.lock().unwrap(), vec![asked; 3]);
    let token = format!("token:{did}:{}", submit_rfp::NSID);
    let carried = (token, submit_rfp::NSID.to_owned());
    assert_eq!(*sent.lock().unwrap(), vec![carried; 3]);
}
