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

#[tokio::test]
async fn a_configured_loopback_service_answers() {
    let port = peer(1).await;
    let response = sandbox(port)
        .get(format!("http://localhost:{port}/small"))
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
