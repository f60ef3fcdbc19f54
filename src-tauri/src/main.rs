//! The `swdesk` binary: records when the process started, applies the platform's renderer
//! defaults, then hands over to the shell.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    let process_start = std::time::Instant::now();
    renderer_defaults();
    swdesk_app::run(process_start);
}

/// WebKitGTK's DMA-BUF renderer leaves the window blank on many GPU stacks (NVIDIA, some
/// Wayland compositors and Mesa setups) and is slow where there is no GPU at all; the Tauri
/// and WebKitGTK ecosystem ships with it off. An owner who wants it sets the variable to `0`.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn renderer_defaults() {
    const DMABUF: &str = "WEBKIT_DISABLE_DMABUF_RENDERER";
    if std::env::var_os(DMABUF).is_none() {
        // SAFETY: the first thing `main` does, before any thread exists, so nothing can read
        // the environment concurrently.
        unsafe { std::env::set_var(DMABUF, "1") };
    }
}

#[cfg(not(target_os = "linux"))]
fn renderer_defaults() {}
