//! How the app ends: when its last window closes or the desktop asks it to (SIGTERM at logout or
//! from a service manager, SIGINT from a terminal), the controller is stopped first so running
//! reconciles finish and the store is closed cleanly, within a bounded grace: a quit never
//! hangs on the network.

use std::sync::Arc;
use std::time::Duration;

use swdesk_api::Desk;
use tauri::Manager;

/// How long quitting waits for the controller to stop before the process ends anyway.
const QUIT_GRACE: Duration = Duration::from_secs(8);

/// As the app quits (its last window closed, or the desktop asked it to), stops the controller
/// so running reconciles finish and the store is closed cleanly, waiting at most
/// [`QUIT_GRACE`]: a quit never hangs on the network.
pub fn on_run_event(app: &tauri::AppHandle, event: tauri::RunEvent) {
    match event {
        tauri::RunEvent::ExitRequested { code, .. } => {
            tracing::info!(?code, "quitting");
        }
        tauri::RunEvent::Exit => {
            stop_controller(app);
        }
        _ => {}
    }
}

/// Stops the controller, waiting at most [`QUIT_GRACE`].
fn stop_controller(app: &tauri::AppHandle) {
    let Some(desk) = app.try_state::<Arc<Desk>>() else {
        return;
    };
    let desk = Arc::clone(&desk);
    let stopped = tauri::async_runtime::block_on(async move {
        tokio::time::timeout(QUIT_GRACE, desk.shut_down()).await
    });
    match stopped {
        Ok(()) => tracing::info!("the app quit cleanly"),
        Err(_) => {
            tracing::warn!(grace = ?QUIT_GRACE, "the app quit before the controller stopped")
        }
    }
}

/// Quits the app cleanly (as closing its window does) when the system asks it to end: SIGTERM
/// at logout or from a service manager, SIGINT from a terminal.
pub fn on_terminate(app: tauri::AppHandle) {
    use tokio::signal::unix::{SignalKind, signal};
    tauri::async_runtime::spawn(async move {
        let (Ok(mut terminate), Ok(mut interrupt)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) else {
            tracing::warn!("the app cannot listen for the system's quit signals");
            return;
        };
        let name = tokio::select! {
            _ = terminate.recv() => "SIGTERM",
            _ = interrupt.recv() => "SIGINT",
        };
        tracing::info!(signal = name, "the system asked the app to quit");
        app.exit(0);
    });
}
