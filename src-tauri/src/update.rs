//! Signed updates in the shell. At start, and then every few hours or when the owner asks from
//! Settings, the app reads the release manifest the project publishes (`plugins.updater` in
//! `tauri.conf.json`: its endpoint and the project's public key, compiled in); a newer release
//! is downloaded and its signature checked against that key and the version it was signed for
//! (`tauri-plugin-updater`), then kept in memory until the owner chooses "Restart to update",
//! and installed exactly as verified (`swdesk_api::update::install`: the privileged step
//! installs root's copy of the bytes only when it matches their hash; the plugin's own install,
//! which hands the package manager a file of the owner's, is not used).
//! The app never installs on its own: quitting for the restart stops the controller as any quit
//! does, so a release in flight finishes first. Another key's signature, a damaged or cut
//! package and an older version are refused with the reason; the running version keeps working.
//!
//! Development builds check only where `SWDESK_UPDATE_ENDPOINT` points, against the key in
//! `SWDESK_UPDATE_KEY` (tests sign with a pair of their own); release builds ignore both.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use swdesk_api::ErrorCode;
use swdesk_api::update::install::{self, PackageKind};
use swdesk_api::update::{UpdateSource, UpdateView, server_text};
use tauri::{AppHandle, Manager, State};
use tauri_plugin_updater::{Error, Update, UpdaterExt};
use tauri_specta::Event;

use crate::commands::CommandError;
use crate::startup::Startup;

/// How often a running app asks for a newer release.
const CHECK_EVERY: Duration = Duration::from_secs(6 * 60 * 60);
/// The start's check waits for the window's first paint, and at most this long.
const FIRST_CHECK_LATEST: Duration = Duration::from_secs(10);

/// How many bytes between two progress events of a download.
const PROGRESS_STEP: u64 = 512 * 1024;

/// What the window shows of updates changed.
#[derive(Debug, Clone, serde::Serialize, specta::Type, tauri_specta::Event)]
pub struct UpdateChanged(pub UpdateView);

/// The updates of this run: what the window is shown, and the package downloaded and checked.
pub struct Updates {
    source: Option<UpdateSource>,
    view: Mutex<UpdateView>,
    ready: Mutex<Option<(Update, Vec<u8>)>>,
    /// Held by the one check running: a second (the periodic one and the owner's button at
    /// once) answers what the first shows instead of downloading the package again.
    checking: tokio::sync::Mutex<()>,
}

impl Updates {
    fn view(&self) -> UpdateView {
        lock(&self.view).clone()
    }

    fn show(&self, app: &AppHandle, view: UpdateView) {
        *lock(&self.view) = view.clone();
        if let Err(error) = UpdateChanged(view).emit(app) {
            tracing::warn!(%error, "an update's state could not reach the window");
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The updater plugin, checking signatures with the project's key (a development build: the
/// key in `SWDESK_UPDATE_KEY`, when set).
pub fn plugin() -> tauri::plugin::TauriPlugin<tauri::Wry, tauri_plugin_updater::Config> {
    let builder = tauri_plugin_updater::Builder::new();
    match development_override("SWDESK_UPDATE_KEY") {
        Some(key) => builder.pubkey(key).build(),
        None => builder.build(),
    }
}

/// Manages this run's [`Updates`] and starts checking: once the window is on screen (the
/// check's client and its lookups would take the CPU from the window while it opens), then
/// every [`CHECK_EVERY`].
pub fn start(app: &AppHandle) {
    let updates = Arc::new(Updates {
        source: source(app),
        view: Mutex::new(UpdateView::Off),
        ready: Mutex::new(None),
        checking: tokio::sync::Mutex::new(()),
    });
    app.manage(Arc::clone(&updates));
    if updates.source.is_none() {
        return;
    }
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        let startup = app.state::<Startup>();
        tokio::time::timeout(FIRST_CHECK_LATEST, startup.painted())
            .await
            .ok();
        loop {
            check(&app, &updates).await;
            tokio::time::sleep(CHECK_EVERY).await;
        }
    });
}

/// `name` from the environment, honoured by development builds only.
fn development_override(name: &str) -> Option<String> {
    cfg!(debug_assertions)
        .then(|| std::env::var(name).ok())
        .flatten()
        .filter(|value| !value.trim().is_empty())
}

/// Where releases are announced: the configured endpoint (a development build: only the one in
/// `SWDESK_UPDATE_ENDPOINT`).
fn source(app: &AppHandle) -> Option<UpdateSource> {
    let endpoint = if cfg!(debug_assertions) {
        development_override("SWDESK_UPDATE_ENDPOINT")?
    } else {
        app.config().plugins.0.get("updater")?["endpoints"][0]
            .as_str()?
            .to_owned()
    };
    match url::Url::parse(&endpoint) {
        Ok(url) => Some(UpdateSource::new(url)),
        Err(error) => {
            tracing::warn!(%error, "the update endpoint is not a URL: updates are off");
            None
        }
    }
}

/// Asks for the newest release and, when it is newer, downloads and checks it; answers what
/// the window then shows. A package already downloaded or installing is kept.
async fn check(app: &AppHandle, updates: &Updates) -> UpdateView {
    let Some(source) = &updates.source else {
        return UpdateView::Off;
    };
    let Ok(_only_check) = updates.checking.try_lock() else {
        return updates.view();
    };
    let current = updates.view();
    if matches!(
        current,
        UpdateView::Ready { .. } | UpdateView::Downloading { .. } | UpdateView::Installing { .. }
    ) {
        return current;
    }
    updates.show(app, UpdateView::Checking);
    let view = match offered(app, source).await {
        Ok(update) => download(app, updates, source, update).await,
        Err(view) => view,
    };
    match &view {
        UpdateView::Refused { version, reason } => {
            tracing::warn!(%version, %reason, "an update was refused")
        }
        UpdateView::Unreachable { reason } => tracing::info!(%reason, "no update could be read"),
        other => tracing::info!(update = ?other, "checked for updates"),
    }
    updates.show(app, view.clone());
    view
}

/// The release the endpoint offers, when it is newer than this one; otherwise what to show.
async fn offered(app: &AppHandle, source: &UpdateSource) -> Result<Update, UpdateView> {
    let current = app.package_info().version.to_string();
    let manifest = match source.manifest().await {
        Ok(Some(manifest)) => manifest,
        Ok(None) => return Err(UpdateView::UpToDate { version: current }),
        Err(error) => {
            return Err(UpdateView::Unreachable {
                reason: error.to_string(),
            });
        }
    };
    let older = Arc::new(Mutex::new(None));
    let seen = Arc::clone(&older);
    let update = app
        .updater_builder()
        .endpoints(vec![source.endpoint().clone()])
        .and_then(|builder| {
            builder
                .version_comparator(move |running, release| {
                    if release.version < running {
                        *lock(&seen) = Some(release.version.to_string());
                    }
                    release.version > running
                })
                .build()
        })
        .and_then(|updater| updater.restore_update(manifest));
    match update {
        Ok(Some(update)) => Ok(update),
        Ok(None) => Err(match lock(&older).take() {
            Some(version) => UpdateView::Refused {
                version: server_text(&version),
                reason: format!(
                    "it is older than the running {current}: an update never goes back"
                ),
            },
            None => UpdateView::UpToDate { version: current },
        }),
        Err(error) => Err(UpdateView::Unreachable {
            reason: format!(
                "the release manifest is unusable: {}",
                server_text(&error.to_string())
            ),
        }),
    }
}

/// Downloads `update`'s package and checks its signature; keeps it when it passes.
async fn download(
    app: &AppHandle,
    updates: &Updates,
    source: &UpdateSource,
    update: Update,
) -> UpdateView {
    let version = server_text(&update.version);
    let mut shown = 0;
    let progress = |received: u64, total: Option<u64>| {
        if received >= shown + PROGRESS_STEP {
            shown = received;
            let bytes = |count: u64| u32::try_from(count).unwrap_or(u32::MAX);
            updates.show(
                app,
                UpdateView::Downloading {
                    version: version.clone(),
                    received: bytes(received),
                    total: total.map(bytes),
                },
            );
        }
    };
    let bytes = match source.package(&update.download_url, progress).await {
        Ok(bytes) => bytes,
        Err(error) => {
            return UpdateView::Refused {
                version,
                reason: format!("its package could not be downloaded: {error}"),
            };
        }
    };
    if let Err(error) = update.verify(&bytes) {
        return UpdateView::Refused {
            version,
            reason: refusal(&error),
        };
    }
    *lock(&updates.ready) = Some((update, bytes));
    UpdateView::Ready { version }
}

/// Why a package whose signature failed is refused, in the owner's words.
fn refusal(error: &Error) -> String {
    use minisign_verify::Error as Signature;
    match error {
        Error::Minisign(Signature::UnexpectedKeyId) => {
            "it is signed by another key than the project's".to_owned()
        }
        Error::Minisign(Signature::InvalidSignature) => {
            "its signature does not match the package: it was changed or cut short on its way"
                .to_owned()
        }
        Error::Minisign(_) | Error::Base64(_) | Error::SignatureUtf8(_) => {
            "its signature cannot be read".to_owned()
        }
        Error::SignedVersionMismatch { signed, .. } => format!(
            "its signature was made for version {}, not the one announced",
            server_text(signed)
        ),
        Error::MissingSignedVersion => "its signature does not name its version".to_owned(),
        other => server_text(&other.to_string()),
    }
}

/// What the window shows of updates now.
#[tauri::command]
#[specta::specta]
pub fn update_status(updates: State<'_, Arc<Updates>>) -> UpdateView {
    updates.view()
}

/// Asks for a newer release now (Settings' "Check for updates"); answers what is then shown.
#[tauri::command]
#[specta::specta]
pub async fn check_for_update(app: AppHandle) -> UpdateView {
    let updates = Arc::clone(&app.state::<Arc<Updates>>());
    check(&app, &updates).await
}

/// Installs the downloaded release and restarts into it ("Restart to update").
#[tauri::command]
#[specta::specta]
pub async fn install_update(app: AppHandle) -> Result<(), CommandError> {
    let updates = Arc::clone(&app.state::<Arc<Updates>>());
    let Some((update, bytes)) = lock(&updates.ready).take() else {
        return Err(CommandError::new(
            ErrorCode::NoUpdate,
            "no update is downloaded: check for updates first",
        ));
    };
    let version = server_text(&update.version);
    let Some(kind) = installed_from_package() else {
        let why = "this copy was not installed from a .deb or .rpm package: update it the way it was installed";
        return Err(install_failed(&app, &updates, version, why));
    };
    updates.show(
        &app,
        UpdateView::Installing {
            version: version.clone(),
        },
    );
    let installed =
        tauri::async_runtime::spawn_blocking(move || install_verified(&update, &bytes, kind))
            .await
            .map_err(|error| error.to_string())
            .and_then(|installed| installed);
    match installed {
        Ok(()) => {
            tracing::info!(%version, "the update is installed: restarting into it");
            app.request_restart();
            Ok(())
        }
        Err(why) => Err(install_failed(&app, &updates, version, &why)),
    }
}

/// Checks `bytes` against the release's signature once more, then installs exactly those bytes
/// (`swdesk_api::update::install`: root's copy, checked against their hash, or nothing).
fn install_verified(update: &Update, bytes: &[u8], kind: PackageKind) -> Result<(), String> {
    update.verify(bytes).map_err(|error| refusal(&error))?;
    install::install(bytes, kind).map_err(|error| error.to_string())
}

/// Which package this copy came from, the .deb or the .rpm (the bundler marks the binary it
/// packages): only then may the updater replace it; a source build is never written over.
fn installed_from_package() -> Option<PackageKind> {
    use tauri::utils::config::BundleType;
    match tauri::utils::platform::bundle_type() {
        Some(BundleType::Deb) => Some(PackageKind::Deb),
        Some(BundleType::Rpm) => Some(PackageKind::Rpm),
        _ => None,
    }
}

/// Shows and answers that `version` could not be installed.
fn install_failed(app: &AppHandle, updates: &Updates, version: String, why: &str) -> CommandError {
    let reason = server_text(why);
    tracing::warn!(%version, %reason, "the update could not be installed");
    updates.show(
        app,
        UpdateView::InstallFailed {
            version: version.clone(),
            reason: reason.clone(),
        },
    );
    CommandError::new(
        ErrorCode::UpdateNotInstalled,
        format!("version {version} could not be installed: {reason}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_signature_failure_says_what_went_wrong() {
        use minisign_verify::Error as Signature;
        let another_key = refusal(&Error::Minisign(Signature::UnexpectedKeyId));
        let changed = refusal(&Error::Minisign(Signature::InvalidSignature));
        let unreadable = refusal(&Error::Minisign(Signature::InvalidEncoding));
        assert!(another_key.contains("another key"), "{another_key}");
        assert!(changed.contains("cut short"), "{changed}");
        assert!(unreadable.contains("cannot be read"), "{unreadable}");
        let mismatch = refusal(&Error::SignedVersionMismatch {
            signed: "0.0.1".into(),
            announced: "9.0.0".into(),
        });
        assert!(mismatch.contains("0.0.1"), "{mismatch}");
    }
}
