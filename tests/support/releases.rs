//! The project's release channel as a test stands it up: signing keys made by the Tauri CLI
//! (`tauri signer`, as a release manager makes the project's own) and a release server on
//! loopback whose `latest.json` announces what the test offers, with the package it names.
//! The app under test is pointed at both by `SWDESK_UPDATE_ENDPOINT` and `SWDESK_UPDATE_KEY`,
//! which only development builds honour.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

use anyhow::Context;
use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

/// The Tauri CLI of the UI's dependencies.
fn tauri_cli() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../ui/node_modules/.bin/tauri")
}

/// Runs the Tauri CLI with `args`, failing with its output.
fn tauri(args: &[&std::ffi::OsStr]) -> anyhow::Result<()> {
    let done = Command::new(tauri_cli())
        .args(args)
        .env("CI", "true")
        .output()
        .context("cannot run the Tauri CLI (ui/node_modules: run `npm ci` in ui/)")?;
    anyhow::ensure!(
        done.status.success(),
        "tauri {args:?} failed: {}{}",
        String::from_utf8_lossy(&done.stdout),
        String::from_utf8_lossy(&done.stderr)
    );
    Ok(())
}

/// A minisign key pair made by `tauri signer generate`, kept in a folder of its own (its
/// `Debug` shows the folder, never the private key).
#[derive(Debug)]
pub struct SigningKey {
    folder: tempfile::TempDir,
    /// The public half, as `plugins.updater.pubkey` holds it.
    pub public: String,
}

impl SigningKey {
    /// A new key pair (no password).
    pub fn generate() -> anyhow::Result<Self> {
        let folder = tempfile::tempdir()?;
        let private = folder.path().join("release.key");
        tauri(&[
            "signer".as_ref(),
            "generate".as_ref(),
            "--ci".as_ref(),
            "--password".as_ref(),
            "".as_ref(),
            "--write-keys".as_ref(),
            private.as_os_str(),
        ])?;
        let public = std::fs::read_to_string(folder.path().join("release.key.pub"))?;
        Ok(Self {
            folder,
            public: public.trim().to_owned(),
        })
    }

    /// The signature of `bytes` for `version` (`tauri signer sign --app-version`), as the
    /// manifest's `signature` field holds it.
    pub fn sign(&self, bytes: &[u8], version: &str) -> anyhow::Result<String> {
        let package = self.folder.path().join(format!("package-{version}"));
        std::fs::write(&package, bytes)?;
        tauri(&[
            "signer".as_ref(),
            "sign".as_ref(),
            "--private-key-path".as_ref(),
            self.folder.path().join("release.key").as_os_str(),
            "--password".as_ref(),
            "".as_ref(),
            "--app-version".as_ref(),
            version.as_ref(),
            package.as_os_str(),
        ])?;
        let signature = std::fs::read_to_string(package.with_file_name(format!(
            "{}.sig",
            package.file_name().unwrap_or_default().to_string_lossy()
        )))?;
        Ok(signature.trim().to_owned())
    }
}

/// What the server offers now: the manifest's fields and the package's bytes.
#[derive(Clone, Default)]
struct Offer {
    version: String,
    signature: String,
    package: Vec<u8>,
}

/// A release server on loopback: `/latest.json` and `/package`.
pub struct ReleaseServer {
    port: u16,
    offer: Arc<Mutex<Offer>>,
    task: tokio::task::JoinHandle<()>,
}

impl ReleaseServer {
    /// Starts serving (nothing offered: the manifest answers 204).
    pub async fn start() -> anyhow::Result<Self> {
        let offer = Arc::new(Mutex::new(Offer::default()));
        let app = Router::new()
            .route("/latest.json", get(manifest))
            .route("/package", get(package))
            .with_state(Arc::clone(&offer));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let port = listener.local_addr()?.port();
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.ok();
        });
        Ok(Self { port, offer, task })
    }

    /// The manifest's URL, for `SWDESK_UPDATE_ENDPOINT`.
    pub fn manifest_url(&self) -> String {
        format!("http://127.0.0.1:{}/latest.json", self.port)
    }

    /// Announces `version` with `signature`, serving `package` as its download.
    pub fn offer(&self, version: &str, package: &[u8], signature: &str) {
        *self.offer.lock().unwrap_or_else(|e| e.into_inner()) = Offer {
            version: version.to_owned(),
            signature: signature.to_owned(),
            package: package.to_vec(),
        };
    }
}

impl std::fmt::Debug for ReleaseServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReleaseServer")
            .field("port", &self.port)
            .finish_non_exhaustive()
    }
}

impl Drop for ReleaseServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

type Offered = State<Arc<Mutex<Offer>>>;

fn offered(offer: &Offered) -> Offer {
    offer.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

async fn manifest(offer: Offered, headers: axum::http::HeaderMap) -> Response {
    let offer = offered(&offer);
    if offer.version.is_empty() {
        return StatusCode::NO_CONTENT.into_response();
    }
    let host = headers
        .get(header::HOST)
        .and_then(|host| host.to_str().ok())
        .unwrap_or("127.0.0.1");
    let platform = serde_json::json!({
        "url": format!("http://{host}/package"),
        "signature": offer.signature,
    });
    axum::Json(serde_json::json!({
        "version": offer.version,
        "notes": "A release offered by the test",
        "pub_date": "2026-12-06T00:00:00Z",
        "platforms": {
            "linux-x86_64": platform,
            "linux-x86_64-deb": platform,
        },
    }))
    .into_response()
}

async fn package(offer: Offered) -> Response {
    let offer = offered(&offer);
    (
        [(
            header::CONTENT_TYPE,
            "application/vnd.debian.binary-package",
        )],
        offer.package,
    )
        .into_response()
}
