//! Tauri context for the bare window; its one command reports first paint.

fn main() {
    tauri_build::try_build(
        tauri_build::Attributes::new()
            .app_manifest(tauri_build::AppManifest::new().commands(&["ui_ready"])),
    )
    .expect("failed to run tauri-build");
}
