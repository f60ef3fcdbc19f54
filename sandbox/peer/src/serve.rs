//! Serving on loopback with a graceful stop: [`Loopback::bind`] takes a port on `127.0.0.1`
//! (0 for any free one) and names the peer there (`http://localhost:<port>`,
//! `did:web:localhost%3A<port>`); [`Loopback::serve`] serves a router until [`Serving::stop`]
//! (which waits until the listener is closed) or until the [`Serving`] is dropped.

use std::net::SocketAddr;

use axum::Router;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use url::Url;

/// The loopback port could not be bound.
#[derive(Debug, thiserror::Error)]
#[error("could not listen on {address}: {source}")]
pub struct BindError {
    /// Where it tried.
    pub address: SocketAddr,
    /// Why.
    pub source: std::io::Error,
}

/// A bound loopback listener and the names of the peer on it.
#[derive(Debug)]
pub struct Loopback {
    /// `http://localhost:<port>`.
    pub url: Url,
    /// `did:web:localhost%3A<port>`: the service DID, the `aud` of calls to the peer.
    pub did: String,
    listener: TcpListener,
}

impl Loopback {
    /// Binds `127.0.0.1:<port>` (0 for any free port).
    pub async fn bind(port: u16) -> Result<Self, BindError> {
        let address = SocketAddr::from(([127, 0, 0, 1], port));
        let failed = |source| BindError { address, source };
        let listener = TcpListener::bind(address).await.map_err(failed)?;
        let port = listener.local_addr().map_err(failed)?.port();
        let url = Url::parse(&format!("http://localhost:{port}"))
            .map_err(|error| failed(std::io::Error::other(error)))?;
        let did = format!("did:web:localhost%3A{port}");
        Ok(Self { url, did, listener })
    }

    /// Serves `app` in a task, `name` in the logs; until stopped.
    pub fn serve(self, app: Router, name: &'static str) -> Serving {
        let (stop, stopped) = oneshot::channel::<()>();
        let shutdown = async {
            let _ = stopped.await;
        };
        let served = axum::serve(self.listener, app).with_graceful_shutdown(shutdown);
        let task = tokio::spawn(async move {
            if let Err(error) = served.await {
                tracing::error!(%error, "{name} stopped serving");
            }
        });
        tracing::info!(url = %self.url, did = %self.did, "{name} listens");
        Serving {
            stop: Some(stop),
            task: Some(task),
        }
    }
}

/// A router being served; dropping it stops it without waiting.
#[derive(Debug)]
pub struct Serving {
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

impl Serving {
    /// Stops serving and waits until the listener is closed.
    pub async fn stop(&mut self) {
        self.signal_stop();
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }

    fn signal_stop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        self.signal_stop();
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    // The tests are the peer's callers: they reach its loopback port directly.
    #![allow(clippy::disallowed_methods)]

    use axum::routing::get;

    use super::*;

    fn hello() -> Router {
        Router::new().route("/hello", get(|| async { "hello" }))
    }

    #[tokio::test]
    async fn a_peer_is_named_after_its_port() {
        let loopback = Loopback::bind(0).await.unwrap();
        let port = loopback.url.port().unwrap();
        assert_eq!(loopback.url.as_str(), format!("http://localhost:{port}/"));
        assert_eq!(loopback.did, format!("did:web:localhost%3A{port}"));
    }

    #[tokio::test]
    async fn a_taken_port_is_a_bind_error() {
        let taken = Loopback::bind(0).await.unwrap();
        let error = Loopback::bind(taken.url.port().unwrap()).await.unwrap_err();
        assert_eq!(error.address.port(), taken.url.port().unwrap());
    }

    #[tokio::test]
    async fn it_serves_until_stopped() {
        let loopback = Loopback::bind(0).await.unwrap();
        let url = loopback.url.join("hello").unwrap();
        let mut serving = loopback.serve(hello(), "the test peer");
        let answer = reqwest::get(url.clone())
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert_eq!(answer, "hello");
        serving.stop().await;
        assert!(reqwest::get(url).await.is_err(), "the listener is closed");
    }
}
