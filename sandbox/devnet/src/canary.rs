//! A listener on loopback that only counts the connections made to it. The hostile-peer tests
//! point what a peer names (a grant URL, a redirect, a service endpoint) at it and assert that
//! nothing reached it: a connection the network policy refused never arrives here. Beside it,
//! [`silent`]: a listener that takes every connection and never answers, for the timeouts.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The counting listener.
#[derive(Debug)]
pub struct Canary {
    /// Its loopback port.
    pub port: u16,
    connections: Arc<AtomicUsize>,
}

impl Canary {
    /// Starts listening on a free loopback port.
    pub async fn start() -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let port = listener.local_addr()?.port();
        let connections = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&connections);
        tokio::spawn(async move {
            while let Ok((_stream, _)) = listener.accept().await {
                counted.fetch_add(1, Ordering::SeqCst);
            }
        });
        Ok(Self { port, connections })
    }

    /// The connections made to it so far.
    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}

/// Starts a listener on a free loopback port, on a thread of its own, that takes every
/// connection and holds it open without a word: a server that never answers. Its own thread,
/// so a test on paused time does not wait on it. Its port.
pub fn silent() -> std::io::Result<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    let port = listener.local_addr()?.port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept() {
            held.push(socket);
        }
    });
    Ok(port)
}
