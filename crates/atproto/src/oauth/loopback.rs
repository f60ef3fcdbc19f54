//! The redirect's landing place: an HTTP listener on `127.0.0.1` (any free port), bound before
//! the client id is built so the redirect URI names a port that is really ours. It waits for the
//! browser's `GET /callback?…` carrying this sign-in's `state`, answers it with a short page
//! telling the owner to return to the app, and hands the query to the sign-in flow.
//!
//! Invariants: any program on the machine can connect, so every connection is untrusted. Each is
//! served in its own task, so one that says nothing holds up no other; it has [`READ_TIMEOUT`] to
//! send its whole request, of at most [`MAX_REQUEST`] bytes; at most [`MAX_CONNECTIONS`] are
//! served at once (one more closes the oldest). Another path, or a callback whose `state` is
//! wrong or missing, is answered with a refusal page and logged (never its query; the state only
//! as "wrong" or "missing"), and the wait goes on: only the right callback, the sign-in's own
//! deadline or its cancelling ends it. Dropping [`CallbackListener::next_callback`] closes every
//! connection it serves.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use sha2::{Digest, Sha256};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::task::{AbortHandle, JoinSet};
use tokio::time::timeout;
use url::Url;

/// The path the authorization server redirects to.
pub const CALLBACK_PATH: &str = "/callback";
/// The most of a request (its line and headers) this listener reads.
const MAX_REQUEST: usize = 16 * 1024;
/// How long a connection has to send its whole request.
const READ_TIMEOUT: Duration = Duration::from_secs(5);
/// How many connections are served at once.
const MAX_CONNECTIONS: usize = 64;

/// The query of the redirect.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Callback {
    params: HashMap<String, String>,
}

impl Callback {
    /// A query parameter (`code`, `state`, `iss`, `error`, `error_description`).
    pub fn get(&self, name: &str) -> Option<&str> {
        self.params.get(name).map(String::as_str)
    }

    /// From a redirect URL's query (what the loopback redirect and the app's link carry).
    pub fn from_url(url: &Url) -> Self {
        Self {
            params: url.query_pairs().into_owned().collect(),
        }
    }

    /// Whether this is the redirect of the sign-in that sent `state`. The two are compared
    /// through their digests, so the time a comparison takes tells nothing about the state.
    pub fn carries_state(&self, state: &str) -> bool {
        self.get("state")
            .is_some_and(|found| Sha256::digest(found) == Sha256::digest(state))
    }
}

/// What one connection may take.
#[derive(Debug, Clone, Copy)]
struct Limits {
    read_timeout: Duration,
    max_request: usize,
    max_connections: usize,
}

/// The listener's limits in the product.
const LIMITS: Limits = Limits {
    read_timeout: READ_TIMEOUT,
    max_request: MAX_REQUEST,
    max_connections: MAX_CONNECTIONS,
};

/// A listener waiting for the redirect.
#[derive(Debug)]
pub struct CallbackListener {
    listener: TcpListener,
    port: u16,
    limits: Limits,
}

impl CallbackListener {
    /// Binds `127.0.0.1` on a free port.
    pub async fn bind() -> std::io::Result<Self> {
        Self::bind_with(LIMITS).await
    }

    async fn bind_with(limits: Limits) -> std::io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let port = listener.local_addr()?.port();
        Ok(Self {
            listener,
            port,
            limits,
        })
    }

    /// The redirect URI that reaches this listener.
    pub fn redirect_uri(&self) -> String {
        format!("http://127.0.0.1:{}{CALLBACK_PATH}", self.port)
    }

    /// Waits for the browser to arrive at [`CALLBACK_PATH`] with `state`; every other request
    /// is refused and the wait goes on. Ends only with that callback or when accepting fails.
    pub async fn next_callback(&self, state: &str) -> std::io::Result<Callback> {
        let (found, mut arrived) = mpsc::channel(1);
        let state: Arc<str> = Arc::from(state);
        let mut connections = Connections::new(self.limits.max_connections);
        loop {
            tokio::select! {
                biased;
                Some(callback) = arrived.recv() => return Ok(callback),
                accepted = self.listener.accept() => {
                    let connection = Connection {
                        stream: accepted?.0,
                        state: Arc::clone(&state),
                        limits: self.limits,
                        found: found.clone(),
                    };
                    connections.spawn(connection.serve());
                }
            }
        }
    }
}

/// The connections being served, oldest first; dropping it closes them all.
#[derive(Debug)]
struct Connections {
    tasks: JoinSet<()>,
    order: VecDeque<AbortHandle>,
    cap: usize,
}

impl Connections {
    fn new(cap: usize) -> Self {
        Self {
            tasks: JoinSet::new(),
            order: VecDeque::new(),
            cap,
        }
    }

    /// Serves one more connection, closing the oldest when `cap` are served already.
    fn spawn(&mut self, serving: impl Future<Output = ()> + Send + 'static) {
        while self.tasks.try_join_next().is_some() {}
        self.order.retain(|task| !task.is_finished());
        if self.order.len() >= self.cap
            && let Some(oldest) = self.order.pop_front()
        {
            tracing::debug!(
                cap = self.cap,
                "the sign-in listener serves as many connections as it may; the oldest is closed"
            );
            oldest.abort();
        }
        self.order.push_back(self.tasks.spawn(serving));
    }
}

/// One connection to the listener, and where a right callback goes.
#[derive(Debug)]
struct Connection {
    stream: TcpStream,
    state: Arc<str>,
    limits: Limits,
    found: mpsc::Sender<Callback>,
}

impl Connection {
    /// Reads the request in time, answers it, and hands on the callback it may be.
    async fn serve(mut self) {
        let Limits {
            read_timeout,
            max_request,
            ..
        } = self.limits;
        let read = timeout(read_timeout, read_head(&mut self.stream, max_request)).await;
        let verdict = match read {
            Ok(Ok(Some(head))) if !head.is_empty() => judge(&head, &self.state),
            Ok(Ok(None)) => Verdict::Refused(Refusal::TooLarge),
            // Closed before saying anything (a browser's spare connection).
            Ok(Ok(Some(_))) => return,
            Ok(Err(error)) => {
                tracing::debug!(%error, "a connection to the sign-in listener failed");
                return;
            }
            Err(_) => {
                tracing::debug!("a connection to the sign-in listener sent no request in time");
                return;
            }
        };
        self.answer(verdict).await;
    }

    /// Answers `verdict`, hands on a callback, then lets the peer read the answer before closing.
    async fn answer(mut self, verdict: Verdict) {
        let limits = self.limits;
        let (status, body) = match &verdict {
            Verdict::Callback(callback) => ("200 OK", landing_page(callback)),
            Verdict::Refused(refusal) => {
                refusal.log();
                (refusal.status(), page(refusal.message()))
            }
        };
        // The peer may already have gone; only a callback itself matters.
        let _ = timeout(
            limits.read_timeout,
            respond(&mut self.stream, status, &body),
        )
        .await;
        if let Verdict::Callback(callback) = verdict {
            let _ = self.found.send(callback).await;
        }
        let _ = timeout(
            limits.read_timeout,
            drain(&mut self.stream, limits.max_request),
        )
        .await;
    }
}

/// What a request turns out to be ([`judge`]'s answer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The callback of the sign-in waiting.
    Callback(Callback),
    /// Anything else.
    Refused(Refusal),
}

/// Why a request is not the callback waited for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// A callback carrying another sign-in's state (or a forged one).
    WrongState,
    /// A callback carrying no state.
    MissingState,
    /// Another path (a favicon).
    OtherPath,
    /// Not an HTTP `GET` of a path.
    NotAGet,
    /// Longer than [`MAX_REQUEST`].
    TooLarge,
}

impl Refusal {
    fn status(self) -> &'static str {
        match self {
            Self::WrongState | Self::MissingState | Self::NotAGet => "400 Bad Request",
            Self::OtherPath => "404 Not Found",
            Self::TooLarge => "431 Request Header Fields Too Large",
        }
    }

    fn message(self) -> &'static str {
        match self {
            Self::WrongState | Self::MissingState => {
                "This is not the sign-in Socialweb Desk is waiting for; nothing was signed in."
            }
            Self::OtherPath => "Not found.",
            Self::NotAGet => "Not a sign-in callback.",
            Self::TooLarge => "The request is too large.",
        }
    }

    /// One log line, holding nothing the request carried.
    fn log(self) {
        match self {
            Self::WrongState => tracing::warn!(
                state = "wrong",
                "refused a sign-in callback that is not this sign-in's; still waiting"
            ),
            Self::MissingState => tracing::warn!(
                state = "missing",
                "refused a sign-in callback that is not this sign-in's; still waiting"
            ),
            Self::OtherPath => {
                tracing::info!("refused a request to the sign-in listener for another path")
            }
            Self::NotAGet => tracing::info!("refused a request to the sign-in listener: not a GET"),
            Self::TooLarge => {
                tracing::warn!("refused a request to the sign-in listener: too large")
            }
        }
    }
}

/// What to do with a request whose line and headers are `head`, for the sign-in that sent
/// `state`. Public (with [`Verdict`] and [`Refusal`]) only so the fuzz suite (`fuzz/`, target
/// `sign_in_request`) can drive the request parse without a socket.
pub fn judge(head: &[u8], state: &str) -> Verdict {
    let Some(url) = request_url(head) else {
        return Verdict::Refused(Refusal::NotAGet);
    };
    if url.path() != CALLBACK_PATH {
        return Verdict::Refused(Refusal::OtherPath);
    }
    let callback = Callback::from_url(&url);
    if callback.carries_state(state) {
        Verdict::Callback(callback)
    } else if callback.get("state").is_some() {
        Verdict::Refused(Refusal::WrongState)
    } else {
        Verdict::Refused(Refusal::MissingState)
    }
}

/// The URL on this listener that a `GET` request's line asks for.
fn request_url(head: &[u8]) -> Option<Url> {
    let text = String::from_utf8_lossy(head);
    let mut words = text.lines().next().unwrap_or_default().split(' ');
    match (words.next(), words.next()) {
        (Some("GET"), Some(target)) if target.starts_with('/') => {
            Url::parse(&format!("http://127.0.0.1{target}")).ok()
        }
        _ => None,
    }
}

/// A request's line and headers, up to the blank line that ends them (or all the peer sent
/// before it stopped); `None` when they pass `cap` bytes.
async fn read_head(stream: &mut TcpStream, cap: usize) -> std::io::Result<Option<Vec<u8>>> {
    let mut head = Vec::with_capacity(1024);
    let mut chunk = [0_u8; 1024];
    loop {
        let read = stream.read(&mut chunk).await?;
        if read == 0 {
            return Ok(Some(head));
        }
        let searched = head.len().saturating_sub(3);
        head.extend_from_slice(&chunk[..read]);
        let end = head[searched..]
            .windows(4)
            .position(|window| window == b"\r\n\r\n")
            .map(|at| searched + at + 4);
        match end {
            Some(end) if end <= cap => return Ok(Some(head)),
            _ if head.len() > cap => return Ok(None),
            _ => {}
        }
    }
}

async fn respond(stream: &mut TcpStream, status: &str, body: &str) {
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}

/// Reads what the peer still sends, up to `cap` bytes, so that closing does not reset the
/// connection before the peer has read the answer.
async fn drain(stream: &mut TcpStream, cap: usize) {
    let mut chunk = [0_u8; 1024];
    let mut left = cap;
    while left > 0 {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(read) => left = left.saturating_sub(read),
        }
    }
}

fn landing_page(callback: &Callback) -> String {
    page(if callback.get("error").is_some() {
        "Sign-in was not completed. Return to Socialweb Desk to see why."
    } else {
        "You are signed in. You can close this tab and return to Socialweb Desk."
    })
}

fn page(message: &str) -> String {
    format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>Socialweb Desk</title></head>\
         <body style=\"font-family:system-ui,sans-serif;margin:4rem auto;max-width:32rem\">\
         <h1>Socialweb Desk</h1><p>{message}</p></body></html>"
    )
}

#[cfg(test)]
#[allow(
    clippy::disallowed_methods,
    reason = "the tests are the browser: they connect to the listener directly"
)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpStream;

    use super::*;

    const STATE: &str = "s-right";
    const RIGHT: &str = "/callback?code=c-1&state=s-right&iss=http%3A%2F%2Flocalhost%3A2583";

    /// A listener whose connections may stay silent for an hour: a test that passes did not
    /// wait for any of them.
    async fn patient(max_connections: usize) -> CallbackListener {
        CallbackListener::bind_with(Limits {
            read_timeout: Duration::from_secs(3600),
            max_request: MAX_REQUEST,
            max_connections,
        })
        .await
        .unwrap()
    }

    /// Fails a test that would otherwise wait for ever.
    async fn within<T>(future: impl Future<Output = T>) -> T {
        timeout(Duration::from_secs(30), future)
            .await
            .expect("done within 30 s")
    }

    /// Runs `browser` against `listener`, then sends the owner's own redirect, which must be
    /// answered and yielded; what `browser` saw.
    async fn then_the_owners<T>(
        listener: &CallbackListener,
        browser: impl Future<Output = T>,
    ) -> T {
        let at = address(listener);
        let browse = async {
            let seen = browser.await;
            let (status, page) = get(&at, RIGHT).await;
            assert_eq!(status, 200);
            assert!(page.contains("You are signed in"), "{page}");
            seen
        };
        let waiting = async { tokio::join!(listener.next_callback(STATE), browse) };
        let (callback, seen) = within(waiting).await;
        let callback = callback.unwrap();
        assert_eq!(callback.get("code"), Some("c-1"));
        assert_eq!(callback.get("state"), Some(STATE));
        assert_eq!(callback.get("iss"), Some("http://localhost:2583"));
        seen
    }

    fn address(listener: &CallbackListener) -> String {
        format!("127.0.0.1:{}", listener.port)
    }

    /// Sends `request` as it is on a new connection; the status code and body of the answer.
    async fn send(address: &str, request: &[u8]) -> (u16, String) {
        let mut stream = TcpStream::connect(address).await.unwrap();
        stream.write_all(request).await.unwrap();
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).await.unwrap();
        let answer = String::from_utf8(answer).unwrap();
        let status = answer.split(' ').nth(1).and_then(|code| code.parse().ok());
        let body = answer.split("\r\n\r\n").nth(1).unwrap_or_default();
        (status.unwrap_or_default(), body.to_owned())
    }

    async fn get(address: &str, target: &str) -> (u16, String) {
        let request = format!("GET {target} HTTP/1.1\r\nHost: {address}\r\n\r\n");
        send(address, request.as_bytes()).await
    }

    /// Whether the listener closed `stream` (it reads the end, not an answer).
    async fn closed(stream: &mut TcpStream) -> bool {
        let mut byte = [0_u8; 1];
        matches!(stream.read(&mut byte).await, Ok(0) | Err(_))
    }

    #[tokio::test]
    async fn the_callback_with_this_sign_ins_state_is_answered_and_yielded() {
        let listener = CallbackListener::bind().await.unwrap();
        let redirect = listener.redirect_uri();
        assert!(redirect.starts_with("http://127.0.0.1:") && redirect.ends_with("/callback"));
        let at = address(&listener);
        let favicon = then_the_owners(&listener, get(&at, "/favicon.ico")).await;
        assert_eq!(favicon.0, 404);
    }

    #[tokio::test]
    async fn a_connection_that_sends_nothing_does_not_hold_up_the_callback() {
        let listener = patient(MAX_CONNECTIONS).await;
        let at = address(&listener);
        let _silent = then_the_owners(&listener, TcpStream::connect(&at)).await;
    }

    #[tokio::test]
    async fn a_connection_is_closed_when_its_request_is_not_whole_in_time() {
        let listener = CallbackListener::bind_with(Limits {
            read_timeout: Duration::from_millis(300),
            ..LIMITS
        })
        .await
        .unwrap();
        let at = address(&listener);
        then_the_owners(&listener, async {
            let mut silent = TcpStream::connect(&at).await.unwrap();
            // One byte each 50 ms: every read is quick, the request never whole.
            let (mut reading, mut writing) = TcpStream::connect(&at).await.unwrap().into_split();
            let trickle = tokio::spawn(async move {
                while writing.write_all(b"G").await.is_ok() {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            });
            assert!(closed(&mut silent).await);
            let mut byte = [0_u8; 1];
            assert!(matches!(reading.read(&mut byte).await, Ok(0) | Err(_)));
            trickle.abort();
        })
        .await;
    }

    #[tokio::test]
    async fn a_wrong_or_missing_state_is_refused_and_the_right_callback_still_ends_the_wait() {
        let listener = patient(MAX_CONNECTIONS).await;
        let at = address(&listener);
        then_the_owners(&listener, async {
            for target in [
                "/callback?code=stolen&state=s-wrong",
                "/callback?code=stolen",
                "/callback?code=stolen&state=",
            ] {
                let (status, body) = get(&at, target).await;
                assert_eq!(status, 400, "{target}");
                assert!(body.contains("not the sign-in"), "{body}");
                assert!(!body.contains("stolen"), "the page quotes nothing: {body}");
            }
            assert_eq!(get(&at, "/other?state=s-right").await.0, 404);
            let post = format!("POST {RIGHT} HTTP/1.1\r\nHost: {at}\r\n\r\n");
            assert_eq!(send(&at, post.as_bytes()).await.0, 400);
        })
        .await;
    }

    #[tokio::test]
    async fn a_request_larger_than_the_cap_is_refused_and_the_wait_goes_on() {
        let listener = patient(MAX_CONNECTIONS).await;
        let at = address(&listener);
        then_the_owners(&listener, async {
            let long = format!("{RIGHT}&pad={}", "a".repeat(MAX_REQUEST));
            let (status, body) = get(&at, &long).await;
            assert_eq!(status, 431);
            assert!(body.contains("too large"), "{body}");
            let pad = "a".repeat(MAX_REQUEST);
            let unended = format!("GET {RIGHT} HTTP/1.1\r\nX-Pad: {pad}\r\n");
            assert_eq!(send(&at, unended.as_bytes()).await.0, 431);
        })
        .await;
    }

    #[tokio::test]
    async fn many_idle_connections_do_not_hold_up_the_callback_and_the_oldest_are_closed() {
        let cap = 4;
        let listener = patient(cap).await;
        let at = address(&listener);
        let _idle = then_the_owners(&listener, async {
            let mut idle = Vec::new();
            for _ in 0..3 * cap {
                idle.push(TcpStream::connect(&at).await.unwrap());
            }
            assert!(closed(&mut idle[0]).await, "the oldest made room");
            idle
        })
        .await;
    }

    #[test]
    fn a_request_is_judged_by_its_line_and_the_state_it_carries() {
        let judged = |head: &str| judge(head.as_bytes(), STATE);
        let right = judged(&format!("GET {RIGHT} HTTP/1.1\r\n\r\n"));
        assert!(matches!(right, Verdict::Callback(ref found) if found.get("code") == Some("c-1")));
        for (head, refusal) in [
            (
                "GET /callback?state=s-wrong HTTP/1.1\r\n\r\n",
                Refusal::WrongState,
            ),
            (
                "GET /callback?state=s-righ HTTP/1.1\r\n\r\n",
                Refusal::WrongState,
            ),
            (
                "GET /callback?code=c HTTP/1.1\r\n\r\n",
                Refusal::MissingState,
            ),
            (
                "GET /callback/x?state=s-right HTTP/1.1\r\n\r\n",
                Refusal::OtherPath,
            ),
            (
                "GET //evil/callback?state=s-right HTTP/1.1\r\n\r\n",
                Refusal::OtherPath,
            ),
            (
                "HEAD /callback?state=s-right HTTP/1.1\r\n\r\n",
                Refusal::NotAGet,
            ),
            (
                "GET http://127.0.0.1/callback?state=s-right HTTP/1.1\r\n\r\n",
                Refusal::NotAGet,
            ),
            ("\r\n\r\n", Refusal::NotAGet),
        ] {
            assert_eq!(judged(head), Verdict::Refused(refusal), "{head}");
        }
    }
}
