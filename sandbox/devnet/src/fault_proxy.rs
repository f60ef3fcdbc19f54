//! A loopback HTTP proxy that stands on the sandbox PDS's public port, in front of the real
//! PDS (started with [`crate::SandboxPds::start_listening_on`]), and injects faults on a
//! schedule: the next N requests to a path answer a status (429 with `Retry-After`, 503, ...)
//! instead of reaching the PDS. Every other request is forwarded as it came (method, path,
//! headers, body; redirects are passed back, not followed), so OAuth, DPoP proofs (which name
//! the public URL) and records work as against the PDS itself. A WebSocket upgrade (the repo's
//! `subscribeRepos` stream) is passed through to the PDS whole, frame by frame, so a client
//! follows the repo live through the proxy as it would the PDS.
//!
//! It can also hold a request for ever, before or after the PDS carried it out, so a test can
//! kill the client at that very step of a write.
//!
//! Test support, plainly: the PDS behind it is real; only the faults are made up here. It
//! counts what it forwarded and what it injected, with the time of each request, so a test
//! can check that a client waited as long as it was asked to.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::ws::{self, WebSocket, WebSocketUpgrade};
use axum::extract::{FromRequestParts as _, Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::Response;
use futures_util::{SinkExt as _, StreamExt as _};
use tokio_tungstenite::tungstenite;

/// The largest request body forwarded.
const BODY_LIMIT: usize = 64 * 1024 * 1024;

/// Faults to inject: the next `times` requests whose path starts with `path` answer `status`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    /// The path prefix (`/xrpc/com.atproto.repo.putRecord`, `/oauth/token`).
    pub path: String,
    /// The status answered instead.
    pub status: u16,
    /// The `Retry-After` header sent with it, if any.
    pub retry_after: Option<String>,
    /// How many requests it answers.
    pub times: usize,
}

/// Where a held request stops: before the PDS sees it, or after it answered (the answer never
/// reaches the client).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hold {
    /// The request is kept here; the PDS never sees it.
    BeforeThePds,
    /// The PDS carries it out; its answer is kept here.
    AfterThePds,
}

/// A request to hold: its path prefix, a text its body must contain, where to hold it.
#[derive(Debug, Clone)]
struct HoldRule {
    path: String,
    body: String,
    at: Hold,
}

/// One request the proxy saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    /// Its path.
    pub path: String,
    /// When it arrived.
    pub at: Instant,
    /// The `rkey` its JSON body names, if any (which record a write is about).
    pub rkey: Option<String>,
    /// The status injected, or `None` when it was forwarded.
    pub injected: Option<u16>,
    /// The status the upstream answered a forwarded request with, once it did.
    pub answered: Option<u16>,
}

#[derive(Debug)]
struct Shared {
    upstream: String,
    http: reqwest::Client,
    faults: Mutex<Vec<Fault>>,
    holds: Mutex<Vec<HoldRule>>,
    held: tokio::sync::watch::Sender<usize>,
    seen: Mutex<Vec<Seen>>,
    /// Faults injected since the start, whatever was forgotten of `seen`.
    injected: std::sync::atomic::AtomicUsize,
}

/// The running proxy; it stops when dropped.
#[derive(Debug)]
pub struct FaultProxy {
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl FaultProxy {
    /// Listens on `127.0.0.1:<public_port>` and forwards to `http://localhost:<upstream_port>`.
    #[allow(
        clippy::disallowed_methods,
        reason = "test support forwarding to the sandbox PDS on loopback"
    )]
    pub async fn start(public_port: u16, upstream_port: u16) -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", public_port)).await?;
        // Test support on loopback only: it forwards to the sandbox PDS the test started, never
        // to a peer, so it is a plain client rather than the app's outbound policy.
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .build()
            .map_err(std::io::Error::other)?;
        let shared = Arc::new(Shared {
            upstream: format!("http://localhost:{upstream_port}"),
            http,
            faults: Mutex::new(Vec::new()),
            holds: Mutex::new(Vec::new()),
            held: tokio::sync::watch::Sender::new(0),
            seen: Mutex::new(Vec::new()),
            injected: std::sync::atomic::AtomicUsize::new(0),
        });
        let app = axum::Router::new()
            .fallback(forward)
            .with_state(Arc::clone(&shared));
        let task = tokio::spawn(async move {
            let _stopped = axum::serve(listener, app).await;
        });
        Ok(Self { shared, task })
    }

    /// Schedules `fault` (after those already scheduled for the same path).
    pub fn inject(&self, fault: Fault) {
        lock(&self.shared.faults).push(fault);
    }

    /// Holds the next request whose path starts with `path` and whose body contains `body`
    /// for ever, where `at` says: the client waits for an answer that never comes (a test then
    /// kills it).
    pub fn hold_next(&self, path: &str, body: &str, at: Hold) {
        lock(&self.shared.holds).push(HoldRule {
            path: path.to_owned(),
            body: body.to_owned(),
            at,
        });
    }

    /// Waits until `count` requests in all have been held.
    pub async fn held(&self, count: usize) {
        let mut held = self.shared.held.subscribe();
        let _changed = held.wait_for(|held| *held >= count).await;
    }

    /// Every request seen so far whose path starts with `path`, in arrival order.
    pub fn seen(&self, path: &str) -> Vec<Seen> {
        lock(&self.shared.seen)
            .iter()
            .filter(|seen| seen.path.starts_with(path))
            .cloned()
            .collect()
    }

    /// Drops every fault scheduled and not yet met (a test stops the faults before it waits
    /// for the app to settle).
    pub fn clear(&self) {
        lock(&self.shared.faults).clear();
    }

    /// The PDS behind the proxy, for a test's own reads that no fault may touch.
    pub fn upstream(&self) -> &str {
        &self.shared.upstream
    }

    /// How many faults were injected so far.
    pub fn injected(&self) -> usize {
        self.shared
            .injected
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Forgets the requests seen so far (their count of injected faults stays): a long run
    /// that never reads them back (the soak) keeps its own memory flat.
    pub fn forget_seen(&self) {
        lock(&self.shared.seen).clear();
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn forward(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let (mut parts, body) = request.into_parts();
    if parts.headers.contains_key(axum::http::header::UPGRADE) {
        return match WebSocketUpgrade::from_request_parts(&mut parts, &()).await {
            Ok(upgrade) => pass_stream(&shared, &parts, upgrade).await,
            Err(refused) => axum::response::IntoResponse::into_response(refused),
        };
    }
    let Ok(body) = axum::body::to_bytes(body, BODY_LIMIT).await else {
        return status(StatusCode::PAYLOAD_TOO_LARGE, "too large".to_owned());
    };
    let path = parts.uri.path().to_owned();
    let rkey = serde_json::from_slice::<serde_json::Value>(&body)
        .ok()
        .and_then(|json| json["rkey"].as_str().map(str::to_owned));
    let hold = take_hold(&shared, &path, &body);
    let fault = hold.is_none().then(|| take_fault(&shared, &path)).flatten();
    if fault.is_some() {
        shared
            .injected
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
    let at = Instant::now();
    lock(&shared.seen).push(Seen {
        path,
        at,
        rkey,
        injected: fault.as_ref().map(|fault| fault.status),
        answered: None,
    });
    if let Some(hold) = hold {
        if hold == Hold::AfterThePds {
            let _carried_out = upstream(&shared, parts, body).await;
        }
        shared.held.send_modify(|held| *held += 1);
        return std::future::pending().await;
    }
    match fault {
        Some(fault) => injected(&fault),
        None => {
            let answer = upstream(&shared, parts, body)
                .await
                .unwrap_or_else(|why| status(StatusCode::BAD_GATEWAY, why));
            let mut seen = lock(&shared.seen);
            if let Some(this) = seen.iter_mut().rev().find(|seen| seen.at == at) {
                this.answered = Some(answer.status().as_u16());
            }
            answer
        }
    }
}

/// Opens the same stream on the PDS and, once it answered, relays every frame both ways
/// until either side closes; a PDS that refuses the stream has its refusal passed back.
#[allow(
    clippy::disallowed_methods,
    reason = "test support opening the sandbox PDS's stream on loopback"
)]
async fn pass_stream(
    shared: &Shared,
    parts: &axum::http::request::Parts,
    upgrade: WebSocketUpgrade,
) -> Response {
    let path_and_query = parts.uri.path_and_query().map_or("/", |pq| pq.as_str());
    let url = format!("{}{path_and_query}", shared.upstream).replacen("http", "ws", 1);
    lock(&shared.seen).push(Seen {
        path: parts.uri.path().to_owned(),
        at: Instant::now(),
        rkey: None,
        injected: None,
        answered: None,
    });
    match tokio_tungstenite::connect_async(url).await {
        Ok((pds, _)) => upgrade.on_upgrade(|client| relay(client, pds)),
        Err(tungstenite::Error::Http(answer)) => {
            let code = answer.status();
            let body = answer.into_body().unwrap_or_default();
            let mut response = Response::new(Body::from(body));
            *response.status_mut() = code;
            response
        }
        Err(why) => status(StatusCode::BAD_GATEWAY, why.to_string()),
    }
}

/// Relays frames between the client's socket and the PDS's until either closes.
async fn relay(
    mut client: WebSocket,
    mut pds: tokio_tungstenite::WebSocketStream<
        tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>,
    >,
) {
    loop {
        tokio::select! {
            from_client = client.recv() => {
                let Some(Ok(message)) = from_client else { break };
                if pds.send(to_pds(message)).await.is_err() {
                    break;
                }
            }
            from_pds = pds.next() => {
                let Some(Ok(message)) = from_pds else { break };
                let Some(message) = to_client(message) else { continue };
                if client.send(message).await.is_err() {
                    break;
                }
            }
        }
    }
    let _closed = pds.close(None).await;
}

fn to_pds(message: ws::Message) -> tungstenite::Message {
    match message {
        ws::Message::Text(text) => tungstenite::Message::text(text.as_str()),
        ws::Message::Binary(bytes) => tungstenite::Message::Binary(bytes),
        ws::Message::Ping(bytes) => tungstenite::Message::Ping(bytes),
        ws::Message::Pong(bytes) => tungstenite::Message::Pong(bytes),
        ws::Message::Close(_) => tungstenite::Message::Close(None),
    }
}

fn to_client(message: tungstenite::Message) -> Option<ws::Message> {
    Some(match message {
        tungstenite::Message::Text(text) => ws::Message::Text(text.as_str().into()),
        tungstenite::Message::Binary(bytes) => ws::Message::Binary(bytes),
        tungstenite::Message::Ping(bytes) => ws::Message::Ping(bytes),
        tungstenite::Message::Pong(bytes) => ws::Message::Pong(bytes),
        tungstenite::Message::Close(_) => ws::Message::Close(None),
        tungstenite::Message::Frame(_) => return None,
    })
}

/// The hold of a request to `path` with `body`, taken once.
fn take_hold(shared: &Shared, path: &str, body: &[u8]) -> Option<Hold> {
    let text = String::from_utf8_lossy(body);
    let mut holds = lock(&shared.holds);
    let index = holds
        .iter()
        .position(|rule| path.starts_with(rule.path.as_str()) && text.contains(&rule.body))?;
    Some(holds.remove(index).at)
}

/// The fault that answers a request to `path` now, counted down.
fn take_fault(shared: &Shared, path: &str) -> Option<Fault> {
    let mut faults = lock(&shared.faults);
    let index = faults
        .iter()
        .position(|fault| path.starts_with(&fault.path) && fault.times > 0)?;
    let fault = faults.get_mut(index)?;
    fault.times -= 1;
    let answered = fault.clone();
    if fault.times == 0 {
        faults.remove(index);
    }
    Some(answered)
}

fn injected(fault: &Fault) -> Response {
    let code = StatusCode::from_u16(fault.status).unwrap_or(StatusCode::SERVICE_UNAVAILABLE);
    let body =
        serde_json::json!({"error": "InjectedFault", "message": "a fault the test injected"});
    let mut response = status(code, body.to_string());
    response.headers_mut().insert(
        axum::http::header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    if let Some(wait) = fault.retry_after.as_deref().and_then(|w| w.parse().ok()) {
        response
            .headers_mut()
            .insert(axum::http::header::RETRY_AFTER, wait);
    }
    response
}

async fn upstream(
    shared: &Shared,
    parts: axum::http::request::Parts,
    body: Bytes,
) -> Result<Response, String> {
    let path_and_query = parts.uri.path_and_query().map_or("/", |pq| pq.as_str());
    let mut headers = parts.headers;
    headers.remove(axum::http::header::HOST);
    let answer = shared
        .http
        .request(parts.method, format!("{}{path_and_query}", shared.upstream))
        .headers(headers)
        .body(body)
        .send()
        .await
        .map_err(|error| error.to_string())?;
    let code = answer.status();
    let headers = answer.headers().clone();
    let bytes: Bytes = answer.bytes().await.map_err(|error| error.to_string())?;
    let mut response = Response::new(Body::from(bytes));
    *response.status_mut() = code;
    copy_headers(&headers, response.headers_mut());
    Ok(response)
}

/// The answer's headers but those that describe the hop, not the content.
fn copy_headers(from: &HeaderMap, to: &mut HeaderMap) {
    const HOP: [&str; 4] = [
        "connection",
        "transfer-encoding",
        "keep-alive",
        "content-length",
    ];
    for (name, value) in from {
        if !HOP.contains(&name.as_str()) {
            to.append(HeaderName::clone(name), value.clone());
        }
    }
}

fn status(code: StatusCode, body: String) -> Response {
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = code;
    response
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The time between consecutive requests in `seen`.
pub fn gaps(seen: &[Seen]) -> Vec<Duration> {
    seen.windows(2)
        .filter_map(|pair| match pair {
            [first, second] => Some(second.at.duration_since(first.at)),
            _ => None,
        })
        .collect()
}
