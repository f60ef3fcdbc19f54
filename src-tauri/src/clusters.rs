//! The cluster commands and the live clusters event: each command is a thin wrapper over
//! [`swdesk_api::Desk`] (the gateway client of the signed-in owner); `ClustersChanged` carries
//! the owner's clusters (with nodes and members) whenever the gateway's feed changes them.

use std::path::PathBuf;
use std::sync::Arc;

use serde::Serialize;
use specta::Type;
use swdesk_api::Desk;
use swdesk_api::clusters::{Applied, ApplyRequest, ClustersView, JobView, SavedKubeconfig};
use swdesk_api::kubeconfigs::KubeconfigView;
use swdesk_api::node_infra::NodeInfraView;
use tauri_specta::Event;

use crate::commands::CommandError;

/// The owner's clusters changed, or the connection to the gateway did.
#[derive(Debug, Clone, Serialize, Type, Event)]
pub struct ClustersChanged(pub ClustersView);

/// The owner's clusters as last seen.
#[tauri::command]
#[specta::specta]
pub fn clusters(desk: tauri::State<'_, Arc<Desk>>) -> Result<ClustersView, CommandError> {
    Ok(desk.clusters()?)
}

/// Creates a cluster; answers its phase.
#[tauri::command]
#[specta::specta]
pub async fn create_cluster(
    desk: tauri::State<'_, Arc<Desk>>,
    name: String,
) -> Result<String, CommandError> {
    Ok(desk.create_cluster(&name).await?)
}

/// Starts (`up`) or stops a cluster's control plane; answers its phase.
#[tauri::command]
#[specta::specta]
pub async fn control_plane(
    desk: tauri::State<'_, Arc<Desk>>,
    name: String,
    up: bool,
) -> Result<String, CommandError> {
    Ok(desk.control_plane(&name, up).await?)
}

/// Deletes a cluster (it drains, then goes); answers its phase.
#[tauri::command]
#[specta::specta]
pub async fn delete_cluster(
    desk: tauri::State<'_, Arc<Desk>>,
    name: String,
) -> Result<String, CommandError> {
    Ok(desk.delete_cluster(&name).await?)
}

/// Revokes every grant of an identity on a cluster.
#[tauri::command]
#[specta::specta]
pub async fn revoke_identity(
    desk: tauri::State<'_, Arc<Desk>>,
    name: String,
    did: String,
) -> Result<(), CommandError> {
    Ok(desk.revoke_identity(&name, &did).await?)
}

/// Saves a kubeconfig of a cluster at `path` (mode 0600): for `ttl_seconds` (60..=86400, none
/// for the gateway's default), or without expiry.
#[tauri::command]
#[specta::specta]
pub async fn save_kubeconfig(
    desk: tauri::State<'_, Arc<Desk>>,
    name: String,
    ttl_seconds: Option<u32>,
    no_expiry: bool,
    path: String,
) -> Result<SavedKubeconfig, CommandError> {
    let path = PathBuf::from(path);
    Ok(desk
        .save_kubeconfig(&name, ttl_seconds.map(i64::from), no_expiry, &path)
        .await?)
}

/// Asks the owner where to save a kubeconfig, in the system's own save dialog opened here (the
/// window has no dialog permission of its own), starting at `suggested` (a path in `~/.kube`);
/// answers the path picked, which `save_kubeconfig` then accepts, or `None` when the owner
/// cancels.
#[tauri::command]
#[specta::specta]
pub async fn choose_kubeconfig_path(
    app: tauri::AppHandle,
    desk: tauri::State<'_, Arc<Desk>>,
    suggested: String,
) -> Result<Option<String>, CommandError> {
    use tauri_plugin_dialog::DialogExt as _;

    let suggested = PathBuf::from(suggested);
    let mut dialog = app
        .dialog()
        .file()
        .set_title("Save kubeconfig")
        .add_filter("Kubeconfig", &["kubeconfig", "yaml", "yml"]);
    if let Some(folder) = suggested.parent() {
        dialog = dialog.set_directory(folder);
    }
    if let Some(name) = suggested.file_name() {
        dialog = dialog.set_file_name(name.to_string_lossy());
    }
    let (answer, picked) = tokio::sync::oneshot::channel();
    dialog.save_file(move |path| {
        let _closed = answer.send(path.and_then(|path| path.into_path().ok()));
    });
    let picked = picked.await.ok().flatten();
    if let Some(path) = &picked {
        desk.kubeconfig_path_chosen(path);
    }
    Ok(picked.map(|path| path.display().to_string()))
}

/// The node Infra of a cluster as the desk follows it: the deployment that mirrors the
/// gateway's record, each node's contract (phase, winner, receipt), and where the nodes and
/// the record disagree.
#[tauri::command]
#[specta::specta]
pub async fn node_infra(
    desk: tauri::State<'_, Arc<Desk>>,
    name: String,
) -> Result<Option<NodeInfraView>, CommandError> {
    Ok(desk.node_infra(&name).await?)
}

/// The kubeconfigs saved here for the signed-in owner (kept across restarts), each with what
/// no longer works.
#[tauri::command]
#[specta::specta]
pub fn kubeconfigs(desk: tauri::State<'_, Arc<Desk>>) -> Result<Vec<KubeconfigView>, CommandError> {
    Ok(desk.kubeconfigs()?)
}

/// Removes a kubeconfig file this installation saved, and forgets it (the fix of one that no
/// longer works); refused for any other path.
#[tauri::command]
#[specta::specta]
pub fn forget_kubeconfig(
    desk: tauri::State<'_, Arc<Desk>>,
    path: String,
) -> Result<(), CommandError> {
    Ok(desk.forget_kubeconfig(&path)?)
}

/// Applies one object (YAML or JSON) to a cluster server-side, or dry-runs it.
#[tauri::command]
#[specta::specta]
pub async fn apply_manifest(
    desk: tauri::State<'_, Arc<Desk>>,
    cluster: String,
    manifest: String,
    dry_run: bool,
    force: bool,
) -> Result<Applied, CommandError> {
    let request = ApplyRequest {
        cluster: &cluster,
        manifest: &manifest,
        dry_run,
        force,
    };
    Ok(desk.apply(request).await?)
}

/// A Job of a cluster now, with its last log lines.
#[tauri::command]
#[specta::specta]
pub async fn job(
    desk: tauri::State<'_, Arc<Desk>>,
    cluster: String,
    namespace: String,
    name: String,
) -> Result<JobView, CommandError> {
    Ok(desk.job(&cluster, &namespace, &name, 200).await?)
}
