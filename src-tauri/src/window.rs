//! The main window as a desktop app keeps it: one window however often the app is launched (a
//! second launch brings this one forward and exits), and its size, place and maximized state
//! restored at start and saved whenever it changes, so a restart or a crash loses nothing.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tauri::{AppHandle, Manager, Runtime, WindowEvent};
use tauri_plugin_window_state::{AppHandleExt, StateFlags};

/// How long the window must rest after a move or resize before its state is written: a drag
/// is a burst of events, written once.
const SETTLE: Duration = Duration::from_millis(400);

/// The window's label in `tauri.conf.json`.
pub const MAIN: &str = "main";

/// What is kept of the window: not its visibility (the window is shown after its first paint).
fn kept() -> StateFlags {
    StateFlags::SIZE | StateFlags::POSITION | StateFlags::MAXIMIZED
}

/// The window-state plugin, keeping [`kept`] and saving after every move or resize.
pub fn state_plugin<R: Runtime>() -> tauri::plugin::TauriPlugin<R> {
    tauri_plugin_window_state::Builder::default()
        .with_state_flags(kept())
        .build()
}

/// After a move or resize of a window, saves the state once the window rests for [`SETTLE`].
pub fn on_event<R: Runtime>(window: &tauri::Window<R>, event: &WindowEvent) {
    static CHANGES: AtomicU64 = AtomicU64::new(0);
    if !matches!(event, WindowEvent::Moved(_) | WindowEvent::Resized(_)) {
        return;
    }
    let change = CHANGES.fetch_add(1, Ordering::SeqCst) + 1;
    let app = window.app_handle().clone();
    tauri::async_runtime::spawn(async move {
        tokio::time::sleep(SETTLE).await;
        if CHANGES.load(Ordering::SeqCst) == change {
            save_state(&app);
        }
    });
}

/// Saves the window's state now.
fn save_state<R: Runtime>(app: &AppHandle<R>) {
    if let Err(error) = app.save_window_state(kept()) {
        tracing::warn!(%error, "the window's size and place could not be saved");
    }
}

/// Shows the main window in front: unminimized, visible, focused.
pub fn bring_forward<R: Runtime>(app: &AppHandle<R>) {
    let Some(window) = app.get_webview_window(MAIN) else {
        return;
    };
    for (step, result) in [
        ("unminimize", window.unminimize()),
        ("show", window.show()),
        ("focus", window.set_focus()),
    ] {
        if let Err(error) = result {
            tracing::warn!(step, %error, "the window could not be brought forward");
        }
    }
}
