//! The redirect's landing place: an HTTP listener on `127.0.0.1` (any free port), bound before
//! the client id is built so the redirect URI names a port that is really ours. It answers
//! the browser's one `GET /callback?…` with a short page telling the owner to return to the
//! app, and hands the query to the sign-in flow. Other paths (a favicon) get a 404 and are
//! otherwise ignored.

use std::collections::HashMap;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use url::Url;

/// The path the authorization server redirects to.
pub const CALLBACK_PATH: &str = "/callback";
/// The most of a request this listener reads.
const MAX_REQUEST: usize = 16 * 1024;

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

    /// From a redirect URL's query (also what a custom-scheme redirect would carry).
    pub fn from_url(url: &Url) -> Self {
        Self {
            params: url.query_pairs().into_owned().collect(),
        }
    }
}

/// A listener waiting for the redirect.
#[derive(Debug)]
pub struct CallbackListener {
    listener: TcpListener,
    port: u16,
}

impl CallbackListener {
    /// Binds `127.0.0.1` on a free port.
    pub async fn bind() -> std::io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let port = listener.local_addr()?.port();
        Ok(Self { listener, port })
    }

    /// The redirect URI that reaches this listener.
    pub fn redirect_uri(&self) -> String {
        format!("http://127.0.0.1:{}{CALLBACK_PATH}", self.port)
    }

    /// Waits for the browser to arrive at [`CALLBACK_PATH`].
    pub async fn next_callback(&self) -> std::io::Result<Callback> {
        loop {
            let (mut stream, _) = self.listener.accept().await?;
            let Ok(target) = read_request_target(&mut stream).await else {
                continue;
            };
            let url = Url::parse(&format!("http://127.0.0.1{target}")).ok();
            match url.filter(|url| url.path() == CALLBACK_PATH) {
                Some(url) => {
                    let callback = Callback::from_url(&url);
                    respond(&mut stream, "200 OK", &landing_page(&callback)).await;
                    return Ok(callback);
                }
                None => respond(&mut stream, "404 Not Found", "Not found").await,
            }
        }
    }
}

/// The request target of a `GET` request line.
async fn read_request_target(stream: &mut TcpStream) -> std::io::Result<String> {
    let mut buffer = Vec::with_capacity(1024);
    let mut chunk = [0_u8; 1024];
    while !buffer.windows(4).any(|window| window == b"\r\n\r\n") && buffer.len() < MAX_REQUEST {
        let read = stream.read(&mut chunk).await?;
        if read == 0 {
            break;
        }
        buffer.extend_from_slice(&chunk[..read]);
    }
    let text = String::from_utf8_lossy(&buffer);
    let mut words = text.lines().next().unwrap_or_default().split(' ');
    match (words.next(), words.next()) {
        (Some("GET"), Some(target)) if target.starts_with('/') => Ok(target.to_owned()),
        _ => Err(std::io::Error::other("not a GET request")),
    }
}

async fn respond(stream: &mut TcpStream, status: &str, body: &str) {
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    // The browser may already have gone; the callback itself is what matters.
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}

fn landing_page(callback: &Callback) -> String {
    let message = if callback.get("error").is_some() {
        "Sign-in was not completed. Return to Socialweb Desk to see why."
    } else {
        "You are signed in. You can close this tab and return to Socialweb Desk."
    };
    format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>Socialweb Desk</title></head>\
         <body style=\"font-family:system-ui,sans-serif;margin:4rem auto;max-width:32rem\">\
         <h1>Socialweb Desk</h1><p>{message}</p></body></html>"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_listener_answers_other_paths_and_returns_the_callback_query() {
        let listener = CallbackListener::bind().await.unwrap();
        let redirect = listener.redirect_uri();
        assert!(redirect.starts_with("http://127.0.0.1:") && redirect.ends_with("/callback"));
        let base = redirect.trim_end_matches(CALLBACK_PATH).to_owned();
        let browser = tokio::spawn(async move {
            let http = reqwest::Client::new();
            let favicon = http
                .get(format!("{base}/favicon.ico"))
                .send()
                .await
                .unwrap();
            assert_eq!(favicon.status(), 404);
            let page = http
                .get(format!(
                    "{base}/callback?code=c-1&state=s-1&iss=http%3A%2F%2Flocalhost%3A2583"
                ))
                .send()
                .await
                .unwrap();
            assert_eq!(page.status(), 200);
            page.text().await.unwrap()
        });
        let callback = listener.next_callback().await.unwrap();
        assert_eq!(callback.get("code"), Some("c-1"));
        assert_eq!(callback.get("state"), Some("s-1"));
        assert_eq!(callback.get("iss"), Some("http://localhost:2583"));
        assert!(browser.await.unwrap().contains("You are signed in"));
    }
}
