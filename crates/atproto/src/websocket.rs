//! What the app's WebSocket readers share (the owner's repo stream here, the gateway's
//! `subscribeClusters` feed): sending a ping, a pong or a policy close frame without waiting on
//! a slow peer for more than [`SEND_TIMEOUT`], and naming why a read failed (an oversized frame
//! by its size). The connections themselves are made by `swdesk_net::Outbound::connect_tcp`.

use std::time::Duration;

use futures_util::SinkExt as _;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::{self, Message};

/// How long a ping, a pong or a close frame may take to send.
pub const SEND_TIMEOUT: Duration = Duration::from_secs(5);

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
