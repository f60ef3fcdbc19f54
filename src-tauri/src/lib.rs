//! The Tauri shell of Socialweb Desk. It is thin on purpose: it installs logging, registers the
//! commands (each a DTO in, one library call, a DTO out) and the desktop's plugins (one
//! instance, notifications, native dialogs, the window's state), and opens the main window. Nothing in
//! the library crates knows about Tauri; everything the window can do passes through
//! [`commands`], and the window's TypeScript types are generated from them ([`bindings`]).

pub mod bindings;
mod clusters;
mod commands;
mod deployments;
mod logging;
mod session;
mod startup;
mod window;

use std::sync::Arc;
use std::time::{Duration, Instant};

use swdesk_api::{Desk, Network, SystemBrowser};
use tauri::Manager;

/// How long quitting waits for the controller to stop before the process ends anyway.
const QUIT_GRACE: Duration = Duration::from_secs(8);

/// Opens the app and blocks until its last window closes.
pub fn run(process_start: Instant) {
    let network = match Network::from_env() {
        Ok(network) => network,
        Err(error) => {
            eprintln!("Socialweb Desk could not start: {error}");
            std::process::exit(2);
        }
    };
    let builder = bindings::specta_builder();
    let invoke_handler = builder.invoke_handler();
    let app = tauri::Builder::default()
        // First: a second launch hands over to this process, which shows its window, and exits.
        .plugin(window::single_instance_plugin())
        .manage(startup::Startup::new(process_start))
        // Desktop notifications (a contract failed or was released while the window was away).
        .plugin(tauri_plugin_notification::init())
        // Native file dialogs (where to save a kubeconfig).
        .plugin(tauri_plugin_dialog::init())
        // The window's size, place and maximized state, kept across starts.
        .plugin(window::state_plugin())
        .invoke_handler(invoke_handler)
        .on_window_event(window::on_event)
        .setup(move |app| {
            let log_dir = app.path().app_log_dir()?;
            let guard = logging::install(&log_dir)?;
            app.manage(guard);
            builder.mount_events(app);
            let data_dir = app.path().app_data_dir()?;
            let network_name = network.display_name.clone();
            let desk = Arc::new(Desk::new(network.clone(), Arc::new(SystemBrowser), data_dir));
            deployments::forward_live_events(app.handle().clone(), &desk);
            quit_on_terminate(app.handle().clone());
            app.manage(desk);
            tracing::info!(version = env!("CARGO_PKG_VERSION"), log_dir = %log_dir.display(), network = %network_name, "swdesk started");
            Ok(())
        })
        .build(tauri::generate_context!());
    match app {
        Ok(app) => app.run(on_run_event),
        Err(error) => {
            eprintln!("Socialweb Desk could not start: {error}");
            std::process::exit(1);
        }
    }
}

/// As the app quits (its last window closed, or the desktop asked it to), stops the controller
/// so running reconciles finish and the store is closed cleanly, waiting at most
/// [`QUIT_GRACE`]: a quit never hangs on the network.
fn on_run_event(app: &tauri::AppHandle, event: tauri::RunEvent) {
    match event {
        tauri::RunEvent::ExitRequested { code, .. } => {
            tracing::info!(?code, "quitting");
        }
        tauri::RunEvent::Exit => {
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
        _ => {}
    }
}

/// Quits the app cleanly (as closing its window does) when the system asks it to end: SIGTERM
/// at logout or from a service manager, SIGINT from a terminal.
fn quit_on_terminate(app: tauri::AppHandle) {
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
