//! The outbound policy against real servers on loopback: what a hostile peer can make the app
//! fetch, and what it costs to answer too much. A canary listener counts every connection made
//! to a place the policy forbids: it must stay at zero.

#![allow(clippy::unwrap_used)]

use std::net::IpAddr;
use std::pin::Pin;
use std::sync::Arc;
use swdesk_devnet::canary::Canary;

use axum::Router;
use axum::body::Body;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use swdesk_net::{BodyError, Dns, Limit, NetPolicy, Outbound, read_bytes};

/// A hostile peer on loopback: huge, endless and redirecting answers.
async fn peer(canary: u16) -> u16 {
    let app = Router::new()
        .route("/small", get(|| async { "{\"ok\":true}" }))
        .route("/huge", get(|| async { "x".repeat(10 * 1024 * 1024) }))
        .route(
            "/endless",
            get(|| async {
                let chunks = futures_util::stream::repeat_with(|| {
                    Ok::<_, std::io::Error>(vec![b'x'; 64 * 1024])
                });
                Response::new(Body::from_stream(chunks))
            }),
        )
        .route(
            "/to-canary",
            get(move || async move { redirect(&format!("http://127.0.0.1:{canary}/")) }),
        )
        .route(
            "/hop/{left}",
            get(
                |axum::extract::Path(left): axum::extract::Path<u32>| async move {
                    match left {
                        0 => "{\"ok\":true}".into_response(),
                        _ => redirect(&format!("/hop/{}", left - 1)).into_response(),
                    }
                },
            ),
        )
        .route(
            "/to-metadata",
            get(|| async { redirect("http://169.254.169.254/latest/meta-data/") }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, app).await });
    port
}

fn redirect(to: &str) -> impl IntoResponse + use<> {
    (StatusCode::FOUND, [(header::LOCATION, to.to_owned())])
}

fn sandbox(port: u16) -> Outbound {
    Outbound::new(NetPolicy::public().with_loopback_port(port))
}

/// Asserts that the peer's `/small` at `host` answers through the sandbox's client.
async fn small_answers(host: &str, port: u16) {
    let response = sandbox(port)
        .get(format!("http://{host}:{port}/small"))
        .unwrap()
        .send()
        .await
        .unwrap();
    assert_eq!(
        read_bytes(response, Limit::RECORD).await.unwrap(),
        b"{\"ok\":true}"
    );
}

#[tokio::test]
async fn a_configured_loopback_service_answers() {
    small_answers("localhost", peer(1).await).await;
}

#[tokio::test]
async fn an_answer_past_its_cap_is_refused_while_it_streams() {
    let port = peer(1).await;
    let outbound = sandbox(port);
    for path in ["huge", "endless"] {
        let response = outbound
            .get(format!("http://127.0.0.1:{port}/{path}"))
            .unwrap()
            .send()
            .await
            .unwrap();
        assert_eq!(
            read_bytes(response, Limit::RECORD).await,
            Err(BodyError::TooLarge(Limit::RECORD.0)),
            "{path}"
        );
    }
}

#[tokio::test]
async fn a_peer_cannot_name_a_place_the_configuration_does_not() {
    let canary = Canary::start().await.unwrap();
    let port = peer(canary.port).await;
    let outbound = sandbox(port);
    for url in [
        format!("http://127.0.0.1:{}/", canary.port),
        format!("http://localhost:{}/", canary.port),
        "http://169.254.169.254/latest/meta-data/".to_owned(),
        "https://[::ffff:127.0.0.1]/".to_owned(),
        "http://example.com/".to_owned(),
    ] {
        assert!(
            outbound.get(&url).is_err(),
            "{url} must be refused before a request"
        );
    }
    for path in ["to-canary", "to-metadata"] {
        let error = outbound
            .get(format!("http://127.0.0.1:{port}/{path}"))
            .unwrap()
            .send()
            .await
            .expect_err("a redirect to a forbidden place fails");
        assert!(error.is_redirect(), "{path}: {error:?}");
    }
    assert_eq!(canary.connections(), 0);
}

#[tokio::test]
async fn three_redirects_are_followed_and_a_fourth_is_refused() {
    let port = peer(1).await;
    let outbound = sandbox(port);
    let three = outbound
        .get(format!("http://127.0.0.1:{port}/hop/3"))
        .unwrap()
        .send()
        .await
        .unwrap();
    assert_eq!(three.url().path(), "/hop/0");
    assert_eq!(
        read_bytes(three, Limit::RECORD).await.unwrap(),
        b"{\"ok\":true}"
    );
    let four = outbound
        .get(format!("http://127.0.0.1:{port}/hop/4"))
        .unwrap()
        .send()
        .await
        .expect_err("a fourth redirect is not followed");
    assert!(four.is_redirect(), "{four:?}");
    assert!(
        format!("{four:?}").contains("more than 3 redirects"),
        "{four:?}"
    );
}

/// A DNS that answers every name with one address a peer chose.
#[derive(Debug)]
struct Rebinding(IpAddr);

impl Dns for Rebinding {
    fn lookup(
        &self,
        _name: &str,
    ) -> Pin<Box<dyn Future<Output = std::io::Result<Vec<IpAddr>>> + Send>> {
        let ip = self.0;
        Box::pin(async move { Ok(vec![ip]) })
    }
}

#[tokio::test]
async fn a_name_that_resolves_to_loopback_is_refused_at_connect_time() {
    let canary = Canary::start().await.unwrap();
    let policy = NetPolicy::public().with_loopback_port(canary.port);
    let outbound = Outbound::with_dns(policy, Arc::new(Rebinding("127.0.0.1".parse().unwrap())));
    let url = format!("https://rebind.example:{}/", canary.port);
    let error = outbound.get(&url).unwrap().send().await.unwrap_err();
    assert!(error.is_connect(), "{error:?}");
    let socket: url::Url = url.parse().unwrap();
    let refused = outbound.socket_addresses(&socket).await.unwrap_err();
    assert_eq!(refused.reason, "it resolves to a loopback address");
    assert_eq!(canary.connections(), 0);
}

/// Every variable a client may take a proxy from.
const PROXY_VARIABLES: [&str; 6] = [
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
];
/// Set in the child process of [`no_proxy_named_by_the_environment_is_used`]: the port of the
/// service it calls.
const PROXY_PROBE: &str = "SWDESK_NET_TEST_PROXY_PROBE";

/// A proxy would resolve names where the policy cannot check them: a process whose every
/// proxy variable names a loopback listener that counts connections calls its service
/// directly, and nothing reaches the listener. The environment is the child's own (this test
/// runs itself again with it), so no other test's is touched.
#[tokio::test]
async fn no_proxy_named_by_the_environment_is_used() {
    if let Ok(port) = std::env::var(PROXY_PROBE) {
        let port: u16 = port.parse().unwrap();
        for host in ["localhost", "127.0.0.1"] {
            small_answers(host, port).await;
        }
        return;
    }
    let proxy = Canary::start().await.unwrap();
    let port = peer(1).await;
    let mut child = tokio::process::Command::new(std::env::current_exe().unwrap());
    child
        .args(["--exact", "no_proxy_named_by_the_environment_is_used"])
        .env(PROXY_PROBE, port.to_string())
        .env_remove("NO_PROXY")
        .env_remove("no_proxy");
    for variable in PROXY_VARIABLES {
        child.env(variable, format!("http://127.0.0.1:{}", proxy.port));
    }
    let output = child.output().await.unwrap();
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && said.contains("1 passed"),
        "the child's calls failed: {said}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(proxy.connections(), 0, "nothing went through the proxy");
}

/// A listener whose queue of connections is full: the kernel drops every further SYN, so a
/// connection to it never opens. Keep the listener and the queued connection alive.
async fn full_listener() -> (tokio::net::TcpListener, Vec<tokio::net::TcpStream>, u16) {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let address = socket.local_addr().unwrap();
    let listener = socket.listen(0).unwrap();
    let mut queued = Vec::new();
    for _ in 0..2 {
        let filler = tokio::net::TcpSocket::new_v4().unwrap().connect(address);
        let wait = std::time::Duration::from_millis(500);
        if let Ok(Ok(stream)) = tokio::time::timeout(wait, filler).await {
            queued.push(stream);
        }
    }
    assert!(!queued.is_empty(), "the queue holds one connection");
    (listener, queued, address.port())
}

/// On paused time: a connection that never opens fails at the 10 s connect timeout, well
/// before the 60 s total.
#[tokio::test(start_paused = true)]
async fn a_connection_that_never_opens_fails_at_the_connect_timeout() {
    let (_listener, _queued, port) = full_listener().await;
    let started = tokio::time::Instant::now();
    let call = sandbox(port)
        .get(format!("http://127.0.0.1:{port}/"))
        .unwrap()
        .send();
    let error = call.await.expect_err("nothing answers");
    let waited = started.elapsed();
    assert!(error.is_connect() && error.is_timeout(), "{error:?}");
    assert!(
        waited >= swdesk_net::outbound::CONNECT_TIMEOUT
            && waited < swdesk_net::outbound::CONNECT_TIMEOUT + std::time::Duration::from_secs(1),
        "{waited:?}"
    );
}

/// On paused time, over a real loopback socket: a server that takes the request and never
/// answers ends the call at the 60 s total timeout, not before.
#[tokio::test(start_paused = true)]
async fn a_call_never_answered_ends_at_the_total_timeout() {
    let port = swdesk_devnet::canary::silent().unwrap();
    let started = tokio::time::Instant::now();
    let call = sandbox(port)
        .get(format!("http://127.0.0.1:{port}/"))
        .unwrap()
        .send();
    let outcome = tokio::time::timeout(10 * swdesk_net::outbound::TOTAL_TIMEOUT, call).await;
    let waited = started.elapsed();
    let error = outcome
        .unwrap_or_else(|_| panic!("still waiting after {waited:?}"))
        .expect_err("nothing answers");
    assert!(error.is_timeout() && !error.is_connect(), "{error:?}");
    assert!(
        waited >= swdesk_net::outbound::TOTAL_TIMEOUT
            && waited < swdesk_net::outbound::TOTAL_TIMEOUT + std::time::Duration::from_secs(1),
        "{waited:?}"
    );
}
