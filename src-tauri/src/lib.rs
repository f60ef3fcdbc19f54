//! The Tauri shell of Socialweb Desk. It is thin on purpose: it installs logging, registers the
//! commands (each a DTO in, one library call, a DTO out) and the desktop's plugins (one
//! instance, notifications, native dialogs, the window's state), opens the main window, loads
//! its page again if the page's process dies ([`page_process`]), and quits cleanly ([`quit`]).
//! Nothing in the library crates knows about Tauri; everything the window can do passes through
//! [`commands`], and the window's TypeScript types are generated from them ([`bindings`]).

mod app_link;
pub mod bindings;
mod clusters;
mod commands;
mod deployments;
mod logging;
mod market_key;
mod page_process;
mod quit;
mod session;
mod startup;
mod update;
mod window;

use std::sync::Arc;
use std::time::Instant;

use swdesk_api::{Desk, Network, SystemBrowser};
use tauri::Manager;

/// Opens the app and blocks until its last window closes.
pub fn run(process_start: Instant) {
    let network = match Network::from_env() {
        Ok(network) => network,
        Err(error) => {
            eprintln!("Socialweb Desk could not start: {error}");
            std::process::exit(2);
        }
    };
    // Kept for the app's whole life: `run` ends only with the process.
    let runtime = match swdesk_api::runtime::build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("Socialweb Desk could not start its runtime: {error}");
            std::process::exit(2);
        }
    };
    tauri::async_runtime::set(runtime.handle().clone());
    // First: a later launch hands over to the running instance, which shows its window, and ends.
    #[cfg(target_os = "linux")]
    let instance = window::claim_instance(&runtime);
    let builder = bindings::specta_builder();
    let invoke_handler = builder.invoke_handler();
    let app = tauri::Builder::default();
    #[cfg(not(target_os = "linux"))]
    let app = app.plugin(window::single_instance_plugin());
    let app = app
        .manage(startup::Startup::new(process_start))
        // Desktop notifications (a contract failed or was released while the window was away).
        .plugin(tauri_plugin_notification::init())
        // Native file dialogs (where to save a kubeconfig).
        .plugin(tauri_plugin_dialog::init())
        // The window's size, place and maximized state, kept across starts.
        .plugin(window::state_plugin())
        // Signed updates: the signature check and the install of a downloaded release.
        .plugin(update::plugin())
        .invoke_handler(invoke_handler)
        .on_window_event(window::on_event)
        .on_page_load(|webview, load| {
            let step = match load.event() {
                tauri::webview::PageLoadEvent::Started => "page-started",
                tauri::webview::PageLoadEvent::Finished => "page-loaded",
            };
            webview.state::<startup::Startup>().mark(step);
        })
        .setup(move |app| {
            app.state::<startup::Startup>().mark("setup");
            let log_dir = app.path().app_log_dir()?;
            logging::install(&log_dir)?;
            builder.mount_events(app);
            let data_dir = app.path().app_data_dir()?;
            let network_name = network.display_name.clone();
            let desk = Arc::new(Desk::new(network.clone(), Arc::new(SystemBrowser), data_dir));
            deployments::forward_live_events(app.handle().clone(), &desk);
            quit::on_terminate(app.handle().clone());
            update::start(app.handle());
            app.manage(desk);
            if let Some(main) = app.get_webview_window(window::MAIN) {
                page_process::watch(&main);
            }
            app_link::hand_over(app.handle(), &std::env::args().collect::<Vec<_>>());
            #[cfg(target_os = "linux")]
            if let Some(instance) = instance {
                window::serve_later_launches(app.handle(), instance);
            }
            tracing::info!(version = %app.package_info().version, log_dir = %log_dir.display(), network = %network_name, "swdesk started");
            app.state::<startup::Startup>().mark("set-up");
            Ok(())
        })
        .build(tauri::generate_context!());
    match app {
        Ok(app) => {
            app.state::<startup::Startup>().mark("built");
            app.run(quit::on_run_event)
        }
        Err(error) => {
            eprintln!("Socialweb Desk could not start: {error}");
            std::process::exit(1);
        }
    }
}
