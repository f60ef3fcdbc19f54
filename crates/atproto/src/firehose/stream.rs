//! The follower: one `subscribeRepos` connection after another to a repo's PDS (the owner's, or a
//! service the owner named; a winning bidder's while a contract waits for its guest), through the
//! outbound policy, each frame decoded (`frame.rs`), each of the followed repo's commits verified
//! (`verify.rs`) and handed on as a [`RepoFeed`]. Where the stream cannot say what changed it asks
//! for a listing instead ([`RepoFeed::Resync`]): a `#sync`, a gap in the sequence or in the repo's
//! revision chain (`since` is not the revision last taken), a commit too big to carry its blocks or
//! that does not verify, a cursor older than the server keeps (`OutdatedCursor`), and the first
//! connect without a kept cursor. A closed or failed stream says so ([`LiveState::Polling`]: the
//! controller lists on its poll meanwhile) and reconnects from the last cursor after a jittered
//! backoff, so the server replays what was missed.
//!
//! Exactly once: a frame whose sequence number is not past the last one, or a commit whose revision
//! is not past the last one taken, is skipped (a replay after a reconnect); a commit whose `since`
//! does not continue the chain is not applied but listed for.
//!
//! Bounded: a frame larger than [`StreamLimits::max_frame`] breaks the connection (the WebSocket
//! reader refuses it before it is read whole); more than [`StreamLimits::frames_per_window`] frames
//! in a window closes it; so does silence longer than the idle timeout (pings go out meanwhile).
//! Other repos' commits on the same PDS are counted and skipped, never decoded past their header
//! fields.

use std::time::Duration;

use futures_util::StreamExt as _;
use swdesk_kernel::repo::live::{FeedCursor, LiveState, RepoFeed};
use swdesk_kernel::retry::Backoff;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Message as WsMessage;
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
use url::Url;

use super::frame::{self, CommitFrame, Frame, MAX_FRAME};
use super::verify::verify_commit;
use crate::did_key::PublicKey;
use crate::identity::Resolver;
use crate::websocket::{Socket, close_for_policy, handshake, read_failure, send_briefly};

/// The method followed.
pub const NSID: &str = "com.atproto.sync.subscribeRepos";

/// The waits between reconnects: from half a second, doubling to a minute, jittered.
const BACKOFF: Backoff = Backoff {
    initial: Duration::from_millis(500),
    cap: Duration::from_secs(60),
};
/// A connection that lasted this long resets the backoff.
const STEADY: Duration = Duration::from_secs(30);

/// The bounds of one follower's connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamLimits {
    /// The largest frame read.
    pub max_frame: usize,
    /// The window frames are counted over.
    pub window: Duration,
    /// The most frames in one window.
    pub frames_per_window: usize,
    /// How often a ping goes out (the stream's keep-alive).
    pub ping_every: Duration,
    /// How long the server may stay silent (no frame, no pong).
    pub idle_timeout: Duration,
}

impl Default for StreamLimits {
    /// Frames of at most 3 MiB, 20,000 frames per 10 s, a ping every 30 s, 90 s of silence.
    fn default() -> Self {
        Self {
            max_frame: MAX_FRAME,
            window: Duration::from_secs(10),
            frames_per_window: 20_000,
            ping_every: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(90),
        }
    }
}

/// What to follow.
#[derive(Debug, Clone)]
pub struct FollowConfig {
    /// The repo followed (its DID: the owner's, or a winning bidder's).
    pub did: String,
    /// Where to resume (as kept in the store); none: from now, after one listing.
    pub cursor: Option<FeedCursor>,
    /// A service to read the stream from instead of the DID's PDS (a relay); its commits are
    /// verified the same way.
    pub service: Option<Url>,
    /// The bounds.
    pub limits: StreamLimits,
}

/// A running follower; dropping it (or its receiver) closes the stream.
#[derive(Debug)]
pub struct Follower {
    task: JoinHandle<()>,
}

impl Drop for Follower {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Follower {
    /// Starts following `config.did` on the current runtime; its events go to the receiver.
    pub fn start(resolver: Resolver, config: FollowConfig) -> (Self, mpsc::Receiver<RepoFeed>) {
        let (sender, events) = mpsc::channel(64);
        let task = tokio::spawn(run(resolver, config, sender));
        (Self { task }, events)
    }
}

/// Where the follower is: the last sequence number seen and the last revision taken.
#[derive(Debug, Clone, Default)]
struct Position {
    seq: Option<i64>,
    rev: Option<String>,
}

/// How one connection ended.
enum Ended {
    /// The controller is gone.
    Gone,
    /// It broke or was closed; `why` in words.
    Broke(String),
}

async fn run(resolver: Resolver, config: FollowConfig, events: mpsc::Sender<RepoFeed>) {
    let mut position = Position {
        seq: config.cursor.as_ref().map(|cursor| cursor.seq),
        rev: config.cursor.as_ref().and_then(|cursor| cursor.rev.clone()),
    };
    let mut failures = 0_u32;
    loop {
        if events
            .send(RepoFeed::State(LiveState::Connecting))
            .await
            .is_err()
        {
            return;
        }
        let started = Instant::now();
        let why = match connection(&resolver, &config, &mut position, &events).await {
            Ended::Gone => return,
            Ended::Broke(why) => why,
        };
        failures = if started.elapsed() >= STEADY {
            1
        } else {
            failures.saturating_add(1)
        };
        let wait = crate::retry::jittered(&BACKOFF, failures);
        tracing::debug!(%why, ?wait, "subscribeRepos: polling until it reconnects");
        let state = RepoFeed::State(LiveState::Polling { why });
        if events.send(state).await.is_err() {
            return;
        }
        tokio::select! {
            () = tokio::time::sleep(wait) => {}
            () = events.closed() => return,
        }
    }
}

/// One connection: open it, then read it until it ends.
async fn connection(
    resolver: &Resolver,
    config: &FollowConfig,
    position: &mut Position,
    events: &mpsc::Sender<RepoFeed>,
) -> Ended {
    let identity = match resolver.resolve_did(&config.did).await {
        Ok(identity) => identity,
        Err(error) => {
            return Ended::Broke(format!(
                "the followed repo's identity did not resolve: {error}"
            ));
        }
    };
    let base = config.service.clone().unwrap_or(identity.pds);
    let url = match stream_url(&base, position.seq) {
        Ok(url) => url,
        Err(why) => return Ended::Broke(why),
    };
    let socket = match open(resolver, &url, &config.limits).await {
        Ok(socket) => socket,
        Err(why) => return Ended::Broke(why),
    };
    let mut reader = Reader {
        resolver,
        did: &config.did,
        key: identity.signing_key,
        position,
        events,
    };
    if events.send(RepoFeed::State(LiveState::Live)).await.is_err() {
        return Ended::Gone;
    }
    if reader.position.seq.is_none() {
        let why = "the stream is followed from now: the records are listed once".to_owned();
        if reader
            .send(RepoFeed::Resync { why, cursor: None })
            .await
            .is_err()
        {
            return Ended::Gone;
        }
    }
    reader.read(socket, config.limits).await
}

/// The stream's URL at `base`, resuming after `seq`.
fn stream_url(base: &Url, seq: Option<i64>) -> Result<Url, String> {
    let mut url = base.clone();
    let scheme = match url.scheme() {
        "https" | "wss" => "wss",
        "http" | "ws" => "ws",
        other => return Err(format!("the stream's service is not http(s) but {other}")),
    };
    url.set_scheme(scheme)
        .map_err(|()| "the service has no WebSocket form".to_owned())?;
    url.set_path(&format!("/xrpc/{NSID}"));
    url.set_query(None);
    if let Some(seq) = seq {
        url.query_pairs_mut()
            .append_pair("cursor", &seq.to_string());
    }
    Ok(url)
}

/// Connects to `url` through the owner's outbound policy, frames capped.
async fn open(resolver: &Resolver, url: &Url, limits: &StreamLimits) -> Result<Socket, String> {
    let request = url
        .as_str()
        .into_client_request()
        .map_err(|error| error.to_string())?;
    let stream = resolver
        .http()
        .connect_tcp(url)
        .await
        .map_err(|error| error.to_string())?;
    match handshake(request, stream, limits.max_frame).await {
        Err(timed_out) => Err(timed_out.to_string()),
        Ok(Err(error)) => Err(format!("the WebSocket handshake failed: {error}")),
        Ok(Ok(socket)) => Ok(socket),
    }
}

/// One connection's reading: the followed repo, its key, and where the follower is.
struct Reader<'a> {
    resolver: &'a Resolver,
    did: &'a str,
    key: PublicKey,
    position: &'a mut Position,
    events: &'a mpsc::Sender<RepoFeed>,
}

/// The pace of frames over one window.
struct Pace {
    started: Instant,
    frames: usize,
}

impl Reader<'_> {
    async fn send(&self, event: RepoFeed) -> Result<(), ()> {
        self.events.send(event).await.map_err(|_| ())
    }

    async fn read(&mut self, mut socket: Socket, limits: StreamLimits) -> Ended {
        let mut ping = tokio::time::interval(limits.ping_every);
        ping.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        ping.reset();
        let mut heard = Instant::now();
        let mut pace = Pace {
            started: Instant::now(),
            frames: 0,
        };
        loop {
            let read = tokio::select! {
                read = socket.next() => read,
                _ = ping.tick() => {
                    send_briefly(&mut socket, WsMessage::Ping(Vec::new().into())).await;
                    continue;
                }
                () = tokio::time::sleep_until(heard + limits.idle_timeout) => {
                    let why = format!(
                        "the server was silent for {} s",
                        limits.idle_timeout.as_secs()
                    );
                    return close(&mut socket, why).await;
                }
                () = self.events.closed() => return Ended::Gone,
            };
            heard = Instant::now();
            let bytes = match read {
                Some(Ok(WsMessage::Binary(bytes))) => bytes,
                Some(Ok(WsMessage::Ping(payload))) => {
                    send_briefly(&mut socket, WsMessage::Pong(payload)).await;
                    continue;
                }
                Some(Ok(WsMessage::Close(_))) | None => {
                    return Ended::Broke("the server closed the stream".to_owned());
                }
                Some(Ok(_)) => continue,
                Some(Err(error)) => return Ended::Broke(read_failure(&error, "the server")),
            };
            if let Some(why) = pace.count(heard, &limits) {
                return close(&mut socket, why).await;
            }
            match self.take(&bytes).await {
                Ok(()) => {}
                Err(ended @ Ended::Gone) => return ended,
                Err(Ended::Broke(why)) => return close(&mut socket, why).await,
            }
        }
    }

    /// One frame: decoded, checked against the position, and what it means sent on.
    async fn take(&mut self, bytes: &[u8]) -> Result<(), Ended> {
        let gone = |()| Ended::Gone;
        let frame = frame::decode(bytes).map_err(|error| Ended::Broke(error.to_string()))?;
        if let Frame::Error { error, message } = &frame {
            let message = message.as_deref().unwrap_or_default();
            return Err(Ended::Broke(format!(
                "the server ended the stream: {error} {message}"
            )));
        }
        if let Frame::Info { name, message } = &frame {
            tracing::info!(%name, ?message, "subscribeRepos: the server's notice");
            if name == "OutdatedCursor" {
                self.position.rev = None;
                let why = "the kept cursor is older than the server keeps".to_owned();
                return self
                    .send(RepoFeed::Resync { why, cursor: None })
                    .await
                    .map_err(gone);
            }
            return Ok(());
        }
        let Some(seq) = frame.seq() else {
            return Ok(());
        };
        let last = self.position.seq;
        if last.is_some_and(|last| seq <= last) {
            tracing::debug!(seq, "subscribeRepos: a frame already seen is skipped");
            return Ok(());
        }
        self.position.seq = Some(seq);
        let gap = last.filter(|last| seq > last + 1);
        let event = match frame {
            Frame::Commit(commit) if commit.repo == self.did => self.commit(commit, gap).await,
            Frame::Sync { did, rev, .. } if did == self.did => Some(self.resync(
                "the server reset the repo (#sync)".to_owned(),
                seq,
                Some(rev),
            )),
            Frame::Identity { did, .. } if did == self.did => {
                self.refresh_key().await;
                None
            }
            Frame::Account {
                did,
                active,
                status,
                ..
            } if did == self.did => {
                tracing::info!(
                    active,
                    ?status,
                    "subscribeRepos: the followed account changed"
                );
                None
            }
            _ => None,
        };
        match event {
            Some(event) => self.send(event).await.map_err(gone),
            None => Ok(()),
        }
    }

    /// The owner's commit: skipped when already taken, listed for when the stream cannot
    /// show it (a gap before it, too big, not continuing the chain, unverifiable), else its
    /// verified ops.
    async fn commit(&mut self, commit: CommitFrame, gap: Option<i64>) -> Option<RepoFeed> {
        let seq = commit.seq;
        if self
            .position
            .rev
            .as_ref()
            .is_some_and(|rev| commit.rev <= *rev)
        {
            tracing::debug!(seq, "subscribeRepos: a commit already taken is skipped");
            return None;
        }
        let why = if let Some(last) = gap {
            Some(format!("the stream skipped from {last} to {seq}"))
        } else if commit.too_big {
            Some("a commit was too big to carry its records".to_owned())
        } else if self.position.rev.is_some() && commit.since != self.position.rev {
            Some(format!(
                "the repo's revisions skipped from {} to {}",
                self.position.rev.as_deref().unwrap_or_default(),
                commit.since.as_deref().unwrap_or("nothing")
            ))
        } else {
            None
        };
        if let Some(why) = why {
            return Some(self.resync(why, seq, Some(commit.rev)));
        }
        let mut verified = verify_commit(&commit, self.did, &self.key);
        if verified.as_ref().is_err_and(|error| error.is_signature()) {
            self.refresh_key().await;
            verified = verify_commit(&commit, self.did, &self.key);
        }
        match verified {
            Ok(ops) => {
                self.position.rev = Some(commit.rev.clone());
                let cursor = FeedCursor {
                    seq,
                    rev: Some(commit.rev),
                };
                Some(RepoFeed::Commit { ops, cursor })
            }
            Err(error) => {
                tracing::warn!(%error, seq, "subscribeRepos: a commit of the followed repo is refused");
                Some(self.resync(format!("a commit was refused: {error}"), seq, None))
            }
        }
    }

    /// A listing instead of the stream, after which the follower is at `seq` and `rev`.
    fn resync(&mut self, why: String, seq: i64, rev: Option<String>) -> RepoFeed {
        self.position.rev.clone_from(&rev);
        RepoFeed::Resync {
            why,
            cursor: Some(FeedCursor { seq, rev }),
        }
    }

    /// Reads the owner's signing key again (the DID document may have changed).
    async fn refresh_key(&mut self) {
        self.resolver.forget(self.did);
        match self.resolver.resolve_did(self.did).await {
            Ok(identity) => self.key = identity.signing_key,
            Err(error) => {
                tracing::warn!(%error, "subscribeRepos: the followed repo's signing key did not resolve")
            }
        }
    }
}

impl Pace {
    /// Counts a frame heard `now`; why the connection must close, when it passed the bound.
    fn count(&mut self, now: Instant, limits: &StreamLimits) -> Option<String> {
        if now.duration_since(self.started) >= limits.window {
            self.started = now;
            self.frames = 0;
        }
        self.frames += 1;
        (self.frames > limits.frames_per_window).then(|| {
            format!(
                "the server sent more than {} frames in {} s",
                limits.frames_per_window,
                limits.window.as_secs()
            )
        })
    }
}

/// Closes the socket, telling the server `why` (briefly), and ends the connection.
async fn close(socket: &mut Socket, why: String) -> Ended {
    close_for_policy(socket, &why).await;
    Ended::Broke(why)
}
