//! `subscribeClusters` as a feed that keeps itself connected. Each connection sends the
//! snapshot (every current `#cluster`, `#member`, `#nodeClaim`) then `#info SnapshotComplete`,
//! then changes; the feed hands the snapshot over whole ([`FeedEvent::Snapshot`], which
//! replaces whatever the consumer showed) and each change after it ([`FeedEvent::Change`]).
//! When the connection breaks, the feed says so ([`FeedEvent::Disconnected`]), waits (core's
//! jittered backoff from [`INITIAL_BACKOFF`], doubling to [`MAX_BACKOFF`], reset by a
//! delivered snapshot),
//! reconnects with a fresh token and delivers a fresh snapshot. A refusal that retrying cannot
//! fix (a bad token, `ClusterNotFound`) ends the feed with [`FeedEvent::Failed`].
//!
//! A gateway is not trusted with the feed's size or pace: each connection is held to
//! [`FeedLimits`] (`bounds.rs`: the snapshot's frames, bytes and deadline, a ping and an idle
//! timeout, clusters and each one's members and nodes) and each frame is cleaned before it is
//! kept (`clean.rs`). A connection that passes a bound is closed, the [`Breach`] named in the
//! `Disconnected` reason, and the backoff is not reset by it.
//!
//! Frames are atproto event-stream frames: a DAG-CBOR header `{op, t}` then a DAG-CBOR body;
//! `op: -1` is an error `{error, message}`.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt as _;
use serde::Deserialize;
use serde_json::Map;
use swdesk_atproto::retry::Backoff;
use swdesk_atproto::websocket::{Socket, close_for_policy, handshake, read_failure, send_briefly};
use swdesk_lexicon::com::publicdomainrelay::temp::cluster::subscribe_clusters::{
    InfoName, Message, NSID,
};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::{self, Message as WsMessage};

use crate::connection::{Connection, refusal};
pub use bounds::{Breach, FeedLimits};
use bounds::{Tally, Watch};
pub use clean::cluster_view;

mod bounds;
mod clean;
use crate::error::{ErrorName, GatewayError};

/// The first wait before reconnecting.
pub const INITIAL_BACKOFF: Duration = Duration::from_millis(200);
/// The longest wait before reconnecting.
pub const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// What a feed delivers.
#[allow(
    clippy::large_enum_variant,
    reason = "each event moves once through the channel; a Box would only make matching on a change awkward"
)]
#[derive(Debug, Clone, PartialEq)]
pub enum FeedEvent {
    /// Everything current (after each connect): replaces what was shown.
    Snapshot(Vec<Message>),
    /// One change after the snapshot.
    Change(Message),
    /// The connection broke; the feed reconnects after `retry_in`.
    Disconnected {
        /// Why (as text: the error may be transient).
        reason: String,
        /// When it tries again.
        retry_in: Duration,
    },
    /// The gateway refused in a way retrying cannot fix; the feed ends.
    Failed(String, Option<ErrorName>),
}

/// A `subscribeClusters` feed; dropping it closes the connection.
#[derive(Debug)]
pub struct ClusterFeed {
    events: mpsc::Receiver<FeedEvent>,
    task: Option<JoinHandle<()>>,
}

impl Drop for ClusterFeed {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

impl ClusterFeed {
    /// A feed fed by hand (for fakes of the port): the sender and the feed.
    pub fn channel() -> (mpsc::Sender<FeedEvent>, Self) {
        let (sender, events) = mpsc::channel(256);
        (sender, Self { events, task: None })
    }

    /// The next event; `None` once the feed ended.
    pub async fn next(&mut self) -> Option<FeedEvent> {
        self.events.recv().await
    }

    pub(crate) fn connect(
        inner: Arc<Connection>,
        name: Option<String>,
        limits: FeedLimits,
    ) -> Self {
        let (sender, mut feed) = Self::channel();
        feed.task = Some(tokio::spawn(run(inner, name, limits, sender)));
        feed
    }
}

/// How a connection ended.
enum Ended {
    /// The consumer dropped the feed.
    ConsumerGone,
    /// It broke; `delivered` says whether a snapshot went out first.
    Broke {
        error: GatewayError,
        delivered: bool,
    },
    /// The gateway passed a bound; the backoff is not reset, even after a snapshot.
    Breached(GatewayError),
}

impl Ended {
    fn broke(error: GatewayError, delivered: bool) -> Self {
        Self::Broke { error, delivered }
    }
}

/// The waits between reconnects: core's one retry rule, jittered, from [`INITIAL_BACKOFF`] to
/// [`MAX_BACKOFF`], counted from the last connection that delivered its snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Reconnects {
    failures: u32,
}

impl Reconnects {
    const BACKOFF: Backoff = Backoff {
        initial: INITIAL_BACKOFF,
        cap: MAX_BACKOFF,
    };

    /// The wait now; the next one is about twice as long, up to the cap.
    fn next_wait(&mut self) -> Duration {
        self.failures = self.failures.saturating_add(1);
        swdesk_atproto::retry::jittered(&Self::BACKOFF, self.failures)
    }

    /// Back to the first wait (after a connection that delivered its snapshot).
    fn reset(&mut self) {
        self.failures = 0;
    }
}

async fn run(
    inner: Arc<Connection>,
    name: Option<String>,
    limits: FeedLimits,
    events: mpsc::Sender<FeedEvent>,
) {
    let mut backoff = Reconnects::default();
    loop {
        let ended = connection(&inner, name.as_deref(), limits, &events).await;
        let (error, delivered) = match ended {
            Ended::ConsumerGone => return,
            Ended::Broke { error, delivered } => (error, delivered),
            Ended::Breached(error) => (error, false),
        };
        if is_fatal(&error) {
            let _ = events
                .send(FeedEvent::Failed(error.to_string(), error.name().cloned()))
                .await;
            return;
        }
        if delivered {
            backoff.reset();
        }
        let wait = backoff.next_wait();
        tracing::debug!(%error, ?wait, "subscribeClusters disconnected");
        let notice = FeedEvent::Disconnected {
            reason: error.to_string(),
            retry_in: wait,
        };
        if events.send(notice).await.is_err() {
            return;
        }
        tokio::time::sleep(wait).await;
    }
}

fn is_fatal(error: &GatewayError) -> bool {
    matches!(
        error,
        GatewayError::Refused { .. } | GatewayError::NoEndpoint { .. }
    ) && !error.is_transient()
}

/// One connection: the snapshot, then changes until it breaks or passes a bound.
async fn connection(
    inner: &Connection,
    name: Option<&str>,
    limits: FeedLimits,
    events: &mpsc::Sender<FeedEvent>,
) -> Ended {
    match open(inner, name).await {
        Ok(socket) => read(socket, limits, events).await,
        Err(error) => Ended::broke(error, false),
    }
}

/// Reads an open `socket` until it breaks or passes a bound.
async fn read<T: Io>(
    mut socket: WebSocketStream<T>,
    limits: FeedLimits,
    events: &mpsc::Sender<FeedEvent>,
) -> Ended {
    let mut state = Reading::new(limits);
    let mut ping = tokio::time::interval(limits.ping_every);
    ping.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let bytes = match next_frame(&mut socket, &mut state, &mut ping).await {
            Ok(bytes) => bytes,
            Err(ended) => return ended,
        };
        let event = match state.take(&bytes) {
            Ok(Some(event)) => event,
            Ok(None) => continue,
            Err(Stop::Error(error)) => return Ended::broke(error, state.delivered),
            Err(Stop::Breach(breach)) => return close(&mut socket, breach).await,
        };
        if events.send(event).await.is_err() {
            return Ended::ConsumerGone;
        }
    }
}

/// The next binary frame; meanwhile pings go out on time, pings in are answered, and a
/// deadline passed (the snapshot's, the idle timeout) closes the connection.
async fn next_frame<T: Io>(
    socket: &mut WebSocketStream<T>,
    state: &mut Reading,
    ping: &mut tokio::time::Interval,
) -> Result<tungstenite::Bytes, Ended> {
    loop {
        let read = tokio::select! {
            read = socket.next() => read,
            _ = ping.tick() => {
                send_briefly(socket, WsMessage::Ping(Vec::new().into())).await;
                continue;
            }
            () = tokio::time::sleep_until(state.watch.deadline()) => {
                match state.watch.expired(Instant::now(), state.tally.frames()) {
                    Some(breach) => return Err(close(socket, breach).await),
                    None => continue,
                }
            }
        };
        state.watch.heard(Instant::now());
        match read {
            Some(Ok(WsMessage::Binary(bytes))) => return Ok(bytes),
            Some(Ok(WsMessage::Ping(payload))) => {
                send_briefly(socket, WsMessage::Pong(payload)).await;
            }
            Some(Ok(WsMessage::Close(_))) | None => {
                let error = closed("the gateway closed the stream");
                return Err(Ended::broke(error, state.delivered));
            }
            Some(Ok(_)) => {}
            Some(Err(error)) => {
                let error = closed(&read_failure(&error, "the gateway"));
                return Err(Ended::broke(error, state.delivered));
            }
        }
    }
}

/// What one connection has read so far: the feed's state machine (the snapshot's frames and
/// bytes counted, each frame decoded, cleaned and admitted, the snapshot handed over whole at
/// `SnapshotComplete`, changes after it). Public only so the fuzz suite (`fuzz/`, target
/// `cluster_feed`) can drive it with frames, without a socket.
#[derive(Debug)]
pub struct Reading {
    limits: FeedLimits,
    watch: Watch,
    tally: Tally,
    snapshot: Vec<Message>,
    delivered: bool,
}

/// Why a frame ends the connection.
#[derive(Debug)]
pub enum Stop {
    /// The frame is not one (or the gateway refused in one).
    Error(GatewayError),
    /// The frame passed a bound.
    Breach(Breach),
}

impl Reading {
    /// A connection just opened, held to `limits`.
    pub fn new(limits: FeedLimits) -> Self {
        Self {
            limits,
            watch: Watch::new(limits, Instant::now()),
            tally: Tally::default(),
            snapshot: Vec::new(),
            delivered: false,
        }
    }

    /// One binary frame: counted, decoded, cleaned, admitted; the event it makes, if any.
    pub fn take(&mut self, bytes: &[u8]) -> Result<Option<FeedEvent>, Stop> {
        if !self.delivered {
            self.tally
                .count(bytes.len(), &self.limits)
                .map_err(Stop::Breach)?;
        }
        let message = match decode(bytes).map(clean::message) {
            Err(error) => return Err(Stop::Error(error)),
            Ok(Err(refused)) => {
                tracing::warn!(%refused, "a subscribeClusters frame is refused");
                return Ok(None);
            }
            Ok(Ok(message)) => message,
        };
        self.tally
            .admit(&message, &self.limits)
            .map_err(Stop::Breach)?;
        Ok(match (self.delivered, message) {
            (false, Message::Info(info)) if info.name == InfoName::SnapshotComplete => {
                self.delivered = true;
                self.watch.completed();
                Some(FeedEvent::Snapshot(std::mem::take(&mut self.snapshot)))
            }
            (false, message) => {
                self.snapshot.push(message);
                None
            }
            (true, message) => Some(FeedEvent::Change(message)),
        })
    }
}

/// Ends a connection that passed `breach`: the gateway is told why in a policy close frame
/// (not waited on long), and the feed reconnects on its backoff, never reset by it.
async fn close<T: Io>(socket: &mut WebSocketStream<T>, breach: Breach) -> Ended {
    let reason = breach.to_string();
    tracing::warn!(%reason, "subscribeClusters closed: a bound was passed");
    close_for_policy(socket, &reason).await;
    Ended::Breached(closed(&format!("the feed was closed: {reason}")))
}

fn closed(reason: &str) -> GatewayError {
    GatewayError::Transport {
        method: NSID,
        reason: reason.to_owned(),
    }
}

/// The largest frame (and message) the feed reads: a bigger one breaks the connection.
const MAX_FRAME: usize = 4 * 1024 * 1024;

/// What a feed's socket runs over: TCP (or TLS) in the app, a pipe in unit tests.
trait Io: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin {}
impl<T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin> Io for T {}

/// Connects with a fresh token.
async fn open(inner: &Connection, name: Option<&str>) -> Result<Socket, GatewayError> {
    let mut url = inner.endpoint().await?;
    let scheme = if url.scheme() == "https" { "wss" } else { "ws" };
    url.set_scheme(scheme)
        .map_err(|()| closed("the endpoint has no WebSocket form"))?;
    url.set_path(&format!("/xrpc/{NSID}"));
    if let Some(name) = name {
        url.query_pairs_mut().append_pair("name", name);
    }
    let token = inner.token(NSID).await?;
    let mut request = url
        .as_str()
        .into_client_request()
        .map_err(|e| closed(&e.to_string()))?;
    let mut bearer = HeaderValue::from_str(&format!("Bearer {}", token.expose()))
        .map_err(|_| closed("the token is not a header value"))?;
    bearer.set_sensitive(true);
    request.headers_mut().insert("authorization", bearer);
    let stream = inner.http.connect_tcp(&url).await.map_err(|error| {
        inner.forget_endpoint();
        closed(&error.to_string())
    })?;
    let handshake = handshake(request, stream, MAX_FRAME)
        .await
        .map_err(|timed_out| closed(&timed_out.to_string()))?;
    match handshake {
        Ok(socket) => Ok(socket),
        Err(tungstenite::Error::Http(response)) => {
            let body = response
                .body()
                .as_deref()
                .map(String::from_utf8_lossy)
                .unwrap_or_default();
            Err(refusal(NSID, response.status(), &body))
        }
        Err(error) => {
            inner.forget_endpoint();
            Err(closed(&error.to_string()))
        }
    }
}

#[derive(Deserialize)]
struct Header {
    op: i64,
    t: Option<String>,
}

#[derive(Deserialize)]
struct ErrorBody {
    error: String,
    message: Option<String>,
}

/// One frame: a message, or the error it carries.
pub fn decode(bytes: &[u8]) -> Result<Message, GatewayError> {
    let invalid = |reason: String| GatewayError::InvalidResponse {
        method: NSID,
        reason,
    };
    let mut decoder = serde_ipld_dagcbor::de::Deserializer::from_slice(bytes);
    let header =
        Header::deserialize(&mut decoder).map_err(|e| invalid(format!("bad frame header: {e}")))?;
    if header.op == -1 {
        let body = ErrorBody::deserialize(&mut decoder)
            .map_err(|e| invalid(format!("bad error frame: {e}")))?;
        return Err(GatewayError::Refused {
            method: NSID,
            status: 0,
            name: ErrorName::parse(&body.error),
            message: body.message.unwrap_or_default(),
        });
    }
    let body = |e: serde_ipld_dagcbor::DecodeError<std::convert::Infallible>| {
        invalid(format!("bad frame body: {e}"))
    };
    let message = match header.t.as_deref().unwrap_or_default() {
        "#cluster" => Message::Cluster(Deserialize::deserialize(&mut decoder).map_err(body)?),
        "#member" => Message::Member(Deserialize::deserialize(&mut decoder).map_err(body)?),
        "#nodeClaim" => Message::NodeClaim(Deserialize::deserialize(&mut decoder).map_err(body)?),
        "#info" => Message::Info(Deserialize::deserialize(&mut decoder).map_err(body)?),
        other => {
            let mut object: Map<String, serde_json::Value> =
                Deserialize::deserialize(&mut decoder).map_err(body)?;
            object.insert("$type".to_owned(), serde_json::Value::from(other));
            Message::Other(object)
        }
    };
    decoder.end().map_err(body)?;
    Ok(message)
}

#[cfg(test)]
mod tests {
    use futures_util::SinkExt as _;
    use tokio_tungstenite::tungstenite::protocol::Role;

    use super::*;

    /// A feed's reader over a pipe, and the gateway's end of it.
    async fn piped(
        limits: FeedLimits,
    ) -> (JoinHandle<Ended>, WebSocketStream<tokio::io::DuplexStream>) {
        let (ours, theirs) = tokio::io::duplex(1 << 20);
        let ours = WebSocketStream::from_raw_socket(ours, Role::Client, None).await;
        let theirs = WebSocketStream::from_raw_socket(theirs, Role::Server, None).await;
        let (events, mut feed) = ClusterFeed::channel();
        tokio::spawn(async move { while feed.next().await.is_some() {} });
        let reading = tokio::spawn(async move { read(ours, limits, &events).await });
        (reading, theirs)
    }

    fn breach_of(ended: Ended) -> String {
        match ended {
            Ended::Breached(error) => error.to_string(),
            Ended::Broke { error, .. } => panic!("broke, no breach: {error}"),
            Ended::ConsumerGone => panic!("the consumer went"),
        }
    }

    /// `SnapshotComplete` as a gateway frames it.
    fn complete() -> WsMessage {
        let header = serde_json::json!({"op": 1, "t": "#info"});
        let mut bytes = serde_ipld_dagcbor::to_vec(&header).unwrap();
        let body = serde_json::json!({"name": "SnapshotComplete"});
        bytes.extend(serde_ipld_dagcbor::to_vec(&body).unwrap());
        WsMessage::Binary(bytes.into())
    }

    /// With the default limits, on paused time: a gateway that completes its snapshot, then
    /// never answers again, is closed after 60 s of silence, not before, though pings went out.
    #[tokio::test(start_paused = true)]
    async fn a_silent_socket_is_closed_after_the_default_idle_timeout() {
        let (reading, mut gateway) = piped(FeedLimits::default()).await;
        gateway.send(complete()).await.unwrap();
        let started = Instant::now();
        let reason = breach_of(reading.await.unwrap());
        let silent = "the gateway was silent for 60 s (no frame, no answer to a ping)";
        assert!(reason.ends_with(silent), "{reason}");
        let waited = started.elapsed();
        assert!(
            waited >= Duration::from_secs(59) && waited < Duration::from_secs(61),
            "{waited:?}"
        );
    }

    /// On paused time: a gateway that answers every ping but never completes its snapshot is
    /// closed at the default 60 s deadline.
    #[tokio::test(start_paused = true)]
    async fn a_snapshot_kept_alive_by_pongs_is_closed_at_the_default_deadline() {
        let (reading, mut gateway) = piped(FeedLimits::default()).await;
        tokio::spawn(async move { while let Some(Ok(_)) = gateway.next().await {} });
        let reason = breach_of(reading.await.unwrap());
        assert!(
            reason.ends_with("the gateway's snapshot did not complete within 60 s (0 frames sent)"),
            "{reason}"
        );
    }

    /// A `wss://` feed's TLS configuration is built by tokio-tungstenite with
    /// `rustls::ClientConfig::builder()`, which panics ("no process-level CryptoProvider") unless
    /// exactly one provider is linked (reqwest's aws-lc-rs: the updater plugin's `rustls-tls`,
    /// which adds ring, stays off) or one was installed, which the app never does. Built with
    /// the whole workspace, as `cargo xtask test` builds it, the shell's features included.
    #[test]
    fn a_wss_feeds_tls_configuration_builds_on_the_one_linked_provider() {
        let _config = rustls::ClientConfig::builder()
            .with_root_certificates(rustls::RootCertStore::empty())
            .with_no_client_auth();
    }

    #[test]
    fn reconnect_waits_grow_to_the_cap_with_jitter_and_reset_after_a_snapshot() {
        let mut backoff = Reconnects::default();
        let waits: Vec<Duration> = (0..10).map(|_| backoff.next_wait()).collect();
        assert!(waits[0] >= INITIAL_BACKOFF / 2 && waits[0] <= INITIAL_BACKOFF);
        assert!(waits[1] >= INITIAL_BACKOFF && waits[1] <= INITIAL_BACKOFF * 2);
        let last = *waits.last().unwrap_or(&Duration::ZERO);
        assert!(last >= MAX_BACKOFF / 2 && last <= MAX_BACKOFF, "{last:?}");
        backoff.reset();
        assert!(backoff.next_wait() <= INITIAL_BACKOFF);
    }
}
