//! Generates the Tauri context and gates every command: a command not listed here cannot be
//! called from the window, and a listed one still needs a permission in `capabilities/`.

/// Every command the window may call. Keep in step with `commands::specta_builder`.
const COMMANDS: &[&str] = &[
    "app_info",
    "ui_ready",
    "ui_interactive",
    "session",
    "sign_in",
    "cancel_sign_in",
    "sign_out",
    "deployments",
    "index_health",
    "deployment",
    "deployment_record",
    "declare_deployment",
    "set_contract",
    "set_secret",
    "remove_secret",
    "reveal_secret",
    "end_deployment",
    "resolve_conflict",
    "succeed_deployment",
    "open_receipt",
    "clusters",
    "create_cluster",
    "control_plane",
    "delete_cluster",
    "revoke_identity",
    "choose_kubeconfig_path",
    "save_kubeconfig",
    "kubeconfigs",
    "forget_kubeconfig",
    "node_infra",
    "apply_manifest",
    "job",
    "update_status",
    "check_for_update",
    "install_update",
];

fn main() {
    tauri_build::try_build(
        tauri_build::Attributes::new()
            .app_manifest(tauri_build::AppManifest::new().commands(COMMANDS)),
    )
    .expect("failed to run tauri-build");
}
