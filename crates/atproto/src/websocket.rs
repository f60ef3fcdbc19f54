//! What the app's WebSocket readers share (the owner's repo stream here, the gateway's
//! `subscribeClusters` feed): the handshake, frames capped and within [`HANDSHAKE_TIMEOUT`];
//! sending a ping, a pong or a policy close frame without waiting on a slow peer for more than
//! [`SEND_TIMEOUT`], and naming why a read failed (an oversized frame by its size). The
//! connections themselves are made by `swdesk_net::Outbound::connect_tcp`.

use std::time::Duration;

use futures_util::SinkExt as _;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::handshake::client::Request;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::{self, Message};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// How long a ping, a pong or a close frame may take to send.
pub const SEND_TIMEOUT: Duration = Duration::from_secs(5);
/// How long the WebSocket handshake may take once connected.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(20);

/// A WebSocket over a connection the owner's policy allowed (TLS for `wss://`).
pub type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// The handshake did not end within [`HANDSHAKE_TIMEOUT`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the WebSocket handshake timed out")]
pub struct HandshakeTimedOut;

/// The WebSocket handshake of `request` over `stream` (connected through the owner's policy),
/// frames and messages capped at `max_frame` bytes; a peer that does not finish it within
/// [`HANDSHAKE_TIMEOUT`] is given up on.
pub async fn handshake(
    request: Request,
    stream: TcpStream,
    max_frame: usize,
) -> Result<Result<Socket, tungstenite::Error>, HandshakeTimedOut> {
    let limits = WebSocketConfig::default()
        .max_message_size(Some(max_frame))
        .max_frame_size(Some(max_frame));
    let handshake =
        tokio_tungstenite::client_async_tls_with_config(request, stream, Some(limits), None);
    let answered = tokio::time::timeout(HANDSHAKE_TIMEOUT, handshake)
        .await
        .map_err(|_| HandshakeTimedOut)?;
    Ok(answered.map(|(socket, _)| socket))
}

/// Sends `message` (a ping, a pong), giving up after [`SEND_TIMEOUT`].
pub async fn send_briefly<T: AsyncRead + AsyncWrite + Unpin>(
    socket: &mut WebSocketStream<T>,
    message: Message,
) {
    let _ = tokio::time::timeout(SEND_TIMEOUT, socket.send(message)).await;
}

/// Closes `socket` with a policy close frame saying `why` (cut to the 123 bytes a close
/// reason may hold), giving up after [`SEND_TIMEOUT`].
pub async fn close_for_policy<T: AsyncRead + AsyncWrite + Unpin>(
    socket: &mut WebSocketStream<T>,
    why: &str,
) {
    let frame = CloseFrame {
        code: CloseCode::Policy,
        reason: swdesk_lexicon::text::fit(why, 123).into_owned().into(),
    };
    let _ = tokio::time::timeout(SEND_TIMEOUT, socket.close(Some(frame))).await;
}

/// Why reading from `peer` failed, in words: an oversized frame is named by its size.
pub fn read_failure(error: &tungstenite::Error, peer: &str) -> String {
    match error {
        tungstenite::Error::Capacity(tungstenite::error::CapacityError::MessageTooLong {
            size,
            max_size,
        }) => format!("{peer} sent a frame of {size} bytes; at most {max_size} are read"),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;

    /// On paused time, over a real loopback socket: a peer that takes the connection and never
    /// answers the upgrade is given up on at 20 s, not before. The gateway's feed and the
    /// owner's repo stream both shake hands through [`handshake`].
    #[tokio::test(start_paused = true)]
    async fn a_handshake_the_peer_never_answers_is_given_up_at_twenty_seconds() {
        let port = swdesk_devnet::canary::silent().unwrap();
        let address = std::net::SocketAddr::from(([127, 0, 0, 1], port));
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        let stream = socket.connect(address).await.unwrap();
        let request = format!("ws://{address}/xrpc/com.example.feed")
            .into_client_request()
            .unwrap();
        let started = tokio::time::Instant::now();
        let shaking = handshake(request, stream, 1024);
        let outcome = tokio::time::timeout(10 * HANDSHAKE_TIMEOUT, shaking).await;
        let waited = started.elapsed();
        match outcome {
            Ok(Err(HandshakeTimedOut)) => {}
            Ok(Ok(answered)) => panic!("the silent peer answered: {:?}", answered.err()),
            Err(_) => panic!("the handshake was still waiting after {waited:?}"),
        }
        assert!(
            waited >= HANDSHAKE_TIMEOUT && waited < HANDSHAKE_TIMEOUT + Duration::from_secs(1),
            "{waited:?}"
        );
    }
}
