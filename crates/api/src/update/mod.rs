//! Signed updates, the part that knows nothing of Tauri: where releases are announced
//! ([`UpdateSource`]), the release manifest (`latest.json`, at most 64 KiB) and the package it
//! names (at most [`PACKAGE_LIMIT`], read with progress), both fetched under the app's one
//! outbound policy, what the window shows of an update ([`UpdateView`]), and installing the
//! package exactly as it was verified ([`install`]). Checking the package's signature belongs to
//! the shell (`tauri-plugin-updater`).
//!
//! Everything the update server sends is hostile input: the manifest and the package are read
//! under a cap, a download URL is called only if the policy lets it (https to the public
//! network; a loopback one only on the endpoint's own port), and texts shown or logged are cut
//! and put on one line.

use std::time::Duration;

use serde::Serialize;
use swdesk_net::{BodyError, Limit, NetPolicy, Outbound};
use url::Url;

pub mod install;

/// The largest package an update may download (today's is about 15 MiB).
pub const PACKAGE_LIMIT: Limit = Limit(256 * 1024 * 1024);

/// How long a package download may take in all (the outbound client's own limit is a minute).
const PACKAGE_TIMEOUT: Duration = Duration::from_secs(15 * 60);

/// The longest text of the update server kept in a message.
const SERVER_TEXT_BYTES: usize = 200;

/// What the window shows of updates.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(tag = "state", rename_all = "camelCase")]
pub enum UpdateView {
    /// This build checks no update endpoint (a development build without one set).
    Off,
    /// Asking the endpoint for its newest release.
    Checking,
    /// The newest release is the running one.
    UpToDate { version: String },
    /// A newer release is being downloaded (bytes: a package is at most [`PACKAGE_LIMIT`]).
    Downloading {
        version: String,
        received: u32,
        total: Option<u32>,
    },
    /// A newer release is downloaded and its signature checked: it installs when the owner
    /// chooses to restart, never before.
    Ready { version: String },
    /// What was offered was refused (another key's signature, a damaged package, an older
    /// version); the running version keeps working.
    Refused { version: String, reason: String },
    /// The endpoint could not be asked, or did not answer a release.
    Unreachable { reason: String },
    /// The package is being installed; the app restarts into it next.
    Installing { version: String },
    /// The package could not be installed; the running version keeps working.
    InstallFailed { version: String, reason: String },
}

/// Why a manifest or a package could not be fetched.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    #[error("{0}")]
    Refused(#[from] swdesk_net::Refused),
    #[error("the update server could not be reached: {0}")]
    Transport(String),
    #[error("the update server answered HTTP {0}")]
    Status(u16),
    #[error("{0}")]
    Body(#[from] BodyError),
}

/// The endpoint announcing releases, and the client that may reach it and its downloads.
#[derive(Debug, Clone)]
pub struct UpdateSource {
    manifest: Url,
    outbound: Outbound,
}

impl UpdateSource {
    /// Releases announced at `manifest`: an https URL, or (development builds and tests) a
    /// loopback one, whose port alone is then reachable besides the public network (an https
    /// endpoint opens no loopback port).
    pub fn new(manifest: Url) -> Self {
        let policy = NetPolicy::public().with_loopback_service(&manifest);
        Self {
            manifest,
            outbound: Outbound::new(policy),
        }
    }

    /// The manifest's URL.
    pub fn endpoint(&self) -> &Url {
        &self.manifest
    }

    /// The release manifest, or `None` when the endpoint answers that there is none (204).
    pub async fn manifest(&self) -> Result<Option<serde_json::Value>, FetchError> {
        let response = self
            .outbound
            .get(self.manifest.as_str())?
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(transport)?;
        if response.status() == reqwest::StatusCode::NO_CONTENT {
            return Ok(None);
        }
        let response = successful(response)?;
        Ok(Some(
            swdesk_net::read_json(response, Limit::DOCUMENT).await?,
        ))
    }

    /// The package at `url`, at most [`PACKAGE_LIMIT`], telling `progress` the bytes received
    /// so far and the length announced.
    pub async fn package(
        &self,
        url: &Url,
        progress: impl FnMut(u64, Option<u64>),
    ) -> Result<Vec<u8>, FetchError> {
        let response = self
            .outbound
            .get(url.as_str())?
            .timeout(PACKAGE_TIMEOUT)
            .send()
            .await
            .map_err(transport)?;
        let response = successful(response)?;
        Ok(swdesk_net::body::read_bytes_observed(response, PACKAGE_LIMIT, progress).await?)
    }
}

/// A text of the update server (or about it) fit for a message: one line, cut.
pub fn server_text(text: &str) -> String {
    swdesk_lexicon::text::peer_text(text, SERVER_TEXT_BYTES)
}

fn successful(response: reqwest::Response) -> Result<reqwest::Response, FetchError> {
    if response.status().is_success() {
        Ok(response)
    } else {
        Err(FetchError::Status(response.status().as_u16()))
    }
}

fn transport(error: reqwest::Error) -> FetchError {
    FetchError::Transport(server_text(&error.without_url().to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loopback_endpoint_opens_its_own_port_only() {
        let source = UpdateSource::new(Url::parse("http://127.0.0.1:4100/latest.json").unwrap());
        let policy = source.outbound.policy();
        assert!(
            policy
                .check_url(&Url::parse("http://127.0.0.1:4100/swdesk.deb").unwrap())
                .is_ok()
        );
        assert!(
            policy
                .check_url(&Url::parse("http://127.0.0.1:4101/swdesk.deb").unwrap())
                .is_err()
        );
        assert!(
            policy
                .check_url(&Url::parse("http://example.com/swdesk.deb").unwrap())
                .is_err(),
            "plain http never reaches the network"
        );
    }

    #[test]
    fn a_server_text_is_one_cut_line() {
        let text = format!("bad\u{202E}\nthing {}", "x".repeat(1000));
        let kept = server_text(&text);
        assert!(kept.len() <= SERVER_TEXT_BYTES, "{}", kept.len());
        assert!(!kept.contains('\n') && !kept.contains('\u{202E}'), "{kept}");
    }
}
