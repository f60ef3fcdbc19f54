//! A hostile bidder on loopback against the requester's side of the market ([`HttpPeers`]):
//! what it answers is bounded, what it names is called only when the owner's network policy
//! allows it, and what it says reaches an error only as one cut line. A canary listener counts
//! every connection to a place the policy forbids: it must stay at zero. A stranger's `did:web`
//! whose document lists a key does not bind that key to an author (`keys::binding`) unless the
//! author's own document names the stranger's host as one of its services.
//!
//! The same hostile bidder, through a whole requester flow, is in `ends.rs`: every contract
//! ends.
//!
//! These run on real HTTP and the real resolver (the bidder's `did:web` document is served by
//! the hostile peer itself); service-auth tokens are not what is under test, so a fixed token
//! stands in for the PDS's.

use swdesk_devnet::canary::Canary;

use axum::Router;
use axum::body::Body;
use axum::extract::Path;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};
use swdesk_atproto::attestation::{AttestationKey, Curve, SignatureCheck};
use swdesk_atproto::identity::{IdentityConfig, Resolver};
use swdesk_atproto::oauth::Secret;
use swdesk_auction::compute::StrongRef;
use swdesk_kernel::repo::memory::MemoryRepo;
use swdesk_market::keys::{self, KeyBinding};
use swdesk_market::peers::PEER_WORDS_MAX;
use swdesk_market::{HttpPeers, OfferingSource, PeerError, Peers, ServiceTokens};
use swdesk_net::{NetPolicy, Outbound};
use url::Url;

/// A token that is never checked by the hostile peer.
#[derive(Debug)]
pub(crate) struct FixedToken;

impl ServiceTokens for FixedToken {
    async fn token(&self, _aud: &str, _lxm: &str) -> Result<Secret, PeerError> {
        Ok(Secret::new("not-a-real-token"))
    }
}

/// The hostile bidder: its `did:web` names one service per misbehaviour
/// (`#<mode>` → `http://localhost:<port>/<mode>`), and `#canary` points at the canary.
pub(crate) struct Hostile {
    port: u16,
    did: String,
}

impl Hostile {
    pub(crate) async fn start(canary: u16) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let did = format!("did:web:localhost%3A{port}");
        let document = did_document(&did, port, canary);
        let app = Router::new()
            .route(
                "/.well-known/did.json",
                get(move || async move { axum::Json(document) }),
            )
            .route(
                "/{mode}/xrpc/{nsid}",
                post(
                    move |Path((mode, _nsid)): Path<(String, String)>| async move {
                        misbehave(&mode, canary)
                    },
                ),
            );
        tokio::spawn(async move { axum::serve(listener, app).await });
        Self { port, did }
    }

    /// The loopback port it listens on.
    pub(crate) fn port(&self) -> u16 {
        self.port
    }

    pub(crate) fn service(&self, mode: &str) -> String {
        format!("{}#{mode}", self.did)
    }

    /// The requester's peers, on a sandbox whose configuration names this bidder only.
    pub(crate) fn peers(&self) -> HttpPeers<FixedToken> {
        peers_reaching(&[self.port])
    }
}

/// The requester's peers, on a sandbox whose configuration names `ports` only.
fn peers_reaching(ports: &[u16]) -> HttpPeers<FixedToken> {
    let unused = Url::parse("http://localhost:1").unwrap();
    let identity = IdentityConfig::sandbox(unused.clone(), unused);
    let policy = ports.iter().fold(NetPolicy::public(), |policy, port| {
        policy.with_loopback_port(*port)
    });
    let resolver = Resolver::new(identity, Outbound::new(policy));
    HttpPeers::new(resolver, FixedToken, OfferingSource::Repos(Vec::new()))
}

/// A `did:web` on loopback serving the document `document(did, port)` makes; its DID and port.
async fn serve_document(document: impl FnOnce(&str, u16) -> Value) -> (String, u16) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let did = format!("did:web:localhost%3A{port}");
    let document = document(&did, port);
    let app = Router::new().route(
        "/.well-known/did.json",
        get(move || async move { axum::Json(document) }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    (did, port)
}

const MODES: [&str; 8] = [
    "phantom",
    "trickle",
    "huge",
    "endless",
    "shout",
    "roar",
    "to-metadata",
    "to-canary",
];

fn did_document(did: &str, port: u16, canary: u16) -> Value {
    let mut services: Vec<Value> = MODES
        .iter()
        .map(|mode| {
            json!({"id": format!("#{mode}"), "type": "TempMarket",
                "serviceEndpoint": format!("http://localhost:{port}/{mode}")})
        })
        .collect();
    services.push(json!({"id": "#canary", "type": "TempMarket",
        "serviceEndpoint": format!("http://127.0.0.1:{canary}")}));
    json!({"id": did, "service": services})
}

fn misbehave(mode: &str, canary: u16) -> Response {
    match mode {
        "huge" => "x".repeat(10 * 1024 * 1024).into_response(),
        "endless" => {
            let chunks = futures_util::stream::repeat_with(|| {
                Ok::<_, std::io::Error>(vec![b' '; 64 * 1024])
            });
            Response::new(Body::from_stream(chunks))
        }
        "shout" | "roar" => {
            let length = if mode == "shout" {
                10 * 1024
            } else {
                100 * 1024
            };
            let message = format!("refused\n\u{202E}{}", "A".repeat(length));
            let body = json!({"error": "Nope", "message": message});
            (StatusCode::BAD_REQUEST, axum::Json(body)).into_response()
        }
        "phantom" => axum::Json(phantom_receipt()).into_response(),
        "trickle" => Response::new(Body::from_stream(trickle())),
        "to-metadata" => redirect("http://169.254.169.254/latest/meta-data/"),
        _ => redirect(&format!("http://127.0.0.1:{canary}/xrpc/x")),
    }
}

/// A `submitAccept` answer naming a receipt in a repo that holds none: it never appears.
pub(crate) fn phantom_receipt() -> Value {
    json!({
        "id": "3lphantom",
        "uri": "at://did:plc:phantom/com.publicdomainrelay.temp.market.receipt/3lphantom",
        "cid": "bafyreie5737gdxlw5i64vzichcalba3z2v5n6icifvx5xytvske7mr3hpm",
        "submitEvent": "did:plc:phantom#compute_event",
    })
}

/// An answer of one byte a second, without end.
fn trickle() -> impl futures_util::Stream<Item = Result<Vec<u8>, std::io::Error>> {
    futures_util::stream::unfold((), |()| async {
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        Some((Ok(b" ".to_vec()), ()))
    })
}

fn redirect(to: &str) -> Response {
    (
        StatusCode::TEMPORARY_REDIRECT,
        [(header::LOCATION, to.to_owned())],
    )
        .into_response()
}

fn our_rfp() -> StrongRef {
    StrongRef {
        uri: "at://did:plc:owner/com.publicdomainrelay.temp.market.rfp/3lbjpbyznfc2f".to_owned(),
        cid: "bafyreie5737gdxlw5i64vzichcalba3z2v5n6icifvx5xytvske7mr3hpm".to_owned(),
    }
}

async fn refusal_of(peers: &HttpPeers<FixedToken>, service: &str) -> PeerError {
    peers
        .submit_rfp(service, &our_rfp())
        .await
        .expect_err("a hostile answer is refused")
}

#[tokio::test]
async fn an_enormous_or_endless_answer_is_refused_at_its_cap_and_not_retried() {
    let canary = Canary::start().await.unwrap();
    let hostile = Hostile::start(canary.port).await;
    let peers = hostile.peers();
    for mode in ["huge", "endless"] {
        let refused = refusal_of(&peers, &hostile.service(mode)).await;
        assert!(
            refused.message.contains("larger than"),
            "{mode}: {refused:?}"
        );
        assert!(!refused.transient, "{mode}: retrying would read it again");
    }
}

#[tokio::test]
async fn a_shouted_error_reaches_the_owner_as_one_cut_line() {
    let canary = Canary::start().await.unwrap();
    let hostile = Hostile::start(canary.port).await;
    let peers = hostile.peers();
    let refused = refusal_of(&peers, &hostile.service("shout")).await;
    assert!(
        refused.message.len() < 3 * PEER_WORDS_MAX,
        "{}",
        refused.message.len()
    );
    assert!(
        refused.message.contains("Nope refused A"),
        "{}",
        refused.message
    );
    assert!(refused.message.ends_with(swdesk_lexicon::text::CUT_MARK));
    assert!(!refused.message.contains(['\n', '\u{202E}']));
    let roared = refusal_of(&peers, &hostile.service("roar")).await;
    assert_eq!(
        roared.message,
        "com.publicdomainrelay.temp.market.submitRfp answered 400 Bad Request (no readable error)"
    );
}

#[tokio::test]
async fn a_peer_cannot_make_the_requester_call_a_place_the_owner_did_not_name() {
    let canary = Canary::start().await.unwrap();
    let hostile = Hostile::start(canary.port).await;
    let peers = hostile.peers();
    for mode in ["to-metadata", "to-canary", "canary"] {
        let refused = refusal_of(&peers, &hostile.service(mode)).await;
        assert!(!refused.transient, "{mode}: {refused:?}");
    }
    let accept = our_rfp();
    for grant_url in [
        format!("http://127.0.0.1:{}/grant", canary.port),
        format!("http://localhost:{}/grant", canary.port),
        format!("https://localhost:{}/grant", canary.port),
        "http://169.254.169.254/latest/meta-data".to_owned(),
        "http://[::ffff:169.254.169.254]/".to_owned(),
        "http://10.0.0.1/grant".to_owned(),
        "file:///etc/passwd".to_owned(),
    ] {
        let refused = peers
            .fetch_grant(&grant_url, &accept)
            .await
            .expect_err("a grant URL the policy forbids is not fetched");
        assert!(
            refused.message.contains("not called"),
            "{grant_url}: {refused:?}"
        );
        assert!(!refused.transient, "{grant_url}");
    }
    assert_eq!(canary.connections(), 0, "no connection reached the canary");
}

/// A relay that lists strangers without end (500 a page, always another cursor): the requester
/// stops paging once it has the most repos an auction reads, so the relay is asked once, not
/// fifty times for 25,000 repos.
#[tokio::test]
async fn a_relay_listing_strangers_without_end_is_read_only_until_the_cap() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use swdesk_auction::bidders::MAX_OFFERING_REPOS;
    let pages = std::sync::Arc::new(AtomicUsize::new(0));
    let served = pages.clone();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let app = Router::new().route(
        "/xrpc/com.atproto.sync.listReposByCollection",
        get(move || {
            let page = served.fetch_add(1, Ordering::SeqCst);
            async move {
                let repos: Vec<Value> = (0..500)
                    .map(|n| json!({"did": format!("did:plc:crowd{page}x{n}")}))
                    .collect();
                axum::Json(json!({"repos": repos, "cursor": format!("page{}", page + 1)}))
            }
        }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    let relay = Url::parse(&format!("http://localhost:{port}")).unwrap();
    let unused = Url::parse("http://localhost:1").unwrap();
    let identity = IdentityConfig::sandbox(unused.clone(), unused);
    let policy = NetPolicy::public().with_loopback_port(port);
    let resolver = Resolver::new(identity, Outbound::new(policy));
    let peers = HttpPeers::new(resolver, FixedToken, OfferingSource::Relay(relay));

    let repos = peers
        .repos_with("com.publicdomainrelay.temp.market.offering")
        .await
        .unwrap();
    assert!(repos.len() >= MAX_OFFERING_REPOS && repos.len() <= 500);
    assert_eq!(pages.load(Ordering::SeqCst), 1, "one page asked for");
}

/// How `key`, signing a record of `author`'s with `issuer` named, binds through real DID
/// documents (the owner's repo, in memory, publishes nothing).
async fn binding_of(ports: &[u16], author: &str, key: &str, issuer: &str) -> Option<KeyBinding> {
    let signer = SignatureCheck {
        index: 0,
        key: key.to_owned(),
        issuer: Some(issuer.to_owned()),
        result: Ok(()),
    };
    let repo = MemoryRepo::new("did:plc:owner");
    keys::binding(&repo, &peers_reaching(ports), author, &signer)
        .await
        .unwrap()
}

#[tokio::test]
async fn a_strangers_did_web_vouching_for_a_key_does_not_bind_it_to_an_author() {
    let key = AttestationKey::generate(Curve::K256).did_key();
    let multibase = key.trim_start_matches("did:key:").to_owned();
    let (stranger, stranger_port) = serve_document(|did, _| {
        json!({"id": did, "verificationMethod": [{"id": format!("{did}#attestation"),
            "type": "Multikey", "controller": did, "publicKeyMultibase": multibase}]})
    })
    .await;
    let services = |did: &str, endpoint: String| {
        json!({"id": did, "service": [{"id": "#temp_market", "type": "TempMarket",
            "serviceEndpoint": endpoint}]})
    };
    let (author, author_port) =
        serve_document(|did, port| services(did, format!("http://localhost:{port}"))).await;
    let ports = [stranger_port, author_port];
    assert_eq!(binding_of(&ports, &author, &key, &stranger).await, None);

    let (tied, tied_port) =
        serve_document(|did, _| services(did, format!("http://localhost:{stranger_port}"))).await;
    let ports = [stranger_port, tied_port];
    assert_eq!(
        binding_of(&ports, &tied, &key, &stranger).await,
        Some(KeyBinding::IssuerDocument {
            key: key.clone(),
            issuer: stranger.clone()
        }),
        "the author's own document names the issuer's host"
    );
}
